/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The JSON configuration: defaults, the examples, NodeSLO forms, and every refusal. */
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
#include "log.h"

#define NAME	"t.json"
#define ERRLEN	512

/* JSON written as C tokens; the preprocessor quotes it. */
#define J(...)	#__VA_ARGS__
#define KB(...)	"{\"koordBPF\": " #__VA_ARGS__ "}"
#define BE(...)	"{\"resourceUsedThresholdWithBE\": " #__VA_ARGS__ "}"

static int parse(const char *text, struct koord_config *c, char *err)
{
	return config_parse(NAME, text, strlen(text), c, err, ERRLEN);
}

static void assert_double(double got, double want)
{
	assert_true(got == want);
}

/* Every field at its documented default (docs/config.md). */
static void assert_defaults(const struct koord_config *c)
{
	static const char *const roots[] = { "/kubepods", "/kubepods.slice", "/hadoop-yarn" };
	size_t i;

	assert_false(c->be.enable);
	assert_int_equal(c->be.cpu_suppress_threshold_percent, 65);
	assert_int_equal(c->be.cpu_suppress_min_percent, -1);
	assert_int_equal(c->be.cpu_suppress_policy, SUPPRESS_CPUSET);
	assert_int_equal(c->be.cpu_evict_be_satisfaction_lower_percent, -1);
	assert_int_equal(c->be.cpu_evict_be_satisfaction_upper_percent, -1);
	assert_int_equal(c->be.cpu_evict_be_usage_threshold_percent, 90);
	assert_int_equal(c->be.cpu_evict_time_window_seconds, -1);
	assert_int_equal(c->be.memory_evict_threshold_percent, 70);
	assert_int_equal(c->be.memory_evict_lower_percent, -1);

	assert_double(c->period_s, 1);
	assert_string_equal(c->listen, "127.0.0.1:9326");
	assert_string_equal(c->state_dir, "/var/lib/koord-bpf");
	assert_int_equal(c->ncgroup_roots, 3);
	for (i = 0; i < 3; i++)
		assert_string_equal(c->cgroup_roots[i], roots[i]);
	for (; i < CONFIG_ROOTS_MAX; i++)
		assert_null(c->cgroup_roots[i]);
	assert_int_equal(c->rules.n, 0);
	assert_null(c->rules.v);
	assert_true(c->be_wakeup_priority);
	assert_int_equal(c->wakeup_by, WAKEUP_BY_WEIGHT);
	assert_true(c->react_on_long_waits);
	assert_double(c->react_wait_us, 1000);
	assert_double(c->reservation.cpu, 0);
	assert_double(c->reservation.memory, 0);
	assert_int_equal(CPU_COUNT(&c->reservation.cpus), 0);
	assert_double(config_reserved_cores(c), 0);
	assert_int_equal(c->suppress_smoothing_windows, 3);

	assert_double(c->interference.victim_p99_wait_us, 1000);
	assert_double(c->interference.be_steal_percent, 5);
	assert_int_equal(c->interference.sustained_windows, 3);

	assert_true(c->throttle.enable);
	assert_double(c->throttle.cut_factor, 0.5);
	assert_double(c->throttle.floor_cores, 0.05);
	assert_double(c->throttle.recovery_step_cores, 0.1);
	assert_int_equal(c->throttle.quiet_windows, 5);
	assert_int_equal(c->throttle.max_culprits, 2);

	assert_int_equal(c->effect.windows, 3);
	assert_double(c->effect.worse_percent, 10);
	assert_double(c->effect.hold_off_s, 300);
	assert_true(c->effect.keep_off);

	assert_true(c->eviction.enable);
	assert_int_equal(c->eviction.backend, EVICT_KILL);
	for (i = 0; i <= CONFIG_HOOK_ARGS_MAX; i++)
		assert_null(c->eviction.hook[i]);
	assert_int_equal(c->eviction.max_per_minute, 2);
	assert_double(c->eviction.cool_down_s, 20);
	assert_double(c->eviction.culprit_at_floor_s, 120);

	assert_int_equal(c->batch.cpu_reclaim_threshold_percent, 60);
	assert_int_equal(c->batch.memory_reclaim_threshold_percent, 65);
	assert_int_equal(c->batch.aggregate_seconds, 300);

	assert_string_equal(c->kubelet.url, "");
	assert_string_equal(c->kubelet.token_file, "/var/run/secrets/kubernetes.io/serviceaccount/token");
	assert_string_equal(c->kubelet.ca_file, "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
	assert_string_equal(c->kubelet.cpu_manager_state, "/var/lib/kubelet/cpu_manager_state");
	assert_string_equal(c->eviction.api.url,
			    "https://${KUBERNETES_SERVICE_HOST}:${KUBERNETES_SERVICE_PORT}");
	assert_string_equal(c->eviction.api.token_file, c->kubelet.token_file);
	assert_string_equal(c->eviction.api.ca_file, c->kubelet.ca_file);
	assert_false(c->kubelet.insecure);
	assert_double(c->kubelet.interval_s, 10);
	assert_double(c->kubelet.timeout_s, 5);

	assert_string_equal(c->yarn.nm_url, "");
	assert_double(c->yarn.interval_s, 10);
	assert_double(c->yarn.timeout_s, 5);
}

/* A refused text: the whole message, and the struct back at its defaults. */
#define BAD(text, msg) do {							\
	struct koord_config c_;							\
	char err_[ERRLEN] = "";							\
	assert_int_equal(parse((text), &c_, err_), -EINVAL);			\
	assert_string_equal(err_, NAME ": " msg);				\
	assert_defaults(&c_);							\
	config_free(&c_);							\
} while (0)

/* An accepted text, parsed into @c (to be freed by the caller). */
#define GOOD(text, c) do {							\
	char err_[ERRLEN] = "";							\
	int ret_ = parse((text), (c), err_);					\
	if (ret_)								\
		fail_msg("refused: %s", err_);					\
} while (0)

static void example_path(char *buf, size_t len, const char *name)
{
	const char *tail = strstr(__FILE__, "tests/unit/");

	snprintf(buf, len, "%.*sexamples/%s", tail ? (int)(tail - __FILE__) : 0, __FILE__, name);
}

static void test_defaults(void **state)
{
	struct koord_config c;

	config_defaults(&c);
	assert_defaults(&c);
	config_free(&c);
	assert_null(c.listen);
	assert_null(c.state_dir);
	assert_int_equal(c.ncgroup_roots, 0);
	config_free(&c);	/* twice is harmless */

	/* an empty object and an empty section are the defaults */
	GOOD("{}", &c);
	assert_defaults(&c);
	config_free(&c);
	GOOD(KB({}), &c);
	assert_defaults(&c);
	config_free(&c);
}

static void load_example(const char *name, struct koord_config *c)
{
	char path[512], err[ERRLEN] = "";

	example_path(path, sizeof(path), name);
	if (config_load(path, c, err, sizeof(err)))
		fail_msg("%s", err);
}

static void test_example_default(void **state)
{
	struct koord_config c;

	load_example("config-default.json", &c);
	assert_defaults(&c);
	config_free(&c);
}

