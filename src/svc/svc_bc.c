// SPDX-License-Identifier: MIT
/*
 * svc_bc.c - the server's backchannel (RFC 8167): calls from the server
 * to the client on the connection the client opened, their Sends, the
 * matching of replies by xid, backchannel credits, timeouts, and the end
 * of every call when the connection goes.  See svc_bc.h for the threading
 * and the lifetime of a call slot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "svc/svc_bc.h"

/* ======== the one wake-up of a connection's owner thread ======== */

/*
 * svc_conn_kick - the transport thread (group) that owns @conn is told
 * that some connection of its has queued work, and woken (its eventfd;
 * a polling loop sees gr_bc_kicks on its next turn); its svc_bc_poll()
 * finds the kicked connections.
 */
void svc_conn_kick(struct svc_conn *conn)
{
	struct svc_group *grp = conn->sx_grp;

	atomic_fetch_add(&grp->gr_bc_kicks, 1);
	svc_group_wake(grp);
}

/* ======== handles ======== */

/* A connection's backchannel state, not yet shared: RDMA's @conn, or the
 * TCP connection of call @cc. */
static struct rpcrdma_svc_bc *svc_bc_new(struct svc_conn *conn, const struct svc_call *cc)
{
	struct rpcrdma_svc_bc *bc = calloc(1, sizeof(*bc));
	uint32_t i, id;

	if (!bc)
		return NULL;
	pthread_mutex_init(&bc->bc_lock, NULL);
	bc->bc_refs = 1; /* the connection's */
	if (conn) {
		bc->bc_svc = conn->sx_svc;
		bc->bc_grp = conn->sx_grp;
		bc->bc_conn = conn;
		bc->bc_xprt = &svc_rdma_class;
		id = conn->sx_id_num;
		/* Before the client's first backchannel reply states its
		 * grant, one call at a time (RFC 8167 4.1, RFC 8166 3.3.1). */
		bc->bc_credits = 1;
		bc->bc_max_msg = conn->sx_inline_send > RPCRDMA_HDR_MIN_BYTES ?
				 conn->sx_inline_send - RPCRDMA_HDR_MIN_BYTES : 0;
	} else {
		bc->bc_svc = cc->cc_svc;
		bc->bc_grp = cc->cc_grp;
		bc->bc_tconn = cc->cc_tconn;
		bc->bc_xprt = &svc_tcp_class;
		id = svc_tcp_conn_id(cc);
		/* ONC RPC over TCP has no credits: the back channel's slot
		 * table (the session's) is the only bound. */
		bc->bc_credits = SVC_BC_SLOTS;
		bc->bc_max_msg = cc->cc_svc->sv_tcp_reply_cap;
		bc->bc_ready = true;
	}
	bc->bc_conn_id = id;
	bc->bc_xid_next = (uint32_t)(svc_now_ms() * 2654435761u) ^ (id << 20);
	for (i = 0; i < SVC_BC_SLOTS; i++) {
		bc->bc_calls[i].bq_bc = bc;
		bc->bc_calls[i].bq_cqe.ce_type = RPCRDMA_CQE_BC_SEND;
		bc->bc_calls[i].bq_cqe.ce_id = i;
	}
	return bc;
}

/* Still attached to a connection that takes calls (bc_lock held). */
static bool svc_bc_up_locked(const struct rpcrdma_svc_bc *bc)
{
	return !bc->bc_closed && (bc->bc_conn || bc->bc_tconn);
}

static void svc_bc_free(struct rpcrdma_svc_bc *bc)
{
	uint32_t i;

	for (i = 0; i < SVC_BC_SLOTS; i++)
		free(bc->bc_calls[i].bq_msg);
	pthread_mutex_destroy(&bc->bc_lock);
	free(bc);
}

