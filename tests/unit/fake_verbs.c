// SPDX-License-Identifier: MIT
/*
 * fake_verbs.c - the shared fake verbs device and its fault injector
 * (see fake_verbs.h for the model).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_verbs.h"

#define FV_LKEY0 0x1000u
#define FV_RKEY0 0xa000u

struct fake_verbs fv;

uint64_t fv_rand(void)
{
	/* xorshift64* */
	fv.fv_rng ^= fv.fv_rng >> 12;
	fv.fv_rng ^= fv.fv_rng << 25;
	fv.fv_rng ^= fv.fv_rng >> 27;
	return fv.fv_rng * 0x2545f4914f6cdd1dull;
}

bool fv_roll(unsigned pct)
{
	if (!pct)
		return false;
	return fv_rand() % 100 < pct;
}

void fv_push(uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op,
	     uint32_t len, int q)
{
	unsigned slot = fv.fv_cq_tail % FV_MAX_CQ;
	struct ibv_wc *wc = &fv.fv_cq[slot];

	if (fv.fv_cq_tail - fv.fv_cq_head >= FV_MAX_CQ)
		fail_msg("fake CQ overflow");
	fv.fv_cq_tail++;
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr_id;
	wc->status = st;
	wc->opcode = op;
	wc->byte_len = len;
	fv.fv_cq_q[slot] = (uint8_t)q;
}

unsigned fv_cq_pending(void)
{
	return fv.fv_cq_tail - fv.fv_cq_head;
}

unsigned fv_recvs_posted(void)
{
	return fv.fv_rq_tail - fv.fv_rq_head;
}

unsigned fv_sq_pending(void)
{
	return fv.fv_sq_tail - fv.fv_sq_head;
}

struct ibv_recv_wr *fv_take_recv(void)
{
	assert_true(fv.fv_rq_head != fv.fv_rq_tail);
	return &fv.fv_rq[fv.fv_rq_head++ % FV_MAX_RQ];
}

void fv_flush_recvs(void)
{
	while (fv.fv_rq_head != fv.fv_rq_tail) {
		struct ibv_recv_wr *r = fv_take_recv();

		fv_push(r->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 1);
	}
}

static enum ibv_wc_opcode wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_RDMA_WRITE:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	default:
		return IBV_WC_SEND;
	}
}

static enum fv_queue wr_queue(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_READ ? FV_Q_READ :
	       op == IBV_WR_RDMA_WRITE ? FV_Q_WRITE : FV_Q_SEND;
}

void fv_qp_to_error(void)
{
	fv.fv_qp_error = true;
	while (fv.fv_sq_head != fv.fv_sq_tail) {
		struct fv_wr *w = &fv.fv_sq[fv.fv_sq_head++ % FV_MAX_SQ];

		fv_push(w->w_wr_id, IBV_WC_WR_FLUSH_ERR, wc_opcode(w->w_opcode), 0, 0);
	}
	fv_flush_recvs();
}

void fv_qp_reset(void)
{
	fv.fv_cq_head = fv.fv_cq_tail = 0;
	fv.fv_rq_head = fv.fv_rq_tail = 0;
	fv.fv_sq_head = fv.fv_sq_tail = 0;
	fv.fv_qp_error = false;
	fv.fv_disconnected = false;
}

void fv_add_remote(uint32_t handle, uint64_t base, uint8_t *mem, size_t len)
{
	assert_true(fv.fv_nremote < FV_MAX_REMOTE);
	fv.fv_remote[fv.fv_nremote++] = (struct fv_remote){ handle, base, mem, len };
}

