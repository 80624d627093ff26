// SPDX-License-Identifier: MIT
/*
 * test_wire_rpc.c - ONC RPC message header decode (RFC 5531 section 9,
 * AUTH_SYS per appendix A).  W(x) spells one big-endian XDR word.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include <rpcrdma/wire.h>

#define W(x) (uint8_t)((uint32_t)(x) >> 24), (uint8_t)((uint32_t)(x) >> 16), \
	     (uint8_t)((uint32_t)(x) >> 8), (uint8_t)(x)

static struct rpcrdma_rpc_msg msg;

static void put_word(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* NFSv3 GETATTR call, AUTH_NONE, one argument word. */
static const uint8_t call_none[] = {
	0x00, 0x00, 0x00, 0x11, /* xid */
	0x00, 0x00, 0x00, 0x00, /* CALL */
	0x00, 0x00, 0x00, 0x02, /* rpcvers 2 */
	0x00, 0x01, 0x86, 0xa3, /* prog 100003 */
	0x00, 0x00, 0x00, 0x03, /* vers 3 */
	0x00, 0x00, 0x00, 0x01, /* proc 1 */
	0x00, 0x00, 0x00, 0x00, /* cred AUTH_NONE */
	0x00, 0x00, 0x00, 0x00, /* length 0 */
	0x00, 0x00, 0x00, 0x00, /* verf AUTH_NONE */
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0xab, 0xcd, /* argument */
};

/* AUTH_SYS: stamp, "client" (6 + 2 pad), uid 1000, gid 100, gids {100, 27}. */
#define AUTHSYS_BODY \
	W(0x05f5e100), W(6), 'c', 'l', 'i', 'e', 'n', 't', 0, 0, \
	W(1000), W(100), W(2), W(100), W(27)

static const uint8_t call_sys[] = {
	W(0x22), W(0), W(2), W(100003), W(3), W(6),
	W(1), W(36), AUTHSYS_BODY,
	W(0), W(0),
};

static void test_call_auth_none(void **state)
{
	(void)state;
	assert_int_equal(rpcrdma_wire_decode_rpc(call_none, sizeof(call_none), &msg), 0);
	assert_int_equal(msg.rm_xid, 0x11);
	assert_int_equal(msg.rm_dir, RPC_DIR_CALL);
	assert_int_equal(msg.rm_rpcvers, 2);
	assert_int_equal(msg.rm_prog, 100003);
	assert_int_equal(msg.rm_vers, 3);
	assert_int_equal(msg.rm_proc, 1);
	assert_int_equal(msg.rm_cred_flavor, RPC_AUTH_NONE);
	assert_int_equal(msg.rm_cred_len, 0);
	assert_false(msg.rm_has_authsys);
	assert_int_equal(msg.rm_verf_flavor, RPC_AUTH_NONE);
	assert_int_equal(msg.rm_verf_len, 0);
	assert_int_equal(msg.rm_hdr_len, 40);
}

static void test_call_auth_sys(void **state)
{
	static const uint32_t gids[2] = { 100, 27 };

	(void)state;
	assert_int_equal(sizeof(call_sys), 24 + 8 + 36 + 8);
	assert_int_equal(rpcrdma_wire_decode_rpc(call_sys, sizeof(call_sys), &msg), 0);
	assert_int_equal(msg.rm_xid, 0x22);
	assert_int_equal(msg.rm_proc, 6);
	assert_int_equal(msg.rm_cred_flavor, RPC_AUTH_SYS);
	assert_int_equal(msg.rm_cred_len, 36);
	assert_ptr_equal(msg.rm_cred_body, call_sys + 32);
	assert_true(msg.rm_has_authsys);
	assert_int_equal(msg.rm_authsys.as_stamp, 100000000);
	assert_int_equal(msg.rm_authsys.as_namelen, 6);
	assert_ptr_equal(msg.rm_authsys.as_name, call_sys + 40);
	assert_memory_equal(msg.rm_authsys.as_name, "client", 6);
	assert_int_equal(msg.rm_authsys.as_uid, 1000);
	assert_int_equal(msg.rm_authsys.as_gid, 100);
	assert_int_equal(msg.rm_authsys.as_ngids, 2);
	assert_memory_equal(msg.rm_authsys.as_gids, gids, sizeof(gids));
	assert_int_equal(msg.rm_hdr_len, 76);
}

