// SPDX-License-Identifier: MIT
/*
 * test_fs_cephfs.c - the cephfs backend's mapping through its seam
 * (struct fs_ceph_api, fs_cephfs.h): fake libcephfs functions record
 * what the backend passes and answer what a case sets, so no cluster is
 * needed.  Checked: the handle key's layout (worked out by hand), what a
 * handle decodes to and when it is STALE, the UserPerm built from the
 * caller's (squashed) credentials, errno mapping (a cluster that times
 * out: -EAGAIN; an error an operation does not list: -EIO), readdir
 * cookies given back as libcephfs made them, COMMIT's data-only sync, the
 * message of a cluster that cannot be reached, and the grace period across
 * gateways (a record per gateway under the grace= directory: written in
 * place before the session reset, read by be_cluster_grace).
 */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "fs/fs.h"
#include "fs/fs_cephfs.h"

/* ---- the fake cluster ---- */

struct fake_inode {
	uint64_t fi_ino;
	uint64_t fi_snap;
	mode_t fi_mode;
	uint32_t fi_nlink;
};

#define ROOT_INO 0x10000000000ull /* a CephFS inode number (1 << 40) */
#define FSCID 7

static struct fake_inode g_root = { ROOT_INO, FSC_NOSNAP, S_IFDIR | 0755, 2 };
static struct fake_inode g_file = { 0x10000000abcull, FSC_NOSNAP, S_IFREG | 0644, 1 };
static int g_cmount_dummy;

static struct {
	int mount_err;
	int lookup_vino_err;
	vinodeno_t vino;            /* the last asked */
	int vino_calls;
	uint32_t nlink;             /* of g_file as decoded */
	int op_err;                 /* mkdir, unlink, readlink answer it */
	const UserPerm *op_perm;    /* the perms mkdir got */
	int perms_made, perms_freed;
	uid_t pm_uid;
	gid_t pm_gid;
	int pm_ngids;
	gid_t pm_gids[16];
	int puts;
	unsigned lookup_want;       /* the CEPH_STATX_* the last lookup asked */
	int64_t seek;               /* the last ceph_seekdir offset; -1 none */
	int pos;                    /* next entry of the fake directory */
	const char *mon_host;
	char calls[1024];           /* init, reclaim and mount calls in order */
	int reclaim_err;            /* ceph_start_reclaim answers it */
	int syncs;                  /* ceph_ll_sync_inode calls */
	int sync_dataonly;          /* the last one's syncdataonly */
	int fsyncs;                 /* ceph_ll_fsync calls on the file "f" */
	int fsync_dataonly;         /* the last one's syncdataonly */
	size_t written;             /* bytes ceph_ll_writev took into "f"
				     * through its cached Fh */
	size_t dwritten;            /* ... through its O_DIRECT Fh */
	int dopens, dcloses;        /* O_DIRECT Fh of "f" opened, closed */
	int reads;                  /* ceph_ll_readv calls on "f" */
	/* the grace directory, as every gateway sees it */
	bool at_grace;              /* the last ceph_mount was of the grace dir */
	int gmount_err;             /* ceph_mount of the grace dir answers it */
	int gwalk_err;              /* a walk to it answers it */
	uint64_t gver;              /* its change attribute */
	int gpos;                   /* its readdir cursor */
	int greads;                 /* records read (ll_open of one) */
	struct grec {               /* a gateway's directory NAME ... */
		bool used;
		bool has_rec;           /* ... and its file "record" */
		char name[FSC_UUID_MAX + 8];
		char text[FSC_GRACE_REC_MAX];
		char sub;               /* its address: NAME's Inode */
	} grec[6];
} g;

static struct fake_inode g_gdir = { 0x10000000777ull, FSC_NOSNAP, S_IFDIR | 0755, 2 };
#define GRACE_DIR "/gw-grace"

/* a record as another gateway (or the test) leaves it; bumps the
 * directory's change attribute as a rename into it does */
static void grec_put(const char *name, const char *text)
{
	struct grec *r = NULL;

	for (int i = 0; i < 6 && !r; i++)
		if (g.grec[i].used && !strcmp(g.grec[i].name, name))
			r = &g.grec[i];
	for (int i = 0; i < 6 && !r; i++)
		if (!g.grec[i].used)
			r = &g.grec[i];
	assert_non_null(r);
	r->used = true;
	r->has_rec = text != NULL;
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->text, sizeof(r->text), "%s", text ? text : "");
	g.gver++;
}

/* the record whose directory Inode @in is, or NULL */
static struct grec *grec_of_sub(Inode *in)
{
	for (int i = 0; i < 6; i++)
		if (in == (Inode *)&g.grec[i].sub)
			return &g.grec[i];
	return NULL;
}

static struct grec *grec_find(const char *name)
{
	for (int i = 0; i < 6; i++)
		if (g.grec[i].used && !strcmp(g.grec[i].name, name))
			return &g.grec[i];
	return NULL;
}

static void note(const char *what, const char *arg)
{
	size_t n = strlen(g.calls);

	snprintf(g.calls + n, sizeof(g.calls) - n, "%s%s%s;", what,
		 arg ? "=" : "", arg ? arg : "");
}

/* the fake directory: names and the offsets telldir gives after each */
static const struct {
	const char *name;
	uint64_t ino;
	int64_t next;
} g_dir[] = {
	{ ".", ROOT_INO, 1 },
	{ "..", 1, 2 },
	{ "a", 0x10000000001ull, 0x2f3a000004 },
	{ "b", 0x10000000002ull, 0x7b11000005 },
};

static int f_create(struct ceph_mount_info **cm, const char *id)
{
	(void)id;
	*cm = (struct ceph_mount_info *)&g_cmount_dummy;
	return 0;
}
static int f_conf_read_file(struct ceph_mount_info *cm, const char *p) { (void)cm; (void)p; return 0; }
static int f_conf_set(struct ceph_mount_info *cm, const char *o, const char *v) { (void)cm; (void)o; (void)v; return 0; }
static int f_conf_get(struct ceph_mount_info *cm, const char *o, char *buf, size_t len)
{
	(void)cm;
	if (strcmp(o, "mon_host") || !g.mon_host)
		return -ENOENT;
	snprintf(buf, len, "%s", g.mon_host);
	return 0;
}
static int f_init(struct ceph_mount_info *cm) { (void)cm; note("init", NULL); return 0; }
static int f_start_reclaim(struct ceph_mount_info *cm, const char *uuid, unsigned flags)
{
	(void)cm;
	note(flags == CEPH_RECLAIM_RESET ? "reset" : "reclaim", uuid);
	return g.reclaim_err;
}
static void f_finish_reclaim(struct ceph_mount_info *cm) { (void)cm; note("finish", NULL); }
static void f_set_uuid(struct ceph_mount_info *cm, const char *uuid) { (void)cm; note("uuid", uuid); }
static int f_select(struct ceph_mount_info *cm, const char *n) { (void)cm; (void)n; return 0; }
static int f_mount(struct ceph_mount_info *cm, const char *r)
{
	(void)cm;
	g.at_grace = strcmp(r, "/") != 0;
	note("mount", g.at_grace ? r : NULL);
	if (g.at_grace)
		return strcmp(r, GRACE_DIR) ? -ENOENT : g.gmount_err;
	return g.mount_err;
}
static int64_t f_cid(struct ceph_mount_info *cm) { (void)cm; return FSCID; }
static int f_deleg(struct ceph_mount_info *cm, uint32_t t) { (void)cm; (void)t; return 0; }
static void f_shutdown(struct ceph_mount_info *cm) { (void)cm; }

