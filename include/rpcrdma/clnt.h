/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma/clnt.h - the Requester side: ONC RPC calls over RPC-over-RDMA
 * Version 1 (RFC 8166, RFC 8797), and an NFSv3 client (RFC 1813) on top.
 *
 * Transport (rpcrdma_clnt_*): one RC connection made with rdma_cm, RFC 8797
 * private data both ways, a credit-limited pool of requests with their
 * inline Send buffers registered once, and a completion thread driven by
 * the CQ's completion channel.  Each call is marshalled as RFC 8166 3.5
 * describes:
 *   - inline (RDMA_MSG, no chunks) when transport header + call fit the
 *     Responder's inline receive size;
 *   - otherwise DDP-eligible argument data (NFS WRITE, SYMLINK) goes in a
 *     Read chunk at its XDR position, its XDR pad omitted;
 *   - a call that still does not fit goes whole in a position-zero Read
 *     chunk (RDMA_NOMSG);
 *   - DDP-eligible result data (NFS READ, READLINK) lands in a Write chunk
 *     that points straight at the caller's buffer;
 *   - a Reply chunk is offered when the largest reply the caller expects
 *     does not fit our inline receive size.
 * Memory registration: see enum rpcrdma_clnt_reg for the three modes and
 * what each guarantees; the default (memory windows bound per call) keeps
 * the caller's memory out of the Responder's reach once a call has been
 * reported done, whatever ended it.
 *
 * NFS client (rpcrdma_nfsc_*): MOUNT v3 over TCP with libtirpc, then the
 * NFSv3 procedures over the transport above.  All functions return 0 or
 * a negative errno; NFS3ERR_* statuses map to the errno of the same name.
 */
#ifndef RPCRDMA_CLNT_H
#define RPCRDMA_CLNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rpcrdma/nfs3_prot.h>
#include <rpcrdma/wire.h>
#include <rpcrdma/xdr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Transport                                                           */
/* ------------------------------------------------------------------ */

struct rpcrdma_capture;

/**
 * How the Responder reaches the caller's chunk memory.  In every mode the
 * memory of a call is out of the Responder's reach before the call is
 * reported done (rpcrdma_clnt_call() returns, the callback runs), however
 * it ended: reply, RDMA_ERROR, timeout, abort, disconnect.
 *
 * RPCRDMA_CLNT_REG_WINDOWS (0, the default): buffers given to
 *   rpcrdma_clnt_register_buffer() are registered for local access and
 *   window binding only; each call binds a type 2 memory window over just
 *   its chunk (posted before the Send), other chunk memory is registered
 *   for the call and also exposed through a window.  After the reply the
 *   window is invalidated by the Responder (Send With Invalidate, RFC 8797
 *   section 5, offered with cf_remote_invalidate and checked against the
 *   handle expected) or by a LOCAL_INV whose completion is awaited; after an abort by a LOCAL_INV; after a
 *   timeout or disconnect the QP is in error, the only one the window was
 *   bound to.  The Responder reaches only the chunk, only during the call.
 *   On a device without type 2B windows, or whose max_qp_wr, max_cqe or
 *   max_mw cannot hold the windows and their work requests (3 windows per
 *   request; the requests follow cf_max_credits, the queues also
 *   cf_bc_slots): as RPCRDMA_CLNT_REG_PER_CALL (logged).  Buffers
 *   registered before a reconnect that dropped windows are then
 *   registered per call too.
 * RPCRDMA_CLNT_REG_PER_CALL: every chunk is registered (ibv_reg_mr) for
 *   its call and deregistered before the call is reported done; a late
 *   RDMA access then faults.  rpcrdma_clnt_register_buffer() is refused.
 * RPCRDMA_CLNT_REG_PERSISTENT: registered buffers are registered for
 *   remote read and write: no per-call work, but the Responder can reach
 *   the whole buffer, between calls too, while it stays registered.  A
 *   call that ends before its reply with a chunk in such a buffer (abort,
 *   timeout) closes the connection, the only fence left: other calls in
 *   flight then fail with -ECONNRESET (or are sent again, cf_retries).
 *   Chunks outside registered buffers are registered per call.
 */
enum rpcrdma_clnt_reg {
	RPCRDMA_CLNT_REG_WINDOWS = 0,
	RPCRDMA_CLNT_REG_PER_CALL,
	RPCRDMA_CLNT_REG_PERSISTENT,
};

/** Client configuration; zero fields take the defaults noted. */
struct rpcrdma_clnt_config {
	const char *cf_server;       /* host name or numeric IPv4/IPv6 address */
	uint16_t cf_port;            /* default RPCRDMA_NFS_PORT (20049) */
	const char *cf_source;       /* numeric source address to bind, or NULL */
	uint32_t cf_max_credits;     /* most calls in flight we ask for, default 32 */
	uint32_t cf_inline_size;     /* our inline send and receive size, default 4096 */
	unsigned cf_timeout_ms;      /* per call, default 60000 */
	unsigned cf_connect_timeout_ms; /* address, route, connect: default 5000 each */
	unsigned cf_retries;         /* per call: losses + failed reconnects, default 0;
				      * > 0 also starts the connect worker */
	unsigned cf_backoff_max_ms;  /* reconnect back-off cap, default 8000 */
	enum rpcrdma_clnt_reg cf_reg; /* registration mode, default windows */
	/* offer Send With Invalidate (RFC 8797 5) with windows; default off:
	 * the late reply of an aborted call may then invalidate a window the
	 * abort already invalidated, which Soft-RoCE (6.12) does not survive
	 * (NULL dereference in rxe_invalidate_mw) and other devices answer
	 * with an error that closes the connection.  (Soft-RoCE's own report
	 * of the invalidation, wc_flags 1 << 2, is understood.) */
	bool cf_remote_invalidate;
	bool cf_auth_none;           /* AUTH_NONE instead of AUTH_SYS */
	bool cf_ids_set;             /* use cf_uid/cf_gid, not getuid()/getgid() */
	uint32_t cf_uid, cf_gid;     /* AUTH_SYS identity */
	FILE *cf_log;                /* errors and (verbose) connection log; NULL: stderr */
	int cf_verbose;
	/** Optional: record every message sent and received into this
	 *  capture (<rpcrdma/capture.h>); it must outlive the client. */
	struct rpcrdma_capture *cf_capture;
	/** Backchannel (RFC 8167): calls the server may have outstanding on
	 *  us at once, 0 (default) for no backchannel, at most
	 *  RPCRDMA_CLNT_BC_MAX_SLOTS.  As many Receives are posted beyond the
	 *  forward credits (RFC 8167 4.2.1) and the value is advertised as
	 *  our backchannel credit in every backchannel reply (4.1).  Twice
	 *  as many reply buffers are kept (a call may come while an earlier
	 *  reply's Send is still to complete). */
	uint32_t cf_bc_slots;
};

