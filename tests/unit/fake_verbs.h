/* SPDX-License-Identifier: MIT */
/*
 * fake_verbs.h - one fake verbs device for every unit test that drives a
 * transport through the verbs seam (src/verbs/verbs.h).
 *
 * The device keeps a receive queue (FIFO of posted Receives), a send
 * queue, one completion queue and a table of memory regions.  Posted send
 * work is executed in order: RDMA Read copies from a "remote" buffer (a
 * test-registered handle, or a live fake region with remote access),
 * RDMA Write copies to one, a Send is captured (and handed to an optional
 * responder hook).  Completions are queued and delivered only when the
 * code under test polls.
 *
 * By default send work executes inside the post and nothing else happens
 * by itself (the scripted tests).  For fault injection the test fills
 * fv.fv_faults and sets fv_defer_sq / fv_auto_flush:
 *  - per queue (Send, Receive, RDMA Read, RDMA Write) a percentage of work
 *    requests that complete with an error (IBV_WC_LOC_PROT_ERR for Send and
 *    Receive, IBV_WC_REM_ACCESS_ERR for RDMA Read and Write) and one that
 *    complete with IBV_WC_WR_FLUSH_ERR (the peer went away);
 *  - with fv_auto_flush, an error completion or a disconnect puts the QP in
 *    the error state, as a real RC QP: every Receive still posted and every
 *    send work request not yet executed completes with IBV_WC_WR_FLUSH_ERR
 *    (signalled or not), and work posted afterwards flushes too;
 *  - a percentage of post_send / post_recv calls that fail with ENOMEM and
 *    post nothing (*bad is the first work request);
 *  - a percentage of poll batches whose send-queue and receive-queue
 *    completions are interleaved at random (the order within each queue is
 *    kept: an RC QP completes each queue in order);
 *  - a percentage of post_send calls that run the fv_inside_post hook (the
 *    test polls there) before returning: completions before post returns.
 * Every decision comes from one xorshift generator seeded with
 * fv_faults.ff_seed, so a seed replays the same run exactly.
 */
#ifndef TEST_FAKE_VERBS_H
#define TEST_FAKE_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "verbs/verbs.h"

#define FV_MAX_CQ 4096
#define FV_MAX_RQ 1024
#define FV_MAX_SQ 1024
#define FV_MAX_MR 64
#define FV_MAX_REMOTE 16
#define FV_MAX_SGE 8
#define FV_SENT_MAX 65536
#define FV_MAX_MW 32

/** Queues the injector treats separately. */
enum fv_queue { FV_Q_SEND = 0, FV_Q_RECV, FV_Q_READ, FV_Q_WRITE, FV_NQ };

/** Fault rates, each a percentage 0..100, and the seed. */
struct fv_faults {
	uint64_t ff_seed;
	unsigned ff_error_pct[FV_NQ];   /* completes with an error status */
	unsigned ff_flush_pct[FV_NQ];   /* completes flushed; the QP enters error */
	unsigned ff_post_fail_pct[2];   /* [0] post_send, [1] post_recv: -ENOMEM */
	unsigned ff_reorder_pct;        /* poll batch interleaves SQ and RQ */
	unsigned ff_inside_post_pct;    /* fv_inside_post runs inside post_send */
};

/** A test-owned buffer an RDMA Read or Write may target. */
struct fv_remote {
	uint32_t rm_handle;
	uint64_t rm_base;
	uint8_t *rm_mem;
	size_t rm_len;
};

/** A send work request kept on the fake send queue. */
struct fv_wr {
	uint64_t w_wr_id;
	enum ibv_wr_opcode w_opcode;
	unsigned w_flags;
	uint64_t w_raddr;
	uint32_t w_rkey;
	uint32_t w_inv_rkey;
	struct ibv_sge w_sge[FV_MAX_SGE];
	int w_nsge;
	struct ibv_mw *w_mw;
	uint32_t w_mw_rkey;
	struct ibv_mw_bind_info w_bind;
};

struct fake_verbs {
	/* completion queue; fv_cq_q[] records which queue each came from */
	struct ibv_wc fv_cq[FV_MAX_CQ];
	uint8_t fv_cq_q[FV_MAX_CQ];
	unsigned fv_cq_head, fv_cq_tail;
	unsigned fv_npolls;                  /* poll_cq calls */

