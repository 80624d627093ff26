/* SPDX-License-Identifier: MIT */
/*
 * test_nfs4_harness.h - an NFSv4.1 server over an NFSv3 server exporting
 * a fresh directory to 127.0.0.1 with the given exports(5) options, and
 * COMPOUNDs built and results decoded by hand (RFC 8881 layouts),
 * independently of the server's encoders; a session set up with
 * EXCHANGE_ID and CREATE_SESSION.  Shared by the test_nfs4*.c programs.
 *
 * Backends.  A case runs once per backend of the file-serving layer: its
 * cmocka initial state is &t4_posix or &t4_memory (T4_BOTH(), T4_CASE();
 * the case's name says which).  posix exports a fresh directory under /tmp
 * and needs root (kernel file handles: CAP_DAC_READ_SEARCH): not root, its
 * cases are skipped (t4_env()), never passed.  memory exports in-memory
 * trees (backend=memory in the exports line), root or not; the harness
 * makes and inspects their files through the layer's own operations
 * (fs.h) as root, where the posix cases use system calls on the
 * directory (t4_mkfile() and the other t4_ helpers do either).
 */
#ifndef TEST_NFS4_HARNESS_H
#define TEST_NFS4_HARNESS_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "test_nfs3_harness.h"

#include <rpcrdma/nfs4.h>

#include "nfs4/nfs4_cb.h"
#include "nfs4/nfs4_internal.h"
#include "test_root.h"

/* The backend a case runs on (its cmocka initial state). */
struct t4_backend {
	const char *tb_name;
	bool tb_mem;
};

static const struct t4_backend t4_posix = { "posix", false };
static const struct t4_backend t4_memory = { "memory", true };

/* One case on backend @be (posix or memory): its name ends " [@be]", as
 * the NFSv3 tests' do. */
