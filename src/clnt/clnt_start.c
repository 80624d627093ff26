// SPDX-License-Identifier: MIT
/*
 * clnt_start.c - starting a call: a request and a credit, marshalling,
 * then one post of its window binds and its Send.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "clnt/clnt_internal.h"

/*
 * Take a request and a credit, marshal and post the call.  On success
 * *@out is pending (or already done, when the Reply beat us here).
 */
int clnt_call_start(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
		    struct clnt_req **out)
{
	return clnt_call_start_xid(cl, ca, out, NULL, 0);
}

static int clnt_call_start_common(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
				  struct clnt_req **out, const uint32_t *xid, unsigned tries,
				  rpcrdma_clnt_done_fn done, void *arg, uint64_t deadline,
				  bool nowait);

int clnt_call_start_xid(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
			struct clnt_req **out, const uint32_t *xid, unsigned tries)
{
	return clnt_call_start_common(cl, ca, out, xid, tries, NULL, NULL, 0, false);
}

int clnt_call_start_async(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
			  struct clnt_req **out, rpcrdma_clnt_done_fn done,
			  void *arg, uint64_t deadline, bool nowait)
{
	return clnt_call_start_common(cl, ca, out, NULL, 0, done, arg, deadline, nowait);
}

/* The calling thread holds @cl's batch open.  Lock held. */
static bool clnt_batch_mine(const struct rpcrdma_clnt *cl)
{
	return cl->cl_batch_depth && pthread_equal(cl->cl_batch_owner, pthread_self());
}

void clnt_batch_unsignal(struct rpcrdma_clnt *cl, struct ibv_send_wr *wr)
{
	/* No completion comes for a Send never posted: a signalled one
	 * counted as awaited would make rpcrdma_clnt_destroy() wait out its
	 * bound for it. */
	for (; wr; wr = wr->next) {
		struct clnt_req *rl = rpcrdma_container_of(wr, struct clnt_req, rl_wr);

		if (rl->rl_sq_signaled && cl->cl_sq_signaled)
			cl->cl_sq_signaled--;
		rl->rl_sq_signaled = false;
	}
}

void clnt_batch_flush(struct rpcrdma_clnt *cl)
{
	struct ibv_send_wr *chain = cl->cl_batch_head, *bad;
	int rc;

	if (!chain)
		return;
	cl->cl_batch_head = cl->cl_batch_tail = NULL;
	bad = chain; /* a failure that does not say where: none went out */
	rc = rpcrdma_verbs_post_send(cl->cl_qp, chain, &bad);
	/* the capture has the Sends that went out, those before @bad */
	for (; cl->cl_capture && chain && (!rc || chain != bad); chain = chain->next)
		clnt_capture_send(cl, chain);
	if (!rc)
		return;
	/* The Sends from @bad on are not on the queue; their requests are
	 * the last in the Send ring, released when the connection is
	 * closed, and their calls end as calls lost with it. */
	clnt_batch_unsignal(cl, bad);
	clnt_log(cl, "posting a batch of Sends failed: %s: disconnecting", strerror(-rc));
	clnt_disconnected(cl);
}

void clnt_batch_flush_mine(struct rpcrdma_clnt *cl)
{
	pthread_mutex_lock(&cl->cl_lock);
	if (clnt_batch_mine(cl))
		clnt_batch_flush(cl);
	pthread_mutex_unlock(&cl->cl_lock);
}

void rpcrdma_clnt_batch_begin(struct rpcrdma_clnt *cl)
{
	pthread_mutex_lock(&cl->cl_lock);
	if (!cl->cl_batch_depth) {
		cl->cl_batch_owner = pthread_self();
		cl->cl_batch_depth = 1;
	} else if (clnt_batch_mine(cl)) {
		cl->cl_batch_depth++;
	}
	pthread_mutex_unlock(&cl->cl_lock);
}

