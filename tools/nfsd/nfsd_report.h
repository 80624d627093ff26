/* SPDX-License-Identifier: MIT */
/* nfsd_report.h - rpcrdma-nfsd's end-of-run report on stderr (nfsd_report.c). */
#ifndef RPCRDMA_TOOLS_NFSD_REPORT_H
#define RPCRDMA_TOOLS_NFSD_REPORT_H

#include <rpcrdma/capture.h>
#include <rpcrdma/nfs3.h>
#include <rpcrdma/nfs4.h>
#include <rpcrdma/nlm.h>

/**
 * nfsd_report_caches_nfs4 - one line each for @srv's open-file cache and
 * directory cache (those configured), then, when @srv4 is not NULL,
 * NFSv4.1's transport-thread calls, refused clients and recovery
 * (reclaims, grace refusals, client records).
 */
void nfsd_report_caches_nfs4(struct rpcrdma_nfs3_server *srv,
			     struct rpcrdma_nfs4_server *srv4);

/** nfsd_report_locks - one line of @nlm's counters (calls, grants, ...). */
void nfsd_report_locks(struct rpcrdma_nlm *nlm);

/**
 * nfsd_report_capture - close @capture (NULL: no-op; what is queued is
 * written first) and say its frames, bytes, drops, write errors and files,
 * naming @path (--capture).
 */
void nfsd_report_capture(struct rpcrdma_capture *capture, const char *path);

#endif
