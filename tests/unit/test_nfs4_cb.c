// SPDX-License-Identifier: MIT
/*
 * test_nfs4_cb.c - the NFSv4.1 back channel (src/nfs4/nfs4_cb.c): the
 * CB_COMPOUND { CB_SEQUENCE, CB_RECALL } arguments word by word as RFC
 * 8881 20.2, 20.9 and 16.2.2 lay them out (worked by hand below), the
 * decoder of CB_COMPOUND4res on hand-built replies, and the table of back
 * channels through fake transport functions: the CB_NULL probe, the
 * slot's sequence id, and SEQUENCE's CB_PATH_DOWN bits (RFC 8881
 * 18.46.3) only when the path is down.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/be.h"
#include "nfs4/nfs4_cb.h"
#include "nfs4/nfs4_internal.h"

static const uint8_t SID[16] = { 0, 0, 0, 1, 0, 0, 0, 2, 0x5f, 0, 0, 0, 0, 1, 0, 3 };
static const uint8_t SID2[16] = { 0, 0, 0, 1, 0, 0, 0, 2, 0x5f, 0, 0, 0, 0, 1, 0, 4 };
static const uint8_t SID3[16] = { 0, 0, 0, 7, 0, 0, 0, 9, 0x5f, 0, 0, 0, 0, 1, 0, 5 };

/* ---- encoders against hand-worked words ---- */

static void test_encode_recall(void **state)
{
	uint8_t buf[256];
	struct rpcrdma_xdr xs;
	struct nfs4_stateid st = { .si_seqid = 1 };
	const uint8_t fh[5] = { 'a', 'b', 'c', 'd', 'e' };
	/* tag<>, minorversion, callback_ident, 2 ops; CB_SEQUENCE (11): the
	 * session, sequenceid 1, slot 0, highest 0, cachethis false, no
	 * referring call lists; CB_RECALL (4): stateid (seqid 1, other
	 * 0x10..0x1b), truncate false, nfs_fh4 of 5 bytes padded to 8 */
	const uint32_t want[] = {
		0, 1, 0, 2,
		11, 0x00000001, 0x00000002, 0x5f000000, 0x00010003, 1, 0, 0, 0, 0,
		4, 1, 0x10111213, 0x14151617, 0x18191a1b, 0, 5, 0x61626364, 0x65000000,
	};

	(void)state;
	for (int i = 0; i < 12; i++)
		st.si_other[i] = (uint8_t)(0x10 + i);
	rpcrdma_xdr_init(&xs, buf, sizeof(buf));
	nfs4_cb_put_compound_hdr(&xs, 0, 2);
	nfs4_cb_put_sequence(&xs, SID, 1, 0, 0);
	nfs4_cb_put_recall(&xs, &st, false, fh, sizeof(fh));
	assert_true(rpcrdma_xdr_ok(&xs));
	assert_int_equal(xs.xs_pos, sizeof(want));
	for (size_t i = 0; i < sizeof(want) / 4; i++)
		assert_int_equal(load_be32(buf + 4 * i), want[i]);
}

/* ---- the reply decoder ---- */

static size_t put_words(uint8_t *p, const uint32_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_be32(p + 4 * i, w[i]);
	return 4 * n;
}

static void test_decode(void **state)
{
	uint8_t buf[256];
	struct nfs4_cb_res r;
	size_t n;
	/* OK, tag "ab", 2 results: CB_SEQUENCE4resok (session, 7, 0, 3, 2),
	 * CB_RECALL NFS4_OK */
	const uint32_t ok[] = {
		0, 2, 0x61620000, 2,
		11, 0, 0x00000001, 0x00000002, 0x5f000000, 0x00010003, 7, 0, 3, 2,
		4, 0,
	};
	/* CB_SEQUENCE failed with NFS4ERR_BADSESSION (10052): no body */
	const uint32_t bad_seq[] = { 10052, 0, 1, 11, 10052 };
	/* a result after a failed one */
	const uint32_t after_fail[] = { 10052, 0, 2, 11, 10052, 4, 0 };
	/* three results: more than the server ever asks */
	const uint32_t too_many[] = { 0, 0, 3, 4, 0, 4, 0, 4, 0 };

	(void)state;
	n = put_words(buf, ok, sizeof(ok) / 4);
	assert_int_equal(nfs4_cb_decode_compound(buf, n, &r), 0);
	assert_int_equal(r.cr_status, 0);
	assert_int_equal(r.cr_nres, 2);
	assert_true(r.cr_have_seq);
	assert_memory_equal(r.cr_seq_sid, SID, 16);
	assert_int_equal(r.cr_seq_seqid, 7);
	assert_int_equal(r.cr_seq_slot, 0);
	assert_int_equal(r.cr_seq_highest, 3);
	assert_int_equal(r.cr_seq_target, 2);
	assert_int_equal(r.cr_ops[1], OP_CB_RECALL);
	assert_int_equal(r.cr_stats[1], NFS4_OK);
	/* every truncation of it is refused */
	for (size_t k = 0; k < n; k += 4)
		assert_int_equal(nfs4_cb_decode_compound(buf, k, &r), -EBADMSG);

	n = put_words(buf, bad_seq, sizeof(bad_seq) / 4);
	assert_int_equal(nfs4_cb_decode_compound(buf, n, &r), 0);
	assert_int_equal(r.cr_status, 10052);
	assert_int_equal(r.cr_nres, 1);
	assert_false(r.cr_have_seq);
	assert_int_equal(r.cr_stats[0], 10052);

	n = put_words(buf, after_fail, sizeof(after_fail) / 4);
	assert_int_equal(nfs4_cb_decode_compound(buf, n, &r), -EBADMSG);
	n = put_words(buf, too_many, sizeof(too_many) / 4);
	assert_int_equal(nfs4_cb_decode_compound(buf, n, &r), -EBADMSG);
}

