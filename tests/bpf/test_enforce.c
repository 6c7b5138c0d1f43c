// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon acting on real cgroups: an online probe and a BE hog share
 * CPU 0 in kubepods-shaped cgroups. At default settings the daemon must cut
 * the probe's tail wait (read independently with ftrace), leave cgroups
 * outside its roots alone, and put every value back on SIGTERM and, after a
 * kill -9, on the next start. A dry run writes nothing. A harmful action (a
 * CFS quota on BE) must be rolled back; in advise mode the same quota set
 * by another writer is judged and left; a targeted culprit may vanish
 * mid-action; a memory eviction kills the BE pod. CPUs an LSE container is
 * bound to, or the kubelet's static CPU manager gave away, stay out of BE.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
#include "daemonlib.h"
#include "testlib.h"

#define LS_CTR	"kubepods/burstable/pod5f6e3c1a-4444-4a4a-9b9b-0123456789ab/probe"
#define BE_POD	"kubepods/besteffort/pod7a8b9c0d-5555-4b4b-8c8c-0123456789ab"
#define BE_CTR	BE_POD "/hog"
#define OTHER_BE "other/kubepods/besteffort"	/* outside the daemon's roots */
#define BE_ROOT	"kubepods/besteffort"
#define NOISE	"system.slice/noise"	/* outside kubepods: a SYSTEM task */
#define LSE_POD_UID "9c8d7e6f-6666-4c4c-9d9d-0123456789ab"
#define LSE_CTR	"kubepods/pod" LSE_POD_UID "/cache"	/* Guaranteed, LSE by a class rule */
#define MEASURE_MS 4000

static struct cpu_hierarchy hier;
static char state_dir[] = "/tmp/koord-enforce-XXXXXX";
static char cfg_path[PATH_MAX], log_path[PATH_MAX];
static int port;
static pid_t daemon_pid;

/* "/koord-test-PID/" + @r */
static const char *rel(const char *r)
{
	return tree_path(&hier, r);
}

/* The wake-up priority by cpu.idle, where a part tests what is particular to it. */
#define BY_IDLE "\"beWakeupPriorityBy\": \"idle\""

static void write_config(const char *be, const char *own)
{
	daemon_config(cfg_path, true, be, rel("kubepods"), state_dir, own);
}

/* Each start's log holds its own lines only: an earlier start's once matched a later wait. */
static void start_daemon(const char *extra)
{
	if (truncate(log_path, 0) && errno != ENOENT)
		printf("# cannot empty %s: %s\n", log_path, strerror(errno));
	daemon_pid = daemon_start(cfg_path, log_path, port, extra);
}

static int stop_daemon(int sig)
{
	return daemon_stop(daemon_pid, sig);
}

static bool read_is(const char *r, const char *file, const char *want)
{
	return tree_value_is(&hier, r, file, want, 0);
}

static bool wait_value(const char *r, const char *file, const char *want, unsigned int ms)
{
	return tree_value_is(&hier, r, file, want, ms);
}

static bool log_has(const char *needle)
{
	return file_has(log_path, needle, 0);
}

static bool wait_log(const char *needle, unsigned int ms)
{
	return file_has(log_path, needle, ms);
}

/* The daemon's log lines holding @needle, as comments: the verdicts' numbers in every run. */
static void show_lines(const char *needle)
{
	FILE *f = fopen(log_path, "re");
	char line[1024];

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			printf("#   %s%s", line, strchr(line, '\n') ? "" : "\n");
	if (f)
		fclose(f);
}

/* A pod's process, made in every v1 hierarchy as the kubelet makes pods (when they are there). */
static pid_t pod_spawn(const char *ctr, int cpu, enum workload wl, unsigned int period_us)
{
	pid_t pid = spawn(&hier, rel(ctr), cpu, wl, period_us);

	if (pid > 0 && *cpuset_tree(&hier) && !pod_mirror(&hier, ctr, pid))
		printf("# %s not mirrored in the other v1 hierarchies\n", ctr);
	return pid;
}

/*
 * Default settings (a server probe: works 300 us per wake-up): the BE hog
 * stops holding the probe back, roots are respected, SIGTERM restores.
 * What the action controls is the hog's part of each wait (ftrace: the hog
 * ran while the probe waited), so that is what must fall. The whole tail is
 * printed, not judged: system work on the machine can land next to the
 * probe and hold it as long as the hog did (docs/enforcement.md).
 */
static void test_default(pid_t probe, pid_t hog, const char *before)
{
	struct tail b, a;
	char body[1 << 16], *after;
	int rc;

	probe_tail_behind(probe, hog, MEASURE_MS, &b);
	write_config("", "");
	start_daemon(NULL);
	check(wait_value(BE_ROOT, "cpu.shares", "2", 8000) && read_is(BE_ROOT, "cpu.idle", "0"),
	      "default settings: the BE root gets the lowest weight, not cpu.idle");
	sleep_ms(1000);
	probe_tail_behind(probe, hog, MEASURE_MS, &a);
	printf("# probe waits (ftrace): before p99.9 %.1f us max %.1f us (%zu waits), "
	       "after p99.9 %.1f us max %.1f us (%zu waits); the hog's part of a wait: "
	       "before p99.9 %.1f us max %.1f us sum %.1f ms, after p99.9 %.1f us max %.1f us "
	       "sum %.1f ms\n", b.p999 / 1e3, b.max / 1e3, b.n, a.p999 / 1e3, a.max / 1e3, a.n,
	       b.other_p999 / 1e3, b.other_max / 1e3, b.other_sum / 1e6, a.other_p999 / 1e3,
	       a.other_max / 1e3, a.other_sum / 1e6);
	check(b.n > 100 && a.n > 100, "the probe woke often enough to measure (%zu, %zu)", b.n,
	      a.n);
	check(b.other_max >= 1000000, "before: the hog held the probe back (up to %.1f us)",
	      b.other_max / 1e3);
	/*
	 * Not the max: the BE root still gets the CPU now and then and runs a slice while
	 * the probe waits (seen: one 4.8 ms hold at load average 6, p99.9 4009 -> 80 us).
	 */
	check(a.other_p999 * 2 < b.other_p999,
	      "the hog's p99.9 hold on a wait fell at least 2x (%.1f -> %.1f us)",
	      b.other_p999 / 1e3, a.other_p999 / 1e3);
	check(a.other_sum * 2 < b.other_sum,
	      "the hog's hold on the probe's waits in all fell at least 2x (%.1f -> %.1f ms)",
	      b.other_sum / 1e6, a.other_sum / 1e6);
	check(read_is(OTHER_BE, "cpu.shares", "1024"), "a BE root outside cgroupRoots is left alone");
	check(http_get(port, "/metrics", body, sizeof(body)) == 200 &&
	      strstr(body, "koord_bpf_be_wakeup_priority 1") &&
	      strstr(body, "koord_bpf_actions_total "), "/metrics shows the action");
	rc = stop_daemon(SIGTERM);
	check(rc == 0, "SIGTERM: the daemon exits 0 (got %d)", rc);
	after = cgroup_snapshot(&hier);
	check(!strcmp(before, after), "SIGTERM: every cgroup value is back to its original");
	free(after);
	check(log_has("every cgroup value written is back"), "SIGTERM: the restore is logged");
}

