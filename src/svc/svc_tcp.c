// SPDX-License-Identifier: MIT
/*
 * svc_tcp.c - the TCP transport of the service layer: ONC RPC over TCP
 * (RFC 5531 section 11, record marking) served by the transport threads
 * (docs/design.md, "Transports").
 *
 * Group 0 listens and accepts; each accepted socket goes to the group with
 * the fewest connections (RDMA's and TCP's counted together), whose run
 * loop owns it from then on: no thread per connection, every socket
 * non-blocking on the group's epoll set.  A readable socket is read
 * straight into the record's buffer (svc_tcp_rm.c), one readv() per
 * record taking the next record's mark with it (an idle connection's
 * next call, mark and body, with one read ahead); a complete record becomes
 * a call context (struct svc_call, cc_tconn set) and goes to the RPC layer
 * (svc_rpc_dispatch()) exactly as an RDMA call does: the same programs,
 * workers, statistics and admission limits.  A reply is written with its
 * record mark in front of it (the four bytes before cc_reply) by the
 * group's thread; replies made in one batch (a record burst, a done-queue
 * take) go out together with one sendmsg().  DDP items (NFS READ data)
 * stay inside the reply, where the handler read them: no copy.
 *
 * Limits: a connection has at most sc_credits calls out (read, served,
 * or waiting to be written), and at most its fair share of the memory
 * budget (svc_tcp_share()); beyond it the socket is not read (the peer's
 * next calls wait in its buffers).  A record is at most sv_tcp_maxrec
 * bytes (a mark announcing more closes the connection at once, counted in
 * tcp_bad_records); a record that started must end within
 * sv_tcp_record_ms (tcp_record_timeouts), the replies waiting when the
 * socket first refused bytes must be taken whole by the peer within
 * sv_tcp_send_ms (tcp_send_timeouts; a byte now and then is no progress); a connection with
 * nothing under way is closed after sc_idle_timeout (conns_idle_closed).
 * The call contexts' buffers count against the memory budget (sc_memory)
 * with the registered slabs; a connection always gets one call, so none
 * waits for another's memory for good.  Each connection's read-ahead
 * buffer (SVC_RM_AHEAD bytes, svc_tcp_rm.c) counts from adoption to close
 * as an RDMA connection's receive buffers do: in the budget's receive
 * share (half of sc_memory) and in the budget; a connection the share
 * cannot hold is refused (closed at once, counted in conns_refused).
 * A record's buffer counts from its first byte to its end (tc_rm_charged,
 * then cc_call_cap): growth beyond SVC_RM_MIN_CAP the budget cannot hold
 * is not made, the connection is not read (tc_memwait; the rest waits in
 * the socket, TCP's flow control holds the peer back) until memory comes
 * back in its group or its sweep comes (tcp_mem_waits); the record
 * deadline still runs, so incomplete records give their memory back
 * within sv_tcp_record_ms whatever the peers do: no deadlock.
 *
 * Backchannel (RFC 8881 2.10.3.1; svc_bc.c): a call the server makes to
 * the client on this connection (CB_NULL, CB_COMPOUND) is taken from the
 * connection's backchannel state into a call context of the connection
 * and written as a record like a reply, in order with them; the client's
 * reply comes back as a record, which the RPC layer hands to svc_bc.c to
 * be matched by xid.  Such a call counts among the connection's calls out
 * until it is written.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "svc/svc_bc.h"

/** One TCP connection; its group's thread owns it. */
struct svc_tconn {
	struct rpcrdma_svc *tc_svc;
	struct svc_group *tc_grp;
	int tc_fd;                   /* -1 once closed */
	uint32_t tc_id_num;          /* connection number (sv_conn_ids, shared with RDMA) */
	struct sockaddr_storage tc_peer;
	struct svc_host *tc_host;    /* its host's place */
	struct svc_tconn *tc_next, *tc_prev; /* gr_tconns */
	bool tc_closing;
	bool tc_busy;                /* an event of it is being handled: not freed */
	bool tc_dead;                /* let go of: on gr_tcp_dead, freed by svc_tcp_reap() */
	uint32_t tc_calls_out;       /* call contexts out for it */
	uint32_t tc_max_calls;       /* sc_credits */
	struct svc_rm tc_rm;
	uint32_t tc_rm_charged;      /* bytes of the reader's buffer in sv_mem_registered */
	/* The reader's buffer cannot grow within the memory budget: the
	 * socket is not read until memory comes back (svc_tcp_mem_kick()). */
	bool tc_memwait;
	struct svc_tconn *tc_mw_next, *tc_mw_prev; /* gr_tcp_memwait while tc_memwait */
	/* the peer closed its side while the reader waited, and the socket
	 * holds the fragment's rest: EPOLLRDHUP no more (level-triggered) */
	bool tc_rdhup_seen;
	uint64_t tc_rec_ms;          /* its record under way started; 0: none */
	uint64_t tc_last_ms;         /* accepted, or a record completed */
	struct svc_call *tc_out_head, *tc_out_tail; /* replies to write, in order */
	size_t tc_out_off;           /* bytes of the head's record written */
	/* Replies wait for the peer since tc_out_ms (0: none wait): the
	 * deadline's window, which ends when tc_out_mark (the last reply
	 * queued when it began) is written whole, not at any byte. */
	uint64_t tc_out_ms;
	struct svc_call *tc_out_mark;
	uint32_t tc_events;          /* epoll events registered */
	uint32_t tc_lowat;           /* the socket's SO_RCVLOWAT (1: the default) */
	bool tc_flush_queued;        /* on gr_tcp_flush */
	struct svc_tconn *tc_flush_next;
	/* A complete record waits in the reader for a call context (the
	 * memory budget): the socket is not read; a context coming back
	 * puts the connection on gr_tcp_resume, served by svc_tcp_flush(). */
	bool tc_held;
	bool tc_resume_queued;
	struct svc_tconn *tc_resume_next;
	struct capture_ep *tc_capture; /* --capture: its endpoints, or NULL */
	/* the backchannel state (svc_bc.c), made by its first user */
	struct rpcrdma_svc_bc *_Atomic tc_bc;
};

/* The listener's epoll tag; a connection's is its address with bit 0 set. */
static char svc_tcp_listen_tag;

static void *svc_tcp_tag(struct svc_tconn *tc)
{
	return (void *)((uintptr_t)tc | 1u);
}

bool svc_tcp_is_tag(const void *tag)
{
	return tag == &svc_tcp_listen_tag || ((uintptr_t)tag & 1u);
}

/* Bytes a TCP call context counts against the memory budget: its reply
 * buffer, with the mark's four bytes in front (its call buffer is the
 * record it was read into, bounded by sv_tcp_maxrec per connection). */
static uint64_t svc_tcp_call_bytes(const struct rpcrdma_svc *svc)
{
	return (uint64_t)svc->sv_tcp_reply_cap + 4u;
}

/* The calls @tc may have out now (read, served, or replies waiting to be
 * written): its fair share of the memory budget, half of sc_memory
 * divided among the TCP connections with calls out (sv_tcp_active, @tc
 * counted), in call contexts of svc_tcp_call_bytes(), at least
 * SVC_TCP_SHARE_FLOOR, at most sc_credits.  Beyond it the connection is
 * not read until its calls come back: a peer that does not take its
 * replies holds its share, not the budget. */
static uint32_t svc_tcp_share(const struct svc_tconn *tc)
{
	struct rpcrdma_svc *svc = tc->tc_svc;
	uint64_t active = atomic_load(&svc->sv_tcp_active) + (tc->tc_calls_out ? 0 : 1);
	uint64_t share = svc->sv_cfg.sc_memory / 2 / active / svc_tcp_call_bytes(svc);

	if (share < SVC_TCP_SHARE_FLOOR)
		share = SVC_TCP_SHARE_FLOOR;
	return share < tc->tc_max_calls ? (uint32_t)share : tc->tc_max_calls;
}

