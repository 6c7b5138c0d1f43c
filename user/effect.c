// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "classify.h"
#include "effect.h"
#include "hist.h"

void waits_add(struct waits *acc, const struct cg_window *cw, __u64 dur_ns)
{
	__u32 i;

	for (i = 0; i < cw->nhist; i++)
		acc->hist[cw->hist[i].bucket] += cw->hist[i].count;
	acc->count += cw->wait_count;
	acc->sum_ns += cw->wait_ns;
	if (cw->wait_max > acc->max_ns)
		acc->max_ns = cw->wait_max;
	for (i = 0; i < ST_NR; i++)
		acc->steal_ns[i] += cw->steal_ns[i];
	acc->span_ns += dur_ns;
}

void waits_merge(struct waits *acc, const struct waits *x)
{
	unsigned int i;

	for (i = 0; i < HIST_BUCKETS; i++)
		acc->hist[i] += x->hist[i];
	acc->count += x->count;
	acc->sum_ns += x->sum_ns;
	if (x->max_ns > acc->max_ns)
		acc->max_ns = x->max_ns;
	for (i = 0; i < ST_NR; i++)
		acc->steal_ns[i] += x->steal_ns[i];
	acc->span_ns += x->span_ns;
}

__u64 waits_quantile(const struct waits *x, double q)
{
	__u64 total = 0;
	unsigned int i;

	/* the histogram's own total: wait_count can run ahead of it by a wait in flight */
	for (i = 0; i < HIST_BUCKETS; i++)
		total += x->hist[i];
	return hist_quantile(x->hist, total, q, x->max_ns);
}

const char *effect_verdict_name(enum effect_verdict v)
{
	switch (v) {
	case EFFECT_PENDING:
		return "pending";
	case EFFECT_BETTER:
		return "better";
	case EFFECT_SAME:
		return "no change";
	case EFFECT_WORSE:
		return "worse";
	case EFFECT_INCONCLUSIVE:
		return "inconclusive";
	case EFFECT_VERDICT_NR:
		break;
	}
	return "?";
}

enum effect_outcome effect_outcome(enum effect_verdict v, bool side, bool over,
				   bool can_escalate)
{
	if (v == EFFECT_WORSE)
		return OUTCOME_ROLLBACK;
	if (!side || !over)
		return OUTCOME_KEEP;
	if (can_escalate)
		return OUTCOME_ESCALATE;
	return v == EFFECT_BETTER ? OUTCOME_KEEP : OUTCOME_ROLLBACK;
}

static __u64 hist_total(const struct waits *x)
{
	__u64 total = 0;
	unsigned int i;

	for (i = 0; i < HIST_BUCKETS; i++)
		total += x->hist[i];
	return total;
}

/* Waits in buckets >= @from. */
static __u64 tail_count(const struct waits *x, unsigned int from)
{
	__u64 k = 0;
	unsigned int i;

	for (i = from; i < HIST_BUCKETS; i++)
		k += x->hist[i];
	return k;
}

/* Time in waits >= EFFECT_LONG_NS, each taken at its bucket's midpoint. */
static __u64 long_wait_ns(const struct waits *x)
{
	__u64 ns = 0;
	unsigned int i;

	for (i = hist_bucket(EFFECT_LONG_NS); i < HIST_BUCKETS; i++)
		ns += x->hist[i] * ((hist_lower(i) + hist_upper(i)) / 2);
	return ns;
}

/* The bucket of the @q-quantile of @a and @b together (@b may be NULL). */
static unsigned int quantile_bucket(const struct waits *a, const struct waits *b, __u64 total,
				    double q)
{
	__u64 rank = (__u64)ceil(q * total), seen = 0;
	unsigned int i;

	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += a->hist[i] + (b ? b->hist[i] : 0);
		if (seen >= rank)
			break;
	}
	return i < HIST_BUCKETS ? i : HIST_BUCKETS - 1;
}

__u64 waits_stalls(const struct waits *x)
{
	return tail_count(x, hist_bucket(EFFECT_STALL_NS));
}

