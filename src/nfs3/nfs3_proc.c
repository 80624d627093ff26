// SPDX-License-Identifier: MIT
/*
 * nfs3_proc.c - the NFS version 3 procedures (RFC 1813 section 3) over one
 * exported directory, and their dispatch.
 *
 * Every handler first decodes all of its arguments (a short or malformed
 * body is GARBAGE_ARGS), then opens its file handles with the server's own
 * credentials (open_by_handle_at needs CAP_DAC_READ_SEARCH), then switches
 * the thread to the caller's identity (nfs3_cred.c) for the file system
 * work, so the kernel makes every permission decision.  Objects are reached
 * only through O_PATH descriptors and *at() calls that never follow a
 * symlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/be.h"
#include "nfs3_internal.h"

/* A decoded filename3 (RFC 1813 2.5), NUL-terminated. */
struct nfs3_name {
	char n_buf[NFS3_WIRE_NAME_MAX + 1];
	uint32_t n_len;
};

/* A decoded sattr3 (RFC 1813 2.6). */
enum { TIME_DONT_CHANGE = 0, TIME_SERVER = 1, TIME_CLIENT = 2 };

struct nfs3_sattr {
	bool sa_set_mode, sa_set_uid, sa_set_gid, sa_set_size;
	uint32_t sa_mode, sa_uid, sa_gid;
	uint64_t sa_size;
	uint32_t sa_atime_how, sa_mtime_how;
	struct timespec sa_atime, sa_mtime;
};

/* ---- argument decoding ---- */

static const uint8_t *get_fh(struct rpcrdma_xdr *xs, uint32_t *len)
{
	return rpcrdma_xdr_get_opaque(xs, RPCRDMA_NFS3_FHSIZE, len);
}

static void get_name(struct rpcrdma_xdr *xs, struct nfs3_name *n)
{
	const uint8_t *p = rpcrdma_xdr_get_opaque(xs, NFS3_WIRE_NAME_MAX, &n->n_len);

	if (p)
		memcpy(n->n_buf, p, n->n_len);
	else
		n->n_len = 0;
	n->n_buf[n->n_len] = '\0';
}

static void get_time(struct rpcrdma_xdr *xs, struct timespec *ts)
{
	ts->tv_sec = rpcrdma_xdr_get_u32(xs);
	ts->tv_nsec = rpcrdma_xdr_get_u32(xs);
	if (ts->tv_nsec >= 1000000000L)
		xs->xs_err = true;
}

static void get_set_time(struct rpcrdma_xdr *xs, uint32_t *how, struct timespec *ts)
{
	*how = rpcrdma_xdr_get_u32(xs);
	if (*how == TIME_CLIENT)
		get_time(xs, ts);
	else if (*how > TIME_CLIENT)
		xs->xs_err = true;
}

static void get_sattr(struct rpcrdma_xdr *xs, struct nfs3_sattr *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_set_mode = rpcrdma_xdr_get_bool(xs);
	if (sa->sa_set_mode)
		sa->sa_mode = rpcrdma_xdr_get_u32(xs);
	sa->sa_set_uid = rpcrdma_xdr_get_bool(xs);
	if (sa->sa_set_uid)
		sa->sa_uid = rpcrdma_xdr_get_u32(xs);
	sa->sa_set_gid = rpcrdma_xdr_get_bool(xs);
	if (sa->sa_set_gid)
		sa->sa_gid = rpcrdma_xdr_get_u32(xs);
	sa->sa_set_size = rpcrdma_xdr_get_bool(xs);
	if (sa->sa_set_size)
		sa->sa_size = rpcrdma_xdr_get_u64(xs);
	get_set_time(xs, &sa->sa_atime_how, &sa->sa_atime);
	get_set_time(xs, &sa->sa_mtime_how, &sa->sa_mtime);
}

/*
 * name_check - NFS status for a component name, NFS3_OK when usable.
 * Empty names and names with '/' or NUL could address something other
 * than one entry of the directory.
 */
static uint32_t name_check(const struct nfs3_name *n)
{
	if (n->n_len == 0 || memchr(n->n_buf, '/', n->n_len) ||
	    strlen(n->n_buf) != n->n_len)
		return NFS3ERR_ACCES;
	if (n->n_len > 255)
		return NFS3ERR_NAMETOOLONG;
	return NFS3_OK;
}

static bool is_dot_or_dotdot(const struct nfs3_name *n)
{
	return strcmp(n->n_buf, ".") == 0 || strcmp(n->n_buf, "..") == 0;
}

/* ---- helpers ---- */

int nfs3_become_caller(struct nfs3_call *c)
{
	int err = nfs3_cred_apply(&c->c_cred);

	if (err == 0)
		c->c_as_caller = true;
	return err;
}

