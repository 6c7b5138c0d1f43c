/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Victim detection over windows, and the closed loop's verdict on an action. */
#include <errno.h>
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
#include "detect.h"
#include "hist.h"

#define LS_CTR	"/kubepods/burstable/pod6f5b3b1e-2f4c-4c1e-9a7e-0d3c2b1a0f9e/0123abcd"
#define BE_CTR	"/kubepods/besteffort/pod7a8b9c0d-2222-4b4b-8c8c-0123456789ab/4567cdef"

/* @n waits of @ns each. */
static void fill(struct waits *w, __u64 ns, __u64 n)
{
	w->hist[hist_bucket(ns)] += n;
	w->count += n;
	w->sum_ns += n * ns;
	if (ns > w->max_ns)
		w->max_ns = ns;
}

static void test_judge(void **state)
{
	struct waits before = {}, after = {};

	fill(&before, 10000, 1000);
	fill(&after, 1000000, 100);
	fill(&after, 10000, 900);
	assert_int_equal(effect_judge(&before, &after, 10), EFFECT_WORSE);
	assert_int_equal(effect_judge(&after, &before, 10), EFFECT_BETTER);
	assert_int_equal(effect_judge(&before, &before, 10), EFFECT_SAME);

	/* 10 -> 15 us is 50% worse but within the slack: noise, not harm */
	memset(&after, 0, sizeof(after));
	fill(&after, 15000, 1000);
	assert_int_equal(effect_judge(&before, &after, 10), EFFECT_SAME);

	/* a tail that shrinks only at p99.9 still counts as better */
	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	fill(&before, 10000, 1000);
	fill(&before, 3000000, 5);
	fill(&after, 10000, 1000);
	assert_int_equal(effect_judge(&before, &after, 10), EFFECT_BETTER);

	/* too few waits on a side */
	memset(&after, 0, sizeof(after));
	fill(&after, 1000000, EFFECT_MIN_WAITS - 1);
	assert_int_equal(effect_judge(&before, &after, 10), EFFECT_INCONCLUSIVE);
}

struct fixture {
	char dir[64];
	struct container_table t;
	__u64 ls, be;
	struct koord_config c;
};

static int mkdirs(char *path)
{
	char *p;

	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	return mkdir(path, 0755);
}

static __u64 ino(const char *dir, const char *rel)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", dir, rel);
	return stat(path, &st) ? 0 : st.st_ino;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char path[256];

	strcpy(fx->dir, "/tmp/koord-detect-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(path, sizeof(path), "%s%s", fx->dir, LS_CTR);
	assert_int_equal(mkdirs(path), 0);
	snprintf(path, sizeof(path), "%s%s", fx->dir, BE_CTR);
	assert_int_equal(mkdirs(path), 0);
	assert_int_equal(container_table_scan(&fx->t, fx->dir, NULL, NULL), 0);
	fx->ls = ino(fx->dir, LS_CTR);
	fx->be = ino(fx->dir, BE_CTR);
	fx->c.interference.victim_p99_wait_us = 1000;
	fx->c.interference.be_steal_percent = 5;
	fx->c.interference.sustained_windows = 2;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	container_table_free(&fx->t);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

/* A one-second window where the LS container's p99 is @p99_ns and the BE one ran. */
static void window_of(struct fixture *fx, struct window *w, struct cg_window *v, __u64 p99_ns)
{
	static struct hist_cell cell;

	memset(v, 0, 2 * sizeof(*v));
	v[0] = (struct cg_window){ .cgid = fx->ls < fx->be ? fx->ls : fx->be };
	v[1] = (struct cg_window){ .cgid = fx->ls < fx->be ? fx->be : fx->ls };
	for (int i = 0; i < 2; i++) {
		if (v[i].cgid != fx->ls)
			continue;
		v[i].p99_ns = p99_ns;
		v[i].wait_count = 100;
		cell = (struct hist_cell){ hist_bucket(p99_ns), 100 };
		v[i].hist = &cell;
		v[i].nhist = 1;
		v[i].wait_max = p99_ns;
	}
	*w = (struct window){ .dur_ns = 1000000000, .v = v, .n = 2 };
}

static void test_streaks(void **state)
{
	struct fixture *fx = *state;
	struct detector d = {};
	struct cg_window v[2];
	struct window w;

	window_of(fx, &w, v, 2000000);
	assert_int_equal(detect_update(&d, &w, &fx->t, &fx->c), 0);
	assert_int_equal(d.n, 1);	/* only the online container is watched */
	assert_int_equal(d.victims, 0);	/* one window is not sustained */
	assert_int_equal(detect_update(&d, &w, &fx->t, &fx->c), 0);
	assert_int_equal(d.victims, 1);
	assert_true(detect_is_victim(detect_find(&d, fx->ls), &fx->c));
	assert_int_equal(detect_find(&d, fx->ls)->acc->count, 200);
	assert_null(detect_find(&d, fx->be));

	/* a quiet window ends the streak and drops the baseline */
	window_of(fx, &w, v, 20000);
	assert_int_equal(detect_update(&d, &w, &fx->t, &fx->c), 0);
	assert_int_equal(d.victims, 0);
	assert_null(detect_find(&d, fx->ls)->acc);

	/* BE steal alone makes a victim too */
	window_of(fx, &w, v, 20000);
	for (int i = 0; i < 2; i++)
		if (v[i].cgid == fx->ls)
			v[i].steal_ns[KC_BE] = 60000000;	/* 6% of the window */
	detect_update(&d, &w, &fx->t, &fx->c);
	detect_update(&d, &w, &fx->t, &fx->c);
	assert_int_equal(d.victims, 1);

	/* a container gone from the window is forgotten */
	w.n = 0;
	assert_int_equal(detect_update(&d, &w, &fx->t, &fx->c), 0);
	assert_int_equal(d.n, 0);
	detect_free(&d);
}

static void test_feed(void **state)
{
	struct fixture *fx = *state;
	struct waits before = {};
	struct cg_window v[2];
	struct effect e;
	struct window w;
	char msg[256];

	fill(&before, 20000, 100);
	effect_begin(&e, "test action", 1, 0, NULL, 0, &before, 2);
	window_of(fx, &w, v, 2000000);
	assert_int_equal(effect_feed(&e, &w, &fx->t, 10), EFFECT_PENDING);
	assert_int_equal(effect_feed(&e, &w, &fx->t, 10), EFFECT_WORSE);
	assert_false(e.pending);
	assert_int_equal(e.after.count, 200);	/* the online container only */
	effect_describe(&e, msg, sizeof(msg));
	assert_non_null(strstr(msg, "online p99 wait 20 us -> "));

	/* measured on named victims: the others do not count */
	effect_begin(&e, "test action", 1, 0, (__u64[]){ fx->be }, 1, &before, 1);
	assert_int_equal(effect_feed(&e, &w, &fx->t, 10), EFFECT_INCONCLUSIVE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_judge),
		cmocka_unit_test_setup_teardown(test_streaks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_feed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
