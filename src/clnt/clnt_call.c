// SPDX-License-Identifier: MIT
/*
 * clnt_call.c - the Requester's call path: marshalling (RFC 8166 3.5),
 * credits (3.3.1), matching replies by xid, request lifetime, timeouts.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clnt/clnt_internal.h"
#include "common/be.h"

/* Return @rl to the pool once both owners have let go.  Lock held. */
static void clnt_req_release(struct rpcrdma_clnt *cl, struct clnt_req *rl, unsigned owner)
{
	if (!(rl->rl_owners & owner))
		return;
	rl->rl_owners &= ~owner;
	if (rl->rl_owners)
		return;
	rl->rl_state = RL_FREE;
	rl->rl_call = NULL;
	rl->rl_next = cl->cl_free;
	cl->cl_free = rl;
	cl->cl_reqs_out--;
	pthread_cond_broadcast(&cl->cl_slot_cond);
}

/*
 * Put @rl's Send in the ring; signal it when half the ring has gone
 * unsignalled, so at most half the requests wait for a later completion
 * to be released and the pool can never empty itself.  Lock held.
 */
static void clnt_sq_push(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	uint32_t every = cl->cl_nreqs / 2 ? cl->cl_nreqs / 2 : 1;

	rl->rl_sq_pos = cl->cl_sq_tail++;
	cl->cl_sq_ring[rl->rl_sq_pos % cl->cl_nreqs] = rl;
	rl->rl_sq_signaled = ++cl->cl_sq_unsignaled >= every;
	if (rl->rl_sq_signaled) {
		cl->cl_sq_unsignaled = 0;
		cl->cl_sq_signaled++;
	}
	rl->rl_wr.send_flags = rl->rl_sq_signaled ? IBV_SEND_SIGNALED : 0;
	rl->rl_owners |= CLNT_OWNER_SEND;
}

/* Undo clnt_sq_push() of the last Send (its post failed).  Lock held. */
static void clnt_sq_pop(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	uint32_t every = cl->cl_nreqs / 2 ? cl->cl_nreqs / 2 : 1;

	cl->cl_sq_tail--;
	if (rl->rl_sq_signaled) {
		/* The Sends before it are unsignalled again: a later Send
		 * must be signalled where this one would have been, or they
		 * pile up until no request is free and none completes. */
		cl->cl_sq_signaled--;
		cl->cl_sq_unsignaled = every - 1;
	} else if (cl->cl_sq_unsignaled) {
		cl->cl_sq_unsignaled--;
	}
	rl->rl_owners &= ~CLNT_OWNER_SEND;
}

/* A Send completed (or flushed): the send queue is in order, so every
 * Send posted before it is done too.  Lock held. */
static void clnt_sq_complete(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	if (rl->rl_sq_pos < cl->cl_sq_head)
		return; /* already released (teardown) */
	if (rl->rl_sq_signaled && cl->cl_sq_signaled)
		cl->cl_sq_signaled--;
	while (cl->cl_sq_head <= rl->rl_sq_pos) {
		struct clnt_req *done = cl->cl_sq_ring[cl->cl_sq_head++ % cl->cl_nreqs];

		clnt_req_release(cl, done, CLNT_OWNER_SEND);
	}
}

/* Teardown: release every Send and LOCAL_INV whose completion will never
 * come. */
void clnt_sq_release_all(struct rpcrdma_clnt *cl)
{
	uint32_t i;

	while (cl->cl_sq_head < cl->cl_sq_tail)
		clnt_req_release(cl, cl->cl_sq_ring[cl->cl_sq_head++ % cl->cl_nreqs],
				 CLNT_OWNER_SEND);
	for (i = 0; i < cl->cl_nreqs; i++)
		clnt_req_release(cl, &cl->cl_reqs[i], CLNT_OWNER_INV);
	cl->cl_sq_unsignaled = 0;
	cl->cl_sq_signaled = 0;
}

/* ---- the xid table: calls the Responder may hold ---- */

static uint32_t clnt_xid_slot(const struct rpcrdma_clnt *cl, uint32_t xid)
{
	/* xids are handed out in sequence: the low bits spread them. */
	return xid & cl->cl_xid_mask;
}

struct clnt_req *clnt_xid_find(struct rpcrdma_clnt *cl, uint32_t xid)
{
	struct clnt_req *rl;

	for (rl = cl->cl_xids[clnt_xid_slot(cl, xid)]; rl; rl = rl->rl_hnext)
		if (rl->rl_xid == xid)
			return rl;
	return NULL;
}

/* @rl is posted: the Responder holds it (and its credit) from now on. */
static void clnt_wire_add(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	struct clnt_req **head = &cl->cl_xids[clnt_xid_slot(cl, rl->rl_xid)];

	rl->rl_hnext = *head;
	*head = rl;
	rl->rl_owners |= CLNT_OWNER_WIRE;
}

/* Take @rl out of the table (its chain is short: O(1)).  Lock held. */
static void clnt_xid_unlink(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	struct clnt_req **pp = &cl->cl_xids[clnt_xid_slot(cl, rl->rl_xid)];

	for (; *pp; pp = &(*pp)->rl_hnext) {
		if (*pp == rl) {
			*pp = rl->rl_hnext;
			break;
		}
	}
	rl->rl_hnext = NULL;
}

/* The Responder no longer holds @rl (its reply came, or the connection is
 * gone): the credit comes back (RFC 8166 3.3.1).  May return @rl to the
 * pool.  Lock held. */
static void clnt_wire_release(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	clnt_xid_unlink(cl, rl);
	if (cl->cl_outstanding)
		cl->cl_outstanding--;
	clnt_req_release(cl, rl, CLNT_OWNER_WIRE);
	pthread_cond_broadcast(&cl->cl_slot_cond);
}

/* Record the outcome of a call whose memory is fenced, and wake its
 * caller (or queue its callback).  Lock held. */
static void clnt_complete(struct rpcrdma_clnt *cl, struct clnt_req *rl, int status)
{
	rl->rl_status = status;
	rl->rl_state = RL_DONE;
	if (rl->rl_done) {
		/* Finished outside the lock by clnt_run_done(). */
		rl->rl_next = cl->cl_done;
		cl->cl_done = rl;
	} else {
		pthread_cond_signal(&rl->rl_cond);
	}
	pthread_cond_broadcast(&cl->cl_slot_cond);
}

/* Post LOCAL_INV for every window of @rl still bound, the last one
 * signalled (tagged rl_inv_cqe, the others quiet).  Return: true when
 * posted (the completion finishes the fencing), false when nothing was
 * bound or the connection is gone (then nothing can reach the windows: a
 * type 2 window is reachable only through the QP it was bound on, which
 * is in error).  A failed post closes the connection.  Lock held. */
