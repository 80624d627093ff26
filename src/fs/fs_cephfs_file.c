// SPDX-License-Identifier: MIT
/*
 * fs_cephfs_file.c - the cephfs backend's operations on one object:
 * access, open, read, write, commit, setattr.
 *
 * access and open are decided here from the caller's credentials and the
 * mode bits (knfsd's overrides for open: the owner always, read also with
 * execute), because every caller's data goes through one Fh per object,
 * opened with the server's identity (fsc_obj_fh()).  READ and WRITE go
 * straight between libcephfs and the caller's iovecs (the transport's
 * registered buffers): ceph_ll_readv / ceph_ll_writev, no bounce copy.
 * UNSTABLE writes stay in libcephfs' buffers until COMMIT
 * (ceph_ll_sync_inode of the data only: be_commit).  DATA_SYNC and
 * FILE_SYNC WRITEs of a file this gateway created and never read or wrote
 * through the cache go straight to the OSDs through an O_DIRECT Fh
 * (fs_cephfs_direct.c); others sync the data (ceph_ll_fsync, data only)
 * before answering.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs_cephfs.h"

/* attrs - @st, or the object's attributes now into @tmp. */
static const struct stat *attrs(struct fs_call *c, struct fs_fentry *fe,
				const struct stat *st, struct stat *tmp, int *err)
{
	if (st)
		return st;
	*err = c->c_exp->ex_be->be_getattr(c->c_exp, fe, tmp);
	return *err ? NULL : tmp;
}

int fsc_be_access(struct fs_call *c, struct fs_fentry *fe,
		  const struct stat *st, int mode)
{
	struct stat tmp;
	int err = 0;

	st = attrs(c, fe, st, &tmp, &err);
	if (!st)
		return err;
	return fsc_may(&c->c_cred, st, mode & (R_OK | W_OK | X_OK));
}

/* may_open - be_open's decision: the owner always, else the mode; read
 * also with execute. */
static int may_open(const struct fs_cred *cr, const struct stat *st, int acc)
{
	int want;

	if (cr->cr_uid == st->st_uid)
		return 0;
	want = acc == O_WRONLY ? W_OK : acc == O_RDWR ? R_OK | W_OK : R_OK;
	if (fsc_may(cr, st, want) == 0)
		return 0;
	if (acc == O_RDONLY && fsc_may(cr, st, X_OK) == 0)
		return 0;
	return -EACCES;
}

int fsc_be_open(struct fs_call *c, struct fs_fentry *fe, const struct stat *st,
		int acc)
{
	struct stat tmp;
	int err = 0;

	st = attrs(c, fe, st, &tmp, &err);
	if (!st)
		return err;
	err = may_open(&c->c_cred, st, acc & O_ACCMODE);
	if (err)
		return err;
	/* the Fh now, so READ and WRITE find it */
	if (!fsc_obj_fh(fsc_fe(fe), acc & O_ACCMODE, &err))
		return err == -EISDIR ? -EACCES : err;
	return 0;
}

/*
 * iov_skip - @iov (@cnt) without its first @skip bytes into @out (room
 * for @cnt).  Return: the number of iovecs in @out.
 */
static int iov_skip(const struct iovec *iov, int cnt, size_t skip,
		    struct iovec *out)
{
	int n = 0;

	for (int i = 0; i < cnt; i++) {
		if (skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			continue;
		}
		out[n].iov_base = (char *)iov[i].iov_base + skip;
		out[n].iov_len = iov[i].iov_len - skip;
		skip = 0;
		n++;
	}
	return n;
}

static size_t iov_total(const struct iovec *iov, int cnt)
{
	size_t t = 0;

	for (int i = 0; i < cnt; i++)
		t += iov[i].iov_len;
	return t;
}

/*
 * rw_all - read (@write false) or write all of @iov through @fh at @off,
 * again after a short transfer (a read stops at the end of the file).
 * Return: bytes moved (*@err 0), or the bytes moved before libcephfs'
 * error *@err.
 */
