/* SPDX-License-Identifier: MIT */
/*
 * svc_internal.h - private to src/svc: the Responder's transport.
 *
 * Threading (docs/design.md, "Transport threads"): the server runs one or
 * more transport threads, each a group (struct svc_group, like SPDK's poll
 * groups) with its own run loop, epoll set, connections, device objects
 * (protection domain, completion channel, pools) and workers.  A
 * connection and all of its state belong to one group from accept to
 * teardown; group 0 owns the listener and hands each new connection to the
 * group with the fewest (rdma_migrate_id() moves its CM events there).
 * Nothing on the per-call path is shared between groups: only the memory
 * budget and the counters (atomics).  A group's worker threads only run
 * dispatch functions on call contexts handed to them, and hand them back
 * through the group's done queue; a call context belongs to exactly one
 * thread at a time.
 *
 * Memory (docs/design.md, "Memory shared across connections"): every RDMA
 * device the server accepts on has one struct svc_dev with one protection
 * domain, one completion channel and one pool of registered memory
 * (svc_pool.c), shared by every connection on that device.  The pool is
 * carved into buffers of power-of-two size classes from slabs registered
 * on demand, within the server-wide budget (sc_memory).  A connection
 * registers nothing of its own: it takes its receive buffers from the pool
 * (as many as its credit grant plus spares; the grant starts small and
 * grows with the connection's load), and every call takes a call context
 * from its device (small: one buffer for the inline call, the reply and
 * its header) and, when its chunks need more room, a large context (work
 * request arrays for many segments) with call and reply buffers sized to
 * what the chunks ask for.  An empty pool or a budget reached makes the
 * message wait in order; it is never an error.
 *
 * Owner prefixes: sv_ server, dv_ device, sl_ slab, sb_ buffer handle,
 * sx_ connection, rc_ receive context, cc_ call context, lg_ large call
 * context, gr_ group (transport thread), cr_ connect request handed to a
 * group, sp_ program table entry.
 */
#ifndef RPCRDMA_SVC_INTERNAL_H
#define RPCRDMA_SVC_INTERNAL_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <rpcrdma/svc.h>
#include <rpcrdma/wire.h>

#include "rw/rw.h"
#include "svc/svc_capture.h"
#include "svc/svc_counters.h"
#include "svc/svc_stats.h"
#include "svc/svc_xprt.h"
#include "verbs/verbs.h"

#define SVC_MAX_PROGRAMS 8
/* Send-queue work requests one call context may post at once: with a
 * large context attached, and with only its small one (RDMA Writes into
 * the first Write chunk and the Reply chunk, one per segment, and the Send). */
#define SVC_CTX_MAX_WR 64u
#define SVC_SMALL_MAX_WR 8u
/* Room for RPC and NFS headers around a maximal payload. */
#define SVC_PAYLOAD_SLACK 65536u
/* RPC accepted-reply header: xid, REPLY, MSG_ACCEPTED, verf(0,0), stat. */
#define SVC_RPC_REPLY_HDR 24u
/* Pool buffers: 4 KiB << class, up to the slab size. */
#define SVC_BUF_MIN_SHIFT 12u
#define SVC_BUF_CLASSES 20u
/* Credits a new connection starts with; the grant doubles under load up
 * to sc_credits (svc_conn_grow_credits()). */
#define SVC_INITIAL_CREDITS 16u
/* Receives beyond the credit grant: headroom for bad peers and batching. */
#define SVC_EXTRA_RECVS 8u
/* An accepted connection not ESTABLISHED after this is closed (a peer
 * that vanished between our accept and its RTU holds nothing for long). */
#define SVC_HANDSHAKE_MS 10000u
/* Idle connections (sc_idle_timeout) are looked for every quarter of the
 * timeout, at least this often apart: one is closed between the timeout
 * and a quarter more after the last message it brought. */
#define SVC_IDLE_SCAN_MIN_MS 250u
/* Buckets of the table of connections per peer address (svc_host). */
#define SVC_HOST_BUCKETS 256u
/* At a stop, closed connections get this long for their posted work to
 * flush before their QPs are destroyed regardless (svc_drain_all()).
 * Soft-RoCE flushes a user QP's Receives from a kernel work item, which a
 * loaded guest under TCG was seen to run more than 2 s after the QP
 * entered error. */
#define SVC_DRAIN_MS 10000u
/* A connection's send CQ left unarmed while only reply Sends are out is
 * armed after this long without a wake-up that polls it (the contexts of
 * an idle connection's last replies come back then). */
#define SVC_SEND_REAP_MS 20u
/* With sc_poll, the run loop looks at its epoll set (CM events, the
 * eventfd) once in this many turns; completions and the done queue are
 * looked at every turn, without a system call. */
#define SVC_POLL_EPOLL_EVERY 64u
/* A drain polls a CQ SVC_POLL_BATCH completions at a time, at most
 * SVC_POLL_BUDGET times before the run loop turns to other connections
 * (svc_conn_cq_event_poll()); the replies and Reads each poll makes are
 * posted together after it. */
#define SVC_POLL_BATCH 32
#define SVC_POLL_BUDGET 2
/* Call contexts created at once when a device's pool runs dry. */
#define SVC_CALL_BATCH 16u

struct svc_conn;
struct svc_dev;
struct svc_host;
struct svc_group;
struct svc_slab;

/** A piece of registered memory from a device's pool. */
struct svc_buf {
	uint8_t *sb_addr;
	struct svc_slab *sb_slab; /* NULL: no buffer */
};

/** Registered slab: one memory region carved into buffers of one class. */
struct svc_slab {
	struct svc_dev *sl_dev;
	uint8_t *sl_base;
	struct ibv_mr *sl_mr;
	unsigned sl_class;
	uint32_t sl_nbufs;
	uint32_t sl_nfree;
	struct svc_slab *sl_next;
};

/* Free-list node, kept inside the free buffer itself. */
struct svc_free {
	struct svc_free *fr_next, *fr_prev;
	struct svc_slab *fr_slab;
};

/** A receive buffer; rc_buf comes from the device's pool. */
struct svc_recv {
	struct rpcrdma_cqe rc_cqe;
	struct svc_conn *rc_conn;
	struct svc_buf rc_mem;
	uint8_t *rc_buf;
	uint32_t rc_len;         /* bytes received */
	struct svc_recv *rc_next; /* device wait list link */
	struct ibv_sge rc_sge;
	struct ibv_recv_wr rc_wr;
};

enum svc_call_state {
	CC_FREE = 0,
	CC_WAITING,  /* waiting for a large context or chunk buffers */
	CC_READING,  /* RDMA Reads of Read chunks outstanding */
	CC_WORKING,  /* in the work queue or a worker */
	CC_SENDING,  /* reply posted, waiting for the Send completion */
	CC_SQ_WAIT,  /* waiting for send-queue slots */
};

