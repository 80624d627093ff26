// SPDX-License-Identifier: MIT
/*
 * probe_cases.c - the catalogue of rpcrdma-probe and the run over it.
 *
 * Each case sends one crafted message (or a short burst) and names the
 * answer RFC 8166 requires, following our codec's rules (rpcrdma-decode(8)
 * names each one): a normal RPC reply, RDMA_ERROR with ERR_VERS (range
 * 1..1) or ERR_CHUNK, a silent drop, or the end of the connection where a
 * case legitimately ends it.  After each case a valid NFSv3 NULL call
 * must still be answered; a case that ended the connection is followed by
 * a reconnect and that NULL call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe.h"

/* Credits a well-behaved call asks for. */
#define PROBE_CREDITS_ASK 32u
/* Case flags. */
#define PK_NEED_FH 0x1u /* needs the export's root file handle (--export) */
#define PK_SPLIT_REPLY 0x2u /* Reply chunk of 16 contiguous segments */
#define PK_BAD_HANDLE 0x4u  /* the chunk's handle was never registered */

struct probe_case;
typedef bool (*probe_case_fn)(struct probe_run *run, const struct probe_case *pk,
			      struct probe_obs *ob);

/** One entry of the catalogue. */
struct probe_case {
	const char *pk_name;        /* the codec's rule name where there is one */
	enum probe_outcome pk_expect;
	probe_case_fn pk_fn;
	uint32_t pk_arg;
	unsigned int pk_flags;
	const char *pk_what;        /* one line for --list and the docs */
};

/* Crafted headers built word by word (case_raw). */
enum raw_kind {
	RAW_READ_OVERRUN,
	RAW_WRITE_OVERRUN,
	RAW_REPLY_OVERRUN,
	RAW_DISCRIMINATOR,
	RAW_WRITE_WRAP,
	RAW_REPLY_WRAP,
	RAW_WRITE_EMPTY,
	RAW_REPLY_EMPTY,
	RAW_WRITE_17SEGS,
	RAW_17_WRITES,
	RAW_17_READS,
	RAW_RDMA_ERROR,
	RAW_BC_REPLY,
};

/* Read chunk layouts around an inline NULL call (case_read). */
enum read_kind {
	RD_ALIGN,
	RD_RANGE,
	RD_ORDER,
	RD_OVERLAP,
	RD_POS0_MSG,
	RD_TOO_LONG,
	RD_LEN_WRAP,
	RD_NOMSG_NO_POS0,
	RD_16_CHUNKS,
	RD_17_SEGS,
	RD_16_ODD_SEGS,
};

static int64_t case_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t chunk_addr(const struct probe_conn *pc, uint32_t off)
{
	return (uintptr_t)pc->pc_chunk + off;
}

static void store32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A handle we never registered. */
static uint32_t bad_handle(const struct probe_conn *pc)
{
	uint32_t bad = 0x0badbad0u;

	return bad == pc->pc_mr->rkey ? bad ^ 0xff00u : bad;
}

/* Send @len bytes and observe the answer to @xid within @timeout_ms. */
static void send_observe(struct probe_run *run, const void *buf, int len,
			 uint32_t xid, unsigned int timeout_ms, struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	int rc;

	if (len < 0) {
		memset(ob, 0, sizeof(*ob));
		ob->ob_kind = PO_NONE;
		snprintf(ob->ob_text, sizeof(ob->ob_text), "could not build the message: %s",
			 strerror(-len));
		return;
	}
	rc = probe_conn_send(pc, buf, (uint32_t)len);
	if (rc) {
		memset(ob, 0, sizeof(*ob));
		ob->ob_kind = rc == -ENOTCONN ? PO_DISCONNECT : PO_NONE;
		snprintf(ob->ob_text, sizeof(ob->ob_text), "Send failed: %s", strerror(-rc));
		return;
	}
	probe_observe(pc, xid, timeout_ms, ob);
}

/* A valid inline NULL call: header with no chunks, then the call. */
static int null_msg(uint8_t *buf, uint32_t cap, uint32_t xid, uint32_t credits)
{
	struct rpcrdma_hdr h;
	uint8_t call[PROBE_NULL_CALL_BYTES];

	probe_rpc_null_call(call, sizeof(call), xid);
	probe_hdr_init(&h, xid, credits, RDMA_MSG);
	return probe_msg_build(buf, cap, &h, call, sizeof(call));
}

static void append_text(struct probe_obs *ob, const char *s)
{
	size_t n = strlen(ob->ob_text);

	snprintf(ob->ob_text + n, sizeof(ob->ob_text) - n, "; %s", s);
}

/* ---- The cases ---- */

/* Valid NULL with credits @pk_arg: a reply, and a grant of at least 1. */
static bool case_null(struct probe_run *run, const struct probe_case *pk,
		      struct probe_obs *ob)
{
	uint32_t xid = probe_conn_new_xid(&run->pr_conn);
	uint8_t buf[256];

	send_observe(run, buf, null_msg(buf, sizeof(buf), xid, pk->pk_arg), xid,
		     run->pr_opts->po_timeout_ms, ob);
	if (ob->ob_kind != PO_REPLY)
		return true;
	if (ob->ob_accept != RPC_ACCEPT_SUCCESS) {
		append_text(ob, "NULL not accepted");
		return false;
	}
	if (ob->ob_credits < 1) {
		append_text(ob, "grant 0 is not valid (RFC 8166 3.3.1)");
		return false;
	}
	return true;
}

