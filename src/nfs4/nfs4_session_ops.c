// SPDX-License-Identifier: MIT
/*
 * nfs4_session_ops.c - the client and session operations of NFSv4.1:
 * EXCHANGE_ID (RFC 8881 18.35), CREATE_SESSION (18.36), DESTROY_SESSION
 * (18.37), BIND_CONN_TO_SESSION (18.34), DESTROY_CLIENTID (18.50),
 * RECLAIM_COMPLETE (18.51), TEST_STATEID (18.48), FREE_STATEID (18.38).
 * The tables behind them are in nfs4_state.c.
 */
#include <netinet/in.h>
#include <string.h>

#include "common/be.h"
#include "nfs4_cb.h"
#include "nfs4_deleg.h"
#include "nfs4_internal.h"

/* The server's implementation id (nfs_impl_id4). */
#define NFS4_IMPL_DOMAIN "rpcrdma"
#define NFS4_IMPL_NAME "rpcrdma-nfsd"

uint64_t nfs4_host_key(const struct sockaddr_storage *ss)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	const uint8_t *a = s6->sin6_addr.s6_addr;

	if (ss->ss_family == AF_INET)
		return 1ull << 32 | load_be32((const uint8_t *)
					      &((const struct sockaddr_in *)ss)->sin_addr);
	if (ss->ss_family != AF_INET6)
		return 0;
	if (memcmp(a, v4mapped, sizeof(v4mapped)) == 0)
		return 1ull << 32 | load_be32(a + 12);
	/* link-local: fe80::/64 is every machine on the link (RoCE's
	 * default GIDs), so the interface identifier is the host; the key
	 * stays inside fe80::/10, where no /64 key of a routable prefix is */
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return 0xfe80000000000000ull | (load_be64(a + 8) & 0x003fffffffffffffull);
	/* the /64; a prefix below 2^33 (::/31: ::1 and nothing routable),
	 * which would read as 0 or as an IPv4 key, gets the top bit set */
	return load_be64(a) >> 33 ? load_be64(a) : (1ull << 63) | load_be64(a);
}

void nfs4_who_of(const struct nfs4_compound *cp, struct nfs4_who *who)
{
	const struct rpcrdma_nfs4_server *srv = cp->cp_srv;

	who->wh_principal = nfs4_principal(srv->s4_state, &cp->cp_req->rq_msg);
	who->wh_conn = srv->s4_conn_id ? srv->s4_conn_id(cp->cp_req)
				       : rpcrdma_svc_req_conn_id(cp->cp_req);
	who->wh_host = nfs4_host_key(&cp->cp_req->rq_peer);
}