int rpcrdma_svc_bc_get(const struct rpcrdma_svc_req *req, struct rpcrdma_svc_bc **out)
{
	struct svc_call *cc = req->rq_xprt;
	struct rpcrdma_svc_bc *_Atomic *slot;
	struct rpcrdma_svc_bc *bc, *expect = NULL;

	/* A request made without a connection (a test harness, a dispatch
	 * function called directly) has no backchannel. */
	if (!cc || (!cc->cc_conn && !cc->cc_tconn))
		return -ENOTCONN;
	slot = cc->cc_conn ? &cc->cc_conn->sx_bc : svc_tcp_bc_slot(cc);
	bc = atomic_load(slot);

	/* The call holds its connection: it cannot be freed meanwhile. */
	if (!bc) {
		bc = svc_bc_new(cc->cc_conn, cc);
		if (!bc)
			return -ENOMEM;
		if (!atomic_compare_exchange_strong(slot, &expect, bc)) {
			svc_bc_free(bc);
			bc = expect;
		}
	}
	pthread_mutex_lock(&bc->bc_lock);
	if (!svc_bc_up_locked(bc)) {
		pthread_mutex_unlock(&bc->bc_lock);
		return -ENOTCONN;
	}
	bc->bc_refs++;
	pthread_mutex_unlock(&bc->bc_lock);
	*out = bc;
	return 0;
}

void rpcrdma_svc_bc_hold(struct rpcrdma_svc_bc *bc)
{
	pthread_mutex_lock(&bc->bc_lock);
	bc->bc_refs++;
	pthread_mutex_unlock(&bc->bc_lock);
}

void rpcrdma_svc_bc_put(struct rpcrdma_svc_bc *bc)
{
	unsigned left;

	if (!bc)
		return;
	pthread_mutex_lock(&bc->bc_lock);
	left = --bc->bc_refs;
	pthread_mutex_unlock(&bc->bc_lock);
	if (!left)
		svc_bc_free(bc);
}

bool rpcrdma_svc_bc_connected(struct rpcrdma_svc_bc *bc)
{
	bool up;

	pthread_mutex_lock(&bc->bc_lock);
	up = svc_bc_up_locked(bc);
	pthread_mutex_unlock(&bc->bc_lock);
	return up;
}

/* ======== starting a call (any thread) ======== */

static uint8_t *svc_bc_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static uint32_t svc_bc_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* RFC 5531 9: the call header (verifier AUTH_NONE) and the arguments. */
static uint32_t svc_bc_encode_call(uint8_t *p, uint32_t xid, const struct rpcrdma_svc_bc_args *a)
{
	uint8_t *start = p;
	size_t pad;

	p = svc_bc_put32(p, xid);
	p = svc_bc_put32(p, RPC_DIR_CALL);
	p = svc_bc_put32(p, RPC_MSG_VERSION);
	p = svc_bc_put32(p, a->ba_prog);
	p = svc_bc_put32(p, a->ba_vers);
	p = svc_bc_put32(p, a->ba_proc);
	p = svc_bc_put32(p, a->ba_cred_flavor);
	p = svc_bc_put32(p, a->ba_cred_len);
	if (a->ba_cred_len)
		memcpy(p, a->ba_cred, a->ba_cred_len);
	pad = RPCRDMA_XDR_ALIGN(a->ba_cred_len) - a->ba_cred_len;
	memset(p + a->ba_cred_len, 0, pad);
	p += a->ba_cred_len + pad;
	p = svc_bc_put32(p, RPC_AUTH_NONE);
	p = svc_bc_put32(p, 0);
	if (a->ba_args_len)
		memcpy(p, a->ba_args, a->ba_args_len);
	pad = RPCRDMA_XDR_ALIGN(a->ba_args_len) - a->ba_args_len;
	memset(p + a->ba_args_len, 0, pad);
	p += a->ba_args_len + pad;
	return (uint32_t)(p - start);
}

