// SPDX-License-Identifier: MIT
/*
 * test_nfs4_transport.c - which NFSv4.1 COMPOUNDs are served on the
 * transport thread (src/nfs4/nfs4_transport.c): the dispatch is called
 * with rq_transport set, as the service does for a program registered
 * with RPCRDMA_SVC_TRY_TRANSPORT, and answers there or with
 * RPCRDMA_SVC_DEFER; a deferred call is then run from its first byte
 * with rq_transport clear, as a worker does (svc_rpc.c).
 *
 * Expected, from the rules of docs/nfs4.md "The transport thread": a
 * root caller of a no_root_squash entry (the server runs as root: the
 * tests need it for file handles) is the server's own identity, so
 * SEQUENCE with PUTFH, LOOKUP, GETATTR, ACCESS, SAVEFH, RESTOREFH, GETFH
 * stays, and CLOSE (the open state only); GETATTR stays for any caller
 * (read as the server); REMOVE and RENAME stay only where nothing commits
 * (a file system in memory, an async entry); LOOKUP and ACCESS of any
 * other caller (another uid, a squashed root), READ, OPEN, a COMPOUND without SEQUENCE, an export the scan
 * cannot know after a LOOKUP from the pseudo root, and arguments that do
 * not decode go to a worker, before SEQUENCE touched the slot: a
 * different COMPOUND with the same sequence id afterwards is new, not a
 * retry.  The COMPOUNDs served there are also run in a child under a
 * seccomp filter that kills it on any credential system call.
 *
 * The cases run on both backends where the rules agree.  The memory
 * backend takes the caller's identity from each call (no thread switch:
 * fs_needs_identity() false) and waits for no disk (fs_never_waits()), so
 * there any caller's metadata operations and every namespace operation
 * stay: the cases that expect a worker for those are the posix backend's
 * (its identity switch, its fsync of a disk), and memory has cases of
 * its own saying what it does instead.
 */
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "test_nfs4_harness.h"

static struct rpcrdma_nfs3_export *export_of(struct env *e)
{
	struct fs_snap *sn = fs_snap_get(e->srv3);
	struct rpcrdma_nfs3_export *exp = sn->sn_exp[0];

	fs_snap_put(sn); /* the server keeps it */
	return exp;
}

static int setup_opts(void **state, const char *opts, bool mem_fs)
{
	struct env *e;

	if (t4_setup(state, opts))
		return -1;
	e = *state;
	if (!e)
		return 0; /* posix, not root: skipped */
	/* posix: a root server's own identity is root:root (the cases
	 * expect root callers to be served as the server) */
	if (!e->mem && getegid() != 0) {
		t4_teardown(state);
		*state = NULL;
		return 0;
	}
	/* posix: a disk or memory, whatever /tmp is (memory is memory) */
	if (!e->mem)
		export_of(e)->ex_mem_fs = mem_fs;
	session(e);
	return 0;
}

static int setup_disk(void **state)
{
	return setup_opts(state, "rw,no_root_squash,fsid=7", false);
}

static int setup_mem(void **state)
{
	return setup_opts(state, "rw,no_root_squash,fsid=7", true);
}

static int setup_async(void **state)
{
	return setup_opts(state, "rw,no_root_squash,async,fsid=7", false);
}

static int setup_squash(void **state)
{
	return setup_opts(state, "rw,fsid=7", true);
}

/* c_run_transport - the call on the transport thread: its answer, or
 * RPCRDMA_SVC_DEFER with nothing encoded that counts. */
static int c_run_transport(struct env *e)
{
	struct t_call *c = &e->c;

	memset(c->res, 0xee, T_RES_BYTES);
	rpcrdma_xdr_init(&c->req.rq_args, c->args, c->alen);
	rpcrdma_xdr_init(&c->req.rq_res, c->res, T_RES_BYTES);
	c->req.rq_transport = true;
	c->ret = rpcrdma_nfs4_server_dispatch(&c->req, e->srv4);
	c->req.rq_transport = false;
	c->rlen = c->req.rq_res.xs_pos;
	c->rpos = 0;
	return c->ret;
}

