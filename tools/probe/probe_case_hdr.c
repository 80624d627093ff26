// SPDX-License-Identifier: MIT
/*
 * probe_case_hdr.c - rpcrdma-probe cases about the transport header's
 * fixed fields (RFC 8166 section 4.2: version, procedure, credits, a
 * message cut short) and crafted headers built word by word.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/be.h"
#include "probe.h"

/* Valid NULL with credits @pk_arg: a reply, and a grant of at least 1. */
bool probe_case_null(struct probe_run *run, const struct probe_case *pk,
		     struct probe_obs *ob)
{
	uint32_t xid = probe_conn_new_xid(&run->pr_conn);
	uint8_t buf[256];

	probe_send_observe(run, buf, probe_null_msg(buf, sizeof(buf), xid, pk->pk_arg), xid,
			   run->pr_opts->po_timeout_ms, ob);
	if (!probe_null_accepted(ob))
		return false;
	if (ob->ob_kind == PO_REPLY && ob->ob_credits < 1) {
		probe_obs_append(ob, "grant 0 is not valid (RFC 8166 3.3.1)");
		return false;
	}
	return true;
}

/* A valid NULL message with word @v at byte @off of its transport header. */
static void null_with_word(struct probe_run *run, uint32_t off, uint32_t v,
			   struct probe_obs *ob)
{
	uint32_t xid = probe_conn_new_xid(&run->pr_conn);
	uint8_t buf[256];
	int len = probe_null_msg(buf, sizeof(buf), xid, PROBE_CREDITS_ASK);

	if (len > 0)
		store_be32(buf + off, v);
	probe_send_observe(run, buf, len, xid, run->pr_opts->po_timeout_ms, ob);
}

/* A valid NULL message whose version word is @pk_arg. */
bool probe_case_version(struct probe_run *run, const struct probe_case *pk,
			struct probe_obs *ob)
{
	null_with_word(run, 4, pk->pk_arg, ob);
	if (ob->ob_kind == PO_ERR_VERS && (ob->ob_vers_low != 1 || ob->ob_vers_high != 1)) {
		probe_obs_append(ob, "range must be 1..1");
		return false;
	}
	return true;
}

/* A valid NULL message whose procedure word is @pk_arg. */
bool probe_case_proc(struct probe_run *run, const struct probe_case *pk,
		     struct probe_obs *ob)
{
	null_with_word(run, 12, pk->pk_arg, ob);
	return true;
}

/*
 * The first @pk_arg bytes of a valid NULL message.  Under 4 bytes no whole
 * xid went out: whatever echoes the bytes we sent answers it.
 */
bool probe_case_cut(struct probe_run *run, const struct probe_case *pk,
		    struct probe_obs *ob)
{
	uint32_t xid = probe_conn_new_xid(&run->pr_conn);
	uint8_t buf[256];
	int len = probe_null_msg(buf, sizeof(buf), xid, PROBE_CREDITS_ASK);
	uint32_t mask = pk->pk_arg >= 4 ? UINT32_MAX : 0xffffff00u << (8 * (3 - pk->pk_arg));

	if (len > (int)pk->pk_arg)
		len = (int)pk->pk_arg;
	probe_send_observe_mask(run, buf, len, xid, mask, run->pr_opts->po_timeout_ms, ob);
	return true;
}

static void raw_fixed(struct probe_xdr *x, uint32_t xid, uint32_t proc)
{
	probe_xdr_u32(x, xid);
	probe_xdr_u32(x, RPCRDMA_VERSION);
	probe_xdr_u32(x, PROBE_CREDITS_ASK);
	probe_xdr_u32(x, proc);
}

static void raw_seg(struct probe_xdr *x, const struct probe_conn *pc,
		    uint32_t length, uint32_t off)
{
	probe_xdr_u32(x, pc->pc_mr->rkey);
	probe_xdr_u32(x, length);
	probe_xdr_u64(x, probe_chunk_addr(pc, off));
}

