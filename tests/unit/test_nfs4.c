// SPDX-License-Identifier: MIT
/*
 * test_nfs4.c - the NFSv4.1 server: the COMPOUND decoder and its bounds,
 * the session rules (RFC 8881 2.10.6: SEQUENCE first, slots, retries,
 * misordered sequence ids), the state tables' limits, and attributes
 * decoded by hand from RFC 8881 section 5 (bitmap words, value order and
 * sizes).  Calls are built and results decoded here, independently of
 * the server's encoders.  The cases on an export run on both backends of
 * the file-serving layer (test_nfs4_harness.h).
 */
#include "test_nfs4_harness.h"

#include "common/be.h"
#include "nfs4/nfs4_deleg.h"
#include "fs/fs_backend.h"

static int setup(void **state)
{
	return t4_setup(state, "rw,no_root_squash,fsid=7");
}

static int teardown(void **state)
{
	return t4_teardown(state);
}

/* ---- the COMPOUND header ---- */

static void test_header_decode(void **state)
{
	uint8_t buf[2048];
	struct rpcrdma_xdr xs;
	struct nfs4_compound_hdr h;
	(void)state;

	/* tag "ab", minor 1, 3 ops */
	memcpy(buf, "\0\0\0\2ab\0\0\0\0\0\1\0\0\0\3", 16);
	rpcrdma_xdr_init(&xs, buf, 16);
	assert_int_equal(nfs4_compound_decode_header(&xs, &h), NFS4_OK);
	assert_int_equal(h.ch_taglen, 2);
	assert_int_equal(h.ch_nops, 3);
	/* short: no operation count */
	rpcrdma_xdr_init(&xs, buf, 12);
	assert_int_equal(nfs4_compound_decode_header(&xs, &h), NFS4ERR_BADXDR);
	/* minor versions 0 and 2 */
	buf[11] = 0;
	rpcrdma_xdr_init(&xs, buf, 16);
	assert_int_equal(nfs4_compound_decode_header(&xs, &h), NFS4ERR_MINOR_VERS_MISMATCH);
	buf[11] = 2;
	rpcrdma_xdr_init(&xs, buf, 16);
	assert_int_equal(nfs4_compound_decode_header(&xs, &h), NFS4ERR_MINOR_VERS_MISMATCH);
	/* 65 operations: over NFS4_COMPOUND_MAX_OPS (64) */
	buf[11] = 1;
	buf[15] = 65;
	rpcrdma_xdr_init(&xs, buf, 16);
	assert_int_equal(nfs4_compound_decode_header(&xs, &h), NFS4ERR_TOO_MANY_OPS);
	buf[15] = 64;
	rpcrdma_xdr_init(&xs, buf, 16);
	assert_int_equal(nfs4_compound_decode_header(&xs, &h), NFS4_OK);
	/* a tag of 1025 bytes (over NFS4_TAG_MAX), all there */
	memset(buf, 0, sizeof(buf));
	buf[2] = 0x04;
	buf[3] = 0x01;
	rpcrdma_xdr_init(&xs, buf, sizeof(buf));
	assert_int_equal(nfs4_compound_decode_header(&xs, &h), NFS4ERR_BADXDR);
	assert_int_equal(h.ch_taglen, 0);
}

static void test_compound_errors(void **state)
{
	struct env *e = t4_env(state);
	struct t_call *c = &e->c;
	uint32_t n;

	/* minor version 2: the tag comes back, no results */
	c_begin(e, 2, 1);
	t_u32(c, OP_PUTROOTFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_MINOR_VERS_MISMATCH);
	assert_int_equal(n, 0);
	assert_int_equal(c->rlen, 16);
	/* 1000 operations announced */
	c_begin(e, 1, 1000);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_TOO_MANY_OPS);
	assert_int_equal(n, 0);
	/* an operation outside a session */
	c_begin(e, 1, 2);
	t_u32(c, OP_PUTROOTFH);
	t_u32(c, OP_GETFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_OP_NOT_IN_SESSION);
	assert_int_equal(n, 1);
	assert_int_equal(r_op(c, OP_PUTROOTFH), NFS4ERR_OP_NOT_IN_SESSION);
	/* an operation number outside the protocol: answered as OP_ILLEGAL */
	c_begin(e, 1, 1);
	t_u32(c, 2);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_OP_ILLEGAL);
	assert_int_equal(n, 1);
	assert_int_equal(r_op(c, OP_ILLEGAL), NFS4ERR_OP_ILLEGAL);
	/* EXCHANGE_ID with another operation */
	c_begin(e, 1, 2);
	t_u32(c, OP_EXCHANGE_ID);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_NOT_ONLY_OP);
	/* EXCHANGE_ID cut short */
	c_begin(e, 1, 1);
	t_u32(c, OP_EXCHANGE_ID);
	t_u32(c, 1);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_BADXDR);
	assert_int_equal(r_op(c, OP_EXCHANGE_ID), NFS4ERR_BADXDR);
	/* no second operation where 1 was announced: only what is there */
	c_begin(e, 1, 0);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	assert_int_equal(n, 0);
	/* NULL and other versions */
	c_begin(e, 1, 0);
	c->req.rq_msg.rm_proc = 0;
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(c->rlen, 0);
	c->req.rq_msg.rm_proc = 2;
	assert_int_equal(c_run(e), RPCRDMA_SVC_PROC_UNAVAIL);
	c->req.rq_msg.rm_vers = 3;
	assert_int_equal(c_run(e), RPCRDMA_SVC_PROG_MISMATCH);
}

static void test_sessions(void **state)
{
	struct env *e = t4_env(state);
	struct t_call *c = &e->c;
	uint8_t first[512];
	size_t first_len;
	uint32_t n, seq, flags;
	uint64_t id2;

	session(e);
	/* CREATE_SESSION again with the same sequence: the same answer */
	c_create_session(e, e->clientid, 1);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	assert_int_equal(r_op(c, OP_CREATE_SESSION), NFS4_OK);
	assert_memory_equal(c->res + c->rpos, e->sid, 16);
	/* a sequence ahead: misordered */
	c_create_session(e, e->clientid, 5);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_SEQ_MISORDERED);
	/* an unknown client */
	c_create_session(e, e->clientid ^ 0x100, 2);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_STALE_CLIENTID);
	/* EXCHANGE_ID again: the record is confirmed now */
	do_exchange_id(e, "unit-test-client", &id2, &seq, &flags);
	assert_true(id2 == e->clientid);
	assert_true(flags & EXCHGID4_FLAG_CONFIRMED_R);
	assert_int_equal(seq, 2);

	/* SEQUENCE, PUTROOTFH, GETFH */
	c_begin(e, 1, 3);
	c_sequence(e, 1, 0);
	t_u32(c, OP_PUTROOTFH);
	t_u32(c, OP_GETFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	assert_int_equal(n, 3);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	assert_memory_equal(c->res + c->rpos, e->sid, 16);
	r_skip(c, 16);
	assert_int_equal(r_u32(c), 1);                  /* sequenceid */
	assert_int_equal(r_u32(c), 0);                  /* slotid */
	assert_int_equal(r_u32(c), NFS4_MAX_SLOTS - 1); /* highest */
	assert_int_equal(r_u32(c), NFS4_MAX_SLOTS - 1); /* target */
	assert_int_equal(r_u32(c), 0);                  /* no status flags */
	first_len = c->rlen;
	assert_true(first_len <= sizeof(first));
	memcpy(first, c->res, first_len);
	/* the same request again: the kept reply, byte for byte */
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(c->rlen, first_len);
	assert_memory_equal(c->res, first, first_len);
	/* sequence id 3 on slot 0 (2 expected): misordered */
	c_begin(e, 1, 1);
	c_sequence(e, 3, 0);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_SEQ_MISORDERED);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4ERR_SEQ_MISORDERED);
	/* a slot beyond the table */
	c_begin(e, 1, 1);
	c_sequence(e, 1, NFS4_MAX_SLOTS);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_BADSLOT);
	/* slot 1 starts at 1 on its own */
	c_begin(e, 1, 1);
	c_sequence(e, 1, 1);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	/* an operation the server does not implement (LAYOUTGET): NOTSUPP */
	c_begin(e, 1, 2);
	c_sequence(e, 2, 0);
	t_u32(c, OP_LAYOUTGET);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_NOTSUPP);
	assert_int_equal(n, 2);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	assert_int_equal(r_op(c, OP_LAYOUTGET), NFS4ERR_NOTSUPP);
	/* SEQUENCE twice */
	c_begin(e, 1, 2);
	c_sequence(e, 3, 0);
	c_sequence(e, 4, 0);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_SEQUENCE_POS);
	assert_int_equal(n, 2);
	/* more operations than the session's 16: the slot does not advance */
	c_begin(e, 1, 17);
	c_sequence(e, 4, 0);
	for (int i = 0; i < 16; i++)
		t_u32(c, OP_GETFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_TOO_MANY_OPS);
	assert_int_equal(n, 1);
	/* RECLAIM_COMPLETE once; twice is COMPLETE_ALREADY */
	c_begin(e, 1, 2);
	c_sequence(e, 4, 0);
	t_u32(c, OP_RECLAIM_COMPLETE);
	t_u32(c, 0);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	c_begin(e, 1, 2);
	c_sequence(e, 5, 0);
	t_u32(c, OP_RECLAIM_COMPLETE);
	t_u32(c, 0);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_COMPLETE_ALREADY);
	/* DESTROY_CLIENTID while a session lives: busy */
	c_begin(e, 1, 1);
	t_u32(c, OP_DESTROY_CLIENTID);
	t_u64(c, e->clientid);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_CLIENTID_BUSY);
	/* DESTROY_SESSION, then the session is gone */
	c_begin(e, 1, 1);
	t_u32(c, OP_DESTROY_SESSION);
	c_fixed(c, e->sid, 16);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	c_begin(e, 1, 1);
	c_sequence(e, 6, 0);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_BADSESSION);
	c_begin(e, 1, 1);
	t_u32(c, OP_DESTROY_CLIENTID);
	t_u64(c, e->clientid);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
}

