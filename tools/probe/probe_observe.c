// SPDX-License-Identifier: MIT
/*
 * probe_observe.c - what came back for one probe message: an RPC reply
 * (inline, or in the Reply chunk we offered), RDMA_ERROR, nothing within
 * the timeout, or the end of the connection.  Answers are decoded with
 * the codec's Requester rules (rpcrdma_wire_decode_reply).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/be.h"
#include "probe.h"

static const char *const outcome_names[] = {
	[PO_REPLY] = "REPLY",
	[PO_ERR_VERS] = "ERR_VERS",
	[PO_ERR_CHUNK] = "ERR_CHUNK",
	[PO_DROP] = "DROP",
	[PO_DISCONNECT] = "DISCONNECT",
	[PO_OTHER] = "OTHER",
	[PO_NONE] = "-",
};

/** probe_outcome_name - the report's name for @k. */
const char *probe_outcome_name(enum probe_outcome k)
{
	if ((unsigned int)k >= sizeof(outcome_names) / sizeof(outcome_names[0]))
		return "?";
	return outcome_names[k];
}

static int64_t obs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Append up to 8 words of @m in hex: what an answer we reject said. */
static void obs_words(char *out, size_t cap, const struct probe_msg *m)
{
	size_t n = strlen(out);
	uint32_t i;

	for (i = 0; i + 4 <= m->pm_len && i < 32 && n + 10 < cap; i += 4) {
		snprintf(out + n, cap - n, " %08x", load_be32(m->pm_buf + i));
		n = strlen(out);
	}
}

/*
 * An answer with our xid that the codec rejects.  An RDMA_ERROR whose
 * only fault is its version field is still named ERR_VERS or ERR_CHUNK
 * (with the rule "version"), so that what a server said stays visible.
 */
static void obs_rejected(const struct probe_msg *m, const struct rpcrdma_wire_err *err,
			 struct probe_obs *ob)
{
	uint32_t code = m->pm_len >= 20 ? load_be32(m->pm_buf + 16) : 0;

	ob->ob_kind = PO_OTHER;
	snprintf(ob->ob_rule, sizeof(ob->ob_rule), "%s", err->we_rule);
	if (!strcmp(err->we_rule, "version") && m->pm_len >= 20 &&
	    load_be32(m->pm_buf + 12) == RDMA_ERROR &&
	    ((code == ERR_VERS && m->pm_len >= 28) || code == ERR_CHUNK)) {
		ob->ob_credits = load_be32(m->pm_buf + 8);
		if (code == ERR_VERS) {
			ob->ob_kind = PO_ERR_VERS;
			ob->ob_vers_low = load_be32(m->pm_buf + 20);
			ob->ob_vers_high = load_be32(m->pm_buf + 24);
			snprintf(ob->ob_text, sizeof(ob->ob_text), "ERR_VERS %u..%u",
				 ob->ob_vers_low, ob->ob_vers_high);
		} else {
			ob->ob_kind = PO_ERR_CHUNK;
			snprintf(ob->ob_text, sizeof(ob->ob_text), "ERR_CHUNK");
		}
		snprintf(ob->ob_text + strlen(ob->ob_text),
			 sizeof(ob->ob_text) - strlen(ob->ob_text),
			 ", grant %u, but its own version field is %u, not 1:",
			 ob->ob_credits, load_be32(m->pm_buf + 4));
	} else {
		snprintf(ob->ob_text, sizeof(ob->ob_text),
			 "%u-byte answer our codec rejects (%s):", m->pm_len, err->we_rule);
	}
	obs_words(ob->ob_text, sizeof(ob->ob_text), m);
}

/*
 * Find the RPC reply of an RDMA_NOMSG answer in the Reply chunk we
 * offered: the segments the server returns carry the bytes it wrote.
 * Returns 0, or -EFAULT when they do not lie in our chunk area.
 */
static int obs_reply_chunk(const struct probe_conn *pc, const struct rpcrdma_hdr *h,
			   const uint8_t **body, uint32_t *len)
{
	const struct rpcrdma_segment *s;
	uint64_t base = (uintptr_t)pc->pc_chunk, at, total = 0;
	uint32_t i;

	if (!h->rh_has_reply || !h->rh_reply.rc_nsegs)
		return -EFAULT;
	s = &h->rh_segs[h->rh_reply.rc_first];
	if (s->rs_offset < base)
		return -EFAULT;
	at = s->rs_offset - base;
	/* Only a contiguous run of segments is one message. */
	for (i = 0; i < h->rh_reply.rc_nsegs; i++) {
		if (s[i].rs_offset != s->rs_offset + total)
			break;
		total += s[i].rs_length;
	}
	if (at > PROBE_CHUNK_BYTES || total > PROBE_CHUNK_BYTES - at)
		return -EFAULT;
	*body = pc->pc_chunk + at;
	*len = (uint32_t)total;
	return 0;
}