int rpcrdma_svc_bc_call(struct rpcrdma_svc_bc *bc, const struct rpcrdma_svc_bc_args *a,
			uint32_t *xid)
{
	struct svc_bc_call *bq = NULL;
	uint64_t len;
	uint8_t *msg;
	uint32_t i;

	if (!a || !a->ba_done || a->ba_cred_len > RPC_AUTH_MAX_BODY ||
	    (a->ba_cred_len && !a->ba_cred) || (a->ba_args_len && !a->ba_args))
		return -EINVAL;
	len = 40u + RPCRDMA_XDR_ALIGN(a->ba_cred_len) + RPCRDMA_XDR_ALIGN(a->ba_args_len);
	if (len > bc->bc_max_msg)
		return -EMSGSIZE;
	msg = malloc(len);
	if (!msg)
		return -ENOMEM;

	pthread_mutex_lock(&bc->bc_lock);
	if (!svc_bc_up_locked(bc)) {
		pthread_mutex_unlock(&bc->bc_lock);
		free(msg);
		return -ENOTCONN;
	}
	for (i = 0; i < SVC_BC_SLOTS && !bq; i++)
		if (bc->bc_calls[i].bq_state == BQ_FREE)
			bq = &bc->bc_calls[i];
	if (!bq) {
		pthread_mutex_unlock(&bc->bc_lock);
		free(msg);
		return -EAGAIN;
	}
	bq->bq_xid = bc->bc_xid_next++;
	bq->bq_len = svc_bc_encode_call(msg, bq->bq_xid, a);
	bq->bq_msg = msg;
	bq->bq_done = a->ba_done;
	bq->bq_done_arg = a->ba_done_arg;
	bq->bq_deadline_ms = svc_now_ms() +
		(a->ba_timeout_ms ? a->ba_timeout_ms : RPCRDMA_SVC_BC_DEFAULT_TIMEOUT_MS);
	bq->bq_state = BQ_QUEUED;
	bq->bq_next = NULL;
	if (bc->bc_qtail)
		bc->bc_qtail->bq_next = bq;
	else
		bc->bc_qhead = bq;
	bc->bc_qtail = bq;
	if (xid)
		*xid = bq->bq_xid;
	atomic_fetch_add(&bc->bc_grp->gr_bc_pending, 1);
	atomic_store(&bc->bc_kicked, true);
	/* bc_conn stays valid while we hold bc_lock (svc_bc_conn_gone()). */
	if (bc->bc_conn) {
		svc_conn_kick(bc->bc_conn);
	} else {
		atomic_fetch_add(&bc->bc_grp->gr_bc_kicks, 1);
		svc_group_wake(bc->bc_grp);
	}
	pthread_mutex_unlock(&bc->bc_lock);
	return 0;
}

/* ======== the owner thread ======== */

/* An ended call to report once bc_lock is released. */
struct svc_bc_end {
	rpcrdma_svc_bc_done_fn be_done;
	void *be_arg;
};

/*
 * End @bq with bc_lock held: the caller's share goes (the outcome is
 * reported by the caller of this once the lock is released); the slot is
 * free at once unless its Send has not completed.
 */
static void svc_bc_end_locked(struct rpcrdma_svc_bc *bc, struct svc_bc_call *bq,
			      struct svc_bc_end *end)
{
	if (bq->bq_state == BQ_SENT)
		bc->bc_in_flight--;
	end->be_done = bq->bq_done;
	end->be_arg = bq->bq_done_arg;
	free(bq->bq_msg);
	bq->bq_msg = NULL;
	bq->bq_done = NULL;
	bq->bq_state = bq->bq_send_posted ? BQ_ENDED : BQ_FREE;
	atomic_fetch_sub(&bc->bc_grp->gr_bc_pending, 1);
}

static void svc_bc_report(const struct svc_bc_end *ends, unsigned n, int status)
{
	unsigned i;

	for (i = 0; i < n; i++)
		ends[i].be_done(ends[i].be_arg, status, NULL, NULL, 0);
}

/* Remove @bq from the queue of calls not yet sent (bc_lock held). */
static void svc_bc_unqueue(struct rpcrdma_svc_bc *bc, struct svc_bc_call *bq)
{
	struct svc_bc_call **pp = &bc->bc_qhead, *prev = NULL;

	while (*pp && *pp != bq) {
		prev = *pp;
		pp = &(*pp)->bq_next;
	}
	if (!*pp)
		return;
	*pp = bq->bq_next;
	if (bc->bc_qtail == bq)
		bc->bc_qtail = prev;
	bq->bq_next = NULL;
}

/* End every call of @bc not ended yet with @status. */
static void svc_bc_end_all(struct rpcrdma_svc_bc *bc, int status, bool close)
{
	struct svc_bc_end ends[SVC_BC_SLOTS];
	unsigned n = 0, i;

	pthread_mutex_lock(&bc->bc_lock);
	if (close)
		bc->bc_closed = true;
	for (i = 0; i < SVC_BC_SLOTS; i++) {
		struct svc_bc_call *bq = &bc->bc_calls[i];

		if (bq->bq_state == BQ_QUEUED || bq->bq_state == BQ_SENT)
			svc_bc_end_locked(bc, bq, &ends[n++]);
	}
	bc->bc_qhead = bc->bc_qtail = NULL;
	pthread_mutex_unlock(&bc->bc_lock);
	svc_bc_report(ends, n, status);
}

