/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The culprit throttle: cuts, the floor, quiet recovery, release, hysteresis. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "throttle.h"

#define CAPACITY 8.0
#define DT 1.0

/* Binary fractions, so the limits compare exactly. */
static struct koord_config cfg(void)
{
	struct koord_config c;

	memset(&c, 0, sizeof(c));
	c.throttle.enable = true;
	c.throttle.cut_factor = 0.5;
	c.throttle.floor_cores = 0.25;
	c.throttle.recovery_step_cores = 0.5;
	c.throttle.quiet_windows = 3;
	return c;
}

static enum throttle_step hurt(struct throttle_state *st, double used)
{
	struct koord_config c = cfg();

	return throttle_update(st, &c, true, used, CAPACITY, DT);
}

static enum throttle_step quiet(struct throttle_state *st, double used)
{
	struct koord_config c = cfg();

	return throttle_update(st, &c, false, used, CAPACITY, DT);
}

/* @n quiet windows that must not change the limit. */
static void quiet_none(struct throttle_state *st, int n, double used)
{
	double limit = st->limit_cores;

	while (n--) {
		assert_int_equal(quiet(st, used), TH_NONE);
		assert_true(st->active);
		assert_float_equal(st->limit_cores, limit, 0);
	}
}

static void test_idle(void **state)
{
	struct throttle_state st = { 0 };

	assert_int_equal(quiet(&st, 7), TH_NONE);
	assert_false(st.active);
	assert_int_equal(st.quiet, 0);
}

static void test_cut_to_floor(void **state)
{
	struct throttle_state st = { 0 };

	/* the first cut starts from what it used */
	assert_int_equal(hurt(&st, 4), TH_CUT);
	assert_true(st.active);
	assert_float_equal(st.limit_cores, 2, 0);
	assert_int_equal(hurt(&st, 2), TH_CUT);
	assert_float_equal(st.limit_cores, 1, 0);
	assert_int_equal(hurt(&st, 1), TH_CUT);
	assert_float_equal(st.limit_cores, 0.5, 0);
	assert_int_equal(hurt(&st, 0.5), TH_CUT);
	assert_float_equal(st.limit_cores, 0.25, 0);
	assert_float_equal(st.at_floor_s, 0, 0);
	/* at the floor: no more cuts, the time there adds up */
	assert_int_equal(hurt(&st, 0.25), TH_NONE);
	assert_float_equal(st.limit_cores, 0.25, 0);
	assert_float_equal(st.at_floor_s, DT, 0);
	assert_int_equal(hurt(&st, 0.25), TH_NONE);
	assert_float_equal(st.at_floor_s, 2 * DT, 0);
}

static void test_first_cut_bounds(void **state)
{
	struct throttle_state st = { 0 };

	/* never from more than the node */
	assert_int_equal(hurt(&st, 20), TH_CUT);
	assert_float_equal(st.limit_cores, CAPACITY / 2, 0);

	/* never below the floor, even from almost nothing */
	memset(&st, 0, sizeof(st));
	assert_int_equal(hurt(&st, 0.1), TH_CUT);
	assert_float_equal(st.limit_cores, 0.25, 0);
	assert_int_equal(hurt(&st, 0.1), TH_NONE);
	assert_float_equal(st.at_floor_s, DT, 0);

	/* a cut that would pass the floor stops at it */
	memset(&st, 0, sizeof(st));
	assert_int_equal(hurt(&st, 0.75), TH_CUT);
	assert_float_equal(st.limit_cores, 0.375, 0);
	assert_int_equal(hurt(&st, 0.375), TH_CUT);
	assert_float_equal(st.limit_cores, 0.25, 0);
}

