# shellcheck shell=bash
# tests/faults/lib-faults.sh: what the fault-injection tests share, on top of
# tests/integration/lib.sh: a private MariaDB per test (it is killed,
# partitioned or slowed, so never the suite's shared server), stopped at exit.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"

# fault_mdb_start DIR PORT [extra mariadbd args]: start (or restart, same
# datadir) a private MariaDB. Stopped at exit.
fault_mdb_start() {
  local dir=$1 port=$2 pid
  shift 2
  MARIADB_EXTRA_ARGS="$*" ${FAULT_MDB_WRAP:-} "$SRCDIR/scripts/start-mariadb" "$dir" "$port" \
    >>"$dir.start.log" 2>&1 </dev/null || return 1
  pid=$(cat "$dir/pid" 2>/dev/null)
  is_pid "$pid" || return 1
  if [ -z "${_FAULT_MDB_DIRS:-}" ]; then on_exit '_fault_mdb_stop_all'; fi
  _FAULT_MDB_DIRS="${_FAULT_MDB_DIRS:-} $dir"
}
_fault_mdb_stop_all() {
  local d p
  for d in $_FAULT_MDB_DIRS; do
    p=$(cat "$d/pid" 2>/dev/null || true)
    if pid_alive "$p" && grep -q mariadbd "/proc/$p/cmdline" 2>/dev/null; then
      kill -TERM "$p" 2>/dev/null
      wait_gone "$p" 30
    fi
  done
}
# metric_of PORT NAME: one value from the node's /metrics.
metric_of() {
  curl -s "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1==n {print $2; exit}'
}
