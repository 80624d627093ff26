// SPDX-License-Identifier: MIT
/*
 * nfs3_args.c - decoding the argument types the NFS version 3 procedures share
 * (RFC 1813 section 2): file handles, filenames, times, sattr3.
 */
#include <string.h>

#include "nfs3_internal.h"

const uint8_t *nfs3_get_fh(struct rpcrdma_xdr *xs, uint32_t *len)
{
	return rpcrdma_xdr_get_opaque(xs, RPCRDMA_NFS3_FHSIZE, len);
}

void nfs3_get_name(struct rpcrdma_xdr *xs, struct fs_name *n)
{
	const uint8_t *p = rpcrdma_xdr_get_opaque(xs, FS_WIRE_NAME_MAX, &n->n_len);

	if (p)
		memcpy(n->n_buf, p, n->n_len);
	else
		n->n_len = 0;
	n->n_buf[n->n_len] = '\0';
}

void nfs3_get_time(struct rpcrdma_xdr *xs, struct timespec *ts)
{
	ts->tv_sec = rpcrdma_xdr_get_u32(xs);
	ts->tv_nsec = rpcrdma_xdr_get_u32(xs);
	if (ts->tv_nsec >= 1000000000L)
		xs->xs_err = true;
}

static void get_set_time(struct rpcrdma_xdr *xs, uint32_t *how, struct timespec *ts)
{
	*how = rpcrdma_xdr_get_u32(xs);
	if (*how == NFS3_SET_TO_CLIENT_TIME)
		nfs3_get_time(xs, ts);
	else if (*how > NFS3_SET_TO_CLIENT_TIME)
		xs->xs_err = true;
}

void nfs3_get_sattr(struct rpcrdma_xdr *xs, struct fs_sattr *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_set_mode = rpcrdma_xdr_get_bool(xs);
	if (sa->sa_set_mode)
		sa->sa_mode = rpcrdma_xdr_get_u32(xs);
	sa->sa_set_uid = rpcrdma_xdr_get_bool(xs);
	if (sa->sa_set_uid)
		sa->sa_uid = rpcrdma_xdr_get_u32(xs);
	sa->sa_set_gid = rpcrdma_xdr_get_bool(xs);
	if (sa->sa_set_gid)
		sa->sa_gid = rpcrdma_xdr_get_u32(xs);
	sa->sa_set_size = rpcrdma_xdr_get_bool(xs);
	if (sa->sa_set_size)
		sa->sa_size = rpcrdma_xdr_get_u64(xs);
	get_set_time(xs, &sa->sa_atime_how, &sa->sa_atime);
	get_set_time(xs, &sa->sa_mtime_how, &sa->sa_mtime);
}

/*
 * nfs3_name_check - NFS status for a component name, NFS3_OK when usable.
 * Empty names and names with '/' or NUL could address something other
 * than one entry of the directory.
 */
uint32_t nfs3_name_check(const struct fs_name *n)
{
	if (n->n_len == 0 || memchr(n->n_buf, '/', n->n_len) ||
	    strlen(n->n_buf) != n->n_len)
		return NFS3ERR_ACCES;
	if (n->n_len > 255)
		return NFS3ERR_NAMETOOLONG;
	return NFS3_OK;
}

bool nfs3_is_dot_or_dotdot(const struct fs_name *n)
{
	return strcmp(n->n_buf, ".") == 0 || strcmp(n->n_buf, "..") == 0;
}
