// SPDX-License-Identifier: MIT
/*
 * nfsd_statelock.c - one rpcrdma-nfsd per state directory (a flock(2)
 * held for the process's life on a file in it, with the holder's pid).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/state_dir.h"
#include "nfsd_statelock.h"

/* the pid written in the lock file @fd, or 0 */
static pid_t lock_holder(int fd)
{
	char buf[24];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long v;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	v = strtol(buf, NULL, 10);
	return v > 0 ? (pid_t)v : 0;
}

int nfsd_state_lock(const char *dir, pid_t *holder)
{
	char path[4200], pid[24];
	int fd, err, n;

	*holder = 0;
	if (strlen(dir) >= sizeof(path) - sizeof(NFSD_STATELOCK_NAME) - 1)
		return -ENAMETOOLONG;
	err = rpcrdma_mkdir_parents(dir);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%s", dir, NFSD_STATELOCK_NAME);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		if (err == -EBUSY)
			*holder = lock_holder(fd);
		goto out_close;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
		err = -errno;
		goto out_close;
	}
	return fd;

out_close:
	close(fd);
	return err;
}
