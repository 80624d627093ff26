/* SPDX-License-Identifier: MIT */
/*
 * fs_backend.h - the backend interface of the file-serving layer: one
 * operations table per export (ex_be), which the layer's operations
 * (fs_vfs.c, declared in fs.h) call.  The protocols (src/nfs3, src/nfs4,
 * src/nlm) never include this header: they call fs_*() of fs.h.
 *
 * Backends:
 *   posix   (fs_posix.c)  a directory of a local kernel file system,
 *                         reached through O_PATH descriptors, kernel file
 *                         handles, the thread's fsuid/fsgid; the default
 *   memory  (fs_memory.c) an in-memory tree, for tests and scratch space;
 *                         needs no privilege
 *
 * Objects.  The layer holds a backend object in a struct fs_fentry (an
 * entry of the open-file or directory cache, or caller storage for one
 * call): a descriptor backend keeps its descriptors in fe_path, fe_rfd,
 * fe_wfd; any other keeps a pointer in fe_node.  A backend fills those
 * fields (be_fh_decode, be_lookup, the creating operations) and frees them
 * (be_release); nothing else touches them, but the layer, which moves an
 * object from caller storage into a cache entry (fs_fcache_adopt()) and
 * marks every entry a backend filled with that backend (fe_be: whose
 * be_release frees it).
 *
 * Credentials.  Every operation that acts for a caller takes the call
 * (struct fs_call: c_cred is the caller's identity after squashing,
 * c_exp the export, c_nowait "on the transport thread: do not wait for a
 * disk").  A backend with FS_BE_SWITCHES_IDENTITY runs its system calls
 * as the caller after fs_become_caller() switched the thread; any other
 * checks permissions itself from c_cred (root after squashing, uid 0,
 * passes every check but execute without an x bit, as the kernel's
 * CAP_DAC_OVERRIDE).
 *
 * Errors are negative errno values; each operation lists its own.  The
 * protocols map them (nfs3_errno_to_stat, nfs4_errno); a backend answers
 * -EAGAIN for "busy, try later" (NFS3ERR_JUKEBOX, NFS4ERR_DELAY) and never
 * a status outside what the operation lists plus -EIO, -ENOMEM, -ENOSPC,
 * -EDQUOT, -EROFS.
 */
#ifndef RPCRDMA_FS_BACKEND_H
#define RPCRDMA_FS_BACKEND_H

#include "fs.h"

enum {
	/* the thread runs as the caller for the backend's work
	 * (fs_become_caller() calls fs_cred_apply()) */
	FS_BE_SWITCHES_IDENTITY = 1u << 0,
	/* nothing the backend does waits for a disk: every operation may run
	 * on the transport thread */
	FS_BE_NEVER_WAITS = 1u << 1,
	/* an export's path names a directory of this machine, which the
	 * exports check (xn_check_paths) stats; other
	 * backends' paths name what only they can reach */
	FS_BE_LOCAL_PATH = 1u << 2,
};

/* Largest key a backend puts in a handle (the rest is the layer's). */
#define FS_BE_KEY_MAX FS_FH_KERNEL_MAX

struct fs_backend {
	const char *be_name;     /* as in exports: backend=NAME */
	unsigned be_flags;       /* FS_BE_* */

	/* ---- the export ---- */

	/**
	 * be_export_open - make @exp serve @path (absolute, trailing slashes
	 * removed): set ex_dev, ex_ino (the root's identity, compared by
	 * fs_is_root()), ex_fsid, ex_mem_fs and whatever the backend keeps
	 * (ex_fd, ex_mnt_id, ex_be_priv).  @opts: the backend's options
	 * from the exports line ("" or NULL: none).
	 * Return: 0; -ENOENT, -ENOTDIR, -EACCES (no such directory);
	 * -EOPNOTSUPP (the file system cannot serve: no file handles);
	 * -EINVAL (a bad option); -ENOMEM.
	 */
	int (*be_export_open)(struct rpcrdma_nfs3_export *exp, const char *path,
			      const char *opts);
	/** be_export_close - free what be_export_open() made; no object of
	 *  the export is held any more. */
	void (*be_export_close)(struct rpcrdma_nfs3_export *exp);

