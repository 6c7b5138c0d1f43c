/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Targeted throttling of a culprit: AIMD on its CFS quota. Cut
 * multiplicatively while it keeps hurting online work, never below the
 * floor; recover additively after a run of quiet windows; released once the
 * limit no longer binds. Pure state machine, unit-tested.
 */
#ifndef KOORD_THROTTLE_H
#define KOORD_THROTTLE_H

#include <stdbool.h>
#include "config.h"

enum throttle_step {
	TH_NONE,	/* leave the limit as it is */
	TH_CUT,		/* write the new, lower limit */
	TH_RECOVER,	/* write the new, higher limit */
	TH_RELEASE,	/* remove the limit (put the original back) */
};

struct throttle_state {
	bool active;		/* a limit is set */
	double limit_cores;	/* the limit when active */
	int quiet;		/* consecutive windows without hurting, while active */
	double at_floor_s;	/* time spent at the floor while still hurting */
};

/*
 * One window of @dt_s seconds. @hurting: the culprit was (sustainedly) found
 * hurting a victim in this window; @used_cores: its CPU use in the window.
 * The first cut starts from what it used (never from more than @capacity).
 * Returns the step; the new limit is in @st->limit_cores.
 */
enum throttle_step throttle_update(struct throttle_state *st, const struct koord_config *c,
				   bool hurting, double used_cores, double capacity, double dt_s);

#endif
