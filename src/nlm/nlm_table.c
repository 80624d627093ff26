// SPDX-License-Identifier: MIT
/*
 * nlm_table.c - the lock table: hosts, lock owners' lock descriptions of
 * files with the ranges they hold, blocked requests and share
 * reservations.  Locks are taken through the file-serving layer
 * (fs_lock()) on one lock description per (owner, file), so the backend
 * decides conflicts with every other owner: on a local file system (the
 * posix backend) they are OFD locks, and local processes and NFSv4.1
 * count too.  The table mirrors each owner's ranges to know when a
 * description can be closed, to answer TEST with the holder's identity,
 * and to bound what a peer can make the server hold.
 *
 * One mutex guards the table; every function here takes it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "nlm_internal.h"

int nlm_table_init(struct nlm_table *t, uint32_t max, rpcrdma_nlm_open_fn open,
		   void *open_arg)
{
	memset(t, 0, sizeof(*t));
	t->t_max = max ? max : RPCRDMA_NLM_MAX_LOCKS_DEFAULT;
	t->t_open = open;
	t->t_open_arg = open_arg;
	return -pthread_mutex_init(&t->t_lock, NULL);
}

void nlm_who_save(struct nlm_who *w, const struct rpcrdma_nlm_caller *c)
{
	memset(w, 0, sizeof(*w));
	w->wh_caller = *c;
	w->wh_caller.nc_peer = NULL;
	if (c->nc_peer)
		nlm_addr_copy(&w->wh_peer, c->nc_peer);
}

const struct rpcrdma_nlm_caller *nlm_who_caller(struct nlm_who *w)
{
	w->wh_caller.nc_peer = (const struct sockaddr *)&w->wh_peer;
	return &w->wh_caller;
}

/* ---- hosts ---- */

static const char *caller_of(const struct nlm_lockargs *a)
{
	return a->la_caller ? a->la_caller : "";
}

/* the host (@peer's address, @name): the key of a host */
static struct nlm_host *host_find(struct nlm_table *t, const struct sockaddr *peer,
				  const char *name)
{
	for (struct nlm_host *h = t->t_hosts; h; h = h->h_next)
		if (nlm_addr_equal((struct sockaddr *)&h->h_addr, peer) &&
		    strcmp(h->h_name, name) == 0)
			return h;
	return NULL;
}

/* What one machine (nlm_host_equal()) holds of each bounded list. */
struct nlm_use {
	uint32_t u_hosts, u_holders, u_ranges, u_waiters, u_shares;
};

/* machine_use - the entries of the machine at @peer, all its caller_names
 * together (t_lock held; one pass over each list) */
static void machine_use(const struct nlm_table *t, const struct sockaddr *peer,
			struct nlm_use *u)
{
	memset(u, 0, sizeof(*u));
	for (const struct nlm_host *h = t->t_hosts; h; h = h->h_next)
		u->u_hosts += nlm_host_equal((const struct sockaddr *)&h->h_addr, peer);
	for (const struct nlm_holder *ho = t->t_holders; ho; ho = ho->ho_next)
		if (nlm_host_equal((const struct sockaddr *)&ho->ho_owner.o_host->h_addr, peer)) {
			u->u_holders++;
			u->u_ranges += ho->ho_set.rs_n;
		}
	for (const struct nlm_waiter *w = t->t_waiters; w; w = w->w_next)
		u->u_waiters += nlm_host_equal((const struct sockaddr *)&w->w_owner.o_host->h_addr,
					       peer);
	for (const struct nlm_share *sh = t->t_shares; sh; sh = sh->sh_next)
		u->u_shares += nlm_host_equal((const struct sockaddr *)&sh->sh_owner.o_host->h_addr,
					      peer);
}

static struct nlm_host *host_of(struct nlm_table *t, const struct nlm_lockargs *a)
{
	return host_find(t, a->la_peer, caller_of(a));
}

/* the host of a call, created unused (h_users 0); NULL when the table
 * holds t_max hosts or memory is short */
static struct nlm_host *host_get(struct nlm_table *t, const struct nlm_lockargs *a)
{
	struct nlm_host *h = host_of(t, a);

	if (!h) {
		struct nlm_use u;

		if (t->t_nhosts >= t->t_max)
			return NULL;
		/* new caller_names from one machine: its share only */
		machine_use(t, a->la_peer, &u);
		if (u.u_hosts >= NLM_MACHINE_SHARE(t->t_max))
			return NULL;
		h = calloc(1, sizeof(*h));
		if (!h)
			return NULL;
		h->h_addrlen = nlm_addr_copy(&h->h_addr, a->la_peer);
		snprintf(h->h_name, sizeof(h->h_name), "%s", caller_of(a));
		h->h_next = t->t_hosts;
		t->t_hosts = h;
		t->t_nhosts++;
	}
	if (a->la_local)
		nlm_addr_copy(&h->h_local, a->la_local);
	return h;
}

