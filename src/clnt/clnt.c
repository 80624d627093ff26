// SPDX-License-Identifier: MIT
/*
 * clnt.c - the Requester's connection: rdma_cm connect with RFC 8797
 * private data, the registered request and receive pools, the completion
 * thread, disconnect and teardown.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "clnt/clnt_internal.h"
#include "common/backoff.h"
#include "common/be.h"

void clnt_log(struct rpcrdma_clnt *cl, const char *fmt, ...)
{
	FILE *f = cl->cl_cfg.cf_log ? cl->cl_cfg.cf_log : stderr;
	va_list ap;

	va_start(ap, fmt);
	fputs("rpcrdma-clnt: ", f);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
	va_end(ap);
}

static void cfg_defaults(struct rpcrdma_clnt_config *cfg)
{
	if (!cfg->cf_port)
		cfg->cf_port = RPCRDMA_NFS_PORT;
	if (!cfg->cf_max_credits)
		cfg->cf_max_credits = 32;
	if (!cfg->cf_inline_size)
		cfg->cf_inline_size = 4096;
	if (!cfg->cf_timeout_ms)
		cfg->cf_timeout_ms = 60000;
	if (!cfg->cf_connect_timeout_ms)
		cfg->cf_connect_timeout_ms = 5000;
	if (!cfg->cf_backoff_max_ms)
		cfg->cf_backoff_max_ms = RPCRDMA_BACKOFF_MAX_MS;
}

/* Encode the credential and verifier every call carries (RFC 5531 9,
 * appendix A): AUTH_SYS with our host name, uid, gid and no extra gids,
 * or AUTH_NONE; the verifier is AUTH_NONE. */
static void clnt_encode_cred(struct rpcrdma_clnt *cl)
{
	const struct rpcrdma_clnt_config *cfg = &cl->cl_cfg;
	uint8_t *p = cl->cl_cred;
	char host[65];
	uint32_t nlen, body;

	if (cfg->cf_auth_none) {
		memset(p, 0, 16); /* cred (0, 0), verf (0, 0) */
		cl->cl_cred_len = 16;
		return;
	}
	if (gethostname(host, sizeof(host) - 1))
		strcpy(host, "rpcrdma");
	host[sizeof(host) - 1] = '\0';
	nlen = (uint32_t)strlen(host);
	body = 4 + 4 + (uint32_t)RPCRDMA_XDR_ALIGN(nlen) + 4 + 4 + 4;
	store_be32(p, RPC_AUTH_SYS);
	store_be32(p + 4, body);
	p += 8;
	store_be32(p, (uint32_t)time(NULL));
	store_be32(p + 4, nlen);
	memset(p + 8, 0, RPCRDMA_XDR_ALIGN(nlen));
	memcpy(p + 8, host, nlen);
	p += 8 + RPCRDMA_XDR_ALIGN(nlen);
	store_be32(p, cfg->cf_ids_set ? cfg->cf_uid : (uint32_t)getuid());
	store_be32(p + 4, cfg->cf_ids_set ? cfg->cf_gid : (uint32_t)getgid());
	store_be32(p + 8, 0); /* gids<16>: none */
	p += 12;
	store_be32(p, RPC_AUTH_NONE);
	store_be32(p + 4, 0);
	p += 8;
	cl->cl_cred_len = (uint32_t)(p - cl->cl_cred);
}

/* Everything that needs no device: unit tests start here. */
int clnt_init(struct rpcrdma_clnt *cl, const struct rpcrdma_clnt_config *cfg)
{
	pthread_condattr_t ca;
	struct timespec ts;

	cl->cl_cfg = *cfg;
	cfg_defaults(&cl->cl_cfg);
	if (cl->cl_cfg.cf_max_credits > 1024 || cl->cl_cfg.cf_inline_size < 1024 ||
	    cl->cl_cfg.cf_reg > RPCRDMA_CLNT_REG_PERSISTENT ||
	    cl->cl_cfg.cf_inline_size > 262144 ||
	    cl->cl_cfg.cf_bc_slots > RPCRDMA_CLNT_BC_MAX_SLOTS)
		return -EINVAL;
	cl->cl_cfg.cf_server = NULL; /* not kept */
	cl->cl_cfg.cf_source = NULL;
	cl->cl_wake_fd = -1;
	cl->cl_max_credits = cl->cl_cfg.cf_max_credits;
	/* Sized before the first QP, whose send queue holds the pool's Sends. */
	cl->cl_sq_every = cl->cl_max_credits / 2 ? cl->cl_max_credits / 2 : 1;
	cl->cl_nreqs = cl->cl_max_credits + cl->cl_sq_every;
	cl->cl_credits = 1; /* until the first reply grants more */
	cl->cl_inline_send = RPCRDMA_DEFAULT_INLINE;
	cl->cl_inline_recv = RPCRDMA_DEFAULT_INLINE;
	clock_gettime(CLOCK_REALTIME, &ts);
	cl->cl_next_xid = (uint32_t)(ts.tv_nsec ^ (ts.tv_sec << 20) ^ getpid());
	rpcrdma_wire_limits_default(&cl->cl_limits);
	cl->cl_limits.wl_max_chunk_bytes = 64u << 20;
	clnt_encode_cred(cl);
	pthread_mutex_init(&cl->cl_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cl->cl_slot_cond, &ca);
	pthread_cond_init(&cl->cl_work_cond, &ca);
	pthread_condattr_destroy(&ca);
	return 0;
}

