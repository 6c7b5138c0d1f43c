// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Action 0, BE wake-up priority: the BE roots become SCHED_IDLE groups
 * (cpu.idle = 1, kernel >= 5.15), so an online task that wakes preempts BE
 * work at once. Without cpu.idle, the lowest weight is the next best thing
 * (cpu.shares 2 on v1, cpu.weight 1 on v2).
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

/*
 * The file and value that give @rel the lowest wake-up priority: cpu.idle,
 * or where there is none the lowest weight (cpu.shares 2, cpu.weight 1).
 */
static int idle_setting(const struct enforcer *e, const char *rel, char *path, size_t len,
			const char **value)
{
	const char *dfl;
	int err = act_path(path, len, e->h->cpu, rel, "cpu.idle");

	if (err)
		return err;
	*value = "1";
	if (!access(path, F_OK))
		return 0;
	*value = e->h->cpu_version == 2 ? "1" : "2";
	return weight_path(e, rel, path, len, &dfl);
}

/* Set @rel's wake-up priority: cpu.idle changes the weight too, which is journaled with it. */
static int idle_set(struct enforcer *e, const char *rel, const char *path, const char *value)
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
		if (idle_setting(e, e->roots[i], path, sizeof(path), &value))
			continue;
		if (!start && !join) {
			char cur[64];

			/* only already in place counts while another action is measured */
			if (!writer_read(e->w, path, cur, sizeof(cur)) && !strcmp(cur, value))
				n++;
			continue;
		}
		r = idle_set(e, e->roots[i], path, value);
		if (r == 0 && strlen(changed) + strlen(e->roots[i]) + 2 < sizeof(changed))
			strcat(strcat(changed, changed[0] ? " " : ""), e->roots[i]);
		n += r >= 0;
	}
	e->st.wakeup_priority = e->nroots && n == e->nroots;
	if (!changed[0])
		return;
	if (start) {
		e->wakeup_on = true;
		act_begin(e, ACT_WAKEUP, 0, "BE wake-up priority (SCHED_IDLE group) on %s", changed);
	} else {
		log_info("BE wake-up priority (SCHED_IDLE group) on %s too: it joins the one in place",
			 changed);
	}
}

void act_wakeup_rollback(struct enforcer *e)
{
	char path[PATH_MAX];
	const char *value;
	size_t i;

	for (i = 0; i < e->nroots; i++) {
		if (!idle_setting(e, e->roots[i], path, sizeof(path), &value))
			act_restore(e, path);
		/* after cpu.idle, whose restore reset it (a no-op where it was not journaled) */
		if (!weight_path(e, e->roots[i], path, sizeof(path), &value))
			act_restore(e, path);
	}
	e->st.wakeup_priority = false;
	e->wakeup_on = false;
}
