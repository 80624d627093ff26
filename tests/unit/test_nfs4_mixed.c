// SPDX-License-Identifier: MIT
/*
 * test_nfs4_mixed.c - one NFSv4.1 session over both transports (issue
 * 36): a TCP connection (a socketpair handed to the TCP transport) and an
 * RDMA connection (the fake device) of the same server, the NFSv4.1
 * server registered on it as rpcrdma-nfsd registers it.  The Linux client
 * never mixes transports in one session, so the client here is the test:
 * it creates the session over one transport, binds a connection of the
 * other with BIND_CONN_TO_SESSION (RFC 8881 18.34), sends SEQUENCE on
 * both, and moves the back channel there: the CB_NULL probe (RFC 8881
 * 20.1) is answered on the newly bound connection, and SEQUENCE then
 * reports the callback path up (no SEQ4_STATUS_CB_PATH_DOWN, 18.46.3) on
 * either connection, also after the connection that had it closes, and
 * a CB_RECALL goes over the connection the back channel is on, its
 * CB_SEQUENCE sequence id carried across the move.
 *
 * And the back channel after the client reconnects (issue 38), over
 * either transport: the connection carrying it ends (the client closes
 * it, or the server's fault path does), the client connects again;
 * SEQUENCE on the new connection reports SEQ4_STATUS_CB_PATH_DOWN and
 * CB_PATH_DOWN_SESSION (RFC 8881 18.46.3) and no callback goes anywhere
 * until BIND_CONN_TO_SESSION moves the back channel there (18.34); the
 * recall of a delegation granted before the disconnect then comes on the
 * new connection with the next CB_SEQUENCE sequence id (2.10.6.1).
 *
 * Every expected value is from the RFCs: the COMPOUND layouts of RFC 8881
 * 18.34, 18.35, 18.36, 18.46 (constants written out below, not taken from
 * the server's headers), ONC RPC messages of RFC 5531 9 and 11 (record
 * marking), RPC-over-RDMA headers of RFC 8166 4.2 and the backchannel of
 * RFC 8167 4 and 5.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "fake_verbs.h"
#include "test_words.h"

#include "test_nfs4_harness.h"
#include "svc_tcp_fixture.h"

#include "nfs4/nfs4_deleg.h"
#include "svc/svc_bc.h"
#include "svc/svc_internal.h"
#include "svc/svc_xprt.h"

/* RFC 8881 values, written out */
#define X_OP_BIND_CONN 41u
#define X_OP_EXCHANGE_ID 42u
#define X_OP_CREATE_SESSION 43u
#define X_OP_DESTROY_SESSION 44u
#define X_OP_SEQUENCE 53u
#define X_CDFC4_BACK 0x2u
#define X_CDFC4_BACK_OR_BOTH 0x7u
#define X_CDFS4_BACK 0x2u
#define X_CDFS4_BOTH 0x3u
#define X_FLAG_CONN_BACK_CHAN 0x2u
#define X_SEQ4_PATH_DOWN 0x1u
#define X_SEQ4_PATH_DOWN_SESSION 0x200u
#define X_CB_PROG 0x40000000u /* csa_cb_program of c_create_session() */

enum via { VIA_TCP, VIA_RDMA };

/* Every Send the fake device executed, in order (the backchannel's calls
 * and the forward replies on the RDMA connection). */
#define SENDS_MAX 64
struct sends {
	unsigned n;
	uint32_t len[SENDS_MAX];
	uint8_t msg[SENDS_MAX][1024];
};

struct fixture {
	struct env *e;
	struct rpcrdma_svc svc;
	struct svc_conn *conn;         /* the RDMA connection (fake device) */
	struct rdma_cm_id id;
	struct ibv_qp qp;
	struct ibv_pd pd;
	int peer;                      /* the client's end of the TCP connection */
	uint32_t tcp_conn_id;
	struct sends sends;
	unsigned sends_seen;           /* of those, read by the test */
	uint32_t xid;
};

static bool on_send(const uint8_t *msg, uint32_t len, const struct fv_wr *wr, void *arg)
{
	struct sends *s = arg;

	(void)wr;
	assert_true(s->n < SENDS_MAX);
	assert_true(len <= sizeof(s->msg[0]));
	memcpy(s->msg[s->n], msg, len);
	s->len[s->n++] = len;
	return false;
}

/* 127.0.0.1, the address the exports allow */
static struct sockaddr_in loopback(void)
{
	struct sockaddr_in lo = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	return lo;
}

/* A new RDMA connection on the fake device (its QP fresh), numbered as an
 * accepted one is, with its Receives posted: f->conn. */
static void connect_rdma(struct fixture *f)
{
	struct svc_group *grp = &f->svc.sv_groups[0];

	fv_qp_reset();
	f->id.qp = &f->qp;
	f->id.route.addr.dst_sin = loopback();
	f->conn = calloc(1, sizeof(*f->conn));
	assert_non_null(f->conn);
	f->conn->sx_svc = &f->svc;
	f->conn->sx_grp = grp;
	f->conn->sx_id = &f->id;
	f->conn->sx_id_num = atomic_fetch_add(&f->svc.sv_conn_ids, 1) + 1;
	f->conn->sx_dev = svc_dev_get(grp, NULL, &f->pd);
	assert_non_null(f->conn->sx_dev);
	f->conn->sx_credits = 8;
	f->conn->sx_max_credits = 8;
	f->conn->sx_inline_recv = 1024;
	f->conn->sx_inline_send = 1024;
	assert_int_equal(svc_conn_alloc_pools(f->conn), 0);
	assert_int_equal(svc_conn_post_all_recvs(f->conn), 0);
	grp->gr_conns = f->conn;
}

