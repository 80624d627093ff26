// SPDX-License-Identifier: MIT
/*
 * nfs3-fh.c - vm-nfs3-fh, a test client for tests/vm/exports.sh that sends
 * NFSv3 calls with file handles of its choice over a mount of another
 * export, and prints the raw nfsstat3 the server answers (the client
 * library maps BADHANDLE and STALE to one errno).
 *
 *   vm-nfs3-fh save   SERVER SOURCE MPORT EXPORT FILE [NAME]
 *       mount EXPORT, write its root handle (with NAME: the handle of
 *       NAME, a path under the root, by LOOKUP) to FILE (hex), unmount
 *   vm-nfs3-fh getattr SERVER SOURCE MPORT EXPORT FILE [ID]
 *       mount EXPORT; GETATTR of the handle in FILE (bytes 2..3, the
 *       export id, replaced by ID when given); print the status
 *   vm-nfs3-fh rename SERVER SOURCE MPORT EXPORT FILE NAME
 *       mount EXPORT; RENAME NAME from the directory handle in FILE to
 *       NAME in EXPORT's root; print the status
 *   vm-nfs3-fh read SERVER SOURCE MPORT EXPORT FILE OUT
 *       mount EXPORT; GETATTR of the handle in FILE, then READ all of its
 *       bytes (the size GETATTR gave) into the local file OUT; print 0,
 *       or the client library's error of the call that failed and exit 1
 *       (cephfs-two-gateways: a handle one gateway gave, used on another)
 *
 * Exit status 0 when the call was answered (whatever its status), 1 when
 * it was not, 2 for bad usage.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpcrdma/clnt.h>

#include "nfsc/nfsc_internal.h"

static int usage(void)
{
	fprintf(stderr, "usage: vm-nfs3-fh save|getattr|rename|read SERVER SOURCE MPORT EXPORT FILE [ID|NAME|OUT]\n");
	return 2;
}

/*
 * read_all - GETATTR @fh on @nc, READ its whole size into the file @out
 * (created or truncated); print 0, or the failing call's error (the
 * client library's errno: STALE and BADHANDLE are both ESTALE).
 * Return: 0 when all was read, -1 when not.
 */
static long read_all(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
		     const char *out)
{
	uint32_t cap = rpcrdma_nfsc_rsize(nc), got;
	struct rpcrdma_nfsc_attr attr;
	uint64_t off = 0;
	long ret = -1;
	bool eof = false;
	char *buf;
	FILE *f;
	int rc;

	rc = rpcrdma_nfsc_getattr(nc, fh, &attr);
	if (rc) {
		printf("GETATTR: %s\n", strerror(-rc));
		return -1;
	}
	buf = malloc(cap);
	f = fopen(out, "w");
	if (!buf || !f)
		goto out;
	while (off < attr.at_size && !eof) {
		rc = rpcrdma_nfsc_read(nc, fh, off, buf, cap, &got, &eof);
		if (rc) {
			printf("READ at %llu: %s\n", (unsigned long long)off, strerror(-rc));
			goto out;
		}
		if (!got && !eof)
			goto out;
		if (fwrite(buf, 1, got, f) != got)
			goto out;
		off += got;
	}
	printf("0\n");
	ret = 0;
out:
	if (f && fclose(f))
		ret = -1;
	free(buf);
	return ret;
}

static int read_fh(const char *file, struct rpcrdma_nfsc_fh *fh)
{
	FILE *f = fopen(file, "r");
	unsigned v;

	if (!f)
		return -errno;
	fh->fh_len = 0;
	while (fh->fh_len < RPCRDMA_NFSC_FHSIZE && fscanf(f, "%2x", &v) == 1)
		fh->fh_data[fh->fh_len++] = (uint8_t)v;
	fclose(f);
	return fh->fh_len ? 0 : -EINVAL;
}

