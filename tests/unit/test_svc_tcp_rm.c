// SPDX-License-Identifier: MIT
/*
 * test_svc_tcp_rm.c - the record-marking reader (src/svc/svc_tcp_rm.c,
 * RFC 5531 section 11) driven from memory, as the transport drives it:
 * svc_rm_iov() says where the next bytes go, the test "reads" at most a
 * given number of bytes of a prepared stream into those iovecs, and
 * svc_rm_advance() is told how many came.  Where svc_rm_want() asks for a
 * larger buffer, the test hands one over with svc_rm_adopt() as the
 * transport does with a kept large buffer.  The expected records are the
 * fragments' bytes concatenated, worked out while the stream is built.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <cmocka.h>

#include "svc/svc_xprt.h"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A stream of records under construction and the records it holds. */
struct stream {
	uint8_t *s;
	size_t len;
	uint8_t *rec[4];
	size_t reclen[4];
	unsigned nrec;
};

/* Append one record of the fragments of sizes @frags (@n of them), the
 * bytes a pattern of the record number and offset. */
static void add_record(struct stream *st, const size_t *frags, unsigned n)
{
	size_t total = 0, at = 0;
	unsigned i;
	uint8_t *r;

	for (i = 0; i < n; i++)
		total += frags[i];
	r = malloc(total + 1);
	assert_non_null(r);
	for (at = 0; at < total; at++)
		r[at] = (uint8_t)(at * 7 + st->nrec * 13 + 1);
	st->s = realloc(st->s, st->len + total + 4 * n);
	assert_non_null(st->s);
	for (at = 0, i = 0; i < n; i++) {
		put32(st->s + st->len, (uint32_t)frags[i] | (i + 1 == n ? 0x80000000u : 0));
		st->len += 4;
		memcpy(st->s + st->len, r + at, frags[i]);
		st->len += frags[i];
		at += frags[i];
	}
	st->rec[st->nrec] = r;
	st->reclen[st->nrec++] = total;
}

static void stream_free(struct stream *st)
{
	unsigned i;

	for (i = 0; i < st->nrec; i++)
		free(st->rec[i]);
	free(st->s);
}

/*
 * Feed @st to a fresh reader (cap @max): the first read at most @first
 * bytes, every later one at most @step; with @adopt, a buffer of exactly
 * svc_rm_want() bytes is handed over whenever it asks for one.  Every
 * record must come out byte-exact, in order; the reader ends between
 * records.  Return: how many adoptions were made.
 */
static unsigned feed(const struct stream *st, uint32_t max, size_t first, size_t step, bool adopt)
{
	struct svc_rm r;
	size_t at = 0, limit = first;
	unsigned got = 0, adopted = 0;

	svc_rm_init(&r, max);
	while (at < st->len) {
		struct iovec iov[2];
		size_t n = 0, k;
		uint32_t want = svc_rm_want(&r);
		int niov, rc;

		if (adopt && want) {
			uint8_t *buf = malloc(want), *old;
			uint32_t oc;

			assert_non_null(buf);
			old = svc_rm_adopt(&r, buf, want, &oc);
			assert_ptr_not_equal(old, buf);
			free(old);
			assert_int_equal(svc_rm_want(&r), 0);
			adopted++;
		}
		niov = svc_rm_iov(&r, iov);
		assert_true(niov == 1 || niov == 2);
		/* as readv() would: the iovecs in turn, up to the limit */
		for (k = 0; k < (size_t)niov && at + n < st->len && n < limit; k++) {
			size_t c = iov[k].iov_len;

			if (c > st->len - at - n)
				c = st->len - at - n;
			if (c > limit - n)
				c = limit - n;
			memcpy(iov[k].iov_base, st->s + at + n, c);
			n += c;
			if (c < iov[k].iov_len)
				break;
		}
		assert_true(n > 0);
		at += n;
		limit = step;
		rc = svc_rm_advance(&r, n);
		while (rc == SVC_RM_RECORD) {
			uint8_t *buf;
			uint32_t len, cap;

			rc = svc_rm_take(&r, &buf, &len, &cap);
			assert_true(got < st->nrec);
			assert_int_equal(len, st->reclen[got]);
			assert_true(cap >= len);
			if (len)
				assert_memory_equal(buf, st->rec[got], len);
			got++;
			svc_rm_give(&r, buf, cap); /* reused, as the transport does */
		}
		assert_int_equal(rc, SVC_RM_MORE);
	}
	assert_int_equal(got, st->nrec);
	assert_false(svc_rm_partial(&r));
	svc_rm_fini(&r);
	return adopted;
}

/* Two records, one of three fragments (10, 5000, 3 bytes) and one small
 * one (40 bytes): cut at every byte boundary (the first read k bytes,
 * then as much as offered), with and without buffers adopted; and read
 * one byte at a time. */
static void test_rm_split_everywhere(void **state)
{
	size_t f1[] = { 10, 5000, 3 }, f2[] = { 40 };
	struct stream st = { 0 };
	size_t k;

	(void)state;
	add_record(&st, f1, 3);
	add_record(&st, f2, 1);
	for (k = 1; k <= st.len; k++) {
		feed(&st, 1u << 20, k, SIZE_MAX, false);
		feed(&st, 1u << 20, k, SIZE_MAX, true);
	}
	feed(&st, 1u << 20, 1, 1, false);
	feed(&st, 1u << 20, 1, 1, true);
	stream_free(&st);
}

