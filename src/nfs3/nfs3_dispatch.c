// SPDX-License-Identifier: MIT
/*
 * nfs3_dispatch.c - the NFS version 3 dispatch (RFC 1813 section 3): one
 * table of procedures with what each one is (changes the file system,
 * may run on the transport thread, commits metadata: NFS3_PF_*), the
 * credential of the call as the caller's export entry squashes it, ro
 * entries, the result's accept status; and the server's entry point
 * (rpcrdma_nfs3_server_dispatch()), which finds the export a call's first
 * handle names in the table in force and the caller's entry of it.
 */
#include <errno.h>
#include <stdio.h>

#include "common/be.h"
#include "nfs3_internal.h"

static int proc_null(struct fs_call *c)
{
	(void)c;
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_readdir(struct fs_call *c)
{
	return nfs3_proc_readdir(c, false);
}

static int proc_readdirplus(struct fs_call *c)
{
	return nfs3_proc_readdir(c, true);
}

typedef int (*nfs3_proc_fn)(struct fs_call *c);

/* One procedure: its handler and what it is (NFS3_PF_*). */
struct nfs3_proc_desc {
	nfs3_proc_fn pd_fn;
	unsigned pd_flags;
};

#define MOD NFS3_PF_MODIFIES
#define ANY NFS3_PF_ANY_CALLER
#define SRV NFS3_PF_AS_SERVER
#define MEM NFS3_PF_MEM_FS
#define NOWAIT NFS3_PF_NOWAIT_READ
#define META NFS3_PF_COMMIT_META

static const struct nfs3_proc_desc nfs3_procs[] = {
	[NFSPROC3_NULL] = { proc_null, ANY },
	[NFSPROC3_GETATTR] = { nfs3_proc_getattr, ANY },
	[NFSPROC3_SETATTR] = { nfs3_proc_setattr, MOD | SRV | META },
	[NFSPROC3_LOOKUP] = { nfs3_proc_lookup, SRV },
	[NFSPROC3_ACCESS] = { nfs3_proc_access, SRV },
	[NFSPROC3_READLINK] = { nfs3_proc_readlink, ANY },
	[NFSPROC3_READ] = { nfs3_proc_read, SRV | NOWAIT },
	[NFSPROC3_WRITE] = { nfs3_proc_write, MOD | SRV | MEM },
	[NFSPROC3_CREATE] = { nfs3_proc_create, MOD | SRV | META },
	[NFSPROC3_MKDIR] = { nfs3_proc_mkdir, MOD | SRV | META },
	[NFSPROC3_SYMLINK] = { nfs3_proc_symlink, MOD | SRV | META },
	[NFSPROC3_MKNOD] = { nfs3_proc_mknod, MOD | SRV | META },
	[NFSPROC3_REMOVE] = { nfs3_proc_remove, MOD | SRV | META },
	[NFSPROC3_RMDIR] = { nfs3_proc_rmdir, MOD | SRV | META },
	[NFSPROC3_RENAME] = { nfs3_proc_rename, MOD | SRV | META },
	[NFSPROC3_LINK] = { nfs3_proc_link, MOD | SRV | META },
	[NFSPROC3_READDIR] = { proc_readdir, SRV | MEM },
	[NFSPROC3_READDIRPLUS] = { proc_readdirplus, SRV | MEM },
	[NFSPROC3_FSSTAT] = { nfs3_proc_fsstat, ANY },
	[NFSPROC3_FSINFO] = { nfs3_proc_fsinfo, ANY },
	[NFSPROC3_PATHCONF] = { nfs3_proc_pathconf, ANY },
	[NFSPROC3_COMMIT] = { nfs3_proc_commit, MOD | SRV | MEM },
};

#undef MOD
#undef ANY
#undef SRV
#undef MEM
#undef NOWAIT
#undef META

int nfs3_dispatch_call(struct rpcrdma_nfs3_server *srv, struct rpcrdma_svc_req *req,
		       struct rpcrdma_nfs3_export *exp,
		       const struct rpcrdma_nfs3_xopts *opts, int fh_err)
{
	struct fs_call c = {
		.c_srv = srv,
		.c_exp = exp,
		.c_req = req,
		.c_args = &req->rq_args,
		.c_res = &req->rq_res,
		.c_ro = opts->xo_ro,
		.c_fh_err = fh_err,
	};
	uint32_t proc = req->rq_msg.rm_proc;
	uint32_t auth;
	unsigned flags;
	size_t start;
	int ret;

	if (req->rq_msg.rm_vers != RPCRDMA_NFS3_VERSION)
		return RPCRDMA_SVC_PROG_MISMATCH;
	if (proc >= sizeof(nfs3_procs) / sizeof(nfs3_procs[0]))
		return RPCRDMA_SVC_PROC_UNAVAIL;
	if (proc == NFSPROC3_NULL)
		return RPCRDMA_SVC_SUCCESS;
	auth = fs_cred_from_req(opts, req, &c.c_cred);
	if (auth) {
		req->rq_auth_stat = auth;
		return RPCRDMA_SVC_AUTH_ERROR;
	}
	flags = nfs3_procs[proc].pd_flags;
	c.c_modifies = flags & NFS3_PF_MODIFIES;
	/* commit_metadata before the reply: sync entries on a disk */
	c.c_commit = (flags & NFS3_PF_COMMIT_META) && !opts->xo_async &&
		     !fs_never_waits(exp);
	fs_cred_call_begin();
	if (req->rq_transport) {
		if (!nfs3_transport_ok(exp, flags, &c.c_cred, c.c_commit))
			return RPCRDMA_SVC_DEFER;
		c.c_nowait = true;
		fs_cred_freeze(true);
	}
	start = req->rq_res.xs_pos;
	ret = nfs3_procs[proc].pd_fn(&c);
	if (c.c_nowait) {
		fs_cred_freeze(false);
		if (c.c_defer)
			return RPCRDMA_SVC_DEFER;
	}
	/* A worker keeps the caller's identity until a call needs the
	 * server's (fs_cred_for_handle()): the next call of the same
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
		.xo_async = exp->ex_async,
	};

	return nfs3_dispatch_call(NULL, req, exp, &opts, 0);
}

/*
 * first_fh_id - the export id in the call's first nfs_fh3 (it is not
 * consumed), or -1 when there is none that could carry one.
 */
static int first_fh_id(const struct rpcrdma_xdr *args)
{
	struct rpcrdma_xdr peek = *args;
	const uint8_t *fh;
	uint32_t len;

	fh = rpcrdma_xdr_get_opaque(&peek, RPCRDMA_NFS3_FHSIZE, &len);
	if (!fh || len < FS_FH_OVERHEAD || fh[0] != FS_FH_VERSION)
		return -1;
	return (int)((uint32_t)fh[2] << 8 | fh[3]);
}

int rpcrdma_nfs3_server_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	struct rpcrdma_nfs3_server *srv = arg;
	struct fs_snap *sn = fs_snap_get(srv);
	struct rpcrdma_nfs3_xopts opts = {
		.xo_ro = true,
		.xo_squash = RPCRDMA_NFS3_ALL_SQUASH,
		.xo_anonuid = RPCRDMA_NFS3_NOBODY,
		.xo_anongid = RPCRDMA_NFS3_NOBODY,
	};
	const struct sockaddr *peer = (const struct sockaddr *)&req->rq_peer;
	int id = first_fh_id(&req->rq_args), fh_err = 0, ret;
	unsigned i = 0;

	if (id >= 0) {
		i = fs_snap_index(sn, (unsigned)id);
		if (i == sn->sn_xt->xt_n) {
			i = 0; /* nothing is opened: the answer needs no export */
			fh_err = -ESTALE;
		}
	}
	if (!fh_err) {
		/* a wildcard entry may need the peer's name: the transport
		 * thread never waits for it (a miss goes to a worker, which
		 * waits a bounded time, then answers NFS3ERR_JUKEBOX: "try
		 * again later", RFC 1813 section 2.6) */
		switch (fs_exports_match_peer(sn->sn_xt, i, peer, !req->rq_transport, &opts)) {
		case FS_XM_YES:
			break;
		case FS_XM_NO:
			fh_err = -EACCES;
			break;
		case FS_XM_UNKNOWN:
			if (req->rq_transport) {
				fs_snap_put(sn);
				return RPCRDMA_SVC_DEFER;
			}
			fh_err = -EAGAIN;
			break;
		}
	}
	ret = nfs3_dispatch_call(srv, req, sn->sn_exp[i], &opts, fh_err);
	fs_snap_put(sn);
	return ret;
}
