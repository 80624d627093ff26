// SPDX-License-Identifier: MIT
/*
 * nfs41-holder.c - vm-nfs41-holder, an NFSv4.1 client that takes a lock
 * and then stops renewing its lease, for tests/vm/nfs41-lease.sh.
 *
 *   vm-nfs41-holder SERVER SOURCE PATH FILE DIR
 *       EXCHANGE_ID (owner "vm-nfs41-holder"), CREATE_SESSION, then
 *       SEQUENCE, PUTROOTFH, a LOOKUP per component of PATH, OPEN of FILE
 *       (no create, read and write), and LOCK WRITE_LT of bytes 0..9 with a
 *       new lock-owner.  Then it creates DIR/ready and sends nothing at
 *       all (its lease runs out) until DIR/probe-N appears (N = 1, 2, ...):
 *       it then sends one SEQUENCE and writes its nfsstat4 in decimal to
 *       DIR/status-N.  Killed by the test.
 *
 * The COMPOUNDs are built and their results read by hand (RFC 8881
 * layouts), independently of the server's code.  Exit status 1 on a
 * failure before DIR/ready, 2 for bad usage.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpcrdma/clnt.h>

#define NFS_PROG 100003u
#define NFS_V4 4u
#define OP_CREATE_SESSION 43u
#define OP_EXCHANGE_ID 42u
#define OP_LOCK 12u
#define OP_LOOKUP 15u
#define OP_OPEN 18u
#define OP_PUTROOTFH 24u
#define OP_SEQUENCE 53u
#define WRITE_LT 2u
#define BOTH 3u          /* OPEN4_SHARE_ACCESS_BOTH */

struct buf {
	uint8_t b[8192];
	uint32_t n;
};

static void put32(struct buf *x, uint32_t v)
{
	x->b[x->n++] = (uint8_t)(v >> 24);
	x->b[x->n++] = (uint8_t)(v >> 16);
	x->b[x->n++] = (uint8_t)(v >> 8);
	x->b[x->n++] = (uint8_t)v;
}

static void put64(struct buf *x, uint64_t v)
{
	put32(x, (uint32_t)(v >> 32));
	put32(x, (uint32_t)v);
}

static void putraw(struct buf *x, const void *p, uint32_t len)
{
	memcpy(x->b + x->n, p, len);
	x->n += len;
	while (x->n % 4)
		x->b[x->n++] = 0;
}

static void putstr(struct buf *x, const char *s)
{
	put32(x, (uint32_t)strlen(s));
	putraw(x, s, (uint32_t)strlen(s));
}

/* the reply being read */
static const uint8_t *g_p, *g_end;

static uint32_t get32(void)
{
	uint32_t v;

	if (g_end - g_p < 4)
		return 0xffffffffu;
	v = (uint32_t)g_p[0] << 24 | (uint32_t)g_p[1] << 16 | (uint32_t)g_p[2] << 8 | g_p[3];
	g_p += 4;
	return v;
}

static uint64_t get64(void)
{
	uint64_t hi = get32();

	return hi << 32 | get32();
}

static const uint8_t *getraw(uint32_t len)
{
	const uint8_t *p = g_p;

	if ((uint32_t)(g_end - g_p) < ((len + 3) & ~3u))
		return NULL;
	g_p += (len + 3) & ~3u;
	return p;
}

static void compound_begin(struct buf *x, uint32_t nops)
{
	x->n = 0;
	put32(x, 0);    /* tag "" */
	put32(x, 1);    /* minor version */
	put32(x, nops);
}

static struct rpcrdma_clnt *g_cl;
static uint8_t g_res[65536];
static uint8_t g_sid[16];
static uint32_t g_seq = 1;

/* compound - send @x; its COMPOUND status; the reply is then read from
 * after the result count (g_p). */