	/* ---- handles and objects (server identity, no caller) ---- */

	/**
	 * be_fh_key - the key of @name in directory @dir (@name "": @dir
	 * itself; @dir NULL: the export's root directory), never following
	 * a symlink: up to FS_BE_KEY_MAX bytes in
	 * @key (*@keylen) and a 32-bit @type, the same on every call for the
	 * same object while it exists (and, where the backend can, across
	 * restarts).  The layer wraps it into a MAC'd handle (fs_fh.c).
	 * Return: 0; -ENOENT; -EXDEV (the object is on another file system
	 * than the export: not served); -EOVERFLOW (key too long); -EACCES.
	 */
	int (*be_fh_key)(const struct rpcrdma_nfs3_export *exp,
			 struct fs_fentry *dir, const char *name, uint8_t *key,
			 uint32_t *keylen, uint32_t *type);
	/**
	 * be_fh_decode - the object of a key be_fh_key() made, into @fe
	 * (initialised by fs_fentry_init(); fe_type set by the backend) and
	 * its attributes into @st.  Return: 0; -ESTALE (no such object any
	 * more, or a key this export never made); -ENOMEM; -EIO.
	 */
	int (*be_fh_decode)(const struct rpcrdma_nfs3_export *exp, uint32_t type,
			    const uint8_t *key, uint32_t keylen,
			    struct fs_fentry *fe, struct stat *st);
	/** be_release - free the backend's part of @fe (descriptors, a
	 *  reference); @fe may hold nothing (fs_fentry_init()). */
	void (*be_release)(struct fs_fentry *fe);

	/**
	 * be_getattr - the attributes of @fe (st_dev is the export's
	 * file system, st_ino the file id, st_mode with type bits, times
	 * with nanoseconds, st_ctim changes with every change of data or
	 * attributes).  Return: 0; -ESTALE; -EIO.
	 */
	int (*be_getattr)(const struct rpcrdma_nfs3_export *exp,
			  struct fs_fentry *fe, struct stat *st);

	/* ---- operations for a caller (c_cred), fs_become_caller() done ---- */