#define T4_CASE(f, su, td, be) \
	{ #f " [" #be "]", f, su, td, (void *)&t4_##be }
/* The case on both backends. */
#define T4_BOTH(f, su, td) T4_CASE(f, su, td, posix), T4_CASE(f, su, td, memory)


struct env {
	char dir[64];        /* posix: the directory; memory: the exports' prefix */
	bool mem;            /* the memory backend */
	struct rpcrdma_nfs3_server *srv3;
	struct rpcrdma_nfs4_server *srv4;
	struct t_call c;
	uint64_t clientid;
	uint8_t sid[16];
	uint32_t seq; /* slot 0's next sequence id */
	struct stat fst;
	FILE *log;
	uint32_t uid, gid; /* AUTH_SYS of the COMPOUNDs c_begin() builds */
	uint32_t peer4;    /* their IPv4 source (host order); 0: 127.0.0.1 */
};

/* The back channel's transport: none here (the unit harness's calls have
 * no connection); test_nfs4_cb.c drives the table with one. */
static inline int no_bc_get(const struct rpcrdma_svc_req *req, struct rpcrdma_svc_bc **out)
{
	(void)req;
	(void)out;
	return -ENOTCONN;
}

static inline int no_bc_call(struct rpcrdma_svc_bc *bc,
			     const struct rpcrdma_svc_bc_args *a, uint32_t *xid)
{
	(void)bc;
	(void)a;
	(void)xid;
	return -ENOTCONN;
}

static inline void no_bc_put(struct rpcrdma_svc_bc *bc)
{
	(void)bc;
}

static const struct nfs4_cb_ops no_bc = { no_bc_get, no_bc_call, no_bc_put, NULL };

/* ---- the harness's own file operations (as root), on either backend ---- */

/*
 * A call of the harness's own on one export: root, not squashed (the
 * memory backend takes the caller from c_cred; the posix one is not
 * reached this way).  Holds the table in force while it lasts.
 */
struct t4_fs {
	struct fs_snap *f_sn;
	struct fs_call f_c;
};

/*
 * t4_fs_begin - a call on the export of e->dir/@rel (*@rest: @rel within
 * it): the export of its first component, else that of e->dir itself
 * ("./" first: always the latter).
 */
static inline void t4_fs_begin(struct env *e, const char *rel, struct t4_fs *f,
			       const char **rest)
{
	bool only_top = !strncmp(rel, "./", 2);
	size_t dl = strlen(e->dir), cl;
	unsigned xi, top = UINT32_MAX, sub = UINT32_MAX;

	if (only_top)
		rel += 2;
	cl = only_top ? 0 : strcspn(rel, "/");
	f->f_sn = fs_snap_get(e->srv3);
	for (xi = 0; xi < f->f_sn->sn_xt->xt_n; xi++) {
		const char *p = f->f_sn->sn_exp[xi]->ex_path;

		if (!strcmp(p, e->dir))
			top = xi;
		else if (cl && !strncmp(p, e->dir, dl) && p[dl] == '/' &&
			 strlen(p + dl + 1) == cl && !strncmp(p + dl + 1, rel, cl))
			sub = xi;
	}
	assert_true(top != UINT32_MAX || sub != UINT32_MAX);
	xi = sub != UINT32_MAX ? sub : top;
	*rest = sub != UINT32_MAX ? rel + cl + (rel[cl] == '/') : rel;
	memset(&f->f_c, 0, sizeof(f->f_c));
	f->f_c.c_exp = f->f_sn->sn_exp[xi];
	f->f_c.c_modifies = true;
	assert_int_equal(fs_become_caller(&f->f_c), 0);
}

static inline void t4_fs_end(struct t4_fs *f)
{
	fs_snap_put(f->f_sn);
}

/*
 * t4_fs_walk - the object of @path (components; "" the export's root)
 * into @local (*@out), never following a symlink; with @parent, its
 * directory instead and *@name its last component.  Return: 0 or the
 * layer's -errno.
 */
static inline int t4_fs_walk(struct t4_fs *f, const char *path, bool parent,
			     struct fs_fentry *local, struct fs_fentry **out,
			     struct stat *st, const char **name)
{
	struct fs_fentry a, b, *cur = NULL, *next = NULL;
	struct stat dst;
	char comp[256];
	int err;

	err = fs_root(f->f_c.c_exp, &a, &cur, st);
	while (!err && *path) {
		size_t len = strcspn(path, "/");

		if (parent && !path[len]) {
			*name = path;
			break;
		}
		assert_true(len < sizeof(comp));
		memcpy(comp, path, len);
		comp[len] = 0;
		dst = *st;
		err = fs_lookup(&f->f_c, cur, &dst, comp, cur == &a ? &b : &a, &next, st);
		fs_fcache_put(cur);
		cur = next;
		path += len + (path[len] == '/');
	}
	if (err) {
		fs_fcache_put(cur);
		return err;
	}
	/* the caller's storage: the entry is moved there */
	*local = *cur;
	*out = local;
	return 0;
}

/* t4_stat - lstat() of e->dir/@rel ("": e->dir), either backend: 0 or -errno */
static inline int t4_stat(struct env *e, const char *rel, struct stat *st)
{
	char p[PATH_MAX];
	struct fs_fentry l, *fe;
	struct t4_fs f;
	const char *rest;
	int err;

	if (!e->mem) {
		snprintf(p, sizeof(p), "%s%s%s", e->dir, *rel ? "/" : "", rel);
		return lstat(p, st) < 0 ? -errno : 0;
	}
	t4_fs_begin(e, rel, &f, &rest);
	err = t4_fs_walk(&f, rest, false, &l, &fe, st, NULL);
	if (!err)
		fs_fcache_put(fe);
	t4_fs_end(&f);
	return err;
}

/* t4_exists - is there a name e->dir/@rel? */
static inline bool t4_exists(struct env *e, const char *rel)
{
	struct stat st;

	return t4_stat(e, rel, &st) == 0;
}

/* What t4_make() makes. */
enum t4_kind { T4_FILE, T4_DIR, T4_FIFO, T4_SYMLINK };

/*
 * t4_make - e->dir/@rel made as root with mode @mode (07777, as given: no
 * umask): a file holding @data (@len bytes), a directory, a FIFO, or a
 * symlink to @data; then owned by @uid:@gid unless @uid is -1.  Asserts
 * it worked.
 */
static inline void t4_make(struct env *e, const char *rel, enum t4_kind kind,
			   mode_t mode, const char *data, size_t len,
			   int64_t uid, int64_t gid)
{
	char p[PATH_MAX];
	struct fs_fentry dl, ol, *dir, *obj = NULL;
	struct stat dst, st;
	struct fs_sattr sa;
	struct t4_fs f;
	const char *rest, *name = NULL;
	bool created;
	int fd = -1;

	if (!e->mem) {
		snprintf(p, sizeof(p), "%s/%s", e->dir, rel);
		switch (kind) {
		case T4_FILE:
			fd = open(p, O_CREAT | O_EXCL | O_WRONLY, mode);
			assert_true(fd >= 0);
			assert_int_equal(write(fd, data, len), (ssize_t)len);
			close(fd);
			break;
		case T4_DIR:
			assert_int_equal(mkdir(p, mode), 0);
			break;
		case T4_FIFO:
			assert_int_equal(mkfifo(p, mode), 0);
			break;
		default:
			assert_int_equal(symlink(data, p), 0);
			break;
		}
		if (kind != T4_SYMLINK)
			assert_int_equal(chmod(p, mode), 0); /* past the umask */
		if (uid >= 0)
			assert_int_equal(lchown(p, (uid_t)uid, (gid_t)gid), 0);
		return;
	}
	t4_fs_begin(e, rel, &f, &rest);
	assert_int_equal(t4_fs_walk(&f, rest, true, &dl, &dir, &dst, &name), 0);
	switch (kind) {
	case T4_FILE:
		assert_int_equal(fs_create(&f.f_c, dir, &dst, name, mode, true, NULL, &ol,
					   &obj, &st, &created), 0);
		if (len) {
			struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
			size_t done = 0;

			assert_int_equal(fs_open(&f.f_c, obj, &st, O_WRONLY), 0);
			assert_int_equal(fs_write(&f.f_c, obj, &iov, 1, 0, FS_UNSTABLE, &done), 0);
			assert_int_equal(done, len);
		}
		break;
	case T4_DIR:
		assert_int_equal(fs_mkdir(&f.f_c, dir, &dst, name, mode, &ol, &obj, &st), 0);
		break;
	case T4_FIFO:
		assert_int_equal(fs_mknod(&f.f_c, dir, &dst, name, S_IFIFO | mode, 0, &ol,
					  &obj, &st), 0);
		break;
	default:
		assert_int_equal(fs_symlink(&f.f_c, dir, &dst, name, data, &ol, &obj, &st), 0);
		break;
	}
	if (uid >= 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_set_uid = sa.sa_set_gid = true;
		sa.sa_uid = (uint32_t)uid;
		sa.sa_gid = (uint32_t)gid;
		assert_int_equal(fs_getattr(&f.f_c, obj, &st), 0);
		assert_int_equal(fs_setattr(&f.f_c, obj, &st, &sa, false), 0);
	}
	fs_fcache_put(obj);
	fs_fcache_put(dir);
	t4_fs_end(&f);
}

/* t4_mkfile - a file e->dir/@rel holding @data (a string), mode @mode */
static inline void t4_mkfile(struct env *e, const char *rel, mode_t mode, const char *data)
{
	t4_make(e, rel, T4_FILE, mode, data, strlen(data), -1, -1);
}

/* t4_mkdir - a directory e->dir/@rel, mode @mode */
static inline void t4_mkdir(struct env *e, const char *rel, mode_t mode)
{
	t4_make(e, rel, T4_DIR, mode, NULL, 0, -1, -1);
}

/*
 * t4_setattr - chmod (@mode, unless -1) and chown (@uid:@gid, unless @uid
 * is -1) of e->dir/@rel ("": e->dir) as root.  Asserts it worked.
 */
static inline void t4_setattr(struct env *e, const char *rel, int64_t mode,
			      int64_t uid, int64_t gid)
{
	char p[PATH_MAX];
	struct fs_fentry l, *fe;
	struct fs_sattr sa;
	struct stat st;
	struct t4_fs f;
	const char *rest;

	if (!e->mem) {
		snprintf(p, sizeof(p), "%s%s%s", e->dir, *rel ? "/" : "", rel);
		if (uid >= 0)
			assert_int_equal(lchown(p, (uid_t)uid, (gid_t)gid), 0);
		if (mode >= 0)
			assert_int_equal(chmod(p, (mode_t)mode), 0);
		return;
	}
	t4_fs_begin(e, rel, &f, &rest);
	assert_int_equal(t4_fs_walk(&f, rest, false, &l, &fe, &st, NULL), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_set_uid = sa.sa_set_gid = uid >= 0;
	sa.sa_uid = (uint32_t)uid;
	sa.sa_gid = (uint32_t)gid;
	sa.sa_set_mode = mode >= 0;
	sa.sa_mode = (uint32_t)mode;
	assert_int_equal(fs_setattr(&f.f_c, fe, &st, &sa, false), 0);
	fs_fcache_put(fe);
	t4_fs_end(&f);
}

/* t4_link - a hard link e->dir/@to of e->dir/@from (one export), as root */
static inline void t4_link(struct env *e, const char *from, const char *to)
{
	char p[PATH_MAX], q[PATH_MAX];
	struct fs_fentry ol, dl, *obj, *dir;
	struct stat st, dst;
	struct t4_fs f;
	const char *rest, *name = NULL;

	if (!e->mem) {
		snprintf(p, sizeof(p), "%s/%s", e->dir, from);
		snprintf(q, sizeof(q), "%s/%s", e->dir, to);
		assert_int_equal(link(p, q), 0);
		return;
	}
	t4_fs_begin(e, from, &f, &rest);
	assert_int_equal(t4_fs_walk(&f, rest, false, &ol, &obj, &st, NULL), 0);
	t4_fs_end(&f);
	t4_fs_begin(e, to, &f, &rest);
	assert_int_equal(t4_fs_walk(&f, rest, true, &dl, &dir, &dst, &name), 0);
	assert_int_equal(fs_link(&f.f_c, obj, dir, name), 0);
	fs_fcache_put(dir);
	fs_fcache_put(obj);
	t4_fs_end(&f);
}

/*
 * Another locker of a file than the NFSv4.1 server's lock owners: on
 * posix a local process's open file description (OFD locks, which the
 * kernel makes conflict with the server's); on memory a description of
 * the layer's lock table of its own (as NLM's lock owners have), which
 * conflicts with the server's the same way.
 */
struct t4_locker {
	int lk_fd;
	struct fs_lockd lk_ld;
};

static inline void t4_locker_open(struct env *e, const char *rel, struct t4_locker *lk)
{
	char p[PATH_MAX];
	struct fs_fentry l, *fe;
	struct stat st;
	struct t4_fs f;
	const char *rest;
	int acc;

	lk->lk_fd = -1;
	memset(&lk->lk_ld, 0, sizeof(lk->lk_ld));
	lk->lk_ld.ld_fd = -1;
	if (!e->mem) {
		snprintf(p, sizeof(p), "%s/%s", e->dir, rel);
		lk->lk_fd = open(p, O_RDWR);
		assert_true(lk->lk_fd >= 0);
		return;
	}
	t4_fs_begin(e, rel, &f, &rest);
	assert_int_equal(t4_fs_walk(&f, rest, false, &l, &fe, &st, NULL), 0);
	assert_int_equal(fs_lock_open(&f.f_c, fe, &lk->lk_ld, &acc), 0);
	fs_fcache_put(fe);
	t4_fs_end(&f);
}

/*
 * t4_locker_lock - set (@test false; @type F_RDLCK, F_WRLCK, F_UNLCK) or
 * test (F_GETLK) @start, @len (0: to the end).  Return: 0 (set; or free),
 * -EAGAIN (a conflict: its type in *@cf_type when not NULL), or -errno.
 */
static inline int t4_locker_lock(struct t4_locker *lk, int type, uint64_t start,
				 uint64_t len, bool test, int *cf_type)
{
	struct flock fl = { .l_type = (short)type, .l_whence = SEEK_SET,
			    .l_start = (off_t)start, .l_len = (off_t)len };
	struct fs_lock_conflict cf;
	int err;

	if (lk->lk_fd >= 0) {
		if (fcntl(lk->lk_fd, test ? F_OFD_GETLK : F_OFD_SETLK, &fl) < 0)
			return errno == EACCES ? -EAGAIN : -errno;
		if (!test || fl.l_type == F_UNLCK)
			return 0;
		if (cf_type)
			*cf_type = fl.l_type;
		return -EAGAIN;
	}
	err = fs_lock(&lk->lk_ld, type, start, len, test, &cf);
	if (err == -EAGAIN && cf_type)
		*cf_type = cf.cf_type;
	return err;
}

static inline void t4_locker_close(struct t4_locker *lk)
{
	if (lk->lk_fd >= 0)
		close(lk->lk_fd);
	lk->lk_fd = -1;
	fs_lock_close(&lk->lk_ld);
}

/* t4_be_opt - what an exports line's options of e's backend end with
 * (",backend=memory", or nothing for posix, the default) */
static inline const char *t4_be_opt(const struct env *e)
{
	return e->mem ? ",backend=memory" : "";
}

/* t4_owned - are owners set as asked (root on posix; always on memory)? */
static inline bool t4_owned(const struct env *e)
{
	return e->mem || geteuid() == 0;
}

/*
 * t4_env - the case's environment; a posix case when not root (setup left
 * no environment): skipped.
 */
static inline struct env *t4_env(void **state)
{
	if (!*state)
		skip();
	return *state;
}

/*
 * t4_setup_exports - for the case's backend (*@state: &t4_posix, the
 * default when NULL, or &t4_memory): servers of the exports @lines (@n of
 * them) for 127.0.0.1, each "SUB CLIENTS(OPTS)" exporting e->dir/SUB
 * (mode 0777), or e->dir itself (mode 0777) when SUB is "."; e->dir holds
 * "f": "12345", mode 0640, owner 1234:5678 (on posix only as root: see
 * t4_owned()).  posix: e->dir is a fresh directory under /tmp; memory:
 * each export its own tree (backend=memory added to every entry), e->dir
 * only their paths' prefix, and a directory SUB is made in e->dir's
 * export too when "." is exported, as on posix.  A posix case when not
 * root: *@state NULL (t4_env() skips it), 0.  Return: 0, or -1.
 */
static inline int t4_setup_exports(void **state, const char *const *lines,
				   unsigned n)
{
	const struct t4_backend *be = *state ? *state : &t4_posix;
	struct rpcrdma_nfs3_config cfg = { .nc_fcache_idle_ms = RPCRDMA_NFS3_FCACHE_IDLE_NEVER };
	struct rpcrdma_nfs3_exports *xt = NULL;
	char text[4096], err[256], path[128];
	static unsigned mem_seq;
	bool top = false;
	size_t at = 0;
	struct env *e;
	int fd;

	*state = NULL;
	if (!be->tb_mem && !t_root())
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -1;
	e->mem = be->tb_mem;
	if (e->mem) {
		snprintf(e->dir, sizeof(e->dir), "/mem/nfs4t.%d.%u", (int)getpid(), mem_seq++);
	} else {
		strcpy(e->dir, "/tmp/nfs4t.XXXXXX");
		if (!mkdtemp(e->dir))
			return -1;
		chmod(e->dir, 0777);
		snprintf(path, sizeof(path), "%s/f", e->dir);
		fd = open(path, O_CREAT | O_WRONLY, 0640);
		if (fd < 0 || write(fd, "12345", 5) != 5)
			return -1;
		if (geteuid() == 0 && fchown(fd, 1234, 5678))
			return -1;
		fchmod(fd, 0640);
		close(fd);
		stat(path, &e->fst);
	}
	for (unsigned i = 0; i < n; i++) {
		size_t sub = strcspn(lines[i], " ");
		const char *p;

		if (sub == 1 && lines[i][0] == '.') {
			top = true;
			at += (size_t)snprintf(text + at, sizeof(text) - at, "%s", e->dir);
		} else {
			if (!e->mem) {
				snprintf(path, sizeof(path), "%s/%.*s", e->dir, (int)sub, lines[i]);
				if (mkdir(path, 0777) || chmod(path, 0777))
					return -1;
			}
			at += (size_t)snprintf(text + at, sizeof(text) - at, "%s/%.*s",
					       e->dir, (int)sub, lines[i]);
		}
		/* the clients, each with backend=memory among its options */
		for (p = lines[i] + sub; *p && at < sizeof(text);) {
			size_t sp = strspn(p, " "), cl = strcspn(p + sp, " ");
			const char *cli = p + sp;

			if (!cl)
				break;
			if (!e->mem)
				at += (size_t)snprintf(text + at, sizeof(text) - at, " %.*s",
						       (int)cl, cli);
			else if (cli[cl - 1] == ')')
				at += (size_t)snprintf(text + at, sizeof(text) - at,
						       " %.*s,backend=memory)", (int)cl - 1, cli);
			else
				at += (size_t)snprintf(text + at, sizeof(text) - at,
						       " %.*s(backend=memory)", (int)cl, cli);
			p = cli + cl;
		}
		at += (size_t)snprintf(text + at, sizeof(text) - at, "\n");
		if (at >= sizeof(text))
			return -1;
	}
	if (rpcrdma_nfs3_exports_parse("test", text, &xt, err, sizeof(err)))
		return -1;
	for (unsigned i = 0; i < sizeof(cfg.nc_key); i++)
		cfg.nc_key[i] = (uint8_t)(i * 7 + 1);
	cfg.nc_max_payload = 1u << 20;
	if (rpcrdma_nfs3_server_create(&cfg, xt, &e->srv3, NULL, 0))
		return -1;
	rpcrdma_nfs3_exports_free(xt);
	if (rpcrdma_nfs4_server_create(e->srv3, NULL, &e->srv4))
		return -1;
	nfs4_cb_table_destroy(e->srv4->s4_cb);
	if (nfs4_cb_table_create(&no_bc, &e->srv4->s4_sizes, &e->srv4->s4_cb))
		return -1;
	nfs4_cb_set_live(e->srv4->s4_cb, nfs4_state_session_live, e->srv4->s4_state);
	if (e->mem) {
		/* what the posix directories hold: roots of mode 0777 (a
		 * memory root is 01777), "f", the subdirectories */
		for (unsigned i = 0; i < n; i++) {
			size_t sub = strcspn(lines[i], " ");

			snprintf(path, sizeof(path), "%.*s", (int)sub, lines[i]);
			t4_setattr(e, path, 0777, -1, -1); /* "." is e->dir's root */
			if (top && strcmp(path, ".")) {
				snprintf(path, sizeof(path), "./%.*s", (int)sub, lines[i]);
				t4_mkdir(e, path, 0777);
			}
		}
		if (top) {
			t4_make(e, "f", T4_FILE, 0640, "12345", 5, 1234, 5678);
			if (t4_stat(e, "f", &e->fst))
				return -1;
		}
	}
	*state = e;
	return 0;
}

/* t4_setup - t4_setup_exports() of e->dir itself with options @opts. */
static inline int t4_setup(void **state, const char *opts)
{
	char line[256];
	const char *lines[1] = { line };

	snprintf(line, sizeof(line), ". 127.0.0.1(%s)", opts);
	return t4_setup_exports(state, lines, 1);
}

static inline int t4_teardown(void **state)
{
	struct env *e = *state;
	char cmd[128];

	if (!e)
		return 0; /* a posix case skipped */
	t_free(&e->c);
	rpcrdma_nfs4_server_destroy(e->srv4);
	rpcrdma_nfs3_server_destroy(e->srv3);
	if (!e->mem) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
		assert_int_equal(system(cmd), 0);
	}
	free(e);
	return 0;
}

/* ---- building COMPOUNDs ---- */

static inline void c_begin(struct env *e, uint32_t minor, uint32_t nops)
{
	struct t_call *c = &e->c;
	struct sockaddr_in *sin = (struct sockaddr_in *)&c->req.rq_peer;
	uint8_t *res = c->res;

	t_begin(c, 1, e->uid, e->gid);
	(void)res;
	c->req.rq_msg.rm_vers = 4;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(e->peer4 ? e->peer4 : INADDR_LOOPBACK);
	t_str(c, "tag!");
	t_u32(c, minor);
	t_u32(c, nops);
}

static inline void c_fixed(struct t_call *c, const uint8_t *p, size_t n)
{
	assert_true(c->alen + n <= sizeof(c->args));
	memcpy(c->args + c->alen, p, n);
	c->alen += n;
}

static inline void c_sequence(struct env *e, uint32_t seq, uint32_t slot)
{
	t_u32(&e->c, OP_SEQUENCE);
	c_fixed(&e->c, e->sid, 16);
	t_u32(&e->c, seq);
	t_u32(&e->c, slot);
	t_u32(&e->c, slot);
	t_u32(&e->c, 0);
}

static inline int c_run(struct env *e)
{
	struct t_call *c = &e->c;

	memset(c->res, 0xee, T_RES_BYTES);
	rpcrdma_xdr_init(&c->req.rq_args, c->args, c->alen);
	rpcrdma_xdr_init(&c->req.rq_res, c->res, T_RES_BYTES);
	c->ret = rpcrdma_nfs4_server_dispatch(&c->req, e->srv4);
	rpcrdma_nfs3_thread_release();
	c->rlen = c->req.rq_res.xs_pos;
	c->rpos = 0;
	return c->ret;
}

/* r_hdr - COMPOUND4res up to the array: its status; *@n the result count. */
static inline uint32_t r_hdr(struct t_call *c, uint32_t *n)
{
	uint32_t status = r_u32(c), len;
	const uint8_t *tag = r_opaque(c, &len);

	assert_int_equal(len, 4);
	assert_memory_equal(tag, "tag!", 4);
	*n = r_u32(c);
	return status;
}

/* r_op - one result's opnum (checked) and status. */
static inline uint32_t r_op(struct t_call *c, uint32_t op)
{
	assert_int_equal(r_u32(c), op);
	return r_u32(c);
}

static inline void r_skip(struct t_call *c, size_t n)
{
	assert_true(c->rpos + n <= c->rlen);
	c->rpos += n;
}

/* ---- session set-up ---- */

static inline void do_exchange_id(struct env *e, const char *owner,
				  uint64_t *clientid, uint32_t *seq,
				  uint32_t *flags)
{
	struct t_call *c = &e->c;
	uint32_t n, len;

	c_begin(e, 1, 1);
	t_u32(c, OP_EXCHANGE_ID);
	t_u32(c, 0x11111111);
	t_u32(c, 0x22222222);   /* co_verifier */
	t_str(c, owner);
	t_u32(c, 0);            /* eia_flags */
	t_u32(c, SP4_NONE);
	t_u32(c, 0);            /* no implementation id */
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(c, &n), NFS4_OK);
	assert_int_equal(n, 1);
	assert_int_equal(r_op(c, OP_EXCHANGE_ID), NFS4_OK);
	*clientid = r_u64(c);
	*seq = r_u32(c);
	*flags = r_u32(c);
	assert_int_equal(r_u32(c), SP4_NONE);
	(void)r_u64(c);
	(void)r_opaque(c, &len);
	(void)r_opaque(c, &len);
	assert_int_equal(r_u32(c), 1);
}

