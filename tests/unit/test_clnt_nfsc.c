// SPDX-License-Identifier: MIT
/*
 * test_clnt_nfsc.c - the NFSv3 client procedures over the Requester
 * transport, against a scripted server behind the verbs seam.
 *
 * The fake device answers each Send at once (inside post_send, as a fast
 * peer may): it decodes the call's transport header with the codec,
 * rebuilds the call from the inline body and the Read chunk (the chunk's
 * offset is a real address here), records it, and replies with the next
 * scripted results: DDP data goes into the Write chunk, a reply too large
 * for the inline threshold into the Reply chunk (RDMA_NOMSG).  Expected
 * argument and result bytes are worked out by hand from RFC 1813.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_verbs.h"
#include "test_words.h"

#include "clnt/clnt_internal.h"
#include "nfsc/nfsc_internal.h"

#include "clnt_fixture.h"

#define MAX_SCRIPT 8

struct scripted {
	uint8_t res[40960];     /* results after the RPC reply header */
	uint32_t res_len;
	const uint8_t *ddp;     /* DDP data: the Write chunk, else inline */
	uint32_t ddp_len;
};

static struct {
	struct scripted script[MAX_SCRIPT];
	unsigned nscript, next;
	uint32_t procs[MAX_SCRIPT];
	uint8_t args[MAX_SCRIPT][16384]; /* rebuilt arguments, after the RPC header */
	uint32_t args_len[MAX_SCRIPT];
	bool read_chunk[MAX_SCRIPT], write_chunk[MAX_SCRIPT], reply_chunk[MAX_SCRIPT];
	struct rpcrdma_clnt *cl;
} sv;

static void deliver_wc(uint64_t wr_id, enum ibv_wc_opcode op, uint32_t len)
{
	struct ibv_wc wc = { .wr_id = wr_id, .status = IBV_WC_SUCCESS, .opcode = op,
			     .byte_len = len };

	clnt_handle_wc(sv.cl, &wc);
}

/* Serve one call: the fake device runs this when it executes the Send,
 * inside post_send, with the client lock held. */
static bool serve(const uint8_t *msg, uint32_t len, const struct fv_wr *wr, void *arg)
{
	static uint8_t call[65536];
	static struct rpcrdma_hdr h, r;
	struct rpcrdma_wire_err err;
	struct scripted *sc;
	struct clnt_recv *rr;
	uint32_t call_len, n, xid, body_off;
	uint8_t *p, *reply;
	int rc;

	(void)arg;
	assert_int_equal(rpcrdma_wire_decode_call(msg, len, NULL, &h, &err), 0);
	n = sv.next;
	assert_true(n < sv.nscript);
	/* Rebuild the call: inline bytes with the Read chunk at its position. */
	call_len = 0;
	if (h.rh_nread) {
		const struct rpcrdma_segment *seg = &h.rh_segs[h.rh_read[0].rc_first];
		const uint8_t *src;
		uint32_t pos = h.rh_read[0].rc_position;

		memcpy(call, msg + h.rh_hdr_len, pos);
		src = fv_remote_ptr(seg->rs_handle, seg->rs_offset, seg->rs_length,
				    IBV_ACCESS_REMOTE_READ);
		assert_non_null(src);
		memcpy(call + pos, src, seg->rs_length);
		call_len = pos + seg->rs_length;
		while (call_len & 3)
			call[call_len++] = 0;
		memcpy(call + call_len, msg + h.rh_hdr_len + pos, h.rh_inline_len - pos);
		call_len += h.rh_inline_len - pos;
	} else {
		memcpy(call, msg + h.rh_hdr_len, h.rh_inline_len);
		call_len = h.rh_inline_len;
	}
	sv.read_chunk[n] = h.rh_nread;
	sv.write_chunk[n] = h.rh_nwrite;
	sv.reply_chunk[n] = h.rh_has_reply;
	xid = get32(call);
	sv.procs[n] = get32(call + 20);
	assert_int_equal(get32(call + 12), 100003);
	assert_int_equal(get32(call + 16), 3);
	sv.args_len[n] = call_len - 40; /* AUTH_NONE call header */
	memcpy(sv.args[n], call + 40, sv.args_len[n]);
	sc = &sv.script[sv.next++];

	/* Send completion first, then the Reply. */
	deliver_wc(wr->w_wr_id, IBV_WC_SEND, 0);

	rpcrdma_wire_hdr_init(&r, xid, 8, RDMA_MSG);
	if (h.rh_nwrite) {
		struct rpcrdma_segment *seg = &h.rh_segs[h.rh_write[0].rc_first];

		assert_true(sc->ddp_len <= seg->rs_length);
		if (sc->ddp)
			memcpy(fv_remote_ptr(seg->rs_handle, seg->rs_offset, sc->ddp_len,
					     IBV_ACCESS_REMOTE_WRITE), sc->ddp, sc->ddp_len);
		r.rh_segs[0] = *seg;
		r.rh_segs[0].rs_length = sc->ddp ? sc->ddp_len : 0;
		r.rh_write[0] = (struct rpcrdma_chunk){ .rc_first = 0, .rc_nsegs = 1,
			.rc_length = r.rh_segs[0].rs_length };
		r.rh_nwrite = 1;
		r.rh_nsegs = 1;
	}
	/* RPC reply header + results */
	p = call;
	p = put32(p, xid);
	p = put32(p, 1);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 0);
	memcpy(p, sc->res, sc->res_len);
	call_len = 24 + sc->res_len;
	if (sc->ddp && !h.rh_nwrite) {
		/* No Write chunk offered: the data inline, where the results
		 * end (READ's and READLINK's last item), with its XDR pad. */
		memcpy(call + call_len, sc->ddp, sc->ddp_len);
		call_len += sc->ddp_len;
		while (call_len & 3)
			call[call_len++] = 0;
	}

	rr = rpcrdma_container_of((struct rpcrdma_cqe *)(uintptr_t)fv_take_recv()->wr_id,
				  struct clnt_recv, rr_cqe);
	reply = rr->rr_buf;
	if (rpcrdma_wire_hdr_size(&r) + call_len > 4096) {
		struct rpcrdma_segment *seg = &h.rh_segs[h.rh_reply.rc_first];

		assert_true(h.rh_has_reply);
		assert_true(call_len <= seg->rs_length);
		assert_non_null(fv_remote_ptr(seg->rs_handle, seg->rs_offset, call_len,
					      IBV_ACCESS_REMOTE_WRITE));
		memcpy((void *)(uintptr_t)seg->rs_offset, call, call_len);
		r.rh_proc = RDMA_NOMSG;
		r.rh_segs[r.rh_nsegs] = *seg;
		r.rh_segs[r.rh_nsegs].rs_length = call_len;
		r.rh_reply = (struct rpcrdma_chunk){ .rc_first = r.rh_nsegs, .rc_nsegs = 1,
						     .rc_length = call_len };
		r.rh_nsegs++;
		r.rh_has_reply = true;
		rc = rpcrdma_wire_encode(reply, 4096, &r);
		assert_true(rc > 0);
		len = (uint32_t)rc;
	} else {
		rc = rpcrdma_wire_encode(reply, 4096, &r);
		assert_true(rc > 0);
		body_off = (uint32_t)rc;
		memcpy(reply + body_off, call, call_len);
		len = body_off + call_len;
	}
	deliver_wc((uintptr_t)&rr->rr_cqe, IBV_WC_RECV, len);
	return true; /* the completions went straight to the client */
}

