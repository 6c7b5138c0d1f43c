/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Where each controller is mounted, from mountinfo fixtures. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hierarchies.h"

/* cgroup.controllers of the fixtures' cgroup2 mounts: mount, controllers, ... */
static const char *const fake_v2[] = {
	"/sys/fs/cgroup/unified", "",		/* hybrid: nothing enabled */
	"/sys/fs/cgroup", "cpuset cpu io memory hugetlb pids rdma misc\n",
	"/v2/mem", "memory pids\n",
	"/run/other", "cpu cpuset memory\n",
	"/mnt/my cgroup", "cpu",		/* escaped as \040 */
	NULL,
};

static int fake_controllers(const char *mnt, char *buf, size_t len)
{
	const char *const *p = fake_v2;

	while (*p && strcmp(*p, mnt))
		p += 2;
	if (!*p)
		return -ENOENT;
	snprintf(buf, len, "%s", p[1]);
	return 0;
}

/* This machine: v1 controllers each on their own, cgroup2 with none enabled. */
static const char hybrid[] =
	"30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	"33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
	"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"35 30 0:32 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
	"36 30 0:33 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
	"37 30 0:34 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
	"38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
	"39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

/* Parse @text: it must succeed and set every field as in @want. */
static void expect_hier(const char *text, const struct hierarchies *want)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct hierarchies h;

	assert_non_null(f);
	memset(&h, 0x5a, sizeof(h));	/* everything must be set, nothing left over */
	assert_int_equal(hierarchies_from_mountinfo(f, &h, fake_controllers), 0);
	fclose(f);
	assert_string_equal(h.cpu, want->cpu);
	assert_int_equal(h.cpu_version, want->cpu_version);
	assert_string_equal(h.cpuset, want->cpuset);
	assert_int_equal(h.cpuset_version, want->cpuset_version);
	assert_string_equal(h.freezer, want->freezer);
	assert_string_equal(h.memory, want->memory);
	assert_int_equal(h.memory_version, want->memory_version);
	assert_string_equal(h.unified, want->unified);
}

/* The expected fields as designated initializers; the rest "" and 0. */
#define EXPECT(text, ...) do {							\
	static const struct hierarchies want_ = { __VA_ARGS__ };		\
										\
	expect_hier(text, &want_);						\
} while (0)

static void test_hybrid(void **state)
{
	EXPECT(hybrid,
	       .cpu = "/sys/fs/cgroup/cpu", .cpu_version = 1,
	       .cpuset = "/sys/fs/cgroup/cpuset", .cpuset_version = 1,
	       .freezer = "/sys/fs/cgroup/freezer",
	       .memory = "/sys/fs/cgroup/memory", .memory_version = 1,
	       .unified = "/sys/fs/cgroup/unified");
}

static void test_pure_v2(void **state)
{
	/* no freezer controller on v2: freezing is cgroup.freeze */
	EXPECT("35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - "
	       "cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
	       .cpu = "/sys/fs/cgroup", .cpu_version = 2,
	       .cpuset = "/sys/fs/cgroup", .cpuset_version = 2,
	       .freezer = "/sys/fs/cgroup",
	       .memory = "/sys/fs/cgroup", .memory_version = 2,
	       .unified = "/sys/fs/cgroup");
}

static void test_comounted(void **state)
{
	EXPECT("25 24 0:22 / /sys/fs/cgroup rw - tmpfs tmpfs ro,mode=755\n"
	       "27 25 0:24 / /sys/fs/cgroup/cpuset rw shared:9 - cgroup cgroup rw,cpuset\n"
	       "28 25 0:25 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:10 master:3 - cgroup cgroup "
	       "rw,cpu,cpuacct\n"
	       "30 25 0:27 / /sys/fs/cgroup/freezer,memory rw - cgroup cgroup rw,memory,freezer\n",
	       .cpu = "/sys/fs/cgroup/cpu,cpuacct", .cpu_version = 1,
	       .cpuset = "/sys/fs/cgroup/cpuset", .cpuset_version = 1,
	       .freezer = "/sys/fs/cgroup/freezer,memory",
	       .memory = "/sys/fs/cgroup/freezer,memory", .memory_version = 1);

	/* option order does not matter; "cpuacct" alone is not cpu */
	EXPECT("31 30 0:28 / /acct rw - cgroup cgroup rw,cpuacct\n"
	       "28 25 0:25 / /cg rw - cgroup cgroup rw,cpuacct,cpu,nosuid\n",
	       .cpu = "/cg", .cpu_version = 1);
}

/* The mounts a write may be below: the ones that exist, in controller order. */
static void test_mounts(void **state)
{
	struct hierarchies h = { .cpu = "/sys/fs/cgroup/cpu", .freezer = "/sys/fs/cgroup/unified",
				 .unified = "/sys/fs/cgroup/unified" };
	const char *m[HIERARCHY_MOUNTS];

	assert_int_equal(hierarchies_mounts(&h, m), 3);
	assert_string_equal(m[0], "/sys/fs/cgroup/cpu");
	assert_string_equal(m[1], "/sys/fs/cgroup/unified");
	assert_string_equal(m[2], "/sys/fs/cgroup/unified");
	memset(&h, 0, sizeof(h));
	assert_int_equal(hierarchies_mounts(&h, m), 0);
}

