// SPDX-License-Identifier: MIT
/*
 * nfsc_proc.c - NFSv3 procedures (RFC 1813 section 3.3) over the
 * RPC-over-RDMA Requester, with NFS READ and READLINK data placed by the
 * server straight into the caller's buffer (Write chunk) and NFS WRITE
 * data read from it (Read chunk), as RFC 8267 marks them DDP-eligible.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nfsc/nfsc_internal.h"

/* Arguments never exceed this: two handles, two names, a sattr3. */
#define NFSC_ARGS_MAX 1024u
/* Results of every procedure but READDIRPLUS fit here, inline. */
#define NFSC_RES_INLINE 2048u
/* READDIRPLUS reply size asked for (maxcount) and its dircount. */
#define NFSC_RDP_MAXCOUNT 32768u
#define NFSC_RDP_DIRCOUNT 8192u
#define NFSC_NAME_MAX 255u
#define NFSC_PATH_MAX 4096u

/* One call being built: arguments, results, and the transport's call. */
struct nfsc_call {
	struct rpcrdma_clnt_call nk_ca;
	struct rpcrdma_xdr nk_args;
	struct rpcrdma_xdr nk_res;   /* after the status word */
	uint8_t nk_argbuf[NFSC_ARGS_MAX];
	uint8_t nk_resbuf[NFSC_RES_INLINE];
};

int nfsc_status_errno(uint32_t status)
{
	switch (status) {
	case 0: return 0;
	case 1: return -EPERM;
	case 2: return -ENOENT;
	case 5: return -EIO;
	case 6: return -ENXIO;
	case 13: return -EACCES;
	case 17: return -EEXIST;
	case 18: return -EXDEV;
	case 19: return -ENODEV;
	case 20: return -ENOTDIR;
	case 21: return -EISDIR;
	case 22: return -EINVAL;
	case 27: return -EFBIG;
	case 28: return -ENOSPC;
	case 30: return -EROFS;
	case 31: return -EMLINK;
	case 63: return -ENAMETOOLONG;
	case 66: return -ENOTEMPTY;
	case 69: return -EDQUOT;
	case 70: return -ESTALE;
	case 71: return -EREMOTE;
	case 10001: return -ESTALE;     /* BADHANDLE */
	case 10004: return -EOPNOTSUPP; /* NOTSUPP */
	case 10005: return -EINVAL;     /* TOOSMALL */
	case 10006: return -EREMOTEIO;  /* SERVERFAULT */
	case 10008: return -EAGAIN;     /* JUKEBOX */
	default: return -EIO;
	}
}

static void nk_begin(struct nfsc_call *k, uint32_t proc)
{
	memset(&k->nk_ca, 0, sizeof(k->nk_ca));
	k->nk_ca.ca_prog = NFSC_PROGRAM;
	k->nk_ca.ca_vers = NFSC_VERSION;
	k->nk_ca.ca_proc = proc;
	k->nk_ca.ca_res = k->nk_resbuf;
	k->nk_ca.ca_res_cap = sizeof(k->nk_resbuf);
	rpcrdma_xdr_init(&k->nk_args, k->nk_argbuf, sizeof(k->nk_argbuf));
}

static void put_fh(struct rpcrdma_xdr *x, const struct rpcrdma_nfsc_fh *fh)
{
	rpcrdma_xdr_put_opaque(x, fh->fh_data, fh->fh_len);
}

static int put_name(struct rpcrdma_xdr *x, const char *name)
{
	size_t len = strlen(name);

	if (len > NFSC_NAME_MAX)
		return -ENAMETOOLONG;
	if (!len)
		return -EINVAL;
	rpcrdma_xdr_put_opaque(x, name, (uint32_t)len);
	return 0;
}

/* sattr3 (RFC 1813 2.6) setting the mode and, optionally, size 0. */
static void put_sattr(struct rpcrdma_xdr *x, bool set_mode, uint32_t mode, bool trunc)
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

/* Position nk_res after the nfsstat3 of a completed call; map the status. */
static int nk_status(struct nfsc_call *k)
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
 * failure arm); a transport error.
 */
static int nk_call(struct rpcrdma_nfsc *nc, struct nfsc_call *k)
{
	struct rpcrdma_clnt_call *ca = &k->nk_ca;
	int rc;

	if (!rpcrdma_xdr_ok(&k->nk_args))
		return -EINVAL;
	ca->ca_args = k->nk_argbuf;
	ca->ca_args_len = (uint32_t)k->nk_args.xs_pos;
	ca->ca_timeout_ms = nc->nc_timeout_ms;
	rc = rpcrdma_clnt_call(nc->nc_clnt, ca);
	if (rc)
		return rc;
	return nk_status(k);
}

