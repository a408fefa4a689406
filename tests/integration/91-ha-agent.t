#!/usr/bin/env bash
# 91-ha-agent: the shoal-ha agent's dialogue with ProxySQL's admin
# (docs/ha-agent.md), against tests/integration/lib/fake_proxysql.py: a
# MySQL-protocol endpoint over SQLite holding ProxySQL's admin tables, whose
# LOAD/SAVE commands copy tables between the layers and which logs every
# statement it receives. Checked: the exact statements of register, route,
# route --remove and advise --apply and their effect on main, runtime_ and
# disk tables; idempotence (a second run sends no change); rule_id choice
# around a rule that is not the agent's; advise's ranking with a seeded
# stats_mysql_query_digest and a real node whose admin says which digests are
# cacheable; settings from a config file and the environment; errors
# (ProxySQL down, bad DSN, wrong password, a cluster's first admin down,
# node down, bad digest) with their exit statuses and messages.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then
  skip_all "the agent needs a real node (fake mode)"
fi

plan 66
AGENT="$SRCDIR/ha/shoal-ha"
work="$BUILD_TEST/ha-agent"
mkdir -p "$work"
rm -rf "$work"; mkdir -p "$work"

# ------------------------------------------------------------ the endpoints
pxport=$(free_port)
pxlog="$work/proxysql.log"
"$PY" "$TESTLIB/fake_proxysql.py" --port "$pxport" --log "$pxlog" >"$work/fake.out" 2>&1 &
pxpid=$!
on_exit "is_pid $pxpid && kill $pxpid"
for _ in $(seq 50); do port_refuses "$pxport" || break; sleep 0.1; done

px() { mariadb --no-defaults -h127.0.0.1 -P"$pxport" -utest -ptest -N -B -e "$1"; }
# the statements the agent sent since the last call (the test's own are "test\t...")
sent() { grep -P '^admin\t' "$pxlog" | cut -f2-; : >"$pxlog"; }

hp1=$(free_port); ap1=$(free_port); hp2=$(free_port); ap2=$(free_port)
shoal_start n1 --auto-cache --cache-ttl-ms 600000 --metrics-address "127.0.0.1:$hp1" \
  --admin-address "127.0.0.1:$ap1" --data-dir "$work/n1" || bail "node n1 starts"
if shoal_start n2 --auto-cache --cache-ttl-ms 600000 --metrics-address "127.0.0.1:$hp2" \
  --admin-address "127.0.0.1:$ap2" --data-dir "$work/n2"; then
  ok "fake ProxySQL admin on $pxport, nodes n1 $n1_PORT and n2 $n2_PORT"
else
  bail "fake ProxySQL admin on $pxport, nodes n1 $n1_PORT and n2 $n2_PORT"
fi

DSN="mysql://admin:admin@127.0.0.1:$pxport"
NODES="127.0.0.1:$n1_PORT:$hp1:$ap1,127.0.0.1:$n2_PORT:$hp2:$ap2"
agent() { "$AGENT" "$@" >"$work/out" 2>"$work/err"; rc=$?; out=$(cat "$work/out"); err=$(cat "$work/err"); }

# ------------------------------------------------------------ register
: >"$pxlog"
agent register --proxysql-admin "$DSN" --nodes "$NODES" --fallback "127.0.0.1:$MDB_PORT"
is "$rc" 0 "register: exit 0"
is "$(sent)" "SELECT hostname, port, status, weight, comment FROM mysql_servers WHERE hostgroup_id=30 ORDER BY hostname, port
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment) VALUES (30, '127.0.0.1', $n1_PORT, 1000, 'shoal-ha node')
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment) VALUES (30, '127.0.0.1', $n2_PORT, 1000, 'shoal-ha node')
INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight, comment) VALUES (30, '127.0.0.1', $MDB_PORT, 1, 'shoal-ha fallback')
LOAD MYSQL SERVERS TO RUNTIME
SAVE MYSQL SERVERS TO DISK" "register: the exact statements"
like "$out" "added: node 127.0.0.1:$n1_PORT to hostgroup 30, weight 1000" "register: prints what it added"
like "$out" "3 changes on ProxySQL admin@127.0.0.1:$pxport: loaded to runtime, saved to disk" "register: prints the summary"
want_servers=$(printf '30\t127.0.0.1\t%s\t1000\tONLINE\n30\t127.0.0.1\t%s\t1000\tONLINE\n30\t127.0.0.1\t%s\t1\tONLINE' \
  "$n1_PORT" "$n2_PORT" "$MDB_PORT" | sort)
for t in mysql_servers runtime_mysql_servers disk.mysql_servers; do
  is "$(px "SELECT hostgroup_id, hostname, port, weight, status FROM $t" | sort)" "$want_servers" \
    "register: $t holds both nodes at 1000 and the fallback at 1"