/*
 * kill -9, then a start (enforcement off) replays the journal. By cpu.idle:
 * its replay must also put back the weight the kernel resets.
 */
static void test_crash(const char *before)
{
	char journal[PATH_MAX + 16], *after;
	int rc;

	snprintf(journal, sizeof(journal), "%s/journal", state_dir);
	write_config("", BY_IDLE);
	start_daemon(NULL);
	check(wait_value(BE_ROOT, "cpu.idle", "1", 8000), "crash: the daemon acted");
	stop_daemon(SIGKILL);
	check(read_is(BE_ROOT, "cpu.idle", "1") && !access(journal, F_OK),
	      "kill -9 leaves the value changed and the journal in place");
	/* the same state dir, enforcement off: only the replay can restore */
	daemon_config(cfg_path, false, "", rel("kubepods"), state_dir, "");
	start_daemon(NULL);
	check(wait_value(BE_ROOT, "cpu.idle", "0", 8000), "the next start restores the value");
	check(wait_log("a previous run did not stop cleanly", 2000), "and says why");
	check(access(journal, F_OK) && errno == ENOENT, "the replayed journal is removed");
	after = cgroup_snapshot(&hier);
	check(!strcmp(before, after), "after the replay every cgroup value is the original");
	free(after);
	rc = stop_daemon(SIGTERM);
	check(rc == 0, "it stops cleanly (%d)", rc);
}

static void test_dry_run(const char *before)
{
	char *after;

	write_config("", "");
	start_daemon("--dry-run");
	check(wait_log("would write 2 to", 8000), "--dry-run logs what it would write");
	sleep_ms(1500);
	after = cgroup_snapshot(&hier);
	check(!strcmp(before, after), "--dry-run writes nothing");
	free(after);
	check(stop_daemon(SIGTERM) == 0, "--dry-run stops cleanly");
}

/* How many lines of the daemon's log hold @needle. */
static int log_count(const char *needle)
{
	return file_count(log_path, needle);
}

/*
 * Another writer (koordlet's CoreSched reconciler writes cpu.idle = 0 where
 * its schedIdle is off) sets a file the daemon wrote: it is left to it, not
 * rewritten every period, logged once and counted.
 */
static void test_foreign_writer(const char *before)
{
	char body[1 << 16], *after, *m;

	write_config("", BY_IDLE);
	start_daemon(NULL);
	check(wait_value(BE_ROOT, "cpu.idle", "1", 8000), "foreign writer: the daemon acted");
	sleep_ms(500);
	check(cgroup_write(&hier, rel(BE_ROOT), "cpu.idle", "0") == 0, "another writer sets cpu.idle 0");
	check(wait_log("another writer set it to 0 after this one wrote 1", 5000),
	      "the daemon sees it and says so");
	sleep_ms(3000);
	check(read_is(BE_ROOT, "cpu.idle", "0"), "and does not write it again (3 s later: 0)");
	check(log_count("another writer set it to 0") == 1, "logged once (%d)",
	      log_count("another writer set it to 0"));
	m = http_get(port, "/metrics", body, sizeof(body)) == 200 ?
	    strstr(body, "koord_bpf_cgroup_writes_total{result=\"foreign\"} ") : NULL;
	check(m && atoi(m + strlen("koord_bpf_cgroup_writes_total{result=\"foreign\"} ")) >= 1,
	      "/metrics counts the writes not done");
	check(stop_daemon(SIGTERM) == 0, "foreign writer: stops cleanly");
	after = cgroup_snapshot(&hier);
	check(!strcmp(before, after), "cpu.idle left at 0 and the weight the kernel reset put back");
	free(after);
}

/*
 * An action the victims' waits got worse after is rolled back, and, with no
 * hold-off at all, not taken again while the containers are the ones it was
 * rolled back under (each try and rollback is a transition the probe pays
 * for); a new BE container is a change. The loop judges what followed an
 * action, not a model of it, and the sign of a small BE quota's own effect
 * depends on the machine: on a quiet one it made the probe's waits worse
 * (waits >= 4.7 ms 0/5509 -> 15/5242), next to a background load better
 * (p99.9 3867 -> 2425 us), and the part failed there. So the test makes
 * them worse itself once the quota is written: a SYSTEM hog of 256 times the
 * probe's weight joins the probe's CPU (its cgroup was there before, so the
 * containers are the same).
 */
