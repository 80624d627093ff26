// SPDX-License-Identifier: MIT
/*
 * nfsc_readdir.c - READDIR and READDIRPLUS (RFC 1813 sections 3.3.16,
 * 3.3.17): walk a directory from cookie 0 to eof, one reply at a time,
 * handing each entry to the caller's function.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfsc/nfsc_internal.h"

/*
 * One entry3 or entryplus3 (after its value_follows word) to @fn; the
 * entry's cookie into *@cookie.  Returns what @fn returns, or -EBADMSG.
 */
static int readdir_entry(struct rpcrdma_xdr *x, bool plus, uint64_t *cookie,
			 rpcrdma_nfsc_readdir_fn fn, void *arg)
{
	struct rpcrdma_nfsc_attr attr;
	struct rpcrdma_nfsc_fh fh;
	char name[NFSC_NAME_MAX + 1];
	const uint8_t *np;
	uint64_t fileid;
	uint32_t nlen;
	bool ha = false, hf = false;

	fileid = rpcrdma_xdr_get_u64(x);
	np = rpcrdma_xdr_get_opaque(x, NFSC_NAME_MAX, &nlen);
	*cookie = rpcrdma_xdr_get_u64(x);
	if (plus) {
		ha = nfsc_get_post_op_attr(x, &attr);
		hf = nfsc_get_post_op_fh(x, &fh);
	}
	if (!np || !rpcrdma_xdr_ok(x))
		return -EBADMSG;
	memcpy(name, np, nlen);
	name[nlen] = '\0';
	return fn(name, fileid, ha ? &attr : NULL, hf ? &fh : NULL, arg);
}

static int readdir_common(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			  bool plus, rpcrdma_nfsc_readdir_fn fn, void *arg)
{
	uint32_t proc = plus ? NFSPROC3_READDIRPLUS : NFSPROC3_READDIR;
	uint32_t res_cap = (plus ? NFSC_RDP_MAXCOUNT : NFSC_RDP_DIRCOUNT) + 1024;
	uint8_t cookieverf[8] = { 0 };
	uint64_t cookie = 0;
	struct nfsc_call *k;
	uint8_t *res;
	bool eof = false;
	int rc = 0;

	k = malloc(sizeof(*k));
	res = malloc(res_cap);
	if (!k || !res) {
		rc = -ENOMEM;
		goto out;
	}
	while (!eof) {
		struct rpcrdma_xdr *x = &k->nk_res;
		unsigned entries = 0;
		const uint8_t *v;

		nk_begin(k, proc);
		k->nk_ca.ca_res = res;
		k->nk_ca.ca_res_cap = res_cap;
		nfsc_put_fh(&k->nk_args, dir);
		rpcrdma_xdr_put_u64(&k->nk_args, cookie);
		rpcrdma_xdr_put_fixed(&k->nk_args, cookieverf, 8);
		rpcrdma_xdr_put_u32(&k->nk_args, NFSC_RDP_DIRCOUNT);
		if (plus)
			rpcrdma_xdr_put_u32(&k->nk_args, NFSC_RDP_MAXCOUNT);
		rc = nk_call(nc, k);
		if (rc)
			goto out;
		nfsc_get_post_op_attr(x, NULL);
		v = rpcrdma_xdr_get_fixed(x, 8);
		if (!v) {
			rc = -EBADMSG;
			goto out;
		}
		memcpy(cookieverf, v, 8);
		while (rpcrdma_xdr_get_bool(x)) {
			rc = readdir_entry(x, plus, &cookie, fn, arg);
			if (rc)
				goto out;
			entries++;
		}
		eof = rpcrdma_xdr_get_bool(x);
		if (!rpcrdma_xdr_ok(x)) {
			rc = -EBADMSG;
			goto out;
		}
		if (!eof && !entries) {
			rc = -EIO; /* no progress: would loop for ever */
			goto out;
		}
	}
out:
	free(res);
	free(k);
	return rc;
}

int rpcrdma_nfsc_readdir(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			 rpcrdma_nfsc_readdir_fn fn, void *arg)
{
	return readdir_common(nc, dir, false, fn, arg);
}

int rpcrdma_nfsc_readdirplus(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *dir,
			     rpcrdma_nfsc_readdir_fn fn, void *arg)
{
	return readdir_common(nc, dir, true, fn, arg);
}
