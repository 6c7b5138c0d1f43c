// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The journal's restore on the real cpuset hierarchy: the cpuset policy
 * narrows a child before its parent (a parent cannot narrow below a child:
 * EBUSY), so the journal lists the child first; restoring it first asks for
 * a child wider than its parent, which v1 refuses with EACCES (measured on
 * 6.18). Every value must come back, the journal removed. On v2 (the VM
 * self-test) there is no such rule, and the same must hold.
 *
 * A value is put back only where the file still holds what was written:
 * the kernel's own form of it ("1-1" reads back "1") counts as written; a
 * value another writer set since is left as it is.
 *
 * cpu.idle sets its group's weight, and putting it back resets the weight
 * to the default (1024 shares), not to the 2 shares kubelet gives BE: the
 * weight is journaled with it and restored after it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hierarchies.h"
#include "journal.h"
#include "log.h"
#include "testlib.h"
#include "writer.h"

#define BASE_LEN	(PATH_MAX + 32)
#define PATH_LEN	(BASE_LEN + 64)

static char base[BASE_LEN], idle_dir[BASE_LEN], quota_dir[BASE_LEN];
static char state_dir[] = "/tmp/koord-test-restore-XXXXXX";

static void cleanup(void)
{
	char path[PATH_LEN];

	if (base[0]) {
		snprintf(path, sizeof(path), "%.*s/parent/child", BASE_LEN - 1, base);
		rmdir(path);
		snprintf(path, sizeof(path), "%.*s/parent", BASE_LEN - 1, base);
		rmdir(path);
		snprintf(path, sizeof(path), "%.*s/kernel-form", BASE_LEN - 1, base);
		rmdir(path);
		snprintf(path, sizeof(path), "%.*s/set-by-other", BASE_LEN - 1, base);
		rmdir(path);
		rmdir(base);
	}
	if (idle_dir[0])
		rmdir(idle_dir);
	if (quota_dir[0]) {
		snprintf(path, sizeof(path), "%.*s/child", BASE_LEN - 1, quota_dir);
		rmdir(path);
		rmdir(quota_dir);
	}
	remove_tree(state_dir);
}

static int put(const char *dir, const char *file, const char *val)
{
	char path[PATH_LEN + 32];
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	r = fputs(val, f) < 0 ? -EIO : 0;
	if (fclose(f) && !r)
		r = -errno;
	return r;
}

