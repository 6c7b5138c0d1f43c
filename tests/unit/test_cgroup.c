/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding the cpu hierarchy in mountinfo, and walking cgroup trees. The trees
 * are plain directories under a temporary dir: walking them is the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <linux/magic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "cgroup.h"

#define UID	"6f5b3b1e-2f4c-4c1e-9a7e-0d3c2b1a0f9e"
#define CID	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define YARN	"container_e01_1700000000000_0001_01_000002"

/* ---- mountinfo ---- */

/* cgroup.controllers of the fixtures' cgroup2 mounts. */
static const struct {
	const char *mnt;
	const char *controllers;
} fake_v2[] = {
	{ "/sys/fs/cgroup/unified", "" },			/* hybrid: nothing enabled */
	{ "/sys/fs/cgroup", "cpuset cpu io memory hugetlb pids rdma misc\n" },
	{ "/v2/nocpu", "cpuset io memory pids\n" },
	{ "/v2/cpuacct-ish", "cpuacct cpusets\n" },
	{ "/mnt/cg\\x", "cpu\n" },				/* escaped as \134 */
	{ "/mnt/my cgroup", "memory cpu" },			/* escaped as \040 */
};

static char last_asked[PATH_MAX];

static int fake_controllers(const char *mnt, char *buf, size_t len)
{
	size_t i;

	snprintf(last_asked, sizeof(last_asked), "%s", mnt);
	for (i = 0; i < sizeof(fake_v2) / sizeof(fake_v2[0]); i++) {
		if (!strcmp(mnt, fake_v2[i].mnt)) {
			snprintf(buf, len, "%s", fake_v2[i].controllers);
			return 0;
		}
	}
	return -ENOENT;
}

static int from_text(const char *text, struct cpu_hierarchy *h)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int r;

	assert_non_null(f);
	memset(h, 0, sizeof(*h));
	last_asked[0] = '\0';
	r = cpu_hierarchy_from_mountinfo(f, h, fake_controllers);
	fclose(f);
	return r;
}

/* This machine: v1 controllers each on their own, cgroup2 with none enabled. */
static const char hybrid[] =
	"30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"31 30 0:28 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	"32 30 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
	"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static void test_mi_hybrid(void **state)
{
	struct cpu_hierarchy h;

	assert_int_equal(from_text(hybrid, &h), 0);
	assert_string_equal(h.root, "/sys/fs/cgroup/cpu");
	assert_int_equal(h.version, 1);
	/* the unified mount was asked, and declined */
	assert_string_equal(last_asked, "/sys/fs/cgroup/unified");
}

static void test_mi_comounted(void **state)
{
	struct cpu_hierarchy h;

	assert_int_equal(from_text(
		"25 24 0:22 / /sys/fs/cgroup rw - tmpfs tmpfs ro,mode=755\n"
		"27 25 0:24 / /sys/fs/cgroup/cpuset rw shared:9 - cgroup cgroup rw,cpuset\n"
		"28 25 0:25 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:10 master:3 - cgroup cgroup "
		"rw,cpu,cpuacct\n"
		"29 25 0:26 / /sys/fs/cgroup/unified rw shared:11 - cgroup2 cgroup2 rw,nsdelegate\n",
		&h), 0);
	assert_string_equal(h.root, "/sys/fs/cgroup/cpu,cpuacct");
	assert_int_equal(h.version, 1);

	/* the option list order does not matter */
	assert_int_equal(from_text(
		"28 25 0:25 / /cg rw - cgroup cgroup rw,cpuacct,cpu,nosuid\n", &h), 0);
	assert_string_equal(h.root, "/cg");
}

static void test_mi_pure_v2(void **state)
{
	struct cpu_hierarchy h;

	assert_int_equal(from_text(
		"35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - "
		"cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n", &h), 0);
	assert_string_equal(h.root, "/sys/fs/cgroup");
	assert_int_equal(h.version, 2);
}

static void test_mi_prefers_v2(void **state)
{
	struct cpu_hierarchy h;

	/* a v1 cpu mount listed first still loses to a v2 one with cpu */
	assert_int_equal(from_text(
		"32 30 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
		"35 24 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", &h), 0);
	assert_string_equal(h.root, "/sys/fs/cgroup");
	assert_int_equal(h.version, 2);
}

