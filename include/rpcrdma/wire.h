/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma/wire.h - the RPC-over-RDMA Version 1 wire codec (public API).
 *
 * Pure functions: no verbs, no allocation, no global state.  Every byte that
 * arrives from the wire is decoded here first, and nothing the peer claims
 * (a count, a length, a position) is trusted before it has been checked
 * against the bytes actually received and the configured limits.
 *
 * All wire fields are big-endian 32-bit XDR words (RFC 4506); offsets are
 * 64-bit (two words, high word first).  Section numbers are RFC 8166 unless
 * marked otherwise.
 */
#ifndef RPCRDMA_WIRE_H
#define RPCRDMA_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** RPC-over-RDMA protocol version implemented here (RFC 8166 4.2). */
#define RPCRDMA_VERSION 1u
/** IANA port for NFS over RPC-over-RDMA (RFC 8267 / RFC 5667). */
#define RPCRDMA_NFS_PORT 20049

/** Transport header procedure (RFC 8166 4.2.4, "rdma_proc"). */
enum rpcrdma_proc {
	RDMA_MSG = 0,
	RDMA_NOMSG = 1,
	RDMA_MSGP = 2,  /* obsolete in v1: rejected with ERR_CHUNK */
	RDMA_DONE = 3,  /* obsolete in v1: rejected with ERR_CHUNK */
	RDMA_ERROR = 4,
};

/** RDMA_ERROR codes (RFC 8166 4.2.4, "rpcrdma_errcode"). */
enum rpcrdma_errcode {
	ERR_VERS = 1,
	ERR_CHUNK = 2,
};

/** Fixed part of every transport header: xid, vers, credits, proc. */
#define RPCRDMA_HDR_FIXED_BYTES 16u
/** Smallest RDMA_MSG/RDMA_NOMSG header: fixed part + three empty lists. */
#define RPCRDMA_HDR_MIN_BYTES 28u
/** RDMA_ERROR with ERR_VERS (fixed, code, low, high). */
#define RPCRDMA_ERR_VERS_BYTES 28u
/** RDMA_ERROR with ERR_CHUNK (fixed, code). */
#define RPCRDMA_ERR_CHUNK_BYTES 20u
/** Inline threshold to assume when the peer sent no private data (RFC 8797 4). */
#define RPCRDMA_DEFAULT_INLINE 1024u

/*
 * Compile-time capacities of a parsed header.  Run-time limits
 * (struct rpcrdma_wire_limits) may be lower, never higher.
 */
#define RPCRDMA_WIRE_MAX_SEGS 256u       /* segments over all lists */
#define RPCRDMA_WIRE_MAX_READ_CHUNKS 16u /* distinct Read positions */
#define RPCRDMA_WIRE_MAX_WRITE_CHUNKS 16u

/** One RDMA segment, "xdr_rdma_segment" (RFC 8166 4.1.2.1). */
struct rpcrdma_segment {
	uint32_t rs_handle; /* R_key / steering tag */
	uint32_t rs_length; /* bytes */
	uint64_t rs_offset; /* remote virtual address or offset */
};

/**
 * A chunk: consecutive segments in rh_segs[] (RFC 8166 3.4.2).
 * For a Read chunk, rc_position is the XDR position shared by all its
 * segments; for Write and Reply chunks it is 0.  rc_length is the sum of
 * its segment lengths in bytes (checked not to overflow).
 */
struct rpcrdma_chunk {
	uint32_t rc_position;
	uint32_t rc_first; /* index of the first segment in rh_segs[] */
	uint32_t rc_nsegs;
	uint64_t rc_length;
};

/** Run-time validation limits (defaults: rpcrdma_wire_limits_default()). */
struct rpcrdma_wire_limits {
	uint32_t wl_max_segs_per_chunk; /* default 16 (Linux's limit) */
	uint32_t wl_max_read_chunks;    /* distinct positions, default 16 */
	uint32_t wl_max_write_chunks;   /* default 16 */
	uint64_t wl_max_chunk_bytes;    /* per chunk, default 1 MiB + 64 KiB */
};

/**
 * A parsed transport header.  Decoding fills it without allocating; it
 * holds at most RPCRDMA_WIRE_MAX_SEGS segments.  Segments of the Read list
 * come first (grouped into rh_read[] by position, in wire order), then each
 * Write chunk's, then the Reply chunk's.  The scalars and counts come
 * before the arrays, so that clearing a header (rpcrdma_wire_hdr_init())
 * and reading its counts touch its first bytes only: the arrays are about
 * 5 KiB and are read and written by count.
 */
struct rpcrdma_hdr {
	uint32_t rh_xid;     /* as on the wire (network-order value decoded) */
	uint32_t rh_vers;
	uint32_t rh_credits;
	uint32_t rh_proc;    /* enum rpcrdma_proc */