static void get(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_LEN + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* @name below @base with every CPU and memory node (v1 makes a cpuset empty). */
static int sibling(const char *name, const char *all, const char *mems, char *dir, size_t len)
{
	snprintf(dir, len, "%.*s/%s", BASE_LEN - 1, base, name);
	if (mkdir(dir, 0755) || put(dir, "cpuset.cpus", all) || put(dir, "cpuset.mems", mems))
		return -errno;
	return 0;
}

/* A writer below @root journaling in a new dir from the template @sdir. */
static bool writer_open(char *sdir, const char *root, struct journal *j, struct writer *w)
{
	if (!mkdtemp(sdir) || journal_open(j, sdir)) {
		check(false, "a journal in %s", sdir);
		return false;
	}
	writer_init(w, j, false);
	return check(!writer_add_root(w, root), "a writer below %s", root);
}

static void writer_close(const char *sdir, struct journal *j, struct writer *w)
{
	journal_close(j);
	writer_free(w);
	remove_tree(sdir);
}

/* A BE group's wake-up priority taken and put back: its weight comes back too. */
static void test_idle_weight(const struct hierarchies *hier)
{
	const char *weight = hier->cpu_version == 2 ? "cpu.weight" : "cpu.shares";
	const char *kubelet = hier->cpu_version == 2 ? "1" : "2", *dfl;
	char sdir[] = "/tmp/koord-test-idle-XXXXXX", idle[PATH_LEN], wpath[PATH_LEN], got[64];
	const struct journal_entry *je;
	struct journal j;
	struct writer w;
	int r;

	dfl = hier->cpu_version == 2 ? "100" : "1024";
	snprintf(idle_dir, sizeof(idle_dir), "%.*s/koord-test-idle-%d", PATH_MAX - 1, hier->cpu,
		 getpid());
	snprintf(idle, sizeof(idle), "%s/cpu.idle", idle_dir);
	snprintf(wpath, sizeof(wpath), "%s/%s", idle_dir, weight);
	if (mkdir(idle_dir, 0755) || put(idle_dir, weight, kubelet)) {
		check(false, "cannot make %s with %s %s: %s", idle_dir, weight, kubelet,
		      strerror(errno));
		return;
	}
	if (access(idle, F_OK)) {
		/* a kernel fact, not a missing privilege: nothing is coupled to test here */
		printf("# no cpu.idle (kernel < 5.15): the weight is the wake-up priority itself, "
		       "journaled and restored as any file\n");
		return;
	}
	if (!writer_open(sdir, idle_dir, &j, &w))
		return;
	check(writer_set_coupled(&w, idle, "1", wpath, dfl) == 0, "cpu.idle 1 written, %s %s "
	      "journaled with it", weight, kubelet);
	get(idle_dir, weight, got, sizeof(got));
	je = journal_find(&j, wpath);
	printf("# %s reads %s with cpu.idle 1\n", weight, got);
	check(je && !strcmp(je->value, kubelet) && je->written && !strcmp(je->written, got) &&
	      je->previous && !strcmp(je->previous, dfl), "the journal has %s's original (%s), "
	      "what cpu.idle made it (%s) and the default the kernel resets it to (%s)", weight,
	      je ? je->value : "-", je && je->written ? je->written : "-",
	      je && je->previous ? je->previous : "-");
	r = writer_restore_all(&w);
	get(idle_dir, "cpu.idle", got, sizeof(got));
	check(r == 0 && !strcmp(got, "0"), "cpu.idle is back to 0 (%s, %d left)", got, r);
	get(idle_dir, weight, got, sizeof(got));
	check(!strcmp(got, kubelet), "and %s to %s, not the kernel's %s (%s)", weight, kubelet, dfl,
	      got);
	writer_close(sdir, &j, &w);
}

/*
 * Writes the kernel refuses, twice in a row, after one it took: v1 refuses a
 * parent's quota below its child's (EINVAL). The file still holds the write
 * that went through, which must stay ours: not taken for another writer's
 * at the next write, and put back at the stop.
 */
static void test_refused_twice(const struct hierarchies *hier)
{
	char sdir[] = "/tmp/koord-test-quota-XXXXXX", child[PATH_LEN], quota[PATH_LEN], got[64];
	struct journal j;
	struct writer w;
	int r1, r2, r3, r;

	if (hier->cpu_version != 1) {
		/* v2's cpu.max has no such rule: a parent below its child is taken */
		printf("# cgroup v2: no quota refused to a parent, nothing to refuse here\n");
		return;
	}
	snprintf(quota_dir, sizeof(quota_dir), "%.*s/koord-test-quota-%d", PATH_MAX - 1, hier->cpu,
		 getpid());
	snprintf(child, sizeof(child), "%s/child", quota_dir);
	snprintf(quota, sizeof(quota), "%s/cpu.cfs_quota_us", quota_dir);
	if (mkdir(quota_dir, 0755) || mkdir(child, 0755) ||
	    put(child, "cpu.cfs_quota_us", "50000")) {
		check(false, "cannot make %s with a child at quota 50000: %s", quota_dir,
		      strerror(errno));
		return;
	}
	if (!writer_open(sdir, quota_dir, &j, &w))
		return;
	r1 = writer_set(&w, quota, "80000");
	r2 = writer_set(&w, quota, "40000");
	r3 = writer_set(&w, quota, "38000");
	get(quota_dir, "cpu.cfs_quota_us", got, sizeof(got));
	check(r1 == 0 && r2 == -EINVAL && r3 == -EINVAL && !strcmp(got, "80000"),
	      "a quota of 80000 taken, then 40000 and 38000 refused below the child's 50000 "
	      "(%d, %d, %d; it holds %s)", r1, r2, r3, got);
	r = writer_set(&w, quota, "60000");
	get(quota_dir, "cpu.cfs_quota_us", got, sizeof(got));
	check(r == 0 && !strcmp(got, "60000") && !w.foreign,
	      "the next write is taken: the 80000 it held was ours, not another writer's "
	      "(%d, %s, %llu foreign)", r, got, w.foreign);
	r1 = writer_set(&w, quota, "40000");
	r2 = writer_set(&w, quota, "38000");
	r = writer_restore_all(&w);
	get(quota_dir, "cpu.cfs_quota_us", got, sizeof(got));
	check(r1 == -EINVAL && r2 == -EINVAL && r == 0 && !strcmp(got, "-1") && !w.left,
	      "refused twice again, then the stop puts the original back (-1: %s, %d, %llu left)",
	      got, r, w.left);
	writer_close(sdir, &j, &w);
}

int main(void)
{
	char all[64], mems[64], parent[PATH_LEN], child[PATH_LEN], path[PATH_LEN + 16];
	char got_parent[64], got_child[64], form[PATH_LEN], other[PATH_LEN], got[64];
	const struct journal_entry *je;
	struct hierarchies hier;
	struct journal journal;
	struct writer w;
	bool v2;
	int r;

	if (geteuid() != 0) {
		printf("SKIP: the restore test needs root\n");
		return 77;
	}
	log_level = LOG_LVL_DEBUG;
	atexit(cleanup);
	if (!hierarchies_find(&hier) && hier.cpu[0]) {
		test_idle_weight(&hier);
		test_refused_twice(&hier);
	}
	if (hierarchies_find(&hier) || !hier.cpuset[0]) {
		skip_part("no cgroup hierarchy carries cpuset");
		return test_summary("test_restore");
	}
	v2 = hier.cpuset_version == 2;	/* no subset rule there; the restore must hold all the same */
	get(hier.cpuset, v2 ? "cpuset.cpus.effective" : "cpuset.cpus", all, sizeof(all));
	get(hier.cpuset, v2 ? "cpuset.mems.effective" : "cpuset.mems", mems, sizeof(mems));
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || !strchr(all, '-')) {
		skip_part("one CPU online (%s): no narrower cpuset to write", all);
		return test_summary("test_restore");
	}
	snprintf(base, sizeof(base), "%.*s/koord-test-restore-%d", PATH_MAX - 1, hier.cpuset, getpid());
	snprintf(parent, sizeof(parent), "%.*s/parent", BASE_LEN - 1, base);
	snprintf(child, sizeof(child), "%.*s/child", BASE_LEN + 7, parent);
	/*
	 * v1 makes a cpuset empty: each level gets its CPUs and memory nodes
	 * before its child; v2 shows a child's cpuset files once its parent
	 * enables the controller for its children.
	 */
	if (mkdir(base, 0755) || (v2 && put(base, "cgroup.subtree_control", "+cpuset")) ||
	    put(base, "cpuset.cpus", all) || put(base, "cpuset.mems", mems) ||
	    mkdir(parent, 0755) || (v2 && put(parent, "cgroup.subtree_control", "+cpuset")) ||
	    put(parent, "cpuset.cpus", all) || put(parent, "cpuset.mems", mems) ||
	    mkdir(child, 0755) || put(child, "cpuset.cpus", all) || put(child, "cpuset.mems", mems) ||
	    sibling("kernel-form", all, mems, form, sizeof(form)) ||
	    sibling("set-by-other", all, mems, other, sizeof(other))) {
		fprintf(stderr, "cannot set up %s: %s\n", base, strerror(errno));
		return 1;
	}
	if (!mkdtemp(state_dir) || (r = journal_open(&journal, state_dir))) {
		fprintf(stderr, "cannot open a journal in %s\n", state_dir);
		return 1;
	}
	writer_init(&w, &journal, false);
	if (writer_add_root(&w, base)) {
		fprintf(stderr, "cannot add %s as a root\n", base);
		return 1;
	}
	/* as the cpuset policy narrows: the child first, then its parent */
	snprintf(path, sizeof(path), "%s/cpuset.cpus", child);
	check(writer_set(&w, path, "1") == 0, "the child narrows to CPU 1");
	snprintf(path, sizeof(path), "%s/cpuset.cpus", parent);
	check(writer_set(&w, path, "1") == 0, "then its parent");
	snprintf(path, sizeof(path), "%s/cpuset.cpus", form);
	check(writer_set(&w, path, "1-1") == 0, "\"1-1\" written");
	je = journal_find(&journal, path);
	check(je && je->written && !strcmp(je->written, "1") && je->previous &&
	      !strcmp(je->previous, "1-1"), "the journal holds what the kernel reads back (%s), "
	      "after what was written (%s)", je && je->written ? je->written : "-",
	      je && je->previous ? je->previous : "-");
	snprintf(path, sizeof(path), "%s/cpuset.cpus", other);
	check(writer_set(&w, path, "1") == 0 && put(other, "cpuset.cpus", "0") == 0,
	      "a cpuset narrowed to CPU 1, then set to CPU 0 by another writer");
	r = writer_restore_all(&w);
	get(parent, "cpuset.cpus", got_parent, sizeof(got_parent));
	get(child, "cpuset.cpus", got_child, sizeof(got_child));
	check(r == 0, "the journal restores every value (%d left)", r);
	check(!strcmp(got_parent, all) && !strcmp(got_child, all),
	      "parent and child are back to %s (parent %s, child %s)", all, got_parent, got_child);
	get(form, "cpuset.cpus", got, sizeof(got));
	check(!strcmp(got, all), "the one written in another form is back to %s (%s)", all, got);
	get(other, "cpuset.cpus", got, sizeof(got));
	check(!strcmp(got, "0") && w.left == 1,
	      "the one another writer set is left as it set it (%s; %llu left)", got, w.left);
	snprintf(path, sizeof(path), "%s/journal", state_dir);
	check(access(path, F_OK) && errno == ENOENT, "and the journal file is gone");
	journal_close(&journal);
	writer_free(&w);
	return test_summary("test_restore");
}
