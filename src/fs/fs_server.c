// SPDX-License-Identifier: MIT
/*
 * fs_server.c - the exports being served: a table (a parsed exports file
 * and its opened directories) that calls read and a reload replaces.
 *
 * Concurrency: the pointer to the table in force is read under the read
 * side of a rwlock only long enough to take a reference (an atomic
 * increment), so calls never wait for each other; a reload opens the new
 * table's directories outside the lock, then swaps the pointer under the
 * write side and drops the server's reference to the old table.  A call
 * keeps the table it started with to its end; the last reference frees
 * it, and an export no table holds any more is closed then (its open-file
 * cache with it).  Exports with the same path and id in both tables are
 * the same object (with the same backend), so their cache and WRITE
 * verifier survive a reload.
 *
 * The sweeper: one thread per server closes the open-file caches' idle
 * entries (rpcrdma_nfs3_export_expire() on every export of the table in
 * force, once per nc_fcache_idle_ms), sleeping on a condition variable in
 * between so that destroying the server wakes and joins it at once.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs.h"
#include "fs_backend.h"

struct rpcrdma_nfs3_server {
	struct rpcrdma_nfs3_config sv_cfg;   /* nc_export unused */
	pthread_rwlock_t sv_lock;            /* guards sv_snap (the pointer) */
	struct fs_snap *sv_snap;           /* referenced */
	pthread_mutex_t sv_reload;           /* one reload at a time */
	fs_change_hook_fn sv_change_fn;    /* the NFSv4.1 server's, or NULL */
	void *sv_change_arg;
	struct fs_shares *sv_shares;         /* share reservations (fs_share.c) */
	/* the sweeper (sv_sweeping: it runs) */
	bool sv_sweeping;
	bool sv_sweep_stop;                  /* under sv_sweep_lock */
	uint32_t sv_sweep_ms;
	pthread_t sv_sweeper;
	pthread_mutex_t sv_sweep_lock;
	pthread_cond_t sv_sweep_cond;        /* CLOCK_MONOTONIC */
};

struct fs_shares *fs_server_shares(struct rpcrdma_nfs3_server *srv)
{
	return srv->sv_shares;
}

void fs_server_set_change_hook(struct rpcrdma_nfs3_server *srv,
			       fs_change_hook_fn fn, void *arg)
{
	srv->sv_change_fn = fn;
	srv->sv_change_arg = arg;
}

int fs_change_check(struct fs_call *c, const uint8_t *fh, uint32_t fhlen)
{
	if (!c->c_srv || !c->c_srv->sv_change_fn)
		return 0;
	return c->c_srv->sv_change_fn(c->c_srv->sv_change_arg, fh, fhlen);
}

static void export_put(struct rpcrdma_nfs3_export *exp)
{
	if (exp && atomic_fetch_sub(&exp->ex_refs, 1) == 1)
		rpcrdma_nfs3_export_close(exp);
}

void fs_snap_put(struct fs_snap *sn)
{
	if (!sn || atomic_fetch_sub(&sn->sn_refs, 1) != 1)
		return;
	for (unsigned i = 0; sn->sn_exp && i < sn->sn_xt->xt_n; i++)
		export_put(sn->sn_exp[i]);
	free(sn->sn_exp);
	rpcrdma_nfs3_exports_free(sn->sn_xt);
	free(sn);
}

struct fs_snap *fs_snap_get(struct rpcrdma_nfs3_server *srv)
{
	struct fs_snap *sn;

	pthread_rwlock_rdlock(&srv->sv_lock);
	sn = srv->sv_snap;
	atomic_fetch_add(&sn->sn_refs, 1);
	pthread_rwlock_unlock(&srv->sv_lock);
	return sn;
}

