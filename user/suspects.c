// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "suspects.h"

static enum koord_class qos_of(const struct container_table *t, __u64 cgid)
{
	const struct container *c = container_table_get(t, cgid);

	return c ? c->ident.qos : KC_UNCLASSIFIED;
}

static int cmp_suspect(const void *a, const void *b)
{
	const struct suspect *x = a, *y = b;

	return x->inflicted_online_ns < y->inflicted_online_ns ? 1 :
	       x->inflicted_online_ns > y->inflicted_online_ns ? -1 : 0;
}

/* @c's part on @cpu, or NULL. */
static const struct cg_cpu_part *part_of(const struct window *w, __u64 cgid, __u32 cpu)
{
	struct cg_cpu_part key = { .cgid = cgid, .cpu = cpu };

	return w->npc ? bsearch(&key, w->pc, w->npc, sizeof(key), cg_cpu_part_cmp) : NULL;
}

/* Keep the largest victims, in order. */
static void add_victim(struct suspect *s, __u64 cgid, __u64 ns)
{
	size_t i = s->nvictims;

	if (i == SUSPECT_VICTIMS) {
		if (s->victims[i - 1].be_steal_ns >= ns)
			return;
		i--;
	} else {
		s->nvictims++;
	}
	for (; i > 0 && s->victims[i - 1].be_steal_ns < ns; i--)
		s->victims[i] = s->victims[i - 1];
	s->victims[i] = (struct victim){ cgid, ns };
}

int suspects_rank(const struct window *w, const struct container_table *t, struct suspects *out)
{
	__u64 *be_by_cpu = NULL;
	__u32 ncpu = 0;
	size_t i, j;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < w->npc; i++)
		if (w->pc[i].cpu + 1 > ncpu)
			ncpu = w->pc[i].cpu + 1;
	out->v = calloc(w->n ? w->n : 1, sizeof(*out->v));
	be_by_cpu = calloc(ncpu ? ncpu : 1, sizeof(*be_by_cpu));
	if (!out->v || !be_by_cpu) {
		free(be_by_cpu);
		suspects_free(out);
		return -ENOMEM;
	}
	for (i = 0; i < w->n; i++) {
		out->inflicted_online_ns += w->v[i].inflicted_online_ns;
		if (qos_of(t, w->v[i].cgid) == KC_BE && w->v[i].inflicted_online_ns)
			out->v[out->n++] = (struct suspect){ .cgid = w->v[i].cgid,
				.inflicted_online_ns = w->v[i].inflicted_online_ns };
	}
	for (i = 0; i < w->npc; i++)
		if (qos_of(t, w->pc[i].cgid) == KC_BE)
			be_by_cpu[w->pc[i].cpu] += w->pc[i].inflicted_online_ns;
	qsort(out->v, out->n, sizeof(*out->v), cmp_suspect);

	for (i = 0; i < out->n; i++) {
		struct suspect *s = &out->v[i];

		s->share = out->inflicted_online_ns ?
			(double)s->inflicted_online_ns / out->inflicted_online_ns : 0;
		/* Victims: online containers, their BE steal split per CPU by inflicted share. */
		for (j = 0; j < w->npc;) {
			__u64 cgid = w->pc[j].cgid, ns = 0;

			for (; j < w->npc && w->pc[j].cgid == cgid; j++) {
				const struct cg_cpu_part *vp = &w->pc[j], *cp;

				if (!vp->steal_be_ns || !be_by_cpu[vp->cpu])
					continue;
				cp = part_of(w, s->cgid, vp->cpu);
				if (cp)
					ns += (__u64)((double)vp->steal_be_ns *
						      cp->inflicted_online_ns / be_by_cpu[vp->cpu]);
			}
			if (ns && KC_IS_ONLINE(qos_of(t, cgid)))
				add_victim(s, cgid, ns);
		}
	}
	free(be_by_cpu);
	return 0;
}

bool suspects_found(const struct suspects *s, __u64 dur_ns)
{
	return s->n && s->v[0].inflicted_online_ns * 1000 >= dur_ns;
}

void suspects_free(struct suspects *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
