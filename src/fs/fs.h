/* SPDX-License-Identifier: MIT */
/*
 * fs.h - the file-serving layer (src/fs), under NFSv3 (src/nfs3), NFSv4.1
 * (src/nfs4) and NLM (src/nlm): exports and the table in force, file
 * handles, credentials and squashing, the open-file and directory caches,
 * commit and sync policy, host names of peers, reaching files for a
 * caller.  The protocols include this header, never each other's.
 */
#ifndef RPCRDMA_FS_H
#define RPCRDMA_FS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <rpcrdma/nfs3.h>
#include <rpcrdma/svc.h>
#include <rpcrdma/xdr.h>

struct fs_backend;

/* Longest option string of a backend (backend=NAME:OPT=V:OPT=V). */
#define FS_BE_OPTS_MAX 128u
struct fs_fentry;

/* Longest name component accepted on the wire (longer: GARBAGE_ARGS). */
#define FS_WIRE_NAME_MAX 1024u

struct rpcrdma_nfs3_export {
	char *ex_path;
	int ex_fd;            /* O_RDONLY|O_DIRECTORY: mount fd for open_by_handle_at */
	dev_t ex_dev;
	ino_t ex_ino;
	int ex_mnt_id;
	uint16_t ex_id;       /* the export's id in its handles (fsid=) */
	uint64_t ex_fsid;     /* fattr3 fsid */
	uint8_t ex_verf[8];   /* WRITE/COMMIT verifier: changes per start */
	uint8_t ex_key[RPCRDMA_NFS3_KEY_BYTES];
	uint32_t ex_max_payload;
	bool ex_no_root_squash; /* rpcrdma_nfs3_dispatch() only */
	bool ex_async;          /* rpcrdma_nfs3_dispatch() only: no commit_metadata */
	FILE *ex_log;
	int ex_verbose;
	struct fs_fcache *ex_fcache; /* open files; NULL: no cache */
	struct fs_fcache *ex_dcache; /* open directories; NULL: no cache */
	/* preadv2(RWF_NOWAIT) refused by the file system: READ is never
	 * served on the transport thread (nfs3_transport.c) */
	_Atomic bool ex_nowait_unsupported;
	/* tmpfs or ramfs: file data and directories live in memory, nothing
	 * waits for a disk (nfs3_transport.c) */
	bool ex_mem_fs;
	atomic_uint ex_refs;  /* server tables holding it (fs_server.c) */
	const struct fs_backend *ex_be; /* the backend serving it (fs_backend.h) */
	void *ex_be_priv;     /* the backend's own state of the export */
	char ex_be_opts[FS_BE_OPTS_MAX]; /* the options it was opened with */
	atomic_uint_fast64_t ex_commits; /* objects committed (fs_commit.c) */
};

/* ---- fs_export.c ---- */

/**
 * fs_export_open - rpcrdma_nfs3_export_open() with the backend and its
 * options already parsed (fs_backend_parse(); @opts comma-separated, ""
 * for none; cfg->nc_backend is not read).  Return: as
 * rpcrdma_nfs3_export_open().
 */
int fs_export_open(const struct rpcrdma_nfs3_config *cfg,
		   const struct fs_backend *be, const char *opts,
		   struct rpcrdma_nfs3_export **out);

/** fs_is_mem_fs - whether @fd's file system keeps its data in memory
 *  (tmpfs, ramfs). */
bool fs_is_mem_fs(int fd);

/* ---- fs_exports.c: a parsed exports file ---- */

enum fs_xclient_kind {
	FS_XC_ANY,      /* "*" */
	FS_XC_NET,      /* an address, a network, a resolved host name */
	FS_XC_WILDCARD, /* a host name pattern (fnmatch) */
};

/* One client entry of an export. */
struct fs_xclient {
	enum fs_xclient_kind xc_kind;
	struct sockaddr_storage xc_net;
	unsigned xc_prefix;
	char *xc_name;       /* as written (the pattern of a wildcard) */
	bool xc_listed;      /* MOUNT's EXPORT lists it (a host name's first address) */
	struct rpcrdma_nfs3_xopts xc_opts;
};

/* One export line. */
struct fs_xspec {
	char *xs_path;
	unsigned xs_line;
	uint16_t xs_id;
	bool xs_have_fsid;
	const struct fs_backend *xs_be; /* backend=NAME (default posix) */
	char xs_be_opts[FS_BE_OPTS_MAX]; /* its options ("": none), fs_backend_parse() */
	struct fs_xclient *xs_clients; /* in file order: the first match wins */
	unsigned xs_nclients;
};

struct rpcrdma_nfs3_exports {
	struct fs_xspec *xt_specs;
	unsigned xt_n;
	bool xt_wild; /* some entry is a wildcard: matching may need a peer's name */
};

/** fs_exports_names_init - note whether @xt has wildcard entries. Return: 0. */
int fs_exports_names_init(struct rpcrdma_nfs3_exports *xt);

/* What fs_exports_match_peer() knows. */
enum fs_xmatch {
	FS_XM_NO,
	FS_XM_YES,
	FS_XM_UNKNOWN, /* a wildcard entry needs the peer's name, not known yet */
};

/**
 * fs_exports_match_peer - rpcrdma_nfs3_exports_match() that tells "not
 * known yet" apart.
 * @wait: a caller that may wait (not on a transport thread) waits at most
 *        FS_NAMES_WAIT_MS for the peer's name; on a transport thread
 *        (rpcrdma_svc_on_transport_thread()) it never waits.
 * Return: FS_XM_YES (*@out set when not NULL), FS_XM_NO, or
 * FS_XM_UNKNOWN when the first entry that could decide is a wildcard and
 * the peer's name is still being looked up (queued: ask again later).
 */
enum fs_xmatch fs_exports_match_peer(const struct rpcrdma_nfs3_exports *xt,
				     unsigned i, const struct sockaddr *peer,
				     bool wait, struct rpcrdma_nfs3_xopts *out);

/* ---- fs_hostname.c: confirmed peer names, cached, resolved off the caller's thread ---- */

#define FS_NAMES_ENTRIES 256u       /* addresses remembered */
#define FS_NAMES_TTL_SEC 300u       /* a confirmed name */
#define FS_NAMES_NEG_TTL_SEC 60u    /* no name, or one the forward lookup denies */
#define FS_NAMES_AGAIN_TTL_SEC 5u   /* a lookup failed for now (EAI_AGAIN) */
#define FS_NAMES_WAIT_MS 1000u      /* most a caller off the transport thread waits */
#define FS_NAMES_STALE_SEC 300u     /* a confirmed name past its TTL is still served
				     * this long while it is looked up again */