static UserPerm *f_perm_new(uid_t uid, gid_t gid, int ngids, gid_t *gids)
{
	g.perms_made++;
	g.pm_uid = uid;
	g.pm_gid = gid;
	g.pm_ngids = ngids;
	for (int i = 0; i < ngids && i < 16; i++)
		g.pm_gids[i] = gids[i];
	return malloc(1); /* a distinct pointer per UserPerm */
}
static void f_perm_destroy(UserPerm *p)
{
	g.perms_freed++;
	free(p);
}

static void fill(const struct fake_inode *fi, struct ceph_statx *stx)
{
	memset(stx, 0, sizeof(*stx));
	stx->stx_ino = fi->fi_ino;
	stx->stx_dev = (dev_t)fi->fi_snap;
	stx->stx_mode = (uint16_t)fi->fi_mode;
	stx->stx_nlink = fi->fi_nlink;
}

static int f_walk(struct ceph_mount_info *cm, const char *name, Inode **i,
		  struct ceph_statx *stx, unsigned want, unsigned flags,
		  const UserPerm *p)
{
	(void)cm; (void)want; (void)flags; (void)p;
	if (!strcmp(name, GRACE_DIR) || (g.at_grace && !strcmp(name, "/"))) {
		if (g.gwalk_err)
			return g.gwalk_err;
		*i = (Inode *)&g_gdir;
		fill(&g_gdir, stx);
		stx->stx_version = g.gver;
		stx->stx_mtime.tv_sec = (time_t)g.gver;
		return 0;
	}
	if (!strcmp(name, "/nowhere"))
		return -ENOENT;
	*i = (Inode *)&g_root;
	fill(&g_root, stx);
	return 0;
}
static int f_lookup_vino(struct ceph_mount_info *cm, vinodeno_t v, Inode **in)
{
	(void)cm;
	g.vino = v;
	g.vino_calls++;
	if (g.lookup_vino_err)
		return g.lookup_vino_err;
	*in = (Inode *)(v.ino.val == ROOT_INO ? &g_root : &g_file);
	return 0;
}
static int f_lookup(struct ceph_mount_info *cm, Inode *parent, const char *name,
		    Inode **out, struct ceph_statx *stx, unsigned want,
		    unsigned flags, const UserPerm *p)
{
	(void)cm; (void)flags; (void)p;
	g.lookup_want = want;
	if (parent == (Inode *)&g_gdir) {
		struct grec *r = grec_find(name);

		if (!r)
			return -ENOENT;
		*out = (Inode *)&r->sub;
		memset(stx, 0, sizeof(*stx));
		stx->stx_mode = S_IFDIR | 0755;
		return 0;
	}
	if (grec_of_sub(parent)) {
		struct grec *r = grec_of_sub(parent);

		if (strcmp(name, "record") || !r->has_rec)
			return -ENOENT;
		*out = (Inode *)r;
		memset(stx, 0, sizeof(*stx));
		stx->stx_mode = S_IFREG | 0644;
		return 0;
	}
	if (!strcmp(name, "."))
		*out = parent;
	else if (!strcmp(name, "f"))
		*out = (Inode *)&g_file;
	else
		return -ENOENT;
	fill((struct fake_inode *)*out, stx);
	return 0;
}
static int f_put(struct ceph_mount_info *cm, Inode *in) { (void)cm; (void)in; g.puts++; return 0; }
static int f_getattr(struct ceph_mount_info *cm, Inode *in, struct ceph_statx *stx,
		     unsigned want, unsigned flags, const UserPerm *p)
{
	struct fake_inode *fi = (struct fake_inode *)in;

	(void)cm; (void)want; (void)flags; (void)p;
	fill(fi, stx);
	if (fi == &g_file)
		stx->stx_nlink = g.nlink;
	return 0;
}
/* "f"'s O_DIRECT Fh (its cached one is the Inode itself) */
static char g_file_dfh;
static int f_close(struct ceph_mount_info *cm, Fh *fh)
{
	(void)cm;
	if (fh == (Fh *)&g_file_dfh)
		g.dcloses++;
	return 0;
}
static int f_mkdir(struct ceph_mount_info *cm, Inode *parent, const char *name,
		   mode_t mode, Inode **out, struct ceph_statx *stx,
		   unsigned want, unsigned flags, const UserPerm *p)
{
	(void)cm; (void)mode; (void)want; (void)flags;
	if (parent == (Inode *)&g_gdir) {
		grec_put(name, NULL);
		note("gmkdir", NULL);
		*out = (Inode *)&grec_find(name)->sub;
		memset(stx, 0, sizeof(*stx));
		stx->stx_mode = S_IFDIR | 0755;
		return 0;
	}
	g.op_perm = p;
	if (g.op_err)
		return g.op_err;
	*out = (Inode *)&g_file;
	fill(&g_file, stx);
	return 0;
}
static int f_unlink(struct ceph_mount_info *cm, Inode *in, const char *name,
		    const UserPerm *p)
{
	(void)cm; (void)in; (void)name;
	g.op_perm = p;
	return g.op_err;
}
static int f_opendir(struct ceph_mount_info *cm, Inode *in,
		     struct ceph_dir_result **d, const UserPerm *p)
{
	(void)cm; (void)p;
	if (in == (Inode *)&g_gdir) {
		g.gpos = 0;
		*d = (struct ceph_dir_result *)&g.gpos;
		return 0;
	}
	g.pos = 0;
	*d = (struct ceph_dir_result *)&g.pos;
	return 0;
}
static int f_releasedir(struct ceph_mount_info *cm, struct ceph_dir_result *d)
{
	(void)cm; (void)d;
	return 0;
}
static int f_readdir_r(struct ceph_mount_info *cm, struct ceph_dir_result *d,
		       struct dirent *de)
{
	(void)cm;
	if (d == (struct ceph_dir_result *)&g.gpos) {
		/* ".", "..", then the records */
		while (g.gpos < 8) {
			int k = g.gpos++;

			memset(de, 0, sizeof(*de));
			if (k < 2) {
				strcpy(de->d_name, k ? ".." : ".");
				return 1;
			}
			if (g.grec[k - 2].used) {
				snprintf(de->d_name, sizeof(de->d_name), "%s", g.grec[k - 2].name);
				return 1;
			}
		}
		return 0;
	}
	if (g.pos >= (int)(sizeof(g_dir) / sizeof(g_dir[0])))
		return 0;
	memset(de, 0, sizeof(*de));
	snprintf(de->d_name, sizeof(de->d_name), "%s", g_dir[g.pos].name);
	de->d_ino = g_dir[g.pos].ino;
	g.pos++;
	return 1;
}
static int64_t f_telldir(struct ceph_mount_info *cm, struct ceph_dir_result *d)
{
	(void)cm; (void)d;
	return g.pos ? g_dir[g.pos - 1].next : 0;
}
static void f_seekdir(struct ceph_mount_info *cm, struct ceph_dir_result *d,
		      int64_t off)
{
	(void)cm; (void)d;
	g.seek = off;
	/* the entry after the one whose offset this is */
	for (size_t i = 0; i < sizeof(g_dir) / sizeof(g_dir[0]); i++)
		if (g_dir[i].next == off)
			g.pos = (int)i + 1;
}

