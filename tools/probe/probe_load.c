// SPDX-License-Identifier: MIT
/*
 * probe_load.c - the load mode of rpcrdma-probe (--connections N
 * [--hold S]): open N RPC-over-RDMA connections to the server, make one
 * NFSv3 NULL call on each and check its reply, hold them all open for S
 * seconds, disconnect them all and print one JSON object.
 *
 * Everything runs in one thread on one rdma_cm event channel and one
 * completion channel shared by every CQ (two fds whatever N is).  At most
 * po_parallel connections are between "address resolution started" and
 * "NULL reply checked" at a time.  Each connection is cheap: a QP of two
 * Send and two Receive WRs, a CQ of 8 entries, one 1 KiB Receive buffer
 * and one 128-byte Send buffer in a slab registered once per protection
 * domain.  The connection itself (RFC 8797 private data, responder
 * resources) is set up as probe_conn_open() does it.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "probe.h"
#include "verbs/verbs.h"

/* Bytes of each connection's Receive buffer: the inline size we advertise. */
#define LOAD_RECV_BYTES PROBE_INLINE_RECV
/* Bytes of each connection's Send buffer: header and NULL call fit. */
#define LOAD_SEND_BYTES 128u
#define LOAD_SLOT_BYTES (LOAD_RECV_BYTES + LOAD_SEND_BYTES)
/* Address and route resolution timeouts handed to rdma_cm. */
#define LOAD_RESOLVE_MS 5000
/* wr_id of the Send; the Receive's is 0. */
#define LOAD_WR_SEND 1u
/*
 * RDMA_CM_EVENT_REJECTED statuses that mean the server's rdma_reject (or the
 * server process dropping the connect request): the IB CM's reason
 * "consumer defined" (28, InfiniBand and RoCE), or -ECONNREFUSED (iWARP).
 * Any other status (8, invalid service ID: nobody listens) is a failure.
 */
#define LOAD_REJ_CONSUMER 28
/* Verbs contexts (devices) we keep a PD and an MR for. */
#define LOAD_MAX_DEVS 8

enum load_state {
	LS_IDLE = 0,   /* not started */
	LS_ADDR,       /* rdma_resolve_addr issued */
	LS_ROUTE,      /* rdma_resolve_route issued */
	LS_CONNECT,    /* rdma_connect issued */
	LS_CALL,       /* established, NULL call sent, reply awaited */
	LS_UP,         /* NULL answered correctly: held */
	LS_DROPPED,    /* the server ended it after a good NULL reply */
	LS_REFUSED,    /* RDMA_CM_EVENT_REJECTED */
	LS_FAILED,     /* any other failure */
	LS_DONE,       /* we disconnected it */
};

struct load_dev {
	struct ibv_context *ld_verbs;
	struct ibv_pd *ld_pd;
	struct ibv_mr *ld_mr;
};

/** One of the N connections. */
struct load_conn {
	uint32_t lc_idx;
	enum load_state lc_state;
	struct rdma_cm_id *lc_id;
	struct ibv_cq *lc_cq;
	struct load_dev *lc_dev;
	int64_t lc_t0;          /* when address resolution started */
	int64_t lc_deadline;    /* connect and NULL reply by then */
	uint32_t lc_connect_ms; /* start to ESTABLISHED */
	uint32_t lc_xid;
	uint32_t lc_credits;    /* grant in the NULL reply */
	uint32_t lc_cq_events;  /* CQ events not yet acked */
	bool lc_established;
	bool lc_replied;
};

struct load_run {
	const struct probe_opts *lr_opts;
	struct sockaddr_storage lr_dst;
	struct sockaddr_storage lr_src;
	struct rdma_event_channel *lr_cm_ch;
	struct ibv_comp_channel *lr_comp_ch[LOAD_MAX_DEVS];
	struct load_dev lr_dev[LOAD_MAX_DEVS];
	uint32_t lr_ndev;
	uint8_t *lr_slab;       /* N slots: Receive buffer, then Send buffer */
	size_t lr_slab_bytes;
	struct load_conn *lr_conns;
	uint32_t lr_next;       /* next connection to start */
	uint32_t lr_active;     /* started and not yet UP or finished */
	uint32_t lr_refused;
	uint32_t lr_failed;
	uint32_t lr_dropped;
	char lr_first_failure[160];
};