/* Apply the peer's RFC 8797 private data (or its absence). */
void clnt_set_peer(struct rpcrdma_clnt *cl, const void *pdata, size_t len)
{
	struct rpcrdma_cm_private peer;
	uint32_t psend = 0, precv = 0;

	memset(&peer, 0, sizeof(peer));
	if (rpcrdma_wire_decode_private(pdata, len, &peer) == 0) {
		psend = peer.cp_send_size;
		precv = peer.cp_recv_size;
		cl->cl_peer_rsi = peer.cp_flags & RPCRDMA_CM_FLAG_RSI;
	}
	cl->cl_inline_send = rpcrdma_wire_inline_threshold(cl->cl_cfg.cf_inline_size, precv);
	cl->cl_inline_recv = rpcrdma_wire_inline_threshold(cl->cl_cfg.cf_inline_size, psend);
}

uint8_t clnt_private_flags(struct rpcrdma_clnt *cl)
{
	cl->cl_rsi = cl->cl_mw_enabled && cl->cl_cfg.cf_remote_invalidate;
	return cl->cl_rsi ? RPCRDMA_CM_FLAG_RSI : 0;
}

/* One registered slab: receive buffers, then per request a header and a
 * body buffer. */
int clnt_alloc_pools(struct rpcrdma_clnt *cl)
{
	uint32_t isz = cl->cl_cfg.cf_inline_size, i;
	pthread_condattr_t ca;
	uint8_t *p;

	/* backchannel hook: a Receive and a reply buffer per slot (clnt_bc.c) */
	cl->cl_nrecvs = cl->cl_max_credits + CLNT_EXTRA_RECVS + cl->cl_cfg.cf_bc_slots;
	cl->cl_slab_len = (size_t)cl->cl_nrecvs * isz +
			  (size_t)cl->cl_nreqs * (CLNT_HDR_BUF + isz) +
			  (size_t)CLNT_BC_REQS(cl) * isz;
	if (posix_memalign((void **)&cl->cl_slab, 4096, cl->cl_slab_len))
		return -ENOMEM;
	cl->cl_recvs = calloc(cl->cl_nrecvs, sizeof(*cl->cl_recvs));
	cl->cl_reqs = calloc(cl->cl_nreqs, sizeof(*cl->cl_reqs));
	cl->cl_sq_ring = calloc(cl->cl_nreqs, sizeof(*cl->cl_sq_ring));
	/* xid table: a power of two at least twice the requests */
	for (cl->cl_xid_mask = 1; cl->cl_xid_mask < 2 * cl->cl_nreqs; cl->cl_xid_mask <<= 1)
		;
	cl->cl_xids = calloc(cl->cl_xid_mask, sizeof(*cl->cl_xids));
	cl->cl_xid_mask--;
	cl->cl_quiet_cqe.ce_type = CLNT_CQE_QUIET;
	if (!cl->cl_recvs || !cl->cl_reqs || !cl->cl_sq_ring || !cl->cl_xids)
		return -ENOMEM;
	p = cl->cl_slab;
	for (i = 0; i < cl->cl_nrecvs; i++) {
		struct clnt_recv *rr = &cl->cl_recvs[i];

		rr->rr_cqe.ce_type = RPCRDMA_CQE_RECV;
		rr->rr_cqe.ce_id = i;
		rr->rr_buf = p;
		p += isz;
		rr->rr_sge.addr = (uintptr_t)rr->rr_buf;
		rr->rr_sge.length = isz;
		rr->rr_wr.wr_id = (uintptr_t)&rr->rr_cqe;
		rr->rr_wr.sg_list = &rr->rr_sge;
		rr->rr_wr.num_sge = 1;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	for (i = 0; i < cl->cl_nreqs; i++) {
		struct clnt_req *rl = &cl->cl_reqs[i];

		rl->rl_clnt = cl;
		rl->rl_cqe.ce_type = RPCRDMA_CQE_SEND;
		rl->rl_hdrbuf = p;
		p += CLNT_HDR_BUF;
		rl->rl_body = p;
		p += isz;
		pthread_cond_init(&rl->rl_cond, &ca);
		rl->rl_next = i + 1 < cl->cl_nreqs ? &cl->cl_reqs[i + 1] : NULL;
	}
	pthread_condattr_destroy(&ca);
	cl->cl_free = &cl->cl_reqs[0];
	if (clnt_bc_alloc(cl, &p))
		return -ENOMEM;
	return clnt_register_slab(cl);
}

/* Register the slab with the current PD (again after a reconnect). */
int clnt_register_slab(struct rpcrdma_clnt *cl)
{
	uint32_t i;

	cl->cl_mr = rpcrdma_verbs_reg_mr(cl->cl_pd, cl->cl_slab, cl->cl_slab_len,
					 IBV_ACCESS_LOCAL_WRITE);
	if (!cl->cl_mr)
		return errno ? -errno : -ENOMEM;
	for (i = 0; i < cl->cl_nrecvs; i++)
		cl->cl_recvs[i].rr_sge.lkey = cl->cl_mr->lkey;
	return 0;
}

/* One type 2 window per chunk kind per request, for the current PD. */
int clnt_mws_alloc(struct rpcrdma_clnt *cl)
{
	uint32_t i, j;

	for (i = 0; i < cl->cl_nreqs; i++) {
		struct clnt_req *rl = &cl->cl_reqs[i];

		rl->rl_inv_cqe.ce_type = CLNT_CQE_LINV;
		for (j = 0; j < CLNT_NMAPS; j++) {
			rl->rl_mw[j] = ibv_alloc_mw(cl->cl_pd, IBV_MW_TYPE_2);
			if (!rl->rl_mw[j])
				return errno ? -errno : -ENOMEM;
			rl->rl_mw_rkey[j] = rl->rl_mw[j]->rkey;
		}
	}
	return 0;
}

void clnt_mws_free(struct rpcrdma_clnt *cl)
{
	uint32_t i, j;

	for (i = 0; cl->cl_reqs && i < cl->cl_nreqs; i++) {
		for (j = 0; j < CLNT_NMAPS; j++) {
			if (cl->cl_reqs[i].rl_mw[j])
				ibv_dealloc_mw(cl->cl_reqs[i].rl_mw[j]);
			cl->cl_reqs[i].rl_mw[j] = NULL;
		}
	}
}

/* Post every receive buffer with one chained post. */
int clnt_post_all_recvs(struct rpcrdma_clnt *cl)
{
	struct ibv_recv_wr *bad;
	uint32_t i;
	int rc;

	for (i = 0; i < cl->cl_nrecvs; i++)
		cl->cl_recvs[i].rr_wr.next =
			i + 1 < cl->cl_nrecvs ? &cl->cl_recvs[i + 1].rr_wr : NULL;
	rc = rpcrdma_verbs_post_recv(cl->cl_qp, &cl->cl_recvs[0].rr_wr, &bad);
	if (rc)
		return rc;
	cl->cl_recvs_posted = cl->cl_nrecvs;
	return 0;
}

/* The connection is gone (or being closed): move the QP to error so that
 * posted work flushes, and fail every pending call.  Lock held. */
void clnt_disconnected(struct rpcrdma_clnt *cl)
{
	if (cl->cl_connected) {
		cl->cl_connected = false;
		rpcrdma_verbs_disconnect(cl->cl_id);
	}
	/* Sends a batch queued are never posted: this QP is going, and their
	 * calls end with the others below (their requests leave the Send
	 * ring when the connection is closed); no completion is awaited for
	 * them. */
	clnt_batch_unsignal(cl, cl->cl_batch_head);
	cl->cl_batch_head = cl->cl_batch_tail = NULL;
	clnt_fail_pending(cl, -ECONNRESET);
	pthread_cond_broadcast(&cl->cl_slot_cond);
}

/* Stop the completion thread (if running). */
static void clnt_thread_stop(struct rpcrdma_clnt *cl)
{
	uint64_t v = 1;
	ssize_t r;

	if (!cl->cl_thread_started)
		return;
	r = write(cl->cl_wake_fd, &v, sizeof(v));
	pthread_join(cl->cl_thread, NULL);
	r = read(cl->cl_wake_fd, &v, sizeof(v));
	(void)r;
	cl->cl_thread_started = false;
}

/*
 * Release the connection's objects (QP, CQ, channels, PD, the slab's
 * registration), keeping the pools.  The completion thread has stopped:
 * Send completions that never came are released here, and no Receive is
 * posted any more.
 */
static void clnt_conn_close(struct rpcrdma_clnt *cl)
{
	pthread_mutex_lock(&cl->cl_lock);
	cl->cl_connected = false;
	cl->cl_batch_head = cl->cl_batch_tail = NULL; /* never posted on this QP */
	if (cl->cl_sq_ring)
		clnt_sq_release_all(cl);
	clnt_bc_release_all(cl); /* backchannel hook: before the slab's MR goes */
	cl->cl_recvs_posted = 0;
	pthread_mutex_unlock(&cl->cl_lock);

	/* Windows first: a type 2 window still bound holds its QP (rxe
	 * warns, waiting, when such a QP is destroyed) and its region (which
	 * cannot be deregistered); freeing a window unbinds it. */
	clnt_mws_free(cl);
	clnt_park_release(cl);
	if (cl->cl_id) {
		if (cl->cl_id->qp)
			rdma_destroy_qp(cl->cl_id);
		rdma_destroy_id(cl->cl_id);
		cl->cl_id = NULL;
	}
	cl->cl_qp = NULL;
	if (cl->cl_cq) {
		if (cl->cl_unacked_events)
			ibv_ack_cq_events(cl->cl_cq, cl->cl_unacked_events);
		cl->cl_unacked_events = 0;
		if (cl->cl_channel) /* a unit test's CQ is only a tag */
			ibv_destroy_cq(cl->cl_cq);
		cl->cl_cq = NULL;
	}
	if (cl->cl_channel)
		ibv_destroy_comp_channel(cl->cl_channel);
	cl->cl_channel = NULL;
	if (cl->cl_mr)
		rpcrdma_verbs_dereg_mr(cl->cl_mr);
	cl->cl_mr = NULL;
	clnt_buffers_deregister(cl);
	if (cl->cl_pd)
		ibv_dealloc_pd(cl->cl_pd);
	cl->cl_pd = NULL;
	if (cl->cl_cm_channel)
		rdma_destroy_event_channel(cl->cl_cm_channel);
	cl->cl_cm_channel = NULL;
}

/* Release everything; the completion thread has stopped. */
void clnt_free(struct rpcrdma_clnt *cl)
{
	uint32_t i;

	clnt_conn_close(cl);
	if (cl->cl_wake_fd >= 0)
		close(cl->cl_wake_fd);
	free(cl->cl_server);
	free(cl->cl_source);
	if (cl->cl_reqs)
		for (i = 0; i < cl->cl_nreqs; i++) {
			pthread_cond_destroy(&cl->cl_reqs[i].rl_cond);
			free(cl->cl_reqs[i].rl_nomsg);
		}
	clnt_bc_free(cl);
	free(cl->cl_slab);
	free(cl->cl_recvs);
	free(cl->cl_reqs);
	free(cl->cl_sq_ring);
	free(cl->cl_capture);
	free(cl->cl_xids);
	pthread_mutex_destroy(&cl->cl_lock);
	pthread_cond_destroy(&cl->cl_slot_cond);
	pthread_cond_destroy(&cl->cl_work_cond);
	free(cl);
}

/* ---- rdma_cm ---- */

int clnt_cm_connect_status(enum rdma_cm_event_type event, int status,
			   enum rdma_cm_event_type want)
{
	int rc;

	if (event == want)
		return 0;
	switch (event) {
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		rc = status < 0 ? status : -EHOSTUNREACH;
		if (rc == -ETIMEDOUT || rc == -ENODEV || rc == -EADDRNOTAVAIL)
			rc = -EHOSTUNREACH;
		return rc;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return status < 0 ? status : -ECONNRESET;
	case RDMA_CM_EVENT_DISCONNECTED:
		return -ECONNRESET;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return -ENODEV;
	default:
		return -EPROTO;
	}
}

/* Wait for the next CM event on our channel, up to @ms. */
static int clnt_cm_wait(struct rpcrdma_clnt *cl, unsigned ms,
			enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = cl->cl_cm_channel->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int rc, n;

	n = poll(&pfd, 1, (int)ms);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(cl->cl_cm_channel, &ev))
		return -errno;
	if (cl->cl_cfg.cf_verbose)
		clnt_log(cl, "cm event %s (status %d)", rdma_event_str(ev->event), ev->status);
	rc = clnt_cm_connect_status(ev->event, ev->status, want);
	if (!rc && want == RDMA_CM_EVENT_ESTABLISHED) {
		clnt_set_peer(cl, ev->param.conn.private_data,
			      ev->param.conn.private_data_len);
		clnt_capture_connected(cl, ev->param.conn.qp_num);
	}
	rdma_ack_cm_event(ev);
	return rc;
}