/** A large call context: work-request arrays for many segments, and the
 *  call and reply buffers taken for one call (sized to its chunks). */
struct svc_large {
	struct svc_buf lg_call;
	struct svc_buf lg_reply;
	struct svc_large *lg_next;      /* free list */
	struct ibv_send_wr lg_wr[SVC_CTX_MAX_WR];
	struct ibv_sge lg_sge[SVC_CTX_MAX_WR * RPCRDMA_RW_MAX_SGE];
};

/** A (small) call context: everything one call needs from receive to Send. */
struct svc_call {
	struct rpcrdma_cqe cc_cqe;      /* Read-chunk and Send completions */
	/* The transport the call came on (svc_xprt.h), its server and group:
	 * set when the context is made, for good. */
	const struct svc_xprt_class *cc_xprt;
	struct rpcrdma_svc *cc_svc;
	struct svc_group *cc_grp;
	struct svc_dev *cc_dev;         /* RDMA: its device; TCP: NULL */
	struct svc_conn *cc_conn;       /* RDMA: while in use; TCP: NULL */
	struct svc_tconn *cc_tconn;     /* TCP: while in use; RDMA: NULL */
	enum svc_call_state cc_state;
	struct svc_call *cc_next;       /* free list / wait, work and done queues */

	struct rpcrdma_hdr cc_hdr;      /* the call's transport header */
	uint8_t *cc_call;               /* rebuilt RPC call (registered) */
	uint32_t cc_call_cap;
	uint32_t cc_call_len;
	uint32_t cc_call_lkey;
	uint8_t *cc_reply;              /* RPC reply stream (registered) */
	uint32_t cc_reply_cap;
	uint32_t cc_reply_len;
	uint32_t cc_reply_lkey;
	/* TCP: a pipe a READ's data goes out from (rpcrdma_svc_ddp_pipe()),
	 * made at its first use and kept with the context. */
	uint32_t cc_pipe_cap;           /* its size in bytes; 0: no pipe */
	int cc_pipe_rd, cc_pipe_wr;     /* its ends, while cc_pipe_cap */
	uint32_t cc_pipe_len;           /* this reply's DDP bytes in it; 0: none */
	uint32_t cc_pipe_pos;           /* where they go: offset in cc_reply */
	bool cc_pipe_dirty;             /* handed out: may hold bytes not yet sent */
	struct rpcrdma_hdr cc_rhdr;     /* the reply's transport header */
	uint8_t *cc_hdrbuf;             /* reply transport header (registered) */
	uint32_t cc_hdr_cap;
	struct svc_buf cc_mem;          /* own buffer: call | reply | header */
	uint32_t cc_lkey;
	struct svc_large *cc_large;     /* attached large context, or NULL */
	uint32_t cc_need_call;          /* large: call buffer bytes wanted */
	uint32_t cc_need_reply;         /* large: reply buffer bytes wanted */
	struct svc_recv *cc_wait_rc;    /* CC_WAITING: the message to rebuild */
	struct ibv_send_wr *cc_wr;      /* cc_small_wr or the large context's */
	struct ibv_sge *cc_sge;
	struct ibv_send_wr *cc_send_wr; /* the reply chain's last (the Send) */
	uint32_t cc_sq_used;            /* send-queue slots held until completion */
	uint32_t cc_sq_want;            /* CC_SQ_WAIT: slots wanted */
	bool cc_sq_reads;               /* CC_SQ_WAIT: resume the Reads, else the Send */

	uint32_t cc_reads_pending;      /* Read chunks not yet completed */
	uint32_t cc_chain_end[RPCRDMA_WIRE_MAX_READ_CHUNKS]; /* last WR of each Read chain */
	bool cc_failed;                 /* a Read failed: drop the call */
	int cc_status;                  /* dispatch result (accept_stat) */
	/* Worker posting (svc_send_by_worker()): the reply is being made on
	 * the worker; what it could not do is left for the transport thread
	 * in cc_worker_fail: SVC_WORKER_PUT (give the context back), or the
	 * negative errno of a failed post (its chain from cc_worker_bad). */
	bool cc_by_worker;
	int cc_worker_fail;
	struct ibv_send_wr *cc_worker_bad;
	rpcrdma_svc_dispatch_fn cc_fn;
	void *cc_fn_arg;
	struct rpcrdma_svc_req cc_req;
	struct svc_stats_call cc_st;    /* statistics (svc_stats.c) */

	struct ibv_send_wr cc_small_wr[SVC_SMALL_MAX_WR];
	struct ibv_sge cc_small_sge[SVC_SMALL_MAX_WR * RPCRDMA_RW_MAX_SGE];
	uint32_t cc_written[RPCRDMA_WIRE_MAX_SEGS];
};

/* A batch of call contexts allocated together (freed at server destroy). */
struct svc_call_batch {
	struct svc_call_batch *cb_next;
	uint32_t cb_n;
	struct svc_call cb_calls[];
};

/** Per RDMA device: shared PD, completion channel, pools and wait lists. */
struct svc_dev {
	struct rpcrdma_svc *dv_svc;
	struct svc_group *dv_grp;       /* the transport thread that owns it */
	struct ibv_context *dv_verbs;   /* NULL in unit tests */
	struct ibv_pd *dv_pd;
	bool dv_own_pd;
	/* Workers post the replies of the calls they serve (sc_reply_post,
	 * decided by svc_dev_get()); else the transport thread does. */
	bool dv_worker_posts;
	struct ibv_comp_channel *dv_channel; /* shared by every connection's CQ */
	/* CQs on dv_channel armed and not yet signalled: each can raise one
	 * event, so with none left the channel holds no more to read. */
	unsigned dv_armed;
	struct svc_dev *dv_next;

	struct svc_slab *dv_slabs;
	struct svc_free dv_free[SVC_BUF_CLASSES]; /* circular list heads */
	uint32_t dv_nfree[SVC_BUF_CLASSES];

	struct svc_call_batch *dv_batches;
	struct svc_call *dv_call_free;
	uint32_t dv_ncalls;             /* call contexts created */
	struct svc_large *dv_larges;    /* array */
	struct svc_large *dv_large_free;
	uint32_t dv_nlarge;

	/* Messages waiting for a call context, in arrival order. */
	struct svc_recv *dv_rwait_head, *dv_rwait_tail;
	/* Calls waiting for a large context or chunk buffers, in order. */
	struct svc_call *dv_cwait_head, *dv_cwait_tail;
	bool dv_kicking;
};

/** One connection: QP and CQ; buffers come from its device's pool. */
struct svc_conn {
	struct rpcrdma_svc *sx_svc;
	struct svc_group *sx_grp;    /* owning transport thread */
	struct svc_dev *sx_dev;
	struct rdma_cm_id *sx_id;
	struct ibv_cq *sx_cq;        /* Receive completions; always armed */
	/* Send-queue completions (Sends, RDMA Reads, backchannel Sends),
	 * armed only while something waits on one (svc_conn_send_arm()):
	 * a reply's Send completion only gives its context back, which the
	 * next wake-up does as well.  The same as sx_cq in unit tests. */
	struct ibv_cq *sx_scq;
	uint32_t sx_id_num;          /* connection number, for logs */
	struct svc_conn *sx_next;    /* group's connection list */

