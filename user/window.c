// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"
#include "window.h"

struct cg_sample *sample_add(struct sample *s, __u64 cgid)
{
	struct cg_sample *v;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;

		v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	v = &s->v[s->n++];
	memset(v, 0, sizeof(*v));
	v->cgid = cgid;
	return v;
}

int cgid_cmp(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

void sample_sort(struct sample *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cgid_cmp);
}

const struct cg_sample *sample_find(const struct sample *s, __u64 cgid)
{
	if (!s->n)
		return NULL;
	return bsearch(&cgid, s->v, s->n, sizeof(*s->v), cgid_cmp);
}

/* Room for @n more cells in @s's pool. */
static int sample_reserve(struct sample *s, size_t n)
{
	return hist_cells_reserve(&s->cells, &s->cells_cap, s->ncells + n);
}

int sample_set_cells(struct sample *s, struct cg_sample *cs, const struct hist_cell *cells,
		     __u32 n)
{
	if (sample_reserve(s, n))
		return -ENOMEM;
	if (n)
		memcpy(s->cells + s->ncells, cells, n * sizeof(*cells));
	cs->hist_off = s->ncells;
	cs->nhist = n;
	s->ncells += n;
	return 0;
}

/* Buckets tested at once: most are empty, and one test (vectorised) skips them. */
#define HIST_STRIDE	8
_Static_assert(HIST_BUCKETS % HIST_STRIDE == 0, "histogram scanned in strides");

int sample_set_hist(struct sample *s, struct cg_sample *cs, const __u32 *buckets)
{
	struct hist_cell *out;
	unsigned int i, k;
	__u32 any, v;

	if (sample_reserve(s, HIST_BUCKETS))
		return -ENOMEM;
	out = s->cells + s->ncells;
	cs->hist_off = s->ncells;
	cs->nhist = 0;
	for (i = 0; i < HIST_BUCKETS; i += HIST_STRIDE) {
		any = 0;
		for (k = i; k < i + HIST_STRIDE; k++)
			any |= buckets[k];
		if (!any)
			continue;
		for (k = i; k < i + HIST_STRIDE; k++) {
			v = buckets[k];
			if (v)
				out[cs->nhist++] = (struct hist_cell){ k, v };
		}
	}
	s->ncells += cs->nhist;
	return 0;
}

int sample_set_bucket(struct sample *s, struct cg_sample *cs, unsigned int bucket, __u32 count)
{
	struct hist_cell *h;
	__u32 i;

	if (sample_reserve(s, cs->nhist + 1))
		return -ENOMEM;
	/* Only the pool's last histogram can grow: move @cs's there first. */
	if (cs->hist_off + cs->nhist != s->ncells) {
		memcpy(s->cells + s->ncells, s->cells + cs->hist_off, cs->nhist * sizeof(*h));
		cs->hist_off = s->ncells;
		s->ncells += cs->nhist;
	}
	h = s->cells + cs->hist_off;
	for (i = 0; i < cs->nhist && h[i].bucket < bucket; i++)
		;
	if (i < cs->nhist && h[i].bucket == bucket) {
		if (count) {
			h[i].count = count;
			return 0;
		}
		memmove(h + i, h + i + 1, (cs->nhist - i - 1) * sizeof(*h));
		cs->nhist--;
		s->ncells--;
		return 0;
	}
	if (!count)
		return 0;
	memmove(h + i + 1, h + i, (cs->nhist - i) * sizeof(*h));
	h[i] = (struct hist_cell){ bucket, count };
	cs->nhist++;
	s->ncells++;
	return 0;
}

void sample_free(struct sample *s)
{
	free(s->v);
	free(s->pc);
	free(s->cells);
	free(s->changed);
	memset(s, 0, sizeof(*s));
}

/* Counter increase; a counter that went backwards was reset (entry re-created). */
static __u64 delta(__u64 a, __u64 b)
{
	return b >= a ? b - a : b;
}

/*
 * The buckets that rose from @a to @b, appended to the pool; returns the
 * waits in them. Both lists are cumulative and sorted by bucket, a missing
 * bucket being 0: one merge. Equal lists (a container that did not wait)
 * are skipped with one compare.
 */
static __u64 diff_hist(const struct hist_cell *a, __u32 na, const struct hist_cell *b, __u32 nb,
		       struct window *w, __u32 *ncells)
{
	struct hist_cell *out = w->cells + w->ncells;
	__u32 i = 0, j = 0, bucket, d;
	__u64 total = 0;

