// SPDX-License-Identifier: MIT
/*
 * nfs4_state.c - the server's NFSv4.1 state (RFC 8881 2.4, 2.10, 8, 9.1):
 * client records (EXCHANGE_ID), sessions with a fore-channel slot table
 * and a reply kept per slot (CREATE_SESSION, SEQUENCE, DESTROY_SESSION,
 * DESTROY_CLIENTID), leases, open states and lock states (stateids).
 *
 * Every table is allocated once at creation, its size from n4_max_clients
 * (struct nfs4_sizes: clients, sessions, open states, lock states): a peer
 * can fill them, then it is
 * refused (NFS4ERR_RESOURCE, NFS4ERR_NOSPC) until records are destroyed or
 * their lease expires; it cannot make the server allocate more.  One
 * client holds at most sz_client_sessions sessions, sz_client_opens open
 * states and sz_client_locks lock states (NFS4_MAX_CLIENT_* or a quarter
 * of the table; NFS4ERR_NOSPC, NFS4ERR_RESOURCE beyond), so one client
 * cannot take a table.  A slot's reply cache is NFS4_SLOT_CACHE_BYTES,
 * allocated with its session.
 *
 * Leases (see nfs4_internal.h): a client whose lease expired keeps its
 * state as a courtesy client until a conflict expires it
 * (nfs4_state_revoke_file(), nfs4_state_expire_courtesy(), the share
 * reservation check of nfs4_open_add()), the client table needs its
 * record, or NFS4_COURTESY_MAX_SECONDS pass (nfs4_state_sweep()).
 *
 * Identifiers lead to their table entry and cannot be guessed (issue 33):
 *   clientid4   = P(counter << 16 | index): P a permutation of 64-bit
 *                 values keyed from getrandom(2) at the server's start (a
 *                 Feistel network of NFS4_ID_ROUNDS SipHash rounds), the
 *                 counter (48 bits) never repeating in one run; a client id
 *                 is looked up by P^-1 and then compared in full with the
 *                 record's, so an earlier start's (another key) or a made-up
 *                 one is unknown: NFS4ERR_STALE_CLIENTID.
 *   sessionid4  = boot, 64 bits of SipHash (another random key) of a
 *                 never-repeating counter, gen << 16 | index (big endian,
 *                 NFS4_SESSION_INDEX_BITS);
 *                 compared in full.  Another start's: NFS4ERR_BADSESSION.
 *   stateid4 other = boot, index, gen (big endian); a lock stateid's
 *                    index has NFS4_LOCK_IDX set; only the client it
 *                    belongs to can use it.
 * Principals (nfs4_principal()): a client record keeps the one of its
 * EXCHANGE_ID, a slot the one of the request it holds.
 *
 * One mutex guards everything; it is never held across a system call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/be.h"
#include "nfs4_internal.h"

struct nfs4_slot {
	uint32_t sl_seqid;
	bool sl_inuse;
	bool sl_cached;
	uint32_t sl_len;
	uint8_t *sl_reply;   /* NFS4_SLOT_CACHE_BYTES inside se_cache */
	uint64_t sl_principal; /* of the request that took the slot last */
};

/* Connections bound to one session (RFC 8881 2.10.3.1): the Linux client's
 * nconnect at most; a new one beyond replaces the longest bound. */
#define NFS4_SESSION_CONNS 16u

struct nfs4_client;

struct nfs4_session {
	bool se_used;
	bool se_dead;         /* destroyed while in use: freed at refs 0 */
	uint32_t se_gen;
	uint32_t se_refs;     /* requests holding a slot */
	uint8_t se_id[NFS4_SESSIONID_SIZE];
	struct nfs4_client *se_client;
	struct nfs4_chan_attrs se_fore;
	uint32_t se_nslots;
	struct nfs4_slot se_slots[NFS4_MAX_SLOTS];
	uint8_t *se_cache;
	uint32_t se_nconns;   /* se_conns used */
	uint32_t se_conn_next; /* the one replaced next when all are used */
	uint32_t se_conns[NFS4_SESSION_CONNS]; /* rpcrdma_svc_req_conn_id() */
};

struct nfs4_client {
	bool cl_used;
	bool cl_confirmed;
	bool cl_reclaim_done;
	uint32_t cl_gen;
	uint64_t cl_id;
	uint64_t cl_principal;       /* nfs4_principal() of its EXCHANGE_ID */
	uint64_t cl_host;            /* nfs4_host_key() of its EXCHANGE_ID (0: none) */
	uint8_t cl_verf[NFS4_VERIFIER_SIZE];
	uint32_t cl_ownerlen;
	uint8_t cl_owner[NFS4_OPAQUE_LIMIT];
	uint32_t cl_cs_seq;          /* the next csa_sequence */
	bool cl_cs_have;             /* cl_cs_res answers csa_sequence - 1 */
	struct nfs4_cs_res cl_cs_res;
	uint32_t cl_nsessions;
	uint32_t cl_busy;            /* requests holding a slot of its sessions */
	time_t cl_renew;             /* CLOCK_MONOTONIC seconds */
};

struct nfs4_open {
	bool op_used;
	uint32_t op_gen;
	uint32_t op_seqid;
	uint64_t op_clientid;
	uint64_t op_owner;     /* keyed hash of the open-owner */
	uint64_t op_host;      /* its client's cl_host */
	uint32_t op_access, op_deny;
	uint32_t op_fhlen;
	uint8_t op_fh[NFS4_FHSIZE];
};

/* A lock-owner's locks on one file: the owner's own description of the
 * file (struct fs_lockd: an open file description on the posix backend,
 * whose OFD locks the kernel keeps), which holds its byte-range locks. */
struct nfs4_lock {
	bool lk_used;
	uint32_t lk_gen;
	uint32_t lk_seqid;
	uint64_t lk_clientid;
	uint64_t lk_owner;
	uint64_t lk_host;      /* its client's cl_host */
	uint32_t lk_access;    /* the open's share access when it was made */
	struct fs_lockd lk_ld; /* the owner's description (ld_be NULL: none) */
	dev_t lk_dev;          /* the file's identity (nfs4_state_revoke_file()) */
	ino_t lk_ino;
	uint32_t lk_fhlen;
	uint8_t lk_fh[NFS4_FHSIZE];
};

/* "other" index bit of a lock stateid (clear: an open stateid) */
#define NFS4_LOCK_IDX 0x80000000u

struct nfs4_state {
	pthread_mutex_t st_lock;
	uint32_t st_boot;
	uint32_t st_lease;
	uint8_t st_key[16];       /* open and lock owners' hash (getrandom) */
	uint8_t st_clid_key[16];  /* client ids' permutation (getrandom) */
	uint8_t st_sid_key[16];   /* session ids' random part (getrandom) */
	uint8_t st_pr_key[16];    /* principals (getrandom) */
	uint64_t st_id_next;      /* counter of client and session ids */
	struct nfs4_sizes st_sz;
	struct nfs4_client *st_clients;   /* sz_clients */
	struct nfs4_session *st_sessions; /* sz_sessions */
	struct nfs4_open *st_opens;       /* sz_opens */
	struct nfs4_lock *st_locks;       /* sz_locks */
	/* no entry at or past these was ever used: the scans of OPEN, LOCK
	 * and a client's end stop there, so they cost what the states in use
	 * at most took, not the whole table */
	uint32_t st_opens_hi, st_locks_hi;
	void (*st_forget)(void *arg, uint64_t clientid, const uint8_t *owner, uint32_t len);
	void *st_forget_arg;
	struct rpcrdma_nfs3_server *st_shares; /* the layer's reservations (nfs4_share.c) */
	uint64_t st_revoked;   /* courtesy clients expired by a conflict */
	uint64_t st_reaped;    /* records swept or taken back */
	/* refusals (nfs4_state_counts()) */
	uint64_t st_clid_inuse, st_wrong_cred, st_conn_unbound, st_false_retries;
};

/* now_sec - the clock of leases: nfs4_mono_sec() (tests move it on) */
static time_t now_sec(void)
{
	return nfs4_mono_sec();
}

