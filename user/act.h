/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The enforcer's state, shared by its actions (act_*.c); not a public interface. */
#ifndef KOORD_ACT_H
#define KOORD_ACT_H

#include "detect.h"
#include "effect.h"
#include "enforce.h"
#include "suppress.h"
#include "throttle.h"

/* ACT_OBSERVED: another writer's change, judged in advise mode (nothing to roll back) */
enum act_kind { ACT_WAKEUP, ACT_SUPPRESS, ACT_TARGET, ACT_KEEPOFF, ACT_OBSERVED, ACT_KIND_NR };

#define ACT_RING	64	/* windows of online waits kept as the baseline of an action */
#define ACT_VERDICTS	16	/* the last verdicts kept for /api/containers */
#define BE_SAMPLES_MAX	3600

enum target_method { TGT_NONE, TGT_CPUSET, TGT_QUOTA };

/* A culprit being acted on. */
struct target {
	__u64 cgid;
	char *path;			/* relative to the hierarchies */
	char *label;			/* for the log: container_label() */
	enum target_method method;	/* the newest action on it */
	bool cpuset_on, quota_on;
	bool cpuset_failed;		/* its cpuset made victims worse: quota only */
	struct throttle_state th;
	int quiet;			/* windows without hurting, for the cpuset */
	int returns;			/* hurt again after its cpuset was released */
	double hold_until;		/* no new action before (after a rollback) */
	double remember_until;		/* kept after a release, to see it return */
	double since;
	__u64 victim;
	bool seen;			/* still in the table this period */
};

struct enforcer {
	const struct koord_config *c;
	const struct hierarchies *h;
	struct writer *w;
	struct cpu_topo topo;
	double capacity;		/* online CPUs */
	struct detector det;
	struct effect eff;
	struct waits ring[ACT_RING];	/* all online containers' waits of the last windows */
	cpu_set_t ring_cpus[ACT_RING];	/* and the CPUs where they waited behind BE */
	int ring_n, ring_next;
	double hold_until[ACT_KIND_NR];
	/*
	 * Conditions: the BE and online containers present (a hash). An
	 * action rolled back is not taken again under the conditions it was
	 * rolled back under: each try and rollback is a transition online
	 * tasks pay for.
	 */
	__u64 workload;
	unsigned long long workload_gen;	/* the table's gen it is of */
	__u64 adopted;			/* the workload whose new cpusets were looked at */
	bool rolled[ACT_KIND_NR];
	__u64 rolled_workload[ACT_KIND_NR];
	char rolled_what[192];		/* the rollback whose transition is measured next */
	struct side_effect_record {	/* the last side effect, for /api/containers */
		char what[160];		/* the action */
		struct side_effect side;
		__u64 *victims;
		size_t nvictims;
		double at;
	} side;
	struct verdict_record {		/* the last verdicts, for /api/containers */
		char what[160];		/* the action, or another writer's change */
		char evidence[384];	/* effect_describe()'s */
		enum effect_verdict v;
		const char *outcome;	/* "kept", "rolled back", "left as it is" (advise) */
		double at;
	} verdicts[ACT_VERDICTS];	/* a ring: the newest at verdicts_next - 1 */
	int verdicts_n, verdicts_next;
	struct {			/* BE kept off the victims' CPUs (the escalation) */
		bool wanted, on;
		cpu_set_t cpus;
		__u64 *victims;		/* released once all of them are gone */
		size_t nvictims;
		struct {		/* the action whose side effect it answers */
			int kind;	/* -1: none */
			__u64 target;
			char what[160];
			struct waits before;	/* the victims' waits before that action */
			struct waits_series before_win;
		} cause;
	} keepoff;
	double now, dt;
	bool warm;			/* the first window (the daemon's own start) is past */
	char **roots;			/* BE roots: besteffort QoS levels and YARN trees */
	size_t nroots;
	char **outside;			/* BE roots not written (outside cgroupRoots), logged once */
	size_t noutside;
	struct smoother sm_node, sm_pods, sm_non_be;
	double be_used;			/* cores, last window */
	struct {			/* CPUs no BE cpuset may hold (exclusive.h) */
		cpu_set_t kubelet;	/* the static CPU manager's containers' own */
		cpu_set_t lse;		/* LSE containers' bindings */
		bool said_bad;		/* an unreadable CPU manager state, warned */
	} excl;
	bool suppressing;
	bool wakeup_on;			/* the wake-up priority was taken and not rolled back */
	struct target *tg;
	size_t ntg;
	struct evict_rate rate;
	bool pods_fresh;		/* the kubelet's list is recent: pods may be evicted */
	struct {			/* an eviction hook or API call running while periods go on */
		pid_t pid;		/* the hook, 0: none */
		struct evict_api_call *api;	/* the Eviction API call, NULL: none */
		double deadline;	/* CLOCK_MONOTONIC s: killed after */
		enum evict_reason reason;
		char *path;
	} hook;
	unsigned int refusals_said;	/* reasons (bits) of the last "no pod may be evicted" line */
	struct be_cpu_sample be[BE_SAMPLES_MAX];
	size_t nbe;
	struct observed *obs;		/* advise mode: BE settings last read, by path */
	size_t nobs;
	struct enforce_stats st;
};