done

agent register --proxysql-admin "$DSN" --nodes "$NODES" --fallback "127.0.0.1:$MDB_PORT"
is "$rc" 0 "register again: exit 0"
is "$(sent)" "SELECT hostname, port, status, weight, comment FROM mysql_servers WHERE hostgroup_id=30 ORDER BY hostname, port" \
  "register again: only reads (idempotent)"
like "$out" "nothing to change" "register again: says nothing changed"
is "$(px 'SELECT hostgroup_id, hostname, port, weight, status FROM runtime_mysql_servers' | sort)" "$want_servers" \
  "register again: runtime unchanged"

agent register --proxysql-admin "$DSN" --nodes "$NODES" --node-weight 500
is "$(sent | sed 1d)" "UPDATE mysql_servers SET weight=500 WHERE hostgroup_id=30 AND hostname='127.0.0.1' AND port=$n1_PORT
UPDATE mysql_servers SET weight=500 WHERE hostgroup_id=30 AND hostname='127.0.0.1' AND port=$n2_PORT
LOAD MYSQL SERVERS TO RUNTIME
SAVE MYSQL SERVERS TO DISK" "register --node-weight 500: UPDATEs the weights, loads, saves"
like "$out" "changed: node 127.0.0.1:$n1_PORT in hostgroup 30: weight 1000 -> 500" "register: prints the weight change"
is "$(px "SELECT weight FROM disk.mysql_servers WHERE port=$n2_PORT")" 500 "register: disk has the new weight"

# settings from a config file and the environment
cat >"$work/agent.conf" <<EOF
# shoal-ha test config
proxysql_admin = $DSN
nodes = $NODES
node_weight = "500"
EOF
SHOAL_HA_FALLBACK="127.0.0.1:$MDB_PORT" agent register --config "$work/agent.conf"
is "$rc:$(sent | wc -l)" "0:1" "register from a config file and SHOAL_HA_FALLBACK: nothing to change"
echo "bogus_key = 1" >>"$work/agent.conf"
agent register --config "$work/agent.conf"
is "$rc" 2 "config file with an unknown key: exit 2"
like "$err" "agent.conf:5: unknown setting 'bogus_key'" "  names the file, the line and the key"

# ------------------------------------------------------------ route
px "INSERT INTO mysql_query_rules (rule_id, active, match_digest, destination_hostgroup, apply, comment)
    VALUES (1, 1, '^SELECT .* FOR UPDATE', 10, 1, 'writer rule'), (3, 1, NULL, 20, 0, 'someone else')"
: >"$pxlog"
D1=0x1111111111111111 D2=0x00000000000000AB
agent route --proxysql-admin "$DSN" "$D1" 0xab
is "$rc" 0 "route: exit 0"
OWN="SELECT rule_id, digest, destination_hostgroup, active, apply, mirror_hostgroup, comment FROM mysql_query_rules WHERE substr(comment, 1, 8) = 'shoal-ha' ORDER BY rule_id"
WARN() { echo "SELECT rule_id, digest FROM mysql_query_rules WHERE active=1 AND (comment IS NULL OR substr(comment, 1, 8) <> 'shoal-ha') AND ((apply=1 AND rule_id < $1 AND (digest IS NULL OR digest = '')) OR digest = '$2') ORDER BY rule_id"; }
is "$(sent)" "$OWN
SELECT rule_id FROM mysql_query_rules WHERE rule_id >= 1 ORDER BY rule_id
INSERT INTO mysql_query_rules (rule_id, active, digest, destination_hostgroup, apply, comment) VALUES (2, 1, '$D1', 30, 1, 'shoal-ha')
$(WARN 2 $D1)
SELECT rule_id FROM mysql_query_rules WHERE rule_id >= 3 ORDER BY rule_id
INSERT INTO mysql_query_rules (rule_id, active, digest, destination_hostgroup, apply, comment) VALUES (4, 1, '$D2', 30, 1, 'shoal-ha')
$(WARN 4 $D2)
LOAD MYSQL QUERY RULES TO RUNTIME
SAVE MYSQL QUERY RULES TO DISK" "route: the exact statements (free rule_ids 2 and 4 around rules 1 and 3)"
like "$out" "added: rule 2: digest $D1 -> hostgroup 30" "route: prints the new rule"
like "$out" "warning: rule 1 \(not the agent's\) has apply=1, no digest, and comes before digest $D1" \
  "route: warns about an earlier catch-all rule"
want_rules=$(printf '1\t1\tNULL\t10\t1\twriter rule\n2\t1\t%s\t30\t1\tshoal-ha\n3\t1\tNULL\t20\t0\tsomeone else\n4\t1\t%s\t30\t1\tshoal-ha' "$D1" "$D2")
for t in runtime_mysql_query_rules disk.mysql_query_rules; do
  is "$(px "SELECT rule_id, active, digest, destination_hostgroup, apply, comment FROM $t ORDER BY rule_id")" \
    "$want_rules" "route: $t has the two rules (active, apply, hostgroup 30) beside the others"