static struct rpcrdma_nfs4_stats stats(struct env *e)
{
	struct rpcrdma_nfs4_stats s;

	assert_int_equal(rpcrdma_nfs4_server_stats(e->srv4, &s), 0);
	return s;
}

/* SEQUENCE (sequence id @seq), PUTFH @fh, then @nops operations */
static void at_fh(struct env *e, uint32_t seq, const uint8_t *fh, uint32_t len,
		  uint32_t nops)
{
	c_begin(e, 1, 2 + nops);
	c_sequence(e, seq, 0);
	t_u32(&e->c, OP_PUTFH);
	t_opaque(&e->c, fh, len);
}

/* GETATTR of the size (FATTR4_SIZE: word 0, bit 4) */
static void c_getattr_size(struct env *e)
{
	t_u32(&e->c, OP_GETATTR);
	t_u32(&e->c, 1);
	t_u32(&e->c, 1u << 4);
}

static uint64_t r_getattr_size(struct t_call *c)
{
	uint32_t len;

	assert_int_equal(r_op(c, OP_GETATTR), NFS4_OK);
	assert_int_equal(r_u32(c), 1);
	assert_int_equal(r_u32(c), 1u << 4);
	len = r_u32(c);
	assert_int_equal(len, 8);
	return r_u64(c);
}

/* the result up to after PUTFH: COMPOUND status, SEQUENCE, PUTFH OK */
static uint32_t r_at_fh(struct t_call *c, uint32_t *n)
{
	uint32_t status = r_hdr(c, n);

	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	assert_int_equal(r_op(c, OP_PUTFH), NFS4_OK);
	return status;
}

static bool exists(struct env *e, const char *rel)
{
	return t4_exists(e, rel);
}

/* ---- tests ---- */

static void test_metadata_compounds_stay(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[NFS4_FHSIZE], got[NFS4_FHSIZE];
	uint32_t rlen, n, len;
	const uint8_t *p;

	t4_fh_of(e, "", root, &rlen);
	/* SEQUENCE PUTFH LOOKUP f GETATTR(size) SAVEFH PUTFH ACCESS RESTOREFH GETFH */
	at_fh(e, e->seq, root, rlen, 7);
	t_u32(&e->c, OP_LOOKUP);
	t_str(&e->c, "f");
	c_getattr_size(e);
	t_u32(&e->c, OP_SAVEFH);
	t_u32(&e->c, OP_PUTFH);
	t_opaque(&e->c, root, rlen);
	t_u32(&e->c, OP_ACCESS);
	t_u32(&e->c, 0x1); /* ACCESS4_READ */
	t_u32(&e->c, OP_RESTOREFH);
	t_u32(&e->c, OP_GETFH);
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_at_fh(&e->c, &n), NFS4_OK);
	assert_int_equal(n, 9);
	assert_int_equal(r_op(&e->c, OP_LOOKUP), NFS4_OK);
	assert_int_equal(r_getattr_size(&e->c), 5); /* "12345" */
	assert_int_equal(r_op(&e->c, OP_SAVEFH), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_PUTFH), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_ACCESS), NFS4_OK);
	assert_int_equal(r_u32(&e->c), 0x1); /* supported */
	assert_int_equal(r_u32(&e->c), 0x1); /* granted: root reads a 0640 file */
	assert_int_equal(r_op(&e->c, OP_RESTOREFH), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_GETFH), NFS4_OK);
	p = r_opaque(&e->c, &len);
	memcpy(got, p, len);
	/* the handle of f, as a worker's LOOKUP gives it */
	t4_fh_of(e, "f", root, &rlen);
	assert_int_equal(len, rlen);
	assert_memory_equal(got, root, len);
	/* the pseudo root's attributes need no export */
	c_begin(e, 1, 3);
	c_sequence(e, e->seq, 0);
	t_u32(&e->c, OP_PUTROOTFH);
	t_u32(&e->c, OP_GETATTR);
	t_u32(&e->c, 1);
	t_u32(&e->c, 1u << 1); /* FATTR4_TYPE */
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_int_equal(stats(e).n4s_transport_calls, 2);
	assert_int_equal(stats(e).n4s_transport_defers, 0);
}