static void host_unlink_free(struct nlm_table *t, struct nlm_host *h)
{
	for (struct nlm_host **pp = &t->t_hosts; *pp; pp = &(*pp)->h_next)
		if (*pp == h) {
			*pp = h->h_next;
			t->t_nhosts--;
			free(h);
			return;
		}
}

/*
 * After a host's use count changed: a host nothing uses is forgotten (and
 * its record dropped); one in use is recorded (t_host_event sets
 * h_recorded, or leaves it clear when the record cannot be written and is
 * asked again on the next change).
 */
static void host_settle(struct nlm_table *t, struct nlm_host *h)
{
	if (h->h_users == 0) {
		if (h->h_recorded && t->t_host_event)
			t->t_host_event(t->t_host_event_arg, h, false);
		host_unlink_free(t, h);
	} else if (!h->h_recorded && t->t_host_event) {
		t->t_host_event(t->t_host_event_arg, h, true);
	}
}

static void host_use(struct nlm_table *t, struct nlm_host *h)
{
	h->h_users++;
	host_settle(t, h);
}

static void host_unuse(struct nlm_table *t, struct nlm_host *h)
{
	if (h->h_users)
		h->h_users--;
	host_settle(t, h);
}

/* a host created by host_get that nothing came to use */
static void host_put_unused(struct nlm_table *t, struct nlm_host *h)
{
	if (h && h->h_users == 0)
		host_unlink_free(t, h);
}

/* ---- owners, holders ---- */

static void owner_set(struct nlm_owner *o, struct nlm_host *h,
		      const struct nlm_lockargs *a)
{
	o->o_host = h;
	o->o_svid = a->la_svid;
	o->o_ohlen = a->la_ohlen;
	if (a->la_ohlen)
		memcpy(o->o_oh, a->la_oh, a->la_ohlen);
}

static bool owner_is(const struct nlm_owner *o, const struct nlm_host *h,
		     const struct nlm_lockargs *a)
{
	return o->o_host == h && o->o_svid == a->la_svid &&
	       o->o_ohlen == a->la_ohlen && memcmp(o->o_oh, a->la_oh, a->la_ohlen) == 0;
}

static struct nlm_holder *holder_find(struct nlm_table *t, const struct nlm_host *h,
				      const struct nlm_lockargs *a, dev_t dev, ino_t ino)
{
	for (struct nlm_holder *ho = t->t_holders; ho; ho = ho->ho_next)
		if (ho->ho_dev == dev && ho->ho_ino == ino && owner_is(&ho->ho_owner, h, a))
			return ho;
	return NULL;
}

static void holder_free(struct nlm_table *t, struct nlm_holder *ho)
{
	for (struct nlm_holder **pp = &t->t_holders; *pp; pp = &(*pp)->ho_next)
		if (*pp == ho) {
			*pp = ho->ho_next;
			break;
		}
	t->t_nholders--;
	t->t_nranges -= ho->ho_set.rs_n;
	fs_lock_close(&ho->ho_ld); /* the description's locks go with it */
	nlm_rset_free(&ho->ho_set);
	host_unuse(t, ho->ho_owner.o_host);
	free(ho);
}

/* ---- files ---- */

/* the caller of @a; a call without one is @a's address with AUTH_NONE */
static const struct rpcrdma_nlm_caller *who_of(const struct nlm_lockargs *a,
					       struct rpcrdma_nlm_caller *anon)
{
	if (a->la_who)
		return a->la_who;
	memset(anon, 0, sizeof(*anon));
	anon->nc_peer = a->la_peer;
	return anon;
}

static uint32_t errno_to_stat(int err)
{
	switch (err) {
	case -ESTALE:
	case -EBADMSG:
	case -ENOENT:
		return NLM4_STALE_FH;
	/* not listed on the export, ro, no permission: NLM4_FAILED, what
	 * knfsd's lockd answers for every nfsd_open error but a stale
	 * handle (fs/nfsd/lockd.c, nlm_fopen) */
	case -ENOLCK:
	case -ENOMEM:
	case -EMFILE:
	case -ENFILE:
		return NLM4_DENIED_NOLOCKS;
	case -EDEADLK:
		return NLM4_DEADLCK;
	case -EFBIG:
	case -EOVERFLOW:
		return NLM4_FBIG;
	default:
		return NLM4_FAILED;
	}
}

void nlm_file_close(struct rpcrdma_nlm_file *f)
{
	fs_lock_close(&f->nf_ld);
}

/*
 * The handle's file for @who, who must have access @acc (O_RDONLY,
 * O_WRONLY, O_RDWR).  On error @f holds nothing.
 */
static int file_open(struct nlm_table *t, const struct rpcrdma_nlm_caller *who,
		     const uint8_t *fh, uint32_t fhlen, int acc,
		     struct rpcrdma_nlm_file *f)
{
	int err;

