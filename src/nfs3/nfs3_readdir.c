// SPDX-License-Identifier: MIT
/*
 * nfs3_readdir.c - READDIR and READDIRPLUS (RFC 1813 3.3.16, 3.3.17).
 *
 * Cookies are the kernel's directory positions (struct dirent d_off, the
 * value telldir() would return after the entry), so a later call resumes
 * with seekdir().  On ext4 (hash order) and tmpfs (stable offsets) these
 * positions stay valid while the directory changes, so the cookie
 * verifier does not follow the directory's mtime: it is a keyed hash of
 * the directory's identity, which only catches a cookie presented to the
 * wrong directory (NFS3ERR_BAD_COOKIE).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "nfs3_internal.h"

/* status + post_op_attr + cookieverf3, and the "no more entries" + eof. */
#define RD_HEAD_BYTES (4u + NFS3_POST_OP_ATTR_BYTES + 8u)
#define RD_TAIL_BYTES 8u

static void dir_verifier(const struct rpcrdma_nfs3_export *exp,
			 const struct stat *st, uint8_t verf[8])
{
	uint64_t id[2] = { (uint64_t)st->st_dev, (uint64_t)st->st_ino };
	uint64_t h = fs_siphash(exp->ex_key, id, sizeof(id));

	memcpy(verf, &h, 8);
}

/* One entry ready to encode. */
struct rd_entry {
	const char *e_name;
	uint32_t e_namelen;
	uint64_t e_fileid;
	uint64_t e_cookie;
	bool e_have_attr;
	struct stat e_st;
	uint32_t e_fhlen; /* 0: no handle */
	uint8_t e_fh[RPCRDMA_NFS3_FHSIZE];
};

/* Attributes and handle of @e_name in @dfd (READDIRPLUS only). */
static void rd_fill_plus(struct fs_call *c, int dfd, const struct stat *dst,
			 struct rd_entry *e)
{
	const struct rpcrdma_nfs3_export *exp = c->c_exp;
	int fd;

	/* resolve through the LOOKUP rules ("..", mounts, no symlinks) */
	if (fs_lookup_at(exp, dfd, dst, e->e_name, &fd, &e->e_st) < 0)
		return;
	e->e_have_attr = true;
	e->e_fileid = (uint64_t)e->e_st.st_ino;
	if (fs_fh_make(exp, fd, "", e->e_fh, &e->e_fhlen) < 0)
		e->e_fhlen = 0;
	close(fd);
}

static size_t rd_dir_bytes(const struct rd_entry *e)
{
	/* value_follows, fileid, name, cookie */
	return 4 + 8 + 4 + RPCRDMA_XDR_ALIGN(e->e_namelen) + 8;
}

static size_t rd_entry_bytes(const struct rd_entry *e, bool plus)
{
	size_t n = rd_dir_bytes(e);

	if (plus) {
		n += 4 + (e->e_have_attr ? NFS3_FATTR_BYTES : 0);
		n += 4 + (e->e_fhlen ? 4 + RPCRDMA_XDR_ALIGN(e->e_fhlen) : 0);
	}
	return n;
}

static void rd_put_entry(struct fs_call *c, const struct rd_entry *e, bool plus)
{
	struct rpcrdma_xdr *res = c->c_res;

	rpcrdma_xdr_put_u32(res, 1);
	rpcrdma_xdr_put_u64(res, e->e_fileid);
	rpcrdma_xdr_put_opaque(res, e->e_name, e->e_namelen);
	rpcrdma_xdr_put_u64(res, e->e_cookie);
	if (!plus)
		return;
	nfs3_put_post_op_attr(res, c->c_exp, e->e_have_attr ? &e->e_st : NULL);
	rpcrdma_xdr_put_u32(res, e->e_fhlen != 0);
	if (e->e_fhlen)
		rpcrdma_xdr_put_opaque(res, e->e_fh, e->e_fhlen);
}

