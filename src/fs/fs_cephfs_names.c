// SPDX-License-Identifier: MIT
/*
 * fs_cephfs_names.c - the cephfs backend's operations on names: lookup,
 * create, mkdir, mknod, symlink (and readlink), link, unlink, rename.
 * Each runs as the caller (its UserPerm): libcephfs checks search and
 * write permission on the directories, sticky directories included, and
 * a new object is the caller's.
 */
#include <errno.h>
#include <string.h>

#include "fs_cephfs.h"

/* names' errors (be_create .. be_symlink) */
#define MAKE_ERRS -EEXIST, -EACCES, -ENOSPC, -EDQUOT, -ENAMETOOLONG, \
		  -ENOENT, -ENOTDIR, -EPERM, -EMLINK

/* caller - the caller's UserPerm for @o's mount (NULL: no memory). */
static const UserPerm *caller(struct fs_call *c, struct fsc_obj *o)
{
	return fsc_perm(o->co_mnt, &c->c_cred);
}

/* made - a new object's reference @in (attributes @stx, Fh @fh opened
 * @acc or NULL) into @out and @st. */
static int made(struct fs_call *c, struct fsc_obj *d, Inode *in,
		const struct ceph_statx *stx, Fh *fh, int acc,
		struct fs_fentry *out, struct stat *st)
{
	int err = fsc_obj_new(d->co_mnt, in, stx, fh, acc, out);

	if (!err)
		fsc_statx_to_stat(c->c_exp, stx, st);
	return err;
}

int fsc_be_lookup(struct fs_call *c, struct fs_fentry *dir,
		  const struct stat *dst, const char *name,
		  struct fs_fentry *out, struct stat *st)
{
	struct fsc_obj *d = fsc_fe(dir);
	const UserPerm *perms = caller(c, d);
	struct ceph_statx stx;
	Inode *in;
	int err;

	(void)dst;
	if (!perms)
		return -ENOMEM;
	err = fsc_lookup_ref(c->c_exp, d, name, perms, CEPH_STATX_BASIC_STATS,
			     &in, &stx);
	if (err)
		return FSC_ERR(err, -ENOENT, -ENOTDIR, -EACCES, -ENAMETOOLONG);
	if ((uint64_t)stx.stx_dev != d->co_snap) {
		/* into a snapshot (.snap): another file system to NFS, not
		 * crossed (snapshots are not served yet) */
		fsc_api->ca_ll_put(d->co_mnt->cm_cmount, in);
		return -EXDEV;
	}
	return made(c, d, in, &stx, NULL, 0, out, st);
}

/* The first 4 bytes of @p, big-endian. */
static uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

int fsc_be_create(struct fs_call *c, struct fs_fentry *dir,
		  const struct stat *dst, const char *name, mode_t mode,
		  bool excl, const uint8_t *verf, struct fs_fentry *out,
		  struct stat *st, bool *created)
{
	struct fsc_obj *d = fsc_fe(dir);
	struct ceph_mount_info *cm = d->co_mnt->cm_cmount;
	const UserPerm *perms = caller(c, d);
	struct ceph_statx stx;
	Inode *in = NULL;
	Fh *fh = NULL;
	int err;

	*created = false;
	if (!perms)
		return -ENOMEM;
	err = fsc_api->ca_ll_create(cm, d->co_in, name, mode & 07777,
				    O_CREAT | O_EXCL | O_RDWR, &in, &fh, &stx,
				    CEPH_STATX_BASIC_STATS, 0, perms);
	if (err == -EEXIST && !excl)
		/* looked up, never opened or truncated, whatever its type */
		return fsc_be_lookup(c, dir, dst, name, out, st);
	if (err)
		return FSC_ERR(err, MAKE_ERRS);
	*created = true;
	/* a new inode: nothing of it is cached (direct=off: its stable
	 * WRITEs go through the cache all the same) */
	if (fsc_ex(c->c_exp)->ce_direct)
		fsc_direct_created(d->co_mnt, stx.stx_ino);
	if (verf) {
		/* an exclusive create's verifier, in the times' seconds
		 * until the client's SETATTR */
		struct ceph_statx v = { 0 };

		v.stx_atime.tv_sec = be32_at(verf);
		v.stx_mtime.tv_sec = be32_at(verf + 4);
		err = fsc_api->ca_ll_setattr(cm, in, &v,
					     CEPH_SETATTR_ATIME | CEPH_SETATTR_MTIME,
					     d->co_mnt->cm_root);
		if (err) {
			fsc_api->ca_ll_close(cm, fh);
			fsc_api->ca_ll_put(cm, in);
			return FSC_ERR(err, MAKE_ERRS);
		}
		stx.stx_atime = v.stx_atime;
		stx.stx_mtime = v.stx_mtime;
	}
	return made(c, d, in, &stx, fh, O_RDWR, out, st);
}

int fsc_be_mkdir(struct fs_call *c, struct fs_fentry *dir,
		 const struct stat *dst, const char *name, mode_t mode,
		 struct fs_fentry *out, struct stat *st)
{
	struct fsc_obj *d = fsc_fe(dir);
	const UserPerm *perms = caller(c, d);
	struct ceph_statx stx;
	Inode *in;
	int err;

	(void)dst;
	if (!perms)
		return -ENOMEM;
	err = fsc_api->ca_ll_mkdir(d->co_mnt->cm_cmount, d->co_in, name,
				   mode & 07777, &in, &stx,
				   CEPH_STATX_BASIC_STATS, 0, perms);
	if (err)
		return FSC_ERR(err, MAKE_ERRS);
	return made(c, d, in, &stx, NULL, 0, out, st);
}