/* Post Receives for the replies and take a send buffer per slot. */
static int svc_bc_setup(struct svc_conn *conn, struct rpcrdma_svc_bc *bc)
{
	struct svc_dev *dev = conn->sx_dev;
	struct ibv_recv_wr *bad;
	uint32_t i;
	int err;

	for (i = 0; i < SVC_BC_SLOTS; i++) {
		err = svc_buf_get(dev, conn->sx_inline_send, false, &bc->bc_calls[i].bq_buf);
		if (err)
			goto out_put;
	}
	bc->bc_recvs = calloc(SVC_BC_RECVS, sizeof(*bc->bc_recvs));
	if (!bc->bc_recvs) {
		err = -ENOMEM;
		goto out_put;
	}
	for (i = 0; i < SVC_BC_RECVS; i++) {
		struct svc_recv *rc = &bc->bc_recvs[i];

		err = svc_buf_get(dev, conn->sx_inline_recv, true, &rc->rc_mem);
		if (err)
			goto out_put;
		bc->bc_nrecvs++;
		rc->rc_cqe.ce_type = RPCRDMA_CQE_RECV;
		rc->rc_cqe.ce_id = 0x80000000u | i;
		rc->rc_conn = conn;
		rc->rc_buf = rc->rc_mem.sb_addr;
		rc->rc_sge.addr = (uintptr_t)rc->rc_buf;
		rc->rc_sge.length = conn->sx_inline_recv;
		rc->rc_sge.lkey = svc_buf_lkey(&rc->rc_mem);
		rc->rc_wr.wr_id = (uintptr_t)&rc->rc_cqe;
		rc->rc_wr.sg_list = &rc->rc_sge;
		rc->rc_wr.num_sge = 1;
		rc->rc_wr.next = i + 1 < SVC_BC_RECVS ? &bc->bc_recvs[i + 1].rc_wr : NULL;
	}
	/* From here on they travel with the connection's own Receives
	 * (reposted through its refill batch, counted in sx_recvs_posted). */
	err = rpcrdma_verbs_post_recv(conn->sx_id->qp, &bc->bc_recvs[0].rc_wr, &bad);
	if (err) {
		SVC_INC(conn->sx_svc, post_errors, 1);
		goto out_put;
	}
	conn->sx_recvs_posted += SVC_BC_RECVS;
	bc->bc_ready = true;
	return 0;

out_put:
	for (i = 0; i < SVC_BC_SLOTS; i++)
		svc_buf_put(dev, &bc->bc_calls[i].bq_buf, false);
	for (i = 0; i < bc->bc_nrecvs; i++)
		svc_buf_put(dev, &bc->bc_recvs[i].rc_mem, true);
	bc->bc_nrecvs = 0;
	free(bc->bc_recvs);
	bc->bc_recvs = NULL;
	svc_log(conn->sx_svc, "conn %u: backchannel: no registered memory (%s)",
		conn->sx_id_num, strerror(-err));
	return err;
}

