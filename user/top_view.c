// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "escape.h"
#include "top_view.h"

static const struct {
	const char *title;
	int width;	/* negative: left-aligned */
	int key;
} cols[TOP_COL_NR] = {
	[TOP_COL_QOS] = { "QOS", -6, 'o' },
	[TOP_COL_CPU] = { "CPU%", 6, 'c' },
	[TOP_COL_P50] = { "P50", 8, 'w' },
	[TOP_COL_P99] = { "P99", 8, 'p' },
	[TOP_COL_BE] = { "BE%", 6, 'b' },
	[TOP_COL_INFL] = { "INFL_ms/s", 9, 'i' },
	[TOP_COL_CPI] = { "CPI", 6, 'x' },
	[TOP_COL_MPKI] = { "MPKI", 7, 'm' },
	[TOP_COL_CGROUP] = { "CGROUP", 0, 'g' },
};

const char *top_col_title(enum top_col col)
{
	return col < TOP_COL_NR ? cols[col].title : "?";
}

int top_col_of_key(int ch)
{
	int i;

	for (i = 0; i < TOP_COL_NR; i++)
		if (cols[i].key == ch)
			return i;
	return -1;
}

int top_key_of_col(enum top_col col)
{
	return col < TOP_COL_NR ? cols[col].key : 0;
}

static const int filter_order[] = { TOP_FILTER_ALL, KC_LSE, KC_LSR, KC_LS, KC_BE, KC_SYSTEM };
#define NFILTERS (sizeof(filter_order) / sizeof(filter_order[0]))

int top_filter_next(int filter)
{
	size_t i;

	for (i = 0; i < NFILTERS; i++)
		if (filter_order[i] == filter)
			return filter_order[(i + 1) % NFILTERS];
	return TOP_FILTER_ALL;
}

const char *top_filter_name(int filter)
{
	return filter == TOP_FILTER_ALL ? "all" : qos_name(filter);
}

int top_filter_parse(const char *s)
{
	int q;

	if (!strcasecmp(s, "all"))
		return TOP_FILTER_ALL;
	q = qos_from_name(s);
	if (q < 0 || q == KC_IDLE)
		return -2;
	return q;
}

void top_row_make(struct top_row *r, const struct cg_window *cw, const struct container *c,
		  __u64 dur_ns)
{
	__u64 all = cw->cpu_ns + cw->wait_ns, ins = cw->pmu[PMU_INSTRUCTIONS];
	bool counters = cw->pmu_source == PMU_SOURCE_HARDWARE ||
			cw->pmu_source == PMU_SOURCE_SOFTWARE;

	memset(r, 0, sizeof(*r));
	r->cgid = cw->cgid;
	r->qos = c ? (int)c->ident.qos : KC_UNCLASSIFIED;
	r->cpu_pct = dur_ns ? 100.0 * cw->cpu_ns / dur_ns : 0;
	r->p50_ns = cw->p50_ns;
	r->p99_ns = cw->p99_ns;
	r->be_pct = all ? 100.0 * cw->steal_ns[KC_BE] / all : 0;
	r->infl_ms_s = dur_ns ? 1e3 * cw->inflicted_online_ns / dur_ns : 0;
	r->cpi = counters && ins ? (double)cw->pmu[PMU_CYCLES] / ins : NAN;
	r->mpki = counters && ins ? 1000.0 * cw->pmu[PMU_LLC_MISSES] / ins : NAN;
	r->path = c ? c->path : NULL;
	r->cw = cw;
	r->c = c;
}

size_t top_rows_filter(struct top_row *rows, size_t n, int filter)
{
	size_t i, k = 0;

	if (filter == TOP_FILTER_ALL)
		return n;
	for (i = 0; i < n; i++)
		if (rows[i].qos == filter)
			rows[k++] = rows[i];
	return k;
}

static enum top_col sort_col;
static bool sort_reverse;

