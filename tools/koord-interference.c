// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * koord-interference: watch the node for a while and report, per container,
 * CPU time and run-queue waits over that window.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "collector.h"
#include "kubelet.h"
#include "log.h"
#include "report.h"

static volatile sig_atomic_t stop;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_signal(int sig)
{
	stop = 1;
}

struct options {
	double duration;
	bool json;
	size_t top;
	const char *cgroup_root;
	struct class_rules rules;
	enum attach_mode attach;
	enum store_mode store;
	unsigned int max_containers;
	bool trace;
	double long_wait_ms;
	enum pmu_source pmu;
	struct http_opts kubelet;	/* .url NULL: no pod names */
};

/* Long-wait records seen while watching (kept for --json, printed for --trace). */
struct events {
	struct long_wait_event *v;
	size_t n, cap;
	bool print;
	struct container_table *table;
	const char *root;
	const struct class_rules *rules;
	struct kubelet *kube;
	time_t rescanned;
};

#define MAX_EVENTS_KEPT 100000

static void usage(FILE *f)
{
	fprintf(f,
"Usage: koord-interference [-d SECONDS] [--json] [--class GLOB=QOS ...]\n"
"                          [--cgroup-root PATH] [--top N] [--trace] [--kubelet URL] [-v]\n"
"Watch the node for SECONDS (default 10) and report per container (cgroup of\n"
"the cpu controller): CPU time, run-queue waits (count, p50, p99, max), who\n"
"held the CPU meanwhile (steal by class) and the online waiting it caused;\n"
"then the offline containers that made online tasks wait, and a verdict.\n"
"\n"
"  -d, --duration SECONDS  how long to watch (0 < SECONDS <= 86400)\n"
"  -j, --json              JSON output (schema: docs/metrics.md)\n"
"  -c, --class GLOB=QOS    classify cgroups whose path matches GLOB as QOS\n"
"                          (LSE, LSR, LS, BE, SYSTEM); repeatable, first match wins\n"
"  -r, --cgroup-root PATH  the cgroup hierarchy to watch (default: the one\n"
"                          carrying the cpu controller, from /proc/self/mountinfo)\n"
"  -t, --top N             show only the N containers with the longest p99 wait\n"
"  -T, --trace             print each long wait of an online task as it happens\n"
"      --long-wait MS      what counts as a long wait (default 5 ms)\n"
CLI_KUBELET_HELP
"      --counter-source S  auto (hardware counters where there is a PMU), hardware,\n"
"                          software (cpu-clock and page faults stand in: tests), off\n"
"      --attach MODE       tp_btf or raw_tp (default: the best the kernel takes)\n"
"      --task-store MODE   storage or hash (default: task storage where available)\n"
"      --max-containers N  containers measured at once (default 4096)\n"
"  -v, --verbose           debug output, including libbpf's\n"
"      --version           the version, and libbpf's\n"
"  -h, --help              this text\n");
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || *out > max)
		return -EINVAL;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "class", required_argument, NULL, 'c' },
		{ "cgroup-root", required_argument, NULL, 'r' },
		{ "top", required_argument, NULL, 't' },
		{ "trace", no_argument, NULL, 'T' },
		{ "long-wait", required_argument, NULL, 'L' },
		{ "attach", required_argument, NULL, 'A' },
		{ "counter-source", required_argument, NULL, 'P' },
		{ "task-store", required_argument, NULL, 'S' },
		{ "max-containers", required_argument, NULL, 'M' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		CLI_KUBELET_LONGOPTS,
		{},
	};
	char err[256];
	unsigned long v;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "d:jc:r:t:Tvh", longopts, NULL)) != -1) {
		r = cli_kubelet_option(opt, optarg, &o->kubelet);
		if (r < 0)
			return r;
		if (r)
			continue;
		switch (opt) {
		case 'd':
			if (cli_number("duration", "seconds", optarg, 0, 86400, true, &o->duration))
				return -EINVAL;
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
		case 't':
			if (parse_uint(optarg, 1000000, &v) || !v) {
				log_err("bad --top \"%s\": want a positive number", optarg);
				return -EINVAL;
			}
			o->top = v;
			break;
		case 'T':
			o->trace = true;
			break;
		case 'L':
			if (cli_number("--long-wait", "milliseconds", optarg, 0.001, 60000, false,
				       &o->long_wait_ms))
				return -EINVAL;
			break;
		case 'P':
			if (cli_counter_source(optarg, &o->pmu))
				return -EINVAL;
			break;
		case 'A':
			if (!strcmp(optarg, "tp_btf"))
				o->attach = ATTACH_TP_BTF;
			else if (!strcmp(optarg, "raw_tp"))
				o->attach = ATTACH_RAW_TP;
			else {
				log_err("bad --attach \"%s\": want tp_btf or raw_tp", optarg);
				return -EINVAL;
			}
			break;
		case 'S':
			if (!strcmp(optarg, "storage"))
				o->store = STORE_TASK;
			else if (!strcmp(optarg, "hash"))
				o->store = STORE_HASH;
			else {
				log_err("bad --task-store \"%s\": want storage or hash", optarg);
				return -EINVAL;
			}
			break;
		case 'M':
			if (cli_max_containers(optarg, &o->max_containers))
				return -EINVAL;
			break;
		case 'v':
			log_level = LOG_LVL_DEBUG;
			break;
		case 'V':
			cli_version("koord-interference");
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
	return 0;
}

static int on_event(void *ctx, const struct long_wait_event *ev)
{
	struct events *e = ctx;
	time_t now = time(NULL);

	/* A container new since the last walk: walk again, at most once a second. */
	if ((!container_table_get(e->table, ev->cgid) ||
	     (ev->culprit_cgid && !container_table_get(e->table, ev->culprit_cgid))) &&
	    now != e->rescanned) {
		container_table_scan(e->table, e->root, e->rules, NULL);
		if (e->kube)
			kubelet_apply(e->kube, e->table);
		e->rescanned = now;
	}
	if (e->print)
		report_event(stdout, ev, e->table);
	if (e->n == e->cap && e->cap < MAX_EVENTS_KEPT) {
		size_t cap = e->cap ? e->cap * 2 : 256;
		struct long_wait_event *v = realloc(e->v, cap * sizeof(*v));

		if (v) {
			e->v = v;
			e->cap = cap;
		}
	}
	if (e->n < e->cap)
		e->v[e->n++] = *ev;
	return 0;
}

/* Until the deadline or a signal, handing long-wait records over as they come. */
static void watch(struct collector *col, double seconds)
{
	double deadline = now_s() + seconds, left;
	int err;

	while (!stop && (left = deadline - now_s()) > 0) {
		err = collector_poll(col, left > 0.1 ? 100 : (int)(left * 1000) + 1);
		if (err < 0 && err != -EINTR) {
			log_warn("reading long-wait records: %s", strerror(-err));
			break;
		}
	}
	collector_poll(col, 0);
}

static void print_json(const struct window *w, const struct container_table *t,
		       const struct cpu_hierarchy *h, const char *mode, size_t top,
		       const struct suspects *sus, const struct events *ev)
{
	char verdict[1024];
	json_object *events = json_object_new_array();
	json_object *doc = json_object_new_object(), *arr = json_object_new_array();
	json_object *hier = json_object_new_object(), *col = json_object_new_object();
	const struct cg_window **rows;
	size_t i, n = report_rows(w, &rows);

	if (top && n > top)
		n = top;
	json_object_object_add(doc, "duration_s", json_object_new_double(w->dur_ns / 1e9));
	json_object_object_add(hier, "root", json_object_new_string(h->root));
	json_object_object_add(hier, "version", json_object_new_int(h->version));
	json_object_object_add(doc, "hierarchy", hier);
	json_object_object_add(col, "mode", json_object_new_string(mode));
	json_object_object_add(col, "long_waits", json_object_new_uint64(w->counters[CNT_LONG_WAITS]));
	json_object_object_add(col, "events_dropped",
			       json_object_new_uint64(w->counters[CNT_EVENTS_DROPPED] +
						      w->counters[CNT_EVENTS_RB_FULL]));
	json_object_object_add(col, "unaccounted_events",
			       json_object_new_uint64(w->counters[CNT_SLOTS_FULL] +
						      w->counters[CNT_TASK_FULL]));
	json_object_object_add(doc, "collector", col);
	for (i = 0; i < n; i++)
		json_object_array_add(arr, report_container_json(rows[i],
					container_table_get(t, rows[i]->cgid)));
	json_object_object_add(doc, "containers", arr);
	json_object_object_add(doc, "suspects", report_suspects_json(sus, t));
	for (i = 0; i < ev->n; i++)
		json_object_array_add(events, report_event_json(&ev->v[i], t));
	json_object_object_add(doc, "events", events);
	report_verdict(verdict, sizeof(verdict), sus, t, w->dur_ns);
	json_object_object_add(doc, "verdict", json_object_new_string(verdict));
	puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
	free(rows);
}

int main(int argc, char **argv)
{
	struct options o = { .duration = 10, .pmu = PMU_SOURCE_AUTO };
	struct container_table table = {};
	struct collector_opts copts = {};
	struct sample a = {}, b = {};
	struct cpu_hierarchy hier;
	struct collector *col = NULL;
	struct suspects sus = {};
	struct events events = {};
	struct window w = {};
	struct kubelet *kube = NULL;
	char verdict[1024];
	int err;

	log_prog = "koord-interference";
	err = parse_args(argc, argv, &o);
	if (err)
		goto out;
	err = cpu_hierarchy_find(o.cgroup_root, &hier);
	if (err) {
		log_err("%s: %s", o.cgroup_root ? o.cgroup_root : "no cgroup hierarchy carries the cpu controller",
			strerror(-err));
		goto out;
	}
	err = container_table_scan(&table, hier.root, &o.rules, NULL);
	if (err) {
		log_err("cannot read %s: %s", hier.root, strerror(-err));
		goto out;
	}
	/* the pods' labels may change classes: before the collector learns them */
	if (o.kubelet.url) {
		err = kubelet_start(&o.kubelet, &kube);
		if (err)
			goto out;
		if (kubelet_wait_first(kube, o.kubelet.timeout_s + 1))
			kubelet_apply(kube, &table);
	}
	copts = (struct collector_opts){ .hier = &hier, .attach = o.attach, .store = o.store,
					 .max_containers = o.max_containers,
					 .long_wait_ns = (__u64)(o.long_wait_ms * 1e6),
					 .pmu_source = o.pmu };
	err = collector_open(&copts, &col);
	if (err)
		goto out;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	events = (struct events){ .print = o.trace && !o.json, .table = &table,
				  .root = hier.root, .rules = &o.rules, .kube = kube };
	err = collector_set_classes(col, &table);
	if (!err)
		err = collector_watch_events(col, on_event, &events);
	if (!err)
		err = collector_sample(col, &a);
	if (err) {
		log_err("cannot start watching: %s", strerror(-err));
		goto out;
	}
	if (!o.json)
		fprintf(stderr, "koord-interference: watching %s (cgroup v%d) for %.1f s with %s...\n",
			hier.root, hier.version, o.duration, collector_mode(col));
	if (events.print)
		report_event_header(stdout);
	watch(col, o.duration);
	err = collector_sample(col, &b);
	if (err) {
		log_err("cannot read the collector's maps: %s", strerror(-err));
		goto out;
	}
	/* Containers created while watching get their paths too. */
	container_table_scan(&table, hier.root, &o.rules, NULL);
	if (kube)
		kubelet_apply(kube, &table);
	err = window_compute(&a, &b, &w);
	if (!err)
		err = suspects_rank(&w, &table, &sus);
	if (err)
		goto out;
	if (o.json) {
		print_json(&w, &table, &hier, collector_mode(col), o.top, &sus, &events);
	} else {
		if (events.print)
			putchar('\n');
		report_table(stdout, &w, &table, o.top);
		report_suspects(stdout, &sus, &table, w.dur_ns);
		report_verdict(verdict, sizeof(verdict), &sus, &table, w.dur_ns);
		printf("\nVerdict: %s\n", verdict);
	}
out:
	collector_close(col);
	kubelet_stop(kube);
	free(events.v);
	suspects_free(&sus);
	window_free(&w);
	sample_free(&a);
	sample_free(&b);
	container_table_free(&table);
	class_rules_free(&o.rules);
	return err ? 1 : 0;
}
