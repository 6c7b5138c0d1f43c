/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* BE suppression: the allowance, quota and cpuset steps, CPU lists, topology, choice. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "suppress.h"

/* The fake sysfs trees sit beside this file. */
static const char *data_dir(const char *tree)
{
	static char path[512];
	const char *slash = strrchr(__FILE__, '/');
	int dir = slash ? (int)(slash - __FILE__) : 1;

	snprintf(path, sizeof(path), "%.*s/data/%s", dir, slash ? __FILE__ : ".", tree);
	return path;
}

static struct be_thresholds thresholds(int threshold, int min)
{
	return (struct be_thresholds){
		.cpu_suppress_threshold_percent = threshold,
		.cpu_suppress_min_percent = min,
	};
}

static void test_allowed(void **state)
{
	struct be_thresholds t = thresholds(65, -1);
	struct suppress_input in = {
		.capacity_cores = 10, .node_used = 6, .pods_used = 5,
		.non_be_used = 3, .reserved_cores = 0.5,
	};

	/* system used (1) above the reservation: 6.5 - 3 - 1 */
	assert_float_equal(suppress_be_allowed(&t, &in), 2.5, 1e-9);
	/* system used (0.2) below it: the reservation counts */
	in.node_used = 5.2;
	assert_float_equal(suppress_be_allowed(&t, &in), 3.0, 1e-9);
	/* pods read after the node: never a negative system use */
	in.node_used = 4;
	in.reserved_cores = 0;
	assert_float_equal(suppress_be_allowed(&t, &in), 3.5, 1e-9);
	/* online work over the budget: nothing, never negative */
	in.non_be_used = 8;
	assert_float_equal(suppress_be_allowed(&t, &in), 0, 0);
	/* ... unless the minimum percent keeps some */
	t.cpu_suppress_min_percent = 10;
	assert_float_equal(suppress_be_allowed(&t, &in), 1.0, 1e-9);
	t.cpu_suppress_min_percent = 0;
	assert_float_equal(suppress_be_allowed(&t, &in), 0, 0);
	/* the minimum does not lower a larger allowance */
	in.non_be_used = 3;
	t.cpu_suppress_min_percent = 10;
	assert_float_equal(suppress_be_allowed(&t, &in), 3.5, 1e-9);
	t.cpu_suppress_threshold_percent = 100;
	assert_float_equal(suppress_be_allowed(&t, &in), 7.0, 1e-9);
}

/* 8 cores: ramp-up step 80000 us, dead-band 8000 us. */
static void test_quota(void **state)
{
	/* unlimited to a value is a decrease: at once, whatever the size */
	assert_int_equal(suppress_next_quota(-1, 2.5, 8), 250000);
	assert_int_equal(suppress_next_quota(-1, 7.9, 8), 790000);
	assert_int_equal(suppress_next_quota(-1, 0.5, 64), 50000);
	/* the floor */
	assert_int_equal(suppress_next_quota(-1, 0, 8), BE_MIN_QUOTA_US);
	assert_int_equal(suppress_next_quota(300000, 0.001, 8), BE_MIN_QUOTA_US);
	assert_int_equal(suppress_next_quota(300000, -3, 8), BE_MIN_QUOTA_US);
	assert_int_equal(suppress_next_quota(300000, NAN, 8), BE_MIN_QUOTA_US);
	/* inside the dead-band but going to the floor: written */
	assert_int_equal(suppress_next_quota(5000, 0, 8), BE_MIN_QUOTA_US);
	/* dead-band, both ways, and its edge */
	assert_int_equal(suppress_next_quota(250000, 2.55, 8), 250000);
	assert_int_equal(suppress_next_quota(250000, 2.45, 8), 250000);
	assert_int_equal(suppress_next_quota(250000, 2.579, 8), 250000);
	assert_int_equal(suppress_next_quota(250000, 2.58, 8), 258000);
	assert_int_equal(suppress_next_quota(250000, 2.42, 8), 242000);
	/* decreases at once */
	assert_int_equal(suppress_next_quota(800000, 1, 8), 100000);
	/* increases by at most 10% of capacity a round */
	assert_int_equal(suppress_next_quota(100000, 8, 8), 180000);
	assert_int_equal(suppress_next_quota(180000, 8, 8), 260000);
	assert_int_equal(suppress_next_quota(100000, 1.8, 8), 180000);
	assert_int_equal(suppress_next_quota(100000, 1.7, 8), 170000);
	/* never more than the node */
	assert_int_equal(suppress_next_quota(-1, 100, 8), 800000);
	assert_int_equal(suppress_next_quota(790000, INFINITY, 8), 800000);
}

