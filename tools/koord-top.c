// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * koord-top: a live per-container view, like top(1). Every period it reads
 * the collector's monotonic counters, computes the window since the previous
 * period and shows one row per container that ran or waited: QoS, CPU%,
 * run-queue wait p50/p99, BE steal, online waiting caused, CPI/MPKI.
 * Interactive with ncurses, or batch (-b) frames of text or JSON on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <ncurses.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "collector.h"
#include "http.h"
#include "kubelet.h"
#include "log.h"
#include "report.h"
#include "report_parse.h"
#include "top_view.h"
#include "unresolved.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct options {
	double delay;
	bool batch, json;
	unsigned long count;	/* frames; 0: until stopped */
	const char *cgroup_root;
	struct class_rules rules;
	enum pmu_source pmu;
	int filter;
	enum top_col sort;
	bool reverse;
	unsigned int max_containers;
	const char *from;	/* a daemon's base URL: its /api/containers, no collector here */
	struct http_opts kubelet;	/* .url NULL: no pod names */
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: koord-top [-d SECONDS] [-n COUNT] [-b [--json]] [--class GLOB=QOS ...]\n"
"                 [--cgroup-root PATH] [--counter-source S] [--filter QOS]\n"
"                 [--sort COLUMN] [--kubelet URL] [-v]\n"
"       koord-top --from http://HOST:PORT [-d SECONDS] [-n COUNT] [-b [--json]] ...\n"
"A live view of every container (cgroup of the cpu controller) like top(1):\n"
"QoS, CPU%%, run-queue wait p50/p99, the share of its time lost to BE (BE%%),\n"
"the online waiting it caused (INFL_ms/s), CPI and MPKI where counters exist.\n"
"Interactive keys: q quit, < > move the sort column, c w p b i x m o g sort by\n"
"CPU%%/P50/P99/BE%%/INFL/CPI/MPKI/QOS/CGROUP, r reverse, f cycle the QoS filter,\n"
"h or ? help.\n"
"\n"
"  -d, --delay SECONDS     refresh period (default 1; 0.1 to 3600)\n"
"  -b, --batch             print frames to stdout instead of the screen\n"
"  -n, --iterations COUNT  refreshes (frames in batch mode) before exiting\n"
"                          (default: until q, Ctrl-C or SIGTERM)\n"
"  -j, --json              batch frames as JSON, one document per line\n"
"  -c, --class GLOB=QOS    classify cgroups whose path matches GLOB as QOS\n"
"                          (LSE, LSR, LS, BE, SYSTEM); repeatable, first match wins\n"
"  -r, --cgroup-root PATH  the cgroup hierarchy to watch (default: the one\n"
"                          carrying the cpu controller, from /proc/self/mountinfo)\n"
"  -f, --filter QOS        show only QOS (all, LSE, LSR, LS, BE, SYSTEM)\n"
"  -s, --sort COLUMN       QOS, CPU%%, P50, P99 (default), BE%%, INFL_ms/s, CPI,\n"
"                          MPKI, CGROUP, or its key letter\n"
"  -R, --reverse           reverse the sort order\n"
"      --counter-source S  auto (hardware counters where there is a PMU), hardware,\n"
"                          software (cpu-clock and page faults stand in), off\n"
"      --max-containers N  containers measured at once (default 4096)\n"
"      --from URL          show a running koord-bpf's last period (URL/api/containers,\n"
"                          with its pod and container names) instead of measuring;\n"
"                          interactive, a frame that does not come keeps the last\n"
"                          one, marked stale; batch, it ends koord-top with 1\n"
CLI_KUBELET_HELP
"  -v, --verbose           debug output, including libbpf's\n"
"      --version           the version, and libbpf's\n"
"  -h, --help              this text\n");
}