#define FS_NAMES_RESOLVERS 8u       /* resolver threads, taking the oldest lookup first */
#define FS_NAMES_NET_RESOLVERS 1u   /* resolvers one network (IPv4 /24, IPv6 /64) holds at once */
#define FS_NAMES_NET_PENDING 8u     /* entries waiting for a resolver one network may hold */
#define FS_NAME_MAX 255u            /* longest name kept (a DNS name has 253) */

enum fs_name_result {
	FS_NAME_NONE,    /* no confirmed name (cached for its TTL) */
	FS_NAME_OK,      /* the confirmed name is in the buffer */
	FS_NAME_PENDING, /* being looked up: ask again */
};

/**
 * fs_name_of - the confirmed host name of @peer (IPv4, IPv6, or IPv4
 * mapped in IPv6) from the cache: a name whose forward lookup lists
 * @peer's address.  A miss, or an entry past its TTL, queues a lookup for
 * the resolver threads; then a caller with @wait set that is not on a
 * transport thread waits for it, until FS_NAMES_WAIT_MS after the
 * lookup was queued (a later caller of a hanging lookup does not wait).
 * A confirmed name past its TTL is answered at once (for at most
 * FS_NAMES_STALE_SEC more) while it is looked up again.  No lookup ever
 * runs on the calling thread.
 * @buf: out: the name, NUL-terminated (@len bytes, truncated to fit).
 * Return: FS_NAME_OK, FS_NAME_NONE (also for a peer neither IPv4 nor
 * IPv6), FS_NAME_PENDING (not known yet; also, not queued, when every
 * cache entry is waiting for a resolver or the peer's network has
 * FS_NAMES_NET_PENDING entries waiting).
 */
enum fs_name_result fs_name_of(const struct sockaddr *peer, bool wait,
			       char *buf, size_t len);

struct addrinfo;

/*
 * The resolver's seam, for the unit tests: the lookups, the clock the
 * TTLs count in (ns, monotonic), the test "am I on a transport thread"
 * and how a caller waits for a lookup (nr_cond_timedwait: on the cache's
 * condition and lock, until @abstime, CLOCK_REALTIME; 0 when woken,
 * ETIMEDOUT at the deadline; NULL: pthread_cond_timedwait()).  The default
 * is libc's getnameinfo/getaddrinfo/freeaddrinfo, CLOCK_MONOTONIC,
 * rpcrdma_svc_on_transport_thread() and pthread_cond_timedwait().
 */
struct fs_resolver {
	int (*nr_getnameinfo)(const struct sockaddr *sa, socklen_t salen, char *host,
			      socklen_t hostlen, char *serv, socklen_t servlen, int flags);
	int (*nr_getaddrinfo)(const char *node, const char *service,
			      const struct addrinfo *hints, struct addrinfo **res);
	void (*nr_freeaddrinfo)(struct addrinfo *res);
	uint64_t (*nr_now_ns)(void);
	bool (*nr_on_transport)(void);
	int (*nr_cond_timedwait)(pthread_cond_t *cond, pthread_mutex_t *mutex,
				 const struct timespec *abstime);
};

/** fs_names_on_transport - rpcrdma_svc_on_transport_thread(), through the seam. */
bool fs_names_on_transport(void);

/**
 * fs_names_set_resolver - use @r (static storage; NULL: libc's) and
 * forget every cached name and counter.  Lookups under way when it is
 * called have their answers dropped, and it returns only once they have
 * ended: no function of the resolver replaced is called after it returns
 * (a caller whose fake resolver holds lookups back lets them go first,
 * else this waits for as long as they are held).  For tests.
 */
void fs_names_set_resolver(const struct fs_resolver *r);

/* Counters of the name cache (since the last fs_names_set_resolver()). */
struct fs_names_stats {
	uint64_t ns_lookups;   /* fs_name_of() calls */
	uint64_t ns_hits;      /* answered from a fresh entry */
	uint64_t ns_stale;     /* answered with a name past its TTL, looked up again */
	uint64_t ns_queued;    /* lookups queued for the resolvers */
	uint64_t ns_confirmed; /* lookups that gave a confirmed name */
	uint64_t ns_no_name;   /* lookups that gave none (or an unconfirmed one) */
	uint64_t ns_timeouts;  /* waits that ended before the answer */
	uint64_t ns_full;      /* misses with every entry waiting for a resolver */
	uint64_t ns_net_full;  /* misses not queued: FS_NAMES_NET_PENDING of their network waiting */
	uint64_t ns_evictions; /* resolved entries given to another address */
};

/** fs_names_get_stats - copy the name cache's counters into @out. */
void fs_names_get_stats(struct fs_names_stats *out);

/* ---- fs_server.c: the table in force ---- */

/*
 * One table of opened exports.  A call takes a reference for its duration
 * (fs_snap_get()); a reload installs a new one and drops the server's
 * reference to the old, which is freed when its last call ends.
 */
struct fs_snap {
	atomic_uint sn_refs;
	struct rpcrdma_nfs3_exports *sn_xt;     /* owned */
	struct rpcrdma_nfs3_export **sn_exp;    /* one per sn_xt spec, each referenced */
};

/* fs_snap_index - the index in @sn of the export whose id is @id (a
 * handle's export id), or sn->sn_xt->xt_n when none has it. */
static inline unsigned fs_snap_index(const struct fs_snap *sn, unsigned id)
{
	unsigned i;

	for (i = 0; i < sn->sn_xt->xt_n; i++)
		if (sn->sn_exp[i]->ex_id == id)
			break;
	return i;
}

/** fs_snap_get - the table in force, referenced (never NULL). */
struct fs_snap *fs_snap_get(struct rpcrdma_nfs3_server *srv);
/** fs_snap_put - drop a reference; the last frees the table. */
void fs_snap_put(struct fs_snap *sn);

/* ---- fs_instance.c: the server's identity across restarts ---- */

/**
 * fs_instance - the state directory rpcrdma_nfs3_set_instance() noted, or
 * NULL (none: backends keep no identity across restarts).  Valid until the
 * next rpcrdma_nfs3_set_instance().
 */
const char *fs_instance(void);

/**
 * fs_instance_grace_end - when this server's grace period after its start
 * ends, in CLOCK_REALTIME seconds (rpcrdma_nfs3_set_instance_grace()), or
 * 0 (none noted).  What a backend shared by several servers announces to
 * the others before it takes over its previous incarnation's state.
 */
int64_t fs_instance_grace_end(void);

/**
 * fs_cluster_grace - is another server of @exp's storage in its grace
 * period (be_cluster_grace)?  A protocol then refuses new locks and opens
 * on @exp (NLM4_DENIED_GRACE_PERIOD, NFS4ERR_GRACE) as in its own grace
 * period; reclaims follow its own grace period's rules.  Return: 1 (in
 * grace), 0 (not, or a backend without the member: posix, memory); -EAGAIN
 * (cannot tell now: the protocol answers as in grace, the client retries).
 */
