// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Ring-buffer overrun is counted, not fatal: with every wait of an online
 * probe made a long-wait record (1 µs threshold, no rate limit) and nobody
 * reading the ring for 3 s, records that do not fit are counted as
 * ringbuf_full; the counters still add up, and once read again the records
 * flow and the collector samples as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include "collector.h"
#include "testlib.h"

static struct cpu_hierarchy hier;

static int count(void *ctx, const struct long_wait_event *ev)
{
	(*(__u64 *)ctx)++;
	return 0;
}

/* The window over @ms, reading the ring (@read) or not. */
static void watch(struct collector *col, unsigned int ms, bool read, struct window *w)
{
	struct sample a = {}, b = {};
	__u64 end;

	collector_sample(col, &a);
	end = now_mono_ns() + ms * 1000000ull;
	while (now_mono_ns() < end) {
		if (read)
			collector_poll(col, 50);
		else
			sleep_ms(50);
	}
	collector_sample(col, &b);
	window_free(w);
	window_compute(&a, &b, w);
	sample_free(&a);
	sample_free(&b);
}

int main(void)
{
	struct collector_opts o = { .hier = &hier, .long_wait_ns = 1, .events_per_sec = 1u << 30 };
	struct collector *col;
	struct window w = {};
	char *probe, *hog;
	__u64 seen = 0, full, drained;
	int r;

	require_bpf_env(&hier);
	probe = test_cgroup_make(&hier, test_pod_path(KC_LS, "bbbbbbbb-0000-4000-8000-000000000001", "probe"));
	hog = test_cgroup_make(&hier, test_pod_path(KC_BE, "bbbbbbbb-0000-4000-8000-000000000002", "hog"));
	if (!check(probe && hog && !collector_open(&o, &col), "collector with every online wait a record"))
		return test_summary("test_ringbuf");
	{
		struct container_table t = {};

		container_table_scan(&t, hier.root, NULL, NULL);
		collector_set_classes(col, &t);
		container_table_free(&t);
	}
	collector_watch_events(col, count, &seen);
	spawn(&hier, hog, 0, WL_HOG, 0);
	spawn(&hier, probe, 0, WL_PROBE, 100);
	sleep_ms(200);

	/* nobody reads the ring */
	watch(col, 3000, false, &w);
	full = w.counters[CNT_EVENTS_RB_FULL];
	printf("# unread for 3 s: long waits %llu, ring full %llu\n",
	       (unsigned long long)w.counters[CNT_LONG_WAITS], (unsigned long long)full);
	check(full > 0, "records that did not fit are counted as ring full (%llu)",
	      (unsigned long long)full);
	check(full < w.counters[CNT_LONG_WAITS], "and the ones that fit were kept");
	r = collector_poll(col, 0);
	drained = seen;
	check(r >= 0 && drained > 0, "reading again drains what was kept (%llu records, poll %d)",
	      (unsigned long long)drained, r);

	/* read again: records flow, nothing is lost, the collector samples as before */
	seen = 0;
	watch(col, 2000, true, &w);
	check(w.counters[CNT_LONG_WAITS] > 0 && w.counters[CNT_EVENTS_RB_FULL] == 0 && seen > 0,
	      "read again: %llu long waits, %llu records, none lost to a full ring",
	      (unsigned long long)w.counters[CNT_LONG_WAITS], (unsigned long long)seen);
	window_free(&w);
	collector_close(col);
	free(probe);
	free(hog);
	return test_summary("test_ringbuf");
}