void nfs4_sizes(uint32_t clients, struct nfs4_sizes *out)
{
	if (!clients)
		clients = RPCRDMA_NFS4_CLIENTS_DEFAULT;
	out->sz_clients = clients;
	out->sz_sessions = clients * NFS4_SESSIONS_PER_CLIENT;
	out->sz_opens = clients * NFS4_OPENS_PER_CLIENT;
	out->sz_locks = clients * NFS4_LOCKS_PER_CLIENT;
	out->sz_delegs = clients * NFS4_DELEGS_PER_CLIENT;
	out->sz_records = clients * NFS4_RECORDS_PER_CLIENT;
	/* a quarter of the table at most, and at least one */
#define SHARE(max, n) ((n) / 4u < (max) ? ((n) / 4u ? (n) / 4u : 1u) : (max))
	out->sz_client_sessions = SHARE(NFS4_MAX_CLIENT_SESSIONS, out->sz_sessions);
	out->sz_client_opens = SHARE(NFS4_MAX_CLIENT_OPENS, out->sz_opens);
	out->sz_client_locks = SHARE(NFS4_MAX_CLIENT_LOCKS, out->sz_locks);
	out->sz_client_delegs = SHARE(NFS4_MAX_CLIENT_DELEGS, out->sz_delegs);
#undef SHARE
}

size_t nfs4_state_bytes(const struct nfs4_sizes *sz)
{
	/* a session's slot reply caches are allocated with it */
	return sizeof(struct nfs4_state) +
	       sz->sz_clients * sizeof(struct nfs4_client) +
	       sz->sz_sessions * (sizeof(struct nfs4_session) +
				  (size_t)NFS4_MAX_SLOTS * NFS4_SLOT_CACHE_BYTES) +
	       sz->sz_opens * sizeof(struct nfs4_open) +
	       sz->sz_locks * sizeof(struct nfs4_lock);
}

static void state_free(struct nfs4_state *st)
{
	free(st->st_clients);
	free(st->st_sessions);
	free(st->st_opens);
	free(st->st_locks);
	free(st);
}

int nfs4_state_create(uint32_t boot, uint32_t lease, const struct nfs4_sizes *sz,
		      struct nfs4_state **out)
{
	struct nfs4_state *st = calloc(1, sizeof(*st));
	uint8_t keys[64];

	if (!st)
		return -ENOMEM;
	if (sz)
		st->st_sz = *sz;
	else
		nfs4_sizes(0, &st->st_sz);
	st->st_clients = calloc(st->st_sz.sz_clients, sizeof(*st->st_clients));
	st->st_sessions = calloc(st->st_sz.sz_sessions, sizeof(*st->st_sessions));
	st->st_opens = calloc(st->st_sz.sz_opens, sizeof(*st->st_opens));
	st->st_locks = calloc(st->st_sz.sz_locks, sizeof(*st->st_locks));
	if (!st->st_clients || !st->st_sessions || !st->st_opens || !st->st_locks) {
		state_free(st);
		return -ENOMEM;
	}
	/* the keys of the identifiers (a short read of 48 bytes from
	 * getrandom does not happen once the pool is initialised; it
	 * blocks until then, as at early boot); the owners' hash key too,
	 * so that no peer can aim an owner string at another's bucket */
	if (getrandom(keys, sizeof(keys), 0) != (ssize_t)sizeof(keys)) {
		int err = errno ? -errno : -EIO;

		state_free(st);
		return err;
	}
	memcpy(st->st_clid_key, keys, 16);
	memcpy(st->st_sid_key, keys + 16, 16);
	memcpy(st->st_pr_key, keys + 32, 16);
	memcpy(st->st_key, keys + 48, 16);
	st->st_id_next = 1;
	pthread_mutex_init(&st->st_lock, NULL);
	st->st_boot = boot;
	st->st_lease = lease ? lease : NFS4_LEASE_SECONDS;
	for (unsigned i = 0; i < st->st_sz.sz_locks; i++)
		st->st_locks[i].lk_ld = (struct fs_lockd){ .ld_be = NULL, .ld_fd = -1 };
	*out = st;
	return 0;
}

static void session_free(struct nfs4_session *se)
{
	free(se->se_cache);
	se->se_cache = NULL;
	if (se->se_client)
		se->se_client->cl_nsessions--;
	se->se_client = NULL;
	se->se_used = false;
	se->se_dead = false;
}

static void open_free(struct nfs4_state *st, struct nfs4_open *op);

void nfs4_state_destroy(struct nfs4_state *st)
{
	if (!st)
		return;
	for (unsigned i = 0; i < st->st_sz.sz_sessions; i++)
		free(st->st_sessions[i].se_cache);
	for (unsigned i = 0; i < st->st_sz.sz_locks; i++)
		fs_lock_close(&st->st_locks[i].lk_ld);
	for (unsigned i = 0; i < st->st_opens_hi; i++)
		if (st->st_opens[i].op_used)
			open_free(st, &st->st_opens[i]);
	pthread_mutex_destroy(&st->st_lock);
	state_free(st);
}

/* ---- identifiers and principals ---- */

/* Rounds of the Feistel network of client ids (Luby-Rackoff: 4 make a
 * strong pseudo-random permutation; 8 leave a margin). */
#define NFS4_ID_ROUNDS 8u
/* Bits of a client id's plaintext holding the record's index. */
#define NFS4_ID_INDEX_BITS 16u

_Static_assert(RPCRDMA_NFS4_CLIENTS_MAX <= (1u << NFS4_ID_INDEX_BITS), "client index bits");

/* id_round - the round function: SipHash of (round, half), 32 bits of it */
static uint32_t id_round(const struct nfs4_state *st, uint32_t round, uint32_t half)
{
	uint8_t in[8];

	store_be32(in, round);
	store_be32(in + 4, half);
	return (uint32_t)fs_siphash(st->st_clid_key, in, sizeof(in));
}

/* id_permute - the keyed permutation of client ids (@inverse: P^-1) */
static uint64_t id_permute(const struct nfs4_state *st, uint64_t v, bool inverse)
{
	uint32_t l = (uint32_t)(v >> 32), r = (uint32_t)v, t;

	for (uint32_t i = 0; i < NFS4_ID_ROUNDS; i++) {
		if (!inverse) {
			t = r;
			r = l ^ id_round(st, i, r);
			l = t;
		} else {
			t = l;
			l = r ^ id_round(st, NFS4_ID_ROUNDS - 1 - i, l);
			r = t;
		}
	}
	return (uint64_t)l << 32 | r;
}

/* id_counter - the next value of the never-repeating counter (48 bits:
 * a run would need 2^48 EXCHANGE_IDs and CREATE_SESSIONs to wrap it) */
static uint64_t id_counter(struct nfs4_state *st)
{
	return st->st_id_next++ & 0xffffffffffffull;
}

/* session_id_make - sessionid4 of entry @idx (generation @gen) */
static void session_id_make(struct nfs4_state *st, uint32_t idx, uint32_t gen,
			    uint8_t sid[NFS4_SESSIONID_SIZE])
{
	uint8_t in[9] = { 'S' };
	uint64_t c = id_counter(st), tag;

	store_be32(in + 1, (uint32_t)(c >> 32));
	store_be32(in + 5, (uint32_t)c);
	tag = fs_siphash(st->st_sid_key, in, sizeof(in));
	store_be32(sid, st->st_boot);
	store_be32(sid + 4, (uint32_t)(tag >> 32));
	store_be32(sid + 8, (uint32_t)tag);
	store_be32(sid + 12, gen << NFS4_SESSION_INDEX_BITS | idx);
}

uint64_t nfs4_principal(const struct nfs4_state *st, const struct rpcrdma_rpc_msg *m)
{
	/* flavor, uid, gid, ngids, gids, namelen, name: at most
	 * 5 * 4 + 16 * 4 + 255 bytes */
	uint8_t buf[5 * 4 + RPC_AUTH_SYS_MAX_GIDS * 4 + 256];
	size_t n = 0;

	store_be32(buf, m->rm_cred_flavor);
	n = 4;
	if (m->rm_cred_flavor == NFS4_AUTH_SYS) {
		const struct rpcrdma_rpc_authsys *a = &m->rm_authsys;
		uint32_t ngids = a->as_ngids, namelen = a->as_namelen;

		if (!m->rm_has_authsys) {
			/* a malformed credential: a principal of its own */
			store_be32(buf + n, UINT32_MAX);
			return fs_siphash(st->st_pr_key, buf, n + 4);
		}
		if (ngids > RPC_AUTH_SYS_MAX_GIDS)
			ngids = RPC_AUTH_SYS_MAX_GIDS;
		if (namelen > 255 || !a->as_name)
			namelen = 0;
		store_be32(buf + n, a->as_uid);
		store_be32(buf + n + 4, a->as_gid);
		store_be32(buf + n + 8, ngids);
		n += 12;
		for (uint32_t i = 0; i < ngids; i++, n += 4)
			store_be32(buf + n, a->as_gids[i]);
		store_be32(buf + n, namelen);
		n += 4;
		if (namelen)
			memcpy(buf + n, a->as_name, namelen);
		n += namelen;
	}
	return fs_siphash(st->st_pr_key, buf, n);
}

