// SPDX-License-Identifier: MIT
/*
 * nfs4_transport.c - which NFSv4.1 COMPOUNDs are served on the transport
 * thread (rq_transport, RPCRDMA_SVC_TRY_TRANSPORT), under the rules of
 * NFSv3's (src/nfs3/nfs3_transport.c): that thread posts to the device,
 * so it never changes its credentials (Soft-RoCE and siw refuse posts
 * from a thread whose credentials changed) and never waits for the disk.
 *
 * A COMPOUND cannot move to a worker half-way: SEQUENCE changes its slot
 * (the reply cache, RFC 8881 2.10.6.1), and each operation may change the
 * file system.  So the whole COMPOUND is decided before any operation
 * runs, by a scan of a copy of its arguments that changes nothing: it
 * stays only when
 *  - it starts with SEQUENCE and every further operation is one of
 *    PUTFH, PUTROOTFH, GETFH, SAVEFH, RESTOREFH, CLOSE (the open state
 *    only), GETATTR, READLINK (both read as the server, for any caller,
 *    as NFSv3's), ACCESS, LOOKUP, LOOKUPP (none waits for the disk by
 *    design), or REMOVE, RENAME or LINK on an export entry that commits
 *    no metadata (async, or a backend that never waits, fs_never_waits():
 *    tmpfs, memory; else fs_commit.c would fsync the directory);
 *  - every operation that touches an export's files finds the handle's
 *    export by the handles the COMPOUND itself carries (PUTFH, SAVEFH,
 *    RESTOREFH, LOOKUP within it): after a LOOKUP or LOOKUPP that may
 *    cross into another export (from or to the pseudo file system) the
 *    export is unknown and such an operation sends it to a worker;
 *  - for each such export the peer is listed, the caller's flavor
 *    accepted, and, for the operations that run with the caller's
 *    identity (all but GETATTR and READLINK), that (squashed) identity is
 *    the server's own (fs_cred_is_server(): a root client of a
 *    no_root_squash entry served by a root server), unless the export's
 *    backend switches no thread identity (fs_needs_identity() false: it
 *    checks the caller's credentials itself).
 * Everything else goes to a worker untouched: OPEN, READ, WRITE,
 * SETATTR, the lock and delegation operations (state, data, and OPEN may
 * recall a delegation over the back channel), EXCHANGE_ID and the other
 * operations of a COMPOUND without SEQUENCE, any argument that does not
 * decode (the worker answers the error).  None of the operations kept
 * here starts a back-channel call.
 */
#include "common/be.h"
#include "nfs4_cb.h"
#include "nfs4_internal.h"

/* What the scan knows of a current or saved file handle. */
enum scan_fh {
	SCAN_FH_NONE,    /* none set yet: the operation answers NOFILEHANDLE */
	SCAN_FH_PSEUDO,  /* a node of the pseudo file system */
	SCAN_FH_REAL,    /* a handle of export sf_xi */
	SCAN_FH_UNKNOWN, /* set by a LOOKUP/LOOKUPP that may cross exports */
};

struct scan_state {
	enum scan_fh sf_kind;
	unsigned sf_xi;
};

/* export_ok - may an operation on export @xi run here for @req?
 * @as_caller: it runs with the caller's identity (fs_become_caller()),
 * so that must be the server's own. */
static bool export_ok(const struct fs_snap *sn, const struct rpcrdma_svc_req *req,
		      unsigned xi, bool modifies, bool as_caller)
{
	struct rpcrdma_nfs3_xopts opts;
	struct fs_cred cr;

	if (xi >= sn->sn_xt->xt_n)
		return false;
	if (!rpcrdma_nfs3_exports_match(sn->sn_xt, xi, (const struct sockaddr *)&req->rq_peer,
					&opts))
		return false;
	if (fs_cred_from_req(&opts, req, &cr))
		return false;
	/* a change on a sync entry of a backend that may wait (a disk)
	 * commits: fsync */
	if (modifies && (opts.xo_ro || (!opts.xo_async && !fs_never_waits(sn->sn_exp[xi]))))
		return false;
	/* a backend that takes the caller's identity explicitly switches
	 * nothing: any caller */
	return !as_caller || !fs_needs_identity(sn->sn_exp[xi]) || fs_cred_is_server(&cr);
}

/* real_ok - a handle of a known export that may be served here. */
static bool real_ok(const struct fs_snap *sn, const struct rpcrdma_svc_req *req,
		    const struct scan_state *fh, bool modifies, bool as_caller)
{
	return fh->sf_kind == SCAN_FH_REAL &&
	       export_ok(sn, req, fh->sf_xi, modifies, as_caller);
}

/* scan_putfh - PUTFH's handle: which export, or false (the worker answers). */
static bool scan_putfh(const struct fs_snap *sn, struct rpcrdma_xdr *a,
		       struct scan_state *cur)
{
	const uint8_t *p;
	uint32_t len, id;
	unsigned xi;