	bool sx_established;
	uint64_t sx_accepted_ms;     /* CLOCK_MONOTONIC, for the handshake timeout */
	struct svc_host *sx_host;    /* its peer address's place count, or NULL */
	/* Idle timeout (svc_conn_expire_idle()): a Receive completed since
	 * the last scan; else idle since sx_idle_ms (CLOCK_MONOTONIC). */
	bool sx_recv_seen;
	uint64_t sx_idle_ms;
	/* disconnect seen: drain, then destroy (read by workers that post) */
	atomic_bool sx_closing;
	bool sx_reap;                /* drained: the run loop frees it */
	unsigned sx_unacked_events;  /* CQ events not yet acked */
	bool sx_armed;               /* CQ armed, its event not yet read (dv_armed) */
	unsigned sx_s_unacked;       /* the same, for sx_scq */
	bool sx_sarmed;
	uint64_t sx_lazy_ms;         /* since when sx_scq is unarmed with contexts out, or 0 */
	uint32_t sx_reads_out;       /* RDMA Read chains posted, not completed */
	bool sx_more;                /* drain stopped at its budget: poll again */

	_Atomic uint32_t sx_credits; /* granted in every reply (read by workers that post) */
	uint32_t sx_max_credits;     /* the grant may grow to this */
	uint32_t sx_inline_recv;     /* our receive buffer size */
	uint32_t sx_inline_send;     /* most bytes the peer receives inline */
	bool sx_peer_rsi;            /* peer accepts Send With Invalidate */
	uint32_t sx_peer_recv;       /* peer's inline receive size (private data; 0: none) */

	struct svc_recv *sx_recvs;   /* array of sx_max_credits + extra */
	uint32_t sx_nrecvs;          /* with a buffer: credits + extra */
	uint32_t sx_recvs_posted;
	struct svc_recv *sx_refill_head, *sx_refill_tail; /* to repost, in one batch */
	uint32_t sx_refill_count;
	uint32_t sx_calls_out;       /* call contexts serving this connection */

	uint32_t sx_sq_size;         /* send-queue slots */
	/* Free slots: taken with compare-and-swap (svc_conn_sq_take()), as
	 * workers that post their replies take them too. */
	_Atomic uint32_t sx_sq_free;
	struct svc_call *sx_sqwait_head, *sx_sqwait_tail; /* CC_SQ_WAIT, in order */
	atomic_bool sx_sq_waiting;   /* sx_sqwait_head is set: workers hand back */
	/* Workers inside a post on this QP: the Send they post may complete,
	 * and its context come back, before the provider's post returns (it
	 * still holds the QP's lock), so the run loop reaps the connection
	 * (destroys the QP) only when this is 0 (svc_conn_reap()). */
	_Atomic uint32_t sx_worker_posting;
	_Atomic uint32_t sx_cqe_ids;
	/* Reply and Read chains queued in a batch (gr_post_batch) by
	 * svc_send_submit(), posted together by svc_send_flush(). */
	struct ibv_send_wr *sx_post_head, *sx_post_tail;
	struct svc_conn *sx_post_next;
	bool sx_post_queued;
	struct svc_stats_conn *sx_stats; /* statistics block, or NULL */
	struct capture_ep *sx_capture;  /* capture endpoints, or NULL */
	/* backchannel (svc_bc.c): created by the first rpcrdma_svc_bc_get() */
	struct rpcrdma_svc_bc *_Atomic sx_bc;
};

struct svc_program {
	uint32_t sp_prog;
	uint32_t sp_vers;
	rpcrdma_svc_dispatch_fn sp_fn;
	void *sp_arg;
	unsigned sp_flags;           /* RPCRDMA_SVC_TRY_TRANSPORT */
};


/* What the accept needs from a CONNECT_REQUEST event, kept after the
 * event is acknowledged (a request handed to another group). */
struct svc_conn_param {
	uint8_t cr_pdata[256];
	uint8_t cr_pdata_len;
	uint8_t cr_initiator_depth;
	uint8_t cr_responder_resources;
	uint32_t cr_qp_num;
};

/* A connection request in a group's inbox. */
struct svc_conn_req {
	struct rdma_cm_id *cr_id;
	struct svc_conn_param cr_param;
	struct svc_conn_req *cr_next;
};

/** One transport thread: its run loop, connections, devices and workers. */
struct svc_group {
	struct rpcrdma_svc *gr_svc;
	unsigned gr_index;
	pthread_t gr_thread;         /* groups 1..n-1: started by rpcrdma_svc_run() */
	bool gr_thread_started;
	int gr_epoll;
	int gr_wake_fd;              /* eventfd: stop, stats, done queue, inbox */
	/* CM events of the connections handed to this group (group 0 uses
	 * the listener's channel, sv_cm_channel). */
	struct rdma_event_channel *gr_cm_channel;
	struct svc_conn *gr_conns;
	_Atomic uint32_t gr_nconns;  /* on gr_conns; read by group 0 to balance */
	/* Next scan for idle connections (svc_conn_expire_idle()), CLOCK_MONOTONIC
	 * ms; 0 while the group has no connection or there is no timeout. */
	uint64_t gr_idle_next_ms;
	bool gr_more;                /* some connection has sx_more set */
	/* some connection's send CQ is unarmed with contexts out
	 * (svc_conn_send_arm()): the run loop sleeps at most
	 * SVC_SEND_REAP_MS */
	bool gr_lazy_sends;
	bool gr_reap_wait;           /* a drained connection waits for a worker
				      * to leave its post: look again at once */
	uint32_t gr_handshakes;      /* accepted, not yet ESTABLISHED nor closing */
	bool gr_post_batch;          /* replies queue on their connection ... */
	struct svc_conn *gr_post_conns; /* ... and these are posted by svc_send_flush() */
	struct svc_dev *gr_devs;

	/* Connection requests handed over by group 0 (gr_wq_lock), and how
	 * many are not yet accepted or refused (counted with gr_nconns when
	 * group 0 chooses where the next one goes). */
	struct svc_conn_req *gr_inbox;
	_Atomic uint32_t gr_pending;

