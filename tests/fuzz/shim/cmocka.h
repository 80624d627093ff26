/* SPDX-License-Identifier: MIT */
/*
 * cmocka.h (fuzz shim) - the few cmocka checks tests/unit/fake_verbs.c
 * uses, for the libFuzzer build, which runs no cmocka test: a failed
 * check prints what broke and aborts, and libFuzzer reports the input
 * as a crash.  Only the fuzz targets put this directory on the include
 * path; the unit tests get the real cmocka.
 */
#ifndef FUZZ_SHIM_CMOCKA_H
#define FUZZ_SHIM_CMOCKA_H

#include <stdio.h>
#include <stdlib.h>

#define fail_msg(...)                                               \
	do {                                                        \
		fprintf(stderr, "fake_verbs: " __VA_ARGS__);        \
		fputc('\n', stderr);                                \
		abort();                                            \
	} while (0)
#define assert_true(c)                                                  \
	do {                                                            \
		if (!(c))                                               \
			fail_msg("%s:%d: %s", __FILE__, __LINE__, #c);  \
	} while (0)
#define assert_false(c) assert_true(!(c))
#define assert_int_equal(a, b) assert_true((long long)(a) == (long long)(b))

#endif /* FUZZ_SHIM_CMOCKA_H */
