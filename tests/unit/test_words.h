/* SPDX-License-Identifier: MIT */
/*
 * test_words.h - big-endian XDR words for building and reading messages in
 * unit tests (RFC 4506 4.1).  Header-only: each test program includes it.
 */
#ifndef RPCRDMA_TEST_WORDS_H
#define RPCRDMA_TEST_WORDS_H

#include <stdint.h>

/* Store @v at @p as one big-endian word; returns the next word. */
static inline uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

/* The big-endian word at @p. */
static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

#endif /* RPCRDMA_TEST_WORDS_H */
