// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Histogram bucketing and percentiles, and window differencing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hist.h"
#include "window.h"

static void bucket_of_known_values(void **state)
{
	assert_int_equal(hist_bucket(0), 0);
	assert_int_equal(hist_bucket(15), 15);
	assert_int_equal(hist_bucket(16), 16);		/* first log-linear bucket */
	assert_int_equal(hist_bucket(31), 31);
	assert_int_equal(hist_bucket(32), 32);		/* 2^5: width 2 from here */
	assert_int_equal(hist_bucket(33), 32);
	assert_int_equal(hist_bucket(1000), 6 * 16 + 15);	/* 2^9 + 15*32 = 992 */
	assert_int_equal(hist_bucket(1ull << 36), HIST_BUCKETS - 16);
	assert_int_equal(hist_bucket(~0ull), HIST_BUCKETS - 1);
}

/* Every value falls inside its bucket's bounds, and buckets are at most 6.25% wide. */
static void bounds_contain_values(void **state)
{
	unsigned long long v;
	unsigned int b;

	for (v = 0; v < (1ull << 37); v = v < 4096 ? v + 1 : v + v / 1000 + 7) {
		b = hist_bucket(v);
		assert_true(b < HIST_BUCKETS);
		assert_true(hist_lower(b) <= v);
		if (b < HIST_BUCKETS - 1)
			assert_true(v < hist_upper(b));
	}
	for (b = HIST_SUB; b < HIST_BUCKETS - 1; b++) {
		assert_true(hist_upper(b) > hist_lower(b));
		assert_true((hist_upper(b) - hist_lower(b)) * 16 <= hist_lower(b));
		assert_int_equal(hist_bucket(hist_lower(b)), b);
		assert_int_equal(hist_bucket(hist_upper(b) - 1), b);
	}
}

static void quantiles_exact_and_midpoint(void **state)
{
	static __u32 h[HIST_BUCKETS];

	memset(h, 0, sizeof(h));
	assert_int_equal(hist_quantile(h, 0, 0.99, 0), 0);
	/* 100 values: 90 of 5 ns, 10 of ~1000 ns. */
	h[5] = 90;
	h[hist_bucket(1000)] = 10;
	assert_int_equal(hist_quantile(h, 100, 0.50, 0), 5);
	assert_int_equal(hist_quantile(h, 100, 0.90, 0), 5);
	/* rank 91 and up: the midpoint of [992, 1024) */
	assert_int_equal(hist_quantile(h, 100, 0.91, 0), 1008);
	assert_int_equal(hist_quantile(h, 100, 0.99, 0), 1008);
	/* never above the exact max */
	assert_int_equal(hist_quantile(h, 100, 0.99, 1000), 1000);
}

/* The midpoint estimate is within 3.2% of any value in the bucket. */
static void quantile_relative_error(void **state)
{
	static __u32 h[HIST_BUCKETS];
	unsigned long long v;
	double est;

	for (v = 100; v < 10000000000ull; v = v * 11 / 10 + 1) {
		memset(h, 0, sizeof(h));
		h[hist_bucket(v)] = 1;
		est = (double)hist_quantile(h, 1, 0.5, 0);
		assert_true(est / v < 1.032 && est / v > 0.968);
	}
}

static void add(struct sample *s, __u64 id, __u64 cpu, __u64 waits, __u64 wait_ns,
		unsigned long long each)
{
	struct cg_sample *c = sample_add(s, id);

	c->s.cpu_ns = cpu;
	c->s.wait_count = waits;
	c->s.wait_ns = wait_ns;
	c->s.steal_ns[KC_BE] = wait_ns / 2;
	assert_int_equal(sample_set_bucket(s, c, hist_bucket(each), waits), 0);
	c->epoch_max = each;
}