/* A valid NULL message whose version word is @pk_arg. */
static bool case_version(struct probe_run *run, const struct probe_case *pk,
			 struct probe_obs *ob)
{
	uint32_t xid = probe_conn_new_xid(&run->pr_conn);
	uint8_t buf[256];
	int len = null_msg(buf, sizeof(buf), xid, PROBE_CREDITS_ASK);

	if (len > 0)
		store32(buf + 4, pk->pk_arg);
	send_observe(run, buf, len, xid, run->pr_opts->po_timeout_ms, ob);
	if (ob->ob_kind == PO_ERR_VERS && (ob->ob_vers_low != 1 || ob->ob_vers_high != 1)) {
		append_text(ob, "range must be 1..1");
		return false;
	}
	return true;
}

/* A valid NULL message whose procedure word is @pk_arg. */
static bool case_proc(struct probe_run *run, const struct probe_case *pk,
		      struct probe_obs *ob)
{
	uint32_t xid = probe_conn_new_xid(&run->pr_conn);
	uint8_t buf[256];
	int len = null_msg(buf, sizeof(buf), xid, PROBE_CREDITS_ASK);

	if (len > 0)
		store32(buf + 12, pk->pk_arg);
	send_observe(run, buf, len, xid, run->pr_opts->po_timeout_ms, ob);
	return true;
}

/* The first @pk_arg bytes of a valid NULL message. */
static bool case_cut(struct probe_run *run, const struct probe_case *pk,
		     struct probe_obs *ob)
{
	uint32_t xid = probe_conn_new_xid(&run->pr_conn);
	uint8_t buf[256];
	int len = null_msg(buf, sizeof(buf), xid, PROBE_CREDITS_ASK);

	uint32_t mask = pk->pk_arg >= 4 ? UINT32_MAX : 0xffffff00u << (8 * (3 - pk->pk_arg));
	int rc;

	if (len > (int)pk->pk_arg)
		len = (int)pk->pk_arg;
	if (pk->pk_arg >= 4 || len < 0) {
		send_observe(run, buf, len, xid, run->pr_opts->po_timeout_ms, ob);
		return true;
	}
	/* No whole xid went out: whatever echoes the bytes we sent answers it. */
	rc = probe_conn_send(&run->pr_conn, buf, (uint32_t)len);
	if (rc) {
		memset(ob, 0, sizeof(*ob));
		ob->ob_kind = rc == -ENOTCONN ? PO_DISCONNECT : PO_NONE;
		snprintf(ob->ob_text, sizeof(ob->ob_text), "Send failed: %s", strerror(-rc));
		return true;
	}
	probe_observe_mask(&run->pr_conn, xid, mask, run->pr_opts->po_timeout_ms, ob);
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
	probe_xdr_u64(x, chunk_addr(pc, off));
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
	}
	if (body) {
		probe_rpc_null_call(call, sizeof(call), xid);
		probe_xdr_bytes(&x, call, sizeof(call));
	}
	return x.px_over ? -ENOSPC : (int)x.px_len;
}

static bool case_raw(struct probe_run *run, const struct probe_case *pk,
		     struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = probe_conn_new_xid(pc);
	uint8_t buf[PROBE_SEND_BYTES];

	send_observe(run, buf, raw_build(pc, pk->pk_arg, xid, buf, sizeof(buf)), xid,
		     run->pr_opts->po_timeout_ms, ob);
	return true;
}

/* Read chunks around an inline NULL call (40 bytes of inline body). */
static bool case_read(struct probe_run *run, const struct probe_case *pk,
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
		probe_hdr_add_read(&h, 2, rkey, 4, chunk_addr(pc, 0));
		break;
	case RD_RANGE:
		probe_hdr_add_read(&h, PROBE_NULL_CALL_BYTES + 4, rkey, 4, chunk_addr(pc, 0));
		break;
	case RD_ORDER:
		probe_hdr_add_read(&h, 40, rkey, 4, chunk_addr(pc, 0));
		probe_hdr_add_read(&h, 36, rkey, 4, chunk_addr(pc, 64));
		break;
	case RD_OVERLAP:
		probe_hdr_add_read(&h, 36, rkey, 8, chunk_addr(pc, 0));
		probe_hdr_add_read(&h, 40, rkey, 4, chunk_addr(pc, 64));
		break;
	case RD_POS0_MSG:
		probe_hdr_add_read(&h, 0, rkey, PROBE_NULL_CALL_BYTES, chunk_addr(pc, 0));
		break;
	case RD_TOO_LONG:
		probe_hdr_add_read(&h, 40, rkey, 0x7fffffffu, chunk_addr(pc, 0));
		break;
	case RD_LEN_WRAP:
		probe_hdr_add_read(&h, 40, rkey, 0x60000000u, chunk_addr(pc, 0));
		probe_hdr_add_read(&h, 40, rkey, 0x60000000u, chunk_addr(pc, 0));
		probe_hdr_add_read(&h, 40, rkey, 0x60000000u, chunk_addr(pc, 0));
		break;
	case RD_NOMSG_NO_POS0:
		h.rh_proc = RDMA_NOMSG;
		probe_hdr_set_reply(&h, rkey, 4096, chunk_addr(pc, 4096));
		call_len = 0;
		break;
	case RD_16_CHUNKS:
		/* 4-byte chunks, one after another behind the call. */
		for (i = 0; i < 16; i++)
			probe_hdr_add_read(&h, 40 + 4 * i, rkey, 4, chunk_addr(pc, 64 * i));
		break;
	case RD_17_SEGS:
		for (i = 0; i < 17; i++)
			probe_hdr_add_read(&h, 40, rkey, 4, chunk_addr(pc, 64 * i));
		break;
	case RD_16_ODD_SEGS:
		/* One 16-byte chunk in 1-byte segments, scattered. */
		for (i = 0; i < 16; i++)
			probe_hdr_add_read(&h, 40, rkey, 1, chunk_addr(pc, 4096 + 97 * i));
		break;
	}
	send_observe(run, buf, probe_msg_build(buf, sizeof(buf), &h, call, call_len), xid,
		     run->pr_opts->po_timeout_ms, ob);
	if (ob->ob_kind == PO_REPLY && pk->pk_expect == PO_REPLY &&
	    ob->ob_accept != RPC_ACCEPT_SUCCESS) {
		append_text(ob, "NULL not accepted");
		return false;
	}
	return true;
}

