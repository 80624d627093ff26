// SPDX-License-Identifier: MIT
/*
 * fs_hostname.c - the host names of peers, for the wildcard client
 * entries of an exports file ("*.example.com(rw)").
 *
 * A name counts only when it is confirmed: the reverse lookup of the
 * peer's address (getnameinfo, NI_NAMEREQD) gives a name, and the forward
 * lookup of that name (getaddrinfo) lists the peer's address, as
 * nfs-utils' mountd requires; whoever controls the reverse zone of an
 * address can put any name in it, but not in the forward zone of a name
 * they do not own.  A name that is an address literal is no name.
 *
 * Lookups block (seconds, when a DNS server does not answer), so none runs
 * on the caller's thread: resolver threads (FS_NAMES_RESOLVERS, started
 * at the first miss) take the addresses a miss queued, and the results,
 * names and their absence alike, stay in one cache of FS_NAMES_ENTRIES
 * entries for a time to live (FS_NAMES_TTL_SEC for a confirmed name,
 * FS_NAMES_NEG_TTL_SEC for none, FS_NAMES_AGAIN_TTL_SEC after a
 * temporary failure).  A caller on a transport thread only reads the cache
 * (a miss: FS_NAME_PENDING at once, the lookup queued); any other caller
 * waits for the resolvers at most FS_NAMES_WAIT_MS.
 *
 * A reverse zone that does not answer must not starve the others (a peer
 * controls its own zone): the resolvers take the oldest queued lookup
 * first; one network (an IPv4 /24, an IPv6 /64: a reverse zone is
 * delegated per network) holds at most FS_NAMES_NET_RESOLVERS resolvers
 * at once and FS_NAMES_NET_PENDING queued entries (a newcomer past that
 * is answered FS_NAME_PENDING, not queued); and a confirmed name past its
 * TTL is still served, for at most FS_NAMES_STALE_SEC more, while it is
 * looked up again (a temporary failure of that lookup keeps it, a final
 * answer replaces it).
 *
 * One cache for the process: names belong to addresses, not to an exports
 * table, so a reload keeps them (their TTL bounds how stale they get).
 * Owner prefixes: ne_ entry, nn_ the cache.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../common/rpc_tcp.h"
#include "fs.h"

enum {
	NE_FREE = 0,
	NE_PENDING,   /* queued or being resolved */
	NE_NAME,      /* ne_name is the confirmed name */
	NE_NONAME,    /* no name, an unconfirmed one, or a failure */
};

/* An address as the cache keys it: IPv4-mapped IPv6 made IPv4. */
struct fs_name_key {
	sa_family_t nk_family;
	uint8_t nk_addr[16];
};

struct fs_name_ent {
	uint8_t ne_state;
	bool ne_busy;               /* a resolver is looking it up */
	bool ne_stale;              /* PENDING: ne_name is the confirmed name of the
				     * last lookup, served until ne_stale_until */
	uint32_t ne_gen;            /* changes when the entry is given to another lookup */
	struct fs_name_key ne_key;
	uint64_t ne_expires;        /* ns of the resolver clock: NAME and NONAME */
	uint64_t ne_stale_until;    /* ns: NAME, and PENDING with ne_stale: the name
				     * is served until then */
	uint64_t ne_used;           /* ns: last use, for the replacement */
	uint64_t ne_seq;            /* PENDING: queue order (oldest first) */
	struct timespec ne_queued;  /* CLOCK_REALTIME when queued: waits end
				     * FS_NAMES_WAIT_MS after it */
	char ne_name[FS_NAME_MAX + 1];
};

static struct {
	pthread_mutex_t nn_lock;
	pthread_cond_t nn_work;     /* resolvers: a PENDING entry is free to take */
	pthread_cond_t nn_done;     /* waiters: an entry was resolved */
	unsigned nn_threads;        /* resolver threads started */
	unsigned nn_inflight;       /* lookups a resolver took and has not ended */
	uint32_t nn_gen;
	uint64_t nn_seq;            /* last ne_seq given */
	const struct fs_resolver *nn_res;
	struct fs_names_stats nn_stats;
	struct fs_name_ent nn_e[FS_NAMES_ENTRIES];
} nn = {
	.nn_lock = PTHREAD_MUTEX_INITIALIZER,
	.nn_work = PTHREAD_COND_INITIALIZER,
	.nn_done = PTHREAD_COND_INITIALIZER,
};

