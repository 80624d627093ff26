/* SPDX-License-Identifier: MIT */
/*
 * nfs.h - private to tools/nfs, the rpcrdma-nfs command-line client: its
 * options, shared helpers and one function per command.  Commands return
 * the process exit status (0, 1 on failure, EXIT_USAGE) after printing
 * any error.
 */
#ifndef RPCRDMA_TOOLS_NFS_H
#define RPCRDMA_TOOLS_NFS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <rpcrdma/capture.h>
#include <rpcrdma/clnt.h>

#define PROG "rpcrdma-nfs"
#define EXIT_USAGE 2
#define MAX_STREAMS 16u

/* nfs_main.c: options */
extern bool opt_quiet, opt_stats;
extern unsigned opt_streams;
extern unsigned opt_retries;
extern bool opt_persistent;

/* nfs_main.c: print "PROG: @what: strerror(-@err)"; returns 1. */
int fail(const char *what, int err);

/* nfs_names.c: split "a/b/c" into the handle of "a/b" and "c" (0 or -errno). */
int resolve_parent(struct rpcrdma_nfsc *nc, const char *path,
		   struct rpcrdma_nfsc_fh *dir, char *name, size_t cap);

/* nfs_progress.c: a progress line on stderr for get and put. */
struct progress {
	const char *pg_name;
	uint64_t pg_total;
	_Atomic uint64_t pg_done;
	struct timespec pg_start;
	bool pg_show;
	double pg_last;
};

void progress_init(struct progress *pg, const char *name, uint64_t total);
void progress_draw(struct progress *pg, bool final);

/* nfs_xfer.c: the transfer buffer (kept registered unless --per-call-mr):
 * the ring of get's READ stream or of put's WRITE stream. */
struct xfer_buf {
	uint8_t *xb_buf;
	size_t xb_len;               /* bytes */
};

/* xfer_buf_init - a buffer of @len bytes (0, -ENOMEM); xfer_buf_fini
 * releases it. */
int xfer_buf_init(struct rpcrdma_nfsc *nc, struct xfer_buf *xb, size_t len);
void xfer_buf_fini(struct rpcrdma_nfsc *nc, struct xfer_buf *xb);
/* xfer_ring - bytes of get's ring (--streams + 1 slots of rsize: the
 * READs in flight and the piece being written out) when @get, else of
 * put's (--streams slots of wsize). */
size_t xfer_ring(struct rpcrdma_nfsc *nc, bool get);
/* get_fh - the file @fh (@size bytes expected, for the progress line) into
 * @fd (STDOUT_FILENO: stdout) by windows through @xb.  0 or -errno. */
int get_fh(struct rpcrdma_nfsc *nc, struct xfer_buf *xb, const struct rpcrdma_nfsc_fh *fh,
	   const char *name, uint64_t size, int fd);
/* put_fd - @size bytes of @fd into the file @fh, UNSTABLE then COMMIT
 * (written again FILE_SYNC if the server restarted), one stream of WRITEs
 * through the first half of @xb (--streams slots of wsize).  0 or -errno. */
int put_fd(struct rpcrdma_nfsc *nc, struct xfer_buf *xb, const struct rpcrdma_nfsc_fh *fh,
	   const char *name, int fd, uint64_t size);
int cmd_get(struct rpcrdma_nfsc *nc, const char *remote, const char *local, bool cat);
int cmd_put(struct rpcrdma_nfsc *nc, const char *local, const char *remote);

/* nfs_writer.c: a thread writing get's pieces to the local file (or
 * stdout) while the next READs are in flight. */
struct writer {
	pthread_t wr_thread;
	pthread_mutex_t wr_lock;
	pthread_cond_t wr_cond;
	int wr_fd;                   /* STDOUT_FILENO: fwrite to stdout */
	const uint8_t *wr_buf;       /* the piece being written */
	uint64_t wr_len, wr_off;
	bool wr_have, wr_stop;
	int wr_err;                  /* first error (-errno) */
};

/* writer_start - the thread for @fd (0 or -errno). */
int writer_start(struct writer *w, int fd);
/* writer_submit - wait until the previous piece is written, then hand over
 * @len bytes at @buf for file offset @off (@buf stays untouched until the
 * next submit, wait or finish returns).  Return: the first write error
 * (nothing handed over then), or 0. */
int writer_submit(struct writer *w, const uint8_t *buf, uint64_t len, uint64_t off);
/* writer_wait - wait until the piece handed over is written; first error or 0. */
int writer_wait(struct writer *w);
/* writer_finish - wait, stop and join the thread; the first error or 0. */
int writer_finish(struct writer *w);

/* nfs_tree.c: get -r and put -r of a directory tree */
int cmd_get_tree(struct rpcrdma_nfsc *nc, const char *remote, const char *local);
int cmd_put_tree(struct rpcrdma_nfsc *nc, const char *local, const char *remote);

/* nfs_info.c */
int cmd_ls(struct rpcrdma_nfsc *nc, const char *path, bool lng);
int cmd_stat(struct rpcrdma_nfsc *nc, const char *path);
int cmd_df(struct rpcrdma_nfsc *nc, const char *spec);
/* The NFSv3 NULL procedure (RFC 1813 3.3.0) once; 0 when answered, else
 * the exit status after fail()'s message. */
int cmd_null(struct rpcrdma_nfsc *nc);
void print_stats(struct rpcrdma_nfsc *nc);

/* nfs_names.c */
int cmd_dirop(struct rpcrdma_nfsc *nc, const char *cmd, const char *path);
int cmd_mv(struct rpcrdma_nfsc *nc, const char *from, const char *to);
int cmd_ln(struct rpcrdma_nfsc *nc, const char *target, const char *link);
int cmd_hardlink(struct rpcrdma_nfsc *nc, const char *target, const char *link);
int cmd_chmod(struct rpcrdma_nfsc *nc, const char *mode, const char *path);
int cmd_readlink(struct rpcrdma_nfsc *nc, const char *path);

#endif /* RPCRDMA_TOOLS_NFS_H */