/* Classify a decoded answer that carries our xid. */
static void obs_answer(struct probe_conn *pc, const struct rpcrdma_hdr *h,
		       const struct probe_msg *m, uint32_t xid, struct probe_obs *ob)
{
	struct rpcrdma_rpc_msg rpc;
	const uint8_t *body;
	uint32_t len;
	int rc;

	ob->ob_credits = h->rh_credits;
	ob->ob_proc = h->rh_proc;
	ob->ob_nwrite = h->rh_nwrite;
	if (h->rh_nwrite) {
		ob->ob_write_nsegs = h->rh_write[0].rc_nsegs;
		ob->ob_write_len = h->rh_write[0].rc_length;
	}
	pc->pc_grant = h->rh_credits;
	if (h->rh_proc == RDMA_ERROR) {
		if (h->rh_err == ERR_VERS) {
			ob->ob_kind = PO_ERR_VERS;
			ob->ob_vers_low = h->rh_vers_low;
			ob->ob_vers_high = h->rh_vers_high;
			snprintf(ob->ob_text, sizeof(ob->ob_text), "ERR_VERS %u..%u, grant %u",
				 h->rh_vers_low, h->rh_vers_high, h->rh_credits);
		} else {
			ob->ob_kind = PO_ERR_CHUNK;
			snprintf(ob->ob_text, sizeof(ob->ob_text), "ERR_CHUNK, grant %u",
				 h->rh_credits);
		}
		return;
	}
	if (h->rh_proc == RDMA_NOMSG) {
		if (obs_reply_chunk(pc, h, &body, &len)) {
			ob->ob_kind = PO_OTHER;
			snprintf(ob->ob_text, sizeof(ob->ob_text),
				 "RDMA_NOMSG whose Reply chunk is not the one we offered");
			return;
		}
	} else {
		body = m->pm_buf + h->rh_hdr_len;
		len = h->rh_inline_len;
	}
	ob->ob_body_len = len;
	rc = rpcrdma_wire_decode_rpc(body, len, &rpc);
	if (rc || rpc.rm_dir != RPC_DIR_REPLY || rpc.rm_xid != xid) {
		ob->ob_kind = PO_OTHER;
		snprintf(ob->ob_text, sizeof(ob->ob_text),
			 "%s with %u bytes that are not an RPC reply to xid 0x%08x",
			 h->rh_proc == RDMA_NOMSG ? "RDMA_NOMSG" : "RDMA_MSG", len, xid);
		return;
	}
	ob->ob_kind = PO_REPLY;
	if (rpc.rm_reply_stat != RPC_MSG_ACCEPTED) {
		ob->ob_accept = UINT32_MAX;
		snprintf(ob->ob_text, sizeof(ob->ob_text), "REPLY (%s, RPC denied), grant %u",
			 h->rh_proc == RDMA_NOMSG ? "RDMA_NOMSG" : "RDMA_MSG", h->rh_credits);
		return;
	}
	ob->ob_accept = rpc.rm_accept_stat;
	ob->ob_nfs_status = UINT32_MAX;
	if (rpc.rm_accept_stat == RPC_ACCEPT_SUCCESS && len >= rpc.rm_hdr_len + 4)
		ob->ob_nfs_status = load_be32(body + rpc.rm_hdr_len);
	snprintf(ob->ob_text, sizeof(ob->ob_text), "REPLY (%s, %u bytes, accept_stat %u), grant %u",
		 h->rh_proc == RDMA_NOMSG ? "RDMA_NOMSG, Reply chunk" : "RDMA_MSG",
		 len, rpc.rm_accept_stat, h->rh_credits);
}

/**
 * probe_observe_mask - wait for the answer to the message with @xid.
 * @pc: the connection.
 * @xid: the probe's xid.
 * @mask: the bits of an answer's xid that must match @xid (0xffffffff,
 *        or less for a message cut inside its xid).
 * @timeout_ms: how long silence takes to count as a drop.
 * @ob: out: what came back.
 *
 * Answers with another xid (late answers to earlier probes) are counted
 * and skipped.  Return: 0 (the outcome is in @ob).
 */
int probe_observe_mask(struct probe_conn *pc, uint32_t xid, uint32_t mask,
		       unsigned int timeout_ms, struct probe_obs *ob)
{
	int64_t deadline = obs_now_ms() + timeout_ms;
	static struct probe_msg m;
	struct rpcrdma_wire_err err;
	static struct rpcrdma_hdr h;
	unsigned int strays = 0;
	char stray[96] = "";
	int64_t left;
	int rc;

	memset(ob, 0, sizeof(*ob));
	for (;;) {
		left = deadline - obs_now_ms();
		rc = probe_conn_wait(pc, &m, left > 0 ? (unsigned int)left : 0);
		if (rc == -ETIMEDOUT) {
			ob->ob_kind = PO_DROP;
			snprintf(ob->ob_text, sizeof(ob->ob_text), "no answer in %u ms", timeout_ms);
			break;
		}
		if (rc) {
			ob->ob_kind = PO_DISCONNECT;
			snprintf(ob->ob_text, sizeof(ob->ob_text), "connection ended: %s",
				 pc->pc_down_why[0] ? pc->pc_down_why : "?");
			break;
		}
		if (rpcrdma_wire_decode_reply(m.pm_buf, m.pm_len, NULL, &h, &err)) {
			if (m.pm_len >= 4 && (load_be32(m.pm_buf) & mask) == (xid & mask)) {
				obs_rejected(&m, &err, ob);
				break;
			}
			if (!strays++) {
				snprintf(stray, sizeof(stray), "%u bytes:", m.pm_len);
				obs_words(stray, sizeof(stray), &m);
			}
			continue;
		}
		if ((h.rh_xid & mask) != (xid & mask)) {
			if (!strays++) {
				snprintf(stray, sizeof(stray), "%u bytes:", m.pm_len);
				obs_words(stray, sizeof(stray), &m);
			}
			continue;
		}
		obs_answer(pc, &h, &m, h.rh_xid, ob);
		break;
	}
	if (strays) {
		size_t n = strlen(ob->ob_text);

		snprintf(ob->ob_text + n, sizeof(ob->ob_text) - n,
			 " (+%u message%s with another xid, first %s)", strays,
			 strays > 1 ? "s" : "", stray);
	}
	return 0;
}

/** probe_observe - probe_observe_mask() with the whole xid to match. */
int probe_observe(struct probe_conn *pc, uint32_t xid, unsigned int timeout_ms,
		  struct probe_obs *ob)
{
	return probe_observe_mask(pc, xid, UINT32_MAX, timeout_ms, ob);
}