/* A new TCP connection (a socketpair, from 127.0.0.1 as the exports
 * want): f->peer is the client's end. */
static void connect_tcp(struct fixture *f)
{
	struct svc_group *grp = &f->svc.sv_groups[0];
	struct sockaddr_in lo = loopback();
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(svc_tcp_adopt(grp, sv[0], (const struct sockaddr *)&lo), 0);
	f->peer = sv[1];
	assert_non_null(grp->gr_tconns);
	f->tcp_conn_id = atomic_load(&f->svc.sv_conn_ids);
}

static int setup(void **state)
{
	struct rpcrdma_svc_config cfg = {
		.sc_transport_threads = 1,
		.sc_credits = 8,
		.sc_inline_size = 1024,
		.sc_max_payload = 65536,
		.sc_call_contexts = 2,
		.sc_small_contexts = 8,
		.sc_threads = 1,
		.sc_memory = 64u << 20,
		.sc_max_connections = 8,
		.sc_log = stderr,
	};
	struct fixture *f = calloc(1, sizeof(*f));
	void *st = (void *)&t4_memory;

	assert_non_null(f);
	/* the server of the harness, with the real back channel (the
	 * service's handles) instead of its none */
	assert_int_equal(t4_setup(&st, "rw,no_root_squash"), 0);
	f->e = st;
	assert_non_null(f->e);
	nfs4_cb_table_destroy(f->e->srv4->s4_cb);
	assert_int_equal(nfs4_cb_table_create(NULL, &f->e->srv4->s4_sizes,
					      &f->e->srv4->s4_cb), 0);
	nfs4_cb_set_live(f->e->srv4->s4_cb, nfs4_state_session_live, f->e->srv4->s4_state);

	fv_reset();
	fv.fv_on_send = on_send;
	fv.fv_on_send_arg = &f->sends;
	assert_int_equal(svc_init(&f->svc, &cfg), 0);
	assert_int_equal(rpcrdma_svc_register(&f->svc, 100003, 4,
					      rpcrdma_nfs4_server_dispatch, f->e->srv4), 0);
	rpcrdma_svc_set_conn_state(&f->svc, rpcrdma_nfs4_server_conn_has_state, f->e->srv4);
	connect_rdma(f);
	connect_tcp(f);
	f->xid = 0x100;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	struct svc_group *grp = &f->svc.sv_groups[0];
	void *st = f->e;

	/* the connections first: a callback still out ends (-ENOTCONN)
	 * while its table lives; then the server lets go of its handles */
	if (f->peer >= 0)
		close(f->peer);
	svc_tcp_class.xc_close_all(grp);
	svc_tcp_reap(grp);
	f->conn->sx_id = NULL;
	svc_conn_destroy(f->conn);
	t4_teardown(&st);
	assert_int_equal(atomic_load(&f->svc.sv_ct.tcp_calls_in_use), 0);
	assert_int_equal(atomic_load(&f->svc.sv_ct.buf_bytes_in_use), 0);
	assert_int_equal(atomic_load(&grp->gr_bc_pending), 0);
	svc_dev_destroy_all(grp);
	svc_fini(&f->svc);
	fv_uninstall();
	free(f);
	return 0;
}

/* One turn of group 0's run loop: TCP events, the RDMA connection's
 * completions, the workers (here), the done queue, the backchannel. */
static void pump(struct fixture *f, int ms)
{
	struct svc_group *grp = &f->svc.sv_groups[0];
	struct epoll_event evs[8];
	int n;

	n = epoll_wait(grp->gr_epoll, evs, 8, ms);
	for (int i = 0; i < n; i++)
		if (svc_tcp_is_tag(evs[i].data.ptr))
			svc_tcp_event(grp, evs[i].data.ptr, evs[i].events);
	svc_conn_cq_event_poll(f->conn);
	while (svc_worker_run_one(grp))
		;
	svc_take_done(grp);
	svc_conn_cq_event_poll(f->conn);
	svc_bc_run(grp);
	svc_conn_cq_event_poll(f->conn);
	svc_tcp_reap(grp);
}

/* ---- messages ---- */

/* RFC 5531 9 call header: NFS (100003) version 4 COMPOUND (1), AUTH_SYS
 * (uid 0, gid 0, machine "t", no groups), AUTH_NONE verifier: 64 bytes. */
static uint8_t *put_call_hdr(uint8_t *p, uint32_t xid)
{
	const uint32_t w[] = { xid, 0, 2, 100003, 4, 1,
			       1, 24, 0, 1, 0x74000000, 0, 0, 0,
			       0, 0 };

	for (size_t i = 0; i < sizeof(w) / 4; i++)
		p = put32(p, w[i]);
	return p;
}

/* RFC 8166 4.2: RDMA_MSG (0) with three empty chunk lists, granting
 * @credits: 28 bytes. */
static uint8_t *put_rdma_hdr(uint8_t *p, uint32_t xid, uint32_t credits)
{
	p = put32(p, xid);
	p = put32(p, 1);
	p = put32(p, credits);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	return put32(p, 0);
}

