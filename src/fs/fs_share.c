// SPDX-License-Identifier: MIT
/*
 * fs_share.c - share reservations (RFC 8881 9.7 OPEN share_access and
 * share_deny; the NLM SHARE of RFC 1813's appendix, fsh4_access and
 * fsh4_mode) of one server, whichever protocol made them: the NFSv4.1
 * server's opens and the lock manager's shares meet here, and the
 * export's backend carries them to other servers on the same storage
 * (be_share, where it has one).
 *
 * One table per server (struct rpcrdma_nfs3_server, made by fs_server.c),
 * and one for calls without a server (bare exports, tests).  A record is
 * one owner's reservation of one file: the owner (fs_share_owner(): the
 * protocol's tag and its id), what it has the file open for and what it
 * denies others.  The file is the key a handle carries (fs_fh_check():
 * the backend's key and type) with the export's backend and file system
 * (ex_dev): two handles of one file, through one export or two exports of
 * the same file system in the server, are one key, and reaching it costs
 * no system call.  Records hang in two hash chains, by file and by owner
 * (a CLOSE, an expired client, a freed NLM host drop by owner), and are
 * allocated one by one up to a limit (FS_SHARES_MAX, fs_share_set_max()):
 * past it -ENOLCK, so a peer cannot grow the table without bound (the
 * protocols' own tables bound it sooner).
 *
 * For an export whose backend has be_share a record also keeps the
 * export (a reference: ex_refs) and the handle, so a drop by owner can
 * reach the backend's object again (fs_fh_decode()) to give the
 * reservation back there.
 *
 * Locking: one mutex per table, held across be_share (the check here and
 * the backend's are one step for this server).  Lock order: a protocol's
 * own lock (NLM's table, NFSv4's state), then this table's, then the
 * backend's; nothing here calls back into a protocol.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "fs.h"
#include "fs_backend.h"

#define SHARE_BUCKETS 1024u /* each chain: by file key, and by owner */

/* The identity of a file in the table (compared byte for byte). */
struct share_key {
	const struct fs_backend *k_be;
	uint64_t k_dev;
	uint32_t k_type;
	uint32_t k_keylen;
	uint8_t k_key[FS_FH_KERNEL_MAX];
};

/* One owner's reservation of one file. */
struct share_rec {
	struct share_rec *sr_fnext;  /* chain by file */
	struct share_rec *sr_onext;  /* chain by owner */
	uint64_t sr_fhash;
	uint64_t sr_owner;
	uint32_t sr_access, sr_deny; /* FS_SHARE_* */
	struct share_key sr_key;
	/* its backend has be_share: the export (referenced) and the handle */
	struct rpcrdma_nfs3_export *sr_exp;
	uint32_t sr_fhlen;
	uint8_t sr_fh[RPCRDMA_NFS3_FHSIZE];
};

struct fs_shares {
	pthread_mutex_t sh_lock;
	uint32_t sh_n;
	uint32_t sh_max;
	uint8_t sh_hkey[16];
	struct share_rec *sh_files[SHARE_BUCKETS];
	struct share_rec *sh_owners[SHARE_BUCKETS];
};

struct fs_shares *fs_shares_create(void)
{
	struct fs_shares *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->sh_lock, NULL);
	t->sh_max = FS_SHARES_MAX;
	/* the chains' hash: keys come from handles a peer sends (MAC'd,
	 * but a posix key is predictable), so it is keyed */
	if (getrandom(t->sh_hkey, sizeof(t->sh_hkey), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(t->sh_hkey))
		memset(t->sh_hkey, 0x5a, sizeof(t->sh_hkey));
	return t;
}

static pthread_once_t g_bare_once = PTHREAD_ONCE_INIT;
static struct fs_shares *g_bare; /* calls without a server */

static void bare_init(void)
{
	g_bare = fs_shares_create();
}

/* table_of - @srv's table, or the table of calls without a server. */
static struct fs_shares *table_of(struct rpcrdma_nfs3_server *srv)
{
	if (srv)
		return fs_server_shares(srv);
	pthread_once(&g_bare_once, bare_init);
	return g_bare;
}

static uint32_t owner_bucket(uint64_t owner)
{
	return (uint32_t)((owner * 0x9e3779b97f4a7c15ull) >> 54) & (SHARE_BUCKETS - 1);
}

static bool key_equal(const struct share_key *a, const struct share_key *b)
{
	return a->k_be == b->k_be && a->k_dev == b->k_dev && a->k_type == b->k_type &&
	       a->k_keylen == b->k_keylen && !memcmp(a->k_key, b->k_key, a->k_keylen);
}

/* export_put - drop a record's reference to its export (the last one
 * closes it, as fs_server.c's). */
