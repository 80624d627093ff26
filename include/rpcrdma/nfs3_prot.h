/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma/nfs3_prot.h - the protocol constants of NFS version 3 and
 * MOUNT version 3 (RFC 1813), in one place for the server (src/nfs3),
 * the client library (src/nfsc) and the tools.
 *
 * Names are the RFC's.  The ONC RPC message constants (RFC 5531) live in
 * <rpcrdma/wire.h>, which this header includes.
 */
#ifndef RPCRDMA_NFS3_PROT_H
#define RPCRDMA_NFS3_PROT_H

#include <rpcrdma/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Program numbers (RFC 1813 section 1.1 and 5) ---- */

#define RPCRDMA_NFS3_PROGRAM 100003u
#define RPCRDMA_NFS3_VERSION 3u
#define RPCRDMA_MNT_PROGRAM 100005u
#define RPCRDMA_MNT_VERSION 3u

/* ---- NFS version 3 (RFC 1813 sections 2 and 3) ---- */

/** Largest NFSv3 file handle in bytes (RFC 1813 2.4, NFS3_FHSIZE). */
#define RPCRDMA_NFS3_FHSIZE 64u
/** Bytes of cookieverf3, createverf3 and writeverf3 (RFC 1813 2.4). */
#define NFS3_VERFSIZE 8u

/** nfsstat3 (RFC 1813 2.6). */
enum nfs3_stat {
	NFS3_OK = 0,
	NFS3ERR_PERM = 1,
	NFS3ERR_NOENT = 2,
	NFS3ERR_IO = 5,
	NFS3ERR_NXIO = 6,
	NFS3ERR_ACCES = 13,
	NFS3ERR_EXIST = 17,
	NFS3ERR_XDEV = 18,
	NFS3ERR_NODEV = 19,
	NFS3ERR_NOTDIR = 20,
	NFS3ERR_ISDIR = 21,
	NFS3ERR_INVAL = 22,
	NFS3ERR_FBIG = 27,
	NFS3ERR_NOSPC = 28,
	NFS3ERR_ROFS = 30,
	NFS3ERR_MLINK = 31,
	NFS3ERR_NAMETOOLONG = 63,
	NFS3ERR_NOTEMPTY = 66,
	NFS3ERR_DQUOT = 69,
	NFS3ERR_STALE = 70,
	NFS3ERR_REMOTE = 71,
	NFS3ERR_BADHANDLE = 10001,
	NFS3ERR_NOT_SYNC = 10002,
	NFS3ERR_BAD_COOKIE = 10003,
	NFS3ERR_NOTSUPP = 10004,
	NFS3ERR_TOOSMALL = 10005,
	NFS3ERR_SERVERFAULT = 10006,
	NFS3ERR_BADTYPE = 10007,
	NFS3ERR_JUKEBOX = 10008,
};

/** ftype3 (RFC 1813 2.6). */
enum nfs3_ftype {
	NF3REG = 1,
	NF3DIR = 2,
	NF3BLK = 3,
	NF3CHR = 4,
	NF3LNK = 5,
	NF3SOCK = 6,
	NF3FIFO = 7,
};

/** Procedures (RFC 1813 3.3). */
enum nfs3_proc {
	NFSPROC3_NULL = 0,
	NFSPROC3_GETATTR = 1,
	NFSPROC3_SETATTR = 2,
	NFSPROC3_LOOKUP = 3,
	NFSPROC3_ACCESS = 4,
	NFSPROC3_READLINK = 5,
	NFSPROC3_READ = 6,
	NFSPROC3_WRITE = 7,
	NFSPROC3_CREATE = 8,
	NFSPROC3_MKDIR = 9,
	NFSPROC3_SYMLINK = 10,
	NFSPROC3_MKNOD = 11,
	NFSPROC3_REMOVE = 12,
	NFSPROC3_RMDIR = 13,
	NFSPROC3_RENAME = 14,
	NFSPROC3_LINK = 15,
	NFSPROC3_READDIR = 16,
	NFSPROC3_READDIRPLUS = 17,
	NFSPROC3_FSSTAT = 18,
	NFSPROC3_FSINFO = 19,
	NFSPROC3_PATHCONF = 20,
	NFSPROC3_COMMIT = 21,
};

/** time_how (RFC 1813 2.6, set_atime and set_mtime). */
enum nfs3_time_how {
	NFS3_DONT_CHANGE = 0,
	NFS3_SET_TO_SERVER_TIME = 1,
	NFS3_SET_TO_CLIENT_TIME = 2,
};

/* ACCESS3 bits (RFC 1813 3.3.4) */
#define NFS3_ACCESS_READ 0x01u
#define NFS3_ACCESS_LOOKUP 0x02u
#define NFS3_ACCESS_MODIFY 0x04u
#define NFS3_ACCESS_EXTEND 0x08u
#define NFS3_ACCESS_DELETE 0x10u
#define NFS3_ACCESS_EXECUTE 0x20u

/* stable_how (RFC 1813 3.3.7) */
#define NFS3_UNSTABLE 0u
#define NFS3_DATA_SYNC 1u
#define NFS3_FILE_SYNC 2u

/** createmode3 (RFC 1813 3.3.8). */
enum nfs3_createmode {
	NFS3_UNCHECKED = 0,
	NFS3_GUARDED = 1,
	NFS3_EXCLUSIVE = 2,
};

/* FSINFO properties (RFC 1813 3.3.19) */
#define NFS3_FSF_LINK 0x01u
#define NFS3_FSF_SYMLINK 0x02u
#define NFS3_FSF_HOMOGENEOUS 0x08u
#define NFS3_FSF_CANSETTIME 0x10u

/* ---- MOUNT version 3 (RFC 1813 section 5) ---- */

/** Longest dirpath in bytes (RFC 1813 5.1, MNTPATHLEN). */
#define MNT3_PATHLEN 1024u
/** Longest name in bytes (RFC 1813 5.1, MNTNAMLEN). */
#define MNT3_NAMLEN 255u

/** Procedures (RFC 1813 5.2). */
enum mnt3_proc {
	MOUNTPROC3_NULL = 0,
	MOUNTPROC3_MNT = 1,
	MOUNTPROC3_DUMP = 2,
	MOUNTPROC3_UMNT = 3,
	MOUNTPROC3_UMNTALL = 4,
	MOUNTPROC3_EXPORT = 5,
};

/** mountstat3 (RFC 1813 5.1.5). */
enum mnt3_stat {
	MNT3_OK = 0,
	MNT3ERR_PERM = 1,
	MNT3ERR_NOENT = 2,
	MNT3ERR_IO = 5,
	MNT3ERR_ACCES = 13,
	MNT3ERR_NOTDIR = 20,
	MNT3ERR_INVAL = 22,
	MNT3ERR_NAMETOOLONG = 63,
	MNT3ERR_NOTSUPP = 10004,
	MNT3ERR_SERVERFAULT = 10006,
};

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_NFS3_PROT_H */
