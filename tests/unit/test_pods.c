/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The kubelet's PodList and Koordinator's label rules on it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "pods.h"

static char *slurp(const char *name, size_t *len)
{
	const char *slash = strrchr(__FILE__, '/');
	char path[512], *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%.*s/data/%s", slash ? (int)(slash - __FILE__) : 1,
		 slash ? __FILE__ : ".", name);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	assert_int_equal(fread(buf, 1, n, f), n);
	buf[n] = '\0';
	fclose(f);
	*len = n;
	return buf;
}

#define UID(n) "11111111-0000-0000-0000-00000000000" #n

static void test_recorded(void **state)
{
	struct pod_list l;
	const struct pod_meta *p;
	char err[256] = "";
	size_t len;
	char *text = slurp("podlist.json", &len);

	assert_int_equal(pods_parse(text, len, &l, err, sizeof(err)), 0);
	/* the item without a uid and the one that is not an object are skipped */
	assert_int_equal(l.n, 8);

	/* no label: the Kubernetes class decides; priority 9500 is prod */
	p = pods_find(&l, UID(1));
	assert_non_null(p);
	assert_string_equal(p->namespace, "default");
	assert_string_equal(p->name, "web");
	assert_int_equal(p->ncontainers, 0);	/* no containerStatuses */
	assert_null(pod_container_name(p, "c"));
	assert_int_equal(p->qos_label, -1);
	assert_int_equal(pod_qos(p, KC_SYSTEM), KC_LSR);
	assert_float_equal(p->cpu_request, 0, 0);	/* none written */
	assert_int_equal(p->prio, PRIO_PROD);
	assert_true(p->eviction_enabled);
	assert_int_equal(p->eviction_priority, 0);
	assert_null(p->eviction_policy);

	/* the label wins over Burstable */
	p = pods_find(&l, UID(2));
	assert_int_equal(pod_qos(p, KC_LS), KC_LSE);
	assert_int_equal(pod_prio(p, KC_LSE), PRIO_PROD);	/* none set: from the QoS */
	/* max(1.5 + 0.5, init 3) + overhead 0.1 cores; memory 2 x 512 Mi (the init's is no quantity) */
	assert_float_equal(p->cpu_request, 3.1, 1e-12);
	assert_float_equal(p->mem_request, 1073741824.0, 0);
	/* containers by the runtime id their cgroups carry, init containers too */
	assert_int_equal(p->ncontainers, 3);
	assert_string_equal(pod_container_name(p, "c1"), "a");
	assert_string_equal(pod_container_name(p, "f00d"), "b");
	assert_string_equal(pod_container_name(p, "1417"), "warm-up");
	assert_null(pod_container_name(p, "containerd://c1"));
	assert_null(pod_container_name(p, "c3"));

	p = pods_find(&l, UID(3));
	/* a container not started yet has no id: not listed */
	assert_int_equal(p->ncontainers, 1);
	assert_string_equal(pod_container_name(p, "c3"), "c");
	assert_null(pod_container_name(p, ""));
	assert_int_equal(pod_qos(p, KC_SYSTEM), KC_BE);
	assert_int_equal(p->prio, PRIO_BATCH);
	assert_false(p->eviction_enabled);
	assert_int_equal(p->eviction_priority, -5);
	assert_string_equal(p->eviction_policy, "[\"BECPUEvict\"]");

	/* an unknown value (names are case-sensitive) is unclassified, not the k8s class */
	p = pods_find(&l, UID(4));
	assert_int_equal(p->qos_label, KC_UNCLASSIFIED);
	assert_string_equal(p->qos_label_raw, "lse");
	assert_int_equal(pod_qos(p, KC_LS), KC_UNCLASSIFIED);

	p = pods_find(&l, UID(5));
	assert_int_equal(p->prio, PRIO_FREE);
	assert_int_equal(pod_qos(p, KC_SYSTEM), KC_BE);
	/* the priority-class label wins over spec.priority */
	p = pods_find(&l, UID(6));
	assert_int_equal(p->prio, PRIO_MID);
	/* a burstable (LS) pod of batch priority */
	p = pods_find(&l, UID(7));
	assert_int_equal(pod_qos(p, KC_SYSTEM), KC_LS);
	assert_int_equal(pod_prio(p, KC_LS), PRIO_BATCH);
	assert_null(pods_find(&l, UID(9)));
	pods_free(&l);
	pods_free(&l);
	free(text);
}