static uint64_t libc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const struct fs_resolver fs_libc_resolver = {
	.nr_getnameinfo = getnameinfo,
	.nr_getaddrinfo = getaddrinfo,
	.nr_freeaddrinfo = freeaddrinfo,
	.nr_now_ns = libc_now_ns,
	.nr_on_transport = rpcrdma_svc_on_transport_thread,
};

/* res - the resolver in force (nn_lock held or not: a pointer load). */
static const struct fs_resolver *res(void)
{
	const struct fs_resolver *r = __atomic_load_n(&nn.nn_res, __ATOMIC_ACQUIRE);

	return r ? r : &fs_libc_resolver;
}

/* names_wait - wait on nn_done until @dl (CLOCK_REALTIME), through the
 * seam; nn_lock held.  Return: 0 (woken), ETIMEDOUT, another error of
 * pthread_cond_timedwait(). */
static int names_wait(const struct timespec *dl)
{
	const struct fs_resolver *r = res();

	if (r->nr_cond_timedwait)
		return r->nr_cond_timedwait(&nn.nn_done, &nn.nn_lock, dl);
	return pthread_cond_timedwait(&nn.nn_done, &nn.nn_lock, dl);
}

/* key_of - @sa as a key; false when it is neither IPv4 nor IPv6. */
static bool key_of(const struct sockaddr *sa, struct fs_name_key *k)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memset(k, 0, sizeof(*k));
	if (sa->sa_family == AF_INET) {
		k->nk_family = AF_INET;
		memcpy(k->nk_addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	if (sa->sa_family != AF_INET6)
		return false;
	const uint8_t *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

	if (!memcmp(a, mapped, sizeof(mapped))) {
		k->nk_family = AF_INET;
		memcpy(k->nk_addr, a + 12, 4);
	} else {
		k->nk_family = AF_INET6;
		memcpy(k->nk_addr, a, 16);
	}
	return true;
}

/* key_sockaddr - the socket address of @k in @ss; its length. */
static socklen_t key_sockaddr(const struct fs_name_key *k, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (k->nk_family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, k->nk_addr, 4);
		return sizeof(*s4);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	memcpy(&s6->sin6_addr, k->nk_addr, 16);
	return sizeof(*s6);
}

static bool key_eq(const struct fs_name_key *a, const struct fs_name_key *b)
{
	return a->nk_family == b->nk_family &&
	       !memcmp(a->nk_addr, b->nk_addr, a->nk_family == AF_INET ? 4 : 16);
}

/* same_net - are @a and @b in one network: an IPv4 /24, an IPv6 /64? */
static bool same_net(const struct fs_name_key *a, const struct fs_name_key *b)
{
	return a->nk_family == b->nk_family &&
	       !memcmp(a->nk_addr, b->nk_addr, a->nk_family == AF_INET ? 3 : 8);
}

/* net_pending - the PENDING entries of @k's network (nn_lock held). */
static unsigned net_pending(const struct fs_name_key *k)
{
	unsigned n = 0;

	for (unsigned i = 0; i < FS_NAMES_ENTRIES; i++)
		n += nn.nn_e[i].ne_state == NE_PENDING && same_net(&nn.nn_e[i].ne_key, k);
	return n;
}

/* find - the entry of @k, or NULL (nn_lock held). */
static struct fs_name_ent *find(const struct fs_name_key *k)
{
	for (unsigned i = 0; i < FS_NAMES_ENTRIES; i++)
		if (nn.nn_e[i].ne_state != NE_FREE && key_eq(&nn.nn_e[i].ne_key, k))
			return &nn.nn_e[i];
	return NULL;
}

/*
 * claim - an entry for a new lookup of @k (nn_lock held): a free one, else
 * the least recently used of the resolved ones (expired or not).  NULL
 * when every entry is waiting for a resolver.
 */
static struct fs_name_ent *claim(const struct fs_name_key *k)
{
	struct fs_name_ent *best = NULL;

	for (unsigned i = 0; i < FS_NAMES_ENTRIES; i++) {
		struct fs_name_ent *e = &nn.nn_e[i];

		if (e->ne_state == NE_FREE) {
			best = e;
			break;
		}
		if (e->ne_state != NE_PENDING && (!best || e->ne_used < best->ne_used))
			best = e;
	}
	if (!best)
		return NULL;
	if (best->ne_state != NE_FREE)
		nn.nn_stats.ns_evictions++;
	best->ne_key = *k;
	return best;
}

/* numeric - is @name an address literal (not a host name)? */
static bool numeric(const char *name)
{
	uint8_t buf[16];

	return inet_pton(AF_INET, name, buf) == 1 || inet_pton(AF_INET6, name, buf) == 1;
}

/*
 * resolve - the confirmed name of @k into @name (FS_NAME_MAX + 1 bytes),
 * on a resolver thread.  Return: NE_NAME; NE_NONAME with *@again set when
 * a lookup failed for now (EAI_AGAIN: the answer may come later).
 */
static int resolve(const struct fs_resolver *r, const struct fs_name_key *k,
		   char *name, bool *again)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	struct sockaddr_storage ss;
	char host[NI_MAXHOST];
	socklen_t sl = key_sockaddr(k, &ss);
	bool confirmed = false;
	int rc;

	*again = false;
	rc = r->nr_getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), NULL, 0,
			       NI_NAMEREQD);
	if (rc) {
		*again = rc == EAI_AGAIN;
		return NE_NONAME;
	}
	host[sizeof(host) - 1] = '\0';
	if (!host[0] || strlen(host) > FS_NAME_MAX || numeric(host))
		return NE_NONAME;
	/* the forward lookup must list the address */
	rc = r->nr_getaddrinfo(host, NULL, &hints, &ai);
	if (rc) {
		*again = rc == EAI_AGAIN;
		return NE_NONAME;
	}
	for (struct addrinfo *i = ai; i && !confirmed; i = i->ai_next) {
		struct fs_name_key fk;

		if (i->ai_addr && key_of(i->ai_addr, &fk) && key_eq(&fk, k))
			confirmed = true;
	}
	r->nr_freeaddrinfo(ai);
	if (!confirmed)
		return NE_NONAME;
	memcpy(name, host, strlen(host) + 1); /* at most FS_NAME_MAX + 1 */
	return NE_NAME;
}

