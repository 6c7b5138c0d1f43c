/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Parsers of cgroup control files: CFS quota and period. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "cgfile.h"

static void test_quota_v2(void **state)
{
	long q = 7, p = 7;

	assert_int_equal(quota_parse("max 100000", true, &q, &p), 0);
	assert_int_equal(q, -1);
	assert_int_equal(p, 100000);
	assert_int_equal(quota_parse("50000 250000\n", true, &q, &p), 0);
	assert_int_equal(q, 50000);
	assert_int_equal(p, 250000);
	/* refused: the value is left alone */
	q = p = 7;
	assert_int_equal(quota_parse("max", true, &q, &p), -EINVAL);
	assert_int_equal(quota_parse("50000", true, &q, &p), -EINVAL);
	assert_int_equal(quota_parse("-1 100000", true, &q, &p), -EINVAL);
	assert_int_equal(quota_parse("50000  100000", true, &q, &p), -EINVAL);
	assert_int_equal(quota_parse("50000 100000 1", true, &q, &p), -EINVAL);
	assert_int_equal(quota_parse("50000 999", true, &q, &p), -EINVAL);
	assert_int_equal(quota_parse("50000 1000001", true, &q, &p), -EINVAL);
	assert_int_equal(quota_parse("17592186044416 100000", true, &q, &p), -EINVAL);
	assert_int_equal(quota_parse("99999999999999999999 100000", true, &q, &p), -EINVAL);
	assert_int_equal(quota_parse("maxi 100000", true, &q, &p), -EINVAL);
	assert_int_equal(quota_parse("", true, &q, &p), -EINVAL);
	assert_int_equal(q, 7);
	assert_int_equal(p, 7);
}

static void test_quota_v1(void **state)
{
	long q, p = 7;

	assert_int_equal(quota_parse("-1", false, &q, &p), 0);
	assert_int_equal(q, -1);
	assert_int_equal(p, 0);
	assert_int_equal(quota_parse("17592186044415\n", false, &q, &p), 0);
	assert_int_equal(q, 17592186044415L);
	assert_int_equal(quota_parse("-2", false, &q, &p), -EINVAL);
	assert_int_equal(quota_parse("max", false, &q, &p), -EINVAL);
	assert_int_equal(quota_parse("12x", false, &q, &p), -EINVAL);
	assert_int_equal(quota_parse(" 12", false, &q, &p), -EINVAL);
}

static void test_period(void **state)
{
	assert_int_equal(quota_period_parse("100000\n"), 100000);
	assert_int_equal(quota_period_parse("1000"), 1000);
	assert_int_equal(quota_period_parse("1000000"), 1000000);
	assert_int_equal(quota_period_parse("999"), -EINVAL);
	assert_int_equal(quota_period_parse("-100000"), -EINVAL);
	assert_int_equal(quota_period_parse("100000 1"), -EINVAL);
	assert_int_equal(quota_period_parse(""), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quota_v2),
		cmocka_unit_test(test_quota_v1),
		cmocka_unit_test(test_period),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