static int64_t load_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint8_t *slot_recv(struct load_run *lr, const struct load_conn *lc)
{
	return lr->lr_slab + (size_t)lc->lc_idx * LOAD_SLOT_BYTES;
}

static uint8_t *slot_send(struct load_run *lr, const struct load_conn *lc)
{
	return slot_recv(lr, lc) + LOAD_RECV_BYTES;
}

/* Release a connection's verbs and CM resources (not the slab). */
static void load_conn_release(struct load_conn *lc)
{
	if (lc->lc_id && lc->lc_id->qp)
		rdma_destroy_qp(lc->lc_id);
	if (lc->lc_cq) {
		if (lc->lc_cq_events)
			ibv_ack_cq_events(lc->lc_cq, lc->lc_cq_events);
		lc->lc_cq_events = 0;
		ibv_destroy_cq(lc->lc_cq);
		lc->lc_cq = NULL;
	}
	if (lc->lc_id) {
		rdma_destroy_id(lc->lc_id);
		lc->lc_id = NULL;
	}
}

/* The connection is finished with @state; its resources are released. */
static void load_conn_end(struct load_run *lr, struct load_conn *lc,
			  enum load_state state, const char *why)
{
	bool active = lc->lc_state >= LS_ADDR && lc->lc_state <= LS_CALL;

	if (active)
		lr->lr_active--;
	if (state == LS_REFUSED)
		lr->lr_refused++;
	else if (state == LS_FAILED)
		lr->lr_failed++;
	else if (state == LS_DROPPED)
		lr->lr_dropped++;
	if ((state == LS_FAILED || state == LS_REFUSED) && why && !lr->lr_first_failure[0])
		snprintf(lr->lr_first_failure, sizeof(lr->lr_first_failure),
			 "connection %u: %s", lc->lc_idx, why);
	if (lr->lr_opts->po_verbose && why)
		fprintf(stderr, "rpcrdma-probe: connection %u: %s\n", lc->lc_idx, why);
	lc->lc_state = state;
	load_conn_release(lc);
}

static void load_conn_fail(struct load_run *lr, struct load_conn *lc,
			   const char *what, int err)
{
	char why[128];

	snprintf(why, sizeof(why), "%s: %s", what, strerror(err));
	load_conn_end(lr, lc, LS_FAILED, why);
}

/* The PD and MR of @verbs, set up on first use; NULL when that fails. */
static struct load_dev *load_dev_get(struct load_run *lr, struct ibv_context *verbs)
{
	struct load_dev *d;
	uint32_t i;

	for (i = 0; i < lr->lr_ndev; i++)
		if (lr->lr_dev[i].ld_verbs == verbs)
			return &lr->lr_dev[i];
	if (lr->lr_ndev == LOAD_MAX_DEVS)
		return NULL;
	d = &lr->lr_dev[lr->lr_ndev];
	d->ld_pd = ibv_alloc_pd(verbs);
	if (!d->ld_pd)
		return NULL;
	d->ld_mr = ibv_reg_mr(d->ld_pd, lr->lr_slab, lr->lr_slab_bytes,
			      IBV_ACCESS_LOCAL_WRITE);
	if (!d->ld_mr) {
		ibv_dealloc_pd(d->ld_pd);
		d->ld_pd = NULL;
		return NULL;
	}
	lr->lr_comp_ch[lr->lr_ndev] = ibv_create_comp_channel(verbs);
	if (!lr->lr_comp_ch[lr->lr_ndev] ||
	    fcntl(lr->lr_comp_ch[lr->lr_ndev]->fd, F_SETFL,
		  fcntl(lr->lr_comp_ch[lr->lr_ndev]->fd, F_GETFL) | O_NONBLOCK) < 0) {
		if (lr->lr_comp_ch[lr->lr_ndev])
			ibv_destroy_comp_channel(lr->lr_comp_ch[lr->lr_ndev]);
		lr->lr_comp_ch[lr->lr_ndev] = NULL;
		ibv_dereg_mr(d->ld_mr);
		ibv_dealloc_pd(d->ld_pd);
		d->ld_mr = NULL;
		d->ld_pd = NULL;
		return NULL;
	}
	d->ld_verbs = verbs;
	lr->lr_ndev++;
	return d;
}