done

agent route --proxysql-admin "$DSN" "$D1" "q_00000000000000ab"
is "$rc:$(sent)" "0:$OWN" "route again (also as q_ id): only reads (idempotent)"
like "$out" "unchanged: rule 4: digest $D2 -> hostgroup 30" "  says unchanged"

agent route --proxysql-admin "$DSN"
is "$out" "rule 2: digest $D1 -> hostgroup 30
rule 4: digest $D2 -> hostgroup 30" "route without digests lists the agent's rules"
sent >/dev/null

agent route --proxysql-admin "$DSN" --remove "$D1"
is "$rc" 0 "route --remove: exit 0"
is "$(sent)" "$OWN
DELETE FROM mysql_query_rules WHERE rule_id=2
LOAD MYSQL QUERY RULES TO RUNTIME
SAVE MYSQL QUERY RULES TO DISK" "route --remove: the exact statements"
is "$(px 'SELECT rule_id FROM runtime_mysql_query_rules ORDER BY rule_id' | tr '\n' ' ')" "1 3 4 " \
  "route --remove: rule 2 gone from the runtime, the others stay"
agent route --proxysql-admin "$DSN" --remove "$D1"
is "$rc:$(sent)" "0:$OWN" "route --remove again: only reads"
agent route --proxysql-admin "$DSN" --remove --all
is "$(px 'SELECT rule_id FROM disk.mysql_query_rules ORDER BY rule_id' | tr '\n' ' ')" "1 3 " \
  "route --remove --all: only the agent's rules are gone (disk)"
sent >/dev/null

# ------------------------------------------------------------ advise
mdb -e "DROP TABLE IF EXISTS t91; CREATE TABLE t91 (id INT PRIMARY KEY, v VARCHAR(20)); INSERT INTO t91 VALUES (1,'a'),(2,'b')"
on_exit "mdb -e 'DROP TABLE IF EXISTS t91'"
for _ in $(seq 25); do echo "select v from t91 where id = 1;"; done | via_to n1 >/dev/null
echo "select id from t91 where v = 'a'; select now(); select v, id from t91 order by id;" | via_to n2 >/dev/null
echo "select now();" | via_to n1 >/dev/null
digest_of() { mariadb --no-defaults -h127.0.0.1 -P"$1" -uadmin -padmin -N -B \
  -e "SELECT digest FROM stats_shoal_query_digest WHERE digest_text = '$2'"; }
DA=$(digest_of "$ap1" 'select v from t91 where id = ?')
DB=$(digest_of "$ap2" 'select id from t91 where v = ?')
DC=$(digest_of "$ap2" 'select v,id from t91 order by id')
DN=$(digest_of "$ap1" 'select now()')
DU=0x0123456789ABCDEF
like "$DA $DB $DC $DN" '^0x[0-9A-F]{16} 0x[0-9A-F]{16} 0x[0-9A-F]{16} 0x[0-9A-F]{16}$' "the nodes report the digests"
# hostgroup 20 and 10 rows of one digest are summed; sum_time in µs
px "INSERT INTO stats_mysql_query_digest VALUES
 (20,'shoaltest','app','','$DN','select now()',900,1,2,9000000,1,10,0,900),
 (20,'shoaltest','app','','$DA','select v from t91 where id = ?',1000,1,2,4000000,1,10,0,1000),
 (10,'shoaltest','app','','$DA','select v from t91 where id = ?',100,1,2,1000000,1,10,0,100),
 (20,'shoaltest','app','','$DU','select * from elsewhere where x = ?',50,1,2,3000000,1,10,0,50),
 (20,'shoaltest','app','','$DB','select id from t91 where v = ?',70,1,2,2000000,1,10,0,70),
 (20,'shoaltest','app','','$DC','select v,id from t91 order by id',10,1,2,500000,1,10,0,10)"
: >"$pxlog"
agent advise --proxysql-admin "$DSN" --nodes "$NODES" --top 2
is "$rc" 0 "advise: exit 0"
rows=$(grep -E '^[0-9]+ ' <<<"$out" | awk '{print $1, $2, $5, $6, $7}')
is "$rows" "1 $DN - - not
2 $DA 4.800 route cacheable
3 $DU 2.700 route cacheable
4 $DB 1.800 - cacheable
5 $DC 0.450 - cacheable" "advise: ranked by total time; verdicts from the nodes (a digest no node has seen: asked with shoal_cacheable()); saving = time x hit ratio (n1 measured 24/25, else 90%); --top 2"
like "$out" "not cacheable \(non-deterministic function\)" "advise: gives the node's reason"
like "$out" "cacheable \(cached, not seen yet\)" "advise: says which verdicts come from a node that has not seen the digest"
like "$out" "routing 2 digests to hostgroup 30 would save about 7.500 s of 19.500 s upstream time \(38.5%\)" \
  "advise: prints the expected saving"
