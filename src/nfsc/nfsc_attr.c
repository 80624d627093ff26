// SPDX-License-Identifier: MIT
/*
 * nfsc_attr.c - the NFSv3 procedures that ask about or change one object
 * or its file system (RFC 1813 sections 3.3.0-3.3.4, 3.3.18-3.3.20): NULL,
 * GETATTR, SETATTR, ACCESS, FSSTAT, FSINFO and PATHCONF.
 */
#include <errno.h>
#include <stdlib.h>

#include "nfsc/nfsc_internal.h"

int rpcrdma_nfsc_null(struct rpcrdma_nfsc *nc)
{
	struct nfsc_call *k = nk_new(NFSPROC3_NULL);
	int rc;

	if (!k)
		return -ENOMEM;
	rc = nk_args_done(nc, k);
	if (!rc)
		rc = rpcrdma_clnt_call(nfsc_clnt_pick(nc), &k->nk_ca);
	free(k);
	return rc;
}

/* GETATTR3resok: fattr3, into @out when not NULL. */
static void decode_getattr(struct rpcrdma_xdr *x, void *out)
{
	struct rpcrdma_nfsc_attr tmp;

	nfsc_get_fattr(x, out ? out : &tmp);
}

int rpcrdma_nfsc_getattr(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			 struct rpcrdma_nfsc_attr *attr)
{
	return nk_fh_query(nc, NFSPROC3_GETATTR, fh, decode_getattr, attr);
}

int rpcrdma_nfsc_setattr(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			 const struct rpcrdma_nfsc_sattr *sa)
{
	struct nfsc_call *k = nk_new(NFSPROC3_SETATTR);
	int rc;

	if (!k)
		return -ENOMEM;
	nfsc_put_fh(&k->nk_args, fh);
	nfsc_put_sattr_full(&k->nk_args, sa);
	rpcrdma_xdr_put_u32(&k->nk_args, 0); /* guard: no ctime check */
	rc = nk_call(nc, k);
	free(k);
	return rc;
}

int rpcrdma_nfsc_access(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			uint32_t want, uint32_t *granted)
{
	struct nfsc_call *k = nk_new(NFSPROC3_ACCESS);
	int rc;

	if (!k)
		return -ENOMEM;
	nfsc_put_fh(&k->nk_args, fh);
	rpcrdma_xdr_put_u32(&k->nk_args, want);
	rc = nk_call(nc, k);
	if (!rc) {
		nfsc_get_post_op_attr(&k->nk_res, NULL);
		*granted = rpcrdma_xdr_get_u32(&k->nk_res);
		if (!rpcrdma_xdr_ok(&k->nk_res))
			rc = -EBADMSG;
	}
	free(k);
	return rc;
}

/* FSSTAT3resok (RFC 1813 3.3.18). */
static void decode_fsstat(struct rpcrdma_xdr *x, void *out)
{
	struct rpcrdma_nfsc_fsstat *st = out;

	nfsc_get_post_op_attr(x, NULL);
	st->fs_tbytes = rpcrdma_xdr_get_u64(x);
	st->fs_fbytes = rpcrdma_xdr_get_u64(x);
	st->fs_abytes = rpcrdma_xdr_get_u64(x);
	st->fs_tfiles = rpcrdma_xdr_get_u64(x);
	st->fs_ffiles = rpcrdma_xdr_get_u64(x);
	st->fs_afiles = rpcrdma_xdr_get_u64(x);
	st->fs_invarsec = rpcrdma_xdr_get_u32(x);
}

int rpcrdma_nfsc_fsstat(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			struct rpcrdma_nfsc_fsstat *st)
{
	return nk_fh_query(nc, NFSPROC3_FSSTAT, fh, decode_fsstat, st);
}

/* FSINFO3resok (RFC 1813 3.3.19). */
static void decode_fsinfo(struct rpcrdma_xdr *x, void *out)
{
	struct rpcrdma_nfsc_fsinfo *fi = out;

	nfsc_get_post_op_attr(x, NULL);
	fi->fi_rtmax = rpcrdma_xdr_get_u32(x);
	fi->fi_rtpref = rpcrdma_xdr_get_u32(x);
	fi->fi_rtmult = rpcrdma_xdr_get_u32(x);
	fi->fi_wtmax = rpcrdma_xdr_get_u32(x);
	fi->fi_wtpref = rpcrdma_xdr_get_u32(x);
	fi->fi_wtmult = rpcrdma_xdr_get_u32(x);
	fi->fi_dtpref = rpcrdma_xdr_get_u32(x);
	fi->fi_maxfilesize = rpcrdma_xdr_get_u64(x);
	rpcrdma_xdr_get_u64(x); /* time_delta */
	fi->fi_properties = rpcrdma_xdr_get_u32(x);
}

int rpcrdma_nfsc_fsinfo(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			struct rpcrdma_nfsc_fsinfo *fi)
{
	return nk_fh_query(nc, NFSPROC3_FSINFO, fh, decode_fsinfo, fi);
}

/* PATHCONF3resok (RFC 1813 3.3.20). */
static void decode_pathconf(struct rpcrdma_xdr *x, void *out)
{
	struct rpcrdma_nfsc_pathconf *pc = out;

	nfsc_get_post_op_attr(x, NULL);
	pc->pc_linkmax = rpcrdma_xdr_get_u32(x);
	pc->pc_name_max = rpcrdma_xdr_get_u32(x);
	pc->pc_no_trunc = rpcrdma_xdr_get_bool(x);
	pc->pc_chown_restricted = rpcrdma_xdr_get_bool(x);
	pc->pc_case_insensitive = rpcrdma_xdr_get_bool(x);
	pc->pc_case_preserving = rpcrdma_xdr_get_bool(x);
}

int rpcrdma_nfsc_pathconf(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			  struct rpcrdma_nfsc_pathconf *pc)
{
	return nk_fh_query(nc, NFSPROC3_PATHCONF, fh, decode_pathconf, pc);
}
