/* SPDX-License-Identifier: MIT */
/*
 * rpc_tcp.h - the server's ONC RPC over TCP side (MOUNT, NLM, NSM): one
 * thread that accepts, reads and answers every TCP connection of every
 * program served here, without ever waiting on one peer.
 *
 * Connections are non-blocking.  A record (RFC 5531 section 11, record
 * marking) is gathered as its bytes come, each connection in turn, and
 * handed to the program's libtirpc-style dispatch function only when
 * complete; libtirpc's XDR routines decode the call header and the
 * arguments from memory, and the reply is written as far as the socket
 * takes it, the rest when it drains.  libtirpc's own server loop
 * (svc_vc_create, svc_getreq_poll) is not used: its record reads block
 * (src/nfs3/mnt.c's history, docs/nfs3.md "MOUNT, NLM and NSM over TCP").
 *
 * Limits (struct rpc_tcp_limits, defaults below):
 *  - at accept, before any byte is read, the listener's allow function
 *    (the exports: does any entry list the peer's address?) decides;
 *  - connections per peer address, all programs together, and in all;
 *    when all are taken a newcomer reclaims the connection idle longest
 *    (or, with none idle, the one whose call has waited longest);
 *  - a call's record must arrive, and its reply be taken, within
 *    tl_record_ms of its first byte; a connection with neither a call nor
 *    a reply under way is closed after tl_idle_ms;
 *  - a record is at most tl_maxrec bytes.
 * Defined in src/nfs3/rpc_tcp.c.
 */
#ifndef RPCRDMA_COMMON_RPC_TCP_H
#define RPCRDMA_COMMON_RPC_TCP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>
/* <rpc/rpc_msg.h> and <rpcrdma/wire.h> both define RPC_MSG_VERSION. */
#undef RPC_MSG_VERSION

#define RPC_TCP_PER_HOST_DEFAULT 16u    /* connections of one host (rpc_tcp_host_key) */
#define RPC_TCP_TOTAL_DEFAULT 1024u     /* connections in all */
#define RPC_TCP_RECORD_MS_DEFAULT 10000u /* a call: its record and reply */
#define RPC_TCP_IDLE_MS_DEFAULT 360000u  /* knfsd's 6 minutes */
#define RPC_TCP_MAXREC_DEFAULT 32768u   /* bytes of one call's record */
#define RPC_TCP_DEFER_MAX_MS 1000u      /* rpc_tcp_defer()'s time per call */

struct rpc_tcp_limits {
	unsigned tl_per_host;  /* connections one peer host (an IPv4 address,
				* an IPv6 /64) may hold */
	unsigned tl_total;     /* connections in all; also at most a quarter
				* of RLIMIT_NOFILE's soft limit */
	unsigned tl_record_ms; /* first byte of a call to its reply taken */
	unsigned tl_idle_ms;   /* no call and no reply under way */
	unsigned tl_maxrec;    /* bytes of one record (all its fragments) */
};

/**
 * rpc_tcp_host_key - the host @ss counts as for tl_per_host, as 16 bytes:
 * an IPv4 address as IPv4-mapped IPv6 (so the same host over either
 * listener is one key), an IPv6 address by its /64 (one machine may use
 * any number of addresses of its /64; the other 8 bytes zero), another
 * family all zero.
 */
void rpc_tcp_host_key(const struct sockaddr_storage *ss, uint8_t key[16]);

/* Counters since the process started (all listeners). */
struct rpc_tcp_stats {
	uint64_t ts_accepted;      /* connections taken */
	uint64_t ts_refused_addr;  /* closed at accept: no export lists the peer */
	uint64_t ts_refused_host;  /* closed at accept: the peer's cap reached */
	uint64_t ts_reclaimed;     /* closed to make room for a newcomer */
	uint64_t ts_record_timeouts; /* closed: a call not done in tl_record_ms */
	uint64_t ts_idle_closed;   /* closed after tl_idle_ms idle */
	uint64_t ts_bad_records;   /* closed: too long, or not a call */
	uint64_t ts_calls;         /* records dispatched */
	uint64_t ts_open;          /* connections open now */
};