static struct rpcrdma_nfsc nc;

static int setup(void **state)
{
	struct rpcrdma_clnt_config cfg = {
		.cf_max_credits = 8, .cf_inline_size = 4096, .cf_auth_none = true,
		.cf_log = stderr,
	};
	struct rpcrdma_clnt *cl;

	memset(&sv, 0, sizeof(sv));
	fv_reset();
	fv.fv_on_send = serve; /* answers every Send at once */
	cl = clnt_fixture_new(&cfg);
	assert_int_equal(clnt_post_all_recvs(cl), 0);
	clnt_set_peer(cl, NULL, 0); /* no private data: 1024-byte thresholds */
	cl->cl_inline_send = 4096;  /* as if the server advertised 4096 */
	cl->cl_inline_recv = 4096;
	cl->cl_connected = true;
	sv.cl = cl;
	memset(&nc, 0, sizeof(nc));
	nc.nc_clnts[0] = cl;
	nc.nc_nconn = 1;
	nc.nc_rsize = nc.nc_wsize = 1u << 20;
	nc.nc_root.fh_len = 8;
	memcpy(nc.nc_root.fh_data, "ROOTFH!!", 8);
	*state = cl;
	return 0;
}

static int teardown(void **state)
{
	struct rpcrdma_clnt *cl = *state;

	assert_int_equal(cl->cl_reqs_out, 0);
	clnt_free(cl);
	assert_int_equal(fv_live_mrs(), 0); /* every registration released */
	fv_uninstall();
	return 0;
}

/* Script the next reply: @n words of results, then optional DDP data. */
static struct scripted *script(const uint32_t *w, unsigned n)
{
	struct scripted *sc = &sv.script[sv.nscript++];
	unsigned i;

	for (i = 0; i < n; i++)
		put32(sc->res + 4 * i, w[i]);
	sc->res_len = 4 * n;
	return sc;
}

static void assert_args(unsigned call, const uint32_t *w, unsigned n)
{
	unsigned i;

	assert_true(sv.args_len[call] >= 4 * n);
	for (i = 0; i < n; i++)
		if (get32(sv.args[call] + 4 * i) != w[i])
			fail_msg("call %u arg word %u: 0x%08x, want 0x%08x", call, i,
				 get32(sv.args[call] + 4 * i), w[i]);
}

#define FH_WORDS 8, 0x524f4f54, 0x46482121 /* opaque<64> "ROOTFH!!" */

/*
 * Where READ's data goes (RFC 8166 3.4.2, 3.5: the Requester chooses).
 * Worked out by hand: our inline receive is 4096 bytes; a transport header
 * without chunks is 7 words, 28 bytes (RFC 8166 4.2: xid, vers, credits,
 * proc, three empty lists); the largest RPC reply header 24 + 400 bytes
 * (RFC 5531 9: xid, REPLY, MSG_ACCEPTED, verifier flavor and length and a
 * body of at most 400 bytes, accept_stat).  That leaves 4096 - 28 - 424 =
 * 3644 bytes of results.  READ3res (RFC 1813 3.3.6) before the data:
 * status 4, post_op_attr 4 + 84, count 4, eof 4, the data's length 4:
 * 104 bytes.  So a count up to 3540 fits inline (its data rounded up to 4
 * bytes), 3541 (3544 rounded) does not.
 */
#define READ_INLINE_MAX 3540u

/* Read @count bytes, the server returning them all; return whether the
 * call offered a Write chunk.  Checks the data, and that a call without a
 * Write chunk offered no Reply chunk either (its whole reply fits). */