static void test_example_enforce(void **state)
{
	struct koord_config c;

	load_example("enforce.json", &c);
	assert_true(c.be.enable);
	assert_int_equal(c.be.cpu_suppress_policy, SUPPRESS_CPUSET);
	assert_int_equal(c.ncgroup_roots, 3);
	config_free(&c);
}

static void test_example_nodeslo(void **state)
{
	struct koord_config c;

	load_example("nodeslo.json", &c);
	assert_true(c.be.enable);
	assert_int_equal(c.be.cpu_suppress_threshold_percent, 65);
	assert_int_equal(c.be.cpu_evict_be_satisfaction_lower_percent, 60);
	assert_int_equal(c.be.cpu_evict_be_satisfaction_upper_percent, 80);
	assert_int_equal(c.be.cpu_evict_time_window_seconds, 60);
	assert_int_equal(c.be.memory_evict_lower_percent, -1);
	/* spec.extensions.koordBPF */
	assert_int_equal(c.ncgroup_roots, 2);
	assert_string_equal(c.cgroup_roots[0], "/kubepods.slice");
	assert_string_equal(c.cgroup_roots[1], "/hadoop-yarn");
	assert_null(c.cgroup_roots[2]);
	assert_int_equal(c.rules.n, 2);
	assert_string_equal(c.rules.v[0].glob, "/kubepods.slice/kubepods-burstable.slice/*redis*");
	assert_int_equal(c.rules.v[0].qos, KC_LSR);
	assert_int_equal(c.rules.v[1].qos, KC_BE);
	/* the node's annotation pasted in: its CPU list decides the cores, as in Koordinator */
	assert_double(c.reservation.cpu, 2);
	assert_double(c.reservation.memory, 2.0 * (1 << 30));
	assert_int_equal(CPU_COUNT(&c.reservation.cpus), 2);
	assert_true(CPU_ISSET(0, &c.reservation.cpus) && CPU_ISSET(1, &c.reservation.cpus));
	assert_double(config_reserved_cores(&c), 2);
	assert_double(c.interference.victim_p99_wait_us, 2000);
	assert_double(c.throttle.floor_cores, 0.1);
	assert_double(c.throttle.recovery_step_cores, 0.2);
	assert_int_equal(c.eviction.backend, EVICT_HOOK);
	assert_string_equal(c.eviction.hook[0], "/usr/local/libexec/koord-bpf/evict-pod");
	assert_string_equal(c.eviction.hook[1], "--grace-period=30");
	assert_null(c.eviction.hook[2]);
	config_free(&c);
}

/* The same settings as a bare spec, a whole NodeSLO, and in its extensions. */
static void test_forms(void **state)
{
	static const char *const texts[] = {
		J({"resourceUsedThresholdWithBE": {"enable": true},
		   "koordBPF": {"period": 2}}),
		J({"apiVersion": "slo.koordinator.sh/v1alpha1", "kind": "NodeSLO",
		   "metadata": {"name": "n1"}, "status": {},
		   "spec": {"resourceUsedThresholdWithBE": {"enable": true},
			    "koordBPF": {"period": 2}}}),
		J({"kind": "NodeSLO",
		   "spec": {"resourceUsedThresholdWithBE": {"enable": true},
			    "extensions": {"koordBPF": {"period": 2}, "other": 1}}}),
		/* no kind: a spec key alone marks the object */
		J({"spec": {"resourceUsedThresholdWithBE": {"enable": true},
			    "koordBPF": {"period": 2}}}),
	};
	struct koord_config c;
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		GOOD(texts[i], &c);
		assert_true(c.be.enable);
		assert_double(c.period_s, 2);
		config_free(&c);
	}

	/* a NodeSLO without spec, or with a null one: defaults */
	GOOD(J({"apiVersion": "slo.koordinator.sh/v1alpha1", "kind": "NodeSLO"}), &c);
	assert_defaults(&c);
	config_free(&c);
	GOOD(J({"kind": "NodeSLO", "spec": null}), &c);
	assert_defaults(&c);
	config_free(&c);

	BAD(J({"kind": "ConfigMap", "spec": {}}), "kind: must be \"NodeSLO\", got \"ConfigMap\"");
	BAD(J({"kind": 1}), "kind: must be \"NodeSLO\", got 1");
	BAD(J({"kind": "NodeSLO", "spec": []}), "spec: must be an object, got an array");
	BAD(J({"kind": "NodeSLO", "spec": {"koordBPF": {"period": 0}}}),
	    "spec.koordBPF.period: must be in [0.1, 3600], got 0");
	BAD(J({"kind": "NodeSLO", "spec": {"extensions": {"koordBPF": {"bogus": 1}}}}),
	    "spec.extensions.koordBPF.bogus: unknown field");
	BAD(J({"koordBPF": {}, "extensions": {"koordBPF": {}}}),
	    "extensions.koordBPF: given twice (also as koordBPF)");
	BAD(J({"extensions": []}), "extensions: must be an object, got an array");
}

