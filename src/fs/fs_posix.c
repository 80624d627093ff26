// SPDX-License-Identifier: MIT
/*
 * fs_posix.c - the posix backend (fs_backend.h): a directory of a local
 * kernel file system.  Objects are O_PATH descriptors (fe_path) with, for
 * a regular file once a call needed them, a read and a write descriptor
 * (fe_rfd, fe_wfd); keys are kernel file handles (name_to_handle_at(2)),
 * decoded with open_by_handle_at(2) on the export's mount, which needs the
 * server's CAP_DAC_READ_SEARCH; every operation for a caller runs with the
 * caller's fsuid, fsgid and groups (FS_BE_SWITCHES_IDENTITY: the layer's
 * fs_become_caller() switched the thread), so the kernel makes every
 * permission decision.  Names are resolved with *at() calls that never
 * follow a symlink and never cross a mount.
 *
 * Each operation makes the system calls the NFSv3 and NFSv4.1 procedures
 * made before the layer had backends, in the same order: the descriptor
 * helpers they used are in fs_posix_file.c and fs_posix_sync.c.
 *
 * Share reservations: no be_share.  Linux has no deny modes (an open(2)
 * is never refused for another open's sake), so a reservation cannot
 * reach local processes or another server on the same file system; the
 * layer's table (fs_share.c) still makes NFSv4 OPEN and NLM SHARE of this
 * server deny each other.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/be.h"
#include "fs.h"
#include "fs_posix.h"
#include "fs_backend.h"

/* Room for any handle a Linux file system encodes (MAX_HANDLE_SZ). */
#define FH_KBUF 128u

union kfh {
	struct file_handle fh;
	uint8_t raw[sizeof(struct file_handle) + FH_KBUF];
};

/* The backend's state of one export. */
struct posix_export {
	/* most links of one object (fpathconf, asked once: the same for
	 * every object of the file system); 0: not asked yet */
	_Atomic uint32_t pe_linkmax;
};

/* ---- handles ---- */

int fs_posix_key(const struct rpcrdma_nfs3_export *exp, int dirfd,
		 const char *name, uint8_t *key, uint32_t *keylen,
		 uint32_t *type)
{
	union kfh k;
	int mnt_id;
	int flags = name[0] ? 0 : AT_EMPTY_PATH; /* 0: never follow */

	k.fh.handle_bytes = FH_KBUF;
	if (name_to_handle_at(dirfd, name, &k.fh, &mnt_id, flags) < 0)
		return -errno;
	if (mnt_id != exp->ex_mnt_id)
		return -EXDEV;
	if (k.fh.handle_bytes > FS_FH_KERNEL_MAX)
		return -EOVERFLOW;
	memcpy(key, k.fh.f_handle, k.fh.handle_bytes);
	*keylen = k.fh.handle_bytes;
	*type = (uint32_t)k.fh.handle_type;
	return 0;
}

int fs_posix_open_key(const struct rpcrdma_nfs3_export *exp, uint32_t type,
		      const uint8_t *key, uint32_t keylen, int *fdp,
		      struct stat *st)
{
	union kfh k;
	int fd, err;

	if (keylen > FH_KBUF)
		return -ESTALE;
	k.fh.handle_bytes = keylen;
	k.fh.handle_type = (int)type;
	memcpy(k.fh.f_handle, key, keylen);
	fd = open_by_handle_at(exp->ex_fd, &k.fh, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		/* gone, or no longer decodable on this file system */
		if (err == ENOENT || err == ESTALE || err == EINVAL)
			return -ESTALE;
		return -err;
	}
	if (fstat(fd, st) < 0) {
		err = -errno;
		goto out_close;
	}
	if (st->st_dev != exp->ex_dev) {
		err = -ESTALE;
		goto out_close;
	}
	*fdp = fd;
	return 0;

out_close:
	close(fd);
	return err;
}

int fs_fh_make(const struct rpcrdma_nfs3_export *exp, int dirfd,
	       const char *name, uint8_t *fh, uint32_t *lenp)
{
	uint8_t key[FS_BE_KEY_MAX];
	uint32_t keylen, type;
	int err = fs_posix_key(exp, dirfd, name, key, &keylen, &type);

	if (err)
		return err;
	return fs_fh_encode(exp, type, key, keylen, fh, lenp);
}

