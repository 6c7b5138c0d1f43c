/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Eviction policy: victim orders, BE CPU satisfaction, memory, /proc/meminfo, rate. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "evict_policy.h"

#define N(a) (sizeof(a) / sizeof(*(a)))
#define KIB 1024ULL

static void assert_order(const struct evict_candidate *v, size_t n, const char *const *want)
{
	size_t i;

	for (i = 0; i < n; i++)
		assert_string_equal(v[i].path, want[i]);
}

static void test_reason_names(void **state)
{
	assert_string_equal(evict_reason_name(EVICT_BE_CPU), "be_cpu_satisfaction");
	assert_string_equal(evict_reason_name(EVICT_MEMORY), "memory");
	assert_string_equal(evict_reason_name(EVICT_CULPRIT), "culprit");
	assert_string_equal(evict_reason_name(EVICT_REASON_NR), "unknown");
	assert_string_equal(evict_reason_name((enum evict_reason)-1), "unknown");
}

static void test_order_memory(void **state)
{
	struct evict_candidate v[] = {
		{ .path = "/be/a", .priority = 5000, .mem_used = 100 },
		{ .path = "/be/b", .priority = 3000, .mem_used = 10 },
		{ .path = "/be/d", .priority = 5000, .mem_used = 300 },
		{ .path = "/be/c", .priority = 5000, .mem_used = 300 },
		/* no metric: last of its priority */
		{ .path = "/be/e", .priority = 3000, .mem_used = 0 },
		{ .path = "/be/f", .priority = 0, .mem_used = 1 },
	};
	static const char *const want[] = { "/be/f", "/be/b", "/be/e", "/be/c", "/be/d", "/be/a" };

	evict_order_memory(v, N(v));
	assert_order(v, N(v), want);
	/* already sorted stays so; empty is fine */
	evict_order_memory(v, N(v));
	assert_order(v, N(v), want);
	evict_order_memory(v, 0);
}

static void test_order_cpu(void **state)
{
	struct evict_candidate v[] = {
		{ .path = "/be/half", .priority = 5000, .cpu_used = 1, .cpu_request = 2 },
		{ .path = "/be/twice", .priority = 5000, .cpu_used = 4, .cpu_request = 2 },
		{ .path = "/be/low", .priority = 4000, .cpu_used = 0.1, .cpu_request = 2 },
		{ .path = "/be/norequest", .priority = 5000, .cpu_used = 0.5 },
		{ .path = "/be/twice2", .priority = 5000, .cpu_used = 2, .cpu_request = 1 },
		{ .path = "/be/idle", .priority = 5000, .cpu_used = 0, .cpu_request = 1 },
		/* more used than requested matters, not more used */
		{ .path = "/be/big", .priority = 5000, .cpu_used = 6, .cpu_request = 8 },
	};
	static const char *const want[] = {
		"/be/low", "/be/norequest", "/be/twice", "/be/twice2", "/be/big", "/be/half",
		"/be/idle",
	};

	evict_order_cpu(v, N(v));
	assert_order(v, N(v), want);
}

static void test_order_stable(void **state)
{
	/* equal in every key, path included: kept in the given order */
	struct evict_candidate v[] = {
		{ .path = "/x", .priority = 1, .mem_used = 5, .cpu_used = 1 },
		{ .path = "/x", .priority = 1, .mem_used = 5, .cpu_used = 2 },
		{ .path = "/a", .priority = 2, .mem_used = 5, .cpu_used = 3 },
		{ .path = "/x", .priority = 1, .mem_used = 5, .cpu_used = 4 },
	};

	evict_order_memory(v, N(v));
	assert_float_equal(v[0].cpu_used, 1, 0);
	assert_float_equal(v[1].cpu_used, 2, 0);
	assert_float_equal(v[2].cpu_used, 4, 0);
	assert_string_equal(v[3].path, "/a");
}

static struct be_thresholds be_cpu(int lower, int upper, int busy)
{
	return (struct be_thresholds){
		.cpu_evict_be_satisfaction_lower_percent = lower,
		.cpu_evict_be_satisfaction_upper_percent = upper,
		.cpu_evict_be_usage_threshold_percent = busy,
	};
}