/* Post the queued calls the client's credit allows, in order, in one post. */
static void svc_bc_send_queued(struct svc_conn *conn, struct rpcrdma_svc_bc *bc)
{
	struct rpcrdma_svc *svc = conn->sx_svc;
	struct ibv_send_wr *head = NULL, **link = &head, *bad, *wr;
	struct svc_bc_end ends[SVC_BC_SLOTS];
	unsigned n = 0;
	int err;

	pthread_mutex_lock(&bc->bc_lock);
	while (bc->bc_qhead && bc->bc_in_flight < bc->bc_credits) {
		struct svc_bc_call *bq = bc->bc_qhead;
		uint8_t *p = bq->bq_buf.sb_addr;

		bc->bc_qhead = bq->bq_next;
		if (!bc->bc_qhead)
			bc->bc_qtail = NULL;
		bq->bq_next = NULL;
		/* RFC 8167 5.1: version 1, the credits we ask for, RDMA_MSG,
		 * three empty chunk lists, then the call inline. */
		p = svc_bc_put32(p, bq->bq_xid);
		p = svc_bc_put32(p, RPCRDMA_VERSION);
		p = svc_bc_put32(p, SVC_BC_SLOTS);
		p = svc_bc_put32(p, RDMA_MSG);
		p = svc_bc_put32(p, 0);
		p = svc_bc_put32(p, 0);
		p = svc_bc_put32(p, 0);
		memcpy(p, bq->bq_msg, bq->bq_len);
		free(bq->bq_msg);
		bq->bq_msg = NULL;
		memset(&bq->bq_wr, 0, sizeof(bq->bq_wr));
		bq->bq_sge.addr = (uintptr_t)bq->bq_buf.sb_addr;
		bq->bq_sge.length = RPCRDMA_HDR_MIN_BYTES + bq->bq_len;
		bq->bq_sge.lkey = svc_buf_lkey(&bq->bq_buf);
		bq->bq_wr.wr_id = (uintptr_t)&bq->bq_cqe;
		bq->bq_wr.sg_list = &bq->bq_sge;
		bq->bq_wr.num_sge = 1;
		bq->bq_wr.opcode = IBV_WR_SEND;
		bq->bq_wr.send_flags = IBV_SEND_SIGNALED;
		bq->bq_state = BQ_SENT;
		bq->bq_send_posted = true;
		bc->bc_in_flight++;
		bc->bc_sends++;
		SVC_INC(svc, bc_calls, 1);
		SVC_XINC(svc, send_bytes, SVC_XPRT_RDMA, bq->bq_sge.length);
		svc_capture_send_buf(conn, bq->bq_buf.sb_addr, bq->bq_sge.length);
		*link = &bq->bq_wr;
		link = &bq->bq_wr.next;
	}
	pthread_mutex_unlock(&bc->bc_lock);
	if (!head)
		return;
	/* Unlocked: a completion may be delivered before post returns. */
	err = rpcrdma_verbs_post_send(conn->sx_id->qp, head, &bad);
	if (!err)
		return;
	SVC_INC(svc, post_errors, 1);
	svc_log(svc, "conn %u: backchannel Send post failed: %s", conn->sx_id_num,
		strerror(-err));
	pthread_mutex_lock(&bc->bc_lock);
	for (wr = bad; wr; wr = wr->next) {
		struct svc_bc_call *bq = rpcrdma_container_of(
			(struct rpcrdma_cqe *)(uintptr_t)wr->wr_id, struct svc_bc_call, bq_cqe);

		bq->bq_send_posted = false;
		bc->bc_sends--;
		svc_bc_end_locked(bc, bq, &ends[n++]);
	}
	pthread_mutex_unlock(&bc->bc_lock);
	svc_bc_report(ends, n, -ENOTCONN);
	svc_conn_disconnected(conn);
}

/* Serve @conn's queued calls. */
static void svc_bc_service(struct svc_conn *conn, struct rpcrdma_svc_bc *bc)
{
	if (conn->sx_closing) {
		svc_bc_end_all(bc, -ENOTCONN, true);
		return;
	}
	if (!bc->bc_ready && svc_bc_setup(conn, bc)) {
		/* Not now: the queued calls fail, later ones try again. */
		svc_bc_end_all(bc, -ENOBUFS, false);
		return;
	}
	svc_bc_send_queued(conn, bc);
}

void svc_bc_rdma_send(struct rpcrdma_svc_bc *bc)
{
	svc_bc_service(bc->bc_conn, bc);
}

void svc_bc_rdma_each(struct svc_group *grp, void (*fn)(struct rpcrdma_svc_bc *bc, void *arg),
		      void *arg)
{
	struct svc_conn *conn;

	for (conn = grp->gr_conns; conn; conn = conn->sx_next) {
		struct rpcrdma_svc_bc *bc = atomic_load(&conn->sx_bc);

		if (bc)
			fn(bc, arg);
	}
}