uint8_t *fv_remote_ptr(uint32_t rkey, uint64_t addr, size_t len, int access)
{
	unsigned i;

	for (i = 0; i < fv.fv_nremote; i++) {
		struct fv_remote *r = &fv.fv_remote[i];

		/* compared as offsets, so an address near 2^64 cannot wrap */
		if (r->rm_handle == rkey && addr >= r->rm_base && len <= r->rm_len &&
		    addr - r->rm_base <= r->rm_len - len)
			return r->rm_mem + (addr - r->rm_base);
	}
	for (i = 0; i < FV_MAX_MW; i++) {
		uint64_t base = fv.fv_mws[i].addr;

		if (fv.fv_mws[i].valid && fv.fv_mws[i].rkey == rkey &&
		    (fv.fv_mws[i].access & access) == access && addr >= base &&
		    len <= fv.fv_mws[i].len && addr - base <= fv.fv_mws[i].len - len)
			return (uint8_t *)(uintptr_t)addr;
	}
	i = rkey - FV_RKEY0;
	if (rkey >= FV_RKEY0 && i < FV_MAX_MR && fv.fv_mr_live[i] &&
	    (fv.fv_mr_access[i] & access) == access) {
		uint64_t base = (uintptr_t)fv.fv_mrs[i].addr;

		if (addr >= base && len <= fv.fv_mrs[i].length &&
		    addr - base <= fv.fv_mrs[i].length - len)
			return (uint8_t *)(uintptr_t)addr;
	}
	return NULL;
}

bool fv_window_valid(uint32_t rkey)
{
	unsigned i;

	for (i = 0; i < FV_MAX_MW; i++)
		if (fv.fv_mws[i].valid && fv.fv_mws[i].rkey == rkey)
			return true;
	return false;
}

/* Invalidate the valid window with @rkey; false when there is none. */
static bool fv_window_invalidate(uint32_t rkey)
{
	unsigned i;

	for (i = 0; i < FV_MAX_MW; i++) {
		if (fv.fv_mws[i].valid && fv.fv_mws[i].rkey == rkey) {
			fv.fv_mws[i].valid = false;
			return true;
		}
	}
	return false;
}

/* BIND_MW: the window now exposes its range under the new key. */
static void fv_window_bind(const struct fv_wr *w)
{
	unsigned i, slot = FV_MAX_MW;

	for (i = 0; i < FV_MAX_MW; i++) {
		if (fv.fv_mws[i].mw == w->w_mw) {
			slot = i;
			break;
		}
		if (!fv.fv_mws[i].mw && slot == FV_MAX_MW)
			slot = i;
	}
	if (slot == FV_MAX_MW)
		fail_msg("out of fake windows");
	fv.fv_mws[slot].mw = w->w_mw;
	fv.fv_mws[slot].rkey = w->w_mw_rkey;
	fv.fv_mws[slot].addr = w->w_bind.addr;
	fv.fv_mws[slot].len = w->w_bind.length;
	fv.fv_mws[slot].access = (int)w->w_bind.mw_access_flags;
	fv.fv_mws[slot].mr = w->w_bind.mr;
	fv.fv_mws[slot].valid = true;
}

int fv_peer_write(uint32_t rkey, uint64_t addr, const void *src, size_t len)
{
	uint8_t *dst;

	if (fv.fv_qp_error || fv.fv_disconnected)
		return -ENOTCONN;
	dst = fv_remote_ptr(rkey, addr, len, IBV_ACCESS_REMOTE_WRITE);
	if (!dst)
		return -EACCES;
	memcpy(dst, src, len);
	return 0;
}

/* ibv_dealloc_mw() of a fake window: it is no longer valid. */
static int fv_dealloc_mw(struct ibv_mw *mw)
{
	unsigned i;

	for (i = 0; i < FV_MAX_MW; i++)
		if (fv.fv_mws[i].mw == mw)
			fv.fv_mws[i].valid = false;
	return 0;
}

struct ibv_context fv_mw_context = { .ops = { .dealloc_mw = fv_dealloc_mw } };

unsigned fv_live_mrs(void)
{
	unsigned i, n = 0;

	for (i = 0; i < FV_MAX_MR; i++)
		n += fv.fv_mr_live[i];
	return n;
}