int fs_cluster_grace(struct rpcrdma_nfs3_export *exp);

/* ---- fs_fh.c ---- */

/** Kernel file handle bytes that fit: 64 - 8 (header) - 8 (MAC). */
#define FS_FH_KERNEL_MAX 48u
#define FS_FH_OVERHEAD 16u
#define FS_FH_VERSION 1u

/**
 * fs_siphash - SipHash-2-4 (Aumasson and Bernstein, 2012) of @len bytes.
 */
uint64_t fs_siphash(const uint8_t key[16], const void *data, size_t len);

/**
 * fs_fh_encode - the handle of a backend's key (be_fh_key()) in @exp:
 * version, key length, the export's id, @type, the @keylen bytes of @key
 * (at most FS_FH_KERNEL_MAX), and their MAC under the export key (layout
 * at the top of fs_fh.c).  @fh: out: RPCRDMA_NFS3_FHSIZE bytes; *@lenp:
 * bytes used.  Return: 0, or -EOVERFLOW (key too long).
 */
int fs_fh_encode(const struct rpcrdma_nfs3_export *exp, uint32_t type,
		 const uint8_t *key, uint32_t keylen, uint8_t *fh,
		 uint32_t *lenp);

/**
 * fs_fh_check - the MAC and the layout of handle @fh (@len bytes) in @exp.
 * *@type, *@key (pointing into @fh), *@keylen: the backend's key.
 * Return: 0; -EBADMSG (malformed or forged: NFS3ERR_BADHANDLE); -EXDEV (a
 * genuine handle of another export: NFS3ERR_XDEV).
 */
int fs_fh_check(const struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		uint32_t len, uint32_t *type, const uint8_t **key,
		uint32_t *keylen);

/**
 * fs_fh_decode - the object handle @fh (@len bytes) names, into @fe
 * (initialised here; fe_be set; release it with the backend's be_release,
 * as fs_fcache_put() of an uncached entry does) and its attributes into
 * @st: fs_fh_check(), then the backend's be_fh_decode() (the posix backend
 * decodes with the server's credentials, fs_cred_for_handle()).  Not
 * cached.  Return: 0; -EBADMSG; -EXDEV; -ESTALE (the object is gone or
 * lies on another file system: NFS3ERR_STALE); -ENOMEM; -EIO; other errors
 * of the backend's.
 */
int fs_fh_decode(const struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		 uint32_t len, struct fs_fentry *fe, struct stat *st);

/* ---- fs_fcache.c ---- */

/*
 * One open regular file or directory of a cache, or (fe_shard NULL) an
 * object held for one call only.  The backend's object (fe_path, fe_rfd,
 * fe_wfd for the posix backend; fe_node for others), fe_type, fe_be and
 * the handle are fixed while a call holds a reference, but for the posix
 * backend's fe_rfd/fe_wfd, which go from -1 to a descriptor once
 * (atomically, fs_fcache_set_fd); all are released with the entry
 * (fe_be->be_release).  An entry of one call has its handle in fe_fh only
 * when it was decoded from one (fe_fhlen 0 otherwise).
 */
struct fs_fshard;
/* a caller's identity after squashing (fs_cred.c) */
struct fs_cred {
	uint32_t cr_uid;
	uint32_t cr_gid;
	uint32_t cr_ngids;
	uint32_t cr_gids[RPC_AUTH_SYS_MAX_GIDS];
};

/*
 * struct fs_grant - an access decision a cache entry remembers
 * (fs_fcache_granted()): caller @gr_cred passed the check for the bits
 * in @gr_acc (FS_GRANT_READ, FS_GRANT_WRITE) on the file while its
 * attributes were @gr_ctim, @gr_mode, @gr_uid, @gr_gid.
 */
struct fs_grant {
	uint32_t gr_acc;                /* FS_GRANT_*; 0: no decision */
	struct fs_cred gr_cred;
	struct timespec gr_ctim;
	mode_t gr_mode;
	uid_t gr_uid;
	gid_t gr_gid;
};

enum { FS_GRANT_READ = 1u << 0, FS_GRANT_WRITE = 1u << 1 };

struct fs_fentry {
	struct fs_fentry *fe_hnext;   /* hash chain, or free list */
	struct fs_fentry *fe_prev;    /* LRU list of the shard */
	struct fs_fentry *fe_next;
	struct fs_fshard *fe_shard;   /* NULL: not cached */
	uint64_t fe_hash;
	uint64_t fe_stamp;              /* cache clock at last use; shard lock */
	uint32_t fe_refs;               /* calls, +1 while hashed; shard lock */
	bool fe_hashed;
	mode_t fe_type;                 /* S_IFMT bits */
	int fe_path;                    /* O_PATH|O_NOFOLLOW, from the handle */
	int fe_rfd;                     /* O_RDONLY, or -1 */
	int fe_wfd;                     /* O_WRONLY, or -1 */
	void *fe_node;                  /* a backend's object without descriptors */
	const struct fs_backend *fe_be; /* whose object it holds; NULL: none */
	uint32_t fe_fhlen;
	uint8_t fe_fh[RPCRDMA_NFS3_FHSIZE];
	/* the object's identity while hashed (its descriptors pin it, so no
	 * other object of the file system has it meanwhile), and the cache
	 * clock its insertion took: the inode index (fs_fcache_fh_of_ino) */
	struct fs_fentry *fe_inext;     /* inode index chain; fc_ino_lock */
	dev_t fe_dev;
	ino_t fe_ino;
	uint64_t fe_born;
	struct fs_grant fe_grant;       /* shard lock; cached entries only */
};

struct fs_fcache;

/**
 * fs_fcache_create - a cache of @entries open files (0: the default;
 * RPCRDMA_NFS3_FCACHE_OFF: *@out NULL, no cache).
 * Return: 0 or -ENOMEM.
 */
int fs_fcache_create(uint32_t entries, struct fs_fcache **out);

/** fs_fcache_destroy - close every entry; no call may hold one. */
void fs_fcache_destroy(struct fs_fcache *fc);

/**
 * fs_fcache_get - the open object a handle names: an entry of the
 * open-file cache or of the directory cache, or on a miss the handle
 * decoded with fs_fh_decode() and, for a regular file
 * or a directory, cached in the cache that keeps its type (evicting the
 * least recently used entry of the cache when full).  Objects not cached
 * use @local (caller storage).  A miss counts in the open-file cache.
 * No permission is checked here (fs_open() does).
 * @st: NULL, or out: the object's attributes now (be_getattr on a hit).
 * @out: out: the entry; release it with fs_fcache_put().
 * Return: 0, or the errors of fs_fh_decode() (-EBADMSG, -ESTALE, ...) and
 * of be_getattr.  Locking: takes and drops a shard lock, never across a
 * system call.
 */