static void test_be_cpu_trigger(void **state)
{
	struct be_thresholds t = be_cpu(30, 50, 90);
	/* busy (95% of the limit), starved (limit 20% of the request) */
	struct be_cpu_sample v[] = {
		{ 1.9, 2, 10 }, { 1.9, 2, 10 }, { 1.9, 2, 10 },
	};

	/* 10 x (0.5 - 0.2) */
	assert_float_equal(be_cpu_release(&t, v, 3, 1, 9), 3, 1e-9);
	assert_float_equal(be_cpu_release(&t, v, 1, 1, 3), 3, 1e-9);
	/* the last sample asks for less than the average: the smaller */
	v[2] = (struct be_cpu_sample){ 2.4, 2.5, 10 };
	assert_float_equal(be_cpu_release(&t, v, 3, 1, 9), 2.5, 1e-9);
	/* ... and the other way round */
	v[0] = v[1] = (struct be_cpu_sample){ 2.4, 2.5, 10 };
	v[2] = (struct be_cpu_sample){ 1.9, 2, 10 };
	/* average satisfaction 7/30: 10 x (0.5 - 7/30) */
	assert_float_equal(be_cpu_release(&t, v, 3, 1, 9), 8.0 / 3, 1e-9);
}

static void test_be_cpu_boundaries(void **state)
{
	/* exact binary fractions: usage/limit = 0.75, limit/request = 0.25 */
	struct be_thresholds t = be_cpu(25, 50, 75);
	struct be_cpu_sample v[] = { { 3, 4, 16 } };

	assert_float_equal(be_cpu_release(&t, v, 1, 1, 1), 16 * 0.25, 1e-9);
	/* a hair less busy, or a hair better served: nothing */
	v[0].usage = 2.99;
	assert_float_equal(be_cpu_release(&t, v, 1, 1, 1), 0, 0);
	v[0] = (struct be_cpu_sample){ 3.01, 4.01, 16 };
	assert_float_equal(be_cpu_release(&t, v, 1, 1, 1), 0, 0);
	/* the usage threshold unset is 90 */
	t = be_cpu(25, 50, -1);
	v[0] = (struct be_cpu_sample){ 3.5, 4, 16 };
	assert_float_equal(be_cpu_release(&t, v, 1, 1, 1), 0, 0);
	v[0].usage = 3.6;
	assert_float_equal(be_cpu_release(&t, v, 1, 1, 1), 4, 1e-9);
}

static void test_be_cpu_no_trigger(void **state)
{
	struct be_thresholds t = be_cpu(30, 50, 90);
	struct be_cpu_sample idle[] = { { 1, 2, 10 } };		/* uses half its limit */
	struct be_cpu_sample served[] = { { 1.9, 2, 5 } };	/* limit is 40% of request */
	struct be_cpu_sample noreq[] = { { 1.9, 2, 0 } };
	struct be_cpu_sample nolimit[] = { { 1.9, 0, 10 } };
	struct be_cpu_sample spike[] = { { 1, 2, 10 }, { 1, 2, 10 }, { 1.9, 2, 10 } };
	struct be_cpu_sample past[] = { { 1.9, 2, 10 }, { 1.9, 2, 10 }, { 1, 2, 10 } };

	assert_float_equal(be_cpu_release(&t, idle, 1, 1, 1), 0, 0);
	assert_float_equal(be_cpu_release(&t, served, 1, 1, 1), 0, 0);
	assert_float_equal(be_cpu_release(&t, noreq, 1, 1, 1), 0, 0);
	assert_float_equal(be_cpu_release(&t, nolimit, 1, 1, 1), 0, 0);
	/* the last sample alone, or the average alone, is not enough */
	assert_float_equal(be_cpu_release(&t, spike, 3, 1, 3), 0, 0);
	assert_float_equal(be_cpu_release(&t, past, 3, 1, 3), 0, 0);
	assert_float_equal(be_cpu_release(&t, idle, 0, 1, 1), 0, 0);
}

