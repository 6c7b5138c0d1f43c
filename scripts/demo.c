// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `sudo make demo`: an online probe (a server that works 300 us per
 * request, 1000 requests a second) and a BE CPU hog share CPU 0 in
 * kubepods-shaped cgroups. koord-interference names the hog; the daemon
 * starts with enforcement on and default thresholds; the probe's run-queue
 * waits are read with ftrace before and after it acts; the daemon's own
 * account of each action and its measured effect is shown; on SIGTERM every
 * cgroup value must be back to its original. Everything is removed at exit.
 * It fails (exit 1) unless the probe's p99.9 wait fell and all was restored.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemonlib.h"
#include "testlib.h"

#define LS_CTR	"kubepods/burstable/pod5f6e3c1a-6666-4a4a-9b9b-0123456789ab/probe"
#define BE_CTR	"kubepods/besteffort/pod7a8b9c0d-7777-4b4b-8c8c-0123456789ab/hog"
#define MEASURE_MS 5000

static struct cpu_hierarchy hier;
static char dir[] = "/tmp/koord-demo-XXXXXX";
static char log_path[PATH_MAX];
static off_t log_off;

/* @r below the demo's cgroup tree. */
static const char *in_tree(const char *r)
{
	static char buf[2][PATH_MAX];
	static int i;

	i ^= 1;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", test_cgroup_base(&hier), r);
	return buf[i];
}

static void step(const char *fmt, const char *arg)
{
	printf("\n== ");
	printf(fmt, arg);
	printf("\n");
	fflush(stdout);
}