static void test_mi_no_cpu(void **state)
{
	struct cpu_hierarchy h;

	/* v2 without cpu and no v1 */
	assert_int_equal(from_text(
		"35 24 0:30 / /v2/nocpu rw - cgroup2 cgroup2 rw\n", &h), -ENOENT);
	/* "cpuset", "cpuacct" and "cpusets" are not "cpu" */
	assert_int_equal(from_text(
		"33 30 0:30 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
		"31 30 0:28 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n"
		"35 24 0:31 / /v2/cpuacct-ish rw - cgroup2 cgroup2 rw\n", &h), -ENOENT);
	/* a v2 mount whose controllers cannot be read */
	assert_int_equal(from_text(
		"35 24 0:30 / /v2/gone rw - cgroup2 cgroup2 rw\n", &h), -ENOENT);
	/* "cpu" in the mount options or the source is not the controller */
	assert_int_equal(from_text(
		"33 30 0:30 / /x rw,cpu - cgroup cpu rw,memory\n"
		"34 30 0:30 / /y rw - tmpfs tmpfs rw,cpu\n", &h), -ENOENT);
	assert_int_equal(from_text("", &h), -ENOENT);
	/* nothing was written on failure */
	assert_string_equal(h.root, "");
}

static void test_mi_escaped(void **state)
{
	struct cpu_hierarchy h;

	assert_int_equal(from_text(
		"40 30 0:37 / /mnt/my\\040cgroup rw - cgroup2 cgroup2 rw\n", &h), 0);
	assert_string_equal(h.root, "/mnt/my cgroup");
	assert_string_equal(last_asked, "/mnt/my cgroup");

	assert_int_equal(from_text(
		"40 30 0:37 / /mnt/cg\\134x rw - cgroup2 cgroup2 rw\n", &h), 0);
	assert_string_equal(h.root, "/mnt/cg\\x");

	assert_int_equal(from_text(
		"31 30 0:28 / /a\\011b\\012c rw - cgroup cgroup rw,cpu\n", &h), 0);
	assert_string_equal(h.root, "/a\tb\nc");

	/* a backslash not followed by three octal digits stays */
	assert_int_equal(from_text(
		"31 30 0:28 / /a\\8b\\04 rw - cgroup cgroup rw,cpu\n", &h), 0);
	assert_string_equal(h.root, "/a\\8b\\04");
}

static void test_mi_malformed(void **state)
{
	struct cpu_hierarchy h;
	char *longline;
	size_t n = 3 * PATH_MAX;

	/* broken lines are skipped, the good one is found */
	assert_int_equal(from_text(
		"\n"
		"garbage\n"
		"1 2 3 4\n"
		"31 30 0:28 / /nodash rw cgroup cgroup rw,cpu\n"
		"31 30 0:28 / /nofs rw -\n"
		"31 30 0:28 / /nosource rw - cgroup\n"
		"31 30 0:28 / /noopts rw - cgroup cgroup\n"
		"32 30 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu", &h), 0);
	assert_string_equal(h.root, "/sys/fs/cgroup/cpu");

	/* a mount point longer than PATH_MAX is skipped, not cut */
	longline = malloc(n + 128);
	assert_non_null(longline);
	strcpy(longline, "31 30 0:28 / /");
	memset(longline + strlen(longline), 'a', n);
	strcpy(longline + 14 + n, " rw - cgroup cgroup rw,cpu\n");
	assert_int_equal(from_text(longline, &h), -ENOENT);
	free(longline);
}

static int statfs_version(const char *dir)
{
	struct statfs sfs;

	if (statfs(dir, &sfs))
		return 0;
	if (sfs.f_type == CGROUP2_SUPER_MAGIC)
		return 2;
	return sfs.f_type == CGROUP_SUPER_MAGIC ? 1 : 0;
}

/* ---- fixture trees ---- */

struct fixture {
	char root[256];	/* short, so that root + a relative path always fits */
	struct container_table t;
};

/* @rel below the fixture's root, in @buf of PATH_MAX. */
static char *at(const struct fixture *fx, const char *rel, char *buf)
{
	snprintf(buf, PATH_MAX, "%s%s", fx->root, rel);
	return buf;
}

static void xmkdir(struct fixture *fx, const char *rel)
{
	char path[PATH_MAX];

	assert_int_equal(mkdir(at(fx, rel, path), 0755), 0);
}

