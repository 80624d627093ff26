// SPDX-License-Identifier: MIT
/*
 * nfs_xfer.c - rpcrdma-nfs get, cat and put: windows of --streams pieces
 * pipelined by the library, retried after a reconnect, with the buffer
 * registered per call, persistently, or through memory windows.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfs.h"

/* --persistent-mr: keep the transfer buffer registered for the whole
 * transfer instead of registering each READ/WRITE's piece per call. */
static void buf_register(struct rpcrdma_nfsc *nc, void *buf, size_t len)
{
	int rc;

	if (!opt_persistent || !buf)
		return;
	rc = rpcrdma_nfsc_register_buffer(nc, buf, len);
	if (rc && rc != -EOPNOTSUPP)
		fprintf(stderr, PROG ": warning: cannot keep the buffer registered (%s): "
			"registering per call\n", strerror(-rc));
}

static void buf_unregister(struct rpcrdma_nfsc *nc, void *buf)
{
	if (opt_persistent && buf)
		rpcrdma_nfsc_unregister_buffer(nc, buf);
}

static bool retryable(int rc)
{
	return rc == -ECONNRESET || rc == -ENOTCONN || rc == -ETIMEDOUT;
}

/*
 * After a window failed because the connection went away: a NULL call
 * goes through the transport's reconnect-and-retry path.  True when the
 * window may be tried again.
 */
static bool retry_window(struct rpcrdma_nfsc *nc, int rc, unsigned *tries)
{
	if (!retryable(rc) || *tries >= opt_retries)
		return false;
	(*tries)++;
	return rpcrdma_nfsc_null(nc) == 0;
}

int cmd_get(struct rpcrdma_nfsc *nc, const char *remote, const char *local, bool cat)
{
	struct rpcrdma_nfsc_attr attr;
	struct rpcrdma_nfsc_fh fh;
	struct progress pg;
	uint64_t window = (uint64_t)rpcrdma_nfsc_rsize(nc) * opt_streams, off = 0, n;
	char *lpath = NULL;
	unsigned tries = 0;
	uint8_t *buf = NULL;
	struct stat st;
	int rc, fd;

	rc = rpcrdma_nfsc_lookup_path(nc, remote, &fh, &attr);
	if (rc)
		return fail(remote, rc);
	if (attr.at_type == NFSC_DIR)
		return fail(remote, -EISDIR);
	if (cat || !strcmp(local, "-")) {
		fd = STDOUT_FILENO;
	} else {
		if (stat(local, &st) == 0 && S_ISDIR(st.st_mode)) {
			char *r = strdup(remote);

			if (!r || asprintf(&lpath, "%s/%s", local, basename(r)) < 0) {
				free(r);
				return fail(local, -ENOMEM);
			}
			free(r);
			local = lpath;
		}
		fd = open(local, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			rc = fail(local, -errno);
			free(lpath);
			return rc;
		}
	}
	buf = malloc(window);
	rc = buf ? 0 : -ENOMEM;
	buf_register(nc, buf, window);
	progress_init(&pg, remote, attr.at_size);
	/* Until a window comes back short: the file may have grown. */
	while (!rc) {
		rc = rpcrdma_nfsc_read_pipelined(nc, &fh, off, buf, window, opt_streams, &n);
		if (rc && retry_window(nc, rc, &tries)) {
			rc = 0;
			continue;
		}
		if (rc)
			break;
		if (n && (fd == STDOUT_FILENO ? fwrite(buf, 1, n, stdout) != n :
			  pwrite(fd, buf, n, (off_t)off) != (ssize_t)n))
			rc = fd == STDOUT_FILENO ? -EIO : -errno;
		off += n;
		atomic_store(&pg.pg_done, off);
		progress_draw(&pg, false);
		if (n < window)
			break;
	}
	progress_draw(&pg, true);
	buf_unregister(nc, buf);
	free(buf);
	if (fd == STDOUT_FILENO) {
		if (fflush(stdout) && !rc)
			rc = -EIO;
	} else if (close(fd) && !rc) {
		rc = -errno;
	}
	if (rc)
		fail(remote, rc);
	free(lpath);
	return rc ? 1 : 0;
}

