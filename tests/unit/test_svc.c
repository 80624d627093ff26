// SPDX-License-Identifier: MIT
/*
 * test_svc.c - the Responder transport driven through the verbs seam.
 *
 * A fake device executes posted work requests against "remote" buffers
 * registered by handle: RDMA Read copies from them, RDMA Write copies to
 * them, a Send is captured.  Completions are queued and delivered when the
 * test polls, so the test controls their order and status.  Expected bytes
 * are worked out by hand from RFC 8166 and RFC 5531.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_words.h"

#include "svc/svc_internal.h"

/* ---------- the fake device ---------- */

#define MAX_REMOTE 8
#define MAX_CQ 512

struct remote {
	uint32_t handle;
	uint64_t base;
	uint8_t *mem;
	size_t len;
};

static struct {
	struct remote remote[MAX_REMOTE];
	unsigned nremote;
	struct ibv_wc cq[MAX_CQ];
	unsigned cq_head, cq_tail;
	uint64_t recv_wr_ids[MAX_CQ];
	unsigned nrecv_posted;   /* Receives posted since reset */
	unsigned nrecv_posts;    /* post_recv calls */
	uint8_t sent[65536];     /* the last Send's bytes */
	uint32_t sent_len;
	unsigned nsends, nreads, nwrites, nposts;
	int send_opcode;         /* the last Send's opcode and invalidated handle */
	uint32_t inv_rkey;
	enum ibv_wc_status read_status; /* status for RDMA Read completions */
	struct svc_conn *reenter;  /* deliver completions inside post_send */
	bool in_post;
	bool disconnected;
	struct ibv_mr mr;
} fk;

static struct remote *remote_find(uint32_t handle, uint64_t addr, size_t len)
{
	unsigned i;

	for (i = 0; i < fk.nremote; i++) {
		struct remote *r = &fk.remote[i];

		if (r->handle == handle && addr >= r->base && addr + len <= r->base + r->len)
			return r;
	}
	return NULL;
}

static void cq_push(uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op,
		    uint32_t len)
{
	struct ibv_wc *wc = &fk.cq[fk.cq_tail++ % MAX_CQ];

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr_id;
	wc->status = st;
	wc->opcode = op;
	wc->byte_len = len;
}

static int fk_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	(void)qp;
	(void)bad;
	fk.nposts++;
	for (; wr; wr = wr->next) {
		uint64_t raddr = wr->wr.rdma.remote_addr;
		int i;

		switch (wr->opcode) {
		case IBV_WR_RDMA_READ: {
			struct remote *r = remote_find(wr->wr.rdma.rkey, raddr, wr->sg_list[0].length);

			fk.nreads++;
			assert_int_equal(wr->num_sge, 1);
			assert_int_equal(wr->sg_list[0].lkey, fk.mr.lkey);
			if (r && fk.read_status == IBV_WC_SUCCESS)
				memcpy((void *)(uintptr_t)wr->sg_list[0].addr,
				       r->mem + (raddr - r->base), wr->sg_list[0].length);
			if (wr->send_flags & IBV_SEND_SIGNALED)
				cq_push(wr->wr_id, r ? fk.read_status : IBV_WC_REM_ACCESS_ERR,
					IBV_WC_RDMA_READ, 0);
			break;
		}
		case IBV_WR_RDMA_WRITE:
			fk.nwrites++;
			for (i = 0; i < wr->num_sge; i++) {
				struct remote *r = remote_find(wr->wr.rdma.rkey, raddr,
							       wr->sg_list[i].length);

				assert_non_null(r);
				memcpy(r->mem + (raddr - r->base),
				       (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
				raddr += wr->sg_list[i].length;
			}
			assert_false(wr->send_flags & IBV_SEND_SIGNALED);
			break;
		case IBV_WR_SEND:
		case IBV_WR_SEND_WITH_INV:
			fk.nsends++;
			fk.send_opcode = wr->opcode;
			fk.inv_rkey = wr->opcode == IBV_WR_SEND_WITH_INV ? wr->invalidate_rkey : 0;
			fk.sent_len = 0;
			for (i = 0; i < wr->num_sge; i++) {
				memcpy(fk.sent + fk.sent_len, (void *)(uintptr_t)wr->sg_list[i].addr,
				       wr->sg_list[i].length);
				fk.sent_len += wr->sg_list[i].length;
			}
			assert_true(wr->send_flags & IBV_SEND_SIGNALED);
			cq_push(wr->wr_id, IBV_WC_SUCCESS, IBV_WC_SEND, 0);
			break;
		default:
			fail_msg("unexpected opcode %d", wr->opcode);
		}
	}
	/* A provider that completes work before post returns. */
	if (fk.reenter && !fk.in_post) {
		fk.in_post = true;
		svc_conn_cq_event_poll(fk.reenter);
		fk.in_post = false;
	}
	return 0;
}

static int fk_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)qp;
	(void)bad;
	fk.nrecv_posts++;
	for (; wr; wr = wr->next)
		fk.recv_wr_ids[fk.nrecv_posted++ % MAX_CQ] = wr->wr_id;
	return 0;
}