	/* work queue (run loop -> workers, gr_wq_lock) and done queue
	 * (workers -> loop: a lock-free stack, newest first, taken whole by
	 * svc_done_take_all(); see svc_worker.c) */
	pthread_mutex_t gr_wq_lock;
	struct svc_call *gr_wq_head, *gr_wq_tail;
	_Atomic(struct svc_call *) gr_done;
	bool gr_wq_quit;
	/* Idle workers, each asleep on its own semaphore (gr_wq_lock): the
	 * flusher takes one off per call it hands over and wakes only it. */
	struct svc_worker *gr_wq_idle_list;
	/* Workers woken by svc_work_flush() since the start (gr_wq_lock;
	 * read by unit tests: one per call handed to an idle worker). */
	uint64_t gr_wq_wakes;
	unsigned gr_spins;       /* sc_poll: run-loop turns, for SVC_POLL_EPOLL_EVERY */
	/* Another group gave registered memory back for this one, which
	 * was short of the budget: its run loop kicks its devices' waiters. */
	atomic_bool gr_budget_kick;
	unsigned gr_wq_idle;     /* workers on gr_wq_idle_list */
	/* Calls dispatched by the run loop since its last flush: handed to
	 * the workers together, with one lock and one wake per idle worker
	 * needed (run-loop thread only). */
	struct svc_call *gr_batch_head, *gr_batch_tail;
	unsigned gr_batch_n;
	struct svc_worker *gr_workers;
	unsigned gr_nworkers;
	/* backchannel (svc_bc.c): kicks since the loop last looked (any
	 * thread), calls of this group's connections not ended yet */
	atomic_uint gr_bc_kicks;
	atomic_uint gr_bc_pending;
	/* TCP (svc_tcp.c): this group's connections, the sockets group 0
	 * handed over (gr_wq_lock), free call contexts, connections with
	 * replies queued in a batch and connections whose waiting record got
	 * a context back (both served by svc_tcp_flush()), large record
	 * buffers kept (SVC_TCP_KEEP_BIG), the next deadline sweep
	 * (CLOCK_MONOTONIC ms, 0: none due). */
	struct svc_tconn *gr_tconns;
	uint32_t gr_ntconns;
	struct svc_tcp_inbox *gr_tcp_inbox;
	struct svc_call *gr_tcp_free;
	uint32_t gr_tcp_nfree;
	struct svc_tcp_big *gr_tcp_big; /* kept large record buffers */
	uint32_t gr_tcp_nbig;
	struct svc_tconn *gr_tcp_flush;
	struct svc_tconn *gr_tcp_resume;
	struct svc_tconn *gr_tcp_memwait; /* its readers waiting for memory */
	struct svc_tconn *gr_tcp_dead;  /* let go of, freed by svc_tcp_reap() */
	bool gr_tcp_batch;
	uint64_t gr_tcp_sweep_ms;
};

struct rpcrdma_svc {
	struct rpcrdma_svc_config sv_cfg;
	struct rdma_event_channel *sv_cm_channel;
	struct rdma_cm_id *sv_listen_id;
	atomic_bool sv_stop;
	int sv_stop_cause;       /* rpcrdma_svc_run()'s return after a stop:
				  * 0, or -ENODEV (listener's device removed) */
	atomic_bool sv_dump;
	struct svc_program sv_progs[SVC_MAX_PROGRAMS];
	unsigned sv_nprogs;
	struct svc_group *sv_groups; /* sv_ngroups transport threads */
	unsigned sv_ngroups;
	_Atomic uint32_t sv_conn_ids;
	_Atomic uint32_t sv_nconns;  /* every group's, closing ones included */
	size_t sv_slab_bytes;        /* size of every registered slab */
	_Atomic uint64_t sv_mem_registered;  /* bytes in slabs, all groups and devices */
	_Atomic uint64_t sv_recv_bytes_held; /* of which receive buffers */
	_Atomic uint64_t sv_refused_burst;   /* refusals not yet logged */
	/* Connections per peer address (sc_max_conns_per_host), any group's,
	 * closing ones included: a hash table of svc_host entries, each
	 * freed with its last connection, under sv_hosts_lock. */
	pthread_mutex_t sv_hosts_lock;
	struct svc_host *sv_hosts[SVC_HOST_BUCKETS];
	uint32_t sv_hosts_seed;
	/* rpcrdma_svc_set_conn_state(): does a connection hold upper-layer
	 * state (not closed when idle)?  NULL: none does. */
	rpcrdma_svc_conn_state_fn sv_conn_state;
	void *sv_conn_state_arg;
	/* Bit i: group i found the budget spent by registered slabs (its
	 * waiters are kicked by its own puts only); the other groups give
	 * back their idle slabs and wake it (svc_budget_share()). */
	_Atomic uint64_t sv_budget_short;

	uint32_t sv_drain_ms;        /* SVC_DRAIN_MS; unit tests shorten it */

	/* TCP (svc_tcp.c): the listening socket (-1: none; group 0 serves
	 * it), the record size cap (sc_max_payload plus slack), the record
	 * and reply deadlines (SVC_TCP_RECORD_MS, SVC_TCP_SEND_MS; unit
	 * tests shorten them), and the reply buffer of a TCP call context. */
	int sv_tcp_fd;
	/* While listening: a descriptor held in reserve (/dev/null, or -1)
	 * to accept and close a connection with when the process has none
	 * left (svc_tcp_shed()); the shortage logged once. Group 0's. */
	int sv_tcp_spare;
	bool sv_tcp_fd_short;
	/* TCP connections (every group's) whose record waits for the memory
	 * budget to grow its buffer (svc_tcp.c): 0 -> 1 and back logged. */
	atomic_uint sv_tcp_memwaits;
	/* Its log lines: an episode's first line at most once per
	 * sv_tcp_memwait_log_ms (SVC_TCP_MEMWAIT_LOG_MS; unit tests change
	 * it), the last logged one's start (0: none yet), episodes not
	 * logged since, and whether the one under way was logged. */
	uint32_t sv_tcp_memwait_log_ms;
	_Atomic uint64_t sv_tcp_memwait_logged_ms;
	atomic_uint sv_tcp_memwait_quiet;
	atomic_bool sv_tcp_memwait_said;
	/* TCP connections (every group's) with calls out: the fair share's
	 * divisor (svc_tcp_share()). */
	atomic_uint sv_tcp_active;
	uint32_t sv_tcp_maxrec;
	uint32_t sv_tcp_record_ms;
	uint32_t sv_tcp_send_ms;
	uint32_t sv_tcp_reply_cap;

	struct rpcrdma_wire_limits sv_limits;
	struct svc_counters sv_ct;
	struct svc_stats *sv_stats;  /* per-operation statistics (svc_stats.c), or NULL */
	struct rpcrdma_capture *sv_capture; /* rpcrdma_svc_set_capture(), or NULL */
};

/* svc_call_append - put @cc at the tail of the FIFO *@head .. *@tail
 * (linked through cc_next): the wait lists and the work, batch and done
 * queues are all such FIFOs. */
/*
 * svc_mem_reserve - count @bytes against @svc's memory budget (sc_memory,
 * shared by every group and device) unless that would pass it; @must:
 * count them anyway (a caller's guaranteed minimum).  Give them back with
 * atomic_fetch_sub() on sv_mem_registered.  Return: true when counted.
 */
