/* SPDX-License-Identifier: MIT */
/*
 * cli.h - what the command-line tools share (tools/cli/, linked into
 * each of them): range-checked option values whose errors name the option
 * and its range, --version, and the messages for a host name that does
 * not resolve, no RDMA device, and no RDMA route.  Not part of the
 * library: every function prints to stderr (or stdout for --version) in
 * the tool's own name.
 */
#ifndef RPCRDMA_TOOLS_CLI_H
#define RPCRDMA_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>

/* The exit status of a usage error (a bad option, a missing argument). */
#define CLI_EXIT_USAGE 2

/* The words every tool (and rpcrdma-nfsd) adds when there is no RDMA
 * device at all (rdma_cm's and libibverbs' -ENODEV). */
#define CLI_NO_RDMA_DEVICE_HINT                                                       \
	"no RDMA device: see `rdma link show`; "                                       \
	"Soft-RoCE: `rdma link add rxe0 type rxe netdev IFACE`"

/*
 * cli_parse_u64 - @arg as a decimal number into *@out, printing nothing:
 * digits only (no sign, no leading blanks, not empty, nothing after).
 * The parser under cli_uint(), for a tool that words its own message
 * (rpcrdma-nfsd's option table names a configuration file and line).
 * Return: 0, -EINVAL (not digits only), or -ERANGE (above UINT64_MAX);
 * *@out untouched on an error.
 */
int cli_parse_u64(const char *arg, uint64_t *out);

/*
 * cli_uint - the value @arg of option --@opt as a decimal number in
 * @lo..@hi (inclusive) into *@out.  Anything else (empty, a sign, other
 * characters, out of range, too large for unsigned long) is refused with
 * one line on stderr naming the option, the range and the value:
 *   "@prog: --@opt: expected @lo..@hi[ @unit]: @arg"
 * @unit: NULL, or a word such as "seconds" printed after the range.
 * Return: 0, or -EINVAL (after the message; *@out untouched).
 */
int cli_uint(const char *prog, const char *opt, const char *arg, unsigned long lo,
	     unsigned long hi, const char *unit, unsigned long *out);

/*
 * cli_version - print "@prog VERSION" (common/version.h's
 * RPCRDMA_VERSION_STRING, the project's version) and a newline on stdout.
 * Return: 0, the exit status of --version.
 */
int cli_version(const char *prog);

/*
 * cli_resolve_host - check that @host (a name, or a numeric IPv4/IPv6
 * address) resolves to an address for a stream socket (getaddrinfo(3)).
 * When it does not: "@prog: cannot resolve host @host: <gai_strerror>" on
 * stderr.  Return: 0, or the getaddrinfo() error (an EAI_* value, never 0).
 */
int cli_resolve_host(const char *prog, const char *host);

/*
 * cli_rdma_devices - how many RDMA devices this process can use
 * (ibv_get_device_list(3): devices with a verbs interface; librdmacm
 * fails with ENODEV when there are none), loading only the verbs
 * providers the host's devices need first.  Return: the count (0: none,
 * also when the list cannot be read).
 */
int cli_rdma_devices(void);

/*
 * cli_rdma_hint - the words to add after the error @err (a negative
 * errno) of an RPC-over-RDMA connection to @host: for -ENODEV
 * " (" CLI_NO_RDMA_DEVICE_HINT ")"; for -EHOSTUNREACH, -ENETUNREACH and
 * -EADDRNOTAVAIL (rdma_cm's address or route error) that no RDMA device
 * here reaches @host; else "".  Written into @buf (@cap bytes, truncated)
 * when it names @host.  Return: the words, @buf or a static string.
 */
const char *cli_rdma_hint(int err, const char *host, char *buf, size_t cap);

#endif /* RPCRDMA_TOOLS_CLI_H */