/* exports_dup - a deep copy of @xt. */
static struct rpcrdma_nfs3_exports *exports_dup(const struct rpcrdma_nfs3_exports *xt)
{
	struct rpcrdma_nfs3_exports *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->xt_specs = calloc(xt->xt_n, sizeof(*d->xt_specs));
	if (!d->xt_specs)
		goto fail;
	for (unsigned i = 0; i < xt->xt_n; i++) {
		const struct fs_xspec *s = &xt->xt_specs[i];
		struct fs_xspec *t = &d->xt_specs[i];

		*t = *s;
		t->xs_path = NULL;
		t->xs_clients = NULL;
		t->xs_nclients = 0;
		d->xt_n = i + 1;
		t->xs_path = strdup(s->xs_path);
		t->xs_clients = calloc(s->xs_nclients ? s->xs_nclients : 1,
				       sizeof(*t->xs_clients));
		if (!t->xs_path || !t->xs_clients)
			goto fail;
		for (unsigned j = 0; j < s->xs_nclients; j++) {
			t->xs_clients[j] = s->xs_clients[j];
			t->xs_clients[j].xc_name = strdup(s->xs_clients[j].xc_name);
			if (!t->xs_clients[j].xc_name)
				goto fail;
			t->xs_nclients = j + 1;
		}
	}
	if (fs_exports_names_init(d))
		goto fail;
	return d;
fail:
	rpcrdma_nfs3_exports_free(d);
	return NULL;
}

/* open_export - export @xs as configured in @cfg, with its id and fsid. */
static int open_export(const struct rpcrdma_nfs3_config *cfg,
		       const struct fs_xspec *xs,
		       struct rpcrdma_nfs3_export **out)
{
	struct rpcrdma_nfs3_config c = *cfg;
	int err;

	c.nc_export = xs->xs_path;
	c.nc_no_root_squash = false;
	/* the backend and options the exports parser found (nc_backend is
	 * the library user's way to name them) */
	err = fs_export_open(&c, xs->xs_be ? xs->xs_be : &fs_posix_backend,
			     xs->xs_be_opts, out);
	if (err)
		return err;
	(*out)->ex_id = xs->xs_id;
	/* fsid=N (not 0: --export's, which keeps the device's as before) */
	if (xs->xs_have_fsid && xs->xs_id)
		(*out)->ex_fsid = xs->xs_id;
	return 0;
}

/*
 * snap_build - a table for @xt: exports of @old with the same path and id
 * are shared, the others opened.  Return 0 or an export's open error.
 */
static int snap_build(const struct rpcrdma_nfs3_config *cfg,
		      const struct rpcrdma_nfs3_exports *xt,
		      const struct fs_snap *old, struct fs_snap **out,
		      char *err, size_t errlen)
{
	struct fs_snap *sn;
	int ret = -ENOMEM;

	if (!xt || xt->xt_n == 0) {
		if (err && errlen)
			snprintf(err, errlen, "no exports");
		return -EINVAL;
	}
	sn = calloc(1, sizeof(*sn));
	if (!sn)
		return -ENOMEM;
	atomic_init(&sn->sn_refs, 1);
	sn->sn_xt = exports_dup(xt);
	if (!sn->sn_xt)
		goto fail;
	sn->sn_exp = calloc(xt->xt_n, sizeof(*sn->sn_exp));
	if (!sn->sn_exp)
		goto fail;
	for (unsigned i = 0; i < xt->xt_n; i++) {
		const struct fs_xspec *xs = &xt->xt_specs[i];

		for (unsigned j = 0; old && j < old->sn_xt->xt_n; j++) {
			struct rpcrdma_nfs3_export *e = old->sn_exp[j];

			if (e->ex_id == xs->xs_id && !strcmp(e->ex_path, xs->xs_path) &&
			    e->ex_be == (xs->xs_be ? xs->xs_be : &fs_posix_backend) &&
			    !strcmp(e->ex_be_opts, xs->xs_be_opts)) {
				atomic_fetch_add(&e->ex_refs, 1);
				sn->sn_exp[i] = e;
				break;
			}
		}
		if (sn->sn_exp[i])
			continue;
		ret = open_export(cfg, xs, &sn->sn_exp[i]);
		if (ret) {
			if (err && errlen && ret == -EINVAL && xs->xs_be_opts[0])
				snprintf(err, errlen, "cannot export %s: backend %s does not take "
					 "the options %s", xs->xs_path, xs->xs_be->be_name,
					 xs->xs_be_opts);
			else if (err && errlen)
				snprintf(err, errlen, "cannot export %s: %s", xs->xs_path,
					 strerror(-ret));
			goto fail;
		}
	}
	*out = sn;
	return 0;
fail:
	fs_snap_put(sn);
	return ret;
}

