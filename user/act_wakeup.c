// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Action 0, BE wake-up priority: the BE roots get the lowest weight
 * (cpu.shares 2 on v1, cpu.weight 1 on v2), so an online task that wakes is
 * picked before BE work. beWakeupPriorityBy "idle" makes them SCHED_IDLE
 * groups instead (cpu.idle = 1, kernel >= 5.15): as prompt, but a CPU that
 * runs only BE work then looks idle to wake-up placement, which draws other
 * tasks next to the online ones (docs/enforcement.md); the weight keeps
 * that CPU busy to it.
 */
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include "act.h"
#include "log.h"

/* @rel's weight file (cpu.shares on v1, cpu.weight on v2) and the kernel's default for it. */
static int weight_path(const struct enforcer *e, const char *rel, char *path, size_t len,
		       const char **dfl)
{
	*dfl = e->h->cpu_version == 2 ? "100" : "1024";
	return act_path(path, len, e->h->cpu, rel, e->h->cpu_version == 2 ? "cpu.weight" : "cpu.shares");
}

/* Does the wake-up priority use cpu.idle on @rel: asked for, and the kernel has it? */
static bool by_idle(const struct enforcer *e, const char *rel)
{
	char path[PATH_MAX];

	return e->c->wakeup_by == WAKEUP_BY_IDLE &&
	       !act_path(path, sizeof(path), e->h->cpu, rel, "cpu.idle") && !access(path, F_OK);
}

/*
 * The file and value that give @rel the lowest wake-up priority: the
 * lowest weight (cpu.shares 2, cpu.weight 1), or cpu.idle 1 when asked for.
 */
static int priority_setting(const struct enforcer *e, const char *rel, char *path, size_t len,
			    const char **value)
{
	const char *dfl;

	*value = "1";
	if (by_idle(e, rel))
		return act_path(path, len, e->h->cpu, rel, "cpu.idle");
	*value = e->h->cpu_version == 2 ? "1" : "2";
	return weight_path(e, rel, path, len, &dfl);
}

static const char *priority_name(const struct enforcer *e)
{
	return e->c->wakeup_by == WAKEUP_BY_IDLE ? "BE wake-up priority (SCHED_IDLE group)" :
						    "BE wake-up priority (lowest weight)";
}

/* Set @rel's wake-up priority: cpu.idle changes the weight too, which is journaled with it. */
static int priority_set(struct enforcer *e, const char *rel, const char *path, const char *value)
{
	char weight[PATH_MAX];
	const char *dfl;

	if (strcmp(strrchr(path, '/'), "/cpu.idle") || weight_path(e, rel, weight, sizeof(weight), &dfl))
		return writer_set(e->w, path, value);
	return writer_set_coupled(e->w, path, value, weight, dfl);
}

void act_wakeup(struct enforcer *e, const struct container_table *t)
{
	char path[PATH_MAX], changed[256] = "";
	bool start = act_can_start(e, ACT_WAKEUP);
	/* a root found later (a first YARN job) joins the posture taken, even while one is measured */
	bool join = !start && e->wakeup_on && e->now >= e->hold_until[ACT_WAKEUP];
	const char *value;
	size_t i, n = 0;
	int r;

	if (e->w->dry_run && e->st.wakeup_priority)
		return;		/* decided and logged once; nothing changes in a dry run */
	for (i = 0; i < e->nroots; i++) {
		if (priority_setting(e, e->roots[i], path, sizeof(path), &value))
			continue;
		if (!start && !join) {
			char cur[64];

			/* only already in place counts while another action is measured */
			if (!writer_read(e->w, path, cur, sizeof(cur)) && !strcmp(cur, value))
				n++;
			continue;
		}
		r = priority_set(e, e->roots[i], path, value);
		if (r == 0 && strlen(changed) + strlen(e->roots[i]) + 2 < sizeof(changed))
			strcat(strcat(changed, changed[0] ? " " : ""), e->roots[i]);
		n += r >= 0;
	}
	e->st.wakeup_priority = e->nroots && n == e->nroots;
	if (!changed[0])
		return;
	if (start) {
		e->wakeup_on = true;
		act_begin(e, ACT_WAKEUP, 0, "%s on %s", priority_name(e), changed);
	} else {
		log_info("%s on %s too: it joins the one in place", priority_name(e), changed);
	}
}

void act_wakeup_rollback(struct enforcer *e)
{
	char path[PATH_MAX];
	const char *value;
	size_t i;

	/* both files whichever the setting (a reload may have changed it); unjournaled: no-ops */
	for (i = 0; i < e->nroots; i++) {
		if (!act_path(path, sizeof(path), e->h->cpu, e->roots[i], "cpu.idle"))
			act_restore(e, path);
		/* after cpu.idle, whose restore reset it */
		if (!weight_path(e, e->roots[i], path, sizeof(path), &value))
			act_restore(e, path);
	}
	e->st.wakeup_priority = false;
	e->wakeup_on = false;
}
