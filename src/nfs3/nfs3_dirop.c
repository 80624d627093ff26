// SPDX-License-Identifier: MIT
/*
 * nfs3_dirop.c - the directory procedures of NFS version 3 that look up or
 * take away names: LOOKUP, REMOVE, RMDIR, RENAME, LINK (RFC 1813 3.3.3,
 * 3.3.12 to 3.3.15), and the diropargs3 handling every directory
 * procedure shares.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfs3_internal.h"

void nfs3_dirop_decode(struct fs_call *c, struct nfs3_dirop *d,
			 const uint8_t **fh, uint32_t *fhlen)
{
	d->d_fd = -1;
	d->d_fe = NULL;
	d->d_have_pre = false;
	*fh = nfs3_get_fh(c->c_args, fhlen);
	nfs3_get_name(c->c_args, &d->d_name);
}

/*
 * Open the directory (the directory cache keeps it between calls) and
 * check the name; an NFS status.  A directory removed since it was cached
 * (no links left) is stale, as its handle would be.
 */
uint32_t nfs3_dirop_open(struct fs_call *c, struct nfs3_dirop *d,
			   const uint8_t *fh, uint32_t fhlen)
{
	int err = fs_get_dir(c, fh, fhlen, &d->d_local, &d->d_fe, &d->d_pre);

	if (err)
		return nfs3_errno_to_stat(err);
	d->d_fd = d->d_fe->fe_path;
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
	d->d_fd = -1;
}

void nfs3_dirop_put_wcc(struct fs_call *c, struct nfs3_dirop *d)
{
	struct stat post;

	if (d->d_fd >= 0 && fstat(d->d_fd, &post) == 0)
		nfs3_put_wcc(c->c_res, c->c_exp, d->d_have_pre ? &d->d_pre : NULL,
			     &post);
	else
		nfs3_put_wcc(c->c_res, c->c_exp, NULL, NULL);
}

/*
 * LOOKUP (RFC 1813 3.3.3).  The directory's post_op_attr are those its
 * cache entry was read with at the start of the call (a lookup changes
 * nothing in it).  The object found is not cached: a handle a client only
 * looked up turns STALE once its file is unlinked, as without a cache.
 */
