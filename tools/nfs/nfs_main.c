// SPDX-License-Identifier: MIT
/*
 * rpcrdma-nfs - an NFSv3 client over RPC-over-RDMA, as a command-line tool.
 *
 *   rpcrdma-nfs [options] SERVER:/export COMMAND [ARGS]
 *   rpcrdma-nfs [options] nfs://SERVER[:PORT]/export[/path] COMMAND [ARGS]
 *
 * MOUNTs the export over TCP, then runs one command over NFS/RDMA.  get
 * and put move files in rsize/wsize pieces with several calls in flight
 * (up to the credit window).  See rpcrdma-nfs(1).
 *
 * nfs_main.c: options, the command table and dispatch.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "nfs.h"
#include "nfs_spec.h"

bool opt_quiet, opt_stats;
unsigned opt_streams = 8;
unsigned opt_retries;
/* Default: windows over a registered transfer buffer (strongest
 * isolation without a system call per call). */
bool opt_persistent = true;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [options] SERVER:/export COMMAND [ARGS]\n"
		"       " PROG " [options] nfs://SERVER[:PORT]/export[/path][?nfsport=N&mountport=N] COMMAND [ARGS]\n"
		"  (IPv6: [ADDRESS]:/export, nfs://[ADDRESS]/export; with a URL the paths\n"
		"  of COMMAND are taken below its path)\n"
		"commands:\n"
		"  ls [-l] PATH          list a directory (or show a file)\n"
		"  get REMOTE LOCAL      copy a file from the server (LOCAL - : stdout)\n"
		"  put LOCAL REMOTE      copy a file to the server\n"
		"  get -r REMOTE LOCAL   copy a directory tree from the server\n"
		"  put -r LOCAL REMOTE   copy a directory tree to the server\n"
		"  cat PATH              print a file\n"
		"  stat PATH             show attributes\n"
		"  mkdir PATH | rm PATH | rmdir PATH\n"
		"  mv FROM TO            rename\n"
		"  ln -s TARGET LINK     make a symbolic link\n"
		"  ln TARGET LINK        make a hard link\n"
		"  chmod MODE PATH       set the permission bits (octal)\n"
		"  readlink PATH         print a symbolic link's target\n"
		"  df                    file system usage\n"
		"  null                  the NFS NULL procedure (a ping); exit 0 when answered\n"
		"options:\n"
		"  --port N         NFS/RDMA port, 1..65535 (default 20049)\n"
		"  --mount-port N   MOUNT port over TCP, 1..65535 (default: ask rpcbind)\n"
		"  --source ADDR    local address to connect from\n"
		"  --rsize N        READ size in bytes, 1024..16777216 (default 1 MiB,\n"
		"                   capped by the server)\n"
		"  --wsize N        WRITE size in bytes, 1024..16777216 (default 1 MiB,\n"
		"                   capped by the server)\n"
		"  --credits N      most calls in flight, 1..1024 (default 32)\n"
		"  --streams N      parallel READ/WRITE calls for get/put, 1..16 (default 8;\n"
		"                   16 with --nconnect)\n"
		"  --nconnect N     spread the calls over N RDMA connections (1..16, default 1)\n"
		"  --timeout SEC    per call, 1..3600 (default 60; MOUNT's connect and\n"
		"                   call: 10 unless given)\n"
		"  --retries N      reconnect and resend a call up to N times, 0..1000\n"
		"                   (default 0)\n"
		"  --mw             get/put: expose each piece through a type 2 memory window\n"
		"                   bound for its call only (default; per-call registration\n"
		"                   on devices without windows)\n"
		"  --persistent-mr  get/put: keep the buffer registered for remote access\n"
		"                   (no per-call work, weakest isolation)\n"
		"  --per-call-mr    get/put: register each piece for its call (ibv_reg_mr)\n"
		"  --remote-invalidate  with windows, let the server invalidate a call's\n"
		"                   window (Send With Invalidate, RFC 8797); off by default\n"
		"  --quiet          no progress bar\n"
		"  --stats          print the transport's counters at the end (stderr)\n"
		"  --capture FILE   write every RPC-over-RDMA message to FILE (pcap, for\n"
		"                   Wireshark/tshark)\n"
		"  -v, --verbose    log connection events\n"
		"  -V, --version    print the version and exit\n"
		"  -h, --help\n");
}