static int fk_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	int got = 0;

	(void)cq;
	while (got < n && fk.cq_head != fk.cq_tail)
		wc[got++] = fk.cq[fk.cq_head++ % MAX_CQ];
	return got;
}

static struct ibv_mr *fk_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	(void)pd;
	(void)access;
	fk.mr.addr = addr;
	fk.mr.length = len;
	fk.mr.lkey = 0x1234;
	return &fk.mr;
}

static int fk_dereg_mr(struct ibv_mr *mr)
{
	assert_ptr_equal(mr, &fk.mr);
	return 0;
}

static int fk_disconnect(struct rdma_cm_id *id)
{
	(void)id;
	fk.disconnected = true;
	return 0;
}

static const struct rpcrdma_verbs_ops fk_ops = {
	.vo_post_send = fk_post_send,
	.vo_post_recv = fk_post_recv,
	.vo_poll_cq = fk_poll,
	.vo_reg_mr = fk_reg_mr,
	.vo_dereg_mr = fk_dereg_mr,
	.vo_disconnect = fk_disconnect,
};

/* ---------- a test program: 0x20000099 version 1 ---------- */

#define TPROG 0x20000099u
enum { TP_NULL = 0, TP_ECHO = 1, TP_ECHO_DDP = 2, TP_BIG = 3 };

static int tprog_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	const uint8_t *p;
	uint32_t len;
	uint8_t *dst;

	(void)arg;
	switch (req->rq_msg.rm_proc) {
	case TP_NULL:
		return RPCRDMA_SVC_SUCCESS;
	case TP_ECHO:
	case TP_ECHO_DDP:
		p = rpcrdma_xdr_get_opaque(&req->rq_args, 1u << 20, &len);
		if (!rpcrdma_xdr_ok(&req->rq_args))
			return RPCRDMA_SVC_GARBAGE_ARGS;
		if (req->rq_msg.rm_proc == TP_ECHO) {
			rpcrdma_xdr_put_opaque(&req->rq_res, p, len);
			return RPCRDMA_SVC_SUCCESS;
		}
		rpcrdma_xdr_put_u32(&req->rq_res, len);
		dst = rpcrdma_svc_ddp_begin(req, len);
		assert_non_null(dst);
		memcpy(dst, p, len);
		rpcrdma_svc_ddp_end(req, len);
		rpcrdma_xdr_put_u32(&req->rq_res, 0xc0ffee); /* after the data */
		return RPCRDMA_SVC_SUCCESS;
	case TP_BIG:
		dst = rpcrdma_xdr_reserve(&req->rq_res, 3000);
		memset(dst, 0x5a, 3000);
		return RPCRDMA_SVC_SUCCESS;
	default:
		return RPCRDMA_SVC_PROC_UNAVAIL;
	}
}

/* ---------- fixture ---------- */

struct fixture {
	struct rpcrdma_svc svc;
	struct svc_conn *conn;
	struct rdma_cm_id id;
	struct ibv_qp qp;
	struct ibv_pd pd;
};

