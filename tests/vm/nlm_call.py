#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""nlm_call.py - send one NLM v4 call (program 100021 v4, XNFS chapter 10)
over TCP from a chosen source address, as another host's lock manager
would, for the VM test `hostile-peers`.

nlm_call.py SERVER PORT SOURCE PROC CALLER [FHFILE KIND START LEN [UID]]

PROC: test, lock, unlock or free_all.  CALLER: the caller_name (FREE_ALL:
the host to free).  FHFILE: the file handle in hex (vm-nfs3-fh save).
KIND: r or w.  START, LEN: the byte range.  UID: the AUTH_SYS uid and gid
(default 0).  The lock owner is svid 4242, owner handle "4242@CALLER".

Prints the nlm4_stats number of the answer (0 granted, 1 denied, 9
failed, ...), or "void" for FREE_ALL; exits 0 when the call was answered
SUCCESS, 1 otherwise.
"""
import os
import socket
import struct
import sys

PROCS = {"test": 1, "lock": 2, "unlock": 4, "free_all": 23}


def xdr_opaque(b):
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


def xdr_string(s):
    return xdr_opaque(s.encode())


def auth_sys(uid):
    body = struct.pack(">I", 0) + xdr_string("nlm-call") + struct.pack(">III", uid, uid, 0)
    return struct.pack(">I", 1) + xdr_opaque(body)


def main():
    a = sys.argv[1:]
    if len(a) not in (5, 9, 10) or a[3] not in PROCS:
        print(__doc__, file=sys.stderr)
        return 2
    server, port, source, pname, caller = a[0], int(a[1]), a[2], a[3], a[4]
    proc = PROCS[pname]
    uid = int(a[9]) if len(a) == 10 else 0
    cookie = xdr_opaque(b"hp33")
    if proc == 23:
        args = xdr_string(caller) + struct.pack(">i", 1)
    else:
        if len(a) < 9:
            print(__doc__, file=sys.stderr)
            return 2
        fh = bytes.fromhex(open(a[5]).read().strip())
        excl = 1 if a[6] == "w" else 0
        lock = (xdr_string(caller) + xdr_opaque(fh) + xdr_opaque(f"4242@{caller}".encode()) +
                struct.pack(">iQQ", 4242, int(a[7]), int(a[8])))
        if proc == 1:    # nlm4_testargs
            args = cookie + struct.pack(">I", excl) + lock
        elif proc == 2:  # nlm4_lockargs: no block, no reclaim, state 1
            args = cookie + struct.pack(">II", 0, excl) + lock + struct.pack(">Ii", 0, 1)
        else:            # nlm4_unlockargs
            args = cookie + lock
    xid = struct.unpack(">I", os.urandom(4))[0]
    msg = struct.pack(">IIIIII", xid, 0, 2, 100021, 4, proc) + auth_sys(uid) + struct.pack(">II", 0, 0)
    msg += args
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(30)
    s.bind((source, 0))
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
        print("nlm_call: short reply", file=sys.stderr)
        return 1
    rxid, mtype, rstat, vflav, vlen = struct.unpack(">IIIII", data[4:24])
    if rxid != xid or mtype != 1 or rstat != 0:
        print(f"nlm_call: {pname}: call rejected (reply_stat {rstat})", file=sys.stderr)
        return 1
    off = 24 + vlen
    astat = struct.unpack(">I", data[off:off + 4])[0]
    if astat != 0:
        print(f"nlm_call: {pname}: accept_stat {astat}", file=sys.stderr)
        return 1
    off += 4
    if proc == 23:
        print("void")
        return 0
    clen = struct.unpack(">I", data[off:off + 4])[0]
    off += 4 + clen + (-clen % 4)
    print(struct.unpack(">I", data[off:off + 4])[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
