// SPDX-License-Identifier: MIT
/*
 * nfs4_cb.c - the NFSv4.1 back channel: the callback program's calls
 * (RFC 8881 20: CB_NULL, CB_COMPOUND with CB_SEQUENCE and CB_RECALL) sent
 * over the RFC 8167 backchannel of a session's connection, and the state
 * of each session's callback path for SEQUENCE's sr_status_flags.
 *
 * The back channel's slot table has NFS4_CB_SLOTS (1) slot: its sequence
 * id starts at 1 and moves on with each CB_SEQUENCE the client answered
 * (RFC 8881 2.10.6.1); a call that got no answer leaves the path down,
 * the sequence id unchanged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/be.h"
#include "nfs4_cb.h"
#include "nfs4_internal.h"

/* ---- encoders ---- */

void nfs4_cb_put_compound_hdr(struct rpcrdma_xdr *xs, uint32_t ident, uint32_t nops)
{
	rpcrdma_xdr_put_opaque(xs, NULL, 0); /* tag */
	rpcrdma_xdr_put_u32(xs, 1);          /* minorversion */
	rpcrdma_xdr_put_u32(xs, ident);
	rpcrdma_xdr_put_u32(xs, nops);
}

void nfs4_cb_put_sequence(struct rpcrdma_xdr *xs, const uint8_t sid[16],
			  uint32_t seqid, uint32_t slot, uint32_t highest)
{
	rpcrdma_xdr_put_u32(xs, OP_CB_SEQUENCE);
	rpcrdma_xdr_put_fixed(xs, sid, NFS4_SESSIONID_SIZE);
	rpcrdma_xdr_put_u32(xs, seqid);
	rpcrdma_xdr_put_u32(xs, slot);
	rpcrdma_xdr_put_u32(xs, highest);
	rpcrdma_xdr_put_u32(xs, 0); /* csa_cachethis */
	rpcrdma_xdr_put_u32(xs, 0); /* csa_referring_call_lists<> */
}

void nfs4_cb_put_recall(struct rpcrdma_xdr *xs, const struct nfs4_stateid *sid,
			bool truncate, const uint8_t *fh, uint32_t fhlen)
{
	rpcrdma_xdr_put_u32(xs, OP_CB_RECALL);
	nfs4_put_stateid(xs, sid);
	rpcrdma_xdr_put_u32(xs, truncate ? 1 : 0);
	rpcrdma_xdr_put_opaque(xs, fh, fhlen);
}

/* ---- decoder ---- */

int nfs4_cb_decode_compound(const uint8_t *p, size_t len, struct nfs4_cb_res *out)
{
	struct rpcrdma_xdr xs;
	uint32_t taglen, n;
	const uint8_t *sid;

	memset(out, 0, sizeof(*out));
	rpcrdma_xdr_init(&xs, (void *)p, len);
	out->cr_status = rpcrdma_xdr_get_u32(&xs);
	(void)rpcrdma_xdr_get_opaque(&xs, NFS4_OPAQUE_LIMIT, &taglen);
	n = rpcrdma_xdr_get_u32(&xs);
	if (!rpcrdma_xdr_ok(&xs) || n > NFS4_CB_MAX_OPS)
		return -EBADMSG;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t op = rpcrdma_xdr_get_u32(&xs);
		uint32_t st = rpcrdma_xdr_get_u32(&xs);

		if (!rpcrdma_xdr_ok(&xs))
			return -EBADMSG;
		/* results stop at the first failure (RFC 8881 16.2.3 / 20) */
		if (i > 0 && out->cr_stats[i - 1] != NFS4_OK)
			return -EBADMSG;
		out->cr_ops[i] = op;
		out->cr_stats[i] = st;
		out->cr_nres = i + 1;
		if (op == OP_CB_SEQUENCE && st == NFS4_OK) {
			sid = rpcrdma_xdr_get_fixed(&xs, NFS4_SESSIONID_SIZE);
			out->cr_seq_seqid = rpcrdma_xdr_get_u32(&xs);
			out->cr_seq_slot = rpcrdma_xdr_get_u32(&xs);
			out->cr_seq_highest = rpcrdma_xdr_get_u32(&xs);
			out->cr_seq_target = rpcrdma_xdr_get_u32(&xs);
			if (!rpcrdma_xdr_ok(&xs))
				return -EBADMSG;
			memcpy(out->cr_seq_sid, sid, NFS4_SESSIONID_SIZE);
			out->cr_have_seq = true;
		}
		/* CB_RECALL4res and the other results this server reads carry
		 * a status only */
	}
	return 0;
}

