// SPDX-License-Identifier: MIT
/*
 * probe_msg.c - building what rpcrdma-probe sends: ONC RPC calls (RFC
 * 5531) for NFSv3 NULL and READDIRPLUS (RFC 1813), and RPC-over-RDMA
 * transport headers (RFC 8166 4.2), valid ones through the codec's
 * encoder, crafted ones word by word with the small XDR writer here.
 */
#include <errno.h>
#include <string.h>

#include "common/be.h"
#include "probe.h"


/** probe_xdr_init - start writing XDR into @buf (@cap bytes). */
void probe_xdr_init(struct probe_xdr *x, void *buf, uint32_t cap)
{
	x->px_buf = buf;
	x->px_cap = cap;
	x->px_len = 0;
	x->px_over = false;
}

/** probe_xdr_u32 - append one big-endian word. */
void probe_xdr_u32(struct probe_xdr *x, uint32_t v)
{
	if (x->px_over || x->px_cap - x->px_len < 4) {
		x->px_over = true;
		return;
	}
	store_be32(x->px_buf + x->px_len, v);
	x->px_len += 4;
}

/** probe_xdr_u64 - append a hyper (high word first). */
void probe_xdr_u64(struct probe_xdr *x, uint64_t v)
{
	probe_xdr_u32(x, (uint32_t)(v >> 32));
	probe_xdr_u32(x, (uint32_t)v);
}

/** probe_xdr_bytes - append @len raw bytes, zero-padded to a word. */
void probe_xdr_bytes(struct probe_xdr *x, const void *p, uint32_t len)
{
	uint32_t padded = (len + 3u) & ~3u;

	if (x->px_over || padded < len || x->px_cap - x->px_len < padded) {
		x->px_over = true;
		return;
	}
	memcpy(x->px_buf + x->px_len, p, len);
	memset(x->px_buf + x->px_len + len, 0, padded - len);
	x->px_len += padded;
}

/** probe_xdr_opaque - append variable-length opaque data (length, bytes). */
void probe_xdr_opaque(struct probe_xdr *x, const void *p, uint32_t len)
{
	probe_xdr_u32(x, len);
	probe_xdr_bytes(x, p, len);
}

static void rpc_call_header(struct probe_xdr *x, uint32_t xid, uint32_t proc)
{
	probe_xdr_u32(x, xid);
	probe_xdr_u32(x, RPC_DIR_CALL);
	probe_xdr_u32(x, RPC_MSG_VERSION);
	probe_xdr_u32(x, RPCRDMA_NFS3_PROGRAM);
	probe_xdr_u32(x, RPCRDMA_NFS3_VERSION);
	probe_xdr_u32(x, proc);
}

/**
 * probe_rpc_null_call - an NFSv3 NULL call with AUTH_NONE credential and
 * verifier into @buf.  Return: its length (PROBE_NULL_CALL_BYTES), or 0
 * when @cap is too small.
 */
uint32_t probe_rpc_null_call(void *buf, uint32_t cap, uint32_t xid)
{
	struct probe_xdr x;

	probe_xdr_init(&x, buf, cap);
	rpc_call_header(&x, xid, NFSPROC3_NULL);
	probe_xdr_u32(&x, RPC_AUTH_NONE);
	probe_xdr_u32(&x, 0);
	probe_xdr_u32(&x, RPC_AUTH_NONE);
	probe_xdr_u32(&x, 0);
	return x.px_over ? 0 : x.px_len;
}

/**
 * probe_rpc_readdirplus_call - an NFSv3 READDIRPLUS call (RFC 1813 3.3.17)
 * of the directory @fh from cookie 0, with an AUTH_SYS credential for
 * uid 0, gid 0.  Return: its length, or 0 when @cap is too small.
 */
uint32_t probe_rpc_readdirplus_call(void *buf, uint32_t cap, uint32_t xid,
				    const uint8_t *fh, uint32_t fhlen,
				    uint32_t dircount, uint32_t maxcount)
{
	static const char machine[] = "rpcrdma-probe";
	struct probe_xdr x;
	uint8_t verf[8] = { 0 };

	probe_xdr_init(&x, buf, cap);
	rpc_call_header(&x, xid, NFSPROC3_READDIRPLUS);
	/* AUTH_SYS body: stamp, machine name, uid, gid, gids<> */
	probe_xdr_u32(&x, RPC_AUTH_SYS);
	probe_xdr_u32(&x, 4 + 4 + ((sizeof(machine) - 1 + 3) & ~3u) + 4 + 4 + 4);
	probe_xdr_u32(&x, 0);
	probe_xdr_opaque(&x, machine, sizeof(machine) - 1);
	probe_xdr_u32(&x, 0);
	probe_xdr_u32(&x, 0);
	probe_xdr_u32(&x, 0);
	probe_xdr_u32(&x, RPC_AUTH_NONE);
	probe_xdr_u32(&x, 0);
	/* READDIRPLUS3args: dir, cookie, cookieverf, dircount, maxcount */
	probe_xdr_opaque(&x, fh, fhlen);
	probe_xdr_u64(&x, 0);
	probe_xdr_bytes(&x, verf, sizeof(verf));
	probe_xdr_u32(&x, dircount);
	probe_xdr_u32(&x, maxcount);
	return x.px_over ? 0 : x.px_len;
}