static void get_fattr(struct rpcrdma_xdr *x, struct rpcrdma_nfsc_attr *a)
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
static bool get_post_op_attr(struct rpcrdma_xdr *x, struct rpcrdma_nfsc_attr *a)
{
	struct rpcrdma_nfsc_attr tmp;

	if (!rpcrdma_xdr_get_bool(x))
		return false;
	get_fattr(x, a ? a : &tmp);
	return rpcrdma_xdr_ok(x);
}

static void skip_wcc(struct rpcrdma_xdr *x)
{
	if (rpcrdma_xdr_get_bool(x))
		rpcrdma_xdr_get_fixed(x, 24); /* wcc_attr: size, mtime, ctime */
	get_post_op_attr(x, NULL);
}

static bool get_fh(struct rpcrdma_xdr *x, struct rpcrdma_nfsc_fh *fh)
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
static bool get_post_op_fh(struct rpcrdma_xdr *x, struct rpcrdma_nfsc_fh *fh)
{
	if (!rpcrdma_xdr_get_bool(x))
		return false;
	return get_fh(x, fh);
}

/* ---- public procedures ---- */

int rpcrdma_nfsc_null(struct rpcrdma_nfsc *nc)
{
	struct nfsc_call *k = malloc(sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_NULL);
	k->nk_ca.ca_args = k->nk_argbuf;
	k->nk_ca.ca_timeout_ms = nc->nc_timeout_ms;
	rc = rpcrdma_clnt_call(nc->nc_clnt, &k->nk_ca);
	free(k);
	return rc;
}

int rpcrdma_nfsc_getattr(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			 struct rpcrdma_nfsc_attr *attr)
{
	struct nfsc_call *k = malloc(sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_GETATTR);
	put_fh(&k->nk_args, fh);
	rc = nk_call(nc, k);
	if (!rc) {
		struct rpcrdma_nfsc_attr tmp;

		get_fattr(&k->nk_res, attr ? attr : &tmp);
		if (!rpcrdma_xdr_ok(&k->nk_res))
			rc = -EBADMSG;
	}
	free(k);
	return rc;
}

int rpcrdma_nfsc_lookup(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			const char *name, struct rpcrdma_nfsc_fh *fh,
			struct rpcrdma_nfsc_attr *attr)
{
	struct nfsc_call *k = malloc(sizeof(*k));
	bool have_attr;
	int rc;

	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_LOOKUP);
	put_fh(&k->nk_args, dir);
	rc = put_name(&k->nk_args, name);
	if (!rc)
		rc = nk_call(nc, k);
	if (!rc) {
		if (!get_fh(&k->nk_res, fh)) {
			rc = -EBADMSG;
			goto out;
		}
		have_attr = get_post_op_attr(&k->nk_res, attr);
		if (!rpcrdma_xdr_ok(&k->nk_res))
			rc = -EBADMSG;
		else if (attr && !have_attr)
			rc = rpcrdma_nfsc_getattr(nc, fh, attr);
	}
out:
	free(k);
	return rc;
}

int rpcrdma_nfsc_lookup_path(struct rpcrdma_nfsc *nc, const char *path,
			     struct rpcrdma_nfsc_fh *fh, struct rpcrdma_nfsc_attr *attr)
{
	struct rpcrdma_nfsc_fh cur = nc->nc_root, next;
	char name[NFSC_NAME_MAX + 1];
	const char *p = path, *e;
	int rc;

	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		if (!e)
			e = p + strlen(p);
		if ((size_t)(e - p) > NFSC_NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, p, (size_t)(e - p));
		name[e - p] = '\0';
		p = e;
		if (!strcmp(name, "."))
			continue;
		rc = rpcrdma_nfsc_lookup(nc, &cur, name, &next, NULL);
		if (rc)
			return rc;
		cur = next;
	}
	*fh = cur;
	return attr ? rpcrdma_nfsc_getattr(nc, fh, attr) : 0;
}

int rpcrdma_nfsc_access(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			uint32_t want, uint32_t *granted)
{
	struct nfsc_call *k = malloc(sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_ACCESS);
	put_fh(&k->nk_args, fh);
	rpcrdma_xdr_put_u32(&k->nk_args, want);
	rc = nk_call(nc, k);
	if (!rc) {
		get_post_op_attr(&k->nk_res, NULL);
		*granted = rpcrdma_xdr_get_u32(&k->nk_res);
		if (!rpcrdma_xdr_ok(&k->nk_res))
			rc = -EBADMSG;
	}
	free(k);
	return rc;
}

/*
 * Take DDP-eligible result data whose length word was just decoded: it is
 * in the Write chunk when the Responder used it, or inline (then copied to
 * @dst) when it did not.
 */
static int take_ddp(struct nfsc_call *k, uint32_t len, void *dst, uint32_t cap)
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

