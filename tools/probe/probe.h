/* SPDX-License-Identifier: MIT */
/*
 * probe.h - rpcrdma-probe, a conformance prober for RPC-over-RDMA Version 1
 * servers (RFC 8166, RFC 8797).  Private to tools/probe.
 *
 * The prober is a Requester: it connects with rdma_cm, sends crafted
 * transport headers and compares each answer with the one RFC 8166 (and
 * our codec's rules, rpcrdma-decode(8)) requires.  Files:
 *
 *	probe_conn.c	one RDMA connection: set-up, Sends, Receives, waiting
 *	probe_msg.c	building transport headers and RPC calls
 *	probe_observe.c	classifying what came back for one message
 *	probe_case_util.c	what the cases share: sending, observing, notes
 *	probe_case_hdr.c	cases: the header's fixed fields, crafted headers
 *	probe_case_chunk.c	cases: Read, Write and Reply chunks
 *	probe_case_flow.c	cases: credits, disconnects under load
 *	probe_catalogue.c	the catalogue of cases and their expectations
 *	probe_run.c	running the catalogue, the NULL check after each case
 *	probe_mount.c	MOUNT v3 over TCP (libtirpc) for the root file handle
 *	probe_report.c	the table and the JSON report
 *	probe_load.c	load mode: N connections, a NULL call on each, held
 *	probe_main.c	options and the run
 *
 * Every function that can fail returns 0 or a negative errno.
 */
#ifndef RPCRDMA_PROBE_H
#define RPCRDMA_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <rpcrdma/nfs3_prot.h>
#include <rpcrdma/wire.h>

/* ---- Options ---- */

/** What the user asked for on the command line. */
struct probe_opts {
	const char *po_server;     /* SERVER */
	uint16_t po_port;          /* RPC-over-RDMA port, default 20049 */
	const char *po_source;     /* local address to bind, or NULL */
	const char *po_export;     /* export path for MOUNT, or NULL */
	uint16_t po_mount_port;    /* MOUNT v3 TCP port, default 20048 */
	bool po_json;              /* JSON instead of a table */
	unsigned int po_timeout_ms; /* how long "no answer" takes, default 1000 */
	bool po_verbose;           /* progress on stderr */
	bool po_linux;             /* the server is Linux nfsd: known differences */
	/* Load mode (--connections): 0 runs the catalogue instead. */
	uint32_t po_connections;   /* connections to open, 1..PROBE_LOAD_MAX */
	uint32_t po_hold_s;        /* seconds to hold them, 0..PROBE_HOLD_MAX */
	uint32_t po_parallel;      /* connection attempts on their way at a time */
};

/** Limits of the load mode's options. */
#define PROBE_LOAD_MAX 10000u
#define PROBE_HOLD_MAX 86400u
#define PROBE_PARALLEL_MAX 1024u
#define PROBE_PARALLEL_DEFAULT 32u
/** Per-connection deadline (connect and NULL reply) in load mode. */
#define PROBE_LOAD_TIMEOUT_MS 30000u

/* ---- Connection (probe_conn.c) ---- */

/** Receives we keep posted: more than any grant we test against. */
#define PROBE_NRECV 256u
/** Bytes per Receive buffer (we advertise less: PROBE_INLINE_RECV). */
#define PROBE_RECV_BYTES 4096u
/** Send slots and the largest message we send. */
#define PROBE_NSEND 288u
#define PROBE_SEND_BYTES 2048u
/** Inline sizes we advertise in our RFC 8797 private data. */
#define PROBE_INLINE_RECV 1024u
#define PROBE_INLINE_SEND 1024u
/** Bytes of the chunk area the server may read from and write into. */
#define PROBE_CHUNK_BYTES ((1u << 20) + (64u << 10))