/* @tc may take one more call now (svc_tcp_share()). */
static bool svc_tcp_room(const struct svc_tconn *tc)
{
	return tc->tc_calls_out < svc_tcp_share(tc);
}

/* Reserve a connection's read-ahead buffer in the receive share and the
 * budget (as svc_buf_get() does a receive buffer).  Return: false, nothing
 * held, when the receive share cannot hold it. */
static bool svc_tcp_ahead_reserve(struct rpcrdma_svc *svc)
{
	if (atomic_fetch_add(&svc->sv_recv_bytes_held, SVC_RM_AHEAD) + SVC_RM_AHEAD >
	    svc->sv_cfg.sc_memory / 2) {
		atomic_fetch_sub(&svc->sv_recv_bytes_held, SVC_RM_AHEAD);
		return false;
	}
	atomic_fetch_add(&svc->sv_mem_registered, SVC_RM_AHEAD);
	return true;
}

/* Give back what svc_tcp_ahead_reserve() took. */
static void svc_tcp_ahead_release(struct rpcrdma_svc *svc)
{
	atomic_fetch_sub(&svc->sv_mem_registered, SVC_RM_AHEAD);
	atomic_fetch_sub(&svc->sv_recv_bytes_held, SVC_RM_AHEAD);
}

/* Make the budget's charge for @tc's reader buffer its size again after
 * the reader changed it (grew it with bytes read ahead, took, adopted,
 * was given or freed a buffer). */
static void svc_tcp_rm_sync(struct svc_tconn *tc)
{
	uint32_t cap = tc->tc_rm.rm_cap;

	if (cap >= tc->tc_rm_charged)
		atomic_fetch_add(&tc->tc_svc->sv_mem_registered, cap - tc->tc_rm_charged);
	else
		atomic_fetch_sub(&tc->tc_svc->sv_mem_registered, tc->tc_rm_charged - cap);
	tc->tc_rm_charged = cap;
}

/* Charge growing @tc's reader buffer to @cap bytes to the memory budget:
 * always up to SVC_RM_MIN_CAP (every connection may hold one small
 * record, as it may one call context), beyond it only while the budget
 * has room.  Return: false, nothing charged, when it has none. */
static bool svc_tcp_rm_charge(struct svc_tconn *tc, uint32_t cap)
{
	struct rpcrdma_svc *svc = tc->tc_svc;
	uint64_t more = cap - tc->tc_rm.rm_cap;

	if (!svc_mem_reserve(svc, more, cap <= SVC_RM_MIN_CAP))
		return false;
	tc->tc_rm_charged += (uint32_t)more;
	return true;
}

static void svc_tcp_call_free(struct rpcrdma_svc *svc, struct svc_call *cc)
{
	svc_tcp_pipe_close(cc);
	free(cc->cc_call);
	atomic_fetch_sub(&svc->sv_mem_registered, cc->cc_call_cap);
	free(cc->cc_reply ? cc->cc_reply - 4 : NULL);
	atomic_fetch_sub(&svc->sv_mem_registered, svc_tcp_call_bytes(svc));
	free(cc);
}

/** A large record buffer kept by its group (gr_tcp_big); this header
 * sits in the buffer's first bytes while it is kept. */
struct svc_tcp_big {
	struct svc_tcp_big *tb_next;
	uint32_t tb_cap;
};

/* Keep large record buffer @buf (@cap bytes) for a later large record
 * while @grp keeps fewer than SVC_TCP_KEEP_BIG and the memory budget has
 * room for it; else free it (a small or NULL one too). */
static void svc_tcp_big_put(struct svc_group *grp, uint8_t *buf, uint32_t cap)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	struct svc_tcp_big *tb = (struct svc_tcp_big *)buf;

	if (!buf)
		return;
	if (cap <= SVC_TCP_KEEP_CALL_BYTES || grp->gr_tcp_nbig >= SVC_TCP_KEEP_BIG)
		goto drop;
	if (!svc_mem_reserve(svc, cap, false))
		goto drop;
	tb->tb_cap = cap;
	tb->tb_next = grp->gr_tcp_big;
	grp->gr_tcp_big = tb;
	grp->gr_tcp_nbig++;
	return;
drop:
	free(buf);
}

/* A kept large record buffer of @grp of at least @want bytes (its size in
 * *@cap), its bytes back to the memory budget.  Return: NULL: none. */
static uint8_t *svc_tcp_big_get(struct svc_group *grp, uint32_t want, uint32_t *cap)
{
	struct svc_tcp_big **pp, *tb;

	for (pp = &grp->gr_tcp_big; (tb = *pp); pp = &tb->tb_next) {
		if (tb->tb_cap < want)
			continue;
		*pp = tb->tb_next;
		grp->gr_tcp_nbig--;
		*cap = tb->tb_cap;
		atomic_fetch_sub(&grp->gr_svc->sv_mem_registered, tb->tb_cap);
		return (uint8_t *)tb;
	}
	return NULL;
}

/* @tc's reader is in a fragment its buffer cannot hold whole: a kept large
 * buffer that can takes the record so far, so the rest is read straight
 * into it (the reader's old buffer goes). */
static void svc_tcp_big_adopt(struct svc_tconn *tc, uint32_t want)
{
	struct svc_group *grp = tc->tc_grp;
	uint32_t cap, old_cap;
	uint8_t *buf = svc_tcp_big_get(grp, want, &cap), *old;

	if (!buf)
		return;
	old = svc_rm_adopt(&tc->tc_rm, buf, cap, &old_cap);
	/* the reader's charge follows its buffer; the one it let go of is
	 * charged again if it is kept (as a refused one is) */
	svc_tcp_rm_sync(tc);
	svc_tcp_big_put(grp, old, old_cap);
}

/* A call context for a record of @tc: a free one of the group's, or a
 * new one while the memory budget has room (always for a connection with
 * none out).  Return: NULL when none can be had now. */
static struct svc_call *svc_tcp_call_get(struct svc_tconn *tc)
{
	struct svc_group *grp = tc->tc_grp;
	struct rpcrdma_svc *svc = tc->tc_svc;
	uint64_t bytes = svc_tcp_call_bytes(svc);
	struct svc_call *cc = grp->gr_tcp_free;
	uint8_t *reply;

	if (cc) {
		grp->gr_tcp_free = cc->cc_next;
		grp->gr_tcp_nfree--;
		goto got;
	}
	if (!svc_mem_reserve(svc, bytes, !tc->tc_calls_out))
		return NULL;
	cc = calloc(1, sizeof(*cc));
	reply = malloc(svc->sv_tcp_reply_cap + 4u);
	if (!cc || !reply) {
		free(cc);
		free(reply);
		atomic_fetch_sub(&svc->sv_mem_registered, bytes);
		return NULL;
	}
	cc->cc_xprt = &svc_tcp_class;
	cc->cc_svc = svc;
	cc->cc_grp = grp;
	cc->cc_reply = reply + 4; /* the record mark goes in front */
	cc->cc_reply_cap = svc->sv_tcp_reply_cap;
got:
	cc->cc_next = NULL;
	cc->cc_tconn = tc;
	cc->cc_state = CC_WORKING;
	if (!tc->tc_calls_out++)
		atomic_fetch_add(&svc->sv_tcp_active, 1);
	SVC_INC(svc, tcp_calls_in_use, 1);
	return cc;
}

static void svc_tcp_destroy(struct svc_tconn *tc);
static void svc_tcp_arm(struct svc_tconn *tc);
static void svc_tcp_resume(struct svc_tconn *tc);

