// SPDX-License-Identifier: MIT
/*
 * fs_vfs.c - the operations the protocols call (fs.h, "fs_vfs.c"): each
 * dispatches to the backend of the call's export (c_exp->ex_be,
 * fs_backend.h), with the policy that belongs to the layer rather than to
 * a backend: handles are the layer's (the backend gives a key, fs_fh.c
 * wraps it with the export's id and MAC); the object a REMOVE or RENAME
 * takes a name from leaves the caches (as knfsd closes cached files on
 * unlink, so the space is freed and a handle with no name left turns
 * STALE); an entry a backend filled is marked with its backend, which
 * releases it (fs_fcache_put()).
 */
#include <errno.h>
#include <string.h>

#include "fs.h"
#include "fs_backend.h"

void fs_fentry_init(struct fs_fentry *fe)
{
	memset(fe, 0, sizeof(*fe));
	fe->fe_path = -1;
	fe->fe_rfd = -1;
	fe->fe_wfd = -1;
}

bool fs_needs_identity(const struct rpcrdma_nfs3_export *exp)
{
	return (exp->ex_be->be_flags & FS_BE_SWITCHES_IDENTITY) != 0;
}

bool fs_never_waits(const struct rpcrdma_nfs3_export *exp)
{
	return exp->ex_mem_fs || (exp->ex_be->be_flags & FS_BE_NEVER_WAITS);
}

/* ---- handles ---- */

int fs_fh_of_exp(const struct rpcrdma_nfs3_export *exp, struct fs_fentry *dir,
		 const char *name, uint8_t *fh, uint32_t *lenp)
{
	uint8_t key[FS_BE_KEY_MAX];
	uint32_t keylen = 0, type = 0;
	int err;

	err = exp->ex_be->be_fh_key(exp, dir, name, key, &keylen, &type);
	if (err)
		return err;
	return fs_fh_encode(exp, type, key, keylen, fh, lenp);
}

int fs_fh_of(struct fs_call *c, struct fs_fentry *dir, const char *name,
	     uint8_t *fh, uint32_t *lenp)
{
	return fs_fh_of_exp(c->c_exp, dir, name, fh, lenp);
}

int fs_root(const struct rpcrdma_nfs3_export *exp, struct fs_fentry *local,
	    struct fs_fentry **out, struct stat *st)
{
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t len;
	int err;

	*out = NULL;
	fs_fentry_init(local);
	err = fs_fh_of_exp(exp, NULL, "", fh, &len);
	if (!err)
		err = fs_fh_decode(exp, fh, len, local, st);
	if (err)
		return err;
	*out = local;
	return 0;
}

/* ---- objects ---- */

/* filled - @local, which backend @be just filled, is the call's (*@out). */
static int filled(const struct fs_backend *be, int err,
		  struct fs_fentry *local, struct fs_fentry **out)
{
	if (err)
		return err;
	local->fe_be = be;
	*out = local;
	return 0;
}

int fs_getattr(struct fs_call *c, struct fs_fentry *fe, struct stat *st)
{
	return c->c_exp->ex_be->be_getattr(c->c_exp, fe, st);
}

int fs_setattr(struct fs_call *c, struct fs_fentry *fe, const struct stat *pre,
	       const struct fs_sattr *sa, bool skip_mode)
{
	return c->c_exp->ex_be->be_setattr(c, fe, pre, sa, skip_mode);
}

int fs_access(struct fs_call *c, struct fs_fentry *fe, const struct stat *st,
	      int mode)
{
	return c->c_exp->ex_be->be_access(c, fe, st, mode);
}

int fs_lookup(struct fs_call *c, struct fs_fentry *dir, const struct stat *dst,
	      const char *name, struct fs_fentry *local, struct fs_fentry **out,
	      struct stat *st)
{
	const struct fs_backend *be = c->c_exp->ex_be;

	*out = NULL;
	fs_fentry_init(local);
	return filled(be, be->be_lookup(c, dir, dst, name, local, st), local, out);
}