/* skip_authsys - an authsys_parms (RFC 5531) inside callback_sec_parms4. */
static void skip_authsys(struct rpcrdma_xdr *a)
{
	uint32_t len, n;

	(void)rpcrdma_xdr_get_u32(a);                 /* stamp */
	(void)rpcrdma_xdr_get_opaque(a, 255, &len);   /* machinename */
	(void)rpcrdma_xdr_get_u32(a);                 /* uid */
	(void)rpcrdma_xdr_get_u32(a);                 /* gid */
	n = rpcrdma_xdr_get_u32(a);
	if (n > 16) {
		a->xs_err = true;
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		(void)rpcrdma_xdr_get_u32(a);
}

uint32_t nfs4_op_exchange_id(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args, *r = cp->cp_res;
	const uint8_t *verf, *owner;
	uint32_t ownerlen, flags, how, n, len, status;
	uint32_t bm[NFS4_BITMAP_MAX];
	struct nfs4_exid_res er;
	struct nfs4_who who;

	verf = rpcrdma_xdr_get_fixed(a, NFS4_VERIFIER_SIZE);
	owner = rpcrdma_xdr_get_opaque(a, NFS4_OPAQUE_LIMIT, &ownerlen);
	flags = rpcrdma_xdr_get_u32(a);
	how = rpcrdma_xdr_get_u32(a);
	if (how == SP4_MACH_CRED) {
		nfs4_get_bitmap(a, bm, NFS4_BITMAP_MAX); /* spo_must_enforce */
		nfs4_get_bitmap(a, bm, NFS4_BITMAP_MAX); /* spo_must_allow */
	} else if (how != SP4_NONE) {
		return rpcrdma_xdr_ok(a) ? NFS4ERR_NOTSUPP : NFS4ERR_BADXDR;
	}
	n = rpcrdma_xdr_get_u32(a); /* eia_client_impl_id<1> */
	if (n > 1)
		return NFS4ERR_BADXDR;
	if (n == 1) {
		(void)rpcrdma_xdr_get_opaque(a, NFS4_OPAQUE_LIMIT, &len);
		(void)rpcrdma_xdr_get_opaque(a, NFS4_OPAQUE_LIMIT, &len);
		(void)rpcrdma_xdr_get_u64(a);
		(void)rpcrdma_xdr_get_u32(a);
	}
	if (!rpcrdma_xdr_ok(a))
		return NFS4ERR_BADXDR;
	nfs4_who_of(cp, &who);
	status = nfs4_exchange_id_as(cp->cp_srv->s4_state, &who, verf, owner, ownerlen,
				  flags, &er);
	if (status)
		return status;
	rpcrdma_xdr_put_u64(r, er.er_clientid);
	rpcrdma_xdr_put_u32(r, er.er_sequenceid);
	rpcrdma_xdr_put_u32(r, er.er_flags);
	rpcrdma_xdr_put_u32(r, SP4_NONE);
	/* server_owner4: so_minor_id, so_major_id; then eir_server_scope */
	rpcrdma_xdr_put_u64(r, 0);
	rpcrdma_xdr_put_opaque(r, cp->cp_srv->s4_scope, sizeof(cp->cp_srv->s4_scope));
	rpcrdma_xdr_put_opaque(r, cp->cp_srv->s4_scope, sizeof(cp->cp_srv->s4_scope));
	rpcrdma_xdr_put_u32(r, 1);
	rpcrdma_xdr_put_opaque(r, NFS4_IMPL_DOMAIN, sizeof(NFS4_IMPL_DOMAIN) - 1);
	rpcrdma_xdr_put_opaque(r, NFS4_IMPL_NAME, sizeof(NFS4_IMPL_NAME) - 1);
	rpcrdma_xdr_put_u64(r, 0);
	rpcrdma_xdr_put_u32(r, 0);
	return NFS4_OK;
}

static void get_chan(struct rpcrdma_xdr *a, struct nfs4_chan_attrs *ca)
{
	ca->ca_headerpadsize = rpcrdma_xdr_get_u32(a);
	ca->ca_maxrequestsize = rpcrdma_xdr_get_u32(a);
	ca->ca_maxresponsesize = rpcrdma_xdr_get_u32(a);
	ca->ca_maxresponsesize_cached = rpcrdma_xdr_get_u32(a);
	ca->ca_maxoperations = rpcrdma_xdr_get_u32(a);
	ca->ca_maxrequests = rpcrdma_xdr_get_u32(a);
	ca->ca_nrdma_ird = rpcrdma_xdr_get_u32(a);
	if (ca->ca_nrdma_ird > 1)
		a->xs_err = true;
	else if (ca->ca_nrdma_ird)
		ca->ca_rdma_ird = rpcrdma_xdr_get_u32(a);
}

static void put_chan(struct rpcrdma_xdr *r, const struct nfs4_chan_attrs *ca)
{
	rpcrdma_xdr_put_u32(r, ca->ca_headerpadsize);
	rpcrdma_xdr_put_u32(r, ca->ca_maxrequestsize);
	rpcrdma_xdr_put_u32(r, ca->ca_maxresponsesize);
	rpcrdma_xdr_put_u32(r, ca->ca_maxresponsesize_cached);
	rpcrdma_xdr_put_u32(r, ca->ca_maxoperations);
	rpcrdma_xdr_put_u32(r, ca->ca_maxrequests);
	rpcrdma_xdr_put_u32(r, ca->ca_nrdma_ird);
	if (ca->ca_nrdma_ird)
		rpcrdma_xdr_put_u32(r, ca->ca_rdma_ird);
}

uint32_t nfs4_op_create_session(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args, *r = cp->cp_res;
	struct nfs4_chan_attrs fore = { 0 }, back = { 0 };
	struct nfs4_cs_res res;
	struct nfs4_who who;
	uint64_t clientid;
	uint32_t seq, flags, n, len, status, prog;
	bool authsys = false;

	clientid = rpcrdma_xdr_get_u64(a);
	seq = rpcrdma_xdr_get_u32(a);
	flags = rpcrdma_xdr_get_u32(a);
	get_chan(a, &fore);
	get_chan(a, &back);
	prog = rpcrdma_xdr_get_u32(a); /* csa_cb_program */
	n = rpcrdma_xdr_get_u32(a);
	if (n > 16)
		return NFS4ERR_BADXDR;
	for (uint32_t i = 0; i < n && rpcrdma_xdr_ok(a); i++) {
		uint32_t flavor = rpcrdma_xdr_get_u32(a);

		if (flavor == NFS4_AUTH_SYS) {
			skip_authsys(a);
			authsys = true;
		} else if (flavor == NFS4_RPCSEC_GSS) {
			(void)rpcrdma_xdr_get_u32(a);
			(void)rpcrdma_xdr_get_opaque(a, NFS4_OPAQUE_LIMIT, &len);
			(void)rpcrdma_xdr_get_opaque(a, NFS4_OPAQUE_LIMIT, &len);
		} else if (flavor != NFS4_AUTH_NONE) {
			return NFS4ERR_BADXDR;
		}
	}
	if (!rpcrdma_xdr_ok(a))
		return NFS4ERR_BADXDR;
	nfs4_who_of(cp, &who);
	status = nfs4_create_session_as(cp->cp_srv->s4_state, &who, clientid, seq, flags,
				     &fore, &back, &res);
	if (status)
		return status;
	/* RFC 8881 18.36.3: the back channel on this connection, when asked
	 * for and the client's back channel can carry CB_SEQUENCE and one
	 * more operation; a retry finds the channel bound the first time.
	 * The attributes are echoed (the server uses slot 0 only). */
	if ((flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN) &&
	    back.ca_maxrequests >= NFS4_CB_SLOTS && back.ca_maxoperations >= NFS4_CB_MAX_OPS &&
	    (nfs4_cb_path(cp->cp_srv->s4_cb, res.cr_sessionid) != NFS4_CB_NONE ||
	     nfs4_cb_bind(cp->cp_srv->s4_cb, cp->cp_req, res.cr_sessionid, clientid,
			  prog, authsys) == 0))
		res.cr_flags |= CREATE_SESSION4_FLAG_CONN_BACK_CHAN;
	rpcrdma_xdr_put_fixed(r, res.cr_sessionid, NFS4_SESSIONID_SIZE);
	rpcrdma_xdr_put_u32(r, res.cr_sequence);
	rpcrdma_xdr_put_u32(r, res.cr_flags);
	put_chan(r, &res.cr_fore);
	put_chan(r, &res.cr_back);
	return NFS4_OK;
}

uint32_t nfs4_op_destroy_session(struct nfs4_compound *cp)
{
	const uint8_t *sid = rpcrdma_xdr_get_fixed(cp->cp_args, NFS4_SESSIONID_SIZE);
	struct nfs4_who who;
	uint32_t status;

	if (!sid)
		return NFS4ERR_BADXDR;
	nfs4_who_of(cp, &who);
	status = nfs4_destroy_session_as(cp->cp_srv->s4_state, &who, sid, cp->cp_session);
	if (status == NFS4_OK)
		nfs4_cb_unbind(cp->cp_srv->s4_cb, sid);
	return status;
}

uint32_t nfs4_op_bind_conn(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args, *r = cp->cp_res;
	const uint8_t *sid = rpcrdma_xdr_get_fixed(a, NFS4_SESSIONID_SIZE);
	uint32_t dir = rpcrdma_xdr_get_u32(a), status, got = CDFS4_FORE;
	struct nfs4_who who;

	(void)rpcrdma_xdr_get_bool(a);
	if (!rpcrdma_xdr_ok(a))
		return NFS4ERR_BADXDR;
	if (dir != CDFC4_FORE && dir != CDFC4_BACK && dir != CDFC4_FORE_OR_BOTH &&
	    dir != CDFC4_BACK_OR_BOTH)
		return NFS4ERR_INVAL;
	/* the client's principal only (RFC 8881 2.10.8); the connection is
	 * bound to the fore channel in any case */
	nfs4_who_of(cp, &who);
	status = nfs4_bind_conn(cp->cp_srv->s4_state, &who, sid);
	if (status)
		return status;
	/* RFC 8881 18.34.3: the back channel moves to this connection when
	 * asked for (or allowed: FORE_OR_BOTH), if the session has one */
	if (dir != CDFC4_FORE &&
	    nfs4_cb_rebind(cp->cp_srv->s4_cb, cp->cp_req, sid) == 0)
		got = dir == CDFC4_BACK ? CDFS4_BACK : CDFS4_BOTH;
	else if (dir == CDFC4_BACK)
		return NFS4ERR_INVAL; /* no back channel to move here */
	rpcrdma_xdr_put_fixed(r, sid, NFS4_SESSIONID_SIZE);
	rpcrdma_xdr_put_u32(r, got);
	rpcrdma_xdr_put_u32(r, 0);
	return NFS4_OK;
}

uint32_t nfs4_op_destroy_clientid(struct nfs4_compound *cp)
{
	uint64_t id = rpcrdma_xdr_get_u64(cp->cp_args);
	struct nfs4_who who;
	uint32_t status;

	if (!rpcrdma_xdr_ok(cp->cp_args))
		return NFS4ERR_BADXDR;
	nfs4_who_of(cp, &who);
	status = nfs4_destroy_clientid_as(cp->cp_srv->s4_state, &who, id);
	if (status == NFS4_OK && nfs4_deleg_forget_client(cp->cp_srv->s4_deleg, id))
		nfs4_deleg_reap(cp->cp_srv->s4_deleg); /* their leases (no lock held) */
	return status;
}

uint32_t nfs4_op_reclaim_complete(struct nfs4_compound *cp)
{
	bool one_fs = rpcrdma_xdr_get_bool(cp->cp_args);
	uint32_t status;

	if (!rpcrdma_xdr_ok(cp->cp_args))
		return NFS4ERR_BADXDR;
	status = nfs4_reclaim_complete(cp->cp_srv->s4_state, cp->cp_clientid, one_fs);
	if (status == NFS4_OK && !one_fs)
		nfs4_grace_note(cp, NFS4_REC_RECLAIM_COMPLETE);
	return status;
}

uint32_t nfs4_op_test_stateid(struct nfs4_compound *cp)
{
	struct rpcrdma_xdr *a = cp->cp_args, *r = cp->cp_res;
	uint32_t n = rpcrdma_xdr_get_u32(a);
	uint32_t st[64];
	struct nfs4_stateid sid;

	if (n > 64)
		return NFS4ERR_BADXDR;
	for (uint32_t i = 0; i < n; i++) {
		nfs4_get_stateid(a, &sid);
		st[i] = nfs4_open_test(cp->cp_srv->s4_state, cp->cp_clientid, &sid);
		if (st[i] == NFS4ERR_BAD_STATEID) /* a delegation's */
			st[i] = nfs4_deleg_check(cp->cp_srv->s4_deleg, cp->cp_clientid,
						 &sid, NULL, 0);
	}
	if (!rpcrdma_xdr_ok(a))
		return NFS4ERR_BADXDR;
	rpcrdma_xdr_put_u32(r, n);
	for (uint32_t i = 0; i < n; i++)
		rpcrdma_xdr_put_u32(r, st[i]);
	return NFS4_OK;
}

uint32_t nfs4_op_free_stateid(struct nfs4_compound *cp)
{
	struct nfs4_stateid sid;
	uint32_t status;

	nfs4_get_stateid(cp->cp_args, &sid);
	if (!rpcrdma_xdr_ok(cp->cp_args))
		return NFS4ERR_BADXDR;
	/* a lock state goes, and its locks with it; an open state is freed
	 * by CLOSE, so one still there is NFS4ERR_LOCKS_HELD (18.38.3) */
	status = nfs4_lock_free(cp->cp_srv->s4_state, cp->cp_clientid, &sid);
	if (status != NFS4ERR_BAD_STATEID)
		return status;
	/* a revoked delegation is freed; one still held is returned with
	 * DELEGRETURN (18.38.3: NFS4ERR_LOCKS_HELD) */
	status = nfs4_deleg_check(cp->cp_srv->s4_deleg, cp->cp_clientid, &sid, NULL, 0);
	if (status == NFS4ERR_DELEG_REVOKED)
		return nfs4_deleg_return(cp->cp_srv->s4_deleg, cp->cp_clientid, &sid,
					 NULL, 0);
	status = nfs4_open_test(cp->cp_srv->s4_state, cp->cp_clientid, &sid);
	return status == NFS4_OK ? NFS4ERR_LOCKS_HELD : status;
}
