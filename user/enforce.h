/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The acting side of the daemon: each period, from the window just measured,
 * detect interference and act in escalating order (BE wake-up priority, BE
 * CPU suppression, targeted action on culprits, eviction), measuring what
 * every action did to the victims and rolling back what made them worse.
 * All writes go through the writer (journaled, undone on stop).
 */
#ifndef KOORD_ENFORCE_H
#define KOORD_ENFORCE_H

#include <stdio.h>
#include <json-c/json.h>
#include "cgroup.h"
#include "config.h"
#include "effect.h"
#include "evict_policy.h"
#include "hierarchies.h"
#include "suspects.h"
#include "window.h"
#include "writer.h"

struct enforce_stats {
	double be_allowed_cores;	/* last suppression target, < 0: none */
	long be_quota_us;		/* BE root quota written, -1: none */
	int be_cpuset_cpus;		/* BE cpuset size written, 0: none */
	bool wakeup_priority;		/* BE roots are SCHED_IDLE (or lowest weight) groups */
	unsigned long long victims;	/* online containers found victims in the last window */
	unsigned long long victim_windows_total;
	unsigned long long throttled;	/* culprits limited now */
	unsigned long long throttle_cuts_total, throttle_recoveries_total, throttle_releases_total;
	unsigned long long actions_total, rollbacks_total;
	/* actions after which the victims waited more behind a class other than BE, by class */
	unsigned long long side_effects_total[KC_NR];
	/* writes (actions, rollbacks) whose first window held an online wait >= 10 ms */
	unsigned long long transition_stalls_total;
	int keepoff_cpus;		/* CPUs BE is kept off (the escalation), 0: none */
	int exclusive_cpus;		/* CPUs kept from BE cpusets: LSE's, the CPU manager's */
	unsigned long long evictions_total[EVICT_REASON_NR];
	unsigned long long eviction_failures_total;
	/* BE pods kept out of the last eviction's candidates, by enum evict_refusal */
	unsigned int evict_refused[EVICT_REFUSAL_NR];
	/* advise mode: other writers' changes to BE cgroups, judged, by enum effect_verdict */
	unsigned long long observed_total[EFFECT_VERDICT_NR];
};

struct enforcer;

/* @c, @h and @w must outlive the enforcer (a reload passes a new @c). */
int enforcer_new(const struct koord_config *c, const struct hierarchies *h, struct writer *w,
		 struct enforcer **out);
void enforcer_set_config(struct enforcer *e, const struct koord_config *c);
/* Whether the kubelet's pod list is fresh enough to evict pods by (they are not, otherwise). */
void enforcer_set_pods_fresh(struct enforcer *e, bool fresh);
/*
 * One period: @w is the window just measured (@dur_ns > 0), @t the
 * classified containers, @sus the window's suspects (NULL: none ranked).
 */
void enforcer_period(struct enforcer *e, const struct window *w, const struct container_table *t,
		     const struct suspects *sus, double now_s);
/*
 * Between periods, right after a walk found new containers: the BE roots
 * get their wake-up priority now (the rest waits for the period).
 */
void enforcer_react(struct enforcer *e, const struct container_table *t, double now_s);
const struct enforce_stats *enforcer_stats(const struct enforcer *e);
/* The enforcement state of one container for /api/containers, or NULL when none. */
json_object *enforcer_container_json(const struct enforcer *e, __u64 cgid);
/* The last ACT_VERDICTS verdicts on actions and observed changes, newest first. */
json_object *enforcer_verdicts_json(const struct enforcer *e);
/* Prometheus lines for the actions (docs/metrics.md). */
int enforcer_metrics(const struct enforcer *e, FILE *f);
void enforcer_free(struct enforcer *e);

#endif
