/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma/xdr.h - a bounded XDR stream (RFC 4506) over a flat buffer.
 *
 * Decoding never reads past the end: the first short read sets an error
 * flag that sticks, and every later get returns zeroes, so a handler can
 * decode a whole argument list and check rpcrdma_xdr_ok() once.  Opaque
 * data is returned as a pointer into the buffer, never copied.
 */
#ifndef RPCRDMA_XDR_H
#define RPCRDMA_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** XDR round-up: bytes of @n rounded up to a multiple of 4. */
#define RPCRDMA_XDR_ALIGN(n) (((n) + 3u) & ~(size_t)3u)

/** A stream over @xs_base[0 .. xs_len); xs_pos is the cursor in bytes. */
struct rpcrdma_xdr {
	uint8_t *xs_base;
	size_t xs_len;
	size_t xs_pos;
	bool xs_err; /* a get/put ran out of room; sticky */
};

/**
 * rpcrdma_xdr_init - start a stream over @len bytes at @base.
 * The stream does not own @base.
 */
void rpcrdma_xdr_init(struct rpcrdma_xdr *xs, void *base, size_t len);

/** rpcrdma_xdr_ok - true while no get/put has run out of room. */
static inline bool rpcrdma_xdr_ok(const struct rpcrdma_xdr *xs)
{
	return !xs->xs_err;
}

/** rpcrdma_xdr_remaining - bytes left after the cursor. */
static inline size_t rpcrdma_xdr_remaining(const struct rpcrdma_xdr *xs)
{
	return xs->xs_err ? 0 : xs->xs_len - xs->xs_pos;
}

/* Decoding.  Each returns 0 (or NULL) and sets xs_err when short. */
uint32_t rpcrdma_xdr_get_u32(struct rpcrdma_xdr *xs);
uint64_t rpcrdma_xdr_get_u64(struct rpcrdma_xdr *xs);
/** rpcrdma_xdr_get_bool - a bool; values other than 0/1 set xs_err. */
bool rpcrdma_xdr_get_bool(struct rpcrdma_xdr *xs);
/**
 * rpcrdma_xdr_get_opaque - variable-length opaque<@max> (RFC 4506 4.10).
 * @lenp: out: its length in bytes.
 * Return: pointer into the buffer (not copied), or NULL with xs_err set
 * when the length exceeds @max or the bytes (with pad) run past the end.
 */
const uint8_t *rpcrdma_xdr_get_opaque(struct rpcrdma_xdr *xs, uint32_t max,
				      uint32_t *lenp);
/**
 * rpcrdma_xdr_get_fixed - fixed-length opaque[@len] (RFC 4506 4.9).
 * Return: pointer into the buffer, or NULL with xs_err set.
 */
const uint8_t *rpcrdma_xdr_get_fixed(struct rpcrdma_xdr *xs, size_t len);

/* Encoding.  Each sets xs_err when there is no room, and writes nothing. */
void rpcrdma_xdr_put_u32(struct rpcrdma_xdr *xs, uint32_t v);
void rpcrdma_xdr_put_u64(struct rpcrdma_xdr *xs, uint64_t v);
/** rpcrdma_xdr_put_opaque - length word, @len bytes, zero pad. */
void rpcrdma_xdr_put_opaque(struct rpcrdma_xdr *xs, const void *p, uint32_t len);
/** rpcrdma_xdr_put_fixed - @len bytes and zero pad, no length word. */
void rpcrdma_xdr_put_fixed(struct rpcrdma_xdr *xs, const void *p, size_t len);
/**
 * rpcrdma_xdr_reserve - claim @len bytes (rounded up to 4, pad zeroed).
 * Return: pointer to them for the caller to fill, or NULL with xs_err set.
 */
uint8_t *rpcrdma_xdr_reserve(struct rpcrdma_xdr *xs, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_XDR_H */