static void test_be_cpu_unset_and_samples(void **state)
{
	struct be_cpu_sample v[] = { { 1.9, 2, 10 }, { 1.9, 2, 10 }, { 1.9, 2, 10 } };
	struct be_thresholds t = be_cpu(-1, 50, 90);

	assert_float_equal(be_cpu_release(&t, v, 3, 1, 3), 0, 0);
	t = be_cpu(30, -1, 90);
	assert_float_equal(be_cpu_release(&t, v, 3, 1, 3), 0, 0);
	/* samples must cover a third of the window: 3 x 1 s of 9 s is, of 10 s is not */
	t = be_cpu(30, 50, 90);
	assert_float_equal(be_cpu_release(&t, v, 3, 1, 9), 3, 1e-9);
	assert_float_equal(be_cpu_release(&t, v, 3, 1, 10), 0, 0);
	assert_float_equal(be_cpu_release(&t, v, 2, 1, 9), 0, 0);
	assert_float_equal(be_cpu_release(&t, v, 2, 2, 9), 3, 1e-9);
}

static void test_memory_release(void **state)
{
	struct be_thresholds t = { .memory_evict_threshold_percent = 70,
				   .memory_evict_lower_percent = -1 };
	unsigned long long total = 1000 * KIB, big = ULLONG_MAX / 2;

	/* 70% used: release down to 68% */
	assert_int_equal(memory_release(&t, total, 300 * KIB), 20 * KIB);
	assert_int_equal(memory_release(&t, total, 100 * KIB), 220 * KIB);
	/* 69.9%: nothing */
	assert_int_equal(memory_release(&t, total, 301 * KIB), 0);
	/* an explicit lower */
	t.memory_evict_lower_percent = 50;
	assert_int_equal(memory_release(&t, total, 300 * KIB), 200 * KIB);
	assert_int_equal(memory_release(&t, total, 0), 500 * KIB);
	/* nonsense input */
	assert_int_equal(memory_release(&t, total, 2 * total), 0);
	assert_int_equal(memory_release(&t, 0, 0), 0);
	/* huge sizes do not overflow */
	t.memory_evict_lower_percent = -1;
	assert_int_equal(memory_release(&t, big, 0), big - (big / 100 * 68 + big % 100 * 68 / 100));
	/* a threshold of 1 has a lower of 0, not -1 */
	t.memory_evict_threshold_percent = 1;
	assert_int_equal(memory_release(&t, total, 0), total);
}

static const char MEMINFO[] =
	"MemTotal:       16318440 kB\n"
	"MemFree:         1234567 kB\n"
	"MemAvailable:    8159220 kB\n"
	"Buffers:          123456 kB\n"
	"HugePages_Total:       0\n";

static void test_meminfo_good(void **state)
{
	unsigned long long total, avail;

	assert_int_equal(meminfo_parse(MEMINFO, &total, &avail), 0);
	assert_int_equal(total, 16318440 * KIB);
	assert_int_equal(avail, 8159220 * KIB);
	/* any order, no final newline, tabs */
	assert_int_equal(meminfo_parse("MemAvailable:\t2 kB\nMemTotal: 4 kB", &total, &avail), 0);
	assert_int_equal(total, 4 * KIB);
	assert_int_equal(avail, 2 * KIB);
	/* the largest value that fits */
	assert_int_equal(meminfo_parse("MemTotal: 18014398509481983 kB\nMemAvailable: 0 kB\n",
				       &total, &avail), 0);
	assert_int_equal(total, 18014398509481983ULL * KIB);
	assert_int_equal(avail, 0);
}

