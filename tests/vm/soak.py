#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/vm/soak.py: the soak workload that tests/vm/soak.sh runs in the guest.

For DURATION seconds, concurrently:
  * kernel workers (one per kernel mount given with --kmount), each in its own
    directory under its mount: pwrite at random offsets with random sizes
    (1 B .. 4 MiB, log-uniform, so most are unaligned), reads (buffered and
    O_DIRECT), O_APPEND writes, truncates up and down, create, rename (also
    over an existing file), unlink, readdir; every read compared with a model
    held in memory, and every so often the server's backing file (in the
    export) compared with the model too;
  * one rpcrdma-nfs worker in /c of the export: put, get, cat, stat, ls, mv,
    rm, mkdir/rmdir, ln -s/readlink, with random transfer sizes and
    registration modes; files written through the kernel mount and fetched
    with get, files put and read back through the kernel mount with O_DIRECT;
  * a sampler: every --interval seconds the server's VmRSS/VmHWM
    (/proc/PID/status) and its pool gauges (SIGUSR1 JSON line in its log).

Every byte read is compared with the model.  The random choices come from a
seeded PRNG (--seed; each worker its own stream derived from it), printed at
the start.  Writes the time series (JSON lines) to --series, and a summary
(one JSON object) to --summary and as the last line of stdout.  Exit status:
0 when every check held, 1 on any mismatch or unexpected error, 3 when a
worker made no progress for --stall seconds (a hang).
"""

import argparse
import errno
import json
import mmap
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

MIB = 1 << 20
MAX_IO = 4 * MIB            # largest single write/read
MAX_FILE = 12 * MIB         # files are not grown past this
MAX_FILES = 8               # per worker directory
MAX_MISMATCH_DETAILS = 20


def log(msg):
    """One progress line on stdout, flushed (the console is the only log)."""
    print("soak: %s" % msg, flush=True)


def rand_size(rng, lo=1, hi=MAX_IO):
    """A size in [lo, hi], log-uniform, so small and odd sizes are common."""
    if rng.random() < 0.1:
        return rng.choice([lo, min(hi, 4095), min(hi, 4096), min(hi, 4097),
                           min(hi, 65535), min(hi, MIB + 1), hi])
    v = int(round(2 ** rng.uniform(0, 22)))
    return max(lo, min(hi, v))


def first_diff(a, b):
    """Offset of the first byte where a and b differ (or the shorter length)."""
    n = min(len(a), len(b))
    step = 4096
    for off in range(0, n, step):
        if a[off:off + step] != b[off:off + step]:
            for i in range(off, min(n, off + step)):
                if a[i] != b[i]:
                    return i
    return n


def pread_all(fd, n, off, direct):
    """Read up to n bytes at off (fewer at end of file); with direct, into a
    page-aligned buffer (O_DIRECT), offset and length left unaligned."""
    out = bytearray()
    if direct:
        m = mmap.mmap(-1, max(n, 1))
        try:
            while len(out) < n:
                k = os.preadv(fd, [memoryview(m)[:n - len(out)]], off + len(out))
                if k == 0:
                    break
                out += m[:k]
        finally:
            m.close()
    else:
        while len(out) < n:
            b = os.pread(fd, n - len(out), off + len(out))
            if not b:
                break
            out += b
    return bytes(out)


class Stats:
    """Counters shared by the workers (guarded by one lock)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.ops = {}
        self.bytes_written = 0
        self.bytes_read = 0
        self.bytes_verified = 0
        self.mismatches = 0
        self.errors = 0
        self.details = []

    def op(self, name, written=0, read=0, verified=0):
        with self.lock:
            self.ops[name] = self.ops.get(name, 0) + 1
            self.bytes_written += written
            self.bytes_read += read
            self.bytes_verified += verified

    def mismatch(self, detail):
        with self.lock:
            self.mismatches += 1
            if len(self.details) < MAX_MISMATCH_DETAILS:
                self.details.append(detail)
        log("MISMATCH: %s" % json.dumps(detail, sort_keys=True))

    def error(self, detail):
        with self.lock:
            self.errors += 1
            if len(self.details) < MAX_MISMATCH_DETAILS:
                self.details.append(detail)
        log("ERROR: %s" % json.dumps(detail, sort_keys=True))