/* Start connection @lc: a CM id, then address resolution. */
static void load_conn_start(struct load_run *lr, struct load_conn *lc)
{
	const struct probe_opts *o = lr->lr_opts;

	lc->lc_state = LS_ADDR;
	lr->lr_active++;
	lc->lc_t0 = load_now_ms();
	lc->lc_deadline = lc->lc_t0 + o->po_timeout_ms;
	if (rdma_create_id(lr->lr_cm_ch, &lc->lc_id, lc, RDMA_PS_TCP)) {
		load_conn_fail(lr, lc, "rdma_create_id", errno);
		return;
	}
	if (rdma_resolve_addr(lc->lc_id, o->po_source ? (struct sockaddr *)&lr->lr_src : NULL,
			      (struct sockaddr *)&lr->lr_dst, LOAD_RESOLVE_MS))
		load_conn_fail(lr, lc, "rdma_resolve_addr", errno);
}

/* Route resolved: CQ, QP, the Receive, then rdma_connect. */
static void load_conn_connect(struct load_run *lr, struct load_conn *lc)
{
	struct ibv_qp_init_attr attr;
	struct ibv_recv_wr rwr, *rbad;
	struct rdma_conn_param param;
	struct ibv_device_attr dev;
	struct ibv_sge sge;
	uint8_t pdata[RPCRDMA_CM_PRIVATE_BYTES];
	uint32_t ch;
	int rc;

	lc->lc_dev = load_dev_get(lr, lc->lc_id->verbs);
	if (!lc->lc_dev) {
		load_conn_fail(lr, lc, "protection domain or memory registration", ENOMEM);
		return;
	}
	ch = (uint32_t)(lc->lc_dev - lr->lr_dev);
	lc->lc_cq = ibv_create_cq(lc->lc_id->verbs, 8, lc, lr->lr_comp_ch[ch], 0);
	if (!lc->lc_cq) {
		load_conn_fail(lr, lc, "ibv_create_cq", errno);
		return;
	}
	memset(&attr, 0, sizeof(attr));
	attr.send_cq = lc->lc_cq;
	attr.recv_cq = lc->lc_cq;
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = 2;
	attr.cap.max_recv_wr = 2;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(lc->lc_id, lc->lc_dev->ld_pd, &attr)) {
		load_conn_fail(lr, lc, "rdma_create_qp", errno);
		return;
	}
	sge.addr = (uintptr_t)slot_recv(lr, lc);
	sge.length = LOAD_RECV_BYTES;
	sge.lkey = lc->lc_dev->ld_mr->lkey;
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 0;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	rc = ibv_post_recv(lc->lc_id->qp, &rwr, &rbad);
	if (rc) {
		load_conn_fail(lr, lc, "ibv_post_recv", rc);
		return;
	}
	if (ibv_req_notify_cq(lc->lc_cq, 0)) {
		load_conn_fail(lr, lc, "ibv_req_notify_cq", EIO);
		return;
	}
	if (ibv_query_device(lc->lc_id->verbs, &dev)) {
		load_conn_fail(lr, lc, "ibv_query_device", EIO);
		return;
	}
	rpcrdma_verbs_conn_param(&param, &dev, pdata, PROBE_INLINE_SEND, PROBE_INLINE_RECV);
	if (rdma_connect(lc->lc_id, &param)) {
		load_conn_fail(lr, lc, "rdma_connect", errno);
		return;
	}
	lc->lc_state = LS_CONNECT;
}