/** One connection to the server under test. */
struct probe_conn {
	const struct probe_opts *pc_opts;
	struct rdma_event_channel *pc_cm_ch;
	struct rdma_cm_id *pc_id;
	struct ibv_pd *pc_pd;
	struct ibv_comp_channel *pc_comp_ch;
	struct ibv_cq *pc_cq;
	struct ibv_mr *pc_mr;
	uint8_t *pc_slab;            /* recvs, then sends, then the chunk area */
	uint8_t *pc_recv;            /* PROBE_NRECV x PROBE_RECV_BYTES */
	uint8_t *pc_send;            /* PROBE_NSEND x PROBE_SEND_BYTES */
	uint8_t *pc_chunk;           /* PROBE_CHUNK_BYTES, remote read/write */
	uint32_t pc_send_next;       /* next send slot */
	uint32_t pc_sends_out;       /* Sends posted and not completed */
	bool pc_up;                  /* established, not yet disconnected */
	bool pc_peer_pdata;          /* the server sent RFC 8797 private data */
	struct rpcrdma_cm_private pc_peer; /* what it said */
	uint32_t pc_inline_send;     /* most bytes we may send inline */
	uint32_t pc_grant;           /* last credit grant seen (0: none yet) */
	uint32_t pc_xid;             /* next xid */
	uint32_t pc_disc_status;     /* first bad work completion status */
	char pc_down_why[96];        /* how the connection ended */
};

/** One received message, copied out of its Receive buffer. */
struct probe_msg {
	uint32_t pm_len;
	uint8_t pm_buf[PROBE_RECV_BYTES];
};

int probe_conn_open(struct probe_conn *pc, const struct probe_opts *opts);
void probe_conn_close(struct probe_conn *pc);
int probe_conn_send(struct probe_conn *pc, const void *buf, uint32_t len);
int probe_conn_wait(struct probe_conn *pc, struct probe_msg *msg,
		    unsigned int timeout_ms);
uint32_t probe_conn_new_xid(struct probe_conn *pc);
void probe_conn_abort(struct probe_conn *pc);
int probe_conn_sends_done(struct probe_conn *pc, unsigned int timeout_ms);

/* ---- Messages (probe_msg.c) ---- */

/** Bytes of an NFSv3 NULL call with AUTH_NONE (10 words). */
#define PROBE_NULL_CALL_BYTES 40u

/** A little XDR writer over a caller's buffer; overflow is sticky. */
struct probe_xdr {
	uint8_t *px_buf;
	uint32_t px_cap;
	uint32_t px_len;
	bool px_over;
};

void probe_xdr_init(struct probe_xdr *x, void *buf, uint32_t cap);
void probe_xdr_u32(struct probe_xdr *x, uint32_t v);
void probe_xdr_u64(struct probe_xdr *x, uint64_t v);
void probe_xdr_bytes(struct probe_xdr *x, const void *p, uint32_t len);
void probe_xdr_opaque(struct probe_xdr *x, const void *p, uint32_t len);

uint32_t probe_rpc_null_call(void *buf, uint32_t cap, uint32_t xid);
uint32_t probe_rpc_readdirplus_call(void *buf, uint32_t cap, uint32_t xid,
				    const uint8_t *fh, uint32_t fhlen,
				    uint32_t dircount, uint32_t maxcount);
void probe_hdr_init(struct rpcrdma_hdr *h, uint32_t xid, uint32_t credits,
		    uint32_t proc);
void probe_hdr_add_read(struct rpcrdma_hdr *h, uint32_t position,
			uint32_t handle, uint32_t length, uint64_t offset);
void probe_hdr_add_write(struct rpcrdma_hdr *h, uint32_t handle,
			 uint32_t length, uint64_t offset);
void probe_hdr_set_reply(struct rpcrdma_hdr *h, uint32_t handle,
			 uint32_t length, uint64_t offset);
void probe_hdr_set_reply_split(struct rpcrdma_hdr *h, uint32_t handle,
			       uint32_t length, uint64_t offset, uint32_t nsegs);
int probe_msg_build(void *buf, uint32_t cap, const struct rpcrdma_hdr *h,
		    const void *body, uint32_t body_len);

/* ---- Observations ---- */

/** What came back for one probe message. */
enum probe_outcome {
	PO_REPLY = 0,     /* an RPC reply with the probe's xid */
	PO_ERR_VERS,      /* RDMA_ERROR ERR_VERS */
	PO_ERR_CHUNK,     /* RDMA_ERROR ERR_CHUNK */
	PO_DROP,          /* nothing within the timeout, connection up */
	PO_DISCONNECT,    /* the connection ended */
	PO_OTHER,         /* something else: wrong xid, malformed, ... */
	PO_NONE,          /* not run (a precondition failed) */
};

