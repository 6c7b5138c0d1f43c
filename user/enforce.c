// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The enforcer's period: measure, judge the action being measured, then act
 * in escalating order. One action is measured at a time, so that each
 * verdict is about one change; a new action waits until the last one is
 * judged (adjustments of an action already in place do not wait).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "act.h"
#include "cgfile.h"
#include "classify.h"
#include "log.h"

int act_path(char *buf, size_t len, const char *mount, const char *rel, const char *file)
{
	int n;

	if (!mount || !*mount)
		return -ENOENT;
	if (!strcmp(rel, "/"))
		rel = "";
	n = snprintf(buf, len, "%s%s%s%s", mount, rel, file ? "/" : "", file ? file : "");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * One action at a time, none held off, none rolled back under the conditions
 * of now, and a baseline of effect.windows windows to judge it on. The BE
 * wake-up priority too, though it is the node's standing posture: taken in
 * the first period, it was judged on one window, too few waits to tell its
 * effect from noise (under load it was kept as "better", 12845 -> 5267 us,
 * when the tail before it was 3.7 ms and after it 5 ms).
 */
bool act_can_start(const struct enforcer *e, enum act_kind kind)
{
	return !e->eff.pending && e->now >= e->hold_until[kind] &&
	       !(e->rolled[kind] && e->rolled_workload[kind] == e->workload) &&
	       e->ring_n >= e->c->effect.windows;
}

/*
 * The baseline: the victims' waits over their streaks, or all online over
 * the last windows but the newest @skip (another writer's change fell
 * somewhere in the window just measured: it is neither before nor after).
 */
static void baseline(const struct enforcer *e, int skip, __u64 *victims, size_t *nvictims,
		     struct waits *before)
{
	int i, k = e->c->effect.windows;
	size_t j;

	memset(before, 0, sizeof(*before));
	*nvictims = 0;
	for (j = 0; j < e->det.n && *nvictims < EFFECT_VICTIMS; j++) {
		if (!detect_is_victim(&e->det.v[j], e->c) || !e->det.v[j].acc)
			continue;
		victims[(*nvictims)++] = e->det.v[j].cgid;
		waits_merge(before, e->det.v[j].acc);
	}
	if (*nvictims)
		return;
	for (i = skip; i < k + skip && i < e->ring_n; i++)
		waits_merge(before, &e->ring[(e->ring_next - 1 - i + ACT_RING) % ACT_RING]);
}

/* The baseline's windows in the ring: effect.windows, or fewer when fewer were seen. */
static int windows_back(const struct enforcer *e)
{
	int k = e->c->effect.windows < e->ring_n ? e->c->effect.windows : e->ring_n;

	return k < EFFECT_SERIES ? k : EFFECT_SERIES;
}

void act_begin(struct enforcer *e, enum act_kind kind, __u64 target, const char *fmt, ...)
{
	__u64 victims[EFFECT_VICTIMS];
	struct waits *before = malloc(sizeof(*before));
	char what[160];
	size_t nv;
	va_list ap;
	int i, skip = kind == ACT_OBSERVED;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!skip)
		e->st.actions_total++;
	if (!before)
		return;		/* acts unmeasured rather than not at all */
	baseline(e, skip, victims, &nv, before);
	effect_begin(&e->eff, what, kind, target, victims, nv, before, e->c->effect.windows);
	free(before);
	/*
	 * How bursty the tail was before: the last windows of all online
	 * containers (the victims' own are kept merged only).
	 */
	for (i = windows_back(e) + skip; i > skip; i--)
		waits_series_add(&e->eff.before_win,
				 &e->ring[(e->ring_next - i + ACT_RING) % ACT_RING]);
	log_info("%s: %s; measuring its effect over %d windows", skip ? "observed" : "action", what,
		 e->c->effect.windows);
}

int act_restore(struct enforcer *e, const char *path)
{
	const struct journal_entry *je = e->w->journal ? journal_find(e->w->journal, path) : NULL;
	int r;

	if (!je)
		return 0;
	r = writer_restore(e->w, je);
	if (r < 0)
		return r;
	/*
	 * Back to its original, or another writer's now: nothing to restore at
	 * stop, and the journal does not grow.
	 */
	journal_forget(e->w->journal, path);
	return r;
}

int act_quota_path(const struct enforcer *e, const char *rel, char *path, size_t len)
{
	return act_path(path, len, e->h->cpu, rel,
			e->h->cpu_version == 2 ? "cpu.max" : "cpu.cfs_quota_us");
}

/* v1: cpu.cfs_period_us of @rel in µs (the kernel's default when unreadable). */
static long v1_period(struct enforcer *e, const char *rel)
{
	char path[PATH_MAX], buf[64];
	long p = -EINVAL;

	if (!act_path(path, sizeof(path), e->h->cpu, rel, "cpu.cfs_period_us") &&
	    !writer_read(e->w, path, buf, sizeof(buf)))
		p = quota_period_parse(buf);
	return p > 0 ? p : CFS_PERIOD_US;
}

