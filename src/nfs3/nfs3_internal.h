/* SPDX-License-Identifier: MIT */
/*
 * nfs3_internal.h - private to src/nfs3: the RFC 1813 XDR helpers, the
 * dispatch and the procedures.  The file-serving layer they call (the
 * export, file handles, credentials, the caches) is src/fs (fs/fs.h).
 */
#ifndef RPCRDMA_NFS3_INTERNAL_H
#define RPCRDMA_NFS3_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <rpcrdma/nfs3.h>
#include <rpcrdma/nfs3_prot.h>
#include <rpcrdma/svc.h>
#include <rpcrdma/xdr.h>

#include "fs/fs.h"

_Static_assert((int)FS_DONT_CHANGE == (int)NFS3_DONT_CHANGE &&
	       (int)FS_SET_TO_SERVER_TIME == (int)NFS3_SET_TO_SERVER_TIME &&
	       (int)FS_SET_TO_CLIENT_TIME == (int)NFS3_SET_TO_CLIENT_TIME,
	       "a decoded time_how is an enum fs_time_how");
_Static_assert(FS_UNSTABLE == NFS3_UNSTABLE && FS_DATA_SYNC == NFS3_DATA_SYNC &&
	       FS_FILE_SYNC == NFS3_FILE_SYNC,
	       "a decoded stable_how is an enum fs_stable_how");

/* Bytes of an encoded fattr3 (21 words) and of a post_op_attr with one. */
#define NFS3_FATTR_BYTES 84u
#define NFS3_POST_OP_ATTR_BYTES (4u + NFS3_FATTR_BYTES)

/* Longest symlink target / mount path accepted on the wire. */
#define NFS3_WIRE_PATH_MAX 4096u

/* ---- nfs3_xdr.c ---- */

uint32_t nfs3_errno_to_stat(int err);
uint32_t nfs3_mode_to_ftype(mode_t mode);
void nfs3_put_fattr(struct rpcrdma_xdr *xs, const struct rpcrdma_nfs3_export *exp,
		    const struct stat *st);
/** post_op_attr: @st NULL encodes "no attributes". */
void nfs3_put_post_op_attr(struct rpcrdma_xdr *xs,
			   const struct rpcrdma_nfs3_export *exp,
			   const struct stat *st);
/**
 * nfs3_put_post_op_fe - post_op_attr of object @fe of @c's export, as
 * fs_getattr() finds it now; "no attributes" when @fe is NULL or that
 * fails.
 */
void nfs3_put_post_op_fe(struct rpcrdma_xdr *xs, struct fs_call *c,
			 struct fs_fentry *fe);
/** wcc_data: @pre / @post NULL encode "not present". */
void nfs3_put_wcc(struct rpcrdma_xdr *xs, const struct rpcrdma_nfs3_export *exp,
		  const struct stat *pre, const struct stat *post);

/* ---- nfs3_transport.c ---- */

/* What a procedure is (the dispatch table of nfs3_dispatch.c). */
enum {
	NFS3_PF_MODIFIES = 1u << 0,    /* changes the file system: ROFS on a ro entry */
	NFS3_PF_ANY_CALLER = 1u << 1,  /* on the transport thread for any caller */
	NFS3_PF_AS_SERVER = 1u << 2,   /* there when the server already is the caller */
	NFS3_PF_MEM_FS = 1u << 3,      /* ... and only where nothing waits for a disk
					* (fs_never_waits(): tmpfs, ramfs, memory) */
	NFS3_PF_NOWAIT_READ = 1u << 4, /* ... file data from the page cache only (READ) */
	NFS3_PF_COMMIT_META = 1u << 5, /* commit_metadata before the reply (fs_commit.c) */
};

/**
 * nfs3_transport_ok - may a procedure with flags @flags (NFS3_PF_*) of a
 * caller with (squashed) identity @cr run on the transport thread
 * (rq_transport)?  Only when it needs no credential switch there (the
 * export's backend switches none, fs_needs_identity(), or the server
 * already is the caller) and does not wait for the disk by design (no
 * fsync, no directory listing, no write; @commit: the call commits
 * metadata, so it does), unless nothing on the export ever waits
 * (fs_never_waits()).
 */
bool nfs3_transport_ok(const struct rpcrdma_nfs3_export *exp, unsigned flags,
		       const struct fs_cred *cr, bool commit);

/** Most READ or WRITE bytes served on the transport thread: a larger copy
 *  delays every connection more than a hand-off costs. */
#define NFS3_TRANSPORT_MAX_IO 65536u

/*
 * FSINFO's rtpref/wtpref on a transport without direct data placement
 * (TCP): 256 KiB, and its wtmax there too.  rtmax stays the export's
 * payload limit (1 MiB by default) on every transport, wtmax on RDMA; a
 * client that is not told a size (the Linux client without
 * rsize=/wsize=) uses the preferred one, and one told more writes no
 * more than wtmax.  A 1 MiB WRITE over TCP is read whole, then written,
 * then answered, with nothing overlapping at one call in flight, where
 * four 256 KiB ones overlap the reading of one with the writing of
 * another: measured in the VM (docs/bench.md, session 24), 1 MiB
 * sequential writes went at 0.67 of the kernel's nfsd, 256 KiB ones at
 * 1.16 (a larger WRITE is still served).  Reads: over TCP a
 * 1 MiB reply does not fit a loopback socket's send buffer at once and
 * goes out over several wake-ups: measured in the VM (docs/bench.md,
 * "TCP READ from the page cache"), 256 KiB READs gave 1.6x the MB/s of
 * 1 MiB ones at 0.7x the CPU per MB.  The kernel's nfsd offers 256 KiB
 * to the same guest (its maximum follows the machine's memory).
 */