static void export_put(struct rpcrdma_nfs3_export *exp)
{
	if (exp && atomic_fetch_sub(&exp->ex_refs, 1) == 1)
		rpcrdma_nfs3_export_close(exp);
}

/* unlink_locked - take @r out of both chains (not freed). */
static void unlink_locked(struct fs_shares *t, struct share_rec *r)
{
	struct share_rec **pp;

	for (pp = &t->sh_files[r->sr_fhash & (SHARE_BUCKETS - 1)]; *pp;
	     pp = &(*pp)->sr_fnext)
		if (*pp == r) {
			*pp = r->sr_fnext;
			break;
		}
	for (pp = &t->sh_owners[owner_bucket(r->sr_owner)]; *pp; pp = &(*pp)->sr_onext)
		if (*pp == r) {
			*pp = r->sr_onext;
			break;
		}
	t->sh_n--;
}

/*
 * backend_drop_locked - give @r back to its backend (be_share with access
 * 0) through its export and handle; nothing when its backend keeps none.
 * A file gone meanwhile took its reservations with it.
 */
static void backend_drop_locked(struct rpcrdma_nfs3_server *srv,
				const struct share_rec *r)
{
	struct fs_fentry local;
	struct fs_call c;
	struct stat st;

	if (!r->sr_exp || !r->sr_exp->ex_be->be_share)
		return;
	memset(&c, 0, sizeof(c));
	c.c_srv = srv;
	c.c_exp = r->sr_exp;
	if (fs_fh_decode(r->sr_exp, r->sr_fh, r->sr_fhlen, &local, &st))
		return;
	(void)r->sr_exp->ex_be->be_share(&c, &local, r->sr_owner, 0, 0);
	fs_fcache_put(&local);
}

int fs_share_set_fh(struct fs_call *c, struct fs_fentry *fe,
		    const uint8_t *fh, uint32_t fhlen, uint64_t owner,
		    uint32_t access, uint32_t deny)
{
	struct rpcrdma_nfs3_export *exp = c->c_exp, *put_exp = NULL;
	int (*be_share)(struct fs_call *, struct fs_fentry *, uint64_t, uint32_t,
			uint32_t) = exp->ex_be->be_share;
	struct share_rec *r, *mine = NULL, *fresh = NULL, *gone = NULL;
	struct fs_shares *t = table_of(c->c_srv);
	struct fs_fentry local, *obj = fe;
	struct fs_call bc;
	struct share_key k;
	const uint8_t *key;
	uint32_t b;
	uint64_t h;
	struct stat st;
	int err;

	if (!t)
		return -ENOMEM;
	access &= FS_SHARE_READ | FS_SHARE_WRITE;
	deny &= FS_SHARE_READ | FS_SHARE_WRITE;
	if (!access)
		deny = 0;
	memset(&k, 0, sizeof(k));
	err = fs_fh_check(exp, fh, fhlen, &k.k_type, &key, &k.k_keylen);
	if (err)
		return err;
	if (k.k_keylen > sizeof(k.k_key))
		return -EBADMSG;
	memcpy(k.k_key, key, k.k_keylen);
	k.k_be = exp->ex_be;
	k.k_dev = (uint64_t)exp->ex_dev;
	h = fs_siphash(t->sh_hkey, &k, offsetof(struct share_key, k_key) + k.k_keylen);
	b = (uint32_t)h & (SHARE_BUCKETS - 1);
	if (be_share && !obj) {
		/* the backend needs the object: reached from the handle */
		err = fs_fh_decode(exp, fh, fhlen, &local, &st);
		if (err)
			return err;
		obj = &local;
	}

	pthread_mutex_lock(&t->sh_lock);
	for (r = t->sh_files[b]; r; r = r->sr_fnext) {
		if (r->sr_fhash != h || !key_equal(&r->sr_key, &k))
			continue;
		if (r->sr_owner == owner) {
			mine = r;
			continue;
		}
		/* another owner denies what this one wants, or has what
		 * this one denies (RFC 8881 9.7; both ways) */
		if (access && ((r->sr_deny & access) || (r->sr_access & deny))) {
			err = -EBUSY;
			goto out;
		}
	}
	/* the backend knows the owner's reservation by the export it was
	 * made through (another export of the file system, or the one a
	 * reload replaced): a change goes through that one */
	bc = *c;
	if (mine && mine->sr_exp)
		bc.c_exp = mine->sr_exp;
	if (!access) {
		if (!mine)
			goto out;
		/* dropped here first, then by the backend (which cannot
		 * refuse a drop) */
		unlink_locked(t, mine);
		if (be_share)
			(void)be_share(&bc, obj, owner, 0, 0);
		gone = mine;
		goto out;
	}
	if (!mine) {
		if (t->sh_n >= t->sh_max) {
			err = -ENOLCK;
			goto out;
		}
		fresh = calloc(1, sizeof(*fresh));
		if (!fresh) {
			err = -ENOMEM;
			goto out;
		}
	}
	if (be_share) {
		err = be_share(&bc, obj, owner, access, deny);
		if (err) {
			free(fresh);
			goto out;
		}
	}
	if (mine) {
		mine->sr_access = access;
		mine->sr_deny = deny;
		goto out;
	}
	fresh->sr_fhash = h;
	fresh->sr_owner = owner;
	fresh->sr_access = access;
	fresh->sr_deny = deny;
	fresh->sr_key = k;
	if (be_share) {
		atomic_fetch_add(&exp->ex_refs, 1);
		fresh->sr_exp = exp;
		fresh->sr_fhlen = fhlen;
		memcpy(fresh->sr_fh, fh, fhlen);
	}
	fresh->sr_fnext = t->sh_files[b];
	t->sh_files[b] = fresh;
	fresh->sr_onext = t->sh_owners[owner_bucket(owner)];
	t->sh_owners[owner_bucket(owner)] = fresh;
	t->sh_n++;
out:
	pthread_mutex_unlock(&t->sh_lock);
	if (gone) {
		put_exp = gone->sr_exp;
		free(gone);
	}
	export_put(put_exp);
	if (obj == &local)
		fs_fcache_put(&local);
	return err;
}