/* @rel's quota file (its path into @path) parsed: quota (-1: none) and period in µs. */
static int quota_get(struct enforcer *e, const char *rel, char *path, size_t len, long *quota,
		     long *period)
{
	bool v2 = e->h->cpu_version == 2;
	char buf[64];
	int err;

	err = act_quota_path(e, rel, path, len);
	if (!err)
		err = writer_read(e->w, path, buf, sizeof(buf));
	if (!err)
		err = quota_parse(buf, v2, quota, period);
	if (!err && !v2)
		*period = v1_period(e, rel);
	return err;
}

int act_quota_read(struct enforcer *e, const char *rel, long *quota_us)
{
	char path[PATH_MAX];
	long q, period;
	int err;

	err = quota_get(e, rel, path, sizeof(path), &q, &period);
	if (err)
		return err;
	*quota_us = q < 0 ? -1 : q * CFS_PERIOD_US / period;
	return 0;
}

int act_quota_original(struct enforcer *e, const char *rel, long *quota_us)
{
	char path[PATH_MAX];
	const char *orig;
	long q, period;
	int err;

	err = act_quota_path(e, rel, path, sizeof(path));
	if (err)
		return err;
	orig = e->w->journal ? journal_original(e->w->journal, path) : NULL;
	if (!orig)
		return -ENOENT;
	err = quota_parse(orig, e->h->cpu_version == 2, &q, &period);
	if (err)
		return err;
	if (e->h->cpu_version != 2)
		period = v1_period(e, rel);
	*quota_us = q < 0 ? -1 : q * CFS_PERIOD_US / period;
	return 0;
}

int act_quota_write(struct enforcer *e, const char *rel, long quota_us)
{
	char path[PATH_MAX], val[64];
	bool v2 = e->h->cpu_version == 2;
	long cur, period;
	int err;

	err = quota_get(e, rel, path, sizeof(path), &cur, &period);
	if (err)
		return err;
	if (quota_us >= 0)
		quota_us = quota_us * period / CFS_PERIOD_US;
	if (v2 && quota_us < 0)
		snprintf(val, sizeof(val), "max %ld", period);
	else if (v2)
		snprintf(val, sizeof(val), "%ld %ld", quota_us, period);
	else
		snprintf(val, sizeof(val), "%ld", quota_us < 0 ? -1 : quota_us);
	return writer_set(e->w, path, val);
}

/* Files in @rel may be written: it is a configured root itself (the YARN tree's parent) or below one. */
bool act_allowed(const struct enforcer *e, const char *rel)
{
	char path[PATH_MAX];

	return !act_path(path, sizeof(path), e->h->cpu, rel, "cgroup.procs") &&
	       writer_allowed(e->w, path);
}

double act_used_cores(const struct window *w, __u64 cgid)
{
	const struct cg_window *cw = window_find(w, cgid);

	return cw && w->dur_ns ? (double)cw->cpu_ns / w->dur_ns : 0;
}

int enforcer_new(const struct koord_config *c, const struct hierarchies *h, struct writer *w,
		 struct enforcer **out)
{
	struct enforcer *e = calloc(1, sizeof(*e));
	long n;
	int err;

	if (!e)
		return -ENOMEM;
	e->c = c;
	e->h = h;
	e->w = w;
	err = cpu_topo_read(&e->topo, "/sys/devices/system/cpu");
	if (err) {
		log_warn("cannot read the CPU topology: %s; cpusets are chosen without it",
			 strerror(-err));
		memset(&e->topo, 0, sizeof(e->topo));
		n = sysconf(_SC_NPROCESSORS_ONLN);
		for (e->topo.ncpus = 0; e->topo.ncpus < n && e->topo.ncpus < CPU_SETSIZE; e->topo.ncpus++) {
			CPU_SET(e->topo.ncpus, &e->topo.online);
			e->topo.core[e->topo.ncpus] = e->topo.ncpus;
		}
	}
	e->capacity = CPU_COUNT(&e->topo.online);
	e->st.be_allowed_cores = -1;
	e->st.be_quota_us = -1;
	e->keepoff.cause.kind = -1;
	enforcer_set_config(e, c);
	act_rate_load(e);
	*out = e;
	return 0;
}

void enforcer_set_config(struct enforcer *e, const struct koord_config *c)
{
	e->c = c;
	smoother_init(&e->sm_node, c->suppress_smoothing_windows);
	smoother_init(&e->sm_pods, c->suppress_smoothing_windows);
	smoother_init(&e->sm_non_be, c->suppress_smoothing_windows);
}

void enforcer_set_pods_fresh(struct enforcer *e, bool fresh)
{
	e->pods_fresh = fresh;
}