int fs_fcache_get(struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		  uint32_t len, struct fs_fentry *local,
		  struct fs_fentry **out, struct stat *st);

/**
 * fs_dcache_get - fs_fcache_get() for a directory's handle, through
 * the directory cache (ex_dcache): only directories are kept there.
 */
int fs_dcache_get(struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		  uint32_t len, struct fs_fentry *local,
		  struct fs_fentry **out, struct stat *st);

/**
 * fs_fcache_adopt - after CREATE, MKDIR, LOOKUP or another operation
 * returned an object into caller storage @fe (attributes @st): give it to
 * the cache that keeps objects of its type, as the entry of handle @fh,
 * so the calls that follow (SETATTR after an exclusive CREATE, GETATTR,
 * the new directory's operations) find it open.  The object is taken out
 * of @fe whatever happens (@fe then holds nothing; released when the
 * handle is cached already, when its type is not cached, or when every
 * entry is in use).  @fe must not be an entry of a cache.
 */
void fs_fcache_adopt(struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		     uint32_t len, struct fs_fentry *fe, const struct stat *st);

/* The two caches' clocks at one moment (fs_fcache_mark()). */
struct fs_fcache_mark {
	uint64_t fm_clock[2]; /* ex_fcache, ex_dcache */
};

/**
 * fs_fcache_mark - note the clocks of @exp's two caches into @m, before
 * a lookup by name whose result fs_fcache_fh_of_ino() is to match.
 */
void fs_fcache_mark(const struct rpcrdma_nfs3_export *exp,
		    struct fs_fcache_mark *m);

/**
 * fs_fcache_fh_of_ino - the handle of the object with identity @dev,
 * @ino, taken from an entry of @exp's caches that was inserted before
 * @m was noted and is still cached: its descriptors then held that
 * object from before @m to now, so an object of the same @dev and @ino
 * seen in between (a stat by name after fs_fcache_mark()) is that
 * object, and its handle is the one name_to_handle_at() would give.
 * @fh: out, RPCRDMA_NFS3_FHSIZE bytes; @lenp: out, its length.
 * Return: 0, or -ENOENT (no such entry: make the handle the long way).
 * Locking: the caches' inode-index locks, never across a system call.
 */
int fs_fcache_fh_of_ino(const struct rpcrdma_nfs3_export *exp,
			const struct fs_fcache_mark *m, dev_t dev, ino_t ino,
			uint8_t *fh, uint32_t *lenp);

/**
 * fs_fcache_put - drop a reference (NULL: no-op); the last one closes.
 * A cached entry counts as used until its put (LRU and idle sweeps).
 */
void fs_fcache_put(struct fs_fentry *fe);

/**
 * fs_fcache_granted - may the cached descriptor of entry @fe for @acc
 * (O_RDONLY, O_WRONLY) serve caller @cr without asking the file system
 * again?  True when the entry remembers that @cr passed the check for
 * @acc (fs_fcache_grant()) and the file's attributes @st (fresh: fetched
 * by this call) still have the ctime, mode, owner and group they had:
 * every change of permission (chmod, chown, an ACL) changes the ctime.
 * False for an entry of one call (nothing is remembered).
 */
bool fs_fcache_granted(struct fs_fentry *fe, const struct fs_cred *cr,
		       const struct stat *st, int acc);
/**
 * fs_fcache_granted_to - fs_fcache_granted() without the attributes:
 * does @fe remember a decision for @cr and @acc at all?  Only for a
 * caller that compares the attributes after (fs_open_recheck()).
 */
bool fs_fcache_granted_to(struct fs_fentry *fe, const struct fs_cred *cr,
			  int acc);
/**
 * fs_fcache_grant - remember that caller @cr passed the check for @acc
 * on @fe while its attributes were @st (fresh), so the next call of the
 * same caller skips it (fs_fcache_granted()).  A decision for another
 * caller replaces the one held (one caller a file is the common case).
 * Nothing is remembered while @st's ctime is less than
 * FS_GRANT_CTIME_AGE seconds old: a change in the same tick of the file
 * system's clock could leave the ctime as it was.  No-op for an entry of
 * one call.
 */
void fs_fcache_grant(struct fs_fentry *fe, const struct fs_cred *cr,
		     const struct stat *st, int acc);
/* seconds a ctime must be behind the clock before a decision is kept */
#define FS_GRANT_CTIME_AGE 2
/**
 * fs_fcache_set_grant_age - the seconds fs_fcache_grant() wants a ctime
 * behind the clock (FS_GRANT_CTIME_AGE until set), for the unit tests,
 * which would otherwise wait for their files to age; 0 keeps a decision
 * on any file (then only a change of mode, owner or group, or a ctime of
 * another tick, takes it away).  Process-wide.
 */
void fs_fcache_set_grant_age(int seconds);
/** fs_fcache_grant_keeps - would fs_fcache_grant() keep a decision made
 *  under @st (its ctime old enough)? */
bool fs_fcache_grant_keeps(const struct stat *st);

/**
 * fs_fcache_forget - after REMOVE or RENAME took away a name, or when a
 * directory is found with no links: drop the handle's object from the
 * caches (closed when its last call ends), as knfsd closes cached files on
 * unlink, so the space is freed and a handle with no name left turns
 * STALE.  Whether other links are left is not asked (it would cost an
 * fstat on every REMOVE): a file with another name is opened again by its
 * handle on its next call.
 */
void fs_fcache_forget(struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		      uint32_t len);

/* ---- fs_cred.c ---- */

/** fs_cred_in_group - is @gid @cr's group or one of its supplementary
 *  groups? */
bool fs_cred_in_group(const struct fs_cred *cr, uint32_t gid);
/**
 * fs_cred_may - the POSIX mode-bit check, for backends that check
 * permissions themselves (no identity switch): has @cr every bit of @want
 * (R_OK 4, W_OK 2, X_OK 1) on an object of @mode owned by @uid:@gid?  The
 * owner's bits, else the group's (fs_cred_in_group), else the others';
 * uid 0 passes every check but execute of a non-directory with no x bit
 * at all (as the kernel's CAP_DAC_OVERRIDE).  Return: 0; -EACCES.
 */
int fs_cred_may(const struct fs_cred *cr, mode_t mode, uint32_t uid,
		uint32_t gid, int want);

/**
 * fs_cred_from_req - the identity to serve @req with, squashed as
 * @opts says (AUTH_NONE: anonuid/anongid).
 * Return: 0, or RPCRDMA_AUTH_TOOWEAK / RPCRDMA_AUTH_BADCRED.
 */
uint32_t fs_cred_from_req(const struct rpcrdma_nfs3_xopts *opts,
			  const struct rpcrdma_svc_req *req,
			  struct fs_cred *cr);

/** fs_cred_apply - run this thread's file system calls as @cr. 0/-errno. */
int fs_cred_apply(const struct fs_cred *cr);

