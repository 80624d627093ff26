// SPDX-License-Identifier: MIT
/*
 * test_nfs4_tables.c - the NFSv4.1 state tables follow n4_max_clients
 * (issue 33, finding 6: "server-wide limits follow --memory"): a server
 * made for 300 clients admits 300 confirmed clients and refuses the 301st
 * (NFS4ERR_RESOURCE, as a full table of live clients answers), its other
 * tables follow by their ratios (sessions 1, opens 32, locks 8,
 * delegations 8, client records 2 per client) with per-client shares of
 * at most a quarter of a table; session ids and delegation stateids of
 * entries past the old index widths (256 sessions, 4096 delegations)
 * lead back to their entry; the default server still admits 128.
 *
 * Fails before the change: n4_max_clients, rpcrdma_nfs4_limits() and
 * struct nfs4_sizes do not exist (it does not compile), and the tables
 * held 128 clients whatever the memory (test_nfs4_lease's
 * test_clients_full: the 129th is NFS4ERR_RESOURCE).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_nfs4_harness.h"

#include "common/be.h"
#include "nfs4/nfs4_deleg.h"

static int setup(void **state)
{
	return t4_setup(state, "rw,no_root_squash,insecure");
}

static int teardown(void **state)
{
	return t4_teardown(state);
}

/* remake - @e's NFSv4.1 server again, for @clients clients. */
static void remake(struct env *e, uint32_t clients)
{
	struct rpcrdma_nfs4_config cfg = { .n4_max_clients = clients };

	rpcrdma_nfs4_server_destroy(e->srv4);
	e->srv4 = NULL;
	assert_int_equal(rpcrdma_nfs4_server_create(e->srv3, &cfg, &e->srv4), 0);
	nfs4_cb_table_destroy(e->srv4->s4_cb);
	assert_int_equal(nfs4_cb_table_create(&no_bc, &e->srv4->s4_sizes, &e->srv4->s4_cb), 0);
	nfs4_cb_set_live(e->srv4->s4_cb, nfs4_state_session_live, e->srv4->s4_state);
}

static struct nfs4_state_counts counts(struct env *e)
{
	struct nfs4_state_counts cnt;

	nfs4_state_counts(e->srv4->s4_state, &cnt);
	return cnt;
}

/* exid - EXCHANGE_ID of @owner: its status (the client id in *@id). */
#define exid t4_exid2

/* confirmed - EXCHANGE_ID and CREATE_SESSION of @owner: e->sid, e->seq. */
static void confirmed(struct env *e, const char *owner)
{
	uint32_t seq, n;

	assert_int_equal(exid(e, owner, &e->clientid, &seq), NFS4_OK);
	c_create_session(e, e->clientid, seq);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_CREATE_SESSION), NFS4_OK);
	memcpy(e->sid, e->c.res + e->c.rpos, 16);
	e->seq = 1;
}

/* sequence - a COMPOUND of one SEQUENCE on e->sid: its status. */
static uint32_t sequence(struct env *e)
{
	uint32_t n;

	c_begin(e, 1, 1);
	c_sequence(e, e->seq++, 0);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	return r_hdr(&e->c, &n);
}

/* fill - @n confirmed clients "live-0".. within their leases; the next
 * EXCHANGE_ID is NFS4ERR_RESOURCE.  Every session answers SEQUENCE (the
 * session id's index leads back to its entry, past 255 too). */
static void fill(struct env *e, uint32_t n)
{
	static uint8_t sids[RPCRDMA_NFS4_CLIENTS_MAX][16];
	char owner[32];
	uint32_t seq;
	uint64_t id;

	for (uint32_t i = 0; i < n; i++) {
		/* from as many hosts as their shares need (NFS4_HOST_SHARE) */
		e->peer4 = 0x7f000100 + i / NFS4_HOST_SHARE(n);
		snprintf(owner, sizeof(owner), "live-%u", i);
		confirmed(e, owner);
		memcpy(sids[i], e->sid, 16);
	}
	e->peer4 = 0; /* a host with none of its share used */
	assert_int_equal(counts(e).sc_clients, n);
	assert_int_equal(counts(e).sc_sessions, n);
	assert_int_equal(exid(e, "one-more", &id, &seq), NFS4ERR_RESOURCE);
	for (uint32_t i = 0; i < n; i++) {
		memcpy(e->sid, sids[i], 16);
		e->seq = 1;
		assert_int_equal(sequence(e), NFS4_OK);
	}
	assert_int_equal(counts(e).sc_clients, n);
}

