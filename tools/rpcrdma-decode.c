// SPDX-License-Identifier: MIT
/*
 * rpcrdma-decode - decode one received RPC-over-RDMA v1 message and print
 * it as a JSON object (see rpcrdma-decode(8)).
 *
 * Exit status: 0 valid, 1 invalid (the JSON says what to answer), 2 usage
 * or I/O error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpcrdma/wire.h>

#include "cli/cli.h"
#include "common/be.h"

#define EXIT_INVALID 1
#define EXIT_USAGE 2
/* Far more than any inline threshold (RFC 8797 caps it at 256 KiB). */
#define MAX_INPUT (16u << 20)

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [--reply] [--hex] [FILE]\n"
		"Decode one received RPC-over-RDMA v1 message (transport header\n"
		"and inline bytes) from FILE or standard input; print JSON.\n"
		"  -r, --reply  decode as a Requester receiving a reply\n"
		"               (default: a Responder receiving a call)\n"
		"  -x, --hex    input is hex digits; whitespace is ignored\n"
		"  -h, --help   show this help\n"
		"  -V, --version  print the version and exit\n"
		"Exit status: 0 valid, 1 invalid, 2 usage or I/O error.\n",
		prog);
}

/* Read all of @f; 0 or -errno.  *@bufp is malloc'd. */
static int read_all(FILE *f, uint8_t **bufp, size_t *lenp)
{
	size_t cap = 4096, len = 0, n;
	uint8_t *buf = malloc(cap), *nb;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			if (cap >= MAX_INPUT) {
				free(buf);
				return -EFBIG;
			}
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		return -EIO;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

static int hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Convert hex text in place; whitespace ignored.  0 or -EINVAL. */
static int unhex(uint8_t *buf, size_t *lenp)
{
	size_t i, out = 0;
	int hi = -1, v;

	for (i = 0; i < *lenp; i++) {
		if (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' ||
		    buf[i] == '\r' || buf[i] == '\f' || buf[i] == '\v')
			continue;
		v = hex_value(buf[i]);
		if (v < 0)
			return -EINVAL;
		if (hi < 0) {
			hi = v;
		} else {
			buf[out++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	if (hi >= 0)
		return -EINVAL;
	*lenp = out;
	return 0;
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_segment(const struct rpcrdma_segment *seg)
{
	printf("{\"handle\":%" PRIu32 ",\"length\":%" PRIu32
	       ",\"offset\":%" PRIu64 "}",
	       seg->rs_handle, seg->rs_length, seg->rs_offset);
}

static void json_chunk_segs(const struct rpcrdma_hdr *h,
			    const struct rpcrdma_chunk *c)
{
	uint32_t i;

	putchar('[');
	for (i = 0; i < c->rc_nsegs; i++) {
		if (i)
			putchar(',');
		json_segment(&h->rh_segs[c->rc_first + i]);
	}
	putchar(']');
}

/*
 * The RPC header fields the inline body holds, as far as its bytes go:
 * xid and direction (RFC 5531 9), and for a call prog, vers and proc.
 */
static void json_rpc(const uint8_t *body, size_t len)
{
	static const char *const call_field[] = { "prog", "vers", "proc" };
	uint32_t dir, i;

	if (len < 8)
		return;
	dir = load_be32(body + 4);
	if (dir != RPC_DIR_CALL && dir != RPC_DIR_REPLY)
		return;
	printf(",\"rpc\":{\"xid\":%" PRIu32 ",\"direction\":\"%s\"",
	       load_be32(body), dir == RPC_DIR_CALL ? "CALL" : "REPLY");
	/* call body: rpcvers at 8, then prog, vers, proc */
	for (i = 0; dir == RPC_DIR_CALL && i < 3 && 16 + 4 * (size_t)i <= len; i++)
		printf(",\"%s\":%" PRIu32, call_field[i], load_be32(body + 12 + 4 * i));
	putchar('}');
}

static const char *proc_name(uint32_t proc)
{
	switch (proc) {
	case RDMA_MSG:
		return "RDMA_MSG";
	case RDMA_NOMSG:
		return "RDMA_NOMSG";
	default:
		return "RDMA_ERROR";
	}
}

static void print_valid(const struct rpcrdma_hdr *h, const uint8_t *buf)
{
	uint32_t i, j;

	printf("{\"valid\":true,\"xid\":%" PRIu32 ",\"vers\":%" PRIu32
	       ",\"credits\":%" PRIu32 ",\"proc\":\"%s\"",
	       h->rh_xid, h->rh_vers, h->rh_credits, proc_name(h->rh_proc));
	if (h->rh_proc == RDMA_ERROR) {
		printf(",\"error\":\"%s\"",
		       h->rh_err == ERR_VERS ? "ERR_VERS" : "ERR_CHUNK");
		if (h->rh_err == ERR_VERS)
			printf(",\"vers_low\":%" PRIu32 ",\"vers_high\":%" PRIu32,
			       h->rh_vers_low, h->rh_vers_high);
	}
	printf(",\"read_list\":[");
	for (i = 0; i < h->rh_nread; i++) {
		const struct rpcrdma_chunk *c = &h->rh_read[i];

		for (j = 0; j < c->rc_nsegs; j++) {
			const struct rpcrdma_segment *seg = &h->rh_segs[c->rc_first + j];

			if (i || j)
				putchar(',');
			printf("{\"position\":%" PRIu32 ",\"handle\":%" PRIu32
			       ",\"length\":%" PRIu32 ",\"offset\":%" PRIu64 "}",
			       c->rc_position, seg->rs_handle, seg->rs_length,
			       seg->rs_offset);
		}
	}
	printf("],\"write_list\":[");
	for (i = 0; i < h->rh_nwrite; i++) {
		if (i)
			putchar(',');
		json_chunk_segs(h, &h->rh_write[i]);
	}
	printf("],\"reply_chunk\":");
	if (h->rh_has_reply)
		json_chunk_segs(h, &h->rh_reply);
	else
		printf("null");
	printf(",\"header_len\":%" PRIu32 ",\"inline_len\":%" PRIu32,
	       h->rh_hdr_len, h->rh_inline_len);
	if (h->rh_proc == RDMA_MSG)
		json_rpc(buf + h->rh_hdr_len, h->rh_inline_len);
	printf("}\n");
}

static void print_invalid(const struct rpcrdma_wire_err *err)
{
	static const char *const answer[] = {
		[RPCRDMA_ANSWER_DROP] = "DROP",
		[RPCRDMA_ANSWER_ERR_VERS] = "ERR_VERS",
		[RPCRDMA_ANSWER_ERR_CHUNK] = "ERR_CHUNK",
	};

	printf("{\"valid\":false,\"reply\":\"%s\",\"rule\":",
	       answer[err->we_answer]);
	json_string(err->we_rule);
	printf(",\"detail\":");
	json_string(err->we_detail);
	printf("}\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "reply", no_argument, NULL, 'r' },
		{ "hex", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct rpcrdma_hdr hdr;
	struct rpcrdma_wire_err err;
	bool reply = false, hex = false;
	const char *path = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	FILE *f = stdin;
	int c, ret;

	while ((c = getopt_long(argc, argv, "rxhV", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			reply = true;
			break;
		case 'x':
			hex = true;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		case 'V':
			return cli_version("rpcrdma-decode");
		default:
			usage(stderr, argv[0]);
			return EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		usage(stderr, argv[0]);
		return EXIT_USAGE;
	}
	if (optind < argc && strcmp(argv[optind], "-") != 0) {
		path = argv[optind];
		f = fopen(path, "rb");
		if (!f) {
			fprintf(stderr, "%s: %s: %s\n", argv[0], path, strerror(errno));
			return EXIT_USAGE;
		}
	}
	ret = read_all(f, &buf, &len);
	if (f != stdin)
		fclose(f);
	if (ret) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], path ? path : "stdin",
			strerror(-ret));
		return EXIT_USAGE;
	}
	if (hex && unhex(buf, &len)) {
		fprintf(stderr, "%s: input is not an even number of hex digits and whitespace\n",
			argv[0]);
		free(buf);
		return EXIT_USAGE;
	}

	if (reply)
		ret = rpcrdma_wire_decode_reply(buf, len, NULL, &hdr, &err);
	else
		ret = rpcrdma_wire_decode_call(buf, len, NULL, &hdr, &err);
	if (ret)
		print_invalid(&err);
	else
		print_valid(&hdr, buf);
	free(buf);
	if (fflush(stdout) || ferror(stdout))
		return EXIT_USAGE;
	return ret ? EXIT_INVALID : 0;
}