/* Every transport's connections with a backchannel, on @grp. */
static void svc_bc_each(struct svc_group *grp, void (*fn)(struct rpcrdma_svc_bc *bc, void *arg),
			void *arg)
{
	svc_rdma_class.xc_bc_each(grp, fn, arg);
	svc_tcp_class.xc_bc_each(grp, fn, arg);
}

/* After a call ended (a reply, a timeout): the next queued ones may go. */
static void svc_bc_more(struct rpcrdma_svc_bc *bc)
{
	if (bc->bc_conn) {
		if (bc->bc_ready && !bc->bc_conn->sx_closing)
			svc_bc_send_queued(bc->bc_conn, bc);
	} else if (bc->bc_tconn) {
		bc->bc_xprt->xc_bc_send(bc);
	}
}

static void svc_bc_poll_one(struct rpcrdma_svc_bc *bc, void *arg)
{
	(void)arg;
	if (atomic_exchange(&bc->bc_kicked, false))
		bc->bc_xprt->xc_bc_send(bc);
}

void svc_bc_poll(struct svc_group *grp)
{
	if (!atomic_exchange(&grp->gr_bc_kicks, 0))
		return;
	svc_bc_each(grp, svc_bc_poll_one, NULL);
}

static void svc_bc_expire_one(struct rpcrdma_svc_bc *bc, void *arg)
{
	uint64_t now_ms = *(const uint64_t *)arg;
	struct svc_bc_end ends[SVC_BC_SLOTS];
	unsigned n = 0, i;

	pthread_mutex_lock(&bc->bc_lock);
	for (i = 0; i < SVC_BC_SLOTS; i++) {
		struct svc_bc_call *bq = &bc->bc_calls[i];

		if ((bq->bq_state != BQ_QUEUED && bq->bq_state != BQ_SENT) ||
		    bq->bq_deadline_ms > now_ms)
			continue;
		if (bq->bq_state == BQ_QUEUED)
			svc_bc_unqueue(bc, bq);
		/* A reply that still comes is dropped as unknown. */
		svc_bc_end_locked(bc, bq, &ends[n++]);
	}
	pthread_mutex_unlock(&bc->bc_lock);
	if (!n)
		return;
	SVC_INC(bc->bc_svc, bc_timeouts, n);
	svc_bc_report(ends, n, -ETIMEDOUT);
	svc_bc_more(bc);
}

void svc_bc_expire(struct svc_group *grp, uint64_t now_ms)
{
	if (!atomic_load(&grp->gr_bc_pending))
		return;
	svc_bc_each(grp, svc_bc_expire_one, &now_ms);
}

void svc_bc_run(struct svc_group *grp)
{
	svc_bc_poll(grp);
	if (atomic_load(&grp->gr_bc_pending))
		svc_bc_expire(grp, svc_now_ms());
}

uint64_t svc_bc_deadline(struct rpcrdma_svc_bc *bc)
{
	uint64_t first = UINT64_MAX;
	uint32_t i;

	pthread_mutex_lock(&bc->bc_lock);
	for (i = 0; i < SVC_BC_SLOTS; i++) {
		const struct svc_bc_call *bq = &bc->bc_calls[i];

		if ((bq->bq_state == BQ_QUEUED || bq->bq_state == BQ_SENT) &&
		    bq->bq_deadline_ms < first)
			first = bq->bq_deadline_ms;
	}
	pthread_mutex_unlock(&bc->bc_lock);
	return first;
}

static void svc_bc_deadline_one(struct rpcrdma_svc_bc *bc, void *arg)
{
	uint64_t *first = arg, d = svc_bc_deadline(bc);

	if (d < *first)
		*first = d;
}

int svc_bc_timeout(struct svc_group *grp, int tmo)
{
	uint64_t now, first = UINT64_MAX;

	if (!atomic_load(&grp->gr_bc_pending))
		return tmo;
	svc_bc_each(grp, svc_bc_deadline_one, &first);
	if (first == UINT64_MAX)
		return tmo;
	now = svc_now_ms();
	first = first > now ? first - now + 1 : 0;
	if (tmo >= 0 && (uint64_t)tmo < first)
		return tmo;
	return first > 60000 ? 60000 : (int)first;
}

