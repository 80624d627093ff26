// SPDX-License-Identifier: MIT
/*
 * test_nfs4_share.c - share reservations beyond NFSv4.1 opens (issue 34):
 * OPEN's share_access/share_deny (RFC 8881 9.7) meet NLM SHARE's
 * fsh4_access/fsh4_mode (RFC 1813's appendix; deny bits 1 read, 2 write)
 * in the file-serving layer's table (fs_share.c), both ways, and reach
 * another server on the same storage through the backend's be_share (the
 * memory backend: two servers exporting one path share its tree).  A
 * refused OPEN leaves no open state and widens none; CLOSE, DOWNGRADE and
 * a client's end give the reservation back.
 *
 * The NLM side is the lock manager's own table with the layer's open
 * function (rpcrdma_nlm_nfs3_open(), as rpcrdma-nfsd installs it), so its
 * SHARE goes through nlm_fs_share() as in the server.  COMPOUNDs are built
 * by hand (test_nfs4_harness.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_nfs4_harness.h"

#include "common/be.h"
#include "nlm/nlm_internal.h"
#include "nfs4/nfs4_deleg.h"

enum { R = OPEN4_SHARE_ACCESS_READ, W = OPEN4_SHARE_ACCESS_WRITE };
/* OPEN4_SHARE_DENY_* (RFC 8881 18.16.1): the same bits */
enum { DENY_NONE = 0, DENY_R = 1, DENY_W = 2 };

#define EXPORT_OPTS "rw,no_root_squash,insecure"

static int setup(void **state)
{
	const char *lines[1] = { ". 127.0.0.0/8(" EXPORT_OPTS ")" };

	return t4_setup_exports(state, lines, 1);
}

static int teardown(void **state)
{
	return t4_teardown(state);
}

/* A client as the tests drive it: its id, session and slot 0's sequence. */
struct cl {
	uint64_t id;
	uint8_t sid[16];
	uint32_t seq;
};

static void use(struct env *e, const struct cl *c)
{
	e->clientid = c->id;
	memcpy(e->sid, c->sid, 16);
	e->seq = c->seq;
}

/* new_client - EXCHANGE_ID as @owner and CREATE_SESSION on @e's server. */
static void new_client(struct env *e, const char *owner, struct cl *c)
{
	uint32_t seq, flags, n;

	do_exchange_id(e, owner, &e->clientid, &seq, &flags);
	c_create_session(e, e->clientid, seq);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_CREATE_SESSION), NFS4_OK);
	memcpy(e->sid, e->c.res + e->c.rpos, 16);
	c->id = e->clientid;
	memcpy(c->sid, e->sid, 16);
	c->seq = 1;
}

/* open_ - OPEN (no create) of "f" in the export by @c for @owner with
 * @access, @deny.  Its status; on NFS4_OK the stateid in @sid. */