/* a REMOVE on a sync entry on a disk commits (fsync): to a worker,
 * before anything of the COMPOUND ran */
static void test_remove_on_disk_defers_untouched(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[NFS4_FHSIZE];
	uint32_t rlen, n;

	t4_fh_of(e, "", root, &rlen);
	at_fh(e, e->seq, root, rlen, 1);
	t_u32(&e->c, OP_REMOVE);
	t_str(&e->c, "f");
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_DEFER);
	assert_true(exists(e, "f"));
	assert_int_equal(stats(e).n4s_transport_defers, 1);
	assert_int_equal(stats(e).n4s_transport_calls, 0);
	/* the same bytes on a worker: served as sent */
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_at_fh(&e->c, &n), NFS4_OK);
	assert_int_equal(n, 3);
	assert_int_equal(r_op(&e->c, OP_REMOVE), NFS4_OK);
	assert_false(exists(e, "f"));
	e->seq++;
	/* a worker's run of the deferred call left the next sequence id
	 * for a new request: GETATTR served, not a replay */
	at_fh(e, e->seq++, root, rlen, 1);
	c_getattr_size(e);
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_at_fh(&e->c, &n), NFS4_OK);
	(void)r_getattr_size(&e->c);
}

/* the slot of a deferred COMPOUND is untouched: another request with
 * its sequence id afterwards is a new one (a retry would get the slot's
 * reply, or NFS4ERR_SEQ_FALSE_RETRY) */
static void test_defer_leaves_the_slot(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[NFS4_FHSIZE], f[NFS4_FHSIZE];
	uint32_t rlen, flen, n;

	t4_fh_of(e, "", root, &rlen);
	t4_fh_of(e, "f", f, &flen);
	if (e->mem) {
		/* nothing waits there: a READ goes to a worker all the same */
		at_fh(e, e->seq, f, flen, 1);
		t_u32(&e->c, OP_READ);
		for (int i = 0; i < 4; i++)
			t_u32(&e->c, 0);
		t_u64(&e->c, 0);
		t_u32(&e->c, 5);
	} else {
		/* a REMOVE on a sync entry on a disk */
		at_fh(e, e->seq, root, rlen, 1);
		t_u32(&e->c, OP_REMOVE);
		t_str(&e->c, "f");
	}
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_DEFER);
	at_fh(e, e->seq, f, flen, 1);
	c_getattr_size(e);
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_at_fh(&e->c, &n), NFS4_OK);
	assert_int_equal(n, 3);
	assert_int_equal(r_getattr_size(&e->c), 5);
	assert_true(exists(e, "f"));
}

/* nothing commits on a file system in memory or an async entry */
static void test_namespace_ops_stay_where_nothing_commits(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[NFS4_FHSIZE];
	uint32_t rlen, n;

	t4_fh_of(e, "", root, &rlen);
	/* RENAME f g: SAVEFH, PUTFH the same directory */
	at_fh(e, e->seq, root, rlen, 3);
	t_u32(&e->c, OP_SAVEFH);
	t_u32(&e->c, OP_PUTFH);
	t_opaque(&e->c, root, rlen);
	t_u32(&e->c, OP_RENAME);
	t_str(&e->c, "f");
	t_str(&e->c, "g");
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_at_fh(&e->c, &n), NFS4_OK);
	assert_int_equal(n, 5);
	assert_false(exists(e, "f"));
	assert_true(exists(e, "g"));
	at_fh(e, e->seq, root, rlen, 1);
	t_u32(&e->c, OP_REMOVE);
	t_str(&e->c, "g");
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_at_fh(&e->c, &n), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_REMOVE), NFS4_OK);
	assert_false(exists(e, "g"));
	assert_int_equal(stats(e).n4s_transport_calls, 2);
	assert_int_equal(stats(e).n4s_transport_defers, 0);
}