static uint32_t compound(const struct buf *x)
{
	struct rpcrdma_clnt_call ca = {
		.ca_prog = NFS_PROG, .ca_vers = NFS_V4, .ca_proc = 1,
		.ca_args = x->b, .ca_args_len = x->n,
		.ca_res = g_res, .ca_res_cap = sizeof(g_res),
	};
	uint32_t status, taglen;
	int rc = rpcrdma_clnt_call(g_cl, &ca);

	if (rc) {
		fprintf(stderr, "vm-nfs41-holder: COMPOUND: %s\n", strerror(-rc));
		return 0xffffffffu;
	}
	g_p = g_res + ca.ca_res_off;
	g_end = g_res + ca.ca_res_len;
	status = get32();
	taglen = get32();
	(void)getraw(taglen);
	(void)get32(); /* result count */
	return status;
}

static void put_sequence(struct buf *x)
{
	put32(x, OP_SEQUENCE);
	putraw(x, g_sid, 16);
	put32(x, g_seq++);
	put32(x, 0);    /* slot */
	put32(x, 0);    /* highest slot */
	put32(x, 0);    /* cachethis */
}

/* expect_op - the next result is @op: its status. */
static uint32_t expect_op(uint32_t op)
{
	uint32_t got = get32(), status = get32();

	if (got != op) {
		fprintf(stderr, "vm-nfs41-holder: result of op %u where %u was expected\n",
			got, op);
		return 0xffffffffu;
	}
	return status;
}

static int fail(const char *what, uint32_t status)
{
	fprintf(stderr, "vm-nfs41-holder: %s: status %u\n", what, status);
	return 1;
}

static void put_chan(struct buf *x, uint32_t slots)
{
	put32(x, 0);        /* headerpadsize */
	put32(x, 8192);     /* maxrequestsize */
	put32(x, 8192);     /* maxresponsesize */
	put32(x, 0);        /* maxresponsesize_cached */
	put32(x, 16);       /* maxoperations */
	put32(x, slots);    /* maxrequests */
	put32(x, 0);        /* no rdma_ird */
}