/* rpc_tcp_allow_fn - may @peer connect?  Called on the serving thread. */
typedef bool (*rpc_tcp_allow_fn)(const struct sockaddr *peer, void *arg);
/* libtirpc's dispatch shape: svc_getargs, svc_sendreply, svcerr_* and
 * svc_getrpccaller work on @xprt (xp_fd is the connection's socket) */
typedef void (*rpc_tcp_dispatch_fn)(struct svc_req *rq, SVCXPRT *xprt);

struct rpc_tcp_listener;

/**
 * rpc_tcp_socket - a listening TCP socket on @listen_addr (numeric IPv4 or
 * IPv6; NULL: every address, dual-stack, IPv4 only where there is no
 * IPv6) and @port (0: one the kernel picks).
 * @fdp: out: the socket (close-on-exec, blocking: rpc_tcp_serve() sets
 * what it needs).  @bound: out, may be NULL: the port bound.
 * Return: 0; -EINVAL for an address that is not numeric; -errno of
 * socket(2), bind(2) (-EADDRINUSE) or listen(2).
 */
int rpc_tcp_socket(const char *listen_addr, uint16_t port, int *fdp,
		   uint16_t *bound);

/**
 * rpc_tcp_serve - serve (@prog, @vers) on listening socket @fd from the
 * serving thread (started with the first listener).  Calls of another
 * program get PROG_UNAVAIL, of another version PROG_MISMATCH; AUTH_NONE
 * and AUTH_SYS credentials are accepted (rq_clntcred: NULL, or a struct
 * authunix_parms as libtirpc's), others refused with AUTH_REJECTEDCRED.
 * @allow: NULL to take every peer.  On success the listener owns @fd.
 * @out: out: the listener, for rpc_tcp_unserve().
 * Return: 0; -EINVAL (@fd < 0, no @dispatch or @out); -ENOMEM; -errno of
 * fcntl(2), pipe2(2) or pthread_create(3).
 */
int rpc_tcp_serve(int fd, uint32_t prog, uint32_t vers, rpc_tcp_dispatch_fn dispatch,
		  rpc_tcp_allow_fn allow, void *allow_arg, struct rpc_tcp_listener **out);

/**
 * rpc_tcp_unserve - stop @l: close its socket and its connections, and
 * free it.  When it returns, no dispatch of @l runs or will run.  The
 * serving thread ends with its last listener.  Not from a dispatch
 * function.  NULL: nothing.
 */
void rpc_tcp_unserve(struct rpc_tcp_listener *l);

/**
 * rpc_tcp_on_thread - is the caller the serving thread?  Nothing on it
 * may wait: host names are not waited for there (fs_name_of()), a
 * dispatch function defers instead (rpc_tcp_defer()).
 */
bool rpc_tcp_on_thread(void);

/**
 * rpc_tcp_defer - from a dispatch function: do not answer this call now.
 * The thread dispatches the same record again 20 ms later (its arguments
 * decoded anew; other connections served meanwhile, this one not read),
 * for RPC_TCP_DEFER_MAX_MS from the call's first deferral.  For a caller
 * whose host name is being looked up (FS_XM_UNKNOWN).  The dispatch
 * function must then send no reply and free its arguments.
 * Return: true when deferred; false when the time is up or @xprt is not
 * one of this thread's (answer now).
 */
bool rpc_tcp_defer(SVCXPRT *xprt);

/** rpc_tcp_listener_fd - @l's listening socket (for rpcb_tcp_set()). */
int rpc_tcp_listener_fd(const struct rpc_tcp_listener *l);

/**
 * rpc_tcp_set_limits - use @lim from the next connection and the next
 * sweep on (zero fields: the default); NULL: every default.
 */
void rpc_tcp_set_limits(const struct rpc_tcp_limits *lim);

/** rpc_tcp_get_stats - copy the counters into @out. */
void rpc_tcp_get_stats(struct rpc_tcp_stats *out);

#endif /* RPCRDMA_COMMON_RPC_TCP_H */
