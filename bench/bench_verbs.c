// SPDX-License-Identifier: MIT
/*
 * bench_verbs.c - the raw verbs floor under bench_rpc's NULL figure (make
 * bench, section 4): two-sided message exchange with no RPC at all.
 *
 * The client keeps N messages in flight; the server sends each message it
 * receives straight back.  One round trip is one Send each way, as one NULL
 * call is (RFC 8166 section 3.3: a call and its reply are each one Send), of
 * the same sizes by default (68 B: a 28 B transport header and a 40 B NULL
 * call with AUTH_NONE; the reply is answered with as many bytes).  Both
 * sides do what a good RPC transport does and nothing more, so the rate is
 * what the device and the host allow:
 *   - one thread, one CQ for Sends and Receives, sleeping on its completion
 *     channel when the CQ is empty (armed, then polled once more);
 *   - the Sends of one poll batch posted as one chain (one doorbell), one
 *     in every quarter of the send queue signalled;
 *   - the Receives of one poll batch re-posted as one chain.
 * Not a test: it asserts nothing about time; it prints one JSON object.
 *
 * Usage:
 *   bench_verbs server --listen ADDR [--port N]      (serves until killed)
 *   bench_verbs client [--source ADDR] SERVER [--port N] --inflight N
 *                      --seconds S [--bytes B]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define BV_DEPTH 256u      /* Receives posted and send queue slots */
#define BV_POLL 32         /* completions taken per poll */
#define BV_BYE 0xffu       /* first byte of the client's last message */
#define BV_WR_SEND 1ull    /* wr_id tag bit: a Send (count of Sends above) */

struct bv_ep {
	struct rdma_cm_id *be_id;
	struct ibv_comp_channel *be_ch;
	struct ibv_cq *be_cq;
	struct ibv_mr *be_mr;
	uint8_t *be_buf;              /* BV_DEPTH receive slots, then send slots */
	unsigned int be_bytes;
	unsigned int be_sq_out;       /* Sends posted, completion not yet seen */
	unsigned int be_unsignaled;   /* Sends since the last signalled one */
	unsigned int be_nsend;        /* Sends queued in be_send[] */
	unsigned int be_send_slot;    /* next send slot (ring) */
	struct ibv_send_wr be_send[BV_DEPTH];
	struct ibv_sge be_send_sge[BV_DEPTH];
	unsigned int be_nrecv;        /* Receives queued in be_recv[] */
	struct ibv_recv_wr be_recv[BV_DEPTH];
	struct ibv_sge be_recv_sge[BV_DEPTH];
	bool be_armed;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_verbs: %s: %s\n", what, strerror(err));
	exit(1);
}

/* Queue Receive @slot for the next flush. */
static void bv_queue_recv(struct bv_ep *ep, unsigned int slot)
{
	struct ibv_recv_wr *wr = &ep->be_recv[ep->be_nrecv];
	struct ibv_sge *sge = &ep->be_recv_sge[ep->be_nrecv];

	sge->addr = (uintptr_t)(ep->be_buf + (size_t)slot * ep->be_bytes);
	sge->length = ep->be_bytes;
	sge->lkey = ep->be_mr->lkey;
	wr->wr_id = (uint64_t)slot << 1;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->next = NULL;
	if (ep->be_nrecv)
		ep->be_recv[ep->be_nrecv - 1].next = wr;
	ep->be_nrecv++;
}

/* Queue a Send of @len bytes copied from @data for the next flush. */
static void bv_queue_send(struct bv_ep *ep, const uint8_t *data, unsigned int len)
{
	unsigned int slot = ep->be_send_slot++ % BV_DEPTH;
	uint8_t *p = ep->be_buf + (size_t)(BV_DEPTH + slot) * ep->be_bytes;
	struct ibv_send_wr *wr = &ep->be_send[ep->be_nsend];
	struct ibv_sge *sge = &ep->be_send_sge[ep->be_nsend];

	memcpy(p, data, len);
	sge->addr = (uintptr_t)p;
	sge->length = len;
	sge->lkey = ep->be_mr->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->opcode = IBV_WR_SEND;
	wr->sg_list = sge;
	wr->num_sge = 1;
	ep->be_unsignaled++;
	if (ep->be_unsignaled >= BV_DEPTH / 4) {
		wr->send_flags = IBV_SEND_SIGNALED;
		wr->wr_id = ((uint64_t)ep->be_unsignaled << 1) | BV_WR_SEND;
		ep->be_unsignaled = 0;
	}
	if (ep->be_nsend)
		ep->be_send[ep->be_nsend - 1].next = wr;
	ep->be_nsend++;
	ep->be_sq_out++;
}

