#!/usr/bin/python3
"""netns_session.py HOST PORT CMDFILE OUTFILE: one MySQL session held open
for 93-ha-netns.t, driven by the test across a network cut.

Logs in as app/pw (db shoaltest) and writes "login ok" (or the error) to
OUTFILE. Then it follows CMDFILE: each new line is a query; its outcome is
appended to OUTFILE as one line: "rs <cells|...>", "ok", "err <code> <msg>",
"lost <why>" or "timeout". The line "quit" ends it. A query waits at most
--timeout seconds (default 8) for its answer.
"""
import socket
import sys
import time

import rawmysql as r
from ha_help import query


def out(path, line):
    with open(path, "a") as f:
        f.write(line.replace("\n", " ") + "\n")


def main():
    host, port, cmdfile, outfile = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    timeout = float(sys.argv[5]) if len(sys.argv) > 5 else 8.0
    try:
        c = r.Conn(host, port, timeout=timeout)
        res = c.login("app", "pw", db="shoaltest")
    except (OSError, EOFError, r.ProtocolError) as e:
        out(outfile, "login lost %r" % (e,))
        return
    if res[0] != "ok":
        out(outfile, "login err %s %s" % (res[1], res[3]))
        return
    out(outfile, "login ok")
    done = 0
    end = time.time() + 300
    while time.time() < end:
        try:
            with open(cmdfile) as f:
                cmds = [l.rstrip("\n") for l in f if l.strip()]
        except OSError:
            cmds = []
        for sql in cmds[done:]:
            done += 1
            if sql == "quit":
                c.close()
                return
            try:
                res = query(c, sql)
            except socket.timeout:
                out(outfile, "timeout")
                continue
            except (OSError, EOFError, r.ProtocolError) as e:
                out(outfile, "lost %r" % (e,))
                continue
            if res[0] == "rs":
                out(outfile, "rs " + "|".join(str(v) for row in res[2] for v in row))
            elif res[0] == "ok":
                out(outfile, "ok")
            else:
                out(outfile, "err %s %s" % (res[1], res[3]))
        time.sleep(0.05)


if __name__ == "__main__":
    main()
