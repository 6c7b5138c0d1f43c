// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon under faults, on real cgroups (an online server probe and a BE
 * hog in kubepods-shaped cgroups, enforcement on):
 * - a state dir that is full (the journal cannot be written) or read-only:
 *   the cgroup must stay unchanged and the log must say why;
 * - a corrupt or truncated journal: the start is refused with the reason and
 *   nothing is restored from it; one naming a file outside the roots: that
 *   value is set aside, the others restored, and the daemon starts;
 * - kill -9 at a random moment while the daemon acts (in the 1 s after its
 *   first action), 20 times, each followed by a start with enforcement off:
 *   the journal alone must put every value back; again with the cpuset
 *   policy, the pods mirrored in the cpuset hierarchy as the kubelet makes
 *   them;
 * - SIGHUP with a broken config keeps the old one; with one that disables
 *   enforcement, every value is restored;
 * - once running, the daemon holds only the capabilities it still uses;
 * - slow clients holding the HTTP port's connections: /healthz keeps answering.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "daemonlib.h"
#include "testlib.h"

#define LS_CTR	"kubepods/burstable/pod5f6e3c1a-4444-4a4a-9b9b-0123456789ab/probe"
#define BE_CTR	"kubepods/besteffort/pod7a8b9c0d-5555-4b4b-8c8c-0123456789ab/hog"
#define OTHER_BE "other/kubepods/besteffort"	/* outside the daemon's roots */
#define BE_ROOT	"kubepods/besteffort"
#define YARN_ROOT "hadoop-yarn"
#define YARN_CTR "hadoop-yarn/container_e01_1700000000000_0001_01_000002"
#define KILLS	20
/* Acting fast: a 0.2 s period, wake-up priority, then a BE quota (measured, maybe rolled back). */
#define BUSY_BE	"\"cpuSuppressPolicy\": \"cfsQuota\", \"cpuSuppressThresholdPercent\": 12"
#define BUSY_OWN "\"period\": 0.2, \"effect\": {\"windows\": 1}"
/* The same with the cpuset policy: a smaller BE cpuset, culprits kept off their victims' CPUs. */
#define BUSY_CPUSET "\"cpuSuppressPolicy\": \"cpuset\", \"cpuSuppressThresholdPercent\": 12"

static struct cpu_hierarchy hier;
static char base[] = "/tmp/koord-faults-XXXXXX";
static char cfg_path[PATH_MAX], log_base[PATH_MAX], log_path[PATH_MAX + 16], roots[PATH_MAX];
static const char *before;	/* the test tree's cpu settings before any daemon ran */
static int port;

/*
 * The wake-up priority by cpu.idle throughout: its writes come in pairs
 * (cpu.idle and the weight the kernel resets with it), the harder journal
 * and restore. test_enforce takes the default, the weight alone.
 */
static bool config(bool enable, const char *state_dir, const char *be, const char *own)
{
	char all[1024];

	snprintf(all, sizeof(all), "%s%s\"beWakeupPriorityBy\": \"idle\"", own, *own ? ", " : "");
	return daemon_config(cfg_path, enable, be, roots, state_dir, all);
}

/* The daemon, with a log of its own (BASE.N.log: all kept for a look afterwards). */
static pid_t start_with(const char *extra)
{
	static int n;

	snprintf(log_path, sizeof(log_path), "%.*s.%d.log", (int)strlen(log_base) - 4, log_base,
		 ++n);
	return daemon_start(cfg_path, log_path, port, extra);
}

static pid_t start(void)
{
	return start_with(NULL);
}

static bool logged(const char *needle, unsigned int ms)
{
	return file_has(log_path, needle, ms);
}

/* Is the test tree's every cpu setting what it was before? */
static bool all_original(void)
{
	char *now = cgroup_snapshot(&hier);
	bool same = now && !strcmp(now, before);

	free(now);
	return same;
}

static void show_log(void)
{
	show_file(log_path);
}

/* A state dir and its lock file. */
static void remove_dir(const char *dir)
{
	char path[PATH_MAX + 8];

	snprintf(path, sizeof(path), "%s/lock", dir);
	unlink(path);
	rmdir(dir);
}

