// SPDX-License-Identifier: MIT
/*
 * fs_cephfs_grace.c - the grace period across the gateways of one CephFS
 * (docs/cephfs.md "Grace across gateways").
 *
 * The record lives in the file system itself, in a directory the
 * exports name (grace=/DIR) and every gateway's Ceph user may write: per
 * gateway a directory DIR/NAME, NAME its Ceph uuid (rpcrdma-HOST-HASH),
 * holding one file, "record": "rpcrdma-grace 1 END\n", END the
 * CLOCK_REALTIME second its grace period after a start ends, 20 digits
 * (so every record has the same size and is rewritten in place by one
 * write).  A starting gateway writes its record through a client of its
 * own mounted at DIR (fs_cephfs_mount.c) before its real mount resets the
 * previous incarnation's session (which drops that session's locks); the
 * other gateways read every other gateway's record through their mount
 * before granting a new lock or open (be_cluster_grace) and refuse while
 * some END lies ahead.  A gateway that died and never returns holds the
 * cluster at most until its END.
 *
 * Why in place, in a directory of its own: the killed predecessor's
 * session still holds whatever caps it had until the reset, and the MDS
 * would wait for it (the session timeout, 60 s) before letting anyone
 * change what it had cached: the directory DIR (which it read) and other
 * gateways' records.  It never reads its own record (the scan skips its
 * own name before looking it up), and a rewrite in place changes neither
 * DIR nor DIR/NAME, so the write needs no caps of the dead session.
 * Only a gateway's very first record makes DIR/NAME (a create in DIR).
 *
 * Reading walks DIR, reads it and each other gateway's record, every
 * time: libcephfs answers from its cache while it holds the caps, and the
 * MDS revokes them from readers when a record is written, so a new record
 * is seen at once.
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
#define REC_FILE "record"

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

/* sub_get - @name in @dir, a directory (made when @make and missing). */
static int sub_get(struct ceph_mount_info *cm, const UserPerm *perm, Inode *dir,
		   const char *name, bool make, Inode **out)
{
	const struct fs_ceph_api *a = fsc_api;
	struct ceph_statx stx;
	int err;

	err = a->ca_ll_lookup(cm, dir, name, out, &stx, CEPH_STATX_MODE, 0, perm);
	if (err == -ENOENT && make)
		err = a->ca_ll_mkdir(cm, dir, name, 0755, out, &stx, CEPH_STATX_MODE, 0, perm);
	if (!err && !S_ISDIR(stx.stx_mode)) {
		a->ca_ll_put(cm, *out);
		err = -ENOTDIR;
	}
	return err;
}

int fsc_grace_announce(struct ceph_mount_info *cm, const UserPerm *perm,
		       const char *name, int64_t end)
{
	const struct fs_ceph_api *a = fsc_api;
	char text[FSC_GRACE_REC_LEN + 1];
	struct ceph_statx stx;
	struct iovec iov;
	Inode *dir = NULL, *sub = NULL, *in = NULL;
	Fh *fh = NULL;
	int64_t w;
	int err;

	snprintf(text, sizeof(text), REC_MAGIC "%020" PRId64 "\n", end);
	err = a->ca_ll_walk(cm, "/", &dir, &stx, 0, 0, perm);
	if (err)
		return err;
	err = sub_get(cm, perm, dir, name, true, &sub);
	if (err)
		goto out_dir;
	err = a->ca_ll_lookup(cm, sub, REC_FILE, &in, &stx, 0, 0, perm);
	if (!err) {
		err = a->ca_ll_open(cm, in, O_WRONLY, &fh, perm);
		if (err)
			a->ca_ll_put(cm, in);
	} else if (err == -ENOENT) {
		err = a->ca_ll_create(cm, sub, REC_FILE, 0644, O_WRONLY | O_CREAT,
				      &in, &fh, &stx, 0, 0, perm);
	}
	if (err)
		goto out_sub;
	/* one write of the whole fixed-size record: a reader sees it all or
	 * the previous one (one object, written atomically) */
	iov.iov_base = text;
	iov.iov_len = FSC_GRACE_REC_LEN;
	w = a->ca_ll_writev(cm, fh, &iov, 1, 0);
	if (w != (int64_t)FSC_GRACE_REC_LEN)
		err = w < 0 ? (int)w : -EIO;
	if (!err)
		err = a->ca_ll_fsync(cm, fh, 0);
	a->ca_ll_close(cm, fh);
	a->ca_ll_put(cm, in);
out_sub:
	a->ca_ll_put(cm, sub);
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
	Inode *sub = NULL, *in = NULL;
	Fh *fh = NULL;
	int64_t r;
	int err;

	*end = 0;
	err = sub_get(m->cm_cmount, m->cm_root, dir, name, false, &sub);
	if (err) /* gone meanwhile, or a stray file: no record */
		return err == -ENOENT || err == -ENOTDIR ? 0 : err;
	err = a->ca_ll_lookup(m->cm_cmount, sub, REC_FILE, &in, &stx, 0, 0, m->cm_root);
	a->ca_ll_put(m->cm_cmount, sub);
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
	int64_t end = 0;
	int err;

	if (!m->cm_grace)
		return 0;
	err = a->ca_ll_walk(m->cm_cmount, m->cm_grace, &dir, &stx, 0, 0, m->cm_root);
	if (!err) {
		err = scan(m, dir, &end);
		a->ca_ll_put(m->cm_cmount, dir);
	}
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
