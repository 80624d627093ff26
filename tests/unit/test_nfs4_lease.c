// SPDX-License-Identifier: MIT
/*
 * test_nfs4_lease.c - NFSv4.1 leases (RFC 8881 8.3) and courtesy clients,
 * issue 33 finding 6: a client that stops renewing keeps its state while
 * nothing conflicts, loses it to a conflicting LOCK, OPEN or NLM locker
 * once its lease expired, and is then answered NFS4ERR_BADSESSION (its
 * sessions and client ID gone, as Linux's nfsd does); per-client limits
 * on opens, locks and delegations; unconfirmed client records no longer
 * keep new clients out; the courtesy bound (NFS4_COURTESY_MAX_SECONDS).
 *
 * The clock is moved on with nfs4_clock_advance() (no sleeping).  The
 * COMPOUNDs are built by hand (test_nfs4_harness.h).  The cases run on
 * both backends, but those driving the NLM lock table itself, whose open
 * function here opens a descriptor of the posix directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_nfs4_harness.h"

#include "nfs4/nfs4_deleg.h"
#include "nlm/nlm_internal.h"
#include "fs/fs_backend.h"

/* exported to all of 127/8: clients of several hosts (env.peer4) */
static int setup(void **state)
{
	const char *lines[1] = { ". 127.0.0.0/8(rw,no_root_squash,insecure)" };

	return t4_setup_exports(state, lines, 1);
}

static int teardown(void **state)
{
	return t4_teardown(state);
}

/* A client as the tests drive it: its id, session and slot 0's sequence. */
struct t4_client {
	uint64_t id;
	uint8_t sid[16];
	uint32_t seq;
	uint32_t peer4; /* the host it calls from (env.peer4) */
};

static void use(struct env *e, const struct t4_client *cl)
{
	e->peer4 = cl->peer4;
	e->clientid = cl->id;
	memcpy(e->sid, cl->sid, 16);
	e->seq = cl->seq;
}

static void keep(const struct env *e, struct t4_client *cl)
{
	cl->peer4 = e->peer4;
	cl->id = e->clientid;
	memcpy(cl->sid, e->sid, 16);
	cl->seq = e->seq;
}

/* new_client - EXCHANGE_ID with @owner and CREATE_SESSION: the client
 * @cl, and @e set to it. */
static void new_client(struct env *e, const char *owner, struct t4_client *cl)
{
	uint32_t seq, flags, n;

	do_exchange_id(e, owner, &e->clientid, &seq, &flags);
	c_create_session(e, e->clientid, seq);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_CREATE_SESSION), NFS4_OK);
	memcpy(e->sid, e->c.res + e->c.rpos, 16);
	e->seq = 1;
	keep(e, cl);
}

/* c_seq_only - a COMPOUND of one SEQUENCE for @cl: its status. */
static uint32_t c_seq_only(struct env *e, struct t4_client *cl)
{
	uint32_t n, status;

	use(e, cl);
	c_begin(e, 1, 1);
	c_sequence(e, e->seq, 0);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	status = r_hdr(&e->c, &n);
	if (status == NFS4_OK)
		cl->seq++;
	return status;
}

/*
 * c_open_deny - OPEN (create, UNCHECKED4) of @name in the export by @cl
 * for @owner with @access and @deny.  Return: OPEN's status; on NFS4_OK
 * its stateid in @sid and the file's handle in @fh / *@fhlen.
 */
