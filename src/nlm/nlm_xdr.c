// SPDX-License-Identifier: MIT
/*
 * nlm_xdr.c - XDR of NLM v4 (XNFS chapter 10, nlm4_* types as in RFC 1813
 * appendix II) and the NSM types the server uses (XNFS chapter 11), with
 * libtirpc's primitives.  Items decode into the fixed buffers of struct
 * nlm_args / nlm_res, bounded by the protocol's maxima; nothing is
 * allocated, so XDR_FREE has nothing to do (and must not free them).
 */
#include <string.h>

#include <rpc/rpc.h>
#undef RPC_MSG_VERSION

#include "nlm_internal.h"

static bool_t xdr_obj(XDR *x, uint8_t *buf, uint32_t *len, u_int max)
{
	char *p = (char *)buf;
	u_int n = *len;

	if (!xdr_bytes(x, &p, &n, max))
		return FALSE;
	*len = n;
	return TRUE;
}

static bool_t xdr_str(XDR *x, char *buf, u_int max)
{
	char *p = buf;

	if (x->x_op == XDR_DECODE)
		buf[0] = 0;
	return xdr_string(x, &p, max);
}

static bool_t xdr_b(XDR *x, bool *v)
{
	bool_t b = *v;

	if (!xdr_bool(x, &b))
		return FALSE;
	*v = b;
	return TRUE;
}

/* nlm4_lock: caller_name, fh, oh, svid, l_offset, l_len */
static bool_t xdr_lock(XDR *x, struct nlm_args *a)
{
	return xdr_str(x, a->a_caller, NLM_MAXSTRLEN) &&
	       xdr_obj(x, a->a_fh, &a->a_fhlen, NLM_FHMAX) &&
	       xdr_obj(x, a->a_oh, &a->a_ohlen, NLM_MAXOH) &&
	       xdr_u_int32_t(x, &a->a_svid) && xdr_u_int64_t(x, &a->a_offset) &&
	       xdr_u_int64_t(x, &a->a_len);
}

static bool_t xdr_cookie(XDR *x, struct nlm_args *a)
{
	return xdr_obj(x, a->a_cookie, &a->a_cookielen, NLM_MAXOH);
}

bool_t nlm_xdr_testargs(XDR *x, struct nlm_args *a)
{
	if (x->x_op == XDR_FREE)
		return TRUE;
	return xdr_cookie(x, a) && xdr_b(x, &a->a_excl) && xdr_lock(x, a);
}

bool_t nlm_xdr_lockargs(XDR *x, struct nlm_args *a)
{
	if (x->x_op == XDR_FREE)
		return TRUE;
	return xdr_cookie(x, a) && xdr_b(x, &a->a_block) && xdr_b(x, &a->a_excl) &&
	       xdr_lock(x, a) && xdr_b(x, &a->a_reclaim) && xdr_int32_t(x, &a->a_state);
}

bool_t nlm_xdr_cancargs(XDR *x, struct nlm_args *a)
{
	if (x->x_op == XDR_FREE)
		return TRUE;
	return xdr_cookie(x, a) && xdr_b(x, &a->a_block) && xdr_b(x, &a->a_excl) &&
	       xdr_lock(x, a);
}

bool_t nlm_xdr_unlockargs(XDR *x, struct nlm_args *a)
{
	if (x->x_op == XDR_FREE)
		return TRUE;
	return xdr_cookie(x, a) && xdr_lock(x, a);
}

/* nlm4_shareargs: cookie, nlm4_share {caller_name, fh, oh, mode, access},
 * reclaim */
bool_t nlm_xdr_shareargs(XDR *x, struct nlm_args *a)
{
	if (x->x_op == XDR_FREE)
		return TRUE;
	return xdr_cookie(x, a) && xdr_str(x, a->a_caller, NLM_MAXSTRLEN) &&
	       xdr_obj(x, a->a_fh, &a->a_fhlen, NLM_FHMAX) &&
	       xdr_obj(x, a->a_oh, &a->a_ohlen, NLM_MAXOH) &&
	       xdr_u_int32_t(x, &a->a_mode) && xdr_u_int32_t(x, &a->a_access) &&
	       xdr_b(x, &a->a_reclaim);
}

/* nlm4_notify: name, state */
bool_t nlm_xdr_notify(XDR *x, struct nlm_args *a)
{
	if (x->x_op == XDR_FREE)
		return TRUE;
	return xdr_str(x, a->a_caller, NLM_MAXSTRLEN) && xdr_int32_t(x, &a->a_state);
}

bool_t nlm_xdr_res_args(XDR *x, struct nlm_args *a)
{
	if (x->x_op == XDR_FREE)
		return TRUE;
	return xdr_cookie(x, a) && xdr_u_int32_t(x, &a->a_stat);
}

static bool_t xdr_res_head(XDR *x, struct nlm_res *r)
{
	return xdr_obj(x, r->r_cookie, &r->r_cookielen, NLM_MAXOH) &&
	       xdr_u_int32_t(x, &r->r_stat);
}

bool_t nlm_xdr_res(XDR *x, struct nlm_res *r)
{
	if (x->x_op == XDR_FREE)
		return TRUE;
	return xdr_res_head(x, r);
}

/* nlm4_testres: cookie, nlm4_testrply: on NLM4_DENIED an nlm4_holder
 * {exclusive, svid, oh, l_offset, l_len} */
bool_t nlm_xdr_testres(XDR *x, struct nlm_res *r)
{
	struct nlm_conflict *c = &r->r_holder;

	if (x->x_op == XDR_FREE)
		return TRUE;
	if (!xdr_res_head(x, r))
		return FALSE;
	if (r->r_stat != NLM4_DENIED)
		return TRUE;
	return xdr_b(x, &c->c_excl) && xdr_u_int32_t(x, &c->c_svid) &&
	       xdr_obj(x, c->c_oh, &c->c_ohlen, NLM_MAXOH) &&
	       xdr_u_int64_t(x, &c->c_offset) && xdr_u_int64_t(x, &c->c_len);
}

bool_t nlm_xdr_shareres(XDR *x, struct nlm_res *r)
{
	if (x->x_op == XDR_FREE)
		return TRUE;
	return xdr_res_head(x, r) && xdr_int32_t(x, &r->r_sequence);
}

bool_t nlm_xdr_void(XDR *x, void *unused)
{
	(void)x;
	(void)unused;
	return TRUE;
}

bool_t nsm_xdr_sm_name(XDR *x, struct nsm_args *a)
{
	if (x->x_op == XDR_FREE)
		return TRUE;
	return xdr_str(x, a->na_name, NSM_MAXSTRLEN);
}

bool_t nsm_xdr_stat_chge(XDR *x, struct nsm_args *a)
{
	if (x->x_op == XDR_FREE)
		return TRUE;
	return xdr_str(x, a->na_name, NSM_MAXSTRLEN) && xdr_int32_t(x, &a->na_state);
}

bool_t nsm_xdr_stat_res(XDR *x, struct nsm_stat_res *r)
{
	if (x->x_op == XDR_FREE)
		return TRUE;
	return xdr_u_int32_t(x, &r->sr_res) && xdr_int32_t(x, &r->sr_state);
}