static int setup(void **state)
{
	struct rpcrdma_svc_config cfg = {
		.sc_credits = 4,
		.sc_inline_size = 1024,
		.sc_max_payload = 65536,
		.sc_call_contexts = 2,
		.sc_threads = 1,
		.sc_log = stderr,
	};
	struct fixture *f = calloc(1, sizeof(*f));

	memset(&fk, 0, sizeof(fk));
	rpcrdma_verbs = &fk_ops;
	assert_int_equal(svc_init(&f->svc, &cfg), 0);
	assert_int_equal(rpcrdma_svc_register(&f->svc, TPROG, 1, tprog_dispatch, NULL), 0);
	assert_int_equal(rpcrdma_svc_register(&f->svc, TPROG, 1, tprog_dispatch, NULL), -EEXIST);
	f->id.qp = &f->qp;
	f->id.route.addr.dst_sin.sin_family = AF_INET;
	f->conn = calloc(1, sizeof(*f->conn));
	f->conn->sx_svc = &f->svc;
	f->conn->sx_id = &f->id;
	f->conn->sx_pd = &f->pd;
	f->conn->sx_credits = 4;
	f->conn->sx_inline_recv = 1024;
	f->conn->sx_inline_send = 1024;
	f->conn->sx_nrecvs = 4 + 8;
	f->conn->sx_ncalls = 2;
	assert_int_equal(svc_conn_alloc_pools(f->conn), 0);
	assert_int_equal(svc_conn_post_all_recvs(f->conn), 0);
	/* credits + 8 spare Receives, posted with one chained post */
	assert_int_equal(fk.nrecv_posted, 12);
	f->svc.sv_conns = f->conn;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f->svc.sv_nworkers)
		svc_workers_stop(&f->svc);
	if (f->conn) {
		f->conn->sx_id = NULL;
		f->conn->sx_pd = NULL;
		svc_conn_destroy(f->conn);
	}
	/* Every registered region went with its connection. */
	assert_int_equal(atomic_load(&f->svc.sv_ct.mrs_open), 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.mr_bytes), 0);
	close(f->svc.sv_wake_fd);
	free(f);
	rpcrdma_verbs = &rpcrdma_verbs_real;
	return 0;
}

/* ---------- message building ---------- */

/* Transport header fixed part: xid, vers, credits, proc (RFC 8166 4.2). */
static uint8_t *put_fixed(uint8_t *p, uint32_t xid, uint32_t vers, uint32_t credits,
			  uint32_t proc)
{
	p = put32(p, xid);
	p = put32(p, vers);
	p = put32(p, credits);
	return put32(p, proc);
}