/* A BE cgroup file as last read in advise mode. */
struct observed {
	char *path;
	char *value;			/* as read (a cpuset list can be long) */
	bool seen;			/* read this period */
};

/* Load the eviction limiter a past run saved in the state dir (none in a dry run). */
void act_rate_load(struct enforcer *e);
/* Kill a running eviction hook (the enforcer stops). */
void act_hook_stop(struct enforcer *e);
/* MOUNT + REL + "/" + FILE into @buf; -ENAMETOOLONG when it does not fit, -ENOENT without a mount. */
int act_path(char *buf, size_t len, const char *mount, const char *rel, const char *file);
/* May a new action of @kind start now (nothing being measured, not held off)? */
bool act_can_start(const struct enforcer *e, enum act_kind kind);
/* Start measuring an action just taken (victims: the detector's, or all online). */
void act_begin(struct enforcer *e, enum act_kind kind, __u64 target, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * Put @path's journaled original back where the file still holds what was
 * written (writer_restore): 0 when done or nothing was journaled,
 * JOURNAL_LEFT when another writer set it since (left, and forgotten).
 */
int act_restore(struct enforcer *e, const char *path);
/* @rel's CFS quota in µs per CFS_PERIOD_US (-1: none), from cpu.cfs_quota_us/period or cpu.max. */
int act_quota_read(struct enforcer *e, const char *rel, long *quota_us);
/* Set it (-1: none); the file's own period is kept. 0, 1 when unchanged, or -errno. */
int act_quota_write(struct enforcer *e, const char *rel, long quota_us);
/* @rel's quota before this daemon first wrote it, as act_quota_read(); -ENOENT when it did not. */
int act_quota_original(struct enforcer *e, const char *rel, long *quota_us);
/* The quota file of @rel: the one a rollback or release restores. */
int act_quota_path(const struct enforcer *e, const char *rel, char *path, size_t len);
/* Is @path @root or below it (paths relative to the hierarchies)? */
bool act_under(const char *path, const char *root);
/* May the writer write below @rel (its cpu hierarchy directory is under a root)? */
bool act_allowed(const struct enforcer *e, const char *rel);
/* A container's CPU use in the window, in cores. */
double act_used_cores(const struct window *w, __u64 cgid);
/*
 * Write the cpuset @set to the BE root @root and the cgroups below it (but
 * culprits the targeted action keeps): parents first when it grows,
 * children first when it shrinks. Returns the root's write.
 */
int act_be_cpuset_write(struct enforcer *e, const struct container_table *t, const char *root,
			const char *set, bool grow);
/*
 * Put back the journaled cpusets of @root and everything below it, parents
 * first; but the culprits the targeted action keeps when @keep_targets.
 */
void act_be_cpuset_restore(struct enforcer *e, const struct container_table *t, const char *root,
			   bool keep_targets);
/*
 * v1 cpusets below the BE roots made while a parent held CPUs this daemon
 * wrote (the runtime copies them into a new cgroup), journaled as its writes
 * (writer_adopt), so that a widening and the stop give them back. Returns
 * how many are made but not filled yet: to be looked at again.
 */
size_t act_be_cpuset_adopt(struct enforcer *e, const struct container_table *t);
/* @rel's cpuset.cpus (in the cpuset or unified hierarchy) into @path. */
int act_cpuset_file(const struct enforcer *e, const char *rel, char *path, size_t len);

void act_wakeup(struct enforcer *e, const struct container_table *t);
void act_wakeup_rollback(struct enforcer *e);
void act_suppress(struct enforcer *e, const struct window *w, const struct container_table *t);
void act_suppress_rollback(struct enforcer *e, const struct container_table *t);
void act_target(struct enforcer *e, const struct window *w, const struct container_table *t,
		const struct suspects *sus);
void act_target_rollback(struct enforcer *e, __u64 cgid);
void act_target_free(struct enforcer *e);
void act_evict(struct enforcer *e, const struct window *w, const struct container_table *t);
void act_keepoff(struct enforcer *e, const struct container_table *t);
/*
 * Was BE kept off the victims' CPUs and rolled back under the containers of
 * now (it moved the harm, or made it worse)? A culprit is then not kept off
 * them either: the same move.
 */
bool act_keepoff_failed(const struct enforcer *e);
void act_keepoff_rollback(struct enforcer *e, const struct container_table *t);
/* Advise mode: read the BE settings, judge what another writer changed. */
void act_observe(struct enforcer *e, const struct container_table *t);
void act_observe_free(struct enforcer *e);

#endif
