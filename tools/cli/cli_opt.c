// SPDX-License-Identifier: MIT
/*
 * cli_opt.c - option values checked against their range, and --version,
 * for the command-line tools (cli.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "common/version.h"

int cli_uint(const char *prog, const char *opt, const char *arg, unsigned long lo,
	     unsigned long hi, const char *unit, unsigned long *out)
{
	unsigned long v = 0;
	char *end = NULL;
	bool ok;

	/* strtoul takes a sign and leading blanks: only digits here */
	ok = arg[0] >= '0' && arg[0] <= '9';
	if (ok) {
		errno = 0;
		v = strtoul(arg, &end, 10);
		ok = !errno && !*end && v >= lo && v <= hi;
	}
	if (!ok) {
		fprintf(stderr, "%s: --%s: expected %lu..%lu%s%s: %s\n", prog, opt, lo, hi,
			unit ? " " : "", unit ? unit : "", arg);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int cli_version(const char *prog)
{
	printf("%s %s\n", prog, RPCRDMA_VERSION_STRING);
	return 0;
}
