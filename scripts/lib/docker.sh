# shellcheck shell=bash
# scripts/lib/docker.sh: Docker for tests and scripts on a machine without
# systemd and without a reachable registry. Source it after common.sh; it
# defines functions only.
#
#   docker_start DIR        start Debian's dockerd with its default settings
#                           (log and pid under DIR) unless a daemon already
#                           answers; first saves what dockerd changes on the
#                           host (FORWARD policy, ip_forward, bridge netfilter)
#   docker_stop             stop the dockerd docker_start started, by its pid,
#                           and put the host's network settings back (its
#                           iptables rules and chains and its bridges removed)
#   docker_base_image DIR   make debian:bookworm-slim (and debian:bookworm) from
#                           Debian packages with debootstrap --variant=minbase
#                           and docker import, unless the image exists; the
#                           image's apt sources are the host's mirror with
#                           bookworm, bookworm-updates and bookworm-security
#   docker_wait_healthy NAME [SECONDS]   wait for a container's HEALTHCHECK
#
# DOCKERD_PID is set while a dockerd of ours runs; DOCKER_BASE_SECONDS tells
# how long docker_base_image took (0 when the image was reused).

DOCKERD_PID=""
DOCKER_SAVED=""
DOCKER_BASE_SECONDS=0

docker_answers() { docker info >/dev/null 2>&1; }

# The host state dockerd changes, saved to $1 (a directory).
_docker_save_host() {
  local d=$1
  mkdir -p "$d"
  iptables -S FORWARD 2>/dev/null | awk '$1 == "-P" {print $3}' >"$d/forward_policy" || true
  cat /proc/sys/net/ipv4/ip_forward >"$d/ip_forward" 2>/dev/null || true
  if [ -d /sys/module/br_netfilter ]; then echo 1 >"$d/br_netfilter"; else echo 0 >"$d/br_netfilter"; fi
  ip -o link show type bridge 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' >"$d/bridges" || true
}

# Take out what dockerd added to one iptables table: the rules that name a
# DOCKER chain or a docker/br- bridge, then the DOCKER chains. Other rules
# (other tests may add some meanwhile) stay.
_docker_clean_table() {
  local t=$1 rule c
  iptables -t "$t" -S 2>/dev/null | grep -E '^-A .*(DOCKER|docker0|br-[0-9a-f]{12})' |
    while IFS= read -r rule; do
      eval "iptables -t $t ${rule/-A/-D}" 2>/dev/null || true
    done
  for c in $(iptables -t "$t" -S 2>/dev/null | awk '/^-N DOCKER/ {print $2}'); do iptables -t "$t" -F "$c" 2>/dev/null; done
  for c in $(iptables -t "$t" -S 2>/dev/null | awk '/^-N DOCKER/ {print $2}'); do iptables -t "$t" -X "$c" 2>/dev/null; done
}

# Put back what _docker_save_host saved: the FORWARD policy, ip_forward and
# bridge netfilter; remove dockerd's iptables rules and chains and the
# bridges it made.
_docker_restore_host() {
  local d=$1 b p
  [ -d "$d" ] || return 0
  _docker_clean_table filter
  _docker_clean_table nat
  p=$(cat "$d/forward_policy" 2>/dev/null)
  [ -n "$p" ] && iptables -P FORWARD "$p" 2>/dev/null
  # (only when dockerd changed it: where /proc/sys is read-only, as in a
  # container, it cannot have, and the write would fail; the redirection's
  # own error goes to the group's 2>/dev/null, not to the terminal)
  local was now
  was=$(cat "$d/ip_forward" 2>/dev/null) now=$(cat /proc/sys/net/ipv4/ip_forward 2>/dev/null)
  if [ -n "$was" ] && [ "$was" != "$now" ]; then
    { echo "$was" >/proc/sys/net/ipv4/ip_forward; } 2>/dev/null ||
      log "docker: cannot put net.ipv4.ip_forward back to $was (it is $now)"
  fi
  if [ "$(cat "$d/br_netfilter" 2>/dev/null)" = 0 ] && [ -d /sys/module/br_netfilter ]; then
    # it cannot always be unloaded in a container: at least stop it filtering bridged traffic
    modprobe -r br_netfilter 2>/dev/null ||
      for b in /proc/sys/net/bridge/bridge-nf-call-iptables /proc/sys/net/bridge/bridge-nf-call-ip6tables; do
        [ -w "$b" ] && echo 0 >"$b"
      done
  fi
  for b in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//'); do
    grep -qx "$b" "$d/bridges" 2>/dev/null || ip link delete "$b" 2>/dev/null || true
  done
  return 0
}

