// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Eviction backends on real cgroups (root; no BPF is loaded). Three
 * processes, one of them forking all the time and one in a child cgroup,
 * sit in the same test cgroup of the cpu, freezer and unified hierarchies;
 * each kill backend (cgroup.kill, v1 freezer, plain signals) must empty it,
 * a vanished cgroup is -ENOENT, and the hook gets its arguments verbatim,
 * with no shell, and is killed when it overruns.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "evict.h"
#include "journal.h"
#include "log.h"
#include "testlib.h"
#include "writer.h"

#define NMOUNTS	3

static struct hierarchies hier;
static const char *mounts[NMOUNTS];	/* cpu, freezer, unified; NULL when absent */
static char base[64];			/* "/koord-test-evict-PID" */
static char state_dir[] = "/tmp/koord-test-evict-XXXXXX";
static bool have_state_dir;
static struct journal journal;
static struct writer w;

static void on_signal(int sig)
{
	exit(128 + sig);
}

static void reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* testlib's cgroup_read/cgroup_write, on absolute directories. */
static const struct cpu_hierarchy abs_root = { .root = "" };

static int read_in(const char *dir, const char *file, char *buf, size_t len)
{
	int r = cgroup_read(&abs_root, dir, file, buf, len);

	buf[r ? 0 : strcspn(buf, "\n")] = '\0';
	return r;
}

/* Processes in @dir and below; with @kill, SIGKILL them (and thaw, for cleanup). */
static size_t tree_procs(const char *dir, bool kill_them)
{
	char path[PATH_MAX + 300], *line = NULL;
	size_t cap = 0, n = 0;
	struct dirent *de;
	FILE *f;
	DIR *d;

	if (kill_them)
		cgroup_write(&abs_root, dir, "freezer.state", "THAWED");
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (f) {
		while (getline(&line, &cap, f) > 0) {
			n++;
			if (kill_them)
				kill(atoi(line), SIGKILL);
		}
		fclose(f);
	}
	free(line);
	d = opendir(dir);
	if (!d)
		return n;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n += tree_procs(path, kill_them);
	}
	closedir(d);
	return n;
}

static int rmdir_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (flag == FTW_DP)
		rmdir(path);
	return 0;
}