static void test_meminfo_bad(void **state)
{
	static const char *const bad[] = {
		"",
		"MemTotal:       16318440 kB\n",			/* no MemAvailable */
		"MemFree: 1 kB\nMemAvailable: 1 kB\n",		/* no MemTotal */
		"MemTotal: kB\nMemAvailable: 1 kB\n",
		"MemTotal: abc kB\nMemAvailable: 1 kB\n",
		"MemTotal: -5 kB\nMemAvailable: 1 kB\n",
		"MemTotal: 5 MB\nMemAvailable: 1 kB\n",
		"MemTotal: 5kBx\nMemAvailable: 1 kB\n",
		"MemTotal: 99999999999999999999 kB\nMemAvailable: 1 kB\n",	/* > 2^64 */
		"MemTotal: 18014398509481984 kB\nMemAvailable: 1 kB\n",	/* x 1024 > 2^64 */
		"MemTotalX: 5 kB\nMemAvailable: 1 kB\n",			/* not the field */
		"XMemTotal: 5 kB\nMemAvailable: 1 kB\n",
		"MemTotal 5 kB\nMemAvailable: 1 kB\n",
	};
	unsigned long long total = 7, avail = 7;
	size_t i;

	for (i = 0; i < N(bad); i++) {
		assert_int_equal(meminfo_parse(bad[i], &total, &avail), -EINVAL);
		/* untouched on error */
		assert_int_equal(total, 7);
		assert_int_equal(avail, 7);
	}
}

static struct koord_config rate_cfg(int max, double cool)
{
	struct koord_config c;

	memset(&c, 0, sizeof(c));
	c.eviction.max_per_minute = max;
	c.eviction.cool_down_s = cool;
	return c;
}

static void test_rate(void **state)
{
	struct koord_config c = rate_cfg(2, 20);
	struct evict_rate r = { 0 };

	assert_true(evict_rate_allows(&r, &c, 0));
	evict_rate_note(&r, 100);
	/* cool-down: not before 20 s */
	assert_false(evict_rate_allows(&r, &c, 100));
	assert_false(evict_rate_allows(&r, &c, 119.9));
	assert_true(evict_rate_allows(&r, &c, 120));
	evict_rate_note(&r, 120);
	/* two in the last minute: the cap */
	assert_false(evict_rate_allows(&r, &c, 140));
	assert_false(evict_rate_allows(&r, &c, 159.9));
	/* the first is a minute old */
	assert_true(evict_rate_allows(&r, &c, 160));
	/* a clock stepped back counts as recent */
	assert_false(evict_rate_allows(&r, &c, 50));
	/* no cap at all allows nothing */
	c = rate_cfg(0, 0);
	assert_false(evict_rate_allows(&r, &c, 1000));
}

static void test_rate_ring(void **state)
{
	struct koord_config c = rate_cfg(EVICT_RATE_MAX, 0);
	static struct evict_rate r;
	int i;

	/* as many as the ring holds within a minute: the cap */
	for (i = 0; i < EVICT_RATE_MAX; i++) {
		assert_true(evict_rate_allows(&r, &c, i * 0.05));
		evict_rate_note(&r, i * 0.05);
	}
	assert_false(evict_rate_allows(&r, &c, EVICT_RATE_MAX * 0.05));
	/* the first leaves the minute at 60 s */
	assert_true(evict_rate_allows(&r, &c, 60));
	/* past the wrap, the newest is still the one the cool-down looks at */
	for (i = 0; i < 10; i++)
		evict_rate_note(&r, 100 + i);
	assert_int_equal(r.n, EVICT_RATE_MAX);
	c = rate_cfg(EVICT_RATE_MAX, 5);
	assert_false(evict_rate_allows(&r, &c, 112));
	assert_true(evict_rate_allows(&r, &c, 114));
	c = rate_cfg(10, 5);
	assert_false(evict_rate_allows(&r, &c, 114));
	c = rate_cfg(11, 5);
	assert_true(evict_rate_allows(&r, &c, 114));
}

/*
 * The limiter outlives a restart: saved in the state dir, loaded by the next
 * run (a new monotonic clock origin) with the same ages. It once started
 * empty at every restart: a crash loop evicted at each start.
 */
