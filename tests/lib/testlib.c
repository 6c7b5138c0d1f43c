// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include "collector.h"
#include "testlib.h"

static unsigned int passed, failed;
static char base_rel[64], base_abs[PATH_MAX + 64];
static pid_t children[64];
static size_t nchildren;
static char ft_dir[256];
static bool ft_mounted;
static pid_t ft_other;	/* the task whose runs are also recorded, 0 for none */
static int ft_cpu = -1;	/* the CPU whose switches are all recorded, -1 for none */

bool check(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %u - ", cond ? "ok" : "not ok", passed + failed + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	cond ? passed++ : failed++;
	return cond;
}

int test_summary(const char *name)
{
	printf("%s: %u passed, %u failed\n", name, passed, failed);
	return failed ? 1 : 0;
}

static void on_signal(int sig)
{
	exit(128 + sig);
}

void skip_part(const char *fmt, ...)
{
	const char *ci = getenv("CI");
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	printf("SKIP: %s\n", why);
	if (ci && !strcmp(ci, "true"))
		check(false, "under CI this must run: %s", why);
}

void require_bpf_env(struct cpu_hierarchy *h)
{
	const char *why = NULL;

	if (geteuid() != 0)
		why = "not root";
	else if (access("/sys/kernel/btf/vmlinux", R_OK))
		why = "kernel has no BTF";
	else if (cpu_hierarchy_find(NULL, h))
		why = "no cgroup hierarchy carries the cpu controller";
	if (why) {
		printf("SKIP: BPF tests need root, BTF and a cpu cgroup hierarchy: %s%s\n", why,
		       getenv("CI") && !strcmp(getenv("CI"), "true") ?
		       " (under CI=true this is a failure)" : "");
		exit(77);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	atexit(test_cgroup_cleanup);
}

const char *test_cgroup_base(const struct cpu_hierarchy *h)
{
	if (!base_rel[0]) {
		snprintf(base_rel, sizeof(base_rel), "/koord-test-%d", getpid());
		snprintf(base_abs, sizeof(base_abs), "%s%s", h->root, base_rel);
	}
	return base_rel;
}

char *test_cgroup_make(const struct cpu_hierarchy *h, const char *rel)
{
	char path[PATH_MAX + 256], *p, *out;
	size_t skip;

	test_cgroup_base(h);
	snprintf(path, sizeof(path), "%s/%s", base_abs, rel);
	skip = strlen(h->root) + 1;
	for (p = path + skip; ; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			fprintf(stderr, "mkdir %s: %s\n", path, strerror(errno));
			return NULL;
		}
		/* On v2, let the cpu controller reach the children. */
		if (h->version == 2 && c) {
			char f[PATH_MAX + 300];
			int fd;

			snprintf(f, sizeof(f), "%s/cgroup.subtree_control", path);
			fd = open(f, O_WRONLY);
			/* Failing here (processes in an inner node) is fine. */
			if (fd >= 0) {
				ssize_t r = write(fd, "+cpu", 4);

				(void)r;
				close(fd);
			}
		}
		*p = c;
		if (!c)
			break;
	}
	if (asprintf(&out, "%s/%s", base_rel, rel) < 0)
		return NULL;
	return out;
}

const char *test_pod_path(enum koord_class qos, const char *uid, const char *name)
{
	static char buf[8][512];
	static unsigned int i;
	const char *layout = getenv("KOORD_TEST_LAYOUT");
	const char *tier = qos == KC_LS ? "burstable" : qos == KC_BE ? "besteffort" : NULL;
	char *out = buf[i++ % 8], uid_[64];
	size_t k;

	if (layout && !strcmp(layout, "systemd")) {
		/* systemd spells the UID with '_' and names containers after the runtime */
		for (k = 0; uid[k] && k < sizeof(uid_) - 1; k++)
			uid_[k] = uid[k] == '-' ? '_' : uid[k];
		uid_[k] = '\0';
		if (tier)
			snprintf(out, 512, "kubepods.slice/kubepods-%s.slice/kubepods-%s-pod%s.slice/"
				 "cri-containerd-%s.scope", tier, tier, uid_, name);
		else
			snprintf(out, 512, "kubepods.slice/kubepods-pod%s.slice/cri-containerd-%s.scope",
				 uid_, name);
	} else if (tier) {
		snprintf(out, 512, "kubepods/%s/pod%s/%s", tier, uid, name);
	} else {
		snprintf(out, 512, "kubepods/pod%s/%s", uid, name);
	}
	return out;
}