bool act_under(const char *path, const char *root)
{
	size_t n = strlen(root);

	return !strncmp(path, root, n) && (path[n] == '/' || !path[n]);
}

static void paths_free(char ***v, size_t *n)
{
	size_t i;

	for (i = 0; i < *n; i++)
		free((*v)[i]);
	free(*v);
	*v = NULL;
	*n = 0;
}

/* Add @rel (@len bytes) to the list @v of @n unless there; false when it was. */
static bool paths_add(char ***v, size_t *n, const char *rel, size_t len)
{
	char **nv;
	size_t i;

	for (i = 0; i < *n; i++)
		if (strlen((*v)[i]) == len && !strncmp((*v)[i], rel, len))
			return false;
	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv)
		return true;	/* no memory: at worst logged again */
	*v = nv;
	if ((nv[*n] = strndup(rel, len)))
		(*n)++;
	return true;
}

static void roots_add(struct enforcer *e, const char *rel, size_t len)
{
	paths_add(&e->roots, &e->nroots, rel, len);
}

/*
 * The BE roots: the besteffort QoS levels, and the parents of YARN
 * containers that are not inside one, where the writer may write.
 */
static void find_roots(struct enforcer *e, const struct container_table *t)
{
	size_t i, j;
	bool inside;

	paths_free(&e->roots, &e->nroots);
	for (i = 0; i < t->n; i++) {
		const struct container *ct = &t->v[i];

		if (ct->ident.kind == CG_QOS_ROOT && ct->ident.qos == KC_BE)
			roots_add(e, ct->path, strlen(ct->path));
	}
	for (i = 0; i < t->n; i++) {
		const struct container *ct = &t->v[i];
		const char *yarn = strstr(ct->path, "/container_");

		if (ct->ident.kind != CG_YARN || !yarn || yarn == ct->path)
			continue;
		for (inside = false, j = 0; j < e->nroots && !inside; j++)
			inside = act_under(ct->path, e->roots[j]);
		if (!inside)	/* the YARN tree: the parent of its first container */
			roots_add(e, ct->path, yarn - ct->path);
	}
	/* only where the writer may write */
	for (i = 0; i < e->nroots;) {
		if (act_allowed(e, e->roots[i])) {
			i++;
			continue;
		}
		if (paths_add(&e->outside, &e->noutside, e->roots[i], strlen(e->roots[i])))
			log_warn("not acting on BE root %s: it is outside cgroupRoots", e->roots[i]);
		free(e->roots[i]);
		e->roots[i] = e->roots[--e->nroots];
	}
}

static void ring_push(struct enforcer *e, const struct window *w, const struct container_table *t)
{
	cpu_set_t *cpus = &e->ring_cpus[e->ring_next];
	const struct container *c;
	size_t i;

	effect_waits_of(NULL, w, t, &e->ring[e->ring_next]);
	CPU_ZERO(cpus);
	for (i = 0; i < w->npc; i++) {
		if (!w->pc[i].steal_be_ns || w->pc[i].cpu >= CPU_SETSIZE)
			continue;
		c = container_table_get(t, w->pc[i].cgid);
		if (c && KC_IS_ONLINE(c->ident.qos))
			CPU_SET(w->pc[i].cpu, cpus);
	}
	e->ring_next = (e->ring_next + 1) % ACT_RING;
	if (e->ring_n < ACT_RING)
		e->ring_n++;
}

/* The BE and online containers present, as one number (the same set, the same number). */
static __u64 workload_of(const struct container_table *t)
{
	__u64 h = 0, x;
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->v[i].ident.qos != KC_BE && !KC_IS_ONLINE(t->v[i].ident.qos))
			continue;
		x = t->v[i].id * 0x9e3779b97f4a7c15ull;	/* mixed, then summed: order-free */
		x ^= x >> 31;
		h += x * 0xbf58476d1ce4e5b9ull;
	}
	return h;
}

static __u64 *cgids_copy(const __u64 *v, size_t n)
{
	__u64 *c = n ? malloc(n * sizeof(*c)) : NULL;

	if (c)
		memcpy(c, v, n * sizeof(*c));
	return c;
}

/*
 * The action's victims, or the online containers of @t when it was measured
 * on all of them; sorted, for bsearch (/api/containers asks for each row).
 */
static __u64 *victims_of(const struct effect *eff, const struct container_table *t, size_t *n)
{
	__u64 *v;
	size_t i;

	*n = 0;
	if (eff->nvictims) {
		v = cgids_copy(eff->victims, eff->nvictims);
		*n = v ? eff->nvictims : 0;
	} else {
		v = malloc((t->n + 1) * sizeof(*v));
		for (i = 0; v && i < t->n; i++)
			if (KC_IS_ONLINE(t->v[i].ident.qos))
				v[(*n)++] = t->v[i].id;
	}
	if (*n)
		qsort(v, *n, sizeof(*v), cgid_cmp);
	return v;
}

