// SPDX-License-Identifier: MIT
/*
 * nfs4-exid.c - vm-nfs4-exid, the intruder of tests/vm/hostile/nfs4.sh:
 * one NFSv4.1 EXCHANGE_ID (RFC 8881 18.35) from a source address and
 * AUTH_SYS uid of its choice (gid the same, this host's name as the
 * machine name), with a client owner read from a file and a verifier of
 * its choice, and nothing after it (no CREATE_SESSION).
 *
 *   vm-nfs4-exid SERVER SOURCE UID OWNERFILE VERIFIER
 *       VERIFIER: 16 hex digits.  Prints the COMPOUND's status, and on
 *       NFS4_OK the client id and eir_flags (hex): "STATUS CLIENTID FLAGS".
 *
 * Exit status 0 when the call was answered (whatever its status), 1 when
 * it was not, 2 for bad usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpcrdma/clnt.h>

/* RFC 8881: the NFS program, COMPOUND, EXCHANGE_ID, SP4_NONE */
#define EXID_NFS_PROG 100003u
#define EXID_OP 42u
#define EXID_OWNER_MAX 1024u

static int usage(void)
{
	fprintf(stderr, "usage: vm-nfs4-exid SERVER SOURCE UID OWNERFILE VERIFIER\n");
	return 2;
}

static void put32(uint8_t *b, size_t *pos, uint32_t v)
{
	b[(*pos)++] = (uint8_t)(v >> 24);
	b[(*pos)++] = (uint8_t)(v >> 16);
	b[(*pos)++] = (uint8_t)(v >> 8);
	b[(*pos)++] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int main(int argc, char **argv)
{
	struct rpcrdma_clnt_config cfg = { 0 };
	struct rpcrdma_clnt_call ca = { 0 };
	struct rpcrdma_clnt *cl = NULL;
	uint8_t owner[EXID_OWNER_MAX], args[EXID_OWNER_MAX + 64], res[4096];
	const uint8_t *p, *end;
	unsigned long long verf;
	size_t olen, pos = 0;
	uint32_t status, taglen;
	char *e;
	FILE *f;
	int rc;

	if (argc != 6)
		return usage();
	verf = strtoull(argv[5], &e, 16);
	if (strlen(argv[5]) != 16 || *e)
		return usage();
	f = fopen(argv[4], "rb");
	if (!f) {
		fprintf(stderr, "vm-nfs4-exid: %s: %s\n", argv[4], strerror(errno));
		return 2;
	}
	olen = fread(owner, 1, sizeof(owner), f);
	fclose(f);
	if (!olen)
		return usage();

	put32(args, &pos, 0);            /* tag: empty */
	put32(args, &pos, 1);            /* minorversion */
	put32(args, &pos, 1);            /* one operation */
	put32(args, &pos, EXID_OP);
	put32(args, &pos, (uint32_t)(verf >> 32));
	put32(args, &pos, (uint32_t)verf);
	put32(args, &pos, (uint32_t)olen);
	memcpy(args + pos, owner, olen);
	pos += olen;
	while (pos % 4)
		args[pos++] = 0;
	put32(args, &pos, 0);            /* eia_flags */
	put32(args, &pos, 0);            /* SP4_NONE */
	put32(args, &pos, 0);            /* no implementation id */

	cfg.cf_server = argv[1];
	cfg.cf_source = argv[2];
	cfg.cf_ids_set = true;
	cfg.cf_uid = cfg.cf_gid = (uint32_t)strtoul(argv[3], NULL, 10);
	cfg.cf_timeout_ms = 20000;
	rc = rpcrdma_clnt_create(&cfg, &cl);
	if (rc) {
		fprintf(stderr, "vm-nfs4-exid: connect: %s\n", strerror(-rc));
		return 1;
	}
	ca.ca_prog = EXID_NFS_PROG;
	ca.ca_vers = 4;
	ca.ca_proc = 1;
	ca.ca_args = args;
	ca.ca_args_len = (uint32_t)pos;
	ca.ca_res = res;
	ca.ca_res_cap = sizeof(res);
	rc = rpcrdma_clnt_call(cl, &ca);
	if (rc) {
		fprintf(stderr, "vm-nfs4-exid: call: %s\n", strerror(-rc));
		rpcrdma_clnt_destroy(cl);
		return 1;
	}
	/* COMPOUND4res: status, tag, count, then resop: op, status, body */
	p = res + ca.ca_res_off;
	end = res + ca.ca_res_len;
	if (end - p < 8)
		goto bad;
	status = get32(p);
	taglen = (get32(p + 4) + 3u) & ~3u;
	p += 8;
	if ((size_t)(end - p) < (size_t)taglen + 12u)
		goto bad;
	p += taglen + 4;
	if (get32(p) != EXID_OP)
		goto bad;
	p += 8;
	if (status) {
		printf("%u\n", status);
	} else {
		if (end - p < 16)
			goto bad;
		printf("0 %08x%08x %x\n", get32(p), get32(p + 4), get32(p + 12));
	}
	rpcrdma_clnt_destroy(cl);
	return 0;
bad:
	fprintf(stderr, "vm-nfs4-exid: a reply that does not decode\n");
	rpcrdma_clnt_destroy(cl);
	return 1;
}