/* ---- the table through fake transport functions ---- */

struct fake_call {
	struct rpcrdma_svc_bc_args a;
	uint8_t args[256];
	uint8_t cred[400];
};

static struct {
	int get_err, call_err;
	int gets, puts;
	int ncalls;
	struct fake_call calls[16];
} F;

static int handle; /* the fake connection */

static int f_get(const struct rpcrdma_svc_req *req, struct rpcrdma_svc_bc **out)
{
	(void)req;
	if (F.get_err)
		return F.get_err;
	F.gets++;
	*out = (struct rpcrdma_svc_bc *)&handle;
	return 0;
}

static int f_call(struct rpcrdma_svc_bc *bc, const struct rpcrdma_svc_bc_args *a, uint32_t *xid)
{
	struct fake_call *c;

	assert_ptr_equal(bc, &handle);
	(void)xid;
	if (F.call_err)
		return F.call_err;
	assert_true(F.ncalls < 16);
	c = &F.calls[F.ncalls++];
	c->a = *a;
	assert_true(a->ba_args_len <= sizeof(c->args));
	if (a->ba_args_len)
		memcpy(c->args, a->ba_args, a->ba_args_len);
	if (a->ba_cred_len)
		memcpy(c->cred, a->ba_cred, a->ba_cred_len);
	return 0;
}

static void f_put(struct rpcrdma_svc_bc *bc)
{
	assert_ptr_equal(bc, &handle);
	F.puts++;
}

static const struct nfs4_cb_ops fops = { f_get, f_call, f_put, NULL };

static int setup(void **state)
{
	struct nfs4_cb_table *t;

	memset(&F, 0, sizeof(F));
	if (nfs4_cb_table_create(&fops, NULL, &t))
		return -1;
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	nfs4_cb_table_destroy(*state);
	/* every handle taken was given back */
	assert_int_equal(F.gets, F.puts);
	return 0;
}

/* answer fake call @i: an accepted reply with @res */
static void reply(int i, int status, const uint8_t *res, size_t len)
{
	struct rpcrdma_rpc_msg m = { .rm_reply_stat = RPC_MSG_ACCEPTED,
				     .rm_accept_stat = RPC_ACCEPT_SUCCESS };
	struct fake_call *c = &F.calls[i];

	c->a.ba_done(c->a.ba_done_arg, status, status ? NULL : &m,
		     status ? NULL : res, status ? 0 : len);
}

static int recall_status = 12345;
static int recall_calls;

static void on_recall(void *arg, int status)
{
	assert_ptr_equal(arg, &recall_status);
	recall_status = status;
	recall_calls++;
}

/* a CB_COMPOUND4res: CB_SEQUENCE OK for @seqid, CB_RECALL @st */
static size_t recall_reply(uint8_t *buf, uint32_t seqid, uint32_t st)
{
	const uint32_t w[] = {
		st, 0, 2, 11, 0, 0x00000001, 0x00000002, 0x5f000000, 0x00010003,
		seqid, 0, 0, 0, 4, st,
	};

	return put_words(buf, w, sizeof(w) / 4);
}

