/* SPDX-License-Identifier: MIT */
/*
 * fs_posix.h - the posix backend's descriptor helpers (fs_posix.c,
 * fs_posix_file.c, fs_posix_sync.c, fs_fcache.c, fs_file.c): a directory of a
 * local kernel file system reached through O_PATH descriptors, kernel file
 * handles (name_to_handle_at(2), open_by_handle_at(2)) and the thread's
 * fsuid/fsgid.  Private to src/fs: the protocols call the operations of
 * fs.h ("fs_vfs.c"), which reach these through fs_posix_backend.
 *
 * Transition: fs.h includes this header at its end until src/nfs3,
 * src/nfs4 and src/nlm call only the fs_vfs.c operations.
 */
#ifndef RPCRDMA_FS_POSIX_H
#define RPCRDMA_FS_POSIX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fs.h"

/* -- fs_posix.c: handles as descriptors -- */
/**
 * fs_fh_make - the NFS handle of @name in @dirfd, never following a
 * symlink (@name "" means @dirfd itself).
 * @fh: out: RPCRDMA_NFS3_FHSIZE bytes; @lenp: out: bytes used.
 * Return: 0; -EXDEV (the object is on another mount than the export);
 * -EOVERFLOW (kernel handle too long); errno of name_to_handle_at.
 */
int fs_fh_make(const struct rpcrdma_nfs3_export *exp, int dirfd,
	       const char *name, uint8_t *fh, uint32_t *lenp);

/**
 * fs_fh_open - open the object a handle names, O_PATH (needs
 * CAP_DAC_READ_SEARCH: call with the server's own credentials).
 * @fdp: out: the descriptor (caller closes); @st: out: its attributes.
 * Return: 0; -EBADMSG (malformed or forged: NFS3ERR_BADHANDLE); -EXDEV (a
 * genuine handle of another export: NFS3ERR_XDEV); -ESTALE
 * (the object is gone or lies on another file system: NFS3ERR_STALE);
 * other errno from open_by_handle_at/fstat.
 */
int fs_fh_open(const struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
	       uint32_t len, int *fdp, struct stat *st);

/* -- fs_fcache.c -- */
/**
 * fs_fcache_fd - the entry's descriptor for @acc (O_RDONLY or
 * O_WRONLY), or -1 when none was opened yet.  The caller must check the
 * current caller's access before using it.
 */
int fs_fcache_fd(struct fs_fentry *fe, int acc);

/**
 * fs_fcache_set_fd - give @fd (opened for @acc) to the entry.
 * Return: the descriptor to use: @fd, or the one another call stored
 * first (then @fd is closed).  The entry owns it either way.
 */
int fs_fcache_set_fd(struct fs_fentry *fe, int acc, int fd);

/* -- fs_posix_sync.c -- */
/**
 * fs_commit_data - make the data a client wrote to regular file @fd
 * stable: fdatasync(2) when @datasync (WRITE DATA_SYNC: the data and what
 * is needed to read it back), else fsync(2) (WRITE FILE_SYNC, COMMIT: all
 * of the file's data and attributes).  RFC 1813 3.3.7, 3.3.21; RFC 8881
 * 18.32.3, 18.3.3.  Any descriptor of the file will do.  Return: 0, or the
 * negative errno of the call (-EIO, -ENOSPC, -EDQUOT, ...).
 */
int fs_commit_data(int fd, bool datasync);

/**
 * fs_write_data - WRITE's data: @len bytes of @buf at offset @off of
 * regular file @fd, as stable as @stable asks (stable_how: 0 UNSTABLE,
 * 1 DATA_SYNC, 2 FILE_SYNC; the same numbers in NFSv3 and NFSv4).  A
 * stable write is one pwritev2(2) with RWF_DSYNC or RWF_SYNC: the range
 * written and the attributes are synced in the same system call, as
 * knfsd writes stable data, instead of a pwrite and an fsync of the whole
 * file; where the file system refuses the flag (EOPNOTSUPP), a plain write
 * then fs_commit_data().  A stable write of no data still commits.
 * RFC 1813 3.3.7, RFC 8881 18.32.3.  *@done: bytes written and as stable
 * as asked: all of @len, or fewer when an error stopped the write after
 * some were written (then 0 is returned: the reply counts what was
 * written, and the client sends the rest again).  Return: 0, or the
 * negative errno of the write or the sync when nothing was written or the
 * sync failed (-EIO, -ENOSPC, -EDQUOT, -EFBIG, ...).
 */
int fs_write_data(int fd, const uint8_t *buf, size_t len, off_t off,
		  uint32_t stable, size_t *done);