/* ---- clients ---- */

static struct nfs4_client *client_find(struct nfs4_state *st, uint64_t id)
{
	uint32_t idx = (uint32_t)(id_permute(st, id, true) &
				  ((1u << NFS4_ID_INDEX_BITS) - 1));
	struct nfs4_client *cl;

	if (idx >= st->st_sz.sz_clients)
		return NULL;
	cl = &st->st_clients[idx];
	return cl->cl_used && cl->cl_id == id ? cl : NULL;
}

static void lock_free(struct nfs4_lock *lk)
{
	/* closing the owner's description releases its locks (teardown
	 * and FREE_STATEID: the one system call made under st_lock) */
	fs_lock_close(&lk->lk_ld);
	lk->lk_used = false;
}

/* open_free - @op goes, and its share reservation in the layer */
static void open_free(struct nfs4_state *st, struct nfs4_open *op)
{
	op->op_used = false;
	if (st->st_shares)
		fs_share_drop(st->st_shares,
			      nfs4_share_owner((uint32_t)(op - st->st_opens), op->op_gen));
}

static void opens_drop_client(struct nfs4_state *st, uint64_t clientid)
{
	for (unsigned i = 0; i < st->st_opens_hi; i++)
		if (st->st_opens[i].op_used && st->st_opens[i].op_clientid == clientid)
			open_free(st, &st->st_opens[i]);
	for (unsigned i = 0; i < st->st_locks_hi; i++)
		if (st->st_locks[i].lk_used && st->st_locks[i].lk_clientid == clientid)
			lock_free(&st->st_locks[i]);
}

/* client_busy - does a request hold a slot of one of @cl's sessions? */
static bool client_busy(struct nfs4_state *st, const struct nfs4_client *cl)
{
	/* counted, not looked for: the sweep and a full table's EXCHANGE_ID
	 * ask for every client */
	(void)st;
	return cl->cl_busy != 0;
}

/* client_free - @cl, its sessions (none in use) and its open states. */
static void client_free(struct nfs4_state *st, struct nfs4_client *cl)
{
	for (unsigned i = 0; i < st->st_sz.sz_sessions; i++) {
		struct nfs4_session *se = &st->st_sessions[i];

		if (se->se_used && se->se_client == cl)
			session_free(se);
	}
	opens_drop_client(st, cl->cl_id);
	/* an unconfirmed record never had state, and its owner's
	 * stable-storage record is its confirmed twin's (or a reclaiming
	 * client's of the previous run): forgetting it would erase that */
	if (st->st_forget && cl->cl_confirmed)
		st->st_forget(st->st_forget_arg, cl->cl_id, cl->cl_owner, cl->cl_ownerlen);
	cl->cl_used = false;
}

/* client_has_state - RFC 8881 18.35.5 case 3's "state": sessions, opens
 * or locks (a delegation needs an open, and callbacks a session). */
static bool client_has_state(const struct nfs4_state *st, const struct nfs4_client *cl)
{
	if (cl->cl_nsessions)
		return true;
	for (unsigned i = 0; i < st->st_opens_hi; i++)
		if (st->st_opens[i].op_used && st->st_opens[i].op_clientid == cl->cl_id)
			return true;
	for (unsigned i = 0; i < st->st_locks_hi; i++)
		if (st->st_locks[i].lk_used && st->st_locks[i].lk_clientid == cl->cl_id)
			return true;
	return false;
}

static bool lease_expired(const struct nfs4_state *st,
			  const struct nfs4_client *cl, time_t now)
{
	return now - cl->cl_renew > (time_t)st->st_lease;
}

/* client_courtesy - a confirmed client whose lease expired and of which
 * no request runs: it keeps its state until something conflicts. */
static bool client_courtesy(struct nfs4_state *st, const struct nfs4_client *cl,
			    time_t now)
{
	return cl->cl_used && cl->cl_confirmed && lease_expired(st, cl, now) &&
	       !client_busy(st, cl);
}

/* client_expire - a courtesy client loses everything to a conflict */
static void client_expire(struct nfs4_state *st, struct nfs4_client *cl)
{
	st->st_revoked++;
	client_free(st, cl);
}

/* victim_rank - how readily @cl's record is taken back for a new client
 * (0: never): an expired unconfirmed record first, then the courtesy
 * client that expired longest ago, then the oldest unconfirmed record
 * still in its lease (it holds no state: its client repeats EXCHANGE_ID),
 * so records that are never confirmed cannot keep new clients out. */
static unsigned victim_rank(struct nfs4_state *st, const struct nfs4_client *cl,
			    time_t now)
{
	if (client_busy(st, cl))
		return 0;
	if (!cl->cl_confirmed)
		return lease_expired(st, cl, now) ? 3 : 1;
	return lease_expired(st, cl, now) ? 2 : 0;
}

/*
 * client_alloc - a free record, or one taken back (victim_rank(); the
 * least recently renewed of the best rank).  NULL when every record
 * belongs to a live confirmed client.
 */
static struct nfs4_client *client_alloc(struct nfs4_state *st)
{
	time_t now = now_sec();
	struct nfs4_client *victim = NULL;
	unsigned best = 0;

	for (unsigned i = 0; i < st->st_sz.sz_clients; i++) {
		struct nfs4_client *cl = &st->st_clients[i];
		unsigned rank;

		if (!cl->cl_used)
			return cl;
		rank = victim_rank(st, cl, now);
		if (rank > best || (rank && rank == best && cl->cl_renew < victim->cl_renew)) {
			victim = cl;
			best = rank;
		}
	}
	if (victim) {
		st->st_reaped++;
		client_free(st, victim);
	}
	return victim;
}

/* client_by_owner - the confirmed (@confirmed) or unconfirmed record of
 * the owner @owner (@len bytes), or NULL. */
static struct nfs4_client *client_by_owner(struct nfs4_state *st, const uint8_t *owner,
					   uint32_t len, bool confirmed)
{
	for (unsigned i = 0; i < st->st_sz.sz_clients; i++) {
		struct nfs4_client *c = &st->st_clients[i];

		if (c->cl_used && c->cl_confirmed == confirmed && c->cl_ownerlen == len &&
		    memcmp(c->cl_owner, owner, len) == 0)
			return c;
	}
	return NULL;
}

/* client_clash - may a record of principal @principal replace the
 * confirmed record @conf (RFC 8881 18.35.5 case 3)?  Not when the
 * principals differ and @conf has state in an unexpired lease. */
static bool client_clash(struct nfs4_state *st, const struct nfs4_client *conf,
			 uint64_t principal)
{
	return conf->cl_principal != principal && client_has_state(st, conf) &&
	       !lease_expired(st, conf, now_sec());
}

/* host_clash - may a new incarnation (case 5) made from host @host
 * replace the confirmed record @conf?  Not from another host while @conf
 * has state in an unexpired lease: under AUTH_SYS the principal is what
 * the client says it is, so only the host stands between a client's
 * state and anyone who read its owner string (0: a local caller). */
static bool host_clash(struct nfs4_state *st, const struct nfs4_client *conf,
		       uint64_t host)
{
	return host && conf->cl_host && conf->cl_host != host &&
	       client_has_state(st, conf) && !lease_expired(st, conf, now_sec());
}

/* host_room - take back, when @host holds its share of client records
 * already, the one of its records most readily taken (victim_rank());
 * false when all of them are live confirmed clients.  @going (or NULL),
 * the confirmed record a new incarnation replaces once confirmed, is not
 * counted: a client restarting on its own host always gets its record. */
static bool host_room(struct nfs4_state *st, uint64_t host, const struct nfs4_client *going)
{
	struct nfs4_client *victim = NULL;
	unsigned n = 0, best = 0;
	time_t now = now_sec();

	if (!host)
		return true;
	for (unsigned i = 0; i < st->st_sz.sz_clients; i++) {
		struct nfs4_client *cl = &st->st_clients[i];
		unsigned rank;

		if (!cl->cl_used || cl->cl_host != host || cl == going)
			continue;
		n++;
		rank = victim_rank(st, cl, now);
		if (rank > best || (rank && rank == best && cl->cl_renew < victim->cl_renew)) {
			victim = cl;
			best = rank;
		}
	}
	if (n < NFS4_HOST_SHARE(st->st_sz.sz_clients))
		return true;
	if (!victim)
		return false;
	st->st_reaped++;
	client_free(st, victim);
	return true;
}

