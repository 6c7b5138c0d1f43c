// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Action 2, targeted: the culprits that keep hurting victims are first kept
 * off the victims' CPUs with a cpuset (where the cpuset hierarchy holds
 * them), and, if that made things worse, cannot be done, or they still hurt
 * once it was measured, their CFS quota is cut multiplicatively and
 * recovered additively (throttle.c). Each first step is measured and rolled
 * back when the victims got worse.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "act.h"
#include "log.h"

static struct target *target_get(struct enforcer *e, const struct culprit *c,
				 const struct container_table *t)
{
	const struct container *ct = container_table_get(t, c->cgid);
	char label[PATH_MAX + 400];
	struct target *v;
	size_t i;

	for (i = 0; i < e->ntg; i++)
		if (e->tg[i].cgid == c->cgid)
			return &e->tg[i];
	if (!ct || !act_allowed(e, ct->path))
		return NULL;	/* not ours to touch */
	v = realloc(e->tg, (e->ntg + 1) * sizeof(*v));
	if (!v)
		return NULL;
	e->tg = v;
	v = &e->tg[e->ntg];
	*v = (struct target){ .cgid = c->cgid, .path = strdup(ct->path),
			      .label = strdup(container_label(ct, label, sizeof(label))),
			      .since = e->now, .victim = c->victim };
	if (!v->path || !v->label) {
		free(v->path);
		free(v->label);
		return NULL;
	}
	e->ntg++;
	return v;
}

/* The CPUs where @victim waited behind BE work in @w. */
static void victim_cpus(const struct window *w, __u64 victim, cpu_set_t *out)
{
	size_t i;

	CPU_ZERO(out);
	for (i = 0; i < w->npc; i++)
		if (w->pc[i].cgid == victim && w->pc[i].steal_be_ns && w->pc[i].cpu < CPU_SETSIZE)
			CPU_SET(w->pc[i].cpu, out);
}

/* Keep @tg off its victim's CPUs; -ENOENT when no cpuset holds it, -ENOSPC when nothing is left. */
static int cpuset_apply(struct enforcer *e, const struct window *w, struct target *tg)
{
	char path[PATH_MAX], buf[CPUSET_TEXT_MAX];
	cpu_set_t cur, vic, keep;
	int err;

	err = act_cpuset_file(e, tg->path, path, sizeof(path));
	if (!err)
		err = writer_read(e->w, path, buf, sizeof(buf));
	if (!err)
		err = cpuset_parse(buf, &cur);
	if (err)
		return err;
	victim_cpus(w, tg->victim, &vic);
	CPU_XOR(&keep, &cur, &vic);
	CPU_AND(&keep, &keep, &cur);
	if (!CPU_COUNT(&vic) || !CPU_COUNT(&keep))
		return -ENOSPC;
	if (cpuset_format(&keep, buf, sizeof(buf)) < 0)
		return -ENAMETOOLONG;
	err = writer_set(e->w, path, buf);
	if (err < 0)
		return err;
	act_begin(e, ACT_TARGET, tg->cgid, "culprit %s kept on CPUs %s, off its victims' CPUs",
		  tg->label, buf);
	return 0;
}

/* Does @path's original (journaled) fit in the cpuset of @rel's parent now? */
static bool original_fits(struct enforcer *e, const char *rel, const char *path)
{
	const char *orig = e->w->journal ? journal_original(e->w->journal, path) : NULL;
	char parent[PATH_MAX], ppath[PATH_MAX], buf[CPUSET_TEXT_MAX], *slash;
	cpu_set_t want, room, both;

	snprintf(parent, sizeof(parent), "%s", rel);
	slash = strrchr(parent, '/');
	if (!orig || !slash || slash == parent)
		return true;	/* nothing to check it against: let the write say */
	*slash = '\0';
	if (act_cpuset_file(e, parent, ppath, sizeof(ppath)) ||
	    writer_read(e->w, ppath, buf, sizeof(buf)) || cpuset_parse(buf, &room) ||
	    cpuset_parse(orig, &want))
		return true;
	CPU_AND(&both, &want, &room);
	return CPU_EQUAL(&both, &want);
}