/* Build crafted header @kind (with a NULL call behind it where it has one). */
static int raw_build(const struct probe_conn *pc, enum raw_kind kind, uint32_t xid,
		     uint8_t *buf, uint32_t cap)
{
	uint8_t call[PROBE_NULL_CALL_BYTES];
	bool body = true;
	struct probe_xdr x;
	uint32_t i;

	probe_xdr_init(&x, buf, cap);
	raw_fixed(&x, xid, kind == RAW_RDMA_ERROR ? RDMA_ERROR : RDMA_MSG);
	switch (kind) {
	case RAW_READ_OVERRUN:  /* a Read entry cut after its handle */
		probe_xdr_u32(&x, 1);
		probe_xdr_u32(&x, PROBE_NULL_CALL_BYTES);
		probe_xdr_u32(&x, pc->pc_mr->rkey);
		body = false;
		break;
	case RAW_WRITE_OVERRUN: /* 2 segments announced, 1 present */
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 1);
		probe_xdr_u32(&x, 2);
		raw_seg(&x, pc, 4096, 0);
		body = false;
		break;
	case RAW_REPLY_OVERRUN: /* 3 segments announced, 1 present */
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 1);
		probe_xdr_u32(&x, 3);
		raw_seg(&x, pc, 4096, 0);
		body = false;
		break;
	case RAW_DISCRIMINATOR: /* Read list discriminator 2 */
		probe_xdr_u32(&x, 2);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		break;
	case RAW_WRITE_WRAP:    /* 0x10000000 segments x 16 bytes = 2^32 */
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 1);
		probe_xdr_u32(&x, 0x10000000u);
		raw_seg(&x, pc, 4096, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		break;
	case RAW_REPLY_WRAP:
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 1);
		probe_xdr_u32(&x, 0x10000000u);
		raw_seg(&x, pc, 4096, 0);
		break;
	case RAW_WRITE_EMPTY:
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 1);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		break;
	case RAW_REPLY_EMPTY:
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 1);
		probe_xdr_u32(&x, 0);
		break;
	case RAW_WRITE_17SEGS:  /* one more than the 16 per chunk allowed */
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 1);
		probe_xdr_u32(&x, 17);
		for (i = 0; i < 17; i++)
			raw_seg(&x, pc, 256, i * 256);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		break;
	case RAW_17_WRITES:     /* one more than the 16 Write chunks allowed */
		probe_xdr_u32(&x, 0);
		for (i = 0; i < 17; i++) {
			probe_xdr_u32(&x, 1);
			probe_xdr_u32(&x, 1);
			raw_seg(&x, pc, 256, i * 256);
		}
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		break;
	case RAW_17_READS:      /* one more than the 16 Read chunks allowed */
		for (i = 0; i < 17; i++) {
			probe_xdr_u32(&x, 1);
			probe_xdr_u32(&x, PROBE_NULL_CALL_BYTES + 4 * i);
			raw_seg(&x, pc, 4, 64 * i);
		}
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		break;
	case RAW_RDMA_ERROR:    /* RDMA_ERROR ERR_CHUNK sent to the Responder */
		probe_xdr_u32(&x, ERR_CHUNK);
		body = false;
		break;
	case RAW_BC_REPLY:      /* an RPC REPLY, as if we answered a callback */
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, xid);
		probe_xdr_u32(&x, RPC_DIR_REPLY);
		probe_xdr_u32(&x, RPC_MSG_ACCEPTED);
		probe_xdr_u32(&x, RPC_AUTH_NONE);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, RPC_ACCEPT_SUCCESS);
		body = false;
		break;
	case RAW_BC_REPLY_CHUNKS: /* RFC 8167 5.2: backchannel messages carry no chunks */
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 1);
		probe_xdr_u32(&x, 1);
		raw_seg(&x, pc, 4096, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, xid);
		probe_xdr_u32(&x, RPC_DIR_REPLY);
		probe_xdr_u32(&x, RPC_MSG_ACCEPTED);
		probe_xdr_u32(&x, RPC_AUTH_NONE);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, RPC_ACCEPT_SUCCESS);
		body = false;
		break;
	case RAW_BC_REPLY_SHORT:
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, xid);
		probe_xdr_u32(&x, RPC_DIR_REPLY);
		body = false;
		break;
	case RAW_BC_REPLY_BADSTAT:
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, 0);
		probe_xdr_u32(&x, xid);
		probe_xdr_u32(&x, RPC_DIR_REPLY);
		probe_xdr_u32(&x, 7);
		probe_xdr_u32(&x, 0);
		body = false;
		break;
	}
	if (body) {
		probe_rpc_null_call(call, sizeof(call), xid);
		probe_xdr_bytes(&x, call, sizeof(call));
	}
	return x.px_over ? -ENOSPC : (int)x.px_len;
}

bool probe_case_raw(struct probe_run *run, const struct probe_case *pk,
		    struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = probe_conn_new_xid(pc);
	uint8_t buf[PROBE_SEND_BYTES];

	probe_send_observe(run, buf, raw_build(pc, pk->pk_arg, xid, buf, sizeof(buf)), xid,
			   run->pr_opts->po_timeout_ms, ob);
	/* a server that serves a call past its limits: the NULL call's
	 * normal reply */
	return !(pk->pk_flags & PK_SERVER_LIMIT) || ob->ob_kind != PO_REPLY ||
	       probe_null_accepted(ob);
}
