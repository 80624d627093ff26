// SPDX-License-Identifier: MIT
/*
 * fuzz_tcp_rm.c - libFuzzer target over the TCP transport's record-marking
 * reader (src/svc/svc_tcp_rm.c, RFC 5531 section 11).
 *
 * Input: byte 0 picks the record cap (64 bytes << (b % 12)), bytes 1..8 four
 * 16-bit read sizes (each 1..8192 bytes, taken in turn, and never more
 * than the iovecs the reader offers, as readv() would: reads past the
 * 4 KiB read-ahead and into large records), the rest is the byte stream
 * from the peer.  Bit 0 of a read size's high byte also has the reader,
 * when it wants a larger buffer for the fragment (svc_rm_want()), adopt
 * a fresh one of that size or 1..255 bytes more, as the transport's kept
 * large buffers (svc_tcp_big_adopt()); what it lets go of is freed.  The reader must find exactly the records,
 * and stop at exactly the mark, that a plain one-pass parse of the whole
 * stream finds (reference below, written from the RFC's wording): the same
 * bytes in each record, -EMSGSIZE at the first mark whose fragment would
 * take the record over the cap, and no read beyond what it asked for.
 * ASan and UBSan watch its buffer handling.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "svc/svc_xprt.h"

struct ref_rec {
	size_t off[64];   /* up to 64 records checked */
	size_t len[64];
	uint8_t *data[64];
	unsigned n;
	int end;          /* 0: stream ended; -EMSGSIZE: a mark over the cap */
};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The reference: records of @s (@n bytes) under cap @max. */
static void ref_parse(const uint8_t *s, size_t n, uint32_t max, struct ref_rec *r)
{
	size_t at = 0, reclen = 0;
	uint8_t *cur = NULL;

	memset(r, 0, sizeof(*r));
	while (at + 4 <= n && r->n < 64) {
		uint32_t m = be32(s + at), len = m & 0x7fffffffu;

		at += 4;
		if ((uint64_t)reclen + len > max) {
			r->end = -EMSGSIZE;
			break;
		}
		if (at + len > n)
			break; /* fragment not complete: no record */
		cur = realloc(cur, reclen + len + 1);
		if (!cur)
			abort();
		memcpy(cur + reclen, s + at, len);
		reclen += len;
		at += len;
		if (m & 0x80000000u) {
			r->data[r->n] = cur;
			r->len[r->n] = reclen;
			r->n++;
			cur = NULL;
			reclen = 0;
		}
	}
	free(cur);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ref_rec ref;
	struct svc_rm rm;
	const uint8_t *s;
	size_t n, at = 0, k = 0;
	unsigned got = 0;
	uint32_t max;
	int rc = SVC_RM_MORE;

	if (size < 9)
		return 0;
	max = 64u << (data[0] % 12);
	s = data + 9;
	n = size - 9;
	ref_parse(s, n, max, &ref);
	svc_rm_init(&rm, max);
	while (at < n && got < 64) {
		struct iovec iov[2];
		size_t want, take, i, c;
		int niov = svc_rm_iov(&rm, iov);

		if (niov < 0)
			abort();
		want = iov[0].iov_len + (niov > 1 ? iov[1].iov_len : 0);
		if (!want)
			abort(); /* the reader must always ask for something */
		{
			size_t at2 = 1 + 2 * (k++ % 4);
			uint32_t w = svc_rm_want(&rm), oc;

			take = 1 + (((size_t)data[at2] << 8 | data[at2 + 1]) % 8192);
			if (w && (data[at2] & 1)) {
				uint32_t cap2 = w + data[at2 + 1] % 256;
				uint8_t *nb = malloc(cap2), *old;

				if (!nb)
					abort();
				old = svc_rm_adopt(&rm, nb, cap2, &oc);
				if (old == nb)
					abort(); /* w holds the record so far: never refused */
				free(old);
				niov = svc_rm_iov(&rm, iov);
				if (niov < 0)
					abort();
				want = iov[0].iov_len + (niov > 1 ? iov[1].iov_len : 0);
			}
		}
		if (take > want)
			take = want;
		if (take > n - at)
			take = n - at;
		/* readv(): fill the iovecs in order */
		for (i = 0, c = 0; i < (size_t)niov && c < take; i++) {
			size_t part = iov[i].iov_len < take - c ? iov[i].iov_len : take - c;

			memcpy(iov[i].iov_base, s + at + c, part);
			c += part;
		}
		at += take;
		rc = svc_rm_advance(&rm, take);
		while (rc == SVC_RM_RECORD && got < 64) {
			uint8_t *buf;
			uint32_t len, cap;

			rc = svc_rm_take(&rm, &buf, &len, &cap);
			if (got >= ref.n || len != ref.len[got] ||
			    (len && memcmp(buf, ref.data[got], len)))
				abort(); /* a record the reference does not have */
			if (len > max || (buf && cap < len))
				abort();
			got++;
			svc_rm_give(&rm, buf, cap);
		}
		if (rc < 0)
			break;
	}
	if (got < 64) {
		if (rc == -EMSGSIZE) {
			if (ref.end != -EMSGSIZE || got != ref.n)
				abort();
		} else if (rc < 0) {
			abort();
		} else if (got != ref.n) {
			abort();
		}
	}
	svc_rm_fini(&rm);
	for (unsigned i = 0; i < ref.n; i++)
		free(ref.data[i]);
	return 0;
}
