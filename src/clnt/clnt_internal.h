/* SPDX-License-Identifier: MIT */
/*
 * clnt_internal.h - private to src/clnt: the Requester's transport.
 *
 * Locking: one mutex (cl_lock) guards the request pool, the xid table,
 * the credit accounting and the connection state; posts are made under
 * it.  The completion thread takes it per work completion.  Memory
 * registration of the caller's buffers is done by the calling thread
 * without the lock.
 *
 * Request lifetime: a request has up to four owners, and returns to the
 * pool only when all have let go:
 *   - RPC: the caller, until it has decoded the outcome and released its
 *     registrations (clnt_call_finish);
 *   - SEND: from the post until the Send completion or its flush (a Reply
 *     may arrive before the Send completion);
 *   - WIRE: the Responder may still hold the call: from the post until a
 *     reply with its xid arrives or the connection is gone.  It holds the
 *     call's credit (RFC 8166 3.3.1) and its xid in the table, also after
 *     an abort, so a late reply finds it and never lands in the caller's
 *     memory;
 *   - INV: a LOCAL_INV chain for its windows is on the send queue.
 * The RPC outcome is separate: RL_PENDING until a reply, abort, timeout
 * or disconnect decides it, RL_FENCING while its windows are being
 * invalidated, then RL_DONE (the caller is woken or the callback queued).
 * With cf_retries a call lost with its connection goes RL_RESEND instead;
 * the reconnect (clnt_reconnect, driven by the worker thread or a caller)
 * releases its old registrations (RL_REBINDING), marshals it again for the
 * new connection with the same xid (RL_READY, FIFO cl_ready), and it is
 * posted again (RL_PENDING) as soon as a credit allows, before new calls.
 *
 * Owner prefixes: cl_ client, rl_ request, rr_ receive buffer.
 */
#ifndef RPCRDMA_CLNT_INTERNAL_H
#define RPCRDMA_CLNT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <rpcrdma/clnt.h>
#include <rpcrdma/wire.h>
#include <rpcrdma/xdr.h>

#include "verbs/verbs.h"

/* Room reserved for the transport header of a call. */
#define CLNT_HDR_BUF 512u
/* Receives beyond the credit limit: room for stray or duplicate replies. */
#define CLNT_EXTRA_RECVS 2u
/* Largest RPC call header we write: 40 bytes + AUTH_SYS body (<= 400). */
#define CLNT_RPC_HDR_MAX 448u

/* The bit Soft-RoCE sets in a user CQ's wc_flags for a Send With
 * Invalidate (the kernel's IB_WC_WITH_INVALIDATE; see clnt_recv.c). */
#define CLNT_RXE_WC_WITH_INV (1u << 2)
/* Largest RDMA_NOMSG copy buffer a request keeps between calls. */
#define CLNT_NOMSG_KEEP (1u << 20)
/* Chunk kinds a call may register: Read, Write, Reply. */
#define CLNT_NMAPS 3u
/* Completion tag of a request's LOCAL_INV chain, whose last work request
 * alone is signalled (outside enum rpcrdma_cqe_type). */
#define CLNT_CQE_LINV 0x100u
/* Tag of unsignalled work that only an error or flush reports: window
 * binds, the LOCAL_INVs before the last of a chain. */
#define CLNT_CQE_QUIET 0x101u

/* Owners of a request (rl_owners bits); see the lifetime note above. */
#define CLNT_OWNER_RPC 0x1u
#define CLNT_OWNER_SEND 0x2u
#define CLNT_OWNER_WIRE 0x4u
#define CLNT_OWNER_INV 0x8u

enum clnt_req_state {
	RL_FREE = 0,
	RL_PREPARED, /* marshalled, not yet posted */
	RL_PENDING,  /* posted, outcome not yet known */
	RL_FENCING,  /* outcome known (rl_status), LOCAL_INV in flight */
	RL_DONE,     /* outcome recorded, memory fenced */
	RL_RESEND,   /* lost with the connection, to be sent again (cf_retries) */
	RL_REBINDING, /* the reconnecting thread re-marshals it */
	RL_READY,    /* marshalled for the new connection, waiting for a credit */
};

