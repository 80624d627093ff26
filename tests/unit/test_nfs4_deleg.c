// SPDX-License-Identifier: MIT
/*
 * test_nfs4_deleg.c - the read delegation state machine (src/nfs4/
 * nfs4_deleg.c) against scenarios worked by hand from RFC 8881 10.2, 10.4
 * and 18.6: grant only without writers, one per client and file, shared
 * between clients; a conflict recalls the others' (not the writer's own)
 * and answers NFS4ERR_DELAY until they are returned; a CB_RECALL that
 * could not go out is offered again; revoked a lease (90 s) after the
 * recall began, not a second earlier; NFSv3 conflicts recall every one;
 * stale and forged stateids; the table's bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/be.h"
#include "nfs4/nfs4_deleg.h"
#include "nfs4/nfs4_internal.h"

#define BOOT 0x5f000001u
#define A 0x100000001ull
#define B 0x100000002ull
#define C 0x100000003ull

static const uint8_t F[8] = { 'f', 'i', 'l', 'e', 0, 0, 0, 1 };
static const uint8_t G[8] = { 'f', 'i', 'l', 'e', 0, 0, 0, 2 };

static void test_grant_and_recall(void **state)
{
	struct nfs4_deleg_table *t;
	struct nfs4_stateid sa, sb, sx;
	struct nfs4_deleg_recall rec[NFS4_DELEG_MAX_RECALL];
	struct nfs4_deleg_counts dc;
	uint32_t n;

	(void)state;
	assert_int_equal(nfs4_deleg_create(BOOT, 90, NULL, &t), 0);
	/* someone writes the file: no delegation */
	assert_false(nfs4_deleg_grant(t, A, F, 8, true, &sa));
	/* A's (the layout of `other` is the server's own: RFC 8881 8.2.2
	 * makes it opaque to the client, so it is only compared whole) */
	assert_true(nfs4_deleg_grant(t, A, F, 8, false, &sa));
	assert_int_equal(sa.si_seqid, 1);
	assert_int_equal(nfs4_deleg_check(t, A, &sa, F, 8), NFS4_OK);
	/* asked again: the same one */
	assert_true(nfs4_deleg_grant(t, A, F, 8, false, &sx));
	assert_memory_equal(&sx, &sa, sizeof(sx));
	/* B shares the file: a delegation of its own */
	assert_true(nfs4_deleg_grant(t, B, F, 8, false, &sb));
	assert_memory_not_equal(sb.si_other, sa.si_other, 12);
	assert_int_equal(nfs4_deleg_check(t, B, &sb, F, 8), NFS4_OK);
	assert_int_equal(nfs4_deleg_check(t, A, &sb, F, 8), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_deleg_check(t, B, &sb, G, 8), NFS4ERR_BAD_STATEID);

	/* A opens F for writing at t = 100: B's is recalled, A's own stays */
	assert_int_equal(nfs4_deleg_conflict(t, A, F, 8, 100, rec, &n), NFS4ERR_DELAY);
	assert_int_equal(n, 1);
	assert_int_equal(rec[0].dr_clientid, B);
	assert_memory_equal(rec[0].dr_other, sb.si_other, 12);
	/* its CB_RECALL did not go out: offered again; once sent, not */
	assert_int_equal(nfs4_deleg_conflict(t, A, F, 8, 110, rec, &n), NFS4ERR_DELAY);
	assert_int_equal(n, 1);
	nfs4_deleg_recall_sent(t, &rec[0]);
	assert_int_equal(nfs4_deleg_conflict(t, A, F, 8, 120, rec, &n), NFS4ERR_DELAY);
	assert_int_equal(n, 0);
	/* no new delegation of a file being recalled */
	assert_false(nfs4_deleg_grant(t, C, F, 8, false, &sx));
	/* DELEGRETURN: only by its holder, of its file */
	assert_int_equal(nfs4_deleg_return(t, A, &sb, F, 8), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_deleg_return(t, B, &sb, G, 8), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_deleg_return(t, B, &sb, F, 8), NFS4_OK);
	assert_int_equal(nfs4_deleg_return(t, B, &sb, F, 8), NFS4ERR_BAD_STATEID);
	/* nothing left in A's way */
	assert_int_equal(nfs4_deleg_conflict(t, A, F, 8, 130, rec, &n), NFS4_OK);
	assert_int_equal(n, 0);
	/* an NFSv3 write (client 0) recalls A's too */
	assert_int_equal(nfs4_deleg_conflict(t, 0, F, 8, 140, rec, &n), NFS4ERR_DELAY);
	assert_int_equal(n, 1);
	assert_int_equal(rec[0].dr_clientid, A);
	assert_int_equal(nfs4_deleg_return(t, A, &sa, F, 8), NFS4_OK);

	nfs4_deleg_counts(t, &dc);
	assert_int_equal(dc.dc_held, 0);
	assert_int_equal(dc.dc_granted, 2);
	assert_int_equal(dc.dc_recalled, 2);
	assert_int_equal(dc.dc_returned, 2);
	assert_int_equal(dc.dc_revoked, 0);
	assert_int_equal(dc.dc_delays, 4);
	/* a new delegation after the others were returned: a stateid never
	 * given before (RFC 8881 8.2.2: `other` is not reused while the
	 * server's instance lives), and the returned ones stay invalid */
	assert_true(nfs4_deleg_grant(t, C, G, 8, false, &sx));
	assert_memory_not_equal(sx.si_other, sa.si_other, 12);
	assert_memory_not_equal(sx.si_other, sb.si_other, 12);
	assert_int_equal(nfs4_deleg_check(t, A, &sa, F, 8), NFS4ERR_BAD_STATEID);
	assert_int_equal(nfs4_deleg_check(t, C, &sx, G, 8), NFS4_OK);
	nfs4_deleg_destroy(t);
}

