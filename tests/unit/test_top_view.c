// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* koord-top's pure parts: rows, sorting, the QoS filter, numbers and paths for a terminal. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "escape.h"
#include "top_view.h"

static void wait_humanized(void **state)
{
	char b[32];

	assert_string_equal(top_fmt_wait(b, sizeof(b), 0, true), "0");
	assert_string_equal(top_fmt_wait(b, sizeof(b), 850, true), "850ns");
	assert_string_equal(top_fmt_wait(b, sizeof(b), 4210, true), "4.21\xc2\xb5s");
	assert_string_equal(top_fmt_wait(b, sizeof(b), 4210, false), "4.21us");
	assert_string_equal(top_fmt_wait(b, sizeof(b), 9999, false), "10.0us");
	assert_string_equal(top_fmt_wait(b, sizeof(b), 12345, false), "12.3us");
	assert_string_equal(top_fmt_wait(b, sizeof(b), 640000, false), "640us");
	assert_string_equal(top_fmt_wait(b, sizeof(b), 999600, false), "1.00ms");
	assert_string_equal(top_fmt_wait(b, sizeof(b), 1250000, false), "1.25ms");
	assert_string_equal(top_fmt_wait(b, sizeof(b), 12300000, false), "12.3ms");
	assert_string_equal(top_fmt_wait(b, sizeof(b), 150000000, false), "150ms");
	assert_string_equal(top_fmt_wait(b, sizeof(b), 1500000000, false), "1.50s");
	assert_string_equal(top_fmt_wait(b, sizeof(b), 68719476736ull, false), "68.7s");
	/* every value fits the 8-column field */
	for (unsigned long long ns = 1; ns < (1ull << 44); ns = ns * 3 / 2 + 1) {
		assert_true(top_width(top_fmt_wait(b, sizeof(b), ns, true)) <= 8);
		assert_true(strlen(top_fmt_wait(b, sizeof(b), ns, false)) <= 8);
	}
}

static void paths_escaped(void **state)
{
	char b[128];

	escape_text("/kubepods/besteffort/pod1/hog", b, sizeof(b), true);
	assert_string_equal(b, "/kubepods/besteffort/pod1/hog");
	escape_text("/evil\tname\x1b[31m\\x", b, sizeof(b), true);
	assert_string_equal(b, "/evil\\x09name\\x1b[31m\\\\x");
	escape_text("/a\nb\x7f", b, sizeof(b), true);
	assert_string_equal(b, "/a\\nb\\x7f");
	/* valid UTF-8 stays in a UTF-8 terminal, is escaped elsewhere */
	escape_text("/caf\xc3\xa9", b, sizeof(b), true);
	assert_string_equal(b, "/caf\xc3\xa9");
	escape_text("/caf\xc3\xa9", b, sizeof(b), false);
	assert_string_equal(b, "/caf\\xc3\\xa9");
	/* C1 controls (U+009B is a CSI), invalid and truncated sequences, overlongs */
	escape_text("/\xc2\x9b" "2J", b, sizeof(b), true);
	assert_string_equal(b, "/\\xc2\\x9b2J");
	escape_text("/\xff\xe2\x80", b, sizeof(b), true);
	assert_string_equal(b, "/\\xff\\xe2\\x80");
	escape_text("/\xc0\xaf", b, sizeof(b), true);
	assert_string_equal(b, "/\\xc0\\xaf");
	/* a short buffer cuts at an escape's boundary and terminates */
	assert_int_equal(escape_text("/\x1b\x1b", b, 7, true), 5);
	assert_string_equal(b, "/\\x1b");
}

static void paths_cut_from_the_left(void **state)
{
	char b[64];

	assert_int_equal(top_fit_left("/short", b, sizeof(b), 10, true), 6);
	assert_string_equal(b, "/short");
	top_fit_left("/kubepods/besteffort/pod1/hog", b, sizeof(b), 10, true);
	assert_string_equal(b, "\xe2\x80\xa6" "/pod1/hog");
	assert_int_equal(top_width(b), 10);
	top_fit_left("/kubepods/besteffort/pod1/hog", b, sizeof(b), 10, false);
	assert_string_equal(b, "...od1/hog");
	/* multi-byte code points are never split */
	top_fit_left("/\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", b, sizeof(b), 3, true);
	assert_string_equal(b, "\xe2\x80\xa6\xc3\xa9\xc3\xa9");
	assert_int_equal(top_width(b), 3);
	top_fit_left("/abcdef", b, sizeof(b), 1, true);
	assert_string_equal(b, "\xe2\x80\xa6");
	top_fit_left("/abcdef", b, sizeof(b), 0, true);
	assert_string_equal(b, "");
	top_fit_left("/abcdef", b, sizeof(b), 2, false);
	assert_string_equal(b, "..");
}

