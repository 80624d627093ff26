// SPDX-License-Identifier: MIT
/*
 * rpcrdma-probe - a conformance prober for RPC-over-RDMA Version 1
 * servers (see rpcrdma-probe(8) and docs/probe.md).
 *
 * Exit status: 0 every case passed, 1 some case failed, 2 usage error or
 * no connection to the server.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#define EXIT_FAILED 1
#define EXIT_USAGE 2

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [--port N] [--source ADDR] [--export PATH] [--mount-port N]\n"
		"       [--json] [--timeout-ms N] [--linux] [--verbose] SERVER\n"
		"       %s --list\n"
		"Send a catalogue of crafted RPC-over-RDMA v1 transport headers to SERVER\n"
		"and check each answer against RFC 8166.\n"
		"  -p, --port N         RPC-over-RDMA port (default 20049)\n"
		"  -s, --source ADDR    bind this local address (RDMA and MOUNT)\n"
		"  -e, --export PATH    MOUNT PATH for the cases that need a directory\n"
		"  -m, --mount-port N   MOUNT v3 TCP port (default 20048)\n"
		"  -j, --json           print JSON instead of a table\n"
		"  -t, --timeout-ms N   silence that counts as a drop (default 1000)\n"
		"  -L, --linux          the server is Linux nfsd: its known differences\n"
		"                       are reported as DIFF, not as failures\n"
		"  -v, --verbose        progress on stderr\n"
		"  -l, --list           print the catalogue and exit\n"
		"  -h, --help           show this help\n"
		"Exit status: 0 all cases pass, 1 some case fails, 2 usage or connection error.\n",
		prog, prog);
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || end == s || *end || *out > max || s[0] == '-')
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "source", required_argument, NULL, 's' },
		{ "export", required_argument, NULL, 'e' },
		{ "mount-port", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "linux", no_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct probe_opts opts = {
		.po_port = RPCRDMA_NFS_PORT,
		.po_mount_port = 20048,
		.po_timeout_ms = 1000,
	};
	static struct probe_run run;
	unsigned long v;
	int c, rc, failed;

	while ((c = getopt_long(argc, argv, "p:s:e:m:jt:Lvlh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
		case 'm':
			if (parse_uint(optarg, 65535, &v) || !v) {
				fprintf(stderr, "%s: bad port '%s'\n", argv[0], optarg);
				return EXIT_USAGE;
			}
			if (c == 'p')
				opts.po_port = (uint16_t)v;
			else
				opts.po_mount_port = (uint16_t)v;
			break;
		case 's':
			opts.po_source = optarg;
			break;
		case 'e':
			opts.po_export = optarg;
			break;
		case 'j':
			opts.po_json = true;
			break;
		case 't':
			if (parse_uint(optarg, 600000, &v) || !v) {
				fprintf(stderr, "%s: bad timeout '%s'\n", argv[0], optarg);
				return EXIT_USAGE;
			}
			opts.po_timeout_ms = (unsigned int)v;
			break;
		case 'L':
			opts.po_linux = true;
			break;
		case 'v':
			opts.po_verbose = true;
			break;
		case 'l':
			probe_list();
			return 0;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr, argv[0]);
		return EXIT_USAGE;
	}
	opts.po_server = argv[optind];
	run.pr_opts = &opts;

	if (opts.po_export) {
		rc = probe_mount_root(&opts, run.pr_fh, &run.pr_fhlen, run.pr_mount_err,
				      sizeof(run.pr_mount_err));
		run.pr_have_fh = rc == 0;
		if (rc)
			fprintf(stderr, "rpcrdma-probe: %s\n", run.pr_mount_err);
	}
	rc = probe_conn_open(&run.pr_conn, &opts);
	if (rc) {
		fprintf(stderr, "rpcrdma-probe: cannot connect to %s port %u%s%s: %s\n",
			opts.po_server, opts.po_port, opts.po_source ? " from " : "",
			opts.po_source ? opts.po_source : "", strerror(-rc));
		return EXIT_USAGE;
	}
	failed = probe_run_all(&run);
	if (opts.po_json)
		probe_report_json(&run);
	else
		probe_report_table(&run);
	probe_conn_close(&run.pr_conn);
	free(run.pr_results);
	if (failed < 0) {
		fprintf(stderr, "rpcrdma-probe: %s\n", strerror(-failed));
		return EXIT_USAGE;
	}
	return failed ? EXIT_FAILED : 0;
}
