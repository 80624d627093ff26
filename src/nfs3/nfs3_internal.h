/* SPDX-License-Identifier: MIT */
/*
 * nfs3_internal.h - private to src/nfs3: the export, file handles,
 * credentials and the RFC 1813 XDR helpers shared by the procedures.
 */
#ifndef RPCRDMA_NFS3_INTERNAL_H
#define RPCRDMA_NFS3_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <rpcrdma/nfs3.h>
#include <rpcrdma/svc.h>
#include <rpcrdma/xdr.h>

/* nfsstat3 (RFC 1813 2.6) */
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

/* ftype3 (RFC 1813 2.6) */
enum nfs3_ftype {
	NF3REG = 1,
	NF3DIR = 2,
	NF3BLK = 3,
	NF3CHR = 4,
	NF3LNK = 5,
	NF3SOCK = 6,
	NF3FIFO = 7,
};

/* Procedures (RFC 1813 3.3) */
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

/* ACCESS3 bits (RFC 1813 3.3.4) */
#define NFS3_ACCESS_READ 0x01u
#define NFS3_ACCESS_LOOKUP 0x02u
#define NFS3_ACCESS_MODIFY 0x04u
#define NFS3_ACCESS_EXTEND 0x08u
#define NFS3_ACCESS_DELETE 0x10u
#define NFS3_ACCESS_EXECUTE 0x20u

/* FSINFO properties (RFC 1813 3.3.19) */
#define NFS3_FSF_LINK 0x01u
#define NFS3_FSF_SYMLINK 0x02u
#define NFS3_FSF_HOMOGENEOUS 0x08u
#define NFS3_FSF_CANSETTIME 0x10u

/* stable_how (RFC 1813 3.3.7) */
#define NFS3_UNSTABLE 0u
#define NFS3_DATA_SYNC 1u
#define NFS3_FILE_SYNC 2u

/* Bytes of an encoded fattr3 (21 words) and of a post_op_attr with one. */
#define NFS3_FATTR_BYTES 84u
#define NFS3_POST_OP_ATTR_BYTES (4u + NFS3_FATTR_BYTES)

/* Longest name component accepted on the wire (longer: GARBAGE_ARGS). */
#define NFS3_WIRE_NAME_MAX 1024u
/* Longest symlink target / mount path accepted on the wire. */
#define NFS3_WIRE_PATH_MAX 4096u

struct rpcrdma_nfs3_export {
	char *ex_path;
	int ex_fd;            /* O_RDONLY|O_DIRECTORY: mount fd for open_by_handle_at */
	dev_t ex_dev;
	ino_t ex_ino;
	int ex_mnt_id;
	uint64_t ex_fsid;     /* fattr3 fsid */
	uint8_t ex_verf[8];   /* WRITE/COMMIT verifier: changes per start */
	uint8_t ex_key[RPCRDMA_NFS3_KEY_BYTES];
	uint32_t ex_max_payload;
	bool ex_no_root_squash;
	bool (*ex_allow)(const struct sockaddr *peer, void *arg);
	void *ex_allow_arg;
	FILE *ex_log;
	int ex_verbose;
	struct nfs3_fcache *ex_fcache; /* open files; NULL: no cache */
	struct nfs3_fcache *ex_dcache; /* open directories; NULL: no cache */
	/* preadv2(RWF_NOWAIT) refused by the file system: READ is never
	 * served on the transport thread (nfs3_transport.c) */
	_Atomic bool ex_nowait_unsupported;
	/* tmpfs or ramfs: file data and directories live in memory, nothing
	 * waits for a disk (nfs3_transport.c) */
	bool ex_mem_fs;
};

/* ---- nfs3_fh.c ---- */

/** Kernel file handle bytes that fit: 64 - 8 (header) - 8 (MAC). */
#define NFS3_FH_KERNEL_MAX 48u
#define NFS3_FH_OVERHEAD 16u
#define NFS3_FH_VERSION 1u