/* the grace directory's files: an Fh is the record itself */
static int f_create_rec(struct ceph_mount_info *cm, Inode *parent, const char *name,
			mode_t mode, int oflags, Inode **outp, Fh **fhp,
			struct ceph_statx *stx, unsigned want, unsigned lflags,
			const UserPerm *p)
{
	struct grec *r = grec_of_sub(parent);

	(void)cm; (void)mode; (void)want; (void)lflags; (void)p;
	if (parent == (Inode *)&g_root && !strcmp(name, "new")) {
		/* a new file (the test's "f" again: its fakes count) */
		assert_int_equal(oflags & (O_CREAT | O_EXCL), O_CREAT | O_EXCL);
		*outp = (Inode *)&g_file;
		*fhp = (Fh *)&g_file;
		fill(&g_file, stx);
		return 0;
	}
	if (!r || strcmp(name, "record"))
		return -EACCES;
	r->has_rec = true;
	*outp = (Inode *)r;
	*fhp = (Fh *)r;
	memset(stx, 0, sizeof(*stx));
	return 0;
}
static int64_t f_writev(struct ceph_mount_info *cm, Fh *fh, const struct iovec *iov,
			int iovcnt, int64_t off)
{
	struct grec *r = (struct grec *)fh;

	(void)cm;
	if (fh == (Fh *)&g_file || fh == (Fh *)&g_file_dfh) {
		size_t n = 0;

		for (int i = 0; i < iovcnt; i++)
			n += iov[i].iov_len;
		if (fh == (Fh *)&g_file)
			g.written += n;
		else
			g.dwritten += n;
		return (int64_t)n;
	}
	assert_int_equal(iovcnt, 1);
	assert_int_equal(off, 0);
	assert_true(iov[0].iov_len < sizeof(r->text));
	memcpy(r->text, iov[0].iov_base, iov[0].iov_len);
	r->text[iov[0].iov_len] = '\0';
	note("record", r->name);
	return (int64_t)iov[0].iov_len;
}
static int f_fsync(struct ceph_mount_info *cm, Fh *fh, int dataonly)
{
	(void)cm;
	if (fh == (Fh *)&g_file) {
		g.fsyncs++;
		g.fsync_dataonly = dataonly;
		return 0;
	}
	note("gsync", NULL);
	return 0;
}
/* ceph_ll_sync_inode: counted (COMMIT's data-only sync); the grace
 * directory's sync noted in the call order */
static int f_sync_inode(struct ceph_mount_info *cm, Inode *in, int dataonly)
{
	(void)cm;
	if (in == (Inode *)&g_gdir) {
		note("gsync", NULL);
		return 0;
	}
	g.syncs++;
	g.sync_dataonly = dataonly;
	return 0;
}
static int f_rename(struct ceph_mount_info *cm, Inode *parent, const char *name,
		    Inode *newparent, const char *newname, const UserPerm *p)
{
	struct grec *r = grec_find(name), *old = grec_find(newname);

	(void)cm; (void)p;
	assert_ptr_equal(parent, &g_gdir);
	assert_ptr_equal(newparent, &g_gdir);
	if (!r)
		return -ENOENT;
	if (old)
		old->used = false;
	snprintf(r->name, sizeof(r->name), "%s", newname);
	g.gver++;
	note("record", newname);
	return 0;
}
static int f_open(struct ceph_mount_info *cm, Inode *in, int flags, Fh **fh,
		  const UserPerm *p)
{
	(void)cm; (void)p;
	if (flags & O_DIRECT) {
		/* only "f", for writing alone */
		assert_ptr_equal(in, &g_file);
		assert_int_equal(flags & O_ACCMODE, O_WRONLY);
		g.dopens++;
		*fh = (Fh *)&g_file_dfh;
		return 0;
	}
	if ((flags & O_ACCMODE) == O_RDONLY)
		g.greads++;
	*fh = (Fh *)in;
	return 0;
}
static int64_t f_readv(struct ceph_mount_info *cm, Fh *fh, const struct iovec *iov,
		       int iovcnt, int64_t off)
{
	struct grec *r = (struct grec *)fh;
	size_t n;

	(void)cm; (void)iovcnt; (void)off;
	if (fh == (Fh *)&g_file) {
		g.reads++;
		memset(iov[0].iov_base, 'x', iov[0].iov_len);
		return (int64_t)iov[0].iov_len;
	}
	assert_ptr_not_equal(fh, &g_file_dfh);
	n = strlen(r->text);
	if (n > iov[0].iov_len)
		n = iov[0].iov_len;
	memcpy(iov[0].iov_base, r->text, n);
	return (int64_t)n;
}

static const struct fs_ceph_api g_fake = {
	.ca_ll_create = f_create_rec,
	.ca_ll_writev = f_writev,
	.ca_ll_fsync = f_fsync,
	.ca_ll_sync_inode = f_sync_inode,
	.ca_ll_rename = f_rename,
	.ca_ll_open = f_open,
	.ca_ll_readv = f_readv,
	.ca_create = f_create,
	.ca_conf_read_file = f_conf_read_file,
	.ca_conf_set = f_conf_set,
	.ca_conf_get = f_conf_get,
	.ca_init = f_init,
	.ca_select_filesystem = f_select,
	.ca_start_reclaim = f_start_reclaim,
	.ca_finish_reclaim = f_finish_reclaim,
	.ca_set_uuid = f_set_uuid,
	.ca_mount = f_mount,
	.ca_get_fs_cid = f_cid,
	.ca_set_deleg_timeout = f_deleg,
	.ca_shutdown = f_shutdown,
	.ca_userperm_new = f_perm_new,
	.ca_userperm_destroy = f_perm_destroy,
	.ca_ll_walk = f_walk,
	.ca_ll_lookup_vino = f_lookup_vino,
	.ca_ll_lookup = f_lookup,
	.ca_ll_put = f_put,
	.ca_ll_getattr = f_getattr,
	.ca_ll_close = f_close,
	.ca_ll_mkdir = f_mkdir,
	.ca_ll_unlink = f_unlink,
	.ca_ll_rmdir = f_unlink,
	.ca_ll_opendir = f_opendir,
	.ca_ll_releasedir = f_releasedir,
	.ca_readdir_r = f_readdir_r,
	.ca_telldir = f_telldir,
	.ca_seekdir = f_seekdir,
};

/* ---- fixtures ---- */

static struct rpcrdma_nfs3_export *g_exp;
static char *g_logbuf;
static size_t g_loglen;
static FILE *g_log;

static int open_export(const char *opts)
{
	struct rpcrdma_nfs3_config cfg = { 0 };
	char spec[FS_BE_OPTS_MAX + 8];

	snprintf(spec, sizeof(spec), "cephfs%s%s", opts[0] ? ":" : "", opts);
	cfg.nc_export = "/projects";
	cfg.nc_backend = spec;
	cfg.nc_fcache_entries = RPCRDMA_NFS3_FCACHE_OFF;
	cfg.nc_log = g_log;
	return rpcrdma_nfs3_export_open(&cfg, &g_exp);
}