void rpcrdma_clnt_batch_end(struct rpcrdma_clnt *cl)
{
	pthread_mutex_lock(&cl->cl_lock);
	if (clnt_batch_mine(cl) && !--cl->cl_batch_depth)
		clnt_batch_flush(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	/* A failed post ended calls: their callbacks. */
	clnt_run_done(cl);
}

/*
 * Wait on cl_slot_cond (until @dl, when not NULL) without the batch: a
 * thread that holds it open gives it up for the wait, so that the calls
 * the completion thread's callbacks start meanwhile are queued and posted
 * together rather than one post each; it takes it back after the wait
 * unless another thread has opened one.  The caller has posted what the
 * batch queued (or has no connection to post on).  Return: as
 * pthread_cond_wait() / pthread_cond_timedwait().  Lock held.
 */
static int clnt_batch_wait(struct rpcrdma_clnt *cl, const struct timespec *dl)
{
	unsigned depth = 0;
	int rc;

	if (clnt_batch_mine(cl)) {
		depth = cl->cl_batch_depth;
		cl->cl_batch_depth = 0;
	}
	rc = dl ? pthread_cond_timedwait(&cl->cl_slot_cond, &cl->cl_lock, dl) :
		  pthread_cond_wait(&cl->cl_slot_cond, &cl->cl_lock);
	if (depth && !cl->cl_batch_depth) {
		cl->cl_batch_owner = pthread_self();
		cl->cl_batch_depth = depth;
	}
	return rc;
}

/*
 * Post marshalled @rl (its credit taken): into the xid table, the Send
 * ring, then one post of its window binds and its Send; or, with
 * @may_queue (an asynchronous call of the thread holding the batch open,
 * no window to bind), only queue its Send behind the batch's others.
 * Sends a batch queued go out first: the Send ring is in posting order,
 * and a signalled Send's completion releases every Send before it.
 * Return: 0 (now RL_PENDING), or the post's error with everything undone
 * (RL_PREPARED, registrations kept); -ENOTCONN when posting the queued
 * Sends first closed the connection.  Lock held.
 */
static int clnt_post_call_common(struct rpcrdma_clnt *cl, struct clnt_req *rl, bool may_queue)
{
	struct ibv_send_wr *bad;
	bool queue = may_queue && !rl->rl_nbind && clnt_batch_mine(cl);
	uint32_t i;
	int rc;

	if (!queue && cl->cl_batch_head) {
		clnt_batch_flush(cl);
		if (!cl->cl_connected)
			return -ENOTCONN;
	}
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
	if (queue) { /* recorded by the capture when the batch is posted */
		if (cl->cl_batch_tail)
			cl->cl_batch_tail->next = &rl->rl_wr;
		else
			cl->cl_batch_head = &rl->rl_wr;
		cl->cl_batch_tail = &rl->rl_wr;
		clnt_windows_set(rl, true); /* (none: a call with windows is not queued) */
		return 0;
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
	clnt_capture_send(cl, &rl->rl_wr);
	/* A bind names its window by the window's current key (ibv_mw.rkey);
	 * from now on that is the key we just bound. */
	for (i = 0; i < rl->rl_nbind; i++)
		rl->rl_bind_wr[i].bind_mw.mw->rkey = rl->rl_bind_wr[i].bind_mw.rkey;
	clnt_windows_set(rl, true);
	return 0;
}

int clnt_post_call(struct rpcrdma_clnt *cl, struct clnt_req *rl)
{
	return clnt_post_call_common(cl, rl, false);
}

/*
 * A call that may not wait found the connection gone: with a connect
 * worker running (and no stop), that is a reconnect to come, -EAGAIN,
 * and the worker is asked for it (it otherwise reconnects only for calls
 * that wait or are to be resent); else -ENOTCONN.  Lock held.
 */
static int clnt_nowait_unconnected(struct rpcrdma_clnt *cl)
{
	if (!cl->cl_worker_started || cl->cl_stopping)
		return -ENOTCONN;
	cl->cl_conn_wanted = true;
	pthread_cond_broadcast(&cl->cl_work_cond);
	return -EAGAIN;
}

static int clnt_call_start_common(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
				  struct clnt_req **out, const uint32_t *xid, unsigned tries,
				  rpcrdma_clnt_done_fn done, void *arg, uint64_t deadline,
				  bool nowait)
{
	struct clnt_req *rl;
	bool waited = false, have_dl = false, timed_out = false;
	struct timespec dl;
	int rc;

	if (!clnt_call_valid(ca))
		return -EINVAL;
	ca->ca_res_off = ca->ca_res_len = 0;
	ca->ca_rddp_used = false;
	ca->ca_rddp_len = 0;

	pthread_mutex_lock(&cl->cl_lock);
	for (;;) {
		/* Calls to resend go first (cl_ready). */
		while (cl->cl_connected && (!cl->cl_free || cl->cl_ready ||
					    cl->cl_outstanding >= cl->cl_credits)) {
			if (nowait) {
				pthread_mutex_unlock(&cl->cl_lock);
				return -EAGAIN;
			}
			/* Never wait with Sends of our batch unposted: the
			 * credits they hold come back only with their replies. */
			clnt_batch_flush(cl);
			if (!cl->cl_connected)
				break;
			if (!waited)
				cl->cl_stats.cs_credit_waits++;
			waited = true;
			clnt_batch_wait(cl, NULL);
		}
		if (cl->cl_connected)
			break;
		/* With retries the connect worker reconnects: a new call
		 * waits for it, up to its timeout, as an RPC waits for its
		 * transport in the kernel; otherwise it fails at once. */
		if (!cl->cl_worker_started || cl->cl_stopping || timed_out) {
			pthread_mutex_unlock(&cl->cl_lock);
			return -ENOTCONN;
		}
		if (nowait) {
			rc = clnt_nowait_unconnected(cl);
			pthread_mutex_unlock(&cl->cl_lock);
			return rc;
		}
		if (!have_dl) {
			clnt_deadline(&dl, ca->ca_timeout_ms ? ca->ca_timeout_ms :
					   cl->cl_cfg.cf_timeout_ms);
			have_dl = true;
		}
		cl->cl_conn_waiters++;
		pthread_cond_broadcast(&cl->cl_work_cond);
		timed_out = clnt_batch_wait(cl, &dl) == ETIMEDOUT;
		cl->cl_conn_waiters--;
	}
	rl = cl->cl_free;
	cl->cl_free = rl->rl_next;
	rl->rl_next = NULL;
	cl->cl_reqs_out++;
	cl->cl_outstanding++; /* the credit is ours from here */
	rl->rl_owners = CLNT_OWNER_RPC;
	rl->rl_state = RL_PREPARED;
	rl->rl_status = 0;
	rl->rl_tries = tries;
	rl->rl_call = ca;
	rl->rl_done = NULL;
	rl->rl_xid = xid ? *xid : cl->cl_next_xid++;
	cl->cl_rpc_busy++;
	cl->cl_stats.cs_calls++;
	pthread_mutex_unlock(&cl->cl_lock);

	rc = clnt_marshal(cl, rl);

	pthread_mutex_lock(&cl->cl_lock);
	if (!rc && !cl->cl_connected)
		rc = nowait ? clnt_nowait_unconnected(cl) : -ENOTCONN;
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
	rc = clnt_post_call_common(cl, rl, done != NULL);
	if (rc == -ENOTCONN && nowait)
		rc = clnt_nowait_unconnected(cl);
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
