// SPDX-License-Identifier: MIT
/*
 * fs_memory_share.c - the memory backend's share reservations (be_share):
 * kept on the node, so every export of the tree sees them, as every
 * server on one storage would.  An export stands for a server here: the
 * layer (fs_share.c) has checked the reservations of the server calling,
 * so only those other exports made are checked, and a reservation is
 * the export's and owner's.  They go when their owner drops them, when
 * their export closes (fsm_shares_drop_export()) and with their node.
 */
#include <errno.h>
#include <stdlib.h>

#include "fs_memory.h"

/* One reservation of a file, made through export sh_exp. */
struct fsm_share {
	struct fsm_share *sh_next;
	const struct rpcrdma_nfs3_export *sh_exp;
	uint64_t sh_owner;
	uint32_t sh_access, sh_deny;  /* FS_SHARE_* */
};

int fsm_be_share(struct fs_call *c, struct fs_fentry *fe, uint64_t owner,
		 uint32_t access, uint32_t deny)
{
	struct fsm_node *n = fsm_fe(fe);
	struct fsm_export *mx;
	struct fsm_share *s, **pp, **mine = NULL;
	int err = 0;

	if (!n)
		return -ESTALE;
	mx = n->mn_mx;
	pthread_mutex_lock(&mx->mx_lock);
	for (pp = &n->mn_shares; (s = *pp); pp = &s->sh_next) {
		if (s->sh_exp == c->c_exp) {
			if (s->sh_owner == owner)
				mine = pp;
			continue; /* the layer checked this server's own */
		}
		if (access && ((s->sh_deny & access) || (s->sh_access & deny))) {
			err = -EBUSY;
			goto out;
		}
	}
	if (!access) {
		if (mine) {
			s = *mine;
			*mine = s->sh_next;
			free(s);
			mx->mx_nshares--;
		}
		goto out;
	}
	if (mine) {
		(*mine)->sh_access = access;
		(*mine)->sh_deny = deny;
		goto out;
	}
	if (mx->mx_nshares >= FSM_SHARES_MAX) {
		err = -ENOLCK;
		goto out;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		err = -ENOMEM;
		goto out;
	}
	s->sh_exp = c->c_exp;
	s->sh_owner = owner;
	s->sh_access = access;
	s->sh_deny = deny;
	s->sh_next = n->mn_shares;
	n->mn_shares = s;
	mx->mx_nshares++;
out:
	pthread_mutex_unlock(&mx->mx_lock);
	return err;
}

void fsm_shares_free_locked(struct fsm_node *n)
{
	struct fsm_share *s, *next;

	for (s = n->mn_shares; s; s = next) {
		next = s->sh_next;
		n->mn_mx->mx_nshares--;
		free(s);
	}
	n->mn_shares = NULL;
}

void fsm_shares_drop_export(struct fsm_export *mx,
			    const struct rpcrdma_nfs3_export *exp)
{
	pthread_mutex_lock(&mx->mx_lock);
	for (uint32_t i = 0; mx->mx_nshares && i < mx->mx_nids; i++)
		for (struct fsm_node *n = mx->mx_ids[i]; n; n = n->mn_hnext) {
			struct fsm_share *s, **pp = &n->mn_shares;

			while ((s = *pp)) {
				if (s->sh_exp != exp) {
					pp = &s->sh_next;
					continue;
				}
				*pp = s->sh_next;
				mx->mx_nshares--;
				free(s);
			}
		}
	pthread_mutex_unlock(&mx->mx_lock);
}