int fs_fh_open(const struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
	       uint32_t len, int *fdp, struct stat *st)
{
	const uint8_t *key;
	uint32_t type, keylen;
	int err = fs_fh_check(exp, fh, len, &type, &key, &keylen);

	if (err)
		return err;
	if (exp->ex_be != &fs_posix_backend)
		return -EOPNOTSUPP; /* no descriptors to give */
	return fs_posix_open_key(exp, type, key, keylen, fdp, st);
}

/* ---- the export ---- */

static int posix_export_open(struct rpcrdma_nfs3_export *exp, const char *path,
			     const char *opts)
{
	struct posix_export *pe;
	struct file_handle probe;
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t fhlen;
	struct stat st;
	int err, fd;

	if (opts && *opts)
		return -EINVAL; /* no options of its own */
	pe = calloc(1, sizeof(*pe));
	if (!pe)
		return -ENOMEM;
	/* a readable descriptor: open_by_handle_at() refuses O_PATH mount fds */
	exp->ex_fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (exp->ex_fd < 0) {
		err = -errno;
		goto out_free;
	}
	if (fstat(exp->ex_fd, &st) < 0) {
		err = -errno;
		goto out_close;
	}
	exp->ex_dev = st.st_dev;
	exp->ex_ino = st.st_ino;
	exp->ex_fsid = (uint64_t)st.st_dev;
	exp->ex_mem_fs = fs_is_mem_fs(exp->ex_fd);

	/* the mount id, and whether this file system has file handles at all */
	probe.handle_bytes = 0;
	if (name_to_handle_at(exp->ex_fd, "", &probe, &exp->ex_mnt_id,
			      AT_EMPTY_PATH) == 0 || errno != EOVERFLOW) {
		err = errno == ENOTSUP ? -EOPNOTSUPP : -errno;
		goto out_close;
	}
	/* the root must make a handle that decodes again (CAP_DAC_READ_SEARCH) */
	err = fs_fh_make(exp, exp->ex_fd, "", fh, &fhlen);
	if (err)
		goto out_close;
	err = fs_fh_open(exp, fh, fhlen, &fd, &st);
	if (err)
		goto out_close;
	close(fd);
	exp->ex_be_priv = pe;
	return 0;

out_close:
	close(exp->ex_fd);
	exp->ex_fd = -1;
out_free:
	free(pe);
	return err;
}

static void posix_export_close(struct rpcrdma_nfs3_export *exp)
{
	if (exp->ex_fd >= 0)
		close(exp->ex_fd);
	exp->ex_fd = -1;
	free(exp->ex_be_priv);
	exp->ex_be_priv = NULL;
}

/* ---- handles and objects ---- */

static int posix_fh_key(const struct rpcrdma_nfs3_export *exp,
			struct fs_fentry *dir, const char *name, uint8_t *key,
			uint32_t *keylen, uint32_t *type)
{
	return fs_posix_key(exp, dir ? dir->fe_path : exp->ex_fd, name, key,
			    keylen, type);
}

static int posix_fh_decode(const struct rpcrdma_nfs3_export *exp, uint32_t type,
			   const uint8_t *key, uint32_t keylen,
			   struct fs_fentry *fe, struct stat *st)
{
	int fd, err;

	fs_cred_for_handle(); /* open_by_handle_at: the server's capability */
	err = fs_posix_open_key(exp, type, key, keylen, &fd, st);
	if (err)
		return err;
	fe->fe_path = fd;
	fe->fe_type = st->st_mode & S_IFMT;
	return 0;
}

static void posix_release(struct fs_fentry *fe)
{
	if (fe->fe_rfd >= 0)
		close(fe->fe_rfd);
	if (fe->fe_wfd >= 0)
		close(fe->fe_wfd);
	if (fe->fe_path >= 0)
		close(fe->fe_path);
	fe->fe_rfd = fe->fe_wfd = fe->fe_path = -1;
}

static int posix_getattr(const struct rpcrdma_nfs3_export *exp,
			 struct fs_fentry *fe, struct stat *st)
{
	(void)exp;
	return fstat(fe->fe_path, st) < 0 ? -errno : 0;
}

/* ---- for a caller ---- */

static int posix_setattr(struct fs_call *c, struct fs_fentry *fe,
			 const struct stat *pre, const struct fs_sattr *sa,
			 bool skip_mode)
{
	return fs_sattr_apply(c, fe->fe_path, pre, sa, skip_mode, fe);
}

