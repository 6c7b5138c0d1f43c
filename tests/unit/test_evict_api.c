/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The Eviction API call: its body, what each answer means, the refusals before any request. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>
#include "evict_api.h"

#define UID "7a8b9c0d-5555-4b4b-8c8c-0123456789ab"

static const char *str_at(json_object *o, const char *a, const char *b, const char *c)
{
	json_object *v = o;

	if (a && !json_object_object_get_ex(v, a, &v))
		return NULL;
	if (b && !json_object_object_get_ex(v, b, &v))
		return NULL;
	if (c && !json_object_object_get_ex(v, c, &v))
		return NULL;
	return json_object_get_string(v);
}

/* policy/v1, the pod's name and namespace, its uid as a precondition */
static void test_body(void **state)
{
	char buf[1024];
	json_object *o;

	(void)state;
	assert_int_equal(evict_api_body(buf, sizeof(buf), "batch", "spark-exec-1.a", UID), 0);
	o = json_tokener_parse(buf);
	assert_non_null(o);
	assert_string_equal(str_at(o, "apiVersion", NULL, NULL), "policy/v1");
	assert_string_equal(str_at(o, "kind", NULL, NULL), "Eviction");
	assert_string_equal(str_at(o, "metadata", "name", NULL), "spark-exec-1.a");
	assert_string_equal(str_at(o, "metadata", "namespace", NULL), "batch");
	assert_string_equal(str_at(o, "deleteOptions", "preconditions", "uid"), UID);
	json_object_put(o);
}

/* Nothing that would change the request's path or JSON gets in. */
static void test_bad_names(void **state)
{
	static const char *const bad[][3] = {
		{ "", "p", UID }, { "batch", "", UID }, { "batch", "p", "" },
		{ "../kube-system", "p", UID }, { "batch", "p/eviction", UID },
		{ "batch", "p?x=1", UID }, { "batch", "P", UID }, { "batch", "p\"", UID },
		{ "batch", "p", "u\"id" }, { "batch", "..", UID }, { "..", "p", UID },
		{ "batch", ".p", UID }, { "batch", "p-", UID },
	};
	char buf[1024];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		if (evict_api_body(buf, sizeof(buf), bad[i][0], bad[i][1], bad[i][2]) != -EINVAL)
			fail_msg("accepted %s/%s (%s)", bad[i][0], bad[i][1], bad[i][2]);
	assert_int_equal(evict_api_body(buf, 40, "batch", "p", UID), -ENOSPC);
}

static void test_status(void **state)
{
	(void)state;
	assert_int_equal(evict_api_status(201), 0);
	assert_int_equal(evict_api_status(200), 0);
	assert_int_equal(evict_api_status(429), -EBUSY);	/* a PodDisruptionBudget */
	assert_int_equal(evict_api_status(404), -ENOENT);
	assert_int_equal(evict_api_status(409), -ESTALE);	/* the uid precondition */
	assert_int_equal(evict_api_status(403), -EACCES);
	assert_int_equal(evict_api_status(401), -EACCES);
	assert_int_equal(evict_api_status(500), -EIO);
	assert_int_equal(evict_api_status(0), -EIO);
}

/* Refused before any request: an unset ${VAR}, a name that is not one. */
static void test_start_refusals(void **state)
{
	struct evict_api_opts o = { .server = "https://${KOORD_TEST_UNSET_HOST}:6443",
				    .token_file = "", .ca_file = "" };
	struct evict_api_call *c = NULL;
	char err[512] = "";

	(void)state;
	unsetenv("KOORD_TEST_UNSET_HOST");
	assert_int_equal(evict_api_start(&o, "batch", "p", UID, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "KOORD_TEST_UNSET_HOST"));
	assert_null(c);
	o.server = "http://127.0.0.1:1";
	assert_int_equal(evict_api_start(&o, "batch", "p/x", UID, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a Kubernetes name"));
	assert_null(c);
}

/* Nobody listens: the call ends with -EIO and the reason; stop on a call that ended is a no-op. */
static void test_unreachable(void **state)
{
	struct evict_api_opts o = { .server = "http://127.0.0.1:1", .token_file = "", .ca_file = "" };
	struct evict_api_call *c = NULL;
	char err[512] = "", why[512] = "";
	int r, i;

	(void)state;
	assert_int_equal(evict_api_start(&o, "batch", "p", UID, &c, err, sizeof(err)), 0);
	assert_non_null(c);
	for (i = 0; i < 1000 && (r = evict_api_poll(&c, why, sizeof(why))) == -EINPROGRESS; i++)
		usleep(10000);
	assert_int_equal(r, -EIO);
	assert_null(c);
	assert_non_null(strstr(why, "127.0.0.1"));
	evict_api_stop(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_body),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_start_refusals),
		cmocka_unit_test(test_unreachable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