/*
 * More calls in flight than granted: grant + 4 NULL calls back to back.
 * Every one must be answered (the server posts spare Receives, or at
 * worst the Requester's excess is its own problem, but nothing may hang).
 */
static bool case_over_grant(struct probe_run *run, const struct probe_case *pk,
			    struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t grant = pc->pc_grant ? pc->pc_grant : 1, n, first, i, got = 0;
	uint32_t min_grant = UINT32_MAX;
	static uint8_t seen[PROBE_NRECV];
	static struct probe_msg m;
	static struct rpcrdma_hdr h;
	struct rpcrdma_wire_err err;
	struct rpcrdma_rpc_msg rpc;
	uint8_t buf[256];
	int64_t deadline;
	int len, rc = 0;

	(void)pk;
	memset(ob, 0, sizeof(*ob));
	n = grant + 4;
	if (n > PROBE_NRECV - 16)
		n = PROBE_NRECV - 16;
	memset(seen, 0, sizeof(seen));
	first = pc->pc_xid + 1;
	for (i = 0; i < n; i++) {
		uint32_t xid = probe_conn_new_xid(pc);

		len = null_msg(buf, sizeof(buf), xid, PROBE_CREDITS_ASK);
		rc = len < 0 ? len : probe_conn_send(pc, buf, (uint32_t)len);
		if (rc)
			break;
	}
	if (rc) {
		ob->ob_kind = rc == -ENOTCONN ? PO_DISCONNECT : PO_NONE;
		snprintf(ob->ob_text, sizeof(ob->ob_text), "Send %u of %u failed: %s",
			 i + 1, n, strerror(-rc));
		return true;
	}
	deadline = case_now_ms() + run->pr_opts->po_timeout_ms * 3;
	while (got < n) {
		int64_t left = deadline - case_now_ms();

		rc = probe_conn_wait(pc, &m, left > 0 ? (unsigned int)left : 0);
		if (rc)
			break;
		if (rpcrdma_wire_decode_reply(m.pm_buf, m.pm_len, NULL, &h, &err) ||
		    h.rh_proc != RDMA_MSG || h.rh_xid - first >= n || seen[h.rh_xid - first])
			continue;
		if (rpcrdma_wire_decode_rpc(m.pm_buf + h.rh_hdr_len, h.rh_inline_len, &rpc) ||
		    rpc.rm_dir != RPC_DIR_REPLY || rpc.rm_reply_stat != RPC_MSG_ACCEPTED ||
		    rpc.rm_accept_stat != RPC_ACCEPT_SUCCESS)
			continue;
		seen[h.rh_xid - first] = 1;
		got++;
		pc->pc_grant = h.rh_credits;
		if (h.rh_credits < min_grant)
			min_grant = h.rh_credits;
	}
	ob->ob_credits = min_grant;
	if (got == n) {
		ob->ob_kind = PO_REPLY;
		snprintf(ob->ob_text, sizeof(ob->ob_text),
			 "REPLY to all %u calls (grant %u + 4%s), grants >= %u",
			 n, grant, n < grant + 4 ? ", capped" : "", min_grant);
		return min_grant >= 1;
	}
	ob->ob_kind = rc == -ENOTCONN ? PO_DISCONNECT : PO_DROP;
	snprintf(ob->ob_text, sizeof(ob->ob_text), "%u of %u calls (grant %u + 4) answered%s%s",
		 got, n, grant, rc == -ENOTCONN ? "; connection ended: " : "",
		 rc == -ENOTCONN ? pc->pc_down_why : "");
	return true;
}

/* The whole NULL call as a position-zero Read chunk (RDMA_NOMSG). */
static bool case_nomsg_null(struct probe_run *run, const struct probe_case *pk,
			    struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = probe_conn_new_xid(pc);
	static struct rpcrdma_hdr h;
	uint8_t buf[256];

	(void)pk;
	probe_rpc_null_call(pc->pc_chunk, PROBE_NULL_CALL_BYTES, xid);
	probe_hdr_init(&h, xid, PROBE_CREDITS_ASK, RDMA_NOMSG);
	probe_hdr_add_read(&h, 0, pc->pc_mr->rkey, PROBE_NULL_CALL_BYTES, chunk_addr(pc, 0));
	send_observe(run, buf, probe_msg_build(buf, sizeof(buf), &h, NULL, 0), xid,
		     run->pr_opts->po_timeout_ms, ob);
	if (ob->ob_kind == PO_REPLY && ob->ob_accept != RPC_ACCEPT_SUCCESS) {
		append_text(ob, "NULL not accepted");
		return false;
	}
	return true;
}