/* Every field away from its default, integers written as 65.0, nulls as defaults. */
static void test_values(void **state)
{
	struct koord_config c;

	GOOD(J({"resourceUsedThresholdWithBE": {
			"enable": true, "cpuSuppressThresholdPercent": 50.0,
			"cpuSuppressMinPercent": 0, "cpuSuppressPolicy": "cfsQuota",
			"cpuEvictBESatisfactionLowerPercent": 60,
			"cpuEvictBESatisfactionUpperPercent": 60,
			"cpuEvictBEUsageThresholdPercent": 100,
			"cpuEvictTimeWindowSeconds": 30,
			"memoryEvictThresholdPercent": 100, "memoryEvictLowerPercent": 0},
		"koordBPF": {
			"period": 0.1, "listen": "[::1]:9000", "stateDir": "/run/kb",
			"cgroupRoots": ["/"], "classRules": [{"glob": "/a=b*", "qos": "be"}],
			"beWakeupPriority": false, "beWakeupPriorityBy": "idle",
			"reservation": {"resources": {"cpu": "1500m", "memory": "1Gi"}},
			"suppressSmoothingWindows": 60,
			"interference": {"victimP99WaitUs": 0.5, "beStealPercent": 100,
					 "sustainedWindows": 600},
			"throttle": {"enable": false, "cutFactor": 0.999, "floorCores": 1e-3,
				     "recoveryStepCores": 4, "quietWindows": 1, "maxCulprits": 64},
			"effect": {"windows": 1, "worsePercent": 0, "holdOffSeconds": 0,
				   "keepOff": false},
			"eviction": {"enable": false, "backend": "hook", "hook": ["/bin/true"],
				     "maxPerMinute": 600, "coolDownSeconds": 0,
				     "culpritAtFloorSeconds": 0.5}}}), &c);
	assert_true(c.be.enable);
	assert_int_equal(c.be.cpu_suppress_threshold_percent, 50);
	assert_int_equal(c.be.cpu_suppress_min_percent, 0);
	assert_int_equal(c.be.cpu_suppress_policy, SUPPRESS_CFS_QUOTA);
	assert_int_equal(c.be.cpu_evict_be_satisfaction_lower_percent, 60);
	assert_int_equal(c.be.cpu_evict_be_satisfaction_upper_percent, 60);
	assert_int_equal(c.be.cpu_evict_be_usage_threshold_percent, 100);
	assert_int_equal(c.be.cpu_evict_time_window_seconds, 30);
	assert_int_equal(c.be.memory_evict_threshold_percent, 100);
	assert_int_equal(c.be.memory_evict_lower_percent, 0);
	assert_double(c.period_s, 0.1);
	assert_string_equal(c.listen, "[::1]:9000");
	assert_string_equal(c.state_dir, "/run/kb");
	assert_int_equal(c.ncgroup_roots, 1);
	assert_string_equal(c.cgroup_roots[0], "/");
	assert_null(c.cgroup_roots[1]);
	assert_int_equal(c.rules.n, 1);
	assert_string_equal(c.rules.v[0].glob, "/a=b*");
	assert_int_equal(c.rules.v[0].qos, KC_BE);
	assert_false(c.be_wakeup_priority);
	assert_int_equal(c.wakeup_by, WAKEUP_BY_IDLE);
	assert_double(c.reservation.cpu, 1.5);
	assert_double(c.reservation.memory, 1 << 30);
	assert_double(config_reserved_cores(&c), 1.5);
	assert_int_equal(c.suppress_smoothing_windows, 60);
	assert_double(c.interference.victim_p99_wait_us, 0.5);
	assert_double(c.interference.be_steal_percent, 100);
	assert_int_equal(c.interference.sustained_windows, 600);
	assert_false(c.throttle.enable);
	assert_double(c.throttle.cut_factor, 0.999);
	assert_double(c.throttle.floor_cores, 1e-3);
	assert_double(c.throttle.recovery_step_cores, 4);
	assert_int_equal(c.throttle.quiet_windows, 1);
	assert_int_equal(c.throttle.max_culprits, 64);
	assert_int_equal(c.effect.windows, 1);
	assert_double(c.effect.worse_percent, 0);
	assert_double(c.effect.hold_off_s, 0);
	assert_false(c.effect.keep_off);
	assert_false(c.eviction.enable);
	assert_int_equal(c.eviction.backend, EVICT_HOOK);
	assert_string_equal(c.eviction.hook[0], "/bin/true");
	assert_null(c.eviction.hook[1]);
	assert_int_equal(c.eviction.max_per_minute, 600);
	assert_double(c.eviction.cool_down_s, 0);
	assert_double(c.eviction.culprit_at_floor_s, 0.5);
	config_free(&c);

	/* null is "unset": every field keeps its default */
	GOOD(J({"resourceUsedThresholdWithBE": {"enable": null,
			"cpuSuppressThresholdPercent": null, "cpuSuppressPolicy": null},
		"koordBPF": {"period": null, "listen": null, "cgroupRoots": null,
			"classRules": null, "throttle": null,
			"eviction": {"hook": null, "backend": null}}}), &c);
	assert_defaults(&c);
	config_free(&c);

	/* the last of duplicate keys wins (json-c) */
	GOOD(KB({"period": 5, "period": 7}), &c);
	assert_double(c.period_s, 7);
	config_free(&c);
}