	/* RDMA_ERROR only */
	uint32_t rh_err;       /* enum rpcrdma_errcode */
	uint32_t rh_vers_low;  /* ERR_VERS only */
	uint32_t rh_vers_high; /* ERR_VERS only */

	uint32_t rh_nsegs;   /* entries used in rh_segs[] */
	uint32_t rh_nread;   /* Read chunks (distinct positions) */
	uint32_t rh_nwrite;  /* Write chunks */
	bool rh_has_reply;   /* Reply chunk present */
	struct rpcrdma_chunk rh_reply;

	uint32_t rh_hdr_len;    /* bytes of transport header */
	uint32_t rh_inline_len; /* bytes after the header in this message */

	/* Filled by count: only the first rh_nsegs / rh_nread / rh_nwrite. */
	struct rpcrdma_segment rh_segs[RPCRDMA_WIRE_MAX_SEGS];
	struct rpcrdma_chunk rh_read[RPCRDMA_WIRE_MAX_READ_CHUNKS];
	struct rpcrdma_chunk rh_write[RPCRDMA_WIRE_MAX_WRITE_CHUNKS];
};

/**
 * rpcrdma_wire_hdr_init - start a header for encoding, lists empty.
 * @hdr: out: every member before rh_segs[] cleared (no Read list, no
 *       Write list, no Reply chunk, no RDMA_ERROR fields), then rh_xid,
 *       rh_vers (RPCRDMA_VERSION), rh_credits and rh_proc set; the arrays
 *       are left as they are (they are used by count).
 * @xid: the xid as a host-order value of the network-order word.
 * @credits: the credit value to carry (RFC 8166 3.3.1).
 * @proc: enum rpcrdma_proc.
 *
 * The fixed part of RFC 8166 4.2.1.  Cheaper than clearing the whole
 * struct, which is about 5 KiB.  Cannot fail.
 */
void rpcrdma_wire_hdr_init(struct rpcrdma_hdr *hdr, uint32_t xid, uint32_t credits,
			   uint32_t proc);

/** What a Responder (or Requester) must do with a message it rejects. */
enum rpcrdma_wire_answer {
	RPCRDMA_ANSWER_DROP = 0,      /* no xid, or nothing may be sent */
	RPCRDMA_ANSWER_ERR_VERS = 1,  /* RDMA_ERROR ERR_VERS (1, 1) */
	RPCRDMA_ANSWER_ERR_CHUNK = 2, /* RDMA_ERROR ERR_CHUNK */
};

/** Why a message was rejected. */
struct rpcrdma_wire_err {
	enum rpcrdma_wire_answer we_answer;
	uint32_t we_xid;         /* valid unless we_answer == DROP */
	const char *we_rule;     /* short, stable rule name (static string) */
	char we_detail[128];     /* human sentence */
};

/**
 * rpcrdma_wire_limits_default - fill @lim with the default limits.
 * @lim: out.
 */
void rpcrdma_wire_limits_default(struct rpcrdma_wire_limits *lim);

/**
 * rpcrdma_wire_decode_call - decode a received call (Responder's view).
 * @buf:  received bytes (transport header and inline body), read-only.
 * @len:  bytes in @buf.
 * @lim:  validation limits, or NULL for the defaults.
 * @hdr:  out: the parsed header (valid only on success).
 * @err:  out: why the message was rejected (valid only on failure).
 *
 * Accepts RDMA_MSG and RDMA_NOMSG (RFC 8166 4.2.4).  Checks every count,
 * length and position against @len and @lim; the work done is bounded by
 * @len whatever the counts claim.  Read positions must be multiples of 4,
 * non-decreasing, not overlapping, and within the reconstructed message;
 * RDMA_NOMSG needs a position-zero Read chunk or a Reply chunk.
 * An RDMA_ERROR received by a Responder is rejected with DROP.
 *
 * Return: 0, or -EBADMSG with @err filled (answer, rule, detail).
 */
int rpcrdma_wire_decode_call(const void *buf, size_t len,
			     const struct rpcrdma_wire_limits *lim,
			     struct rpcrdma_hdr *hdr,
			     struct rpcrdma_wire_err *err);

/**
 * rpcrdma_wire_decode_reply - decode a received reply (Requester's view).
 * @buf, @len, @lim, @hdr, @err: as for rpcrdma_wire_decode_call().
 *
 * Accepts RDMA_MSG, RDMA_NOMSG and RDMA_ERROR.  The Read list must be
 * empty; Write chunk segment lengths are the bytes the Responder wrote;
 * an unused Write chunk may have zero segments or zero lengths.
 *
 * Return: 0, or -EBADMSG with @err filled.
 */
