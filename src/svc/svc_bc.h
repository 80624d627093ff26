/* SPDX-License-Identifier: MIT */
/*
 * svc_bc.h - private to src/svc: the server's backchannel, calls from the
 * server to the client on a connection the client opened: RDMA's (RFC
 * 8167, described below) or TCP's (svc_tcp.c: each call copied into a
 * call context of the connection by svc_bc_take() and written as a
 * record; no credits, no Receives, no Send completion to wait for).  The
 * slots, xids, reply matching and deadlines here serve both; a transport
 * class's xc_bc_send and xc_bc_each (svc_xprt.h) are its part.
 *
 * Threading: rpcrdma_svc_bc_call() may run on any thread.  It copies the
 * call into a free slot of the connection's backchannel state and queues
 * it under bc_lock, then wakes the thread that owns the connection with
 * svc_conn_kick(); that thread (svc_bc_poll()) posts the Sends, receives
 * the replies (through the ordinary receive path: svc_rpc_dispatch()
 * hands every RPC REPLY to svc_bc_reply()), runs the timeouts and the
 * completion callbacks.  Slot states change under bc_lock; callbacks run
 * without it.
 *
 * Resources (RFC 8167 4.2.2): RPCRDMA_SVC_BC_SLOTS slots per connection,
 * each with a registered send buffer from the device's pool, and as many
 * extra Receives posted before the first call is sent, so every reply has
 * a Receive of its own beyond the forward credit grant.  Nothing is taken
 * before the first backchannel call of a connection.
 *
 * A slot has two owners (as a client's request, RFC 8166 usage in
 * xprtrdma's design): the Send, until its completion, and the caller,
 * until it was told the outcome (reply, timeout, connection loss).  It is
 * free again only when both have let go, so a reply that overtakes its
 * Send completion never frees a buffer the device still reads.
 *
 * Owner prefixes: bc_ backchannel state, bq_ backchannel call slot.
 */
#ifndef RPCRDMA_SVC_BC_H
#define RPCRDMA_SVC_BC_H

#include "svc/svc_internal.h"

#define SVC_BC_SLOTS RPCRDMA_SVC_BC_SLOTS
/* Receives posted for backchannel replies: one per slot (RFC 8167 4.2.2). */
#define SVC_BC_RECVS SVC_BC_SLOTS
/* Send-queue slots reserved for backchannel Sends (one per slot). */
#define SVC_BC_SQ SVC_BC_SLOTS

enum svc_bc_slot_state {
	BQ_FREE = 0,
	BQ_QUEUED,  /* copied in, waiting for the owner thread and a credit */
	BQ_SENT,    /* Send posted: waiting for the reply */
	BQ_ENDED,   /* caller told; waiting for the Send completion */
};

/** One backchannel call. */
struct svc_bc_call {
	struct rpcrdma_cqe bq_cqe;     /* its Send (RPCRDMA_CQE_BC_SEND) */
	struct rpcrdma_svc_bc *bq_bc;
	enum svc_bc_slot_state bq_state;
	bool bq_send_posted;           /* the Send has not completed yet */
	uint32_t bq_xid;
	uint64_t bq_deadline_ms;       /* CLOCK_MONOTONIC */
	rpcrdma_svc_bc_done_fn bq_done;
	void *bq_done_arg;
	uint8_t *bq_msg;               /* the RPC call (heap copy), bq_len bytes */
	uint32_t bq_len;
	struct svc_bc_call *bq_next;   /* bc_qhead FIFO */
	struct svc_buf bq_buf;         /* registered: transport header + call */
	struct ibv_send_wr bq_wr;
	struct ibv_sge bq_sge;
};

/** A connection's backchannel state; also the public handle. */
struct rpcrdma_svc_bc {
	pthread_mutex_t bc_lock;
	unsigned bc_refs;              /* handles, plus one while bc_conn is set */
	struct rpcrdma_svc *bc_svc;
	struct svc_group *bc_grp;      /* the transport thread owning bc_conn */
	struct svc_conn *bc_conn;      /* RDMA: NULL once the connection is freed */
	struct svc_tconn *bc_tconn;    /* TCP: NULL once the connection is freed */
	/* the connection's transport: its xc_bc_send puts queued calls on
	 * the wire (owner thread) */
	const struct svc_xprt_class *bc_xprt;
	bool bc_closed;                /* closing: no new calls */
	uint32_t bc_conn_id;           /* the connection's sx_id_num (fixed) */
	atomic_bool bc_kicked;         /* queued work for the owner thread */
	uint32_t bc_xid_next;
	uint32_t bc_max_msg;           /* largest RPC call that fits inline */
	struct svc_bc_call *bc_qhead, *bc_qtail; /* BQ_QUEUED, in order */