/**
 * fs_cred_restore - back to the server's identity: fsuid/fsgid the
 * effective ids; no supplementary groups, except that a root server keeps
 * the last caller's (its file system capabilities make them irrelevant).
 * Each thread remembers what it set: only changes cost system calls.
 */
void fs_cred_restore(void);

/**
 * fs_cred_no_umask - before CREATE or MKDIR makes a name with the mode
 * the caller sent: clear the umask, so the mode reaches the file system as
 * sent (the client applied its own umask; RFC 1813 3.3.8), whatever umask
 * the server was started with.  knfsd's threads run with umask 0 for the
 * same reason.  The umask is shared by the threads of a process (CLONE_FS):
 * the first call on a thread gives the thread a file system context of its
 * own (unshare(CLONE_FS), which also copies the working directory and root;
 * the server resolves every name from a descriptor) and clears the
 * thread's umask, which then stays 0: later calls make no system call,
 * until rpcrdma_nfs3_thread_release() gives the thread back to its owner,
 * who may change it.  Where unshare is refused (a seccomp filter) the
 * process' umask is cleared instead, on every call.
 */
void fs_cred_no_umask(void);

/**
 * fs_cred_is_server - true when the server acting as itself already
 * serves @cr exactly: a root server and a root caller whose group is the
 * server's (with fsuid 0 the file system capabilities decide, the
 * supplementary groups do not), or a non-root server and a caller with its
 * uid and gid and no supplementary groups.
 */
bool fs_cred_is_server(const struct fs_cred *cr);

/**
 * fs_cred_freeze - while @on, this thread's credentials never change:
 * fs_cred_apply() succeeds only for an identity fs_cred_is_server()
 * accepts (else -EPERM), and fs_cred_restore() does nothing.  For the
 * transport thread, whose device posts the kernel refuses once its
 * credentials have changed (docs/bench-profile.md).
 */
void fs_cred_freeze(bool on);

/**
 * fs_cred_call_begin - a new call starts on this thread.  The thread
 * may still run as the previous call's caller: a worker keeps that
 * identity, so that the next call of the same caller switches nothing.
 */
void fs_cred_call_begin(void);

/**
 * fs_cred_for_handle - before decoding a file handle (open_by_handle_at
 * needs the server's CAP_DAC_READ_SEARCH): back to the server's identity
 * (free when the thread already has it).  Once the call switched to its
 * caller (fs_cred_apply()), it does nothing: a handle decoded then fails
 * with the caller's rights rather than run with the server's.
 */
void fs_cred_for_handle(void);

/** fs_is_root - does @st describe the export root? */
static inline bool fs_is_root(const struct rpcrdma_nfs3_export *exp,
			      const struct stat *st)
{
	return st->st_dev == exp->ex_dev && st->st_ino == exp->ex_ino;
}

/* One call in progress. */
struct fs_call {
	struct rpcrdma_nfs3_server *c_srv; /* NULL: a bare export (no hooks) */
	struct rpcrdma_nfs3_export *c_exp;
	struct rpcrdma_svc_req *c_req;
	struct rpcrdma_xdr *c_args;
	struct rpcrdma_xdr *c_res;
	struct fs_cred c_cred;
	bool c_as_caller; /* thread runs with c_cred */
	bool c_ro;        /* the caller's export entry is ro */
	bool c_modifies;  /* the procedure changes the file system */
	bool c_commit;    /* commit_metadata before replying (fs_commit.c) */
	int c_fh_err;     /* 0, or what every handle of this call opens to:
			   * -EACCES (caller not listed), -ESTALE (export gone) */
	/* On the transport thread: file data only from the page cache
	 * (RWF_NOWAIT); c_defer set when the call must move to a worker */
	bool c_nowait;
	bool c_defer;
	/* READ: the handler checks the caller's access again after the read,
	 * with the attributes it fetches then, before any data leaves
	 * (fs_open_recheck()); fs_open() may then skip the check of a cached
	 * descriptor whose entry remembers this caller's decision, and sets
	 * c_unchecked when it did */
	bool c_check_after;
	bool c_unchecked;
	/* checked before the read without attributes: fs_open_recheck()
	 * checks again only to remember the decision, when it can be kept */
	bool c_keep;
};

/* ---- fs_commit.c: commit_metadata ---- */

/**
 * fs_commit_dir - when the call commits metadata (c_commit: a namespace
 * operation of a sync export entry on a file system with a disk), make
 * the directory of entry @dfe stable (fsync of a descriptor kept in the
 * entry) before the reply; otherwise, or with @dfe NULL, nothing.  Call it
 * after the operation succeeded.  Return: 0, or a negative errno from
 * opening the directory for reading or from fsync (-EIO, -ENOSPC, ...):
 * the procedure then answers that error, as knfsd does.
 */
int fs_commit_dir(struct fs_call *c, struct fs_fentry *dfe);

/**
 * fs_commit_obj - fs_commit_dir() for the object of entry @fe itself
 * after SETATTR, or a new one before its directory's commit (fs_commit.c):
 * a regular file or a directory is fsynced; other types
 * have no descriptor to sync and are not (0).  Return: as
 * fs_commit_dir().
 */
int fs_commit_obj(struct fs_call *c, struct fs_fentry *fe);

/** The fsync fs_commit_dir() and fs_commit_data() make, the
 *  fdatasync of the latter and the pwritev2 of fs_write_data(); a unit
 *  test may replace them. */
extern int (*fs_commit_fsync)(int fd);
extern int (*fs_commit_fdatasync)(int fd);
extern ssize_t (*fs_commit_pwritev2)(int fd, const struct iovec *iov,
				     int cnt, off_t off, int flags);

/* ---- names and attributes to set, as the procedures decoded them ---- */

/* A decoded filename3 (RFC 1813 2.5), NUL-terminated. */
struct fs_name {
	char n_buf[FS_WIRE_NAME_MAX + 1];
	uint32_t n_len;
};

/*
 * How an fs_sattr sets a time: the numbers of NFSv3's time_how (RFC 1813
 * 2.6), so that NFSv3's decoder stores what it read (nfs3_internal.h
 * checks that they agree).
 */
enum fs_time_how {
	FS_DONT_CHANGE = 0,
	FS_SET_TO_SERVER_TIME = 1,
	FS_SET_TO_CLIENT_TIME = 2,
};

/*
 * How stable fs_write_data() makes what it writes: stable_how, the same
 * numbers in NFSv3 (RFC 1813 3.3.7) and NFSv4.1 (RFC 8881 18.32; both
 * internal headers check that they agree).
 */
enum fs_stable_how {
	FS_UNSTABLE = 0,
	FS_DATA_SYNC = 1,
	FS_FILE_SYNC = 2,
};

