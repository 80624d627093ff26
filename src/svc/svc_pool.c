// SPDX-License-Identifier: MIT
/*
 * svc_pool.c - the memory every connection on one RDMA device shares: one
 * protection domain, one completion channel, a pool of registered buffers
 * in power-of-two size classes, call contexts and large call contexts,
 * and the in-order wait lists that make an empty pool back-pressure.
 *
 * Slabs of sv_slab_bytes are registered on demand while the server-wide
 * budget (sc_memory) allows; a slab holds buffers of one class, and a slab
 * whose buffers are all free can be re-carved for another class.  Receive
 * buffers may take at most half of the budget, so calls can always get
 * the memory they need to finish.  Everything here runs on the run-loop
 * thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "svc/svc_internal.h"

static size_t svc_class_size(unsigned c)
{
	return (size_t)1 << (SVC_BUF_MIN_SHIFT + c);
}

/* Smallest class holding @bytes; SVC_BUF_CLASSES when none does. */
static unsigned svc_class_of(size_t bytes)
{
	unsigned c = 0;

	while (c < SVC_BUF_CLASSES && svc_class_size(c) < bytes)
		c++;
	return c;
}

size_t svc_buf_cap(const struct svc_buf *b)
{
	return svc_class_size(b->sb_slab->sl_class);
}

static void svc_note_high(_Atomic uint64_t *high, uint64_t in_use)
{
	uint64_t h = atomic_load_explicit(high, memory_order_relaxed);

	while (in_use > h && !atomic_compare_exchange_weak(high, &h, in_use))
		;
}

static void svc_free_push(struct svc_dev *dev, unsigned c, uint8_t *addr,
			  struct svc_slab *sl)
{
	struct svc_free *head = &dev->dv_free[c], *fr = (struct svc_free *)addr;

	fr->fr_slab = sl;
	fr->fr_next = head->fr_next;
	fr->fr_prev = head;
	head->fr_next->fr_prev = fr;
	head->fr_next = fr;
	dev->dv_nfree[c]++;
}

static void svc_free_unlink(struct svc_dev *dev, unsigned c, struct svc_free *fr)
{
	fr->fr_prev->fr_next = fr->fr_next;
	fr->fr_next->fr_prev = fr->fr_prev;
	dev->dv_nfree[c]--;
}

/* Carve @sl into free buffers of class @c. */
static void svc_slab_carve(struct svc_dev *dev, struct svc_slab *sl, unsigned c)
{
	size_t sz = svc_class_size(c);
	uint32_t i;

	sl->sl_class = c;
	sl->sl_nbufs = (uint32_t)(dev->dv_svc->sv_slab_bytes / sz);
	sl->sl_nfree = sl->sl_nbufs;
	for (i = sl->sl_nbufs; i-- > 0;)
		svc_free_push(dev, c, sl->sl_base + i * sz, sl);
}

/* Take every (free) buffer of @sl off its class's free list. */
static void svc_slab_uncarve(struct svc_dev *dev, struct svc_slab *sl)
{
	size_t sz = svc_class_size(sl->sl_class);
	uint32_t i;

	for (i = 0; i < sl->sl_nbufs; i++)
		svc_free_unlink(dev, sl->sl_class, (struct svc_free *)(sl->sl_base + i * sz));
}

static void svc_slab_free(struct svc_dev *dev, struct svc_slab *sl)
{
	struct rpcrdma_svc *svc = dev->dv_svc;

	rpcrdma_verbs_dereg_mr(sl->sl_mr);
	SVC_DEC(svc, mrs_open, 1);
	SVC_DEC(svc, mr_bytes, svc->sv_slab_bytes);
	atomic_fetch_sub(&svc->sv_mem_registered, svc->sv_slab_bytes);
	free(sl->sl_base);
	free(sl);
}