static inline bool svc_mem_reserve(struct rpcrdma_svc *svc, uint64_t bytes, bool must)
{
	if (atomic_fetch_add(&svc->sv_mem_registered, bytes) + bytes > svc->sv_cfg.sc_memory &&
	    !must) {
		atomic_fetch_sub(&svc->sv_mem_registered, bytes);
		return false;
	}
	return true;
}

static inline void svc_call_append(struct svc_call **head, struct svc_call **tail,
				   struct svc_call *cc)
{
	cc->cc_next = NULL;
	if (*tail)
		(*tail)->cc_next = cc;
	else
		*head = cc;
	*tail = cc;
}

/* Soft-RoCE's ring entries (rxe rounds entries and slot counts to powers
 * of two): a send work request with 4 SGEs, a receive, a completion. */
#define SVC_RING_SEND_ENTRY 512u
#define SVC_RING_RECV_ENTRY 64u
#define SVC_RING_CQ_ENTRY 64u

/* @conn's send queue has a CQ of its own (not so in unit tests). */
static inline bool svc_conn_split_cq(const struct svc_conn *conn)
{
	return conn->sx_scq && conn->sx_scq != conn->sx_cq;
}

/* The send-queue slots of a connection granted up to @max_credits. */
static inline uint32_t svc_conn_sq_slots(uint32_t max_credits)
{
	return max_credits + SVC_CTX_MAX_WR;
}

static inline uint64_t svc_pow2(uint64_t n)
{
	uint64_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* svc_conn_queue_bytes - an estimate of one connection's queue rings (send
 * queue, receive queue, completion queue) at @max_credits, as Soft-RoCE
 * sizes them; hardware providers size theirs differently, usually smaller.
 * Counted against the budget when sc_max_connections is derived. */
static inline uint64_t svc_conn_queue_bytes(uint32_t max_credits)
{
	uint64_t sq = svc_conn_sq_slots(max_credits), rq = max_credits + SVC_EXTRA_RECVS;

	return svc_pow2(sq + 1) * SVC_RING_SEND_ENTRY + svc_pow2(rq + 1) * SVC_RING_RECV_ENTRY +
	       svc_pow2(sq + rq + 1) * SVC_RING_CQ_ENTRY;
}

/* svc_initial_credits - the grant a new connection starts with. */
static inline uint32_t svc_initial_credits(const struct rpcrdma_svc_config *cfg)
{
	return cfg->sc_credits < SVC_INITIAL_CREDITS ? cfg->sc_credits : SVC_INITIAL_CREDITS;
}

/*
 * A worker posts a reply chain and the transport thread handles its
 * completion: the device orders the post before the completion, an order
 * ThreadSanitizer cannot see (the provider and the device are not
 * instrumented).  These state it, for the call context's completion tag,
 * in a TSan build (-fsanitize=thread), and are nothing otherwise.
 */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define SVC_TSAN_RELEASE(addr) __tsan_release((void *)(addr))
#define SVC_TSAN_ACQUIRE(addr) __tsan_acquire((void *)(addr))
#else
#define SVC_TSAN_RELEASE(addr) ((void)0)
#define SVC_TSAN_ACQUIRE(addr) ((void)0)
#endif

#define SVC_INC(svc, f, n) atomic_fetch_add_explicit(&(svc)->sv_ct.f, (n), memory_order_relaxed)
#define SVC_DEC(svc, f, n) atomic_fetch_sub_explicit(&(svc)->sv_ct.f, (n), memory_order_relaxed)
/* The same for a counter of scope xprt: @x is its transport (SVC_XPRT_RDMA,
 * SVC_XPRT_TCP). */
#define SVC_XINC(svc, f, x, n) SVC_INC(svc, f[x], n)
#define SVC_XDEC(svc, f, x, n) SVC_DEC(svc, f[x], n)

