// SPDX-License-Identifier: MIT
/*
 * test_nfs4_recover.c - the NFSv4.1 client record file and the grace
 * period rules (src/nfs4/nfs4_recover.c, RFC 8881 8.4.2, 18.51) against
 * hand-worked cases: file images written byte by byte, damaged and
 * truncated files, the bounds, and which OPEN/LOCK a client may do when.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfs4/nfs4_internal.h"

#define T0 1000 /* the "now" of a start, seconds */
/* the records of a server of the default size (n4_max_clients 0) */
#define RECOVER_MAX (NFS4_RECORDS_PER_CLIENT * RPCRDMA_NFS4_CLIENTS_DEFAULT)

static char g_dir[64];
static char g_file[96];
static FILE *g_log;

static int setup(void **state)
{
	(void)state;
	snprintf(g_dir, sizeof(g_dir), "/tmp/test_nfs4_recover.XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	snprintf(g_file, sizeof(g_file), "%s/nfs4-clients", g_dir);
	g_log = fopen("/dev/null", "w");
	return g_log ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	unlink(g_file);
	rmdir(g_dir);
	fclose(g_log);
	return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* FNV-1a 32 as its definition says (offset basis 2166136261, prime 16777619) */
static uint32_t fnv(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--) {
		h ^= *p++;
		h *= 16777619u;
	}
	return h;
}

static void write_bytes(const uint8_t *b, size_t n)
{
	int fd = open(g_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, n), (ssize_t)n);
	close(fd);
}

static size_t read_bytes(uint8_t *b, size_t max)
{
	int fd = open(g_file, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, b, max);
	close(fd);
	assert_true(n >= 0);
	return (size_t)n;
}

/* an image of @n owners "c000".."cNNN" (4 bytes each), a good sum */
static size_t image(uint8_t *b, uint32_t n, uint32_t count)
{
	size_t pos = 12;

	memcpy(b, "RNC4", 4);
	put32(b + 4, 1);
	put32(b + 8, count);
	for (uint32_t i = 0; i < n; i++) {
		char o[8];

		snprintf(o, sizeof(o), "c%03u", i % 1000);
		put32(b + pos, 4);
		memcpy(b + pos + 4, o, 4);
		pos += 8;
	}
	put32(b + pos, fnv(b, pos));
	return pos + 4;
}

static int load(struct nfs4_recover **rc, uint32_t grace)
{
	*rc = NULL;
	return nfs4_recover_create(g_dir, grace, g_log, T0, NULL, rc);
}

static struct nfs4_recover_stats stats(struct nfs4_recover *rc, time_t now)
{
	struct nfs4_recover_stats s;

	nfs4_recover_stats(rc, now, &s);
	return s;
}

#define O(s) (const uint8_t *)(s), (uint32_t)strlen(s)

/* the file written for one client "ab", byte by byte */
static void test_file_format(void **state)
{
	/* "RNC4", version 1, count 1, length 2, "ab", FNV-1a 32 of the 18
	 * bytes before it: 0x35be1fa3 (worked out separately) */
	static const uint8_t want[] = {
		'R', 'N', 'C', '4', 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 'a', 'b',
		0x35, 0xbe, 0x1f, 0xa3,
	};
	/* no client: the header, count 0 and the sum 0x6d0220f9 */
	static const uint8_t empty[] = {
		'R', 'N', 'C', '4', 0, 0, 0, 1, 0, 0, 0, 0, 0x6d, 0x02, 0x20, 0xf9,
	};
	struct nfs4_recover *rc;
	uint8_t b[256];

	(void)state;
	assert_int_equal(load(&rc, 90), 0);
	assert_false(stats(rc, T0).rs_in_grace); /* no record: no grace */
	assert_false(nfs4_recover_pending(rc));
	assert_int_equal(nfs4_recover_flush(rc), 0);
	assert_int_equal(access(g_file, F_OK), -1); /* nothing to write */
	nfs4_recover_note(rc, O("ab"), NFS4_REC_OPEN);
	assert_true(nfs4_recover_pending(rc));
	assert_int_equal(nfs4_recover_flush(rc), 0);
	assert_false(nfs4_recover_pending(rc));
	assert_int_equal(read_bytes(b, sizeof(b)), sizeof(want));
	assert_memory_equal(b, want, sizeof(want));
	/* a second OPEN changes nothing; RECLAIM_COMPLETE of a recorded one either */
	nfs4_recover_note(rc, O("ab"), NFS4_REC_OPEN);
	nfs4_recover_note(rc, O("ab"), NFS4_REC_RECLAIM_COMPLETE);
	assert_false(nfs4_recover_pending(rc));
	assert_int_equal(stats(rc, T0).rs_records, 1);
	/* DESTROY_CLIENTID: the record goes */
	nfs4_recover_note(rc, O("ab"), NFS4_REC_FORGET);
	assert_int_equal(nfs4_recover_flush(rc), 0);
	assert_int_equal(read_bytes(b, sizeof(b)), sizeof(empty));
	assert_memory_equal(b, empty, sizeof(empty));
	assert_int_equal(stats(rc, T0).rs_writes, 2);
	nfs4_recover_destroy(rc);

	/* the next start reads back what was written */
	write_bytes(want, sizeof(want));
	assert_int_equal(load(&rc, 90), 0);
	assert_int_equal(stats(rc, T0).rs_loaded, 1);
	assert_true(stats(rc, T0).rs_in_grace);
	nfs4_recover_destroy(rc);
}