static void xtouch(struct fixture *fx, const char *rel)
{
	char path[PATH_MAX];
	int fd;

	fd = open(at(fx, rel, path), O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
}

static unsigned long long ino_of(struct fixture *fx, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	assert_int_equal(lstat(at(fx, rel, path), &st), 0);
	return st.st_ino;
}

static const struct container *find_path(const struct container_table *t, const char *path)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].path, path))
			return &t->v[i];
	return NULL;
}

/* The entry for @rel exists, its id is the inode, and the index finds it. */
static const struct container *expect_dir(struct fixture *fx, const char *rel)
{
	const struct container *c = find_path(&fx->t, rel);

	assert_non_null(c);
	assert_int_equal(c->id, ino_of(fx, strcmp(rel, "/") ? rel : ""));
	assert_ptr_equal(container_table_get(&fx->t, c->id), c);
	return c;
}

static void rm_rf(const char *root);

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	/* A dir we could not list (mode 000, not root): open it up and recurse. */
	if (flag == FTW_DNR && ftw->level > 0 && !chmod(path, 0700)) {
		rm_rf(path);
		return 0;
	}
	return remove(path) && errno != ENOENT ? -1 : 0;
}

static void rm_rf(const char *root)
{
	chmod(root, 0700);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int setup_tree(void **state)
{
	const char *tmp = getenv("TMPDIR");
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->root, sizeof(fx->root), "%s/koord-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(fx->root)) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown_tree(void **state)
{
	struct fixture *fx = *state;

	container_table_free(&fx->t);
	rm_rf(fx->root);
	free(fx);
	return 0;
}

static void test_scan_layout(void **state)
{
	struct fixture *fx = *state;
	const struct container *c;
	size_t skipped = 99;

	xmkdir(fx, "/kubepods");
	xmkdir(fx, "/kubepods/burstable");
	xmkdir(fx, "/kubepods/burstable/pod" UID);
	xmkdir(fx, "/kubepods/burstable/pod" UID "/" CID);
	xmkdir(fx, "/kubepods/besteffort");
	xmkdir(fx, "/kubepods/besteffort/hadoop-yarn");
	xmkdir(fx, "/kubepods/besteffort/hadoop-yarn/" YARN);
	xmkdir(fx, "/system.slice");
	/* files are not cgroups */
	xtouch(fx, "/cgroup.procs");
	xtouch(fx, "/kubepods/cpu.shares");

	assert_int_equal(container_table_scan(&fx->t, fx->root, NULL, &skipped), 0);
	assert_int_equal(skipped, 0);
	assert_int_equal(fx->t.n, 9);

	c = expect_dir(fx, "/");
	assert_int_equal(c->ident.qos, KC_SYSTEM);
	assert_ptr_equal(c, &fx->t.v[0]);

	c = expect_dir(fx, "/kubepods");
	assert_int_equal(c->ident.kind, CG_QOS_ROOT);

	c = expect_dir(fx, "/kubepods/burstable/pod" UID);
	assert_int_equal(c->ident.kind, CG_POD);
	assert_int_equal(c->ident.qos, KC_LS);

	c = expect_dir(fx, "/kubepods/burstable/pod" UID "/" CID);
	assert_int_equal(c->ident.kind, CG_CONTAINER);
	assert_int_equal(c->ident.qos, KC_LS);
	assert_string_equal(c->ident.pod_uid, UID);
	assert_string_equal(c->ident.container_id, CID);

	c = expect_dir(fx, "/kubepods/besteffort/hadoop-yarn/" YARN);
	assert_int_equal(c->ident.kind, CG_YARN);
	assert_int_equal(c->ident.qos, KC_BE);

	expect_dir(fx, "/kubepods/burstable");
	expect_dir(fx, "/kubepods/besteffort");
	expect_dir(fx, "/kubepods/besteffort/hadoop-yarn");
	expect_dir(fx, "/system.slice");
	assert_null(find_path(&fx->t, "/cgroup.procs"));

	/* ids that are not there */
	assert_null(container_table_get(&fx->t, 0));
	assert_null(container_table_get(&fx->t, ~0ULL));
}

static void test_scan_rules(void **state)
{
	struct fixture *fx = *state;
	struct class_rules rules = { 0 };
	const struct container *c;

	xmkdir(fx, "/system.slice");
	xmkdir(fx, "/system.slice/nginx.service");
	xmkdir(fx, "/kubepods");
	xmkdir(fx, "/kubepods/besteffort");
	assert_int_equal(class_rules_add(&rules, "/system.slice/nginx*=LSR", NULL, 0), 0);
	assert_int_equal(class_rules_add(&rules, "/kubepods/*=LS", NULL, 0), 0);

	assert_int_equal(container_table_scan(&fx->t, fx->root, &rules, NULL), 0);
	c = expect_dir(fx, "/system.slice/nginx.service");
	assert_int_equal(c->ident.qos, KC_LSR);
	c = expect_dir(fx, "/system.slice");
	assert_int_equal(c->ident.qos, KC_SYSTEM);
	c = expect_dir(fx, "/kubepods/besteffort");
	assert_int_equal(c->ident.qos, KC_LS);
	assert_int_equal(c->ident.kind, CG_QOS_ROOT);
	class_rules_free(&rules);
}

/*
 * A check this machine cannot make: said on the output, and under CI=true
 * (root, a cgroup machine) a failure rather than a skip.
 */
static void skip_loudly(const char *why)
{
	print_message("SKIP: %s\n", why);
	if (getenv("CI") && !strcmp(getenv("CI"), "true"))
		fail_msg("under CI this must run: %s", why);
	skip();
}

/* Exit codes of the unprivileged check, so the parent can tell what failed. */
enum { LOCKED_OK, LOCKED_SCAN, LOCKED_SKIPPED, LOCKED_MISSING, LOCKED_LEAKED, LOCKED_CANNOT };

/* Scan with a 000 dir in the tree; run where permissions are enforced. */
static int scan_locked(const char *root)
{
	struct container_table t = { 0 };
	size_t skipped = 0;
	int r = LOCKED_OK;

	if (container_table_scan(&t, root, NULL, &skipped))
		return LOCKED_SCAN;
	/* recorded (its id is known) but not listed */
	if (skipped != 1)
		r = LOCKED_SKIPPED;
	else if (!find_path(&t, "/locked") || !find_path(&t, "/open/child"))
		r = LOCKED_MISSING;
	else if (find_path(&t, "/locked/inner"))
		r = LOCKED_LEAKED;
	container_table_free(&t);
	return r;
}

static void test_scan_unreadable(void **state)
{
	struct fixture *fx = *state;
	char locked[PATH_MAX];
	size_t skipped = 99;
	int status;
	pid_t pid;

	xmkdir(fx, "/open");
	xmkdir(fx, "/open/child");
	xmkdir(fx, "/locked");
	xmkdir(fx, "/locked/inner");
	at(fx, "/locked", locked);
	assert_int_equal(chmod(locked, 0), 0);
	assert_int_equal(chmod(fx->root, 0755), 0);

	if (geteuid() != 0) {
		assert_int_equal(scan_locked(fx->root), LOCKED_OK);
		return;
	}

	/*
	 * Root reads through mode 000 (CAP_DAC_OVERRIDE): the walk sees
	 * everything. The EACCES path is then checked as "nobody".
	 */
	assert_int_equal(container_table_scan(&fx->t, fx->root, NULL, &skipped), 0);
	assert_int_equal(skipped, 0);
	expect_dir(fx, "/locked");
	expect_dir(fx, "/locked/inner");

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* also when $TMPDIR is not reachable for nobody */
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534) ||
		    access(fx->root, R_OK | X_OK))
			_exit(LOCKED_CANNOT);
		_exit(scan_locked(fx->root));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	/* Only when no unprivileged user can reach the fixture. */
	if (WEXITSTATUS(status) == LOCKED_CANNOT)
		skip_loudly("cannot switch to uid 65534 or reach the fixture as it: "
			    "the EACCES path is not exercised");
	assert_int_equal(WEXITSTATUS(status), LOCKED_OK);
}