/* A tmpfs of 64 KiB at @dir, for a state dir that can be filled or made read-only. */
static bool small_fs(const char *dir)
{
	return (!mkdir(dir, 0700) || errno == EEXIST) &&
	       !mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0700");
}

static void fill(const char *dir)
{
	char path[PATH_MAX + 8], block[4096] = { 1 };
	int fd;

	snprintf(path, sizeof(path), "%s/fill", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	while (fd >= 0 && write(fd, block, sizeof(block)) > 0)
		;
	if (fd >= 0)
		close(fd);
}

/* The journal cannot be written (disk full, then read-only): nothing changes, the reason is logged. */
static void test_state_dir(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 8];
	pid_t pid;
	int rc;

	snprintf(dir, sizeof(dir), "%s/small", base);
	if (!check(small_fs(dir), "a 64 KiB tmpfs for the state dir"))
		return;
	fill(dir);
	config(true, dir, "", "");
	pid = start();
	check(logged("cannot journal its value: No space left on device", 10000),
	      "full state dir: the write is refused because the journal cannot be written");
	sleep_ms(1500);
	check(tree_value_is(&hier, BE_ROOT, "cpu.idle", "0", 0), "full state dir: cpu.idle stays 0");
	check(daemon_alive(pid), "full state dir: the daemon keeps running (measuring)");
	rc = daemon_stop(pid, SIGTERM);
	check(rc == 0 && all_original(), "full state dir: SIGTERM exits 0 (%d), every value unchanged",
	      rc);

	snprintf(path, sizeof(path), "%s/fill", dir);
	unlink(path);
	check(!mount(NULL, dir, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL),
	      "the state dir remounted read-only");
	pid = start();
	rc = daemon_stop(pid, 0);	/* signal 0: only wait for it to end */
	check(rc == 1, "read-only state dir: the start is refused (exit %d)", rc);
	check(logged("Read-only file system", 0), "read-only state dir: the log says why");
	check(all_original(), "read-only state dir: every value unchanged");
	if (umount2(dir, MNT_DETACH) || rmdir(dir))
		printf("# cannot remove %s: %s\n", dir, strerror(errno));
}

/* A journal that must not be replayed: the start is refused and says why; nothing restored. */
static void bad_journal(const char *what, const char *text, const char *reason)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	pid_t pid;
	int rc, fd;

	snprintf(dir, sizeof(dir), "%s/bad-journal", base);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/journal", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		check(false, "%s: journal written", what);
	if (fd >= 0)
		close(fd);
	config(false, dir, "", "");
	pid = start();
	rc = daemon_stop(pid, 0);
	check(rc == 1, "%s journal: the start is refused (exit %d)", what, rc);
	if (!check(logged(reason, 0), "%s journal: the log says \"%s\"", what, reason))
		show_log();
	check(all_original(), "%s journal: nothing was restored from it", what);
	check(!access(path, F_OK), "%s journal: left in place for a person to look at", what);
	unlink(path);
	remove_dir(dir);
}

static void test_bad_journals(void)
{
	char text[6 * PATH_MAX], idle[2 * PATH_MAX + 16];

	/* had any of these been read leniently, a cpu.idle would now read 1 */
	snprintf(idle, sizeof(idle), "%s%s/cpu.idle", hier.root, tree_path(&hier, BE_ROOT));
	snprintf(text, sizeof(text),
		 "{\"version\": 1, \"entries\": [{\"path\": \"%s\", \"value\": \"1\"}, {\"path\": \"/sys",
		 idle);
	bad_journal("truncated", text, "journal: truncated; not starting");
	bad_journal("garbage", "\x7f" "ELF\x02\x01", "journal: offset ");
	snprintf(text, sizeof(text), "{\"version\": 1, \"entries\": [{\"path\": \"%s\", \"value\": \"1\"}, "
		 "{\"path\": \"sys/fs/cgroup/cpu.idle\", \"value\": \"1\"}]}", idle);
	bad_journal("relative path", text, "entry 1: path: not absolute");
	snprintf(text, sizeof(text), "{\"version\": 4, \"entries\": [{\"path\": \"%s\", \"value\": \"1\"}]}",
		 idle);
	bad_journal("future version", text, "version: want 2 or 1");
}

