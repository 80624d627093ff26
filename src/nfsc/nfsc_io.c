// SPDX-License-Identifier: MIT
/*
 * nfsc_io.c - the NFSv3 procedures that move file data (RFC 1813
 * sections 3.3.5-3.3.7, 3.3.21): READ, WRITE, READLINK and COMMIT.  READ
 * and READLINK data are placed by the server straight into the caller's
 * buffer (Write chunk), WRITE data read from it (Read chunk), as RFC 8267
 * marks them DDP-eligible.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfsc/nfsc_internal.h"

/* READ3args for a begun call; the data lands in @buf[0 .. @count). */
void nk_put_read(struct nfsc_call *k, const struct rpcrdma_nfsc_fh *fh,
		 uint64_t offset, void *buf, uint32_t count)
{
	nfsc_put_fh(&k->nk_args, fh);
	rpcrdma_xdr_put_u64(&k->nk_args, offset);
	rpcrdma_xdr_put_u32(&k->nk_args, count);
	k->nk_ca.ca_rddp = buf;
	k->nk_ca.ca_rddp_cap = count;
	/* READ3res (RFC 1813 3.3.6): status, post_op_attr, count, eof, data<>. */
	k->nk_ddp_res_max = 4 + NFSC_POST_OP_ATTR_MAX + 4 + 4 + 4 +
			    RPCRDMA_XDR_ALIGN((uint64_t)count);
}

/* WRITE3args for a begun call; the data<> length word ends ca_args. */
void nk_put_write(struct nfsc_call *k, const struct rpcrdma_nfsc_fh *fh,
		  uint64_t offset, const void *buf, uint32_t count, uint32_t stable)
{
	nfsc_put_fh(&k->nk_args, fh);
	rpcrdma_xdr_put_u64(&k->nk_args, offset);
	rpcrdma_xdr_put_u32(&k->nk_args, count);
	rpcrdma_xdr_put_u32(&k->nk_args, stable);
	rpcrdma_xdr_put_u32(&k->nk_args, count);
	k->nk_ca.ca_ddp = buf;
	k->nk_ca.ca_ddp_len = count;
}

/*
 * READ3resok: the byte count into *@got and eof into *@eof; the data is
 * in @buf (at most @cap bytes) afterwards.  -EBADMSG when short, when
 * count and the data's length disagree, or when the data does not fit.
 */
int nk_get_read(struct nfsc_call *k, void *buf, uint32_t cap, uint32_t *got,
		bool *eof)
{
	uint32_t len;

	nfsc_get_post_op_attr(&k->nk_res, NULL);
	*got = rpcrdma_xdr_get_u32(&k->nk_res);
	*eof = rpcrdma_xdr_get_bool(&k->nk_res);
	len = rpcrdma_xdr_get_u32(&k->nk_res);
	if (!rpcrdma_xdr_ok(&k->nk_res) || *got != len)
		return -EBADMSG;
	return nfsc_take_ddp(k, len, buf, cap);
}

/*
 * WRITE3resok: the byte count into *@written and *@verf pointed at the
 * 8-byte write verifier in the results.  -EBADMSG when short or when more
 * than @count bytes are reported written.
 */
int nk_get_write(struct nfsc_call *k, uint32_t count, uint32_t *written,
		 const uint8_t **verf)
{
	nfsc_skip_wcc(&k->nk_res);
	*written = rpcrdma_xdr_get_u32(&k->nk_res);
	rpcrdma_xdr_get_u32(&k->nk_res); /* committed */
	*verf = rpcrdma_xdr_get_fixed(&k->nk_res, 8);
	if (!*verf || *written > count)
		return -EBADMSG;
	return 0;
}

int rpcrdma_nfsc_read(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
		      uint64_t offset, void *buf, uint32_t count,
		      uint32_t *nread, bool *eof)
{
	struct nfsc_call *k;
	uint32_t got;
	bool e;
	int rc;

	if (count > nc->nc_rsize || (count && !buf))
		return -EINVAL;
	k = nk_new(NFSPROC3_READ);
	if (!k)
		return -ENOMEM;
	nk_put_read(k, fh, offset, buf, count);
	rc = nk_call(nc, k);
	if (!rc)
		rc = nk_get_read(k, buf, count, &got, &e);
	if (!rc) {
		*nread = got;
		if (eof)
			*eof = e;
	}
	free(k);
	return rc;
}

int rpcrdma_nfsc_write(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
		       uint64_t offset, const void *buf, uint32_t count,
		       uint32_t stable, uint32_t *written, uint8_t verf[8])
{
	struct nfsc_call *k;
	const uint8_t *v;
	int rc;

	if (count > nc->nc_wsize || (count && !buf) || stable > 2)
		return -EINVAL;
	k = nk_new(NFSPROC3_WRITE);
	if (!k)
		return -ENOMEM;
	nk_put_write(k, fh, offset, buf, count, stable);
	rc = nk_call(nc, k);
	if (!rc)
		rc = nk_get_write(k, count, written, &v);
	if (!rc && verf)
		memcpy(verf, v, 8);
	free(k);
	return rc;
}

int rpcrdma_nfsc_readlink(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			  char *buf, uint32_t cap)
{
	struct nfsc_call *k;
	uint32_t len;
	int rc;

	if (cap < 2)
		return -EINVAL;
	k = nk_new(NFSPROC3_READLINK);
	if (!k)
		return -ENOMEM;
	nfsc_put_fh(&k->nk_args, fh);
	k->nk_ca.ca_rddp = buf;
	k->nk_ca.ca_rddp_cap = cap - 1;
	/* READLINK3res (RFC 1813 3.3.5): status, post_op_attr, nfspath3. */
	k->nk_ddp_res_max = 4 + NFSC_POST_OP_ATTR_MAX + 4 +
			    RPCRDMA_XDR_ALIGN((uint64_t)cap - 1);
	rc = nk_call(nc, k);
	if (!rc) {
		nfsc_get_post_op_attr(&k->nk_res, NULL);
		len = rpcrdma_xdr_get_u32(&k->nk_res);
		if (!rpcrdma_xdr_ok(&k->nk_res))
			rc = -EBADMSG;
		else if (len >= cap)
			rc = -ENAMETOOLONG;
		else
			rc = nfsc_take_ddp(k, len, buf, cap - 1);
		if (!rc)
			buf[len] = '\0';
	}
	free(k);
	return rc;
}

int rpcrdma_nfsc_commit(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh,
			uint64_t offset, uint32_t count, uint8_t verf[8])
{
	struct nfsc_call *k = nk_new(NFSPROC3_COMMIT);
	const uint8_t *v;
	int rc;

	if (!k)
		return -ENOMEM;
	nfsc_put_fh(&k->nk_args, fh);
	rpcrdma_xdr_put_u64(&k->nk_args, offset);
	rpcrdma_xdr_put_u32(&k->nk_args, count);
	rc = nk_call(nc, k);
	if (!rc) {
		nfsc_skip_wcc(&k->nk_res);
		v = rpcrdma_xdr_get_fixed(&k->nk_res, 8);
		if (!v)
			rc = -EBADMSG;
		else if (verf)
			memcpy(verf, v, 8);
	}
	free(k);
	return rc;
}
