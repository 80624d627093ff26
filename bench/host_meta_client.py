#!/usr/bin/env python3
"""bench/host-meta-prof.sh's client, NFSv3 over TCP (RFC 1813, RFC 5531 record
marking), hand-encoded XDR: per file CREATE(EXCLUSIVE), SETATTR,
GETATTR, LOOKUP, RENAME, REMOVE, like the bench's metadata mix as the Linux
client sends it. usage: host_meta_client.py NFSPORT MOUNTPORT EXPORT NFILES [PROCS]"""
import socket, struct, sys, os, time
xid = 0x1000
def p32(v): return struct.pack('>I', v)
def popq(b): n = len(b); return p32(n) + b + b'\0' * ((4 - n % 4) % 4)
def cred():
    body = p32(0) + popq(b'h') + p32(0) + p32(0) + p32(0)
    return p32(1) + popq(body) + p32(0) + p32(0)
class Conn:
    def __init__(s, port):
        s.s = socket.create_connection(('127.0.0.1', port)); s.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    def rx(s, n):
        b = b''
        while len(b) < n:
            c = s.s.recv(n - len(b))
            if not c: raise EOFError
            b += c
        return b
    def call(s, prog, vers, proc, args):
        global xid
        xid += 1
        m = p32(xid) + p32(0) + p32(2) + p32(prog) + p32(vers) + p32(proc) + cred() + args
        s.s.sendall(p32(0x80000000 | len(m)) + m)
        body = b''
        while True:
            mk, = struct.unpack('>I', s.rx(4)); body += s.rx(mk & 0x7fffffff)
            if mk & 0x80000000: break
        x, mt, rs = struct.unpack('>III', body[:12])
        assert x == xid and mt == 1 and rs == 0, body[:40]
        # verifier
        vl, = struct.unpack('>I', body[16:20]); off = 20 + ((vl + 3) & ~3)
        acc, = struct.unpack('>I', body[off:off+4]); assert acc == 0
        return body[off+4:]
def fh_of(b, off):
    n, = struct.unpack('>I', b[off:off+4]); return b[off+4:off+4+n]
def diropargs(fh, name): return popq(fh) + popq(name)
def main():
    port, mport, export, n = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode(), int(sys.argv[4])
    procs = sys.argv[5].split(',') if len(sys.argv) > 5 else ['create', 'setattr', 'getattr', 'lookup', 'rename', 'remove']
    m = Conn(mport); r = m.call(100005, 3, 1, popq(export))
    assert struct.unpack('>I', r[:4])[0] == 0; root = fh_of(r, 4)
    c = Conn(port)
    tag = os.getpid()
    t0 = time.time(); calls = 0
    sattr_none = p32(0) * 4 + p32(0) + p32(0)
    sattr_mode = p32(1) + p32(0o644) + p32(0) * 3 + p32(0) + p32(0)
    for i in range(n):
        a = b'f%d.%d' % (tag, i); b2 = b'g%d.%d' % (tag, i)
        r = c.call(100003, 3, 8, diropargs(root, a) + p32(2) + struct.pack('>Q', i + 1)); calls += 1
        st, = struct.unpack('>I', r[:4]); assert st == 0, st
        assert struct.unpack('>I', r[4:8])[0] == 1; fh = fh_of(r, 8)
        if 'setattr' in procs:
            r = c.call(100003, 3, 2, popq(fh) + sattr_mode + p32(0)); calls += 1; assert r[:4] == p32(0)
        if 'getattr' in procs:
            r = c.call(100003, 3, 1, popq(fh)); calls += 1; assert r[:4] == p32(0)
        if 'lookup' in procs:
            r = c.call(100003, 3, 3, diropargs(root, a)); calls += 1; assert r[:4] == p32(0)
        r = c.call(100003, 3, 14, diropargs(root, a) + diropargs(root, b2)); calls += 1; assert r[:4] == p32(0), r[:4]
        r = c.call(100003, 3, 12, diropargs(root, b2)); calls += 1; assert r[:4] == p32(0)
    dt = time.time() - t0
    print('%d calls in %.3f s: %.0f calls/s' % (calls, dt, calls / dt))
main()