	/**
	 * be_setattr - carry out @sa on @fe (RFC 1813 3.3.2, RFC 8881
	 * 18.30): size (regular files only: -EISDIR, -EINVAL otherwise),
	 * then owner, then mode (unless @skip_mode; never on a symlink),
	 * then times; @pre: the attributes before.  Permission as POSIX:
	 * size needs write access (the owner may always, as knfsd), owner
	 * changes need root (a group change: the owner, to one of its
	 * groups), mode the owner or root, client times the owner or root,
	 * server times (both SET_TO_SERVER_TIME or DONT_CHANGE) also a
	 * writer.  Return: 0; -EPERM; -EACCES; -EINVAL; -EISDIR; -EFBIG;
	 * -ENOSPC; -EROFS; -ESTALE.
	 */
	int (*be_setattr)(struct fs_call *c, struct fs_fentry *fe,
			  const struct stat *pre, const struct fs_sattr *sa,
			  bool skip_mode);
	/**
	 * be_access - whether the caller has all of @mode (R_OK, W_OK,
	 * X_OK) on @fe, as faccessat(AT_EACCESS) (a directory's X_OK is
	 * search).  Return: 0; -EACCES; -EROFS (W_OK on a read-only file
	 * system); -ESTALE.
	 */
	int (*be_access)(struct fs_call *c, struct fs_fentry *fe,
			 const struct stat *st, int mode);
	/**
	 * be_lookup - @name in directory @dir (attributes @dst) into @out
	 * (fs_fentry_init() done by the caller), attributes into @st; "."
	 * is @dir, ".." of the export root is the root; a symlink is not
	 * followed.  Needs search permission on @dir.  Return: 0; -ENOENT;
	 * -ENOTDIR; -EACCES; -EXDEV (a mount inside the export: not crossed);
	 * -ENAMETOOLONG.
	 */
	int (*be_lookup)(struct fs_call *c, struct fs_fentry *dir,
			 const struct stat *dst, const char *name,
			 struct fs_fentry *out, struct stat *st);
	/**
	 * be_lookup_attr - the attributes of @name in directory @dir
	 * (attributes @dst), a symlink not followed, without making an
	 * object of it: what NFSv4.1 READDIR reports for each entry and
	 * REMOVE asks (posix: one fstatat(AT_SYMLINK_NOFOLLOW), where
	 * be_lookup() opens, fstats and closes).  Unlike be_lookup(), a
	 * mount inside the export gives the attributes of what is mounted
	 * there (st_dev another file system's: the caller tells), and "."
	 * and ".." are not special (the callers never pass them).  Needs
	 * search permission on @dir.  NULL: the layer asks be_lookup() and
	 * drops the object (be_release()).  Return: 0; -ENOENT; -ENOTDIR;
	 * -EACCES; -ENAMETOOLONG.
	 */
	int (*be_lookup_attr)(struct fs_call *c, struct fs_fentry *dir,
			      const struct stat *dst, const char *name,
			      struct stat *st);
	/**
	 * be_lookup_fh - LOOKUP's answer without an object (fs_lookup_fh()):
	 * the handle of @name in directory @dir (attributes @dst) into @fh
	 * (RPCRDMA_NFS3_FHSIZE bytes; *@lenp used), the same bytes
	 * fs_fh_encode() makes of be_fh_key()'s key, and its attributes into
	 * @st (*@st_ok set once they are there, also when only the handle
	 * then fails).  A symlink is not followed and a mount not crossed, as
	 * be_lookup().  The backend may take the handle from an entry of the
	 * export's caches that holds the same object (fs_fcache_fh_of_ino());
	 * @hint_ino: the file id READDIR gave for @name (0: none), which it
	 * may use to look for such an entry before it looks at @name.  The
	 * layer calls it only for a name other than "." and "..", and only
	 * on an export with an open-file or directory cache.  Needs search
	 * permission on @dir.  Optional (NULL: the layer asks be_lookup(),
	 * wraps be_fh_key() of the object and drops it).  Return: 0;
	 * -ENOENT; -ENOTDIR; -EACCES; -EXDEV (a mount inside the export, or
	 * an object on another file system); -ENAMETOOLONG; -EOVERFLOW (key
	 * too long).
	 */
	int (*be_lookup_fh)(struct fs_call *c, struct fs_fentry *dir,
			    const struct stat *dst, const char *name,
			    uint64_t hint_ino, uint8_t *fh, uint32_t *lenp,
			    struct stat *st, bool *st_ok);
	/**
	 * be_open - prepare @fe (a regular file, attributes @st or NULL)
	 * for be_read (@acc O_RDONLY) or be_write (O_WRONLY) by this caller:
	 * the check an open(2) makes, with knfsd's overrides (the owner may
	 * read and write its own file whatever the mode; read with execute
	 * permission).  Return: 0; -EACCES; -ETXTBSY; -EROFS; -ESTALE.
	 */
	int (*be_open)(struct fs_call *c, struct fs_fentry *fe,
		       const struct stat *st, int acc);
	/**
	 * be_read - up to the iovecs' total bytes of @fe from offset @off
	 * into @iov (the transport's registered buffers: no bounce copy),
	 * stopping short only at the end of the file; be_open(O_RDONLY)
	 * done.  @nowait: only what is at hand without waiting for a disk
	 * (stops short, or -EAGAIN when nothing is).  Return: bytes read;
	 * -EAGAIN (@nowait); -EOPNOTSUPP (@nowait not supported here: ask
	 * again without it); -EIO; -EISDIR; -EINVAL.
	 */
	ssize_t (*be_read)(struct fs_call *c, struct fs_fentry *fe,
			   const struct iovec *iov, int iovcnt, uint64_t off,
			   bool nowait);
	/**
	 * be_read_pipe - up to @len bytes of @fe from offset @off into the
	 * pipe @pipefd (its write end, non-blocking, room for @len) by
	 * splice(2): page-cache pages referenced, not copied; stopping
	 * short only at the end of the file; be_open(O_RDONLY) done; may
	 * wait for the disk.  NULL where the backend has no descriptor
	 * (memory, cephfs).  Return: bytes moved; -EOPNOTSUPP (the file
	 * cannot be spliced: nothing moved, ask be_read()); -EIO; -EINVAL.
	 */
	ssize_t (*be_read_pipe)(struct fs_call *c, struct fs_fentry *fe,
				int pipefd, uint64_t off, size_t len);
	/**
	 * be_write - the iovecs' bytes into @fe at @off, as stable as
	 * @stable asks (enum fs_stable_how; RFC 1813 3.3.7, RFC 8881
	 * 18.32.3); be_open(O_WRONLY) done.  *@done: bytes written (fewer
	 * than asked only when an error stopped it after some: then 0 is
	 * returned).  Return: 0; -ENOSPC; -EDQUOT; -EFBIG; -EIO.
	 */
	int (*be_write)(struct fs_call *c, struct fs_fentry *fe,
			const struct iovec *iov, int iovcnt, uint64_t off,
			uint32_t stable, size_t *done);
	/**
	 * be_commit - make the data written to regular file @fe stable
	 * (@datasync: data only, as fdatasync) with the server's identity
	 * (COMMIT, RFC 1813 3.3.21).  Return: 0; -EIO; -ENOSPC; -EDQUOT.
	 */
	int (*be_commit)(struct fs_call *c, struct fs_fentry *fe, bool datasync);
	/**
	 * be_commit_meta - commit_metadata: make the last change of @fe's
	 * attributes or (a directory) names stable before the reply.
	 * Called only when the export entry is sync and the export is not
	 * in memory (fs_commit.c), and only for a regular file or a
	 * directory (other types have nothing to sync: the layer answers 0).
	 * Return: 0; -EIO; -ENOSPC.
	 */
	int (*be_commit_meta)(struct fs_call *c, struct fs_fentry *fe);

