// SPDX-License-Identifier: MIT
/*
 * test_nfs4_compound.c - COMPOUND replies at the reply buffer's end
 * (issue 33, finding 1; RFC 8881 2.10.6.4).
 *
 * Each case runs a COMPOUND into a reply buffer allocated with exactly
 * the size under test (malloc, so AddressSanitizer reports a store one
 * byte past it) and checks the reply against offsets worked out by hand
 * from the RFC 8881 layouts:
 *
 *   COMPOUND4res header: status 4, tag "tag!" 4 + 4, count 4       = 16
 *   SEQUENCE result: op 4, status 4, sessionid 16, 5 words 20      = 44
 *   PUTFH result: op 4, status 4                                    =  8
 *   READ result header: op 4, status 4, eof 4, data length 4        = 16
 *
 * so a READ's data starts at byte 84 and, when an operation follows it,
 * may run to the buffer's size rounded down to a word, minus the 8 bytes
 * held back for the next operation's number and status.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_nfs4_harness.h"

#define READ_DATA_AT 84u
#define BIG_FILE_BYTES 8192

static int setup(void **state)
{
	struct env *e;
	char buf[BIG_FILE_BYTES];

	if (t4_setup(state, "rw,no_root_squash,insecure"))
		return -1;
	e = *state;
	if (!e)
		return 0; /* posix, not root: skipped */
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 13 + 5);
	t4_make(e, "big", T4_FILE, 0644, buf, sizeof(buf), -1, -1);
	session(e);
	return 0;
}

/* c_run_into - c_run() with a reply buffer of exactly @cap bytes. */
static int c_run_into(struct env *e, uint8_t *res, size_t cap)
{
	struct t_call *c = &e->c;

	rpcrdma_xdr_init(&c->req.rq_args, c->args, c->alen);
	rpcrdma_xdr_init(&c->req.rq_res, res, cap);
	c->ret = rpcrdma_nfs4_server_dispatch(&c->req, e->srv4);
	rpcrdma_nfs3_thread_release();
	c->rlen = c->req.rq_res.xs_pos;
	c->rpos = 0;
	return c->ret;
}

/* r_at - decode the reply in @res instead of the harness' own buffer */
static void r_from(struct env *e, uint8_t *res, uint8_t **save)
{
	*save = e->c.res;
	e->c.res = res;
}

/*
 * c_read_getfh - SEQUENCE, PUTFH @fh, READ (anonymous stateid, offset 0,
 * count @count) and, with @getfh, GETFH.
 */
static void c_read_getfh(struct env *e, const uint8_t *fh, uint32_t fhlen,
			 uint32_t count, bool getfh)
{
	static const uint8_t anon[16];

	c_begin(e, 1, getfh ? 4 : 3);
	c_sequence(e, e->seq++, 0);
	t_u32(&e->c, OP_PUTFH);
	t_u32(&e->c, fhlen);
	c_fixed(&e->c, fh, (fhlen + 3) & ~3u);
	t_u32(&e->c, OP_READ);
	c_fixed(&e->c, anon, 16);
	t_u64(&e->c, 0);
	t_u32(&e->c, count);
	if (getfh)
		t_u32(&e->c, OP_GETFH);
}

/* the READ's data: the file's bytes from offset 0 */
static void check_data(const uint8_t *p, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(i * 13 + 5))
			fail_msg("READ data byte %u is %u", i, p[i]);
}

/*
 * A READ of a huge count followed by GETFH, into reply buffers of every
 * size from 1024 - 64 to 1024 + 64 bytes: the READ takes all but the
 * last 8 bytes (rounded down to a word), GETFH does not fit and is
 * answered NFS4ERR_REP_TOO_BIG in those 8 bytes, and nothing is written
 * past the buffer (before the fix, a buffer that the READ filled to its
 * last word got GETFH's status stored 4 bytes past its end).
 */
