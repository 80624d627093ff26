/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma/svc.h - the Responder side: an ONC RPC server over RPC-over-RDMA.
 *
 * The transport accepts connections with rdma_cm, receives calls, pulls
 * Read chunks with RDMA Read, hands each rebuilt call to the dispatch
 * function registered for its program and version, and returns the result
 * inline, through Write chunks, or through the Reply chunk (RFC 8166 3.5).
 *
 * A dispatch function decodes its arguments from rq_args and encodes its
 * results into rq_res (both positioned past the RPC header).  DDP-eligible
 * result data (RFC 8267: NFS READ and READLINK data) is placed with
 * rpcrdma_svc_ddp_begin()/rpcrdma_svc_ddp_end() so that the transport can
 * move it by RDMA Write without copying it.
 */
#ifndef RPCRDMA_SVC_H
#define RPCRDMA_SVC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <rpcrdma/svc_stats_list.h>
#include <rpcrdma/wire.h>
#include <rpcrdma/xdr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* accept_stat values (RFC 5531 9) a dispatch function may return. */
#define RPCRDMA_SVC_SUCCESS 0
#define RPCRDMA_SVC_PROG_UNAVAIL 1
#define RPCRDMA_SVC_PROG_MISMATCH 2
#define RPCRDMA_SVC_PROC_UNAVAIL 3
#define RPCRDMA_SVC_GARBAGE_ARGS 4
#define RPCRDMA_SVC_SYSTEM_ERR 5
/** Return value asking for MSG_DENIED / AUTH_ERROR with rq_auth_stat. */
#define RPCRDMA_SVC_AUTH_ERROR 100
/**
 * Return value of a dispatch function called with rq_transport set
 * (registered with RPCRDMA_SVC_TRY_TRANSPORT): "serve me on a worker".
 * Returned before the function did anything: it is called again, from the
 * start of its arguments, on a worker thread.
 */
#define RPCRDMA_SVC_DEFER 101
/* auth_stat values (RFC 5531 9) for rq_auth_stat. */
#define RPCRDMA_AUTH_BADCRED 1
#define RPCRDMA_AUTH_REJECTEDCRED 2
#define RPCRDMA_AUTH_TOOWEAK 5

/**
 * One call being served.  The transport owns it; a dispatch function may
 * use it only until it returns.
 */
struct rpcrdma_svc_req {
	struct rpcrdma_rpc_msg rq_msg; /* decoded call header (prog, vers, proc, cred) */
	struct rpcrdma_xdr rq_args;    /* arguments: cursor just past the call header */
	struct rpcrdma_xdr rq_res;     /* results: cursor just past the accepted reply header */
	struct sockaddr_storage rq_peer; /* the Requester's address */
	uint32_t rq_auth_stat;         /* with RPCRDMA_SVC_AUTH_ERROR */

	/* DDP-eligible result data inside rq_res (set by rpcrdma_svc_ddp_end) */
	bool rq_ddp;
	size_t rq_ddp_pos; /* byte offset in rq_res.xs_base */
	size_t rq_ddp_len; /* bytes, without XDR pad */

	/**
	 * Set while the dispatch function runs on the transport thread (the
	 * thread that posts to the device), for a program registered with
	 * RPCRDMA_SVC_TRY_TRANSPORT.  There the function must neither block
	 * for long nor change the thread's credentials (see sc_loop_dispatch);
	 * it serves the call only when it can keep to that, and otherwise
	 * returns RPCRDMA_SVC_DEFER at once.
	 */
	bool rq_transport;
	/* The program's own status (nfsstat3 ...), set by
	 * rpcrdma_svc_req_set_status() for the statistics. */
	bool rq_has_status;
	uint32_t rq_status;

	void *rq_xprt; /* transport-private */
};

/**
 * rpcrdma_svc_req_set_status - report the program-level outcome of @req
 * (for NFS: the nfsstat3 its results begin with) for the per-procedure
 * statistics; the last call wins.  Callable from the dispatch function.
 */
static inline void rpcrdma_svc_req_set_status(struct rpcrdma_svc_req *req, uint32_t status)
{
	req->rq_has_status = true;
	req->rq_status = status;
}

/** A program status as text ("NFS3ERR_NOENT"), or NULL when unknown. */
typedef const char *(*rpcrdma_svc_status_name_fn)(uint32_t status);

