/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The CPUs BE must not be given: the kubelet's CPU manager checkpoint, LSE bindings. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "exclusive.h"
#include "suppress.h"

static cpu_set_t set(const char *list)
{
	cpu_set_t s;

	assert_int_equal(cpuset_parse(list, &s), 0);
	return s;
}

static const char *text(const cpu_set_t *s)
{
	static char buf[CPUSET_TEXT_MAX];

	assert_true(cpuset_format(s, buf, sizeof(buf)) >= 0);
	return buf;
}

static int parse(const char *json, struct cpu_manager_state *s, char *err, size_t errlen)
{
	return cpu_manager_state_parse(json, strlen(json), s, err, errlen);
}

/* As kubelets write it: entries by pod UID, then container name. */
static void test_static(void **state)
{
	const char *doc = "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,5-7\","
			  "\"entries\":{\"0f1e2d3c-aaaa-bbbb-cccc-000000000001\":{\"app\":\"1-2\","
			  "\"sidecar\":\"3\"},\"0f1e2d3c-aaaa-bbbb-cccc-000000000002\":{\"db\":\"4\"}},"
			  "\"checksum\":3136232391}";
	cpu_set_t online = set("0-7"), out;
	struct cpu_manager_state s;
	char err[256];

	(void)state;
	assert_int_equal(parse(doc, &s, err, sizeof(err)), 0);
	assert_true(s.is_static);
	assert_string_equal(text(&s.shared), "0,5-7");
	assert_string_equal(text(&s.exclusive), "1-4");
	cpu_manager_exclusive(&s, &online, &out);
	assert_string_equal(text(&out), "1-4");
	/* a CPU outside the shared pool is no one's to share, whatever the entries say */
	assert_int_equal(parse("{\"policyName\":\"static\",\"defaultCpuSet\":\"0-5\",\"entries\":{},"
			       "\"checksum\":1}", &s, err, sizeof(err)), 0);
	cpu_manager_exclusive(&s, &online, &out);
	assert_string_equal(text(&out), "6-7");
	/* only online CPUs count */
	online = set("0-6");
	cpu_manager_exclusive(&s, &online, &out);
	assert_string_equal(text(&out), "6");
}

/* Before kubelet 1.18: entries by container id; and a static policy with none. */
static void test_static_v1(void **state)
{
	cpu_set_t online = set("0-3"), out;
	struct cpu_manager_state s;
	char err[256];

	(void)state;
	assert_int_equal(parse("{\"policyName\":\"static\",\"defaultCpuSet\":\"0-1,3\","
			       "\"entries\":{\"4f8c1a\":\"2\"},\"checksum\":7}", &s, err, sizeof(err)), 0);
	cpu_manager_exclusive(&s, &online, &out);
	assert_string_equal(text(&out), "2");
	assert_int_equal(parse("{\"policyName\":\"static\",\"defaultCpuSet\":\"0-3\",\"checksum\":7}",
			       &s, err, sizeof(err)), 0);
	cpu_manager_exclusive(&s, &online, &out);
	assert_int_equal(CPU_COUNT(&out), 0);
}

/* The default policy keeps nothing from anyone. */
static void test_none(void **state)
{
	cpu_set_t online = set("0-3"), out;
	struct cpu_manager_state s;
	char err[256];

	(void)state;
	assert_int_equal(parse("{\"policyName\":\"none\",\"defaultCpuSet\":\"\",\"checksum\":1353318690}",
			       &s, err, sizeof(err)), 0);
	assert_false(s.is_static);
	cpu_manager_exclusive(&s, &online, &out);
	assert_int_equal(CPU_COUNT(&out), 0);
}

/* A checkpoint of another shape is refused with the reason, and parses as nothing. */
static void test_malformed(void **state)
{
	static const struct {
		const char *doc, *why;
	} bad[] = {
		{ "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-", "not JSON" },
		{ "{\"defaultCpuSet\":\"0-3\"}", "no policyName" },
		{ "{\"policyName\":7}", "no policyName" },
		{ "{\"policyName\":\"static\"}", "without a defaultCpuSet" },
		{ "{\"policyName\":\"static\",\"defaultCpuSet\":\"three\"}", "without a defaultCpuSet" },
		{ "{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":[]}", "not an object" },
		{ "{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":{\"u\":{\"c\":\"x\"}}}",
		  "not a CPU list" },
		{ "{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":{\"id\":3}}",
		  "not a CPU list" },
	};
	struct cpu_manager_state s;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		err[0] = '\0';
		assert_int_equal(parse(bad[i].doc, &s, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].why))
			fail_msg("%s: \"%s\" lacks \"%s\"", bad[i].doc, err, bad[i].why);
		assert_false(s.is_static);
		assert_int_equal(CPU_COUNT(&s.exclusive), 0);
	}
}

static void test_read(void **state)
{
	char path[] = "/tmp/koord-cpu-manager-XXXXXX", err[256];
	struct cpu_manager_state s;
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":{\"u\":{\"c\":\"1\"}},"
	      "\"checksum\":1}\n", f);
	fclose(f);
	assert_int_equal(cpu_manager_state_read(path, &s, err, sizeof(err)), 0);
	assert_string_equal(text(&s.exclusive), "1");
	/* larger than any checkpoint: refused, not read in part */
	f = fopen(path, "w");
	for (size_t i = 0; i <= CPU_MANAGER_STATE_MAX; i += 8)
		fputs("        ", f);
	fclose(f);
	assert_int_equal(cpu_manager_state_read(path, &s, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, path));
	unlink(path);
	assert_int_equal(cpu_manager_state_read(path, &s, err, sizeof(err)), -ENOENT);
	assert_false(s.is_static);
}

/* An LSE container holds CPUs only once bound: some of the online ones, not all. */
static void test_binding(void **state)
{
	cpu_set_t online = set("0-7"), a = set("2-3"), all = set("0-7"), wider = set("0-15"),
		  none = set(""), off = set("9");

	(void)state;
	assert_true(cpuset_is_binding(&a, &online));
	assert_false(cpuset_is_binding(&all, &online));
	assert_false(cpuset_is_binding(&wider, &online));
	assert_false(cpuset_is_binding(&none, &online));
	assert_false(cpuset_is_binding(&off, &online));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static),
		cmocka_unit_test(test_static_v1),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_binding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