/* n4_max_clients 300: 300 clients, the 301st refused; the sizes. */
static void test_300_clients(void **state)
{
	struct env *e = t4_env(state);
	const struct nfs4_sizes *sz;

	remake(e, 300);
	sz = &e->srv4->s4_sizes;
	assert_int_equal(sz->sz_clients, 300);
	assert_int_equal(sz->sz_sessions, 300);
	assert_int_equal(sz->sz_opens, 300 * 32);
	assert_int_equal(sz->sz_locks, 300 * 8);
	assert_int_equal(sz->sz_delegs, 300 * 8);
	assert_int_equal(sz->sz_records, 600);
	/* per client: today's figures, below a quarter of these tables */
	assert_int_equal(sz->sz_client_sessions, 4);
	assert_int_equal(sz->sz_client_opens, 1024);
	assert_int_equal(sz->sz_client_locks, 256);
	assert_int_equal(sz->sz_client_delegs, 256);
	fill(e, 300);
}

/* The default (n4_max_clients 0): 128 clients, as before. */
static void test_default_128(void **state)
{
	struct env *e = t4_env(state);

	assert_int_equal(e->srv4->s4_sizes.sz_clients, RPCRDMA_NFS4_CLIENTS_DEFAULT);
	assert_int_equal(RPCRDMA_NFS4_CLIENTS_DEFAULT, 128);
	assert_int_equal(e->srv4->s4_sizes.sz_opens, 4096);
	assert_int_equal(e->srv4->s4_sizes.sz_locks, 1024);
	assert_int_equal(e->srv4->s4_sizes.sz_delegs, 1024);
	assert_int_equal(e->srv4->s4_sizes.sz_records, 256);
	fill(e, 128);
}

/* rpcrdma_nfs4_limits(): the range, the ratios, the memory. */
static void test_limits(void **state)
{
	struct env *e = t4_env(state);
	struct rpcrdma_nfs4_config cfg = { 0 };
	struct rpcrdma_nfs4_server *srv;
	struct rpcrdma_nfs4_limits l, l2;

	assert_int_equal(rpcrdma_nfs4_limits(RPCRDMA_NFS4_CLIENTS_MIN - 1, &l), -EINVAL);
	assert_int_equal(rpcrdma_nfs4_limits(RPCRDMA_NFS4_CLIENTS_MAX + 1, &l), -EINVAL);
	assert_int_equal(rpcrdma_nfs4_limits(0, NULL), -EINVAL);
	cfg.n4_max_clients = RPCRDMA_NFS4_CLIENTS_MIN - 1;
	assert_int_equal(rpcrdma_nfs4_server_create(e->srv3, &cfg, &srv), -EINVAL);
	cfg.n4_max_clients = RPCRDMA_NFS4_CLIENTS_MAX + 1;
	assert_int_equal(rpcrdma_nfs4_server_create(e->srv3, &cfg, &srv), -EINVAL);

	assert_int_equal(rpcrdma_nfs4_limits(0, &l), 0);
	assert_int_equal(l.n4l_clients, 128);
	assert_int_equal(l.n4l_sessions, 128);
	assert_int_equal(l.n4l_opens, 4096);
	assert_int_equal(l.n4l_locks, 1024);
	assert_int_equal(l.n4l_delegations, 1024);
	assert_int_equal(l.n4l_records, 256);
	assert_int_equal(l.n4l_client_sessions, 4);
	assert_int_equal(l.n4l_client_opens, 1024);
	assert_int_equal(l.n4l_client_locks, 256);
	assert_int_equal(l.n4l_client_delegations, 256);
	/* a client unit: at least its session's 32 reply caches of 2 KiB,
	 * its record and its 32 opens' handles */
	assert_true(l.n4l_client_bytes > 32u * 2048u + 1024u + 32u * 128u);
	assert_true(l.n4l_bytes >= 128u * (l.n4l_client_bytes - 1));

	/* the smallest: a quarter of each table per client */
	assert_int_equal(rpcrdma_nfs4_limits(16, &l), 0);
	assert_int_equal(l.n4l_client_sessions, 4);
	assert_int_equal(l.n4l_client_opens, 128);
	assert_int_equal(l.n4l_client_locks, 32);
	assert_int_equal(l.n4l_client_delegations, 32);
	/* the largest; the memory grows with the clients */
	assert_int_equal(rpcrdma_nfs4_limits(RPCRDMA_NFS4_CLIENTS_MAX, &l2), 0);
	assert_int_equal(l2.n4l_delegations, 1u << NFS4_DELEG_INDEX_BITS);
	assert_true(l2.n4l_bytes > l.n4l_bytes * (RPCRDMA_NFS4_CLIENTS_MAX / 16 - 1));
}

