// SPDX-License-Identifier: MIT
/*
 * test_nfs4_clientid.c - NFSv4.1 client IDs and sessions against hostile
 * peers, issue 33 finding 5: the EXCHANGE_ID state machine of RFC 8881
 * 18.35.5 (a new incarnation does not disturb the confirmed record until
 * CREATE_SESSION confirms it; another principal gets NFS4ERR_CLID_INUSE),
 * unguessable client and session IDs, DESTROY_SESSION, DESTROY_CLIENTID
 * and BIND_CONN_TO_SESSION only from the client's principal (and for
 * DESTROY_SESSION a bound connection), a reply-cache hit only for the
 * principal of the cached request.
 *
 * Requests go through rpcrdma_nfs4_server_dispatch() with hand-built
 * COMPOUNDs (test_nfs4_harness.h).  The principal is the AUTH_SYS
 * credential (uid, gid, machine name) the tests put in the call; the
 * connection number comes from s4_conn_id, set to conn_of() here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_nfs4_harness.h"

#include "common/be.h"

/* the connection and machine name of the next request */
static uint32_t t_conn = 1;
static const char *t_mach = "client-a";

static uint32_t conn_of(const struct rpcrdma_svc_req *req)
{
	(void)req;
	return t_conn;
}

static int setup(void **state)
{
	struct env *e;

	if (t4_setup(state, "rw,no_root_squash,insecure"))
		return -1;
	e = *state;
	if (!e)
		return 0; /* posix, not root: skipped */
	e->srv4->s4_conn_id = conn_of;
	e->uid = e->gid = 0;
	t_conn = 1;
	t_mach = "client-a";
	return 0;
}

static int teardown(void **state)
{
	return t4_teardown(state);
}

/* Who sends the next requests: uid (and gid), machine name, connection. */
static void as(struct env *e, uint32_t uid, const char *mach, uint32_t conn)
{
	e->uid = e->gid = uid;
	t_mach = mach;
	t_conn = conn;
}

/* begin - c_begin() with the machine name of as() in the credential */
static void begin(struct env *e, uint32_t nops)
{
	c_begin(e, 1, nops);
	e->c.req.rq_msg.rm_authsys.as_name = (const uint8_t *)t_mach;
	e->c.req.rq_msg.rm_authsys.as_namelen = (uint32_t)strlen(t_mach);
}

/* A client as the tests drive it. */
struct tcl {
	uint64_t id;
	uint32_t cs_seq; /* eir_sequenceid */
	uint8_t sid[16];
	uint32_t seq;    /* slot 0's next sequence id */
};

/* exid - EXCHANGE_ID of @owner with verifier @verf and @flags: its
 * status; on NFS4_OK the client id, sequence id and flags. */
static uint32_t exid(struct env *e, const char *owner, uint64_t verf, uint32_t flags,
		     struct tcl *cl, uint32_t *rflags)
{
	struct t_call *c = &e->c;
	uint32_t n, status;

	begin(e, 1);
	t_u32(c, OP_EXCHANGE_ID);
	t_u64(c, verf);
	t_str(c, owner);
	t_u32(c, flags);
	t_u32(c, SP4_NONE);
	t_u32(c, 0);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	status = r_hdr(c, &n);
	assert_int_equal(n, 1);
	assert_int_equal(r_op(c, OP_EXCHANGE_ID), status);
	if (status == NFS4_OK) {
		cl->id = r_u64(c);
		cl->cs_seq = r_u32(c);
		*rflags = r_u32(c);
	}
	return status;
}

/* create_session - CREATE_SESSION of @cl (csa_sequence cl->cs_seq): its
 * status; on NFS4_OK the session in cl->sid. */
static uint32_t create_session(struct env *e, struct tcl *cl)
{
	struct t_call *c = &e->c;
	uint32_t n, status;

	begin(e, 1);
	t_u32(c, OP_CREATE_SESSION);
	t_u64(c, cl->id);
	t_u32(c, cl->cs_seq);
	t_u32(c, 0);
	put_chan(c, 1049620, 16, 8);
	put_chan(c, 4096, 2, 1);
	t_u32(c, 0x40000000);
	t_u32(c, 1);
	t_u32(c, NFS4_AUTH_NONE);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	status = r_hdr(c, &n);
	assert_int_equal(r_op(c, OP_CREATE_SESSION), status);
	if (status == NFS4_OK) {
		memcpy(cl->sid, c->res + c->rpos, 16);
		cl->seq = 1;
	}
	return status;
}