static int clnt_resolve(struct rpcrdma_clnt *cl)
{
	struct addrinfo hints, *dst = NULL, *src = NULL;
	char port[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%u", cl->cl_cfg.cf_port);
	if (getaddrinfo(cl->cl_server, port, &hints, &dst))
		return -EINVAL;
	if (cl->cl_source) {
		hints.ai_flags = AI_NUMERICHOST;
		hints.ai_family = dst->ai_family;
		if (getaddrinfo(cl->cl_source, NULL, &hints, &src)) {
			rc = -EINVAL;
			goto out;
		}
	}
	if (rdma_resolve_addr(cl->cl_id, src ? src->ai_addr : NULL, dst->ai_addr,
			      (int)cl->cl_cfg.cf_connect_timeout_ms)) {
		rc = errno == ENODEV || errno == EADDRNOTAVAIL ? -EHOSTUNREACH : -errno;
		goto out;
	}
	rc = clnt_cm_wait(cl, cl->cl_cfg.cf_connect_timeout_ms + 1000,
			  RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rc)
		goto out;
	if (rdma_resolve_route(cl->cl_id, (int)cl->cl_cfg.cf_connect_timeout_ms)) {
		rc = -errno;
		goto out;
	}
	rc = clnt_cm_wait(cl, cl->cl_cfg.cf_connect_timeout_ms + 1000,
			  RDMA_CM_EVENT_ROUTE_RESOLVED);
out:
	if (src)
		freeaddrinfo(src);
	freeaddrinfo(dst);
	return rc;
}

int clnt_qp_size(struct rpcrdma_clnt *cl, const struct ibv_device_attr *dev,
		 uint32_t *send_wr, uint32_t *recv_wr)
{
	/* backchannel hook: its replies' Sends and its Receives */
	uint32_t sq = cl->cl_nreqs + 4 + CLNT_BC_REQS(cl);
	uint32_t rq = cl->cl_max_credits + CLNT_EXTRA_RECVS + cl->cl_cfg.cf_bc_slots;
	/* per call: binds and LOCAL_INVs, one per chunk */
	uint32_t mw_wr = cl->cl_nreqs * 2 * CLNT_NMAPS;
	uint32_t max_wr = dev->max_qp_wr > 0 ? (uint32_t)dev->max_qp_wr : 0;
	uint32_t max_cqe = dev->max_cqe > 0 ? (uint32_t)dev->max_cqe : 0;
	uint32_t max_mw = dev->max_mw > 0 ? (uint32_t)dev->max_mw : 0;

	cl->cl_mw_enabled = cl->cl_cfg.cf_reg == RPCRDMA_CLNT_REG_WINDOWS &&
			    (dev->device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	if (cl->cl_cfg.cf_reg == RPCRDMA_CLNT_REG_WINDOWS && !cl->cl_mw_enabled)
		clnt_log(cl, "device has no type 2B memory windows: buffers are "
			 "registered per call");
	if (sq > max_wr || rq > max_wr || sq + rq > max_cqe) {
		clnt_log(cl, "%u credits need a send queue of %u, a receive queue "
			 "of %u and a completion queue of %u; the device allows "
			 "%u per queue and %u completions: ask for fewer credits",
			 cl->cl_max_credits, sq, rq, sq + rq, max_wr, max_cqe);
		return -EINVAL;
	}
	if (cl->cl_mw_enabled && (sq + mw_wr > max_wr || sq + mw_wr + rq > max_cqe ||
				  cl->cl_nreqs * CLNT_NMAPS > max_mw)) {
		clnt_log(cl, "%u credits with memory windows need a send queue of "
			 "%u, a completion queue of %u and %u windows; the device "
			 "allows %u, %u and %u: buffers are registered per call",
			 cl->cl_max_credits, sq + mw_wr, sq + mw_wr + rq,
			 cl->cl_nreqs * CLNT_NMAPS, max_wr, max_cqe, max_mw);
		cl->cl_mw_enabled = false;
	}
	if (cl->cl_mw_enabled)
		sq += mw_wr;
	*send_wr = sq;
	*recv_wr = rq;
	return 0;
}

static int clnt_create_qp(struct rpcrdma_clnt *cl)
{
	struct ibv_qp_init_attr attr;
	struct ibv_device_attr dev;
	struct rdma_cm_id *id = cl->cl_id;
	uint32_t send_wr, recv_wr;
	int rc;

	if (ibv_query_device(id->verbs, &dev))
		return -EIO;
	/* Soft-RoCE: vendor id 0xffffff, devices named rxe* by convention */
	cl->cl_rxe_inv_flag = dev.vendor_id == 0xffffffu ||
			      !strncmp(ibv_get_device_name(id->verbs->device), "rxe", 3);
	rc = clnt_qp_size(cl, &dev, &send_wr, &recv_wr);
	if (rc)
		return rc;

	cl->cl_pd = ibv_alloc_pd(id->verbs);
	if (!cl->cl_pd)
		return -ENOMEM;
	cl->cl_channel = ibv_create_comp_channel(id->verbs);
	if (!cl->cl_channel)
		return -errno;
	if (fcntl(cl->cl_channel->fd, F_SETFL,
		  fcntl(cl->cl_channel->fd, F_GETFL) | O_NONBLOCK) < 0)
		return -errno;
	cl->cl_cq = ibv_create_cq(id->verbs, (int)(send_wr + recv_wr), cl, cl->cl_channel, 0);
	if (!cl->cl_cq)
		return -errno;
	if (ibv_req_notify_cq(cl->cl_cq, 0))
		return -EIO;
	memset(&attr, 0, sizeof(attr));
	attr.send_cq = cl->cl_cq;
	attr.recv_cq = cl->cl_cq;
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = send_wr;
	attr.cap.max_recv_wr = recv_wr;
	attr.cap.max_send_sge = 2;
	attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, cl->cl_pd, &attr))
		return -errno;
	cl->cl_qp = id->qp;
	return 0;
}