int rpcrdma_nfsc_read(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
		      uint64_t offset, void *buf, uint32_t count,
		      uint32_t *nread, bool *eof)
{
	struct nfsc_call *k;
	uint32_t got, len;
	bool e;
	int rc;

	if (count > nc->nc_rsize || (count && !buf))
		return -EINVAL;
	k = malloc(sizeof(*k));
	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_READ);
	put_fh(&k->nk_args, fh);
	rpcrdma_xdr_put_u64(&k->nk_args, offset);
	rpcrdma_xdr_put_u32(&k->nk_args, count);
	k->nk_ca.ca_rddp = buf;
	k->nk_ca.ca_rddp_cap = count;
	rc = nk_call(nc, k);
	if (!rc) {
		get_post_op_attr(&k->nk_res, NULL);
		got = rpcrdma_xdr_get_u32(&k->nk_res);
		e = rpcrdma_xdr_get_bool(&k->nk_res);
		len = rpcrdma_xdr_get_u32(&k->nk_res);
		if (!rpcrdma_xdr_ok(&k->nk_res) || got != len)
			rc = -EBADMSG;
		else
			rc = take_ddp(k, len, buf, count);
		if (!rc) {
			*nread = got;
			if (eof)
				*eof = e;
		}
	}
	free(k);
	return rc;
}

int rpcrdma_nfsc_write(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
		       uint64_t offset, const void *buf, uint32_t count,
		       uint32_t stable, uint32_t *written, uint8_t verf[8])
{
	struct nfsc_call *k;
	const uint8_t *v;
	int rc;

	if (count > nc->nc_wsize || (count && !buf) || stable > 2)
		return -EINVAL;
	k = malloc(sizeof(*k));
	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_WRITE);
	put_fh(&k->nk_args, fh);
	rpcrdma_xdr_put_u64(&k->nk_args, offset);
	rpcrdma_xdr_put_u32(&k->nk_args, count);
	rpcrdma_xdr_put_u32(&k->nk_args, stable);
	rpcrdma_xdr_put_u32(&k->nk_args, count); /* data<>: length word ends ca_args */
	k->nk_ca.ca_ddp = buf;
	k->nk_ca.ca_ddp_len = count;
	rc = nk_call(nc, k);
	if (!rc) {
		skip_wcc(&k->nk_res);
		*written = rpcrdma_xdr_get_u32(&k->nk_res);
		rpcrdma_xdr_get_u32(&k->nk_res); /* committed */
		v = rpcrdma_xdr_get_fixed(&k->nk_res, 8);
		if (!v || *written > count)
			rc = -EBADMSG;
		else if (verf)
			memcpy(verf, v, 8);
	}
	free(k);
	return rc;
}

/* CREATE, MKDIR and SYMLINK results: post_op_fh3, post_op_attr, wcc_data. */
static int get_diropres(struct rpcrdma_nfsc *nc, struct nfsc_call *k,
			const struct rpcrdma_nfsc_fh *dir, const char *name,
			struct rpcrdma_nfsc_fh *fh)
{
	struct rpcrdma_nfsc_fh tmp;
	bool have;

	have = get_post_op_fh(&k->nk_res, fh ? fh : &tmp);
	if (!rpcrdma_xdr_ok(&k->nk_res))
		return -EBADMSG;
	if (!have && fh)
		return rpcrdma_nfsc_lookup(nc, dir, name, fh, NULL);
	return 0;
}

int rpcrdma_nfsc_create(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			const char *name, uint32_t mode, bool truncate,
			struct rpcrdma_nfsc_fh *fh)
{
	struct nfsc_call *k = malloc(sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_CREATE);
	put_fh(&k->nk_args, dir);
	rc = put_name(&k->nk_args, name);
	rpcrdma_xdr_put_u32(&k->nk_args, 0); /* UNCHECKED */
	put_sattr(&k->nk_args, true, mode, truncate);
	if (!rc)
		rc = nk_call(nc, k);
	if (!rc)
		rc = get_diropres(nc, k, dir, name, fh);
	free(k);
	return rc;
}

int rpcrdma_nfsc_mkdir(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
		       const char *name, uint32_t mode, struct rpcrdma_nfsc_fh *fh)
{
	struct nfsc_call *k = malloc(sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_MKDIR);
	put_fh(&k->nk_args, dir);
	rc = put_name(&k->nk_args, name);
	put_sattr(&k->nk_args, true, mode, false);
	if (!rc)
		rc = nk_call(nc, k);
	if (!rc)
		rc = get_diropres(nc, k, dir, name, fh);
	free(k);
	return rc;
}

int rpcrdma_nfsc_symlink(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			 const char *name, const char *target)
{
	size_t tlen = strlen(target);
	struct nfsc_call *k;
	int rc;

	if (tlen >= NFSC_PATH_MAX)
		return -ENAMETOOLONG;
	k = malloc(sizeof(*k));
	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_SYMLINK);
	put_fh(&k->nk_args, dir);
	rc = put_name(&k->nk_args, name);
	put_sattr(&k->nk_args, true, 0777, false);
	/* symlink_data: its length word ends ca_args, the bytes are DDP-eligible */
	rpcrdma_xdr_put_u32(&k->nk_args, (uint32_t)tlen);
	k->nk_ca.ca_ddp = target;
	k->nk_ca.ca_ddp_len = (uint32_t)tlen;
	if (!rc)
		rc = nk_call(nc, k);
	if (!rc)
		rc = get_diropres(nc, k, dir, name, NULL);
	free(k);
	return rc;
}