static void test_rollback(void)
{
	char path[PATH_MAX + 64], body[1 << 16];
	pid_t sidecar, harm;
	int i;

	write_config("\"cpuSuppressPolicy\": \"cfsQuota\", \"cpuSuppressThresholdPercent\": 1, \"cpuSuppressMinPercent\": 12",
		     "\"beWakeupPriority\": false, \"throttle\": {\"enable\": false}, "
		     "\"eviction\": {\"enable\": false}, \"effect\": {\"holdOffSeconds\": 0, \"windows\": 6}");
	start_daemon(NULL);
	check(wait_log("action: BE quota", 8000), "cfsQuota: the BE root gets a quota");
	harm = cgroup_write(&hier, rel(NOISE), "cpu.shares", "262144") == 0 ?
	       spawn(&hier, rel(NOISE), 0, WL_HOG, 0) : -1;
	check(harm > 0, "a heavy SYSTEM hog joins the probe's CPU");
	if (!check(wait_log("worse, rolled back", 20000),
		   "the victims' waits got worse after the quota: rolled back"))
		show_file(log_path);
	else
		show_lines("effect: ");
	check(http_get(port, "/api/containers", body, sizeof(body)) == 200 &&
	      strstr(body, "\"effects\":[{\"action\":\"BE quota") &&
	      strstr(body, "\"verdict\":\"worse\",\"outcome\":\"rolled back\""),
	      "/api/containers lists the verdict first among the effects: worse, rolled back");
	stop(harm);
	cgroup_write(&hier, rel(NOISE), "cpu.shares", "1024");
	check(wait_value(BE_ROOT, "cpu.cfs_quota_us", "-1", 3000), "the quota is gone after the rollback");
	sleep_ms(4000);
	check(read_is(BE_ROOT, "cpu.cfs_quota_us", "-1") && log_count("action: BE quota") == 1,
	      "not taken again under the same containers, even with holdOffSeconds 0");
	sidecar = tree_make(&hier, BE_POD "/sidecar") ?
		  spawn(&hier, rel(BE_POD "/sidecar"), 1, WL_PROBE, 100000) : -1;
	check(sidecar > 0, "a new BE container");
	for (i = 0; i < 150 && log_count("action: BE quota") < 2; i++)
		sleep_ms(100);
	check(log_count("action: BE quota") == 2, "the containers changed: the quota is tried again");
	check(stop_daemon(SIGTERM) == 0, "stops cleanly");
	stop(sidecar);
	snprintf(path, sizeof(path), "%s%s", hier.root, rel(BE_POD "/sidecar"));
	rmdir(path);
}

/*
 * Advise mode (koordBPF.mode "advise", the NodeSLO enabling enforcement for
 * koordlet): the daemon writes nothing, and judges what another writer does
 * to the BE cgroups. Here the other writer raises the BE root's cpu.shares
 * 2048 -> 262144, as koordlet's batch-resource hook sets BE shares: the hog
 * then holds the probe back far longer (at shares 2 its p99.9 hold was 65 us,
 * at 2048 3812 us). Judged worse and left as it is, at the stop too.
 */
/*
 * A BE container with a limit of its own (a batch pod's quota, 2 cores): v1
 * refuses BE's root a quota below it (EINVAL), so the cfsQuota policy never
 * acted. The container is cut to BE's quota first, and the stop gives both
 * back.
 */
static void test_quota_under_limit(void)
{
	char *before, *after, root_q[64], ctr_q[64];
	bool ok;

	if (hier.version != 1) {
		/* a kernel fact: v2 takes a parent's quota below a child's */
		printf("# cgroup v2: no quota refused below a child's, nothing to cut\n");
		return;
	}
	if (!check(!cgroup_write(&hier, rel(BE_CTR), "cpu.cfs_quota_us", "200000"),
		   "a BE container limited to 2 cores"))
		return;
	before = cgroup_snapshot(&hier);
	write_config("\"cpuSuppressPolicy\": \"cfsQuota\", \"cpuSuppressThresholdPercent\": 1, "
		     "\"cpuSuppressMinPercent\": 12",
		     "\"beWakeupPriority\": false, \"throttle\": {\"enable\": false}, "
		     "\"eviction\": {\"enable\": false}, \"effect\": {\"worsePercent\": 100000}");
	start_daemon(NULL);
	ok = check(wait_log("action: BE quota", 10000), "... BE's root still gets a quota");
	ok &= check(log_has("cut to it first"), "... the container cut to it first (logged)");
	cgroup_read(&hier, rel(BE_ROOT), "cpu.cfs_quota_us", root_q, sizeof(root_q));
	cgroup_read(&hier, rel(BE_CTR), "cpu.cfs_quota_us", ctr_q, sizeof(ctr_q));
	ok &= check(atol(root_q) > 0 && atol(ctr_q) > 0 && atol(ctr_q) <= atol(root_q),
		    "... within it (root %ld, container %ld)", atol(root_q), atol(ctr_q));
	if (!ok)
		show_file(log_path);
	check(stop_daemon(SIGTERM) == 0, "stops cleanly");
	after = cgroup_snapshot(&hier);
	check(before && after && !strcmp(before, after), "SIGTERM gives both back (the container "
	      "its 2 cores)");
	free(before);
	free(after);
	cgroup_write(&hier, rel(BE_CTR), "cpu.cfs_quota_us", "-1");
}

static void test_advise(void)
{
	char body[1 << 16], *before, *after;
	bool ok;

	before = cgroup_snapshot(&hier);
	write_config("", "\"mode\": \"advise\", \"effect\": {\"windows\": 6}");
	start_daemon(NULL);
	check(wait_log("koordBPF.mode advise: koord-bpf writes nothing", 5000),
	      "advise mode: said at the start");
	sleep_ms(8000);		/* the baseline: 6 windows, and the one a change falls in */
	after = cgroup_snapshot(&hier);
	check(before && after && !strcmp(before, after),
	      "advise mode writes nothing (the NodeSLO enables enforcement)");
	free(after);
	check(cgroup_write(&hier, rel(BE_ROOT), "cpu.shares", "262144") == 0,
	      "another writer raises the BE root's cpu.shares to 262144");
	check(wait_log("observed: cpu.shares 2048 -> 262144 on ", 4000),
	      "the daemon sees the change");
	/*
	 * The verdict's line, whether on "online" or on "victims'" waits (a probe
	 * already over a threshold is a victim). Up to 30 s: an inconclusive
	 * verdict measures on, to 4 x 6 windows.
	 */
	ok = check(wait_log("effect: cpu.shares 2048 -> 262144 on ", 30000) &&
		   log_has("worse (advise mode: left as it is)"),
		   "and judges it on the online waits: worse, left as it is");
	check(read_is(BE_ROOT, "cpu.shares", "262144"), "... the shares stay");
	ok &= check(http_get(port, "/metrics", body, sizeof(body)) == 200 &&
		    strstr(body, "koord_bpf_observed_changes_total{verdict=\"worse\"} 1"),
		    "/metrics counts the verdict");
	ok &= check(http_get(port, "/api/containers", body, sizeof(body)) == 200 &&
		    strstr(body, "\"verdict\":\"worse\",\"outcome\":\"left as it is\""),
		    "/api/containers lists it among the effects: worse, left as it is");
	if (!ok)
		show_file(log_path);
	else
		show_lines("effect: ");
	check(stop_daemon(SIGTERM) == 0, "stops cleanly");
	check(read_is(BE_ROOT, "cpu.shares", "262144"), "the stop leaves another writer's shares");
	cgroup_write(&hier, rel(BE_ROOT), "cpu.shares", "2048");
	free(before);
}

