/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kubernetes quantities as pod requests write them. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "quantity.h"

static void test_good(void **state)
{
	static const struct { const char *s; double v; } cases[] = {
		{ "2", 2 }, { "500m", 0.5 }, { "100m", 0.1 }, { "1.5", 1.5 }, { ".5", 0.5 },
		{ "250000u", 0.25 }, { "5n", 5e-9 }, { "1k", 1000 }, { "3M", 3e6 }, { "2G", 2e9 },
		{ "1Ki", 1024 }, { "64Mi", 64.0 * 1048576 }, { "1.5Gi", 1.5 * 1073741824.0 },
		{ "1Ti", 1099511627776.0 }, { "1E", 1e18 }, { "1E3", 1000 }, { "1e3", 1000 },
		{ "12e-1", 1.2 }, { "+1", 1 }, { "0", 0 },
	};
	size_t i;
	double v;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = -1;
		if (quantity_parse(cases[i].s, &v))
			fail_msg("refused \"%s\"", cases[i].s);
		if (v != cases[i].v && (v - cases[i].v) / cases[i].v > 1e-12)
			fail_msg("\"%s\": %g, want %g", cases[i].s, v, cases[i].v);
	}
}

static void test_bad(void **state)
{
	static const char *const bad[] = {
		"", "m", "-1", "1x", "1 ", " 1", "1mi", "1KI", "0x10", "1e", "1e3m", "inf", "nan",
		"1..2", "1Gi1", "1e999", "1Ei1", ".", "1,5",
	};
	double v = 7;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (quantity_parse(bad[i], &v) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_true(v == 7);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
