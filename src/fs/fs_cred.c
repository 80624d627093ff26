// SPDX-License-Identifier: MIT
/*
 * fs_cred.c - serving each call with the caller's AUTH_SYS identity
 * (RFC 5531 appendix A), per thread.
 *
 * The file system checks permissions against the thread's fsuid, fsgid and
 * supplementary groups.  All three are per-thread in the kernel; only the
 * glibc wrappers for setgroups() (and setuid() etc.) broadcast the change
 * to every thread, so the raw system calls are used here.  Switching the
 * fsuid away from 0 also drops the file system capabilities
 * (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, ...) from the
 * thread's effective set, and switching back restores them.
 *
 * A call decodes its file handles as the server (open_by_handle_at needs
 * the server's CAP_DAC_READ_SEARCH), then switches to the caller.  It does
 * not switch back when it ends: the thread keeps the caller's identity
 * until a call needs the server's (fs_cred_for_handle(): a handle not in
 * the open-file cache).  Each thread remembers what it last set and makes
 * only the system calls that change something, so a READ or WRITE of a
 * cached file by the same caller as the thread's previous call switches
 * nothing; a root caller served by a root server never switches, and a
 * caller whose groups did not change costs no setgroups.  A server
 * running as root keeps the last caller's supplementary groups while it
 * acts as itself: with fsuid 0 it holds the file system capabilities, so
 * no permission check it makes depends on them.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs.h"

/* squash - what id @id (0 is root) becomes: @anon when squashed. */
static uint32_t squash(const struct rpcrdma_nfs3_xopts *o, uint32_t id,
		       uint32_t anon)
{
	if (o->xo_squash == RPCRDMA_NFS3_ALL_SQUASH ||
	    (id == 0 && o->xo_squash == RPCRDMA_NFS3_ROOT_SQUASH))
		return anon;
	return id;
}

uint32_t fs_cred_from_req(const struct rpcrdma_nfs3_xopts *o,
			  const struct rpcrdma_svc_req *req,
			  struct fs_cred *cr)
{
	const struct rpcrdma_rpc_msg *m = &req->rq_msg;

	switch (m->rm_cred_flavor) {
	case RPC_AUTH_NONE:
		cr->cr_uid = o->xo_anonuid;
		cr->cr_gid = o->xo_anongid;
		cr->cr_ngids = 0;
		return 0;
	case RPC_AUTH_SYS:
		if (!m->rm_has_authsys ||
		    m->rm_authsys.as_ngids > RPC_AUTH_SYS_MAX_GIDS)
			return RPCRDMA_AUTH_BADCRED;
		cr->cr_uid = squash(o, m->rm_authsys.as_uid, o->xo_anonuid);
		cr->cr_gid = squash(o, m->rm_authsys.as_gid, o->xo_anongid);
		/* all_squash: the anonymous identity has no other groups */
		cr->cr_ngids = o->xo_squash == RPCRDMA_NFS3_ALL_SQUASH ? 0 :
			       m->rm_authsys.as_ngids;
		for (uint32_t i = 0; i < cr->cr_ngids; i++)
			cr->cr_gids[i] = squash(o, m->rm_authsys.as_gids[i],
						o->xo_anongid);
		return 0;
	default:
		return RPCRDMA_AUTH_TOOWEAK;
	}
}

/* What this thread last set; tl_known false: nothing known, set all. */
static __thread bool tl_known;
static __thread uint32_t tl_fsuid, tl_fsgid, tl_ngids;
static __thread gid_t tl_gids[RPC_AUTH_SYS_MAX_GIDS];
/* The server's own ids (a thread's, but the process never changes them). */
static __thread bool tl_have_ids;
static __thread uid_t tl_euid;
static __thread gid_t tl_egid;
/* fs_cred_freeze(): no credential change on this thread */
static __thread bool tl_frozen;
/* the current call switched to its caller (fs_cred_for_handle()) */
static __thread bool tl_caller_phase;

static void server_ids(void)
{
	if (!tl_have_ids) {
		tl_euid = geteuid();
		tl_egid = getegid();
		tl_have_ids = true;
	}
}

static int set_groups(uint32_t n, const gid_t *gids)
{
	if (tl_known && tl_ngids == n && !memcmp(tl_gids, gids, n * sizeof(gids[0])))
		return 0;
	if (syscall(SYS_setgroups, (size_t)n, gids) < 0) {
		tl_known = false;
		return -errno;
	}
	memcpy(tl_gids, gids, n * sizeof(gids[0]));
	tl_ngids = n;
	return 0;
}

bool fs_cred_is_server(const struct fs_cred *cr)
{
	server_ids();
	if (cr->cr_uid != tl_euid || cr->cr_gid != tl_egid)
		return false;
	return tl_euid == 0 || cr->cr_ngids == 0;
}

