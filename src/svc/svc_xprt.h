/* SPDX-License-Identifier: MIT */
/*
 * svc_xprt.h - private to src/svc: the transport interface of the service
 * layer (docs/design.md, "Transports").
 *
 * The RPC layer (svc_rpc.c), the workers (svc_worker.c) and the run loop
 * (svc.c) serve calls of every transport alike: a transport accepts its
 * connections, receives a whole RPC call message into a call context
 * (struct svc_call: cc_call, cc_call_len, a reply buffer cc_reply of
 * cc_reply_cap bytes) and hands it to svc_rpc_dispatch(); the RPC layer
 * answers or runs the program's dispatch function (on the transport
 * thread or a worker), encodes the reply header into cc_reply, and hands
 * the context back through its class's xc_send.  What the two transports
 * are:
 *
 *  - RDMA (svc_rdma_class; svc_conn.c, svc_recv.c, svc_send.c, svc_pool.c):
 *    RPC-over-RDMA v1, RFC 8166.  Direct data placement: a DDP item
 *    (rpcrdma_svc_ddp_begin()) moves by RDMA Write into the client's
 *    Write chunk.  Its workers may post replies themselves.
 *  - TCP (svc_tcp_class; svc_tcp.c, record marking in svc_tcp_rm.c):
 *    ONC RPC over TCP, RFC 5531 section 11.  No direct data placement: a
 *    DDP item stays where the handler wrote it, inside the reply, and
 *    goes out with it in one sendmsg(); the transport thread writes.
 *
 * One indirect call per message at most: the reply (xc_send).  Events are
 * told apart by their epoll tags in the run loop (a TCP connection's tag
 * has its lowest bit set), never through the class.
 *
 * Owner prefixes: xc_ transport class, tc_ TCP connection, tl_ TCP
 * listener, ti_ TCP connection handed to a group, rm_ record-marking
 * reader.
 */
#ifndef RPCRDMA_SVC_XPRT_H
#define RPCRDMA_SVC_XPRT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

struct rpcrdma_svc;
struct svc_call;
struct svc_group;
struct rpcrdma_svc_bc;

/** What a transport does, for the layers above it. */
struct svc_xprt_class {
	const char *xc_name;   /* "rdma", "tcp": logs, netids, statistics */
	/* Direct data placement (RFC 8166 3.4.6): a DDP item of a reply
	 * moves apart from the reply, into memory the client named.  Without
	 * it the item is sent inline, where the handler put it. */
	bool xc_ddp;
	/* A worker may send the reply of the call it served itself
	 * (svc_send_by_worker()); else the call goes back to the transport
	 * thread through the done queue. */
	bool xc_worker_posts;
	/*
	 * xc_send - send the reply of @cc: the RPC reply of cc_reply_len
	 * bytes at cc_reply (header encoded by the RPC layer; rq_ddp marks a
	 * DDP item inside it).  The transport owns @cc from here and gives it
	 * back when the reply is out (or the connection is gone).  Called on
	 * the transport thread, or (xc_worker_posts) on the worker.
	 */
	void (*xc_send)(struct svc_call *cc);
	/* xc_release - give @cc back without a reply (a dropped call, a
	 * connection closing). */
	void (*xc_release)(struct svc_call *cc);
	/* xc_close_all - close every connection of @grp (a stop); those with
	 * calls out go when the calls come back.  Group thread. */
	void (*xc_close_all)(struct svc_group *grp);
	/*
	 * The backchannel (svc_bc.c: calls from the server to the client on
	 * a connection of this class; the slots, xids, reply matching and
	 * timeouts are the same for every transport).  xc_bc_send - put the
	 * calls queued on @bc on the wire, as far as the client's credit
	 * allows (svc_bc_take() on TCP; RDMA posts Sends from its registered
	 * buffers); a connection closing ends them with -ENOTCONN.  Owner
	 * thread of @bc's connection.
	 */
	void (*xc_bc_send)(struct rpcrdma_svc_bc *bc);
	/* xc_bc_each - @fn(@bc, @arg) for each of @grp's connections of this
	 * class that has a backchannel state.  Group thread. */
	void (*xc_bc_each)(struct svc_group *grp,
			   void (*fn)(struct rpcrdma_svc_bc *bc, void *arg), void *arg);
};

extern const struct svc_xprt_class svc_rdma_class;
extern const struct svc_xprt_class svc_tcp_class;

/* ---------- RFC 5531 section 11 record marking (svc_tcp_rm.c) ---------- */

/* Record-marking reader: gathers one record (every fragment of one RPC
 * message) into one buffer, read straight into it from the socket. */
