// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Batch capacity by Koordinator's "usage" policy
 * (pkg/slo-controller/noderesource/plugins/batchresource), the mean its
 * NodeMetric input is, and the memory usage it counts (no page cache).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "batch.h"

void batch_usage(struct batch_resource *r)
{
	double sys = fmax(r->node_used - r->pods_used, 0);

	r->safety_margin = r->capacity * (100 - r->reclaim_percent) / 100.0;
	r->system_used = fmax(sys, r->reserved);
	r->allocatable = fmax(r->capacity - r->safety_margin - r->system_used - r->hp_used, 0);
}

static struct batch_point *point(const struct batch_avg *a, size_t i)
{
	return &a->p[(a->head + i) % a->cap];
}

static int grow(struct batch_avg *a)
{
	size_t cap = a->cap ? 2 * a->cap : 64, i;
	struct batch_point *p = malloc(cap * sizeof(*p));

	if (!p)
		return -ENOMEM;
	for (i = 0; i < a->n; i++)
		p[i] = *point(a, i);
	free(a->p);
	a->p = p;
	a->cap = cap;
	a->head = 0;
	return 0;
}

int batch_avg_push(struct batch_avg *a, double t, const double v[BV_NR])
{
	struct batch_point *p;

	/* a sample as old as the window itself is out: the window is (t - w, t] */
	while (a->n && point(a, 0)->t <= t - a->window_s) {
		a->head = (a->head + 1) % a->cap;
		a->n--;
	}
	if (a->n == a->cap && grow(a))
		return -ENOMEM;
	p = point(a, a->n++);
	p->t = t;
	memcpy(p->v, v, sizeof(p->v));
	return 0;
}

size_t batch_avg_mean(const struct batch_avg *a, double out[BV_NR])
{
	size_t i, k;

	memset(out, 0, BV_NR * sizeof(*out));
	for (i = 0; i < a->n; i++)
		for (k = 0; k < BV_NR; k++)
			out[k] += point(a, i)->v[k];
	for (k = 0; a->n && k < BV_NR; k++)
		out[k] /= a->n;
	return a->n;
}

double batch_avg_span(const struct batch_avg *a)
{
	return a->n < 2 ? 0 : point(a, a->n - 1)->t - point(a, 0)->t;
}

void batch_avg_free(struct batch_avg *a)
{
	free(a->p);
	a->p = NULL;
	a->head = a->n = a->cap = 0;
}

/* The number on the line "@key N", or -EINVAL. */
static int stat_key(const char *text, const char *key, unsigned long long *out)
{
	size_t klen = strlen(key);
	const char *p = text;
	unsigned long long v;
	char *end;

	while (strncmp(p, key, klen) || p[klen] != ' ') {
		p = strchr(p, '\n');
		if (!p)
			return -EINVAL;
		p++;
	}
	p += klen + 1;
	if (!isdigit((unsigned char)*p))	/* strtoull would take a sign or blanks */
		return -EINVAL;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || (*end && *end != '\n'))
		return -EINVAL;
	*out = v;
	return 0;
}

int memory_stat_usage(const char *text, bool v1, unsigned long long *bytes)
{
	static const char *const keys[2][3] = {
		{ "inactive_anon", "active_anon", "unevictable" },
		{ "total_inactive_anon", "total_active_anon", "total_unevictable" },
	};
	unsigned long long v, sum = 0;
	int i;

	for (i = 0; i < 3; i++) {
		if (stat_key(text, keys[v1][i], &v) || sum + v < sum)
			return -EINVAL;
		sum += v;
	}
	*bytes = sum;
	return 0;
}