static void test_revoke(void **state)
{
	struct nfs4_deleg_table *t;
	struct nfs4_stateid sb, forged;
	struct nfs4_deleg_recall rec[NFS4_DELEG_MAX_RECALL];
	struct nfs4_deleg_counts dc;
	uint32_t n;

	(void)state;
	assert_int_equal(nfs4_deleg_create(BOOT, 90, NULL, &t), 0);
	assert_true(nfs4_deleg_grant(t, B, G, 8, false, &sb));
	assert_int_equal(nfs4_deleg_conflict(t, A, G, 8, 1000, rec, &n), NFS4ERR_DELAY);
	nfs4_deleg_recall_sent(t, &rec[0]);
	/* 89 s later: still waited for */
	assert_int_equal(nfs4_deleg_conflict(t, A, G, 8, 1089, rec, &n), NFS4ERR_DELAY);
	assert_false(nfs4_deleg_revoked(t, B));
	/* a lease after the recall: revoked, the writer goes on */
	assert_int_equal(nfs4_deleg_conflict(t, A, G, 8, 1090, rec, &n), NFS4_OK);
	assert_true(nfs4_deleg_revoked(t, B));
	assert_false(nfs4_deleg_revoked(t, A));
	assert_int_equal(nfs4_deleg_check(t, B, &sb, G, 8), NFS4ERR_DELEG_REVOKED);
	assert_int_equal(nfs4_deleg_check(t, B, &sb, NULL, 0), NFS4ERR_DELEG_REVOKED);
	/* a revoked delegation grants nothing new on its file until freed */
	assert_false(nfs4_deleg_grant(t, C, G, 8, false, &forged));
	/* its late DELEGRETURN frees it */
	assert_int_equal(nfs4_deleg_return(t, B, &sb, G, 8), NFS4_OK);
	assert_false(nfs4_deleg_revoked(t, B));
	nfs4_deleg_counts(t, &dc);
	assert_int_equal(dc.dc_revoked, 1);
	assert_int_equal(dc.dc_returned, 0);
	assert_int_equal(dc.dc_held, 0);

	/* a stateid of another start of the server (a table made with
	 * another boot time), and forged ones (any byte of the opaque
	 * `other` changed): never accepted (RFC 8881 8.2.4 allows either
	 * BAD_STATEID or STALE_STATEID for them) */
	assert_true(nfs4_deleg_grant(t, B, G, 8, false, &sb));
	{
		struct nfs4_deleg_table *old_t;
		struct nfs4_stateid old_s;
		uint32_t st;

		assert_int_equal(nfs4_deleg_create(BOOT - 1, 90, NULL, &old_t), 0);
		assert_true(nfs4_deleg_grant(old_t, B, G, 8, false, &old_s));
		nfs4_deleg_destroy(old_t);
		st = nfs4_deleg_check(t, B, &old_s, G, 8);
		assert_true(st == NFS4ERR_BAD_STATEID || st == NFS4ERR_STALE_STATEID);
		for (int i = 0; i < 12; i++) {
			forged = sb;
			forged.si_other[i] ^= 0x21;
			st = nfs4_deleg_check(t, B, &forged, G, 8);
			assert_true(st == NFS4ERR_BAD_STATEID || st == NFS4ERR_STALE_STATEID);
			st = nfs4_deleg_return(t, B, &forged, G, 8);
			assert_true(st == NFS4ERR_BAD_STATEID || st == NFS4ERR_STALE_STATEID);
		}
		assert_int_equal(nfs4_deleg_check(t, B, &sb, G, 8), NFS4_OK);
	}
	forged = sb;
	forged.si_seqid = 2;
	assert_int_equal(nfs4_deleg_return(t, B, &forged, G, 8), NFS4ERR_BAD_STATEID);
	/* the client's state goes: its delegations with it */
	nfs4_deleg_forget_client(t, B);
	assert_int_equal(nfs4_deleg_check(t, B, &sb, G, 8), NFS4ERR_BAD_STATEID);
	nfs4_deleg_destroy(t);
}