int rpcrdma_nfsc_readlink(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			  char *buf, uint32_t cap)
{
	struct nfsc_call *k;
	uint32_t len;
	int rc;

	if (cap < 2)
		return -EINVAL;
	k = malloc(sizeof(*k));
	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_READLINK);
	put_fh(&k->nk_args, fh);
	k->nk_ca.ca_rddp = buf;
	k->nk_ca.ca_rddp_cap = cap - 1;
	rc = nk_call(nc, k);
	if (!rc) {
		get_post_op_attr(&k->nk_res, NULL);
		len = rpcrdma_xdr_get_u32(&k->nk_res);
		if (!rpcrdma_xdr_ok(&k->nk_res))
			rc = -EBADMSG;
		else if (len >= cap)
			rc = -ENAMETOOLONG;
		else
			rc = take_ddp(k, len, buf, cap - 1);
		if (!rc)
			buf[len] = '\0';
	}
	free(k);
	return rc;
}

static int remove_common(struct rpcrdma_nfsc *nc, uint32_t proc,
			 const struct rpcrdma_nfsc_fh *dir, const char *name)
{
	struct nfsc_call *k = malloc(sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	nk_begin(k, proc);
	put_fh(&k->nk_args, dir);
	rc = put_name(&k->nk_args, name);
	if (!rc)
		rc = nk_call(nc, k);
	free(k);
	return rc;
}

int rpcrdma_nfsc_remove(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			const char *name)
{
	return remove_common(nc, NFSPROC3_REMOVE, dir, name);
}

int rpcrdma_nfsc_rmdir(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
		       const char *name)
{
	return remove_common(nc, NFSPROC3_RMDIR, dir, name);
}

int rpcrdma_nfsc_rename(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *from_dir,
			const char *from, const struct rpcrdma_nfsc_fh *to_dir,
			const char *to)
{
	struct nfsc_call *k = malloc(sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_RENAME);
	put_fh(&k->nk_args, from_dir);
	rc = put_name(&k->nk_args, from);
	put_fh(&k->nk_args, to_dir);
	if (!rc)
		rc = put_name(&k->nk_args, to);
	if (!rc)
		rc = nk_call(nc, k);
	free(k);
	return rc;
}

int rpcrdma_nfsc_readdirplus(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			     rpcrdma_nfsc_readdir_fn fn, void *arg)
{
	uint32_t res_cap = NFSC_RDP_MAXCOUNT + 1024;
	uint8_t cookieverf[8] = { 0 };
	uint64_t cookie = 0;
	struct nfsc_call *k;
	uint8_t *res;
	bool eof = false;
	int rc = 0;

	k = malloc(sizeof(*k));
	res = malloc(res_cap);
	if (!k || !res) {
		rc = -ENOMEM;
		goto out;
	}
	while (!eof) {
		struct rpcrdma_xdr *x = &k->nk_res;
		unsigned entries = 0;
		const uint8_t *v;

		nk_begin(k, NFSPROC3_READDIRPLUS);
		k->nk_ca.ca_res = res;
		k->nk_ca.ca_res_cap = res_cap;
		put_fh(&k->nk_args, dir);
		rpcrdma_xdr_put_u64(&k->nk_args, cookie);
		rpcrdma_xdr_put_fixed(&k->nk_args, cookieverf, 8);
		rpcrdma_xdr_put_u32(&k->nk_args, NFSC_RDP_DIRCOUNT);
		rpcrdma_xdr_put_u32(&k->nk_args, NFSC_RDP_MAXCOUNT);
		rc = nk_call(nc, k);
		if (rc)
			goto out;
		get_post_op_attr(x, NULL);
		v = rpcrdma_xdr_get_fixed(x, 8);
		if (!v) {
			rc = -EBADMSG;
			goto out;
		}
		memcpy(cookieverf, v, 8);
		while (rpcrdma_xdr_get_bool(x)) {
			struct rpcrdma_nfsc_attr attr;
			struct rpcrdma_nfsc_fh fh;
			char name[NFSC_NAME_MAX + 1];
			const uint8_t *np;
			uint64_t fileid;
			uint32_t nlen;
			bool ha, hf;

			fileid = rpcrdma_xdr_get_u64(x);
			np = rpcrdma_xdr_get_opaque(x, NFSC_NAME_MAX, &nlen);
			cookie = rpcrdma_xdr_get_u64(x);
			ha = get_post_op_attr(x, &attr);
			hf = get_post_op_fh(x, &fh);
			if (!np || !rpcrdma_xdr_ok(x)) {
				rc = -EBADMSG;
				goto out;
			}
			memcpy(name, np, nlen);
			name[nlen] = '\0';
			entries++;
			rc = fn(name, fileid, ha ? &attr : NULL, hf ? &fh : NULL, arg);
			if (rc)
				goto out;
		}
		eof = rpcrdma_xdr_get_bool(x);
		if (!rpcrdma_xdr_ok(x)) {
			rc = -EBADMSG;
			goto out;
		}
		if (!eof && !entries) {
			rc = -EIO; /* no progress: would loop for ever */
			goto out;
		}
	}
out:
	free(res);
	free(k);
	return rc;
}

int rpcrdma_nfsc_fsstat(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			struct rpcrdma_nfsc_fsstat *st)
{
	struct nfsc_call *k = malloc(sizeof(*k));
	struct rpcrdma_xdr *x;
	int rc;

	if (!k)
		return -ENOMEM;
	x = &k->nk_res;
	nk_begin(k, NFSPROC3_FSSTAT);
	put_fh(&k->nk_args, fh);
	rc = nk_call(nc, k);
	if (!rc) {
		get_post_op_attr(x, NULL);
		st->fs_tbytes = rpcrdma_xdr_get_u64(x);
		st->fs_fbytes = rpcrdma_xdr_get_u64(x);
		st->fs_abytes = rpcrdma_xdr_get_u64(x);
		st->fs_tfiles = rpcrdma_xdr_get_u64(x);
		st->fs_ffiles = rpcrdma_xdr_get_u64(x);
		st->fs_afiles = rpcrdma_xdr_get_u64(x);
		st->fs_invarsec = rpcrdma_xdr_get_u32(x);
		if (!rpcrdma_xdr_ok(x))
			rc = -EBADMSG;
	}
	free(k);
	return rc;
}

int rpcrdma_nfsc_fsinfo(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			struct rpcrdma_nfsc_fsinfo *fi)
{
	struct nfsc_call *k = malloc(sizeof(*k));
	struct rpcrdma_xdr *x;
	int rc;

	if (!k)
		return -ENOMEM;
	x = &k->nk_res;
	nk_begin(k, NFSPROC3_FSINFO);
	put_fh(&k->nk_args, fh);
	rc = nk_call(nc, k);
	if (!rc) {
		get_post_op_attr(x, NULL);
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
		if (!rpcrdma_xdr_ok(x))
			rc = -EBADMSG;
	}
	free(k);
	return rc;
}

int rpcrdma_nfsc_commit(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			uint64_t offset, uint32_t count, uint8_t verf[8])
{
	struct nfsc_call *k = malloc(sizeof(*k));
	const uint8_t *v;
	int rc;

	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_COMMIT);
	put_fh(&k->nk_args, fh);
	rpcrdma_xdr_put_u64(&k->nk_args, offset);
	rpcrdma_xdr_put_u32(&k->nk_args, count);
	rc = nk_call(nc, k);
	if (!rc) {
		skip_wcc(&k->nk_res);
		v = rpcrdma_xdr_get_fixed(&k->nk_res, 8);
		if (!v)
			rc = -EBADMSG;
		else if (verf)
			memcpy(verf, v, 8);
	}
	free(k);
	return rc;
}