/*
 * A crash, then a config that does not load (a bad ConfigMap edit, then an
 * OOM kill): the start is refused, but what the killed run wrote is put back
 * first, from the journal in --state-dir. Before, the start stopped at the
 * config, and BE stayed suppressed while the pod crash-looped on it.
 */
static void test_bad_config_replays(void)
{
	char dir[PATH_MAX], journal[PATH_MAX + 16], arg[PATH_MAX + 16];
	pid_t pid;
	FILE *f;
	int rc;

	snprintf(dir, sizeof(dir), "%s/bad-config", base);
	snprintf(journal, sizeof(journal), "%s/journal", dir);
	snprintf(arg, sizeof(arg), "--state-dir=%s", dir);
	config(true, dir, "", "\"period\": 0.2");
	pid = start();
	if (!check(tree_value_is(&hier, BE_ROOT, "cpu.idle", "1", 15000),
		   "bad config: a run acts (cpu.idle 1)"))
		show_log();
	rc = daemon_stop(pid, SIGKILL);
	check(!access(journal, F_OK) && tree_value_is(&hier, BE_ROOT, "cpu.idle", "1", 0),
	      "... is killed (%d), its journal and cpu.idle 1 left", rc);
	f = fopen(cfg_path, "w");
	check(f && fputs("{\"koordBPF\": {\"period\": ", f) >= 0 && !fclose(f),
	      "... its config is cut short");
	pid = start_with(arg);
	rc = daemon_stop(pid, 0);
	check(rc == 1, "the next start is refused (exit %d)", rc);
	if (!check(logged("not starting without a valid config; putting back what the last run "
			  "wrote first", 0), "... and says it puts back what the last run wrote"))
		show_log();
	check(all_original(), "... and it did: every cpu setting is as before any run");
	check(access(journal, F_OK) && errno == ENOENT, "... and the journal is gone");
	remove_dir(dir);
}

/*
 * A journal holding a value no retry can restore (outside cgroupRoots, as
 * after a config change) beside one that can: the latter is put back, the
 * former set aside in the state dir with a log line and a metric, and the
 * daemon starts. Refusing to start refused forever: a crash loop.
 */
static void test_set_aside(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], aside[PATH_MAX + 300], text[6 * PATH_MAX];
	char idle[2 * PATH_MAX + 16], other[2 * PATH_MAX + 16], orig[32] = "", *metrics;
	struct dirent *de;
	pid_t pid;
	DIR *dd;
	int fd, rc, tries;

	snprintf(idle, sizeof(idle), "%s%s/cpu.idle", hier.root, tree_path(&hier, BE_ROOT));
	snprintf(other, sizeof(other), "%s%s/cpu.idle", hier.root, tree_path(&hier, OTHER_BE));
	fd = open(idle, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		rc = read(fd, orig, sizeof(orig) - 1);
		orig[rc > 0 ? rc : 0] = '\0';
		orig[strcspn(orig, "\n")] = '\0';
		close(fd);
	}
	snprintf(dir, sizeof(dir), "%s/set-aside", base);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/journal", dir);
	snprintf(text, sizeof(text), "{\"version\": 1, \"entries\": [{\"path\": \"%s\", \"value\": "
		 "\"%s\"}, {\"path\": \"%s\", \"value\": \"1\"}]}", idle, orig, other);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		check(false, "set aside: journal written");
	if (fd >= 0)
		close(fd);
	config(false, dir, "", "");
	pid = start();
	if (!check(logged("serving http", 15000), "a value outside cgroupRoots: the daemon starts"))
		show_log();
	check(logged("1 values of the last run could not be restored (outside cgroupRoots, or "
		     "unwritable): set aside in", 0), "... and says the value was set aside");
	/* the exposition exists from the first period on */
	metrics = malloc(1 << 20);
	for (rc = 0, tries = 0; metrics && !rc && tries < 100; tries++) {
		rc = http_get(port, "/metrics", metrics, 1 << 20) == 200 &&
		     strstr(metrics, "\nkoord_bpf_journal_values_set_aside ");
		if (!rc)
			sleep_ms(100);
	}
	check(rc && strstr(metrics, "\nkoord_bpf_journal_values_set_aside 1\n"),
	      "... and counts it (koord_bpf_journal_values_set_aside 1)");
	free(metrics);
	rc = daemon_stop(pid, SIGTERM);
	check(rc == 0, "... and stops cleanly (exit %d)", rc);
	check(all_original(), "the value inside the roots was put back, nothing else written");
	aside[0] = '\0';
	dd = opendir(dir);
	while (dd && (de = readdir(dd)))
		if (!strncmp(de->d_name, "journal.set-aside.", 18))
			snprintf(aside, sizeof(aside), "%s/%s", dir, de->d_name);
	if (dd)
		closedir(dd);
	check(aside[0] && file_has(aside, other, 0) && !file_has(aside, idle, 0),
	      "the set-aside file holds the value outside the roots, only it");
	check(access(path, F_OK), "no journal is left to replay at the next start");
	if (aside[0])
		unlink(aside);
	unlink(path);
	remove_dir(dir);
}