static int clnt_connect(struct rpcrdma_clnt *cl)
{
	struct rdma_conn_param param;
	struct ibv_device_attr dev;
	uint8_t pdata[RPCRDMA_CM_PRIVATE_BYTES];
	struct rpcrdma_cm_private ours = {
		.cp_version = RPCRDMA_CM_VERSION,
		.cp_send_size = cl->cl_cfg.cf_inline_size,
		.cp_recv_size = cl->cl_cfg.cf_inline_size,
	};

	if (ibv_query_device(cl->cl_id->verbs, &dev))
		return -EIO;
	rpcrdma_verbs_conn_param(&param, &dev, pdata, cl->cl_cfg.cf_inline_size,
				 cl->cl_cfg.cf_inline_size);
	/* With windows every handle may be invalidated by the Responder. */
	ours.cp_flags = clnt_private_flags(cl);
	rpcrdma_wire_encode_private(pdata, &ours);
	if (rdma_connect(cl->cl_id, &param))
		return -errno;
	return clnt_cm_wait(cl, cl->cl_cfg.cf_connect_timeout_ms + 1000,
			    RDMA_CM_EVENT_ESTABLISHED);
}

bool clnt_cm_event(struct rpcrdma_clnt *cl, enum rdma_cm_event_type type)
{
	switch (type) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		pthread_mutex_lock(&cl->cl_lock);
		if (cl->cl_connected && !cl->cl_stopping)
			clnt_log(cl, "connection lost: %s", rdma_event_str(type));
		clnt_disconnected(cl);
		pthread_mutex_unlock(&cl->cl_lock);
		clnt_run_done(cl);
		return true;
	default:
		return false;
	}
}

