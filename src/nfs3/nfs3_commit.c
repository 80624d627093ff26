// SPDX-License-Identifier: MIT
/*
 * nfs3_commit.c - commit_metadata: a namespace operation (CREATE, MKDIR,
 * SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK) is on stable storage before
 * its reply says NFS3_OK.
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
 * RENAME's when they differ).  On the journalling file systems Linux
 * exports (ext4, xfs, btrfs) that commits the transaction holding the
 * whole change, the new inode included.  Nothing is committed on tmpfs
 * and ramfs (ex_mem_fs: no disk), nor for an "async" entry.
 *
 * The fsync needs a real descriptor of the directory (an O_PATH one is
 * refused with EBADF): one is opened once per directory-cache entry and
 * kept as the entry's read descriptor (fe_rfd, otherwise unused for
 * directories), opened as the caller, or with the server's identity when
 * the caller may not read the directory (committing reveals nothing).
 * The calls that commit wait for the disk and are never served on the
 * transport thread (nfs3_transport_ok()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <unistd.h>

#include "nfs3_internal.h"

int (*nfs3_commit_fsync)(int fd) = fsync;

/* A descriptor of @dfe's directory that fsync accepts, or -errno. */
static int dir_sync_fd(struct nfs3_call *c, struct nfs3_fentry *dfe)
{
	int fd = nfs3_fcache_fd(dfe, O_RDONLY), err;

	if (fd >= 0)
		return fd;
	fd = openat(dfe->fe_path, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM) && c->c_as_caller) {
		/* a directory the caller may write to but not read */
		nfs3_cred_restore();
		fd = openat(dfe->fe_path, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = errno;
		if (nfs3_cred_apply(&c->c_cred) < 0)
			c->c_as_caller = false; /* nothing left to do as the caller */
		errno = err;
	}
	if (fd < 0)
		return -errno;
	return nfs3_fcache_set_fd(dfe, O_RDONLY, fd);
}

int nfs3_commit_dir(struct nfs3_call *c, struct nfs3_fentry *dfe)
{
	int fd;

	if (!c->c_commit || !dfe)
		return 0;
	fd = dir_sync_fd(c, dfe);
	if (fd < 0)
		return fd;
	if (nfs3_commit_fsync(fd) < 0)
		return -errno;
	atomic_fetch_add_explicit(&c->c_exp->ex_commits, 1, memory_order_relaxed);
	return 0;
}
