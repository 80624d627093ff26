// SPDX-License-Identifier: MIT
/*
 * fs_cephfs.c - the cephfs backend (fs_backend.h): CephFS through
 * libcephfs' low-level API.  This file holds handles, objects, attributes,
 * statfs and the operations table; fs_cephfs.h lists the other files.
 *
 * Nothing switches the thread's identity (the caller's credentials go to
 * libcephfs as a UserPerm, or the backend decides from the mode bits);
 * operations may wait for the network (no FS_BE_NEVER_WAITS): READ on
 * the transport thread answers -EOPNOTSUPP, so it moves to a worker.
 * A cluster that does not answer in time makes an operation answer
 * -EAGAIN (NFS3ERR_JUKEBOX, NFS4ERR_DELAY), never a wrong answer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs_cephfs.h"

void fsc_key_put(uint64_t ino, uint64_t snap, uint64_t fscid, uint8_t *key)
{
	const uint64_t v[3] = { ino, snap, fscid };

	for (int k = 0; k < 3; k++)
		for (int i = 0; i < 8; i++)
			key[8 * k + i] = (uint8_t)(v[k] >> (56 - 8 * i));
}

void fsc_key_get(const uint8_t *key, uint64_t *ino, uint64_t *snap,
		 uint64_t *fscid)
{
	uint64_t v[3] = { 0, 0, 0 };

	for (int k = 0; k < 3; k++)
		for (int i = 0; i < 8; i++)
			v[k] = v[k] << 8 | key[8 * k + i];
	*ino = v[0];
	*snap = v[1];
	*fscid = v[2];
}

void fsc_statx_to_stat(const struct rpcrdma_nfs3_export *exp,
		       const struct ceph_statx *stx, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = exp->ex_dev;
	st->st_ino = (ino_t)stx->stx_ino;
	st->st_mode = stx->stx_mode;
	st->st_nlink = stx->stx_nlink;
	st->st_uid = stx->stx_uid;
	st->st_gid = stx->stx_gid;
	st->st_rdev = stx->stx_rdev;
	st->st_size = (off_t)stx->stx_size;
	st->st_blksize = stx->stx_blksize;
	st->st_blocks = (blkcnt_t)stx->stx_blocks;
	st->st_atim = stx->stx_atime;
	st->st_mtim = stx->stx_mtime;
	st->st_ctim = stx->stx_ctime;
}

int fsc_obj_new(struct fsc_mount *m, Inode *in, const struct ceph_statx *stx,
		Fh *fh, int acc, struct fs_fentry *fe)
{
	struct fsc_obj *o = calloc(1, sizeof(*o));

	if (!o || pthread_mutex_init(&o->co_lock, NULL)) {
		free(o);
		if (fh)
			fsc_api->ca_ll_close(m->cm_cmount, fh);
		fsc_api->ca_ll_put(m->cm_cmount, in);
		return -ENOMEM;
	}
	o->co_mnt = m;
	o->co_in = in;
	o->co_ino = stx->stx_ino;
	/* libcephfs gives the snapshot id as stx_dev (CEPH_NOSNAP: live) */
	o->co_snap = (uint64_t)stx->stx_dev;
	atomic_init(&o->co_fh_acc, fh ? acc : 0);
	atomic_init(&o->co_fh, fh);
	fe->fe_node = o;
	fe->fe_type = stx->stx_mode & S_IFMT;
	return 0;
}

Fh *fsc_obj_fh(struct fsc_obj *o, int acc, int *err)
{
	struct ceph_mount_info *cm = o->co_mnt->cm_cmount;
	bool want_w = (acc & O_ACCMODE) != O_RDONLY;
	Fh *fh = atomic_load(&o->co_fh), *nfh = NULL;
	int r;

	if (fh && (!want_w || atomic_load(&o->co_fh_acc) == O_RDWR))
		return fh;
	pthread_mutex_lock(&o->co_lock);
	fh = atomic_load(&o->co_fh);
	if (fh && (!want_w || atomic_load(&o->co_fh_acc) == O_RDWR))
		goto out;
	/* read-only until a write needs more: a file open for writing
	 * here gets no read delegation (be_lease_open) */
	r = fsc_api->ca_ll_open(cm, o->co_in, want_w ? O_RDWR : O_RDONLY, &nfh,
				o->co_mnt->cm_root);
	if (r == 0)
		atomic_store(&o->co_fh_acc, want_w ? O_RDWR : O_RDONLY);
	if (r) {
		*err = FSC_ERR(r, -EACCES, -EROFS, -ESTALE, -ETXTBSY, -EISDIR);
		fh = NULL;
		goto out;
	}
	/* a read-only Fh replaced: readers may hold it still */
	if (fh)
		o->co_fh_old = fh;
	atomic_store(&o->co_fh, nfh);
	fh = nfh;
out:
	pthread_mutex_unlock(&o->co_lock);
	return fh;
}