static void test_ranges(void **state)
{
	static const struct { int v; enum prio_class p; } cases[] = {
		{ 9000, PRIO_PROD }, { 9999, PRIO_PROD }, { 10000, PRIO_NONE }, { 8999, PRIO_NONE },
		{ 7000, PRIO_MID }, { 7999, PRIO_MID }, { 5000, PRIO_BATCH }, { 5999, PRIO_BATCH },
		{ 3000, PRIO_FREE }, { 3999, PRIO_FREE }, { 2999, PRIO_NONE }, { 0, PRIO_NONE },
		{ -1, PRIO_NONE }, { 2000000000, PRIO_NONE },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(prio_from_value(cases[i].v), cases[i].p);
	assert_int_equal(prio_from_name("koord-batch"), PRIO_BATCH);
	assert_int_equal(prio_from_name("Koord-Batch"), PRIO_NONE);
	assert_int_equal(prio_from_name(NULL), PRIO_NONE);
	assert_string_equal(prio_name(PRIO_FREE), "koord-free");
	assert_string_equal(prio_name(PRIO_NONE), "");
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"", "{", "[]", "{\"items\": {}}", "{\"kind\": \"PodList\"}", "null", "{\"items\": [] } x",
	};
	static const char typed[] =
		"{\"items\": [{\"metadata\": {\"uid\": 5}}, {\"metadata\": {\"uid\": \"u\", "
		"\"labels\": {\"koordinator.sh/qosClass\": 1}}, \"spec\": {\"priority\": \"9500\"}, "
		"\"status\": []}]}";
	struct pod_list l;
	char err[256];
	size_t i;
	char *deep;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(pods_parse(bad[i], strlen(bad[i]), &l, err, sizeof(err)), -EINVAL);
		assert_true(err[0]);
		assert_int_equal(l.n, 0);
	}
	/* wrong types where strings and numbers belong are ignored, not trusted */
	assert_int_equal(pods_parse(typed, strlen(typed), &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0].qos_label, -1);
	assert_false(l.v[0].has_priority);
	assert_int_equal(pod_qos(&l.v[0], KC_LS), KC_LS);
	pods_free(&l);
	/* nesting deeper than the parser's limit is refused, not a crash */
	deep = malloc(200001);
	memset(deep, '[', 100000);
	memset(deep + 100000, ']', 100000);
	deep[200000] = '\0';
	assert_int_equal(pods_parse(deep, 200000, &l, err, sizeof(err)), -EINVAL);
	free(deep);
}

/* Many pods: every one found by its uid. */
static void test_many(void **state)
{
	size_t n = 20000, i, len = 0, cap = n * 120 + 64;
	char *text = malloc(cap), uid[64];
	struct pod_list l;
	char err[256];

	len += snprintf(text + len, cap - len, "{\"items\": [");
	for (i = 0; i < n; i++)
		len += snprintf(text + len, cap - len, "%s{\"metadata\": {\"uid\": \"%08zx-pod\", "
				"\"name\": \"p%zu\"}, \"spec\": {\"priority\": %zu}}",
				i ? ", " : "", (n - i) * 7919 % 100003, i, i % 10000);
	len += snprintf(text + len, cap - len, "]}");
	assert_int_equal(pods_parse(text, len, &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, n);
	for (i = 0; i < n; i++) {
		snprintf(uid, sizeof(uid), "%08zx-pod", (n - i) * 7919 % 100003);
		assert_non_null(pods_find(&l, uid));
	}
	pods_free(&l);
	free(text);
}

/* A static pod (its source a file or a URL) and its mirror are the kubelet's own. */
static void test_static_pods(void **state)
{
	static const char text[] =
		"{\"items\": ["
		"{\"metadata\": {\"uid\": \"a\", \"annotations\": {\"kubernetes.io/config.source\": \"file\"}}},"
		"{\"metadata\": {\"uid\": \"b\", \"annotations\": {\"kubernetes.io/config.source\": \"api\","
		"\"kubernetes.io/config.mirror\": \"5f3e\"}}},"
		"{\"metadata\": {\"uid\": \"c\", \"annotations\": {\"kubernetes.io/config.source\": \"api\"}}},"
		"{\"metadata\": {\"uid\": \"d\"}}]}";
	struct pod_list l;
	char err[256];

	(void)state;
	assert_int_equal(pods_parse(text, strlen(text), &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 4);
	assert_true(pods_find(&l, "a")->static_pod);
	assert_true(pods_find(&l, "b")->static_pod);
	assert_false(pods_find(&l, "c")->static_pod);
	assert_false(pods_find(&l, "d")->static_pod);
	pods_free(&l);
}

static void test_evict_allowed(void **state)
{
	struct pod_meta p = { .eviction_enabled = true };

	/* no annotation: every feature may */
	assert_true(pod_evict_allowed(&p, "BECPUEvict"));
	p.eviction_policy = "[\"BECPUEvict\", \"MemoryEvict\"]";
	assert_true(pod_evict_allowed(&p, "BECPUEvict"));
	assert_false(pod_evict_allowed(&p, "BEMemoryEvict"));
	/* unparsable, or not a list of names: none may */
	p.eviction_policy = "BECPUEvict";
	assert_false(pod_evict_allowed(&p, "BECPUEvict"));
	p.eviction_policy = "{\"BECPUEvict\": true}";
	assert_false(pod_evict_allowed(&p, "BECPUEvict"));
	p.eviction_policy = "[1, \"becpuevict\"]";
	assert_false(pod_evict_allowed(&p, "BECPUEvict"));
	p.eviction_policy = "[]";
	assert_false(pod_evict_allowed(&p, "BECPUEvict"));
	/* the label opts out whatever the annotation says */
	p.eviction_policy = NULL;
	p.eviction_enabled = false;
	assert_false(pod_evict_allowed(&p, "BECPUEvict"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_static_pods),
		cmocka_unit_test(test_evict_allowed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
