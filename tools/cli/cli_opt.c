// SPDX-License-Identifier: MIT
/*
 * cli_opt.c - option values checked against their range, and --version,
 * for the command-line tools (cli.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "common/version.h"

int cli_parse_u64(const char *arg, uint64_t *out)
{
	unsigned long long v;
	char *end = NULL;

	/* strtoull takes a sign and leading blanks: only digits here */
	if (arg[0] < '0' || arg[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_uint(const char *prog, const char *opt, const char *arg, unsigned long lo,
	     unsigned long hi, const char *unit, unsigned long *out)
{
	uint64_t v = 0;

	if (cli_parse_u64(arg, &v) || v < lo || v > hi) {
		fprintf(stderr, "%s: --%s: expected %lu..%lu%s%s: %s\n", prog, opt, lo, hi,
			unit ? " " : "", unit ? unit : "", arg);
		return -EINVAL;
	}
	*out = (unsigned long)v;
	return 0;
}

int cli_version(const char *prog)
{
	printf("%s %s\n", prog, RPCRDMA_VERSION_STRING);
	return 0;
}