/* ---- handles and objects ---- */

int fsc_lookup_ref(const struct rpcrdma_nfs3_export *exp, struct fsc_obj *dir,
		   const char *name, const UserPerm *perms, unsigned want,
		   Inode **in, struct ceph_statx *stx)
{
	struct fsc_export *ce = fsc_ex(exp);
	Inode *din = dir ? dir->co_in : ce->ce_root;
	uint64_t dino = dir ? dir->co_ino : ce->ce_root_ino;

	/* ".." of the export's root is the root */
	if (!strcmp(name, "..") && dino == ce->ce_root_ino)
		name = ".";
	return fsc_api->ca_ll_lookup(ce->ce_mnt->cm_cmount, din, name, in, stx,
				     want, AT_SYMLINK_NOFOLLOW, perms);
}

static int fsc_fh_key(const struct rpcrdma_nfs3_export *exp,
		      struct fs_fentry *dir, const char *name, uint8_t *key,
		      uint32_t *keylen, uint32_t *type)
{
	struct fsc_export *ce = fsc_ex(exp);
	struct fsc_obj *d = dir ? fsc_fe(dir) : NULL;
	struct ceph_statx stx;
	uint64_t ino, snap;
	Inode *in;
	int err;

	if (!name[0]) {
		ino = d ? d->co_ino : ce->ce_root_ino;
		snap = d ? d->co_snap : FSC_NOSNAP;
	} else {
		/* the identity only: attributes would make the MDS revoke
		 * caps another client holds (REMOVE and RENAME ask this of
		 * a name before it goes) */
		err = fsc_lookup_ref(exp, d, name, ce->ce_mnt->cm_root,
				     CEPH_STATX_INO, &in, &stx);
		if (err == -ENOTDIR || err == -ENAMETOOLONG)
			return -ENOENT;
		if (err)
			return FSC_ERR(err, -ENOENT, -EACCES);
		ino = stx.stx_ino;
		snap = (uint64_t)stx.stx_dev;
		fsc_api->ca_ll_put(ce->ce_mnt->cm_cmount, in);
	}
	fsc_key_put(ino, snap, ce->ce_mnt->cm_fscid, key);
	*keylen = FSC_KEY_LEN;
	*type = 0;
	return 0;
}

static int fsc_fh_decode(const struct rpcrdma_nfs3_export *exp, uint32_t type,
			 const uint8_t *key, uint32_t keylen,
			 struct fs_fentry *fe, struct stat *st)
{
	struct fsc_mount *m = fsc_ex(exp)->ce_mnt;
	struct ceph_statx stx;
	uint64_t fscid;
	vinodeno_t vino;
	Inode *in;
	int err;

	if (type != 0 || keylen != FSC_KEY_LEN)
		return -ESTALE;
	fsc_key_get(key, &vino.ino.val, &vino.snapid.val, &fscid);
	if (fscid != m->cm_fscid)
		return -ESTALE;
	err = fsc_api->ca_ll_lookup_vino(m->cm_cmount, vino, &in);
	if (err)
		return err == -ENOENT ? -ESTALE : FSC_ERR(err, -ESTALE);
	err = fsc_api->ca_ll_getattr(m->cm_cmount, in, &stx,
				     CEPH_STATX_BASIC_STATS, 0, m->cm_root);
	if (!err && stx.stx_nlink == 0)
		err = -ESTALE; /* no name left: as the memory backend */
	if (err) {
		fsc_api->ca_ll_put(m->cm_cmount, in);
		return err == -ENOENT ? -ESTALE : FSC_ERR(err, -ESTALE);
	}
	err = fsc_obj_new(m, in, &stx, NULL, 0, fe);
	if (!err && st)
		fsc_statx_to_stat(exp, &stx, st);
	return err;
}