int nfs3_proc_readdir(struct fs_call *c, bool plus)
{
	struct rpcrdma_xdr *args = c->c_args, *res = c->c_res;
	const uint8_t *fh, *cverf;
	uint32_t fhlen, dircount, maxcount, stat = NFS3_OK;
	uint64_t cookie;
	uint8_t verf[8];
	struct stat dst;
	struct rd_entry e;
	size_t start, budget, used, dirused = 0;
	unsigned nent = 0;
	bool eof = false;
	DIR *dir = NULL;
	char path[32];
	int dfd, rfd, err;

	fh = rpcrdma_xdr_get_opaque(args, RPCRDMA_NFS3_FHSIZE, &fhlen);
	cookie = rpcrdma_xdr_get_u64(args);
	cverf = rpcrdma_xdr_get_fixed(args, 8);
	dircount = rpcrdma_xdr_get_u32(args);
	maxcount = plus ? rpcrdma_xdr_get_u32(args) : dircount;
	if (!rpcrdma_xdr_ok(args))
		return RPCRDMA_SVC_GARBAGE_ARGS;
	if (!plus)
		dircount = UINT32_MAX; /* READDIR has only "count" (the reply) */

	err = fs_open_handle_fd(c, fh, fhlen, &dfd, &dst);
	if (err) {
		dfd = -1;
		stat = nfs3_errno_to_stat(err);
		goto out_err;
	}
	if (!S_ISDIR(dst.st_mode)) {
		stat = NFS3ERR_NOTDIR;
		goto out_err;
	}
	dir_verifier(c->c_exp, &dst, verf);
	if (cookie != 0 && memcmp(cverf, verf, 8) != 0 &&
	    memcmp(cverf, "\0\0\0\0\0\0\0\0", 8) != 0) {
		stat = NFS3ERR_BAD_COOKIE;
		goto out_err;
	}
	err = fs_become_caller(c);
	if (err)
		goto out_errno;
	/*
	 * Reading a directory needs read permission only: through its
	 * /proc/self/fd link, not openat(dfd, "."), whose lookup of "." asks
	 * for search permission as well (knfsd lists a directory its caller
	 * may read but not search; READDIRPLUS then gives its entries no
	 * attributes or handles, rd_fill_plus()).
	 */
	fs_proc_path(path, sizeof(path), dfd);
	rfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		goto out_errno_now;
	dir = fdopendir(rfd);
	if (!dir) {
		err = -errno;
		close(rfd);
		goto out_errno;
	}
	if (cookie)
		seekdir(dir, (long)cookie);

	start = res->xs_pos;
	budget = rpcrdma_xdr_remaining(res);
	if (maxcount < budget)
		budget = maxcount;
	if (budget < RD_HEAD_BYTES + RD_TAIL_BYTES) {
		stat = NFS3ERR_TOOSMALL;
		goto out_err;
	}
	rpcrdma_xdr_put_u32(res, NFS3_OK);
	nfs3_put_post_op_attr(res, c->c_exp, &dst);
	rpcrdma_xdr_put_fixed(res, verf, 8);
	used = RD_HEAD_BYTES;

	for (;;) {
		struct dirent *d;
		size_t need;

		errno = 0;
		d = readdir(dir);
		if (!d) {
			if (errno) {
				err = -errno;
				res->xs_pos = start;
				goto out_errno;
			}
			eof = true;
			break;
		}
		memset(&e, 0, sizeof(e));
		e.e_name = d->d_name;
		e.e_namelen = (uint32_t)strlen(d->d_name);
		e.e_cookie = (uint64_t)d->d_off;
		e.e_fileid = (uint64_t)d->d_ino;
		if (strcmp(d->d_name, "..") == 0 && fs_is_root(c->c_exp, &dst))
			e.e_fileid = (uint64_t)dst.st_ino; /* root's parent is root */
		if (plus)
			rd_fill_plus(c, dfd, &dst, &e);
		need = rd_entry_bytes(&e, plus);
		if (used + need + RD_TAIL_BYTES > budget ||
		    dirused + rd_dir_bytes(&e) > dircount) {
			if (nent == 0) {
				res->xs_pos = start;
				stat = NFS3ERR_TOOSMALL;
				goto out_err;
			}
			break;
		}
		rd_put_entry(c, &e, plus);
		used += need;
		dirused += rd_dir_bytes(&e);
		nent++;
	}
	rpcrdma_xdr_put_u32(res, 0);
	rpcrdma_xdr_put_u32(res, eof);
	goto out;

out_errno_now:
	err = -errno;
out_errno:
	stat = nfs3_errno_to_stat(err);
out_err:
	rpcrdma_xdr_put_u32(res, stat);
	nfs3_put_post_op_attr(res, c->c_exp, dfd >= 0 ? &dst : NULL);
out:
	if (dir)
		closedir(dir);
	if (dfd >= 0)
		close(dfd);
	return RPCRDMA_SVC_SUCCESS;
}
