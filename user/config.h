/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's JSON configuration: Koordinator NodeSLO's
 * resourceUsedThresholdWithBE (field names and defaults as Koordinator's),
 * and koord-bpf's own section "koordBPF" beside it (docs/config.md).
 */
#ifndef KOORD_CONFIG_H
#define KOORD_CONFIG_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include "classify.h"

#define CONFIG_ROOTS_MAX	16
#define CONFIG_HOOK_ARGS_MAX	16

enum suppress_policy { SUPPRESS_CPUSET, SUPPRESS_CFS_QUOTA };
enum evict_backend { EVICT_KILL, EVICT_HOOK, EVICT_API };

#define SA_TOKEN	"/var/run/secrets/kubernetes.io/serviceaccount/token"
#define SA_CA		"/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
/* advise: write nothing; judge the changes other writers make to BE cgroups */
enum koord_mode { MODE_ENFORCE, MODE_ADVISE };
/* How BE's wake-up priority is given: the lowest weight, or a SCHED_IDLE group (cpu.idle). */
enum wakeup_by { WAKEUP_BY_WEIGHT, WAKEUP_BY_IDLE };

/* NodeSLO spec.resourceUsedThresholdWithBE; -1 in an int field means "unset". */
struct be_thresholds {
	bool enable;				/* false */
	int cpu_suppress_threshold_percent;	/* 65, 0..100 */
	int cpu_suppress_min_percent;		/* unset, 0..100 */
	enum suppress_policy cpu_suppress_policy;	/* cpuset */
	int cpu_evict_be_satisfaction_lower_percent;	/* unset; (0, 60] */
	int cpu_evict_be_satisfaction_upper_percent;	/* unset; (0, 100), >= lower */
	int cpu_evict_be_usage_threshold_percent;	/* 90, (0, 100] */
	int cpu_evict_time_window_seconds;	/* unset -> the period */
	int memory_evict_threshold_percent;	/* 70, (0, 100] */
	int memory_evict_lower_percent;		/* unset -> threshold - 2; < threshold */
};

/* What the Node object reserves for the system (--node): the larger of the two. */
struct node_reservation {
	double cpu;		/* cores: the kubelet's (capacity - allocatable) or the annotation's */
	double memory;		/* bytes, the same */
	cpu_set_t cpus;		/* the annotation's reservedCPUs */
};

struct koord_config {
	struct be_thresholds be;
	/*
	 * Values of resourceUsedThresholdWithBE that Koordinator accepts and
	 * koord-bpf does not support: ignored, and be.enable forced false.
	 */
	int ignored;
	char ignored_first[800];	/* "PATH: why" of the first */

	/*
	 * resourceQOSStrategy: koordlet's CPU QoS. With its CoreSched gate on,
	 * koordlet sets the besteffort dir's cpu.idle to 1 when cpuPolicy is
	 * "coreSched", beClass.cpuQOS is enabled and its schedIdle is 1, else
	 * to 0. When the NodeSLO asks that (coreSched, BE enabled), cpu.idle of
	 * BE is the NodeSLO's and koordlet's: the wake-up priority is off.
	 */
	struct {
		bool core_sched;		/* policies.cpuPolicy is "coreSched" */
		bool be_enable;			/* beClass.cpuQOS.enable: false */
		int be_sched_idle;		/* beClass.cpuQOS.schedIdle: 0 */
	} cpu_qos;

	/* koordBPF */
	enum koord_mode mode;		/* "mode": "enforce"; "advise" forces be.enable false */
	double period_s;		/* "period": 1, 0.1..3600 */
	char *listen;			/* "listen": "127.0.0.1:9326" */
	char *health_listen;		/* "healthListen": "" (off: /healthz on listen only) */
	char *state_dir;		/* "stateDir": "/var/lib/koord-bpf" */
	/* "cgroupRoots": paths relative to every hierarchy's root, "/kubepods"... */
	char *cgroup_roots[CONFIG_ROOTS_MAX];
	size_t ncgroup_roots;
	struct class_rules rules;	/* "classRules": [{"glob": G, "qos": Q}] */
	bool be_wakeup_priority;	/* "beWakeupPriority": true (when be.enable) */
	enum wakeup_by wakeup_by;	/* "beWakeupPriorityBy": "weight" (or "idle") */
	bool react_on_long_waits;	/* "reactOnLongWaits": true: a new culprit acts at once */
	/* "reactWaitUs": 1000: a wait this long behind a new container wakes the loop; 0: long waits only */
	double react_wait_us;
	/*
	 * "reservation": kept for the system, outside every budget, in the shape of
	 * node.koordinator.sh/reservation. With --node, what the Node object says
	 * (the kubelet's reservation and that annotation) counts too: the larger
	 * wins, as Koordinator takes the max.
	 */
	struct {
		double cpu;		/* "resources.cpu": 0 cores */
		double memory;		/* "resources.memory": 0 bytes */
		cpu_set_t cpus;		/* "reservedCPUs": none; BE is never given them */
		struct node_reservation node;	/* from the Node object; not in the file */
	} reservation;
	int suppress_smoothing_windows;	/* "suppressSmoothingWindows": 3, 1..60 */

	struct {			/* "interference" */
		double victim_p99_wait_us;	/* "victimP99WaitUs": 1000 */
		double victim_p999_wait_us;	/* "victimP999WaitUs": 4000 */
		double be_steal_percent;	/* "beStealPercent": 5, of the window */
		int sustained_windows;		/* "sustainedWindows": 3, 1..600 */
	} interference;

	struct {			/* "throttle" */
		bool enable;			/* true */
		double cut_factor;		/* "cutFactor": 0.5, (0, 1) */
		double floor_cores;		/* "floorCores": 0.05, > 0 */
		double recovery_step_cores;	/* "recoveryStepCores": 0.1, > 0 */
		int quiet_windows;		/* "quietWindows": 5, 1..600 */
		int max_culprits;		/* "maxCulprits": 2, 1..64 */
	} throttle;

	struct {			/* "effect": the closed loop */
		int windows;			/* "windows": 3, windows measured before and after */
		double worse_percent;		/* "worsePercent": 10, > this much worse -> rollback */
		double hold_off_s;		/* "holdOffSeconds": 300 */
		bool keep_off;			/* "keepOff": true, a side effect escalates */
	} effect;

	struct {			/* "eviction" */
		bool enable;			/* true (still needs be.enable) */
		enum evict_backend backend;	/* "backend": "kill" | "hook" | "api" */
		char *hook[CONFIG_HOOK_ARGS_MAX + 1];	/* "hook": argv, NULL-terminated */
		struct {		/* "api": the API server, for the Eviction API */
			char *url;	/* "url": https://${KUBERNETES_SERVICE_HOST}:${..._PORT} */
			char *token_file, *ca_file;	/* the service account's */
		} api;
		int max_per_minute;		/* "maxPerMinute": 2, 1..600 */
		double cool_down_s;		/* "coolDownSeconds": 20 */
		double culprit_at_floor_s;	/* "culpritAtFloorSeconds": 120 */
		/* "systemPods": false; kube-system, static and priority >= 2e9 pods too */
		bool system_pods;
	} eviction;

	struct {			/* "batch": Koordinator's ColocationStrategy */
		int cpu_reclaim_threshold_percent;	/* "cpuReclaimThresholdPercent": 60 */
		int memory_reclaim_threshold_percent;	/* "memoryReclaimThresholdPercent": 65 */
		int aggregate_seconds;		/* "metricAggregateDurationSeconds": 300 */
	} batch;

	struct {			/* "metrics": what /metrics holds per container */
		/* "histogramBuckets": "online" (LSE, LSR, LS; others +Inf only) | "all" */
		enum { METRICS_BUCKETS_ONLINE, METRICS_BUCKETS_ALL } buckets;
	} metrics;

	struct {			/* "kubelet": pod metadata from GET /pods */
		char *url;			/* "url": "" (off); ${VAR} from the environment */
		char *token_file;		/* "tokenFile": the service account's */
		char *ca_file;			/* "caFile": the service account's ca.crt */
		bool insecure;			/* "insecureSkipVerify": false */
		double interval_s;		/* "intervalSeconds": 10, [1, 3600] */
		double timeout_s;		/* "timeoutSeconds": 5, (0, 60] */
		/* "cpuManagerStateFile": its static CPU manager's checkpoint, "" (none) */
		char *cpu_manager_state;
	} kubelet;

	struct {			/* "yarn": NodeManager's containers */
		char *nm_url;			/* "nodeManagerURL": "" (off) */
		double interval_s;		/* "intervalSeconds": 10, [1, 3600] */
		double timeout_s;		/* "timeoutSeconds": 5, (0, 60] */
	} yarn;
};

/*
 * Koordinator's and koord-bpf's defaults (be.enable false: the daemon only
 * measures). Strings are allocated; @c must hold no allocations (fresh, or
 * after config_free()).
 */
void config_defaults(struct koord_config *c);

/*
 * Read @path into @c (defaults first; @c as for config_defaults(), so a
 * reload parses into a second struct). On error returns -EINVAL (or
 * -ENOMEM, or the -errno of the read) and writes "FILE: FIELD: REASON" into
 * @err (may be NULL); @c is then freed and left at defaults. Unknown NodeSLO
 * sections are skipped with a log_info note; unknown fields in koordBPF and
 * resourceUsedThresholdWithBE are errors. Accepts the NodeSLO spec itself,
 * or a whole NodeSLO object ({"kind": "NodeSLO", "spec": {...}}); koordBPF
 * may also sit in spec.extensions, where a cluster keeps it.
 */
int config_load(const char *path, struct koord_config *c, char *err, size_t errlen);
/* The same from @len bytes of @text (@name stands for the file in messages). */
int config_parse(const char *name, const char *text, size_t len, struct koord_config *c,
		 char *err, size_t errlen);
/*
 * The node's NodeSLO of @len bytes of @text (@name in messages) over the
 * file @path (NULL: the defaults): Koordinator's sections (resourceUsed-
 * ThresholdWithBE, resourceQOSStrategy) are the NodeSLO's, whole, and
 * koord-bpf's own section the file's; a koordBPF in the NodeSLO is noted and
 * ignored. Errors as config_load(), of either document.
 */
int config_parse_nodeslo(const char *name, const char *text, size_t len, const char *path,
			 struct koord_config *c, char *err, size_t errlen);
/*
 * The cores reserved: the file's reservedCPUs when given (as Koordinator),
 * else its resources.cpu; or the Node object's, when larger.
 */
double config_reserved_cores(const struct koord_config *c);
/* The bytes reserved: the file's or the Node object's, the larger. */
double config_reserved_memory(const struct koord_config *c);
/* CPUs BE is never given: the file's reservedCPUs and the Node annotation's. */
void config_reserved_cpus(const struct koord_config *c, cpu_set_t *out);
/*
 * node.koordinator.sh/reservation's value (@len bytes of @text) read as the
 * "reservation" section is: its cores (the reservedCPUs' number when given,
 * as Koordinator), bytes and CPUs into @out. 0, or -EINVAL with the reason
 * in @err, -ENOMEM.
 */
int config_parse_reservation(const char *text, size_t len, struct node_reservation *out,
			     char *err, size_t errlen);
/* Frees strings, rules and the hook argv; safe twice. */
void config_free(struct koord_config *c);

#endif
