// SPDX-License-Identifier: MIT
/*
 * fs_posix_file.c - the posix backend's descriptor helpers (fs_posix.h):
 * descriptors for the caller, lookups that never leave the export, RENAME's
 * system calls, and carrying out a sattr3 (RFC 1813 3.3.2).
 *
 * The layer opens file handles with the server's own credentials
 * (open_by_handle_at needs CAP_DAC_READ_SEARCH), then switches the thread
 * to the caller's identity (fs_cred.c) for the file system work, so the
 * kernel makes every permission decision.  Objects are reached only
 * through O_PATH descriptors and *at() calls that never follow a symlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs.h"
#include "fs_backend.h"
#include "fs_posix.h"

void fs_proc_path(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

/*
 * may_override - after EACCES: like knfsd, the owner may read and write its
 * own file whatever the mode bits say (an open file keeps working after
 * chmod on a local file system; NFS has no open), and READ is allowed with
 * execute permission (a client must read what it runs).  @st NULL: fstat
 * @fd for the owner.
 */
static bool may_override(struct fs_call *c, int fd, const struct stat *st,
			 int acc)
{
	struct stat own;

	if (!st) {
		if (fstat(fd, &own) < 0)
			return false;
		st = &own;
	}
	if (c->c_as_caller && c->c_cred.cr_uid == st->st_uid)
		return true;
	return acc == O_RDONLY &&
	       faccessat(fd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS) == 0;
}

/*
 * fs_reopen - a real descriptor for the regular file behind O_PATH @fd,
 * checked against the caller's identity (with the overrides of
 * may_override(), which re-open with the server's identity).  An open
 * for writing is O_NONBLOCK: a lease on the file (a delegation's,
 * fs_posix_lease.c, this server's own included; Samba's, the kernel
 * nfsd's) makes it fail with EWOULDBLOCK, -EAGAIN (NFS3ERR_JUKEBOX,
 * NFS4ERR_DELAY: try later), and starts the lease's break, instead of
 * holding the thread for up to lease-break-time; O_NONBLOCK changes
 * nothing else for a regular file (no system call more).
 */
int fs_reopen(struct fs_call *c, int fd, const struct stat *st, int flags)
{
	char path[32];
	int nfd, err;

	if ((flags & O_ACCMODE) != O_RDONLY)
		flags |= O_NONBLOCK;
	fs_proc_path(path, sizeof(path), fd);
	nfd = open(path, flags | O_CLOEXEC);
	if (nfd >= 0)
		return nfd;
	err = errno;
	if (err != EACCES)
		return -err;
	if (!may_override(c, fd, st, flags & O_ACCMODE))
		return -EACCES;
	fs_cred_restore();
	nfd = open(path, flags | O_CLOEXEC);
	err = errno;
	if (fs_cred_apply(&c->c_cred) < 0) {
		c->c_as_caller = false;
		if (nfd >= 0)
			close(nfd);
		return -EPERM;
	}
	return nfd >= 0 ? nfd : -err;
}

/*
 * remember - the caller passed the check for @acc on @fe: remember it with
 * the attributes @st fetched before the check; without them, for a READ
 * that checks after it read (c_check_after), have fs_open_recheck() check
 * again with the attributes it fetches then, and remember that, where
 * they let it be kept (c_keep).
 */
static void remember(struct fs_call *c, struct fs_fentry *fe,
		     const struct stat *st, int acc)
{
	if (!c->c_as_caller)
		return;
	if (st)
		fs_fcache_grant(fe, &c->c_cred, st, acc);
	else if (c->c_check_after && fe->fe_shard)
		c->c_keep = true;
}

/*
 * fs_file_fd - a descriptor of @fe's regular file open for @acc (O_RDONLY or
 * O_WRONLY; the entry owns it), for the caller (fs_become_caller done).
 * A descriptor the cache already holds is used only after the caller
 * passes the same check an open would make: faccessat(AT_EACCESS), which
 * checks the thread's fsuid, fsgid, groups and capabilities, with the
 * overrides of may_override().  Otherwise the file is re-opened as the
 * caller (fs_reopen()) and the descriptor kept in the entry.  Either
 * decision for the caller is remembered in the entry with the attributes
 * @st it was made under (fs_fcache_grant()), so the same caller's next
 * READ or WRITE skips the faccessat while the file's ctime, mode, owner
 * and group stay as they were (fs_fcache_granted()); another caller, or
 * any change of the attributes (chmod, chown, an ACL: the ctime moves),
 * is checked again.  A READ that checks after it read (c_check_after)
 * and has no attributes before: a remembered decision for the caller
 * lets the descriptor be used now (c_unchecked set) and
 * fs_open_recheck() compares the attributes fetched after the read.
 * @st: the file's attributes fetched by this call, or NULL (fetched only
 * when needed; then nothing is remembered or skipped).
 * Return: the descriptor, or a negative errno (-EACCES, ...).
 */
