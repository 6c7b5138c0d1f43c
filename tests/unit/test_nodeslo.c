/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The NodeSLO object as the API server answers: what is taken, what is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "config.h"
#include "nodeslo.h"

#define SLO(meta, spec) \
	"{\"apiVersion\": \"slo.koordinator.sh/v1alpha1\", \"kind\": \"NodeSLO\", " \
	"\"metadata\": " meta ", \"spec\": " spec "}"

static int parse(const char *text, struct nodeslo_doc *d, char *err, size_t len)
{
	return nodeslo_parse(text, strlen(text), d, err, len);
}

static void test_taken(void **state)
{
	const char *text = SLO("{\"name\": \"worker-17\", \"resourceVersion\": \"48213377\"}",
			       "{\"resourceUsedThresholdWithBE\": {\"enable\": true}}");
	struct koord_config c;
	struct nodeslo_doc d;
	char err[256] = "";

	assert_int_equal(parse(text, &d, err, sizeof(err)), 0);
	assert_string_equal(d.name, "worker-17");
	assert_string_equal(d.resource_version, "48213377");
	/* the text as it came, NUL-terminated: the config parser reads it */
	assert_int_equal(d.len, strlen(text));
	assert_string_equal(d.text, text);
	assert_int_equal(config_parse("NodeSLO worker-17", d.text, d.len, &c, err, sizeof(err)), 0);
	assert_true(c.be.enable);
	config_free(&c);
	nodeslo_doc_free(&d);
	assert_null(d.text);

	/* a recorded object may lack the resourceVersion; its spec is not judged here */
	assert_int_equal(parse(SLO("{\"name\": \"n\"}", "{\"koordBPF\": {\"period\": \"x\"}}"), &d,
			       err, sizeof(err)), 0);
	assert_string_equal(d.resource_version, "");
	nodeslo_doc_free(&d);
}

static void test_refused(void **state)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "{\"kind\": \"Status\", \"code\": 404}", "not a NodeSLO (kind \"Status\")" },
		{ "{\"metadata\": {\"name\": \"n\"}, \"spec\": {}}", "not a NodeSLO (kind \"\")" },
		{ "{\"kind\": 7, \"metadata\": {\"name\": \"n\"}}", "not a NodeSLO (kind \"\")" },
		{ SLO("{}", "{}"), "a NodeSLO without metadata.name" },
		{ SLO("{\"name\": \"\"}", "{}"), "a NodeSLO without metadata.name" },
		{ SLO("{\"name\": 5}", "{}"), "a NodeSLO without metadata.name" },
		{ "{\"kind\": \"NodeSLO\", \"metadata\": {\"name\": \"n\"}", "not JSON: cut short" },
		{ "[]", "not a JSON object" },
	};
	struct nodeslo_doc d;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(parse(bad[i].text, &d, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, bad[i].why);
		assert_null(d.text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taken),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