/* new_client - EXCHANGE_ID (@owner, @verf) and CREATE_SESSION */
static void new_client(struct env *e, const char *owner, uint64_t verf, struct tcl *cl)
{
	uint32_t flags;

	assert_int_equal(exid(e, owner, verf, 0, cl, &flags), NFS4_OK);
	assert_int_equal(flags & EXCHGID4_FLAG_CONFIRMED_R, 0);
	assert_int_equal(create_session(e, cl), NFS4_OK);
}

/* seq_only - a COMPOUND of one SEQUENCE (slot 0) of @cl: its status */
static uint32_t seq_only(struct env *e, struct tcl *cl)
{
	uint32_t n, status;

	begin(e, 1);
	memcpy(e->sid, cl->sid, 16);
	c_sequence(e, cl->seq, 0);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	status = r_hdr(&e->c, &n);
	if (status == NFS4_OK)
		cl->seq++;
	return status;
}

/* sessionless - DESTROY_SESSION (@op OP_DESTROY_SESSION, @sid),
 * DESTROY_CLIENTID (@id) or BIND_CONN_TO_SESSION (@sid, fore channel)
 * alone: its status. */
static uint32_t sessionless(struct env *e, uint32_t op, const uint8_t sid[16], uint64_t id)
{
	struct t_call *c = &e->c;
	uint32_t n, status;

	begin(e, 1);
	t_u32(c, op);
	if (op == OP_DESTROY_CLIENTID) {
		t_u64(c, id);
	} else {
		c_fixed(c, sid, 16);
		if (op == OP_BIND_CONN_TO_SESSION) {
			t_u32(c, CDFC4_FORE);
			t_u32(c, 0);
		}
	}
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	status = r_hdr(c, &n);
	assert_int_equal(n, 1);
	assert_int_equal(r_op(c, op), status);
	return status;
}

/* open_lock - @cl opens "f" (read and write) and takes a write lock on
 * bytes [0, 10) with a new lock-owner */
