# shellcheck shell=bash
# tests/integration/lib.sh: helpers for Shoal's integration tests (bash).
#
# Source it from a test:   . "$(dirname "$0")/lib.sh"
#
# Environment (scripts/test exports these; the defaults suit a developer who
# runs one test by hand against the MariaDB on 127.0.0.1:13306):
#   SRCDIR       repository root
#   SHOAL_BIN    the node binary (default $SRCDIR/src/shoal)
#   MDB_PORT     the private MariaDB's TCP port on 127.0.0.1 (default 13306)
#   MDB_SOCK     its socket (root can log in there with no password)
#   MDB_DIR      its directory (as given to scripts/start-mariadb)
#   SHOAL_FAKE_DIRECT=1   no node at all: shoal_start hands back MariaDB's own
#                port, so every direct-vs-node comparison passes trivially;
#                tests of node-only behaviour skip. For checking the tests.
#   SHOAL_QUICK=1         shorter runs where a test supports it.
#
# Provides:
#   shoal_start NAME [extra node args...]   start a node; sets NAME_PORT, NAME_PID
#   shoal_stop NAME                         SIGTERM it; sets NAME_STATUS, returns it
#   mdb [args...]       mariadb CLI straight to MariaDB (app/pw, db shoaltest)
#   via [args...]       the same through the node $VIA_PORT (default: the first started)
#   via_to NAME [args]  the same through the node NAME
#   shoal_alive NAME    the node's process still runs
#     SHOAL_WAIT=greeting|login|none (for shoal_start): what "started" means
#     (default login: app/pw can run a query; greeting: for nodes whose
#     upstream is down or that need a special login)
#   TAP: plan N (first: before any check), skip_all REASON, ok DESC,
#        not_ok DESC, skip DESC REASON, skip_n N DESC REASON, check DESC CMD...,
#        is GOT WANT DESC, like / unlike GOT REGEX DESC, cmp_files A B DESC,
#        node_is VIA DIRECT WANT DESC (direct path first: see docs/testing.md),
#        diag MSG..., diag_file FILE [N], bail DESC (a failed check, then exit:
#        the checks left of the plan count as failed), done_testing (status 1
#        if anything failed or the count differs from the plan)
#     Every test prints its plan before its first check, so that a test that
#     dies part-way counts its missing checks as failures (scripts/test checks
#     this). Where the count depends on the environment, compute it first.
#   on_exit CMD         run CMD (eval'd) at exit, before the nodes are stopped
#   load_types          (re)load tests/data/types.sql (table shoal_types), dropped at exit
#   binlog_mdb DIR      a MariaDB of the test's own with its binlog on (one check;
#                       sets BL_PORT, BL_PID; stopped at exit)
#   capi_compile SRC BIN  compile a Connector/C test client (one check)
#   free_port, port_free PORT, port_refuses PORT, fake_mode, is_pid X,
#   pid_alive PID (a zombie is gone), wait_gone PID [SECONDS], stop_mdb PID
#   $PY (Debian's python3), $TESTDIR, $TESTLIB (tests/integration/lib: the python
#   helpers and sub-tests), $DATADIR; PYTHONPATH has $TESTLIB (rawmysql.py and
#   taplib.py (TAP from python, numbered in the same sequence)

: "${SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${SHOAL_BIN:=$SRCDIR/src/shoal}"
: "${MDB_PORT:=13306}"
: "${MDB_SOCK:=/tmp/mdb/sock}"
: "${MDB_DIR:=/tmp/mdb}"
: "${SHOAL_FAKE_DIRECT:=0}"
: "${SHOAL_QUICK:=0}"
: "${BUILD_TEST:=$SRCDIR/build-test}"
: "${SHOAL_LOG_DIR:=$BUILD_TEST/logs}"
PY=${SHOAL_PYTHON:-/usr/bin/python3}   # Debian's python3: it has pymysql
TESTDIR="$SRCDIR/tests/integration"
TESTLIB="$TESTDIR/lib"                  # python helpers and sub-tests
DATADIR="$SRCDIR/tests/data"
export SRCDIR SHOAL_BIN MDB_PORT MDB_SOCK MDB_DIR SHOAL_FAKE_DIRECT SHOAL_QUICK \
  BUILD_TEST SHOAL_LOG_DIR PY TESTDIR TESTLIB DATADIR