static void test_rate_persisted(void **state)
{
	struct koord_config c = rate_cfg(2, 20);
	char dir[] = "/tmp/koord-rate-XXXXXX", path[64];
	struct evict_rate r = { 0 }, back = { 0 };
	int dfd, fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	/* nothing saved yet: an empty limiter */
	evict_rate_note(&back, 1);
	assert_int_equal(evict_rate_load(&back, 5, dfd, "evictions"), 0);
	assert_int_equal(back.n, 0);
	evict_rate_note(&r, 1000);
	evict_rate_note(&r, 1030);
	assert_int_equal(evict_rate_save(&r, 1040, dfd, "evictions"), 0);
	assert_int_equal(faccessat(dfd, "evictions.tmp", F_OK, 0), -1);
	/* the next run's clock starts near 0: the evictions were 10 and 40 s ago */
	assert_int_equal(evict_rate_load(&back, 7, dfd, "evictions"), 0);
	assert_int_equal(back.n, 2);
	assert_true(fabs(back.at[0] - (7 - 40)) < 0.1 && fabs(back.at[1] - (7 - 10)) < 0.1);
	assert_false(evict_rate_allows(&back, &c, 7));		/* cool-down: 10 s of 20 */
	assert_false(evict_rate_allows(&back, &c, 17));		/* two in a minute */
	assert_true(evict_rate_allows(&back, &c, 27.1));
	/* a file that is not times: refused, and the limiter stays empty */
	fd = openat(dfd, "evictions", O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "12.5\nx\n", 7), 7);
	close(fd);
	assert_int_equal(evict_rate_load(&back, 7, dfd, "evictions"), -EINVAL);
	assert_int_equal(back.n, 0);
	snprintf(path, sizeof(path), "%s/evictions", dir);
	unlink(path);
	close(dfd);
	rmdir(dir);
}

/*
 * Eviction fails closed: no pod without fresh kubelet metadata naming it,
 * and none the cluster needs unless the config says so.
 */
static void test_pod_refusal(void **state)
{
	struct cg_identity id = { .qos = KC_BE, .kind = CG_POD, .listed = true,
				  .namespace = "batch" };

	(void)state;
	assert_int_equal(evict_pod_refusal(&id, true, false), EVICT_ALLOWED);
	/* the kubelet down (or never asked), or a pod its list does not name */
	assert_int_equal(evict_pod_refusal(&id, false, false), EVICT_NO_METADATA);
	assert_int_equal(evict_pod_refusal(&id, false, true), EVICT_NO_METADATA);
	id.listed = false;
	assert_int_equal(evict_pod_refusal(&id, true, true), EVICT_NO_METADATA);
	id.listed = true;
	/* system-cluster-critical and above; just below is an ordinary pod */
	id.priority = 2000000000;
	assert_int_equal(evict_pod_refusal(&id, true, false), EVICT_CRITICAL);
	assert_int_equal(evict_pod_refusal(&id, true, true), EVICT_ALLOWED);
	id.priority = 1999999999;
	assert_int_equal(evict_pod_refusal(&id, true, false), EVICT_ALLOWED);
	id.static_pod = true;
	assert_int_equal(evict_pod_refusal(&id, true, false), EVICT_STATIC);
	id.static_pod = false;
	strcpy(id.namespace, "kube-system");	/* kube-proxy is BestEffort on kubeadm */
	assert_int_equal(evict_pod_refusal(&id, true, false), EVICT_KUBE_SYSTEM);
	assert_int_equal(evict_pod_refusal(&id, true, true), EVICT_ALLOWED);
	strcpy(id.namespace, "kube-systemx");
	assert_int_equal(evict_pod_refusal(&id, true, false), EVICT_ALLOWED);
	assert_string_equal(evict_refusal_name(EVICT_NO_METADATA), "no_metadata");
	assert_string_equal(evict_refusal_name(EVICT_KUBE_SYSTEM), "kube_system");
	assert_string_equal(evict_refusal_name(EVICT_REFUSAL_NR), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reason_names),
		cmocka_unit_test(test_order_memory),
		cmocka_unit_test(test_order_cpu),
		cmocka_unit_test(test_order_stable),
		cmocka_unit_test(test_be_cpu_trigger),
		cmocka_unit_test(test_be_cpu_boundaries),
		cmocka_unit_test(test_be_cpu_no_trigger),
		cmocka_unit_test(test_be_cpu_unset_and_samples),
		cmocka_unit_test(test_memory_release),
		cmocka_unit_test(test_meminfo_good),
		cmocka_unit_test(test_meminfo_bad),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_rate_ring),
		cmocka_unit_test(test_rate_persisted),
		cmocka_unit_test(test_pod_refusal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
