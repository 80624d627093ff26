#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""posix-ops.py - one script of file-system operations for the VM test
`posix-diff`, run the same way on a mount of two NFS servers and compared.

posix-ops.py setup DIR USER     (as root, on the server's own file system)
    make DIR/USER with the fixtures of USER's run: files of several modes
    owned by USER and by another user, a directory USER may not write, a
    sticky directory, a set-group-id directory, set-id files.
posix-ops.py run MNT USER       (as root; drops to USER itself)
    run the operations in MNT/USER (MNT/USER is DIR/USER through the mount)
    as USER and print one line per operation: its result ("ok", "ok VALUE"
    or the errno name) and, for every path it concerns and its parent
    directory, afterwards: type, mode, uid, gid, link count, size (regular
    files) and whether ctime and mtime changed.

USER: root (0:0), u1 (1001:1001, also in group 1003), u2 (1002:1002).  The
"other" user whose files USER meets is u1 for root and u2, u2 for u1.
Group 4000 is nobody's.  The process umask is 0, so each mode asked for
reaches the server as given.
"""
import errno
import os
import socket
import stat
import sys
import time

USERS = {"root": (0, 0, [0]), "u1": (1001, 1001, [1001, 1003]),
         "u2": (1002, 1002, [1002])}
OTHER = {"root": "u1", "u1": "u2", "u2": "u1"}
SUPP = {"root": 4000, "u1": 1003, "u2": 1002}  # a group USER may chgrp to
FOREIGN_GID = 4000
MODES = [0o000, 0o200, 0o400, 0o444, 0o600, 0o644, 0o666]


def setup(top, user):
    uid, gid, _ = USERS[user]
    ouid, ogid, _ = USERS[OTHER[user]]
    d = os.path.join(top, user)
    os.mkdir(d)
    os.chmod(d, 0o755)

    def mk(name, mode, u, g, data=b"data"):
        p = os.path.join(d, name)
        with open(p, "wb") as f:
            f.write(data)
        os.chown(p, u, g)
        os.chmod(p, mode)

    def mkd(name, mode, u, g):
        p = os.path.join(d, name)
        os.mkdir(p)
        os.chown(p, u, g)
        os.chmod(p, mode)

    for m in MODES:
        mk("own-%03o" % m, m, uid, gid)
        mk("oth-%03o" % m, m, ouid, ogid)
    for n in ("suid-own", "suid-trunc", "suid-chown", "suid-chgrp"):
        mk(n, 0o6755, uid, gid)
    mk("suid-oth", 0o6777, ouid, ogid)
    mk("sgid-noexec", 0o2666, ouid, ogid)
    mk("sgid-foreign", 0o644, uid, FOREIGN_GID)
    mk("times-own", 0o644, uid, gid)
    mk("suid-oth-trunc", 0o6777, ouid, ogid)
    mk("sgid-gx", 0o2777, ouid, ogid)
    mk("grp-060", 0o060, ouid, 1003)
    mkd("dir-0555", 0o555, uid, gid)
    mkd("dir-0600", 0o700, uid, gid)
    mk("dir-0600/f", 0o644, uid, gid)
    os.chmod(os.path.join(d, "dir-0600"), 0o600)
    mkd("odir", 0o755, ouid, ogid)
    mk("odir/f", 0o666, ouid, ogid)
    mkd("sticky", 0o1777, 0, 0)
    for n in ("s-oth", "s-oth2", "s-oth3"):
        mk("sticky/" + n, 0o666, ouid, ogid)
    for n in ("s-own", "s-own2"):
        mk("sticky/" + n, 0o644, uid, gid)
    mkd("sticky/s-oth-d", 0o777, ouid, ogid)
    mkd("g", 0o2777, 0, FOREIGN_GID)
    os.chown(d, uid, gid)


def describe(p):
    try:
        st = os.lstat(p)
    except OSError as e:
        return None, errno.errorcode[e.errno]
    t = stat.S_IFMT(st.st_mode)
    kind = {stat.S_IFREG: "f", stat.S_IFDIR: "d", stat.S_IFLNK: "l",
            stat.S_IFIFO: "p", stat.S_IFCHR: "c", stat.S_IFBLK: "b",
            stat.S_IFSOCK: "s"}.get(t, "?")
    s = "%s %04o %d:%d n%d" % (kind, stat.S_IMODE(st.st_mode), st.st_uid,
                               st.st_gid, st.st_nlink)
    if kind == "f":
        s += " s%d" % st.st_size
    if kind in "cb":
        s += " %d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    return st, s


class Runner:
    def __init__(self, user):
        self.user = user
        self.n = 0

    def op(self, label, fn, *paths):
        """run fn(), describe paths (and their parents) before and after."""
        allp = set()
        for p in paths:
            allp.add(p)
            allp.add(os.path.dirname(p) or ".")
        allp = sorted(allp)
        pre = {p: describe(p)[0] for p in allp}
        # a new timestamp even where the file system takes the coarse clock
        # (one tick: 4 ms at HZ=250; Linux 6.12 tmpfs has no fine-grained
        # timestamps)
        time.sleep(0.005)
        try:
            r = fn()
            res = "ok" if r is None else "ok %s" % (r,)
        except OSError as e:
            res = errno.errorcode.get(e.errno, str(e.errno))
        out = ["%s %03d %s: %s" % (self.user, self.n, label, res)]
        self.n += 1
        for p in allp:
            st, s = describe(p)
            b = pre[p]
            if st is not None and b is not None and b.st_ino == st.st_ino:
                s += " c%s m%s" % ("+" if st.st_ctime_ns != b.st_ctime_ns else "-",
                                   "+" if st.st_mtime_ns != b.st_mtime_ns else "-")
            out.append("%s=%s" % (p, s))
        print(" | ".join(out), flush=True)


def open_close(p, flags, mode=0o644, data=None):
    def f():
        fd = os.open(p, flags, mode)
        try:
            if data is not None:
                return os.write(fd, data)
        finally:
            os.close(fd)
    return f


def open_at_write(p, off):
    def f():
        fd = os.open(p, os.O_WRONLY)
        try:
            return os.pwrite(fd, b"z", off)
        finally:
            os.close(fd)
    return f


def call(fn, *a):
    return lambda: fn(*a)


def rename_noop(a, b):
    return lambda: os.rename(a, b)


def write_after_chmod(p):
    def f():
        fd = os.open(p, os.O_CREAT | os.O_RDWR | os.O_EXCL, 0o644)
        try:
            os.fchmod(fd, 0o444)
            n = os.write(fd, b"still mine")
            os.ftruncate(fd, 3)
            return n
        finally:
            os.close(fd)
    return f


def bind_socket(p):
    def f():
        s = socket.socket(socket.AF_UNIX)
        try:
            s.bind(p)
        finally:
            s.close()
    return f


def run(mnt, user):
    uid, gid, groups = USERS[user if user in USERS else "root"]
    me = user
    os.chdir(os.path.join(mnt, user if user in USERS else "root"))
    if user in USERS:
        os.setgroups(groups)
        os.setgid(gid)
        os.setuid(uid)
    os.umask(0)
    R = Runner(me)
    op = R.op
    O = os

    # ---- open: every access mode, with O_TRUNC and O_APPEND, on files of
    # several modes owned by the caller and by another user
    flagsets = [("r", O.O_RDONLY), ("w", O.O_WRONLY), ("rw", O.O_RDWR),
                ("w-trunc", O.O_WRONLY | O.O_TRUNC),
                ("rw-trunc", O.O_RDWR | O.O_TRUNC),
                ("w-append", O.O_WRONLY | O.O_APPEND)]
    for who in ("own", "oth"):
        for m in MODES:
            p = "%s-%03o" % (who, m)
            for fname, fl in flagsets:
                data = b"+" if fl & O.O_APPEND else None
                op("open %s %s" % (p, fname), open_close(p, fl, data=data), p)

    # ---- access(2) (the client asks the server: ACCESS)
    for who in ("own", "oth"):
        for m in MODES:
            p = "%s-%03o" % (who, m)
            op("access %s" % p, lambda p=p: "".join(
                c if O.access(p, b) else "-"
                for c, b in (("r", O.R_OK), ("w", O.W_OK), ("x", O.X_OK))), p)
    for p in ("suid-own", "odir", "sticky", "dir-0555", "dir-0600", "grp-060"):
        op("access %s" % p, lambda p=p: "".join(
            c if O.access(p, b) else "-"
            for c, b in (("r", O.R_OK), ("w", O.W_OK), ("x", O.X_OK))), p)

    # ---- creation
    CR = O.O_CREAT | O.O_WRONLY
    op("creat 0666 c1", open_close("c1", CR, 0o666, b"abc"), "c1")
    op("creat excl 0644 c2", open_close("c2", CR | O.O_EXCL, 0o644), "c2")
    op("creat excl existing c2", open_close("c2", CR | O.O_EXCL, 0o644), "c2")
    op("creat trunc existing c1", open_close("c1", CR | O.O_TRUNC, 0o600), "c1")
    op("creat existing c1 mode ignored", open_close("c1", CR, 0o777), "c1")
    op("creat 0000 c0", open_close("c0", CR, 0o000), "c0")
    op("creat excl 04755 c3", open_close("c3", CR | O.O_EXCL, 0o4755), "c3")
    op("creat excl 02755 c4", open_close("c4", CR | O.O_EXCL, 0o2755), "c4")
    op("creat excl 01644 c5", open_close("c5", CR | O.O_EXCL, 0o1644), "c5")
    op("creat rdonly 0444 c6", open_close("c6", O.O_CREAT | O.O_RDWR, 0o444, b"x"), "c6")
    op("creat in odir", open_close("odir/new", CR, 0o644), "odir/new")
    op("creat excl in odir", open_close("odir/new", CR | O.O_EXCL, 0o644), "odir/new")
    op("creat existing in odir", open_close("odir/f", CR, 0o644), "odir/f")
    op("creat excl existing other's", open_close("oth-666", CR | O.O_EXCL), "oth-666")
    op("creat other's 0666", open_close("oth-666", CR, 0o600, b"o"), "oth-666")
    op("creat other's 0644", open_close("oth-644", CR, 0o600), "oth-644")
    op("creat dir", open_close("odir", CR, 0o644), "odir")
    op("symlink dangling", call(O.symlink, "nowhere", "dl"), "dl")
    op("creat excl over symlink", open_close("dl", CR | O.O_EXCL), "dl")
    op("creat in sgid dir", open_close("g/c7", CR | O.O_EXCL, 0o2755), "g/c7")
    op("creat in sticky", open_close("sticky/c8", CR | O.O_EXCL, 0o666), "sticky/c8")
    op("write after fchmod 0444", write_after_chmod("ov"), "ov")

    # ---- mkdir / rmdir
    op("mkdir 0777 d1", call(O.mkdir, "d1", 0o777), "d1")
    op("mkdir 0700 d2", call(O.mkdir, "d2", 0o700), "d2")
    op("mkdir 02755 d3", call(O.mkdir, "d3", 0o2755), "d3")
    op("mkdir 01777 d5", call(O.mkdir, "d5", 0o1777), "d5")
    op("mkdir existing", call(O.mkdir, "d1", 0o755), "d1")
    op("mkdir over file", call(O.mkdir, "c1", 0o755), "c1")
    op("mkdir in odir", call(O.mkdir, "odir/x", 0o755), "odir/x")
    op("mkdir in sgid dir", call(O.mkdir, "g/d", 0o755), "g/d")
    op("mkdir sub", call(O.mkdir, "d1/sub", 0o755), "d1/sub")
    op("rmdir non-empty", call(O.rmdir, "d1"), "d1")
    op("rmdir sub", call(O.rmdir, "d1/sub"), "d1/sub")
    op("rmdir d1", call(O.rmdir, "d1"), "d1")
    op("rmdir missing", call(O.rmdir, "nosuch"), "nosuch")
    op("rmdir file", call(O.rmdir, "own-644"), "own-644")
    op("rmdir other's non-empty", call(O.rmdir, "odir"), "odir")
    op("rmdir other's in sticky", call(O.rmdir, "sticky/s-oth-d"), "sticky/s-oth-d")
    op("rmdir dot", call(O.rmdir, "d5/."), "d5")

    # ---- unlink
    op("unlink c0", call(O.unlink, "c0"), "c0")
    op("unlink dir", call(O.unlink, "d2"), "d2")
    op("unlink missing", call(O.unlink, "nosuch"), "nosuch")
    op("unlink other's in sticky", call(O.unlink, "sticky/s-oth"), "sticky/s-oth")
    op("unlink own in sticky", call(O.unlink, "sticky/s-own"), "sticky/s-own")
    op("unlink in odir", call(O.unlink, "odir/f"), "odir/f")

    # ---- link
    op("link own", call(O.link, "own-644", "l1"), "own-644", "l1")
    op("link again", call(O.link, "l1", "l2"), "own-644", "l2")
    op("link dir", call(O.link, "d3", "l3"), "d3", "l3")
    op("link existing name", call(O.link, "own-644", "l1"), "own-644")
    op("link other's 0600", call(O.link, "oth-600", "l4"), "oth-600", "l4")
    op("link other's 0666", call(O.link, "oth-666", "l5"), "oth-666", "l5")
    op("link into odir", call(O.link, "own-644", "odir/l"), "own-644", "odir/l")
    op("link missing", call(O.link, "nosuch", "l6"), "l6")
    op("link symlink", call(O.link, "dl", "l7"), "dl", "l7")
    op("unlink a link", call(O.unlink, "l2"), "own-644", "l2")

    # ---- symlink
    op("symlink", call(O.symlink, "own-644", "s1"), "s1")
    op("symlink existing", call(O.symlink, "x", "s1"), "s1")
    op("symlink in odir", call(O.symlink, "x", "odir/s"), "odir/s")
    op("readlink", call(O.readlink, "s1"), "s1")

    # ---- rename
    op("rename onto own hard link", call(O.rename, "l1", "own-644"), "l1", "own-644")
    op("rename file over file", call(O.rename, "c1", "c2"), "c1", "c2")
    op("rename file over dir", call(O.rename, "c2", "d3"), "c2", "d3")
    op("rename dir over file", call(O.rename, "d3", "c2"), "d3", "c2")
    op("mkdir d4", call(O.mkdir, "d4", 0o755), "d4")
    op("mkdir d4/x", call(O.mkdir, "d4/x", 0o755), "d4/x")
    op("rename dir over empty dir", call(O.rename, "d5", "d3"), "d5", "d3")
    op("rename dir over non-empty dir", call(O.rename, "d3", "d4"), "d3", "d4")
    op("rename dir into itself", call(O.rename, "d4", "d4/x/y"), "d4", "d4/x/y")
    op("rename dir across dirs", call(O.rename, "d4/x", "dx"), "d4/x", "dx")
    op("rename to self", call(O.rename, "c2", "c2"), "c2")
    op("rename missing", call(O.rename, "nosuch", "c9"), "c9")
    op("rename other's in sticky", call(O.rename, "sticky/s-oth2", "sticky/r1"),
       "sticky/s-oth2", "sticky/r1")
    op("rename own over other's in sticky",
       call(O.rename, "sticky/s-own2", "sticky/s-oth3"), "sticky/s-own2", "sticky/s-oth3")
    op("rename into odir", call(O.rename, "c3", "odir/z"), "c3", "odir/z")
    op("rename out of odir", call(O.rename, "odir/f", "z"), "odir/f", "z")
    op("rename other's dir out of sticky", call(O.rename, "sticky/s-oth-d", "od2"),
       "sticky/s-oth-d", "od2")

    # ---- chmod
    op("chmod own 0755", call(O.chmod, "own-666", 0o755), "own-666")
    op("chmod other's", call(O.chmod, "oth-666", 0o777), "oth-666")
    op("chmod 04755", call(O.chmod, "own-600", 0o4755), "own-600")
    op("chmod 02755 own group", call(O.chmod, "c4", 0o2755), "c4")
    op("chmod 02755 foreign group", call(O.chmod, "sgid-foreign", 0o2755), "sgid-foreign")
    op("chmod 01755 file", call(O.chmod, "c5", 0o1755), "c5")
    op("chmod dir 0700", call(O.chmod, "dx", 0o700), "dx")
    op("chmod same mode", call(O.chmod, "c5", 0o1755), "c5")

    # ---- chown
    op("chown own to own group", call(O.chown, "c6", -1, SUPP[user] if user in SUPP else 4000), "c6")
    op("chown own to foreign group", call(O.chown, "c2", -1, 4001), "c2")
    op("chown own to other user", call(O.chown, "c2", 1002 if me != "u2" else 1001, -1), "c2")
    op("chown other's", call(O.chown, "oth-666", uid, -1), "oth-666")
    op("chown -1 -1", call(O.chown, "c2", -1, -1), "c2")
    op("chown same owner suid", call(O.chown, "suid-chown", uid, -1), "suid-chown")
    op("chgrp same group suid", call(O.chown, "suid-chgrp", -1, gid), "suid-chgrp")
    op("lchown symlink", call(O.lchown, "s1", -1, gid), "s1")

    # ---- set-id bits on write and truncate
    op("write own suid", open_close("suid-own", O.O_WRONLY, data=b"w"), "suid-own")
    op("write other's suid 06777", open_close("suid-oth", O.O_WRONLY, data=b"w"), "suid-oth")
    op("write sgid no group exec", open_close("sgid-noexec", O.O_WRONLY, data=b"w"), "sgid-noexec")
    op("truncate own suid", call(O.truncate, "suid-trunc", 1), "suid-trunc")

    op("open-trunc other's suid 06777", open_close("suid-oth-trunc", O.O_WRONLY | O.O_TRUNC),
       "suid-oth-trunc")
    op("write other's sgid group exec", open_close("sgid-gx", O.O_WRONLY, data=b"w"), "sgid-gx")

    # ---- group permissions (u1 is in group 1003) and directory modes
    op("open grp-060 r", open_close("grp-060", O.O_RDONLY), "grp-060")
    op("open grp-060 w", open_close("grp-060", O.O_WRONLY, data=b"g"), "grp-060")
    op("creat in 0555 dir", open_close("dir-0555/f", CR, 0o644), "dir-0555/f")
    op("mkdir in 0555 dir", call(O.mkdir, "dir-0555/d", 0o755), "dir-0555/d")
    op("open in 0600 dir", open_close("dir-0600/f", O.O_RDONLY), "dir-0600/f")
    op("list 0600 dir", lambda: len(O.listdir("dir-0600")), "dir-0600")
    op("chmod 0555 dir 0755", call(O.chmod, "dir-0555", 0o755), "dir-0555")
    op("creat in it now", open_close("dir-0555/f", CR, 0o644), "dir-0555/f")
    op("chmod 0600 dir 0700", call(O.chmod, "dir-0600", 0o700), "dir-0600")
    op("unlink in it now", call(O.unlink, "dir-0600/f"), "dir-0600/f")

    # ---- truncate
    op("truncate grow", call(O.truncate, "own-666", 10), "own-666")
    op("truncate shrink", call(O.truncate, "own-666", 2), "own-666")
    op("truncate same size", call(O.truncate, "own-666", 2), "own-666")
    op("truncate own 0444", call(O.truncate, "own-444", 1), "own-444")
    op("truncate other's 0644", call(O.truncate, "oth-644", 1), "oth-644")
    op("truncate other's 0666", call(O.truncate, "oth-666", 1), "oth-666")
    op("truncate dir", call(O.truncate, "dx", 0), "dx")
    op("truncate missing", call(O.truncate, "nosuch", 0), "nosuch")

    # ---- times
    op("utimes own", call(O.utime, "times-own", (1000000, 2000000)), "times-own")
    op("utimes own now", call(O.utime, "times-own", None), "times-own")
    op("utimes other's 0666 explicit", call(O.utime, "oth-666", (1, 2)), "oth-666")
    op("utimes other's 0666 now", call(O.utime, "oth-666", None), "oth-666")
    op("utimes other's 0644 now", call(O.utime, "oth-644", None), "oth-644")
    op("utimes dir", call(O.utime, "dx", (3, 4)), "dx")

    op("utimes ns", lambda: (O.utime("times-own", ns=(1500000001, 2500000002)),
                             O.lstat("times-own").st_atime_ns,
                             O.lstat("times-own").st_mtime_ns)[1:], "times-own")
    op("utimes before 1970", lambda: (O.utime("times-own", (-1, -86400)),
                                      O.lstat("times-own").st_mtime)[1], "times-own")

    # ---- sizes and odd modes
    op("truncate 2^40", call(O.truncate, "own-666", 1 << 40), "own-666")
    op("truncate 2^62", call(O.truncate, "own-666", 1 << 62), "own-666")
    op("pwrite at 2^41", open_at_write("own-600", 1 << 41), "own-600")
    op("creat excl 07777", open_close("c10", CR | O.O_EXCL, 0o7777), "c10")
    op("mkdir 07777", call(O.mkdir, "d10", 0o7777), "d10")
    op("mkdir 0000", call(O.mkdir, "d11", 0o000), "d11")
    op("creat in 0000 dir", open_close("d11/f", CR, 0o644), "d11/f")
    op("link then rename over it", lambda: (O.link("c10", "c11"), O.rename("c11", "c10")),
       "c10", "c11")
    op("rename file over other link", lambda: (O.link("c10", "c12"), O.rename("c5", "c12")),
       "c10", "c12", "c5")
    op("rename dir to other parent", call(O.rename, "d10", "dx/d10"), "d10", "dx/d10")

    # ---- special files
    op("mkfifo", call(O.mkfifo, "f1", 0o640), "f1")
    op("mkfifo existing", call(O.mkfifo, "f1", 0o640), "f1")
    op("mkfifo in odir", call(O.mkfifo, "odir/f2", 0o640), "odir/f2")
    op("mknod chr 1,3", call(O.mknod, "n1", stat.S_IFCHR | 0o666, O.makedev(1, 3)), "n1")
    op("mknod blk 7,0", call(O.mknod, "n2", stat.S_IFBLK | 0o600, O.makedev(7, 0)), "n2")
    op("mknod fifo", call(O.mknod, "n3", stat.S_IFIFO | 0o2644), "n3")
    op("socket", bind_socket("sock1"), "sock1")
    op("chmod fifo", call(O.chmod, "f1", 0o600), "f1")
    op("chown fifo group", call(O.chown, "f1", -1, SUPP[user] if user in SUPP else 4000), "f1")
    op("rename fifo over file", call(O.rename, "f1", "c6"), "f1", "c6")
    op("unlink fifo", call(O.unlink, "c6"), "c6")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("setup", "run"):
        print(__doc__, file=sys.stderr)
        return 2
    what, top, user = sys.argv[1:]
    if what == "setup":
        setup(top, user)
    else:
        run(top, user)
    return 0


if __name__ == "__main__":
    sys.exit(main())
