// SPDX-License-Identifier: MIT
/*
 * svc_metrics.c - the Prometheus endpoint: GET /metrics over HTTP, served
 * by libmicrohttpd from a thread of its own, answers with the statistics
 * in the text exposition format (svc_stats_prom.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "svc/svc_internal.h"

struct rpcrdma_svc_metrics {
	struct rpcrdma_svc *mt_svc;
	struct MHD_Daemon *mt_daemon;
};

#define SVC_METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"

static enum MHD_Result svc_metrics_reply(struct MHD_Connection *c, unsigned code,
					 const char *type, char *body, size_t len,
					 enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result svc_metrics_handler(void *cls, struct MHD_Connection *c,
					   const char *url, const char *method,
					   const char *version, const char *upload_data,
					   size_t *upload_data_size, void **req_cls)
{
	static char not_found[] = "only /metrics is served here\n";
	static char bad_method[] = "only GET and HEAD are served here\n";
	struct rpcrdma_svc_metrics *mt = cls;
	char *body = NULL;
	size_t len = 0;
	FILE *m;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return svc_metrics_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", bad_method,
					 sizeof(bad_method) - 1, MHD_RESPMEM_PERSISTENT);
	if (strcmp(url, "/metrics"))
		return svc_metrics_reply(c, MHD_HTTP_NOT_FOUND, "text/plain", not_found,
					 sizeof(not_found) - 1, MHD_RESPMEM_PERSISTENT);
	m = open_memstream(&body, &len);
	if (!m)
		return MHD_NO;
	if (rpcrdma_svc_stats_write(mt->mt_svc, RPCRDMA_SVC_STATS_PROMETHEUS, m)) {
		fclose(m);
		free(body);
		return MHD_NO;
	}
	fclose(m);
	return svc_metrics_reply(c, MHD_HTTP_OK, SVC_METRICS_TYPE, body, len,
				 MHD_RESPMEM_MUST_FREE);
}

int rpcrdma_svc_metrics_parse(const char *spec, struct sockaddr_storage *sa)
{
	char host[64];
	const char *colon, *h = spec;
	size_t hlen;
	unsigned long port;
	char *end;

	memset(sa, 0, sizeof(*sa));
	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');

		if (!rb || rb[1] != ':')
			return -EINVAL;
		h = spec + 1;
		hlen = (size_t)(rb - h);
		colon = rb + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon)
			return -EINVAL;
		hlen = (size_t)(colon - spec);
	}
	if (hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || !colon[1] || port == 0 || port > 65535)
		return -EINVAL;
	if (!hlen || !strcmp(host, "*")) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons((uint16_t)port);
	} else if (inet_pton(AF_INET, host, &((struct sockaddr_in *)sa)->sin_addr) == 1) {
		sa->ss_family = AF_INET;
		((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
	} else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)sa)->sin6_addr) == 1) {
		sa->ss_family = AF_INET6;
		((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
	} else {
		return -EINVAL;
	}
	return 0;
}

int rpcrdma_svc_metrics_start(struct rpcrdma_svc *svc, const char *addr,
			      struct rpcrdma_svc_metrics **out)
{
	struct rpcrdma_svc_metrics *mt;
	struct sockaddr_storage sa;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
	uint16_t port;
	int rc;

	rc = rpcrdma_svc_metrics_parse(addr, &sa);
	if (rc)
		return rc;
	mt = calloc(1, sizeof(*mt));
	if (!mt)
		return -ENOMEM;
	mt->mt_svc = svc;
	if (sa.ss_family == AF_INET6) {
		flags |= MHD_USE_IPv6;
		if (IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&sa)->sin6_addr))
			flags |= MHD_USE_DUAL_STACK;
		port = ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
	} else {
		port = ntohs(((struct sockaddr_in *)&sa)->sin_port);
	}
	errno = 0;
	mt->mt_daemon = MHD_start_daemon(flags, port, NULL, NULL, svc_metrics_handler, mt,
					 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
					 MHD_OPTION_CONNECTION_LIMIT, 16u,
					 MHD_OPTION_CONNECTION_TIMEOUT, 10u,
					 MHD_OPTION_END);
	if (!mt->mt_daemon) {
		rc = errno ? -errno : -EADDRINUSE;
		free(mt);
		return rc;
	}
	*out = mt;
	return 0;
}

void rpcrdma_svc_metrics_stop(struct rpcrdma_svc_metrics *mt)
{
	if (!mt)
		return;
	MHD_stop_daemon(mt->mt_daemon);
	free(mt);
}
