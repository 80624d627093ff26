// SPDX-License-Identifier: MIT
/*
 * probe_case_util.c - what the cases of rpcrdma-probe share: building a
 * valid NULL message, sending and observing the answer, notes on the
 * observation, and the end of a disconnect-under-load case.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "probe.h"

/* Monotonic milliseconds, for the cases' own deadlines. */
int64_t probe_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The address the server sees for byte @off of our chunk area. */
uint64_t probe_chunk_addr(const struct probe_conn *pc, uint32_t off)
{
	return (uintptr_t)pc->pc_chunk + off;
}

/* A handle we never registered. */
uint32_t probe_bad_handle(const struct probe_conn *pc)
{
	uint32_t bad = 0x0badbad0u;

	return bad == pc->pc_mr->rkey ? bad ^ 0xff00u : bad;
}

/* A valid inline NULL call: header with no chunks, then the call. */
int probe_null_msg(uint8_t *buf, uint32_t cap, uint32_t xid, uint32_t credits)
{
	struct rpcrdma_hdr h;
	uint8_t call[PROBE_NULL_CALL_BYTES];

	probe_rpc_null_call(call, sizeof(call), xid);
	probe_hdr_init(&h, xid, credits, RDMA_MSG);
	return probe_msg_build(buf, cap, &h, call, sizeof(call));
}

/*
 * Send @len bytes (a negative errno: building the message failed) and
 * observe the answer whose xid matches @xid in the bits of @mask within
 * @timeout_ms.
 */
void probe_send_observe_mask(struct probe_run *run, const void *buf, int len,
			     uint32_t xid, uint32_t mask, unsigned int timeout_ms,
			     struct probe_obs *ob)
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
	probe_observe_mask(pc, xid, mask, timeout_ms, ob);
}

/* Send @len bytes and observe the answer to @xid within @timeout_ms. */
void probe_send_observe(struct probe_run *run, const void *buf, int len,
			uint32_t xid, unsigned int timeout_ms, struct probe_obs *ob)
{
	probe_send_observe_mask(run, buf, len, xid, UINT32_MAX, timeout_ms, ob);
}

/* Add "; @s" to the observation's description. */
void probe_obs_append(struct probe_obs *ob, const char *s)
{
	size_t n = strlen(ob->ob_text);

	snprintf(ob->ob_text + n, sizeof(ob->ob_text) - n, "; %s", s);
}

/* False (and a note) when a REPLY to a NULL call did not accept it. */
bool probe_null_accepted(struct probe_obs *ob)
{
	if (ob->ob_kind == PO_REPLY && ob->ob_accept != RPC_ACCEPT_SUCCESS) {
		probe_obs_append(ob, "NULL not accepted");
		return false;
	}
	return true;
}

/*
 * The end of a disconnect-under-load case, after PROBE_ABORT_CALLS calls
 * were sent back to back (@rc: how sending went): wait until the first
 * Send has completed (the server has that call), count the replies that
 * came meanwhile into *@replies, and disconnect.  False, with @ob filled
 * in, when something went wrong before our disconnect.
 */
bool probe_abort_after_first_send(struct probe_run *run, int rc, uint32_t *replies,
				  struct probe_obs *ob)
{
	struct probe_conn *pc = &run->pr_conn;
	int64_t deadline = probe_now_ms() + run->pr_opts->po_timeout_ms;
	static struct probe_msg m;

	*replies = 0;
	while (!rc && pc->pc_sends_out >= PROBE_ABORT_CALLS) {
		if (probe_now_ms() > deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		rc = probe_conn_wait(pc, &m, 0);
		if (!rc)
			(*replies)++;
		else if (rc == -ETIMEDOUT)
			rc = 0;
	}
	if (rc) {
		ob->ob_kind = rc == -ENOTCONN ? PO_DISCONNECT : PO_NONE;
		snprintf(ob->ob_text, sizeof(ob->ob_text), "before our disconnect: %s",
			 rc == -ENOTCONN ? pc->pc_down_why : strerror(-rc));
		return false;
	}
	while (probe_conn_wait(pc, &m, 0) == 0)
		(*replies)++;
	probe_conn_abort(pc);
	ob->ob_kind = PO_DISCONNECT;
	return true;
}
