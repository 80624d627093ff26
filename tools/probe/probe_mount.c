// SPDX-License-Identifier: MIT
/*
 * probe_mount.c - MOUNT version 3 (RFC 1813 appendix I) over TCP with
 * libtirpc, to learn the root file handle of --export for the cases that
 * need a directory (READDIRPLUS).  The TCP connection is bound to
 * --source when it is given; the port is --mount-port (no portmapper).
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "probe.h"

#define MNT_MAX_FLAVORS 32u

/** mountres3 as far as we need it. */
struct mount_res {
	uint32_t mr_status;
	uint8_t *mr_fh;      /* RPCRDMA_NFS3_FHSIZE bytes, the caller's */
	uint32_t mr_fhlen;
	uint32_t mr_nflavors;
};

static bool_t xdr_dirpath3(XDR *x, char **path)
{
	return xdr_string(x, path, MNT3_PATHLEN);
}

/* mountres3: status; on MNT3_OK fhandle3 (opaque<64>) and auth_flavors<>. */
static bool_t xdr_mount_res(XDR *x, struct mount_res *r)
{
	char *fh = (char *)r->mr_fh;
	u_int len = 0, n, i;
	int flavor;

	if (!xdr_u_int(x, &r->mr_status))
		return FALSE;
	if (r->mr_status != 0)
		return TRUE;
	if (!xdr_bytes(x, &fh, &len, RPCRDMA_NFS3_FHSIZE))
		return FALSE;
	r->mr_fhlen = len;
	if (!xdr_u_int(x, &n) || n > MNT_MAX_FLAVORS)
		return FALSE;
	for (i = 0; i < n; i++)
		if (!xdr_int(x, &flavor))
			return FALSE;
	r->mr_nflavors = n;
	return TRUE;
}

static int mount_connect(const struct probe_opts *opts, struct sockaddr_storage *ss,
			 socklen_t *sslen, char *why, size_t whylen)
{
	struct addrinfo hints, *dst = NULL, *src = NULL;
	char serv[8];
	int fd = -1, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(serv, sizeof(serv), "%u", opts->po_mount_port);
	rc = getaddrinfo(opts->po_server, serv, &hints, &dst);
	if (rc) {
		snprintf(why, whylen, "MOUNT: %s: %s", opts->po_server, gai_strerror(rc));
		return -EINVAL;
	}
	if (opts->po_source) {
		hints.ai_family = dst->ai_family;
		rc = getaddrinfo(opts->po_source, "0", &hints, &src);
		if (rc) {
			snprintf(why, whylen, "MOUNT: %s: %s", opts->po_source, gai_strerror(rc));
			rc = -EINVAL;
			goto out;
		}
	}
	fd = socket(dst->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		goto out_err;
	}
	if (src && bind(fd, src->ai_addr, src->ai_addrlen)) {
		rc = -errno;
		goto out_err;
	}
	if (connect(fd, dst->ai_addr, dst->ai_addrlen)) {
		rc = -errno;
		goto out_err;
	}
	memcpy(ss, dst->ai_addr, dst->ai_addrlen);
	*sslen = dst->ai_addrlen;
	rc = fd;
	goto out;

out_err:
	snprintf(why, whylen, "MOUNT: TCP %s port %u: %s", opts->po_server,
		 opts->po_mount_port, strerror(-rc));
	if (fd >= 0)
		close(fd);
out:
	if (src)
		freeaddrinfo(src);
	freeaddrinfo(dst);
	return rc;
}

/**
 * probe_mount_root - MNT the export and return its root file handle.
 * @opts: server, --export, --mount-port, --source, --timeout-ms.
 * @fh: out: RPCRDMA_NFS3_FHSIZE bytes.
 * @fhlen: out: the handle's length.
 * @why: out: a sentence on failure.
 * @whylen: its size.
 *
 * Return: 0; -ECONNREFUSED (or another connect errno), -EIO when the RPC
 * fails, -EACCES when the server answers with a MOUNT error status.
 */
int probe_mount_root(const struct probe_opts *opts, uint8_t *fh,
		     uint32_t *fhlen, char *why, size_t whylen)
{
	struct sockaddr_storage ss;
	struct mount_res res;
	struct timeval tv;
	struct netbuf nb;
	enum clnt_stat st;
	char *path = (char *)opts->po_export;
	socklen_t sslen = 0;
	CLIENT *cl;
	int fd, rc;

	fd = mount_connect(opts, &ss, &sslen, why, whylen);
	if (fd < 0)
		return fd;
	nb.buf = &ss;
	nb.len = nb.maxlen = sslen;
	cl = clnt_vc_create(fd, &nb, RPCRDMA_MNT_PROGRAM, RPCRDMA_MNT_VERSION, 0, 0);
	if (!cl) {
		snprintf(why, whylen, "MOUNT: %s", clnt_spcreateerror("clnt_vc_create"));
		rc = -EIO;
		goto out_close;
	}
	auth_destroy(cl->cl_auth);
	cl->cl_auth = authsys_create_default();
	memset(&res, 0, sizeof(res));
	res.mr_fh = fh;
	tv.tv_sec = opts->po_timeout_ms / 1000 + 5;
	tv.tv_usec = 0;
	st = clnt_call(cl, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath3, (caddr_t)&path,
		       (xdrproc_t)xdr_mount_res, (caddr_t)&res, tv);
	if (st != RPC_SUCCESS) {
		snprintf(why, whylen, "MOUNT: MNT %s: %s", opts->po_export, clnt_sperrno(st));
		rc = -EIO;
		goto out_destroy;
	}
	if (res.mr_status != 0) {
		snprintf(why, whylen, "MOUNT: MNT %s: status %u", opts->po_export,
			 res.mr_status);
		rc = -EACCES;
		goto out_destroy;
	}
	*fhlen = res.mr_fhlen;
	rc = 0;

out_destroy:
	auth_destroy(cl->cl_auth);
	cl->cl_auth = NULL;
	clnt_destroy(cl);
out_close:
	close(fd);
	return rc;
}