/* Steal of @x behind @cls (the online classes together for KC_LS), ns per second. */
static double steal_rate(const struct waits *x, int cls)
{
	__u64 ns = x->steal_ns[cls];

	if (cls == KC_LS)
		ns += x->steal_ns[KC_LSE] + x->steal_ns[KC_LSR];
	return x->span_ns ? ns * 1e9 / x->span_ns : 0;
}

bool effect_side_effect(const struct waits *before, const struct waits *after,
			struct side_effect *out)
{
	/* not KC_IDLE: waiting for an idle CPU to wake is no work drawn there */
	static const int classes[] = { KC_SYSTEM, KC_LS, KC_UNCLASSIFIED };
	double rise, best = 0;
	unsigned int i;

	*out = (struct side_effect){ .cls = -1 };
	if (!before->span_ns || !after->span_ns)
		return false;
	for (i = 0; i < sizeof(classes) / sizeof(*classes); i++) {
		double b = steal_rate(before, classes[i]), a = steal_rate(after, classes[i]);

		rise = a - b;
		if (rise < SIDE_MIN_NS_PER_S || a < b * SIDE_FACTOR || rise <= best)
			continue;
		best = rise;
		out->cls = classes[i];
		out->before_ms_s = b / 1e6;
		out->after_ms_s = a / 1e6;
	}
	out->be_before_ms_s = steal_rate(before, KC_BE) / 1e6;
	out->be_after_ms_s = steal_rate(after, KC_BE) / 1e6;
	return out->cls >= 0;
}

/* ln P(X = i) for X ~ Binomial(k, r), 0 < r < 1. */
static double binom_lpmf(__u64 i, __u64 k, double r)
{
	return lgamma(k + 1.0) - lgamma(i + 1.0) - lgamma(k - i + 1.0) + i * log(r) +
	       (k - i) * log1p(-r);
}

/*
 * Two-sided p of @x or a value further from the mean, X ~ Binomial(k, r):
 * twice the smaller tail, summed exactly up to a few thousand terms and by
 * the normal approximation (with continuity) beyond.
 */
static double binom_p(__u64 x, __u64 k, double r)
{
	double mean = k * r, tail = 0;
	__u64 i;

	if (k > 4000) {
		double z = (fabs(x - mean) - 0.5) / sqrt(k * r * (1 - r));

		return z <= 0 ? 1 : fmin(1, erfc(z / M_SQRT2));
	}
	if (x >= mean)
		for (i = x; i <= k; i++)
			tail += exp(binom_lpmf(i, k, r));
	else
		for (i = 0; i <= x; i++)
			tail += exp(binom_lpmf(i, k, r));
	return fmin(1, 2 * tail);
}

void waits_series_add(struct waits_series *s, const struct waits *w)
{
	if (s->n < EFFECT_SERIES)
		s->w[s->n++] = *w;
}

/*
 * Pearson's chi-square of the windows' counts of waits in buckets >= @from
 * against the series' own share; its degrees of freedom are added to @df.
 */
static double series_chi2(const struct waits_series *s, unsigned int from, int *df)
{
	__u64 n[EFFECT_SERIES], k[EFFECT_SERIES], nt = 0, kt = 0;
	double share, x2 = 0;
	int i, used = 0;

	for (i = 0; s && i < s->n; i++) {
		n[i] = hist_total(&s->w[i]);
		k[i] = tail_count(&s->w[i], from);
		nt += n[i];
		kt += k[i];
		used += n[i] > 0;
	}
	if (used < 2 || !kt || kt == nt)
		return 0;	/* none (or all) in the tail: nothing to measure a spread on */
	*df += used - 1;
	share = (double)kt / nt;
	for (i = 0; i < s->n; i++)
		if (n[i])
			x2 += (k[i] - n[i] * share) * (k[i] - n[i] * share) /
			      (n[i] * share * (1 - share));
	return x2;
}

/* The dispersion of the tail at @from over both series: at least 1 (binomial). */
static double spread(const struct waits_series *b, const struct waits_series *a,
		     unsigned int from)
{
	int df = 0;
	double x2 = series_chi2(b, from, &df) + series_chi2(a, from, &df);

	return df && x2 > df ? x2 / df : 1;
}