/* Where a cpuset holds the culprit, it is kept off the victim's CPU; SIGTERM puts it back. */
static void test_target_cpuset(pid_t probe, pid_t hog)
{
	char path[2 * PATH_MAX], buf[64], all[32];

	if (!*cpuset_tree(&hier)) {
		skip_part("the cpuset action: no v1 cpuset hierarchy, or one CPU");
		return;
	}
	write_config("\"cpuSuppressThresholdPercent\": 100",
		     "\"beWakeupPriority\": false, \"eviction\": {\"enable\": false}, "
		     "\"interference\": {\"victimP99WaitUs\": 100, \"beStealPercent\": 1, "
		     "\"sustainedWindows\": 2}");
	start_daemon(NULL);
	check(wait_log("kept on CPUs", 15000), "the culprit is kept off its victim's CPU");
	snprintf(path, sizeof(path), "%s/%s/cpuset.cpus", cpuset_tree(&hier), BE_CTR);
	read_line(path, buf, sizeof(buf));
	check(buf[0] && !strchr(buf, '0'), "the hog's cpuset no longer has CPU 0 (%s)", buf);
	if (!check(stop_daemon(SIGTERM) == 0, "stops cleanly"))
		show_file(log_path);
	read_line(path, buf, sizeof(buf));
	snprintf(all, sizeof(all), "0-%ld", sysconf(_SC_NPROCESSORS_ONLN) - 1);
	check(!strcmp(buf, all), "SIGTERM gives the hog all CPUs back (%s)", buf);
	pin_cpu(hog, 0);
}

/*
 * A culprit that hurts again once its cpuset was released is kept off
 * longer: quietWindows doubled at each return. Released after one quiet
 * window, the hog pinned back next to the probe (as load balancing moved it
 * under load) was kept off and released again and again, each a transition.
 */
static void test_target_returns(pid_t hog)
{
	bool ok;

	/*
	 * The returns, not the verdict (tested above): no rollback. A compile
	 * job next to the probe once made the cpuset "worse" (waits >= 3.7 ms
	 * 5/1876 -> 36/1921), and the culprit went the quota's way instead.
	 * Nor the keep-off (tested below): under a background load, a SYSTEM
	 * task placed on CPU 0 once the hog left it (steal behind SYSTEM 0 ->
	 * 80 ms/s) kept all of BE off CPU 0, and the hog could not come back.
	 */
	write_config("\"cpuSuppressThresholdPercent\": 100",
		     "\"beWakeupPriority\": false, \"eviction\": {\"enable\": false}, "
		     "\"interference\": {\"victimP99WaitUs\": 100, \"beStealPercent\": 1, "
		     "\"sustainedWindows\": 2}, \"throttle\": {\"quietWindows\": 1}, "
		     "\"effect\": {\"worsePercent\": 100000, \"keepOff\": false}");
	start_daemon(NULL);
	ok = check(wait_log("cpuset released (1 needed: it came back 0 times)", 20000),
		   "the culprit kept off, quiet for a window, released");
	pin_cpu(hog, 0);
	ok &= check(wait_log("cpuset released (2 needed: it came back 1 times)", 25000),
		    "back next to the probe it hurts again: kept off, and released only after 2 "
		    "quiet windows");
	if (!ok)
		show_file(log_path);
	check(stop_daemon(SIGTERM) == 0, "stops cleanly");
	pin_cpu(hog, 0);
}

/*
 * A side effect of the wake-up priority: system work placed next to the
 * probe once BE is an idle group (by cpu.idle; here a SYSTEM task pinned to its CPU, in
 * production kernel threads and shells drawn by the idle-looking CPU). The
 * loop reports it (log, /metrics, /api/containers) and escalates: BE is kept
 * off the probe's CPU. SIGTERM puts every cpuset back.
 */