/*
 * SIGTERM while a kubelet poll hangs (a server that never answers, a 30 s
 * timeout): the values are back at once and the daemon ends within the
 * pod's grace period. The poll used to be waited for first, the restore
 * after it, and past 30 s the kubelet's SIGKILL would have left them.
 */
static void test_stop_restores_first(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	char own[1024], dir[PATH_MAX];
	double restored = -1, ended;
	int hole, rc, i;
	__u64 t0;
	pid_t pid;

	/* connections complete in the backlog; nothing ever answers */
	hole = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!check(hole >= 0 && !bind(hole, (struct sockaddr *)&a, sizeof(a)) && !listen(hole, 8) &&
		   !getsockname(hole, (struct sockaddr *)&a, &alen), "a kubelet that never answers"))
		return;
	snprintf(own, sizeof(own), "\"kubelet\": {\"url\": \"https://127.0.0.1:%d/pods\", "
		 "\"tokenFile\": \"\", \"caFile\": \"\", \"timeoutSeconds\": 30}", ntohs(a.sin_port));
	snprintf(dir, sizeof(dir), "%s/stop-state", base);
	config(true, dir, "", own);
	pid = start();
	if (!check(logged("serving http", 15000), "with a hanging kubelet poll: the daemon starts"))
		show_log();
	/* the wake-up priority: a write that stays */
	check(tree_value_is(&hier, BE_ROOT, "cpu.idle", "1", 10000), "... and acts");
	t0 = now_mono_ns();
	kill(pid, SIGTERM);
	for (i = 0; i < 200 && restored < 0; i++) {
		if (tree_value_is(&hier, BE_ROOT, "cpu.idle", "0", 0) && all_original())
			restored = (now_mono_ns() - t0) / 1e9;
		else
			sleep_ms(50);
	}
	rc = daemon_stop(pid, 0);
	ended = (now_mono_ns() - t0) / 1e9;
	check(restored >= 0 && restored < 2, "SIGTERM: every value back within 2 s (%.2f s) while "
	      "a kubelet poll hangs", restored);
	check(rc == 0 && ended < 5, "... and the daemon ends within 5 s (%.2f s, exit %d), not at "
	      "the poll's 30 s timeout", ended, rc);
	close(hole);
	remove_dir(dir);
}

/* The start after a crash, enforcement off: the replay alone restores; its exit status. */
static int replay(const char *dir)
{
	char journal[PATH_MAX + 16];
	unsigned int ms;
	pid_t pid;

	snprintf(journal, sizeof(journal), "%s/journal", dir);
	if (access(journal, F_OK))
		return 0;	/* killed before its first write */
	config(false, dir, "", "");
	pid = start();
	/* the journal is removed once replayed, before the BPF load: a SIGTERM then ends it */
	for (ms = 0; ms < 15000 && !access(journal, F_OK) && daemon_alive(pid); ms += 50)
		sleep_ms(50);
	return daemon_stop(pid, SIGTERM);
}

/* Is the cpuset mirror's every setting @cpusets (NULL: not mirrored), as before? */
static bool cpusets_original(const char *cpusets)
{
	char *now = cpusets ? cpuset_snapshot(&hier) : NULL;
	bool same = !cpusets || (now && !strcmp(now, cpusets));

	free(now);
	return same;
}