static void window_differences(void **state)
{
	struct sample a = {}, b = {};
	struct window w;
	const struct cg_window *cw;

	a.mono_ns = 1000;
	b.mono_ns = 3000;
	a.counters[CNT_SLOTS_FULL] = 2;
	b.counters[CNT_SLOTS_FULL] = 5;
	add(&a, 7, 100, 10, 1000, 100);
	add(&a, 9, 50, 1, 1, 1);		/* gone by b */
	add(&b, 3, 30, 3, 300, 100);		/* new in b */
	add(&b, 7, 400, 30, 5000, 100);
	sample_sort(&a);
	sample_sort(&b);
	assert_int_equal(window_compute(&a, &b, &w), 0);
	assert_int_equal(w.dur_ns, 2000);
	assert_int_equal(w.counters[CNT_SLOTS_FULL], 3);
	assert_int_equal(w.n, 2);
	assert_null(window_find(&w, 9));
	cw = window_find(&w, 7);
	assert_non_null(cw);
	assert_int_equal(cw->cpu_ns, 300);
	assert_int_equal(cw->wait_count, 20);
	assert_int_equal(cw->wait_ns, 4000);
	assert_int_equal(cw->steal_ns[KC_BE], 2000);
	assert_int_equal(window_hist_count(cw, hist_bucket(100)), 20);
	assert_int_equal(cw->nhist, 1);	/* only the bucket that rose */
	assert_int_equal(window_hist_total(cw), 20);
	assert_int_equal(cw->p99_ns, 100);	/* clamped to the window's max */
	cw = window_find(&w, 3);
	assert_non_null(cw);
	assert_int_equal(cw->wait_count, 3);
	assert_int_equal(cw->cpu_ns, 30);
	window_free(&w);

	/* Fewer waits than before: the entry was re-created, counted from zero. */
	b.v[1].s.wait_count = 4;
	b.v[1].s.cpu_ns = 40;
	assert_int_equal(window_compute(&a, &b, &w), 0);
	cw = window_find(&w, 7);
	assert_int_equal(cw->wait_count, 4);
	assert_int_equal(cw->cpu_ns, 40);
	window_free(&w);

	/* CPU time alone dipping (a running stretch left out) is 0, not a reset. */
	b.v[1].s.wait_count = 30;
	b.v[1].s.cpu_ns = 90;
	assert_int_equal(window_compute(&a, &b, &w), 0);
	cw = window_find(&w, 7);
	assert_int_equal(cw->wait_count, 20);
	assert_int_equal(cw->cpu_ns, 0);
	window_free(&w);
	sample_free(&a);
	sample_free(&b);
}

/* BPF histogram buckets are u32 and wrap: differences are taken mod 2^32. */
static void window_hist_wraps(void **state)
{
	struct sample a = {}, b = {};
	struct window w;

	add(&a, 1, 0, 10, 10, 50);
	add(&b, 1, 0, 20, 20, 50);
	sample_set_bucket(&a, &a.v[0], hist_bucket(50), 0xfffffffb);
	sample_set_bucket(&b, &b.v[0], hist_bucket(50), 5);
	assert_int_equal(window_compute(&a, &b, &w), 0);
	assert_int_equal(window_hist_count(&w.v[0], hist_bucket(50)), 10);
	window_free(&w);
	sample_free(&a);
	sample_free(&b);
}

/* The quantile over the buckets with a count agrees with the one over all buckets. */
static void cells_quantile_agrees(void **state)
{
	static __u32 h[HIST_BUCKETS];
	struct hist_cell cells[HIST_BUCKETS];
	static const double qs[] = { 0.01, 0.5, 0.9, 0.99, 0.999, 1 };
	unsigned int i, round, q;
	size_t n;
	__u64 total;

	assert_int_equal(hist_cells_quantile(NULL, 0, 0, 0.5, 0), 0);
	for (round = 1; round < 50; round++) {
		memset(h, 0, sizeof(h));
		total = n = 0;
		for (i = 0; i < HIST_BUCKETS; i++) {
			h[i] = (i * 7919u + round * 104729u) % (round + 37) < 3 ? i % 9 + round : 0;
			if (h[i]) {
				cells[n++] = (struct hist_cell){ i, h[i] };
				total += h[i];
			}
		}
		assert_true(n > 0);
		for (q = 0; q < sizeof(qs) / sizeof(qs[0]); q++) {
			assert_int_equal(hist_cells_quantile(cells, n, total, qs[q], 0),
					 hist_quantile(h, total, qs[q], 0));
			assert_int_equal(hist_cells_quantile(cells, n, total, qs[q], 777),
					 hist_quantile(h, total, qs[q], 777));
		}
	}
}

/*
 * A container that did not wait in the window carries no histogram; those
 * that did carry only their risen buckets, in order; a re-created entry
 * counts from zero; and containers are matched by id across samples of
 * different membership.
 */