/* A decoded sattr3 (RFC 1813 2.6); times' how is enum fs_time_how. */
struct fs_sattr {
	bool sa_set_mode, sa_set_uid, sa_set_gid, sa_set_size;
	uint32_t sa_mode, sa_uid, sa_gid;
	uint64_t sa_size;
	uint32_t sa_atime_how, sa_mtime_how;
	struct timespec sa_atime, sa_mtime;
};

/* ---- fs_file.c: reaching files ---- */

/**
 * fs_become_caller - act for the caller from here on: after the ro check,
 * a backend that runs as the caller (FS_BE_SWITCHES_IDENTITY) has the
 * thread switched to c_cred (fs_cred_apply()); any other takes c_cred
 * with each operation.  c_as_caller set.  Return: 0; -EROFS (a modifying
 * procedure on a ro export entry); -EPERM (the switch failed).
 */
int fs_become_caller(struct fs_call *c);
/**
 * fs_open_handle - the object @fh names, decoded (fs_fh_decode()) into
 * caller storage @local (*@out points at it; release with
 * fs_fcache_put()), not through a cache; @st its attributes.  *@out NULL
 * on error.  Return: 0, c_fh_err, or fs_fh_decode()'s errors.
 */
int fs_open_handle(struct fs_call *c, const uint8_t *fh, uint32_t len,
		   struct fs_fentry *local, struct fs_fentry **out,
		   struct stat *st);
/** fs_get_dir - a directory's handle through the directory cache (c_fh_err first). */
int fs_get_dir(struct fs_call *c, const uint8_t *fh, uint32_t len,
	       struct fs_fentry *local, struct fs_fentry **fep,
	       struct stat *st);

/** fs_get_file - the handle's object through the open-file cache (c_fh_err first). */
int fs_get_file(struct fs_call *c, const uint8_t *fh, uint32_t len,
		struct fs_fentry *local, struct fs_fentry **fep,
		struct stat *st);
/** fs_want_regular_type - 0 for S_IFREG, -EISDIR, else -EINVAL. */
int fs_want_regular_type(mode_t type);
/** fs_want_regular - READ/WRITE/COMMIT/size type check: 0, -EISDIR, -EINVAL. */
int fs_want_regular(const struct stat *st);
/* ---- fs_vfs.c: the operations the protocols call ---- */

/*
 * Every object a protocol reaches is a struct fs_fentry from
 * fs_get_file(), fs_get_dir(), fs_open_handle() or one of the operations
 * below that return one (into caller storage @local, *@out pointing at it
 * or at a cache entry), released with fs_fcache_put().  Protocols never
 * look inside an entry but for fe_type and the handle; the backend
 * (c_exp->ex_be, fs_backend.h) does the work.  The caller's identity is
 * c_cred; fs_become_caller() comes before any operation that acts for the
 * caller (it switches the thread where the backend needs that).  Errors:
 * the backend's (fs_backend.h lists them per operation) and c_fh_err.
 */

/* A file system's sizes (FSSTAT, PATHCONF, NFSv4 space attributes). */
struct fs_statfs {
	uint64_t sf_bytes, sf_bfree, sf_bavail; /* bytes */
	uint64_t sf_files, sf_ffree, sf_favail; /* file slots */
	uint32_t sf_linkmax;   /* most hard links of one object */
	uint32_t sf_namemax;   /* longest name component, bytes */
};

/*
 * A lock owner's description of one file (an open file description for
 * the posix backend: OFD locks): locks belong to it; closing its last
 * reference releases them.  Value type; ld_be NULL: none.
 */
struct fs_lockd {
	const struct fs_backend *ld_be;
	int ld_fd;      /* posix: the description, or -1 */
	void *ld_node;  /* other backends: the file */
	void *ld_owner; /* other backends: the owner */
};

/* The lock that kept a range (be_lock). */
struct fs_lock_conflict {
	int cf_type;        /* F_RDLCK or F_WRLCK (F_UNLCK: gone meanwhile) */
	uint64_t cf_start;
	uint64_t cf_len;    /* 0: to the end of the file */
	int32_t cf_pid;     /* > 0: a local process's (not an owner's) lock */
};

/*
 * A lease on one file (be_lease_open): the backend tells its holder,
 * through ls_fn, when someone outside this server (a local process,
 * another gateway of the same storage) wants to change the file, so the
 * delegation it backs can be recalled (RFC 8881 10.4.4).  Value type,
 * owned by the holder (an NFSv4 delegation); ls_be NULL: none.
 */
struct fs_lease;
/**
 * fs_lease_break_fn - @ls's file is wanted for a change from outside: the
 * holder recalls what the lease backs and later closes it (fs_lease_close).
 * Called on a thread of the backend's (never inside a call of the holder's
 * own), perhaps more than once per lease, never after fs_lease_close()
 * returned.  Must not block and must not close @ls itself.
 */
typedef void (*fs_lease_break_fn)(void *arg, struct fs_lease *ls);
struct fs_lease {
	const struct fs_backend *ls_be;
	fs_lease_break_fn ls_fn;
	void *ls_arg;
	int ls_fd;      /* posix: the read-only description holding it, or -1 */
	void *ls_node;  /* other backends: the file */
	void *ls_priv;  /* other backends: their record of the lease */
};

/*
 * A share reservation (RFC 8881 9.7 OPEN share_access/share_deny; the
 * NLM SHARE of RFC 1813's appendix) as the layer keeps it: what an owner
 * has the file open for and what it denies others.  Bits: FS_SHARE_READ,
 * FS_SHARE_WRITE in both.
 */
enum {
	FS_SHARE_READ = 1u << 0,
	FS_SHARE_WRITE = 1u << 1,
};

/** fs_fentry_init - @fe holds nothing (for caller storage). */
void fs_fentry_init(struct fs_fentry *fe);

/** fs_needs_identity - does @exp's backend run as the caller (identity
 *  switch, so the transport thread serves only callers it already is)? */
bool fs_needs_identity(const struct rpcrdma_nfs3_export *exp);
/** fs_never_waits - does nothing on @exp wait for a disk (tmpfs, memory)? */
bool fs_never_waits(const struct rpcrdma_nfs3_export *exp);

/**
 * fs_fh_of - the handle of @name in directory @dir ("": @dir itself) in
 * @c's export, never following a symlink, into @fh (RPCRDMA_NFS3_FHSIZE
 * bytes; *@lenp bytes used).  Return: 0; -EXDEV (another file system);
 * -EOVERFLOW; -ENOENT; -EACCES.
 */
int fs_fh_of(struct fs_call *c, struct fs_fentry *dir, const char *name,
	     uint8_t *fh, uint32_t *lenp);
/** fs_fh_of_exp - fs_fh_of() without a call (the export's root, MOUNT). */
int fs_fh_of_exp(const struct rpcrdma_nfs3_export *exp, struct fs_fentry *dir,
		 const char *name, uint8_t *fh, uint32_t *lenp);