/*
 * next_lookup - the entry a resolver takes (nn_lock held): the PENDING one
 * queued first that nobody resolves yet and whose network holds fewer
 * than FS_NAMES_NET_RESOLVERS resolvers; NULL when none.
 */
static struct fs_name_ent *next_lookup(void)
{
	const struct fs_name_key *busy[FS_NAMES_RESOLVERS];
	struct fs_name_ent *best = NULL;
	unsigned nbusy = 0;

	for (unsigned i = 0; i < FS_NAMES_ENTRIES && nbusy < FS_NAMES_RESOLVERS; i++)
		if (nn.nn_e[i].ne_state == NE_PENDING && nn.nn_e[i].ne_busy)
			busy[nbusy++] = &nn.nn_e[i].ne_key;
	for (unsigned i = 0; i < FS_NAMES_ENTRIES; i++) {
		struct fs_name_ent *e = &nn.nn_e[i];
		unsigned n = 0;

		if (e->ne_state != NE_PENDING || e->ne_busy || (best && best->ne_seq < e->ne_seq))
			continue;
		for (unsigned j = 0; j < nbusy; j++)
			n += same_net(busy[j], &e->ne_key);
		if (n < FS_NAMES_NET_RESOLVERS)
			best = e;
	}
	return best;
}

/* One resolver thread: takes PENDING entries nobody resolves yet, oldest first. */
static void *resolver_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&nn.nn_lock);
	for (;;) {
		struct fs_name_ent *e = NULL;
		const struct fs_resolver *r;
		struct fs_name_key k;
		char name[FS_NAME_MAX + 1];
		uint32_t gen;
		bool again;
		int state;

		e = next_lookup();
		if (!e) {
			pthread_cond_wait(&nn.nn_work, &nn.nn_lock);
			continue;
		}
		e->ne_busy = true;
		k = e->ne_key;
		gen = e->ne_gen;
		r = res();
		nn.nn_inflight++; /* fs_names_set_resolver() waits for it */
		pthread_mutex_unlock(&nn.nn_lock);

		name[0] = '\0';
		state = resolve(r, &k, name, &again);

		pthread_mutex_lock(&nn.nn_lock);
		nn.nn_inflight--;
		if (e->ne_gen == gen && e->ne_state == NE_PENDING) {
			uint64_t ttl = state == NE_NAME ? FS_NAMES_TTL_SEC :
				       again ? FS_NAMES_AGAIN_TTL_SEC : FS_NAMES_NEG_TTL_SEC;
			uint64_t now = r->nr_now_ns();

			if (state != NE_NAME && again && e->ne_stale && now < e->ne_stale_until) {
				/* failed for now while the name is looked up
				 * again: keep the name (until its bound), ask
				 * again after FS_NAMES_AGAIN_TTL_SEC */
				e->ne_state = NE_NAME;
				e->ne_expires = now + ttl * 1000000000u;
				if (e->ne_expires > e->ne_stale_until)
					e->ne_expires = e->ne_stale_until;
			} else {
				e->ne_state = (uint8_t)state;
				e->ne_expires = now + ttl * 1000000000u;
				e->ne_stale_until = e->ne_expires +
						    FS_NAMES_STALE_SEC * 1000000000ull;
				memcpy(e->ne_name, name, sizeof(name));
			}
			e->ne_busy = false;
			e->ne_stale = false;
			if (state == NE_NAME)
				nn.nn_stats.ns_confirmed++;
			else
				nn.nn_stats.ns_no_name++;
		}
		/* its network's resolver place is free: another lookup of
		 * that network may be waiting for it */
		pthread_cond_signal(&nn.nn_work);
		pthread_cond_broadcast(&nn.nn_done);
	}
	return NULL;
}