static void clnt_cm_events(struct rpcrdma_clnt *cl)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(cl->cl_cm_channel, &ev) == 0) {
		enum rdma_cm_event_type type = ev->event;

		rdma_ack_cm_event(ev);
		if (cl->cl_cfg.cf_verbose)
			clnt_log(cl, "cm event %s", rdma_event_str(type));
		clnt_cm_event(cl, type);
	}
}

static void *clnt_thread(void *arg)
{
	struct rpcrdma_clnt *cl = arg;
	struct pollfd pfd[3] = {
		{ .fd = cl->cl_channel->fd, .events = POLLIN },
		{ .fd = cl->cl_cm_channel->fd, .events = POLLIN },
		{ .fd = cl->cl_wake_fd, .events = POLLIN },
	};
	struct ibv_cq *cq;
	void *ctx;
	unsigned busy_loops = 0;
	int n;

	for (;;) {
		/* Wake every 200 ms to time out asynchronous calls. */
		n = poll(pfd, 3, 200);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (n == 0 || ++busy_loops % 64 == 0)
			clnt_check_deadlines(cl);
		if (n == 0)
			continue;
		if (pfd[2].revents)
			break;
		if (pfd[0].revents) {
			/* One CQ on the channel, armed once per event: one
			 * event to read (a second read would only return
			 * EAGAIN, a system call per wake-up). */
			if (ibv_get_cq_event(cl->cl_channel, &cq, &ctx) == 0 &&
			    ++cl->cl_unacked_events >= 16) {
				ibv_ack_cq_events(cl->cl_cq, cl->cl_unacked_events);
				cl->cl_unacked_events = 0;
			}
			ibv_req_notify_cq(cl->cl_cq, 0);
			clnt_poll(cl);
		}
		if (pfd[1].revents)
			clnt_cm_events(cl);
	}
	/* Collect what flushed before the QP goes away. */
	clnt_poll(cl);
	return NULL;
}