/* t4_exid - EXCHANGE_ID of @owner with verifier @v (two words;
 * the harness' usual one, 0x11111111 0x22222222, is t4_exid2()'s) from e->peer4:
 * its status; on NFS4_OK the client id and sequence in *@id and *@seq. */
static inline uint32_t t4_exid_verf(struct env *e, const char *owner, uint32_t v0, uint32_t v1,
				    uint64_t *id, uint32_t *seq)
{
	struct t_call *c = &e->c;
	uint32_t n, status;

	c_begin(e, 1, 1);
	t_u32(c, OP_EXCHANGE_ID);
	t_u32(c, v0);
	t_u32(c, v1);
	t_str(c, owner);
	t_u32(c, 0);            /* eia_flags */
	t_u32(c, SP4_NONE);
	t_u32(c, 0);            /* no implementation id */
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	(void)r_hdr(c, &n);
	status = r_op(c, OP_EXCHANGE_ID);
	if (status == NFS4_OK) {
		*id = r_u64(c);
		*seq = r_u32(c);
	}
	return status;
}

/* t4_exid2 - t4_exid_verf() with the harness' usual verifier. */
static inline uint32_t t4_exid2(struct env *e, const char *owner, uint64_t *id, uint32_t *seq)
{
	return t4_exid_verf(e, owner, 0x11111111, 0x22222222, id, seq);
}