/* call - make @k on @nc; print and return the nfsstat3 (-1: no answer). */
static long call(struct rpcrdma_nfsc *nc, struct nfsc_call *k)
{
	struct rpcrdma_clnt_call *ca = &k->nk_ca;
	const uint8_t *p;
	int rc = nk_args_done(nc, k);

	if (!rc)
		rc = rpcrdma_clnt_call(nc->nc_clnts[0], ca);
	if (rc || ca->ca_res_len < ca->ca_res_off + 4) {
		fprintf(stderr, "vm-nfs3-fh: call failed: %s\n", strerror(rc ? -rc : EBADMSG));
		return -1;
	}
	p = (const uint8_t *)ca->ca_res + ca->ca_res_off;
	printf("%u\n", (unsigned)p[0] << 24 | (unsigned)p[1] << 16 |
			       (unsigned)p[2] << 8 | p[3]);
	return 0;
}

int main(int argc, char **argv)
{
	struct rpcrdma_nfsc_config cfg = { 0 };
	struct rpcrdma_nfsc *nc = NULL;
	struct rpcrdma_nfsc_fh fh, root;
	struct nfsc_call *k = NULL;
	const char *cmd;
	long ret = -1;
	int rc;

	if (argc < 7)
		return usage();
	cmd = argv[1];
	cfg.nf_server = argv[2];
	cfg.nf_source = argv[3];
	cfg.nf_mount_port = (uint16_t)atoi(argv[4]);
	cfg.nf_export = argv[5];
	cfg.nf_timeout_ms = 20000;
	rc = rpcrdma_nfsc_mount(&cfg, &nc);
	if (rc) {
		fprintf(stderr, "vm-nfs3-fh: mount %s:%s: %s\n", argv[2], argv[5],
			strerror(-rc));
		return 1;
	}
	rpcrdma_nfsc_root(nc, &root);
	if (!strcmp(cmd, "save") && (argc == 7 || argc == 8)) {
		FILE *f;

		fh = root;
		if (argc == 8) {
			rc = rpcrdma_nfsc_lookup_path(nc, argv[7], &fh, NULL);
			if (rc) {
				fprintf(stderr, "vm-nfs3-fh: lookup %s: %s\n", argv[7],
					strerror(-rc));
				goto out;
			}
		}
		f = fopen(argv[6], "w");
		if (f) {
			for (uint32_t i = 0; i < fh.fh_len; i++)
				fprintf(f, "%02x", fh.fh_data[i]);
			fputc('\n', f);
			ret = fclose(f) ? -1 : 0;
		}
	} else if (!strcmp(cmd, "getattr") && (argc == 7 || argc == 8)) {
		if (read_fh(argv[6], &fh) || fh.fh_len < 4)
			goto out;
		if (argc == 8) {
			unsigned id = (unsigned)atoi(argv[7]);

			fh.fh_data[2] = (uint8_t)(id >> 8);
			fh.fh_data[3] = (uint8_t)id;
		}
		k = nk_new(NFSPROC3_GETATTR);
		if (!k)
			goto out;
		nfsc_put_fh(&k->nk_args, &fh);
		ret = call(nc, k);
	} else if (!strcmp(cmd, "rename") && argc == 8) {
		if (read_fh(argv[6], &fh))
			goto out;
		k = nk_new(NFSPROC3_RENAME);
		if (!k)
			goto out;
		nfsc_put_dirop(&k->nk_args, &fh, argv[7]);
		nfsc_put_dirop(&k->nk_args, &root, argv[7]);
		ret = call(nc, k);
	} else if (!strcmp(cmd, "read") && argc == 8) {
		if (read_fh(argv[6], &fh))
			goto out;
		ret = read_all(nc, &fh, argv[7]);
	} else {
		rpcrdma_nfsc_umount(nc);
		return usage();
	}
out:
	free(k);
	rpcrdma_nfsc_umount(nc);
	return ret ? 1 : 0;
}