static bool read_offers_write_chunk(uint32_t count)
{
	static uint8_t data[4096], buf[4096];
	uint32_t res[5] = { 0, 0, count, 1, count }; /* OK, no attr, count, eof, len */
	uint32_t nread = 0, i;
	struct scripted *sc;
	bool eof = false;
	unsigned n = sv.next;

	for (i = 0; i < count; i++)
		data[i] = (uint8_t)(i * 7 + count);
	memset(buf, 0, sizeof(buf));
	sc = script(res, 5);
	sc->ddp = data;
	sc->ddp_len = count;
	assert_int_equal(rpcrdma_nfsc_read(&nc, &nc.nc_root, 0, buf, count, &nread, &eof), 0);
	assert_int_equal(nread, count);
	assert_true(eof);
	assert_memory_equal(buf, data, count);
	if (!sv.write_chunk[n])
		assert_false(sv.reply_chunk[n]);
	return sv.write_chunk[n];
}

/* READ: arguments fh, offset, count; a small READ's data comes inline. */
static void test_read_small_inline(void **state)
{
	static const uint32_t want[] = { FH_WORDS, 1, 2, 5 };
	static const uint32_t res[] = { 0, 0, 5, 1, 5 }; /* OK, no attr, count, eof, len */
	char buf[16] = { 0 };
	uint32_t nread = 0;
	bool eof = false;
	struct scripted *sc;

	(void)state;
	sc = script(res, 5);
	sc->ddp = (const uint8_t *)"hello";
	sc->ddp_len = 5;
	assert_int_equal(rpcrdma_nfsc_read(&nc, &nc.nc_root, 0x100000002ull, buf, 5, &nread,
					   &eof), 0);
	assert_int_equal(sv.procs[0], NFSPROC3_READ);
	assert_int_equal(sv.args_len[0], 24);
	assert_args(0, want, 6);
	assert_false(sv.write_chunk[0]);
	assert_false(sv.reply_chunk[0]);
	assert_int_equal(nread, 5);
	assert_true(eof);
	assert_string_equal(buf, "hello");
}

/* The boundary: one byte below, at and above READ_INLINE_MAX. */
static void test_read_write_chunk_boundary(void **state)
{
	(void)state;
	assert_false(read_offers_write_chunk(READ_INLINE_MAX - 1));
	assert_false(read_offers_write_chunk(READ_INLINE_MAX));
	assert_true(read_offers_write_chunk(READ_INLINE_MAX + 1));
	assert_true(read_offers_write_chunk(4096));
}

/* A smaller inline receive (the server's inline send size, RFC 8797)
 * moves the boundary: 1024 - 28 - 424 - 104 = 468. */
static void test_read_write_chunk_peer_inline(void **state)
{
	struct rpcrdma_clnt *cl = *state;

	cl->cl_inline_recv = 1024;
	assert_false(read_offers_write_chunk(468));
	assert_true(read_offers_write_chunk(469));
}

/* A server that ignores the Write chunk and returns the data inline. */
static void test_read_inline_data(void **state)
{
	static const uint32_t res[] = { 0, 0, 3, 0, 3, 0x61626300 }; /* "abc" + pad */
	char buf[8] = { 0 };
	uint32_t nread = 0;
	bool eof = true;

	(void)state;
	script(res, 6);
	assert_int_equal(rpcrdma_nfsc_read(&nc, &nc.nc_root, 0, buf, 8, &nread, &eof), 0);
	assert_int_equal(nread, 3);
	assert_false(eof);
	assert_string_equal(buf, "abc");
}

/* WRITE of 5000 bytes: over the 4096 threshold, so the data goes in a Read
 * chunk at its position; the rebuilt call carries it with its pad. */
static void test_write_read_chunk(void **state)
{
	static const uint32_t want[] = { FH_WORDS, 0, 4096, 5000, 2, 5000 };
	static const uint32_t res[] = { 0, 0, 0, 5000, 2, 0x01020304, 0x05060708 };
	static uint8_t data[5000];
	uint8_t verf[8];
	uint32_t written = 0;

	(void)state;
	memset(data, 0xab, sizeof(data));
	script(res, 7);
	assert_int_equal(rpcrdma_nfsc_write(&nc, &nc.nc_root, 4096, data, 5000, 2, &written,
					    verf), 0);
	assert_int_equal(sv.procs[0], NFSPROC3_WRITE);
	assert_true(sv.read_chunk[0]);
	assert_args(0, want, 8);
	assert_int_equal(sv.args_len[0], 32 + 5000);
	assert_int_equal(sv.args[0][32], 0xab);
	assert_int_equal(sv.args[0][32 + 4999], 0xab);
	assert_int_equal(written, 5000);
	assert_int_equal(verf[0], 1);
	assert_int_equal(verf[7], 8);

	/* 100 bytes fit inline: no chunk; 100 is a multiple of 4, no pad. */
	script(res, 7);
	assert_int_equal(rpcrdma_nfsc_write(&nc, &nc.nc_root, 0, data, 100, 0, &written,
					    NULL), -EBADMSG); /* 5000 written > 100 asked */
	assert_false(sv.read_chunk[1]);
	assert_int_equal(sv.args_len[1], 32 + 100);
}

/* READDIRPLUS: the reply comes through the Reply chunk (RDMA_NOMSG);
 * entries are passed on in order; eof ends the loop. */
struct seen {
	unsigned n;
	char names[4][16];
	uint64_t fileids[4];
	bool attr[4], fh[4];
};