/* sattr3 from a caller's description (RFC 1813 2.6). */
static void put_sattr_full(struct rpcrdma_xdr *x, const struct rpcrdma_nfsc_sattr *sa)
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

int rpcrdma_nfsc_setattr(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			 const struct rpcrdma_nfsc_sattr *sa)
{
	struct nfsc_call *k = malloc(sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_SETATTR);
	put_fh(&k->nk_args, fh);
	put_sattr_full(&k->nk_args, sa);
	rpcrdma_xdr_put_u32(&k->nk_args, 0); /* guard: no ctime check */
	rc = nk_call(nc, k);
	free(k);
	return rc;
}

int rpcrdma_nfsc_link(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
		      const struct rpcrdma_nfsc_fh *dir, const char *name)
{
	struct nfsc_call *k = malloc(sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_LINK);
	put_fh(&k->nk_args, fh);
	put_fh(&k->nk_args, dir);
	rc = put_name(&k->nk_args, name);
	if (!rc)
		rc = nk_call(nc, k);
	free(k);
	return rc;
}

int rpcrdma_nfsc_mknod(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
		       const char *name, uint32_t type, uint32_t mode, uint32_t major,
		       uint32_t minor)
{
	struct nfsc_call *k;
	int rc;

	if (type != NFSC_CHR && type != NFSC_BLK && type != NFSC_SOCK && type != NFSC_FIFO)
		return -EINVAL;
	k = malloc(sizeof(*k));
	if (!k)
		return -ENOMEM;
	nk_begin(k, NFSPROC3_MKNOD);
	put_fh(&k->nk_args, dir);
	rc = put_name(&k->nk_args, name);
	rpcrdma_xdr_put_u32(&k->nk_args, type);
	put_sattr(&k->nk_args, true, mode, false);
	if (type == NFSC_CHR || type == NFSC_BLK) {
		rpcrdma_xdr_put_u32(&k->nk_args, major);
		rpcrdma_xdr_put_u32(&k->nk_args, minor);
	}
	if (!rc)
		rc = nk_call(nc, k);
	free(k);
	return rc;
}

