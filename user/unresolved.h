/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Containers the collector saw that the last walk of the hierarchy did not
 * find (gone already, too deep): they do not trigger the next walk. One
 * tracker for every program that walks when new containers appear.
 */
#ifndef KOORD_UNRESOLVED_H
#define KOORD_UNRESOLVED_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "cgroup.h"
#include "window.h"

struct unresolved {
	__u64 *ids;	/* sorted; NULL when none */
	size_t n;
};

bool unresolved_has(const struct unresolved *u, __u64 id);

/*
 * Does @cur hold a container that neither the walk's table @t nor @u knows?
 * With @prev (the sample before, already looked at) only the containers new
 * since it are looked up: both samples are sorted.
 */
bool unresolved_fresh(const struct unresolved *u, const struct container_table *t,
		      const struct sample *cur, const struct sample *prev);

/* After a walk: @cur's containers that @t does not hold. 0 or -ENOMEM (then none). */
int unresolved_reset(struct unresolved *u, const struct container_table *t,
		     const struct sample *cur);

/* One more, e.g. a long wait's culprit the walk did not find. 0 or -ENOMEM. */
int unresolved_add(struct unresolved *u, __u64 id);

void unresolved_free(struct unresolved *u);

#endif