/* One record, one last fragment (RFC 5531 11). */
static void tcp_send_record(struct fixture *f, const uint8_t *rec, size_t len)
{
	uint8_t mark[4];

	put32(mark, 0x80000000u | (uint32_t)len);
	tcp_write_all(f->peer, mark, 4);
	tcp_write_all(f->peer, rec, len);
}

/* Pump until @n bytes came from the server's end of the TCP connection
 * (or 2 s).  Return: bytes read. */
static size_t tcp_read(struct fixture *f, uint8_t *buf, size_t n)
{
	size_t got = 0;

	for (int t = 0; t < 400 && got < n; t++) {
		ssize_t r = recv(f->peer, buf + got, n - got, MSG_DONTWAIT);

		if (r == 0)
			break;
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		pump(f, 5);
	}
	return got;
}

/* The next record from the server (one fragment, as it sends them) into
 * @buf (@cap bytes).  Return: its length. */
static uint32_t tcp_next_record(struct fixture *f, uint8_t *buf, size_t cap)
{
	uint8_t mark[4];
	uint32_t len;

	assert_int_equal(tcp_read(f, mark, 4), 4);
	assert_true(get32(mark) & 0x80000000u);
	len = get32(mark) & 0x7fffffffu;
	assert_true(len <= cap);
	assert_int_equal(tcp_read(f, buf, len), len);
	return len;
}

/* Nothing more came on the TCP connection after a few turns. */
static void tcp_expect_quiet(struct fixture *f)
{
	uint8_t b[4];

	for (int t = 0; t < 5; t++)
		pump(f, 2);
	assert_int_equal(recv(f->peer, b, sizeof(b), MSG_DONTWAIT), -1);
}

/* The next Send the test has not read yet (pumping up to 2 s for it). */
static const uint8_t *rdma_next_send(struct fixture *f, uint32_t *len)
{
	for (int t = 0; t < 400 && f->sends_seen == f->sends.n; t++)
		pump(f, 5);
	assert_true(f->sends_seen < f->sends.n);
	*len = f->sends.len[f->sends_seen];
	return f->sends.msg[f->sends_seen++];
}

/*
 * Send the COMPOUND built in e->c (c_begin() and the t_ helpers) over
 * @via, and put its COMPOUND4res into e->c.res for the r_ helpers.  The
 * reply is checked as RFC 5531 9 says (accepted, AUTH_NONE verifier,
 * SUCCESS) and, over RDMA, RFC 8166 4.2 (RDMA_MSG, no chunks).
 */
static void run_on(struct fixture *f, enum via via)
{
	struct t_call *c = &f->e->c;
	uint8_t msg[8192 + 128], *p = msg, rec[8192];
	const uint8_t *rep;
	uint32_t xid = f->xid++, len;

	if (via == VIA_RDMA)
		p = put_rdma_hdr(p, xid, 8);
	p = put_call_hdr(p, xid);
	memcpy(p, c->args, c->alen);
	p += c->alen;
	if (via == VIA_TCP) {
		tcp_send_record(f, msg, (size_t)(p - msg));
		len = tcp_next_record(f, rec, sizeof(rec));
		rep = rec;
	} else {
		assert_int_equal(fv_deliver(msg, (uint32_t)(p - msg)), 0);
		rep = rdma_next_send(f, &len);
		assert_true(len >= 28);
		assert_int_equal(get32(rep), xid);
		assert_int_equal(get32(rep + 4), 1);
		assert_int_equal(get32(rep + 12), 0);  /* RDMA_MSG */
		assert_int_equal(get32(rep + 16), 0);
		assert_int_equal(get32(rep + 20), 0);
		assert_int_equal(get32(rep + 24), 0);
		rep += 28;
		len -= 28;
	}
	assert_true(len >= 24);
	assert_int_equal(get32(rep), xid);
	assert_int_equal(get32(rep + 4), 1);   /* REPLY */
	assert_int_equal(get32(rep + 8), 0);   /* MSG_ACCEPTED */
	assert_int_equal(get32(rep + 12), 0);  /* verifier AUTH_NONE */
	assert_int_equal(get32(rep + 16), 0);
	assert_int_equal(get32(rep + 20), 0);  /* SUCCESS */
	memcpy(c->res, rep + 24, len - 24);
	c->rlen = len - 24;
	c->rpos = 0;
}

/* EXCHANGE_ID of client owner @owner and CREATE_SESSION (asking for the
 * back channel on this connection, CREATE_SESSION4_FLAG_CONN_BACK_CHAN)
 * over @via: e->clientid, e->sid; the csa_sequence it used. */
