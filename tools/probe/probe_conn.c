// SPDX-License-Identifier: MIT
/*
 * probe_conn.c - one Requester connection of rpcrdma-probe: rdma_cm
 * connection set-up with RFC 8797 private data, a registered slab
 * (Receive buffers, Send buffers and a chunk area the server may read and
 * write), Sends, and waiting for received messages or the end of the
 * connection with a timeout.
 *
 * Single-threaded: the caller drives everything.  Completions are reaped
 * by probe_conn_poll(); received messages are copied into a ring and their
 * Receives reposted at once, so a burst of replies never starves the
 * Receive queue.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe.h"
#include "verbs/verbs.h"

/* wr_id of a Send carries this bit; a Receive's is its buffer index. */
#define PROBE_WR_SEND (1ull << 63)
/* Received messages waiting for the caller. */
#define PROBE_RING PROBE_NRECV
/* How long address and route resolution and the connection may take. */
#define PROBE_CM_TIMEOUT_MS 5000

struct probe_ring {
	uint32_t pr_head;
	uint32_t pr_count;
	struct probe_msg pr_msg[PROBE_RING];
};

/* One ring per process: there is never more than one connection. */
static struct probe_ring *probe_ring;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void conn_down(struct probe_conn *pc, const char *fmt, const char *arg)
{
	if (!pc->pc_up)
		return;
	pc->pc_up = false;
	snprintf(pc->pc_down_why, sizeof(pc->pc_down_why), fmt, arg);
}

/*
 * probe_addr - fill @ss from @host and @port (numeric or resolvable).
 * Returns 0, or -EINVAL when the name does not resolve.
 */
int probe_addr(const char *host, uint16_t port, struct sockaddr_storage *ss)
{
	struct addrinfo hints, *res;
	char serv[8];

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(serv, sizeof(serv), "%u", port);
	if (getaddrinfo(host, serv, &hints, &res))
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

/*
 * Wait for the next CM event and check that it is @want.  On success the
 * event is returned in *@evp (the caller acks it).  Returns 0, -ETIMEDOUT,
 * -ECONNREFUSED (rejected), -EHOSTUNREACH (unreachable, address or route
 * error), or -EPROTO (another event).
 */
static int conn_cm_wait(struct probe_conn *pc, enum rdma_cm_event_type want,
			struct rdma_cm_event **evp)
{
	int64_t deadline = now_ms() + PROBE_CM_TIMEOUT_MS;
	struct rdma_cm_event *ev;
	struct pollfd pfd;
	int rc;

	for (;;) {
		if (!rdma_get_cm_event(pc->pc_cm_ch, &ev))
			break;
		if (errno != EAGAIN)
			return -errno;
		pfd.fd = pc->pc_cm_ch->fd;
		pfd.events = POLLIN;
		rc = (int)(deadline - now_ms());
		if (rc <= 0)
			return -ETIMEDOUT;
		poll(&pfd, 1, rc);
	}
	if (ev->event == want) {
		*evp = ev;
		return 0;
	}
	if (pc->pc_opts->po_verbose)
		fprintf(stderr, "rpcrdma-probe: CM event %s (status %d) while waiting for %s\n",
			rdma_event_str(ev->event), ev->status, rdma_event_str(want));
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		rc = -ECONNREFUSED;
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		rc = -EHOSTUNREACH;
		break;
	default:
		rc = -EPROTO;
		break;
	}
	rdma_ack_cm_event(ev);
	return rc;
}

static int conn_create_qp(struct probe_conn *pc)
{
	struct ibv_qp_init_attr attr;
	size_t slab;

	pc->pc_pd = ibv_alloc_pd(pc->pc_id->verbs);
	if (!pc->pc_pd)
		return -ENOMEM;
	pc->pc_comp_ch = ibv_create_comp_channel(pc->pc_id->verbs);
	if (!pc->pc_comp_ch)
		return -errno;
	if (fcntl(pc->pc_comp_ch->fd, F_SETFL,
		  fcntl(pc->pc_comp_ch->fd, F_GETFL) | O_NONBLOCK) < 0)
		return -errno;
	pc->pc_cq = ibv_create_cq(pc->pc_id->verbs, PROBE_NRECV + PROBE_NSEND + 16,
				  pc, pc->pc_comp_ch, 0);
	if (!pc->pc_cq)
		return -errno;

	memset(&attr, 0, sizeof(attr));
	attr.send_cq = pc->pc_cq;
	attr.recv_cq = pc->pc_cq;
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = PROBE_NSEND;
	attr.cap.max_recv_wr = PROBE_NRECV;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(pc->pc_id, pc->pc_pd, &attr))
		return -errno;

	slab = (size_t)PROBE_NRECV * PROBE_RECV_BYTES +
	       (size_t)PROBE_NSEND * PROBE_SEND_BYTES + PROBE_CHUNK_BYTES;
	if (posix_memalign((void **)&pc->pc_slab, 4096, slab))
		return -ENOMEM;
	memset(pc->pc_slab, 0, slab);
	pc->pc_recv = pc->pc_slab;
	pc->pc_send = pc->pc_recv + (size_t)PROBE_NRECV * PROBE_RECV_BYTES;
	pc->pc_chunk = pc->pc_send + (size_t)PROBE_NSEND * PROBE_SEND_BYTES;
	/* The chunks we offer are read and written by the server. */
	pc->pc_mr = ibv_reg_mr(pc->pc_pd, pc->pc_slab, slab,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			       IBV_ACCESS_REMOTE_WRITE);
	if (!pc->pc_mr)
		return -errno;
	return 0;
}