/* A large record (200,000 bytes in two fragments of 120,000 and 80,000)
 * with an empty record after it: read in bursts of 1,000 and 65,536
 * bytes, with and without adoption; with adoption the reader asks twice
 * (once a fragment's mark is in: the first fragment's 120,000 bytes, then
 * the record so far and the second's: 200,000) whatever the bursts. */
static void test_rm_large_adopted(void **state)
{
	size_t f1[] = { 120000, 80000 }, f2[] = { 0 };
	struct stream st = { 0 };

	(void)state;
	add_record(&st, f1, 2);
	add_record(&st, f2, 1);
	feed(&st, 1u << 20, 1000, 1000, false);
	feed(&st, 1u << 20, 65536, 65536, false);
	assert_int_equal(feed(&st, 1u << 20, 1000, 1000, true), 2);
	assert_int_equal(feed(&st, 1u << 20, 65536, 65536, true), 2);
	assert_int_equal(feed(&st, 1u << 20, SIZE_MAX, SIZE_MAX, true), 2);
	stream_free(&st);
}

/* svc_rm_want(), svc_rm_frag_left() and svc_rm_adopt() step by step,
 * the figures worked out by hand: a mark announcing a last fragment of
 * 100,000 bytes and 10 bytes of it come in the first (read-ahead) read. */
static void test_rm_want_by_hand(void **state)
{
	uint8_t in[14], *buf, *old;
	struct iovec iov[2];
	struct svc_rm r;
	uint32_t oc;
	int n;

	(void)state;
	svc_rm_init(&r, 1u << 20);
	assert_int_equal(svc_rm_want(&r), 0); /* between records */
	assert_int_equal(svc_rm_frag_left(&r), 0);
	n = svc_rm_iov(&r, iov);
	assert_int_equal(n, 1);
	assert_int_equal(iov[0].iov_len, SVC_RM_AHEAD);
	put32(in, 0x80000000u | 100000);
	memset(in + 4, 0x5a, 10);
	memcpy(iov[0].iov_base, in, sizeof(in));
	assert_int_equal(svc_rm_advance(&r, sizeof(in)), SVC_RM_MORE);
	/* 10 bytes in a 4,096-byte buffer, 99,990 to come */
	assert_int_equal(svc_rm_frag_left(&r), 99990);
	assert_int_equal(svc_rm_want(&r), 100000);
	/* a buffer smaller than the 10 bytes held: refused, nothing moves */
	buf = malloc(8);
	assert_non_null(buf);
	assert_ptr_equal(svc_rm_adopt(&r, buf, 8, &oc), buf);
	assert_int_equal(oc, 8);
	free(buf);
	assert_int_equal(svc_rm_want(&r), 100000);
	buf = malloc(100000);
	assert_non_null(buf);
	old = svc_rm_adopt(&r, buf, 100000, &oc);
	assert_non_null(old);
	assert_int_equal(oc, SVC_RM_MIN_CAP);
	free(old);
	assert_int_equal(svc_rm_want(&r), 0);
	assert_memory_equal(buf, in + 4, 10);
	/* the whole rest in one iovec straight into the adopted buffer, the
	 * next mark in the second */
	n = svc_rm_iov(&r, iov);
	assert_int_equal(n, 2);
	assert_ptr_equal(iov[0].iov_base, buf + 10);
	assert_int_equal(iov[0].iov_len, 99990);
	assert_int_equal(iov[1].iov_len, 4);
	memset(iov[0].iov_base, 0x5a, 99990);
	assert_int_equal(svc_rm_advance(&r, 99990), SVC_RM_RECORD);
	assert_int_equal(svc_rm_frag_left(&r), 0);
	assert_int_equal(svc_rm_want(&r), 0);
	{
		uint8_t *rec;
		uint32_t len, cap;

		assert_int_equal(svc_rm_take(&r, &rec, &len, &cap), SVC_RM_MORE);
		assert_ptr_equal(rec, buf);
		assert_int_equal(len, 100000);
		assert_int_equal(cap, 100000);
		free(rec);
	}
	svc_rm_fini(&r);
}

/* A mark over the cap: -EMSGSIZE before any buffer is asked for. */
static void test_rm_want_over_cap(void **state)
{
	uint8_t in[4];
	struct iovec iov[2];
	struct svc_rm r;

	(void)state;
	svc_rm_init(&r, 65536);
	assert_int_equal(svc_rm_iov(&r, iov), 1);
	put32(in, 0x80000000u | 65537);
	memcpy(iov[0].iov_base, in, 4);
	assert_int_equal(svc_rm_advance(&r, 4), -EMSGSIZE);
	assert_int_equal(svc_rm_want(&r), 0);
	svc_rm_fini(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rm_split_everywhere),
		cmocka_unit_test(test_rm_large_adopted),
		cmocka_unit_test(test_rm_want_by_hand),
		cmocka_unit_test(test_rm_want_over_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
