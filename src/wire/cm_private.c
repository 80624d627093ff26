// SPDX-License-Identifier: MIT
/*
 * cm_private.c - RDMA-CM private data for RPC-over-RDMA Version 1
 * (RFC 8797 section 4) and the inline threshold rule it implies.
 *
 * Layout, 8 octets:
 *   0..3  Format Identifier, 0xf6ab0e18, network byte order
 *   4     Version (1)
 *   5     Flags: reserved bits, then bit 0 "I" (Remote Invalidation)
 *   6     Send Size    } in 1024-octet units, minus one:
 *   7     Receive Size }   0 means 1 KiB, 255 means 256 KiB
 */
#include <errno.h>

#include <rpcrdma/wire.h>

#include "wire_internal.h"

#define CM_SIZE_UNIT 1024u
#define CM_SIZE_MAX (256u * CM_SIZE_UNIT)

/* Bytes to the one-octet size code: round down to a KiB, clamp 1..256. */
static uint8_t cm_size_encode(uint32_t bytes)
{
	uint32_t kib = bytes / CM_SIZE_UNIT;

	if (kib < 1)
		kib = 1;
	if (kib > CM_SIZE_MAX / CM_SIZE_UNIT)
		kib = CM_SIZE_MAX / CM_SIZE_UNIT;
	return (uint8_t)(kib - 1);
}

static uint32_t cm_size_decode(uint8_t code)
{
	return ((uint32_t)code + 1) * CM_SIZE_UNIT;
}

void rpcrdma_wire_encode_private(uint8_t buf[RPCRDMA_CM_PRIVATE_BYTES],
				 const struct rpcrdma_cm_private *p)
{
	store_be32(buf, RPCRDMA_CM_MAGIC);
	buf[4] = RPCRDMA_CM_VERSION;
	/* Reserved flag bits are sent as zero (RFC 8797 4.1). */
	buf[5] = (uint8_t)(p->cp_flags & RPCRDMA_CM_FLAG_RSI);
	buf[6] = cm_size_encode(p->cp_send_size);
	buf[7] = cm_size_encode(p->cp_recv_size);
}

int rpcrdma_wire_decode_private(const void *buf, size_t len,
				struct rpcrdma_cm_private *p)
{
	const uint8_t *b = buf;

	if (!b || len < RPCRDMA_CM_PRIVATE_BYTES ||
	    load_be32(b) != RPCRDMA_CM_MAGIC)
		return -ENODATA;
	if (b[4] != RPCRDMA_CM_VERSION)
		return -EPROTONOSUPPORT;
	p->cp_version = b[4];
	/* Reserved bits are ignored on receipt. */
	p->cp_flags = b[5] & RPCRDMA_CM_FLAG_RSI;
	p->cp_send_size = cm_size_decode(b[6]);
	p->cp_recv_size = cm_size_decode(b[7]);
	return 0;
}

uint32_t rpcrdma_wire_inline_threshold(uint32_t local, uint32_t peer)
{
	if (peer == 0)
		peer = RPCRDMA_DEFAULT_INLINE;
	return local < peer ? local : peer;
}