	/**
	 * be_create - a regular file @name in @dir with mode @mode (07777
	 * bits, taken as given: no umask), owned by the caller; @excl:
	 * -EEXIST when the name exists, else an existing object of the name
	 * is looked up (be_lookup(), never opened or truncated; whatever its
	 * type: the protocol answers for a non-regular one).  @verf: NULL,
	 * or the 8-byte verifier of an exclusive create (NFSv3 EXCLUSIVE,
	 * RFC 1813 3.3.8; NFSv4.1 EXCLUSIVE4, RFC 8881 18.16.3), passed
	 * with @excl false: a file this call makes gets its first 4 bytes
	 * (big-endian) as atime seconds and the last 4 as mtime seconds
	 * (nanoseconds 0) before its attributes are read into @st, so the
	 * protocol finds the verifier of a retransmission in an existing
	 * file's times.  The new or found object into @out, its attributes
	 * into @st; *@created: made by this call.  Needs write and search
	 * permission on @dir.  Return: 0; -EEXIST; -EACCES; -ENOSPC;
	 * -EDQUOT; -ENAMETOOLONG; others of be_lookup() (an existing name).
	 */
	int (*be_create)(struct fs_call *c, struct fs_fentry *dir,
			 const struct stat *dst, const char *name, mode_t mode,
			 bool excl, const uint8_t *verf, struct fs_fentry *out,
			 struct stat *st, bool *created);
	/** be_mkdir - a directory; as be_create() with @excl. */
	int (*be_mkdir)(struct fs_call *c, struct fs_fentry *dir,
			const struct stat *dst, const char *name, mode_t mode,
			struct fs_fentry *out, struct stat *st);
	/**
	 * be_mknod - a special file: @mode is S_IFCHR, S_IFBLK, S_IFIFO or
	 * S_IFSOCK with 07777 bits, @rdev its device number; as be_mkdir().
	 * Return: also -EPERM (a device node by a caller who is not root).
	 */
	int (*be_mknod)(struct fs_call *c, struct fs_fentry *dir,
			const struct stat *dst, const char *name, mode_t mode,
			dev_t rdev, struct fs_fentry *out, struct stat *st);
	/** be_symlink - a symbolic link to @target (stored, never resolved);
	 *  as be_mkdir(). */
	int (*be_symlink)(struct fs_call *c, struct fs_fentry *dir,
			  const struct stat *dst, const char *name,
			  const char *target, struct fs_fentry *out,
			  struct stat *st);
	/**
	 * be_readlink - the target of symlink @fe into @buf (@len bytes, not
	 * NUL-terminated).  Return: its length; -EINVAL (not a symlink);
	 * -ENAMETOOLONG (longer than @len - 1).
	 */
	ssize_t (*be_readlink)(struct fs_call *c, struct fs_fentry *fe,
			       char *buf, size_t len);
	/**
	 * be_link - a new name @name in @dir for @fe (not a directory).
	 * Return: 0; -EEXIST; -EACCES; -EPERM (a directory); -EMLINK;
	 * -EXDEV; -ENOSPC.
	 */
	int (*be_link)(struct fs_call *c, struct fs_fentry *fe,
		       struct fs_fentry *dir, const char *name);
	/**
	 * be_unlink - take @name out of @dir: @rmdir set, only an empty
	 * directory (-ENOTDIR otherwise), else anything but a directory
	 * (-EISDIR).  The object lives on while it has names or holders.
	 * Return: 0; -ENOENT; -EACCES; -EPERM (sticky directory);
	 * -ENOTEMPTY; -EBUSY; -EISDIR; -ENOTDIR; -EINVAL (".").
	 */
	int (*be_unlink)(struct fs_call *c, struct fs_fentry *dir,
			 const char *name, bool rmdir);
	/**
	 * be_rename - @fname in @fdir becomes @tname in @tdir (@two_dirs:
	 * different directories), replacing what @tname named as rename(2).
	 * When it replaces an object, its handle goes into @fh (*@fhlen,
	 * *@have_fh set) before it is gone (fs_unlink_fh()), so the layer
	 * drops it from its caches.  Return: 0; -ENOENT; -EACCES; -EPERM;
	 * -EEXIST; -ENOTEMPTY; -EISDIR; -ENOTDIR; -EINVAL; -EXDEV; -EBUSY.
	 */
	int (*be_rename)(struct fs_call *c, struct fs_fentry *fdir,
			 const char *fname, struct fs_fentry *tdir,
			 const char *tname, bool two_dirs, uint8_t *fh,
			 uint32_t *fhlen, bool *have_fh);
	/**
	 * be_readdir - the entries of directory @dir (attributes @dst) after
	 * @cookie (0: from the start, "." and ".." first), each passed to
	 * @fn until it returns non-zero (that entry is not consumed: its
	 * cookie is the previous one's).  Cookies are stable while the
	 * directory changes (an entry removed does not move the others).
	 * Needs read permission on @dir.  Return: 0 (the end was reached:
	 * *@eof set), or the end not reached because @fn stopped (*@eof
	 * false); -EACCES; -ENOTDIR; -EBADCOOKIE is never returned (a stale
	 * cookie just lists from the next entry that exists).
	 */
	int (*be_readdir)(struct fs_call *c, struct fs_fentry *dir,
			  const struct stat *dst, uint64_t cookie,
			  int (*fn)(void *arg, const char *name, uint64_t ino,
				    uint64_t cookie),
			  void *arg, bool *eof);
	/**
	 * be_statfs - the file system's sizes and limits for @fe's export.
	 * Return: 0; -EIO.
	 */
	int (*be_statfs)(struct fs_call *c, struct fs_fentry *fe,
			 struct fs_statfs *out);