	memset(f, 0, sizeof(*f));
	err = t->t_open(t->t_open_arg, who, fh, fhlen, acc, f);
	if (err)
		memset(f, 0, sizeof(*f));
	return err;
}

/* the access a lock of type @excl needs */
static int acc_for(bool excl)
{
	return excl ? O_WRONLY : O_RDONLY;
}

/* was a caller of the holder's owner found to have access @acc? */
static bool holder_may(const struct nlm_holder *ho, int acc)
{
	return ho->ho_accmode == O_RDWR || ho->ho_accmode == acc;
}

/* a caller of the holder's owner was found to have @acc as well */
static void holder_allow(struct nlm_holder *ho, int acc)
{
	if (!holder_may(ho, acc))
		ho->ho_accmode = O_RDWR;
}

/*
 * fs_lock() of @r for description @ld: set (F_RDLCK, F_WRLCK), clear
 * (F_UNLCK), or with @test find a conflict (into @cf).  A set passes no
 * @cf (NULL): who holds the bytes is asked only when a caller wants to
 * know (conflict_of()), as the posix backend then makes no F_OFD_GETLK.
 * Return: 0, -EAGAIN (a conflict), or fs_lock()'s other errors.
 */
static int range_lock(struct fs_lockd *ld, const struct nlm_range *r, int type,
		      bool test, struct fs_lock_conflict *cf)
{
	uint64_t off, len;

	nlm_range_to_wire(r, &off, &len);
	return fs_lock(ld, type, off, len, test, cf);
}

/* who holds what conflicts with @r on the file @dev/@ino, as description
 * @ld sees it (its own locks never conflict) */
static bool conflict_of(struct nlm_table *t, struct fs_lockd *ld, dev_t dev,
			ino_t ino, const struct nlm_range *r, struct nlm_conflict *c)
{
	struct fs_lock_conflict cf;
	struct nlm_range got;

	memset(&cf, 0, sizeof(cf));
	if (range_lock(ld, r, r->nr_excl ? F_WRLCK : F_RDLCK, true, &cf) != -EAGAIN)
		return false;
	if (!c)
		return true;
	memset(c, 0, sizeof(*c));
	got.nr_start = cf.cf_start;
	got.nr_end = cf.cf_len && cf.cf_len - 1 <= NLM_OFFSET_MAX - cf.cf_start
			     ? cf.cf_start + cf.cf_len - 1
			     : NLM_OFFSET_MAX;
	got.nr_excl = cf.cf_type == F_WRLCK;
	nlm_range_to_wire(&got, &c->c_offset, &c->c_len);
	c->c_excl = got.nr_excl;
	c->c_svid = cf.cf_pid > 0 ? (uint32_t)cf.cf_pid : 0; /* a local process */
	/* one of our owners? report its svid and owner handle */
	for (struct nlm_holder *ho = t->t_holders; ho; ho = ho->ho_next) {
		if (ho->ho_dev != dev || ho->ho_ino != ino || &ho->ho_ld == ld)
			continue;
		if (nlm_rset_find_conflict(&ho->ho_set, r)) {
			c->c_svid = ho->ho_owner.o_svid;
			c->c_ohlen = ho->ho_owner.o_ohlen;
			memcpy(c->c_oh, ho->ho_owner.o_oh, c->c_ohlen);
			break;
		}
	}
	return true;
}

uint32_t nlm_table_test(struct nlm_table *t, const struct nlm_lockargs *a,
			struct nlm_conflict *c)
{
	struct rpcrdma_nlm_caller anon;
	struct nlm_range r;
	struct nlm_host *h;
	struct nlm_holder *ho;
	struct rpcrdma_nlm_file f;
	int err;
	uint32_t stat;

	if (nlm_range_from_wire(a->la_offset, a->la_len, &r))
		return NLM4_FBIG;
	r.nr_excl = a->la_excl;
	err = file_open(t, who_of(a, &anon), a->la_fh, a->la_fhlen, acc_for(a->la_excl),
			&f);
	if (err)
		return errno_to_stat(err);
	pthread_mutex_lock(&t->t_lock);
	h = host_of(t, a);
	ho = h ? holder_find(t, h, a, f.nf_dev, f.nf_ino) : NULL;
	/* the owner's own description: its own locks never conflict */
	stat = conflict_of(t, ho ? &ho->ho_ld : &f.nf_ld, f.nf_dev, f.nf_ino, &r, c)
		       ? NLM4_DENIED
		       : NLM4_GRANTED;
	if (stat == NLM4_DENIED)
		t->t_stats.ns_denied++;
	pthread_mutex_unlock(&t->t_lock);
	nlm_file_close(&f);
	return stat;
}

static struct nlm_waiter *waiter_find(struct nlm_table *t, const struct nlm_host *h,
				      const struct nlm_lockargs *a, dev_t dev, ino_t ino,
				      const struct nlm_range *r, bool any_type)
{
	for (struct nlm_waiter *w = t->t_waiters; w; w = w->w_next)
		if (w->w_dev == dev && w->w_ino == ino && owner_is(&w->w_owner, h, a) &&
		    w->w_range.nr_start == r->nr_start && w->w_range.nr_end == r->nr_end &&
		    (any_type || w->w_range.nr_excl == r->nr_excl))
			return w;
	return NULL;
}

