// SPDX-License-Identifier: MIT
/*
 * fs_cephfs_lock.c - the cephfs backend's byte-range locks and leases.
 *
 * Locks are CephFS' own POSIX locks (ceph_ll_setlk / ceph_ll_getlk),
 * kept by the MDS: a lock taken through this gateway conflicts with one
 * taken through another gateway and with every other CephFS client.
 * Each description (be_lock_open) has its own Fh and a lock owner unique
 * in the process (the MDS tells clients apart itself), so its locks are
 * its own and closing its last reference releases them.
 *
 * Leases are read delegations (ceph_ll_delegation(CEPH_DELEGATION_RD)):
 * libcephfs calls back when another client wants the file for writing;
 * the backend passes that on to ls_fn.  A delegation not given back
 * within the mount's timeout gets the whole mount evicted, so a recall
 * also starts a timer that gives it back FSC_DELEG_RETURN s later if the
 * holder has not closed the lease by then (the change then goes on).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs_cephfs.h"

static atomic_uint_fast64_t g_next_owner = 1;

int fsc_be_lock_open(struct fs_call *c, struct fs_fentry *fe,
		     struct fs_lockd *out, int *accmode)
{
	struct fsc_obj *o = fsc_fe(fe);
	struct ceph_mount_info *cm = o->co_mnt->cm_cmount;
	struct fsc_lockd *lo;
	int err, acc = O_RDWR;

	(void)c;
	lo = calloc(1, sizeof(*lo));
	if (!lo)
		return -ENOMEM;
	err = fe->fe_type == S_IFREG ?
		fsc_api->ca_ll_open(cm, o->co_in, O_RDWR, &lo->lo_fh, o->co_mnt->cm_root) :
		-EISDIR;
	if (err) {
		acc = O_RDONLY;
		err = fsc_api->ca_ll_open(cm, o->co_in, O_RDONLY, &lo->lo_fh,
					  o->co_mnt->cm_root);
	}
	if (err) {
		free(lo);
		return FSC_ERR(err, -EACCES, -EMFILE);
	}
	atomic_init(&lo->lo_refs, 1);
	fsc_mount_get(o->co_mnt);
	lo->lo_mnt = o->co_mnt;
	lo->lo_acc = acc;
	lo->lo_owner = atomic_fetch_add(&g_next_owner, 1);
	memset(out, 0, sizeof(*out));
	out->ld_fd = -1;
	out->ld_owner = lo;
	*accmode = acc;
	return 0;
}

/* describe - the first lock of another owner that conflicts with @fl
 * into @cf.  Return: 0 (none: cf_type F_UNLCK), or a mapped error. */
static int describe(struct fsc_lockd *lo, struct flock fl,
		    struct fs_lock_conflict *cf)
{
	int r = fsc_api->ca_ll_getlk(lo->lo_mnt->cm_cmount, lo->lo_fh, &fl,
				     lo->lo_owner);

	if (r)
		return FSC_ERR(r, -ENOLCK, -EINVAL, -EOVERFLOW);
	cf->cf_type = fl.l_type;
	cf->cf_start = fl.l_type == F_UNLCK ? 0 : (uint64_t)fl.l_start;
	cf->cf_len = fl.l_type == F_UNLCK ? 0 : (uint64_t)fl.l_len;
	/* a CephFS client's process, or 0 (another gateway's owner) */
	cf->cf_pid = fl.l_pid;
	return 0;
}