struct svc_rm {
	uint8_t *rm_buf;       /* the record so far (malloc; grows) */
	uint32_t rm_cap;       /* bytes allocated */
	uint32_t rm_len;       /* bytes of the record so far */
	uint32_t rm_max;       /* most bytes of one record (all fragments) */
	uint32_t rm_frag_left; /* bytes of the current fragment still to come */
	bool rm_in_frag;       /* a fragment's mark was read */
	bool rm_last;          /* the current fragment is the record's last */
	uint8_t rm_mark[4];    /* the next fragment's mark, as it comes */
	uint8_t rm_markgot;    /* bytes of it read */
	uint32_t rm_frags;     /* fragments of the record so far */
	uint8_t *rm_ahead;     /* bytes read ahead between records (malloc, SVC_RM_AHEAD) */
	uint32_t rm_ahead_len; /* bytes in rm_ahead */
	uint32_t rm_ahead_off; /* of which already fed to the record */
	bool rm_ahead_read;    /* the last svc_rm_iov() gave rm_ahead */
};

#define SVC_RM_MORE 0      /* svc_rm_advance(): record not complete yet */
#define SVC_RM_RECORD 1    /* a record is complete in rm_buf[0 .. rm_len) */
/* The first allocation of a record buffer, and its growth step floor. */
#define SVC_RM_MIN_CAP 4096u
/* Bytes read at once between records (the mark and what follows it): a
 * small call's mark and body in one system call. */
#define SVC_RM_AHEAD 4096u

/* svc_rm_init - an empty reader whose records are at most @max bytes
 * (all fragments together, marks not counted). */
void svc_rm_init(struct svc_rm *r, uint32_t max);
/* svc_rm_fini - free the reader's buffer. */
void svc_rm_fini(struct svc_rm *r);
/*
 * svc_rm_iov - where the next bytes read from the socket go: @iov[0] the
 * rest of the current fragment (as far as the buffer has room, grown
 * first when it has none; at most a fragment's length is allocated ahead,
 * never more than what arrived doubled), @iov[1] the next fragment's mark;
 * or just the mark between fragments.  Reading both with one readv() takes
 * a record's body and the next record's mark in one system call.  Between
 * records (no byte of the next mark yet) it is one iovec of SVC_RM_AHEAD
 * bytes of the reader's own, which svc_rm_advance() copies into the mark
 * and the record: a small call's mark and body come with one system call
 * (bytes beyond the record are kept for the next one; a longer fragment's
 * rest is then read straight into the record's buffer).
 * Return: the number of iovecs (1 or 2); -ENOMEM when the buffer cannot grow.
 */
int svc_rm_iov(struct svc_rm *r, struct iovec iov[2]);
/*
 * svc_rm_advance - @n bytes were read into the iovecs svc_rm_iov() gave.
 * Return: SVC_RM_MORE; SVC_RM_RECORD when a record is complete (the
 * caller takes it with svc_rm_take() before the next svc_rm_iov(); bytes
 * of the next mark read with it are kept); -EMSGSIZE when a mark
 * announces more than rm_max bytes in all (RFC 5531 leaves the limit to
 * the server: the connection is closed, nothing was allocated for it);
 * -EINVAL when @n is more than the iovecs held.
 */
int svc_rm_advance(struct svc_rm *r, size_t n);
/*
 * svc_rm_take - after SVC_RM_RECORD: hand the record's buffer to the
 * caller (*@buf, *@len bytes, *@cap allocated, NULL for an empty record
 * with no buffer; the caller frees it or gives it back with
 * svc_rm_give()) and start the next record with the mark bytes that came
 * with this one's end.  Return: as svc_rm_advance() (SVC_RM_RECORD again
 * for an empty record whose mark is all here, -EMSGSIZE for a mark over
 * the cap).
 */
int svc_rm_take(struct svc_rm *r, uint8_t **buf, uint32_t *len, uint32_t *cap);
/* svc_rm_give - let the reader reuse @buf (@cap bytes) for its next record
 * when it has none; else @buf is freed. */
void svc_rm_give(struct svc_rm *r, uint8_t *buf, uint32_t cap);
/*
 * svc_rm_want - the bytes a buffer must hold for the current fragment to
 * be read into it whole: the record so far and the fragment's rest
 * (rm_len + rm_frag_left, at most rm_max), when that is more than the
 * reader's buffer holds; 0 when it holds it, or between fragments.  The
 * transport offers a buffer it keeps (svc_rm_adopt()) so a large record
 * is read with as few reads as the socket allows, not one per doubling.
 */
