// SPDX-License-Identifier: MIT
/*
 * fs_posix_sync.c - the posix backend's stable storage: WRITE's data as
 * stable as asked (pwritev2 RWF_DSYNC/RWF_SYNC), COMMIT's fsync, and the
 * fsync of commit_metadata (fs_commit.c decides when).
 *
 * The fsync needs a real descriptor (an O_PATH one is refused with
 * EBADF): the entry's write or read descriptor when it has one, else one
 * opened read-only and kept as the entry's read descriptor (for a
 * directory otherwise unused), opened as the caller, or with the server's
 * identity when the caller may not read it (committing reveals nothing).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fs.h"
#include "fs_posix.h"

int (*fs_commit_fsync)(int fd) = fsync;
int (*fs_commit_fdatasync)(int fd) = fdatasync;
ssize_t (*fs_commit_pwritev2)(int fd, const struct iovec *iov, int cnt,
			      off_t off, int flags) = pwritev2;

int fs_commit_data(int fd, bool datasync)
{
	if ((datasync ? fs_commit_fdatasync(fd) : fs_commit_fsync(fd)) < 0)
		return -errno;
	return 0;
}

/*
 * iov_rest - the iovecs of @iov (@cnt) from byte @skip of iov[0] on: the
 * array itself when @skip is 0, else the rest of iov[0] alone in @part
 * (so a short transfer is resumed with the same arguments a single buffer
 * would get).  *@n: iovecs to pass (at most FS_POSIX_IOV_MAX).
 */
static const struct iovec *iov_rest(const struct iovec *iov, int cnt,
				    size_t skip, struct iovec *part, int *n)
{
	if (skip) {
		part->iov_base = (uint8_t *)iov[0].iov_base + skip;
		part->iov_len = iov[0].iov_len - skip;
		*n = 1;
		return part;
	}
	*n = cnt < FS_POSIX_IOV_MAX ? cnt : FS_POSIX_IOV_MAX;
	return iov;
}

void fs_posix_iov_advance(const struct iovec **iov, int *cnt, size_t *skip,
			  size_t n)
{
	while (*cnt > 0) {
		size_t left = (*iov)[0].iov_len - *skip;

		if (n < left) {
			*skip += n;
			return;
		}
		n -= left;
		(*iov)++;
		(*cnt)--;
		*skip = 0;
	}
}

int fs_posix_writev(int fd, const struct iovec *iov, int iovcnt, size_t len,
		    off_t off, uint32_t stable, size_t *done)
{
	int flags = stable == FS_FILE_SYNC ? RWF_SYNC :
		    stable == FS_DATA_SYNC ? RWF_DSYNC : 0;
	bool then_commit = flags && len == 0;
	size_t skip = 0;
	int err = 0;

	*done = 0;
	fs_posix_iov_advance(&iov, &iovcnt, &skip, 0); /* empty iovecs */
	while (*done < len && iovcnt > 0) {
		struct iovec part;
		int cnt;
		const struct iovec *v = iov_rest(iov, iovcnt, skip, &part, &cnt);
		ssize_t n = fs_commit_pwritev2(fd, v, cnt, off + (off_t)*done,
					       flags);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EOPNOTSUPP && flags) {
			flags = 0; /* the flag refused: write, then sync */
			then_commit = true;
			continue;
		}
		if (n <= 0) {
			err = n < 0 ? -errno : -ENOSPC;
			break;
		}
		*done += (size_t)n;
		fs_posix_iov_advance(&iov, &iovcnt, &skip, (size_t)n);
	}
	if (err && *done == 0)
		return err;
	/* a write ended short by an error answers what was written */
	return then_commit ? fs_commit_data(fd, stable == FS_DATA_SYNC) : 0;
}

int fs_write_data(int fd, const uint8_t *buf, size_t len, off_t off,
		  uint32_t stable, size_t *done)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return fs_posix_writev(fd, &iov, 1, len, off, stable, done);
}

/*
 * open_for_sync - open @path (relative to @dirfd) read-only, as the caller
 * first, with the server's identity when the caller may not read it
 * (committing reveals nothing; the caller's rights decided the operation).
 * Return: the descriptor, or -errno.
 */
static int open_for_sync(struct fs_call *c, int dirfd, const char *path,
			 int flags)
{
	int fd, err;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | flags);
	if (fd < 0 && (errno == EACCES || errno == EPERM) && c->c_as_caller) {
		fs_cred_restore();
		fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | flags);
		err = errno;
		if (fs_cred_apply(&c->c_cred) < 0)
			c->c_as_caller = false; /* nothing left to do as the caller */
		errno = err;
	}
	return fd < 0 ? -errno : fd;
}

/*
 * sync_fd - a descriptor of @fe's object that fsync accepts (kept in the
 * entry), or -errno; -EBADF for a type with none (symlinks, devices,
 * FIFOs, sockets: opening them is not free of effects).
 */
static int sync_fd(struct fs_call *c, struct fs_fentry *fe)
{
	char path[32];
	int fd;

	fd = fs_fcache_fd(fe, O_WRONLY);
	if (fd < 0)
		fd = fs_fcache_fd(fe, O_RDONLY);
	if (fd >= 0)
		return fd;
	if (fe->fe_type == S_IFDIR) {
		fd = open_for_sync(c, fe->fe_path, ".", O_DIRECTORY);
	} else if (fe->fe_type == S_IFREG) {
		fs_proc_path(path, sizeof(path), fe->fe_path);
		fd = open_for_sync(c, AT_FDCWD, path, 0);
	} else {
		return -EBADF;
	}
	if (fd < 0)
		return fd;
	return fs_fcache_set_fd(fe, O_RDONLY, fd);
}

int fs_posix_commit_meta(struct fs_call *c, struct fs_fentry *fe)
{
	int fd = sync_fd(c, fe);

	if (fd == -EBADF)
		return 0;
	if (fd < 0)
		return fd;
	return fs_commit_fsync(fd) < 0 ? -errno : 0;
}