/* Register a new slab for class @c; -EAGAIN when the budget is reached. */
static int svc_slab_new(struct svc_dev *dev, unsigned c)
{
	struct rpcrdma_svc *svc = dev->dv_svc;
	struct svc_slab *sl;

	/* Reserved before registering: every group shares the budget. */
	if (!svc_mem_reserve(svc, svc->sv_slab_bytes, false))
		return -EAGAIN;
	sl = calloc(1, sizeof(*sl));
	if (!sl)
		goto nomem;
	if (posix_memalign((void **)&sl->sl_base, 4096, svc->sv_slab_bytes)) {
		free(sl);
		goto nomem;
	}
	sl->sl_mr = rpcrdma_verbs_reg_mr(dev->dv_pd, sl->sl_base, svc->sv_slab_bytes,
					 IBV_ACCESS_LOCAL_WRITE);
	if (!sl->sl_mr) {
		int err = errno ? -errno : -ENOMEM;

		free(sl->sl_base);
		free(sl);
		svc_log(svc, "registering a %zu-byte slab failed: %s",
			svc->sv_slab_bytes, strerror(-err));
		atomic_fetch_sub(&svc->sv_mem_registered, svc->sv_slab_bytes);
		return err;
	}
	SVC_INC(svc, mrs_open, 1);
	SVC_INC(svc, mr_bytes, svc->sv_slab_bytes);
	sl->sl_dev = dev;
	sl->sl_next = dev->dv_slabs;
	dev->dv_slabs = sl;
	svc_slab_carve(dev, sl, c);
	return 0;
nomem:
	atomic_fetch_sub(&svc->sv_mem_registered, svc->sv_slab_bytes);
	return -ENOMEM;
}

/* A slab of another class with every buffer free, re-carved for @c. */
static int svc_slab_steal(struct svc_dev *dev, unsigned c)
{
	struct svc_slab *sl;

	for (sl = dev->dv_slabs; sl; sl = sl->sl_next) {
		if (sl->sl_class == c || sl->sl_nfree != sl->sl_nbufs)
			continue;
		svc_slab_uncarve(dev, sl);
		svc_slab_carve(dev, sl, c);
		return 0;
	}
	return -EAGAIN;
}

int svc_buf_get(struct svc_dev *dev, size_t bytes, bool recv, struct svc_buf *out)
{
	struct rpcrdma_svc *svc = dev->dv_svc;
	unsigned c = svc_class_of(bytes);
	struct svc_free *fr;
	size_t sz;
	int rc;

	out->sb_slab = NULL;
	out->sb_addr = NULL;
	if (c >= SVC_BUF_CLASSES || svc_class_size(c) > svc->sv_slab_bytes)
		return -E2BIG;
	sz = svc_class_size(c);
	/* The receive share is reserved first, given back on failure. */
	if (recv && atomic_fetch_add(&svc->sv_recv_bytes_held, sz) + sz >
		    svc->sv_cfg.sc_memory / 2) {
		atomic_fetch_sub(&svc->sv_recv_bytes_held, sz);
		return -EAGAIN;
	}
	if (!dev->dv_nfree[c]) {
		rc = svc_slab_new(dev, c);
		if (rc == -EAGAIN)
			rc = svc_slab_steal(dev, c);
		if (rc == -EAGAIN && svc->sv_ngroups > 1) {
			/* Other groups may hold idle slabs: ask them, then
			 * look at the budget once more, so that memory given
			 * back before they saw the request is not missed. */
			atomic_fetch_or(&svc->sv_budget_short, 1ull << dev->dv_grp->gr_index);
			rc = svc_slab_new(dev, c);
		}
		if (rc) {
			if (recv)
				atomic_fetch_sub(&svc->sv_recv_bytes_held, sz);
			return rc;
		}
	}
	fr = dev->dv_free[c].fr_next;
	svc_free_unlink(dev, c, fr);
	fr->fr_slab->sl_nfree--;
	out->sb_slab = fr->fr_slab;
	out->sb_addr = (uint8_t *)fr;
	svc_note_high(&svc->sv_ct.buf_bytes_high, SVC_INC(svc, buf_bytes_in_use, sz) + sz);
	return 0;
}

void svc_buf_put(struct svc_dev *dev, struct svc_buf *b, bool recv)
{
	struct svc_slab *sl = b->sb_slab;
	size_t sz;

	if (!sl)
		return;
	sz = svc_class_size(sl->sl_class);
	svc_free_push(dev, sl->sl_class, b->sb_addr, sl);
	sl->sl_nfree++;
	if (recv)
		atomic_fetch_sub(&dev->dv_svc->sv_recv_bytes_held, sz);
	SVC_DEC(dev->dv_svc, buf_bytes_in_use, sz);
	b->sb_slab = NULL;
	b->sb_addr = NULL;
}

