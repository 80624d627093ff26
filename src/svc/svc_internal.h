/* SPDX-License-Identifier: MIT */
/*
 * svc_internal.h - private to src/svc: the Responder's transport.
 *
 * Threading: one run-loop thread owns every connection and all of its
 * state (pools, queues, posting).  Worker threads only run dispatch
 * functions on call contexts handed to them, and hand them back through
 * the done queue; a call context belongs to exactly one thread at a time.
 *
 * Call contexts come in two pools per connection.  Every call takes a
 * small one (inline-sized buffers, sx_ncalls of them, by default two per
 * credit); a call that has Read chunks, or whose Write and Reply chunks
 * offer more room than a small reply buffer or need more work requests
 * than a small context may post, also takes a large one
 * (buffers for the largest payload, sx_nlarge of them) and uses its
 * buffers instead.  An empty pool makes the message wait: for a small
 * context holding only its Receive, for a large one holding its small
 * context and Receive.
 *
 * Owner prefixes: sv_ server, sx_ connection, rc_ receive context,
 * cc_ call context, lg_ large call context, wq_ work queue, sp_ program
 * table entry.
 */
#ifndef RPCRDMA_SVC_INTERNAL_H
#define RPCRDMA_SVC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <rpcrdma/svc.h>
#include <rpcrdma/wire.h>

#include "rw/rw.h"
#include "verbs/verbs.h"

#define SVC_MAX_PROGRAMS 8
/* Send-queue work requests one call context may post at once: with a
 * large context attached, and with only its small one (RDMA Writes into
 * the first Write chunk and the Reply chunk, one per segment, and the Send). */
#define SVC_CTX_MAX_WR 64u
#define SVC_SMALL_MAX_WR 8u
/* Room for the reply's transport header (Write list echo included). */
#define SVC_HDR_BUF 8192u
/* Room for RPC and NFS headers around a maximal payload. */
#define SVC_PAYLOAD_SLACK 65536u
/* RPC accepted-reply header: xid, REPLY, MSG_ACCEPTED, verf(0,0), stat. */
#define SVC_RPC_REPLY_HDR 24u

struct svc_conn;

/** A receive buffer; rc_buf is inside the connection's registered slab. */
struct svc_recv {
	struct rpcrdma_cqe rc_cqe;
	struct svc_conn *rc_conn;
	uint8_t *rc_buf;
	uint32_t rc_len;         /* bytes received */
	struct svc_recv *rc_next; /* free / waiting list link */
	struct ibv_sge rc_sge;
	struct ibv_recv_wr rc_wr;
};

enum svc_call_state {
	CC_FREE = 0,
	CC_WAITING,  /* waiting for a large call context */
	CC_READING,  /* RDMA Reads of Read chunks outstanding */
	CC_WORKING,  /* in the work queue or a worker */
	CC_SENDING,  /* reply posted, waiting for the Send completion */
};

/** A large call context: call and reply buffers for the largest payload. */
struct svc_large {
	uint8_t *lg_call;               /* registered, sx_large_cap bytes */
	uint8_t *lg_reply;              /* registered, sx_large_cap bytes */
	struct svc_large *lg_next;      /* free list */
};

/** A (small) call context: everything one call needs from receive to Send. */
struct svc_call {
	struct rpcrdma_cqe cc_cqe;      /* Read-chunk and Send completions */
	struct svc_conn *cc_conn;
	enum svc_call_state cc_state;
	struct svc_call *cc_next;       /* free list / work and done queues */

	struct rpcrdma_hdr cc_hdr;      /* the call's transport header */
	uint8_t *cc_call;               /* rebuilt RPC call (registered) */
	uint32_t cc_call_cap;
	uint32_t cc_call_len;
	uint8_t *cc_reply;              /* RPC reply stream (registered) */
	uint32_t cc_reply_cap;
	uint32_t cc_reply_len;
	struct rpcrdma_hdr cc_rhdr;     /* the reply's transport header */
	uint8_t *cc_hdrbuf;             /* reply transport header (registered) */
	uint8_t *cc_small_call;         /* own buffers, used when cc_large is NULL */
	uint8_t *cc_small_reply;
	struct svc_large *cc_large;     /* attached large context, or NULL */
	struct svc_recv *cc_wait_rc;    /* CC_WAITING: the message to rebuild */

	uint32_t cc_reads_pending;      /* Read chunks not yet completed */
	bool cc_failed;                 /* a Read failed: drop the call */
	int cc_status;                  /* dispatch result (accept_stat) */
	rpcrdma_svc_dispatch_fn cc_fn;
	void *cc_fn_arg;
	struct rpcrdma_svc_req cc_req;

	struct ibv_send_wr cc_wr[SVC_CTX_MAX_WR];
	struct ibv_sge cc_sge[SVC_CTX_MAX_WR * RPCRDMA_RW_MAX_SGE];
	uint32_t cc_written[RPCRDMA_WIRE_MAX_SEGS];
};

