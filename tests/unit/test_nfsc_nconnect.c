// SPDX-License-Identifier: MIT
/*
 * test_nfsc_nconnect.c - a mount with several RDMA connections (like the
 * kernel's nconnect): calls go round robin, a buffer is registered on
 * every connection (undone on all when one refuses), counters are summed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_verbs.h"

#include "clnt/clnt_internal.h"
#include "nfsc/nfsc_internal.h"

#include "clnt_fixture.h"

static struct rpcrdma_nfsc nc;

static int setup(void **state)
{
	struct rpcrdma_clnt_config cfg = {
		.cf_max_credits = 4, .cf_inline_size = 4096, .cf_auth_none = true,
		.cf_log = stderr, .cf_reg = RPCRDMA_CLNT_REG_PERSISTENT,
	};
	unsigned i;

	(void)state;
	fv_reset();
	memset(&nc, 0, sizeof(nc));
	for (i = 0; i < 3; i++) {
		nc.nc_clnts[i] = clnt_fixture_new(&cfg);
		nc.nc_clnts[i]->cl_connected = true;
	}
	nc.nc_nconn = 3;
	return 0;
}

static int teardown(void **state)
{
	unsigned i;

	(void)state;
	for (i = 0; i < nc.nc_nconn; i++)
		clnt_free(nc.nc_clnts[i]);
	fv_uninstall();
	return 0;
}

static void test_round_robin(void **state)
{
	unsigned i;

	(void)state;
	assert_int_equal(rpcrdma_nfsc_nconnect(&nc), 3);
	for (i = 0; i < 7; i++)
		assert_ptr_equal(nfsc_clnt_pick(&nc), nc.nc_clnts[i % 3]);
	assert_ptr_equal(rpcrdma_nfsc_conn(&nc, 2), nc.nc_clnts[2]);
	assert_null(rpcrdma_nfsc_conn(&nc, 3));
	assert_ptr_equal(rpcrdma_nfsc_clnt(&nc), nc.nc_clnts[0]);
}

/* One region per connection; when the third refuses, the first two are
 * released again. */
static void test_register_on_every_connection(void **state)
{
	static uint8_t buf[8192];
	unsigned live = fv_live_mrs(); /* the three pools */

	(void)state;
	assert_int_equal(rpcrdma_nfsc_register_buffer(&nc, buf, sizeof(buf)), 0);
	assert_int_equal(fv_live_mrs(), live + 3);
	assert_int_equal(rpcrdma_nfsc_unregister_buffer(&nc, buf), 0);
	assert_int_equal(fv_live_mrs(), live);
	assert_int_equal(rpcrdma_nfsc_unregister_buffer(&nc, buf), -ENOENT);

	nc.nc_clnts[2]->cl_connected = false;
	assert_int_equal(rpcrdma_nfsc_register_buffer(&nc, buf, sizeof(buf)), -ENOTCONN);
	assert_int_equal(fv_live_mrs(), live);
}

static void test_stats_summed(void **state)
{
	struct rpcrdma_clnt_stats st;

	(void)state;
	nc.nc_clnts[0]->cl_stats.cs_calls = 5;
	nc.nc_clnts[1]->cl_stats.cs_calls = 7;
	nc.nc_clnts[2]->cl_stats.cs_calls = 11;
	nc.nc_clnts[2]->cl_stats.cs_late_replies = 2;
	nc.nc_clnts[0]->cl_credits = 4;
	nc.nc_clnts[1]->cl_credits = 1;
	nc.nc_clnts[2]->cl_credits = 1;
	rpcrdma_nfsc_get_stats(&nc, &st);
	assert_int_equal(st.cs_calls, 23);
	assert_int_equal(st.cs_late_replies, 2);
	assert_int_equal(st.cs_credits, 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_robin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_register_on_every_connection, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stats_summed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
