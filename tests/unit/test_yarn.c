/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* YARN container names: application, attempt and container from Hadoop's ContainerId. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include "classify.h"
#include "report.h"
#include "yarn.h"

static void test_parse(void **state)
{
	struct yarn_id id;
	char buf[64];

	/* with the RM's epoch, as NodeManager names them after an RM restart */
	assert_int_equal(yarn_parse("container_e17_1410901177871_0001_01_000005", &id), 0);
	assert_int_equal(id.epoch, 17);
	assert_int_equal(id.cluster_ts, 1410901177871ull);
	assert_int_equal(id.app, 1);
	assert_int_equal(id.attempt, 1);
	assert_int_equal(id.container, 5);
	yarn_application_id(&id, buf, sizeof(buf));
	assert_string_equal(buf, "application_1410901177871_0001");
	yarn_attempt_id(&id, buf, sizeof(buf));
	assert_string_equal(buf, "appattempt_1410901177871_0001_000001");

	/* without an epoch; numbers past their padding */
	assert_int_equal(yarn_parse("container_1700000000000_12345_02_1000001", &id), 0);
	assert_int_equal(id.epoch, 0);
	assert_int_equal(id.app, 12345);
	assert_int_equal(id.attempt, 2);
	assert_int_equal(id.container, 1000001);
	yarn_application_id(&id, buf, sizeof(buf));
	assert_string_equal(buf, "application_1700000000000_12345");
}

static void test_not_yarn(void **state)
{
	static const char *const bad[] = {
		"", "container_", "container_1_2_3", "container_1_2_3_4_5", "container_e_1_2_3_4",
		"container_e1_1_2_3", "container_1_2_3_x", "container_1_2_3_4x", "container_-1_2_3_4",
		"container_ 1_2_3_4", "Container_1_2_3_4", "container_1__3_4",
		"container_99999999999999999999_1_1_1", "application_1_2",
	};
	struct yarn_id id;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		id.app = 7;
		assert_int_equal(yarn_parse(bad[i], &id), -EINVAL);
		assert_int_equal(id.app, 0);
	}
}

/* What the classifier takes for a YARN container, the parser reads (and only that). */
static void test_agrees_with_classify(void **state)
{
	static const char *const names[] = {
		"container_e17_1410901177871_0001_01_000005", "container_1_2_3_4",
		"container_1_2_3", "container_e1_1_2_3_4", "containerx_1_2_3_4",
	};
	struct cg_identity cid;
	struct yarn_id id;
	char path[128];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "/hadoop-yarn/%s", names[i]);
		classify_path(path, &cid);
		assert_int_equal(cid.kind == CG_YARN, yarn_parse(names[i], &id) == 0);
	}
}

/* The container's JSON names the task's application and attempt; other containers have no "yarn". */
static void test_json(void **state)
{
	struct container c = { .id = 1, .path = "/hadoop-yarn/container_e02_1700000000000_0042_03_000007" };
	struct cg_window cw = { .cgid = 1 };
	json_object *o, *y;

	classify_path(c.path, &c.ident);
	o = report_container_json(&cw, &c);
	assert_true(json_object_object_get_ex(o, "yarn", &y));
	assert_string_equal(json_object_get_string(json_object_object_get(y, "application_id")),
			    "application_1700000000000_0042");
	assert_string_equal(json_object_get_string(json_object_object_get(y, "attempt_id")),
			    "appattempt_1700000000000_0042_000003");
	assert_int_equal(json_object_get_int64(json_object_object_get(y, "epoch")), 2);
	assert_int_equal(json_object_get_int64(json_object_object_get(y, "container")), 7);
	assert_string_equal(json_object_get_string(json_object_object_get(o, "qos")), "BE");
	json_object_put(o);

	c.path = "/kubepods/besteffort/pod0a1b2c3d-1111-2222-3333-444455556666/abc";
	classify_path(c.path, &c.ident);
	o = report_container_json(&cw, &c);
	assert_false(json_object_object_get_ex(o, "yarn", NULL));
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_not_yarn),
		cmocka_unit_test(test_agrees_with_classify),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