/* Have @tc served by svc_tcp_flush() (svc_tcp_resume()): its held record
 * got a context back, or memory came back for its waiting reader. */
static void svc_tcp_resume_queue(struct svc_tconn *tc)
{
	struct svc_group *grp = tc->tc_grp;

	if (tc->tc_resume_queued || tc->tc_closing)
		return;
	tc->tc_resume_queued = true;
	tc->tc_resume_next = grp->gr_tcp_resume;
	grp->gr_tcp_resume = tc;
}

/* Memory came back to the budget (a context or buffer let go of, a
 * connection closed, or the periodic sweep): @grp's connections waiting
 * for it try again in svc_tcp_flush(). */
static void svc_tcp_mem_kick(struct svc_group *grp)
{
	struct svc_tconn *tc;

	/* the waiting ones alone, not every connection of the group */
	for (tc = grp->gr_tcp_memwait; tc; tc = tc->tc_mw_next)
		svc_tcp_resume_queue(tc);
}

/* @tc's reader cannot grow within the budget: stop reading it (counted
 * in tcp_mem_waits; the first of an episode logged). */
static void svc_tcp_memwait_begin(struct svc_tconn *tc)
{
	struct rpcrdma_svc *svc = tc->tc_svc;

	if (tc->tc_memwait)
		return;
	tc->tc_memwait = true;
	tc->tc_mw_prev = NULL;
	tc->tc_mw_next = tc->tc_grp->gr_tcp_memwait;
	if (tc->tc_mw_next)
		tc->tc_mw_next->tc_mw_prev = tc;
	tc->tc_grp->gr_tcp_memwait = tc;
	SVC_INC(svc, tcp_mem_waits, 1);
	if (atomic_fetch_add(&svc->sv_tcp_memwaits, 1) == 0) {
		uint64_t now = svc_now_ms(), last = atomic_load(&svc->sv_tcp_memwait_logged_ms);

		/* an episode begins: logged at most once per
		 * sv_tcp_memwait_log_ms (a budget at its edge may begin and
		 * end one per call), with those not logged since */
		if (last && now - last < svc->sv_tcp_memwait_log_ms) {
			atomic_fetch_add(&svc->sv_tcp_memwait_quiet, 1);
			atomic_store(&svc->sv_tcp_memwait_said, false);
			return;
		}
		atomic_store(&svc->sv_tcp_memwait_logged_ms, now ? now : 1);
		atomic_store(&svc->sv_tcp_memwait_said, true);
		svc_log(svc, "tcp: memory budget (--memory) in use: connections in mid-record are not read until some is free (%u such times not logged before)",
			atomic_exchange(&svc->sv_tcp_memwait_quiet, 0));
	}
}

/* @tc's reader grew, or @tc closed: it waits for memory no more. */
static void svc_tcp_memwait_end(struct svc_tconn *tc)
{
	struct rpcrdma_svc *svc = tc->tc_svc;

	if (!tc->tc_memwait)
		return;
	tc->tc_memwait = false;
	if (tc->tc_mw_prev)
		tc->tc_mw_prev->tc_mw_next = tc->tc_mw_next;
	else
		tc->tc_grp->gr_tcp_memwait = tc->tc_mw_next;
	if (tc->tc_mw_next)
		tc->tc_mw_next->tc_mw_prev = tc->tc_mw_prev;
	tc->tc_mw_next = tc->tc_mw_prev = NULL;
	if (atomic_fetch_sub(&svc->sv_tcp_memwaits, 1) == 1 &&
	    atomic_exchange(&svc->sv_tcp_memwait_said, false))
		svc_log(svc, "tcp: memory budget has room again: every connection is read");
}

/* Free @tc once it is closed, no call of it is out and no event of it is
 * being handled. */
static void svc_tcp_maybe_destroy(struct svc_tconn *tc)
{
	if (tc->tc_closing && !tc->tc_calls_out && !tc->tc_busy && !tc->tc_dead)
		svc_tcp_destroy(tc);
}

/* xc_release: give TCP call @cc back to its group's pool. */
static void svc_tcp_call_put(struct svc_call *cc)
{
	struct svc_tconn *tc = cc->cc_tconn;
	struct svc_group *grp = cc->cc_grp;
	struct rpcrdma_svc *svc = cc->cc_svc;
	bool was_full = !svc_tcp_room(tc);

	cc->cc_tconn = NULL;
	cc->cc_state = CC_FREE;
	if (cc->cc_pipe_dirty)
		svc_tcp_pipe_close(cc); /* may hold bytes never sent */
	cc->cc_pipe_len = 0;
	if (!--tc->tc_calls_out)
		atomic_fetch_sub(&svc->sv_tcp_active, 1);
	SVC_DEC(svc, tcp_calls_in_use, 1);
	if (cc->cc_call_cap > SVC_TCP_KEEP_CALL_BYTES) {
		/* A large WRITE's record: not kept idle in the context, but
		 * among the group's few large buffers for the next one (which
		 * charges it anew). */
		atomic_fetch_sub(&svc->sv_mem_registered, cc->cc_call_cap);
		svc_tcp_big_put(grp, cc->cc_call, cc->cc_call_cap);
		cc->cc_call = NULL;
		cc->cc_call_cap = 0;
	}
	if (grp->gr_tcp_nfree < SVC_TCP_KEEP_CALLS) {
		cc->cc_next = grp->gr_tcp_free;
		grp->gr_tcp_free = cc;
		grp->gr_tcp_nfree++;
	} else {
		svc_tcp_call_free(svc, cc);
	}
	svc_tcp_mem_kick(grp);
	if (tc->tc_closing) {
		svc_tcp_maybe_destroy(tc);
		return;
	}
	if (tc->tc_held) {
		/* Its waiting record gets this context in svc_tcp_flush(),
		 * not here: the caller may be walking this connection's
		 * queues. */
		svc_tcp_resume_queue(tc);
	} else if (was_full && svc_tcp_room(tc)) {
		svc_tcp_arm(tc); /* read again */
	}
}

uint32_t svc_tcp_free_calls(struct svc_group *grp)
{
	uint32_t n = 0, cap;
	struct svc_call *cc;
	uint8_t *buf;

	while ((buf = svc_tcp_big_get(grp, 0, &cap))) {
		free(buf);
		n++;
	}

	while ((cc = grp->gr_tcp_free)) {
		grp->gr_tcp_free = cc->cc_next;
		svc_tcp_call_free(grp->gr_svc, cc);
		n++;
	}
	grp->gr_tcp_nfree = 0;
	return n;
}

/* Register the events @tc waits for now: input while it may take calls,
 * output while replies wait for room in the socket (a write left them:
 * tc_out_ms).  Replies queued in a batch and not tried yet are written by
 * the batch's flush, which arms after: no EPOLLOUT for them, or every call
 * would cost two epoll_ctl() (EPOLLOUT on, then off once written). */
static void svc_tcp_arm(struct svc_tconn *tc)
{
	struct epoll_event ev;
	uint32_t want = 0;

	if (tc->tc_closing)
		return;
	if (svc_tcp_room(tc) && !tc->tc_held && !tc->tc_memwait)
		want |= EPOLLIN | EPOLLRDHUP;
	else if (tc->tc_memwait && !tc->tc_rdhup_seen)
		want |= EPOLLRDHUP; /* a FIN while it waits: svc_tcp_event() */
	if (tc->tc_out_head && tc->tc_out_ms)
		want |= EPOLLOUT;
	if (want == tc->tc_events)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.events = want;
	ev.data.ptr = svc_tcp_tag(tc);
	if (epoll_ctl(tc->tc_grp->gr_epoll, EPOLL_CTL_MOD, tc->tc_fd, &ev) == 0)
		tc->tc_events = want;
}

