/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* koord-top --from: a window and its containers read back from the schema's JSON. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "report.h"
#include "report_parse.h"

/* Two containers as a daemon knows them: one named by the kubelet, one YARN task. */
static void make(struct window *w, struct container_table *t)
{
	struct container *cs = calloc(2, sizeof(*cs));
	struct cg_window *v = calloc(2, sizeof(*v));

	assert_non_null(cs);
	assert_non_null(v);
	cs[0] = (struct container){ .id = 11, .path = strdup("/kubepods/burstable/pod5f/probe") };
	cs[0].ident.qos = KC_LS;
	strcpy(cs[0].ident.pod_uid, "5f6e3c1a-4444-4a4a-9b9b-0123456789ab");
	strcpy(cs[0].ident.container_id, "probe");
	strcpy(cs[0].ident.namespace, "shop");
	strcpy(cs[0].ident.pod_name, "web-0");
	strcpy(cs[0].ident.container, "app");
	cs[1] = (struct container){ .id = 42,
				    .path = strdup("/hadoop-yarn/container_e02_1700000000000_0042_03_000007") };
	cs[1].ident.qos = KC_BE;
	strcpy(cs[1].ident.container_id, "container_e02_1700000000000_0042_03_000007");
	v[0] = (struct cg_window){ .cgid = 11, .cpu_ns = 271000000, .wait_count = 2713,
				   .wait_ns = 31000000, .wait_max = 3928300, .p50_ns = 11000,
				   .p99_ns = 3736000 };
	v[0].steal_ns[KC_BE] = 29000000;
	v[0].steal_ns[ST_SELF] = 1000;
	v[1] = (struct cg_window){ .cgid = 42, .cpu_ns = 998000000, .inflicted_online_ns = 29000000,
				   .inflicted_all_ns = 30000000,
				   .pmu_source = PMU_SOURCE_SOFTWARE };
	v[1].pmu[PMU_CYCLES] = 1000;
	v[1].pmu[PMU_INSTRUCTIONS] = 500;
	v[1].pmu[PMU_LLC_MISSES] = 7;
	*w = (struct window){ .dur_ns = 1000000000, .v = v, .n = 2 };
	assert_int_equal(container_table_adopt(t, cs, 2), 0);
}

static char *doc_of(const struct window *w, const struct container_table *t)
{
	json_object *doc = json_object_new_object(), *arr = json_object_new_array();
	json_object *hier = json_object_new_object(), *col = json_object_new_object();
	char *s;
	size_t i;

	json_object_object_add(doc, "period_s", json_object_new_double(1));
	json_object_object_add(doc, "duration_s", json_object_new_double(w->dur_ns / 1e9));
	json_object_object_add(hier, "root", json_object_new_string("/sys/fs/cgroup/cpu"));
	json_object_object_add(hier, "version", json_object_new_int(1));
	json_object_object_add(doc, "hierarchy", hier);
	json_object_object_add(col, "mode", json_object_new_string("tp_btf+task_storage"));
	json_object_object_add(doc, "collector", col);
	for (i = 0; i < w->n; i++)
		json_object_array_add(arr, report_container_json(&w->v[i],
					container_table_get(t, w->v[i].cgid)));
	json_object_object_add(doc, "containers", arr);
	s = strdup(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN));
	json_object_put(doc);
	return s;
}

/* Read back, the document says the same: every field koord-top shows or passes on. */
static void test_round_trip(void **state)
{
	struct container_table t = {};
	struct report_doc d = {};
	struct window w;
	char err[256] = "", *a, *b;

	(void)state;
	make(&w, &t);
	a = doc_of(&w, &t);
	assert_int_equal(report_parse(a, strlen(a), &d, err, sizeof(err)), 0);
	assert_int_equal(d.w.n, 2);
	assert_int_equal(d.w.dur_ns, 1000000000);
	assert_string_equal(d.root, "/sys/fs/cgroup/cpu");
	assert_int_equal(d.version, 1);
	assert_string_equal(d.mode, "tp_btf+task_storage");
	assert_string_equal(container_table_get(&d.t, 11)->ident.container, "app");
	assert_int_equal(container_table_get(&d.t, 42)->ident.qos, KC_BE);
	b = doc_of(&d.w, &d.t);
	assert_string_equal(a, b);
	free(a);
	free(b);
	report_doc_free(&d);
	report_doc_free(&d);	/* twice is fine */
	window_free(&w);
	container_table_free(&t);
}

/* Another document, or a container of another shape: refused with where, nothing kept. */
static void test_refused(void **state)
{
	static const struct {
		const char *doc, *why;
	} bad[] = {
		{ "[]", "not a JSON object" },
		{ "{\"containers\": []}", "no containers or duration_s" },
		{ "{\"duration_s\": 0, \"containers\": []}", "duration_s" },
		{ "{\"duration_s\": 1, \"containers\": [7]}", "containers[0]: a container is not an object" },
		{ "{\"duration_s\": 1, \"containers\": [{\"cgroup\": \"/a\"}]}", "without an id" },
		{ "{\"duration_s\": 1, \"containers\": [{\"id\": 3}]}", "without a cgroup path" },
		{ "{\"duration_s\": 1, \"containers\": [{\"id\": 3, \"cgroup\": \"/a\", \"cpu_ns\": -1, "
		  "\"runq\": {}}]}", "cpu_ns or runq" },
		{ "{\"duration_s\": 1, \"containers\": [{\"id\": 3, \"cgroup\": \"/a\", \"runq\": {}, "
		  "\"steal_ns\": {\"BE\": \"x\"}}]}", "steal_ns" },
		{ "{\"duration_s\": 1, \"containers\": [{\"id\": 3, \"cgroup\": \"/a\", \"runq\": {}}, "
		  "{\"id\": 4}]}", "containers[1]" },
	};
	struct report_doc d = {};
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		err[0] = '\0';
		assert_int_equal(report_parse(bad[i].doc, strlen(bad[i].doc), &d, err, sizeof(err)),
				 -EINVAL);
		if (!strstr(err, bad[i].why))
			fail_msg("%s: \"%s\" lacks \"%s\"", bad[i].doc, err, bad[i].why);
		assert_int_equal(d.w.n, 0);
		assert_int_equal(d.t.n, 0);
	}
	/* an empty node is a document */
	assert_int_equal(report_parse("", 0, &d, err, sizeof(err)), -EINVAL);	/* no answer */
	{
		const char *empty = "{\"duration_s\": 1, \"containers\": []}";

		assert_int_equal(report_parse(empty, strlen(empty), &d, err, sizeof(err)), 0);
	}
	assert_int_equal(d.w.n, 0);
	report_doc_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