export PYTHONPATH="$TESTLIB${PYTHONPATH:+:$PYTHONPATH}"
# Every node a test starts aborts on a session state move its state table
# refuses (src/core/cstate.h), so that the test fails where it happened.
export SHOAL_STRICT_STATES=1
# The real ProxySQL (the *-proxysql* tests, 99-docker's compose flow): $PROXYSQL_BIN, a
# ProxySQL 2.7 binary; where it is unset, the project's CI machine has one
# at ../shared/peers/proxysql beside the checkout, used when it exists.
if [ -z "${PROXYSQL_BIN:-}" ] && [ -x "$SRCDIR/../shared/peers/proxysql" ]; then
  PROXYSQL_BIN=$(cd "$SRCDIR/../shared/peers" && pwd)/proxysql
fi
export PROXYSQL_BIN=${PROXYSQL_BIN:-}
# What a skip message tells a user who has no ProxySQL.
PROXYSQL_HOWTO="set PROXYSQL_BIN to a ProxySQL 2.7 binary, e.g. /usr/bin/proxysql from ProxySQL's own Debian 12 package (proxysql_2.7.*-debian12_amd64.deb, github.com/sysown/proxysql/releases; Debian does not package ProxySQL)"
# need_proxysql: exits with a whole-file SKIP when there is no ProxySQL to run.
need_proxysql() {
  if [ -z "$PROXYSQL_BIN" ] || [ ! -x "$PROXYSQL_BIN" ]; then
    skip_all "no ProxySQL binary: $PROXYSQL_HOWTO"
  fi
}
mkdir -p "$SHOAL_LOG_DIR"

fake_mode() { [ "$SHOAL_FAKE_DIRECT" = 1 ]; }
# is_pid X, pid_alive PID (a zombie counts as gone), port_free PORT and
# free_port [PORT]: scripts/lib/common.sh, which scripts/test uses too.
# shellcheck source=../../scripts/lib/common.sh
. "$SRCDIR/scripts/lib/common.sh"
# wait_gone PID [SECONDS]: until the process is gone (pid_alive); reaps it
# when it is a child of this shell. 1 if it is still there after SECONDS
# (default 30).
wait_gone() {
  local i
  for ((i = 0; i < ${2:-30} * 10; i++)); do
    pid_alive "$1" || { wait "$1" 2>/dev/null; return 0; }
    sleep 0.1
  done
  return 1
}
# stop_mdb PID: stop a private MariaDB a test started itself: TERM, up to
# 30 s for it to shut down, then KILL. Nothing for an empty or bogus pid.
stop_mdb() { # pid
  is_pid "$1" || return 0
  kill -TERM "$1" 2>/dev/null
  wait_gone "$1" 30 && return 0
  kill -KILL "$1" 2>/dev/null
  wait_gone "$1" 5
  return 0
}

# ---------------------------------------------------------------- TAP
# The counter lives in a file so that python and perl helpers (taplib.py, the
# perl subs in 21-perl-prepared.t) number their results in the same sequence.
if [ -z "${TAP_STATE:-}" ]; then
  TAP_STATE=$(mktemp "${TMPDIR:-/tmp}/shoal-tap.XXXXXX")
  echo "0 0" >"$TAP_STATE"
  _TAP_OWNER=$$
  # the ports free_port handed out in this test (scripts/lib/free_port.py):
  # never handed out twice, whichever process picks
  SHOAL_PORTS_FILE=$(mktemp "${TMPDIR:-/tmp}/shoal-ports.XXXXXX")