/* Close @tc: its socket now, its queued replies given back; the object
 * goes when its calls out have come back. */
static void svc_tcp_close(struct svc_tconn *tc, const char *why)
{
	struct rpcrdma_svc *svc = tc->tc_svc;
	struct rpcrdma_svc_bc *bc;
	struct svc_call *cc;
	bool busy = tc->tc_busy;

	if (tc->tc_closing)
		return;
	tc->tc_closing = true;
	tc->tc_busy = true; /* its last queued reply must not free it under us */
	if (svc->sv_cfg.sc_verbose)
		svc_log(svc, "conn %u (tcp): %s", tc->tc_id_num, why);
	epoll_ctl(tc->tc_grp->gr_epoll, EPOLL_CTL_DEL, tc->tc_fd, NULL);
	close(tc->tc_fd);
	tc->tc_fd = -1;
	svc_rm_fini(&tc->tc_rm);
	svc_tcp_rm_sync(tc);
	svc_tcp_memwait_end(tc);
	svc_tcp_ahead_release(svc);
	svc_tcp_mem_kick(tc->tc_grp);
	tc->tc_rec_ms = tc->tc_out_ms = 0;
	tc->tc_out_mark = NULL;
	while ((cc = tc->tc_out_head)) {
		tc->tc_out_head = cc->cc_next;
		svc_tcp_call_put(cc);
	}
	tc->tc_out_tail = NULL;
	bc = atomic_load(&tc->tc_bc);
	if (bc)
		svc_bc_detach(bc, false); /* its calls end with -ENOTCONN */
	tc->tc_busy = busy;
	svc_tcp_maybe_destroy(tc);
}

static void svc_tcp_destroy(struct svc_tconn *tc)
{
	struct svc_group *grp = tc->tc_grp;
	struct rpcrdma_svc *svc = tc->tc_svc;
	struct rpcrdma_svc_bc *bc = atomic_exchange(&tc->tc_bc, NULL);
	struct svc_tconn **pp;

	if (bc)
		svc_bc_detach(bc, true); /* handles still held see -ENOTCONN */

	/* off the batch's flush and resume lists, where a closed one may
	 * still be */
	for (pp = &grp->gr_tcp_flush; *pp; pp = &(*pp)->tc_flush_next)
		if (*pp == tc) {
			*pp = tc->tc_flush_next;
			break;
		}
	for (pp = &grp->gr_tcp_resume; *pp; pp = &(*pp)->tc_resume_next)
		if (*pp == tc) {
			*pp = tc->tc_resume_next;
			break;
		}
	if (tc->tc_prev)
		tc->tc_prev->tc_next = tc->tc_next;
	else
		grp->gr_tconns = tc->tc_next;
	if (tc->tc_next)
		tc->tc_next->tc_prev = tc->tc_prev;
	grp->gr_ntconns--;
	atomic_fetch_sub(&grp->gr_nconns, 1);
	atomic_fetch_sub(&svc->sv_nconns, 1);
	svc_host_put(svc, tc->tc_host);
	tc->tc_host = NULL;
	free(tc->tc_capture);
	tc->tc_capture = NULL;
	SVC_XDEC(svc, conns_open, SVC_XPRT_TCP, 1);
	/* Freed at the end of the run loop's turn (svc_tcp_reap()): an
	 * event of it may still be in the batch epoll_wait() returned. */
	tc->tc_dead = true;
	tc->tc_next = grp->gr_tcp_dead;
	tc->tc_prev = NULL;
	grp->gr_tcp_dead = tc;
}

void svc_tcp_reap(struct svc_group *grp)
{
	struct svc_tconn *tc;

	while ((tc = grp->gr_tcp_dead)) {
		grp->gr_tcp_dead = tc->tc_next;
		free(tc);
	}
}

int svc_tcp_adopt(struct svc_group *grp, int fd, const struct sockaddr *peer)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	struct svc_tconn *tc = NULL;
	struct svc_host *host = NULL;
	struct epoll_event ev;
	int one = 1, rc, fl;

	rc = svc_admit(svc, peer, &host);
	if (rc)
		goto err_fd;
	if (!svc_tcp_ahead_reserve(svc)) {
		rc = -EAGAIN;
		goto err_place;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		rc = -errno;
		goto err_ahead;
	}
	/* Replies are whole records written at once: no Nagle delay. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	tc = calloc(1, sizeof(*tc));
	if (!tc) {
		rc = -ENOMEM;
		goto err_ahead;
	}
	tc->tc_svc = svc;
	tc->tc_grp = grp;
	tc->tc_fd = fd;
	tc->tc_host = host;
	tc->tc_id_num = atomic_fetch_add(&svc->sv_conn_ids, 1) + 1;
	memcpy(&tc->tc_peer, peer, peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
	       peer->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(sa_family_t));
	tc->tc_max_calls = svc->sv_cfg.sc_credits;
	tc->tc_lowat = 1;
	tc->tc_last_ms = svc_now_ms();
	tc->tc_capture = svc_capture_tcp_open(svc, fd, peer);
	svc_rm_init(&tc->tc_rm, svc->sv_tcp_maxrec);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLRDHUP;
	ev.data.ptr = svc_tcp_tag(tc);
	if (epoll_ctl(grp->gr_epoll, EPOLL_CTL_ADD, fd, &ev)) {
		rc = -errno;
		free(tc->tc_capture);
		free(tc);
		goto err_ahead;
	}
	tc->tc_events = ev.events;
	tc->tc_next = grp->gr_tconns;
	if (tc->tc_next)
		tc->tc_next->tc_prev = tc;
	grp->gr_tconns = tc;
	grp->gr_ntconns++;
	atomic_fetch_add(&grp->gr_nconns, 1);
	if (!grp->gr_tcp_sweep_ms)
		grp->gr_tcp_sweep_ms = tc->tc_last_ms;
	SVC_XINC(svc, connections, SVC_XPRT_TCP, 1);
	SVC_INC(svc, tcp_connections, 1);
	SVC_XINC(svc, conns_open, SVC_XPRT_TCP, 1);
	if (svc->sv_cfg.sc_verbose)
		svc_log(svc, "conn %u (tcp): accepted on transport thread %u", tc->tc_id_num,
			grp->gr_index);
	return 0;

err_ahead:
	svc_tcp_ahead_release(svc);
err_place:
	svc_host_put(svc, host);
	atomic_fetch_sub(&svc->sv_nconns, 1);
	/* logged with the place given back, as an RDMA connection's */
	if (rc == -EAGAIN)
		svc_conn_refused(svc, "memory budget's receive share in use");
err_fd:
	close(fd);
	return rc;
}

/* ---------- writing replies ---------- */

/* Bytes of @cc's record on the wire: mark, reply, DDP bytes in its pipe. */
static size_t svc_tcp_rec_len(const struct svc_call *cc)
{
	return 4u + (size_t)cc->cc_reply_len + cc->cc_pipe_len;
}

/* Splicing @cc's pipe to the socket is not supported here (-EINVAL): what
 * is left in the pipe is read back into the reply, in its place, and the
 * record goes on from the buffer.  Return: 0; -EIO. */
