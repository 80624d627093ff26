/* SPDX-License-Identifier: MIT */
/*
 * nfsd_exports.h - rpcrdma-nfsd's exports at start (the exports file, or
 * the table --export DIR stands for) and their reload on SIGHUP
 * (nfsd_exports.c).
 */
#ifndef RPCRDMA_TOOLS_NFSD_EXPORTS_H
#define RPCRDMA_TOOLS_NFSD_EXPORTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include <rpcrdma/nfs3.h>

#include "nfsd_opts.h"

/**
 * nfsd_exports_load - the exports table rpcrdma-nfsd starts with, into
 * *@xt (the caller frees it: rpcrdma_nfs3_exports_free()): the exports
 * file @file when not NULL (its lines' warnings and errors on stderr, a
 * warning when it has no exports), else the table --export (@cf's
 * NFSD_EXPORT) stands for: the directory (resolved with realpath(3) for
 * the posix backend; an absolute name for another --backend) to every
 * --allow network (by default loopback and the listen address's subnets),
 * read-write, with fsid=0.  @path: @cap bytes, the directory exported
 * (--export only; the "serving" line names it).
 * Return: 0, or the exit status after the message on stderr: 2 (a usage
 * error, an exports file that is missing or wrong), 1 (a directory that
 * cannot be served, out of memory, another read error).
 */
int nfsd_exports_load(const struct nfsd_conf *cf, const char *file,
		      struct rpcrdma_nfs3_exports **xt, char *path, size_t cap);

/* The thread that reloads the exports file on SIGHUP (owner prefix rl_). */
struct nfsd_reloader {
	struct rpcrdma_nfs3_server *rl_srv;
	const char *rl_file;
	pthread_t rl_thread;
	atomic_bool rl_stop;
	bool rl_running;
};

/**
 * nfsd_reloader_start - start @rl's thread: on each SIGHUP it reads @file
 * again and gives it to @srv (rpcrdma_nfs3_server_reload()), telling
 * systemd RELOADING/READY around it; a file with errors leaves the exports
 * in force (told on stderr).  SIGHUP must be blocked in every thread (the
 * thread takes it with sigwait(3)).  @file and @srv must outlive
 * nfsd_reloader_stop().
 * Return: 0, or 1 after the message on stderr (no thread).
 */
int nfsd_reloader_start(struct nfsd_reloader *rl, struct rpcrdma_nfs3_server *srv,
			const char *file);

/** nfsd_reloader_stop - end and join @rl's thread (none started: no-op). */
void nfsd_reloader_stop(struct nfsd_reloader *rl);

#endif