static void test_side_effect(pid_t hog)
{
	char body[1 << 16], path[2 * PATH_MAX], buf[64], *before, *after;
	pid_t noise;
	bool ok;

	if (!*cpuset_tree(&hier)) {
		skip_part("the keep-off escalation: no v1 cpuset hierarchy, or one CPU");
		return;
	}
	pin_cpu(hog, 0);
	before = cpuset_snapshot(&hier);
	/*
	 * A service that wants its p99.9 under 200 us: what the SYSTEM task leaves
	 * is still harm. Rolled back only when 11x worse: the SYSTEM task's own
	 * 300 us waits, new after the action, once made it "worse" (waits >= 344
	 * us 5/706 -> 81/1862) while the p99.9 fell 3976 -> 451 us, and a
	 * rollback has no side effect to report.
	 */
	write_config("\"cpuSuppressThresholdPercent\": 100",
		     "\"throttle\": {\"enable\": false}, \"eviction\": {\"enable\": false}, "
		     "\"interference\": {\"victimP999WaitUs\": 200}, "
		     "\"effect\": {\"worsePercent\": 1000, \"keepOff\": false}, " BY_IDLE);
	start_daemon(NULL);
	wait_value(BE_ROOT, "cpu.idle", "1", 8000);
	noise = spawn(&hier, rel(NOISE), 0, WL_SERVER, 1000);
	ok = check(wait_log("side effect of BE wake-up priority", 15000) &&
		   log_has("not escalating (effect.keepOff false)"),
		   "keepOff false: the side effect is reported, not escalated");
	snprintf(path, sizeof(path), "%s/%s/cpuset.cpus", cpuset_tree(&hier), BE_ROOT);
	read_line(path, buf, sizeof(buf));
	ok &= check(!log_has("kept off the victims") && strchr(buf, '0'),
		    "... the BE root keeps CPU 0 (%s)", buf);
	if (!ok)
		show_file(log_path);
	stop(noise);
	check(stop_daemon(SIGTERM) == 0, "stops cleanly");

	write_config("\"cpuSuppressThresholdPercent\": 100",
		     "\"throttle\": {\"enable\": false}, \"eviction\": {\"enable\": false}, "
		     "\"interference\": {\"victimP999WaitUs\": 200}, "
		     "\"effect\": {\"worsePercent\": 1000}, " BY_IDLE);
	start_daemon(NULL);
	check(wait_value(BE_ROOT, "cpu.idle", "1", 8000), "side effect: the wake-up priority taken");
	noise = spawn(&hier, rel(NOISE), 0, WL_SERVER, 1000);
	ok = check(wait_log("side effect of BE wake-up priority", 15000) && log_has("behind SYSTEM"),
		   "the probe now waiting behind a SYSTEM task is reported as the action's side "
		   "effect");
	ok &= check(wait_log("action: BE kept off the victims' CPUs 0 ", 5000),
		    "the loop escalates: BE is kept off the probe's CPU");
	if (!ok)
		show_file(log_path);
	snprintf(path, sizeof(path), "%s/%s/cpuset.cpus", cpuset_tree(&hier), BE_ROOT);
	read_line(path, buf, sizeof(buf));
	check(buf[0] && !strchr(buf, '0'), "the BE root's cpuset no longer has CPU 0 (%s)", buf);
	snprintf(path, sizeof(path), "%s/%s/cpuset.cpus", cpuset_tree(&hier), BE_CTR);
	read_line(path, buf, sizeof(buf));
	check(buf[0] && !strchr(buf, '0'), "nor the hog's below it (%s)", buf);
	check(http_get(port, "/metrics", body, sizeof(body)) == 200 &&
	      strstr(body, "koord_bpf_side_effects_total{class=\"SYSTEM\"} 1") &&
	      strstr(body, "koord_bpf_be_keepoff_cpus 1"),
	      "/metrics counts the side effect and the CPUs BE is kept off");
	check(http_get(port, "/api/containers", body, sizeof(body)) == 200 &&
	      strstr(body, "\"side_effect\"") && strstr(body, "\"SYSTEM\""),
	      "/api/containers shows it on the probe");
	stop(noise);
	check(stop_daemon(SIGTERM) == 0, "stops cleanly");
	after = cpuset_snapshot(&hier);
	check(before && after && !strcmp(before, after), "SIGTERM puts every cpuset back");
	/* the kernel refuses a child wider than its parent: EACCES, once warned at each stop */
	check(!log_has("Permission denied"), "... parents widened first: no write refused");
	free(before);
	free(after);
	pin_cpu(hog, 0);
}

