/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma/svc_stats_list.h - the server's transport counters, one line
 * each: the list struct rpcrdma_svc_stats (<rpcrdma/svc.h>), the JSON
 * line, the Prometheus families and rpcrdma-stat's table are expanded
 * from (docs/observability.md).
 *
 * X(name, type, scope, help):
 *   name   the field is ss_<name>, the JSON key "<name>", the metric
 *          rpcrdma_svc_<name>_total (a counter) or rpcrdma_svc_<name>
 *          (a gauge);
 *   type   counter (monotonic) or gauge (goes up and down);
 *   scope  all: one figure for the server; xprt: counted per transport
 *          as well (the Prometheus samples carry transport="rdma" and
 *          transport="tcp"; the struct, the JSON and their sum is the
 *          server's figure);
 *   help   the Prometheus HELP text, one sentence.
 *
 * The list is struct rpcrdma_svc_stats' layout, an ABI: its lines are in
 * the struct's order and a line added here changes the struct's size.  A
 * new counter goes at the end of SVC_STATS_PRIVATE_LIST in
 * src/svc/svc_counters.h instead (JSON, Prometheus and the table, not the
 * public struct), and moves here only with a new soname.
 *
 * The list is cut in sections so that the Prometheus families keep the
 * order they had before the list existed (A, D, B, E, C: a scrape
 * compares equal byte for byte); the struct and the JSON use A B C D E.
 */
#ifndef RPCRDMA_SVC_STATS_LIST_H
#define RPCRDMA_SVC_STATS_LIST_H

/* A: traffic, call contexts, registered memory, refusals. */
#define RPCRDMA_SVC_STATS_LIST_A(X) \
	X(connections, counter, xprt, "Connections accepted.") \
	X(calls, counter, xprt, "RPC calls received by the transport.") \
	X(replies_inline, counter, xprt, "Replies sent inline.") \
	X(replies_write_chunk, counter, all, "Replies that used a Write chunk.") \
	X(replies_reply_chunk, counter, all, "Replies sent through the Reply chunk.") \
	X(rdma_errors_sent, counter, all, "RDMA_ERROR messages sent.") \
	X(drops, counter, all, "Calls dropped without a reply.") \
	X(read_chunks, counter, all, "Read chunks pulled by RDMA Read.") \
	X(rdma_read_bytes, counter, all, "Bytes moved by RDMA Read.") \
	X(rdma_write_bytes, counter, all, "Bytes moved by RDMA Write.") \
	X(send_bytes, counter, xprt, "Bytes sent by Send.") \
	X(recv_bytes, counter, xprt, "Bytes received by Receive.") \
	X(send_invalidates, counter, all, "Replies sent With Invalidate.") \
	X(recv_refills, counter, all, "Chained posts returning Receives.") \
	X(post_errors, counter, all, "Posts the device refused.") \
	X(ctx_waits, counter, all, "Messages that waited for a call context.") \
	X(ctx_in_use, gauge, all, "Call contexts in use.") \
	X(ctx_high, gauge, all, "Most call contexts in use at once.") \
	X(large_waits, counter, all, "Calls that waited for a large call context.") \
	X(large_in_use, gauge, all, "Large call contexts in use.") \
	X(large_high, gauge, all, "Most large call contexts in use at once.") \
	X(recv_in_use, gauge, all, "Receive buffers held, not posted.") \
	X(conns_open, gauge, xprt, "Connections open.") \
	X(mrs_open, gauge, all, "Registered memory regions.") \
	X(mr_bytes, gauge, all, "Bytes of registered memory.") \
	X(conns_refused, counter, all, "Connections refused (limit or memory).")

/* B: the buffer pool, credits, send queue. */
#define RPCRDMA_SVC_STATS_LIST_B(X) \
	X(buf_waits, counter, all, "Calls served after waiting for chunk buffers.") \
	X(buf_bytes_in_use, gauge, all, "Pool bytes handed out.") \
	X(buf_bytes_high, gauge, all, "Most pool bytes handed out at once.") \
	X(credit_grows, counter, all, "Credit grants raised.") \
	X(credit_grow_denied, counter, all, "Credit grants held low for lack of memory.") \
	X(sq_waits, counter, all, "Chains that waited for send-queue slots.") \
	X(pool_trims, counter, all, "Idle slabs deregistered.") \
	X(send_batches, counter, all, "Posts carrying a batch of replies.")

/* C: where calls were served and replies posted; the backchannel (RFC 8167). */
#define RPCRDMA_SVC_STATS_LIST_C(X) \
	X(transport_calls, counter, all, "Calls served on the transport thread (no hand-off).") \
	X(transport_defers, counter, all, "Calls tried on the transport thread that asked for a worker.") \
	X(worker_posts, counter, all, "Replies posted by the worker that served the call.") \
	X(bc_calls, counter, all, "Backchannel calls sent.") \
	X(bc_replies, counter, all, "Backchannel replies matched to a call.") \
	X(bc_unmatched, counter, all, "Backchannel replies of no waiting call (dropped).") \
	X(bc_timeouts, counter, all, "Backchannel calls ended by their timeout.")

/* D: admission (sc_max_conns_per_host, sc_idle_timeout). */
#define RPCRDMA_SVC_STATS_LIST_D(X) \
	X(conns_refused_host, counter, all, "Connections refused: their address's share taken.") \
	X(conns_idle_closed, counter, xprt, "Connections closed after the idle timeout.")

/* E: ONC RPC over TCP (rpcrdma_svc_listen_tcp()); its connections and
 * calls are in connections, conns_open and calls as well. */
#define RPCRDMA_SVC_STATS_LIST_E(X) \
	X(tcp_connections, counter, all, "TCP connections accepted.") \
	X(tcp_calls, counter, all, "Records received over TCP.") \
	X(tcp_bad_records, counter, all, "TCP connections closed: a record over the size cap.") \
	X(tcp_record_timeouts, counter, all, "TCP connections closed: a record not complete in time.") \
	X(tcp_send_timeouts, counter, all, "TCP connections closed: a reply not taken in time.") \
	X(tcp_mem_waits, counter, all, "TCP records that waited for the memory budget to grow their buffer.") \
	X(tcp_calls_in_use, gauge, all, "TCP call contexts in use.") \
	X(tcp_spliced_replies, counter, all, "READ replies over TCP whose data went from the file by splice().") \
	X(tcp_spliced_bytes, counter, all, "Bytes of READ data sent over TCP by splice().")

/** Every public counter, in struct rpcrdma_svc_stats' order. */
#define RPCRDMA_SVC_STATS_LIST(X) \
	RPCRDMA_SVC_STATS_LIST_A(X) RPCRDMA_SVC_STATS_LIST_B(X) RPCRDMA_SVC_STATS_LIST_C(X) \
	RPCRDMA_SVC_STATS_LIST_D(X) RPCRDMA_SVC_STATS_LIST_E(X)

#endif /* RPCRDMA_SVC_STATS_LIST_H */