static uint32_t session_of_on(struct fixture *f, enum via via, const char *owner)
{
	struct env *e = f->e;
	struct t_call *c = &e->c;
	uint32_t seq, n, len;

	c_begin(e, 1, 1);
	t_u32(c, X_OP_EXCHANGE_ID);
	t_u32(c, 0x11111111);
	t_u32(c, 0x22222222);
	t_str(c, owner);
	t_u32(c, 0);
	t_u32(c, 0);            /* SP4_NONE */
	t_u32(c, 0);
	run_on(f, via);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	assert_int_equal(r_op(c, X_OP_EXCHANGE_ID), NFS4_OK);
	e->clientid = r_u64(c);
	seq = r_u32(c);

	c_create_session(e, e->clientid, seq);
	run_on(f, via);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	assert_int_equal(r_op(c, X_OP_CREATE_SESSION), NFS4_OK);
	memcpy(e->sid, c->res + c->rpos, 16);
	r_skip(c, 16);
	assert_int_equal(r_u32(c), seq);
	/* the back channel granted on this connection (RFC 8881 18.36.3),
	 * persistence not */
	assert_int_equal(r_u32(c), X_FLAG_CONN_BACK_CHAN);
	(void)r_opaque(c, &len);
	e->seq = 1;
	return seq;
}

/* session_of_on() of the owner every test but one uses */
static void session_on(struct fixture *f, enum via via)
{
	(void)session_of_on(f, via, "mixed-transports");
}

/* SEQUENCE alone (slot 0) over @via: its sr_status_flags. */
static uint32_t sequence_on(struct fixture *f, enum via via)
{
	struct env *e = f->e;
	uint32_t n;

	c_begin(e, 1, 1);
	c_sequence(e, e->seq, 0);
	run_on(f, via);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_int_equal(n, 1);
	assert_int_equal(r_op(&e->c, X_OP_SEQUENCE), NFS4_OK);
	assert_memory_equal(e->c.res + e->c.rpos, e->sid, 16);
	r_skip(&e->c, 16);
	assert_int_equal(r_u32(&e->c), e->seq);
	assert_int_equal(r_u32(&e->c), 0); /* slot */
	(void)r_u32(&e->c);
	(void)r_u32(&e->c);
	e->seq++;
	return r_u32(&e->c);
}

/* BIND_CONN_TO_SESSION (RFC 8881 18.34) of this session over @via with
 * direction @dir: the status; on NFS4_OK the direction granted in *@got. */
static uint32_t bind_on(struct fixture *f, enum via via, uint32_t dir, uint32_t *got)
{
	struct env *e = f->e;
	uint32_t n, status;

	c_begin(e, 1, 1);
	t_u32(&e->c, X_OP_BIND_CONN);
	c_fixed(&e->c, e->sid, 16);
	t_u32(&e->c, dir);
	t_u32(&e->c, 0);       /* bctsa_use_conn_in_rdma_mode: false */
	run_on(f, via);
	(void)r_hdr(&e->c, &n);
	assert_int_equal(n, 1);
	status = r_op(&e->c, X_OP_BIND_CONN);
	if (status == NFS4_OK) {
		assert_memory_equal(e->c.res + e->c.rpos, e->sid, 16);
		r_skip(&e->c, 16);
		*got = r_u32(&e->c);
		assert_int_equal(r_u32(&e->c), 0); /* bctsr_use_conn_in_rdma_mode */
	}
	return status;
}

/* The CB_NULL probe (RFC 8881 20.1: program csa_cb_program, version 1,
 * procedure 0, AUTH_NONE as the session asked) as RFC 5531 9 lays it out
 * in @m (@len bytes): its xid. */
static uint32_t expect_cb_null(const uint8_t *m, uint32_t len)
{
	const uint32_t w[] = { 0 /* CALL */, 2, X_CB_PROG, 1, 0, 0, 0, 0, 0 };

	assert_int_equal(len, 40);
	for (unsigned i = 0; i < 9; i++)
		assert_int_equal(get32(m + 4 + 4 * i), w[i]);
	return get32(m);
}

/* The probe on the TCP connection, answered there (void result). */
static void answer_probe_tcp(struct fixture *f)
{
	uint8_t rec[256], rep[24], *p = rep;
	uint32_t xid = expect_cb_null(rec, tcp_next_record(f, rec, sizeof(rec)));

	p = put32(p, xid);
	p = put32(p, 1);
	for (int i = 0; i < 4; i++)
		p = put32(p, 0);
	tcp_send_record(f, rep, sizeof(rep));
}

/* The probe on the RDMA connection (RFC 8167 5.1: RDMA_MSG, credit
 * field the server's backchannel requests), answered there granting 2
 * backchannel credits (RFC 8167 4.1). */
static void answer_probe_rdma(struct fixture *f)
{
	uint8_t rep[64], *p = rep;
	uint32_t len, xid;
	const uint8_t *m = rdma_next_send(f, &len);

	assert_true(len == 28 + 40);
	assert_int_equal(get32(m + 4), 1);
	assert_int_equal(get32(m + 12), 0);
	xid = expect_cb_null(m + 28, len - 28);
	assert_int_equal(get32(m), xid);
	p = put_rdma_hdr(p, xid, 2);
	p = put32(p, xid);
	p = put32(p, 1);
	for (int i = 0; i < 4; i++)
		p = put32(p, 0);
	assert_int_equal(fv_deliver(rep, (uint32_t)(p - rep)), 0);
}

/* Pump until the server saw @n probes answered. */
static void wait_probes_ok(struct fixture *f, uint64_t n)
{
	struct nfs4_cb_counts cc = { 0 };

	for (int t = 0; t < 400; t++) {
		nfs4_cb_counts(f->e->srv4->s4_cb, &cc);
		if (cc.cc_probe_ok >= n)
			break;
		pump(f, 5);
	}
	assert_int_equal(cc.cc_probe_ok, n);
	assert_int_equal(cc.cc_failures, 0);
}