static int setup(void **state)
{
	(void)state;
	memset(&g, 0, sizeof(g));
	g.seek = -1;
	g.nlink = 1;
	g.mon_host = "192.0.2.10:6789,192.0.2.11:6789";
	g_log = open_memstream(&g_logbuf, &g_loglen);
	fs_cephfs_set_api(&g_fake);
	assert_int_equal(open_export("fs=cephfs:user=nfs"), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rpcrdma_nfs3_export_close(g_exp);
	g_exp = NULL;
	fs_cephfs_set_api(NULL);
	fclose(g_log);
	free(g_logbuf);
	g_logbuf = NULL;
	return 0;
}

static struct fs_call call_as(uint32_t uid, uint32_t gid, uint32_t ngids,
			      const uint32_t *gids)
{
	struct fs_call c = { 0 };

	c.c_exp = g_exp;
	c.c_cred.cr_uid = uid;
	c.c_cred.cr_gid = gid;
	c.c_cred.cr_ngids = ngids;
	for (uint32_t i = 0; i < ngids; i++)
		c.c_cred.cr_gids[i] = gids[i];
	c.c_as_caller = true;
	return c;
}

/* ---- cases ---- */

/* The key: ino, snapid, fscid, each 8 bytes big-endian. */
static void test_key_layout(void **state)
{
	const uint8_t want[FSC_KEY_LEN] = {
		0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x0a, 0xbc, /* 0x10000000abc */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, /* CEPH_NOSNAP (-2) */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, /* fscid 7 */
	};
	uint8_t key[FS_BE_KEY_MAX];
	uint64_t ino, snap, cid;
	uint32_t len = 0, type = 1;

	(void)state;
	fsc_key_put(0x10000000abcull, FSC_NOSNAP, 7, key);
	assert_memory_equal(key, want, FSC_KEY_LEN);
	fsc_key_get(want, &ino, &snap, &cid);
	assert_true(ino == 0x10000000abcull && snap == 0xfffffffffffffffeull && cid == 7);

	/* the backend's key of a name (looked up as the server) */
	assert_int_equal(fs_cephfs_backend.be_fh_key(g_exp, NULL, "f", key, &len, &type), 0);
	assert_int_equal(len, 24);
	assert_int_equal(type, 0);
	assert_memory_equal(key, want, FSC_KEY_LEN);
	/* the root's: no lookup */
	assert_int_equal(fs_cephfs_backend.be_fh_key(g_exp, NULL, "", key, &len, &type), 0);
	assert_memory_equal(key, "\x00\x00\x01\x00\x00\x00\x00\x00", 8);
	assert_int_equal(fs_cephfs_backend.be_fh_key(g_exp, NULL, "nope", key, &len, &type),
			 -ENOENT);
	/* the export's root identity is the walked directory's */
	assert_int_equal(g_exp->ex_ino, ROOT_INO);
}

/* A name's key asks libcephfs for the identity only (CEPH_STATX_INO: no
 * attribute caps, which the MDS would revoke from the other clients that
 * hold them, as a kernel mount does of the files it made; REMOVE and
 * RENAME ask the key of the name they take); a LOOKUP asks the basic
 * attributes, which it answers with. */
static void test_key_asks_no_attrs(void **state)
{
	uint8_t key[FS_BE_KEY_MAX];
	uint32_t len = 0, type = 1;
	struct fs_call c = call_as(0, 0, 0, NULL);
	struct fs_fentry root, out;
	struct stat dst, st;

	(void)state;
	g.lookup_want = ~0u;
	assert_int_equal(fs_cephfs_backend.be_fh_key(g_exp, NULL, "f", key, &len, &type), 0);
	assert_int_equal(g.lookup_want, CEPH_STATX_INO);

	fs_fentry_init(&root);
	fs_fentry_init(&out);
	fsc_key_put(ROOT_INO, FSC_NOSNAP, FSCID, key);
	assert_int_equal(fs_cephfs_backend.be_fh_decode(g_exp, 0, key, FSC_KEY_LEN, &root, &dst), 0);
	g.lookup_want = 0;
	assert_int_equal(fs_cephfs_backend.be_lookup(&c, &root, &dst, "f", &out, &st), 0);
	assert_int_equal(g.lookup_want & CEPH_STATX_BASIC_STATS, CEPH_STATX_BASIC_STATS);
	assert_int_equal(st.st_ino, 0x10000000abcull);
	fs_cephfs_backend.be_release(&out);
	fs_cephfs_backend.be_release(&root);
}

/* A handle decodes through ceph_ll_lookup_vino with its ino and snapid;
 * another file system's, a gone inode, or one without names is STALE. */
static void test_decode(void **state)
{
	uint8_t key[FSC_KEY_LEN];
	struct fs_fentry fe;
	struct stat st;

	(void)state;
	fsc_key_put(0x10000000abcull, FSC_NOSNAP, FSCID, key);
	fs_fentry_init(&fe);
	assert_int_equal(fs_cephfs_backend.be_fh_decode(g_exp, 0, key, sizeof(key), &fe, &st), 0);
	assert_true(g.vino.ino.val == 0x10000000abcull);
	assert_true(g.vino.snapid.val == FSC_NOSNAP);
	assert_int_equal(st.st_ino, 0x10000000abcull);
	assert_int_equal(st.st_dev, g_exp->ex_dev);
	assert_int_equal(fe.fe_type, S_IFREG);
	fs_cephfs_backend.be_release(&fe);
	assert_null(fe.fe_node);

	g.vino_calls = 0;
	fsc_key_put(0x10000000abcull, FSC_NOSNAP, FSCID + 1, key);
	assert_int_equal(fs_cephfs_backend.be_fh_decode(g_exp, 0, key, sizeof(key), &fe, &st), -ESTALE);
	assert_int_equal(g.vino_calls, 0);
	fsc_key_put(0x10000000abcull, FSC_NOSNAP, FSCID, key);
	assert_int_equal(fs_cephfs_backend.be_fh_decode(g_exp, 0, key, 16, &fe, &st), -ESTALE);
	assert_int_equal(fs_cephfs_backend.be_fh_decode(g_exp, 1, key, sizeof(key), &fe, &st), -ESTALE);
	g.lookup_vino_err = -ESTALE;
	assert_int_equal(fs_cephfs_backend.be_fh_decode(g_exp, 0, key, sizeof(key), &fe, &st), -ESTALE);
	g.lookup_vino_err = -ENOENT;
	assert_int_equal(fs_cephfs_backend.be_fh_decode(g_exp, 0, key, sizeof(key), &fe, &st), -ESTALE);
	g.lookup_vino_err = -ETIMEDOUT;
	assert_int_equal(fs_cephfs_backend.be_fh_decode(g_exp, 0, key, sizeof(key), &fe, &st), -EAGAIN);
	g.lookup_vino_err = 0;
	g.nlink = 0;
	g.puts = 0;
	assert_int_equal(fs_cephfs_backend.be_fh_decode(g_exp, 0, key, sizeof(key), &fe, &st), -ESTALE);
	assert_int_equal(g.puts, 1); /* the reference dropped */
	assert_null(fe.fe_node);
}

/* The UserPerm of a call is the caller's credentials as squashing left
 * them: uid, gid and every supplementary group; one per thread, made again
 * only when the caller changes; uid 0 uses the mount's own. */
static void test_userperm(void **state)
{
	const uint32_t gids[] = { 10, 20, 4242 };
	struct fs_fentry root, out;
	struct fs_call c;
	struct stat st;
	const UserPerm *first;
	int made;

	(void)state;
	fs_fentry_init(&root);
	assert_int_equal(fs_root(g_exp, &root, &(struct fs_fentry *){ NULL }, &st), 0);
	made = g.perms_made; /* the mount's root UserPerm */
	/* root squashed to nobody (65534) with its groups */
	c = call_as(65534, 65534, 3, gids);
	fs_fentry_init(&out);
	assert_int_equal(fs_cephfs_backend.be_mkdir(&c, &root, &st, "d", 0755, &out, &st), 0);
	fs_cephfs_backend.be_release(&out);
	assert_int_equal(g.perms_made, made + 1);
	assert_int_equal(g.pm_uid, 65534);
	assert_int_equal(g.pm_gid, 65534);
	assert_int_equal(g.pm_ngids, 3);
	assert_int_equal(g.pm_gids[0], 10);
	assert_int_equal(g.pm_gids[1], 20);
	assert_int_equal(g.pm_gids[2], 4242);
	first = g.op_perm;
	/* the same caller again: the same UserPerm, none made */
	assert_int_equal(fs_cephfs_backend.be_unlink(&c, &root, "d", true), 0);
	assert_ptr_equal(g.op_perm, first);
	assert_int_equal(g.perms_made, made + 1);
	/* another caller: a new one, the old freed */
	c = call_as(1000, 100, 0, NULL);
	assert_int_equal(fs_cephfs_backend.be_unlink(&c, &root, "d", false), 0);
	assert_int_equal(g.perms_made, made + 2);
	assert_int_equal(g.perms_freed, 1);
	assert_int_equal(g.pm_uid, 1000);
	assert_int_equal(g.pm_gid, 100);
	assert_int_equal(g.pm_ngids, 0);
	/* root (no_root_squash): the mount's uid-0 UserPerm, nothing made */
	c = call_as(0, 0, 0, NULL);
	assert_int_equal(fs_cephfs_backend.be_unlink(&c, &root, "d", false), 0);
	assert_int_equal(g.perms_made, made + 2);
	assert_ptr_not_equal(g.op_perm, first);
	fs_cephfs_backend.be_release(&root);
}

/* libcephfs' errors as the operations may answer them. */
static void test_errors(void **state)
{
	struct fs_fentry root, out;
	struct fs_call c = call_as(1000, 1000, 0, NULL);
	struct stat st;

	(void)state;
	/* direct: listed kept, the every-operation ones kept, stalls
	 * -EAGAIN, the rest -EIO */
	assert_int_equal(FSC_ERR(-ENOENT, -ENOENT, -EACCES), -ENOENT);
	assert_int_equal(FSC_ERR(-EACCES, -ENOENT, -EACCES), -EACCES);
	assert_int_equal(FSC_ERR(-ENOSPC, -ENOENT), -ENOSPC);
	assert_int_equal(FSC_ERR(-EDQUOT, -ENOENT), -EDQUOT);
	assert_int_equal(FSC_ERR(-ETIMEDOUT, -ENOENT), -EAGAIN);
	assert_int_equal(FSC_ERR(-ESHUTDOWN, -ENOENT), -EAGAIN);
	assert_int_equal(FSC_ERR(-ENOTCONN, -ENOENT), -EAGAIN);
	assert_int_equal(FSC_ERR(-ETIME, -ENOENT), -EAGAIN);
	assert_int_equal(FSC_ERR(-ENOTEMPTY, -ENOENT), -EIO);
	assert_int_equal(FSC_ERR(-ERANGE, -ENOENT), -EIO);
	assert_int_equal(FSC_ERR(0, -ENOENT), 0);
	assert_int_equal(FSC_ERR(5, -ENOENT), 5);

	/* through operations */
	fs_fentry_init(&root);
	assert_int_equal(fs_root(g_exp, &root, &(struct fs_fentry *){ NULL }, &st), 0);
	fs_fentry_init(&out);
	g.op_err = -ETIMEDOUT;
	assert_int_equal(fs_cephfs_backend.be_mkdir(&c, &root, &st, "d", 0755, &out, &st), -EAGAIN);
	g.op_err = -ESHUTDOWN; /* blocklisted */
	assert_int_equal(fs_cephfs_backend.be_unlink(&c, &root, "d", false), -EAGAIN);
	g.op_err = -EEXIST;
	assert_int_equal(fs_cephfs_backend.be_mkdir(&c, &root, &st, "d", 0755, &out, &st), -EEXIST);
	g.op_err = -EXDEV; /* not one mkdir lists */
	assert_int_equal(fs_cephfs_backend.be_mkdir(&c, &root, &st, "d", 0755, &out, &st), -EIO);
	g.op_err = -ENOTEMPTY; /* rmdir lists it, mkdir does not */
	assert_int_equal(fs_cephfs_backend.be_unlink(&c, &root, "d", true), -ENOTEMPTY);
	assert_int_equal(fs_cephfs_backend.be_mkdir(&c, &root, &st, "d", 0755, &out, &st), -EIO);
	g.op_err = -EROFS;
	assert_int_equal(fs_cephfs_backend.be_unlink(&c, &root, "d", false), -EROFS);
	assert_null(out.fe_node);
	assert_int_equal(fs_cephfs_backend.be_unlink(&c, &root, ".", false), -EINVAL);
	fs_cephfs_backend.be_release(&root);
}

/*
 * COMMIT syncs the data only, asked for fdatasync or fsync alike (the
 * MDS recovers size and mtime; a full sync would wait for a cap flush);
 * commit_metadata syncs everything (syncdataonly 0: the unsafe requests
 * and the dirty caps are what it is for).
 */
static void test_commit_syncs_data_only(void **state)
{
	struct fs_fentry root;
	struct fs_call c = call_as(1000, 1000, 0, NULL);
	struct stat st;

	(void)state;
	fs_fentry_init(&root);
	assert_int_equal(fs_root(g_exp, &root, &(struct fs_fentry *){ NULL }, &st), 0);
	g.sync_dataonly = -1;
	assert_int_equal(fs_cephfs_backend.be_commit(&c, &root, false), 0);
	assert_int_equal(g.syncs, 1);
	assert_int_equal(g.sync_dataonly, 1);
	g.sync_dataonly = -1;
	assert_int_equal(fs_cephfs_backend.be_commit(&c, &root, true), 0);
	assert_int_equal(g.syncs, 2);
	assert_int_equal(g.sync_dataonly, 1);
	assert_int_equal(fs_cephfs_backend.be_commit_meta(&c, &root), 0);
	assert_int_equal(g.syncs, 3);
	assert_int_equal(g.sync_dataonly, 0);
	fs_cephfs_backend.be_release(&root);
}

/*
 * A WRITE asked to be DATA_SYNC or FILE_SYNC syncs the file's data only
 * before it answers, as COMMIT does (the MDS recovers size and mtime from
 * the objects; the kernel CephFS client's fsync does not wait for their
 * cap flush either); an UNSTABLE one does not sync.
 */
static void test_stable_write_syncs_data_only(void **state)
{
	struct fs_call c = call_as(0, 0, 0, NULL);
	struct fs_fentry root, f;
	struct stat dst, st;
	uint8_t key[FSC_KEY_LEN];
	char buf[8] = "abcdefg";
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	size_t done = 0;

	(void)state;
	fs_fentry_init(&root);
	fs_fentry_init(&f);
	fsc_key_put(ROOT_INO, FSC_NOSNAP, FSCID, key);
	assert_int_equal(fs_cephfs_backend.be_fh_decode(g_exp, 0, key, FSC_KEY_LEN, &root, &dst), 0);
	assert_int_equal(fs_cephfs_backend.be_lookup(&c, &root, &dst, "f", &f, &st), 0);
	assert_int_equal(fs_cephfs_backend.be_write(&c, &f, &iov, 1, 0, FS_UNSTABLE, &done), 0);
	assert_int_equal(done, sizeof(buf));
	assert_int_equal(g.fsyncs, 0);
	assert_int_equal(g.syncs, 0);
	g.fsync_dataonly = -1;
	assert_int_equal(fs_cephfs_backend.be_write(&c, &f, &iov, 1, 8, FS_FILE_SYNC, &done), 0);
	assert_int_equal(g.fsyncs, 1);
	assert_int_equal(g.fsync_dataonly, 1);
	g.fsync_dataonly = -1;
	assert_int_equal(fs_cephfs_backend.be_write(&c, &f, &iov, 1, 16, FS_DATA_SYNC, &done), 0);
	assert_int_equal(g.fsyncs, 2);
	assert_int_equal(g.fsync_dataonly, 1);
	assert_int_equal(g.written, 3 * sizeof(buf));
	/* a file found, not made here: never the O_DIRECT path (libcephfs
	 * may cache its data) */
	assert_int_equal(g.dopens, 0);
	assert_int_equal(g.dwritten, 0);
	fs_cephfs_backend.be_release(&f);
	fs_cephfs_backend.be_release(&root);
}

/* make_new - decode the root into @root and create "new" (the fake's
 * "f") in it into @f. */
static void make_new(struct fs_call *c, struct fs_fentry *root,
		     struct fs_fentry *f)
{
	uint8_t key[FSC_KEY_LEN];
	struct stat dst, st;
	bool created = false;

	fs_fentry_init(root);
	fs_fentry_init(f);
	fsc_key_put(ROOT_INO, FSC_NOSNAP, FSCID, key);
	assert_int_equal(fs_cephfs_backend.be_fh_decode(g_exp, 0, key, FSC_KEY_LEN, root, &dst), 0);
	assert_int_equal(fs_cephfs_backend.be_create(c, root, &dst, "new", 0644, false,
						     NULL, f, &st, &created), 0);
	assert_true(created);
}

/*
 * A file this gateway created: its DATA_SYNC and FILE_SYNC WRITEs go
 * through one O_DIRECT Fh (libcephfs writes them to the OSDs and returns
 * when they have them) with no fsync; once an UNSTABLE WRITE put its data
 * in the object cache, stable WRITEs go through the cache and are synced
 * (an O_DIRECT write would leave the cached copy stale); COMMIT syncs the
 * data; releasing the object closes the O_DIRECT Fh.
 */
static void test_stable_write_direct(void **state)
{
	struct fs_call c = call_as(0, 0, 0, NULL);
	struct fs_fentry root, f;
	char buf[8] = "abcdefg";
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	size_t done = 0;

	(void)state;
	make_new(&c, &root, &f);
	assert_int_equal(fs_cephfs_backend.be_write(&c, &f, &iov, 1, 0, FS_FILE_SYNC, &done), 0);
	assert_int_equal(done, sizeof(buf));
	assert_int_equal(g.dopens, 1);
	assert_int_equal(g.dwritten, sizeof(buf));
	assert_int_equal(g.written, 0);
	assert_int_equal(g.fsyncs, 0);
	assert_int_equal(fs_cephfs_backend.be_write(&c, &f, &iov, 1, 8, FS_DATA_SYNC, &done), 0);
	assert_int_equal(g.dopens, 1); /* the same Fh */
	assert_int_equal(g.dwritten, 2 * sizeof(buf));
	assert_int_equal(g.fsyncs, 0);
	/* UNSTABLE: into the cache, no sync */
	assert_int_equal(fs_cephfs_backend.be_write(&c, &f, &iov, 1, 16, FS_UNSTABLE, &done), 0);
	assert_int_equal(g.written, sizeof(buf));
	assert_int_equal(g.dwritten, 2 * sizeof(buf));
	assert_int_equal(g.fsyncs, 0);
	/* now cached: a stable WRITE through the cache, then synced */
	g.fsync_dataonly = -1;
	assert_int_equal(fs_cephfs_backend.be_write(&c, &f, &iov, 1, 0, FS_FILE_SYNC, &done), 0);
	assert_int_equal(g.written, 2 * sizeof(buf));
	assert_int_equal(g.dwritten, 2 * sizeof(buf));
	assert_int_equal(g.fsyncs, 1);
	assert_int_equal(g.fsync_dataonly, 1);
	/* COMMIT: the data synced */
	g.sync_dataonly = -1;
	assert_int_equal(fs_cephfs_backend.be_commit(&c, &f, false), 0);
	assert_int_equal(g.syncs, 1);
	assert_int_equal(g.sync_dataonly, 1);
	assert_int_equal(g.dcloses, 0);
	fs_cephfs_backend.be_release(&f);
	assert_int_equal(g.dcloses, 1);
	fs_cephfs_backend.be_release(&root);
}

/*
 * direct=off on an export: a file created through it is not on the direct
 * path, so its FILE_SYNC WRITE goes into the object cache and is synced
 * (ceph_ll_fsync, data only), no O_DIRECT Fh is opened; the export sharing
 * its mount without the option still writes its new files direct.  A value
 * other than on or off refuses the export.
 */
static void test_direct_off(void **state)
{
	struct rpcrdma_nfs3_export *keep = g_exp, *off;
	struct fs_call c = call_as(0, 0, 0, NULL);
	struct fs_fentry root, f;
	char buf[8] = "abcdefg";
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	size_t done = 0;

	(void)state;
	assert_int_equal(open_export("fs=cephfs:user=nfs:direct=maybe"), -EINVAL);
	assert_int_equal(open_export("fs=cephfs:user=nfs:direct=off"), 0);
	off = g_exp;
	c.c_exp = off;
	make_new(&c, &root, &f);
	g.fsync_dataonly = -1;
	assert_int_equal(fs_cephfs_backend.be_write(&c, &f, &iov, 1, 0, FS_FILE_SYNC, &done), 0);
	assert_int_equal(done, sizeof(buf));
	assert_int_equal(g.dopens, 0);
	assert_int_equal(g.dwritten, 0);
	assert_int_equal(g.written, sizeof(buf));
	assert_int_equal(g.fsyncs, 1);
	assert_int_equal(g.fsync_dataonly, 1);
	fs_cephfs_backend.be_release(&f);
	fs_cephfs_backend.be_release(&root);
	rpcrdma_nfs3_export_close(off);
	/* the other export of the same mount (direct=on by default) */
	g_exp = keep;
	c.c_exp = keep;
	assert_int_equal(open_export("fs=cephfs:user=nfs:direct=on"), 0);
	rpcrdma_nfs3_export_close(g_exp);
	g_exp = keep;
	make_new(&c, &root, &f);
	assert_int_equal(fs_cephfs_backend.be_write(&c, &f, &iov, 1, 0, FS_FILE_SYNC, &done), 0);
	assert_int_equal(g.dopens, 1);
	assert_int_equal(g.dwritten, sizeof(buf));
	assert_int_equal(g.fsyncs, 1);
	fs_cephfs_backend.be_release(&f);
	fs_cephfs_backend.be_release(&root);
}

/*
 * A READ of a created file, through another object of the same inode (a
 * LOOKUP's), takes the file off the direct path for every object of it:
 * the READ filled the object cache, which an O_DIRECT write would leave
 * stale.
 */
static void test_read_ends_direct(void **state)
{
	struct fs_call c = call_as(0, 0, 0, NULL);
	struct fs_fentry root, f, f2;
	struct stat dst, st;
	char buf[8] = "abcdefg", rbuf[8];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct iovec riov = { .iov_base = rbuf, .iov_len = sizeof(rbuf) };
	size_t done = 0;

	(void)state;
	make_new(&c, &root, &f);
	assert_int_equal(fs_cephfs_backend.be_write(&c, &f, &iov, 1, 0, FS_FILE_SYNC, &done), 0);
	assert_int_equal(g.dwritten, sizeof(buf));
	fs_fentry_init(&f2);
	assert_int_equal(fs_cephfs_backend.be_getattr(g_exp, &root, &dst), 0);
	assert_int_equal(fs_cephfs_backend.be_lookup(&c, &root, &dst, "f", &f2, &st), 0);
	assert_int_equal(fs_cephfs_backend.be_read(&c, &f2, &riov, 1, 0, false), (ssize_t)sizeof(rbuf));
	assert_int_equal(g.reads, 1);
	g.fsync_dataonly = -1;
	assert_int_equal(fs_cephfs_backend.be_write(&c, &f, &iov, 1, 0, FS_FILE_SYNC, &done), 0);
	assert_int_equal(g.dwritten, sizeof(buf));
	assert_int_equal(g.written, sizeof(buf));
	assert_int_equal(g.fsyncs, 1);
	assert_int_equal(g.fsync_dataonly, 1);
	fs_cephfs_backend.be_release(&f2);
	fs_cephfs_backend.be_release(&f);
	fs_cephfs_backend.be_release(&root);
}

struct seen {
	int n, stop_at;
	char names[8][8];
	uint64_t cookies[8], inos[8];
};

static int collect(void *arg, const char *name, uint64_t ino, uint64_t cookie)
{
	struct seen *s = arg;

	if (s->n == s->stop_at)
		return 1;
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
	s->inos[s->n] = ino;
	s->cookies[s->n++] = cookie;
	return 0;
}

/* Cookies are libcephfs' offsets after each entry, passed back to
 * ceph_seekdir() as given. */
static void test_readdir_cookies(void **state)
{
	struct fs_fentry root;
	struct fs_call c = call_as(0, 0, 0, NULL);
	struct seen s = { .stop_at = -1 };
	struct stat st;
	bool eof;

	(void)state;
	fs_fentry_init(&root);
	assert_int_equal(fs_root(g_exp, &root, &(struct fs_fentry *){ NULL }, &st), 0);
	assert_int_equal(fs_cephfs_backend.be_readdir(&c, &root, &st, 0, collect, &s, &eof), 0);
	assert_true(eof);
	assert_int_equal(g.seek, -1); /* cookie 0: from the start, no seek */
	assert_int_equal(s.n, 4);
	assert_string_equal(s.names[0], ".");
	assert_int_equal(s.cookies[0], 1);
	assert_string_equal(s.names[1], "..");
	assert_int_equal(s.cookies[1], 2);
	assert_int_equal(s.inos[1], ROOT_INO); /* the export root's ".." */
	assert_string_equal(s.names[2], "a");
	assert_int_equal(s.cookies[2], 0x2f3a000004ull);
	assert_int_equal(s.cookies[3], 0x7b11000005ull);

	/* on from "a"'s cookie: seekdir gets it unchanged, "b" follows */
	memset(&s, 0, sizeof(s));
	s.stop_at = -1;
	assert_int_equal(fs_cephfs_backend.be_readdir(&c, &root, &st, 0x2f3a000004ull,
						      collect, &s, &eof), 0);
	assert_int_equal(g.seek, 0x2f3a000004ll);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.names[0], "b");
	assert_true(eof);

	/* the callback stops: not the end */
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	assert_int_equal(fs_cephfs_backend.be_readdir(&c, &root, &st, 0, collect, &s, &eof), 0);
	assert_false(eof);
	assert_int_equal(s.n, 2);
	fs_cephfs_backend.be_release(&root);
}