/*
 * Back to its original, unless BE's own cpusets are narrower now (keep-off,
 * suppression by cpuset): the kernel would refuse (EACCES), and their
 * release restores it with the rest of BE.
 */
static void cpuset_release(struct enforcer *e, struct target *tg)
{
	char path[PATH_MAX];

	if (!act_cpuset_file(e, tg->path, path, sizeof(path)) && original_fits(e, tg->path, path))
		act_restore(e, path);
	tg->cpuset_on = false;
}

static void quota_release(struct enforcer *e, struct target *tg)
{
	char path[PATH_MAX];

	if (!act_quota_path(e, tg->path, path, sizeof(path)))
		act_restore(e, path);
	tg->quota_on = false;
	tg->th = (struct throttle_state){};
}

/* AIMD on the quota; the first cut is an action measured for its effect. */
/* The tightest quota (us per CFS_PERIOD_US) among @rel's ancestors, -1 when none has one. */
static long ancestors_quota(struct enforcer *e, const char *rel)
{
	char parent[PATH_MAX];
	long q, cap = -1;
	char *slash;

	snprintf(parent, sizeof(parent), "%s", rel);
	while ((slash = strrchr(parent, '/')) && slash != parent) {
		*slash = '\0';
		if (!act_quota_read(e, parent, &q) && q >= 0 && (cap < 0 || q < cap))
			cap = q;
	}
	return cap;
}

static void quota_step(struct enforcer *e, const struct window *w, struct target *tg, bool hurting)
{
	struct throttle_state next = tg->th;
	enum throttle_step step;
	long q, cap;

	if (!tg->quota_on && (!hurting || !act_can_start(e, ACT_TARGET)))
		return;
	step = throttle_update(&next, e->c, hurting, act_used_cores(w, tg->cgid), e->capacity, e->dt);
	if (step == TH_RELEASE) {
		quota_release(e, tg);
		e->st.throttle_releases_total++;
		log_info("culprit %s: quiet for %d windows, quota released", tg->label,
			 e->c->throttle.quiet_windows);
		return;
	}
	if (step == TH_NONE) {
		tg->th = next;
		return;
	}
	q = next.limit_cores * CFS_PERIOD_US;
	if (q < 1000)
		q = 1000;
	cap = ancestors_quota(e, tg->path);
	if (cap >= 0 && q >= cap) {
		/* an ancestor (the BE root's suppression) already holds it tighter: v1 refuses more */
		if (tg->quota_on)
			quota_release(e, tg);
		return;
	}
	if (act_quota_write(e, tg->path, q) < 0)
		return;		/* the state stays as it was: nothing was limited */
	tg->th = next;
	if (step == TH_CUT)
		e->st.throttle_cuts_total++;
	else
		e->st.throttle_recoveries_total++;
	tg->method = TGT_QUOTA;
	if (!tg->quota_on) {
		tg->quota_on = true;
		act_begin(e, ACT_TARGET, tg->cgid, "culprit %s quota %.2f cores", tg->label,
			  tg->th.limit_cores);
	} else {
		log_info("culprit %s quota %.2f cores (%s)", tg->label, tg->th.limit_cores,
			 step == TH_CUT ? "still hurting: cut" : "quiet: recover");
	}
}

/*
 * Quiet windows before a culprit's cpuset is released: throttle.quietWindows,
 * doubled each time it hurt again after a release. Kept off the victims'
 * CPUs, a culprit is quiet because of the cpuset; released, it came back (seen
 * under load: kept off, released, kept off again, each a transition).
 */
static int quiet_needed(const struct enforcer *e, const struct target *tg)
{
	return e->c->throttle.quiet_windows << (tg->returns < 6 ? tg->returns : 6);
}