static void test_cpuset_size(void **state)
{
	/* 16 CPUs: grows by 2 at most */
	assert_int_equal(suppress_next_cpuset_size(16, 3.2, 16), 4);
	assert_int_equal(suppress_next_cpuset_size(4, 10, 16), 6);
	assert_int_equal(suppress_next_cpuset_size(4, 5.5, 16), 6);
	assert_int_equal(suppress_next_cpuset_size(4, 5, 16), 5);
	/* a hair over a whole number is that number */
	assert_int_equal(suppress_next_cpuset_size(16, 4 + 1e-12, 16), 4);
	assert_int_equal(suppress_next_cpuset_size(16, 4.01, 16), 5);
	/* shrinks at once, to the floor of 2 */
	assert_int_equal(suppress_next_cpuset_size(16, 0, 16), 2);
	assert_int_equal(suppress_next_cpuset_size(16, -1, 16), 2);
	assert_int_equal(suppress_next_cpuset_size(16, NAN, 16), 2);
	assert_int_equal(suppress_next_cpuset_size(16, 1.5, 16), 2);
	/* at most the node */
	assert_int_equal(suppress_next_cpuset_size(15, 16, 16), 16);
	assert_int_equal(suppress_next_cpuset_size(16, 100, 16), 16);
	/* 8 CPUs: ceil(0.8) = 1 a round */
	assert_int_equal(suppress_next_cpuset_size(2, 8, 8), 3);
	/* an unknown current size grows from nothing, but keeps the floor */
	assert_int_equal(suppress_next_cpuset_size(0, 8, 16), 2);
	assert_int_equal(suppress_next_cpuset_size(-1, 8, 16), 2);
	/* a 1-CPU node: the floor is the node */
	assert_int_equal(suppress_next_cpuset_size(1, 0, 1), 1);
	assert_int_equal(suppress_next_cpuset_size(1, 5, 1), 1);
	assert_int_equal(suppress_next_cpuset_size(2, 5, 0), 0);
}

static void test_smoother(void **state)
{
	struct smoother s;
	int i;

	smoother_init(&s, 3);
	assert_float_equal(smoother_push(&s, 1), 1, 1e-12);
	assert_float_equal(smoother_push(&s, 2), 1.5, 1e-12);
	assert_float_equal(smoother_push(&s, 3), 2, 1e-12);
	assert_float_equal(smoother_push(&s, 6), 11.0 / 3, 1e-12);
	assert_float_equal(smoother_push(&s, 0), 3, 1e-12);
	smoother_reset(&s);
	assert_float_equal(smoother_push(&s, 5), 5, 1e-12);
	assert_float_equal(smoother_push(&s, 7), 6, 1e-12);

	/* the window is clamped to 1..SMOOTHER_MAX */
	smoother_init(&s, 0);
	assert_int_equal(s.window, 1);
	smoother_push(&s, 1);
	assert_float_equal(smoother_push(&s, 9), 9, 0);
	smoother_init(&s, SMOOTHER_MAX + 100);
	assert_int_equal(s.window, SMOOTHER_MAX);
	for (i = 0; i < SMOOTHER_MAX; i++)
		smoother_push(&s, 1);
	assert_float_equal(smoother_push(&s, 1 + SMOOTHER_MAX), 2, 1e-12);
}

static void assert_list(const cpu_set_t *set, const char *want)
{
	char buf[256];

	assert_int_equal(cpuset_format(set, buf, sizeof(buf)), strlen(want));
	assert_string_equal(buf, want);
}

static void assert_parses(const char *text, const char *want)
{
	cpu_set_t set;

	assert_int_equal(cpuset_parse(text, &set), 0);
	assert_list(&set, want);
}

static void test_cpuset_parse(void **state)
{
	static const char *const bad[] = {
		"a", "1,", ",1", "1-", "1--2", "3-1", "1 2", "-1", "0-3,,5", "1;2",
		"0x1", "1024", "0-1024", "99999999999999999999", "1,\n", "+1", "1-2-3",
	};
	cpu_set_t set;
	size_t i;

	assert_parses("0-3,8,10-11\n", "0-3,8,10-11");
	assert_parses("", "");
	assert_parses(" \n", "");
	assert_parses("5", "5");
	assert_parses("7-7", "7");
	/* adjacent and overlapping pieces merge */
	assert_parses("0-2,3,5,4", "0-5");
	assert_parses("0-4,2-3", "0-4");
	assert_parses("1023", "1023");
	assert_parses("0,2-4,1023 \n", "0,2-4,1023");
	assert_parses("0-1023", "0-1023");

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		CPU_ZERO(&set);
		CPU_SET(0, &set);
		assert_int_equal(cpuset_parse(bad[i], &set), -EINVAL);
		assert_int_equal(CPU_COUNT(&set), 0);
	}
}