static inline void put_chan(struct t_call *c, uint32_t maxreq, uint32_t maxops, uint32_t slots)
{
	t_u32(c, 0);
	t_u32(c, maxreq);
	t_u32(c, maxreq);
	t_u32(c, 0);
	t_u32(c, maxops);
	t_u32(c, slots);
	t_u32(c, 0);
}

static inline void c_create_session(struct env *e, uint64_t clientid, uint32_t seq)
{
	c_begin(e, 1, 1);
	t_u32(&e->c, OP_CREATE_SESSION);
	t_u64(&e->c, clientid);
	t_u32(&e->c, seq);
	t_u32(&e->c, CREATE_SESSION4_FLAG_CONN_BACK_CHAN | CREATE_SESSION4_FLAG_PERSIST);
	put_chan(&e->c, 1049620, 16, 64);
	put_chan(&e->c, 4096, 2, 1);
	t_u32(&e->c, 0x40000000);
	t_u32(&e->c, 1);
	t_u32(&e->c, NFS4_AUTH_NONE);
}

static inline void session(struct env *e)
{
	uint32_t seq, flags, n;
	const uint8_t *sid;

	do_exchange_id(e, "unit-test-client", &e->clientid, &seq, &flags);
	assert_int_equal(flags & EXCHGID4_FLAG_CONFIRMED_R, 0);
	c_create_session(e, e->clientid, seq);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_CREATE_SESSION), NFS4_OK);
	sid = e->c.res + e->c.rpos;
	memcpy(e->sid, sid, 16);
	r_skip(&e->c, 16);
	assert_int_equal(r_u32(&e->c), seq);
	/* neither PERSIST nor the back channel is granted */
	assert_int_equal(r_u32(&e->c), 0);
	assert_int_equal(r_u32(&e->c), 0);          /* headerpadsize */
	assert_int_equal(r_u32(&e->c), 1049620);    /* maxrequestsize: as asked */
	assert_int_equal(r_u32(&e->c), 1049620);
	assert_int_equal(r_u32(&e->c), 0);          /* cached: min(asked 0, ...) */
	assert_int_equal(r_u32(&e->c), 16);         /* maxoperations: as asked */
	assert_int_equal(r_u32(&e->c), NFS4_MAX_SLOTS); /* 64 asked */
	assert_int_equal(r_u32(&e->c), 0);          /* no rdma_ird */
	e->seq = 1;
}