/* An RDMA_MSG header with three empty chunk lists: 28 bytes. */
static uint8_t *put_msg_nochunks(uint8_t *p, uint32_t xid, uint32_t vers)
{
	p = put_fixed(p, xid, vers, 4, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	return put32(p, 0);
}

/* RPC call header, AUTH_NONE: 40 bytes (RFC 5531 9). */
static uint8_t *put_call(uint8_t *p, uint32_t xid, uint32_t prog, uint32_t vers,
			 uint32_t proc)
{
	p = put32(p, xid);
	p = put32(p, 0);
	p = put32(p, 2);
	p = put32(p, prog);
	p = put32(p, vers);
	p = put32(p, proc);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	return put32(p, 0);
}

static void add_remote(uint32_t handle, uint64_t base, uint8_t *mem, size_t len)
{
	fk.remote[fk.nremote++] = (struct remote){ handle, base, mem, len };
}

/* Fill the next posted Receive with @len bytes and queue its completion. */
static void queue_recv(struct fixture *f, const uint8_t *msg, uint32_t len)
{
	struct svc_recv *rc = NULL;
	uint32_t i;

	/* Any posted receive will do: take the first one the fake holds. */
	for (i = 0; i < f->conn->sx_nrecvs; i++) {
		struct svc_recv *c = &f->conn->sx_recvs[i];
		unsigned k;

		for (k = 0; k < fk.nrecv_posted && k < MAX_CQ; k++)
			if (fk.recv_wr_ids[k] == (uintptr_t)&c->rc_cqe) {
				fk.recv_wr_ids[k] = 0;
				rc = c;
				break;
			}
		if (rc)
			break;
	}
	assert_non_null(rc);
	memcpy(rc->rc_buf, msg, len);
	cq_push((uintptr_t)&rc->rc_cqe, IBV_WC_SUCCESS, IBV_WC_RECV, len);
}

/* Deliver @len bytes as the next Receive completion, then poll. */
static void deliver(struct fixture *f, const uint8_t *msg, uint32_t len)
{
	queue_recv(f, msg, len);
	svc_conn_cq_event_poll(f->conn);
}

/* Run queued calls on a worker and send their replies. */
static void run_workers(struct fixture *f)
{
	int i;

	if (!f->svc.sv_nworkers)
		assert_int_equal(svc_workers_start(&f->svc, 1), 0);
	for (i = 0; i < 2000; i++) {
		bool idle;

		pthread_mutex_lock(&f->svc.sv_wq_lock);
		idle = !f->svc.sv_wq_head && f->svc.sv_done_head;
		pthread_mutex_unlock(&f->svc.sv_wq_lock);
		if (idle)
			break;
		usleep(1000);
	}
	usleep(2000); /* let a worker finish a call it already took */
	svc_take_done(&f->svc);
	svc_conn_cq_event_poll(f->conn);
}

static void assert_baseline(struct fixture *f)
{
	assert_int_equal(f->conn->sx_calls_out, 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 0);
	assert_int_equal(f->conn->sx_recvs_posted, f->conn->sx_nrecvs);
}

/* ---------- tests ---------- */

/* An inline call gets an inline RDMA_MSG reply with our credit grant. */
static void test_inline_call(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p = msg;
	static const uint8_t want[] = {
		0, 0, 0, 0x42, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 0, /* xid vers credits MSG */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,             /* three empty lists */
		0xaa, 0xbb, 0xcc, 0xdd, 0, 0, 0, 1,             /* rpc xid, REPLY */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,             /* accepted, verf none */
		0, 0, 0, 0,                                     /* SUCCESS */
	};

	p = put32(p, 0x42);
	p = put32(p, 1);
	p = put32(p, 32); /* the Requester asks for 32; we grant 4 */
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put_call(p, 0xaabbccdd, TPROG, 1, TP_NULL);
	deliver(f, msg, (uint32_t)(p - msg));
	run_workers(f);
	assert_int_equal(fk.nsends, 1);
	assert_int_equal(fk.sent_len, sizeof(want));
	assert_memory_equal(fk.sent, want, sizeof(want));
	assert_baseline(f);
	assert_int_equal(atomic_load(&f->svc.sv_ct.replies_inline), 1);
}

/* Bad version: ERR_VERS (1, 1), 28 bytes, and the Receive goes back. */
static void test_bad_version(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[28], *p = msg;
	static const uint8_t want[] = {
		0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 4, /* xid vers credits ERROR */
		0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1,             /* ERR_VERS 1 1 */
	};

	p = put32(p, 7);
	p = put32(p, 2);
	p = put32(p, 1);
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	f->conn->sx_peer_rsi = true;
	deliver(f, msg, sizeof(msg));
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fk.send_opcode, IBV_WR_SEND); /* RDMA_ERROR never invalidates */
	assert_int_equal(fk.sent_len, sizeof(want));
	assert_memory_equal(fk.sent, want, sizeof(want));
	assert_baseline(f);
	assert_int_equal(atomic_load(&f->svc.sv_ct.rdma_errors_sent), 1);

	/* Three bytes: no xid to answer, dropped. */
	deliver(f, msg, 3);
	assert_int_equal(fk.nsends, 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.drops), 1);
	assert_baseline(f);
}

/*
 * A Read chunk of 5001 bytes (no pad on the wire) at position 44, the
 * reply too large for the 1024-byte inline threshold: it goes by RDMA
 * Write into the Reply chunk, with an RDMA_NOMSG header.
 */