/** Most backchannel slots (cf_bc_slots) and programs. */
#define RPCRDMA_CLNT_BC_MAX_SLOTS 16u
#define RPCRDMA_CLNT_BC_MAX_PROGS 4u

/**
 * One call.  The caller owns every buffer; they are registered for the
 * duration of rpcrdma_clnt_call() only.
 *
 * Arguments are the XDR-encoded procedure arguments (without the RPC call
 * header, which the transport writes) in three pieces: ca_args, then
 * ca_ddp_len bytes of DDP-eligible data (an opaque's bytes, without pad;
 * its length word ends ca_args), then ca_tail.  ca_args_len and
 * ca_tail_len must be multiples of 4.
 *
 * Results: ca_res receives the RPC reply (header and results) except the
 * DDP-eligible result data, which the Responder writes into ca_rddp when
 * ca_rddp_cap > 0 (RFC 8166 3.4.6: the opaque's length word stays in the
 * results, its bytes and pad are taken out).  ca_res_cap is also the
 * largest reply the caller expects: when it exceeds our inline receive
 * size a Reply chunk is offered.
 */
struct rpcrdma_clnt_call {
	uint32_t ca_prog, ca_vers, ca_proc;
	const void *ca_args;
	uint32_t ca_args_len;   /* bytes, multiple of 4 */
	const void *ca_ddp;
	uint32_t ca_ddp_len;    /* bytes, no pad */
	const void *ca_tail;
	uint32_t ca_tail_len;   /* bytes, multiple of 4 */
	void *ca_res;
	uint32_t ca_res_cap;    /* bytes */
	void *ca_rddp;
	uint32_t ca_rddp_cap;   /* bytes; 0: no Write chunk */
	unsigned ca_timeout_ms; /* 0: the client's default */

	/* out */
	uint32_t ca_res_off;    /* results start here in ca_res */
	uint32_t ca_res_len;    /* bytes of RPC reply in ca_res */
	bool ca_rddp_used;      /* a Write chunk was offered */
	uint32_t ca_rddp_len;   /* bytes the Responder wrote into ca_rddp */
};

/** Counters (monotonic except gauges). */
struct rpcrdma_clnt_stats {
	uint64_t cs_calls;
	uint64_t cs_inline;         /* calls sent without chunks */
	uint64_t cs_read_chunks;    /* calls with a DDP Read chunk */
	uint64_t cs_nomsg;          /* calls sent as a position-zero Read chunk */
	uint64_t cs_write_chunks;   /* calls offering a Write chunk */
	uint64_t cs_reply_chunks;   /* calls offering a Reply chunk */
	uint64_t cs_replies;
	uint64_t cs_rdma_errors;    /* RDMA_ERROR replies */
	uint64_t cs_bad_replies;    /* replies whose header did not decode */
	uint64_t cs_unknown_xid;    /* replies dropped: no such call pending */
	uint64_t cs_timeouts;
	uint64_t cs_credit_waits;   /* a call waited for a credit or request */
	uint64_t cs_reconnects;     /* successful reconnects */
	uint64_t cs_retransmits;    /* calls sent again (same xid) after a reconnect */
	uint64_t cs_reg_per_call;   /* chunks registered for one call */
	uint64_t cs_reg_persistent; /* chunks inside a registered buffer */
	uint64_t cs_mw_binds;       /* memory windows bound (and invalidated) */
	uint64_t cs_remote_invalidates; /* windows the Responder invalidated
					 * (Send With Invalidate, RFC 8797 5) */
	uint64_t cs_bad_invalidates; /* Send With Invalidate of a handle not
				      * expected: the call failed with -EIO */
	uint64_t cs_aborts;         /* calls ended by rpcrdma_clnt_abort() */
	uint64_t cs_late_replies;   /* replies to aborted calls, dropped unread */
	uint64_t cs_fence_disconnects; /* aborts that closed the connection to fence
					* a buffer registered for remote access */
	uint64_t cs_credits;        /* gauge: current grant */
	uint64_t cs_outstanding;    /* gauge: calls in flight */
	uint64_t cs_reqs_in_use;    /* gauge: requests out of the pool */
	uint64_t cs_bc_calls;       /* backchannel calls received (RFC 8167) */
	uint64_t cs_bc_replies;     /* backchannel replies sent */
	uint64_t cs_bc_errors;      /* backchannel calls answered with RDMA_ERROR
				     * (chunks, RFC 8167 5.1) */
	uint64_t cs_bc_drops;       /* backchannel calls not answered: beyond our
				     * backchannel credits, no backchannel, an
				     * unreadable call header, or the connection
				     * went first (calls = replies + errors + drops) */
};

struct rpcrdma_clnt;

/**
 * rpcrdma_clnt_create - connect to a Responder.
 * @cfg: configuration (copied; the strings are used only during the call).
 * @out: the client, owned by the caller (rpcrdma_clnt_destroy()).
 *
 * Resolves the address and route (rdma_cm, IPv4 or IPv6, bound to
 * cf_source when given), creates the QP, registers the request pool, posts
 * the Receives and connects with RFC 8797 private data; the inline
 * thresholds are then min(ours, the peer's), 1024 when the peer sent none.
 * Starts the completion thread.
 *
 * Return: 0; -EINVAL (bad configuration or address, or cf_max_credits
 * needs more work requests or completions than the device's max_qp_wr or
 * max_cqe allow: logged with the sizes); -ENOMEM; -EHOSTUNREACH /
 * -ENETUNREACH (no route, or no RDMA device for it);
 * -ECONNREFUSED (rejected); -ETIMEDOUT; -ECONNRESET (CONNECT_ERROR
 * without a status, or DISCONNECTED before the connection was up);
 * -ENODEV (DEVICE_REMOVAL while connecting); -EPROTO (any other
 * unexpected CM event); another negative errno from rdma_cm or verbs.
 */