/* A small table: a client's open states stop at a quarter of it. */
static void test_client_share(void **state)
{
	struct nfs4_state *st;
	struct nfs4_sizes sz;
	struct nfs4_exid_res er;
	struct nfs4_stateid sid, s5, last;
	uint8_t verf[8] = { 3 }, fh[8] = "FH";
	uint32_t access;
	(void)state;

	nfs4_sizes(16, &sz);
	assert_int_equal(sz.sz_opens, 512);
	assert_int_equal(nfs4_state_create(9, 90, &sz, &st), 0);
	assert_int_equal(nfs4_exchange_id(st, verf, (const uint8_t *)"a", 1, 0, &er), NFS4_OK);
	for (uint32_t i = 0; i <= sz.sz_client_opens; i++) {
		store_be32(fh + 4, i);
		assert_int_equal(nfs4_open_add(st, er.er_clientid, (const uint8_t *)"o", 1,
					       fh, 8, OPEN4_SHARE_ACCESS_READ, 0, &sid),
				 i < 128 ? NFS4_OK : NFS4ERR_RESOURCE);
		if (i == 5)
			s5 = sid;
		if (i == 127)
			last = sid;
	}
	/* a state closed low in the table: the next one takes its place
	 * (the scans stop at the highest entry ever used) */
	assert_int_equal(nfs4_open_close(st, er.er_clientid, &s5, 0, 0, &sid), NFS4_OK);
	store_be32(fh + 4, 1000);
	assert_int_equal(nfs4_open_add(st, er.er_clientid, (const uint8_t *)"o", 1, fh, 8,
				       OPEN4_SHARE_ACCESS_READ, 0, &sid), NFS4_OK);
	assert_memory_equal(sid.si_other + 4, s5.si_other + 4, 4);
	store_be32(fh + 4, 127);
	assert_int_equal(nfs4_open_find(st, er.er_clientid, &last, fh, 8, &access), NFS4_OK);
	nfs4_state_destroy(st);
}

/* Delegations past the old 12-bit index (4096) are found again. */
static void test_deleg_index(void **state)
{
	struct nfs4_deleg_table *t;
	struct nfs4_stateid sid;
	struct nfs4_deleg_counts dc;
	struct nfs4_sizes sz;
	uint8_t fh[8] = "DL";
	(void)state;

	nfs4_sizes(600, &sz);
	assert_int_equal(sz.sz_delegs, 4800);
	assert_int_equal(nfs4_deleg_create(7, 90, &sz, &t), 0);
	for (uint32_t i = 0; i < sz.sz_delegs; i++) {
		uint64_t client = 1 + i / sz.sz_client_delegs;

		store_be32(fh + 4, i);
		assert_true(nfs4_deleg_grant(t, client, fh, 8, false, &sid));
		assert_int_equal(load_be32(sid.si_other + 8) & 0xffff, i);
		assert_int_equal(nfs4_deleg_check(t, client, &sid, fh, 8), NFS4_OK);
	}
	store_be32(fh + 4, sz.sz_delegs);
	assert_false(nfs4_deleg_grant(t, 999, fh, 8, false, &sid)); /* full */
	nfs4_deleg_counts(t, &dc);
	assert_int_equal(dc.dc_held, 4800);
	nfs4_deleg_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T4_BOTH(test_300_clients, setup, teardown),
		T4_BOTH(test_default_128, setup, teardown),
		T4_BOTH(test_limits, setup, teardown),
		cmocka_unit_test(test_client_share),
		cmocka_unit_test(test_deleg_index),
	};

	return t_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
