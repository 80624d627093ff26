// SPDX-License-Identifier: MIT
/*
 * nfsc.c - an NFSv3 client mount's life: MOUNT the export, connect the
 * RPC-over-RDMA Requester, size reads and writes from FSINFO (RFC 1813
 * section 3.3.19); unmount; and the mount's accessors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfsc/nfsc_internal.h"

int rpcrdma_nfsc_mount(const struct rpcrdma_nfsc_config *cfg, struct rpcrdma_nfsc **out)
{
	struct rpcrdma_clnt_config ccfg;
	struct rpcrdma_nfsc_fsinfo fi;
	struct rpcrdma_nfsc *nc;
	int rc;

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
	rc = nfsc_mnt(nc, cfg);
	if (rc)
		goto err;

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
	rc = rpcrdma_clnt_create(&ccfg, &nc->nc_clnt);
	if (rc)
		goto err;
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
	rpcrdma_nfsc_umount(nc);
	return rc;
}

void rpcrdma_nfsc_umount(struct rpcrdma_nfsc *nc)
{
	if (!nc)
		return;
	rpcrdma_clnt_destroy(nc->nc_clnt);
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
	return nc->nc_clnt;
}