static int collect(const char *name, uint64_t fileid, const struct rpcrdma_nfsc_attr *attr,
		   const struct rpcrdma_nfsc_fh *fh, void *arg)
{
	struct seen *s = arg;

	strcpy(s->names[s->n], name);
	s->fileids[s->n] = fileid;
	s->attr[s->n] = attr != NULL;
	s->fh[s->n] = fh != NULL;
	if (attr)
		assert_int_equal(attr->at_size, 0x1234);
	s->n++;
	return 0;
}

static void test_readdirplus(void **state)
{
	uint32_t res[200];
	unsigned n = 0, i;
	struct scripted *sc;
	struct seen seen = { 0 };

	(void)state;
	res[n++] = 0;             /* NFS3_OK */
	res[n++] = 0;             /* dir attributes: none */
	res[n++] = 0xc0;          /* cookieverf */
	res[n++] = 0xffee;
	/* entry "a": fileid 7, cookie 1, attributes, handle */
	res[n++] = 1;
	res[n++] = 0;
	res[n++] = 7;
	res[n++] = 1;
	res[n++] = 0x61000000;
	res[n++] = 0;
	res[n++] = 1;
	res[n++] = 1;             /* post_op_attr: follows */
	for (i = 0; i < 21; i++)  /* fattr3: type .. ctime; size is words 5-6 */
		res[n++] = i == 5 ? 0 : i == 6 ? 0x1234 : 1;
	res[n++] = 1;             /* post_op_fh3: follows */
	res[n++] = 4;
	res[n++] = 0x46484121;
	/* entry "bcdef": fileid 0x100000009, cookie 2, nothing else */
	res[n++] = 1;
	res[n++] = 1;
	res[n++] = 9;
	res[n++] = 5;
	res[n++] = 0x62636465;
	res[n++] = 0x66000000;
	res[n++] = 0;
	res[n++] = 2;
	res[n++] = 0;
	res[n++] = 0;
	res[n++] = 0;             /* no more entries */
	res[n++] = 1;             /* eof */
	sc = script(res, n);
	/* pad the reply past the inline threshold with trailing bytes */
	memset(sc->res + sc->res_len, 0, 5000);
	sc->res_len += 5000;
	assert_int_equal(rpcrdma_nfsc_readdirplus(&nc, &nc.nc_root, collect, &seen), 0);
	assert_int_equal(sv.procs[0], NFSPROC3_READDIRPLUS);
	assert_true(sv.reply_chunk[0]);
	{
		/* fh, cookie 0, cookieverf 0, dircount 8192, maxcount 32768 */
		static const uint32_t want[] = { FH_WORDS, 0, 0, 0, 0, 8192, 32768 };

		assert_args(0, want, 9);
	}
	assert_int_equal(seen.n, 2);
	assert_string_equal(seen.names[0], "a");
	assert_int_equal(seen.fileids[0], 7);
	assert_true(seen.attr[0] && seen.fh[0]);
	assert_string_equal(seen.names[1], "bcdef");
	assert_int_equal(seen.fileids[1], 0x100000009ull);
	assert_false(seen.attr[1] || seen.fh[1]);
}

/* NFS3ERR_* statuses become errno values; a missing name is -ENOENT. */
static void test_errors(void **state)
{
	static const uint32_t noent[] = { 2, 0 };
	static const uint32_t notempty[] = { 66, 0, 0 };
	static const uint32_t stale[] = { 10001 };
	static const uint32_t lookup_args[] = { FH_WORDS, 3, 0x61626300 };
	struct rpcrdma_nfsc_fh fh;
	struct rpcrdma_nfsc_attr attr;

	(void)state;
	script(noent, 2);
	assert_int_equal(rpcrdma_nfsc_lookup(&nc, &nc.nc_root, "abc", &fh, NULL), -ENOENT);
	assert_int_equal(sv.procs[0], NFSPROC3_LOOKUP);
	assert_args(0, lookup_args, 5);
	script(notempty, 3);
	assert_int_equal(rpcrdma_nfsc_rmdir(&nc, &nc.nc_root, "d"), -ENOTEMPTY);
	assert_int_equal(sv.procs[1], NFSPROC3_RMDIR);
	script(stale, 1);
	assert_int_equal(rpcrdma_nfsc_getattr(&nc, &nc.nc_root, &attr), -ESTALE);
	/* Names longer than 255 bytes never leave the client. */
	{
		char longname[300];

		memset(longname, 'x', sizeof(longname) - 1);
		longname[299] = '\0';
		assert_int_equal(rpcrdma_nfsc_remove(&nc, &nc.nc_root, longname),
				 -ENAMETOOLONG);
		assert_int_equal(sv.next, 3);
	}
}

/* READLINK of a 1000-byte target with a buffer of @cap bytes (cap - 1 for
 * the pathname, the last for its NUL); return whether a Write chunk was
 * offered. */
static bool readlink_offers_write_chunk(uint32_t cap)
{
	static const uint32_t res[] = { 0, 0, 1000 };
	static char target[1000], buf[4097];
	struct scripted *sc;
	unsigned n = sv.next;

	assert_true(cap <= sizeof(buf));
	memset(target, 'd', sizeof(target));
	memset(buf, 0, sizeof(buf));
	sc = script(res, 3);
	sc->ddp = (const uint8_t *)target;
	sc->ddp_len = 1000;
	assert_int_equal(rpcrdma_nfsc_readlink(&nc, &nc.nc_root, buf, cap), 0);
	assert_int_equal(strlen(buf), 1000);
	assert_int_equal(buf[999], 'd');
	assert_false(sv.reply_chunk[n]);
	return sv.write_chunk[n];
}

