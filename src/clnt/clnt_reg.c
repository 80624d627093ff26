// SPDX-License-Identifier: MIT
/*
 * clnt_reg.c - registration of the caller's chunk memory: per call,
 * buffers kept registered, type 2 memory windows bound per call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clnt/clnt_internal.h"

/* A registered buffer holding [addr, addr + len), or NULL.  Lock held. */
static struct clnt_buffer *clnt_buffer_find(struct rpcrdma_clnt *cl, const void *addr,
					    size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	unsigned i;

	for (i = 0; i < RPCRDMA_CLNT_MAX_BUFFERS; i++) {
		struct clnt_buffer *b = &cl->cl_bufs[i];
		uintptr_t base = (uintptr_t)b->cb_addr;

		if (b->cb_used && b->cb_mr && a >= base && len <= b->cb_len &&
		    a - base <= b->cb_len - len)
			return b;
	}
	return NULL;
}

/* Queue the bind of @rl's window @idx over @m's bytes (posted with the
 * Send, before it).  The window gets a fresh key each time. */
static void clnt_bind_window(struct clnt_req *rl, unsigned idx, struct clnt_mapping *m,
			     int access)
{
	struct ibv_send_wr *wr = &rl->rl_bind_wr[rl->rl_nbind++];

	m->cm_mw = rl->rl_mw[idx];
	rl->rl_mw_rkey[idx] = ibv_inc_rkey(rl->rl_mw_rkey[idx]);
	m->cm_rkey = rl->rl_mw_rkey[idx];
	memset(wr, 0, sizeof(*wr));
	wr->opcode = IBV_WR_BIND_MW;
	wr->bind_mw.mw = m->cm_mw;
	wr->bind_mw.rkey = m->cm_rkey;
	wr->bind_mw.bind_info.mr = m->cm_mr;
	wr->bind_mw.bind_info.addr = (uint64_t)(uintptr_t)m->cm_addr;
	wr->bind_mw.bind_info.length = m->cm_len;
	wr->bind_mw.bind_info.mw_access_flags =
		access & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
}

/* Make @len bytes at @addr reachable by the Responder for this call:
 * a window over a registered buffer, the buffer's own registration, or a
 * registration for this call alone (with windows enabled, a region for
 * binding only with a window over it, so that every handle the Responder
 * sees can be invalidated, remotely or locally).  @idx: the chunk kind
 * (0 Read, 1 Write, 2 Reply). */
int clnt_map(struct rpcrdma_clnt *cl, struct clnt_req *rl, unsigned idx,
		    struct clnt_mapping *m, void *addr, uint32_t len, int access)
{
	struct clnt_buffer *b;
	bool mw;

	m->cm_addr = addr;
	m->cm_len = len;
	pthread_mutex_lock(&cl->cl_lock);
	b = clnt_buffer_find(cl, addr, len);
	/* A buffer registered for binding only grants no remote access: with
	 * no window to bind over it (windows dropped at a reconnect, see
	 * clnt_qp_size()), the chunk is registered for this call instead. */
	if (b && b->cb_mw && !(cl->cl_mw_enabled && rl->rl_mw[idx]))
		b = NULL;
	if (b) {
		b->cb_users++;
		m->cm_buf = b;
		m->cm_mr = b->cb_mr;
		m->cm_rkey = b->cb_mr->rkey;
		cl->cl_stats.cs_reg_persistent++;
		if (b->cb_mw && rl->rl_mw[idx]) {
			clnt_bind_window(rl, idx, m, access);
			cl->cl_stats.cs_mw_binds++;
		}
	} else {
		cl->cl_stats.cs_reg_per_call++;
	}
	mw = cl->cl_mw_enabled && rl->rl_mw[idx];
	pthread_mutex_unlock(&cl->cl_lock);
	if (b)
		return 0;
	m->cm_mr = rpcrdma_verbs_reg_mr(cl->cl_pd, addr, len,
					mw ? (access & IBV_ACCESS_REMOTE_WRITE ?
					      IBV_ACCESS_LOCAL_WRITE : 0) | IBV_ACCESS_MW_BIND :
					     access);
	if (!m->cm_mr)
		return errno ? -errno : -ENOMEM;
	m->cm_rkey = m->cm_mr->rkey;
	if (mw) {
		pthread_mutex_lock(&cl->cl_lock);
		clnt_bind_window(rl, idx, m, access);
		cl->cl_stats.cs_mw_binds++;
		pthread_mutex_unlock(&cl->cl_lock);
	}
	return 0;
}

static void clnt_unmap_one(struct rpcrdma_clnt *cl, struct clnt_req *rl, unsigned idx,
			   struct clnt_mapping *m)
{
	if (m->cm_buf) {
		pthread_mutex_lock(&cl->cl_lock);
		m->cm_buf->cb_users--;
		pthread_mutex_unlock(&cl->cl_lock);
	} else if (m->cm_mr && m->cm_mw && m->cm_bound) {
		/* The connection went before the window was invalidated: it
		 * is out of reach (its QP is in error) but still bound, and a
		 * region with a bound window cannot be deregistered.  Freed
		 * after the windows, when the connection is released. */
		rl->rl_parked[idx] = m->cm_mr;
	} else if (m->cm_mr) {
		rpcrdma_verbs_dereg_mr(m->cm_mr);
	}
	m->cm_buf = NULL;
	m->cm_mw = NULL;
	m->cm_mr = NULL;
	m->cm_bound = false;
}

/* Deregister the parked regions of every request (their windows have
 * been freed).  Connection teardown, no other thread. */
