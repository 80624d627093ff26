/* SPDX-License-Identifier: MIT */
/*
 * be.h - big-endian (network order) words in byte buffers, as XDR and the
 * RPC-over-RDMA transport header lay them out (RFC 4506 sections 4.1 and
 * 4.5, RFC 8166 section 4.2).  Internal to the library: shared by the
 * layers, not installed.
 *
 * @p may be unaligned; the shifts let the compiler use one load or store
 * and a byte swap.
 */
#ifndef RPCRDMA_COMMON_BE_H
#define RPCRDMA_COMMON_BE_H

#include <stdint.h>

/* The 32-bit big-endian word at @p. */
static inline uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* The 64-bit big-endian hyper at @p: high word first. */
static inline uint64_t load_be64(const uint8_t *p)
{
	return (uint64_t)load_be32(p) << 32 | load_be32(p + 4);
}

/* Store @v at @p as one 32-bit big-endian word. */
static inline void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Store @v at @p as a 64-bit big-endian hyper: high word first. */
static inline void store_be64(uint8_t *p, uint64_t v)
{
	store_be32(p, (uint32_t)(v >> 32));
	store_be32(p + 4, (uint32_t)v);
}

/* Store @v at @p as one big-endian word; returns the byte after it. */
static inline uint8_t *put_be32(uint8_t *p, uint32_t v)
{
	store_be32(p, v);
	return p + 4;
}

/* Store @v at @p as a 16-bit big-endian field (network headers). */
static inline void store_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Store @v at @p as a 16-bit big-endian field; returns the byte after it. */
static inline uint8_t *put_be16(uint8_t *p, uint16_t v)
{
	store_be16(p, v);
	return p + 2;
}

/* Store @v at @p as a big-endian hyper; returns the byte after it. */
static inline uint8_t *put_be64(uint8_t *p, uint64_t v)
{
	store_be64(p, v);
	return p + 8;
}

#endif /* RPCRDMA_COMMON_BE_H */
