// SPDX-License-Identifier: MIT
/*
 * nfs_writer.c - rpcrdma-nfs get: the local file is written by a thread of
 * its own, one piece of the READ stream at a time in file order, while the
 * next READs are in flight into the other slots of the ring, so the two overlap
 * instead of taking turns (a profile of a 64 MiB get in the VM showed the
 * pwrite's page faults and copies as a large share of the time the READs
 * waited for).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "nfs.h"

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	const uint8_t *buf;
	uint64_t len, off;
	int rc;

	pthread_mutex_lock(&w->wr_lock);
	for (;;) {
		while (!w->wr_have && !w->wr_stop)
			pthread_cond_wait(&w->wr_cond, &w->wr_lock);
		if (!w->wr_have)
			break;
		buf = w->wr_buf;
		len = w->wr_len;
		off = w->wr_off;
		pthread_mutex_unlock(&w->wr_lock);
		rc = 0;
		if (w->wr_fd == STDOUT_FILENO) {
			if (fwrite(buf, 1, len, stdout) != len)
				rc = -EIO;
		} else {
			while (len) {
				ssize_t n = pwrite(w->wr_fd, buf, len, (off_t)off);

				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0) {
					rc = n < 0 ? -errno : -EIO;
					break;
				}
				buf += n;
				len -= (uint64_t)n;
				off += (uint64_t)n;
			}
		}
		pthread_mutex_lock(&w->wr_lock);
		if (rc && !w->wr_err)
			w->wr_err = rc;
		w->wr_have = false;
		pthread_cond_broadcast(&w->wr_cond);
	}
	pthread_mutex_unlock(&w->wr_lock);
	return NULL;
}

int writer_start(struct writer *w, int fd)
{
	int rc;

	w->wr_fd = fd;
	w->wr_have = w->wr_stop = false;
	w->wr_err = 0;
	pthread_mutex_init(&w->wr_lock, NULL);
	pthread_cond_init(&w->wr_cond, NULL);
	rc = -pthread_create(&w->wr_thread, NULL, writer_main, w);
	if (rc) {
		pthread_mutex_destroy(&w->wr_lock);
		pthread_cond_destroy(&w->wr_cond);
	}
	return rc;
}

/* Wait until the thread holds no window.  Lock held. */
static void writer_idle(struct writer *w)
{
	while (w->wr_have)
		pthread_cond_wait(&w->wr_cond, &w->wr_lock);
}

int writer_submit(struct writer *w, const uint8_t *buf, uint64_t len, uint64_t off)
{
	int rc;

	pthread_mutex_lock(&w->wr_lock);
	writer_idle(w);
	rc = w->wr_err;
	if (!rc && len) {
		w->wr_buf = buf;
		w->wr_len = len;
		w->wr_off = off;
		w->wr_have = true;
		pthread_cond_broadcast(&w->wr_cond);
	}
	pthread_mutex_unlock(&w->wr_lock);
	return rc;
}

int writer_wait(struct writer *w)
{
	int rc;

	pthread_mutex_lock(&w->wr_lock);
	writer_idle(w);
	rc = w->wr_err;
	pthread_mutex_unlock(&w->wr_lock);
	return rc;
}

int writer_finish(struct writer *w)
{
	int rc;

	pthread_mutex_lock(&w->wr_lock);
	writer_idle(w);
	w->wr_stop = true;
	pthread_cond_broadcast(&w->wr_cond);
	rc = w->wr_err;
	pthread_mutex_unlock(&w->wr_lock);
	pthread_join(w->wr_thread, NULL);
	pthread_mutex_destroy(&w->wr_lock);
	pthread_cond_destroy(&w->wr_cond);
	return rc;
}