/* damaged files are refused, whole: nothing of them is kept */
static void test_bad_files(void **state)
{
	static uint8_t b[RECOVER_MAX * 8 + 64];
	struct nfs4_recover *rc;
	size_t n, full;

	(void)state;
	full = image(b, 3, 3);
	assert_int_equal(full, 12 + 3 * 8 + 4);
	write_bytes(b, full);
	assert_int_equal(load(&rc, 90), 0);
	assert_int_equal(stats(rc, T0).rs_loaded, 3);
	nfs4_recover_destroy(rc);

	/* every truncation of a good file */
	for (n = 0; n < full; n++) {
		write_bytes(b, n);
		assert_int_equal(load(&rc, 90), -EBADMSG);
		assert_null(rc);
	}
	/* one byte too many (the sum fixed to cover it) */
	full = image(b, 3, 3);
	b[full - 4] = 'x';
	put32(b + full - 3, 0);
	put32(b + full + 1, fnv(b, full + 1));
	write_bytes(b, full + 5);
	assert_int_equal(load(&rc, 90), -EBADMSG);
	/* a flipped byte: the sum */
	full = image(b, 3, 3);
	b[17] ^= 1;
	write_bytes(b, full);
	assert_int_equal(load(&rc, 90), -EBADMSG);
	/* another magic, another version (sums right) */
	full = image(b, 3, 3);
	b[0] = 'X';
	put32(b + full - 4, fnv(b, full - 4));
	write_bytes(b, full);
	assert_int_equal(load(&rc, 90), -EBADMSG);
	full = image(b, 3, 3);
	put32(b + 4, 2);
	put32(b + full - 4, fnv(b, full - 4));
	write_bytes(b, full);
	assert_int_equal(load(&rc, 90), -EBADMSG);
	/* a count saying more records than there are */
	full = image(b, 3, 4);
	write_bytes(b, full);
	assert_int_equal(load(&rc, 90), -EBADMSG);
	/* a record of length 0 and one of NFS4_OPAQUE_LIMIT + 1 */
	full = image(b, 3, 3);
	put32(b + 12, 0);
	put32(b + full - 4, fnv(b, full - 4));
	write_bytes(b, full);
	assert_int_equal(load(&rc, 90), -EBADMSG);
	full = image(b, 3, 3);
	put32(b + 12, NFS4_OPAQUE_LIMIT + 1);
	put32(b + full - 4, fnv(b, full - 4));
	write_bytes(b, full);
	assert_int_equal(load(&rc, 90), -EBADMSG);
	/* the same owner twice */
	full = image(b, 2, 2);
	memcpy(b + 12 + 8 + 4, "c000", 4);
	put32(b + full - 4, fnv(b, full - 4));
	write_bytes(b, full);
	assert_int_equal(load(&rc, 90), -EBADMSG);
	/* the bound: RECOVER_MAX records load, one more is -E2BIG */
	full = image(b, RECOVER_MAX, RECOVER_MAX);
	write_bytes(b, full);
	assert_int_equal(load(&rc, 90), 0);
	assert_int_equal(stats(rc, T0).rs_loaded, RECOVER_MAX);
	nfs4_recover_destroy(rc);
	full = image(b, RECOVER_MAX + 1, RECOVER_MAX + 1);
	write_bytes(b, full);
	assert_int_equal(load(&rc, 90), -E2BIG);
	/* a file longer than any the server writes */
	{
		size_t big = 12 + RECOVER_MAX * (4 + NFS4_OPAQUE_LIMIT) + 5;
		uint8_t *z = calloc(1, big);

		assert_non_null(z);
		write_bytes(z, big);
		free(z);
		assert_int_equal(load(&rc, 90), -E2BIG);
	}
	unlink(g_file);
}