/*
 * Make a connection: CM id, address and route, QP, the slab registered
 * with the new PD, every Receive posted, connect, completion thread.  The
 * pools exist already.  On failure everything made here is released.
 */
static int clnt_conn_open(struct rpcrdma_clnt *cl)
{
	int rc;

	/* The process's first channel lists the devices: only their
	 * providers need loading. */
	rpcrdma_verbs_preload_providers();
	cl->cl_cm_channel = rdma_create_event_channel();
	if (!cl->cl_cm_channel) {
		rc = errno ? -errno : -ENODEV;
		goto err;
	}
	if (rdma_create_id(cl->cl_cm_channel, &cl->cl_id, cl, RDMA_PS_TCP)) {
		rc = -errno;
		cl->cl_id = NULL;
		goto err;
	}
	rc = clnt_resolve(cl);
	if (rc)
		goto err;
	rc = clnt_create_qp(cl);
	if (rc)
		goto err;
	if (!cl->cl_slab)
		rc = clnt_alloc_pools(cl);
	else
		rc = clnt_register_slab(cl);
	if (!rc)
		rc = clnt_buffers_register(cl);
	if (!rc && cl->cl_mw_enabled)
		rc = clnt_mws_alloc(cl);
	if (rc)
		goto err;
	rc = clnt_post_all_recvs(cl);
	if (rc)
		goto err;
	rc = clnt_connect(cl);
	if (rc)
		goto err;
	if (fcntl(cl->cl_cm_channel->fd, F_SETFL,
		  fcntl(cl->cl_cm_channel->fd, F_GETFL) | O_NONBLOCK) < 0) {
		rc = -errno;
		goto err_disconnect;
	}
	pthread_mutex_lock(&cl->cl_lock);
	cl->cl_connected = true;
	cl->cl_credits = 1; /* until the first reply on this connection */
	pthread_mutex_unlock(&cl->cl_lock);
	rc = -pthread_create(&cl->cl_thread, NULL, clnt_thread, cl);
	if (rc)
		goto err_disconnect;
	cl->cl_thread_started = true;
	if (cl->cl_cfg.cf_verbose)
		clnt_log(cl, "connected: inline send %u, inline receive %u, credits asked %u",
			 cl->cl_inline_send, cl->cl_inline_recv, cl->cl_max_credits);
	return 0;

err_disconnect:
	rdma_disconnect(cl->cl_id);
err:
	clnt_conn_close(cl);
	return rc;
}