int nfs3_proc_lookup(struct fs_call *c)
{
	const uint8_t *dfh;
	uint32_t dfhlen, fhlen = 0;
	struct fs_name name;
	struct stat dst, st;
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	struct fs_fentry local, *dfe = NULL;
	int dfd = -1, fd = -1, err;
	uint32_t stat;

	dfh = nfs3_get_fh(c->c_args, &dfhlen);
	nfs3_get_name(c->c_args, &name);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	/* the directory through the directory cache, as for dirops */
	err = fs_get_dir(c, dfh, dfhlen, &local, &dfe, &dst);
	if (!err)
		dfd = dfe->fe_path;
	if (err) {
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
	if (!err)
		err = fs_lookup_at(c->c_exp, dfd, &dst, name.n_buf, &fd, &st);
	if (!err)
		err = fs_fh_make(c->c_exp, fd, "", fh, &fhlen);
	stat = nfs3_errno_to_stat(err);
out:
	rpcrdma_xdr_put_u32(c->c_res, stat);
	if (stat == NFS3_OK) {
		rpcrdma_xdr_put_opaque(c->c_res, fh, fhlen);
		nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
	}
	nfs3_put_post_op_attr(c->c_res, c->c_exp, dfd >= 0 ? &dst : NULL);
	fs_close_fd(fd);
	fs_fcache_put(dfe);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_remove_common(struct fs_call *c, bool dir)
{
	struct nfs3_dirop d;
	const uint8_t *dfh;
	uint32_t dfhlen, stat, fhlen = 0;
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	bool have_fh = false;
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
	if (!err) /* a removed directory leaves the directory cache too */
		have_fh = fs_unlink_fh(c, d.d_fd, d.d_name.n_buf, fh, &fhlen);
	if (!err && unlinkat(d.d_fd, d.d_name.n_buf, dir ? AT_REMOVEDIR : 0) < 0)
		err = -errno;
	if (!err && have_fh) /* a directory has no other name */
		fs_fcache_forget(c->c_exp, fh, fhlen);
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
	uint32_t ffhlen, tfhlen, stat, fhlen = 0;
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	bool have_fh = false, same;
	struct stat post;
	int err;

	nfs3_dirop_decode(c, &from, &ffh, &ffhlen);
	nfs3_dirop_decode(c, &to, &tfh, &tfhlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	/* within one directory (the usual case): open and stat it once */
	same = ffhlen == tfhlen && memcmp(ffh, tfh, ffhlen) == 0;

	stat = nfs3_dirop_open(c, &from, ffh, ffhlen);
	if (!stat && same) {
		to.d_fd = from.d_fd;
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
	/* may the caller change both directories: the rename asks, or
	 * fs_rename() first when a name is in the way (knfsd's answer) */
	err = fs_become_caller(c);
	if (!err)
		err = fs_posix_rename(c, from.d_fd, from.d_name.n_buf, to.d_fd,
				to.d_name.n_buf, !same, fh, &fhlen, &have_fh);
	if (!err && have_fh)
		fs_fcache_forget(c->c_exp, fh, fhlen);
	if (!err)
		err = fs_commit_dir(c, from.d_fe);
	if (!err && !same)
		err = fs_commit_dir(c, to.d_fe);
	stat = nfs3_errno_to_stat(err);
out:
	rpcrdma_xdr_put_u32(c->c_res, stat);
	if (same && from.d_fd >= 0 && fstat(from.d_fd, &post) == 0) {
		/* fromdir_wcc and todir_wcc of the one directory */
		nfs3_put_wcc(c->c_res, c->c_exp, &from.d_pre, &post);
		nfs3_put_wcc(c->c_res, c->c_exp, &from.d_pre, &post);
	} else {
		nfs3_dirop_put_wcc(c, &from);
		if (same)
			to.d_fd = -1; /* not opened: no attributes either */
		nfs3_dirop_put_wcc(c, &to);
	}
	nfs3_dirop_put(&from);
	if (!same)
		nfs3_dirop_put(&to);
	return RPCRDMA_SVC_SUCCESS;
}

int nfs3_proc_link(struct fs_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *fh, *dfh;
	uint32_t fhlen, dfhlen, stat;
	struct stat st;
	char path[32];
	int fd = -1, err;

	d.d_fd = -1;
	fh = nfs3_get_fh(c->c_args, &fhlen);
	nfs3_dirop_decode(c, &d, &dfh, &dfhlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	err = fs_open_handle_fd(c, fh, fhlen, &fd, &st);
	if (err) {
		stat = nfs3_errno_to_stat(err);
		goto out;
	}
	stat = nfs3_dirop_open(c, &d, dfh, dfhlen);
	if (stat)
		goto out;
	/* may the caller add a name: first, as knfsd (fs_dir_may_write()) */
	err = fs_become_caller(c);
	if (!err)
		err = fs_dir_may_write(d.d_fd);
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
	fs_proc_path(path, sizeof(path), fd);
	if (!err && linkat(AT_FDCWD, path, d.d_fd, d.d_name.n_buf,
			   AT_SYMLINK_FOLLOW) < 0)
		err = -errno;
	if (!err)
		err = fs_commit_dir(c, d.d_fe);
	stat = nfs3_errno_to_stat(err);
out:
	rpcrdma_xdr_put_u32(c->c_res, stat);
	nfs3_put_post_op_fd(c->c_res, c->c_exp, fd);
	nfs3_dirop_put_wcc(c, &d);
	fs_close_fd(fd);
	nfs3_dirop_put(&d);
	return RPCRDMA_SVC_SUCCESS;
}