static int svc_tcp_unpipe(struct svc_call *cc, size_t sent)
{
	uint8_t *at = cc->cc_reply + cc->cc_pipe_pos;
	size_t tail = cc->cc_reply_len - cc->cc_pipe_pos, len = cc->cc_pipe_len;
	size_t got = sent;

	if (cc->cc_pipe_pos + len + tail > cc->cc_reply_cap)
		return -EIO;
	memmove(at + len, at, tail);
	while (got < len) {
		ssize_t n = read(cc->cc_pipe_rd, at + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		got += (size_t)n;
	}
	cc->cc_reply_len += (uint32_t)len;
	cc->cc_pipe_len = 0;
	cc->cc_pipe_dirty = false;
	return 0;
}

/*
 * Write @tc's queued replies as far as the socket takes them: up to
 * SVC_TCP_SEND_IOV records per sendmsg(); a record with DDP bytes in a
 * pipe in three steps, its head by sendmsg(MSG_MORE) with the records
 * before it, the pipe's bytes by splice(), its tail with the records
 * after it.  Each reply fully written gives its context back.
 */
static void svc_tcp_write(struct svc_tconn *tc)
{
	struct rpcrdma_svc *svc = tc->tc_svc;
	struct iovec iov[SVC_TCP_SEND_IOV];
	struct msghdr mh;
	struct svc_call *cc;
	ssize_t n;
	unsigned k;

	while (!tc->tc_closing && tc->tc_out_head) {
		size_t off = tc->tc_out_off;
		size_t head;
		bool more = false;

		cc = tc->tc_out_head;
		head = 4u + cc->cc_pipe_pos;
		if (cc->cc_pipe_len && off >= head && off < head + cc->cc_pipe_len) {
			size_t left = head + cc->cc_pipe_len - off;
			unsigned fl = SPLICE_F_NONBLOCK;

			if (svc_tcp_rec_len(cc) > head + cc->cc_pipe_len || cc->cc_next)
				fl |= SPLICE_F_MORE;
			n = splice(cc->cc_pipe_rd, NULL, tc->tc_fd, NULL, left, fl);
			if (n < 0 && (errno == EINVAL || errno == EOPNOTSUPP)) {
				if (svc_tcp_unpipe(cc, off - head)) {
					svc_tcp_close(tc, "reply data lost from its pipe");
					return;
				}
				continue;
			}
			if (n == 0) { /* never with bytes in the pipe */
				svc_tcp_close(tc, "reply data lost from its pipe");
				return;
			}
			if (n > 0)
				SVC_INC(svc, tcp_spliced_bytes, (uint64_t)n);
		} else {
			k = 0;
			for (; cc && k < SVC_TCP_SEND_IOV; cc = cc->cc_next) {
				uint8_t *base = cc->cc_reply - 4;
				size_t len = svc_tcp_rec_len(cc);

				head = 4u + cc->cc_pipe_pos;
				if (cc->cc_pipe_len && off < head) {
					/* up to its pipe's bytes, which follow */
					iov[k].iov_base = base + off;
					iov[k].iov_len = head - off;
					k++;
					more = true;
					break;
				}
				if (cc->cc_pipe_len) /* its tail, after the pipe's bytes */
					base -= cc->cc_pipe_len;
				iov[k].iov_base = base + off;
				iov[k].iov_len = len - off;
				off = 0;
				k++;
			}
			memset(&mh, 0, sizeof(mh));
			mh.msg_iov = iov;
			mh.msg_iovlen = k;
			n = sendmsg(tc->tc_fd, &mh,
				    MSG_DONTWAIT | MSG_NOSIGNAL | (more ? MSG_MORE : 0));
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (!tc->tc_out_ms) {
					tc->tc_out_ms = svc_now_ms();
					tc->tc_out_mark = tc->tc_out_tail;
				}
				break;
			}
			svc_tcp_close(tc, "send failed (peer reset)");
			return;
		}
		while ((cc = tc->tc_out_head) && n > 0) {
			size_t left = svc_tcp_rec_len(cc) - tc->tc_out_off;

			if ((size_t)n < left) {
				tc->tc_out_off += (size_t)n;
				break;
			}
			n -= (ssize_t)left;
			tc->tc_out_off = 0;
			tc->tc_out_head = cc->cc_next;
			if (!tc->tc_out_head)
				tc->tc_out_tail = NULL;
			cc->cc_pipe_dirty = false; /* its pipe is empty again */
			if (cc == tc->tc_out_mark) {
				/* what waited when the window began is taken */
				tc->tc_out_mark = NULL;
				tc->tc_out_ms = 0;
			}
			svc_tcp_call_put(cc);
		}
		if (!tc->tc_out_head) {
			tc->tc_out_ms = 0;
			tc->tc_out_mark = NULL;
		} else if (!tc->tc_out_ms) {
			tc->tc_out_ms = svc_now_ms();
			tc->tc_out_mark = tc->tc_out_tail;
		}
	}
	svc_tcp_arm(tc);
}

/* Queue the message of cc_reply_len bytes at cc_reply of @cc (a reply,
 * or a backchannel call) behind its connection's others, its record mark
 * in front; written now, or with the batch's others by svc_tcp_flush(). */
static void svc_tcp_queue(struct svc_call *cc)
{
	struct svc_tconn *tc = cc->cc_tconn;
	struct svc_group *grp = cc->cc_grp;
	uint8_t *mark = cc->cc_reply - 4;
	/* one fragment, the last */
	uint32_t m = 0x80000000u | (cc->cc_reply_len + cc->cc_pipe_len);

	mark[0] = (uint8_t)(m >> 24);
	mark[1] = (uint8_t)(m >> 16);
	mark[2] = (uint8_t)(m >> 8);
	mark[3] = (uint8_t)m;
	SVC_XINC(cc->cc_svc, send_bytes, SVC_XPRT_TCP, svc_tcp_rec_len(cc));
	svc_capture_tcp_record(cc->cc_svc, tc->tc_capture, true, cc->cc_reply, cc->cc_reply_len);
	cc->cc_state = CC_SENDING;
	svc_call_append(&tc->tc_out_head, &tc->tc_out_tail, cc);
	if (grp->gr_tcp_batch || grp->gr_post_batch) {
		if (!tc->tc_flush_queued) {
			tc->tc_flush_queued = true;
			tc->tc_flush_next = grp->gr_tcp_flush;
			grp->gr_tcp_flush = tc;
		}
		return;
	}
	svc_tcp_write(tc);
}

/* xc_send: the reply of @cc goes out behind its connection's others. */
static void svc_tcp_send(struct svc_call *cc)
{
	if (cc->cc_tconn->tc_closing) {
		svc_tcp_call_put(cc);
		return;
	}
	SVC_XINC(cc->cc_svc, replies_inline, SVC_XPRT_TCP, 1);
	if (cc->cc_pipe_dirty) {
		const struct rpcrdma_svc_req *req = &cc->cc_req;

		/* The pipe's bytes go only as the DDP item the handler
		 * finished (not in an error reply, which drops rq_res). */
		if (req->rq_ddp && cc->cc_pipe_len && req->rq_ddp_len == cc->cc_pipe_len &&
		    cc->cc_pipe_pos <= cc->cc_reply_len) {
			SVC_INC(cc->cc_svc, tcp_spliced_replies, 1);
		} else {
			svc_tcp_pipe_close(cc);
		}
	} else {
		cc->cc_pipe_len = 0;
	}
	svc_tcp_queue(cc);
}

/* ---------- backchannel calls ---------- */

/* xc_bc_send: @bc's queued calls, each copied into a call context of its
 * connection and queued as a record.  A connection short of the memory
 * budget for a context leaves them queued (the next reply or kick tries
 * again; their deadline ends them otherwise). */
