// SPDX-License-Identifier: MIT
/*
 * nfs_progress.c - rpcrdma-nfs: the get/put progress line (percent, bytes,
 * MB/s) on stderr, when it is a terminal and the file is 4 MiB or more.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "nfs.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void progress_init(struct progress *pg, const char *name, uint64_t total)
{
	memset(pg, 0, sizeof(*pg));
	pg->pg_name = name;
	pg->pg_total = total;
	pg->pg_show = !opt_quiet && isatty(STDERR_FILENO) && total >= (4u << 20);
	pg->pg_last = now_s();
	clock_gettime(CLOCK_MONOTONIC, &pg->pg_start);
}

void progress_draw(struct progress *pg, bool final)
{
	double el, t = now_s();
	uint64_t done = atomic_load(&pg->pg_done);

	if (!pg->pg_show || (!final && t - pg->pg_last < 0.2))
		return;
	pg->pg_last = t;
	el = t - ((double)pg->pg_start.tv_sec + pg->pg_start.tv_nsec / 1e9);
	fprintf(stderr, "\r%-30.30s %3u%% %10" PRIu64 " bytes %8.1f MB/s%s",
		pg->pg_name, pg->pg_total ? (unsigned)(done * 100 / pg->pg_total) : 100,
		done, el > 0 ? done / el / 1e6 : 0.0, final ? "\n" : "");
}