/* another caller: GETATTR (read as the server) stays, LOOKUP and ACCESS
 * (run as the caller) go to a worker; so does root with another group */
static void test_other_callers(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[NFS4_FHSIZE], f[NFS4_FHSIZE];
	uint32_t rlen, flen, n;

	t4_fh_of(e, "", root, &rlen);
	t4_fh_of(e, "f", f, &flen);
	e->uid = 1234;
	e->gid = 5678;
	at_fh(e, e->seq, f, flen, 1);
	c_getattr_size(e);
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_at_fh(&e->c, &n), NFS4_OK);
	assert_int_equal(r_getattr_size(&e->c), 5);
	at_fh(e, e->seq, root, rlen, 1);
	t_u32(&e->c, OP_LOOKUP);
	t_str(&e->c, "f");
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_DEFER);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_at_fh(&e->c, &n), NFS4_OK);
	at_fh(e, e->seq, f, flen, 1);
	t_u32(&e->c, OP_ACCESS);
	t_u32(&e->c, 0x1);
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_DEFER);
	/* root with another group than the server's */
	e->uid = 0;
	at_fh(e, e->seq, root, rlen, 1);
	t_u32(&e->c, OP_LOOKUP);
	t_str(&e->c, "f");
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_DEFER);
	assert_int_equal(stats(e).n4s_transport_defers, 3);
	assert_int_equal(stats(e).n4s_transport_calls, 1);
}

/*
 * memory: another caller's LOOKUP and ACCESS stay too (the backend checks
 * c_cred itself, no identity switch), and answer for that caller: 1234
 * owns f (0640) and may read it; 1000 may not.
 */
static void test_other_callers_stay(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[NFS4_FHSIZE], f[NFS4_FHSIZE];
	uint32_t rlen, flen, n;

	t4_fh_of(e, "", root, &rlen);
	t4_fh_of(e, "f", f, &flen);
	e->uid = 1234;
	e->gid = 5678;
	at_fh(e, e->seq, root, rlen, 1);
	t_u32(&e->c, OP_LOOKUP);
	t_str(&e->c, "f");
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_at_fh(&e->c, &n), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_LOOKUP), NFS4_OK);
	for (uint32_t uid = 1234; uid >= 1000; uid -= 234) {
		e->uid = e->gid = uid;
		at_fh(e, e->seq, f, flen, 1);
		t_u32(&e->c, OP_ACCESS);
		t_u32(&e->c, 0x1); /* ACCESS4_READ */
		assert_int_equal(c_run_transport(e), RPCRDMA_SVC_SUCCESS);
		e->seq++;
		assert_int_equal(r_at_fh(&e->c, &n), NFS4_OK);
		assert_int_equal(r_op(&e->c, OP_ACCESS), NFS4_OK);
		assert_int_equal(r_u32(&e->c), 0x1);
		assert_int_equal(r_u32(&e->c), uid == 1234 ? 0x1 : 0);
	}
	assert_int_equal(stats(e).n4s_transport_defers, 0);
	assert_int_equal(stats(e).n4s_transport_calls, 3);
}

/* memory: a squashed root's LOOKUP and REMOVE stay (nobody may remove a
 * name from the 0777 root: served there, and done) */
static void test_root_squashed_stays(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[NFS4_FHSIZE];
	uint32_t rlen, n;

	t4_fh_of(e, "", root, &rlen);
	at_fh(e, e->seq, root, rlen, 1);
	t_u32(&e->c, OP_LOOKUP);
	t_str(&e->c, "f");
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_at_fh(&e->c, &n), NFS4_OK);
	at_fh(e, e->seq, root, rlen, 1);
	t_u32(&e->c, OP_REMOVE);
	t_str(&e->c, "f");
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_at_fh(&e->c, &n), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_REMOVE), NFS4_OK);
	assert_false(exists(e, "f"));
	assert_int_equal(stats(e).n4s_transport_defers, 0);
}