/* Post what is queued: Receives first, then the Sends as one chain. */
static void bv_flush(struct bv_ep *ep)
{
	struct ibv_recv_wr *bad_recv;
	struct ibv_send_wr *bad_send;
	int ret;

	if (ep->be_nrecv) {
		ret = ibv_post_recv(ep->be_id->qp, ep->be_recv, &bad_recv);
		if (ret)
			die("ibv_post_recv", ret);
		ep->be_nrecv = 0;
	}
	if (ep->be_nsend) {
		ret = ibv_post_send(ep->be_id->qp, ep->be_send, &bad_send);
		if (ret)
			die("ibv_post_send", ret);
		ep->be_nsend = 0;
	}
}

/*
 * Take up to BV_POLL completions into @wc, sleeping on the channel when the
 * CQ is empty.  Return how many (> 0).
 */
static int bv_wait(struct bv_ep *ep, struct ibv_wc *wc)
{
	struct ibv_cq *cq;
	void *ctx;
	int n;

	for (;;) {
		n = ibv_poll_cq(ep->be_cq, BV_POLL, wc);
		if (n < 0)
			die("ibv_poll_cq", EIO);
		if (n > 0)
			return n;
		if (!ep->be_armed) {
			if (ibv_req_notify_cq(ep->be_cq, 0))
				die("ibv_req_notify_cq", errno);
			ep->be_armed = true;
			continue;       /* one more poll: a completion may have raced */
		}
		if (ibv_get_cq_event(ep->be_ch, &cq, &ctx))
			die("ibv_get_cq_event", errno);
		ibv_ack_cq_events(cq, 1);
		ep->be_armed = false;
	}
}

/* Account a completion that is not a Receive; false on an error status. */
static bool bv_send_done(struct bv_ep *ep, const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS)
		return false;
	ep->be_sq_out -= (unsigned int)(wc->wr_id >> 1);
	return true;
}

/* CQ, QP, buffers and every Receive for @id (before accept / connect). */
static void bv_ep_init(struct bv_ep *ep, struct rdma_cm_id *id, unsigned int bytes)
{
	struct ibv_qp_init_attr attr;
	unsigned int i;

	memset(ep, 0, sizeof(*ep));
	ep->be_id = id;
	ep->be_bytes = bytes;
	ep->be_ch = ibv_create_comp_channel(id->verbs);
	if (!ep->be_ch)
		die("ibv_create_comp_channel", errno);
	ep->be_cq = ibv_create_cq(id->verbs, 2 * BV_DEPTH, NULL, ep->be_ch, 0);
	if (!ep->be_cq)
		die("ibv_create_cq", errno);
	memset(&attr, 0, sizeof(attr));
	attr.send_cq = ep->be_cq;
	attr.recv_cq = ep->be_cq;
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = BV_DEPTH;
	attr.cap.max_recv_wr = BV_DEPTH;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, NULL, &attr))
		die("rdma_create_qp", errno);
	ep->be_buf = calloc(2 * BV_DEPTH, bytes);
	if (!ep->be_buf)
		die("calloc", ENOMEM);
	ep->be_mr = ibv_reg_mr(id->pd, ep->be_buf, (size_t)2 * BV_DEPTH * bytes,
			       IBV_ACCESS_LOCAL_WRITE);
	if (!ep->be_mr)
		die("ibv_reg_mr", errno);
	for (i = 0; i < BV_DEPTH; i++)
		bv_queue_recv(ep, i);
	bv_flush(ep);
}

static void bv_ep_fini(struct bv_ep *ep)
{
	rdma_destroy_qp(ep->be_id);
	ibv_dereg_mr(ep->be_mr);
	ibv_destroy_cq(ep->be_cq);
	ibv_destroy_comp_channel(ep->be_ch);
	rdma_destroy_id(ep->be_id);
	free(ep->be_buf);
}

