#!/usr/bin/env bash
# 87-multiplex-more: more of multiplexing (issue #5), with the first parts in
# 86-multiplex.t:
#   5. prepared statements (binary protocol) survive a KILL of their upstream
#      connection, COM_STMT_CLOSE and COM_RESET_CONNECTION clean up, ids stay
#      per session, every PREPARE is the server's own answer;
#   6. no head-of-line blocking: cache hits answered while SELECT SLEEP(2)
#      runs for another session on the same (only) worker;
#   7. 8000 authenticated idle client connections (tests/bench/loadgen.c -I)
#      on a pool of 16: all logged in, a new session still queries, the
#      upstream connections stay <= 16, the node logged its open file limit.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then
  skip_all "multiplexing is node-only (fake mode)"
fi

work="$BUILD_TEST/mux87"
mkdir -p "$work"
part() { [[ " ${MUX_PARTS:-5 6 7} " == *" $1 "* ]]; }
# checks per part: 5: node + 25 (87-multiplex-ps.py); 6: node + 7
# (87-multiplex-hol.py); 7: 9
n=0
part 5 && n=$((n + 26))
part 6 && n=$((n + 8))
part 7 && n=$((n + 9))
plan "$n"

mdb -e "
  CREATE OR REPLACE TABLE mux_ps (id INT PRIMARY KEY, v VARCHAR(16));
  INSERT INTO mux_ps VALUES (1,'a'),(2,'b'),(3,'c');"
on_exit "mdb -e 'DROP TABLE IF EXISTS mux_ps'"

# ------------------------------------------------------------ 5. prepared statements
if part 5; then
  hp=$(free_port)
  if shoal_start ps --workers 1 --max-upstream-connections 2 --metrics-address "127.0.0.1:$hp"; then
    ok "node starts: 1 worker, pool of 2 (port $ps_PORT)"
    PORT=$ps_PORT HPORT=$hp "$PY" "$TESTLIB/87-multiplex-ps.py" || not_ok "87-multiplex-ps.py crashed"
  else
    not_ok "node starts: 1 worker, pool of 2"
  fi
  shoal_stop ps
fi

# ------------------------------------------------------------ 6. head-of-line blocking
if part 6; then
  hp=$(free_port)
  if shoal_start hol --workers 1 --max-upstream-connections 4 --auto-cache --cache-ttl-ms 600000 \
    --metrics-address "127.0.0.1:$hp"; then
    ok "node starts: 1 worker, auto-cache (port $hol_PORT)"
    PORT=$hol_PORT HPORT=$hp "$PY" "$TESTLIB/87-multiplex-hol.py" || not_ok "87-multiplex-hol.py crashed"
  else
    not_ok "node starts: 1 worker, auto-cache"
  fi
  shoal_stop hol
fi

# ------------------------------------------------------------ 7. 8000 clients
metric() { # port name
  "$PY" -c 'import sys; from mux_help import metric; print(metric(int(sys.argv[1]), sys.argv[2]))' "$1" "$2"
}
if part 7; then
  N=8000
  # this shell (and so loadgen) needs N descriptors and more; root may raise it
  hard=$(ulimit -Hn)
  [ "$hard" = unlimited ] || [ "$hard" -ge $((N + 200)) ] || ulimit -Hn $((N + 1000)) 2>/dev/null
  ulimit -n "$(ulimit -Hn)" 2>/dev/null
  diag "open file limit of the test shell: $(ulimit -n)"
  lg="$BUILD_TEST/loadgen"
  if cc -O2 -Wall -Wextra -Werror "$SRCDIR/tests/bench/loadgen.c" -o "$lg" -lcrypto -lpthread 2>"$work/cc.log"; then
    ok "loadgen builds"
  else
    not_ok "loadgen builds"; diag_file "$work/cc.log"
  fi
  hp=$(free_port)
  if shoal_start many --workers 2 --max-upstream-connections 16 --max-client-connections 10000 \
    --metrics-address "127.0.0.1:$hp"; then
    ok "node starts: 2 workers, pool of 16 (port $many_PORT)"
    like "$(grep -iE 'open file' "$many_LOG")" "open file.*[0-9]+" "the node logged its open file limit"
    nofile=$(sed -nE 's/.*open file[^0-9]*([0-9]+).*/\1/p' "$many_LOG" | tail -n1)
    check "... enough for $N clients ($nofile)" test "${nofile:-0}" -gt "$N"
    "$lg" -P "$many_PORT" -u app -p pw -D shoaltest -c $N -t 2 -I -d 4 -C 90 >"$work/loadgen.out" 2>"$work/loadgen.err" &
    lgpid=$!
    on_exit "is_pid $lgpid && kill $lgpid"
    reached=0
    for ((i = 0; i < 900; i++)); do
      cc_now=$(metric "$hp" shoal_client_connections)
      [ "$cc_now" -ge $N ] && { reached=1; break; }
      kill -0 $lgpid 2>/dev/null || break
      sleep 0.1
    done
    check "$N client connections open at once (shoal_client_connections $cc_now)" test $reached = 1
    if [ $reached = 1 ]; then
      out=$(via_to many -N -e "SELECT v FROM mux_ps WHERE id = 2; SELECT COUNT(*) FROM mux_ps" 2>&1)
      is "$out" "b"$'\n'"3" "a new session queries while $N clients are connected"
      uc=$(metric "$hp" shoal_upstream_connections); pk=$(metric "$hp" shoal_upstream_connections_peak)
      check "upstream connections $uc, peak $pk: <= 16 with $N clients" test "$uc" -le 16 -a "$pk" -le 16 -a "$pk" -ge 1
    else
      skip "a new session queries while $N clients are connected" "not reached"
      skip "upstream connections <= 16" "not reached"
    fi
    wait $lgpid
    lrc=$?
    res=$(cat "$work/loadgen.out")
    diag "loadgen: $res"
    [ -s "$work/loadgen.err" ] && diag_file "$work/loadgen.err" 10
    est=$(sed -nE 's/.* established=([0-9]+).*/\1/p' <<<"$res")
    errs=$(sed -nE 's/.* errors=([0-9]+).*/\1/p' <<<"$res")
    check "loadgen: all $N connections logged in (established ${est:-?}, errors ${errs:-?}, exit $lrc)" \
      test "${est:-0}" = $N -a "${errs:-1}" = 0 -a $lrc = 0
    check "the node still runs" shoal_alive many
    grep -E 'ERROR|WARN' "$many_LOG" | sort | uniq -c | sort -rn | head -n 5 | sed 's/^/#   /'
  else
    not_ok "node starts: 2 workers, pool of 16"
  fi
  shoal_stop many
fi

done_testing