/* the slot table and the state limits, without the wire */
static void test_state_tables(void **state)
{
	struct nfs4_state *st;
	struct nfs4_exid_res er;
	struct nfs4_chan_attrs fore = { 0, 4096, 4096, 4096, 16, 4, 0, 0 }, back = fore;
	struct nfs4_cs_res cs;
	struct nfs4_seq_res sr;
	struct nfs4_state_counts cnt;
	struct nfs4_session *se;
	uint8_t verf[8] = { 1 }, buf[NFS4_SLOT_CACHE_BYTES], big[NFS4_SLOT_CACHE_BYTES + 1];
	char owner[32];
	(void)state;

	assert_int_equal(nfs4_state_create(77, 90, NULL, &st), 0);
	assert_int_equal(nfs4_exchange_id(st, verf, (const uint8_t *)"o", 1, 0, &er), NFS4_OK);
	assert_int_equal(nfs4_create_session(st, er.er_clientid, er.er_sequenceid, 0,
					     &fore, &back, &cs), NFS4_OK);
	assert_int_equal(cs.cr_fore.ca_maxrequests, 4);
	sr.sr_replay_buf = buf;
	/* slot 2, sequence 1: new; again while it runs: DELAY */
	assert_int_equal(nfs4_sequence(st, cs.cr_sessionid, 1, 2, 3, 1, &sr), NFS4_OK);
	se = sr.sr_session;
	assert_non_null(se);
	assert_int_equal(nfs4_sequence(st, cs.cr_sessionid, 1, 2, 3, 1, &sr), NFS4ERR_DELAY);
	/* more operations than the session's 16: refused, the slot untouched */
	assert_int_equal(nfs4_sequence(st, cs.cr_sessionid, 2, 1, 3, 17, &sr),
			 NFS4ERR_TOO_MANY_OPS);
	nfs4_sequence_done(st, se, 2, (const uint8_t *)"abc", 3);
	/* the retry gets "abc" */
	assert_int_equal(nfs4_sequence(st, cs.cr_sessionid, 1, 2, 3, 1, &sr), NFS4_OK);
	assert_true(sr.sr_replay && !sr.sr_uncached);
	assert_int_equal(sr.sr_replay_len, 3);
	assert_memory_equal(buf, "abc", 3);
	/* sequence 0 and 3: misordered; slot 4 of 4: bad */
	assert_int_equal(nfs4_sequence(st, cs.cr_sessionid, 0, 2, 3, 1, &sr), NFS4ERR_SEQ_MISORDERED);
	assert_int_equal(nfs4_sequence(st, cs.cr_sessionid, 3, 2, 3, 1, &sr), NFS4ERR_SEQ_MISORDERED);
	assert_int_equal(nfs4_sequence(st, cs.cr_sessionid, 1, 4, 3, 1, &sr), NFS4ERR_BADSLOT);
	/* a reply too large to keep: its retry is uncached */
	assert_int_equal(nfs4_sequence(st, cs.cr_sessionid, 2, 2, 3, 1, &sr), NFS4_OK);
	memset(big, 7, sizeof(big));
	nfs4_sequence_done(st, sr.sr_session, 2, big, sizeof(big));
	assert_int_equal(nfs4_sequence(st, cs.cr_sessionid, 2, 2, 3, 1, &sr), NFS4_OK);
	assert_true(sr.sr_replay && sr.sr_uncached);
	/* the client table is bounded: RPCRDMA_NFS4_CLIENTS_DEFAULT records; a new
	 * client takes back an unconfirmed one (test_nfs4_lease.c has the
	 * bound of confirmed clients) */
	for (unsigned i = 1; i < RPCRDMA_NFS4_CLIENTS_DEFAULT; i++) {
		snprintf(owner, sizeof(owner), "client-%u", i);
		assert_int_equal(nfs4_exchange_id(st, verf, (const uint8_t *)owner,
						  (uint32_t)strlen(owner), 0, &er), NFS4_OK);
	}
	assert_int_equal(nfs4_exchange_id(st, verf, (const uint8_t *)"one-more", 8, 0, &er),
			 NFS4_OK);
	nfs4_state_counts(st, &cnt);
	assert_int_equal(cnt.sc_clients, RPCRDMA_NFS4_CLIENTS_DEFAULT);
	assert_int_equal(cnt.sc_sessions, 1);
	nfs4_state_destroy(st);
}

static void test_open_states(void **state)
{
	struct nfs4_state *st;
	struct nfs4_exid_res er;
	struct nfs4_stateid s1, s2, s3;
	uint8_t verf[8] = { 2 };
	uint32_t access;
	(void)state;

	assert_int_equal(nfs4_state_create(5, 90, NULL, &st), 0);
	assert_int_equal(nfs4_exchange_id(st, verf, (const uint8_t *)"c", 1, 0, &er), NFS4_OK);
	assert_int_equal(nfs4_open_add(st, er.er_clientid, (const uint8_t *)"own", 3,
				       (const uint8_t *)"FH1", 3, OPEN4_SHARE_ACCESS_READ, 0, &s1),
			 NFS4_OK);
	assert_int_equal(s1.si_seqid, 1);
	/* the same owner and file: the same state, upgraded */
	assert_int_equal(nfs4_open_add(st, er.er_clientid, (const uint8_t *)"own", 3,
				       (const uint8_t *)"FH1", 3, OPEN4_SHARE_ACCESS_WRITE, 0, &s2),
			 NFS4_OK);
	assert_int_equal(s2.si_seqid, 2);
	assert_memory_equal(s1.si_other, s2.si_other, 12);
	assert_int_equal(nfs4_open_find(st, er.er_clientid, &s2, (const uint8_t *)"FH1", 3,
					&access), NFS4_OK);
	assert_int_equal(access, OPEN4_SHARE_ACCESS_BOTH);
	/* seqid 1 is older; seqid 0 means the current one; another file is bad */
	assert_int_equal(nfs4_open_find(st, er.er_clientid, &s1, (const uint8_t *)"FH1", 3,
					&access), NFS4ERR_OLD_STATEID);
	s1.si_seqid = 0;
	assert_int_equal(nfs4_open_find(st, er.er_clientid, &s1, (const uint8_t *)"FH1", 3,
					&access), NFS4_OK);
	assert_int_equal(nfs4_open_find(st, er.er_clientid, &s2, (const uint8_t *)"FH2", 3,
					&access), NFS4ERR_BAD_STATEID);
	/* share reservations: another owner denied WRITE while "own" writes,
	 * or wanting WRITE while "deny" denies it; READ beside it is fine */
	assert_int_equal(nfs4_open_add(st, er.er_clientid, (const uint8_t *)"other", 5,
				       (const uint8_t *)"FH1", 3, OPEN4_SHARE_ACCESS_READ,
				       OPEN4_SHARE_ACCESS_WRITE, &s3), NFS4ERR_SHARE_DENIED);
	assert_int_equal(nfs4_open_add(st, er.er_clientid, (const uint8_t *)"other", 5,
				       (const uint8_t *)"FH1", 3, OPEN4_SHARE_ACCESS_READ, 0, &s3),
			 NFS4_OK);
	assert_int_equal(nfs4_open_add(st, er.er_clientid, (const uint8_t *)"deny", 4,
				       (const uint8_t *)"FH2", 3, OPEN4_SHARE_ACCESS_READ,
				       OPEN4_SHARE_ACCESS_WRITE, &s3), NFS4_OK);
	assert_int_equal(nfs4_open_add(st, er.er_clientid, (const uint8_t *)"own", 3,
				       (const uint8_t *)"FH2", 3, OPEN4_SHARE_ACCESS_WRITE, 0, &s3),
			 NFS4ERR_SHARE_DENIED);
	/* downgrade to READ, then close: the stateid is gone */
	assert_int_equal(nfs4_open_close(st, er.er_clientid, &s2, OPEN4_SHARE_ACCESS_READ, 0,
					 &s3), NFS4_OK);
	assert_int_equal(s3.si_seqid, 3);
	assert_int_equal(nfs4_open_close(st, er.er_clientid, &s3, OPEN4_SHARE_ACCESS_BOTH, 0,
					 &s2), NFS4ERR_INVAL);
	assert_int_equal(nfs4_open_close(st, er.er_clientid, &s3, 0, 0, &s2), NFS4_OK);
	assert_int_equal(nfs4_open_test(st, er.er_clientid, &s3), NFS4ERR_BAD_STATEID);
	/* the anonymous stateid passes */
	memset(&s1, 0, sizeof(s1));
	assert_int_equal(nfs4_open_find(st, er.er_clientid, &s1, (const uint8_t *)"FH1", 3,
					&access), NFS4_OK);
	nfs4_state_destroy(st);
}

static void test_getattr(void **state)
{
	struct env *e = t4_env(state);
	struct t_call *c = &e->c;
	char path[128];
	uint32_t n, nops, len, w0, w1, i;
	const uint8_t *p;

	session(e);
	snprintf(path, sizeof(path), "%s/f", e->dir);
	nops = path_ops(path);
	c_begin(e, 1, 1 + nops + 1);
	c_sequence(e, e->seq++, 0);
	assert_int_equal(c_lookup_ops(e, path), nops);
	/* type(1) size(4) fileid(20); mode(33) numlinks(35) owner(36) owner_group(37) */
	t_u32(c, OP_GETATTR);
	t_u32(c, 2);
	t_u32(c, 1u << 1 | 1u << 4 | 1u << 20);
	t_u32(c, 1u << 1 | 1u << 3 | 1u << 4 | 1u << 5);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	assert_int_equal(n, 1 + nops + 1);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	assert_int_equal(r_op(c, OP_PUTROOTFH), NFS4_OK);
	for (i = 1; i < nops; i++)
		assert_int_equal(r_op(c, OP_LOOKUP), NFS4_OK);
	assert_int_equal(r_op(c, OP_GETATTR), NFS4_OK);
	assert_int_equal(r_u32(c), 2);
	w0 = r_u32(c);
	w1 = r_u32(c);
	assert_int_equal(w0, 0x00100012u);
	assert_int_equal(w1, 0x0000003au);
	len = r_u32(c);
	/* by hand: 4 + 8 + 8 + 4 + 4 + (4 + 4 "1234") + (4 + 4 "5678") */
	if (t4_owned(e))
		assert_int_equal(len, 44);
	assert_int_equal(r_u32(c), NF4REG);
	assert_int_equal(r_u64(c), 5);
	assert_true(r_u64(c) == (uint64_t)e->fst.st_ino);
	assert_int_equal(r_u32(c), 0640);
	assert_int_equal(r_u32(c), 1);
	p = r_opaque(c, &len);
	if (t4_owned(e)) {
		assert_int_equal(len, 4);
		assert_memory_equal(p, "1234", 4);
		p = r_opaque(c, &len);
		assert_int_equal(len, 4);
		assert_memory_equal(p, "5678", 4);
	}

	/* the pseudo root: a directory of fsid (0, 0), fileid 1 */
	c_begin(e, 1, 3);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTROOTFH);
	t_u32(c, OP_GETATTR);
	t_u32(c, 1);
	t_u32(c, 1u << 1 | 1u << 8 | 1u << 20);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	assert_int_equal(r_op(c, OP_PUTROOTFH), NFS4_OK);
	assert_int_equal(r_op(c, OP_GETATTR), NFS4_OK);
	assert_int_equal(r_u32(c), 1);
	assert_int_equal(r_u32(c), 1u << 1 | 1u << 8 | 1u << 20);
	assert_int_equal(r_u32(c), 4 + 16 + 8);
	assert_int_equal(r_u32(c), NF4DIR);
	assert_int_equal(r_u64(c), 0);
	assert_int_equal(r_u64(c), 0);
	assert_int_equal(r_u64(c), 1);

	/* an export's root: fsid (7, 0) from fsid=7; a handle of 4 bytes is bad */
	c_begin(e, 1, 1 + path_ops(e->dir) + 1);
	c_sequence(e, e->seq++, 0);
	c_lookup_ops(e, e->dir);
	t_u32(c, OP_GETATTR);
	t_u32(c, 1);
	t_u32(c, 1u << 8);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	c->rpos = c->rlen - 16;
	assert_int_equal(r_u64(c), 7);
	assert_int_equal(r_u64(c), 0);
	c_begin(e, 1, 2);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTFH);
	t_str(c, "\1xyz");
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_BADHANDLE);
}