/* A cluster that cannot be reached: the export is refused, the message
 * names the monitors. */
static void test_unreachable(void **state)
{
	struct rpcrdma_nfs3_export *keep = g_exp;

	(void)state;
	g.mount_err = -ETIMEDOUT;
	/* another user: a mount of its own (the first one is shared) */
	assert_int_equal(open_export("fs=cephfs:user=other"), -EIO);
	fflush(g_log);
	assert_non_null(strstr(g_logbuf, "monitors 192.0.2.10:6789,192.0.2.11:6789"));
	assert_non_null(strstr(g_logbuf, "client.other"));
	g_exp = keep;
	/* bad options: refused before any mount */
	assert_int_equal(open_export("colour=blue"), -EINVAL);
	assert_int_equal(open_export("conf=relative.conf"), -EINVAL);
	g_exp = keep;
}

/* the uuid a gateway of state directory @dir gives client.r1's mount of
 * the default file system, worked out from the layout fs_cephfs.h gives */
static void expected_uuid(char *buf, size_t len, const char *dir)
{
	static const uint8_t key[16] = "rpcrdma ceph id ";
	static const char rest[] = "r1\0\0/etc/ceph/ceph.conf\0";
	uint8_t in[512];
	size_t n = strlen(dir) + 1;
	char host[256];

	memcpy(in, dir, n);
	memcpy(in + n, rest, sizeof(rest)); /* its NUL: the empty keyring's */
	n += sizeof(rest);
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	snprintf(buf, len, "rpcrdma-%.63s-%016llx", host,
		 (unsigned long long)fs_siphash(key, in, n));
}