/* Does the cpuset mirror's @r read @want in cpuset.cpus within @ms? */
static bool wait_cpuset(const char *r, const char *want, unsigned int ms, char *got, size_t len)
{
	char path[2 * PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s/cpuset.cpus", cpuset_tree(&hier), r);
	for (;;) {
		read_line(path, got, len);
		if (!strcmp(got, want) || ms < 100)
			return !strcmp(got, want);
		sleep_ms(100);
		ms -= 100;
	}
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		printf("# cannot write %s: %s\n", path, strerror(errno));
}

/*
 * One start for test_exclusive_cpus: the log names the CPUs kept from BE
 * (@said), the BE root and the hog end on @be_cpus, and SIGTERM puts every
 * cpuset back.
 */
static void exclusive_run(const char *said, const char *what, const char *be_cpus)
{
	char *before = cpuset_snapshot(&hier), *after, body[1 << 16], got[64];
	bool ok;

	start_daemon(NULL);
	ok = check(wait_log(said, 10000), "%s", what);
	ok &= check(wait_cpuset(BE_ROOT, be_cpus, 15000, got, sizeof(got)),
		    "... the BE root's cpuset leaves it out (%s)", got);
	ok &= check(wait_cpuset(BE_CTR, be_cpus, 1000, got, sizeof(got)), "... and the hog's (%s)", got);
	check(http_get(port, "/metrics", body, sizeof(body)) == 200 &&
	      strstr(body, "koord_bpf_be_exclusive_cpus 1\n"), "... koord_bpf_be_exclusive_cpus 1");
	if (!ok)
		show_file(log_path);
	check(stop_daemon(SIGTERM) == 0, "stops cleanly");
	after = cpuset_snapshot(&hier);
	check(before && after && !strcmp(before, after), "SIGTERM puts every cpuset back");
	free(before);
	free(after);
}

/*
 * A BE pod made while BE's cpuset leaves a CPU out copies BE's CPUs (the
 * runtime fills a new v1 cpuset from its parent's): no write of the
 * daemon's put them there, yet they are its doing, and the stop must give
 * the pod all of them back. Before, it kept the narrowed set for its life.
 */
static void new_pod_run(void)
{
	const char *pod = BE_ROOT "/pod4d3c2b1a-7777-4e4e-8f8f-0123456789ab";
	char be[2 * PATH_MAX], made[2 * PATH_MAX], path[2 * PATH_MAX + 32], cpus[64], mems[64];
	char got[64];
	pid_t task;
	bool ok;

	start_daemon(NULL);
	if (!check(wait_cpuset(BE_ROOT, "1", 15000, got, sizeof(got)),
		   "a new BE pod: BE's cpuset leaves CPU 0 out first (%s)", got)) {
		show_file(log_path);
		stop_daemon(SIGTERM);
		return;
	}
	/* as the runtime makes it: the cpu cgroup, then the cpuset one with its parent's values */
	snprintf(be, sizeof(be), "%s/%s", cpuset_tree(&hier), BE_ROOT);
	snprintf(made, sizeof(made), "%s/%s", cpuset_tree(&hier), pod);
	snprintf(path, sizeof(path), "%s/cpuset.cpus", be);
	read_line(path, cpus, sizeof(cpus));
	snprintf(path, sizeof(path), "%s/cpuset.mems", be);
	read_line(path, mems, sizeof(mems));
	ok = tree_make(&hier, pod) && !mkdir(made, 0755);
	snprintf(path, sizeof(path), "%s/cpuset.mems", made);
	write_file(path, mems);
	snprintf(path, sizeof(path), "%s/cpuset.cpus", made);
	write_file(path, cpus);
	/* and its first process: what runs makes the daemon walk at once */
	task = spawn(&hier, rel(pod), 1, WL_PROBE, 100000);
	snprintf(path, sizeof(path), "%s/cgroup.procs", made);
	snprintf(got, sizeof(got), "%d", task);
	write_file(path, got);
	check(ok && task > 0, "a BE pod made meanwhile, its process running");
	ok = check(wait_log("made holding 1", 5000), "the daemon takes the CPUs it holds (%s) for "
		   "its own doing", cpus);
	ok &= check(stop_daemon(SIGTERM) == 0, "stops cleanly");
	ok &= check(wait_cpuset(pod, "0-1", 0, got, sizeof(got)), "the stop gives the new pod CPUs "
		    "0-1 (%s)", got);
	if (!ok)
		show_file(log_path);
	stop(task);
	rmdir(made);
	snprintf(path, sizeof(path), "%s%s", hier.root, rel(pod));
	rmdir(path);
}

/*
 * The CPUs other containers hold are never in a BE cpuset (the cpuset
 * policy): those an LSE container is bound to, and those the kubelet's
 * static CPU manager gave a container of its own. Koordinator's cpusuppress
 * leaves both out; a BE cpuset of the right size on them is chosen again.
 */
static void test_exclusive_cpus(void)
{
	char own[2 * PATH_MAX], state[PATH_MAX], path[2 * PATH_MAX], got[64], *before, *after;
	pid_t lse;

	if (!*cpuset_tree(&hier)) {
		skip_part("CPUs held by other containers: no v1 cpuset hierarchy, or one CPU");
		return;
	}
	snprintf(state, sizeof(state), "%s/cpu_manager_state", state_dir);
	snprintf(own, sizeof(own),
		 "\"beWakeupPriority\": false, \"throttle\": {\"enable\": false}, "
		 "\"eviction\": {\"enable\": false}, \"effect\": {\"worsePercent\": 100000, "
		 "\"keepOff\": false}, \"classRules\": [{\"glob\": \"*/pod%s/cache\", \"qos\": \"LSE\"}], "
		 "\"kubelet\": {\"cpuManagerStateFile\": \"%s\"}", LSE_POD_UID, state);
	write_config("\"cpuSuppressThresholdPercent\": 100", own);
	lse = pod_spawn(LSE_CTR, 0, WL_PROBE, 100000);
	snprintf(path, sizeof(path), "%s/%s/cpuset.cpus", cpuset_tree(&hier), LSE_CTR);

	/* an LSE container bound to CPU 0 (no CPU manager state: the none policy) */
	write_file(path, "0");
	exclusive_run("CPUs kept from BE cpusets: the static CPU manager's containers' none, bound "
		      "LSE containers' 0", "an LSE container's binding is found", "1");
	new_pod_run();

	/* the static CPU manager: CPU 1 a container's own, CPU 0 the shared pool */
	write_file(path, "0-1");
	write_file(state, "{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":{\""
		   LSE_POD_UID "\":{\"cache\":\"1\"}},\"checksum\":1}");
	exclusive_run("CPUs kept from BE cpusets: the static CPU manager's containers' 1, bound LSE "
		      "containers' none", "the static CPU manager's exclusive CPU is read; the "
		      "unbound LSE container holds none", "0");

	/* a checkpoint that does not parse: said once, nothing kept from BE */
	write_file(state, "{\"policyName\":\"static\",\"defaultCpuSet\":");
	before = cpuset_snapshot(&hier);
	start_daemon(NULL);
	sleep_ms(6000);
	check(log_count("the kubelet's CPU manager state is not read") == 1,
	      "a broken CPU manager state: warned once (%d)",
	      log_count("the kubelet's CPU manager state is not read"));
	check(wait_cpuset(BE_ROOT, "0-1", 0, got, sizeof(got)), "... and BE keeps its CPUs (%s)", got);
	check(stop_daemon(SIGTERM) == 0, "stops cleanly");
	after = cpuset_snapshot(&hier);
	check(before && after && !strcmp(before, after), "nothing to put back");
	free(after);
	free(before);
	unlink(state);
	stop(lse);
}

/* A cgroup hierarchy reached through a symlink is not written. */
static void test_symlink_root(void)
{
	char link[PATH_MAX], arg[PATH_MAX + 32];

	snprintf(link, sizeof(link), "%s-cpu-link", state_dir);
	check(!symlink(hier.root, link), "a symlink to the cpu hierarchy");
	snprintf(arg, sizeof(arg), "--cgroup-root=%s", link);
	write_config("", "");
	start_daemon(arg);
	check(wait_log("reached through a symlink", 8000), "the daemon refuses to write through it");
	sleep_ms(2000);
	check(read_is(BE_ROOT, "cpu.shares", "2048"), "and the BE root is untouched");
	check(stop_daemon(SIGTERM) == 0, "stops cleanly");
	unlink(link);
}

/* Targeted action on the hog; then the culprit and the victim vanish. */
static void test_target_vanish(pid_t *probe, pid_t *hog)
{
	char body[PATH_MAX + 64];

	write_config("\"cpuSuppressThresholdPercent\": 100",
		     "\"beWakeupPriority\": false, \"eviction\": {\"enable\": false}, "
		     "\"interference\": {\"victimP99WaitUs\": 100, \"beStealPercent\": 1, "
		     "\"sustainedWindows\": 2}");
	start_daemon(NULL);
	check(wait_log("culprit ", 15000), "a victim is detected and its culprit acted on");
	check(log_has(rel(BE_CTR)), "the culprit named is the hog");
	stop(*hog);
	stop(*probe);
	*hog = *probe = 0;
	snprintf(body, sizeof(body), "%s%s", hier.root, rel(BE_CTR));
	rmdir(body);
	sleep_ms(3000);
	check(daemon_alive(daemon_pid) && http_get(port, "/healthz", body, sizeof(body)) == 200,
	      "the daemon survives its culprit and victim disappearing");
	check(stop_daemon(SIGTERM) == 0, "and stops cleanly");
}

/* The stand-in kubelet's PodList: the BE pod in @ns. */
static bool write_pods(const char *dir, const char *ns)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/pods", dir);
	snprintf(tmp, sizeof(tmp), "%s/pods.tmp", dir);
	f = fopen(tmp, "w");
	if (!f)
		return false;
	fprintf(f, "{\"kind\": \"PodList\", \"items\": [{\"metadata\": {\"uid\": \"%s\", "
		"\"name\": \"hog\", \"namespace\": \"%s\"}, \"status\": {\"qosClass\": \"BestEffort\"}}]}\n",
		strstr(BE_POD, "/pod") + 4, ns);
	return !fclose(f) && !rename(tmp, path);
}

/* A stand-in kubelet on the read-only port's plain HTTP: @dir/pods served at /pods. */
static pid_t kubelet_start(const char *dir, int kport)
{
	char portarg[16], body[256];
	pid_t pid = fork();
	int i;

	if (pid == 0) {
		snprintf(portarg, sizeof(portarg), "%d", kport);
		execlp("python3", "python3", "-m", "http.server", portarg, "--bind", "127.0.0.1",
		       "--directory", dir, (char *)NULL);
		_exit(127);
	}
	for (i = 0; pid > 0 && i < 100 && http_get(kport, "/pods", body, sizeof(body)) != 200; i++)
		sleep_ms(100);
	return pid;
}

/* The BE pod's process: still running after @ms? */
static bool survives(pid_t pid, unsigned int ms)
{
	int st;

	for (unsigned int t = 0; t < ms; t += 100) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return false;
		sleep_ms(100);
	}
	return true;
}

