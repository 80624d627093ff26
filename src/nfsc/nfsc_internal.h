/* SPDX-License-Identifier: MIT */
/*
 * nfsc_internal.h - private to src/nfsc: the NFSv3 client.
 *
 * Owner prefixes: nc_ mount (struct rpcrdma_nfsc), nk_ one call in the
 * making (struct nfsc_call).
 */
#ifndef RPCRDMA_NFSC_INTERNAL_H
#define RPCRDMA_NFSC_INTERNAL_H

#include <stdint.h>

#include <rpcrdma/clnt.h>
#include <rpcrdma/xdr.h>

#define NFSC_PROGRAM 100003u
#define NFSC_VERSION 3u
#define NFSC_MNT_PROGRAM 100005u
#define NFSC_MNT_VERSION 3u

/* NFSv3 procedures (RFC 1813 3.3) */
enum {
	NFSPROC3_NULL = 0, NFSPROC3_GETATTR = 1, NFSPROC3_SETATTR = 2,
	NFSPROC3_LOOKUP = 3, NFSPROC3_ACCESS = 4, NFSPROC3_READLINK = 5,
	NFSPROC3_READ = 6, NFSPROC3_WRITE = 7, NFSPROC3_CREATE = 8,
	NFSPROC3_MKDIR = 9, NFSPROC3_SYMLINK = 10, NFSPROC3_MKNOD = 11,
	NFSPROC3_REMOVE = 12, NFSPROC3_RMDIR = 13, NFSPROC3_RENAME = 14,
	NFSPROC3_LINK = 15, NFSPROC3_READDIR = 16, NFSPROC3_READDIRPLUS = 17,
	NFSPROC3_FSSTAT = 18, NFSPROC3_FSINFO = 19, NFSPROC3_PATHCONF = 20,
	NFSPROC3_COMMIT = 21,
};

struct rpcrdma_nfsc {
	struct rpcrdma_clnt *nc_clnt;
	struct rpcrdma_nfsc_fh nc_root;
	uint32_t nc_rsize, nc_wsize;
	unsigned nc_timeout_ms;
	void *nc_mnt;             /* libtirpc CLIENT * for UMNT, or NULL */
	char *nc_export;
	FILE *nc_log;
	int nc_verbose;
};

/* nfsc_mount.c */
int nfsc_mnt(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_config *cfg);
void nfsc_umnt(struct rpcrdma_nfsc *nc);

/* nfsc_proc.c */
int nfsc_status_errno(uint32_t status);

#endif /* RPCRDMA_NFSC_INTERNAL_H */
