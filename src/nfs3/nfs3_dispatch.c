// SPDX-License-Identifier: MIT
/*
 * nfs3_dispatch.c - the NFS version 3 dispatch (RFC 1813 section 3): one
 * table of procedures, the credential of the call as the caller's export
 * entry squashes it, ro entries, the result's accept status.
 */
#include <stdio.h>

#include "common/be.h"
#include "nfs3_internal.h"

static int proc_null(struct nfs3_call *c)
{
	(void)c;
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_readdir(struct nfs3_call *c)
{
	return nfs3_proc_readdir(c, false);
}

static int proc_readdirplus(struct nfs3_call *c)
{
	return nfs3_proc_readdir(c, true);
}

typedef int (*nfs3_proc_fn)(struct nfs3_call *c);

static const nfs3_proc_fn nfs3_procs[] = {
	[NFSPROC3_NULL] = proc_null,
	[NFSPROC3_GETATTR] = nfs3_proc_getattr,
	[NFSPROC3_SETATTR] = nfs3_proc_setattr,
	[NFSPROC3_LOOKUP] = nfs3_proc_lookup,
	[NFSPROC3_ACCESS] = nfs3_proc_access,
	[NFSPROC3_READLINK] = nfs3_proc_readlink,
	[NFSPROC3_READ] = nfs3_proc_read,
	[NFSPROC3_WRITE] = nfs3_proc_write,
	[NFSPROC3_CREATE] = nfs3_proc_create,
	[NFSPROC3_MKDIR] = nfs3_proc_mkdir,
	[NFSPROC3_SYMLINK] = nfs3_proc_symlink,
	[NFSPROC3_MKNOD] = nfs3_proc_mknod,
	[NFSPROC3_REMOVE] = nfs3_proc_remove,
	[NFSPROC3_RMDIR] = nfs3_proc_rmdir,
	[NFSPROC3_RENAME] = nfs3_proc_rename,
	[NFSPROC3_LINK] = nfs3_proc_link,
	[NFSPROC3_READDIR] = proc_readdir,
	[NFSPROC3_READDIRPLUS] = proc_readdirplus,
	[NFSPROC3_FSSTAT] = nfs3_proc_fsstat,
	[NFSPROC3_FSINFO] = nfs3_proc_fsinfo,
	[NFSPROC3_PATHCONF] = nfs3_proc_pathconf,
	[NFSPROC3_COMMIT] = nfs3_proc_commit,
};

/* The procedures that change the file system: NFS3ERR_ROFS on a ro entry. */
static bool proc_modifies(uint32_t proc)
{
	switch (proc) {
	case NFSPROC3_SETATTR:
	case NFSPROC3_WRITE:
	case NFSPROC3_CREATE:
	case NFSPROC3_MKDIR:
	case NFSPROC3_SYMLINK:
	case NFSPROC3_MKNOD:
	case NFSPROC3_REMOVE:
	case NFSPROC3_RMDIR:
	case NFSPROC3_RENAME:
	case NFSPROC3_LINK:
	case NFSPROC3_COMMIT:
		return true;
	default:
		return false;
	}
}

int nfs3_dispatch_call(struct rpcrdma_svc_req *req,
		       struct rpcrdma_nfs3_export *exp,
		       const struct rpcrdma_nfs3_xopts *opts, int fh_err)
{
	struct nfs3_call c = {
		.c_exp = exp,
		.c_req = req,
		.c_args = &req->rq_args,
		.c_res = &req->rq_res,
		.c_ro = opts->xo_ro,
		.c_fh_err = fh_err,
	};
	uint32_t proc = req->rq_msg.rm_proc;
	uint32_t auth;
	size_t start;
	int ret;

	if (req->rq_msg.rm_vers != RPCRDMA_NFS3_VERSION)
		return RPCRDMA_SVC_PROG_MISMATCH;
	if (proc >= sizeof(nfs3_procs) / sizeof(nfs3_procs[0]))
		return RPCRDMA_SVC_PROC_UNAVAIL;
	if (proc == NFSPROC3_NULL)
		return RPCRDMA_SVC_SUCCESS;
	auth = nfs3_cred_from_req(opts, req, &c.c_cred);
	if (auth) {
		req->rq_auth_stat = auth;
		return RPCRDMA_SVC_AUTH_ERROR;
	}
	c.c_modifies = proc_modifies(proc);
	nfs3_cred_call_begin();
	if (req->rq_transport) {
		if (!nfs3_transport_ok(exp, proc, &c.c_cred))
			return RPCRDMA_SVC_DEFER;
		c.c_nowait = true;
		nfs3_cred_freeze(true);
	}
	start = req->rq_res.xs_pos;
	ret = nfs3_procs[proc](&c);
	if (c.c_nowait) {
		nfs3_cred_freeze(false);
		if (c.c_defer)
			return RPCRDMA_SVC_DEFER;
	}
	/* A worker keeps the caller's identity until a call needs the
	 * server's (nfs3_cred_for_handle()): the next call of the same
	 * caller then switches nothing. */
	if (ret == RPCRDMA_SVC_SUCCESS && !rpcrdma_xdr_ok(&req->rq_res))
		ret = RPCRDMA_SVC_SYSTEM_ERR;
	/* Every NFSv3 result but NULL's starts with its nfsstat3. */
	if (ret == RPCRDMA_SVC_SUCCESS && req->rq_res.xs_pos >= start + 4)
		rpcrdma_svc_req_set_status(req, load_be32(req->rq_res.xs_base + start));
	if (exp->ex_verbose > 1)
		fprintf(exp->ex_log, "nfs3: xid %08x proc %u uid %u export %u -> %d status %u\n",
			req->rq_msg.rm_xid, proc, c.c_cred.cr_uid, exp->ex_id, ret,
			ret == RPCRDMA_SVC_SUCCESS && req->rq_res.xs_pos >= start + 4 ?
			load_be32(req->rq_res.xs_base + start) : 0);
	return ret;
}

int rpcrdma_nfs3_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	struct rpcrdma_nfs3_export *exp = arg;
	const struct rpcrdma_nfs3_xopts opts = {
		.xo_ro = false,
		.xo_squash = exp->ex_no_root_squash ? RPCRDMA_NFS3_NO_ROOT_SQUASH :
						      RPCRDMA_NFS3_ROOT_SQUASH,
		.xo_insecure = true,
		.xo_anonuid = RPCRDMA_NFS3_NOBODY,
		.xo_anongid = RPCRDMA_NFS3_NOBODY,
	};

	return nfs3_dispatch_call(req, exp, &opts, 0);
}
