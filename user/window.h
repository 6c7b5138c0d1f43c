/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Samples of the monotonic BPF counters, and windows computed by difference. */
#ifndef KOORD_WINDOW_H
#define KOORD_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "../bpf/koord.h"
#include "hist.h"

/* qsort/bsearch order of cgids, or of structs that begin with one. */
int cgid_cmp(const void *a, const void *b);

/* One container's counters at one moment, summed over CPUs. */
struct cg_sample {
	__u64 cgid;
	struct cg_cpu_stats s;	/* wait_max: max over CPUs; own_*: not meaningful */
	__u64 epoch_max;	/* longest wait since the previous sample */
	/*
	 * The cumulative histogram's buckets with a count, by bucket: nhist
	 * cells from hist_off in the sample's pool (an offset, as the pool
	 * moves while it grows). Read them with sample_hist().
	 */
	__u32 hist_off, nhist;
	bool same;		/* copied from the collector's last sample: nothing changed */
};

/* What the hardware-counter slots hold. */
enum pmu_source { PMU_SOURCE_OFF, PMU_SOURCE_AUTO, PMU_SOURCE_HARDWARE, PMU_SOURCE_SOFTWARE };

/* One container on one CPU: what pairs culprits with victims. */
struct cg_cpu_part {
	__u64 cgid;
	__u32 cpu;
	__u64 steal_be_ns;		/* BE's part of the container's waits there */
	__u64 inflicted_online_ns;	/* online waiting it caused there */
};

/* Everything read at one moment; v sorted by cgid, pc by (cgid, cpu). */
struct sample {
	__u64 mono_ns;		/* CLOCK_MONOTONIC just before the maps were read ... */
	__u64 mono_end_ns;	/* ... and just after */
	enum pmu_source pmu_source;	/* PMU_SOURCE_OFF: no counters */
	__u64 counters[CNT_NR];
	__u32 running_unread;	/* CPUs whose running stretch was left to the next sample */
	__u32 read;		/* containers read from the maps; the others were as at the last sample */
	/*
	 * The collector's count of its samples (0: not the collector's), and
	 * the one before, which the entries flagged same are copied from;
	 * same_set: that one held the same containers in the same order.
	 */
	__u64 gen, prev_gen;
	bool same_set;
	size_t *changed;	/* the collector's: indices of the entries not flagged same */
	size_t nchanged, changed_cap;
	struct cg_sample *v;
	size_t n, cap;
	struct cg_cpu_part *pc;
	size_t npc;
	struct hist_cell *cells;	/* the containers' histograms, kept across reuses */
	size_t ncells, cells_cap;
};

/* One container over a window [a, b]. */
struct cg_window {
	__u64 cgid;
	__u64 cpu_ns;
	__u64 wait_count, wait_ns, wait_max;
	__u64 steal_ns[ST_NR];
	__u64 inflicted_online_ns, inflicted_all_ns;
	__u64 p50_ns, p99_ns, p999_ns;
	enum pmu_source pmu_source;	/* PMU_SOURCE_OFF: pmu[] means nothing */
	__u64 pmu[PMU_NR];
	/*
	 * The buckets whose count rose, by bucket (in the window's pool);
	 * nhist 0 and hist NULL when none did: an idle container's window
	 * costs no histogram.
	 */
	const struct hist_cell *hist;
	__u32 nhist;
};

struct window {
	__u64 dur_ns;
	__u64 counters[CNT_NR];
	__u32 running_unread;	/* at its end, as in struct sample */
	struct cg_window *v;
	size_t n;
	struct hist_cell *cells;	/* every container's hist, one after another */
	size_t ncells;
	struct cg_cpu_part *pc;	/* increases per container and CPU, sorted; none of 0 */
	size_t npc;
};

/* Order of cg_cpu_part: by container, then CPU (for qsort/bsearch). */
int cg_cpu_part_cmp(const void *a, const void *b);
/* The parts of @cgid in @pc (@n, in that order): [*first, return). */
size_t cg_cpu_parts_of(const struct cg_cpu_part *pc, size_t n, __u64 cgid, size_t *first);

struct cg_sample *sample_add(struct sample *s, __u64 cgid);
void sample_sort(struct sample *s);
const struct cg_sample *sample_find(const struct sample *s, __u64 cgid);
/* @cs's histogram in @s: cs->nhist cells (NULL when none). */
static inline const struct hist_cell *sample_hist(const struct sample *s,
						  const struct cg_sample *cs)
{
	return cs->nhist ? s->cells + cs->hist_off : NULL;
}
/* Set @cs's histogram to the buckets with a count in @buckets (HIST_BUCKETS); 0 or -ENOMEM. */
int sample_set_hist(struct sample *s, struct cg_sample *cs, const __u32 *buckets);
/* Set @cs's histogram to a copy of @n cells (by bucket, none 0; not @s's); 0 or -ENOMEM. */
int sample_set_cells(struct sample *s, struct cg_sample *cs, const struct hist_cell *cells,
		     __u32 n);
/* Set one bucket of @cs's histogram (0 drops it); 0 or -ENOMEM. */
int sample_set_bucket(struct sample *s, struct cg_sample *cs, unsigned int bucket, __u32 count);
void sample_free(struct sample *s);

/*
 * Window from @a to @b: for every container in @b, its counters' increase
 * since @a (from zero when it is new in @b); containers gone by @b are left
 * out, and so are those @b's collector copied from @a (flagged same, when
 * @a is the collector's sample before @b): their increase is 0. With the
 * same containers as @a, only @b's changed list is looked at. The window's
 * parts are those that rose, of the containers it lists. The max is @b's
 * epoch max when @b was sampled right after @a. Returns 0 or -ENOMEM.
 */
int window_compute(const struct sample *a, const struct sample *b, struct window *w);
const struct cg_window *window_find(const struct window *w, __u64 cgid);
/* The count of @bucket in @cw's window (0 when it has none). */
__u32 window_hist_count(const struct cg_window *cw, unsigned int bucket);
/* The waits counted in @cw's histogram (wait_count may be ahead by a wait in flight). */
__u64 window_hist_total(const struct cg_window *cw);
void window_free(struct window *w);

/* Waits lost to other containers: every class's part but idle, self and throttled. */
__u64 cg_window_steal_others(const struct cg_window *cw);

#endif