/* open client.r1's export (a mount of its own) and close it: a gateway's
 * start and stop; g.calls has what the mount called */
static void gateway_run(const char *dir, int want)
{
	struct rpcrdma_nfs3_export *keep = g_exp;

	g.calls[0] = '\0';
	assert_int_equal(rpcrdma_nfs3_set_instance(dir), 0);
	assert_int_equal(open_export("user=r1"), want);
	if (!want)
		rpcrdma_nfs3_export_close(g_exp);
	g_exp = keep;
}

/* A gateway's mount resets the session its previous incarnation left:
 * init, reset with its uuid, finish, that uuid set, then mount; the uuid
 * is the same across restarts, another state directory's is another. */
static void test_reclaim_reset(void **state)
{
	char want[512], uuid_a[FSC_UUID_MAX];

	(void)state;
	expected_uuid(uuid_a, sizeof(uuid_a), "/var/lib/gw-a");
	snprintf(want, sizeof(want), "init;reset=%s;finish;uuid=%s;mount;", uuid_a, uuid_a);
	gateway_run("/var/lib/gw-a", 0);
	assert_string_equal(g.calls, want);
	/* restarted: the same uuid; no previous session is no error */
	g.reclaim_err = -ENOENT;
	gateway_run("/var/lib/gw-a", 0);
	assert_string_equal(g.calls, want);
	/* another gateway (state directory): another uuid */
	g.reclaim_err = 0;
	gateway_run("/var/lib/gw-b", 0);
	assert_null(strstr(g.calls, uuid_a));
	expected_uuid(uuid_a, sizeof(uuid_a), "/var/lib/gw-b");
	assert_non_null(strstr(g.calls, uuid_a));
	/* an MDS without reclaim: mounted without a uuid, and said */
	g.reclaim_err = -EOPNOTSUPP;
	gateway_run("/var/lib/gw-a", 0);
	expected_uuid(uuid_a, sizeof(uuid_a), "/var/lib/gw-a");
	snprintf(want, sizeof(want), "init;reset=%s;finish;mount;", uuid_a);
	assert_string_equal(g.calls, want);
	fflush(g_log);
	assert_non_null(strstr(g_logbuf, "cannot reset the previous session"));
	/* no instance noted: no identity, nothing reset */
	g.reclaim_err = 0;
	gateway_run(NULL, 0);
	assert_string_equal(g.calls, "init;mount;");
	/* bad state directories */
	assert_int_equal(rpcrdma_nfs3_set_instance(""), -ENAMETOOLONG);
}

