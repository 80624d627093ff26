// SPDX-License-Identifier: MIT
/*
 * nfs4_grace.c - the grace period as the operations see it (RFC 8881
 * 8.4.2.1): OPEN and LOCK ask nfs4_grace_gate() before they take
 * anything, and tell nfs4_grace_note() what they granted; the client
 * records and the rules are in nfs4_recover.c.  Another gateway of the
 * export's cluster in its grace period (fs_cluster_grace(), the
 * file-serving layer's question to the backend) refuses what this
 * server's own grace would: a new OPEN or LOCK, and LOCKT.
 */
#include "nfs4_internal.h"

uint32_t nfs4_grace_cluster(struct nfs4_compound *cp)
{
	const struct nfs4_fh *fh = &cp->cp_cur;

	if (!fh->fh_len || fh->fh_pseudo || !cp->cp_snap ||
	    fh->fh_xi >= cp->cp_snap->sn_xt->xt_n)
		return NFS4_OK; /* no export: the operation answers for itself */
	if (fs_cluster_grace(cp->cp_snap->sn_exp[fh->fh_xi]) == 0)
		return NFS4_OK;
	nfs4_recover_count_grace(cp->cp_srv->s4_recover);
	return NFS4ERR_GRACE; /* in grace, or cannot tell: the client retries */
}

uint32_t nfs4_grace_gate(struct nfs4_compound *cp, bool reclaim)
{
	struct rpcrdma_nfs4_server *srv = cp->cp_srv;
	uint8_t owner[NFS4_OPAQUE_LIMIT];
	uint32_t len, status;

	status = nfs4_client_owner(srv->s4_state, cp->cp_clientid, owner, &len);
	if (status)
		return status;
	status = nfs4_recover_check(srv->s4_recover, owner, len, reclaim,
				    nfs4_mono_sec());
	/* a reclaim is this server's own grace period's affair */
	if (status || reclaim)
		return status;
	return nfs4_grace_cluster(cp);
}

void nfs4_grace_note(struct nfs4_compound *cp, enum nfs4_recover_event ev)
{
	struct rpcrdma_nfs4_server *srv = cp->cp_srv;
	uint8_t owner[NFS4_OPAQUE_LIMIT];
	uint32_t len;

	if (nfs4_client_owner(srv->s4_state, cp->cp_clientid, owner, &len))
		return;
	nfs4_recover_note(srv->s4_recover, owner, len, ev);
}
