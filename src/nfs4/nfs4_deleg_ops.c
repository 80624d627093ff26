// SPDX-License-Identifier: MIT
/*
 * nfs4_deleg_ops.c - read delegations in the operations: granted in OPEN's
 * open_delegation4 (RFC 8881 18.16.3), recalled with CB_RECALL over the
 * holder's back channel when another client's OPEN for writing conflicts
 * (10.4.4), given back with DELEGRETURN (18.6).  The states are kept by
 * nfs4_deleg.c, the callbacks sent by nfs4_cb.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nfs4_cb.h"
#include "nfs4_deleg.h"
#include "nfs4_internal.h"

static time_t mono_sec(void)
{
	return nfs4_mono_sec();
}

/* recall_done - the end of one CB_RECALL: nothing to do here (the
 * delegation goes with DELEGRETURN, or is revoked a lease after the
 * recall began); logged when verbose. */
static void recall_done(void *arg, int status)
{
	struct rpcrdma_nfs4_server *srv = arg;

	if (srv->s4_verbose && status != NFS4_OK)
		fprintf(srv->s4_log, "nfs4: CB_RECALL ended with %d\n", status);
}

uint32_t nfs4_deleg_break(struct rpcrdma_nfs4_server *srv, uint64_t clientid,
			  const uint8_t *fh, uint32_t fhlen)
{
	struct nfs4_deleg_recall rec[NFS4_DELEG_MAX_RECALL];
	uint64_t holders[NFS4_DELEG_MAX_RECALL];
	struct nfs4_stateid sid;
	uint32_t status, n;

	/* a courtesy client's delegation is not recalled: the client is
	 * expired with all its state, its delegations with it (the
	 * forget hook), as Linux's nfsd does */
	n = nfs4_deleg_holders(srv->s4_deleg, clientid, fh, fhlen, holders,
			       NFS4_DELEG_MAX_RECALL);
	for (uint32_t i = 0; i < n; i++)
		if (nfs4_state_expire_courtesy(srv->s4_state, holders[i]) && srv->s4_verbose)
			fprintf(srv->s4_log, "nfs4: client %016llx expired (lease over, "
				"its delegation conflicts)\n", (unsigned long long)holders[i]);
	status = nfs4_deleg_conflict(srv->s4_deleg, clientid, fh, fhlen, mono_sec(),
				     rec, &n);
	for (uint32_t i = 0; i < n; i++) {
		sid.si_seqid = rec[i].dr_seqid;
		memcpy(sid.si_other, rec[i].dr_other, sizeof(sid.si_other));
		int err = nfs4_cb_recall(srv->s4_cb, rec[i].dr_clientid, &sid, false, fh,
					 fhlen, recall_done, srv);

		if (!err)
			nfs4_deleg_recall_sent(srv->s4_deleg, &rec[i]);
		if (srv->s4_verbose)
			fprintf(srv->s4_log, "nfs4: CB_RECALL of a read delegation to client %016llx: %s\n",
				(unsigned long long)rec[i].dr_clientid, err ? strerror(-err) : "sent");
	}
	return status;
}

int nfs4_deleg_change_hook(void *arg, const uint8_t *fh, uint32_t fhlen)
{
	return nfs4_deleg_break(arg, 0, fh, fhlen) == NFS4_OK ? 0 : -EAGAIN;
}

void nfs4_deleg_on_lease_break(void *arg, struct fs_lease *ls)
{
	struct rpcrdma_nfs4_server *srv = arg;

	if (nfs4_deleg_lease_broken(srv->s4_deleg, ls))
		nfs4_server_kick(srv);
}

void nfs4_deleg_lease_work(struct rpcrdma_nfs4_server *srv)
{
	uint8_t fh[NFS4_DELEG_MAX_RECALL][NFS4_FHSIZE];
	uint32_t fhlen[NFS4_DELEG_MAX_RECALL], n;

	nfs4_deleg_reap(srv->s4_deleg);
	n = nfs4_deleg_broken(srv->s4_deleg, fh, fhlen, NFS4_DELEG_MAX_RECALL);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t status = nfs4_deleg_break(srv, 0, fh[i], fhlen[i]);

		if (srv->s4_verbose > 1)
			fprintf(srv->s4_log, "nfs4: a lease broke (a change from outside): %s\n",
				status == NFS4_OK ? "no delegation out" : "recalling");
	}
	nfs4_deleg_reap(srv->s4_deleg); /* revoked by the breaks */
}