static void test_bound(void **state)
{
	struct nfs4_deleg_table *t;
	struct nfs4_stateid s;
	uint8_t fh[8] = { 0 };

	(void)state;
	assert_int_equal(nfs4_deleg_create(BOOT, 90, NULL, &t), 0);
	/* one client gets NFS4_MAX_CLIENT_DELEGS (256), not the table */
	for (uint32_t i = 0; i < NFS4_MAX_CLIENT_DELEGS; i++) {
		store_be32(fh + 4, i);
		assert_true(nfs4_deleg_grant(t, A, fh, 8, false, &s));
	}
	store_be32(fh + 4, NFS4_MAX_CLIENT_DELEGS);
	assert_false(nfs4_deleg_grant(t, A, fh, 8, false, &s));
	/* four clients fill the table: then nobody gets one */
	for (uint32_t i = NFS4_MAX_CLIENT_DELEGS; i < (NFS4_DELEGS_PER_CLIENT * RPCRDMA_NFS4_CLIENTS_DEFAULT); i++) {
		store_be32(fh + 4, i);
		assert_true(nfs4_deleg_grant(t, A + 1 + i / NFS4_MAX_CLIENT_DELEGS, fh, 8,
					     false, &s));
	}
	store_be32(fh + 4, (NFS4_DELEGS_PER_CLIENT * RPCRDMA_NFS4_CLIENTS_DEFAULT));
	assert_false(nfs4_deleg_grant(t, B + 100, fh, 8, false, &s));
	/* a handle longer than NFS4_FHSIZE is refused */
	assert_false(nfs4_deleg_grant(t, B, fh, NFS4_FHSIZE + 1, false, &s));
	nfs4_deleg_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grant_and_recall),
		cmocka_unit_test(test_revoke),
		cmocka_unit_test(test_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
