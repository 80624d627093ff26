// SPDX-License-Identifier: MIT
/*
 * nlm_range.c - byte-range arithmetic for NLM v4 locks: the wire's
 * (l_offset, l_len) as an inclusive range, and one owner's set of ranges
 * with the POSIX rules for splitting and merging (IEEE 1003.1, fcntl
 * F_SETLK: a new lock replaces the owner's locks on the same bytes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nlm_internal.h"

int nlm_range_from_wire(uint64_t offset, uint64_t len, struct nlm_range *r)
{
	if (offset > NLM_OFFSET_MAX)
		return -EFBIG;
	r->nr_start = offset;
	if (len == 0 || len - 1 > NLM_OFFSET_MAX - offset)
		r->nr_end = NLM_OFFSET_MAX;
	else
		r->nr_end = offset + (len - 1);
	return 0;
}

void nlm_range_to_wire(const struct nlm_range *r, uint64_t *offset, uint64_t *len)
{
	*offset = r->nr_start;
	*len = r->nr_end == NLM_OFFSET_MAX ? 0 : r->nr_end - r->nr_start + 1;
}

bool nlm_range_overlap(const struct nlm_range *a, const struct nlm_range *b)
{
	return a->nr_start <= b->nr_end && b->nr_start <= a->nr_end;
}

bool nlm_range_conflict(const struct nlm_range *a, const struct nlm_range *b)
{
	return (a->nr_excl || b->nr_excl) && nlm_range_overlap(a, b);
}

const struct nlm_range *nlm_rset_find_conflict(const struct nlm_rset *s,
					       const struct nlm_range *r)
{
	for (uint32_t i = 0; i < s->rs_n; i++)
		if (nlm_range_conflict(&s->rs_v[i], r))
			return &s->rs_v[i];
	return NULL;
}

bool nlm_rset_covers(const struct nlm_rset *s, const struct nlm_range *r)
{
	uint64_t next = r->nr_start;

	/* sorted and disjoint: walk the ranges that cover r in order */
	for (uint32_t i = 0; i < s->rs_n; i++) {
		const struct nlm_range *x = &s->rs_v[i];

		if (x->nr_end < next || x->nr_start > next)
			continue;
		if (x->nr_excl != r->nr_excl)
			return false;
		if (x->nr_end >= r->nr_end)
			return true;
		next = x->nr_end + 1;
	}
	return false;
}

static int range_cmp(const void *a, const void *b)
{
	const struct nlm_range *x = a, *y = b;

	return x->nr_start < y->nr_start ? -1 : x->nr_start > y->nr_start;
}

int nlm_rset_apply(struct nlm_rset *s, const struct nlm_range *r, bool unlock,
		   uint32_t max, int *delta)
{
	uint32_t n = 0, cap = s->rs_n + 2;
	struct nlm_range *v = malloc(sizeof(*v) * cap);

	if (!v)
		return -ENOMEM;
	/* the parts of each range outside r: none, one or two */
	for (uint32_t i = 0; i < s->rs_n; i++) {
		const struct nlm_range *x = &s->rs_v[i];

		if (!nlm_range_overlap(x, r)) {
			v[n++] = *x;
			continue;
		}
		if (x->nr_start < r->nr_start) {
			v[n] = *x;
			v[n++].nr_end = r->nr_start - 1;
		}
		if (x->nr_end > r->nr_end) {
			v[n] = *x;
			v[n++].nr_start = r->nr_end + 1;
		}
	}
	if (!unlock)
		v[n++] = *r;
	qsort(v, n, sizeof(*v), range_cmp);
	/* merge neighbours of one type that touch (no overlaps remain) */
	if (n > 1) {
		uint32_t w = 0;

		for (uint32_t i = 1; i < n; i++) {
			struct nlm_range *p = &v[w];

			if (p->nr_excl == v[i].nr_excl &&
			    p->nr_end != NLM_OFFSET_MAX &&
			    p->nr_end + 1 == v[i].nr_start)
				p->nr_end = v[i].nr_end;
			else
				v[++w] = v[i];
		}
		n = w + 1;
	}
	if (n > max && n > s->rs_n) {
		free(v);
		return -ENOSPC;
	}
	*delta = (int)n - (int)s->rs_n;
	free(s->rs_v);
	s->rs_v = v;
	s->rs_n = n;
	s->rs_cap = cap;
	return 0;
}

void nlm_rset_free(struct nlm_rset *s)
{
	free(s->rs_v);
	s->rs_v = NULL;
	s->rs_n = s->rs_cap = 0;
}