void svc_bc_reply(struct svc_call *cc, int rc)
{
	struct rpcrdma_svc *svc = cc->cc_svc;
	struct rpcrdma_svc_bc *bc = cc->cc_conn ? atomic_load(&cc->cc_conn->sx_bc)
						: atomic_load(svc_tcp_bc_slot(cc));
	const struct rpcrdma_rpc_msg *msg = &cc->cc_req.rq_msg;
	struct svc_bc_end end = { 0 };
	uint32_t i, grant;

	if (bc) {
		pthread_mutex_lock(&bc->bc_lock);
		for (i = 0; i < SVC_BC_SLOTS; i++) {
			struct svc_bc_call *bq = &bc->bc_calls[i];

			if (bq->bq_state != BQ_SENT || bq->bq_xid != msg->rm_xid)
				continue;
			svc_bc_end_locked(bc, bq, &end);
			/* RFC 8167 4.1: the reply's rdma_credit is the client's
			 * backchannel grant; 0 is not a valid grant (RFC 8166
			 * 3.3.1), read as 1.  TCP has no credits. */
			if (cc->cc_conn) {
				grant = cc->cc_hdr.rh_credits ? cc->cc_hdr.rh_credits : 1;
				bc->bc_credits = grant < SVC_BC_SLOTS ? grant : SVC_BC_SLOTS;
			}
			break;
		}
		pthread_mutex_unlock(&bc->bc_lock);
	}
	if (!end.be_done) {
		/* Not ours: no call of that xid waits (never sent, timed
		 * out, or ended with its connection). */
		if (svc->sv_cfg.sc_verbose)
			svc_log(svc, "conn %u: backchannel reply xid 0x%08x matches no call: dropped",
				cc->cc_conn ? cc->cc_conn->sx_id_num : svc_tcp_conn_id(cc),
				msg->rm_xid);
		SVC_INC(svc, bc_unmatched, 1);
		SVC_INC(svc, drops, 1);
		cc->cc_xprt->xc_release(cc);
		return;
	}
	SVC_INC(svc, bc_replies, 1);
	/* Held past the release of @cc, whose connection may go with it. */
	rpcrdma_svc_bc_hold(bc);
	if (rc) {
		end.be_done(end.be_arg, -EBADMSG, NULL, NULL, 0);
	} else if (msg->rm_reply_stat == RPC_MSG_ACCEPTED) {
		end.be_done(end.be_arg, 0, msg, cc->cc_call + msg->rm_hdr_len,
			    cc->cc_call_len - msg->rm_hdr_len);
	} else {
		end.be_done(end.be_arg, 0, msg, NULL, 0);
	}
	cc->cc_xprt->xc_release(cc);
	/* A credit came back: the next queued call may go. */
	svc_bc_more(bc);
	rpcrdma_svc_bc_put(bc);
}

bool svc_bc_rdma_error(struct svc_conn *conn, const uint8_t *buf, uint32_t len)
{
	struct rpcrdma_svc_bc *bc = atomic_load(&conn->sx_bc);
	struct svc_bc_end end = { 0 };
	uint32_t xid, i;

	/* xid, vers, credits, RDMA_ERROR, code: 20 bytes at least */
	if (!bc || len < RPCRDMA_ERR_CHUNK_BYTES || svc_bc_get32(buf + 12) != RDMA_ERROR)
		return false;
	xid = svc_bc_get32(buf);
	pthread_mutex_lock(&bc->bc_lock);
	for (i = 0; i < SVC_BC_SLOTS; i++) {
		struct svc_bc_call *bq = &bc->bc_calls[i];

		if (bq->bq_state == BQ_SENT && bq->bq_xid == xid) {
			svc_bc_end_locked(bc, bq, &end);
			break;
		}
	}
	pthread_mutex_unlock(&bc->bc_lock);
	if (!end.be_done)
		return false;
	svc_log(conn->sx_svc, "conn %u: backchannel call xid 0x%08x refused: RDMA_ERROR %u",
		conn->sx_id_num, xid, svc_bc_get32(buf + 16));
	SVC_INC(conn->sx_svc, bc_replies, 1);
	svc_bc_report(&end, 1, -EREMOTEIO);
	if (bc->bc_ready && !conn->sx_closing)
		svc_bc_send_queued(conn, bc);
	return true;
}

