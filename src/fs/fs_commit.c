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
 * RENAME's when they differ); a CREATE or MKDIR (NFSv4: an OPEN that
 * creates, CREATE) first commits the new regular file or directory, its
 * attributes set after it was made (an exclusive create's verifier in its
 * times), then the directory, as knfsd's nfsd_create_setattr() commits
 * child then parent (the second costs nothing where the first committed
 * the whole change: a journalling file system; CephFS, where syncing the
 * new inode waits for the MDS's safe reply of the create itself,
 * docs/cephfs.md "Speed"); after SETATTR, of the regular file or
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
 * fs_commit_data() (fs_posix_sync.c) too, in both versions, whatever the export's
 * sync option: exports(5) "async" is about metadata.
 *
 * The backend makes the object stable (be_commit_meta; the posix
 * backend's fsync, fs_posix_sync.c); this file decides when, and counts
 * the commits (ex_commits).  The calls that commit wait for the disk and
 * are never served on the transport thread (nfs3_transport_ok()).
 */
#include <errno.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "fs.h"
#include "fs_backend.h"

static int commit(struct fs_call *c, struct fs_fentry *fe)
{
	int err;

	if (!c->c_commit || !fe)
		return 0;
	/* symlinks, devices, FIFOs, sockets: nothing to sync (opening them
	 * is not free of effects) */
	if (fe->fe_type != S_IFREG && fe->fe_type != S_IFDIR)
		return 0;
	err = c->c_exp->ex_be->be_commit_meta(c, fe);
	if (err)
		return err;
	atomic_fetch_add_explicit(&c->c_exp->ex_commits, 1, memory_order_relaxed);
	return 0;
}

int fs_commit_dir(struct fs_call *c, struct fs_fentry *dfe)
{
	return commit(c, dfe);
}

int fs_commit_obj(struct fs_call *c, struct fs_fentry *fe)
{
	return commit(c, fe);
}