static int setup(const char *path, const char *file)
{
	struct buf x;
	uint64_t clientid;
	uint32_t csseq, st, nops = 3, n;
	const uint8_t *p;
	uint8_t open_sid[16];
	char comps[1024], *save = NULL, *tok;

	compound_begin(&x, 1);
	put32(&x, OP_EXCHANGE_ID);
	put64(&x, 0x686f6c6465720001ull);  /* verifier */
	putstr(&x, "vm-nfs41-holder");
	put32(&x, 0);                      /* flags */
	put32(&x, 0);                      /* SP4_NONE */
	put32(&x, 0);                      /* no implementation id */
	st = compound(&x);
	if (st || expect_op(OP_EXCHANGE_ID))
		return fail("EXCHANGE_ID", st);
	clientid = get64();
	csseq = get32();

	compound_begin(&x, 1);
	put32(&x, OP_CREATE_SESSION);
	put64(&x, clientid);
	put32(&x, csseq);
	put32(&x, 0);                      /* flags: no back channel */
	put_chan(&x, 1);
	put_chan(&x, 1);
	put32(&x, 0x40000000);             /* cb_program */
	put32(&x, 1);
	put32(&x, 0);                      /* AUTH_NONE for callbacks */
	st = compound(&x);
	if (st || expect_op(OP_CREATE_SESSION))
		return fail("CREATE_SESSION", st);
	p = getraw(16);
	if (!p)
		return fail("CREATE_SESSION result", 0);
	memcpy(g_sid, p, 16);

	/* SEQUENCE, PUTROOTFH, LOOKUP..., OPEN */
	snprintf(comps, sizeof(comps), "%s", path);
	for (tok = strtok_r(comps, "/", &save); tok; tok = strtok_r(NULL, "/", &save))
		nops++;
	compound_begin(&x, nops);
	put_sequence(&x);
	put32(&x, OP_PUTROOTFH);
	snprintf(comps, sizeof(comps), "%s", path);
	save = NULL;
	for (tok = strtok_r(comps, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		put32(&x, OP_LOOKUP);
		putstr(&x, tok);
	}
	put32(&x, OP_OPEN);
	put32(&x, 0);          /* seqid */
	put32(&x, BOTH);       /* share_access */
	put32(&x, 0);          /* share_deny */
	put64(&x, clientid);
	putstr(&x, "holder-open-owner");
	put32(&x, 0);          /* OPEN4_NOCREATE */
	put32(&x, 0);          /* CLAIM_NULL */
	putstr(&x, file);
	st = compound(&x);
	if (st)
		return fail("OPEN COMPOUND", st);
	if (expect_op(OP_SEQUENCE))
		return fail("SEQUENCE", 1);
	(void)getraw(36);
	for (uint32_t i = 0; i + 2 < nops; i++) { /* PUTROOTFH, the LOOKUPs */
		if (expect_op(i ? OP_LOOKUP : OP_PUTROOTFH))
			return fail("PUTROOTFH/LOOKUP", 1);
	}
	if (expect_op(OP_OPEN))
		return fail("OPEN", 1);
	p = getraw(16);
	if (!p)
		return fail("OPEN result", 0);
	memcpy(open_sid, p, 16);

	/* SEQUENCE, PUTROOTFH, LOOKUP..., LOOKUP FILE, LOCK */
	compound_begin(&x, nops);
	put_sequence(&x);
	put32(&x, OP_PUTROOTFH);
	snprintf(comps, sizeof(comps), "%s", path);
	save = NULL;
	for (tok = strtok_r(comps, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		put32(&x, OP_LOOKUP);
		putstr(&x, tok);
	}
	put32(&x, OP_LOOKUP);
	putstr(&x, file);
	put32(&x, OP_LOCK);
	put32(&x, WRITE_LT);
	put32(&x, 0);          /* reclaim */
	put64(&x, 0);          /* offset */
	put64(&x, 10);         /* length */
	put32(&x, 1);          /* new lock-owner */
	put32(&x, 0);          /* open seqid */
	putraw(&x, open_sid, 16);
	put32(&x, 0);          /* lock seqid */
	put64(&x, clientid);
	putstr(&x, "holder-lock-owner");
	/* the component count: SEQUENCE, PUTROOTFH, the LOOKUPs, LOCK */
	n = nops + 1;
	x.b[8] = (uint8_t)(n >> 24);
	x.b[9] = (uint8_t)(n >> 16);
	x.b[10] = (uint8_t)(n >> 8);
	x.b[11] = (uint8_t)n;
	st = compound(&x);
	if (st)
		return fail("LOCK COMPOUND", st);
	return 0;
}

static bool exists(const char *dir, const char *name, unsigned k)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s-%u", dir, name, k);
	return access(path, F_OK) == 0;
}

static void touch(const char *dir, const char *name, unsigned k, const char *text)
{
	char path[512];
	FILE *f;

	if (k)
		snprintf(path, sizeof(path), "%s/%s-%u", dir, name, k);
	else
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	struct rpcrdma_clnt_config cfg = { .cf_max_credits = 4, .cf_timeout_ms = 30000 };
	char text[32];
	int rc;

	if (argc != 6) {
		fprintf(stderr, "usage: vm-nfs41-holder SERVER SOURCE PATH FILE DIR\n");
		return 2;
	}
	cfg.cf_server = argv[1];
	cfg.cf_source = argv[2];
	rc = rpcrdma_clnt_create(&cfg, &g_cl);
	if (rc) {
		fprintf(stderr, "vm-nfs41-holder: connect: %s\n", strerror(-rc));
		return 1;
	}
	if (setup(argv[3], argv[4]))
		return 1;
	touch(argv[5], "ready", 0, "1\n");
	for (unsigned k = 1;; k++) {
		struct buf x;
		uint32_t st;

		/* the test asks within minutes; 10 without a probe: it is
		 * gone, and so is this helper (no spin without a bound) */
		for (unsigned w = 0; !exists(argv[5], "probe", k); w++) {
			if (w == 6000) {
				fprintf(stderr, "vm-nfs41-holder: no probe %u in 600 s\n", k);
				return 1;
			}
			usleep(100 * 1000);
		}
		compound_begin(&x, 1);
		put_sequence(&x);
		st = compound(&x);
		snprintf(text, sizeof(text), "%u\n", st);
		touch(argv[5], "status", k, text);
	}
}
