// SPDX-License-Identifier: MIT
/*
 * rpc_msg.c - the ONC RPC message header (RFC 5531 section 9): call
 * header with credential and verifier, reply header with its status.
 * AUTH_SYS credential bodies are parsed per RFC 5531 appendix A.
 */
#include <errno.h>
#include <string.h>

#include <rpcrdma/wire.h>

#include "wire_internal.h"

#define XDR_ROUNDUP(n) (((size_t)(n) + 3u) & ~(size_t)3u)

/* opaque_auth: flavor, then opaque body<400> (RFC 5531 8.2). */
static int take_opaque_auth(struct wire_cursor *wc, uint32_t *flavor,
			    uint32_t *len, const uint8_t **body)
{
	const uint8_t *p;
	uint32_t n;

	if (wc_u32(wc, flavor) || wc_u32(wc, &n))
		return -EBADMSG;
	if (n > RPC_AUTH_MAX_BODY)
		return -EBADMSG;
	p = wc_take(wc, XDR_ROUNDUP(n));
	if (!p)
		return -EBADMSG;
	*len = n;
	*body = p;
	return 0;
}

/*
 * authsys_parms: stamp, machinename<255>, uid, gid, gids<16>.  The body
 * must be exactly @len bytes.  Return: true when well formed.
 */
static bool parse_authsys(const uint8_t *body, uint32_t len,
			  struct rpcrdma_rpc_authsys *as)
{
	struct wire_cursor wc = { .wc_base = body, .wc_len = len, .wc_pos = 0 };
	const uint8_t *p;
	uint32_t i;

	if (wc_u32(&wc, &as->as_stamp) || wc_u32(&wc, &as->as_namelen) ||
	    as->as_namelen > RPC_AUTH_SYS_MAX_NAME)
		return false;
	p = wc_take(&wc, XDR_ROUNDUP(as->as_namelen));
	if (!p)
		return false;
	as->as_name = p;
	if (wc_u32(&wc, &as->as_uid) || wc_u32(&wc, &as->as_gid) ||
	    wc_u32(&wc, &as->as_ngids) ||
	    as->as_ngids > RPC_AUTH_SYS_MAX_GIDS)
		return false;
	for (i = 0; i < as->as_ngids; i++)
		if (wc_u32(&wc, &as->as_gids[i]))
			return false;
	return wc_remaining(&wc) == 0;
}

static int decode_call(struct wire_cursor *wc, struct rpcrdma_rpc_msg *msg)
{
	if (wc_u32(wc, &msg->rm_rpcvers))
		return -EBADMSG;
	if (msg->rm_rpcvers != RPC_MSG_VERSION)
		return -EPROTO;
	if (wc_u32(wc, &msg->rm_prog) || wc_u32(wc, &msg->rm_vers) ||
	    wc_u32(wc, &msg->rm_proc))
		return -EBADMSG;
	if (take_opaque_auth(wc, &msg->rm_cred_flavor, &msg->rm_cred_len,
			     &msg->rm_cred_body))
		return -EBADMSG;
	if (msg->rm_cred_flavor == RPC_AUTH_SYS) {
		msg->rm_has_authsys = parse_authsys(msg->rm_cred_body,
						    msg->rm_cred_len,
						    &msg->rm_authsys);
		if (!msg->rm_has_authsys)
			memset(&msg->rm_authsys, 0, sizeof(msg->rm_authsys));
	}
	return take_opaque_auth(wc, &msg->rm_verf_flavor, &msg->rm_verf_len,
				&msg->rm_verf_body);
}

static int decode_reply(struct wire_cursor *wc, struct rpcrdma_rpc_msg *msg)
{
	if (wc_u32(wc, &msg->rm_reply_stat))
		return -EBADMSG;
	switch (msg->rm_reply_stat) {
	case RPC_MSG_ACCEPTED:
		if (take_opaque_auth(wc, &msg->rm_verf_flavor, &msg->rm_verf_len,
				     &msg->rm_verf_body) ||
		    wc_u32(wc, &msg->rm_accept_stat))
			return -EBADMSG;
		if (msg->rm_accept_stat > RPC_ACCEPT_SYSTEM_ERR)
			return -EBADMSG;
		if (msg->rm_accept_stat == RPC_ACCEPT_PROG_MISMATCH &&
		    (wc_u32(wc, &msg->rm_mismatch_low) ||
		     wc_u32(wc, &msg->rm_mismatch_high)))
			return -EBADMSG;
		return 0;
	case RPC_MSG_DENIED:
		if (wc_u32(wc, &msg->rm_reject_stat))
			return -EBADMSG;
		if (msg->rm_reject_stat == RPC_REJECT_RPC_MISMATCH)
			return wc_u32(wc, &msg->rm_mismatch_low) ||
			       wc_u32(wc, &msg->rm_mismatch_high) ? -EBADMSG : 0;
		if (msg->rm_reject_stat == RPC_REJECT_AUTH_ERROR)
			return wc_u32(wc, &msg->rm_auth_stat) ? -EBADMSG : 0;
		return -EBADMSG;
	default:
		return -EBADMSG;
	}
}

int rpcrdma_wire_decode_rpc(const void *buf, size_t len,
			    struct rpcrdma_rpc_msg *msg)
{
	struct wire_cursor wc = { .wc_base = buf, .wc_len = buf ? len : 0 };
	int ret;

	memset(msg, 0, sizeof(*msg));
	if (wc_u32(&wc, &msg->rm_xid) || wc_u32(&wc, &msg->rm_dir))
		return -EBADMSG;
	if (msg->rm_dir == RPC_DIR_CALL)
		ret = decode_call(&wc, msg);
	else if (msg->rm_dir == RPC_DIR_REPLY)
		ret = decode_reply(&wc, msg);
	else
		ret = -EBADMSG;
	if (ret)
		return ret;
	msg->rm_hdr_len = (uint32_t)wc.wc_pos;
	return 0;
}