/* start_resolvers - start the resolver threads if none runs (nn_lock
 * held).  Return: 0, or -errno when not even one could start. */
static int start_resolvers(void)
{
	pthread_attr_t at;
	int err = 0;

	if (nn.nn_threads)
		return 0;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	while (nn.nn_threads < FS_NAMES_RESOLVERS) {
		pthread_t t;

		err = pthread_create(&t, &at, resolver_main, NULL);
		if (err)
			break;
		nn.nn_threads++;
	}
	pthread_attr_destroy(&at);
	return nn.nn_threads ? 0 : -err;
}

/* fresh - a resolved entry whose time to live has not run out. */
static bool fresh(const struct fs_name_ent *e, uint64_t now)
{
	return (e->ne_state == NE_NAME || e->ne_state == NE_NONAME) && now < e->ne_expires;
}

/* stale - a confirmed name past its TTL that may still be served while it
 * is looked up again (a NAME entry, or a PENDING one keeping it). */
static bool stale(const struct fs_name_ent *e, uint64_t now)
{
	return (e->ne_state == NE_NAME || (e->ne_state == NE_PENDING && e->ne_stale)) &&
	       now < e->ne_stale_until;
}

bool fs_names_on_transport(void)
{
	const struct fs_resolver *r = res();

	/* the TCP side's thread (MOUNT, NLM, NSM) never waits either */
	return (r->nr_on_transport && r->nr_on_transport()) || rpc_tcp_on_thread();
}