/* A Read chunk behind a NULL call whose handle the server cannot read. */
static bool case_bad_handle(struct probe_run *run, const struct probe_case *pk,
			    struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = probe_conn_new_xid(pc);
	uint8_t call[PROBE_NULL_CALL_BYTES];
	uint32_t bad = bad_handle(pc);
	static struct rpcrdma_hdr h;
	uint8_t buf[256];

	(void)pk;
	probe_rpc_null_call(call, sizeof(call), xid);
	probe_hdr_init(&h, xid, PROBE_CREDITS_ASK, RDMA_MSG);
	probe_hdr_add_read(&h, PROBE_NULL_CALL_BYTES, bad, 4096, chunk_addr(pc, 0));
	send_observe(run, buf, probe_msg_build(buf, sizeof(buf), &h, call, sizeof(call)),
		     xid, run->pr_opts->po_timeout_ms * 3, ob);
	return true;
}

/* Calls of the read-disconnect case, each with a 1 MiB Read chunk. */
#define PROBE_ABORT_CALLS 8u

/*
 * Disconnect while the server's RDMA Reads of 1 MiB Read chunks (16
 * segments of 64 KiB each) are outstanding: send PROBE_ABORT_CALLS such
 * calls back to back and disconnect as soon as the first Send has
 * completed (the server has that call), before the replies come.
 */
static bool case_read_abort(struct probe_run *run, const struct probe_case *pk,
			    struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = 0, i, k, replies = 0;
	uint8_t call[PROBE_NULL_CALL_BYTES];
	static struct rpcrdma_hdr h;
	static struct probe_msg m;
	uint8_t buf[PROBE_SEND_BYTES];
	int64_t deadline;
	int len, rc = 0;

	(void)pk;
	memset(ob, 0, sizeof(*ob));
	/* Start with no Send of an earlier case in flight. */
	rc = probe_conn_sends_done(pc, run->pr_opts->po_timeout_ms);
	for (k = 0; k < PROBE_ABORT_CALLS && !rc; k++) {
		xid = probe_conn_new_xid(pc);
		probe_rpc_null_call(call, sizeof(call), xid);
		probe_hdr_init(&h, xid, PROBE_CREDITS_ASK, RDMA_MSG);
		for (i = 0; i < 16; i++)
			probe_hdr_add_read(&h, PROBE_NULL_CALL_BYTES, pc->pc_mr->rkey,
					   64u << 10, chunk_addr(pc, i * (64u << 10)));
		len = probe_msg_build(buf, sizeof(buf), &h, call, sizeof(call));
		rc = len < 0 ? len : probe_conn_send(pc, buf, (uint32_t)len);
	}
	/* The first Send completes once the server has taken the call. */
	deadline = case_now_ms() + run->pr_opts->po_timeout_ms;
	while (!rc && pc->pc_sends_out >= PROBE_ABORT_CALLS) {
		if (case_now_ms() > deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		rc = probe_conn_wait(pc, &m, 0);
		if (!rc)
			replies++;
		else if (rc == -ETIMEDOUT)
			rc = 0;
	}
	if (rc) {
		ob->ob_kind = rc == -ENOTCONN ? PO_DISCONNECT : PO_NONE;
		snprintf(ob->ob_text, sizeof(ob->ob_text), "before our disconnect: %s",
			 rc == -ENOTCONN ? pc->pc_down_why : strerror(-rc));
		return true;
	}
	while (probe_conn_wait(pc, &m, 0) == 0)
		replies++;
	probe_conn_abort(pc);
	ob->ob_kind = PO_DISCONNECT;
	snprintf(ob->ob_text, sizeof(ob->ob_text),
		 "we disconnected after the first Send completed, %u of %u calls answered "
		 "(%u with 1 MiB Reads outstanding or queued)", replies, PROBE_ABORT_CALLS,
		 PROBE_ABORT_CALLS - replies);
	return true;
}

/*
 * A NULL call with one Write chunk it cannot use: a normal reply whose
 * Write list returns the chunk with nothing written (RFC 8166 4.3.2:
 * segment lengths 0, or no segments).
 */
static bool case_write_unused(struct probe_run *run, const struct probe_case *pk,
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
	probe_hdr_add_write(&h, pc->pc_mr->rkey, 4096, chunk_addr(pc, 0));
	send_observe(run, buf, probe_msg_build(buf, sizeof(buf), &h, call, sizeof(call)),
		     xid, run->pr_opts->po_timeout_ms, ob);
	if (ob->ob_kind != PO_REPLY)
		return true;
	snprintf(s, sizeof(s), "Write list: %u chunk(s), first %u segment(s), %llu bytes",
		 ob->ob_nwrite, ob->ob_write_nsegs, (unsigned long long)ob->ob_write_len);
	append_text(ob, s);
	return ob->ob_accept == RPC_ACCEPT_SUCCESS && ob->ob_nwrite == 1 &&
	       ob->ob_write_len == 0;
}

/* The NULL call as a position-zero Read chunk of two 20-byte segments. */
static bool case_nomsg_split(struct probe_run *run, const struct probe_case *pk,
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
	probe_hdr_add_read(&h, 0, pc->pc_mr->rkey, 20, chunk_addr(pc, 8192));
	probe_hdr_add_read(&h, 0, pc->pc_mr->rkey, 20, chunk_addr(pc, 4096));
	send_observe(run, buf, probe_msg_build(buf, sizeof(buf), &h, NULL, 0), xid,
		     run->pr_opts->po_timeout_ms, ob);
	if (ob->ob_kind == PO_REPLY && ob->ob_accept != RPC_ACCEPT_SUCCESS) {
		append_text(ob, "NULL not accepted");
		return false;
	}
	return true;
}

/*
 * READDIRPLUS of the export's root (the test fills it) offering a Reply
 * chunk of @pk_arg bytes; we advertised an inline receive size of 1024.
 * A reply larger than the Reply chunk must be ERR_CHUNK (RFC 8166 4.5.3);
 * a large enough Reply chunk must carry the reply (NFS3_OK).
 */
static bool case_readdirplus(struct probe_run *run, const struct probe_case *pk,
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
					  chunk_addr(pc, 0), 16);
	else
		probe_hdr_set_reply(&h, pk->pk_flags & PK_BAD_HANDLE ?
				    bad_handle(pc) : pc->pc_mr->rkey,
				    pk->pk_arg, chunk_addr(pc, 0));
	send_observe(run, buf, call_len ? probe_msg_build(buf, sizeof(buf), &h, call, call_len) :
		     -ENOSPC, xid, run->pr_opts->po_timeout_ms * 3, ob);
	if (ob->ob_kind != PO_REPLY || pk->pk_expect != PO_REPLY)
		return true;
	if (ob->ob_accept != RPC_ACCEPT_SUCCESS || ob->ob_nfs_status != 0) {
		char s[48];

		snprintf(s, sizeof(s), "NFS status %d, not NFS3_OK", (int)ob->ob_nfs_status);
		append_text(ob, s);
		return false;
	}
	return true;
}