/*
 * READLINK: the pathname is DDP-eligible (RFC 8267 4.2); a Write chunk is
 * offered only when the longest pathname the buffer takes may not come
 * inline.  READLINK3res (RFC 1813 3.3.5) before the pathname: status 4,
 * post_op_attr 4 + 84, length 4: 96 bytes; 3644 bytes of results fit
 * inline (see READ_INLINE_MAX), so a pathname of up to 3548 bytes: a
 * buffer of 3549.  The 1000-byte target arrives either way.
 */
static void test_readlink(void **state)
{
	(void)state;
	assert_true(readlink_offers_write_chunk(4097));
	assert_true(readlink_offers_write_chunk(3550));
	assert_false(readlink_offers_write_chunk(3549));
	assert_false(readlink_offers_write_chunk(3548));
}

/* Pipelined READ: three pieces of rsize 8 (8, 8, 4), two in flight; the
 * second comes back short (5 bytes, no eof) and is completed with one
 * more READ of the 3 missing bytes. */
static void test_read_pipelined(void **state)
{
	static const uint32_t full[] = { 0, 0, 8, 0, 8 };
	static const uint32_t shortr[] = { 0, 0, 5, 0, 5 };
	static const uint32_t last[] = { 0, 0, 4, 1, 4 };
	static const uint32_t rest[] = { 0, 0, 3, 0, 3 };
	struct scripted *sc;
	char buf[24] = { 0 };
	uint64_t nread = 0;

	(void)state;
	nc.nc_rsize = 8;
	sc = script(full, 5);
	sc->ddp = (const uint8_t *)"AAAAAAAA";
	sc->ddp_len = 8;
	sc = script(shortr, 5);
	sc->ddp = (const uint8_t *)"BBBBB";
	sc->ddp_len = 5;
	sc = script(last, 5);
	sc->ddp = (const uint8_t *)"CCCC";
	sc->ddp_len = 4;
	sc = script(rest, 5);
	sc->ddp = (const uint8_t *)"bbb";
	sc->ddp_len = 3;
	assert_int_equal(rpcrdma_nfsc_read_pipelined(&nc, &nc.nc_root, 100, buf, 20, 2,
						     &nread), 0);
	assert_int_equal(nread, 20);
	assert_memory_equal(buf, "AAAAAAAABBBBBbbbCCCC", 20);
	{
		/* offsets 100, 108, 116, then 113 for the 3 missing bytes */
		static const uint32_t a0[] = { FH_WORDS, 0, 100, 8 };
		static const uint32_t a1[] = { FH_WORDS, 0, 108, 8 };
		static const uint32_t a2[] = { FH_WORDS, 0, 116, 4 };
		static const uint32_t a3[] = { FH_WORDS, 0, 113, 3 };

		assert_args(0, a0, 6);
		assert_args(1, a1, 6);
		assert_args(2, a2, 6);
		assert_args(3, a3, 6);
	}
}

/* Pipelined WRITE of 12 bytes in pieces of 8 and 4: the verifier differs
 * between the two replies, which the caller must learn. */
static void test_write_pipelined(void **state)
{
	static const uint32_t r1[] = { 0, 0, 0, 8, 0, 1, 1 };
	static const uint32_t r2[] = { 0, 0, 0, 4, 0, 2, 2 };
	static const uint32_t a0[] = { FH_WORDS, 0, 0, 8, 0, 8, 0x30313233, 0x34353637 };
	static const uint32_t a1[] = { FH_WORDS, 0, 8, 4, 0, 4, 0x38396162 };
	uint8_t verf[8];
	bool changed = false;

	(void)state;
	nc.nc_wsize = 8;
	script(r1, 7);
	script(r2, 7);
	assert_int_equal(rpcrdma_nfsc_write_pipelined(&nc, &nc.nc_root, 0, "0123456789ab", 12,
						      4, 0, verf, &changed), 0);
	assert_true(changed);
	assert_int_equal(sv.next, 2);
	assert_args(0, a0, 10);
	assert_args(1, a1, 9);
	assert_false(sv.read_chunk[0]); /* small: inline */
}

/* The three pieces of 8, 8 and 4 bytes from offset 100 that a stream of
 * 20 bytes with 8-byte calls hands over (fill or drain), in order. */
static void assert_pieces_8_8_4(unsigned calls, const uint64_t *offs,
				const uint32_t *lens)
{
	static const uint64_t want_off[] = { 100, 108, 116 };
	static const uint32_t want_len[] = { 8, 8, 4 };

	assert_int_equal(calls, 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(offs[i], want_off[i]);
		assert_int_equal(lens[i], want_len[i]);
	}
}

/* The source of a streamed WRITE in the tests: bytes of @data from file
 * offset @base; records each piece asked for. */
struct fill_src {
	const char *data;
	uint64_t base;
	unsigned calls, fail_at; /* fail_at: 1-based call that fails, 0 none */
	uint64_t offs[MAX_SCRIPT];
	uint32_t lens[MAX_SCRIPT];
};

static int fill_from(void *arg, uint64_t off, void *buf, uint32_t len)
{
	struct fill_src *f = arg;

	assert_true(f->calls < MAX_SCRIPT);
	f->offs[f->calls] = off;
	f->lens[f->calls] = len;
	if (++f->calls == f->fail_at)
		return -EBADF;
	memcpy(buf, f->data + (off - f->base), len);
	return 0;
}