/* A local scatter/gather entry must lie in a live region with its lkey. */
static void check_sge(const struct ibv_sge *s)
{
	unsigned i = s->lkey - FV_LKEY0;
	uint64_t base;

	if (s->lkey < FV_LKEY0 || i >= FV_MAX_MR || !fv.fv_mr_live[i])
		fail_msg("sge lkey 0x%x names no live region", s->lkey);
	base = (uintptr_t)fv.fv_mrs[i].addr;
	if (s->addr < base || s->addr + s->length > base + fv.fv_mrs[i].length)
		fail_msg("sge [0x%llx, +%u) outside its region", (unsigned long long)s->addr,
			 s->length);
}

/* Complete @w with @st (an error or flush); with auto-flush the QP enters
 * error and everything else flushes. */
static void fail_wr(const struct fv_wr *w, enum ibv_wc_status st)
{
	fv_push(w->w_wr_id, st, wc_opcode(w->w_opcode), 0, 0);
	if (fv.fv_auto_flush)
		fv_qp_to_error();
}

static void exec_read(const struct fv_wr *w)
{
	uint64_t raddr = w->w_raddr;
	enum ibv_wc_status st = fv.fv_read_status;
	uint32_t len = 0;
	uint8_t *src;
	int i;

	fv.fv_nreads++;
	assert_int_equal(w->w_nsge, 1);
	for (i = 0; i < w->w_nsge; i++) {
		check_sge(&w->w_sge[i]);
		len += w->w_sge[i].length;
	}
	src = fv_remote_ptr(w->w_rkey, raddr, len, IBV_ACCESS_REMOTE_READ);
	if (!src)
		st = IBV_WC_REM_ACCESS_ERR;
	if (st != IBV_WC_SUCCESS) {
		if ((w->w_flags & IBV_SEND_SIGNALED) || fv.fv_auto_flush)
			fail_wr(w, st);
		return;
	}
	for (i = 0; i < w->w_nsge; i++) {
		memcpy((void *)(uintptr_t)w->w_sge[i].addr, src, w->w_sge[i].length);
		src += w->w_sge[i].length;
	}
	if (w->w_flags & IBV_SEND_SIGNALED)
		fv_push(w->w_wr_id, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 0, 0);
}

static void exec_write(const struct fv_wr *w)
{
	uint64_t raddr = w->w_raddr;
	uint32_t len = 0;
	uint8_t *dst;
	int i;

	fv.fv_nwrites++;
	if (w->w_flags & IBV_SEND_SIGNALED)
		fv.fv_signaled_writes++;
	for (i = 0; i < w->w_nsge; i++) {
		check_sge(&w->w_sge[i]);
		len += w->w_sge[i].length;
	}
	dst = fv_remote_ptr(w->w_rkey, raddr, len, IBV_ACCESS_REMOTE_WRITE);
	if (!dst) {
		fail_wr(w, IBV_WC_REM_ACCESS_ERR);
		return;
	}
	for (i = 0; i < w->w_nsge; i++) {
		memcpy(dst, (void *)(uintptr_t)w->w_sge[i].addr, w->w_sge[i].length);
		dst += w->w_sge[i].length;
	}
	if (w->w_flags & IBV_SEND_SIGNALED)
		fv_push(w->w_wr_id, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 0, 0);
}

static void exec_send(const struct fv_wr *w)
{
	int i;

	fv.fv_nsends++;
	fv.fv_send_opcode = w->w_opcode;
	fv.fv_inv_rkey = w->w_opcode == IBV_WR_SEND_WITH_INV ? w->w_inv_rkey : 0;
	fv.fv_sent_len = 0;
	fv.fv_sent_nsge = w->w_nsge;
	for (i = 0; i < w->w_nsge; i++) {
		check_sge(&w->w_sge[i]);
		assert_true(fv.fv_sent_len + w->w_sge[i].length <= FV_SENT_MAX);
		memcpy(fv.fv_sent + fv.fv_sent_len, (void *)(uintptr_t)w->w_sge[i].addr,
		       w->w_sge[i].length);
		fv.fv_sent_len += w->w_sge[i].length;
	}
	fv.fv_send_wr_id = w->w_wr_id;
	fv.fv_send_ids[(fv.fv_nsends - 1) % 64] = w->w_wr_id;
	fv.fv_send_flags[(fv.fv_nsends - 1) % 64] = w->w_flags;
	if (!(w->w_flags & IBV_SEND_SIGNALED))
		fv.fv_unsignaled_sends++;
	if (fv.fv_on_send && fv.fv_on_send(fv.fv_sent, fv.fv_sent_len, w, fv.fv_on_send_arg))
		return;
	if ((w->w_flags & IBV_SEND_SIGNALED) && !fv.fv_script_sends)
		fv_push(w->w_wr_id, IBV_WC_SUCCESS, IBV_WC_SEND, 0, 0);
}

