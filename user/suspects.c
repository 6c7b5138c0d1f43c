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

static int cmp_part_cpu(const void *a, const void *b)
{
	const struct cg_cpu_part *x = *(const struct cg_cpu_part *const *)a;
	const struct cg_cpu_part *y = *(const struct cg_cpu_part *const *)b;

	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static int cmp_victim_ns(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	return x->cgid < y->cgid ? -1 : x->cgid > y->cgid;
}

/*
 * @s's victims: on each CPU where it made online tasks wait, every online
 * container's BE steal there, split among the BE containers by their
 * inflicted online wait on that CPU; summed per victim over CPUs.
 * @vparts: the online parts with BE steal, by CPU; @vstart[cpu]: where a CPU's begin.
 */
static int find_victims(const struct window *w, struct suspect *s, const __u64 *be_by_cpu,
			const struct cg_cpu_part **vparts, const size_t *vstart, __u32 ncpu,
			struct victim *scratch)
{
	size_t i, j, first, end, n = 0;

	end = cg_cpu_parts_of(w->pc, w->npc, s->cgid, &first);
	for (i = first; i < end; i++) {
		const struct cg_cpu_part *cp = &w->pc[i];

		if (!cp->inflicted_online_ns || cp->cpu >= ncpu || !be_by_cpu[cp->cpu])
			continue;
		for (j = vstart[cp->cpu]; j < vstart[cp->cpu + 1]; j++)
			scratch[n++] = (struct victim){ vparts[j]->cgid,
				(__u64)((double)vparts[j]->steal_be_ns * cp->inflicted_online_ns /
					be_by_cpu[cp->cpu]) };
	}
	qsort(scratch, n, sizeof(*scratch), cmp_victim_ns);
	for (i = 0; i < n; i = j) {
		__u64 ns = 0;

		for (j = i; j < n && scratch[j].cgid == scratch[i].cgid; j++)
			ns += scratch[j].be_steal_ns;
		if (ns)
			add_victim(s, scratch[i].cgid, ns);
	}
	return 0;
}

int suspects_rank(const struct window *w, const struct container_table *t, struct suspects *out)
{
	const struct cg_cpu_part **vparts = NULL;
	struct victim *scratch = NULL;
	size_t *vstart = NULL;
	__u64 *be_by_cpu = NULL;
	size_t i, nv = 0;
	__u32 ncpu = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < w->npc; i++)
		if (w->pc[i].cpu + 1 > ncpu)
			ncpu = w->pc[i].cpu + 1;
	out->v = calloc(w->n ? w->n : 1, sizeof(*out->v));
	be_by_cpu = calloc(ncpu + 1, sizeof(*be_by_cpu));
	vparts = calloc(w->npc ? w->npc : 1, sizeof(*vparts));
	vstart = calloc(ncpu + 2, sizeof(*vstart));
	if (!out->v || !be_by_cpu || !vparts || !vstart)
		goto out;
	for (i = 0; i < w->n; i++) {
		out->inflicted_online_ns += w->v[i].inflicted_online_ns;
		if (w->v[i].inflicted_online_ns && qos_of(t, w->v[i].cgid) == KC_BE)
			out->v[out->n++] = (struct suspect){ .cgid = w->v[i].cgid,
				.inflicted_online_ns = w->v[i].inflicted_online_ns };
	}
	for (i = 0; i < w->npc; i++) {
		enum koord_class q = qos_of(t, w->pc[i].cgid);

		if (q == KC_BE)
			be_by_cpu[w->pc[i].cpu] += w->pc[i].inflicted_online_ns;
		else if (KC_IS_ONLINE(q) && w->pc[i].steal_be_ns)
			vparts[nv++] = &w->pc[i];
	}
	qsort(vparts, nv, sizeof(*vparts), cmp_part_cpu);
	for (i = 0; i < nv; i++)
		vstart[vparts[i]->cpu + 1] = i + 1;
	for (i = 1; i <= ncpu; i++)	/* CPUs without victims start where the last one ended */
		if (vstart[i] < vstart[i - 1])
			vstart[i] = vstart[i - 1];
	vstart[ncpu + 1] = nv;
	qsort(out->v, out->n, sizeof(*out->v), cmp_suspect);
	/* a suspect has one part per CPU, so it meets each victim part at most once */
	scratch = calloc(nv ? nv : 1, sizeof(*scratch));
	if (!scratch)
		goto out;
	for (i = 0; i < out->n; i++) {
		struct suspect *s = &out->v[i];

		s->share = out->inflicted_online_ns ?
			(double)s->inflicted_online_ns / out->inflicted_online_ns : 0;
		if (i < SUSPECTS_WITH_VICTIMS)
			find_victims(w, s, be_by_cpu, vparts, vstart, ncpu, scratch);
	}
	err = 0;
out:
	free(scratch);
	free(vstart);
	free(vparts);
	free(be_by_cpu);
	if (err)
		suspects_free(out);
	return err;
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