/* Send the whole local file; *@changed when the write verifier moved. */
static int put_all(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh, int fd,
		   uint64_t size, uint32_t stable, struct progress *pg, uint8_t verf[8],
		   bool *changed)
{
	uint64_t window = (uint64_t)rpcrdma_nfsc_wsize(nc) * opt_streams, off = 0, len;
	uint8_t *buf = malloc(window ? window : 1), v[8];
	bool first = true, ch;
	unsigned tries = 0;
	ssize_t r;
	int rc = buf ? 0 : -ENOMEM;

	*changed = false;
	buf_register(nc, buf, window ? window : 1);
	atomic_store(&pg->pg_done, 0);
	while (!rc && off < size) {
		len = size - off < window ? size - off : window;
		r = pread(fd, buf, len, (off_t)off);
		if (r != (ssize_t)len) {
			rc = r < 0 ? -errno : -EIO;
			break;
		}
		rc = rpcrdma_nfsc_write_pipelined(nc, fh, off, buf, len, opt_streams, stable,
						  v, &ch);
		if (rc && retry_window(nc, rc, &tries)) {
			rc = 0;
			*changed = true; /* the server may have restarted */
			continue;
		}
		if (rc)
			break;
		if (ch || (!first && memcmp(v, verf, 8)))
			*changed = true;
		memcpy(verf, v, 8);
		first = false;
		off += len;
		atomic_store(&pg->pg_done, off);
		progress_draw(pg, false);
	}
	buf_unregister(nc, buf);
	free(buf);
	return rc;
}

int cmd_put(struct rpcrdma_nfsc *nc, const char *local, const char *remote)
{
	struct rpcrdma_nfsc_fh dir, fh;
	struct rpcrdma_nfsc_attr attr;
	char name[256], *lcopy, *rpath = NULL;
	uint8_t verf[8] = { 0 }, cverf[8];
	struct progress pg;
	struct stat st;
	bool changed;
	int rc, fd;

	fd = open(local, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(local, -errno);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(local, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL);
	}
	/* An existing remote directory receives the file under its own name. */
	if (rpcrdma_nfsc_lookup_path(nc, remote, &fh, &attr) == 0 && attr.at_type == NFSC_DIR) {
		lcopy = strdup(local);
		if (!lcopy || asprintf(&rpath, "%s/%s", remote, basename(lcopy)) < 0) {
			free(lcopy);
			close(fd);
			return fail(remote, -ENOMEM);
		}
		free(lcopy);
		remote = rpath;
	}
	rc = resolve_parent(nc, remote, &dir, name, sizeof(name));
	if (!rc)
		rc = rpcrdma_nfsc_create(nc, &dir, name, st.st_mode & 0777, true, &fh);
	if (rc)
		goto out;
	progress_init(&pg, remote, (uint64_t)st.st_size);
	rc = put_all(nc, &fh, fd, (uint64_t)st.st_size, 0, &pg, verf, &changed);
	if (!rc && st.st_size) {
		rc = rpcrdma_nfsc_commit(nc, &fh, 0, 0, cverf);
		/* A changed write verifier means the server restarted and may
		 * have lost UNSTABLE data (RFC 1813 3.3.7): write it all again,
		 * FILE_SYNC this time, so no verifier is needed. */
		if (!rc && (changed || memcmp(verf, cverf, 8))) {
			if (!opt_quiet)
				fprintf(stderr, PROG ": %s: the server restarted during the "
					"transfer: writing the file again\n", remote);
			rc = put_all(nc, &fh, fd, (uint64_t)st.st_size, 2, &pg, verf, &changed);
		}
	}
	progress_draw(&pg, true);
out:
	close(fd);
	if (rc)
		fail(remote, rc);
	free(rpath);
	return rc ? 1 : 0;
}