/*
 * kill -9 at a random moment in the 1 s after the first action of a daemon
 * acting with @be (its suppress policy); a start with enforcement off
 * restores all. @cpusets: the cpuset
 * mirror's settings before, NULL when not mirrored. At least @min kills must
 * catch values changed, or the test proves nothing.
 */
static void kill9(const char *what, const char *be, const char *own, const char *cpusets, int min)
{
	int changed = 0, cs_changed = 0, restored = 0, i, rc;
	char dir[PATH_MAX];
	unsigned int at;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/state", base);
	srand(time(NULL) ^ getpid());
	for (i = 0; i < KILLS; i++) {
		config(true, dir, be, own);
		pid = start();
		if (!logged("serving http", 15000)) {
			check(false, "kill %d: the daemon started", i);
			show_log();
			daemon_stop(pid, SIGKILL);
			continue;
		}
		/*
		 * From its first action: under ASAN the first came more than 2 s
		 * after "serving" once actions waited for the first window (the
		 * daemon's start) and a baseline, and 0 of 20 kills caught one.
		 * Within 1 s of it: under load a culprit's cpuset can be rolled
		 * back after one window, and 2 s caught 2 of 20.
		 */
		if (!logged("action:", 15000))
			printf("# %s, kill %d: no action in 15 s\n", what, i);
		at = rand() % 1001;
		sleep_ms(at);
		daemon_stop(pid, SIGKILL);
		cs_changed += !cpusets_original(cpusets);
		changed += !all_original() || !cpusets_original(cpusets);
		rc = replay(dir);
		if (rc == 0 && all_original() && cpusets_original(cpusets)) {
			restored++;
		} else {
			printf("# %s, kill %d at %u ms: not restored (exit %d):\n", what, i, at, rc);
			show_log();
		}
	}
	printf("# %s: %d of %d kills left a cgroup value changed\n", what, changed, KILLS);
	check(restored == KILLS, "%s: kill -9 at random moments, every value back after %d of %d "
	      "restarts", what, restored, KILLS);
	check(changed >= min, "%s: the kills came while values were changed (%d of %d, at least %d)",
	      what, changed, KILLS, min);
	if (cpusets)
		check(cs_changed >= min, "%s: ... cpusets among them (%d of %d)", what, cs_changed,
		      KILLS);
	remove_dir(dir);
}

static void test_kill9(pid_t probe, pid_t hog)
{
	char *cpusets;

	kill9("cfsQuota", BUSY_BE, BUSY_OWN, NULL, KILLS / 4);	/* measured 16-19 of 20 */
	if (!*cpuset_tree(&hier)) {
		skip_part("kill -9 under the cpuset policy: no v1 cpuset hierarchy, or one CPU");
		return;
	}
	if (!check(pod_mirror(&hier, BE_CTR, hog) && pod_mirror(&hier, LS_CTR, probe),
		   "the pods mirrored in the cpuset hierarchy")) {
		pod_unmirror(&hier);
		return;
	}
	cpusets = cpuset_snapshot(&hier);
	/*
	 * No wake-up priority first: its measurement would hold the cpusets off
	 * past the kill. The culprit's cpuset is the first action and is given
	 * back when it has been quiet for 5 windows: measured 9 of 20 kills
	 * catching it (2 s from "serving"), 12 of 20 (2 s from the first action,
	 * ASAN), so 2 is the floor.
	 */
	kill9("cpuset", BUSY_CPUSET, BUSY_OWN ", \"beWakeupPriority\": false", cpusets, KILLS / 10);
	free(cpusets);
	pod_unmirror(&hier);
}

/* A field of /proc/@pid/status as a number (hex for the Cap* masks); -1 when missing. */
static long long status_field(pid_t pid, const char *field, int base)
{
	char path[64], line[256];
	long long v = -1;
	size_t n = strlen(field);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = strtoll(line + n + 1, NULL, base);
	if (f)
		fclose(f);
	return v;
}