static int conn_post_recv(struct probe_conn *pc, uint32_t idx)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;

	sge.addr = (uintptr_t)(pc->pc_recv + (size_t)idx * PROBE_RECV_BYTES);
	sge.length = PROBE_RECV_BYTES;
	sge.lkey = pc->pc_mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = idx;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return -ibv_post_recv(pc->pc_id->qp, &wr, &bad);
}

/* All Receives in one chained post. */
static int conn_post_all_recvs(struct probe_conn *pc)
{
	static struct ibv_recv_wr wr[PROBE_NRECV];
	static struct ibv_sge sge[PROBE_NRECV];
	struct ibv_recv_wr *bad;
	uint32_t i;

	for (i = 0; i < PROBE_NRECV; i++) {
		sge[i].addr = (uintptr_t)(pc->pc_recv + (size_t)i * PROBE_RECV_BYTES);
		sge[i].length = PROBE_RECV_BYTES;
		sge[i].lkey = pc->pc_mr->lkey;
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].next = i + 1 < PROBE_NRECV ? &wr[i + 1] : NULL;
	}
	return -ibv_post_recv(pc->pc_id->qp, wr, &bad);
}

/**
 * probe_conn_open - connect to the server as a Requester.
 * @pc: out: the connection (zeroed here).
 * @opts: server, port, optional source address.
 *
 * Resolves the address (bound to the source address when given) and the
 * route, creates the QP and the registered slab, posts every Receive and
 * connects with RFC 8797 private data (inline send and receive 1024
 * bytes, no Send With Invalidate).  The server's private data, when it
 * sends some, sets how much we may send inline.
 *
 * Return: 0; -EINVAL (bad address), -ETIMEDOUT, -ECONNREFUSED,
 * -EHOSTUNREACH, -ENOMEM, or another negative errno from verbs.
 */
int probe_conn_open(struct probe_conn *pc, const struct probe_opts *opts)
{
	struct sockaddr_storage dst, src;
	struct rdma_conn_param param;
	struct ibv_device_attr dev;
	struct rdma_cm_event *ev;
	uint8_t pdata[RPCRDMA_CM_PRIVATE_BYTES];
	int rc;

	memset(pc, 0, sizeof(*pc));
	pc->pc_opts = opts;
	pc->pc_xid = (uint32_t)(now_ms() * 7919u) ^ 0x50524f00u;
	if (!probe_ring) {
		probe_ring = calloc(1, sizeof(*probe_ring));
		if (!probe_ring)
			return -ENOMEM;
	}
	probe_ring->pr_head = probe_ring->pr_count = 0;

	rc = probe_addr(opts->po_server, opts->po_port, &dst);
	if (rc)
		return rc;
	if (opts->po_source) {
		rc = probe_addr(opts->po_source, 0, &src);
		if (rc)
			return rc;
	}
	pc->pc_cm_ch = rdma_create_event_channel();
	if (!pc->pc_cm_ch)
		return -errno;
	if (fcntl(pc->pc_cm_ch->fd, F_SETFL,
		  fcntl(pc->pc_cm_ch->fd, F_GETFL) | O_NONBLOCK) < 0) {
		rc = -errno;
		goto out_close;
	}
	if (rdma_create_id(pc->pc_cm_ch, &pc->pc_id, pc, RDMA_PS_TCP)) {
		rc = -errno;
		goto out_close;
	}
	if (rdma_resolve_addr(pc->pc_id, opts->po_source ? (struct sockaddr *)&src : NULL,
			      (struct sockaddr *)&dst, PROBE_CM_TIMEOUT_MS)) {
		/* devices exist (checked first), none for this address */
		rc = errno == ENODEV || errno == EADDRNOTAVAIL ? -EHOSTUNREACH : -errno;
		goto out_close;
	}
	rc = conn_cm_wait(pc, RDMA_CM_EVENT_ADDR_RESOLVED, &ev);
	if (rc)
		goto out_close;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(pc->pc_id, PROBE_CM_TIMEOUT_MS)) {
		rc = -errno;
		goto out_close;
	}
	rc = conn_cm_wait(pc, RDMA_CM_EVENT_ROUTE_RESOLVED, &ev);
	if (rc)
		goto out_close;
	rdma_ack_cm_event(ev);

	if (ibv_query_device(pc->pc_id->verbs, &dev)) {
		rc = -EIO;
		goto out_close;
	}
	rc = conn_create_qp(pc);
	if (rc)
		goto out_close;
	rc = conn_post_all_recvs(pc);
	if (rc)
		goto out_close;

	/* The server pulls our Read chunks: let it have Reads outstanding. */
	rpcrdma_verbs_conn_param(&param, &dev, pdata, PROBE_INLINE_SEND, PROBE_INLINE_RECV);
	if (rdma_connect(pc->pc_id, &param)) {
		rc = -errno;
		goto out_close;
	}
	rc = conn_cm_wait(pc, RDMA_CM_EVENT_ESTABLISHED, &ev);
	if (rc)
		goto out_close;
	pc->pc_peer_pdata = rpcrdma_wire_decode_private(ev->param.conn.private_data,
							ev->param.conn.private_data_len,
							&pc->pc_peer) == 0;
	rdma_ack_cm_event(ev);
	pc->pc_inline_send = rpcrdma_wire_inline_threshold(PROBE_INLINE_SEND,
							   pc->pc_peer_pdata ?
							   pc->pc_peer.cp_recv_size : 0);
	if (ibv_req_notify_cq(pc->pc_cq, 0)) {
		rc = -EIO;
		goto out_close;
	}
	pc->pc_up = true;
	return 0;