/* Print what the daemon logged since the last call. */
static void show_log(void)
{
	char buf[4096];
	ssize_t n;
	int fd = open(log_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((n = pread(fd, buf, sizeof(buf), log_off)) > 0) {
		fwrite(buf, 1, n, stdout);
		log_off += n;
	}
	close(fd);
	fflush(stdout);
}

/* "12.5x lower", "10.0x higher" or "unchanged": the direction said, the factor >= 1. */
static const char *change(__u64 before, __u64 after, char *buf, size_t len)
{
	if (!before || !after || before == after)
		snprintf(buf, len, "%s", before == after ? "unchanged" : "not measured on a side");
	else if (after < before)
		snprintf(buf, len, "%.1fx lower", (double)before / after);
	else
		snprintf(buf, len, "%.1fx higher", (double)after / before);
	return buf;
}

static void show_tail(const char *when, pid_t probe, __u64 *p999, __u64 *max)
{
	size_t n;

	probe_tail(probe, MEASURE_MS, p999, max, &n);
	printf("probe run-queue waits %s (ftrace, %d s, %zu waits): p99.9 %.0f us, max %.0f us\n",
	       when, MEASURE_MS / 1000, n, *p999 / 1e3, *max / 1e3);
}

static void show_metrics(int port)
{
	static const char *const keep[] = {
		"koord_bpf_be_wakeup_priority ", "koord_bpf_actions_total ",
		"koord_bpf_rollbacks_total ", "koord_bpf_victims ", "koord_bpf_throttled ",
		"koord_bpf_cgroup_writes_total{result=\"written\"}", "koord_bpf_side_effects_total",
		"koord_bpf_transition_stalls_total ", "koord_bpf_be_keepoff_cpus ",
	};
	static char body[1 << 22];
	char *line, *save;
	size_t i;

	if (http_get(port, "/metrics", body, sizeof(body)) != 200)
		return;
	for (line = strtok_r(body, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
			if (!strncmp(line, keep[i], strlen(keep[i])))
				printf("  %s\n", line);
}

int main(void)
{
	__u64 b999, bmax, a999, amax;
	char buf[64];
	char cfg[PATH_MAX], cmd[PATH_MAX + 128], *before, *after, *cpusets_before, *cpusets_after;
	int port = 20000 + getpid() % 20000, rc;
	bool ok;
	cpu_set_t one;
	pid_t probe, hog, d;
	FILE *f;

	require_bpf_env(&hier);
	if (!mkdtemp(dir))
		return 1;
	snprintf(cfg, sizeof(cfg), "%s/config.json", dir);
	snprintf(log_path, sizeof(log_path), "%s/koord-bpf.log", dir);
	/* the demo and the daemon stay off CPU 0, where the probe meets the hog */
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		sched_setaffinity(0, sizeof(one), &one);

	if (!test_cgroup_make(&hier, LS_CTR) || !test_cgroup_make(&hier, BE_CTR))
		return 1;
	step("an online server (LS) and a BE CPU hog share CPU 0, below %s",
	     test_cgroup_base(&hier));
	probe = spawn(&hier, in_tree(LS_CTR), 0, WL_SERVER, 1000);
	hog = spawn(&hier, in_tree(BE_CTR), 0, WL_HOG, 0);
	if (probe < 0 || hog < 0)
		return 1;
	/* as the kubelet makes pods: in every v1 hierarchy (cpuset, cpuacct, memory) */
	if (*cpuset_tree(&hier) && !(pod_mirror(&hier, LS_CTR, probe) && pod_mirror(&hier, BE_CTR, hog)))
		printf("the pods could not be made in the other v1 hierarchies\n");
	sleep_ms(500);

	step("koord-interference -d 3: who is hurting whom%s", "");
	if (system("build/koord-interference -d 3 --top 4"))
		printf("koord-interference failed\n");

	step("without koord-bpf acting%s", "");
	show_tail("before", probe, &b999, &bmax);

	f = fopen(cfg, "w");
	fprintf(f, "{\"resourceUsedThresholdWithBE\": {\"enable\": true},\n"
		" \"koordBPF\": {\"cgroupRoots\": [\"%s/kubepods\"], \"stateDir\": \"%s/state\"}}\n",
		test_cgroup_base(&hier), dir);
	fclose(f);
	step("koord-bpf --config %s (enforcement on, default thresholds)", cfg);
	before = cgroup_snapshot(&hier);
	cpusets_before = cpuset_snapshot(&hier);
	d = daemon_start(cfg, log_path, port, NULL);
	if (!file_has(log_path, "action:", 10000)) {
		show_log();
		printf("the daemon did not act\n");
		daemon_stop(d, SIGKILL);
		return 1;
	}
	sleep_ms(1000);
	show_log();

	step("with koord-bpf acting%s", "");
	show_tail("after", probe, &a999, &amax);
	printf("p99.9 %s, ", change(b999, a999, buf, sizeof(buf)));
	printf("max %s\n", change(bmax, amax, buf, sizeof(buf)));
	ok = a999 && a999 < b999;

	step("what each action did (the daemon's log and /metrics)%s", "");
	file_has(log_path, "effect:", 5000);
	show_log();
	show_metrics(port);

	step("stopping koord-bpf (SIGTERM)%s", "");
	rc = daemon_stop(d, SIGTERM);
	show_log();
	after = cgroup_snapshot(&hier);
	cpusets_after = cpuset_snapshot(&hier);
	stop(probe);
	stop(hog);
	pod_unmirror(&hier);
	if (rc || !before || !after || strcmp(before, after) || !cpusets_before ||
	    !cpusets_after || strcmp(cpusets_before, cpusets_after)) {
		printf("FAILED: exit %d; cgroup values %s\n", rc,
		       before && after && !strcmp(before, after) && cpusets_before &&
		       cpusets_after && !strcmp(cpusets_before, cpusets_after) ?
		       "restored" : "NOT restored");
		return 1;
	}
	printf("every cgroup value is back to its original (exit status %d)\n", rc);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("could not remove %s\n", dir);
	free(before);
	free(after);
	free(cpusets_before);
	free(cpusets_after);
	step("done: the demo's cgroups and processes are removed%s", "");
	if (!ok)
		printf("FAILED: the probe's p99.9 wait did not fall\n");
	return ok ? 0 : 1;
}