/* A buffer registered until unregistered (rpcrdma_clnt_register_buffer). */
struct clnt_buffer {
	uint8_t *cb_addr;
	size_t cb_len;
	struct ibv_mr *cb_mr;        /* NULL while reconnecting */
	uint32_t cb_users;           /* mappings of calls in flight */
	bool cb_mw;                  /* registered for window binding only */
	bool cb_used;                /* table slot taken */
};

/* One registered caller buffer (chunk). */
struct clnt_mapping {
	struct clnt_buffer *cm_buf;  /* borrowed from a registered buffer */
	struct ibv_mw *cm_mw;        /* window bound for this call, or NULL */
	uint32_t cm_rkey;            /* the handle the Responder is given */
	struct ibv_mr *cm_mr;
	void *cm_addr;
	uint32_t cm_len;
	bool cm_bound;               /* cm_mw is bound: not yet invalidated */
};

/** A request: one call in flight, with its inline Send buffers. */
struct clnt_req {
	struct rpcrdma_cqe rl_cqe;    /* Send completion */
	struct rpcrdma_clnt *rl_clnt;
	struct clnt_req *rl_next;     /* free list / done list */
	struct clnt_req *rl_hnext;    /* xid table chain (while WIRE) */
	enum clnt_req_state rl_state;
	unsigned rl_owners;           /* CLNT_OWNER_* */
	uint32_t rl_xid;
	int rl_status;                /* result for the RPC side */
	bool rl_aborted;              /* outcome -ECANCELED; a reply is late */
	unsigned rl_tries;            /* times lost with a connection or its reconnect */
	pthread_cond_t rl_cond;

	struct rpcrdma_clnt_call *rl_call;
	rpcrdma_clnt_done_fn rl_done;  /* asynchronous call: its callback */
	void *rl_done_arg;
	uint64_t rl_deadline_ms;      /* asynchronous call: CLOCK_MONOTONIC */
	uint8_t *rl_hdrbuf;           /* transport header (registered, CLNT_HDR_BUF) */
	uint32_t rl_hdr_len;
	uint8_t *rl_body;             /* inline RPC message (registered, inline size) */
	uint32_t rl_body_len;
	uint8_t *rl_nomsg;            /* RDMA_NOMSG: whole call (malloc, registered
				       * per call, kept up to CLNT_NOMSG_KEEP) */
	uint32_t rl_nomsg_cap;        /* bytes at rl_nomsg */

	struct clnt_mapping rl_read;   /* Read chunk source */
	struct clnt_mapping rl_write;  /* Write chunk (ca_rddp) */
	struct clnt_mapping rl_reply;  /* Reply chunk (ca_res) */
	uint32_t rl_proc;              /* RDMA_MSG or RDMA_NOMSG */

	/* memory windows (cl_mw_enabled): one per chunk kind */
	struct ibv_mw *rl_mw[CLNT_NMAPS];
	uint32_t rl_mw_rkey[CLNT_NMAPS];
	struct ibv_send_wr rl_bind_wr[CLNT_NMAPS];
	uint32_t rl_nbind;
	struct ibv_send_wr rl_inv_wr[CLNT_NMAPS];
	struct rpcrdma_cqe rl_inv_cqe; /* LOCAL_INV completion */
	/* per-call regions over which a window stayed bound when the
	 * connection went: deregistered once the windows are freed */
	struct ibv_mr *rl_parked[CLNT_NMAPS];

	uint64_t rl_sq_pos;           /* position in the Send ring */
	bool rl_sq_signaled;
	struct ibv_sge rl_sge[2];
	struct ibv_send_wr rl_wr;
};

/* Owners of a backchannel request (br_owners; clnt_bc.c): the program
 * serving it until its reply is built, and its reply's Send until that
 * completes or flushes.  Free when both have let go. */
/* Backchannel requests: twice the credit (cf_bc_slots), so a call the
 * server sends as soon as it has our reply finds a request free while
 * that reply's Send completion is still to be polled. */
#define CLNT_BC_REQS(cl) (2u * (cl)->cl_cfg.cf_bc_slots)
#define CLNT_BC_OWNER_UPPER 0x1u
#define CLNT_BC_OWNER_SEND 0x2u