/** One observation with the details the checks need. */
struct probe_obs {
	enum probe_outcome ob_kind;
	uint32_t ob_credits;   /* grant in the answer */
	uint32_t ob_vers_low;  /* ERR_VERS range */
	uint32_t ob_vers_high;
	uint32_t ob_accept;    /* RPC accept_stat of a REPLY */
	uint32_t ob_proc;      /* transport procedure of a REPLY */
	uint32_t ob_nfs_status; /* first result word (NFS status), if any */
	uint32_t ob_body_len;  /* bytes of RPC reply (inline or Reply chunk) */
	uint32_t ob_nwrite;    /* Write chunks echoed in a REPLY */
	uint32_t ob_write_nsegs; /* segments of the first one */
	uint64_t ob_write_len; /* bytes the server says it wrote into it */
	char ob_rule[32];      /* codec rule the answer broke, or "" */
	char ob_text[256];     /* a short description */
};

int probe_observe(struct probe_conn *pc, uint32_t xid, unsigned int timeout_ms,
		  struct probe_obs *ob);
int probe_observe_mask(struct probe_conn *pc, uint32_t xid, uint32_t mask,
		       unsigned int timeout_ms, struct probe_obs *ob);
const char *probe_outcome_name(enum probe_outcome k);

/* ---- Cases and the run ---- */

/** Result of one case, for the report. */
struct probe_result {
	char pr_name[48];
	char pr_expected[64];
	char pr_observed[288];
	char pr_after[288]; /* the NULL call afterwards: ok, reconnected, ... */
	bool pr_pass;
	bool pr_skipped;
	bool pr_linux_diff; /* failed, but as the Linux kernel is known to */
};

/** The run: options, the live connection, the results. */
struct probe_run {
	const struct probe_opts *pr_opts;
	struct probe_conn pr_conn;
	bool pr_have_fh;
	uint8_t pr_fh[RPCRDMA_NFS3_FHSIZE];
	uint32_t pr_fhlen;
	char pr_mount_err[128];
	struct probe_result *pr_results;
	uint32_t pr_nresults;
	uint32_t pr_cap;
	bool pr_fatal;            /* a reconnect failed: stop */
};

/* Credits a well-behaved call asks for. */
#define PROBE_CREDITS_ASK 32u
/* Case flags. */
#define PK_NEED_FH 0x1u /* needs the export's root file handle (--export) */
#define PK_SPLIT_REPLY 0x2u /* Reply chunk of 16 contiguous segments */
#define PK_BAD_HANDLE 0x4u  /* the chunk's handle was never registered */
/*
 * The case goes past a limit of this server's own (16 chunks per list, 16
 * segments per chunk), not one RFC 8166 sets: it sets none, and a responder
 * that cannot process a chunk list answers ERR_CHUNK (4.5), one that can
 * serves the call.  Both answers are correct: pk_expect (ERR_CHUNK) or a
 * normal REPLY (the case's own checks of it apply).
 */
#define PK_SERVER_LIMIT 0x8u
/* Calls of the disconnect-under-load cases. */
#define PROBE_ABORT_CALLS 8u

struct probe_case;
/*
 * One case: send, observe into @ob (always filled in), and answer whether
 * the details beyond the outcome were right (the run compares the outcome
 * with pk_expect).
 */
typedef bool (*probe_case_fn)(struct probe_run *run, const struct probe_case *pk,
			      struct probe_obs *ob);

/** One entry of the catalogue. */
struct probe_case {
	const char *pk_name;        /* the codec's rule name where there is one */
	enum probe_outcome pk_expect;
	probe_case_fn pk_fn;
	uint32_t pk_arg;
	unsigned int pk_flags;
	const char *pk_what;        /* one line for --list and the docs */
};

/* Crafted headers built word by word (probe_case_raw). */
enum raw_kind {
	RAW_READ_OVERRUN,
	RAW_WRITE_OVERRUN,
	RAW_REPLY_OVERRUN,
	RAW_DISCRIMINATOR,
	RAW_WRITE_WRAP,
	RAW_REPLY_WRAP,
	RAW_WRITE_EMPTY,
	RAW_REPLY_EMPTY,
	RAW_WRITE_17SEGS,
	RAW_17_WRITES,
	RAW_17_READS,
	RAW_RDMA_ERROR,
	RAW_BC_REPLY,
	RAW_BC_REPLY_CHUNKS,  /* backchannel REPLY carrying a Write chunk */
	RAW_BC_REPLY_SHORT,   /* backchannel REPLY cut after its msg_type */
	RAW_BC_REPLY_BADSTAT, /* backchannel REPLY with reply_stat 7 */
};