int rpcrdma_clnt_create(const struct rpcrdma_clnt_config *cfg,
			struct rpcrdma_clnt **out);

/**
 * rpcrdma_clnt_call - make one call and wait for its reply.
 * @cl: the client; any number of threads may call at once, at most the
 *      current credit grant are in flight, the others wait.
 * @ca: the call (in: program, procedure, buffers; out: where the results
 *      are).
 *
 * With cf_retries > 0, a call in flight when the connection is lost is
 * kept and sent again with the same xid (so the server's duplicate
 * request cache can recognise it) once the client has reconnected (a
 * connect worker thread does, waiting 0, 250, 500, ... up to
 * cf_backoff_max_ms between attempts), before any new call; a call that
 * timed out or found no connection reconnects and is sent again the same
 * way; a call started while the connection is down waits for the
 * reconnect (up to its timeout).  Each loss, each timeout and each
 * failed reconnect counts as a retry of the call (cf_retries in all).
 *
 * Return: 0 when the call was accepted with SUCCESS (results at
 * ca_res + ca_res_off); -EINVAL (inconsistent @ca); -EMSGSIZE (the call
 * cannot be marshalled, or the reply does not fit ca_res / ca_rddp);
 * -ENOMEM or another negative errno from memory registration;
 * -ENOTCONN (the connection is gone); -ECONNRESET (lost while waiting);
 * -ETIMEDOUT (no reply in time: the connection is then closed, since a
 * Responder that may still be working on the call can no longer be
 * trusted with credits); -EIO (RDMA_ERROR for this call, or a reply whose
 * transport header does not decode); for a reply that is not
 * MSG_ACCEPTED/SUCCESS: -EPROTONOSUPPORT (PROG_UNAVAIL, PROG_MISMATCH),
 * -EOPNOTSUPP (PROC_UNAVAIL), -EBADMSG (GARBAGE_ARGS or an undecodable
 * RPC reply), -EREMOTEIO (SYSTEM_ERR), -EACCES (AUTH_ERROR), -EPROTO
 * (RPC_MISMATCH).
 */
int rpcrdma_clnt_call(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca);

/**
 * rpcrdma_clnt_done_fn - completion callback of an asynchronous call.
 * @ca: the call (results filled as rpcrdma_clnt_call() fills them).
 * @status: what rpcrdma_clnt_call() would have returned, or -ECANCELED
 *          after rpcrdma_clnt_abort().
 * @arg: the pointer given with the call.
 *
 * Runs on the completion thread, or on a thread calling into the client:
 * rpcrdma_clnt_call(), rpcrdma_clnt_call_async(),
 * rpcrdma_clnt_try_call_async(), rpcrdma_clnt_abort(),
 * rpcrdma_clnt_batch_end() and rpcrdma_clnt_destroy() run, before they
 * return, the callbacks of the calls that ended meanwhile, which may be
 * other calls than their own (lost with a failed post, timed out,
 * aborted).  Always without the client's lock, after the call's memory
 * has been deregistered, and once per call.  It must not wait for calls,
 * nor start one with rpcrdma_clnt_call() or rpcrdma_clnt_call_async():
 * those may wait for a credit that only the completion thread can
 * return.  It may start calls with rpcrdma_clnt_try_call_async() and
 * abort calls with rpcrdma_clnt_abort(), on this client (the calls ending
 * meanwhile are then reported after it returns: a client's callbacks
 * never run inside one of its own) or another one (whose ended calls are
 * reported there, unless this thread is already inside one of that
 * client's callbacks).
 */
typedef void (*rpcrdma_clnt_done_fn)(struct rpcrdma_clnt_call *ca, int status, void *arg);

/**
 * rpcrdma_clnt_call_async - start one call; @done reports its outcome.
 * @cl, @ca: as for rpcrdma_clnt_call(); @ca and its buffers must stay
 *      valid until @done has run.
 * @done, @arg: the completion callback and its argument.
 * @xid: out (optional): the call's xid, for rpcrdma_clnt_abort().
 *
 * Blocks while the credit window is full (back-pressure) and, with
 * cf_retries, while the client reconnects (up to ca_timeout_ms).  The call
 * times out after ca_timeout_ms like a synchronous one (checked every
 * 200 ms), also while it waits to be sent again; with cf_retries a call
 * lost with its connection is sent again as rpcrdma_clnt_call()
 * describes, and @done runs once with the final outcome.
 * Return: 0 (@done will run exactly once), or before anything was sent
 * -EINVAL, -EMSGSIZE, -ENOMEM, -ENOTCONN, or a registration error (@done
 * will not run).
 */
int rpcrdma_clnt_call_async(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
			    rpcrdma_clnt_done_fn done, void *arg, uint32_t *xid);

/**
 * rpcrdma_clnt_try_call_async - start one call if that needs no waiting.
 * @cl, @ca, @done, @arg, @xid: as for rpcrdma_clnt_call_async().
 *
 * As rpcrdma_clnt_call_async(), but it never blocks: when the credit
 * window (RFC 8166 section 3.3.1) is full, no request is free, calls wait
 * to be sent again, or the connection is down and the connect worker
 * (cf_retries) will make a new one, it returns -EAGAIN at once and
 * nothing was sent; in the last case the worker is asked to reconnect,
 * as for a call that waits.  Outside a callback of @cl, an -EAGAIN first
 * posts the Sends this thread's open batch (rpcrdma_clnt_batch_begin())
 * holds: the credits they took come back only with their replies.  It may
 * be called from a completion callback (rpcrdma_clnt_done_fn), where a
 * call ending frees the credit the next one takes: a caller keeping calls
 * in flight restarts them there without waking a thread of its own.  The
 * Sends of the calls that callbacks start on the completion thread during
 * one wake-up are queued and posted together after those callbacks, as
 * rpcrdma_clnt_batch_begin() does (one doorbell, unless another thread's
 * post sends the queue earlier).
 * Return: 0 (@done will run exactly once); or, before anything was sent,
 * -EAGAIN (try again later, from a thread that may wait), -EINVAL,
 * -EMSGSIZE, -ENOMEM, -ENOTCONN (no connection and none coming), or a
 * registration error (@done will not run).
 */
