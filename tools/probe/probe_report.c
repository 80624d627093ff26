// SPDX-License-Identifier: MIT
/*
 * probe_report.c - the results of rpcrdma-probe as a table (case,
 * expected, observed, result, connection afterwards) or as one JSON
 * object.
 */
#include <stdio.h>
#include <string.h>

#include "probe.h"

/**
 * probe_result_word - PASS, FAIL, SKIP, or DIFF (failed as the Linux
 * kernel is known to, with --linux).
 */
const char *probe_result_word(const struct probe_result *r)
{
	if (r->pr_skipped)
		return "SKIP";
	if (r->pr_pass)
		return "PASS";
	return r->pr_linux_diff ? "DIFF" : "FAIL";
}

struct report_counts {
	uint32_t rc_pass, rc_fail, rc_skip, rc_diff;
};

static void count(const struct probe_run *run, struct report_counts *c)
{
	uint32_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < run->pr_nresults; i++) {
		const struct probe_result *r = &run->pr_results[i];

		if (r->pr_skipped)
			c->rc_skip++;
		else if (r->pr_pass)
			c->rc_pass++;
		else if (r->pr_linux_diff)
			c->rc_diff++;
		else
			c->rc_fail++;
	}
}

/** probe_report_table - print the results as a table on stdout. */
void probe_report_table(const struct probe_run *run)
{
	const struct probe_conn *pc = &run->pr_conn;
	struct report_counts c;
	uint32_t i;

	printf("rpcrdma-probe: %s port %u", run->pr_opts->po_server, run->pr_opts->po_port);
	if (pc->pc_peer_pdata)
		printf(", server private data: send %u, receive %u, flags 0x%x",
		       pc->pc_peer.cp_send_size, pc->pc_peer.cp_recv_size,
		       pc->pc_peer.cp_flags);
	else
		printf(", no private data from the server");
	printf("\n%-26s %-14s %-4s  %s\n", "case", "expected", "", "observed  [then]");
	for (i = 0; i < run->pr_nresults; i++) {
		const struct probe_result *r = &run->pr_results[i];

		printf("%-26s %-14s %-4s  %s", r->pr_name, r->pr_expected,
		       probe_result_word(r), r->pr_observed);
		if (r->pr_after[0])
			printf("  [%s]", r->pr_after);
		putchar('\n');
	}
	count(run, &c);
	printf("%u passed, %u failed, %u skipped", c.rc_pass, c.rc_fail, c.rc_skip);
	if (run->pr_opts->po_linux)
		printf(", %u known Linux differences", c.rc_diff);
	putchar('\n');
}

/* A JSON string: quotes, backslashes and control bytes escaped. */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/** probe_report_json - print the results as one JSON object on stdout. */
void probe_report_json(const struct probe_run *run)
{
	const struct probe_conn *pc = &run->pr_conn;
	struct report_counts c;
	uint32_t i;

	count(run, &c);
	printf("{\"server\":");
	json_str(run->pr_opts->po_server);
	printf(",\"port\":%u", run->pr_opts->po_port);
	if (pc->pc_peer_pdata)
		printf(",\"private_data\":{\"send\":%u,\"receive\":%u,\"flags\":%u}",
		       pc->pc_peer.cp_send_size, pc->pc_peer.cp_recv_size,
		       pc->pc_peer.cp_flags);
	else
		printf(",\"private_data\":null");
	printf(",\"cases\":[");
	for (i = 0; i < run->pr_nresults; i++) {
		const struct probe_result *r = &run->pr_results[i];

		printf("%s{\"case\":", i ? "," : "");
		json_str(r->pr_name);
		printf(",\"expected\":");
		json_str(r->pr_expected);
		printf(",\"observed\":");
		json_str(r->pr_observed);
		printf(",\"after\":");
		json_str(r->pr_after);
		printf(",\"result\":\"%s\"}", probe_result_word(r));
	}
	printf("],\"passed\":%u,\"failed\":%u,\"skipped\":%u,\"linux_differences\":%u}\n",
	       c.rc_pass, c.rc_fail, c.rc_skip, c.rc_diff);
}
