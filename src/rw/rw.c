// SPDX-License-Identifier: MIT
/*
 * rw.c - building RDMA Read and RDMA Write chains for chunks.
 */
#include <errno.h>
#include <string.h>

#include "rw/rw.h"

int rpcrdma_rw_build_reads(const struct rpcrdma_segment *segs, uint32_t nsegs,
			   uint8_t *dst, uint32_t lkey,
			   struct ibv_send_wr *wrs, struct ibv_sge *sges,
			   uint32_t cap)
{
	uint32_t i, n = 0;

	for (i = 0; i < nsegs; i++) {
		const struct rpcrdma_segment *seg = &segs[i];

		if (!seg->rs_length)
			continue;
		if (n == cap)
			return -ENOSPC;
		sges[n].addr = (uintptr_t)dst;
		sges[n].length = seg->rs_length;
		sges[n].lkey = lkey;
		memset(&wrs[n], 0, sizeof(wrs[n]));
		wrs[n].opcode = IBV_WR_RDMA_READ;
		wrs[n].sg_list = &sges[n];
		wrs[n].num_sge = 1;
		wrs[n].wr.rdma.remote_addr = seg->rs_offset;
		wrs[n].wr.rdma.rkey = seg->rs_handle;
		if (n)
			wrs[n - 1].next = &wrs[n];
		dst += seg->rs_length;
		n++;
	}
	return (int)n;
}

int rpcrdma_rw_build_writes(const struct rpcrdma_rw_piece *src,
			    unsigned npieces,
			    const struct rpcrdma_segment *segs, uint32_t nsegs,
			    uint32_t lkey, struct ibv_send_wr *wrs,
			    struct ibv_sge *sges, uint32_t cap,
			    uint32_t *written)
{
	unsigned piece = 0;
	uint32_t piece_off = 0, seg = 0, seg_off = 0, n = 0;
	struct ibv_send_wr *wr = NULL;

	memset(written, 0, nsegs * sizeof(*written));
	while (piece < npieces) {
		uint32_t take;
		struct ibv_sge *sge;

		if (piece_off == src[piece].rp_len) {
			piece++;
			piece_off = 0;
			continue;
		}
		while (seg < nsegs && seg_off == segs[seg].rs_length) {
			seg++;
			seg_off = 0;
			wr = NULL;
		}
		if (seg == nsegs)
			return -EMSGSIZE;
		/* A new work request at each segment, or when its SGEs are full. */
		if (!wr || wr->num_sge == (int)RPCRDMA_RW_MAX_SGE) {
			if (n == cap)
				return -ENOSPC;
			wr = &wrs[n];
			memset(wr, 0, sizeof(*wr));
			wr->opcode = IBV_WR_RDMA_WRITE;
			wr->sg_list = &sges[n * RPCRDMA_RW_MAX_SGE];
			wr->wr.rdma.remote_addr = segs[seg].rs_offset + seg_off;
			wr->wr.rdma.rkey = segs[seg].rs_handle;
			if (n)
				wrs[n - 1].next = wr;
			n++;
		}
		take = src[piece].rp_len - piece_off;
		if (take > segs[seg].rs_length - seg_off)
			take = segs[seg].rs_length - seg_off;
		sge = &wr->sg_list[wr->num_sge++];
		sge->addr = (uintptr_t)(src[piece].rp_addr + piece_off);
		sge->length = take;
		sge->lkey = lkey;
		piece_off += take;
		seg_off += take;
		written[seg] += take;
	}
	return (int)n;
}