int rpcrdma_clnt_try_call_async(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_call *ca,
				rpcrdma_clnt_done_fn done, void *arg, uint32_t *xid);

/**
 * rpcrdma_clnt_batch_begin - start a batch of asynchronous calls.
 * @cl: the client.
 *
 * The Sends of the asynchronous calls this thread starts from now until
 * rpcrdma_clnt_batch_end() (rpcrdma_clnt_call_async(), without memory
 * windows to bind) are queued in order and posted together, with one
 * ibv_post_send (one doorbell; with Soft-RoCE one system call instead of
 * one per call).  Nothing is held back for long: the queue is posted at
 * rpcrdma_clnt_batch_end(), before this thread waits for a credit or a
 * reconnect or gets -EAGAIN from rpcrdma_clnt_try_call_async() (outside
 * @cl's callbacks, whose batch the completion thread posts after them),
 * and at once when any other thread posts (or this one makes a
 * synchronous call).  For such a wait the batch is given up, so that
 * the calls the completion thread's callbacks start meanwhile are batched
 * in turn, and taken back after it, unless another thread has opened one
 * meanwhile: this thread's calls are then posted at once until its end.
 * A queued call counts as sent: its credit is taken, its timeout runs,
 * and it may be aborted.  Batches nest (the outermost end posts); while
 * another thread holds a batch open on @cl, this call does nothing and
 * this thread's calls are posted at once.
 * Must not be called from a completion callback.
 */
void rpcrdma_clnt_batch_begin(struct rpcrdma_clnt *cl);

/**
 * rpcrdma_clnt_batch_end - end a batch: post the queued Sends.
 * @cl: the client.
 *
 * A failed post closes the connection: the queued calls then end as calls
 * lost with their connection do (-ECONNRESET, or sent again with
 * cf_retries), their callbacks run before this returns or on the
 * completion thread.  Without a matching rpcrdma_clnt_batch_begin() of
 * this thread, nothing happens.
 */
void rpcrdma_clnt_batch_end(struct rpcrdma_clnt *cl);

/**
 * rpcrdma_clnt_abort - give up a pending call.
 * @cl: the client.  @xid: the call's xid.
 *
 * The call completes with -ECANCELED (its synchronous caller returns it,
 * or its callback gets it), and only once its memory is fenced as its
 * registration mode allows (enum rpcrdma_clnt_reg): windows invalidated
 * with LOCAL_INV (the callback then runs on the completion thread once
 * the invalidation has completed), per-call regions deregistered, and a
 * chunk in a buffer registered for remote access fenced by closing the
 * connection.  A late RDMA Write or Read from the Responder then faults
 * or never arrives.  The Responder may still hold the call: its credit
 * stays taken and its xid known (RFC 8166 3.3.1) until a reply with that
 * xid arrives, which is then dropped unread (cs_late_replies), or the
 * connection goes; so every late reply finds a posted Receive.
 * A call waiting to be sent again after a reconnect is simply dropped
 * (-ECANCELED): the Responder holds nothing of it; one that a reconnect
 * is marshalling again at that moment is dropped by the reconnect, which
 * then does not send it (its outcome comes when the reconnect is done).
 * Return: 0; -ENOENT when no call with @xid is pending or its outcome is
 * already decided (a reply arrived first: the call reports it).
 */
int rpcrdma_clnt_abort(struct rpcrdma_clnt *cl, uint32_t xid);

/** Most buffers registered at once with rpcrdma_clnt_register_buffer(). */
#define RPCRDMA_CLNT_MAX_BUFFERS 16

/**
 * rpcrdma_clnt_register_buffer - keep @len bytes at @addr registered for
 * the Responder's RDMA Read and Write until unregistered.
 * @cl: the client.  @addr, @len: the buffer (@len > 0).
 *
 * Calls whose chunk memory (ca_ddp, ca_rddp, ca_res) lies inside such a
 * buffer use its registration instead of registering per call.
 * RPCRDMA_CLNT_REG_WINDOWS (default): the buffer is registered for local
 * access and window binding only; each call binds a type 2 memory window
 * over just its chunk: no per-call system call, and the Responder reaches
 * only the chunk, only during the call.
 * RPCRDMA_CLNT_REG_PERSISTENT: the buffer is registered for remote
 * access: the fastest mode and the weakest isolation, since the Responder
 * can reach the whole buffer, between calls too, as long as it stays
 * registered (an abort or timeout closes the connection).
 * Re-registered automatically after a reconnect.
 *
 * Return: 0; -EINVAL (@len 0 or overlapping another buffer); -ENOSPC
 * (RPCRDMA_CLNT_MAX_BUFFERS in use); -ENOTCONN; -EOPNOTSUPP
 * (RPCRDMA_CLNT_REG_PER_CALL, or windows on a device without type 2B
 * windows: the caller's calls then register per call); a registration
 * error.
 */
int rpcrdma_clnt_register_buffer(struct rpcrdma_clnt *cl, void *addr, size_t len);

/**
 * rpcrdma_clnt_unregister_buffer - release a registered buffer.
 * Return: 0; -ENOENT (@addr does not start one); -EBUSY (a call in
 * flight uses it).
 */
int rpcrdma_clnt_unregister_buffer(struct rpcrdma_clnt *cl, void *addr);

/**
 * rpcrdma_clnt_inline_send - the Responder's inline receive size in use
 * (bytes): header + call above it needs chunks (RFC 8797 4).
 */
uint32_t rpcrdma_clnt_inline_send(const struct rpcrdma_clnt *cl);

/** rpcrdma_clnt_inline_recv - our inline receive size in use (bytes). */
uint32_t rpcrdma_clnt_inline_recv(const struct rpcrdma_clnt *cl);

/** rpcrdma_clnt_get_stats - copy the counters. */
void rpcrdma_clnt_get_stats(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_stats *st);

