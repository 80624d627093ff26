// SPDX-License-Identifier: MIT
/*
 * nfsc.c - an NFSv3 client mount's life: MOUNT the export, connect the
 * RPC-over-RDMA Requester, size reads and writes from FSINFO (RFC 1813
 * section 3.3.19); unmount; and the mount's accessors.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "nfsc/nfsc_internal.h"

int rpcrdma_nfsc_mount(const struct rpcrdma_nfsc_config *cfg, struct rpcrdma_nfsc **out)
{
	return rpcrdma_nfsc_mount_step(cfg, out, NULL);
}

int rpcrdma_nfsc_mount_step(const struct rpcrdma_nfsc_config *cfg, struct rpcrdma_nfsc **out,
			    enum rpcrdma_nfsc_step *step)
{
	enum rpcrdma_nfsc_step at = RPCRDMA_NFSC_STEP_NONE;
	struct rpcrdma_clnt_config ccfg;
	struct rpcrdma_nfsc_fsinfo fi;
	struct rpcrdma_nfsc *nc;
	unsigned i;
	int rc;

	if (step)
		*step = RPCRDMA_NFSC_STEP_NONE;
	if (!cfg || !cfg->nf_server || !cfg->nf_export)
		return -EINVAL;
	nc = calloc(1, sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	nc->nc_log = cfg->nf_log ? cfg->nf_log : stderr;
	nc->nc_verbose = cfg->nf_verbose;
	nc->nc_timeout_ms = cfg->nf_timeout_ms;
	nc->nc_rsize = cfg->nf_rsize ? cfg->nf_rsize : 1u << 20;
	nc->nc_wsize = cfg->nf_wsize ? cfg->nf_wsize : 1u << 20;
	nc->nc_export = strdup(cfg->nf_export);
	if (!nc->nc_export) {
		rc = -ENOMEM;
		goto err;
	}
	at = RPCRDMA_NFSC_STEP_MOUNT;
	rc = nfsc_mnt(nc, cfg);
	if (rc)
		goto err;
	at = RPCRDMA_NFSC_STEP_NONE;

	memset(&ccfg, 0, sizeof(ccfg));
	ccfg.cf_server = cfg->nf_server;
	ccfg.cf_port = cfg->nf_port;
	ccfg.cf_source = cfg->nf_source;
	ccfg.cf_max_credits = cfg->nf_credits;
	ccfg.cf_timeout_ms = cfg->nf_timeout_ms;
	ccfg.cf_retries = cfg->nf_retries;
	ccfg.cf_reg = cfg->nf_reg;
	ccfg.cf_remote_invalidate = cfg->nf_remote_invalidate;
	ccfg.cf_log = cfg->nf_log;
	ccfg.cf_verbose = cfg->nf_verbose;
	ccfg.cf_capture = cfg->nf_capture;
	if (cfg->nf_nconnect > RPCRDMA_NFSC_MAX_CONNECT) {
		rc = -EINVAL;
		goto err;
	}
	at = RPCRDMA_NFSC_STEP_CONNECT;
	for (i = 0; i < (cfg->nf_nconnect ? cfg->nf_nconnect : 1); i++) {
		rc = rpcrdma_clnt_create(&ccfg, &nc->nc_clnts[i]);
		if (rc)
			goto err;
		nc->nc_nconn++;
	}
	at = RPCRDMA_NFSC_STEP_FSINFO;
	rc = rpcrdma_nfsc_fsinfo(nc, &nc->nc_root, &fi);
	if (rc)
		goto err;
	if (fi.fi_rtmax && fi.fi_rtmax < nc->nc_rsize)
		nc->nc_rsize = fi.fi_rtmax;
	if (fi.fi_wtmax && fi.fi_wtmax < nc->nc_wsize)
		nc->nc_wsize = fi.fi_wtmax;
	*out = nc;
	return 0;
err:
	if (step)
		*step = at;
	rpcrdma_nfsc_umount(nc);
	return rc;
}

void rpcrdma_nfsc_umount(struct rpcrdma_nfsc *nc)
{
	unsigned i;

	if (!nc)
		return;
	for (i = 0; i < nc->nc_nconn; i++)
		rpcrdma_clnt_destroy(nc->nc_clnts[i]);
	nfsc_umnt(nc);
	free(nc->nc_export);
	free(nc);
}

void rpcrdma_nfsc_root(const struct rpcrdma_nfsc *nc, struct rpcrdma_nfsc_fh *fh)
{
	*fh = nc->nc_root;
}

uint32_t rpcrdma_nfsc_rsize(const struct rpcrdma_nfsc *nc)
{
	return nc->nc_rsize;
}

uint32_t rpcrdma_nfsc_wsize(const struct rpcrdma_nfsc *nc)
{
	return nc->nc_wsize;
}

struct rpcrdma_clnt *rpcrdma_nfsc_clnt(struct rpcrdma_nfsc *nc)
{
	return nc->nc_clnts[0];
}

struct rpcrdma_clnt *nfsc_clnt_pick(struct rpcrdma_nfsc *nc)
{
	if (nc->nc_nconn <= 1)
		return nc->nc_clnts[0];
	return nc->nc_clnts[atomic_fetch_add_explicit(&nc->nc_next, 1, memory_order_relaxed) %
			    nc->nc_nconn];
}

unsigned rpcrdma_nfsc_nconnect(const struct rpcrdma_nfsc *nc)
{
	return nc->nc_nconn;
}

struct rpcrdma_clnt *rpcrdma_nfsc_conn(struct rpcrdma_nfsc *nc, unsigned i)
{
	return i < nc->nc_nconn ? nc->nc_clnts[i] : NULL;
}

void rpcrdma_nfsc_get_stats(struct rpcrdma_nfsc *nc, struct rpcrdma_clnt_stats *st)
{
	struct rpcrdma_clnt_stats one;
	unsigned i, j;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < nc->nc_nconn; i++) {
		uint64_t *dst = (uint64_t *)st;
		const uint64_t *src = (const uint64_t *)&one;

		_Static_assert(sizeof(one) % sizeof(uint64_t) == 0,
			       "rpcrdma_clnt_stats holds uint64_t members only");
		rpcrdma_clnt_get_stats(nc->nc_clnts[i], &one);
		/* every member is a uint64_t counter or gauge */
		for (j = 0; j < sizeof(one) / sizeof(uint64_t); j++)
			dst[j] += src[j];
	}
}

int rpcrdma_nfsc_register_buffer(struct rpcrdma_nfsc *nc, void *addr, size_t len)
{
	unsigned i;
	int rc;

	for (i = 0; i < nc->nc_nconn; i++) {
		rc = rpcrdma_clnt_register_buffer(nc->nc_clnts[i], addr, len);
		if (rc) {
			while (i--)
				rpcrdma_clnt_unregister_buffer(nc->nc_clnts[i], addr);
			return rc;
		}
	}
	return 0;
}

int rpcrdma_nfsc_unregister_buffer(struct rpcrdma_nfsc *nc, void *addr)
{
	unsigned i;
	int rc, first = 0;

	for (i = 0; i < nc->nc_nconn; i++) {
		rc = rpcrdma_clnt_unregister_buffer(nc->nc_clnts[i], addr);
		if (rc && !first)
			first = rc;
	}
	return first;
}