	*ncells = 0;
	if (na == nb && (!na || !memcmp(a, b, na * sizeof(*a))))
		return 0;
	while (i < na || j < nb) {
		if (j == nb || (i < na && a[i].bucket < b[j].bucket)) {
			bucket = a[i].bucket;
			d = 0 - a[i++].count;	/* mod 2^32, as BPF counts */
		} else if (i == na || b[j].bucket < a[i].bucket) {
			bucket = b[j].bucket;
			d = b[j++].count;
		} else {
			bucket = b[j].bucket;
			d = b[j++].count - a[i++].count;
		}
		if (!d)
			continue;
		out[(*ncells)++] = (struct hist_cell){ bucket, d };
		total += d;
	}
	w->ncells += *ncells;
	return total;
}

static void diff_one(const struct sample *sa, const struct cg_sample *a, const struct sample *sb,
		     const struct cg_sample *b, struct window *win, struct cg_window *w)
{
	static const struct cg_sample zero;
	unsigned int i;
	__u32 nhist;
	__u64 n;

	/* Fewer waits than before: the entry was re-created, count from zero. */
	if (!a || b->s.wait_count < a->s.wait_count)
		a = &zero;
	w->cgid = b->cgid;
	/*
	 * A sample adds each CPU's running stretch so far, which a switch
	 * between reading the maps and the CPU states can leave out: a dip,
	 * caught up by the next window, never a reset.
	 */
	w->cpu_ns = b->s.cpu_ns > a->s.cpu_ns ? b->s.cpu_ns - a->s.cpu_ns : 0;
	w->wait_count = delta(a->s.wait_count, b->s.wait_count);
	w->wait_ns = delta(a->s.wait_ns, b->s.wait_ns);
	for (i = 0; i < ST_NR; i++)
		w->steal_ns[i] = delta(a->s.steal_ns[i], b->s.steal_ns[i]);
	w->inflicted_online_ns = delta(a->s.inflicted_online_ns, b->s.inflicted_online_ns);
	w->inflicted_all_ns = delta(a->s.inflicted_all_ns, b->s.inflicted_all_ns);
	for (i = 0; i < PMU_NR; i++)
		w->pmu[i] = delta(a->s.pmu[i], b->s.pmu[i]);
	n = diff_hist(sample_hist(sa, a), a->nhist, sample_hist(sb, b), b->nhist, win, &nhist);
	w->nhist = nhist;	/* hist is set once the pool stops moving */
	w->wait_max = w->wait_count ? b->epoch_max : 0;
	/* The histogram is read a moment after the counters: rank within it. */
	w->p50_ns = hist_cells_quantile(win->cells + win->ncells - nhist, nhist, n, 0.50,
					w->wait_max);
	w->p99_ns = hist_cells_quantile(win->cells + win->ncells - nhist, nhist, n, 0.99,
					w->wait_max);
	w->p999_ns = hist_cells_quantile(win->cells + win->ncells - nhist, nhist, n, 0.999,
					 w->wait_max);
}

int cg_cpu_part_cmp(const void *x, const void *y)
{
	const struct cg_cpu_part *a = x, *b = y;

	if (a->cgid != b->cgid)
		return a->cgid < b->cgid ? -1 : 1;
	return a->cpu < b->cpu ? -1 : a->cpu > b->cpu;
}

/* The rise from @pa (NULL: none before) to @pb in @d; true when nothing rose. */
static bool diff_part(const struct cg_cpu_part *pa, const struct cg_cpu_part *pb,
		      struct cg_cpu_part *d)
{
	*d = *pb;
	if (pa) {
		d->steal_be_ns = delta(pa->steal_be_ns, pb->steal_be_ns);
		d->inflicted_online_ns = delta(pa->inflicted_online_ns, pb->inflicted_online_ns);
	}
	return !d->steal_be_ns && !d->inflicted_online_ns;
}

size_t cg_cpu_parts_of(const struct cg_cpu_part *pc, size_t n, __u64 cgid, size_t *first)
{
	size_t lo = 0, hi = n, end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pc[mid].cgid < cgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < n && pc[end].cgid == cgid; end++)
		;
	*first = lo;
	return end;
}