/**
 * rpcrdma_clnt_bc_fn - serve one backchannel call (RFC 8167).
 * @call: the decoded RPC call header (prog, vers, proc, credential).
 * @args: its arguments (cursor just past the call header).
 * @res: where the results go (cursor past the reply header; room: our
 *   inline send threshold less the headers).
 * @arg: the pointer given to rpcrdma_clnt_bc_register().
 * Runs on the completion thread, no lock held: it must not block and must
 * not wait for a forward call's reply.  Return: an accept_stat
 * (RPC_ACCEPT_SUCCESS ...); anything but SUCCESS discards @res and is
 * answered as that status.  Results that overflow @res are answered with
 * SYSTEM_ERR.
 */
typedef int (*rpcrdma_clnt_bc_fn)(const struct rpcrdma_rpc_msg *call,
				  struct rpcrdma_xdr *args, struct rpcrdma_xdr *res,
				  void *arg);

/**
 * rpcrdma_clnt_bc_register - serve backchannel calls of @prog / @vers with
 * @fn (any time after rpcrdma_clnt_create(); calls of programs not
 * registered are answered PROG_UNAVAIL, or PROG_MISMATCH with the versions
 * we have).  The client must have been created with cf_bc_slots > 0.
 * Return: 0; -EEXIST (already registered); -ENOSPC (RPCRDMA_CLNT_BC_MAX_PROGS
 * registered); -EOPNOTSUPP (cf_bc_slots is 0); -EINVAL (@fn NULL).
 */
int rpcrdma_clnt_bc_register(struct rpcrdma_clnt *cl, uint32_t prog, uint32_t vers,
			     rpcrdma_clnt_bc_fn fn, void *arg);

/**
 * rpcrdma_clnt_destroy - stop the connect worker, disconnect, fail calls
 * still waiting (to be sent again too) with -ECONNRESET, stop the
 * completion thread, free everything (NULL: no-op).
 * No other thread may be inside rpcrdma_clnt_call() when the memory is
 * freed: callers must have returned.
 */
void rpcrdma_clnt_destroy(struct rpcrdma_clnt *cl);

/* ------------------------------------------------------------------ */
/* NFSv3 client                                                        */
/* ------------------------------------------------------------------ */

#define RPCRDMA_NFSC_FHSIZE RPCRDMA_NFS3_FHSIZE
/** Most RDMA connections of one mount (nf_nconnect). */
#define RPCRDMA_NFSC_MAX_CONNECT 16u

/** An NFSv3 file handle (RFC 1813 2.5, nfs_fh3). */
struct rpcrdma_nfsc_fh {
	uint32_t fh_len;
	uint8_t fh_data[RPCRDMA_NFSC_FHSIZE];
};

/** File types (RFC 1813 2.5, ftype3). */
enum rpcrdma_nfsc_ftype {
	NFSC_REG = NF3REG, NFSC_DIR = NF3DIR, NFSC_BLK = NF3BLK,
	NFSC_CHR = NF3CHR, NFSC_LNK = NF3LNK, NFSC_SOCK = NF3SOCK,
	NFSC_FIFO = NF3FIFO,
};

/** Attributes (RFC 1813 2.5, fattr3); times in seconds + nanoseconds. */
struct rpcrdma_nfsc_attr {
	uint32_t at_type;   /* enum rpcrdma_nfsc_ftype */
	uint32_t at_mode, at_nlink, at_uid, at_gid;
	uint64_t at_size, at_used;
	uint32_t at_rdev_major, at_rdev_minor;
	uint64_t at_fsid, at_fileid;
	uint32_t at_atime_s, at_atime_ns;
	uint32_t at_mtime_s, at_mtime_ns;
	uint32_t at_ctime_s, at_ctime_ns;
};

/** FSSTAT results (RFC 1813 3.3.18), bytes and file slots. */
struct rpcrdma_nfsc_fsstat {
	uint64_t fs_tbytes, fs_fbytes, fs_abytes;
	uint64_t fs_tfiles, fs_ffiles, fs_afiles;
	uint32_t fs_invarsec;
};

/** FSINFO results (RFC 1813 3.3.19), bytes. */
struct rpcrdma_nfsc_fsinfo {
	uint32_t fi_rtmax, fi_rtpref, fi_rtmult;
	uint32_t fi_wtmax, fi_wtpref, fi_wtmult;
	uint32_t fi_dtpref;
	uint64_t fi_maxfilesize;
	uint32_t fi_properties;
};

/** NFS client configuration; zero fields take the defaults noted. */
struct rpcrdma_nfsc_config {
	const char *nf_server;     /* host name or numeric address */
	const char *nf_export;     /* exported path to MOUNT */
	uint16_t nf_port;          /* NFS over RDMA, default 20049 */
	uint16_t nf_mount_port;    /* MOUNT over TCP; 0: ask rpcbind */
	const char *nf_source;     /* source address for RDMA, or NULL */
	uint32_t nf_rsize;         /* READ size, default 1 MiB (capped by FSINFO rtmax) */
	uint32_t nf_wsize;         /* WRITE size, default 1 MiB (capped by FSINFO wtmax) */
	uint32_t nf_credits;       /* default 32 */
	unsigned nf_retries;       /* reconnects + retransmissions per call, default 0 */
	enum rpcrdma_clnt_reg nf_reg; /* see cf_reg; default windows */
	bool nf_remote_invalidate; /* see cf_remote_invalidate */
	unsigned nf_nconnect;      /* RDMA connections the calls are spread over
				    * (like the kernel's nconnect): default 1,
				    * at most RPCRDMA_NFSC_MAX_CONNECT */
	unsigned nf_timeout_ms;    /* per call, default 60000; also MOUNT's (and
				    * rpcbind's) connect and call, 10000 when 0 */
	FILE *nf_log;
	int nf_verbose;
	struct rpcrdma_capture *nf_capture; /* see cf_capture */
};

struct rpcrdma_nfsc;

/**
 * rpcrdma_nfsc_mount - MOUNT v3 (RFC 1813 5.2.1) the export over TCP, then
 * connect the NFSv3 transport and read FSINFO (rsize/wsize are capped to
 * the server's rtmax/wtmax).
 * @cfg: configuration (strings used during the call only).
 * @out: the mount, owned by the caller (rpcrdma_nfsc_umount()).
 *
 * Return: 0; -EINVAL; -ENOMEM; -ENXIO when nf_server does not resolve
 * (getaddrinfo(3) found no address: not retried, nothing sent);
 * -ECONNREFUSED / -EHOSTUNREACH / -ETIMEDOUT from MOUNT (libtirpc) or the
 * transport (MOUNT's -EHOSTUNREACH: no route to an address the name has;
 * -ETIMEDOUT: no connection or no answer within nf_timeout_ms, 10 s when
 * 0, per attempt); other connect() errors of MOUNT; -ENOENT / -EACCES /
 * -EPERM / -ENOTDIR from the MOUNT status; errors of
 * rpcrdma_clnt_create().  A failed MOUNT call's libtirpc message
 * ("RPC: Timed out") goes to nf_log only when nf_verbose; the error is
 * the caller's to tell.
 */