static void exec_wr(const struct fv_wr *w)
{
	enum fv_queue q = wr_queue(w->w_opcode);

	if (fv.fv_qp_error) {
		fv_push(w->w_wr_id, IBV_WC_WR_FLUSH_ERR, wc_opcode(w->w_opcode), 0, 0);
		return;
	}
	if (fv_roll(fv.fv_faults.ff_error_pct[q])) {
		fv.fv_n_errors++;
		fail_wr(w, q == FV_Q_SEND ? IBV_WC_LOC_PROT_ERR : IBV_WC_REM_ACCESS_ERR);
		return;
	}
	if (fv_roll(fv.fv_faults.ff_flush_pct[q])) {
		fv.fv_n_flushes++;
		fail_wr(w, IBV_WC_WR_FLUSH_ERR);
		return;
	}
	switch (w->w_opcode) {
	case IBV_WR_RDMA_READ:
		exec_read(w);
		break;
	case IBV_WR_RDMA_WRITE:
		exec_write(w);
		break;
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_INV:
		exec_send(w);
		break;
	case IBV_WR_BIND_MW:
		fv.fv_binds[fv.fv_nbinds % 8].mw = w->w_mw;
		fv.fv_binds[fv.fv_nbinds % 8].rkey = w->w_mw_rkey;
		fv.fv_binds[fv.fv_nbinds % 8].bind_info = w->w_bind;
		fv.fv_nbinds++;
		assert_false(w->w_flags & IBV_SEND_SIGNALED);
		fv_window_bind(w);
		break;
	case IBV_WR_LOCAL_INV:
		fv.fv_invs[fv.fv_ninvs++ % 8] = w->w_inv_rkey;
		if (!fv_window_invalidate(w->w_inv_rkey))
			fv.fv_bad_local_invs++;
		if (w->w_flags & IBV_SEND_SIGNALED)
			fv_push(w->w_wr_id, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, 0, 0);
		break;
	default:
		fail_msg("unexpected opcode %d", w->w_opcode);
	}
}

unsigned fv_run_sq(unsigned max)
{
	unsigned n = 0;

	while (n < max && fv.fv_sq_head != fv.fv_sq_tail) {
		struct fv_wr w = fv.fv_sq[fv.fv_sq_head++ % FV_MAX_SQ];

		exec_wr(&w);
		n++;
	}
	return n;
}