static bool clnt_post_local_inv(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	struct clnt_mapping *maps[CLNT_NMAPS] = { &rl->rl_read, &rl->rl_write, &rl->rl_reply };
	struct ibv_send_wr *bad, *prev = NULL, *first = NULL;
	unsigned i, n = 0;

	if (!cl->cl_connected)
		return false;
	for (i = 0; i < CLNT_NMAPS; i++) {
		struct ibv_send_wr *wr = &rl->rl_inv_wr[n];

		if (!maps[i]->cm_mw || !maps[i]->cm_bound)
			continue;
		memset(wr, 0, sizeof(*wr));
		wr->opcode = IBV_WR_LOCAL_INV;
		wr->invalidate_rkey = maps[i]->cm_rkey;
		wr->wr_id = (uintptr_t)&cl->cl_quiet_cqe;
		if (prev)
			prev->next = wr;
		else
			first = wr;
		prev = wr;
		n++;
	}
	if (!n)
		return false;
	prev->send_flags = IBV_SEND_SIGNALED;
	prev->wr_id = (uintptr_t)&rl->rl_inv_cqe;
	rl->rl_inv_cqe.ce_type = CLNT_CQE_LINV;
	rl->rl_inv_cqe.ce_id = ++cl->cl_cqe_ids;
	if (rpcrdma_verbs_post_send(cl->cl_qp, first, &bad)) {
		clnt_log(cl, "LOCAL_INV post failed: disconnecting");
		clnt_disconnected(cl);
		return false;
	}
	rl->rl_owners |= CLNT_OWNER_INV;
	return true;
}

/* Mark @rl's windows bound (@bound: its binds were posted) or
 * invalidated (a successful LOCAL_INV). */
static void clnt_windows_set(struct clnt_req *rl, bool bound)
{
	struct clnt_mapping *maps[CLNT_NMAPS] = { &rl->rl_read, &rl->rl_write, &rl->rl_reply };
	unsigned i;

	for (i = 0; i < CLNT_NMAPS; i++)
		maps[i]->cm_bound = bound && maps[i]->cm_mw;
}

/*
 * The outcome of @rl is @status: fence its windows, then complete it.
 * With windows still bound on a live connection the completion waits for
 * the LOCAL_INV completion (RL_FENCING); otherwise it is immediate.
 * Per-call regions are deregistered by the RPC side before it reports
 * (clnt_call_finish).  Lock held.
 */
static void clnt_fence_complete(struct rpcrdma_clnt *cl, struct clnt_req *rl, int status)
{
	rl->rl_status = status;
	if (clnt_post_local_inv(cl, rl)) {
		rl->rl_state = RL_FENCING;
		return;
	}
	clnt_complete(cl, rl, status);
}

static void clnt_ready_remove(struct rpcrdma_clnt *cl, struct clnt_req *rl);

/*
 * The connection is gone: the Responder holds nothing any more (credits
 * back); pending calls are kept to be sent again after a reconnect while
 * they have retries left (cf_retries, not while the client is being
 * destroyed), otherwise they fail with @status, as do calls waiting to be
 * resent once the client stops; calls waiting for their LOCAL_INV
 * complete now (the QP is in error: their windows are out of reach; the
 * flushed LOCAL_INV later releases only the INV owner).  Lock held.
 */
void clnt_fail_pending(struct rpcrdma_clnt *cl, int status)
{
	bool resend = false;
	uint32_t i;

	for (i = 0; cl->cl_reqs && i < cl->cl_nreqs; i++) {
		struct clnt_req *rl = &cl->cl_reqs[i];
		enum clnt_req_state st = rl->rl_state;

		if (rl->rl_owners & CLNT_OWNER_WIRE)
			clnt_wire_release(cl, rl);
		if (st == RL_PENDING && !cl->cl_stopping &&
		    rl->rl_tries < cl->cl_cfg.cf_retries) {
			/* Its windows are unreachable (QP in error); its
			 * registrations go when the reconnect takes it. */
			rl->rl_tries++;
			rl->rl_state = RL_RESEND;
			resend = true;
		} else if (st == RL_PENDING) {
			clnt_complete(cl, rl, status);
		} else if (st == RL_FENCING) {
			clnt_complete(cl, rl, rl->rl_status);
		} else if (cl->cl_stopping && st == RL_READY) {
			clnt_ready_remove(cl, rl);
			clnt_complete(cl, rl, status);
		} else if (cl->cl_stopping && st == RL_RESEND) {
			clnt_complete(cl, rl, status);
		}
	}
	if (resend)
		pthread_cond_broadcast(&cl->cl_work_cond);
}

/* @rl has a chunk inside a buffer registered for remote access: only
 * closing the connection takes it out of the Responder's reach. */
static bool clnt_req_persistent(const struct clnt_req *rl)
{
	const struct clnt_mapping *maps[CLNT_NMAPS] = { &rl->rl_read, &rl->rl_write,
							&rl->rl_reply };
	unsigned i;

	for (i = 0; i < CLNT_NMAPS; i++)
		if (maps[i]->cm_buf && !maps[i]->cm_mw)
			return true;
	return false;
}

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
static int clnt_map(struct rpcrdma_clnt *cl, struct clnt_req *rl, unsigned idx,
		    struct clnt_mapping *m, void *addr, uint32_t len, int access)
{
	struct clnt_buffer *b;
	bool mw;