void svc_bc_send_complete(struct svc_conn *conn, struct rpcrdma_cqe *cqe,
			  const struct ibv_wc *wc)
{
	struct svc_bc_call *bq = rpcrdma_container_of(cqe, struct svc_bc_call, bq_cqe);
	struct rpcrdma_svc_bc *bc = bq->bq_bc;
	struct svc_bc_end end = { 0 };

	pthread_mutex_lock(&bc->bc_lock);
	bq->bq_send_posted = false;
	bc->bc_sends--;
	if (wc->status != IBV_WC_SUCCESS && bq->bq_state == BQ_SENT)
		svc_bc_end_locked(bc, bq, &end);
	else if (bq->bq_state == BQ_ENDED)
		bq->bq_state = BQ_FREE; /* the caller let go first */
	pthread_mutex_unlock(&bc->bc_lock);
	if (end.be_done)
		svc_bc_report(&end, 1, -ENOTCONN);
	if (conn->sx_closing)
		svc_conn_maybe_destroy(conn);
}

void svc_bc_conn_closing(struct svc_conn *conn)
{
	struct rpcrdma_svc_bc *bc = atomic_load(&conn->sx_bc);

	if (bc)
		svc_bc_end_all(bc, -ENOTCONN, true);
}

uint32_t rpcrdma_svc_bc_conn_id(const struct rpcrdma_svc_bc *bc)
{
	return bc->bc_conn_id;
}

bool svc_bc_busy(const struct svc_conn *conn)
{
	struct rpcrdma_svc_bc *bc = atomic_load(&conn->sx_bc);

	return bc && bc->bc_sends;
}

void svc_bc_conn_gone(struct svc_conn *conn)
{
	struct rpcrdma_svc_bc *bc = atomic_exchange(&conn->sx_bc, NULL);
	uint32_t i;
	unsigned left;

	if (!bc)
		return;
	svc_bc_end_all(bc, -ENOTCONN, true);
	for (i = 0; i < SVC_BC_SLOTS; i++)
		svc_buf_put(conn->sx_dev, &bc->bc_calls[i].bq_buf, false);
	/* Received (not reposted) Receives were counted as held: as the
	 * connection's own, they are all held once the connection closed. */
	if (conn->sx_closing && bc->bc_nrecvs)
		SVC_DEC(conn->sx_svc, recv_in_use, bc->bc_nrecvs);
	for (i = 0; i < bc->bc_nrecvs; i++)
		svc_buf_put(conn->sx_dev, &bc->bc_recvs[i].rc_mem, true);
	free(bc->bc_recvs);
	bc->bc_recvs = NULL;
	bc->bc_nrecvs = 0;
	pthread_mutex_lock(&bc->bc_lock);
	bc->bc_conn = NULL;
	left = --bc->bc_refs;
	pthread_mutex_unlock(&bc->bc_lock);
	if (!left)
		svc_bc_free(bc);
}

uint32_t svc_bc_take(struct rpcrdma_svc_bc *bc, uint8_t *dst, uint32_t cap)
{
	struct svc_bc_call *bq;
	uint32_t len = 0;

	pthread_mutex_lock(&bc->bc_lock);
	bq = bc->bc_qhead;
	if (bq && bc->bc_in_flight < bc->bc_credits && bq->bq_len <= cap) {
		bc->bc_qhead = bq->bq_next;
		if (!bc->bc_qhead)
			bc->bc_qtail = NULL;
		bq->bq_next = NULL;
		memcpy(dst, bq->bq_msg, bq->bq_len);
		len = bq->bq_len;
		free(bq->bq_msg);
		bq->bq_msg = NULL;
		bq->bq_state = BQ_SENT;
		bc->bc_in_flight++;
		SVC_INC(bc->bc_svc, bc_calls, 1);
	}
	pthread_mutex_unlock(&bc->bc_lock);
	return len;
}

void svc_bc_detach(struct rpcrdma_svc_bc *bc, bool gone)
{
	unsigned left;

	svc_bc_end_all(bc, -ENOTCONN, true);
	if (!gone)
		return;
	pthread_mutex_lock(&bc->bc_lock);
	bc->bc_tconn = NULL;
	left = --bc->bc_refs;
	pthread_mutex_unlock(&bc->bc_lock);
	if (!left)
		svc_bc_free(bc);
}