static int fv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct ibv_send_wr *s, *stop = NULL;
	unsigned k;
	int i, err = 0;

	(void)qp;
	fv.fv_nposts++;
	fv.fv_last_post_was_send = true;
	if (++fv.fv_send_post_calls == fv.fv_fail_send_post_at ||
	    fv_roll(fv.fv_faults.ff_post_fail_pct[0])) {
		fv.fv_n_post_fails++;
		/* a partial post: the first fv_fail_post_after_wrs work
		 * requests are queued (and run), *bad is the next one */
		stop = wr;
		for (k = 0; k < fv.fv_fail_post_after_wrs && stop->next; k++)
			stop = stop->next;
		*bad = stop;
		err = ENOMEM;
		if (stop == wr)
			return err;
	}
	for (s = wr; s != stop; s = s->next) {
		struct fv_wr *w;

		if (fv.fv_sq_tail - fv.fv_sq_head >= FV_MAX_SQ)
			fail_msg("fake send queue overflow");
		w = &fv.fv_sq[fv.fv_sq_tail++ % FV_MAX_SQ];
		memset(w, 0, sizeof(*w));
		w->w_wr_id = s->wr_id;
		w->w_opcode = s->opcode;
		w->w_flags = s->send_flags;
		w->w_raddr = s->wr.rdma.remote_addr;
		w->w_rkey = s->wr.rdma.rkey;
		if (s->opcode == IBV_WR_SEND_WITH_INV || s->opcode == IBV_WR_LOCAL_INV)
			w->w_inv_rkey = s->invalidate_rkey;
		if (s->opcode == IBV_WR_BIND_MW) {
			w->w_mw = s->bind_mw.mw;
			w->w_mw_rkey = s->bind_mw.rkey;
			w->w_bind = s->bind_mw.bind_info;
		} else if (s->opcode != IBV_WR_LOCAL_INV) {
			assert_true(s->num_sge >= 0 && s->num_sge <= FV_MAX_SGE);
			w->w_nsge = s->num_sge;
			for (i = 0; i < s->num_sge; i++)
				w->w_sge[i] = s->sg_list[i];
		}
	}
	if (!fv.fv_defer_sq)
		fv_run_sq(UINT_MAX);
	if (err)
		return err;
	/* A provider that completes work before post returns. */
	if (fv.fv_inside_post && !fv.fv_in_post && fv_roll(fv.fv_faults.ff_inside_post_pct)) {
		fv.fv_n_inside++;
		fv_run_sq(UINT_MAX);
		fv.fv_in_post = true;
		fv.fv_inside_post(fv.fv_inside_post_arg);
		fv.fv_in_post = false;
	}
	return 0;
}

static int fv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)qp;
	fv.fv_last_post_was_send = false;
	if (++fv.fv_recv_post_calls == fv.fv_fail_recv_post_at ||
	    fv_roll(fv.fv_faults.ff_post_fail_pct[1])) {
		fv.fv_n_post_fails++;
		*bad = wr;
		return ENOMEM;
	}
	fv.fv_nrecv_posts++;
	for (; wr; wr = wr->next) {
		unsigned slot = fv.fv_rq_tail % FV_MAX_RQ;

		assert_int_equal(wr->num_sge, 1);
		check_sge(&wr->sg_list[0]);
		fv.fv_nrecv_posted++;
		if (fv.fv_qp_error) {
			fv_push(wr->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 1);
			continue;
		}
		if (fv.fv_rq_tail - fv.fv_rq_head >= FV_MAX_RQ)
			fail_msg("fake receive queue overflow");
		fv.fv_rq[slot] = *wr;
		fv.fv_rq_sge[slot] = wr->sg_list[0];
		fv.fv_rq[slot].sg_list = &fv.fv_rq_sge[slot];
		fv.fv_rq[slot].next = NULL;
		fv.fv_rq_tail++;
	}
	return 0;
}

static int fv_deliver_flags(const void *msg, uint32_t len, bool inv, uint32_t rkey)
{
	struct ibv_recv_wr *r;

	if (fv.fv_qp_error)
		return -ENOTCONN;
	if (fv.fv_rq_head == fv.fv_rq_tail)
		return -ENOBUFS;
	r = fv_take_recv();
	if (len > r->sg_list[0].length) {
		fv_push(r->wr_id, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, 1);
		if (fv.fv_auto_flush)
			fv_qp_to_error();
		return -EMSGSIZE;
	}
	if (fv_roll(fv.fv_faults.ff_error_pct[FV_Q_RECV])) {
		fv.fv_n_errors++;
		fv_push(r->wr_id, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, 1);
		if (fv.fv_auto_flush)
			fv_qp_to_error();
		return 0;
	}
	if (fv_roll(fv.fv_faults.ff_flush_pct[FV_Q_RECV])) {
		fv.fv_n_flushes++;
		fv_push(r->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 1);
		if (fv.fv_auto_flush)
			fv_qp_to_error();
		return 0;
	}
	memcpy((void *)(uintptr_t)r->sg_list[0].addr, msg, len);
	fv_push(r->wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, len, 1);
	if (inv) {
		struct ibv_wc *wc = &fv.fv_cq[(fv.fv_cq_tail - 1) % FV_MAX_CQ];

		wc->wc_flags |= IBV_WC_WITH_INV;
		wc->invalidated_rkey = rkey;
		fv_window_invalidate(rkey);
	}
	return 0;
}

