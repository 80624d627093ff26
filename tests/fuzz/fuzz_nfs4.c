// SPDX-License-Identifier: MIT
/*
 * fuzz_nfs4.c - libFuzzer target over the NFSv4.1 COMPOUND path
 * (rpcrdma_nfs4_server_dispatch()): header, operation decoders, the
 * session rules and the operations themselves, on a scratch export under
 * /tmp with one client and session made at start.
 *
 * Input: a control byte, then operation bytes.  Control bits:
 *   0x08 two bytes after the control byte (big endian) give the reply
 *        buffer's size, 0..65535 bytes, placed at the very end of the
 *        reply allocation so that ASan sees a store past it (issue 33:
 *        replies filled to the last word); without it, 2 MiB;
 *   0x01 the input after the control byte (and size) is the whole
 *        COMPOUND4args (tag, minor version, count, operations);
 *   otherwise a header is made (minor version 1, 1 + (control >> 4)
 *   operations announced) and, with
 *   0x02 a valid SEQUENCE (the slot's next sequence id) goes first, and
 *   0x04 PUTROOTFH and a LOOKUP per component of the export's path follow
 *        it, so that the operations reach real objects.
 * The export holds "big", 8 KiB, for READs that fill any reply buffer.
 * Checks: the dispatch returns SUCCESS (SYSTEM_ERR only when the reply
 * buffer is full); a COMPOUND4res comes back whose result count is at most
 * the operations announced, inside the reply buffer; ASan/UBSan find
 * nothing.  tests/fuzz/nfs4-seeds/ holds READ-then-GETFH COMPOUNDs with
 * reply buffers around 1 KiB (named by their sizes).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpcrdma/nfs4.h>

#include "common/be.h"
#include "nfs4/nfs4_internal.h"

#define F_RES_BYTES (2u << 20)
#define F_ARGS_BYTES 65536u

static struct rpcrdma_nfs3_server *f_srv3;
static struct rpcrdma_nfs4_server *f_srv4;
static char f_dir[64];
static uint8_t f_sid[16];
static uint32_t f_seq = 1;
static uint8_t *f_res, *f_args;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* at exit (the end of -runs or -max_total_time): the scratch export goes */
static void remove_scratch(void)
{
	nftw(f_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct rpcrdma_nfs3_config cfg = { .nc_fcache_idle_ms = RPCRDMA_NFS3_FCACHE_IDLE_NEVER };
	struct rpcrdma_nfs3_exports *xt = NULL;
	struct nfs4_chan_attrs fore = { 0, 1u << 20, 1u << 20, 2048, 64, 8, 0, 0 };
	struct nfs4_exid_res er;
	struct nfs4_cs_res cs;
	uint8_t verf[8] = { 9 }, big[8192];
	char text[160], err[256];
	int fd;

	(void)argc;
	(void)argv;
	strcpy(f_dir, "/tmp/fuzz-nfs4.XXXXXX");
	if (!mkdtemp(f_dir))
		abort();
	chmod(f_dir, 0777);
	atexit(remove_scratch);
	snprintf(text, sizeof(text), "%s 127.0.0.1(rw,no_root_squash)\n", f_dir);
	if (rpcrdma_nfs3_exports_parse("fuzz", text, &xt, err, sizeof(err)))
		abort();
	cfg.nc_max_payload = 1u << 20;
	if (rpcrdma_nfs3_server_create(&cfg, xt, &f_srv3, NULL, 0))
		abort();
	rpcrdma_nfs3_exports_free(xt);
	if (rpcrdma_nfs4_server_create(f_srv3, NULL, &f_srv4))
		abort();
	if (nfs4_exchange_id(f_srv4->s4_state, verf, (const uint8_t *)"fuzz", 4, 0, &er) ||
	    nfs4_create_session(f_srv4->s4_state, er.er_clientid, er.er_sequenceid, 0,
				&fore, &fore, &cs))
		abort();
	memcpy(f_sid, cs.cr_sessionid, 16);
	snprintf(text, sizeof(text), "%s/big", f_dir);
	fd = open(text, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		abort();
	for (unsigned i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)i;
	if (write(fd, big, sizeof(big)) != (ssize_t)sizeof(big))
		abort();
	close(fd);
	f_res = malloc(F_RES_BYTES);
	f_args = malloc(F_ARGS_BYTES);
	if (!f_res || !f_args)
		abort();
	return 0;
}

struct fbuf {
	size_t len;
};

static void put32(struct fbuf *b, uint32_t v)
{
	store_be32(f_args + b->len, v);
	b->len += 4;
}

static void put_str(struct fbuf *b, const char *s, size_t n)
{
	put32(b, (uint32_t)n);
	memcpy(f_args + b->len, s, n);
	b->len += n;
	while (b->len % 4)
		f_args[b->len++] = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_svc_req req;
	struct sockaddr_in *sin = (struct sockaddr_in *)&req.rq_peer;
	struct fbuf b = { 0 };
	uint32_t nops = 0, n;
	size_t cap = F_RES_BYTES;
	uint8_t ctl, *res;
	int ret;

	if (size < 1 || size > F_ARGS_BYTES - 4096)
		return 0;
	ctl = data[0];
	data++;
	size--;
	if (ctl & 0x08) {
		if (size < 2)
			return 0;
		cap = (size_t)data[0] << 8 | data[1];
		data += 2;
		size -= 2;
	}
	res = f_res + F_RES_BYTES - cap;
	if (ctl & 0x01) {
		memcpy(f_args, data, size);
		b.len = size;
		nops = size >= 12 ? load_be32(f_args + 4 + RPCRDMA_XDR_ALIGN(
			load_be32(f_args) > 1024 ? 0 : load_be32(f_args)) + 4) : 0;
	} else {
		uint32_t extra = 0;
		char path[64], *tok, *save = NULL;

		nops = 1 + (ctl >> 4);
		put_str(&b, "", 0);
		put32(&b, 1);
		put32(&b, 0); /* the count, patched below */
		if (ctl & 0x02) {
			put32(&b, OP_SEQUENCE);
			memcpy(f_args + b.len, f_sid, 16);
			b.len += 16;
			put32(&b, f_seq);
			put32(&b, 0);
			put32(&b, 0);
			put32(&b, 0);
			extra++;
			if (ctl & 0x04) {
				put32(&b, OP_PUTROOTFH);
				extra++;
				snprintf(path, sizeof(path), "%s", f_dir);
				for (tok = strtok_r(path, "/", &save); tok;
				     tok = strtok_r(NULL, "/", &save)) {
					put32(&b, OP_LOOKUP);
					put_str(&b, tok, strlen(tok));
					extra++;
				}
			}
		}
		memcpy(f_args + b.len, data, size);
		b.len += size;
		nops += extra;
		store_be32(f_args + 8, nops);
	}
	memset(&req, 0, sizeof(req));
	req.rq_msg.rm_xid = 1;
	req.rq_msg.rm_rpcvers = 2;
	req.rq_msg.rm_prog = 100003;
	req.rq_msg.rm_vers = 4;
	req.rq_msg.rm_proc = 1;
	req.rq_msg.rm_cred_flavor = 1;
	req.rq_msg.rm_has_authsys = true;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rpcrdma_xdr_init(&req.rq_args, f_args, b.len);
	rpcrdma_xdr_init(&req.rq_res, res, cap);
	ret = rpcrdma_nfs4_server_dispatch(&req, f_srv4);
	rpcrdma_nfs3_thread_release();
	if (ret == RPCRDMA_SVC_SYSTEM_ERR)
		return 0;
	if (ret != RPCRDMA_SVC_SUCCESS)
		abort();
	if (req.rq_res.xs_pos < 12 || req.rq_res.xs_pos > cap)
		abort();
	n = load_be32(res + 4);
	if (n > 1024)
		abort(); /* the tag is bounded */
	n = load_be32(res + 8 + RPCRDMA_XDR_ALIGN(n));
	if (n > nops && n > NFS4_COMPOUND_MAX_OPS)
		abort();
	/* a SEQUENCE that took the slot moves the next sequence id on */
	if (!(ctl & 0x01) && (ctl & 0x02) && n >= 1 &&
	    load_be32(res + 12 + 4) == NFS4_OK)
		f_seq++;
	return 0;
}