static struct container ctr[4] = {
	{ .id = 10, .path = "/kubepods/besteffort/pod1/hog", .ident = { .qos = KC_BE } },
	{ .id = 11, .path = "/kubepods/burstable/pod2/web", .ident = { .qos = KC_LS } },
	{ .id = 12, .path = "/system.slice/sshd.service", .ident = { .qos = KC_SYSTEM } },
	{ .id = 13, .path = "/kubepods/pod3/db", .ident = { .qos = KC_LSR } },
};

static void make_rows(struct top_row *r, struct cg_window *w)
{
	memset(w, 0, 4 * sizeof(*w));
	for (int i = 0; i < 4; i++)
		w[i].cgid = ctr[i].id;
	w[0].cpu_ns = 900000000;	/* 90% of a 1 s window */
	w[0].inflicted_online_ns = 250000000;
	w[1].cpu_ns = 100000000;
	w[1].wait_ns = 300000000;
	w[1].steal_ns[KC_BE] = 200000000;	/* 50% of cpu + wait */
	w[1].p99_ns = 5000000;
	w[1].p50_ns = 20000;
	w[2].cpu_ns = 5000000;
	w[2].p99_ns = 8000;
	w[3].cpu_ns = 300000000;
	w[3].p99_ns = 40000;
	w[3].pmu_source = PMU_SOURCE_SOFTWARE;
	w[3].pmu[PMU_CYCLES] = 3000;
	w[3].pmu[PMU_INSTRUCTIONS] = 2000;
	w[3].pmu[PMU_LLC_MISSES] = 10;
	for (int i = 0; i < 4; i++)
		top_row_make(&r[i], &w[i], &ctr[i], 1000000000);
}

static void rows_computed(void **state)
{
	struct cg_window w[4];
	struct top_row r[4], u;

	make_rows(r, w);
	assert_true(fabs(r[0].cpu_pct - 90) < 1e-9);
	assert_true(fabs(r[0].infl_ms_s - 250) < 1e-9);
	assert_int_equal(r[0].qos, KC_BE);
	assert_true(fabs(r[1].be_pct - 50) < 1e-9);
	assert_true(isnan(r[0].cpi) && isnan(r[0].mpki));	/* no counters: "-", never 0 */
	assert_true(fabs(r[3].cpi - 1.5) < 1e-9);
	assert_true(fabs(r[3].mpki - 5) < 1e-9);
	top_row_make(&u, &w[0], NULL, 0);
	assert_int_equal(u.qos, KC_UNCLASSIFIED);
	assert_null(u.path);
	assert_true(u.cpu_pct == 0 && u.infl_ms_s == 0);
}

static void rows_sorted_and_filtered(void **state)
{
	struct cg_window w[4];
	struct top_row r[4];

	make_rows(r, w);
	top_rows_sort(r, 4, TOP_COL_P99, false);
	assert_int_equal(r[0].cgid, 11);
	assert_int_equal(r[1].cgid, 13);
	assert_int_equal(r[2].cgid, 12);
	assert_int_equal(r[3].cgid, 10);
	top_rows_sort(r, 4, TOP_COL_P99, true);
	assert_int_equal(r[0].cgid, 10);
	top_rows_sort(r, 4, TOP_COL_CPU, false);
	assert_int_equal(r[0].cgid, 10);
	assert_int_equal(r[3].cgid, 12);
	top_rows_sort(r, 4, TOP_COL_BE, false);
	assert_int_equal(r[0].cgid, 11);
	top_rows_sort(r, 4, TOP_COL_INFL, false);
	assert_int_equal(r[0].cgid, 10);
	/* rows without counters last by CPI, also reversed */
	top_rows_sort(r, 4, TOP_COL_CPI, false);
	assert_int_equal(r[0].cgid, 13);
	top_rows_sort(r, 4, TOP_COL_CPI, true);
	assert_int_equal(r[0].cgid, 13);
	/* ties by path: stable between refreshes */
	top_rows_sort(r, 4, TOP_COL_MPKI, false);
	assert_int_equal(r[1].cgid, 10);
	assert_int_equal(r[2].cgid, 11);
	top_rows_sort(r, 4, TOP_COL_CGROUP, false);
	assert_string_equal(r[0].path, "/kubepods/besteffort/pod1/hog");
	assert_string_equal(r[3].path, "/system.slice/sshd.service");
	top_rows_sort(r, 4, TOP_COL_CGROUP, true);
	assert_string_equal(r[0].path, "/system.slice/sshd.service");
	top_rows_sort(r, 4, TOP_COL_QOS, false);
	assert_int_equal(r[0].qos, KC_BE);
	assert_int_equal(r[3].qos, KC_SYSTEM);

	assert_int_equal(top_rows_filter(r, 4, TOP_FILTER_ALL), 4);
	assert_int_equal(top_rows_filter(r, 4, KC_LSE), 0);
	assert_int_equal(top_rows_filter(r, 4, KC_BE), 1);
	assert_int_equal(r[0].cgid, 10);
}