/**
 * rpcrdma_svc_dispatch_fn - serve one call.
 * @req: the call; results go into req->rq_res.
 * @arg: the pointer given to rpcrdma_svc_register().
 *
 * Runs on a worker thread; several may run at once.  A program registered
 * with RPCRDMA_SVC_TRY_TRANSPORT is first called on the transport thread
 * (rq_transport set) and may return RPCRDMA_SVC_DEFER there.  Return: an
 * accept_stat (RPCRDMA_SVC_SUCCESS ...), or RPCRDMA_SVC_AUTH_ERROR.
 * On anything but SUCCESS the transport discards rq_res and sends the
 * matching error reply.
 */
typedef int (*rpcrdma_svc_dispatch_fn)(struct rpcrdma_svc_req *req, void *arg);

/**
 * rpcrdma_svc_ddp_begin - start DDP-eligible result data at rq_res's cursor.
 * @req: the call.
 * @max: most bytes the caller will write.
 *
 * The caller has already encoded the opaque's length word (or reserved it).
 * Return: where to write up to @max bytes (inside the transport's
 * registered reply buffer), or NULL when rq_res has no room for @max bytes
 * plus pad.  Only one DDP item per reply.
 */
uint8_t *rpcrdma_svc_ddp_begin(struct rpcrdma_svc_req *req, size_t max);

/**
 * rpcrdma_svc_ddp_end - finish the DDP item with @len bytes (<= max).
 * Advances rq_res past the data and its XDR pad (pad zeroed) and records
 * the item so the transport can send it by RDMA Write (RFC 8166 3.4.6).
 */
void rpcrdma_svc_ddp_end(struct rpcrdma_svc_req *req, size_t len);

/** Smallest DDP item rpcrdma_svc_ddp_pipe() takes: below it a copy into
 *  the reply costs less than the pipe's extra system calls. */
#define RPCRDMA_SVC_DDP_PIPE_MIN (64u << 10)

/**
 * rpcrdma_svc_ddp_pipe - a pipe to put up to @max bytes of DDP-eligible
 * result data in instead of the reply buffer, for a transport that sends
 * them straight from there (TCP: splice() from the pipe to the socket, so
 * file data spliced into it from the page cache is never copied through
 * user space).  In place of rpcrdma_svc_ddp_begin(): the caller moves the
 * data into the returned descriptor (splice(2) from a file, at most @max
 * bytes; it never blocks on the pipe, which holds @max) and then calls
 * rpcrdma_svc_ddp_piped() with the count, or returns without it (what it
 * put in the pipe is then dropped).  Only from a worker (not with
 * rq_transport set: splice from a file may wait for the disk).
 * Return: the pipe's write end (owned by the transport: do not close);
 * -EOPNOTSUPP where the transport has no such path (RDMA: the data goes by
 * RDMA Write; --capture on; @max under RPCRDMA_SVC_DDP_PIPE_MIN; a pipe of
 * @max bytes refused by the kernel's pipe limits): use
 * rpcrdma_svc_ddp_begin(); -EAGAIN with rq_transport set; -EBUSY when the
 * reply already has a DDP item; -ENOSPC when rq_res has no room for @max
 * bytes and pad.
 */
int rpcrdma_svc_ddp_pipe(struct rpcrdma_svc_req *req, size_t max);

/**
 * rpcrdma_svc_ddp_piped - finish the DDP item of rpcrdma_svc_ddp_pipe():
 * @len bytes (<= max) are in the pipe.  Only the XDR pad (zeroed) goes into
 * rq_res; the transport sends the reply with the pipe's bytes between what
 * rq_res held before this call and what follows.  @len must be what the
 * pipe holds (checked with FIONREAD): otherwise no item is recorded and
 * the pipe's bytes are dropped.
 */
void rpcrdma_svc_ddp_piped(struct rpcrdma_svc_req *req, size_t len);

