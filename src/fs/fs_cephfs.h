/* SPDX-License-Identifier: MIT */
/*
 * fs_cephfs.h - the cephfs backend's own structures, shared by its files
 * (the rest of the layer sees only fs_cephfs_backend, through
 * fs_backend_find("cephfs")).  Built only when libcephfs is found
 * (CMake option RPCRDMA_CEPHFS); docs/cephfs.md describes the backend.
 *   fs_cephfs_api.c    the seam: every libcephfs function the backend
 *                      calls, as one table (fsc_api), real by default
 *   fs_cephfs_mount.c  the export's options, mounts shared by exports of
 *                      one (user, file system, conf, keyring), export
 *                      open and close
 *   fs_cephfs_cred.c   UserPerm objects from c_cred (cached per thread),
 *                      permission decisions from the mode bits, errno
 *                      mapping
 *   fs_cephfs.c        handles, objects, attributes, statfs, the table
 *   fs_cephfs_file.c   access, open, read, write, commit, setattr
 *   fs_cephfs_direct.c stable WRITEs of files created here straight to
 *                      the OSDs (an O_DIRECT Fh), while none is cached
 *   fs_cephfs_names.c  lookup, create, mkdir, mknod, symlink, readlink,
 *                      link, unlink, rename
 *   fs_cephfs_dir.c    readdir with libcephfs' own offsets as cookies
 *   fs_cephfs_lock.c   byte-range locks (ceph_ll_setlk/getlk) and leases
 *                      (ceph_ll_delegation)
 *   fs_cephfs_grace.c  the grace period across gateways: one record per
 *                      gateway under the grace= directory, written
 *                      before the session reset, read by be_cluster_grace
 *
 * Identity: the backend never switches the thread's identity.  Calls
 * that make or take away names run with the caller's UserPerm (libcephfs
 * checks directory permissions as POSIX says); data goes through one Fh
 * per object opened with the server's UserPerm (uid 0) after the backend
 * checked the caller's right from the mode bits (be_open, with knfsd's
 * overrides), as the memory backend does.
 *
 * Handles: key = ino (8 bytes), snapid (8), fscid (8), each big-endian
 * (FSC_KEY_LEN); type 0.  The same on every gateway of the file system,
 * whatever subdirectory each exports, and across restarts.
 */
#ifndef RPCRDMA_FS_CEPHFS_H
#define RPCRDMA_FS_CEPHFS_H

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/statvfs.h>
#include <dirent.h>

#include <cephfs/libcephfs.h>

#include "fs_backend.h"

#define FSC_KEY_LEN 24u             /* ino, snapid, fscid */
#define FSC_NOSNAP ((uint64_t)-2)   /* CEPH_NOSNAP: the live file system */
#define FSC_USER_MAX 64u            /* longest Ceph user name (client.USER) */
#define FSC_FSNAME_MAX 64u          /* longest file system name */
#define FSC_MOUNT_TIMEOUT "10"      /* client_mount_timeout, s: start fails fast */
#define FSC_DELEG_TIMEOUT 30u       /* ceph_set_deleg_timeout, s */
#define FSC_UUID_MAX 128u           /* "rpcrdma-HOST-HASH" */
#define FSC_LINK_MAX 65535u         /* reported; Ceph has no fixed limit */
#define FSC_GRACE_SLACK 10          /* s added to a grace record's end: the
				     * protocols' grace starts after the mount */
#define FSC_GRACE_REC_MAX 64u       /* longest record file read */
#define FSC_GRACE_REC_LEN 37u       /* "rpcrdma-grace 1 " 20 digits "\n" */
#define FSC_DIRECT_MAX 64u          /* files on the direct path per mount */

/*
 * The seam: every libcephfs function the backend calls.  fsc_api points
 * at the real ones (fs_cephfs_api.c) unless a test installed fakes with
 * fs_cephfs_set_api().  Members are named for the function they stand for.
 */