static void step_one(struct enforcer *e, const struct window *w, struct target *tg, bool hurting)
{
	int err;

	if (e->now < tg->hold_until)
		return;
	if (hurting && !tg->cpuset_on && !tg->cpuset_failed && !tg->quota_on &&
	    !act_keepoff_failed(e) && act_can_start(e, ACT_TARGET)) {
		err = cpuset_apply(e, w, tg);
		if (!err) {
			if (e->now < tg->remember_until)
				tg->returns++;
			tg->cpuset_on = true;
			tg->method = TGT_CPUSET;
			tg->quiet = 0;
			return;
		}
		log_debug("culprit %s: no cpuset action (%s): quota", tg->label, strerror(-err));
		tg->cpuset_failed = true;
	}
	if (tg->cpuset_on) {
		tg->quiet = hurting ? 0 : tg->quiet + 1;
		if (e->eff.pending && e->eff.target == tg->cgid)
			return;		/* let the cpuset be measured first */
		if (!tg->quota_on && tg->quiet >= quiet_needed(e, tg)) {
			cpuset_release(e, tg);
			tg->remember_until = e->now + e->c->effect.hold_off_s;
			log_info("culprit %s: quiet for %d windows, cpuset released (%d needed: it "
				 "came back %d times)", tg->label, tg->quiet, quiet_needed(e, tg),
				 tg->returns);
			return;
		}
	}
	quota_step(e, w, tg, hurting);
}

void act_target(struct enforcer *e, const struct window *w, const struct container_table *t,
		const struct suspects *sus)
{
	struct culprit cul[64];
	size_t i, j, n, max = e->c->throttle.max_culprits;
	bool hurting;

	n = detect_culprits(&e->det, sus, e->c, cul, max < 64 ? max : 64);
	for (i = 0; i < n; i++)
		target_get(e, &cul[i], t);
	for (i = 0; i < e->ntg;) {
		struct target *tg = &e->tg[i];

		if (!container_table_get(t, tg->cgid)) {	/* exited: nothing to undo */
			log_debug("culprit %s is gone", tg->label);
			goto drop;
		}
		for (hurting = false, j = 0; j < n && !hurting; j++)
			hurting = cul[j].cgid == tg->cgid;
		step_one(e, w, tg, hurting);
		if (tg->cpuset_on || tg->quota_on || e->now < tg->hold_until ||
		    e->now < tg->remember_until) {
			i++;
			continue;
		}
drop:
		free(tg->path);
		free(tg->label);
		e->tg[i] = e->tg[--e->ntg];
	}
	for (e->st.throttled = 0, i = 0; i < e->ntg; i++)
		e->st.throttled += e->tg[i].cpuset_on || e->tg[i].quota_on;
}

void act_target_rollback(struct enforcer *e, __u64 cgid)
{
	size_t i;

	for (i = 0; i < e->ntg; i++) {
		struct target *tg = &e->tg[i];

		if (tg->cgid != cgid)
			continue;
		if (tg->method == TGT_CPUSET && tg->cpuset_on) {
			cpuset_release(e, tg);
			tg->cpuset_failed = true;	/* the quota is next */
			/*
			 * Kept in mind, or the next period makes a fresh target of
			 * it and takes the cpuset again (seen under load: kept off,
			 * rolled back, kept off, with a 12.6 ms wait after the
			 * rollback's write).
			 */
			tg->remember_until = e->now + e->c->effect.hold_off_s;
		} else if (tg->quota_on) {
			quota_release(e, tg);
			tg->hold_until = e->now + e->c->effect.hold_off_s;
		}
	}
}

void act_target_free(struct enforcer *e)
{
	size_t i;

	for (i = 0; i < e->ntg; i++) {
		free(e->tg[i].path);
		free(e->tg[i].label);
	}
	free(e->tg);
	e->tg = NULL;
	e->ntg = 0;
}
