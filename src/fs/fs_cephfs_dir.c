// SPDX-License-Identifier: MIT
/*
 * fs_cephfs_dir.c - the cephfs backend's readdir.  Cookies are libcephfs'
 * own directory offsets (ceph_telldir() after an entry, ceph_seekdir() to
 * go on): "." and ".." first at 0 and 1, then entries at offsets made of
 * the name's hash and the directory fragment, which do not move when
 * other entries come or go, and which another gateway of the same file
 * system gives too.  A cookie is passed back to ceph_seekdir() as it came.
 */
#include <errno.h>
#include <string.h>

#include "fs_cephfs.h"

int fsc_be_readdir(struct fs_call *c, struct fs_fentry *dir,
		   const struct stat *dst, uint64_t cookie,
		   int (*fn)(void *arg, const char *name, uint64_t ino,
			     uint64_t cookie),
		   void *arg, bool *eof)
{
	struct fsc_obj *d = fsc_fe(dir);
	struct fsc_export *ce = fsc_ex(c->c_exp);
	struct ceph_mount_info *cm = d->co_mnt->cm_cmount;
	struct ceph_dir_result *dirp;
	const UserPerm *perms;
	struct dirent de;
	int err = 0, r;

	*eof = false;
	if (dir->fe_type != S_IFDIR)
		return -ENOTDIR;
	if (dst && fsc_may(&c->c_cred, dst, R_OK))
		return -EACCES;
	perms = fsc_perm(d->co_mnt, &c->c_cred);
	if (!perms)
		return -ENOMEM;
	r = fsc_api->ca_ll_opendir(cm, d->co_in, &dirp, perms);
	if (r)
		return FSC_ERR(r, -EACCES, -ENOTDIR);
	if (cookie)
		fsc_api->ca_seekdir(cm, dirp, (int64_t)cookie);
	for (;;) {
		uint64_t ino, next;

		r = fsc_api->ca_readdir_r(cm, dirp, &de);
		if (r < 0) {
			err = FSC_ERR(r, -EACCES, -ENOTDIR);
			break;
		}
		if (r == 0) {
			*eof = true;
			break;
		}
		ino = de.d_ino;
		/* the export root's ".." is the root itself */
		if (d->co_ino == ce->ce_root_ino && !strcmp(de.d_name, ".."))
			ino = ce->ce_root_ino;
		next = (uint64_t)fsc_api->ca_telldir(cm, dirp);
		if (fn(arg, de.d_name, ino, next))
			break;
	}
	fsc_api->ca_ll_releasedir(cm, dirp);
	return err;
}