static void window_hist_sparse(void **state)
{
	struct sample a = {}, b = {};
	const struct cg_window *cw;
	struct window w;
	unsigned int i;

	add(&a, 2, 0, 10, 10, 50);
	add(&a, 4, 0, 10, 10, 50);
	add(&a, 6, 0, 10, 10, 50);
	add(&a, 8, 0, 500, 10, 50);
	add(&b, 1, 0, 3, 10, 70);		/* new */
	add(&b, 4, 0, 10, 10, 50);		/* idle */
	add(&b, 6, 0, 16, 10, 50);		/* waited: two buckets rose */
	add(&b, 8, 0, 7, 10, 900);		/* re-created: fewer waits */
	sample_set_bucket(&b, &b.v[2], hist_bucket(50), 10);	/* unchanged there */
	sample_set_bucket(&b, &b.v[2], hist_bucket(3000), 2);
	sample_set_bucket(&b, &b.v[2], hist_bucket(20), 4);
	sample_sort(&a);
	sample_sort(&b);
	assert_int_equal(window_compute(&a, &b, &w), 0);
	assert_int_equal(w.n, 4);
	cw = window_find(&w, 4);
	assert_int_equal(cw->nhist, 0);
	assert_null(cw->hist);
	assert_int_equal(cw->p99_ns, 0);
	cw = window_find(&w, 6);
	assert_int_equal(cw->wait_count, 6);
	assert_int_equal(cw->nhist, 2);
	assert_int_equal(cw->hist[0].bucket, hist_bucket(20));
	assert_int_equal(cw->hist[0].count, 4);
	assert_int_equal(cw->hist[1].bucket, hist_bucket(3000));
	assert_int_equal(window_hist_total(cw), 6);
	assert_int_equal(window_hist_count(cw, hist_bucket(50)), 0);
	cw = window_find(&w, 1);
	assert_int_equal(window_hist_count(cw, hist_bucket(70)), 3);
	cw = window_find(&w, 8);
	assert_int_equal(cw->wait_count, 7);
	assert_int_equal(window_hist_count(cw, hist_bucket(900)), 7);
	/* the pool holds exactly the cells, in the windows' order */
	assert_int_equal(w.ncells, 4);
	for (i = 0; i + 1 < w.n; i++)
		if (w.v[i].nhist && w.v[i + 1].nhist)
			assert_ptr_equal(w.v[i].hist + w.v[i].nhist, w.v[i + 1].hist);
	window_free(&w);
	sample_free(&a);
	sample_free(&b);
}

/* @cs's whole histogram as the pool holds it: strictly by bucket, no zeros, matching @dense. */
static void check_sample_hist(const struct sample *s, const struct cg_sample *cs,
			      const __u32 *dense)
{
	const struct hist_cell *h = sample_hist(s, cs);
	unsigned int i, k = 0;

	for (i = 0; i < HIST_BUCKETS; i++) {
		if (!dense[i])
			continue;
		assert_true(k < cs->nhist);
		assert_int_equal(h[k].bucket, i);
		assert_int_equal(h[k].count, dense[i]);
		k++;
	}
	assert_int_equal(k, cs->nhist);
}

/* Setting a bucket keeps the cells sorted, drops zeros, and leaves other containers alone. */
static void sample_buckets_set(void **state)
{
	static __u32 x[HIST_BUCKETS], y[HIST_BUCKETS];
	struct sample s = {};
	struct cg_sample *a, *b;

	x[3] = 7;
	x[100] = 1;
	x[HIST_BUCKETS - 1] = 2;
	y[0] = 5;
	a = sample_add(&s, 1);
	b = sample_add(&s, 2);
	a = &s.v[0];
	assert_int_equal(sample_set_hist(&s, a, x), 0);
	assert_int_equal(sample_set_hist(&s, b, y), 0);
	check_sample_hist(&s, a, x);
	/* a's cells are not the pool's last: they move, b's stay */
	x[50] = 9;
	assert_int_equal(sample_set_bucket(&s, a, 50, 9), 0);
	x[3] = 0;
	assert_int_equal(sample_set_bucket(&s, a, 3, 0), 0);
	x[0] = 1;
	assert_int_equal(sample_set_bucket(&s, a, 0, 1), 0);
	x[HIST_BUCKETS - 1] = 0xffffffff;
	assert_int_equal(sample_set_bucket(&s, a, HIST_BUCKETS - 1, 0xffffffff), 0);
	assert_int_equal(sample_set_bucket(&s, a, 200, 0), 0);	/* absent: nothing */
	check_sample_hist(&s, a, x);
	check_sample_hist(&s, b, y);
	/* a reused sample keeps its pool */
	s.n = s.ncells = 0;
	b = sample_add(&s, 3);
	assert_null(sample_hist(&s, b));
	assert_int_equal(sample_set_hist(&s, b, y), 0);
	check_sample_hist(&s, b, y);
	/* cells copied from elsewhere, as the collector's last read */
	x[7] = 3;
	a = sample_add(&s, 4);
	assert_int_equal(sample_set_cells(&s, a, (struct hist_cell[]){ { 0, 1 }, { 7, 3 },
		{ 50, 9 }, { 100, 1 }, { HIST_BUCKETS - 1, 0xffffffff } }, 5), 0);
	check_sample_hist(&s, a, x);
	check_sample_hist(&s, &s.v[0], y);
	sample_free(&s);
}