enum effect_verdict effect_judge(const struct waits *before, const struct waits *after,
				 const struct waits_series *bser, const struct waits_series *aser,
				 double worse_percent, struct effect_evidence *ev)
{
	unsigned int floor_b = hist_bucket(EFFECT_FLOOR_NS), from[5], nth = 0, i, j;
	__u64 nb = hist_total(before), na = hist_total(after);
	double factor = 1 + worse_percent / 100, r, alpha;
	enum effect_verdict v = EFFECT_SAME;
	struct effect_evidence e = {}, decided = {}, shown = {};
	bool tested = false;
	int thin = 0;
	__u64 kb, ka;

	e.n_before = nb;
	e.n_after = na;
	e.long_ns_before = long_wait_ns(before);
	e.long_ns_after = long_wait_ns(after);
	e.p = 1;
	e.spread = 1;
	if (nb < EFFECT_MIN_WAITS || na < EFFECT_MIN_WAITS) {
		if (ev)
			*ev = e;
		return EFFECT_INCONCLUSIVE;
	}
	/* Deepest first: that is the evidence shown when nothing decides. */
	from[nth++] = hist_bucket(EFFECT_LONG_NS);
	from[nth++] = quantile_bucket(before, after, nb + na, 0.999);
	from[nth++] = quantile_bucket(before, after, nb + na, 0.99);
	/* each side's own p99.9: a tail that only grew longer shows past the other's */
	from[nth++] = quantile_bucket(before, NULL, nb, 0.999);
	from[nth++] = quantile_bucket(after, NULL, na, 0.999);
	for (i = 0; i < nth; i++)
		if (from[i] < floor_b)
			from[i] = floor_b;
	for (i = 0; i < nth; i++)	/* sort descending, then drop repeats */
		for (j = i + 1; j < nth; j++)
			if (from[j] > from[i]) {
				unsigned int t = from[i];

				from[i] = from[j];
				from[j] = t;
			}
	for (i = 1, j = 1; i < nth; i++)
		if (from[i] != from[j - 1])
			from[j++] = from[i];
	nth = j;
	alpha = EFFECT_ALPHA / nth;
	r = (double)na / (nb + na);

	for (i = 0; i < nth; i++) {
		struct effect_evidence t = e;
		double share_b, share_a;

		t.threshold_ns = hist_lower(from[i]);
		t.k_before = tail_count(before, from[i]);
		t.k_after = tail_count(after, from[i]);
		t.spread = spread(bser, aser, from[i]);
		/* the counts as worth that many independent waits */
		kb = llround(t.k_before / t.spread);
		ka = llround(t.k_after / t.spread);
		if (kb + ka < EFFECT_MIN_TAIL) {
			if (t.k_before + t.k_after && !thin++)
				shown = t;	/* the deepest tail too thin to test */
			continue;
		}
		t.p = binom_p(ka, kb + ka, r);
		t.tested = true;
		if (!tested && v == EFFECT_SAME)
			decided = t;	/* the deepest tested, unless something decides */
		tested = true;
		if (t.p >= alpha)
			continue;
		share_b = (double)t.k_before / nb;
		share_a = (double)t.k_after / na;
		if (share_a > share_b * factor) {
			v = EFFECT_WORSE;	/* worse anywhere: the node must not be left worse */
			decided = t;
			break;
		}
		if (share_b > share_a * factor && v != EFFECT_BETTER) {
			v = EFFECT_BETTER;
			decided = t;
		}
	}
	if (v == EFFECT_SAME && !tested && thin)
		v = EFFECT_INCONCLUSIVE;
	if (ev)
		*ev = decided.n_before ? decided : shown.n_before ? shown : e;
	return v;
}

void effect_begin(struct effect *e, const char *what, int kind, __u64 target,
		  const __u64 *victims, size_t nvictims, const struct waits *before, int need)
{
	memset(e, 0, sizeof(*e));
	e->pending = true;
	snprintf(e->what, sizeof(e->what), "%s", what);
	e->kind = kind;
	e->target = target;
	if (nvictims > EFFECT_VICTIMS)
		nvictims = EFFECT_VICTIMS;
	if (nvictims)	/* victims may be NULL with none: memcpy(NULL) is undefined */
		memcpy(e->victims, victims, nvictims * sizeof(*victims));
	e->nvictims = nvictims;
	e->before = *before;
	e->need = need > 0 ? need : 1;
}