	/* ---- byte-range locks (the table NLM, NFSv4 and local lockers share) ---- */

	/**
	 * be_lock_open - a lock owner's description of file @fe (as an open
	 * file description: locks belong to it, and closing it releases
	 * them), opened with the server's identity (the protocol checked
	 * the caller's right to the file): read and write where the file
	 * allows it, else read only; *@accmode says which (O_RDWR,
	 * O_RDONLY).  Return: 0; -EACCES; -ENOMEM; -EMFILE; -EAGAIN
	 * (the file is busy: a lease another server holds on it; try later).
	 */
	int (*be_lock_open)(struct fs_call *c, struct fs_fentry *fe,
			    struct fs_lockd *out, int *accmode);
	/**
	 * be_lock - set (@type F_RDLCK, F_WRLCK) or clear (F_UNLCK) the range
	 * @start, @len (0: to the end of the file) for owner @ld, as POSIX
	 * locks (split and merge; an owner never conflicts with itself), or
	 * with @test only find the first lock of another owner that
	 * conflicts.  Never waits.  @cf: out: the conflict (set or test);
	 * NULL: not wanted (a set that fails asks for nothing more).  A
	 * conflict gone before it could be described: -EAGAIN with
	 * cf_type F_UNLCK (try again).  Return: 0 (set; or tested and free);
	 * -EAGAIN (a conflict, in *@cf); -ENOLCK (no room in the table);
	 * -EBADF (@type needs an access @ld lacks: a write lock on a
	 * read-only description); -EINVAL (@start or @len past INT64_MAX);
	 * -EOVERFLOW (a range that ends past INT64_MAX).
	 */
	int (*be_lock)(struct fs_lockd *ld, int type, uint64_t start,
		       uint64_t len, bool test, struct fs_lock_conflict *cf);
	/** be_lock_dup - another reference to @ld's description (its locks
	 *  are the same owner's).  Return: 0; -EMFILE; -ENOMEM. */
	int (*be_lock_dup)(const struct fs_lockd *ld, struct fs_lockd *out);
	/** be_lock_close - drop a reference; the last releases every lock
	 *  of the description. */
	void (*be_lock_close)(struct fs_lockd *ld);