int rpcrdma_nfsc_readdir(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			 rpcrdma_nfsc_readdir_fn fn, void *arg)
{
	uint32_t res_cap = NFSC_RDP_DIRCOUNT + 1024;
	uint8_t cookieverf[8] = { 0 };
	uint64_t cookie = 0;
	struct nfsc_call *k;
	uint8_t *res;
	bool eof = false;
	int rc = 0;

	k = malloc(sizeof(*k));
	res = malloc(res_cap);
	if (!k || !res) {
		rc = -ENOMEM;
		goto out;
	}
	while (!eof) {
		struct rpcrdma_xdr *x = &k->nk_res;
		unsigned entries = 0;
		const uint8_t *v;

		nk_begin(k, NFSPROC3_READDIR);
		k->nk_ca.ca_res = res;
		k->nk_ca.ca_res_cap = res_cap;
		put_fh(&k->nk_args, dir);
		rpcrdma_xdr_put_u64(&k->nk_args, cookie);
		rpcrdma_xdr_put_fixed(&k->nk_args, cookieverf, 8);
		rpcrdma_xdr_put_u32(&k->nk_args, NFSC_RDP_DIRCOUNT);
		rc = nk_call(nc, k);
		if (rc)
			goto out;
		get_post_op_attr(x, NULL);
		v = rpcrdma_xdr_get_fixed(x, 8);
		if (!v) {
			rc = -EBADMSG;
			goto out;
		}
		memcpy(cookieverf, v, 8);
		while (rpcrdma_xdr_get_bool(x)) {
			char name[NFSC_NAME_MAX + 1];
			const uint8_t *np;
			uint64_t fileid;
			uint32_t nlen;

			fileid = rpcrdma_xdr_get_u64(x);
			np = rpcrdma_xdr_get_opaque(x, NFSC_NAME_MAX, &nlen);
			cookie = rpcrdma_xdr_get_u64(x);
			if (!np || !rpcrdma_xdr_ok(x)) {
				rc = -EBADMSG;
				goto out;
			}
			memcpy(name, np, nlen);
			name[nlen] = '\0';
			entries++;
			rc = fn(name, fileid, NULL, NULL, arg);
			if (rc)
				goto out;
		}
		eof = rpcrdma_xdr_get_bool(x);
		if (!rpcrdma_xdr_ok(x)) {
			rc = -EBADMSG;
			goto out;
		}
		if (!eof && !entries) {
			rc = -EIO;
			goto out;
		}
	}
out:
	free(res);
	free(k);
	return rc;
}

int rpcrdma_nfsc_pathconf(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			  struct rpcrdma_nfsc_pathconf *pc)
{
	struct nfsc_call *k = malloc(sizeof(*k));
	struct rpcrdma_xdr *x;
	int rc;

	if (!k)
		return -ENOMEM;
	x = &k->nk_res;
	nk_begin(k, NFSPROC3_PATHCONF);
	put_fh(&k->nk_args, fh);
	rc = nk_call(nc, k);
	if (!rc) {
		get_post_op_attr(x, NULL);
		pc->pc_linkmax = rpcrdma_xdr_get_u32(x);
		pc->pc_name_max = rpcrdma_xdr_get_u32(x);
		pc->pc_no_trunc = rpcrdma_xdr_get_bool(x);
		pc->pc_chown_restricted = rpcrdma_xdr_get_bool(x);
		pc->pc_case_insensitive = rpcrdma_xdr_get_bool(x);
		pc->pc_case_preserving = rpcrdma_xdr_get_bool(x);
		if (!rpcrdma_xdr_ok(x))
			rc = -EBADMSG;
	}
	free(k);
	return rc;
}

/* ---- pipelined READ and WRITE ---- */

struct nfsc_pipe;

/* One READ or WRITE in flight. */
struct nfsc_slot {
	struct nfsc_call ps_k;
	struct nfsc_pipe *ps_pipe;
	struct nfsc_slot *ps_next;   /* free list */
	uint64_t ps_piece;           /* index of the piece */
};

/* Per-piece outcome. */
struct nfsc_piece {
	uint32_t pc_done;            /* bytes read or written */
	bool pc_eof;
};