/* Streamed WRITE of 20 bytes at 100 in pieces of 8 (8, 8, 4), two slots:
 * the second comes back short (5 bytes) and its last 3 bytes are sent
 * again from the same slot (offset 113, "NOP") before the third piece is
 * read; pieces are asked for in file order, each once. */
static void test_write_stream(void **state)
{
	static const uint32_t r8[] = { 0, 0, 0, 8, 0, 1, 1 };
	static const uint32_t r5[] = { 0, 0, 0, 5, 0, 1, 1 };
	static const uint32_t r3[] = { 0, 0, 0, 3, 0, 1, 1 };
	static const uint32_t r4[] = { 0, 0, 0, 4, 0, 1, 1 };
	static const uint32_t a0[] = { FH_WORDS, 0, 100, 8, 0, 8, 0x41424344, 0x45464748 };
	static const uint32_t a1[] = { FH_WORDS, 0, 108, 8, 0, 8, 0x494a4b4c, 0x4d4e4f50 };
	static const uint32_t a2[] = { FH_WORDS, 0, 113, 3, 0, 3, 0x4e4f5000 };
	static const uint32_t a3[] = { FH_WORDS, 0, 116, 4, 0, 4, 0x51525354 };
	struct fill_src f = { .data = "ABCDEFGHIJKLMNOPQRST", .base = 100 };
	uint8_t ring[16], verf[8];
	uint64_t written = 0;
	bool changed = true;

	(void)state;
	nc.nc_wsize = 8;
	script(r8, 7);
	script(r5, 7);
	script(r3, 7);
	script(r4, 7);
	assert_int_equal(rpcrdma_nfsc_write_stream(&nc, &nc.nc_root, 100, 20, ring, 2, 0,
						   fill_from, &f, &written, verf, &changed), 0);
	assert_int_equal(written, 20);
	assert_false(changed);
	assert_memory_equal(verf, "\0\0\0\1\0\0\0\1", 8);
	assert_int_equal(sv.next, 4);
	assert_args(0, a0, 10);
	assert_args(1, a1, 10);
	assert_args(2, a2, 9);
	assert_args(3, a3, 9);
	assert_pieces_8_8_4(f.calls, f.offs, f.lens);
}

/* A streamed WRITE whose verifier moves between two replies (the server
 * restarted) says so; FILE_SYNC is passed through as stable_how 2. */
static void test_write_stream_verf(void **state)
{
	static const uint32_t v1[] = { 0, 0, 0, 8, 2, 1, 1 };
	static const uint32_t v2[] = { 0, 0, 0, 8, 2, 2, 2 };
	static const uint32_t a1[] = { FH_WORDS, 0, 8, 8, 2, 8, 0x69726e6f, 0x70717273 };
	struct fill_src f = { .data = "abcdefghirnopqrs", .base = 0 };
	uint8_t ring[32], verf[8];
	uint64_t written = 0;
	bool changed = false;

	(void)state;
	nc.nc_wsize = 8;
	script(v1, 7);
	script(v2, 7);
	assert_int_equal(rpcrdma_nfsc_write_stream(&nc, &nc.nc_root, 0, 16, ring, 4, 2,
						   fill_from, &f, &written, verf, &changed), 0);
	assert_int_equal(written, 16);
	assert_true(changed);
	assert_memory_equal(verf, "\0\0\0\2\0\0\0\2", 8);
	assert_args(1, a1, 10);
}

/* Errors: a WRITE refused (NOSPC) after one piece was written: -ENOSPC,
 * 8 bytes written for sure; the source failing on its second piece: its
 * error, one WRITE sent, 8 bytes written; a reply that takes no byte:
 * -EIO, nothing written; bad arguments: -EINVAL before any call. */
static void test_write_stream_errors(void **state)
{
	static const uint32_t ok[] = { 0, 0, 0, 8, 0, 1, 1 };
	static const uint32_t nospc[] = { 28, 0, 0 };
	static const uint32_t none[] = { 0, 0, 0, 0, 0, 1, 1 };
	struct fill_src f = { .data = "0123456789abcdefghijklmn", .base = 0 };
	uint8_t ring[16];
	uint64_t written = 99;

	(void)state;
	nc.nc_wsize = 8;
	script(ok, 7);
	script(nospc, 3);
	assert_int_equal(rpcrdma_nfsc_write_stream(&nc, &nc.nc_root, 0, 24, ring, 2, 0,
						   fill_from, &f, &written, NULL, NULL), -ENOSPC);
	assert_int_equal(written, 8);
	assert_int_equal(sv.next, 2);

	memset(&f, 0, sizeof(f));
	f.data = "0123456789abcdefghijklmn";
	f.fail_at = 2;
	script(ok, 7);
	assert_int_equal(rpcrdma_nfsc_write_stream(&nc, &nc.nc_root, 0, 24, ring, 2, 0,
						   fill_from, &f, &written, NULL, NULL), -EBADF);
	assert_int_equal(written, 8);
	assert_int_equal(sv.next, 3); /* one more WRITE */
	assert_int_equal(f.calls, 2);

	memset(&f, 0, sizeof(f));
	f.data = "0123456789abcdefghijklmn";
	script(none, 7);
	assert_int_equal(rpcrdma_nfsc_write_stream(&nc, &nc.nc_root, 0, 24, ring, 2, 0,
						   fill_from, &f, &written, NULL, NULL), -EIO);
	assert_int_equal(written, 0);
	assert_int_equal(sv.next, 4);

	assert_int_equal(rpcrdma_nfsc_write_stream(&nc, &nc.nc_root, 0, 24, ring, 0, 0,
						   fill_from, &f, &written, NULL, NULL), -EINVAL);
	assert_int_equal(rpcrdma_nfsc_write_stream(&nc, &nc.nc_root, 0, 24, ring, 2, 3,
						   fill_from, &f, &written, NULL, NULL), -EINVAL);
	assert_int_equal(rpcrdma_nfsc_write_stream(&nc, &nc.nc_root, 0, 24, NULL, 2, 0,
						   fill_from, &f, &written, NULL, NULL), -EINVAL);
	assert_int_equal(rpcrdma_nfsc_write_stream(&nc, &nc.nc_root, 0, 24, ring, 2, 0,
						   NULL, NULL, &written, NULL, NULL), -EINVAL);
	assert_int_equal(sv.next, 4);
}