/** Server configuration; zero fields take the defaults noted. */
struct rpcrdma_svc_config {
	const char *sc_listen;      /* address to bind; NULL: any (IPv6 and IPv4) */
	uint16_t sc_port;           /* default RPCRDMA_NFS_PORT (20049) */
	/** Most credits granted per connection, default 128, 1..4096.  A new
	 *  connection is granted min(16, sc_credits); the grant doubles (its
	 *  Receives posted first) whenever half of it is in use, up to this,
	 *  while the memory budget's receive share has room (RFC 8166 3.3.1). */
	uint32_t sc_credits;
	uint32_t sc_inline_size;    /* our inline send and receive size, default 4096 */
	uint32_t sc_max_payload;    /* largest READ/WRITE payload, default 1 MiB */
	/** Large call contexts per RDMA device, shared by its connections,
	 *  default 256, at most 65536: work-request arrays for calls with Read
	 *  chunks, or whose Write and Reply chunks offer more room than a
	 *  small context's reply buffer or have more than 7 segments.  Their
	 *  call and reply buffers come from the pool, sized to the chunks. */
	uint32_t sc_call_contexts;
	/** Most (small) call contexts per RDMA device, default 4096, at most
	 *  65536; created on demand in batches: every call holds one (call
	 *  buffer of the inline size, reply buffer of twice that, header)
	 *  from its Receive until its Send completes; their buffers never take
	 *  more than a quarter of sc_memory.  None free: the message waits, in
	 *  order. */
	uint32_t sc_small_contexts;
	/** Registered memory budget in bytes for all devices together
	 *  (receive buffers, call buffers, chunk buffers), default a quarter of
	 *  the machine's memory, at least 64 MiB; never less than 16 slabs
	 *  (a slab: sc_max_payload + 64 KiB rounded up to a power of two, at
	 *  least 64 KiB; 2 MiB by default).  Receive
	 *  buffers may take half of it; slabs are registered as needed. */
	uint64_t sc_memory;
	/** Connections accepted at once; beyond it rdma_reject (counted in
	 *  conns_refused).  Default: sc_memory divided by an idle
	 *  connection's cost (its receive buffers at the initial grant plus
	 *  its queue rings as Soft-RoCE sizes them), never more than the
	 *  receive half holds, at most 65536. */
	uint32_t sc_max_connections;
	/** Connections accepted at once from one peer address (an IPv4-mapped
	 *  IPv6 address counts as its IPv4 address), closing ones included;
	 *  beyond it rdma_reject, counted in conns_refused and in
	 *  conns_refused_host.  Default: a fair share, sc_max_connections / 8
	 *  but at least 16 (a Linux client mounting with nconnect=16), never
	 *  more than sc_max_connections; at most 65536. */
	uint32_t sc_max_conns_per_host;
	/** Seconds without a message after which a connection is closed when
	 *  nothing is in progress on it (no call, RDMA Read or backchannel
	 *  call) and the upper layer does not say it holds state
	 *  (rpcrdma_svc_set_conn_state()); counted in conns_idle_closed.  It
	 *  goes between the timeout and a quarter more after its last
	 *  message.  Default (0): RPCRDMA_SVC_IDLE_DEFAULT;
	 *  RPCRDMA_SVC_IDLE_NEVER: never; otherwise at most 86400. */
	uint32_t sc_idle_timeout;
	unsigned sc_threads;        /* worker threads, default 4 */
	/** Transport threads (groups of connections, each with its own run
	 *  loop, completion channel, pools and sc_threads / n workers, at
	 *  least one).  Default: the CPUs the calling thread may run on
	 *  (its affinity mask: taskset, a cpuset), at most
	 *  RPCRDMA_SVC_MAX_TRANSPORT_THREADS; never more than sc_threads. */
	unsigned sc_transport_threads;
	/** Optional: return false to refuse a connection from @peer. */
	bool (*sc_accept)(const struct sockaddr *peer, void *arg);
	void *sc_accept_arg;
	bool sc_poll;               /* busy-poll the CQs instead of sleeping */
	/** Who posts a reply (enum rpcrdma_svc_reply_post): by default the
	 *  worker that ran the call where the device's provider posts from
	 *  user space (hardware), the transport thread with Soft-RoCE and
	 *  siw, which refuse posts from a thread whose credentials changed. */
	int sc_reply_post;
	/** Run dispatch functions on the run-loop thread, no worker threads
	 *  (sc_threads is ignored): saves two thread wake-ups per call, but a
	 *  handler that blocks stalls every connection.  The handlers must
	 *  not change the thread's credentials (setfsuid, setgroups ...): the
	 *  kernel refuses uverbs and rdma_cm write()s, which are how Soft-RoCE
	 *  posts, from a thread whose credentials changed since the device
	 *  was opened, even after changing them back.  So not for NFS. */
	bool sc_loop_dispatch;
	FILE *sc_log;               /* connection and error log; NULL: stderr */
	int sc_verbose;
};