/* Deregister idle slabs of @dev while the registered total exceeds
 * @keep; return how many went. */
static unsigned svc_pool_trim_to(struct svc_dev *dev, uint64_t keep)
{
	struct rpcrdma_svc *svc = dev->dv_svc;
	struct svc_slab **pp = &dev->dv_slabs, *sl;
	unsigned n = 0;

	while ((sl = *pp) && atomic_load(&svc->sv_mem_registered) > keep) {
		if (sl->sl_nfree != sl->sl_nbufs) {
			pp = &sl->sl_next;
			continue;
		}
		*pp = sl->sl_next;
		svc_slab_uncarve(dev, sl);
		svc_slab_free(dev, sl);
		SVC_INC(svc, pool_trims, 1);
		n++;
	}
	return n;
}

/* Wake the groups in @mask that were short of the budget: memory went back. */
static void svc_budget_wake(struct rpcrdma_svc *svc, uint64_t mask)
{
	unsigned i;

	mask &= atomic_fetch_and(&svc->sv_budget_short, ~mask);
	for (i = 0; mask; i++, mask >>= 1) {
		if (!(mask & 1))
			continue;
		atomic_store(&svc->sv_groups[i].gr_budget_kick, true);
		svc_group_wake(&svc->sv_groups[i]);
	}
}

void svc_pool_trim(struct svc_dev *dev)
{
	struct rpcrdma_svc *svc = dev->dv_svc;
	uint64_t keep = svc->sv_cfg.sc_memory / 4 < SVC_POOL_KEEP ?
			svc->sv_cfg.sc_memory / 4 : SVC_POOL_KEEP;
	uint64_t short_of = atomic_load(&svc->sv_budget_short) &
			    ~(1ull << dev->dv_grp->gr_index);

	if (svc_pool_trim_to(dev, keep) && short_of)
		svc_budget_wake(svc, short_of);
}

void svc_budget_share(struct svc_group *grp)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	uint64_t short_of = atomic_load_explicit(&svc->sv_budget_short, memory_order_relaxed);
	struct svc_dev *dev;
	unsigned n = 0;

	if (!short_of)
		return;
	/* Free TCP call contexts are a cache that counts against the budget:
	 * any group short of it, this one included, gets them back. */
	if (grp->gr_tcp_free && svc_tcp_free_calls(grp))
		svc_budget_wake(svc, atomic_load(&svc->sv_budget_short));
	/* Seen with a relaxed load: the trim and the wake order themselves. */
	short_of = atomic_load(&svc->sv_budget_short) & ~(1ull << grp->gr_index);
	if (!short_of)
		return;
	for (dev = grp->gr_devs; dev; dev = dev->dv_next)
		n += svc_pool_trim_to(dev, 0);
	if (n)
		svc_budget_wake(svc, short_of);
}

void svc_budget_kick(struct svc_group *grp)
{
	struct svc_dev *dev;

	if (!atomic_load_explicit(&grp->gr_budget_kick, memory_order_relaxed) ||
	    !atomic_exchange(&grp->gr_budget_kick, false))
		return;
	for (dev = grp->gr_devs; dev; dev = dev->dv_next)
		svc_dev_kick(dev);
}

/* ---------- call contexts ---------- */

/* Point @cc at its own buffer: call (inline size) | reply (twice) | header. */
static void svc_call_small_buffers(struct svc_call *cc)
{
	uint32_t in = cc->cc_dev->dv_svc->sv_cfg.sc_inline_size;

	cc->cc_call = cc->cc_mem.sb_addr;
	cc->cc_call_cap = in;
	cc->cc_reply = cc->cc_mem.sb_addr + in;
	cc->cc_reply_cap = in * 2u;
	cc->cc_hdrbuf = cc->cc_mem.sb_addr + in * 3u;
	cc->cc_hdr_cap = in;
	cc->cc_call_lkey = cc->cc_reply_lkey = cc->cc_lkey = svc_buf_lkey(&cc->cc_mem);
	cc->cc_wr = cc->cc_small_wr;
	cc->cc_sge = cc->cc_small_sge;
}