/** A backchannel call from the server (RFC 8167) and its reply. */
struct clnt_bc_req {
	struct rpcrdma_cqe br_cqe;    /* its reply's Send (RPCRDMA_CQE_BC_SEND) */
	unsigned br_owners;           /* CLNT_BC_OWNER_* */
	struct clnt_bc_req *br_next;  /* cl_bc_todo FIFO */
	uint32_t br_xid;
	bool br_chunks;               /* it used chunks: ERR_CHUNK (RFC 8167 5.1) */
	uint8_t *br_call;             /* the RPC call, copied out of the Receive */
	uint32_t br_call_len;
	uint8_t *br_buf;              /* registered (slab): transport header + reply */
	struct ibv_sge br_sge;
	struct ibv_send_wr br_wr;
};

/** A program served on the backchannel. */
struct clnt_bc_prog {
	uint32_t bp_prog, bp_vers;
	rpcrdma_clnt_bc_fn bp_fn;
	void *bp_arg;
};

/** A receive buffer, in the registered slab. */
struct clnt_recv {
	struct rpcrdma_cqe rr_cqe;
	uint8_t *rr_buf;
	struct ibv_sge rr_sge;
	struct ibv_recv_wr rr_wr;
};

struct rpcrdma_clnt {
	struct rpcrdma_clnt_config cl_cfg;
	pthread_mutex_t cl_lock;
	pthread_cond_t cl_slot_cond;  /* a credit or a request became free */

	/* rdma_cm and verbs objects (NULL in unit tests except cl_qp/cl_cq tags) */
	struct rdma_event_channel *cl_cm_channel;
	struct rdma_cm_id *cl_id;
	struct ibv_pd *cl_pd;
	struct ibv_comp_channel *cl_channel;
	struct ibv_cq *cl_cq;
	struct ibv_qp *cl_qp;
	unsigned cl_unacked_events;
	pthread_t cl_thread;
	bool cl_thread_started;
	char *cl_server;              /* kept for reconnecting */
	char *cl_source;
	bool cl_reconnecting;         /* one thread is reconnecting */
	uint32_t cl_rpc_busy;         /* requests the RPC side holds (may have MRs) */
	unsigned cl_backoff_ms;       /* next reconnect delay */
	int cl_wake_fd;               /* eventfd: stop the completion thread */

	/* negotiated (RFC 8797) */
	uint32_t cl_inline_send;      /* Responder's receive size */
	uint32_t cl_inline_recv;      /* what the Responder may send us inline */
	bool cl_peer_rsi;
	bool cl_rsi;                  /* we offered remote invalidation (RFC 8797 5) */
	bool cl_rxe_inv_flag;         /* Soft-RoCE: CLNT_RXE_WC_WITH_INV means it too */
	bool cl_mw_enabled;           /* type 2 windows asked for and supported */

	/* state */
	bool cl_connected;
	bool cl_stopping;
	uint32_t cl_max_credits;
	uint32_t cl_credits;          /* current grant, 1 .. cl_max_credits */
	uint32_t cl_outstanding;      /* credits in use: calls the Responder may hold */
	uint32_t cl_next_xid;
	uint32_t cl_cqe_ids;