/* The taker of a streamed READ in the tests: copies each piece to @out at
 * its offset from @base; records each piece handed over. */
struct drain_sink {
	uint8_t out[64];
	uint64_t base;
	unsigned calls, fail_at; /* fail_at: 1-based call that fails, 0 none */
	uint64_t offs[MAX_SCRIPT];
	uint32_t lens[MAX_SCRIPT];
};

static int drain_to(void *arg, uint64_t off, const void *buf, uint32_t len)
{
	struct drain_sink *d = arg;

	assert_true(d->calls < MAX_SCRIPT);
	d->offs[d->calls] = off;
	d->lens[d->calls] = len;
	if (++d->calls == d->fail_at)
		return -ENOSPC;
	assert_true(off - d->base + len <= sizeof(d->out));
	memcpy(d->out + (off - d->base), buf, len);
	return 0;
}

/* Streamed READ of 20 bytes at 100 in pieces of 8 (8, 8, 4), two in
 * flight: the second comes back short (5 bytes, no eof, RFC 1813 3.3.6)
 * and its 3 missing bytes are asked for again (offset 113) into the same
 * slot before the third piece is asked for; the pieces are handed over in
 * file order, whole, each once. */
static void test_read_stream(void **state)
{
	static const uint32_t full[] = { 0, 0, 8, 0, 8 };
	static const uint32_t shortr[] = { 0, 0, 5, 0, 5 };
	static const uint32_t rest[] = { 0, 0, 3, 0, 3 };
	static const uint32_t last[] = { 0, 0, 4, 0, 4 };
	static const uint32_t a0[] = { FH_WORDS, 0, 100, 8 };
	static const uint32_t a1[] = { FH_WORDS, 0, 108, 8 };
	static const uint32_t a2[] = { FH_WORDS, 0, 113, 3 };
	static const uint32_t a3[] = { FH_WORDS, 0, 116, 4 };
	struct drain_sink d = { .base = 100 };
	struct scripted *sc;
	uint8_t ring[24];
	uint64_t delivered = 0;
	bool eof = true;

	(void)state;
	nc.nc_rsize = 8;
	sc = script(full, 5);
	sc->ddp = (const uint8_t *)"AAAAAAAA";
	sc->ddp_len = 8;
	sc = script(shortr, 5);
	sc->ddp = (const uint8_t *)"BBBBB";
	sc->ddp_len = 5;
	sc = script(rest, 5);
	sc->ddp = (const uint8_t *)"bbb";
	sc->ddp_len = 3;
	sc = script(last, 5);
	sc->ddp = (const uint8_t *)"CCCC";
	sc->ddp_len = 4;
	assert_int_equal(rpcrdma_nfsc_read_stream(&nc, &nc.nc_root, 100, 20, ring, 2,
						  drain_to, &d, &delivered, &eof), 0);
	assert_int_equal(delivered, 20);
	assert_false(eof);
	assert_memory_equal(d.out, "AAAAAAAABBBBBbbbCCCC", 20);
	assert_int_equal(sv.next, 4);
	assert_args(0, a0, 6);
	assert_args(1, a1, 6);
	assert_args(2, a2, 6);
	assert_args(3, a3, 6);
	assert_pieces_8_8_4(d.calls, d.offs, d.lens);
}

/* A streamed READ to end of file (len UINT64_MAX) of an 11-byte file,
 * two in flight: the second READ returns 3 bytes with eof; the stream
 * stops there, 11 bytes delivered, eof said, no third READ.  Then a
 * 16-byte file whose second READ is whole (8 bytes) but says eof: the
 * stream stops there too, without a third READ. */
static void test_read_stream_eof(void **state)
{
	static const uint32_t full[] = { 0, 0, 8, 0, 8 };
	static const uint32_t tail[] = { 0, 0, 3, 1, 3 };
	static const uint32_t full_eof[] = { 0, 0, 8, 1, 8 };
	struct drain_sink d = { .base = 0 };
	struct scripted *sc;
	uint8_t ring[24];
	uint64_t delivered = 0;
	bool eof = false;

	(void)state;
	nc.nc_rsize = 8;
	sc = script(full, 5);
	sc->ddp = (const uint8_t *)"01234567";
	sc->ddp_len = 8;
	sc = script(tail, 5);
	sc->ddp = (const uint8_t *)"89a";
	sc->ddp_len = 3;
	assert_int_equal(rpcrdma_nfsc_read_stream(&nc, &nc.nc_root, 0, UINT64_MAX, ring, 2,
						  drain_to, &d, &delivered, &eof), 0);
	assert_int_equal(delivered, 11);
	assert_true(eof);
	assert_memory_equal(d.out, "0123456789a", 11);
	assert_int_equal(sv.next, 2);
	assert_int_equal(d.calls, 2);
	assert_int_equal(d.lens[1], 3);

	memset(&d, 0, sizeof(d));
	eof = false;
	sc = script(full, 5);
	sc->ddp = (const uint8_t *)"ABCDEFGH";
	sc->ddp_len = 8;
	sc = script(full_eof, 5);
	sc->ddp = (const uint8_t *)"IJKLMNOP";
	sc->ddp_len = 8;
	assert_int_equal(rpcrdma_nfsc_read_stream(&nc, &nc.nc_root, 0, UINT64_MAX, ring, 2,
						  drain_to, &d, &delivered, &eof), 0);
	assert_int_equal(delivered, 16);
	assert_true(eof);
	assert_memory_equal(d.out, "ABCDEFGHIJKLMNOP", 16);
	assert_int_equal(sv.next, 4);
}