/* c_lookup_path - PUTROOTFH, then a LOOKUP per component of @path. */
static inline uint32_t c_lookup_ops(struct env *e, const char *path)
{
	char buf[PATH_MAX], *save = NULL, *tok;
	uint32_t n = 1;

	t_u32(&e->c, OP_PUTROOTFH);
	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		t_u32(&e->c, OP_LOOKUP);
		t_str(&e->c, tok);
		n++;
	}
	return n;
}

static inline uint32_t path_ops(const char *path)
{
	uint32_t n = 1;

	for (const char *p = path; *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			n++;
	return n;
}

/* t4_fh_of - the handle of @rel ("" the export root) below the export, by
 * LOOKUPs from the root and GETFH */
static inline void t4_fh_of(struct env *e, const char *rel, uint8_t *fh, uint32_t *len)
{
	char path[PATH_MAX];
	uint32_t n, nops;
	const uint8_t *p;

	snprintf(path, sizeof(path), "%s%s%s", e->dir, *rel ? "/" : "", rel);
	nops = path_ops(path);
	c_begin(e, 1, 1 + nops + 1);
	c_sequence(e, e->seq++, 0);
	c_lookup_ops(e, path);
	t_u32(&e->c, OP_GETFH);
	assert_int_equal(c_run(e), RPCRDMA_SVC_SUCCESS);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_SEQUENCE), NFS4_OK);
	r_skip(&e->c, 36);
	for (uint32_t i = 0; i < nops; i++)
		assert_int_equal(r_op(&e->c, i ? OP_LOOKUP : OP_PUTROOTFH), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_GETFH), NFS4_OK);
	p = r_opaque(&e->c, len);
	memcpy(fh, p, *len);
}


#endif /* TEST_NFS4_HARNESS_H */