/* Is the victims' tail after the action still over a victim threshold? */
static bool still_over(const struct enforcer *e)
{
	return waits_quantile(&e->eff.after, 0.999) >= e->c->interference.victim_p999_wait_us * 1e3 ||
	       waits_quantile(&e->eff.after, 0.99) >= e->c->interference.victim_p99_wait_us * 1e3;
}

/* The CPUs where online containers waited behind BE in the windows kept. */
static void be_victim_cpus(const struct enforcer *e, cpu_set_t *cpus)
{
	int i;

	CPU_ZERO(cpus);
	for (i = 0; i < e->ring_n; i++)
		CPU_OR(cpus, cpus, &e->ring_cpus[i]);
}

/* May BE be kept off the victims' CPUs after the action just judged? */
static bool can_escalate(const struct enforcer *e)
{
	cpu_set_t cpus;

	if (!e->c->effect.keep_off || e->eff.kind == ACT_KEEPOFF || e->eff.kind == ACT_OBSERVED ||
	    e->keepoff.on || e->now < e->hold_until[ACT_KEEPOFF] || act_keepoff_failed(e))
		return false;
	be_victim_cpus(e, &cpus);
	return CPU_COUNT(&cpus) > 0;
}

/*
 * The victims wait more behind another class since the action: reported
 * (log, /metrics, /api/containers), and, with @escalate, BE is to be kept
 * off the CPUs where online containers waited behind it, so that its CPUs,
 * not theirs, are the ones that look idle. The action is remembered as the
 * keep-off's cause: the two are judged together against the tail before it.
 */
static void side_effect(struct enforcer *e, const struct container_table *t, const char *then,
			bool escalate)
{
	const struct side_effect *s = &e->eff.side;

	e->st.side_effects_total[s->cls]++;
	free(e->side.victims);
	snprintf(e->side.what, sizeof(e->side.what), "%s", e->eff.what);
	e->side.side = *s;
	e->side.victims = victims_of(&e->eff, t, &e->side.nvictims);
	e->side.at = e->now;
	log_warn("side effect of %s: victims' steal behind %s %.1f -> %.1f ms/s (behind BE %.1f -> "
		 "%.1f ms/s)%s", e->eff.what, qos_name(s->cls), s->before_ms_s, s->after_ms_s,
		 s->be_before_ms_s, s->be_after_ms_s, then);
	if (!escalate)
		return;
	be_victim_cpus(e, &e->keepoff.cpus);
	free(e->keepoff.victims);
	e->keepoff.victims = victims_of(&e->eff, t, &e->keepoff.nvictims);
	e->keepoff.wanted = true;
	e->keepoff.cause.kind = e->eff.kind;
	e->keepoff.cause.target = e->eff.target;
	snprintf(e->keepoff.cause.what, sizeof(e->keepoff.cause.what), "%s", e->eff.what);
	e->keepoff.cause.before = e->eff.before;
	e->keepoff.cause.before_win = e->eff.before_win;
}

/* A write's transition: an online wait of EFFECT_STALL_NS or more right after it. */
static void transition(struct enforcer *e, const char *what, __u64 max_ns, __u64 stalls)
{
	if (!stalls)
		return;
	e->st.transition_stalls_total++;
	log_warn("transition of %s: %llu online wait(s) >= %.0f ms in the first window after it "
		 "(max %.0f us)", what, (unsigned long long)stalls, EFFECT_STALL_NS / 1e6,
		 max_ns / 1e3);
}

/* Keeps a verdict on @what and what came of it for /api/containers. */
static void record_verdict(struct enforcer *e, const char *what, enum effect_verdict v,
			   const char *evidence, const char *outcome)
{
	struct verdict_record *r = &e->verdicts[e->verdicts_next];

	snprintf(r->what, sizeof(r->what), "%s", what);
	snprintf(r->evidence, sizeof(r->evidence), "%s", evidence);
	r->v = v;
	r->outcome = outcome;
	r->at = e->now;
	e->verdicts_next = (e->verdicts_next + 1) % ACT_VERDICTS;
	if (e->verdicts_n < ACT_VERDICTS)
		e->verdicts_n++;
}

/*
 * Roll back an action of @kind (on culprit @target): not taken again before
 * effect.holdOffSeconds, nor under the same containers (a culprit has its
 * own hold-off). Its transition is measured in the next window.
 */
