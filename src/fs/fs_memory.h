/* SPDX-License-Identifier: MIT */
/*
 * fs_memory.h - the memory backend's own structures, shared by its files
 * (not by the rest of the layer, which sees only fs_memory_backend):
 *   fs_memory.c       the export, nodes, handles, attributes, statfs, the
 *                     operations table
 *   fs_memory_perm.c  permission checks from the caller's credentials,
 *                     access, open, setattr
 *   fs_memory_data.c  file data in sparse pages: read, write, truncate
 *   fs_memory_dir.c   directory entries and cookies, lookup, readdir
 *   fs_memory_names.c create, mkdir, mknod, symlink, readlink, link,
 *                     unlink, rename
 *   fs_memory_lock.c  byte-range locks and their owners
 *   fs_memory_lease.c leases: changes through another export of the tree
 *   fs_memory_share.c share reservations of every export of the tree
 *
 * Locking: one mutex per export (mx_lock) guards every node, entry, page,
 * lock and counter of the export.  Every operation takes it for its whole
 * work and drops it before it calls back into the layer (readdir's
 * callback, fs_fh_of() in rename).  Functions named *_locked expect it
 * held.
 *
 * The fsm_be_* functions are the operations of fs_backend.h, documented
 * there (errors included); what the memory backend decides on its own:
 * a handle of an object with no name left is STALE at once (even while
 * held); be_lock_open() opens read-write for a regular file, read-only
 * otherwise; be_create() of a name that exists (not @excl) returns the
 * object whatever its type; times are CLOCK_REALTIME, reads move atime as
 * relatime does; exports of one path serve one tree (the first
 * be_export_open() of the path makes it, the last be_export_close() frees
 * it, fs_memory.c).
 *
 * Lifetime: a node lives while it has names (mn_nlink) or references
 * (mn_refs: an fs_fentry's fe_node, a lock owner); the last of both to go
 * frees it (fsm_node_put_locked(), fsm_node_maybe_free_locked()).  Ids
 * count up from 1 and are never reused within an export.
 */
#ifndef RPCRDMA_FS_MEMORY_H
#define RPCRDMA_FS_MEMORY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "fs_backend.h"

#define FSM_PAGE 4096u              /* bytes of one data page */
#define FSM_PAGE_SHIFT 12u
#define FSM_NAME_MAX 255u           /* longest name component */
#define FSM_PATH_MAX 4096u          /* longest symlink target, NUL included */
#define FSM_LINK_MAX 65000u         /* most names of one object */
#define FSM_SIZE_MAX INT64_MAX      /* largest file size (off_t) */
#define FSM_BYTES_DEFAULT (256ull << 20)
#define FSM_NODES_DEFAULT 65536ull
#define FSM_LOCKS_MAX 65536u        /* byte-range locks of one export */
#define FSM_SHARES_MAX 65536u       /* share reservations of one tree */
#define FSM_KEY_LEN 16u             /* handle key: id (8), generation (8) */

/* may bits, as the rwx of a mode class (and R_OK, W_OK, X_OK) */
enum {
	FSM_X = 1,
	FSM_W = 2,
	FSM_R = 4,
};

struct fsm_node;
struct fsm_share;

/* One page of file data; pages of a file hang in its hash table. */
struct fsm_page {
	struct fsm_page *pg_next;
	uint64_t pg_index;           /* offset / FSM_PAGE */
	uint8_t pg_data[FSM_PAGE];
};

/* One name in a directory. */
struct fsm_dirent {
	struct fsm_dirent *de_hnext; /* name hash chain */
	struct fsm_node *de_node;    /* the object (one of its mn_nlink) */
	uint64_t de_cookie;
	uint64_t de_hash;
	uint32_t de_len;
	char de_name[];              /* NUL-terminated */
};

/* What one name counts against the byte limit: its characters and
 * what holds them (the entry, its NUL, its readdir slot), so a client
 * adding short names (LINK needs no node) cannot hold more memory than
 * bytes= says. */
#define FSM_ENT_COST(len) \
	(sizeof(struct fsm_dirent) + (len) + 1 + sizeof(struct fsm_slot))

/* An entry's place in readdir order: cookies ascend; ds_ent NULL: removed. */
struct fsm_slot {
	uint64_t ds_cookie;
	struct fsm_dirent *ds_ent;
};

