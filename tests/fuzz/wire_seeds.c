// SPDX-License-Identifier: MIT
/*
 * wire_seeds.c - write a seed corpus for fuzz_wire into a directory.
 *
 * usage: wire_seeds DIR
 * The valid seeds are built with the encoder; the invalid ones are valid
 * seeds with one field broken (version, procedure, a count, a position)
 * or cut short.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rpcrdma/wire.h>

static const char *dir;
static unsigned int nseeds;

static int save(const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%02u-%s", dir, nseeds++, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static struct rpcrdma_hdr h;

static void seg(uint32_t handle, uint32_t length, uint64_t offset)
{
	h.rh_segs[h.rh_nsegs++] = (struct rpcrdma_segment){ handle, length, offset };
}

/* Encode h, append @body, save it valid and in broken variants. */
static int emit(const char *name, const void *body, size_t body_len)
{
	static uint8_t buf[8192];
	char vname[128];
	int n = rpcrdma_wire_encode(buf, sizeof(buf), &h);
	size_t len;

	if (n < 0)
		return -1;
	memcpy(buf + n, body, body_len);
	len = (size_t)n + body_len;
	if (save(name, buf, len))
		return -1;
	snprintf(vname, sizeof(vname), "%s-cut", name);
	if (save(vname, buf, (size_t)n - 4))
		return -1;
	put32(buf + 4, 2);
	snprintf(vname, sizeof(vname), "%s-vers2", name);
	if (save(vname, buf, len))
		return -1;
	put32(buf + 4, 1);
	put32(buf + 12, RDMA_DONE);
	snprintf(vname, sizeof(vname), "%s-done", name);
	if (save(vname, buf, len))
		return -1;
	put32(buf + 12, h.rh_proc);
	if (n > 28) {
		/* a count or position word made huge */
		put32(buf + 24, 0x10000001);
		snprintf(vname, sizeof(vname), "%s-huge", name);
		if (save(vname, buf, len))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	/* An NFSv3 GETATTR call header, AUTH_NONE, and a 12-byte handle. */
	static const uint8_t call[] = {
		0, 0, 0, 0x11, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0x86, 0xa3,
		0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12,
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
	};
	static const uint8_t pd[8] = { 0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3 };
	uint8_t err[32];
	int n;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	dir = argv[1];

	memset(&h, 0, sizeof(h));
	h.rh_xid = 1;
	h.rh_credits = 128;
	h.rh_proc = RDMA_MSG;
	if (emit("msg-min", call, sizeof(call)))
		return 1;

	/* WRITE-like: a data Read chunk at the end of the inline body. */
	seg(0x100, 8192, 0x10000);
	seg(0x101, 100, 0x20000);
	h.rh_nread = 1;
	h.rh_read[0] = (struct rpcrdma_chunk){ sizeof(call), 0, 2, 8292 };
	if (emit("msg-read", call, sizeof(call)))
		return 1;

	/* READ-like: a Write chunk and a Reply chunk. */
	memset(&h, 0, sizeof(h));
	h.rh_xid = 2;
	h.rh_credits = 128;
	h.rh_proc = RDMA_MSG;
	for (n = 0; n < 16; n++)
		seg(0x200 + n, 4096, 0x100000ull * n);
	h.rh_nwrite = 1;
	h.rh_write[0] = (struct rpcrdma_chunk){ 0, 0, 16, 65536 };
	seg(0x300, 1024, 0xffffffff00000000ull);
	h.rh_has_reply = true;
	h.rh_reply = (struct rpcrdma_chunk){ 0, 16, 1, 1024 };
	if (emit("msg-write-reply", call, sizeof(call)))
		return 1;

	/* Long call: RDMA_NOMSG with a position-zero chunk. */
	memset(&h, 0, sizeof(h));
	h.rh_xid = 3;
	h.rh_credits = 1;
	h.rh_proc = RDMA_NOMSG;
	seg(0x400, 2048, 0x4000);
	h.rh_nread = 1;
	h.rh_read[0] = (struct rpcrdma_chunk){ 0, 0, 1, 2048 };
	seg(0x401, 4096, 0x8000);
	h.rh_has_reply = true;
	h.rh_reply = (struct rpcrdma_chunk){ 0, 1, 1, 4096 };
	if (emit("nomsg-call", NULL, 0))
		return 1;

	/* Long reply: RDMA_NOMSG with only a Reply chunk. */
	h.rh_nread = 0;
	h.rh_reply.rc_first = 1;
	if (emit("nomsg-reply", NULL, 0))
		return 1;

	n = rpcrdma_wire_encode_error(err, sizeof(err), 4, 64, ERR_VERS);
	if (n < 0 || save("err-vers", err, (size_t)n))
		return 1;
	n = rpcrdma_wire_encode_error(err, sizeof(err), 5, 64, ERR_CHUNK);
	if (n < 0 || save("err-chunk", err, (size_t)n))
		return 1;
	if (save("twelve", err, 12) || save("private", pd, sizeof(pd)) ||
	    save("rpc-call", call, sizeof(call)))
		return 1;
	return 0;
}