/* After loading and attaching, only the capabilities docs/security.md lists are left. */
static void check_privileges(pid_t pid)
{
	const long long need = 1LL << 1 | 1LL << 5;	/* CAP_DAC_OVERRIDE, CAP_KILL */
	const long long may = need | 1LL << 21 | 1LL << 39;	/* CAP_SYS_ADMIN or CAP_BPF: probed */
	long long eff = status_field(pid, "CapEff", 16);

	printf("# daemon CapEff %llx\n", eff);
	check(eff >= 0 && (eff & need) == need && !(eff & ~may),
	      "capabilities: CAP_DAC_OVERRIDE and CAP_KILL kept, nothing else but a probed CAP_BPF");
	check(!(eff & 1LL << 39) == !logged("CAP_BPF", 0) &&
	      !(eff & 1LL << 21) == !logged("CAP_SYS_ADMIN", 0), "capabilities: the log names what is kept");
	check(status_field(pid, "CapPrm", 16) == eff && status_field(pid, "CapBnd", 16) == eff &&
	      status_field(pid, "CapInh", 16) == 0 && status_field(pid, "CapAmb", 16) == 0,
	      "capabilities: permitted and bounding sets the same, none inheritable or ambient");
	check(status_field(pid, "NoNewPrivs", 10) == 1, "no_new_privs set (the hook cannot regain any)");
}

/*
 * SIGHUP: a broken config keeps the old one; one disabling enforcement
 * restores; one enabling it acts; one changing what is written converges;
 * one with a NodeSLO value koord-bpf does not support measures only.
 */
static void test_reload(void)
{
	char dir[PATH_MAX];
	FILE *f;
	pid_t pid;
	int rc;

	snprintf(dir, sizeof(dir), "%s/state", base);
	config(true, dir, "", "");
	pid = start();
	check(tree_value_is(&hier, BE_ROOT, "cpu.idle", "1", 10000),
	      "reload: the daemon acted (with its capabilities dropped)");
	check_privileges(pid);
	f = fopen(cfg_path, "w");
	if (f) {
		fputs("{\"resourceUsedThresholdWithBE\": {\"enable\": fals", f);
		fclose(f);
	}
	kill(pid, SIGHUP);
	check(logged(" failed: keeping the previous configuration", 5000),
	      "SIGHUP with a broken config: the reload failed");
	sleep_ms(1500);
	check(daemon_alive(pid) && tree_value_is(&hier, BE_ROOT, "cpu.idle", "1", 0),
	      "and the old config stays: still running, still acting");
	config(false, dir, "", "");
	kill(pid, SIGHUP);
	check(logged("enforcement off", 5000), "SIGHUP with enforcement disabled: reloaded");
	check(tree_value_is(&hier, BE_ROOT, "cpu.idle", "0", 5000) && all_original(),
	      "and every value is back to its original");
	/* enabled by a reload: journaled and acting as at a start (the journal once could not start) */
	config(true, dir, "", "");
	kill(pid, SIGHUP);
	check(logged(": enforcement on", 5000) &&
	      tree_value_is(&hier, BE_ROOT, "cpu.idle", "1", 10000),
	      "SIGHUP enabling enforcement: it acts");
	/* the wake-up priority turned off, enforcement on: cpu.idle once stayed 1 until the stop */
	config(true, dir, "", "\"beWakeupPriority\": false");
	kill(pid, SIGHUP);
	check(logged("enforcement changed: every cgroup value written is back", 5000) &&
	      tree_value_is(&hier, BE_ROOT, "cpu.idle", "0", 5000),
	      "SIGHUP turning beWakeupPriority off: the BE root is no SCHED_IDLE group any more");
	/* Koordinator's validator lets 0 through: ignored, measure-only, no crash loop */
	config(true, dir, "", "");
	kill(pid, SIGHUP);
	check(tree_value_is(&hier, BE_ROOT, "cpu.idle", "1", 10000), "enforcement on again");
	config(true, dir, "\"memoryEvictThresholdPercent\": 0", "");
	kill(pid, SIGHUP);
	check(logged("memoryEvictThresholdPercent: must be in (0, 100], got 0: not supported", 5000) &&
	      logged("enforcement off, measuring only", 0),
	      "SIGHUP with a NodeSLO value Koordinator accepts and koord-bpf does not: noted, "
	      "measure-only");
	check(daemon_alive(pid) && tree_value_is(&hier, BE_ROOT, "cpu.idle", "0", 5000) &&
	      all_original(), "still running, every value back to its original");
	rc = daemon_stop(pid, SIGTERM);
	check(rc == 0, "stops cleanly (%d)", rc);
	remove_dir(dir);
}

