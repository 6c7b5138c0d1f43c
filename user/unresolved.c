// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include "unresolved.h"

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

bool unresolved_has(const struct unresolved *u, __u64 id)
{
	/* bsearch of NULL is undefined even with 0 elements */
	return u->n && bsearch(&id, u->ids, u->n, sizeof(id), cmp_u64);
}

bool unresolved_fresh(const struct unresolved *u, const struct container_table *t,
		      const struct sample *cur, const struct sample *prev)
{
	size_t i, j = 0;

	if (prev && cur->same_set && cur->prev_gen && cur->prev_gen == prev->gen)
		return false;	/* the same containers as @prev: none is new */
	for (i = 0; i < cur->n; i++) {
		__u64 id = cur->v[i].cgid;

		while (prev && j < prev->n && prev->v[j].cgid < id)
			j++;
		if ((prev && j < prev->n && prev->v[j].cgid == id) || container_table_get(t, id))
			continue;
		if (!unresolved_has(u, id))
			return true;
	}
	return false;
}

int unresolved_reset(struct unresolved *u, const struct container_table *t,
		     const struct sample *cur)
{
	size_t i;

	unresolved_free(u);
	if (!cur->n)
		return 0;
	u->ids = malloc(cur->n * sizeof(*u->ids));
	if (!u->ids)
		return -ENOMEM;
	for (i = 0; i < cur->n; i++)
		if (!container_table_get(t, cur->v[i].cgid))
			u->ids[u->n++] = cur->v[i].cgid;
	if (u->n)
		qsort(u->ids, u->n, sizeof(*u->ids), cmp_u64);
	return 0;
}

int unresolved_add(struct unresolved *u, __u64 id)
{
	__u64 *v;

	if (unresolved_has(u, id))
		return 0;
	v = realloc(u->ids, (u->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[u->n++] = id;
	qsort(v, u->n, sizeof(*v), cmp_u64);
	u->ids = v;
	return 0;
}

void unresolved_free(struct unresolved *u)
{
	free(u->ids);
	*u = (struct unresolved){};
}