static int posix_access(struct fs_call *c, struct fs_fentry *fe,
			const struct stat *st, int mode)
{
	(void)c;
	(void)st;
	if (faccessat(fe->fe_path, "", mode, AT_EMPTY_PATH | AT_EACCESS) < 0)
		return -errno;
	return 0;
}

static int posix_lookup(struct fs_call *c, struct fs_fentry *dir,
			const struct stat *dst, const char *name,
			struct fs_fentry *out, struct stat *st)
{
	int fd, err;

	err = fs_lookup_at(c->c_exp, dir->fe_path, dst, name, &fd, st);
	if (err)
		return err;
	out->fe_path = fd;
	out->fe_type = st->st_mode & S_IFMT;
	return 0;
}

/* posix_lookup_attr - one fstatat(AT_SYMLINK_NOFOLLOW): no descriptor */
static int posix_lookup_attr(struct fs_call *c, struct fs_fentry *dir,
			     const struct stat *dst, const char *name,
			     struct stat *st)
{
	(void)c;
	(void)dst;
	if (fstatat(dir->fe_path, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

static int posix_open(struct fs_call *c, struct fs_fentry *fe,
		      const struct stat *st, int acc)
{
	int fd = fs_file_fd(c, fe, st, acc);

	return fd < 0 ? fd : 0;
}

/*
 * posix_read - read the iovecs' bytes at @off, or up to the end of the
 * file, from the entry's read descriptor.  @nowait: only what the page
 * cache holds (preadv2 RWF_NOWAIT): stops short when the rest is not
 * cached, -EAGAIN when nothing is.
 */
static ssize_t posix_read(struct fs_call *c, struct fs_fentry *fe,
			  const struct iovec *iov, int iovcnt, uint64_t off,
			  bool nowait)
{
	int fd = fs_fcache_fd(fe, O_RDONLY);
	size_t done = 0, skip = 0;

	(void)c;
	if (fd < 0)
		return -EBADF; /* no fs_open(O_RDONLY) */
	if (off > INT64_MAX)
		return -EINVAL;
	fs_posix_iov_advance(&iov, &iovcnt, &skip, 0); /* empty iovecs */
	while (iovcnt > 0) {
		struct iovec part;
		const struct iovec *v = iov;
		int cnt = iovcnt < FS_POSIX_IOV_MAX ? iovcnt : FS_POSIX_IOV_MAX;
		ssize_t n;

		if (skip) { /* the rest of a buffer read in part */
			part.iov_base = (uint8_t *)iov[0].iov_base + skip;
			part.iov_len = iov[0].iov_len - skip;
			v = &part;
			cnt = 1;
		}
		n = preadv2(fd, v, cnt, (off_t)off + (off_t)done,
			    nowait ? RWF_NOWAIT : 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (nowait && errno == EAGAIN && done)
				break;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
		fs_posix_iov_advance(&iov, &iovcnt, &skip, (size_t)n);
	}
	return (ssize_t)done;
}

static int posix_write(struct fs_call *c, struct fs_fentry *fe,
		       const struct iovec *iov, int iovcnt, uint64_t off,
		       uint32_t stable, size_t *done)
{
	int fd = fs_fcache_fd(fe, O_WRONLY);
	size_t len = 0;

	(void)c;
	*done = 0;
	if (fd < 0)
		return -EBADF; /* no fs_open(O_WRONLY) */
	if (off > INT64_MAX)
		return -EFBIG;
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	return fs_posix_writev(fd, iov, iovcnt, len, (off_t)off, stable, done);
}

/*
 * posix_commit - COMMIT's fsync with the server's credentials (syncing
 * reveals and changes no data).  Any descriptor of the file will do
 * (fsync syncs the inode); one opened here is kept as the entry's read
 * descriptor, which fs_file_fd() checks against each caller before a READ
 * uses it.
 */
static int posix_commit(struct fs_call *c, struct fs_fentry *fe, bool datasync)
{
	char path[32];
	int sfd;

	(void)c;
	sfd = fs_fcache_fd(fe, O_WRONLY);
	if (sfd < 0)
		sfd = fs_fcache_fd(fe, O_RDONLY);
	if (sfd < 0) {
		/* the worker may still be the previous call's caller */
		fs_cred_for_handle();
		fs_proc_path(path, sizeof(path), fe->fe_path);
		sfd = open(path, O_RDONLY | O_CLOEXEC);
		if (sfd < 0)
			return -errno;
		sfd = fs_fcache_set_fd(fe, O_RDONLY, sfd);
	}
	return fs_commit_data(sfd, datasync);
}

static int posix_create(struct fs_call *c, struct fs_fentry *dir,
			const struct stat *dst, const char *name, mode_t mode,
			bool excl, const uint8_t *verf, struct fs_fentry *out,
			struct stat *st, bool *created)
{
	int fd, err;

	*created = false;
	fs_cred_no_umask(); /* the mode as sent */
	/*
	 * An exclusive creating open, read-only: the kernel checks no
	 * permission on the file a creating open made; its descriptor serves
	 * as the entry's O_PATH one (never used to read).
	 */
	fd = openat(dir->fe_path, name,
		    O_CREAT | O_EXCL | O_RDONLY | O_NOFOLLOW | O_CLOEXEC,
		    mode & 07777);
	if (fd < 0) {
		if (errno != EEXIST || excl)
			return -errno;
		/* an existing name is looked up, never opened */
		return posix_lookup(c, dir, dst, name, out, st);
	}
	if (verf) {
		/* the verifier lives in atime/mtime seconds until SETATTR */
		const struct timespec ts[2] = {
			{ .tv_sec = load_be32(verf) },
			{ .tv_sec = load_be32(verf + 4) },
		};

		if (futimens(fd, ts) < 0)
			goto out_errno;
	}
	if (fstat(fd, st) < 0)
		goto out_errno;
	*created = true;
	out->fe_path = fd;
	out->fe_type = S_IFREG;
	return 0;

out_errno:
	err = -errno;
	close(fd);
	/* the name stays: a retransmission finds it, as before */
	return err;
}

static int posix_mkdir(struct fs_call *c, struct fs_fentry *dir,
		       const struct stat *dst, const char *name, mode_t mode,
		       struct fs_fentry *out, struct stat *st)
{
	fs_cred_no_umask(); /* the mode as sent */
	if (mkdirat(dir->fe_path, name, mode & 07777) < 0)
		return -errno;
	return posix_lookup(c, dir, dst, name, out, st);
}

static int posix_mknod(struct fs_call *c, struct fs_fentry *dir,
		       const struct stat *dst, const char *name, mode_t mode,
		       dev_t rdev, struct fs_fentry *out, struct stat *st)
{
	fs_cred_no_umask(); /* the mode as sent */
	if (mknodat(dir->fe_path, name, mode & (S_IFMT | 07777), rdev) < 0)
		return -errno;
	return posix_lookup(c, dir, dst, name, out, st);
}

static int posix_symlink(struct fs_call *c, struct fs_fentry *dir,
			 const struct stat *dst, const char *name,
			 const char *target, struct fs_fentry *out,
			 struct stat *st)
{
	/* the target is stored, never resolved by the server */
	if (symlinkat(target, dir->fe_path, name) < 0)
		return -errno;
	return posix_lookup(c, dir, dst, name, out, st);
}

/*
 * posix_read_pipe - splice(2) from the file's descriptor into @pipefd: the
 * pipe takes references to the page-cache pages, so READ data reaches
 * the socket without passing through user space.
 */
static ssize_t posix_read_pipe(struct fs_call *c, struct fs_fentry *fe,
			       int pipefd, uint64_t off, size_t len)
{
	int fd = fs_fcache_fd(fe, O_RDONLY);
	size_t done = 0;

	(void)c;
	if (fd < 0)
		return -EBADF; /* no fs_open(O_RDONLY) */
	if (off > INT64_MAX || len > INT64_MAX - off)
		return -EINVAL;
	while (done < len) {
		loff_t at = (loff_t)(off + done);
		ssize_t n = splice(fd, &at, pipefd, NULL, len - done, SPLICE_F_MOVE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (done && errno == EAGAIN)
				break; /* the pipe is full: short */
			if (!done && (errno == EINVAL || errno == EAGAIN))
				return -EOPNOTSUPP;
			return -errno;
		}
		if (n == 0)
			break; /* end of the file */
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static ssize_t posix_readlink(struct fs_call *c, struct fs_fentry *fe,
			      char *buf, size_t len)
{
	ssize_t n;

	(void)c;
	if (fe->fe_type != S_IFLNK)
		return -EINVAL;
	n = readlinkat(fe->fe_path, "", buf, len);
	if (n < 0)
		return -errno;
	if ((size_t)n == len)
		return -ENAMETOOLONG;
	return n;
}

/*
 * posix_link - through the object's /proc/self/fd link (AT_SYMLINK_FOLLOW):
 * linkat(AT_EMPTY_PATH) would ask for CAP_DAC_READ_SEARCH, which the
 * caller's identity does not have.
 */
static int posix_link(struct fs_call *c, struct fs_fentry *fe,
		      struct fs_fentry *dir, const char *name)
{
	char path[32];

	(void)c;
	fs_proc_path(path, sizeof(path), fe->fe_path);
	if (linkat(AT_FDCWD, path, dir->fe_path, name, AT_SYMLINK_FOLLOW) < 0)
		return -errno;
	return 0;
}

static int posix_unlink(struct fs_call *c, struct fs_fentry *dir,
			const char *name, bool rmdir)
{
	(void)c;
	if (unlinkat(dir->fe_path, name, rmdir ? AT_REMOVEDIR : 0) < 0)
		return -errno;
	return 0;
}

static int posix_rename(struct fs_call *c, struct fs_fentry *fdir,
			const char *fname, struct fs_fentry *tdir,
			const char *tname, bool two_dirs, uint8_t *fh,
			uint32_t *fhlen, bool *have_fh)
{
	return fs_posix_rename(c, fdir->fe_path, fname, tdir->fe_path, tname,
			       two_dirs, fh, fhlen, have_fh);
}

/*
 * posix_readdir - cookies are the kernel's directory positions (d_off,
 * what telldir() would return after the entry), resumed with seekdir().
 * The directory is read through its /proc/self/fd link, not
 * openat(fd, "."), whose lookup of "." asks for search permission as well
 * (knfsd lists a directory its caller may read but not search).
 */
static int posix_readdir(struct fs_call *c, struct fs_fentry *dir,
			 const struct stat *dst, uint64_t cookie,
			 int (*fn)(void *arg, const char *name, uint64_t ino,
				   uint64_t cookie),
			 void *arg, bool *eof)
{
	char path[32];
	DIR *d;
	int rfd, err = 0;

	(void)c;
	(void)dst;
	*eof = false;
	fs_proc_path(path, sizeof(path), dir->fe_path);
	rfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	d = fdopendir(rfd);
	if (!d) {
		err = -errno;
		close(rfd);
		return err;
	}
	if (cookie)
		seekdir(d, (long)cookie);
	for (;;) {
		struct dirent *e;

		errno = 0;
		e = readdir(d);
		if (!e) {
			if (errno)
				err = -errno;
			else
				*eof = true;
			break;
		}
		if (fn(arg, e->d_name, (uint64_t)e->d_ino, (uint64_t)e->d_off))
			break;
	}
	closedir(d);
	return err;
}

/*
 * posix_statfs - fstatvfs(); the link limit from fpathconf() the first
 * time (glibc works it out from the file system's type, for ext2/3/4 from
 * its mount options: several system calls), kept for the export.
 */
static int posix_statfs(struct fs_call *c, struct fs_fentry *fe,
			struct fs_statfs *out)
{
	struct posix_export *pe = c->c_exp->ex_be_priv;
	struct statvfs sv;
	uint32_t linkmax;

	if (fstatvfs(fe->fe_path, &sv) < 0)
		return -errno;
	linkmax = atomic_load_explicit(&pe->pe_linkmax, memory_order_relaxed);
	if (!linkmax) {
		long v = fpathconf(fe->fe_path, _PC_LINK_MAX);

		linkmax = v > 0 && v < UINT32_MAX ? (uint32_t)v : 32000;
		atomic_store_explicit(&pe->pe_linkmax, linkmax, memory_order_relaxed);
	}
	out->sf_bytes = (uint64_t)sv.f_blocks * sv.f_frsize;
	out->sf_bfree = (uint64_t)sv.f_bfree * sv.f_frsize;
	out->sf_bavail = (uint64_t)sv.f_bavail * sv.f_frsize;
	out->sf_files = sv.f_files;
	out->sf_ffree = sv.f_ffree;
	out->sf_favail = sv.f_favail;
	out->sf_linkmax = linkmax;
	out->sf_namemax = sv.f_namemax > 0 && sv.f_namemax <= 255 ?
			  (uint32_t)sv.f_namemax : 255;
	return 0;
}

/* ---- locks: open file description locks (F_OFD_SETLK) ---- */

/*
 * posix_lock_open - a description of its own for a lock owner, opened with
 * the server's identity (the protocol stands for the caller's right to
 * the file): read-write where the file allows it, else read-only.
 * O_NONBLOCK: a lease another server holds on the file (Samba, the
 * kernel's nfsd) makes the open fail with EWOULDBLOCK (-EAGAIN: try later)
 * instead of waiting out the lease break on the caller's thread (NLM's
 * one TCP thread); it changes nothing else for a regular file.
 */
static int posix_lock_open(struct fs_call *c, struct fs_fentry *fe,
			   struct fs_lockd *out, int *accmode)
{
	char path[32];
	int fd;

	fs_cred_restore();
	c->c_as_caller = false;
	fs_proc_path(path, sizeof(path), fe->fe_path);
	*accmode = O_RDWR;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	/* EWOULDBLOCK: a read lease (a delegation's, fs_posix_lease.c) is
	 * on the file; read-only still serves read locks (a client giving
	 * a delegation back reclaims its read locks before DELEGRETURN) */
	if (fd < 0) {
		*accmode = O_RDONLY;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	}
	if (fd < 0)
		return -errno;
	out->ld_fd = fd;
	return 0;
}

static int posix_lock(struct fs_lockd *ld, int type, uint64_t start,
		      uint64_t len, bool test, struct fs_lock_conflict *cf)
{
	struct flock fl;

	if (start > INT64_MAX || len > INT64_MAX)
		return -EINVAL; /* the kernel judges the rest (EOVERFLOW) */
	memset(&fl, 0, sizeof(fl));
	fl.l_type = (short)type;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)start;
	fl.l_len = (off_t)len;
	if (!test) {
		if (fcntl(ld->ld_fd, F_OFD_SETLK, &fl) == 0)
			return 0;
		if (errno != EAGAIN && errno != EACCES)
			return -errno;
		if (!cf)
			return -EAGAIN;
		fl.l_type = (short)type; /* who holds it */
	}
	if (fcntl(ld->ld_fd, F_OFD_GETLK, &fl) < 0)
		return -errno;
	if (fl.l_type == F_UNLCK) {
		if (test)
			return 0;
		/* released between the two calls: try again */
		if (cf) {
			cf->cf_type = F_UNLCK;
			cf->cf_start = cf->cf_len = 0;
			cf->cf_pid = 0;
		}
		return -EAGAIN;
	}
	if (cf) {
		cf->cf_type = fl.l_type;
		cf->cf_start = (uint64_t)fl.l_start;
		cf->cf_len = (uint64_t)fl.l_len;
		cf->cf_pid = fl.l_pid > 0 ? fl.l_pid : 0; /* OFD locks: -1 */
	}
	return -EAGAIN;
}

static int posix_lock_dup(const struct fs_lockd *ld, struct fs_lockd *out)
{
	int fd = fcntl(ld->ld_fd, F_DUPFD_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	out->ld_fd = fd;
	return 0;
}

static void posix_lock_close(struct fs_lockd *ld)
{
	if (ld->ld_fd >= 0)
		close(ld->ld_fd);
	ld->ld_fd = -1;
}

const struct fs_backend fs_posix_backend = {
	.be_name = "posix",
	.be_flags = FS_BE_SWITCHES_IDENTITY | FS_BE_LOCAL_PATH,
	.be_export_open = posix_export_open,
	.be_export_close = posix_export_close,
	.be_fh_key = posix_fh_key,
	.be_fh_decode = posix_fh_decode,
	.be_release = posix_release,
	.be_getattr = posix_getattr,
	.be_setattr = posix_setattr,
	.be_access = posix_access,
	.be_lookup = posix_lookup,
	.be_lookup_attr = posix_lookup_attr,
	.be_lookup_fh = fs_posix_lookup_fh,
	.be_open = posix_open,
	.be_read = posix_read,
	.be_read_pipe = posix_read_pipe,
	.be_write = posix_write,
	.be_commit = posix_commit,
	.be_commit_meta = fs_posix_commit_meta,
	.be_create = posix_create,
	.be_mkdir = posix_mkdir,
	.be_mknod = posix_mknod,
	.be_symlink = posix_symlink,
	.be_readlink = posix_readlink,
	.be_link = posix_link,
	.be_unlink = posix_unlink,
	.be_rename = posix_rename,
	.be_readdir = posix_readdir,
	.be_statfs = posix_statfs,
	.be_lock_open = posix_lock_open,
	.be_lock = posix_lock,
	.be_lock_dup = posix_lock_dup,
	.be_lock_close = posix_lock_close,
	.be_lease_open = fs_posix_lease_open,
	.be_lease_close = fs_posix_lease_close,
};