static void test_call_auth_sys_malformed(void **state)
{
	/* Credential 4 bytes longer than the AUTH_SYS body in it. */
	static const uint8_t trailing[] = {
		W(0x23), W(0), W(2), W(100003), W(3), W(1),
		W(1), W(40), AUTHSYS_BODY, W(0),
		W(0), W(0),
	};
	/* Credential shorter than the body claims (ngids 2, one present). */
	static const uint8_t cut[] = {
		W(0x24), W(0), W(2), W(100003), W(3), W(1),
		W(1), W(32), W(1), W(6), 'c', 'l', 'i', 'e', 'n', 't', 0, 0,
		W(1000), W(100), W(2), W(100),
		W(0), W(0),
	};
	/* 17 gids: one past the limit. */
	uint8_t many[24 + 8 + 4 + 4 + 4 + 4 + 4 + 17 * 4 + 8];
	/* A 256-byte machine name: one past the limit. */
	uint8_t name[24 + 8 + 4 + 4 + 256 + 12 + 8];
	uint8_t *p;
	uint32_t i;

	(void)state;
	assert_int_equal(rpcrdma_wire_decode_rpc(trailing, sizeof(trailing), &msg), 0);
	assert_int_equal(msg.rm_cred_flavor, RPC_AUTH_SYS);
	assert_int_equal(msg.rm_cred_len, 40);
	assert_false(msg.rm_has_authsys);
	assert_int_equal(msg.rm_hdr_len, sizeof(trailing));

	assert_int_equal(rpcrdma_wire_decode_rpc(cut, sizeof(cut), &msg), 0);
	assert_false(msg.rm_has_authsys);
	assert_int_equal(msg.rm_hdr_len, sizeof(cut));

	memset(many, 0, sizeof(many));
	put_word(many + 8, 2);
	put_word(many + 24, RPC_AUTH_SYS);
	put_word(many + 28, 4 + 4 + 4 + 4 + 4 + 17 * 4);
	p = many + 32;
	put_word(p + 4, 0);  /* empty name */
	put_word(p + 16, 17);
	for (i = 0; i < 17; i++)
		put_word(p + 20 + 4 * i, i);
	assert_int_equal(rpcrdma_wire_decode_rpc(many, sizeof(many), &msg), 0);
	assert_false(msg.rm_has_authsys);
	/* 16 gids in a credential of the right size are accepted. */
	put_word(many + 28, 4 + 4 + 4 + 4 + 4 + 16 * 4);
	put_word(p + 16, 16);
	assert_int_equal(rpcrdma_wire_decode_rpc(many, sizeof(many) - 4, &msg), 0);
	assert_true(msg.rm_has_authsys);
	assert_int_equal(msg.rm_authsys.as_ngids, 16);
	assert_int_equal(msg.rm_authsys.as_gids[15], 15);

	memset(name, 0, sizeof(name));
	put_word(name + 8, 2);
	put_word(name + 24, RPC_AUTH_SYS);
	put_word(name + 28, 4 + 4 + 256 + 12);
	put_word(name + 36, 256);
	assert_int_equal(rpcrdma_wire_decode_rpc(name, sizeof(name), &msg), 0);
	assert_false(msg.rm_has_authsys);
	/* 255 bytes (+1 pad) is the longest name. */
	put_word(name + 36, 255);
	assert_int_equal(rpcrdma_wire_decode_rpc(name, sizeof(name), &msg), 0);
	assert_true(msg.rm_has_authsys);
	assert_int_equal(msg.rm_authsys.as_namelen, 255);
}