out_close:
	probe_conn_close(pc);
	return rc;
}

/**
 * probe_conn_close - disconnect (if connected) and release everything,
 * in reverse order of acquisition.  Safe on a partly opened connection.
 */
void probe_conn_close(struct probe_conn *pc)
{
	if (pc->pc_id && pc->pc_up)
		rdma_disconnect(pc->pc_id);
	pc->pc_up = false;
	if (pc->pc_id && pc->pc_id->qp)
		rdma_destroy_qp(pc->pc_id);
	if (pc->pc_mr)
		ibv_dereg_mr(pc->pc_mr);
	free(pc->pc_slab);
	if (pc->pc_cq)
		ibv_destroy_cq(pc->pc_cq);
	if (pc->pc_comp_ch)
		ibv_destroy_comp_channel(pc->pc_comp_ch);
	if (pc->pc_pd)
		ibv_dealloc_pd(pc->pc_pd);
	if (pc->pc_id)
		rdma_destroy_id(pc->pc_id);
	if (pc->pc_cm_ch)
		rdma_destroy_event_channel(pc->pc_cm_ch);
	pc->pc_mr = NULL;
	pc->pc_slab = NULL;
	pc->pc_cq = NULL;
	pc->pc_comp_ch = NULL;
	pc->pc_pd = NULL;
	pc->pc_id = NULL;
	pc->pc_cm_ch = NULL;
}

/**
 * probe_conn_abort - end the connection at once, whatever is in flight
 * (rdma_disconnect, then release).  The server sees a disconnect.
 */
void probe_conn_abort(struct probe_conn *pc)
{
	probe_conn_close(pc);
	snprintf(pc->pc_down_why, sizeof(pc->pc_down_why), "we disconnected");
}

/** probe_conn_new_xid - a fresh xid for the next probe message. */
uint32_t probe_conn_new_xid(struct probe_conn *pc)
{
	return ++pc->pc_xid;
}

/* Reap every completion there is; a failed one ends the connection. */
static void conn_poll(struct probe_conn *pc)
{
	struct ibv_wc wc[16];
	int n, i;

	while ((n = ibv_poll_cq(pc->pc_cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id & PROBE_WR_SEND) {
				pc->pc_sends_out--;
				if (wc[i].status != IBV_WC_SUCCESS) {
					if (!pc->pc_disc_status)
						pc->pc_disc_status = wc[i].status;
					conn_down(pc, "Send completion: %s",
						  ibv_wc_status_str(wc[i].status));
				}
				continue;
			}
			if (wc[i].status != IBV_WC_SUCCESS) {
				if (!pc->pc_disc_status)
					pc->pc_disc_status = wc[i].status;
				conn_down(pc, "Receive completion: %s",
					  ibv_wc_status_str(wc[i].status));
				continue;
			}
			if (probe_ring->pr_count < PROBE_RING) {
				struct probe_msg *m;
				uint32_t at = (probe_ring->pr_head + probe_ring->pr_count) %
					      PROBE_RING;

				m = &probe_ring->pr_msg[at];
				m->pm_len = wc[i].byte_len > PROBE_RECV_BYTES ?
					    PROBE_RECV_BYTES : wc[i].byte_len;
				memcpy(m->pm_buf, pc->pc_recv +
				       (size_t)wc[i].wr_id * PROBE_RECV_BYTES, m->pm_len);
				probe_ring->pr_count++;
			}
			if (pc->pc_up && conn_post_recv(pc, (uint32_t)wc[i].wr_id))
				conn_down(pc, "%s", "Receive repost failed");
		}
	}
}