/* the end a record says, checked against the text format by hand */
static int64_t rec_end(const char *name)
{
	struct grec *r = grec_find(name);
	long long end;
	char nl;

	assert_non_null(r);
	assert_int_equal(sscanf(r->text, "rpcrdma-grace 1 %lld%c", &end, &nl), 2);
	assert_int_equal(nl, '\n');
	return end;
}

static int64_t now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

/* A gateway with grace= writes its record (its grace end plus the 10 s
 * slack) through a client mounted at the grace directory, and only then
 * resets its predecessor's session: no moment where the old locks are
 * gone and the others do not know. */
static void test_grace_announce(void **state)
{
	struct rpcrdma_nfs3_export *keep = g_exp, *exp;
	char uuid[FSC_UUID_MAX], tmp[FSC_UUID_MAX + 8], want[1024];
	int64_t t0, end;

	(void)state;
	expected_uuid(uuid, sizeof(uuid), "/var/lib/gw-a");
	assert_int_equal(rpcrdma_nfs3_set_instance("/var/lib/gw-a"), 0);
	t0 = now_sec();
	assert_int_equal(rpcrdma_nfs3_set_instance_grace(90), 0);
	g.calls[0] = '\0';
	assert_int_equal(open_export("user=r1:grace=" GRACE_DIR), 0);
	exp = g_exp;
	/* the first record of this gateway: its directory made */
	snprintf(want, sizeof(want), "mount=" GRACE_DIR ";gmkdir;record=%s;gsync;init;reset=%s;finish;uuid=%s;mount;",
		 uuid, uuid, uuid);
	assert_string_equal(g.calls, want);
	end = rec_end(uuid);
	assert_true(end >= t0 + 90 + 10 && end <= now_sec() + 90 + 10);
	assert_int_equal(strlen(grec_find(uuid)->text), 37); /* 16 + 20 digits + \n */
	rpcrdma_nfs3_export_close(exp);
	/* restarted: the record rewritten in place, nothing made in the
	 * directory (the dead predecessor's caps on it would hold that up) */
	g.calls[0] = '\0';
	assert_int_equal(open_export("user=r1:grace=" GRACE_DIR), 0);
	exp = g_exp;
	snprintf(want, sizeof(want), "mount=" GRACE_DIR ";record=%s;gsync;init;reset=%s;finish;uuid=%s;mount;",
		 uuid, uuid, uuid);
	assert_string_equal(g.calls, want);
	(void)tmp;
	/* its own record is not another gateway's grace */
	assert_int_equal(fs_cluster_grace(exp), 0);
	rpcrdma_nfs3_export_close(exp);

	/* the grace directory cannot be written: no start, nothing reset */
	g.gmount_err = -EACCES;
	g.calls[0] = '\0';
	assert_int_equal(open_export("user=r1:grace=" GRACE_DIR), -EACCES);
	assert_null(strstr(g.calls, "reset"));
	assert_null(strstr(g.calls, "init"));
	fflush(g_log);
	assert_non_null(strstr(g_logbuf, "cannot write the grace record"));
	/* ... nor a directory that is not there */
	g.gmount_err = 0;
	assert_int_equal(open_export("user=r1:grace=/nowhere"), -ENOENT);
	assert_null(strstr(g.calls, "reset"));

	/* no grace period this start (--grace 0, or a mount made after it
	 * ended): a record that has ended (no slack), written all the same
	 * (its directory exists before a session that could die reads it) */
	assert_int_equal(rpcrdma_nfs3_set_instance_grace(0), 0);
	g.calls[0] = '\0';
	t0 = now_sec();
	assert_int_equal(open_export("user=r1:grace=" GRACE_DIR), 0);
	snprintf(want, sizeof(want), "mount=" GRACE_DIR ";record=%s;gsync;init;reset=%s;finish;uuid=%s;mount;",
		 uuid, uuid, uuid);
	assert_string_equal(g.calls, want);
	end = rec_end(uuid);
	assert_true(end >= t0 && end <= now_sec());
	rpcrdma_nfs3_export_close(g_exp);
	assert_int_equal(rpcrdma_nfs3_set_instance_grace(86401), -EINVAL);
	/* no instance (a library user): nothing written; a grace directory
	 * that is not there refuses the export all the same (it would hold
	 * every lock off), said */
	assert_int_equal(rpcrdma_nfs3_set_instance(NULL), 0);
	g.calls[0] = '\0';
	assert_int_equal(open_export("user=r1:grace=/nowhere"), -ENOENT);
	assert_string_equal(g.calls, "init;mount;");
	fflush(g_log);
	assert_non_null(strstr(g_logbuf, "grace=/nowhere: No such file or directory"));
	g_exp = keep;
}