	m->cm_addr = addr;
	m->cm_len = len;
	pthread_mutex_lock(&cl->cl_lock);
	b = clnt_buffer_find(cl, addr, len);
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
	free(rl->rl_nomsg);
	rl->rl_nomsg = NULL;
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

static void seg_of(struct rpcrdma_segment *seg, const struct clnt_mapping *m)
{
	seg->rs_handle = m->cm_rkey;
	seg->rs_length = m->cm_len;
	seg->rs_offset = (uint64_t)(uintptr_t)m->cm_addr;
}

/* The RPC call header (RFC 5531 9): xid, CALL, 2, prog, vers, proc, cred, verf. */
static uint32_t clnt_rpc_header(struct rpcrdma_clnt *cl, struct clnt_req *rl, uint8_t *p)
{
	const struct rpcrdma_clnt_call *ca = rl->rl_call;

	store_be32(p, rl->rl_xid);
	store_be32(p + 4, RPC_DIR_CALL);
	store_be32(p + 8, RPC_MSG_VERSION);
	store_be32(p + 12, ca->ca_prog);
	store_be32(p + 16, ca->ca_vers);
	store_be32(p + 20, ca->ca_proc);
	memcpy(p + 24, cl->cl_cred, cl->cl_cred_len);
	return 24 + cl->cl_cred_len;
}

/* Copy head, DDP data (+ zero pad) and tail to @dst; return bytes. */
static uint32_t clnt_copy_args(const struct rpcrdma_clnt_call *ca, uint8_t *dst)
{
	uint32_t pad = (uint32_t)RPCRDMA_XDR_ALIGN(ca->ca_ddp_len) - ca->ca_ddp_len;
	uint8_t *p = dst;

	if (ca->ca_args_len)
		memcpy(p, ca->ca_args, ca->ca_args_len);
	p += ca->ca_args_len;
	if (ca->ca_ddp_len)
		memcpy(p, ca->ca_ddp, ca->ca_ddp_len);
	p += ca->ca_ddp_len;
	memset(p, 0, pad);
	p += pad;
	if (ca->ca_tail_len)
		memcpy(p, ca->ca_tail, ca->ca_tail_len);
	p += ca->ca_tail_len;
	return (uint32_t)(p - dst);
}

/*
 * Marshal @rl's call into its header and body buffers, registering the
 * caller's memory the chunks need.  Called without the lock.  On failure
 * every registration made here is released; the request's owners are
 * left alone.
 */
int clnt_marshal(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	struct rpcrdma_clnt_call *ca = rl->rl_call;
	uint32_t nwrite = ca->ca_rddp_cap ? 1 : 0, nreply = 0, nread = 0;
	uint32_t rpc_len, full_len, head_len, pos = 0;
	uint8_t rpchdr[24 + CLNT_RPC_HDR_MAX];
	struct rpcrdma_hdr *rh;
	uint64_t full64;
	int rc;

	full64 = (uint64_t)24 + cl->cl_cred_len + ca->ca_args_len +
		 RPCRDMA_XDR_ALIGN((uint64_t)ca->ca_ddp_len) + ca->ca_tail_len;
	if (full64 > (64u << 20))
		return -EMSGSIZE;
	rl->rl_nbind = 0;
	rpc_len = clnt_rpc_header(cl, rl, rpchdr);
	full_len = (uint32_t)full64;
	head_len = rpc_len + ca->ca_args_len;

	/* Reply chunk: when the largest reply may not fit our inline receive. */
	if ((uint64_t)ca->ca_res_cap + rpcrdma_wire_max_hdr_size(0, nwrite, nwrite, 0) >
	    cl->cl_inline_recv)
		nreply = 1;

	rh = calloc(1, sizeof(*rh));
	if (!rh)
		return -ENOMEM;
	rh->rh_xid = rl->rl_xid;
	rh->rh_vers = RPCRDMA_VERSION;
	rh->rh_credits = cl->cl_max_credits;
	rh->rh_proc = RDMA_MSG;

	if (rpcrdma_wire_max_hdr_size(0, nwrite, nwrite, nreply) + full_len <=
	    cl->cl_inline_send) {
		/* Everything inline. */
		memcpy(rl->rl_body, rpchdr, rpc_len);
		rl->rl_body_len = rpc_len + clnt_copy_args(ca, rl->rl_body + rpc_len);
	} else if (ca->ca_ddp_len &&
		   rpcrdma_wire_max_hdr_size(1, nwrite, nwrite, nreply) + head_len +
		   ca->ca_tail_len <= cl->cl_inline_send) {
		/* DDP-eligible data in a Read chunk at its XDR position, pad omitted. */
		rc = clnt_map(cl, rl, 0, &rl->rl_read, (void *)(uintptr_t)ca->ca_ddp,
			      ca->ca_ddp_len,
			      IBV_ACCESS_REMOTE_READ);
		if (rc)
			goto err;
		memcpy(rl->rl_body, rpchdr, rpc_len);
		if (ca->ca_args_len)
			memcpy(rl->rl_body + rpc_len, ca->ca_args, ca->ca_args_len);
		if (ca->ca_tail_len)
			memcpy(rl->rl_body + head_len, ca->ca_tail, ca->ca_tail_len);
		rl->rl_body_len = head_len + ca->ca_tail_len;
		pos = head_len;
		nread = 1;
	} else {
		/* The whole call in a position-zero Read chunk (RDMA_NOMSG). */
		if (rpcrdma_wire_max_hdr_size(1, nwrite, nwrite, nreply) > cl->cl_inline_send) {
			rc = -EMSGSIZE;
			goto err;
		}
		rl->rl_nomsg = malloc(full_len);
		if (!rl->rl_nomsg) {
			rc = -ENOMEM;
			goto err;
		}
		memcpy(rl->rl_nomsg, rpchdr, rpc_len);
		clnt_copy_args(ca, rl->rl_nomsg + rpc_len);
		rc = clnt_map(cl, rl, 0, &rl->rl_read, rl->rl_nomsg, full_len,
			      IBV_ACCESS_REMOTE_READ);
		if (rc)
			goto err;
		rl->rl_body_len = 0;
		rh->rh_proc = RDMA_NOMSG;
		nread = 1;
	}
	if (nread) {
		seg_of(&rh->rh_segs[rh->rh_nsegs], &rl->rl_read);
		rh->rh_read[0] = (struct rpcrdma_chunk){
			.rc_position = pos, .rc_first = rh->rh_nsegs, .rc_nsegs = 1,
			.rc_length = rl->rl_read.cm_len,
		};
		rh->rh_nsegs++;
		rh->rh_nread = 1;
	}
	if (nwrite) {
		rc = clnt_map(cl, rl, 1, &rl->rl_write, ca->ca_rddp, ca->ca_rddp_cap,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (rc)
			goto err;
		seg_of(&rh->rh_segs[rh->rh_nsegs], &rl->rl_write);
		rh->rh_write[0] = (struct rpcrdma_chunk){
			.rc_first = rh->rh_nsegs, .rc_nsegs = 1, .rc_length = ca->ca_rddp_cap,
		};
		rh->rh_nsegs++;
		rh->rh_nwrite = 1;
	}
	if (nreply) {
		rc = clnt_map(cl, rl, 2, &rl->rl_reply, ca->ca_res, ca->ca_res_cap,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (rc)
			goto err;
		seg_of(&rh->rh_segs[rh->rh_nsegs], &rl->rl_reply);
		rh->rh_reply = (struct rpcrdma_chunk){
			.rc_first = rh->rh_nsegs, .rc_nsegs = 1, .rc_length = ca->ca_res_cap,
		};
		rh->rh_nsegs++;
		rh->rh_has_reply = true;
	}
	rc = rpcrdma_wire_encode(rl->rl_hdrbuf, CLNT_HDR_BUF, rh);
	if (rc < 0)
		goto err;
	rl->rl_hdr_len = (uint32_t)rc;
	rl->rl_proc = rh->rh_proc;
	free(rh);

	memset(&rl->rl_wr, 0, sizeof(rl->rl_wr));
	rl->rl_sge[0].addr = (uintptr_t)rl->rl_hdrbuf;
	rl->rl_sge[0].length = rl->rl_hdr_len;
	rl->rl_sge[0].lkey = cl->cl_mr->lkey;
	rl->rl_sge[1].addr = (uintptr_t)rl->rl_body;
	rl->rl_sge[1].length = rl->rl_body_len;
	rl->rl_sge[1].lkey = cl->cl_mr->lkey;
	rl->rl_wr.sg_list = rl->rl_sge;
	rl->rl_wr.num_sge = rl->rl_body_len ? 2 : 1;
	rl->rl_wr.opcode = IBV_WR_SEND;
	rl->rl_wr.wr_id = (uintptr_t)&rl->rl_cqe;
	return 0;

err:
	free(rh);
	clnt_unmap(rl);
	return rc;
}

static bool clnt_call_valid(const struct rpcrdma_clnt_call *ca)
{
	if ((ca->ca_args_len & 3) || (ca->ca_tail_len & 3))
		return false;
	if ((ca->ca_args_len && !ca->ca_args) || (ca->ca_tail_len && !ca->ca_tail) ||
	    (ca->ca_ddp_len && !ca->ca_ddp))
		return false;
	if (!ca->ca_res || ca->ca_res_cap < 24)
		return false;
	if (ca->ca_rddp_cap && !ca->ca_rddp)
		return false;
	return true;
}

/*
 * Take a request and a credit, marshal and post the call.  On success
 * *@out is pending (or already done, when the Reply beat us here).
 */
int clnt_call_start(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
		    struct clnt_req **out)
{
	return clnt_call_start_xid(cl, ca, out, NULL);
}

static int clnt_call_start_common(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
				  struct clnt_req **out, const uint32_t *xid,
				  rpcrdma_clnt_done_fn done, void *arg, uint64_t deadline);

/* As clnt_call_start(); @xid, when not NULL, is reused (a retransmission). */
int clnt_call_start_xid(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
			struct clnt_req **out, const uint32_t *xid)
{
	return clnt_call_start_common(cl, ca, out, xid, NULL, NULL, 0);
}

static int clnt_call_start_async(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
				 struct clnt_req **out, rpcrdma_clnt_done_fn done,
				 void *arg, uint64_t deadline)
{
	return clnt_call_start_common(cl, ca, out, NULL, done, arg, deadline);
}

/*
 * Post marshalled @rl (its credit taken): into the xid table, the Send
 * ring, then one post of its window binds and its Send.  Return: 0 (now
 * RL_PENDING), or the post's error with everything undone (RL_PREPARED,
 * registrations kept).  Lock held.
 */
static int clnt_post_call(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	struct ibv_send_wr *bad;
	uint32_t i;
	int rc;

	rl->rl_state = RL_PENDING;
	rl->rl_aborted = false;
	clnt_wire_add(cl, rl);
	rl->rl_cqe.ce_type = RPCRDMA_CQE_SEND;
	rl->rl_cqe.ce_id = ++cl->cl_cqe_ids;
	/* In the ring before the post: its completion may come first. */
	clnt_sq_push(cl, rl);
	/* Window binds go first on the send queue, unsignalled; the queue
	 * executes in order, so they take effect before the Send. */
	rl->rl_wr.next = NULL;
	for (i = 0; i < rl->rl_nbind; i++) {
		rl->rl_bind_wr[i].next = i + 1 < rl->rl_nbind ? &rl->rl_bind_wr[i + 1] :
							    &rl->rl_wr;
		rl->rl_bind_wr[i].wr_id = (uintptr_t)&cl->cl_quiet_cqe;
	}
	rc = rpcrdma_verbs_post_send(cl->cl_qp, rl->rl_nbind ? &rl->rl_bind_wr[0] : &rl->rl_wr,
				     &bad);
	if (rc) {
		clnt_sq_pop(cl, rl);
		clnt_xid_unlink(cl, rl);
		rl->rl_owners &= ~CLNT_OWNER_WIRE;
		rl->rl_state = RL_PREPARED;
		return rc;
	}
	/* A bind names its window by the window's current key (ibv_mw.rkey);
	 * from now on that is the key we just bound. */
	for (i = 0; i < rl->rl_nbind; i++)
		rl->rl_bind_wr[i].bind_mw.mw->rkey = rl->rl_bind_wr[i].bind_mw.rkey;
	clnt_windows_set(rl, true);
	return 0;
}

/* Take @rl off the ready FIFO (it is there).  Lock held. */
static void clnt_ready_remove(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	struct clnt_req **pp, *prev = NULL;

	for (pp = &cl->cl_ready; *pp; prev = *pp, pp = &(*pp)->rl_next) {
		if (*pp == rl) {
			*pp = rl->rl_next;
			if (cl->cl_ready_tail == rl)
				cl->cl_ready_tail = prev;
			rl->rl_next = NULL;
			return;
		}
	}
}

void clnt_pump_ready(struct rpcrdma_clnt *cl)
{
	struct clnt_req *rl;
	int rc;

	while (cl->cl_connected && (rl = cl->cl_ready) && cl->cl_outstanding < cl->cl_credits) {
		clnt_ready_remove(cl, rl);
		cl->cl_outstanding++;
		rc = clnt_post_call(cl, rl);
		if (rc) {
			cl->cl_outstanding--;
			clnt_complete(cl, rl, rc);
		} else {
			cl->cl_stats.cs_retransmits++;
		}
	}
	if (!cl->cl_ready)
		pthread_cond_broadcast(&cl->cl_slot_cond);
}

bool clnt_resend_waiting(const struct rpcrdma_clnt *cl)
{
	uint32_t i;

	for (i = 0; cl->cl_reqs && i < cl->cl_nreqs; i++)
		if (cl->cl_reqs[i].rl_state == RL_RESEND)
			return true;
	return false;
}

uint32_t clnt_resend_prepare(struct rpcrdma_clnt *cl)
{
	uint32_t i, n = 0;

	pthread_mutex_lock(&cl->cl_lock);
	for (i = 0; i < cl->cl_nreqs; i++) {
		if (cl->cl_reqs[i].rl_state == RL_RESEND) {
			cl->cl_reqs[i].rl_state = RL_REBINDING;
			n++;
		}
	}
	pthread_mutex_unlock(&cl->cl_lock);
	/* Ours alone now: nothing else moves a call out of RL_REBINDING. */
	for (i = 0; n && i < cl->cl_nreqs; i++)
		if (cl->cl_reqs[i].rl_state == RL_REBINDING)
			clnt_unmap(&cl->cl_reqs[i]);
	return n;
}

void clnt_resend_finish(struct rpcrdma_clnt *cl, int rc)
{
	uint32_t i;

	for (i = 0; i < cl->cl_nreqs; i++) {
		struct clnt_req *rl = &cl->cl_reqs[i];
		int mrc = rc;

		if (rl->rl_state != RL_REBINDING)
			continue;
		/* Same xid and call, marshalled for the new connection's
		 * inline sizes, registrations and windows. */
		if (!rc)
			mrc = clnt_marshal(cl, rl);
		pthread_mutex_lock(&cl->cl_lock);
		if (!mrc) {
			rl->rl_state = RL_READY;
			rl->rl_next = NULL;
			if (cl->cl_ready_tail)
				cl->cl_ready_tail->rl_next = rl;
			else
				cl->cl_ready = rl;
			cl->cl_ready_tail = rl;
		} else if (!rc || ++rl->rl_tries > cl->cl_cfg.cf_retries) {
			clnt_complete(cl, rl, mrc);
		} else {
			rl->rl_state = RL_RESEND; /* the next reconnect */
		}
		pthread_cond_signal(&rl->rl_cond);
		pthread_mutex_unlock(&cl->cl_lock);
	}
	pthread_mutex_lock(&cl->cl_lock);
	clnt_pump_ready(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	clnt_run_done(cl);
}

static int clnt_call_start_common(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
				  struct clnt_req **out, const uint32_t *xid,
				  rpcrdma_clnt_done_fn done, void *arg, uint64_t deadline)
{
	struct clnt_req *rl;
	bool waited = false;
	int rc;

	if (!clnt_call_valid(ca))
		return -EINVAL;
	ca->ca_res_off = ca->ca_res_len = 0;
	ca->ca_rddp_used = false;
	ca->ca_rddp_len = 0;

	pthread_mutex_lock(&cl->cl_lock);
	/* Calls to resend go first (cl_ready). */
	while (cl->cl_connected && (!cl->cl_free || cl->cl_ready ||
				    cl->cl_outstanding >= cl->cl_credits)) {
		if (!waited)
			cl->cl_stats.cs_credit_waits++;
		waited = true;
		pthread_cond_wait(&cl->cl_slot_cond, &cl->cl_lock);
	}
	if (!cl->cl_connected) {
		pthread_mutex_unlock(&cl->cl_lock);
		return -ENOTCONN;
	}
	rl = cl->cl_free;
	cl->cl_free = rl->rl_next;
	rl->rl_next = NULL;
	cl->cl_reqs_out++;
	cl->cl_outstanding++; /* the credit is ours from here */
	rl->rl_owners = CLNT_OWNER_RPC;
	rl->rl_state = RL_PREPARED;
	rl->rl_status = 0;
	rl->rl_tries = 0;
	rl->rl_call = ca;
	rl->rl_done = NULL;
	rl->rl_xid = xid ? *xid : cl->cl_next_xid++;
	cl->cl_rpc_busy++;
	cl->cl_stats.cs_calls++;
	pthread_mutex_unlock(&cl->cl_lock);

	rc = clnt_marshal(cl, rl);

	pthread_mutex_lock(&cl->cl_lock);
	if (!rc && !cl->cl_connected)
		rc = -ENOTCONN;
	if (rc)
		goto err_unlock;
	if (rl->rl_proc == RDMA_NOMSG)
		cl->cl_stats.cs_nomsg++;
	else if (rl->rl_read.cm_mr)
		cl->cl_stats.cs_read_chunks++;
	else
		cl->cl_stats.cs_inline++;
	if (rl->rl_write.cm_mr)
		cl->cl_stats.cs_write_chunks++;
	if (rl->rl_reply.cm_mr)
		cl->cl_stats.cs_reply_chunks++;
	rl->rl_done = done;
	rl->rl_done_arg = arg;
	rl->rl_deadline_ms = deadline;
	rc = clnt_post_call(cl, rl);
	if (rc)
		goto err_unlock;
	*out = rl;
	pthread_mutex_unlock(&cl->cl_lock);
	return 0;

err_unlock:
	pthread_mutex_unlock(&cl->cl_lock);
	clnt_unmap(rl);
	pthread_mutex_lock(&cl->cl_lock);
	cl->cl_outstanding--;
	cl->cl_rpc_busy--;
	clnt_req_release(cl, rl, CLNT_OWNER_RPC);
	pthread_cond_broadcast(&cl->cl_slot_cond);
	pthread_mutex_unlock(&cl->cl_lock);
	return rc;
}

static int clnt_rpc_status(const struct rpcrdma_rpc_msg *m)
{
	if (m->rm_reply_stat == RPC_MSG_DENIED)
		return m->rm_reject_stat == RPC_REJECT_AUTH_ERROR ? -EACCES : -EPROTO;
	switch (m->rm_accept_stat) {
	case RPC_ACCEPT_SUCCESS:
		return 0;
	case RPC_ACCEPT_PROG_UNAVAIL:
	case RPC_ACCEPT_PROG_MISMATCH:
		return -EPROTONOSUPPORT;
	case RPC_ACCEPT_PROC_UNAVAIL:
		return -EOPNOTSUPP;
	case RPC_ACCEPT_GARBAGE_ARGS:
		return -EBADMSG;
	default:
		return -EREMOTEIO;
	}
}

static int clnt_call_finish(struct rpcrdma_clnt *cl, struct clnt_req *rl, int rc);

/* Wait for @rl's outcome (a synchronous call), then finish it. */
int clnt_call_wait(struct rpcrdma_clnt *cl, struct clnt_req *rl, unsigned timeout_ms)
{
	struct timespec dl;
	uint32_t xid = rl->rl_xid;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}

	pthread_mutex_lock(&cl->cl_lock);
	while (rl->rl_state != RL_DONE) {
		if (rl->rl_state == RL_REBINDING) {
			/* The reconnecting thread owns it for now. */
			pthread_cond_wait(&rl->rl_cond, &cl->cl_lock);
			continue;
		}
		rc = pthread_cond_timedwait(&rl->rl_cond, &cl->cl_lock, &dl);
		if (rc != ETIMEDOUT || rl->rl_state == RL_DONE || rl->rl_state == RL_REBINDING)
			continue;
		cl->cl_stats.cs_timeouts++;
		if (rl->rl_state == RL_RESEND || rl->rl_state == RL_READY) {
			/* Not on any connection: nothing to fence. */
			if (rl->rl_state == RL_READY)
				clnt_ready_remove(cl, rl);
			clnt_complete(cl, rl, -ETIMEDOUT);
			continue;
		}
		/* Closing the connection fences every registration mode (the
		 * QP goes to error before this returns) and gives the credit
		 * back. */
		if (rl->rl_state == RL_PENDING)
			clnt_complete(cl, rl, -ETIMEDOUT);
		clnt_log(cl, "call xid 0x%08x timed out after %u ms: disconnecting",
			 xid, timeout_ms);
		clnt_disconnected(cl);
	}
	rc = rl->rl_status;
	pthread_mutex_unlock(&cl->cl_lock);
	/* A timeout closed the connection: asynchronous calls failed with it. */
	clnt_run_done(cl);
	return clnt_call_finish(cl, rl, rc);
}

/* The RPC side's end of a call whose outcome is @rc: release the caller's
 * memory, decode the RPC reply header, give the request up.  No lock. */
static int clnt_call_finish(struct rpcrdma_clnt *cl, struct clnt_req *rl, int rc)
{
	struct rpcrdma_clnt_call *ca = rl->rl_call;
	struct rpcrdma_rpc_msg msg;
	uint32_t xid = rl->rl_xid;

	/* The call's windows are invalidated (or out of reach) already;
	 * deregister its per-call memory before reporting: the Responder
	 * cannot touch the caller's memory any more, whatever happened. */
	clnt_unmap(rl);

	if (!rc) {
		if (rpcrdma_wire_decode_rpc(ca->ca_res, ca->ca_res_len, &msg) ||
		    msg.rm_dir != RPC_DIR_REPLY || msg.rm_xid != xid)
			rc = -EBADMSG;
		else
			rc = clnt_rpc_status(&msg);
		if (!rc)
			ca->ca_res_off = msg.rm_hdr_len;
	}

	pthread_mutex_lock(&cl->cl_lock);
	cl->cl_rpc_busy--;
	clnt_req_release(cl, rl, CLNT_OWNER_RPC);
	pthread_cond_broadcast(&cl->cl_slot_cond);
	pthread_mutex_unlock(&cl->cl_lock);
	return rc;
}

/* Outcomes a synchronous call tries again itself (same xid, after a
 * reconnect).  A call lost with its connection is resent by the transport
 * while it has retries left (RL_RESEND); -ECONNRESET means it has none. */
static bool clnt_retryable(int rc)
{
	return rc == -ENOTCONN || rc == -ETIMEDOUT;
}

int rpcrdma_clnt_call(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca)
{
	unsigned timeout = ca->ca_timeout_ms ? ca->ca_timeout_ms : cl->cl_cfg.cf_timeout_ms;
	unsigned attempt = 0;
	struct clnt_req *rl;
	uint32_t xid = 0;
	bool have_xid = false;
	int rc;

	for (;;) {
		rc = clnt_call_start_xid(cl, ca, &rl, have_xid ? &xid : NULL);
		if (!rc) {
			if (have_xid) {
				pthread_mutex_lock(&cl->cl_lock);
				cl->cl_stats.cs_retransmits++;
				pthread_mutex_unlock(&cl->cl_lock);
			}
			xid = rl->rl_xid;
			have_xid = true;
			rc = clnt_call_wait(cl, rl, timeout);
		}
		if (!clnt_retryable(rc) || attempt >= cl->cl_cfg.cf_retries)
			return rc;
		attempt++;
		rc = clnt_reconnect(cl);
		if (rc && attempt >= cl->cl_cfg.cf_retries)
			return rc;
	}
}

/* ---- asynchronous calls ---- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int rpcrdma_clnt_call_async(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
			    rpcrdma_clnt_done_fn done, void *arg, uint32_t *xid)
{
	unsigned timeout = ca->ca_timeout_ms ? ca->ca_timeout_ms : cl->cl_cfg.cf_timeout_ms;
	struct clnt_req *rl;
	int rc;

	if (!done)
		return -EINVAL;
	/* The callback is attached before the post (under the lock the
	 * completion side takes), so even a reply that beats the post's
	 * return goes to the callback. */
	rc = clnt_call_start_async(cl, ca, &rl, done, arg, now_ms() + timeout);
	if (rc)
		return rc;
	if (xid)
		*xid = rl->rl_xid;
	clnt_run_done(cl);
	return 0;
}

/* Finish every asynchronous call whose outcome is in.  No lock held. */
void clnt_run_done(struct rpcrdma_clnt *cl)
{
	struct clnt_req *rl, *next;

again:
	pthread_mutex_lock(&cl->cl_lock);
	rl = cl->cl_done;
	cl->cl_done = NULL;
	pthread_mutex_unlock(&cl->cl_lock);
	if (!rl)
		return;
	for (; rl; rl = next) {
		struct rpcrdma_clnt_call *ca = rl->rl_call;
		rpcrdma_clnt_done_fn done = rl->rl_done;
		void *arg = rl->rl_done_arg;
		int rc;

		next = rl->rl_next;
		rl->rl_next = NULL;
		rc = clnt_call_finish(cl, rl, rl->rl_status);
		done(ca, rc, arg);
	}
	/* Callbacks may have ended more calls (abort). */
	goto again;
}

/* A call waiting to be sent again (not in the xid table) with @xid.
 * Lock held. */
static struct clnt_req *clnt_off_wire_find(struct rpcrdma_clnt *cl, uint32_t xid)
{
	uint32_t i;

	for (i = 0; i < cl->cl_nreqs; i++) {
		struct clnt_req *rl = &cl->cl_reqs[i];

		if ((rl->rl_state == RL_RESEND || rl->rl_state == RL_READY ||
		     rl->rl_state == RL_REBINDING) && rl->rl_xid == xid)
			return rl;
	}
	return NULL;
}

int rpcrdma_clnt_abort(struct rpcrdma_clnt *cl, uint32_t xid)
{
	struct clnt_req *rl;
	int rc = 0;

	pthread_mutex_lock(&cl->cl_lock);
	rl = clnt_xid_find(cl, xid);
	if (!rl)
		rl = clnt_off_wire_find(cl, xid);
	if (rl && (rl->rl_state == RL_RESEND || rl->rl_state == RL_READY)) {
		/* Waiting to be sent again: the Responder holds nothing. */
		if (rl->rl_state == RL_READY)
			clnt_ready_remove(cl, rl);
		rl->rl_aborted = true;
		cl->cl_stats.cs_aborts++;
		clnt_complete(cl, rl, -ECANCELED);
	} else if (!rl || rl->rl_state != RL_PENDING) {
		/* Unknown, being marshalled again, or its outcome is already
		 * decided. */
		rc = rl && rl->rl_state == RL_REBINDING ? -EBUSY : -ENOENT;
	} else {
		/* The Responder may still act on the call: its xid and credit
		 * stay until a reply or the end of the connection; a late
		 * reply is dropped without touching the caller's memory. */
		rl->rl_aborted = true;
		cl->cl_stats.cs_aborts++;
		if (clnt_req_persistent(rl)) {
			/* Nothing but closing the connection fences a buffer
			 * registered for remote access. */
			clnt_complete(cl, rl, -ECANCELED);
			cl->cl_stats.cs_fence_disconnects++;
			clnt_log(cl, "call xid 0x%08x aborted with a buffer registered for "
				 "remote access: disconnecting", xid);
			clnt_disconnected(cl);
		} else {
			clnt_fence_complete(cl, rl, -ECANCELED);
		}
	}
	pthread_mutex_unlock(&cl->cl_lock);
	clnt_run_done(cl);
	return rc;
}

/* Time out asynchronous calls past their deadline (the completion thread
 * calls this periodically); like a synchronous timeout, it closes the
 * connection, which fences their memory in every registration mode. */
void clnt_check_deadlines(struct rpcrdma_clnt *cl)
{
	uint64_t now = now_ms();
	bool expired = false;
	uint32_t i;

	pthread_mutex_lock(&cl->cl_lock);
	for (i = 0; i < cl->cl_nreqs; i++) {
		struct clnt_req *rl = &cl->cl_reqs[i];

		if (!rl->rl_done || now < rl->rl_deadline_ms)
			continue;
		if (rl->rl_state == RL_RESEND || rl->rl_state == RL_READY) {
			/* Not on any connection: nothing to fence. */
			if (rl->rl_state == RL_READY)
				clnt_ready_remove(cl, rl);
			clnt_log(cl, "call xid 0x%08x timed out waiting to be sent again",
				 rl->rl_xid);
			clnt_complete(cl, rl, -ETIMEDOUT);
			cl->cl_stats.cs_timeouts++;
			continue;
		}
		if (rl->rl_state != RL_PENDING)
			continue;
		clnt_log(cl, "call xid 0x%08x timed out: disconnecting", rl->rl_xid);
		clnt_complete(cl, rl, -ETIMEDOUT);
		cl->cl_stats.cs_timeouts++;
		expired = true;
	}
	if (expired)
		clnt_disconnected(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	clnt_run_done(cl);
}

/* ---- completion side ---- */

static void clnt_repost(struct rpcrdma_clnt *cl, struct clnt_recv *rr)
{
	struct ibv_recv_wr *bad;
	int rc;

	if (!cl->cl_connected)
		return;
	rr->rr_wr.next = NULL;
	rc = rpcrdma_verbs_post_recv(cl->cl_qp, &rr->rr_wr, &bad);
	if (rc == 0) {
		cl->cl_recvs_posted++;
		return;
	}
	/* A Receive lost for good would starve the connection: replies
	 * would wait for it forever (RNR retry is unlimited).  Close the
	 * connection instead; pending calls fail and may be retried. */
	clnt_log(cl, "Receive repost failed: %s: disconnecting", strerror(-rc));
	clnt_disconnected(cl);
}

/* Work out the outcome of a decoded reply for @rl.  Lock held. */
static int clnt_reply_result(struct rpcrdma_clnt *cl, struct clnt_req *rl,
			     const uint8_t *buf)
{
	const struct rpcrdma_hdr *rh = &cl->cl_rhdr;
	struct rpcrdma_clnt_call *ca = rl->rl_call;

	if (rh->rh_proc == RDMA_ERROR) {
		cl->cl_stats.cs_rdma_errors++;
		clnt_log(cl, "xid 0x%08x: RDMA_ERROR %s", rl->rl_xid,
			 rh->rh_err == ERR_VERS ? "ERR_VERS" :
			 rh->rh_err == ERR_CHUNK ? "ERR_CHUNK" : "(unknown code)");
		return -EIO;
	}
	/* Never trust the wire: whatever the Responder claims to have
	 * written must fit what we offered. */
	if (rh->rh_nwrite > 1 || (rh->rh_nwrite && !rl->rl_write.cm_mr))
		return -EIO;
	if (rl->rl_write.cm_mr) {
		ca->ca_rddp_used = true;
		if (rh->rh_nwrite) {
			const struct rpcrdma_chunk *wc = &rh->rh_write[0];

			/* The echo must name the segment we offered. */
			if (wc->rc_nsegs > 1 || wc->rc_length > rl->rl_write.cm_len ||
			    (wc->rc_nsegs &&
			     rh->rh_segs[wc->rc_first].rs_handle != rl->rl_write.cm_rkey))
				return -EIO;
			ca->ca_rddp_len = (uint32_t)rh->rh_write[0].rc_length;
		}
	}
	if (rh->rh_proc == RDMA_MSG) {
		if (rh->rh_inline_len > ca->ca_res_cap)
			return -EMSGSIZE;
		memcpy(ca->ca_res, buf + rh->rh_hdr_len, rh->rh_inline_len);
		ca->ca_res_len = rh->rh_inline_len;
		return 0;
	}
	/* RDMA_NOMSG: the reply is in our Reply chunk. */
	if (!rh->rh_has_reply || !rl->rl_reply.cm_mr ||
	    rh->rh_reply.rc_length > rl->rl_reply.cm_len)
		return -EIO;
	ca->ca_res_len = (uint32_t)rh->rh_reply.rc_length;
	return 0;
}

/*
 * A reply for @rl arrived as a Send With Invalidate of @rkey (RFC 8797
 * section 5).  Only a window bound for this call may be named, and only
 * when we offered remote invalidation: that window is then no longer
 * bound.  Any other handle is a protocol error (counted, logged): the
 * call fails with -EIO and its own windows are invalidated locally as if
 * none had been.  Return: true when @rkey was one of @rl's windows.
 * Lock held.
 */
static bool clnt_remote_invalidated(struct rpcrdma_clnt *cl, struct clnt_req *rl,
				    uint32_t rkey)
{
	struct clnt_mapping *maps[CLNT_NMAPS] = { &rl->rl_read, &rl->rl_write, &rl->rl_reply };
	unsigned i;

	for (i = 0; cl->cl_rsi && i < CLNT_NMAPS; i++) {
		if (maps[i]->cm_mw && maps[i]->cm_bound && maps[i]->cm_rkey == rkey) {
			maps[i]->cm_bound = false;
			cl->cl_stats.cs_remote_invalidates++;
			return true;
		}
	}
	cl->cl_stats.cs_bad_invalidates++;
	clnt_log(cl, "xid 0x%08x: Send With Invalidate of 0x%08x, not a handle of this call%s",
		 rl->rl_xid, rkey, cl->cl_rsi ? "" : " (remote invalidation not offered)");
	return false;
}

static void clnt_recv_complete(struct rpcrdma_clnt *cl, struct clnt_recv *rr,
			       const struct ibv_wc *wc)
{
	struct rpcrdma_hdr *rh = &cl->cl_rhdr;
	struct rpcrdma_wire_err err;
	struct clnt_req *rl;
	uint32_t credits;
	bool inv_ok;
	int status;

	cl->cl_recvs_posted--;
	if (wc->status != IBV_WC_SUCCESS) {
		if (cl->cl_connected)
			clnt_disconnected(cl);
		return;
	}
	if ((wc->wc_flags & IBV_WC_WITH_INV) && wc->byte_len < 4) {
		cl->cl_stats.cs_bad_invalidates++;
		clnt_log(cl, "Send With Invalidate of 0x%08x in a reply naming no call",
			 wc->invalidated_rkey);
	}
	if (rpcrdma_wire_decode_reply(rr->rr_buf, wc->byte_len, &cl->cl_limits, rh, &err)) {
		cl->cl_stats.cs_bad_replies++;
		clnt_log(cl, "bad reply header (%s): %s", err.we_rule, err.we_detail);
		rl = wc->byte_len >= 4 ? clnt_xid_find(cl, load_be32(rr->rr_buf)) : NULL;
		/* It is that call's reply, if a bad one: the Responder is done
		 * with it. */
		if (rl) {
			clnt_wire_release(cl, rl);
			if (rl->rl_state == RL_PENDING)
				clnt_fence_complete(cl, rl, -EIO);
		}
		clnt_repost(cl, rr);
		return;
	}
	/* Credits: 0 counts as 1, more than we asked for as our maximum. */
	credits = rh->rh_credits;
	if (credits == 0)
		credits = 1;
	if (credits > cl->cl_max_credits)
		credits = cl->cl_max_credits;
	cl->cl_credits = credits;
	cl->cl_stats.cs_replies++;

	rl = clnt_xid_find(cl, rh->rh_xid);
	if (!rl && (wc->wc_flags & IBV_WC_WITH_INV)) {
		cl->cl_stats.cs_bad_invalidates++;
		clnt_log(cl, "Send With Invalidate of 0x%08x for unknown xid 0x%08x",
			 wc->invalidated_rkey, rh->rh_xid);
	}
	if (!rl) {
		cl->cl_stats.cs_unknown_xid++;
		if (cl->cl_cfg.cf_verbose)
			clnt_log(cl, "reply for unknown xid 0x%08x dropped", rh->rh_xid);
		clnt_repost(cl, rr);
		pthread_cond_broadcast(&cl->cl_slot_cond);
		return;
	}
	/* The Responder is done with the call: its credit comes back. */
	clnt_wire_release(cl, rl);
	inv_ok = !(wc->wc_flags & IBV_WC_WITH_INV) ||
		 clnt_remote_invalidated(cl, rl, wc->invalidated_rkey);
	if (rl->rl_state != RL_PENDING) {
		/* Aborted: the caller has been told and its memory may be in
		 * other use; the reply is dropped unread. */
		cl->cl_stats.cs_late_replies++;
		if (cl->cl_cfg.cf_verbose)
			clnt_log(cl, "late reply for aborted xid 0x%08x dropped", rh->rh_xid);
		clnt_repost(cl, rr);
		clnt_pump_ready(cl);
		return;
	}
	status = inv_ok ? clnt_reply_result(cl, rl, rr->rr_buf) : -EIO;
	/* Windows the Responder did not invalidate are invalidated here. */
	clnt_fence_complete(cl, rl, status);
	/* The Receive goes back before the lock is dropped, so before anyone
	 * waiting runs; a failed repost closes the connection, but this
	 * call's outcome is already in. */
	clnt_repost(cl, rr);
	/* A credit came back: calls waiting to be sent again go first. */
	clnt_pump_ready(cl);
}

static void clnt_send_complete(struct rpcrdma_clnt *cl, struct clnt_req *rl,
			       const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS && cl->cl_connected) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			clnt_log(cl, "Send xid 0x%08x failed: %s", rl->rl_xid,
				 ibv_wc_status_str(wc->status));
		clnt_disconnected(cl);
	}
	clnt_sq_complete(cl, rl);
}

/* Dispatch one work completion.  Lock held. */
void clnt_handle_wc(struct rpcrdma_clnt *cl, const struct ibv_wc *wc)
{
	struct rpcrdma_cqe *cqe = rpcrdma_cqe_of(wc);

	switch (cqe->ce_type) {
	case RPCRDMA_CQE_RECV:
		clnt_recv_complete(cl, rpcrdma_container_of(cqe, struct clnt_recv, rr_cqe), wc);
		break;
	case CLNT_CQE_LINV: {
		struct clnt_req *rl = rpcrdma_container_of(cqe, struct clnt_req, rl_inv_cqe);

		/* The last LOCAL_INV of the chain: the send queue completes
		 * in order, so the whole chain is done (or flushed). */
		if (wc->status == IBV_WC_SUCCESS) {
			clnt_windows_set(rl, false);
		} else if (cl->cl_connected) {
			if (wc->status != IBV_WC_WR_FLUSH_ERR)
				clnt_log(cl, "LOCAL_INV failed: %s: disconnecting",
					 ibv_wc_status_str(wc->status));
			/* The QP in error fences the windows. */
			clnt_disconnected(cl);
		}
		if (rl->rl_state == RL_FENCING)
			clnt_complete(cl, rl, rl->rl_status);
		clnt_req_release(cl, rl, CLNT_OWNER_INV);
		break;
	}
	case CLNT_CQE_QUIET:
		/* Unsignalled binds and LOCAL_INVs report only failures. */
		if (wc->status != IBV_WC_SUCCESS && cl->cl_connected) {
			if (wc->status != IBV_WC_WR_FLUSH_ERR)
				clnt_log(cl, "window bind/invalidate failed: %s: disconnecting",
					 ibv_wc_status_str(wc->status));
			clnt_disconnected(cl);
		}
		break;
	case RPCRDMA_CQE_SEND:
		clnt_send_complete(cl, rpcrdma_container_of(cqe, struct clnt_req, rl_cqe), wc);
		break;
	default:
		break;
	}
}

void clnt_poll(struct rpcrdma_clnt *cl)
{
	struct ibv_wc wc[16];
	int n, i;

	pthread_mutex_lock(&cl->cl_lock);
	while ((n = rpcrdma_verbs_poll(cl->cl_cq, 16, wc)) > 0)
		for (i = 0; i < n; i++)
			clnt_handle_wc(cl, &wc[i]);
	pthread_mutex_unlock(&cl->cl_lock);
	clnt_run_done(cl);
}