static bool has_state(struct fixture *f, uint32_t conn_id)
{
	return rpcrdma_nfs4_server_conn_has_state(conn_id, f->e->srv4);
}

/* ---- CB_RECALL on the bound connection ---- */

static int g_recall_status = 1;
static unsigned g_recalls_done;

static void recall_done(void *arg, int status)
{
	(void)arg;
	g_recall_status = status;
	g_recalls_done++;
}

/*
 * The CB_RECALL of delegation stateid @st of the handle @fh (@fhlen bytes,
 * a multiple of 4 here) comes over @via, where the back channel is, as
 * CB_COMPOUND (RFC 8881 20.2, 20.9, 16.2.2: callback program version 1
 * procedure 1, AUTH_NONE) with CB_SEQUENCE on slot 0 and sequence id
 * @seqid; the client answers NFS4_OK to both.
 */
static void expect_recall(struct fixture *f, enum via via, uint32_t seqid,
			  const struct nfs4_stateid *st, const uint8_t *fh, uint32_t fhlen)
{
	const uint32_t call[] = { 0, 2, X_CB_PROG, 1, 1, 0, 0, 0, 0 };
	uint8_t rec[512], rep[256], *p = rep;
	const uint8_t *m;
	uint32_t len, xid, w[64], nw = 0;

	/* tag, minor, ident, 2 ops; CB_SEQUENCE (11): the session, @seqid,
	 * slot 0, highest 0, no cache, no referring calls; CB_RECALL (4):
	 * the stateid, truncate false, the handle */
	w[nw++] = 0;
	w[nw++] = 1;
	w[nw++] = 0;
	w[nw++] = 2;
	w[nw++] = 11;
	for (int i = 0; i < 4; i++)
		w[nw++] = get32(f->e->sid + 4 * i);
	w[nw++] = seqid;
	for (int i = 0; i < 4; i++)
		w[nw++] = 0;
	w[nw++] = 4;
	w[nw++] = st->si_seqid;
	for (int i = 0; i < 3; i++)
		w[nw++] = get32(st->si_other + 4 * i);
	w[nw++] = 0;
	w[nw++] = fhlen;
	assert_int_equal(fhlen % 4, 0);
	for (uint32_t i = 0; i < fhlen / 4; i++)
		w[nw++] = get32(fh + 4 * i);
	if (via == VIA_TCP) {
		len = tcp_next_record(f, rec, sizeof(rec));
		m = rec;
	} else {
		m = rdma_next_send(f, &len);
		assert_true(len > 28);
		assert_int_equal(get32(m + 12), 0); /* RDMA_MSG */
		m += 28;
		len -= 28;
	}
	assert_int_equal(len, 40 + 4 * nw);
	for (unsigned i = 0; i < 9; i++)
		assert_int_equal(get32(m + 4 + 4 * i), call[i]);
	for (unsigned i = 0; i < nw; i++)
		assert_int_equal(get32(m + 40 + 4 * i), w[i]);
	xid = get32(m);
	if (via == VIA_RDMA)
		p = put_rdma_hdr(p, xid, 2);
	p = put32(p, xid);
	p = put32(p, 1);
	for (int i = 0; i < 4; i++)
		p = put32(p, 0);
	/* CB_COMPOUND4res: NFS4_OK, empty tag, CB_SEQUENCE4resok, CB_RECALL OK */
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 2);
	p = put32(p, 11);
	p = put32(p, 0);
	memcpy(p, f->e->sid, 16);
	p += 16;
	p = put32(p, seqid);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 4);
	p = put32(p, 0);
	if (via == VIA_TCP)
		tcp_send_record(f, rep, (size_t)(p - rep));
	else
		assert_int_equal(fv_deliver(rep, (uint32_t)(p - rep)), 0);
}

/*
 * A CB_RECALL of a made-up delegation stateid (seqid 1, other 0x10..0x1b)
 * and an 8-byte handle "abcdefgh" goes out over @via, where the back
 * channel is, with sequence id @seqid; the client answers NFS4_OK and the
 * server's callback is told NFS4_OK.
 */
static void recall_over(struct fixture *f, enum via via, uint32_t seqid)
{
	struct nfs4_stateid st = { .si_seqid = 1 };
	const uint8_t fh[8] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h' };
	unsigned done = g_recalls_done;

	for (int i = 0; i < 12; i++)
		st.si_other[i] = (uint8_t)(0x10 + i);
	assert_int_equal(nfs4_cb_recall(f->e->srv4->s4_cb, f->e->clientid, &st, false,
					fh, sizeof(fh), recall_done, NULL), 0);
	expect_recall(f, via, seqid, &st, fh, sizeof(fh));
	for (int t = 0; t < 400 && g_recalls_done == done; t++)
		pump(f, 5);
	assert_int_equal(g_recalls_done, done + 1);
	assert_int_equal(g_recall_status, NFS4_OK);
}

/* The CB_NULL probe over @via, answered there. */
static void answer_probe(struct fixture *f, enum via via)
{
	if (via == VIA_TCP)
		answer_probe_tcp(f);
	else
		answer_probe_rdma(f);
}

/* Nothing more came over @via after a few turns. */
static void expect_quiet(struct fixture *f, enum via via)
{
	if (via == VIA_TCP) {
		tcp_expect_quiet(f);
		return;
	}
	for (int t = 0; t < 5; t++)
		pump(f, 2);
	assert_int_equal(f->sends.n, f->sends_seen);
}