/* Create up to SVC_CALL_BATCH more call contexts, each with its buffer. */
static void svc_call_grow(struct svc_dev *dev)
{
	struct rpcrdma_svc *svc = dev->dv_svc;
	uint32_t cap = svc->sv_cfg.sc_small_contexts, n, i;
	struct svc_call_batch *cb;

	/* Context buffers stay with their contexts: at most a quarter of the
	 * budget, so that with receives at most half, chunk buffers always
	 * have a quarter (at least four slabs) to finish calls with. */
	if ((uint64_t)(dev->dv_ncalls + SVC_CALL_BATCH) * svc->sv_cfg.sc_inline_size * 4u >
	    svc->sv_cfg.sc_memory / 4)
		cap = dev->dv_ncalls < cap ? dev->dv_ncalls : cap;
	if (dev->dv_ncalls >= cap)
		return;
	n = cap - dev->dv_ncalls < SVC_CALL_BATCH ? cap - dev->dv_ncalls : SVC_CALL_BATCH;
	cb = calloc(1, sizeof(*cb) + n * sizeof(struct svc_call));
	if (!cb)
		return;
	for (i = 0; i < n; i++) {
		struct svc_call *cc = &cb->cb_calls[i];

		if (svc_buf_get(dev, (size_t)svc->sv_cfg.sc_inline_size * 4u, false,
				&cc->cc_mem))
			break;
		/* Kept by the context for good: not counted as handed out. */
		SVC_DEC(svc, buf_bytes_in_use, svc_buf_cap(&cc->cc_mem));
		cc->cc_dev = dev;
		cc->cc_xprt = &svc_rdma_class;
		cc->cc_svc = svc;
		cc->cc_grp = dev->dv_grp;
		svc_call_small_buffers(cc);
		cc->cc_next = dev->dv_call_free;
		dev->dv_call_free = cc;
	}
	if (!i) {
		free(cb);
		return;
	}
	cb->cb_n = i;
	cb->cb_next = dev->dv_batches;
	dev->dv_batches = cb;
	dev->dv_ncalls += i;
}

struct svc_call *svc_call_get(struct svc_dev *dev, struct svc_conn *conn)
{
	struct rpcrdma_svc *svc = dev->dv_svc;
	struct svc_call *cc;

	if (!dev->dv_call_free)
		svc_call_grow(dev);
	cc = dev->dv_call_free;
	if (!cc)
		return NULL;
	dev->dv_call_free = cc->cc_next;
	cc->cc_next = NULL;
	cc->cc_conn = conn;
	conn->sx_calls_out++;
	svc_note_high(&svc->sv_ct.ctx_high, SVC_INC(svc, ctx_in_use, 1) + 1);
	return cc;
}

/*
 * Reply room a call's chunks ask for: the largest reply the Requester can
 * take is its Write chunks' data plus the rest inline or in the Reply
 * chunk, whichever is larger (RFC 8166 3.5.3).
 */
static uint64_t svc_call_reply_room(const struct svc_call *cc)
{
	const struct rpcrdma_hdr *hdr = &cc->cc_hdr;
	uint64_t room = cc->cc_conn->sx_inline_send;
	uint32_t i;

	if (hdr->rh_has_reply && hdr->rh_reply.rc_length > room)
		room = hdr->rh_reply.rc_length;
	for (i = 0; i < hdr->rh_nwrite; i++)
		room += RPCRDMA_XDR_ALIGN(hdr->rh_write[i].rc_length);
	return room;
}

bool svc_call_needs_large(struct svc_call *cc)
{
	const struct rpcrdma_hdr *hdr = &cc->cc_hdr;
	uint64_t cap = (uint64_t)cc->cc_dev->dv_svc->sv_cfg.sc_max_payload + SVC_PAYLOAD_SLACK;
	uint64_t call = hdr->rh_inline_len, reply = svc_call_reply_room(cc);
	uint32_t nwr = 1, k; /* the Send */

	/* Read chunk data is rebuilt into the call buffer with the inline
	 * part; XDR round-up restored. */
	for (k = 0; k < hdr->rh_nread; k++)
		call += RPCRDMA_XDR_ALIGN(hdr->rh_read[k].rc_length);
	cc->cc_need_call = (uint32_t)(call < cap ? call : cap);
	cc->cc_need_reply = (uint32_t)(reply < cap ? reply : cap);
	if (hdr->rh_nread > 0)
		return true;
	/* Reply data goes by RDMA Write only into the first Write chunk and
	 * the Reply chunk, one work request per segment. */
	if (hdr->rh_nwrite > 0)
		nwr += hdr->rh_write[0].rc_nsegs;
	if (hdr->rh_has_reply)
		nwr += hdr->rh_reply.rc_nsegs;
	return nwr > SVC_SMALL_MAX_WR || reply > cc->cc_conn->sx_inline_recv * 2u;
}

