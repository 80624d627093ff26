/* SPDX-License-Identifier: MIT */
/*
 * test_root.h - unit test programs whose cases need root (the posix
 * backend's file handles: name_to_handle_at and open_by_handle_at need
 * CAP_DAC_READ_SEARCH; a reserved port for MOUNT's client).  Without root
 * those cases are skipped, and the program then ends with status 77, which
 * CTest reports as skipped (SKIP_RETURN_CODE, tests/unit/CMakeLists.txt),
 * never as passed: a program that ran only some of its cases did not prove
 * them all.  A failure still ends it with its failure count.  CI runs as
 * root, so everything runs there.  Header-only: one test program per
 * translation unit, so the flag below is the program's.
 */
#ifndef RPCRDMA_TEST_ROOT_H
#define RPCRDMA_TEST_ROOT_H

#include <stdbool.h>
#include <unistd.h>

/* a case that needs root was skipped in this run */
static bool t_root_skipped;

/*
 * t_root - is this process root?  When not, the run is noted as having
 * skipped a case that needs root (t_exit() then answers 77); the caller
 * skips the case(s).
 */
static inline bool t_root(void)
{
	if (geteuid() == 0)
		return true;
	t_root_skipped = true;
	return false;
}

/*
 * t_exit - main()'s status from @fails (cmocka's failure count): @fails
 * when not 0; else 77 (skipped) when a case that needs root was skipped;
 * else 0.
 */
static inline int t_exit(int fails)
{
	if (fails)
		return fails;
	return t_root_skipped ? 77 : 0;
}

#endif /* RPCRDMA_TEST_ROOT_H */
