#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""locker.py - take one lock on FILE and hold it, for the VM test `locking`.

locker.py FILE KIND START LEN MODE [--ready PATH] [--release PATH]

KIND: r or w (fcntl POSIX record lock), fx or fs (flock exclusive/shared)
START, LEN: the byte range (LEN 0: to the end of the file; ignored by flock)
MODE: nb (F_SETLK / LOCK_NB: fail at once) or wait (F_SETLKW: block)

On success it creates --ready (if given), holds the lock until --release
exists (polled every 0.1 s; without --release it lets go at once), unlocks
and exits 0.  A lock refused with EAGAIN/EACCES exits 3; other errors 1.
"""
import errno
import fcntl
import os
import sys
import time


def main():
    args = sys.argv[1:]
    opts = {}
    while len(args) > 5:
        key, val = args[-2], args[-1]
        if key not in ("--ready", "--release"):
            break
        opts[key] = val
        args = args[:-2]
    if len(args) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    path, kind, start, length, mode = args
    start, length = int(start), int(length)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    nb = mode == "nb"
    try:
        if kind in ("r", "w"):
            op = fcntl.LOCK_SH if kind == "r" else fcntl.LOCK_EX
            fcntl.lockf(fd, op | (fcntl.LOCK_NB if nb else 0), length, start)
        else:
            op = fcntl.LOCK_SH if kind == "fs" else fcntl.LOCK_EX
            fcntl.flock(fd, op | (fcntl.LOCK_NB if nb else 0))
    except OSError as e:
        if e.errno in (errno.EAGAIN, errno.EACCES):
            print(f"locker {os.getpid()}: {kind} {start}+{length} on {path}: denied", flush=True)
            return 3
        print(f"locker {os.getpid()}: {kind} {start}+{length} on {path}: {e}", flush=True)
        return 1
    print(f"locker {os.getpid()}: {kind} {start}+{length} on {path}: locked", flush=True)
    if "--ready" in opts:
        open(opts["--ready"], "w").close()
    if "--release" in opts:
        while not os.path.exists(opts["--release"]):
            time.sleep(0.1)
    if kind in ("r", "w"):
        fcntl.lockf(fd, fcntl.LOCK_UN, length, start)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
