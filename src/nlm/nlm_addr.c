// SPDX-License-Identifier: MIT
/*
 * nlm_addr.c - host addresses as the lock manager compares them: the IP
 * address alone (a client's calls and its lock manager's callbacks use
 * different ports), IPv4-mapped IPv6 equal to IPv4.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "nlm_internal.h"

/* the IPv4 address inside @sa (plain or mapped), or false */
static bool addr_v4(const struct sockaddr *sa, struct in_addr *out)
{
	if (sa->sa_family == AF_INET) {
		*out = ((const struct sockaddr_in *)sa)->sin_addr;
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			memcpy(out, &a->s6_addr[12], 4);
			return true;
		}
	}
	return false;
}

bool nlm_addr_equal(const struct sockaddr *a, const struct sockaddr *b)
{
	struct in_addr x, y;

	if (addr_v4(a, &x) && addr_v4(b, &y))
		return x.s_addr == y.s_addr;
	if (a->sa_family == AF_INET6 && b->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
	return false;
}

bool nlm_host_equal(const struct sockaddr *a, const struct sockaddr *b)
{
	const struct in6_addr *x, *y;
	struct in_addr v, w;

	if (addr_v4(a, &v) && addr_v4(b, &w))
		return v.s_addr == w.s_addr;
	if (a->sa_family != AF_INET6 || b->sa_family != AF_INET6)
		return false;
	x = &((const struct sockaddr_in6 *)a)->sin6_addr;
	y = &((const struct sockaddr_in6 *)b)->sin6_addr;
	/* a /64 is one machine; fe80::/64 is every machine on the link */
	if (IN6_IS_ADDR_LINKLOCAL(x) || IN6_IS_ADDR_LINKLOCAL(y))
		return memcmp(x, y, 16) == 0;
	return memcmp(x, y, 8) == 0;
}

socklen_t nlm_addr_copy(struct sockaddr_storage *dst, const struct sockaddr *sa)
{
	struct in_addr v4;

	memset(dst, 0, sizeof(*dst));
	/* mapped addresses become plain IPv4: callbacks then use IPv4 */
	if (addr_v4(sa, &v4)) {
		struct sockaddr_in *s = (struct sockaddr_in *)dst;

		s->sin_family = AF_INET;
		s->sin_addr = v4;
		return sizeof(*s);
	}
	if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)dst;

		*s = *(const struct sockaddr_in6 *)sa;
		s->sin6_port = 0;
		return sizeof(*s);
	}
	return 0;
}

const char *nlm_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	struct in_addr v4;

	if (addr_v4(sa, &v4))
		return inet_ntop(AF_INET, &v4, buf, (socklen_t)len) ? buf : "?";
	if (sa->sa_family == AF_INET6)
		return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr,
				 buf, (socklen_t)len) ? buf : "?";
	return "?";
}
