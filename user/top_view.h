/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * koord-top's view of a window, free of curses and BPF so it can be unit
 * tested: one row per container, the columns, sorting, the QoS filter and
 * the formatting of numbers and cgroup paths for a terminal.
 */
#ifndef KOORD_TOP_VIEW_H
#define KOORD_TOP_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include "cgroup.h"
#include "window.h"

enum top_col {
	TOP_COL_QOS,
	TOP_COL_CPU,	/* CPU%: cpu_ns / window, 100 = one CPU */
	TOP_COL_P50,	/* median run-queue wait */
	TOP_COL_P99,
	TOP_COL_BE,	/* BE steal %: steal_ns[BE] / (cpu_ns + wait_ns) */
	TOP_COL_INFL,	/* online waiting caused, ms per second */
	TOP_COL_CPI,
	TOP_COL_MPKI,
	TOP_COL_CGROUP,
	TOP_COL_NR,
};

/* No QoS filter: every container is shown. */
#define TOP_FILTER_ALL (-1)

struct top_row {
	__u64 cgid;
	int qos;			/* enum koord_class */
	double cpu_pct;
	__u64 p50_ns, p99_ns;
	double be_pct;
	double infl_ms_s;
	double cpi, mpki;		/* NAN where no counters were read */
	const char *path;		/* NULL: not (yet) found in the hierarchy */
	const struct cg_window *cw;	/* what the row was made from */
	const struct container *c;	/* NULL when unknown */
};

/* "CPU%", "P99", ... as in the table header. */
const char *top_col_title(enum top_col col);
/* Column sorted by a key ('c' CPU, 'p' P99, ...); -1 for other keys. */
int top_col_of_key(int ch);
/* The key that sorts by @col, 0 when none. */
int top_key_of_col(enum top_col col);

/* all -> LSE -> LSR -> LS -> BE -> SYSTEM -> all */
int top_filter_next(int filter);
/* "all", "LSE", ... */
const char *top_filter_name(int filter);
/* "all" or a QoS name (any case) -> filter; -2 when unknown. */
int top_filter_parse(const char *s);

/* The row of container @cw (with @c from the table, or NULL) over a window of @dur_ns. */
void top_row_make(struct top_row *r, const struct cg_window *cw, const struct container *c,
		  __u64 dur_ns);
/* Keep only the rows of @filter's class, in order; returns how many are left. */
size_t top_rows_filter(struct top_row *rows, size_t n, int filter);
/*
 * Sort by @col: numbers largest first, QOS and CGROUP alphabetically; @reverse
 * flips that. Rows without counters sort last by CPI/MPKI either way; ties
 * go by path and id so rows do not jump between refreshes.
 */
void top_rows_sort(struct top_row *rows, size_t n, enum top_col col, bool reverse);

/*
 * A wait humanized in at most 8 columns: "0", "850ns", "4.21µs", "12.3µs",
 * "640µs", "1.25ms", "12.3ms", "150ms", "1.50s" ("us" when !@utf8).
 */
const char *top_fmt_wait(char *buf, size_t len, __u64 ns, bool utf8);

/* Display columns of an escaped string (one per code point). */
size_t top_width(const char *s);
/*
 * Fit an escaped string into @width columns, cutting from the left and
 * marking the cut with "…" ("..." when !@utf8), so the container's own name
 * stays visible. Returns the length written.
 */
size_t top_fit_left(const char *in, char *out, size_t outlen, size_t width, bool utf8);

/* Columns of the table before CGROUP, separators included. */
#define TOP_FIXED_WIDTH 65

/*
 * The header line of the table; *@sort_off and *@sort_len (when not NULL)
 * say where @sort's title is, for highlighting.
 */
size_t top_format_header(char *buf, size_t len, enum top_col sort, size_t *sort_off,
			 size_t *sort_len);
/* One row; the cgroup cut to @cg_width columns (0: never cut). */
size_t top_format_row(char *buf, size_t len, const struct top_row *r, bool utf8,
		      size_t cg_width);

#endif