/* The cores of the CFS quota on test-tree cgroup @r (-1: none). */
static double quota_cores(const char *r)
{
	char path[2 * PATH_MAX], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s%s/cpu.cfs_quota_us", hier.root, tree_path(&hier, r));
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return atol(buf) > 0 ? atol(buf) / 100000.0 : -1;
}

/*
 * A root the config names that appears after the start (the first YARN job
 * on a node): written below from the walk that finds it. Roots were taken
 * once, at the start, and YARN was skipped without a word. Then the two BE
 * roots share one allowance (each had the whole of it: twice the budget).
 */
static void test_root_made_later(void)
{
	char dir[PATH_MAX], saved[PATH_MAX], path[2 * PATH_MAX];
	double be, yarn, allowed = -1, total = -1;
	pid_t pid, hog;
	int rc, i;

	snprintf(saved, sizeof(saved), "%s", roots);
	snprintf(roots, sizeof(roots), "%.*s:%.*s", PATH_MAX / 2 - 1, saved, PATH_MAX / 2 - 1,
		 tree_path(&hier, YARN_ROOT));
	snprintf(dir, sizeof(dir), "%s/yarn-state", base);
	/*
	 * A generous allowance, measured for 20 windows (4 s) before the loop
	 * judges it (the split is what is tested, within ~0.5 s of the YARN
	 * container): long waits appearing from none are worse at any percent (a
	 * loaded CI run: 0/146 -> 10/124 waits >= 1 ms, rolled back), and a quota
	 * rolled back is not taken again under the same containers. Not 50: the
	 * wake-up priority, judged first, measures on up to 4x when inconclusive
	 * (40 s), and the quota waits for it.
	 */
	config(true, dir, "\"cpuSuppressPolicy\": \"cfsQuota\", \"cpuSuppressThresholdPercent\": 60",
	       "\"period\": 0.2, \"effect\": {\"windows\": 20}, \"eviction\": {\"enable\": false}");
	pid = start();
	check(logged("serving http", 15000), "a YARN root not there yet: the daemon starts");
	check(tree_value_is(&hier, BE_ROOT, "cpu.idle", "1", 5000) && logged("action: BE quota", 25000),
	      "the besteffort root: SCHED_IDLE and a quota");
	be = quota_cores(BE_ROOT);
	hog = tree_make(&hier, YARN_CTR) ? spawn(&hier, tree_path(&hier, YARN_CTR), -1, WL_HOG, 0) : -1;
	check(hog > 0, "a YARN container appears, busy (besteffort's quota: %.2f cores)", be);
	check(tree_value_is(&hier, YARN_ROOT, "cpu.idle", "1", 15000),
	      "its root, made after the start, becomes a SCHED_IDLE group too");
	for (i = 0; i < 100; i++, sleep_ms(100)) {
		be = quota_cores(BE_ROOT);
		yarn = quota_cores(YARN_ROOT);
		allowed = daemon_metric(port, "koord_bpf_be_allowed_cores");
		total = daemon_metric(port, "koord_bpf_be_suppress_quota_cores");
		if (be > 0 && yarn > 0 && allowed > 0.2 && total > 0)
			break;
	}
	/* 2 periods of slack for a moving allowance: a quota rises by at most 10% of capacity a period */
	check(be > 0 && yarn > 0 && allowed > 0.2 && be + yarn <= allowed + 0.45,
	      "two BE roots share one allowance: %.2f + %.2f cores quota, %.2f allowed", be, yarn,
	      allowed);
	check(total > 0 && total >= be + yarn - 0.3 && total <= be + yarn + 0.3,
	      "koord_bpf_be_suppress_quota_cores is their sum (%.2f)", total);
	rc = daemon_stop(pid, SIGTERM);
	check(rc == 0 && tree_value_is(&hier, YARN_ROOT, "cpu.idle", "0", 0) &&
	      quota_cores(YARN_ROOT) < 0 && quota_cores(BE_ROOT) < 0,
	      "and all is put back at the stop (exit %d)", rc);
	if (hog > 0)
		stop(hog);
	snprintf(path, sizeof(path), "%s%s", hier.root, tree_path(&hier, YARN_CTR));
	rmdir(path);
	snprintf(path, sizeof(path), "%s%s", hier.root, tree_path(&hier, YARN_ROOT));
	rmdir(path);
	snprintf(roots, sizeof(roots), "%s", saved);
	remove_dir(dir);
}