static void test_no_cgroups(void **state)
{
	/* "cpu" and "freezer" in another filesystem's options are nothing */
	EXPECT("22 1 0:21 / /sys rw - sysfs sysfs rw\n"
	       "23 1 8:1 / / rw - ext4 /dev/sda1 rw,cpu,freezer\n", .cpu = "");
	EXPECT("", .cpu = "");
}

static void test_mixed(void **state)
{
	/* v1 keeps what it has; the unified mount gets the rest it lists */
	EXPECT("31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
	       "40 30 0:37 / /v2/mem rw - cgroup2 cgroup2 rw\n",
	       .cpu = "/sys/fs/cgroup/cpu", .cpu_version = 1,
	       .freezer = "/v2/mem",
	       .memory = "/v2/mem", .memory_version = 2,
	       .unified = "/v2/mem");

	/* unreadable cgroup.controllers: the mount is known, no controller on it */
	EXPECT("40 30 0:37 / /v2/gone rw - cgroup2 cgroup2 rw\n",
	       .freezer = "/v2/gone", .unified = "/v2/gone");
}

static void test_which_unified(void **state)
{
	/* the usual mount wins over another cgroup2 mount listed first */
	EXPECT("40 30 0:37 / /run/other rw - cgroup2 cgroup2 rw\n"
	       "41 30 0:37 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
	       "42 30 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
	       .cpu = "/sys/fs/cgroup", .cpu_version = 2,
	       .cpuset = "/sys/fs/cgroup", .cpuset_version = 2,
	       .freezer = "/sys/fs/cgroup",
	       .memory = "/sys/fs/cgroup", .memory_version = 2,
	       .unified = "/sys/fs/cgroup");

	/* without a usual one, the first */
	EXPECT("40 30 0:37 / /run/other rw - cgroup2 cgroup2 rw\n"
	       "41 30 0:37 / /v2/mem rw - cgroup2 cgroup2 rw\n",
	       .cpu = "/run/other", .cpu_version = 2,
	       .cpuset = "/run/other", .cpuset_version = 2,
	       .freezer = "/run/other",
	       .memory = "/run/other", .memory_version = 2,
	       .unified = "/run/other");

	/* the first v1 mount of a controller wins over a later bind of it */
	EXPECT("31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
	       "51 50 0:28 / /container/cpu rw - cgroup cgroup rw,cpu\n",
	       .cpu = "/sys/fs/cgroup/cpu", .cpu_version = 1);
}

static void test_escaped(void **state)
{
	EXPECT("40 30 0:37 / /mnt/my\\040cgroup rw - cgroup2 cgroup2 rw\n"
	       "31 30 0:28 / /a\\011b\\012c rw - cgroup cgroup rw,freezer\n",
	       .cpu = "/mnt/my cgroup", .cpu_version = 2,
	       .freezer = "/a\tb\nc",
	       .unified = "/mnt/my cgroup");
}

static void test_garbage(void **state)
{
	char *longline;

	/* torn and foreign lines around good ones */
	EXPECT("\n"
	       " - cgroup2\n"
	       "36 30 0:33 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n"
	       "40 30 0:37 / /half-a-line rw - cgroup2\n"
	       "\x01\xff - cgroup2 \n"
	       "cgroup cgroup rw,cpu\n"
	       "32 30 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu",
	       .cpu = "/sys/fs/cgroup/cpu", .cpu_version = 1,
	       .freezer = "/sys/fs/cgroup/freezer");

	/* a mount point longer than PATH_MAX is skipped, not cut */
	assert_true(asprintf(&longline, "31 30 0:28 / /%0*d rw - cgroup cgroup rw,cpu\n"
			     "40 30 0:37 / /%0*d rw - cgroup2 cgroup2 rw\n",
			     2 * PATH_MAX, 0, PATH_MAX, 0) > 0);
	EXPECT(longline, .cpu = "");
	free(longline);
}

static void test_read_error(void **state)
{
	struct hierarchies h;
	FILE *f = fopen("/dev/null", "w");	/* reading it fails */

	assert_non_null(f);
	assert_int_equal(hierarchies_from_mountinfo(f, &h, fake_controllers), -EIO);
	assert_string_equal(h.cpu, "");
	fclose(f);
}

static void test_find_live(void **state)
{
	struct hierarchies h;

	assert_int_equal(hierarchies_find(&h), 0);
	/* whatever this machine has, the answer is consistent */
	assert_true(!h.cpu[0] || h.cpu[0] == '/');
	assert_true(h.cpu[0] ? h.cpu_version == 1 || h.cpu_version == 2 : h.cpu_version == 0);
	if (h.cpu_version == 2)
		assert_string_equal(h.cpu, h.unified);
	if (h.unified[0])
		assert_true(h.freezer[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hybrid),
		cmocka_unit_test(test_pure_v2),
		cmocka_unit_test(test_comounted),
		cmocka_unit_test(test_no_cgroups),
		cmocka_unit_test(test_mounts),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_which_unified),
		cmocka_unit_test(test_escaped),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_read_error),
		cmocka_unit_test(test_find_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