uint32_t svc_rm_want(const struct svc_rm *r);
/*
 * svc_rm_grow_cap - the size (bytes) the reader's buffer grows to in the
 * next svc_rm_iov() (it doubles, at least SVC_RM_MIN_CAP, at most what
 * the fragment still needs: <= rm_max); 0 when that call does not grow
 * it.  The transport charges the growth to its memory budget before it
 * lets the reader grow (svc_tcp.c); growth while bytes read ahead are fed
 * (svc_rm_advance(), svc_rm_take()) is at most SVC_RM_MIN_CAP a record.
 */
uint32_t svc_rm_grow_cap(const struct svc_rm *r);
/*
 * svc_rm_adopt - the reader moves the record so far (rm_len bytes) into
 * @buf (@cap bytes, at least rm_len; the reader owns it from now on) and
 * goes on reading into it.  Return: the reader's buffer before (NULL when
 * it had none; the caller owns it, its size in *@old_cap); @buf itself
 * (refused, nothing changed) when it is NULL or smaller than rm_len.
 */
uint8_t *svc_rm_adopt(struct svc_rm *r, uint8_t *buf, uint32_t cap, uint32_t *old_cap);
/* svc_rm_frag_left - bytes of the current fragment still to come (0
 * between fragments): bytes the peer must still send, so the transport
 * may wait for that many (SO_RCVLOWAT) without waiting for good. */
static inline uint32_t svc_rm_frag_left(const struct svc_rm *r)
{
	return r->rm_in_frag ? r->rm_frag_left : 0;
}
/* svc_rm_partial - bytes of a record (or of its first mark) have come and
 * the record is not complete: the connection's record deadline runs. */
static inline bool svc_rm_partial(const struct svc_rm *r)
{
	return r->rm_markgot || r->rm_in_frag || r->rm_len ||
	       r->rm_ahead_off < r->rm_ahead_len;
}

/* ---------- the TCP transport (svc_tcp.c) ---------- */

/* A TCP record's deadline: a call whose record started arriving is
 * complete within this, or its connection is closed. */
#define SVC_TCP_RECORD_MS 10000u
/* Replies waiting for the peer (its socket did not drain) must all be
 * taken within this, counted from when they began to wait: a peer taking
 * one byte now and then does not restart it (svc_tcp_write()). */
#define SVC_TCP_SEND_MS 30000u
/* The call contexts a TCP connection is sure of within the memory budget
 * whatever its fair share (svc_tcp_share()): beyond these, its contexts
 * (calls read, served, replies waiting to be written) hold at most half
 * the budget divided among the TCP connections with calls under way. */
#define SVC_TCP_SHARE_FLOOR 8u
/* The memory-wait episodes of TCP readers are logged at most once per
 * this (the others counted in the next line logged). */
#define SVC_TCP_MEMWAIT_LOG_MS 60000u
/* Most records read from one connection per readiness event, so one busy
 * peer cannot keep the run loop from the others. */
#define SVC_TCP_READS_PER_EVENT 16u
/* Replies gathered into one sendmsg(). */
#define SVC_TCP_SEND_IOV 64u
/* TCP call contexts a group keeps free for reuse (more are freed), and
 * the largest call buffer one keeps while free (a large WRITE's goes). */
#define SVC_TCP_KEEP_CALLS 64u
#define SVC_TCP_KEEP_CALL_BYTES (64u << 10)
/* Large record buffers (over SVC_TCP_KEEP_CALL_BYTES: WRITE's data) a
 * group keeps for the next large records, counted against the memory
 * budget: a 1 MiB WRITE is read straight into memory that is already
 * there, not into a buffer grown by doubling from 4 KiB (eight reads,
 * reallocations, fresh pages faulted in for every call). */
#define SVC_TCP_KEEP_BIG 8u
/* A fragment with at least this much still to come: the socket's
 * SO_RCVLOWAT is raised to its rest, so the connection wakes once the
 * fragment is there rather than once per segment burst. */
#define SVC_TCP_LOWAT_MIN (64u << 10)
/* The most SO_RCVLOWAT is raised to (the kernel caps it at half the
 * receive buffer's limit besides). */
#define SVC_TCP_LOWAT_MAX (1u << 20)

struct svc_tconn;

/** A socket group 0 accepted for another group (gr_tcp_inbox). */
struct svc_tcp_inbox {
	int ti_fd;
	struct sockaddr_storage ti_peer;
	struct svc_tcp_inbox *ti_next;
};