/* be_cluster_grace: another gateway's record whose end lies ahead holds
 * the cluster in grace; an ended, stray, half-written or absurd one does
 * not; a directory that cannot be read is "cannot tell". */
static void test_cluster_grace(void **state)
{
	struct rpcrdma_nfs3_export *keep = g_exp, *exp;
	char text[64];
	int reads;
	int64_t t;

	(void)state;
	assert_int_equal(fsc_grace_parse("rpcrdma-grace 1 12\n", 19, &t), 0);
	assert_int_equal(t, 12);
	assert_int_equal(fsc_grace_parse("rpcrdma-grace 1 12", 18, &t), -EBADMSG);
	assert_int_equal(fsc_grace_parse("rpcrdma-grace 2 12\n", 19, &t), -EBADMSG);
	assert_int_equal(fsc_grace_parse("rpcrdma-grace 1 \n", 17, &t), -EBADMSG);
	assert_int_equal(fsc_grace_parse("rpcrdma-grace 1 99999999999999999999\n", 37, &t),
			 -EBADMSG);

	assert_int_equal(open_export("user=r2:grace=" GRACE_DIR), 0);
	exp = g_exp;
	g_exp = keep;
	/* another export of the setup's mount cannot name another directory */
	assert_int_equal(open_export("fs=cephfs:user=nfs:grace=" GRACE_DIR), -EINVAL);
	g_exp = keep;
	/* an export without grace= never asks */
	assert_int_equal(fs_cluster_grace(keep), 0);
	assert_int_equal(g.greads, 0);

	assert_int_equal(fs_cluster_grace(exp), 0); /* empty */
	t = now_sec();
	snprintf(text, sizeof(text), "rpcrdma-grace 1 %lld\n", (long long)(t + 60));
	grec_put("rpcrdma-hostb-0123456789abcdef", text);
	assert_int_equal(fs_cluster_grace(exp), 1);
	reads = g.greads;
	assert_int_equal(fs_cluster_grace(exp), 1);
	assert_int_equal(g.greads, reads + 1); /* read every time */
	/* B's grace ended */
	snprintf(text, sizeof(text), "rpcrdma-grace 1 %lld\n", (long long)(t - 1));
	grec_put("rpcrdma-hostb-0123456789abcdef", text);
	assert_int_equal(fs_cluster_grace(exp), 0);
	/* a stray file, and a record being written (dot name) */
	grec_put("README", "not a record\n");
	snprintf(text, sizeof(text), "rpcrdma-grace 1 %lld\n", (long long)(t + 60));
	grec_put(".rpcrdma-hostc-0000000000000001.tmp", text);
	assert_int_equal(fs_cluster_grace(exp), 0);
	/* more than a day (and the slack) ahead: a record of no grace period */
	snprintf(text, sizeof(text), "rpcrdma-grace 1 %lld\n", (long long)(t + 86400 + 100));
	grec_put("rpcrdma-hostc-0000000000000001", text);
	assert_int_equal(fs_cluster_grace(exp), 0);
	/* two gateways: the one still in grace counts */
	snprintf(text, sizeof(text), "rpcrdma-grace 1 %lld\n", (long long)(t + 30));
	grec_put("rpcrdma-hostc-0000000000000001", text);
	assert_int_equal(fs_cluster_grace(exp), 1);
	/* the cluster does not answer: cannot tell */
	g.gwalk_err = -ETIMEDOUT;
	assert_int_equal(fs_cluster_grace(exp), -EAGAIN);
	g.gwalk_err = 0;
	assert_int_equal(fs_cluster_grace(exp), 1);
	rpcrdma_nfs3_export_close(exp);
	g_exp = keep;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_key_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_asks_no_attrs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_userperm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_syncs_data_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stable_write_syncs_data_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stable_write_direct, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_ends_direct, setup, teardown),
		cmocka_unit_test_setup_teardown(test_direct_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readdir_cookies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreachable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reclaim_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grace_announce, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cluster_grace, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
