#!/usr/bin/env python3
"""break_relay.py PORT_FILE TARGET_PORT FLAG_FILE LOG_FILE: a TCP relay
between the node and MariaDB for tests. While FLAG_FILE exists, the first
bytes the node sends on a connection older than half a second (a command
on a pooled connection, not a handshake) are not forwarded: the relay
removes FLAG_FILE, resets both sides (RST) and appends "broken" to LOG_FILE.
Everything else is copied both ways unchanged. It listens on a port of
its own choosing on 127.0.0.1 and writes it to PORT_FILE once listening.
When FLAG_FILE says "partition", the relay closes its listening socket
before the reset, so that the node's next connect is refused: the
upstream is gone, and the node learns it only from that command."""
import os
import socket
import struct
import sys
import threading
import time

port_file, target_port, flag, log = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
lock = threading.Lock()
ls = socket.socket()


def reset(*socks):
    for s in socks:
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        except OSError:
            pass


def pump(src, dst, from_node, born):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if from_node and time.time() - born > 0.5:
                with lock:
                    hit = os.path.exists(flag)
                    if hit:
                        with open(flag) as f:
                            partition = f.read().strip() == "partition"
                        os.unlink(flag)
                        if partition:  # shutdown wakes the blocked accept()
                            ls.shutdown(socket.SHUT_RDWR)
                            ls.close()
                if hit:
                    with open(log, "a") as f:
                        f.write("broken\n")
                    reset(src, dst)
                    return
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(64)
with open(port_file + ".tmp", "w") as f:
    f.write("%d\n" % ls.getsockname()[1])
os.rename(port_file + ".tmp", port_file)
while True:
    try:
        c, _ = ls.accept()
    except OSError:  # closed for a partition: stay until killed
        while True:
            time.sleep(60)
    try:
        u = socket.create_connection(("127.0.0.1", target_port))
    except OSError:
        c.close()
        continue
    born = time.time()
    threading.Thread(target=pump, args=(c, u, True, born), daemon=True).start()
    threading.Thread(target=pump, args=(u, c, False, born), daemon=True).start()