static bool is_victim(const struct effect *e, __u64 cgid)
{
	size_t i;

	for (i = 0; i < e->nvictims; i++)
		if (e->victims[i] == cgid)
			return true;
	return false;
}

void effect_waits_of(const struct effect *e, const struct window *w,
		     const struct container_table *t, struct waits *out)
{
	const struct container *c;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < w->n; i++) {
		/* the span is of containers that ran or waited: an idle one adds nothing */
		if (!w->v[i].cpu_ns && !w->v[i].wait_count)
			continue;
		if (e && e->nvictims) {
			if (!is_victim(e, w->v[i].cgid))
				continue;
		} else {
			c = container_table_get(t, w->v[i].cgid);
			if (!c || !KC_IS_ONLINE(c->ident.qos))
				continue;
		}
		waits_add(out, &w->v[i], w->dur_ns);
	}
}

enum effect_verdict effect_feed(struct effect *e, const struct window *w,
				const struct container_table *t, double worse_percent)
{
	enum effect_verdict v;
	struct waits now;

	if (!e->pending)
		return EFFECT_INCONCLUSIVE;
	effect_waits_of(e, w, t, &now);
	waits_merge(&e->after, &now);
	waits_series_add(&e->after_win, &now);
	if (!e->windows) {	/* the transition: the first window after the write */
		e->first_max_ns = now.max_ns;
		e->first_stalls = waits_stalls(&now);
	}
	if (++e->windows < e->need)
		return EFFECT_PENDING;
	v = effect_judge(&e->before, &e->after, &e->before_win, &e->after_win, worse_percent,
			 &e->ev);
	if (v == EFFECT_INCONCLUSIVE && e->windows < e->need * EFFECT_EXTEND)
		return EFFECT_PENDING;
	e->pending = false;
	effect_side_effect(&e->before, &e->after, &e->side);
	return v;
}

int effect_describe(const struct effect *e, char *buf, size_t len)
{
	const struct effect_evidence *ev = &e->ev;
	char p_text[32] = "too few to test";
	int n, m;

	n = snprintf(buf, len,
		     "%s p99.9 wait %.0f us -> %.0f us (max %.0f -> %.0f us, p99 %.0f -> %.0f us; "
		     "waits >= %.0f ms %.1f -> %.1f ms",
		     e->nvictims ? "victims'" : "online", waits_quantile(&e->before, 0.999) / 1e3,
		     waits_quantile(&e->after, 0.999) / 1e3, e->before.max_ns / 1e3,
		     e->after.max_ns / 1e3, waits_quantile(&e->before, 0.99) / 1e3,
		     waits_quantile(&e->after, 0.99) / 1e3, EFFECT_LONG_NS / 1e6,
		     ev->long_ns_before / 1e6, ev->long_ns_after / 1e6);
	if (n < 0 || (size_t)n >= len)
		return n;
	if (ev->tested)
		snprintf(p_text, sizeof(p_text), "p %.2g", ev->p);
	if (!ev->threshold_ns)
		m = snprintf(buf + n, len - n, "; %llu -> %llu waits, no tail to test)",
			     (unsigned long long)ev->n_before, (unsigned long long)ev->n_after);
	else
		m = snprintf(buf + n, len - n,
			     "; waits >= %.0f us %llu/%llu -> %llu/%llu, spread %.1fx, %s)",
			     ev->threshold_ns / 1e3, (unsigned long long)ev->k_before,
			     (unsigned long long)ev->n_before, (unsigned long long)ev->k_after,
			     (unsigned long long)ev->n_after, ev->spread, p_text);
	if (m < 0 || (size_t)(n += m) >= len)
		return n;
	return n + snprintf(buf + n, len - n, "; transition: max %.0f us in the first window",
			    e->first_max_ns / 1e3);
}