static void test_syntax(void **state)
{
	struct koord_config c;
	char err[ERRLEN] = "";

	BAD("{\n  \"koordBPF\": {\n    \"period\": tru\n  }\n}",
	    "line 3, column 18: boolean expected");
	BAD("{\"koordBPF\": {\"period\": 1,}}", "line 1, column 27: unexpected character");
	BAD("{\"koordBPF\": {\n", "line 2, column 1: unexpected end of input");
	BAD("{} {}", "line 1, column 4: unexpected character");
	BAD("{}\n\n  x", "line 3, column 3: unexpected character");
	BAD("{\"koordBPF\": {\"listen\": \"\xff\"}}", "line 1, column 26: invalid utf-8 string");
	BAD(KB({"listen": "a\u0000:b"}), "koordBPF.listen: must not contain NUL characters");
	BAD(KB({"classRules": [{"glob": "/x\u0000*", "qos": "BE"}]}),
	    "koordBPF.classRules[0].glob: must not contain NUL characters");

	/* json-c would stop at a NUL byte and ignore the rest */
	assert_int_equal(config_parse(NAME, "{}\n\0x", 5, &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, NAME ": line 2, column 1: unexpected character");
	assert_defaults(&c);
	config_free(&c);

	/* trailing whitespace is fine */
	GOOD("{}\n\t \r\n", &c);
	config_free(&c);
}

static void test_top_level(void **state)
{
	BAD("", "empty (want a JSON object)");
	BAD(" \n\t", "empty (want a JSON object)");
	BAD("[]", "the top level must be an object (a NodeSLO or its spec), got an array");
	BAD("42", "the top level must be an object (a NodeSLO or its spec), got 42");
	BAD("\"x\"", "the top level must be an object (a NodeSLO or its spec), got \"x\"");
	BAD("null", "the top level must be an object (a NodeSLO or its spec), got null");
	BAD(J({"resourceUsedThresholdWithBE": 1}),
	    "resourceUsedThresholdWithBE: must be an object, got 1");
	BAD(J({"koordBPF": [1]}), "koordBPF: must be an object, got an array");
	BAD(KB({"throttle": true}), "koordBPF.throttle: must be an object, got true");
}

static void test_types(void **state)
{
	BAD(BE({"cpuSuppressThresholdPercent": "65"}),
	    "resourceUsedThresholdWithBE.cpuSuppressThresholdPercent: must be an integer, got \"65\"");
	BAD(BE({"cpuSuppressThresholdPercent": 65.5}),
	    "resourceUsedThresholdWithBE.cpuSuppressThresholdPercent: must be an integer, got 65.5");
	BAD(BE({"memoryEvictThresholdPercent": true}),
	    "resourceUsedThresholdWithBE.memoryEvictThresholdPercent: must be an integer, got true");
	BAD(BE({"enable": 1}), "resourceUsedThresholdWithBE.enable: must be true or false, got 1");
	BAD(BE({"enable": "true"}),
	    "resourceUsedThresholdWithBE.enable: must be true or false, got \"true\"");
	BAD(BE({"cpuSuppressPolicy": 0}),
	    "resourceUsedThresholdWithBE.cpuSuppressPolicy: must be a string, got 0");
	BAD(KB({"period": "1"}), "koordBPF.period: must be a number, got \"1\"");
	BAD(KB({"period": NaN}), "koordBPF.period: must be a finite number, got NaN");
	BAD(KB({"reservation": {"resources": {"cpu": 1e400}}}),
	    "koordBPF.reservation.resources.cpu: must be a finite number, got 1e400");
	BAD(KB({"reservation": {"resources": {"cpu": "two"}}}),
	    "koordBPF.reservation.resources.cpu: not a quantity (\"2\", \"500m\", \"4Gi\"): \"two\"");
	BAD(KB({"reservation": {"resources": {"memory": -1}}}),
	    "koordBPF.reservation.resources.memory: must be >= 0, got -1");
	BAD(KB({"reservation": {"reservedCPUs": 2}}),
	    "koordBPF.reservation.reservedCPUs: must be a CPU list string (\"0-1,4\"), got 2");
	BAD(KB({"reservation": {"reservedCPUs": "3-1"}}),
	    "koordBPF.reservation.reservedCPUs: not a CPU list (\"0-1,4\"): \"3-1\"");
	/* the keys of an earlier version say where their values went */
	BAD(KB({"reservedCPUs": 2}),
	    "koordBPF.reservedCPUs: moved: a number of cores is koordBPF.reservation.resources.cpu; "
	    "reservation.reservedCPUs is a CPU list, as in node.koordinator.sh/reservation");
	BAD(KB({"batch": {"reservedMemoryBytes": 0}}),
	    "koordBPF.batch.reservedMemoryBytes: moved: koordBPF.reservation.resources.memory");
	BAD(KB({"listen": 9326}), "koordBPF.listen: must be a string, got 9326");
	BAD(KB({"listen": ""}), "koordBPF.listen: must be HOST:PORT, got \"\"");
	BAD(KB({"listen": "localhost"}), "koordBPF.listen: must be HOST:PORT, got \"localhost\"");
	BAD(KB({"stateDir": "var/lib"}),
	    "koordBPF.stateDir: must be an absolute path, got \"var/lib\"");
	BAD(KB({"kubelet": {"url": "ftp://x/pods"}}),
	    "koordBPF.kubelet.url: must be \"\" (off) or an http:// or https:// URL, got \"ftp://x/pods\"");
	BAD(KB({"kubelet": {"caFile": "ca.crt"}}),
	    "koordBPF.kubelet.caFile: must be an absolute path, got \"ca.crt\"");
	BAD(KB({"beWakeupPriority": null, "throttle": {"enable": 0}}),
	    "koordBPF.throttle.enable: must be true or false, got 0");
	BAD(KB({"suppressSmoothingWindows": [3]}),
	    "koordBPF.suppressSmoothingWindows: must be an integer, got an array");
	BAD(KB({"interference": {"sustainedWindows": {}}}),
	    "koordBPF.interference.sustainedWindows: must be an integer, got an object");
	BAD(KB({"beWakeupPriorityBy": "SCHED_IDLE"}),
	    "koordBPF.beWakeupPriorityBy: must be \"weight\" or \"idle\", got \"SCHED_IDLE\"");
	BAD(KB({"beWakeupPriorityBy": true}), "koordBPF.beWakeupPriorityBy: must be a string, got true");
	BAD(KB({"eviction": {"backend": "signal"}}),
	    "koordBPF.eviction.backend: must be \"kill\", \"hook\" or \"api\", got \"signal\"");
	BAD(KB({"eviction": {"enable": "yes"}}),
	    "koordBPF.eviction.enable: must be true or false, got \"yes\"");
	BAD(KB({"classRules": {}}), "koordBPF.classRules: must be an array, got an object");
	BAD(KB({"cgroupRoots": "/kubepods"}),
	    "koordBPF.cgroupRoots: must be an array, got \"/kubepods\"");
	BAD(KB({"eviction": {"hook": "/bin/x"}}),
	    "koordBPF.eviction.hook: must be an array, got \"/bin/x\"");
}

/* {"a": {"b": VALUE}} from "a.b" and VALUE. */
static void nest(char *out, size_t len, const char *path, const char *value)
{
	const char *p, *dot;
	size_t n = 0, keys = 0;

	for (p = path;; p = dot + 1) {
		dot = strchrnul(p, '.');
		n += snprintf(out + n, len - n, "{\"%.*s\": ", (int)(dot - p), p);
		keys++;
		if (!*dot)
			break;
	}
	n += snprintf(out + n, len - n, "%s", value);
	while (keys-- && n < len - 1)
		out[n++] = '}';
	out[n] = '\0';
}

/*
 * Each bound of each number, just outside it: the field, the value, the
 * range, and the value as shown when the message differs from the text.
 */
static void test_ranges(void **state)
{
	static const char *const bad[][4] = {
		{ "resourceUsedThresholdWithBE.cpuSuppressThresholdPercent", "-1", "in [0, 100]" },
		{ "resourceUsedThresholdWithBE.cpuSuppressThresholdPercent", "101", "in [0, 100]" },
		/* json-c clamps integers beyond 64 bits */
		{ "resourceUsedThresholdWithBE.cpuSuppressThresholdPercent", "99999999999999999999",
		  "in [0, 100]", "18446744073709551615" },
		{ "resourceUsedThresholdWithBE.cpuSuppressMinPercent", "-1", "in [0, 100]" },
		{ "resourceUsedThresholdWithBE.cpuSuppressMinPercent", "101", "in [0, 100]" },
		{ "resourceUsedThresholdWithBE.cpuEvictBESatisfactionLowerPercent", "0", "in (0, 60]" },
		{ "resourceUsedThresholdWithBE.cpuEvictBESatisfactionLowerPercent", "61", "in (0, 60]" },
		{ "resourceUsedThresholdWithBE.cpuEvictBESatisfactionUpperPercent", "0", "in (0, 100)" },
		{ "resourceUsedThresholdWithBE.cpuEvictBESatisfactionUpperPercent", "100",
		  "in (0, 100)" },
		{ "resourceUsedThresholdWithBE.cpuEvictBEUsageThresholdPercent", "0", "in (0, 100]" },
		{ "resourceUsedThresholdWithBE.cpuEvictBEUsageThresholdPercent", "101.0",
		  "in (0, 100]" },
		{ "resourceUsedThresholdWithBE.cpuEvictTimeWindowSeconds", "0", "> 0" },
		{ "resourceUsedThresholdWithBE.cpuEvictTimeWindowSeconds", "3000000000",
		  "in (0, 2147483647]" },
		{ "resourceUsedThresholdWithBE.memoryEvictThresholdPercent", "0", "in (0, 100]" },
		{ "resourceUsedThresholdWithBE.memoryEvictThresholdPercent", "101", "in (0, 100]" },
		{ "resourceUsedThresholdWithBE.memoryEvictLowerPercent", "-1", "in [0, 100)" },
		{ "resourceUsedThresholdWithBE.memoryEvictLowerPercent", "100", "in [0, 100)" },
		{ "koordBPF.period", "0.09", "in [0.1, 3600]" },
		{ "koordBPF.period", "3601", "in [0.1, 3600]" },
		{ "koordBPF.reactWaitUs", "-1", "in [0, 5000]" },
		{ "koordBPF.reactWaitUs", "5001", "in [0, 5000]" },
		{ "koordBPF.suppressSmoothingWindows", "0", "in [1, 60]" },
		{ "koordBPF.suppressSmoothingWindows", "61", "in [1, 60]" },
		{ "koordBPF.interference.victimP99WaitUs", "0", "> 0" },
		{ "koordBPF.interference.beStealPercent", "0", "in (0, 100]" },
		{ "koordBPF.interference.beStealPercent", "100.5", "in (0, 100]" },
		{ "koordBPF.interference.sustainedWindows", "0", "in [1, 600]" },
		{ "koordBPF.interference.sustainedWindows", "601", "in [1, 600]" },
		{ "koordBPF.batch.cpuReclaimThresholdPercent", "-1", "in [0, 100]" },
		{ "koordBPF.batch.memoryReclaimThresholdPercent", "101", "in [0, 100]" },
		{ "koordBPF.batch.metricAggregateDurationSeconds", "0", "in [1, 3600]" },
		{ "koordBPF.batch.metricAggregateDurationSeconds", "3601", "in [1, 3600]" },
		{ "koordBPF.kubelet.intervalSeconds", "0.5", "in [1, 3600]" },
		{ "koordBPF.kubelet.timeoutSeconds", "0", "in (0, 60]" },
		{ "koordBPF.yarn.intervalSeconds", "0", "in [1, 3600]" },
		{ "koordBPF.yarn.timeoutSeconds", "61", "in (0, 60]" },
		{ "koordBPF.throttle.cutFactor", "0", "in (0, 1)" },
		{ "koordBPF.throttle.cutFactor", "1", "in (0, 1)" },
		{ "koordBPF.throttle.cutFactor", "1.5", "in (0, 1)" },
		{ "koordBPF.throttle.floorCores", "0", "> 0" },
		{ "koordBPF.throttle.recoveryStepCores", "-1", "> 0" },
		{ "koordBPF.throttle.quietWindows", "0", "in [1, 600]" },
		{ "koordBPF.throttle.quietWindows", "601", "in [1, 600]" },
		{ "koordBPF.throttle.maxCulprits", "0", "in [1, 64]" },
		{ "koordBPF.throttle.maxCulprits", "65", "in [1, 64]" },
		{ "koordBPF.effect.windows", "0", "in [1, 60]" },
		{ "koordBPF.effect.windows", "61", "in [1, 60]" },
		{ "koordBPF.effect.worsePercent", "-1", ">= 0" },
		{ "koordBPF.effect.holdOffSeconds", "-0.1", ">= 0" },
		{ "koordBPF.eviction.maxPerMinute", "0", "in [1, 600]" },
		{ "koordBPF.eviction.maxPerMinute", "601", "in [1, 600]" },
		{ "koordBPF.eviction.coolDownSeconds", "-1", ">= 0" },
		{ "koordBPF.eviction.culpritAtFloorSeconds", "0", "> 0" },
	};
	static const char be[] = "resourceUsedThresholdWithBE.";
	char text[256], want[ERRLEN], err[ERRLEN];
	struct koord_config c;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "%s: must be %s, got %s", bad[i][0], bad[i][2],
			 bad[i][3] ? bad[i][3] : bad[i][1]);
		err[0] = '\0';
		if (strncmp(bad[i][0], be, strlen(be))) {
			nest(text, sizeof(text), bad[i][0], bad[i][1]);
			assert_int_equal(parse(text, &c, err), -EINVAL);
			assert_string_equal(err + strlen(NAME ": "), want);
			assert_defaults(&c);
			config_free(&c);
			continue;
		}
		/* Koordinator's section: ignored, enforcement off, the file read */
		snprintf(text, sizeof(text), "{\"resourceUsedThresholdWithBE\": {\"enable\": true, "
			 "\"%s\": %s}}", bad[i][0] + strlen(be), bad[i][1]);
		assert_int_equal(parse(text, &c, err), 0);
		assert_int_equal(c.ignored, 1);
		assert_string_equal(c.ignored_first, want);
		assert_defaults(&c);
		config_free(&c);
	}

	/* an integer field written with a fraction is a type error, not a range error */
	BAD(BE({"cpuEvictBEUsageThresholdPercent": 100.0001}),
	    "resourceUsedThresholdWithBE.cpuEvictBEUsageThresholdPercent: "
	    "must be an integer, got 100.0001");
}