static uint32_t open_(struct env *e, struct cl *c, const char *owner,
		      uint32_t access, uint32_t deny, uint8_t sid[16])
{
	struct t_call *t = &e->c;
	uint32_t n, nops = path_ops(e->dir), status;

	use(e, c);
	c_begin(e, 1, 1 + nops + 1);
	c_sequence(e, c->seq++, 0);
	c_lookup_ops(e, e->dir);
	t_u32(t, OP_OPEN);
	t_u32(t, 0);
	t_u32(t, access);
	t_u32(t, deny);
	t_u64(t, c->id);
	t_str(t, owner);
	t_u32(t, OPEN4_NOCREATE);
	t_u32(t, CLAIM_NULL);
	t_str(t, "f");
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(t, &n);
	assert_int_equal(r_op(t, OP_SEQUENCE), NFS4_OK);
	r_skip(t, 36);
	for (uint32_t i = 0; i < nops; i++)
		assert_int_equal(r_op(t, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
	status = r_op(t, OP_OPEN);
	if (status == NFS4_OK)
		memcpy(sid, t->res + t->rpos, 16);
	return status;
}

/* close_ - PUTFH @fh, CLOSE @sid by @c: CLOSE's status. */
static uint32_t close_(struct env *e, struct cl *c, const uint8_t *fh, uint32_t fhlen,
		       const uint8_t sid[16])
{
	struct t_call *t = &e->c;
	uint32_t n;

	use(e, c);
	c_begin(e, 1, 3);
	c_sequence(e, c->seq++, 0);
	t_u32(t, OP_PUTFH);
	t_opaque(t, fh, fhlen);
	t_u32(t, OP_CLOSE);
	t_u32(t, 0);
	c_fixed(t, sid, 16);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(t, &n);
	assert_int_equal(r_op(t, OP_SEQUENCE), NFS4_OK);
	r_skip(t, 36);
	assert_int_equal(r_op(t, OP_PUTFH), NFS4_OK);
	return r_op(t, OP_CLOSE);
}

/* downgrade - PUTFH @fh, OPEN_DOWNGRADE @sid to @access, @deny: status;
 * the new stateid back into @sid. */
static uint32_t downgrade(struct env *e, struct cl *c, const uint8_t *fh, uint32_t fhlen,
			  uint8_t sid[16], uint32_t access, uint32_t deny)
{
	struct t_call *t = &e->c;
	uint32_t n, status;

	use(e, c);
	c_begin(e, 1, 3);
	c_sequence(e, c->seq++, 0);
	t_u32(t, OP_PUTFH);
	t_opaque(t, fh, fhlen);
	t_u32(t, OP_OPEN_DOWNGRADE);
	c_fixed(t, sid, 16);
	t_u32(t, 0);
	t_u32(t, access);
	t_u32(t, deny);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(t, &n);
	assert_int_equal(r_op(t, OP_SEQUENCE), NFS4_OK);
	r_skip(t, 36);
	assert_int_equal(r_op(t, OP_PUTFH), NFS4_OK);
	status = r_op(t, OP_OPEN_DOWNGRADE);
	if (status == NFS4_OK)
		memcpy(sid, t->res + t->rpos, 16);
	return status;
}

static uint32_t opens(struct env *e)
{
	struct nfs4_state_counts cnt;

	nfs4_state_counts(e->srv4->s4_state, &cnt);
	return cnt.sc_opens;
}

/* the share access of open stateid @sid (seqid as given) of file @fh */
static uint32_t open_access(struct env *e, const struct cl *c, const uint8_t sid[16],
			    const uint8_t *fh, uint32_t fhlen)
{
	struct nfs4_stateid s;
	uint32_t access = 0;

	s.si_seqid = load_be32(sid);
	memcpy(s.si_other, sid + 4, NFS4_OTHER_SIZE);
	assert_int_equal(nfs4_open_find(e->srv4->s4_state, c->id, &s, fh, fhlen, &access),
			 NFS4_OK);
	return access;
}

/* ---- the NLM side: its table with the layer's open function ---- */

struct nlm_side {
	struct nlm_table t;
	struct sockaddr_in peer;
	struct rpcrdma_nlm_caller who;
};

static void nlm_side_init(struct env *e, struct nlm_side *n)
{
	memset(n, 0, sizeof(*n));
	n->peer.sin_family = AF_INET;
	n->peer.sin_port = htons(700);
	n->peer.sin_addr.s_addr = htonl(0x7f000002); /* 127.0.0.2: listed */
	n->who.nc_peer = (const struct sockaddr *)&n->peer;
	n->who.nc_flavor = RPC_AUTH_SYS; /* root, not squashed */
	assert_int_equal(nlm_table_init(&n->t, 0, rpcrdma_nlm_nfs3_open, e->srv3), 0);
}

/* SHARE (or UNSHARE) of @fh by the NLM host's owner "oh-1":
 * @mode the fsh4_mode (deny), @access the fsh4_access.  NLM's status. */
static uint32_t nlm_share(struct nlm_side *n, const uint8_t *fh, uint32_t fhlen,
			  uint32_t mode, uint32_t access, bool unshare)
{
	struct nlm_lockargs a = {
		.la_caller = "nlm-host",
		.la_fh = fh,
		.la_fhlen = fhlen,
		.la_oh = (const uint8_t *)"oh-1",
		.la_ohlen = 4,
		.la_peer = (const struct sockaddr *)&n->peer,
		.la_peerlen = sizeof(n->peer),
		.la_who = &n->who,
	};

	return nlm_table_share(&n->t, &a, mode, access, unshare);
}

/*
 * NLM SHARE and NFSv4.1 OPEN deny each other, both ways, through the
 * layer's table.  Worked out from RFC 8881 9.7 (an OPEN is refused when
 * another reservation denies an access it asks for, or has an access it
 * denies) and XNFS's SHARE (the same rule between fsh4 modes).  Fails
 * before the change: the OPEN for writing succeeds (NLM's shares were its
 * own list), and so does the SHARE denying writers of a file NFSv4 has
 * open for writing.
 */
static void test_nlm_and_open(void **state)
{
	struct env *e = t4_env(state);
	struct nlm_side n;
	struct cl a, b;
	uint8_t fh[NFS4_FHSIZE], sa[16], sa2[16], sb[16];
	uint32_t fhlen;

	nlm_side_init(e, &n);
	new_client(e, "client-A", &a);
	use(e, &a);
	t4_fh_of(e, "f", fh, &fhlen);
	a.seq = e->seq;

	/* NLM reads and denies writing (fsh4_mode 2, fsh4_access 1) */
	assert_int_equal(nlm_share(&n, fh, fhlen, 2, 1, false), NLM4_GRANTED);
	assert_int_equal(fs_shares_count(e->srv3), 1);
	/* an OPEN for writing is refused, and leaves no open state */
	assert_int_equal(open_(e, &a, "owner-A", W, DENY_NONE, sa), NFS4ERR_SHARE_DENIED);
	assert_int_equal(open_(e, &a, "owner-A", R | W, DENY_NONE, sa), NFS4ERR_SHARE_DENIED);
	assert_int_equal(opens(e), 0);
	assert_int_equal(fs_shares_count(e->srv3), 1);
	/* reading is fine; denying reading is not (NLM reads) */
	assert_int_equal(open_(e, &a, "owner-A", R, DENY_NONE, sa), NFS4_OK);
	new_client(e, "client-B", &b);
	assert_int_equal(open_(e, &b, "owner-B", R, DENY_R, sb), NFS4ERR_SHARE_DENIED);
	assert_int_equal(opens(e), 1);
	/* A's upgrade to writing is refused: its open stays read-only
	 * (access and seqid as before: the first stateid still good) */
	assert_int_equal(open_(e, &a, "owner-A", W, DENY_NONE, sa2), NFS4ERR_SHARE_DENIED);
	assert_int_equal(open_access(e, &a, sa, fh, fhlen), R);
	assert_int_equal(fs_shares_count(e->srv3), 2);

	/* NLM lets go: A writes; now NLM may not deny writing, nor write
	 * while A denies it */
	assert_int_equal(nlm_share(&n, fh, fhlen, 0, 0, true), NLM4_GRANTED);
	assert_int_equal(open_(e, &a, "owner-A", W, DENY_NONE, sa2), NFS4_OK);
	assert_int_equal(open_access(e, &a, sa2, fh, fhlen), R | W);
	assert_int_equal(nlm_share(&n, fh, fhlen, 2, 1, false), NLM4_DENIED);
	assert_int_equal(nlm_share(&n, fh, fhlen, 0, 1, false), NLM4_GRANTED);
	assert_int_equal(nlm_share(&n, fh, fhlen, 0, 0, true), NLM4_GRANTED);

	/* A downgrades to reading (a deny can only narrow too: RFC 8881
	 * 18.18.3): the layer's reservation narrows with it, so NLM may now
	 * deny writing */
	assert_int_equal(downgrade(e, &a, fh, fhlen, sa2, R, DENY_NONE), NFS4_OK);
	assert_int_equal(open_access(e, &a, sa2, fh, fhlen), R);
	assert_int_equal(nlm_share(&n, fh, fhlen, 2, 1, false), NLM4_GRANTED);
	assert_int_equal(nlm_share(&n, fh, fhlen, 0, 0, true), NLM4_GRANTED);

	/* CLOSE gives it back: NLM denies writing again */
	assert_int_equal(close_(e, &a, fh, fhlen, sa2), NFS4_OK);
	assert_int_equal(fs_shares_count(e->srv3), 0);
	assert_int_equal(nlm_share(&n, fh, fhlen, 2, 1, false), NLM4_GRANTED);
	/* the host freed (SM_NOTIFY, FREE_ALL): its share leaves the layer */
	assert_int_equal(nlm_table_free_host(&n.t, "nlm-host",
					     (const struct sockaddr *)&n.peer), 1);
	assert_int_equal(fs_shares_count(e->srv3), 0);
	assert_int_equal(open_(e, &b, "owner-B", W, DENY_NONE, sb), NFS4_OK);
	nlm_table_destroy(&n.t);
}

/*
 * A client's end (DESTROY_CLIENTID after its state went, or expiry)
 * leaves no reservation behind: the open states the table drops drop
 * theirs.  The courtesy case: test_nfs4_lease's test_courtesy_share_revoked,
 * which the layer's table would fail if it kept the expired client's.
 */
static void test_state_end_drops(void **state)
{
	struct env *e = t4_env(state);
	struct cl a;
	uint8_t sa[16];

	new_client(e, "client-A", &a);
	assert_int_equal(open_(e, &a, "owner-A", R | W, DENY_W, sa), NFS4_OK);
	assert_int_equal(fs_shares_count(e->srv3), 1);
	/* the server's state goes with a lease that expired and a sweep */
	nfs4_clock_advance(nfs4_state_lease(e->srv4->s4_state) + NFS4_COURTESY_MAX_SECONDS + 2);
	(void)nfs4_state_sweep(e->srv4->s4_state);
	assert_int_equal(opens(e), 0);
	assert_int_equal(fs_shares_count(e->srv3), 0);
}

/* ---- two servers on one memory path ---- */

/* second - another NFSv3/NFSv4.1 server pair (its own key, tables and
 * layer table) exporting @e's path, on the memory backend the same tree:
 * another gateway of one storage. */
static struct env *second(struct env *e)
{
	struct rpcrdma_nfs3_config cfg = { .nc_fcache_idle_ms = RPCRDMA_NFS3_FCACHE_IDLE_NEVER };
	struct rpcrdma_nfs3_exports *xt = NULL;
	struct env *e2 = calloc(1, sizeof(*e2));
	char text[256], err[256];

	assert_non_null(e2);
	memcpy(e2->dir, e->dir, sizeof(e2->dir));
	e2->mem = e->mem;
	snprintf(text, sizeof(text), "%s 127.0.0.0/8(" EXPORT_OPTS ",backend=memory)\n",
		 e->dir);
	assert_int_equal(rpcrdma_nfs3_exports_parse("test2", text, &xt, err, sizeof(err)), 0);
	for (unsigned i = 0; i < sizeof(cfg.nc_key); i++)
		cfg.nc_key[i] = (uint8_t)(i * 11 + 3);
	cfg.nc_max_payload = 1u << 20;
	assert_int_equal(rpcrdma_nfs3_server_create(&cfg, xt, &e2->srv3, NULL, 0), 0);
	rpcrdma_nfs3_exports_free(xt);
	assert_int_equal(rpcrdma_nfs4_server_create(e2->srv3, NULL, &e2->srv4), 0);
	nfs4_cb_table_destroy(e2->srv4->s4_cb);
	assert_int_equal(nfs4_cb_table_create(&no_bc, &e2->srv4->s4_sizes, &e2->srv4->s4_cb), 0);
	nfs4_cb_set_live(e2->srv4->s4_cb, nfs4_state_session_live, e2->srv4->s4_state);
	return e2;
}

static void second_free(struct env *e2)
{
	t_free(&e2->c);
	rpcrdma_nfs4_server_destroy(e2->srv4);
	rpcrdma_nfs3_server_destroy(e2->srv3);
	free(e2);
}

/*
 * Two servers on two exports of one memory path: an OPEN denying writers
 * on server 1 makes server 2's OPEN for writing NFS4ERR_SHARE_DENIED (the
 * backend's be_share: server 2's own table holds nothing); after CLOSE on
 * server 1 it succeeds, and then server 1 may not deny writing.  Fails
 * without be_share: server 2's OPEN succeeds.
 */
static void test_two_servers(void **state)
{
	struct env *e = t4_env(state), *e2 = second(e);
	struct cl a, b;
	uint8_t fh[NFS4_FHSIZE], fh2[NFS4_FHSIZE], sa[16], sb[16];
	uint32_t fhlen, fhlen2;

	new_client(e, "client-A", &a);
	use(e, &a);
	t4_fh_of(e, "f", fh, &fhlen);
	a.seq = e->seq;
	new_client(e2, "client-B", &b);
	use(e2, &b);
	t4_fh_of(e2, "f", fh2, &fhlen2); /* server 2's handle of the file */
	b.seq = e2->seq;

	assert_int_equal(open_(e, &a, "owner-A", R, DENY_W, sa), NFS4_OK);
	assert_int_equal(open_(e2, &b, "owner-B", W, DENY_NONE, sb), NFS4ERR_SHARE_DENIED);
	assert_int_equal(fs_shares_count(e2->srv3), 0);
	assert_int_equal(open_(e2, &b, "owner-B", R, DENY_NONE, sb), NFS4_OK);
	assert_int_equal(close_(e2, &b, fh2, fhlen2, sb), NFS4_OK);
	assert_int_equal(close_(e, &a, fh, fhlen, sa), NFS4_OK);
	assert_int_equal(open_(e2, &b, "owner-B", W, DENY_NONE, sb), NFS4_OK);
	assert_int_equal(open_(e, &a, "owner-A", R, DENY_W, sa), NFS4ERR_SHARE_DENIED);
	second_free(e2);
	/* server 2 gone, its reservations with it */
	assert_int_equal(open_(e, &a, "owner-A", R, DENY_W, sa), NFS4_OK);
}

/* ---- I/O with the special stateids (RFC 8881 8.2.3) ---- */

/*
 * special_io - PUTFH @fh, then @op (OP_READ, OP_WRITE, or OP_SETATTR of
 * the size 0) by @c with a special stateid: @ones false the anonymous one
 * (seqid 0, other all zero), true the READ bypass one (all ones).  The
 * operation's status.
 */
static uint32_t special_io(struct env *e, struct cl *c, const uint8_t *fh, uint32_t fhlen,
			   uint32_t op, bool ones)
{
	struct t_call *t = &e->c;
	uint8_t sid[16];
	uint32_t n;

	memset(sid, ones ? 0xff : 0, sizeof(sid));
	use(e, c);
	c_begin(e, 1, 3);
	c_sequence(e, c->seq++, 0);
	t_u32(t, OP_PUTFH);
	t_opaque(t, fh, fhlen);
	t_u32(t, op);
	c_fixed(t, sid, 16);
	if (op == OP_READ) {
		t_u64(t, 0);
		t_u32(t, 4);
	} else if (op == OP_WRITE) {
		t_u64(t, 0);
		t_u32(t, UNSTABLE4);
		t_str(t, "abcd");
	} else {
		/* fattr4: bitmap { size (word 0, bit 4) }, attr_vals: 8 bytes */
		t_u32(t, 1);
		t_u32(t, 1u << 4);
		t_u32(t, 8);
		t_u64(t, 0);
	}
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(t, &n);
	assert_int_equal(r_op(t, OP_SEQUENCE), NFS4_OK);
	r_skip(t, 36);
	assert_int_equal(r_op(t, OP_PUTFH), NFS4_OK);
	return r_op(t, op);
}

/*
 * A special stateid does not get around another client's share
 * reservation (RFC 8881 8.2.3: I/O with the anonymous stateid is subject
 * to the deny modes of the file's opens, 9.7; the READ bypass stateid
 * only to deny-write): client A opens "f" for reading and writing,
 * denying both; client B's WRITE, SETATTR of the size and READ with the
 * anonymous stateid are NFS4ERR_LOCKED (what knfsd answers a share
 * conflict with a special stateid), its READ with the bypass stateid is
 * served, its WRITE with it not.  A's CLOSE lifts it.  Before the fix all
 * of B's operations were served, the deny modes ignored.
 */
static void test_special_stateid_shares(void **state)
{
	struct env *e = t4_env(state);
	struct cl a, b;
	uint8_t fh[NFS4_FHSIZE], sa[16];
	uint32_t fhlen;

	new_client(e, "client-A", &a);
	use(e, &a);
	t4_fh_of(e, "f", fh, &fhlen);
	a.seq = e->seq;
	new_client(e, "client-B", &b);

	assert_int_equal(open_(e, &a, "owner-A", R | W, DENY_R | DENY_W, sa), NFS4_OK);
	assert_int_equal(special_io(e, &b, fh, fhlen, OP_WRITE, false), NFS4ERR_LOCKED);
	assert_int_equal(special_io(e, &b, fh, fhlen, OP_SETATTR, false), NFS4ERR_LOCKED);
	assert_int_equal(special_io(e, &b, fh, fhlen, OP_READ, false), NFS4ERR_LOCKED);
	assert_int_equal(special_io(e, &b, fh, fhlen, OP_READ, true), NFS4_OK);
	assert_int_equal(special_io(e, &b, fh, fhlen, OP_WRITE, true), NFS4ERR_LOCKED);
	/* deny-read only: writing with the anonymous stateid is served */
	assert_int_equal(downgrade(e, &a, fh, fhlen, sa, R, DENY_R), NFS4_OK);
	assert_int_equal(special_io(e, &b, fh, fhlen, OP_READ, false), NFS4ERR_LOCKED);
	assert_int_equal(special_io(e, &b, fh, fhlen, OP_WRITE, false), NFS4_OK);
	assert_int_equal(close_(e, &a, fh, fhlen, sa), NFS4_OK);
	assert_int_equal(special_io(e, &b, fh, fhlen, OP_READ, false), NFS4_OK);
	assert_int_equal(special_io(e, &b, fh, fhlen, OP_SETATTR, false), NFS4_OK);
}

/*
 * A WRITE or a SETATTR of the size with the anonymous stateid recalls
 * another client's read delegation of the file as an OPEN for writing
 * does (RFC 8881 10.4.4): NFS4ERR_DELAY while it is out, and the file
 * unchanged.  Before the fix the write went through under the holder's
 * delegation (on the memory backend, whose lease sees no change made
 * through its own export; posix's kernel lease happened to catch it).
 */
static void test_special_stateid_recalls(void **state)
{
	struct env *e = t4_env(state);
	struct nfs4_stateid d;
	struct cl a, b;
	uint8_t fh[NFS4_FHSIZE];
	uint32_t fhlen;

	new_client(e, "client-A", &a);
	use(e, &a);
	t4_fh_of(e, "f", fh, &fhlen);
	a.seq = e->seq;
	new_client(e, "client-B", &b);
	assert_true(nfs4_deleg_grant(e->srv4->s4_deleg, a.id, fh, fhlen, false, &d));

	assert_int_equal(special_io(e, &b, fh, fhlen, OP_WRITE, false), NFS4ERR_DELAY);
	assert_int_equal(special_io(e, &b, fh, fhlen, OP_SETATTR, false), NFS4ERR_DELAY);
	assert_int_equal(special_io(e, &b, fh, fhlen, OP_READ, false), NFS4_OK);
	/* the holder's own writes do not recall its delegation */
	assert_int_equal(special_io(e, &a, fh, fhlen, OP_WRITE, false), NFS4_OK);
	assert_int_equal(nfs4_deleg_return(e->srv4->s4_deleg, a.id, &d, fh, fhlen), NFS4_OK);
	assert_int_equal(special_io(e, &b, fh, fhlen, OP_WRITE, false), NFS4_OK);
	assert_int_equal(special_io(e, &b, fh, fhlen, OP_SETATTR, false), NFS4_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T4_BOTH(test_nlm_and_open, setup, teardown),
		T4_BOTH(test_state_end_drops, setup, teardown),
		T4_CASE(test_two_servers, setup, teardown, memory),
		T4_BOTH(test_special_stateid_shares, setup, teardown),
		T4_BOTH(test_special_stateid_recalls, setup, teardown),
	};

	return t_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
