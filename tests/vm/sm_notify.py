#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sm_notify.py - send one NSM SM_NOTIFY (XNFS 11: program 100024 v1,
procedure 6, stat_chge {mon_name, state}) over TCP, as a rebooted host's
sm-notify would, for the VM test `locking`.

sm_notify.py SERVER PORT MON_NAME STATE [SOURCE]

Exits 0 when the call is accepted with SUCCESS, 1 otherwise.
"""
import os
import socket
import struct
import sys


def xdr_string(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


def main():
    if len(sys.argv) not in (5, 6):
        print(__doc__, file=sys.stderr)
        return 2
    server, port, name, state = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    xid = struct.unpack(">I", os.urandom(4))[0]
    # call header: xid, CALL, rpcvers 2, prog, vers, proc, AUTH_NONE x2
    msg = struct.pack(">IIIIII", xid, 0, 2, 100024, 1, 6) + struct.pack(">IIII", 0, 0, 0, 0)
    msg += xdr_string(name) + struct.pack(">i", state)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(30)
    if len(sys.argv) == 6:
        s.bind((sys.argv[5], 0))
    s.connect((server, port))
    s.sendall(struct.pack(">I", 0x80000000 | len(msg)) + msg)
    data = b""
    while len(data) < 4 or len(data) < 4 + (struct.unpack(">I", data[:4])[0] & 0x7fffffff):
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    if len(data) < 28:
        print("sm_notify: short reply", file=sys.stderr)
        return 1
    rxid, mtype, rstat, vflav, vlen = struct.unpack(">IIIII", data[4:24])
    astat = struct.unpack(">I", data[24 + vlen:28 + vlen])[0]
    ok = rxid == xid and mtype == 1 and rstat == 0 and astat == 0
    print(f"sm_notify: {name} state {state} -> {'accepted' if ok else 'refused'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
