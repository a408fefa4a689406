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

Run as a script it prints the port; PREFERRED, when given and free, wins.
"""
import random
import socket
import sys

LOWEST = 10000


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


def free_port():
    high = ephemeral_low()
    if high - LOWEST >= 1000:
        rnd = random.SystemRandom()
        for _ in range(500):
            port = rnd.randrange(LOWEST, high)
            if bindable(port):
                return port
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] and bindable(int(sys.argv[1])):
        print(sys.argv[1])
    else:
        print(free_port())