int fv_deliver(const void *msg, uint32_t len)
{
	return fv_deliver_flags(msg, len, false, 0);
}

int fv_deliver_inv(const void *msg, uint32_t len, uint32_t rkey)
{
	return fv_deliver_flags(msg, len, true, rkey);
}



static int fv_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	unsigned avail = fv_cq_pending(), m = avail < (unsigned)n ? avail : (unsigned)n;
	unsigned i, na = 0, nb = 0, ia = 0, ib = 0;
	struct ibv_wc a[64], b[64];

	(void)cq;
	fv.fv_npolls++;
	if (m <= 64 && m > 1 && fv_roll(fv.fv_faults.ff_reorder_pct)) {
		/* Interleave the two queues at random, each kept in order. */
		for (i = 0; i < m; i++) {
			unsigned slot = (fv.fv_cq_head + i) % FV_MAX_CQ;

			if (fv.fv_cq_q[slot])
				b[nb++] = fv.fv_cq[slot];
			else
				a[na++] = fv.fv_cq[slot];
		}
		if (na && nb)
			fv.fv_n_reorders++;
		for (i = 0; i < m; i++) {
			if (ia < na && (ib == nb || fv_rand() % 2))
				wc[i] = a[ia++];
			else
				wc[i] = b[ib++];
		}
		fv.fv_cq_head += m;
		return (int)m;
	}
	for (i = 0; i < m; i++)
		wc[i] = fv.fv_cq[fv.fv_cq_head++ % FV_MAX_CQ];
	return (int)m;
}

static struct ibv_mr *fv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	unsigned i;

	(void)pd;
	fv.fv_nregs++;
	if (fv.fv_fail_reg_at && (int)fv.fv_nregs == fv.fv_fail_reg_at) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < FV_MAX_MR; i++) {
		if (fv.fv_mr_live[i])
			continue;
		fv.fv_mr_live[i] = true;
		fv.fv_mr_access[i] = access;
		memset(&fv.fv_mrs[i], 0, sizeof(fv.fv_mrs[i]));
		fv.fv_mrs[i].addr = addr;
		fv.fv_mrs[i].length = len;
		fv.fv_mrs[i].lkey = FV_LKEY0 + i;
		fv.fv_mrs[i].rkey = FV_RKEY0 + i;
		return &fv.fv_mrs[i];
	}
	fail_msg("out of fake MRs");
	return NULL;
}

static int fv_dereg_mr(struct ibv_mr *mr)
{
	unsigned i = (unsigned)(mr - fv.fv_mrs);

	assert_true(i < FV_MAX_MR && fv.fv_mr_live[i]);
	fv.fv_mr_live[i] = false;
	fv.fv_nderegs++;
	return 0;
}

static int fv_disconnect(struct rdma_cm_id *id)
{
	(void)id;
	fv.fv_disconnected = true;
	fv.fv_ndisconnects++;
	if (fv.fv_auto_flush && !fv.fv_qp_error)
		fv_qp_to_error();
	return 0;
}

/* The QP goes with its posted work, completing none of it. */
static void fv_destroy_id(struct rdma_cm_id *id)
{
	(void)id;
	fv.fv_ndestroys++;
	fv.fv_destroyed_recvs += fv.fv_rq_tail - fv.fv_rq_head;
	fv.fv_rq_head = fv.fv_rq_tail = 0;
	fv.fv_sq_head = fv.fv_sq_tail = 0;
}