/* -- fs_posix_file.c -- */
/** fs_proc_path - "/proc/self/fd/@fd" into @buf (32 bytes suffice). */
void fs_proc_path(char *buf, size_t len, int fd);
/**
 * fs_reopen - a real descriptor (@flags, O_CLOEXEC added) for the regular
 * file behind O_PATH @fd, checked against the caller's identity, with
 * knfsd's owner and execute-for-read overrides.  @st: the file's
 * attributes or NULL.  Return: the descriptor (caller closes) or -errno.
 */
int fs_reopen(struct fs_call *c, int fd, const struct stat *st, int flags);
/**
 * fs_file_fd - a descriptor of @fe's regular file open for @acc (O_RDONLY
 * or O_WRONLY; the entry owns it), checked for the caller as an open would.
 * Return: the descriptor, or a negative errno (-EACCES, ...).
 */
int fs_file_fd(struct fs_call *c, struct fs_fentry *fe,
	       const struct stat *st, int acc);
/**
 * fs_unlink_fh - before REMOVE or RENAME takes @name out of @dirfd: the
 * handle of what it names, when the open-file cache could hold it.
 * Return: true when @fh holds the handle.
 */
bool fs_unlink_fh(struct fs_call *c, int dirfd, const char *name,
		  uint8_t *fh, uint32_t *len);
/**
 * fs_posix_lookup_fh - be_lookup_fh of the posix backend (fs_backend.h):
 * the handle and attributes of @name in @dir by statx(2), from a cache
 * entry that holds the same object where one does, else
 * name_to_handle_at()'s.  Return: 0; -ENOENT; -EACCES; -EXDEV;
 * -EOVERFLOW; another negative errno of openat(2) or statx(2).
 */
int fs_posix_lookup_fh(struct fs_call *c, struct fs_fentry *dir,
		       const struct stat *dst, const char *name,
		       uint64_t hint_ino, uint8_t *fh, uint32_t *lenp,
		       struct stat *st, bool *st_ok);
/**
 * fs_dir_may_write - whether the caller (fs_become_caller() done) may
 * add and take away names in directory @dirfd (write and search
 * permission), checked before LINK, RENAME and MKNOD try the operation:
 * knfsd checks this first, so a caller without it gets NFS3ERR_ACCES even
 * where the system call would have found another reason first (a link to
 * a file protected_hardlinks guards, a sticky source directory, a device
 * node: EPERM).  Return: 0, -EACCES, -EROFS or another negative errno.
 */
int fs_dir_may_write(int dirfd);
/**
 * fs_posix_rename - RENAME's system calls (NFSv3 and NFSv4.1): @fname in
 * directory @fromfd to @tname in @tofd (@two_dirs: different
 * directories), the caller's credentials in force.  First
 * renameat2(RENAME_NOREPLACE): a rename that replaces nothing is one
 * system call, and the kernel checked that the caller may write both
 * directories.  Otherwise (a name in the way, or a failure) as knfsd:
 * fs_dir_may_write() of both directories first, so a caller without
 * that hears -EACCES (or -EROFS) where rename(2) finds another reason
 * first (a sticky directory: -EPERM), or succeeds without asking (a rename
 * onto the same file: one name, or two links of one inode); then the
 * handle of the name replaced (fs_unlink_fh(), into @fh, @fhlen,
 * *@have_fh) and renameat().  RFC 1813 3.3.14, RFC 8881 18.26.
 * Return: 0, or a negative errno (-EACCES, -EROFS, -ENOENT, -EEXIST,
 * -ENOTEMPTY, -EISDIR, -ENOTDIR, -EINVAL, -EXDEV, -EPERM, ...).
 */
int fs_posix_rename(struct fs_call *c, int fromfd, const char *fname,
		    int tofd, const char *tname, bool two_dirs, uint8_t *fh,
		    uint32_t *fhlen, bool *have_fh);

/** fs_set_times - the atime/mtime part of a sattr3 on O_PATH @fd. 0/-errno. */
int fs_set_times(int fd, const struct fs_sattr *sa);
/**
 * fs_sattr_apply - carry out a sattr3 on O_PATH @fd (RFC 1813 3.3.2):
 * size, owner, mode (unless @skip_mode), times.  @fe: the file's cache
 * entry (its write descriptor truncates) or NULL.  0/-errno.
 */
int fs_sattr_apply(struct fs_call *c, int fd, const struct stat *st,
		   const struct fs_sattr *sa, bool skip_mode,
		   struct fs_fentry *fe);

static inline void fs_close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

/**
 * fs_stat_at - the attributes of @name in directory @dirfd (""\: of
 * @dirfd itself), not following a symlink, with one statx(2) (STATX_BASIC_STATS and STATX_MNT_ID) into
 * @st, as fstat(2) of the object would give them.  *@here: true when the
 * object is on the export's mount (its mount id and st_dev are the
 * export's), false when it is another mount or the kernel did not say.
 * Return: 0 or statx's negative errno (-ENOENT, -EACCES, -ENOTDIR...).
 */