static void test_unknown(void **state)
{
	struct koord_config c;

	BAD(KB({"perod": 1}), "koordBPF.perod: unknown field");
	BAD(KB({"Period": 1}), "koordBPF.Period: unknown field (did you mean \"period\"?)");
	BAD(KB({"throttle": {"cutfactor": 0.5}}),
	    "koordBPF.throttle.cutfactor: unknown field (did you mean \"cutFactor\"?)");
	BAD(KB({"eviction": {"hook": [], "extra": {"deeper": 1}}}),
	    "koordBPF.eviction.extra: unknown field");
	BAD(KB({"classRules": [{"glob": "/x", "qos": "BE", "prio": 1}]}),
	    "koordBPF.classRules[0].prio: unknown field (want \"glob\" and \"qos\")");

	/* real NodeSLO fields koord-bpf does not implement, other sections, future sections */
	GOOD(J({"resourceUsedThresholdWithBE": {"cpuEvictThresholdPercent": 80,
			"cpuEvictLowerPercent": 78, "cpuAllocatableEvictThresholdPercent": 110,
			"cpuAllocatableEvictLowerPercent": 100,
			"memoryAllocatableEvictThresholdPercent": 110,
			"memoryAllocatableEvictLowerPercent": 100,
			"cpuEvictPolicy": "evictByAllocatable",
			"evictEnabledPriorityThreshold": 5999,
			"allocatableEvictPriorityThreshold": 7999},
		"resourceQOSStrategy": {"beClass": {}}, "cpuBurstStrategy": {},
		"systemStrategy": {}, "psiStrategy": {}, "hostApplications": [],
		"futureStrategy": {"x": 1}}), &c);
	assert_defaults(&c);
	config_free(&c);
}

/*
 * A value Koordinator accepts and koord-bpf does not support: the file is
 * read, the value ignored (@field unset, -1), enforcement off.
 */
#define IGNORED(text, why, field) do {						\
	struct koord_config c_;							\
	GOOD(text, &c_);							\
	assert_false(c_.be.enable);						\
	assert_int_equal(c_.ignored, 1);					\
	assert_string_equal(c_.ignored_first, "resourceUsedThresholdWithBE." why);	\
	assert_int_equal(c_.be.field, -1);					\
	config_free(&c_);							\
} while (0)