	/* ---- leases, for delegations (RFC 8881 10.4) ---- */

	/**
	 * be_lease_open - a read lease on @fe's file (a regular file) into
	 * @ls (ls_fn, ls_arg set by the caller; the backend sets ls_be and
	 * its own fields): from now until be_lease_close(), the backend
	 * calls ls_fn(ls_arg, @ls) when anyone but this lease's holder
	 * opens the file for writing, truncates, writes, renames or removes
	 * it (posix: any other open file description, this server's own
	 * included; memory: a change made through another export of the
	 * same tree, as another gateway would).  The change itself may go
	 * on at once (a backend that cannot hold it off) or wait for the
	 * close, at most the backend's documented time (posix: the kernel's
	 * lease-break-time, 45 s by default).  Server identity.
	 * Optional (NULL: the backend cannot tell of changes from outside;
	 * delegations rest on the layer's change hook alone).
	 * Return: 0; -EAGAIN (the file is open for writing somewhere: no
	 * lease now); -EINVAL (not a regular file); -EACCES; -EMFILE;
	 * -ENOMEM; -EOPNOTSUPP (the file system gives no leases).
	 */
	int (*be_lease_open)(struct fs_call *c, struct fs_fentry *fe,
			     struct fs_lease *ls);
	/** be_lease_close - give the lease back (a change waiting for it
	 *  goes on); after it returns ls_fn is never called for @ls; @ls
	 *  then holds nothing. */
	void (*be_lease_close)(struct fs_lease *ls);