/** sc_reply_post: who posts the reply of a call served on a worker. */
enum rpcrdma_svc_reply_post {
	/** Decided per device when it is first used: the transport thread
	 *  for software providers (Soft-RoCE vendor 0xffffff, siw vendor
	 *  0x626d74), the worker for every other device. */
	RPCRDMA_SVC_POST_AUTO = 0,
	/** Always the transport thread: the worker hands the call back. */
	RPCRDMA_SVC_POST_TRANSPORT,
	/** Always the worker (when nothing stops it, see docs/design.md). */
	RPCRDMA_SVC_POST_WORKER,
};

/** sc_idle_timeout's default, seconds: knfsd's for its TCP connections
 *  (6 minutes), one more than the Linux client's own idle disconnect (5). */
#define RPCRDMA_SVC_IDLE_DEFAULT 360u
/** sc_idle_timeout: never close a connection for being idle. */
#define RPCRDMA_SVC_IDLE_NEVER UINT32_MAX

/** Most transport threads a server runs (sc_transport_threads). */
#define RPCRDMA_SVC_MAX_TRANSPORT_THREADS 64u

/** Server counters: one uint64_t ss_<name> per line of
 *  RPCRDMA_SVC_STATS_LIST (<rpcrdma/svc_stats_list.h>, which says what
 *  each counts and which are gauges), in its order. */
struct rpcrdma_svc_stats {
#define RPCRDMA_SVC_STATS_FIELD_(name, type, scope, help) uint64_t ss_##name;
	RPCRDMA_SVC_STATS_LIST(RPCRDMA_SVC_STATS_FIELD_)
#undef RPCRDMA_SVC_STATS_FIELD_
};

struct rpcrdma_svc;

/**
 * rpcrdma_svc_create - create a server and start listening.
 * @cfg: configuration (copied).
 * @out: the server, owned by the caller (rpcrdma_svc_destroy()).
 *
 * Return: 0; -ENOMEM; -EADDRINUSE / -EADDRNOTAVAIL / -ENODEV from binding
 * the rdma_cm listener (no RDMA device serves the address); -EINVAL for a
 * bad address or a configuration out of range (sc_credits above 4096,
 * sc_small_contexts or sc_call_contexts above 65536, sc_inline_size
 * outside 1024..262144, sc_max_payload above 64 MiB, sc_memory below 16
 * slabs).
 */
int rpcrdma_svc_create(const struct rpcrdma_svc_config *cfg,
		       struct rpcrdma_svc **out);

/** The NFS port over TCP (RFC 7530 3.1, RFC 8881 2.9.3), --tcp-port's default. */
#define RPCRDMA_SVC_TCP_PORT 2049

/**
 * rpcrdma_svc_listen_tcp - serve ONC RPC over TCP as well (RFC 5531
 * section 11, record marking), on @addr (numeric IPv4 or IPv6; NULL:
 * every address, IPv6 and IPv4) and @port (0: one the kernel picks).
 * The same programs, workers, admission limits (sc_accept,
 * sc_max_connections, sc_max_conns_per_host, counted together with the
 * RDMA connections), idle timeout and memory budget serve both
 * transports.  A record (all its fragments) is at most sc_max_payload
 * plus 64 KiB; a connection whose record does not complete within 10 s
 * of its first byte, or that does not take a reply within 30 s, is
 * closed.  Calls over TCP have no backchannel (rpcrdma_svc_bc_get()
 * answers -ENOTCONN) and no direct data placement: a DDP item goes out
 * inside the reply.  Call before rpcrdma_svc_run().
 * @bound: out, may be NULL: the port bound.
 * Return: 0; -EINVAL for an address that is not numeric; -EEXIST when
 * already listening; the negated errno of socket(2), bind(2)
 * (-EADDRINUSE, -EACCES ...), listen(2) or epoll_ctl(2).
 */
int rpcrdma_svc_listen_tcp(struct rpcrdma_svc *svc, const char *addr, uint16_t port,
			   uint16_t *bound);

/**
 * rpcrdma_svc_tcp_socket - the listening socket rpcrdma_svc_listen_tcp()
 * made (owned by @svc: for getsockname() and rpcbind registration only),
 * or -1 when the server does not listen on TCP.
 */
int rpcrdma_svc_tcp_socket(const struct rpcrdma_svc *svc);