static void waiter_unlink(struct nlm_table *t, struct nlm_waiter *w)
{
	for (struct nlm_waiter **pp = &t->t_waiters; *pp; pp = &(*pp)->w_next)
		if (*pp == w) {
			*pp = w->w_next;
			t->t_nwaiters--;
			return;
		}
}

static void waiter_free(struct nlm_table *t, struct nlm_waiter *w)
{
	waiter_unlink(t, w);
	host_unuse(t, w->w_owner.o_host);
	free(w);
}

/*
 * Take @r with the owner's description: the holder's, or with @ho NULL a
 * new holder's made from @f (whose description it then keeps: @f holds
 * nothing after a success), its caller found to have access @acc, which
 * a holder must have been found to have too (holder_allow()).  Called
 * with t_lock held.
 * Return: 0, -EAGAIN (conflict), -ENOSPC (bounds), or -errno.
 */
static int take(struct nlm_table *t, struct nlm_host *h, const struct nlm_owner *o,
		struct nlm_holder *ho, struct rpcrdma_nlm_file *f, int acc,
		const uint8_t *fh, uint32_t fhlen, const struct nlm_range *r)
{
	int type = r->nr_excl ? F_WRLCK : F_RDLCK;
	uint32_t share = NLM_MACHINE_SHARE(t->t_max);
	struct nlm_use u;
	int delta, err;

	if (!ho && t->t_nholders >= t->t_max)
		return -ENOSPC;
	if (t->t_nranges + 2 > t->t_max)
		return -ENOSPC;
	/* and the machine's share of both, all its caller_names together */
	machine_use(t, (const struct sockaddr *)&h->h_addr, &u);
	if ((!ho && u.u_holders >= share) || u.u_ranges + 2 > share)
		return -ENOSPC;
	if (ho && !holder_may(ho, acc))
		return -EBADF;
	if (!ho) {
		ho = calloc(1, sizeof(*ho));
		if (!ho)
			return -ENOMEM;
		ho->ho_owner = *o;
		ho->ho_owner.o_host = h;
		ho->ho_dev = f->nf_dev;
		ho->ho_ino = f->nf_ino;
		ho->ho_fhlen = fhlen;
		memcpy(ho->ho_fh, fh, fhlen);
		ho->ho_accmode = acc;
		err = range_lock(&f->nf_ld, r, type, false, NULL);
		if (err) {
			free(ho);
			return err;
		}
		err = nlm_rset_apply(&ho->ho_set, r, false, UINT32_MAX, &delta);
		if (err) {
			free(ho); /* the caller closes @f, which drops the lock */
			return err;
		}
		ho->ho_ld = f->nf_ld;
		memset(&f->nf_ld, 0, sizeof(f->nf_ld));
		ho->ho_next = t->t_holders;
		t->t_holders = ho;
		t->t_nholders++;
		t->t_nranges += (uint32_t)delta;
		host_use(t, h);
		return 0;
	}
	err = range_lock(&ho->ho_ld, r, type, false, NULL);
	if (err)
		return err;
	err = nlm_rset_apply(&ho->ho_set, r, false, UINT32_MAX, &delta);
	if (err) {
		/* cannot mirror it: give the bytes back rather than hold
		 * a lock the table does not know */
		range_lock(&ho->ho_ld, r, F_UNLCK, false, NULL);
		if (nlm_rset_apply(&ho->ho_set, r, true, UINT32_MAX, &delta) == 0)
			t->t_nranges = (uint32_t)((int64_t)t->t_nranges + delta);
		return err;
	}
	t->t_nranges = (uint32_t)((int64_t)t->t_nranges + delta);
	return 0;
}

/* release @r of the holder; the description closes with its last range */
static void give_back(struct nlm_table *t, struct nlm_holder *ho,
		      const struct nlm_range *r)
{
	int delta;

	range_lock(&ho->ho_ld, r, F_UNLCK, false, NULL);
	if (nlm_rset_apply(&ho->ho_set, r, true, UINT32_MAX, &delta) == 0)
		t->t_nranges = (uint32_t)((int64_t)t->t_nranges + delta);
	/* else (no memory to split a range) the backend released the bytes
	 * and the mirror still lists them: the description stays open until
	 * the owner's other unlocks or FREE_ALL, never longer */
	if (ho->ho_set.rs_n == 0)
		holder_free(t, ho);
}

uint32_t nlm_table_lock(struct nlm_table *t, const struct nlm_lockargs *a,
			bool block, const uint8_t *cookie, uint32_t cookielen,
			struct nlm_conflict *c)
{
	struct nlm_range r;
	struct nlm_owner o;
	struct nlm_host *h;
	struct nlm_holder *ho;
	struct nlm_waiter *w;
	struct rpcrdma_nlm_caller anon;
	struct rpcrdma_nlm_file f;
	dev_t dev;
	ino_t ino;
	int acc = acc_for(a->la_excl), err;
	uint32_t stat;