static size_t rw_all(struct fsc_obj *o, Fh *fh, bool write,
		     const struct iovec *iov, int cnt, uint64_t off, int *err)
{
	struct ceph_mount_info *cm = o->co_mnt->cm_cmount;
	size_t want = iov_total(iov, cnt), got = 0;
	struct iovec *rest = NULL;
	const struct iovec *cur = iov;
	int ncur = cnt;

	*err = 0;
	while (got < want) {
		int64_t r = write ?
			fsc_api->ca_ll_writev(cm, fh, cur, ncur, (int64_t)(off + got)) :
			fsc_api->ca_ll_readv(cm, fh, cur, ncur, (int64_t)(off + got));

		if (r < 0) {
			*err = (int)r;
			break;
		}
		if (r == 0) {
			if (write)
				*err = -EIO; /* no progress: do not spin */
			break;
		}
		got += (size_t)r;
		if (got >= want)
			break;
		if (!rest) {
			rest = malloc((size_t)cnt * sizeof(*rest));
			if (!rest) {
				*err = -ENOMEM;
				break;
			}
		}
		ncur = iov_skip(iov, cnt, got, rest);
		cur = rest;
	}
	free(rest);
	return got;
}

ssize_t fsc_be_read(struct fs_call *c, struct fs_fentry *fe,
		    const struct iovec *iov, int iovcnt, uint64_t off,
		    bool nowait)
{
	struct fsc_obj *o = fsc_fe(fe);
	size_t got;
	int err = 0;
	Fh *fh;

	(void)c;
	if (nowait)
		return -EOPNOTSUPP; /* the network may be waited for: a worker */
	if (fe->fe_type == S_IFDIR)
		return -EISDIR;
	if (fe->fe_type != S_IFREG)
		return -EINVAL;
	if (off > INT64_MAX)
		return -EINVAL;
	fsc_direct_forget(o); /* the read fills the object cache */
	fh = fsc_obj_fh(o, O_RDONLY, &err);
	if (!fh)
		return err == -EACCES || err == -ESTALE ? -EIO : FSC_ERR(err, -EISDIR);
	got = rw_all(o, fh, false, iov, iovcnt, off, &err);
	if (err && !got)
		return FSC_ERR(err, -EISDIR, -EINVAL);
	return (ssize_t)got;
}

int fsc_be_write(struct fs_call *c, struct fs_fentry *fe,
		 const struct iovec *iov, int iovcnt, uint64_t off,
		 uint32_t stable, size_t *done)
{
	struct fsc_obj *o = fsc_fe(fe);
	int err = 0;
	Fh *fh, *dfh;

	(void)c;
	*done = 0;
	if (off > INT64_MAX)
		return -EFBIG;
	/* the cached Fh read-write in any case: be_lease_open tells a
	 * file written here by it */
	fh = fsc_obj_fh(o, O_WRONLY, &err);
	if (!fh)
		return err == -ENOSPC || err == -EDQUOT ? err : -EIO;
	dfh = stable != FS_UNSTABLE ? fsc_direct_begin(o) : NULL;
	if (dfh) {
		/* to the OSDs and back: nothing left to sync */
		*done = rw_all(o, dfh, true, iov, iovcnt, off, &err);
		fsc_direct_end(o);
		if (err)
			return *done ? 0 : FSC_ERR(err, -EFBIG);
		return 0;
	}
	fsc_direct_forget(o); /* the write goes into the object cache */
	*done = rw_all(o, fh, true, iov, iovcnt, off, &err);
	if (err)
		return *done ? 0 : FSC_ERR(err, -EFBIG);
	/* DATA_SYNC and FILE_SYNC: the data, as be_commit (the size and
	 * mtime in the dirty caps are the MDS's to recover; waiting for
	 * their flush is one MDS journal write per WRITE, and the Linux
	 * client sends a lone O_DIRECT or flushed WRITE as FILE_SYNC) */
	if (stable != FS_UNSTABLE) {
		err = fsc_api->ca_ll_fsync(o->co_mnt->cm_cmount, fh, 1);
		if (err)
			return FSC_ERR(err);
	}
	return 0;
}

/*
 * be_commit: the inode's dirty data, whichever Fh wrote it, written to
 * the OSDs and waited for; its dirty caps are left to libcephfs' own
 * flush, @datasync or not.  What those caps hold after WRITEs is the
 * file's size and mtime, which the MDS recovers from the objects when the
 * gateway's session ends without them (the kernel CephFS client's fsync
 * does not wait for them either, for that reason); attributes a SETATTR
 * changed were committed by that SETATTR (commit_metadata).  A full sync
 * would add a cap flush and its acknowledgement, one MDS journal write,
 * to every COMMIT (docs/cephfs.md "Speed").
 */
int fsc_be_commit(struct fs_call *c, struct fs_fentry *fe, bool datasync)
{
	struct fsc_obj *o = fsc_fe(fe);

	(void)c;
	(void)datasync;
	return FSC_ERR(fsc_api->ca_ll_sync_inode(o->co_mnt->cm_cmount, o->co_in, 1));
}