/* Established: send the NULL call (RDMA_MSG, no chunks). */
static void load_conn_call(struct load_run *lr, struct load_conn *lc)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	int len, rc;

	lc->lc_established = true;
	lc->lc_connect_ms = (uint32_t)(load_now_ms() - lc->lc_t0);
	lc->lc_xid = 0x4c4f0000u ^ (lc->lc_idx * 2654435761u);
	len = probe_null_msg(slot_send(lr, lc), LOAD_SEND_BYTES, lc->lc_xid, PROBE_CREDITS_ASK);
	if (len < 0) {
		load_conn_fail(lr, lc, "building the NULL call", -len);
		return;
	}
	sge.addr = (uintptr_t)slot_send(lr, lc);
	sge.length = (uint32_t)len;
	sge.lkey = lc->lc_dev->ld_mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = LOAD_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	rc = ibv_post_send(lc->lc_id->qp, &wr, &bad);
	if (rc) {
		load_conn_fail(lr, lc, "ibv_post_send", rc);
		return;
	}
	lc->lc_state = LS_CALL;
}

/* Check the received NULL reply of @lc (@len bytes in its Receive buffer). */
static void load_conn_reply(struct load_run *lr, struct load_conn *lc, uint32_t len)
{
	static struct rpcrdma_hdr h;
	struct rpcrdma_wire_err err;
	struct rpcrdma_rpc_msg rpc;
	const uint8_t *buf = slot_recv(lr, lc);
	char why[128];

	if (rpcrdma_wire_decode_reply(buf, len, NULL, &h, &err)) {
		snprintf(why, sizeof(why), "NULL reply: %u-byte answer our codec rejects (%s)",
			 len, err.we_rule);
		load_conn_end(lr, lc, LS_FAILED, why);
		return;
	}
	if (h.rh_xid != lc->lc_xid || h.rh_proc != RDMA_MSG) {
		snprintf(why, sizeof(why), "NULL reply: %s with xid 0x%08x, not 0x%08x",
			 h.rh_proc == RDMA_ERROR ? "RDMA_ERROR" :
			 h.rh_proc == RDMA_NOMSG ? "RDMA_NOMSG" : "RDMA_MSG",
			 h.rh_xid, lc->lc_xid);
		load_conn_end(lr, lc, LS_FAILED, why);
		return;
	}
	if (rpcrdma_wire_decode_rpc(buf + h.rh_hdr_len, h.rh_inline_len, &rpc) ||
	    rpc.rm_dir != RPC_DIR_REPLY || rpc.rm_xid != lc->lc_xid) {
		load_conn_end(lr, lc, LS_FAILED, "NULL reply: not an RPC reply to our xid");
		return;
	}
	if (rpc.rm_reply_stat != RPC_MSG_ACCEPTED || rpc.rm_accept_stat != RPC_ACCEPT_SUCCESS) {
		snprintf(why, sizeof(why), "NULL reply: %s (accept_stat %u)",
			 rpc.rm_reply_stat != RPC_MSG_ACCEPTED ? "MSG_DENIED" : "not SUCCESS",
			 rpc.rm_accept_stat);
		load_conn_end(lr, lc, LS_FAILED, why);
		return;
	}
	lc->lc_credits = h.rh_credits;
	lc->lc_replied = true;
}

/* Reap @lc's completions; a good reply (and its Send done) makes it UP. */
static void load_conn_poll(struct load_run *lr, struct load_conn *lc)
{
	struct ibv_wc wc[4];
	int n, i;

	while (lc->lc_state == LS_CALL && (n = ibv_poll_cq(lc->lc_cq, 4, wc)) > 0) {
		for (i = 0; i < n && lc->lc_state == LS_CALL; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				char why[128];

				snprintf(why, sizeof(why), "%s completion: %s",
					 wc[i].wr_id == LOAD_WR_SEND ? "Send" : "Receive",
					 ibv_wc_status_str(wc[i].status));
				load_conn_end(lr, lc, LS_FAILED, why);
				return;
			}
			if (wc[i].wr_id != LOAD_WR_SEND)
				load_conn_reply(lr, lc, wc[i].byte_len);
		}
	}
	if (lc->lc_state == LS_CALL && lc->lc_replied) {
		lc->lc_state = LS_UP;
		lr->lr_active--;
	}
}

