// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's reaction between periods (reactOnLongWaits): an online probe
 * runs alone; a new besteffort pod (its QoS level too) starts a hog on the
 * probe's CPU. The probe's first waits of reactWaitUs behind the hog, a
 * container the last walk did not know, wake the loop: it walks and puts
 * the new BE root's weight to the lowest before the period comes. With
 * reactOnLongWaits off the same write waits for the period. The hog starts
 * right after a period (the daemon's debug line), so the next one is 3 s
 * away: a write within 1 s is not the period's, and the log says the walk on
 * the record came before the action.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemonlib.h"
#include "testlib.h"

#define LS_CTR	"kubepods/burstable/pod2b3c4d5e-7777-4d4d-8e8e-0123456789ab/probe"
#define BE_ROOT	"kubepods/besteffort"
#define BE_POD	BE_ROOT "/pod3c4d5e6f-8888-4e4e-9f9f-0123456789ab"
#define BE_CTR	BE_POD "/hog"
#define PERIOD_S 3
#define WALKED	"walked at once"
#define ACTED	"action: BE wake-up priority"
#define PERIOD_LINE "period: "	/* the daemon's debug line at the end of each period */

static struct cpu_hierarchy hier;
static char state_dir[] = "/tmp/koord-react-XXXXXX";
static char cfg_path[PATH_MAX], log_path[PATH_MAX];
static int port;

/* Byte offset of the first line of the daemon's log holding @needle, -1 when none. */
static long log_offset(const char *needle)
{
	FILE *f = fopen(log_path, "re");
	char line[1024];
	long at = -1, off;

	while (f && (off = ftell(f), fgets(line, sizeof(line), f)))
		if (strstr(line, needle)) {
			at = off;
			break;
		}
	if (f)
		fclose(f);
	return at;
}

/* Until the daemon's log holds @n period lines, for up to two periods. */
static bool wait_periods(int n)
{
	int i;

	for (i = 0; i < 2 * PERIOD_S * 100; i++, sleep_ms(10))
		if (file_count(log_path, PERIOD_LINE) >= n)
			return true;
	return false;
}

/* The BE level and its pod removed (the next run's pod makes them new again); the probe mirrored again. */
static void remove_be(pid_t hog, pid_t probe)
{
	char path[PATH_MAX];
	const char *r[] = { BE_CTR, BE_POD, BE_ROOT };
	size_t i;

	stop(hog);
	pod_unmirror(&hier);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s%s", hier.root, tree_path(&hier, r[i]));
		if (rmdir(path) && errno != ENOENT)
			printf("# rmdir %s: %s\n", path, strerror(errno));
	}
	if (*cpuset_tree(&hier) && !pod_mirror(&hier, LS_CTR, probe))
		printf("# %s not mirrored in the other v1 hierarchies\n", LS_CTR);
}

/* One daemon, one new BE pod at t0; @react: reactOnLongWaits. */
static void run(bool react, pid_t probe)
{
	const char *how = react ? "with reactOnLongWaits" : "without reactOnLongWaits";
	char own[160];
	double waits;
	__u64 t0, at = 0;
	pid_t d, hog;
	long walked, acted;
	bool ok = true;
	int periods;

	snprintf(own, sizeof(own), "\"period\": %d, \"reactOnLongWaits\": %s, "
		 "\"effect\": {\"windows\": 1}", PERIOD_S, react ? "true" : "false");
	if (truncate(log_path, 0) && errno != ENOENT)
		printf("# cannot empty %s: %s\n", log_path, strerror(errno));
	if (!daemon_config(cfg_path, true, "", tree_path(&hier, "kubepods"), state_dir, own) ||
	    (d = daemon_start(cfg_path, log_path, port, "--verbose")) < 0) {
		check(false, "daemon started %s", how);
		return;
	}
	/* the first window, then effect.windows of baseline: the action may start after that */
	if (!check(file_has(log_path, "serving http", 10000), "daemon serving %s", how))
		goto out;
	sleep(2 * PERIOD_S);
	periods = file_count(log_path, PERIOD_LINE);
	if (!check(wait_periods(periods + 1), "a period seen ending (%d before)", periods))
		goto out;
	t0 = now_mono_ns();
	if (!tree_make(&hier, BE_CTR) || (hog = spawn(&hier, tree_path(&hier, BE_CTR), 0, WL_HOG, 0)) < 0) {
		check(false, "a new BE pod with a hog");
		goto out;
	}
	if (*cpuset_tree(&hier) && !pod_mirror(&hier, BE_CTR, hog))
		printf("# %s not mirrored in the other v1 hierarchies\n", BE_CTR);
	if (tree_value_is(&hier, BE_ROOT, "cpu.shares", "2", (PERIOD_S + 3) * 1000))
		at = now_mono_ns();
	walked = log_offset(WALKED);
	acted = log_offset(ACTED);
	sleep(PERIOD_S + 1);	/* /metrics holds the counters of the last period */
	waits = daemon_metric(port, "koord_bpf_collector_events_total{kind=\"react_wait\"}");
	printf("# %s: cpu.shares 2 %.0f ms after the hog's start; react records %.0f\n", how,
	       at ? (at - t0) / 1e6 : -1.0, waits);
	ok &= check(at, "%s: the new BE root gets the lowest weight within a period", how);
	if (react) {
		ok &= check(walked >= 0 && acted > walked, "a record behind the new pod walked at once, "
		      "before the action (walk at %ld, action at %ld in the log)", walked, acted);
		ok &= check(waits > 0, "react records counted in /metrics (%.0f)", waits);
		ok &= check(at && at - t0 < 1000000000ull, "the write within 1 s of the hog's start "
		      "(%.0f ms; the period is %d s)", (at - t0) / 1e6, PERIOD_S);
	} else {
		ok &= check(walked < 0 && acted >= 0, "no walk on records; the period acted (walk at %ld, "
		      "action at %ld in the log)", walked, acted);
		ok &= check(waits == 0, "no react records without reactOnLongWaits (%.0f)", waits);
	}
	if (!ok)
		show_file(log_path);
	remove_be(hog, probe);
out:
	check(daemon_stop(d, SIGTERM) == 0, "daemon stopped %s", how);
}

int main(void)
{
	pid_t probe;

	require_bpf_env(&hier);
	if (!daemon_test_init(state_dir, cfg_path, sizeof(cfg_path), log_path, sizeof(log_path)))
		return 1;
	port = 20000 + getpid() % 20000;
	if (!tree_make(&hier, LS_CTR) ||
	    (probe = spawn(&hier, tree_path(&hier, LS_CTR), 0, WL_SERVER, 1000)) < 0)
		return 1;
	if (*cpuset_tree(&hier) && !pod_mirror(&hier, LS_CTR, probe))
		printf("# %s not mirrored in the other v1 hierarchies\n", LS_CTR);
	run(true, probe);
	run(false, probe);
	stop(probe);
	pod_unmirror(&hier);
	return daemon_test_end("test_react", state_dir);
}