/* Handle pending CM events: a disconnect ends the connection. */
static void conn_cm_poll(struct probe_conn *pc)
{
	struct rdma_cm_event *ev;

	while (!rdma_get_cm_event(pc->pc_cm_ch, &ev)) {
		switch (ev->event) {
		case RDMA_CM_EVENT_DISCONNECTED:
			conn_down(pc, "%s", "server disconnected (RDMA_CM_EVENT_DISCONNECTED)");
			break;
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		default:
			conn_down(pc, "CM event %s", rdma_event_str(ev->event));
			break;
		}
		rdma_ack_cm_event(ev);
	}
}

/**
 * probe_conn_send - send @len bytes from @buf as one signalled Send.
 *
 * Return: 0; -ENOTCONN when the connection is down; -EMSGSIZE when @len
 * exceeds a Send slot; -ENOBUFS when every slot is in flight; or the
 * errno of ibv_post_send.
 */
int probe_conn_send(struct probe_conn *pc, const void *buf, uint32_t len)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	uint8_t *slot;
	int64_t deadline = now_ms() + 2000;

	if (!pc->pc_up)
		return -ENOTCONN;
	if (len > PROBE_SEND_BYTES)
		return -EMSGSIZE;
	while (pc->pc_sends_out >= PROBE_NSEND) {
		conn_poll(pc);
		if (!pc->pc_up)
			return -ENOTCONN;
		if (now_ms() > deadline)
			return -ENOBUFS;
	}
	slot = pc->pc_send + (size_t)pc->pc_send_next * PROBE_SEND_BYTES;
	memcpy(slot, buf, len);
	sge.addr = (uintptr_t)slot;
	sge.length = len;
	sge.lkey = pc->pc_mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = PROBE_WR_SEND | pc->pc_send_next;
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	pc->pc_send_next = (pc->pc_send_next + 1) % PROBE_NSEND;
	if (ibv_post_send(pc->pc_id->qp, &wr, &bad))
		return -EIO;
	pc->pc_sends_out++;
	return 0;
}

/**
 * probe_conn_wait - wait for the next received message.
 * @pc: the connection.
 * @msg: out: the message.
 * @timeout_ms: how long to wait.
 *
 * Messages received before the connection ended are still returned.
 *
 * Return: 0 with @msg filled; -ETIMEDOUT when nothing came in time;
 * -ENOTCONN when the connection has ended (pc_down_why says how).
 */
int probe_conn_wait(struct probe_conn *pc, struct probe_msg *msg,
		    unsigned int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	struct pollfd pfd[2];
	struct ibv_cq *cq;
	void *ctx;
	int left;

	for (;;) {
		if (pc->pc_cq)
			conn_poll(pc);
		if (probe_ring->pr_count) {
			*msg = probe_ring->pr_msg[probe_ring->pr_head];
			probe_ring->pr_head = (probe_ring->pr_head + 1) % PROBE_RING;
			probe_ring->pr_count--;
			return 0;
		}
		if (pc->pc_cm_ch)
			conn_cm_poll(pc);
		if (!pc->pc_up) {
			/* A last look: completions may have landed meanwhile. */
			if (pc->pc_cq)
				conn_poll(pc);
			if (probe_ring->pr_count)
				continue;
			return -ENOTCONN;
		}
		left = (int)(deadline - now_ms());
		if (left <= 0)
			return -ETIMEDOUT;
		if (ibv_req_notify_cq(pc->pc_cq, 0))
			return -EIO;
		conn_poll(pc);
		if (probe_ring->pr_count)
			continue;
		pfd[0].fd = pc->pc_comp_ch->fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = pc->pc_cm_ch->fd;
		pfd[1].events = POLLIN;
		poll(pfd, 2, left);
		if (!ibv_get_cq_event(pc->pc_comp_ch, &cq, &ctx))
			ibv_ack_cq_events(cq, 1);
	}
}

/**
 * probe_conn_sends_done - wait until every posted Send has completed.
 * Return: 0, -ETIMEDOUT, or -ENOTCONN.
 */
int probe_conn_sends_done(struct probe_conn *pc, unsigned int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	for (;;) {
		conn_poll(pc);
		if (!pc->pc_sends_out)
			return 0;
		if (!pc->pc_up)
			return -ENOTCONN;
		if (now_ms() > deadline)
			return -ETIMEDOUT;
		poll(NULL, 0, 1);
	}
}
