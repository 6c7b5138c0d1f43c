// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The closed loop end to end, with ftrace as the judge: an online server
 * pinned to CPU 0 next to a BE hog pinned there, pods made in every v1
 * hierarchy as the kubelet makes them, the daemon at default settings.
 * (a) BE harm only: the probe's p99.9 wait (the median of 3 windows) is at
 *     least 3x lower with the daemon than without it.
 * (b) the same with unpinned system noise: with the daemon it is no more than
 *     25% + 100 us worse than without (system tasks placed next to the
 *     online ones: the loop must see it and act). Without is measured
 *     before the daemon and again after its stop, and the worse of the two
 *     counts: background load drifts (a loaded run: 5482 us before, 11814
 *     us with a daemon that had rolled every action back, so the node was
 *     as without it).
 * (c) in both, no probe wait of 10 ms or more within a second after a write
 *     of the daemon (actions, rollbacks, the restore at its stop) that is
 *     longer than any the probe had without the daemon: a wait the node
 *     has anyway is not the write's, nor one that the machine's background
 *     work held for most of it (ftrace names who held CPU 0: a process this
 *     test did not start, seen holding the probe as long with no write).
 * Usage: test_tail [RUNS] (default 1; KOORD_TAIL_RUNS too); every run is
 * judged, and the tallies are printed at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemonlib.h"
#include "testlib.h"

#define LS_CTR	"kubepods/burstable/pod5f6e3c1a-7777-4a4a-9b9b-0123456789ab/server"
#define BE_CTR	"kubepods/besteffort/pod7a8b9c0d-8888-4b4b-8c8c-0123456789ab/hog"
#define BE_ROOT	"kubepods/besteffort"
#define NOISE	"system.slice/noise"	/* outside kubepods: SYSTEM */
#define NNOISE	3
#define WINDOWS	3
#define WINDOW_MS 3000
#define STALL_NS 10000000ull
#define AFTER_WRITE_NS 1000000000ull

static struct cpu_hierarchy hier;
static char state_dir[] = "/tmp/koord-tail-XXXXXX";
static char cfg_path[PATH_MAX], log_path[PATH_MAX];
static int port;

/* The daemon's writes, seen by polling the files it writes (v1 cgroup files have no inotify). */
struct write_seen {
	__u64 at_ns;
	char what[160];
};
static struct {
	pthread_t thread;
	atomic_bool stop;
	struct write_seen v[256];
	size_t n;
} watch;

static const char *const watched[][2] = {
	{ "cpu", BE_ROOT "/cpu.idle" }, { "cpu", BE_ROOT "/cpu.shares" },
	{ "cpu", BE_ROOT "/cpu.cfs_quota_us" }, { "cpu", BE_CTR "/cpu.cfs_quota_us" },
	{ "cpuset", BE_ROOT "/cpuset.cpus" }, { "cpuset", BE_CTR "/cpuset.cpus" },
};
#define NWATCHED (sizeof(watched) / sizeof(watched[0]))

static void watched_path(size_t i, char *buf, size_t len)
{
	if (!strcmp(watched[i][0], "cpu"))
		snprintf(buf, len, "%s%s", hier.root, tree_path(&hier, watched[i][1]));
	else
		snprintf(buf, len, "%s/%s", cpuset_tree(&hier), watched[i][1]);
}

static void *watcher(void *arg)
{
	char last[NWATCHED][64], path[PATH_MAX + 64], now[64];
	size_t i;

	for (i = 0; i < NWATCHED; i++) {
		watched_path(i, path, sizeof(path));
		read_line(path, last[i], sizeof(last[i]));
	}
	while (!atomic_load(&watch.stop)) {
		for (i = 0; i < NWATCHED; i++) {
			watched_path(i, path, sizeof(path));
			read_line(path, now, sizeof(now));
			if (!strcmp(now, last[i]))
				continue;
			if (watch.n < sizeof(watch.v) / sizeof(watch.v[0])) {
				watch.v[watch.n].at_ns = now_mono_ns();
				snprintf(watch.v[watch.n].what, sizeof(watch.v[0].what), "%s %s -> %s",
					 watched[i][1], last[i], now);
				watch.n++;
			}
			snprintf(last[i], sizeof(last[i]), "%s", now);
		}
		sleep_ms(2);
	}
	return arg;
}

