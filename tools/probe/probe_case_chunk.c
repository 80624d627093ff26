// SPDX-License-Identifier: MIT
/*
 * probe_case_chunk.c - rpcrdma-probe cases about chunks (RFC 8166 sections
 * 3.4, 4.3-4.5): Read chunk layouts, RDMA_NOMSG, unusable handles, an
 * unused Write chunk and Reply chunks of different sizes and shapes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "probe.h"

/* Read chunks around an inline NULL call (40 bytes of inline body). */
bool probe_case_read(struct probe_run *run, const struct probe_case *pk,
		     struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = probe_conn_new_xid(pc);
	uint32_t rkey = pc->pc_mr->rkey, call_len = PROBE_NULL_CALL_BYTES, i;
	uint8_t call[PROBE_NULL_CALL_BYTES];
	static struct rpcrdma_hdr h;
	uint8_t buf[PROBE_SEND_BYTES];

	probe_rpc_null_call(call, sizeof(call), xid);
	/* Whatever a lenient server reads from us is a copy of the call. */
	memcpy(pc->pc_chunk, call, sizeof(call));
	probe_hdr_init(&h, xid, PROBE_CREDITS_ASK, RDMA_MSG);
	switch ((enum read_kind)pk->pk_arg) {
	case RD_ALIGN:
		probe_hdr_add_read(&h, 2, rkey, 4, probe_chunk_addr(pc, 0));
		break;
	case RD_RANGE:
		probe_hdr_add_read(&h, PROBE_NULL_CALL_BYTES + 4, rkey, 4, probe_chunk_addr(pc, 0));
		break;
	case RD_ORDER:
		probe_hdr_add_read(&h, 40, rkey, 4, probe_chunk_addr(pc, 0));
		probe_hdr_add_read(&h, 36, rkey, 4, probe_chunk_addr(pc, 64));
		break;
	case RD_OVERLAP:
		probe_hdr_add_read(&h, 36, rkey, 8, probe_chunk_addr(pc, 0));
		probe_hdr_add_read(&h, 40, rkey, 4, probe_chunk_addr(pc, 64));
		break;
	case RD_POS0_MSG:
		probe_hdr_add_read(&h, 0, rkey, PROBE_NULL_CALL_BYTES, probe_chunk_addr(pc, 0));
		break;
	case RD_TOO_LONG:
		probe_hdr_add_read(&h, 40, rkey, 0x7fffffffu, probe_chunk_addr(pc, 0));
		break;
	case RD_LEN_WRAP:
		probe_hdr_add_read(&h, 40, rkey, 0x60000000u, probe_chunk_addr(pc, 0));
		probe_hdr_add_read(&h, 40, rkey, 0x60000000u, probe_chunk_addr(pc, 0));
		probe_hdr_add_read(&h, 40, rkey, 0x60000000u, probe_chunk_addr(pc, 0));
		break;
	case RD_NOMSG_NO_POS0:
		h.rh_proc = RDMA_NOMSG;
		probe_hdr_set_reply(&h, rkey, 4096, probe_chunk_addr(pc, 4096));
		call_len = 0;
		break;
	case RD_16_CHUNKS:
		/* 4-byte chunks, one after another behind the call. */
		for (i = 0; i < 16; i++)
			probe_hdr_add_read(&h, 40 + 4 * i, rkey, 4, probe_chunk_addr(pc, 64 * i));
		break;
	case RD_17_SEGS:
		for (i = 0; i < 17; i++)
			probe_hdr_add_read(&h, 40, rkey, 4, probe_chunk_addr(pc, 64 * i));
		break;
	case RD_16_ODD_SEGS:
		/* One 16-byte chunk in 1-byte segments, scattered. */
		for (i = 0; i < 16; i++)
			probe_hdr_add_read(&h, 40, rkey, 1, probe_chunk_addr(pc, 4096 + 97 * i));
		break;
	}
	probe_send_observe(run, buf, probe_msg_build(buf, sizeof(buf), &h, call, call_len), xid,
			   run->pr_opts->po_timeout_ms, ob);
	return ob->ob_kind != PO_REPLY || probe_null_accepted(ob);
}

/* The whole NULL call as a position-zero Read chunk (RDMA_NOMSG). */
bool probe_case_nomsg_null(struct probe_run *run, const struct probe_case *pk,
			   struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = probe_conn_new_xid(pc);
	static struct rpcrdma_hdr h;
	uint8_t buf[256];

	(void)pk;
	probe_rpc_null_call(pc->pc_chunk, PROBE_NULL_CALL_BYTES, xid);
	probe_hdr_init(&h, xid, PROBE_CREDITS_ASK, RDMA_NOMSG);
	probe_hdr_add_read(&h, 0, pc->pc_mr->rkey, PROBE_NULL_CALL_BYTES, probe_chunk_addr(pc, 0));
	probe_send_observe(run, buf, probe_msg_build(buf, sizeof(buf), &h, NULL, 0), xid,
			   run->pr_opts->po_timeout_ms, ob);
	return probe_null_accepted(ob);
}