int rpcrdma_clnt_create(const struct rpcrdma_clnt_config *cfg, struct rpcrdma_clnt **out)
{
	struct rpcrdma_clnt *cl;
	int rc;

	if (!cfg || !cfg->cf_server)
		return -EINVAL;
	cl = calloc(1, sizeof(*cl));
	if (!cl)
		return -ENOMEM;
	rc = clnt_init(cl, cfg);
	if (rc) {
		free(cl);
		return rc;
	}
	cl->cl_server = strdup(cfg->cf_server);
	cl->cl_source = cfg->cf_source ? strdup(cfg->cf_source) : NULL;
	cl->cl_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!cl->cl_server || (cfg->cf_source && !cl->cl_source) || cl->cl_wake_fd < 0) {
		rc = cl->cl_wake_fd < 0 ? -errno : -ENOMEM;
		goto err;
	}
	rc = clnt_conn_open(cl);
	if (rc)
		goto err;
	if (cl->cl_cfg.cf_retries) {
		rc = -pthread_create(&cl->cl_worker, NULL, clnt_worker, cl);
		if (rc) {
			rpcrdma_clnt_destroy(cl);
			return rc;
		}
		cl->cl_worker_started = true;
	}
	*out = cl;
	return 0;
err:
	clnt_free(cl);
	return rc;
}

/*
 * Reconnect after the connection was lost, unless another thread already
 * did.  Takes the calls waiting to be sent again and releases their old
 * registrations, waits until every other request of the old connection
 * has released its registrations (they were failed with -ECONNRESET), then
 * rebuilds the connection after a back-off that doubles per failed attempt
 * (common/backoff.h), and sends the waiting calls again with their xids,
 * oldest first, as the new grant allows.
 * Return: 0 (connected), -ESHUTDOWN (the client is being destroyed), or
 * the connection error.
 */