uint32_t nfs4_exchange_id_as(struct nfs4_state *st, const struct nfs4_who *who,
			     const uint8_t verf[8],
			  const uint8_t *owner, uint32_t len, uint32_t flags,
			  struct nfs4_exid_res *res)
{
	struct nfs4_client *conf, *unconf, *cl;
	uint32_t status = NFS4_OK, gen;
	unsigned idx;

	if (len > NFS4_OPAQUE_LIMIT || (flags & ~EXCHGID4_FLAG_MASK_A))
		return NFS4ERR_INVAL;
	pthread_mutex_lock(&st->st_lock);
	conf = client_by_owner(st, owner, len, true);
	unconf = client_by_owner(st, owner, len, false);
	if (flags & EXCHGID4_FLAG_UPD_CONFIRMED_REC_A) {
		/* an update of a confirmed record: case 7 (none), case 9
		 * (another principal), case 8 (another verifier), case 6 */
		if (!conf)
			status = NFS4ERR_NOENT;
		else if (conf->cl_principal != who->wh_principal)
			status = NFS4ERR_PERM;
		else if (memcmp(conf->cl_verf, verf, NFS4_VERIFIER_SIZE) != 0)
			status = NFS4ERR_NOT_SAME;
		if (status)
			goto out;
		cl = conf;
		goto confirmed;
	}
	if (conf && conf->cl_principal != who->wh_principal) {
		/* case 3, client collision: refused while the confirmed record
		 * has state in its lease; otherwise a new unconfirmed record
		 * that replaces it when CREATE_SESSION confirms it */
		if (client_clash(st, conf, who->wh_principal)) {
			st->st_clid_inuse++;
			status = NFS4ERR_CLID_INUSE;
			goto out;
		}
	} else if (conf && memcmp(conf->cl_verf, verf, NFS4_VERIFIER_SIZE) == 0) {
		/* case 2: a retry, or the same incarnation again */
		cl = conf;
		goto confirmed;
	} else if (conf && host_clash(st, conf, who->wh_host)) {
		/* case 5 from another host while the client holds state */
		st->st_clid_inuse++;
		status = NFS4ERR_CLID_INUSE;
		goto out;
	}
	/* case 5 (a new verifier: the client restarted; the confirmed record
	 * and its state stay until the new one is confirmed), case 4 (an
	 * unconfirmed record is replaced, whoever made it) or case 1 */
	if (unconf)
		client_free(st, unconf);
	cl = host_room(st, who->wh_host, conf) ? client_alloc(st) : NULL;
	if (!cl) {
		status = NFS4ERR_RESOURCE;
		goto out;
	}
	idx = (unsigned)(cl - st->st_clients);
	gen = cl->cl_gen + 1;
	memset(cl, 0, sizeof(*cl));
	cl->cl_gen = gen;
	cl->cl_used = true;
	cl->cl_id = id_permute(st, id_counter(st) << NFS4_ID_INDEX_BITS | idx, false);
	cl->cl_principal = who->wh_principal;
	cl->cl_host = who->wh_host;
	memcpy(cl->cl_verf, verf, NFS4_VERIFIER_SIZE);
	memcpy(cl->cl_owner, owner, len);
	cl->cl_ownerlen = len;
	cl->cl_cs_seq = 1;
	cl->cl_renew = now_sec();
	res->er_clientid = cl->cl_id;
	res->er_sequenceid = cl->cl_cs_seq;
	res->er_flags = EXCHGID4_FLAG_USE_NON_PNFS;
	goto out;
confirmed:
	cl->cl_renew = now_sec();
	res->er_clientid = cl->cl_id;
	res->er_sequenceid = cl->cl_cs_seq;
	res->er_flags = EXCHGID4_FLAG_USE_NON_PNFS | EXCHGID4_FLAG_CONFIRMED_R;
out:
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

/* ---- sessions ---- */

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* session_alloc - a free session, or the sessions of a courtesy client
 * other than @self taken back (the whole client goes: a client without
 * its sessions could never renew its lease again). */
static struct nfs4_session *session_alloc(struct nfs4_state *st,
					  const struct nfs4_client *self)
{
	time_t now = now_sec();

	for (unsigned i = 0; i < st->st_sz.sz_sessions; i++)
		if (!st->st_sessions[i].se_used)
			return &st->st_sessions[i];
	for (unsigned i = 0; i < st->st_sz.sz_sessions; i++) {
		struct nfs4_session *se = &st->st_sessions[i];

		if (se->se_client != self && client_courtesy(st, se->se_client, now)) {
			st->st_reaped++;
			client_free(st, se->se_client);
			return se;
		}
	}
	return NULL;
}

/* session_bind - connection @conn is bound to @se (RFC 8881 2.10.3.1) */
static void session_bind(struct nfs4_session *se, uint32_t conn)
{
	for (uint32_t i = 0; i < se->se_nconns; i++)
		if (se->se_conns[i] == conn)
			return;
	if (se->se_nconns < NFS4_SESSION_CONNS) {
		se->se_conns[se->se_nconns++] = conn;
		return;
	}
	se->se_conns[se->se_conn_next] = conn;
	se->se_conn_next = (se->se_conn_next + 1) % NFS4_SESSION_CONNS;
}

/* host_sessions - the sessions of the clients of host @host but @going's
 * (0: none counted) */
static unsigned host_sessions(const struct nfs4_state *st, uint64_t host,
			      const struct nfs4_client *going)
{
	unsigned n = 0;

	for (unsigned i = 0; host && i < st->st_sz.sz_sessions; i++)
		n += st->st_sessions[i].se_used && st->st_sessions[i].se_client &&
		     st->st_sessions[i].se_client != going &&
		     st->st_sessions[i].se_client->cl_host == host;
	return n;
}

/*
 * host_session_room - may @cl open a session within its host's share?
 * The record @going (or NULL) that this CREATE_SESSION replaces does not
 * count; a courtesy client of the same host gives way (the one expired
 * longest ago first), as session_alloc() takes one back when the whole
 * table is full.
 */
static bool host_session_room(struct nfs4_state *st, const struct nfs4_client *cl,
			      const struct nfs4_client *going)
{
	time_t now = now_sec();

	while (host_sessions(st, cl->cl_host, going) >= NFS4_HOST_SHARE(st->st_sz.sz_sessions)) {
		struct nfs4_client *victim = NULL;

		for (unsigned i = 0; i < st->st_sz.sz_clients; i++) {
			struct nfs4_client *c = &st->st_clients[i];

			if (c == cl || c == going || !c->cl_used || c->cl_host != cl->cl_host ||
			    !c->cl_nsessions || !client_courtesy(st, c, now))
				continue;
			if (!victim || c->cl_renew < victim->cl_renew)
				victim = c;
		}
		if (!victim)
			return false;
		st->st_reaped++;
		client_free(st, victim);
	}
	return true;
}

/* session_bound - is connection @conn bound to @se? */
static bool session_bound(const struct nfs4_session *se, uint32_t conn)
{
	for (uint32_t i = 0; i < se->se_nconns; i++)
		if (se->se_conns[i] == conn)
			return true;
	return false;
}

uint32_t nfs4_create_session_as(struct nfs4_state *st, const struct nfs4_who *who,
				uint64_t clientid,
			     uint32_t sequence, uint32_t flags,
			     const struct nfs4_chan_attrs *fore,
			     const struct nfs4_chan_attrs *back,
			     struct nfs4_cs_res *res)
{
	struct nfs4_client *cl, *old = NULL;
	struct nfs4_session *se;
	struct nfs4_chan_attrs fa;
	uint32_t status = NFS4_OK, max_msg, idx;
	uint64_t old_id = 0;

