// SPDX-License-Identifier: MIT
/*
 * fuzz_wire.c - libFuzzer target over the wire codec.
 *
 * Each input is decoded as a call (Responder's view) and as a reply
 * (Requester's view).  A rejection must name a rule and a valid answer; an
 * accepted header must stay within the input, and re-encoding it must give
 * back exactly its bytes.  The inline body of an accepted RDMA_MSG goes
 * through the RPC header decoder, and the input's first bytes through the
 * RFC 8797 private data decoder.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rpcrdma/wire.h>

static struct rpcrdma_hdr hdr;
static uint8_t out[8192];

static void check_dir(const uint8_t *data, size_t size, int reply)
{
	struct rpcrdma_wire_err err;
	struct rpcrdma_rpc_msg msg;
	int ret;

	if (reply)
		ret = rpcrdma_wire_decode_reply(data, size, NULL, &hdr, &err);
	else
		ret = rpcrdma_wire_decode_call(data, size, NULL, &hdr, &err);
	if (ret) {
		if (ret != -EBADMSG || !err.we_rule || !err.we_rule[0] ||
		    err.we_answer > RPCRDMA_ANSWER_ERR_CHUNK ||
		    !memchr(err.we_detail, 0, sizeof(err.we_detail)))
			abort();
		if (reply && err.we_answer != RPCRDMA_ANSWER_DROP)
			abort();
		return;
	}
	if (hdr.rh_hdr_len > size || hdr.rh_inline_len != size - hdr.rh_hdr_len)
		abort();
	if (rpcrdma_wire_hdr_size(&hdr) != hdr.rh_hdr_len)
		abort();
	ret = rpcrdma_wire_encode(out, sizeof(out), &hdr);
	if (ret < 0 || (uint32_t)ret != hdr.rh_hdr_len ||
	    memcmp(out, data, hdr.rh_hdr_len) != 0)
		abort();
	if (hdr.rh_proc == RDMA_MSG) {
		ret = rpcrdma_wire_decode_rpc(data + hdr.rh_hdr_len,
					      hdr.rh_inline_len, &msg);
		if (!ret && msg.rm_hdr_len > hdr.rh_inline_len)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_cm_private cp;
	struct rpcrdma_rpc_msg msg;

	check_dir(data, size, 0);
	check_dir(data, size, 1);
	if (!rpcrdma_wire_decode_rpc(data, size, &msg) && msg.rm_hdr_len > size)
		abort();
	if (!rpcrdma_wire_decode_private(data, size, &cp) &&
	    (cp.cp_send_size < 1024 || cp.cp_send_size > 262144 ||
	     cp.cp_recv_size < 1024 || cp.cp_recv_size > 262144))
		abort();
	return 0;
}
