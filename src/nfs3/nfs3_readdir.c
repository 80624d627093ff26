// SPDX-License-Identifier: MIT
/*
 * nfs3_readdir.c - READDIR and READDIRPLUS (RFC 1813 3.3.16, 3.3.17).
 *
 * Cookies are the backend's directory positions (fs_readdir(): for the
 * posix backend the kernel's, struct dirent d_off), each the position
 * after its entry, so a later call resumes after it.  They stay valid
 * while the directory changes (fs_backend.h, be_readdir), so the cookie
 * verifier does not follow the directory's mtime: it is a keyed hash of
 * the directory's identity, which only catches a cookie presented to the
 * wrong directory (NFS3ERR_BAD_COOKIE).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "nfs3_internal.h"

/* status + post_op_attr + cookieverf3, and the "no more entries" + eof. */
#define RD_HEAD_BYTES (4u + NFS3_POST_OP_ATTR_BYTES + 8u)
#define RD_TAIL_BYTES 8u

static void dir_verifier(const struct rpcrdma_nfs3_export *exp,
			 const struct stat *st, uint8_t verf[8])
{
	uint64_t id[2] = { (uint64_t)st->st_dev, (uint64_t)st->st_ino };
	uint64_t h = fs_siphash(exp->ex_key, id, sizeof(id));

	memcpy(verf, &h, 8);
}

/* One entry ready to encode. */
struct rd_entry {
	const char *e_name;
	uint32_t e_namelen;
	uint64_t e_fileid;
	uint64_t e_cookie;
	bool e_have_attr;
	struct stat e_st;
	uint32_t e_fhlen; /* 0: no handle */
	uint8_t e_fh[RPCRDMA_NFS3_FHSIZE];
};

/* Attributes and handle of @e_name in @dir (READDIRPLUS only). */
static void rd_fill_plus(struct fs_call *c, struct fs_fentry *dir,
			 const struct stat *dst, struct rd_entry *e)
{
	bool st_ok;

	/* resolve through the LOOKUP rules ("..", mounts, no symlinks; the
	 * handle of a cached object from its entry, d_ino the hint); a name
	 * the caller may not search the directory for has neither */
	if (fs_lookup_fh(c, dir, dst, e->e_name, e->e_fileid, e->e_fh,
			 &e->e_fhlen, &e->e_st, &st_ok) < 0)
		e->e_fhlen = 0;
	if (!st_ok)
		return;
	e->e_have_attr = true;
	e->e_fileid = (uint64_t)e->e_st.st_ino;
}

static size_t rd_dir_bytes(const struct rd_entry *e)
{
	/* value_follows, fileid, name, cookie */
	return 4 + 8 + 4 + RPCRDMA_XDR_ALIGN(e->e_namelen) + 8;
}

static size_t rd_entry_bytes(const struct rd_entry *e, bool plus)
{
	size_t n = rd_dir_bytes(e);

	if (plus) {
		n += 4 + (e->e_have_attr ? NFS3_FATTR_BYTES : 0);
		n += 4 + (e->e_fhlen ? 4 + RPCRDMA_XDR_ALIGN(e->e_fhlen) : 0);
	}
	return n;
}

static void rd_put_entry(struct fs_call *c, const struct rd_entry *e, bool plus)
{
	struct rpcrdma_xdr *res = c->c_res;

	rpcrdma_xdr_put_u32(res, 1);
	rpcrdma_xdr_put_u64(res, e->e_fileid);
	rpcrdma_xdr_put_opaque(res, e->e_name, e->e_namelen);
	rpcrdma_xdr_put_u64(res, e->e_cookie);
	if (!plus)
		return;
	nfs3_put_post_op_attr(res, c->c_exp, e->e_have_attr ? &e->e_st : NULL);
	rpcrdma_xdr_put_u32(res, e->e_fhlen != 0);
	if (e->e_fhlen)
		rpcrdma_xdr_put_opaque(res, e->e_fh, e->e_fhlen);
}

/* One READDIR or READDIRPLUS call while fs_readdir() lists the directory. */
struct rd_state {
	struct fs_call *r_c;
	struct fs_fentry *r_dir;
	const struct stat *r_dst;
	bool r_plus;
	size_t r_budget, r_used;      /* reply bytes: most, so far */
	uint32_t r_dircount;          /* READDIRPLUS: most directory bytes */
	size_t r_dirused;
	unsigned r_nent;              /* entries encoded */
	bool r_toosmall;              /* the first entry did not fit */
};

/*
 * rd_entry_fn - fs_readdir()'s callback: encode entry @name (inode @ino,
 * @cookie the position after it) when it fits.  Return: 0 to go on, 1 to
 * stop (it does not fit: the next call starts with it).
 */