static void filter_cycle_and_keys(void **state)
{
	int f = TOP_FILTER_ALL;
	const char *seen[7];

	for (int i = 0; i < 7; i++) {
		seen[i] = top_filter_name(f);
		f = top_filter_next(f);
	}
	assert_string_equal(seen[0], "all");
	assert_string_equal(seen[1], "LSE");
	assert_string_equal(seen[2], "LSR");
	assert_string_equal(seen[3], "LS");
	assert_string_equal(seen[4], "BE");
	assert_string_equal(seen[5], "SYSTEM");
	assert_string_equal(seen[6], "all");
	assert_int_equal(top_filter_parse("be"), KC_BE);
	assert_int_equal(top_filter_parse("ALL"), TOP_FILTER_ALL);
	assert_int_equal(top_filter_parse("nope"), -2);
	assert_int_equal(top_col_of_key('p'), TOP_COL_P99);
	assert_int_equal(top_col_of_key('c'), TOP_COL_CPU);
	assert_int_equal(top_col_of_key('b'), TOP_COL_BE);
	assert_int_equal(top_col_of_key('i'), TOP_COL_INFL);
	assert_int_equal(top_col_of_key('q'), -1);
	for (int i = 0; i < TOP_COL_NR; i++)
		assert_int_equal(top_col_of_key(top_key_of_col(i)), i);
}

static void table_lines(void **state)
{
	struct cg_window w[4];
	struct top_row r[4];
	char b[512];
	size_t off = 0, len = 0, n;

	make_rows(r, w);
	n = top_format_header(b, sizeof(b), TOP_COL_P99, &off, &len);
	assert_int_equal(n, strlen(b));
	assert_int_equal(len, 3);
	assert_memory_equal(b + off, "P99", 3);
	assert_string_equal(b + TOP_FIXED_WIDTH, "CGROUP");
	assert_true(strncmp(b, "QOS ", 4) == 0);
	top_format_header(b, sizeof(b), TOP_COL_QOS, &off, &len);
	assert_int_equal(off, 0);

	top_format_row(b, sizeof(b), &r[0], true, 0);
	assert_string_equal(b + TOP_FIXED_WIDTH, "/kubepods/besteffort/pod1/hog");
	assert_true(strncmp(b, "BE  ", 4) == 0);
	assert_non_null(strstr(b, " 90.0 "));
	assert_non_null(strstr(b, " 250.0 "));
	assert_non_null(strstr(b, "      -       -  /"));	/* CPI and MPKI without counters */
	/* µ takes two bytes, one column: the path still starts at the same column */
	top_format_row(b, sizeof(b), &r[1], true, 12);
	assert_int_equal(top_width(b), TOP_FIXED_WIDTH + 12);
	assert_non_null(strstr(b, "20.0\xc2\xb5s"));
	assert_non_null(strstr(b, "\xe2\x80\xa6" "le/pod2/web"));
	top_format_row(b, sizeof(b), &r[3], false, 0);
	assert_non_null(strstr(b, "  1.50    5.00  /kubepods/pod3/db"));
	/* a short buffer is cut, terminated */
	n = top_format_row(b, 20, &r[0], true, 0);
	assert_true(n < 20);
	assert_int_equal(strlen(b), n);
}

/* Where the kubelet named a container, its row says so after the path; a cut keeps the names. */
static void rows_named(void **state)
{
	struct container named = { .id = 11, .path = "/kubepods/burstable/pod2/web",
				   .ident = { .qos = KC_LS, .namespace = "shop", .pod_name = "web-7f",
					      .container = "nginx" } };
	struct cg_window w = { .cgid = 11, .cpu_ns = 1000 };
	struct top_row r;
	char b[512];

	top_row_make(&r, &w, &named, 1000000000);
	top_format_row(b, sizeof(b), &r, false, 0);
	assert_string_equal(b + TOP_FIXED_WIDTH, "/kubepods/burstable/pod2/web (shop/web-7f/nginx)");
	top_format_row(b, sizeof(b), &r, false, 20);
	assert_string_equal(b + TOP_FIXED_WIDTH, "...hop/web-7f/nginx)");
	named.ident.container[0] = '\0';	/* a pod's own cgroup */
	top_format_row(b, sizeof(b), &r, false, 0);
	assert_string_equal(b + TOP_FIXED_WIDTH, "/kubepods/burstable/pod2/web (shop/web-7f)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wait_humanized),
		cmocka_unit_test(paths_escaped),
		cmocka_unit_test(paths_cut_from_the_left),
		cmocka_unit_test(rows_computed),
		cmocka_unit_test(rows_sorted_and_filtered),
		cmocka_unit_test(filter_cycle_and_keys),
		cmocka_unit_test(table_lines),
		cmocka_unit_test(rows_named),
	};

	return cmocka_run_group_tests_name("top_view", tests, NULL, NULL);
}