static void test_read_chunk_and_reply_chunk(void **state)
{
	struct fixture *f = *state;
	static uint8_t data[5001], reply[8192];
	uint8_t msg[256], *p = msg, *rb;
	uint32_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	add_remote(0x99, 0x10000, data, sizeof(data));
	add_remote(0x77, 0x70000, reply, sizeof(reply));
	f->conn->sx_peer_rsi = true;

	p = put_fixed(p, 0x51, 1, 4, RDMA_MSG);
	p = put32(p, 1);                 /* Read list: one segment */
	p = put32(p, 44);                /* position: after header (40) + length word */
	p = put32(p, 0x99);
	p = put32(p, 5001);
	p = put32(p, 0);
	p = put32(p, 0x10000);
	p = put32(p, 0);                 /* end of Read list */
	p = put32(p, 0);                 /* no Write list */
	p = put32(p, 1);                 /* Reply chunk, one segment */
	p = put32(p, 1);
	p = put32(p, 0x77);
	p = put32(p, 8192);
	p = put32(p, 0);
	p = put32(p, 0x70000);
	p = put_call(p, 0x5151, TPROG, 1, TP_ECHO);
	p = put32(p, 5001);              /* the opaque's length; its bytes are in the chunk */
	deliver(f, msg, (uint32_t)(p - msg));
	/* One chain, one signalled completion, already queued by the fake. */
	assert_int_equal(fk.nreads, 1);
	svc_conn_cq_event_poll(f->conn);
	run_workers(f);

	/* Reply chunk: RPC reply (24) + length word + 5001 data + 3 pad = 5032. */
	assert_int_equal(get32(reply), 0x5151);
	assert_int_equal(get32(reply + 20), 0); /* SUCCESS */
	assert_int_equal(get32(reply + 24), 5001);
	assert_memory_equal(reply + 28, data, 5001);
	assert_int_equal(reply[28 + 5001], 0);
	/* Header: xid 0x51, MSG? no: NOMSG, empty lists, Reply chunk echo 5032 bytes. */
	assert_int_equal(fk.sent_len, 28 + 16 + 4);
	assert_int_equal(get32(fk.sent + 12), RDMA_NOMSG);
	assert_int_equal(get32(fk.sent + 16), 0);
	assert_int_equal(get32(fk.sent + 20), 0);
	assert_int_equal(get32(fk.sent + 24), 1);
	assert_int_equal(get32(fk.sent + 28), 1);
	assert_int_equal(get32(fk.sent + 32), 0x77);
	assert_int_equal(get32(fk.sent + 36), 5032);
	rb = fk.sent + 44;
	assert_int_equal(get32(rb), 0x70000);
	/* Two handles (0x99, 0x77): no single one to invalidate. */
	assert_int_equal(fk.send_opcode, IBV_WR_SEND);
	assert_baseline(f);
	assert_int_equal(atomic_load(&f->svc.sv_ct.rdma_read_bytes), 5001);
	assert_int_equal(atomic_load(&f->svc.sv_ct.replies_reply_chunk), 1);
}

/*
 * DDP-eligible result of 700 bytes into a Write chunk of two 512-byte
 * segments: written 512 + 188; the inline reply keeps the length word,
 * drops data and pad, and carries what follows.
 */
static void test_write_chunk(void **state)
{
	struct fixture *f = *state;
	static uint8_t wbuf[1024];
	uint8_t msg[1024], *p = msg, *s;
	uint32_t i;

	add_remote(0x55, 0x50000, wbuf, sizeof(wbuf));
	f->conn->sx_peer_rsi = true; /* the Requester accepts Send With Invalidate */
	p = put_fixed(p, 0x61, 1, 4, RDMA_MSG);
	p = put32(p, 0);                 /* no Read list */
	p = put32(p, 1);                 /* Write list: one chunk of two segments */
	p = put32(p, 2);
	p = put32(p, 0x55);
	p = put32(p, 512);
	p = put32(p, 0);
	p = put32(p, 0x50000);
	p = put32(p, 0x55);
	p = put32(p, 512);
	p = put32(p, 0);
	p = put32(p, 0x50200);
	p = put32(p, 0);                 /* end of Write list */
	p = put32(p, 0);                 /* no Reply chunk */
	p = put_call(p, 0x6161, TPROG, 1, TP_ECHO_DDP);
	p = put32(p, 700);
	for (i = 0; i < 700; i++)
		*p++ = (uint8_t)(i ^ 0x3c);
	deliver(f, msg, (uint32_t)(p - msg));
	run_workers(f);

	for (i = 0; i < 700; i++)
		assert_int_equal(wbuf[i], (uint8_t)(i ^ 0x3c));
	assert_int_equal(fk.nwrites, 2);
	/* header: 16 fixed + 4 (no Read) + 4+4+2*16 (chunk) + 4 (end) + 4 (no Reply) = 68 */
	s = fk.sent;
	assert_int_equal(get32(s + 12), RDMA_MSG);
	assert_int_equal(get32(s + 20), 1);
	assert_int_equal(get32(s + 24), 2);
	assert_int_equal(get32(s + 28), 0x55);
	assert_int_equal(get32(s + 32), 512);
	assert_int_equal(get32(s + 48), 188);
	assert_int_equal(get32(s + 56), 0x50200);
	assert_int_equal(get32(s + 60), 0);
	assert_int_equal(get32(s + 64), 0);
	/* body: RPC reply 24 + length word 700 + trailer word, no data */
	assert_int_equal(fk.sent_len, 68 + 24 + 4 + 4);
	assert_int_equal(get32(s + 68), 0x6161);
	assert_int_equal(get32(s + 92), 700);
	assert_int_equal(get32(s + 96), 0xc0ffee);
	/* Both segments carry handle 0x55: the reply invalidates it. */
	assert_int_equal(fk.send_opcode, IBV_WR_SEND_WITH_INV);
	assert_int_equal(fk.inv_rkey, 0x55);
	assert_baseline(f);
	assert_int_equal(atomic_load(&f->svc.sv_ct.rdma_write_bytes), 700);
}