static void test_opaque_auth_limit(void **state)
{
	/* Any flavor: body of at most 400 bytes. */
	static uint8_t m[24 + 8 + 404 + 8];

	(void)state;
	memset(m, 0, sizeof(m));
	put_word(m + 8, 2);
	put_word(m + 24, 6); /* RPCSEC_GSS: body kept opaque */
	put_word(m + 28, 400);
	assert_int_equal(rpcrdma_wire_decode_rpc(m, 24 + 8 + 400 + 8, &msg), 0);
	assert_int_equal(msg.rm_cred_flavor, 6);
	assert_int_equal(msg.rm_cred_len, 400);
	assert_ptr_equal(msg.rm_cred_body, m + 32);
	assert_false(msg.rm_has_authsys);
	assert_int_equal(msg.rm_hdr_len, 440);
	put_word(m + 28, 401);
	assert_int_equal(rpcrdma_wire_decode_rpc(m, sizeof(m), &msg), -EBADMSG);
	/* The verifier too. */
	put_word(m + 28, 0);
	put_word(m + 32, 1);
	put_word(m + 36, 401);
	assert_int_equal(rpcrdma_wire_decode_rpc(m, sizeof(m), &msg), -EBADMSG);
	put_word(m + 36, 8);
	assert_int_equal(rpcrdma_wire_decode_rpc(m, sizeof(m), &msg), 0);
	assert_int_equal(msg.rm_verf_flavor, 1);
	assert_int_equal(msg.rm_verf_len, 8);
	assert_ptr_equal(msg.rm_verf_body, m + 40);
	assert_int_equal(msg.rm_hdr_len, 48);
	/* A body length near 2^32 must not wrap the bounds check. */
	put_word(m + 36, 0xfffffffd);
	assert_int_equal(rpcrdma_wire_decode_rpc(m, sizeof(m), &msg), -EBADMSG);
}

static void test_call_cut_short(void **state)
{
	size_t n;

	(void)state;
	for (n = 0; n < sizeof(call_sys); n++)
		assert_int_equal(rpcrdma_wire_decode_rpc(call_sys, n, &msg), -EBADMSG);
	/* Partial decode keeps what was there: xid and direction at 8 bytes. */
	assert_int_equal(rpcrdma_wire_decode_rpc(call_sys, 24, &msg), -EBADMSG);
	assert_int_equal(msg.rm_xid, 0x22);
	assert_int_equal(msg.rm_prog, 100003);
	assert_int_equal(msg.rm_proc, 6);
	assert_int_equal(rpcrdma_wire_decode_rpc(NULL, 40, &msg), -EBADMSG);
}

static void test_call_rpc_version(void **state)
{
	uint8_t m[sizeof(call_none)];

	(void)state;
	memcpy(m, call_none, sizeof(m));
	put_word(m + 8, 3);
	assert_int_equal(rpcrdma_wire_decode_rpc(m, sizeof(m), &msg), -EPROTO);
	assert_int_equal(msg.rm_xid, 0x11);
	assert_int_equal(msg.rm_dir, RPC_DIR_CALL);
	assert_int_equal(msg.rm_rpcvers, 3);
	put_word(m + 8, 1);
	assert_int_equal(rpcrdma_wire_decode_rpc(m, 12, &msg), -EPROTO);
	/* A direction that is neither CALL nor REPLY. */
	memcpy(m, call_none, sizeof(m));
	put_word(m + 4, 2);
	assert_int_equal(rpcrdma_wire_decode_rpc(m, sizeof(m), &msg), -EBADMSG);
}

