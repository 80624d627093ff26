// SPDX-License-Identifier: MIT
/*
 * nfs_xfer.c - rpcrdma-nfs get, cat and put: get and cat as one stream of
 * READs (--streams in flight) drained into the local file by a writer
 * thread, put as one stream of WRITEs (--streams in flight) fed from the
 * local file; resumed after a reconnect, with the buffer registered per
 * call, persistently, or through memory windows.
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

/* A transfer buffer of @len bytes; unless --per-call-mr it stays
 * registered for the whole transfer (memory windows are bound over it per
 * call, the default) instead of registering each piece per call. */
int xfer_buf_init(struct rpcrdma_nfsc *nc, struct xfer_buf *xb, size_t len)
{
	int rc;

	xb->xb_len = len ? len : 1;
	xb->xb_buf = malloc(xb->xb_len);
	if (!xb->xb_buf)
		return -ENOMEM;
	if (!opt_persistent)
		return 0;
	rc = rpcrdma_nfsc_register_buffer(nc, xb->xb_buf, xb->xb_len);
	if (rc && rc != -EOPNOTSUPP)
		fprintf(stderr, PROG ": warning: cannot keep the buffer registered (%s): "
			"registering per call\n", strerror(-rc));
	return 0;
}

void xfer_buf_fini(struct rpcrdma_nfsc *nc, struct xfer_buf *xb)
{
	if (opt_persistent && xb->xb_buf)
		rpcrdma_nfsc_unregister_buffer(nc, xb->xb_buf);
	free(xb->xb_buf);
	xb->xb_buf = NULL;
}