/* Read chunk layouts around an inline NULL call (probe_case_read). */
enum read_kind {
	RD_ALIGN,
	RD_RANGE,
	RD_ORDER,
	RD_OVERLAP,
	RD_POS0_MSG,
	RD_TOO_LONG,
	RD_LEN_WRAP,
	RD_NOMSG_NO_POS0,
	RD_16_CHUNKS,
	RD_17_SEGS,
	RD_16_ODD_SEGS,
};

/* probe_catalogue.c */
extern const struct probe_case probe_catalogue[];
extern const size_t probe_ncases;
void probe_list(void);

/* probe_run.c */
int probe_run_all(struct probe_run *run);

/* probe_case_util.c */
int64_t probe_now_ms(void);
uint64_t probe_chunk_addr(const struct probe_conn *pc, uint32_t off);
uint32_t probe_bad_handle(const struct probe_conn *pc);
int probe_null_msg(uint8_t *buf, uint32_t cap, uint32_t xid, uint32_t credits);
void probe_send_observe_mask(struct probe_run *run, const void *buf, int len,
			     uint32_t xid, uint32_t mask, unsigned int timeout_ms,
			     struct probe_obs *ob);
void probe_send_observe(struct probe_run *run, const void *buf, int len,
			uint32_t xid, unsigned int timeout_ms, struct probe_obs *ob);
void probe_obs_append(struct probe_obs *ob, const char *s);
bool probe_null_accepted(struct probe_obs *ob);
bool probe_abort_after_first_send(struct probe_run *run, int rc, uint32_t *replies,
				  struct probe_obs *ob);

/* probe_case_hdr.c */
bool probe_case_null(struct probe_run *run, const struct probe_case *pk,
		     struct probe_obs *ob);
bool probe_case_version(struct probe_run *run, const struct probe_case *pk,
			struct probe_obs *ob);
bool probe_case_proc(struct probe_run *run, const struct probe_case *pk,
		     struct probe_obs *ob);
bool probe_case_cut(struct probe_run *run, const struct probe_case *pk,
		    struct probe_obs *ob);
bool probe_case_raw(struct probe_run *run, const struct probe_case *pk,
		    struct probe_obs *ob);

/* probe_case_chunk.c */
bool probe_case_read(struct probe_run *run, const struct probe_case *pk,
		     struct probe_obs *ob);
bool probe_case_nomsg_null(struct probe_run *run, const struct probe_case *pk,
			   struct probe_obs *ob);
bool probe_case_nomsg_split(struct probe_run *run, const struct probe_case *pk,
			    struct probe_obs *ob);
bool probe_case_bad_handle(struct probe_run *run, const struct probe_case *pk,
			   struct probe_obs *ob);
bool probe_case_write_unused(struct probe_run *run, const struct probe_case *pk,
			     struct probe_obs *ob);
bool probe_case_readdirplus(struct probe_run *run, const struct probe_case *pk,
			    struct probe_obs *ob);

/* probe_case_flow.c */
bool probe_case_over_grant(struct probe_run *run, const struct probe_case *pk,
			   struct probe_obs *ob);
bool probe_case_read_abort(struct probe_run *run, const struct probe_case *pk,
			   struct probe_obs *ob);
bool probe_case_reply_abort(struct probe_run *run, const struct probe_case *pk,
			    struct probe_obs *ob);

/* ---- MOUNT (probe_mount.c) ---- */

int probe_mount_root(const struct probe_opts *opts, uint8_t *fh,
		     uint32_t *fhlen, char *why, size_t whylen);

/* ---- Load mode (probe_load.c) ---- */

int probe_load_run(const struct probe_opts *opts);

/* ---- Report (probe_report.c) ---- */

void probe_report_table(const struct probe_run *run);
const char *probe_result_word(const struct probe_result *r);
void probe_report_json(const struct probe_run *run);

/* probe_addr - fill @ss from @host and @port (numeric or a name that
 * resolves); 0, or -EINVAL when it does not resolve.  (probe_conn.c) */
int probe_addr(const char *host, uint16_t port, struct sockaddr_storage *ss);

#endif /* RPCRDMA_PROBE_H */