struct fs_ceph_api {
	int (*ca_create)(struct ceph_mount_info **cmount, const char *id);
	int (*ca_conf_read_file)(struct ceph_mount_info *cmount, const char *path);
	int (*ca_conf_set)(struct ceph_mount_info *cmount, const char *opt,
			   const char *val);
	int (*ca_conf_get)(struct ceph_mount_info *cmount, const char *opt,
			   char *buf, size_t len);
	int (*ca_init)(struct ceph_mount_info *cmount);
	int (*ca_select_filesystem)(struct ceph_mount_info *cmount,
				    const char *fs_name);
	int (*ca_start_reclaim)(struct ceph_mount_info *cmount,
				const char *uuid, unsigned flags);
	void (*ca_finish_reclaim)(struct ceph_mount_info *cmount);
	void (*ca_set_uuid)(struct ceph_mount_info *cmount, const char *uuid);
	int (*ca_mount)(struct ceph_mount_info *cmount, const char *root);
	int64_t (*ca_get_fs_cid)(struct ceph_mount_info *cmount);
	int (*ca_set_deleg_timeout)(struct ceph_mount_info *cmount,
				    uint32_t timeout);
	void (*ca_shutdown)(struct ceph_mount_info *cmount);

	UserPerm *(*ca_userperm_new)(uid_t uid, gid_t gid, int ngids,
				     gid_t *gidlist);
	void (*ca_userperm_destroy)(UserPerm *perm);

	int (*ca_ll_walk)(struct ceph_mount_info *cmount, const char *name,
			  Inode **i, struct ceph_statx *stx, unsigned want,
			  unsigned flags, const UserPerm *perms);
	int (*ca_ll_lookup_vino)(struct ceph_mount_info *cmount,
				 vinodeno_t vino, Inode **inode);
	int (*ca_ll_lookup)(struct ceph_mount_info *cmount, Inode *parent,
			    const char *name, Inode **out,
			    struct ceph_statx *stx, unsigned want,
			    unsigned flags, const UserPerm *perms);
	int (*ca_ll_put)(struct ceph_mount_info *cmount, Inode *in);
	int (*ca_ll_getattr)(struct ceph_mount_info *cmount, Inode *in,
			     struct ceph_statx *stx, unsigned want,
			     unsigned flags, const UserPerm *perms);
	int (*ca_ll_setattr)(struct ceph_mount_info *cmount, Inode *in,
			     struct ceph_statx *stx, int mask,
			     const UserPerm *perms);
	int (*ca_ll_open)(struct ceph_mount_info *cmount, Inode *in, int flags,
			  Fh **fh, const UserPerm *perms);
	int (*ca_ll_close)(struct ceph_mount_info *cmount, Fh *fh);
	int64_t (*ca_ll_readv)(struct ceph_mount_info *cmount, Fh *fh,
			       const struct iovec *iov, int iovcnt, int64_t off);
	int64_t (*ca_ll_writev)(struct ceph_mount_info *cmount, Fh *fh,
				const struct iovec *iov, int iovcnt,
				int64_t off);
	int (*ca_ll_fsync)(struct ceph_mount_info *cmount, Fh *fh,
			   int syncdataonly);
	int (*ca_ll_sync_inode)(struct ceph_mount_info *cmount, Inode *in,
				int syncdataonly);
	int (*ca_ll_create)(struct ceph_mount_info *cmount, Inode *parent,
			    const char *name, mode_t mode, int oflags,
			    Inode **outp, Fh **fhp, struct ceph_statx *stx,
			    unsigned want, unsigned lflags,
			    const UserPerm *perms);
	int (*ca_ll_mknod)(struct ceph_mount_info *cmount, Inode *parent,
			   const char *name, mode_t mode, dev_t rdev,
			   Inode **out, struct ceph_statx *stx, unsigned want,
			   unsigned flags, const UserPerm *perms);
	int (*ca_ll_mkdir)(struct ceph_mount_info *cmount, Inode *parent,
			   const char *name, mode_t mode, Inode **out,
			   struct ceph_statx *stx, unsigned want,
			   unsigned flags, const UserPerm *perms);
	int (*ca_ll_symlink)(struct ceph_mount_info *cmount, Inode *in,
			     const char *name, const char *value, Inode **out,
			     struct ceph_statx *stx, unsigned want,
			     unsigned flags, const UserPerm *perms);
	int (*ca_ll_readlink)(struct ceph_mount_info *cmount, Inode *in,
			      char *buf, size_t bufsize,
			      const UserPerm *perms);
	int (*ca_ll_link)(struct ceph_mount_info *cmount, Inode *in,
			  Inode *newparent, const char *name,
			  const UserPerm *perms);
	int (*ca_ll_unlink)(struct ceph_mount_info *cmount, Inode *in,
			    const char *name, const UserPerm *perms);
	int (*ca_ll_rmdir)(struct ceph_mount_info *cmount, Inode *in,
			   const char *name, const UserPerm *perms);
	int (*ca_ll_rename)(struct ceph_mount_info *cmount, Inode *parent,
			    const char *name, Inode *newparent,
			    const char *newname, const UserPerm *perms);
	int (*ca_ll_opendir)(struct ceph_mount_info *cmount, Inode *in,
			     struct ceph_dir_result **dirpp,
			     const UserPerm *perms);
	int (*ca_ll_releasedir)(struct ceph_mount_info *cmount,
				struct ceph_dir_result *dir);
	int (*ca_readdir_r)(struct ceph_mount_info *cmount,
			    struct ceph_dir_result *dirp, struct dirent *de);
	int64_t (*ca_telldir)(struct ceph_mount_info *cmount,
			      struct ceph_dir_result *dirp);
	void (*ca_seekdir)(struct ceph_mount_info *cmount,
			   struct ceph_dir_result *dirp, int64_t offset);
	int (*ca_ll_statfs)(struct ceph_mount_info *cmount, Inode *in,
			    struct statvfs *stbuf);
	int (*ca_ll_getlk)(struct ceph_mount_info *cmount, Fh *fh,
			   struct flock *fl, uint64_t owner);
	int (*ca_ll_setlk)(struct ceph_mount_info *cmount, Fh *fh,
			   struct flock *fl, uint64_t owner, int sleep);
	int (*ca_ll_delegation)(struct ceph_mount_info *cmount, Fh *fh,
				unsigned cmd, ceph_deleg_cb_t cb, void *priv);
};