uint32_t svc_call_max_wr(const struct svc_call *cc)
{
	return cc->cc_large ? SVC_CTX_MAX_WR : SVC_SMALL_MAX_WR;
}

int svc_large_attach(struct svc_call *cc)
{
	struct svc_dev *dev = cc->cc_dev;
	struct rpcrdma_svc *svc = dev->dv_svc;
	struct svc_large *lg = dev->dv_large_free;
	struct svc_buf call, reply;
	int rc;

	if (!lg)
		return -EAGAIN;
	/* The call buffer only when Read chunk data is rebuilt into it. */
	call.sb_slab = NULL;
	if (cc->cc_hdr.rh_nread) {
		rc = svc_buf_get(dev, cc->cc_need_call, false, &call);
		if (rc)
			return rc;
	}
	rc = svc_buf_get(dev, cc->cc_need_reply, false, &reply);
	if (rc) {
		svc_buf_put(dev, &call, false);
		return rc;
	}
	dev->dv_large_free = lg->lg_next;
	lg->lg_next = NULL;
	svc_note_high(&svc->sv_ct.large_high, SVC_INC(svc, large_in_use, 1) + 1);
	lg->lg_call = call;
	lg->lg_reply = reply;
	cc->cc_large = lg;
	if (call.sb_slab) {
		cc->cc_call = call.sb_addr;
		cc->cc_call_cap = (uint32_t)svc_buf_cap(&call);
		cc->cc_call_lkey = svc_buf_lkey(&call);
	}
	cc->cc_reply = reply.sb_addr;
	cc->cc_reply_cap = cc->cc_need_reply;
	cc->cc_reply_lkey = svc_buf_lkey(&reply);
	cc->cc_wr = lg->lg_wr;
	cc->cc_sge = lg->lg_sge;
	return 0;
}

static void svc_large_detach(struct svc_call *cc)
{
	struct svc_dev *dev = cc->cc_dev;
	struct svc_large *lg = cc->cc_large;

	svc_buf_put(dev, &lg->lg_call, false);
	svc_buf_put(dev, &lg->lg_reply, false);
	cc->cc_large = NULL;
	svc_call_small_buffers(cc);
	lg->lg_next = dev->dv_large_free;
	dev->dv_large_free = lg;
	SVC_DEC(dev->dv_svc, large_in_use, 1);
}

void svc_large_wait(struct svc_call *cc, struct svc_recv *rc)
{
	struct svc_dev *dev = cc->cc_dev;

	cc->cc_state = CC_WAITING;
	cc->cc_wait_rc = rc;
	svc_call_append(&dev->dv_cwait_head, &dev->dv_cwait_tail, cc);
	SVC_INC(dev->dv_svc, large_waits, 1);
}

void svc_dev_wait_recv(struct svc_dev *dev, struct svc_recv *rc)
{
	rc->rc_next = NULL;
	if (dev->dv_rwait_tail)
		dev->dv_rwait_tail->rc_next = rc;
	else
		dev->dv_rwait_head = rc;
	dev->dv_rwait_tail = rc;
	SVC_INC(dev->dv_svc, ctx_waits, 1);
}

void svc_dev_kick(struct svc_dev *dev)
{
	bool progress = true;

	if (dev->dv_kicking)
		return; /* the outer loop sees what changed */
	dev->dv_kicking = true;
	while (progress) {
		progress = false;
		/* Calls waiting for a large context, oldest first. */
		while (dev->dv_cwait_head) {
			struct svc_call *cc = dev->dv_cwait_head;
			struct svc_recv *rc = cc->cc_wait_rc;

			if (svc_large_attach(cc))
				break;
			dev->dv_cwait_head = cc->cc_next;
			if (!dev->dv_cwait_head)
				dev->dv_cwait_tail = NULL;
			cc->cc_next = NULL;
			cc->cc_wait_rc = NULL;
			SVC_INC(dev->dv_svc, buf_waits, 1);
			svc_recv_continue(rc, cc);
			progress = true;
		}
		/* Messages waiting for a call context. */
		while (dev->dv_rwait_head) {
			struct svc_recv *rc = dev->dv_rwait_head;
			struct svc_call *cc = svc_call_get(dev, rc->rc_conn);

			if (!cc)
				break;
			dev->dv_rwait_head = rc->rc_next;
			if (!dev->dv_rwait_head)
				dev->dv_rwait_tail = NULL;
			rc->rc_next = NULL;
			svc_recv_start(rc, cc);
			progress = true;
		}
	}
	dev->dv_kicking = false;
}