static int cmp_num(double x, double y)
{
	return x < y ? 1 : x > y ? -1 : 0;	/* largest first */
}

static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	int r = 0;

	switch (sort_col) {
	case TOP_COL_QOS:
		r = strcmp(qos_name(x->qos), qos_name(y->qos));
		break;
	case TOP_COL_CPU:
		r = cmp_num(x->cpu_pct, y->cpu_pct);
		break;
	case TOP_COL_P50:
		r = cmp_num(x->p50_ns, y->p50_ns);
		break;
	case TOP_COL_P99:
		r = cmp_num(x->p99_ns, y->p99_ns);
		break;
	case TOP_COL_BE:
		r = cmp_num(x->be_pct, y->be_pct);
		break;
	case TOP_COL_INFL:
		r = cmp_num(x->infl_ms_s, y->infl_ms_s);
		break;
	case TOP_COL_CPI:
	case TOP_COL_MPKI: {
		double u = sort_col == TOP_COL_CPI ? x->cpi : x->mpki;
		double v = sort_col == TOP_COL_CPI ? y->cpi : y->mpki;

		if (isnan(u) != isnan(v))
			return isnan(u) ? 1 : -1;	/* no counters: last, also reversed */
		if (!isnan(u))
			r = cmp_num(u, v);
		break;
	}
	case TOP_COL_CGROUP:
	default:
		break;
	}
	if (sort_reverse)
		r = -r;
	if (!r) {
		/* unknown paths last; then by path, then id */
		if (!x->path != !y->path)
			return x->path ? -1 : 1;
		if (x->path)
			r = strcmp(x->path, y->path);
		if (sort_col == TOP_COL_CGROUP && sort_reverse)
			r = -r;
		if (!r)
			r = x->cgid < y->cgid ? -1 : x->cgid > y->cgid;
	}
	return r;
}

void top_rows_sort(struct top_row *rows, size_t n, enum top_col col, bool reverse)
{
	sort_col = col < TOP_COL_NR ? col : TOP_COL_P99;
	sort_reverse = reverse;
	qsort(rows, n, sizeof(*rows), cmp_rows);
}

const char *top_fmt_wait(char *buf, size_t len, __u64 ns, bool utf8)
{
	const char *us = utf8 ? "\xc2\xb5s" : "us";
	double v;

	if (!ns)
		snprintf(buf, len, "0");
	else if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if ((v = ns / 1e3) < 9.995)
		snprintf(buf, len, "%.2f%s", v, us);
	else if (v < 99.95)
		snprintf(buf, len, "%.1f%s", v, us);
	else if (v < 999.5)
		snprintf(buf, len, "%.0f%s", v, us);
	else if ((v = ns / 1e6) < 9.995)
		snprintf(buf, len, "%.2fms", v);
	else if (v < 99.95)
		snprintf(buf, len, "%.1fms", v);
	else if (v < 999.5)
		snprintf(buf, len, "%.0fms", v);
	else if ((v = ns / 1e9) < 9.995)
		snprintf(buf, len, "%.2fs", v);
	else if (v < 99.95)
		snprintf(buf, len, "%.1fs", v);
	else
		snprintf(buf, len, "%.0fs", v);
	return buf;
}

size_t top_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

size_t top_fit_left(const char *in, char *out, size_t outlen, size_t width, bool utf8)
{
	const char *mark = utf8 ? "\xe2\x80\xa6" : "...";
	size_t mw = utf8 ? 1 : 3, w = top_width(in), n;

	if (!outlen)
		return 0;
	if (w <= width) {
		n = snprintf(out, outlen, "%s", in);
		return n < outlen ? n : outlen - 1;
	}
	if (width <= mw) {
		n = snprintf(out, outlen, "%.*s", utf8 ? (width ? 3 : 0) : (int)width, mark);
		return n < outlen ? n : outlen - 1;
	}
	/* skip code points until width - mw are left */
	for (; w > width - mw; in++)
		if (((unsigned char)in[1] & 0xc0) != 0x80)
			w--;
	n = snprintf(out, outlen, "%s%s", mark, in);
	return n < outlen ? n : outlen - 1;
}