/** fsc_api - the table in use (never NULL). */
extern const struct fs_ceph_api *fsc_api;
/** fsc_real_api - libcephfs itself (fs_cephfs_api.c). */
extern const struct fs_ceph_api fsc_real_api;

/**
 * fs_cephfs_set_api - use @api (static storage; NULL: libcephfs) for every
 * later call of the backend; for tests, before any export is opened.
 * Also forgets the calling thread's cached UserPerm.
 */
void fs_cephfs_set_api(const struct fs_ceph_api *api);

/** fs_cephfs_backend - CephFS through libcephfs (fs_cephfs.c). */
extern const struct fs_backend fs_cephfs_backend;

/* A file created by this gateway whose data has never been in
 * libcephfs' object cache here (fs_cephfs_direct.c). */
struct fsc_direct {
	uint64_t cd_ino;
	bool cd_used;
	bool cd_closing;                /* a cached use waits for cd_inflight */
	unsigned cd_inflight;           /* direct writes under way */
};

/* One mount of a file system, shared by the exports that name the same
 * user, file system, ceph.conf and keyring (fs_cephfs_mount.c). */
struct fsc_mount {
	struct fsc_mount *cm_next;      /* g_mounts list */
	unsigned cm_users;              /* exports on it, plus open lock
					 * descriptions and leases; g_mounts_lock */
	char cm_user[FSC_USER_MAX];
	char cm_fsname[FSC_FSNAME_MAX]; /* "" : the cluster's default */
	char *cm_conf;                  /* ceph.conf path */
	char *cm_keyring;               /* NULL: the conf's default */
	struct ceph_mount_info *cm_cmount;
	uint64_t cm_fscid;              /* ceph_get_fs_cid() */
	UserPerm *cm_root;              /* uid 0: the server's own identity */
	bool cm_deleg;                  /* delegations enabled (deleg timeout set) */
	char cm_uuid[FSC_UUID_MAX];     /* ceph_set_uuid(); "" none (no instance) */
	/* the grace period across gateways (fs_cephfs_grace.c) */
	char *cm_grace;                 /* grace= directory; NULL: none */
	char cm_grace_name[FSC_UUID_MAX]; /* this gateway's record ("" none) */
	/* files whose stable WRITEs go straight to the OSDs
	 * (fs_cephfs_direct.c): cm_direct_lock guards the table */
	pthread_mutex_t cm_direct_lock;
	pthread_cond_t cm_direct_cond;  /* an entry's writes drained or it left */
	bool cm_direct_ready;           /* lock and cond initialised */
	unsigned cm_direct_next;        /* the slot a new file tries first */
	struct fsc_direct cm_direct[FSC_DIRECT_MAX];
};

