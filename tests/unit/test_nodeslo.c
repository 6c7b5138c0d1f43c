/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The NodeSLO and Node objects as the API server answers: what is taken, what is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "config.h"
#include "node_object.h"
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

#define NODE(meta, status) "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": " meta \
	", \"status\": " status "}"
#define STATUS(cpu, mem) "{\"capacity\": {\"cpu\": \"8\", \"memory\": \"16Gi\"}, " \
	"\"allocatable\": {\"cpu\": \"" cpu "\", \"memory\": \"" mem "\"}}"

static int node_parse(const char *text, struct node_object *n, char *err, size_t len)
{
	return node_object_parse(text, strlen(text), n, err, len);
}

/* Koordinator's node reservation: max(the kubelet's, the annotation's), the list winning there. */
static void test_node_taken(void **state)
{
	struct node_reservation r;
	struct node_object n;
	char err[256] = "";

	assert_int_equal(node_parse(NODE("{\"name\": \"w1\"}", STATUS("7500m", "15Gi")), &n, err,
				    sizeof(err)), 0);
	assert_string_equal(n.name, "w1");
	assert_true(n.kubelet_cpu == 0.5 && n.kubelet_memory == 1073741824.0);
	assert_false(n.annotated);
	node_object_reservation(&n, &r);
	assert_true(r.cpu == 0.5 && r.memory == 1073741824.0 && !CPU_COUNT(&r.cpus));

	assert_int_equal(node_parse(NODE("{\"name\": \"w1\", \"annotations\": "
		"{\"node.koordinator.sh/reservation\": "
		"\"{\\\"resources\\\": {\\\"cpu\\\": \\\"3\\\", \\\"memory\\\": \\\"512Mi\\\"}, "
		"\\\"reservedCPUs\\\": \\\"0-1\\\"}\"}}", STATUS("7500m", "15Gi")), &n, err, sizeof(err)), 0);
	assert_true(n.annotated);
	node_object_reservation(&n, &r);
	/* the list's 2 cores win over the annotation's resources.cpu 3, then over the kubelet's 0.5 */
	assert_true(r.cpu == 2 && r.memory == 1073741824.0);
	assert_true(CPU_COUNT(&r.cpus) == 2 && CPU_ISSET(0, &r.cpus) && CPU_ISSET(1, &r.cpus));

	/* allocatable missing, or above capacity: the kubelet reserves nothing */
	assert_int_equal(node_parse(NODE("{\"name\": \"w1\"}", "{\"capacity\": {\"cpu\": \"8\"}}"),
				    &n, err, sizeof(err)), 0);
	assert_true(n.kubelet_cpu == 0 && n.kubelet_memory == 0);
	assert_int_equal(node_parse(NODE("{\"name\": \"w1\"}", STATUS("9", "17Gi")), &n, err,
				    sizeof(err)), 0);
	assert_true(n.kubelet_cpu == 0 && n.kubelet_memory == 0);
}

static void test_node_refused(void **state)
{
	static const struct { const char *text, *why; } bad[] = {
		{ "{\"kind\": \"NodeSLO\", \"metadata\": {\"name\": \"w1\"}}", "not a Node" },
		{ NODE("{}", STATUS("1", "1Gi")), "without metadata.name" },
		{ NODE("{\"name\": \"w1\"}", STATUS("one", "1Gi")), "cpu capacity or allocatable" },
		{ NODE("{\"name\": \"w1\", \"annotations\": {\"node.koordinator.sh/reservation\": "
		       "\"{\\\"reservedCPUs\\\": 2}\"}}", STATUS("1", "1Gi")), "reservedCPUs" },
		{ NODE("{\"name\": \"w1\", \"annotations\": {\"node.koordinator.sh/reservation\": "
		       "\"not json\"}}", STATUS("1", "1Gi")), "node.koordinator.sh/reservation" },
		{ "{\"kind\": \"Node\"", "not JSON" },
	};
	struct node_object n;
	char err[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(node_parse(bad[i].text, &n, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].why))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taken),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_node_taken),
		cmocka_unit_test(test_node_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