size_t xfer_ring(struct rpcrdma_nfsc *nc, bool get)
{
	if (get)
		return (size_t)rpcrdma_nfsc_rsize(nc) * (opt_streams + 1);
	return (size_t)rpcrdma_nfsc_wsize(nc) * opt_streams;
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

/* The taker of get's READs: each piece, in file order, goes to the writer
 * thread (which waits for the previous piece to be written first, so the
 * stream may reuse that one's slot). */
struct get_sink {
	struct writer *gs_w;
	struct progress *gs_pg;
};

static int get_drain(void *arg, uint64_t off, const void *buf, uint32_t len)
{
	struct get_sink *gs = arg;
	int rc;

	rc = writer_submit(gs->gs_w, buf, len, off);
	if (rc)
		return rc;
	atomic_store(&gs->gs_pg->pg_done, off + len);
	progress_draw(gs->gs_pg, false);
	return 0;
}

int get_fh(struct rpcrdma_nfsc *nc, struct xfer_buf *xb, const struct rpcrdma_nfsc_fh *fh,
	   const char *name, uint64_t size, int fd)
{
	struct get_sink gs;
	struct progress pg;
	struct writer w;
	uint64_t off = 0, n;
	unsigned tries = 0;
	bool eof = false;
	int rc, wrc;

	rc = writer_start(&w, fd);
	if (rc)
		return rc;
	progress_init(&pg, name, size);
	gs.gs_w = &w;
	gs.gs_pg = &pg;
	/* One stream of READs (--streams in flight) to the end of file (the
	 * file may have grown since its size was asked), its pieces written
	 * out by the writer thread while the next ones are read; after a
	 * reconnect it resumes at the first byte not yet handed over.  The
	 * ring: the buffer, --streams + 1 slots of rsize (xfer_ring). */
	while (!rc && !eof) {
		rc = rpcrdma_nfsc_read_stream(nc, fh, off, UINT64_MAX - off, xb->xb_buf,
					      opt_streams, get_drain, &gs, &n, &eof);
		off += n;
		/* the ring is used again from its first slot: let the writer
		 * finish the last piece it was given */
		wrc = writer_wait(&w);
		if (wrc) {
			rc = wrc;
			break;
		}
		if (rc && retry_window(nc, rc, &tries))
			rc = 0;
	}
	wrc = writer_finish(&w);
	if (!rc)
		rc = wrc;
	progress_draw(&pg, true);
	return rc;
}

int cmd_get(struct rpcrdma_nfsc *nc, const char *remote, const char *local, bool cat)
{
	struct rpcrdma_nfsc_attr attr;
	struct rpcrdma_nfsc_fh fh;
	struct xfer_buf xb;
	char *lpath = NULL;
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
	rc = xfer_buf_init(nc, &xb, xfer_ring(nc, true));
	if (!rc)
		rc = get_fh(nc, &xb, &fh, remote, attr.at_size, fd);
	xfer_buf_fini(nc, &xb);
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

/* The source of put's WRITEs: the local file, read piece by piece into
 * the slot the next WRITE goes from, while the other WRITEs are in flight. */
struct put_src {
	int ps_fd;
	struct progress *ps_pg;
};

static int put_fill(void *arg, uint64_t off, void *buf, uint32_t len)
{
	struct put_src *src = arg;
	uint8_t *p = buf;
	uint32_t left = len;

	while (left) {
		ssize_t r = pread(src->ps_fd, p, left, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO; /* the file shrank */
		p += r;
		off += (uint64_t)r;
		left -= (uint32_t)r;
	}
	/* bytes handed to the transport, for the progress line */
	atomic_store(&src->ps_pg->pg_done, off);
	progress_draw(src->ps_pg, false);
	return 0;
}

/* Send the whole local file as one stream of WRITEs (--streams in
 * flight); after a reconnect it resumes where the server's replies
 * stopped.  *@changed when the write verifier moved. */
static int put_all(struct rpcrdma_nfsc *nc, struct xfer_buf *xb,
		   const struct rpcrdma_nfsc_fh *fh, int fd, uint64_t size, uint32_t stable,
		   struct progress *pg, uint8_t verf[8], bool *changed)
{
	struct put_src src = { .ps_fd = fd, .ps_pg = pg };
	uint64_t off = 0, done;
	unsigned tries = 0;
	uint8_t v[8];
	bool ch;
	int rc = 0;

	*changed = false;
	atomic_store(&pg->pg_done, 0);
	/* the ring: --streams slots of wsize, the buffer's first half */
	while (!rc && off < size) {
		rc = rpcrdma_nfsc_write_stream(nc, fh, off, size - off, xb->xb_buf, opt_streams,
					       stable, put_fill, &src, &done, v, &ch);
		off += done;
		if (rc && retry_window(nc, rc, &tries)) {
			rc = 0;
			*changed = true; /* the server may have restarted */
			continue;
		}
		if (rc)
			break;
		/* one stream unless resumed (and then *changed already) */
		if (ch)
			*changed = true;
		memcpy(verf, v, 8);
	}
	return rc;
}

int put_fd(struct rpcrdma_nfsc *nc, struct xfer_buf *xb, const struct rpcrdma_nfsc_fh *fh,
	   const char *name, int fd, uint64_t size)
{
	uint8_t verf[8] = { 0 }, cverf[8];
	struct progress pg;
	bool changed;
	int rc;

	progress_init(&pg, name, size);
	rc = put_all(nc, xb, fh, fd, size, 0, &pg, verf, &changed);
	if (!rc && size) {
		rc = rpcrdma_nfsc_commit(nc, fh, 0, 0, cverf);
		/* A changed write verifier means the server restarted and may
		 * have lost UNSTABLE data (RFC 1813 3.3.7): write it all again,
		 * FILE_SYNC this time, so no verifier is needed. */
		if (!rc && (changed || memcmp(verf, cverf, 8))) {
			if (!opt_quiet)
				fprintf(stderr, PROG ": %s: the server restarted during the "
					"transfer: writing the file again\n", name);
			rc = put_all(nc, xb, fh, fd, size, 2, &pg, verf, &changed);
		}
	}
	progress_draw(&pg, true);
	return rc;
}

int cmd_put(struct rpcrdma_nfsc *nc, const char *local, const char *remote)
{
	struct rpcrdma_nfsc_fh dir, fh;
	struct rpcrdma_nfsc_attr attr;
	char name[256], *lcopy, *rpath = NULL;
	struct xfer_buf xb = { 0 };
	struct stat st;
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
	if (!rc)
		rc = xfer_buf_init(nc, &xb, xfer_ring(nc, false));
	if (!rc)
		rc = put_fd(nc, &xb, &fh, remote, fd, (uint64_t)st.st_size);
	xfer_buf_fini(nc, &xb);
	close(fd);
	if (rc)
		fail(remote, rc);
	free(rpath);
	return rc ? 1 : 0;
}