int rpcrdma_nfsc_mount(const struct rpcrdma_nfsc_config *cfg,
		       struct rpcrdma_nfsc **out);

/** The step of a mount that failed (rpcrdma_nfsc_mount_step()). */
enum rpcrdma_nfsc_step {
	RPCRDMA_NFSC_STEP_NONE = 0,   /* none failed, or the configuration */
	RPCRDMA_NFSC_STEP_MOUNT,      /* MOUNT over TCP (and rpcbind for its port) */
	RPCRDMA_NFSC_STEP_CONNECT,    /* the RPC-over-RDMA connection (rdma_cm) */
	RPCRDMA_NFSC_STEP_FSINFO,     /* FSINFO of the export's root over RDMA */
};

/**
 * rpcrdma_nfsc_mount_step - rpcrdma_nfsc_mount(), also saying which step
 * failed, so that a caller can tell a MOUNT refused (rpcbind, the MOUNT
 * port) from an RPC-over-RDMA connection refused (the NFS port) when both
 * return -ECONNREFUSED.
 * @cfg, @out: as rpcrdma_nfsc_mount().
 * @step: where the step that failed is written (RPCRDMA_NFSC_STEP_NONE on
 *        success, or when @cfg itself was refused, or on -ENOMEM before
 *        any step); may be NULL.
 *
 * Return: as rpcrdma_nfsc_mount().
 */
int rpcrdma_nfsc_mount_step(const struct rpcrdma_nfsc_config *cfg,
			    struct rpcrdma_nfsc **out, enum rpcrdma_nfsc_step *step);

/** rpcrdma_nfsc_umount - send UMNT, close the transport, free (NULL: no-op). */
void rpcrdma_nfsc_umount(struct rpcrdma_nfsc *nc);

/** rpcrdma_nfsc_root - the export's root handle (from MOUNT). */
void rpcrdma_nfsc_root(const struct rpcrdma_nfsc *nc, struct rpcrdma_nfsc_fh *fh);

/** rpcrdma_nfsc_rsize / _wsize - transfer sizes in use (bytes). */
uint32_t rpcrdma_nfsc_rsize(const struct rpcrdma_nfsc *nc);
uint32_t rpcrdma_nfsc_wsize(const struct rpcrdma_nfsc *nc);

/** rpcrdma_nfsc_clnt - the (first) transport connection. */
struct rpcrdma_clnt *rpcrdma_nfsc_clnt(struct rpcrdma_nfsc *nc);

/** rpcrdma_nfsc_nconnect - the number of RDMA connections in use. */
unsigned rpcrdma_nfsc_nconnect(const struct rpcrdma_nfsc *nc);

/** rpcrdma_nfsc_conn - connection @i (0 .. rpcrdma_nfsc_nconnect() - 1),
 * or NULL beyond. */
struct rpcrdma_clnt *rpcrdma_nfsc_conn(struct rpcrdma_nfsc *nc, unsigned i);

/**
 * rpcrdma_nfsc_get_stats - the transport counters summed over every
 * connection of the mount (gauges summed too: credits is the sum of the
 * grants).
 */
void rpcrdma_nfsc_get_stats(struct rpcrdma_nfsc *nc, struct rpcrdma_clnt_stats *st);

/**
 * rpcrdma_nfsc_register_buffer - rpcrdma_clnt_register_buffer() on every
 * connection of the mount, so that READs and WRITEs into @addr use the
 * registration whichever connection carries them.
 * Return: 0, or the first connection's error (the others are then
 * unregistered again); errors as rpcrdma_clnt_register_buffer().
 */
int rpcrdma_nfsc_register_buffer(struct rpcrdma_nfsc *nc, void *addr, size_t len);

/** rpcrdma_nfsc_unregister_buffer - undo rpcrdma_nfsc_register_buffer().
 * Return: 0, or the first error of rpcrdma_clnt_unregister_buffer(). */
int rpcrdma_nfsc_unregister_buffer(struct rpcrdma_nfsc *nc, void *addr);

/*
 * The procedures below (RFC 1813 3.3.x) each return 0, a negative errno
 * for an NFS3ERR_* status (NFS3ERR_NOENT -> -ENOENT, ..., BADHANDLE and
 * STALE -> -ESTALE, NOTSUPP -> -EOPNOTSUPP, SERVERFAULT -> -EREMOTEIO,
 * JUKEBOX -> -EAGAIN, others -> -EIO), -EBADMSG when the results do not
 * decode, or an error of rpcrdma_clnt_call().  Names are at most 255
 * bytes (-ENAMETOOLONG).  Optional out pointers may be NULL.
 */

/** rpcrdma_nfsc_null - NFSPROC3_NULL (3.3.0). */
int rpcrdma_nfsc_null(struct rpcrdma_nfsc *nc);

/** rpcrdma_nfsc_getattr - GETATTR (3.3.1). */
int rpcrdma_nfsc_getattr(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			 struct rpcrdma_nfsc_attr *attr);

/**
 * rpcrdma_nfsc_lookup - LOOKUP (3.3.3) @name in @dir.
 * @fh: out: its handle; @attr: out (optional): its attributes (fetched
 * with GETATTR when the reply carries none).
 */
int rpcrdma_nfsc_lookup(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			const char *name, struct rpcrdma_nfsc_fh *fh,
			struct rpcrdma_nfsc_attr *attr);

/**
 * rpcrdma_nfsc_lookup_path - LOOKUP each '/'-separated component of @path
 * from the root ("", "/" and "." are the root).  Return as LOOKUP.
 */
int rpcrdma_nfsc_lookup_path(struct rpcrdma_nfsc *nc, const char *path,
			     struct rpcrdma_nfsc_fh *fh, struct rpcrdma_nfsc_attr *attr);