/**
 * rpcrdma_svc_register - serve program @prog version @vers with @fn.
 * Call before rpcrdma_svc_run().  Return: 0, -ENOSPC (table full),
 * -EEXIST (already registered).
 */
int rpcrdma_svc_register(struct rpcrdma_svc *svc, uint32_t prog, uint32_t vers,
			 rpcrdma_svc_dispatch_fn fn, void *arg);

/**
 * rpcrdma_svc_on_transport_thread - is the calling thread one of a
 * server's transport threads (the ones rpcrdma_svc_run() runs its
 * connections on, which post to the device)?  Code that may be called
 * there (a dispatch function with rq_transport set, sc_accept) uses it to
 * never block: no DNS lookup, no wait for another thread.
 * Return: true on a transport thread while it runs its connections.
 */
bool rpcrdma_svc_on_transport_thread(void);

/** Flag of rpcrdma_svc_register_flags(): try each call on the transport
 *  thread first (rq_transport set; RPCRDMA_SVC_DEFER hands it to a
 *  worker).  A call served there costs no thread hand-off: no worker
 *  wake-up, no wake-up of the transport thread to post the reply. */
#define RPCRDMA_SVC_TRY_TRANSPORT 0x1u

/**
 * rpcrdma_svc_register_flags - rpcrdma_svc_register() with @flags
 * (RPCRDMA_SVC_TRY_TRANSPORT, or 0).  With sc_loop_dispatch every call
 * runs on the transport thread anyway and the flag changes nothing.
 * Return: 0, -ENOSPC (table full), -EEXIST (already registered), -EINVAL
 * (an unknown flag).
 */
int rpcrdma_svc_register_flags(struct rpcrdma_svc *svc, uint32_t prog,
			       uint32_t vers, rpcrdma_svc_dispatch_fn fn,
			       void *arg, unsigned flags);

/**
 * rpcrdma_svc_run - serve until rpcrdma_svc_stop(), or until the listener's
 * RDMA device is removed (rdma_cm DEVICE_REMOVAL on the listening cm_id).
 * Starts sc_threads worker threads, none with sc_loop_dispatch.  On return
 * every connection is closed and every registered pool released (the
 * counters then show anything left over); call rpcrdma_svc_destroy() next.
 * Return: 0 after rpcrdma_svc_stop(); -ENODEV after the listener's device
 * was removed; -ENOMEM, or the negated error of pthread_create() (-EAGAIN
 * ...), when the worker threads cannot be started; the negative errno of
 * epoll_wait() when the event loop fails.
 */
int rpcrdma_svc_run(struct rpcrdma_svc *svc);

/** rpcrdma_svc_stop - ask rpcrdma_svc_run() to return; async-signal-safe. */
void rpcrdma_svc_stop(struct rpcrdma_svc *svc);

/** rpcrdma_svc_dump_stats - ask the run loop to print counters; async-signal-safe. */
void rpcrdma_svc_dump_stats(struct rpcrdma_svc *svc);

/** rpcrdma_svc_get_stats - copy the counters into @st (each counted per
 *  transport is the sum of the transports'). */
void rpcrdma_svc_get_stats(struct rpcrdma_svc *svc, struct rpcrdma_svc_stats *st);

/** rpcrdma_svc_stats_json - print the counters to @f as one JSON object on
 *  one line: "name":value per line of RPCRDMA_SVC_STATS_LIST, in its order. */
void rpcrdma_svc_stats_json(const struct rpcrdma_svc_stats *st, FILE *f);

/**
 * rpcrdma_svc_set_proc_names - name the procedures of program @prog version
 * @vers (registered first) for the statistics: @names[proc] for proc < @n
 * (NULL entries allowed); @status_name, optional, names the statuses
 * reported with rpcrdma_svc_req_set_status().  The arrays must outlive the
 * server.  Return: 0; -ENOENT when @prog/@vers is not registered.
 */
int rpcrdma_svc_set_proc_names(struct rpcrdma_svc *svc, uint32_t prog, uint32_t vers,
			       const char *const *names, uint32_t n,
			       rpcrdma_svc_status_name_fn status_name);