static int parse_sort(const char *s)
{
	int i;

	if (strlen(s) == 1)
		return top_col_of_key(s[0]);
	for (i = 0; i < TOP_COL_NR; i++)
		if (!strcasecmp(s, top_col_title(i)))
			return i;
	if (!strcasecmp(s, "CPU") || !strcasecmp(s, "BE") || !strcasecmp(s, "INFL"))
		return !strcasecmp(s, "CPU") ? TOP_COL_CPU : !strcasecmp(s, "BE") ? TOP_COL_BE :
		       TOP_COL_INFL;
	return -1;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "batch", no_argument, NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "class", required_argument, NULL, 'c' },
		{ "cgroup-root", required_argument, NULL, 'r' },
		{ "filter", required_argument, NULL, 'f' },
		{ "sort", required_argument, NULL, 's' },
		{ "reverse", no_argument, NULL, 'R' },
		{ "counter-source", required_argument, NULL, 'P' },
		{ "max-containers", required_argument, NULL, 'M' },
		{ "from", required_argument, NULL, 'F' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		CLI_KUBELET_LONGOPTS,
		{},
	};
	char err[256], *end;
	unsigned long v;
	int opt, x;

	while ((opt = getopt_long(argc, argv, "d:bn:jc:r:f:s:Rvh", longopts, NULL)) != -1) {
		x = cli_kubelet_option(opt, optarg, &o->kubelet);
		if (x < 0)
			return x;
		if (x)
			continue;
		switch (opt) {
		case 'd':
			if (cli_number("delay", "seconds", optarg, 0.1, 3600, false, &o->delay))
				return -EINVAL;
			break;
		case 'b':
			o->batch = true;
			break;
		case 'n':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' || !v || v > 100000000) {
				log_err("bad iteration count \"%s\": want a positive number", optarg);
				return -EINVAL;
			}
			o->count = v;
			break;
		case 'j':
			o->json = true;
			break;
		case 'c':
			if (class_rules_add(&o->rules, optarg, err, sizeof(err))) {
				log_err("%s", err);
				return -EINVAL;
			}
			break;
		case 'r':
			o->cgroup_root = optarg;
			break;
		case 'f':
			x = top_filter_parse(optarg);
			if (x == -2) {
				log_err("bad --filter \"%s\": want all, LSE, LSR, LS, BE or SYSTEM", optarg);
				return -EINVAL;
			}
			o->filter = x;
			break;
		case 's':
			x = parse_sort(optarg);
			if (x < 0) {
				log_err("bad --sort \"%s\": want QOS, CPU%%, P50, P99, BE%%, INFL_ms/s, CPI, MPKI or CGROUP",
					optarg);
				return -EINVAL;
			}
			o->sort = x;
			break;
		case 'R':
			o->reverse = true;
			break;
		case 'P':
			if (cli_counter_source(optarg, &o->pmu))
				return -EINVAL;
			break;
		case 'M':
			if (cli_max_containers(optarg, &o->max_containers))
				return -EINVAL;
			break;
		case 'F':
			if (cli_url("--from", optarg, "http://127.0.0.1:9326"))
				return -EINVAL;
			o->from = optarg;
			break;
		case 'v':
			log_level = LOG_LVL_DEBUG;
			break;
		case 'V':
			cli_version("koord-top");
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		log_err("unexpected argument \"%s\"", argv[optind]);
		return -EINVAL;
	}
	if (o->json && !o->batch) {
		log_err("--json is for batch mode: add -b");
		return -EINVAL;
	}
	if (o->from && o->kubelet.url) {
		log_err("--kubelet is for measuring here: with --from the daemon names the pods");
		return -EINVAL;
	}
	return 0;
}

/* ---- the data: one window per period ---- */

struct top {
	struct options *o;
	struct cpu_hierarchy hier;
	struct collector *col;
	struct container_table table;
	struct sample prev, cur;
	struct window w;
	bool have_window;
	struct timespec when;	/* wall clock (CLOCK_REALTIME) of the window's end */
	__u64 read_ns[2];	/* how long reading its start and end samples took */
	struct unresolved unresolved;	/* containers the last walk did not find */
	struct top_row *rows;	/* containers that ran or waited, unsorted */
	size_t nrows;
	bool utf8;
	struct report_doc doc;	/* --from: the daemon's last answer (its mode) */
	char stale[1024];	/* --from, interactive: why the frame shown is not the last period */
	struct kubelet *kube;	/* --kubelet: pod names; NULL: off */
	unsigned long kube_gen;	/* the pod list the table was named from */
};