static void fsc_release(struct fs_fentry *fe)
{
	struct fsc_obj *o = fsc_fe(fe);
	struct ceph_mount_info *cm;
	Fh *fh;

	if (!o)
		return;
	cm = o->co_mnt->cm_cmount;
	fh = atomic_load(&o->co_fh);
	if (fh)
		fsc_api->ca_ll_close(cm, fh);
	if (o->co_fh_old)
		fsc_api->ca_ll_close(cm, o->co_fh_old);
	fh = atomic_load(&o->co_fh_direct);
	if (fh)
		fsc_api->ca_ll_close(cm, fh);
	fsc_api->ca_ll_put(cm, o->co_in);
	pthread_mutex_destroy(&o->co_lock);
	free(o);
	fe->fe_node = NULL;
}

static int fsc_getattr(const struct rpcrdma_nfs3_export *exp,
		       struct fs_fentry *fe, struct stat *st)
{
	struct fsc_obj *o = fsc_fe(fe);
	struct ceph_statx stx;
	int err;

	err = fsc_api->ca_ll_getattr(o->co_mnt->cm_cmount, o->co_in, &stx,
				     CEPH_STATX_BASIC_STATS, 0, o->co_mnt->cm_root);
	if (err)
		return err == -ENOENT ? -ESTALE : FSC_ERR(err, -ESTALE);
	fsc_statx_to_stat(exp, &stx, st);
	return 0;
}

static int fsc_statfs(struct fs_call *c, struct fs_fentry *fe,
		      struct fs_statfs *out)
{
	struct fsc_obj *o = fsc_fe(fe);
	struct statvfs sv;
	int err;

	(void)c;
	err = fsc_api->ca_ll_statfs(o->co_mnt->cm_cmount, o->co_in, &sv);
	if (err)
		return FSC_ERR(err);
	memset(out, 0, sizeof(*out));
	out->sf_bytes = (uint64_t)sv.f_blocks * sv.f_frsize;
	out->sf_bfree = (uint64_t)sv.f_bfree * sv.f_frsize;
	out->sf_bavail = (uint64_t)sv.f_bavail * sv.f_frsize;
	out->sf_files = sv.f_files;
	out->sf_ffree = sv.f_ffree;
	out->sf_favail = sv.f_favail ? sv.f_favail : sv.f_ffree;
	out->sf_linkmax = FSC_LINK_MAX;
	out->sf_namemax = sv.f_namemax ? (uint32_t)sv.f_namemax : 255;
	return 0;
}

const struct fs_backend fs_cephfs_backend = {
	.be_name = "cephfs",
	.be_flags = 0,
	.be_export_open = fsc_be_export_open,
	.be_export_close = fsc_be_export_close,
	.be_fh_key = fsc_fh_key,
	.be_fh_decode = fsc_fh_decode,
	.be_release = fsc_release,
	.be_getattr = fsc_getattr,
	.be_setattr = fsc_be_setattr,
	.be_access = fsc_be_access,
	.be_lookup = fsc_be_lookup,
	.be_open = fsc_be_open,
	.be_read = fsc_be_read,
	.be_write = fsc_be_write,
	.be_commit = fsc_be_commit,
	.be_commit_meta = fsc_be_commit_meta,
	.be_create = fsc_be_create,
	.be_mkdir = fsc_be_mkdir,
	.be_mknod = fsc_be_mknod,
	.be_symlink = fsc_be_symlink,
	.be_readlink = fsc_be_readlink,
	.be_link = fsc_be_link,
	.be_unlink = fsc_be_unlink,
	.be_rename = fsc_be_rename,
	.be_readdir = fsc_be_readdir,
	.be_statfs = fsc_statfs,
	.be_lock_open = fsc_be_lock_open,
	.be_lock = fsc_be_lock,
	.be_lock_dup = fsc_be_lock_dup,
	.be_lock_close = fsc_be_lock_close,
	.be_lease_open = fsc_be_lease_open,
	.be_lease_close = fsc_be_lease_close,
	.be_cluster_grace = fsc_be_cluster_grace,
};
