# shellcheck shell=bash
# scripts/lib/common.sh: helpers shared by scripts/test and scripts/demo.
# Source it; it defines functions only (no side effects).

# The Debian packages, in three lists, each the one before plus more:
# building the node, running scripts/demo, running scripts/test (every test).
SHOAL_BUILD_PACKAGES=(build-essential autoconf automake libtool pkg-config libev-dev
  libssl-dev default-libmysqlclient-dev libsqlite3-dev libcurl4-openssl-dev
  libjansson-dev libmicrohttpd-dev zlib1g-dev libzstd-dev)
SHOAL_DEMO_PACKAGES=("${SHOAL_BUILD_PACKAGES[@]}" mariadb-server mariadb-client
  python3-pymysql curl)
SHOAL_PACKAGES=("${SHOAL_DEMO_PACKAGES[@]}" sysbench python3-cryptography
  libdbd-mariadb-perl openssl iproute2 procps haproxy valgrind
  clang libclang-rt-dev # scripts/fuzz, 95-fuzz-smoke
  mariadb-test          # scripts/conformance, 62-conformance
  shellcheck            # scripts/check-shell
  git systemd           # 98-deploy-files in a checkout, systemd-analyze (97, 98)
  debhelper dpkg-dev fakeroot python3-yaml          # scripts/package, 97, 98
  libgnutls30 libuuid1                              # the real ProxySQL (the *-proxysql* tests)
  chromium                                          # 74-status-page: a real browser
  gnuplot-nox                                       # scripts/bench's figures
  docker.io docker-compose debootstrap iptables)    # Docker (99)

log() { printf '== %s\n' "$*" >&2; }

# What scripts tell a user who has no ProxySQL (the *-proxysql* tests, 99-docker's
# compose flow and the demo's step 6 need one; tests/integration/lib.sh says
# the same).
# shellcheck disable=SC2034 # used by the scripts that source this file
SHOAL_PROXYSQL_HOWTO="set PROXYSQL_BIN to a ProxySQL 2.7 binary, e.g. /usr/bin/proxysql from ProxySQL's own Debian 12 package (proxysql_2.7.*-debian12_amd64.deb, github.com/sysown/proxysql/releases; Debian does not package ProxySQL)"

# ensure_packages [pkg...]: apt-get install whatever of the list (default
# SHOAL_PACKAGES) is missing; runs apt-get update only then. apt's output
# goes to $SHOAL_APT_LOG (default /tmp/shoal-apt.log), not the terminal: one
# line says what is installed, and a failure shows the log's tail.
ensure_packages() {
  local pkgs=("$@") missing=() p aptlog=${SHOAL_APT_LOG:-${TMPDIR:-/tmp}/shoal-apt.log}
  [ ${#pkgs[@]} -gt 0 ] || pkgs=("${SHOAL_PACKAGES[@]}")
  for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${#missing[@]} Debian packages with apt-get (output: $aptlog): ${missing[*]}"
  local sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  if ! { DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -q &&
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends \
      "${missing[@]}"; } >"$aptlog" 2>&1; then
    tail -n 30 "$aptlog" >&2
    log "apt-get failed (full output: $aptlog)"
    return 1
  fi
  log "installed"
}

# port_free PORT: true when nothing listens on 127.0.0.1:PORT and we can bind it.
port_free() {
  /usr/bin/python3 - "$1" <<'PY'
import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
finally:
    s.close()
PY
}

# free_port [PREFERRED]: print PREFERRED if free, else a free port below the
# kernel's ephemeral range (scripts/lib/free_port.py says why).
free_port() {
  /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/free_port.py" "${1:-}"
}

# is_pid X: X is a plausible single process id (digits, > 1). Guards every
# kill: "kill 0" or "kill -1" would signal a whole process group or more.
is_pid() { [[ ${1:-} =~ ^[0-9]+$ ]] && [ "$1" -gt 1 ]; }

# pid_alive PID: the process runs. A zombie (it has exited, and its parent
# has not reaped it: in a container whose first process never calls wait,
# e.g. `docker run ... sleep infinity`, every orphan stays one) counts as
# gone, though kill -0 still succeeds on it.
pid_alive() {
  local stat
  is_pid "${1:-}" && kill -0 "$1" 2>/dev/null || return 1
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != [ZX] ]]
}

# stop_pid PID [SECONDS]: SIGTERM a process (not necessarily our child) and
# wait for it to go (or to be a zombie: pid_alive); SIGKILL after SECONDS
# (default 30). Our own child is reaped.
stop_pid() {
  local pid=${1:-} secs=${2:-30} i
  is_pid "$pid" || return 0
  if pid_alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < secs * 10; i++)); do
      pid_alive "$pid" || break
      sleep 0.1
    done
    if pid_alive "$pid"; then
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do pid_alive "$pid" || break; sleep 0.1; done
    fi
  fi
  # (wait only reaps a child of this shell; for any other pid it just fails)
  pid_alive "$pid" || wait "$pid" 2>/dev/null || true
  return 0
}

# start_private_mariadb DIR PORT: start scripts/start-mariadb (an older server
# left on the same datadir is stopped first) and print its pid. The server's
# stdout is not our pipe (start-mariadb backgrounds mariadbd, which would keep
# a command substitution open forever).
start_private_mariadb() {
  local dir=$1 port=$2 root old
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  mkdir -p "$dir"
  if [ -f "$dir/pid" ]; then
    old=$(cat "$dir/pid" 2>/dev/null || true)
    if pid_alive "$old" && grep -q mariadbd "/proc/$old/cmdline" 2>/dev/null; then
      log "stopping a stale MariaDB (pid $old) on $dir"
      stop_pid "$old" 60
    fi
    rm -f "$dir/pid"
  fi
  if ! "$root/scripts/start-mariadb" "$dir" "$port" >"$dir/start.out" 2>&1 </dev/null; then
    cat "$dir/start.out" >&2
    tail -n 30 "$dir/error.log" >&2 2>/dev/null || true
    return 1
  fi
  # The pid file, not start-mariadb's output: mariadbd's own early warnings
  # land in that output too, after the pid.
  old=$(cat "$dir/pid" 2>/dev/null || true)
  if ! is_pid "$old" || ! grep -q mariadbd "/proc/$old/cmdline" 2>/dev/null; then
    log "no mariadbd pid in $dir/pid"
    return 1
  fi
  echo "$old"
}
