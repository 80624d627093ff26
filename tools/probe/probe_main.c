// SPDX-License-Identifier: MIT
/*
 * rpcrdma-probe - a conformance prober for RPC-over-RDMA Version 1
 * servers (see rpcrdma-probe(8) and docs/probe.md).
 *
 * Exit status: 0 every case passed, 1 some case failed, 2 usage error or
 * no connection to the server.  In load mode (--connections N [--hold S],
 * probe_load.c): 0 every connection established and its NULL call
 * answered, 1 some refused or failed, 2 usage error or cannot start.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "probe.h"

#define PROG "rpcrdma-probe"
#define EXIT_FAILED 1
#define EXIT_USAGE CLI_EXIT_USAGE

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [--port N] [--source ADDR] [--export PATH] [--mount-port N]\n"
		"       [--json] [--timeout-ms N] [--linux] [--verbose] SERVER\n"
		"       %s --connections N [--hold S] [--parallel P] [--port N]\n"
		"       [--source ADDR] [--timeout-ms N] [--verbose] SERVER\n"
		"       %s --list\n"
		"Send a catalogue of crafted RPC-over-RDMA v1 transport headers to SERVER\n"
		"and check each answer against RFC 8166.\n"
		"  -p, --port N         RPC-over-RDMA port, 1..65535 (default 20049)\n"
		"  -s, --source ADDR    bind this local address (RDMA and MOUNT)\n"
		"  -e, --export PATH    MOUNT PATH for the cases that need a directory\n"
		"  -m, --mount-port N   MOUNT v3 TCP port, 1..65535 (default 20048)\n"
		"  -j, --json           print JSON instead of a table\n"
		"  -t, --timeout-ms N   silence that counts as a drop, 1..600000\n"
		"                       (default 1000)\n"
		"  -L, --linux          the server is Linux nfsd: its known differences\n"
		"                       are reported as DIFF, not as failures\n"
		"  -v, --verbose        progress on stderr\n"
		"  -l, --list           print the catalogue and exit\n"
		"  -h, --help           show this help\n"
		"  -V, --version        print the version and exit\n"
		"Load mode: open N connections (1..%u), one NFSv3 NULL call on each,\n"
		"hold them all S seconds, disconnect, print one JSON object:\n"
		"  -c, --connections N  connections to open (1..%u)\n"
		"  -H, --hold S         seconds to hold them open (0..%u, default 0)\n"
		"  -P, --parallel P     connection attempts under way at a time\n"
		"                       (1..%u, default %u)\n"
		"  -t, --timeout-ms N   per connection: connect and NULL reply (default %u)\n"
		"Exit status: 0 all cases pass, 1 some case fails, 2 usage or connection error;\n"
		"load mode: 0 every connection up and its NULL call answered, 1 some\n"
		"refused or failed (the JSON is still printed), 2 usage error or cannot start.\n",
		prog, prog, prog, PROBE_LOAD_MAX, PROBE_LOAD_MAX, PROBE_HOLD_MAX, PROBE_PARALLEL_MAX,
		PROBE_PARALLEL_DEFAULT, PROBE_LOAD_TIMEOUT_MS);
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
		{ "connections", required_argument, NULL, 'c' },
		{ "hold", required_argument, NULL, 'H' },
		{ "parallel", required_argument, NULL, 'P' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct probe_opts opts = {
		.po_port = RPCRDMA_NFS_PORT,
		.po_mount_port = 20048,
		.po_timeout_ms = 1000,
	};
	static struct probe_run run;
	bool timeout_set = false, hold_set = false, parallel_set = false, list = false;
	unsigned long v;
	char hint[256];
	int c, rc, failed;

	while ((c = getopt_long(argc, argv, "p:s:e:m:jt:Lvlhc:H:P:V", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
		case 'm':
			if (cli_uint(PROG, c == 'p' ? "port" : "mount-port", optarg, 1, 65535,
				     NULL, &v))
				return EXIT_USAGE;
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
			if (cli_uint(PROG, "timeout-ms", optarg, 1, 600000, "ms", &v))
				return EXIT_USAGE;
			opts.po_timeout_ms = (unsigned int)v;
			timeout_set = true;
			break;
		case 'c':
			if (cli_uint(PROG, "connections", optarg, 1, PROBE_LOAD_MAX, NULL, &v))
				return EXIT_USAGE;
			opts.po_connections = (uint32_t)v;
			break;
		case 'H':
			if (cli_uint(PROG, "hold", optarg, 0, PROBE_HOLD_MAX, "seconds", &v))
				return EXIT_USAGE;
			opts.po_hold_s = (uint32_t)v;
			hold_set = true;
			break;
		case 'P':
			if (cli_uint(PROG, "parallel", optarg, 1, PROBE_PARALLEL_MAX, NULL, &v))
				return EXIT_USAGE;
			opts.po_parallel = (uint32_t)v;
			parallel_set = true;
			break;
		case 'L':
			opts.po_linux = true;
			break;
		case 'v':
			opts.po_verbose = true;
			break;
		case 'l':
			list = true;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		case 'V':
			return cli_version(PROG);
		default:
			usage(stderr, argv[0]);
			return EXIT_USAGE;
		}
	}
	if ((hold_set || parallel_set) && !opts.po_connections) {
		fprintf(stderr, "%s: --hold and --parallel need --connections N\n", argv[0]);
		return EXIT_USAGE;
	}
	if (opts.po_connections && (opts.po_export || opts.po_linux || list)) {
		fprintf(stderr, "%s: --export, --linux and --list do not go with --connections\n",
			argv[0]);
		return EXIT_USAGE;
	}
	if (list) {
		probe_list();
		return 0;
	}
	if (optind != argc - 1) {
		if (optind == argc)
			fprintf(stderr, "%s: no SERVER given\n", argv[0]);
		else
			fprintf(stderr, "%s: one SERVER only ('%s' is extra)\n", argv[0],
				argv[optind + 1]);
		usage(stderr, argv[0]);
		return EXIT_USAGE;
	}
	opts.po_server = argv[optind];
	/* Before any packet: a name that does not resolve and a host without
	 * an RDMA device are said as such. */
	if (cli_resolve_host(PROG, opts.po_server) ||
	    (opts.po_source && cli_resolve_host(PROG, opts.po_source)))
		return EXIT_USAGE;
	if (!cli_rdma_devices()) {
		fprintf(stderr, PROG ": cannot connect to %s port %u: %s (%s)\n", opts.po_server,
			opts.po_port, strerror(ENODEV), CLI_NO_RDMA_DEVICE_HINT);
		return EXIT_USAGE;
	}
	if (opts.po_connections) {
		if (!parallel_set)
			opts.po_parallel = PROBE_PARALLEL_DEFAULT;
		if (!timeout_set)
			opts.po_timeout_ms = PROBE_LOAD_TIMEOUT_MS;
		return probe_load_run(&opts);
	}
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
		fprintf(stderr, PROG ": cannot connect to %s port %u%s%s: %s%s\n",
			opts.po_server, opts.po_port, opts.po_source ? " from " : "",
			opts.po_source ? opts.po_source : "", strerror(-rc),
			cli_rdma_hint(rc, opts.po_server, hint, sizeof(hint)));
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