static void svc_tcp_bc_send(struct rpcrdma_svc_bc *bc)
{
	struct svc_tconn *tc = bc->bc_tconn;

	if (!tc || tc->tc_closing) {
		svc_bc_detach(bc, false);
		return;
	}
	while (!tc->tc_closing) {
		struct svc_call *cc = svc_tcp_call_get(tc);
		uint32_t len;

		if (!cc)
			break;
		len = svc_bc_take(bc, cc->cc_reply, cc->cc_reply_cap);
		if (!len) {
			svc_tcp_call_put(cc);
			break;
		}
		cc->cc_reply_len = len;
		svc_tcp_queue(cc);
	}
	/* Outside a TCP batch (the run loop's backchannel turn, which an
	 * RDMA completion batch may surround) nobody flushes later: now. */
	if (!tc->tc_closing && !tc->tc_grp->gr_tcp_batch && tc->tc_out_head)
		svc_tcp_write(tc);
}

/* xc_bc_each: every TCP connection of @grp with a backchannel state. */
static void svc_tcp_bc_each(struct svc_group *grp,
			    void (*fn)(struct rpcrdma_svc_bc *bc, void *arg), void *arg)
{
	struct svc_tconn *tc, *next;

	for (tc = grp->gr_tconns; tc; tc = next) {
		struct rpcrdma_svc_bc *bc = atomic_load(&tc->tc_bc);
		bool busy = tc->tc_busy;

		next = tc->tc_next;
		if (!bc)
			continue;
		tc->tc_busy = true; /* a write failing closes it: not freed under us */
		fn(bc, arg);
		tc->tc_busy = busy;
		next = tc->tc_next; /* still linked: freed only below */
		svc_tcp_maybe_destroy(tc);
	}
}

struct rpcrdma_svc_bc *_Atomic *svc_tcp_bc_slot(const struct svc_call *cc)
{
	return &cc->cc_tconn->tc_bc;
}

void svc_tcp_flush(struct svc_group *grp)
{
	struct svc_tconn *tc;

	for (;;) {
		/* Held connections that got a context back first: the
		 * replies their records make join this flush. */
		if ((tc = grp->gr_tcp_resume)) {
			grp->gr_tcp_resume = tc->tc_resume_next;
			tc->tc_resume_next = NULL;
			tc->tc_resume_queued = false;
			grp->gr_tcp_batch = true;
			if ((tc->tc_held || tc->tc_memwait) && !tc->tc_closing)
				svc_tcp_resume(tc);
			continue;
		}
		grp->gr_tcp_batch = false;
		tc = grp->gr_tcp_flush;
		if (!tc)
			break;
		grp->gr_tcp_flush = tc->tc_flush_next;
		tc->tc_flush_next = NULL;
		tc->tc_flush_queued = false;
		tc->tc_busy = true;
		svc_tcp_write(tc);
		tc->tc_busy = false;
		svc_tcp_maybe_destroy(tc);
	}
}

/* ---------- reading calls ---------- */

/* A complete record of @tc: into call context @cc, and to the RPC layer. */
static void svc_tcp_deliver(struct svc_tconn *tc, struct svc_call *cc, uint8_t *buf,
			    uint32_t len, uint32_t cap)
{
	struct rpcrdma_svc *svc = tc->tc_svc;

	if (buf) {
		/* The record's buffer becomes the call's, its charge with it;
		 * the call's old one is the reader's next (or freed). */
		atomic_fetch_sub(&svc->sv_mem_registered, cc->cc_call_cap);
		tc->tc_rm_charged -= cap;
		svc_rm_give(&tc->tc_rm, cc->cc_call, cc->cc_call_cap);
		cc->cc_call = buf;
		cc->cc_call_cap = cap;
	}
	svc_tcp_rm_sync(tc); /* the reader's buffer now: given, or grown by bytes read ahead */
	cc->cc_call_len = len;
	svc_capture_tcp_record(svc, tc->tc_capture, false, cc->cc_call, len);
	SVC_INC(svc, tcp_calls, 1);
	SVC_XINC(svc, recv_bytes, SVC_XPRT_TCP, len);
	svc_stats_call_begin(cc);
	svc_rpc_dispatch(cc, (const struct sockaddr *)&tc->tc_peer);
}

/*
 * The records complete in @tc's reader (@rc: what the reader said last),
 * each into a call context and to the RPC layer.  A record that finds no
 * context (the memory budget, or the connection's sc_credits calls out)
 * stays in the reader and the connection is held (tc_held) until one of
 * its contexts comes back.  Return: the
 * reader's last word (SVC_RM_MORE, or a negative errno), or SVC_RM_RECORD
 * while held.
 */
static int svc_tcp_records(struct svc_tconn *tc, int rc, uint64_t now)
{
	while (rc == SVC_RM_RECORD && !tc->tc_closing) {
		struct svc_call *cc;
		uint8_t *buf;
		uint32_t len, cap;

		/* One read ahead may bring several small records: beyond the
		 * connection's calls out they wait in the reader as well. */
		cc = svc_tcp_room(tc) ? svc_tcp_call_get(tc) : NULL;
		if (!cc) {
			if (!tc->tc_calls_out) {
				svc_tcp_close(tc, "no memory for a call");
				return SVC_RM_MORE;
			}
			tc->tc_held = true;
			return SVC_RM_RECORD;
		}
		tc->tc_held = false;
		rc = svc_rm_take(&tc->tc_rm, &buf, &len, &cap);
		tc->tc_last_ms = now;
		tc->tc_rec_ms = svc_rm_partial(&tc->tc_rm) ? now : 0;
		svc_tcp_deliver(tc, cc, buf, len, cap);
	}
	return rc;
}

/* Have @tc's socket wake its reader once @want bytes are in it
 * (SO_RCVLOWAT), when it says otherwise now.  A lowat that cannot be
 * lowered closes the connection: the peer's last bytes might never wake
 * it. */
static void svc_tcp_lowat(struct svc_tconn *tc, uint32_t want)
{
	int v = (int)want;

	if (want == tc->tc_lowat || tc->tc_closing)
		return;
	if (setsockopt(tc->tc_fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof(v)) == 0)
		tc->tc_lowat = want;
	else if (want < tc->tc_lowat)
		svc_tcp_close(tc, "cannot lower SO_RCVLOWAT");
}

/* Read @tc's socket: at most SVC_TCP_READS_PER_EVENT reads, while it may
 * take calls; each complete record is dispatched at once.  A large
 * fragment is read into a kept large buffer when the group has one, and
 * when the socket runs dry in its middle the socket's SO_RCVLOWAT is
 * raised to the fragment's rest (the peer must send that much): one
 * wake-up and about one read for the rest rather than one per segment
 * burst.  It is 1 again whenever the loop ends otherwise. */