static void test_open_write_read(void **state)
{
	struct env *e = t4_env(state);
	struct t_call *c = &e->c;
	uint8_t stateid[16];
	uint32_t n, nops, len, i;
	const uint8_t *p;

	session(e);
	nops = path_ops(e->dir);
	/* OPEN(create "g", UNCHECKED4, mode 0600), WRITE, READ, CLOSE */
	c_begin(e, 1, 1 + nops + 1);
	c_sequence(e, e->seq++, 0);
	c_lookup_ops(e, e->dir);
	t_u32(c, OP_OPEN);
	t_u32(c, 0);
	t_u32(c, OPEN4_SHARE_ACCESS_BOTH);
	t_u32(c, 0);
	t_u64(c, e->clientid);
	t_str(c, "owner-1");
	t_u32(c, OPEN4_CREATE);
	t_u32(c, UNCHECKED4);
	t_u32(c, 2);
	t_u32(c, 0);
	t_u32(c, 1u << 1); /* mode */
	t_u32(c, 4);
	t_u32(c, 0600);
	t_u32(c, CLAIM_NULL);
	t_str(c, "g");
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	for (i = 0; i < nops; i++)
		(void)r_op(c, i ? OP_LOOKUP : OP_PUTROOTFH);
	assert_int_equal(r_op(c, OP_OPEN), NFS4_OK);
	memcpy(stateid, c->res + c->rpos, 16);
	assert_int_equal(r_u32(c), 1); /* seqid of a new open */
	{
		struct stat st;

		assert_int_equal(t4_stat(e, "g", &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_mode & 07777, 0600);
	}
	/* by its path again: WRITE "hello" at 2, READ 10 at 0, CLOSE */
	c_begin(e, 1, 1 + nops + 5);
	c_sequence(e, e->seq++, 0);
	c_lookup_ops(e, e->dir);
	t_u32(c, OP_LOOKUP);
	t_str(c, "g");
	t_u32(c, OP_WRITE);
	c_fixed(c, stateid, 16);
	t_u64(c, 2);
	t_u32(c, FILE_SYNC4);
	t_str(c, "hello");
	t_u32(c, OP_READ);
	c_fixed(c, stateid, 16);
	t_u64(c, 0);
	t_u32(c, 10);
	t_u32(c, OP_CLOSE);
	t_u32(c, 0);
	c_fixed(c, stateid, 16);
	t_u32(c, OP_READ);
	c_fixed(c, stateid, 16);
	t_u64(c, 0);
	t_u32(c, 10);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_BAD_STATEID);
	assert_int_equal(n, 1 + nops + 5);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	for (i = 0; i <= nops; i++)
		assert_int_equal(r_op(c, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
	assert_int_equal(r_op(c, OP_WRITE), NFS4_OK);
	assert_int_equal(r_u32(c), 5);
	assert_int_equal(r_u32(c), FILE_SYNC4);
	r_skip(c, 8);
	assert_int_equal(r_op(c, OP_READ), NFS4_OK);
	assert_int_equal(r_u32(c), 1); /* eof */
	p = r_opaque(c, &len);
	assert_int_equal(len, 7);
	assert_memory_equal(p, "\0\0hello", 7);
	assert_int_equal(r_op(c, OP_CLOSE), NFS4_OK);
	assert_int_equal(r_u32(c), 2);
	r_skip(c, 12);
	assert_int_equal(r_op(c, OP_READ), NFS4ERR_BAD_STATEID);
}

/*
 * c_open - OPEN (create, UNCHECKED4, no attributes) @name in the export
 * for @owner with @access; its stateid into @sid and its handle into @fh.
 */
static void c_open(struct env *e, const char *name, const char *owner,
		   uint32_t access, uint8_t sid[16], uint8_t *fh, uint32_t *fhlen)
{
	struct t_call *c = &e->c;
	uint32_t n, nops = path_ops(e->dir), len;
	const uint8_t *p;

	c_begin(e, 1, 1 + nops + 2);
	c_sequence(e, e->seq++, 0);
	c_lookup_ops(e, e->dir);
	t_u32(c, OP_OPEN);
	t_u32(c, 0);
	t_u32(c, access);
	t_u32(c, 0);
	t_u64(c, e->clientid);
	t_str(c, owner);
	t_u32(c, OPEN4_CREATE);
	t_u32(c, UNCHECKED4);
	t_u32(c, 0);
	t_u32(c, 0);
	t_u32(c, CLAIM_NULL);
	t_str(c, name);
	t_u32(c, OP_GETFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	r_skip(c, 8 + 36);
	for (uint32_t i = 0; i < nops; i++)
		assert_int_equal(r_op(c, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
	assert_int_equal(r_op(c, OP_OPEN), NFS4_OK);
	memcpy(sid, c->res + c->rpos, 16);
	r_skip(c, 16 + 20 + 4);
	(void)r_u32(c); /* attrset: no words */
	assert_int_equal(r_u32(c), OPEN_DELEGATE_NONE);
	assert_int_equal(r_op(c, OP_GETFH), NFS4_OK);
	p = r_opaque(c, &len);
	memcpy(fh, p, len);
	*fhlen = len;
}

/* c_lock - SEQUENCE, PUTFH, then LOCK with a new owner from @open_sid
 * (@lock_sid NULL) or an existing lock stateid.  The LOCK status; on
 * NFS4_OK @out gets the lock stateid, on DENIED *@den_off/@den_len. */
static uint32_t c_lock(struct env *e, const uint8_t *fh, uint32_t fhlen,
		       uint32_t type, uint64_t off, uint64_t len,
		       const uint8_t *open_sid, const char *owner,
		       const uint8_t *lock_sid, uint8_t out[16],
		       uint64_t *den_off, uint64_t *den_len)
{
	struct t_call *c = &e->c;
	uint32_t n, status;

	c_begin(e, 1, 3);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTFH);
	t_opaque(c, fh, fhlen);
	t_u32(c, OP_LOCK);
	t_u32(c, type);
	t_u32(c, 0);
	t_u64(c, off);
	t_u64(c, len);
	if (!lock_sid) {
		t_u32(c, 1);
		t_u32(c, 0);
		c_fixed(c, open_sid, 16);
		t_u32(c, 0);
		t_u64(c, e->clientid);
		t_str(c, owner);
	} else {
		t_u32(c, 0);
		c_fixed(c, lock_sid, 16);
		t_u32(c, 0);
	}
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(c, &n);
	assert_int_equal(n, 3);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	assert_int_equal(r_op(c, OP_PUTFH), NFS4_OK);
	status = r_op(c, OP_LOCK);
	if (status == NFS4_OK)
		memcpy(out, c->res + c->rpos, 16);
	if (status == NFS4ERR_DENIED) {
		*den_off = r_u64(c);
		*den_len = r_u64(c);
		assert_int_equal(r_u32(c), WRITE_LT);
	}
	return status;
}

static void test_locks(void **state)
{
	struct env *e = t4_env(state);
	struct t_call *c = &e->c;
	uint8_t fh[128], s1[16], s2[16], l1[16], l2[16], l3[16];
	uint32_t fhlen, n;
	uint64_t doff = 0, dlen = 0;
	struct t4_locker lk;

	session(e);
	c_open(e, "locked", "open-owner-1", OPEN4_SHARE_ACCESS_BOTH, s1, fh, &fhlen);
	c_open(e, "locked", "open-owner-2", OPEN4_SHARE_ACCESS_BOTH, s2, fh, &fhlen);
	/* owner A write-locks [0, 10) */
	assert_int_equal(c_lock(e, fh, fhlen, WRITE_LT, 0, 10, s1, "lock-A", NULL, l1,
				&doff, &dlen), NFS4_OK);
	assert_int_equal(load_be32(l1), 1);
	/* owner B wants [5, 6): denied, A's range reported */
	assert_int_equal(c_lock(e, fh, fhlen, WRITE_LT, 5, 1, s2, "lock-B", NULL, l2,
				&doff, &dlen), NFS4ERR_DENIED);
	assert_true(doff == 0 && dlen == 10);
	/* LOCKT by B sees the same; by A nothing (its own lock) */
	for (int who = 0; who < 2; who++) {
		c_begin(e, 1, 3);
		c_sequence(e, e->seq++, 0);
		t_u32(c, OP_PUTFH);
		t_opaque(c, fh, fhlen);
		t_u32(c, OP_LOCKT);
		t_u32(c, WRITE_LT);
		t_u64(c, 0);
		t_u64(c, UINT64_MAX);
		t_u64(c, e->clientid);
		t_str(c, who ? "lock-A" : "lock-B");
		assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
		assert_int_equal(r_hdr(c, &n), who ? NFS4_OK : NFS4ERR_DENIED);
	}
	/* B's lock state exists (made by the denied LOCK): B locks [20, 30) */
	assert_int_equal(c_lock(e, fh, fhlen, WRITE_LT, 20, 10, s2, "lock-B", NULL, l2,
				&doff, &dlen), NFS4_OK);
	/* another locker's lock conflicts too (posix: a local process's,
	 * the kernel's OFD locks; memory: the layer's table, as NLM's) */
	t4_locker_open(e, "locked", &lk);
	assert_int_equal(t4_locker_lock(&lk, F_WRLCK, 100, 1, false, NULL), 0);
	assert_int_equal(c_lock(e, fh, fhlen, WRITE_LT, 50, UINT64_MAX, NULL, NULL, l1, l3,
				&doff, &dlen), NFS4ERR_DENIED);
	assert_true(doff == 100 && dlen == 1);
	t4_locker_close(&lk);
	/* bad ranges: length 0, an overflowing end */
	assert_int_equal(c_lock(e, fh, fhlen, WRITE_LT, 0, 0, NULL, NULL, l1, l3,
				&doff, &dlen), NFS4ERR_INVAL);
	assert_int_equal(c_lock(e, fh, fhlen, WRITE_LT, 10, UINT64_MAX - 5, NULL, NULL, l1, l3,
				&doff, &dlen), NFS4ERR_INVAL);
	/* A unlocks: seqid 2; then B gets [0, 10) */
	c_begin(e, 1, 3);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTFH);
	t_opaque(c, fh, fhlen);
	t_u32(c, OP_LOCKU);
	t_u32(c, WRITE_LT);
	t_u32(c, 0);
	c_fixed(c, l1, 16);
	t_u64(c, 0);
	t_u64(c, UINT64_MAX);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	r_skip(c, 8 + 36 + 8);
	assert_int_equal(r_op(c, OP_LOCKU), NFS4_OK);
	assert_int_equal(r_u32(c), 2);
	assert_int_equal(c_lock(e, fh, fhlen, WRITE_LT, 0, 10, NULL, NULL, l2, l3,
				&doff, &dlen), NFS4_OK);
	/* FREE_STATEID of B's lock state releases its locks; twice: BAD */
	for (int i = 0; i < 2; i++) {
		c_begin(e, 1, 2);
		c_sequence(e, e->seq++, 0);
		t_u32(c, OP_FREE_STATEID);
		c_fixed(c, l3, 16);
		assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
		assert_int_equal(r_hdr(c, &n), i ? NFS4ERR_BAD_STATEID : NFS4_OK);
	}
	/* an open stateid still open: LOCKS_HELD */
	c_begin(e, 1, 2);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_FREE_STATEID);
	c_fixed(c, s1, 16);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_LOCKS_HELD);
	t4_locker_open(e, "locked", &lk);
	assert_int_equal(t4_locker_lock(&lk, F_WRLCK, 0, 30, false, NULL), 0); /* nothing left */
	t4_locker_close(&lk);
}

/* the pseudo file system and the handle operations around it */
/* v3_write - an NFSv3 WRITE of 3 bytes at 0 of @fh through the NFSv3
 * server under the NFSv4.1 one: its nfsstat3. */
static uint32_t v3_write(struct env *e, const uint8_t *fh, uint32_t fhlen)
{
	struct t_call *c = &e->c;
	struct sockaddr_in *sin = (struct sockaddr_in *)&c->req.rq_peer;

	t_begin(c, 7 /* NFSPROC3_WRITE */, 0, 0);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	t_opaque(c, fh, fhlen);
	t_u64(c, 0);
	t_u32(c, 3);
	t_u32(c, 2); /* FILE_SYNC */
	t_opaque(c, "new", 3);
	memset(c->res, 0xee, T_RES_BYTES);
	rpcrdma_xdr_init(&c->req.rq_args, c->args, c->alen);
	rpcrdma_xdr_init(&c->req.rq_res, c->res, T_RES_BYTES);
	assert_int_equal(rpcrdma_nfs3_server_dispatch(&c->req, e->srv3), RPCRDMA_SVC_SUCCESS);
	rpcrdma_nfs3_thread_release();
	c->rlen = c->req.rq_res.xs_pos;
	c->rpos = 0;
	return r_u32(c);
}

/* An NFSv3 WRITE of a file an NFSv4.1 client holds a read delegation of
 * waits (NFS3ERR_JUKEBOX, 10008) until the delegation is returned (RFC
 * 8881 10.4.4; the NFSv3 change hook). */
static void test_nfs3_recalls(void **state)
{
	struct env *e = t4_env(state);
	uint8_t fh[128], sid[16];
	uint32_t fhlen;
	struct nfs4_stateid ds;
	struct nfs4_deleg_counts dc;

	session(e);
	/* no back channel here: OPEN grants none, so grant one by hand */
	c_open(e, "deleg", "open-owner-1", OPEN4_SHARE_ACCESS_READ, sid, fh, &fhlen);
	assert_int_equal(v3_write(e, fh, fhlen), 0);
	assert_true(nfs4_deleg_grant(e->srv4->s4_deleg, e->clientid, fh, fhlen, false, &ds));
	assert_int_equal(v3_write(e, fh, fhlen), 10008);
	assert_int_equal(v3_write(e, fh, fhlen), 10008);
	/* TEST_STATEID knows the delegation stateid (and a forged one not) */
	{
		struct t_call *c = &e->c;
		uint32_t n;

		c_begin(e, 1, 2);
		c_sequence(e, e->seq++, 0);
		t_u32(c, OP_TEST_STATEID);
		t_u32(c, 2);
		t_u32(c, ds.si_seqid);
		c_fixed(c, ds.si_other, 12);
		t_u32(c, ds.si_seqid);
		ds.si_other[11] ^= 0x40;
		c_fixed(c, ds.si_other, 12);
		ds.si_other[11] ^= 0x40;
		assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
		assert_int_equal(r_hdr(c, &n), NFS4_OK);
		assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
		r_skip(c, 16 + 20);
		assert_int_equal(r_op(c, OP_TEST_STATEID), NFS4_OK);
		assert_int_equal(r_u32(c), 2);
		assert_int_equal(r_u32(c), NFS4_OK);
		assert_int_equal(r_u32(c), NFS4ERR_BAD_STATEID);
	}
	nfs4_deleg_counts(e->srv4->s4_deleg, &dc);
	assert_int_equal(dc.dc_recalled, 1);
	assert_int_equal(dc.dc_delays, 2);
	assert_int_equal(nfs4_deleg_return(e->srv4->s4_deleg, e->clientid, &ds, fh, fhlen),
			 NFS4_OK);
	assert_int_equal(v3_write(e, fh, fhlen), 0);
}

/*
 * The operator reloads the exports (SIGHUP) without the export while a
 * client holds an open and a lock on one of its files: the file's handle
 * is then NFS4ERR_STALE (the export is not in the table in force; docs/
 * nfs4.md "What is shared with NFSv3"), the session goes on serving, and
 * the state the client holds is not dropped behind its back -- on posix
 * its lock still excludes a local process (an OFD lock of the server's
 * description).  When the server's state ends (the server destroyed, as
 * at its exit) the description is closed: the local process gets the
 * bytes, and on memory the export's tree outlived the description (ASan
 * sees any use after its free).  The NLM side of the same reload is
 * test_nlm_svc's test_reload_drops_export.
 */
static void test_reload_drops_export_with_state(void **state)
{
	struct env *e = t4_env(state);
	struct rpcrdma_nfs3_exports *xt;
	uint8_t fh[128], s1[16], l1[16];
	uint32_t fhlen, n;
	uint64_t doff = 0, dlen = 0;
	char other[128], text[512], err[256];
	struct t4_locker lk;
	int fd = -1;

	session(e);
	c_open(e, "held", "open-owner-r", OPEN4_SHARE_ACCESS_BOTH, s1, fh, &fhlen);
	assert_int_equal(c_lock(e, fh, fhlen, WRITE_LT, 0, 10, s1, "lock-r", NULL, l1,
				&doff, &dlen), NFS4_OK);
	t4_locker_open(e, "held", &lk);
	assert_int_equal(t4_locker_lock(&lk, F_WRLCK, 5, 1, false, NULL), -EAGAIN);
	t4_locker_close(&lk);
	if (!e->mem) {
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/held", e->dir);
		fd = open(p, O_RDWR);
		assert_true(fd >= 0);
	}

	/* the new table: another directory, not e->dir */
	if (e->mem) {
		snprintf(other, sizeof(other), "/mem/nfs4t-other.%d", (int)getpid());
	} else {
		strcpy(other, "/tmp/nfs4t-other.XXXXXX");
		assert_non_null(mkdtemp(other));
	}
	snprintf(text, sizeof(text), "%s *(rw,no_root_squash,fsid=99%s)\n", other,
		 t4_be_opt(e));
	assert_int_equal(rpcrdma_nfs3_exports_parse("test", text, &xt, err, sizeof(err)), 0);
	assert_int_equal(rpcrdma_nfs3_server_reload(e->srv3, xt, err, sizeof(err)), 0);
	rpcrdma_nfs3_exports_free(xt);

	/* the handle: STALE; the session: still serving */
	c_begin(e, 1, 2);
	c_sequence(e, e->seq++, 0);
	t_u32(&e->c, OP_PUTFH);
	t_opaque(&e->c, fh, fhlen);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(&e->c, &n), NFS4ERR_STALE);
	c_begin(e, 1, 2);
	c_sequence(e, e->seq++, 0);
	t_u32(&e->c, OP_PUTROOTFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	/* the lock was not dropped behind the client's back */
	if (fd >= 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				    .l_start = 5, .l_len = 1 };

		assert_int_equal(fcntl(fd, F_OFD_SETLK, &fl), -1);
	}

	/* the server's state ends: the description is closed */
	rpcrdma_nfs4_server_destroy(e->srv4);
	e->srv4 = NULL;
	rpcrdma_nfs3_server_destroy(e->srv3);
	e->srv3 = NULL;
	if (fd >= 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				    .l_start = 5, .l_len = 1 };

		assert_int_equal(fcntl(fd, F_OFD_SETLK, &fl), 0);
		close(fd);
		rmdir(other);
	}
}