/** probe_hdr_init - an empty transport header (no chunks). */
void probe_hdr_init(struct rpcrdma_hdr *h, uint32_t xid, uint32_t credits,
		    uint32_t proc)
{
	memset(h, 0, sizeof(*h));
	h->rh_xid = xid;
	h->rh_vers = RPCRDMA_VERSION;
	h->rh_credits = credits;
	h->rh_proc = proc;
}

static struct rpcrdma_segment *hdr_new_seg(struct rpcrdma_hdr *h)
{
	if (h->rh_nsegs >= RPCRDMA_WIRE_MAX_SEGS)
		return NULL;
	return &h->rh_segs[h->rh_nsegs++];
}

/**
 * probe_hdr_add_read - append one Read segment at @position.  Segments
 * added one after another with the same position form one Read chunk;
 * Read segments must be added before any Write or Reply segment.  Past
 * the capacities of struct rpcrdma_hdr nothing is added: headers beyond
 * the codec's limits are built word by word instead (probe_case_hdr.c).
 */
void probe_hdr_add_read(struct rpcrdma_hdr *h, uint32_t position,
			uint32_t handle, uint32_t length, uint64_t offset)
{
	struct rpcrdma_chunk *c = h->rh_nread ? &h->rh_read[h->rh_nread - 1] : NULL;
	struct rpcrdma_segment *s;

	if (!c || c->rc_position != position) {
		if (h->rh_nread >= RPCRDMA_WIRE_MAX_READ_CHUNKS)
			return;
		c = &h->rh_read[h->rh_nread++];
		c->rc_position = position;
		c->rc_first = h->rh_nsegs;
		c->rc_nsegs = 0;
		c->rc_length = 0;
	}
	s = hdr_new_seg(h);
	if (!s)
		return;
	s->rs_handle = handle;
	s->rs_length = length;
	s->rs_offset = offset;
	c->rc_nsegs++;
	c->rc_length += length;
}

/** probe_hdr_add_write - append a Write chunk of one segment. */
void probe_hdr_add_write(struct rpcrdma_hdr *h, uint32_t handle,
			 uint32_t length, uint64_t offset)
{
	struct rpcrdma_chunk *c;
	struct rpcrdma_segment *s;

	if (h->rh_nwrite >= RPCRDMA_WIRE_MAX_WRITE_CHUNKS)
		return;
	c = &h->rh_write[h->rh_nwrite++];
	c->rc_position = 0;
	c->rc_first = h->rh_nsegs;
	c->rc_nsegs = 1;
	c->rc_length = length;
	s = hdr_new_seg(h);
	if (!s)
		return;
	s->rs_handle = handle;
	s->rs_length = length;
	s->rs_offset = offset;
}

/** probe_hdr_set_reply - a Reply chunk of one segment. */
void probe_hdr_set_reply(struct rpcrdma_hdr *h, uint32_t handle,
			 uint32_t length, uint64_t offset)
{
	struct rpcrdma_segment *s = hdr_new_seg(h);

	if (!s)
		return;
	s->rs_handle = handle;
	s->rs_length = length;
	s->rs_offset = offset;
	h->rh_has_reply = true;
	h->rh_reply.rc_position = 0;
	h->rh_reply.rc_first = h->rh_nsegs - 1;
	h->rh_reply.rc_nsegs = 1;
	h->rh_reply.rc_length = length;
}

/**
 * probe_hdr_set_reply_split - a Reply chunk of @length bytes at @offset
 * cut into @nsegs contiguous segments of equal size.
 */
void probe_hdr_set_reply_split(struct rpcrdma_hdr *h, uint32_t handle,
			       uint32_t length, uint64_t offset, uint32_t nsegs)
{
	uint32_t i, each = length / nsegs;

	h->rh_has_reply = true;
	h->rh_reply.rc_position = 0;
	h->rh_reply.rc_first = h->rh_nsegs;
	h->rh_reply.rc_nsegs = 0;
	h->rh_reply.rc_length = 0;
	for (i = 0; i < nsegs; i++) {
		struct rpcrdma_segment *s = hdr_new_seg(h);

		if (!s)
			return;
		s->rs_handle = handle;
		s->rs_length = each;
		s->rs_offset = offset + (uint64_t)i * each;
		h->rh_reply.rc_nsegs++;
		h->rh_reply.rc_length += each;
	}
}

/**
 * probe_msg_build - encode @h with the codec and append @body.
 *
 * Return: bytes of the message; -ENOSPC when @cap is too small, -EINVAL
 * when @h is inconsistent.
 */
int probe_msg_build(void *buf, uint32_t cap, const struct rpcrdma_hdr *h,
		    const void *body, uint32_t body_len)
{
	int n = rpcrdma_wire_encode(buf, cap, h);

	if (n < 0)
		return n;
	if (cap - (uint32_t)n < body_len)
		return -ENOSPC;
	if (body_len)
		memcpy((uint8_t *)buf + n, body, body_len);
	return n + (int)body_len;
}