/* the table is bounded: a client beyond it is counted, not recorded */
static void test_limits(void **state)
{
	struct nfs4_recover *rc;
	uint8_t owner[NFS4_OPAQUE_LIMIT + 1];
	static uint8_t b[12 + RECOVER_MAX * (4 + NFS4_OPAQUE_LIMIT) + 4];
	size_t n;

	(void)state;
	assert_int_equal(load(&rc, 90), 0);
	memset(owner, 'o', sizeof(owner));
	for (unsigned i = 0; i < RECOVER_MAX; i++) {
		/* owners of the longest size, distinct in their first bytes */
		owner[0] = (uint8_t)i;
		owner[1] = (uint8_t)(i >> 8);
		nfs4_recover_note(rc, owner, NFS4_OPAQUE_LIMIT, NFS4_REC_OPEN);
	}
	owner[0] = 0xff;
	owner[1] = 0xff;
	nfs4_recover_note(rc, owner, NFS4_OPAQUE_LIMIT, NFS4_REC_OPEN);
	nfs4_recover_note(rc, owner, NFS4_OPAQUE_LIMIT + 1, NFS4_REC_OPEN);
	assert_int_equal(stats(rc, T0).rs_records, RECOVER_MAX);
	assert_int_equal(stats(rc, T0).rs_no_room, 1);
	assert_int_equal(nfs4_recover_flush(rc), 0);
	n = read_bytes(b, sizeof(b));
	assert_int_equal(n, sizeof(b)); /* the largest file there can be */
	nfs4_recover_destroy(rc);
	/* and it loads again */
	assert_int_equal(load(&rc, 90), 0);
	assert_int_equal(stats(rc, T0).rs_loaded, RECOVER_MAX);
	nfs4_recover_destroy(rc);
	unlink(g_file);
}

/* a previous run recorded clients A and B */
static struct nfs4_recover *start_ab(uint32_t grace)
{
	struct nfs4_recover *rc;

	assert_int_equal(load(&rc, 0), 0); /* no grace: nothing loaded */
	nfs4_recover_note(rc, O("A"), NFS4_REC_OPEN);
	nfs4_recover_note(rc, O("B"), NFS4_REC_RECLAIM_COMPLETE);
	assert_int_equal(nfs4_recover_flush(rc), 0);
	nfs4_recover_destroy(rc);
	assert_int_equal(load(&rc, grace), 0);
	return rc;
}

static uint32_t file_count(void)
{
	uint8_t b[64];

	assert_true(read_bytes(b, sizeof(b)) >= 16);
	return (uint32_t)b[8] << 24 | (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11];
}