/* The export's state (ex_be_priv). */
struct fsc_export {
	struct fsc_mount *ce_mnt;
	Inode *ce_root;                 /* the exported directory, referenced */
	uint64_t ce_root_ino;
	bool ce_direct;                 /* files created through this export
					 * may take the direct path (direct=,
					 * on unless off) */
};

/* An object (fe_node): an inode reference, and the Fh its data goes
 * through, opened on first need with the server's identity. */
struct fsc_obj {
	struct fsc_mount *co_mnt;
	Inode *co_in;
	uint64_t co_ino;
	uint64_t co_snap;
	pthread_mutex_t co_lock;        /* opening co_fh */
	Fh *_Atomic co_fh;              /* NULL until opened */
	_Atomic int co_fh_acc;          /* O_RDWR or O_RDONLY, set before co_fh */
	Fh *co_fh_old;                  /* a read-only Fh a read-write one
					 * replaced (calls may still use it):
					 * closed with the object */
	Fh *_Atomic co_fh_direct;       /* O_DIRECT, for stable WRITEs
					 * (fs_cephfs_direct.c); NULL: none yet */
	_Atomic bool co_cached;         /* the inode's data may be in the
					 * object cache: no direct path */
};

/* A lock description (fs_lockd's ld_owner): its own Fh, so closing it
 * releases exactly its locks, and a lock owner unique in the process. */
struct fsc_lockd {
	atomic_uint lo_refs;
	struct fsc_mount *lo_mnt;       /* a user of it (fsc_mount_get) */
	Fh *lo_fh;
	int lo_acc;                     /* O_RDWR or O_RDONLY */
	uint64_t lo_owner;
	_Atomic bool lo_locked;         /* some lock was set: unlock at close */
};

/* A lease (fs_lease's ls_priv): a read delegation on its own Fh.  A
 * recall calls ls_fn and starts a timer that gives the delegation back
 * after FSC_DELEG_RETURN s if the holder has not closed the lease by
 * then, so the cluster never evicts the gateway (it would after
 * FSC_DELEG_TIMEOUT s). */
struct fsc_lease {
	pthread_mutex_t le_lock;
	pthread_cond_t le_cond;         /* le_closed set */
	unsigned le_refs;               /* the holder, a recall timer; le_lock */
	struct fsc_mount *le_mnt;       /* a user of it */
	Fh *le_fh;
	struct fs_lease *le_ls;
	bool le_closed;                 /* fsc_be_lease_close() began */
	bool le_returned;               /* the delegation was given back */
	bool le_timer;                  /* a recall timer runs */
};

#define FSC_DELEG_RETURN 20u        /* s after a recall: given back */

/* The options of an export (be_export_open's @opts). */
struct fsc_opts {
	char co_user[FSC_USER_MAX];     /* default "admin" */
	char co_fsname[FSC_FSNAME_MAX]; /* "": the default file system */
	const char *co_conf;            /* points into the options copy */
	const char *co_keyring;
	const char *co_grace;           /* grace=/DIR; NULL: none */
	bool co_nodirect;               /* direct=off: no O_DIRECT stable
					 * WRITEs of files made here */
};

/** The export's state. */
static inline struct fsc_export *fsc_ex(const struct rpcrdma_nfs3_export *exp)
{
	return exp->ex_be_priv;
}

/** The object of an entry. */
static inline struct fsc_obj *fsc_fe(const struct fs_fentry *fe)
{
	return fe->fe_node;
}