/*
 * svc_tcp_listen - listen for ONC RPC over TCP on @addr (numeric IPv4 or
 * IPv6; NULL: every address, dual-stack, IPv4 only without IPv6) and @port
 * (0: one the kernel picks), served by group 0's run loop.
 * @bound: out, may be NULL: the port bound.  Return: 0; -EINVAL (a name,
 * not a numeric address); -EEXIST (already listening); -errno of
 * socket(2), bind(2) (-EADDRINUSE), listen(2) or epoll_ctl(2).
 */
int svc_tcp_listen(struct rpcrdma_svc *svc, const char *addr, uint16_t port,
		   uint16_t *bound);
/* svc_tcp_unlisten - close the listening socket (no-op without one). */
void svc_tcp_unlisten(struct rpcrdma_svc *svc);
/*
 * svc_tcp_adopt - serve connected socket @fd (made non-blocking here) from
 * @peer on @grp, which must be the calling thread's group: admission
 * (sc_accept, sc_max_conns_per_host, sc_max_connections: shared with RDMA)
 * first, then its read-ahead buffer (SVC_RM_AHEAD bytes) reserved in the
 * budget's receive share as an RDMA connection's Receives are.  On failure
 * @fd is closed.  Return: 0; -EACCES (sc_accept refused); -EBUSY (a place
 * limit, counted in conns_refused); -EAGAIN (the receive share cannot hold
 * the read-ahead buffer, counted in conns_refused); -ENOMEM; -errno of
 * fcntl(2) or epoll_ctl(2).
 */
int svc_tcp_adopt(struct svc_group *grp, int fd, const struct sockaddr *peer);
/* svc_tcp_event - epoll @events for the TCP tag @tag (a connection's,
 * lowest bit set, or the listener's) on @grp's run loop. */
void svc_tcp_event(struct svc_group *grp, void *tag, uint32_t events);
/* svc_tcp_is_tag - is epoll tag @tag a TCP connection's or listener's? */
bool svc_tcp_is_tag(const void *tag);
/* svc_tcp_take_inbox - serve the sockets group 0 handed to @grp. */
void svc_tcp_take_inbox(struct svc_group *grp);
/*
 * svc_tcp_sweep - at @now_ms (CLOCK_MONOTONIC): close @grp's TCP
 * connections whose record started more than the record deadline ago
 * (sv_tcp_record_ms; counted in tcp_record_timeouts), whose reply the peer
 * has not taken for SVC_TCP_SEND_MS, or idle for sc_idle_timeout with no
 * call out (conns_idle_closed).  Return: ms until the next sweep is due
 * (the run loop's sleep bound), or -1 when @grp has no TCP connection.
 */
int svc_tcp_sweep(struct svc_group *grp, uint64_t now_ms);
/* svc_tcp_reap - free @grp's TCP connections closed and let go of since
 * the last call: after the events of one epoll_wait() batch, none of
 * which may then name them. */
void svc_tcp_reap(struct svc_group *grp);
/* svc_tcp_flush - write the replies queued on @grp's connections during a
 * batch (gr_tcp_flush), one sendmsg() per connection. */
void svc_tcp_flush(struct svc_group *grp);
/* svc_tcp_conn_id - the connection number of TCP call @cc. */
uint32_t svc_tcp_conn_id(const struct svc_call *cc);
/* svc_tcp_capturing - TCP call @cc's connection is captured (--capture):
 * its replies go whole through the buffer, where the capture sees them. */
bool svc_tcp_capturing(const struct svc_call *cc);
/* svc_tcp_pipe_close - close @cc's pipe (svc_tcp_pipe.c), whatever it
 * holds; its next rpcrdma_svc_ddp_pipe() makes another. */
void svc_tcp_pipe_close(struct svc_call *cc);
/* svc_tcp_sockfd - connection @tc's socket (-1 once closed): for the
 * unit tests' look at its options. */
int svc_tcp_sockfd(const struct svc_tconn *tc);
/* svc_tcp_closing - TCP call @cc's connection is closing. */
bool svc_tcp_closing(const struct svc_call *cc);
/* svc_tcp_bc_slot - the backchannel handle field of TCP call @cc's
 * connection (svc_bc_attach()). */
struct rpcrdma_svc_bc *_Atomic *svc_tcp_bc_slot(const struct svc_call *cc);
/* svc_tcp_free_calls - free @grp's pooled TCP call contexts, their bytes
 * back to the memory budget (teardown, or a group short of the budget:
 * svc_budget_share()).  Group thread.  Return: how many were freed. */
uint32_t svc_tcp_free_calls(struct svc_group *grp);

#endif /* RPCRDMA_SVC_XPRT_H */
