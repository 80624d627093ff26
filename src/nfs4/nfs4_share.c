// SPDX-License-Identifier: MIT
/*
 * nfs4_share.c - NFSv4.1 opens' share reservations (RFC 8881 9.7) in the
 * file-serving layer's table (fs_share.c), where NLM SHARE meets them and
 * the export's backend carries them to other servers on the same storage
 * (be_share).  nfs4_open_add() checks the reservations between NFSv4
 * opens first (a courtesy client's gives way there); the layer then sees
 * the owner's union of access and deny for the file, one reservation per
 * open state (nfs4_share_owner()): OPEN sets it, OPEN_DOWNGRADE narrows
 * it, and every open state the state table drops (CLOSE, an expired or
 * destroyed client) drops it (nfs4_state_set_shares()).  The layer's
 * table is the NFSv3 server's: these calls name it (c_srv), which
 * NFSv4's own calls leave NULL.
 */
#include <errno.h>
#include <string.h>

#include "common/be.h"
#include "nfs4_internal.h"

_Static_assert(OPEN4_SHARE_ACCESS_READ == FS_SHARE_READ &&
	       OPEN4_SHARE_ACCESS_WRITE == FS_SHARE_WRITE &&
	       OPEN4_SHARE_DENY_MASK == (FS_SHARE_READ | FS_SHARE_WRITE),
	       "share bits: OPEN4_SHARE_ACCESS_* and DENY_* (READ 1, WRITE 2) "
	       "are the layer's FS_SHARE_*");

static uint64_t owner_of(const struct nfs4_stateid *sid)
{
	return nfs4_share_owner(load_be32(sid->si_other + 4), load_be32(sid->si_other + 8));
}

uint32_t nfs4_share_open(struct nfs4_compound *cp, struct fs_fentry *obj,
			 const struct nfs4_stateid *sid,
			 const struct nfs4_open_prev *pv)
{
	struct fs_call c = cp->cp_c;
	int err;

	c.c_srv = cp->cp_srv->s4_nfs3;
	err = fs_share_set_fh(&c, obj, cp->cp_cur.fh_data, cp->cp_cur.fh_len,
			      owner_of(sid), pv->pv_now_access, pv->pv_now_deny);
	if (!err)
		return NFS4_OK;
	/* the open state is not created, or not widened */
	nfs4_open_undo(cp->cp_srv->s4_state, cp->cp_clientid, sid, pv);
	if (err == -EBUSY)
		return NFS4ERR_SHARE_DENIED;
	if (err == -ENOLCK)
		return NFS4ERR_RESOURCE;
	return nfs4_errno(err);
}

void nfs4_share_downgrade(struct nfs4_compound *cp, const struct nfs4_stateid *sid,
			  uint32_t access, uint32_t deny)
{
	struct fs_snap *sn = cp->cp_snap;
	struct fs_call c;

	if (cp->cp_cur.fh_pseudo || cp->cp_cur.fh_xi >= sn->sn_xt->xt_n)
		return;
	memset(&c, 0, sizeof(c));
	c.c_srv = cp->cp_srv->s4_nfs3;
	c.c_exp = sn->sn_exp[cp->cp_cur.fh_xi];
	/* a narrowing is never refused; a file gone took its reservations */
	(void)fs_share_set_fh(&c, NULL, cp->cp_cur.fh_data, cp->cp_cur.fh_len,
			      owner_of(sid), access, deny);
}
