// SPDX-License-Identifier: MIT
/*
 * clnt_resend.c - calls lost with their connection: kept, and sent again
 * with their xids on the next connection (cf_retries), oldest first as
 * the new grant allows (RFC 8166 3.3.1), before new calls.
 */
#include <pthread.h>
#include <stdint.h>

#include "clnt/clnt_internal.h"

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

/* Take @rl off the ready FIFO (it is there).  Lock held. */
void clnt_ready_remove(struct rpcrdma_clnt *cl, struct clnt_req *rl)
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

bool clnt_reconnect_wanted(const struct rpcrdma_clnt *cl)
{
	return !cl->cl_connected && !cl->cl_reconnecting &&
	       (cl->cl_conn_waiters || cl->cl_conn_wanted || clnt_resend_waiting(cl));
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
		if (rl->rl_aborted) {
			/* aborted meanwhile (rpcrdma_clnt_abort): not sent */
			clnt_complete(cl, rl, -ECANCELED);
		} else if (!mrc) {
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