	/* registered slab: receive buffers, header and body buffers */
	uint8_t *cl_slab;
	size_t cl_slab_len;
	struct ibv_mr *cl_mr;
	struct clnt_recv *cl_recvs;
	uint32_t cl_nrecvs;
	uint32_t cl_recvs_posted;
	/* One request per credit, and as many again as Sends may go
	 * unsignalled: the request of a call whose reply is in may still
	 * wait for a later signalled Send to complete, and the next call
	 * must not wait for it (sized in clnt_init()). */
	struct clnt_req *cl_reqs;
	uint32_t cl_nreqs;
	uint32_t cl_sq_every;         /* every cl_sq_every-th Send signalled */
	struct clnt_req *cl_free;
	uint32_t cl_reqs_out;
	struct clnt_req **cl_xids;    /* calls the Responder may hold, by xid */
	uint32_t cl_xid_mask;         /* table size - 1 (a power of two) */
	struct clnt_req *cl_done;     /* asynchronous calls to finish */
	struct clnt_req *cl_ready, *cl_ready_tail; /* RL_READY, oldest first */
	/* the connection step of clnt_reconnect (default clnt_conn_open):
	 * unit tests put a fake connection here */
	int (*cl_open)(struct rpcrdma_clnt *cl);
	pthread_t cl_worker;          /* reconnects for calls to resend */
	bool cl_worker_started;
	uint32_t cl_conn_waiters;     /* new calls waiting for a reconnect */
	/* a call that may not wait (rpcrdma_clnt_try_call_async()) found no
	 * connection: reconnect for it as for a waiter; cleared when a
	 * reconnect starts and when one succeeds */
	bool cl_conn_wanted;
	pthread_cond_t cl_work_cond;  /* a call waits for a reconnect, or stop */
	struct rpcrdma_cqe cl_quiet_cqe; /* CLNT_CQE_QUIET */

	/* Send ring: requests whose Send is posted, in posting order.  Most
	 * Sends are unsignalled; a completion releases every Send up to it. */
	struct clnt_req **cl_sq_ring; /* cl_nreqs entries */
	uint64_t cl_sq_head, cl_sq_tail;
	uint32_t cl_sq_unsignaled;    /* posted since the last signalled one */
	uint32_t cl_sq_signaled;      /* signalled Sends not yet completed */

	/* A batch of asynchronous calls (rpcrdma_clnt_batch_begin()) of one
	 * thread: their Sends, already in the Send ring in this order,
	 * chained here and posted together by clnt_batch_flush(). */
	pthread_t cl_batch_owner;
	unsigned cl_batch_depth;      /* 0: no batch open */
	struct ibv_send_wr *cl_batch_head, *cl_batch_tail;

	struct clnt_buffer cl_bufs[RPCRDMA_CLNT_MAX_BUFFERS];

	struct rpcrdma_wire_limits cl_limits;
	struct rpcrdma_hdr cl_rhdr;   /* completion side: the reply being decoded */
	struct rpcrdma_clnt_stats cl_stats;
	struct capture_ep *cl_capture; /* capture endpoints (clnt_capture.c), or NULL */

	/* backchannel (clnt_bc.c): cf_bc_slots requests, calls to serve */
	uint32_t cl_nbc;
	struct clnt_bc_req *cl_bc;
	uint8_t *cl_bc_calls;         /* cl_nbc call copies of the inline size */
	struct clnt_bc_req *cl_bc_todo, *cl_bc_todo_tail;
	struct clnt_bc_prog cl_bc_progs[RPCRDMA_CLNT_BC_MAX_PROGS];
	unsigned cl_bc_nprogs;

	/* RPC call header constants */
	uint8_t cl_cred[CLNT_RPC_HDR_MAX];
	uint32_t cl_cred_len;         /* encoded cred + verf, bytes */
};

