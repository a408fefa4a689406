# shellcheck shell=bash
# scripts/lib/mysql.sh: private MySQL servers for tests and scripts (bash).
# Source it after common.sh (tests/integration/lib.sh sources that); it
# defines functions only.
#
# Debian 12 packages no MySQL server. Two are used, as
# ../shared/peers/README.md describes them:
#   - MySQL 9.7 from Debian's unstable suite, which needs unstable's libc:
#     it runs in a debootstrap chroot that shares the host's network;
#   - MySQL 8.0.39, a build kept beside the checkout at
#     ../shared/peers/mysql-8.0 (no registry has it), where present.
#
#   mysql97_root DIR            make the 9.7 chroot in DIR once (a few minutes,
#                               about 1.2 GB); DIR/.shoal-mysql97-ready marks
#                               a finished one, which is reused
#   mysql97_start DIR NAME PORT [mysqld options...]
#                               start mysqld 9.7 from the chroot DIR, datadir
#                               /var/lib/shoal-NAME inside it (initialized on
#                               first use), on 127.0.0.1:PORT; prints its pid
#   mysql97_socket DIR NAME     the host path of that server's socket
#   mysql97_drop DIR NAME       remove that server's datadir (stopped first)
#   mysql80_dir                 prints the 8.0 build's directory, or says why
#                               there is none
#   mysql80_start DIR PORT [mysqld options...]
#                               start mysqld 8.0.39 with datadir DIR/data and
#                               socket DIR/sock; prints its pid
#   mysql_create_app SOCKET     as root over SOCKET: the app/pw user
#                               (caching_sha2_password, every privilege) and
#                               the database shoaltest
#
# Each returns non-zero with one line on stderr saying why ("mysql: ...")
# when it cannot (not root, no chroot, no network, no binary, a server that
# exits at start), so that a test can skip, or fail, with that reason. Every
# server runs with its binlog on (ROW, GTIDs), --skip-name-resolve (no DNS
# lookup per connection: a loaded machine once timed the node's upstream
# check out in that lookup) and the X plugin off; stop it by its pid
# (stop_pid or tests' stop_mdb).

MYSQL97_MARKER=.shoal-mysql97-ready
# What the chroot gets; mysql-testsuite (MySQL's own mysqltest and test
# cases, 780 MB more) only where asked for.
: "${SHOAL_MYSQL97_PACKAGES:=mysql-server-core mysql-client}"

_mysql_err() { printf 'mysql: %s\n' "$*" >&2; }

# The host's Debian mirror (the first URIs line that is not the security
# archive's, else a "deb" line of sources.list).
_mysql_mirror() {
  local m
  m=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null)
  [ -n "$m" ] || m=$(awk '$1 == "deb" && $3 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  [ -n "$m" ] || return 1
  echo "$m"
}

# _mysql_mounted DIR: something is mounted at or below DIR. A tree with a
# mount inside is never removed (rm -rf would go through a bind mount of
# /proc into the host's own files).
_mysql_mounted() {
  local d
  d=$(realpath -m "$1")
  awk -v d="$d" '$2 == d || index($2, d "/") == 1 {found = 1} END {exit !found}' /proc/mounts
}

# _mysql97_apt ROOT LOG PACKAGE...: apt-get update and install in the
# chroot, with the host's /proc bound inside while apt runs (maintainer
# scripts look at it; unmounted again whatever happens). unstable's Release
# file is checked for validity in time: its mirror may carry an older one
# (found: "expired 31 days ago"), which only means an older sid.
_mysql97_apt() {
  local root=$1 log=$2
  shift 2
  (
    mounted=0
    if mount --bind /proc "$root/proc" 2>/dev/null; then mounted=1; fi
    trap '[ $mounted = 0 ] || umount "$root/proc"' EXIT
    chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get -q \
      -o Acquire::Check-Valid-Until=false update &&
      chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get -q -y \
        -o Acquire::Check-Valid-Until=false install --no-install-recommends "$@" &&
      chroot "$root" apt-get clean
  ) >>"$log" 2>&1
}