class Worker(threading.Thread):
    """Base: a named thread with its own PRNG, a deadline and a heartbeat."""

    def __init__(self, name, seed, deadline, stats):
        super().__init__(name=name, daemon=True)
        self.rng = random.Random(seed)
        self.seed = seed
        self.deadline = deadline
        self.stats = stats
        self.beat = time.monotonic()
        self.current = "start"
        self.nops = 0
        self.failed = False

    def check(self, op, path, off, want, got):
        """Compare got with want (bytes read at off of path); count a mismatch."""
        if got == want:
            self.stats.op("verify", verified=len(want))
            return True
        d = first_diff(want, got)
        self.stats.mismatch({"worker": self.name, "seed": self.seed, "op_no": self.nops,
                             "op": op, "path": path, "offset": off,
                             "length": len(want), "got_length": len(got),
                             "first_diff_at": off + d,
                             "want_byte": want[d] if d < len(want) else None,
                             "got_byte": got[d] if d < len(got) else None})
        self.failed = True
        return False

    def run(self):
        try:
            while time.monotonic() < self.deadline and not self.failed:
                self.beat = time.monotonic()
                self.step()
                self.nops += 1
            self.current = "finish"
            self.beat = time.monotonic()
            self.finish()
        except Exception as e:  # any unexpected error fails the soak
            self.stats.error({"worker": self.name, "seed": self.seed, "op_no": self.nops,
                              "op": self.current, "error": repr(e)})
            self.failed = True
        self.current = "done"


