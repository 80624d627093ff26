// SPDX-License-Identifier: MIT
/*
 * fs_memory_perm.c - the memory backend's permission decisions, made from
 * the caller's credentials (c_cred, after squashing) and the POSIX mode
 * bits, with the kernel's rules for uid 0 (CAP_DAC_OVERRIDE, CAP_FOWNER,
 * CAP_CHOWN, CAP_FSETID) and knfsd's overrides for open; and the
 * operations that are mostly such decisions: access, open, setattr.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fs_memory.h"

int fsm_may(const struct fs_cred *cr, const struct fsm_node *n, int want)
{
	return fs_cred_may(cr, n->mn_mode, n->mn_uid, n->mn_gid, want);
}

bool fsm_is_owner(const struct fs_cred *cr, const struct fsm_node *n)
{
	return cr->cr_uid == 0 || cr->cr_uid == n->mn_uid;
}

/* S_ISUID, and S_ISGID where group execute makes it a privilege (without
 * it S_ISGID marks mandatory locking, not a privilege). */
static mode_t privs_of(mode_t mode)
{
	mode_t kill = mode & S_ISUID;

	if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		kill |= S_ISGID;
	return kill;
}

/*
 * fsm_kill_privs_locked - a write or a truncate by @cr (not uid 0, which
 * has CAP_FSETID): S_ISUID goes, and S_ISGID where group execute makes it
 * a privilege or where the writer is not in the file's group (as Linux
 * since 6.0, setattr_should_drop_sgid(): vm/memory-backend compares).
 */
void fsm_kill_privs_locked(const struct fs_cred *cr, struct fsm_node *n,
			   const struct timespec *now)
{
	mode_t kill;

	if (cr->cr_uid == 0 || !S_ISREG(n->mn_mode))
		return;
	kill = privs_of(n->mn_mode);
	if ((n->mn_mode & S_ISGID) && !fs_cred_in_group(cr, n->mn_gid))
		kill |= S_ISGID;
	if (kill) {
		n->mn_mode &= ~kill;
		n->mn_ctime = *now;
	}
}

int fsm_be_access(struct fs_call *c, struct fs_fentry *fe,
		  const struct stat *st, int mode)
{
	struct fsm_node *n = fsm_fe(fe);
	struct fsm_export *mx = n->mn_mx;
	int err;

	(void)st;
	pthread_mutex_lock(&mx->mx_lock);
	err = fsm_may(&c->c_cred, n, mode & (R_OK | W_OK | X_OK));
	pthread_mutex_unlock(&mx->mx_lock);
	return err;
}

/* be_open's decision: the owner always (knfsd: an NFS file has no open to
 * keep working after a chmod), else the mode; read also with execute. */
static int may_open_locked(const struct fs_cred *cr, const struct fsm_node *n,
			   int acc)
{
	int want;

	if (cr->cr_uid == n->mn_uid)
		return 0;
	want = acc == O_WRONLY ? FSM_W : acc == O_RDWR ? FSM_R | FSM_W : FSM_R;
	if (fsm_may(cr, n, want) == 0)
		return 0;
	if (acc == O_RDONLY && fsm_may(cr, n, FSM_X) == 0)
		return 0;
	return -EACCES;
}

int fsm_be_open(struct fs_call *c, struct fs_fentry *fe, const struct stat *st,
		int acc)
{
	struct fsm_node *n = fsm_fe(fe);
	struct fsm_export *mx = n->mn_mx;
	int err;

	(void)st;
	if ((acc & O_ACCMODE) != O_RDONLY)
		fsm_lease_break(c->c_exp, mx, n->mn_id);
	pthread_mutex_lock(&mx->mx_lock);
	err = may_open_locked(&c->c_cred, n, acc & O_ACCMODE);
	pthread_mutex_unlock(&mx->mx_lock);
	return err;
}

/* The size part of a setattr: a regular file, by a writer or its owner. */
static int set_size_locked(const struct fs_cred *cr, struct fsm_node *n,
			   uint64_t size, const struct timespec *now)
{
	int err;

	if (S_ISDIR(n->mn_mode))
		return -EISDIR;
	if (!S_ISREG(n->mn_mode))
		return -EINVAL;
	if (size > (uint64_t)FSM_SIZE_MAX)
		return -EFBIG;
	err = may_open_locked(cr, n, O_WRONLY);
	if (err)
		return err;
	if (size != n->mn_size) {
		fsm_truncate_locked(n, size);
		n->mn_mtime = n->mn_ctime = *now;
	}
	fsm_kill_privs_locked(cr, n, now);
	return 0;
}

/*
 * The owner part, as chown(2) on Linux: uid 0 may give the object to
 * anyone; the owner may "change" the owner to itself and the group to
 * one of its groups (or keep it).  Any chown of a non-directory clears
 * S_ISUID, and S_ISGID with group execute, whoever makes it.
 */