static void roll_back(struct enforcer *e, const struct container_table *t, int kind,
		      __u64 target, const char *what)
{
	e->st.rollbacks_total++;
	snprintf(e->rolled_what, sizeof(e->rolled_what), "the rollback of %s", what);
	if (kind != ACT_TARGET) {
		e->rolled[kind] = true;
		e->rolled_workload[kind] = e->workload;
		e->hold_until[kind] = e->now + e->c->effect.hold_off_s;
	}
	switch (kind) {
	case ACT_WAKEUP:
		if (e->wakeup_on)
			act_wakeup_rollback(e);
		break;
	case ACT_SUPPRESS:
		if (e->suppressing)
			act_suppress_rollback(e, t);
		break;
	case ACT_TARGET:
		act_target_rollback(e, target);
		break;
	case ACT_KEEPOFF:
		if (e->keepoff.on)
			act_keepoff_rollback(e, t);
		break;
	}
}

/*
 * After a rollback whose victims' steal had moved to other work: BE yielding
 * their CPUs draws that work there, and a culprit's cpuset or quota yields
 * them the same way (seen under load: a 0.39-core quota next, p99.9 5112 ->
 * 11272 us). No new culprit action under these containers either.
 */
static void hold_culprits(struct enforcer *e)
{
	e->rolled[ACT_TARGET] = true;
	e->rolled_workload[ACT_TARGET] = e->workload;
	e->hold_until[ACT_TARGET] = e->now + e->c->effect.hold_off_s;
	log_info("no culprit is acted on before %.0f s, and only once the containers changed: "
		 "freeing the victims' CPUs drew other work there", e->c->effect.hold_off_s);
}

/*
 * The keep-off is judged with the action whose side effect it answered,
 * against the victims' tail before that action: unless the two together made
 * it better, the harm was moved, not removed (seen here: BE off the
 * probe's CPU, which then looked idle, and an unpinned system burner placed
 * there held the probe up to 8 ms where BE had held it 3.6 ms). Both are
 * rolled back, the cause first: its change (cpu.idle, the weight) then happens while BE
 * is still off the victims' CPUs.
 */
static void judge_keepoff(struct enforcer *e, const struct container_table *t,
			  enum effect_verdict v, const char *msg)
{
	int cause = e->keepoff.cause.kind;
	struct effect *chain = cause >= 0 ? malloc(sizeof(*chain)) : NULL;
	enum effect_verdict cv = EFFECT_INCONCLUSIVE;
	char cmsg[384] = "";

	e->keepoff.cause.kind = -1;	/* judged now, once */
	if (chain) {
		*chain = e->eff;
		chain->before = e->keepoff.cause.before;
		chain->before_win = e->keepoff.cause.before_win;
		cv = effect_judge(&chain->before, &chain->after, &chain->before_win,
				  &chain->after_win, e->c->effect.worse_percent, &chain->ev);
		effect_describe(chain, cmsg, sizeof(cmsg));
		free(chain);
	}
	if (cmsg[0] && cv != EFFECT_BETTER) {
		record_verdict(e, e->eff.what, v, msg, "rolled back");
		record_verdict(e, e->keepoff.cause.what, cv, cmsg, "rolled back");
		log_warn("effect: %s: %s, %s; with %s before it: %s, %s: not better, the harm "
			 "moved: both rolled back (not again before %.0f s, and only once the "
			 "containers changed)", e->eff.what, msg, effect_verdict_name(v),
			 e->keepoff.cause.what, cmsg, effect_verdict_name(cv),
			 e->c->effect.hold_off_s);
		roll_back(e, t, cause, e->keepoff.cause.target, e->keepoff.cause.what);
		roll_back(e, t, ACT_KEEPOFF, 0, "the keep-off and the action before it");
		hold_culprits(e);
		return;
	}
	record_verdict(e, e->eff.what, v, msg, v == EFFECT_WORSE ? "rolled back" : "kept");
	if (v != EFFECT_WORSE) {
		if (cmsg[0])
			log_info("effect: %s: %s, %s; with %s before it: %s, %s: kept", e->eff.what,
				 msg, effect_verdict_name(v), e->keepoff.cause.what, cmsg,
				 effect_verdict_name(cv));
		else
			log_info("effect: %s: %s, %s, kept", e->eff.what, msg,
				 effect_verdict_name(v));
		return;
	}
	log_warn("effect: %s: %s, worse, rolled back (not again before %.0f s, and only once "
		 "the containers changed)", e->eff.what, msg, e->c->effect.hold_off_s);
	roll_back(e, t, ACT_KEEPOFF, 0, e->eff.what);
	if (e->eff.side.cls >= 0)
		hold_culprits(e);
}