/** rpcrdma_nfsc_access - ACCESS (3.3.4): @want bits in, granted bits out. */
int rpcrdma_nfsc_access(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			uint32_t want, uint32_t *granted);

/**
 * rpcrdma_nfsc_read - READ (3.3.6) up to @count bytes at @offset into @buf
 * (the Responder writes them there through a Write chunk).
 * @count: at most rpcrdma_nfsc_rsize().  @nread, @eof: out.
 */
int rpcrdma_nfsc_read(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
		      uint64_t offset, void *buf, uint32_t count,
		      uint32_t *nread, bool *eof);

/**
 * rpcrdma_nfsc_read_pipelined - READ @len bytes at @offset into @buf with
 * up to @depth READs of rpcrdma_nfsc_rsize() bytes in flight (asynchronous
 * calls), each placed by the server straight into its part of @buf.
 * Short reads before end of file are completed with further READs.
 * @nread: out: bytes read; less than @len only at end of file.
 * Return: 0, -EINVAL (@depth 0), -ENOMEM, or the first error of a READ.
 */
int rpcrdma_nfsc_read_pipelined(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
				uint64_t offset, void *buf, uint64_t len, unsigned depth,
				uint64_t *nread);

/**
 * rpcrdma_nfsc_write_pipelined - WRITE @len bytes from @buf at @offset with
 * up to @depth WRITEs of rpcrdma_nfsc_wsize() bytes in flight.
 * @stable: as for rpcrdma_nfsc_write().
 * @verf: out (optional): the last write verifier seen.
 * @verf_changed: out (optional): the verifier differed between WRITEs
 *        (the server restarted: UNSTABLE data may be lost).
 * Return: 0, -EINVAL, -ENOMEM, or the first error of a WRITE.
 */
int rpcrdma_nfsc_write_pipelined(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
				 uint64_t offset, const void *buf, uint64_t len,
				 unsigned depth, uint32_t stable, uint8_t verf[8],
				 bool *verf_changed);

/**
 * rpcrdma_nfsc_fill_fn - source of a streamed WRITE's data.
 * @arg: the pointer given to rpcrdma_nfsc_write_stream().
 * @offset: file offset of the piece; @buf: where its @len bytes go (a
 *          slot of the ring, not in flight).
 * Called on the thread of rpcrdma_nfsc_write_stream(), pieces in file
 * order, while other WRITEs are in flight.
 * Return: 0 when all @len bytes are in @buf, or a negative errno, which
 * stops the stream and is returned by rpcrdma_nfsc_write_stream().
 */
typedef int (*rpcrdma_nfsc_fill_fn)(void *arg, uint64_t offset, void *buf, uint32_t len);

/**
 * rpcrdma_nfsc_write_stream - WRITE (3.3.7) @len bytes at @offset, the
 * data asked piece by piece from @fill, with up to @depth WRITEs of
 * rpcrdma_nfsc_wsize() bytes in flight all the way (a new piece is filled
 * and sent as soon as a WRITE completes, so the source's reading overlaps
 * the transfers and the pipeline never drains before the end).
 * @ring: @depth * rpcrdma_nfsc_wsize() bytes owned by the caller (register
 *        it with rpcrdma_nfsc_register_buffer() to save per-call work);
 *        each slot holds one piece until the server has taken all of it.
 * @stable: as for rpcrdma_nfsc_write().
 * @written: out (optional): bytes from @offset the server took for sure
 *        (every byte before the first one not written), also on error: a
 *        caller resuming after a reconnect starts from there.
 * @verf, @verf_changed: out (optional, on success) as for
 *        rpcrdma_nfsc_write_pipelined().
 * A short WRITE is completed from its slot with further WRITEs.
 * Return: 0; -EINVAL (@depth 0, no @fill, no @ring, @stable above 2);
 * -ENOMEM; -EIO when a WRITE takes no byte; the first error of @fill or
 * of a WRITE (as rpcrdma_nfsc_write()).
 */
int rpcrdma_nfsc_write_stream(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			      uint64_t offset, uint64_t len, void *ring, unsigned depth,
			      uint32_t stable, rpcrdma_nfsc_fill_fn fill, void *arg,
			      uint64_t *written, uint8_t verf[8], bool *verf_changed);

/**
 * rpcrdma_nfsc_drain_fn - taker of a streamed READ's data.
 * @arg: the pointer given to rpcrdma_nfsc_read_stream().
 * @offset: file offset of the piece; @buf: its @len bytes (1 to
 *          rpcrdma_nfsc_rsize()), in a slot of the ring.
 * Called on the thread of rpcrdma_nfsc_read_stream(), pieces in file
 * order with no gap, while other READs are in flight.  @buf stays
 * untouched until the next call or until rpcrdma_nfsc_read_stream()
 * returns, so the caller may hand it to another thread and wait for that
 * thread at its next call.
 * Return: 0 when it took the piece, or a negative errno, which stops the
 * stream and is returned by rpcrdma_nfsc_read_stream() (the piece is not
 * counted as delivered).
 */
typedef int (*rpcrdma_nfsc_drain_fn)(void *arg, uint64_t offset, const void *buf,
				     uint32_t len);

/**
 * rpcrdma_nfsc_read_stream - READ (3.3.6) up to @len bytes at @offset with
 * up to @depth READs of rpcrdma_nfsc_rsize() bytes in flight all the way
 * (a new READ is sent as soon as one completes, so the pipeline never
 * drains before the end), handing the data to @drain in file order.
 * @len: bytes wanted; the stream stops earlier at end of file, so
 *       UINT64_MAX - @offset reads to end of file.
 * @ring: (@depth + 1) * rpcrdma_nfsc_rsize() bytes owned by the caller
 *        (register it with rpcrdma_nfsc_register_buffer() to save per-call
 *        work); the READs land in it.
 * @delivered: out (optional): bytes from @offset handed to @drain (they
 *        are contiguous), also on error: a caller resuming after a
 *        reconnect starts from @offset + *@delivered.
 * @eof: out (optional): true when a READ returned eof (RFC 1813 3.3.6);
 *        the stream stopped there.
 * A short READ without eof is continued from its slot with further READs
 * of the rest.  READs already in flight past the end of file are waited
 * for and ignored.
 * Return: 0 (all @len bytes delivered, or end of file); -EINVAL (@depth
 * 0, no @drain, no @ring); -ENOMEM; -EIO when a READ returns no byte
 * without eof; the first error of @drain or of a READ (as
 * rpcrdma_nfsc_read(): the NFS status as a negative errno, -ECONNRESET,
 * -ENOTCONN, -ETIMEDOUT when the connection went away).
 */