int fs_file_fd(struct fs_call *c, struct fs_fentry *fe,
		   const struct stat *st, int acc)
{
	int fd = fs_fcache_fd(fe, acc);

	if (fd >= 0) {
		if (c->c_as_caller &&
		    fs_fcache_granted(fe, &c->c_cred, st, acc))
			return fd; /* this caller passed, nothing changed since */
		if (c->c_as_caller && !st && c->c_check_after &&
		    fs_fcache_granted_to(fe, &c->c_cred, acc)) {
			c->c_unchecked = true; /* fs_open_recheck() decides */
			return fd;
		}
		if (faccessat(fe->fe_path, "", acc == O_RDONLY ? R_OK : W_OK,
			      AT_EMPTY_PATH | AT_EACCESS) < 0) {
			if (errno != EACCES)
				return -errno;
			if (!may_override(c, fe->fe_path, st, acc))
				return -EACCES;
		}
		remember(c, fe, st, acc);
		return fd;
	}
	fd = fs_reopen(c, fe->fe_path, st, acc);
	if (fd < 0)
		return fd;
	fd = fs_fcache_set_fd(fe, acc, fd);
	remember(c, fe, st, acc);
	return fd;
}

int fs_dir_may_write(int dirfd)
{
	if (faccessat(dirfd, "", W_OK | X_OK, AT_EMPTY_PATH | AT_EACCESS) < 0)
		return -errno;
	return 0;
}

int fs_posix_rename(struct fs_call *c, int fromfd, const char *fname,
		    int tofd, const char *tname, bool two_dirs, uint8_t *fh,
		    uint32_t *fhlen, bool *have_fh)
{
	int err;

	*have_fh = false;
	/* Nothing replaced: the rename itself checked that the caller may
	 * write both directories, and the cache has nothing to learn. */
	if (renameat2(fromfd, fname, tofd, tname, RENAME_NOREPLACE) == 0)
		return 0;
	/* A name in the way, or another failure: knfsd's order from here.
	 * Checked before the rename, not after a failure: a rename onto the
	 * same file (one name, or two links of one inode) succeeds without
	 * the kernel's permission checks. */
	err = fs_dir_may_write(fromfd);
	if (!err && two_dirs)
		err = fs_dir_may_write(tofd);
	if (err)
		return err;
	*have_fh = fs_unlink_fh(c, tofd, tname, fh, fhlen);
	if (renameat(fromfd, fname, tofd, tname) < 0)
		return -errno;
	return 0;
}

/*
 * fs_unlink_fh - before REMOVE or RENAME takes @name out of @dirfd: the
 * handle of what it names, when the open-file cache could hold it (its
 * entry is forgotten once the name is gone, fs_fcache_forget()).
 * Return: true when @fh holds the handle.
 */
bool fs_unlink_fh(struct fs_call *c, int dirfd, const char *name,
		      uint8_t *fh, uint32_t *len)
{
	return c->c_exp->ex_fcache &&
	       fs_fh_make(c->c_exp, dirfd, name, fh, len) == 0;
}

/*
 * fs_posix_lookup_fh - be_lookup_fh of the posix backend.  With @hint_ino (READDIRPLUS: the entry's d_ino) of
 * an object the caches hold, first one statx() by name: when it sees that
 * object, the entry's handle (an entry made after the mark is not taken:
 * it may hold another object that took a number freed meanwhile).
 * Otherwise the object is opened (O_PATH) and looked at with statx() on
 * the descriptor, which also gives its mount; the handle is a cache
 * entry's when one holds the same object (both descriptors keep their
 * objects alive, so the same st_dev and st_ino is the same object), else
 * name_to_handle_at()'s.  So a miss costs what it did (openat, one stat,
 * name_to_handle_at, close), a hit one system call less, a READDIRPLUS
 * entry whose object is cached one system call in all.
 */
int fs_posix_lookup_fh(struct fs_call *c, struct fs_fentry *dir,
		       const struct stat *dst, const char *name,
		       uint64_t hint_ino, uint8_t *fh, uint32_t *lenp,
		       struct stat *st, bool *st_ok)
{
	const struct rpcrdma_nfs3_export *exp = c->c_exp;
	static const struct fs_fcache_mark any = {
		.fm_clock = { UINT64_MAX, UINT64_MAX } };
	uint8_t key[FS_BE_KEY_MAX];
	uint32_t keylen = 0, type = 0;
	struct fs_fcache_mark m;
	bool here;
	int fd, err;