#define NFS3_TCP_PREF_IO (256u * 1024u)

/* ---- nfs3_args.c: argument types (RFC 1813 section 2) ---- */

/*
 * Decoders: a short or malformed body sets @xs's error (GARBAGE_ARGS);
 * what they return is then meaningless.
 */
/** nfs3_get_fh - an nfs_fh3: its bytes inside @xs, length in @len. */
const uint8_t *nfs3_get_fh(struct rpcrdma_xdr *xs, uint32_t *len);
/** nfs3_get_name - a filename3 of at most FS_WIRE_NAME_MAX bytes. */
void nfs3_get_name(struct rpcrdma_xdr *xs, struct fs_name *n);
/** nfs3_get_time - an nfstime3 (nanoseconds below 10^9). */
void nfs3_get_time(struct rpcrdma_xdr *xs, struct timespec *ts);
/** nfs3_get_sattr - a sattr3 (RFC 1813 2.6). */
void nfs3_get_sattr(struct rpcrdma_xdr *xs, struct fs_sattr *sa);
/**
 * nfs3_name_check - NFS status for a component name, NFS3_OK when usable:
 * NFS3ERR_ACCES for an empty name or one with '/' or NUL,
 * NFS3ERR_NAMETOOLONG over 255 bytes.
 */
uint32_t nfs3_name_check(const struct fs_name *n);
/** nfs3_is_dot_or_dotdot - is @n "." or ".."? */
bool nfs3_is_dot_or_dotdot(const struct fs_name *n);

/* ---- nfs3_dirop.c: diropargs3 ---- */

/*
 * A directory-modifying call: the parent directory (from a diropargs3),
 * its attributes before the change, the checked name.
 */
struct nfs3_dirop {
	struct fs_fentry *d_fe;   /* the directory, through the directory
				   * cache; NULL: not reached */
	struct fs_fentry d_local;
	struct stat d_pre;
	bool d_have_pre;
	struct fs_name d_name;
};

/** nfs3_dirop_decode - a diropargs3: the handle in @fh/@fhlen, the name in @d. */
void nfs3_dirop_decode(struct fs_call *c, struct nfs3_dirop *d,
		       const uint8_t **fh, uint32_t *fhlen);
/** nfs3_dirop_open - reach the directory and check the name: an NFS status. */
uint32_t nfs3_dirop_open(struct fs_call *c, struct nfs3_dirop *d,
			 const uint8_t *fh, uint32_t fhlen);
/** nfs3_dirop_put - release what nfs3_dirop_open() took (the directory
 *  cache keeps the directory open). */
void nfs3_dirop_put(struct nfs3_dirop *d);

/** nfs3_dirop_put_wcc - the directory's wcc_data. */
void nfs3_dirop_put_wcc(struct fs_call *c, struct nfs3_dirop *d);

/*
 * ---- the procedures (RFC 1813 3.3) ----
 * Each decodes its arguments (RPCRDMA_SVC_GARBAGE_ARGS when they do not),
 * encodes its result into c_res and returns RPCRDMA_SVC_SUCCESS, or
 * RPCRDMA_SVC_SYSTEM_ERR when the result does not fit.
 */
/**
 * nfs3_dispatch_call - serve @req on @exp for a caller with @opts; every
 * handle opens to @fh_err when it is not 0.  Return: as
 * rpcrdma_nfs3_dispatch().
 */
int nfs3_dispatch_call(struct rpcrdma_nfs3_server *srv, struct rpcrdma_svc_req *req,
		       struct rpcrdma_nfs3_export *exp,
		       const struct rpcrdma_nfs3_xopts *opts, int fh_err);

/* nfs3_attr.c */
int nfs3_proc_getattr(struct fs_call *c);
int nfs3_proc_setattr(struct fs_call *c);
int nfs3_proc_access(struct fs_call *c);
int nfs3_proc_fsstat(struct fs_call *c);
int nfs3_proc_fsinfo(struct fs_call *c);
int nfs3_proc_pathconf(struct fs_call *c);
/* nfs3_io.c */
int nfs3_proc_readlink(struct fs_call *c);
int nfs3_proc_read(struct fs_call *c);
int nfs3_proc_write(struct fs_call *c);
int nfs3_proc_commit(struct fs_call *c);
/* nfs3_dirop.c */
int nfs3_proc_lookup(struct fs_call *c);
int nfs3_proc_remove(struct fs_call *c);
int nfs3_proc_rmdir(struct fs_call *c);
int nfs3_proc_rename(struct fs_call *c);
int nfs3_proc_link(struct fs_call *c);
/* nfs3_create.c */
int nfs3_proc_create(struct fs_call *c);
int nfs3_proc_mkdir(struct fs_call *c);
int nfs3_proc_symlink(struct fs_call *c);
int nfs3_proc_mknod(struct fs_call *c);

/* ---- nfs3_readdir.c ---- */

/** READDIR (@plus false) and READDIRPLUS (RFC 1813 3.3.16, 3.3.17). */
int nfs3_proc_readdir(struct fs_call *c, bool plus);

#endif /* RPCRDMA_NFS3_INTERNAL_H */