/* ---- fs_cephfs_mount.c ---- */

/**
 * fsc_opts_parse - the backend's options @s (comma-separated: fs=NAME,
 * user=NAME, conf=FILE, keyring=FILE, grace=DIR, direct=on|off; an
 * absolute path for a file or directory) into
 * @o, whose strings point into @buf (a copy of @s, @len bytes).
 * Return: 0; -EINVAL (an unknown option, an empty or too long value, a
 * relative path).
 */
int fsc_opts_parse(const char *s, char *buf, size_t len, struct fsc_opts *o);

/**
 * fsc_uuid - the Ceph client uuid of a mount into @buf (@len bytes):
 * "rpcrdma-HOST-H", HOST the first 63 bytes of @host, H 16 hex digits of
 * SipHash over @state_dir (the server's, rpcrdma_nfs3_set_instance()), @user,
 * @fsname, @conf and @keyring (NULL as ""), each ended by a NUL.  The same
 * for the same gateway and mount across restarts; different for another
 * state directory or another mount of one gateway (a mount resetting its
 * uuid's previous session must not reset a sibling's live one).
 * Return: 0; -ENAMETOOLONG (does not fit @len); -ENOMEM.
 */
int fsc_uuid(char *buf, size_t len, const char *host, const char *state_dir,
	     const char *user, const char *fsname, const char *conf,
	     const char *keyring);

/** fsc_mount_get - one more user of @m (a lock description, a lease). */
void fsc_mount_get(struct fsc_mount *m);
/** fsc_mount_put - one user fewer; the last unmounts and frees @m. */
void fsc_mount_put(struct fsc_mount *m);

/* ---- fs_cephfs_grace.c ---- */

/**
 * fsc_grace_announce - write this gateway's record NAME/record (@name:
 * its Ceph uuid; NAME made when missing), saying its grace period ends at
 * @end (CLOCK_REALTIME s), under the grace directory @cm is mounted at
 * (its root), as "rpcrdma-grace 1 END\n" with END in 20 digits, in place
 * by one write, then synced, so a peer reads the whole record or the old
 * one.  @perm: the server's.  Return: 0; libcephfs' errors (-EACCES,
 * -ENOENT, -ENOTDIR, -EIO ...).
 */
int fsc_grace_announce(struct ceph_mount_info *cm, const UserPerm *perm,
		       const char *name, int64_t end);

/**
 * fsc_grace_parse - the end of a record's text @buf (@len bytes), into
 * *@end.  Return: 0; -EBADMSG (not "rpcrdma-grace 1 END\n").
 */
int fsc_grace_parse(const char *buf, size_t len, int64_t *end);

/** fsc_be_cluster_grace - be_cluster_grace (fs_backend.h). */
int fsc_be_cluster_grace(struct rpcrdma_nfs3_export *exp);

/* ---- fs_cephfs_cred.c ---- */

/**
 * fsc_perm - the UserPerm of @cr (uid, gid, supplementary groups) for
 * @m's calls: uid 0 gets the mount's root UserPerm, others one cached in
 * the calling thread (made again when the thread's caller changes).
 * Valid until the thread's next fsc_perm().  Return: it, or NULL (no
 * memory).
 */
const UserPerm *fsc_perm(struct fsc_mount *m, const struct fs_cred *cr);

/**
 * fsc_err - the error @err (a negative errno from libcephfs) as an
 * operation may answer it: kept when it is one of the @n values of
 * @allowed or of every operation's (-EIO, -ENOMEM, -ENOSPC, -EDQUOT,
 * -EROFS, -EAGAIN); a cluster that did not answer in time or a session
 * lost (-ETIMEDOUT, -ETIME, -ESHUTDOWN (blocklisted), -ENOTCONN,
 * -ECONNREFUSED, -ECONNRESET, -EHOSTUNREACH, -EINTR) becomes -EAGAIN
 * (NFS3ERR_JUKEBOX, NFS4ERR_DELAY); anything else -EIO.  0 and positive
 * values are returned as they are.
 */
int fsc_err(int err, const int *allowed, size_t n);
#define FSC_ERR(err, ...) \
	fsc_err((err), (const int[]){ __VA_ARGS__ }, \
		sizeof((const int[]){ __VA_ARGS__ }) / sizeof(int))

