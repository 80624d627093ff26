// SPDX-License-Identifier: MIT
/*
 * svc_tcp_rm.c - the record-marking reader of ONC RPC over TCP (RFC 5531
 * section 11): a record is one or more fragments, each behind a four-byte
 * mark in network order whose top bit says "last fragment of the record"
 * and whose other 31 bits give the fragment's length in bytes.
 *
 * The reader knows no socket: it says where the next bytes go
 * (svc_rm_iov()) and is told how many came (svc_rm_advance()), so the
 * transport reads straight into the record's buffer, and the unit tests
 * and the fuzzer (tests/fuzz/fuzz_tcp_rm.c) drive it from memory.  Every
 * length is checked before it is believed: a mark announcing more than
 * the record cap in all ends the connection before anything is allocated
 * for it, and the buffer grows only as bytes actually arrive (at most
 * doubling), so a peer announcing a large fragment and sending nothing
 * costs one small buffer.
 *
 * Between records the reader reads ahead: one read of up to SVC_RM_AHEAD
 * bytes into a buffer of its own takes the next mark and, for a small
 * call, its whole body (an idle connection's call would otherwise cost
 * two reads, the mark alone and then the body).  Those bytes are copied
 * into the mark and the record (svc_rm_feed()); what lies beyond the
 * record stays for the next one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "svc/svc_xprt.h"

void svc_rm_init(struct svc_rm *r, uint32_t max)
{
	memset(r, 0, sizeof(*r));
	r->rm_max = max;
}

void svc_rm_fini(struct svc_rm *r)
{
	free(r->rm_buf);
	r->rm_buf = NULL;
	r->rm_cap = r->rm_len = 0;
	free(r->rm_ahead);
	r->rm_ahead = NULL;
	r->rm_ahead_len = r->rm_ahead_off = 0;
}

/* The size the buffer grows to for more of the current fragment: double
 * (at least SVC_RM_MIN_CAP), never beyond what the fragment still needs. */
static uint32_t svc_rm_grow_size(const struct svc_rm *r)
{
	uint64_t want = r->rm_cap ? (uint64_t)r->rm_cap * 2 : SVC_RM_MIN_CAP;
	uint64_t need = (uint64_t)r->rm_len + r->rm_frag_left;

	if (want > need)
		want = need;
	if (want < SVC_RM_MIN_CAP)
		want = SVC_RM_MIN_CAP;
	return (uint32_t)want; /* need <= rm_max: svc_rm_mark() */
}

uint32_t svc_rm_grow_cap(const struct svc_rm *r)
{
	if (r->rm_in_frag && r->rm_frag_left && r->rm_cap == r->rm_len)
		return svc_rm_grow_size(r);
	return 0;
}

/* Make room for more of the current fragment (svc_rm_grow_size()). */
static int svc_rm_grow(struct svc_rm *r)
{
	uint32_t want = svc_rm_grow_size(r);
	uint8_t *nb;

	nb = realloc(r->rm_buf, (size_t)want);
	if (!nb)
		return -ENOMEM;
	r->rm_buf = nb;
	r->rm_cap = (uint32_t)want;
	return 0;
}

int svc_rm_iov(struct svc_rm *r, struct iovec iov[2])
{
	int n = 0;

	r->rm_ahead_read = false;
	/* Between records, nothing read ahead left: read ahead (when its
	 * buffer cannot be had, the mark alone as below). */
	if (!r->rm_in_frag && !r->rm_markgot && !r->rm_len &&
	    r->rm_ahead_off == r->rm_ahead_len) {
		if (!r->rm_ahead)
			r->rm_ahead = malloc(SVC_RM_AHEAD);
		if (r->rm_ahead) {
			r->rm_ahead_len = r->rm_ahead_off = 0;
			r->rm_ahead_read = true;
			iov[0].iov_base = r->rm_ahead;
			iov[0].iov_len = SVC_RM_AHEAD;
			return 1;
		}
	}

	if (r->rm_in_frag && r->rm_frag_left) {
		uint32_t room;

		if (r->rm_cap == r->rm_len && svc_rm_grow(r))
			return -ENOMEM;
		room = r->rm_cap - r->rm_len;
		iov[n].iov_base = r->rm_buf + r->rm_len;
		iov[n].iov_len = room < r->rm_frag_left ? room : r->rm_frag_left;
		n++;
		/* The mark after this fragment only when the fragment ends
		 * inside this read (else the read would run into it). */
		if (iov[0].iov_len < r->rm_frag_left)
			return n;
	}
	iov[n].iov_base = r->rm_mark + r->rm_markgot;
	iov[n].iov_len = sizeof(r->rm_mark) - r->rm_markgot;
	return n + 1;
}

/* A whole mark is in rm_mark: start its fragment. */
static int svc_rm_mark(struct svc_rm *r)
{
	uint32_t m = (uint32_t)r->rm_mark[0] << 24 | (uint32_t)r->rm_mark[1] << 16 |
		     (uint32_t)r->rm_mark[2] << 8 | r->rm_mark[3];
	uint32_t len = m & 0x7fffffffu;

	r->rm_markgot = 0;
	if ((uint64_t)r->rm_len + len > r->rm_max)
		return -EMSGSIZE;
	r->rm_in_frag = true;
	r->rm_last = (m & 0x80000000u) != 0;
	r->rm_frag_left = len;
	r->rm_frags++;
	return 0;
}

