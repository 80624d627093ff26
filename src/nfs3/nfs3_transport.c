// SPDX-License-Identifier: MIT
/*
 * nfs3_transport.c - which NFSv3 calls are served on the transport thread.
 *
 * The transport tries each NFS call on its own thread first (rq_transport,
 * RPCRDMA_SVC_TRY_TRANSPORT): a call served there costs no hand-off to a
 * worker and back, which is most of the cost of a small call
 * (docs/bench-profile.md).  That thread posts to the device, so it must
 * never change its credentials (Soft-RoCE and siw post by write() to the
 * uverbs device, refused once they changed) and must not wait long, since
 * every connection's completions wait with it.  So a call stays there only
 * when:
 *  - its procedure needs no caller identity (GETATTR, READLINK, FSSTAT,
 *    FSINFO, PATHCONF), or the export's backend runs as no caller at all
 *    (it checks permissions from the call's credentials itself:
 *    fs_needs_identity() false), or the server acting as itself already
 *    is the caller (fs_cred_is_server(): a root client of a
 *    no_root_squash export served by a root server), and
 *  - it does not wait for the disk by design: WRITE, COMMIT (fsync),
 *    READDIR and READDIRPLUS (listing a cold directory reads it), and the
 *    namespace operations of a sync export entry on a disk (their
 *    commit_metadata fsyncs the directory, fs_commit.c) go to a
 *    worker; READ reads only what is at hand without a disk (fs_read()
 *    with nowait: the page cache, preadv2 RWF_NOWAIT, for the posix
 *    backend) and moves to a worker when that is not all.  Where nothing
 *    ever waits for a disk (fs_never_waits(): tmpfs, ramfs, the memory
 *    backend; no RWF_NOWAIT there either) they all stay;
 *  - READ and WRITE move no more than NFS3_TRANSPORT_MAX_IO bytes.
 * Everything else (other callers, other procedures) is served by a worker
 * as before.
 */
#include "nfs3_internal.h"

bool nfs3_transport_ok(const struct rpcrdma_nfs3_export *exp, unsigned flags,
		       const struct fs_cred *cr, bool commit)
{
	bool never_waits = fs_never_waits(exp);

	if (flags & NFS3_PF_ANY_CALLER)
		return true;
	if (!(flags & NFS3_PF_AS_SERVER))
		return false;
	if ((flags & NFS3_PF_MEM_FS) && !never_waits)
		return false;
	if ((flags & NFS3_PF_NOWAIT_READ) && exp->ex_nowait_unsupported &&
	    !never_waits)
		return false;
	if (commit) /* fsync of the directory: waits for the disk */
		return false;
	return !fs_needs_identity(exp) || fs_cred_is_server(cr);
}