/* A 3024-byte reply with no Reply chunk fits nowhere: ERR_CHUNK (4.5.3). */
static void test_reply_fits_nowhere(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p = msg;
	static const uint8_t want[] = {
		0, 0, 0, 0x71, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 2,
	};

	p = put_msg_nochunks(p, 0x71, 1);
	p = put_call(p, 0x7171, TPROG, 1, TP_BIG);
	deliver(f, msg, (uint32_t)(p - msg));
	run_workers(f);
	assert_int_equal(fk.sent_len, sizeof(want));
	assert_memory_equal(fk.sent, want, sizeof(want));
	assert_baseline(f);
}

/* Unknown program and unknown version are answered by the RPC layer. */
static void test_prog_unavail_mismatch(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p;

	p = msg;
	p = put_msg_nochunks(p, 0x81, 1);
	p = put_call(p, 0x8181, 100099, 1, 0);
	deliver(f, msg, (uint32_t)(p - msg));
	assert_int_equal(fk.sent_len, 28 + 24);
	assert_int_equal(get32(fk.sent + 28 + 20), RPCRDMA_SVC_PROG_UNAVAIL);

	p = msg + 28;
	p = put_call(p, 0x8282, TPROG, 7, 0);
	deliver(f, msg, (uint32_t)(p - msg));
	assert_int_equal(fk.sent_len, 28 + 32);
	assert_int_equal(get32(fk.sent + 28 + 20), RPCRDMA_SVC_PROG_MISMATCH);
	assert_int_equal(get32(fk.sent + 28 + 24), 1); /* low */
	assert_int_equal(get32(fk.sent + 28 + 28), 1); /* high */
	svc_conn_cq_event_poll(f->conn);
	assert_baseline(f);
}

/*
 * Back-pressure: with two call contexts, a third call waits (counted) and
 * is served when a context comes back.
 */
static void test_context_backpressure(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[128], *p;
	int i;

	for (i = 0; i < 3; i++) {
		p = msg;
		p = put_msg_nochunks(p, 0x90 + (uint32_t)i, 1);
		p = put_call(p, 0x9090 + (uint32_t)i, TPROG, 1, TP_NULL);
		deliver(f, msg, (uint32_t)(p - msg));
	}
	assert_int_equal(f->conn->sx_calls_out, 2);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_waits), 1);
	assert_non_null(f->conn->sx_wait_head);
	run_workers(f);  /* two replies; their Send completions free the contexts */
	run_workers(f);  /* the waiting call now runs */
	assert_int_equal(fk.nsends, 3);
	assert_int_equal(get32(fk.sent), 0x92);
	assert_baseline(f);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_high), 2);
}

/*
 * The Requester's handle cannot be read: the Read fails, the call is
 * dropped, the connection is disconnected, and once every Receive has
 * flushed the connection is ready to be freed with all pools at baseline.
 */
