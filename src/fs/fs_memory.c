// SPDX-License-Identifier: MIT
/*
 * fs_memory.c - the memory backend (fs_backend.h): an in-memory tree per
 * export, for tests and scratch space, needing no privilege.  This file
 * holds the export (its limits and options), the nodes and their id hash,
 * handles, attributes, statfs, commit, and the operations table; the
 * other operations live in fs_memory_perm.c, fs_memory_data.c,
 * fs_memory_dir.c and fs_memory_lock.c (fs_memory.h lists them).
 *
 * The backend never switches the thread's identity: it decides every
 * permission itself from the call's credentials (c_cred), as the POSIX
 * mode bits and the kernel's rules for root say.  Nothing waits for a
 * disk (FS_BE_NEVER_WAITS): every operation may run on the transport
 * thread.  A handle's key is the node's id and the export's generation
 * (random at be_export_open()): a handle of a node that is gone, or of
 * an earlier run of the export, is STALE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "fs_memory.h"

struct timespec fsm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts;
}

int fsm_charge_locked(struct fsm_export *mx, uint64_t bytes)
{
	if (bytes > mx->mx_bytes_max || mx->mx_bytes > mx->mx_bytes_max - bytes)
		return -ENOSPC;
	mx->mx_bytes += bytes;
	return 0;
}

void fsm_uncharge_locked(struct fsm_export *mx, uint64_t bytes)
{
	mx->mx_bytes -= bytes;
}

/* ---- the id hash ---- */

static uint32_t id_bucket(const struct fsm_export *mx, uint64_t id)
{
	/* ids are sequential: a multiplicative hash spreads them */
	return (uint32_t)((id * 0x9e3779b97f4a7c15ull) >> 32) & (mx->mx_nids - 1);
}

/* Double the id hash when it holds more nodes than buckets (best effort:
 * longer chains when memory is short). */
static void ids_grow_locked(struct fsm_export *mx)
{
	uint32_t n = mx->mx_nids * 2, old = mx->mx_nids;
	struct fsm_node **b, **ob = mx->mx_ids;

	if (mx->mx_nodes < mx->mx_nids || n < old)
		return;
	b = calloc(n, sizeof(*b));
	if (!b)
		return;
	mx->mx_ids = b;
	mx->mx_nids = n;
	for (uint32_t i = 0; i < old; i++) {
		struct fsm_node *e = ob[i], *next;

		for (; e; e = next) {
			uint32_t k = id_bucket(mx, e->mn_id);

			next = e->mn_hnext;
			e->mn_hnext = b[k];
			b[k] = e;
		}
	}
	free(ob);
}

static struct fsm_node *id_find_locked(struct fsm_export *mx, uint64_t id)
{
	struct fsm_node *n = mx->mx_ids[id_bucket(mx, id)];

	while (n && n->mn_id != id)
		n = n->mn_hnext;
	return n;
}

static void id_unhash_locked(struct fsm_export *mx, struct fsm_node *n)
{
	struct fsm_node **pp = &mx->mx_ids[id_bucket(mx, n->mn_id)];

	while (*pp && *pp != n)
		pp = &(*pp)->mn_hnext;
	if (*pp)
		*pp = n->mn_hnext;
}

/* ---- nodes ---- */

struct fsm_node *fsm_node_new_locked(struct fsm_export *mx, mode_t mode,
				     uint32_t uid, uint32_t gid, int *err)
{
	struct fsm_node *n;
	uint32_t k;

	if (mx->mx_nodes >= mx->mx_nodes_max) {
		*err = -ENOSPC;
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		*err = -ENOMEM;
		return NULL;
	}
	n->mn_mx = mx;
	n->mn_id = mx->mx_next_id++;
	n->mn_mode = mode;
	n->mn_uid = uid;
	n->mn_gid = gid;
	n->mn_atime = n->mn_mtime = n->mn_ctime = fsm_now();
	if (S_ISDIR(mode))
		n->mn_dir.dr_next_cookie = 3;
	mx->mx_nodes++;
	ids_grow_locked(mx);
	k = id_bucket(mx, n->mn_id);
	n->mn_hnext = mx->mx_ids[k];
	mx->mx_ids[k] = n;
	return n;
}