/* Judge the action being measured: keep, escalate or roll it back (effect_outcome). */
static void judge(struct enforcer *e, const struct window *w, const struct container_table *t)
{
	enum effect_verdict v;
	enum effect_outcome out;
	bool side;
	char msg[384];

	if (!e->eff.pending)
		return;
	v = effect_feed(&e->eff, w, t, e->c->effect.worse_percent);
	if (e->eff.windows == 1)
		transition(e, e->eff.what, e->eff.first_max_ns,
			   waits_stalls(&e->eff.before) ? 0 : e->eff.first_stalls);
	if (v == EFFECT_PENDING)
		return;
	effect_describe(&e->eff, msg, sizeof(msg));
	side = e->eff.side.cls >= 0;	/* reported; acted on with effect.keepOff */
	if (e->eff.kind == ACT_OBSERVED) {	/* advise: judged, nothing to undo */
		record_verdict(e, e->eff.what, v, msg, "left as it is");
		e->st.observed_total[v]++;
		log_msg(v == EFFECT_WORSE ? LOG_LVL_WARN : LOG_LVL_INFO,
			"effect: %s: %s, %s (advise mode: left as it is)", e->eff.what, msg,
			effect_verdict_name(v));
		if (side)
			side_effect(e, t, "; advise mode: nothing done", false);
		return;
	}
	if (e->eff.kind == ACT_KEEPOFF) {
		if (side)
			side_effect(e, t, "", false);
		judge_keepoff(e, t, v, msg);
		return;
	}
	out = effect_outcome(v, side && e->c->effect.keep_off, still_over(e), can_escalate(e));
	record_verdict(e, e->eff.what, v, msg, out == OUTCOME_ROLLBACK ? "rolled back" : "kept");
	if (side)
		side_effect(e, t, out == OUTCOME_ESCALATE ? "; escalating: BE off the victims' CPUs" :
			    out == OUTCOME_ROLLBACK ? "; the action is rolled back" :
			    !still_over(e) ? "; their tail is within the victim thresholds" :
			    !e->c->effect.keep_off ? "; not escalating (effect.keepOff false)" :
			    "; not escalating (BE is kept off already, or the keep-off is held off)",
			    out == OUTCOME_ESCALATE);
	if (out != OUTCOME_ROLLBACK) {
		log_info("effect: %s: %s, %s, kept", e->eff.what, msg, effect_verdict_name(v));
		return;
	}
	log_warn("effect: %s: %s, %s, rolled back%s (not again before %.0f s, and only once the "
		 "containers changed)", e->eff.what, msg, effect_verdict_name(v),
		 v == EFFECT_WORSE ? "" : ": the harm moved to other work, not removed",
		 e->c->effect.hold_off_s);
	roll_back(e, t, e->eff.kind, e->eff.target, e->eff.what);
	if (side && e->c->effect.keep_off)
		hold_culprits(e);
}

/* The window after a rollback: its transition. */
static void rollback_transition(struct enforcer *e)
{
	const struct waits *last = &e->ring[(e->ring_next - 1 + ACT_RING) % ACT_RING];

	if (!e->rolled_what[0])
		return;
	transition(e, e->rolled_what, last->max_ns, waits_stalls(last));
	e->rolled_what[0] = '\0';
}

void enforcer_period(struct enforcer *e, const struct window *w, const struct container_table *t,
		     const struct suspects *sus, double now_s)
{
	e->dt = w->dur_ns / 1e9;
	e->now = now_s;
	if (!w->dur_ns)
		return;
	if (!e->warm) {
		/*
		 * The first window holds the daemon's own start (its first walk of
		 * the hierarchies, its threads taking CPUs other work then moves
		 * off): seen here under load, a probe held 12-13 ms by a background
		 * burner in it, 4 ms at most without the daemon. No baseline.
		 */
		e->warm = true;
		return;
	}
	if (detect_update(&e->det, w, t, e->c))
		log_warn("detection skipped this period: out of memory");
	e->st.victims = e->det.victims;
	e->st.victim_windows_total += e->det.victims;
	if (e->workload_gen != t->gen) {
		e->workload = workload_of(t);
		e->workload_gen = t->gen;
	}
	ring_push(e, w, t);
	rollback_transition(e);
	judge(e, w, t);
	if (e->c->mode == MODE_ADVISE) {
		find_roots(e, t);
		act_observe(e, t);
	}
	if (!e->c->be.enable)
		return;
	find_roots(e, t);
	/* before anything widens: a cpuset made narrowed is widened with its parent */
	if (e->adopted != e->workload && !act_be_cpuset_adopt(e, t))
		e->adopted = e->workload;
	if (e->c->be_wakeup_priority)
		act_wakeup(e, t);
	act_suppress(e, w, t);
	act_keepoff(e, t);
	if (e->c->throttle.enable)
		act_target(e, w, t, sus);
	act_evict(e, w, t);	/* a hook started before a reload turned it off still ends */
}

void enforcer_react(struct enforcer *e, const struct container_table *t, double now_s)
{
	e->now = now_s;
	if (!e->c->be.enable || !e->c->be_wakeup_priority)
		return;
	find_roots(e, t);
	act_wakeup(e, t);
}

const struct enforce_stats *enforcer_stats(const struct enforcer *e)
{
	return &e->st;
}

static const char *method_name(enum target_method m)
{
	return m == TGT_CPUSET ? "cpuset" : m == TGT_QUOTA ? "quota" : "none";
}

