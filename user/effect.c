// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>
#include "effect.h"
#include "hist.h"

void waits_add(struct waits *acc, const struct cg_window *cw)
{
	__u32 i;

	for (i = 0; i < cw->nhist; i++)
		acc->hist[cw->hist[i].bucket] += cw->hist[i].count;
	acc->count += cw->wait_count;
	acc->sum_ns += cw->wait_ns;
	if (cw->wait_max > acc->max_ns)
		acc->max_ns = cw->wait_max;
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
	}
	return "?";
}

/* Is @b beyond @a by more than @pct percent and the slack? */
static bool beyond(__u64 a, __u64 b, double pct)
{
	return b > a + EFFECT_SLACK_NS && b > a * (1 + pct / 100);
}

enum effect_verdict effect_judge(const struct waits *before, const struct waits *after,
				 double worse_percent)
{
	__u64 b99, a99;

	if (before->count < EFFECT_MIN_WAITS || after->count < EFFECT_MIN_WAITS)
		return EFFECT_INCONCLUSIVE;
	b99 = waits_quantile(before, 0.99);
	a99 = waits_quantile(after, 0.99);
	if (beyond(b99, a99, worse_percent))
		return EFFECT_WORSE;
	if (beyond(a99, b99, worse_percent) ||
	    beyond(waits_quantile(after, 0.999), waits_quantile(before, 0.999), worse_percent))
		return EFFECT_BETTER;
	return EFFECT_SAME;
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
		if (e && e->nvictims) {
			if (!is_victim(e, w->v[i].cgid))
				continue;
		} else {
			c = container_table_get(t, w->v[i].cgid);
			if (!c || !KC_IS_ONLINE(c->ident.qos))
				continue;
		}
		waits_add(out, &w->v[i]);
	}
}

enum effect_verdict effect_feed(struct effect *e, const struct window *w,
				const struct container_table *t, double worse_percent)
{
	struct waits now;

	if (!e->pending)
		return EFFECT_INCONCLUSIVE;
	effect_waits_of(e, w, t, &now);
	waits_merge(&e->after, &now);
	if (++e->windows < e->need)
		return EFFECT_PENDING;
	e->pending = false;
	return effect_judge(&e->before, &e->after, worse_percent);
}

int effect_describe(const struct effect *e, char *buf, size_t len)
{
	return snprintf(buf, len,
			"%s p99 wait %.0f us -> %.0f us (p99.9 %.0f -> %.0f us, max %.0f -> %.0f us, %llu -> %llu waits)",
			e->nvictims ? "victims'" : "online", waits_quantile(&e->before, 0.99) / 1e3,
			waits_quantile(&e->after, 0.99) / 1e3, waits_quantile(&e->before, 0.999) / 1e3,
			waits_quantile(&e->after, 0.999) / 1e3, e->before.max_ns / 1e3,
			e->after.max_ns / 1e3, (unsigned long long)e->before.count,
			(unsigned long long)e->after.count);
}