void svc_dev_drop_waiters(struct svc_dev *dev, struct svc_conn *conn)
{
	struct svc_recv **rpp = &dev->dv_rwait_head, *rc;
	struct svc_call **cpp = &dev->dv_cwait_head, *cc, *drop = NULL;

	dev->dv_rwait_tail = NULL;
	while ((rc = *rpp)) {
		if (rc->rc_conn == conn) {
			*rpp = rc->rc_next;
			SVC_INC(dev->dv_svc, drops, 1);
			continue;
		}
		dev->dv_rwait_tail = rc;
		rpp = &rc->rc_next;
	}
	dev->dv_cwait_tail = NULL;
	while ((cc = *cpp)) {
		if (cc->cc_conn == conn) {
			*cpp = cc->cc_next;
			cc->cc_next = drop;
			drop = cc;
			continue;
		}
		dev->dv_cwait_tail = cc;
		cpp = &cc->cc_next;
	}
	/* Their Receives are held until the connection goes. */
	while ((cc = drop)) {
		drop = cc->cc_next;
		cc->cc_next = NULL;
		cc->cc_wait_rc = NULL;
		SVC_INC(dev->dv_svc, drops, 1);
		svc_call_put(cc);
	}
}

void svc_call_put(struct svc_call *cc)
{
	struct svc_conn *conn = cc->cc_conn;
	struct svc_dev *dev = cc->cc_dev;

	if (cc->cc_large)
		svc_large_detach(cc);
	if (cc->cc_sq_used) {
		atomic_fetch_add(&conn->sx_sq_free, cc->cc_sq_used);
		cc->cc_sq_used = 0;
	}
	cc->cc_state = CC_FREE;
	cc->cc_failed = false;
	cc->cc_reads_pending = 0;
	cc->cc_wait_rc = NULL;
	cc->cc_conn = NULL;
	cc->cc_next = dev->dv_call_free;
	dev->dv_call_free = cc;
	conn->sx_calls_out--;
	SVC_DEC(dev->dv_svc, ctx_in_use, 1);

	if (conn->sx_closing)
		svc_conn_maybe_destroy(conn);
	svc_dev_kick(dev);
}

uint32_t svc_dev_put_calls_of(struct svc_dev *dev, struct svc_conn *conn)
{
	struct svc_call_batch *cb;
	uint32_t i, n = 0;

	for (cb = dev->dv_batches; cb; cb = cb->cb_next)
		for (i = 0; i < cb->cb_n; i++)
			if (cb->cb_calls[i].cc_conn == conn) {
				svc_call_put(&cb->cb_calls[i]);
				n++;
			}
	return n;
}

/* ---------- devices ---------- */

static int svc_dev_init_larges(struct svc_dev *dev)
{
	uint32_t n = dev->dv_svc->sv_cfg.sc_call_contexts, i;

	dev->dv_larges = calloc(n ? n : 1, sizeof(*dev->dv_larges));
	if (!dev->dv_larges)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		dev->dv_larges[i].lg_next = i + 1 < n ? &dev->dv_larges[i + 1] : NULL;
	dev->dv_large_free = n ? &dev->dv_larges[0] : NULL;
	dev->dv_nlarge = n;
	return 0;
}

static void svc_dev_free(struct svc_dev *dev)
{
	struct svc_call_batch *cb;
	struct svc_slab *sl;
	uint32_t i;

	while ((cb = dev->dv_batches)) {
		dev->dv_batches = cb->cb_next;
		for (i = 0; i < cb->cb_n; i++) {
			SVC_INC(dev->dv_svc, buf_bytes_in_use, svc_buf_cap(&cb->cb_calls[i].cc_mem));
			svc_buf_put(dev, &cb->cb_calls[i].cc_mem, false);
		}
		free(cb);
	}
	while ((sl = dev->dv_slabs)) {
		dev->dv_slabs = sl->sl_next;
		svc_slab_free(dev, sl);
	}
	if (dev->dv_channel) {
		if (dev->dv_grp->gr_epoll >= 0)
			epoll_ctl(dev->dv_grp->gr_epoll, EPOLL_CTL_DEL, dev->dv_channel->fd, NULL);
		ibv_destroy_comp_channel(dev->dv_channel);
	}
	if (dev->dv_pd && dev->dv_own_pd)
		ibv_dealloc_pd(dev->dv_pd);
	free(dev->dv_larges);
	free(dev);
}

