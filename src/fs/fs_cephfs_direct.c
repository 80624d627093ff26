// SPDX-License-Identifier: MIT
/*
 * fs_cephfs_direct.c - the cephfs backend's stable WRITEs straight to the
 * OSDs: a second Fh per file opened O_DIRECT, through which libcephfs
 * (Client::_write) skips its object cache and sends the data to the OSDs
 * itself, returning once they have it (their reply comes after the write is
 * on their disks), so a DATA_SYNC or FILE_SYNC WRITE is one OSD round trip
 * rather than a copy into the object cache and a flush of it
 * (ceph_ll_fsync).
 *
 * The catch: libcephfs' O_DIRECT write flushes dirty cached data of the
 * range first but does not drop clean cached data, so a read through the
 * cached Fh afterwards could answer what the range held before.  Hence the
 * direct path is only taken for a file whose data has never been in this
 * gateway's object cache: one this process created (be_create, through an
 * export without backend=cephfs:direct=off), for as long as no READ and no
 * UNSTABLE WRITE went through the cache.  The mount keeps
 * those files' inode numbers (cm_direct, a small table: a file that finds
 * no room simply stays on the cached path); the first cached use of one
 * takes it out of the table, after waiting for its direct writes in
 * flight, so a cached read never races a direct write of the same data.
 * Objects for the same inode (a WRITE's and a LOOKUP's) share the mount's
 * entry; an object keeps only a hint that its inode is known cached
 * (co_cached, which never goes back).
 */
#include <errno.h>
#include <fcntl.h>

#include "fs_cephfs.h"

int fsc_direct_init(struct fsc_mount *m)
{
	int err = pthread_mutex_init(&m->cm_direct_lock, NULL);

	if (err)
		return -err;
	err = pthread_cond_init(&m->cm_direct_cond, NULL);
	if (err) {
		pthread_mutex_destroy(&m->cm_direct_lock);
		return -err;
	}
	m->cm_direct_ready = true;
	return 0;
}

void fsc_direct_fini(struct fsc_mount *m)
{
	if (!m->cm_direct_ready)
		return;
	pthread_cond_destroy(&m->cm_direct_cond);
	pthread_mutex_destroy(&m->cm_direct_lock);
	m->cm_direct_ready = false;
}

/* find - @ino's entry in @m's table, or NULL; cm_direct_lock held. */
static struct fsc_direct *find(struct fsc_mount *m, uint64_t ino)
{
	for (unsigned i = 0; i < FSC_DIRECT_MAX; i++)
		if (m->cm_direct[i].cd_used && m->cm_direct[i].cd_ino == ino)
			return &m->cm_direct[i];
	return NULL;
}

void fsc_direct_created(struct fsc_mount *m, uint64_t ino)
{
	struct fsc_direct *d;

	pthread_mutex_lock(&m->cm_direct_lock);
	d = find(m, ino);
	/* a new inode: the oldest idle entry gives way (its file only
	 * moves to the cached path); none idle: this one stays cached */
	for (unsigned k = 0; !d && k < FSC_DIRECT_MAX; k++) {
		struct fsc_direct *e = &m->cm_direct[(m->cm_direct_next + k) % FSC_DIRECT_MAX];

		if (e->cd_inflight || e->cd_closing)
			continue;
		d = e;
		m->cm_direct_next = (m->cm_direct_next + k + 1) % FSC_DIRECT_MAX;
	}
	if (d && !d->cd_inflight && !d->cd_closing) {
		d->cd_used = true;
		d->cd_ino = ino;
	}
	pthread_mutex_unlock(&m->cm_direct_lock);
}

void fsc_direct_forget(struct fsc_obj *o)
{
	struct fsc_mount *m = o->co_mnt;
	struct fsc_direct *d;

	if (atomic_load(&o->co_cached))
		return;
	pthread_mutex_lock(&m->cm_direct_lock);
	d = find(m, o->co_ino);
	if (d) {
		/* no new direct write starts; those in flight finish
		 * before anything of the file enters the cache */
		d->cd_closing = true;
		while (d->cd_inflight)
			pthread_cond_wait(&m->cm_direct_cond, &m->cm_direct_lock);
		d->cd_closing = false;
		d->cd_used = false;
		pthread_cond_broadcast(&m->cm_direct_cond);
	}
	atomic_store(&o->co_cached, true);
	pthread_mutex_unlock(&m->cm_direct_lock);
}

/* direct_fh - @o's O_DIRECT Fh, opened on first need (NULL: cannot be). */
static Fh *direct_fh(struct fsc_obj *o)
{
	Fh *fh = atomic_load(&o->co_fh_direct);
	int r;

	if (fh)
		return fh;
	pthread_mutex_lock(&o->co_lock);
	fh = atomic_load(&o->co_fh_direct);
	if (!fh) {
		r = fsc_api->ca_ll_open(o->co_mnt->cm_cmount, o->co_in,
					O_WRONLY | O_DIRECT, &fh,
					o->co_mnt->cm_root);
		if (r)
			fh = NULL;
		else
			atomic_store(&o->co_fh_direct, fh);
	}
	pthread_mutex_unlock(&o->co_lock);
	return fh;
}

Fh *fsc_direct_begin(struct fsc_obj *o)
{
	struct fsc_mount *m = o->co_mnt;
	struct fsc_direct *d;
	Fh *fh;

	if (atomic_load(&o->co_cached))
		return NULL;
	pthread_mutex_lock(&m->cm_direct_lock);
	d = find(m, o->co_ino);
	if (!d) {
		atomic_store(&o->co_cached, true);
		pthread_mutex_unlock(&m->cm_direct_lock);
		return NULL;
	}
	if (d->cd_closing) {
		/* a cached use is taking it over: the cached path, after
		 * the direct writes in flight (their data reaches the OSDs
		 * before this write's cached copy is flushed) */
		while (find(m, o->co_ino))
			pthread_cond_wait(&m->cm_direct_cond, &m->cm_direct_lock);
		atomic_store(&o->co_cached, true);
		pthread_mutex_unlock(&m->cm_direct_lock);
		return NULL;
	}
	d->cd_inflight++;
	pthread_mutex_unlock(&m->cm_direct_lock);
	fh = direct_fh(o);
	if (!fh)
		fsc_direct_end(o);
	return fh;
}

void fsc_direct_end(struct fsc_obj *o)
{
	struct fsc_mount *m = o->co_mnt;
	struct fsc_direct *d;

	pthread_mutex_lock(&m->cm_direct_lock);
	d = find(m, o->co_ino);
	if (d && d->cd_inflight && !--d->cd_inflight)
		pthread_cond_broadcast(&m->cm_direct_cond);
	pthread_mutex_unlock(&m->cm_direct_lock);
}