static void cleanup(void)
{
	char path[PATH_MAX + 300];
	struct dirent *de;
	DIR *d;
	int i, pass;

	for (pass = 0; pass < 20; pass++) {
		size_t left = 0;

		for (i = 0; i < NMOUNTS; i++) {
			if (!mounts[i])
				continue;
			snprintf(path, sizeof(path), "%s%s", mounts[i], base);
			left += tree_procs(path, true);
		}
		reap();
		if (!left)
			break;
		usleep(20000);
	}
	for (i = 0; i < NMOUNTS; i++) {
		if (!mounts[i])
			continue;
		snprintf(path, sizeof(path), "%s%s", mounts[i], base);
		nftw(path, rmdir_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	writer_free(&w);
	journal_close(&journal);
	if (!have_state_dir)
		return;
	d = opendir(state_dir);
	if (d) {
		while ((de = readdir(d))) {
			snprintf(path, sizeof(path), "%s/%s", state_dir, de->d_name);
			if (de->d_type == DT_REG)
				unlink(path);
		}
		closedir(d);
	}
	rmdir(state_dir);
}

/* mkdir @rel (below the base) and @rel/sub in every hierarchy. */
static int make_cgroup(const char *rel)
{
	char path[PATH_MAX + 300];
	int i;

	for (i = 0; i < NMOUNTS; i++) {
		if (!mounts[i])
			continue;
		snprintf(path, sizeof(path), "%s%s/%s", mounts[i], base, rel);
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		strcat(path, "/sub");
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

/* The forker: children that live 200 ms, a new one every 2 ms. */
static void forker(void)
{
	for (;;) {
		pid_t c = fork();

		if (c == 0) {
			usleep(200000);
			_exit(0);
		}
		usleep(2000);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}

/* Fork one process that joins @rel in every hierarchy, then runs @fork_loop or sleeps. */
static pid_t start_one(const char *rel, bool fork_loop)
{
	char path[PATH_MAX + 300], c = 0;
	int p[2], i;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		for (i = 0; i < NMOUNTS; i++) {
			if (!mounts[i])
				continue;
			snprintf(path, sizeof(path), "%s%s/%s", mounts[i], base, rel);
			if (cgroup_write(&abs_root, path, "cgroup.procs", "0"))
				_exit(1);
		}
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		if (fork_loop)
			forker();
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1)
		pid = -1;
	close(p[0]);
	return pid;
}

/* Three processes in @rel: a sleeper, a forker, and a sleeper in @rel/sub. */
static bool start_procs(const char *rel)
{
	char sub[256];

	snprintf(sub, sizeof(sub), "%s/sub", rel);
	if (make_cgroup(rel) || start_one(rel, false) < 0 || start_one(rel, true) < 0 ||
	    start_one(sub, false) < 0)
		return false;
	usleep(50000);	/* let the forker fork */
	return true;
}

static size_t procs_in(const char *mnt, const char *rel)
{
	char path[PATH_MAX + 300];

	snprintf(path, sizeof(path), "%s%s/%s", mnt, base, rel);
	return tree_procs(path, false);
}

static void target(struct evict_target *t, char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", base, rel);
	memset(t, 0, sizeof(*t));
	t->path = buf;
	t->pod_uid = "";
	t->container_id = "";
	t->qos = KC_BE;
	t->reason = EVICT_MEMORY;
}

/* The id of @rel's cgroup as the daemon measures it: its inode in the cpu hierarchy. */
static __u64 cgid_of(const char *rel)
{
	char path[PATH_MAX + 300];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s/%s", hier.cpu[0] ? hier.cpu : hier.unified, base, rel);
	return stat(path, &st) ? 0 : st.st_ino;
}

/* Evict @rel through @h: every process signalled, and none left in any hierarchy. */
static void kill_checked(const char *what, const struct hierarchies *h, const char *rel)
{
	struct evict_target t;
	char buf[128];
	int r, i;

	target(&t, buf, sizeof(buf), rel);
	t.cgid = cgid_of(rel);
	r = evict_kill(&w, h, &t);
	check(r >= 3, "%s: %d processes signalled (>= 3)", what, r);
	for (i = 0; i < NMOUNTS; i++)
		if (mounts[i])
			check(procs_in(mounts[i], rel) == 0, "%s: empty in %s", what, mounts[i]);
	reap();
}

static void test_cgroup_kill(void)
{
	char path[PATH_MAX + 300];

	snprintf(path, sizeof(path), "%s%s/cgroup.kill", hier.unified, base);
	if (!hier.unified[0] || access(path, F_OK)) {
		skip_part("the cgroup.kill backend: no unified hierarchy with cgroup.kill here");
		return;
	}
	if (check(start_procs("v2"), "cgroup.kill: 3 processes started"))
		kill_checked("cgroup.kill", &hier, "v2");
}

static void test_freezer(void)
{
	struct hierarchies h = hier;
	char path[PATH_MAX + 300], state[64] = "";

	if (!mounts[1]) {
		skip_part("the freezer backend: no v1 freezer hierarchy here");
		return;
	}
	h.unified[0] = '\0';	/* force the freezer */
	if (!check(start_procs("v1freezer"), "freezer: 3 processes started"))
		return;
	kill_checked("freezer", &h, "v1freezer");
	snprintf(path, sizeof(path), "%s%s/v1freezer", hier.freezer, base);
	read_in(path, "freezer.state", state, sizeof(state));
	check(!strcmp(state, "THAWED"), "freezer: freezer.state is %s (THAWED)", state);
	/* what a crash mid-eviction would leave for the next start to restore */
	strcat(path, "/freezer.state");
	check(journal_has(&journal, path), "freezer: freezer.state is journaled");
}

static void test_signals(void)
{
	struct hierarchies h = hier, h1 = hier;
	char rel[128];
	struct evict_target t;
	struct writer dry;
	char root[PATH_MAX + 64];
	int r, i;

	if (!mounts[0]) {
		skip_part("the signals backend: no cpu hierarchy here");
		return;
	}
	h.unified[0] = '\0';
	h.freezer[0] = '\0';
	h1.unified[0] = '\0';
	if (!check(start_procs("plain"), "signals: 3 processes started"))
		return;
	target(&t, rel, sizeof(rel), "plain");

	/* nothing is done outside the writer's roots, whatever the backend */
	writer_init(&dry, NULL, true);
	check(evict_kill(&dry, &h, &t) == -EPERM, "signals: refused outside the roots");
	check(evict_kill(&dry, &h1, &t) == -EPERM || !mounts[1],
	      "freezer: refused outside the roots");
	check(evict_kill(&dry, &hier, &t) == -EPERM, "any backend: refused outside the roots");

	/* a dry run counts and touches nothing */
	for (i = 0; i < NMOUNTS; i++) {
		if (!mounts[i])
			continue;
		snprintf(root, sizeof(root), "%s%s", mounts[i], base);
		writer_add_root(&dry, root);
	}
	r = evict_kill(&dry, &h, &t);
	check(r >= 3, "signals, dry run: %d processes counted (>= 3)", r);
	r = evict_kill(&dry, &h1, &t);
	check(r >= 3, "freezer, dry run: %d processes counted (>= 3)", r);
	r = evict_kill(&dry, &hier, &t);
	check(r >= 3, "any backend, dry run: %d processes counted (>= 3)", r);
	writer_free(&dry);
	check(procs_in(hier.cpu, "plain") >= 3, "dry run: the processes still run");

	/* another cgroup than the one measured, made under its name since: nothing is killed */
	t.cgid = cgid_of("plain") + 1;
	r = evict_kill(&w, &h, &t);
	check(r == -ESTALE && procs_in(hier.cpu, "plain") >= 3,
	      "a cgroup made again under the name measured: refused (%d), the processes run", r);
	r = evict_kill(&w, &hier, &t);
	check(r == -ESTALE && procs_in(hier.cpu, "plain") >= 3, "... whatever the backend (%d)", r);

	kill_checked("signals", &h, "plain");
}

static void test_vanished(void)
{
	struct hierarchies h1 = hier, h2 = hier;
	char rel[128];
	struct evict_target t;

	h1.unified[0] = '\0';
	h2.unified[0] = '\0';
	h2.freezer[0] = '\0';
	target(&t, rel, sizeof(rel), "never-there");
	check(evict_kill(&w, &hier, &t) == -ENOENT, "vanished: -ENOENT");
	check(evict_kill(&w, &h1, &t) == -ENOENT, "vanished, no unified: -ENOENT");
	check(evict_kill(&w, &h2, &t) == -ENOENT, "vanished, signals only: -ENOENT");

	t.path = "/";
	check(evict_kill(&w, &hier, &t) == -EINVAL, "the root cgroup is refused");
	snprintf(rel, sizeof(rel), "%s/../..", base);
	t.path = rel;
	check(evict_kill(&w, &hier, &t) == -EINVAL, "a path with .. is refused");
}

/*
 * The container exits while it is being evicted: a second process kills its
 * tasks and removes its cgroups a few ms into the eviction. Every backend
 * must end with a count or -ENOENT, and not hang.
 */
static void remove_racer(const char *rel)
{
	char path[PATH_MAX + 300];
	int i, pass;

	usleep(rand() % 3000);
	for (pass = 0; pass < 50; pass++) {
		size_t left = 0;

		for (i = 0; i < NMOUNTS; i++) {
			if (!mounts[i])
				continue;
			snprintf(path, sizeof(path), "%s%s/%s", mounts[i], base, rel);
			left += tree_procs(path, true);
		}
		if (!left)
			break;
		usleep(2000);
	}
	for (i = 0; i < NMOUNTS; i++) {
		if (!mounts[i])
			continue;
		snprintf(path, sizeof(path), "%s%s/%s", mounts[i], base, rel);
		nftw(path, rmdir_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
}

static void test_exit_mid_eviction(void)
{
	struct hierarchies hs[3] = { hier, hier, hier };
	const char *names[3] = { "cgroup.kill", "freezer", "signals" };
	int b, round, bad = 0, runs = 0;
	struct evict_target t;
	pid_t remover;
	char buf[128];
	int r;

	hs[1].unified[0] = hs[2].unified[0] = '\0';
	hs[2].freezer[0] = '\0';
	for (b = 0; b < 3; b++) {
		for (round = 0; round < 5; round++) {
			if (!start_procs("racer"))
				continue;
			runs++;
			fflush(NULL);
			remover = fork();
			if (remover == 0) {
				srand(getpid());
				remove_racer("racer");
				_exit(0);
			}
			target(&t, buf, sizeof(buf), "racer");
			r = evict_kill(&w, &hs[b], &t);

			waitpid(remover, NULL, 0);
			reap();
			if (r < 0 && r != -ENOENT) {
				bad++;
				printf("# %s, round %d: %s\n", names[b], round, strerror(-r));
			}
			remove_racer("racer");
		}
	}
	check(runs > 0 && !bad, "a container exiting mid-eviction ends each of %d evictions with "
	      "a count or -ENOENT (%d other results)", runs, bad);
}

static int write_script(const char *name, const char *text, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", state_dir, name);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fputs(text, f);
	fclose(f);
	return chmod(path, 0700) ? -errno : 0;
}

static void test_hook(void)
{
	static const char script[] =
		"#!/bin/sh\n"
		"out=$1\n"
		"shift\n"
		"{\n"
		"\tfor a in \"$@\"; do printf 'arg:%s\\n' \"$a\"; done\n"
		"\tprintf 'path:%s\\n' \"$PATH\"\n"
		"\tprintf 'secret:%s\\n' \"${KOORD_TEST_SECRET-unset}\"\n"
		"\tif read -r x; then printf 'stdin:%s\\n' \"$x\"; else echo stdin:eof; fi\n"
		"} > \"$out\"\n"
		"exit 7\n";
	char hook[PATH_MAX], out[PATH_MAX], mark[64], cid[512];
	char got[2048] = "", want[2048], rel[128];
	struct evict_target t;
	size_t n;
	FILE *f;
	int r;

	if (!check(!write_script("hook.sh", script, hook, sizeof(hook)), "hook: script written"))
		return;
	snprintf(out, sizeof(out), "%s/hook.out", state_dir);
	snprintf(mark, sizeof(mark), "%s/expanded", state_dir);
	/* Anything a shell would act on: quotes, spaces, a substitution, a ';'. */
	snprintf(cid, sizeof(cid), "c1 \"two words\" 'q' $(touch %s) `touch %s`; touch %s",
		 mark, mark, mark);
	target(&t, rel, sizeof(rel), "hooked pod");
	t.pod_uid = "6f5b3b1e-2f4c-4c1e-9a7e-0d3c2b1a0f9e";
	t.container_id = cid;
	setenv("KOORD_TEST_SECRET", "leaked", 1);

	{
		char *argv[] = { hook, out, NULL };

		r = evict_hook(argv, &t, 10);
	}
	check(r == 7, "hook: its exit status (%d) is returned", r);
	f = fopen(out, "re");
	if (f) {
		n = fread(got, 1, sizeof(got) - 1, f);
		got[n] = '\0';
		fclose(f);
	}
	snprintf(want, sizeof(want),
		 "arg:--cgroup\narg:%s\narg:--pod-uid\narg:%s\narg:--container-id\narg:%s\n"
		 "arg:--qos\narg:%s\narg:--reason\narg:%s\n"
		 "path:/usr/sbin:/usr/bin:/sbin:/bin\nsecret:unset\nstdin:eof\n",
		 t.path, t.pod_uid, cid, qos_name(KC_BE), evict_reason_name(EVICT_MEMORY));
	if (!check(!strcmp(got, want), "hook: argv, environment and stdin arrive exactly"))
		printf("# got:\n%s# want:\n%s", got, want);
	check(access(mark, F_OK) && errno == ENOENT, "hook: nothing in the container id was run");

	{
		char *argv[] = { (char *)"sh", (char *)"-c", (char *)"exit 0", NULL };

		check(evict_hook(argv, &t, 1) == -EINVAL, "hook: a relative argv[0] is refused");
	}
	{
		char missing[PATH_MAX + 32];
		char *argv[] = { missing, NULL };

		snprintf(missing, sizeof(missing), "%s/no-such-hook", state_dir);
		r = evict_hook(argv, &t, 1);
		check(r == -ENOENT, "hook: a missing program is -ENOENT (%d)", r);
	}
}

/* The state letter of /proc/PID/stat, 0 when the process is gone. */
/* The daemon's quota action goes through the same writer: cpu.max on v2, cpu.cfs_quota_us on v1. */
static char quota_dir[PATH_MAX + 100], quota_path[PATH_MAX + 200], quota_orig[64];
static const char *quota_file;

static void test_quota(void)
{
	bool v2 = hier.cpu_version == 2;
	const char *want = v2 ? "20000 100000" : "20000";
	char buf[64], ctl[PATH_MAX + 200];
	int fd;

	if (v2) {	/* the cpu controller must reach the test's children */
		snprintf(ctl, sizeof(ctl), "%s%s/cgroup.subtree_control", hier.cpu, base);
		fd = open(ctl, O_WRONLY);
		if (fd >= 0) {
			check(write(fd, "+cpu", 4) == 4, "cpu controller enabled below the test root");
			close(fd);
		}
	}
	check(make_cgroup("quota") == 0, "a cgroup for a quota");
	quota_file = v2 ? "cpu.max" : "cpu.cfs_quota_us";
	snprintf(quota_dir, sizeof(quota_dir), "%s%s/quota", hier.cpu, base);
	snprintf(quota_path, sizeof(quota_path), "%s/%s", quota_dir, quota_file);
	check(writer_read(&w, quota_path, quota_orig, sizeof(quota_orig)) == 0,
	      "its quota reads (%s)", quota_orig);
	check(writer_set(&w, quota_path, want) == 0 && journal_has(&journal, quota_path),
	      "the writer sets %s after journaling the original", want);
	check(writer_read(&w, quota_path, buf, sizeof(buf)) == 0 && !strcmp(buf, want),
	      "the kernel took it (%s)", buf);
	check(writer_set(&w, quota_path, want) == 1, "writing it again changes nothing");
}

static char proc_state(pid_t pid)
{
	char dir[64], buf[512], *p;

	snprintf(dir, sizeof(dir), "/proc/%d", pid);
	if (read_in(dir, "stat", buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : 0;
}

static void test_hook_timeout(void)
{
	char hook[PATH_MAX], pidfile[PATH_MAX], buf[32] = "", rel[128];
	char script[PATH_MAX + 128];
	struct evict_target t;
	__u64 t0, ms;
	pid_t sleeper;
	char st = 0;
	int r, i;

	snprintf(pidfile, sizeof(pidfile), "%s/sleeper.pid", state_dir);
	snprintf(script, sizeof(script), "#!/bin/sh\nsleep 30 &\necho $! > '%s'\nwait\n", pidfile);
	if (!check(!write_script("slow.sh", script, hook, sizeof(hook)), "hook timeout: script written"))
		return;
	target(&t, rel, sizeof(rel), "slow");
	t0 = now_mono_ns();
	{
		char *argv[] = { hook, NULL };

		r = evict_hook(argv, &t, 0.5);
	}
	ms = (now_mono_ns() - t0) / 1000000;
	check(r == -ETIMEDOUT, "hook timeout: -ETIMEDOUT (%d)", r);
	check(ms >= 450 && ms < 3000, "hook timeout: returned after %llu ms (~500)",
	      (unsigned long long)ms);
	/* the hook's own children go with it (its process group) */
	read_in(state_dir, "sleeper.pid", buf, sizeof(buf));
	sleeper = atoi(buf);
	for (i = 0; i < 100; i++) {
		reap();
		st = sleeper > 0 ? proc_state(sleeper) : 'x';
		if (!st || st == 'Z')
			break;
		usleep(10000);
	}
	check(sleeper > 0 && (!st || st == 'Z'), "hook timeout: its child %d was killed too",
	      sleeper);
}

/* The daemon's way: started, polled each period, killed past its deadline. */
static void test_hook_async(void)
{
	char hook[PATH_MAX], rel[128];
	struct evict_target t;
	double t0 = now_mono_ns() / 1e9;
	pid_t pid = 0;
	int r = -EINPROGRESS, polls = 0;

	if (!check(!write_script("exit3.sh", "#!/bin/sh\nsleep 0.3\nexit 3\n", hook, sizeof(hook)),
		   "hook, not waited for: script written"))
		return;
	target(&t, rel, sizeof(rel), "async");
	{
		char *argv[] = { hook, NULL };

		r = evict_hook_start(argv, &t, &pid);
		check(r == 0 && pid > 0, "hook started (pid %d)", pid);
	}
	r = evict_hook_poll(pid, t0 + 10);
	check(r == -EINPROGRESS, "hook: running, the caller goes on");
	while (r == -EINPROGRESS && now_mono_ns() / 1e9 < t0 + 5) {
		usleep(20000);
		r = evict_hook_poll(pid, t0 + 10);
		polls++;
	}
	check(r == 3, "hook: its exit status once it ended (%d, after %d polls)", r, polls);

	if (!check(!write_script("sleep.sh", "#!/bin/sh\nsleep 30\n", hook, sizeof(hook)),
		   "a hook that outlives its deadline: script written"))
		return;
	{
		char *argv[] = { hook, NULL };

		t0 = now_mono_ns() / 1e9;
		r = evict_hook_start(argv, &t, &pid);
	}
	check(!r && evict_hook_poll(pid, t0 + 0.2) == -EINPROGRESS, "hook: running before its deadline");
	usleep(300000);
	r = evict_hook_poll(pid, t0 + 0.2);
	check(r == -ETIMEDOUT && kill(pid, 0) && errno == ESRCH,
	      "hook: past its deadline, killed and reaped (%d)", r);
}

int main(void)
{
	char path[PATH_MAX + 64];
	int i, r;

	if (geteuid() != 0) {
		printf("SKIP: the eviction test needs root\n");
		return 77;
	}
	if (hierarchies_find(&hier) || !hier.cpu[0]) {
		printf("SKIP: no cgroup hierarchy carries cpu\n");
		return 77;
	}
	log_level = LOG_LVL_DEBUG;
	mounts[0] = hier.cpu;
	/* a v1 freezer only: on v2, freezing is the unified mount's own */
	mounts[1] = hier.freezer[0] && strcmp(hier.freezer, hier.unified) ? hier.freezer : NULL;
	mounts[2] = hier.unified[0] && strcmp(hier.unified, hier.cpu) ? hier.unified : NULL;
	snprintf(base, sizeof(base), "/koord-test-evict-%d", getpid());
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	atexit(cleanup);
	/* Orphans of the forker come to us, and are reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	if (!mkdtemp(state_dir)) {
		perror("mkdtemp");
		return 1;
	}
	have_state_dir = true;
	r = journal_open(&journal, state_dir);
	if (r) {
		fprintf(stderr, "journal_open: %s\n", strerror(-r));
		return 1;
	}
	writer_init(&w, &journal, false);
	for (i = 0; i < NMOUNTS; i++) {
		if (!mounts[i])
			continue;
		snprintf(path, sizeof(path), "%s%s", mounts[i], base);
		if (mkdir(path, 0755) || writer_add_root(&w, path)) {
			fprintf(stderr, "cannot set up %s\n", path);
			return 1;
		}
	}

	test_cgroup_kill();
	test_freezer();
	test_signals();
	test_vanished();
	test_exit_mid_eviction();
	test_hook();
	test_hook_timeout();
	test_hook_async();
	test_quota();
	check(writer_restore_all(&w) == 0, "the journal restores (freezer.state THAWED, the quota)");
	{
		char buf[64];

		check(read_in(quota_dir, quota_file, buf, sizeof(buf)) == 0 && !strcmp(buf, quota_orig),
		      "the quota is back to its original (%s)", buf);
	}
	return test_summary("test_evict");
}