/*
 * An eviction hook that takes its time (up to 30 s) runs while the periods go
 * on: /healthz stays 200, /metrics answers. It once ran under the state lock,
 * and a period waited for it: /healthz said "stale" (503) past 5 s, and the
 * liveness probe restarted the daemon. SIGTERM kills it.
 */
static void test_evict_hook(int kport)
{
	char hook[PATH_MAX], cfg[PATH_MAX * 2 + 256], body[256];
	pid_t hog = spawn(&hier, rel(BE_CTR), 1, WL_HOG, 0);
	__u64 t0;
	int healthy = 0, i;
	FILE *f;

	snprintf(hook, sizeof(hook), "%s/hook.sh", state_dir);
	f = fopen(hook, "w");
	if (f) {
		fprintf(f, "#!/bin/sh\nexec sleep 25\n");
		fclose(f);
	}
	check(f && !chmod(hook, 0700) && hog > 0, "a hook that sleeps 25 s, and a BE pod");
	snprintf(cfg, sizeof(cfg), "\"beWakeupPriority\": false, \"kubelet\": {\"url\": "
		 "\"http://127.0.0.1:%d/pods\", \"tokenFile\": \"\", \"intervalSeconds\": 1}, "
		 "\"eviction\": {\"backend\": \"hook\", \"hook\": [\"%s\"], \"coolDownSeconds\": 0}",
		 kport, hook);
	write_config("\"memoryEvictThresholdPercent\": 1", cfg);
	start_daemon(NULL);
	check(wait_log("through the hook, pid ", 10000), "memory above the threshold: the hook runs");
	for (i = 0; i < 8; i++) {
		sleep_ms(1000);
		healthy += http_get(port, "/healthz", body, sizeof(body)) == 200 &&
			   http_get(port, "/metrics", body, sizeof(body)) == 200;
	}
	check(healthy == 8, "while it runs, /healthz and /metrics answer 200 (%d of 8 s)", healthy);
	t0 = now_mono_ns();
	check(stop_daemon(SIGTERM) == 0, "SIGTERM: stops cleanly with the hook running");
	check(now_mono_ns() - t0 < 3000000000ull && wait_log("eviction hook for ", 0),
	      "... at once (%.1f s), the hook killed and said so", (now_mono_ns() - t0) / 1e9);
	stop(hog);
}

/* A stand-in API server (tests/unit/data/kubelet_server.py, plain HTTP) recording into @dir. */
static pid_t apiserver_start(const char *dir, int *aport)
{
	char portf[PATH_MAX + 8], buf[16];
	pid_t pid;
	int i;

	snprintf(portf, sizeof(portf), "%s/port", dir);
	pid = fork();
	if (pid == 0) {
		execlp("python3", "python3", "tests/unit/data/kubelet_server.py", "-", "-", "-",
		       "tests/unit/data", portf, dir, (char *)NULL);
		_exit(127);
	}
	for (i = 0, buf[0] = '\0'; pid > 0 && i < 100 && !buf[0]; i++) {
		sleep_ms(100);
		read_line(portf, buf, sizeof(buf));
	}
	*aport = atoi(buf);
	return pid;
}

/*
 * backend "api": the BE pod is evicted through the Eviction API of a
 * stand-in API server: a POST of a policy/v1 Eviction naming the pod, its
 * uid a precondition. Its process runs on: the kubelet stops a pod evicted
 * that way, not koord-bpf. A PodDisruptionBudget's 429 is a failure, said
 * with the API server's reason and counted.
 */
static void test_evict_api(int kport)
{
	char dir[PATH_MAX], own[2 * PATH_MAX], rec[PATH_MAX + 16], status[PATH_MAX + 16];
	char line[2048], body[1 << 16];
	pid_t hog = spawn(&hier, rel(BE_CTR), 1, WL_HOG, 0), api;
	int aport = 0;

	snprintf(dir, sizeof(dir), "%s/apiserver", state_dir);
	mkdir(dir, 0700);
	api = apiserver_start(dir, &aport);
	check(hog > 0 && api > 0 && aport > 0, "a BE pod, and a stand-in API server (port %d)", aport);
	snprintf(own, sizeof(own), "\"beWakeupPriority\": false, \"kubelet\": {\"url\": "
		 "\"http://127.0.0.1:%d/pods\", \"tokenFile\": \"\", \"intervalSeconds\": 1}, "
		 "\"eviction\": {\"backend\": \"api\", \"api\": {\"url\": \"http://127.0.0.1:%d\"}, "
		 "\"coolDownSeconds\": 0, \"maxPerMinute\": 600}", kport, aport);
	write_config("\"memoryEvictThresholdPercent\": 1", own);
	start_daemon(NULL);
	check(wait_log("the API server accepted the eviction (HTTP 201: Success)", 10000),
	      "memory above the threshold: the BE pod evicted through the Eviction API");
	snprintf(rec, sizeof(rec), "%s/evictions", dir);
	read_line(rec, line, sizeof(line));
	check(strstr(line, "\"path\": \"/api/v1/namespaces/batch/pods/hog/eviction\"") &&
	      strstr(line, "\"apiVersion\": \"policy/v1\"") && strstr(line, "\"Eviction\"") &&
	      strstr(line, strstr(BE_POD, "/pod") + 4) && strstr(line, "application/json"),
	      "... one POST of a policy/v1 Eviction of batch/hog, its uid a precondition");
	if (!check(survives(hog, 1000), "... its process runs on: the kubelet stops it, not koord-bpf"))
		printf("#   %s\n", line);
	check(stop_daemon(SIGTERM) == 0, "stops cleanly");

	snprintf(status, sizeof(status), "%s/eviction-status", dir);
	write_file(status, "429");
	start_daemon(NULL);
	check(wait_log("failed: a PodDisruptionBudget does not allow it now (HTTP 429: Cannot evict "
		       "pod as it would violate the pod's disruption budget.)", 10000),
	      "a PodDisruptionBudget's 429: the eviction failed, with the API server's reason");
	check(http_get(port, "/metrics", body, sizeof(body)) == 200 &&
	      !strstr(body, "koord_bpf_eviction_failures_total 0\n") &&
	      strstr(body, "koord_bpf_eviction_failures_total "), "... counted as a failed eviction");
	check(stop_daemon(SIGTERM) == 0, "stops cleanly");
	if (api > 0) {
		kill(api, SIGTERM);
		waitpid(api, NULL, 0);
	}
	stop(hog);
}