static void test_pseudo_fs(void **state)
{
	struct env *e = t4_env(state);
	struct t_call *c = &e->c;
	uint32_t n, nops = path_ops(e->dir), len, i;
	const uint8_t *p, *root;
	uint8_t rootfh[128];
	uint32_t rootlen;
	char first[64];
	size_t flen;

	session(e);
	/* PUTROOTFH, GETFH: an 8-byte pseudo handle (0x84, depth 0) */
	c_begin(e, 1, 3);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTROOTFH);
	t_u32(c, OP_GETFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	r_skip(c, 8 + 36 + 8 + 8);
	root = r_opaque(c, &rootlen);
	assert_int_equal(rootlen, NFS4_PSEUDO_FH_LEN);
	assert_int_equal(root[0], NFS4_PSEUDO_FH_VERSION);
	assert_int_equal(root[1], 0);
	memcpy(rootfh, root, rootlen);

	/* READDIR of the pseudo root: one entry, the first component */
	flen = strcspn(e->dir + 1, "/");
	memcpy(first, e->dir + 1, flen);
	first[flen] = 0;
	c_begin(e, 1, 3);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTFH);
	t_opaque(c, rootfh, rootlen);
	t_u32(c, OP_READDIR);
	t_u64(c, 0);
	t_u64(c, 0);
	t_u32(c, 4096);
	t_u32(c, 8192);
	t_u32(c, 1);
	t_u32(c, 1u << FATTR4_TYPE);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	r_skip(c, 8 + 36 + 8);
	assert_int_equal(r_op(c, OP_READDIR), NFS4_OK);
	r_skip(c, 8);                       /* cookieverf */
	assert_int_equal(r_u32(c), 1);      /* an entry */
	(void)r_u64(c);                     /* its cookie */
	p = r_opaque(c, &len);
	assert_int_equal(len, flen);
	assert_memory_equal(p, first, flen);
	assert_int_equal(r_u32(c), 1);      /* bitmap: one word */
	assert_int_equal(r_u32(c), 1u << FATTR4_TYPE);
	assert_int_equal(r_u32(c), 4);
	assert_int_equal(r_u32(c), NF4DIR); /* a pseudo directory or the export */
	assert_int_equal(r_u32(c), 0);      /* no more */
	assert_int_equal(r_u32(c), 1);      /* eof */

	/* down to the export, LOOKUPP back up to the pseudo root; LOOKUPP of
	 * the root is NOENT; a name not exported is NOENT; RESTOREFH without
	 * SAVEFH is RESTOREFH; SECINFO_NO_NAME consumes the handle */
	c_begin(e, 1, 1 + nops + nops);
	c_sequence(e, e->seq++, 0);
	c_lookup_ops(e, e->dir);
	for (i = 1; i < nops; i++)
		t_u32(c, OP_LOOKUPP);
	t_u32(c, OP_LOOKUPP);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_NOENT);
	assert_int_equal(n, 1 + nops + nops);
	c_begin(e, 1, 3);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTROOTFH);
	t_u32(c, OP_LOOKUP);
	t_str(c, "not-exported");
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_NOENT);
	c_begin(e, 1, 3);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTROOTFH);
	t_u32(c, OP_RESTOREFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_RESTOREFH);
	c_begin(e, 1, 4);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTROOTFH);
	t_u32(c, OP_SECINFO_NO_NAME);
	t_u32(c, SECINFO_STYLE4_CURRENT_FH);
	t_u32(c, OP_GETFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_NOFILEHANDLE);
	r_skip(c, 8 + 36 + 8);
	assert_int_equal(r_op(c, OP_SECINFO_NO_NAME), NFS4_OK);
	assert_int_equal(r_u32(c), 1);
	assert_int_equal(r_u32(c), NFS4_AUTH_SYS);
	assert_int_equal(r_op(c, OP_GETFH), NFS4ERR_NOFILEHANDLE);
	/* names: "..", "a/b", empty, 256 bytes */
	{
		static const struct { const char *name; uint32_t status; } bad[] = {
			{ "..", NFS4ERR_BADNAME }, { "a/b", NFS4ERR_BADNAME },
			{ "", NFS4ERR_INVAL },
		};
		char longname[257];

		for (i = 0; i < 4; i++) {
			c_begin(e, 1, 1 + nops + 1);
			c_sequence(e, e->seq++, 0);
			c_lookup_ops(e, e->dir);
			t_u32(c, OP_LOOKUP);
			if (i < 3) {
				t_str(c, bad[i].name);
			} else {
				memset(longname, 'x', 256);
				longname[256] = 0;
				t_str(c, longname);
			}
			assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
			assert_int_equal(r_hdr(c, &n), i < 3 ? bad[i].status : NFS4ERR_NAMETOOLONG);
		}
	}
	/* the export's root: the same handle as NFSv3's MOUNT gives */
	{
		struct fs_snap *sn = fs_snap_get(e->srv3);
		uint8_t v3fh[RPCRDMA_NFS3_FHSIZE];
		uint32_t v3len;

		assert_int_equal(rpcrdma_nfs3_root_fh(sn->sn_exp[0], v3fh, &v3len), 0);
		fs_snap_put(sn);
		c_begin(e, 1, 1 + nops + 1);
		c_sequence(e, e->seq++, 0);
		c_lookup_ops(e, e->dir);
		t_u32(c, OP_GETFH);
		assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
		assert_int_equal(r_hdr(c, &n), NFS4_OK);
		r_skip(c, 8 + 36);
		for (i = 0; i < nops; i++)
			assert_int_equal(r_op(c, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
		assert_int_equal(r_op(c, OP_GETFH), NFS4_OK);
		p = r_opaque(c, &len);
		assert_int_equal(len, v3len);
		assert_memory_equal(p, v3fh, len);
	}
	/* writes into the pseudo file system: read-only */
	c_begin(e, 1, 3);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTROOTFH);
	t_u32(c, OP_CREATE);
	t_u32(c, NF4DIR);
	t_str(c, "new");
	t_u32(c, 0);
	t_u32(c, 0);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4ERR_ROFS);
}

/*
 * Random operations after a valid SEQUENCE (a fixed-seed generator, so
 * the run is the same every time): every COMPOUND gets a well-formed
 * answer whose status is its last result's, nothing crashes or leaks
 * (ASan), and the session still works afterwards.
 */