static struct nfs4_cb_counts cb_counts(struct fixture *f)
{
	struct nfs4_cb_counts cc;

	nfs4_cb_counts(f->e->srv4->s4_cb, &cc);
	return cc;
}

/* ---- tests ---- */

static enum via other_via(enum via via)
{
	return via == VIA_TCP ? VIA_RDMA : VIA_TCP;
}

static uint32_t conn_id_of(struct fixture *f, enum via via)
{
	return via == VIA_TCP ? f->tcp_conn_id : f->conn->sx_id_num;
}

/* The session is made over @via with its back channel there: the probe
 * comes and is answered there, the other connection has no back channel,
 * SEQUENCE over @via reports the path up. */
static void start_session(struct fixture *f, enum via via)
{
	session_on(f, via);
	answer_probe(f, via);
	wait_probes_ok(f, 1);
	assert_true(has_state(f, conn_id_of(f, via)));
	assert_false(has_state(f, conn_id_of(f, other_via(via))));
	assert_int_equal(sequence_on(f, via), 0);
}

/*
 * The back channel moves to the connection over @to: BIND_CONN_TO_SESSION
 * asking @dir (CDFC4_BACK: CDFS4_BACK granted; CDFC4_BACK_OR_BOTH:
 * CDFS4_BOTH), the CB_NULL probe comes there (the server's @probes-th
 * answered one) and nothing on the other connection; SEQUENCE on both
 * reports the path up; a CB_RECALL goes over @to with CB_SEQUENCE id
 * @seqid, nothing over the other.
 */
static void move_back_channel(struct fixture *f, enum via to, uint32_t dir, uint64_t probes,
			      uint32_t seqid)
{
	enum via other = other_via(to);
	uint32_t got = 0;

	assert_int_equal(bind_on(f, to, dir, &got), NFS4_OK);
	assert_int_equal(got, dir == X_CDFC4_BACK ? X_CDFS4_BACK : X_CDFS4_BOTH);
	answer_probe(f, to);
	wait_probes_ok(f, probes);
	expect_quiet(f, other);
	assert_true(has_state(f, conn_id_of(f, to)));
	assert_false(has_state(f, conn_id_of(f, other)));
	assert_int_equal(sequence_on(f, to), 0);
	assert_int_equal(sequence_on(f, other), 0);
	recall_over(f, to, seqid);
	expect_quiet(f, other);
}

/*
 * The session is made over TCP with its back channel there; an RDMA
 * connection sends SEQUENCE (bound to the fore channel by it, RFC 8881
 * 2.10.3.1), then BIND_CONN_TO_SESSION asking for the back channel or
 * both: CDFS4_BOTH, the CB_NULL probe comes on the RDMA connection and
 * nothing on TCP; SEQUENCE on both reports the path up.  The TCP
 * connection then closes: the back channel on RDMA is not touched.
 */
static void test_tcp_session_binds_rdma(void **state)
{
	struct fixture *f = *state;
	struct svc_group *grp = &f->svc.sv_groups[0];

	start_session(f, VIA_TCP);
	assert_int_equal(sequence_on(f, VIA_RDMA), 0);
	recall_over(f, VIA_TCP, 1);
	move_back_channel(f, VIA_RDMA, X_CDFC4_BACK_OR_BOTH, 2, 2);

	/* the TCP connection goes: the path (on RDMA) stays up */
	close(f->peer);
	f->peer = -1;
	for (int t = 0; t < 400 && grp->gr_tconns; t++)
		pump(f, 5);
	assert_null(grp->gr_tconns);
	assert_int_equal(sequence_on(f, VIA_RDMA), 0);
	assert_true(has_state(f, f->conn->sx_id_num));
	recall_over(f, VIA_RDMA, 3);
}

/*
 * The other way: made over RDMA with the back channel there, a TCP
 * connection binds for the back channel only (CDFC4_BACK: CDFS4_BACK) as
 * its first COMPOUND, the probe comes over TCP, answered there; SEQUENCE
 * on both reports the path up; then back to RDMA (CDFC4_BACK_OR_BOTH),
 * the probe over RDMA.  The back channel's slot table is the session's,
 * whichever connection carries it: its sequence id goes on (RFC 8881
 * 2.10.6.1).
 */
static void test_rdma_session_binds_tcp(void **state)
{
	struct fixture *f = *state;

	start_session(f, VIA_RDMA);
	move_back_channel(f, VIA_TCP, X_CDFC4_BACK, 2, 1);
	move_back_channel(f, VIA_RDMA, X_CDFC4_BACK_OR_BOTH, 3, 2);
}

/* ---- the client's connection goes, and a new one comes ---- */

/* How a connection ends. */
enum drop {
	DROP_CLIENT, /* the client closes it (RDMA: DISCONNECTED; TCP: EOF) */
	DROP_SERVER, /* the server ends it (RDMA: a Receive completes in error;
		      * TCP: a record mark over the size limit) */
};

/* The RDMA connection ends (@how) and is freed once its Receives flushed,
 * as the run loop frees it. */
