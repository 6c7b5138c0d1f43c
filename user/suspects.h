/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Culprits of a window: offline containers ranked by the online waiting they caused. */
#ifndef KOORD_SUSPECTS_H
#define KOORD_SUSPECTS_H

#include <stddef.h>
#include "cgroup.h"
#include "window.h"

#define SUSPECT_VICTIMS 5
/* Victims are found for the top suspects only: the rest are listed with their share. */
#define SUSPECTS_WITH_VICTIMS 32

struct victim {
	__u64 cgid;
	__u64 be_steal_ns;	/* the victim's BE steal attributed to this suspect */
};

struct suspect {
	__u64 cgid;
	__u64 inflicted_online_ns;
	double share;		/* of all online waiting inflicted in the window */
	struct victim victims[SUSPECT_VICTIMS];
	size_t nvictims;
};

struct suspects {
	struct suspect *v;
	size_t n;
	__u64 inflicted_online_ns;	/* by every container, the share's denominator */
};

/*
 * BE containers that made online tasks wait in @w, most first. A victim's
 * BE steal on a CPU is split among the BE containers by their inflicted
 * online wait on that CPU; each suspect keeps its largest victims.
 */
int suspects_rank(const struct window *w, const struct container_table *t, struct suspects *out);
void suspects_free(struct suspects *s);

/* True when the top suspect caused at least 1 ms of online waiting per second of window. */
bool suspects_found(const struct suspects *s, __u64 dur_ns);

#endif