/* p99.9 of the waits in @fw that ended in [from, from + WINDOW_MS) (0 when none). */
static __u64 window_p999(const struct ftrace_waits *fw, __u64 from, size_t *n)
{
	__u64 to = from + WINDOW_MS * 1000000ull, *v = malloc((fw->n + 1) * sizeof(*v)), q = 0;
	size_t i, k = 0;

	for (i = 0; v && i < fw->n; i++)
		if (fw->end_ns[i] >= from && fw->end_ns[i] < to)
			v[k++] = fw->len_ns[i];
	if (k)
		q = quantile(v, k, 0.999);
	free(v);
	*n = k;
	return q;
}

/* The median over WINDOWS windows from @from of the p99.9 wait; each printed. */
static __u64 median_p999(const struct ftrace_waits *fw, __u64 from, const char *label)
{
	__u64 q[WINDOWS];
	size_t n, i;

	printf("# %s: p99.9 by window", label);
	for (i = 0; i < WINDOWS; i++) {
		q[i] = window_p999(fw, from + i * WINDOW_MS * 1000000ull, &n);
		printf(" %.0f us (%zu waits)%s", q[i] / 1e3, n, i + 1 < WINDOWS ? "," : "\n");
	}
	return quantile(q, WINDOWS, 0.5);
}

/* The test's own tasks, to name them among the holders of the probe's CPU. */
static struct {
	pid_t pid;
	const char *role;
} ours[NNOISE + 3];

static void own(size_t i, pid_t pid, const char *role)
{
	ours[i].pid = pid;
	ours[i].role = role;
}

/* @holder ("comm/pid") by its role in the test where it is one of ours. */
static const char *holder_name(const char *holder)
{
	const char *slash = strrchr(holder, '/');
	size_t i;

	for (i = 0; slash && i < sizeof(ours) / sizeof(ours[0]); i++)
		if (ours[i].pid && atol(slash + 1) == ours[i].pid)
			return ours[i].role;
	return holder;
}

/* Who held the probe's CPU during its waits of 1 ms or more in the windows from @from. */
static void print_holders(const struct ftrace_waits *fw, __u64 from)
{
	__u64 to = from + WINDOWS * WINDOW_MS * 1000000ull, ns[8] = {};
	const char *who[8];
	size_t i, k, nw = 0, n = 0, cnt[8] = {};

	for (i = 0; i < fw->n; i++) {
		if (fw->end_ns[i] < from || fw->end_ns[i] >= to || fw->len_ns[i] < 1000000)
			continue;
		nw++;
		if (!fw->holder_ns[i])
			continue;
		for (k = 0; k < n && strcmp(who[k], holder_name(fw->holder[i])); k++)
			;
		if (k == n && n < 8)
			who[n++] = holder_name(fw->holder[i]);
		if (k < n) {
			cnt[k]++;
			ns[k] += fw->holder_ns[i];
		}
	}
	printf("# waits >= 1 ms: %zu; their CPU held most by", nw);
	for (k = 0; k < n; k++)
		printf(" %s %zu (%.1f ms)%s", who[k], cnt[k], ns[k] / 1e6, k + 1 < n ? "," : "");
	printf("%s\n", n ? "" : " none");
}

/*
 * Is @holder ("comm/pid") the machine's own background work: a live user
 * process (kernel threads have no cmdline) that this test did not start?
 * One that is gone counts as ours.
 */
static bool background(const char *holder)
{
	const char *slash = strrchr(holder, '/');
	char path[64], buf[512], *p;
	long ppid = -1;
	ssize_t n;
	int fd;

	if (!slash)
		return false;
	snprintf(path, sizeof(path), "/proc/%s/stat", slash + 1);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')');	/* "pid (comm) S ppid ..." */
	if (!p || sscanf(p + 1, " %*c %ld", &ppid) != 1 || ppid == getpid() || atol(slash + 1) == getpid())
		return false;
	snprintf(path, sizeof(path), "/proc/%s/cmdline", slash + 1);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, 1);
	close(fd);
	return n > 0;
}

/* Did the machine's background work hold wait @i for most of it? */
static bool background_held(const struct ftrace_waits *fw, size_t i)
{
	return fw->holder_ns[i] * 2 >= fw->len_ns[i] && background(fw->holder[i]);
}

/*
 * Waits of STALL_NS or more, and over @worst_without, that began within
 * AFTER_WRITE_NS after a write seen, unless the machine's background work
 * held them (that it runs next to the probe at all is the action's side
 * effect: (b) judges it); each long wait is printed.
 */