/* The last side effect, when @cgid was one of its victims. */
static json_object *side_effect_json(const struct enforcer *e, __u64 cgid)
{
	const struct side_effect_record *r = &e->side;
	json_object *o;

	if (!r->nvictims || !bsearch(&cgid, r->victims, r->nvictims, sizeof(cgid), cgid_cmp))
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "action", json_object_new_string(r->what));
	json_object_object_add(o, "class", json_object_new_string(qos_name(r->side.cls)));
	json_object_object_add(o, "steal_ms_per_s", json_object_new_double(r->side.after_ms_s));
	json_object_object_add(o, "steal_ms_per_s_before",
			       json_object_new_double(r->side.before_ms_s));
	json_object_object_add(o, "be_steal_ms_per_s", json_object_new_double(r->side.be_after_ms_s));
	json_object_object_add(o, "be_steal_ms_per_s_before",
			       json_object_new_double(r->side.be_before_ms_s));
	json_object_object_add(o, "since_s", json_object_new_double(e->now - r->at));
	return o;
}

json_object *enforcer_verdicts_json(const struct enforcer *e)
{
	json_object *a = json_object_new_array(), *o;
	const struct verdict_record *r;
	int i;

	for (i = 1; i <= e->verdicts_n; i++) {
		r = &e->verdicts[(e->verdicts_next - i + ACT_VERDICTS) % ACT_VERDICTS];
		o = json_object_new_object();
		json_object_object_add(o, "action", json_object_new_string(r->what));
		json_object_object_add(o, "verdict", json_object_new_string(effect_verdict_name(r->v)));
		json_object_object_add(o, "outcome", json_object_new_string(r->outcome));
		json_object_object_add(o, "evidence", json_object_new_string(r->evidence));
		json_object_object_add(o, "since_s", json_object_new_double(e->now - r->at));
		json_object_array_add(a, o);
	}
	return a;
}

json_object *enforcer_container_json(const struct enforcer *e, __u64 cgid)
{
	json_object *o, *side = side_effect_json(e, cgid);
	const struct target *tg = NULL;
	size_t i;

	for (i = 0; i < e->ntg && !tg; i++)
		if (e->tg[i].cgid == cgid && (e->tg[i].cpuset_on || e->tg[i].quota_on))
			tg = &e->tg[i];
	if (!tg && !side)
		return NULL;
	o = json_object_new_object();
	if (side)
		json_object_object_add(o, "side_effect", side);
	if (!tg)
		return o;
	json_object_object_add(o, "method", json_object_new_string(method_name(tg->method)));
	json_object_object_add(o, "cpuset", json_object_new_boolean(tg->cpuset_on));
	json_object_object_add(o, "quota_cores", tg->quota_on ?
			       json_object_new_double(tg->th.limit_cores) : NULL);
	json_object_object_add(o, "at_floor_s", json_object_new_double(tg->th.at_floor_s));
	json_object_object_add(o, "since_s", json_object_new_double(e->now - tg->since));
	json_object_object_add(o, "victim", json_object_new_uint64(tg->victim));
	return o;
}

static void metric(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP koord_bpf_%s %s\n# TYPE koord_bpf_%s %s\n", name, help, name, type);
}

/* A family of one unlabelled sample; @present false: the family without a sample. */
static void scalar(FILE *f, const char *name, const char *type, const char *help, bool present,
		   double v)
{
	metric(f, name, type, help);
	if (present)
		fprintf(f, "koord_bpf_%s %.15g\n", name, v);
}