const struct rpcrdma_verbs_ops fv_ops = {
	.vo_destroy_id = fv_destroy_id,
	.vo_post_send = fv_post_send,
	.vo_post_recv = fv_post_recv,
	.vo_poll_cq = fv_poll,
	.vo_reg_mr = fv_reg_mr,
	.vo_dereg_mr = fv_dereg_mr,
	.vo_disconnect = fv_disconnect,
};

void fv_reset(void)
{
	memset(&fv, 0, sizeof(fv));
	fv.fv_rng = 0x9e3779b97f4a7c15ull;
	rpcrdma_verbs = &fv_ops;
}

void fv_uninstall(void)
{
	rpcrdma_verbs = &rpcrdma_verbs_real;
}

void fv_seed(const struct fv_faults *f)
{
	fv.fv_faults = *f;
	fv.fv_rng = (f->ff_seed + 1) * 0x9e3779b97f4a7c15ull;
	if (!fv.fv_rng)
		fv.fv_rng = 1;
	fv.fv_defer_sq = true;
	fv.fv_auto_flush = true;
}

/* One fault profile of fv_run_profiles(). */
struct fv_profile {
	const char *fp_name;
	struct fv_faults fp_f;
};

void fv_run_profiles(unsigned nq, void (*run)(const char *name, const struct fv_faults *f))
{
	static const unsigned rates[] = { 0, 1, 10, 50 };
	static const char *const qname[FV_NQ] = { "send", "recv", "read", "write" };
	static char names[4 + 2 * FV_NQ][32];
	struct fv_profile p[4 + 2 * FV_NQ + 4];
	const char *only = getenv("FAULTS_PROFILE"), *seed_env = getenv("FAULTS_SEED");
	uint64_t seed0 = seed_env ? strtoull(seed_env, NULL, 0) : 1, s;
	unsigned nseeds = seed_env ? 1 : 4, np = 0, nn = 0, r, q, i;

	if (nq > FV_NQ)
		nq = FV_NQ;
	/* Every fault kind at every rate on every queue in use. */
	for (r = 0; r < 4; r++) {
		p[np] = (struct fv_profile){ names[nn], { .ff_post_fail_pct = { rates[r], rates[r] },
			.ff_reorder_pct = rates[r], .ff_inside_post_pct = rates[r] } };
		for (q = 0; q < nq; q++)
			p[np].fp_f.ff_error_pct[q] = p[np].fp_f.ff_flush_pct[q] = rates[r];
		snprintf(names[nn++], sizeof(names[0]), "all-%u", rates[r]);
		np++;
	}
	/* Each queue's errors and flushes alone. */
	for (q = 0; q < nq; q++) {
		p[np] = (struct fv_profile){ names[nn], { .ff_seed = 0 } };
		p[np++].fp_f.ff_error_pct[q] = 10;
		snprintf(names[nn++], sizeof(names[0]), "%s-error-10", qname[q]);
		p[np] = (struct fv_profile){ names[nn], { .ff_seed = 0 } };
		p[np++].fp_f.ff_flush_pct[q] = 10;
		snprintf(names[nn++], sizeof(names[0]), "%s-flush-10", qname[q]);
	}
	p[np++] = (struct fv_profile){ "post-send-fail-10", { .ff_post_fail_pct = { 10 } } };
	p[np++] = (struct fv_profile){ "post-recv-fail-10", { .ff_post_fail_pct = { 0, 10 } } };
	p[np++] = (struct fv_profile){ "reorder-50", { .ff_reorder_pct = 50 } };
	p[np++] = (struct fv_profile){ "inside-post-50", { .ff_inside_post_pct = 50 } };
	for (i = 0; i < np; i++) {
		if (only && strcmp(only, p[i].fp_name))
			continue;
		for (s = seed0; s < seed0 + nseeds; s++) {
			p[i].fp_f.ff_seed = s;
			run(p[i].fp_name, &p[i].fp_f);
		}
	}
}
