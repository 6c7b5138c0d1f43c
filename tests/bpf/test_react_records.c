// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The records the daemon's reaction reads: with react_wait_ns at 1 ms, an
 * online probe's wait of 1 ms or more behind a container not classified yet
 * (a new BE pod) makes a record flagged LW_REACT_ONLY, naming that
 * container, although it is shorter than the long-wait threshold (here
 * 100 ms, so that every such wait is one); once the container is classified,
 * waits behind it make none, and a collector without react_wait_ns
 * (koord-interference's) never makes one. The BE level gets the largest
 * weight: before EEVDF (5.10, 6.1) the probe's wake-ups otherwise preempt the
 * hog within 0.2 ms and it never waits 1 ms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collector.h"
#include "testlib.h"

#define LS_UID	"cccccccc-0000-4000-8000-000000000001"
#define BE_UID	"cccccccc-0000-4000-8000-000000000002"
#define LONG_NS	100000000ull

static struct cpu_hierarchy hier;

struct seen {
	__u64 culprit;		/* the hog's container */
	size_t react, react_other, react_short, react_long, long_waits;
};

static int on_record(void *ctx, const struct long_wait_event *ev)
{
	struct seen *s = ctx;

	if (!(ev->flags & LW_REACT_ONLY)) {
		s->long_waits++;
		return 0;
	}
	s->react++;
	s->react_other += ev->culprit_cgid != s->culprit;
	s->react_short += ev->wait_ns < 1000000;
	s->react_long += ev->wait_ns >= LONG_NS;
	return 0;
}

/* Publish the classes of every cgroup there is now. */
static void publish_classes(struct collector *col)
{
	struct container_table t = {};

	container_table_scan(&t, hier.root, NULL, NULL);
	collector_set_classes(col, &t);
	container_table_free(&t);
}

/* The probe's waits in @w: how many, and the longest. */
static void probe_waits(const struct window *w, __u64 cgid, __u64 *n, __u64 *max)
{
	*n = *max = 0;
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].cgid == cgid) {
			*n = w->v[i].wait_count;
			*max = w->v[i].wait_max;
		}
}

/* The QoS level of the container @ctr (two levels up) at the largest weight. */
static int heavy_level(const char *ctr)
{
	char level[512];
	char *p;
	int i;

	snprintf(level, sizeof(level), "%s", ctr);
	for (i = 0; i < 2; i++)
		if ((p = strrchr(level, '/')))
			*p = '\0';
	return hier.version == 2 ? cgroup_write(&hier, level, "cpu.weight", "10000") :
				   cgroup_write(&hier, level, "cpu.shares", "262144");
}

int main(void)
{
	struct collector_opts o = { .hier = &hier, .react_wait_ns = 1000000,
				    .long_wait_ns = LONG_NS, .events_per_sec = 1u << 20 };
	struct collector *col;
	struct window w = {};
	struct seen s = {};
	char *probe, *hog;
	__u64 probe_id, n, max;
	pid_t pp, hp;

	require_bpf_env(&hier);
	probe = test_cgroup_make(&hier, test_pod_path(KC_LS, LS_UID, "probe"));
	if (!check(probe && !collector_open(&o, &col), "collector with react_wait_ns 1 ms"))
		return test_summary("test_react_records");
	probe_id = cgroup_id(&hier, probe);
	publish_classes(col);		/* the probe's pod is known; the BE pod comes after */
	hog = test_cgroup_make(&hier, test_pod_path(KC_BE, BE_UID, "hog"));
	s.culprit = hog ? cgroup_id(&hier, hog) : 0;
	if (hog && heavy_level(hog))
		printf("# the BE level's weight is not raised: the probe may not wait 1 ms\n");
	collector_watch_events(col, on_record, &s);
	pp = spawn(&hier, probe, 0, WL_SERVER, 1000);
	hp = spawn(&hier, hog, 0, WL_HOG, 0);

	watch_window(col, 2000, &w);
	probe_waits(&w, probe_id, &n, &max);
	printf("# behind the unclassified hog: %zu react records (%zu naming another, %zu under "
	       "1 ms, %zu of 100 ms or more), %zu long-wait records; the probe waited %llu times, "
	       "up to %.2f ms\n", s.react, s.react_other, s.react_short, s.react_long, s.long_waits,
	       (unsigned long long)n, max / 1e6);
	check(max >= 1000000, "premise: the probe waited 1 ms or more behind the hog (%.2f ms)",
	      max / 1e6);
	check(s.react > 0, "waits of 1 ms or more behind a container not classified yet make "
	      "records (%zu)", s.react);
	check(!s.react_other, "each names the hog's container as the culprit (%zu do not)",
	      s.react_other);
	check(!s.react_short && !s.react_long, "each is a wait of 1 ms up to the long-wait "
	      "threshold (%zu shorter, %zu at or over 100 ms)", s.react_short, s.react_long);
	check(w.counters[CNT_REACT_WAITS] >= s.react && w.counters[CNT_LONG_WAITS] >= s.long_waits,
	      "counted apart from long waits (react %llu, long %llu)",
	      (unsigned long long)w.counters[CNT_REACT_WAITS],
	      (unsigned long long)w.counters[CNT_LONG_WAITS]);

	publish_classes(col);		/* now the hog's pod is BE */
	/* records made before the classes were read again are the first part's */
	sleep_ms(50);
	while (collector_poll(col, 0) > 0)
		;
	memset(&s, 0, sizeof(s));
	s.culprit = cgroup_id(&hier, hog);
	watch_window(col, 2000, &w);
	probe_waits(&w, probe_id, &n, &max);
	check(max >= 1000000 && !s.react && !w.counters[CNT_REACT_WAITS],
	      "once classified, waits behind it (up to %.2f ms) make no react record (%zu, "
	      "counted %llu)", max / 1e6, s.react, (unsigned long long)w.counters[CNT_REACT_WAITS]);
	collector_close(col);

	o.react_wait_ns = 0;	/* koord-interference's collector */
	if (check(!collector_open(&o, &col), "collector without react_wait_ns")) {
		char *late = test_cgroup_make(&hier, test_pod_path(KC_BE, BE_UID, "late"));

		publish_classes(col);
		memset(&s, 0, sizeof(s));
		if (late) {
			stop(hp);
			hp = spawn(&hier, late, 0, WL_HOG, 0);	/* behind an unclassified one again */
			/* the scan above knew "late" before the hog moved in: forget it */
			collector_forget_class(col, cgroup_id(&hier, late));
		}
		collector_watch_events(col, on_record, &s);
		watch_window(col, 2000, &w);
		probe_waits(&w, probe_id, &n, &max);
		check(late && max >= 1000000 && !s.react && !w.counters[CNT_REACT_WAITS],
		      "without it, waits behind an unclassified container (up to %.2f ms) make no "
		      "react record (%zu)", max / 1e6, s.react);
		collector_close(col);
	}
	window_free(&w);
	stop(pp);
	stop(hp);
	return test_summary("test_react_records");
}
