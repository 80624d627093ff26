// SPDX-License-Identifier: MIT
/*
 * clnt_api.c - the synchronous and asynchronous call APIs: waiting,
 * timeouts, retries, abort, callbacks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "clnt/clnt_internal.h"

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

void clnt_deadline(struct timespec *dl, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, dl);
	dl->tv_sec += ms / 1000;
	dl->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (dl->tv_nsec >= 1000000000L) {
		dl->tv_sec++;
		dl->tv_nsec -= 1000000000L;
	}
}

/* Wait for @rl's outcome (a synchronous call), then finish it. */
int clnt_call_wait(struct rpcrdma_clnt *cl, struct clnt_req *rl, unsigned timeout_ms)
{
	unsigned tries;

	return clnt_call_wait_tries(cl, rl, timeout_ms, &tries);
}

int clnt_call_wait_tries(struct rpcrdma_clnt *cl, struct clnt_req *rl, unsigned timeout_ms,
			 unsigned *tries)
{
	struct timespec dl;
	uint32_t xid = rl->rl_xid;
	int rc;

	clnt_deadline(&dl, timeout_ms);

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
	*tries = rl->rl_tries; /* the request is given up below */
	pthread_mutex_unlock(&cl->cl_lock);
	/* A timeout closed the connection: asynchronous calls failed with it. */
	clnt_run_done(cl);
	return clnt_call_finish(cl, rl, rc);
}

/* The RPC side's end of a call whose outcome is @rc, but for giving the
 * request up: release the caller's memory, decode the RPC reply header.
 * Return: the call's final status.  No lock. */
static int clnt_call_outcome(struct clnt_req *rl, int rc)
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
	return rc;
}

/* The RPC side's end of a call whose outcome is @rc: clnt_call_outcome(),
 * then give the request up.  No lock. */