	if (nlm_range_from_wire(a->la_offset, a->la_len, &r))
		return NLM4_FBIG;
	r.nr_excl = a->la_excl;
	/* the caller's access for this lock, checked now whatever the owner
	 * holds: a write lock needs write access, a read lock read access */
	err = file_open(t, who_of(a, &anon), a->la_fh, a->la_fhlen, acc, &f);
	if (err) {
		if (errno_to_stat(err) == NLM4_STALE_FH)
			t->t_stats.ns_stale++;
		return errno_to_stat(err);
	}
	dev = f.nf_dev;
	ino = f.nf_ino;
	pthread_mutex_lock(&t->t_lock);
	h = host_get(t, a);
	if (!h) {
		stat = NLM4_DENIED_NOLOCKS;
		t->t_stats.ns_nolocks++;
		goto out;
	}
	owner_set(&o, h, a);
	ho = holder_find(t, h, a, dev, ino);
	if (ho)
		holder_allow(ho, acc);
	err = take(t, h, &o, ho, &f, acc, a->la_fh, a->la_fhlen, &r);
	/* held by expired NFSv4.1 clients: revoked, then once more */
	if (err == -EAGAIN && t->t_conflict && t->t_conflict(t->t_conflict_arg, dev, ino) > 0)
		err = take(t, h, &o, ho, &f, acc, a->la_fh, a->la_fhlen, &r);
	if (err == 0) {
		/* a retransmitted or re-sent blocking request is answered */
		w = waiter_find(t, h, a, dev, ino, &r, false);
		if (w)
			waiter_free(t, w);
		t->t_stats.ns_granted++;
		stat = NLM4_GRANTED;
		goto out;
	}
	if (err != -EAGAIN) {
		stat = err == -ENOSPC ? NLM4_DENIED_NOLOCKS : errno_to_stat(err);
		if (stat == NLM4_DENIED_NOLOCKS)
			t->t_stats.ns_nolocks++;
		goto out;
	}
	if (c)
		conflict_of(t, ho ? &ho->ho_ld : &f.nf_ld, dev, ino, &r, c);
	if (!block) {
		t->t_stats.ns_denied++;
		stat = NLM4_DENIED;
		goto out;
	}
	stat = NLM4_BLOCKED;
	w = waiter_find(t, h, a, dev, ino, &r, false);
	if (!w) {
		struct nlm_use u;

		machine_use(t, (const struct sockaddr *)&h->h_addr, &u);
		if (t->t_nwaiters >= t->t_max || u.u_waiters >= NLM_MACHINE_SHARE(t->t_max) ||
		    !(w = calloc(1, sizeof(*w)))) {
			t->t_stats.ns_nolocks++;
			stat = NLM4_DENIED_NOLOCKS;
			goto out;
		}
		w->w_owner = o;
		nlm_who_save(&w->w_who, who_of(a, &anon));
		memcpy(w->w_fh, a->la_fh, a->la_fhlen);
		w->w_fhlen = a->la_fhlen;
		w->w_range = r;
		w->w_dev = dev;
		w->w_ino = ino;
		/* FIFO: append */
		struct nlm_waiter **pp = &t->t_waiters;

		while (*pp)
			pp = &(*pp)->w_next;
		*pp = w;
		t->t_nwaiters++;
		host_use(t, h);
	}
	w->w_cookielen = cookielen;
	if (cookielen)
		memcpy(w->w_cookie, cookie, cookielen);
	t->t_stats.ns_blocked++;
out:
	host_put_unused(t, h);
	pthread_mutex_unlock(&t->t_lock);
	nlm_file_close(&f); /* taken by a new holder: holds nothing */
	return stat;
}

/*
 * UNLOCK of a file that can no longer be opened by its handle (removed
 * while locked): release what the owner holds under that handle, so
 * nothing stays locked on an inode only our description keeps alive.
 * Return: whether the owner held anything there.
 */
static bool unlock_by_handle(struct nlm_table *t, const struct nlm_lockargs *a,
			     const struct nlm_range *r)
{
	struct nlm_host *h;
	struct nlm_holder *ho;
	bool found = false;

	pthread_mutex_lock(&t->t_lock);
	h = host_of(t, a);
	for (ho = h ? t->t_holders : NULL; ho; ho = ho->ho_next)
		if (owner_is(&ho->ho_owner, h, a) && ho->ho_fhlen == a->la_fhlen &&
		    memcmp(ho->ho_fh, a->la_fh, a->la_fhlen) == 0) {
			give_back(t, ho, r);
			found = true;
			break;
		}
	pthread_mutex_unlock(&t->t_lock);
	return found;
}