is "$(sent)" "SELECT digest, MAX(digest_text), SUM(count_star), SUM(sum_time), MAX(last_seen) FROM stats_mysql_query_digest GROUP BY digest ORDER BY SUM(sum_time) DESC
$OWN" "advise without --apply: reads only"
is "$(px 'SELECT COUNT(*) FROM mysql_query_rules')" 2 "advise without --apply: no rule added"

agent advise --proxysql-admin "$DSN" --nodes "$NODES" --top 2 --apply
is "$rc" 0 "advise --apply: exit 0"
is "$(sent | grep -E '^(INSERT|UPDATE|DELETE|LOAD|SAVE)')" "INSERT INTO mysql_query_rules (rule_id, active, digest, destination_hostgroup, apply, comment) VALUES (2, 1, '$DA', 30, 1, 'shoal-ha')
INSERT INTO mysql_query_rules (rule_id, active, digest, destination_hostgroup, apply, comment) VALUES (4, 1, '$DU', 30, 1, 'shoal-ha')
LOAD MYSQL QUERY RULES TO RUNTIME
SAVE MYSQL QUERY RULES TO DISK" "advise --apply: routes the two best digests, loads, saves"
is "$(px "SELECT digest FROM runtime_mysql_query_rules WHERE comment='shoal-ha' ORDER BY rule_id" | tr '\n' ' ')" "$DA $DU " \
  "advise --apply: the runtime has them"
agent advise --proxysql-admin "$DSN" --nodes "$NODES" --top 2 --apply
like "$(grep -E '^[0-9]+ ' <<<"$out" | awk '{print $2, $6}' | tr '\n' ' ')" "$DA routed $DU routed $DB route $DC route" \
  "advise again: the routed ones are marked, the next best is chosen"
sent >/dev/null

# ------------------------------------------------------------ errors
dead=$(free_port)
agent register --proxysql-admin "mysql://admin:admin@127.0.0.1:$dead" --nodes "$NODES"
is "$rc" 3 "ProxySQL down: exit 3"
like "$err" "no ProxySQL admin reachable: cannot connect to admin@127.0.0.1:$dead" "  clear message"
agent route --proxysql-admin "mysql://admin:wrong@127.0.0.1:$pxport" "$D1"
is "$rc" 3 "wrong admin password: exit 3"
like "$err" "Access denied for user 'admin'" "  with ProxySQL's message"
unlike "$err" "wrong" "  the password is not printed"
agent route --proxysql-admin "admin:admin@127.0.0.1:$pxport" "$D1"
is "$rc" 2 "bad DSN: exit 2"
like "$err" "bad DSN 'admin:admin@127.0.0.1:$pxport': expected mysql://user:password@host:port" "  clear message"
agent route --proxysql-admin "mysql://admin:admin@127.0.0.1:99999" "$D1"
is "$rc" 2 "DSN with a bad port: exit 2"
agent route --proxysql-admin "mysql://admin:admin@127.0.0.1:$dead,$DSN" "$D1"
is "$rc" 0 "cluster: the first admin is down, the second one is used"
like "$out" "added: rule .* on ProxySQL admin@127.0.0.1:$pxport|on ProxySQL admin@127.0.0.1:$pxport" "  and named"
like "$err" "warning: ProxySQL admin cannot connect to admin@127.0.0.1:$dead" "  the failed one is logged"
agent route --proxysql-admin "$DSN" 0x12345678901234567 bogus
is "$rc" 2 "bad digest: exit 2"
like "$err" "bad digest '0x12345678901234567'" "  names it"
agent frobnicate
is "$rc" 2 "unknown command: exit 2"
agent register --proxysql-admin "$DSN" --nodes "127.0.0.1:3307:x"
is "$rc" 2 "bad node address: exit 2"
like "$err" "bad node address '127.0.0.1:3307:x'" "  names it"
: >"$pxlog"
agent advise --proxysql-admin "$DSN" --nodes "$NODES,127.0.0.1:$dead:$dead:$dead" --apply
is "$rc" 4 "advise with a node down: exit 4"
like "$err" "node 127.0.0.1:$dead unreachable: cannot connect to admin port 127.0.0.1:$dead" "  names the node"
like "$err" "nothing applied" "  and applies nothing"
is "$(sent | grep -cE '^(INSERT|LOAD)')" 0 "  (no INSERT or LOAD sent)"
agent --help
like "$out" "--flat-window-ms MS" "--help lists the settings"
like "$out" "env SHOAL_HA_NODES, file key nodes" "  with their env and file names"

done_testing