static void test_probe_and_recall(void **state)
{
	struct nfs4_cb_table *t = *state;
	struct rpcrdma_svc_req req = { 0 };
	struct nfs4_stateid st = { .si_seqid = 1 };
	uint8_t fh[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, res[128];
	struct nfs4_cb_counts cc;
	size_t n;

	/* nothing bound: no back channel, nothing reported down */
	assert_int_equal(nfs4_cb_path(t, SID), NFS4_CB_NONE);
	assert_int_equal(nfs4_cb_seq_flags(t, SID, 0x100000002ull), 0);
	assert_int_equal(nfs4_cb_recall(t, 0x100000002ull, &st, false, fh, 8,
					on_recall, &recall_status), -ENOTCONN);

	/* CREATE_SESSION's bind: a CB_NULL to program 0x40000000 version 1
	 * with the server's AUTH_SYS credential */
	assert_int_equal(nfs4_cb_bind(t, &req, SID, 0x100000002ull, 0x40000000, true), 0);
	assert_int_equal(F.ncalls, 1);
	assert_int_equal(F.calls[0].a.ba_prog, 0x40000000);
	assert_int_equal(F.calls[0].a.ba_vers, 1);
	assert_int_equal(F.calls[0].a.ba_proc, 0);
	assert_int_equal(F.calls[0].a.ba_args_len, 0);
	assert_int_equal(F.calls[0].a.ba_cred_flavor, 1);
	/* stamp 0, name of 12 bytes, uid 0, gid 0, 0 gids: 8 + 12 + 12 */
	assert_int_equal(F.calls[0].a.ba_cred_len, 32);
	assert_int_equal(load_be32(F.calls[0].cred + 4), 12);
	assert_int_equal(nfs4_cb_path(t, SID), NFS4_CB_PROBING);
	assert_int_equal(nfs4_cb_seq_flags(t, SID, 0x100000002ull), 0);
	reply(0, 0, NULL, 0);
	assert_int_equal(nfs4_cb_path(t, SID), NFS4_CB_UP);
	assert_int_equal(nfs4_cb_seq_flags(t, SID, 0x100000002ull), 0);

	/* a recall: CB_SEQUENCE with the slot's first sequence id (1) */
	assert_int_equal(nfs4_cb_recall(t, 0x100000002ull, &st, true, fh, 8,
					on_recall, &recall_status), 0);
	assert_int_equal(F.ncalls, 2);
	assert_int_equal(F.calls[1].a.ba_proc, 1);
	/* hdr 4 words, CB_SEQUENCE 10, CB_RECALL 1 + 4 + 1 + 1 + 2 */
	assert_int_equal(F.calls[1].a.ba_args_len, 4 * (4 + 10 + 9));
	assert_int_equal(load_be32(F.calls[1].args + 4 * 4), OP_CB_SEQUENCE);
	assert_int_equal(load_be32(F.calls[1].args + 4 * 9), 1);   /* seqid */
	assert_int_equal(load_be32(F.calls[1].args + 4 * 14), OP_CB_RECALL);
	assert_int_equal(load_be32(F.calls[1].args + 4 * 19), 1);  /* truncate */
	/* the one slot is busy until the reply */
	assert_int_equal(nfs4_cb_recall(t, 0x100000002ull, &st, false, fh, 8,
					on_recall, &recall_status), -EBUSY);
	n = recall_reply(res, 1, NFS4_OK);
	reply(1, 0, res, n);
	assert_int_equal(recall_calls, 1);
	assert_int_equal(recall_status, NFS4_OK);

	/* the next one uses sequence id 2; the client answers
	 * NFS4ERR_BADHANDLE (10001) for CB_RECALL: the slot still moved */
	recall_status = 12345;
	assert_int_equal(nfs4_cb_recall(t, 0x100000002ull, &st, false, fh, 8,
					on_recall, &recall_status), 0);
	assert_int_equal(load_be32(F.calls[2].args + 4 * 9), 2);
	n = recall_reply(res, 2, 10001);
	reply(2, 0, res, n);
	assert_int_equal(recall_status, 10001);
	assert_int_equal(nfs4_cb_path(t, SID), NFS4_CB_UP);

	/* no answer: the path is down, reported on SEQUENCE; the sequence
	 * id stays (3) for the next call */
	assert_int_equal(nfs4_cb_recall(t, 0x100000002ull, &st, false, fh, 8,
					on_recall, &recall_status), 0);
	assert_int_equal(load_be32(F.calls[3].args + 4 * 9), 3);
	reply(3, -ETIMEDOUT, NULL, 0);
	assert_int_equal(recall_status, -ETIMEDOUT);
	assert_int_equal(nfs4_cb_path(t, SID), NFS4_CB_DOWN);
	assert_int_equal(nfs4_cb_seq_flags(t, SID, 0x100000002ull),
			 SEQ4_STATUS_CB_PATH_DOWN | SEQ4_STATUS_CB_PATH_DOWN_SESSION);
	/* a down path takes no recall */
	assert_int_equal(nfs4_cb_recall(t, 0x100000002ull, &st, false, fh, 8,
					on_recall, &recall_status), -ENOTCONN);

	/* BIND_CONN_TO_SESSION: probed again on the new connection, the
	 * slot's sequence id kept */
	assert_int_equal(nfs4_cb_rebind(t, &req, SID), 0);
	assert_int_equal(F.ncalls, 5);
	assert_int_equal(F.calls[4].a.ba_proc, 0);
	assert_int_equal(nfs4_cb_seq_flags(t, SID, 0x100000002ull), 0);
	reply(4, 0, NULL, 0);
	assert_int_equal(nfs4_cb_recall(t, 0x100000002ull, &st, false, fh, 8,
					on_recall, &recall_status), 0);
	assert_int_equal(load_be32(F.calls[5].args + 4 * 9), 3);
	n = recall_reply(res, 3, NFS4_OK);
	reply(5, 0, res, n);
	assert_int_equal(recall_status, NFS4_OK);

	nfs4_cb_counts(t, &cc);
	assert_int_equal(cc.cc_probes, 2);
	assert_int_equal(cc.cc_probe_ok, 2);
	assert_int_equal(cc.cc_recalls, 4);
	assert_int_equal(cc.cc_recall_ok, 2);
	assert_int_equal(cc.cc_failures, 1);
	nfs4_cb_unbind(t, SID);
	assert_int_equal(nfs4_cb_path(t, SID), NFS4_CB_NONE);
	assert_int_equal(nfs4_cb_rebind(t, &req, SID), -ENOENT);
}

static void test_path_down(void **state)
{
	struct nfs4_cb_table *t = *state;
	struct rpcrdma_svc_req req = { 0 };

	/* two sessions of one client, one of another */
	assert_int_equal(nfs4_cb_bind(t, &req, SID, 0x100000002ull, 0x40000000, false), 0);
	assert_int_equal(F.calls[0].a.ba_cred_flavor, 0); /* AUTH_NONE offered */
	assert_int_equal(nfs4_cb_bind(t, &req, SID2, 0x100000002ull, 0x40000000, false), 0);
	assert_int_equal(nfs4_cb_bind(t, &req, SID3, 0x700000009ull, 0x40000001, false), 0);
	/* the first probe fails (the client answered PROG_UNAVAIL) */
	{
		struct rpcrdma_rpc_msg m = { .rm_reply_stat = RPC_MSG_ACCEPTED,
					     .rm_accept_stat = 1 };

		F.calls[0].a.ba_done(F.calls[0].a.ba_done_arg, 0, &m, NULL, 0);
	}
	reply(1, 0, NULL, 0);
	reply(2, -ENOTCONN, NULL, 0);
	/* this session's path down, the client's other one up */
	assert_int_equal(nfs4_cb_seq_flags(t, SID, 0x100000002ull),
			 SEQ4_STATUS_CB_PATH_DOWN_SESSION);
	assert_int_equal(nfs4_cb_seq_flags(t, SID2, 0x100000002ull), 0);
	assert_int_equal(nfs4_cb_seq_flags(t, SID3, 0x700000009ull),
			 SEQ4_STATUS_CB_PATH_DOWN | SEQ4_STATUS_CB_PATH_DOWN_SESSION);

	/* a connection already gone: no bind, the probe never sent */
	F.get_err = -ENOTCONN;
	assert_int_equal(nfs4_cb_bind(t, &req, SID2, 0x100000002ull, 0x40000000, false),
			 -ENOTCONN);
	assert_int_equal(nfs4_cb_path(t, SID2), NFS4_CB_DOWN);
	F.get_err = 0;
	/* a refused send of the probe: down at once */
	F.call_err = -ENOTCONN;
	assert_int_equal(nfs4_cb_rebind(t, &req, SID2), -ENOTCONN);
	assert_int_equal(nfs4_cb_path(t, SID2), NFS4_CB_DOWN);
	F.call_err = 0;
	assert_int_equal(nfs4_cb_seq_flags(t, SID, 0x100000002ull),
			 SEQ4_STATUS_CB_PATH_DOWN | SEQ4_STATUS_CB_PATH_DOWN_SESSION);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_recall),
		cmocka_unit_test(test_decode),
		cmocka_unit_test_setup_teardown(test_probe_and_recall, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_down, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