static void proc_path(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

/*
 * may_override - after EACCES: like knfsd, the owner may read and write its
 * own file whatever the mode bits say (an open file keeps working after
 * chmod on a local file system; NFS has no open), and READ is allowed with
 * execute permission (a client must read what it runs).  @st NULL: fstat
 * @fd for the owner.
 */
static bool may_override(struct nfs3_call *c, int fd, const struct stat *st,
			 int acc)
{
	struct stat own;

	if (!st) {
		if (fstat(fd, &own) < 0)
			return false;
		st = &own;
	}
	if (c->c_as_caller && c->c_cred.cr_uid == st->st_uid)
		return true;
	return acc == O_RDONLY &&
	       faccessat(fd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS) == 0;
}

/*
 * reopen - a real descriptor for the regular file behind O_PATH @fd,
 * checked against the caller's identity (with the overrides of
 * may_override(), which re-open with the server's identity).
 */
static int reopen(struct nfs3_call *c, int fd, const struct stat *st, int flags)
{
	char path[32];
	int nfd, err;

	proc_path(path, sizeof(path), fd);
	nfd = open(path, flags | O_CLOEXEC);
	if (nfd >= 0)
		return nfd;
	err = errno;
	if (err != EACCES)
		return -err;
	if (!may_override(c, fd, st, flags & O_ACCMODE))
		return -EACCES;
	nfs3_cred_restore();
	nfd = open(path, flags | O_CLOEXEC);
	err = errno;
	if (nfs3_cred_apply(&c->c_cred) < 0) {
		c->c_as_caller = false;
		if (nfd >= 0)
			close(nfd);
		return -EPERM;
	}
	return nfd >= 0 ? nfd : -err;
}

/*
 * file_fd - a descriptor of @fe's regular file open for @acc (O_RDONLY or
 * O_WRONLY; the entry owns it), for the caller (nfs3_become_caller done).
 * A descriptor the cache already holds is used only after the caller
 * passes the same check an open would make: faccessat(AT_EACCESS), which
 * checks the thread's fsuid, fsgid, groups and capabilities, with the
 * overrides of may_override().  Otherwise the file is re-opened as the
 * caller (reopen()) and the descriptor kept in the entry.
 * @st: the file's attributes, or NULL (fetched only when needed).
 * Return: the descriptor, or a negative errno (-EACCES, ...).
 */
static int file_fd(struct nfs3_call *c, struct nfs3_fentry *fe,
		   const struct stat *st, int acc)
{
	int fd = nfs3_fcache_fd(fe, acc);

	if (fd >= 0) {
		if (faccessat(fe->fe_path, "", acc == O_RDONLY ? R_OK : W_OK,
			      AT_EMPTY_PATH | AT_EACCESS) == 0)
			return fd;
		if (errno != EACCES)
			return -errno;
		return may_override(c, fe->fe_path, st, acc) ? fd : -EACCES;
	}
	fd = reopen(c, fe->fe_path, st, acc);
	if (fd < 0)
		return fd;
	return nfs3_fcache_set_fd(fe, acc, fd);
}

/* get_file - the handle's object through the open-file cache. */
static int get_file(struct nfs3_call *c, const uint8_t *fh, uint32_t len,
		    struct nfs3_fentry *local, struct nfs3_fentry **fep,
		    struct stat *st)
{
	return nfs3_fcache_get(c->c_exp, fh, len, local, fep, st);
}

/* want_regular_type - want_regular() on an entry's file type. */
static int want_regular_type(mode_t type)
{
	if (type == S_IFDIR)
		return -EISDIR;
	return type == S_IFREG ? 0 : -EINVAL;
}

/*
 * unlink_fh - before REMOVE or RENAME takes @name out of @dirfd: the
 * handle of what it names, when the open-file cache could hold it (its
 * entry is forgotten once the last link is gone, nfs3_fcache_forget()).
 * Return: true when @fh holds the handle.
 */
static bool unlink_fh(struct nfs3_call *c, int dirfd, const char *name,
		      uint8_t *fh, uint32_t *len)
{
	return c->c_exp->ex_fcache &&
	       nfs3_fh_make(c->c_exp, dirfd, name, fh, len) == 0;
}

/* Type check for READ/WRITE/COMMIT/size changes: 0 or -EISDIR/-EINVAL. */
static int want_regular(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	return S_ISREG(st->st_mode) ? 0 : -EINVAL;
}

/* open_handle - decode @fh into an O_PATH fd (server credentials). */
static int open_handle(struct nfs3_call *c, const uint8_t *fh, uint32_t len,
		       int *fdp, struct stat *st)
{
	*fdp = -1;
	return nfs3_fh_open(c->c_exp, fh, len, fdp, st);
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

int nfs3_lookup_at(const struct rpcrdma_nfs3_export *exp, int dirfd,
		   const struct stat *dst, const char *name, int *fdp,
		   struct stat *st)
{
	const char *which = name;
	int fd, err;

	/* ".." of the export root is the root itself */
	if (strcmp(name, "..") == 0 && nfs3_is_root(exp, dst))
		which = ".";
	fd = openat(dirfd, which, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		err = -errno;
		goto out_close;
	}
	if (st->st_dev != exp->ex_dev) {
		err = -EXDEV; /* a mount inside the export: not crossed */
		goto out_close;
	}
	*fdp = fd;
	return 0;

out_close:
	close(fd);
	return err;
}

static int set_times(int fd, const struct nfs3_sattr *sa)
{
	struct timespec ts[2];
	char path[32];

	if (sa->sa_atime_how == TIME_DONT_CHANGE &&
	    sa->sa_mtime_how == TIME_DONT_CHANGE)
		return 0;
	ts[0].tv_sec = sa->sa_atime.tv_sec;
	ts[0].tv_nsec = sa->sa_atime_how == TIME_CLIENT ? sa->sa_atime.tv_nsec :
			sa->sa_atime_how == TIME_SERVER ? UTIME_NOW : UTIME_OMIT;
	ts[1].tv_sec = sa->sa_mtime.tv_sec;
	ts[1].tv_nsec = sa->sa_mtime_how == TIME_CLIENT ? sa->sa_mtime.tv_nsec :
			sa->sa_mtime_how == TIME_SERVER ? UTIME_NOW : UTIME_OMIT;
	proc_path(path, sizeof(path), fd);
	return utimensat(AT_FDCWD, path, ts, 0) < 0 ? -errno : 0;
}

/*
 * sattr_apply - carry out a sattr3 on O_PATH @fd (RFC 1813 3.3.2): size,
 * then owner, then mode (a chown may clear set-id bits), then times.
 */
static int sattr_apply(struct nfs3_call *c, int fd, const struct stat *st,
		       const struct nfs3_sattr *sa, bool skip_mode,
		       struct nfs3_fentry *fe)
{
	char path[32];
	int err, wfd;

	if (sa->sa_set_size) {
		err = want_regular(st);
		if (err)
			return err;
		if (sa->sa_size > INT64_MAX)
			return -EFBIG;
		/* @fe: the cache's write descriptor (@fd is its O_PATH) */
		wfd = fe ? file_fd(c, fe, st, O_WRONLY) : reopen(c, fd, st, O_WRONLY);
		if (wfd < 0)
			return wfd;
		err = ftruncate(wfd, (off_t)sa->sa_size) < 0 ? -errno : 0;
		if (!fe)
			close(wfd);
		if (err)
			return err;
	}
	if (sa->sa_set_uid || sa->sa_set_gid) {
		if (fchownat(fd, "", sa->sa_set_uid ? sa->sa_uid : (uid_t)-1,
			     sa->sa_set_gid ? sa->sa_gid : (gid_t)-1,
			     AT_EMPTY_PATH) < 0)
			return -errno;
	}
	if (sa->sa_set_mode && !skip_mode && !S_ISLNK(st->st_mode)) {
		proc_path(path, sizeof(path), fd);
		if (fchmodat(AT_FDCWD, path, sa->sa_mode & 07777, 0) < 0)
			return -errno;
	}
	return set_times(fd, sa);
}

/* ---- procedures ---- */

static int proc_null(struct nfs3_call *c)
{
	(void)c;
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_getattr(struct nfs3_call *c)
{
	const uint8_t *fh;
	uint32_t fhlen;
	struct nfs3_fentry local, *fe;
	struct stat st;
	int err;

	fh = get_fh(c->c_args, &fhlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	err = get_file(c, fh, fhlen, &local, &fe, &st);
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	if (!err)
		nfs3_put_fattr(c->c_res, c->c_exp, &st);
	nfs3_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_setattr(struct nfs3_call *c)
{
	const uint8_t *fh;
	uint32_t fhlen;
	struct nfs3_sattr sa;
	struct timespec guard = { 0 };
	bool check;
	struct stat pre, post;
	struct nfs3_fentry local, *fe = NULL;
	int fd = -1, err;

	fh = get_fh(c->c_args, &fhlen);
	get_sattr(c->c_args, &sa);
	check = rpcrdma_xdr_get_bool(c->c_args);
	if (check)
		get_time(c->c_args, &guard);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	err = get_file(c, fh, fhlen, &local, &fe, &pre);
	if (err)
		goto out;
	fd = fe->fe_path;
	if (check && (pre.st_ctim.tv_sec != guard.tv_sec ||
		      pre.st_ctim.tv_nsec != guard.tv_nsec)) {
		rpcrdma_xdr_put_u32(c->c_res, NFS3ERR_NOT_SYNC);
		nfs3_put_wcc(c->c_res, c->c_exp, &pre, &pre);
		goto out_close;
	}
	err = nfs3_become_caller(c);
	if (!err)
		err = sattr_apply(c, fd, &pre, &sa, false, fe);
out:
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	if (fd >= 0 && fstat(fd, &post) == 0)
		nfs3_put_wcc(c->c_res, c->c_exp, &pre, &post);
	else
		nfs3_put_wcc(c->c_res, c->c_exp, NULL, NULL);
out_close:
	nfs3_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_lookup(struct nfs3_call *c)
{
	const uint8_t *dfh;
	uint32_t dfhlen, fhlen = 0;
	struct nfs3_name name;
	struct stat dst, st;
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	int dfd, fd = -1, err;
	uint32_t stat;

	dfh = get_fh(c->c_args, &dfhlen);
	get_name(c->c_args, &name);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	err = open_handle(c, dfh, dfhlen, &dfd, &dst);
	if (err) {
		stat = nfs3_errno_to_stat(err);
		goto out;
	}
	if (!S_ISDIR(dst.st_mode)) {
		stat = NFS3ERR_NOTDIR;
		goto out;
	}
	stat = name_check(&name);
	if (stat)
		goto out;
	err = nfs3_become_caller(c);
	if (!err)
		err = nfs3_lookup_at(c->c_exp, dfd, &dst, name.n_buf, &fd, &st);
	if (!err)
		err = nfs3_fh_make(c->c_exp, fd, "", fh, &fhlen);
	stat = nfs3_errno_to_stat(err);
out:
	rpcrdma_xdr_put_u32(c->c_res, stat);
	if (stat == NFS3_OK) {
		rpcrdma_xdr_put_opaque(c->c_res, fh, fhlen);
		nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
	}
	nfs3_put_post_op_fd(c->c_res, c->c_exp, dfd);
	close_fd(fd);
	close_fd(dfd);
	return RPCRDMA_SVC_SUCCESS;
}

static uint32_t access_bits(int fd, const struct stat *st, uint32_t want)
{
	uint32_t got = 0;
	int fl = AT_EMPTY_PATH | AT_EACCESS;

	if ((want & NFS3_ACCESS_READ) && faccessat(fd, "", R_OK, fl) == 0)
		got |= NFS3_ACCESS_READ;
	if (S_ISDIR(st->st_mode)) {
		if ((want & NFS3_ACCESS_LOOKUP) && faccessat(fd, "", X_OK, fl) == 0)
			got |= NFS3_ACCESS_LOOKUP;
		if ((want & (NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND |
			     NFS3_ACCESS_DELETE)) &&
		    faccessat(fd, "", W_OK | X_OK, fl) == 0)
			got |= want & (NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND |
				       NFS3_ACCESS_DELETE);
	} else {
		if ((want & (NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND)) &&
		    faccessat(fd, "", W_OK, fl) == 0)
			got |= want & (NFS3_ACCESS_MODIFY | NFS3_ACCESS_EXTEND);
		if ((want & NFS3_ACCESS_EXECUTE) && faccessat(fd, "", X_OK, fl) == 0)
			got |= NFS3_ACCESS_EXECUTE;
	}
	return got;
}

static int proc_access(struct nfs3_call *c)
{
	const uint8_t *fh;
	uint32_t fhlen, want, got = 0;
	struct stat st;
	int fd, err;

	fh = get_fh(c->c_args, &fhlen);
	want = rpcrdma_xdr_get_u32(c->c_args);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	err = open_handle(c, fh, fhlen, &fd, &st);
	if (!err)
		err = nfs3_become_caller(c);
	if (!err)
		got = access_bits(fd, &st, want);
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	nfs3_put_post_op_attr(c->c_res, c->c_exp, fd >= 0 ? &st : NULL);
	if (!err)
		rpcrdma_xdr_put_u32(c->c_res, got);
	close_fd(fd);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_readlink(struct nfs3_call *c)
{
	const uint8_t *fh;
	uint32_t fhlen;
	struct stat st;
	char buf[NFS3_WIRE_PATH_MAX];
	ssize_t n = 0;
	int fd, err;

	fh = get_fh(c->c_args, &fhlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	err = open_handle(c, fh, fhlen, &fd, &st);
	if (!err && !S_ISLNK(st.st_mode))
		err = -EINVAL;
	if (!err) {
		n = readlinkat(fd, "", buf, sizeof(buf));
		if (n < 0)
			err = -errno;
		else if ((size_t)n == sizeof(buf))
			err = -ENAMETOOLONG;
	}
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	nfs3_put_post_op_attr(c->c_res, c->c_exp, fd >= 0 ? &st : NULL);
	if (!err) {
		/* The target is DDP-eligible (RFC 8267 section 3.1): the
		 * transport moves it into a Write chunk when the call has one. */
		uint8_t *data;

		rpcrdma_xdr_put_u32(c->c_res, (uint32_t)n);
		data = rpcrdma_svc_ddp_begin(c->c_req, (size_t)n);
		if (!data) {
			close_fd(fd);
			return RPCRDMA_SVC_SYSTEM_ERR;
		}
		memcpy(data, buf, (size_t)n);
		rpcrdma_svc_ddp_end(c->c_req, (size_t)n);
	}
	close_fd(fd);
	return RPCRDMA_SVC_SUCCESS;
}

static ssize_t pread_full(int fd, uint8_t *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, buf + done, len - done, off + (off_t)done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int proc_read(struct nfs3_call *c)
{
	struct rpcrdma_xdr *res = c->c_res, patch;
	const uint8_t *fh;
	uint32_t fhlen, count;
	uint64_t offset;
	struct stat post;
	struct nfs3_fentry local, *fe = NULL;
	uint8_t *attrp, *countp, *eofp, *lenp, *data;
	size_t start, room;
	ssize_t n = 0;
	bool eof;
	int rfd = -1, err;

	fh = get_fh(c->c_args, &fhlen);
	offset = rpcrdma_xdr_get_u64(c->c_args);
	count = rpcrdma_xdr_get_u32(c->c_args);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	/* no attributes needed before the read: a hit costs no fstat */
	err = get_file(c, fh, fhlen, &local, &fe, NULL);
	if (!err)
		err = want_regular_type(fe->fe_type);
	if (!err && offset > INT64_MAX)
		err = -EINVAL;
	if (!err)
		err = nfs3_become_caller(c);
	if (!err) {
		rfd = file_fd(c, fe, NULL, O_RDONLY);
		if (rfd < 0)
			err = rfd;
	}
	if (err)
		goto out_err;

	if (count > c->c_exp->ex_max_payload)
		count = c->c_exp->ex_max_payload;
	start = res->xs_pos;
	rpcrdma_xdr_put_u32(res, NFS3_OK);
	attrp = rpcrdma_xdr_reserve(res, NFS3_POST_OP_ATTR_BYTES);
	countp = rpcrdma_xdr_reserve(res, 4);
	eofp = rpcrdma_xdr_reserve(res, 4);
	lenp = rpcrdma_xdr_reserve(res, 4);
	if (!lenp)
		goto out_close; /* SYSTEM_ERR: no room even for the header */
	room = rpcrdma_xdr_remaining(res) & ~(size_t)3;
	if (count > room)
		count = (uint32_t)room;
	data = count ? rpcrdma_svc_ddp_begin(c->c_req, count) : NULL;
	if (count && !data)
		count = 0;
	if (count) {
		n = pread_full(rfd, data, count, (off_t)offset);
		if (n < 0) {
			err = (int)n;
			res->xs_pos = start;
			goto out_err;
		}
		rpcrdma_svc_ddp_end(c->c_req, (size_t)n);
	}
	rpcrdma_xdr_init(&patch, attrp, NFS3_POST_OP_ATTR_BYTES);
	if (fstat(rfd, &post) == 0) {
		nfs3_put_post_op_attr(&patch, c->c_exp, &post);
		eof = offset + (uint64_t)n >= (uint64_t)post.st_size;
	} else { /* no attributes: a short read is the end */
		nfs3_put_post_op_attr(&patch, c->c_exp, NULL);
		eof = (uint64_t)n < count;
	}
	store_be32(countp, (uint32_t)n);
	store_be32(eofp, eof);
	store_be32(lenp, (uint32_t)n);
	goto out_close;

out_err:
	rpcrdma_xdr_put_u32(res, nfs3_errno_to_stat(err));
	if (fe)
		nfs3_put_post_op_fd(res, c->c_exp, fe->fe_path);
	else
		nfs3_put_post_op_attr(res, c->c_exp, NULL);
out_close:
	nfs3_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

static ssize_t pwrite_full(int fd, const uint8_t *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, buf + done, len - done, off + (off_t)done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int proc_write(struct nfs3_call *c)
{
	const uint8_t *fh, *data;
	uint32_t fhlen, count, stable, dlen;
	uint64_t offset;
	struct stat pre, post;
	struct nfs3_fentry local, *fe = NULL;
	ssize_t n = 0;
	int fd = -1, wfd = -1, err;

	fh = get_fh(c->c_args, &fhlen);
	offset = rpcrdma_xdr_get_u64(c->c_args);
	count = rpcrdma_xdr_get_u32(c->c_args);
	stable = rpcrdma_xdr_get_u32(c->c_args);
	data = rpcrdma_xdr_get_opaque(c->c_args, UINT32_MAX, &dlen);
	if (!rpcrdma_xdr_ok(c->c_args) || stable > NFS3_FILE_SYNC || count > dlen)
		return RPCRDMA_SVC_GARBAGE_ARGS;

	err = get_file(c, fh, fhlen, &local, &fe, &pre);
	if (!err) {
		fd = fe->fe_path;
		err = want_regular(&pre);
	}
	if (!err && (offset > INT64_MAX || count > INT64_MAX - offset))
		err = -EFBIG;
	if (!err)
		err = nfs3_become_caller(c);
	if (!err) {
		wfd = file_fd(c, fe, &pre, O_WRONLY);
		if (wfd < 0)
			err = wfd;
	}
	if (!err && count) {
		n = pwrite_full(wfd, data, count, (off_t)offset);
		if (n < 0)
			err = (int)n;
	}
	if (!err && stable == NFS3_DATA_SYNC && fdatasync(wfd) < 0)
		err = -errno;
	if (!err && stable == NFS3_FILE_SYNC && fsync(wfd) < 0)
		err = -errno;

	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	if (fd >= 0 && fstat(fd, &post) == 0)
		nfs3_put_wcc(c->c_res, c->c_exp, &pre, &post);
	else
		nfs3_put_wcc(c->c_res, c->c_exp, fd >= 0 ? &pre : NULL, NULL);
	if (!err) {
		rpcrdma_xdr_put_u32(c->c_res, (uint32_t)n);
		rpcrdma_xdr_put_u32(c->c_res, stable);
		rpcrdma_xdr_put_fixed(c->c_res, c->c_exp->ex_verf, 8);
	}
	nfs3_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

/*
 * A directory-modifying call: the parent directory (from a diropargs3),
 * its attributes before the change, the checked name.
 */
struct nfs3_dirop {
	int d_fd;
	struct stat d_pre;
	bool d_have_pre;
	struct nfs3_name d_name;
};

static void dirop_decode(struct nfs3_call *c, struct nfs3_dirop *d,
			 const uint8_t **fh, uint32_t *fhlen)
{
	d->d_fd = -1;
	d->d_have_pre = false;
	*fh = get_fh(c->c_args, fhlen);
	get_name(c->c_args, &d->d_name);
}

/* Open the directory and check the name; a negative errno or NFS status. */
static uint32_t dirop_open(struct nfs3_call *c, struct nfs3_dirop *d,
			   const uint8_t *fh, uint32_t fhlen)
{
	int err = open_handle(c, fh, fhlen, &d->d_fd, &d->d_pre);

	if (err)
		return nfs3_errno_to_stat(err);
	d->d_have_pre = true;
	if (!S_ISDIR(d->d_pre.st_mode))
		return NFS3ERR_NOTDIR;
	return name_check(&d->d_name);
}

static void dirop_put_wcc(struct nfs3_call *c, struct nfs3_dirop *d)
{
	struct stat post;

	if (d->d_fd >= 0 && fstat(d->d_fd, &post) == 0)
		nfs3_put_wcc(c->c_res, c->c_exp, d->d_have_pre ? &d->d_pre : NULL,
			     &post);
	else
		nfs3_put_wcc(c->c_res, c->c_exp, NULL, NULL);
}

/*
 * Result of CREATE, MKDIR, SYMLINK, MKNOD (RFC 1813 3.3.8): on success
 * post_op_fh3, post_op_attr, wcc_data; on failure wcc_data.
 */
static void put_create_res(struct nfs3_call *c, struct nfs3_dirop *d,
			   uint32_t stat, int fd)
{
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t fhlen;
	struct stat st;

	rpcrdma_xdr_put_u32(c->c_res, stat);
	if (stat == NFS3_OK) {
		bool have_fh = nfs3_fh_make(c->c_exp, fd, "", fh, &fhlen) == 0;

		rpcrdma_xdr_put_u32(c->c_res, have_fh);
		if (have_fh)
			rpcrdma_xdr_put_opaque(c->c_res, fh, fhlen);
		nfs3_put_post_op_attr(c->c_res, c->c_exp,
				      fstat(fd, &st) == 0 ? &st : NULL);
	}
	dirop_put_wcc(c, d);
}

enum { CREATE_UNCHECKED = 0, CREATE_GUARDED = 1, CREATE_EXCLUSIVE = 2 };

static int proc_create(struct nfs3_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *dfh, *verf = NULL;
	uint32_t dfhlen, how, stat;
	struct nfs3_sattr sa;
	struct stat st;
	mode_t mode;
	int fd = -1, err;
	bool created = false;

	dirop_decode(c, &d, &dfh, &dfhlen);
	how = rpcrdma_xdr_get_u32(c->c_args);
	memset(&sa, 0, sizeof(sa));
	if (how == CREATE_EXCLUSIVE)
		verf = rpcrdma_xdr_get_fixed(c->c_args, 8);
	else if (how <= CREATE_GUARDED)
		get_sattr(c->c_args, &sa);
	if (!rpcrdma_xdr_ok(c->c_args) || how > CREATE_EXCLUSIVE)
		return RPCRDMA_SVC_GARBAGE_ARGS;

	stat = dirop_open(c, &d, dfh, dfhlen);
	if (stat)
		goto out;
	if (is_dot_or_dotdot(&d.d_name)) {
		stat = NFS3ERR_EXIST;
		goto out;
	}
	err = nfs3_become_caller(c);
	if (err)
		goto out_err;
	if (how == CREATE_EXCLUSIVE)
		mode = 0600;
	else
		mode = sa.sa_set_mode ? (sa.sa_mode & 07777) : 0644;
	if (mknodat(d.d_fd, d.d_name.n_buf, S_IFREG | mode, 0) == 0)
		created = true;
	else if (errno != EEXIST || how == CREATE_GUARDED)
		goto out_errno;
	err = nfs3_lookup_at(c->c_exp, d.d_fd, &d.d_pre, d.d_name.n_buf, &fd, &st);
	if (err)
		goto out_err;
	if (!created && !S_ISREG(st.st_mode)) {
		stat = NFS3ERR_EXIST;
		goto out;
	}
	if (how == CREATE_EXCLUSIVE) {
		/* the verifier lives in atime/mtime seconds until SETATTR */
		struct nfs3_sattr vs = {
			.sa_atime_how = TIME_CLIENT,
			.sa_mtime_how = TIME_CLIENT,
			.sa_atime = { .tv_sec = load_be32(verf) },
			.sa_mtime = { .tv_sec = load_be32(verf + 4) },
		};

		if (!created) {
			stat = (st.st_atim.tv_sec == vs.sa_atime.tv_sec &&
				st.st_mtim.tv_sec == vs.sa_mtime.tv_sec) ?
				       NFS3_OK : NFS3ERR_EXIST;
			goto out;
		}
		err = set_times(fd, &vs);
	} else {
		/* UNCHECKED on an existing file: only its size may change */
		if (!created) {
			sa.sa_set_mode = sa.sa_set_uid = sa.sa_set_gid = false;
			sa.sa_atime_how = sa.sa_mtime_how = TIME_DONT_CHANGE;
		}
		err = sattr_apply(c, fd, &st, &sa, true, NULL);
	}
	if (err)
		goto out_err;
	stat = NFS3_OK;
	goto out;

out_errno:
	err = -errno;
out_err:
	stat = nfs3_errno_to_stat(err);
out:
	put_create_res(c, &d, stat, fd);
	close_fd(fd);
	close_fd(d.d_fd);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_mkdir(struct nfs3_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *dfh;
	uint32_t dfhlen, stat;
	struct nfs3_sattr sa;
	struct stat st;
	int fd = -1, err;

	dirop_decode(c, &d, &dfh, &dfhlen);
	get_sattr(c->c_args, &sa);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	stat = dirop_open(c, &d, dfh, dfhlen);
	if (stat)
		goto out;
	if (is_dot_or_dotdot(&d.d_name)) {
		stat = NFS3ERR_EXIST;
		goto out;
	}
	err = nfs3_become_caller(c);
	if (!err && mkdirat(d.d_fd, d.d_name.n_buf,
			    sa.sa_set_mode ? (sa.sa_mode & 07777) : 0755) < 0)
		err = -errno;
	if (!err)
		err = nfs3_lookup_at(c->c_exp, d.d_fd, &d.d_pre, d.d_name.n_buf,
				     &fd, &st);
	if (!err)
		err = sattr_apply(c, fd, &st, &sa, true, NULL);
	stat = nfs3_errno_to_stat(err);
out:
	put_create_res(c, &d, stat, fd);
	close_fd(fd);
	close_fd(d.d_fd);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_symlink(struct nfs3_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *dfh, *tp;
	uint32_t dfhlen, tlen, stat;
	struct nfs3_sattr sa;
	char target[NFS3_WIRE_PATH_MAX + 1];
	struct stat st;
	int fd = -1, err;

	dirop_decode(c, &d, &dfh, &dfhlen);
	get_sattr(c->c_args, &sa);
	tp = rpcrdma_xdr_get_opaque(c->c_args, NFS3_WIRE_PATH_MAX, &tlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	memcpy(target, tp, tlen);
	target[tlen] = '\0';

	stat = dirop_open(c, &d, dfh, dfhlen);
	if (stat)
		goto out;
	if (is_dot_or_dotdot(&d.d_name)) {
		stat = NFS3ERR_EXIST;
		goto out;
	}
	if (tlen == 0 || strlen(target) != tlen) {
		stat = NFS3ERR_INVAL;
		goto out;
	}
	err = nfs3_become_caller(c);
	/* the target is stored, never resolved by the server */
	if (!err && symlinkat(target, d.d_fd, d.d_name.n_buf) < 0)
		err = -errno;
	if (!err)
		err = nfs3_lookup_at(c->c_exp, d.d_fd, &d.d_pre, d.d_name.n_buf,
				     &fd, &st);
	stat = nfs3_errno_to_stat(err);
out:
	put_create_res(c, &d, stat, fd);
	close_fd(fd);
	close_fd(d.d_fd);
	return RPCRDMA_SVC_SUCCESS;
}

/* MKNOD (RFC 1813 3.3.11) is not offered: NFS3ERR_NOTSUPP. */
static int proc_mknod(struct nfs3_call *c)
{
	rpcrdma_xdr_put_u32(c->c_res, NFS3ERR_NOTSUPP);
	nfs3_put_wcc(c->c_res, c->c_exp, NULL, NULL);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_remove_common(struct nfs3_call *c, bool dir)
{
	struct nfs3_dirop d;
	const uint8_t *dfh;
	uint32_t dfhlen, stat, fhlen = 0;
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	bool have_fh = false;
	int err;

	dirop_decode(c, &d, &dfh, &dfhlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	stat = dirop_open(c, &d, dfh, dfhlen);
	if (stat)
		goto out;
	if (strcmp(d.d_name.n_buf, ".") == 0) {
		stat = NFS3ERR_INVAL;
		goto out;
	}
	if (strcmp(d.d_name.n_buf, "..") == 0) {
		stat = dir ? NFS3ERR_NOTEMPTY : NFS3ERR_ISDIR;
		goto out;
	}
	err = nfs3_become_caller(c);
	if (!err && !dir)
		have_fh = unlink_fh(c, d.d_fd, d.d_name.n_buf, fh, &fhlen);
	if (!err && unlinkat(d.d_fd, d.d_name.n_buf, dir ? AT_REMOVEDIR : 0) < 0)
		err = -errno;
	if (!err && have_fh)
		nfs3_fcache_forget(c->c_exp, fh, fhlen);
	stat = nfs3_errno_to_stat(err);
out:
	rpcrdma_xdr_put_u32(c->c_res, stat);
	dirop_put_wcc(c, &d);
	close_fd(d.d_fd);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_remove(struct nfs3_call *c)
{
	return proc_remove_common(c, false);
}

static int proc_rmdir(struct nfs3_call *c)
{
	return proc_remove_common(c, true);
}

static int proc_rename(struct nfs3_call *c)
{
	struct nfs3_dirop from, to;
	const uint8_t *ffh, *tfh;
	uint32_t ffhlen, tfhlen, stat, fhlen = 0;
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	bool have_fh = false;
	int err;

	dirop_decode(c, &from, &ffh, &ffhlen);
	dirop_decode(c, &to, &tfh, &tfhlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	stat = dirop_open(c, &from, ffh, ffhlen);
	if (!stat)
		stat = dirop_open(c, &to, tfh, tfhlen);
	if (stat)
		goto out;
	if (is_dot_or_dotdot(&from.d_name) || is_dot_or_dotdot(&to.d_name)) {
		stat = NFS3ERR_INVAL;
		goto out;
	}
	err = nfs3_become_caller(c);
	/* a file the rename replaces loses that link */
	if (!err)
		have_fh = unlink_fh(c, to.d_fd, to.d_name.n_buf, fh, &fhlen);
	if (!err && renameat(from.d_fd, from.d_name.n_buf, to.d_fd,
			     to.d_name.n_buf) < 0)
		err = -errno;
	if (!err && have_fh)
		nfs3_fcache_forget(c->c_exp, fh, fhlen);
	stat = nfs3_errno_to_stat(err);
out:
	rpcrdma_xdr_put_u32(c->c_res, stat);
	dirop_put_wcc(c, &from);
	dirop_put_wcc(c, &to);
	close_fd(from.d_fd);
	close_fd(to.d_fd);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_link(struct nfs3_call *c)
{
	struct nfs3_dirop d;
	const uint8_t *fh, *dfh;
	uint32_t fhlen, dfhlen, stat;
	struct stat st;
	char path[32];
	int fd = -1, err;

	d.d_fd = -1;
	fh = get_fh(c->c_args, &fhlen);
	dirop_decode(c, &d, &dfh, &dfhlen);
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	err = open_handle(c, fh, fhlen, &fd, &st);
	if (err) {
		stat = nfs3_errno_to_stat(err);
		goto out;
	}
	stat = dirop_open(c, &d, dfh, dfhlen);
	if (stat)
		goto out;
	if (is_dot_or_dotdot(&d.d_name)) {
		stat = NFS3ERR_EXIST;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		stat = NFS3ERR_ISDIR;
		goto out;
	}
	err = nfs3_become_caller(c);
	proc_path(path, sizeof(path), fd);
	if (!err && linkat(AT_FDCWD, path, d.d_fd, d.d_name.n_buf,
			   AT_SYMLINK_FOLLOW) < 0)
		err = -errno;
	stat = nfs3_errno_to_stat(err);
out:
	rpcrdma_xdr_put_u32(c->c_res, stat);
	nfs3_put_post_op_fd(c->c_res, c->c_exp, fd);
	dirop_put_wcc(c, &d);
	close_fd(fd);
	close_fd(d.d_fd);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_readdir(struct nfs3_call *c)
{
	return nfs3_proc_readdir(c, false);
}

static int proc_readdirplus(struct nfs3_call *c)
{
	return nfs3_proc_readdir(c, true);
}

/* FSSTAT, FSINFO, PATHCONF: a handle in, attributes and numbers out. */
static int fs_open(struct nfs3_call *c, int *fdp, struct stat *st,
		   int *accept)
{
	const uint8_t *fh;
	uint32_t fhlen;
	int err;

	*fdp = -1;
	fh = get_fh(c->c_args, &fhlen);
	if (!rpcrdma_xdr_ok(c->c_args)) {
		*accept = RPCRDMA_SVC_GARBAGE_ARGS;
		return -EINVAL;
	}
	*accept = RPCRDMA_SVC_SUCCESS;
	err = open_handle(c, fh, fhlen, fdp, st);
	if (err) {
		rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
		nfs3_put_post_op_attr(c->c_res, c->c_exp, NULL);
	}
	return err;
}

static int proc_fsstat(struct nfs3_call *c)
{
	struct statvfs sv;
	struct stat st;
	int fd, accept;

	if (fs_open(c, &fd, &st, &accept))
		return accept;
	if (fstatvfs(fd, &sv) < 0) {
		rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(-errno));
		nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
		goto out;
	}
	rpcrdma_xdr_put_u32(c->c_res, NFS3_OK);
	nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
	rpcrdma_xdr_put_u64(c->c_res, (uint64_t)sv.f_blocks * sv.f_frsize);
	rpcrdma_xdr_put_u64(c->c_res, (uint64_t)sv.f_bfree * sv.f_frsize);
	rpcrdma_xdr_put_u64(c->c_res, (uint64_t)sv.f_bavail * sv.f_frsize);
	rpcrdma_xdr_put_u64(c->c_res, sv.f_files);
	rpcrdma_xdr_put_u64(c->c_res, sv.f_ffree);
	rpcrdma_xdr_put_u64(c->c_res, sv.f_favail);
	rpcrdma_xdr_put_u32(c->c_res, 0); /* invarsec: may change any time */
out:
	close_fd(fd);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_fsinfo(struct nfs3_call *c)
{
	struct stat st;
	uint32_t max = c->c_exp->ex_max_payload;
	int fd, accept;

	if (fs_open(c, &fd, &st, &accept))
		return accept;
	rpcrdma_xdr_put_u32(c->c_res, NFS3_OK);
	nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
	rpcrdma_xdr_put_u32(c->c_res, max);     /* rtmax */
	rpcrdma_xdr_put_u32(c->c_res, max);     /* rtpref */
	rpcrdma_xdr_put_u32(c->c_res, 4096);    /* rtmult */
	rpcrdma_xdr_put_u32(c->c_res, max);     /* wtmax */
	rpcrdma_xdr_put_u32(c->c_res, max);     /* wtpref */
	rpcrdma_xdr_put_u32(c->c_res, 4096);    /* wtmult */
	rpcrdma_xdr_put_u32(c->c_res, 65536);   /* dtpref */
	rpcrdma_xdr_put_u64(c->c_res, (uint64_t)INT64_MAX); /* maxfilesize */
	rpcrdma_xdr_put_u32(c->c_res, 0);       /* time_delta: 1 ns */
	rpcrdma_xdr_put_u32(c->c_res, 1);
	rpcrdma_xdr_put_u32(c->c_res, NFS3_FSF_LINK | NFS3_FSF_SYMLINK |
				      NFS3_FSF_HOMOGENEOUS | NFS3_FSF_CANSETTIME);
	close_fd(fd);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_pathconf(struct nfs3_call *c)
{
	struct stat st;
	long linkmax, namemax;
	int fd, accept;

	if (fs_open(c, &fd, &st, &accept))
		return accept;
	linkmax = fpathconf(fd, _PC_LINK_MAX);
	namemax = fpathconf(fd, _PC_NAME_MAX);
	rpcrdma_xdr_put_u32(c->c_res, NFS3_OK);
	nfs3_put_post_op_attr(c->c_res, c->c_exp, &st);
	rpcrdma_xdr_put_u32(c->c_res, linkmax > 0 && linkmax < UINT32_MAX ?
				      (uint32_t)linkmax : 32000);
	rpcrdma_xdr_put_u32(c->c_res, namemax > 0 && namemax <= 255 ?
				      (uint32_t)namemax : 255);
	rpcrdma_xdr_put_u32(c->c_res, 1); /* no_trunc */
	rpcrdma_xdr_put_u32(c->c_res, 1); /* chown_restricted */
	rpcrdma_xdr_put_u32(c->c_res, 0); /* case_insensitive */
	rpcrdma_xdr_put_u32(c->c_res, 1); /* case_preserving */
	close_fd(fd);
	return RPCRDMA_SVC_SUCCESS;
}

static int proc_commit(struct nfs3_call *c)
{
	const uint8_t *fh;
	uint32_t fhlen;
	struct stat pre, post;
	struct nfs3_fentry local, *fe = NULL;
	char path[32];
	int fd = -1, sfd = -1, err;

	fh = get_fh(c->c_args, &fhlen);
	(void)rpcrdma_xdr_get_u64(c->c_args); /* offset: the whole file is synced */
	(void)rpcrdma_xdr_get_u32(c->c_args); /* count */
	if (!rpcrdma_xdr_ok(c->c_args))
		return RPCRDMA_SVC_GARBAGE_ARGS;

	err = get_file(c, fh, fhlen, &local, &fe, &pre);
	if (!err) {
		fd = fe->fe_path;
		err = want_regular(&pre);
	}
	if (!err) {
		/*
		 * server credentials: syncing reveals and changes no data.  Any
		 * descriptor of the file will do (fsync syncs the inode); one
		 * opened here is kept as the entry's read descriptor, which
		 * file_fd() checks against each caller before a READ uses it.
		 */
		sfd = nfs3_fcache_fd(fe, O_WRONLY);
		if (sfd < 0)
			sfd = nfs3_fcache_fd(fe, O_RDONLY);
		if (sfd < 0) {
			proc_path(path, sizeof(path), fd);
			sfd = open(path, O_RDONLY | O_CLOEXEC);
			if (sfd >= 0)
				sfd = nfs3_fcache_set_fd(fe, O_RDONLY, sfd);
		}
		if (sfd < 0 || fsync(sfd) < 0)
			err = -errno;
	}
	rpcrdma_xdr_put_u32(c->c_res, nfs3_errno_to_stat(err));
	if (fd >= 0 && fstat(fd, &post) == 0)
		nfs3_put_wcc(c->c_res, c->c_exp, &pre, &post);
	else
		nfs3_put_wcc(c->c_res, c->c_exp, NULL, NULL);
	if (!err)
		rpcrdma_xdr_put_fixed(c->c_res, c->c_exp->ex_verf, 8);
	nfs3_fcache_put(fe);
	return RPCRDMA_SVC_SUCCESS;
}

typedef int (*nfs3_proc_fn)(struct nfs3_call *c);

static const nfs3_proc_fn nfs3_procs[] = {
	[NFSPROC3_NULL] = proc_null,
	[NFSPROC3_GETATTR] = proc_getattr,
	[NFSPROC3_SETATTR] = proc_setattr,
	[NFSPROC3_LOOKUP] = proc_lookup,
	[NFSPROC3_ACCESS] = proc_access,
	[NFSPROC3_READLINK] = proc_readlink,
	[NFSPROC3_READ] = proc_read,
	[NFSPROC3_WRITE] = proc_write,
	[NFSPROC3_CREATE] = proc_create,
	[NFSPROC3_MKDIR] = proc_mkdir,
	[NFSPROC3_SYMLINK] = proc_symlink,
	[NFSPROC3_MKNOD] = proc_mknod,
	[NFSPROC3_REMOVE] = proc_remove,
	[NFSPROC3_RMDIR] = proc_rmdir,
	[NFSPROC3_RENAME] = proc_rename,
	[NFSPROC3_LINK] = proc_link,
	[NFSPROC3_READDIR] = proc_readdir,
	[NFSPROC3_READDIRPLUS] = proc_readdirplus,
	[NFSPROC3_FSSTAT] = proc_fsstat,
	[NFSPROC3_FSINFO] = proc_fsinfo,
	[NFSPROC3_PATHCONF] = proc_pathconf,
	[NFSPROC3_COMMIT] = proc_commit,
};

int rpcrdma_nfs3_dispatch(struct rpcrdma_svc_req *req, void *arg)
{
	struct nfs3_call c = {
		.c_exp = arg,
		.c_req = req,
		.c_args = &req->rq_args,
		.c_res = &req->rq_res,
	};
	uint32_t proc = req->rq_msg.rm_proc;
	size_t res_start = req->rq_res.xs_pos;
	uint32_t auth;
	int ret;

	if (req->rq_msg.rm_vers != RPCRDMA_NFS3_VERSION)
		return RPCRDMA_SVC_PROG_MISMATCH;
	if (proc >= sizeof(nfs3_procs) / sizeof(nfs3_procs[0]))
		return RPCRDMA_SVC_PROC_UNAVAIL;
	if (proc == NFSPROC3_NULL)
		return RPCRDMA_SVC_SUCCESS;
	auth = nfs3_cred_from_req(c.c_exp, req, &c.c_cred);
	if (auth) {
		req->rq_auth_stat = auth;
		return RPCRDMA_SVC_AUTH_ERROR;
	}
	ret = nfs3_procs[proc](&c);
	if (c.c_as_caller)
		nfs3_cred_restore();
	if (ret == RPCRDMA_SVC_SUCCESS && !rpcrdma_xdr_ok(&req->rq_res))
		ret = RPCRDMA_SVC_SYSTEM_ERR;
	/* Every NFSv3 result but NULL's starts with its nfsstat3. */
	if (ret == RPCRDMA_SVC_SUCCESS && req->rq_res.xs_pos >= res_start + 4)
		rpcrdma_svc_req_set_status(req, load_be32(req->rq_res.xs_base + res_start));
	if (c.c_exp->ex_verbose > 1)
		fprintf(c.c_exp->ex_log, "nfs3: xid %08x proc %u uid %u -> %d\n",
			req->rq_msg.rm_xid, proc, c.c_cred.cr_uid, ret);
	return ret;
}