void nfs4_deleg_put_open(struct nfs4_compound *cp, struct fs_fentry *fe,
			 uint32_t access, uint32_t want, bool deleg_cur)
{
	struct rpcrdma_nfs4_server *srv = cp->cp_srv;
	struct rpcrdma_xdr *r = cp->cp_res;
	struct nfs4_stateid sid;
	int err;

	if (srv->s4_no_deleg || deleg_cur || (access & OPEN4_SHARE_ACCESS_WRITE) ||
	    want == OPEN4_SHARE_ACCESS_WANT_NO_DELEG || !cp->cp_session ||
	    nfs4_cb_path(srv->s4_cb, cp->cp_sid) != NFS4_CB_UP ||
	    nfs4_open_writers(srv->s4_state, cp->cp_cur.fh_data, cp->cp_cur.fh_len) ||
	    !nfs4_deleg_grant(srv->s4_deleg, cp->cp_clientid, cp->cp_cur.fh_data,
			      cp->cp_cur.fh_len, false, &sid)) {
		rpcrdma_xdr_put_u32(r, OPEN_DELEGATE_NONE);
		return;
	}
	/* a lease, so a change from outside the server recalls it; a
	 * backend without leases (-EOPNOTSUPP): the change hook alone */
	err = nfs4_deleg_lease(srv->s4_deleg, &sid, &cp->cp_c, fe, nfs4_deleg_on_lease_break,
				srv);
	if (err && err != -EOPNOTSUPP) {
		if (srv->s4_verbose)
			fprintf(srv->s4_log, "nfs4: no read delegation for client %016llx: "
				"no lease on the file (%s)\n",
				(unsigned long long)cp->cp_clientid, strerror(-err));
		rpcrdma_xdr_put_u32(r, OPEN_DELEGATE_NONE);
		return;
	}
	/* open_read_delegation4: the stateid, recall false, and an nfsace4
	 * that allows nothing beyond what ACCESS says (type ALLOWED, flag 0,
	 * mask 0, who "") */
	if (srv->s4_verbose)
		fprintf(srv->s4_log, "nfs4: read delegation granted to client %016llx\n",
			(unsigned long long)cp->cp_clientid);
	rpcrdma_xdr_put_u32(r, OPEN_DELEGATE_READ);
	nfs4_put_stateid(r, &sid);
	rpcrdma_xdr_put_u32(r, 0);
	rpcrdma_xdr_put_u32(r, ACE4_ACCESS_ALLOWED_ACE_TYPE);
	rpcrdma_xdr_put_u32(r, 0);
	rpcrdma_xdr_put_u32(r, 0);
	rpcrdma_xdr_put_opaque(r, NULL, 0);
}

uint32_t nfs4_op_delegreturn(struct nfs4_compound *cp)
{
	struct nfs4_stateid sid;

	nfs4_get_stateid(cp->cp_args, &sid);
	if (!rpcrdma_xdr_ok(cp->cp_args))
		return NFS4ERR_BADXDR;
	const char *name;
	uint32_t status;

	if (!cp->cp_cur.fh_len)
		return NFS4ERR_NOFILEHANDLE;
	status = nfs4_deleg_return(cp->cp_srv->s4_deleg, cp->cp_clientid, &sid,
				   cp->cp_cur.fh_data, cp->cp_cur.fh_len);
	name = rpcrdma_nfs4_stat_name(status);
	if (cp->cp_srv->s4_verbose)
		fprintf(cp->cp_srv->s4_log, "nfs4: DELEGRETURN from client %016llx: %s\n",
			(unsigned long long)cp->cp_clientid, name ? name : "?");
	return status;
}