/* Handle every CQ event pending on the completion channels. */
static void load_cq_events(struct load_run *lr)
{
	struct ibv_cq *cq;
	struct load_conn *lc;
	void *ctx;
	uint32_t d;

	for (d = 0; d < lr->lr_ndev; d++) {
		while (!ibv_get_cq_event(lr->lr_comp_ch[d], &cq, &ctx)) {
			lc = ctx;
			ibv_ack_cq_events(cq, 1);
			if (lc->lc_state != LS_CALL)
				continue;
			ibv_req_notify_cq(lc->lc_cq, 0);
			load_conn_poll(lr, lc);
		}
	}
}

/* Handle every pending CM event. */
static void load_cm_events(struct load_run *lr)
{
	struct rdma_cm_event *ev;
	struct load_conn *lc;
	enum rdma_cm_event_type type;
	int status;
	char why[128];

	while (!rdma_get_cm_event(lr->lr_cm_ch, &ev)) {
		lc = ev->id->context;
		type = ev->event;
		status = ev->status;
		rdma_ack_cm_event(ev);

		switch (type) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			if (lc->lc_state != LS_ADDR)
				break;
			if (rdma_resolve_route(lc->lc_id, LOAD_RESOLVE_MS)) {
				load_conn_fail(lr, lc, "rdma_resolve_route", errno);
				break;
			}
			lc->lc_state = LS_ROUTE;
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			if (lc->lc_state == LS_ROUTE)
				load_conn_connect(lr, lc);
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			if (lc->lc_state == LS_CONNECT)
				load_conn_call(lr, lc);
			break;
		case RDMA_CM_EVENT_REJECTED:
			if (status == LOAD_REJ_CONSUMER || status == -ECONNREFUSED) {
				snprintf(why, sizeof(why),
					 "refused (RDMA_CM_EVENT_REJECTED, status %d)", status);
				load_conn_end(lr, lc, LS_REFUSED, why);
				break;
			}
			snprintf(why, sizeof(why), "RDMA_CM_EVENT_REJECTED with status %d%s",
				 status, status == 8 ? " (invalid service ID: nothing listens)" :
				 ", not the server's rdma_reject");
			load_conn_end(lr, lc, LS_FAILED, why);
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			if (lc->lc_state == LS_UP) {
				load_conn_end(lr, lc, LS_DROPPED,
					      type == RDMA_CM_EVENT_DISCONNECTED ?
					      "server disconnected while held" :
					      "device removed while held");
				break;
			}
			if (lc->lc_state == LS_CALL) {
				load_conn_poll(lr, lc);
				if (lc->lc_state == LS_UP) {
					load_conn_end(lr, lc, LS_DROPPED,
						      "server disconnected right after its reply");
					break;
				}
			}
			if (lc->lc_state >= LS_ADDR && lc->lc_state <= LS_CALL) {
				snprintf(why, sizeof(why), "%s before the NULL reply",
					 rdma_event_str(type));
				load_conn_end(lr, lc, LS_FAILED, why);
			}
			break;
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			break;
		default:
			if (lc->lc_state >= LS_ADDR && lc->lc_state <= LS_CALL) {
				snprintf(why, sizeof(why), "%s (status %d)", rdma_event_str(type),
					 status);
				load_conn_end(lr, lc, LS_FAILED, why);
			}
			break;
		}
	}
}

/* Fail the active connections whose deadline has passed. */
static void load_timeouts(struct load_run *lr, int64_t now)
{
	static const char *const where[] = {
		[LS_ADDR] = "address resolution",
		[LS_ROUTE] = "route resolution",
		[LS_CONNECT] = "connect",
		[LS_CALL] = "NULL reply",
	};
	struct load_conn *lc;
	char why[96];
	uint32_t i;

	for (i = 0; i < lr->lr_next; i++) {
		lc = &lr->lr_conns[i];
		if (lc->lc_state < LS_ADDR || lc->lc_state > LS_CALL || now < lc->lc_deadline)
			continue;
		if (lc->lc_state == LS_CALL) {
			load_conn_poll(lr, lc);
			if (lc->lc_state != LS_CALL)
				continue;
		}
		snprintf(why, sizeof(why), "timed out after %u ms waiting for the %s",
			 lr->lr_opts->po_timeout_ms, where[lc->lc_state]);
		load_conn_end(lr, lc, LS_FAILED, why);
	}
}

