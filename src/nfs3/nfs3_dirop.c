// SPDX-License-Identifier: MIT
/*
 * nfs3_dirop.c - the directory procedures of NFS version 3 that look up or
 * take away names: LOOKUP, REMOVE, RMDIR, RENAME, LINK (RFC 1813 3.3.3,
 * 3.3.12 to 3.3.15), and the diropargs3 handling every directory
 * procedure shares.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfs3_internal.h"

void nfs3_dirop_decode(struct fs_call *c, struct nfs3_dirop *d,
			 const uint8_t **fh, uint32_t *fhlen)
{
	d->d_fe = NULL;
	d->d_have_pre = false;
	*fh = nfs3_get_fh(c->c_args, fhlen);
	nfs3_get_name(c->c_args, &d->d_name);
}

/*
 * Reach the directory (the directory cache keeps it between calls) and
 * check the name; an NFS status.  A directory removed since it was cached
 * (no links left) is stale, as its handle would be.
 */
uint32_t nfs3_dirop_open(struct fs_call *c, struct nfs3_dirop *d,
			   const uint8_t *fh, uint32_t fhlen)
{
	int err = fs_get_dir(c, fh, fhlen, &d->d_local, &d->d_fe, &d->d_pre);

	if (err) {
		d->d_fe = NULL;
		return nfs3_errno_to_stat(err);
	}
	d->d_have_pre = true;
	if (!S_ISDIR(d->d_pre.st_mode))
		return NFS3ERR_NOTDIR;
	if (d->d_pre.st_nlink == 0) {
		fs_fcache_forget(c->c_exp, fh, fhlen);
		d->d_have_pre = false;
		return NFS3ERR_STALE;
	}
	return nfs3_name_check(&d->d_name);
}

void nfs3_dirop_put(struct nfs3_dirop *d)
{
	fs_fcache_put(d->d_fe);
	d->d_fe = NULL;
}

void nfs3_dirop_put_wcc(struct fs_call *c, struct nfs3_dirop *d)
{
	struct stat post;

	if (d->d_fe && fs_getattr(c, d->d_fe, &post) == 0)
		nfs3_put_wcc(c->c_res, c->c_exp, d->d_have_pre ? &d->d_pre : NULL,
			     &post);
	else
		nfs3_put_wcc(c->c_res, c->c_exp, NULL, NULL);
}

/*
 * LOOKUP (RFC 1813 3.3.3).  The directory's post_op_attr are those its
 * cache entry was read with at the start of the call (a lookup changes
 * nothing in it).  The object found is not cached: a handle a client only
 * looked up turns STALE once its file is unlinked, as without a cache;
 * when a cache entry already holds it, its handle is that entry's
 * (fs_lookup_fh()).
 */