fi
export TAP_STATE SHOAL_PORTS_FILE

# A description goes on one line: it may carry captured output, and a
# newline would cut the result line (and its name in the summary): each
# newline becomes the two characters \n, a CR goes.
_tap_result() { # pass(0/1) desc [directive]
  local n f d=${2//$'\r'/} r=${3:-}
  d=${d//$'\n'/\\n}
  set -- "$1" "$d" "${r//$'\n'/\\n}"
  read -r n f <"$TAP_STATE"
  n=$((n + 1))
  if [ "$1" = 1 ]; then
    printf 'ok %d - %s%s\n' "$n" "$2" "${3:+ # $3}"
  else
    f=$((f + 1))
    printf 'not ok %d - %s\n' "$n" "$2"
  fi
  echo "$n $f" >"$TAP_STATE"
}
# plan N: the number of checks this test will print; call it once, before
# the first check (scripts/test fails a test whose plan comes later).
plan() {
  if [ -n "${_TAP_PLANNED:-}" ]; then diag "plan $1: a plan was already printed"; return 1; fi
  [[ ${1:-} =~ ^[0-9]+$ ]] || { diag "plan: not a number: ${1:-}"; return 1; }
  _TAP_PLANNED=$1
  echo "1..$1"
}
# skip_all REASON: the whole test does not apply here; exits.
skip_all() { echo "1..0 # SKIP $*"; _TAP_PLANNED=0; exit 0; }
ok() { _tap_result 1 "$*"; }
not_ok() { _tap_result 0 "$*"; }
skip() { _tap_result 1 "$1" "SKIP ${2:-}"; }
# todo PASS(1/0) DESC REASON: a check of a known gap (TAP TODO): shown, and
# a failure is not counted as one.
todo() {
  local n f d=${2//$'\r'/}
  d=${d//$'\n'/\\n}
  set -- "$1" "$d" "$3"
  read -r n f <"$TAP_STATE"
  n=$((n + 1))
  if [ "$1" = 1 ]; then printf 'ok %d - %s # TODO %s\n' "$n" "$2" "$3"; else
    printf 'not ok %d - %s # TODO %s\n' "$n" "$2" "$3"; fi
  echo "$n $f" >"$TAP_STATE"
}
# skip_n N DESC REASON: N skipped checks (a part of the plan that cannot run here).
skip_n() { local i; for ((i = 1; i <= $1; i++)); do skip "$2 ($i/$1)" "${3:-}"; done; }
diag() { local l; while IFS= read -r l; do printf '# %s\n' "$l"; done <<<"$*"; }
# diag_file FILE [MAXLINES]: show a file as diagnostics, control chars made visible.
diag_file() { head -n "${2:-40}" "$1" | cat -v | sed 's/^/#   /'; }
check() { # check DESC CMD...: ok when CMD succeeds
  local d=$1; shift
  if "$@"; then ok "$d"; else not_ok "$d"; fi
}
is() { # is GOT WANT DESC
  if [ "$1" == "$2" ]; then ok "$3"; else
    not_ok "$3"; diag "$(printf '     got: %s\n    want: %s' "${1:0:2000}" "${2:0:2000}")"
  fi
}
# like/unlike read GOT from a here-string, not a pipe: with pipefail, grep -q
# leaving at its first match could make printf's later write fail on SIGPIPE.
like() { # like GOT EXTENDED-REGEX DESC
  if grep -Eq -- "$2" <<< "$1"; then ok "$3"; else
    not_ok "$3"; diag "$(printf '     got: %s\n    expected to match: /%s/' "${1:0:2000}" "$2")"
  fi
}
unlike() { # unlike GOT EXTENDED-REGEX DESC
  if grep -Eq -- "$2" <<< "$1"; then
    not_ok "$3"; diag "$(printf '     got: %s\n    expected NOT to match: /%s/' "${1:0:2000}" "$2")"
  else ok "$3"; fi
}
# node_is VIA DIRECT WANT DESC: a fixed expectation (WANT) on what the node
# answered (VIA), checked on MariaDB's own answer (DIRECT, same client) first:
# when that differs from WANT too, the client or the server is at fault, not
# the node, and the check is a skip that says so.
node_is() {
  if [ "$2" != "$3" ]; then
    skip "$4" "fails without a node too (direct: ${2:0:200}): the client or the server, not the node"
  else
    is "$1" "$3" "$4"
  fi
}
# cmp_files A B DESC: ok when identical, else diff as diagnostics.
cmp_files() {
  if cmp -s "$1" "$2"; then ok "$3"; else
    not_ok "$3"
    diff -u --label direct --label via "$1" "$2" | head -n 60 | cat -v | sed 's/^/#   /'
  fi
}
tap_failed() { local n f; read -r n f <"$TAP_STATE"; echo "$f"; }
tap_count() { local n f; read -r n f <"$TAP_STATE"; echo "$n"; }
# bail DESC: a check that failed so that the rest cannot run: not ok, then
# exit 1 (the checks the plan still expects count as failed).
bail() { not_ok "$*"; done_testing; exit 1; }
done_testing() {
  local n f
  read -r n f <"$TAP_STATE"
  if [ -z "${_TAP_PLANNED:-}" ]; then
    echo "1..$n"
    diag "no plan up front: call plan N before the first check"
    return 1
  fi
  if [ "$n" != "$_TAP_PLANNED" ]; then
    diag "planned $_TAP_PLANNED checks, ran $n"
    return 1
  fi
  [ "$f" = 0 ]
}

# ---------------------------------------------------------------- ports
# (port_free and free_port: scripts/lib/common.sh)
# port_refuses PORT: a TCP connect to 127.0.0.1:PORT is refused.
port_refuses() {
  "$PY" - "$1" <<'PY'
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
except ConnectionRefusedError:
    sys.exit(0)
except OSError:
    sys.exit(1)
sys.exit(1)
PY
}
# wait_port_closed PORT [SECONDS]
wait_port_closed() {
  local i
  for ((i = 0; i < ${2:-10} * 10; i++)); do
    port_free "$1" && return 0
    sleep 0.1
  done
  return 1
}

# ---------------------------------------------------------------- clients
MDB_ARGS=(--no-defaults -h127.0.0.1 -uapp -ppw)
mdb() { mariadb "${MDB_ARGS[@]}" -P"$MDB_PORT" shoaltest "$@"; }
mdb_root() { mariadb --no-defaults --socket="$MDB_SOCK" -uroot "$@"; }
via() { mariadb "${MDB_ARGS[@]}" -P"${VIA_PORT:?no node started}" shoaltest "$@"; }
via_to() { local v="${1}_PORT"; shift; mariadb "${MDB_ARGS[@]}" -P"${!v:?node not started}" shoaltest "$@"; }

# ---------------------------------------------------------------- cleanup
_ON_EXIT=()
on_exit() { _ON_EXIT+=("$1"); }
_SHOAL_NODES=()

_lib_cleanup() {
  local rc=$? c name
  for c in "${_ON_EXIT[@]}"; do eval "$c" >/dev/null 2>&1 || true; done
  for name in "${_SHOAL_NODES[@]}"; do
    _shoal_kill "$name" >/dev/null 2>&1 || true
  done
  if [ "${_TAP_OWNER:-}" = $$ ]; then rm -f "$TAP_STATE" "${SHOAL_PORTS_FILE:-}"; fi
  exit $rc
}
trap _lib_cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# ---------------------------------------------------------------- nodes
UPSTREAM_URL_DEFAULT="mysql://app:pw@127.0.0.1:$MDB_PORT/shoaltest"

# shoal_start NAME [extra args...]
#   Starts src/shoal on a free 127.0.0.1 port with the default upstream (the
#   private MariaDB, db shoaltest) unless an --upstream-db-url is among the
#   args, metrics and admin on ephemeral ports and 2 workers. Waits (10 s at
#   most) until the node is usable:
#     SHOAL_WAIT=login (default)  `mariadb -uapp -ppw -e 'select 1'` succeeds
#                                 (SHOAL_LOGIN_USER/SHOAL_LOGIN_PW override)
#     SHOAL_WAIT=greeting         a TCP connect gets a protocol-10 greeting
#   Sets NAME_PORT, NAME_PID, NAME_LOG; VIA_PORT if unset. Returns 1 (with the
#   log's tail as diagnostics) if the node died or never became usable.
shoal_start() {
  local name=$1; shift
  local args=("$@") a have_url=0 have_workers=0 have_metrics=0 have_admin=0 port pid log i up=0
  for a in "${args[@]}"; do
    case $a in
      --upstream-db-url | --upstream-db-url=*) have_url=1 ;;
      --workers | --workers=*) have_workers=1 ;;
      --metrics-address | --metrics-address=*) have_metrics=1 ;;
      --admin-address | --admin-address=*) have_admin=1 ;;
    esac
  done
  if fake_mode; then
    # No node: hand back the upstream's own port.
    port=$MDB_PORT
    for ((i = 0; i < ${#args[@]}; i++)); do
      case ${args[$i]} in
        --upstream-db-url) a=${args[$((i + 1))]} ;;
        --upstream-db-url=*) a=${args[$i]#*=} ;;
        *) continue ;;
      esac
      port=$(sed -E 's#^.*@[^:/]*:([0-9]+).*$#\1#' <<<"$a")
    done
    printf -v "${name}_PORT" %s "$port"
    printf -v "${name}_PID" %s ""
    printf -v "${name}_LOG" %s /dev/null
    : "${VIA_PORT:=$port}"
    return 0
  fi
  if [ ! -x "$SHOAL_BIN" ]; then
    diag "shoal_start $name: $SHOAL_BIN is missing"
    return 1
  fi
  port=$(free_port)
  log="$SHOAL_LOG_DIR/$(basename "$0" .t).$name.log"
  [ $have_url = 1 ] || args=(--upstream-db-url "$UPSTREAM_URL_DEFAULT" "${args[@]}")
  [ $have_workers = 1 ] || args+=(--workers 2)
  args+=(--listen-address "127.0.0.1:$port")
  [ $have_metrics = 1 ] || args+=(--metrics-address 127.0.0.1:0)
  [ $have_admin = 1 ] || args+=(--admin-address 127.0.0.1:0)
  {
    echo "=== $(date '+%F %T') start $name on port $port"
    { printf '=== '; printf '%q ' "$SHOAL_BIN" "${args[@]}"; echo; } | sed -E 's#(mysql://[^:]*:)[^@]*@#\1***@#g' 
  } >>"$log"
  "$SHOAL_BIN" "${args[@]}" >>"$log" 2>&1 </dev/null &
  pid=$!
  _SHOAL_NODES+=("$name")
  printf -v "${name}_PID" %s "$pid"
  printf -v "${name}_PORT" %s "$port"
  printf -v "${name}_LOG" %s "$log"
  for ((i = 0; i < 100; i++)); do
    if ! pid_alive "$pid"; then
      diag "shoal_start $name: the node exited during start; log tail:"
      tail -n 20 "$log" | sed 's/^/#   /'
      return 1
    fi
    case ${SHOAL_WAIT:-login} in
      greeting) "$PY" -c 'import rawmysql,sys; rawmysql.Conn("127.0.0.1", int(sys.argv[1]), timeout=1).read_greeting()' "$port" 2>/dev/null && up=1 ;;
      none) up=1 ;;
      *) mariadb --no-defaults -h127.0.0.1 -P"$port" -u"${SHOAL_LOGIN_USER:-app}" -p"${SHOAL_LOGIN_PW:-pw}" \
        --connect-timeout=2 -e 'select 1' >/dev/null 2>&1 && up=1 ;;
    esac
    [ $up = 1 ] && break
    sleep 0.1
  done
  if [ $up != 1 ]; then
    diag "shoal_start $name: not usable after 10 s (wait mode ${SHOAL_WAIT:-login}); log tail:"
    tail -n 20 "$log" | sed 's/^/#   /'
    return 1
  fi
  : "${VIA_PORT:=$port}"
  return 0
}

