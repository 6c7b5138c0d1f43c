/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The NodeSLO object as the API server answers: what is taken, what is refused. */
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

/* A file of @text; its path in @path (a template it fills). */
static void file_of(char *path, const char *text)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void test_over_the_file(void **state)
{
	const char *slo = SLO("{\"name\": \"n\"}",
		"{\"resourceUsedThresholdWithBE\": {\"enable\": true, \"cpuSuppressThresholdPercent\": 50},"
		" \"resourceQOSStrategy\": {\"policies\": {\"cpuPolicy\": \"coreSched\"}},"
		" \"extensions\": {\"koordBPF\": {\"period\": 9}}}");
	const char *bad = SLO("{\"name\": \"n\"}",
			      "{\"resourceUsedThresholdWithBE\": {\"enable\": 1}}");
	char path[] = "/tmp/koord-nodeslo-unit-XXXXXX", bad_file[] = "/tmp/koord-nodeslo-unit-XXXXXX";
	char err[512] = "";
	struct koord_config c;

	file_of(path, "{\"resourceUsedThresholdWithBE\": {\"enable\": false, \"cpuSuppressPolicy\": "
		      "\"cfsQuota\"}, \"koordBPF\": {\"period\": 2, \"beWakeupPriority\": true}}");
	assert_int_equal(config_parse_nodeslo("NodeSLO n", slo, strlen(slo), path, &c, err,
					      sizeof(err)), 0);
	/* Koordinator's sections: the NodeSLO's whole, the file's policy not kept */
	assert_true(c.be.enable);
	assert_int_equal(c.be.cpu_suppress_threshold_percent, 50);
	assert_int_equal(c.be.cpu_suppress_policy, SUPPRESS_CPUSET);
	assert_true(c.cpu_qos.core_sched);
	/* koordBPF: the file's, the NodeSLO's ignored */
	assert_true(c.period_s == 2);
	assert_true(c.be_wakeup_priority);
	config_free(&c);

	/* no file: koord-bpf's defaults */
	assert_int_equal(config_parse_nodeslo("NodeSLO n", slo, strlen(slo), NULL, &c, err,
					      sizeof(err)), 0);
	assert_true(c.period_s == 1);
	assert_true(c.be.enable);
	config_free(&c);

	/* an error of either names its document, and leaves the defaults */
	assert_int_equal(config_parse_nodeslo("NodeSLO n", bad, strlen(bad), path, &c, err,
					      sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NodeSLO n: spec.resourceUsedThresholdWithBE.enable"));
	assert_false(c.be.enable);
	config_free(&c);
	unlink(path);
	file_of(bad_file, "{\"koordBPF\": {\"period\": \"x\"}}");
	assert_int_equal(config_parse_nodeslo("NodeSLO n", slo, strlen(slo), bad_file, &c, err,
					      sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "koordBPF.period"));
	assert_int_equal(strncmp(err, bad_file, strlen(bad_file)), 0);
	config_free(&c);
	assert_int_equal(config_parse_nodeslo("NodeSLO n", slo, strlen(slo), path, &c, err,
					      sizeof(err)), -ENOENT);
	unlink(bad_file);
	config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taken),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_over_the_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