static void svc_tcp_read(struct svc_tconn *tc, uint64_t now)
{
	struct rpcrdma_svc *svc = tc->tc_svc;
	struct iovec iov[2];
	uint32_t lowat = 1, want;
	unsigned turns;
	ssize_t n;
	int niov, rc;

	for (turns = 0; turns < SVC_TCP_READS_PER_EVENT; turns++) {
		if (tc->tc_closing || tc->tc_held || !svc_tcp_room(tc))
			break;
		want = svc_rm_want(&tc->tc_rm);
		if (want > SVC_TCP_KEEP_CALL_BYTES && tc->tc_grp->gr_tcp_big)
			svc_tcp_big_adopt(tc, want);
		/* Growing the record's buffer is charged first: what the
		 * budget cannot hold stays in the socket (TCP's flow control
		 * holds the peer back) until memory comes back; the record's
		 * deadline still runs. */
		want = svc_rm_grow_cap(&tc->tc_rm);
		if (want && !svc_tcp_rm_charge(tc, want)) {
			svc_tcp_memwait_begin(tc);
			break;
		}
		svc_tcp_memwait_end(tc);
		niov = svc_rm_iov(&tc->tc_rm, iov);
		svc_tcp_rm_sync(tc);
		if (niov < 0) {
			svc_tcp_close(tc, "no memory for a record");
			return;
		}
		n = readv(tc->tc_fd, iov, niov);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				lowat = svc_rm_frag_left(&tc->tc_rm);
				break;
			}
			svc_tcp_close(tc, "receive failed (peer reset)");
			return;
		}
		if (n == 0) {
			svc_tcp_close(tc, svc_rm_partial(&tc->tc_rm) ? "peer closed mid-record"
								     : "peer closed");
			return;
		}
		if (!tc->tc_rec_ms)
			tc->tc_rec_ms = now;
		rc = svc_rm_advance(&tc->tc_rm, (size_t)n);
		svc_tcp_rm_sync(tc); /* bytes read ahead may have grown it */
		rc = svc_tcp_records(tc, rc, now);
		if (tc->tc_closing)
			return;
		if (rc < 0) {
			SVC_INC(svc, tcp_bad_records, 1);
			svc_tcp_close(tc, rc == -EMSGSIZE ? "record over the size limit"
							 : "bad record");
			return;
		}
		if (!svc_rm_partial(&tc->tc_rm))
			tc->tc_rec_ms = 0;
		if ((size_t)n < iov[0].iov_len + (niov > 1 ? iov[1].iov_len : 0)) {
			/* the socket is empty for now */
			if (!tc->tc_held)
				lowat = svc_rm_frag_left(&tc->tc_rm);
			break;
		}
	}
	if (lowat < SVC_TCP_LOWAT_MIN)
		lowat = 1;
	else if (lowat > SVC_TCP_LOWAT_MAX)
		lowat = SVC_TCP_LOWAT_MAX;
	svc_tcp_lowat(tc, lowat);
	svc_tcp_arm(tc);
}

/* A context came back to held connection @tc: its waiting record (and
 * what followed it in the reader) is served now.  Or memory may have come
 * back for @tc's waiting reader: it is read again (and waits again if
 * the budget still cannot hold its growth). */
static void svc_tcp_resume(struct svc_tconn *tc)
{
	struct rpcrdma_svc *svc = tc->tc_svc;
	int rc;

	tc->tc_busy = true;
	if (!tc->tc_held) {
		svc_tcp_read(tc, svc_now_ms());
		tc->tc_busy = false;
		svc_tcp_maybe_destroy(tc);
		return;
	}
	rc = svc_tcp_records(tc, SVC_RM_RECORD, svc_now_ms());
	if (!tc->tc_closing && rc < 0) {
		SVC_INC(svc, tcp_bad_records, 1);
		svc_tcp_close(tc, rc == -EMSGSIZE ? "record over the size limit" : "bad record");
	}
	if (!tc->tc_closing && !svc_rm_partial(&tc->tc_rm))
		tc->tc_rec_ms = 0;
	svc_tcp_arm(tc); /* read again, unless held once more */
	tc->tc_busy = false;
	svc_tcp_maybe_destroy(tc);
}

/* ---------- listening and accepting ---------- */

/*
 * The process is out of descriptors (@err: EMFILE, ENFILE): the connection
 * at the head of the backlog is accepted with the descriptor kept in
 * reserve and closed at once (the peer reads end of file, as past
 * --max-connections; counted in conns_refused), and the reserve is taken
 * again.  Left in the backlog, it would keep the level-triggered listening
 * socket readable: every turn of group 0's loop would try again, in vain.
 * Return: true when one was closed (the backlog may hold more); false
 * when the reserve could not be had (another thread took the descriptor).
 */
static bool svc_tcp_shed(struct rpcrdma_svc *svc, int err)
{
	int fd = -1;

	if (!svc->sv_tcp_fd_short) {
		svc->sv_tcp_fd_short = true;
		svc_log(svc, "tcp accept: out of file descriptors (%s): connections closed at once until some are free",
			strerror(err));
	}
	if (svc->sv_tcp_spare >= 0) {
		close(svc->sv_tcp_spare);
		fd = accept4(svc->sv_tcp_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			SVC_INC(svc, conns_refused, 1);
		}
	}
	svc->sv_tcp_spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fd >= 0;
}

static void svc_tcp_accept(struct svc_group *grp)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	unsigned i;

	for (i = 0; i < 16; i++) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		struct svc_group *to;
		struct svc_tcp_inbox *ti;
		int fd;

		fd = accept4(svc->sv_tcp_fd, (struct sockaddr *)&peer, &plen,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			int err = errno;

			if (err == EINTR || err == ECONNABORTED)
				continue;
			if (err == EMFILE || err == ENFILE) {
				if (svc_tcp_shed(svc, err))
					continue;
			} else if (err != EAGAIN && err != EWOULDBLOCK) {
				svc_log(svc, "tcp accept: %s", strerror(err));
			}
			return;
		}
		svc->sv_tcp_fd_short = false;
		if (atomic_load(&svc->sv_stop)) {
			close(fd);
			continue;
		}
		to = svc_pick_group(svc);
		if (to == grp) {
			svc_tcp_adopt(grp, fd, (struct sockaddr *)&peer);
			continue;
		}
		ti = calloc(1, sizeof(*ti));
		if (!ti) {
			close(fd);
			continue;
		}
		ti->ti_fd = fd;
		ti->ti_peer = peer;
		atomic_fetch_add(&to->gr_pending, 1);
		pthread_mutex_lock(&to->gr_wq_lock);
		ti->ti_next = to->gr_tcp_inbox;
		/* atomic: the group's loop peeks at it without the lock */
		__atomic_store_n(&to->gr_tcp_inbox, ti, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&to->gr_wq_lock);
		svc_group_wake(to);
	}
}

void svc_tcp_take_inbox(struct svc_group *grp)
{
	struct svc_tcp_inbox *ti, *next;

	pthread_mutex_lock(&grp->gr_wq_lock);
	ti = grp->gr_tcp_inbox;
	__atomic_store_n(&grp->gr_tcp_inbox, NULL, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&grp->gr_wq_lock);
	for (; ti; ti = next) {
		next = ti->ti_next;
		if (atomic_load(&grp->gr_svc->sv_stop))
			close(ti->ti_fd);
		else
			svc_tcp_adopt(grp, ti->ti_fd, (struct sockaddr *)&ti->ti_peer);
		atomic_fetch_sub(&grp->gr_pending, 1);
		free(ti);
	}
}

void svc_tcp_event(struct svc_group *grp, void *tag, uint32_t events)
{
	struct svc_tconn *tc;

	if (tag == &svc_tcp_listen_tag) {
		svc_tcp_accept(grp);
		return;
	}
	tc = (struct svc_tconn *)((uintptr_t)tag & ~(uintptr_t)1u);
	if (tc->tc_closing)
		return;
	if ((events & EPOLLRDHUP) && tc->tc_memwait && !(events & (EPOLLHUP | EPOLLERR))) {
		int avail = 0;

		/* The peer closed its side (FIN) while its record waits for
		 * memory: unless the socket holds the fragment's rest, the
		 * record can never end; closed now, not at its deadline. */
		tc->tc_busy = true;
		if (ioctl(tc->tc_fd, FIONREAD, &avail) || (uint32_t)avail < svc_rm_frag_left(&tc->tc_rm)) {
			svc_tcp_close(tc, "peer closed mid-record while its record waited for memory");
		} else {
			tc->tc_rdhup_seen = true;
			svc_tcp_arm(tc);
		}
		tc->tc_busy = false;
		svc_tcp_maybe_destroy(tc);
		return;
	}
	if ((events & (EPOLLHUP | EPOLLERR)) && (tc->tc_memwait || tc->tc_held)) {
		/* Not read while it waits, so the reader would not see the
		 * reset, and the level-triggered event would come back every
		 * turn: the connection is gone, its record with it. */
		tc->tc_busy = true;
		svc_tcp_close(tc, "peer reset while its record waited for memory");
		tc->tc_busy = false;
		svc_tcp_maybe_destroy(tc);
		return;
	}
	tc->tc_busy = true;
	/* Replies made while the records of this event are served go out
	 * together, after them. */
	grp->gr_tcp_batch = true;
	if (events & EPOLLOUT)
		svc_tcp_write(tc);
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		svc_tcp_read(tc, svc_now_ms());
	svc_tcp_flush(grp);
	svc_work_flush(grp);
	tc->tc_busy = false;
	svc_tcp_maybe_destroy(tc);
}