uint32_t nlm_table_unlock(struct nlm_table *t, const struct nlm_lockargs *a)
{
	struct rpcrdma_nlm_caller anon;
	struct nlm_range r;
	struct nlm_host *h;
	struct nlm_holder *ho;
	struct nlm_waiter *w;
	struct rpcrdma_nlm_file f;
	dev_t dev;
	ino_t ino;
	int err;

	if (nlm_range_from_wire(a->la_offset, a->la_len, &r))
		return NLM4_FBIG;
	err = file_open(t, who_of(a, &anon), a->la_fh, a->la_fhlen, O_RDONLY, &f);
	if (err)
		return unlock_by_handle(t, a, &r) ? NLM4_GRANTED : errno_to_stat(err);
	dev = f.nf_dev;
	ino = f.nf_ino;
	nlm_file_close(&f);
	pthread_mutex_lock(&t->t_lock);
	h = host_of(t, a);
	if (h) {
		/* a waiter for these bytes is cancelled with them */
		r.nr_excl = true;
		while ((w = waiter_find(t, h, a, dev, ino, &r, true)))
			waiter_free(t, w);
	}
	h = host_of(t, a);
	ho = h ? holder_find(t, h, a, dev, ino) : NULL;
	if (ho)
		give_back(t, ho, &r);
	pthread_mutex_unlock(&t->t_lock);
	/* unlocking what one does not hold is not an error (XNFS) */
	return NLM4_GRANTED;
}

/*
 * CANCEL of a file that cannot be opened for the caller (removed, or its
 * access taken away while it waited): the owner's waiter for the range
 * under that handle goes.  Return: whether there was one.
 */
static bool cancel_by_handle(struct nlm_table *t, const struct nlm_lockargs *a,
			     const struct nlm_range *r)
{
	struct nlm_host *h;
	struct nlm_waiter *w;
	bool found = false;

	pthread_mutex_lock(&t->t_lock);
	h = host_of(t, a);
	for (w = h ? t->t_waiters : NULL; w; w = w->w_next)
		if (owner_is(&w->w_owner, h, a) && w->w_fhlen == a->la_fhlen &&
		    memcmp(w->w_fh, a->la_fh, a->la_fhlen) == 0 &&
		    w->w_range.nr_start == r->nr_start && w->w_range.nr_end == r->nr_end &&
		    w->w_range.nr_excl == r->nr_excl) {
			waiter_free(t, w);
			found = true;
			break;
		}
	pthread_mutex_unlock(&t->t_lock);
	return found;
}

uint32_t nlm_table_cancel(struct nlm_table *t, const struct nlm_lockargs *a)
{
	struct rpcrdma_nlm_caller anon;
	struct nlm_range r;
	struct nlm_host *h;
	struct nlm_waiter *w;
	struct rpcrdma_nlm_file f;
	dev_t dev;
	ino_t ino;
	int err;

	if (nlm_range_from_wire(a->la_offset, a->la_len, &r))
		return NLM4_FBIG;
	r.nr_excl = a->la_excl;
	err = file_open(t, who_of(a, &anon), a->la_fh, a->la_fhlen, O_RDONLY, &f);
	if (err)
		return cancel_by_handle(t, a, &r) ? NLM4_GRANTED : errno_to_stat(err);
	dev = f.nf_dev;
	ino = f.nf_ino;
	nlm_file_close(&f);
	pthread_mutex_lock(&t->t_lock);
	h = host_of(t, a);
	w = h ? waiter_find(t, h, a, dev, ino, &r, false) : NULL;
	if (w)
		waiter_free(t, w);
	pthread_mutex_unlock(&t->t_lock);
	/* as the kernel's lockd: granted whether or not it still waited */
	return NLM4_GRANTED;
}