int nfs3_proc_lookup(struct fs_call *c)
{
	const uint8_t *dfh;
	uint32_t dfhlen, fhlen = 0;
	struct fs_name name;
	struct stat dst, st;
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	struct fs_fentry dlocal, *dfe = NULL;
	int err;
	uint32_t stat;

	dfh = nfs3_get_fh(c->c_args, &dfhlen);
	nfs3_get_name(c->c_args, &name);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	/* the directory through the directory cache, as for dirops */
	err = fs_get_dir(c, dfh, dfhlen, &dlocal, &dfe, &dst);
	if (err) {
		dfe = NULL;
		stat = nfs3_errno_to_stat(err);
		goto out;
	}
	if (!S_ISDIR(dst.st_mode)) {
		stat = NFS3ERR_NOTDIR;
		goto out;
	}
	stat = nfs3_name_check(&name);
	if (stat)
		goto out;
	err = fs_become_caller(c);
	if (!err) /* ".." of the export root is the root; no symlink
		   * followed, no mount crossed (-EXDEV); the handle from a
		   * cache entry of the same object where there is one */
		err = fs_lookup_fh(c, dfe, &dst, name.n_buf, 0, fh, &fhlen,
				   &st, NULL);
	stat = nfs3_errno_to_stat(err);
out:
	rpcrdma_xdr_put_u32(c->c_res, stat);
	if (stat == NFS3_OK) {
		rpcrdma_xdr_put_opaque(c->c_res, fh, fhlen);
		nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
	}
	nfs3_put_post_op_attr(c->c_res, c->c_exp, dfe ? &dst : NULL);
	fs_fcache_put(dfe);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_remove_common(struct fs_call *c, bool dir)
{
	struct nfs3_dirop d;
	const uint8_t *dfh;
	uint32_t dfhlen, stat;
	int err;

	nfs3_dirop_decode(c, &d, &dfh, &dfhlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	stat = nfs3_dirop_open(c, &d, dfh, dfhlen);
	if (stat)
		goto out;
	if (strcmp(d.d_name.n_buf, ".") == 0) {
		stat = NFS3ERR_INVAL;
		goto out;
	}
	if (strcmp(d.d_name.n_buf, "..") == 0) {
		stat = dir ? NFS3ERR_NOTEMPTY : NFS3ERR_ISDIR;
		goto out;
	}
	err = fs_become_caller(c);
	/* what the name held leaves the caches (a removed directory the
	 * directory cache too): a handle with no name left turns STALE */
	if (!err)
		err = fs_remove(c, d.d_fe, d.d_name.n_buf, dir);
	if (!err)
		err = fs_commit_dir(c, d.d_fe);
	stat = nfs3_errno_to_stat(err);
out:
	rpcrdma_xdr_put_u32(c->c_res, stat);
	nfs3_dirop_put_wcc(c, &d);
	nfs3_dirop_put(&d);
	return RPCRDMA_SVC_SUCCESS;
}

int nfs3_proc_remove(struct fs_call *c)
{
	return proc_remove_common(c, false);
}

int nfs3_proc_rmdir(struct fs_call *c)
{
	return proc_remove_common(c, true);
}

int nfs3_proc_rename(struct fs_call *c)
{
	struct nfs3_dirop from, to;
	const uint8_t *ffh, *tfh;
	uint32_t ffhlen, tfhlen, stat;
	bool same;
	struct stat post;
	int err;

	nfs3_dirop_decode(c, &from, &ffh, &ffhlen);
	nfs3_dirop_decode(c, &to, &tfh, &tfhlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	/* within one directory (the usual case): reach and stat it once
	 * (to.d_fe stays NULL: from's entry serves both) */
	same = ffhlen == tfhlen && memcmp(ffh, tfh, ffhlen) == 0;

	stat = nfs3_dirop_open(c, &from, ffh, ffhlen);
	if (!stat && same) {
		to.d_pre = from.d_pre;
		to.d_have_pre = true;
		stat = nfs3_name_check(&to.d_name);
	} else if (!stat) {
		stat = nfs3_dirop_open(c, &to, tfh, tfhlen);
	}
	if (stat)
		goto out;
	if (nfs3_is_dot_or_dotdot(&from.d_name) || nfs3_is_dot_or_dotdot(&to.d_name)) {
		stat = NFS3ERR_INVAL;
		goto out;
	}
	/*
	 * May the caller change both directories: the rename asks, or, when
	 * a name is in the way, a check of both first (knfsd's answer,
	 * -EACCES before a sticky directory's -EPERM).  An object replaced
	 * leaves the caches.
	 */
	err = fs_become_caller(c);
	if (!err)
		err = fs_rename(c, from.d_fe, from.d_name.n_buf,
				same ? from.d_fe : to.d_fe, to.d_name.n_buf, !same);
	if (!err)
		err = fs_commit_dir(c, from.d_fe);
	if (!err && !same)
		err = fs_commit_dir(c, to.d_fe);
	stat = nfs3_errno_to_stat(err);
out:
	rpcrdma_xdr_put_u32(c->c_res, stat);
	if (same && from.d_fe && fs_getattr(c, from.d_fe, &post) == 0) {
		/* fromdir_wcc and todir_wcc of the one directory */
		nfs3_put_wcc(c->c_res, c->c_exp, &from.d_pre, &post);
		nfs3_put_wcc(c->c_res, c->c_exp, &from.d_pre, &post);
	} else {
		/* with @same, to.d_fe is NULL: no attributes either */
		nfs3_dirop_put_wcc(c, &from);
		nfs3_dirop_put_wcc(c, &to);
	}
	nfs3_dirop_put(&from);
	nfs3_dirop_put(&to);
	return RPCRDMA_SVC_SUCCESS;
}

int nfs3_proc_link(struct fs_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *fh, *dfh;
	uint32_t fhlen, dfhlen, stat;
	struct stat st;
	struct fs_fentry local, *fe = NULL;
	int err;

	d.d_fe = NULL;
	fh = nfs3_get_fh(c->c_args, &fhlen);
	nfs3_dirop_decode(c, &d, &dfh, &dfhlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	err = fs_open_handle(c, fh, fhlen, &local, &fe, &st);
	if (err) {
		fe = NULL;
		stat = nfs3_errno_to_stat(err);
		goto out;
	}
	stat = nfs3_dirop_open(c, &d, dfh, dfhlen);
	if (stat)
		goto out;
	/*
	 * May the caller add a name (write and search permission on the
	 * directory): first, as knfsd, so a caller without it hears
	 * NFS3ERR_ACCES where the link itself would have found another
	 * reason first (a file protected_hardlinks guards: EPERM).
	 */
	err = fs_become_caller(c);
	if (!err)
		err = fs_access(c, d.d_fe, &d.d_pre, W_OK | X_OK);
	if (err) {
		stat = nfs3_errno_to_stat(err);
		goto out;
	}
	if (nfs3_is_dot_or_dotdot(&d.d_name)) {
		stat = NFS3ERR_EXIST;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		stat = NFS3ERR_ISDIR;
		goto out;
	}
	err = fs_link(c, fe, d.d_fe, d.d_name.n_buf);
	if (!err)
		err = fs_commit_dir(c, d.d_fe);
	stat = nfs3_errno_to_stat(err);
out:
	rpcrdma_xdr_put_u32(c->c_res, stat);
	nfs3_put_post_op_fe(c->c_res, c, fe);
	nfs3_dirop_put_wcc(c, &d);
	fs_fcache_put(fe);
	nfs3_dirop_put(&d);
	return RPCRDMA_SVC_SUCCESS;
}