/*
 * A cgroup removed between being listed and being opened. Interpose
 * openat(2): when the walk opens the armed name, remove that directory
 * first, exactly as a racing rmdir would.
 */
static const char *vanish_name;
static char vanish_path[PATH_MAX];

int openat(int dfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (vanish_name && !strcmp(path, vanish_name)) {
		vanish_name = NULL;
		rm_rf(vanish_path);
	}
	return (int)syscall(SYS_openat, dfd, path, flags, mode);
}

static void test_scan_vanished(void **state)
{
	struct fixture *fx = *state;
	size_t skipped = 99;

	xmkdir(fx, "/a");
	xmkdir(fx, "/a/gone");
	xmkdir(fx, "/a/gone/child");
	xmkdir(fx, "/b");
	at(fx, "/a/gone", vanish_path);
	vanish_name = "gone";

	assert_int_equal(container_table_scan(&fx->t, fx->root, NULL, &skipped), 0);
	assert_null(vanish_name);	/* it really fired */
	assert_int_equal(skipped, 1);
	assert_int_equal(fx->t.n, 3);
	expect_dir(fx, "/");
	expect_dir(fx, "/a");
	expect_dir(fx, "/b");
	assert_null(find_path(&fx->t, "/a/gone"));
	assert_null(find_path(&fx->t, "/a/gone/child"));
}