int fs_lookup_fh(struct fs_call *c, struct fs_fentry *dir,
		 const struct stat *dst, const char *name, uint64_t hint_ino,
		 uint8_t *fh, uint32_t *lenp, struct stat *st, bool *st_ok)
{
	const struct rpcrdma_nfs3_export *exp = c->c_exp;
	struct fs_fentry local, *fe;
	bool ok_unused;
	int err;

	if (!st_ok)
		st_ok = &ok_unused;
	*st_ok = false;
	if (exp->ex_be->be_lookup_fh && (exp->ex_fcache || exp->ex_dcache) &&
	    strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
		return exp->ex_be->be_lookup_fh(c, dir, dst, name, hint_ino, fh,
						lenp, st, st_ok);
	err = fs_lookup(c, dir, dst, name, &local, &fe, st);
	if (err)
		return err;
	*st_ok = true;
	err = fs_fh_of(c, fe, "", fh, lenp);
	fs_fcache_put(fe);
	return err;
}

int fs_lookup_attr(struct fs_call *c, struct fs_fentry *dir,
		   const struct stat *dst, const char *name, struct stat *st)
{
	const struct fs_backend *be = c->c_exp->ex_be;
	struct fs_fentry tmp;
	int err;

	if (be->be_lookup_attr)
		return be->be_lookup_attr(c, dir, dst, name, st);
	/* a backend without it: the object, looked up and dropped */
	fs_fentry_init(&tmp);
	err = be->be_lookup(c, dir, dst, name, &tmp, st);
	if (!err)
		be->be_release(&tmp);
	return err;
}

int fs_open(struct fs_call *c, struct fs_fentry *fe, const struct stat *st,
	    int acc)
{
	return c->c_exp->ex_be->be_open(c, fe, st, acc);
}

int fs_open_recheck(struct fs_call *c, struct fs_fentry *fe,
		    const struct stat *st, int acc)
{
	bool later = c->c_check_after;
	int err;

	if (c->c_keep && !c->c_unchecked) {
		/* checked before the read: again only to remember it */
		c->c_keep = false;
		if (!st || !fs_fcache_grant_keeps(st))
			return 0;
		c->c_unchecked = true;
	}
	if (!c->c_unchecked)
		return 0;
	c->c_unchecked = false;
	c->c_keep = false;
	c->c_check_after = false; /* now: no skipping */
	err = c->c_exp->ex_be->be_open(c, fe, st, acc);
	c->c_check_after = later;
	return err;
}

ssize_t fs_read(struct fs_call *c, struct fs_fentry *fe, const struct iovec *iov,
		int iovcnt, uint64_t off, bool nowait)
{
	return c->c_exp->ex_be->be_read(c, fe, iov, iovcnt, off,
					nowait && !fs_never_waits(c->c_exp));
}

ssize_t fs_read_pipe(struct fs_call *c, struct fs_fentry *fe, int pipefd,
		     uint64_t off, size_t len)
{
	if (!c->c_exp->ex_be->be_read_pipe)
		return -EOPNOTSUPP;
	return c->c_exp->ex_be->be_read_pipe(c, fe, pipefd, off, len);
}

int fs_write(struct fs_call *c, struct fs_fentry *fe, const struct iovec *iov,
	     int iovcnt, uint64_t off, uint32_t stable, size_t *done)
{
	return c->c_exp->ex_be->be_write(c, fe, iov, iovcnt, off, stable, done);
}

int fs_commit(struct fs_call *c, struct fs_fentry *fe, bool datasync)
{
	return c->c_exp->ex_be->be_commit(c, fe, datasync);
}

int fs_create(struct fs_call *c, struct fs_fentry *dir, const struct stat *dst,
	      const char *name, mode_t mode, bool excl, const uint8_t *verf,
	      struct fs_fentry *local, struct fs_fentry **out, struct stat *st,
	      bool *created)
{
	const struct fs_backend *be = c->c_exp->ex_be;

	*out = NULL;
	*created = false;
	fs_fentry_init(local);
	return filled(be, be->be_create(c, dir, dst, name, mode, excl, verf,
					local, st, created), local, out);
}

int fs_mkdir(struct fs_call *c, struct fs_fentry *dir, const struct stat *dst,
	     const char *name, mode_t mode, struct fs_fentry *local,
	     struct fs_fentry **out, struct stat *st)
{
	const struct fs_backend *be = c->c_exp->ex_be;

	*out = NULL;
	fs_fentry_init(local);
	return filled(be, be->be_mkdir(c, dir, dst, name, mode, local, st),
		      local, out);
}

int fs_mknod(struct fs_call *c, struct fs_fentry *dir, const struct stat *dst,
	     const char *name, mode_t mode, dev_t rdev, struct fs_fentry *local,
	     struct fs_fentry **out, struct stat *st)
{
	const struct fs_backend *be = c->c_exp->ex_be;

	*out = NULL;
	fs_fentry_init(local);
	return filled(be, be->be_mknod(c, dir, dst, name, mode, rdev, local, st),
		      local, out);
}

int fs_symlink(struct fs_call *c, struct fs_fentry *dir, const struct stat *dst,
	       const char *name, const char *target, struct fs_fentry *local,
	       struct fs_fentry **out, struct stat *st)
{
	const struct fs_backend *be = c->c_exp->ex_be;

	*out = NULL;
	fs_fentry_init(local);
	return filled(be, be->be_symlink(c, dir, dst, name, target, local, st),
		      local, out);
}

ssize_t fs_readlink(struct fs_call *c, struct fs_fentry *fe, char *buf,
		    size_t len)
{
	return c->c_exp->ex_be->be_readlink(c, fe, buf, len);
}

int fs_link(struct fs_call *c, struct fs_fentry *fe, struct fs_fentry *dir,
	    const char *name)
{
	return c->c_exp->ex_be->be_link(c, fe, dir, name);
}

int fs_remove(struct fs_call *c, struct fs_fentry *dir, const char *name,
	      bool rmdir)
{
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t fhlen = 0;
	bool have_fh;
	int err;

	/* the handle of what the name holds, while it has the name, when
	 * the caches could hold it (a directory: the directory cache) */
	have_fh = c->c_exp->ex_fcache && fs_fh_of(c, dir, name, fh, &fhlen) == 0;
	err = c->c_exp->ex_be->be_unlink(c, dir, name, rmdir);
	if (!err && have_fh) /* whether other names are left is not asked */
		fs_fcache_forget(c->c_exp, fh, fhlen);
	return err;
}

int fs_rename(struct fs_call *c, struct fs_fentry *fdir, const char *fname,
	      struct fs_fentry *tdir, const char *tname, bool two_dirs)
{
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t fhlen = 0;
	bool have_fh = false;
	int err;

	err = c->c_exp->ex_be->be_rename(c, fdir, fname, tdir, tname, two_dirs,
					 fh, &fhlen, &have_fh);
	if (!err && have_fh) /* the object @tname named before */
		fs_fcache_forget(c->c_exp, fh, fhlen);
	return err;
}

int fs_readdir(struct fs_call *c, struct fs_fentry *dir, const struct stat *dst,
	       uint64_t cookie,
	       int (*fn)(void *arg, const char *name, uint64_t ino, uint64_t cookie),
	       void *arg, bool *eof)
{
	return c->c_exp->ex_be->be_readdir(c, dir, dst, cookie, fn, arg, eof);
}

int fs_statfs(struct fs_call *c, struct fs_fentry *fe, struct fs_statfs *out)
{
	memset(out, 0, sizeof(*out));
	return c->c_exp->ex_be->be_statfs(c, fe, out);
}

/* ---- locks ---- */

/* lockd_init - @ld holds nothing. */
static void lockd_init(struct fs_lockd *ld)
{
	ld->ld_be = NULL;
	ld->ld_fd = -1;
	ld->ld_node = NULL;
	ld->ld_owner = NULL;
}

int fs_lock_open(struct fs_call *c, struct fs_fentry *fe, struct fs_lockd *out,
		 int *accmode)
{
	const struct fs_backend *be = c->c_exp->ex_be;
	int err;

	lockd_init(out);
	err = be->be_lock_open(c, fe, out, accmode);
	if (err) {
		lockd_init(out);
		return err;
	}
	out->ld_be = be;
	return 0;
}

int fs_lock(struct fs_lockd *ld, int type, uint64_t start, uint64_t len,
	    bool test, struct fs_lock_conflict *cf)
{
	if (!ld->ld_be)
		return -EBADF;
	return ld->ld_be->be_lock(ld, type, start, len, test, cf);
}

int fs_lock_dup(const struct fs_lockd *ld, struct fs_lockd *out)
{
	int err;

	lockd_init(out);
	if (!ld->ld_be)
		return -EBADF;
	err = ld->ld_be->be_lock_dup(ld, out);
	if (err) {
		lockd_init(out);
		return err;
	}
	out->ld_be = ld->ld_be;
	return 0;
}

void fs_lock_close(struct fs_lockd *ld)
{
	if (ld->ld_be)
		ld->ld_be->be_lock_close(ld);
	lockd_init(ld);
}