/*
 * The parts that rose from @a to @b, of the containers in @w (those that
 * changed): each one's parts in @b against its parts in @a, by CPU.
 */
static int diff_parts(const struct sample *a, const struct sample *b, struct window *w)
{
	size_t i, k, ib, eb, ia, ea, cap = 0;
	const struct cg_cpu_part *pa, *pb;
	struct cg_cpu_part d;
	void *v;

	for (k = 0; k < w->n && b->npc; k++) {
		eb = cg_cpu_parts_of(b->pc, b->npc, w->v[k].cgid, &ib);
		ea = cg_cpu_parts_of(a->pc, a->npc, w->v[k].cgid, &ia);
		for (i = ib; i < eb; i++) {
			pb = &b->pc[i];
			while (ia < ea && a->pc[ia].cpu < pb->cpu)
				ia++;
			pa = ia < ea && a->pc[ia].cpu == pb->cpu ? &a->pc[ia] : NULL;
			if (diff_part(pa, pb, &d))
				continue;	/* no pairing here in this window */
			if (w->npc == cap) {
				cap = cap ? cap * 2 : 64;
				v = realloc(w->pc, cap * sizeof(*w->pc));
				if (!v)
					return -ENOMEM;
				w->pc = v;
			}
			w->pc[w->npc++] = d;
		}
	}
	return 0;
}

int window_compute(const struct sample *a, const struct sample *b, struct window *w)
{
	size_t i, j = 0, cap = 0, off = 0;
	const struct cg_sample *pa, *pb;
	bool base = b->prev_gen && b->prev_gen == a->gen;
	bool aligned = base && b->same_set && a->n == b->n;

	memset(w, 0, sizeof(*w));
	w->dur_ns = b->mono_ns - a->mono_ns;
	for (i = 0; i < CNT_NR; i++)
		w->counters[i] = delta(a->counters[i], b->counters[i]);
	w->running_unread = b->running_unread;
	if (!b->n)
		return 0;
	/* diff_one() sets every field */
	w->v = malloc((aligned && b->nchanged < b->n ? b->nchanged + 1 : b->n) * sizeof(*w->v));
	if (!w->v)
		return -ENOMEM;
	/* both sorted by container: one merge, no lookups; the same set: only what changed */
	for (i = 0; i < (aligned ? b->nchanged : b->n); i++) {
		if (aligned) {
			pa = &a->v[b->changed[i]];
			pb = &b->v[b->changed[i]];
		} else {
			pb = &b->v[i];
			while (j < a->n && a->v[j].cgid < pb->cgid)
				j++;
			pa = j < a->n && a->v[j].cgid == pb->cgid ? &a->v[j] : NULL;
			if (base && pa && pb->same)
				continue;
		}
		/* room for one more container's histogram */
		if (hist_cells_reserve(&w->cells, &cap, w->ncells + HIST_BUCKETS)) {
			window_free(w);
			return -ENOMEM;
		}
		diff_one(a, pa, b, pb, w, &w->v[w->n]);
		w->v[w->n++].pmu_source = b->pmu_source;
	}
	for (i = 0; i < w->n; i++) {
		w->v[i].hist = w->v[i].nhist ? w->cells + off : NULL;
		off += w->v[i].nhist;
	}
	return diff_parts(a, b, w);
}

const struct cg_window *window_find(const struct window *w, __u64 cgid)
{
	if (!w->n)
		return NULL;
	return bsearch(&cgid, w->v, w->n, sizeof(*w->v), cgid_cmp);
}

__u32 window_hist_count(const struct cg_window *cw, unsigned int bucket)
{
	__u32 i;

	for (i = 0; i < cw->nhist; i++)
		if (cw->hist[i].bucket == bucket)
			return cw->hist[i].count;
	return 0;
}

__u64 window_hist_total(const struct cg_window *cw)
{
	__u64 n = 0;
	__u32 i;

	for (i = 0; i < cw->nhist; i++)
		n += cw->hist[i].count;
	return n;
}

void window_free(struct window *w)
{
	free(w->v);
	free(w->cells);
	free(w->pc);
	memset(w, 0, sizeof(*w));
}

__u64 cg_window_steal_others(const struct cg_window *cw)
{
	__u64 n = 0;
	unsigned int k;

	for (k = 0; k < KC_NR; k++)
		if (k != KC_IDLE)
			n += cw->steal_ns[k];
	return n;
}