/* ---- the table ---- */

struct nfs4_cb_chan {
	uint32_t ch_refs;          /* the table's + each call's */
	bool ch_live;              /* in the table */
	uint8_t ch_sid[NFS4_SESSIONID_SIZE];
	uint64_t ch_clientid;
	struct rpcrdma_svc_bc *ch_bc;
	uint32_t ch_conn_id;       /* ch_bc's connection (rpcrdma_svc_req_conn_id()) */
	uint32_t ch_prog;
	bool ch_authsys;
	enum nfs4_cb_path ch_path;
	uint32_t ch_seqid;         /* slot 0's next sequence id */
	bool ch_slot_busy;
};

struct nfs4_cb_table {
	pthread_mutex_t ct_lock;
	struct nfs4_cb_ops ct_ops;
	uint32_t ct_n;             /* sz_sessions */
	struct nfs4_cb_chan **ct_chans; /* ct_n, by session index */
	struct nfs4_cb_counts ct_counts;
	nfs4_cb_live_fn ct_live;   /* is a session live (NULL: all are) */
	void *ct_live_arg;
};

/* One call in flight. */
struct nfs4_cb_call {
	struct nfs4_cb_table *cc_tab;
	struct nfs4_cb_chan *cc_ch;
	bool cc_probe;
	uint32_t cc_seqid;
	nfs4_cb_done_fn cc_done;
	void *cc_arg;
};

static const struct nfs4_cb_ops svc_ops = {
	.co_get = rpcrdma_svc_bc_get,
	.co_call = rpcrdma_svc_bc_call,
	.co_put = rpcrdma_svc_bc_put,
	.co_connected = rpcrdma_svc_bc_connected,
};

size_t nfs4_cb_table_bytes(const struct nfs4_sizes *sz)
{
	return sizeof(struct nfs4_cb_table) +
	       sz->sz_sessions * (sizeof(struct nfs4_cb_chan *) + sizeof(struct nfs4_cb_chan));
}

int nfs4_cb_table_create(const struct nfs4_cb_ops *ops, const struct nfs4_sizes *sz,
			 struct nfs4_cb_table **out)
{
	struct nfs4_cb_table *t = calloc(1, sizeof(*t));
	struct nfs4_sizes def;

	if (!t)
		return -ENOMEM;
	if (!sz) {
		nfs4_sizes(0, &def);
		sz = &def;
	}
	t->ct_n = sz->sz_sessions;
	t->ct_chans = calloc(t->ct_n, sizeof(*t->ct_chans));
	if (!t->ct_chans) {
		free(t);
		return -ENOMEM;
	}
	pthread_mutex_init(&t->ct_lock, NULL);
	t->ct_ops = ops ? *ops : svc_ops;
	*out = t;
	return 0;
}

void nfs4_cb_set_live(struct nfs4_cb_table *t, nfs4_cb_live_fn fn, void *arg)
{
	pthread_mutex_lock(&t->ct_lock);
	t->ct_live = fn;
	t->ct_live_arg = arg;
	pthread_mutex_unlock(&t->ct_lock);
}

/* sid_live_locked - is session @sid live (ct_lock held; the state's lock
 * is taken inside: the table's lock comes first) */
static bool sid_live_locked(const struct nfs4_cb_table *t, const uint8_t sid[16])
{
	return !t->ct_live || t->ct_live(t->ct_live_arg, sid);
}

/* chan_put_locked - drop a reference; the last one frees the channel and
 * hands back its connection handle for the caller to put unlocked. */
static struct rpcrdma_svc_bc *chan_put_locked(struct nfs4_cb_chan *ch)
{
	struct rpcrdma_svc_bc *bc = NULL;