struct fsm_dir {
	struct fsm_dirent **dr_buckets; /* by name (keyed hash) */
	uint32_t dr_nbuckets;           /* power of two, or 0 */
	uint32_t dr_count;              /* names */
	struct fsm_slot *dr_slots;      /* insertion (= cookie) order */
	uint32_t dr_nslots, dr_cap, dr_holes;
	uint64_t dr_next_cookie;        /* 1 and 2 are "." and ".." */
	struct fsm_node *dr_parent;     /* the root's is itself; NULL once removed */
};

struct fsm_file {
	struct fsm_page **fi_buckets;   /* by page index */
	uint32_t fi_nbuckets;           /* power of two, or 0 */
	uint64_t fi_npages;
};

/* A byte-range lock of one owner on one file; [lk_start, lk_end] inclusive. */
struct fsm_lock {
	struct fsm_lock *lk_next;
	struct fsm_owner *lk_owner;
	uint64_t lk_start, lk_end;
	int lk_type;                    /* F_RDLCK, F_WRLCK */
};

/* A lock description (fs_lockd's ld_owner): holds a reference to its node. */
struct fsm_owner {
	uint32_t ow_refs;
	int ow_acc;                     /* O_RDWR or O_RDONLY */
	struct fsm_node *ow_node;
};

struct fsm_export;

struct fsm_node {
	struct fsm_node *mn_hnext;      /* id hash chain */
	struct fsm_export *mn_mx;
	uint64_t mn_id;
	mode_t mn_mode;                 /* type and 07777 bits */
	uint32_t mn_uid, mn_gid;
	uint32_t mn_nlink;
	uint32_t mn_refs;
	uint64_t mn_size;
	dev_t mn_rdev;
	struct timespec mn_atime, mn_mtime, mn_ctime;
	struct fsm_lock *mn_locks;
	struct fsm_share *mn_shares;    /* fs_memory_share.c */
	union {
		struct fsm_dir mn_dir;      /* S_IFDIR */
		struct fsm_file mn_file;    /* S_IFREG */
		char *mn_target;            /* S_IFLNK */
	};
};

/* The state of one export (ex_be_priv). */
struct fsm_export {
	pthread_mutex_t mx_lock;
	uint8_t mx_gen[8];              /* in every handle: handles of another
					 * export or an earlier run are STALE */
	uint8_t mx_hkey[16];            /* key of the name hash */
	dev_t mx_dev;
	uint64_t mx_next_id;
	struct fsm_node **mx_ids;       /* id hash */
	uint32_t mx_nids;               /* buckets, power of two */
	uint64_t mx_nodes;              /* nodes alive */
	uint64_t mx_bytes;              /* data pages, symlink targets, names */
	uint64_t mx_bytes_max, mx_nodes_max;
	uint32_t mx_nlocks;
	uint32_t mx_nshares;            /* share reservations (fs_memory_share.c) */
	struct fsm_node *mx_root;
	/* exports of one path share the tree (fs_memory.c, g_trees) */
	struct fsm_export *mx_tree_next; /* g_trees list */
	char *mx_path;                   /* the exports' path */
	unsigned mx_users;               /* exports open on it; g_trees_lock */
	unsigned mx_owners;              /* lock descriptions alive (they
					  * outlive exports: NLM and NFSv4
					  * state keep them); g_trees_lock */
};

/* The export's state. */
static inline struct fsm_export *fsm_mx(const struct rpcrdma_nfs3_export *exp)
{
	return exp->ex_be_priv;
}

/* The node of an entry. */
static inline struct fsm_node *fsm_fe(const struct fs_fentry *fe)
{
	return fe->fe_node;
}

/* ---- fs_memory.c ---- */

/** fsm_now - CLOCK_REALTIME now. */
struct timespec fsm_now(void);
/** fsm_charge_locked - count @bytes more against the export's byte
 *  limit.  Return: 0; -ENOSPC (over the limit: nothing counted). */
int fsm_charge_locked(struct fsm_export *mx, uint64_t bytes);
/** fsm_uncharge_locked - give back @bytes counted by fsm_charge_locked(). */
void fsm_uncharge_locked(struct fsm_export *mx, uint64_t bytes);
/**
 * fsm_node_new_locked - a new node of @mode (type and bits) owned by
 * @uid:@gid, nlink 0, no reference, all times now, hashed by its new id.
 * Return: the node; NULL with *@err -ENOSPC (the node limit) or -ENOMEM.
 */
struct fsm_node *fsm_node_new_locked(struct fsm_export *mx, mode_t mode,
				     uint32_t uid, uint32_t gid, int *err);
/** fsm_node_get_locked - take a reference to @n. */
void fsm_node_get_locked(struct fsm_node *n);
/** fsm_node_put_locked - drop a reference; frees @n when it has no name
 *  and no reference left. */
