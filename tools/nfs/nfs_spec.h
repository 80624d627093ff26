/* SPDX-License-Identifier: MIT */
/*
 * nfs_spec.h - private to tools/nfs: the server-and-export argument of
 * rpcrdma-nfs, as SERVER:/export, [IPv6]:/export, or a URL of the form
 * libnfs's tools take, nfs://SERVER[:PORT]/path[?option=value&...].
 */
#ifndef RPCRDMA_TOOLS_NFS_SPEC_H
#define RPCRDMA_TOOLS_NFS_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A parsed argument; strings owned (nfs_spec_free). */
struct nfs_spec {
	char *ns_host;       /* name or address, IPv6 without its brackets */
	char *ns_path;       /* absolute, percent-decoded, no '//' nor trailing '/' */
	uint16_t ns_port;    /* NFS/RDMA port from the URL (:PORT or nfsport=), 0 */
	uint16_t ns_mount_port; /* mountport= of the URL, 0 */
	bool ns_url;         /* given as nfs://: ns_path may go below the export */
};

/*
 * nfs_spec_parse - parse @arg into *@out.
 *
 * SERVER:/export and [ADDR]:/export are taken as they are (the export is
 * everything after the colon).  A URL (scheme "nfs", any case) is
 * nfs://HOST[:PORT]/PATH[?OPT=VAL[&OPT=VAL]...] (RFC 3986 syntax): HOST a
 * name, an IPv4 address or [IPv6]; PORT 1..65535; PATH absolute, %XX
 * escapes decoded (%00 refused), repeated and trailing '/' dropped; options
 * nfsport=N (the same as :PORT; both must agree) and mountport=N, as
 * libnfs names them.  No user information, fragment or other option.
 *
 * Return: 0, or -EINVAL with a one-line reason in @err (@errlen bytes,
 * NUL-terminated) and nothing allocated; -ENOMEM.
 */
int nfs_spec_parse(const char *arg, struct nfs_spec *out, char *err, size_t errlen);

/* nfs_spec_free - release the strings of @s (zeroed after). */
void nfs_spec_free(struct nfs_spec *s);

/*
 * nfs_spec_join - @base (absolute, from nfs_spec_parse or "/") followed by
 * @rel, a path below it ('/' at its start or not, "" or "/" for @base
 * itself), as one absolute path without '//' (malloc'd), or NULL (no memory).
 */
char *nfs_spec_join(const char *base, const char *rel);

#endif /* RPCRDMA_TOOLS_NFS_SPEC_H */