/* One sweep per period until the server is destroyed. */
static void *sweeper_main(void *arg)
{
	struct rpcrdma_nfs3_server *srv = arg;
	struct timespec at;

	clock_gettime(CLOCK_MONOTONIC, &at);
	pthread_mutex_lock(&srv->sv_sweep_lock);
	while (!srv->sv_sweep_stop) {
		at.tv_sec += srv->sv_sweep_ms / 1000;
		at.tv_nsec += (long)(srv->sv_sweep_ms % 1000) * 1000000;
		if (at.tv_nsec >= 1000000000) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000;
		}
		while (!srv->sv_sweep_stop &&
		       pthread_cond_timedwait(&srv->sv_sweep_cond, &srv->sv_sweep_lock,
					      &at) != ETIMEDOUT)
			;
		if (srv->sv_sweep_stop)
			break;
		pthread_mutex_unlock(&srv->sv_sweep_lock);
		{
			struct fs_snap *sn = fs_snap_get(srv);

			for (unsigned i = 0; i < sn->sn_xt->xt_n; i++)
				rpcrdma_nfs3_export_expire(sn->sn_exp[i]);
			fs_snap_put(sn);
		}
		pthread_mutex_lock(&srv->sv_sweep_lock);
		/* a sweep longer than a period (a last close(2) freeing much)
		 * must not make the next ones run back to back */
		{
			struct timespec now;

			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > at.tv_sec ||
			    (now.tv_sec == at.tv_sec && now.tv_nsec > at.tv_nsec))
				at = now;
		}
	}
	pthread_mutex_unlock(&srv->sv_sweep_lock);
	return NULL;
}

/*
 * sweeper_start - start @srv's sweeper when its caches are on and idle
 * entries are to be closed; the thread takes no signal (it is started
 * with all of them blocked, whatever the caller's mask).
 */
static int sweeper_start(struct rpcrdma_nfs3_server *srv)
{
	const struct rpcrdma_nfs3_config *cfg = &srv->sv_cfg;
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	if (cfg->nc_fcache_entries == RPCRDMA_NFS3_FCACHE_OFF ||
	    cfg->nc_fcache_idle_ms == RPCRDMA_NFS3_FCACHE_IDLE_NEVER)
		return 0;
	srv->sv_sweep_ms = cfg->nc_fcache_idle_ms ? cfg->nc_fcache_idle_ms :
			   RPCRDMA_NFS3_FCACHE_IDLE_DEFAULT_MS;
	pthread_mutex_init(&srv->sv_sweep_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&srv->sv_sweep_cond, &ca);
	pthread_condattr_destroy(&ca);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&srv->sv_sweeper, NULL, sweeper_main, srv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&srv->sv_sweep_cond);
		pthread_mutex_destroy(&srv->sv_sweep_lock);
		return -err;
	}
	srv->sv_sweeping = true;
	return 0;
}

static void sweeper_stop(struct rpcrdma_nfs3_server *srv)
{
	if (!srv->sv_sweeping)
		return;
	pthread_mutex_lock(&srv->sv_sweep_lock);
	srv->sv_sweep_stop = true;
	pthread_cond_signal(&srv->sv_sweep_cond);
	pthread_mutex_unlock(&srv->sv_sweep_lock);
	pthread_join(srv->sv_sweeper, NULL);
	pthread_cond_destroy(&srv->sv_sweep_cond);
	pthread_mutex_destroy(&srv->sv_sweep_lock);
	srv->sv_sweeping = false;
}

