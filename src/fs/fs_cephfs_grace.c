// SPDX-License-Identifier: MIT
/*
 * fs_cephfs_grace.c - the grace period across the gateways of one CephFS
 * (docs/cephfs.md "Grace across gateways").
 *
 * The record lives in the file system itself, in a directory the
 * exports name (grace=/DIR) and every gateway's Ceph user may write: one
 * file per gateway, named by its Ceph uuid (rpcrdma-HOST-HASH), holding
 * "rpcrdma-grace 1 END\n", END the CLOCK_REALTIME second its grace period
 * after a start ends.  A starting gateway writes its file through a
 * client of its own mounted at DIR (fs_cephfs_mount.c) before its real
 * mount resets the previous incarnation's session (which drops that
 * session's locks); the other gateways read the directory through their
 * mount before granting a new lock or open (be_cluster_grace) and refuse
 * while some other gateway's END lies ahead.  A gateway that died and
 * never returns holds the cluster at most until its END.
 *
 * Reading costs one ceph_ll_walk of DIR (answered from libcephfs' cache
 * while this client holds the directory's caps, which the MDS revokes
 * when another client changes it); the records are read again only when
 * the directory's change attribute or mtime moved (a record is replaced
 * by a rename, which moves both).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs.h"
#include "fs_cephfs.h"

#define REC_MAGIC "rpcrdma-grace 1 "

int fsc_grace_parse(const char *buf, size_t len, int64_t *end)
{
	size_t m = sizeof(REC_MAGIC) - 1, i;
	int64_t v = 0;

	if (len <= m + 1 || memcmp(buf, REC_MAGIC, m) || buf[len - 1] != '\n')
		return -EBADMSG;
	for (i = m; i < len - 1; i++) {
		if (buf[i] < '0' || buf[i] > '9' || v > (INT64_MAX - 9) / 10)
			return -EBADMSG;
		v = v * 10 + (buf[i] - '0');
	}
	*end = v;
	return 0;
}

int fsc_grace_announce(struct ceph_mount_info *cm, const UserPerm *perm,
		       const char *name, int64_t end)
{
	const struct fs_ceph_api *a = fsc_api;
	char tmp[FSC_UUID_MAX + 8], text[48];
	struct ceph_statx stx;
	struct iovec iov;
	Inode *dir = NULL, *in = NULL;
	Fh *fh = NULL;
	int64_t w;
	int n, err;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	n = snprintf(text, sizeof(text), REC_MAGIC "%" PRId64 "\n", end);
	err = a->ca_ll_walk(cm, "/", &dir, &stx, 0, 0, perm);
	if (err)
		return err;
	err = a->ca_ll_create(cm, dir, tmp, 0644, O_WRONLY | O_CREAT | O_TRUNC,
			      &in, &fh, &stx, 0, 0, perm);
	if (err)
		goto out_dir;
	iov.iov_base = text;
	iov.iov_len = (size_t)n;
	w = a->ca_ll_writev(cm, fh, &iov, 1, 0);
	if (w != n)
		err = w < 0 ? (int)w : -EIO;
	if (!err)
		err = a->ca_ll_fsync(cm, fh, 0);
	a->ca_ll_close(cm, fh);
	a->ca_ll_put(cm, in);
	if (!err)
		err = a->ca_ll_rename(cm, dir, tmp, dir, name, perm);
	if (!err)
		err = a->ca_ll_sync_inode(cm, dir, 0);
out_dir:
	a->ca_ll_put(cm, dir);
	return err;
}

/* read_one - the end the record @name in @dir says into *@end; a record
 * gone meanwhile or unreadable: *@end 0.  Return: 0, or an error of
 * the cluster (the answer cannot be known). */