/* Free what @n holds, and @n (not its place in the id hash). */
static void node_destroy_locked(struct fsm_node *n)
{
	if (S_ISREG(n->mn_mode))
		fsm_data_free_locked(n);
	else if (S_ISDIR(n->mn_mode))
		fsm_dir_free_locked(n);
	else if (S_ISLNK(n->mn_mode) && n->mn_target) {
		fsm_uncharge_locked(n->mn_mx, strlen(n->mn_target));
		free(n->mn_target);
	}
	fsm_locks_free_locked(n);
	fsm_shares_free_locked(n);
	n->mn_mx->mx_nodes--;
	free(n);
}

void fsm_node_maybe_free_locked(struct fsm_node *n)
{
	if (n->mn_nlink || n->mn_refs)
		return;
	id_unhash_locked(n->mn_mx, n);
	node_destroy_locked(n);
}

void fsm_node_get_locked(struct fsm_node *n)
{
	n->mn_refs++;
}

void fsm_node_put_locked(struct fsm_node *n)
{
	n->mn_refs--;
	fsm_node_maybe_free_locked(n);
}

void fsm_hold_locked(struct fsm_node *n, struct fs_fentry *fe)
{
	fsm_node_get_locked(n);
	fe->fe_node = n;
	fe->fe_type = n->mn_mode & S_IFMT;
}

void fsm_stat_locked(const struct fsm_node *n, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = n->mn_mx->mx_dev;
	st->st_ino = (ino_t)n->mn_id;
	st->st_mode = n->mn_mode;
	st->st_nlink = n->mn_nlink;
	st->st_uid = n->mn_uid;
	st->st_gid = n->mn_gid;
	st->st_rdev = n->mn_rdev;
	st->st_blksize = FSM_PAGE;
	if (S_ISREG(n->mn_mode)) {
		st->st_size = (off_t)n->mn_size;
		st->st_blocks = (blkcnt_t)(n->mn_file.fi_npages * (FSM_PAGE / 512));
	} else if (S_ISDIR(n->mn_mode)) {
		st->st_size = FSM_PAGE;
	} else if (S_ISLNK(n->mn_mode)) {
		st->st_size = (off_t)strlen(n->mn_target);
	}
	st->st_atim = n->mn_atime;
	st->st_mtim = n->mn_mtime;
	st->st_ctim = n->mn_ctime;
}

/* ---- the export ---- */

/* A size with an optional K, M, G or T suffix (powers of 1024). */
static int parse_size(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	size_t i;

	if (len && strchr("kKmMgGtT", s[len - 1])) {
		switch (s[len - 1] | 0x20) {
		case 'k': mul = 1ull << 10; break;
		case 'm': mul = 1ull << 20; break;
		case 'g': mul = 1ull << 30; break;
		default: mul = 1ull << 40; break;
		}
		len--;
	}
	if (!len)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT64_MAX / mul || v == 0)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

/*
 * parse_opts - the backend's options: a comma-separated list of
 * "bytes=SIZE" (file data, symlink targets and names; K, M, G, T
 * suffixes) and "nodes=N" (objects), each greater than 0.
 */
