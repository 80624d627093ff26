// SPDX-License-Identifier: MIT
/*
 * rdma_hdr.c - the RPC-over-RDMA Version 1 transport header (RFC 8166
 * section 4): strict decoding from either side of a connection, encoding,
 * and header size arithmetic.
 *
 * Decoding is done in one pass over the received bytes.  Every loop
 * consumes at least one XDR word per iteration or stops, and every count
 * taken from the wire is compared against the bytes that remain before it
 * drives anything, so the work done is bounded by the message length.
 */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rpcrdma/wire.h>

#include "wire_internal.h"

/* One xdr_rdma_segment: handle, length, offset (64 bits). */
#define SEG_BYTES 16u
/* A Read list entry after its discriminator: position + segment. */
#define READ_ENTRY_BYTES (4u + SEG_BYTES)

#define XDR_ROUNDUP64(n) (((uint64_t)(n) + 3u) & ~(uint64_t)3u)

struct hdr_decoder {
	struct wire_cursor hd_wc;
	struct rpcrdma_wire_limits hd_lim; /* clamped to the capacities */
	struct rpcrdma_hdr *hd_hdr;
	struct rpcrdma_wire_err *hd_err;
	bool hd_reply; /* decoding as a Requester */
};

void rpcrdma_wire_limits_default(struct rpcrdma_wire_limits *lim)
{
	lim->wl_max_segs_per_chunk = 16;
	lim->wl_max_read_chunks = RPCRDMA_WIRE_MAX_READ_CHUNKS;
	lim->wl_max_write_chunks = RPCRDMA_WIRE_MAX_WRITE_CHUNKS;
	lim->wl_max_chunk_bytes = (1u << 20) + (64u << 10);
}

static void limits_clamp(struct rpcrdma_wire_limits *out,
			 const struct rpcrdma_wire_limits *in)
{
	if (in)
		*out = *in;
	else
		rpcrdma_wire_limits_default(out);
	if (out->wl_max_segs_per_chunk > RPCRDMA_WIRE_MAX_SEGS)
		out->wl_max_segs_per_chunk = RPCRDMA_WIRE_MAX_SEGS;
	if (out->wl_max_read_chunks > RPCRDMA_WIRE_MAX_READ_CHUNKS)
		out->wl_max_read_chunks = RPCRDMA_WIRE_MAX_READ_CHUNKS;
	if (out->wl_max_write_chunks > RPCRDMA_WIRE_MAX_WRITE_CHUNKS)
		out->wl_max_write_chunks = RPCRDMA_WIRE_MAX_WRITE_CHUNKS;
}

/*
 * Fill the error report and return -EBADMSG.  A Requester never answers
 * a reply with RDMA_ERROR (RFC 8166 4.5), so on that side every rejection
 * is a DROP; the rule still says what was wrong.
 */
__attribute__((format(printf, 4, 5)))
static int hdr_reject(struct hdr_decoder *hd, enum rpcrdma_wire_answer answer,
		      const char *rule, const char *fmt, ...)
{
	struct rpcrdma_wire_err *err = hd->hd_err;
	va_list ap;

	err->we_answer = hd->hd_reply ? RPCRDMA_ANSWER_DROP : answer;
	err->we_rule = rule;
	va_start(ap, fmt);
	vsnprintf(err->we_detail, sizeof(err->we_detail), fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

static void load_segment(struct rpcrdma_segment *seg, const uint8_t *p)
{
	seg->rs_handle = load_be32(p);
	seg->rs_length = load_be32(p + 4);
	seg->rs_offset = load_be64(p + 8);
}

/* A chunk's total length must fit an XDR length and the configured limit. */
static int check_chunk_length(struct hdr_decoder *hd, const char *what,
			      const struct rpcrdma_chunk *c)
{
	if (c->rc_length > UINT32_MAX)
		return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "chunk-length-wrap",
				  "%s chunk segment lengths sum to %llu bytes, past 2^32",
				  what, (unsigned long long)c->rc_length);
	if (c->rc_length > hd->hd_lim.wl_max_chunk_bytes)
		return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "chunk-too-long",
				  "%s chunk of %llu bytes exceeds the limit of %llu",
				  what, (unsigned long long)c->rc_length,
				  (unsigned long long)hd->hd_lim.wl_max_chunk_bytes);
	return 0;
}