int rpcrdma_nfs3_server_create(const struct rpcrdma_nfs3_config *cfg,
			       const struct rpcrdma_nfs3_exports *xt,
			       struct rpcrdma_nfs3_server **out,
			       char *err, size_t errlen)
{
	struct rpcrdma_nfs3_server *srv;
	int ret;

	if (!cfg || !out)
		return -EINVAL;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->sv_cfg = *cfg;
	srv->sv_cfg.nc_export = NULL;
	srv->sv_shares = fs_shares_create();
	if (!srv->sv_shares) {
		free(srv);
		return -ENOMEM;
	}
	ret = snap_build(&srv->sv_cfg, xt, NULL, &srv->sv_snap, err, errlen);
	if (ret) {
		fs_shares_destroy(srv->sv_shares);
		free(srv);
		return ret;
	}
	{
		pthread_rwlockattr_t a;

		/* a reload must not wait behind a stream of calls */
		pthread_rwlockattr_init(&a);
		pthread_rwlockattr_setkind_np(&a,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&srv->sv_lock, &a);
		pthread_rwlockattr_destroy(&a);
	}
	pthread_mutex_init(&srv->sv_reload, NULL);
	ret = sweeper_start(srv);
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen, "the open-file cache's sweeper: %s",
				 strerror(-ret));
		rpcrdma_nfs3_server_destroy(srv);
		return ret;
	}
	*out = srv;
	return 0;
}

int rpcrdma_nfs3_server_reload(struct rpcrdma_nfs3_server *srv,
			       const struct rpcrdma_nfs3_exports *xt,
			       char *err, size_t errlen)
{
	struct fs_snap *old, *sn;
	int ret;

	pthread_mutex_lock(&srv->sv_reload);
	old = fs_snap_get(srv);
	ret = snap_build(&srv->sv_cfg, xt, old, &sn, err, errlen);
	fs_snap_put(old);
	if (ret)
		goto out;
	pthread_rwlock_wrlock(&srv->sv_lock);
	old = srv->sv_snap;
	srv->sv_snap = sn;
	pthread_rwlock_unlock(&srv->sv_lock);
	fs_snap_put(old);
out:
	pthread_mutex_unlock(&srv->sv_reload);
	return ret;
}

void rpcrdma_nfs3_server_destroy(struct rpcrdma_nfs3_server *srv)
{
	if (!srv)
		return;
	sweeper_stop(srv);
	/* reservations left (a protocol server that did not drop them)
	 * hold their exports: given back before the table goes */
	fs_shares_destroy(srv->sv_shares);
	fs_snap_put(srv->sv_snap);
	pthread_rwlock_destroy(&srv->sv_lock);
	pthread_mutex_destroy(&srv->sv_reload);
	free(srv);
}

bool rpcrdma_nfs3_server_allows(const struct sockaddr *peer, void *arg)
{
	struct fs_snap *sn = fs_snap_get(arg);
	bool yes = false, unknown = false;

	for (unsigned i = 0; !yes && i < sn->sn_xt->xt_n; i++) {
		enum fs_xmatch m = fs_exports_match_peer(sn->sn_xt, i, peer, true, NULL);

		yes = m == FS_XM_YES;
		unknown |= m == FS_XM_UNKNOWN;
	}
	fs_snap_put(sn);
	/* On a transport thread (a connection request) the peer's name is
	 * never waited for: while it is looked up the connection is let in,
	 * and every call on it is checked against its export. */
	return yes || (unknown && fs_names_on_transport());
}

int rpcrdma_nfs3_server_fcache_stats(struct rpcrdma_nfs3_server *srv,
				     struct rpcrdma_nfs3_fcache_stats *out)
{
	struct fs_snap *sn;

	if (!srv || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	sn = fs_snap_get(srv);
	for (unsigned i = 0; i < sn->sn_xt->xt_n; i++) {
		struct rpcrdma_nfs3_fcache_stats s;

		if (rpcrdma_nfs3_fcache_stats(sn->sn_exp[i], &s))
			continue;
		out->fcs_capacity += s.fcs_capacity;
		out->fcs_entries += s.fcs_entries;
		out->fcs_hits += s.fcs_hits;
		out->fcs_misses += s.fcs_misses;
		out->fcs_evictions += s.fcs_evictions;
		out->fcs_forgotten += s.fcs_forgotten;
		out->fcs_dir_capacity += s.fcs_dir_capacity;
		out->fcs_dir_entries += s.fcs_dir_entries;
		out->fcs_dir_hits += s.fcs_dir_hits;
		out->fcs_dir_misses += s.fcs_dir_misses;
		out->fcs_dir_commits += s.fcs_dir_commits;
		out->fcs_expired += s.fcs_expired;
		out->fcs_dir_expired += s.fcs_dir_expired;
	}
	fs_snap_put(sn);
	return 0;
}