/* Is the server still holding @fd open (no EOF, no reset)? */
static bool held(int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);

	return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/*
 * One client trickling bytes on 64 sockets (a request never finished) took
 * every connection the server has, and the liveness probe's /healthz could
 * not connect: the kubelet restarted the daemon. Now one address gets at
 * most 8, and /healthz has a listener of its own.
 */
static void test_slow_clients(void)
{
	int fds[64], hport = port + 2, n = 0, i, round, healthy = 0, others = 0;
	char own[128], buf[256];
	pid_t pid;

	snprintf(own, sizeof(own), "\"healthListen\": \"127.0.0.1:%d\"", hport);
	config(false, base, "", own);
	pid = start();
	if (!check(logged("serving http", 15000), "slow clients: the daemon starts with a health listener"))
		return;
	for (i = 0; i < 50 && http_get(hport, "/healthz", buf, sizeof(buf)) != 200; i++)
		sleep_ms(100);	/* 503 "starting" until the first period */
	check(i < 50 && logged("/healthz", 0), "... /healthz answers 200 there");
	for (i = 0; i < 64; i++) {
		fds[i] = loopback_connect("127.0.0.1", port);
		if (fds[i] >= 0)
			dprintf(fds[i], "GET /metrics HTTP/1.1\r\nHost: x\r\n");
	}
	for (round = 0; round < 6; round++) {
		sleep_ms(500);
		for (i = 0; i < 64; i++)
			if (fds[i] >= 0 && held(fds[i]))
				dprintf(fds[i], "X-%d: y\r\n", round);	/* a byte now and then */
		healthy += http_get(hport, "/healthz", buf, sizeof(buf)) == 200;
		others += http_get_from("127.0.0.2", port, "/metrics", buf, sizeof(buf)) == 200;
	}
	for (i = 0; i < 64; i++)
		if (fds[i] >= 0) {
			n += held(fds[i]);
			close(fds[i]);
		}
	check(n <= 8, "one address holds %d of the 64 connections it asked for (at most 8)", n);
	check(healthy == 6, "the health listener answered /healthz %d of 6 times meanwhile", healthy);
	check(others == 6, "another address got /metrics %d of 6 times meanwhile", others);
	check(daemon_stop(pid, SIGTERM) == 0, "slow clients: stops cleanly");
}

int main(void)
{
	pid_t probe, hog;
	char *snap;

	require_bpf_env(&hier);
	if (!daemon_test_init(base, cfg_path, sizeof(cfg_path), log_base, sizeof(log_base)))
		return 1;
	port = 20000 + getpid() % 20000;
	if (!tree_make(&hier, LS_CTR) || !tree_make(&hier, BE_CTR) || !tree_make(&hier, OTHER_BE))
		return 1;
	snprintf(roots, sizeof(roots), "%s", tree_path(&hier, "kubepods"));
	probe = spawn(&hier, tree_path(&hier, LS_CTR), 0, WL_SERVER, 1000);
	hog = spawn(&hier, tree_path(&hier, BE_CTR), 0, WL_HOG, 0);
	if (probe < 0 || hog < 0)
		return 1;
	before = snap = cgroup_snapshot(&hier);
	test_state_dir();
	test_bad_journals();
	test_bad_config_replays();
	test_set_aside();
	test_stop_restores_first();
	test_reload();
	test_kill9(probe, hog);
	test_slow_clients();
	test_root_made_later();	/* last: its tree is not in the snapshot */
	free(snap);
	return daemon_test_end("test_faults", base);
}