static void test_scan_symlink(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];
	size_t skipped = 99;

	xmkdir(fx, "/real");
	xmkdir(fx, "/real/inner");
	at(fx, "/link", path);
	assert_int_equal(symlink("real", path), 0);
	at(fx, "/real/loop", path);
	assert_int_equal(symlink("..", path), 0);

	assert_int_equal(container_table_scan(&fx->t, fx->root, NULL, &skipped), 0);
	assert_int_equal(skipped, 0);
	assert_int_equal(fx->t.n, 3);
	expect_dir(fx, "/real");
	expect_dir(fx, "/real/inner");
	assert_null(find_path(&fx->t, "/link"));
	assert_null(find_path(&fx->t, "/link/inner"));
	assert_null(find_path(&fx->t, "/real/loop"));

	/* the root itself may be given as a symlink (cpu -> cpu,cpuacct) */
	at(fx, "/link", path);
	assert_int_equal(container_table_scan(&fx->t, path, NULL, NULL), 0);
	assert_int_equal(fx->t.n, 2);
	assert_int_equal(fx->t.v[0].id, ino_of(fx, "/real"));
	assert_non_null(find_path(&fx->t, "/inner"));
}

static void test_scan_bad_root(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];
	size_t skipped = 99;

	at(fx, "/missing", path);
	assert_int_equal(container_table_scan(&fx->t, path, NULL, &skipped), -ENOENT);
	assert_int_equal(fx->t.n, 0);
	assert_null(fx->t.v);
	assert_null(container_table_get(&fx->t, 1));

	xtouch(fx, "/file");
	at(fx, "/file", path);
	assert_int_equal(container_table_scan(&fx->t, path, NULL, &skipped), -ENOTDIR);
}

static void test_scan_rescan(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];

	xmkdir(fx, "/a");
	xmkdir(fx, "/b");
	assert_int_equal(container_table_scan(&fx->t, fx->root, NULL, NULL), 0);
	assert_int_equal(fx->t.n, 3);

	/* a rescan replaces the table */
	at(fx, "/b", path);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(container_table_scan(&fx->t, fx->root, NULL, NULL), 0);
	assert_int_equal(fx->t.n, 2);
	assert_null(find_path(&fx->t, "/b"));
	expect_dir(fx, "/a");

	container_table_free(&fx->t);
	assert_int_equal(fx->t.n, 0);
	container_table_free(&fx->t);
}

/* A chain deeper than the walk holds open: the excess is skipped, not fatal. */
static void test_scan_depth(void **state)
{
	struct fixture *fx = *state;
	char rel[PATH_MAX - 256] = "";
	size_t skipped = 0, len = 0;
	int i;

	for (i = 0; i < CGROUP_SCAN_MAX_DEPTH + 2; i++) {
		len += snprintf(rel + len, sizeof(rel) - len, "/d");
		xmkdir(fx, rel);
	}
	assert_int_equal(container_table_scan(&fx->t, fx->root, NULL, &skipped), 0);
	assert_int_equal(fx->t.n, 1 + CGROUP_SCAN_MAX_DEPTH);
	assert_int_equal(skipped, 1);
	rel[2 * CGROUP_SCAN_MAX_DEPTH] = '\0';
	expect_dir(fx, rel);
}

enum { SCALE_PODS = 100, SCALE_CONTAINERS = 100 };