/* CLOSE changes the open state only: served there; the stateid's seqid
 * moves on (RFC 8881 8.2.2) and the state is gone for READ */
static void test_close_stays(void **state)
{
	struct env *e = t4_env(state);
	uint8_t f[NFS4_FHSIZE], sid[16];
	uint32_t flen, n, v;
	struct t_call *c = &e->c;

	t4_fh_of(e, "f", f, &flen);
	c_begin(e, 1, 3);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTFH);
	t_opaque(c, f, flen);
	t_u32(c, OP_OPEN);
	t_u32(c, 0);
	t_u32(c, 1); /* OPEN4_SHARE_ACCESS_READ */
	t_u32(c, 0);
	t_u64(c, e->clientid);
	t_str(c, "closer");
	t_u32(c, 0); /* OPEN4_NOCREATE */
	t_u32(c, 4); /* CLAIM_FH */
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_DEFER);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_at_fh(c, &n), NFS4_OK);
	assert_int_equal(r_op(c, OP_OPEN), NFS4_OK);
	memcpy(sid, c->res + c->rpos, 16);
	memcpy(&v, sid, 4);
	assert_int_equal(ntohl(v), 1);
	at_fh(e, e->seq, f, flen, 1);
	t_u32(c, OP_CLOSE);
	t_u32(c, 0);
	c_fixed(c, sid, 16);
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_at_fh(c, &n), NFS4_OK);
	assert_int_equal(r_op(c, OP_CLOSE), NFS4_OK);
	assert_int_equal(r_u32(c), 2);
	assert_memory_equal(c->res + c->rpos, sid + 4, 12);
	/* READ with the closed state: a worker answers BAD_STATEID */
	at_fh(e, e->seq, f, flen, 1);
	t_u32(c, OP_READ);
	c_fixed(c, sid, 16);
	t_u64(c, 0);
	t_u32(c, 5);
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_DEFER);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_at_fh(c, &n), NFS4ERR_BAD_STATEID);
	assert_int_equal(r_op(c, OP_READ), NFS4ERR_BAD_STATEID);
}

static void test_root_squashed_defers(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[NFS4_FHSIZE];
	uint32_t rlen;

	t4_fh_of(e, "", root, &rlen);
	/* read as the server: stays */
	at_fh(e, e->seq, root, rlen, 1);
	c_getattr_size(e);
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	at_fh(e, e->seq, root, rlen, 1);
	t_u32(&e->c, OP_LOOKUP);
	t_str(&e->c, "f");
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_DEFER);
	at_fh(e, e->seq, root, rlen, 1);
	t_u32(&e->c, OP_REMOVE);
	t_str(&e->c, "f");
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_DEFER);
	assert_true(exists(e, "f"));
}

/* READ, OPEN, sessionless operations, an export not known before
 * running, bad arguments: to a worker, which answers them */