/*
 * The Read list (RFC 8166 4.2.1.1): entries "1, position, segment", then
 * "0".  Consecutive entries with one position form one Read chunk.
 */
static int decode_read_list(struct hdr_decoder *hd)
{
	struct rpcrdma_hdr *h = hd->hd_hdr;
	struct rpcrdma_chunk *c = NULL;
	const uint8_t *p;
	uint32_t disc, pos, i;
	int ret;

	for (;;) {
		if (wc_u32(&hd->hd_wc, &disc))
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "read-list-overrun",
					  "Read list runs past the end of the message");
		if (disc == 0)
			break;
		if (disc != 1)
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "list-discriminator",
					  "Read list discriminator %u is neither 0 nor 1", disc);
		p = wc_take(&hd->hd_wc, READ_ENTRY_BYTES);
		if (!p)
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "read-list-overrun",
					  "Read segment runs past the end of the message");
		pos = load_be32(p);
		if (!c || pos != c->rc_position) {
			if (h->rh_nread >= hd->hd_lim.wl_max_read_chunks)
				return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "read-chunks",
						  "more than %u Read chunks",
						  hd->hd_lim.wl_max_read_chunks);
			c = &h->rh_read[h->rh_nread++];
			c->rc_position = pos;
			c->rc_first = h->rh_nsegs;
			c->rc_nsegs = 0;
			c->rc_length = 0;
		}
		if (c->rc_nsegs >= hd->hd_lim.wl_max_segs_per_chunk)
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "chunk-segs",
					  "Read chunk at position %u has more than %u segments",
					  pos, hd->hd_lim.wl_max_segs_per_chunk);
		if (h->rh_nsegs >= RPCRDMA_WIRE_MAX_SEGS)
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "total-segs",
					  "more than %u segments in all",
					  RPCRDMA_WIRE_MAX_SEGS);
		load_segment(&h->rh_segs[h->rh_nsegs], p + 4);
		c->rc_length += h->rh_segs[h->rh_nsegs].rs_length;
		c->rc_nsegs++;
		h->rh_nsegs++;
	}
	for (i = 0; i < h->rh_nread; i++) {
		ret = check_chunk_length(hd, "Read", &h->rh_read[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A counted array of segments (the body of a Write chunk or the Reply
 * chunk, RFC 8166 4.2.1.2): "nsegs, nsegs x segment".
 */
static int decode_counted_chunk(struct hdr_decoder *hd, const char *what,
				const char *overrun_rule, struct rpcrdma_chunk *c)
{
	struct rpcrdma_hdr *h = hd->hd_hdr;
	const uint8_t *p;
	uint32_t n, i;

	if (wc_u32(&hd->hd_wc, &n))
		return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, overrun_rule,
				  "%s chunk segment count runs past the end of the message",
				  what);
	if ((uint64_t)n * SEG_BYTES > UINT32_MAX)
		return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "seg-count-wrap",
				  "%s chunk segment count %u: its byte size wraps 32 bits",
				  what, n);
	if ((uint64_t)n * SEG_BYTES > wc_remaining(&hd->hd_wc))
		return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, overrun_rule,
				  "%s chunk segment count %u runs past the end of the message",
				  what, n);
	if (n > hd->hd_lim.wl_max_segs_per_chunk)
		return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "chunk-segs",
				  "%s chunk has %u segments, more than %u",
				  what, n, hd->hd_lim.wl_max_segs_per_chunk);
	if (n > RPCRDMA_WIRE_MAX_SEGS - h->rh_nsegs)
		return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "total-segs",
				  "more than %u segments in all",
				  RPCRDMA_WIRE_MAX_SEGS);
	p = wc_take(&hd->hd_wc, (size_t)n * SEG_BYTES);
	c->rc_position = 0;
	c->rc_first = h->rh_nsegs;
	c->rc_nsegs = n;
	c->rc_length = 0;
	for (i = 0; i < n; i++, p += SEG_BYTES) {
		load_segment(&h->rh_segs[h->rh_nsegs], p);
		c->rc_length += h->rh_segs[h->rh_nsegs].rs_length;
		h->rh_nsegs++;
	}
	return check_chunk_length(hd, what, c);
}