static void test_cross_fields(void **state)
{
	struct koord_config c;

	IGNORED(BE({"enable": true, "cpuEvictBESatisfactionLowerPercent": 40,
		    "cpuEvictBESatisfactionUpperPercent": 30}),
		"cpuEvictBESatisfactionUpperPercent: "
		"must be >= cpuEvictBESatisfactionLowerPercent (40), got 30",
		cpu_evict_be_satisfaction_upper_percent);
	IGNORED(BE({"enable": true, "cpuEvictBESatisfactionLowerPercent": 40}),
		"cpuEvictBESatisfactionUpperPercent: required with cpuEvictBESatisfactionLowerPercent",
		cpu_evict_be_satisfaction_lower_percent);
	IGNORED(BE({"cpuEvictBESatisfactionUpperPercent": 40}),
		"cpuEvictBESatisfactionLowerPercent: required with cpuEvictBESatisfactionUpperPercent",
		cpu_evict_be_satisfaction_upper_percent);
	IGNORED(BE({"cpuEvictBESatisfactionLowerPercent": 40,
		    "cpuEvictBESatisfactionUpperPercent": null}),
		"cpuEvictBESatisfactionUpperPercent: required with cpuEvictBESatisfactionLowerPercent",
		cpu_evict_be_satisfaction_lower_percent);
	/* against the default threshold too */
	IGNORED(BE({"enable": true, "memoryEvictLowerPercent": 70}),
		"memoryEvictLowerPercent: must be < memoryEvictThresholdPercent (70), got 70",
		memory_evict_lower_percent);
	IGNORED(BE({"memoryEvictThresholdPercent": 50, "memoryEvictLowerPercent": 60}),
		"memoryEvictLowerPercent: must be < memoryEvictThresholdPercent (50), got 60",
		memory_evict_lower_percent);
	/* a type is still an error: the CRD's schema refuses it too */
	BAD(BE({"enable": true, "memoryEvictThresholdPercent": "70"}),
	    "resourceUsedThresholdWithBE.memoryEvictThresholdPercent: must be an integer, got \"70\"");
	/* a policy of its own, a field of a later Koordinator, a typo */
	IGNORED(BE({"enable": true, "cpuSuppressPolicy": "CPUSET"}),
		"cpuSuppressPolicy: must be \"cpuset\" or \"cfsQuota\", got \"CPUSET\"",
		cpu_suppress_min_percent);
	IGNORED(BE({"enable": true, "cpuFutureThresholdPercent": 5}),
		"cpuFutureThresholdPercent: unknown field", cpu_suppress_min_percent);
	IGNORED(BE({"enable": true, "cpusuppressthresholdpercent": 50}),
		"cpusuppressthresholdpercent: unknown field (did you mean "
		"\"cpuSuppressThresholdPercent\"?)", cpu_suppress_min_percent);
	GOOD(BE({"memoryEvictLowerPercent": 69}), &c);
	assert_int_equal(c.be.memory_evict_lower_percent, 69);
	config_free(&c);

	BAD(KB({"eviction": {"backend": "hook"}}),
	    "koordBPF.eviction.hook: required when backend is \"hook\"");
	BAD(KB({"eviction": {"backend": "api", "api": {"url": ""}}}),
	    "koordBPF.eviction.api.url: required when backend is \"api\"");
	BAD(KB({"eviction": {"backend": "api", "api": {"url": "kubernetes.default.svc"}}}),
	    "koordBPF.eviction.api.url: must be \"\" (off) or an http:// or https:// URL, got "
	    "\"kubernetes.default.svc\"");
	BAD(KB({"eviction": {"backend": "api", "api": {"tokenFile": "token"}}}),
	    "koordBPF.eviction.api.tokenFile: must be an absolute path, got \"token\"");
	BAD(KB({"kubelet": {"cpuManagerStateFile": "cpu_manager_state"}}),
	    "koordBPF.kubelet.cpuManagerStateFile: must be an absolute path, got "
	    "\"cpu_manager_state\"");
	GOOD(KB({"eviction": {"backend": "api", "api": {"url": "https://10.0.0.1:6443", "caFile": ""}},
		  "kubelet": {"cpuManagerStateFile": ""}}), &c);
	assert_int_equal(c.eviction.backend, EVICT_API);
	assert_string_equal(c.eviction.api.url, "https://10.0.0.1:6443");
	assert_string_equal(c.eviction.api.ca_file, "");
	assert_string_equal(c.kubelet.cpu_manager_state, "");
	config_free(&c);
	BAD(KB({"eviction": {"backend": "hook", "hook": []}}),
	    "koordBPF.eviction.hook: required when backend is \"hook\"");
	BAD(KB({"eviction": {"backend": "hook", "hook": ["evict.sh"]}}),
	    "koordBPF.eviction.hook[0]: the program must be an absolute path, got \"evict.sh\"");
	BAD(KB({"eviction": {"backend": "hook", "hook": ["/bin/x", 1]}}),
	    "koordBPF.eviction.hook[1]: must be a string, got 1");
	BAD(KB({"eviction": {"hook": ["/a", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10",
				     "11", "12", "13", "14", "15", "16"]}}),
	    "koordBPF.eviction.hook: at most 16 entries, got 17");
	BAD(J({"kind": "NodeSLO", "spec": {"extensions": {"koordBPF": {"eviction":
		{"backend": "hook"}}}}}),
	    "spec.extensions.koordBPF.eviction.hook: required when backend is \"hook\"");

	/* a hook is kept with backend kill (unused), and the last hook given wins */
	GOOD(KB({"eviction": {"hook": ["/bin/a", "x"], "hook": ["/bin/b"]}}), &c);
	assert_int_equal(c.eviction.backend, EVICT_KILL);
	assert_string_equal(c.eviction.hook[0], "/bin/b");
	assert_null(c.eviction.hook[1]);
	config_free(&c);
	GOOD(KB({"eviction": {"hook": ["/a", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10",
				      "11", "12", "13", "14", "15"]}}), &c);
	assert_string_equal(c.eviction.hook[15], "15");
	assert_null(c.eviction.hook[16]);
	config_free(&c);
}

static void test_cgroup_roots(void **state)
{
	struct koord_config c;

	BAD(KB({"cgroupRoots": ["/kubepods", "kubepods"]}),
	    "koordBPF.cgroupRoots[1]: must start with '/', got \"kubepods\"");
	BAD(KB({"cgroupRoots": [""]}), "koordBPF.cgroupRoots[0]: must start with '/', got \"\"");
	BAD(KB({"cgroupRoots": ["/a/../b"]}),
	    "koordBPF.cgroupRoots[0]: must not have \".\" or \"..\" components, got \"/a/../b\"");
	BAD(KB({"cgroupRoots": ["/.."]}),
	    "koordBPF.cgroupRoots[0]: must not have \".\" or \"..\" components, got \"/..\"");
	BAD(KB({"cgroupRoots": ["/./a"]}),
	    "koordBPF.cgroupRoots[0]: must not have \".\" or \"..\" components, got \"/./a\"");
	BAD(KB({"cgroupRoots": ["/a//b"]}),
	    "koordBPF.cgroupRoots[0]: must not have empty components, got \"/a//b\"");
	BAD(KB({"cgroupRoots": ["/a/"]}),
	    "koordBPF.cgroupRoots[0]: must not have empty components, got \"/a/\"");
	BAD(KB({"cgroupRoots": ["//"]}),
	    "koordBPF.cgroupRoots[0]: must not have empty components, got \"//\"");
	BAD(KB({"cgroupRoots": ["/a", "/b", "/a"]}),
	    "koordBPF.cgroupRoots[2]: \"/a\" is listed twice");
	BAD(KB({"cgroupRoots": ["/a", null]}), "koordBPF.cgroupRoots[1]: must be a string, got null");
	BAD(KB({"cgroupRoots": []}), "koordBPF.cgroupRoots: must not be empty");
	BAD(KB({"cgroupRoots": ["/1", "/2", "/3", "/4", "/5", "/6", "/7", "/8", "/9", "/10",
				"/11", "/12", "/13", "/14", "/15", "/16", "/17"]}),
	    "koordBPF.cgroupRoots: at most 16 entries, got 17");

	/* names with dots are fine; the list replaces the default one */
	GOOD(KB({"cgroupRoots": ["/kubepods.slice", "/a/..b/c.", "/1", "/2", "/3", "/4", "/5",
				 "/6", "/7", "/8", "/9", "/10", "/11", "/12", "/13", "/14"]}), &c);
	assert_int_equal(c.ncgroup_roots, CONFIG_ROOTS_MAX);
	assert_string_equal(c.cgroup_roots[1], "/a/..b/c.");
	assert_string_equal(c.cgroup_roots[15], "/14");
	config_free(&c);
}