void fsm_node_put_locked(struct fsm_node *n);
/** fsm_node_maybe_free_locked - free @n when it has neither a name nor
 *  a reference (after a name was taken away). */
void fsm_node_maybe_free_locked(struct fsm_node *n);
/** fsm_stat_locked - @n's attributes into @st (as be_getattr). */
void fsm_stat_locked(const struct fsm_node *n, struct stat *st);
/** fsm_tree_hold - a lock description of @mx's tree is made: the tree
 *  stays until it is closed, even when its last export closes first. */
void fsm_tree_hold(struct fsm_export *mx);
/** fsm_tree_drop - a lock description of @mx's tree is gone (no lock of
 *  the export held): frees the tree when no export and no description
 *  is left. */
void fsm_tree_drop(struct fsm_export *mx);
/** fsm_hold_locked - @n into entry @fe (a reference, fe_type). */
void fsm_hold_locked(struct fsm_node *n, struct fs_fentry *fe);

/* ---- fs_memory_perm.c ---- */

/**
 * fsm_may - fs_cred_may() on @n's mode and owner (@want: FSM_R, FSM_W,
 * FSM_X, which are R_OK, W_OK, X_OK).  Return: 0 or -EACCES.
 */
int fsm_may(const struct fs_cred *cr, const struct fsm_node *n, int want);
/** fsm_is_owner - uid 0, or the owner of @n. */
bool fsm_is_owner(const struct fs_cred *cr, const struct fsm_node *n);
/** fsm_kill_privs_locked - a write or truncate by @cr: a caller other than
 *  uid 0 clears S_ISUID, and S_ISGID where group execute is set or where
 *  @cr is not in the file's group, as Linux (ctime changes when a bit
 *  does). */
void fsm_kill_privs_locked(const struct fs_cred *cr, struct fsm_node *n,
			   const struct timespec *now);

int fsm_be_setattr(struct fs_call *c, struct fs_fentry *fe,
		   const struct stat *pre, const struct fs_sattr *sa,
		   bool skip_mode);
int fsm_be_access(struct fs_call *c, struct fs_fentry *fe,
		  const struct stat *st, int mode);
int fsm_be_open(struct fs_call *c, struct fs_fentry *fe, const struct stat *st,
		int acc);

/* ---- fs_memory_data.c ---- */

/** fsm_data_free_locked - free every page of file @n (and give back the bytes). */
void fsm_data_free_locked(struct fsm_node *n);
/** fsm_truncate_locked - @n's size to @size: pages past it freed, the
 *  tail of the last one zeroed; growing allocates nothing. */
void fsm_truncate_locked(struct fsm_node *n, uint64_t size);

ssize_t fsm_be_read(struct fs_call *c, struct fs_fentry *fe,
		    const struct iovec *iov, int iovcnt, uint64_t off,
		    bool nowait);
int fsm_be_write(struct fs_call *c, struct fs_fentry *fe,
		 const struct iovec *iov, int iovcnt, uint64_t off,
		 uint32_t stable, size_t *done);

/* ---- fs_memory_dir.c ---- */

/** fsm_is_dot, fsm_is_dotdot - is @name "." (or ".."). */
bool fsm_is_dot(const char *name);
bool fsm_is_dotdot(const char *name);
/**
 * fsm_name_check - a component that can name an entry: 1..FSM_NAME_MAX
 * bytes without '/'.  Return: its length; -ENOENT ("" or a '/': no entry
 * can have it); -ENAMETOOLONG.
 */
ssize_t fsm_name_check(const char *name);
/** fsm_ent_find - the entry of @name (@len bytes, checked) in directory
 *  @dir, or NULL. */
struct fsm_dirent *fsm_ent_find(const struct fsm_node *dir, const char *name,
				size_t len);
/**
 * fsm_ent_add_locked - name @name (@len bytes, checked) in @dir for @n,
 * with the directory's next cookie; link counts are the caller's.
 * Return: 0; -ENOSPC (the byte limit); -ENOMEM.
 */
int fsm_ent_add_locked(struct fsm_node *dir, const char *name, size_t len,
		       struct fsm_node *n);
/** fsm_ent_del_locked - take entry @e out of @dir and free it; link
 *  counts are the caller's. */