static void open_lock(struct env *e, struct tcl *cl)
{
	struct t_call *c = &e->c;
	uint32_t n, nops = path_ops(e->dir), len;
	uint8_t osid[16], fh[NFS4_FHSIZE];
	const uint8_t *p;

	begin(e, 1 + nops + 2);
	memcpy(e->sid, cl->sid, 16);
	c_sequence(e, cl->seq++, 0);
	c_lookup_ops(e, e->dir);
	t_u32(c, OP_OPEN);
	t_u32(c, 0);
	t_u32(c, OPEN4_SHARE_ACCESS_BOTH);
	t_u32(c, 0);
	t_u64(c, cl->id);
	t_str(c, "open-owner");
	t_u32(c, OPEN4_NOCREATE);
	t_u32(c, CLAIM_NULL);
	t_str(c, "f");
	t_u32(c, OP_GETFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	r_skip(c, 8 + 36);
	for (uint32_t i = 0; i < nops; i++)
		assert_int_equal(r_op(c, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
	assert_int_equal(r_op(c, OP_OPEN), NFS4_OK);
	memcpy(osid, c->res + c->rpos, 16);
	r_skip(c, 16 + 20 + 4);
	len = r_u32(c);
	r_skip(c, 4u * len);
	(void)r_u32(c); /* no delegation without a back channel */
	assert_int_equal(r_op(c, OP_GETFH), NFS4_OK);
	p = r_opaque(c, &len);
	memcpy(fh, p, len);

	begin(e, 3);
	c_sequence(e, cl->seq++, 0);
	t_u32(c, OP_PUTFH);
	t_opaque(c, fh, len);
	t_u32(c, OP_LOCK);
	t_u32(c, WRITE_LT);
	t_u32(c, 0);
	t_u64(c, 0);
	t_u64(c, 10);
	t_u32(c, 1);
	t_u32(c, 0);
	c_fixed(c, osid, 16);
	t_u32(c, 0);
	t_u64(c, cl->id);
	t_str(c, "lock-owner");
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
}

/* locked - does another locker's write lock of byte 5 of "f" conflict
 * (t4_locker: a local process's F_OFD_GETLK on posix): is the client's
 * lock still held? */
static bool locked(struct env *e)
{
	struct t4_locker lk;
	int err;

	t4_locker_open(e, "f", &lk);
	err = t4_locker_lock(&lk, F_WRLCK, 5, 1, true, NULL);
	t4_locker_close(&lk);
	assert_true(err == 0 || err == -EAGAIN);
	return err == -EAGAIN;
}

static struct nfs4_state_counts counts(struct env *e)
{
	struct nfs4_state_counts cnt;

	nfs4_state_counts(e->srv4->s4_state, &cnt);
	return cnt;
}

static struct rpcrdma_nfs4_stats stats4(struct env *e)
{
	struct rpcrdma_nfs4_stats s;

	assert_int_equal(rpcrdma_nfs4_server_stats(e->srv4, &s), 0);
	return s;
}

static uint32_t records(struct env *e)
{
	struct rpcrdma_nfs4_recovery rv;

	assert_int_equal(rpcrdma_nfs4_server_recovery(e->srv4, &rv), 0);
	return rv.n4r_records;
}

/* A (uid 0 on "client-a", connection 1) with a session, an open and a
 * lock; its state is checked by assert_a_intact(). */
static void client_a(struct env *e, struct tcl *a)
{
	as(e, 0, "client-a", 1);
	new_client(e, "Linux NFSv4.1 client-a", 0x1111, a);
	open_lock(e, a);
	assert_true(locked(e));
	assert_int_equal(records(e), 1);
}

static void assert_a_intact(struct env *e, struct tcl *a)
{
	struct nfs4_state_counts cnt = counts(e);
	struct tcl again = { 0 };
	uint32_t flags;

	assert_true(locked(e));
	assert_int_equal(cnt.sc_opens, 1);
	assert_int_equal(cnt.sc_locks, 1);
	assert_int_equal(records(e), 1);
	as(e, 0, "client-a", 1);
	assert_int_equal(seq_only(e, a), NFS4_OK);
	/* its own EXCHANGE_ID again: case 2, the same confirmed record */
	assert_int_equal(exid(e, "Linux NFSv4.1 client-a", 0x1111, 0, &again, &flags), NFS4_OK);
	assert_true(again.id == a->id);
	assert_true(flags & EXCHGID4_FLAG_CONFIRMED_R);
}

/*
 * The scenario: another peer (connection 2) sends EXCHANGE_ID
 * with A's owner string and a new verifier, with A's principal (AUTH_SYS
 * uid 0 with A's machine name, which any host can send), and no
 * CREATE_SESSION follows.  RFC 8881 18.35.5 case 5: an unconfirmed
 * record with a new client id; A's record, session, open, lock (its
 * descriptor) and stable-storage record are untouched, A's SEQUENCE works.
 * Before the fix the EXCHANGE_ID freed A at once: A's SEQUENCE was
 * NFS4ERR_BADSESSION and its lock gone.
 */
static void test_new_verifier_unconfirmed(void **state)
{
	struct env *e = t4_env(state);
	struct tcl a, x;
	uint32_t flags;

	client_a(e, &a);
	as(e, 0, "client-a", 2);
	assert_int_equal(exid(e, "Linux NFSv4.1 client-a", 0x2222, 0, &x, &flags), NFS4_OK);
	assert_int_equal(flags & EXCHGID4_FLAG_CONFIRMED_R, 0);
	assert_true(x.id != a.id);
	assert_int_equal(x.cs_seq, 1);
	assert_int_equal(counts(e).sc_clients, 2);
	assert_int_equal(counts(e).sc_sessions, 1);
	assert_a_intact(e, &a);
	/* a second new incarnation replaces the unconfirmed record (case 4),
	 * A still untouched; the first unconfirmed id is gone */
	as(e, 0, "client-a", 2);
	{
		struct tcl y;

		assert_int_equal(exid(e, "Linux NFSv4.1 client-a", 0x3333, 0, &y, &flags),
				 NFS4_OK);
		assert_true(y.id != x.id && y.id != a.id);
		assert_int_equal(counts(e).sc_clients, 2);
		assert_int_equal(create_session(e, &x), NFS4ERR_STALE_CLIENTID);
	}
	assert_a_intact(e, &a);
	assert_int_equal(stats4(e).n4s_clid_inuse, 0);
	assert_int_equal(stats4(e).n4s_wrong_cred, 0);
}

/*
 * The confirm path: the new incarnation's CREATE_SESSION (same principal)
 * confirms it, and only then A's record goes with its session, open, lock
 * (the lock released) and stable-storage record; A's old session is
 * NFS4ERR_BADSESSION, its old client id NFS4ERR_STALE_CLIENTID.  A
 * CREATE_SESSION on the new id from another principal is
 * NFS4ERR_CLID_INUSE (18.36.4) and changes nothing.
 */
static void test_confirm_replaces(void **state)
{
	struct env *e = t4_env(state);
	struct tcl a, x, old;
	uint32_t flags;

	client_a(e, &a);
	as(e, 0, "client-a", 2);
	assert_int_equal(exid(e, "Linux NFSv4.1 client-a", 0x2222, 0, &x, &flags), NFS4_OK);
	/* another principal cannot confirm it */
	as(e, 1000, "client-a", 2);
	assert_int_equal(create_session(e, &x), NFS4ERR_CLID_INUSE);
	assert_int_equal(stats4(e).n4s_clid_inuse, 1);
	assert_a_intact(e, &a);
	/* the new incarnation confirms itself */
	as(e, 0, "client-a", 2);
	assert_int_equal(create_session(e, &x), NFS4_OK);
	assert_false(locked(e));
	assert_int_equal(counts(e).sc_clients, 1);
	assert_int_equal(counts(e).sc_sessions, 1);
	assert_int_equal(counts(e).sc_opens, 0);
	assert_int_equal(counts(e).sc_locks, 0);
	assert_int_equal(records(e), 0);
	as(e, 0, "client-a", 1);
	assert_int_equal(seq_only(e, &a), NFS4ERR_BADSESSION);
	old = a;
	old.cs_seq = 2;
	assert_int_equal(create_session(e, &old), NFS4ERR_STALE_CLIENTID);
	assert_int_equal(seq_only(e, &x), NFS4_OK);
	/* the new record is the confirmed one now */
	assert_int_equal(exid(e, "Linux NFSv4.1 client-a", 0x2222, 0, &old, &flags), NFS4_OK);
	assert_true(old.id == x.id);
	assert_true(flags & EXCHGID4_FLAG_CONFIRMED_R);
}

/*
 * Client collision (18.35.5 case 3): another principal (another uid, or
 * only another machine name) with A's owner string is
 * NFS4ERR_CLID_INUSE while A has state, with a new verifier or with A's;
 * an update (EXCHGID4_FLAG_UPD_CONFIRMED_REC_A) from it is NFS4ERR_PERM
 * (case 9).  A record without state (its session destroyed) may be
 * taken over: a new unconfirmed record, the old one replaced when that
 * is confirmed.  Before the fix all of these replaced A.
 */
static void test_clid_inuse(void **state)
{
	struct env *e = t4_env(state);
	struct tcl a, b, x;
	uint32_t flags;

	client_a(e, &a);
	as(e, 1000, "client-a", 2);
	assert_int_equal(exid(e, "Linux NFSv4.1 client-a", 0x2222, 0, &x, &flags),
			 NFS4ERR_CLID_INUSE);
	assert_int_equal(exid(e, "Linux NFSv4.1 client-a", 0x1111, 0, &x, &flags),
			 NFS4ERR_CLID_INUSE);
	as(e, 0, "intruder", 2);
	assert_int_equal(exid(e, "Linux NFSv4.1 client-a", 0x2222, 0, &x, &flags),
			 NFS4ERR_CLID_INUSE);
	assert_int_equal(exid(e, "Linux NFSv4.1 client-a", 0x1111,
			      EXCHGID4_FLAG_UPD_CONFIRMED_REC_A, &x, &flags), NFS4ERR_PERM);
	assert_int_equal(counts(e).sc_clients, 1);
	assert_int_equal(stats4(e).n4s_clid_inuse, 3);
	assert_a_intact(e, &a);
	/* the update cases from A itself: 6 (same verifier), 8 (another) */
	assert_int_equal(exid(e, "Linux NFSv4.1 client-a", 0x1111,
			      EXCHGID4_FLAG_UPD_CONFIRMED_REC_A, &x, &flags), NFS4_OK);
	assert_true(x.id == a.id);
	assert_int_equal(exid(e, "Linux NFSv4.1 client-a", 0x9999,
			      EXCHGID4_FLAG_UPD_CONFIRMED_REC_A, &x, &flags), NFS4ERR_NOT_SAME);
	/* case 7: an update of an owner without a confirmed record */
	assert_int_equal(exid(e, "nobody", 0x1111, EXCHGID4_FLAG_UPD_CONFIRMED_REC_A, &x,
			      &flags), NFS4ERR_NOENT);

	/* B without state: another principal gets a new record, and B goes
	 * only when that one is confirmed */
	as(e, 0, "client-b", 3);
	new_client(e, "client-b", 0x4444, &b);
	assert_int_equal(sessionless(e, OP_DESTROY_SESSION, b.sid, 0), NFS4_OK);
	as(e, 1000, "elsewhere", 4);
	assert_int_equal(exid(e, "client-b", 0x5555, 0, &x, &flags), NFS4_OK);
	assert_true(x.id != b.id);
	assert_int_equal(counts(e).sc_clients, 3);
	assert_int_equal(create_session(e, &x), NFS4_OK);
	assert_int_equal(counts(e).sc_clients, 2);
	as(e, 0, "client-b", 3);
	b.cs_seq = 2;
	assert_int_equal(create_session(e, &b), NFS4ERR_STALE_CLIENTID);
	assert_a_intact(e, &a);
}

/*
 * Case 3 with the lease expired: A stops renewing; once its lease is over
 * another principal may take its owner string (RFC 8881 18.35.5: the
 * refusal holds for an unexpired lease only).  A keeps everything until
 * that record is confirmed, then A's state goes.  Before the fix A went
 * at the EXCHANGE_ID.
 */
static void test_clid_expired_lease(void **state)
{
	struct env *e = t4_env(state);
	struct tcl a, x;
	uint32_t flags;

	client_a(e, &a);
	nfs4_clock_advance(nfs4_state_lease(e->srv4->s4_state) + 1);
	as(e, 1000, "client-new", 2);
	assert_int_equal(exid(e, "Linux NFSv4.1 client-a", 0x2222, 0, &x, &flags), NFS4_OK);
	assert_int_equal(flags & EXCHGID4_FLAG_CONFIRMED_R, 0);
	assert_true(locked(e));
	assert_int_equal(counts(e).sc_locks, 1);
	assert_int_equal(counts(e).sc_sessions, 1);
	assert_int_equal(create_session(e, &x), NFS4_OK);
	assert_false(locked(e));
	assert_int_equal(counts(e).sc_clients, 1);
	assert_int_equal(counts(e).sc_opens, 0);
	as(e, 0, "client-a", 1);
	assert_int_equal(seq_only(e, &a), NFS4ERR_BADSESSION);
}

/* ---- identifiers ---- */

/*
 * Client and session IDs of two servers started in the same second (the
 * same boot value) differ in their upper 32 bits, as do two consecutive
 * IDs of one server (not sequential); an ID of one server is unknown to
 * the other (NFS4ERR_STALE_CLIENTID, NFS4ERR_BADSESSION), and so is a
 * valid one with one bit changed.  Each assertion of differing 32-bit
 * halves fails by chance with probability 2^-32.  Before the fix the
 * upper half was the boot time and the rest a table index.
 */
static void test_ids_unguessable(void **state)
{
	struct nfs4_state *s1, *s2;
	struct nfs4_exid_res r1, r2, r3;
	struct nfs4_chan_attrs fore = { 0, 4096, 4096, 0, 8, 4, 0, 0 }, back = fore;
	struct nfs4_cs_res c1, c2, c3;
	struct nfs4_seq_res sr;
	uint8_t verf[8] = { 7 }, buf[NFS4_SLOT_CACHE_BYTES], sid[16];
	(void)state;

	assert_int_equal(nfs4_state_create(1700000000, 90, NULL, &s1), 0);
	assert_int_equal(nfs4_state_create(1700000000, 90, NULL, &s2), 0);
	assert_int_equal(nfs4_exchange_id(s1, verf, (const uint8_t *)"c", 1, 0, &r1), NFS4_OK);
	assert_int_equal(nfs4_exchange_id(s2, verf, (const uint8_t *)"c", 1, 0, &r2), NFS4_OK);
	assert_int_equal(nfs4_exchange_id(s1, verf, (const uint8_t *)"d", 1, 0, &r3), NFS4_OK);
	assert_true((r1.er_clientid >> 32) != (r2.er_clientid >> 32));
	assert_true((r1.er_clientid >> 32) != (r3.er_clientid >> 32));
	assert_true((uint32_t)r1.er_clientid != (uint32_t)r3.er_clientid);
	/* one server's id is stale at the other; a bit changed: stale */
	assert_int_equal(nfs4_create_session(s2, r1.er_clientid, 1, 0, &fore, &back, &c1),
			 NFS4ERR_STALE_CLIENTID);
	for (unsigned bit = 0; bit < 64; bit += 7)
		assert_int_equal(nfs4_create_session(s1, r1.er_clientid ^ (1ull << bit), 1, 0,
						     &fore, &back, &c1),
				 NFS4ERR_STALE_CLIENTID);
	assert_int_equal(nfs4_create_session(s1, r1.er_clientid, 1, 0, &fore, &back, &c1),
			 NFS4_OK);
	assert_int_equal(nfs4_create_session(s2, r2.er_clientid, 1, 0, &fore, &back, &c2),
			 NFS4_OK);
	assert_int_equal(nfs4_create_session(s1, r3.er_clientid, 1, 0, &fore, &back, &c3),
			 NFS4_OK);
	/* sessions: the same boot, table index and generation, so they
	 * differ only in their unguessable part (bytes 4-11) */
	assert_memory_equal(c1.cr_sessionid, c2.cr_sessionid, 4);
	assert_memory_equal(c1.cr_sessionid + 12, c2.cr_sessionid + 12, 4);
	assert_memory_not_equal(c1.cr_sessionid + 4, c2.cr_sessionid + 4, 4);
	assert_memory_not_equal(c1.cr_sessionid + 8, c2.cr_sessionid + 8, 4);
	assert_memory_not_equal(c1.cr_sessionid + 4, c3.cr_sessionid + 4, 4);
	assert_memory_not_equal(c1.cr_sessionid + 8, c3.cr_sessionid + 8, 4);
	sr.sr_replay_buf = buf;
	assert_int_equal(nfs4_sequence(s2, c1.cr_sessionid, 1, 0, 0, 1, &sr),
			 NFS4ERR_BADSESSION);
	for (unsigned bit = 32; bit < 96; bit += 5) {
		memcpy(sid, c1.cr_sessionid, 16);
		sid[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(nfs4_sequence(s1, sid, 1, 0, 0, 1, &sr), NFS4ERR_BADSESSION);
	}
	assert_int_equal(nfs4_sequence(s1, c1.cr_sessionid, 1, 0, 0, 1, &sr), NFS4_OK);
	nfs4_sequence_done(s1, sr.sr_session, 0, NULL, 0);
	nfs4_state_destroy(s1);
	nfs4_state_destroy(s2);
}

/*
 * A record taken over by a new client starts afresh: CREATE_SESSION with
 * csa_sequence 0 on the new client id is NFS4ERR_SEQ_MISORDERED, not the
 * previous holder's cached answer (its session id).  Before the fix the
 * record kept the previous client's cached CREATE_SESSION result.
 */
static void test_record_reuse(void **state)
{
	struct env *e = t4_env(state);
	struct tcl b, x;
	uint32_t flags;

	as(e, 0, "client-b", 1);
	new_client(e, "client-b", 0x4444, &b);
	assert_int_equal(sessionless(e, OP_DESTROY_SESSION, b.sid, 0), NFS4_OK);
	assert_int_equal(sessionless(e, OP_DESTROY_CLIENTID, NULL, b.id), NFS4_OK);
	assert_int_equal(counts(e).sc_clients, 0);
	as(e, 1000, "client-x", 2);
	assert_int_equal(exid(e, "client-x", 0x5555, 0, &x, &flags), NFS4_OK);
	x.cs_seq = 0;
	assert_int_equal(create_session(e, &x), NFS4ERR_SEQ_MISORDERED);
}

/* ---- the principal and the connection ---- */

/*
 * DESTROY_SESSION, DESTROY_CLIENTID and BIND_CONN_TO_SESSION from another
 * principal than the client's are NFS4ERR_WRONG_CRED (RFC 8881 2.10.8,
 * 18.37, 18.50, 18.34); DESTROY_SESSION from the client's principal on a
 * connection not bound to the session NFS4ERR_CONN_NOT_BOUND_TO_SESSION
 * (18.37.3).  A's session and state survive all of them; a SEQUENCE on
 * that connection binds it (SP4_NONE), and A's DESTROY_SESSION there then
 * succeeds.  Before the fix every one of them was accepted.
 */
static void test_destroy_other_principal(void **state)
{
	struct env *e = t4_env(state);
	struct tcl a, b;
	uint32_t flags;

	client_a(e, &a);
	as(e, 1000, "client-a", 1);
	assert_int_equal(sessionless(e, OP_DESTROY_SESSION, a.sid, 0), NFS4ERR_WRONG_CRED);
	assert_int_equal(sessionless(e, OP_BIND_CONN_TO_SESSION, a.sid, 0),
			 NFS4ERR_WRONG_CRED);
	as(e, 0, "intruder", 1);
	assert_int_equal(sessionless(e, OP_DESTROY_SESSION, a.sid, 0), NFS4ERR_WRONG_CRED);
	/* A's principal, but a connection never bound to A's session */
	as(e, 0, "client-a", 9);
	assert_int_equal(sessionless(e, OP_DESTROY_SESSION, a.sid, 0),
			 NFS4ERR_CONN_NOT_BOUND_TO_SESSION);
	assert_int_equal(counts(e).sc_sessions, 1);
	assert_a_intact(e, &a);

	/* an unconfirmed record: only its principal destroys it */
	as(e, 0, "client-b", 3);
	assert_int_equal(exid(e, "client-b", 0x4444, 0, &b, &flags), NFS4_OK);
	as(e, 1000, "client-b", 3);
	assert_int_equal(sessionless(e, OP_DESTROY_CLIENTID, NULL, b.id), NFS4ERR_WRONG_CRED);
	as(e, 0, "client-a", 1);
	assert_int_equal(sessionless(e, OP_DESTROY_CLIENTID, NULL, b.id), NFS4ERR_WRONG_CRED);
	as(e, 0, "client-b", 3);
	assert_int_equal(sessionless(e, OP_DESTROY_CLIENTID, NULL, b.id), NFS4_OK);
	assert_int_equal(counts(e).sc_clients, 1);

	/* A binds connection 9 with a SEQUENCE, then destroys its session
	 * there; BIND_CONN_TO_SESSION from A's principal binds too */
	as(e, 0, "client-a", 9);
	assert_int_equal(seq_only(e, &a), NFS4_OK);
	as(e, 0, "client-a", 10);
	assert_int_equal(sessionless(e, OP_BIND_CONN_TO_SESSION, a.sid, 0), NFS4_OK);
	as(e, 1000, "client-a", 10);
	assert_int_equal(sessionless(e, OP_DESTROY_CLIENTID, NULL, a.id), NFS4ERR_WRONG_CRED);
	as(e, 0, "client-a", 9);
	assert_int_equal(sessionless(e, OP_DESTROY_SESSION, a.sid, 0), NFS4_OK);
	assert_int_equal(counts(e).sc_sessions, 0);
	assert_int_equal(seq_only(e, &a), NFS4ERR_BADSESSION);
	assert_true(locked(e));
	assert_int_equal(stats4(e).n4s_wrong_cred, 6);
	assert_int_equal(stats4(e).n4s_conn_unbound, 1);
}

/* cached_call - slot 0, sequence @seq of @cl: SEQUENCE, PUTROOTFH, GETFH */
static void cached_call(struct env *e, struct tcl *cl, uint32_t seq)
{
	begin(e, 3);
	memcpy(e->sid, cl->sid, 16);
	c_sequence(e, seq, 0);
	t_u32(&e->c, OP_PUTROOTFH);
	t_u32(&e->c, OP_GETFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
}

/*
 * A retry (the slot's sequence id again) from another principal than the
 * cached request's is a false retry (RFC 8881 2.10.6.1.3.1): SEQUENCE
 * fails with NFS4ERR_SEQ_FALSE_RETRY and nothing of the cached reply is
 * sent; the request's own principal still gets the reply byte for byte,
 * on another connection too.  Before the fix anyone who knew the session
 * id got the cached reply.
 */
static void test_replay_other_principal(void **state)
{
	struct env *e = t4_env(state);
	uint8_t first[512];
	size_t first_len;
	struct tcl a;
	uint32_t n, seq;

	client_a(e, &a);
	/* a user's request on slot 0 (the kernel sends them with the user's
	 * credential, not the client's) */
	as(e, 1234, "client-a", 1);
	seq = a.seq++;
	cached_call(e, &a, seq);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_int_equal(n, 3);
	assert_true(e->c.rlen <= sizeof(first));
	first_len = e->c.rlen;
	memcpy(first, e->c.res, first_len);

	/* the client's own principal, another uid, another machine name */
	as(e, 0, "client-a", 1);
	cached_call(e, &a, seq);
	assert_int_equal(r_hdr(&e->c, &n), NFS4ERR_SEQ_FALSE_RETRY);
	assert_int_equal(n, 1);
	assert_int_equal(r_op(&e->c, OP_SEQUENCE), NFS4ERR_SEQ_FALSE_RETRY);
	assert_int_equal(e->c.rpos, e->c.rlen);
	as(e, 1000, "client-a", 2);
	cached_call(e, &a, seq);
	assert_int_equal(r_hdr(&e->c, &n), NFS4ERR_SEQ_FALSE_RETRY);
	as(e, 1234, "elsewhere", 2);
	cached_call(e, &a, seq);
	assert_int_equal(r_hdr(&e->c, &n), NFS4ERR_SEQ_FALSE_RETRY);

	/* the same principal: the kept reply */
	as(e, 1234, "client-a", 2);
	cached_call(e, &a, seq);
	assert_int_equal(e->c.rlen, first_len);
	assert_memory_equal(e->c.res, first, first_len);
	/* the slot goes on as before */
	as(e, 0, "client-a", 1);
	assert_int_equal(seq_only(e, &a), NFS4_OK);
	assert_int_equal(stats4(e).n4s_false_retries, 3);
}

/*
 * The principal is the credential without its stamp: the same uid, gid,
 * groups and machine name with another stamp is the same principal;
 * another gid, group list, machine name or flavor is not.
 */
static void test_principal(void **state)
{
	struct nfs4_state *st;
	struct rpcrdma_rpc_msg m = { .rm_cred_flavor = NFS4_AUTH_SYS, .rm_has_authsys = true };
	struct rpcrdma_rpc_msg m2;
	uint64_t p;
	(void)state;

	assert_int_equal(nfs4_state_create(1, 90, NULL, &st), 0);
	m.rm_authsys.as_stamp = 1;
	m.rm_authsys.as_uid = 0;
	m.rm_authsys.as_gid = 0;
	m.rm_authsys.as_name = (const uint8_t *)"host";
	m.rm_authsys.as_namelen = 4;
	p = nfs4_principal(st, &m);
	m2 = m;
	m2.rm_authsys.as_stamp = 99;
	assert_true(nfs4_principal(st, &m2) == p);
	m2 = m;
	m2.rm_authsys.as_gid = 1;
	assert_true(nfs4_principal(st, &m2) != p);
	m2 = m;
	m2.rm_authsys.as_ngids = 1;
	m2.rm_authsys.as_gids[0] = 0;
	assert_true(nfs4_principal(st, &m2) != p);
	m2 = m;
	m2.rm_authsys.as_name = (const uint8_t *)"hosT";
	assert_true(nfs4_principal(st, &m2) != p);
	m2 = m;
	m2.rm_authsys.as_namelen = 3;
	assert_true(nfs4_principal(st, &m2) != p);
	m2 = m;
	m2.rm_cred_flavor = NFS4_AUTH_NONE;
	m2.rm_has_authsys = false;
	assert_true(nfs4_principal(st, &m2) != p);
	nfs4_state_destroy(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T4_BOTH(test_new_verifier_unconfirmed, setup, teardown),
		T4_BOTH(test_confirm_replaces, setup, teardown),
		T4_BOTH(test_clid_inuse, setup, teardown),
		T4_BOTH(test_clid_expired_lease, setup, teardown),
		cmocka_unit_test(test_ids_unguessable),
		T4_BOTH(test_record_reuse, setup, teardown),
		T4_BOTH(test_destroy_other_principal, setup, teardown),
		T4_BOTH(test_replay_other_principal, setup, teardown),
		cmocka_unit_test(test_principal),
	};

	return t_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