/*
 * Disconnect while the server writes Reply chunks: eight READDIRPLUS
 * calls of the root with 64 KiB Reply chunks back to back; disconnect as
 * soon as the first Send has completed.
 */
static bool case_reply_abort(struct probe_run *run, const struct probe_case *pk,
			     struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid, k, replies = 0, call_len;
	static struct rpcrdma_hdr h;
	static struct probe_msg m;
	uint8_t call[512], buf[PROBE_SEND_BYTES];
	int64_t deadline;
	int len, rc;

	(void)pk;
	memset(ob, 0, sizeof(*ob));
	rc = probe_conn_sends_done(pc, run->pr_opts->po_timeout_ms);
	for (k = 0; k < PROBE_ABORT_CALLS && !rc; k++) {
		xid = probe_conn_new_xid(pc);
		call_len = probe_rpc_readdirplus_call(call, sizeof(call), xid, run->pr_fh,
						      run->pr_fhlen, 8192, 32768);
		probe_hdr_init(&h, xid, PROBE_CREDITS_ASK, RDMA_MSG);
		/* Each call its own 64 KiB of the chunk area. */
		probe_hdr_set_reply(&h, pc->pc_mr->rkey, 65536, chunk_addr(pc, k * 65536));
		len = call_len ? probe_msg_build(buf, sizeof(buf), &h, call, call_len) : -ENOSPC;
		rc = len < 0 ? len : probe_conn_send(pc, buf, (uint32_t)len);
	}
	deadline = case_now_ms() + run->pr_opts->po_timeout_ms;
	while (!rc && pc->pc_sends_out >= PROBE_ABORT_CALLS) {
		if (case_now_ms() > deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		rc = probe_conn_wait(pc, &m, 0);
		if (!rc)
			replies++;
		else if (rc == -ETIMEDOUT)
			rc = 0;
	}
	if (rc) {
		ob->ob_kind = rc == -ENOTCONN ? PO_DISCONNECT : PO_NONE;
		snprintf(ob->ob_text, sizeof(ob->ob_text), "before our disconnect: %s",
			 rc == -ENOTCONN ? pc->pc_down_why : strerror(-rc));
		return true;
	}
	while (probe_conn_wait(pc, &m, 0) == 0)
		replies++;
	probe_conn_abort(pc);
	ob->ob_kind = PO_DISCONNECT;
	snprintf(ob->ob_text, sizeof(ob->ob_text),
		 "we disconnected after the first Send completed, %u of %u READDIRPLUS answered",
		 replies, PROBE_ABORT_CALLS);
	return true;
}

#define RAW(name, expect, kind, what) { name, expect, case_raw, kind, 0, what }
#define READ(name, kind, what) { name, PO_ERR_CHUNK, case_read, kind, 0, what }
#define CUT(n, expect, what) { "cut-" #n, expect, case_cut, n, 0, what }

static const struct probe_case probe_catalogue[] = {
	{ "null-inline", PO_REPLY, case_null, PROBE_CREDITS_ASK, 0,
	  "valid NFSv3 NULL call inline (RDMA_MSG, no chunks)" },
	{ "version-0", PO_ERR_VERS, case_version, 0, 0,
	  "transport version 0: ERR_VERS with range 1..1" },
	{ "version-2", PO_ERR_VERS, case_version, 2, 0,
	  "transport version 2: ERR_VERS with range 1..1" },
	{ "proc-obsolete-msgp", PO_ERR_CHUNK, case_proc, RDMA_MSGP, 0,
	  "RDMA_MSGP (obsolete in version 1)" },
	{ "proc-obsolete-done", PO_ERR_CHUNK, case_proc, RDMA_DONE, 0,
	  "RDMA_DONE (obsolete in version 1)" },
	{ "proc-unknown", PO_ERR_CHUNK, case_proc, 7, 0, "procedure 7" },
	CUT(3, PO_DROP, "3 bytes: no xid to answer (xid-short)"),
	CUT(4, PO_ERR_CHUNK, "xid only (hdr-short)"),
	CUT(8, PO_ERR_CHUNK, "xid, version (hdr-short)"),
	CUT(12, PO_ERR_CHUNK, "xid, version, credits (hdr-short)"),
	CUT(16, PO_ERR_CHUNK, "fixed part only (read-list-overrun)"),
	CUT(20, PO_ERR_CHUNK, "ends after the Read list (write-list-overrun)"),
	CUT(24, PO_ERR_CHUNK, "ends after the Write list (reply-chunk-overrun)"),
	RAW("read-list-overrun", PO_ERR_CHUNK, RAW_READ_OVERRUN,
	    "a Read entry cut after its handle"),
	RAW("write-list-overrun", PO_ERR_CHUNK, RAW_WRITE_OVERRUN,
	    "Write chunk announcing 2 segments, 1 present"),
	RAW("reply-chunk-overrun", PO_ERR_CHUNK, RAW_REPLY_OVERRUN,
	    "Reply chunk announcing 3 segments, 1 present"),
	RAW("list-discriminator", PO_ERR_CHUNK, RAW_DISCRIMINATOR,
	    "Read list discriminator 2"),
	RAW("seg-count-wrap-write", PO_ERR_CHUNK, RAW_WRITE_WRAP,
	    "Write chunk of 0x10000000 segments (x 16 bytes wraps 32 bits)"),
	RAW("seg-count-wrap-reply", PO_ERR_CHUNK, RAW_REPLY_WRAP,
	    "Reply chunk of 0x10000000 segments"),
	RAW("write-chunk-empty", PO_ERR_CHUNK, RAW_WRITE_EMPTY,
	    "zero-segment Write chunk in a call"),
	RAW("reply-chunk-empty", PO_ERR_CHUNK, RAW_REPLY_EMPTY,
	    "zero-segment Reply chunk in a call"),
	RAW("chunk-segs", PO_ERR_CHUNK, RAW_WRITE_17SEGS,
	    "Write chunk of 17 segments (limit 16)"),
	RAW("write-chunks", PO_ERR_CHUNK, RAW_17_WRITES,
	    "17 Write chunks (limit 16)"),
	READ("read-position-align", RD_ALIGN, "Read chunk at position 2"),
	READ("read-position-range", RD_RANGE,
	     "Read chunk at position 44, past the 40-byte inline body"),
	READ("read-position-order", RD_ORDER, "Read chunks at positions 40, then 36"),
	READ("read-overlap", RD_OVERLAP,
	     "Read chunk 36+8, then one at 40 (inside the first)"),
	READ("read-position-zero", RD_POS0_MSG, "RDMA_MSG with a position-zero Read chunk"),
	READ("chunk-too-long", RD_TOO_LONG,
	     "Read segment of 0x7fffffff bytes (longer than any payload)"),
	READ("chunk-length-wrap", RD_LEN_WRAP,
	     "Read chunk of 3 x 0x60000000 bytes (sum past 2^32)"),
	READ("nomsg-no-call-chunk", RD_NOMSG_NO_POS0,
	     "RDMA_NOMSG with a Reply chunk but no position-zero Read chunk"),
	RAW("read-chunks", PO_ERR_CHUNK, RAW_17_READS,
	    "17 Read chunks of 4 bytes at positions 40, 44, ... (limit 16)"),
	READ("chunk-segs-read", RD_17_SEGS, "Read chunk of 17 segments (limit 16)"),
	{ "read-chunks-16", PO_REPLY, case_read, RD_16_CHUNKS, 0,
	  "16 Read chunks of 4 bytes behind a NULL call: reply" },
	{ "read-segments-odd", PO_REPLY, case_read, RD_16_ODD_SEGS, 0,
	  "one Read chunk of 16 scattered 1-byte segments: reply" },
	RAW("error-to-responder", PO_DROP, RAW_RDMA_ERROR,
	    "RDMA_ERROR (ERR_CHUNK) sent to the server"),
	RAW("backchannel-reply", PO_DROP, RAW_BC_REPLY,
	    "an RPC REPLY sent to the server (no callback outstanding)"),
	{ "credits-0", PO_REPLY, case_null, 0, 0,
	  "valid NULL asking for 0 credits: reply, grant >= 1" },
	{ "credits-max", PO_REPLY, case_null, UINT32_MAX, 0,
	  "valid NULL asking for 0xFFFFFFFF credits: reply, grant >= 1" },
	{ "over-grant", PO_REPLY, case_over_grant, 0, 0,
	  "grant + 4 NULL calls back to back: all answered" },
	{ "nomsg-position-zero", PO_REPLY, case_nomsg_null, 0, 0,
	  "NULL call sent whole as a position-zero Read chunk (RDMA_NOMSG)" },
	{ "nomsg-position-zero-split", PO_REPLY, case_nomsg_split, 0, 0,
	  "the same, the call in two 20-byte segments in reverse memory order" },
	{ "write-chunk-unused", PO_REPLY, case_write_unused, 0, 0,
	  "NULL call with a Write chunk: reply echoes it with 0 bytes written" },
	{ "reply-chunk-too-small", PO_ERR_CHUNK, case_readdirplus, 64, PK_NEED_FH,
	  "READDIRPLUS of the export root, 64-byte Reply chunk, inline 1024" },
	{ "reply-chunk-readdirplus", PO_REPLY, case_readdirplus, 65536, PK_NEED_FH,
	  "READDIRPLUS of the export root, 64 KiB Reply chunk: NFS3_OK" },
	{ "reply-chunk-16-segments", PO_REPLY, case_readdirplus, 65536,
	  PK_NEED_FH | PK_SPLIT_REPLY,
	  "READDIRPLUS of the export root, Reply chunk of 16 x 4 KiB: NFS3_OK" },
	{ "reply-chunk-bad-handle", PO_DISCONNECT, case_readdirplus, 65536,
	  PK_NEED_FH | PK_BAD_HANDLE,
	  "READDIRPLUS with a Reply chunk whose handle we never registered" },
	{ "reply-disconnect", PO_DISCONNECT, case_reply_abort, 0, PK_NEED_FH,
	  "8 READDIRPLUS with 64 KiB Reply chunks; we disconnect at once" },
	{ "read-bad-handle", PO_DISCONNECT, case_bad_handle, 0, 0,
	  "Read chunk with a handle we never registered: the RDMA Read fails" },
	{ "read-disconnect", PO_DISCONNECT, case_read_abort, 0, 0,
	  "8 calls with 1 MiB Read chunks; we disconnect once the first is taken" },
};

#define PROBE_NCASES (sizeof(probe_catalogue) / sizeof(probe_catalogue[0]))

/** probe_list - print the catalogue: name, expected answer, what is sent. */
void probe_list(void)
{
	size_t i;

	for (i = 0; i < PROBE_NCASES; i++)
		printf("%-24s %-10s %s%s\n", probe_catalogue[i].pk_name,
		       probe_outcome_name(probe_catalogue[i].pk_expect),
		       probe_catalogue[i].pk_what,
		       probe_catalogue[i].pk_flags & PK_NEED_FH ? " [--export]" : "");
}

/* Connect again; 0 or a negative errno. */
static int run_reconnect(struct probe_run *run)
{
	probe_conn_close(&run->pr_conn);
	return probe_conn_open(&run->pr_conn, run->pr_opts);
}

/* The NULL call after a case: 0 when answered, else -EIO with @why. */
static int run_null_check(struct probe_run *run, char *why, size_t whylen)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = probe_conn_new_xid(pc);
	struct probe_obs ob;
	uint8_t buf[256];

	send_observe(run, buf, null_msg(buf, sizeof(buf), xid, PROBE_CREDITS_ASK), xid,
		     run->pr_opts->po_timeout_ms * 3, &ob);
	if (ob.ob_kind == PO_REPLY && ob.ob_accept == RPC_ACCEPT_SUCCESS)
		return 0;
	snprintf(why, whylen, "NULL after: %s", ob.ob_text);
	return -EIO;
}