int rpcrdma_wire_decode_reply(const void *buf, size_t len,
			      const struct rpcrdma_wire_limits *lim,
			      struct rpcrdma_hdr *hdr,
			      struct rpcrdma_wire_err *err);

/**
 * rpcrdma_wire_encode - encode a transport header.
 * @buf: out: at least rpcrdma_wire_hdr_size(@hdr) bytes.
 * @cap: bytes available at @buf.
 * @hdr: header to encode; for RDMA_MSG/RDMA_NOMSG the chunk lists come
 *       from rh_read/rh_write/rh_reply and rh_segs; for RDMA_ERROR, rh_err
 *       (and rh_vers_low/high for ERR_VERS).
 *
 * Return: bytes written, or -ENOSPC when @cap is too small, -EINVAL when
 * @hdr is inconsistent (segment indexes out of range, unknown proc).
 */
int rpcrdma_wire_encode(void *buf, size_t cap, const struct rpcrdma_hdr *hdr);

/**
 * rpcrdma_wire_encode_error - encode an RDMA_ERROR reply (RFC 8166 4.2.4).
 * @buf: out, at least RPCRDMA_ERR_VERS_BYTES bytes.
 * @cap: bytes available.
 * @xid: xid of the rejected message.
 * @credits: credit grant to carry.
 * @code: ERR_VERS (writes low = high = 1) or ERR_CHUNK.
 *
 * Return: bytes written (28 or 20), -ENOSPC, or -EINVAL for another code.
 */
int rpcrdma_wire_encode_error(void *buf, size_t cap, uint32_t xid,
			      uint32_t credits, uint32_t code);

/**
 * rpcrdma_wire_hdr_size - exact encoded size of @hdr in bytes.
 */
size_t rpcrdma_wire_hdr_size(const struct rpcrdma_hdr *hdr);

/**
 * rpcrdma_wire_max_hdr_size - largest header carrying the given chunks.
 * @nread_segs:  Read segments (each 24 bytes with its list discriminator).
 * @nwrite_chunks: Write chunks; @nwrite_segs: their segments in all.
 * @nreply_segs: Reply chunk segments (0: no Reply chunk).
 *
 * Used by a Requester to keep header + inline body within the peer's
 * inline threshold (RFC 8166 3.3.3).  Return: bytes.
 */
size_t rpcrdma_wire_max_hdr_size(uint32_t nread_segs, uint32_t nwrite_chunks,
				 uint32_t nwrite_segs, uint32_t nreply_segs);

/* ---- Connection private data, RFC 8797 ---- */

#define RPCRDMA_CM_MAGIC 0xf6ab0e18u
#define RPCRDMA_CM_VERSION 1u
#define RPCRDMA_CM_FLAG_RSI 0x01u /* sender accepts Send With Invalidate */
#define RPCRDMA_CM_PRIVATE_BYTES 8u

/** Decoded RFC 8797 private data; sizes in bytes (1024 .. 262144). */
struct rpcrdma_cm_private {
	uint32_t cp_version;
	uint32_t cp_flags;
	uint32_t cp_send_size; /* bytes the sender will send at most inline */
	uint32_t cp_recv_size; /* bytes the sender can receive inline */
};

/**
 * rpcrdma_wire_encode_private - encode RFC 8797 private data (8 bytes).
 * @buf: out, RPCRDMA_CM_PRIVATE_BYTES bytes.
 * @p: sizes in bytes, rounded down to a KiB and clamped to 1..256 KiB.
 */
void rpcrdma_wire_encode_private(uint8_t buf[RPCRDMA_CM_PRIVATE_BYTES],
				 const struct rpcrdma_cm_private *p);

/**
 * rpcrdma_wire_decode_private - decode RFC 8797 private data.
 * @buf: bytes from the CM event (may be NULL).
 * @len: their count (CM pads private data; extra bytes are ignored).
 * @p:   out.
 *
 * Return: 0; -ENODATA when @len < 8 or the magic does not match (the peer
 * sent none: assume RPCRDMA_DEFAULT_INLINE); -EPROTONOSUPPORT for another
 * version.
 */
int rpcrdma_wire_decode_private(const void *buf, size_t len,
				struct rpcrdma_cm_private *p);

/**
 * rpcrdma_wire_inline_threshold - the RFC 8797 negotiation rule.
 * @local: our limit in bytes; @peer: the peer's advertised size in bytes,
 * or 0 when it sent no private data.
 * Return: min(@local, @peer), with 1024 standing in for a missing @peer.
 */
uint32_t rpcrdma_wire_inline_threshold(uint32_t local, uint32_t peer);

/* ---- ONC RPC message header, RFC 5531 ---- */