/* The Write list (RFC 8166 4.2.1.2): "1, chunk" entries, then "0". */
static int decode_write_list(struct hdr_decoder *hd)
{
	struct rpcrdma_hdr *h = hd->hd_hdr;
	struct rpcrdma_chunk *c;
	uint32_t disc;
	int ret;

	for (;;) {
		if (wc_u32(&hd->hd_wc, &disc))
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "write-list-overrun",
					  "Write list runs past the end of the message");
		if (disc == 0)
			return 0;
		if (disc != 1)
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "list-discriminator",
					  "Write list discriminator %u is neither 0 nor 1", disc);
		if (h->rh_nwrite >= hd->hd_lim.wl_max_write_chunks)
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "write-chunks",
					  "more than %u Write chunks",
					  hd->hd_lim.wl_max_write_chunks);
		c = &h->rh_write[h->rh_nwrite++];
		ret = decode_counted_chunk(hd, "Write", "write-list-overrun", c);
		if (ret)
			return ret;
		/* RFC 8166 4.3.2: a Responder may return an unused one empty. */
		if (c->rc_nsegs == 0 && !hd->hd_reply)
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "write-chunk-empty",
					  "Write chunk %u has no segments",
					  h->rh_nwrite - 1);
	}
}

/* The Reply chunk (RFC 8166 4.2.1.3): "0", or "1, chunk". */
static int decode_reply_chunk(struct hdr_decoder *hd)
{
	struct rpcrdma_hdr *h = hd->hd_hdr;
	uint32_t disc;
	int ret;

	if (wc_u32(&hd->hd_wc, &disc))
		return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "reply-chunk-overrun",
				  "Reply chunk runs past the end of the message");
	if (disc == 0)
		return 0;
	if (disc != 1)
		return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "list-discriminator",
				  "Reply chunk discriminator %u is neither 0 nor 1", disc);
	ret = decode_counted_chunk(hd, "Reply", "reply-chunk-overrun", &h->rh_reply);
	if (ret)
		return ret;
	if (h->rh_reply.rc_nsegs == 0 && !hd->hd_reply)
		return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "reply-chunk-empty",
				  "Reply chunk has no segments");
	h->rh_has_reply = true;
	return 0;
}

/*
 * Read chunk positions in a call (RFC 8166 3.4.5, 3.5.3).  Positions are
 * offsets in the reconstructed XDR stream: the inline body (RDMA_MSG) or
 * the position-zero chunk (RDMA_NOMSG) with each other Read chunk's data,
 * XDR-rounded, inserted at its position.  So a chunk may start no later
 * than the end of that stream as built so far, and no earlier than where
 * the previous chunk's data ends.
 */
static int check_read_positions(struct hdr_decoder *hd)
{
	struct rpcrdma_hdr *h = hd->hd_hdr;
	uint64_t base, added = 0, end = 0;
	uint32_t i, first, prev = 0;

	if (h->rh_proc == RDMA_MSG) {
		if (h->rh_nread && h->rh_read[0].rc_position == 0)
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "read-position-zero",
					  "RDMA_MSG with a position-zero Read chunk");
		base = h->rh_inline_len;
		first = 0;
	} else {
		if (!h->rh_nread || h->rh_read[0].rc_position != 0)
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "nomsg-no-call-chunk",
					  "RDMA_NOMSG call without a position-zero Read chunk");
		base = h->rh_read[0].rc_length;
		first = 1;
	}
	for (i = first; i < h->rh_nread; i++) {
		const struct rpcrdma_chunk *c = &h->rh_read[i];

		if (c->rc_position & 3u)
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "read-position-align",
					  "Read position %u is not a multiple of 4",
					  c->rc_position);
		if (i > first && c->rc_position < prev)
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "read-position-order",
					  "Read position %u follows position %u",
					  c->rc_position, prev);
		if (c->rc_position < end)
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "read-overlap",
					  "Read chunk at %u overlaps the previous chunk ending at %llu",
					  c->rc_position, (unsigned long long)end);
		if (c->rc_position > base + added)
			return hdr_reject(hd, RPCRDMA_ANSWER_ERR_CHUNK, "read-position-range",
					  "Read position %u is past the end of the %llu-byte message",
					  c->rc_position, (unsigned long long)(base + added));
		end = c->rc_position + c->rc_length;
		added += XDR_ROUNDUP64(c->rc_length);
		prev = c->rc_position;
	}
	return 0;
}