# _shoal_kill NAME: SIGTERM, wait up to 10 s, SIGKILL. Sets NAME_STATUS.
_shoal_kill() {
  local name=$1 pidv="${1}_PID" pid st i
  pid=${!pidv:-}
  is_pid "$pid" || { printf -v "${name}_STATUS" %s 0; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    pid_alive "$pid" || break
    sleep 0.1
  done
  if pid_alive "$pid"; then
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null
    st=124
  else
    wait "$pid" 2>/dev/null
    st=$?
  fi
  printf -v "${name}_PID" %s ""
  printf -v "${name}_STATUS" %s "$st"
  return "$st"
}

# shoal_stop NAME: stop a node; returns its exit status (124: had to be killed).
shoal_stop() {
  local name=$1 n keep=()
  _shoal_kill "$name"
  local st=$?
  for n in "${_SHOAL_NODES[@]}"; do [ "$n" = "$name" ] || keep+=("$n"); done
  _SHOAL_NODES=("${keep[@]}")
  return $st
}

# shoal_alive NAME: the node's process still runs (always true in fake mode).
shoal_alive() {
  fake_mode && return 0
  local pidv="${1}_PID"
  pid_alive "${!pidv:-}"
}

# load_types: (re)create shoaltest.shoal_types from tests/data/types.sql and
# drop it at exit.
load_types() {
  mdb <"$DATADIR/types.sql" || return 1
  on_exit "mdb -e 'DROP TABLE IF EXISTS shoal_types'"
}

# ---------------------------------------------------------------- shared steps
# binlog_mdb DIR: start a MariaDB of the test's own in DIR with its binlog on
# (ROW format, log_bin_trust_function_creators as mtr sets it), stopped at
# exit; one check, "a MariaDB with its binlog on". Sets BL_PORT and BL_PID.
_stop_bl() { stop_mdb "$BL_PID"; }
binlog_mdb() {
  BL_PORT=$(free_port)
  BL_PID=""
  on_exit _stop_bl
  if MARIADB_EXTRA_ARGS="--log-bin=binlog --binlog-format=ROW --server-id=1 --log-bin-trust-function-creators=1" \
    "$SRCDIR/scripts/start-mariadb" "$1" "$BL_PORT" >"$1.start.out" 2>&1 </dev/null &&
    BL_PID=$(cat "$1/pid"); then
    ok "a MariaDB with its binlog on (port $BL_PORT)"
  else
    diag_file "$1.start.out"
    not_ok "a MariaDB with its binlog on"
  fi
}

# capi_compile SOURCE BINARY: compile a Connector/C test client
# (tests/integration/lib/*.c); one check, "the Connector/C client compiles".
capi_compile() {
  local cflags libs
  read -ra cflags <<<"$(mariadb_config --cflags)"
  read -ra libs <<<"$(mariadb_config --libs)"
  if cc -O2 -Wall -Wextra -Werror "${cflags[@]}" "$1" -o "$2" "${libs[@]}" 2>"$2.cc.log"; then
    ok "the Connector/C client compiles ($(basename "$1"))"
  else
    diag_file "$2.cc.log"
    not_ok "the Connector/C client compiles ($(basename "$1"))"
  fi
}