void clnt_log(struct rpcrdma_clnt *cl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* clnt.c: setup without rdma_cm (unit tests start here) */
int clnt_init(struct rpcrdma_clnt *cl, const struct rpcrdma_clnt_config *cfg);
int clnt_alloc_pools(struct rpcrdma_clnt *cl);
int clnt_register_slab(struct rpcrdma_clnt *cl);
int clnt_post_all_recvs(struct rpcrdma_clnt *cl);
void clnt_set_peer(struct rpcrdma_clnt *cl, const void *pdata, size_t len);
/*
 * clnt_qp_size - the queue sizes a connection of @cl needs on device
 * @dev: *@send_wr (the request pool's Sends, backchannel replies, and with
 * memory windows a bind and a LOCAL_INV per chunk of each request) and
 * *@recv_wr (a Receive per credit, spares, backchannel slots); the one CQ
 * holds both.  Sets cl_mw_enabled: windows when asked for, the device has
 * type 2B windows, their work requests fit max_qp_wr and max_cqe and
 * their number (CLNT_NMAPS per request) max_mw; otherwise per-call
 * registration (logged).  The device's own sizing (mlx5 counts send
 * queue blocks, not work requests) may still refuse a queue near max_qp_wr.
 * Return: 0; -EINVAL when even without windows a queue exceeds max_qp_wr
 * or both exceed max_cqe (logged, naming the sizes: ask for fewer credits).
 */
int clnt_qp_size(struct rpcrdma_clnt *cl, const struct ibv_device_attr *dev,
		 uint32_t *send_wr, uint32_t *recv_wr);
/*
 * clnt_private_flags - the RFC 8797 flags we send: RPCRDMA_CM_FLAG_RSI
 * when asked for (cf_remote_invalidate) and every handle we give the
 * Responder is a memory window bound for one call (windows enabled), which
 * it may invalidate remotely; 0
 * otherwise (a region made by ibv_reg_mr cannot be invalidated remotely).
 * Sets cl_rsi to match.
 */
uint8_t clnt_private_flags(struct rpcrdma_clnt *cl);
void clnt_free(struct rpcrdma_clnt *cl);
void clnt_disconnected(struct rpcrdma_clnt *cl);
int clnt_reconnect(struct rpcrdma_clnt *cl);

/* clnt_worker - the connect worker's thread (@arg: the client): sleeps
 * until clnt_reconnect_wanted() or cl_stopping, reconnects, until the
 * client stops. */
void *clnt_worker(void *arg);

/*
 * clnt_cm_connect_status - the outcome of CM event @event (with its status
 * field @status) while connecting and waiting for @want (librdmacm's
 * address, route and connect steps).
 * Return: 0 when @event is @want; otherwise
 *   -ECONNREFUSED  REJECTED: no listener, or the server refused us;
 *   -EHOSTUNREACH  ADDR_ERROR, ROUTE_ERROR, UNREACHABLE, when the status
 *                  is not a negative errno or is -ETIMEDOUT, -ENODEV or
 *                  -EADDRNOTAVAIL (any other negative status is returned
 *                  as it is, e.g. -ENETUNREACH);
 *   -ECONNRESET    CONNECT_ERROR without a negative status (else that
 *                  status), or DISCONNECTED before the connection was up;
 *   -ENODEV        DEVICE_REMOVAL;
 *   -EPROTO        any other event.
 */
int clnt_cm_connect_status(enum rdma_cm_event_type event, int status,
			   enum rdma_cm_event_type want);
/*
 * clnt_cm_event - act on CM event @type of an established connection (the
 * completion thread's rdma_cm handler; unit tests call it).  DISCONNECTED,
 * DEVICE_REMOVAL, CONNECT_ERROR, UNREACHABLE, REJECTED and TIMEWAIT_EXIT
 * close the connection: the QP goes to error (posted work flushes), every
 * pending call fails with -ECONNRESET (synchronous callers wake,
 * asynchronous callbacks run here, their memory already deregistered),
 * and new calls get -ENOTCONN until rpcrdma_clnt_call() reconnects, which
 * first releases the old connection's QP, regions and PD.  No lock held.
 * Return: true when the event closed the connection; other events are
 * ignored (false).
 */
bool clnt_cm_event(struct rpcrdma_clnt *cl, enum rdma_cm_event_type type);

/* clnt_req.c: request lifetime, Send ring, xid table (lock held unless noted) */
void clnt_req_release(struct rpcrdma_clnt *cl, struct clnt_req *rl, unsigned owner);
void clnt_sq_push(struct rpcrdma_clnt *cl, struct clnt_req *rl);
void clnt_sq_pop(struct rpcrdma_clnt *cl, struct clnt_req *rl);
void clnt_sq_complete(struct rpcrdma_clnt *cl, struct clnt_req *rl);
void clnt_sq_release_all(struct rpcrdma_clnt *cl);
struct clnt_req *clnt_xid_find(struct rpcrdma_clnt *cl, uint32_t xid);
void clnt_wire_add(struct rpcrdma_clnt *cl, struct clnt_req *rl);
void clnt_xid_unlink(struct rpcrdma_clnt *cl, struct clnt_req *rl);
void clnt_wire_release(struct rpcrdma_clnt *cl, struct clnt_req *rl);
void clnt_complete(struct rpcrdma_clnt *cl, struct clnt_req *rl, int status);

/* clnt_fence.c: out of the Responder's reach (lock held) */
void clnt_windows_set(struct clnt_req *rl, bool bound);
void clnt_fence_complete(struct rpcrdma_clnt *cl, struct clnt_req *rl, int status);
bool clnt_req_persistent(const struct clnt_req *rl);
bool clnt_remote_invalidated(struct rpcrdma_clnt *cl, struct clnt_req *rl, uint32_t rkey);

/* clnt_resend.c: calls lost with their connection */
void clnt_fail_pending(struct rpcrdma_clnt *cl, int status);
void clnt_ready_remove(struct rpcrdma_clnt *cl, struct clnt_req *rl);
/* clnt_reconnect_wanted - the connect worker has a reconnect to make: no
 * connection, none being made, and a call to resend, a new call waiting,
 * or one that could not wait asking (cl_conn_wanted).  Lock held. */
bool clnt_reconnect_wanted(const struct rpcrdma_clnt *cl);

/* clnt_resend_waiting - some call waits for a reconnect (RL_RESEND).
 * Lock held. */
bool clnt_resend_waiting(const struct rpcrdma_clnt *cl);
/* clnt_pump_ready - post RL_READY calls, oldest first, while the credit
 * grant allows.  Lock held. */
void clnt_pump_ready(struct rpcrdma_clnt *cl);
/* clnt_resend_prepare - the reconnecting thread takes every RL_RESEND call
 * (RL_REBINDING) and releases its registrations of the old connection.
 * Return: how many.  No lock held. */
uint32_t clnt_resend_prepare(struct rpcrdma_clnt *cl);
/* clnt_resend_finish - after the reconnect (@rc its outcome): on success
 * marshal every RL_REBINDING call again for the new connection (same xid)
 * and post what the grant allows; on failure count the attempt against
 * each call and fail those out of retries with @rc.  No lock held. */
void clnt_resend_finish(struct rpcrdma_clnt *cl, int rc);

/* clnt_reg.c: registration (no lock held unless noted) */
int clnt_map(struct rpcrdma_clnt *cl, struct clnt_req *rl, unsigned idx,
	     struct clnt_mapping *m, void *addr, uint32_t len, int access);
void clnt_unmap(struct clnt_req *rl);
void clnt_park_release(struct rpcrdma_clnt *cl);
int clnt_buffers_register(struct rpcrdma_clnt *cl);
void clnt_buffers_deregister(struct rpcrdma_clnt *cl);
int clnt_mws_alloc(struct rpcrdma_clnt *cl);
void clnt_mws_free(struct rpcrdma_clnt *cl);

/* clnt_marshal.c */
int clnt_marshal(struct rpcrdma_clnt *cl, struct clnt_req *rl);
bool clnt_call_valid(const struct rpcrdma_clnt_call *ca);

/* clnt_start.c */
int clnt_call_start(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
		    struct clnt_req **out);
/* As clnt_call_start(); @xid, when not NULL, is reused (a retransmission);
 * @tries: retries the call has used already (cf_retries counts them per
 * call, across the requests that carry it). */
int clnt_call_start_xid(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
			struct clnt_req **out, const uint32_t *xid, unsigned tries);
/* As clnt_call_start() with @done attached; @nowait: -EAGAIN instead of
 * waiting for a credit, a request or a reconnect. */
int clnt_call_start_async(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
			  struct clnt_req **out, rpcrdma_clnt_done_fn done,
			  void *arg, uint64_t deadline, bool nowait);
int clnt_post_call(struct rpcrdma_clnt *cl, struct clnt_req *rl);
/* clnt_batch_flush - post the Sends queued by a batch (one post); a
 * failed post closes the connection.  Lock held. */
void clnt_batch_flush(struct rpcrdma_clnt *cl);

/* clnt_batch_unsignal - Sends from @wr on (a batch's chain) will never be
 * posted: their signalled ones are no longer awaited (cl_sq_signaled).
 * Lock held. */
void clnt_batch_unsignal(struct rpcrdma_clnt *cl, struct ibv_send_wr *wr);

/* clnt_batch_flush_mine - clnt_batch_flush() if the calling thread holds
 * the batch open.  Takes the lock. */
void clnt_batch_flush_mine(struct rpcrdma_clnt *cl);

/* clnt.c (the teardown wait) */
/* clnt_drained - no Receive posted and no signalled Send outstanding: the
 * flushes rpcrdma_clnt_destroy() waits for have all come.  Lock held. */
static inline bool clnt_drained(const struct rpcrdma_clnt *cl)
{
	return !cl->cl_recvs_posted && !cl->cl_sq_signaled;
}

/* clnt_wait_drained - wait up to @ms for clnt_drained(), woken by the
 * completion thread (clnt_poll) once cl_stopping is set; unsignalled
 * Sends that completed give no flush and are not waited for.  Lock held
 * (released while waiting).  Return: true when drained, false at the
 * deadline. */
bool clnt_wait_drained(struct rpcrdma_clnt *cl, unsigned ms);

/* clnt_api.c */
/* clnt_deadline - CLOCK_MONOTONIC now + @ms, for pthread_cond_timedwait. */
void clnt_deadline(struct timespec *dl, unsigned ms);
int clnt_call_wait(struct rpcrdma_clnt *cl, struct clnt_req *rl, unsigned timeout_ms);
/* As clnt_call_wait(); *@tries: the request's retries (losses and failed
 * reconnects) when its outcome came. */
int clnt_call_wait_tries(struct rpcrdma_clnt *cl, struct clnt_req *rl, unsigned timeout_ms,
			 unsigned *tries);
void clnt_run_done(struct rpcrdma_clnt *cl);
void clnt_check_deadlines(struct rpcrdma_clnt *cl);

/* clnt_capture.c: one-line hooks, no-ops without cf_capture. */
struct capture_ep;
/* clnt_capture_connected - connected to the peer QP @peer_qp: (re)set
 * the endpoints the capture writes. */
void clnt_capture_connected(struct rpcrdma_clnt *cl, uint32_t peer_qp);
/* clnt_capture_send - the Send @wr is about to be posted. */
void clnt_capture_send(struct rpcrdma_clnt *cl, const struct ibv_send_wr *wr);
/* clnt_capture_recv - @len bytes of @buf were received. */
void clnt_capture_recv(struct rpcrdma_clnt *cl, const uint8_t *buf, uint32_t len);
/* clnt_bc.c: the backchannel (RFC 8167) */
/* clnt_bc_alloc - the backchannel requests; their reply buffers are
 * carved from the slab at *@p (advanced).  Return: 0, -ENOMEM. */
int clnt_bc_alloc(struct rpcrdma_clnt *cl, uint8_t **p);
void clnt_bc_free(struct rpcrdma_clnt *cl);
/* clnt_bc_recv - the message in @rr (@len bytes) is a backchannel call:
 * taken (queued for clnt_bc_run()) or dropped (counted); the caller
 * reposts the Receive.  False: not a call, a reply.  @decoded: cl_rhdr
 * holds its header, decoded as a reply's; otherwise that decode failed
 * and it is decoded here as a call's.  Lock held. */
bool clnt_bc_recv(struct rpcrdma_clnt *cl, const struct clnt_recv *rr, uint32_t len,
		  bool decoded);
/* clnt_bc_run - serve the queued backchannel calls and post their
 * replies (the completion thread, no lock held). */
void clnt_bc_run(struct rpcrdma_clnt *cl);
/* clnt_bc_send_complete - a backchannel reply's Send completed.  Lock held. */
void clnt_bc_send_complete(struct rpcrdma_clnt *cl, struct rpcrdma_cqe *cqe,
			   const struct ibv_wc *wc);
/* clnt_bc_release_all - the connection's QP is gone (completion thread
 * stopped): every backchannel request is free again, queued calls are
 * dropped unanswered.  Lock held. */
void clnt_bc_release_all(struct rpcrdma_clnt *cl);

/* clnt_recv.c */
void clnt_handle_wc(struct rpcrdma_clnt *cl, const struct ibv_wc *wc);
void clnt_poll(struct rpcrdma_clnt *cl);

#endif /* RPCRDMA_CLNT_INTERNAL_H */
