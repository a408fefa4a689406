#!/usr/bin/env bash
# f30-partition: the upstream (a private MariaDB in its own network
# namespace, reached over a veth pair) is cut off by taking the link down,
# and later restored. During the partition clients get errors (not hangs:
# new sessions fail within the connect timeout), /health turns 503; after
# the link is back the node recovers by itself: /health 200, new sessions
# and queries work, the node was never restarted. Needs root (ip netns).
# About 15 s.
set -uo pipefail
. "$(dirname "$0")/lib-faults.sh"
if fake_mode; then skip_all "node-only"; fi

NS=shoalf30-$$
VH=sf30h$$ VN=sf30n$$
NET="10.$((200 + $$ % 50)).$((($$ / 50) % 250))"
if ! ip netns add "$NS" 2>/dev/null; then skip_all "cannot create a network namespace (needs root)"; fi
on_exit "ip netns del $NS"
# (in a chroot, ip netns exec fails: / is not a mount point there)
ip netns exec "$NS" true 2>/dev/null || skip_all "ip netns exec does not work here (a chroot?)"
plan 14
on_exit "ip link del $VH"
ip link add "$VH" type veth peer name "$VN" && ip link set "$VN" netns "$NS" &&
  ip addr add "$NET.1/30" dev "$VH" && ip link set "$VH" up &&
  ip netns exec "$NS" ip addr add "$NET.2/30" dev "$VN" &&
  ip netns exec "$NS" ip link set "$VN" up && ip netns exec "$NS" ip link set lo up
check "veth pair $VH <-> $VN ($NET.1 <-> $NET.2 in $NS)" sh -c "ip netns exec $NS ip -o addr show dev $VN to $NET.2 | grep -q $NET.2"

mdir="$BUILD_TEST/fault-mdb-f30"
mport=$(free_port)
rm -rf "$mdir"
if ! FAULT_MDB_WRAP="ip netns exec $NS" fault_mdb_start "$mdir" "$mport" --bind-address="$NET.2"; then
  bail "private MariaDB starts in $NS"
fi
ok "private MariaDB listens on $NET.2:$mport inside $NS"
HP=$(free_port)
if ! shoal_start p --upstream-db-url "mysql://app:pw@$NET.2:$mport/shoaltest" \
  --upstream-down-after-ms 1000 --upstream-connect-timeout-ms 1500 --metrics-address "127.0.0.1:$HP"; then
  bail "node starts"
fi
ok "node starts (upstream over the veth pair)"
health() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HP/health"; }
q() { timeout 10 mariadb --no-defaults -h127.0.0.1 -P"$p_PORT" -uapp -ppw --connect-timeout=5 -N -e "$1" 2>&1; }
wait_for() { # wait_for SECONDS CMD...: until CMD succeeds
  local end=$((SECONDS + $1)); shift
  until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.2; done
}

is "$(q 'SELECT 1')" 1 "before: a query works"
is "$(health)" 200 "before: /health 200"
check "partition: $VH down" ip link set "$VH" down
t0=$SECONDS
out=$(q 'SELECT 2')
like "$out" "ERROR (1429|2013|1158|2026)" "during the partition a new session gets an error, not a hang [$(head -c 100 <<<"$out")] in $((SECONDS - t0)) s"
check "during the partition /health turns 503" wait_for 8 sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$HP/health)\" = 503 ]"
out=$(q 'SELECT 3')
like "$out" "ERROR" "while it lasts clients keep getting errors [$(head -c 100 <<<"$out")]"
check "restored: $VH up" ip link set "$VH" up
check "after the restore /health returns to 200" wait_for 15 sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$HP/health)\" = 200 ]"
check "after the restore new sessions work again" wait_for 10 sh -c "[ \"\$(timeout 10 mariadb --no-defaults -h127.0.0.1 -P$p_PORT -uapp -ppw -N -e 'SELECT 4' 2>/dev/null)\" = 4 ]"
is "$(q 'SELECT 5')" 5 "and keep working"
check "the node was never restarted" shoal_alive p
echo "# FAULT-FIGURES f30 partitions=1 recovered=$([ "$(q 'SELECT 6')" = 6 ] && echo 1 || echo 0)"
done_testing