/* <rpc/rpc_msg.h> (libtirpc) defines the same value; keep theirs if first. */
#ifndef RPC_MSG_VERSION
#define RPC_MSG_VERSION 2u
#endif
enum rpcrdma_rpc_dir { RPC_DIR_CALL = 0, RPC_DIR_REPLY = 1 };
enum rpcrdma_rpc_auth { RPC_AUTH_NONE = 0, RPC_AUTH_SYS = 1 };
#define RPC_AUTH_MAX_BODY 400u     /* RFC 5531 8.2: opaque_auth body */
#define RPC_AUTH_SYS_MAX_GIDS 16u  /* RFC 5531 appendix A */
#define RPC_AUTH_SYS_MAX_NAME 255u

/** AUTH_SYS credential body (RFC 5531 appendix A). */
struct rpcrdma_rpc_authsys {
	uint32_t as_stamp;
	uint32_t as_namelen;
	const uint8_t *as_name; /* points into the message */
	uint32_t as_uid;
	uint32_t as_gid;
	uint32_t as_ngids;
	uint32_t as_gids[RPC_AUTH_SYS_MAX_GIDS];
};

/** A decoded RPC message header; pointers point into the decoded buffer. */
struct rpcrdma_rpc_msg {
	uint32_t rm_xid;
	uint32_t rm_dir; /* enum rpcrdma_rpc_dir */
	/* CALL */
	uint32_t rm_rpcvers;
	uint32_t rm_prog;
	uint32_t rm_vers;
	uint32_t rm_proc;
	uint32_t rm_cred_flavor;
	uint32_t rm_cred_len;
	const uint8_t *rm_cred_body;
	bool rm_has_authsys; /* rm_authsys valid (flavor AUTH_SYS, well formed) */
	struct rpcrdma_rpc_authsys rm_authsys;
	uint32_t rm_verf_flavor;
	uint32_t rm_verf_len;
	/* REPLY */
	uint32_t rm_reply_stat;  /* MSG_ACCEPTED 0 / MSG_DENIED 1 */
	uint32_t rm_accept_stat; /* when accepted */
	/* bytes of header consumed: CALL args / REPLY results start here */
	uint32_t rm_hdr_len;
	/* Added for the codec: */
	const uint8_t *rm_verf_body; /* CALL and accepted REPLY verifier */
	uint32_t rm_reject_stat;     /* when denied: RPC_MISMATCH 0 / AUTH_ERROR 1 */
	uint32_t rm_auth_stat;       /* when denied with AUTH_ERROR */
	uint32_t rm_mismatch_low;    /* PROG_MISMATCH or RPC_MISMATCH */
	uint32_t rm_mismatch_high;
};

/* RFC 5531 section 9 reply status values. */
enum rpcrdma_rpc_reply_stat { RPC_MSG_ACCEPTED = 0, RPC_MSG_DENIED = 1 };
enum rpcrdma_rpc_accept_stat {
	RPC_ACCEPT_SUCCESS = 0,
	RPC_ACCEPT_PROG_UNAVAIL = 1,
	RPC_ACCEPT_PROG_MISMATCH = 2,
	RPC_ACCEPT_PROC_UNAVAIL = 3,
	RPC_ACCEPT_GARBAGE_ARGS = 4,
	RPC_ACCEPT_SYSTEM_ERR = 5,
};
enum rpcrdma_rpc_reject_stat { RPC_REJECT_RPC_MISMATCH = 0, RPC_REJECT_AUTH_ERROR = 1 };

/**
 * rpcrdma_wire_decode_rpc - decode an ONC RPC call or reply header.
 * @buf, @len: the RPC message (the inline body, or the rebuilt call).
 * @msg: out.
 *
 * Checks the RPC version (2) for calls and opaque_auth lengths (at most
 * 400 bytes); AUTH_SYS bodies are parsed with their own limits (name up to
 * 255 bytes, up to 16 gids) and must fill the credential exactly.
 *
 * A credential of flavor AUTH_SYS whose body is malformed is not an error
 * here: the call decodes with rm_has_authsys false, and the caller answers
 * AUTH_ERROR (AUTH_BADCRED).  Replies: accepted (verifier, accept_stat,
 * and mismatch_info for PROG_MISMATCH) or denied (RPC_MISMATCH with its
 * range, or AUTH_ERROR with its auth_stat).  @msg is zeroed first; on
 * failure the fields decoded before the failure point stay filled (at
 * least rm_xid and rm_dir once 8 bytes are present).
 *
 * Return: 0; -EBADMSG when the bytes are cut short, a length is out of
 * range, or msg_type, reply_stat, accept_stat or reject_stat is not a
 * value RFC 5531 defines; -EPROTO when a call's RPC version is not 2
 * (the caller answers RPC_MISMATCH; rm_rpcvers holds the version, and
 * nothing after it is decoded).
 */
int rpcrdma_wire_decode_rpc(const void *buf, size_t len,
			    struct rpcrdma_rpc_msg *msg);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_WIRE_H */