static int clnt_call_finish(struct rpcrdma_clnt *cl, struct clnt_req *rl, int rc)
{
	rc = clnt_call_outcome(rl, rc);
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
	unsigned tries = 0; /* per call: the transport's resends count too */
	struct clnt_req *rl;
	uint32_t xid = 0;
	bool have_xid = false;
	int rc;

	for (;;) {
		rc = clnt_call_start_xid(cl, ca, &rl, have_xid ? &xid : NULL, tries);
		if (!rc) {
			if (have_xid) {
				pthread_mutex_lock(&cl->cl_lock);
				cl->cl_stats.cs_retransmits++;
				pthread_mutex_unlock(&cl->cl_lock);
			}
			xid = rl->rl_xid;
			have_xid = true;
			rc = clnt_call_wait_tries(cl, rl, timeout, &tries);
		}
		if (!clnt_retryable(rc) || tries >= cl->cl_cfg.cf_retries)
			return rc;
		tries++;
		rc = clnt_reconnect(cl);
		if (rc && tries >= cl->cl_cfg.cf_retries)
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

/* The clients whose callbacks this thread is running now, innermost
 * first: clnt_run_done() of one client may run inside another's callback,
 * and that one's callbacks may start calls on the first. */
struct clnt_cb_frame {
	struct rpcrdma_clnt *cf_cl;
	struct clnt_cb_frame *cf_outer;
};

static __thread struct clnt_cb_frame *clnt_cb_frames;

/* This thread is inside a callback of @cl (at any depth): the
 * clnt_run_done() running it picks up the calls that end meanwhile. */
static bool clnt_in_callbacks_of(const struct rpcrdma_clnt *cl)
{
	const struct clnt_cb_frame *f;

	for (f = clnt_cb_frames; f; f = f->cf_outer)
		if (f->cf_cl == cl)
			return true;
	return false;
}

static int clnt_call_async_common(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
				  rpcrdma_clnt_done_fn done, void *arg, uint32_t *xid,
				  bool nowait)
{
	unsigned timeout = ca->ca_timeout_ms ? ca->ca_timeout_ms : cl->cl_cfg.cf_timeout_ms;
	struct clnt_req *rl;
	int rc;

	if (!done)
		return -EINVAL;
	/* The callback is attached before the post (under the lock the
	 * completion side takes), so even a reply that beats the post's
	 * return goes to the callback. */
	rc = clnt_call_start_async(cl, ca, &rl, done, arg, now_ms() + timeout, nowait);
	/* Copied before the callbacks run: they may end this call too. */
	if (!rc && xid)
		*xid = rl->rl_xid;
	/* From @cl's callbacks, the clnt_run_done() running them picks up
	 * what ended meanwhile (callbacks never nest) and the completion
	 * thread posts their batch once they return. */
	if (clnt_in_callbacks_of(cl))
		return rc;
	/* On -EAGAIN the credits this caller waits for may be held by Sends
	 * queued in its own batch: they go out now, or their replies never
	 * come. */
	if (rc == -EAGAIN)
		clnt_batch_flush_mine(cl);
	clnt_run_done(cl); /* calls ended meanwhile, or by a failed post */
	return rc;
}

int rpcrdma_clnt_call_async(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
			    rpcrdma_clnt_done_fn done, void *arg, uint32_t *xid)
{
	return clnt_call_async_common(cl, ca, done, arg, xid, false);
}

int rpcrdma_clnt_try_call_async(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
				rpcrdma_clnt_done_fn done, void *arg, uint32_t *xid)
{
	return clnt_call_async_common(cl, ca, done, arg, xid, true);
}

/* Callbacks run per chunk of this many finished calls. */
#define CLNT_DONE_CHUNK 32u

/*
 * Finish every asynchronous call whose outcome is in.  No lock held.  The
 * calls are taken a chunk at a time: each call's memory released and its
 * reply decoded (no lock), then the chunk's requests given up under one
 * lock (not one per call: the lock is the one callers take to start
 * calls), then their callbacks.
 */
void clnt_run_done(struct rpcrdma_clnt *cl)
{
	struct {
		struct rpcrdma_clnt_call *ca;
		rpcrdma_clnt_done_fn done;
		void *arg;
		int rc;
	} fin[CLNT_DONE_CHUNK];
	struct clnt_req *list, *rl, *next, *chunk[CLNT_DONE_CHUNK];
	struct clnt_cb_frame frame = { .cf_cl = cl };
	unsigned n, i;

	pthread_mutex_lock(&cl->cl_lock);
	while ((list = cl->cl_done)) {
		cl->cl_done = NULL;
		pthread_mutex_unlock(&cl->cl_lock);
		for (rl = list; rl;) {
			for (n = 0; rl && n < CLNT_DONE_CHUNK; rl = next, n++) {
				next = rl->rl_next;
				rl->rl_next = NULL;
				fin[n].ca = rl->rl_call;
				fin[n].done = rl->rl_done;
				fin[n].arg = rl->rl_done_arg;
				fin[n].rc = clnt_call_outcome(rl, rl->rl_status);
				chunk[n] = rl;
			}
			pthread_mutex_lock(&cl->cl_lock);
			for (i = 0; i < n; i++) {
				cl->cl_rpc_busy--;
				clnt_req_release(cl, chunk[i], CLNT_OWNER_RPC);
			}
			pthread_cond_broadcast(&cl->cl_slot_cond);
			pthread_mutex_unlock(&cl->cl_lock);
			frame.cf_outer = clnt_cb_frames;
			clnt_cb_frames = &frame;
			for (i = 0; i < n; i++)
				fin[i].done(fin[i].ca, fin[i].rc, fin[i].arg);
			clnt_cb_frames = frame.cf_outer;
		}
		/* Callbacks may have ended more calls (abort). */
		pthread_mutex_lock(&cl->cl_lock);
	}
	pthread_mutex_unlock(&cl->cl_lock);
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
	} else if (rl && rl->rl_state == RL_REBINDING) {
		/* The reconnecting thread is marshalling it again, without
		 * the lock: it completes it with -ECANCELED instead of
		 * sending it (clnt_resend_finish).  Off the wire, so the
		 * Responder holds nothing of it either. */
		if (!rl->rl_aborted)
			cl->cl_stats.cs_aborts++;
		rl->rl_aborted = true;
	} else if (!rl || rl->rl_state != RL_PENDING) {
		/* Unknown, or its outcome is already decided. */
		rc = -ENOENT;
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
	/* From one of @cl's callbacks, the clnt_run_done() running it
	 * reports the aborted call after it returns (no nesting). */
	if (!clnt_in_callbacks_of(cl))
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
