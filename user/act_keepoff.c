// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The escalation after a side effect: BE is kept off the CPUs where online
 * containers waited behind it. Other tasks can be placed next to the online
 * ones, which then wait behind them instead (steal moves from BE to SYSTEM):
 * a SCHED_IDLE BE group (beWakeupPriorityBy "idle") makes the CPUs it runs
 * on look idle to wake-up placement. With BE off the victims' CPUs, its own
 * CPUs are the ones that look idle. Measured and rolled back like any
 * action; released once the victims are gone.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "act.h"
#include "log.h"

/* Are none of the keep-off's victims in the table any more? */
static bool victims_gone(const struct enforcer *e, const struct container_table *t)
{
	size_t i;

	for (i = 0; i < e->keepoff.nvictims; i++)
		if (container_table_get(t, e->keepoff.victims[i]))
			return false;
	return e->keepoff.nvictims > 0;
}

static void release(struct enforcer *e, const struct container_table *t)
{
	size_t i;

	/* a culprit's own cpuset is the targeted action's: restoring it here undid it under load */
	for (i = 0; i < e->nroots; i++)
		act_be_cpuset_restore(e, t, e->roots[i], true);
	e->keepoff.on = false;
	e->st.keepoff_cpus = 0;
}

void act_keepoff(struct enforcer *e, const struct container_table *t)
{
	char path[PATH_MAX], buf[CPUSET_TEXT_MAX], off[CPUSET_TEXT_MAX], changed[256] = "";
	bool adjust = e->keepoff.on;
	cpu_set_t cur, next;
	size_t i;

	if (e->keepoff.on && victims_gone(e, t)) {
		release(e, t);
		log_info("BE keep-off released: its victims are gone");
		return;
	}
	if (!e->keepoff.wanted || (!adjust && !act_can_start(e, ACT_KEEPOFF)))
		return;
	e->keepoff.wanted = false;
	if (cpuset_format(&e->keepoff.cpus, off, sizeof(off)) < 0)
		return;
	for (i = 0; i < e->nroots; i++) {
		if (act_cpuset_file(e, e->roots[i], path, sizeof(path)) ||
		    writer_read(e->w, path, buf, sizeof(buf)) || cpuset_parse(buf, &cur))
			continue;
		CPU_XOR(&next, &cur, &e->keepoff.cpus);
		CPU_AND(&next, &next, &cur);
		if (CPU_EQUAL(&next, &cur))
			continue;
		if (!CPU_COUNT(&next)) {
			log_warn("cannot keep BE off CPUs %s: %s has no other CPU", off, e->roots[i]);
			continue;
		}
		if (cpuset_format(&next, buf, sizeof(buf)) < 0 ||
		    act_be_cpuset_write(e, t, e->roots[i], buf, false) < 0)
			continue;
		if (strlen(changed) + strlen(e->roots[i]) + 2 < sizeof(changed))
			strcat(strcat(changed, changed[0] ? " " : ""), e->roots[i]);
	}
	if (!changed[0])
		return;
	e->st.keepoff_cpus = CPU_COUNT(&e->keepoff.cpus);
	if (adjust) {
		log_info("BE kept off the victims' CPUs %s on %s too", off, changed);
		return;
	}
	e->keepoff.on = true;
	act_begin(e, ACT_KEEPOFF, 0, "BE kept off the victims' CPUs %s on %s", off, changed);
}

bool act_keepoff_failed(const struct enforcer *e)
{
	return e->rolled[ACT_KEEPOFF] && e->rolled_workload[ACT_KEEPOFF] == e->workload;
}

void act_keepoff_rollback(struct enforcer *e, const struct container_table *t)
{
	release(e, t);
}