/* The vendor IDs of the software providers, whose posts are system calls
 * that the kernel refuses from a thread whose credentials changed. */
#define SVC_VENDOR_RXE 0xffffffu
#define SVC_VENDOR_SIW 0x626d74u

/* Who posts the replies of the calls served on workers (sc_reply_post). */
static bool svc_dev_worker_posts(struct svc_group *grp, struct ibv_context *verbs)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	struct ibv_device_attr attr;
	bool soft;

	switch (svc->sv_cfg.sc_reply_post) {
	case RPCRDMA_SVC_POST_TRANSPORT:
		return false;
	case RPCRDMA_SVC_POST_WORKER:
		return true;
	default:
		break;
	}
	if (!verbs || ibv_query_device(verbs, &attr))
		return false;
	soft = attr.vendor_id == SVC_VENDOR_RXE || attr.vendor_id == SVC_VENDOR_SIW;
	if (!grp->gr_index)
		svc_log(svc, "device %s (vendor %#x): replies posted by %s",
			ibv_get_device_name(verbs->device), attr.vendor_id,
			soft ? "the transport thread (a software provider)" :
			"the worker that served the call");
	return !soft;
}

struct svc_dev *svc_dev_get(struct svc_group *grp, struct ibv_context *verbs,
			    struct ibv_pd *pd)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	struct svc_dev *dev;
	struct epoll_event eev;
	unsigned c;
	int err;

	for (dev = grp->gr_devs; dev; dev = dev->dv_next)
		if (verbs ? dev->dv_verbs == verbs : dev->dv_pd == pd)
			return dev;
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		errno = ENOMEM;
		return NULL;
	}
	dev->dv_svc = svc;
	dev->dv_grp = grp;
	dev->dv_verbs = verbs;
	for (c = 0; c < SVC_BUF_CLASSES; c++)
		dev->dv_free[c].fr_next = dev->dv_free[c].fr_prev = &dev->dv_free[c];
	err = svc_dev_init_larges(dev);
	if (err)
		goto fail;
	dev->dv_worker_posts = svc_dev_worker_posts(grp, verbs);
	if (!verbs) {
		dev->dv_pd = pd;
		goto done;
	}
	dev->dv_own_pd = true;
	dev->dv_pd = ibv_alloc_pd(verbs);
	if (!dev->dv_pd) {
		err = -ENOMEM;
		goto fail;
	}
	dev->dv_channel = ibv_create_comp_channel(verbs);
	if (!dev->dv_channel) {
		err = errno ? -errno : -ENOMEM;
		goto fail;
	}
	if (fcntl(dev->dv_channel->fd, F_SETFL,
		  fcntl(dev->dv_channel->fd, F_GETFL) | O_NONBLOCK) < 0) {
		err = -errno;
		goto fail;
	}
	memset(&eev, 0, sizeof(eev));
	eev.events = EPOLLIN;
	eev.data.ptr = dev;
	if (grp->gr_epoll >= 0 &&
	    epoll_ctl(grp->gr_epoll, EPOLL_CTL_ADD, dev->dv_channel->fd, &eev)) {
		err = -errno;
		goto fail;
	}
done:
	dev->dv_next = grp->gr_devs;
	grp->gr_devs = dev;
	return dev;
fail:
	if (dev->dv_channel && grp->gr_epoll >= 0)
		epoll_ctl(grp->gr_epoll, EPOLL_CTL_DEL, dev->dv_channel->fd, NULL);
	svc_dev_free(dev);
	errno = -err;
	return NULL;
}

void svc_dev_destroy_all(struct svc_group *grp)
{
	struct svc_dev *dev;

	while ((dev = grp->gr_devs)) {
		grp->gr_devs = dev->dv_next;
		svc_dev_free(dev);
	}
}