static int rd_entry_fn(void *arg, const char *name, uint64_t ino,
		       uint64_t cookie)
{
	struct rd_state *r = arg;
	struct fs_call *c = r->r_c;
	struct rd_entry e;
	size_t need;

	memset(&e, 0, sizeof(e));
	e.e_name = name;
	e.e_namelen = (uint32_t)strlen(name);
	e.e_cookie = cookie;
	e.e_fileid = ino;
	if (strcmp(name, "..") == 0 && fs_is_root(c->c_exp, r->r_dst))
		e.e_fileid = (uint64_t)r->r_dst->st_ino; /* root's parent is root */
	if (r->r_plus)
		rd_fill_plus(c, r->r_dir, r->r_dst, &e);
	need = rd_entry_bytes(&e, r->r_plus);
	if (r->r_used + need + RD_TAIL_BYTES > r->r_budget ||
	    r->r_dirused + rd_dir_bytes(&e) > r->r_dircount) {
		if (r->r_nent == 0)
			r->r_toosmall = true;
		return 1;
	}
	rd_put_entry(c, &e, r->r_plus);
	r->r_used += need;
	r->r_dirused += rd_dir_bytes(&e);
	r->r_nent++;
	return 0;
}

/* rd_stop_fn - a callback that takes no entry (fs_readdir() only checks). */
static int rd_stop_fn(void *arg, const char *name, uint64_t ino,
		      uint64_t cookie)
{
	(void)arg;
	(void)name;
	(void)ino;
	(void)cookie;
	return 1;
}

int nfs3_proc_readdir(struct fs_call *c, bool plus)
{
	struct rpcrdma_xdr *args = c->c_args, *res = c->c_res;
	const uint8_t *fh, *cverf;
	uint32_t fhlen, dircount, maxcount, stat = NFS3_OK;
	uint64_t cookie;
	uint8_t verf[8];
	struct stat dst;
	struct fs_fentry local, *dfe = NULL;
	struct rd_state r;
	size_t start, budget;
	bool eof = false;
	int err;

	fh = rpcrdma_xdr_get_opaque(args, RPCRDMA_NFS3_FHSIZE, &fhlen);
	cookie = rpcrdma_xdr_get_u64(args);
	cverf = rpcrdma_xdr_get_fixed(args, 8);
	dircount = rpcrdma_xdr_get_u32(args);
	maxcount = plus ? rpcrdma_xdr_get_u32(args) : dircount;
	if (!rpcrdma_xdr_ok(args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	if (!plus)
		dircount = UINT32_MAX; /* READDIR has only "count" (the reply) */

	err = fs_open_handle(c, fh, fhlen, &local, &dfe, &dst);
	if (err) {
		dfe = NULL;
		stat = nfs3_errno_to_stat(err);
		goto out_err;
	}
	if (!S_ISDIR(dst.st_mode)) {
		stat = NFS3ERR_NOTDIR;
		goto out_err;
	}
	dir_verifier(c->c_exp, &dst, verf);
	if (cookie != 0 && memcmp(cverf, verf, 8) != 0 &&
	    memcmp(cverf, "\0\0\0\0\0\0\0\0", 8) != 0) {
		stat = NFS3ERR_BAD_COOKIE;
		goto out_err;
	}
	/*
	 * Listing a directory needs read permission only (knfsd lists a
	 * directory its caller may read but not search; READDIRPLUS then
	 * gives its entries no attributes or handles, rd_fill_plus()).
	 */
	err = fs_become_caller(c);
	if (err)
		goto out_errno;

	start = res->xs_pos;
	budget = rpcrdma_xdr_remaining(res);
	if (maxcount < budget)
		budget = maxcount;
	if (budget < RD_HEAD_BYTES + RD_TAIL_BYTES) {
		/* no room for any reply but an error: one the listing
		 * itself gives (no read permission) comes first */
		err = fs_readdir(c, dfe, &dst, cookie, rd_stop_fn, NULL, &eof);
		if (err)
			goto out_errno;
		stat = NFS3ERR_TOOSMALL;
		goto out_err;
	}
	rpcrdma_xdr_put_u32(res, NFS3_OK);
	nfs3_put_post_op_attr(res, c->c_exp, &dst);
	rpcrdma_xdr_put_fixed(res, verf, 8);

	r = (struct rd_state){
		.r_c = c,
		.r_dir = dfe,
		.r_dst = &dst,
		.r_plus = plus,
		.r_budget = budget,
		.r_used = RD_HEAD_BYTES,
		.r_dircount = dircount,
	};
	err = fs_readdir(c, dfe, &dst, cookie, rd_entry_fn, &r, &eof);
	if (err) {
		res->xs_pos = start;
		goto out_errno;
	}
	if (r.r_toosmall) {
		res->xs_pos = start;
		stat = NFS3ERR_TOOSMALL;
		goto out_err;
	}
	rpcrdma_xdr_put_u32(res, 0);
	rpcrdma_xdr_put_u32(res, eof);
	goto out;

out_errno:
	stat = nfs3_errno_to_stat(err);
out_err:
	rpcrdma_xdr_put_u32(res, stat);
	nfs3_put_post_op_attr(res, c->c_exp, dfe ? &dst : NULL);
out:
	fs_fcache_put(dfe);
	return RPCRDMA_SVC_SUCCESS;
}