static void test_reply_accepted(void **state)
{
	static const uint8_t ok[] = {
		0x00, 0x00, 0x00, 0x31, /* xid */
		0x00, 0x00, 0x00, 0x01, /* REPLY */
		0x00, 0x00, 0x00, 0x00, /* MSG_ACCEPTED */
		0x00, 0x00, 0x00, 0x00, /* verf AUTH_NONE */
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, /* SUCCESS */
		0x00, 0x00, 0x00, 0x07, /* results */
	};
	static const uint8_t mismatch[] = {
		W(0x32), W(1), W(0), W(0), W(0), W(2), W(2), W(3),
	};
	uint8_t m[sizeof(ok)];

	(void)state;
	assert_int_equal(rpcrdma_wire_decode_rpc(ok, sizeof(ok), &msg), 0);
	assert_int_equal(msg.rm_xid, 0x31);
	assert_int_equal(msg.rm_dir, RPC_DIR_REPLY);
	assert_int_equal(msg.rm_reply_stat, RPC_MSG_ACCEPTED);
	assert_int_equal(msg.rm_accept_stat, RPC_ACCEPT_SUCCESS);
	assert_int_equal(msg.rm_hdr_len, 24);

	assert_int_equal(rpcrdma_wire_decode_rpc(mismatch, sizeof(mismatch), &msg), 0);
	assert_int_equal(msg.rm_accept_stat, RPC_ACCEPT_PROG_MISMATCH);
	assert_int_equal(msg.rm_mismatch_low, 2);
	assert_int_equal(msg.rm_mismatch_high, 3);
	assert_int_equal(msg.rm_hdr_len, 32);
	assert_int_equal(rpcrdma_wire_decode_rpc(mismatch, 28, &msg), -EBADMSG);

	memcpy(m, ok, sizeof(m));
	put_word(m + 20, RPC_ACCEPT_SYSTEM_ERR);
	assert_int_equal(rpcrdma_wire_decode_rpc(m, sizeof(m), &msg), 0);
	assert_int_equal(msg.rm_accept_stat, 5);
	put_word(m + 20, 6);
	assert_int_equal(rpcrdma_wire_decode_rpc(m, sizeof(m), &msg), -EBADMSG);
	put_word(m + 20, 0);
	put_word(m + 8, 2); /* reply_stat neither accepted nor denied */
	assert_int_equal(rpcrdma_wire_decode_rpc(m, sizeof(m), &msg), -EBADMSG);
}

static void test_reply_denied(void **state)
{
	static const uint8_t rpc_mismatch[] = { W(0x41), W(1), W(1), W(0), W(2), W(2) };
	static const uint8_t auth_error[] = { W(0x42), W(1), W(1), W(1), W(1) };
	static const uint8_t bad_reject[] = { W(0x43), W(1), W(1), W(2), W(1) };

	(void)state;
	assert_int_equal(rpcrdma_wire_decode_rpc(rpc_mismatch, sizeof(rpc_mismatch), &msg), 0);
	assert_int_equal(msg.rm_reply_stat, RPC_MSG_DENIED);
	assert_int_equal(msg.rm_reject_stat, RPC_REJECT_RPC_MISMATCH);
	assert_int_equal(msg.rm_mismatch_low, 2);
	assert_int_equal(msg.rm_mismatch_high, 2);
	assert_int_equal(msg.rm_hdr_len, 24);
	assert_int_equal(rpcrdma_wire_decode_rpc(rpc_mismatch, 20, &msg), -EBADMSG);

	assert_int_equal(rpcrdma_wire_decode_rpc(auth_error, sizeof(auth_error), &msg), 0);
	assert_int_equal(msg.rm_reject_stat, RPC_REJECT_AUTH_ERROR);
	assert_int_equal(msg.rm_auth_stat, 1);
	assert_int_equal(msg.rm_hdr_len, 20);
	assert_int_equal(rpcrdma_wire_decode_rpc(auth_error, 16, &msg), -EBADMSG);

	assert_int_equal(rpcrdma_wire_decode_rpc(bad_reject, sizeof(bad_reject), &msg), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_auth_none),
		cmocka_unit_test(test_call_auth_sys),
		cmocka_unit_test(test_call_auth_sys_malformed),
		cmocka_unit_test(test_opaque_auth_limit),
		cmocka_unit_test(test_call_cut_short),
		cmocka_unit_test(test_call_rpc_version),
		cmocka_unit_test(test_reply_accepted),
		cmocka_unit_test(test_reply_denied),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