int svc_tcp_sweep(struct svc_group *grp, uint64_t now_ms)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	uint32_t idle = svc->sv_cfg.sc_idle_timeout;
	uint32_t period = svc->sv_tcp_record_ms < svc->sv_tcp_send_ms ? svc->sv_tcp_record_ms
								       : svc->sv_tcp_send_ms;
	struct svc_tconn *tc, *next;

	if (!grp->gr_tconns) {
		grp->gr_tcp_sweep_ms = 0;
		return -1;
	}
	period /= 4;
	if (period < 10)
		period = 10;
	if (period > 1000)
		period = 1000;
	if (grp->gr_tcp_sweep_ms && now_ms < grp->gr_tcp_sweep_ms)
		return (int)(grp->gr_tcp_sweep_ms - now_ms);
	for (tc = grp->gr_tconns; tc; tc = next) {
		next = tc->tc_next;
		if (tc->tc_closing)
			continue;
		tc->tc_busy = true;
		/* A held record is complete: it waits for a context of ours,
		 * not for the peer. */
		if (tc->tc_rec_ms && !tc->tc_held &&
		    now_ms - tc->tc_rec_ms >= svc->sv_tcp_record_ms) {
			SVC_INC(svc, tcp_record_timeouts, 1);
			svc_tcp_close(tc, "record not complete within its deadline");
		} else if (tc->tc_out_ms && now_ms - tc->tc_out_ms >= svc->sv_tcp_send_ms) {
			SVC_INC(svc, tcp_send_timeouts, 1);
			svc_tcp_close(tc, "reply not taken by the peer within its deadline");
		} else if (idle != RPCRDMA_SVC_IDLE_NEVER && !tc->tc_calls_out &&
			   !tc->tc_rec_ms && now_ms - tc->tc_last_ms >= (uint64_t)idle * 1000u &&
			   !(svc->sv_conn_state &&
			     svc->sv_conn_state(tc->tc_id_num, svc->sv_conn_state_arg))) {
			SVC_XINC(svc, conns_idle_closed, SVC_XPRT_TCP, 1);
			svc_tcp_close(tc, "idle");
		}
		tc->tc_busy = false;
		next = tc->tc_next; /* still linked: freed only below */
		svc_tcp_maybe_destroy(tc);
	}
	/* Memory another group let go of: the waiting readers try again
	 * at least once a period. */
	svc_tcp_mem_kick(grp);
	if (grp->gr_tcp_resume) {
		svc_tcp_flush(grp);
		svc_work_flush(grp);
	}
	grp->gr_tcp_sweep_ms = now_ms + period;
	return grp->gr_tconns ? (int)period : -1;
}

bool svc_tcp_capturing(const struct svc_call *cc)
{
	return cc->cc_tconn && cc->cc_tconn->tc_capture;
}

uint32_t svc_tcp_conn_id(const struct svc_call *cc)
{
	return cc->cc_tconn ? cc->cc_tconn->tc_id_num : 0;
}

int svc_tcp_sockfd(const struct svc_tconn *tc)
{
	return tc->tc_fd;
}

bool svc_tcp_closing(const struct svc_call *cc)
{
	return cc->cc_tconn->tc_closing;
}

static void svc_tcp_close_all(struct svc_group *grp)
{
	struct svc_tconn *tc, *next;

	for (tc = grp->gr_tconns; tc; tc = next) {
		tc->tc_busy = true;
		svc_tcp_close(tc, "server stopping");
		tc->tc_busy = false;
		next = tc->tc_next;
		svc_tcp_maybe_destroy(tc);
	}
}

int svc_tcp_listen(struct rpcrdma_svc *svc, const char *addr, uint16_t port, uint16_t *bound)
{
	struct sockaddr_storage ss;
	struct epoll_event ev;
	socklen_t len;
	int fd = -1, one = 1, zero = 0, rc;

	if (svc->sv_tcp_fd >= 0)
		return -EEXIST;
	memset(&ss, 0, sizeof(ss));
	if (addr) {
		struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_PASSIVE,
					  .ai_socktype = SOCK_STREAM }, *res = NULL;

		if (getaddrinfo(addr, NULL, &hints, &res) || !res)
			return -EINVAL;
		memcpy(&ss, res->ai_addr, res->ai_addrlen);
		len = res->ai_addrlen;
		freeaddrinfo(res);
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	} else {
		/* Every address: IPv6 and IPv4 on one socket, IPv4 alone
		 * where the host has no IPv6. */
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		len = sizeof(*s6);
		fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd >= 0)
			(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (fd < 0 && errno == EAFNOSUPPORT) {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

			memset(&ss, 0, sizeof(ss));
			s4->sin_family = AF_INET;
			s4->sin_addr.s_addr = htonl(INADDR_ANY);
			len = sizeof(*s4);
			fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		}
	}
	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 128)) {
		rc = -errno;
		goto err;
	}
	if (bound) {
		len = sizeof(ss);
		if (getsockname(fd, (struct sockaddr *)&ss, &len)) {
			rc = -errno;
			goto err;
		}
		*bound = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
							: ((struct sockaddr_in *)&ss)->sin_port);
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = &svc_tcp_listen_tag;
	if (epoll_ctl(svc->sv_groups[0].gr_epoll, EPOLL_CTL_ADD, fd, &ev)) {
		rc = -errno;
		goto err;
	}
	svc->sv_tcp_fd = fd;
	svc->sv_tcp_spare = open("/dev/null", O_RDONLY | O_CLOEXEC); /* -1: none */
	svc->sv_tcp_fd_short = false;
	return 0;
err:
	close(fd);
	return rc;
}

void svc_tcp_unlisten(struct rpcrdma_svc *svc)
{
	if (svc->sv_tcp_fd < 0)
		return;
	if (svc->sv_ngroups && svc->sv_groups[0].gr_epoll >= 0)
		epoll_ctl(svc->sv_groups[0].gr_epoll, EPOLL_CTL_DEL, svc->sv_tcp_fd, NULL);
	close(svc->sv_tcp_fd);
	svc->sv_tcp_fd = -1;
	if (svc->sv_tcp_spare >= 0)
		close(svc->sv_tcp_spare);
	svc->sv_tcp_spare = -1;
}

int rpcrdma_svc_listen_tcp(struct rpcrdma_svc *svc, const char *addr, uint16_t port,
			   uint16_t *bound)
{
	int rc = svc_tcp_listen(svc, addr, port, bound);

	if (!rc)
		svc_log(svc, "listening for ONC RPC over TCP on port %u",
			bound ? *bound : port);
	return rc;
}

int rpcrdma_svc_tcp_socket(const struct rpcrdma_svc *svc)
{
	return svc->sv_tcp_fd;
}

const struct svc_xprt_class svc_tcp_class = {
	.xc_name = "tcp",
	.xc_ddp = false,
	.xc_worker_posts = false,
	.xc_send = svc_tcp_send,
	.xc_release = svc_tcp_call_put,
	.xc_close_all = svc_tcp_close_all,
	.xc_bc_send = svc_tcp_bc_send,
	.xc_bc_each = svc_tcp_bc_each,
};