static struct rdma_addrinfo *bv_addr(const char *node, const char *port, bool passive,
				     const char *source)
{
	struct rdma_addrinfo hints, *res;
	struct sockaddr_in src;

	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_TCP;
	if (passive)
		hints.ai_flags = RAI_PASSIVE;
	if (source) {
		memset(&src, 0, sizeof(src));
		src.sin_family = AF_INET;
		if (inet_pton(AF_INET, source, &src.sin_addr) != 1) {
			fprintf(stderr, "bench_verbs: --source %s: not an IPv4 address\n", source);
			exit(2);
		}
		hints.ai_src_addr = (struct sockaddr *)&src;
		hints.ai_src_len = sizeof(src);
	}
	if (rdma_getaddrinfo(node, port, &hints, &res)) {
		fprintf(stderr, "bench_verbs: cannot resolve %s port %s: %s\n", node, port,
			strerror(errno));
		exit(1);
	}
	return res;
}

/* ------------------------------------------------------------------ server */

/* Echo every message of one connection until the client's last one. */
static void serve_one(struct rdma_cm_id *id, unsigned int bytes)
{
	unsigned int backlog[BV_DEPTH], lens[BV_DEPTH], first = 0, nback = 0;
	struct ibv_wc wc[BV_POLL];
	struct bv_ep *ep;
	bool bye = false;
	int i, n;

	ep = calloc(1, sizeof(*ep));
	if (!ep)
		die("calloc", ENOMEM);
	bv_ep_init(ep, id, bytes);
	if (rdma_accept(id, NULL)) {
		fprintf(stderr, "bench_verbs: rdma_accept: %s\n", strerror(errno));
		goto out;
	}
	while (!bye) {
		n = bv_wait(ep, wc);
		for (i = 0; i < n; i++) {
			unsigned int slot = (unsigned int)(wc[i].wr_id >> 1);
			const uint8_t *msg;

			if (wc[i].wr_id & BV_WR_SEND) {
				if (!bv_send_done(ep, &wc[i]))
					bye = true;
				continue;
			}
			if (wc[i].status != IBV_WC_SUCCESS) {
				bye = true;
				continue;
			}
			msg = ep->be_buf + (size_t)slot * bytes;
			if (wc[i].byte_len && msg[0] == BV_BYE) {
				bye = true;
				continue;
			}
			/* echoed when the send queue has room; the Receive
			 * is re-posted after its bytes went out */
			backlog[(first + nback++) % BV_DEPTH] = slot;
			lens[slot] = wc[i].byte_len;
		}
		while (nback && ep->be_sq_out < BV_DEPTH - 1) {
			unsigned int slot = backlog[first];

			bv_queue_send(ep, ep->be_buf + (size_t)slot * bytes, lens[slot]);
			bv_queue_recv(ep, slot);
			first = (first + 1) % BV_DEPTH;
			nback--;
		}
		if (!bye)
			bv_flush(ep);
	}
	rdma_disconnect(id);
out:
	bv_ep_fini(ep);
	free(ep);
}

static int run_server(const char *listen, const char *port, unsigned int bytes)
{
	struct rdma_addrinfo *res = bv_addr(listen, port, true, NULL);
	struct rdma_cm_id *lid, *id;

	if (rdma_create_ep(&lid, res, NULL, NULL))
		die("rdma_create_ep", errno);
	rdma_freeaddrinfo(res);
	if (rdma_listen(lid, 4))
		die("rdma_listen", errno);
	for (;;) {
		if (rdma_get_request(lid, &id))
			die("rdma_get_request", errno);
		serve_one(id, bytes);
	}
	return 0;
}

/* ------------------------------------------------------------------ client */

