// SPDX-License-Identifier: MIT
/*
 * probe_case_flow.c - rpcrdma-probe cases about flow and connection loss:
 * more calls than the credit grant (RFC 8166 section 3.3), and our
 * disconnect while the server reads Read chunks or writes Reply chunks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "probe.h"

/*
 * More calls in flight than granted: grant + 4 NULL calls back to back.
 * Every one must be answered (the server posts spare Receives, or at
 * worst the Requester's excess is its own problem, but nothing may hang).
 */
bool probe_case_over_grant(struct probe_run *run, const struct probe_case *pk,
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

		len = probe_null_msg(buf, sizeof(buf), xid, PROBE_CREDITS_ASK);
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
	deadline = probe_now_ms() + run->pr_opts->po_timeout_ms * 3;
	while (got < n) {
		int64_t left = deadline - probe_now_ms();

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

/*
 * Disconnect while the server's RDMA Reads of 1 MiB Read chunks (16
 * segments of 64 KiB each) are outstanding: send PROBE_ABORT_CALLS such
 * calls back to back and disconnect as soon as the first Send has
 * completed (the server has that call), before the replies come.
 */
bool probe_case_read_abort(struct probe_run *run, const struct probe_case *pk,
			   struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = 0, i, k, replies;
	uint8_t call[PROBE_NULL_CALL_BYTES];
	static struct rpcrdma_hdr h;
	uint8_t buf[PROBE_SEND_BYTES];
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
					   64u << 10, probe_chunk_addr(pc, i * (64u << 10)));
		len = probe_msg_build(buf, sizeof(buf), &h, call, sizeof(call));
		rc = len < 0 ? len : probe_conn_send(pc, buf, (uint32_t)len);
	}
	/* The first Send completes once the server has taken the call. */
	if (!probe_abort_after_first_send(run, rc, &replies, ob))
		return true;
	snprintf(ob->ob_text, sizeof(ob->ob_text),
		 "we disconnected after the first Send completed, %u of %u calls answered "
		 "(%u with 1 MiB Reads outstanding or queued)", replies, PROBE_ABORT_CALLS,
		 PROBE_ABORT_CALLS - replies);
	return true;
}

/*
 * Disconnect while the server writes Reply chunks: eight READDIRPLUS
 * calls of the root with 64 KiB Reply chunks back to back; disconnect as
 * soon as the first Send has completed.
 */
bool probe_case_reply_abort(struct probe_run *run, const struct probe_case *pk,
			    struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid, k, replies, call_len;
	static struct rpcrdma_hdr h;
	uint8_t call[512], buf[PROBE_SEND_BYTES];
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
		probe_hdr_set_reply(&h, pc->pc_mr->rkey, 65536, probe_chunk_addr(pc, k * 65536));
		len = call_len ? probe_msg_build(buf, sizeof(buf), &h, call, call_len) : -ENOSPC;
		rc = len < 0 ? len : probe_conn_send(pc, buf, (uint32_t)len);
	}
	if (!probe_abort_after_first_send(run, rc, &replies, ob))
		return true;
	snprintf(ob->ob_text, sizeof(ob->ob_text),
		 "we disconnected after the first Send completed, %u of %u READDIRPLUS answered",
		 replies, PROBE_ABORT_CALLS);
	return true;
}