/**
 * nfs3_siphash - SipHash-2-4 (Aumasson and Bernstein, 2012) of @len bytes.
 */
uint64_t nfs3_siphash(const uint8_t key[16], const void *data, size_t len);

/**
 * nfs3_fh_make - the NFS handle of @name in @dirfd, never following a
 * symlink (@name "" means @dirfd itself).
 * @fh: out: RPCRDMA_NFS3_FHSIZE bytes; @lenp: out: bytes used.
 * Return: 0; -EXDEV (the object is on another mount than the export);
 * -EOVERFLOW (kernel handle too long); errno of name_to_handle_at.
 */
int nfs3_fh_make(const struct rpcrdma_nfs3_export *exp, int dirfd,
		 const char *name, uint8_t *fh, uint32_t *lenp);

/**
 * nfs3_fh_open - open the object a handle names, O_PATH (needs
 * CAP_DAC_READ_SEARCH: call with the server's own credentials).
 * @fdp: out: the descriptor (caller closes); @st: out: its attributes.
 * Return: 0; -EBADMSG (malformed or forged: NFS3ERR_BADHANDLE); -ESTALE
 * (the object is gone or lies on another file system: NFS3ERR_STALE);
 * other errno from open_by_handle_at/fstat.
 */
int nfs3_fh_open(const struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		 uint32_t len, int *fdp, struct stat *st);

/* ---- nfs3_fcache.c ---- */

/*
 * One open regular file of the cache, or (fe_shard NULL) an object opened
 * for one call only.  fe_path, fe_type and the handle are fixed while a
 * call holds a reference; fe_rfd/fe_wfd go from -1 to a descriptor once
 * (atomically, nfs3_fcache_set_fd) and are closed with the entry.
 */
struct nfs3_fshard;
struct nfs3_fentry {
	struct nfs3_fentry *fe_hnext;   /* hash chain, or free list */
	struct nfs3_fentry *fe_prev;    /* LRU list of the shard */
	struct nfs3_fentry *fe_next;
	struct nfs3_fshard *fe_shard;   /* NULL: not cached */
	uint64_t fe_hash;
	uint32_t fe_refs;               /* calls, +1 while hashed; shard lock */
	bool fe_hashed;
	mode_t fe_type;                 /* S_IFMT bits */
	int fe_path;                    /* O_PATH|O_NOFOLLOW, from the handle */
	int fe_rfd;                     /* O_RDONLY, or -1 */
	int fe_wfd;                     /* O_WRONLY, or -1 */
	uint32_t fe_fhlen;
	uint8_t fe_fh[RPCRDMA_NFS3_FHSIZE];
};

struct nfs3_fcache;

/**
 * nfs3_fcache_create - a cache of @entries open files (0: the default;
 * RPCRDMA_NFS3_FCACHE_OFF: *@out NULL, no cache).
 * Return: 0 or -ENOMEM.
 */
int nfs3_fcache_create(uint32_t entries, struct nfs3_fcache **out);

/** nfs3_fcache_destroy - close every entry; no call may hold one. */
void nfs3_fcache_destroy(struct nfs3_fcache *fc);

/**
 * nfs3_fcache_get - the open object a handle names: a cached entry, or on
 * a miss the handle decoded with nfs3_fh_open() (server credentials) and,
 * for a regular file, cached (evicting the least recently used entry of
 * its shard when full).  Objects not cached use @local (caller storage).
 * No permission is checked here (see nfs3_proc.c, file_fd()).
 * @st: NULL, or out: the object's attributes now (an fstat on a hit).
 * @out: out: the entry; release it with nfs3_fcache_put().
 * Return: 0, or the errors of nfs3_fh_open() (-EBADMSG, -ESTALE, ...) and
 * of fstat.  Locking: takes and drops a shard lock, never across a
 * system call.
 */