static int run_client(const char *server, const char *port, const char *source,
		      unsigned int inflight, unsigned int seconds, unsigned int bytes)
{
	struct rdma_addrinfo *res = bv_addr(server, port, false, source);
	struct ibv_wc wc[BV_POLL];
	uint64_t t0, t1, deadline, done = 0;
	unsigned int out = 0, owed = 0, i;
	struct rdma_cm_id *id;
	struct bv_ep *ep;
	uint8_t *msg;
	bool failed = false, more = true;
	int k, n;

	msg = calloc(1, bytes);
	ep = calloc(1, sizeof(*ep));
	if (!msg || !ep)
		die("calloc", ENOMEM);
	if (rdma_create_ep(&id, res, NULL, NULL))
		die("rdma_create_ep", errno);
	rdma_freeaddrinfo(res);
	bv_ep_init(ep, id, bytes);
	if (rdma_connect(id, NULL))
		die("rdma_connect", errno);
	t0 = now_ns();
	deadline = t0 + (uint64_t)seconds * 1000000000ull;
	for (i = 0; i < inflight; i++)
		bv_queue_send(ep, msg, bytes);
	out = inflight;
	bv_flush(ep);
	while (!failed && (more || out)) {
		n = bv_wait(ep, wc);
		if (more && now_ns() >= deadline)
			more = false;
		for (k = 0; k < n; k++) {
			if (wc[k].wr_id & BV_WR_SEND) {
				if (!bv_send_done(ep, &wc[k]))
					failed = true;
				continue;
			}
			if (wc[k].status != IBV_WC_SUCCESS) {
				failed = true;
				continue;
			}
			done++;
			out--;
			bv_queue_recv(ep, (unsigned int)(wc[k].wr_id >> 1));
			if (more)
				owed++;
		}
		while (more && owed && ep->be_sq_out < BV_DEPTH - 1) {
			bv_queue_send(ep, msg, bytes);
			owed--;
			out++;
		}
		bv_flush(ep);
	}
	t1 = now_ns();
	if (!failed) {
		/* the last message tells the server to hang up */
		msg[0] = BV_BYE;
		bv_queue_send(ep, msg, bytes);
		if (ep->be_unsignaled) {        /* signal it: covers the tail */
			ep->be_send[ep->be_nsend - 1].send_flags = IBV_SEND_SIGNALED;
			ep->be_send[ep->be_nsend - 1].wr_id =
				((uint64_t)ep->be_unsignaled << 1) | BV_WR_SEND;
			ep->be_unsignaled = 0;
		}
		bv_flush(ep);
		while (ep->be_sq_out && !failed) {
			n = bv_wait(ep, wc);
			for (k = 0; k < n; k++)
				if ((wc[k].wr_id & BV_WR_SEND) && !bv_send_done(ep, &wc[k]))
					failed = true;
		}
	}
	rdma_disconnect(id);
	bv_ep_fini(ep);
	free(ep);
	free(msg);
	if (failed) {
		fprintf(stderr, "bench_verbs: a completion failed\n");
		return 1;
	}
	printf("{\"figure\":\"raw\",\"inflight\":%u,\"bytes\":%u,\"round_trips\":%" PRIu64
	       ",\"seconds\":%.3f,\"round_trips_per_s\":%.1f}\n",
	       inflight, bytes, done, (double)(t1 - t0) / 1e9,
	       (double)done / ((double)(t1 - t0) / 1e9));
	return 0;
}

/* ------------------------------------------------------------------ main */

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_verbs server --listen ADDR [--port N] [--bytes B]\n"
		"       bench_verbs client [--source ADDR] SERVER [--port N] --inflight N --seconds S [--bytes B]\n");
	exit(2);
}

static unsigned int num(const char *opt, const char *s, unsigned long min, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "bench_verbs: %s %s: want a number from %lu to %lu\n", opt, s, min, max);
		exit(2);
	}
	return (unsigned int)v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "port", required_argument, NULL, 'p' },
		{ "source", required_argument, NULL, 's' },
		{ "inflight", required_argument, NULL, 'i' },
		{ "seconds", required_argument, NULL, 't' },
		{ "bytes", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen = NULL, *port = "20052", *source = NULL;
	unsigned int inflight = 0, seconds = 0, bytes = 68;
	bool server;
	int c;

	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "server"))
		server = true;
	else if (!strcmp(argv[1], "client"))
		server = false;
	else
		usage();
	optind = 2;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'l': listen = optarg; break;
		case 'p': port = optarg; break;
		case 's': source = optarg; break;
		case 'i': inflight = num("--inflight", optarg, 1, BV_DEPTH / 2); break;
		case 't': seconds = num("--seconds", optarg, 1, 3600); break;
		case 'b': bytes = num("--bytes", optarg, 1, 4096); break;
		default: usage();
		}
	}
	if (server) {
		if (!listen || optind != argc)
			usage();
		return run_server(listen, port, bytes);
	}
	if (optind != argc - 1 || !inflight || !seconds)
		usage();
	return run_client(argv[optind], port, source, inflight, seconds, bytes);
}