static void drop_rdma(struct fixture *f, enum drop how)
{
	struct svc_group *grp = &f->svc.sv_groups[0];

	if (how == DROP_CLIENT) {
		svc_conn_cm_event(&f->svc, f->conn, RDMA_CM_EVENT_DISCONNECTED);
	} else {
		struct ibv_recv_wr *wr = fv_take_recv();

		fv_push(wr->wr_id, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, 1);
		pump(f, 0);
	}
	assert_true(f->conn->sx_closing);
	fv_qp_to_error(); /* what the disconnect does to a real QP */
	for (int t = 0; t < 400 && !f->conn->sx_reap; t++)
		pump(f, 1);
	assert_true(f->conn->sx_reap);
	grp->gr_conns = NULL;
	f->conn->sx_id = NULL;
	svc_conn_destroy(f->conn);
	f->conn = NULL;
}

/* The TCP connection ends (@how); the server frees it. */
static void drop_tcp(struct fixture *f, enum drop how)
{
	struct svc_group *grp = &f->svc.sv_groups[0];
	uint8_t mark[4];

	if (how == DROP_CLIENT) {
		close(f->peer);
		f->peer = -1;
	} else {
		put32(mark, 0x80000000u | 0x7fffffffu);
		tcp_write_all(f->peer, mark, sizeof(mark));
	}
	for (int t = 0; t < 400 && grp->gr_tconns; t++)
		pump(f, 5);
	assert_null(grp->gr_tconns);
	if (f->peer >= 0) {
		close(f->peer);
		f->peer = -1;
	}
}

/*
 * One NFSv4.1 client over @via (RFC 8881 2.10.3.1, 2.10.5, 18.34, 18.46.3;
 * RFC 8167 for RDMA): its session and back channel on one connection,
 * two read delegations (files d1, d2) granted, d1's recalled there
 * (CB_SEQUENCE sequence id 1).  The connection ends (@how); the client
 * connects again.  Its first SEQUENCE on the new connection binds it to
 * the fore channel only: sr_status_flags say CB_PATH_DOWN and
 * CB_PATH_DOWN_SESSION (the session's only back channel is gone), again
 * on the second, and an NFSv3 write of d2 (the recall path) finds no way
 * to the client: nothing is sent.  BIND_CONN_TO_SESSION asking for the
 * back channel (@dir: CDFC4_BACK or CDFC4_BACK_OR_BOTH) moves it to the
 * new connection: the CB_NULL probe comes there, SEQUENCE reports the path
 * up, and the write's retry recalls d2 over the new connection with
 * sequence id 2 (the session's slot table, RFC 8881 2.10.6.1).
 */
static void reconnect(struct fixture *f, enum via via, enum drop how, uint32_t dir)
{
	struct nfs4_deleg_table *dt = f->e->srv4->s4_deleg;
	struct nfs4_stateid d1, d2;
	uint8_t fh1[NFS4_FHSIZE], fh2[NFS4_FHSIZE];
	uint32_t len1, len2, got = 0, old_id;

	t4_mkfile(f->e, "d1", 0644, "one");
	t4_mkfile(f->e, "d2", 0644, "two");

	session_on(f, via);
	answer_probe(f, via);
	wait_probes_ok(f, 1);
	assert_int_equal(sequence_on(f, via), 0);
	t4_fh_of(f->e, "d1", fh1, &len1); /* (SEQUENCE with no connection) */
	t4_fh_of(f->e, "d2", fh2, &len2);
	assert_true(nfs4_deleg_grant(dt, f->e->clientid, fh1, len1, false, &d1));
	assert_true(nfs4_deleg_grant(dt, f->e->clientid, fh2, len2, false, &d2));
	assert_int_equal(nfs4_deleg_break(f->e->srv4, 0, fh1, len1), NFS4ERR_DELAY);
	expect_recall(f, via, 1, &d1, fh1, len1);
	for (int t = 0; t < 400 && cb_counts(f).cc_recall_ok < 1; t++)
		pump(f, 5);
	assert_int_equal(cb_counts(f).cc_recall_ok, 1);

	old_id = conn_id_of(f, via);
	assert_true(has_state(f, old_id));
	if (via == VIA_TCP) {
		drop_tcp(f, how);
		connect_tcp(f);
	} else {
		drop_rdma(f, how);
		connect_rdma(f);
	}
	/* the new connection: fore channel only, the path down */
	assert_int_equal(sequence_on(f, via), X_SEQ4_PATH_DOWN | X_SEQ4_PATH_DOWN_SESSION);
	assert_int_equal(sequence_on(f, via), X_SEQ4_PATH_DOWN | X_SEQ4_PATH_DOWN_SESSION);
	assert_int_equal(nfs4_deleg_break(f->e->srv4, 0, fh2, len2), NFS4ERR_DELAY);
	expect_quiet(f, via);
	assert_int_equal(cb_counts(f).cc_recalls, 1);

	assert_int_equal(bind_on(f, via, dir, &got), NFS4_OK);
	assert_int_equal(got, dir == X_CDFC4_BACK ? X_CDFS4_BACK : X_CDFS4_BOTH);
	answer_probe(f, via);
	wait_probes_ok(f, 2);
	assert_true(has_state(f, conn_id_of(f, via)));
	assert_int_equal(sequence_on(f, via), 0);
	assert_int_equal(nfs4_deleg_break(f->e->srv4, 0, fh2, len2), NFS4ERR_DELAY);
	expect_recall(f, via, 2, &d2, fh2, len2);
	for (int t = 0; t < 400 && cb_counts(f).cc_recall_ok < 2; t++)
		pump(f, 5);
	assert_int_equal(cb_counts(f).cc_recall_ok, 2);
	assert_int_equal(cb_counts(f).cc_failures, 0);
	expect_quiet(f, via);
}

