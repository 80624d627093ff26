// SPDX-License-Identifier: MIT
/*
 * fs_cephfs_api.c - the cephfs backend's seam: the table of libcephfs
 * functions it calls (fs_cephfs.h, struct fs_ceph_api), filled with
 * libcephfs' own.  Unit tests install fakes (fs_cephfs_set_api()) and
 * need no cluster.
 */
#include "fs_cephfs.h"

/* ceph_create() takes "const char * const"; the same function type. */
static int real_create(struct ceph_mount_info **cmount, const char *id)
{
	return ceph_create(cmount, id);
}

/* ceph_ll_delegation() takes "unsigned int"; the same. */
static int real_delegation(struct ceph_mount_info *cmount, Fh *fh,
			   unsigned cmd, ceph_deleg_cb_t cb, void *priv)
{
	return ceph_ll_delegation(cmount, fh, cmd, cb, priv);
}

const struct fs_ceph_api fsc_real_api = {
	.ca_create = real_create,
	.ca_conf_read_file = ceph_conf_read_file,
	.ca_conf_set = ceph_conf_set,
	.ca_conf_get = ceph_conf_get,
	.ca_init = ceph_init,
	.ca_select_filesystem = ceph_select_filesystem,
	.ca_start_reclaim = ceph_start_reclaim,
	.ca_finish_reclaim = ceph_finish_reclaim,
	.ca_set_uuid = ceph_set_uuid,
	.ca_mount = ceph_mount,
	.ca_get_fs_cid = ceph_get_fs_cid,
	.ca_set_deleg_timeout = ceph_set_deleg_timeout,
	.ca_shutdown = ceph_shutdown,
	.ca_userperm_new = ceph_userperm_new,
	.ca_userperm_destroy = ceph_userperm_destroy,
	.ca_ll_walk = ceph_ll_walk,
	.ca_ll_lookup_vino = ceph_ll_lookup_vino,
	.ca_ll_lookup = ceph_ll_lookup,
	.ca_ll_put = ceph_ll_put,
	.ca_ll_getattr = ceph_ll_getattr,
	.ca_ll_setattr = ceph_ll_setattr,
	.ca_ll_open = ceph_ll_open,
	.ca_ll_close = ceph_ll_close,
	.ca_ll_readv = ceph_ll_readv,
	.ca_ll_writev = ceph_ll_writev,
	.ca_ll_fsync = ceph_ll_fsync,
	.ca_ll_sync_inode = ceph_ll_sync_inode,
	.ca_ll_create = ceph_ll_create,
	.ca_ll_mknod = ceph_ll_mknod,
	.ca_ll_mkdir = ceph_ll_mkdir,
	.ca_ll_symlink = ceph_ll_symlink,
	.ca_ll_readlink = ceph_ll_readlink,
	.ca_ll_link = ceph_ll_link,
	.ca_ll_unlink = ceph_ll_unlink,
	.ca_ll_rmdir = ceph_ll_rmdir,
	.ca_ll_rename = ceph_ll_rename,
	.ca_ll_opendir = ceph_ll_opendir,
	.ca_ll_releasedir = ceph_ll_releasedir,
	.ca_readdir_r = ceph_readdir_r,
	.ca_telldir = ceph_telldir,
	.ca_seekdir = ceph_seekdir,
	.ca_ll_statfs = ceph_ll_statfs,
	.ca_ll_getlk = ceph_ll_getlk,
	.ca_ll_setlk = ceph_ll_setlk,
	.ca_ll_delegation = real_delegation,
};

const struct fs_ceph_api *fsc_api = &fsc_real_api;