class KernelWorker(Worker):
    """Random file I/O through a kernel NFS/RDMA mount, checked against a model."""

    def __init__(self, name, seed, deadline, stats, mnt, export, sub):
        super().__init__(name, seed, deadline, stats)
        self.dir = os.path.join(mnt, sub)
        self.sdir = os.path.join(export, sub)    # the server's backing directory
        self.model = {}                          # name -> bytearray
        self.serial = 0
        os.makedirs(self.dir, exist_ok=True)

    def newname(self):
        self.serial += 1
        return "f%05d" % self.serial

    def pick(self):
        return self.rng.choice(sorted(self.model)) if self.model else None

    def data(self, n):
        return self.rng.randbytes(n)

    def step(self):
        r = self.rng.random()
        if not self.model or (len(self.model) < MAX_FILES and r < 0.06):
            self.op_create()
        elif r < 0.36:
            self.op_pwrite()
        elif r < 0.62:
            self.op_read()
        elif r < 0.70:
            self.op_append()
        elif r < 0.76:
            self.op_truncate()
        elif r < 0.80:
            self.op_rename()
        elif r < 0.83:
            self.op_unlink()
        elif r < 0.88:
            self.op_readdir()
        elif r < 0.95:
            self.op_server_check()
        else:
            self.op_whole()

    # ---- helpers that do the I/O
    def _open(self, name, flags, direct):
        if direct:
            flags |= os.O_DIRECT
        return os.open(os.path.join(self.dir, name), flags, 0o644)

    def _pwrite(self, fd, buf, off, direct):
        if direct:
            # Page-aligned user buffer; offset and length stay unaligned
            # (the NFS client does byte-granular direct I/O).
            m = mmap.mmap(-1, max(len(buf), 1))
            m[:len(buf)] = buf
            try:
                done = 0
                while done < len(buf):
                    n = os.pwritev(fd, [memoryview(m)[done:len(buf)]], off + done)
                    if n <= 0:
                        raise OSError(errno.EIO, "short direct write")
                    done += n
            finally:
                m.close()
        else:
            done = 0
            mv = memoryview(buf)
            while done < len(buf):
                n = os.pwrite(fd, mv[done:], off + done)
                if n <= 0:
                    raise OSError(errno.EIO, "short write")
                done += n

    def _pread(self, fd, n, off, direct):
        return pread_all(fd, n, off, direct)

    # ---- operations
    def op_create(self):
        name = self.newname()
        n = rand_size(self.rng, 0, MAX_IO) if self.rng.random() < 0.9 else 0
        buf = self.data(n)
        direct = self.rng.random() < 0.2
        self.current = "create %s %d direct=%d" % (name, n, direct)
        fd = self._open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, direct)
        try:
            self._pwrite(fd, buf, 0, direct)
        finally:
            os.close(fd)
        self.model[name] = bytearray(buf)
        self.stats.op("create", written=n)

    def op_pwrite(self):
        name = self.pick()
        m = self.model[name]
        n = rand_size(self.rng)
        # Mostly inside or just past the end; sometimes leave a hole.
        lim = min(len(m) + (MIB if self.rng.random() < 0.2 else 0), MAX_FILE - n)
        off = self.rng.randint(0, max(0, lim))
        buf = self.data(n)
        direct = self.rng.random() < 0.25
        self.current = "pwrite %s off=%d len=%d direct=%d" % (name, off, n, direct)
        fd = self._open(name, os.O_WRONLY, direct)
        try:
            self._pwrite(fd, buf, off, direct)
            if self.rng.random() < 0.2:
                os.fsync(fd)
        finally:
            os.close(fd)
        if off > len(m):
            m.extend(bytes(off - len(m)))
        m[off:off + n] = buf
        self.stats.op("pwrite_direct" if direct else "pwrite", written=n)

    def op_read(self):
        name = self.pick()
        m = self.model[name]
        n = rand_size(self.rng)
        off = self.rng.randint(0, len(m) + 100)
        direct = self.rng.random() < 0.4
        self.current = "read %s off=%d len=%d direct=%d" % (name, off, n, direct)
        fd = self._open(name, os.O_RDONLY, direct)
        try:
            got = self._pread(fd, n, off, direct)
        finally:
            os.close(fd)
        self.stats.op("read_direct" if direct else "read", read=len(got))
        self.check("read_direct" if direct else "read", name, off, bytes(m[off:off + n]), got)

    def op_append(self):
        name = self.pick()
        m = self.model[name]
        n = rand_size(self.rng, 1, min(MAX_IO, max(1, MAX_FILE - len(m))))
        if len(m) + n > MAX_FILE:
            return self.op_truncate()
        buf = self.data(n)
        self.current = "append %s len=%d at=%d" % (name, n, len(m))
        fd = self._open(name, os.O_WRONLY | os.O_APPEND, False)
        try:
            self._pwrite_append(fd, buf)
        finally:
            os.close(fd)
        m.extend(buf)
        self.stats.op("append", written=n)

    def _pwrite_append(self, fd, buf):
        mv = memoryview(buf)
        done = 0
        while done < len(buf):
            k = os.write(fd, mv[done:])
            if k <= 0:
                raise OSError(errno.EIO, "short append")
            done += k

    def op_truncate(self):
        name = self.pick()
        m = self.model[name]
        if self.rng.random() < 0.6:
            size = self.rng.randint(0, len(m))
        else:
            size = min(MAX_FILE, len(m) + rand_size(self.rng, 1, MIB))
        self.current = "truncate %s %d -> %d" % (name, len(m), size)
        os.truncate(os.path.join(self.dir, name), size)
        if size < len(m):
            del m[size:]
        else:
            m.extend(bytes(size - len(m)))
        self.stats.op("truncate")

    def op_rename(self):
        a = self.pick()
        if len(self.model) > 1 and self.rng.random() < 0.3:
            b = self.rng.choice([x for x in sorted(self.model) if x != a])
        else:
            b = self.newname()
        self.current = "rename %s -> %s" % (a, b)
        os.rename(os.path.join(self.dir, a), os.path.join(self.dir, b))
        self.model[b] = self.model.pop(a)
        self.stats.op("rename")

    def op_unlink(self):
        name = self.pick()
        self.current = "unlink %s" % name
        os.unlink(os.path.join(self.dir, name))
        del self.model[name]
        self.stats.op("unlink")

    def op_readdir(self):
        self.current = "readdir"
        got = sorted(os.listdir(self.dir))
        want = sorted(self.model)
        self.stats.op("readdir")
        if got != want:
            self.stats.mismatch({"worker": self.name, "seed": self.seed, "op_no": self.nops,
                                 "op": "readdir", "path": self.dir,
                                 "want": want, "got": got})
            self.failed = True
        # Sizes through GETATTR too.
        for name in want:
            st = os.stat(os.path.join(self.dir, name))
            if st.st_size != len(self.model[name]):
                self.stats.mismatch({"worker": self.name, "seed": self.seed,
                                     "op_no": self.nops, "op": "stat", "path": name,
                                     "want_size": len(self.model[name]),
                                     "got_size": st.st_size})
                self.failed = True

    def op_server_check(self):
        """The server's backing file holds exactly the model (after close)."""
        name = self.pick()
        self.current = "server-check %s" % name
        with open(os.path.join(self.sdir, name), "rb") as f:
            got = f.read()
        self.stats.op("server_check", read=len(got))
        self.check("server_check", name, 0, bytes(self.model[name]), got)

    def op_whole(self):
        """Whole file through the mount with O_DIRECT (the server's bytes)."""
        name = self.pick()
        m = self.model[name]
        self.current = "whole %s %d" % (name, len(m))
        fd = self._open(name, os.O_RDONLY, True)
        try:
            got = self._pread(fd, len(m) + 4096, 0, True)
        finally:
            os.close(fd)
        self.stats.op("whole_direct", read=len(got))
        self.check("whole_direct", name, 0, bytes(m), got)

    def finish(self):
        """Final sweep: every file, both through the mount and on the server."""
        self.op_readdir()
        for name in sorted(self.model):
            self.current = "final %s" % name
            with open(os.path.join(self.dir, name), "rb") as f:
                got = f.read()
            self.stats.op("final_read", read=len(got))
            self.check("final_read", name, 0, bytes(self.model[name]), got)
            with open(os.path.join(self.sdir, name), "rb") as f:
                got = f.read()
            self.check("final_server", name, 0, bytes(self.model[name]), got)