int fs_stat_at(const struct rpcrdma_nfs3_export *exp, int dirfd,
	       const char *name, struct stat *st, bool *here);

/**
 * fs_lookup_at - open @name in directory @dirfd (attributes @dst) with
 * O_PATH|O_NOFOLLOW; "." is the directory and ".." of the export root is
 * the root.  @name must already be checked (nfs3_name_check).
 * Return: 0 or a negative errno.
 */
int fs_lookup_at(const struct rpcrdma_nfs3_export *exp, int dirfd,
		 const struct stat *dst, const char *name, int *fdp,
		 struct stat *st);


/* -- fs_posix_sync.c -- */

/* Most iovecs one preadv2/pwritev2 takes (the kernel's UIO_MAXIOV). */
#define FS_POSIX_IOV_MAX 1024

/**
 * fs_posix_iov_advance - @n more bytes of the iovecs *@iov (*@cnt of them,
 * the first from byte *@skip on) were transferred: step past them and past
 * iovecs of no bytes.
 */
void fs_posix_iov_advance(const struct iovec **iov, int *cnt, size_t *skip,
			  size_t n);

/**
 * fs_posix_commit_meta - be_commit_meta of the posix backend: fsync of a
 * descriptor of @fe's regular file or directory kept in the entry (its
 * write or read one, else one opened read-only as the caller, or as the
 * server when the caller may not read it).  Return: 0, or the negative
 * errno of the open or the fsync.
 */
int fs_posix_commit_meta(struct fs_call *c, struct fs_fentry *fe);

/* -- fs_posix.c -- */

/**
 * fs_posix_writev - fs_write_data() of the iovecs @iov (@iovcnt of them,
 * @len bytes in all): the same pwritev2(2) loop, flags and fallback.
 * *@done: bytes written.  Return: as fs_write_data().
 */
int fs_posix_writev(int fd, const struct iovec *iov, int iovcnt, size_t len,
		    off_t off, uint32_t stable, size_t *done);

/**
 * fs_posix_key - the kernel handle of @name in @dirfd (name_to_handle_at,
 * never following a symlink; "" is @dirfd itself): its bytes into @key
 * (FS_BE_KEY_MAX), *@keylen, *@type.  Return: 0; -EXDEV (another mount
 * than the export's); -EOVERFLOW (longer than FS_FH_KERNEL_MAX); errno of
 * name_to_handle_at.
 */
int fs_posix_key(const struct rpcrdma_nfs3_export *exp, int dirfd,
		 const char *name, uint8_t *key, uint32_t *keylen,
		 uint32_t *type);

/**
 * fs_posix_open_key - open_by_handle_at(O_PATH|O_NOFOLLOW) of kernel handle
 * @key (@keylen bytes, @type) on the export's mount, and fstat into @st,
 * with the thread's credentials as they are.  *@fdp: the descriptor
 * (caller closes).  Return: 0; -ESTALE (gone, undecodable, or on another
 * file system); other errno of open_by_handle_at or fstat.
 */
int fs_posix_open_key(const struct rpcrdma_nfs3_export *exp, uint32_t type,
		      const uint8_t *key, uint32_t keylen, int *fdp,
		      struct stat *st);

/* -- fs_posix_lease.c -- */

/**
 * fs_posix_lease_open - be_lease_open of the posix backend: a read lease
 * (F_SETLEASE F_RDLCK) on a read-only description of @fe's file opened
 * with the server's identity, whose break the lease thread (started by
 * the first call) takes as the signal fs_posix_lease_signal() and passes
 * to @ls->ls_fn.  Return: 0; -EAGAIN (open for writing somewhere, or a
 * write lease another holds); -EACCES (neither the file's owner nor
 * CAP_LEASE); -EMFILE; -ENOMEM; -EOPNOTSUPP (leases disabled or not
 * given by the file system); other errno of open(2) or fcntl(2).
 */
int fs_posix_lease_open(struct fs_call *c, struct fs_fentry *fe,
			struct fs_lease *ls);
/** fs_posix_lease_close - be_lease_close: waits for a break of @ls in
 *  flight, then closes its description (the lease with it). */
void fs_posix_lease_close(struct fs_lease *ls);
/**
 * fs_posix_lease_signal - the real-time signal the lease descriptions
 * send their breaks with: SIGRTMIN + 7 unless RPCRDMA_LEASE_SIGNAL named
 * another between SIGRTMIN and SIGRTMAX when the first lease was taken
 * (starts the lease thread, as the first lease does).
 */
int fs_posix_lease_signal(void);

#endif /* RPCRDMA_FS_POSIX_H */
