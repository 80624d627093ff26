// SPDX-License-Identifier: MIT
/*
 * nfs3_cred.c - serving each call with the caller's AUTH_SYS identity
 * (RFC 5531 appendix A), per thread.
 *
 * The file system checks permissions against the thread's fsuid, fsgid and
 * supplementary groups.  All three are per-thread in the kernel; only the
 * glibc wrappers for setgroups() (and setuid() etc.) broadcast the change
 * to every thread, so the raw system calls are used here.  Switching the
 * fsuid away from 0 also drops the file system capabilities
 * (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, ...) from the
 * thread's effective set, and switching back restores them.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nfs3_internal.h"

static uint32_t squash(const struct rpcrdma_nfs3_export *exp, uint32_t id)
{
	return (id == 0 && !exp->ex_no_root_squash) ? RPCRDMA_NFS3_NOBODY : id;
}

uint32_t nfs3_cred_from_req(const struct rpcrdma_nfs3_export *exp,
			    const struct rpcrdma_svc_req *req,
			    struct nfs3_cred *cr)
{
	const struct rpcrdma_rpc_msg *m = &req->rq_msg;

	switch (m->rm_cred_flavor) {
	case RPC_AUTH_NONE:
		cr->cr_uid = RPCRDMA_NFS3_NOBODY;
		cr->cr_gid = RPCRDMA_NFS3_NOBODY;
		cr->cr_ngids = 0;
		return 0;
	case RPC_AUTH_SYS:
		if (!m->rm_has_authsys ||
		    m->rm_authsys.as_ngids > RPC_AUTH_SYS_MAX_GIDS)
			return RPCRDMA_AUTH_BADCRED;
		cr->cr_uid = squash(exp, m->rm_authsys.as_uid);
		cr->cr_gid = squash(exp, m->rm_authsys.as_gid);
		cr->cr_ngids = m->rm_authsys.as_ngids;
		for (uint32_t i = 0; i < cr->cr_ngids; i++)
			cr->cr_gids[i] = squash(exp, m->rm_authsys.as_gids[i]);
		return 0;
	default:
		return RPCRDMA_AUTH_TOOWEAK;
	}
}

int nfs3_cred_apply(const struct nfs3_cred *cr)
{
	gid_t gids[RPC_AUTH_SYS_MAX_GIDS];

	for (uint32_t i = 0; i < cr->cr_ngids; i++)
		gids[i] = cr->cr_gids[i];
	if (syscall(SYS_setgroups, (size_t)cr->cr_ngids, gids) < 0)
		return -errno;
	syscall(SYS_setfsgid, (gid_t)cr->cr_gid);
	syscall(SYS_setfsuid, (uid_t)cr->cr_uid);
	/* setfsuid/setfsgid report no errors: read back with an invalid id */
	if ((uint32_t)syscall(SYS_setfsgid, (gid_t)-1) != cr->cr_gid ||
	    (uint32_t)syscall(SYS_setfsuid, (uid_t)-1) != cr->cr_uid) {
		nfs3_cred_restore();
		return -EPERM;
	}
	return 0;
}

void nfs3_cred_restore(void)
{
	syscall(SYS_setfsuid, geteuid());
	syscall(SYS_setfsgid, getegid());
	syscall(SYS_setgroups, (size_t)0, NULL);
}