class ClientWorker(Worker):
    """rpcrdma-nfs commands into /c of the export, checked against a model."""

    MODES = ["--mw", "--persistent-mr", "--per-call-mr"]
    SIZES = [4096, 5000, 12345, 65536, 262144, 1048576]

    def __init__(self, name, seed, deadline, stats, tool, spec, mount_port,
                 kmnt, export, tmp):
        super().__init__(name, seed, deadline, stats)
        self.tool = tool
        self.spec = spec
        self.mount_port = mount_port
        self.kdir = os.path.join(kmnt, "c")      # the same directory via the kernel
        self.sdir = os.path.join(export, "c")
        self.tmp = tmp
        self.model = {}                          # name -> bytes
        self.links = {}                          # symlink name -> target
        self.subdirs = set()
        self.serial = 0
        os.makedirs(self.tmp, exist_ok=True)
        self.nfs("mkdir", "/c")

    def nfs(self, *args, out=None, timeout=300):
        """Run one rpcrdma-nfs command; return its stdout (bytes); raise on failure."""
        opts = ["--mount-port", str(self.mount_port), "--quiet", "--timeout", "60"]
        opts.append(self.rng.choice(self.MODES))
        if self.rng.random() < 0.5:
            opts += ["--rsize", str(self.rng.choice(self.SIZES)),
                     "--wsize", str(self.rng.choice(self.SIZES))]
        if self.rng.random() < 0.5:
            opts += ["--streams", str(self.rng.randint(1, 16))]
        cmd = [self.tool] + opts + [self.spec] + list(args)
        self.current = " ".join(cmd[1:])
        TOOL.enter()
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout)
        finally:
            TOOL.leave()
        if p.returncode != 0:
            raise RuntimeError("%s: status %d: %s" % (" ".join(cmd), p.returncode,
                                                      p.stderr.decode(errors="replace")[-400:]))
        return p.stdout

    def newname(self, prefix="p"):
        self.serial += 1
        return "%s%05d" % (prefix, self.serial)

    def pick(self):
        return self.rng.choice(sorted(self.model)) if self.model else None

    def local(self, tag):
        return os.path.join(self.tmp, tag)

    def step(self):
        r = self.rng.random()
        if not self.model or (len(self.model) < MAX_FILES and r < 0.15):
            self.op_put(self.newname())
        elif r < 0.30:
            self.op_put(self.pick())              # overwrite (truncate) an existing one
        elif r < 0.55:
            self.op_get()
        elif r < 0.60:
            self.op_cat()
        elif r < 0.66:
            self.op_stat()
        elif r < 0.71:
            self.op_ls()
        elif r < 0.76:
            self.op_mv()
        elif r < 0.80:
            self.op_rm()
        elif r < 0.84:
            self.op_dir()
        elif r < 0.88:
            self.op_symlink()
        elif r < 0.94:
            self.op_kernel_to_tool()
        else:
            self.op_tool_to_kernel()

    def op_put(self, name):
        n = rand_size(self.rng, 0, 2 * MAX_IO)
        data = self.rng.randbytes(n)
        src = self.local("put")
        with open(src, "wb") as f:
            f.write(data)
        self.nfs("put", src, "/c/" + name)
        self.model[name] = data
        self.stats.op("nfs_put", written=n)
        with open(os.path.join(self.sdir, name), "rb") as f:
            got = f.read()
        self.check("nfs_put/server", name, 0, data, got)

    def op_get(self):
        name = self.pick()
        dst = self.local("get")
        self.nfs("get", "/c/" + name, dst)
        with open(dst, "rb") as f:
            got = f.read()
        os.unlink(dst)
        self.stats.op("nfs_get", read=len(got))
        self.check("nfs_get", name, 0, self.model[name], got)

    def op_cat(self):
        small = [x for x in sorted(self.model) if len(self.model[x]) <= 256 * 1024]
        if not small:
            return self.op_get()
        name = self.rng.choice(small)
        got = self.nfs("cat", "/c/" + name)
        self.stats.op("nfs_cat", read=len(got))
        self.check("nfs_cat", name, 0, self.model[name], got)

    def op_stat(self):
        name = self.pick()
        out = self.nfs("stat", "/c/" + name).decode(errors="replace")
        m = re.search(r"Size: (\d+)", out)
        self.stats.op("nfs_stat")
        if not m or int(m.group(1)) != len(self.model[name]):
            self.stats.mismatch({"worker": self.name, "seed": self.seed, "op_no": self.nops,
                                 "op": "nfs_stat", "path": name,
                                 "want_size": len(self.model[name]), "got": out[-200:]})
            self.failed = True

    def op_ls(self):
        out = self.nfs("ls", "/c").decode(errors="replace").split()
        want = sorted(list(self.model) + list(self.links) + list(self.subdirs))
        self.stats.op("nfs_ls")
        if sorted(out) != want:
            self.stats.mismatch({"worker": self.name, "seed": self.seed, "op_no": self.nops,
                                 "op": "nfs_ls", "want": want, "got": sorted(out)})
            self.failed = True

    def op_mv(self):
        a = self.pick()
        if len(self.model) > 1 and self.rng.random() < 0.3:
            b = self.rng.choice([x for x in sorted(self.model) if x != a])
        else:
            b = self.newname()
        self.nfs("mv", "/c/" + a, "/c/" + b)
        self.model[b] = self.model.pop(a)
        self.stats.op("nfs_mv")

    def op_rm(self):
        name = self.pick()
        self.nfs("rm", "/c/" + name)
        del self.model[name]
        self.stats.op("nfs_rm")
        if os.path.exists(os.path.join(self.sdir, name)):
            self.stats.mismatch({"worker": self.name, "seed": self.seed, "op_no": self.nops,
                                 "op": "nfs_rm", "path": name, "detail": "still on the server"})
            self.failed = True

    def op_dir(self):
        if self.subdirs and self.rng.random() < 0.5:
            d = self.rng.choice(sorted(self.subdirs))
            self.nfs("rmdir", "/c/" + d)
            self.subdirs.discard(d)
            self.stats.op("nfs_rmdir")
        else:
            d = self.newname("d")
            self.nfs("mkdir", "/c/" + d)
            self.subdirs.add(d)
            self.stats.op("nfs_mkdir")

    def op_symlink(self):
        if self.links and self.rng.random() < 0.5:
            name = self.rng.choice(sorted(self.links))
            got = self.nfs("readlink", "/c/" + name).decode(errors="replace").rstrip("\n")
            self.stats.op("nfs_readlink")
            if got != self.links[name]:
                self.stats.mismatch({"worker": self.name, "seed": self.seed,
                                     "op_no": self.nops, "op": "nfs_readlink",
                                     "path": name, "want": self.links[name], "got": got})
                self.failed = True
            if self.rng.random() < 0.5:
                self.nfs("rm", "/c/" + name)
                del self.links[name]
                self.stats.op("nfs_rm")
        else:
            name = self.newname("l")
            n = self.rng.randint(1, 1000)
            target = "".join(self.rng.choice("abcdefghij/._-") for _ in range(n))
            self.nfs("ln", "-s", target, "/c/" + name)
            self.links[name] = target
            self.stats.op("nfs_symlink")

    def op_kernel_to_tool(self):
        """Write a file through the kernel mount, fetch it with rpcrdma-nfs get."""
        name = self.newname("k")
        n = rand_size(self.rng, 0, MAX_IO)
        data = self.rng.randbytes(n)
        self.current = "kernel write /c/%s %d" % (name, n)
        with open(os.path.join(self.kdir, name), "wb") as f:
            f.write(data)
        self.stats.op("kernel_write_c", written=n)
        self.model[name] = data
        self.op_get_name(name)

    def op_get_name(self, name):
        dst = self.local("get")
        self.nfs("get", "/c/" + name, dst)
        with open(dst, "rb") as f:
            got = f.read()
        os.unlink(dst)
        self.stats.op("nfs_get", read=len(got))
        self.check("nfs_get", name, 0, self.model[name], got)

    def op_tool_to_kernel(self):
        """Read a file rpcrdma-nfs put, through the kernel mount with O_DIRECT."""
        name = self.pick()
        want = self.model[name]
        self.current = "kernel O_DIRECT read /c/%s" % name
        fd = os.open(os.path.join(self.kdir, name), os.O_RDONLY | os.O_DIRECT)
        try:
            got = pread_all(fd, len(want) + 4096, 0, True)
        finally:
            os.close(fd)
        self.stats.op("kernel_read_c", read=len(got))
        self.check("kernel_read_c", name, 0, want, got)

    def finish(self):
        self.op_ls()
        for name in sorted(self.model):
            self.op_get_name(name)