static void test_garbage(void **state)
{
	struct env *e = t4_env(state);
	struct t_call *c = &e->c;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	uint32_t n, status, last = 0, ran_ok = 0, bad_xdr = 0;

	session(e);
	for (int iter = 0; iter < 3000; iter++) {
		uint32_t nops = 1 + (uint32_t)((rng >> 33) % 6), pre = 0;

		/* half of them start at the export's root, so that the
		 * operations reach real objects */
		if (iter % 2)
			pre = path_ops(e->dir);
		c_begin(e, 1, pre + nops + 1);
		c_sequence(e, e->seq++, 0);
		if (pre)
			c_lookup_ops(e, e->dir);
		nops += pre;
		for (uint32_t i = pre; i < nops; i++) {
			uint32_t words;

			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			t_u32(c, (uint32_t)(rng >> 40) % 75);
			words = (uint32_t)(rng >> 20) % 24;
			for (uint32_t w = 0; w < words; w++) {
				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				/* small numbers (lengths, counts, enum values) mostly */
				t_u32(c, (rng >> 62) ? (uint32_t)(rng >> 59) % 8 : (uint32_t)(rng >> 32));
			}
		}
		assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
		status = r_hdr(c, &n);
		assert_true(n >= 1 && n <= nops + 1);
		assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
		r_skip(c, 36);
		/* the COMPOUND's status is its last result's */
		for (uint32_t i = 0; i < pre; i++) /* no bodies */
			assert_int_equal(r_op(c, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
		for (uint32_t i = 1 + pre; i < n; i++) {
			(void)r_u32(c);
			last = r_u32(c);
			ran_ok += last == NFS4_OK;
			bad_xdr += last == NFS4ERR_BADXDR;
			if (i + 1 < n) {
				assert_int_equal(last, NFS4_OK);
				c->rpos = c->rlen; /* bodies not decoded: stop here */
				break;
			}
		}
		if (n == 1)
			assert_int_equal(status, NFS4_OK);
		else if (c->rpos != c->rlen)
			assert_int_equal(status, last);
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	}
	print_message("garbage: %u first operations succeeded, %u BADXDR\n", ran_ok, bad_xdr);
	/* the generator reaches both the operations and their decoders */
	assert_true(ran_ok >= 100 && bad_xdr >= 100);
	/* still a working session */
	c_begin(e, 1, 2);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTROOTFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
}

/* ---- restarts: client records and the grace period (RFC 8881 8.4.2) ---- */

/* c_open_fh - SEQUENCE, PUTFH @fh, OPEN NOCREATE of it read-write by
 * @owner with @claim (CLAIM_FH or CLAIM_PREVIOUS); the OPEN status, the
 * stateid into @sid on NFS4_OK. */
static uint32_t c_open_fh(struct env *e, const uint8_t *fh, uint32_t fhlen,
			  const char *owner, uint32_t claim, uint8_t sid[16])
{
	struct t_call *c = &e->c;
	uint32_t n, status;

	c_begin(e, 1, 3);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTFH);
	t_opaque(c, fh, fhlen);
	t_u32(c, OP_OPEN);
	t_u32(c, 0);
	t_u32(c, OPEN4_SHARE_ACCESS_BOTH);
	t_u32(c, 0);
	t_u64(c, e->clientid);
	t_str(c, owner);
	t_u32(c, OPEN4_NOCREATE);
	t_u32(c, claim);
	if (claim == CLAIM_PREVIOUS)
		t_u32(c, OPEN_DELEGATE_NONE);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(c, &n);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	assert_int_equal(r_op(c, OP_PUTFH), NFS4_OK);
	status = r_op(c, OP_OPEN);
	if (status == NFS4_OK)
		memcpy(sid, c->res + c->rpos, 16);
	return status;
}

/* c_lock_new - LOCK (WRITE_LT, bytes 0-9) by a new lock-owner from
 * @open_sid, a reclaim or not; the LOCK status. */
static uint32_t c_lock_new(struct env *e, const uint8_t *fh, uint32_t fhlen,
			   const uint8_t *open_sid, const char *owner, bool reclaim)
{
	struct t_call *c = &e->c;
	uint32_t n;

	c_begin(e, 1, 3);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_PUTFH);
	t_opaque(c, fh, fhlen);
	t_u32(c, OP_LOCK);
	t_u32(c, WRITE_LT);
	t_u32(c, reclaim);
	t_u64(c, 0);
	t_u64(c, 10);
	t_u32(c, 1);
	t_u32(c, 0);
	c_fixed(c, open_sid, 16);
	t_u32(c, 0);
	t_u64(c, e->clientid);
	t_str(c, owner);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(c, &n);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	assert_int_equal(r_op(c, OP_PUTFH), NFS4_OK);
	return r_op(c, OP_LOCK);
}