static struct probe_result *run_result(struct probe_run *run)
{
	struct probe_result *r;

	if (run->pr_nresults == run->pr_cap) {
		uint32_t cap = run->pr_cap ? run->pr_cap * 2 : 64;

		r = realloc(run->pr_results, cap * sizeof(*r));
		if (!r)
			return NULL;
		run->pr_results = r;
		run->pr_cap = cap;
	}
	r = &run->pr_results[run->pr_nresults++];
	memset(r, 0, sizeof(*r));
	return r;
}

/*
 * What the Linux kernel's nfsd is known to answer where it differs from
 * the expectation (observed with Debian's 6.12 kernel, docs/probe.md):
 * the outcome name, then "/rule" when our codec rejects the answer, then
 * "+closed" when the connection ended before the NULL call after it.
 * With --linux such an answer is reported as DIFF, not as a failure.
 */
static const struct {
	const char *lk_case;
	const char *lk_sig;
} probe_linux_known[] = {
	{ "version-0", "ERR_VERS/version" },   /* version field echoes the call's */
	{ "version-2", "ERR_VERS/version" },
	{ "proc-obsolete-done", "DROP" },      /* RDMA_DONE is ignored */
	{ "cut-3", "ERR_CHUNK/version" },      /* answered without a whole xid */
	{ "cut-4", "ERR_CHUNK/version" },
	{ "chunk-segs", "OTHER/chunk-segs" },  /* accepted: other limits */
	{ "write-chunks", "OTHER/write-chunks" },
	{ "read-chunks", "REPLY" },            /* 17 Read chunks served */
	{ "chunk-segs-read", "REPLY" },        /* 17 Read segments served */
	/* ERR_CHUNK, then the connection closed; the ERR_CHUNK may be lost */
	{ "read-position-range", "DISCONNECT|ERR_CHUNK+closed" },
	{ "read-overlap", "DISCONNECT|ERR_CHUNK+closed" },
	{ "read-position-order", "REPLY" },
	{ "read-position-zero", "REPLY" },
	{ "nomsg-no-call-chunk", "DROP" },
};