	/* receive queue */
	struct ibv_recv_wr fv_rq[FV_MAX_RQ];  /* copies; sg_list points at fv_rq_sge */
	struct ibv_sge fv_rq_sge[FV_MAX_RQ];
	unsigned fv_rq_head, fv_rq_tail;
	unsigned fv_nrecv_posted;            /* Receives posted since reset */
	unsigned fv_nrecv_posts;             /* successful post_recv calls */

	/* send queue: posted, not yet executed */
	struct fv_wr fv_sq[FV_MAX_SQ];
	unsigned fv_sq_head, fv_sq_tail;
	bool fv_defer_sq;     /* execute only in fv_run_sq() */
	bool fv_auto_flush;   /* error or disconnect: QP to error, work flushes */
	bool fv_qp_error;
	unsigned fv_send_post_calls, fv_recv_post_calls; /* attempts */
	bool fv_last_post_was_send; /* order of the last two kinds of post */
	unsigned fv_fail_send_post_at;  /* 1-based post_send attempt that fails */
	unsigned fv_fail_post_after_wrs; /* ... still queueing this many WRs first */
	unsigned fv_fail_recv_post_at;  /* 1-based post_recv attempt that fails */
	bool fv_script_sends; /* successful Sends queue no completion: the test does */

	/* what the device executed */
	uint8_t fv_sent[FV_SENT_MAX];        /* the last Send's bytes */
	uint32_t fv_sent_len;
	int fv_sent_nsge;
	uint64_t fv_send_wr_id;              /* the last Send's wr_id */
	int fv_send_opcode;
	uint32_t fv_inv_rkey;                /* Send With Invalidate's handle, or 0 */
	unsigned fv_nsends, fv_nreads, fv_nwrites, fv_nposts;
	uint64_t fv_send_ids[64];            /* every Send's wr_id and flags, in order */
	unsigned fv_send_flags[64];
	unsigned fv_signaled_writes;         /* RDMA Writes posted signalled */
	unsigned fv_unsignaled_sends;
	struct {
		struct ibv_mw *mw;
		uint32_t rkey;
		struct ibv_mw_bind_info bind_info;
	} fv_binds[8];
	unsigned fv_nbinds;
	uint32_t fv_invs[8];
	unsigned fv_ninvs;
	/* memory windows as bound (BIND_MW) and invalidated (LOCAL_INV, a
	 * Send With Invalidate received); a valid one is an RDMA target */
	struct {
		struct ibv_mw *mw;
		uint32_t rkey;
		uint64_t addr, len;
		int access;
		struct ibv_mr *mr;
		bool valid;
	} fv_mws[FV_MAX_MW];
	unsigned fv_bad_local_invs;          /* LOCAL_INV of no valid window */
	enum ibv_wc_status fv_read_status;   /* forced status of RDMA Reads */

	/* memory */
	struct ibv_mr fv_mrs[FV_MAX_MR];
	bool fv_mr_live[FV_MAX_MR];
	int fv_mr_access[FV_MAX_MR];
	unsigned fv_nregs, fv_nderegs;
	int fv_fail_reg_at;                  /* 1-based registration that fails */
	struct fv_remote fv_remote[FV_MAX_REMOTE];
	unsigned fv_nremote;

	bool fv_disconnected;
	unsigned fv_ndisconnects;
	unsigned fv_ndestroys;        /* rpcrdma_verbs_destroy_id() calls */
	unsigned fv_destroyed_recvs;  /* Receives still posted at those */

	/* hooks: a responder sees each Send's bytes when it executes (return
	 * true when it delivered the Send's completion itself); the test
	 * polls inside post_send */
	bool (*fv_on_send)(const uint8_t *msg, uint32_t len, const struct fv_wr *wr,
			   void *arg);
	void *fv_on_send_arg;
	void (*fv_inside_post)(void *arg);
	void *fv_inside_post_arg;
	bool fv_in_post;

	/* fault injection */
	struct fv_faults fv_faults;
	uint64_t fv_rng;
	unsigned fv_n_errors, fv_n_flushes, fv_n_post_fails, fv_n_reorders, fv_n_inside;
};

extern struct fake_verbs fv;
extern const struct rpcrdma_verbs_ops fv_ops;