	(void)dst;
	if (hint_ino && fs_fcache_fh_of_ino(exp, &any, exp->ex_dev,
					    (ino_t)hint_ino, fh, lenp) == 0) {
		fs_fcache_mark(exp, &m);
		err = fs_stat_at(exp, dir->fe_path, name, st, &here);
		if (err == -ENOENT)
			return err; /* what the open would have said */
		if (!err && here &&
		    (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode)) &&
		    fs_fcache_fh_of_ino(exp, &m, st->st_dev, st->st_ino, fh,
					lenp) == 0) {
			*st_ok = true;
			return 0;
		}
	}
	fd = openat(dir->fe_path, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = fs_stat_at(exp, fd, "", st, &here);
	if (err)
		goto out;
	if (st->st_dev != exp->ex_dev) {
		err = -EXDEV; /* a mount inside the export: not crossed */
		goto out;
	}
	*st_ok = true;
	if (here && (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode)) &&
	    fs_fcache_fh_of_ino(exp, &any, st->st_dev, st->st_ino, fh,
				lenp) == 0)
		goto out;
	err = fs_posix_key(exp, fd, "", key, &keylen, &type);
	if (!err)
		err = fs_fh_encode(exp, type, key, keylen, fh, lenp);
out:
	close(fd);
	return err;
}

int fs_stat_at(const struct rpcrdma_nfs3_export *exp, int dirfd,
	       const char *name, struct stat *st, bool *here)
{
	struct statx sx;
	int flags = AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT;

	*here = false;
	if (!name[0])
		flags |= AT_EMPTY_PATH; /* the descriptor itself */
	if (statx(dirfd, name, flags, STATX_BASIC_STATS | STATX_MNT_ID, &sx) < 0)
		return -errno;
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	st->st_ino = sx.stx_ino;
	st->st_mode = sx.stx_mode;
	st->st_nlink = sx.stx_nlink;
	st->st_uid = sx.stx_uid;
	st->st_gid = sx.stx_gid;
	st->st_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
	st->st_size = (off_t)sx.stx_size;
	st->st_blksize = (blksize_t)sx.stx_blksize;
	st->st_blocks = (blkcnt_t)sx.stx_blocks;
	st->st_atim.tv_sec = sx.stx_atime.tv_sec;
	st->st_atim.tv_nsec = sx.stx_atime.tv_nsec;
	st->st_mtim.tv_sec = sx.stx_mtime.tv_sec;
	st->st_mtim.tv_nsec = sx.stx_mtime.tv_nsec;
	st->st_ctim.tv_sec = sx.stx_ctime.tv_sec;
	st->st_ctim.tv_nsec = sx.stx_ctime.tv_nsec;
	*here = (sx.stx_mask & STATX_MNT_ID) &&
		(sx.stx_mask & STATX_BASIC_STATS) == STATX_BASIC_STATS &&
		sx.stx_mnt_id == (uint64_t)(uint32_t)exp->ex_mnt_id &&
		st->st_dev == exp->ex_dev;
	return 0;
}

int fs_lookup_at(const struct rpcrdma_nfs3_export *exp, int dirfd,
		 const struct stat *dst, const char *name, int *fdp,
		 struct stat *st)
{
	const char *which = name;
	int fd, err;

	/* ".." of the export root is the root itself */
	if (strcmp(name, "..") == 0 && fs_is_root(exp, dst))
		which = ".";
	fd = openat(dirfd, which, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		err = -errno;
		goto out_close;
	}
	if (st->st_dev != exp->ex_dev) {
		err = -EXDEV; /* a mount inside the export: not crossed */
		goto out_close;
	}
	*fdp = fd;
	return 0;

out_close:
	close(fd);
	return err;
}

/*
 * On the descriptor itself (AT_EMPTY_PATH) rather than through its
 * /proc/self/fd link: the same system call without a path walk through
 * procfs.  utimensat takes AT_EMPTY_PATH since Linux 5.8 (older: EINVAL),
 * chmod on a descriptor's path needs fchmodat2 (Linux 6.6; older: ENOSYS);
 * where refused, the /proc link serves, and is used from then on.
 */
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
static _Atomic bool g_no_utimens_empty, g_no_fchmodat2;

static int set_times_fd(int fd, const struct timespec ts[2])
{
	char path[32];

	if (!g_no_utimens_empty) {
		if (utimensat(fd, "", ts, AT_EMPTY_PATH) == 0)
			return 0;
		if (errno != EINVAL)
			return -errno;
		g_no_utimens_empty = true;
	}
	fs_proc_path(path, sizeof(path), fd);
	return utimensat(AT_FDCWD, path, ts, 0) < 0 ? -errno : 0;
}