struct nfsc_pipe {
	struct rpcrdma_nfsc *np_nc;
	pthread_mutex_t np_lock;
	pthread_cond_t np_cond;
	struct nfsc_slot *np_free;
	unsigned np_inflight;
	int np_err;                  /* first error */
	bool np_write;
	uint64_t np_offset;          /* file offset of piece 0 */
	uint8_t *np_buf;
	uint64_t np_len;
	uint32_t np_piece_len;       /* rsize or wsize */
	struct nfsc_piece *np_pieces;
	uint8_t np_verf[8];
	bool np_verf_set, np_verf_changed;
};

static uint32_t piece_len(const struct nfsc_pipe *np, uint64_t i)
{
	uint64_t left = np->np_len - i * np->np_piece_len;

	return left < np->np_piece_len ? (uint32_t)left : np->np_piece_len;
}

/* Completion callback: decode the results into the piece's record. */
static void nfsc_pipe_done(struct rpcrdma_clnt_call *ca, int status, void *arg)
{
	struct nfsc_slot *ps = arg;
	struct nfsc_pipe *np = ps->ps_pipe;
	struct nfsc_call *k = &ps->ps_k;
	struct nfsc_piece *pc = &np->np_pieces[ps->ps_piece];
	uint32_t len = piece_len(np, ps->ps_piece), got = 0, n;
	const uint8_t *v = NULL;
	bool eof = false;
	int rc = status;

	(void)ca;
	if (!rc)
		rc = nk_status(k);
	if (!rc && !np->np_write) {
		get_post_op_attr(&k->nk_res, NULL);
		got = rpcrdma_xdr_get_u32(&k->nk_res);
		eof = rpcrdma_xdr_get_bool(&k->nk_res);
		n = rpcrdma_xdr_get_u32(&k->nk_res);
		if (!rpcrdma_xdr_ok(&k->nk_res) || got != n)
			rc = -EBADMSG;
		else
			rc = take_ddp(k, n, k->nk_ca.ca_rddp, len);
	} else if (!rc) {
		skip_wcc(&k->nk_res);
		got = rpcrdma_xdr_get_u32(&k->nk_res);
		rpcrdma_xdr_get_u32(&k->nk_res); /* committed */
		v = rpcrdma_xdr_get_fixed(&k->nk_res, 8);
		if (!v || got > len)
			rc = -EBADMSG;
	}
	pthread_mutex_lock(&np->np_lock);
	if (!rc) {
		pc->pc_done = got;
		pc->pc_eof = eof;
		if (v) {
			if (np->np_verf_set && memcmp(v, np->np_verf, 8))
				np->np_verf_changed = true;
			memcpy(np->np_verf, v, 8);
			np->np_verf_set = true;
		}
	} else if (!np->np_err) {
		np->np_err = rc;
	}
	ps->ps_next = np->np_free;
	np->np_free = ps;
	np->np_inflight--;
	pthread_cond_broadcast(&np->np_cond);
	pthread_mutex_unlock(&np->np_lock);
}

/* Issue every piece with up to @depth in flight; wait for all. */
static int nfsc_pipe_run(struct nfsc_pipe *np, const struct rpcrdma_nfsc_fh *fh,
			 unsigned depth, uint32_t stable)
{
	uint64_t npieces = (np->np_len + np->np_piece_len - 1) / np->np_piece_len, i;
	struct nfsc_slot *slots;
	unsigned j;
	int rc = 0;

	slots = calloc(depth, sizeof(*slots));
	np->np_pieces = calloc(npieces ? npieces : 1, sizeof(*np->np_pieces));
	if (!slots || !np->np_pieces) {
		free(slots);
		return -ENOMEM;
	}
	pthread_mutex_init(&np->np_lock, NULL);
	pthread_cond_init(&np->np_cond, NULL);
	for (j = 0; j < depth; j++) {
		slots[j].ps_pipe = np;
		slots[j].ps_next = np->np_free;
		np->np_free = &slots[j];
	}
	for (i = 0; i < npieces; i++) {
		struct nfsc_slot *ps;
		struct nfsc_call *k;
		uint32_t len = piece_len(np, i);
		uint64_t off = np->np_offset + i * np->np_piece_len;

		pthread_mutex_lock(&np->np_lock);
		while (!np->np_free && !np->np_err)
			pthread_cond_wait(&np->np_cond, &np->np_lock);
		rc = np->np_err;
		ps = np->np_free;
		if (!rc) {
			np->np_free = ps->ps_next;
			np->np_inflight++;
		}
		pthread_mutex_unlock(&np->np_lock);
		if (rc)
			break;
		ps->ps_piece = i;
		k = &ps->ps_k;
		nk_begin(k, np->np_write ? NFSPROC3_WRITE : NFSPROC3_READ);
		put_fh(&k->nk_args, fh);
		rpcrdma_xdr_put_u64(&k->nk_args, off);
		rpcrdma_xdr_put_u32(&k->nk_args, len);
		if (np->np_write) {
			rpcrdma_xdr_put_u32(&k->nk_args, stable);
			rpcrdma_xdr_put_u32(&k->nk_args, len);
			k->nk_ca.ca_ddp = np->np_buf + i * np->np_piece_len;
			k->nk_ca.ca_ddp_len = len;
		} else {
			k->nk_ca.ca_rddp = np->np_buf + i * np->np_piece_len;
			k->nk_ca.ca_rddp_cap = len;
		}
		k->nk_ca.ca_args = k->nk_argbuf;
		k->nk_ca.ca_args_len = (uint32_t)k->nk_args.xs_pos;
		k->nk_ca.ca_timeout_ms = np->np_nc->nc_timeout_ms;
		rc = rpcrdma_clnt_call_async(np->np_nc->nc_clnt, &k->nk_ca, nfsc_pipe_done,
					     ps, NULL);
		if (rc) {
			pthread_mutex_lock(&np->np_lock);
			np->np_inflight--;
			ps->ps_next = np->np_free;
			np->np_free = ps;
			if (!np->np_err)
				np->np_err = rc;
			pthread_mutex_unlock(&np->np_lock);
			break;
		}
	}
	pthread_mutex_lock(&np->np_lock);
	while (np->np_inflight)
		pthread_cond_wait(&np->np_cond, &np->np_lock);
	rc = np->np_err;
	pthread_mutex_unlock(&np->np_lock);
	pthread_mutex_destroy(&np->np_lock);
	pthread_cond_destroy(&np->np_cond);
	free(slots);
	return rc;
}