/** fs_root - the export's root into @local (*@out), attributes @st.
 *  Return: 0 or be_fh_decode()'s errors. */
int fs_root(const struct rpcrdma_nfs3_export *exp, struct fs_fentry *local,
	    struct fs_fentry **out, struct stat *st);

/** fs_getattr - be_getattr(). */
int fs_getattr(struct fs_call *c, struct fs_fentry *fe, struct stat *st);
/** fs_setattr - be_setattr() (fs_become_caller() done). */
int fs_setattr(struct fs_call *c, struct fs_fentry *fe, const struct stat *pre,
	       const struct fs_sattr *sa, bool skip_mode);
/** fs_access - be_access(): 0 when the caller has all of @mode. */
int fs_access(struct fs_call *c, struct fs_fentry *fe, const struct stat *st,
	      int mode);
/**
 * fs_lookup_fh - LOOKUP's answer (RFC 1813 3.3.3): the handle of @name in
 * directory @dir (attributes @dst) into @fh (RPCRDMA_NFS3_FHSIZE bytes;
 * *@lenp used) and its attributes into @st, after fs_become_caller().
 * ".." of the export root is the root; no symlink followed, no mount
 * crossed.  On an export with a cache, a backend's be_lookup_fh answers
 * for a name other than "." and ".." (posix: the object is looked at with
 * statx(2) and, when an entry of the export's caches holds the same
 * object, the handle is that entry's (fs_fcache_fh_of_ino()) rather than
 * name_to_handle_at()'s: one system call less; with @hint_ino (the d_ino
 * READDIR gave; 0: none) of an object the caches hold, one statx() by
 * name is all); otherwise be_lookup() and the object's handle.  The
 * handle is the same either way.
 * @st_ok: NULL, or out: whether *@st was filled (also when only the
 * handle failed: READDIRPLUS then has attributes without a handle).
 * Return: 0, -ENOENT, -EACCES, -EXDEV (a mount), -EOVERFLOW, or another
 * negative errno of the lookup.
 */
int fs_lookup_fh(struct fs_call *c, struct fs_fentry *dir,
		 const struct stat *dst, const char *name, uint64_t hint_ino,
		 uint8_t *fh, uint32_t *lenp, struct stat *st, bool *st_ok);

/**
 * fs_open_recheck - after a READ moved data for a call that set
 * c_check_after: when fs_open() skipped the access check (c_unchecked),
 * make it now with @st, the attributes fetched after the read (NULL:
 * none; then the file system is asked), before the data is sent; a
 * refusal means the data must be dropped.  Nothing when the check was
 * made, but to remember it (c_keep) where it can be kept
 * (fs_fcache_grant_keeps()).  Clears c_unchecked and c_keep.  Return: 0;
 * fs_open()'s errors (-EACCES, ...).
 */
int fs_open_recheck(struct fs_call *c, struct fs_fentry *fe,
		    const struct stat *st, int acc);

/** fs_lookup - be_lookup() into @local (*@out). */
int fs_lookup(struct fs_call *c, struct fs_fentry *dir, const struct stat *dst,
	      const char *name, struct fs_fentry *local, struct fs_fentry **out,
	      struct stat *st);
/**
 * fs_lookup_attr - be_lookup_attr(): the attributes of @name in directory
 * @dir (attributes @dst), a symlink not followed, without reaching the
 * object for later calls (NFSv4.1 READDIR's entries, the type NFSv4.1
 * REMOVE needs).  Return: 0; -ENOENT; -ENOTDIR; -EACCES; -ENAMETOOLONG.
 */
int fs_lookup_attr(struct fs_call *c, struct fs_fentry *dir,
		   const struct stat *dst, const char *name, struct stat *st);
/** fs_open - be_open(): may the caller read (O_RDONLY) or write (O_WRONLY)
 *  regular file @fe; done before fs_read()/fs_write(). */
int fs_open(struct fs_call *c, struct fs_fentry *fe, const struct stat *st,
	    int acc);
/** fs_read - be_read(); @nowait is dropped where nothing waits for a disk
 *  (fs_never_waits()). */
ssize_t fs_read(struct fs_call *c, struct fs_fentry *fe, const struct iovec *iov,
		int iovcnt, uint64_t off, bool nowait);
/** fs_read_pipe - be_read_pipe(); -EOPNOTSUPP where the backend has none. */
ssize_t fs_read_pipe(struct fs_call *c, struct fs_fentry *fe, int pipefd,
		     uint64_t off, size_t len);
/** fs_write - be_write(). */
int fs_write(struct fs_call *c, struct fs_fentry *fe, const struct iovec *iov,
	     int iovcnt, uint64_t off, uint32_t stable, size_t *done);
/** fs_commit - be_commit() (server identity; COMMIT). */
int fs_commit(struct fs_call *c, struct fs_fentry *fe, bool datasync);
/** fs_create - be_create() into @local (*@out). */
int fs_create(struct fs_call *c, struct fs_fentry *dir, const struct stat *dst,
	      const char *name, mode_t mode, bool excl, const uint8_t *verf,
	      struct fs_fentry *local, struct fs_fentry **out, struct stat *st,
	      bool *created);
/** fs_mkdir - be_mkdir() into @local (*@out). */
int fs_mkdir(struct fs_call *c, struct fs_fentry *dir, const struct stat *dst,
	     const char *name, mode_t mode, struct fs_fentry *local,
	     struct fs_fentry **out, struct stat *st);
/** fs_mknod - be_mknod() into @local (*@out). */
int fs_mknod(struct fs_call *c, struct fs_fentry *dir, const struct stat *dst,
	     const char *name, mode_t mode, dev_t rdev, struct fs_fentry *local,
	     struct fs_fentry **out, struct stat *st);
/** fs_symlink - be_symlink() into @local (*@out). */
int fs_symlink(struct fs_call *c, struct fs_fentry *dir, const struct stat *dst,
	       const char *name, const char *target, struct fs_fentry *local,
	       struct fs_fentry **out, struct stat *st);
/** fs_readlink - be_readlink(). */
ssize_t fs_readlink(struct fs_call *c, struct fs_fentry *fe, char *buf,
		    size_t len);
/** fs_link - be_link(). */
int fs_link(struct fs_call *c, struct fs_fentry *fe, struct fs_fentry *dir,
	    const char *name);
/**
 * fs_remove - be_unlink(), and the object the name held dropped from the
 * caches (fs_fcache_forget()).  Return: be_unlink()'s.
 */
int fs_remove(struct fs_call *c, struct fs_fentry *dir, const char *name,
	      bool rmdir);
/** fs_rename - be_rename(), and an object it replaced dropped from the
 *  caches.  Return: be_rename()'s. */