/*
 * Is @sig what Linux is known to answer to case @name?  A known answer
 * may list alternatives separated by '|'.
 */
static bool linux_known(const char *name, const char *sig)
{
	size_t i, n = strlen(sig);
	const char *p;

	for (i = 0; i < sizeof(probe_linux_known) / sizeof(probe_linux_known[0]); i++) {
		if (strcmp(probe_linux_known[i].lk_case, name))
			continue;
		for (p = probe_linux_known[i].lk_sig; p; p = strchr(p, '|'), p = p ? p + 1 : p)
			if (!strncmp(p, sig, n) && (p[n] == '|' || !p[n]))
				return true;
		return false;
	}
	return false;
}

/* How the NULL call after a case went. */
enum run_after_status {
	AFTER_OK = 0,     /* answered */
	AFTER_CLOSED = 1, /* the connection ended before the answer */
	AFTER_FAIL = -1,  /* no answer, or no new connection */
};

/*
 * The NULL check after a case: on the same connection, or on a new one
 * when the case ended it.
 */
static enum run_after_status run_after(struct probe_run *run, struct probe_result *r)
{
	struct probe_conn *pc = &run->pr_conn;
	bool reconnected = false;
	int rc;

	if (!pc->pc_up) {
		rc = run_reconnect(run);
		if (rc) {
			snprintf(r->pr_after, sizeof(r->pr_after), "reconnect failed: %s",
				 strerror(-rc));
			run->pr_fatal = true;
			return AFTER_FAIL;
		}
		reconnected = true;
	}
	if (run_null_check(run, r->pr_after, sizeof(r->pr_after))) {
		bool closed = !pc->pc_up && !reconnected;

		/* Start the next case on a fresh connection. */
		probe_conn_close(pc);
		return closed ? AFTER_CLOSED : AFTER_FAIL;
	}
	snprintf(r->pr_after, sizeof(r->pr_after), "%s",
		 reconnected ? "reconnected, NULL ok" : "NULL ok");
	return AFTER_OK;
}

