// SPDX-License-Identifier: MIT
/*
 * nfsc_call.c - one NFSv3 call's life over the RPC-over-RDMA Requester:
 * begin it, encode the common argument types, make it, and decode the
 * common result types (RFC 1813 sections 2.5, 2.6 and 3.3).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfsc/nfsc_internal.h"

/*
 * nfsc_status_errno - the negative errno for nfsstat3 @status (RFC 1813
 * 2.6): 0 for NFS3_OK, the errno of the same name for the NFS3ERR_* codes
 * that mirror one, -ESTALE for BADHANDLE, -EOPNOTSUPP for NOTSUPP, -EINVAL
 * for TOOSMALL, -EREMOTEIO for SERVERFAULT, -EAGAIN for JUKEBOX, -EIO for
 * anything else.
 */
int nfsc_status_errno(uint32_t status)
{
	switch (status) {
	case NFS3_OK: return 0;
	case NFS3ERR_PERM: return -EPERM;
	case NFS3ERR_NOENT: return -ENOENT;
	case NFS3ERR_IO: return -EIO;
	case NFS3ERR_NXIO: return -ENXIO;
	case NFS3ERR_ACCES: return -EACCES;
	case NFS3ERR_EXIST: return -EEXIST;
	case NFS3ERR_XDEV: return -EXDEV;
	case NFS3ERR_NODEV: return -ENODEV;
	case NFS3ERR_NOTDIR: return -ENOTDIR;
	case NFS3ERR_ISDIR: return -EISDIR;
	case NFS3ERR_INVAL: return -EINVAL;
	case NFS3ERR_FBIG: return -EFBIG;
	case NFS3ERR_NOSPC: return -ENOSPC;
	case NFS3ERR_ROFS: return -EROFS;
	case NFS3ERR_MLINK: return -EMLINK;
	case NFS3ERR_NAMETOOLONG: return -ENAMETOOLONG;
	case NFS3ERR_NOTEMPTY: return -ENOTEMPTY;
	case NFS3ERR_DQUOT: return -EDQUOT;
	case NFS3ERR_STALE: return -ESTALE;
	case NFS3ERR_REMOTE: return -EREMOTE;
	case NFS3ERR_BADHANDLE: return -ESTALE;
	case NFS3ERR_NOTSUPP: return -EOPNOTSUPP;
	case NFS3ERR_TOOSMALL: return -EINVAL;
	case NFS3ERR_SERVERFAULT: return -EREMOTEIO;
	case NFS3ERR_JUKEBOX: return -EAGAIN;
	default: return -EIO;
	}
}

/* Begin call @proc of NFS version 3 in @k (caller's memory): empty
 * arguments, results into k->nk_resbuf (NFSC_RES_INLINE bytes expected). */
void nk_begin(struct nfsc_call *k, uint32_t proc)
{
	memset(&k->nk_ca, 0, sizeof(k->nk_ca));
	k->nk_ca.ca_prog = RPCRDMA_NFS3_PROGRAM;
	k->nk_ca.ca_vers = RPCRDMA_NFS3_VERSION;
	k->nk_ca.ca_proc = proc;
	k->nk_ca.ca_res = k->nk_resbuf;
	k->nk_ca.ca_res_cap = NFSC_RES_INLINE;
	k->nk_ddp_res_max = 0;
	rpcrdma_xdr_init(&k->nk_args, k->nk_argbuf, sizeof(k->nk_argbuf));
}

/* A begun call of @proc, or NULL when out of memory; free() it. */
struct nfsc_call *nk_new(uint32_t proc)
{
	struct nfsc_call *k = malloc(sizeof(*k));

	if (k)
		nk_begin(k, proc);
	return k;
}

/* Hand the encoded arguments to the transport call; -EINVAL if they overflowed. */
int nk_args_done(struct rpcrdma_nfsc *nc, struct nfsc_call *k)
{
	if (!rpcrdma_xdr_ok(&k->nk_args))
		return -EINVAL;
	k->nk_ca.ca_args = k->nk_argbuf;
	k->nk_ca.ca_args_len = (uint32_t)k->nk_args.xs_pos;
	k->nk_ca.ca_timeout_ms = nc->nc_timeout_ms;
	return 0;
}

/*
 * nk_route - the connection for begun call @k (nfsc_clnt_pick()), and
 * whether @k's DDP-eligible result data goes in a Write chunk.  A Write
 * chunk is offered only when the largest reply k->nk_ddp_res_max allows
 * (that many results after the largest RPC reply header) does not fit the
 * connection's inline receive size, or k->nk_resbuf, whole: otherwise the
 * Responder sends the data inline (RFC 8166 3.4.2 and 3.5 leave the
 * choice to the Requester; inline saves a registration and an RDMA
 * Write).  Then ca_rddp_cap is 0 (ca_rddp stays: nfsc_take_ddp() copies
 * the data there) and ca_res_cap is that largest reply, so that no Reply
 * chunk is offered either.
 */
