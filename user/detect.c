// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "detect.h"

const struct victim_state *detect_find(const struct detector *d, __u64 cgid)
{
	struct victim_state key = { .cgid = cgid };

	return d->n ? bsearch(&key, d->v, d->n, sizeof(key), cgid_cmp) : NULL;
}

bool detect_is_victim(const struct victim_state *s, const struct koord_config *c)
{
	return s && s->streak >= c->interference.sustained_windows;
}

/*
 * A victim's BE suspects are culprits only where BE held at least this part
 * of what it waited behind others: where system or other online work held
 * most of it, keeping BE off its CPUs frees them for that work (seen: a
 * culprit's cpuset drew a background burner next to the probe, p99.9 5.4 ->
 * 7.2 ms, while BE had held 3 of its 87 waits of 1 ms or more).
 */
#define CULPRIT_BE_SHARE 0.5

/* BE's part of @cw's steal behind other containers' tasks (not idle, not its own). */
static double be_share(const struct cg_window *cw)
{
	__u64 all = cg_window_steal_others(cw);

	return all ? (double)cw->steal_ns[KC_BE] / all : 0;
}

/* Over a threshold in this window? */
static bool hurt_in(const struct victim_state *s, const struct koord_config *c)
{
	return s->p99_ns >= c->interference.victim_p99_wait_us * 1e3 ||
	       s->p999_ns >= c->interference.victim_p999_wait_us * 1e3 ||
	       s->be_steal_pct >= c->interference.be_steal_percent;
}

int detect_update(struct detector *d, const struct window *w, const struct container_table *t,
		  const struct koord_config *c)
{
	struct victim_state *v, *s, *old;
	const struct container *ct;
	size_t i, n = 0;

	v = calloc(w->n ? w->n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < w->n; i++) {
		const struct cg_window *cw = &w->v[i];

		/* no wait ended: nothing over a threshold, so no streak (as if never seen) */
		if (!cw->wait_count)
			continue;
		ct = container_table_get(t, cw->cgid);
		if (!ct || !KC_IS_ONLINE(ct->ident.qos))
			continue;
		s = &v[n++];
		old = (struct victim_state *)detect_find(d, cw->cgid);
		if (old) {
			*s = *old;
			old->acc = NULL;	/* moved */
		}
		s->cgid = cw->cgid;
		s->p99_ns = cw->p99_ns;
		s->p999_ns = cw->p999_ns;
		s->be_steal_pct = w->dur_ns ? 100.0 * cw->steal_ns[KC_BE] / w->dur_ns : 0;
		s->be_share = be_share(cw);
		if (hurt_in(s, c) && (s->acc || (s->acc = calloc(1, sizeof(*s->acc))))) {
			s->streak++;
			waits_add(s->acc, cw, w->dur_ns);
		} else {
			s->streak = 0;
			free(s->acc);
			s->acc = NULL;
		}
	}
	qsort(v, n, sizeof(*v), cgid_cmp);
	for (i = 0; i < d->n; i++)	/* of containers gone */
		free(d->v[i].acc);
	free(d->v);
	d->v = v;
	d->n = n;
	d->victims = 0;
	for (i = 0; i < n; i++)
		d->victims += detect_is_victim(&v[i], c);
	return 0;
}

size_t detect_culprits(const struct detector *d, const struct suspects *sus,
		       const struct koord_config *c, struct culprit *out, size_t max)
{
	size_t i, j, n = 0;

	if (!d->victims || !sus)
		return 0;
	for (i = 0; i < sus->n && n < max; i++) {
		const struct suspect *s = &sus->v[i];

		for (j = 0; j < s->nvictims; j++) {
			const struct victim_state *v = detect_find(d, s->victims[j].cgid);

			if (!detect_is_victim(v, c) || v->be_share < CULPRIT_BE_SHARE)
				continue;
			out[n++] = (struct culprit){ s->cgid, s->inflicted_online_ns,
						     s->victims[j].cgid };
			break;
		}
	}
	return n;
}

void detect_free(struct detector *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->v[i].acc);
	free(d->v);
	memset(d, 0, sizeof(*d));
}