static int read_one(struct fsc_mount *m, Inode *dir, const char *name, int64_t *end)
{
	const struct fs_ceph_api *a = fsc_api;
	char buf[FSC_GRACE_REC_MAX];
	struct ceph_statx stx;
	struct iovec iov = { buf, sizeof(buf) };
	Inode *in = NULL;
	Fh *fh = NULL;
	int64_t r;
	int err;

	*end = 0;
	err = a->ca_ll_lookup(m->cm_cmount, dir, name, &in, &stx, 0, 0, m->cm_root);
	if (err)
		return err == -ENOENT ? 0 : err;
	err = a->ca_ll_open(m->cm_cmount, in, O_RDONLY, &fh, m->cm_root);
	if (err) {
		a->ca_ll_put(m->cm_cmount, in);
		return err == -ENOENT ? 0 : err;
	}
	r = a->ca_ll_readv(m->cm_cmount, fh, &iov, 1, 0);
	a->ca_ll_close(m->cm_cmount, fh);
	a->ca_ll_put(m->cm_cmount, in);
	if (r < 0)
		return (int)r;
	if (fsc_grace_parse(buf, (size_t)r, end))
		*end = 0; /* not a record (a stray file): no grace */
	return 0;
}

/* scan - the latest end among the other gateways' records in @dir. */
static int scan(struct fsc_mount *m, Inode *dir, int64_t *latest)
{
	const struct fs_ceph_api *a = fsc_api;
	struct ceph_dir_result *d = NULL;
	struct dirent de;
	int64_t end;
	int err, r;

	*latest = 0;
	err = a->ca_ll_opendir(m->cm_cmount, dir, &d, m->cm_root);
	if (err)
		return err;
	while ((r = a->ca_readdir_r(m->cm_cmount, d, &de)) == 1) {
		/* ".", "..", records being written; this gateway's own */
		if (de.d_name[0] == '.' || !strcmp(de.d_name, m->cm_grace_name))
			continue;
		err = read_one(m, dir, de.d_name, &end);
		if (err)
			break;
		if (end > *latest)
			*latest = end;
	}
	if (!err && r < 0)
		err = r;
	a->ca_ll_releasedir(m->cm_cmount, d);
	return err;
}

int fsc_be_cluster_grace(struct rpcrdma_nfs3_export *exp)
{
	const struct fs_ceph_api *a = fsc_api;
	struct fsc_export *ce = fsc_ex(exp);
	struct fsc_mount *m = ce->ce_mnt;
	struct ceph_statx stx;
	struct timespec now;
	Inode *dir = NULL;
	int64_t end;
	int err;

	if (!m->cm_grace)
		return 0;
	pthread_mutex_lock(&m->cm_grace_mu);
	err = a->ca_ll_walk(m->cm_cmount, m->cm_grace, &dir, &stx,
			    CEPH_STATX_VERSION | CEPH_STATX_MTIME, 0, m->cm_root);
	if (err)
		goto out;
	if (!m->cm_grace_cached || stx.stx_version != m->cm_grace_ver ||
	    stx.stx_mtime.tv_sec != m->cm_grace_mtime.tv_sec ||
	    stx.stx_mtime.tv_nsec != m->cm_grace_mtime.tv_nsec) {
		m->cm_grace_cached = false;
		err = scan(m, dir, &end);
		if (!err) {
			m->cm_grace_end = end;
			m->cm_grace_ver = stx.stx_version;
			m->cm_grace_mtime = stx.stx_mtime;
			m->cm_grace_cached = true;
		}
	}
	a->ca_ll_put(m->cm_cmount, dir);
	end = m->cm_grace_end;
out:
	pthread_mutex_unlock(&m->cm_grace_mu);
	if (err)
		return -EAGAIN;
	clock_gettime(CLOCK_REALTIME, &now);
	/* an end further ahead than any grace period could last is no record
	 * of ours (or a clock far off): it holds nobody */
	if (end <= now.tv_sec ||
	    end - now.tv_sec > (int64_t)RPCRDMA_NFS3_INSTANCE_GRACE_MAX + FSC_GRACE_SLACK)
		return 0;
	return 1;
}