/* On a usage error: one line, as the usual tools do. */
static int usage_error(void)
{
	fprintf(stderr, "usage: " PROG " [options] SERVER:/export COMMAND [ARGS]\n"
		"Try '" PROG " --help' for more information.\n");
	return EXIT_USAGE;
}

int fail(const char *what, int err)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(-err));
	return 1;
}

/* optarg of --@opt in @lo..@hi into *@out; false after the message
 * naming the option and its range (cli_uint). */
static bool opt_u32(const char *opt, unsigned long lo, unsigned long hi, const char *unit,
		    uint32_t *out)
{
	unsigned long v;

	if (cli_uint(PROG, opt, optarg, lo, hi, unit, &v))
		return false;
	*out = (uint32_t)v;
	return true;
}

/* MOUNT refusals after which a URL's shorter path is tried. */
static bool mnt_refused(int rc)
{
	return rc == -ENOENT || rc == -ENOTDIR || rc == -EACCES || rc == -EPERM ||
	       rc == -EINVAL;
}

/*
 * MOUNT the export named by @sp.  A URL's path may go below the export
 * (nfs://SERVER/export/dir, as libnfs's tools take): its longest leading
 * part that the server mounts is the export (MOUNT answers NOENT, NOTDIR
 * or ACCES for the others), and *@base is the rest ("/" for none), below
 * which the command's paths are taken.  Return: 0 or the first refusal.
 */
static int mount_spec(struct rpcrdma_nfsc_config *cfg, const struct nfs_spec *sp,
		      struct rpcrdma_nfsc **nc, char **base, enum rpcrdma_nfsc_step *step)
{
	char *exp = strdup(sp->ns_path), *slash;
	enum rpcrdma_nfsc_step at;
	int rc, first = 0;

	*base = NULL;
	*step = RPCRDMA_NFSC_STEP_NONE;
	if (!exp)
		return -ENOMEM;
	for (;;) {
		cfg->nf_export = exp;
		rc = rpcrdma_nfsc_mount_step(cfg, nc, &at);
		if (!first) {
			first = rc;
			*step = at;
		}
		if (!rc || !sp->ns_url || !mnt_refused(rc) || !strcmp(exp, "/"))
			break;
		slash = strrchr(exp, '/');
		slash[slash == exp ? 1 : 0] = '\0';
	}
	if (!rc) {
		*base = strdup(sp->ns_path + (strcmp(exp, "/") ? strlen(exp) : 0));
		if (!*base || !**base) {
			free(*base);
			*base = strdup("/");
		}
		if (!*base) {
			rpcrdma_nfsc_umount(*nc);
			rc = -ENOMEM;
		} else if (cfg->nf_verbose && sp->ns_url) {
			fprintf(stderr, PROG ": export %s, paths below %s\n", exp, *base);
		}
	}
	cfg->nf_export = NULL;
	free(exp);
	return rc ? first : 0;
}

/* Argument @i of @cmd (@nargs of them, ls's -l taken off) names a path on
 * the server. */
static bool arg_is_remote(const char *cmd, int nargs, int i)
{
	if (!strcmp(cmd, "put") || !strcmp(cmd, "chmod"))
		return i == 1;
	if (!strcmp(cmd, "ln"))
		return nargs == 3 ? i == 2 : true; /* ln -s TARGET LINK: TARGET is text */
	if (!strcmp(cmd, "mv"))
		return true;
	return i == 0; /* get, cat, ls, stat, mkdir, rm, rmdir, readlink */
}

struct cmd {
	const char *c_name;
	int c_nargs;
};

static const struct cmd cmds[] = {
	{ "ls", -1 }, { "get", 2 }, { "put", 2 }, { "cat", 1 }, { "stat", 1 },
	{ "mkdir", 1 }, { "rm", 1 }, { "rmdir", 1 }, { "mv", 2 }, { "ln", 3 },
	{ "readlink", 1 }, { "df", 0 }, { "chmod", 2 }, { "null", 0 },
};

/* The message of a failed mount of @spec: which step failed, with a hint
 * where a refusal has a usual cause. */