	/* ---- share reservations (RFC 8881 9.7) beyond this server ---- */

	/**
	 * be_share - set owner @owner's share reservation on @fe's file to
	 * @access and @deny (FS_SHARE_* bits; @access 0: drop it), where
	 * every server on the same storage sees it (the memory backend: every
	 * export of the tree).  The layer has already checked this server's
	 * own reservations (fs_share_set); the backend checks the others'
	 * and records this one atomically.  @owner is unique within this
	 * server (fs_share_set's) and @c->c_exp tells servers apart.
	 * Optional (NULL: reservations reach no further than this server;
	 * local processes are never denied, as on Linux, which has no deny
	 * modes).  Return: 0; -EBUSY (another server's reservation denies
	 * @access, or has what @deny denies); -ENOMEM; -ENOLCK (no room).
	 */
	int (*be_share)(struct fs_call *c, struct fs_fentry *fe, uint64_t owner,
			uint32_t access, uint32_t deny);

	/* ---- the grace period across servers (RFC 8881 8.4.2.1) ---- */

	/**
	 * be_cluster_grace - is another server on @exp's storage (a gateway
	 * of the same cluster) in its grace period after a restart, when
	 * its clients reclaim what the storage dropped with its previous
	 * incarnation?  This server's own grace period is not asked (the
	 * protocols keep it).  Server identity; may wait for the storage.
	 * A backend that has one makes its own grace period known to the
	 * others (fs_instance_grace_end()) before it releases its previous
	 * incarnation's locks.  Optional (NULL: no server beside this one
	 * can hold locks on the storage, or the backend cannot tell: 0).
	 * Return: 1 (another server is in grace); 0 (none, or not
	 * configured for @exp); -EAGAIN (the record cannot be read now).
	 */
	int (*be_cluster_grace)(struct rpcrdma_nfs3_export *exp);
};

/** fs_posix_backend - local kernel file systems (fs_posix.c). */
extern const struct fs_backend fs_posix_backend;
/** fs_memory_backend - an in-memory tree (fs_memory.c). */
extern const struct fs_backend fs_memory_backend;

/**
 * fs_memory_set_limits - the most a memory export (@exp, served by
 * fs_memory_backend) may hold: @bytes of file data, symlink targets and
 * names (each with its directory entry's own bytes) together (0: the
 * default, 256 MiB), and @nodes objects (0: the
 * default, 65536; the root counts).  Past either, an operation that would
 * need more fails with -ENOSPC (a write stops short at the page that does
 * not fit).  Lowering a limit below what is held frees nothing: only new
 * growth is refused.  The same limits come from the backend's options
 * "bytes=SIZE" (K, M, G, T suffixes) and "nodes=N".  For tests and the
 * exports option.  Return: 0; -EINVAL (not a memory export).
 */
int fs_memory_set_limits(struct rpcrdma_nfs3_export *exp, uint64_t bytes,
			 uint64_t nodes);

/**
 * fs_backend_find - the backend named @name ("posix", "memory"), or NULL.
 */
const struct fs_backend *fs_backend_find(const char *name);

/**
 * fs_backend_parse - a backend's specification as an exports line or
 * nc_backend writes it, "NAME" or "NAME:OPT=V[:OPT=V...]" (exports(5)
 * options are separated by commas, so a backend's own are by colons).
 * @opts: out: the options, comma-separated ("" when none), what
 * be_export_open() gets.  Return: the backend, or NULL (no such name, or
 * options longer than FS_BE_OPTS_MAX - 1).
 */
const struct fs_backend *fs_backend_parse(const char *spec,
					  char opts[FS_BE_OPTS_MAX]);

#endif /* RPCRDMA_FS_BACKEND_H */