static void test_cpuset_format(void **state)
{
	char buf[8];
	cpu_set_t set;

	CPU_ZERO(&set);
	assert_int_equal(cpuset_format(&set, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(cpuset_format(&set, buf, 0), -ENOSPC);
	assert_int_equal(cpuset_parse("0-3,8", &set), 0);
	/* "0-3,8" and its NUL fit in 6 bytes, not in 5 */
	assert_int_equal(cpuset_format(&set, buf, 5), -ENOSPC);
	assert_string_equal(buf, "");
	assert_int_equal(cpuset_format(&set, buf, 6), 5);
	assert_string_equal(buf, "0-3,8");
	/* the last piece is the one that does not fit */
	assert_int_equal(cpuset_parse("0-3,8,10", &set), 0);
	assert_int_equal(cpuset_format(&set, buf, sizeof(buf)), -ENOSPC);
	assert_string_equal(buf, "");
	/*
	 * The longest lists of CPU_SETSIZE CPUs: every other one, and pairs
	 * with a gap ("0-1,3-4,..."). Both fit the actions' CPUSET_TEXT_MAX
	 * and come back as they were; neither fit the 1 KiB they once used.
	 */
	{
		static char big[CPUSET_TEXT_MAX];
		cpu_set_t back;
		int cpu, step, len;

		for (step = 2; step <= 3; step++) {
			CPU_ZERO(&set);
			for (cpu = 0; cpu < CPU_SETSIZE; cpu += step) {
				CPU_SET(cpu, &set);
				if (step == 3 && cpu + 1 < CPU_SETSIZE)
					CPU_SET(cpu + 1, &set);
			}
			len = cpuset_format(&set, big, sizeof(big));
			assert_true(len > 1024);
			assert_true(len + 2 <= CPUSET_TEXT_MAX);	/* with a newline, read back */
			assert_int_equal(cpuset_parse(big, &back), 0);
			assert_true(CPU_EQUAL(&set, &back));
		}
	}
}

/* The reserved and kept-off CPUs leave the BE pool while any CPU stays in it. */
static void test_cpuset_exclude(void **state)
{
	cpu_set_t pool, off;

	cpuset_parse("0-7", &pool);
	cpuset_parse("0-1,9", &off);
	assert_true(cpuset_exclude(&pool, &off));
	assert_list(&pool, "2-7");
	cpuset_parse("8-9", &off);	/* none of the pool's */
	assert_false(cpuset_exclude(&pool, &off));
	assert_list(&pool, "2-7");
	cpuset_parse("0-7", &off);	/* all of it: BE keeps its CPUs */
	assert_false(cpuset_exclude(&pool, &off));
	assert_list(&pool, "2-7");
	CPU_ZERO(&off);
	assert_false(cpuset_exclude(&pool, &off));
	assert_list(&pool, "2-7");
}

static void test_topo_smt(void **state)
{
	static const int pkg[] = { 0, 0, 1, 1, 0, 0, 1, 1 };
	struct cpu_topo t;
	int cpu;

	assert_int_equal(cpu_topo_read(&t, data_dir("topo-8cpu-2pkg-smt")), 0);
	assert_int_equal(t.ncpus, 8);
	assert_int_equal(CPU_COUNT(&t.online), 8);
	for (cpu = 0; cpu < 8; cpu++) {
		assert_int_equal(t.pkg[cpu], pkg[cpu]);
		assert_int_equal(t.node[cpu], pkg[cpu]);	/* one node per package */
		assert_true(t.core[cpu] >= 0);
		/* siblings are N and N + 4 */
		assert_int_equal(t.core[cpu], t.core[cpu ^ 4]);
	}
	/* core_id 0 in both packages, yet two cores */
	assert_int_not_equal(t.core[0], t.core[2]);
	assert_int_not_equal(t.core[1], t.core[3]);
	assert_int_not_equal(t.core[0], t.core[1]);
}

static void test_topo_nosmt(void **state)
{
	struct cpu_topo t;

	assert_int_equal(cpu_topo_read(&t, data_dir("topo-2cpu")), 0);
	assert_int_equal(t.ncpus, 2);
	assert_int_equal(CPU_COUNT(&t.online), 2);
	assert_int_not_equal(t.core[0], t.core[1]);
	assert_int_equal(t.node[0], 0);
	assert_int_equal(t.node[1], 0);
	assert_int_equal(t.pkg[1], 0);
}

static void test_topo_offline(void **state)
{
	struct cpu_topo t;

	/* cpu2 offline; cpu3 online but without topology files */
	assert_int_equal(cpu_topo_read(&t, data_dir("topo-offline")), 0);
	assert_int_equal(t.ncpus, 4);
	assert_false(CPU_ISSET(2, &t.online));
	assert_int_equal(t.core[2], -1);
	assert_int_equal(t.core[0], t.core[1]);
	assert_true(t.core[3] >= 0);
	assert_int_not_equal(t.core[3], t.core[0]);
	assert_int_equal(t.pkg[3], 0);

	assert_int_equal(cpu_topo_read(&t, data_dir("no-such-tree")), -ENOENT);
}

static void test_topo_live(void **state)
{
	struct cpu_topo t;

	assert_int_equal(cpu_topo_read(&t, "/sys/devices/system/cpu"), 0);
	assert_true(t.ncpus >= 1);
	assert_true(CPU_ISSET(0, &t.online));
	assert_true(t.core[0] >= 0);
}

#define SMT	"topo-8cpu-2pkg-smt"	/* siblings N and N + 4; CPUs 0-1,4-5 in package 0 */

static const struct choice {
	const char *tree, *cand;
	int n;
	const char *want;
} choices[] = {
	/* whole cores, one per package in turn */
	{ SMT, "0-7", 2, "0,4" },
	{ SMT, "0-7", 4, "0,2,4,6" },
	{ SMT, "0-7", 6, "0-2,4-6" },
	/* an odd count: a whole core, then the single goes to the other package */
	{ SMT, "0-7", 3, "0,2,4" },
	{ SMT, "0-7", 5, "0-2,4,6" },
	{ SMT, "0-7", 1, "0" },
	{ SMT, "0-7", 8, "0-7" },
	{ SMT, "0-7", 20, "0-7" },
	{ SMT, "0-7", 0, "" },
	{ SMT, "", 4, "" },
	/* a core with a sibling outside the candidates is not whole */
	{ SMT, "0-3,5-7", 2, "1,5" },
	{ SMT, "0-3,5-7", 4, "1-2,5-6" },
	{ SMT, "0-3,5-7", 7, "0-3,5-7" },
	/* no whole core at all: singles, spread */
	{ SMT, "0-3", 2, "0,2" },
	{ SMT, "0-3", 3, "0-2" },
	/* one package only */
	{ SMT, "2-3,6-7", 2, "2,6" },
	/* no SMT */
	{ "topo-2cpu", "0-1", 1, "0" },
	{ "topo-2cpu", "0-1", 2, "0-1" },
	{ "topo-2cpu", "0-1", 5, "0-1" },
	/* CPUs the topology does not know are never chosen */
	{ "topo-2cpu", "1-5", 5, "1" },
	/* cpu2 offline, cpu3 a core of its own */
	{ "topo-offline", "0-3", 4, "0-1,3" },
	{ "topo-offline", "0-3", 1, "0" },
};

static void test_choose(void **state)
{
	const struct choice *x;
	struct cpu_topo t;
	cpu_set_t c, out;
	char buf[64];
	int got;

	for (x = choices; x < choices + sizeof(choices) / sizeof(*choices); x++) {
		assert_int_equal(cpu_topo_read(&t, data_dir(x->tree)), 0);
		assert_int_equal(cpuset_parse(x->cand, &c), 0);
		got = cpuset_choose(&t, &c, x->n, &out);
		assert_int_equal(got, CPU_COUNT(&out));
		assert_int_equal(cpuset_format(&out, buf, sizeof(buf)), strlen(x->want));
		assert_string_equal(buf, x->want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_quota),
		cmocka_unit_test(test_cpuset_size),
		cmocka_unit_test(test_smoother),
		cmocka_unit_test(test_cpuset_parse),
		cmocka_unit_test(test_cpuset_format),
		cmocka_unit_test(test_cpuset_exclude),
		cmocka_unit_test(test_topo_smt),
		cmocka_unit_test(test_topo_nosmt),
		cmocka_unit_test(test_topo_offline),
		cmocka_unit_test(test_topo_live),
		cmocka_unit_test(test_choose),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
