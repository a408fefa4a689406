/*
 * test_status.c: the status page's pieces that need no running node: the
 * per-second ring (order, wrap-around, length), the p99 estimate from
 * histogram bucket deltas, and the access rule (loopback peers, basic auth
 * against the admin login, the default login refused).
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <string.h>

#include "config/config.h"
#include "ops/http_access.h"
#include "ops/status_ring.h"
#include "upstream/users.h"
#include "tap.h"

static struct status_ring ring;

static void test_ring(void)
{
	struct status_sample s = { 0 };
	bool ordered = true;

	ok(ring.n == 0, "a new ring holds nothing");
	for (int i = 0; i < 10; i++) {
		s.t = i;
		status_ring_push(&ring, &s);
	}
	is_int(ring.n, 10, "10 pushed: 10 held");
	is_int(status_ring_at(&ring, 0)->t, 0, "oldest first");
	is_int(status_ring_at(&ring, 9)->t, 9, "newest last");
	for (int i = 10; i < STATUS_RING_LEN + 250; i++) {
		s.t = i;
		status_ring_push(&ring, &s);
	}
	is_int(ring.n, STATUS_RING_LEN, "full: the length stays at 900");
	is_int(status_ring_at(&ring, 0)->t, 250, "wrapped: the oldest is the 251st pushed");
	is_int(status_ring_at(&ring, STATUS_RING_LEN - 1)->t, STATUS_RING_LEN + 249, "the newest is the last pushed");
	for (unsigned i = 1; i < ring.n; i++)
		ordered = ordered && status_ring_at(&ring, i)->t == status_ring_at(&ring, i - 1)->t + 1;
	ok(ordered, "every sample follows the one before");
}

static int near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

static void test_quantile(void)
{
	const double le[] = { 1, 2, 4, 8 };
	uint64_t none[5] = { 0 }, one_bucket[5] = { 0, 100, 0, 0, 0 }, spread[5] = { 50, 30, 10, 9, 1 };
	uint64_t inf[5] = { 0, 0, 0, 0, 7 }, first[5] = { 10, 0, 0, 0, 0 };

	ok(isnan(status_quantile(le, 4, none, 0.99)), "nothing counted: no p99 (NAN)");
	/* 100 values in (1, 2]: the 99th is 99 % of the way through */
	ok(near(status_quantile(le, 4, one_bucket, 0.99), 1.99), "one bucket: interpolated inside it (1.99)");
	ok(near(status_quantile(le, 4, one_bucket, 0.5), 1.5), "one bucket: p50 in its middle (1.5)");
	/* 100 values: rank 99 falls in (4, 8] (90 below, 9 in it): 4 + 4 * 9/9 */
	ok(near(status_quantile(le, 4, spread, 0.99), 8.0), "spread: p99 at the top of (4, 8]");
	/* rank 95: 90 below, 5 of 9 in (4, 8] */
	ok(near(status_quantile(le, 4, spread, 0.95), 4.0 + 4.0 * 5.0 / 9.0), "spread: p95 5/9 into (4, 8]");
	ok(near(status_quantile(le, 4, spread, 0.5), 1.0), "spread: p50 at the first bucket's bound");
	ok(near(status_quantile(le, 4, inf, 0.99), 8.0), "all above the last bound: that bound");
	ok(near(status_quantile(le, 4, first, 0.99), 0.99), "first bucket: from 0 up to its bound");
}

static struct sockaddr_in v4(const char *ip)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

static struct sockaddr_in6 v6(const char *ip)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };

	inet_pton(AF_INET6, ip, &a.sin6_addr);
	return a;
}

static void test_loopback(void)
{
	struct sockaddr_in a = v4("127.0.0.1"), b = v4("127.8.9.10"), c = v4("10.251.0.1");
	struct sockaddr_in6 d = v6("::1"), e = v6("::ffff:127.0.0.1"), f = v6("fd00::1"), g = v6("::ffff:10.0.0.1");

	ok(http_peer_is_loopback((struct sockaddr *)&a), "127.0.0.1 is loopback");
	ok(http_peer_is_loopback((struct sockaddr *)&b), "127.8.9.10 is loopback");
	ok(!http_peer_is_loopback((struct sockaddr *)&c), "10.251.0.1 is not");
	ok(http_peer_is_loopback((struct sockaddr *)&d), "::1 is loopback");
	ok(http_peer_is_loopback((struct sockaddr *)&e), "::ffff:127.0.0.1 is loopback");
	ok(!http_peer_is_loopback((struct sockaddr *)&f), "fd00::1 is not");
	ok(!http_peer_is_loopback((struct sockaddr *)&g), "::ffff:10.0.0.1 is not");
	ok(!http_peer_is_loopback(NULL), "no address is not");
}

static void set_admin(const char *user, const char *pw)
{
	snprintf(g_config.admin_user.name, sizeof(g_config.admin_user.name), "%s", user);
	snprintf(g_config.admin_user.password, sizeof(g_config.admin_user.password), "%s", pw);
}

static void test_basic_auth(void)
{
	char hash[USERS_HASH_TEXT_LEN + 1];

	set_admin("ops", "s3cret");
	/* base64("ops:s3cret") = b3BzOnMzY3JldA== */
	ok(http_basic_auth_ok("Basic b3BzOnMzY3JldA=="), "the admin login is accepted");
	ok(http_basic_auth_ok("basic   b3BzOnMzY3JldA=="), "the scheme is case-insensitive");
	/* base64("ops:s3cre") */
	ok(!http_basic_auth_ok("Basic b3BzOnMzY3Jl"), "a wrong password is refused");
	/* base64("opz:s3cret") */
	ok(!http_basic_auth_ok("Basic b3B6OnMzY3JldA=="), "a wrong user is refused");
	ok(!http_basic_auth_ok(NULL), "no header is refused");
	ok(!http_basic_auth_ok("Bearer b3BzOnMzY3JldA=="), "another scheme is refused");
	ok(!http_basic_auth_ok("Basic !!!!"), "bad base64 is refused");
	ok(!http_basic_auth_ok("Basic b3Bz"), "no colon is refused");
	users_native_hash_text("s3cret", hash);
	set_admin("ops", hash);
	ok(http_basic_auth_ok("Basic b3BzOnMzY3JldA=="), "a hashed admin password checks the given one");
	/* base64("ops:*...hash") must not work: the hash is not the password */
	set_admin("admin", "admin");
	/* base64("admin:admin") = YWRtaW46YWRtaW4= */
	ok(!http_basic_auth_ok("Basic YWRtaW46YWRtaW4="), "the default admin/admin is refused");
	users_native_hash_text("admin", hash);
	set_admin("admin", hash);
	ok(!http_basic_auth_ok("Basic YWRtaW46YWRtaW4="), "... also when stored as its hash");
}

int main(void)
{
	test_ring();
	test_quantile();
	test_loopback();
	test_basic_auth();
	return done_testing();
}
