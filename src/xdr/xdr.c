// SPDX-License-Identifier: MIT
/*
 * xdr.c - bounded XDR stream (RFC 4506 sections 4.1-4.10).
 */
#include <string.h>

#include <rpcrdma/xdr.h>

#include "common/be.h"

void rpcrdma_xdr_init(struct rpcrdma_xdr *xs, void *base, size_t len)
{
	xs->xs_base = base;
	xs->xs_len = len;
	xs->xs_pos = 0;
	xs->xs_err = false;
}

/* Claim @len bytes at the cursor; NULL (and the sticky error) when short. */
static uint8_t *xdr_take(struct rpcrdma_xdr *xs, size_t len)
{
	uint8_t *p;

	if (xs->xs_err || len > xs->xs_len - xs->xs_pos) {
		xs->xs_err = true;
		return NULL;
	}
	p = xs->xs_base + xs->xs_pos;
	xs->xs_pos += len;
	return p;
}

uint32_t rpcrdma_xdr_get_u32(struct rpcrdma_xdr *xs)
{
	const uint8_t *p = xdr_take(xs, 4);

	return p ? load_be32(p) : 0;
}

uint64_t rpcrdma_xdr_get_u64(struct rpcrdma_xdr *xs)
{
	const uint8_t *p = xdr_take(xs, 8);

	return p ? load_be64(p) : 0;
}

bool rpcrdma_xdr_get_bool(struct rpcrdma_xdr *xs)
{
	uint32_t v = rpcrdma_xdr_get_u32(xs);

	if (v > 1)
		xs->xs_err = true;
	return v == 1;
}

const uint8_t *rpcrdma_xdr_get_fixed(struct rpcrdma_xdr *xs, size_t len)
{
	if (len > SIZE_MAX - 3) {
		xs->xs_err = true;
		return NULL;
	}
	return xdr_take(xs, RPCRDMA_XDR_ALIGN(len));
}

const uint8_t *rpcrdma_xdr_get_opaque(struct rpcrdma_xdr *xs, uint32_t max,
				      uint32_t *lenp)
{
	uint32_t len = rpcrdma_xdr_get_u32(xs);
	const uint8_t *p;

	*lenp = 0;
	if (xs->xs_err)
		return NULL;
	if (len > max) {
		xs->xs_err = true;
		return NULL;
	}
	p = rpcrdma_xdr_get_fixed(xs, len);
	if (p)
		*lenp = len;
	return p;
}

uint8_t *rpcrdma_xdr_reserve(struct rpcrdma_xdr *xs, size_t len)
{
	size_t padded;
	uint8_t *p;

	if (len > SIZE_MAX - 3) {
		xs->xs_err = true;
		return NULL;
	}
	padded = RPCRDMA_XDR_ALIGN(len);
	p = xdr_take(xs, padded);
	if (p && padded != len)
		memset(p + len, 0, padded - len);
	return p;
}

void rpcrdma_xdr_put_u32(struct rpcrdma_xdr *xs, uint32_t v)
{
	uint8_t *p = xdr_take(xs, 4);

	if (p)
		store_be32(p, v);
}

void rpcrdma_xdr_put_u64(struct rpcrdma_xdr *xs, uint64_t v)
{
	uint8_t *p = xdr_take(xs, 8);

	if (p) {
		store_be64(p, v);
	}
}

void rpcrdma_xdr_put_fixed(struct rpcrdma_xdr *xs, const void *src, size_t len)
{
	uint8_t *p = rpcrdma_xdr_reserve(xs, len);

	if (p && len)
		memcpy(p, src, len);
}

void rpcrdma_xdr_put_opaque(struct rpcrdma_xdr *xs, const void *src, uint32_t len)
{
	if (RPCRDMA_XDR_ALIGN((size_t)len) + 4 > rpcrdma_xdr_remaining(xs)) {
		xs->xs_err = true;
		return;
	}
	rpcrdma_xdr_put_u32(xs, len);
	rpcrdma_xdr_put_fixed(xs, src, len);
}