static int chmod_fd(int fd, mode_t mode)
{
	char path[32];

	if (!g_no_fchmodat2) {
		if (syscall(SYS_fchmodat2, fd, "", mode, AT_EMPTY_PATH) == 0)
			return 0;
		if (errno != ENOSYS && errno != EINVAL)
			return -errno;
		g_no_fchmodat2 = true;
	}
	fs_proc_path(path, sizeof(path), fd);
	return fchmodat(AT_FDCWD, path, mode, 0) < 0 ? -errno : 0;
}

int fs_set_times(int fd, const struct fs_sattr *sa)
{
	struct timespec ts[2];

	if (sa->sa_atime_how == FS_DONT_CHANGE &&
	    sa->sa_mtime_how == FS_DONT_CHANGE)
		return 0;
	ts[0].tv_sec = sa->sa_atime.tv_sec;
	ts[0].tv_nsec = sa->sa_atime_how == FS_SET_TO_CLIENT_TIME ? sa->sa_atime.tv_nsec :
			sa->sa_atime_how == FS_SET_TO_SERVER_TIME ? UTIME_NOW : UTIME_OMIT;
	ts[1].tv_sec = sa->sa_mtime.tv_sec;
	ts[1].tv_nsec = sa->sa_mtime_how == FS_SET_TO_CLIENT_TIME ? sa->sa_mtime.tv_nsec :
			sa->sa_mtime_how == FS_SET_TO_SERVER_TIME ? UTIME_NOW : UTIME_OMIT;
	return set_times_fd(fd, ts);
}

/*
 * touch_as_writer - after utimensat() refused a caller who does not own
 * the file (EPERM) a sattr3 that sets atime and/or mtime only to the
 * server's time (SET_TO_SERVER_TIME, no time of the client's choosing).
 * utimensat() lets a writer set both times to now but asks for ownership
 * as soon as one of them is left alone (UTIME_OMIT), which is what the
 * Linux client sends for open(O_TRUNC) by a writer that is not the owner
 * (size and mtime).  knfsd asks for write permission only whenever no time
 * is the client's (RFC 1813 3.3.2 leaves it to the server): so does this,
 * checked as the caller (EACCES without it), then the times are set with
 * the server's identity.  Return: 0 or a negative errno.
 */
static int touch_as_writer(struct fs_call *c, int fd,
			   const struct fs_sattr *sa)
{
	int err;

	if (sa->sa_atime_how == FS_SET_TO_CLIENT_TIME ||
	    sa->sa_mtime_how == FS_SET_TO_CLIENT_TIME)
		return -EPERM;
	if (faccessat(fd, "", W_OK, AT_EMPTY_PATH | AT_EACCESS) < 0)
		return errno == EACCES ? -EACCES : -errno;
	fs_cred_restore();
	err = fs_set_times(fd, sa);
	if (fs_cred_apply(&c->c_cred) < 0) {
		c->c_as_caller = false;
		return -EPERM;
	}
	return err;
}

/*
 * fs_sattr_apply - carry out a sattr3 on O_PATH @fd (RFC 1813 3.3.2): size,
 * then owner, then mode (a chown may clear set-id bits), then times.
 */
int fs_sattr_apply(struct fs_call *c, int fd, const struct stat *st,
		       const struct fs_sattr *sa, bool skip_mode,
		       struct fs_fentry *fe)
{
	int err, wfd;

	if (sa->sa_set_size) {
		err = fs_want_regular(st);
		if (err)
			return err;
		if (sa->sa_size > INT64_MAX)
			return -EFBIG;
		/* @fe: the cache's write descriptor (@fd is its O_PATH) */
		wfd = fe ? fs_file_fd(c, fe, st, O_WRONLY) : fs_reopen(c, fd, st, O_WRONLY);
		if (wfd < 0)
			return wfd;
		err = ftruncate(wfd, (off_t)sa->sa_size) < 0 ? -errno : 0;
		if (!fe)
			close(wfd);
		if (err)
			return err;
	}
	if (sa->sa_set_uid || sa->sa_set_gid) {
		if (fchownat(fd, "", sa->sa_set_uid ? sa->sa_uid : (uid_t)-1,
			     sa->sa_set_gid ? sa->sa_gid : (gid_t)-1,
			     AT_EMPTY_PATH) < 0)
			return -errno;
	}
	if (sa->sa_set_mode && !skip_mode && !S_ISLNK(st->st_mode)) {
		err = chmod_fd(fd, sa->sa_mode & 07777);
		if (err)
			return err;
	}
	err = fs_set_times(fd, sa);
	if (err == -EPERM && c->c_as_caller)
		err = touch_as_writer(c, fd, sa);
	return err;
}