	if (--ch->ch_refs == 0) {
		bc = ch->ch_bc;
		free(ch);
	}
	return bc;
}

void nfs4_cb_table_destroy(struct nfs4_cb_table *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->ct_n; i++) {
		struct nfs4_cb_chan *ch = t->ct_chans[i];
		struct rpcrdma_svc_bc *bc;

		if (!ch)
			continue;
		pthread_mutex_lock(&t->ct_lock);
		ch->ch_live = false;
		t->ct_chans[i] = NULL;
		bc = chan_put_locked(ch);
		pthread_mutex_unlock(&t->ct_lock);
		if (bc)
			t->ct_ops.co_put(bc);
	}
	/* calls still in flight hold their channels, and the table: the
	 * server is destroyed only after the transport stopped them */
	pthread_mutex_destroy(&t->ct_lock);
	free(t->ct_chans);
	free(t);
}

static uint32_t sid_index(const uint8_t sid[16])
{
	return load_be32(sid + 12) & ((1u << NFS4_SESSION_INDEX_BITS) - 1);
}

/* chan_find_locked - the live channel of @sid, or NULL. */
static struct nfs4_cb_chan *chan_find_locked(struct nfs4_cb_table *t, const uint8_t sid[16])
{
	uint32_t i = sid_index(sid);
	struct nfs4_cb_chan *ch;

	if (i >= t->ct_n)
		return NULL;
	ch = t->ct_chans[i];
	if (!ch || memcmp(ch->ch_sid, sid, NFS4_SESSIONID_SIZE))
		return NULL;
	return ch;
}

/* chan_path_locked - @ch's path, DOWN once its connection is gone (closed
 * by the client, or by the server: a fault, a bad record) while it was
 * up or being probed: nothing can reach the client there any more (RFC
 * 8881 2.10.3.1), so SEQUENCE says so (18.46.3) and callbacks look for
 * another path.  Lock order: ct_lock, then the handle's own lock. */
static enum nfs4_cb_path chan_path_locked(struct nfs4_cb_table *t, struct nfs4_cb_chan *ch)
{
	if ((ch->ch_path == NFS4_CB_UP || ch->ch_path == NFS4_CB_PROBING) &&
	    t->ct_ops.co_connected && !t->ct_ops.co_connected(ch->ch_bc))
		ch->ch_path = NFS4_CB_DOWN;
	return ch->ch_path;
}

/* An AUTH_SYS credential of the server (RFC 5531 appendix A): stamp 0,
 * machine name "rpcrdma-nfsd", uid 0, gid 0, no groups.  The client's
 * callback service accepts the flavors it listed in csa_sec_parms. */