/* A Read chunk behind a NULL call whose handle the server cannot read. */
bool probe_case_bad_handle(struct probe_run *run, const struct probe_case *pk,
			   struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = probe_conn_new_xid(pc);
	uint8_t call[PROBE_NULL_CALL_BYTES];
	uint32_t bad = probe_bad_handle(pc);
	static struct rpcrdma_hdr h;
	uint8_t buf[256];

	(void)pk;
	probe_rpc_null_call(call, sizeof(call), xid);
	probe_hdr_init(&h, xid, PROBE_CREDITS_ASK, RDMA_MSG);
	probe_hdr_add_read(&h, PROBE_NULL_CALL_BYTES, bad, 4096, probe_chunk_addr(pc, 0));
	probe_send_observe(run, buf, probe_msg_build(buf, sizeof(buf), &h, call, sizeof(call)),
			   xid, run->pr_opts->po_timeout_ms * 3, ob);
	return true;
}

/*
 * A NULL call with one Write chunk it cannot use: a normal reply whose
 * Write list returns the chunk with nothing written (RFC 8166 4.3.2:
 * segment lengths 0, or no segments).
 */
bool probe_case_write_unused(struct probe_run *run, const struct probe_case *pk,
			     struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = probe_conn_new_xid(pc);
	uint8_t call[PROBE_NULL_CALL_BYTES];
	static struct rpcrdma_hdr h;
	uint8_t buf[256];
	char s[96];

	(void)pk;
	probe_rpc_null_call(call, sizeof(call), xid);
	probe_hdr_init(&h, xid, PROBE_CREDITS_ASK, RDMA_MSG);
	probe_hdr_add_write(&h, pc->pc_mr->rkey, 4096, probe_chunk_addr(pc, 0));
	probe_send_observe(run, buf, probe_msg_build(buf, sizeof(buf), &h, call, sizeof(call)),
			   xid, run->pr_opts->po_timeout_ms, ob);
	if (ob->ob_kind != PO_REPLY)
		return true;
	snprintf(s, sizeof(s), "Write list: %u chunk(s), first %u segment(s), %llu bytes",
		 ob->ob_nwrite, ob->ob_write_nsegs, (unsigned long long)ob->ob_write_len);
	probe_obs_append(ob, s);
	return ob->ob_accept == RPC_ACCEPT_SUCCESS && ob->ob_nwrite == 1 &&
	       ob->ob_write_len == 0;
}

/* The NULL call as a position-zero Read chunk of two 20-byte segments. */
bool probe_case_nomsg_split(struct probe_run *run, const struct probe_case *pk,
			    struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = probe_conn_new_xid(pc);
	static struct rpcrdma_hdr h;
	uint8_t call[PROBE_NULL_CALL_BYTES], buf[256];

	(void)pk;
	/* The halves lie apart in our memory: the server must join them. */
	probe_rpc_null_call(call, sizeof(call), xid);
	memcpy(pc->pc_chunk + 8192, call, 20);
	memcpy(pc->pc_chunk + 4096, call + 20, 20);
	probe_hdr_init(&h, xid, PROBE_CREDITS_ASK, RDMA_NOMSG);
	probe_hdr_add_read(&h, 0, pc->pc_mr->rkey, 20, probe_chunk_addr(pc, 8192));
	probe_hdr_add_read(&h, 0, pc->pc_mr->rkey, 20, probe_chunk_addr(pc, 4096));
	probe_send_observe(run, buf, probe_msg_build(buf, sizeof(buf), &h, NULL, 0), xid,
			   run->pr_opts->po_timeout_ms, ob);
	return probe_null_accepted(ob);
}

/*
 * READDIRPLUS of the export's root (the test fills it) offering a Reply
 * chunk of @pk_arg bytes; we advertised an inline receive size of 1024.
 * A reply larger than the Reply chunk must be ERR_CHUNK (RFC 8166 4.5.3);
 * a large enough Reply chunk must carry the reply (NFS3_OK).
 */
bool probe_case_readdirplus(struct probe_run *run, const struct probe_case *pk,
			    struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = probe_conn_new_xid(pc), call_len;
	static struct rpcrdma_hdr h;
	uint8_t call[512], buf[PROBE_SEND_BYTES];

	call_len = probe_rpc_readdirplus_call(call, sizeof(call), xid, run->pr_fh,
					      run->pr_fhlen, 8192, 32768);
	memset(pc->pc_chunk, 0, pk->pk_arg);
	probe_hdr_init(&h, xid, PROBE_CREDITS_ASK, RDMA_MSG);
	if (pk->pk_flags & PK_SPLIT_REPLY)
		probe_hdr_set_reply_split(&h, pc->pc_mr->rkey, pk->pk_arg,
					  probe_chunk_addr(pc, 0), 16);
	else
		probe_hdr_set_reply(&h, pk->pk_flags & PK_BAD_HANDLE ?
				    probe_bad_handle(pc) : pc->pc_mr->rkey,
				    pk->pk_arg, probe_chunk_addr(pc, 0));
	probe_send_observe(run, buf,
			   call_len ? probe_msg_build(buf, sizeof(buf), &h, call, call_len) : -ENOSPC,
			   xid, run->pr_opts->po_timeout_ms * 3, ob);
	if (ob->ob_kind != PO_REPLY || pk->pk_expect != PO_REPLY)
		return true;
	if (ob->ob_accept != RPC_ACCEPT_SUCCESS || ob->ob_nfs_status != 0) {
		char s[48];

		snprintf(s, sizeof(s), "NFS status %d, not NFS3_OK", (int)ob->ob_nfs_status);
		probe_obs_append(ob, s);
		return false;
	}
	return true;
}