static int set_owner_locked(const struct fs_cred *cr, struct fsm_node *n,
			    const struct fs_sattr *sa, const struct timespec *now)
{
	if (cr->cr_uid != 0) {
		if (sa->sa_set_uid && (cr->cr_uid != n->mn_uid ||
				       sa->sa_uid != n->mn_uid))
			return -EPERM;
		if (sa->sa_set_gid && (cr->cr_uid != n->mn_uid ||
				       (sa->sa_gid != n->mn_gid &&
					!fs_cred_in_group(cr, sa->sa_gid))))
			return -EPERM;
	}
	if (sa->sa_set_uid)
		n->mn_uid = sa->sa_uid;
	if (sa->sa_set_gid)
		n->mn_gid = sa->sa_gid;
	if (!S_ISDIR(n->mn_mode))
		n->mn_mode &= ~privs_of(n->mn_mode);
	n->mn_ctime = *now;
	return 0;
}

/* The mode part: the owner or uid 0; S_ISGID dropped for a caller not
 * in the object's group (uid 0 keeps it). */
static int set_mode_locked(const struct fs_cred *cr, struct fsm_node *n,
			   uint32_t mode, const struct timespec *now)
{
	mode &= 07777;
	if (!fsm_is_owner(cr, n))
		return -EPERM;
	if (cr->cr_uid != 0 && !fs_cred_in_group(cr, n->mn_gid))
		mode &= ~(uint32_t)S_ISGID;
	n->mn_mode = (n->mn_mode & S_IFMT) | mode;
	n->mn_ctime = *now;
	return 0;
}

static bool bad_time(uint32_t how, const struct timespec *ts)
{
	return how == FS_SET_TO_CLIENT_TIME &&
	       (ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L);
}

/*
 * The times part, as utimensat(2): a time of the client's choosing needs
 * the owner or uid 0 (-EPERM); setting times only to the server's now
 * also a writer (-EACCES), as knfsd asks whenever no time is the
 * client's.  ctime becomes now.
 */
static int set_times_locked(const struct fs_cred *cr, struct fsm_node *n,
			    const struct fs_sattr *sa, const struct timespec *now)
{
	uint32_t ah = sa->sa_atime_how, mh = sa->sa_mtime_how;

	if (ah == FS_DONT_CHANGE && mh == FS_DONT_CHANGE)
		return 0;
	if (ah > FS_SET_TO_CLIENT_TIME || mh > FS_SET_TO_CLIENT_TIME ||
	    bad_time(ah, &sa->sa_atime) || bad_time(mh, &sa->sa_mtime))
		return -EINVAL;
	if (!fsm_is_owner(cr, n)) {
		if (ah == FS_SET_TO_CLIENT_TIME || mh == FS_SET_TO_CLIENT_TIME)
			return -EPERM;
		if (fsm_may(cr, n, FSM_W))
			return -EACCES;
	}
	if (ah != FS_DONT_CHANGE)
		n->mn_atime = ah == FS_SET_TO_CLIENT_TIME ? sa->sa_atime : *now;
	if (mh != FS_DONT_CHANGE)
		n->mn_mtime = mh == FS_SET_TO_CLIENT_TIME ? sa->sa_mtime : *now;
	n->mn_ctime = *now;
	return 0;
}

/*
 * be_setattr: size, then owner, then mode, then times, each checked as
 * the system call it stands for would be (the posix backend makes those
 * calls one after the other: a later part refused leaves the earlier
 * ones done, here too).
 */
int fsm_be_setattr(struct fs_call *c, struct fs_fentry *fe,
		   const struct stat *pre, const struct fs_sattr *sa,
		   bool skip_mode)
{
	const struct fs_cred *cr = &c->c_cred;
	struct fsm_node *n = fsm_fe(fe);
	struct fsm_export *mx = n->mn_mx;
	struct timespec now = fsm_now();
	int err = 0;

	(void)pre;
	if (sa->sa_set_size)
		fsm_lease_break(c->c_exp, mx, n->mn_id);
	pthread_mutex_lock(&mx->mx_lock);
	if (sa->sa_set_size)
		err = set_size_locked(cr, n, sa->sa_size, &now);
	if (!err && (sa->sa_set_uid || sa->sa_set_gid))
		err = set_owner_locked(cr, n, sa, &now);
	if (!err && sa->sa_set_mode && !skip_mode && !S_ISLNK(n->mn_mode))
		err = set_mode_locked(cr, n, sa->sa_mode, &now);
	if (!err)
		err = set_times_locked(cr, n, sa, &now);
	pthread_mutex_unlock(&mx->mx_lock);
	return err;
}
