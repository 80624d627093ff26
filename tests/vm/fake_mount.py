#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# fake_mount.py ADDR PORT MODE READY: a MOUNT v3 server on TCP ADDR:PORT
# for the client tools' messages (client-vs-rpcrdma-nfsd).  MODE silent:
# accept, read, never answer; MODE answer: every call (RFC 5531 record
# marking) is answered SUCCESS, MNT (procedure 1, RFC 1813 5.2.1) with
# mountres3 MNT3_OK, a 4-byte handle and AUTH_SYS, others with no result.
# READY is created once the socket listens.
import socket
import struct
import sys

addr, port, mode, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, port))
s.listen(8)
open(ready, "w").close()
held = []


def read_full(c, n):
    b = b""
    while len(b) < n:
        part = c.recv(n - len(b))
        if not part:
            return None
        b += part
    return b


while True:
    c, _ = s.accept()
    if mode == "silent":
        held.append(c)
        continue
    while True:
        mark = read_full(c, 4)
        if mark is None:
            break
        call = read_full(c, struct.unpack(">I", mark)[0] & 0x7FFFFFFF)
        if call is None or len(call) < 24:
            break
        proc = struct.unpack(">I", call[20:24])[0]
        # xid; REPLY, MSG_ACCEPTED, verifier AUTH_NONE (flavor, length), SUCCESS
        rep = call[:4] + struct.pack(">IIIII", 1, 0, 0, 0, 0)
        if proc == 1:
            rep += struct.pack(">IIIII", 0, 4, 0xF00DCAFE, 1, 1)
        c.sendall(struct.pack(">I", 0x80000000 | len(rep)) + rep)
    c.close()