int fsc_be_commit_meta(struct fs_call *c, struct fs_fentry *fe)
{
	struct fsc_obj *o = fsc_fe(fe);

	(void)c;
	return FSC_ERR(fsc_api->ca_ll_sync_inode(o->co_mnt->cm_cmount, o->co_in, 0));
}

static bool bad_time(uint32_t how, const struct timespec *ts)
{
	return how > FS_SET_TO_CLIENT_TIME ||
	       (how == FS_SET_TO_CLIENT_TIME &&
		(ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L));
}

/*
 * be_setattr: the size first, decided here (a regular file; its owner
 * or a writer, as knfsd lets the owner truncate whatever the mode) and
 * set with the server's identity; then owner, mode and times in one
 * ceph_ll_setattr() as the caller, libcephfs checking them as POSIX
 * says (chown root only, chgrp the owner to its groups, chmod the owner,
 * client times the owner, server times also a writer: the *_NOW flags
 * tell it which).  A refused second part leaves the size set, as the
 * posix backend's separate system calls do.
 */
int fsc_be_setattr(struct fs_call *c, struct fs_fentry *fe,
		   const struct stat *pre, const struct fs_sattr *sa,
		   bool skip_mode)
{
	const int allowed[] = { -EPERM, -EACCES, -EINVAL, -EISDIR, -EFBIG,
				-ENOSPC, -EROFS, -ESTALE };
	struct fsc_obj *o = fsc_fe(fe);
	struct ceph_mount_info *cm = o->co_mnt->cm_cmount;
	const UserPerm *perms;
	struct ceph_statx stx;
	struct timespec now;
	struct stat tmp;
	int mask = 0, err = 0;

	if (bad_time(sa->sa_atime_how, &sa->sa_atime) ||
	    bad_time(sa->sa_mtime_how, &sa->sa_mtime))
		return -EINVAL;
	memset(&stx, 0, sizeof(stx));
	if (sa->sa_set_size) {
		pre = attrs(c, fe, pre, &tmp, &err);
		if (!pre)
			return err;
		if (S_ISDIR(pre->st_mode))
			return -EISDIR;
		if (!S_ISREG(pre->st_mode))
			return -EINVAL;
		if (sa->sa_size > INT64_MAX)
			return -EFBIG;
		err = may_open(&c->c_cred, pre, O_WRONLY);
		if (err)
			return err;
		stx.stx_size = sa->sa_size;
		err = fsc_api->ca_ll_setattr(cm, o->co_in, &stx, CEPH_SETATTR_SIZE,
					     o->co_mnt->cm_root);
		if (err)
			return fsc_err(err, allowed, sizeof(allowed) / sizeof(allowed[0]));
	}
	if (sa->sa_set_uid) {
		stx.stx_uid = sa->sa_uid;
		mask |= CEPH_SETATTR_UID;
	}
	if (sa->sa_set_gid) {
		stx.stx_gid = sa->sa_gid;
		mask |= CEPH_SETATTR_GID;
	}
	if (sa->sa_set_mode && !skip_mode && fe->fe_type != S_IFLNK) {
		stx.stx_mode = (uint16_t)(sa->sa_mode & 07777);
		mask |= CEPH_SETATTR_MODE;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	if (sa->sa_atime_how != FS_DONT_CHANGE) {
		mask |= CEPH_SETATTR_ATIME;
		stx.stx_atime = sa->sa_atime;
		if (sa->sa_atime_how == FS_SET_TO_SERVER_TIME) {
			stx.stx_atime = now;
			mask |= CEPH_SETATTR_ATIME_NOW;
		}
	}
	if (sa->sa_mtime_how != FS_DONT_CHANGE) {
		mask |= CEPH_SETATTR_MTIME;
		stx.stx_mtime = sa->sa_mtime;
		if (sa->sa_mtime_how == FS_SET_TO_SERVER_TIME) {
			stx.stx_mtime = now;
			mask |= CEPH_SETATTR_MTIME_NOW;
		}
	}
	if (!mask)
		return 0;
	perms = fsc_perm(o->co_mnt, &c->c_cred);
	if (!perms)
		return -ENOMEM;
	err = fsc_api->ca_ll_setattr(cm, o->co_in, &stx, mask, perms);
	return fsc_err(err, allowed, sizeof(allowed) / sizeof(allowed[0]));
}