bool test_emulated(void)
{
	const char *e = getenv("KOORD_TEST_EMULATED");

	return e && !strcmp(e, "1");
}

static void cgroup_file(const struct cpu_hierarchy *h, const char *rel, const char *file,
			char *buf, size_t len)
{
	snprintf(buf, len, "%s%s/%s", h->root, rel, file);
}

int cgroup_write(const struct cpu_hierarchy *h, const char *rel, const char *file, const char *val)
{
	char path[PATH_MAX + 512];
	int fd, err = 0;

	cgroup_file(h, rel, file, path, sizeof(path));
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		err = -errno;
	close(fd);
	return err;
}

int cgroup_read(const struct cpu_hierarchy *h, const char *rel, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX + 512];
	ssize_t n;
	int fd;

	cgroup_file(h, rel, file, path, sizeof(path));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

__u64 cgroup_id(const struct cpu_hierarchy *h, const char *rel)
{
	char path[PATH_MAX + 512];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", h->root, rel);
	return stat(path, &st) ? 0 : st.st_ino;
}

static void kill_all(void)
{
	size_t i;

	for (i = 0; i < nchildren; i++) {
		if (children[i] > 0) {
			kill(children[i], SIGKILL);
			waitpid(children[i], NULL, 0);
			children[i] = 0;
		}
	}
}

/* Remove a tree bottom-up (cgroup directories hold only pseudo-files). */
static void rmdir_tree(const char *path)
{
	char sub[PATH_MAX + 512];
	struct dirent *de;
	DIR *d = opendir(path);

	if (d) {
		while ((de = readdir(d))) {
			if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
			rmdir_tree(sub);
		}
		closedir(d);
	}
	rmdir(path);
}

static int ft_write(const char *file, const char *val);