int fs_rename(struct fs_call *c, struct fs_fentry *fdir, const char *fname,
	      struct fs_fentry *tdir, const char *tname, bool two_dirs);
/** fs_readdir - be_readdir(). */
int fs_readdir(struct fs_call *c, struct fs_fentry *dir, const struct stat *dst,
	       uint64_t cookie,
	       int (*fn)(void *arg, const char *name, uint64_t ino, uint64_t cookie),
	       void *arg, bool *eof);
/** fs_statfs - be_statfs(). */
int fs_statfs(struct fs_call *c, struct fs_fentry *fe, struct fs_statfs *out);

/** fs_lock_open - be_lock_open() (@out->ld_be set). */
int fs_lock_open(struct fs_call *c, struct fs_fentry *fe, struct fs_lockd *out,
		 int *accmode);
/** fs_lock - be_lock() of @ld's backend. */
int fs_lock(struct fs_lockd *ld, int type, uint64_t start, uint64_t len,
	    bool test, struct fs_lock_conflict *cf);
/** fs_lock_dup - be_lock_dup(). */
int fs_lock_dup(const struct fs_lockd *ld, struct fs_lockd *out);
/** fs_lock_close - be_lock_close() (ld_be NULL: nothing); @ld then holds
 *  nothing. */
void fs_lock_close(struct fs_lockd *ld);

/**
 * fs_lease_open - a lease on @fe's file (be_lease_open of its backend)
 * whose break calls @fn(@arg, @out); @out is the holder's storage and
 * must stay where it is until fs_lease_close().  Return: be_lease_open()'s;
 * -EOPNOTSUPP (the backend has no leases).
 */
int fs_lease_open(struct fs_call *c, struct fs_fentry *fe,
		  fs_lease_break_fn fn, void *arg, struct fs_lease *out);
/** fs_lease_close - be_lease_close() (ls_be NULL: nothing). */
void fs_lease_close(struct fs_lease *ls);

/**
 * fs_share_set - owner @owner's share reservation on @fe's file becomes
 * @access, @deny (FS_SHARE_* bits; @access 0: dropped): checked against
 * every other owner's reservation of the file in this server, whichever
 * protocol made it (NFSv4 OPEN, NLM SHARE), then by the backend's
 * be_share (other servers on the same storage), and recorded.  @owner:
 * unique in the server across protocols (a protocol's tag in its top
 * bits).  Return: 0; -EBUSY (denied: NFS4ERR_SHARE_DENIED, NLM4_DENIED);
 * -ENOLCK (the table is full); -ENOMEM.
 */
int fs_share_set(struct fs_call *c, struct fs_fentry *fe, uint64_t owner,
		 uint32_t access, uint32_t deny);

/*
 * Share reservation owners: the protocol's tag in the top 8 bits, its own
 * id in the other 56 (fs_share_owner()), so owners of different protocols
 * never meet in one server's table.
 */
enum {
	FS_SHARE_TAG_NFS4 = 1, /* an NFSv4 open state (open-owner and file) */
	FS_SHARE_TAG_NLM = 2,  /* an NLM SHARE (host, oh, file) */
	FS_SHARE_TAG_TEST = 0xff,
};
#define FS_SHARE_ID_BITS 56u

/** fs_share_owner - the owner of protocol @tag's reservation @id (the low
 *  FS_SHARE_ID_BITS bits of it). */
static inline uint64_t fs_share_owner(unsigned tag, uint64_t id)
{
	return (uint64_t)(tag & 0xffu) << FS_SHARE_ID_BITS |
	       (id & ((1ull << FS_SHARE_ID_BITS) - 1));
}

/**
 * fs_share_set_fh - fs_share_set() of the file handle @fh (@fhlen bytes,
 * of @c's export) names, for a caller that holds the handle: the table is
 * keyed by what the handle carries (no system call); the object is
 * reached only for a backend with be_share, from @fe when not NULL (it
 * must be the handle's object), else by decoding @fh.  Return: as
 * fs_share_set(); -EBADMSG, -EXDEV (not a handle of @c's export); -ESTALE
 * (be_share needed the object, gone).
 */
int fs_share_set_fh(struct fs_call *c, struct fs_fentry *fe,
		    const uint8_t *fh, uint32_t fhlen, uint64_t owner,
		    uint32_t access, uint32_t deny);

/**
 * fs_share_drop - drop every reservation of @owner in @srv's table (NULL:
 * the table of calls without a server), and from the backends that keep
 * them (be_share with access 0): a CLOSE, an expired NFSv4 client, an NLM
 * host freed.  Never fails.
 */
void fs_share_drop(struct rpcrdma_nfs3_server *srv, uint64_t owner);

/**
 * fs_share_set_max - at most @max reservations in @srv's table (NULL: the
 * table of calls without a server; 0: FS_SHARES_MAX), for tests; fewer
 * than are held refuses only new ones (-ENOLCK).
 */
#define FS_SHARES_MAX 65536u
void fs_share_set_max(struct rpcrdma_nfs3_server *srv, uint32_t max);

/** fs_shares_count - reservations in @srv's table (NULL: see above). */
uint32_t fs_shares_count(struct rpcrdma_nfs3_server *srv);

/* The table of one server (fs_share.c; fs_server.c makes and frees it). */
struct fs_shares;
/** fs_shares_create - an empty table.  Return: it, or NULL (no memory). */
struct fs_shares *fs_shares_create(void);
/** fs_shares_destroy - drop what is left (as fs_share_drop()) and free @t. */
void fs_shares_destroy(struct fs_shares *t);
/** fs_server_shares - @srv's table (NULL: the table of calls without a
 *  server, made on first use; NULL only when that failed). */
struct fs_shares *fs_server_shares(struct rpcrdma_nfs3_server *srv);

/* ---- fs_server.c: a file is about to change ---- */

/**
 * fs_change_hook_fn - a file is about to change through NFSv3 (WRITE,
 * SETATTR of the size): @fh/@fhlen its handle.  Return 0 to go on, or
 * -EAGAIN to answer NFS3ERR_JUKEBOX (the NFSv4.1 server recalls its
 * clients' delegations of the file, RFC 8881 10.4.4).  Must not block.
 */
typedef int (*fs_change_hook_fn)(void *arg, const uint8_t *fh, uint32_t fhlen);

/**
 * fs_server_set_change_hook - install @fn (NULL: none) with @arg; done
 * before calls are served and after they stopped (not synchronised).
 */
void fs_server_set_change_hook(struct rpcrdma_nfs3_server *srv,
			       fs_change_hook_fn fn, void *arg);

/** fs_change_check - the hook of @c's server for @fh: 0 or -EAGAIN. */
int fs_change_check(struct fs_call *c, const uint8_t *fh, uint32_t fhlen);

#endif /* RPCRDMA_FS_H */