static void mount_failed(const char *spec, const struct rpcrdma_nfsc_config *cfg, int rc,
			 enum rpcrdma_nfsc_step step)
{
	unsigned port = cfg->nf_port ? cfg->nf_port : RPCRDMA_NFS_PORT;
	char hint[256];

	switch (step) {
	case RPCRDMA_NFSC_STEP_MOUNT:
		fprintf(stderr, PROG ": %s: mount failed: MOUNT: %s%s\n", spec, strerror(-rc),
			!cfg->nf_mount_port && rc == -ECONNREFUSED ?
				" (MOUNT port asked of the server's rpcbind: is it running, and "
				"rpcrdma-nfsd started with --rpcbind? Else give --mount-port 20048)" : "");
		break;
	case RPCRDMA_NFSC_STEP_CONNECT:
		fprintf(stderr, PROG ": %s: mount failed: RPC-over-RDMA connection to port %u: %s%s\n",
			spec, port, strerror(-rc),
			rc == -ECONNREFUSED ? " (MOUNT answered: is the NFS/RDMA server on "
					      "another port? --port N)" :
			cli_rdma_hint(rc, cfg->nf_server, hint, sizeof(hint)));
		break;
	case RPCRDMA_NFSC_STEP_FSINFO:
		fprintf(stderr, PROG ": %s: mount failed: FSINFO of the export: %s\n", spec,
			strerror(-rc));
		break;
	default:
		fprintf(stderr, PROG ": %s: mount failed: %s\n", spec, strerror(-rc));
		break;
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "mount-port", required_argument, NULL, 'm' },
		{ "source", required_argument, NULL, 's' },
		{ "rsize", required_argument, NULL, 'r' },
		{ "wsize", required_argument, NULL, 'w' },
		{ "credits", required_argument, NULL, 'c' },
		{ "streams", required_argument, NULL, 'n' },
		{ "nconnect", required_argument, NULL, 'N' },
		{ "timeout", required_argument, NULL, 't' },
		{ "retries", required_argument, NULL, 'R' },
		{ "persistent-mr", no_argument, NULL, 'P' },
		{ "mw", no_argument, NULL, 'W' },
		{ "per-call-mr", no_argument, NULL, 'C' },
		{ "remote-invalidate", no_argument, NULL, 'I' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "stats", no_argument, NULL, 'S' },
		{ "capture", required_argument, NULL, 'K' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct rpcrdma_nfsc_config cfg = { .nf_log = stderr };
	enum rpcrdma_nfsc_step step;
	struct rpcrdma_nfsc *nc;
	struct rpcrdma_capture *capture = NULL;
	const char *cmd, *spec, *capture_path = NULL;
	char **args, *base = NULL, *rel[3] = { NULL, NULL, NULL }, err[160];
	struct nfs_spec sp;
	uint32_t v, nconnect = 1;
	int c, nargs, rc, i;
	bool lng = false, recursive = false, streams_set = false, port_set = false, mport_set = false;
	const struct cmd *cd = NULL;

	while ((c = getopt_long(argc, argv, "+vhqV", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!opt_u32("port", 1, 65535, NULL, &v))
				return EXIT_USAGE;
			cfg.nf_port = (uint16_t)v;
			port_set = true;
			break;
		case 'm':
			if (!opt_u32("mount-port", 1, 65535, NULL, &v))
				return EXIT_USAGE;
			cfg.nf_mount_port = (uint16_t)v;
			mport_set = true;
			break;
		case 's':
			cfg.nf_source = optarg;
			break;
		case 'r':
			if (!opt_u32("rsize", 1024, 1u << 24, "bytes", &cfg.nf_rsize))
				return EXIT_USAGE;
			break;
		case 'w':
			if (!opt_u32("wsize", 1024, 1u << 24, "bytes", &cfg.nf_wsize))
				return EXIT_USAGE;
			break;
		case 'c':
			if (!opt_u32("credits", 1, 1024, NULL, &cfg.nf_credits))
				return EXIT_USAGE;
			break;
		case 'n':
			streams_set = true;
			if (!opt_u32("streams", 1, MAX_STREAMS, NULL, &opt_streams))
				return EXIT_USAGE;
			break;
		case 't':
			if (!opt_u32("timeout", 1, 3600, "seconds", &v))
				return EXIT_USAGE;
			cfg.nf_timeout_ms = v * 1000;
			break;
		case 'R':
			if (!opt_u32("retries", 0, 1000, NULL, &cfg.nf_retries))
				return EXIT_USAGE;
			opt_retries = cfg.nf_retries;
			break;
		case 'P':
			opt_persistent = true;
			cfg.nf_reg = RPCRDMA_CLNT_REG_PERSISTENT;
			break;
		case 'W':
			opt_persistent = true;
			cfg.nf_reg = RPCRDMA_CLNT_REG_WINDOWS;
			break;
		case 'C':
			opt_persistent = false;
			cfg.nf_reg = RPCRDMA_CLNT_REG_PER_CALL;
			break;
		case 'I':
			cfg.nf_remote_invalidate = true;
			break;
		case 'N':
			if (!opt_u32("nconnect", 1, RPCRDMA_NFSC_MAX_CONNECT, NULL, &nconnect))
				return EXIT_USAGE;
			cfg.nf_nconnect = nconnect;
			break;
		case 'q':
			opt_quiet = true;
			break;
		case 'S':
			opt_stats = true;
			break;
		case 'K':
			capture_path = optarg;
			break;
		case 'v':
			cfg.nf_verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			return cli_version(PROG);
		default:
			return usage_error();
		}
	}
	if (argc - optind < 2)
		return usage_error();
	spec = argv[optind];
	cmd = argv[optind + 1];
	args = argv + optind + 2;
	nargs = argc - optind - 2;
	for (i = 0; i < (int)(sizeof(cmds) / sizeof(cmds[0])); i++)
		if (!strcmp(cmds[i].c_name, cmd))
			cd = &cmds[i];
	if (!cd) {
		fprintf(stderr, PROG ": unknown command '%s'\n", cmd);
		return usage_error();
	}
	if (!strcmp(cmd, "ls")) {
		if (nargs > 0 && !strcmp(args[0], "-l")) {
			lng = true;
			args++;
			nargs--;
		}
		if (nargs > 1)
			goto bad_args;
	} else if (!strcmp(cmd, "get") || !strcmp(cmd, "put")) {
		if (nargs > 0 && !strcmp(args[0], "-r")) {
			recursive = true;
			args++;
			nargs--;
		}
		if (nargs != 2)
			goto bad_args;
	} else if (!strcmp(cmd, "ln")) {
		if (!(nargs == 3 && !strcmp(args[0], "-s")) && nargs != 2) {
			fprintf(stderr, PROG ": ln: usage: ln [-s] TARGET LINK\n");
			return EXIT_USAGE;
		}
	} else if (nargs != cd->c_nargs) {
		goto bad_args;
	}
	rc = nfs_spec_parse(spec, &sp, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": '%s': %s\n", spec, rc == -EINVAL ? err : strerror(-rc));
		return rc == -EINVAL ? EXIT_USAGE : 1;
	}
	if ((sp.ns_port && port_set && sp.ns_port != cfg.nf_port) ||
	    (sp.ns_mount_port && mport_set && sp.ns_mount_port != cfg.nf_mount_port)) {
		fprintf(stderr, PROG ": '%s': the URL's port and --%s disagree\n", spec,
			sp.ns_port && port_set && sp.ns_port != cfg.nf_port ? "port" :
									      "mount-port");
		nfs_spec_free(&sp);
		return EXIT_USAGE;
	}
	if (sp.ns_port)
		cfg.nf_port = sp.ns_port;
	if (sp.ns_mount_port)
		cfg.nf_mount_port = sp.ns_mount_port;
	if (nconnect > 1 && !streams_set)
		opt_streams = MAX_STREAMS;
	if (cfg.nf_credits && opt_streams > cfg.nf_credits * nconnect)
		opt_streams = cfg.nf_credits * nconnect;
	cfg.nf_server = sp.ns_host;
	/* Before any packet: a name that does not resolve, and a host
	 * without an RDMA device, are said as such (not as MOUNT's "No
	 * route to host", nor a bare "No such device" after MOUNT). */
	if (cli_resolve_host(PROG, sp.ns_host) ||
	    (cfg.nf_source && cli_resolve_host(PROG, cfg.nf_source))) {
		nfs_spec_free(&sp);
		return 1;
	}
	if (!cli_rdma_devices()) {
		fprintf(stderr, PROG ": %s: cannot mount over RDMA: %s (%s)\n", spec,
			strerror(ENODEV), CLI_NO_RDMA_DEVICE_HINT);
		nfs_spec_free(&sp);
		return 1;
	}
	if (capture_path) {
		struct rpcrdma_capture_config ccfg = { .cc_path = capture_path };

		rc = rpcrdma_capture_open(&ccfg, &capture);
		if (rc) {
			fprintf(stderr, PROG ": --capture %s: %s\n", capture_path, strerror(-rc));
			nfs_spec_free(&sp);
			return 1;
		}
		cfg.nf_capture = capture;
	}
	rc = mount_spec(&cfg, &sp, &nc, &base, &step);
	if (rc) {
		mount_failed(spec, &cfg, rc, step);
		rpcrdma_capture_close(capture, NULL);
		nfs_spec_free(&sp);
		return 1;
	}
	/* The server's paths of the command, below a URL's base. */
	for (i = 0; strcmp(base, "/") && i < nargs && i < 3; i++) {
		if (!arg_is_remote(cmd, nargs, i))
			continue;
		rel[i] = nfs_spec_join(base, args[i]);
		if (!rel[i]) {
			rc = fail(args[i], -ENOMEM);
			goto out;
		}
		args[i] = rel[i];
	}
	if (!strcmp(cmd, "ls"))
		rc = cmd_ls(nc, nargs ? args[0] : base, lng);
	else if (!strcmp(cmd, "get") && recursive)
		rc = cmd_get_tree(nc, args[0], args[1]);
	else if (!strcmp(cmd, "get"))
		rc = cmd_get(nc, args[0], args[1], false);
	else if (!strcmp(cmd, "cat"))
		rc = cmd_get(nc, args[0], "-", true);
	else if (!strcmp(cmd, "put") && recursive)
		rc = cmd_put_tree(nc, args[0], args[1]);
	else if (!strcmp(cmd, "put"))
		rc = cmd_put(nc, args[0], args[1]);
	else if (!strcmp(cmd, "stat"))
		rc = cmd_stat(nc, args[0]);
	else if (!strcmp(cmd, "mkdir") || !strcmp(cmd, "rm") || !strcmp(cmd, "rmdir"))
		rc = cmd_dirop(nc, cmd, args[0]);
	else if (!strcmp(cmd, "mv"))
		rc = cmd_mv(nc, args[0], args[1]);
	else if (!strcmp(cmd, "ln") && nargs == 3)
		rc = cmd_ln(nc, args[1], args[2]);
	else if (!strcmp(cmd, "ln"))
		rc = cmd_hardlink(nc, args[0], args[1]);
	else if (!strcmp(cmd, "chmod"))
		rc = cmd_chmod(nc, args[0], args[1]);
	else if (!strcmp(cmd, "readlink"))
		rc = cmd_readlink(nc, args[0]);
	else if (!strcmp(cmd, "null"))
		rc = cmd_null(nc);
	else
		rc = cmd_df(nc, spec);
	if (opt_stats)
		print_stats(nc);
out:
	rpcrdma_nfsc_umount(nc);
	if (capture) {
		struct rpcrdma_capture_stats cst;

		rpcrdma_capture_close(capture, &cst); /* after the client: nothing records */
		if (cst.cs_drops || cst.cs_write_errors)
			fprintf(stderr, PROG ": capture %s: %llu frames written, %llu dropped, %llu write errors\n",
				capture_path, (unsigned long long)cst.cs_frames,
				(unsigned long long)cst.cs_drops,
				(unsigned long long)cst.cs_write_errors);
	}
	for (i = 0; i < 3; i++)
		free(rel[i]);
	free(base);
	nfs_spec_free(&sp);
	return rc;

bad_args:
	fprintf(stderr, PROG ": %s: wrong number of arguments\n", cmd);
	return usage_error();
}
