// SPDX-License-Identifier: MIT
/*
 * fs_memory_lease.c - the memory backend's leases (be_lease_open,
 * be_lease_close; fs_backend.h).  Exports of one path serve one tree
 * (fs_memory.c), as gateways of one storage would: a lease taken through
 * one export is broken by a change made through another export of the
 * tree (opened for writing, written, its size set, removed, renamed, or
 * replaced by a rename); changes through the lease's own export are the
 * layer's to tell (its change hook) and break nothing here.  The change
 * goes on at once: the memory backend does not hold it off.
 *
 * The leases of every tree are in one list under its own mutex (not the
 * tree's mx_lock), matched by tree and node id (ids are never reused in a
 * tree); with no lease out, a change costs one atomic load.  ls_fn is
 * called on the changing call's thread (another export's call, never one
 * of the holder's own) with no lock of the backend held: neither mx_lock
 * nor the list's.  A lease being called is busy; be_lease_close() waits
 * until it is not, so ls_fn is never called after it returned (but from
 * inside ls_fn on the same thread, which the contract forbids and which
 * would wait for itself).  The lease holds a reference to its node and
 * to its tree (fsm_tree_hold()), as a lock description does.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "fs_memory.h"

struct fsm_lease_rec {
	struct fsm_lease_rec *lr_next;
	struct fs_lease *lr_ls;
	const struct fsm_export *lr_mx;
	const struct rpcrdma_nfs3_export *lr_exp; /* taken through */
	uint64_t lr_id;
	unsigned lr_busy;        /* ls_fn calls under way */
	bool lr_dead;            /* being closed: no more calls */
};

static pthread_mutex_t g_lease_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_lease_cond = PTHREAD_COND_INITIALIZER;
static struct fsm_lease_rec *g_leases;
static atomic_uint g_nleases;
static _Thread_local const struct fsm_lease_rec *t_calling;

void fsm_lease_break(const struct rpcrdma_nfs3_export *exp,
		     const struct fsm_export *mx, uint64_t id)
{
	struct fsm_lease_rec *r;

	if (!id || atomic_load(&g_nleases) == 0)
		return;
	pthread_mutex_lock(&g_lease_lock);
	for (r = g_leases; r; r = r->lr_next) {
		if (r->lr_dead || r->lr_mx != mx || r->lr_id != id || r->lr_exp == exp)
			continue;
		r->lr_busy++;
		pthread_mutex_unlock(&g_lease_lock);
		t_calling = r;
		r->lr_ls->ls_fn(r->lr_ls->ls_arg, r->lr_ls);
		t_calling = NULL;
		pthread_mutex_lock(&g_lease_lock);
		/* still listed: a close waits for lr_busy 0 before unlinking */
		r->lr_busy--;
		pthread_cond_broadcast(&g_lease_cond);
	}
	pthread_mutex_unlock(&g_lease_lock);
}

int fsm_be_lease_open(struct fs_call *c, struct fs_fentry *fe,
		      struct fs_lease *ls)
{
	struct fsm_node *n = fsm_fe(fe);
	struct fsm_export *mx = n->mn_mx;
	struct fsm_lease_rec *r;

	if (!S_ISREG(n->mn_mode))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->lr_ls = ls;
	r->lr_mx = mx;
	r->lr_exp = c->c_exp;
	r->lr_id = n->mn_id;
	fsm_tree_hold(mx); /* the lease may outlive the export */
	pthread_mutex_lock(&mx->mx_lock);
	fsm_node_get_locked(n);
	pthread_mutex_unlock(&mx->mx_lock);
	ls->ls_be = &fs_memory_backend;
	ls->ls_fd = -1;
	ls->ls_node = n;
	ls->ls_priv = r;
	pthread_mutex_lock(&g_lease_lock);
	r->lr_next = g_leases;
	g_leases = r;
	atomic_fetch_add(&g_nleases, 1);
	pthread_mutex_unlock(&g_lease_lock);
	return 0;
}

void fsm_be_lease_close(struct fs_lease *ls)
{
	struct fsm_lease_rec *r = ls->ls_priv, **pp;
	struct fsm_node *n = ls->ls_node;
	struct fsm_export *mx;

	if (!r)
		return;
	pthread_mutex_lock(&g_lease_lock);
	r->lr_dead = true;
	while (r->lr_busy > (t_calling == r ? 1u : 0u))
		pthread_cond_wait(&g_lease_cond, &g_lease_lock);
	if (r->lr_busy) {
		/* closed from inside its own ls_fn: the caller unlinks nothing
		 * yet; leave the record listed (dead) and leak it rather than
		 * free it under the breaker's feet */
		pthread_mutex_unlock(&g_lease_lock);
		goto drop_node;
	}
	for (pp = &g_leases; *pp; pp = &(*pp)->lr_next) {
		if (*pp == r) {
			*pp = r->lr_next;
			break;
		}
	}
	atomic_fetch_sub(&g_nleases, 1);
	pthread_mutex_unlock(&g_lease_lock);
	free(r);
drop_node:
	mx = n->mn_mx;
	pthread_mutex_lock(&mx->mx_lock);
	fsm_node_put_locked(n);
	pthread_mutex_unlock(&mx->mx_lock);
	fsm_tree_drop(mx);
	ls->ls_priv = NULL;
	ls->ls_node = NULL;
}