int clnt_reconnect(struct rpcrdma_clnt *cl)
{
	uint32_t nresend;
	unsigned delay;
	int rc;

	pthread_mutex_lock(&cl->cl_lock);
	while (cl->cl_reconnecting)
		pthread_cond_wait(&cl->cl_slot_cond, &cl->cl_lock);
	if (cl->cl_stopping) {
		pthread_mutex_unlock(&cl->cl_lock);
		return -ESHUTDOWN;
	}
	if (cl->cl_connected) {
		pthread_mutex_unlock(&cl->cl_lock);
		return 0;
	}
	cl->cl_reconnecting = true;
	cl->cl_conn_wanted = false; /* a try-caller asks again after a failure */
	pthread_mutex_unlock(&cl->cl_lock);

	nresend = clnt_resend_prepare(cl);

	pthread_mutex_lock(&cl->cl_lock);
	/* The calls taken above stay on the RPC side, without registrations. */
	while (cl->cl_rpc_busy > nresend)
		pthread_cond_wait(&cl->cl_slot_cond, &cl->cl_lock);
	delay = cl->cl_backoff_ms;
	pthread_mutex_unlock(&cl->cl_lock);

	if (delay)
		usleep(delay * 1000u);
	clnt_thread_stop(cl);
	clnt_conn_close(cl);
	rc = cl->cl_open ? cl->cl_open(cl) : clnt_conn_open(cl);

	pthread_mutex_lock(&cl->cl_lock);
	if (rc) {
		cl->cl_backoff_ms = rpcrdma_backoff_next(cl->cl_backoff_ms,
							 cl->cl_cfg.cf_backoff_max_ms);
		clnt_log(cl, "reconnect failed: %s (next attempt in %u ms)", strerror(-rc),
			 cl->cl_backoff_ms);
	} else {
		cl->cl_conn_wanted = false; /* served (a try during the attempt set it) */
		cl->cl_backoff_ms = 0;
		cl->cl_stats.cs_reconnects++;
		clnt_log(cl, "reconnected%s", nresend ? ": sending calls again" : "");
	}
	pthread_mutex_unlock(&cl->cl_lock);

	/* Before new calls may start: they wait for cl_ready to drain. */
	clnt_resend_finish(cl, rc);

	pthread_mutex_lock(&cl->cl_lock);
	cl->cl_reconnecting = false;
	pthread_cond_broadcast(&cl->cl_slot_cond);
	pthread_cond_broadcast(&cl->cl_work_cond);
	pthread_mutex_unlock(&cl->cl_lock);
	return rc;
}

/* The connect worker: reconnects while calls wait to be sent again or
 * new calls wait for a connection (the back-off is clnt_reconnect's),
 * until the client stops. */
void *clnt_worker(void *arg)
{
	struct rpcrdma_clnt *cl = arg;

	pthread_mutex_lock(&cl->cl_lock);
	for (;;) {
		while (!cl->cl_stopping && !clnt_reconnect_wanted(cl))
			pthread_cond_wait(&cl->cl_work_cond, &cl->cl_lock);
		if (cl->cl_stopping)
			break;
		pthread_mutex_unlock(&cl->cl_lock);
		clnt_reconnect(cl);
		pthread_mutex_lock(&cl->cl_lock);
	}
	pthread_mutex_unlock(&cl->cl_lock);
	return NULL;
}

bool clnt_wait_drained(struct rpcrdma_clnt *cl, unsigned ms)
{
	struct timespec dl;

	clnt_deadline(&dl, ms);
	while (!clnt_drained(cl))
		if (pthread_cond_timedwait(&cl->cl_slot_cond, &cl->cl_lock, &dl) == ETIMEDOUT)
			return false;
	return true;
}

void rpcrdma_clnt_destroy(struct rpcrdma_clnt *cl)
{
	if (!cl)
		return;
	pthread_mutex_lock(&cl->cl_lock);
	cl->cl_stopping = true;
	pthread_cond_broadcast(&cl->cl_work_cond);
	pthread_mutex_unlock(&cl->cl_lock);
	if (cl->cl_worker_started)
		pthread_join(cl->cl_worker, NULL);
	cl->cl_worker_started = false;
	pthread_mutex_lock(&cl->cl_lock);
	while (cl->cl_reconnecting)
		pthread_cond_wait(&cl->cl_slot_cond, &cl->cl_lock);
	clnt_disconnected(cl);
	pthread_mutex_unlock(&cl->cl_lock);
	clnt_run_done(cl);
	if (cl->cl_thread_started) {
		/* Let the flushes of posted work come back, up to 1 s. */
		pthread_mutex_lock(&cl->cl_lock);
		clnt_wait_drained(cl, 1000);
		pthread_mutex_unlock(&cl->cl_lock);
	}
	clnt_thread_stop(cl);
	/* Send owners whose completions never came are released by
	 * clnt_conn_close(): nothing is posted once the QP is destroyed. */
	clnt_free(cl);
}

uint32_t rpcrdma_clnt_inline_send(const struct rpcrdma_clnt *cl)
{
	return cl->cl_inline_send;
}

uint32_t rpcrdma_clnt_inline_recv(const struct rpcrdma_clnt *cl)
{
	return cl->cl_inline_recv;
}

void rpcrdma_clnt_get_stats(struct rpcrdma_clnt *cl, struct rpcrdma_clnt_stats *st)
{
	pthread_mutex_lock(&cl->cl_lock);
	*st = cl->cl_stats;
	st->cs_credits = cl->cl_credits;
	st->cs_outstanding = cl->cl_outstanding;
	st->cs_reqs_in_use = cl->cl_reqs_out;
	pthread_mutex_unlock(&cl->cl_lock);
}
