// SPDX-License-Identifier: MIT
/*
 * bench_wire.c - nanoseconds per decode and per encode of RPC-over-RDMA
 * transport headers (a benchmark, not a test: it asserts nothing about time).
 *
 * Headers: no chunks (the common inline call), and a 16-segment Write
 * chunk plus a one-segment Reply chunk (an NFS READ with a Reply chunk).
 * Prints one JSON object per header kind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rpcrdma/wire.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static volatile uint32_t sink;

static void bench(const char *name, const struct rpcrdma_hdr *h, long iters)
{
	static struct rpcrdma_hdr out;
	struct rpcrdma_wire_err err;
	uint8_t buf[4096 + 256];
	double t0, t_dec, t_enc;
	int len;
	long i;

	len = rpcrdma_wire_encode(buf, sizeof(buf), h);
	if (len < 0) {
		fprintf(stderr, "bench_wire: cannot encode %s\n", name);
		exit(1);
	}
	if (rpcrdma_wire_decode_call(buf, (size_t)len, NULL, &out, &err)) {
		fprintf(stderr, "bench_wire: %s does not decode: %s\n", name, err.we_detail);
		exit(1);
	}
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		rpcrdma_wire_decode_call(buf, (size_t)len, NULL, &out, &err);
		sink += out.rh_nsegs;
	}
	t_dec = (now_ns() - t0) / (double)iters;
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		sink += (uint32_t)rpcrdma_wire_encode(buf, sizeof(buf), h);
	t_enc = (now_ns() - t0) / (double)iters;
	printf("{\"header\":\"%s\",\"bytes\":%d,\"iterations\":%ld,"
	       "\"decode_ns\":%.1f,\"encode_ns\":%.1f}\n", name, len, iters, t_dec, t_enc);
}

int main(int argc, char **argv)
{
	static struct rpcrdma_hdr h;
	long iters = argc > 1 ? atol(argv[1]) : 2000000;
	uint32_t i;

	if (iters <= 0) {
		fprintf(stderr, "usage: bench_wire [ITERATIONS]\n");
		return 2;
	}
	memset(&h, 0, sizeof(h));
	h.rh_xid = 0x12345678;
	h.rh_vers = RPCRDMA_VERSION;
	h.rh_credits = 128;
	h.rh_proc = RDMA_MSG;
	bench("no-chunks", &h, iters);

	h.rh_nwrite = 1;
	h.rh_write[0].rc_first = 0;
	h.rh_write[0].rc_nsegs = 16;
	for (i = 0; i < 16; i++) {
		h.rh_segs[i].rs_handle = 0x1000 + i;
		h.rh_segs[i].rs_length = 65536;
		h.rh_segs[i].rs_offset = 0x7f0000000000ull + (uint64_t)i * 65536;
	}
	h.rh_write[0].rc_length = 16 * 65536;
	h.rh_has_reply = true;
	h.rh_reply.rc_first = 16;
	h.rh_reply.rc_nsegs = 1;
	h.rh_segs[16] = (struct rpcrdma_segment){ 0x2000, 4096, 0x7f1000000000ull };
	h.rh_reply.rc_length = 4096;
	h.rh_nsegs = 17;
	bench("write16-reply1", &h, iters);
	return 0;
}