void fsm_ent_del_locked(struct fsm_node *dir, struct fsm_dirent *e);
/** fsm_dir_changed - a name of @dir came or went: mtime and ctime @now. */
void fsm_dir_changed(struct fsm_node *dir, const struct timespec *now);
/**
 * fsm_dir_find_locked - @name in directory @dir without a permission
 * check: "." is @dir, ".." its parent (the root's is the root).
 * Return: 0 (*@out); -ENOTDIR; -ENOENT (also in a removed directory, and
 * for "" or a name with '/'); -ENAMETOOLONG.
 */
int fsm_dir_find_locked(struct fsm_node *dir, const char *name,
			struct fsm_node **out);
/** fsm_dir_free_locked - free directory @n's entries (dropping their
 *  names' links; at export close) and tables. */
void fsm_dir_free_locked(struct fsm_node *n);

int fsm_be_lookup(struct fs_call *c, struct fs_fentry *dir,
		  const struct stat *dst, const char *name,
		  struct fs_fentry *out, struct stat *st);
int fsm_be_readdir(struct fs_call *c, struct fs_fentry *dir,
		   const struct stat *dst, uint64_t cookie,
		   int (*fn)(void *arg, const char *name, uint64_t ino,
			     uint64_t cookie),
		   void *arg, bool *eof);

/* ---- fs_memory_names.c ---- */

int fsm_be_create(struct fs_call *c, struct fs_fentry *dir,
		  const struct stat *dst, const char *name, mode_t mode,
		  bool excl, const uint8_t *verf, struct fs_fentry *out,
		  struct stat *st, bool *created);
int fsm_be_mkdir(struct fs_call *c, struct fs_fentry *dir,
		 const struct stat *dst, const char *name, mode_t mode,
		 struct fs_fentry *out, struct stat *st);
int fsm_be_mknod(struct fs_call *c, struct fs_fentry *dir,
		 const struct stat *dst, const char *name, mode_t mode,
		 dev_t rdev, struct fs_fentry *out, struct stat *st);
int fsm_be_symlink(struct fs_call *c, struct fs_fentry *dir,
		   const struct stat *dst, const char *name,
		   const char *target, struct fs_fentry *out, struct stat *st);
ssize_t fsm_be_readlink(struct fs_call *c, struct fs_fentry *fe, char *buf,
			size_t len);
int fsm_be_link(struct fs_call *c, struct fs_fentry *fe, struct fs_fentry *dir,
		const char *name);
int fsm_be_unlink(struct fs_call *c, struct fs_fentry *dir, const char *name,
		  bool rmdir);
int fsm_be_rename(struct fs_call *c, struct fs_fentry *fdir, const char *fname,
		  struct fs_fentry *tdir, const char *tname, bool two_dirs,
		  uint8_t *fh, uint32_t *fhlen, bool *have_fh);

/* ---- fs_memory_lock.c ---- */

/** fsm_locks_free_locked - free every lock of node @n (export close). */
void fsm_locks_free_locked(struct fsm_node *n);

int fsm_be_lock_open(struct fs_call *c, struct fs_fentry *fe,
		     struct fs_lockd *out, int *accmode);
int fsm_be_lock(struct fs_lockd *ld, int type, uint64_t start, uint64_t len,
		bool test, struct fs_lock_conflict *cf);
int fsm_be_lock_dup(const struct fs_lockd *ld, struct fs_lockd *out);
void fsm_be_lock_close(struct fs_lockd *ld);

/* ---- fs_memory_lease.c ---- */

/**
 * fsm_lease_break - object @id of tree @mx is about to change through
 * export @exp (opened for writing, written, its size set, removed,
 * renamed): the leases on it taken through other exports of the tree are
 * told (ls_fn), on this thread.  Call it with no lock of the backend
 * held.  @id 0: nothing.
 */
void fsm_lease_break(const struct rpcrdma_nfs3_export *exp,
		     const struct fsm_export *mx, uint64_t id);

int fsm_be_lease_open(struct fs_call *c, struct fs_fentry *fe,
		      struct fs_lease *ls);
void fsm_be_lease_close(struct fs_lease *ls);
/* ---- fs_memory_share.c ---- */

/** fsm_shares_free_locked - free every share reservation of node @n
 *  (the node is freed). */
void fsm_shares_free_locked(struct fsm_node *n);
/** fsm_shares_drop_export - drop every reservation export @exp made in
 *  @mx's tree (the export closes; takes mx_lock). */
void fsm_shares_drop_export(struct fsm_export *mx,
			    const struct rpcrdma_nfs3_export *exp);

int fsm_be_share(struct fs_call *c, struct fs_fentry *fe, uint64_t owner,
		 uint32_t access, uint32_t deny);

#endif /* RPCRDMA_FS_MEMORY_H */