enum fs_name_result fs_name_of(const struct sockaddr *peer, bool wait,
			       char *buf, size_t len)
{
	const struct fs_resolver *r = res();
	struct fs_name_key k;
	struct fs_name_ent *e;
	enum fs_name_result ret = FS_NAME_PENDING;
	uint64_t now;

	if (!peer || !key_of(peer, &k))
		return FS_NAME_NONE;
	if (fs_names_on_transport())
		wait = false;
	now = r->nr_now_ns();
	pthread_mutex_lock(&nn.nn_lock);
	nn.nn_stats.ns_lookups++;
	e = find(&k);
	if (e && fresh(e, now)) {
		nn.nn_stats.ns_hits++;
		goto answer;
	}
	if (!e || e->ne_state != NE_PENDING) {
		/* new, or expired: look it up (again), unless its network
		 * holds its share of the queue already */
		bool keep = e && stale(e, now);

		if (net_pending(&k) >= FS_NAMES_NET_PENDING) {
			if (keep)
				goto answer; /* the stale name; queued on a later call */
			nn.nn_stats.ns_net_full++;
			goto out;
		}
		if (!e)
			e = claim(&k);
		if (!e) {
			nn.nn_stats.ns_full++;
			goto out;
		}
		if (start_resolvers()) {
			if (keep)
				goto answer;
			/* no thread to resolve it: no name for now */
			e->ne_state = NE_NONAME;
			e->ne_expires = now + FS_NAMES_AGAIN_TTL_SEC * 1000000000ull;
			e->ne_used = now;
			goto answer;
		}
		e->ne_state = NE_PENDING;
		e->ne_busy = false;
		e->ne_stale = keep;
		e->ne_gen = ++nn.nn_gen;
		e->ne_seq = ++nn.nn_seq;
		e->ne_used = now;
		clock_gettime(CLOCK_REALTIME, &e->ne_queued);
		nn.nn_stats.ns_queued++;
		pthread_cond_signal(&nn.nn_work);
	}
	if (stale(e, now))
		goto answer; /* served while it is looked up again */
	if (!wait)
		goto out;
	{
		/* the wait ends FS_NAMES_WAIT_MS after the lookup was
		 * queued, not after this call came: while a lookup hangs
		 * (a reverse zone that does not answer), only the calls of
		 * its first second wait, the later ones are answered at once
		 * and cannot hold every worker */
		struct timespec dl = e->ne_queued;

		dl.tv_sec += FS_NAMES_WAIT_MS / 1000;
		dl.tv_nsec += (long)(FS_NAMES_WAIT_MS % 1000) * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		/* the entry may be given to another address once resolved:
		 * look it up by key each time */
		while ((e = find(&k)) && e->ne_state == NE_PENDING)
			if (names_wait(&dl) == ETIMEDOUT)
				break;
	}
	if (!e || e->ne_state == NE_PENDING) {
		nn.nn_stats.ns_timeouts++;
		goto out;
	}
answer:
	e->ne_used = now;
	if (e->ne_state == NE_NAME || stale(e, now)) {
		if (!fresh(e, now))
			nn.nn_stats.ns_stale++;
		snprintf(buf, len, "%s", e->ne_name);
		ret = FS_NAME_OK;
	} else {
		ret = FS_NAME_NONE;
	}
out:
	pthread_mutex_unlock(&nn.nn_lock);
	return ret;
}

void fs_names_set_resolver(const struct fs_resolver *r)
{
	pthread_mutex_lock(&nn.nn_lock);
	__atomic_store_n(&nn.nn_res, r, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < FS_NAMES_ENTRIES; i++) {
		/* a lookup under way finds its generation changed and drops
		 * its answer */
		nn.nn_e[i].ne_state = NE_FREE;
		nn.nn_e[i].ne_busy = false;
		nn.nn_e[i].ne_stale = false;
		nn.nn_e[i].ne_gen = ++nn.nn_gen;
	}
	pthread_cond_broadcast(&nn.nn_done);
	/* no PENDING entry is left to take: wait until the lookups under
	 * way have left the resolver they were given (its functions are
	 * not called after this returns); then the counters start at 0 */
	while (nn.nn_inflight)
		pthread_cond_wait(&nn.nn_done, &nn.nn_lock);
	memset(&nn.nn_stats, 0, sizeof(nn.nn_stats));
	pthread_mutex_unlock(&nn.nn_lock);
}

void fs_names_get_stats(struct fs_names_stats *out)
{
	pthread_mutex_lock(&nn.nn_lock);
	*out = nn.nn_stats;
	pthread_mutex_unlock(&nn.nn_lock);
}