static void test_read_then_getfh_at_every_size(void **state)
{
	struct env *e = t4_env(state);
	uint8_t fh[NFS4_FHSIZE] = { 0 }, *save;
	uint32_t fhlen, n, len;

	t4_fh_of(e, "big", fh, &fhlen);
	for (size_t cap = 1024 - 64; cap <= 1024 + 64; cap++) {
		uint8_t *res = malloc(cap);
		size_t end = (cap - 8) & ~(size_t)3;
		const uint8_t *p;

		assert_non_null(res);
		c_read_getfh(e, fh, fhlen, 0xffffffffu, true);
		assert_int_equal(c_run_into(e, res, cap), RPCRDMA_SVC_SUCCESS);
		r_from(e, res, &save);
		assert_int_equal(r_hdr(&e->c, &n), NFS4ERR_REP_TOO_BIG);
		assert_int_equal(n, 4);
		assert_int_equal(r_op(&e->c, OP_SEQUENCE), NFS4_OK);
		r_skip(&e->c, 36);
		assert_int_equal(r_op(&e->c, OP_PUTFH), NFS4_OK);
		assert_int_equal(r_op(&e->c, OP_READ), NFS4_OK);
		assert_int_equal(r_u32(&e->c), 0); /* eof: 8192 bytes not all read */
		p = r_opaque(&e->c, &len);
		assert_int_equal(len, end - READ_DATA_AT);
		check_data(p, len);
		assert_int_equal(r_op(&e->c, OP_GETFH), NFS4ERR_REP_TOO_BIG);
		assert_int_equal(e->c.rlen, end + 8);
		assert_true(e->c.rlen <= cap);
		e->c.res = save;
		free(res);
	}
}

/* The last operation may use the buffer to its last word. */
static void test_last_read_fills_buffer(void **state)
{
	struct env *e = t4_env(state);
	uint8_t fh[NFS4_FHSIZE] = { 0 }, *save;
	uint32_t fhlen, n, len;

	t4_fh_of(e, "big", fh, &fhlen);
	for (size_t cap = 1024 - 8; cap <= 1024 + 8; cap++) {
		uint8_t *res = malloc(cap);
		size_t end = cap & ~(size_t)3;
		const uint8_t *p;

		assert_non_null(res);
		c_read_getfh(e, fh, fhlen, 0xffffffffu, false);
		assert_int_equal(c_run_into(e, res, cap), RPCRDMA_SVC_SUCCESS);
		r_from(e, res, &save);
		assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
		assert_int_equal(n, 3);
		assert_int_equal(r_op(&e->c, OP_SEQUENCE), NFS4_OK);
		r_skip(&e->c, 36);
		assert_int_equal(r_op(&e->c, OP_PUTFH), NFS4_OK);
		assert_int_equal(r_op(&e->c, OP_READ), NFS4_OK);
		assert_int_equal(r_u32(&e->c), 0);
		p = r_opaque(&e->c, &len);
		assert_int_equal(len, end - READ_DATA_AT);
		check_data(p, len);
		assert_int_equal(e->c.rlen, end);
		e->c.res = save;
		free(res);
	}
}

/*
 * A reply that fits leaves every result as it was: GETFH after a READ of
 * 16 bytes, in a buffer with room to spare.
 */
static void test_small_read_then_getfh(void **state)
{
	struct env *e = t4_env(state);
	uint8_t fh[NFS4_FHSIZE] = { 0 }, *save, *res = malloc(4096);
	uint32_t fhlen, n, len;
	const uint8_t *p;

	assert_non_null(res);
	t4_fh_of(e, "big", fh, &fhlen);
	c_read_getfh(e, fh, fhlen, 16, true);
	assert_int_equal(c_run_into(e, res, 4096), RPCRDMA_SVC_SUCCESS);
	r_from(e, res, &save);
	assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
	assert_int_equal(n, 4);
	assert_int_equal(r_op(&e->c, OP_SEQUENCE), NFS4_OK);
	r_skip(&e->c, 36);
	assert_int_equal(r_op(&e->c, OP_PUTFH), NFS4_OK);
	assert_int_equal(r_op(&e->c, OP_READ), NFS4_OK);
	assert_int_equal(r_u32(&e->c), 0);
	p = r_opaque(&e->c, &len);
	assert_int_equal(len, 16);
	check_data(p, len);
	assert_int_equal(r_op(&e->c, OP_GETFH), NFS4_OK);
	p = r_opaque(&e->c, &len);
	assert_int_equal(len, fhlen);
	assert_memory_equal(p, fh, fhlen);
	assert_int_equal(e->c.rlen, e->c.rpos);
	e->c.res = save;
	free(res);
}