static int parse_opts(struct fsm_export *mx, const char *opts)
{
	const char *p = opts;

	while (p && *p) {
		const char *end = strchr(p, ','), *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		uint64_t v;

		eq = memchr(p, '=', len);
		if (!eq)
			return -EINVAL;
		if (parse_size(eq + 1, len - (size_t)(eq + 1 - p), &v))
			return -EINVAL;
		if ((size_t)(eq - p) == 5 && !memcmp(p, "bytes", 5))
			mx->mx_bytes_max = v;
		else if ((size_t)(eq - p) == 5 && !memcmp(p, "nodes", 5))
			mx->mx_nodes_max = v;
		else
			return -EINVAL;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* tree_new - a new tree for @path with options @opts into *@out. */
static int tree_new(const char *path, const char *opts, struct fsm_export **out)
{
	static const uint8_t dev_key[16] = "rpcrdma memoryfs";
	struct fsm_export *mx;
	struct fsm_node *root;
	int err;

	mx = calloc(1, sizeof(*mx));
	if (!mx)
		return -ENOMEM;
	mx->mx_path = strdup(path);
	if (!mx->mx_path) {
		err = -ENOMEM;
		goto out_free;
	}
	mx->mx_bytes_max = FSM_BYTES_DEFAULT;
	mx->mx_nodes_max = FSM_NODES_DEFAULT;
	err = parse_opts(mx, opts);
	if (err)
		goto out_free;
	if (getrandom(mx->mx_gen, sizeof(mx->mx_gen), 0) != sizeof(mx->mx_gen) ||
	    getrandom(mx->mx_hkey, sizeof(mx->mx_hkey), 0) != sizeof(mx->mx_hkey)) {
		err = -EIO;
		goto out_free;
	}
	/* stable per path, so a client sees the same fsid across restarts */
	mx->mx_dev = (dev_t)fs_siphash(dev_key, path, strlen(path));
	if (!mx->mx_dev)
		mx->mx_dev = 1;
	mx->mx_next_id = 1;
	mx->mx_nids = 64;
	mx->mx_ids = calloc(mx->mx_nids, sizeof(*mx->mx_ids));
	if (!mx->mx_ids) {
		err = -ENOMEM;
		goto out_free;
	}
	err = pthread_mutex_init(&mx->mx_lock, NULL);
	if (err) {
		err = -err;
		goto out_ids;
	}
	/* the root: a sticky directory everyone may write, as /tmp */
	root = fsm_node_new_locked(mx, S_IFDIR | 01777, 0, 0, &err);
	if (!root)
		goto out_mutex;
	root->mn_nlink = 2;
	root->mn_dir.dr_parent = root;
	mx->mx_root = root;
	*out = mx;
	return 0;

out_mutex:
	pthread_mutex_destroy(&mx->mx_lock);
out_ids:
	free(mx->mx_ids);
out_free:
	free(mx->mx_path);
	free(mx);
	return err;
}

/* tree_free - free @mx and every node of it; no export uses it. */
static void tree_free(struct fsm_export *mx)
{
	for (uint32_t i = 0; i < mx->mx_nids; i++) {
		struct fsm_node *n = mx->mx_ids[i], *next;

		for (; n; n = next) {
			next = n->mn_hnext;
			node_destroy_locked(n);
		}
	}
	free(mx->mx_ids);
	pthread_mutex_destroy(&mx->mx_lock);
	free(mx->mx_path);
	free(mx);
}

/*
 * Exports of one path serve one tree, as two exports of one directory of
 * a kernel file system serve the same files (an export that squashes root
 * and one that does not, say): the first be_export_open() of a path makes
 * its tree, the last be_export_close() frees it (or, when lock
 * descriptions still hold it, the last of those).  The limits a later
 * export of the path names become the tree's: a reload that changes
 * bytes= or nodes= opens the new table (sharing the tree) before it
 * closes the old.
 */
static pthread_mutex_t g_trees_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fsm_export *g_trees;

static int fsm_export_open(struct rpcrdma_nfs3_export *exp, const char *path,
			   const char *opts)
{
	struct fsm_export *mx;
	int err = 0;

	if (!path || path[0] != '/')
		return -EINVAL;
	pthread_mutex_lock(&g_trees_lock);
	for (mx = g_trees; mx; mx = mx->mx_tree_next)
		if (!strcmp(mx->mx_path, path))
			break;
	if (!mx) {
		err = tree_new(path, opts, &mx);
		if (!err) {
			mx->mx_tree_next = g_trees;
			g_trees = mx;
		}
	} else {
		struct fsm_export check = { 0 };

		/* another export of the path (a second line, or a reload that
		 * opens the new table before it closes the old): the limits it
		 * names are the tree's from now on (below what is in use, the
		 * tree only stops growing) */
		err = parse_opts(&check, opts);
		if (err) {
			mx = NULL;
		} else {
			pthread_mutex_lock(&mx->mx_lock);
			if (check.mx_bytes_max)
				mx->mx_bytes_max = check.mx_bytes_max;
			if (check.mx_nodes_max)
				mx->mx_nodes_max = check.mx_nodes_max;
			pthread_mutex_unlock(&mx->mx_lock);
		}
	}
	if (!err)
		mx->mx_users++;
	pthread_mutex_unlock(&g_trees_lock);
	if (err)
		return err;
	exp->ex_be_priv = mx;
	exp->ex_fd = -1;
	exp->ex_mnt_id = 0;
	exp->ex_dev = mx->mx_dev;
	exp->ex_ino = (ino_t)mx->mx_root->mn_id;
	exp->ex_fsid = (uint64_t)mx->mx_dev;
	exp->ex_mem_fs = true;
	return 0;
}

static void fsm_export_close(struct rpcrdma_nfs3_export *exp)
{
	struct fsm_export *mx = fsm_mx(exp), **pp;
	bool last;

	if (!mx)
		return;
	fsm_shares_drop_export(mx, exp);
	exp->ex_be_priv = NULL;
	pthread_mutex_lock(&g_trees_lock);
	last = --mx->mx_users == 0;
	if (last)
		for (pp = &g_trees; *pp; pp = &(*pp)->mx_tree_next)
			if (*pp == mx) {
				*pp = mx->mx_tree_next;
				break;
			}
	/* a lock description still open keeps the (detached) tree */
	last = last && mx->mx_owners == 0;
	pthread_mutex_unlock(&g_trees_lock);
	if (last)
		tree_free(mx);
}

void fsm_tree_hold(struct fsm_export *mx)
{
	pthread_mutex_lock(&g_trees_lock);
	mx->mx_owners++;
	pthread_mutex_unlock(&g_trees_lock);
}

void fsm_tree_drop(struct fsm_export *mx)
{
	bool last;

	pthread_mutex_lock(&g_trees_lock);
	last = --mx->mx_owners == 0 && mx->mx_users == 0;
	pthread_mutex_unlock(&g_trees_lock);
	if (last)
		tree_free(mx);
}

int fs_memory_set_limits(struct rpcrdma_nfs3_export *exp, uint64_t bytes,
			 uint64_t nodes)
{
	struct fsm_export *mx;

	if (!exp || exp->ex_be != &fs_memory_backend || !exp->ex_be_priv)
		return -EINVAL;
	mx = fsm_mx(exp);
	pthread_mutex_lock(&mx->mx_lock);
	mx->mx_bytes_max = bytes ? bytes : FSM_BYTES_DEFAULT;
	mx->mx_nodes_max = nodes ? nodes : FSM_NODES_DEFAULT;
	pthread_mutex_unlock(&mx->mx_lock);
	return 0;
}

/* ---- handles and objects ---- */

static void key_put(const struct fsm_export *mx, uint64_t id, uint8_t *key)
{
	for (int i = 0; i < 8; i++)
		key[i] = (uint8_t)(id >> (56 - 8 * i));
	memcpy(key + 8, mx->mx_gen, 8);
}

static int fsm_fh_key(const struct rpcrdma_nfs3_export *exp,
		      struct fs_fentry *dir, const char *name, uint8_t *key,
		      uint32_t *keylen, uint32_t *type)
{
	struct fsm_export *mx = fsm_mx(exp);
	struct fsm_node *n;
	int err = 0;

	pthread_mutex_lock(&mx->mx_lock);
	/* no object yet (@dir NULL or empty): the export's root */
	n = dir && dir->fe_node ? fsm_fe(dir) : mx->mx_root;
	if (name[0])
		err = fsm_dir_find_locked(n, name, &n);
	if (!err) {
		key_put(mx, n->mn_id, key);
		*keylen = FSM_KEY_LEN;
		*type = 0;
	}
	pthread_mutex_unlock(&mx->mx_lock);
	return err == -ENOTDIR || err == -ENAMETOOLONG ? -ENOENT : err;
}

static int fsm_fh_decode(const struct rpcrdma_nfs3_export *exp, uint32_t type,
			 const uint8_t *key, uint32_t keylen,
			 struct fs_fentry *fe, struct stat *st)
{
	struct fsm_export *mx = fsm_mx(exp);
	struct fsm_node *n;
	uint64_t id = 0;
	int err = -ESTALE;

	if (type != 0 || keylen != FSM_KEY_LEN ||
	    memcmp(key + 8, mx->mx_gen, 8))
		return -ESTALE;
	for (int i = 0; i < 8; i++)
		id = id << 8 | key[i];
	pthread_mutex_lock(&mx->mx_lock);
	n = id_find_locked(mx, id);
	if (n && n->mn_nlink) {
		fsm_hold_locked(n, fe);
		if (st)
			fsm_stat_locked(n, st);
		err = 0;
	}
	pthread_mutex_unlock(&mx->mx_lock);
	return err;
}

static void fsm_release(struct fs_fentry *fe)
{
	struct fsm_node *n = fsm_fe(fe);
	struct fsm_export *mx;

	if (!n)
		return;
	mx = n->mn_mx;
	pthread_mutex_lock(&mx->mx_lock);
	fsm_node_put_locked(n);
	pthread_mutex_unlock(&mx->mx_lock);
	fe->fe_node = NULL;
}

static int fsm_getattr(const struct rpcrdma_nfs3_export *exp,
		       struct fs_fentry *fe, struct stat *st)
{
	struct fsm_export *mx = fsm_mx(exp);

	pthread_mutex_lock(&mx->mx_lock);
	fsm_stat_locked(fsm_fe(fe), st);
	pthread_mutex_unlock(&mx->mx_lock);
	return 0;
}

/* Memory is as stable as it gets: nothing to sync. */
static int fsm_commit(struct fs_call *c, struct fs_fentry *fe, bool datasync)
{
	(void)c;
	(void)fe;
	(void)datasync;
	return 0;
}

static int fsm_commit_meta(struct fs_call *c, struct fs_fentry *fe)
{
	(void)c;
	(void)fe;
	return 0;
}

static int fsm_statfs(struct fs_call *c, struct fs_fentry *fe,
		      struct fs_statfs *out)
{
	struct fsm_export *mx = fsm_mx(c->c_exp);

	(void)fe;
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&mx->mx_lock);
	out->sf_bytes = mx->mx_bytes_max;
	out->sf_bfree = mx->mx_bytes < mx->mx_bytes_max ?
				mx->mx_bytes_max - mx->mx_bytes : 0;
	out->sf_bavail = out->sf_bfree;
	out->sf_files = mx->mx_nodes_max;
	out->sf_ffree = mx->mx_nodes < mx->mx_nodes_max ?
				mx->mx_nodes_max - mx->mx_nodes : 0;
	out->sf_favail = out->sf_ffree;
	pthread_mutex_unlock(&mx->mx_lock);
	out->sf_linkmax = FSM_LINK_MAX;
	out->sf_namemax = FSM_NAME_MAX;
	return 0;
}

const struct fs_backend fs_memory_backend = {
	.be_name = "memory",
	.be_flags = FS_BE_NEVER_WAITS,
	.be_export_open = fsm_export_open,
	.be_export_close = fsm_export_close,
	.be_fh_key = fsm_fh_key,
	.be_fh_decode = fsm_fh_decode,
	.be_release = fsm_release,
	.be_getattr = fsm_getattr,
	.be_setattr = fsm_be_setattr,
	.be_access = fsm_be_access,
	.be_lookup = fsm_be_lookup,
	.be_open = fsm_be_open,
	.be_read = fsm_be_read,
	.be_write = fsm_be_write,
	.be_commit = fsm_commit,
	.be_commit_meta = fsm_commit_meta,
	.be_create = fsm_be_create,
	.be_mkdir = fsm_be_mkdir,
	.be_mknod = fsm_be_mknod,
	.be_symlink = fsm_be_symlink,
	.be_readlink = fsm_be_readlink,
	.be_link = fsm_be_link,
	.be_unlink = fsm_be_unlink,
	.be_rename = fsm_be_rename,
	.be_readdir = fsm_be_readdir,
	.be_statfs = fsm_statfs,
	.be_lock_open = fsm_be_lock_open,
	.be_lock = fsm_be_lock,
	.be_lock_dup = fsm_be_lock_dup,
	.be_lock_close = fsm_be_lock_close,
	.be_lease_open = fsm_be_lease_open,
	.be_lease_close = fsm_be_lease_close,
	.be_share = fsm_be_share,
};