static void test_class_rules(void **state)
{
	struct koord_config c;

	BAD(KB({"classRules": [{"glob": "/x", "qos": "FOO"}]}),
	    "koordBPF.classRules[0].qos: must be LSE, LSR, LS, BE or SYSTEM, got \"FOO\"");
	BAD(KB({"classRules": [{"glob": "/x", "qos": "BE"}, {"glob": "/y", "qos": "IDLE"}]}),
	    "koordBPF.classRules[1].qos: must be LSE, LSR, LS, BE or SYSTEM, got \"IDLE\"");
	BAD(KB({"classRules": [{"glob": "/x", "qos": "=BE"}]}),
	    "koordBPF.classRules[0].qos: must be LSE, LSR, LS, BE or SYSTEM, got \"=BE\"");
	BAD(KB({"classRules": [{"glob": "/x", "qos": 4}]}),
	    "koordBPF.classRules[0].qos: must be a string, got 4");
	BAD(KB({"classRules": [{"glob": "/x"}]}), "koordBPF.classRules[0].qos: required");
	BAD(KB({"classRules": [{"qos": "BE"}]}),
	    "koordBPF.classRules[0].glob: a non-empty glob is required");
	BAD(KB({"classRules": [{"glob": "", "qos": "BE"}]}),
	    "koordBPF.classRules[0].glob: a non-empty glob is required");
	BAD(KB({"classRules": [{"glob": ["/x"], "qos": "BE"}]}),
	    "koordBPF.classRules[0].glob: must be a string, got an array");
	BAD(KB({"classRules": ["/x=BE"]}),
	    "koordBPF.classRules[0]: must be an object {\"glob\": ..., \"qos\": ...}, "
	    "got \"/x=BE\"");

	/* order is kept; a glob may hold '=' */
	GOOD(KB({"classRules": [{"glob": "/a=LS", "qos": "BE"}, {"qos": "lse", "glob": "/b*"}]}),
	     &c);
	assert_int_equal(c.rules.n, 2);
	assert_string_equal(c.rules.v[0].glob, "/a=LS");
	assert_int_equal(c.rules.v[0].qos, KC_BE);
	assert_string_equal(c.rules.v[1].glob, "/b*");
	assert_int_equal(c.rules.v[1].qos, KC_LSE);
	config_free(&c);
}