class ToolActivity:
    """Whether an rpcrdma-nfs process is running.  While one connects, the
    server is building that connection's pool (RSS climbs for a moment
    with conns_open not yet counting it), so memory samples taken then are
    marked unsteady and not judged.  The sampler holds new processes back
    for the moment of a sample (hold/release) so that steady samples are
    taken at all: with the tool worker never idle, a short soak had none,
    and memory growth was never judged."""

    def __init__(self):
        self.cond = threading.Condition()
        self.busy = 0
        self.gen = 0
        self.held = False

    def enter(self):
        with self.cond:
            while self.held:
                self.cond.wait()
            self.busy += 1
            self.gen += 1

    def leave(self):
        with self.cond:
            self.busy -= 1
            self.cond.notify_all()

    def hold(self, timeout):
        """Start no new rpcrdma-nfs process until release(); wait (timeout
        seconds at most) until none runs.  True when none does."""
        end = time.monotonic() + timeout
        with self.cond:
            self.held = True
            while self.busy:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
            return True

    def release(self):
        with self.cond:
            self.held = False
            self.cond.notify_all()

    def snap(self):
        with self.cond:
            return self.busy, self.gen


TOOL = ToolActivity()


class Sampler(threading.Thread):
    """Samples the server's memory and pool gauges every interval seconds."""

    GAUGES = ["calls", "connections", "conns_open", "ctx_in_use", "ctx_high",
              "large_in_use", "large_high", "recv_in_use", "mrs_open", "mr_bytes",
              "drops", "rdma_errors_sent", "post_errors"]

    def __init__(self, pid, slog, interval, series, t0):
        super().__init__(name="sampler", daemon=True)
        self.pid = pid
        self.slog = slog
        self.interval = interval
        self.series = series
        self.t0 = t0
        self.samples = []
        self.stop = threading.Event()

    def status(self):
        out = {}
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM", "VmSize", "Threads"):
                    out[k] = int(v.split()[0])
        return out

    def stats_lines(self):
        with open(self.slog, "rb") as f:
            # complete lines only: the last piece may still be being written
            lines = f.read().split(b"\n")[:-1]
        return [ln for ln in lines if ln.startswith(b'{"connections"')]

    def sample(self, tag="run"):
        """One sample: SIGUSR1, wait (5 s at most) for the new JSON line."""
        before = len(self.stats_lines())
        busy0, gen0 = TOOL.snap()
        rss0 = self.status().get("VmRSS")
        os.kill(self.pid, signal.SIGUSR1)
        gauges = None
        for _ in range(50):
            lines = self.stats_lines()
            if len(lines) > before:
                gauges = json.loads(lines[-1])
                break
            time.sleep(0.1)
        st = self.status()
        busy1, gen1 = TOOL.snap()
        # Steady: no rpcrdma-nfs process ran during the sample and RSS did
        # not move by more than 1 MiB while the counters were read.
        steady = (gauges is not None and busy0 == 0 and busy1 == 0 and gen0 == gen1
                  and rss0 is not None and st.get("VmRSS") is not None
                  and abs(st["VmRSS"] - rss0) <= 1024)
        s = {"t": round(time.monotonic() - self.t0, 1), "tag": tag, "steady": steady,
             "rss_kib": st.get("VmRSS"), "hwm_kib": st.get("VmHWM"),
             "vsz_kib": st.get("VmSize"), "threads": st.get("Threads")}
        if gauges is None:
            s["gauges"] = None
        else:
            s.update(gauges)
        self.samples.append(s)
        self.series.write(json.dumps(s) + "\n")
        self.series.flush()
        return s

    def run(self):
        while not self.stop.wait(self.interval):
            try:
                # a moment without rpcrdma-nfs: 1 s more after the last
                # one ended, for the server to take its connection down
                if TOOL.hold(10):
                    time.sleep(1)
                self.sample()
            except Exception as e:
                log("sampler: %r" % e)
            finally:
                TOOL.release()


