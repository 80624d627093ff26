/* SPDX-License-Identifier: MIT */
/*
 * nfsc_internal.h - private to src/nfsc: the NFSv3 client.
 *
 * Owner prefixes: nc_ mount (struct rpcrdma_nfsc), nk_ one call in the
 * making (struct nfsc_call).
 */
#ifndef RPCRDMA_NFSC_INTERNAL_H
#define RPCRDMA_NFSC_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rpcrdma/clnt.h>
#include <rpcrdma/nfs3_prot.h>
#include <rpcrdma/xdr.h>

struct rpcrdma_nfsc {
	struct rpcrdma_clnt *nc_clnts[RPCRDMA_NFSC_MAX_CONNECT];
	unsigned nc_nconn;        /* connections in nc_clnts */
	_Atomic unsigned nc_next; /* round robin over them */
	struct rpcrdma_nfsc_fh nc_root;
	uint32_t nc_rsize, nc_wsize;
	unsigned nc_timeout_ms;
	void *nc_mnt;             /* libtirpc CLIENT * for UMNT, or NULL */
	char *nc_export;
	FILE *nc_log;
	int nc_verbose;
	unsigned nc_mnt_attempts;  /* MNT attempts made (retries included) */
};

/* nfsc_clnt_pick - the connection for the next call: round robin. */
struct rpcrdma_clnt *nfsc_clnt_pick(struct rpcrdma_nfsc *nc);

/* nfsc_mount.c */
/*
 * nfsc_mnt - MNT the export (RFC 1813 5.2.1) over TCP; a connection or RPC
 * failure (nfsc_mnt_retryable) is tried again up to cfg->nf_retries times
 * with the transport's back-off (common/backoff.h: 0, then 250 ms
 * doubling to 8 s).  Each attempt's connect, rpcbind lookup and MNT call
 * are given up after cfg->nf_timeout_ms (10 s when 0): -ETIMEDOUT.
 * Counts attempts in nc_mnt_attempts.
 * Nothing of libtirpc's is written to nc_log unless nc_verbose (the
 * failed call's clnt_sperrno()); a retry is noted there.
 * Return: 0, a MOUNT status as errno, -ENXIO (the server's name does not
 * resolve: not retried), or the last connection/RPC error.
 */
int nfsc_mnt(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_config *cfg);
/* nfsc_mnt_retryable - @rc is a connection or RPC failure worth retrying
 * (refused, timed out, reset, unreachable), not a MOUNT status. */
bool nfsc_mnt_retryable(int rc);
void nfsc_umnt(struct rpcrdma_nfsc *nc);
/*
 * nfsc_rpcb_getport - the TCP port @server's rpcbind on @rpcb_port (111)
 * maps @prog/@vers to, for the address family connected over ("tcp" or
 * "tcp6"): one RPCBPROC_GETADDR of rpcbind version 3 (RFC 1833 2.2.1)
 * over libtirpc's TCP client, the address taken by number.  Connecting
 * and the call are each given up after @timeout_ms (10 s when 0).
 * Return: 0 with *@port; -ECONNREFUSED (not registered, or no rpcbind),
 * -ETIMEDOUT (no connection or no answer within @timeout_ms),
 * -ENXIO (@server does not resolve: getaddrinfo(3) failed), -ENOMEM,
 * -EHOSTUNREACH (no route to the address), another connect() error,
 * -EPROTONOSUPPORT (no version 3: portmap only), -EPROTO (an answer that
 * is no universal address).
 */
int nfsc_rpcb_getport(const char *server, uint16_t rpcb_port, uint32_t prog, uint32_t vers,
		      unsigned timeout_ms, uint16_t *port);

/* Arguments never exceed this: two handles, two names, a sattr3. */
#define NFSC_ARGS_MAX 1024u
/* Results of every procedure but READDIR(PLUS) fit here, inline. */
#define NFSC_RES_INLINE 2048u
/* The results buffer: also room for a whole READ or READLINK reply whose
 * data comes inline (at most the default inline threshold, 4096). */
#define NFSC_RES_BUF 4096u
/* The largest RPC reply header (RFC 5531 9): xid, REPLY, MSG_ACCEPTED,
 * the verifier's flavor, length and at most 400 bytes, accept_stat. */