/* A temporary file of @text padded with blanks to @size bytes; the caller unlinks it. */
static void temp_file(char *path, const char *text, size_t size)
{
	static const char pad[4096] = { [0 ... 4095] = ' ' };
	size_t done = strlen(text), n;
	int fd;

	strcpy(path, "/tmp/koord-config-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, done), (ssize_t)done);
	for (; done < size; done += n) {
		n = size - done < sizeof(pad) ? size - done : sizeof(pad);
		assert_int_equal(write(fd, pad, n), (ssize_t)n);
	}
	close(fd);
}

/* The node's NodeSLO over the file: Koordinator's sections from one, koordBPF from the other. */
static void test_nodeslo_over_file(void **state)
{
	const char *slo = J({"kind": "NodeSLO", "metadata": {"name": "n"}, "spec": {
		"resourceUsedThresholdWithBE": {"enable": true, "cpuSuppressThresholdPercent": 50},
		"resourceQOSStrategy": {"policies": {"cpuPolicy": "coreSched"}},
		"extensions": {"koordBPF": {"period": 9}}}});
	const char *bad = J({"kind": "NodeSLO", "spec": {"resourceUsedThresholdWithBE": {"enable": 1}}});
	char path[64], bad_file[64], err[512] = "";
	struct koord_config c;

	temp_file(path, "{\"resourceUsedThresholdWithBE\": {\"enable\": false, \"cpuSuppressPolicy\": "
		  "\"cfsQuota\"}, \"koordBPF\": {\"period\": 2, \"beWakeupPriority\": true}}", 0);
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
	temp_file(bad_file, "{\"koordBPF\": {\"period\": \"x\"}}", 0);
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

#define LOAD_BAD(path, ret, msg) do {						\
	struct koord_config c_;							\
	char err_[ERRLEN] = "";							\
	assert_int_equal(config_load((path), &c_, err_, sizeof(err_)), (ret));	\
	assert_string_equal(err_, msg);						\
	assert_defaults(&c_);							\
	config_free(&c_);							\
} while (0)

static void test_load_errors(void **state)
{
	char path[64], msg[128];
	struct koord_config c;
	char err[ERRLEN];

	LOAD_BAD("/nonexistent/koord.json", -ENOENT,
		 "/nonexistent/koord.json: No such file or directory");
	LOAD_BAD("/tmp", -EISDIR, "/tmp: Is a directory");

	temp_file(path, "", 0);
	snprintf(msg, sizeof(msg), "%s: empty (want a JSON object)", path);
	LOAD_BAD(path, -EINVAL, msg);
	unlink(path);

	/* 4 MiB is the limit: exactly that loads, one byte more is refused */
	temp_file(path, "{}", 4 << 20);
	assert_int_equal(config_load(path, &c, err, sizeof(err)), 0);
	config_free(&c);
	unlink(path);
	temp_file(path, "{}", (4 << 20) + 1);
	snprintf(msg, sizeof(msg), "%s: larger than 4 MiB", path);
	LOAD_BAD(path, -EINVAL, msg);
	unlink(path);

	temp_file(path, "{\"koordBPF\": {\"throttle\": {\"cutFactor\": 1.5}}}", 0);
	snprintf(msg, sizeof(msg), "%s: koordBPF.throttle.cutFactor: must be in (0, 1), got 1.5",
		 path);
	LOAD_BAD(path, -EINVAL, msg);
	unlink(path);
}

/* A message too long for the buffer is cut; no buffer at all is fine. */
static void test_err_buffer(void **state)
{
	const char *text = KB({"throttle": {"cutFactor": 2}});
	struct koord_config c;
	char tiny[12];

	assert_int_equal(config_parse(NAME, text, strlen(text), &c, tiny, sizeof(tiny)), -EINVAL);
	assert_string_equal(tiny, NAME ": koo");
	config_free(&c);
	assert_int_equal(config_parse(NAME, text, strlen(text), &c, NULL, 0), -EINVAL);
	assert_defaults(&c);
	config_free(&c);
	assert_int_equal(config_load("/nonexistent", &c, NULL, 0), -ENOENT);
	config_free(&c);
}

/* Notes for what is accepted but not used go to the log, one line each. */
static void test_notes(void **state)
{
	FILE *tmp = tmpfile();
	enum log_level saved_level = log_level;
	struct koord_config c;
	char out[4096] = "";
	int saved_fd;
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	saved_fd = dup(STDERR_FILENO);
	dup2(fileno(tmp), STDERR_FILENO);
	log_level = LOG_LVL_INFO;
	GOOD(J({"kind": "NodeSLO", "spec": {"resourceQOSStrategy": {"lsClass": {}},
		"resourceUsedThresholdWithBE": {"cpuEvictPolicy": "evictByRealLimit",
			"enable": true, "memoryEvictThresholdPercent": 0},
		"extensions": {"someoneElse": {}}, "newSection": 1}}), &c);
	config_free(&c);
	log_level = saved_level;
	fflush(stderr);
	dup2(saved_fd, STDERR_FILENO);
	close(saved_fd);
	rewind(tmp);
	n = fread(out, 1, sizeof(out) - 1, tmp);
	out[n] = '\0';
	fclose(tmp);

	assert_non_null(strstr(out, NAME ": spec.resourceQOSStrategy.lsClass: not used by koord-bpf, "
			       "ignored\n"));
	assert_non_null(strstr(out, NAME ": spec.resourceUsedThresholdWithBE.cpuEvictPolicy: "
			       "not implemented by koord-bpf, ignored\n"));
	assert_non_null(strstr(out, NAME ": spec.extensions.someoneElse: not used by koord-bpf, "
			       "ignored\n"));
	assert_non_null(strstr(out, NAME ": spec.newSection: not a NodeSLO section koord-bpf knows, "
			       "ignored\n"));
	assert_non_null(strstr(out, NAME ": spec.resourceUsedThresholdWithBE.memoryEvictThresholdPercent: "
			       "must be in (0, 100], got 0: not supported by koord-bpf, ignored "
			       "(enforcement off)\n"));
	assert_non_null(strstr(out, NAME ": enforcement off, measuring only: 1 value(s) of "
			       "the NodeSLO not supported (the first: "
			       "spec.resourceUsedThresholdWithBE.memoryEvictThresholdPercent: must be in "
			       "(0, 100], got 0)\n"));
}

/*
 * koordlet's CoreSched sets the besteffort dir's cpu.idle where the NodeSLO
 * decides it (cpuPolicy coreSched, beClass.cpuQOS enabled): there koord-bpf's
 * wake-up priority is off, whatever its own setting; elsewhere it stays.
 */
#define QOS(policy, be)	"{\"resourceUsedThresholdWithBE\": {\"enable\": true}, "	\
			"\"resourceQOSStrategy\": {\"policies\": {\"cpuPolicy\": " policy "}, " \
			"\"beClass\": {\"cpuQOS\": " be "}, \"lsClass\": {}}, "		\
			"\"koordBPF\": {\"beWakeupPriority\": true}}"

static void test_cpu_qos(void **state)
{
	struct koord_config c;

	GOOD(QOS("\"coreSched\"", "{\"enable\": true, \"schedIdle\": 1, \"groupIdentity\": -1, "
		 "\"coreExpeller\": false}"), &c);
	assert_true(c.cpu_qos.core_sched && c.cpu_qos.be_enable);
	assert_int_equal(c.cpu_qos.be_sched_idle, 1);
	assert_false(c.be_wakeup_priority);
	assert_true(c.be.enable);
	config_free(&c);
	/* schedIdle 0: koordlet sets 0, and koord-bpf does not set 1 over it */
	GOOD(QOS("\"coreSched\"", "{\"enable\": true}"), &c);
	assert_false(c.be_wakeup_priority);
	config_free(&c);
	/* not the NodeSLO's to decide: the wake-up priority stays koord-bpf's */
	GOOD(QOS("\"coreSched\"", "{\"enable\": false, \"schedIdle\": 1}"), &c);
	assert_true(c.be_wakeup_priority);
	config_free(&c);
	GOOD(QOS("\"groupIdentity\"", "{\"enable\": true, \"schedIdle\": 1}"), &c);
	assert_true(c.be_wakeup_priority);
	config_free(&c);
	GOOD(QOS("\"somethingNew\"", "{\"enable\": true, \"schedIdle\": 1}"), &c);
	assert_false(c.cpu_qos.core_sched);
	assert_true(c.be_wakeup_priority);
	config_free(&c);
	/* koordlet takes any schedIdle but 1 as "not idle"; a type error still refuses */
	GOOD(QOS("\"coreSched\"", "{\"enable\": true, \"schedIdle\": 7}"), &c);
	assert_int_equal(c.cpu_qos.be_sched_idle, 7);
	assert_false(c.be_wakeup_priority);
	assert_int_equal(c.ignored, 0);
	config_free(&c);
	BAD(QOS("\"coreSched\"", "{\"enable\": \"yes\"}"),
	    "resourceQOSStrategy.beClass.cpuQOS.enable: must be true or false, got \"yes\"");
	BAD(QOS("1", "{}"), "resourceQOSStrategy.policies.cpuPolicy: must be a string, got 1");
	/* beyond an int: Koordinator's CRD takes an int64; ignored, measuring only */
	GOOD(QOS("\"coreSched\"", "{\"enable\": true, \"schedIdle\": 1099511627776}"), &c);
	assert_int_equal(c.ignored, 1);
	assert_false(c.be.enable);
	config_free(&c);
}

/* Parse, free, parse again: nothing is kept from the first round. */
/* node.koordinator.sh/reservation's shape: its CPU list decides the cores when given. */
static void test_reservation(void **state)
{
	struct koord_config c;

	GOOD(KB({"reservation": {"resources": {"cpu": 4, "memory": "512Mi", "pods": "10"},
			       "reservedCPUs": "2", "applyPolicy": "Default"}}), &c);
	assert_double(c.reservation.cpu, 4);
	assert_double(c.reservation.memory, 512 << 20);
	assert_double(config_reserved_cores(&c), 1);
	assert_true(CPU_ISSET(2, &c.reservation.cpus));
	config_free(&c);
	GOOD(KB({"reservation": {"resources": {"cpu": "250m"}}}), &c);
	assert_double(config_reserved_cores(&c), 0.25);
	config_free(&c);
}

static void test_reload(void **state)
{
	struct koord_config c;

	GOOD(KB({"listen": "0.0.0.0:1", "classRules": [{"glob": "/x", "qos": "BE"}],
		 "eviction": {"backend": "hook", "hook": ["/bin/x", "a"]}}), &c);
	config_free(&c);
	GOOD(KB({"period": 3}), &c);
	assert_string_equal(c.listen, "127.0.0.1:9326");
	assert_int_equal(c.rules.n, 0);
	assert_null(c.eviction.hook[0]);
	config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_example_default),
		cmocka_unit_test(test_example_enforce),
		cmocka_unit_test(test_example_nodeslo),
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_top_level),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_cross_fields),
		cmocka_unit_test(test_cgroup_roots),
		cmocka_unit_test(test_class_rules),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_err_buffer),
		cmocka_unit_test(test_notes),
		cmocka_unit_test(test_cpu_qos),
		cmocka_unit_test(test_reservation),
		cmocka_unit_test(test_nodeslo_over_file),
		cmocka_unit_test(test_reload),
	};

	/* the notes of accepted-but-unused fields would drown the results */
	log_level = LOG_LVL_WARN;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