/* Wait up to @ms for a CM or CQ event, then handle what came. */
static void load_wait(struct load_run *lr, int ms)
{
	struct pollfd pfd[1 + LOAD_MAX_DEVS];
	uint32_t d;

	pfd[0].fd = lr->lr_cm_ch->fd;
	pfd[0].events = POLLIN;
	for (d = 0; d < lr->lr_ndev; d++) {
		pfd[1 + d].fd = lr->lr_comp_ch[d]->fd;
		pfd[1 + d].events = POLLIN;
	}
	poll(pfd, 1 + lr->lr_ndev, ms);
	load_cm_events(lr);
	load_cq_events(lr);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void load_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* The JSON object; returns the number of connections that did not pass. */
static uint32_t load_report(struct load_run *lr, uint32_t open_ms, uint32_t held_s)
{
	const struct probe_opts *o = lr->lr_opts;
	uint32_t n = o->po_connections, i, connected = 0, null_ok = 0;
	uint32_t cmin = 0, cmax = 0, tmax = 0, median = 0;
	uint32_t *ms = calloc(n, sizeof(*ms));

	for (i = 0; i < n; i++) {
		const struct load_conn *lc = &lr->lr_conns[i];

		if (lc->lc_established) {
			if (ms)
				ms[connected] = lc->lc_connect_ms;
			connected++;
			if (lc->lc_connect_ms > tmax)
				tmax = lc->lc_connect_ms;
		}
		if (lc->lc_replied) {
			if (!null_ok || lc->lc_credits < cmin)
				cmin = lc->lc_credits;
			if (!null_ok || lc->lc_credits > cmax)
				cmax = lc->lc_credits;
			null_ok++;
		}
	}
	if (connected && ms) {
		qsort(ms, connected, sizeof(*ms), cmp_u32);
		median = connected % 2 ? ms[connected / 2] :
			 (ms[connected / 2 - 1] + ms[connected / 2]) / 2;
	}
	free(ms);
	printf("{\"requested\":%u,\"connected\":%u,\"refused\":%u,\"failed\":%u,"
	       "\"null_ok\":%u,\"credits_min\":%u,\"credits_max\":%u,"
	       "\"connect_ms_median\":%u,\"connect_ms_max\":%u,\"held_s\":%u,"
	       "\"dropped_during_hold\":%u,\"open_ms\":%u,\"parallel\":%u",
	       n, connected, lr->lr_refused, lr->lr_failed, null_ok, cmin, cmax,
	       median, tmax, held_s, lr->lr_dropped, open_ms, o->po_parallel);
	if (lr->lr_first_failure[0]) {
		printf(",\"first_failure\":");
		load_json_str(lr->lr_first_failure);
	}
	printf("}\n");
	fflush(stdout);
	return n - null_ok;
}

/* Let this process have as many fds as it may (each device fd counts). */
static void load_raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/**
 * probe_load_run - the load mode (--connections N --hold S).
 * @opts: server, port, source, po_connections, po_hold_s, po_parallel,
 *        po_timeout_ms (per connection: connect and NULL reply).
 *
 * Prints one JSON object on stdout (probe_load_run's report, see
 * rpcrdma-probe(8)).
 *
 * Return: 0 when every connection was established and its NULL call
 * answered with MSG_ACCEPTED SUCCESS; 1 when some were refused or failed;
 * 2 when the run cannot start (bad address, no memory, no event channel).
 */
int probe_load_run(const struct probe_opts *opts)
{
	struct load_run lr;
	uint32_t n = opts->po_connections, i, open_ms, held_s = 0;
	int64_t t0, now, hold_end, last_progress;
	int rc = 2;

	memset(&lr, 0, sizeof(lr));
	lr.lr_opts = opts;
	load_raise_nofile();
	if (probe_addr(opts->po_server, opts->po_port, &lr.lr_dst)) {
		fprintf(stderr, "rpcrdma-probe: cannot resolve %s\n", opts->po_server);
		return 2;
	}
	if (opts->po_source && probe_addr(opts->po_source, 0, &lr.lr_src)) {
		fprintf(stderr, "rpcrdma-probe: cannot resolve source %s\n", opts->po_source);
		return 2;
	}
	lr.lr_conns = calloc(n, sizeof(*lr.lr_conns));
	lr.lr_slab_bytes = (size_t)n * LOAD_SLOT_BYTES;
	if (!lr.lr_conns || posix_memalign((void **)&lr.lr_slab, 4096, lr.lr_slab_bytes)) {
		fprintf(stderr, "rpcrdma-probe: out of memory for %u connections\n", n);
		goto out;
	}
	memset(lr.lr_slab, 0, lr.lr_slab_bytes);
	for (i = 0; i < n; i++)
		lr.lr_conns[i].lc_idx = i;
	lr.lr_cm_ch = rdma_create_event_channel();
	if (!lr.lr_cm_ch) {
		fprintf(stderr, "rpcrdma-probe: rdma_create_event_channel: %s\n", strerror(errno));
		goto out;
	}
	if (fcntl(lr.lr_cm_ch->fd, F_SETFL, fcntl(lr.lr_cm_ch->fd, F_GETFL) | O_NONBLOCK) < 0) {
		fprintf(stderr, "rpcrdma-probe: %s\n", strerror(errno));
		goto out;
	}

	/* Open: at most po_parallel connections on their way at a time. */
	t0 = last_progress = load_now_ms();
	while (lr.lr_next < n || lr.lr_active) {
		while (lr.lr_next < n && lr.lr_active < opts->po_parallel)
			load_conn_start(&lr, &lr.lr_conns[lr.lr_next++]);
		load_wait(&lr, 100);
		now = load_now_ms();
		load_timeouts(&lr, now);
		if (opts->po_verbose && now - last_progress >= 2000) {
			last_progress = now;
			fprintf(stderr, "rpcrdma-probe: %u of %u started, %u on their way, "
				"%u refused, %u failed, %lld ms\n", lr.lr_next, n, lr.lr_active,
				lr.lr_refused, lr.lr_failed, (long long)(now - t0));
		}
	}
	now = load_now_ms();
	open_ms = (uint32_t)(now - t0);
	if (opts->po_verbose) {
		uint32_t up = 0;

		for (i = 0; i < n; i++)
			up += lr.lr_conns[i].lc_state == LS_UP;
		fprintf(stderr, "rpcrdma-probe: %u of %u connections opened in %u ms "
			"(%u refused, %u failed, %u dropped); holding %u s\n", up, n, open_ms,
			lr.lr_refused, lr.lr_failed, lr.lr_dropped, opts->po_hold_s);
	}

	/* Hold: watch for the server ending connections. */
	hold_end = now + (int64_t)opts->po_hold_s * 1000;
	while ((now = load_now_ms()) < hold_end) {
		int64_t left = hold_end - now;

		load_wait(&lr, left > 1000 ? 1000 : (int)left);
	}
	held_s = opts->po_hold_s;
	load_cm_events(&lr);

	/* Disconnect them all, then release everything. */
	for (i = 0; i < n; i++)
		if (lr.lr_conns[i].lc_state == LS_UP)
			rdma_disconnect(lr.lr_conns[i].lc_id);
	for (i = 0; i < n; i++) {
		struct load_conn *lc = &lr.lr_conns[i];

		if (lc->lc_state == LS_UP)
			lc->lc_state = LS_DONE;
		load_conn_release(lc);
	}
	if (opts->po_verbose)
		fprintf(stderr, "rpcrdma-probe: disconnected\n");

	rc = load_report(&lr, open_ms, held_s) ? 1 : 0;
out:
	for (i = 0; i < lr.lr_ndev; i++) {
		if (lr.lr_dev[i].ld_mr)
			ibv_dereg_mr(lr.lr_dev[i].ld_mr);
		if (lr.lr_dev[i].ld_pd)
			ibv_dealloc_pd(lr.lr_dev[i].ld_pd);
		if (lr.lr_comp_ch[i])
			ibv_destroy_comp_channel(lr.lr_comp_ch[i]);
	}
	if (lr.lr_cm_ch)
		rdma_destroy_event_channel(lr.lr_cm_ch);
	free(lr.lr_slab);
	free(lr.lr_conns);
	return rc;
}