/** Formats of rpcrdma_svc_stats_write(). */
enum rpcrdma_svc_stats_format {
	/** One line: the counters of rpcrdma_svc_stats_json(), then "ops"
	 *  (per program, version and procedure: calls, replies by outcome,
	 *  program statuses, bytes, latency histogram, median and 99th
	 *  percentile) and "conns" (per open connection). */
	RPCRDMA_SVC_STATS_JSON,
	/** A table for people, like nfsstat -s. */
	RPCRDMA_SVC_STATS_TABLE,
	/** The Prometheus text exposition format, version 0.0.4. */
	RPCRDMA_SVC_STATS_PROMETHEUS,
};

/**
 * rpcrdma_svc_stats_write - print every statistic of @svc to @f in @fmt.
 * Safe from any thread while the server runs: per-thread counters are
 * summed, connections copied under a lock they take only at open and close.
 * Return: 0; -ENOMEM; -EINVAL for an unknown @fmt; -EIO when writing @f
 * failed.
 */
int rpcrdma_svc_stats_write(struct rpcrdma_svc *svc, enum rpcrdma_svc_stats_format fmt,
			    FILE *f);

/** Directory of the default control sockets: RPCRDMA_SVC_CONTROL_DIR "/<port>.sock". */
#define RPCRDMA_SVC_CONTROL_DIR "/run/rpcrdma-nfsd"

struct rpcrdma_svc_control;

/**
 * rpcrdma_svc_control_start - serve the statistics of @svc on the Unix
 * stream socket @path, from a thread of its own: a client sends one line
 * ("table", "json" or "prometheus") and reads rpcrdma_svc_stats_write()'s
 * output until the server closes; other requests get a line starting with
 * "error: ".  The socket is created mode 0600, its directory (one level)
 * mode 0700 when missing; only root and the server's user are answered.
 * A socket file nobody answers on (left by a server that died) is
 * replaced.
 * @out: the control socket, stopped with rpcrdma_svc_control_stop()
 * before @svc is destroyed.
 * Return: 0; -EINVAL (empty @path, or longer than a socket address holds);
 * -EADDRINUSE (a running server answers on @path); -EEXIST (@path exists
 * and is not a socket); -ENOMEM; the negated errno of mkdir(), socket(),
 * bind() or listen() (-EACCES, -ENOENT ...), or of pthread_create().
 */
int rpcrdma_svc_control_start(struct rpcrdma_svc *svc, const char *path,
			      struct rpcrdma_svc_control **out);

/** rpcrdma_svc_control_stop - stop serving, remove the socket file, free
 *  @ctl (NULL: no-op). */
void rpcrdma_svc_control_stop(struct rpcrdma_svc_control *ctl);

struct rpcrdma_svc_metrics;

/**
 * rpcrdma_svc_metrics_start - serve the statistics of @svc over HTTP for
 * Prometheus: GET /metrics answers with the text exposition format 0.0.4
 * (rpcrdma_svc_stats_write(), RPCRDMA_SVC_STATS_PROMETHEUS); other paths
 * 404, other methods 405.  libmicrohttpd serves it from a thread of its
 * own, at most 16 connections at once, each closed after 10 idle seconds.
 * @addr: "ADDR:PORT" (numeric IPv4), "[ADDR]:PORT" (IPv6) or ":PORT" (any
 * address, IPv6 and IPv4).
 * @out: the endpoint, stopped with rpcrdma_svc_metrics_stop() before @svc
 * is destroyed.
 * Return: 0; -EINVAL for a malformed @addr or port 0; -ENOMEM; the
 * negated errno of binding (-EADDRINUSE, -EADDRNOTAVAIL, -EACCES ...).
 */
int rpcrdma_svc_metrics_start(struct rpcrdma_svc *svc, const char *addr,
			      struct rpcrdma_svc_metrics **out);

/**
 * rpcrdma_svc_metrics_parse - the address rpcrdma_svc_metrics_start()
 * would bind for @addr, without binding: for checking a command line
 * before anything starts.
 * @addr: as rpcrdma_svc_metrics_start()'s.
 * @sa: the address (":PORT" and "*:PORT": the IPv6 any address, which
 * takes IPv4 too).
 * Return: 0; -EINVAL for a malformed @addr, a host name (numeric only),
 * or port 0 or above 65535.
 */
int rpcrdma_svc_metrics_parse(const char *addr, struct sockaddr_storage *sa);

/** rpcrdma_svc_metrics_stop - stop the endpoint and free @mt (NULL: no-op). */
void rpcrdma_svc_metrics_stop(struct rpcrdma_svc_metrics *mt);

struct rpcrdma_capture;