static void test_other_operations_defer(void **state)
{
	struct env *e = t4_env(state);
	uint8_t f[NFS4_FHSIZE];
	uint32_t flen, n, seq, flags;
	uint64_t clientid;
	char path[PATH_MAX];

	t4_fh_of(e, "f", f, &flen);
	/* READ of 5 bytes with the anonymous stateid */
	at_fh(e, e->seq, f, flen, 1);
	t_u32(&e->c, OP_READ);
	for (int i = 0; i < 4; i++)
		t_u32(&e->c, 0);
	t_u64(&e->c, 0);
	t_u32(&e->c, 5);
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_DEFER);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_at_fh(&e->c, &n), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_READ), NFS4_OK);
	/* EXCHANGE_ID alone (no SEQUENCE) */
	c_begin(e, 1, 1);
	t_u32(&e->c, OP_EXCHANGE_ID);
	t_u32(&e->c, 1);
	t_u32(&e->c, 2);
	t_str(&e->c, "another-client");
	t_u32(&e->c, 0);
	t_u32(&e->c, SP4_NONE);
	t_u32(&e->c, 0);
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_DEFER);
	do_exchange_id(e, "another-client", &clientid, &seq, &flags);
	/* PUTROOTFH and LOOKUPs down to the export: its export is not known
	 * to the scan, so the GETATTR after them is not served there */
	snprintf(path, sizeof(path), "%s/f", e->dir);
	c_begin(e, 1, 1 + path_ops(path) + 1);
	c_sequence(e, e->seq, 0);
	c_lookup_ops(e, path);
	c_getattr_size(e);
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_DEFER);
	/* a PUTFH cut short: the worker answers NFS4ERR_BADXDR */
	c_begin(e, 1, 2);
	c_sequence(e, e->seq, 0);
	t_u32(&e->c, OP_PUTFH);
	t_u32(&e->c, 64);
	assert_int_equal(c_run_transport(e), RPCRDMA_SVC_DEFER);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	e->seq++;
	assert_int_equal(r_hdr(&e->c, &n), NFS4ERR_BADXDR);
	assert_int_equal(stats(e).n4s_transport_defers, 4);
	assert_int_equal(stats(e).n4s_transport_calls, 0);
}

