// SPDX-License-Identifier: MIT
/*
 * nfs4_attr.c - file attributes of NFSv4.1 (RFC 8881 section 5): the
 * bitmap4 and fattr4 encodings, the attributes the Linux client asks for
 * (for its server capabilities, fsinfo, pathconf, statfs, getattr and
 * readdir), and the settable ones a client sends in SETATTR, CREATE and
 * OPEN.  Owners are numbers in decimal ("1000"), as the Linux client
 * sends and expects for AUTH_SYS (nfs4_disable_idmapping); a name
 * ("user" or "user@domain") sent by a client is looked up in the system's
 * user and group databases.
 */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "common/be.h"
#include "nfs4_internal.h"

#define BIT(n) (1u << ((n) % 32))
#define WORD(n) ((n) / 32)

/* Readable attributes (GETATTR, READDIR). */
static const uint8_t nfs4_readable[] = {
	FATTR4_SUPPORTED_ATTRS, FATTR4_TYPE, FATTR4_FH_EXPIRE_TYPE,
	FATTR4_CHANGE, FATTR4_SIZE, FATTR4_LINK_SUPPORT,
	FATTR4_SYMLINK_SUPPORT, FATTR4_NAMED_ATTR, FATTR4_FSID,
	FATTR4_UNIQUE_HANDLES, FATTR4_LEASE_TIME, FATTR4_RDATTR_ERROR,
	FATTR4_ACLSUPPORT, FATTR4_CANSETTIME, FATTR4_CASE_INSENSITIVE,
	FATTR4_CASE_PRESERVING, FATTR4_CHOWN_RESTRICTED, FATTR4_FILEHANDLE,
	FATTR4_FILEID, FATTR4_FILES_AVAIL, FATTR4_FILES_FREE,
	FATTR4_FILES_TOTAL, FATTR4_HOMOGENEOUS, FATTR4_MAXFILESIZE,
	FATTR4_MAXLINK, FATTR4_MAXNAME, FATTR4_MAXREAD, FATTR4_MAXWRITE,
	FATTR4_MODE, FATTR4_NO_TRUNC, FATTR4_NUMLINKS, FATTR4_OWNER,
	FATTR4_OWNER_GROUP, FATTR4_RAWDEV, FATTR4_SPACE_AVAIL,
	FATTR4_SPACE_FREE, FATTR4_SPACE_TOTAL, FATTR4_SPACE_USED,
	FATTR4_TIME_ACCESS, FATTR4_TIME_DELTA, FATTR4_TIME_METADATA,
	FATTR4_TIME_MODIFY, FATTR4_MOUNTED_ON_FILEID,
	FATTR4_SUPPATTR_EXCLCREAT,
};

/* Settable attributes (SETATTR, CREATE, OPEN's createattrs). */
static const uint8_t nfs4_settable[] = {
	FATTR4_SIZE, FATTR4_MODE, FATTR4_OWNER, FATTR4_OWNER_GROUP,
	FATTR4_TIME_ACCESS_SET, FATTR4_TIME_MODIFY_SET,
};

static bool in_list(const uint8_t *l, size_t n, unsigned a)
{
	for (size_t i = 0; i < n; i++)
		if (l[i] == a)
			return true;
	return false;
}

static void bm_set_list(uint32_t bm[NFS4_BITMAP_WORDS], const uint8_t *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		bm[WORD(l[i])] |= BIT(l[i]);
}

void nfs4_supported_attrs(uint32_t bm[NFS4_BITMAP_WORDS])
{
	memset(bm, 0, NFS4_BITMAP_WORDS * sizeof(*bm));
	bm_set_list(bm, nfs4_readable, sizeof(nfs4_readable));
	bm_set_list(bm, nfs4_settable, sizeof(nfs4_settable));
}

/* The attributes EXCLUSIVE4_1 may set with the verifier (RFC 8881 5.8.1.14):
 * the settable ones but the times, which keep the verifier. */
static void exclcreat_attrs(uint32_t bm[NFS4_BITMAP_WORDS])
{
	static const uint8_t l[] = { FATTR4_SIZE, FATTR4_MODE, FATTR4_OWNER,
				     FATTR4_OWNER_GROUP };

	memset(bm, 0, NFS4_BITMAP_WORDS * sizeof(*bm));
	bm_set_list(bm, l, sizeof(l));
}

uint32_t nfs4_get_bitmap(struct rpcrdma_xdr *xs, uint32_t *bm, uint32_t max)
{
	uint32_t n = rpcrdma_xdr_get_u32(xs);

	memset(bm, 0, max * sizeof(*bm));
	if (n > NFS4_BITMAP_MAX) {
		xs->xs_err = true;
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t w = rpcrdma_xdr_get_u32(xs);

		if (i < max)
			bm[i] = w;
	}
	return n < max ? n : max;
}