uint32_t nlm_table_share(struct nlm_table *t, const struct nlm_lockargs *a,
			 uint32_t mode, uint32_t access, bool unshare)
{
	struct rpcrdma_nlm_caller anon;
	struct rpcrdma_nfs3_server *srv;
	struct nlm_host *h;
	struct nlm_share *sh, **pp;
	struct rpcrdma_nlm_file f;
	dev_t dev;
	ino_t ino;
	uint64_t id;
	int acc, err;
	uint32_t stat = NLM4_GRANTED;

	if (mode > 3 || access > 3)
		return NLM4_FAILED;
	/* fsa_W (2) or fsa_RW (3): the share is for writing */
	acc = !unshare && (access & 2) ? ((access & 1) ? O_RDWR : O_WRONLY) : O_RDONLY;
	err = file_open(t, who_of(a, &anon), a->la_fh, a->la_fhlen, acc, &f);
	if (err)
		return errno_to_stat(err);
	dev = f.nf_dev;
	ino = f.nf_ino;
	srv = f.nf_srv;
	nlm_file_close(&f);
	pthread_mutex_lock(&t->t_lock);
	h = host_get(t, a);
	if (!h) {
		t->t_stats.ns_nolocks++;
		pthread_mutex_unlock(&t->t_lock);
		return NLM4_DENIED_NOLOCKS;
	}
	h->h_users++; /* pinned while its shares change */
	/* shares have no svid: the owner is (host, oh); a new SHARE of an
	 * owner replaces its old one, once no other owner's share refuses it */
	struct nlm_share *mine = NULL, **mine_pp = NULL;

	for (pp = &t->t_shares; (sh = *pp); pp = &sh->sh_next) {
		if (sh->sh_dev != dev || sh->sh_ino != ino)
			continue;
		if (sh->sh_owner.o_host == h && sh->sh_owner.o_ohlen == a->la_ohlen &&
		    memcmp(sh->sh_owner.o_oh, a->la_oh, a->la_ohlen) == 0) {
			mine = sh;
			mine_pp = pp;
		} else if (!unshare &&
			   ((sh->sh_access & mode) || (sh->sh_mode & access))) {
			t->t_stats.ns_denied++;
			stat = NLM4_DENIED;
			goto out;
		}
	}
	if (unshare) {
		if (mine) {
			*mine_pp = mine->sh_next;
			t->t_nshares--;
			h->h_users--; /* settled at the end */
			if (mine->sh_srv)
				nlm_fs_unshare(mine->sh_srv, mine->sh_id);
			free(mine);
		}
		goto out;
	}
	struct nlm_use u;

	machine_use(t, (const struct sockaddr *)&h->h_addr, &u);
	if (!mine && (t->t_nshares >= t->t_max || u.u_shares >= NLM_MACHINE_SHARE(t->t_max))) {
		t->t_stats.ns_nolocks++;
		stat = NLM4_DENIED_NOLOCKS;
		goto out;
	}
	/* the layer's table: NFSv4.1 opens, other servers (nlm_fh.c) */
	id = mine && mine->sh_srv == srv ? mine->sh_id : ++t->t_share_next;
	if (srv) {
		err = nlm_fs_share(srv, a->la_fh, a->la_fhlen, id, access, mode);
		if (err == -EBUSY) {
			t->t_stats.ns_denied++;
			stat = NLM4_DENIED;
			goto out;
		}
		if (err) {
			stat = errno_to_stat(err);
			t->t_stats.ns_nolocks += stat == NLM4_DENIED_NOLOCKS;
			goto out;
		}
	}
	if (mine) {
		if (mine->sh_srv && (mine->sh_srv != srv || mine->sh_id != id))
			nlm_fs_unshare(mine->sh_srv, mine->sh_id);
		mine->sh_srv = srv;
		mine->sh_id = id;
		mine->sh_mode = mode;
		mine->sh_access = access;
		goto out;
	}
	sh = calloc(1, sizeof(*sh));
	if (!sh) {
		if (srv)
			nlm_fs_unshare(srv, id);
		t->t_stats.ns_nolocks++;
		stat = NLM4_DENIED_NOLOCKS;
		goto out;
	}
	owner_set(&sh->sh_owner, h, a);
	sh->sh_owner.o_svid = 0;
	sh->sh_dev = dev;
	sh->sh_ino = ino;
	sh->sh_mode = mode;
	sh->sh_access = access;
	sh->sh_srv = srv;
	sh->sh_id = id;
	sh->sh_next = t->t_shares;
	t->t_shares = sh;
	t->t_nshares++;
	h->h_users++;
out:
	host_unuse(t, h); /* the pin; records or forgets the host */
	pthread_mutex_unlock(&t->t_lock);
	return stat;
}

/* everything of one host; frees the host (its last user goes) */
static void free_host_locked(struct nlm_table *t, struct nlm_host *h)
{
	struct nlm_holder *ho, *hn;
	struct nlm_waiter *w, *wn;
	struct nlm_share *sh, **pp;

	h->h_users++; /* keep it while its users go */
	for (ho = t->t_holders; ho; ho = hn) {
		hn = ho->ho_next;
		if (ho->ho_owner.o_host == h)
			holder_free(t, ho);
	}
	for (w = t->t_waiters; w; w = wn) {
		wn = w->w_next;
		if (w->w_owner.o_host == h)
			waiter_free(t, w);
	}
	for (pp = &t->t_shares; (sh = *pp);) {
		if (sh->sh_owner.o_host == h) {
			*pp = sh->sh_next;
			t->t_nshares--;
			h->h_users--;
			if (sh->sh_srv)
				nlm_fs_unshare(sh->sh_srv, sh->sh_id);
			free(sh);
		} else {
			pp = &sh->sh_next;
		}
	}
	h->h_users = 0;
	host_settle(t, h);
}

