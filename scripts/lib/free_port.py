#!/usr/bin/env python3
"""free_port.py: a TCP port on 127.0.0.1 that nothing listens on, for a
server the tests or scripts start next.

Picked below the kernel's ephemeral range (ip_local_port_range, 32768 and up
on Debian), never from it: between this pick and the server's bind, any
outgoing connection on the machine (a client, a load generator, ProxySQL's
monitor) may be given a port of the ephemeral range as its source port, and
the bind then fails with "Address already in use". A port below the range
is only ever taken by a bind. Falls back to a port the kernel picks when
the range leaves too little room below it.

Within one process, and across the processes that share SHOAL_PORTS_FILE
(a test script and the helpers it runs: tests/integration/lib.sh sets it),
a port is handed out once: two servers whose ports are picked before either
binds (a test that sets up nodes and ProxySQL
instances, then starts them) never get the same one. (They did: a
ProxySQL's client port was also a node's admin port, the node bound it
first, and the test's client, connecting to "ProxySQL", got the node
admin's ERROR 1049 Unknown database.)

Run as a script it prints the port; PREFERRED, when given and free, wins.
"""
import fcntl
import os
import random
import socket
import sys

LOWEST = 10000
_handed_out = set()   # this process's picks


def bindable(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _shared_picks(add=None):
    """The ports SHOAL_PORTS_FILE lists (and add appended to it), under a lock."""
    path = os.environ.get("SHOAL_PORTS_FILE")
    if not path:
        return set()
    try:
        with open(path, "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0)
            seen = {int(x) for x in f.read().split() if x.isdigit()}
            if add is not None:
                f.write("%d\n" % add)
            return seen
    except OSError:
        return set()


def free_port():
    port = _pick(_handed_out | _shared_picks())
    _handed_out.add(port)
    _shared_picks(port)
    return port


def _pick(avoid):
    high = ephemeral_low()
    if high - LOWEST >= 1000:
        rnd = random.SystemRandom()
        for _ in range(500):
            port = rnd.randrange(LOWEST, high)
            if port not in avoid and bindable(port):
                return port
    for _ in range(100):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        if port not in avoid:
            break
    return port


if __name__ == "__main__":
    want = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 0
    if want and want not in _shared_picks() and bindable(want):
        _shared_picks(want)
        print(want)
    else:
        print(free_port())