/*
 * The sparse difference agrees bucket by bucket with the dense one, mod
 * 2^32: buckets in one list only (new, or wrapped to exactly 0), equal
 * ones left out, wraps; and a re-created entry counts from zero.
 */
static void window_hist_merge(void **state)
{
	static __u32 x[HIST_BUCKETS], y[HIST_BUCKETS];
	unsigned int round, i;
	struct cg_sample *cs;
	struct window w;
	__u64 total;
	__u32 d, n;

	for (round = 0; round < 64; round++) {
		struct sample a = {}, b = {};
		int recreated = round % 8 == 7;

		for (i = 0; i < HIST_BUCKETS; i++) {
			switch ((i * 2654435761u + round * 40503u) % 7) {
			case 0:	x[i] = 0; y[i] = 0; break;
			case 1:	x[i] = 0; y[i] = i + round + 1; break;		/* new */
			case 2:	x[i] = i + 1; y[i] = x[i]; break;		/* unchanged */
			case 3:	x[i] = 0xffffffff - i % 3; y[i] = 0; break;	/* wrapped to 0 */
			case 4:	x[i] = 0xfffffff0u; y[i] = round + i % 5; break;	/* wrapped */
			case 5:	x[i] = round + 1; y[i] = x[i] + i; break;
			default: x[i] = 0; y[i] = 0; break;
			}
		}
		add(&a, 1, 0, 10, 10, 50);	/* a neighbour, so the pools' offsets differ */
		add(&b, 1, 0, 10, 10, 50);
		cs = sample_add(&a, 2);
		cs->s.wait_count = 1000;
		assert_int_equal(sample_set_hist(&a, cs, x), 0);
		cs = sample_add(&b, 2);
		cs->s.wait_count = recreated ? 999 : 2000;
		assert_int_equal(sample_set_hist(&b, cs, y), 0);
		if (round & 1)	/* the same histograms, swapped around in b's pool */
			assert_int_equal(sample_set_bucket(&b, &b.v[0], hist_bucket(50), 10), 0);
		assert_int_equal(window_compute(&a, &b, &w), 0);
		assert_int_equal(window_find(&w, 1)->nhist, 0);
		total = n = 0;
		for (i = 0; i < HIST_BUCKETS; i++) {
			d = recreated ? y[i] : y[i] - x[i];
			assert_int_equal(window_hist_count(window_find(&w, 2), i), d);
			total += d;
			n += !!d;
		}
		assert_int_equal(window_find(&w, 2)->nhist, n);
		assert_int_equal(window_hist_total(window_find(&w, 2)), total);
		for (i = 1; i < n; i++)
			assert_true(window_find(&w, 2)->hist[i - 1].bucket <
				    window_find(&w, 2)->hist[i].bucket);
		window_free(&w);
		sample_free(&a);
		sample_free(&b);
	}
}

/* @s's parts are @n of @pc (not its own: unset before sample_free). */
static void with_parts(struct sample *s, struct cg_cpu_part *pc, size_t n)
{
	s->pc = pc;
	s->npc = n;
}

/* Free @a and @b, whose parts with_parts() lent them. */
static void free_samples(struct sample *a, struct sample *b)
{
	a->pc = b->pc = NULL;
	sample_free(a);
	sample_free(b);
}

/* A window's parts are the ones that rose: pairing reads nothing else. */
static void window_parts_rose(void **state)
{
	struct cg_cpu_part pa[] = {
		{ .cgid = 1, .cpu = 0, .steal_be_ns = 5, .inflicted_online_ns = 0 },
		{ .cgid = 1, .cpu = 1, .steal_be_ns = 7, .inflicted_online_ns = 0 },
		{ .cgid = 2, .cpu = 0, .steal_be_ns = 0, .inflicted_online_ns = 9 },
	};
	struct cg_cpu_part pb[] = {
		{ .cgid = 1, .cpu = 0, .steal_be_ns = 5, .inflicted_online_ns = 0 },	/* the same */
		{ .cgid = 1, .cpu = 1, .steal_be_ns = 10, .inflicted_online_ns = 0 },
		{ .cgid = 2, .cpu = 0, .steal_be_ns = 0, .inflicted_online_ns = 9 },	/* the same */
		{ .cgid = 3, .cpu = 1, .steal_be_ns = 0, .inflicted_online_ns = 4 },	/* new */
	};
	struct sample a = { .mono_ns = 0 }, b = { .mono_ns = 1000 };
	struct window w;
	__u64 id;

	for (id = 1; id <= 3; id++) {
		add(&a, id, 10, 1, 100, 100);
		add(&b, id, 20, 2, 200, 100);
	}
	with_parts(&a, pa, 3);
	with_parts(&b, pb, 4);
	assert_int_equal(window_compute(&a, &b, &w), 0);
	assert_int_equal(w.npc, 2);
	assert_int_equal(w.pc[0].cgid, 1);
	assert_int_equal(w.pc[0].cpu, 1);
	assert_int_equal(w.pc[0].steal_be_ns, 3);
	assert_int_equal(w.pc[1].cgid, 3);
	assert_int_equal(w.pc[1].inflicted_online_ns, 4);
	window_free(&w);
	free_samples(&a, &b);
}