struct rpcrdma_clnt *nk_route(struct rpcrdma_nfsc *nc, struct nfsc_call *k)
{
	struct rpcrdma_clnt *cl = nfsc_clnt_pick(nc);
	uint64_t reply_max;

	if (!k->nk_ca.ca_rddp_cap || !k->nk_ddp_res_max)
		return cl;
	reply_max = NFSC_RPC_REPLY_HDR_MAX + k->nk_ddp_res_max;
	if (reply_max > sizeof(k->nk_resbuf) ||
	    reply_max + rpcrdma_wire_max_hdr_size(0, 0, 0, 0) > rpcrdma_clnt_inline_recv(cl))
		return cl;
	k->nk_ca.ca_rddp_cap = 0;
	k->nk_ca.ca_res_cap = (uint32_t)reply_max;
	return cl;
}

/* Position nk_res after the nfsstat3 of a completed call; map the status. */
int nk_status(struct nfsc_call *k)
{
	struct rpcrdma_clnt_call *ca = &k->nk_ca;
	uint32_t status;

	rpcrdma_xdr_init(&k->nk_res, (uint8_t *)ca->ca_res + ca->ca_res_off,
			 ca->ca_res_len - ca->ca_res_off);
	status = rpcrdma_xdr_get_u32(&k->nk_res);
	if (!rpcrdma_xdr_ok(&k->nk_res))
		return -EBADMSG;
	return nfsc_status_errno(status);
}

/*
 * Make the call; on return nk_res is positioned after the nfsstat3.
 * Return: 0 for NFS3_OK; a mapped NFS3ERR_* (nk_res then holds the
 * failure arm); -EINVAL when the arguments overflowed; a transport error.
 */
int nk_call(struct rpcrdma_nfsc *nc, struct nfsc_call *k)
{
	int rc = nk_args_done(nc, k);

	if (!rc)
		rc = rpcrdma_clnt_call(nk_route(nc, k), &k->nk_ca);
	if (rc)
		return rc;
	return nk_status(k);
}

/*
 * A procedure whose arguments are one file handle: call @proc on @fh and
 * let @decode read the resok arm into @out.  -EBADMSG when it ran short.
 */
int nk_fh_query(struct rpcrdma_nfsc *nc, uint32_t proc, const struct rpcrdma_nfsc_fh *fh,
		void (*decode)(struct rpcrdma_xdr *x, void *out), void *out)
{
	struct nfsc_call *k = nk_new(proc);
	int rc;

	if (!k)
		return -ENOMEM;
	nfsc_put_fh(&k->nk_args, fh);
	rc = nk_call(nc, k);
	if (!rc) {
		decode(&k->nk_res, out);
		if (!rpcrdma_xdr_ok(&k->nk_res))
			rc = -EBADMSG;
	}
	free(k);
	return rc;
}

/* nfs_fh3 (RFC 1813 2.5): @fh as variable-length opaque; an overflow
 * shows in rpcrdma_xdr_ok(@x). */
void nfsc_put_fh(struct rpcrdma_xdr *x, const struct rpcrdma_nfsc_fh *fh)
{
	rpcrdma_xdr_put_opaque(x, fh->fh_data, fh->fh_len);
}

/* filename3: -ENAMETOOLONG over NFSC_NAME_MAX bytes, -EINVAL when empty. */
int nfsc_put_name(struct rpcrdma_xdr *x, const char *name)
{
	size_t len = strlen(name);

	if (len > NFSC_NAME_MAX)
		return -ENAMETOOLONG;
	if (!len)
		return -EINVAL;
	rpcrdma_xdr_put_opaque(x, name, (uint32_t)len);
	return 0;
}

/* diropargs3 (RFC 1813 3.3.3): the directory's handle and a name. */
int nfsc_put_dirop(struct rpcrdma_xdr *x, const struct rpcrdma_nfsc_fh *dir,
		   const char *name)
{
	nfsc_put_fh(x, dir);
	return nfsc_put_name(x, name);
}

/* sattr3 (RFC 1813 2.6) setting the mode and, optionally, size 0. */
void nfsc_put_sattr(struct rpcrdma_xdr *x, bool set_mode, uint32_t mode, bool trunc)
{
	rpcrdma_xdr_put_u32(x, set_mode);
	if (set_mode)
		rpcrdma_xdr_put_u32(x, mode & 07777);
	rpcrdma_xdr_put_u32(x, 0); /* uid */
	rpcrdma_xdr_put_u32(x, 0); /* gid */
	rpcrdma_xdr_put_u32(x, trunc);
	if (trunc)
		rpcrdma_xdr_put_u64(x, 0);
	rpcrdma_xdr_put_u32(x, 0); /* atime: DONT_CHANGE */
	rpcrdma_xdr_put_u32(x, 0); /* mtime: DONT_CHANGE */
}