static uint32_t c_open_deny(struct env *e, struct t4_client *cl, const char *name,
			    const char *owner, uint32_t access, uint32_t deny,
			    uint8_t sid[16], uint8_t *fh, uint32_t *fhlen)
{
	struct t_call *c = &e->c;
	uint32_t n, nops = path_ops(e->dir), len, status;
	const uint8_t *p;

	use(e, cl);
	c_begin(e, 1, 1 + nops + 2);
	c_sequence(e, cl->seq++, 0);
	c_lookup_ops(e, e->dir);
	t_u32(c, OP_OPEN);
	t_u32(c, 0);
	t_u32(c, access);
	t_u32(c, deny);
	t_u64(c, cl->id);
	t_str(c, owner);
	t_u32(c, OPEN4_CREATE);
	t_u32(c, UNCHECKED4);
	t_u32(c, 0);
	t_u32(c, 0);
	t_u32(c, CLAIM_NULL);
	t_str(c, name);
	t_u32(c, OP_GETFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(c, &n);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	for (uint32_t i = 0; i < nops; i++)
		assert_int_equal(r_op(c, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
	status = r_op(c, OP_OPEN);
	if (status != NFS4_OK)
		return status;
	memcpy(sid, c->res + c->rpos, 16);
	r_skip(c, 16 + 20 + 4);
	len = r_u32(c); /* attrset words */
	r_skip(c, 4u * len);
	(void)r_u32(c); /* delegation type: NONE without a back channel */
	assert_int_equal(r_op(c, OP_GETFH), NFS4_OK);
	p = r_opaque(c, &len);
	memcpy(fh, p, len);
	*fhlen = len;
	return NFS4_OK;
}

/* c_lock_new - LOCK WRITE_LT [@off, @off + @len) with a new lock-owner
 * @owner from the open stateid @open_sid, by @cl.  Its status. */
static uint32_t c_lock_new(struct env *e, struct t4_client *cl, const uint8_t *fh,
			   uint32_t fhlen, uint64_t off, uint64_t len,
			   const uint8_t open_sid[16], const char *owner)
{
	struct t_call *c = &e->c;
	uint32_t n;

	use(e, cl);
	c_begin(e, 1, 3);
	c_sequence(e, cl->seq++, 0);
	t_u32(c, OP_PUTFH);
	t_opaque(c, fh, fhlen);
	t_u32(c, OP_LOCK);
	t_u32(c, WRITE_LT);
	t_u32(c, 0);
	t_u64(c, off);
	t_u64(c, len);
	t_u32(c, 1);
	t_u32(c, 0);
	c_fixed(c, open_sid, 16);
	t_u32(c, 0);
	t_u64(c, cl->id);
	t_str(c, owner);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(c, &n);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	assert_int_equal(r_op(c, OP_PUTFH), NFS4_OK);
	return r_op(c, OP_LOCK);
}

/* local_conflict - does another locker's write lock of byte 5 of @name
 * conflict (t4_locker: a local process's F_OFD_GETLK on posix)? */
static bool local_conflict(struct env *e, const char *name)
{
	struct t4_locker lk;
	int err;

	t4_locker_open(e, name, &lk);
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

static uint32_t records(struct env *e)
{
	struct rpcrdma_nfs4_recovery rv;

	assert_int_equal(rpcrdma_nfs4_server_recovery(e->srv4, &rv), 0);
	return rv.n4r_records;
}

/*
 * A holds a lock and stops renewing.  Past its lease nothing takes its
 * lock while no one conflicts (a local locker cannot make it go); B's
 * conflicting LOCK then succeeds, A's client and its record are gone,
 * and A's next SEQUENCE is NFS4ERR_BADSESSION, its CREATE_SESSION
 * NFS4ERR_STALE_CLIENTID.  Fails before the fix: B's LOCK is DENIED.
 */
static void test_courtesy_lock_revoked(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client a, b;
	uint8_t fh[128], sa[16], sb[16];
	uint32_t fhlen, lease = nfs4_state_lease(e->srv4->s4_state), n;
	struct nfs4_state_counts cnt;

	assert_int_equal(lease, NFS4_LEASE_SECONDS);
	new_client(e, "client-A", &a);
	new_client(e, "client-B", &b);
	assert_int_equal(c_open_deny(e, &a, "locked", "owner-A", OPEN4_SHARE_ACCESS_BOTH, 0,
				     sa, fh, &fhlen), NFS4_OK);
	assert_int_equal(c_lock_new(e, &a, fh, fhlen, 0, 10, sa, "lock-A"), NFS4_OK);
	assert_int_equal(c_open_deny(e, &b, "locked", "owner-B", OPEN4_SHARE_ACCESS_BOTH, 0,
				     sb, fh, &fhlen), NFS4_OK);
	assert_int_equal(records(e), 2);
	/* within the lease: B is denied */
	assert_int_equal(c_lock_new(e, &b, fh, fhlen, 5, 1, sb, "lock-B"), NFS4ERR_DENIED);

	/* a lease and a second later A is a courtesy client: it keeps its
	 * lock (a local locker still conflicts, the state is all there) */
	nfs4_clock_advance(lease + 1);
	assert_int_equal(c_seq_only(e, &b), NFS4_OK); /* B renews */
	cnt = counts(e);
	assert_int_equal(cnt.sc_courtesy, 1);
	assert_int_equal(cnt.sc_clients, 2);
	assert_true(local_conflict(e, "locked"));
	/* the sweep leaves it alone (a day is the bound) */
	assert_int_equal(nfs4_state_sweep(e->srv4->s4_state), 0);
	assert_true(local_conflict(e, "locked"));

	/* B's conflicting LOCK: A is expired, B gets the lock */
	assert_int_equal(c_lock_new(e, &b, fh, fhlen, 5, 1, sb, "lock-B2"), NFS4_OK);
	cnt = counts(e);
	assert_int_equal(cnt.sc_clients, 1);
	assert_int_equal(cnt.sc_courtesy, 0);
	assert_int_equal(cnt.sc_revoked, 1);
	assert_int_equal(cnt.sc_opens, 1); /* B's */
	assert_int_equal(records(e), 1);   /* A's record dropped */

	/* A comes back: its session is gone, so is its client ID */
	assert_int_equal(c_seq_only(e, &a), NFS4ERR_BADSESSION);
	c_create_session(e, a.id, 2);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(&e->c, &n), NFS4ERR_STALE_CLIENTID);
}

/* A courtesy client whose SEQUENCE comes before any conflict resumes
 * with its state: B stays denied afterwards. */
static void test_courtesy_resumes(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client a, b;
	uint8_t fh[128], sa[16], sb[16];
	uint32_t fhlen, lease = nfs4_state_lease(e->srv4->s4_state);

	new_client(e, "client-A", &a);
	new_client(e, "client-B", &b);
	assert_int_equal(c_open_deny(e, &a, "f2", "owner-A", OPEN4_SHARE_ACCESS_BOTH, 0,
				     sa, fh, &fhlen), NFS4_OK);
	assert_int_equal(c_lock_new(e, &a, fh, fhlen, 0, 10, sa, "lock-A"), NFS4_OK);
	assert_int_equal(c_open_deny(e, &b, "f2", "owner-B", OPEN4_SHARE_ACCESS_BOTH, 0,
				     sb, fh, &fhlen), NFS4_OK);
	nfs4_clock_advance(lease + 1);
	assert_int_equal(counts(e).sc_courtesy, 2);
	assert_int_equal(c_seq_only(e, &a), NFS4_OK); /* A is back in time */
	assert_int_equal(c_lock_new(e, &b, fh, fhlen, 5, 1, sb, "lock-B"), NFS4ERR_DENIED);
	assert_int_equal(counts(e).sc_revoked, 0);
	assert_int_equal(counts(e).sc_clients, 2);
}

/* An OPEN whose share reservation conflicts with a courtesy client's
 * (deny WRITE) succeeds; within the lease it is SHARE_DENIED.  Fails
 * before the fix: SHARE_DENIED forever. */
static void test_courtesy_share_revoked(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client a, b;
	uint8_t fh[128], sa[16], sb[16];
	uint32_t fhlen, lease = nfs4_state_lease(e->srv4->s4_state);

	new_client(e, "client-A", &a);
	new_client(e, "client-B", &b);
	assert_int_equal(c_open_deny(e, &a, "shared", "owner-A", OPEN4_SHARE_ACCESS_READ,
				     OPEN4_SHARE_ACCESS_WRITE, sa, fh, &fhlen), NFS4_OK);
	assert_int_equal(c_open_deny(e, &b, "shared", "owner-B", OPEN4_SHARE_ACCESS_WRITE, 0,
				     sb, fh, &fhlen), NFS4ERR_SHARE_DENIED);
	nfs4_clock_advance(lease + 1);
	assert_int_equal(c_open_deny(e, &b, "shared", "owner-B", OPEN4_SHARE_ACCESS_WRITE, 0,
				     sb, fh, &fhlen), NFS4_OK);
	assert_int_equal(counts(e).sc_revoked, 1);
	assert_int_equal(c_seq_only(e, &a), NFS4ERR_BADSESSION);
}

/* A courtesy client's delegation is not recalled: another client's OPEN
 * for writing expires the holder and goes through at once.  (The harness
 * has no back channel, so the delegation is put in the table directly.)
 * Fails before the fix: NFS4ERR_DELAY while a recall nobody can answer
 * runs for a lease. */
static void test_courtesy_deleg_revoked(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client a, b;
	struct nfs4_stateid dsid;
	struct nfs4_deleg_counts dc;
	uint8_t fh[128], sa[16], sb[16];
	uint32_t fhlen, lease = nfs4_state_lease(e->srv4->s4_state);

	new_client(e, "client-A", &a);
	new_client(e, "client-B", &b);
	assert_int_equal(c_open_deny(e, &a, "dl", "owner-A", OPEN4_SHARE_ACCESS_READ, 0,
				     sa, fh, &fhlen), NFS4_OK);
	assert_true(nfs4_deleg_grant(e->srv4->s4_deleg, a.id, fh, fhlen, false, &dsid));
	nfs4_clock_advance(lease + 1);
	assert_int_equal(c_open_deny(e, &b, "dl", "owner-B", OPEN4_SHARE_ACCESS_WRITE, 0,
				     sb, fh, &fhlen), NFS4_OK);
	nfs4_deleg_counts(e->srv4->s4_deleg, &dc);
	assert_int_equal(dc.dc_held, 0);
	assert_int_equal(dc.dc_recalled, 0);
	assert_int_equal(counts(e).sc_revoked, 1);
	assert_int_equal(c_seq_only(e, &a), NFS4ERR_BADSESSION);
}

/* The NLM hook: a conflict of another lock manager on the file expires
 * the courtesy clients holding locks of it (and no live one). */
static void test_nlm_hook(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client a;
	uint8_t fh[128], sa[16];
	uint32_t fhlen, lease = nfs4_state_lease(e->srv4->s4_state);
	struct stat sb;

	new_client(e, "client-A", &a);
	assert_int_equal(c_open_deny(e, &a, "nlm", "owner-A", OPEN4_SHARE_ACCESS_BOTH, 0,
				     sa, fh, &fhlen), NFS4_OK);
	assert_int_equal(c_lock_new(e, &a, fh, fhlen, 0, 10, sa, "lock-A"), NFS4_OK);
	assert_int_equal(t4_stat(e, "nlm", &sb), 0);
	/* live: nothing is taken */
	assert_int_equal(rpcrdma_nfs4_server_revoke_file(e->srv4, sb.st_dev, sb.st_ino), 0);
	assert_true(local_conflict(e, "nlm"));
	nfs4_clock_advance(lease + 1);
	/* another file: nothing */
	assert_int_equal(rpcrdma_nfs4_server_revoke_file(e->srv4, sb.st_dev, e->fst.st_ino), 0);
	assert_true(local_conflict(e, "nlm"));
	assert_int_equal(rpcrdma_nfs4_server_revoke_file(e->srv4, sb.st_dev, sb.st_ino), 1);
	assert_false(local_conflict(e, "nlm"));
	assert_int_equal(counts(e).sc_clients, 0);
	assert_int_equal(records(e), 0);
	assert_int_equal(c_seq_only(e, &a), NFS4ERR_BADSESSION);
}

/* c_exid - EXCHANGE_ID of @owner (the harness' usual verifier). */
#define c_exid t4_exid2

/* The NLM lock table with the hook rpcrdma-nfsd installs: its "file
 * handles" are names in the export, each made into a posix backend lock
 * description as the backend makes one (an open file description,
 * read-write); the caller's access @acc is not checked. */
static int nlm_open_name(void *arg, const struct rpcrdma_nlm_caller *who,
			 const uint8_t *fh, uint32_t len, int acc,
			 struct rpcrdma_nlm_file *f)
{
	struct env *e = arg;
	char path[160];
	struct stat st;
	int fd;

	(void)who;
	(void)acc;
	snprintf(path, sizeof(path), "%s/%.*s", e->dir, (int)len, (const char *)fh);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -EIO;
	}
	f->nf_ld.ld_be = &fs_posix_backend;
	f->nf_ld.ld_fd = fd;
	f->nf_dev = st.st_dev;
	f->nf_ino = st.st_ino;
	return 0;
}

static struct nlm_lockargs nlm_args(const char *file, const struct sockaddr_in *peer,
				    uint64_t off, uint64_t len)
{
	struct nlm_lockargs a = {
		.la_caller = "nlm-host",
		.la_fh = (const uint8_t *)file,
		.la_fhlen = (uint32_t)strlen(file),
		.la_oh = (const uint8_t *)"7@nlm-host",
		.la_ohlen = 10,
		.la_svid = 7,
		.la_offset = off,
		.la_len = len,
		.la_excl = true,
		.la_peer = (const struct sockaddr *)peer,
		.la_peerlen = sizeof(*peer),
	};
	return a;
}

/* An NLM LOCK refused by a courtesy client's lock wins once the lease
 * expired (the lc_conflict hook, rpcrdma_nfs4_server_revoke_file()); a
 * blocked one is granted by the 200 ms retry the same way.  Fails before
 * the fix: NLM4_DENIED, and the waiter is never granted. */
static void test_nlm_lock_wins(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client a;
	struct nlm_table t;
	struct nlm_lockargs la;
	struct nlm_grant *g = NULL;
	struct sockaddr_in peer = { .sin_family = AF_INET, .sin_port = htons(700) };
	uint8_t fh[128], sa[16];
	uint32_t fhlen, lease = nfs4_state_lease(e->srv4->s4_state);

	peer.sin_addr.s_addr = htonl(0xc0000202); /* 192.0.2.2 */
	assert_int_equal(nlm_table_init(&t, 0, nlm_open_name, e), 0);
	t.t_conflict = rpcrdma_nfs4_server_revoke_file;
	t.t_conflict_arg = e->srv4;
	new_client(e, "client-A", &a);
	assert_int_equal(c_open_deny(e, &a, "nlm1", "owner-A", OPEN4_SHARE_ACCESS_BOTH, 0,
				     sa, fh, &fhlen), NFS4_OK);
	assert_int_equal(c_lock_new(e, &a, fh, fhlen, 0, 10, sa, "lock-A"), NFS4_OK);
	assert_int_equal(c_open_deny(e, &a, "nlm2", "owner-A", OPEN4_SHARE_ACCESS_BOTH, 0,
				     sa, fh, &fhlen), NFS4_OK);
	assert_int_equal(c_lock_new(e, &a, fh, fhlen, 0, 10, sa, "lock-A"), NFS4_OK);
	/* within the lease: denied, and a blocking request waits */
	la = nlm_args("nlm1", &peer, 5, 1);
	assert_int_equal(nlm_table_lock(&t, &la, false, NULL, 0, NULL), NLM4_DENIED);
	la = nlm_args("nlm2", &peer, 5, 1);
	assert_int_equal(nlm_table_lock(&t, &la, true, (const uint8_t *)"ck", 2, NULL),
			 NLM4_BLOCKED);
	nlm_table_retry(&t, &g);
	assert_null(g);
	/* past it: the waiter is granted by the retry (A expired) */
	nfs4_clock_advance(lease + 1);
	nlm_table_retry(&t, &g);
	assert_non_null(g);
	assert_null(g->g_next);
	free(g);
	assert_int_equal(counts(e).sc_revoked, 1);
	assert_int_equal(counts(e).sc_clients, 0);
	/* and a new LOCK on the other file (A's lock went with A) */
	la = nlm_args("nlm1", &peer, 5, 1);
	assert_int_equal(nlm_table_lock(&t, &la, false, NULL, 0, NULL), NLM4_GRANTED);
	assert_int_equal(c_seq_only(e, &a), NFS4ERR_BADSESSION);
	nlm_table_destroy(&t);
}

/* The first NLM LOCK itself expires the courtesy client. */
static void test_nlm_lock_first_try(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client a;
	struct nlm_table t;
	struct nlm_lockargs la;
	struct sockaddr_in peer = { .sin_family = AF_INET, .sin_port = htons(700) };
	uint8_t fh[128], sa[16];
	uint32_t fhlen, lease = nfs4_state_lease(e->srv4->s4_state);

	peer.sin_addr.s_addr = htonl(0xc0000202);
	assert_int_equal(nlm_table_init(&t, 0, nlm_open_name, e), 0);
	t.t_conflict = rpcrdma_nfs4_server_revoke_file;
	t.t_conflict_arg = e->srv4;
	new_client(e, "client-A", &a);
	assert_int_equal(c_open_deny(e, &a, "nlm3", "owner-A", OPEN4_SHARE_ACCESS_BOTH, 0,
				     sa, fh, &fhlen), NFS4_OK);
	assert_int_equal(c_lock_new(e, &a, fh, fhlen, 0, 10, sa, "lock-A"), NFS4_OK);
	nfs4_clock_advance(lease + 1);
	la = nlm_args("nlm3", &peer, 5, 1);
	assert_int_equal(nlm_table_lock(&t, &la, false, NULL, 0, NULL), NLM4_GRANTED);
	assert_int_equal(counts(e).sc_revoked, 1);
	nlm_table_destroy(&t);
}

/* One client gets at most NFS4_MAX_CLIENT_OPENS open states and
 * NFS4_MAX_CLIENT_LOCKS lock states: the next is NFS4ERR_RESOURCE while
 * another client still gets its own; NFS4_MAX_CLIENT_SESSIONS sessions.  Fails before the fix: the limit
 * was the whole table (NFS4_MAX_OPENS, NFS4_MAX_LOCKS). */
static void test_client_limits(void **state)
{
	struct env *e = t4_env(state);
	static uint8_t osid[NFS4_MAX_CLIENT_LOCKS + 1][16];
	struct t4_client a, b;
	uint8_t fh[NFS4_MAX_CLIENT_LOCKS + 1][128], sid[16], fh1[128];
	uint32_t fhlen[NFS4_MAX_CLIENT_LOCKS + 1], len;
	char name[32];

	new_client(e, "client-A", &a);
	e->peer4 = 0x7f000002; /* B: another host, not sharing A's host share */
	new_client(e, "client-B", &b);
	for (uint32_t i = 0; i < NFS4_MAX_CLIENT_OPENS; i++) {
		bool keep_it = i <= NFS4_MAX_CLIENT_LOCKS;

		snprintf(name, sizeof(name), "o%u", i);
		assert_int_equal(c_open_deny(e, &a, name, "owner-A", OPEN4_SHARE_ACCESS_BOTH, 0,
					     keep_it ? osid[i] : sid, keep_it ? fh[i] : fh1,
					     keep_it ? &fhlen[i] : &len), NFS4_OK);
	}
	assert_int_equal(counts(e).sc_opens, NFS4_MAX_CLIENT_OPENS);
	assert_int_equal(c_open_deny(e, &a, "one-more", "owner-A", OPEN4_SHARE_ACCESS_BOTH, 0,
				     sid, fh1, &len), NFS4ERR_RESOURCE);
	/* an upgrade of a state it has is no new state; B opens its own */
	assert_int_equal(c_open_deny(e, &a, "o0", "owner-A", OPEN4_SHARE_ACCESS_READ, 0,
				     osid[0], fh[0], &fhlen[0]), NFS4_OK);
	assert_int_equal(c_open_deny(e, &b, "one-more", "owner-B", OPEN4_SHARE_ACCESS_BOTH, 0,
				     sid, fh1, &len), NFS4_OK);
	/* lock states: one per file */
	for (uint32_t i = 0; i <= NFS4_MAX_CLIENT_LOCKS; i++)
		assert_int_equal(c_lock_new(e, &a, fh[i], fhlen[i], 0, 1, osid[i], "lock-A"),
				 i < NFS4_MAX_CLIENT_LOCKS ? NFS4_OK : NFS4ERR_RESOURCE);
	assert_int_equal(counts(e).sc_locks, NFS4_MAX_CLIENT_LOCKS);
	assert_int_equal(c_lock_new(e, &b, fh1, len, 0, 1, sid, "lock-B"), NFS4_OK);
	/* sessions: NFS4_MAX_CLIENT_SESSIONS (4), the fifth NFS4ERR_NOSPC */
	for (uint32_t i = 2; i <= NFS4_MAX_CLIENT_SESSIONS + 1; i++) {
		uint32_t n;

		c_create_session(e, a.id, i);
		assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
		assert_int_equal(r_hdr(&e->c, &n),
				 i <= NFS4_MAX_CLIENT_SESSIONS ? NFS4_OK : NFS4ERR_NOSPC);
	}
}

/*
 * RPCRDMA_NFS4_CLIENTS_DEFAULT EXCHANGE_IDs that are never confirmed no longer keep
 * a new client out (before the fix: NFS4ERR_RESOURCE until they expire,
 * forever when they are sent again within each lease); unconfirmed
 * records are swept a lease after their EXCHANGE_ID.
 */
static void test_exchange_id_flood(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client cl;
	uint32_t seq;
	uint64_t id;
	char owner[32];

	for (unsigned round = 0; round < 2; round++) /* sent again: no matter */
		for (unsigned i = 0; i < RPCRDMA_NFS4_CLIENTS_DEFAULT; i++) {
			/* from as many hosts as their shares need */
			e->peer4 = 0x7f000100 + i / NFS4_HOST_SHARE(RPCRDMA_NFS4_CLIENTS_DEFAULT);
			snprintf(owner, sizeof(owner), "flood-%u", i);
			assert_int_equal(c_exid(e, owner, &id, &seq), NFS4_OK);
		}
	assert_int_equal(counts(e).sc_clients, RPCRDMA_NFS4_CLIENTS_DEFAULT);
	e->peer4 = 0;
	new_client(e, "new", &cl);
	assert_int_equal(counts(e).sc_clients, RPCRDMA_NFS4_CLIENTS_DEFAULT);
	/* a lease later the unconfirmed records go, the confirmed one stays
	 * (a courtesy client) */
	nfs4_clock_advance(nfs4_state_lease(e->srv4->s4_state) + 1);
	(void)nfs4_state_sweep(e->srv4->s4_state); /* or the lease thread did */
	assert_int_equal(counts(e).sc_clients, 1);
	assert_int_equal(counts(e).sc_courtesy, 1);
	assert_int_equal(c_seq_only(e, &cl), NFS4_OK);
}

/* RPCRDMA_NFS4_CLIENTS_DEFAULT confirmed clients within their leases fill the table
 * (NFS4ERR_RESOURCE); once their leases expired a new client takes a
 * courtesy client's place, its sessions with it. */
static void test_clients_full(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client cl;
	uint32_t seq;
	uint64_t id;
	char owner[32];

	for (unsigned i = 0; i < RPCRDMA_NFS4_CLIENTS_DEFAULT; i++) {
		e->peer4 = 0x7f000100 + i / NFS4_HOST_SHARE(RPCRDMA_NFS4_CLIENTS_DEFAULT);
		snprintf(owner, sizeof(owner), "live-%u", i);
		new_client(e, owner, &cl);
	}
	e->peer4 = 0; /* a host with none of its share used */
	assert_int_equal(c_exid(e, "late", &id, &seq), NFS4ERR_RESOURCE);
	nfs4_clock_advance(nfs4_state_lease(e->srv4->s4_state) + 1);
	new_client(e, "late", &cl);
	assert_int_equal(counts(e).sc_clients, RPCRDMA_NFS4_CLIENTS_DEFAULT);
	assert_int_equal(counts(e).sc_reaped, 1);
	assert_int_equal(counts(e).sc_sessions, RPCRDMA_NFS4_CLIENTS_DEFAULT);
}

/* A courtesy client is freed NFS4_COURTESY_MAX_SECONDS after its lease
 * expired, with its opens, sessions and record (the lease thread's
 * sweep; called here too, so the test does not wait for it). */
static void test_courtesy_bound(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client a;
	uint8_t fh[128], sa[16];
	uint32_t fhlen, lease = nfs4_state_lease(e->srv4->s4_state);

	new_client(e, "client-A", &a);
	assert_int_equal(c_open_deny(e, &a, "kept", "owner-A", OPEN4_SHARE_ACCESS_READ, 0,
				     sa, fh, &fhlen), NFS4_OK);
	nfs4_clock_advance(lease + NFS4_COURTESY_MAX_SECONDS);
	(void)nfs4_state_sweep(e->srv4->s4_state);
	assert_int_equal(counts(e).sc_clients, 1); /* not yet: a second to go */
	assert_int_equal(records(e), 1);
	nfs4_clock_advance(1);
	(void)nfs4_state_sweep(e->srv4->s4_state);
	assert_int_equal(counts(e).sc_clients, 0);
	assert_int_equal(counts(e).sc_opens, 0);
	assert_int_equal(counts(e).sc_sessions, 0);
	assert_int_equal(records(e), 0);
	assert_int_equal(c_seq_only(e, &a), NFS4ERR_BADSESSION);
}

/* n4_lease_sec: 10..3600 (0: 90), the lease_time of the state. */
static void test_lease_config(void **state)
{
	struct env *e = t4_env(state);
	struct rpcrdma_nfs4_config cfg = { .n4_lease_sec = 9 };
	struct rpcrdma_nfs4_server *srv;

	assert_int_equal(rpcrdma_nfs4_server_create(e->srv3, &cfg, &srv), -EINVAL);
	cfg.n4_lease_sec = 3601;
	assert_int_equal(rpcrdma_nfs4_server_create(e->srv3, &cfg, &srv), -EINVAL);
	cfg.n4_lease_sec = 15;
	assert_int_equal(rpcrdma_nfs4_server_create(e->srv3, &cfg, &srv), 0);
	assert_int_equal(nfs4_state_lease(srv->s4_state), 15);
	assert_int_equal(srv->s4_lease, 15);
	rpcrdma_nfs4_server_destroy(srv);
}


/* ---- one host's share of the tables (issue 33, review: many client IDs
 * from one machine) ---- */

/* c_exid_verf - EXCHANGE_ID of @owner with verifier @v (both words). */
static uint32_t c_exid_verf(struct env *e, const char *owner, uint32_t v, uint64_t *id,
			    uint32_t *seq)
{
	return t4_exid_verf(e, owner, v, v, id, seq);
}

/* One host makes at most NFS4_HOST_SHARE(RPCRDMA_NFS4_CLIENTS_DEFAULT) = 32 client
 * records that stay (live confirmed clients): the 33rd EXCHANGE_ID from
 * it is NFS4ERR_RESOURCE, another host's still gets in.  Before, one
 * host could fill all 128 and keep every other client out. */
static void test_host_share_clients(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client cl;
	uint32_t seq;
	uint64_t id;
	char owner[32];

	e->peer4 = 0x7f000009;
	for (unsigned i = 0; i < NFS4_HOST_SHARE(RPCRDMA_NFS4_CLIENTS_DEFAULT); i++) {
		snprintf(owner, sizeof(owner), "many-%u", i);
		new_client(e, owner, &cl);
	}
	assert_int_equal(NFS4_HOST_SHARE(RPCRDMA_NFS4_CLIENTS_DEFAULT), 32);
	e->peer4 = 0x7f000009;
	assert_int_equal(c_exid(e, "many-more", &id, &seq), NFS4ERR_RESOURCE);
	e->peer4 = 0x7f00000a;
	assert_int_equal(c_exid(e, "other-host", &id, &seq), NFS4_OK);
	assert_int_equal(counts(e).sc_clients, 33);
}

/* The open states of all the client IDs of one host together are at most
 * NFS4_HOST_SHARE(NFS4_OPENS_PER_CLIENT * RPCRDMA_NFS4_CLIENTS_DEFAULT) = 1024: A1 takes them all, A2 of the
 * same host gets NFS4ERR_RESOURCE for its first, B of another host opens.
 * Before, each client ID had its own 1024, so four filled the table. */
static void test_host_share_opens(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client a1, a2, b;
	uint8_t sid[16], fh[128];
	uint32_t len;
	char name[32];

	e->peer4 = 0x7f000005;
	new_client(e, "A1", &a1);
	new_client(e, "A2", &a2);
	e->peer4 = 0x7f000006;
	new_client(e, "B", &b);
	for (uint32_t i = 0; i < NFS4_HOST_SHARE(NFS4_OPENS_PER_CLIENT * RPCRDMA_NFS4_CLIENTS_DEFAULT); i++) {
		snprintf(name, sizeof(name), "h%u", i);
		assert_int_equal(c_open_deny(e, &a1, name, "owner-A1", OPEN4_SHARE_ACCESS_READ, 0,
					     sid, fh, &len), NFS4_OK);
	}
	assert_int_equal(c_open_deny(e, &a2, "h0", "owner-A2", OPEN4_SHARE_ACCESS_READ, 0,
				     sid, fh, &len), NFS4ERR_RESOURCE);
	assert_int_equal(c_open_deny(e, &b, "h0", "owner-B", OPEN4_SHARE_ACCESS_READ, 0,
				     sid, fh, &len), NFS4_OK);
	assert_int_equal(counts(e).sc_opens, NFS4_HOST_SHARE(NFS4_OPENS_PER_CLIENT * RPCRDMA_NFS4_CLIENTS_DEFAULT) + 1);
}

/* A new incarnation of a client that holds state (same owner, same
 * principal, new verifier: RFC 8881 18.35.5 case 5) is refused with
 * NFS4ERR_CLID_INUSE from another host while the client's lease runs,
 * taken from the client's own host, and from anywhere once the lease has
 * expired.  Before, any host that copied the owner string and the
 * AUTH_SYS credential got the unconfirmed record and, with
 * CREATE_SESSION, the client's state. */
static void test_new_incarnation_other_host(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client a;
	uint8_t sid[16], fh[128];
	uint32_t len, seq, n;
	uint64_t id;

	e->peer4 = 0x7f000007;
	new_client(e, "victim", &a);
	assert_int_equal(c_open_deny(e, &a, "vf", "owner-V", OPEN4_SHARE_ACCESS_READ, 0,
				     sid, fh, &len), NFS4_OK);
	e->peer4 = 0x7f000008; /* the intruder, same credential */
	assert_int_equal(c_exid_verf(e, "victim", 0x33333333, &id, &seq), NFS4ERR_CLID_INUSE);
	e->peer4 = 0x7f000007; /* the client itself, restarted */
	assert_int_equal(c_exid_verf(e, "victim", 0x44444444, &id, &seq), NFS4_OK);
	/* its state is still there until that record is confirmed */
	assert_int_equal(c_seq_only(e, &a), NFS4_OK);
	/* the lease expired: from anywhere (case 5), confirmed by CREATE_SESSION */
	nfs4_clock_advance(nfs4_state_lease(e->srv4->s4_state) + 1);
	e->peer4 = 0x7f000008;
	assert_int_equal(c_exid_verf(e, "victim", 0x55555555, &id, &seq), NFS4_OK);
	c_create_session(e, id, seq);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
}


/* A client restarting on its own host (new verifier) when the host holds
 * its share of records and sessions, all live: its EXCHANGE_ID and the
 * CREATE_SESSION that confirms it are served, the old record not counted
 * (a review found NFS4ERR_RESOURCE, then NFS4ERR_NOSPC). */
static void test_restart_at_host_share(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client cl;
	uint32_t seq, n, share = NFS4_HOST_SHARE(RPCRDMA_NFS4_CLIENTS_DEFAULT);
	uint64_t id;
	char owner[32];

	e->peer4 = 0x7f00000b;
	for (unsigned i = 0; i < share; i++) {
		snprintf(owner, sizeof(owner), "full-%u", i);
		new_client(e, owner, &cl);
	}
	assert_int_equal(counts(e).sc_sessions, share);
	e->peer4 = 0x7f00000b;
	assert_int_equal(c_exid_verf(e, "full-0", 0x66666666, &id, &seq), NFS4_OK);
	c_create_session(e, id, seq);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_int_equal(counts(e).sc_clients, share);
	assert_int_equal(counts(e).sc_sessions, share);
}

/* A host whose session share is held by its own courtesy clients (8
 * clients x 4 sessions, all expired): a new client of that host gets a
 * session, a courtesy client giving way, as the whole table does. */
static void test_host_sessions_courtesy(void **state)
{
	struct env *e = t4_env(state);
	struct t4_client cl;
	uint32_t n, share = NFS4_HOST_SHARE(RPCRDMA_NFS4_CLIENTS_DEFAULT);
	char owner[32];

	e->peer4 = 0x7f00000c;
	for (unsigned i = 0; i < share / NFS4_MAX_CLIENT_SESSIONS; i++) {
		snprintf(owner, sizeof(owner), "cz-%u", i);
		new_client(e, owner, &cl);
		for (uint32_t k = 2; k <= NFS4_MAX_CLIENT_SESSIONS; k++) {
			c_create_session(e, cl.id, k);
			assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
			assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
		}
	}
	assert_int_equal(counts(e).sc_sessions, share);
	nfs4_clock_advance(nfs4_state_lease(e->srv4->s4_state) + 1);
	e->peer4 = 0x7f00000c;
	new_client(e, "after", &cl);
	assert_int_equal(counts(e).sc_sessions, share - NFS4_MAX_CLIENT_SESSIONS + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T4_BOTH(test_courtesy_lock_revoked, setup, teardown),
		T4_BOTH(test_courtesy_resumes, setup, teardown),
		T4_BOTH(test_courtesy_share_revoked, setup, teardown),
		T4_BOTH(test_courtesy_deleg_revoked, setup, teardown),
		T4_BOTH(test_nlm_hook, setup, teardown),
		/* the NLM table's open function here: a descriptor of the
		 * posix directory (nlm_open_name()) */
		T4_CASE(test_nlm_lock_wins, setup, teardown, posix),
		T4_CASE(test_nlm_lock_first_try, setup, teardown, posix),
		T4_BOTH(test_lease_config, setup, teardown),
		T4_BOTH(test_client_limits, setup, teardown),
		T4_BOTH(test_exchange_id_flood, setup, teardown),
		T4_BOTH(test_clients_full, setup, teardown),
		T4_BOTH(test_host_share_clients, setup, teardown),
		T4_BOTH(test_host_share_opens, setup, teardown),
		T4_BOTH(test_new_incarnation_other_host, setup, teardown),
		T4_BOTH(test_restart_at_host_share, setup, teardown),
		T4_BOTH(test_host_sessions_courtesy, setup, teardown),
		T4_BOTH(test_courtesy_bound, setup, teardown),
	};

	return t_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