int nfs3_fcache_get(struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		    uint32_t len, struct nfs3_fentry *local,
		    struct nfs3_fentry **out, struct stat *st);

/**
 * nfs3_dcache_get - nfs3_fcache_get() for a directory's handle, through
 * the directory cache (ex_dcache): only directories are kept there.
 */
int nfs3_dcache_get(struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		    uint32_t len, struct nfs3_fentry *local,
		    struct nfs3_fentry **out, struct stat *st);

/** nfs3_fcache_put - drop a reference (NULL: no-op); the last one closes. */
void nfs3_fcache_put(struct nfs3_fentry *fe);

/**
 * nfs3_fcache_fd - the entry's descriptor for @acc (O_RDONLY or
 * O_WRONLY), or -1 when none was opened yet.  The caller must check the
 * current caller's access before using it.
 */
int nfs3_fcache_fd(struct nfs3_fentry *fe, int acc);

/**
 * nfs3_fcache_set_fd - give @fd (opened for @acc) to the entry.
 * Return: the descriptor to use: @fd, or the one another call stored
 * first (then @fd is closed).  The entry owns it either way.
 */
int nfs3_fcache_set_fd(struct nfs3_fentry *fe, int acc, int fd);

/**
 * nfs3_fcache_forget - after REMOVE or RENAME unlinked a name: if the
 * handle's file is cached and has no links left, drop it from the cache
 * (closed when its last call ends), as knfsd closes cached files on
 * unlink, so the space is freed and the handle turns STALE.
 */
void nfs3_fcache_forget(struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
			uint32_t len);

/* ---- nfs3_cred.c ---- */

struct nfs3_cred {
	uint32_t cr_uid;
	uint32_t cr_gid;
	uint32_t cr_ngids;
	uint32_t cr_gids[RPC_AUTH_SYS_MAX_GIDS];
};

/**
 * nfs3_cred_from_req - the identity to serve @req with.
 * Return: 0, or RPCRDMA_AUTH_TOOWEAK / RPCRDMA_AUTH_BADCRED.
 */
uint32_t nfs3_cred_from_req(const struct rpcrdma_nfs3_export *exp,
			    const struct rpcrdma_svc_req *req,
			    struct nfs3_cred *cr);

/** nfs3_cred_apply - run this thread's file system calls as @cr. 0/-errno. */
int nfs3_cred_apply(const struct nfs3_cred *cr);

/**
 * nfs3_cred_restore - back to the server's identity: fsuid/fsgid the
 * effective ids; no supplementary groups, except that a root server keeps
 * the last caller's (its file system capabilities make them irrelevant).
 * Each thread remembers what it set: only changes cost system calls.
 */
void nfs3_cred_restore(void);

/**
 * nfs3_cred_is_server - true when the server acting as itself already
 * serves @cr exactly: a root server and a root caller whose group is the
 * server's (with fsuid 0 the file system capabilities decide, the
 * supplementary groups do not), or a non-root server and a caller with its
 * uid and gid and no supplementary groups.
 */
bool nfs3_cred_is_server(const struct nfs3_cred *cr);

/**
 * nfs3_cred_freeze - while @on, this thread's credentials never change:
 * nfs3_cred_apply() succeeds only for an identity nfs3_cred_is_server()
 * accepts (else -EPERM), and nfs3_cred_restore() does nothing.  For the
 * transport thread, whose device posts the kernel refuses once its
 * credentials have changed (docs/bench-profile.md).
 */
void nfs3_cred_freeze(bool on);

/**
 * nfs3_cred_call_begin - a new call starts on this thread.  The thread
 * may still run as the previous call's caller: a worker keeps that
 * identity, so that the next call of the same caller switches nothing.
 */
void nfs3_cred_call_begin(void);

