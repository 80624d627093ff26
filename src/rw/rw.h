/* SPDX-License-Identifier: MIT */
/*
 * rw.h - the chunk mover: work requests that move chunk data with RDMA Read
 * and RDMA Write (RFC 8166 3.4.5, 3.4.6).  Internal to librpcrdma.
 *
 * These functions only build work-request chains in caller-owned arrays;
 * posting them (one post per chunk) is the caller's job, so they can be
 * unit-tested without a device.
 */
#ifndef RPCRDMA_RW_H
#define RPCRDMA_RW_H

#include <stdint.h>

#include <infiniband/verbs.h>
#include <rpcrdma/wire.h>

/** Most local pieces gathered by one RDMA Write work request. */
#define RPCRDMA_RW_MAX_SGE 4u

/** A local, registered source piece for RDMA Write. */
struct rpcrdma_rw_piece {
	const uint8_t *rp_addr;
	uint32_t rp_len; /* bytes */
};

/**
 * rpcrdma_rw_build_reads - RDMA Reads that pull a chunk into local memory.
 * @segs, @nsegs: the chunk's segments (remote), in order.
 * @dst:  local destination, contiguous, at least the sum of lengths.
 * @lkey: local key covering @dst.
 * @wrs, @sges, @cap: caller-owned arrays of @cap entries each.
 *
 * Builds one RDMA Read per non-empty segment, linked through ->next; the
 * last one has next NULL and no flags (the caller signals it).
 * Return: number of work requests (0 for an empty chunk), or -ENOSPC when
 * more than @cap would be needed.
 */
int rpcrdma_rw_build_reads(const struct rpcrdma_segment *segs, uint32_t nsegs,
			   uint8_t *dst, uint32_t lkey,
			   struct ibv_send_wr *wrs, struct ibv_sge *sges,
			   uint32_t cap);

/**
 * rpcrdma_rw_build_writes - RDMA Writes that scatter local pieces over a
 * chunk's segments, filling each segment before moving to the next.
 * @src, @npieces: local data, in stream order.
 * @segs, @nsegs: the chunk's segments (remote).
 * @lkey: local key covering every piece.
 * @wrs, @sges, @cap: caller-owned arrays: @cap work requests and
 *        @cap * RPCRDMA_RW_MAX_SGE scatter/gather entries.
 * @written: out, @nsegs entries: bytes written into each segment (0 for a
 *        segment left unused), as the reply's Write list reports them.
 *
 * Return: number of work requests, linked, last->next NULL, flags 0;
 * -EMSGSIZE when the data exceeds the chunk; -ENOSPC when @cap is short.
 */
int rpcrdma_rw_build_writes(const struct rpcrdma_rw_piece *src,
			    unsigned npieces,
			    const struct rpcrdma_segment *segs, uint32_t nsegs,
			    uint32_t lkey, struct ibv_send_wr *wrs,
			    struct ibv_sge *sges, uint32_t cap,
			    uint32_t *written);

#endif /* RPCRDMA_RW_H */