/** fv_reset - clear the device and install it as the verbs seam. */
void fv_reset(void);
/** fv_uninstall - put the real verbs back. */
void fv_uninstall(void);
/** fv_seed - set fault rates and seed; turns on deferral and auto-flush. */
void fv_seed(const struct fv_faults *f);

/**
 * fv_run_profiles - run @run once per fault profile and seed.  The profiles
 * cover the first @nq queues (FV_Q_SEND upwards): every fault kind at 0, 1,
 * 10 and 50 % ("all-N"), then each queue's errors and flushes alone at 10 %
 * ("send-error-10", ...), post failures, reordering and completions inside
 * post.  Seeds 1..4, or FAULTS_SEED alone; FAULTS_PROFILE=name runs one.
 */
void fv_run_profiles(unsigned nq, void (*run)(const char *name, const struct fv_faults *f));
/** fv_rand - next value of the seeded generator. */
uint64_t fv_rand(void);
/** fv_roll - true with probability @pct percent. */
bool fv_roll(unsigned pct);

/** fv_push - queue a completion (from queue @q: 0 send, 1 receive). */
void fv_push(uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op,
	     uint32_t len, int q);
/** fv_recvs_posted - Receives currently held by the device. */
unsigned fv_recvs_posted(void);
/** fv_take_recv - pop the oldest posted Receive (its wr_id); fails if none. */
struct ibv_recv_wr *fv_take_recv(void);
/**
 * fv_deliver - an incoming message: fill the oldest Receive with @len
 * bytes and queue its completion (faults applied).
 * Return: 0, -ENOBUFS (no Receive posted), -ENOTCONN (QP in error),
 * -EMSGSIZE (longer than the Receive: completes with IBV_WC_LOC_LEN_ERR).
 */
int fv_deliver(const void *msg, uint32_t len);
/**
 * fv_deliver_inv - as fv_deliver(), received as a Send With Invalidate of
 * @rkey (RFC 8797 section 5): the completion carries IBV_WC_WITH_INV and
 * @rkey, and a valid window with that key is invalidated.
 */
int fv_deliver_inv(const void *msg, uint32_t len, uint32_t rkey);
/**
 * fv_peer_write - the peer RDMA Writes @len bytes from @src to (@rkey,
 * @addr) of ours, as a late Write of a Responder would.
 * Return: 0 (the bytes landed), -ENOTCONN (the QP is in error or
 * disconnected: nothing arrives), -EACCES (no live region or valid window
 * grants remote write there: the Write faults).
 */
int fv_peer_write(uint32_t rkey, uint64_t addr, const void *src, size_t len);
/** fv_window_valid - a window with @rkey is bound and not invalidated. */
bool fv_window_valid(uint32_t rkey);
/** fv_flush_recvs - complete every posted Receive with IBV_WC_WR_FLUSH_ERR. */
void fv_flush_recvs(void);
/** fv_qp_to_error - the QP enters error: everything outstanding flushes. */
void fv_qp_to_error(void);
/** fv_qp_reset - a fresh QP: queues emptied, error state cleared (the
 * generator, fault rates and counters are kept). */
void fv_qp_reset(void);
/** fv_sq_pending - send work requests posted and not yet executed. */
unsigned fv_sq_pending(void);
/** fv_run_sq - execute up to @max pending send work requests; count run. */
unsigned fv_run_sq(unsigned max);
/** fv_cq_pending - completions queued and not yet polled. */
unsigned fv_cq_pending(void);

/** fv_add_remote - a test buffer reachable by RDMA as (@handle, @base). */
void fv_add_remote(uint32_t handle, uint64_t base, uint8_t *mem, size_t len);
/**
 * fv_remote_ptr - the bytes an RDMA operation with (@rkey, @addr, @len)
 * would touch: a test buffer, or a live fake region registered with
 * @access.  NULL when nothing matches.
 */
uint8_t *fv_remote_ptr(uint32_t rkey, uint64_t addr, size_t len, int access);
/** fv_live_mrs - regions registered and not deregistered. */
unsigned fv_live_mrs(void);
/**
 * fv_mw_context - a device context for fake window objects (ibv_mw) that
 * the code under test may free with ibv_dealloc_mw(): freeing a window
 * invalidates it, as on a real device (nothing is freed: the test owns
 * the ibv_mw).
 */
extern struct ibv_context fv_mw_context;

#endif /* TEST_FAKE_VERBS_H */
