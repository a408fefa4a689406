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
upstream is gone, and the node learns it only from that command.
When FLAG_FILE says "refuse TEXT", the relay answers each COM_QUERY that
starts with TEXT itself, with ERR 1105 (HY000) "refused by the test relay",
and forwards nothing of it; the flag stays until the test removes it, and
each refusal appends "refused" to LOG_FILE."""
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


def refusal(data):
    """The ERR packet for a COM_QUERY the flag says to refuse, else None."""
    try:
        with open(flag) as f:
            words = f.read().strip().split(" ", 1)
    except FileNotFoundError:
        return None
    if len(words) != 2 or words[0] != "refuse" or len(data) < 5 or data[4] != 0x03:
        return None
    if not data[5:].decode("utf-8", "replace").startswith(words[1]):
        return None
    msg = b"refused by the test relay"
    body = b"\xff" + struct.pack("<H", 1105) + b"#HY000" + msg
    return struct.pack("<I", len(body))[:3] + b"\x01" + body


def pump(src, dst, from_node, born):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            err = refusal(data) if from_node else None
            if err:
                with open(log, "a") as f:
                    f.write("refused\n")
                src.sendall(err)
                continue
            if from_node and time.time() - born > 0.5:
                with lock:
                    try:
                        with open(flag) as f:
                            word = f.read().strip()
                    except FileNotFoundError:
                        word = None
                    hit = word is not None and not word.startswith("refuse ")
                    if hit:
                        partition = word == "partition"
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