/**
 * rpcrdma_svc_set_capture - record every RPC-over-RDMA message @svc sends
 * and receives into @cap (see <rpcrdma/capture.h>); NULL: stop.  Call
 * before rpcrdma_svc_run(); @cap must outlive the server (close it after
 * rpcrdma_svc_destroy()).  Return: 0.
 */
int rpcrdma_svc_set_capture(struct rpcrdma_svc *svc, struct rpcrdma_capture *cap);

/**
 * rpcrdma_svc_conn_state_fn - does connection @conn_id hold state of the
 * upper layer, so that it must not be closed for being idle?
 * @conn_id: the connection's number (rpcrdma_svc_req_conn_id(),
 *   rpcrdma_svc_bc_conn_id(); "conn N" in the log).
 * @arg: the pointer given to rpcrdma_svc_set_conn_state().
 * Runs on a transport thread, on several at once when there are several:
 * it must not block.  Return: true to keep the connection.
 */
typedef bool (*rpcrdma_svc_conn_state_fn)(uint32_t conn_id, void *arg);

/**
 * rpcrdma_svc_set_conn_state - ask @fn, before a connection idle for
 * sc_idle_timeout is closed, whether it holds upper-layer state (NFSv4.1:
 * a session's back channel bound to it).  One function per server: a
 * later call replaces it; NULL: no connection holds state.  Call before
 * rpcrdma_svc_run().  Return: 0.
 */
int rpcrdma_svc_set_conn_state(struct rpcrdma_svc *svc, rpcrdma_svc_conn_state_fn fn,
			       void *arg);

/**
 * rpcrdma_svc_req_conn_id - the number of the connection @req arrived on,
 * unique among the server's connections open at once (they are numbered
 * from 1 as accepted; "conn N" in the log).  Callable from the dispatch
 * function.  Return: the number; 0 when @req came from no connection (a
 * dispatch function called directly, as unit tests do).
 */
uint32_t rpcrdma_svc_req_conn_id(const struct rpcrdma_svc_req *req);

/**
 * rpcrdma_svc_req_ddp - whether @req arrived on a transport with direct
 * data placement (RDMA: a DDP item moves by RDMA Read/Write into memory
 * the client named, RFC 8166 3.4.6; RFC 8267 2.2.1 names NFSv3 READ and
 * WRITE data eligible) or on one that carries every byte inline in the
 * record (TCP, RFC 5531 11).  Upper layers use it for size preferences
 * (NFSv3 FSINFO rtpref/wtpref).  Callable from the dispatch function
 * while @req is alive.  Return: true for RDMA, and for a request built
 * outside a transport (rq_xprt NULL); false for TCP.
 */
bool rpcrdma_svc_req_ddp(const struct rpcrdma_svc_req *req);


/* ---------- Backchannel: calls from the server to the client ---------- */
/* Over RDMA: RFC 8167.  Over TCP: ONC RPC calls in records on the
 * client's connection (RFC 5531 11), in order with the replies. */

/**
 * A counted reference to the connection a forward call arrived on, for
 * making backchannel calls on it (NFSv4.1 callbacks).  It stays valid
 * after the connection is gone (calls then fail with -ENOTCONN) until
 * rpcrdma_svc_bc_put().
 */
struct rpcrdma_svc_bc;

/** Backchannel calls one connection may have queued or outstanding at
 *  once; its own Sends and Receives are sized to it. */
#define RPCRDMA_SVC_BC_SLOTS 4u
/** Timeout of a backchannel call when the caller gives 0, milliseconds. */
#define RPCRDMA_SVC_BC_DEFAULT_TIMEOUT_MS 30000u

/**
 * rpcrdma_svc_bc_done_fn - the end of one backchannel call.
 * @arg: ba_done_arg.
 * @status: 0 when a reply came: @reply is its decoded RPC header (accepted
 *   or denied, RFC 5531 9) and @res / @res_len the results that follow an
 *   accepted header (empty otherwise); -EBADMSG when a reply with our xid
 *   came but its RPC header is malformed; -ETIMEDOUT when no reply came
 *   within the timeout; -EREMOTEIO when the client answered RDMA_ERROR
 *   (RFC 8166 4.5); -ENOTCONN when the connection went down first (or
 *   its Send failed); -ENOBUFS when the transport could not get registered
 *   memory for the backchannel.  @reply and @res are NULL unless @status
 *   is 0 and only valid during the call.
 * Runs on the transport thread that owns the connection: it must not
 * block.  It may call rpcrdma_svc_bc_call() and rpcrdma_svc_bc_put().
 * Called exactly once per call that rpcrdma_svc_bc_call() accepted.
 */
