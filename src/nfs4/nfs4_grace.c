// SPDX-License-Identifier: MIT
/*
 * nfs4_grace.c - the grace period as the operations see it (RFC 8881
 * 8.4.2.1): OPEN and LOCK ask nfs4_grace_gate() before they take
 * anything, and tell nfs4_grace_note() what they granted; the client
 * records and the rules are in nfs4_recover.c.
 */
#include "nfs4_internal.h"

uint32_t nfs4_grace_gate(struct nfs4_compound *cp, bool reclaim)
{
	struct rpcrdma_nfs4_server *srv = cp->cp_srv;
	uint8_t owner[NFS4_OPAQUE_LIMIT];
	uint32_t len, status;

	status = nfs4_client_owner(srv->s4_state, cp->cp_clientid, owner, &len);
	if (status)
		return status;
	return nfs4_recover_check(srv->s4_recover, owner, len, reclaim,
				  nfs4_mono_sec());
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