/* c_remove_cinfo - c_remove(), and the directory's change_info4 */
static uint32_t c_remove_cinfo(struct env *e, const char *name, uint32_t *atomic,
			       uint64_t *before, uint64_t *after)
{
	struct t_call *c = &e->c;
	uint32_t n, nops = path_ops(e->dir), status;

	c_begin(e, 1, 1 + nops + 1);
	c_sequence(e, e->seq++, 0);
	c_lookup_ops(e, e->dir);
	t_u32(c, OP_REMOVE);
	t_str(c, name);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(c, &n);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	for (uint32_t i = 0; i < nops; i++)
		assert_int_equal(r_op(c, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
	status = r_op(c, OP_REMOVE);
	if (status == NFS4_OK) {
		*atomic = r_u32(c);
		*before = r_u64(c);
		*after = r_u64(c);
	}
	return status;
}

/* c_remove - SEQUENCE, the export's path, REMOVE @name: REMOVE's status */
static uint32_t c_remove(struct env *e, const char *name)
{
	uint64_t before, after;
	uint32_t atomic;

	return c_remove_cinfo(e, name, &atomic, &before, &after);
}

static uint32_t c_reclaim_complete(struct env *e)
{
	struct t_call *c = &e->c;
	uint32_t n;

	c_begin(e, 1, 2);
	c_sequence(e, e->seq++, 0);
	t_u32(c, OP_RECLAIM_COMPLETE);
	t_u32(c, 0);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(c, &n);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	return r_op(c, OP_RECLAIM_COMPLETE);
}

/* The state directory of a restart test: the export's ".state", or on
 * the memory backend (the records are the server's own files: on a real
 * directory) ".state" in a temporary directory of its own; the server's
 * log goes to /dev/null meanwhile.  t4_state_dir_end() undoes it all. */
struct t4_sdir {
	char sd_path[96];
	char sd_tmp[64];   /* memory: the temporary directory; else "" */
};

static void t4_state_dir(struct env *e, struct t4_sdir *sd)
{
	sd->sd_tmp[0] = 0;
	if (e->mem) {
		strcpy(sd->sd_tmp, "/tmp/nfs4s.XXXXXX");
		assert_non_null(mkdtemp(sd->sd_tmp));
	}
	snprintf(sd->sd_path, sizeof(sd->sd_path), "%s/.state", e->mem ? sd->sd_tmp : e->dir);
	e->log = fopen("/dev/null", "w");
	assert_non_null(e->log);
}

/* The server goes (teardown() finds none), its log closed, the temporary
 * directory removed. */
static void t4_state_dir_end(struct env *e, struct t4_sdir *sd)
{
	char cmd[96];

	rpcrdma_nfs4_server_destroy(e->srv4);
	e->srv4 = NULL;
	fclose(e->log);
	if (sd->sd_tmp[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sd->sd_tmp);
		assert_int_equal(system(cmd), 0);
	}
}

/* the server restarted over the same state directory */
static void restart(struct env *e, const char *state_dir)
{
	struct rpcrdma_nfs4_config cfg = {
		.n4_state_dir = state_dir, .n4_grace_sec = 90, .n4_log = e->log,
	};

	rpcrdma_nfs4_server_destroy(e->srv4);
	e->srv4 = NULL;
	assert_int_equal(rpcrdma_nfs4_server_create(e->srv3, &cfg, &e->srv4), 0);
}

static void test_restart_grace(void **state)
{
	struct env *e = t4_env(state);
	struct rpcrdma_nfs4_recovery rv;
	uint8_t fh[128], sid[16], sid2[16];
	struct t4_sdir sd;
	uint32_t fhlen;

	t4_state_dir(e, &sd);
	/* the first start: no record, no grace; an OPEN records the client */
	restart(e, sd.sd_path);
	assert_int_equal(rpcrdma_nfs4_server_recovery(e->srv4, &rv), 0);
	assert_false(rv.n4r_in_grace);
	session(e);
	c_open(e, "g", "owner-1", OPEN4_SHARE_ACCESS_BOTH, sid, fh, &fhlen);
	/* a reclaim outside a grace period */
	assert_int_equal(c_open_fh(e, fh, fhlen, "owner-2", CLAIM_PREVIOUS, sid2),
			 NFS4ERR_NO_GRACE);
	assert_int_equal(c_lock_new(e, fh, fhlen, sid, "lo-1", true), NFS4ERR_NO_GRACE);
	assert_int_equal(rpcrdma_nfs4_server_recovery(e->srv4, &rv), 0);
	assert_int_equal(rv.n4r_records, 1);

	/* the restart: the client's record loaded, a grace period */
	restart(e, sd.sd_path);
	assert_int_equal(rpcrdma_nfs4_server_recovery(e->srv4, &rv), 0);
	assert_true(rv.n4r_in_grace);
	assert_int_equal(rv.n4r_loaded, 1);
	session(e);
	/* in grace: no new open or lock, reclaims served */
	assert_int_equal(c_open_fh(e, fh, fhlen, "owner-1", CLAIM_FH, sid2), NFS4ERR_GRACE);
	assert_int_equal(c_open_fh(e, fh, fhlen, "owner-1", CLAIM_PREVIOUS, sid), NFS4_OK);
	assert_int_equal(c_lock_new(e, fh, fhlen, sid, "lo-1", false), NFS4ERR_GRACE);
	assert_int_equal(c_lock_new(e, fh, fhlen, sid, "lo-1", true), NFS4_OK);
	/* nor a REMOVE, which could take away a file yet to be reclaimed */
	assert_int_equal(c_remove(e, "f"), NFS4ERR_GRACE);
	/* RECLAIM_COMPLETE of the only recorded client ends the grace */
	assert_int_equal(c_reclaim_complete(e), NFS4_OK);
	assert_int_equal(rpcrdma_nfs4_server_recovery(e->srv4, &rv), 0);
	assert_false(rv.n4r_in_grace);
	assert_int_equal(rv.n4r_open_reclaims, 1);
	assert_int_equal(rv.n4r_lock_reclaims, 1);
	assert_int_equal(rv.n4r_grace_refused, 2);
	assert_int_equal(c_open_fh(e, fh, fhlen, "owner-1", CLAIM_PREVIOUS, sid2),
			 NFS4ERR_NO_GRACE);
	assert_int_equal(c_open_fh(e, fh, fhlen, "owner-3", CLAIM_FH, sid2), NFS4_OK);
	assert_int_equal(c_remove(e, "f"), NFS4_OK);
	/* the reclaimed lock holds against another owner */
	assert_int_equal(c_lock_new(e, fh, fhlen, sid2, "lo-3", false), NFS4ERR_DENIED);
	t4_state_dir_end(e, &sd);
}

/* c_read_kind - LOOKUP @name in the export, then READ (anonymous stateid)
 * or LOCKT of it: that operation's status. */
static uint32_t c_read_kind(struct env *e, const char *name, bool lockt)
{
	struct t_call *c = &e->c;
	uint8_t anon[16] = { 0 };
	uint32_t n, nops = path_ops(e->dir);

	c_begin(e, 1, 1 + nops + 2);
	c_sequence(e, e->seq++, 0);
	c_lookup_ops(e, e->dir);
	t_u32(c, OP_LOOKUP);
	t_str(c, name);
	if (lockt) {
		t_u32(c, OP_LOCKT);
		t_u32(c, WRITE_LT);
		t_u64(c, 0);
		t_u64(c, 10);
		t_u64(c, e->clientid);
		t_str(c, "kind-owner");
	} else {
		t_u32(c, OP_READ);
		c_fixed(c, anon, 16);
		t_u64(c, 0);
		t_u32(c, 10);
	}
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(c, &n);
	assert_int_equal(n, 1 + nops + 2);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	for (uint32_t i = 0; i <= nops; i++)
		assert_int_equal(r_op(c, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
	return r_op(c, lockt ? OP_LOCKT : OP_READ);
}

/* RFC 8881 18.22.4, 18.11.4: READ and the lock operations of what is not a
 * regular file: NFS4ERR_ISDIR, NFS4ERR_SYMLINK, else NFS4ERR_WRONG_TYPE. */
static void test_not_regular(void **state)
{
	struct env *e = t4_env(state);

	session(e);
	t4_make(e, "fifo", T4_FIFO, 0644, NULL, 0, -1, -1);
	t4_make(e, "link", T4_SYMLINK, 0777, "f", 1, -1, -1);
	t4_mkdir(e, "sub", 0755);
	assert_int_equal(c_read_kind(e, "fifo", false), NFS4ERR_WRONG_TYPE);
	assert_int_equal(c_read_kind(e, "fifo", true), NFS4ERR_WRONG_TYPE);
	assert_int_equal(c_read_kind(e, "link", false), NFS4ERR_SYMLINK);
	assert_int_equal(c_read_kind(e, "link", true), NFS4ERR_SYMLINK);
	assert_int_equal(c_read_kind(e, "sub", false), NFS4ERR_ISDIR);
	assert_int_equal(c_read_kind(e, "sub", true), NFS4ERR_ISDIR);
	assert_int_equal(c_read_kind(e, "f", false), NFS4_OK);
}

/* RFC 8881 3.3.6 (change_info4): REMOVE's before and after are the
 * directory's change attribute (ctime in nanoseconds) just before and just
 * after the unlink, marked atomic as NFSv3's wcc_data would be. */
static void test_change_info(void **state)
{
	struct env *e = t4_env(state);
	struct stat b, a;
	uint64_t before = 0, after = 0;
	uint32_t atomic = 0;

	session(e);
	t4_mkfile(e, "gone", 0644, "");
	assert_int_equal(t4_stat(e, "", &b), 0);
	assert_int_equal(c_remove_cinfo(e, "gone", &atomic, &before, &after), NFS4_OK);
	assert_int_equal(t4_stat(e, "", &a), 0);
	assert_false(t4_exists(e, "gone"));
	assert_int_equal(atomic, 1);
	assert_true(before == (uint64_t)b.st_ctim.tv_sec * 1000000000u + (uint64_t)b.st_ctim.tv_nsec);
	assert_true(after == (uint64_t)a.st_ctim.tv_sec * 1000000000u + (uint64_t)a.st_ctim.tv_nsec);
}

/*
 * c_open_attrset - OPEN of @name in the export's root by a new owner for
 * reading and writing: @opentype OPEN4_CREATE with @createmode (UNCHECKED4
 * and GUARDED4 with no attributes; EXCLUSIVE4 with verifier @verf;
 * EXCLUSIVE4_1 with @verf and no attributes) or OPEN4_NOCREATE,
 * CLAIM_NULL.  The OPEN's status; its attrset's first two words into
 * @attrset (when not NULL and the OPEN succeeded).
 */
static uint32_t c_open_attrset(struct env *e, const char *name, uint32_t opentype,
			       uint32_t createmode, const uint8_t verf[8],
			       uint32_t attrset[2])
{
	struct t_call *c = &e->c;
	uint32_t n, nops = path_ops(e->dir), status;
	static unsigned owner;
	char own[32];

	snprintf(own, sizeof(own), "how-owner-%u", owner++);
	c_begin(e, 1, 1 + nops + 1);
	c_sequence(e, e->seq++, 0);
	c_lookup_ops(e, e->dir);
	t_u32(c, OP_OPEN);
	t_u32(c, 0);
	t_u32(c, OPEN4_SHARE_ACCESS_BOTH);
	t_u32(c, 0);
	t_u64(c, e->clientid);
	t_str(c, own);
	t_u32(c, opentype);
	if (opentype == OPEN4_CREATE) {
		t_u32(c, createmode);
		if (createmode == EXCLUSIVE4) {
			c_fixed(c, verf, 8);
		} else if (createmode == EXCLUSIVE4_1) {
			c_fixed(c, verf, 8);
			t_u32(c, 0); /* no attributes: empty bitmap, no values */
			t_u32(c, 0);
		} else {
			t_u32(c, 0);
			t_u32(c, 0);
		}
	}
	t_u32(c, CLAIM_NULL);
	t_str(c, name);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(c, &n);
	assert_int_equal(n, 1 + nops + 1);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	for (uint32_t i = 0; i < nops; i++)
		assert_int_equal(r_op(c, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
	status = r_op(c, OP_OPEN);
	if (status == NFS4_OK && attrset) {
		/* stateid (16), change_info4 (20), rflags (4), then attrset */
		r_skip(c, 40);
		n = r_u32(c);
		attrset[0] = n > 0 ? r_u32(c) : 0;
		attrset[1] = n > 1 ? r_u32(c) : 0;
	}
	return status;
}

/* c_open_how - c_open_attrset() without the attrset. */
static uint32_t c_open_how(struct env *e, const char *name, uint32_t opentype,
			   uint32_t createmode, const uint8_t verf[8])
{
	return c_open_attrset(e, name, opentype, createmode, verf, NULL);
}

/*
 * OPEN of names that are not regular files, and the create modes (RFC
 * 8881 18.16.3, 18.16.4): with create (UNCHECKED4) a directory is
 * NFS4ERR_ISDIR, a symlink NFS4ERR_SYMLINK, another type NFS4ERR_EXIST;
 * without, a FIFO is NFS4ERR_INVAL and a missing name NFS4ERR_NOENT;
 * GUARDED4 of an existing file is NFS4ERR_EXIST; EXCLUSIVE4 keeps its
 * verifier in the file's atime and mtime seconds, so its retry is served
 * and another verifier is NFS4ERR_EXIST.
 */
static void test_open_names(void **state)
{
	struct env *e = t4_env(state);
	static const uint8_t v1[8] = { 0, 0, 0x12, 0x34, 0, 0, 0x56, 0x78 };
	static const uint8_t v2[8] = { 0, 0, 0x12, 0x34, 0, 0, 0x56, 0x79 };
	struct stat st;

	session(e);
	t4_mkdir(e, "sub", 0755);
	t4_make(e, "link", T4_SYMLINK, 0777, "f", 1, -1, -1);
	t4_make(e, "fifo", T4_FIFO, 0644, NULL, 0, -1, -1);
	assert_int_equal(c_open_how(e, "sub", OPEN4_CREATE, UNCHECKED4, NULL), NFS4ERR_ISDIR);
	assert_int_equal(c_open_how(e, "link", OPEN4_CREATE, UNCHECKED4, NULL),
			 NFS4ERR_SYMLINK);
	assert_int_equal(c_open_how(e, "fifo", OPEN4_CREATE, UNCHECKED4, NULL), NFS4ERR_EXIST);
	assert_int_equal(c_open_how(e, "sub", OPEN4_NOCREATE, 0, NULL), NFS4ERR_ISDIR);
	assert_int_equal(c_open_how(e, "link", OPEN4_NOCREATE, 0, NULL), NFS4ERR_SYMLINK);
	assert_int_equal(c_open_how(e, "fifo", OPEN4_NOCREATE, 0, NULL), NFS4ERR_INVAL);
	assert_int_equal(c_open_how(e, "none", OPEN4_NOCREATE, 0, NULL), NFS4ERR_NOENT);
	assert_int_equal(c_open_how(e, "f", OPEN4_CREATE, GUARDED4, NULL), NFS4ERR_EXIST);
	assert_int_equal(c_open_how(e, "f", OPEN4_CREATE, UNCHECKED4, NULL), NFS4_OK);
	assert_int_equal(c_open_how(e, "new", OPEN4_CREATE, GUARDED4, NULL), NFS4_OK);
	assert_true(t4_exists(e, "new"));
	/* EXCLUSIVE4: made, the verifier in the times; retried; another */
	assert_int_equal(c_open_how(e, "x", OPEN4_CREATE, EXCLUSIVE4, v1), NFS4_OK);
	assert_int_equal(t4_stat(e, "x", &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_atim.tv_sec, 0x1234);
	assert_int_equal(st.st_mtim.tv_sec, 0x5678);
	assert_int_equal(c_open_how(e, "x", OPEN4_CREATE, EXCLUSIVE4, v1), NFS4_OK);
	assert_int_equal(c_open_how(e, "x", OPEN4_CREATE, EXCLUSIVE4, v2), NFS4ERR_EXIST);
	assert_int_equal(c_open_how(e, "sub", OPEN4_CREATE, EXCLUSIVE4, v1), NFS4ERR_ISDIR);
}

/*
 * RFC 8881 18.16.4: an exclusive create names in attrset the attributes
 * that hold its verifier, here time_access (47: word 1 bit 15) and
 * time_modify (53: word 1 bit 21), on the create and on a retry that
 * matched, so the client sets them next (Linux's SETATTR after an
 * EXCLUSIVE4_1 OPEN sets only what attrset names: without them the
 * verifier stayed in the times, which a WRITE does not lower on CephFS).
 * UNCHECKED4 and GUARDED4 keep nothing there: attrset is what the client
 * asked for, here nothing.
 */
static void test_open_excl_attrset(void **state)
{
	struct env *e = t4_env(state);
	static const uint8_t v1[8] = { 0x80, 0, 0, 1, 0x80, 0, 0, 2 };
	static const uint8_t v2[8] = { 0x80, 0, 0, 1, 0x80, 0, 0, 3 };
	const uint32_t times = 1u << 15 | 1u << 21;
	uint32_t as[2];
	struct stat st;

	session(e);
	memset(as, 0xff, sizeof(as));
	assert_int_equal(c_open_attrset(e, "x41", OPEN4_CREATE, EXCLUSIVE4_1, v1, as), NFS4_OK);
	assert_int_equal(as[0], 0);
	assert_int_equal(as[1], times);
	assert_int_equal(t4_stat(e, "x41", &st), 0);
	assert_int_equal((uint32_t)st.st_atim.tv_sec, 0x80000001u);
	assert_int_equal((uint32_t)st.st_mtim.tv_sec, 0x80000002u);
	memset(as, 0xff, sizeof(as));
	assert_int_equal(c_open_attrset(e, "x41", OPEN4_CREATE, EXCLUSIVE4_1, v1, as), NFS4_OK);
	assert_int_equal(as[0], 0);
	assert_int_equal(as[1], times);
	assert_int_equal(c_open_attrset(e, "x41", OPEN4_CREATE, EXCLUSIVE4_1, v2, as),
			 NFS4ERR_EXIST);
	memset(as, 0xff, sizeof(as));
	assert_int_equal(c_open_attrset(e, "x4", OPEN4_CREATE, EXCLUSIVE4, v1, as), NFS4_OK);
	assert_int_equal(as[1], times);
	memset(as, 0xff, sizeof(as));
	assert_int_equal(c_open_attrset(e, "u", OPEN4_CREATE, UNCHECKED4, NULL, as), NFS4_OK);
	assert_int_equal(as[0], 0);
	assert_int_equal(as[1], 0);
	memset(as, 0xff, sizeof(as));
	assert_int_equal(c_open_attrset(e, "g", OPEN4_CREATE, GUARDED4, NULL, as), NFS4_OK);
	assert_int_equal(as[0], 0);
	assert_int_equal(as[1], 0);
}

/* One entry4 of a READDIR asking type, filehandle and fileid. */
struct rd_ent {
	char name[64];
	uint64_t cookie;
	uint32_t type;
	uint8_t fh[NFS4_FHSIZE];
	uint32_t fhlen;
	uint64_t fileid;
};

/* rd_bytes - the bytes of @d's entry4: follows, cookie, name, a bitmap of
 * one word, the attributes' length and type, handle, fileid */
static uint32_t rd_bytes(const struct rd_ent *d)
{
	return 4 + 8 + 4 + (((uint32_t)strlen(d->name) + 3) & ~3u) + 8 + 4 +
	       4 + 4 + ((d->fhlen + 3) & ~3u) + 8;
}

/* c_readdir - READDIR of the export's root from @cookie with @maxcount:
 * its entries into @ents (at most @max; *@n of them), and eof. */
static bool c_readdir(struct env *e, uint64_t cookie, uint32_t maxcount,
		      struct rd_ent *ents, unsigned max, unsigned *n)
{
	struct t_call *c = &e->c;
	uint32_t cnt, nops = path_ops(e->dir), len, alen;
	const uint8_t *p;

	c_begin(e, 1, 1 + nops + 1);
	c_sequence(e, e->seq++, 0);
	c_lookup_ops(e, e->dir);
	t_u32(c, OP_READDIR);
	t_u64(c, cookie);
	t_u64(c, 0);
	t_u32(c, maxcount);
	t_u32(c, maxcount);
	t_u32(c, 1);
	t_u32(c, 1u << FATTR4_TYPE | 1u << FATTR4_FILEHANDLE | 1u << FATTR4_FILEID);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &cnt), NFS4_OK);
	assert_int_equal(r_op(c, OP_SEQUENCE), NFS4_OK);
	r_skip(c, 36);
	for (uint32_t i = 0; i < nops; i++)
		assert_int_equal(r_op(c, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
	assert_int_equal(r_op(c, OP_READDIR), NFS4_OK);
	r_skip(c, 8); /* cookieverf */
	*n = 0;
	while (r_u32(c)) {
		struct rd_ent *d = &ents[*n];

		assert_true(*n < max);
		d->cookie = r_u64(c);
		p = r_opaque(c, &len);
		assert_true(len < sizeof(d->name));
		memcpy(d->name, p, len);
		d->name[len] = 0;
		/* all three asked for: a bitmap of one word */
		assert_int_equal(r_u32(c), 1);
		assert_int_equal(r_u32(c), 1u << FATTR4_TYPE | 1u << FATTR4_FILEHANDLE |
					   1u << FATTR4_FILEID);
		alen = r_u32(c);
		d->type = r_u32(c);
		p = r_opaque(c, &d->fhlen);
		memcpy(d->fh, p, d->fhlen);
		d->fileid = r_u64(c);
		/* 4 (type) + 4 + the handle padded + 8 (fileid) */
		assert_int_equal(alen, 4 + 4 + ((d->fhlen + 3) & ~3u) + 8);
		(*n)++;
	}
	return r_u32(c) != 0;
}

/*
 * READDIR of a real directory (RFC 8881 18.23): every name once, not "."
 * or "..", each with its type, its fileid (the file's inode number, as
 * stat gives it) and the handle LOOKUP gives; a READDIR from an entry's
 * cookie lists the entries after it; a reply too small for all stops
 * short of eof.
 */
static void test_readdir(void **state)
{
	struct env *e = t4_env(state);
	static const char *const names[] = { "a", "b", "c", "f" };
	static const uint32_t types[] = { NF4REG, NF4DIR, NF4LNK, NF4REG };
	struct rd_ent ents[8], rest[8];
	unsigned n, m, seen = 0;
	uint8_t fh[NFS4_FHSIZE];
	uint32_t fhlen;
	struct stat st;

	session(e);
	t4_mkfile(e, "a", 0644, "aa");
	t4_mkdir(e, "b", 0755);
	t4_make(e, "c", T4_SYMLINK, 0777, "a", 1, -1, -1);
	assert_true(c_readdir(e, 0, 8192, ents, 8, &n));
	assert_int_equal(n, 4);
	for (unsigned i = 0; i < n; i++) {
		unsigned k;

		for (k = 0; k < 4 && strcmp(ents[i].name, names[k]); k++)
			;
		assert_true(k < 4); /* a name made here: not "." nor ".." */
		assert_false(seen & 1u << k); /* once */
		seen |= 1u << k;
		assert_int_equal(ents[i].type, types[k]);
		assert_int_equal(t4_stat(e, names[k], &st), 0);
		assert_true(ents[i].fileid == (uint64_t)st.st_ino);
		t4_fh_of(e, names[k], fh, &fhlen);
		assert_int_equal(ents[i].fhlen, fhlen);
		assert_memory_equal(ents[i].fh, fh, fhlen);
	}
	/* after the first entry: the other three, in the same order */
	assert_true(c_readdir(e, ents[0].cookie, 8192, rest, 8, &m));
	assert_int_equal(m, 3);
	for (unsigned i = 0; i < m; i++)
		assert_string_equal(rest[i].name, ents[i + 1].name);
	/* room for one entry only (cookieverf, the first entry and half the
	 * second, the two words that end the list): not the end */
	assert_false(c_readdir(e, 0, 8 + rd_bytes(&ents[0]) + rd_bytes(&ents[1]) / 2 + 8,
			       rest, 8, &m));
	assert_int_equal(m, 1);
	assert_string_equal(rest[0].name, ents[0].name);
}

/* at_root - SEQUENCE, the export's root by LOOKUPs, then @more
 * operations the caller appends; run_status() runs it: the COMPOUND's
 * status, which is its last operation's. */
static void at_root(struct env *e, uint32_t more)
{
	c_begin(e, 1, 1 + path_ops(e->dir) + more);
	c_sequence(e, e->seq++, 0);
	c_lookup_ops(e, e->dir);
}

static uint32_t run_status(struct env *e)
{
	uint32_t n;

	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	return r_hdr(&e->c, &n);
}

/* the root saved, @dir looked up from it ("": the root) as current */
static void saved_root_then(struct env *e, const char *dir, uint32_t more)
{
	at_root(e, 1 + (*dir != 0) + more);
	t_u32(&e->c, OP_SAVEFH);
	if (*dir) {
		t_u32(&e->c, OP_LOOKUP);
		t_str(&e->c, dir);
	}
}

/* c_link - LINK of the root's @obj as the root's @name: its status */
static uint32_t c_link(struct env *e, const char *obj, const char *name)
{
	uint32_t nops = path_ops(e->dir);

	at_root(e, 2 + nops + 1);
	t_u32(&e->c, OP_LOOKUP);
	t_str(&e->c, obj);
	t_u32(&e->c, OP_SAVEFH);
	c_lookup_ops(e, e->dir);
	t_u32(&e->c, OP_LINK);
	t_str(&e->c, name);
	return run_status(e);
}

/*
 * The namespace operations' answers for what rename(2), unlink(2),
 * rmdir(2), link(2) and mkdir(2) refuse (POSIX; RFC 8881 18.25, 18.26,
 * 18.9, 18.4), the same on every backend: REMOVE of a directory with a
 * name in it NOTEMPTY, of an empty one and of a file OK, of nothing NOENT;
 * RENAME of a directory onto a file NOTDIR, of a file onto a directory
 * ISDIR, of a file onto another file OK (the other gone), of a directory
 * into itself INVAL; LINK of a directory ISDIR, onto an existing name
 * EXIST; CREATE of an existing name EXIST; READLINK of a file INVAL.
 */
static void test_namespace_statuses(void **state)
{
	struct env *e = t4_env(state);
	struct stat a, b;

	session(e);
	t4_mkdir(e, "d", 0755);
	t4_mkfile(e, "d/x", 0644, "x");
	t4_mkdir(e, "empty", 0755);
	t4_mkfile(e, "g", 0644, "gg");
	at_root(e, 1);
	t_u32(&e->c, OP_REMOVE);
	t_str(&e->c, "d");
	assert_int_equal(run_status(e), NFS4ERR_NOTEMPTY);
	at_root(e, 1);
	t_u32(&e->c, OP_REMOVE);
	t_str(&e->c, "empty");
	assert_int_equal(run_status(e), NFS4_OK);
	assert_false(t4_exists(e, "empty"));
	at_root(e, 1);
	t_u32(&e->c, OP_REMOVE);
	t_str(&e->c, "none");
	assert_int_equal(run_status(e), NFS4ERR_NOENT);
	/* RENAMEs within the root (saved and current) */
	saved_root_then(e, "", 1);
	t_u32(&e->c, OP_RENAME);
	t_str(&e->c, "d");
	t_str(&e->c, "f");
	assert_int_equal(run_status(e), NFS4ERR_NOTDIR);
	saved_root_then(e, "", 1);
	t_u32(&e->c, OP_RENAME);
	t_str(&e->c, "f");
	t_str(&e->c, "d");
	assert_int_equal(run_status(e), NFS4ERR_ISDIR);
	assert_int_equal(t4_stat(e, "g", &a), 0);
	saved_root_then(e, "", 1);
	t_u32(&e->c, OP_RENAME);
	t_str(&e->c, "g");
	t_str(&e->c, "f");
	assert_int_equal(run_status(e), NFS4_OK);
	assert_false(t4_exists(e, "g"));
	assert_int_equal(t4_stat(e, "f", &b), 0);
	assert_true(a.st_ino == b.st_ino && b.st_size == 2);
	/* "d" into "d/x/..." : a directory into itself */
	saved_root_then(e, "d", 1);
	t_u32(&e->c, OP_RENAME);
	t_str(&e->c, "d");
	t_str(&e->c, "sub");
	assert_int_equal(run_status(e), NFS4ERR_INVAL);
	/* LINK: saved is the object, current the directory */
	assert_int_equal(c_link(e, "d", "dlink"), NFS4ERR_ISDIR);
	assert_int_equal(c_link(e, "f", "h"), NFS4_OK);
	assert_int_equal(c_link(e, "f", "h"), NFS4ERR_EXIST);
	assert_int_equal(t4_stat(e, "h", &a), 0);
	assert_true(a.st_ino == b.st_ino && a.st_nlink == 2);
	at_root(e, 1);
	t_u32(&e->c, OP_CREATE);
	t_u32(&e->c, NF4DIR);
	t_str(&e->c, "f");
	t_u32(&e->c, 0);
	t_u32(&e->c, 0);
	assert_int_equal(run_status(e), NFS4ERR_EXIST);
	at_root(e, 2);
	t_u32(&e->c, OP_LOOKUP);
	t_str(&e->c, "f");
	t_u32(&e->c, OP_READLINK);
	assert_int_equal(run_status(e), NFS4ERR_INVAL);
}

/* c_setattr_root - SETATTR of the root's @name (anonymous stateid): mode
 * @mode unless -1, size @size unless -1.  Its status. */
static uint32_t c_setattr_root(struct env *e, const char *name, int64_t mode,
			       int64_t size)
{
	static const uint8_t anon[16];

	at_root(e, 2);
	t_u32(&e->c, OP_LOOKUP);
	t_str(&e->c, name);
	t_u32(&e->c, OP_SETATTR);
	c_fixed(&e->c, anon, 16);
	t_u32(&e->c, 2);
	t_u32(&e->c, size >= 0 ? 1u << FATTR4_SIZE : 0);
	t_u32(&e->c, mode >= 0 ? 1u << (FATTR4_MODE - 32) : 0);
	t_u32(&e->c, (size >= 0 ? 8 : 0) + (mode >= 0 ? 4 : 0));
	if (size >= 0)
		t_u64(&e->c, (uint64_t)size);
	if (mode >= 0)
		t_u32(&e->c, (uint32_t)mode);
	return run_status(e);
}

/* c_open_read - OPEN (no create) of the root's @name for reading only by
 * a new owner: its status */
static uint32_t c_open_read(struct env *e, const char *name)
{
	static unsigned owner;
	char own[32];

	snprintf(own, sizeof(own), "read-owner-%u", owner++);
	at_root(e, 1);
	t_u32(&e->c, OP_OPEN);
	t_u32(&e->c, 0);
	t_u32(&e->c, OPEN4_SHARE_ACCESS_READ);
	t_u32(&e->c, 0);
	t_u64(&e->c, e->clientid);
	t_str(&e->c, own);
	t_u32(&e->c, OPEN4_NOCREATE);
	t_u32(&e->c, CLAIM_NULL);
	t_str(&e->c, name);
	return run_status(e);
}

/* as - the caller of the next COMPOUNDs (AUTH_SYS uid and gid) */
static void as(struct env *e, uint32_t uid, uint32_t gid)
{
	e->uid = uid;
	e->gid = gid;
}

/*
 * Permissions, as POSIX and knfsd decide them, on "f" (0640, 1234:5678):
 * OPEN for reading by its group, not by others, for writing by its owner
 * only; the owner opens its own file whatever the mode (knfsd's
 * override); only the owner (or root) changes the mode (NFS4ERR_PERM);
 * a size needs write permission (NFS4ERR_ACCESS), which the owner always
 * has (knfsd); root (not squashed) may do all.
 */
static void test_permissions(void **state)
{
	struct env *e = t4_env(state);
	struct stat st;

	if (!t4_owned(e))
		skip(); /* "f" belongs to the test's user */
	session(e);
	as(e, 1000, 5678);
	assert_int_equal(c_open_how(e, "f", OPEN4_NOCREATE, 0, NULL), NFS4ERR_ACCESS);
	assert_int_equal(c_open_read(e, "f"), NFS4_OK);
	as(e, 1000, 1000);
	assert_int_equal(c_open_read(e, "f"), NFS4ERR_ACCESS);
	assert_int_equal(c_setattr_root(e, "f", 0666, -1), NFS4ERR_PERM);
	assert_int_equal(c_setattr_root(e, "f", -1, 1), NFS4ERR_ACCESS);
	as(e, 1234, 5678);
	assert_int_equal(c_open_how(e, "f", OPEN4_NOCREATE, 0, NULL), NFS4_OK);
	assert_int_equal(c_setattr_root(e, "f", 0, -1), NFS4_OK);
	assert_int_equal(c_open_how(e, "f", OPEN4_NOCREATE, 0, NULL), NFS4_OK);
	assert_int_equal(c_setattr_root(e, "f", -1, 3), NFS4_OK);
	assert_int_equal(t4_stat(e, "f", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0);
	assert_int_equal(st.st_size, 3);
	as(e, 0, 0);
	assert_int_equal(c_open_how(e, "f", OPEN4_NOCREATE, 0, NULL), NFS4_OK);
	assert_int_equal(c_setattr_root(e, "f", 0600, 0), NFS4_OK);
	assert_int_equal(t4_stat(e, "f", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_size, 0);
}

/*
 * c_cachethis - set sa_cachethis in the SEQUENCE that begins e->c's
 * request (RFC 8881 18.46.1: the client asks the server to keep the reply
 * for a retry).  Its offset: the tag (length and "tag!"), minorversion,
 * numops, then SEQUENCE's opnum, sessionid (16), sequenceid, slotid and
 * highest_slotid.
 */
static void c_cachethis(struct env *e)
{
	t_be32(e->c.args + 4 + 4 + 4 + 4 + 4 + 16 + 4 + 4 + 4, 1);
}

/* c_at_root_cached - at_root(), with sa_cachethis set */
static void c_at_root_cached(struct env *e, uint32_t more)
{
	at_root(e, more);
	c_cachethis(e);
}

/* c_replay - run e->c's request again, unchanged (same session, slot and
 * sequence id): asserts the reply is @first (@len bytes), byte for byte */
static void c_replay(struct env *e, const uint8_t *first, size_t len)
{
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(e->c.rlen, len);
	assert_memory_equal(e->c.res, first, len);
}

/*
 * A retried non-idempotent request (RFC 8881 2.10.6.1, 15.1.10.2): REMOVE,
 * RENAME and CREATE sent again with the same slot and sequence id get the
 * kept reply and are not executed a second time.  Between the first
 * execution and the retry the test changes the directory behind the
 * server's back so that a second execution would show: "victim" made
 * again (a second REMOVE would take it), "a" made again with other
 * contents (a second RENAME would move it onto "b"), and for CREATE the
 * name is there already (a second CREATE would answer EXIST).  Then the
 * slot's next sequence id is served as new (the cache is per retry, not a
 * slot that stopped working).
 */
static void test_replay_not_reexecuted(void **state)
{
	struct env *e = t4_env(state);
	static uint8_t first[4096];
	size_t len;
	struct stat st;
	uint32_t n;

	session(e);
	t4_mkfile(e, "victim", 0644, "v");
	t4_mkfile(e, "a", 0644, "aaaa");

	/* REMOVE */
	c_at_root_cached(e, 1);
	t_u32(&e->c, OP_REMOVE);
	t_str(&e->c, "victim");
	assert_int_equal(run_status(e), NFS4_OK);
	assert_false(t4_exists(e, "victim"));
	len = e->c.rlen;
	assert_true(len <= sizeof(first));
	memcpy(first, e->c.res, len);
	t4_mkfile(e, "victim", 0644, "v2");
	c_replay(e, first, len);
	assert_true(t4_exists(e, "victim"));

	/* RENAME a -> b */
	saved_root_then(e, "", 1);
	c_cachethis(e);
	t_u32(&e->c, OP_RENAME);
	t_str(&e->c, "a");
	t_str(&e->c, "b");
	assert_int_equal(run_status(e), NFS4_OK);
	assert_false(t4_exists(e, "a"));
	len = e->c.rlen;
	memcpy(first, e->c.res, len);
	t4_mkfile(e, "a", 0644, "zz");
	c_replay(e, first, len);
	assert_int_equal(t4_stat(e, "a", &st), 0);
	assert_int_equal(st.st_size, 2);
	assert_int_equal(t4_stat(e, "b", &st), 0);
	assert_int_equal(st.st_size, 4);

	/* CREATE of a directory */
	c_at_root_cached(e, 1);
	t_u32(&e->c, OP_CREATE);
	t_u32(&e->c, NF4DIR);
	t_str(&e->c, "newdir");
	t_u32(&e->c, 0);
	t_u32(&e->c, 0);
	assert_int_equal(run_status(e), NFS4_OK);
	assert_int_equal(t4_stat(e, "newdir", &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	len = e->c.rlen;
	memcpy(first, e->c.res, len);
	c_replay(e, first, len);
	c_replay(e, first, len);

	/* the slot's next sequence id: a new request, executed */
	c_at_root_cached(e, 1);
	t_u32(&e->c, OP_REMOVE);
	t_str(&e->c, "victim");
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_false(t4_exists(e, "victim"));
}

/* another gateway's grace, as a cluster backend reports it */
static int peer4_grace;
static struct fs_backend peer4_be;

static int peer4_grace_fn(struct rpcrdma_nfs3_export *exp)
{
	(void)exp;
	return peer4_grace;
}

/*
 * Another gateway of the export's cluster in its grace period
 * (fs_cluster_grace(), cephfs with grace=): a new OPEN, a new LOCK and
 * LOCKT are NFS4ERR_GRACE, as in this server's own grace (RFC 8881
 * 8.4.2.1: a lock granted now could be one that gateway's client is
 * about to reclaim), counted as refused in grace; "cannot tell" too; in
 * this server's own grace its client's reclaims (OPEN CLAIM_PREVIOUS,
 * LOCK reclaim) go through all the same.  posix and memory never say so.
 * Fails before the change: the OPEN and LOCK are NFS4_OK.
 */
static void test_cluster_grace(void **state)
{
	struct env *e = t4_env(state);
	struct rpcrdma_nfs4_recovery rv;
	const struct fs_backend *own;
	struct rpcrdma_nfs3_export *exp;
	uint8_t fh[128], sid[16], sid2[16];
	struct t4_sdir sd;
	struct fs_snap *sn;
	uint32_t fhlen;

	t4_state_dir(e, &sd);
	sn = fs_snap_get(e->srv3);
	exp = sn->sn_exp[0];
	fs_snap_put(sn);
	assert_int_equal(fs_cluster_grace(exp), 0); /* posix, memory */
	own = exp->ex_be;
	peer4_be = *own;
	peer4_be.be_cluster_grace = peer4_grace_fn;
	exp->ex_be = &peer4_be;

	/* no grace of its own; an OPEN and a lock while no peer is in grace */
	restart(e, sd.sd_path);
	session(e);
	c_open(e, "g", "owner-1", OPEN4_SHARE_ACCESS_BOTH, sid, fh, &fhlen);
	assert_int_equal(c_lock_new(e, fh, fhlen, sid, "lo-1", false), NFS4_OK);
	/* another gateway in grace: nothing new */
	peer4_grace = 1;
	assert_int_equal(c_open_fh(e, fh, fhlen, "owner-2", CLAIM_FH, sid2), NFS4ERR_GRACE);
	assert_int_equal(c_lock_new(e, fh, fhlen, sid, "lo-2", false), NFS4ERR_GRACE);
	assert_int_equal(c_read_kind(e, "g", true), NFS4ERR_GRACE);
	peer4_grace = -EAGAIN;
	assert_int_equal(c_lock_new(e, fh, fhlen, sid, "lo-2", false), NFS4ERR_GRACE);
	assert_int_equal(rpcrdma_nfs4_server_recovery(e->srv4, &rv), 0);
	assert_false(rv.n4r_in_grace);
	assert_int_equal(rv.n4r_grace_refused, 4);
	/* ... and a reclaim is late here as ever */
	assert_int_equal(c_lock_new(e, fh, fhlen, sid, "lo-1", true), NFS4ERR_NO_GRACE);
	peer4_grace = 0;
	assert_int_equal(c_read_kind(e, "g", true), NFS4ERR_DENIED); /* lo-1 holds */

	/* this server restarted: its own grace; the peer's too */
	restart(e, sd.sd_path);
	session(e);
	peer4_grace = 1;
	assert_int_equal(c_open_fh(e, fh, fhlen, "owner-1", CLAIM_PREVIOUS, sid), NFS4_OK);
	assert_int_equal(c_lock_new(e, fh, fhlen, sid, "lo-1", true), NFS4_OK);
	assert_int_equal(c_open_fh(e, fh, fhlen, "owner-3", CLAIM_FH, sid2), NFS4ERR_GRACE);
	/* its own grace over (every client done), the peer's not */
	assert_int_equal(c_reclaim_complete(e), NFS4_OK);
	assert_int_equal(rpcrdma_nfs4_server_recovery(e->srv4, &rv), 0);
	assert_false(rv.n4r_in_grace);
	assert_int_equal(c_open_fh(e, fh, fhlen, "owner-3", CLAIM_FH, sid2), NFS4ERR_GRACE);
	peer4_grace = 0;
	assert_int_equal(c_open_fh(e, fh, fhlen, "owner-3", CLAIM_FH, sid2), NFS4_OK);
	assert_int_equal(c_lock_new(e, fh, fhlen, sid2, "lo-3", false), NFS4ERR_DENIED);

	exp->ex_be = own;
	t4_state_dir_end(e, &sd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_decode),
		cmocka_unit_test(test_state_tables),
		cmocka_unit_test(test_open_states),
		T4_BOTH(test_compound_errors, setup, teardown),
		T4_BOTH(test_sessions, setup, teardown),
		T4_BOTH(test_getattr, setup, teardown),
		T4_BOTH(test_open_write_read, setup, teardown),
		T4_BOTH(test_locks, setup, teardown),
		T4_BOTH(test_reload_drops_export_with_state, setup, teardown),
		T4_BOTH(test_nfs3_recalls, setup, teardown),
		T4_BOTH(test_pseudo_fs, setup, teardown),
		T4_BOTH(test_garbage, setup, teardown),
		T4_BOTH(test_restart_grace, setup, teardown),
		T4_BOTH(test_cluster_grace, setup, teardown),
		T4_BOTH(test_change_info, setup, teardown),
		T4_BOTH(test_not_regular, setup, teardown),
		T4_BOTH(test_open_names, setup, teardown),
		T4_BOTH(test_open_excl_attrset, setup, teardown),
		T4_BOTH(test_readdir, setup, teardown),
		T4_BOTH(test_namespace_statuses, setup, teardown),
		T4_BOTH(test_replay_not_reexecuted, setup, teardown),
		T4_BOTH(test_permissions, setup, teardown),
	};

	return t_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