/**
 * fsc_may - fs_cred_may() on @st's mode and owner (@want: R_OK, W_OK,
 * X_OK).  Return: 0; -EACCES.
 */
int fsc_may(const struct fs_cred *cr, const struct stat *st, int want);

/* ---- fs_cephfs.c ---- */

/** fsc_key_put - the handle key of (@ino, @snap, @fscid) into @key
 *  (FSC_KEY_LEN bytes, each big-endian). */
void fsc_key_put(uint64_t ino, uint64_t snap, uint64_t fscid, uint8_t *key);
/** fsc_key_get - the three numbers of key @key (FSC_KEY_LEN bytes). */
void fsc_key_get(const uint8_t *key, uint64_t *ino, uint64_t *snap,
		 uint64_t *fscid);
/** fsc_statx_to_stat - @stx as a struct stat of export @exp (st_dev the
 *  export's, st_ino the inode number). */
void fsc_statx_to_stat(const struct rpcrdma_nfs3_export *exp,
		       const struct ceph_statx *stx, struct stat *st);
/**
 * fsc_obj_new - an object for inode @in (its reference is taken over,
 * dropped on error) of attributes @stx into entry @fe (fe_node,
 * fe_type), with @fh (NULL: none yet; taken over) opened @acc.
 * Return: 0; -ENOMEM.
 */
int fsc_obj_new(struct fsc_mount *m, Inode *in, const struct ceph_statx *stx,
		Fh *fh, int acc, struct fs_fentry *fe);
/**
 * fsc_obj_fh - @o's Fh, opened with the server's identity on first use:
 * read-only for @acc O_RDONLY, read-write for O_WRONLY or O_RDWR (a
 * read-only one is then replaced).
 * Return: the Fh, or NULL with *@err (-EACCES, -EROFS, -ESTALE, -EIO...).
 */
Fh *fsc_obj_fh(struct fsc_obj *o, int acc, int *err);

/**
 * fsc_lookup_ref - @name in directory @dir (NULL: the export's root) as
 * an inode reference in *@in (drop it with ca_ll_put) and its attributes
 * in @stx, a symlink not followed, as @perms: ".." of the export's root
 * is the root.  @want: the CEPH_STATX_* asked (stx_ino, stx_dev and the
 * type bits of stx_mode come whatever it is; CEPH_STATX_INO alone asks
 * libcephfs for no attribute caps, so the MDS revokes none from other
 * clients).  Return: 0, or libcephfs' negative errno (not mapped).
 */
int fsc_lookup_ref(const struct rpcrdma_nfs3_export *exp, struct fsc_obj *dir,
		   const char *name, const UserPerm *perms, unsigned want,
		   Inode **in, struct ceph_statx *stx);

/* ---- stable WRITEs straight to the OSDs (fs_cephfs_direct.c) ---- */

/**
 * fsc_direct_init - @m's table of files on the direct path, empty.
 * Return: 0, or a negative errno of pthread_mutex_init/pthread_cond_init.
 */
int fsc_direct_init(struct fsc_mount *m);

/** fsc_direct_fini - undo fsc_direct_init() (nothing if it did not run). */
void fsc_direct_fini(struct fsc_mount *m);

/**
 * fsc_direct_created - inode @ino was just created by this gateway (its
 * data is in no cache): its stable WRITEs may go straight to the OSDs.
 * Without room in the table (every entry has writes in flight) the file
 * stays on the cached path.
 */
void fsc_direct_created(struct fsc_mount *m, uint64_t ino);

/**
 * fsc_direct_forget - @o's data is about to go through libcephfs' object
 * cache (a READ, an UNSTABLE WRITE): its inode leaves the direct path for
 * good, once the direct writes in flight have finished (waits for them).
 */
void fsc_direct_forget(struct fsc_obj *o);

/**
 * fsc_direct_begin - the O_DIRECT Fh a stable WRITE of @o goes through,
 * opened on first need with the server's identity, or NULL: the cached
 * path (the inode not created here, or cached since, or the open failed).
 * A non-NULL answer must be followed by fsc_direct_end() once the write
 * returned.
 */
