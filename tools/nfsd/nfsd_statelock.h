/* SPDX-License-Identifier: MIT */
/*
 * nfsd_statelock.h - one rpcrdma-nfsd per state directory.
 */
#ifndef NFSD_STATELOCK_H
#define NFSD_STATELOCK_H

#include <sys/types.h>

/** The lock file's name inside the state directory. */
#define NFSD_STATELOCK_NAME "rpcrdma-nfsd.lock"

/**
 * nfsd_state_lock - take the state directory @dir for this process: create
 * it (mode 0700, and its parents) when missing, take an exclusive flock(2)
 * on @dir/rpcrdma-nfsd.lock and write this process's pid into it.  The lock
 * lasts as long as the returned descriptor (close-on-exec) stays open: the
 * kernel drops it when the process ends, however it ends, so a server
 * SIGKILLed and started again finds it free.  Two servers sharing a state
 * directory would each advance NSM's state number and load and rewrite the
 * other's NFSv4.1 client records (RFC 8881 8.4.2.1: the records a restarted
 * server keeps), so the second must refuse before it reads any of them.
 * @dir:    the state directory (--state-dir), a NUL-terminated path
 * @holder: out, when the lock is held elsewhere: the pid written in the
 *          file (0 when the file holds none)
 *
 * Return: the lock's descriptor (>= 0; the caller keeps it open while it
 * serves); -EBUSY (another process holds the lock; *@holder set),
 * -ENAMETOOLONG, or the negative errno of mkdir(2), open(2) or flock(2)
 * (-EACCES when not root and the directory is root's).
 */
int nfsd_state_lock(const char *dir, pid_t *holder);

#endif