static size_t stalls_after_writes(const struct ftrace_waits *fw, __u64 worst_without)
{
	size_t i, j, n = 0;

	for (i = 0; i < fw->n; i++) {
		const struct write_seen *near = NULL;

		if (fw->len_ns[i] < STALL_NS)
			continue;
		if (fw->len_ns[i] <= worst_without) {
			printf("# a %.1f ms wait, no longer than without the daemon\n",
			       fw->len_ns[i] / 1e6);
			continue;
		}
		for (j = 0; j < watch.n; j++)
			if (fw->end_ns[i] >= watch.v[j].at_ns &&
			    fw->end_ns[i] - fw->len_ns[i] <= watch.v[j].at_ns + AFTER_WRITE_NS)
				near = &watch.v[j];
		printf("# a %.1f ms wait%s%s", fw->len_ns[i] / 1e6, near ? " after the write " : "",
		       near ? near->what : ", no write of the daemon before it");
		if (fw->holder_ns[i])
			printf(" (CPU 0 held by %s for %.1f ms of it%s)", holder_name(fw->holder[i]),
			       fw->holder_ns[i] / 1e6, background_held(fw, i) ?
			       ": background work, not the write's" : "");
		printf("\n");
		n += near && !background_held(fw, i);
	}
	return n;
}

/* Has the loop settled: the wake-up priority judged and, after a side effect, the keep-off? */
static void wait_settled(void)
{
	if (!file_has(log_path, "effect: BE wake-up priority", 20000))
		printf("# the wake-up priority was not judged in 20 s\n");
	if (file_has(log_path, "side effect of BE wake-up", 0) &&
	    !file_has(log_path, "effect: BE kept off", 20000))
		printf("# a side effect, and no keep-off judged in 20 s\n");
}

struct outcome {
	__u64 without, with;	/* median p99.9 */
	__u64 after;		/* ... without the daemon again, after its stop */
	__u64 worst_without;	/* the longest wait without the daemon */
	size_t stalls;		/* after writes */
	bool measured;
};

/*
 * WINDOWS windows of the probe's waits without the daemon: their median
 * p99.9 into *@median, the longest wait into *@worst (when given). False
 * when ftrace failed or its record is not whole.
 */
static bool without_daemon(pid_t probe, const char *label, __u64 *median, __u64 *worst)
{
	struct ftrace_waits fw = {};
	__u64 t0 = now_mono_ns();
	bool whole;

	if (ftrace_start(probe))
		return false;
	sleep_ms(WINDOWS * WINDOW_MS);
	if (ftrace_stop(probe, &fw))
		return false;
	*median = median_p999(&fw, t0, label);
	print_holders(&fw, t0);
	for (size_t i = 0; worst && i < fw.n; i++)
		if (fw.len_ns[i] > *worst)
			*worst = fw.len_ns[i];
	whole = !fw.overrun;
	ftrace_waits_free(&fw);
	return whole;
}

static void one(pid_t probe, pid_t hog, const char *label, struct outcome *o)
{
	struct ftrace_waits fw = {};
	char cmd[PATH_MAX + 128];
	bool whole;
	__u64 t1;
	pid_t d;

	memset(o, 0, sizeof(*o));
	pin_cpu(probe, 0);
	pin_cpu(hog, 0);
	whole = without_daemon(probe, "without the daemon", &o->without, &o->worst_without);

	truncate(log_path, 0);
	watch.n = 0;
	atomic_store(&watch.stop, false);
	if (ftrace_start(probe) || pthread_create(&watch.thread, NULL, watcher, NULL))
		return;
	d = daemon_start(cfg_path, log_path, port, NULL);
	wait_settled();
	t1 = now_mono_ns();
	sleep_ms(WINDOWS * WINDOW_MS);
	daemon_stop(d, SIGTERM);
	sleep_ms(1000);		/* the restore's transition */
	atomic_store(&watch.stop, true);
	pthread_join(watch.thread, NULL);
	if (ftrace_stop(probe, &fw))
		return;
	if (fw.overrun)
		printf("# ftrace's buffer overwrote %zu events: the record is not whole\n",
		       fw.overrun);
	o->with = median_p999(&fw, t1, "with the daemon");
	own(NNOISE + 2, d, "the daemon");
	print_holders(&fw, t1);
	o->stalls = stalls_after_writes(&fw, o->worst_without);
	whole &= !fw.overrun;
	ftrace_waits_free(&fw);
	snprintf(cmd, sizeof(cmd), "grep -E 'effect|action|side effect|transition|kept off' %s | "
		 "sed 's/^/#   /'", log_path);
	if (system(cmd) < 0)
		printf("# (no daemon log)\n");

	/* the background's drift: without the daemon again, everything it wrote put back */
	o->measured = without_daemon(probe, "without the daemon, after it", &o->after, NULL) &&
		      whole;
	printf("# %s: median p99.9 %.0f us without the daemon, %.0f us with it, %.0f us after it "
	       "(max without %.0f us)\n", label, o->without / 1e3, o->with / 1e3, o->after / 1e3,
	       o->worst_without / 1e3);
}