int fsc_be_lock(struct fs_lockd *ld, int type, uint64_t start, uint64_t len,
		bool test, struct fs_lock_conflict *cf)
{
	struct fsc_lockd *lo = ld->ld_owner;
	struct fs_lock_conflict tmp;
	struct flock fl;
	int r;

	if (start > INT64_MAX || len > INT64_MAX)
		return -EINVAL;
	if (len && start + len - 1 > INT64_MAX)
		return -EOVERFLOW;
	if (type != F_RDLCK && type != F_WRLCK && type != F_UNLCK)
		return -EINVAL;
	if (!test && type == F_WRLCK && lo->lo_acc == O_RDONLY)
		return -EBADF;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = (short)type;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)start;
	fl.l_len = (off_t)len;
	if (!cf)
		cf = &tmp;
	if (test) {
		r = describe(lo, fl, cf);
		if (r)
			return r;
		return cf->cf_type == F_UNLCK ? 0 : -EAGAIN;
	}
	r = fsc_api->ca_ll_setlk(lo->lo_mnt->cm_cmount, lo->lo_fh, &fl,
				 lo->lo_owner, 0);
	if (r == 0) {
		if (type != F_UNLCK)
			atomic_store(&lo->lo_locked, true);
		return 0;
	}
	if (r != -EAGAIN && r != -EWOULDBLOCK && r != -EDEADLK)
		return FSC_ERR(r, -ENOLCK, -EINVAL, -EOVERFLOW, -EBADF);
	/* a conflict: which one (gone meanwhile: F_UNLCK, try again) */
	if (cf != &tmp && describe(lo, fl, cf))
		cf->cf_type = F_UNLCK;
	return -EAGAIN;
}

int fsc_be_lock_dup(const struct fs_lockd *ld, struct fs_lockd *out)
{
	struct fsc_lockd *lo = ld->ld_owner;

	atomic_fetch_add(&lo->lo_refs, 1);
	*out = *ld;
	return 0;
}

void fsc_be_lock_close(struct fs_lockd *ld)
{
	struct fsc_lockd *lo = ld->ld_owner;
	struct ceph_mount_info *cm;

	if (!lo)
		return;
	ld->ld_owner = NULL;
	if (atomic_fetch_sub(&lo->lo_refs, 1) != 1)
		return;
	cm = lo->lo_mnt->cm_cmount;
	if (atomic_load(&lo->lo_locked)) {
		/* closing the Fh releases them too; said outright, so the MDS
		 * hears it even while the Fh lingers */
		struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET };

		(void)fsc_api->ca_ll_setlk(cm, lo->lo_fh, &fl, lo->lo_owner, 0);
	}
	fsc_api->ca_ll_close(cm, lo->lo_fh);
	fsc_mount_put(lo->lo_mnt);
	free(lo);
}

/* ---- leases ---- */

/* lease_put - drop a reference (le_lock held: released here); the last
 * closes the Fh and frees @le. */
static void lease_put_unlock(struct fsc_lease *le)
{
	bool last = --le->le_refs == 0;

	pthread_mutex_unlock(&le->le_lock);
	if (!last)
		return;
	fsc_api->ca_ll_close(le->le_mnt->cm_cmount, le->le_fh);
	fsc_mount_put(le->le_mnt);
	pthread_cond_destroy(&le->le_cond);
	pthread_mutex_destroy(&le->le_lock);
	free(le);
}

/* give_back_unlock - give the delegation back unless that was done
 * (le_lock held: released here, before libcephfs is called, whose
 * callback takes le_lock under libcephfs' own lock). */
static void give_back_unlock(struct fsc_lease *le)
{
	bool ret = !le->le_returned;

	le->le_returned = true;
	le->le_refs++;
	pthread_mutex_unlock(&le->le_lock);
	if (ret)
		(void)fsc_api->ca_ll_delegation(le->le_mnt->cm_cmount, le->le_fh,
						CEPH_DELEGATION_NONE, NULL, NULL);
	pthread_mutex_lock(&le->le_lock);
	lease_put_unlock(le);
}

/* recall_timer - FSC_DELEG_RETURN s after a recall, give the delegation
 * back if the lease is still open. */