/** One connection: QP, CQ, registered slab and its pools. */
struct svc_conn {
	struct rpcrdma_svc *sx_svc;
	struct rdma_cm_id *sx_id;
	struct ibv_pd *sx_pd;
	struct ibv_comp_channel *sx_channel;
	struct ibv_cq *sx_cq;
	struct ibv_mr *sx_mr;
	uint8_t *sx_slab;
	size_t sx_slab_len;
	uint32_t sx_id_num;          /* connection number, for logs */
	struct svc_conn *sx_next;    /* server's connection list */

	bool sx_established;
	bool sx_closing;             /* disconnect seen: drain, then destroy */
	bool sx_reap;                /* drained: the run loop frees it */
	unsigned sx_unacked_events;  /* CQ events not yet acked */

	uint32_t sx_credits;         /* granted in every reply */
	uint32_t sx_inline_recv;     /* our receive buffer size */
	uint32_t sx_inline_send;     /* most bytes the peer receives inline */
	bool sx_peer_rsi;            /* peer accepts Send With Invalidate */

	struct svc_recv *sx_recvs;   /* array */
	uint32_t sx_nrecvs;
	uint32_t sx_recvs_posted;
	struct svc_recv *sx_wait_head, *sx_wait_tail; /* waiting for a call context */
	struct svc_recv *sx_refill_head, *sx_refill_tail; /* to repost, in one batch */
	uint32_t sx_refill_count;

	struct svc_call *sx_calls;   /* array of small call contexts */
	uint32_t sx_ncalls;
	struct svc_call *sx_call_free;
	uint32_t sx_calls_out;       /* small call contexts not on the free list */
	struct svc_large *sx_larges; /* array of large call contexts */
	uint32_t sx_nlarge;
	uint32_t sx_large_cap;       /* bytes of each large buffer */
	struct svc_large *sx_large_free;
	uint32_t sx_large_out;       /* large call contexts not on the free list */
	struct svc_call *sx_lwait_head, *sx_lwait_tail; /* CC_WAITING contexts */
	uint32_t sx_cqe_ids;
};

struct svc_program {
	uint32_t sp_prog;
	uint32_t sp_vers;
	rpcrdma_svc_dispatch_fn sp_fn;
	void *sp_arg;
};

/** Counters; updated with relaxed atomics from any thread. */
struct svc_counters {
	_Atomic uint64_t connections, calls, replies_inline, replies_write_chunk,
		replies_reply_chunk, rdma_errors_sent, drops, read_chunks,
		rdma_read_bytes, rdma_write_bytes, send_bytes, recv_bytes,
		ctx_waits, ctx_in_use, ctx_high, large_waits, large_in_use,
		large_high, recv_in_use, conns_open,
		send_invalidates, recv_refills, post_errors, mrs_open, mr_bytes;
};

struct rpcrdma_svc {
	struct rpcrdma_svc_config sv_cfg;
	struct rdma_event_channel *sv_cm_channel;
	struct rdma_cm_id *sv_listen_id;
	int sv_epoll;
	int sv_wake_fd;          /* eventfd: stop, stats, done queue */
	atomic_bool sv_stop;
	int sv_stop_cause;       /* rpcrdma_svc_run()'s return after a stop:
				  * 0, or -ENODEV (listener's device removed) */
	atomic_bool sv_dump;
	struct svc_program sv_progs[SVC_MAX_PROGRAMS];
	unsigned sv_nprogs;
	struct svc_conn *sv_conns;
	uint32_t sv_conn_ids;

	/* work queue (run loop -> workers) and done queue (workers -> loop) */
	pthread_mutex_t sv_wq_lock;
	pthread_cond_t sv_wq_cond;
	struct svc_call *sv_wq_head, *sv_wq_tail;
	struct svc_call *sv_done_head, *sv_done_tail;
	bool sv_wq_quit;
	pthread_t *sv_workers;
	unsigned sv_nworkers;

	struct rpcrdma_wire_limits sv_limits;
	struct svc_counters sv_ct;
};

#define SVC_INC(svc, f, n) atomic_fetch_add_explicit(&(svc)->sv_ct.f, (n), memory_order_relaxed)
#define SVC_DEC(svc, f, n) atomic_fetch_sub_explicit(&(svc)->sv_ct.f, (n), memory_order_relaxed)