	(void)flags; /* nothing asked for is granted: no PERSIST, no back channel */
	pthread_mutex_lock(&st->st_lock);
	cl = client_find(st, clientid);
	if (!cl) {
		status = NFS4ERR_STALE_CLIENTID;
		goto out;
	}
	/* RFC 8881 18.36.4: the principal of the EXCHANGE_ID, before
	 * anything, even a retry's answer (it holds the session id) */
	if (cl->cl_principal != who->wh_principal) {
		st->st_clid_inuse++;
		status = NFS4ERR_CLID_INUSE;
		goto out;
	}
	if (cl->cl_cs_have && sequence == cl->cl_cs_seq - 1) {
		*res = cl->cl_cs_res; /* a retry: the same answer (18.36.4) */
		goto out;
	}
	if (sequence != cl->cl_cs_seq) {
		status = NFS4ERR_SEQ_MISORDERED;
		goto out;
	}
	/* a fore channel that cannot carry a SEQUENCE and its reply */
	if (fore->ca_maxrequestsize < 256 || fore->ca_maxresponsesize < 256 ||
	    fore->ca_maxoperations < 1 || fore->ca_maxrequests < 1) {
		status = NFS4ERR_TOOSMALL;
		goto out;
	}
	if (!cl->cl_confirmed) {
		/* the confirmation replaces the owner's confirmed record
		 * (RFC 8881 18.35.5 cases 3 and 5), checked again now */
		old = client_by_owner(st, cl->cl_owner, cl->cl_ownerlen, true);
		if (old && (client_clash(st, old, cl->cl_principal) ||
			    host_clash(st, old, cl->cl_host))) {
			st->st_clid_inuse++;
			status = NFS4ERR_CLID_INUSE;
			goto out;
		}
		if (old && client_busy(st, old)) {
			status = NFS4ERR_DELAY;
			goto out;
		}
		if (old)
			old_id = old->cl_id;
	}
	if (cl->cl_nsessions >= st->st_sz.sz_client_sessions ||
	    !host_session_room(st, cl, old) || !(se = session_alloc(st, cl))) {
		status = NFS4ERR_NOSPC;
		goto out;
	}
	se->se_cache = calloc(NFS4_MAX_SLOTS, NFS4_SLOT_CACHE_BYTES);
	if (!se->se_cache) {
		status = NFS4ERR_SERVERFAULT;
		goto out;
	}
	max_msg = UINT32_MAX; /* the transport bounds each message */
	fa.ca_headerpadsize = 0;
	fa.ca_maxrequestsize = min_u32(fore->ca_maxrequestsize, max_msg);
	fa.ca_maxresponsesize = min_u32(fore->ca_maxresponsesize, max_msg);
	fa.ca_maxresponsesize_cached = min_u32(fore->ca_maxresponsesize_cached,
					       NFS4_SLOT_CACHE_BYTES);
	fa.ca_maxoperations = min_u32(fore->ca_maxoperations, NFS4_COMPOUND_MAX_OPS);
	fa.ca_maxrequests = min_u32(fore->ca_maxrequests, NFS4_MAX_SLOTS);
	fa.ca_nrdma_ird = 0;
	fa.ca_rdma_ird = 0;

	idx = (uint32_t)(se - st->st_sessions);
	se->se_gen = (se->se_gen + 1) & ((1u << (32 - NFS4_SESSION_INDEX_BITS)) - 1);
	se->se_used = true;
	se->se_dead = false;
	se->se_refs = 0;
	se->se_client = cl;
	se->se_fore = fa;
	se->se_nslots = fa.ca_maxrequests;
	for (uint32_t i = 0; i < NFS4_MAX_SLOTS; i++) {
		se->se_slots[i] = (struct nfs4_slot){
			.sl_reply = se->se_cache + (size_t)i * NFS4_SLOT_CACHE_BYTES,
		};
	}
	session_id_make(st, idx, se->se_gen, se->se_id);
	se->se_nconns = 0;
	se->se_conn_next = 0;
	session_bind(se, who->wh_conn);
	cl->cl_nsessions++;
	/* only now, with the new record confirmed, does the old one go
	 * (session_alloc() may have taken it back already) */
	if (old && old->cl_used && old->cl_id == old_id && old != cl)
		client_free(st, old);
	cl->cl_confirmed = true;
	cl->cl_renew = now_sec();

	memset(res, 0, sizeof(*res));
	memcpy(res->cr_sessionid, se->se_id, NFS4_SESSIONID_SIZE);
	res->cr_sequence = sequence;
	res->cr_flags = 0;
	res->cr_fore = fa;
	res->cr_back = *back;
	res->cr_back.ca_nrdma_ird = 0;
	res->cr_back.ca_rdma_ird = 0;
	cl->cl_cs_res = *res;
	cl->cl_cs_have = true;
	cl->cl_cs_seq++;
out:
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

static struct nfs4_session *session_find(struct nfs4_state *st, const uint8_t sid[16])
{
	uint32_t idx = load_be32(sid + 12) & ((1u << NFS4_SESSION_INDEX_BITS) - 1);
	struct nfs4_session *se;