#define NFSC_RPC_REPLY_HDR_MAX (24u + 400u)
/* fattr3 and post_op_attr (RFC 1813 2.6): 84 bytes, 4 + 84. */
#define NFSC_FATTR3_BYTES 84u
#define NFSC_POST_OP_ATTR_MAX (4u + NFSC_FATTR3_BYTES)
/* READDIRPLUS reply size asked for (maxcount) and its dircount. */
#define NFSC_RDP_MAXCOUNT 32768u
#define NFSC_RDP_DIRCOUNT 8192u
#define NFSC_NAME_MAX 255u
#define NFSC_PATH_MAX 4096u

/* One call being built: arguments, results, and the transport's call. */
struct nfsc_call {
	struct rpcrdma_clnt_call nk_ca;
	struct rpcrdma_xdr nk_args;
	struct rpcrdma_xdr nk_res;   /* after the status word */
	/* The largest results (after the RPC reply header, status word
	 * included) with the DDP-eligible data inline; 0: none expected. */
	uint64_t nk_ddp_res_max;
	uint8_t nk_argbuf[NFSC_ARGS_MAX];
	uint8_t nk_resbuf[NFSC_RES_BUF];
};

/*
 * nfsc_call.c: one call's life.  nk_new() allocates and begins a call
 * (free() it when done); nk_call() makes it and leaves nk_res after the
 * nfsstat3.  Errors are negative errno: -ENOMEM, -EINVAL (arguments did
 * not fit), -EBADMSG (results short or inconsistent), a mapped NFS3ERR_*
 * (nfsc_status_errno) or the transport's error.
 */
int nfsc_status_errno(uint32_t status);
void nk_begin(struct nfsc_call *k, uint32_t proc);
struct nfsc_call *nk_new(uint32_t proc);
int nk_args_done(struct rpcrdma_nfsc *nc, struct nfsc_call *k);
struct rpcrdma_clnt *nk_route(struct rpcrdma_nfsc *nc, struct nfsc_call *k);
int nk_status(struct nfsc_call *k);
int nk_call(struct rpcrdma_nfsc *nc, struct nfsc_call *k);
int nk_fh_query(struct rpcrdma_nfsc *nc, uint32_t proc, const struct rpcrdma_nfsc_fh *fh,
		void (*decode)(struct rpcrdma_xdr *x, void *out), void *out);
void nfsc_put_fh(struct rpcrdma_xdr *x, const struct rpcrdma_nfsc_fh *fh);
int nfsc_put_name(struct rpcrdma_xdr *x, const char *name);
int nfsc_put_dirop(struct rpcrdma_xdr *x, const struct rpcrdma_nfsc_fh *dir,
		   const char *name);
void nfsc_put_sattr(struct rpcrdma_xdr *x, bool set_mode, uint32_t mode, bool trunc);
void nfsc_put_sattr_full(struct rpcrdma_xdr *x, const struct rpcrdma_nfsc_sattr *sa);
void nfsc_get_fattr(struct rpcrdma_xdr *x, struct rpcrdma_nfsc_attr *a);
bool nfsc_get_post_op_attr(struct rpcrdma_xdr *x, struct rpcrdma_nfsc_attr *a);
void nfsc_skip_wcc(struct rpcrdma_xdr *x);
bool nfsc_get_fh(struct rpcrdma_xdr *x, struct rpcrdma_nfsc_fh *fh);
bool nfsc_get_post_op_fh(struct rpcrdma_xdr *x, struct rpcrdma_nfsc_fh *fh);
int nfsc_take_ddp(struct nfsc_call *k, uint32_t len, void *dst, uint32_t cap);

/* nfsc_io.c: READ and WRITE (RFC 1813 3.3.6, 3.3.7), shared with nfsc_pipe.c */
void nk_put_read(struct nfsc_call *k, const struct rpcrdma_nfsc_fh *fh,
		 uint64_t offset, void *buf, uint32_t count);
void nk_put_write(struct nfsc_call *k, const struct rpcrdma_nfsc_fh *fh,
		  uint64_t offset, const void *buf, uint32_t count, uint32_t stable);
int nk_get_read(struct nfsc_call *k, void *buf, uint32_t cap, uint32_t *got,
		bool *eof);
int nk_get_write(struct nfsc_call *k, uint32_t count, uint32_t *written,
		 const uint8_t **verf);

#endif /* RPCRDMA_NFSC_INTERNAL_H */