static void test_recover(void **state)
{
	struct throttle_state st = { 0 };

	assert_int_equal(hurt(&st, 0.4), TH_CUT);	/* 0.25: the floor */
	assert_int_equal(hurt(&st, 0.25), TH_NONE);
	assert_float_equal(st.at_floor_s, DT, 0);
	/* one quiet window is not enough, nor two */
	quiet_none(&st, 2, 0.25);
	assert_int_equal(st.quiet, 2);
	/* time at the floor is kept until it leaves the floor */
	assert_float_equal(st.at_floor_s, DT, 0);
	assert_int_equal(quiet(&st, 0.25), TH_RECOVER);
	assert_float_equal(st.limit_cores, 0.75, 0);
	assert_int_equal(st.quiet, 0);
	assert_float_equal(st.at_floor_s, 0, 0);
	/* and again after another full run */
	quiet_none(&st, 2, 0.75);
	assert_int_equal(quiet(&st, 0.75), TH_RECOVER);
	assert_float_equal(st.limit_cores, 1.25, 0);
}

static void test_hurt_resets_quiet(void **state)
{
	struct throttle_state st = { 0 };

	assert_int_equal(hurt(&st, 4), TH_CUT);	/* 2 */
	quiet_none(&st, 2, 2);
	/* hurting again in the middle: cut, and the quiet run starts over */
	assert_int_equal(hurt(&st, 2), TH_CUT);
	assert_float_equal(st.limit_cores, 1, 0);
	assert_int_equal(st.quiet, 0);
	quiet_none(&st, 2, 1);
	assert_int_equal(quiet(&st, 1), TH_RECOVER);
	assert_float_equal(st.limit_cores, 1.5, 0);

	/* at the floor the hurting window changes nothing but the quiet run */
	memset(&st, 0, sizeof(st));
	assert_int_equal(hurt(&st, 0.25), TH_CUT);
	quiet_none(&st, 2, 0.25);
	assert_int_equal(hurt(&st, 0.25), TH_NONE);
	assert_int_equal(st.quiet, 0);
	quiet_none(&st, 2, 0.25);
	assert_int_equal(quiet(&st, 0.25), TH_RECOVER);
}

static void test_release(void **state)
{
	struct throttle_state st = { .active = true, .limit_cores = 7.5 };

	/* the limit reaches the node: no limit */
	quiet_none(&st, 2, 7.5);
	assert_int_equal(quiet(&st, 7.5), TH_RELEASE);
	assert_false(st.active);
	assert_int_equal(st.quiet, 0);
	assert_float_equal(st.at_floor_s, 0, 0);
	/* released is idle again */
	assert_int_equal(quiet(&st, 7.5), TH_NONE);

	/* it uses more than a step less than its limit: the limit does not bind */
	memset(&st, 0, sizeof(st));
	assert_int_equal(hurt(&st, 4), TH_CUT);	/* 2 */
	quiet_none(&st, 2, 1);
	assert_int_equal(quiet(&st, 1.25), TH_RELEASE);
	assert_false(st.active);

	/* exactly a step below still binds: recover */
	memset(&st, 0, sizeof(st));
	assert_int_equal(hurt(&st, 4), TH_CUT);	/* 2 */
	quiet_none(&st, 2, 1.5);
	assert_int_equal(quiet(&st, 1.5), TH_RECOVER);
	assert_float_equal(st.limit_cores, 2.5, 0);

	/* after a release, hurting starts over from what it uses */
	st = (struct throttle_state){ .active = true, .limit_cores = 7.75, .at_floor_s = 5 };
	quiet_none(&st, 2, 7.75);
	assert_int_equal(quiet(&st, 7.75), TH_RELEASE);
	assert_float_equal(st.at_floor_s, 0, 0);
	assert_int_equal(hurt(&st, 3), TH_CUT);
	assert_true(st.active);
	assert_float_equal(st.limit_cores, 1.5, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_cut_to_floor),
		cmocka_unit_test(test_first_cut_bounds),
		cmocka_unit_test(test_recover),
		cmocka_unit_test(test_hurt_resets_quiet),
		cmocka_unit_test(test_release),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