# mysql97_root DIR: the chroot, made once. It is built in DIR.partial and
# renamed when complete, so that DIR is either absent or whole.
mysql97_root() {
  local dir=${1:?usage: mysql97_root DIR} part mirror log start=$SECONDS missing_pkgs p
  dir=$(realpath -m "$dir")
  if [ -f "$dir/$MYSQL97_MARKER" ]; then
    # reused; packages asked for since it was made are added
    missing_pkgs=()
    for p in $SHOAL_MYSQL97_PACKAGES; do
      grep -qxF -- "$p" "$dir/$MYSQL97_MARKER" || missing_pkgs+=("$p")
    done
    [ ${#missing_pkgs[@]} -eq 0 ] && return 0
    if ! _mysql97_apt "$dir" "$dir.apt.log" "${missing_pkgs[@]}"; then
      _mysql_err "apt-get install ${missing_pkgs[*]} in $dir failed (log: $dir.apt.log)"
      return 1
    fi
    printf '%s\n' "${missing_pkgs[@]}" >>"$dir/$MYSQL97_MARKER"
    return 0
  fi
  if [ -e "$dir" ]; then
    _mysql_err "$dir exists but is no finished chroot (no $MYSQL97_MARKER): remove it, or add the marker (one package a line) if it was made by hand"
    return 1
  fi
  [ "$(id -u)" = 0 ] || { _mysql_err "making the MySQL 9.7 chroot needs root"; return 1; }
  command -v debootstrap >/dev/null || { _mysql_err "debootstrap is not installed (apt-get install debootstrap)"; return 1; }
  chroot / true 2>/dev/null || { _mysql_err "chroot is not permitted here (no CAP_SYS_CHROOT?)"; return 1; }
  mirror=$(_mysql_mirror) || { _mysql_err "no Debian mirror in /etc/apt/sources.list{,.d}"; return 1; }
  part="$dir.partial"
  log="$dir.build.log"
  if [ -e "$part" ]; then
    # an interrupted build: started again from nothing
    if _mysql_mounted "$part"; then _mysql_err "$part has a mount inside: not removed"; return 1; fi
    rm -rf "$part"
  fi
  mkdir -p "$part" || { _mysql_err "cannot create $part"; return 1; }
  : >"$log"
  log "mysql: making the MySQL 9.7 chroot in $dir (debootstrap sid from $mirror; log $log)"
  if ! debootstrap --variant=minbase sid "$part" "$mirror" >>"$log" 2>&1; then
    tail -n 5 "$log" >&2
    _mysql_err "debootstrap sid from $mirror failed (no network?; log: $log)"
    return 1
  fi
  echo "deb $mirror sid main" >"$part/etc/apt/sources.list"
  # shellcheck disable=SC2086 # the package list is blank-separated on purpose
  if ! _mysql97_apt "$part" "$log" $SHOAL_MYSQL97_PACKAGES; then
    tail -n 5 "$log" >&2
    _mysql_err "apt-get install $SHOAL_MYSQL97_PACKAGES in the chroot failed (log: $log)"
    return 1
  fi
  if ! chroot "$part" mysqld --version >>"$log" 2>&1; then
    _mysql_err "the chroot's mysqld does not run (log: $log)"
    return 1
  fi
  # shellcheck disable=SC2086 # one package a line
  printf '%s\n' $SHOAL_MYSQL97_PACKAGES >"$part/$MYSQL97_MARKER"
  mv "$part" "$dir" || { _mysql_err "cannot rename $part to $dir"; return 1; }
  log "mysql: the MySQL 9.7 chroot is ready in $((SECONDS - start)) s ($(du -sxh "$dir" | cut -f1))"
}

mysql97_socket() { echo "$(realpath -m "$1")/run/shoal-$2.sock"; }

# _mysql_wait SOCKET PID LOG: until the server answers a ping on its socket
# (120 s at most: initializing and starting take 10 to 30 s on a loaded
# 2-core machine); 1, with the log's tail, if it exits or never answers.
_mysql_wait() {
  local sock=$1 pid=$2 log=$3 i
  for ((i = 0; i < 240; i++)); do
    mariadb-admin --no-defaults --socket="$sock" -uroot --connect-timeout=2 ping >/dev/null 2>&1 && return 0
    if ! pid_alive "$pid"; then
      tail -n 15 "$log" >&2
      _mysql_err "mysqld exited at start (log: $log)"
      return 1
    fi
    sleep 0.5
  done
  _mysql_err "mysqld did not answer within 120 s (log: $log)"
  return 1
}

# The options both versions run with (the binlog as a replica's source
# would have it).
_mysql_common_opts() {
  printf '%s\n' --no-defaults --user=root --bind-address=127.0.0.1 --skip-name-resolve \
    --log-bin=binlog --binlog-format=ROW --gtid-mode=ON --enforce-gtid-consistency=ON \
    --server-id=1
}

# mysql97_start DIR NAME PORT [options...]
mysql97_start() {
  local root=${1:?usage: mysql97_start DIR NAME PORT} name=${2:?} port=${3:?} data run pid opts
  shift 3
  root=$(realpath -m "$root")
  [ -f "$root/$MYSQL97_MARKER" ] || { _mysql_err "no MySQL 9.7 chroot in $root (mysql97_root makes it)"; return 1; }
  [[ $name =~ ^[A-Za-z0-9_-]+$ ]] || { _mysql_err "server name '$name': letters, digits, - and _ only"; return 1; }
  port_free "$port" || { _mysql_err "port $port is in use"; return 1; }
  data="/var/lib/shoal-$name"   # as mysqld sees it, inside the chroot
  run="$root$data.log"          # its stdout and stderr, on the host
  # mysqld refuses to start without its secure_file_priv directory, which
  # only the full mysql-server package makes
  mkdir -p "$root/var/lib/mysql-files" || { _mysql_err "cannot create $root/var/lib/mysql-files"; return 1; }
  if [ ! -d "$root$data/mysql" ]; then
    if [ -e "$root$data" ]; then rm -rf "${root:?}$data"; fi
    if ! chroot "$root" mysqld --no-defaults --user=root --datadir="$data" \
      --initialize-insecure >"$run" 2>&1; then
      tail -n 15 "$run" >&2
      _mysql_err "mysqld 9.7 --initialize-insecure failed (log: $run)"
      return 1
    fi
  fi
  mapfile -t opts < <(_mysql_common_opts)
  # stdout and stderr to a file, not the caller's: a command substitution
  # would otherwise wait for the server to end
  chroot "$root" mysqld "${opts[@]}" --datadir="$data" --port="$port" \
    --socket="/run/shoal-$name.sock" --mysqlx=OFF --log-error="$data/error.log" \
    "$@" >>"$run" 2>&1 </dev/null &
  pid=$!
  _mysql_wait "$(mysql97_socket "$root" "$name")" "$pid" "$root$data/error.log" || return 1
  echo "$pid"
}

# mysql97_drop DIR NAME: the server's datadir goes (stop the server first).
mysql97_drop() {
  local root
  root=$(realpath -m "${1:?usage: mysql97_drop DIR NAME}")
  [[ ${2:-} =~ ^[A-Za-z0-9_-]+$ ]] || { _mysql_err "mysql97_drop: bad server name '${2:-}'"; return 1; }
  rm -rf "$root/var/lib/shoal-$2" "$root/var/lib/shoal-$2.log"
}

# mysql80_dir: ../shared/peers/mysql-8.0 beside the checkout
# ($SHOAL_MYSQL80_DIR overrides), when its mysqld runs here.
mysql80_dir() {
  local d=${SHOAL_MYSQL80_DIR:-} missing
  if [ -z "$d" ]; then
    d="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/../shared/peers/mysql-8.0"
  fi
  [ -x "$d/bin/mysqld" ] || { _mysql_err "no MySQL 8.0 build at $d (set SHOAL_MYSQL80_DIR)"; return 1; }
  d=$(cd "$d" && pwd)
  missing=$(ldd "$d/bin/mysqld" 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')
  if [ -n "$missing" ]; then
    _mysql_err "MySQL 8.0's mysqld lacks libraries: ${missing% } (apt-get install -y libaio1 libnuma1 libicu72)"
    return 1
  fi
  echo "$d"
}

# mysql80_start DIR PORT [options...]
mysql80_start() {
  local dir=${1:?usage: mysql80_start DIR PORT} port=${2:?} m common pid opts
  shift 2
  m=$(mysql80_dir) || return 1
  [ "$(id -u)" = 0 ] || { _mysql_err "mysqld 8.0 runs here as root (--user=root)"; return 1; }
  port_free "$port" || { _mysql_err "port $port is in use"; return 1; }
  mkdir -p "$dir" || { _mysql_err "cannot create $dir"; return 1; }
  dir=$(cd "$dir" && pwd)
  common=(--basedir="$m" --lc-messages-dir="$m/share" --character-sets-dir="$m/share/charsets")
  if [ ! -d "$dir/data/mysql" ]; then
    rm -rf "$dir/data"
    if ! "$m/bin/mysqld" --no-defaults --user=root "${common[@]}" --datadir="$dir/data" \
      --initialize-insecure >"$dir/init.log" 2>&1; then
      tail -n 15 "$dir/init.log" >&2
      _mysql_err "mysqld 8.0 --initialize-insecure failed (log: $dir/init.log)"
      return 1
    fi
  fi
  mapfile -t opts < <(_mysql_common_opts)
  "$m/bin/mysqld" "${opts[@]}" "${common[@]}" --datadir="$dir/data" --port="$port" \
    --socket="$dir/sock" --pid-file="$dir/pid" --log-error="$dir/error.log" \
    "$@" >>"$dir/mysqld.out" 2>&1 </dev/null &
  pid=$!
  _mysql_wait "$dir/sock" "$pid" "$dir/error.log" || return 1
  echo "$pid"
}

# mysql_servers_here ROOT WORKDIR: the MySQL servers that can run here,
# 97 (the chroot in ROOT, made if missing) and 80 (mysql80_dir), in
# MYSQL_SERVERS; for each that cannot, "MySQL 9.7: why" in MYSQL_MISSING.
# The reasons' full text is in WORKDIR/mysql97-root.err and mysql80.err.
mysql_servers_here() {
  local root=${1:?usage: mysql_servers_here ROOT WORKDIR} work=${2:?}
  MYSQL_SERVERS=() MYSQL_MISSING=()
  if mysql97_root "$root" 2>"$work/mysql97-root.err"; then
    MYSQL_SERVERS+=(97)
  else
    MYSQL_MISSING+=("MySQL 9.7: $(grep '^mysql:' "$work/mysql97-root.err" | tail -n 1)")
  fi
  if mysql80_dir >/dev/null 2>"$work/mysql80.err"; then
    MYSQL_SERVERS+=(80)
  else
    MYSQL_MISSING+=("MySQL 8.0: $(tail -n 1 "$work/mysql80.err")")
  fi
}

# mysql_create_app SOCKET: the tests' login, as scripts/start-mariadb makes
# it for MariaDB, with MySQL's default plugin named (9.x has no other).
mysql_create_app() {
  local sock=${1:?usage: mysql_create_app SOCKET}
  if ! mariadb --no-defaults --socket="$sock" -uroot <<'SQL' >&2; then
CREATE USER IF NOT EXISTS 'app'@'%' IDENTIFIED WITH caching_sha2_password BY 'pw';
GRANT ALL ON *.* TO 'app'@'%' WITH GRANT OPTION;
CREATE DATABASE IF NOT EXISTS shoaltest;
SQL
    _mysql_err "creating the app user over $sock failed"
    return 1
  fi
}