/*
 * Buffers too small for the header and the first operation's number and
 * status: no reply (SYSTEM_ERR), nothing written past the buffer.  The
 * SEQUENCE of these calls never ran, so slot 0's sequence id is reused.
 */
static void test_buffer_without_room_for_first_op(void **state)
{
	struct env *e = t4_env(state);
	uint8_t fh[NFS4_FHSIZE] = { 0 };
	uint32_t fhlen, seq;

	t4_fh_of(e, "big", fh, &fhlen);
	seq = e->seq;
	for (size_t cap = 4; cap < 16 + 8; cap++) {
		uint8_t *res = malloc(cap);

		assert_non_null(res);
		e->seq = seq;
		c_read_getfh(e, fh, fhlen, 0xffffffffu, true);
		assert_int_equal(c_run_into(e, res, cap), RPCRDMA_SVC_SYSTEM_ERR);
		free(res);
	}
	e->seq = seq;
}

/*
 * A SEQUENCE whose own result does not fit (reply buffers of 24 to 67
 * bytes for a COMPOUND of four operations: 16 of header, 8 of number and
 * status, 36 of result, 8 held back) is NFS4ERR_REP_TOO_BIG and leaves
 * the slot alone, so the same request sent again with room is served
 * whole.  Before, the slot took the sequence id and kept the error as
 * the reply, and every resend got that error back.
 */
static void test_sequence_too_big_leaves_slot(void **state)
{
	struct env *e = t4_env(state);
	uint8_t fh[NFS4_FHSIZE] = { 0 }, *save;
	uint32_t fhlen, n, seq;

	t4_fh_of(e, "big", fh, &fhlen);
	for (size_t cap = 24; cap < 68; cap++) {
		uint8_t *res = malloc(cap), *big = malloc(4096);

		assert_non_null(res);
		assert_non_null(big);
		seq = e->seq;
		c_read_getfh(e, fh, fhlen, 16, true);
		assert_int_equal(c_run_into(e, res, cap), RPCRDMA_SVC_SUCCESS);
		r_from(e, res, &save);
		assert_int_equal(r_hdr(&e->c, &n), NFS4ERR_REP_TOO_BIG);
		assert_int_equal(n, 1);
		assert_int_equal(r_op(&e->c, OP_SEQUENCE), NFS4ERR_REP_TOO_BIG);
		assert_int_equal(e->c.rlen, 24);
		e->c.res = save;
		/* the same request again, with room */
		e->seq = seq;
		c_read_getfh(e, fh, fhlen, 16, true);
		assert_int_equal(c_run_into(e, big, 4096), RPCRDMA_SVC_SUCCESS);
		r_from(e, big, &save);
		assert_int_equal(r_hdr(&e->c, &n), NFS4_OK);
		assert_int_equal(n, 4);
		e->c.res = save;
		free(res);
		free(big);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T4_BOTH(test_read_then_getfh_at_every_size, setup, t4_teardown),
		T4_BOTH(test_last_read_fills_buffer, setup, t4_teardown),
		T4_BOTH(test_small_read_then_getfh, setup, t4_teardown),
		T4_BOTH(test_buffer_without_room_for_first_op, setup, t4_teardown),
		T4_BOTH(test_sequence_too_big_leaves_slot, setup, t4_teardown),
	};

	return t_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