	/* owner thread only */
	bool bc_ready;                 /* buffers taken, Receives posted */
	bool bc_failed;                /* no registered memory: calls fail */
	uint32_t bc_credits;           /* the client's latest backchannel grant */
	uint32_t bc_in_flight;         /* BQ_SENT calls */
	uint32_t bc_sends;             /* Sends posted, not yet completed */
	struct svc_recv *bc_recvs;     /* SVC_BC_RECVS, owned by the connection's path */
	uint32_t bc_nrecvs;            /* with a buffer */
	struct svc_bc_call bc_calls[SVC_BC_SLOTS];
};

/* ---- hooks called from the connection code (each one line there) ---- */

/*
 * svc_bc_take - owner thread: the next queued call the client's credit
 * allows becomes sent (BQ_SENT, counted in bc_calls): its RPC call
 * message is copied to @dst (@cap bytes of room).  Return: its length;
 * 0 when nothing may go now.  For a transport that copies the call into
 * its own buffer (TCP): the slot has no Send of its own to wait for.
 */
uint32_t svc_bc_take(struct rpcrdma_svc_bc *bc, uint8_t *dst, uint32_t cap);
/* svc_bc_deadline - the earliest deadline (CLOCK_MONOTONIC ms) of @bc's
 * pending calls; UINT64_MAX for none. */
uint64_t svc_bc_deadline(struct rpcrdma_svc_bc *bc);
/* svc_bc_rdma_send, svc_bc_rdma_each - svc_rdma_class's xc_bc_send and
 * xc_bc_each (svc_xprt.h). */
void svc_bc_rdma_send(struct rpcrdma_svc_bc *bc);
void svc_bc_rdma_each(struct svc_group *grp, void (*fn)(struct rpcrdma_svc_bc *bc, void *arg),
		      void *arg);
/* svc_bc_detach - a TCP connection closes (@gone false: its calls end
 * with -ENOTCONN, new ones are refused) or is freed (@gone true: its
 * handle field lets go of the state as well). */
void svc_bc_detach(struct rpcrdma_svc_bc *bc, bool gone);

/* svc_conn_kick - wake the transport thread (group) that owns @conn to
 * serve its queued backchannel work (any thread). */
void svc_conn_kick(struct svc_conn *conn);
/* svc_bc_poll - @grp's thread: serve every connection of @grp kicked
 * since the last poll (post queued calls the credit allows). */
void svc_bc_poll(struct svc_group *grp);
/* svc_bc_expire - @grp's thread: end calls of its connections whose
 * deadline is <= @now_ms with -ETIMEDOUT (their credit is given back). */
void svc_bc_expire(struct svc_group *grp, uint64_t now_ms);
/* svc_bc_run - @grp's thread, once per run-loop turn: svc_bc_poll(), and
 * svc_bc_expire() at the current time while any call is pending. */
void svc_bc_run(struct svc_group *grp);
/* svc_bc_timeout - the epoll timeout (ms, -1 for none) @grp's run loop
 * may sleep, given @tmo it would otherwise use, so deadlines are noticed. */
int svc_bc_timeout(struct svc_group *grp, int tmo);
/* svc_bc_reply - an RPC REPLY arrived in @cc (decode result @rc of its
 * header): hand it to its caller or drop it (counted); @cc goes back. */
void svc_bc_reply(struct svc_call *cc, int rc);
/* svc_bc_rdma_error - @len bytes at @buf, not a valid call header: when it
 * is an RDMA_ERROR naming a backchannel call we sent (the client as its
 * Responder refused it, RFC 8166 4.5), that call ends with -EREMOTEIO.
 * Return: true when it was (the message is consumed). */
bool svc_bc_rdma_error(struct svc_conn *conn, const uint8_t *buf, uint32_t len);
/* svc_bc_send_complete - completion of a backchannel Send. */
void svc_bc_send_complete(struct svc_conn *conn, struct rpcrdma_cqe *cqe,
			  const struct ibv_wc *wc);
/* svc_bc_conn_closing - @conn is going down: every call not yet ended
 * ends with -ENOTCONN; new calls are refused. */
void svc_bc_conn_closing(struct svc_conn *conn);
/* svc_bc_busy - backchannel Sends of @conn not completed yet. */
bool svc_bc_busy(const struct svc_conn *conn);
/* svc_bc_conn_gone - @conn is being freed (nothing posted any more):
 * give the registered buffers back and let handles see -ENOTCONN. */
void svc_bc_conn_gone(struct svc_conn *conn);

#endif /* RPCRDMA_SVC_BC_H */
