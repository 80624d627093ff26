// SPDX-License-Identifier: MIT
/*
 * clnt_req.c - the request pool and each request's lifetime (its owners;
 * the credit it holds while the Responder may hold the call, RFC 8166
 * 3.3.1), the Send ring of mostly unsignalled Sends, and the xid table
 * in which replies find their call in constant time.
 */
#include <pthread.h>
#include <stdint.h>

#include "clnt/clnt_internal.h"

/* @owner lets go of @rl; it returns to the pool once every owner has.
 * Lock held. */
void clnt_req_release(struct rpcrdma_clnt *cl, struct clnt_req *rl, unsigned owner)
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
 * Put @rl's Send in the ring; signal every cl_sq_every-th, so at most
 * cl_sq_every - 1 requests whose calls are over wait for a later
 * completion to be released: the pool has that many beyond the credits,
 * so it never empties itself and a call ending frees a request for the
 * next.  Lock held.
 */
void clnt_sq_push(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	uint32_t every = cl->cl_sq_every;

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
void clnt_sq_pop(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	uint32_t every = cl->cl_sq_every;

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
void clnt_sq_complete(struct rpcrdma_clnt *cl, struct clnt_req *rl)
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
void clnt_wire_add(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	struct clnt_req **head = &cl->cl_xids[clnt_xid_slot(cl, rl->rl_xid)];

	rl->rl_hnext = *head;
	*head = rl;
	rl->rl_owners |= CLNT_OWNER_WIRE;
}

/* Take @rl out of the table (its chain is short: O(1)).  Lock held. */
void clnt_xid_unlink(struct rpcrdma_clnt *cl, struct clnt_req *rl)
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
void clnt_wire_release(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	clnt_xid_unlink(cl, rl);
	if (cl->cl_outstanding)
		cl->cl_outstanding--;
	clnt_req_release(cl, rl, CLNT_OWNER_WIRE);
	pthread_cond_broadcast(&cl->cl_slot_cond);
}

/* Record the outcome of a call whose memory is fenced, and wake its
 * caller (or queue its callback).  Lock held. */
void clnt_complete(struct rpcrdma_clnt *cl, struct clnt_req *rl, int status)
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