/* RDMA_ERROR body (RFC 8166 4.2.4), as seen by a Requester. */
static int decode_error_body(struct hdr_decoder *hd)
{
	struct rpcrdma_hdr *h = hd->hd_hdr;

	if (wc_u32(&hd->hd_wc, &h->rh_err))
		return hdr_reject(hd, RPCRDMA_ANSWER_DROP, "error-short",
				  "RDMA_ERROR without an error code");
	switch (h->rh_err) {
	case ERR_VERS:
		if (wc_u32(&hd->hd_wc, &h->rh_vers_low) ||
		    wc_u32(&hd->hd_wc, &h->rh_vers_high))
			return hdr_reject(hd, RPCRDMA_ANSWER_DROP, "error-short",
					  "ERR_VERS without its version range");
		if (h->rh_vers_low > h->rh_vers_high)
			return hdr_reject(hd, RPCRDMA_ANSWER_DROP, "error-vers-range",
					  "ERR_VERS range %u..%u is empty",
					  h->rh_vers_low, h->rh_vers_high);
		return 0;
	case ERR_CHUNK:
		return 0;
	default:
		return hdr_reject(hd, RPCRDMA_ANSWER_DROP, "error-code",
				  "unknown RDMA_ERROR code %u", h->rh_err);
	}
}

void rpcrdma_wire_hdr_init(struct rpcrdma_hdr *h, uint32_t xid, uint32_t credits,
			   uint32_t proc)
{
	memset(h, 0, offsetof(struct rpcrdma_hdr, rh_segs));
	h->rh_xid = xid;
	h->rh_vers = RPCRDMA_VERSION;
	h->rh_credits = credits;
	h->rh_proc = proc;
}

static int decode_hdr(const void *buf, size_t len,
		      const struct rpcrdma_wire_limits *lim,
		      struct rpcrdma_hdr *h, struct rpcrdma_wire_err *err,
		      bool reply)
{
	struct hdr_decoder hd = {
		.hd_wc = { .wc_base = buf, .wc_len = len, .wc_pos = 0 },
		.hd_hdr = h,
		.hd_err = err,
		.hd_reply = reply,
	};
	size_t rest;
	int ret;

	limits_clamp(&hd.hd_lim, lim);
	/* Only the scalars: rh_segs[] and the chunk arrays are filled by count. */
	rpcrdma_wire_hdr_init(h, 0, 0, 0);
	h->rh_vers = 0;
	err->we_xid = 0;

	if (!buf || wc_u32(&hd.hd_wc, &h->rh_xid))
		return hdr_reject(&hd, RPCRDMA_ANSWER_DROP, "xid-short",
				  "%zu bytes: too short to carry an xid", len);
	err->we_xid = h->rh_xid;
	if (wc_u32(&hd.hd_wc, &h->rh_vers))
		return hdr_reject(&hd, RPCRDMA_ANSWER_ERR_CHUNK, "hdr-short",
				  "%zu bytes: header cut short before the version", len);
	if (h->rh_vers != RPCRDMA_VERSION)
		return hdr_reject(&hd, RPCRDMA_ANSWER_ERR_VERS, "version",
				  "version %u is not %u", h->rh_vers, RPCRDMA_VERSION);
	if (wc_u32(&hd.hd_wc, &h->rh_credits) || wc_u32(&hd.hd_wc, &h->rh_proc))
		return hdr_reject(&hd, RPCRDMA_ANSWER_ERR_CHUNK, "hdr-short",
				  "%zu bytes: header cut short in its fixed part", len);

	switch (h->rh_proc) {
	case RDMA_MSG:
	case RDMA_NOMSG:
		break;
	case RDMA_ERROR:
		if (!reply)
			return hdr_reject(&hd, RPCRDMA_ANSWER_DROP, "error-to-responder",
					  "RDMA_ERROR received by a Responder");
		ret = decode_error_body(&hd);
		if (ret)
			return ret;
		goto done;
	case RDMA_MSGP:
	case RDMA_DONE:
		return hdr_reject(&hd, RPCRDMA_ANSWER_ERR_CHUNK, "proc-obsolete",
				  "procedure %u is obsolete in version 1", h->rh_proc);
	default:
		return hdr_reject(&hd, RPCRDMA_ANSWER_ERR_CHUNK, "proc-unknown",
				  "unknown procedure %u", h->rh_proc);
	}

	ret = decode_read_list(&hd);
	if (!ret)
		ret = decode_write_list(&hd);
	if (!ret)
		ret = decode_reply_chunk(&hd);
	if (ret)
		return ret;

done:
	rest = wc_remaining(&hd.hd_wc);
	h->rh_hdr_len = (uint32_t)hd.hd_wc.wc_pos;
	h->rh_inline_len = rest > UINT32_MAX ? UINT32_MAX : (uint32_t)rest;
	if (h->rh_proc == RDMA_ERROR)
		return 0;

	if (reply) {
		if (h->rh_nread)
			return hdr_reject(&hd, RPCRDMA_ANSWER_DROP, "reply-read-list",
					  "reply carries a Read list");
		if (h->rh_proc == RDMA_NOMSG && !h->rh_has_reply)
			return hdr_reject(&hd, RPCRDMA_ANSWER_DROP, "nomsg-no-reply-chunk",
					  "RDMA_NOMSG reply without a Reply chunk");
		return 0;
	}
	return check_read_positions(&hd);
}