void svc_log(struct rpcrdma_svc *svc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* svc.c */
int svc_init(struct rpcrdma_svc *svc, const struct rpcrdma_svc_config *cfg);
void svc_take_done(struct rpcrdma_svc *svc);

/* svc_conn.c */
int svc_conn_alloc_pools(struct svc_conn *conn);
int svc_conn_post_all_recvs(struct svc_conn *conn);
int svc_conn_accept(struct rpcrdma_svc *svc, struct rdma_cm_event *ev);
void svc_conn_disconnected(struct svc_conn *conn);
/*
 * svc_conn_cm_event - act on CM event @type for @conn, or for the listener
 * when @conn is NULL (the run loop's rdma_cm handler; unit tests call it).
 * ESTABLISHED marks the connection established.  DISCONNECTED,
 * DEVICE_REMOVAL, CONNECT_ERROR, UNREACHABLE, REJECTED: svc_conn_disconnected()
 * (QP to error, waiting messages dropped); the connection is freed by the
 * run loop only when every posted Receive has flushed and every call
 * context has come back (RDMA Reads and Sends complete or flush first).
 * DEVICE_REMOVAL on the listener closes every connection and stops the run
 * loop, recording the cause (rpcrdma_svc_run() returns -ENODEV;
 * rpcrdma_svc_destroy() drains).
 */
void svc_conn_cm_event(struct rpcrdma_svc *svc, struct svc_conn *conn,
		       enum rdma_cm_event_type type);
void svc_conn_maybe_destroy(struct svc_conn *conn);
void svc_conn_destroy(struct svc_conn *conn);
void svc_conn_reap(struct rpcrdma_svc *svc);
void svc_conn_queue_recv(struct svc_conn *conn, struct svc_recv *rc);
int svc_conn_flush_recvs(struct svc_conn *conn);
void svc_conn_cq_event(struct svc_conn *conn);
void svc_conn_cq_event_poll(struct svc_conn *conn);
struct svc_call *svc_call_get(struct svc_conn *conn);
void svc_call_put(struct svc_call *cc);
/*
 * svc_call_needs_large - true when the call decoded into @cc->cc_hdr needs
 * a large call context: it has Read chunks (their data is rebuilt into the
 * call buffer), or its first Write chunk and its Reply chunk have more
 * than SVC_SMALL_MAX_WR - 1 segments together (one RDMA Write each, plus
 * the Send), or the reply room its chunks offer (RFC 8166 3.5.3: the
 * inline threshold or the Reply chunk, whichever is larger, plus every
 * Write chunk, in bytes) exceeds a small reply buffer (twice our inline
 * size).  Reads only the header; no side effects.
 */
bool svc_call_needs_large(const struct svc_call *cc);
/* svc_call_max_wr - Send-queue work requests @cc may post for one reply:
 * SVC_CTX_MAX_WR with a large context attached, else SVC_SMALL_MAX_WR. */
uint32_t svc_call_max_wr(const struct svc_call *cc);
/*
 * svc_large_attach - take a large call context from @cc's connection for
 * @cc (run-loop thread only): cc_call/cc_reply and their capacities switch
 * to its buffers (sx_large_cap bytes each); large_in_use and large_high are
 * updated.  The context is owned by @cc until svc_call_put() gives it
 * back.  Return: false (nothing changed) when the pool is empty.
 */
bool svc_large_attach(struct svc_call *cc);
/*
 * svc_large_wait - park @cc (already holding its small context) in state
 * CC_WAITING on its connection's FIFO of calls waiting for a large
 * context, keeping the message's Receive @rc (not reposted) until then;
 * counts large_waits.  svc_call_put() of a call holding a large context
 * hands it to the oldest waiter and continues it (svc_recv_continue());
 * when the connection closes, waiters are dropped (counted in drops) by
 * svc_conn_maybe_destroy() and their Receives held until it is freed.
 */
void svc_large_wait(struct svc_call *cc, struct svc_recv *rc);

/* svc_recv.c */
void svc_recv_complete(struct svc_recv *rc, const struct ibv_wc *wc);
void svc_recv_start(struct svc_recv *rc, struct svc_call *cc);
/*
 * svc_recv_continue - second half of svc_recv_start(), once @cc has every
 * context it needs: rebuild the call from Receive @rc into @cc's call
 * buffer, give @rc back for reposting, then post the RDMA Reads of its
 * Read chunks or dispatch it.  A call whose Read chunks do not fit the
 * call buffer is answered with RDMA_ERROR ERR_CHUNK; @cc goes back to its
 * pool when that Send completes.
 */
void svc_recv_continue(struct svc_recv *rc, struct svc_call *cc);
void svc_read_complete(struct svc_call *cc, const struct ibv_wc *wc);

/* svc_send.c */
void svc_send_reply(struct svc_call *cc);
void svc_send_rdma_error(struct svc_call *cc, uint32_t xid, uint32_t code);
void svc_send_complete(struct svc_call *cc, const struct ibv_wc *wc);

/* svc_rpc.c */
void svc_rpc_dispatch(struct svc_call *cc);
void svc_rpc_finish(struct svc_call *cc);

/* svc_worker.c */
int svc_workers_start(struct rpcrdma_svc *svc, unsigned n);
void svc_workers_stop(struct rpcrdma_svc *svc);
void svc_work_enqueue(struct rpcrdma_svc *svc, struct svc_call *cc);
struct svc_call *svc_done_take_all(struct rpcrdma_svc *svc);
/*
 * svc_worker_run_one - one step of a worker: take the oldest call on the
 * work queue, if any, run its dispatch function, move it to the done queue
 * and wake the run loop.  Worker threads loop on it; unit tests call it to
 * run dispatch on their own thread, then svc_take_done() to send the reply.
 * Return: true when it served a call, false when the queue was empty.
 */
bool svc_worker_run_one(struct rpcrdma_svc *svc);

#endif /* RPCRDMA_SVC_INTERNAL_H */