int fs_share_set(struct fs_call *c, struct fs_fentry *fe, uint64_t owner,
		 uint32_t access, uint32_t deny)
{
	uint8_t fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t len;
	int err;

	if (fe->fe_fhlen)
		return fs_share_set_fh(c, fe, fe->fe_fh, fe->fe_fhlen, owner, access,
				       deny);
	/* an entry not decoded from a handle: its handle made (posix: one
	 * name_to_handle_at; the protocols pass the handle they have to
	 * fs_share_set_fh() instead) */
	err = fs_fh_of(c, fe, "", fh, &len);
	if (err)
		return err;
	return fs_share_set_fh(c, fe, fh, len, owner, access, deny);
}

/* drop_locked - take every record of @owner out of @t, given back to its
 * backend; the records go to *@out (their exports still referenced). */
static void drop_locked(struct rpcrdma_nfs3_server *srv, struct fs_shares *t,
			uint64_t owner, struct share_rec **out)
{
	struct share_rec *r, *next;

	for (r = t->sh_owners[owner_bucket(owner)]; r; r = next) {
		next = r->sr_onext;
		if (r->sr_owner != owner)
			continue;
		unlink_locked(t, r);
		backend_drop_locked(srv, r);
		r->sr_onext = *out;
		*out = r;
	}
}

/* free_list - free records dropped, putting their exports. */
static void free_list(struct share_rec *r)
{
	struct share_rec *next;

	for (; r; r = next) {
		next = r->sr_onext;
		export_put(r->sr_exp);
		free(r);
	}
}

void fs_share_drop(struct rpcrdma_nfs3_server *srv, uint64_t owner)
{
	struct fs_shares *t = table_of(srv);
	struct share_rec *list = NULL;

	if (!t)
		return;
	pthread_mutex_lock(&t->sh_lock);
	drop_locked(srv, t, owner, &list);
	pthread_mutex_unlock(&t->sh_lock);
	free_list(list);
}

void fs_share_set_max(struct rpcrdma_nfs3_server *srv, uint32_t max)
{
	struct fs_shares *t = table_of(srv);

	if (!t)
		return;
	pthread_mutex_lock(&t->sh_lock);
	t->sh_max = max ? max : FS_SHARES_MAX;
	pthread_mutex_unlock(&t->sh_lock);
}

uint32_t fs_shares_count(struct rpcrdma_nfs3_server *srv)
{
	struct fs_shares *t = table_of(srv);
	uint32_t n;

	if (!t)
		return 0;
	pthread_mutex_lock(&t->sh_lock);
	n = t->sh_n;
	pthread_mutex_unlock(&t->sh_lock);
	return n;
}

void fs_shares_destroy(struct fs_shares *t)
{
	struct share_rec *list = NULL;

	if (!t)
		return;
	pthread_mutex_lock(&t->sh_lock);
	for (uint32_t i = 0; i < SHARE_BUCKETS; i++)
		while (t->sh_owners[i])
			drop_locked(NULL, t, t->sh_owners[i]->sr_owner, &list);
	pthread_mutex_unlock(&t->sh_lock);
	free_list(list);
	pthread_mutex_destroy(&t->sh_lock);
	free(t);
}
