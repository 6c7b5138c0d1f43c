/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The cgroup writer: roots, refusals (outside, "..", symlinks), journaling
 * before the first change, skips, vanished files, dry run, restore. The
 * "cgroup root" is a temporary dir and its files are ordinary files. Tests
 * that resolve paths run twice: with openat2 and with the component walk.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "log.h"
#include "writer.h"

struct fixture {
	char base[256];		/* realpath: a root must not be reached through a link */
	char root[300];		/* base/cg */
	char state[300];	/* base/state */
	struct journal j;
	struct writer w;
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) && errno != ENOENT ? -1 : 0;
}

/* "base/@rel" into @buf. */
static const char *at(struct fixture *fx, const char *rel, char *buf)
{
	snprintf(buf, PATH_MAX, "%s/%s", fx->base, rel);
	return buf;
}

static void put(struct fixture *fx, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f = fopen(at(fx, rel, path), "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void mkdir_at(struct fixture *fx, const char *rel)
{
	char path[PATH_MAX];

	assert_int_equal(mkdir(at(fx, rel, path), 0755), 0);
}

/* The content of base/@rel, in a static buffer. */
static const char *get(struct fixture *fx, const char *rel)
{
	static char buf[256];
	char path[PATH_MAX];
	ssize_t n;
	int fd = open(at(fx, rel, path), O_RDONLY);

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
	return buf;
}

static int setup(void **state, bool walk)
{
	const char *tmp = getenv("TMPDIR");
	struct fixture *fx = calloc(1, sizeof(*fx));
	char tmpl[PATH_MAX];

	if (!fx)
		return -1;
	snprintf(tmpl, sizeof(tmpl), "%s/koord-writer-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpl) || !realpath(tmpl, fx->base)) {
		free(fx);
		return -1;
	}
	snprintf(fx->root, sizeof(fx->root), "%s/cg", fx->base);
	snprintf(fx->state, sizeof(fx->state), "%s/state", fx->base);
	/* a small cgroup tree, and a file outside it a link could aim at */
	mkdir(fx->root, 0755);
	mkdir_at(fx, "cg/kubepods");
	mkdir_at(fx, "cg/kubepods/pod1");
	put(fx, "cg/cpu.weight", "100\n");
	put(fx, "cg/kubepods/cpu.weight", "100\n");
	put(fx, "cg/kubepods/pod1/cpu.weight", "100\n");
	put(fx, "cg/kubepods/pod1/cpuset.cpus", "0-7\n");
	mkdir_at(fx, "outside");
	put(fx, "outside/secret", "keep\n");

	if (journal_open(&fx->j, fx->state))
		return -1;
	writer_init(&fx->w, &fx->j, false);
	if (writer_add_root(&fx->w, fx->root))
		return -1;
	writer_force_walk(walk);
	*state = fx;
	return 0;
}

static int setup_openat2(void **state)
{
	return setup(state, false);
}

static int setup_walk(void **state)
{
	return setup(state, true);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	writer_free(&fx->w);
	journal_close(&fx->j);
	nftw(fx->base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	writer_force_walk(false);
	return 0;
}

static void test_allowed(void **state)
{
	struct fixture *fx = *state;
	char p[PATH_MAX];

	assert_true(writer_allowed(&fx->w, at(fx, "cg/kubepods/pod1/cpu.weight", p)));
	/* files right in the root dir too */
	assert_true(writer_allowed(&fx->w, at(fx, "cg/cpu.weight", p)));
	assert_false(writer_allowed(&fx->w, at(fx, "cg", p)));
	assert_false(writer_allowed(&fx->w, at(fx, "cg/", p)));
	assert_false(writer_allowed(&fx->w, at(fx, "cg2/cpu.weight", p)));
	assert_false(writer_allowed(&fx->w, at(fx, "outside/secret", p)));
	assert_false(writer_allowed(&fx->w, at(fx, "cg/../outside/secret", p)));
	assert_false(writer_allowed(&fx->w, at(fx, "cg/kubepods/..", p)));
	assert_false(writer_allowed(&fx->w, at(fx, "cg/./cpu.weight", p)));
	assert_false(writer_allowed(&fx->w, at(fx, "cg//cpu.weight", p)));
	assert_false(writer_allowed(&fx->w, at(fx, "cg/kubepods/", p)));
	assert_false(writer_allowed(&fx->w, "cg/cpu.weight"));
	assert_false(writer_allowed(&fx->w, ""));
}

static void test_outside_refused(void **state)
{
	struct fixture *fx = *state;
	char p[PATH_MAX];

	assert_int_equal(writer_set(&fx->w, at(fx, "outside/secret", p), "x"), -EPERM);
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/../outside/secret", p), "x"), -EPERM);
	assert_int_equal(writer_raw(&fx->w, at(fx, "cg/kubepods/../../outside/secret", p), "x"),
			 -EPERM);
	assert_string_equal(get(fx, "outside/secret"), "keep\n");
	assert_int_equal(fx->w.refused, 3);
	assert_int_equal(fx->w.writes, 0);
	assert_int_equal(fx->j.n, 0);
}

static void test_symlink_refused(void **state)
{
	struct fixture *fx = *state;
	char p[PATH_MAX], t[PATH_MAX];
	char buf[64];

	/* a dir link inside the root, and a file link */
	assert_int_equal(symlink(at(fx, "outside", t), at(fx, "cg/kubepods/evil", p)), 0);
	assert_int_equal(symlink(at(fx, "outside/secret", t), at(fx, "cg/kubepods/pod1/link", p)),
			 0);
	assert_int_equal(symlink("../../outside", at(fx, "cg/kubepods/rel", p)), 0);

	assert_true(writer_allowed(&fx->w, at(fx, "cg/kubepods/evil/secret", p)));
	assert_int_equal(writer_set(&fx->w, p, "x"), -ELOOP);
	assert_int_equal(writer_raw(&fx->w, p, "x"), -ELOOP);
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/pod1/link", p), "x"), -ELOOP);
	assert_int_equal(writer_raw(&fx->w, p, "x"), -ELOOP);
	assert_int_equal(writer_read(&fx->w, p, buf, sizeof(buf)), -ELOOP);
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/rel/secret", p), "x"), -ELOOP);
	assert_string_equal(get(fx, "outside/secret"), "keep\n");
	assert_int_equal(fx->w.refused, 6);
	assert_int_equal(fx->w.failed, 0);
	assert_int_equal(fx->j.n, 0);
}

static void test_root_checks(void **state)
{
	struct fixture *fx = *state;
	struct writer w;
	char p[PATH_MAX], t[PATH_MAX];

	writer_init(&w, NULL, true);
	assert_int_equal(symlink(at(fx, "cg", t), at(fx, "cglink", p)), 0);
	/* a root reached through a symlink, at its end or on the way */
	assert_int_equal(writer_add_root(&w, at(fx, "cglink", p)), -ELOOP);
	assert_int_equal(writer_add_root(&w, at(fx, "cglink/kubepods", p)), -ELOOP);
	assert_int_equal(writer_add_root(&w, at(fx, "nothere", p)), -ENOENT);
	assert_int_equal(writer_add_root(&w, at(fx, "cg/cpu.weight", p)), -ENOTDIR);
	assert_int_equal(writer_add_root(&w, "/"), -EINVAL);
	assert_int_equal(writer_add_root(&w, "relative/dir"), -EINVAL);
	assert_int_equal(writer_add_root(&w, at(fx, "cg/../outside", p)), -EINVAL);
	assert_int_equal(w.nroots, 0);
	assert_false(writer_allowed(&w, at(fx, "cglink/cpu.weight", p)));

	/* a trailing '/' is dropped, a second add of the same root is a no-op */
	assert_int_equal(writer_add_root(&w, at(fx, "cg/kubepods/", p)), 0);
	assert_int_equal(writer_add_root(&w, at(fx, "cg/kubepods", p)), 0);
	assert_int_equal(w.nroots, 1);
	assert_string_equal(w.roots[0], p);
	assert_true(writer_allowed(&w, at(fx, "cg/kubepods/cpu.weight", p)));
	assert_false(writer_allowed(&w, at(fx, "cg/cpu.weight", p)));
	writer_free(&w);
	assert_int_equal(w.nroots, 0);
}

/* Nested roots: the longest one resolves the path. */
static void test_nested_roots(void **state)
{
	struct fixture *fx = *state;
	char p[PATH_MAX], t[PATH_MAX];

	assert_int_equal(writer_add_root(&fx->w, at(fx, "cg/kubepods", p)), 0);
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/pod1/cpu.weight", p), "7"), 0);
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpu.weight"), "7");
	/*
	 * Swap the inner root for a link after it was added: its fd still is
	 * the dir it was, so the write lands there, not through the link.
	 */
	assert_int_equal(rename(at(fx, "cg/kubepods", p), at(fx, "cg/old", t)), 0);
	assert_int_equal(symlink(at(fx, "outside", t), at(fx, "cg/kubepods", p)), 0);
	put(fx, "outside/cpu.weight", "keep\n");
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/cpu.weight", p), "9"), 0);
	assert_string_equal(get(fx, "cg/old/cpu.weight"), "9");
	assert_string_equal(get(fx, "outside/cpu.weight"), "keep\n");
}

/* A root removed and made again (a recreated /hadoop-yarn): the next add takes the new one. */
static void test_root_made_again(void **state)
{
	struct fixture *fx = *state;
	char p[PATH_MAX], t[PATH_MAX];

	assert_int_equal(writer_add_root(&fx->w, at(fx, "cg/kubepods", p)), 0);
	assert_int_equal(rename(p, at(fx, "cg/old", t)), 0);
	mkdir_at(fx, "cg/kubepods");
	put(fx, "cg/kubepods/cpu.weight", "100\n");
	/* until it is added again, the fd still is the old dir */
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/cpu.weight", p), "5"), 0);
	assert_string_equal(get(fx, "cg/old/cpu.weight"), "5");
	assert_int_equal(writer_add_root(&fx->w, at(fx, "cg/kubepods", p)), 0);
	assert_int_equal(fx->w.nroots, 2);
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/cpu.weight", p), "6"), 0);
	assert_string_equal(get(fx, "cg/kubepods/cpu.weight"), "6");
	assert_string_equal(get(fx, "cg/old/cpu.weight"), "5");
	/* the same dir added again: nothing changes */
	assert_int_equal(writer_add_root(&fx->w, at(fx, "cg/kubepods", p)), 0);
	assert_int_equal(fx->w.nroots, 2);
}

static void test_skip_unchanged(void **state)
{
	struct fixture *fx = *state;
	char p[PATH_MAX], buf[64];

	at(fx, "cg/kubepods/pod1/cpu.weight", p);
	assert_int_equal(writer_read(&fx->w, p, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "100");
	assert_int_equal(writer_set(&fx->w, p, "100"), 1);
	assert_int_equal(writer_set(&fx->w, p, "100\n"), 1);
	assert_int_equal(fx->w.skipped, 2);
	assert_int_equal(fx->w.writes, 0);
	assert_int_equal(fx->j.n, 0);
	assert_int_equal(access(at(fx, "state/journal", p), F_OK), -1);
}

static void test_journal_original(void **state)
{
	struct fixture *fx = *state;
	char p[PATH_MAX];
	struct journal back;
	char err[128];

	at(fx, "cg/kubepods/pod1/cpu.weight", p);
	assert_int_equal(writer_set(&fx->w, p, "200"), 0);
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpu.weight"), "200");
	assert_int_equal(fx->j.n, 1);
	assert_string_equal(fx->j.v[0].path, p);
	assert_string_equal(fx->j.v[0].value, "100");
	/* a second change keeps the original */
	assert_int_equal(writer_set(&fx->w, p, "300"), 0);
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpu.weight"), "300");
	assert_int_equal(fx->j.n, 1);
	assert_string_equal(fx->j.v[0].value, "100");
	assert_int_equal(fx->w.writes, 2);

	/* and it is on disk */
	journal_init(&back);
	assert_int_equal(journal_load(&back, fx->state, err, sizeof(err)), 0);
	assert_int_equal(back.n, 1);
	assert_string_equal(back.v[0].path, p);
	assert_string_equal(back.v[0].value, "100");
	journal_close(&back);
}

/*
 * A cgroup made holding a copy of its parent's value, which this writer
 * set (a v1 cpuset), is journaled as its own with the parent's original;
 * nothing else is.
 */
static void test_adopt(void **state)
{
	struct fixture *fx = *state;
	char parent[PATH_MAX], child[PATH_MAX];
	const struct journal_entry *e;

	at(fx, "cg/kubepods/pod1/cpuset.cpus", parent);
	at(fx, "cg/kubepods/pod1/new/cpuset.cpus", child);
	mkdir_at(fx, "cg/kubepods/pod1/new");
	put(fx, "cg/kubepods/pod1/new/cpuset.cpus", "\n");
	/* the parent not written by this writer: nothing to take */
	assert_int_equal(writer_adopt(&fx->w, child, parent), 0);
	assert_int_equal(writer_set(&fx->w, parent, "2-3"), 0);
	/* made, not filled yet: asked again later */
	assert_int_equal(writer_adopt(&fx->w, child, parent), -EAGAIN);
	/* holding the parent's original: not ours */
	put(fx, "cg/kubepods/pod1/new/cpuset.cpus", "0-7\n");
	assert_int_equal(writer_adopt(&fx->w, child, parent), 0);
	/* holding something else than the parent: not a copy */
	put(fx, "cg/kubepods/pod1/new/cpuset.cpus", "3\n");
	assert_int_equal(writer_adopt(&fx->w, child, parent), 0);
	assert_null(journal_find(&fx->j, child));
	/* a copy of what this writer set */
	put(fx, "cg/kubepods/pod1/new/cpuset.cpus", "2-3\n");
	assert_int_equal(writer_adopt(&fx->w, child, parent), 1);
	e = journal_find(&fx->j, child);
	assert_non_null(e);
	assert_string_equal(e->value, "0-7");
	assert_true(journal_same(e->written, "2-3"));
	assert_int_equal(writer_adopt(&fx->w, child, parent), 0);	/* once */
	/* the restore widens both */
	assert_int_equal(writer_restore_all(&fx->w), 0);
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpuset.cpus"), "0-7");
	assert_string_equal(get(fx, "cg/kubepods/pod1/new/cpuset.cpus"), "0-7");
}

static void test_journal_failure(void **state)
{
	struct fixture *fx = *state;
	char p[PATH_MAX];

	/* a dir where the journal writes its tmp: stops root too */
	mkdir_at(fx, "state/journal.tmp");
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/pod1/cpu.weight", p), "200"),
			 -EISDIR);
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpu.weight"), "100\n");
	assert_int_equal(fx->j.n, 0);
	assert_int_equal(fx->w.failed, 1);
	assert_int_equal(fx->w.writes, 0);
}

static void test_vanished(void **state)
{
	struct fixture *fx = *state;
	char p[PATH_MAX], buf[64];

	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/pod2/cpu.weight", p), "5"),
			 -ENOENT);
	assert_int_equal(writer_raw(&fx->w, p, "1"), -ENOENT);
	assert_int_equal(writer_read(&fx->w, p, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(unlink(at(fx, "cg/kubepods/pod1/cpu.weight", p)), 0);
	assert_int_equal(writer_set(&fx->w, p, "5"), -ENOENT);
	assert_int_equal(fx->w.vanished, 4);
	assert_int_equal(fx->w.failed, 0);
	assert_int_equal(fx->w.refused, 0);
	assert_int_equal(fx->j.n, 0);
}

static void test_dry_run(void **state)
{
	struct fixture *fx = *state;
	struct writer w;
	char p[PATH_MAX];

	/* with the journal, too: a dry run journals nothing */
	writer_init(&w, &fx->j, true);
	assert_int_equal(writer_add_root(&w, fx->root), 0);
	at(fx, "cg/kubepods/pod1/cpu.weight", p);
	assert_int_equal(writer_set(&w, p, "200"), 0);
	assert_int_equal(writer_set(&w, p, "100"), 1);
	assert_int_equal(writer_raw(&w, at(fx, "cg/kubepods/pod1/cpuset.cpus", p), "1"), 0);
	assert_int_equal(writer_set(&w, at(fx, "outside/secret", p), "x"), -EPERM);
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpu.weight"), "100\n");
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpuset.cpus"), "0-7\n");
	assert_int_equal(fx->j.n, 0);
	assert_int_equal(access(at(fx, "state/journal", p), F_OK), -1);
	assert_int_equal(w.writes, 0);
	assert_int_equal(w.skipped, 1);
	assert_int_equal(writer_restore_all(&w), 0);
	writer_free(&w);

	/* and without one */
	writer_init(&w, NULL, true);
	assert_int_equal(writer_add_root(&w, fx->root), 0);
	assert_int_equal(writer_set(&w, at(fx, "cg/cpu.weight", p), "1"), 0);
	assert_string_equal(get(fx, "cg/cpu.weight"), "100\n");
	writer_free(&w);
}

static void test_restore_all(void **state)
{
	struct fixture *fx = *state;
	char p[PATH_MAX];

	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/pod1/cpu.weight", p), "2"), 0);
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/pod1/cpuset.cpus", p), "0-1"), 0);
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/cpu.weight", p), "3"), 0);
	assert_int_equal(fx->j.n, 3);
	/* a cgroup that went away meanwhile counts as restored */
	assert_int_equal(unlink(at(fx, "cg/cpu.weight", p)), 0);

	assert_int_equal(writer_restore_all(&fx->w), 0);
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpu.weight"), "100");
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpuset.cpus"), "0-7");
	assert_int_equal(fx->j.n, 0);
	assert_int_equal(access(at(fx, "state/journal", p), F_OK), -1);
	assert_int_equal(fx->w.vanished, 1);
}

/*
 * A value goes back only where the file still holds what was written, or
 * what was written before it (a crash between the journal's update and the
 * write); a value someone else set since stays, and so does the original.
 */
static void test_restore_only_ours(void **state)
{
	struct fixture *fx = *state;
	char p[PATH_MAX];

	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/pod1/cpu.weight", p), "2"), 0);
	put(fx, "cg/kubepods/pod1/cpu.weight", "150\n");		/* the kubelet's, since */
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/pod1/cpuset.cpus", p), "0-1"), 0);
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/cpu.weight", p), "5"), 0);
	assert_int_equal(writer_set(&fx->w, p, "6"), 0);
	put(fx, "cg/kubepods/cpu.weight", "5\n");	/* as if "6" was journaled, then a crash */
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/cpu.weight", p), "3"), 0);
	put(fx, "cg/cpu.weight", "100\n");		/* someone put the original back */
	assert_int_equal(fx->j.n, 4);
	fx->w.writes = 0;

	assert_int_equal(writer_restore_all(&fx->w), 0);
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpu.weight"), "150\n");
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpuset.cpus"), "0-7");
	assert_string_equal(get(fx, "cg/kubepods/cpu.weight"), "100");
	assert_string_equal(get(fx, "cg/cpu.weight"), "100\n");
	assert_int_equal(fx->w.left, 1);
	assert_int_equal(fx->w.writes, 2);
	/* left or restored, none is ours any more */
	assert_int_equal(fx->j.n, 0);
	assert_int_equal(access(at(fx, "state/journal", p), F_OK), -1);
}

/*
 * Another writer sets a file after ours (koordlet's reconcilers write the
 * same BE files): it is theirs, not written again, and left at the stop;
 * the same path in a cgroup made again is a new file, ours to write.
 */
static void test_foreign_writer(void **state)
{
	struct fixture *fx = *state;
	char p[PATH_MAX], t[PATH_MAX];

	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/pod1/cpu.weight", p), "2"), 0);
	assert_int_equal(writer_set(&fx->w, p, "3"), 0);	/* ours again: no other writer */
	put(fx, "cg/kubepods/pod1/cpu.weight", "100\n");	/* back to the original, by another */
	assert_int_equal(writer_set(&fx->w, p, "2"), -EBUSY);
	assert_int_equal(writer_set(&fx->w, p, "2"), -EBUSY);
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpu.weight"), "100\n");
	assert_int_equal(fx->w.foreign, 2);
	assert_int_equal(fx->w.nforeign, 1);		/* logged once */
	/* a cgroup removed and made again at the same path */
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/cpu.weight", p), "5"), 0);
	assert_int_equal(rename(at(fx, "cg/kubepods/cpu.weight", p), at(fx, "cg/old", t)), 0);
	put(fx, "cg/kubepods/cpu.weight", "100\n");
	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/cpu.weight", p), "6"), 0);
	assert_string_equal(journal_original(&fx->j, p), "100");
	assert_int_equal(fx->w.foreign, 2);

	assert_int_equal(writer_restore_all(&fx->w), 0);
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpu.weight"), "100\n");
	assert_string_equal(get(fx, "cg/kubepods/cpu.weight"), "100");
}

/* A crashed run: its journal is loaded and restored by the next start. */
static void test_restore_after_crash(void **state)
{
	struct fixture *fx = *state;
	struct journal old;
	struct writer w;
	char p[PATH_MAX], err[128];

	assert_int_equal(writer_set(&fx->w, at(fx, "cg/kubepods/cpu.weight", p), "1"), 0);
	journal_close(&fx->j);	/* the crash: the journal stays */
	assert_int_equal(journal_open(&fx->j, fx->state), -EEXIST);

	assert_int_equal(journal_load(&old, fx->state, err, sizeof(err)), 0);
	assert_int_equal(old.n, 1);
	writer_init(&w, &old, false);
	assert_int_equal(writer_add_root(&w, fx->root), 0);
	assert_int_equal(writer_restore_all(&w), 0);
	assert_string_equal(get(fx, "cg/kubepods/cpu.weight"), "100");
	writer_free(&w);
	journal_close(&old);
	assert_int_equal(journal_open(&fx->j, fx->state), 0);
}

static void test_raw_and_read(void **state)
{
	struct fixture *fx = *state;
	char p[PATH_MAX], small[4];

	/* "" goes out as a newline: a zero-length write would not reach the kernel */
	assert_int_equal(writer_raw(&fx->w, at(fx, "cg/kubepods/pod1/cpuset.cpus", p), ""), 0);
	assert_string_equal(get(fx, "cg/kubepods/pod1/cpuset.cpus"), "\n");
	assert_int_equal(fx->j.n, 0);
	assert_int_equal(writer_raw(&fx->w, p, "1"), 0);
	assert_int_equal(fx->w.writes, 2);
	assert_int_equal(writer_read(&fx->w, p, small, sizeof(small)), 0);
	assert_string_equal(small, "1");
	/* "100\n" does not fit in 4 bytes with its NUL */
	assert_int_equal(writer_read(&fx->w, at(fx, "cg/cpu.weight", p), small, sizeof(small)),
			 -EFBIG);
	assert_int_equal(fx->w.failed, 1);
	/* a dir is not a cgroup file */
	assert_int_equal(writer_raw(&fx->w, at(fx, "cg/kubepods", p), "1"), -EISDIR);
	assert_int_equal(fx->w.failed, 2);
}

#define BOTH(t)	cmocka_unit_test_setup_teardown(t, setup_openat2, teardown), \
		cmocka_unit_test_setup_teardown(t, setup_walk, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_allowed),
		BOTH(test_outside_refused),
		BOTH(test_symlink_refused),
		BOTH(test_root_checks),
		BOTH(test_nested_roots),
		BOTH(test_root_made_again),
		BOTH(test_skip_unchanged),
		BOTH(test_journal_original),
		BOTH(test_journal_failure),
		BOTH(test_adopt),
		BOTH(test_vanished),
		BOTH(test_dry_run),
		BOTH(test_restore_all),
		BOTH(test_restore_only_ours),
		BOTH(test_foreign_writer),
		BOTH(test_restore_after_crash),
		BOTH(test_raw_and_read),
	};

	log_level = LOG_LVL_ERR;	/* the refusals below are expected */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