void test_cgroup_cleanup(void)
{
	kill_all();
	if (ft_dir[0]) {
		ft_write("tracing_on", "0");
		rmdir(ft_dir);
		ft_dir[0] = '\0';
	}
	if (ft_mounted) {
		umount("/sys/kernel/tracing");
		ft_mounted = false;
	}
	if (base_abs[0]) {
		rmdir_tree(base_abs);
		base_abs[0] = '\0';
		base_rel[0] = '\0';
	}
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

pid_t spawn(const struct cpu_hierarchy *h, const char *rel, int cpu, enum workload wl,
	    unsigned int period_us)
{
	int ready[2];
	char c = 0;
	pid_t pid;

	if (nchildren == sizeof(children) / sizeof(children[0]) || pipe(ready))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct timespec ts = { 0, (long)period_us * 1000 };
		volatile unsigned long spin = 0;

		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* A test killed by a signal (a closed pipe, a timeout) takes its workloads along. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		close(ready[0]);
		c = cgroup_write(h, rel, "cgroup.procs", "0") ? 1 : 0;
		if (cpu >= 0)
			pin(cpu);
		if (write(ready[1], &c, 1) != 1 || c)
			_exit(1);
		close(ready[1]);
		/*
		 * A task moved while it runs is charged to its former container
		 * until its next switch (docs/metrics.md): block once, so that a
		 * hog alone on its CPU starts out in its own.
		 */
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		if (wl == WL_HOG)
			for (;;)
				spin++;
		while (wl == WL_FAULTER) {
			char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			size_t i;

			for (i = 0; m != MAP_FAILED && i < 1 << 20; i += 4096)
				m[i] = 1;
			if (m != MAP_FAILED)
				munmap(m, 1 << 20);
		}
		for (;;) {
			nanosleep(&ts, NULL);
			if (wl == WL_SERVER) {
				__u64 until = now_mono_ns() + 300000;

				while (now_mono_ns() < until)
					spin++;
			}
		}
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1 || c) {
		close(ready[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	close(ready[0]);
	children[nchildren++] = pid;
	return pid;
}

void stop(pid_t pid)
{
	size_t i;

	for (i = 0; i < nchildren; i++) {
		if (children[i] == pid) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			children[i] = 0;
		}
	}
}

__u64 task_runtime_ns(pid_t pid)
{
	unsigned long long ns = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

__u64 cpu_unclocked_ns(int cpu)
{
	unsigned long long v[8] = {}, ticks = sysconf(_SC_CLK_TCK);
	char want[16], line[512];
	FILE *f = fopen("/proc/stat", "re");
	bool found = false;

	snprintf(want, sizeof(want), "cpu%d ", cpu);
	while (f && !found && fgets(line, sizeof(line), f))
		found = !strncmp(line, want, strlen(want)) &&
			sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
			       &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8;
	if (f)
		fclose(f);
	/* irq, softirq and steal, in USER_HZ ticks */
	return found && ticks > 0 ? (v[5] + v[6] + v[7]) * (1000000000ull / ticks) : 0;
}

__u64 now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int ft_write(const char *file, const char *val)
{
	char path[512];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", ft_dir, file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		err = -errno;
	close(fd);
	return err;
}

int ftrace_start(pid_t pid)
{
	return ftrace_start_pair(pid, 0);
}

void ftrace_watch_cpu(int cpu)
{
	ft_cpu = cpu;
}

int ftrace_start_pair(pid_t pid, pid_t other)
{
	static const char *const events[] = { "sched_wakeup", "sched_wakeup_new", "sched_switch" };
	char buf[128], file[128];
	size_t i;
	int err;

	if (access("/sys/kernel/tracing/instances", F_OK)) {
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
			return -errno;
		ft_mounted = true;
	}
	snprintf(ft_dir, sizeof(ft_dir), "/sys/kernel/tracing/instances/koord-test-%d", getpid());
	if (mkdir(ft_dir, 0755) && errno != EEXIST)
		return -errno;
	ft_other = other;
	/* a whole CPU's switches take room: 40 s of a busy one is ~24 MiB */
	err = ft_write("trace_clock", "mono") ?:
	      ft_write("buffer_size_kb", ft_cpu >= 0 ? "49152" : "8192");
	for (i = 0; !err && i < 3; i++) {
		if (i < 2)
			snprintf(buf, sizeof(buf), "pid == %d", pid);
		else if (other)
			snprintf(buf, sizeof(buf), "prev_pid == %d || next_pid == %d || "
				 "prev_pid == %d || next_pid == %d", pid, pid, other, other);
		else
			snprintf(buf, sizeof(buf), "prev_pid == %d || next_pid == %d", pid, pid);
		if (i == 2 && ft_cpu >= 0)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " || CPU == %d", ft_cpu);
		snprintf(file, sizeof(file), "events/sched/%s/filter", events[i]);
		err = ft_write(file, buf);
		snprintf(file, sizeof(file), "events/sched/%s/enable", events[i]);
		err = err ?: ft_write(file, "1");
	}
	return err ?: ft_write("tracing_on", "1");
}

static __u64 parse_ts(const char *line, const char *ev)
{
	const char *p = strstr(line, ev), *q;
	unsigned long sec, usec;

	/* "... [000] d..2.  1234.567890: sched_switch: ..." */
	if (!p || p - line < 3)
		return 0;
	for (q = p - 2; q > line && q[-1] != ' '; q--)
		;
	if (sscanf(q, "%lu.%lu:", &sec, &usec) != 2)
		return 0;
	return (__u64)sec * 1000000000ull + (__u64)usec * 1000;
}

static long field(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static int grow(__u64 **v, size_t cap)
{
	__u64 *p = realloc(*v, cap * sizeof(*p));

	if (!p)
		return -ENOMEM;
	*v = p;
	return 0;
}

/* Who held the watched CPU during the open wait: the first few tasks, with their time. */
#define HOLDERS 8
struct holder {
	char who[HOLDERS][32];
	__u64 ns[HOLDERS];
	int n;
};

static int push(struct ftrace_waits *w, size_t *cap, __u64 end, __u64 len, __u64 other,
		__u64 unsure, const struct holder *h)
{
	if (w->n == *cap) {
		size_t c = *cap ? *cap * 2 : 1024;
		char (*p)[32] = realloc(w->holder, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		w->holder = p;
		if (grow(&w->end_ns, c) || grow(&w->len_ns, c) || grow(&w->other_ns, c) ||
		    grow(&w->other_unsure_ns, c) || grow(&w->holder_ns, c))
			return -ENOMEM;
		*cap = c;
	}
	w->end_ns[w->n] = end;
	w->len_ns[w->n] = len;
	w->holder[w->n][0] = '\0';
	w->holder_ns[w->n] = 0;
	for (int i = 0; i < h->n; i++)
		if (h->ns[i] > w->holder_ns[w->n]) {
			memcpy(w->holder[w->n], h->who[i], sizeof(h->who[i]));
			w->holder_ns[w->n] = h->ns[i];
		}
	w->other_unsure_ns[w->n] = unsure;
	w->other_ns[w->n++] = other;
	return 0;
}

/* The CPU a trace line was recorded on ("... [003] d..2. ..."), -1 when unreadable. */
static int line_cpu(const char *line)
{
	const char *p = strchr(line, '[');

	return p ? atoi(p + 1) : -1;
}

/* A switch on the watched CPU: the task it switches out held it since the last one. */
static void watched_switch(const char *line, __u64 ts, __u64 wait_start, __u64 *since,
			   struct holder *h)
{
	const char *comm = strstr(line, "prev_comm="), *end;
	__u64 from = *since > wait_start ? *since : wait_start;
	char who[32];
	int i;

	if (wait_start && *since && comm && ts > from && field(line, " prev_pid=") != 0) {
		comm += strlen("prev_comm=");
		end = strstr(comm, " prev_pid=");
		snprintf(who, sizeof(who), "%.*s/%ld", end ? (int)(end - comm) : 15, comm,
			 field(line, " prev_pid="));
		for (i = 0; i < h->n && strcmp(h->who[i], who); i++)
			;
		if (i == h->n && h->n < HOLDERS) {
			memcpy(h->who[i], who, sizeof(who));
			h->ns[h->n++] = 0;
		}
		if (i < h->n)
			h->ns[i] += ts - from;
	}
	*since = ts;
}

/* Events the trace instance's buffers overwrote, all CPUs together. */
static size_t ft_overrun(void)
{
	char path[512], line[128];
	size_t n = 0;
	long cpu, ncpu = sysconf(_SC_NPROCESSORS_CONF);
	FILE *f;

	for (cpu = 0; cpu < ncpu; cpu++) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%ld/stats", ft_dir, cpu);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "overrun: ", 9))
				n += strtoul(line + 9, NULL, 10);
		if (f)
			fclose(f);
	}
	return n;
}

/*
 * Same definition as the collector: a wait opens at a wakeup of a task not
 * running, or when it is switched out runnable; it ends when it runs. The
 * other task's runs that overlap a wait are added to it.
 */
int ftrace_stop(pid_t pid, struct ftrace_waits *w)
{
	char path[512], *line = NULL;
	__u64 ts, start = 0, other_in = 0, other_last = 0, other = 0, unsure = 0, cpu_since = 0;
	struct holder held = { .n = 0 };
	bool seen_in = false;
	bool running = false;
	size_t cap = 0, len = 0;
	FILE *f;
	int err = 0;

	memset(w, 0, sizeof(*w));
	ft_write("tracing_on", "0");
	w->overrun = ft_overrun();
	snprintf(path, sizeof(path), "%s/trace", ft_dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && getline(&line, &len, f) > 0) {
		if (line[0] == '#')
			continue;
		if ((ts = parse_ts(line, " sched_switch: "))) {
			char *arrow = strstr(line, "==>");

			if (!arrow)
				continue;
			if (ft_cpu >= 0 && line_cpu(line) == ft_cpu)
				watched_switch(line, ts, start, &cpu_since, &held);
			/*
			 * The other task's switch with no event (the kernel emits none
			 * for a few a second): it ran some of the time since its last
			 * one, how much is unknown, so that part of the wait is unsure.
			 */
			if (ft_other && field(line, " prev_pid=") == ft_other) {
				__u64 from = other_in ?: other_last;

				if (start)
					*(other_in ? &other : &unsure) += ts - (from > start ? from : start);
				other_in = 0;
				other_last = ts;
			} else if (ft_other && other_in && start &&
				   (field(arrow, " next_pid=") == ft_other ||
				    field(arrow, " next_pid=") == pid)) {
				unsure += ts - (other_in > start ? other_in : start);
				other_in = 0;
			}
			if (ft_other && field(arrow, " next_pid=") == ft_other)
				other_in = other_last = ts;
			if (field(line, " prev_pid=") == pid) {
				char *st = strstr(line, " prev_state=");

				/*
				 * Out without having come in: the kernel emitted no event for
				 * that, so the wait open then ended unseen. It is not in the
				 * list; the other task's time in it is kept apart.
				 */
				if (!running && seen_in) {
					w->lost++;
					if (start && other_in)
						unsure += ts - (other_in > start ? other_in : start);
					if (start)
						w->lost_other_ns += other + unsure;
					other_in = 0;
				}
				running = false;
				start = st && st[12] == 'R' ? ts : 0;
				other = unsure = 0;
				held.n = 0;
			}
			if (field(arrow, " next_pid=") == pid) {
				if (running)
					w->lost++;
				seen_in = true;
				if (start)
					err = push(w, &cap, ts, ts - start, other, unsure, &held);
				start = other = unsure = 0;
				running = true;
			}
		} else if ((ts = parse_ts(line, " sched_wakeup")) && field(line, " pid=") == pid) {
			if (!running && !start) {
				start = ts;
				other = unsure = 0;
				held.n = 0;
			}
		}
	}
	free(line);
	fclose(f);
	rmdir(ft_dir);
	ft_dir[0] = '\0';
	return err;
}

size_t ftrace_count(const struct ftrace_waits *w, __u64 from_ns, __u64 to_ns)
{
	size_t i, n = 0;

	for (i = 0; i < w->n; i++)
		n += w->end_ns[i] >= from_ns && w->end_ns[i] <= to_ns;
	return n;
}

void ftrace_waits_free(struct ftrace_waits *w)
{
	free(w->end_ns);
	free(w->other_ns);
	free(w->other_unsure_ns);
	free(w->len_ns);
	free(w->holder);
	free(w->holder_ns);
	memset(w, 0, sizeof(*w));
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

__u64 quantile(__u64 *v, size_t n, double q)
{
	size_t rank;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	rank = (size_t)(q * n + 0.999999);
	if (rank < 1)
		rank = 1;
	return v[rank > n ? n - 1 : rank - 1];
}

void watch_window(struct collector *col, unsigned int ms, struct window *w)
{
	struct sample a = {}, b = {};
	__u64 end;

	collector_sample(col, &a);
	end = now_mono_ns() + ms * 1000000ull;
	while (now_mono_ns() < end)
		collector_poll(col, 50);
	collector_sample(col, &b);
	window_free(w);
	window_compute(&a, &b, w);
	sample_free(&a);
	sample_free(&b);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (remove(path))
		printf("# cannot remove %s: %s\n", path, strerror(errno));
	return 0;
}

void remove_tree(const char *path)
{
	nftw(path, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}