int enforcer_metrics(const struct enforcer *e, FILE *f)
{
	const struct enforce_stats *s = &e->st;
	const struct writer *w = e->w;
	int r;

	scalar(f, "enforcement_enabled", "gauge", "1 when resourceUsedThresholdWithBE.enable is true.",
	       true, e->c->be.enable);
	scalar(f, "config_ignored_values", "gauge",
	       "Values of resourceUsedThresholdWithBE koord-bpf does not support: ignored, "
	       "enforcement off.", true, e->c->ignored);
	scalar(f, "be_wakeup_priority", "gauge",
	       "1 when the BE roots have the lowest weight (or are SCHED_IDLE groups).", true,
	       s->wakeup_priority);
	scalar(f, "be_allowed_cores", "gauge",
	       "CPUs BE may use by the suppression formula (absent before the first period).",
	       s->be_allowed_cores >= 0, s->be_allowed_cores);
	scalar(f, "be_suppress_quota_cores", "gauge",
	       "The CFS quotas written on the BE roots, summed, in CPUs (absent when none).",
	       s->be_quota_us >= 0, s->be_quota_us / (double)CFS_PERIOD_US);
	scalar(f, "be_suppress_cpuset_cpus", "gauge", "CPUs in the BE cpuset written (absent when none).",
	       s->be_cpuset_cpus > 0, s->be_cpuset_cpus);
	scalar(f, "victims", "gauge", "Online containers found victims of interference in the last window.",
	       true, s->victims);
	scalar(f, "victim_windows_total", "counter", "Victims found, summed over windows.", true,
	       s->victim_windows_total);
	scalar(f, "throttled", "gauge", "Culprits under a targeted cpuset or quota now.", true,
	       s->throttled);
	metric(f, "throttle_steps_total", "counter", "Targeted quota steps on culprits, by step.");
	fprintf(f, "koord_bpf_throttle_steps_total{step=\"cut\"} %llu\n", s->throttle_cuts_total);
	fprintf(f, "koord_bpf_throttle_steps_total{step=\"recover\"} %llu\n", s->throttle_recoveries_total);
	fprintf(f, "koord_bpf_throttle_steps_total{step=\"release\"} %llu\n", s->throttle_releases_total);
	scalar(f, "actions_total", "counter", "Actions started (each measured for its effect on victims).",
	       true, s->actions_total);
	scalar(f, "rollbacks_total", "counter", "Actions rolled back because victims' waits got worse.",
	       true, s->rollbacks_total);
	metric(f, "side_effects_total", "counter",
	       "Actions after which the victims waited more behind another class than BE, by class.");
	for (r = 0; r < KC_NR; r++)
		if (r == KC_SYSTEM || r == KC_LS || r == KC_UNCLASSIFIED)	/* LS: the online ones */
			fprintf(f, "koord_bpf_side_effects_total{class=\"%s\"} %llu\n", qos_name(r),
				s->side_effects_total[r]);
	metric(f, "observed_changes_total", "counter",
	       "Advise mode: other writers' changes to BE cgroups, by the verdict on online waits.");
	for (r = EFFECT_BETTER; r < EFFECT_VERDICT_NR; r++)	/* a label without a blank */
		fprintf(f, "koord_bpf_observed_changes_total{verdict=\"%s\"} %llu\n",
			r == EFFECT_SAME ? "same" : effect_verdict_name(r), s->observed_total[r]);
	scalar(f, "transition_stalls_total", "counter",
	       "Writes (actions, rollbacks) whose first window held an online wait of 10 ms or more.",
	       true, s->transition_stalls_total);
	scalar(f, "be_keepoff_cpus", "gauge",
	       "CPUs BE is kept off after a side effect (absent when none).", s->keepoff_cpus > 0,
	       s->keepoff_cpus);
	scalar(f, "be_exclusive_cpus", "gauge",
	       "CPUs kept from BE cpusets: bound LSE containers' and the kubelet's static CPU "
	       "manager's (absent when none).", s->exclusive_cpus > 0, s->exclusive_cpus);
	metric(f, "evictions_total", "counter", "Containers evicted, by reason.");
	for (r = 0; r < EVICT_REASON_NR; r++)
		fprintf(f, "koord_bpf_evictions_total{reason=\"%s\"} %llu\n", evict_reason_name(r),
			s->evictions_total[r]);
	scalar(f, "eviction_failures_total", "counter", "Evictions that failed.", true,
	       s->eviction_failures_total);
	metric(f, "eviction_refused_pods", "gauge",
	       "BE pods kept out of the last eviction's candidates, by reason.");
	for (r = EVICT_ALLOWED + 1; r < EVICT_REFUSAL_NR; r++)
		fprintf(f, "koord_bpf_eviction_refused_pods{reason=\"%s\"} %u\n",
			evict_refusal_name(r), s->evict_refused[r]);
	metric(f, "cgroup_writes_total", "counter", "Cgroup file writes by the writer, by result.");
	fprintf(f, "koord_bpf_cgroup_writes_total{result=\"written\"} %llu\n", w->writes);
	fprintf(f, "koord_bpf_cgroup_writes_total{result=\"unchanged\"} %llu\n", w->skipped);
	fprintf(f, "koord_bpf_cgroup_writes_total{result=\"refused\"} %llu\n", w->refused);
	fprintf(f, "koord_bpf_cgroup_writes_total{result=\"vanished\"} %llu\n", w->vanished);
	fprintf(f, "koord_bpf_cgroup_writes_total{result=\"failed\"} %llu\n", w->failed);
	fprintf(f, "koord_bpf_cgroup_writes_total{result=\"left\"} %llu\n", w->left);
	fprintf(f, "koord_bpf_cgroup_writes_total{result=\"foreign\"} %llu\n", w->foreign);
	return ferror(f) ? -EIO : 0;
}

void enforcer_free(struct enforcer *e)
{
	if (!e)
		return;
	act_hook_stop(e);
	detect_free(&e->det);
	act_target_free(e);
	act_observe_free(e);
	free(e->side.victims);
	free(e->keepoff.victims);
	paths_free(&e->roots, &e->nroots);
	paths_free(&e->outside, &e->noutside);
	free(e);
}
