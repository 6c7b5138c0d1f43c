// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The throttle state machine, one call per window:
 *
 *   idle    --hurting-->            active, limit = max(floor, min(used, capacity) x cut)  CUT
 *   active  --hurting, > floor-->   limit = max(floor, limit x cut)                         CUT
 *   active  --hurting, at floor-->  at_floor_s += dt (eviction looks at it)                 NONE
 *   active  --quiet, quiet < N-->   quiet++                                                 NONE
 *   active  --quiet, quiet = N-->   limit += step, quiet = 0, at_floor_s = 0                RECOVER
 *             ... and when limit >= capacity, or the old limit did not bind
 *             (used < old limit - step):  idle                                       RELEASE
 *   idle    --quiet-->              nothing                                                 NONE
 *
 * Any hurting window sets quiet back to 0: recovery needs N quiet windows
 * in a row (the hysteresis), while a cut needs only one hurting window
 * (the caller already asks for it to be sustained).
 */
#include <math.h>
#include <string.h>
#include "throttle.h"

static enum throttle_step cut(struct throttle_state *st, const struct koord_config *c,
			      double used, double capacity, double dt_s)
{
	double floor = c->throttle.floor_cores;

	st->quiet = 0;
	if (!st->active) {
		/* Start from what it used: a limit above that would change nothing. */
		st->active = true;
		st->at_floor_s = 0;
		used = fmax(fmin(used, capacity), 0);
		st->limit_cores = fmax(floor, used * c->throttle.cut_factor);
		return TH_CUT;
	}
	if (st->limit_cores > floor) {
		st->limit_cores = fmax(floor, st->limit_cores * c->throttle.cut_factor);
		return TH_CUT;
	}
	st->at_floor_s += dt_s;
	return TH_NONE;
}

static enum throttle_step recover(struct throttle_state *st, const struct koord_config *c,
				  double used, double capacity)
{
	double step = c->throttle.recovery_step_cores;
	double old = st->limit_cores;

	if (++st->quiet < c->throttle.quiet_windows)
		return TH_NONE;
	st->quiet = 0;
	st->at_floor_s = 0;
	st->limit_cores = old + step;
	/* @used was measured under the old limit: well below it, no limit is needed. */
	if (st->limit_cores >= capacity || used < old - step) {
		memset(st, 0, sizeof(*st));
		return TH_RELEASE;
	}
	return TH_RECOVER;
}

enum throttle_step throttle_update(struct throttle_state *st, const struct koord_config *c,
				   bool hurting, double used_cores, double capacity, double dt_s)
{
	if (hurting)
		return cut(st, c, used_cores, capacity, dt_s);
	if (!st->active)
		return TH_NONE;
	return recover(st, c, used_cores, capacity);
}