int rpcrdma_wire_decode_call(const void *buf, size_t len,
			     const struct rpcrdma_wire_limits *lim,
			     struct rpcrdma_hdr *hdr,
			     struct rpcrdma_wire_err *err)
{
	return decode_hdr(buf, len, lim, hdr, err, false);
}

int rpcrdma_wire_decode_reply(const void *buf, size_t len,
			      const struct rpcrdma_wire_limits *lim,
			      struct rpcrdma_hdr *hdr,
			      struct rpcrdma_wire_err *err)
{
	return decode_hdr(buf, len, lim, hdr, err, true);
}

/* ---- Encoding ---- */

static bool chunk_in_range(const struct rpcrdma_hdr *h,
			   const struct rpcrdma_chunk *c)
{
	return c->rc_first <= h->rh_nsegs &&
	       c->rc_nsegs <= h->rh_nsegs - c->rc_first;
}

/* Encoded size, or 0 when @h cannot be encoded. */
static size_t hdr_size_checked(const struct rpcrdma_hdr *h)
{
	size_t size = RPCRDMA_HDR_FIXED_BYTES;
	uint32_t i;

	switch (h->rh_proc) {
	case RDMA_MSG:
	case RDMA_NOMSG:
		break;
	case RDMA_ERROR:
		if (h->rh_err == ERR_VERS)
			return RPCRDMA_ERR_VERS_BYTES;
		if (h->rh_err == ERR_CHUNK)
			return RPCRDMA_ERR_CHUNK_BYTES;
		return 0;
	default:
		return 0;
	}
	if (h->rh_nsegs > RPCRDMA_WIRE_MAX_SEGS ||
	    h->rh_nread > RPCRDMA_WIRE_MAX_READ_CHUNKS ||
	    h->rh_nwrite > RPCRDMA_WIRE_MAX_WRITE_CHUNKS)
		return 0;
	for (i = 0; i < h->rh_nread; i++) {
		if (!chunk_in_range(h, &h->rh_read[i]))
			return 0;
		size += (size_t)h->rh_read[i].rc_nsegs * (4 + READ_ENTRY_BYTES);
	}
	size += 4;
	for (i = 0; i < h->rh_nwrite; i++) {
		if (!chunk_in_range(h, &h->rh_write[i]))
			return 0;
		size += 8 + (size_t)h->rh_write[i].rc_nsegs * SEG_BYTES;
	}
	size += 4;
	if (h->rh_has_reply) {
		if (!chunk_in_range(h, &h->rh_reply))
			return 0;
		size += 8 + (size_t)h->rh_reply.rc_nsegs * SEG_BYTES;
	} else {
		size += 4;
	}
	return size;
}