/*
 * A sample the collector built on the last one flags the containers it
 * copied from it: their increase is 0, so the window leaves them out, parts
 * and all, without comparing them. The flags hold only against that sample.
 */
static void window_skips_same(void **state)
{
	struct cg_cpu_part pa[] = {
		{ .cgid = 1, .cpu = 0, .steal_be_ns = 5 },
		{ .cgid = 2, .cpu = 0, .steal_be_ns = 5 },
	};
	/* 1's part "rose": only a comparison would see it, and a flagged one is not compared */
	struct cg_cpu_part pb[] = {
		{ .cgid = 1, .cpu = 0, .steal_be_ns = 8 },
		{ .cgid = 2, .cpu = 0, .steal_be_ns = 9 },
	};
	struct sample a = { .mono_ns = 0, .gen = 7 }, b = { .mono_ns = 1000, .gen = 8 };
	struct window w;

	add(&a, 1, 10, 1, 100, 100);
	add(&a, 2, 10, 1, 100, 100);
	add(&b, 1, 10, 1, 100, 100);
	b.v[0].same = true;
	add(&b, 2, 20, 3, 300, 100);
	add(&b, 3, 5, 0, 0, 100);	/* new */
	with_parts(&a, pa, 2);
	with_parts(&b, pb, 2);
	b.prev_gen = 7;
	assert_int_equal(window_compute(&a, &b, &w), 0);
	assert_int_equal(w.n, 2);
	assert_int_equal(w.v[0].cgid, 2);
	assert_int_equal(w.v[0].wait_count, 2);
	assert_int_equal(w.v[1].cgid, 3);
	assert_int_equal(w.npc, 1);
	assert_int_equal(w.pc[0].cgid, 2);
	assert_int_equal(w.pc[0].steal_be_ns, 4);
	window_free(&w);
	/* not built on @a (another sample between): every container is compared */
	b.prev_gen = 6;
	assert_int_equal(window_compute(&a, &b, &w), 0);
	assert_int_equal(w.n, 3);
	assert_int_equal(w.v[0].cgid, 1);
	assert_int_equal(w.v[0].wait_count, 0);
	assert_int_equal(w.npc, 2);
	assert_int_equal(w.pc[0].steal_be_ns, 3);
	window_free(&w);
	/* nor when @a is not the collector's (gen 0) */
	a.gen = b.prev_gen = 0;
	assert_int_equal(window_compute(&a, &b, &w), 0);
	assert_int_equal(w.n, 3);
	window_free(&w);
	/* the same containers as @a (3 gone): only the one listed changed is looked at */
	a.gen = b.prev_gen = 7;
	b.n = 2;
	b.same_set = true;
	b.changed = malloc(sizeof(*b.changed));
	assert_non_null(b.changed);
	b.changed[0] = 1;
	b.nchanged = b.changed_cap = 1;
	assert_int_equal(window_compute(&a, &b, &w), 0);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.v[0].cgid, 2);
	assert_int_equal(w.v[0].wait_count, 2);
	assert_int_equal(w.v[0].cpu_ns, 10);
	window_free(&w);
	free_samples(&a, &b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bucket_of_known_values),
		cmocka_unit_test(bounds_contain_values),
		cmocka_unit_test(quantiles_exact_and_midpoint),
		cmocka_unit_test(quantile_relative_error),
		cmocka_unit_test(window_differences),
		cmocka_unit_test(window_hist_wraps),
		cmocka_unit_test(cells_quantile_agrees),
		cmocka_unit_test(window_hist_sparse),
		cmocka_unit_test(sample_buckets_set),
		cmocka_unit_test(window_hist_merge),
		cmocka_unit_test(window_parts_rose),
		cmocka_unit_test(window_skips_same),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