static void *recall_timer(void *arg)
{
	struct fsc_lease *le = arg;
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += FSC_DELEG_RETURN;
	pthread_mutex_lock(&le->le_lock);
	while (!le->le_closed &&
	       pthread_cond_timedwait(&le->le_cond, &le->le_lock, &until) == 0)
		;
	if (!le->le_closed) {
		give_back_unlock(le);
		pthread_mutex_lock(&le->le_lock);
	}
	lease_put_unlock(le);
	return NULL;
}

/* recall - libcephfs wants the delegation back (its own thread). */
static void recall(Fh *fh, void *priv)
{
	struct fsc_lease *le = priv;
	pthread_attr_t attr;
	pthread_t t;

	(void)fh;
	pthread_mutex_lock(&le->le_lock);
	if (le->le_closed || le->le_returned) {
		pthread_mutex_unlock(&le->le_lock);
		return;
	}
	le->le_ls->ls_fn(le->le_ls->ls_arg, le->le_ls);
	if (!le->le_timer && !pthread_attr_init(&attr)) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		le->le_refs++;
		if (pthread_create(&t, &attr, recall_timer, le) == 0)
			le->le_timer = true;
		else
			le->le_refs--;
		pthread_attr_destroy(&attr);
	}
	pthread_mutex_unlock(&le->le_lock);
}

int fsc_be_lease_open(struct fs_call *c, struct fs_fentry *fe,
		      struct fs_lease *ls)
{
	struct fsc_obj *o = fsc_fe(fe);
	struct ceph_mount_info *cm = o->co_mnt->cm_cmount;
	struct fsc_lease *le;
	int err;

	(void)c;
	if (fe->fe_type != S_IFREG)
		return -EINVAL;
	if (!o->co_mnt->cm_deleg)
		return -EOPNOTSUPP;
	le = calloc(1, sizeof(*le));
	if (!le)
		return -ENOMEM;
	if (pthread_mutex_init(&le->le_lock, NULL)) {
		free(le);
		return -ENOMEM;
	}
	if (pthread_cond_init(&le->le_cond, NULL)) {
		pthread_mutex_destroy(&le->le_lock);
		free(le);
		return -ENOMEM;
	}
	err = fsc_api->ca_ll_open(cm, o->co_in, O_RDONLY, &le->le_fh,
				  o->co_mnt->cm_root);
	if (err) {
		err = FSC_ERR(err, -EACCES, -EMFILE);
		goto out_free;
	}
	le->le_refs = 1;
	le->le_ls = ls;
	fsc_mount_get(o->co_mnt);
	le->le_mnt = o->co_mnt;
	err = fsc_api->ca_ll_delegation(cm, le->le_fh, CEPH_DELEGATION_RD,
					recall, le);
	if (err) {
		fsc_api->ca_ll_close(cm, le->le_fh);
		/* -EAGAIN: open for writing somewhere; -ETIME: not enabled */
		err = err == -ETIME || err == -EOPNOTSUPP ? -EOPNOTSUPP :
		      FSC_ERR(err, -EACCES, -EINVAL);
		fsc_mount_put(o->co_mnt);
		goto out_free;
	}
	ls->ls_be = &fs_cephfs_backend;
	ls->ls_fd = -1;
	ls->ls_node = NULL;
	ls->ls_priv = le;
	return 0;

out_free:
	pthread_cond_destroy(&le->le_cond);
	pthread_mutex_destroy(&le->le_lock);
	free(le);
	return err;
}

void fsc_be_lease_close(struct fs_lease *ls)
{
	struct fsc_lease *le = ls->ls_priv;

	if (!le)
		return;
	pthread_mutex_lock(&le->le_lock);
	le->le_closed = true;
	pthread_cond_broadcast(&le->le_cond);
	/* from here no ls_fn: recall() checks le_closed under le_lock */
	give_back_unlock(le);
	pthread_mutex_lock(&le->le_lock);
	lease_put_unlock(le);
	ls->ls_priv = NULL;
	ls->ls_be = NULL;
}
