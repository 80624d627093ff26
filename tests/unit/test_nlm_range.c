// SPDX-License-Identifier: MIT
/*
 * test_nlm_range.c - NLM v4 byte-range arithmetic: (l_offset, l_len) as
 * ranges, and one owner's ranges split and merged as POSIX record locks
 * are (fcntl(2): a lock replaces the owner's locks on the same bytes;
 * adjacent locks of one type coalesce).  Expected values worked by hand.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "nlm/nlm_internal.h"

#define OMAX NLM_OFFSET_MAX

static void test_from_wire(void **state)
{
	struct nlm_range r;
	uint64_t off, len;

	(void)state;
	/* l_len 0: to the end of the file */
	assert_int_equal(nlm_range_from_wire(0, 0, &r), 0);
	assert_true(r.nr_start == 0 && r.nr_end == OMAX);
	/* bytes 10..14 */
	assert_int_equal(nlm_range_from_wire(10, 5, &r), 0);
	assert_true(r.nr_start == 10 && r.nr_end == 14);
	/* the last byte off_t can name */
	assert_int_equal(nlm_range_from_wire(OMAX, 1, &r), 0);
	assert_true(r.nr_start == OMAX && r.nr_end == OMAX);
	/* an offset beyond off_t: NLM4_FBIG */
	assert_int_equal(nlm_range_from_wire(OMAX + 1, 1, &r), -EFBIG);
	assert_int_equal(nlm_range_from_wire(UINT64_MAX, 0, &r), -EFBIG);
	/* a 64-bit end that wraps: clamped to the end (kernel lockd) */
	assert_int_equal(nlm_range_from_wire(100, UINT64_MAX, &r), 0);
	assert_true(r.nr_start == 100 && r.nr_end == OMAX);
	/* runs past 2^63 - 1 without wrapping: 2^62 + 2^63 - 1 > OMAX */
	assert_int_equal(nlm_range_from_wire(1ull << 62, 1ull << 63, &r), 0);
	assert_true(r.nr_end == OMAX);
	/* ends exactly at OMAX: 2^62 + (2^63 - 2^62) - 1 = 2^63 - 1 */
	assert_int_equal(nlm_range_from_wire(1ull << 62, (1ull << 63) - (1ull << 62), &r), 0);
	assert_true(r.nr_end == OMAX);
	/* one byte shorter */
	assert_int_equal(nlm_range_from_wire(1ull << 62, (1ull << 63) - (1ull << 62) - 1, &r), 0);
	assert_true(r.nr_end == OMAX - 1);

	/* back to the wire */
	r.nr_start = 10;
	r.nr_end = 14;
	nlm_range_to_wire(&r, &off, &len);
	assert_true(off == 10 && len == 5);
	r.nr_end = OMAX;
	nlm_range_to_wire(&r, &off, &len);
	assert_true(off == 10 && len == 0);
}

static void test_overlap_conflict(void **state)
{
	struct nlm_range a = { 0, 9, false }, b = { 9, 20, false }, c = { 10, 20, true };

	(void)state;
	assert_true(nlm_range_overlap(&a, &b));      /* share byte 9 */
	assert_false(nlm_range_overlap(&a, &c));     /* adjacent, no byte shared */
	assert_false(nlm_range_conflict(&a, &b));    /* two read locks */
	b.nr_excl = true;
	assert_true(nlm_range_conflict(&a, &b));     /* read vs write */
	assert_false(nlm_range_conflict(&a, &c));
}

static void expect(const struct nlm_rset *s, unsigned n, const struct nlm_range *want)
{
	assert_int_equal(s->rs_n, n);
	for (unsigned i = 0; i < n; i++) {
		assert_true(s->rs_v[i].nr_start == want[i].nr_start);
		assert_true(s->rs_v[i].nr_end == want[i].nr_end);
		assert_int_equal(s->rs_v[i].nr_excl, want[i].nr_excl);
	}
}