int fsc_be_mknod(struct fs_call *c, struct fs_fentry *dir,
		 const struct stat *dst, const char *name, mode_t mode,
		 dev_t rdev, struct fs_fentry *out, struct stat *st)
{
	struct fsc_obj *d = fsc_fe(dir);
	const UserPerm *perms = caller(c, d);
	struct ceph_statx stx;
	mode_t type = mode & S_IFMT;
	Inode *in;
	int err;

	(void)dst;
	if (type != S_IFCHR && type != S_IFBLK && type != S_IFIFO &&
	    type != S_IFSOCK)
		return -EINVAL;
	if ((type == S_IFCHR || type == S_IFBLK) && c->c_cred.cr_uid != 0)
		return -EPERM; /* CAP_MKNOD */
	if (!perms)
		return -ENOMEM;
	err = fsc_api->ca_ll_mknod(d->co_mnt->cm_cmount, d->co_in, name,
				   type | (mode & 07777), rdev, &in, &stx,
				   CEPH_STATX_BASIC_STATS, 0, perms);
	if (err)
		return FSC_ERR(err, MAKE_ERRS);
	return made(c, d, in, &stx, NULL, 0, out, st);
}

int fsc_be_symlink(struct fs_call *c, struct fs_fentry *dir,
		   const struct stat *dst, const char *name,
		   const char *target, struct fs_fentry *out, struct stat *st)
{
	struct fsc_obj *d = fsc_fe(dir);
	const UserPerm *perms = caller(c, d);
	struct ceph_statx stx;
	Inode *in;
	int err;

	(void)dst;
	if (!perms)
		return -ENOMEM;
	err = fsc_api->ca_ll_symlink(d->co_mnt->cm_cmount, d->co_in, name,
				     target, &in, &stx, CEPH_STATX_BASIC_STATS,
				     0, perms);
	if (err)
		return FSC_ERR(err, MAKE_ERRS);
	return made(c, d, in, &stx, NULL, 0, out, st);
}

ssize_t fsc_be_readlink(struct fs_call *c, struct fs_fentry *fe, char *buf,
			size_t len)
{
	struct fsc_obj *o = fsc_fe(fe);
	int r;

	(void)c;
	if (fe->fe_type != S_IFLNK)
		return -EINVAL;
	r = fsc_api->ca_ll_readlink(o->co_mnt->cm_cmount, o->co_in, buf, len,
				    o->co_mnt->cm_root);
	if (r < 0)
		return FSC_ERR(r, -EINVAL);
	/* libcephfs stops at @len: a target that filled it may be longer */
	if ((size_t)r >= len)
		return -ENAMETOOLONG;
	return r;
}

int fsc_be_link(struct fs_call *c, struct fs_fentry *fe, struct fs_fentry *dir,
		const char *name)
{
	struct fsc_obj *o = fsc_fe(fe), *d = fsc_fe(dir);
	const UserPerm *perms = caller(c, d);
	int err;

	if (fe->fe_type == S_IFDIR)
		return -EPERM;
	if (!perms)
		return -ENOMEM;
	err = fsc_api->ca_ll_link(d->co_mnt->cm_cmount, o->co_in, d->co_in,
				  name, perms);
	return FSC_ERR(err, -EEXIST, -EACCES, -EPERM, -EMLINK, -EXDEV, -ENOSPC,
		       -ENOENT, -ENOTDIR, -ENAMETOOLONG);
}

int fsc_be_unlink(struct fs_call *c, struct fs_fentry *dir, const char *name,
		  bool rmdir)
{
	struct fsc_obj *d = fsc_fe(dir);
	const UserPerm *perms = caller(c, d);
	struct ceph_mount_info *cm = d->co_mnt->cm_cmount;
	int err;

	if (!strcmp(name, "."))
		return -EINVAL;
	if (!perms)
		return -ENOMEM;
	err = rmdir ? fsc_api->ca_ll_rmdir(cm, d->co_in, name, perms) :
		      fsc_api->ca_ll_unlink(cm, d->co_in, name, perms);
	return FSC_ERR(err, -ENOENT, -EACCES, -EPERM, -ENOTEMPTY, -EBUSY,
		       -EISDIR, -ENOTDIR, -EINVAL);
}

int fsc_be_rename(struct fs_call *c, struct fs_fentry *fdir, const char *fname,
		  struct fs_fentry *tdir, const char *tname, bool two_dirs,
		  uint8_t *fh, uint32_t *fhlen, bool *have_fh)
{
	struct fsc_obj *fd = fsc_fe(fdir), *td = fsc_fe(tdir);
	const UserPerm *perms;
	bool got = false;
	int err;

	(void)two_dirs;
	*have_fh = false;
	/* the handle of what @tname names, for the layer to drop from its
	 * caches once it is replaced (asked before: afterwards it is gone) */
	if (c->c_exp->ex_fcache)
		got = fs_fh_of(c, tdir, tname, fh, fhlen) == 0;
	perms = caller(c, fd);
	if (!perms)
		return -ENOMEM;
	err = fsc_api->ca_ll_rename(fd->co_mnt->cm_cmount, fd->co_in, fname,
				    td->co_in, tname, perms);
	*have_fh = !err && got;
	return FSC_ERR(err, -ENOENT, -EACCES, -EPERM, -EEXIST, -ENOTEMPTY,
		       -EISDIR, -ENOTDIR, -EINVAL, -EXDEV, -EBUSY, -ENAMETOOLONG);
}