/* The collector's mode, or the daemon's with --from. */
static const char *mode_of(const struct top *t)
{
	return t->o->from ? t->doc.mode : collector_mode(t->col);
}

/* Walk the hierarchy into a fresh table and publish the classes. */
static void rescan(struct top *t)
{
	struct container_table nt = {};
	int err;

	err = container_table_scan(&nt, t->hier.root, &t->o->rules, NULL);
	if (err) {
		log_warn("cannot read %s: %s", t->hier.root, strerror(-err));
		container_table_free(&nt);
		return;
	}
	container_table_free(&t->table);
	t->table = nt;
	if (t->kube) {
		kubelet_apply(t->kube, &t->table);
		t->kube_gen = kubelet_generation(t->kube);
	}
	err = collector_set_classes(t->col, &t->table);
	if (err)
		log_warn("cannot publish classes: %s", strerror(-err));
}

/* Walk again (at most once per period) when containers appear that the last walk did not know. */
static void maybe_rescan(struct top *t)
{
	/* a new pod list names (and may classify) the known containers anew */
	if (!unresolved_fresh(&t->unresolved, &t->table, &t->cur, NULL) &&
	    (!t->kube || kubelet_generation(t->kube) == t->kube_gen))
		return;
	rescan(t);
	/* what is still unknown (gone already, too deep) does not trigger the next walk */
	unresolved_reset(&t->unresolved, &t->table, &t->cur);
}

/* The wall-clock time of @s's moment (its reading took a while after it). */
static void sample_wall_time(const struct sample *s, struct timespec *out)
{
	struct timespec real, mono;
	__s64 ns;

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	ns = (__s64)real.tv_sec * 1000000000 + real.tv_nsec -
	     ((__s64)mono.tv_sec * 1000000000 + mono.tv_nsec - (__s64)s->mono_ns);
	out->tv_sec = ns / 1000000000;
	out->tv_nsec = ns % 1000000000;
}

/*
 * --from: the daemon's last period as its /api/containers serves it, its
 * window and containers taking the place of ours. An answer that does not
 * come or parse is said and the last frame stays.
 */
static int fetch(struct top *t)
{
	struct http_opts ho = { .timeout_s = 5 };
	char url[2048], err[1024];
	char *body = NULL;
	size_t len;
	int r;

	snprintf(url, sizeof(url), "%s%s", t->o->from,
		 strstr(t->o->from, "/api/containers") ? "" : "/api/containers");
	ho.url = url;
	r = http_get(&ho, url, &body, &len, err, sizeof(err));
	if (!r)
		r = report_parse(body, len, &t->doc, err, sizeof(err));
	free(body);
	if (r) {
		if (t->o->batch)
			log_err("%s", err);
		snprintf(t->stale, sizeof(t->stale), "%s", err);
		return r;
	}
	t->stale[0] = '\0';
	window_free(&t->w);
	container_table_free(&t->table);
	t->w = t->doc.w;		/* moved, not copied */
	t->table = t->doc.t;
	memset(&t->doc.w, 0, sizeof(t->doc.w));
	memset(&t->doc.t, 0, sizeof(t->doc.t));
	snprintf(t->hier.root, sizeof(t->hier.root), "%s", t->doc.root);
	t->hier.version = t->doc.version;
	clock_gettime(CLOCK_REALTIME, &t->when);
	return 0;
}