void nfs4_put_bitmap(struct rpcrdma_xdr *xs, const uint32_t *bm, uint32_t n)
{
	while (n > 0 && bm[n - 1] == 0)
		n--;
	rpcrdma_xdr_put_u32(xs, n);
	for (uint32_t i = 0; i < n; i++)
		rpcrdma_xdr_put_u32(xs, bm[i]);
}

uint32_t nfs4_ftype(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return NF4REG;
	case S_IFDIR: return NF4DIR;
	case S_IFBLK: return NF4BLK;
	case S_IFCHR: return NF4CHR;
	case S_IFLNK: return NF4LNK;
	case S_IFSOCK: return NF4SOCK;
	case S_IFIFO: return NF4FIFO;
	default: return NF4REG;
	}
}

uint64_t nfs4_change(const struct stat *st)
{
	return (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
}

static void put_time(struct rpcrdma_xdr *xs, const struct timespec *ts)
{
	rpcrdma_xdr_put_u64(xs, (uint64_t)(int64_t)ts->tv_sec);
	rpcrdma_xdr_put_u32(xs, (uint32_t)ts->tv_nsec);
}

static void put_id(struct rpcrdma_xdr *xs, uint32_t id)
{
	char buf[16];
	int n = snprintf(buf, sizeof(buf), "%u", id);

	rpcrdma_xdr_put_opaque(xs, buf, (uint32_t)n);
}

uint32_t nfs4_encode_fattr(struct rpcrdma_xdr *xs, const uint32_t *req,
			   uint32_t nreq, const struct nfs4_attr_src *src)
{
	const struct stat *st = src->as_st;
	uint32_t sup[NFS4_BITMAP_WORDS], ret[NFS4_BITMAP_WORDS] = { 0 };
	uint32_t bm[NFS4_BITMAP_WORDS], excl[NFS4_BITMAP_WORDS];
	struct fs_statfs vfs;
	bool have_vfs = false;
	uint8_t *lenp;
	size_t start;

	memset(sup, 0, sizeof(sup));
	bm_set_list(sup, nfs4_readable, sizeof(nfs4_readable));
	for (uint32_t w = 0; w < NFS4_BITMAP_WORDS && w < nreq; w++)
		ret[w] = req[w] & sup[w];
	if (!src->as_fh || !src->as_fh->fh_len)
		ret[WORD(FATTR4_FILEHANDLE)] &= ~BIT(FATTR4_FILEHANDLE);
	if ((ret[0] & (BIT(FATTR4_FILES_AVAIL) | BIT(FATTR4_FILES_FREE) |
		       BIT(FATTR4_FILES_TOTAL))) ||
	    (ret[1] & (BIT(FATTR4_SPACE_AVAIL) | BIT(FATTR4_SPACE_FREE) |
		       BIT(FATTR4_SPACE_TOTAL))))
		have_vfs = src->as_fe && fs_statfs(src->as_call, src->as_fe, &vfs) == 0;
	if (!have_vfs)
		memset(&vfs, 0, sizeof(vfs));

	nfs4_put_bitmap(xs, ret, NFS4_BITMAP_WORDS);
	lenp = rpcrdma_xdr_reserve(xs, 4);
	start = xs->xs_pos;
	for (unsigned a = 0; a < NFS4_BITMAP_WORDS * 32; a++) {
		if (!(ret[WORD(a)] & BIT(a)))
			continue;
		switch (a) {
		case FATTR4_SUPPORTED_ATTRS:
			nfs4_supported_attrs(bm);
			nfs4_put_bitmap(xs, bm, NFS4_BITMAP_WORDS);
			break;
		case FATTR4_TYPE:
			rpcrdma_xdr_put_u32(xs, nfs4_ftype(st->st_mode));
			break;
		case FATTR4_FH_EXPIRE_TYPE:
			rpcrdma_xdr_put_u32(xs, FH4_PERSISTENT);
			break;
		case FATTR4_CHANGE:
			rpcrdma_xdr_put_u64(xs, nfs4_change(st));
			break;
		case FATTR4_SIZE:
			rpcrdma_xdr_put_u64(xs, (uint64_t)st->st_size);
			break;
		case FATTR4_LINK_SUPPORT:
		case FATTR4_SYMLINK_SUPPORT:
		case FATTR4_UNIQUE_HANDLES:
		case FATTR4_CANSETTIME:
		case FATTR4_CASE_PRESERVING:
		case FATTR4_CHOWN_RESTRICTED:
		case FATTR4_HOMOGENEOUS:
		case FATTR4_NO_TRUNC:
			rpcrdma_xdr_put_u32(xs, 1);
			break;
		case FATTR4_NAMED_ATTR:
		case FATTR4_CASE_INSENSITIVE:
			rpcrdma_xdr_put_u32(xs, 0);
			break;
		case FATTR4_FSID:
			/* major: the export's fsid (its fattr3 fsid); the pseudo
			 * file system is (0, 0), so an export never equals it */
			if (src->as_exp) {
				rpcrdma_xdr_put_u64(xs, src->as_exp->ex_fsid);
				rpcrdma_xdr_put_u64(xs, src->as_exp->ex_fsid ? 0 : 1);
			} else {
				rpcrdma_xdr_put_u64(xs, 0);
				rpcrdma_xdr_put_u64(xs, 0);
			}
			break;
		case FATTR4_LEASE_TIME:
			rpcrdma_xdr_put_u32(xs, src->as_lease ? src->as_lease :
						NFS4_LEASE_SECONDS);
			break;
		case FATTR4_RDATTR_ERROR:
			rpcrdma_xdr_put_u32(xs, src->as_rdattr_error);
			break;
		case FATTR4_ACLSUPPORT:
			rpcrdma_xdr_put_u32(xs, 0); /* no ACL types */
			break;
		case FATTR4_FILEHANDLE:
			rpcrdma_xdr_put_opaque(xs, src->as_fh->fh_data, src->as_fh->fh_len);
			break;
		case FATTR4_FILEID:
			rpcrdma_xdr_put_u64(xs, (uint64_t)st->st_ino);
			break;
		case FATTR4_FILES_AVAIL:
			rpcrdma_xdr_put_u64(xs, vfs.sf_favail);
			break;
		case FATTR4_FILES_FREE:
			rpcrdma_xdr_put_u64(xs, vfs.sf_ffree);
			break;
		case FATTR4_FILES_TOTAL:
			rpcrdma_xdr_put_u64(xs, vfs.sf_files);
			break;
		case FATTR4_MAXFILESIZE:
			rpcrdma_xdr_put_u64(xs, (uint64_t)INT64_MAX);
			break;
		case FATTR4_MAXLINK:
			rpcrdma_xdr_put_u32(xs, 65000);
			break;
		case FATTR4_MAXNAME:
			rpcrdma_xdr_put_u32(xs, NFS4_NAME_MAX);
			break;
		case FATTR4_MAXREAD:
		case FATTR4_MAXWRITE:
			rpcrdma_xdr_put_u64(xs, src->as_max_payload);
			break;
		case FATTR4_MODE:
			rpcrdma_xdr_put_u32(xs, st->st_mode & 07777);
			break;
		case FATTR4_NUMLINKS:
			rpcrdma_xdr_put_u32(xs, (uint32_t)st->st_nlink);
			break;
		case FATTR4_OWNER:
			put_id(xs, st->st_uid);
			break;
		case FATTR4_OWNER_GROUP:
			put_id(xs, st->st_gid);
			break;
		case FATTR4_RAWDEV:
			rpcrdma_xdr_put_u32(xs, major(st->st_rdev));
			rpcrdma_xdr_put_u32(xs, minor(st->st_rdev));
			break;
		case FATTR4_SPACE_AVAIL:
			rpcrdma_xdr_put_u64(xs, vfs.sf_bavail);
			break;
		case FATTR4_SPACE_FREE:
			rpcrdma_xdr_put_u64(xs, vfs.sf_bfree);
			break;
		case FATTR4_SPACE_TOTAL:
			rpcrdma_xdr_put_u64(xs, vfs.sf_bytes);
			break;
		case FATTR4_SPACE_USED:
			rpcrdma_xdr_put_u64(xs, (uint64_t)st->st_blocks * 512u);
			break;
		case FATTR4_TIME_ACCESS:
			put_time(xs, &st->st_atim);
			break;
		case FATTR4_TIME_DELTA: {
			const struct timespec d = { 0, 1 };

			put_time(xs, &d);
			break;
		}
		case FATTR4_TIME_METADATA:
			put_time(xs, &st->st_ctim);
			break;
		case FATTR4_TIME_MODIFY:
			put_time(xs, &st->st_mtim);
			break;
		case FATTR4_MOUNTED_ON_FILEID:
			rpcrdma_xdr_put_u64(xs, src->as_mounted_on ? src->as_mounted_on :
						(uint64_t)st->st_ino);
			break;
		case FATTR4_SUPPATTR_EXCLCREAT:
			exclcreat_attrs(excl);
			nfs4_put_bitmap(xs, excl, NFS4_BITMAP_WORDS);
			break;
		default:
			break;
		}
	}
	if (!rpcrdma_xdr_ok(xs))
		return NFS4ERR_RESOURCE;
	store_be32(lenp, (uint32_t)(xs->xs_pos - start));
	return NFS4_OK;
}

/* ---- settable attributes ---- */

/*
 * get_id - an owner or owner_group: a decimal number, or a name (before
 * any "@domain") known to the system's databases.
 */
static uint32_t get_id(struct rpcrdma_xdr *xs, bool group, uint32_t *id)
{
	char name[256], buf[4096];
	const uint8_t *p;
	uint32_t len;
	char *at, *end;
	unsigned long v;

	p = rpcrdma_xdr_get_opaque(xs, NFS4_OPAQUE_LIMIT, &len);
	if (!p)
		return NFS4ERR_BADXDR;
	if (len == 0 || len >= sizeof(name) || memchr(p, 0, len))
		return NFS4ERR_BADOWNER;
	memcpy(name, p, len);
	name[len] = 0;
	if (name[0] >= '0' && name[0] <= '9') {
		v = strtoul(name, &end, 10);
		if (*end || v > UINT32_MAX)
			return NFS4ERR_BADOWNER;
		*id = (uint32_t)v;
		return NFS4_OK;
	}
	at = strchr(name, '@');
	if (at)
		*at = 0;
	if (group) {
		struct group gr, *g = NULL;

		if (getgrnam_r(name, &gr, buf, sizeof(buf), &g) || !g)
			return NFS4ERR_BADOWNER;
		*id = g->gr_gid;
	} else {
		struct passwd pw, *u = NULL;

		if (getpwnam_r(name, &pw, buf, sizeof(buf), &u) || !u)
			return NFS4ERR_BADOWNER;
		*id = u->pw_uid;
	}
	return NFS4_OK;
}

/* get_settime - a settime4 into an nfs3 time how and time. */
static uint32_t get_settime(struct rpcrdma_xdr *xs, uint32_t *how,
			    struct timespec *ts)
{
	uint32_t h = rpcrdma_xdr_get_u32(xs);

	if (h == SET_TO_SERVER_TIME4) {
		*how = FS_SET_TO_SERVER_TIME;
		return NFS4_OK;
	}
	if (h != SET_TO_CLIENT_TIME4)
		return NFS4ERR_BADXDR;
	ts->tv_sec = (time_t)(int64_t)rpcrdma_xdr_get_u64(xs);
	ts->tv_nsec = rpcrdma_xdr_get_u32(xs);
	if (ts->tv_nsec >= 1000000000)
		return NFS4ERR_INVAL;
	*how = FS_SET_TO_CLIENT_TIME;
	return NFS4_OK;
}

uint32_t nfs4_decode_sattr(struct rpcrdma_xdr *xs, struct nfs4_sattr *sa)
{
	uint32_t bm[NFS4_BITMAP_MAX], n, len, status = NFS4_OK, sup[NFS4_BITMAP_WORDS];
	const uint8_t *vals;
	struct rpcrdma_xdr v;

	memset(sa, 0, sizeof(*sa));
	n = nfs4_get_bitmap(xs, bm, NFS4_BITMAP_MAX);
	vals = rpcrdma_xdr_get_opaque(xs, UINT32_MAX, &len);
	if (!rpcrdma_xdr_ok(xs) || !vals)
		return NFS4ERR_BADXDR;
	nfs4_supported_attrs(sup);
	rpcrdma_xdr_init(&v, (void *)(uintptr_t)vals, len);
	for (unsigned a = 0; a < n * 32; a++) {
		if (!(bm[WORD(a)] & BIT(a)))
			continue;
		if (a >= NFS4_BITMAP_WORDS * 32 || !(sup[WORD(a)] & BIT(a)))
			return NFS4ERR_ATTRNOTSUPP;
		if (!in_list(nfs4_settable, sizeof(nfs4_settable), a))
			return NFS4ERR_INVAL;
		sa->sa_set[WORD(a)] |= BIT(a);
		switch (a) {
		case FATTR4_SIZE:
			sa->sa3.sa_set_size = true;
			sa->sa3.sa_size = rpcrdma_xdr_get_u64(&v);
			break;
		case FATTR4_MODE:
			sa->sa3.sa_set_mode = true;
			sa->sa3.sa_mode = rpcrdma_xdr_get_u32(&v) & 07777;
			break;
		case FATTR4_OWNER:
			sa->sa3.sa_set_uid = true;
			status = get_id(&v, false, &sa->sa3.sa_uid);
			break;
		case FATTR4_OWNER_GROUP:
			sa->sa3.sa_set_gid = true;
			status = get_id(&v, true, &sa->sa3.sa_gid);
			break;
		case FATTR4_TIME_ACCESS_SET:
			status = get_settime(&v, &sa->sa3.sa_atime_how, &sa->sa3.sa_atime);
			break;
		case FATTR4_TIME_MODIFY_SET:
			status = get_settime(&v, &sa->sa3.sa_mtime_how, &sa->sa3.sa_mtime);
			break;
		}
		if (status)
			return status;
		if (!rpcrdma_xdr_ok(&v))
			return NFS4ERR_BADXDR;
	}
	return NFS4_OK;
}