/* Append @s to @buf padded to |@width| columns (right-aligned when > 0). */
static size_t put(char *buf, size_t len, size_t off, const char *s, int width, const char *sep)
{
	size_t w = top_width(s), pad = (size_t)abs(width) > w ? (size_t)abs(width) - w : 0;
	int n;

	if (off >= len)
		return off;
	n = snprintf(buf + off, len - off, "%*s%s%*s%s", width > 0 ? (int)pad : 0, "", s,
		     width < 0 ? (int)pad : 0, "", sep);
	off += n > 0 ? (size_t)n : 0;
	return off < len ? off : len - 1;
}

static const char *sep_after(int col)
{
	return col == TOP_COL_MPKI ? "  " : col == TOP_COL_CGROUP ? "" : " ";
}

size_t top_format_header(char *buf, size_t len, enum top_col sort, size_t *sort_off,
			 size_t *sort_len)
{
	size_t off = 0, start;
	int i;

	if (!len)
		return 0;
	buf[0] = '\0';
	for (i = 0; i < TOP_COL_NR; i++) {
		start = off;
		off = put(buf, len, off, cols[i].title, cols[i].width, sep_after(i));
		if ((int)sort == i) {
			size_t pad = (size_t)abs(cols[i].width) > strlen(cols[i].title) ?
				     (size_t)abs(cols[i].width) - strlen(cols[i].title) : 0;

			if (sort_off)
				*sort_off = start + (cols[i].width > 0 ? pad : 0);
			if (sort_len)
				*sort_len = strlen(cols[i].title);
		}
	}
	return off;
}

static const char *fmt_num(char *b, size_t len, double v, const char *fmt)
{
	if (isnan(v))
		return "-";
	snprintf(b, len, fmt, v);
	return b;
}

size_t top_format_row(char *buf, size_t len, const struct top_row *r, bool utf8,
		      size_t cg_width)
{
	char b[32], label[PATH_MAX + 600], esc[4 * PATH_MAX + 8], fit[4 * PATH_MAX + 8];
	size_t off = 0;

	if (!len)
		return 0;
	buf[0] = '\0';
	off = put(buf, len, off, qos_name(r->qos), cols[TOP_COL_QOS].width, " ");
	off = put(buf, len, off, fmt_num(b, sizeof(b), r->cpu_pct, "%.1f"),
		  cols[TOP_COL_CPU].width, " ");
	off = put(buf, len, off, top_fmt_wait(b, sizeof(b), r->p50_ns, utf8),
		  cols[TOP_COL_P50].width, " ");
	off = put(buf, len, off, top_fmt_wait(b, sizeof(b), r->p99_ns, utf8),
		  cols[TOP_COL_P99].width, " ");
	off = put(buf, len, off, fmt_num(b, sizeof(b), r->be_pct, "%.1f"),
		  cols[TOP_COL_BE].width, " ");
	off = put(buf, len, off, fmt_num(b, sizeof(b), r->infl_ms_s, "%.1f"),
		  cols[TOP_COL_INFL].width, " ");
	off = put(buf, len, off, fmt_num(b, sizeof(b), r->cpi, "%.2f"),
		  cols[TOP_COL_CPI].width, " ");
	off = put(buf, len, off, fmt_num(b, sizeof(b), r->mpki, "%.2f"),
		  cols[TOP_COL_MPKI].width, "  ");
	/* names last: a narrow column cut from the left keeps them */
	escape_text(r->c ? container_label(r->c, label, sizeof(label)) : r->path ? r->path : "?",
		    esc, sizeof(esc), utf8);
	if (cg_width)
		top_fit_left(esc, fit, sizeof(fit), cg_width, utf8);
	return put(buf, len, off, cg_width ? fit : esc, 0, "");
}
