// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Ring-buffer overrun is counted, not fatal: with every wait of an online
 * probe made a long-wait record (1 µs threshold, no rate limit) and nobody
 * reading the ring until the ring-full counter moves, records that do not
 * fit are counted as ringbuf_full; every long wait of that window is a
 * record read back afterwards or counted as ring full, and once read again
 * the records flow and the collector samples as before.
 *
 * How long the ring takes to fill depends on how fast the probe wakes:
 * about 1 s on a host, several times that on an emulated CPU (the VM
 * self-test under qemu TCG, more when its host is loaded). The load is
 * therefore not fixed: the probe runs until a record did not fit, up to
 * FILL_MAX_MS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <bpf/libbpf.h>
#include "collector.h"
#include "testlib.h"

/* The most the ring may take to fill; the VM's per-test timeout is 120 s. */
#define FILL_MAX_MS 60000
#define FILL_STEP_MS 250

static struct cpu_hierarchy hier;

static int count(void *ctx, const struct long_wait_event *ev)
{
	(*(__u64 *)ctx)++;
	return 0;
}

/*
 * Nobody reads the ring until the ring-full counter moves (checked every
 * FILL_STEP_MS) or FILL_MAX_MS passed; @w is the window from before the
 * first step to the last sample, @ms its length.
 */
static void fill(struct collector *col, struct window *w, unsigned int *ms)
{
	struct sample a = {}, b = {};
	__u64 start, end;

	collector_sample(col, &a);
	start = now_mono_ns();
	end = start + FILL_MAX_MS * 1000000ull;
	do {
		sleep_ms(FILL_STEP_MS);
		sample_free(&b);
		collector_sample(col, &b);
		window_free(w);
		window_compute(&a, &b, w);
	} while (!w->counters[CNT_EVENTS_RB_FULL] && now_mono_ns() < end);
	*ms = (unsigned int)((now_mono_ns() - start) / 1000000);
	sample_free(&a);
	sample_free(&b);
}

int main(void)
{
	struct collector_opts o = { .hier = &hier, .long_wait_ns = 1, .events_per_sec = 1u << 30 };
	struct collector *col;
	struct window w = {};
	char *probe, *hog;
	__u64 seen = 0, full, lw, kept, drained;
	unsigned int ms;
	int r, ncpu = libbpf_num_possible_cpus();

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

	/* nobody reads the ring until a record did not fit */
	fill(col, &w, &ms);
	full = w.counters[CNT_EVENTS_RB_FULL];
	lw = w.counters[CNT_LONG_WAITS];
	printf("# unread for %u ms (at most %u): long waits %llu (%.0f/s), ring full %llu, "
	       "dropped by the rate limit %llu\n", ms, FILL_MAX_MS, (unsigned long long)lw,
	       ms ? lw * 1000.0 / ms : 0.0, (unsigned long long)full,
	       (unsigned long long)w.counters[CNT_EVENTS_DROPPED]);
	check(full > 0, "records that did not fit are counted as ring full (%llu in %u ms)",
	      (unsigned long long)full, ms);
	check(full < lw, "and the ones that fit were kept");
	r = collector_poll(col, 0);
	drained = seen;
	check(r >= 0 && drained > 0, "reading again drains what was kept (%llu records, poll %d)",
	      (unsigned long long)drained, r);
	/*
	 * Once a record did not fit none fits until the ring is read, so what
	 * the window kept is still there; a wait counted as long just before the
	 * last sample may find the ring full just after it (one per CPU).
	 */
	kept = lw > full + w.counters[CNT_EVENTS_DROPPED] ?
	       lw - full - w.counters[CNT_EVENTS_DROPPED] : 0;
	check(kept > 0 && drained + (ncpu > 0 ? ncpu : 1) >= kept,
	      "no record lost unaccounted: %llu read back, the window kept %llu (long waits - ring full)",
	      (unsigned long long)drained, (unsigned long long)kept);

	/* read again: records flow, nothing is lost, the collector samples as before */
	seen = 0;
	watch_window(col, 2000, &w);
	check(w.counters[CNT_LONG_WAITS] > 0 && w.counters[CNT_EVENTS_RB_FULL] == 0 && seen > 0,
	      "read again: %llu long waits, %llu records, none lost to a full ring",
	      (unsigned long long)w.counters[CNT_LONG_WAITS], (unsigned long long)seen);
	window_free(&w);
	collector_close(col);
	free(probe);
	free(hog);
	return test_summary("test_ringbuf");
}