/* Sample, walk if needed, and make the rows of the window since the previous sample. */
static int step(struct top *t)
{
	const struct cg_window **active;
	struct sample tmp;
	size_t i, n;
	int err;

	if (t->o->from) {
		err = fetch(t);
		if (err)	/* interactive: the last frame stays, marked stale */
			return t->o->batch ? err : 0;
	}
	free(t->rows);
	t->rows = NULL;
	t->nrows = 0;
	t->have_window = false;
	if (!t->o->from) {
		err = collector_sample(t->col, &t->cur);
		if (err) {
			log_err("cannot read the collector's maps: %s", strerror(-err));
			return err;
		}
		sample_wall_time(&t->cur, &t->when);
		maybe_rescan(t);
		window_free(&t->w);
		err = window_compute(&t->prev, &t->cur, &t->w);
		if (err)
			return err;
		t->read_ns[0] = t->prev.mono_end_ns - t->prev.mono_ns;
		t->read_ns[1] = t->cur.mono_end_ns - t->cur.mono_ns;
		tmp = t->prev;
		t->prev = t->cur;
		t->cur = tmp;
	}
	n = report_rows(&t->w, &active);
	if (!active)
		return -ENOMEM;
	t->rows = calloc(n ? n : 1, sizeof(*t->rows));
	if (!t->rows) {
		free(active);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		top_row_make(&t->rows[i], active[i], container_table_get(&t->table, active[i]->cgid),
			     t->w.dur_ns);
	t->nrows = n;
	free(active);
	t->have_window = true;
	return 0;
}

/* The rows to show: filtered and sorted; the caller frees them. */
static struct top_row *view(const struct top *t, int filter, enum top_col sort, bool reverse,
			    size_t *n)
{
	struct top_row *v = malloc((t->nrows ? t->nrows : 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	memcpy(v, t->rows, t->nrows * sizeof(*v));
	*n = top_rows_filter(v, t->nrows, filter);
	top_rows_sort(v, *n, sort, reverse);
	return v;
}

static const char *counters_state(const struct top *t)
{
	if (t->o->from)
		return "the daemon's";
	switch (collector_pmu_source(t->col)) {
	case PMU_SOURCE_HARDWARE:
		return "hardware";
	case PMU_SOURCE_SOFTWARE:
		return "software (stand-in)";
	default:
		return "unavailable";
	}
}

/* The two lines above the table, into @l1 and @l2 of @len bytes each. */
static void status_lines(const struct top *t, const char *mode, size_t shown, int filter,
			 enum top_col sort, bool reverse, char *l1, char *l2, size_t len)
{
	char when[32];
	struct tm tm;

	localtime_r(&t->when.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	snprintf(l1, len, "koord-top %s  %s  %s  cgroup v%d %s  every %.3g s", when, mode,
		 mode_of(t), t->hier.version, t->hier.root, t->o->delay);
	snprintf(l2, len, "containers: %zu active, %zu shown, %zu known  filter: %s  sort: %s%s"
		 "  counters: %s", t->nrows, shown, t->table.n, top_filter_name(filter),
		 top_col_title(sort), reverse ? " (reversed)" : "", counters_state(t));
}

/* ---- batch ---- */

static int print_text(const struct top *t)
{
	struct top_row *v;
	char l1[PATH_MAX + 256], l2[PATH_MAX + 256], *line;
	size_t i, n, len = 16 * PATH_MAX;

	v = view(t, t->o->filter, t->o->sort, t->o->reverse, &n);
	line = malloc(len);
	if (!v || !line) {
		free(v);
		free(line);
		return -ENOMEM;
	}
	status_lines(t, "batch", n, t->o->filter, t->o->sort, t->o->reverse, l1, l2, sizeof(l1));
	printf("%s\n%s\n\n", l1, l2);
	top_format_header(line, len, t->o->sort, NULL, NULL);
	puts(line);
	for (i = 0; i < n; i++) {
		top_format_row(line, len, &v[i], t->utf8, 0);
		puts(line);
	}
	putchar('\n');
	free(line);
	free(v);
	return 0;
}

static int print_json(const struct top *t)
{
	json_object *doc = json_object_new_object(), *arr = json_object_new_array();
	json_object *hier = json_object_new_object(), *col = json_object_new_object();
	json_object *events = json_object_new_object(), *reads;
	struct top_row *v;
	char when[32], stamp[64], num[32];
	struct tm tm;
	size_t i, n;

	v = view(t, t->o->filter, t->o->sort, t->o->reverse, &n);
	if (!v) {
		json_object_put(doc);
		json_object_put(arr);
		json_object_put(hier);
		json_object_put(col);
		json_object_put(events);
		return -ENOMEM;
	}
	gmtime_r(&t->when.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(stamp, sizeof(stamp), "%s.%06ldZ", when, t->when.tv_nsec / 1000);
	json_object_object_add(doc, "time", json_object_new_string(stamp));
	snprintf(num, sizeof(num), "%.6g", t->o->delay);	/* 0.2, not 0.20000000000000001 */
	json_object_object_add(doc, "period_s", json_object_new_double_s(t->o->delay, num));
	snprintf(num, sizeof(num), "%.9f", t->w.dur_ns / 1e9);
	json_object_object_add(doc, "duration_s", json_object_new_double_s(t->w.dur_ns / 1e9, num));
	json_object_object_add(hier, "root", json_object_new_string(t->hier.root));
	json_object_object_add(hier, "version", json_object_new_int(t->hier.version));
	json_object_object_add(doc, "hierarchy", hier);
	json_object_object_add(col, "mode", json_object_new_string(mode_of(t)));
	json_object_object_add(col, "counters", json_object_new_string(
		t->o->from ? "the daemon's" :
		collector_pmu_source(t->col) == PMU_SOURCE_HARDWARE ? "hardware" :
		collector_pmu_source(t->col) == PMU_SOURCE_SOFTWARE ? "software" : "unavailable"));
	/* What the collector could not see or keep over the frame: the reading of its numbers. */
	for (i = 0; i < CNT_NR; i++)
		json_object_object_add(events, collector_event_name(i),
				       json_object_new_uint64(t->w.counters[i]));
	json_object_object_add(col, "events", events);
	json_object_object_add(col, "running_unread", json_object_new_int(t->w.running_unread));
	/* A CPU's counters are read at some moment of its sample: these spans after the ends. */
	if (!t->o->from) {
		reads = json_object_new_array();
		for (i = 0; i < 2; i++) {
			snprintf(num, sizeof(num), "%.6f", t->read_ns[i] / 1e9);
			json_object_array_add(reads, json_object_new_double_s(t->read_ns[i] / 1e9,
									      num));
		}
		json_object_object_add(col, "reads_s", reads);
	}
	json_object_object_add(doc, "collector", col);
	json_object_object_add(doc, "filter", json_object_new_string(top_filter_name(t->o->filter)));
	json_object_object_add(doc, "sort", json_object_new_string(top_col_title(t->o->sort)));
	for (i = 0; i < n; i++)
		json_object_array_add(arr, report_container_json(v[i].cw, v[i].c));
	json_object_object_add(doc, "containers", arr);
	puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
	free(v);
	return 0;
}

/* Sleep until @deadline (CLOCK_MONOTONIC seconds) or a signal. */
static void sleep_until(double deadline)
{
	double left;

	while (!stop && (left = deadline - now_s()) > 0) {
		struct timespec ts = { .tv_sec = (time_t)left,
				       .tv_nsec = (long)((left - (time_t)left) * 1e9) };

		nanosleep(&ts, NULL);
	}
}

static int run_batch(struct top *t)
{
	double next = now_s() + t->o->delay;
	unsigned long i;
	int err;

	for (i = 0; !stop && (!t->o->count || i < t->o->count); i++) {
		sleep_until(next);
		if (stop)
			break;
		next += t->o->delay;
		if (next < now_s())	/* fell behind: skip, do not burst */
			next = now_s() + t->o->delay;
		err = step(t);
		if (!err)
			err = t->o->json ? print_json(t) : print_text(t);
		if (err)
			return err;
		if (fflush(stdout) == EOF)
			return errno == EPIPE ? 0 : -errno;
	}
	return 0;
}

/* ---- interactive ---- */

struct screen {
	int filter;
	enum top_col sort;
	bool reverse;
	bool help;
	size_t scroll;
};

/* Bytes of the first @cols columns of @s. */
static int bytes_of_cols(const char *s, int cols)
{
	int i = 0;

	if (cols <= 0)
		return 0;
	for (; s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && cols-- == 0)
			break;
	return i;
}

/* Write @s at (@y, @x), cut to what fits before the last column. */
static void put_line(int y, int x, const char *s)
{
	if (y < 0 || y >= LINES)
		return;
	mvaddnstr(y, x, s, bytes_of_cols(s, COLS - 1 - x));
}

static const char *const help_text[] = {
	"koord-top: keys",
	"",
	"  q            quit",
	"  < >          sort by the column to the left / right",
	"  c w p b i    sort by CPU%, P50, P99, BE%, INFL_ms/s",
	"  x m o g      sort by CPI, MPKI, QOS, CGROUP",
	"  r            reverse the sort order",
	"  f            filter by QoS: all, LSE, LSR, LS, BE, SYSTEM",
	"  arrows, PgUp, PgDn, Home, End   scroll",
	"  Ctrl-L       redraw",
	"  h ?          this help; any key closes it",
	"",
	"CPU%: on-CPU time over the window (100 = one CPU)",
	"P50 P99: run-queue wait quantiles of the window",
	"BE%: part of cpu + wait spent waiting while BE ran",
	"INFL_ms/s: online waiting this container caused",
	"CPI MPKI: from counters; - when none are read",
};

static void draw_help(void)
{
	int n = sizeof(help_text) / sizeof(help_text[0]), w = 0, i, y0, x0, h;

	for (i = 0; i < n; i++)
		if ((int)strlen(help_text[i]) > w)
			w = strlen(help_text[i]);
	w += 4;
	h = n + 2;
	if (w > COLS - 1)
		w = COLS - 1;
	if (h > LINES)
		h = LINES;
	y0 = (LINES - h) / 2;
	x0 = (COLS - 1 - w) / 2;
	if (w < 4 || h < 3)
		return;
	for (i = 0; i < h; i++) {
		move(y0 + i, x0);
		hline(' ', w);
	}
	mvaddch(y0, x0, ACS_ULCORNER);
	mvhline(y0, x0 + 1, ACS_HLINE, w - 2);
	mvaddch(y0, x0 + w - 1, ACS_URCORNER);
	mvvline(y0 + 1, x0, ACS_VLINE, h - 2);
	mvvline(y0 + 1, x0 + w - 1, ACS_VLINE, h - 2);
	mvaddch(y0 + h - 1, x0, ACS_LLCORNER);
	mvhline(y0 + h - 1, x0 + 1, ACS_HLINE, w - 2);
	mvaddch(y0 + h - 1, x0 + w - 1, ACS_LRCORNER);
	for (i = 0; i < n && i < h - 2; i++) {
		if (!i)
			attron(A_BOLD);
		mvaddnstr(y0 + 1 + i, x0 + 2, help_text[i], w - 4);
		if (!i)
			attroff(A_BOLD);
	}
}

#define TABLE_Y 3	/* the table's header line; rows below */

static int rows_visible(void)
{
	return LINES - TABLE_Y - 1 > 0 ? LINES - TABLE_Y - 1 : 0;
}

static void draw(const struct top *t, struct screen *s)
{
	char l1[PATH_MAX + 256], l2[PATH_MAX + 256], line[4 * PATH_MAX + 256];
	size_t i, n = 0, off = 0, len = 0, cg_width;
	struct top_row *v = NULL;
	int y;

	erase();
	if (t->have_window)
		v = view(t, s->filter, s->sort, s->reverse, &n);
	if (s->scroll + rows_visible() > n)
		s->scroll = n > (size_t)rows_visible() ? n - rows_visible() : 0;
	status_lines(t, "interactive", n, s->filter, s->sort, s->reverse, l1, l2, sizeof(l1));
	attron(A_BOLD);
	put_line(0, 0, l1);
	attroff(A_BOLD);
	put_line(1, 0, l2);
	if (n > (size_t)rows_visible())	/* more rows than lines: say which are shown */
		snprintf(l2, sizeof(l2), "h help  q quit  f filter  < > sort  r reverse  "
			 "rows %zu-%zu of %zu (arrows, PgUp, PgDn)", s->scroll + 1,
			 s->scroll + rows_visible(), n);
	else
		snprintf(l2, sizeof(l2), "h help  q quit  f filter  < > sort  r reverse");
	if (t->stale[0]) {	/* the daemon did not answer: say so where the keys were */
		char when[32];
		struct tm tm;

		localtime_r(&t->when.tv_sec, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		snprintf(l2, sizeof(l2), "STALE: the frame of %s; now %s", when, t->stale);
	}
	if (t->stale[0])
		attron(A_BOLD);
	put_line(2, 0, l2);
	attroff(A_BOLD);
	top_format_header(line, sizeof(line), s->sort, &off, &len);
	attron(A_REVERSE);
	move(TABLE_Y, 0);
	hline(' ', COLS);
	put_line(TABLE_Y, 0, line);
	if ((int)(off + len) < COLS) {
		attron(A_BOLD | A_UNDERLINE);
		mvaddnstr(TABLE_Y, off, line + off, len);
		attroff(A_BOLD | A_UNDERLINE);
	}
	attroff(A_REVERSE);
	cg_width = COLS - 1 > TOP_FIXED_WIDTH + 8 ? (size_t)COLS - 1 - TOP_FIXED_WIDTH : 8;
	if (!t->have_window)
		put_line(TABLE_Y + 1, 0, "collecting the first window...");
	for (i = s->scroll, y = TABLE_Y + 1; v && i < n && y < LINES; i++, y++) {
		top_format_row(line, sizeof(line), &v[i], t->utf8, cg_width);
		put_line(y, 0, line);
	}
	if (t->have_window && !n)
		put_line(TABLE_Y + 1, 0, s->filter == TOP_FILTER_ALL ?
			 "no container ran or waited in the window" :
			 "no container of this class ran or waited in the window (f: next filter)");
	if (s->help)
		draw_help();
	free(v);
	refresh();
}

/* Returns false when the key asks to quit. */
static bool on_key(struct screen *s, int ch)
{
	int col;

	if (ch == 'q' || ch == 'Q')
		return false;
	if (s->help && ch != KEY_RESIZE) {
		s->help = false;
		return true;
	}
	switch (ch) {
	case 'h':
	case '?':
		s->help = true;
		break;
	case '<':
	case ',':
		s->sort = (s->sort + TOP_COL_NR - 1) % TOP_COL_NR;
		break;
	case '>':
	case '.':
		s->sort = (s->sort + 1) % TOP_COL_NR;
		break;
	case 'r':
	case 'R':
		s->reverse = !s->reverse;
		break;
	case 'f':
	case 'F':
		s->filter = top_filter_next(s->filter);
		s->scroll = 0;
		break;
	case KEY_UP:
		if (s->scroll)
			s->scroll--;
		break;
	case KEY_DOWN:
		s->scroll++;	/* clamped when drawn */
		break;
	case KEY_PPAGE:
		s->scroll = s->scroll > (size_t)rows_visible() ? s->scroll - rows_visible() : 0;
		break;
	case KEY_NPAGE:
	case ' ':
		s->scroll += rows_visible();
		break;
	case KEY_HOME:
		s->scroll = 0;
		break;
	case KEY_END:
		s->scroll = (size_t)-1 / 2;
		break;
	case 'L' - 64:	/* Ctrl-L */
		clearok(curscr, TRUE);
		break;
	default:
		col = top_col_of_key(ch);
		if (col >= 0) {
			if ((int)s->sort != col)
				s->reverse = false;
			s->sort = col;
		}
		break;
	}
	return true;
}

/* Messages written while curses owns the terminal go to a file, shown after. */
static int hold_stderr(int *saved)
{
	FILE *f = tmpfile();

	*saved = -1;
	if (!f)
		return -1;
	fflush(stderr);
	*saved = dup(STDERR_FILENO);
	if (*saved < 0 || dup2(fileno(f), STDERR_FILENO) < 0) {
		fclose(f);
		return -1;
	}
	fclose(f);	/* fd 2 keeps it open */
	return 0;
}

static void release_stderr(int saved)
{
	char buf[4096];
	ssize_t n;
	int held;

	if (saved < 0)
		return;
	fflush(stderr);
	held = dup(STDERR_FILENO);
	dup2(saved, STDERR_FILENO);
	close(saved);
	if (held < 0)
		return;
	if (lseek(held, 0, SEEK_SET) == 0)
		while ((n = read(held, buf, sizeof(buf))) > 0)
			if (write(STDERR_FILENO, buf, n) < 0)
				break;
	close(held);
}

static int run_interactive(struct top *t)
{
	struct screen s = { .filter = t->o->filter, .sort = t->o->sort, .reverse = t->o->reverse };
	double next = now_s() + t->o->delay, left;
	unsigned long frames = 0;
	SCREEN *scr;
	int err = 0, ch, saved;

	scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		log_err("cannot use the terminal \"%s\" (TERM); use -b for batch output",
			getenv("TERM") ? getenv("TERM") : "");
		return -ENOTTY;
	}
	hold_stderr(&saved);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	draw(t, &s);
	while (!stop) {
		left = next - now_s();
		if (left <= 0) {
			err = step(t);
			if (err)
				break;
			next += t->o->delay;
			if (next < now_s())	/* fell behind (suspended?): do not burst */
				next = now_s() + t->o->delay;
			draw(t, &s);
			if (t->o->count && ++frames >= t->o->count)
				break;
			continue;
		}
		/* keys answer at once; a signal is seen within 200 ms */
		timeout(left > 0.2 ? 200 : (int)(left * 1000) + 1);
		ch = getch();
		if (ch == ERR)
			continue;
		if (!on_key(&s, ch))
			break;
		draw(t, &s);
	}
	endwin();
	delscreen(scr);
	release_stderr(saved);
	return err;
}

int main(int argc, char **argv)
{
	struct options o = { .delay = 1, .pmu = PMU_SOURCE_AUTO, .filter = TOP_FILTER_ALL,
			     .sort = TOP_COL_P99 };
	struct collector_opts copts = {};
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	struct top t = { .o = &o };
	const char *cs;
	int err;

	log_prog = "koord-top";
	setlocale(LC_ALL, "");
	cs = nl_langinfo(CODESET);
	t.utf8 = cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
	err = parse_args(argc, argv, &o);
	if (err)
		goto out;
	if (!o.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		log_err("the interactive view needs a terminal; use -b for batch output");
		err = -ENOTTY;
		goto out;
	}
	/* before curses: it then leaves SIGINT/SIGTERM to us (the loop ends, endwin runs) */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o.from) {		/* the daemon measures: no BPF, no root needed here */
		err = o.batch ? run_batch(&t) : run_interactive(&t);
		goto out;
	}
	err = cpu_hierarchy_find(o.cgroup_root, &t.hier);
	if (err) {
		log_err("%s: %s", o.cgroup_root ? o.cgroup_root : "no cgroup hierarchy carries the cpu controller",
			strerror(-err));
		goto out;
	}
	err = container_table_scan(&t.table, t.hier.root, &o.rules, NULL);
	if (err) {
		log_err("cannot read %s: %s", t.hier.root, strerror(-err));
		goto out;
	}
	/* the pods' labels may change classes: before the collector learns them */
	if (o.kubelet.url) {
		err = kubelet_start(&o.kubelet, &t.kube);
		if (err)
			goto out;
		if (kubelet_wait_first(t.kube, o.kubelet.timeout_s + 1))
			kubelet_apply(t.kube, &t.table);
		t.kube_gen = kubelet_generation(t.kube);
	}
	copts = (struct collector_opts){ .hier = &t.hier, .max_containers = o.max_containers,
					 .pmu_source = o.pmu };
	err = collector_open(&copts, &t.col);
	if (err)
		goto out;
	err = collector_set_classes(t.col, &t.table);
	if (!err)
		err = collector_sample(t.col, &t.prev);
	if (err) {
		log_err("cannot start watching: %s", strerror(-err));
		goto out;
	}
	sample_wall_time(&t.prev, &t.when);
	err = o.batch ? run_batch(&t) : run_interactive(&t);
out:
	collector_close(t.col);
	kubelet_stop(t.kube);
	free(t.rows);
	unresolved_free(&t.unresolved);
	window_free(&t.w);
	sample_free(&t.prev);
	sample_free(&t.cur);
	container_table_free(&t.table);
	report_doc_free(&t.doc);
	class_rules_free(&o.rules);
	return err ? 1 : 0;
}
