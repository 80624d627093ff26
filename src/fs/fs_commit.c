// SPDX-License-Identifier: MIT
/*
 * fs_commit.c - commit_metadata: a namespace operation (CREATE, MKDIR,
 * SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK), and SETATTR, is on stable
 * storage before its reply says NFS3_OK.
 *
 * RFC 1813 (section 3.3, and 4.8 on server reboots) expects a server to
 * have committed the result of a successful change of the namespace
 * before replying: after a server crash, a client that saw the reply must
 * not find the name back as before (a retransmitted REMOVE would answer
 * NOENT, a file a client then wrote into would be gone).  knfsd does this
 * for exports marked "sync" (exports(5), the default) after each of these
 * procedures (commit_metadata(): the file system's own hook, or a
 * metadata writeback of the directory); "async" exports skip it.  Here:
 * fsync(2) of the directory the name was added to or taken from (both of
 * RENAME's when they differ); after SETATTR, of the regular file or
 * directory itself (an fsync, so a file's dirty data is written too:
 * there is no system call for its inode alone; other types have no
 * descriptor to sync and are left to the next journal commit).  On the
 * journalling file systems Linux exports (ext4, xfs, btrfs) that commits
 * the transaction holding the whole change, the new inode included.
 * Nothing is committed on tmpfs and ramfs (ex_mem_fs: no disk), nor for
 * an "async" entry.
 *
 * The NFSv4.1 server (src/nfs4) commits the same way through the same
 * calls, on its fs_call (nfs4_op_begin() sets c_commit): OPEN that
 * creates (RFC 8881 18.16) or truncates, CREATE, REMOVE, RENAME, LINK and
 * SETATTR, as knfsd's nfsd4 operations do through the same
 * commit_metadata().
 *
 * File data made stable for a client (WRITE with DATA_SYNC or FILE_SYNC,
 * COMMIT; RFC 1813 3.3.7, 3.3.21; RFC 8881 18.32, 18.3) goes through
 * fs_commit_data() here too, in both versions, whatever the export's
 * sync option: exports(5) "async" is about metadata.
 *
 * The fsync needs a real descriptor (an O_PATH one is refused with
 * EBADF): the entry's write or read descriptor when it has one, else one
 * opened read-only and kept as the entry's read descriptor (for a
 * directory otherwise unused), opened as the caller, or with the server's
 * identity when the caller may not read it (committing reveals nothing).
 * The calls that commit wait for the disk and are never served on the
 * transport thread (nfs3_transport_ok()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fs.h"

int (*fs_commit_fsync)(int fd) = fsync;
int (*fs_commit_fdatasync)(int fd) = fdatasync;
ssize_t (*fs_commit_pwritev2)(int fd, const struct iovec *iov, int cnt,
			      off_t off, int flags) = pwritev2;

int fs_commit_data(int fd, bool datasync)
{
	if ((datasync ? fs_commit_fdatasync(fd) : fs_commit_fsync(fd)) < 0)
		return -errno;
	return 0;
}

int fs_write_data(int fd, const uint8_t *buf, size_t len, off_t off,
		  uint32_t stable, size_t *done)
{
	int flags = stable == FS_FILE_SYNC ? RWF_SYNC :
		    stable == FS_DATA_SYNC ? RWF_DSYNC : 0;
	bool then_commit = flags && len == 0;
	int err = 0;

	*done = 0;
	while (*done < len) {
		struct iovec iov = {
			.iov_base = (void *)(buf + *done),
			.iov_len = len - *done,
		};
		ssize_t n = fs_commit_pwritev2(fd, &iov, 1, off + (off_t)*done,
					       flags);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EOPNOTSUPP && flags) {
			flags = 0; /* the flag refused: write, then sync */
			then_commit = true;
			continue;
		}
		if (n <= 0) {
			err = n < 0 ? -errno : -ENOSPC;
			break;
		}
		*done += (size_t)n;
	}
	if (err && *done == 0)
		return err;
	/* a write ended short by an error answers what was written */
	return then_commit ? fs_commit_data(fd, stable == FS_DATA_SYNC) : 0;
}

/*
 * open_for_sync - open @path (relative to @dirfd) read-only, as the caller
 * first, with the server's identity when the caller may not read it
 * (committing reveals nothing; the caller's rights decided the operation).
 * Return: the descriptor, or -errno.
 */
static int open_for_sync(struct fs_call *c, int dirfd, const char *path,
			 int flags)
{
	int fd, err;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | flags);
	if (fd < 0 && (errno == EACCES || errno == EPERM) && c->c_as_caller) {
		fs_cred_restore();
		fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | flags);
		err = errno;
		if (fs_cred_apply(&c->c_cred) < 0)
			c->c_as_caller = false; /* nothing left to do as the caller */
		errno = err;
	}
	return fd < 0 ? -errno : fd;
}

/*
 * sync_fd - a descriptor of @fe's object that fsync accepts (kept in the
 * entry), or -errno; -EBADF for a type with none (symlinks, devices,
 * FIFOs, sockets: opening them is not free of effects).
 */
static int sync_fd(struct fs_call *c, struct fs_fentry *fe)
{
	char path[32];
	int fd;

	fd = fs_fcache_fd(fe, O_WRONLY);
	if (fd < 0)
		fd = fs_fcache_fd(fe, O_RDONLY);
	if (fd >= 0)
		return fd;
	if (fe->fe_type == S_IFDIR) {
		fd = open_for_sync(c, fe->fe_path, ".", O_DIRECTORY);
	} else if (fe->fe_type == S_IFREG) {
		fs_proc_path(path, sizeof(path), fe->fe_path);
		fd = open_for_sync(c, AT_FDCWD, path, 0);
	} else {
		return -EBADF;
	}
	if (fd < 0)
		return fd;
	return fs_fcache_set_fd(fe, O_RDONLY, fd);
}

/* sync_counted - the fsync of a commit, counted in the export. 0/-errno. */
static int sync_counted(struct fs_call *c, int fd)
{
	if (fs_commit_fsync(fd) < 0)
		return -errno;
	atomic_fetch_add_explicit(&c->c_exp->ex_commits, 1, memory_order_relaxed);
	return 0;
}

static int commit(struct fs_call *c, struct fs_fentry *fe)
{
	int fd;

	if (!c->c_commit || !fe)
		return 0;
	fd = sync_fd(c, fe);
	if (fd == -EBADF)
		return 0;
	if (fd < 0)
		return fd;
	return sync_counted(c, fd);
}

int fs_commit_dir(struct fs_call *c, struct fs_fentry *dfe)
{
	return commit(c, dfe);
}

int fs_commit_obj(struct fs_call *c, struct fs_fentry *fe)
{
	return commit(c, fe);
}

int fs_commit_path(struct fs_call *c, int fd, mode_t type)
{
	char path[32];
	int sfd, err;

	if (!c->c_commit)
		return 0;
	if (type == S_IFDIR) {
		sfd = open_for_sync(c, fd, ".", O_DIRECTORY);
	} else if (type == S_IFREG) {
		fs_proc_path(path, sizeof(path), fd);
		sfd = open_for_sync(c, AT_FDCWD, path, 0);
	} else {
		return 0;
	}
	if (sfd < 0)
		return sfd;
	err = sync_counted(c, sfd);
	close(sfd);
	return err;
}
