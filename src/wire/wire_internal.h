/* SPDX-License-Identifier: MIT */
/*
 * wire_internal.h - helpers private to src/wire: a bounded, read-only
 * word cursor (big-endian loads and stores are in common/be.h).
 *
 * The cursor never reads past its end: wc_take() answers NULL when fewer
 * bytes remain than asked for, and the caller turns that into a rejection.
 */
#ifndef RPCRDMA_WIRE_INTERNAL_H
#define RPCRDMA_WIRE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/be.h"

/** A read-only cursor over wc_base[0 .. wc_len); wc_pos in bytes. */
struct wire_cursor {
	const uint8_t *wc_base;
	size_t wc_len;
	size_t wc_pos;
};

static inline size_t wc_remaining(const struct wire_cursor *wc)
{
	return wc->wc_len - wc->wc_pos;
}

/* Claim @n bytes; NULL (cursor unmoved) when fewer than @n remain. */
static inline const uint8_t *wc_take(struct wire_cursor *wc, size_t n)
{
	const uint8_t *p;

	if (n > wc->wc_len - wc->wc_pos)
		return NULL;
	p = wc->wc_base + wc->wc_pos;
	wc->wc_pos += n;
	return p;
}

/* One XDR word into *@v; 0, or -1 when short (cursor unmoved). */
static inline int wc_u32(struct wire_cursor *wc, uint32_t *v)
{
	const uint8_t *p = wc_take(wc, 4);

	if (!p)
		return -1;
	*v = load_be32(p);
	return 0;
}

#endif /* RPCRDMA_WIRE_INTERNAL_H */
