// SPDX-License-Identifier: MIT
/*
 * nfs3_names.c - NFSv3 procedure and status names (RFC 1813 3.3, 2.6),
 * spelled as the Linux client's /proc/self/mountstats and nfsstat do, for
 * the server's statistics.
 */
#include "nfs3_internal.h"

static const char *const nfs3_proc_names[] = {
	[NFSPROC3_NULL] = "NULL",
	[NFSPROC3_GETATTR] = "GETATTR",
	[NFSPROC3_SETATTR] = "SETATTR",
	[NFSPROC3_LOOKUP] = "LOOKUP",
	[NFSPROC3_ACCESS] = "ACCESS",
	[NFSPROC3_READLINK] = "READLINK",
	[NFSPROC3_READ] = "READ",
	[NFSPROC3_WRITE] = "WRITE",
	[NFSPROC3_CREATE] = "CREATE",
	[NFSPROC3_MKDIR] = "MKDIR",
	[NFSPROC3_SYMLINK] = "SYMLINK",
	[NFSPROC3_MKNOD] = "MKNOD",
	[NFSPROC3_REMOVE] = "REMOVE",
	[NFSPROC3_RMDIR] = "RMDIR",
	[NFSPROC3_RENAME] = "RENAME",
	[NFSPROC3_LINK] = "LINK",
	[NFSPROC3_READDIR] = "READDIR",
	[NFSPROC3_READDIRPLUS] = "READDIRPLUS",
	[NFSPROC3_FSSTAT] = "FSSTAT",
	[NFSPROC3_FSINFO] = "FSINFO",
	[NFSPROC3_PATHCONF] = "PATHCONF",
	[NFSPROC3_COMMIT] = "COMMIT",
};

const char *const *rpcrdma_nfs3_proc_names(uint32_t *n)
{
	*n = sizeof(nfs3_proc_names) / sizeof(nfs3_proc_names[0]);
	return nfs3_proc_names;
}

const char *rpcrdma_nfs3_stat_name(uint32_t status)
{
	switch (status) {
	case NFS3_OK: return "NFS3_OK";
	case NFS3ERR_PERM: return "NFS3ERR_PERM";
	case NFS3ERR_NOENT: return "NFS3ERR_NOENT";
	case NFS3ERR_IO: return "NFS3ERR_IO";
	case NFS3ERR_NXIO: return "NFS3ERR_NXIO";
	case NFS3ERR_ACCES: return "NFS3ERR_ACCES";
	case NFS3ERR_EXIST: return "NFS3ERR_EXIST";
	case NFS3ERR_XDEV: return "NFS3ERR_XDEV";
	case NFS3ERR_NODEV: return "NFS3ERR_NODEV";
	case NFS3ERR_NOTDIR: return "NFS3ERR_NOTDIR";
	case NFS3ERR_ISDIR: return "NFS3ERR_ISDIR";
	case NFS3ERR_INVAL: return "NFS3ERR_INVAL";
	case NFS3ERR_FBIG: return "NFS3ERR_FBIG";
	case NFS3ERR_NOSPC: return "NFS3ERR_NOSPC";
	case NFS3ERR_ROFS: return "NFS3ERR_ROFS";
	case NFS3ERR_MLINK: return "NFS3ERR_MLINK";
	case NFS3ERR_NAMETOOLONG: return "NFS3ERR_NAMETOOLONG";
	case NFS3ERR_NOTEMPTY: return "NFS3ERR_NOTEMPTY";
	case NFS3ERR_DQUOT: return "NFS3ERR_DQUOT";
	case NFS3ERR_STALE: return "NFS3ERR_STALE";
	case NFS3ERR_REMOTE: return "NFS3ERR_REMOTE";
	case NFS3ERR_BADHANDLE: return "NFS3ERR_BADHANDLE";
	case NFS3ERR_NOT_SYNC: return "NFS3ERR_NOT_SYNC";
	case NFS3ERR_BAD_COOKIE: return "NFS3ERR_BAD_COOKIE";
	case NFS3ERR_NOTSUPP: return "NFS3ERR_NOTSUPP";
	case NFS3ERR_TOOSMALL: return "NFS3ERR_TOOSMALL";
	case NFS3ERR_SERVERFAULT: return "NFS3ERR_SERVERFAULT";
	case NFS3ERR_BADTYPE: return "NFS3ERR_BADTYPE";
	case NFS3ERR_JUKEBOX: return "NFS3ERR_JUKEBOX";
	default: return NULL;
	}
}