/*
 * Memory above the threshold: the BE pod is killed (cgroup.kill or freezer),
 * but only once the kubelet says whose pod it is and that the cluster can
 * spare it. Without the kubelet, every pod under besteffort was a candidate,
 * kube-proxy among them (BestEffort on kubeadm).
 */
static void test_evict(void)
{
	pid_t hog = spawn(&hier, rel(BE_CTR), 1, WL_HOG, 0), kubelet;
	char dir[PATH_MAX], own[PATH_MAX + 128];
	int kport = port + 1;

	check(hog > 0, "a BE pod to evict");
	write_config("\"memoryEvictThresholdPercent\": 1", "\"beWakeupPriority\": false");
	start_daemon(NULL);
	check(wait_log("no pod may be evicted: 1 without fresh kubelet metadata (no kubelet.url)",
		       8000), "memory above the threshold, no kubelet: no pod may be evicted, and why");
	check(survives(hog, 2000), "... the BE pod runs on");
	check(stop_daemon(SIGTERM) == 0, "stops cleanly");

	snprintf(dir, sizeof(dir), "%s/kubelet", state_dir);
	mkdir(dir, 0700);
	check(write_pods(dir, "kube-system"), "the stand-in kubelet lists the BE pod in kube-system");
	kubelet = kubelet_start(dir, kport);
	snprintf(own, sizeof(own), "\"beWakeupPriority\": false, \"kubelet\": {\"url\": "
		 "\"http://127.0.0.1:%d/pods\", \"tokenFile\": \"\", \"intervalSeconds\": 1}", kport);
	write_config("\"memoryEvictThresholdPercent\": 1", own);
	start_daemon(NULL);
	check(wait_log("no pod may be evicted: 0 without fresh kubelet metadata, 0 of critical "
		       "priority, 0 static, 1 in kube-system", 8000),
	      "a pod in kube-system is never evicted (without eviction.systemPods)");
	check(survives(hog, 1000), "... it runs on");
	check(write_pods(dir, "batch"), "the pod is listed in batch");
	check(!survives(hog, 8000), "memory above memoryEvictThresholdPercent: the BE pod's process is killed");
	check(wait_log("evicted ", 2000) && log_has("(memory)"), "the eviction is logged with its reason");
	check(stop_daemon(SIGTERM) == 0, "stops cleanly");
	test_evict_hook(kport);
	test_evict_api(kport);
	if (kubelet > 0) {
		kill(kubelet, SIGTERM);
		waitpid(kubelet, NULL, 0);
	}
}

int main(void)
{
	pid_t probe, hog;
	char *before;

	require_bpf_env(&hier);
	if (!daemon_test_init(state_dir, cfg_path, sizeof(cfg_path), log_path, sizeof(log_path)))
		return 1;
	port = 20000 + getpid() % 20000;
	if (!tree_make(&hier, LS_CTR) || !tree_make(&hier, BE_CTR) || !tree_make(&hier, OTHER_BE) ||
	    !tree_make(&hier, NOISE) || !tree_make(&hier, LSE_CTR))
		return 1;
	/*
	 * A BE root's weight other than the kernel's default, as koordlet gives
	 * a YARN root (vcores x 1024): putting cpu.idle back resets it to 1024,
	 * and the SIGTERM and replay snapshots below must find it back. Not
	 * kubelet's 2 for besteffort: at 2 the hog barely holds the probe
	 * (p99.9 65 us, docs/enforcement.md), and this test needs the harm.
	 */
	if (cgroup_write(&hier, rel(BE_ROOT), "cpu.shares", "2048"))
		return 1;
	probe = pod_spawn(LS_CTR, 0, WL_SERVER, 1000);
	hog = pod_spawn(BE_CTR, 0, WL_HOG, 0);
	if (probe < 0 || hog < 0)
		return 1;
	before = cgroup_snapshot(&hier);
	test_default(probe, hog, before);
	test_crash(before);
	test_dry_run(before);
	test_foreign_writer(before);
	test_symlink_root();
	/* a quota hurts a task that only sleeps and wakes (docs/design.md) */
	stop(probe);
	probe = pod_spawn(LS_CTR, 0, WL_PROBE, 1000);
	test_rollback();
	test_quota_under_limit();
	test_advise();
	stop(probe);
	probe = pod_spawn(LS_CTR, 0, WL_SERVER, 1000);
	test_target_cpuset(probe, hog);
	test_target_returns(hog);
	test_side_effect(hog);
	test_exclusive_cpus();
	pin_cpu(hog, 0);
	test_target_vanish(&probe, &hog);
	tree_make(&hier, BE_CTR);
	test_evict();
	if (daemon_alive(daemon_pid))
		stop_daemon(SIGKILL);
	pod_unmirror(&hier);
	free(before);
	return daemon_test_end("test_enforce", state_dir);
}