static void test_rdma_client_reconnects(void **state)
{
	reconnect(*state, VIA_RDMA, DROP_CLIENT, X_CDFC4_BACK_OR_BOTH);
}

static void test_rdma_server_resets(void **state)
{
	reconnect(*state, VIA_RDMA, DROP_SERVER, X_CDFC4_BACK);
}

static void test_tcp_client_reconnects(void **state)
{
	reconnect(*state, VIA_TCP, DROP_CLIENT, X_CDFC4_BACK);
}

static void test_tcp_server_resets(void **state)
{
	reconnect(*state, VIA_TCP, DROP_SERVER, X_CDFC4_BACK_OR_BOTH);
}

/*
 * A hostile client cannot take another client's back channel with a
 * retried CREATE_SESSION (issue found by session 25's review).  Client A
 * makes a session over TCP with a back channel, then destroys it
 * (DESTROY_SESSION, RFC 8881 18.37); client B makes one over RDMA, which
 * gets the table entry A's had (the lowest free one), its probe answered.
 * A then sends its CREATE_SESSION again with the same csa_sequence: RFC
 * 8881 18.36.4 has the server answer it as the first time (the old
 * session id), but that session is gone, so no back channel is bound for
 * it: nothing goes out over A's connection, and B's path stays where it
 * was — up on its RDMA connection, which keeps its state, and a CB_RECALL
 * for B still goes there.  (Before the fix the replay bound a back
 * channel for the dead session in B's entry: B's channel was dropped, its
 * recalls found no path, and its SEQUENCE did not even say so.)
 */
static void test_create_session_replay_after_destroy(void **state)
{
	struct fixture *f = *state;
	struct env *e = f->e;
	uint8_t a_sid[16], b_sid[16];
	uint64_t a_clid, b_clid;
	uint32_t a_seq, n, len;

	a_seq = session_of_on(f, VIA_TCP, "hostile-a");
	answer_probe(f, VIA_TCP);
	wait_probes_ok(f, 1);
	memcpy(a_sid, e->sid, 16);
	a_clid = e->clientid;
	c_begin(e, 1, 1);
	t_u32(&e->c, X_OP_DESTROY_SESSION);
	c_fixed(&e->c, a_sid, 16);
	run_on(f, VIA_TCP);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_false(has_state(f, f->tcp_conn_id));

	(void)session_of_on(f, VIA_RDMA, "victim-b");
	answer_probe(f, VIA_RDMA);
	wait_probes_ok(f, 2);
	memcpy(b_sid, e->sid, 16);
	b_clid = e->clientid;
	/* the case looked for: B's session in A's old table entry */
	assert_memory_equal(a_sid + 14, b_sid + 14, 2);
	assert_true(has_state(f, f->conn->sx_id_num));

	/* A's CREATE_SESSION again: the same answer, no back channel */
	c_create_session(e, a_clid, a_seq);
	run_on(f, VIA_TCP);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_int_equal(r_op(&e->c, X_OP_CREATE_SESSION), NFS4_OK);
	assert_memory_equal(e->c.res + e->c.rpos, a_sid, 16);
	r_skip(&e->c, 16);
	assert_int_equal(r_u32(&e->c), a_seq);
	assert_int_equal(r_u32(&e->c) & X_FLAG_CONN_BACK_CHAN, 0);
	(void)r_opaque(&e->c, &len);
	expect_quiet(f, VIA_TCP);
	assert_false(has_state(f, f->tcp_conn_id));

	/* B's back channel untouched */
	assert_true(has_state(f, f->conn->sx_id_num));
	assert_int_equal(nfs4_cb_path(e->srv4->s4_cb, b_sid), NFS4_CB_UP);
	memcpy(e->sid, b_sid, 16);
	e->clientid = b_clid;
	assert_int_equal(sequence_on(f, VIA_RDMA), 0);
	recall_over(f, VIA_RDMA, 1);
	assert_int_equal(cb_counts(f).cc_probes, 2);
}

/*
 * A session the state drops without DESTROY_SESSION (here its client,
 * a courtesy client after a lease without renewal, expired by a
 * conflict: RFC 8881 8.4.3) leaves no back channel that keeps its
 * connection from the idle timeout (rpcrdma_nfs4_server_conn_has_state()).
 * Before, the leftover channel counted until another session reused the
 * table entry.
 */
static void test_expired_client_holds_no_connection(void **state)
{
	struct fixture *f = *state;

	start_session(f, VIA_TCP);
	assert_true(has_state(f, f->tcp_conn_id));
	nfs4_clock_advance(NFS4_LEASE_SECONDS + 1);
	assert_true(nfs4_state_expire_courtesy(f->e->srv4->s4_state, f->e->clientid));
	assert_false(has_state(f, f->tcp_conn_id));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tcp_session_binds_rdma, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rdma_session_binds_tcp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rdma_client_reconnects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rdma_server_resets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_client_reconnects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_server_resets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_session_replay_after_destroy,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_expired_client_holds_no_connection,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