int rpcrdma_nfsc_read_stream(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			     uint64_t offset, uint64_t len, void *ring, unsigned depth,
			     rpcrdma_nfsc_drain_fn drain, void *arg, uint64_t *delivered,
			     bool *eof);

/**
 * rpcrdma_nfsc_write - WRITE (3.3.7) @count bytes from @buf at @offset
 * (sent in a Read chunk when they do not fit inline).
 * @stable: 0 UNSTABLE, 1 DATA_SYNC, 2 FILE_SYNC.  @written: out.
 * @verf: out (optional): the 8-byte write verifier.
 */
int rpcrdma_nfsc_write(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
		       uint64_t offset, const void *buf, uint32_t count,
		       uint32_t stable, uint32_t *written, uint8_t verf[8]);

/**
 * rpcrdma_nfsc_create - CREATE (3.3.8) @name in @dir, UNCHECKED with mode
 * @mode; @truncate also sets size 0 (an existing file is emptied).
 */
int rpcrdma_nfsc_create(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			const char *name, uint32_t mode, bool truncate,
			struct rpcrdma_nfsc_fh *fh);

/** rpcrdma_nfsc_mkdir - MKDIR (3.3.9). */
int rpcrdma_nfsc_mkdir(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
		       const char *name, uint32_t mode, struct rpcrdma_nfsc_fh *fh);

/** rpcrdma_nfsc_symlink - SYMLINK (3.3.10): @name in @dir pointing at @target. */
int rpcrdma_nfsc_symlink(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			 const char *name, const char *target);

/**
 * rpcrdma_nfsc_readlink - READLINK (3.3.5) into @buf (NUL-terminated).
 * @cap: bytes at @buf; a target of @cap bytes or more is -ENAMETOOLONG.
 */
int rpcrdma_nfsc_readlink(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			  char *buf, uint32_t cap);

/** rpcrdma_nfsc_remove - REMOVE (3.3.12). */
int rpcrdma_nfsc_remove(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			const char *name);

/** rpcrdma_nfsc_rmdir - RMDIR (3.3.13). */
int rpcrdma_nfsc_rmdir(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
		       const char *name);

/** rpcrdma_nfsc_rename - RENAME (3.3.14). */
int rpcrdma_nfsc_rename(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *from_dir,
			const char *from, const struct rpcrdma_nfsc_fh *to_dir,
			const char *to);

/**
 * rpcrdma_nfsc_readdir_fn - one directory entry from READDIRPLUS.
 * @attr, @fh: NULL when the server returned none.
 * Return: 0 to go on, non-zero to stop (rpcrdma_nfsc_readdirplus returns it).
 */
typedef int (*rpcrdma_nfsc_readdir_fn)(const char *name, uint64_t fileid,
				       const struct rpcrdma_nfsc_attr *attr,
				       const struct rpcrdma_nfsc_fh *fh, void *arg);

/**
 * rpcrdma_nfsc_readdirplus - READDIRPLUS (3.3.17) the whole directory,
 * "." and ".." included, calling @fn per entry (replies of up to 32 KiB,
 * through a Reply chunk).
 */
int rpcrdma_nfsc_readdirplus(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			     rpcrdma_nfsc_readdir_fn fn, void *arg);

/** rpcrdma_nfsc_fsstat - FSSTAT (3.3.18). */
int rpcrdma_nfsc_fsstat(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			struct rpcrdma_nfsc_fsstat *st);

/** rpcrdma_nfsc_fsinfo - FSINFO (3.3.19). */
int rpcrdma_nfsc_fsinfo(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			struct rpcrdma_nfsc_fsinfo *fi);

/** Attributes to set (RFC 1813 2.6, sattr3); false fields stay unchanged. */
struct rpcrdma_nfsc_sattr {
	bool sa_set_mode, sa_set_uid, sa_set_gid, sa_set_size;
	uint32_t sa_mode, sa_uid, sa_gid;
	uint64_t sa_size;
	bool sa_atime_now, sa_mtime_now; /* SET_TO_SERVER_TIME */
};

/** rpcrdma_nfsc_setattr - SETATTR (3.3.2), unguarded. */
int rpcrdma_nfsc_setattr(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			 const struct rpcrdma_nfsc_sattr *sa);

/** rpcrdma_nfsc_link - LINK (3.3.15): @name in @dir becomes a hard link to @fh. */
int rpcrdma_nfsc_link(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
		      const struct rpcrdma_nfsc_fh *dir, const char *name);

/**
 * rpcrdma_nfsc_mknod - MKNOD (3.3.11) of @type (NFSC_CHR, NFSC_BLK with
 * @major/@minor; NFSC_SOCK, NFSC_FIFO) with @mode.  -EINVAL for another type.
 */
int rpcrdma_nfsc_mknod(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
		       const char *name, uint32_t type, uint32_t mode, uint32_t major,
		       uint32_t minor);

/**
 * rpcrdma_nfsc_readdir - READDIR (3.3.16) the whole directory, calling @fn
 * with names and file ids only (attr and fh NULL).
 */
int rpcrdma_nfsc_readdir(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			 rpcrdma_nfsc_readdir_fn fn, void *arg);

/** PATHCONF results (RFC 1813 3.3.20). */
struct rpcrdma_nfsc_pathconf {
	uint32_t pc_linkmax, pc_name_max;
	bool pc_no_trunc, pc_chown_restricted, pc_case_insensitive, pc_case_preserving;
};

/** rpcrdma_nfsc_pathconf - PATHCONF (3.3.20). */
int rpcrdma_nfsc_pathconf(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			  struct rpcrdma_nfsc_pathconf *pc);

/** rpcrdma_nfsc_commit - COMMIT (3.3.21) @count bytes at @offset (0, 0: all). */
int rpcrdma_nfsc_commit(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			uint64_t offset, uint32_t count, uint8_t verf[8]);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_CLNT_H */