unsigned nlm_table_free_host(struct nlm_table *t, const char *name,
			     const struct sockaddr *addr)
{
	char num[INET6_ADDRSTRLEN];
	unsigned n = 0;
	struct nlm_host *h, *hn;
	bool every;

	if (!name || !addr)
		return 0;
	every = strcmp(name, nlm_addr_str(addr, num, sizeof(num))) == 0;
	pthread_mutex_lock(&t->t_lock);
	for (h = t->t_hosts; h; h = hn) {
		hn = h->h_next;
		if (nlm_addr_equal((struct sockaddr *)&h->h_addr, addr) &&
		    (every || strcmp(h->h_name, name) == 0)) {
			free_host_locked(t, h);
			n++;
		}
	}
	t->t_stats.ns_freed_hosts += n;
	pthread_mutex_unlock(&t->t_lock);
	return n;
}

void nlm_table_retry(struct nlm_table *t, struct nlm_grant **out)
{
	struct nlm_waiter *w, *wn;
	struct nlm_grant **tail = out;

	*out = NULL;
	pthread_mutex_lock(&t->t_lock);
	for (w = t->t_waiters; w; w = wn) {
		struct nlm_host *h = w->w_owner.o_host;
		struct nlm_holder *ho = NULL;
		struct nlm_grant *g;
		struct rpcrdma_nlm_file f;
		int acc, err;

		wn = w->w_next;
		for (ho = t->t_holders; ho; ho = ho->ho_next)
			if (ho->ho_dev == w->w_dev && ho->ho_ino == w->w_ino &&
			    ho->ho_owner.o_host == h && ho->ho_owner.o_svid == w->w_owner.o_svid &&
			    ho->ho_owner.o_ohlen == w->w_owner.o_ohlen &&
			    !memcmp(ho->ho_owner.o_oh, w->w_owner.o_oh, w->w_owner.o_ohlen))
				break;
		memset(&f, 0, sizeof(f));
		acc = acc_for(w->w_range.nr_excl);
		/* as its caller, unless the owner's holder was found to have
		 * the access already */
		if (!ho || !holder_may(ho, acc)) {
			err = file_open(t, nlm_who_caller(&w->w_who), w->w_fh, w->w_fhlen,
					acc, &f);
			if (err || f.nf_dev != w->w_dev || f.nf_ino != w->w_ino) {
				/* the file is gone, or the caller's access:
				 * nothing will ever grant it */
				nlm_file_close(&f);
				waiter_free(t, w);
				continue;
			}
			if (ho) {
				holder_allow(ho, acc);
				nlm_file_close(&f);
			}
		}
		g = calloc(1, sizeof(*g));
		if (!g) {
			nlm_file_close(&f);
			break;
		}
		err = take(t, h, &w->w_owner, ho, &f, acc, w->w_fh, w->w_fhlen,
			   &w->w_range);
		/* an NFSv4.1 client whose lease expired meanwhile gives way */
		if (err == -EAGAIN && t->t_conflict &&
		    t->t_conflict(t->t_conflict_arg, w->w_dev, w->w_ino) > 0)
			err = take(t, h, &w->w_owner, ho, &f, acc, w->w_fh, w->w_fhlen,
				   &w->w_range);
		nlm_file_close(&f);
		if (err) {
			free(g);
			continue; /* still blocked (or out of room: try later) */
		}
		g->g_w = *w;
		g->g_w.w_next = NULL;
		g->g_addrlen = h->h_addrlen;
		g->g_addr = h->h_addr;
		g->g_local = h->h_local;
		memcpy(g->g_name, h->h_name, sizeof(g->g_name));
		*tail = g;
		tail = &g->g_next;
		t->t_stats.ns_granted++;
		waiter_free(t, w); /* the holder keeps the host in use */
	}
	pthread_mutex_unlock(&t->t_lock);
}

void nlm_table_grant_refused(struct nlm_table *t, const struct nlm_grant *g)
{
	struct nlm_host *h;

	pthread_mutex_lock(&t->t_lock);
	t->t_stats.ns_callback_fail++;
	h = host_find(t, (const struct sockaddr *)&g->g_addr, g->g_name);
	for (struct nlm_holder *ho = h ? t->t_holders : NULL; ho; ho = ho->ho_next)
		if (ho->ho_dev == g->g_w.w_dev && ho->ho_ino == g->g_w.w_ino &&
		    ho->ho_owner.o_host == h && ho->ho_owner.o_svid == g->g_w.w_owner.o_svid &&
		    ho->ho_owner.o_ohlen == g->g_w.w_owner.o_ohlen &&
		    !memcmp(ho->ho_owner.o_oh, g->g_w.w_owner.o_oh, ho->ho_owner.o_ohlen)) {
			give_back(t, ho, &g->g_w.w_range);
			break;
		}
	pthread_mutex_unlock(&t->t_lock);
}

void nlm_table_destroy(struct nlm_table *t)
{
	pthread_mutex_lock(&t->t_lock);
	t->t_host_event = NULL; /* records stay for the next start */
	while (t->t_hosts)
		free_host_locked(t, t->t_hosts);
	pthread_mutex_unlock(&t->t_lock);
	pthread_mutex_destroy(&t->t_lock);
}