/* sattr3 from a caller's description (RFC 1813 2.6). */
void nfsc_put_sattr_full(struct rpcrdma_xdr *x, const struct rpcrdma_nfsc_sattr *sa)
{
	rpcrdma_xdr_put_u32(x, sa->sa_set_mode);
	if (sa->sa_set_mode)
		rpcrdma_xdr_put_u32(x, sa->sa_mode & 07777);
	rpcrdma_xdr_put_u32(x, sa->sa_set_uid);
	if (sa->sa_set_uid)
		rpcrdma_xdr_put_u32(x, sa->sa_uid);
	rpcrdma_xdr_put_u32(x, sa->sa_set_gid);
	if (sa->sa_set_gid)
		rpcrdma_xdr_put_u32(x, sa->sa_gid);
	rpcrdma_xdr_put_u32(x, sa->sa_set_size);
	if (sa->sa_set_size)
		rpcrdma_xdr_put_u64(x, sa->sa_size);
	rpcrdma_xdr_put_u32(x, sa->sa_atime_now ? 1 : 0); /* SET_TO_SERVER_TIME */
	rpcrdma_xdr_put_u32(x, sa->sa_mtime_now ? 1 : 0);
}

/* fattr3 (RFC 1813 2.6). */
void nfsc_get_fattr(struct rpcrdma_xdr *x, struct rpcrdma_nfsc_attr *a)
{
	a->at_type = rpcrdma_xdr_get_u32(x);
	a->at_mode = rpcrdma_xdr_get_u32(x);
	a->at_nlink = rpcrdma_xdr_get_u32(x);
	a->at_uid = rpcrdma_xdr_get_u32(x);
	a->at_gid = rpcrdma_xdr_get_u32(x);
	a->at_size = rpcrdma_xdr_get_u64(x);
	a->at_used = rpcrdma_xdr_get_u64(x);
	a->at_rdev_major = rpcrdma_xdr_get_u32(x);
	a->at_rdev_minor = rpcrdma_xdr_get_u32(x);
	a->at_fsid = rpcrdma_xdr_get_u64(x);
	a->at_fileid = rpcrdma_xdr_get_u64(x);
	a->at_atime_s = rpcrdma_xdr_get_u32(x);
	a->at_atime_ns = rpcrdma_xdr_get_u32(x);
	a->at_mtime_s = rpcrdma_xdr_get_u32(x);
	a->at_mtime_ns = rpcrdma_xdr_get_u32(x);
	a->at_ctime_s = rpcrdma_xdr_get_u32(x);
	a->at_ctime_ns = rpcrdma_xdr_get_u32(x);
}

/* post_op_attr: true when attributes followed (decoded into @a, if any). */
bool nfsc_get_post_op_attr(struct rpcrdma_xdr *x, struct rpcrdma_nfsc_attr *a)
{
	struct rpcrdma_nfsc_attr tmp;

	if (!rpcrdma_xdr_get_bool(x))
		return false;
	nfsc_get_fattr(x, a ? a : &tmp);
	return rpcrdma_xdr_ok(x);
}

/* wcc_data (RFC 1813 2.6): read past it. */
void nfsc_skip_wcc(struct rpcrdma_xdr *x)
{
	if (rpcrdma_xdr_get_bool(x))
		rpcrdma_xdr_get_fixed(x, 24); /* wcc_attr: size, mtime, ctime */
	nfsc_get_post_op_attr(x, NULL);
}

/* nfs_fh3 (RFC 1813 2.5) into @fh; false when short or too long. */
bool nfsc_get_fh(struct rpcrdma_xdr *x, struct rpcrdma_nfsc_fh *fh)
{
	const uint8_t *p;
	uint32_t len;

	p = rpcrdma_xdr_get_opaque(x, RPCRDMA_NFSC_FHSIZE, &len);
	if (!p)
		return false;
	fh->fh_len = len;
	memcpy(fh->fh_data, p, len);
	return true;
}

/* post_op_fh3: true when a handle followed. */
bool nfsc_get_post_op_fh(struct rpcrdma_xdr *x, struct rpcrdma_nfsc_fh *fh)
{
	if (!rpcrdma_xdr_get_bool(x))
		return false;
	return nfsc_get_fh(x, fh);
}

/*
 * Take DDP-eligible result data whose length word was just decoded: it is
 * in the Write chunk when the Responder used it, or inline (then copied to
 * @dst) when it did not.  @len and @cap in bytes.
 * Return: 0; -EBADMSG when @len exceeds @cap, the Responder wrote a
 * different amount into the Write chunk than @len, or the inline data is
 * short.
 */
int nfsc_take_ddp(struct nfsc_call *k, uint32_t len, void *dst, uint32_t cap)
{
	const uint8_t *p;

	if (len > cap)
		return -EBADMSG;
	if (k->nk_ca.ca_rddp_used && k->nk_ca.ca_rddp_len == len)
		return 0;
	if (k->nk_ca.ca_rddp_len)
		return -EBADMSG; /* wrote a different amount than it reports */
	p = rpcrdma_xdr_get_fixed(&k->nk_res, len);
	if (!p)
		return -EBADMSG;
	memcpy(dst, p, len);
	return 0;
}