void svc_log(struct rpcrdma_svc *svc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* svc.c */
/*
 * svc_init - everything but the listener and the epoll sets' CM channels:
 * configuration defaults, limits, and sv_ngroups groups (each with its
 * eventfd, epoll set and queues).  Unit tests start here and end with
 * svc_fini().  Return: 0, -EINVAL for a bad configuration, -ENOMEM, or
 * the errno of eventfd()/epoll_create1().
 */
int svc_init(struct rpcrdma_svc *svc, const struct rpcrdma_svc_config *cfg);
/* svc_fini - free what svc_init() made (connections and devices gone). */
void svc_fini(struct rpcrdma_svc *svc);
/* svc_take_done - send the replies of the calls @grp's workers finished. */
void svc_take_done(struct svc_group *grp);
/* svc_group_wake - wake @grp's run loop (its eventfd). */
void svc_group_wake(struct svc_group *grp);
/* svc_pick_group - the group a new connection goes to: the one with the
 * fewest connections (gr_nconns, plus requests handed to it and not yet
 * taken, gr_pending), the lowest index on a tie. */
struct svc_group *svc_pick_group(struct rpcrdma_svc *svc);
/* svc_group_workers - worker threads of group @i: sc_threads shared out
 * over the groups (the first ones get the remainder), at least one each;
 * none with sc_loop_dispatch. */
unsigned svc_group_workers(const struct rpcrdma_svc *svc, unsigned i);

/* svc_pool.c */
/*
 * svc_dev_get - the device object for @verbs (created on first use: PD,
 * completion channel registered with the run loop's epoll, empty pools).
 * @pd: unit tests only: use this PD and no completion channel (@verbs NULL).
 * Return: the device, or NULL with errno set (ENOMEM, or the verbs error).
 */
struct svc_dev *svc_dev_get(struct svc_group *grp, struct ibv_context *verbs,
			    struct ibv_pd *pd);
/* svc_dev_destroy_all - free every device of @grp: call contexts, slabs
 * (memory regions deregistered), PD, channel.  Every connection is gone. */
void svc_dev_destroy_all(struct svc_group *grp);
/*
 * svc_buf_get - a buffer of at least @bytes from @dev's pool, into @out.
 * Takes a free buffer of the size class, or registers a new slab when the
 * server's budget allows, or reuses a slab of another class whose buffers
 * are all free.  @recv: a receive buffer, which must also fit the budget's
 * receive share (half of it).
 * Return: 0; -EAGAIN when nothing is free now (wait for svc_buf_put());
 * -E2BIG when @bytes exceeds the slab size; -ENOMEM or a verbs error when
 * a slab could not be allocated or registered.
 */
int svc_buf_get(struct svc_dev *dev, size_t bytes, bool recv, struct svc_buf *out);
/* svc_buf_put - give @b back (no-op for an empty handle). */
void svc_buf_put(struct svc_dev *dev, struct svc_buf *b, bool recv);
/* svc_buf_lkey - the local key of @b's region. */
static inline uint32_t svc_buf_lkey(const struct svc_buf *b)
{
	return b->sb_slab->sl_mr->lkey;
}
/* svc_buf_cap - usable bytes of @b (its class size). */
size_t svc_buf_cap(const struct svc_buf *b);
/* Registered bytes the pool keeps when idle slabs are trimmed. */
#define SVC_POOL_KEEP (64ull << 20)
/* svc_pool_trim - deregister slabs whose buffers are all free while the
 * registered total exceeds the keep level (a quarter of the budget, at
 * most SVC_POOL_KEEP). */
void svc_pool_trim(struct svc_dev *dev);
/*
 * svc_budget_share - on @grp's run loop, every turn: when another group
 * is short of the memory budget (sv_budget_short; slabs are per group and
 * device, so one group's idle slabs would otherwise starve another's
 * waiters for good), deregister every idle slab of @grp's devices and,
 * when one went, wake the groups that were short (gr_budget_kick).
 */
void svc_budget_share(struct svc_group *grp);
/* svc_budget_kick - on @grp's run loop: when another group gave memory
 * back for it (gr_budget_kick), serve its devices' waiters again. */
void svc_budget_kick(struct svc_group *grp);
/*
 * svc_call_get - a free call context of @dev for @conn (created in batches
 * up to sc_small_contexts per device).  Return: NULL when none can be had
 * now: the caller queues its message (svc_dev_wait_recv()).
 */
struct svc_call *svc_call_get(struct svc_dev *dev, struct svc_conn *conn);
/* svc_call_put - give @cc and everything attached back; serves waiters
 * (svc_dev_kick()) and lets a closing connection go. */
void svc_call_put(struct svc_call *cc);
/* svc_dev_put_calls_of - give back every call context of @dev still out
 * for @conn; only once @conn's QP is destroyed, when no completion can
 * come for them any more and no queue holds them (a stop's last resort,
 * svc_drain_all()).  The number given back. */
uint32_t svc_dev_put_calls_of(struct svc_dev *dev, struct svc_conn *conn);
/*
 * svc_call_needs_large - true when the call decoded into @cc->cc_hdr needs
 * a large call context: it has Read chunks (their data is rebuilt into the
 * call buffer), or its first Write chunk and its Reply chunk have more
 * than SVC_SMALL_MAX_WR - 1 segments together (one RDMA Write each, plus
 * the Send), or the reply room its chunks offer (RFC 8166 3.5.3: the
 * inline threshold or the Reply chunk, whichever is larger, plus every
 * Write chunk, in bytes) exceeds a small reply buffer (twice our inline
 * size).  Sets cc_need_call and cc_need_reply to the buffer sizes the
 * call needs (capped at the largest payload plus slack).
 */
bool svc_call_needs_large(struct svc_call *cc);
/* svc_call_max_wr - Send-queue work requests @cc may post for one reply:
 * SVC_CTX_MAX_WR with a large context attached, else SVC_SMALL_MAX_WR. */
uint32_t svc_call_max_wr(const struct svc_call *cc);
/*
 * svc_large_attach - take a large context and call and reply buffers of
 * cc_need_call / cc_need_reply bytes for @cc; cc_call/cc_reply switch to
 * them.  Return: 0; -EAGAIN (nothing changed) when one of them cannot be
 * had now; -E2BIG when the call asks for more than a slab.
 */
int svc_large_attach(struct svc_call *cc);
/*
 * svc_large_wait - park @cc (already holding its small context) in state
 * CC_WAITING at the tail of its device's FIFO of calls waiting for a large
 * context or buffers, keeping the message's Receive @rc (not reposted)
 * until then; counts large_waits.  Served in order by svc_dev_kick();
 * dropped (counted in drops) when the connection closes.
 */
void svc_large_wait(struct svc_call *cc, struct svc_recv *rc);
/* svc_dev_wait_recv - queue received message @rc until a call context of
 * its device is free (counts ctx_waits). */
void svc_dev_wait_recv(struct svc_dev *dev, struct svc_recv *rc);
/* svc_dev_kick - serve the waiters of @dev in order while what the oldest
 * needs can be had; safe to call from inside itself (no recursion). */
void svc_dev_kick(struct svc_dev *dev);
/* svc_dev_drop_waiters - drop @conn's messages and calls waiting on its
 * device (counted in drops); their Receives stay held with @conn. */
void svc_dev_drop_waiters(struct svc_dev *dev, struct svc_conn *conn);

/* svc_conn.c */
/*
 * svc_conn_alloc_pools - take @conn's receive buffers from its device's
 * pool: sx_credits + SVC_EXTRA_RECVS of them (sx_max_credits +
 * SVC_EXTRA_RECVS receive contexts, the rest filled when the grant grows).
 * Return: 0, -ENOMEM, or -EAGAIN when the pool's receive share is spent
 * (the connection is refused).
 */
int svc_conn_alloc_pools(struct svc_conn *conn);
int svc_conn_post_all_recvs(struct svc_conn *conn);
/*
 * svc_conn_grow_credits - when @conn has at least half its grant in
 * progress and may grow, take more receive buffers (the grant doubles, up
 * to sx_max_credits), post them, and only then raise sx_credits, so the
 * Requester never sends into a Receive not yet posted.  Counts
 * credit_grows, or credit_grow_denied when the pool has no room.
 */
void svc_conn_grow_credits(struct svc_conn *conn);
/*
 * svc_conn_accept - admit and accept connection request @id for @grp with
 * the request's parameters @p: receive buffers from the group's pool, QP,
 * Receives posted, rdma_accept() with our RFC 8797 private data.
 * Return: 0; on failure a negative errno (-EACCES: sc_accept refused the
 * address; -EBUSY: sc_max_conns_per_host of the peer's address or
 * sc_max_connections taken, counted in conns_refused, the first also in
 * conns_refused_host; -EAGAIN when the budget's receive share is spent,
 * -ENOMEM, or a verbs error) and the caller rejects and destroys @id.
 */
int svc_conn_accept(struct svc_group *grp, struct rdma_cm_id *id,
		    const struct svc_conn_param *p);
/*
 * svc_conn_new - svc_conn_accept()'s first part, everything short of the
 * QP: admission (svc_admit() of @id's peer address), the connection
 * object on @grp's device for @id (@pd: unit tests only, as
 * svc_dev_get()), the inline sizes from the request's private data @p
 * (RFC 8797), and its receive buffers from the memory budget's receive
 * share: sx_credits + SVC_EXTRA_RECVS of sc_inline_size bytes.
 * Return: 0 and the connection in *@out (not yet on the group's list);
 * the errors of svc_admit(); -EAGAIN when the receive share cannot hold
 * its receive buffers (counted in conns_refused, logged once per burst
 * "refusing connections: memory budget's receive share in use (N open)");
 * -ENOMEM; a verbs error.  On failure nothing is held.
 */
int svc_conn_new(struct svc_group *grp, struct rdma_cm_id *id, struct ibv_pd *pd,
		 const struct svc_conn_param *p, struct svc_conn **out);
/*
 * svc_conn_new_fail - undo svc_conn_new() for a connection that was not
 * opened (@rc its error, logged unless -EAGAIN): its receive buffers,
 * host place and server place (a QP the caller destroyed first); the
 * caller rejects @id.
 */
void svc_conn_new_fail(struct svc_conn *conn, int rc);
/*
 * svc_conn_opened - svc_conn_accept()'s last part, after rdma_accept():
 * @conn joins its group (and the idle scan), "accepting again after N
 * refused connections" ends a burst of refusals, counters, statistics,
 * capture (@p's QP number) and the log line (@read_depth granted).
 */
void svc_conn_opened(struct svc_conn *conn, const struct svc_conn_param *p,
		     uint32_t read_depth);
/*
 * svc_admit - admission of a new connection from @peer, for every
 * transport: sc_accept, then one of the peer host's places
 * (sc_max_conns_per_host), then one of the server's (sc_max_connections).
 * @hostp: out: the host's entry, given back with svc_host_put() (and the
 * server's place by a decrement of sv_nconns) when the connection goes.
 * Return: 0; -EACCES (sc_accept refused); -EBUSY (a place limit; counted
 * in conns_refused, the host's also in conns_refused_host, logged once
 * per burst); -ENOMEM.
 */
int svc_admit(struct rpcrdma_svc *svc, const struct sockaddr *peer, struct svc_host **hostp);
/* svc_conn_refused - a connection refused for @why (a phrase): counted in
 * conns_refused, logged once per burst of refusals with the connections
 * open ("refusing connections: WHY (N open)"); the burst ends when a
 * connection is accepted again. */
void svc_conn_refused(struct rpcrdma_svc *svc, const char *why);
/* svc_conn_admit - take one of the sc_max_connections places (counted in
 * sv_nconns, atomically: any transport thread may accept).  Return: true
 * when taken (given back when the connection is freed or its accept
 * fails); false when every place is taken. */
bool svc_conn_admit(struct rpcrdma_svc *svc);
/*
 * svc_host_admit - take one of the sc_max_conns_per_host places of peer
 * host @peer: its IPv4 address (an IPv4-mapped IPv6 address counts as
 * its IPv4 address), its IPv6 /64 (any address of one /64 counts as the
 * same host); any other family, or NULL, as one address of its own.  Any transport
 * thread (sv_hosts_lock).  Return: the address's entry, given back with
 * svc_host_put(); NULL when its places are all taken or no entry could be
 * allocated (errno: EBUSY or ENOMEM).
 */
struct svc_host *svc_host_admit(struct rpcrdma_svc *svc, const struct sockaddr *peer);
/* svc_host_put - give back a place svc_host_admit() took (NULL: no-op);
 * the entry goes with its last place. */
void svc_host_put(struct rpcrdma_svc *svc, struct svc_host *h);
/* svc_host_count - places taken by @peer's host (address, IPv6 /64) now (0: none). */
uint32_t svc_host_count(struct rpcrdma_svc *svc, const struct sockaddr *peer);
/* svc_host_fini - free every entry left (unit tests; none after a drain). */
void svc_host_fini(struct rpcrdma_svc *svc);
/*
 * svc_conn_expire_idle - at @now_ms (CLOCK_MONOTONIC), when @grp's next
 * idle scan is due (gr_idle_next_ms): a connection that received a message
 * since the last scan is idle from @now_ms on; one idle for at least
 * sc_idle_timeout seconds, established, not closing, with no call, Read,
 * waiting message or backchannel call in progress (svc_conn_busy()), and
 * that the upper layer does not say holds state (sv_conn_state), is
 * disconnected and counted in conns_idle_closed.  Schedules the next scan
 * (a quarter of the timeout later, at least SVC_IDLE_SCAN_MIN_MS), or
 * none while the group has no connection.  Group thread.
 */
void svc_conn_expire_idle(struct svc_group *grp, uint64_t now_ms);
/* svc_conn_idle_arm - a connection joined @grp at @now_ms: schedule the
 * group's idle scans if none is (sc_idle_timeout not "never"). */
void svc_conn_idle_arm(struct svc_group *grp, uint64_t now_ms);
/* svc_conn_busy - @conn has a call, an RDMA Read, a received message not
 * yet given back, or a backchannel call in progress. */
bool svc_conn_busy(const struct svc_conn *conn);
/* svc_conn_param_of - the parameters of CONNECT_REQUEST event @ev. */
void svc_conn_param_of(const struct rdma_cm_event *ev, struct svc_conn_param *p);
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
/* svc_conn_reap - free @grp's drained connections (sx_reap), except one
 * a worker is still posting on (sx_worker_posting): that one is looked at
 * again on the next turn, which does not sleep (gr_reap_wait). */
void svc_conn_reap(struct svc_group *grp);
/* svc_conn_expire_handshakes - close accepted connections that did not
 * reach ESTABLISHED within SVC_HANDSHAKE_MS of @now_ms (monotonic). */
void svc_conn_expire_handshakes(struct svc_group *grp, uint64_t now_ms);
/* svc_now_ms - CLOCK_MONOTONIC in milliseconds. */
uint64_t svc_now_ms(void);
void svc_conn_queue_recv(struct svc_conn *conn, struct svc_recv *rc);
int svc_conn_flush_recvs(struct svc_conn *conn);
/* svc_dev_cq_event - completion events on @dev's shared channel: for
 * each, drain its CQ's connection, re-arm, drain again; reads no further
 * than the armed CQs (dv_armed) allow. */
void svc_dev_cq_event(struct svc_dev *dev);
/* svc_conn_arm - request the next completion event of @conn's CQ and
 * count it armed (sx_armed, dv_armed).  Return: 0, or -EIO. */
int svc_conn_arm(struct svc_conn *conn);
/*
 * svc_conn_send_arm - arm @conn's send CQ when something waits on one of
 * its completions: an RDMA Read, a backchannel Send, a call or message
 * waiting for send-queue slots or a context, a closing connection, a
 * device whose workers post; or when its contexts have been out for
 * SVC_SEND_REAP_MS at @now_ms without a wake-up.  Otherwise reply Sends
 * are reaped by the next wake-up's drain and the send CQ costs no event
 * (and, with Soft-RoCE, no re-arm system call).  Return: true when the
 * send CQ is armed now; the caller drains again (a completion may have
 * come before the arm).  Group thread.
 */
bool svc_conn_send_arm(struct svc_conn *conn, uint64_t now_ms);
void svc_conn_cq_event_poll(struct svc_conn *conn);
/*
 * svc_conn_sq_reserve - hold @n send-queue slots of @conn for @cc (in
 * cc_sq_used) before it posts, so the send queue never overflows.
 * Return: true when reserved; false when fewer are free or others wait
 * first: @cc is parked in state CC_SQ_WAIT (in order, counted in
 * sq_waits) and resumed by svc_conn_sq_release() with the slots held
 * (@reads: svc_recv_post_chains(), else svc_send_resume()).
 */
bool svc_conn_sq_reserve(struct svc_conn *conn, struct svc_call *cc, uint32_t n,
			 bool reads);
/* svc_conn_sq_release - @cc's slots come back (its chains completed or
 * flushed); parked calls that now fit are resumed in order. */
void svc_conn_sq_release(struct svc_conn *conn, struct svc_call *cc);

/* svc_recv.c */
void svc_recv_complete(struct svc_recv *rc, const struct ibv_wc *wc);
void svc_recv_start(struct svc_recv *rc, struct svc_call *cc);
/* svc_recv_post_chains - post the Read chains of @cc as one chain
 * (svc_send_submit(): with the batch's replies, or at once), its
 * send-queue slots held (directly, or when parked in CC_SQ_WAIT, by
 * svc_conn_sq_release()). */
void svc_recv_post_chains(struct svc_call *cc);
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
/* svc_send_resume - post the reply chain of @cc (its slots held), or,
 * while gr_post_batch is set, chain it after its connection's other
 * replies of the batch. */
void svc_send_resume(struct svc_call *cc);
/*
 * svc_send_by_worker - on the worker that ran @cc's dispatch function:
 * make the reply and post it from this thread, when the device allows it
 * (dv_worker_posts), the connection is up, no capture records it, no call
 * waits for send-queue slots and the slots the reply may need can be
 * taken now.  Return: true when the reply was posted (its Send completion
 * on the transport thread gives the context back); false when the
 * transport thread must finish it: not tried (nothing done), or tried and
 * cc_worker_fail set (svc_take_done() acts on it).
 */
bool svc_send_by_worker(struct svc_call *cc);
/* svc_send_worker_failed - the transport thread's part of a reply that a
 * worker made but could not post (cc_worker_fail). */
void svc_send_worker_failed(struct svc_call *cc);
/* svc_call_drop - give @cc back now, or, on a worker making its reply,
 * leave that to the transport thread (SVC_WORKER_PUT). */
void svc_call_drop(struct svc_call *cc);
#define SVC_WORKER_PUT 1
/* svc_conn_sq_take - take @n free send-queue slots of @conn (any thread).
 * Return: true when taken. */
bool svc_conn_sq_take(struct svc_conn *conn, uint32_t n);

/* svc_send_submit - post the work requests @first..@last of @conn (linked,
 * @last's next NULL).  In a batch (gr_post_batch) they are chained after
 * @conn's others of this batch for svc_send_flush() to post; otherwise
 * posted at once.  When a post fails the connection goes down and every
 * call whose Send or signalled Read was not posted is given back (no
 * completion comes for it).  Group thread. */
void svc_send_submit(struct svc_conn *conn, struct ibv_send_wr *first, struct ibv_send_wr *last);
/* svc_send_flush - end a batch: post each connection's queued replies
 * and Reads with one post (counted in send_batches); a connection that went down
 * meanwhile gets its queued calls back without posting them. */
void svc_send_flush(struct svc_group *grp);

/* svc_rpc.c */
/*
 * svc_rpc_dispatch - the entry of every transport's calls: decode the RPC
 * call header of cc_call[0 .. cc_call_len), answer what the RPC layer
 * answers itself (RPC_MISMATCH, PROG_UNAVAIL, PROG_MISMATCH), and run the
 * program's dispatch function (on this thread when registered with
 * RPCRDMA_SVC_TRY_TRANSPORT or sc_loop_dispatch, else on a worker).
 * @peer: the caller's address (copied into rq_peer).  Transport thread.
 */
void svc_rpc_dispatch(struct svc_call *cc, const struct sockaddr *peer);
/* svc_rpc_finish - encode the reply header of a served call (cc_status)
 * and send it through its transport (xc_send), or give it back when its
 * connection is closing. */
void svc_rpc_finish(struct svc_call *cc);

/* svc_call_closing - the connection @cc came on is closing. */
static inline bool svc_call_closing(const struct svc_call *cc)
{
	return cc->cc_conn ? atomic_load(&cc->cc_conn->sx_closing) : svc_tcp_closing(cc);
}

/* svc_worker.c */
/* One worker thread of a group: its thread, and the semaphore it sleeps
 * on while idle (posted once each time a flusher takes it off
 * gr_wq_idle_list to hand it a call, or by svc_workers_stop()). */
struct svc_worker {
	pthread_t wk_thread;
	struct svc_group *wk_grp;
	sem_t wk_sem;
	struct svc_worker *wk_next_idle; /* on gr_wq_idle_list (gr_wq_lock) */
};
/*
 * svc_workers_start - start @n worker threads for @grp (none: calls are
 * served by whoever calls svc_worker_run_one()).  Return: 0, or a
 * negative errno of calloc/sem_init/pthread_create (-ENOMEM, -EAGAIN);
 * the workers started are stopped again then.
 */
int svc_workers_start(struct svc_group *grp, unsigned n);
/* svc_workers_stop - tell @grp's workers to end, wake the idle ones, and
 * join them all: each serves what is still on the work queue first. */
void svc_workers_stop(struct svc_group *grp);
/* svc_work_enqueue - add @cc to the run loop's batch for the workers
 * (run-loop thread); svc_work_flush() hands the batch over. */
void svc_work_enqueue(struct svc_group *grp, struct svc_call *cc);
/* svc_work_flush - append the batch to the work queue under one lock,
 * take one idle worker off gr_wq_idle_list per call (as many as there
 * are), and post each one's semaphore after the lock is let go of: no
 * wake when none sleeps, and a woken worker never waits for the lock its
 * waker holds.  Run-loop thread. */
void svc_work_flush(struct svc_group *grp);
/* svc_work_drop_all - with the workers stopped and every connection
 * closing: calls still queued will not run; give them back (drops). */
void svc_work_drop_all(struct svc_group *grp);
/* svc_done_take_all - the calls @grp's workers finished since the last
 * take, oldest first (cc_next), or NULL; one atomic exchange, no lock.
 * Run-loop thread (the only taker). */
struct svc_call *svc_done_take_all(struct svc_group *grp);
/* svc_done_pending - a worker finished a call not taken yet (the
 * spinning run loop of sc_poll looks at it every turn). */
static inline bool svc_done_pending(struct svc_group *grp)
{
	return atomic_load_explicit(&grp->gr_done, memory_order_relaxed) != NULL;
}
/*
 * svc_worker_run_one - one step of a worker: take the oldest call on the
 * work queue, if any, run its dispatch function, move it to the done queue
 * and wake the run loop.  Unit tests call it to run dispatch on their own
 * thread, then svc_take_done() to send the reply.
 * Return: true when it served a call, false when the queue was empty.
 */
bool svc_worker_run_one(struct svc_group *grp);

#endif /* RPCRDMA_SVC_INTERNAL_H */