int rpcrdma_nfsc_read_pipelined(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
				uint64_t offset, void *buf, uint64_t len, unsigned depth,
				uint64_t *nread)
{
	struct nfsc_pipe np = { .np_nc = nc, .np_offset = offset, .np_buf = buf,
				.np_len = len, .np_piece_len = nc->nc_rsize };
	uint64_t npieces = (len + nc->nc_rsize - 1) / nc->nc_rsize, i, total = 0;
	int rc;

	if (!depth || (len && !buf))
		return -EINVAL;
	rc = nfsc_pipe_run(&np, fh, depth, 0);
	/* Pieces in order: fill short reads, stop at end of file. */
	for (i = 0; !rc && i < npieces; i++) {
		struct nfsc_piece *pc = &np.np_pieces[i];
		uint32_t want = piece_len(&np, i), got;

		while (!rc && pc->pc_done < want && !pc->pc_eof) {
			rc = rpcrdma_nfsc_read(nc, fh, offset + i * nc->nc_rsize + pc->pc_done,
					       np.np_buf + i * nc->nc_rsize + pc->pc_done,
					       want - pc->pc_done, &got, &pc->pc_eof);
			if (!rc && !got && !pc->pc_eof)
				rc = -EIO;
			pc->pc_done += got;
		}
		total += pc->pc_done;
		if (pc->pc_done < want)
			break; /* end of file */
	}
	free(np.np_pieces);
	if (!rc)
		*nread = total;
	return rc;
}

int rpcrdma_nfsc_write_pipelined(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
				 uint64_t offset, const void *buf, uint64_t len,
				 unsigned depth, uint32_t stable, uint8_t verf[8],
				 bool *verf_changed)
{
	struct nfsc_pipe np = { .np_nc = nc, .np_offset = offset, .np_buf = (uint8_t *)buf,
				.np_len = len, .np_piece_len = nc->nc_wsize, .np_write = true };
	uint64_t npieces = (len + nc->nc_wsize - 1) / nc->nc_wsize, i;
	uint8_t v[8];
	int rc;

	if (!depth || (len && !buf) || stable > 2)
		return -EINVAL;
	rc = nfsc_pipe_run(&np, fh, depth, stable);
	/* Short writes: send the rest of the piece synchronously. */
	for (i = 0; !rc && i < npieces; i++) {
		struct nfsc_piece *pc = &np.np_pieces[i];
		uint32_t want = piece_len(&np, i), wrote;

		while (!rc && pc->pc_done < want) {
			rc = rpcrdma_nfsc_write(nc, fh, offset + i * nc->nc_wsize + pc->pc_done,
						np.np_buf + i * nc->nc_wsize + pc->pc_done,
						want - pc->pc_done, stable, &wrote, v);
			if (!rc && !wrote)
				rc = -EIO;
			if (!rc && np.np_verf_set && memcmp(v, np.np_verf, 8))
				np.np_verf_changed = true;
			pc->pc_done += wrote;
		}
	}
	free(np.np_pieces);
	if (!rc) {
		if (verf)
			memcpy(verf, np.np_verf, 8);
		if (verf_changed)
			*verf_changed = np.np_verf_changed;
	}
	return rc;
}

/* ---- mount ---- */

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
	ccfg.cf_memory_windows = cfg->nf_memory_windows;
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