/* (b): with the daemon no more than 25% + 100 us worse than the worse baseline. */
static bool no_worse(const struct outcome *o)
{
	__u64 base = o->without > o->after ? o->without : o->after;

	return o->measured && o->with <= base * 1.25 + 100000;
}

int main(int argc, char **argv)
{
	const char *env = getenv("KOORD_TAIL_RUNS");
	int runs = argc > 1 ? atoi(argv[1]) : env ? atoi(env) : 1, r, i;
	int ok_a = 0, ok_b = 0, ok_c = 0;
	pid_t probe, hog, noise[NNOISE];
	struct outcome a, b;

	require_bpf_env(&hier);
	ftrace_watch_cpu(0);	/* who held the probe's CPU during its long waits */
	if (runs < 1 || !daemon_test_init(state_dir, cfg_path, sizeof(cfg_path), log_path,
					  sizeof(log_path)))
		return 1;
	port = 20000 + getpid() % 20000;
	if (!*cpuset_tree(&hier)) {
		skip_part("the end-to-end loop: no v1 cpuset hierarchy, or one CPU");
		return daemon_test_end("test_tail", state_dir);
	}
	if (!tree_make(&hier, LS_CTR) || !tree_make(&hier, BE_CTR) || !tree_make(&hier, NOISE) ||
	    !daemon_config(cfg_path, true, "", tree_path(&hier, "kubepods"), state_dir, ""))
		return 1;
	probe = spawn(&hier, tree_path(&hier, LS_CTR), 0, WL_SERVER, 1000);
	hog = spawn(&hier, tree_path(&hier, BE_CTR), 0, WL_HOG, 0);
	own(0, probe, "the probe");
	own(1, hog, "the BE hog");
	check(probe > 0 && hog > 0 && pod_mirror(&hier, LS_CTR, probe) &&
	      pod_mirror(&hier, BE_CTR, hog), "the pods, made in every v1 hierarchy");
	for (r = 1; r <= runs; r++) {
		printf("# run %d of %d\n", r, runs);
		one(probe, hog, "(a) BE harm only", &a);
		check(a.measured && a.with * 3 <= a.without,
		      "run %d (a): the probe's p99.9 wait is at least 3x lower with the daemon "
		      "(%.0f -> %.0f us)", r, a.without / 1e3, a.with / 1e3);
		for (i = 0; i < NNOISE; i++) {
			noise[i] = spawn(&hier, tree_path(&hier, NOISE), -1, WL_SERVER, 2000);
			own(2 + i, noise[i], "system noise");
		}
		one(probe, hog, "(b) and system noise", &b);
		for (i = 0; i < NNOISE; i++)
			stop(noise[i]);
		check(no_worse(&b),
		      "run %d (b): with system noise, no more than 25%% + 100 us worse than the "
		      "worse of before and after it (%.0f, %.0f -> %.0f us)", r, b.without / 1e3,
		      b.after / 1e3, b.with / 1e3);
		check(a.measured && b.measured && !a.stalls && !b.stalls,
		      "run %d (c): no probe wait >= 10 ms (and over any without the daemon) in 1 s "
		      "after a write (%zu, %zu)", r,
		      a.stalls, b.stalls);
		ok_a += a.measured && a.with * 3 <= a.without;
		ok_b += no_worse(&b);
		ok_c += a.measured && b.measured && !a.stalls && !b.stalls;
	}
	printf("# tally of %d run(s): (a) %d, (b) %d, (c) %d\n", runs, ok_a, ok_b, ok_c);
	stop(probe);
	stop(hog);
	pod_unmirror(&hier);
	return daemon_test_end("test_tail", state_dir);
}