size_t rpcrdma_wire_hdr_size(const struct rpcrdma_hdr *hdr)
{
	return hdr_size_checked(hdr);
}

size_t rpcrdma_wire_max_hdr_size(uint32_t nread_segs, uint32_t nwrite_chunks,
				 uint32_t nwrite_segs, uint32_t nreply_segs)
{
	uint64_t size = RPCRDMA_HDR_FIXED_BYTES;

	size += (uint64_t)nread_segs * (4 + READ_ENTRY_BYTES) + 4;
	size += (uint64_t)nwrite_chunks * 8 + (uint64_t)nwrite_segs * SEG_BYTES + 4;
	size += nreply_segs ? 8 + (uint64_t)nreply_segs * SEG_BYTES : 4;
	return (size_t)size;
}

static uint8_t *put_segment(uint8_t *p, const struct rpcrdma_segment *seg)
{
	store_be32(p, seg->rs_handle);
	store_be32(p + 4, seg->rs_length);
	store_be64(p + 8, seg->rs_offset);
	return p + SEG_BYTES;
}

static uint8_t *put_counted_chunk(uint8_t *p, const struct rpcrdma_hdr *h,
				  const struct rpcrdma_chunk *c)
{
	uint32_t i;

	p = put_be32(p, c->rc_nsegs);
	for (i = 0; i < c->rc_nsegs; i++)
		p = put_segment(p, &h->rh_segs[c->rc_first + i]);
	return p;
}

int rpcrdma_wire_encode(void *buf, size_t cap, const struct rpcrdma_hdr *hdr)
{
	size_t size = hdr_size_checked(hdr);
	uint8_t *p = buf;
	uint32_t i, j;

	if (!size)
		return -EINVAL;
	if (cap < size)
		return -ENOSPC;

	p = put_be32(p, hdr->rh_xid);
	p = put_be32(p, RPCRDMA_VERSION);
	p = put_be32(p, hdr->rh_credits);
	p = put_be32(p, hdr->rh_proc);
	if (hdr->rh_proc == RDMA_ERROR) {
		p = put_be32(p, hdr->rh_err);
		if (hdr->rh_err == ERR_VERS) {
			p = put_be32(p, hdr->rh_vers_low);
			put_be32(p, hdr->rh_vers_high);
		}
		return (int)size;
	}

	for (i = 0; i < hdr->rh_nread; i++) {
		const struct rpcrdma_chunk *c = &hdr->rh_read[i];

		for (j = 0; j < c->rc_nsegs; j++) {
			p = put_be32(p, 1);
			p = put_be32(p, c->rc_position);
			p = put_segment(p, &hdr->rh_segs[c->rc_first + j]);
		}
	}
	p = put_be32(p, 0);
	for (i = 0; i < hdr->rh_nwrite; i++) {
		p = put_be32(p, 1);
		p = put_counted_chunk(p, hdr, &hdr->rh_write[i]);
	}
	p = put_be32(p, 0);
	if (hdr->rh_has_reply) {
		p = put_be32(p, 1);
		put_counted_chunk(p, hdr, &hdr->rh_reply);
	} else {
		put_be32(p, 0);
	}
	return (int)size;
}

int rpcrdma_wire_encode_error(void *buf, size_t cap, uint32_t xid,
			      uint32_t credits, uint32_t code)
{
	size_t size;
	uint8_t *p = buf;

	if (code == ERR_VERS)
		size = RPCRDMA_ERR_VERS_BYTES;
	else if (code == ERR_CHUNK)
		size = RPCRDMA_ERR_CHUNK_BYTES;
	else
		return -EINVAL;
	if (cap < size)
		return -ENOSPC;
	p = put_be32(p, xid);
	p = put_be32(p, RPCRDMA_VERSION);
	p = put_be32(p, credits);
	p = put_be32(p, RDMA_ERROR);
	p = put_be32(p, code);
	if (code == ERR_VERS) {
		p = put_be32(p, RPCRDMA_VERSION);
		put_be32(p, RPCRDMA_VERSION);
	}
	return (int)size;
}