void clnt_park_release(struct rpcrdma_clnt *cl)
{
	uint32_t i, j;

	for (i = 0; cl->cl_reqs && i < cl->cl_nreqs; i++)
		for (j = 0; j < CLNT_NMAPS; j++) {
			if (cl->cl_reqs[i].rl_parked[j])
				rpcrdma_verbs_dereg_mr(cl->cl_reqs[i].rl_parked[j]);
			cl->cl_reqs[i].rl_parked[j] = NULL;
		}
}

/* Release every registration of @rl (the caller's memory is then out of
 * the Responder's reach, unless it lies in a registered buffer).  Called
 * without the lock. */
void clnt_unmap(struct clnt_req *rl)
{
	clnt_unmap_one(rl->rl_clnt, rl, 0, &rl->rl_read);
	clnt_unmap_one(rl->rl_clnt, rl, 1, &rl->rl_write);
	clnt_unmap_one(rl->rl_clnt, rl, 2, &rl->rl_reply);
	/* A NOMSG copy buffer is kept for the next call, unless large. */
	if (rl->rl_nomsg_cap > CLNT_NOMSG_KEEP) {
		free(rl->rl_nomsg);
		rl->rl_nomsg = NULL;
		rl->rl_nomsg_cap = 0;
	}
}

/* Access for a registered buffer: remote access itself, or (with memory
 * windows) local access and binding only. */
static int clnt_buffer_access(bool mw)
{
	return mw ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND :
		    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
}

int rpcrdma_clnt_register_buffer(struct rpcrdma_clnt *cl, void *addr, size_t len)
{
	struct clnt_buffer *b = NULL;
	uintptr_t a = (uintptr_t)addr;
	unsigned i;
	int rc = 0;

	if (!addr || !len)
		return -EINVAL;
	pthread_mutex_lock(&cl->cl_lock);
	while (cl->cl_reconnecting)
		pthread_cond_wait(&cl->cl_slot_cond, &cl->cl_lock);
	for (i = 0; i < RPCRDMA_CLNT_MAX_BUFFERS; i++) {
		struct clnt_buffer *o = &cl->cl_bufs[i];
		uintptr_t base = (uintptr_t)o->cb_addr;

		if (!o->cb_used) {
			if (!b)
				b = o;
			continue;
		}
		if (a < base + o->cb_len && base < a + len)
			rc = -EINVAL;
	}
	if (!rc && !b)
		rc = -ENOSPC;
	if (!rc && !cl->cl_connected)
		rc = -ENOTCONN;
	/* Per-call registration asked for, or windows asked for but not
	 * available: do not silently widen the exposure to the whole buffer. */
	if (!rc && (cl->cl_cfg.cf_reg == RPCRDMA_CLNT_REG_PER_CALL ||
		    (cl->cl_cfg.cf_reg == RPCRDMA_CLNT_REG_WINDOWS && !cl->cl_mw_enabled)))
		rc = -EOPNOTSUPP;
	if (!rc) {
		/* Under the lock: a reconnect cannot swap the PD meanwhile. */
		b->cb_mr = rpcrdma_verbs_reg_mr(cl->cl_pd, addr, len,
						clnt_buffer_access(cl->cl_mw_enabled));
		if (!b->cb_mr) {
			rc = errno ? -errno : -ENOMEM;
		} else {
			b->cb_addr = addr;
			b->cb_len = len;
			b->cb_users = 0;
			b->cb_mw = cl->cl_mw_enabled;
			b->cb_used = true;
		}
	}
	pthread_mutex_unlock(&cl->cl_lock);
	return rc;
}

int rpcrdma_clnt_unregister_buffer(struct rpcrdma_clnt *cl, void *addr)
{
	struct ibv_mr *mr = NULL;
	unsigned i;
	int rc = -ENOENT;

	pthread_mutex_lock(&cl->cl_lock);
	while (cl->cl_reconnecting)
		pthread_cond_wait(&cl->cl_slot_cond, &cl->cl_lock);
	for (i = 0; i < RPCRDMA_CLNT_MAX_BUFFERS; i++) {
		struct clnt_buffer *b = &cl->cl_bufs[i];

		if (!b->cb_used || b->cb_addr != addr)
			continue;
		if (b->cb_users) {
			rc = -EBUSY;
			break;
		}
		mr = b->cb_mr;
		memset(b, 0, sizeof(*b));
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&cl->cl_lock);
	if (mr)
		rpcrdma_verbs_dereg_mr(mr);
	return rc;
}

/* Reconnect: drop the registered buffers' MRs of the old PD. */
void clnt_buffers_deregister(struct rpcrdma_clnt *cl)
{
	unsigned i;

	for (i = 0; i < RPCRDMA_CLNT_MAX_BUFFERS; i++) {
		struct clnt_buffer *b = &cl->cl_bufs[i];

		if (b->cb_used && b->cb_mr) {
			rpcrdma_verbs_dereg_mr(b->cb_mr);
			b->cb_mr = NULL;
		}
	}
}

/* Reconnect: register the buffers again with the new PD. */
int clnt_buffers_register(struct rpcrdma_clnt *cl)
{
	unsigned i;

	for (i = 0; i < RPCRDMA_CLNT_MAX_BUFFERS; i++) {
		struct clnt_buffer *b = &cl->cl_bufs[i];

		if (!b->cb_used || b->cb_mr)
			continue;
		b->cb_mr = rpcrdma_verbs_reg_mr(cl->cl_pd, b->cb_addr, b->cb_len,
						clnt_buffer_access(b->cb_mw));
		if (!b->cb_mr)
			return errno ? -errno : -ENOMEM;
	}
	return 0;
}