static void test_rset_split_merge(void **state)
{
	struct nlm_rset s = { 0 };
	struct nlm_range r;
	int d;

	(void)state;
	/* read 0..99 */
	r = (struct nlm_range){ 0, 99, false };
	assert_int_equal(nlm_rset_apply(&s, &r, false, 100, &d), 0);
	assert_int_equal(d, 1);
	/* write 40..49 inside it: read 0..39, write 40..49, read 50..99 */
	r = (struct nlm_range){ 40, 49, true };
	assert_int_equal(nlm_rset_apply(&s, &r, false, 100, &d), 0);
	assert_int_equal(d, 2);
	expect(&s, 3, (struct nlm_range[]){ { 0, 39, false }, { 40, 49, true },
					     { 50, 99, false } });
	/* unlock 45..59: read 0..39, write 40..44, read 60..99 */
	r = (struct nlm_range){ 45, 59, false };
	assert_int_equal(nlm_rset_apply(&s, &r, true, 100, &d), 0);
	assert_int_equal(d, 0);
	expect(&s, 3, (struct nlm_range[]){ { 0, 39, false }, { 40, 44, true },
					     { 60, 99, false } });
	/* downgrade 40..44 to read: merges with 0..39 */
	r = (struct nlm_range){ 40, 44, false };
	assert_int_equal(nlm_rset_apply(&s, &r, false, 100, &d), 0);
	assert_int_equal(d, -1);
	expect(&s, 2, (struct nlm_range[]){ { 0, 44, false }, { 60, 99, false } });
	/* fill the hole: one range 0..99 */
	r = (struct nlm_range){ 45, 59, false };
	assert_int_equal(nlm_rset_apply(&s, &r, false, 100, &d), 0);
	assert_int_equal(d, -1);
	expect(&s, 1, (struct nlm_range[]){ { 0, 99, false } });
	/* a write to the end of the file over the tail */
	r = (struct nlm_range){ 90, OMAX, true };
	assert_int_equal(nlm_rset_apply(&s, &r, false, 100, &d), 0);
	expect(&s, 2, (struct nlm_range[]){ { 0, 89, false }, { 90, OMAX, true } });
	/* covers: 95..1000 is written, 80..95 is not one type */
	r = (struct nlm_range){ 95, 1000, true };
	assert_true(nlm_rset_covers(&s, &r));
	r = (struct nlm_range){ 80, 95, false };
	assert_false(nlm_rset_covers(&s, &r));
	/* conflict lookup */
	r = (struct nlm_range){ 80, 95, false };
	assert_non_null(nlm_rset_find_conflict(&s, &r));
	r = (struct nlm_range){ 0, 89, false };
	assert_null(nlm_rset_find_conflict(&s, &r));
	/* unlock everything: 0..OMAX */
	r = (struct nlm_range){ 0, OMAX, false };
	assert_int_equal(nlm_rset_apply(&s, &r, true, 100, &d), 0);
	assert_int_equal(d, -2);
	assert_int_equal(s.rs_n, 0);
	nlm_rset_free(&s);
}

static void test_rset_bound(void **state)
{
	struct nlm_rset s = { 0 };
	struct nlm_range r;
	int d;

	(void)state;
	/* at most 2 ranges: a third separate one is refused, set unchanged */
	r = (struct nlm_range){ 0, 9, false };
	assert_int_equal(nlm_rset_apply(&s, &r, false, 2, &d), 0);
	r = (struct nlm_range){ 20, 29, false };
	assert_int_equal(nlm_rset_apply(&s, &r, false, 2, &d), 0);
	r = (struct nlm_range){ 40, 49, false };
	assert_int_equal(nlm_rset_apply(&s, &r, false, 2, &d), -ENOSPC);
	expect(&s, 2, (struct nlm_range[]){ { 0, 9, false }, { 20, 29, false } });
	/* splitting by unlock would make 3: refused too */
	r = (struct nlm_range){ 4, 5, false };
	assert_int_equal(nlm_rset_apply(&s, &r, true, 2, &d), -ENOSPC);
	/* one that merges is fine (10..19 joins both: one range) */
	r = (struct nlm_range){ 10, 19, false };
	assert_int_equal(nlm_rset_apply(&s, &r, false, 2, &d), 0);
	expect(&s, 1, (struct nlm_range[]){ { 0, 29, false } });
	nlm_rset_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_wire),
		cmocka_unit_test(test_overlap_conflict),
		cmocka_unit_test(test_rset_split_merge),
		cmocka_unit_test(test_rset_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
