// SPDX-License-Identifier: MIT
/*
 * test_nlm_addr.c - host addresses as the lock manager compares them
 * (src/nlm/nlm_addr.c), over IPv4, IPv4-mapped IPv6 (RFC 4291 2.5.5.2:
 * ::ffff:a.b.c.d) and IPv6: the same address whatever the port; the same
 * machine for the callbacks' per-host shares (one IPv4 address, one IPv6
 * /64, one link-local address, since fe80::/64 is every machine on the
 * link, RFC 4291 2.5.6); a copy without its port, a mapped address copied
 * as plain IPv4; the text forms RFC 5952 gives.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "nlm/nlm_internal.h"

static struct sockaddr_in v4(const char *a, uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };

	assert_int_equal(inet_pton(AF_INET, a, &s.sin_addr), 1);
	return s;
}

static struct sockaddr_in6 v6(const char *a, uint16_t port)
{
	struct sockaddr_in6 s = { .sin6_family = AF_INET6, .sin6_port = htons(port) };

	assert_int_equal(inet_pton(AF_INET6, a, &s.sin6_addr), 1);
	return s;
}

#define SA(x) ((const struct sockaddr *)&(x))

static void test_equal(void **state)
{
	struct sockaddr_in a = v4("192.0.2.1", 1001), b = v4("192.0.2.1", 2002),
			   c = v4("192.0.2.2", 1001);
	struct sockaddr_in6 m = v6("::ffff:192.0.2.1", 3003), x = v6("2001:db8::1", 1),
			    y = v6("2001:db8::1", 2), z = v6("2001:db8::2", 1);

	(void)state;
	assert_true(nlm_addr_equal(SA(a), SA(b)));   /* port ignored */
	assert_false(nlm_addr_equal(SA(a), SA(c)));
	assert_true(nlm_addr_equal(SA(a), SA(m)));   /* mapped = plain */
	assert_true(nlm_addr_equal(SA(m), SA(b)));
	assert_true(nlm_addr_equal(SA(x), SA(y)));
	assert_false(nlm_addr_equal(SA(x), SA(z)));
	assert_false(nlm_addr_equal(SA(a), SA(x)));
}

static void test_host_equal(void **state)
{
	struct sockaddr_in a = v4("192.0.2.1", 1), c = v4("192.0.2.2", 1);
	struct sockaddr_in6 m = v6("::ffff:192.0.2.1", 9),
			    /* one /64: 2001:db8:0:1::/64, two interface ids */
			    p = v6("2001:db8:0:1::10", 1), q = v6("2001:db8:0:1:a:b:c:d", 1),
			    /* the next /64 */
			    r = v6("2001:db8:0:2::10", 1),
			    /* link-local: fe80::/64 for all, so the whole address */
			    l1 = v6("fe80::1", 1), l2 = v6("fe80::2", 1), l1b = v6("fe80::1", 7);

	(void)state;
	assert_true(nlm_host_equal(SA(a), SA(m)));
	assert_false(nlm_host_equal(SA(a), SA(c)));
	assert_true(nlm_host_equal(SA(p), SA(q)));
	assert_false(nlm_host_equal(SA(p), SA(r)));
	assert_false(nlm_host_equal(SA(l1), SA(l2)));
	assert_true(nlm_host_equal(SA(l1), SA(l1b)));
	assert_false(nlm_host_equal(SA(a), SA(p)));
	assert_false(nlm_host_equal(SA(p), SA(a)));
}

static void test_copy_and_str(void **state)
{
	struct sockaddr_in6 m = v6("::ffff:192.0.2.7", 4045), x = v6("2001:db8::a:0:0:1", 4045);
	struct sockaddr_in a = v4("198.51.100.3", 111);
	struct sockaddr_un_like { sa_family_t f; char p[14]; } other = { AF_UNIX, "x" };
	struct sockaddr_storage d;
	char buf[INET6_ADDRSTRLEN];

	(void)state;
	assert_int_equal(nlm_addr_copy(&d, SA(m)), sizeof(struct sockaddr_in));
	assert_int_equal(d.ss_family, AF_INET);
	assert_int_equal(((struct sockaddr_in *)&d)->sin_port, 0);
	assert_int_equal(ntohl(((struct sockaddr_in *)&d)->sin_addr.s_addr), 0xc0000207u);
	assert_int_equal(nlm_addr_copy(&d, SA(x)), sizeof(struct sockaddr_in6));
	assert_int_equal(d.ss_family, AF_INET6);
	assert_int_equal(((struct sockaddr_in6 *)&d)->sin6_port, 0);
	assert_memory_equal(&((struct sockaddr_in6 *)&d)->sin6_addr, &x.sin6_addr, 16);
	assert_int_equal(nlm_addr_copy(&d, SA(other)), 0);

	assert_string_equal(nlm_addr_str(SA(a), buf, sizeof(buf)), "198.51.100.3");
	assert_string_equal(nlm_addr_str(SA(m), buf, sizeof(buf)), "192.0.2.7");
	/* RFC 5952 4.2.3: of two equal runs of zeros, the first becomes "::" */
	assert_string_equal(nlm_addr_str(SA(x), buf, sizeof(buf)), "2001:db8::a:0:0:1");
	assert_string_equal(nlm_addr_str(SA(other), buf, sizeof(buf)), "?");
	assert_string_equal(nlm_addr_str(SA(a), buf, 4), "?"); /* no room */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_host_equal),
		cmocka_unit_test(test_copy_and_str),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
