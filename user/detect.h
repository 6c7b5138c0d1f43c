/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Interference detection: an online container is a victim when its window
 * p99 or p99.9 run-queue wait, or the share of the window it spent waiting
 * behind BE work, stays above the thresholds for a sustained number of
 * windows (the harm is often in the tail alone: most wakeups do not wait). The
 * culprits are the BE containers that made the victims wait, ranked by the
 * online waiting they inflicted.
 */
#ifndef KOORD_DETECT_H
#define KOORD_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include "cgroup.h"
#include "config.h"
#include "effect.h"
#include "suspects.h"
#include "window.h"

struct victim_state {
	__u64 cgid;
	int streak;		/* consecutive windows over a threshold */
	__u64 p99_ns, p999_ns;	/* of the last window */
	double be_steal_pct;	/* BE steal, % of the last window */
	double be_share;	/* BE's part of its steal behind other containers, last window */
	struct waits *acc;	/* waits over the streak (the baseline of an action), NULL at 0 */
};

struct detector {
	struct victim_state *v;	/* online containers seen in the last window, sorted by cgid */
	size_t n;
	size_t victims;		/* how many are victims now */
};

/* Is @s a victim under @c (its streak reached sustainedWindows)? */
bool detect_is_victim(const struct victim_state *s, const struct koord_config *c);
/*
 * Fold window @w in: the online containers (by @t's classes) and their
 * streaks; containers gone from @w are dropped. Returns 0 or -ENOMEM.
 */
int detect_update(struct detector *d, const struct window *w, const struct container_table *t,
		  const struct koord_config *c);
const struct victim_state *detect_find(const struct detector *d, __u64 cgid);

struct culprit {
	__u64 cgid;
	__u64 inflicted_online_ns;	/* on the victims' CPUs, in the window */
	__u64 victim;			/* the victim it hurt most */
};
/*
 * The BE containers that hurt at least one current victim (of the window's
 * suspects, @sus) that waited mostly behind BE, most inflicted first, at
 * most @max. Returns how many were written to @out.
 */
size_t detect_culprits(const struct detector *d, const struct suspects *sus,
		       const struct koord_config *c, struct culprit *out, size_t max);
void detect_free(struct detector *d);

#endif