static void test_scan_scale(void **state)
{
	struct fixture *fx = *state;
	char rel[256];
	size_t i, kinds[CG_YARN + 1] = { 0 };
	int p, c;

	xmkdir(fx, "/kubepods");
	xmkdir(fx, "/kubepods/besteffort");
	for (p = 0; p < SCALE_PODS; p++) {
		int n = snprintf(rel, sizeof(rel), "/kubepods/besteffort/pod%08x-0000-4000-8000-%012x",
				 p, p);

		xmkdir(fx, rel);
		for (c = 0; c < SCALE_CONTAINERS; c++) {
			snprintf(rel + n, sizeof(rel) - n, "/%064x", c);
			xmkdir(fx, rel);
		}
	}

	assert_int_equal(container_table_scan(&fx->t, fx->root, NULL, NULL), 0);
	assert_int_equal(fx->t.n, 3 + SCALE_PODS + SCALE_PODS * SCALE_CONTAINERS);
	for (i = 0; i < fx->t.n; i++) {
		const struct container *e = &fx->t.v[i];

		assert_ptr_equal(container_table_get(&fx->t, e->id), e);
		kinds[e->ident.kind]++;
	}
	assert_int_equal(kinds[CG_CONTAINER], SCALE_PODS * SCALE_CONTAINERS);
	assert_int_equal(kinds[CG_POD], SCALE_PODS);
	/* spot-check ids against the filesystem */
	expect_dir(fx, "/kubepods/besteffort/pod00000063-0000-4000-8000-000000000063/"
		   "0000000000000000000000000000000000000000000000000000000000000063");
	expect_dir(fx, "/kubepods/besteffort/pod00000000-0000-4000-8000-000000000000");
}

/* ---- cpu_hierarchy_find ---- */

static void test_find_override(void **state)
{
	struct fixture *fx = *state;
	static const char *const live[] = {
		"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/unified", "/sys/fs/cgroup",
	};
	struct cpu_hierarchy h;
	char path[PATH_MAX];
	size_t i;

	/* a plain directory is not a cgroup fs */
	assert_int_equal(cpu_hierarchy_find(fx->root, &h), -EINVAL);
	at(fx, "/missing", path);
	assert_int_equal(cpu_hierarchy_find(path, &h), -ENOENT);
	xtouch(fx, "/file");
	at(fx, "/file", path);
	assert_int_equal(cpu_hierarchy_find(path, &h), -ENOTDIR);

	/* this machine's cgroup mounts, where present: the magic gives the version */
	for (i = 0; i < sizeof(live) / sizeof(live[0]); i++) {
		int v = statfs_version(live[i]);

		if (!v)
			continue;
		memset(&h, 0, sizeof(h));
		assert_int_equal(cpu_hierarchy_find(live[i], &h), 0);
		assert_string_equal(h.root, live[i]);
		assert_int_equal(h.version, v);
	}
}

static void test_find_live(void **state)
{
	struct cpu_hierarchy h = { 0 };
	int r = cpu_hierarchy_find(NULL, &h);

	/* Machine-dependent: whatever is found must be a cgroup fs of that version. */
	if (r == -ENOENT)
		skip_loudly("this machine has no cgroup hierarchy with the cpu controller");
	assert_int_equal(r, 0);
	assert_int_equal(statfs_version(h.root), h.version);
}

#define TREE_TEST(f) cmocka_unit_test_setup_teardown(f, setup_tree, teardown_tree)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mi_hybrid),
		cmocka_unit_test(test_mi_comounted),
		cmocka_unit_test(test_mi_pure_v2),
		cmocka_unit_test(test_mi_prefers_v2),
		cmocka_unit_test(test_mi_no_cpu),
		cmocka_unit_test(test_mi_escaped),
		cmocka_unit_test(test_mi_malformed),
		TREE_TEST(test_scan_layout),
		TREE_TEST(test_scan_rules),
		TREE_TEST(test_scan_unreadable),
		TREE_TEST(test_scan_vanished),
		TREE_TEST(test_scan_symlink),
		TREE_TEST(test_scan_bad_root),
		TREE_TEST(test_scan_rescan),
		TREE_TEST(test_scan_depth),
		TREE_TEST(test_scan_scale),
		TREE_TEST(test_find_override),
		cmocka_unit_test(test_find_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