/* RFC 8881 8.4.2.1 and 18.51.3, worked by hand */
static void test_grace_rules(void **state)
{
	struct nfs4_recover *rc;

	(void)state;
	/* 1. in grace: A and B may reclaim, C (no record) may not; nobody
	 *    gets a new open or lock */
	rc = start_ab(90);
	assert_int_equal(stats(rc, T0).rs_loaded, 2);
	assert_int_equal(nfs4_recover_check(rc, O("A"), true, T0), NFS4_OK);
	assert_int_equal(nfs4_recover_check(rc, O("B"), true, T0 + 89), NFS4_OK);
	assert_int_equal(nfs4_recover_check(rc, O("C"), true, T0), NFS4ERR_NO_GRACE);
	assert_int_equal(nfs4_recover_check(rc, O("A"), false, T0), NFS4ERR_GRACE);
	assert_int_equal(nfs4_recover_check(rc, O("C"), false, T0), NFS4ERR_GRACE);
	/* a prefix of an owner is another owner */
	assert_int_equal(nfs4_recover_check(rc, O("AB"), true, T0), NFS4ERR_NO_GRACE);
	/* 2. A reclaims an open and a lock, then RECLAIM_COMPLETE: A's
	 *    reclaims are over, the grace is not (B has not come back) */
	nfs4_recover_note(rc, O("A"), NFS4_REC_OPEN_RECLAIM);
	nfs4_recover_note(rc, O("A"), NFS4_REC_LOCK_RECLAIM);
	nfs4_recover_note(rc, O("A"), NFS4_REC_RECLAIM_COMPLETE);
	assert_int_equal(nfs4_recover_check(rc, O("A"), true, T0 + 1), NFS4ERR_NO_GRACE);
	assert_int_equal(nfs4_recover_check(rc, O("A"), false, T0 + 1), NFS4ERR_GRACE);
	assert_int_equal(stats(rc, T0 + 1).rs_pending, 1);
	assert_true(nfs4_recover_in_grace(rc, T0 + 1));
	/* the file meanwhile keeps B, who may still come back, and A */
	assert_int_equal(nfs4_recover_flush(rc), 0);
	assert_int_equal(file_count(), 2);
	/* 3. B's RECLAIM_COMPLETE: every recorded client is done, the grace
	 *    ends before its time */
	nfs4_recover_note(rc, O("B"), NFS4_REC_RECLAIM_COMPLETE);
	assert_false(nfs4_recover_in_grace(rc, T0 + 2));
	assert_int_equal(nfs4_recover_check(rc, O("C"), false, T0 + 2), NFS4_OK);
	assert_int_equal(nfs4_recover_check(rc, O("B"), true, T0 + 2), NFS4ERR_NO_GRACE);
	{
		struct nfs4_recover_stats s = stats(rc, T0 + 2);

		assert_int_equal(s.rs_open_reclaims, 1);
		assert_int_equal(s.rs_lock_reclaims, 1);
		assert_int_equal(s.rs_grace_refused, 3);
		assert_int_equal(s.rs_no_grace, 4);
		assert_int_equal(s.rs_pending, 0);
		assert_int_equal(s.rs_records, 2);
	}
	nfs4_recover_destroy(rc);

	/* 4. the grace runs out: in at T0 + 89, over at T0 + 90; A, which
	 *    reclaimed, stays in the file, B, which never came, goes */
	rc = start_ab(90);
	nfs4_recover_note(rc, O("A"), NFS4_REC_OPEN_RECLAIM);
	assert_int_equal(nfs4_recover_check(rc, O("C"), false, T0 + 89), NFS4ERR_GRACE);
	assert_int_equal(nfs4_recover_check(rc, O("C"), false, T0 + 90), NFS4_OK);
	assert_int_equal(nfs4_recover_check(rc, O("B"), true, T0 + 90), NFS4ERR_NO_GRACE);
	assert_int_equal(stats(rc, T0 + 90).rs_pending, 2); /* neither completed */
	assert_int_equal(nfs4_recover_flush(rc), 0);
	assert_int_equal(file_count(), 1);
	nfs4_recover_destroy(rc);
	/* ... so the next start lets A reclaim and not B */
	assert_int_equal(load(&rc, 30), 0);
	assert_int_equal(nfs4_recover_check(rc, O("A"), true, T0), NFS4_OK);
	assert_int_equal(nfs4_recover_check(rc, O("B"), true, T0), NFS4ERR_NO_GRACE);
	nfs4_recover_destroy(rc);

	/* 5. --grace 0: no grace period, the loaded records are dropped */
	rc = start_ab(0);
	assert_false(nfs4_recover_in_grace(rc, T0));
	assert_int_equal(nfs4_recover_check(rc, O("A"), true, T0), NFS4ERR_NO_GRACE);
	assert_int_equal(nfs4_recover_check(rc, O("A"), false, T0), NFS4_OK);
	assert_true(nfs4_recover_pending(rc));
	assert_int_equal(nfs4_recover_flush(rc), 0);
	assert_int_equal(file_count(), 0);
	nfs4_recover_destroy(rc);

	/* 6. a client of the previous run that the server drops in grace
	 *    (DESTROY_CLIENTID, a new incarnation) before completing: its new
	 *    record goes, the old one stays until the grace ends */
	rc = start_ab(90);
	nfs4_recover_note(rc, O("A"), NFS4_REC_OPEN_RECLAIM);
	nfs4_recover_note(rc, O("A"), NFS4_REC_FORGET);
	assert_int_equal(nfs4_recover_check(rc, O("A"), true, T0 + 1), NFS4_OK);
	assert_int_equal(stats(rc, T0 + 1).rs_records, 0);
	nfs4_recover_destroy(rc);
	unlink(g_file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_file_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grace_rules, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