static void test_read_error_and_flush(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[256], *p = msg;
	uint32_t i;

	fk.read_status = IBV_WC_REM_ACCESS_ERR;
	p = put_fixed(p, 0xa1, 1, 4, RDMA_MSG);
	p = put32(p, 1);
	p = put32(p, 44);
	p = put32(p, 0xdead);
	p = put32(p, 100);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put_call(p, 0xa1a1, TPROG, 1, TP_ECHO);
	p = put32(p, 100);
	deliver(f, msg, (uint32_t)(p - msg));
	svc_conn_cq_event_poll(f->conn);
	assert_true(fk.disconnected);
	assert_true(f->conn->sx_closing);
	assert_int_equal(f->conn->sx_calls_out, 0);
	assert_int_equal(fk.nsends, 0);
	assert_false(f->conn->sx_reap);
	/* The QP is in error: every posted Receive flushes. */
	for (i = 0; i < f->conn->sx_nrecvs; i++) {
		struct svc_recv *rc = &f->conn->sx_recvs[i];
		unsigned k;

		for (k = 0; k < fk.nrecv_posted && k < MAX_CQ; k++)
			if (fk.recv_wr_ids[k] == (uintptr_t)&rc->rc_cqe) {
				fk.recv_wr_ids[k] = 0;
				cq_push((uintptr_t)&rc->rc_cqe, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
			}
	}
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(f->conn->sx_recvs_posted, 0);
	assert_true(f->conn->sx_reap);
	assert_int_equal(atomic_load(&f->svc.sv_ct.ctx_in_use), 0);
}

/*
 * Completions delivered inside post_send: the Read chunk's completion
 * dispatches the call before the post returns, and the Send completion
 * frees the context before its post returns.  Nothing may touch the
 * context after its last post.
 */
static void test_completion_inside_post(void **state)
{
	struct fixture *f = *state;
	static uint8_t data[200];
	uint8_t msg[256], *p = msg;
	uint32_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(255 - i);
	add_remote(0x42, 0x40000, data, sizeof(data));
	fk.reenter = f->conn;
	p = put_fixed(p, 0xc1, 1, 4, RDMA_MSG);
	p = put32(p, 1);
	p = put32(p, 44);
	p = put32(p, 0x42);
	p = put32(p, 200);
	p = put32(p, 0);
	p = put32(p, 0x40000);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put_call(p, 0xc1c1, TPROG, 1, TP_ECHO);
	p = put32(p, 200);
	deliver(f, msg, (uint32_t)(p - msg));
	/* The Read completed inside its post: the call is already queued. */
	assert_int_equal(fk.nreads, 1);
	assert_int_equal(f->conn->sx_calls[0].cc_state == CC_WORKING ||
			 f->conn->sx_calls[1].cc_state == CC_WORKING, 1);
	run_workers(f);
	/* Inline reply: 28 header + 24 RPC + 4 length + 200 data. */
	assert_int_equal(fk.sent_len, 28 + 24 + 4 + 200);
	assert_memory_equal(fk.sent + 56, data, 200);
	assert_baseline(f);
	fk.reenter = NULL;
}

/* Three calls completed in one poll: their Receives go back in one post. */
static void test_recv_refill_batched(void **state)
{
	struct fixture *f = *state;
	uint8_t msg[28], *p = msg;
	unsigned posts_before;
	int i;

	p = put32(p, 0xb1);
	p = put32(p, 9); /* ERR_VERS: answered without a worker */
	p = put32(p, 4);
	p = put32(p, RDMA_MSG);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	posts_before = fk.nrecv_posts;
	for (i = 0; i < 2; i++)
		queue_recv(f, msg, sizeof(msg));
	queue_recv(f, msg, 3); /* dropped: too short */
	svc_conn_cq_event_poll(f->conn);
	assert_int_equal(fk.nrecv_posts, posts_before + 1);
	assert_int_equal(atomic_load(&f->svc.sv_ct.recv_refills), 1);
	svc_conn_cq_event_poll(f->conn); /* Send completions */
	assert_int_equal(fk.nsends, 2);
	assert_baseline(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_inline_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_chunk_and_reply_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_fits_nowhere, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prog_unavail_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_context_backpressure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_error_and_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recv_refill_batched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_completion_inside_post, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