void fs_cred_freeze(bool on)
{
	tl_frozen = on;
}

void fs_cred_call_begin(void)
{
	tl_caller_phase = false;
}

void fs_cred_for_handle(void)
{
	if (!tl_caller_phase)
		fs_cred_restore();
}

int fs_cred_apply(const struct fs_cred *cr)
{
	gid_t gids[RPC_AUTH_SYS_MAX_GIDS];
	int err;

	if (tl_frozen)
		return fs_cred_is_server(cr) ? 0 : -EPERM;

	for (uint32_t i = 0; i < cr->cr_ngids; i++)
		gids[i] = cr->cr_gids[i];
	err = set_groups(cr->cr_ngids, gids);
	if (err)
		return err;
	if (tl_known && tl_fsuid == cr->cr_uid && tl_fsgid == cr->cr_gid) {
		tl_caller_phase = true;
		return 0;
	}
	syscall(SYS_setfsgid, (gid_t)cr->cr_gid);
	syscall(SYS_setfsuid, (uid_t)cr->cr_uid);
	/*
	 * setfsuid/setfsgid report no errors: read back with an invalid id.
	 * These two calls stay (checked for issue 12): a switch that did not
	 * take leaves the thread with the server's identity (root, with the
	 * file system capabilities), and besides ids the kernel does not map
	 * (such as 0xffffffff) it fails on an allocation failure in
	 * prepare_creds() or an LSM refusal (security_task_fix_setuid), which
	 * nothing checked once at start-up can rule out.  They are made only
	 * when the ids change (see the top of this file).
	 */
	if ((uint32_t)syscall(SYS_setfsgid, (gid_t)-1) != cr->cr_gid ||
	    (uint32_t)syscall(SYS_setfsuid, (uid_t)-1) != cr->cr_uid) {
		tl_known = false;
		fs_cred_restore();
		return -EPERM;
	}
	tl_fsuid = cr->cr_uid;
	tl_fsgid = cr->cr_gid;
	tl_known = true;
	tl_caller_phase = true;
	return 0;
}

void fs_cred_restore(void)
{
	bool ok = true;

	if (tl_frozen)
		return;
	server_ids();
	if (!tl_known || tl_fsuid != tl_euid || tl_fsgid != tl_egid) {
		syscall(SYS_setfsuid, tl_euid);
		syscall(SYS_setfsgid, tl_egid);
	}
	/* Not root: the groups would count in the server's own checks. */
	if (!tl_known || (tl_euid != 0 && tl_ngids != 0)) {
		if (syscall(SYS_setgroups, (size_t)0, NULL) == 0)
			tl_ngids = 0;
		else
			ok = false; /* groups unknown: set them again next time */
	}
	tl_fsuid = tl_euid;
	tl_fsgid = tl_egid;
	tl_known = ok;
}

/* this thread has a file system context (umask) of its own */
static __thread bool tl_own_fs;
/* ... and its umask is 0 since the NFS layer cleared it: nothing else
 * changes it before rpcrdma_nfs3_thread_release() gives the thread back */
static __thread bool tl_umask_clear;

void fs_cred_no_umask(void)
{
	if (tl_umask_clear)
		return;
	if (!tl_own_fs && unshare(CLONE_FS) == 0)
		tl_own_fs = true;
	umask(0);
	/* with the umask shared by the process, another thread may set it */
	tl_umask_clear = tl_own_fs;
}

void rpcrdma_nfs3_thread_release(void)
{
	tl_caller_phase = false;
	tl_umask_clear = false; /* the thread's owner may change its umask */
	fs_cred_restore();
}

bool fs_cred_in_group(const struct fs_cred *cr, uint32_t gid)
{
	if (cr->cr_gid == gid)
		return true;
	for (uint32_t i = 0; i < cr->cr_ngids && i < RPC_AUTH_SYS_MAX_GIDS; i++)
		if (cr->cr_gids[i] == gid)
			return true;
	return false;
}

int fs_cred_may(const struct fs_cred *cr, mode_t mode, uint32_t uid,
		uint32_t gid, int want)
{
	unsigned bits;

	want &= R_OK | W_OK | X_OK;
	if (cr->cr_uid == 0) {
		if (!(want & X_OK) || S_ISDIR(mode) ||
		    (mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
			return 0;
		return -EACCES;
	}
	if (cr->cr_uid == uid)
		bits = (mode >> 6) & 7;
	else if (fs_cred_in_group(cr, gid))
		bits = (mode >> 3) & 7;
	else
		bits = mode & 7;
	return ((int)bits & want) == want ? 0 : -EACCES;
}