	if (load_be32(sid) != st->st_boot || idx >= st->st_sz.sz_sessions)
		return NULL;
	se = &st->st_sessions[idx];
	if (!se->se_used || se->se_dead || memcmp(se->se_id, sid, NFS4_SESSIONID_SIZE))
		return NULL;
	return se;
}

uint32_t nfs4_session_check(struct nfs4_state *st, const uint8_t sid[16])
{
	uint32_t status;

	pthread_mutex_lock(&st->st_lock);
	status = session_find(st, sid) ? NFS4_OK : NFS4ERR_BADSESSION;
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

bool nfs4_state_session_live(void *st, const uint8_t sid[16])
{
	return nfs4_session_check(st, sid) == NFS4_OK;
}

uint32_t nfs4_sequence_as(struct nfs4_state *st, const struct nfs4_who *who,
			  const uint8_t sid[16],
		       uint32_t seqid, uint32_t slot, uint32_t highest,
		       uint32_t nops, struct nfs4_seq_res *res)
{
	struct nfs4_session *se;
	struct nfs4_slot *sl;
	uint32_t status = NFS4_OK;

	(void)highest;
	res->sr_session = NULL;
	res->sr_replay = res->sr_uncached = false;
	pthread_mutex_lock(&st->st_lock);
	se = session_find(st, sid);
	if (!se) {
		status = NFS4ERR_BADSESSION;
		goto out;
	}
	if (slot >= se->se_nslots) {
		status = NFS4ERR_BADSLOT;
		goto out;
	}
	sl = &se->se_slots[slot];
	if (nops > se->se_fore.ca_maxoperations) {
		/* refused before the slot is looked at: it does not advance */
		status = NFS4ERR_TOO_MANY_OPS;
		goto out;
	}
	if (seqid == sl->sl_seqid) {
		/* a retry of the slot's last request (2.10.6.1.2), only from
		 * its principal: another one's is a false retry
		 * (2.10.6.1.3.1), and gets nothing of the reply */
		if (sl->sl_principal != who->wh_principal) {
			st->st_false_retries++;
			status = NFS4ERR_SEQ_FALSE_RETRY;
			goto out;
		}
		if (sl->sl_inuse) {
			status = NFS4ERR_DELAY;
			goto out;
		}
		res->sr_replay = true;
		if (sl->sl_cached) {
			memcpy(res->sr_replay_buf, sl->sl_reply, sl->sl_len);
			res->sr_replay_len = sl->sl_len;
		} else {
			res->sr_uncached = true;
		}
	} else if (seqid == sl->sl_seqid + 1 && !sl->sl_inuse) {
		sl->sl_seqid = seqid;
		sl->sl_inuse = true;
		sl->sl_cached = false;
		sl->sl_principal = who->wh_principal;
		se->se_refs++;
		se->se_client->cl_busy++;
		res->sr_session = se;
	} else {
		status = NFS4ERR_SEQ_MISORDERED;
		goto out;
	}
	/* SP4_NONE: a SEQUENCE binds its connection (as knfsd's
	 * nfsd4_sequence_check_conn() for a client without SP4_MACH_CRED) */
	session_bind(se, who->wh_conn);
	se->se_client->cl_renew = now_sec();
	res->sr_slot = slot;
	res->sr_highest_slotid = se->se_nslots - 1;
	res->sr_target_highest_slotid = se->se_nslots - 1;
	res->sr_status_flags = 0;
	res->sr_clientid = se->se_client->cl_id;
	res->sr_maxops = se->se_fore.ca_maxoperations;
	res->sr_maxresp = se->se_fore.ca_maxresponsesize;
out:
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

void nfs4_sequence_done(struct nfs4_state *st, struct nfs4_session *se,
			uint32_t slot, const uint8_t *reply, uint32_t len)
{
	struct nfs4_slot *sl;

	if (!se)
		return;
	pthread_mutex_lock(&st->st_lock);
	sl = &se->se_slots[slot];
	if (reply && len <= NFS4_SLOT_CACHE_BYTES && !se->se_dead) {
		memcpy(sl->sl_reply, reply, len);
		sl->sl_len = len;
		sl->sl_cached = true;
	}
	sl->sl_inuse = false;
	if (se->se_client)
		se->se_client->cl_busy--;
	if (--se->se_refs == 0 && se->se_dead)
		session_free(se);
	pthread_mutex_unlock(&st->st_lock);
}

uint32_t nfs4_destroy_session_as(struct nfs4_state *st, const struct nfs4_who *who,
				 const uint8_t sid[16], const struct nfs4_session *self)
{
	struct nfs4_session *se;
	uint32_t status = NFS4_OK;

	pthread_mutex_lock(&st->st_lock);
	se = session_find(st, sid);
	if (!se) {
		status = NFS4ERR_BADSESSION;
	} else if (se != self && se->se_client->cl_principal != who->wh_principal) {
		st->st_wrong_cred++;
		status = NFS4ERR_WRONG_CRED;
	} else if (se != self && !session_bound(se, who->wh_conn)) {
		st->st_conn_unbound++;
		status = NFS4ERR_CONN_NOT_BOUND_TO_SESSION;
	} else if (se->se_refs > (se == self ? 1u : 0u)) {
		status = NFS4ERR_DELAY;
	} else if (se->se_refs) {
		se->se_dead = true; /* our own: freed when this request ends */
	} else {
		session_free(se);
	}
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

uint32_t nfs4_bind_conn(struct nfs4_state *st, const struct nfs4_who *who,
			const uint8_t sid[16])
{
	struct nfs4_session *se;
	uint32_t status = NFS4_OK;

	pthread_mutex_lock(&st->st_lock);
	se = session_find(st, sid);
	if (!se) {
		status = NFS4ERR_BADSESSION;
	} else if (se->se_client->cl_principal != who->wh_principal) {
		st->st_wrong_cred++;
		status = NFS4ERR_WRONG_CRED;
	} else {
		session_bind(se, who->wh_conn);
	}
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

uint32_t nfs4_destroy_clientid_as(struct nfs4_state *st, const struct nfs4_who *who,
				  uint64_t clientid)
{
	struct nfs4_client *cl;
	uint32_t status = NFS4_OK;

	pthread_mutex_lock(&st->st_lock);
	cl = client_find(st, clientid);
	if (!cl) {
		status = NFS4ERR_STALE_CLIENTID;
	} else if (cl->cl_principal != who->wh_principal) {
		st->st_wrong_cred++;
		status = NFS4ERR_WRONG_CRED;
	} else if (cl->cl_nsessions) {
		status = NFS4ERR_CLIENTID_BUSY;
	} else {
		client_free(st, cl);
	}
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

uint32_t nfs4_reclaim_complete(struct nfs4_state *st, uint64_t clientid,
			       bool one_fs)
{
	struct nfs4_client *cl;
	uint32_t status = NFS4_OK;

	pthread_mutex_lock(&st->st_lock);
	cl = client_find(st, clientid);
	if (!cl)
		status = NFS4ERR_STALE_CLIENTID;
	else if (!one_fs && cl->cl_reclaim_done)
		status = NFS4ERR_COMPLETE_ALREADY;
	else if (!one_fs)
		cl->cl_reclaim_done = true;
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

/* ---- open states ---- */

static void other_make(const struct nfs4_state *st, uint32_t idx, uint32_t gen,
		       uint8_t other[NFS4_OTHER_SIZE])
{
	store_be32(other, st->st_boot);
	store_be32(other + 4, idx);
	store_be32(other + 8, gen);
}

static bool other_is(const uint8_t other[NFS4_OTHER_SIZE], uint8_t b)
{
	for (unsigned i = 0; i < NFS4_OTHER_SIZE; i++)
		if (other[i] != b)
			return false;
	return true;
}

/* open_lookup - the open state a stateid names, with seqid checks. */
static uint32_t open_lookup(struct nfs4_state *st, uint64_t clientid,
			    const struct nfs4_stateid *sid, struct nfs4_open **out)
{
	uint32_t idx = load_be32(sid->si_other + 4);
	struct nfs4_open *op;

	if (load_be32(sid->si_other) != st->st_boot || idx >= st->st_sz.sz_opens)
		return NFS4ERR_BAD_STATEID;
	op = &st->st_opens[idx];
	if (!op->op_used || op->op_gen != load_be32(sid->si_other + 8) ||
	    op->op_clientid != clientid)
		return NFS4ERR_BAD_STATEID;
	if (sid->si_seqid != 0 && sid->si_seqid > op->op_seqid)
		return NFS4ERR_BAD_STATEID;
	if (sid->si_seqid != 0 && sid->si_seqid < op->op_seqid)
		return NFS4ERR_OLD_STATEID;
	*out = op;
	return NFS4_OK;
}

/* lock_lookup - the lock state a stateid names, with seqid checks. */
static uint32_t lock_lookup(struct nfs4_state *st, uint64_t clientid,
			    const struct nfs4_stateid *sid, struct nfs4_lock **out)
{
	uint32_t idx = load_be32(sid->si_other + 4);
	struct nfs4_lock *lk;

	if (load_be32(sid->si_other) != st->st_boot || !(idx & NFS4_LOCK_IDX))
		return NFS4ERR_BAD_STATEID;
	idx &= ~NFS4_LOCK_IDX;
	if (idx >= st->st_sz.sz_locks)
		return NFS4ERR_BAD_STATEID;
	lk = &st->st_locks[idx];
	if (!lk->lk_used || lk->lk_gen != load_be32(sid->si_other + 8) ||
	    lk->lk_clientid != clientid)
		return NFS4ERR_BAD_STATEID;
	if (sid->si_seqid != 0 && sid->si_seqid > lk->lk_seqid)
		return NFS4ERR_BAD_STATEID;
	if (sid->si_seqid != 0 && sid->si_seqid < lk->lk_seqid)
		return NFS4ERR_OLD_STATEID;
	*out = lk;
	return NFS4_OK;
}

static void lock_sid(const struct nfs4_state *st, const struct nfs4_lock *lk,
		     struct nfs4_stateid *out)
{
	out->si_seqid = lk->lk_seqid;
	other_make(st, (uint32_t)(lk - st->st_locks) | NFS4_LOCK_IDX, lk->lk_gen,
		   out->si_other);
}

uint32_t nfs4_lock_owner(struct nfs4_state *st, uint64_t clientid,
			 const struct nfs4_stateid *open_sid,
			 const uint8_t *owner, uint32_t ownerlen,
			 const uint8_t *fh, uint32_t fhlen, dev_t dev, ino_t ino,
			 struct fs_lockd *ld, struct nfs4_stateid *out,
			 uint32_t *access)
{
	uint64_t h = fs_siphash(st->st_key, owner, ownerlen) ^ ownerlen ^
		     0x4c4f434b00000000ull;
	struct nfs4_lock *lk = NULL, *free_lk = NULL;
	struct nfs4_client *cl;
	struct nfs4_open *op;
	uint32_t status, mine = 0, host_n = 0;
	uint64_t host;

	pthread_mutex_lock(&st->st_lock);
	status = open_lookup(st, clientid, open_sid, &op);
	if (status)
		goto out;
	if (op->op_fhlen != fhlen || memcmp(op->op_fh, fh, fhlen) != 0) {
		status = NFS4ERR_BAD_STATEID;
		goto out;
	}
	cl = client_find(st, clientid);
	host = cl ? cl->cl_host : 0;
	for (unsigned i = 0; i < st->st_locks_hi; i++) {
		struct nfs4_lock *l = &st->st_locks[i];

		if (!l->lk_used) {
			if (!free_lk)
				free_lk = l;
			continue;
		}
		host_n += host && l->lk_host == host;
		if (l->lk_clientid != clientid)
			continue;
		mine++;
		if (l->lk_owner == h && l->lk_fhlen == fhlen &&
		    memcmp(l->lk_fh, fh, fhlen) == 0) {
			lk = l;
			break;
		}
	}
	if (!lk && !free_lk && st->st_locks_hi < st->st_sz.sz_locks)
		free_lk = &st->st_locks[st->st_locks_hi];
	/* a new state: the table's room, the client's share of it and its
	 * host's (the loop stopped early only when it found the state) */
	if (!lk && (!free_lk || mine >= st->st_sz.sz_client_locks ||
		    host_n >= NFS4_HOST_SHARE(st->st_sz.sz_locks))) {
		status = NFS4ERR_RESOURCE;
		goto out;
	}
	if (!lk) {
		lk = free_lk;
		if ((uint32_t)(lk - st->st_locks) >= st->st_locks_hi)
			st->st_locks_hi = (uint32_t)(lk - st->st_locks) + 1;
		lk->lk_used = true;
		lk->lk_gen++;
		lk->lk_seqid = 0;
		lk->lk_clientid = clientid;
		lk->lk_owner = h;
		lk->lk_host = host;
		lk->lk_ld = *ld;
		lk->lk_dev = dev;
		lk->lk_ino = ino;
		lk->lk_fhlen = fhlen;
		memcpy(lk->lk_fh, fh, fhlen);
		/* the table owns it now */
		*ld = (struct fs_lockd){ .ld_be = NULL, .ld_fd = -1 };
	}
	lk->lk_access = op->op_access;
	*access = op->op_access;
	lock_sid(st, lk, out);
out:
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

uint32_t nfs4_lock_get(struct nfs4_state *st, uint64_t clientid,
		       const struct nfs4_stateid *sid, const uint8_t *fh,
		       uint32_t fhlen, struct fs_lockd *out, uint32_t *access)
{
	struct nfs4_lock *lk;
	uint32_t status;

	pthread_mutex_lock(&st->st_lock);
	status = lock_lookup(st, clientid, sid, &lk);
	if (status == NFS4_OK &&
	    (lk->lk_fhlen != fhlen || memcmp(lk->lk_fh, fh, fhlen) != 0))
		status = NFS4ERR_BAD_STATEID;
	if (status == NFS4_OK) {
		/* the same description: its locks are the owner's */
		if (fs_lock_dup(&lk->lk_ld, out) < 0)
			status = NFS4ERR_RESOURCE;
		*access = lk->lk_access;
	}
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

uint32_t nfs4_lock_find_owner(struct nfs4_state *st, uint64_t clientid,
			      const uint8_t *owner, uint32_t ownerlen,
			      const uint8_t *fh, uint32_t fhlen, struct fs_lockd *out)
{
	uint64_t h = fs_siphash(st->st_key, owner, ownerlen) ^ ownerlen ^
		     0x4c4f434b00000000ull;
	uint32_t status = NFS4ERR_BAD_STATEID;

	*out = (struct fs_lockd){ .ld_be = NULL, .ld_fd = -1 };
	pthread_mutex_lock(&st->st_lock);
	for (unsigned i = 0; i < st->st_locks_hi; i++) {
		struct nfs4_lock *l = &st->st_locks[i];

		if (l->lk_used && l->lk_clientid == clientid && l->lk_owner == h &&
		    l->lk_fhlen == fhlen && memcmp(l->lk_fh, fh, fhlen) == 0) {
			status = fs_lock_dup(&l->lk_ld, out) < 0 ? NFS4ERR_RESOURCE : NFS4_OK;
			break;
		}
	}
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

uint32_t nfs4_lock_bump(struct nfs4_state *st, uint64_t clientid,
			const struct nfs4_stateid *sid, struct nfs4_stateid *out)
{
	struct nfs4_lock *lk;
	uint32_t status;

	pthread_mutex_lock(&st->st_lock);
	status = lock_lookup(st, clientid, sid, &lk);
	if (status == NFS4_OK) {
		lk->lk_seqid++;
		lock_sid(st, lk, out);
	}
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

uint32_t nfs4_lock_free(struct nfs4_state *st, uint64_t clientid,
			const struct nfs4_stateid *sid)
{
	struct nfs4_lock *lk;
	uint32_t status;

	pthread_mutex_lock(&st->st_lock);
	status = lock_lookup(st, clientid, sid, &lk);
	if (status == NFS4_OK)
		lock_free(lk);
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

uint32_t nfs4_open_add(struct nfs4_state *st, uint64_t clientid,
		       const uint8_t *owner, uint32_t ownerlen,
		       const uint8_t *fh, uint32_t fhlen, uint32_t access,
		       uint32_t deny, struct nfs4_stateid *out)
{
	return nfs4_open_add_prev(st, clientid, owner, ownerlen, fh, fhlen, access,
				  deny, out, NULL);
}

uint32_t nfs4_open_add_prev(struct nfs4_state *st, uint64_t clientid,
			    const uint8_t *owner, uint32_t ownerlen,
			    const uint8_t *fh, uint32_t fhlen, uint32_t access,
			    uint32_t deny, struct nfs4_stateid *out,
			    struct nfs4_open_prev *pv)
{
	struct nfs4_open_prev prev = { 0 };
	uint64_t h = fs_siphash(st->st_key, owner, ownerlen) ^ ownerlen;
	struct nfs4_open *op, *free_op;
	struct nfs4_client *holder, *cl;
	uint32_t status = NFS4_OK, idx, mine, host_n;
	uint64_t host;
	time_t now = now_sec();

	if (fhlen > NFS4_FHSIZE)
		return NFS4ERR_BADHANDLE;
	pthread_mutex_lock(&st->st_lock);
	cl = client_find(st, clientid);
	if (!cl) {
		status = NFS4ERR_STALE_CLIENTID;
		goto out;
	}
	host = cl->cl_host;
again:
	op = free_op = NULL;
	mine = host_n = 0;
	for (unsigned i = 0; i < st->st_opens_hi; i++) {
		struct nfs4_open *o = &st->st_opens[i];

		if (!o->op_used) {
			if (!free_op)
				free_op = o;
			continue;
		}
		mine += o->op_clientid == clientid;
		host_n += host && o->op_host == host;
		if (o->op_fhlen != fhlen || memcmp(o->op_fh, fh, fhlen) != 0)
			continue;
		if (o->op_clientid == clientid && o->op_owner == h) {
			op = o;
			continue;
		}
		/* share reservations (RFC 8881 9.7): another open of the file
		 * denies what this one wants, or wants what this one denies */
		if ((o->op_deny & access) || (o->op_access & deny)) {
			/* a courtesy client's reservation gives way (its whole
			 * state goes), then the table is looked at again */
			holder = o->op_clientid != clientid ?
				 client_find(st, o->op_clientid) : NULL;
			if (holder && client_courtesy(st, holder, now)) {
				client_expire(st, holder);
				goto again;
			}
			status = NFS4ERR_SHARE_DENIED;
			goto out;
		}
	}
	if (!free_op && st->st_opens_hi < st->st_sz.sz_opens)
		free_op = &st->st_opens[st->st_opens_hi];
	if (!op && (mine >= st->st_sz.sz_client_opens ||
		    host_n >= NFS4_HOST_SHARE(st->st_sz.sz_opens))) {
		/* the client's share of the table, or its host's */
		status = NFS4ERR_RESOURCE;
		goto out;
	}
	if (op) {
		prev.pv_seqid = op->op_seqid;
		prev.pv_access = op->op_access;
		prev.pv_deny = op->op_deny;
		op->op_access |= access;
		op->op_deny |= deny;
		op->op_seqid++;
	} else if (free_op) {
		prev.pv_new = true;
		op = free_op;
		if ((uint32_t)(op - st->st_opens) >= st->st_opens_hi)
			st->st_opens_hi = (uint32_t)(op - st->st_opens) + 1;
		op->op_used = true;
		op->op_gen++;
		op->op_seqid = 1;
		op->op_clientid = clientid;
		op->op_owner = h;
		op->op_host = host;
		op->op_access = access;
		op->op_deny = deny;
		op->op_fhlen = fhlen;
		memcpy(op->op_fh, fh, fhlen);
	} else {
		status = NFS4ERR_RESOURCE;
		goto out;
	}
	idx = (uint32_t)(op - st->st_opens);
	out->si_seqid = op->op_seqid;
	other_make(st, idx, op->op_gen, out->si_other);
	prev.pv_now_access = op->op_access;
	prev.pv_now_deny = op->op_deny;
	if (pv)
		*pv = prev;
out:
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

void nfs4_open_undo(struct nfs4_state *st, uint64_t clientid,
		    const struct nfs4_stateid *sid, const struct nfs4_open_prev *pv)
{
	struct nfs4_open *op;

	pthread_mutex_lock(&st->st_lock);
	if (open_lookup(st, clientid, sid, &op) == NFS4_OK &&
	    op->op_seqid == sid->si_seqid) {
		if (pv->pv_new) {
			/* never seen by the client, nor recorded by the layer */
			op->op_used = false;
		} else {
			op->op_access = pv->pv_access;
			op->op_deny = pv->pv_deny;
			op->op_seqid = pv->pv_seqid;
		}
	}
	pthread_mutex_unlock(&st->st_lock);
}

void nfs4_state_set_shares(struct nfs4_state *st, struct rpcrdma_nfs3_server *srv)
{
	pthread_mutex_lock(&st->st_lock);
	st->st_shares = srv;
	pthread_mutex_unlock(&st->st_lock);
}

bool nfs4_stateid_special(const struct nfs4_stateid *sid)
{
	/* anonymous (all zero; seqid 1 with other zero is the "current
	 * stateid", treated as anonymous) and READ bypass (all ones) */
	return (other_is(sid->si_other, 0) && sid->si_seqid <= 1) ||
	       (other_is(sid->si_other, 0xff) && sid->si_seqid == UINT32_MAX);
}

uint32_t nfs4_open_find(struct nfs4_state *st, uint64_t clientid,
			const struct nfs4_stateid *sid, const uint8_t *fh,
			uint32_t fhlen, uint32_t *access)
{
	struct nfs4_open *op;
	uint32_t status;

	if (nfs4_stateid_special(sid)) {
		/* no open of its own: what the file's opens deny, anyone's
		 * (RFC 8881 8.2.3, 9.7); the READ bypass stateid reads past
		 * deny-read.  OPEN4_SHARE_DENY_* are the access bits. */
		uint32_t denied = 0;

		pthread_mutex_lock(&st->st_lock);
		for (unsigned i = 0; i < st->st_opens_hi; i++) {
			const struct nfs4_open *o = &st->st_opens[i];

			if (o->op_used && o->op_fhlen == fhlen &&
			    memcmp(o->op_fh, fh, fhlen) == 0)
				denied |= o->op_deny;
		}
		pthread_mutex_unlock(&st->st_lock);
		if (other_is(sid->si_other, 0xff))
			denied &= ~(uint32_t)OPEN4_SHARE_ACCESS_READ;
		*access = OPEN4_SHARE_ACCESS_BOTH & ~denied;
		return NFS4_OK;
	}
	pthread_mutex_lock(&st->st_lock);
	if (load_be32(sid->si_other + 4) & NFS4_LOCK_IDX) {
		struct nfs4_lock *lk;

		/* a lock stateid: I/O of a process holding locks (8.2.2) */
		status = lock_lookup(st, clientid, sid, &lk);
		if (status == NFS4_OK &&
		    (lk->lk_fhlen != fhlen || memcmp(lk->lk_fh, fh, fhlen) != 0))
			status = NFS4ERR_BAD_STATEID;
		if (status == NFS4_OK)
			*access = lk->lk_access;
		pthread_mutex_unlock(&st->st_lock);
		return status;
	}
	status = open_lookup(st, clientid, sid, &op);
	if (status == NFS4_OK) {
		if (op->op_fhlen != fhlen || memcmp(op->op_fh, fh, fhlen) != 0)
			status = NFS4ERR_BAD_STATEID;
		else
			*access = op->op_access;
	}
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

uint32_t nfs4_open_close(struct nfs4_state *st, uint64_t clientid,
			 const struct nfs4_stateid *sid, uint32_t access,
			 uint32_t deny, struct nfs4_stateid *out)
{
	struct nfs4_open *op;
	uint32_t status;

	pthread_mutex_lock(&st->st_lock);
	status = open_lookup(st, clientid, sid, &op);
	if (status)
		goto out;
	if (access && ((access & ~op->op_access) || (deny & ~op->op_deny))) {
		status = NFS4ERR_INVAL;
		goto out;
	}
	op->op_seqid++;
	out->si_seqid = op->op_seqid;
	memcpy(out->si_other, sid->si_other, NFS4_OTHER_SIZE);
	if (access) {
		op->op_access = access;
		op->op_deny = deny;
	} else {
		open_free(st, op);
	}
out:
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

uint32_t nfs4_open_test(struct nfs4_state *st, uint64_t clientid,
			const struct nfs4_stateid *sid)
{
	struct nfs4_open *op;
	struct nfs4_lock *lk;
	uint32_t status;

	pthread_mutex_lock(&st->st_lock);
	if (load_be32(sid->si_other + 4) & NFS4_LOCK_IDX)
		status = lock_lookup(st, clientid, sid, &lk);
	else
		status = open_lookup(st, clientid, sid, &op);
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

void nfs4_state_counts(struct nfs4_state *st, struct nfs4_state_counts *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&st->st_lock);
	for (unsigned i = 0; i < st->st_sz.sz_clients; i++)
		out->sc_clients += st->st_clients[i].cl_used;
	for (unsigned i = 0; i < st->st_sz.sz_sessions; i++)
		out->sc_sessions += st->st_sessions[i].se_used;
	for (unsigned i = 0; i < st->st_sz.sz_opens; i++)
		out->sc_opens += st->st_opens[i].op_used;
	for (unsigned i = 0; i < st->st_sz.sz_locks; i++)
		out->sc_locks += st->st_locks[i].lk_used;
	for (unsigned i = 0; i < st->st_sz.sz_clients; i++)
		out->sc_courtesy += client_courtesy(st, &st->st_clients[i], now_sec());
	out->sc_revoked = st->st_revoked;
	out->sc_reaped = st->st_reaped;
	out->sc_clid_inuse = st->st_clid_inuse;
	out->sc_wrong_cred = st->st_wrong_cred;
	out->sc_conn_unbound = st->st_conn_unbound;
	out->sc_false_retries = st->st_false_retries;
	pthread_mutex_unlock(&st->st_lock);
}

uint32_t nfs4_state_revoke_file(struct nfs4_state *st, uint64_t except,
				dev_t dev, ino_t ino)
{
	time_t now = now_sec();
	uint32_t n = 0;

	pthread_mutex_lock(&st->st_lock);
	for (unsigned i = 0; i < st->st_locks_hi; i++) {
		struct nfs4_lock *lk = &st->st_locks[i];
		struct nfs4_client *cl;

		if (!lk->lk_used || lk->lk_clientid == except)
			continue;
		cl = client_find(st, lk->lk_clientid);
		if (!cl || !client_courtesy(st, cl, now))
			continue;
		/* the file's identity, noted when the state was made */
		if (lk->lk_dev != dev || lk->lk_ino != ino)
			continue;
		client_expire(st, cl); /* its other lock states go too */
		n++;
	}
	pthread_mutex_unlock(&st->st_lock);
	return n;
}

bool nfs4_state_expire_courtesy(struct nfs4_state *st, uint64_t clientid)
{
	struct nfs4_client *cl;
	bool done = false;

	pthread_mutex_lock(&st->st_lock);
	cl = client_find(st, clientid);
	if (cl && client_courtesy(st, cl, now_sec())) {
		client_expire(st, cl);
		done = true;
	}
	pthread_mutex_unlock(&st->st_lock);
	return done;
}

uint32_t nfs4_state_sweep(struct nfs4_state *st)
{
	time_t now = now_sec();
	uint32_t n = 0;

	pthread_mutex_lock(&st->st_lock);
	for (unsigned i = 0; i < st->st_sz.sz_clients; i++) {
		struct nfs4_client *cl = &st->st_clients[i];

		if (!cl->cl_used || client_busy(st, cl) || !lease_expired(st, cl, now))
			continue;
		/* unconfirmed: no state, nothing to be courteous about */
		if (cl->cl_confirmed &&
		    now - cl->cl_renew <= (time_t)(st->st_lease + NFS4_COURTESY_MAX_SECONDS))
			continue;
		client_free(st, cl);
		st->st_reaped++;
		n++;
	}
	pthread_mutex_unlock(&st->st_lock);
	return n;
}

uint32_t nfs4_state_lease(const struct nfs4_state *st)
{
	return st->st_lease;
}

void nfs4_state_set_forget(struct nfs4_state *st,
			   void (*fn)(void *arg, uint64_t clientid, const uint8_t *owner,
				      uint32_t len),
			   void *arg)
{
	pthread_mutex_lock(&st->st_lock);
	st->st_forget = fn;
	st->st_forget_arg = arg;
	pthread_mutex_unlock(&st->st_lock);
}

uint32_t nfs4_client_owner(struct nfs4_state *st, uint64_t clientid,
			   uint8_t *buf, uint32_t *len)
{
	struct nfs4_client *cl;
	uint32_t status = NFS4_OK;

	pthread_mutex_lock(&st->st_lock);
	cl = client_find(st, clientid);
	if (!cl) {
		status = NFS4ERR_STALE_CLIENTID;
	} else {
		memcpy(buf, cl->cl_owner, cl->cl_ownerlen);
		*len = cl->cl_ownerlen;
	}
	pthread_mutex_unlock(&st->st_lock);
	return status;
}

bool nfs4_open_writers(struct nfs4_state *st, const uint8_t *fh, uint32_t fhlen)
{
	bool any = false;

	pthread_mutex_lock(&st->st_lock);
	for (uint32_t i = 0; i < st->st_opens_hi && !any; i++) {
		const struct nfs4_open *o = &st->st_opens[i];

		any = o->op_used && (o->op_access & OPEN4_SHARE_ACCESS_WRITE) &&
		      o->op_fhlen == fhlen && !memcmp(o->op_fh, fh, fhlen);
	}
	pthread_mutex_unlock(&st->st_lock);
	return any;
}