Fh *fsc_direct_begin(struct fsc_obj *o);

/** fsc_direct_end - a direct write fsc_direct_begin() allowed is over. */
void fsc_direct_end(struct fsc_obj *o);

/* ---- operations (fs_backend.h documents them) ---- */

int fsc_be_setattr(struct fs_call *c, struct fs_fentry *fe,
		   const struct stat *pre, const struct fs_sattr *sa,
		   bool skip_mode);
int fsc_be_access(struct fs_call *c, struct fs_fentry *fe,
		  const struct stat *st, int mode);
int fsc_be_open(struct fs_call *c, struct fs_fentry *fe, const struct stat *st,
		int acc);
ssize_t fsc_be_read(struct fs_call *c, struct fs_fentry *fe,
		    const struct iovec *iov, int iovcnt, uint64_t off,
		    bool nowait);
int fsc_be_write(struct fs_call *c, struct fs_fentry *fe,
		 const struct iovec *iov, int iovcnt, uint64_t off,
		 uint32_t stable, size_t *done);
int fsc_be_commit(struct fs_call *c, struct fs_fentry *fe, bool datasync);
int fsc_be_commit_meta(struct fs_call *c, struct fs_fentry *fe);

int fsc_be_lookup(struct fs_call *c, struct fs_fentry *dir,
		  const struct stat *dst, const char *name,
		  struct fs_fentry *out, struct stat *st);
int fsc_be_create(struct fs_call *c, struct fs_fentry *dir,
		  const struct stat *dst, const char *name, mode_t mode,
		  bool excl, const uint8_t *verf, struct fs_fentry *out,
		  struct stat *st, bool *created);
int fsc_be_mkdir(struct fs_call *c, struct fs_fentry *dir,
		 const struct stat *dst, const char *name, mode_t mode,
		 struct fs_fentry *out, struct stat *st);
int fsc_be_mknod(struct fs_call *c, struct fs_fentry *dir,
		 const struct stat *dst, const char *name, mode_t mode,
		 dev_t rdev, struct fs_fentry *out, struct stat *st);
int fsc_be_symlink(struct fs_call *c, struct fs_fentry *dir,
		   const struct stat *dst, const char *name,
		   const char *target, struct fs_fentry *out, struct stat *st);
ssize_t fsc_be_readlink(struct fs_call *c, struct fs_fentry *fe, char *buf,
			size_t len);
int fsc_be_link(struct fs_call *c, struct fs_fentry *fe, struct fs_fentry *dir,
		const char *name);
int fsc_be_unlink(struct fs_call *c, struct fs_fentry *dir, const char *name,
		  bool rmdir);
int fsc_be_rename(struct fs_call *c, struct fs_fentry *fdir, const char *fname,
		  struct fs_fentry *tdir, const char *tname, bool two_dirs,
		  uint8_t *fh, uint32_t *fhlen, bool *have_fh);
int fsc_be_readdir(struct fs_call *c, struct fs_fentry *dir,
		   const struct stat *dst, uint64_t cookie,
		   int (*fn)(void *arg, const char *name, uint64_t ino,
			     uint64_t cookie),
		   void *arg, bool *eof);

int fsc_be_lock_open(struct fs_call *c, struct fs_fentry *fe,
		     struct fs_lockd *out, int *accmode);
int fsc_be_lock(struct fs_lockd *ld, int type, uint64_t start, uint64_t len,
		bool test, struct fs_lock_conflict *cf);
int fsc_be_lock_dup(const struct fs_lockd *ld, struct fs_lockd *out);
void fsc_be_lock_close(struct fs_lockd *ld);
int fsc_be_lease_open(struct fs_call *c, struct fs_fentry *fe,
		      struct fs_lease *ls);
void fsc_be_lease_close(struct fs_lease *ls);

int fsc_be_export_open(struct rpcrdma_nfs3_export *exp, const char *path,
		       const char *opts);
void fsc_be_export_close(struct rpcrdma_nfs3_export *exp);

#endif /* RPCRDMA_FS_CEPHFS_H */