docker_start() {
  local dir=$1 i
  mkdir -p "$dir"
  if docker_answers; then
    log "docker: using the daemon that already runs"
    return 0
  fi
  command -v dockerd >/dev/null || { log "docker: dockerd is not installed (docker.io)"; return 1; }
  DOCKER_SAVED="$dir/host-before"
  rm -rf "$DOCKER_SAVED"
  _docker_save_host "$DOCKER_SAVED"
  nohup dockerd >"$dir/dockerd.log" 2>&1 </dev/null &
  DOCKERD_PID=$!
  for ((i = 0; i < 300; i++)); do
    docker_answers && break
    if ! pid_alive "$DOCKERD_PID"; then
      log "docker: dockerd exited; its log:"
      tail -n 20 "$dir/dockerd.log" >&2
      DOCKERD_PID=""
      _docker_restore_host "$DOCKER_SAVED"
      return 1
    fi
    sleep 0.1
  done
  if ! docker_answers; then
    log "docker: dockerd (pid $DOCKERD_PID) does not answer after 30 s"
    docker_stop
    return 1
  fi
  log "docker: dockerd pid $DOCKERD_PID ($(docker version --format '{{.Server.Version}}' 2>/dev/null))"
}

docker_stop() {
  if is_pid "$DOCKERD_PID"; then
    log "docker: stopping dockerd (pid $DOCKERD_PID)"
    stop_pid "$DOCKERD_PID" 30
    # its containerd child goes with it; wait for the socket to close
    DOCKERD_PID=""
  fi
  if [ -n "$DOCKER_SAVED" ]; then
    _docker_restore_host "$DOCKER_SAVED"
    DOCKER_SAVED=""
  fi
}

# The host's Debian mirror (deb822 or one-line sources), else deb.debian.org.
_docker_mirror() {
  local m
  m=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null)
  [ -n "$m" ] || m=$(awk '$1 == "deb" && $3 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  echo "${m:-http://deb.debian.org/debian}"
}

_docker_security_mirror() {
  local m
  m=$(awk '/^URIs:/ && $2 ~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null)
  [ -n "$m" ] || m=$(awk '$1 == "deb" && $2 ~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  echo "${m:-http://deb.debian.org/debian-security}"
}

docker_base_image() {
  local dir=$1 root mirror sec start=$SECONDS
  DOCKER_BASE_SECONDS=0
  if docker image inspect debian:bookworm-slim >/dev/null 2>&1; then
    docker image inspect debian:bookworm >/dev/null 2>&1 || docker tag debian:bookworm-slim debian:bookworm
    log "docker: base image debian:bookworm-slim exists (reused)"
    return 0
  fi
  command -v debootstrap >/dev/null || { log "docker: debootstrap is not installed"; return 1; }
  mirror=$(_docker_mirror)
  sec=$(_docker_security_mirror)
  root="$dir/rootfs"
  rm -rf "$root"
  mkdir -p "$root"
  log "docker: making debian:bookworm-slim with debootstrap --variant=minbase from $mirror"
  if ! debootstrap --variant=minbase bookworm "$root" "$mirror" >"$dir/debootstrap.log" 2>&1; then
    tail -n 20 "$dir/debootstrap.log" >&2
    rm -rf "$root"
    return 1
  fi
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $sec
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # as Docker's own Debian images: no apt caches, no docs beyond copyright
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
  if ! tar -C "$root" -c . | docker import -c 'CMD ["bash"]' - debian:bookworm-slim >"$dir/import.log" 2>&1; then
    cat "$dir/import.log" >&2
    rm -rf "$root"
    return 1
  fi
  rm -rf "$root"
  docker tag debian:bookworm-slim debian:bookworm
  DOCKER_BASE_SECONDS=$((SECONDS - start))
  log "docker: base image made in ${DOCKER_BASE_SECONDS} s"
}

docker_wait_healthy() {
  local name=$1 secs=${2:-60} i st
  for ((i = 0; i < secs * 2; i++)); do
    st=$(docker inspect -f '{{.State.Health.Status}}' "$name" 2>/dev/null || echo gone)
    [ "$st" = healthy ] && return 0
    [ "$st" = gone ] && return 1
    sleep 0.5
  done
  return 1
}