/* Run one case and the NULL check after it. */
static void run_case(struct probe_run *run, const struct probe_case *pk,
		     struct probe_result *r)
{
	struct probe_conn *pc = &run->pr_conn;
	enum run_after_status after;
	bool ok, alive;
	struct probe_obs ob;
	char sig[64];
	int rc;

	if (run->pr_opts->po_verbose)
		fprintf(stderr, "rpcrdma-probe: %s\n", pk->pk_name);
	if (!pc->pc_up) {
		rc = run_reconnect(run);
		if (rc) {
			snprintf(r->pr_observed, sizeof(r->pr_observed),
				 "not run: cannot connect: %s", strerror(-rc));
			run->pr_fatal = true;
			return;
		}
	}
	ok = pk->pk_fn(run, pk, &ob);
	snprintf(r->pr_observed, sizeof(r->pr_observed), "%s", ob.ob_text);
	/* An answer our codec rejects never passes; nor does a lost connection. */
	ok = ok && ob.ob_kind == pk->pk_expect && !ob.ob_rule[0] &&
	     (pc->pc_up || pk->pk_expect == PO_DISCONNECT);
	after = run_after(run, r);
	alive = after == AFTER_OK;
	if (after == AFTER_CLOSED && !run->pr_fatal) {
		/* The server closed the connection after its answer: is it
		 * still serving? */
		struct probe_result again;

		alive = run_after(run, &again) == AFTER_OK;
		snprintf(r->pr_after + strlen(r->pr_after),
			 sizeof(r->pr_after) - strlen(r->pr_after), "; %s", again.pr_after);
	}
	r->pr_pass = ok && after == AFTER_OK;
	snprintf(sig, sizeof(sig), "%s%s%s%s", probe_outcome_name(ob.ob_kind),
		 ob.ob_rule[0] ? "/" : "", ob.ob_rule,
		 after == AFTER_CLOSED ? "+closed" : "");
	r->pr_linux_diff = !r->pr_pass && alive && run->pr_opts->po_linux &&
			   linux_known(pk->pk_name, sig);
}

/**
 * probe_run_all - run the whole catalogue against the server.
 * @run: options set, connection open (pr_conn), file handle if any.
 *
 * Return: the number of failed cases (0: every case passed).
 */
int probe_run_all(struct probe_run *run)
{
	int failed = 0;
	size_t i;

	for (i = 0; i < PROBE_NCASES; i++) {
		const struct probe_case *pk = &probe_catalogue[i];
		struct probe_result *r = run_result(run);

		if (!r)
			return -ENOMEM;
		snprintf(r->pr_name, sizeof(r->pr_name), "%s", pk->pk_name);
		snprintf(r->pr_expected, sizeof(r->pr_expected), "%s%s",
			 probe_outcome_name(pk->pk_expect),
			 pk->pk_expect == PO_ERR_VERS ? " 1..1" : "");
		if (run->pr_fatal) {
			snprintf(r->pr_observed, sizeof(r->pr_observed),
				 "not run: the server is gone");
			failed++;
			continue;
		}
		if ((pk->pk_flags & PK_NEED_FH) && !run->pr_have_fh) {
			r->pr_skipped = !run->pr_opts->po_export;
			snprintf(r->pr_observed, sizeof(r->pr_observed), "not run: %s",
				 run->pr_opts->po_export ? run->pr_mount_err : "no --export");
			r->pr_pass = r->pr_skipped;
			if (!r->pr_pass)
				failed++;
			continue;
		}
		run_case(run, pk, r);
		if (!r->pr_pass && !r->pr_linux_diff)
			failed++;
	}
	return failed;
}