/* Errors: a READ refused (NFS3ERR_IO) after one piece came in: -EIO, the
 * 8 bytes before it delivered; the taker failing on its second piece: its
 * error, 8 bytes delivered; a READ of no byte without eof: -EIO, nothing
 * delivered; bad arguments: -EINVAL before any call. */
static void test_read_stream_errors(void **state)
{
	static const uint32_t full[] = { 0, 0, 8, 0, 8 };
	static const uint32_t ioerr[] = { 5, 0 };
	static const uint32_t none[] = { 0, 0, 0, 0, 0 };
	struct drain_sink d = { .base = 0 };
	struct scripted *sc;
	uint8_t ring[24];
	uint64_t delivered = 99;
	unsigned calls;

	(void)state;
	nc.nc_rsize = 8;
	sc = script(full, 5);
	sc->ddp = (const uint8_t *)"01234567";
	sc->ddp_len = 8;
	script(ioerr, 2);
	assert_int_equal(rpcrdma_nfsc_read_stream(&nc, &nc.nc_root, 0, 24, ring, 2, drain_to,
						  &d, &delivered, NULL), -EIO);
	assert_int_equal(delivered, 8);
	assert_memory_equal(d.out, "01234567", 8);
	assert_int_equal(sv.next, 2);

	memset(&d, 0, sizeof(d));
	d.fail_at = 2;
	for (calls = 0; calls < 2; calls++) {
		sc = script(full, 5);
		sc->ddp = (const uint8_t *)"abcdefgh";
		sc->ddp_len = 8;
	}
	assert_int_equal(rpcrdma_nfsc_read_stream(&nc, &nc.nc_root, 0, 24, ring, 2, drain_to,
						  &d, &delivered, NULL), -ENOSPC);
	assert_int_equal(delivered, 8);
	assert_int_equal(d.calls, 2);
	assert_int_equal(sv.next, 4); /* no third READ after the failure */
	calls = sv.next;

	memset(&d, 0, sizeof(d));
	script(none, 5);
	assert_int_equal(rpcrdma_nfsc_read_stream(&nc, &nc.nc_root, 0, 8, ring, 2, drain_to,
						  &d, &delivered, NULL), -EIO);
	assert_int_equal(delivered, 0);
	assert_int_equal(d.calls, 0);
	assert_int_equal(sv.next, calls + 1);

	assert_int_equal(rpcrdma_nfsc_read_stream(&nc, &nc.nc_root, 0, 24, ring, 0, drain_to,
						  &d, &delivered, NULL), -EINVAL);
	assert_int_equal(rpcrdma_nfsc_read_stream(&nc, &nc.nc_root, 0, 24, NULL, 2, drain_to,
						  &d, &delivered, NULL), -EINVAL);
	assert_int_equal(rpcrdma_nfsc_read_stream(&nc, &nc.nc_root, 0, 24, ring, 2, NULL,
						  NULL, &delivered, NULL), -EINVAL);
	assert_int_equal(sv.next, calls + 1);
}

/* SETATTR: sattr3 with mode and size set, uid/gid unchanged, mtime to
 * server time, no guard; PATHCONF decodes its six fields. */
static void test_setattr_pathconf(void **state)
{
	static const uint32_t ok_wcc[] = { 0, 0, 0 };
	static const uint32_t want[] = { FH_WORDS, 1, 0640, 0, 0, 1, 0, 4096, 0, 1, 0 };
	static const uint32_t pcres[] = { 0, 0, 32000, 255, 1, 1, 0, 1 };
	struct rpcrdma_nfsc_sattr sa = { .sa_set_mode = true, .sa_mode = 0100640,
					 .sa_set_size = true, .sa_size = 4096,
					 .sa_mtime_now = true };
	struct rpcrdma_nfsc_pathconf pc;

	(void)state;
	script(ok_wcc, 3);
	assert_int_equal(rpcrdma_nfsc_setattr(&nc, &nc.nc_root, &sa), 0);
	assert_int_equal(sv.procs[0], NFSPROC3_SETATTR);
	assert_args(0, want, 13);
	assert_int_equal(sv.args_len[0], 13 * 4);
	script(pcres, 8);
	assert_int_equal(rpcrdma_nfsc_pathconf(&nc, &nc.nc_root, &pc), 0);
	assert_int_equal(pc.pc_linkmax, 32000);
	assert_int_equal(pc.pc_name_max, 255);
	assert_true(pc.pc_no_trunc && pc.pc_chown_restricted && pc.pc_case_preserving);
	assert_false(pc.pc_case_insensitive);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_small_inline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_write_chunk_boundary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_write_chunk_peer_inline, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_read_inline_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_read_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readdirplus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_pipelined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_pipelined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_stream_verf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_stream_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_stream_eof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_stream_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setattr_pathconf, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