# the fewest steady samples rss_verdict() judges memory growth from
RSS_MIN_SAMPLES = 8


def rss_verdict(samples, slack_kib):
    """Flat memory: for each number of open connections (each connection
    registers its own buffer pool, tens of MiB, so RSS is a step function of
    it), the largest RSS in the last quarter of the run is at most the largest
    in the first half with as many connections, plus slack_kib.  After the
    warm-up the pools are allocated; growth beyond that is a leak.  Levels
    seen in the last quarter only are reported, not judged; the level with the
    most samples must be judged.  Only steady samples count (no rpcrdma-nfs
    process running, RSS still while the counters were read): a connection
    being set up is half-built memory that conns_open does not count yet."""
    run = [s for s in samples if s["tag"] == "run" and s["rss_kib"] and s.get("steady", True)]
    if len(run) < RSS_MIN_SAMPLES:
        # Not judged is not flat: the soak cannot claim what it did not see
        # (soak.sh fails the run with this note).
        return {"ok": False, "judged": False, "steady_samples": len(run),
                "note": "not enough samples: %d steady of the %d needed to judge memory growth"
                        % (len(run), RSS_MIN_SAMPLES)}
    tmax = run[-1]["t"]
    levels = {}
    for s in run:
        lv = levels.setdefault(str(s.get("conns_open")), {"first_half": [], "last_quarter": [],
                                                          "n": 0})
        lv["n"] += 1
        if s["t"] <= tmax / 2:
            lv["first_half"].append(s["rss_kib"])
        if s["t"] >= tmax * 3 / 4:
            lv["last_quarter"].append(s["rss_kib"])
    ok = True
    out = {}
    for k, lv in sorted(levels.items()):
        o = {"samples": lv["n"]}
        if lv["first_half"]:
            o["first_half_max_kib"] = max(lv["first_half"])
        if lv["last_quarter"]:
            o["last_quarter_max_kib"] = max(lv["last_quarter"])
        if lv["first_half"] and lv["last_quarter"]:
            o["ok"] = o["last_quarter_max_kib"] <= o["first_half_max_kib"] + slack_kib
            ok = ok and o["ok"]
        out[k] = o
    main_level = max(levels, key=lambda k: levels[k]["n"])
    if "ok" not in out[main_level]:
        ok = False
    return {"ok": ok, "judged": True, "steady_samples": len(run),
            "slack_kib": slack_kib, "by_conns_open": out,
            "main_level": main_level,
            "first_kib": run[0]["rss_kib"], "last_kib": run[-1]["rss_kib"],
            "min_kib": min(s["rss_kib"] for s in run),
            "max_kib": max(s["rss_kib"] for s in run)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--kmount", action="append", default=[],
                    help="a kernel mount point of the export (one worker each)")
    ap.add_argument("--export", required=True, help="the export's directory (server side)")
    ap.add_argument("--tool", required=True, help="path of rpcrdma-nfs")
    ap.add_argument("--spec", required=True, help="SERVER:/export for rpcrdma-nfs")
    ap.add_argument("--mount-port", type=int, default=20048)
    ap.add_argument("--server-pid", type=int, required=True)
    ap.add_argument("--server-log", required=True)
    ap.add_argument("--interval", type=float, default=5)
    ap.add_argument("--stall", type=float, default=240)
    ap.add_argument("--rss-slack-kib", type=int, default=8192)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--series", required=True)
    ap.add_argument("--summary", required=True)
    a = ap.parse_args()

    log("seed %d, %.0f s, kernel mounts %s, sample every %.1f s"
        % (a.seed, a.seconds, " ".join(a.kmount), a.interval))
    stats = Stats()
    t0 = time.monotonic()
    deadline = t0 + a.seconds
    series = open(a.series, "w")
    sampler = Sampler(a.server_pid, a.server_log, a.interval, series, t0)
    sampler.sample("start")
    workers = []
    for i, mnt in enumerate(a.kmount):
        workers.append(KernelWorker("kernel%d" % i, a.seed * 16 + i, deadline, stats,
                                    mnt, a.export, "k%d" % i))
    workers.append(ClientWorker("rpcrdma-nfs", a.seed * 16 + 15, deadline, stats,
                                a.tool, a.spec, a.mount_port, a.kmount[0],
                                a.export, os.path.join(a.tmp, "client")))
    sampler.start()
    for w in workers:
        w.start()
    hung = None
    last_report = t0
    while any(w.is_alive() for w in workers):
        time.sleep(1)
        now = time.monotonic()
        for w in workers:
            if w.is_alive() and now - w.beat > a.stall + (60 if w.current == "finish" else 0):
                hung = {"worker": w.name, "seed": w.seed, "op_no": w.nops,
                        "op": w.current, "stalled_s": round(now - w.beat)}
        if hung:
            break
        if now - last_report >= max(30, a.seconds / 20):
            last_report = now
            with stats.lock:
                log("t=%ds ops=%d written=%d read=%d verified=%d mismatches=%d errors=%d rss=%s KiB"
                    % (now - t0, sum(v for k, v in stats.ops.items() if k != "verify"),
                       stats.bytes_written,
                       stats.bytes_read, stats.bytes_verified, stats.mismatches,
                       stats.errors,
                       sampler.samples[-1]["rss_kib"] if sampler.samples else "?"))
    sampler.stop.set()
    sampler.join(timeout=10)
    end = sampler.sample("end-of-load")
    rss = rss_verdict(sampler.samples, a.rss_slack_kib)
    with stats.lock:
        summary = {
            "seed": a.seed, "seconds": round(time.monotonic() - t0, 1),
            "workers": [w.name for w in workers],
            "ops_total": sum(v for k, v in stats.ops.items() if k != "verify"),
            "ops": dict(sorted(stats.ops.items())),
            "bytes_written": stats.bytes_written, "bytes_read": stats.bytes_read,
            "bytes_verified": stats.bytes_verified,
            "mismatches": stats.mismatches, "errors": stats.errors,
            "details": stats.details, "hang": hung,
            "samples": len(sampler.samples), "rss": rss,
            "gauges_end_of_load": {k: end.get(k) for k in Sampler.GAUGES},
        }
    summary["ok"] = (stats.mismatches == 0 and stats.errors == 0 and hung is None
                     and rss["ok"])
    with open(a.summary, "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    series.close()
    if hung:
        log("HANG: %s" % json.dumps(hung))
    print(json.dumps(summary, sort_keys=True), flush=True)
    if hung:
        os._exit(3)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