/**
 * nfs3_cred_for_handle - before decoding a file handle (open_by_handle_at
 * needs the server's CAP_DAC_READ_SEARCH): back to the server's identity
 * (free when the thread already has it).  Once the call switched to its
 * caller (nfs3_cred_apply()), it does nothing: a handle decoded then fails
 * with the caller's rights rather than run with the server's.
 */
void nfs3_cred_for_handle(void);

/* ---- nfs3_xdr.c ---- */

uint32_t nfs3_errno_to_stat(int err);
uint32_t nfs3_mode_to_ftype(mode_t mode);
void nfs3_put_fattr(struct rpcrdma_xdr *xs, const struct rpcrdma_nfs3_export *exp,
		    const struct stat *st);
/** post_op_attr: @st NULL encodes "no attributes". */
void nfs3_put_post_op_attr(struct rpcrdma_xdr *xs,
			   const struct rpcrdma_nfs3_export *exp,
			   const struct stat *st);
/** post_op_attr of @fd (fstat; "no attributes" when that fails). */
void nfs3_put_post_op_fd(struct rpcrdma_xdr *xs,
			 const struct rpcrdma_nfs3_export *exp, int fd);
/** wcc_data: @pre / @post NULL encode "not present". */
void nfs3_put_wcc(struct rpcrdma_xdr *xs, const struct rpcrdma_nfs3_export *exp,
		  const struct stat *pre, const struct stat *post);

/** nfs3_is_root - does @st describe the export root? */
static inline bool nfs3_is_root(const struct rpcrdma_nfs3_export *exp,
				const struct stat *st)
{
	return st->st_dev == exp->ex_dev && st->st_ino == exp->ex_ino;
}

/* ---- nfs3_proc.c ---- */

/* One call in progress. */
struct nfs3_call {
	struct rpcrdma_nfs3_export *c_exp;
	struct rpcrdma_svc_req *c_req;
	struct rpcrdma_xdr *c_args;
	struct rpcrdma_xdr *c_res;
	struct nfs3_cred c_cred;
	bool c_as_caller; /* thread runs with c_cred */
	/* On the transport thread: file data only from the page cache
	 * (RWF_NOWAIT); c_defer set when the call must move to a worker */
	bool c_nowait;
	bool c_defer;
};

/* ---- nfs3_transport.c ---- */

/**
 * nfs3_transport_ok - may procedure @proc of a caller with (squashed)
 * identity @cr run on the transport thread (rq_transport)?  Only when it
 * needs no credential switch there and does not wait for the disk by
 * design (no fsync, no directory listing, no write).
 */
bool nfs3_transport_ok(const struct rpcrdma_nfs3_export *exp, uint32_t proc,
		       const struct nfs3_cred *cr);

/** Most READ or WRITE bytes served on the transport thread: a larger copy
 *  delays every connection more than a hand-off costs. */
#define NFS3_TRANSPORT_MAX_IO 65536u

/** nfs3_is_mem_fs - whether @fd's file system keeps its data in memory
 *  (tmpfs, ramfs). */
bool nfs3_is_mem_fs(int fd);

/** nfs3_become_caller - switch the thread to the caller's identity. 0/-errno. */
int nfs3_become_caller(struct nfs3_call *c);



/* ---- nfs3_readdir.c ---- */

/** READDIR (@plus false) and READDIRPLUS (RFC 1813 3.3.16, 3.3.17). */
int nfs3_proc_readdir(struct nfs3_call *c, bool plus);

/**
 * nfs3_lookup_at - open @name in directory @dirfd (attributes @dst) with
 * O_PATH|O_NOFOLLOW; "." is the directory and ".." of the export root is
 * the root.  @name must already be checked (nfs3_name_check).
 * Return: 0 or a negative errno.
 */
int nfs3_lookup_at(const struct rpcrdma_nfs3_export *exp, int dirfd,
		   const struct stat *dst, const char *name, int *fdp,
		   struct stat *st);

#endif /* RPCRDMA_NFS3_INTERNAL_H */
