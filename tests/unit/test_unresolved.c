/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The tracker of containers a walk did not find, shared by koord-bpf and
 * koord-top: what triggers a walk, what does not, and an empty tracker
 * (koord-top's copy searched a NULL array: undefined, caught by UBSan here).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "unresolved.h"

struct fixture {
	char dir[64];
	struct container_table table;
	__u64 known;		/* the id of a cgroup the walk found */
};

/* A "hierarchy" of plain directories: the walk reads them the same. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char path[128];
	struct stat st;

	assert_non_null(f);
	strcpy(f->dir, "/tmp/koord-unresolved-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(path, sizeof(path), "%s/pod", f->dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(stat(path, &st), 0);
	f->known = st.st_ino;
	assert_int_equal(container_table_scan(&f->table, f->dir, NULL, NULL), 0);
	assert_non_null(container_table_get(&f->table, f->known));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[128];

	snprintf(path, sizeof(path), "%s/pod", f->dir);
	rmdir(path);
	rmdir(f->dir);
	container_table_free(&f->table);
	free(f);
	return 0;
}

/* Ids no directory has: inode numbers this high are not handed out here. */
#define GONE_A	(~0ull - 3)
#define GONE_B	(~0ull - 2)
#define GONE_C	(~0ull - 1)

static void empty_tracker_knows_nothing(void **state)
{
	struct fixture *f = *state;
	struct unresolved u = {};
	struct cg_sample v[] = { { .cgid = 0 } };
	struct sample s = { .v = v, .n = 1 };

	assert_false(unresolved_has(&u, GONE_A));
	v[0].cgid = f->known;
	assert_false(unresolved_fresh(&u, &f->table, &s, NULL));
	v[0].cgid = GONE_A;
	assert_true(unresolved_fresh(&u, &f->table, &s, NULL));
	s.n = 0;
	assert_int_equal(unresolved_reset(&u, &f->table, &s), 0);
	assert_int_equal(u.n, 0);
	assert_false(unresolved_fresh(&u, &f->table, &s, NULL));
	unresolved_free(&u);
}

/* After a walk, what it did not find is listed and no longer fresh; a new one is. */
static void reset_lists_what_the_walk_missed(void **state)
{
	struct fixture *f = *state;
	struct unresolved u = {};
	struct cg_sample v[] = { { .cgid = f->known }, { .cgid = GONE_B }, { .cgid = GONE_C } };
	struct sample s = { .v = v, .n = 2 };

	assert_true(unresolved_fresh(&u, &f->table, &s, NULL));
	assert_int_equal(unresolved_reset(&u, &f->table, &s), 0);
	assert_int_equal(u.n, 1);
	assert_true(unresolved_has(&u, GONE_B));
	assert_false(unresolved_has(&u, f->known));
	assert_false(unresolved_fresh(&u, &f->table, &s, NULL));
	s.n = 3;
	assert_true(unresolved_fresh(&u, &f->table, &s, NULL));
	unresolved_free(&u);
	assert_null(u.ids);
}

/* Only containers new since the previous sample are looked up. */
static void prev_sample_was_looked_at(void **state)
{
	struct fixture *f = *state;
	struct unresolved u = {};
	struct cg_sample pv[] = { { .cgid = GONE_A }, { .cgid = GONE_C } };
	struct cg_sample cv[] = { { .cgid = f->known }, { .cgid = GONE_A }, { .cgid = GONE_C } };
	struct sample prev = { .v = pv, .n = 2 }, cur = { .v = cv, .n = 3 };

	assert_false(unresolved_fresh(&u, &f->table, &cur, &prev));
	prev.n = 1;
	assert_true(unresolved_fresh(&u, &f->table, &cur, &prev));
	/* the collector says cur holds prev's containers: nothing is new (GONE_C is not read) */
	prev.gen = 4;
	cur.gen = 5;
	cur.prev_gen = 4;
	cur.same_set = true;
	assert_false(unresolved_fresh(&u, &f->table, &cur, &prev));
	cur.prev_gen = 3;	/* not built on prev: looked at */
	assert_true(unresolved_fresh(&u, &f->table, &cur, &prev));
}

/* A culprit added twice is listed once, the list sorted for the search. */
static void add_keeps_one_sorted_copy(void **state)
{
	struct unresolved u = {};

	assert_int_equal(unresolved_add(&u, GONE_C), 0);
	assert_int_equal(unresolved_add(&u, GONE_A), 0);
	assert_int_equal(unresolved_add(&u, GONE_C), 0);
	assert_int_equal(u.n, 2);
	assert_true(u.ids[0] == GONE_A && u.ids[1] == GONE_C);
	assert_true(unresolved_has(&u, GONE_A) && unresolved_has(&u, GONE_C));
	assert_false(unresolved_has(&u, GONE_B));
	unresolved_free(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_tracker_knows_nothing),
		cmocka_unit_test(reset_lists_what_the_walk_missed),
		cmocka_unit_test(prev_sample_was_looked_at),
		cmocka_unit_test(add_keeps_one_sorted_copy),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