	p = rpcrdma_xdr_get_opaque(a, NFS4_FHSIZE, &len);
	if (!p || len < 4 || (p[0] != FS_FH_VERSION && p[0] != NFS4_PSEUDO_FH_VERSION))
		return false;
	id = load_be32(p) & 0xffff;
	xi = fs_snap_index(sn, id);
	if (xi == sn->sn_xt->xt_n)
		return false;
	cur->sf_kind = p[0] == NFS4_PSEUDO_FH_VERSION ? SCAN_FH_PSEUDO : SCAN_FH_REAL;
	cur->sf_xi = xi;
	return true;
}

/* scan_op - one operation's arguments skipped and its file handles
 * followed; false when the COMPOUND must go to a worker. */
static bool scan_op(const struct fs_snap *sn, const struct rpcrdma_svc_req *req,
		    struct rpcrdma_xdr *a, uint32_t op, struct scan_state *cur,
		    struct scan_state *saved)
{
	uint32_t bm[NFS4_BITMAP_WORDS];
	struct fs_name n;

	switch (op) {
	case OP_PUTROOTFH:
		cur->sf_kind = SCAN_FH_PSEUDO;
		return true;
	case OP_PUTFH:
		return scan_putfh(sn, a, cur);
	case OP_GETFH:
		return true;
	case OP_SAVEFH:
		*saved = *cur;
		return true;
	case OP_RESTOREFH:
		*cur = *saved;
		return true;
	case OP_GETATTR:
		(void)nfs4_get_bitmap(a, bm, NFS4_BITMAP_WORDS);
		/* attributes are read as the server: any caller */
		return rpcrdma_xdr_ok(a) &&
		       (cur->sf_kind == SCAN_FH_PSEUDO || real_ok(sn, req, cur, false, false));
	case OP_ACCESS:
		(void)rpcrdma_xdr_get_u32(a);
		return rpcrdma_xdr_ok(a) &&
		       (cur->sf_kind == SCAN_FH_PSEUDO || real_ok(sn, req, cur, false, true));
	case OP_CLOSE:
		/* seqid, stateid: the open state only, in memory */
		(void)rpcrdma_xdr_get_u32(a);
		return rpcrdma_xdr_get_fixed(a, 4 + NFS4_OTHER_SIZE) != NULL;
	case OP_LOOKUP:
		if (nfs4_get_component(a, &n))
			return false;
		if (cur->sf_kind == SCAN_FH_PSEUDO) {
			cur->sf_kind = SCAN_FH_UNKNOWN; /* may reach an export */
			return true;
		}
		return real_ok(sn, req, cur, false, true); /* stays in the export */
	case OP_LOOKUPP:
		if (cur->sf_kind != SCAN_FH_PSEUDO && !real_ok(sn, req, cur, false, true))
			return false;
		cur->sf_kind = SCAN_FH_UNKNOWN; /* an export's root goes up */
		return true;
	case OP_READLINK: /* read as the server: any caller */
		return real_ok(sn, req, cur, false, false);
	case OP_REMOVE:
		return !nfs4_get_component(a, &n) && real_ok(sn, req, cur, true, true);
	case OP_LINK:
		return !nfs4_get_component(a, &n) && real_ok(sn, req, saved, true, true) &&
		       real_ok(sn, req, cur, true, true);
	case OP_RENAME:
		return !nfs4_get_component(a, &n) && !nfs4_get_component(a, &n) &&
		       real_ok(sn, req, saved, true, true) && real_ok(sn, req, cur, true, true);
	default:
		return false;
	}
}

bool nfs4_transport_ok(const struct fs_snap *sn, const struct rpcrdma_svc_req *req)
{
	struct rpcrdma_xdr a = req->rq_args; /* a copy: the call stays as sent */
	struct scan_state cur = { SCAN_FH_NONE, 0 }, saved = { SCAN_FH_NONE, 0 };
	struct nfs4_compound_hdr h;

	if (nfs4_compound_decode_header(&a, &h) != NFS4_OK || h.ch_nops == 0)
		return false;
	for (uint32_t i = 0; i < h.ch_nops; i++) {
		uint32_t op = rpcrdma_xdr_get_u32(&a);

		if (!rpcrdma_xdr_ok(&a))
			return false;
		if (i == 0) {
			/* sessionid, sequenceid, slotid, highest_slotid, cachethis */
			if (op != OP_SEQUENCE ||
			    !rpcrdma_xdr_get_fixed(&a, NFS4_SESSIONID_SIZE + 4 * 4))
				return false;
			continue;
		}
		if (!scan_op(sn, req, &a, op, &cur, &saved))
			return false;
	}
	return true;
}

/* The transport asks before it closes a connection idle for its
 * --idle-timeout (rpcrdma_svc_set_conn_state()): one that carries a
 * session's back channel stays, so recalls still reach the client.  A
 * connection used only as a fore channel holds nothing: the client's next
 * SEQUENCE on a new connection binds that one (RFC 8881 2.10.3.1, SP4_NONE). */
bool rpcrdma_nfs4_server_conn_has_state(uint32_t conn_id, void *arg)
{
	struct rpcrdma_nfs4_server *srv = arg;

	return nfs4_cb_on_conn(srv->s4_cb, conn_id);
}