typedef void (*rpcrdma_svc_bc_done_fn)(void *arg, int status,
				       const struct rpcrdma_rpc_msg *reply,
				       const uint8_t *res, size_t res_len);

/** One backchannel call (RFC 5531 call header fields and arguments). */
struct rpcrdma_svc_bc_args {
	uint32_t ba_prog, ba_vers, ba_proc;
	uint32_t ba_cred_flavor;   /* RPC_AUTH_NONE or RPC_AUTH_SYS ... */
	const void *ba_cred;       /* credential body, ba_cred_len bytes (<= 400) */
	uint32_t ba_cred_len;
	const void *ba_args;       /* encoded arguments, ba_args_len bytes (XDR
				    * pad to 4 bytes added when missing) */
	size_t ba_args_len;
	uint32_t ba_timeout_ms;    /* 0: RPCRDMA_SVC_BC_DEFAULT_TIMEOUT_MS */
	rpcrdma_svc_bc_done_fn ba_done;
	void *ba_done_arg;
};

/**
 * rpcrdma_svc_bc_get - a reference to the connection @req arrived on.
 * @req: a call being served (from its dispatch function, on any thread).
 * @out: the handle; release it with rpcrdma_svc_bc_put().
 * Return: 0; -ENOMEM; -ENOTCONN when the connection's backchannel has
 * already ended (its connection went down), or when @req came from no
 * connection (a dispatch function called directly, as unit tests do).  A
 * connection that goes down later makes its calls end with -ENOTCONN.
 */
int rpcrdma_svc_bc_get(const struct rpcrdma_svc_req *req, struct rpcrdma_svc_bc **out);

/**
 * rpcrdma_svc_bc_hold - take one more reference on @bc (any thread).
 */
void rpcrdma_svc_bc_hold(struct rpcrdma_svc_bc *bc);

/**
 * rpcrdma_svc_bc_put - drop a reference (any thread, NULL ignored); the
 * handle is freed with the last one.  Calls in progress are not cancelled.
 */
void rpcrdma_svc_bc_put(struct rpcrdma_svc_bc *bc);

/**
 * rpcrdma_svc_bc_connected - false once the connection is closing or gone
 * (a hint: it may close right after true is returned).
 */
bool rpcrdma_svc_bc_connected(struct rpcrdma_svc_bc *bc);

/**
 * rpcrdma_svc_bc_conn_id - the number of @bc's connection, as
 * rpcrdma_svc_req_conn_id() gives it (still after the connection is gone).
 */
uint32_t rpcrdma_svc_bc_conn_id(const struct rpcrdma_svc_bc *bc);

/**
 * rpcrdma_svc_bc_call - start a backchannel call on @bc's connection
 * (RDMA: RFC 8167 5.1, an RDMA_MSG with empty chunk lists; TCP: one
 * record of one fragment; a fresh xid either way).
 * Callable from any thread: the call is copied and queued on the
 * connection, and the thread that owns it is woken to send it.  It is
 * sent while the client's backchannel credit allows (RDMA, RFC 8167 4.1:
 * at first one call, then the grant of its latest backchannel reply; TCP
 * has no credits: as the slots allow), in
 * the order queued; the reply is matched by xid and handed to
 * @a->ba_done.  The timeout runs from this call, queueing included.
 * @xid: out, optional: the call's RPC xid.
 * Return: 0 (ba_done will run exactly once); -ENOTCONN when the
 * connection is closing or gone; -EAGAIN when RPCRDMA_SVC_BC_SLOTS calls
 * of this connection are queued or outstanding (try again after a
 * completion); -EMSGSIZE when the call does not fit the client's inline
 * threshold (RFC 8167 5.1: no chunks on the backchannel; TCP: the
 * server's reply buffer size); -EINVAL
 * without ba_done or with a credential over 400 bytes; -ENOMEM.
 */
int rpcrdma_svc_bc_call(struct rpcrdma_svc_bc *bc, const struct rpcrdma_svc_bc_args *a,
			uint32_t *xid);

/** rpcrdma_svc_destroy - close every connection and free the server. */
void rpcrdma_svc_destroy(struct rpcrdma_svc *svc);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_SVC_H */