/* Kill the process on any system call that changes credentials. */
static int forbid_cred_syscalls(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setfsuid, 6, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setfsgid, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setgroups, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setresuid, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setresgid, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_capset, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

struct filtered {
	struct env *f_env;
	const uint8_t *f_root;
	uint32_t f_rootlen;
	bool f_worker; /* a user's LOOKUP on a worker: must be killed */
	int f_bad;
};

/* one COMPOUND of the child: its dispatch return, or -1 when a status
 * is not NFS4_OK */
static int filtered_run(struct env *e, bool transport)
{
	struct t_call *c = &e->c;
	uint32_t status;
	int ret;

	rpcrdma_xdr_init(&c->req.rq_args, c->args, c->alen);
	rpcrdma_xdr_init(&c->req.rq_res, c->res, T_RES_BYTES);
	c->req.rq_transport = transport;
	ret = rpcrdma_nfs4_server_dispatch(&c->req, e->srv4);
	c->req.rq_transport = false;
	memcpy(&status, c->res, 4); /* COMPOUND4res: the status first */
	if (ret == RPCRDMA_SVC_SUCCESS && ntohl(status) != NFS4_OK)
		return -1;
	return ret;
}

/* on a thread of its own, which has set no credentials yet (as the
 * transport thread): nothing skipped as "already set" hides a switch */
static void *filtered_calls(void *arg)
{
	struct filtered *f = arg;
	struct env *e = f->f_env;

	if (f->f_worker) {
		e->uid = 1234;
		e->gid = 5678;
		at_fh(e, e->seq, f->f_root, f->f_rootlen, 2);
		t_u32(&e->c, OP_LOOKUP);
		t_str(&e->c, "f");
		c_getattr_size(e);
		(void)filtered_run(e, false);
		return NULL;
	}
	/* a user's GETATTR: read as the server, no switch */
	e->uid = 1234;
	e->gid = 5678;
	at_fh(e, e->seq++, f->f_root, f->f_rootlen, 1);
	c_getattr_size(e);
	f->f_bad |= (filtered_run(e, true) != RPCRDMA_SVC_SUCCESS) << 3;
	e->uid = e->gid = 0;
	at_fh(e, e->seq++, f->f_root, f->f_rootlen, 2);
	t_u32(&e->c, OP_LOOKUP);
	t_str(&e->c, "f");
	c_getattr_size(e);
	f->f_bad |= filtered_run(e, true) != RPCRDMA_SVC_SUCCESS;
	at_fh(e, e->seq++, f->f_root, f->f_rootlen, 3);
	t_u32(&e->c, OP_SAVEFH);
	t_u32(&e->c, OP_PUTFH);
	t_opaque(&e->c, f->f_root, f->f_rootlen);
	t_u32(&e->c, OP_RENAME);
	t_str(&e->c, "f");
	t_str(&e->c, "g");
	f->f_bad |= (filtered_run(e, true) != RPCRDMA_SVC_SUCCESS) << 1;
	at_fh(e, e->seq++, f->f_root, f->f_rootlen, 1);
	t_u32(&e->c, OP_REMOVE);
	t_str(&e->c, "g");
	f->f_bad |= (filtered_run(e, true) != RPCRDMA_SVC_SUCCESS) << 2;
	return NULL;
}

static int run_filtered(struct env *e, const uint8_t *root, uint32_t rootlen, bool worker)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct filtered f = { e, root, rootlen, worker, 0 };
		pthread_t th;

		if (forbid_cred_syscalls()) /* inherited by the thread */
			_exit(90);
		if (pthread_create(&th, NULL, filtered_calls, &f) || pthread_join(th, NULL))
			_exit(91);
		_exit(f.f_bad ? 100 + f.f_bad : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void test_no_credential_syscalls(void **state)
{
	struct env *e = t4_env(state);
	uint8_t root[NFS4_FHSIZE];
	uint32_t rlen;
	int status;

#ifdef __SANITIZE_THREAD__
	/* the child forked from this threaded process starts workers, which
	 * ThreadSanitizer's runtime cannot do ("dup thread with used id"):
	 * checked by the ASan and plain runs */
	skip();
#endif
	t4_fh_of(e, "", root, &rlen);
	status = run_filtered(e, root, rlen, true);
	if (e->mem) {
		/* nothing switches: a user's LOOKUP on a worker lives */
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	} else {
		/* the filter works: a user's LOOKUP on a worker switches,
		 * and dies */
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), SIGSYS);
	}
	/* a user's GETATTR, root's LOOKUP+GETATTR, RENAME, REMOVE served on
	 * the transport thread */
	status = run_filtered(e, root, rlen, false);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* posix: the child's RENAME and REMOVE changed the directory (a
	 * memory tree is the child's own copy: its statuses said it all) */
	if (!e->mem) {
		assert_false(exists(e, "f"));
		assert_false(exists(e, "g"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T4_BOTH(test_metadata_compounds_stay, setup_disk, t4_teardown),
		/* posix: a sync entry on a disk commits (fsync): memory waits
		 * for nothing, and its REMOVE stays (below) */
		T4_CASE(test_remove_on_disk_defers_untouched, setup_disk, t4_teardown, posix),
		T4_BOTH(test_defer_leaves_the_slot, setup_disk, t4_teardown),
		T4_BOTH(test_namespace_ops_stay_where_nothing_commits, setup_mem, t4_teardown),
		T4_BOTH(test_namespace_ops_stay_where_nothing_commits, setup_async, t4_teardown),
		T4_CASE(test_namespace_ops_stay_where_nothing_commits, setup_disk, t4_teardown,
			memory),
		/* posix: other callers need the thread's identity switched;
		 * memory checks c_cred itself (test_other_callers_stay) */
		T4_CASE(test_other_callers, setup_mem, t4_teardown, posix),
		T4_CASE(test_other_callers_stay, setup_mem, t4_teardown, memory),
		T4_BOTH(test_close_stays, setup_mem, t4_teardown),
		T4_CASE(test_root_squashed_defers, setup_squash, t4_teardown, posix),
		T4_CASE(test_root_squashed_stays, setup_squash, t4_teardown, memory),
		T4_BOTH(test_other_operations_defer, setup_mem, t4_teardown),
		T4_BOTH(test_no_credential_syscalls, setup_mem, t4_teardown),
	};

	return t_exit(cmocka_run_group_tests_name("nfs4 transport thread", tests, NULL, NULL));
}