static const uint8_t cb_authsys[] = {
	0, 0, 0, 0, 0, 0, 0, 12,
	'r', 'p', 'c', 'r', 'd', 'm', 'a', '-', 'n', 'f', 's', 'd',
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static void chan_args(const struct nfs4_cb_chan *ch, struct rpcrdma_svc_bc_args *a,
		      uint32_t proc)
{
	memset(a, 0, sizeof(*a));
	a->ba_prog = ch->ch_prog;
	a->ba_vers = NFS4_CB_VERSION;
	a->ba_proc = proc;
	if (ch->ch_authsys) {
		a->ba_cred_flavor = RPC_AUTH_SYS;
		a->ba_cred = cb_authsys;
		a->ba_cred_len = sizeof(cb_authsys);
	} else {
		a->ba_cred_flavor = RPC_AUTH_NONE;
	}
	a->ba_timeout_ms = NFS4_CB_TIMEOUT_MS;
}

/* cb_done - the end of a CB_NULL or CB_COMPOUND (transport thread). */
static void cb_done(void *arg, int status, const struct rpcrdma_rpc_msg *reply,
		    const uint8_t *res, size_t res_len)
{
	struct nfs4_cb_call *cc = arg;
	struct nfs4_cb_table *t = cc->cc_tab;
	struct nfs4_cb_chan *ch = cc->cc_ch;
	struct rpcrdma_svc_bc *bc;
	struct nfs4_cb_res cr;
	int result = status;

	if (status == 0 && (reply->rm_reply_stat != RPC_MSG_ACCEPTED ||
			    reply->rm_accept_stat != RPC_ACCEPT_SUCCESS))
		result = -EPROTO;
	if (result == 0 && !cc->cc_probe) {
		if (nfs4_cb_decode_compound(res, res_len, &cr))
			result = -EBADMSG;
		else if (cr.cr_nres < 1 || cr.cr_ops[0] != OP_CB_SEQUENCE ||
			 cr.cr_stats[0] != NFS4_OK)
			result = -EPROTO;
		else if (cr.cr_nres < 2)
			result = -EBADMSG;
		else
			result = (int)cr.cr_stats[1];
	}
	pthread_mutex_lock(&t->ct_lock);
	if (cc->cc_probe) {
		if (ch->ch_live && ch->ch_path == NFS4_CB_PROBING)
			ch->ch_path = result == 0 ? NFS4_CB_UP : NFS4_CB_DOWN;
		if (result == 0)
			t->ct_counts.cc_probe_ok++;
	} else {
		ch->ch_slot_busy = false;
		/* the slot moves on once the client processed CB_SEQUENCE */
		if (result >= 0)
			ch->ch_seqid = cc->cc_seqid + 1;
		if (result == NFS4_OK)
			t->ct_counts.cc_recall_ok++;
		if (ch->ch_live)
			ch->ch_path = result >= 0 ? NFS4_CB_UP : NFS4_CB_DOWN;
	}
	if (result < 0)
		t->ct_counts.cc_failures++;
	bc = chan_put_locked(ch);
	pthread_mutex_unlock(&t->ct_lock);
	if (bc)
		t->ct_ops.co_put(bc);
	if (cc->cc_done)
		cc->cc_done(cc->cc_arg, result);
	free(cc);
}

/* chan_send - send a call on @ch (a reference of the caller's is passed
 * to the call on success).  Return: 0 or the transport's error. */
static int chan_send(struct nfs4_cb_table *t, struct nfs4_cb_chan *ch,
		     struct nfs4_cb_call *cc, uint32_t proc,
		     const uint8_t *args, size_t len)
{
	struct rpcrdma_svc_bc_args a;

	chan_args(ch, &a, proc);
	a.ba_args = args;
	a.ba_args_len = len;
	a.ba_done = cb_done;
	a.ba_done_arg = cc;
	return t->ct_ops.co_call(ch->ch_bc, &a, NULL);
}

int nfs4_cb_bind(struct nfs4_cb_table *t, const struct rpcrdma_svc_req *req,
		 const uint8_t sid[16], uint64_t clientid, uint32_t prog, bool authsys)
{
	uint32_t i = sid_index(sid), seqid = 1;
	struct nfs4_cb_chan *ch, *old;
	struct rpcrdma_svc_bc *bc = NULL, *oldbc = NULL;
	struct nfs4_cb_call *cc;
	int err;

	if (i >= t->ct_n)
		return -ENOSPC;
	ch = calloc(1, sizeof(*ch));
	cc = calloc(1, sizeof(*cc));
	if (!ch || !cc) {
		err = -ENOMEM;
		goto fail;
	}
	err = t->ct_ops.co_get(req, &bc);
	if (err)
		goto fail;
	memcpy(ch->ch_sid, sid, NFS4_SESSIONID_SIZE);
	ch->ch_clientid = clientid;
	ch->ch_bc = bc;
	ch->ch_conn_id = rpcrdma_svc_req_conn_id(req);
	ch->ch_prog = prog;
	ch->ch_authsys = authsys;
	ch->ch_path = NFS4_CB_PROBING;
	ch->ch_live = true;
	ch->ch_refs = 2; /* the table's and the probe's */

	pthread_mutex_lock(&t->ct_lock);
	/* only one session of the table's index is live at a time, so once
	 * @sid is, any other channel in its entry is a leftover; checked
	 * under ct_lock, so the session cannot go and its entry be bound by
	 * the next one in between */
	if (!sid_live_locked(t, sid)) {
		pthread_mutex_unlock(&t->ct_lock);
		err = -ENOENT;
		t->ct_ops.co_put(bc);
		free(ch);
		free(cc);
		return err;
	}
	old = t->ct_chans[i];
	if (old) {
		if (!memcmp(old->ch_sid, sid, NFS4_SESSIONID_SIZE))
			seqid = old->ch_seqid; /* the same slot table, rebound */
		old->ch_live = false;
		oldbc = chan_put_locked(old);
	}
	ch->ch_seqid = seqid;
	t->ct_chans[i] = ch;
	t->ct_counts.cc_probes++;
	pthread_mutex_unlock(&t->ct_lock);
	if (oldbc)
		t->ct_ops.co_put(oldbc);

	cc->cc_tab = t;
	cc->cc_ch = ch;
	cc->cc_probe = true;
	err = chan_send(t, ch, cc, CB_PROC_NULL, NULL, 0);
	if (err) {
		pthread_mutex_lock(&t->ct_lock);
		ch->ch_path = NFS4_CB_DOWN;
		t->ct_counts.cc_failures++;
		bc = chan_put_locked(ch); /* the probe's: the table keeps one */
		pthread_mutex_unlock(&t->ct_lock);
		free(cc);
		return err;
	}
	return 0;
fail:
	free(ch);
	free(cc);
	/* the session asked for a back channel it cannot have: down */
	pthread_mutex_lock(&t->ct_lock);
	old = t->ct_chans[i];
	if (old && !memcmp(old->ch_sid, sid, NFS4_SESSIONID_SIZE))
		old->ch_path = NFS4_CB_DOWN;
	t->ct_counts.cc_failures++;
	pthread_mutex_unlock(&t->ct_lock);
	return err;
}

bool nfs4_cb_on_conn(struct nfs4_cb_table *t, uint32_t conn_id)
{
	bool found = false;

	if (!t || !conn_id)
		return false;
	pthread_mutex_lock(&t->ct_lock);
	for (uint32_t i = 0; i < t->ct_n && !found; i++)
		found = t->ct_chans[i] && t->ct_chans[i]->ch_conn_id == conn_id &&
			sid_live_locked(t, t->ct_chans[i]->ch_sid);
	pthread_mutex_unlock(&t->ct_lock);
	return found;
}

int nfs4_cb_rebind(struct nfs4_cb_table *t, const struct rpcrdma_svc_req *req,
		   const uint8_t sid[16])
{
	struct nfs4_cb_chan *ch;
	uint64_t clientid;
	uint32_t prog;
	bool authsys;

	pthread_mutex_lock(&t->ct_lock);
	ch = chan_find_locked(t, sid);
	if (ch) {
		clientid = ch->ch_clientid;
		prog = ch->ch_prog;
		authsys = ch->ch_authsys;
	}
	pthread_mutex_unlock(&t->ct_lock);
	if (!ch)
		return -ENOENT;
	return nfs4_cb_bind(t, req, sid, clientid, prog, authsys);
}

void nfs4_cb_unbind(struct nfs4_cb_table *t, const uint8_t sid[16])
{
	struct nfs4_cb_chan *ch;
	struct rpcrdma_svc_bc *bc = NULL;

	pthread_mutex_lock(&t->ct_lock);
	ch = chan_find_locked(t, sid);
	if (ch) {
		t->ct_chans[sid_index(sid)] = NULL;
		ch->ch_live = false;
		bc = chan_put_locked(ch);
	}
	pthread_mutex_unlock(&t->ct_lock);
	if (bc)
		t->ct_ops.co_put(bc);
}

enum nfs4_cb_path nfs4_cb_path(struct nfs4_cb_table *t, const uint8_t sid[16])
{
	struct nfs4_cb_chan *ch;
	enum nfs4_cb_path p;

	pthread_mutex_lock(&t->ct_lock);
	ch = chan_find_locked(t, sid);
	p = ch ? chan_path_locked(t, ch) : NFS4_CB_NONE;
	pthread_mutex_unlock(&t->ct_lock);
	return p;
}

uint32_t nfs4_cb_seq_flags(struct nfs4_cb_table *t, const uint8_t sid[16],
			   uint64_t clientid)
{
	struct nfs4_cb_chan *ch;
	bool down, any_up = false;

	pthread_mutex_lock(&t->ct_lock);
	ch = chan_find_locked(t, sid);
	down = ch && chan_path_locked(t, ch) == NFS4_CB_DOWN;
	/* the other sessions matter only when this one is down */
	for (uint32_t i = 0; down && i < t->ct_n; i++) {
		struct nfs4_cb_chan *c = t->ct_chans[i];

		if (c && c->ch_clientid == clientid &&
		    (chan_path_locked(t, c) == NFS4_CB_UP ||
		     c->ch_path == NFS4_CB_PROBING))
			any_up = true;
	}
	pthread_mutex_unlock(&t->ct_lock);
	if (!down)
		return 0;
	return SEQ4_STATUS_CB_PATH_DOWN_SESSION | (any_up ? 0 : SEQ4_STATUS_CB_PATH_DOWN);
}

int nfs4_cb_recall(struct nfs4_cb_table *t, uint64_t clientid,
		   const struct nfs4_stateid *sid, bool truncate,
		   const uint8_t *fh, uint32_t fhlen, nfs4_cb_done_fn done, void *arg)
{
	uint8_t buf[256];
	struct rpcrdma_xdr xs;
	struct nfs4_cb_chan *ch = NULL;
	struct nfs4_cb_call *cc;
	struct rpcrdma_svc_bc *bc;
	bool busy = false;
	int err;

	if (fhlen > NFS4_FHSIZE)
		return -EINVAL;
	cc = calloc(1, sizeof(*cc));
	if (!cc)
		return -ENOMEM;
	pthread_mutex_lock(&t->ct_lock);
	for (uint32_t i = 0; i < t->ct_n; i++) {
		struct nfs4_cb_chan *c = t->ct_chans[i];

		if (!c || c->ch_clientid != clientid ||
		    (chan_path_locked(t, c) != NFS4_CB_UP && c->ch_path != NFS4_CB_PROBING))
			continue;
		if (c->ch_slot_busy) {
			busy = true;
			continue;
		}
		ch = c;
		break;
	}
	if (!ch) {
		pthread_mutex_unlock(&t->ct_lock);
		free(cc);
		return busy ? -EBUSY : -ENOTCONN;
	}
	ch->ch_slot_busy = true;
	ch->ch_refs++;
	cc->cc_seqid = ch->ch_seqid;
	t->ct_counts.cc_recalls++;
	rpcrdma_xdr_init(&xs, buf, sizeof(buf));
	nfs4_cb_put_compound_hdr(&xs, 0, 2);
	nfs4_cb_put_sequence(&xs, ch->ch_sid, cc->cc_seqid, 0, NFS4_CB_SLOTS - 1);
	nfs4_cb_put_recall(&xs, sid, truncate, fh, fhlen);
	pthread_mutex_unlock(&t->ct_lock);

	cc->cc_tab = t;
	cc->cc_ch = ch;
	cc->cc_done = done;
	cc->cc_arg = arg;
	err = rpcrdma_xdr_ok(&xs) ? chan_send(t, ch, cc, CB_PROC_COMPOUND, buf, xs.xs_pos)
				  : -EMSGSIZE;
	if (err) {
		pthread_mutex_lock(&t->ct_lock);
		ch->ch_slot_busy = false;
		if (ch->ch_live && err == -ENOTCONN)
			ch->ch_path = NFS4_CB_DOWN;
		t->ct_counts.cc_failures++;
		bc = chan_put_locked(ch);
		pthread_mutex_unlock(&t->ct_lock);
		if (bc)
			t->ct_ops.co_put(bc);
		free(cc);
		return err;
	}
	return 0;
}

void nfs4_cb_counts(struct nfs4_cb_table *t, struct nfs4_cb_counts *out)
{
	pthread_mutex_lock(&t->ct_lock);
	*out = t->ct_counts;
	pthread_mutex_unlock(&t->ct_lock);
}