/* Move on as far as the bytes counted allow: a finished fragment that is
 * not the record's last is followed by a mark, a whole mark starts its
 * fragment (a fragment of 0 bytes included). */
static int svc_rm_step(struct svc_rm *r)
{
	int rc;

	for (;;) {
		if (r->rm_in_frag) {
			if (r->rm_frag_left)
				return SVC_RM_MORE;
			if (r->rm_last)
				return SVC_RM_RECORD;
			r->rm_in_frag = false;
		}
		if (r->rm_markgot < sizeof(r->rm_mark))
			return SVC_RM_MORE;
		rc = svc_rm_mark(r);
		if (rc)
			return rc;
	}
}

/* Feed the bytes read ahead to the mark and the record until they are
 * used up or a record is complete (the rest waits for svc_rm_take()). */
static int svc_rm_feed(struct svc_rm *r)
{
	for (;;) {
		uint32_t avail = r->rm_ahead_len - r->rm_ahead_off, take;
		int rc = svc_rm_step(r);

		if (rc != SVC_RM_MORE || !avail)
			return rc;
		if (r->rm_in_frag) {
			if (r->rm_cap == r->rm_len && svc_rm_grow(r))
				return -ENOMEM;
			take = r->rm_cap - r->rm_len;
			if (take > r->rm_frag_left)
				take = r->rm_frag_left;
			if (take > avail)
				take = avail;
			memcpy(r->rm_buf + r->rm_len, r->rm_ahead + r->rm_ahead_off, take);
			r->rm_len += take;
			r->rm_frag_left -= take;
		} else {
			take = (uint32_t)sizeof(r->rm_mark) - r->rm_markgot;
			if (take > avail)
				take = avail;
			memcpy(r->rm_mark + r->rm_markgot, r->rm_ahead + r->rm_ahead_off, take);
			r->rm_markgot += (uint8_t)take;
		}
		r->rm_ahead_off += take;
	}
}

int svc_rm_advance(struct svc_rm *r, size_t n)
{
	if (r->rm_ahead_read) {
		r->rm_ahead_read = false;
		if (n > SVC_RM_AHEAD)
			return -EINVAL;
		r->rm_ahead_len = (uint32_t)n;
		r->rm_ahead_off = 0;
		return svc_rm_feed(r);
	}
	/* In the order svc_rm_iov() laid them out: the fragment's bytes ... */
	if (r->rm_in_frag && r->rm_frag_left) {
		uint32_t take = r->rm_cap - r->rm_len;

		if (take > r->rm_frag_left)
			take = r->rm_frag_left;
		if (take > n)
			take = (uint32_t)n;
		r->rm_len += take;
		r->rm_frag_left -= take;
		n -= take;
		if (n && r->rm_frag_left)
			return -EINVAL; /* more than was asked for */
	}
	/* ... then the next mark's. */
	if (n > sizeof(r->rm_mark) - r->rm_markgot)
		return -EINVAL;
	r->rm_markgot += (uint8_t)n;
	return svc_rm_step(r);
}

int svc_rm_take(struct svc_rm *r, uint8_t **buf, uint32_t *len, uint32_t *cap)
{
	*buf = r->rm_buf;
	*len = r->rm_len;
	*cap = r->rm_cap;
	r->rm_buf = NULL;
	r->rm_cap = r->rm_len = 0;
	r->rm_in_frag = r->rm_last = false;
	r->rm_frag_left = 0;
	r->rm_frags = 0;
	/* The next record's mark (or more of it, read ahead) may have come
	 * with this one's end. */
	return svc_rm_feed(r);
}

void svc_rm_give(struct svc_rm *r, uint8_t *buf, uint32_t cap)
{
	if (r->rm_buf || !buf) {
		free(buf);
		return;
	}
	r->rm_buf = buf;
	r->rm_cap = cap;
}

uint32_t svc_rm_want(const struct svc_rm *r)
{
	uint64_t need;

	if (!r->rm_in_frag || !r->rm_frag_left)
		return 0;
	need = (uint64_t)r->rm_len + r->rm_frag_left; /* <= rm_max: svc_rm_mark() */
	return need > r->rm_cap ? (uint32_t)need : 0;
}

uint8_t *svc_rm_adopt(struct svc_rm *r, uint8_t *buf, uint32_t cap, uint32_t *old_cap)
{
	uint8_t *old = r->rm_buf;

	if (!buf || cap < r->rm_len) { /* refused: the caller's back */
		*old_cap = cap;
		return buf;
	}
	*old_cap = r->rm_cap;
	if (r->rm_len)
		memcpy(buf, r->rm_buf, r->rm_len);
	r->rm_buf = buf;
	r->rm_cap = cap;
	return old;
}
