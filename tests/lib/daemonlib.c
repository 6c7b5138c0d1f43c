// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <sched.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "daemonlib.h"
#include "testlib.h"

const char *daemon_bin(void)
{
	const char *bin = getenv("KOORD_BPF_BIN");

	return bin && *bin ? bin : "build/koord-bpf";
}

pid_t daemon_start(const char *cfg, const char *log, int port, const char *extra)
{
	char listen[64];
	pid_t pid, test = getpid();

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	fflush(NULL);
	pid = fork();
	if (!pid) {
		int fd = log ? open(log, O_WRONLY | O_CREAT | O_APPEND, 0600) : -1;

		/* a test that stops early (a signal, a fatal check) stops its daemon: SIGTERM restores */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != test)
			_exit(127);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execl(daemon_bin(), "koord-bpf", "--config", cfg, "--listen", listen,
		      extra, (char *)NULL);
		_exit(127);
	}
	return pid;
}

bool daemon_config(const char *path, bool enable, const char *be, const char *root,
		   const char *state_dir, const char *own)
{
	FILE *f = fopen(path, "w");
	const char *p, *colon;

	if (!f)
		return false;
	fprintf(f, "{\"resourceUsedThresholdWithBE\": {\"enable\": %s%s%s},\n"
		" \"koordBPF\": {\"cgroupRoots\": [", enable ? "true" : "false", *be ? ", " : "", be);
	for (p = root; p; p = colon ? colon + 1 : NULL) {
		colon = strchr(p, ':');
		fprintf(f, "%s\"%.*s\"", p == root ? "" : ", ",
			(int)(colon ? (size_t)(colon - p) : strlen(p)), p);
	}
	fprintf(f, "], \"stateDir\": \"%s\"%s%s}}\n", state_dir, *own ? ", " : "", own);
	return !fclose(f);
}

int daemon_stop(pid_t pid, int sig)
{
	int st, i;

	kill(pid, sig);
	for (i = 0; i < 100; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		sleep_ms(100);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

bool daemon_alive(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

int loopback_connect(const char *from, int port)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	dst.sin_port = htons(port);
	if (fd >= 0 && ((from && (inet_pton(AF_INET, from, &src.sin_addr) != 1 ||
				  bind(fd, (struct sockaddr *)&src, sizeof(src)))) ||
			connect(fd, (struct sockaddr *)&dst, sizeof(dst)))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int http_get_from(const char *from, int port, const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd, status = -1;
	ssize_t n;

	fd = loopback_connect(from, port);
	if (fd < 0)
		return -1;
	dprintf(fd, "GET %s HTTP/1.0\r\n\r\n", path);
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fd);
	sscanf(buf, "HTTP/1.%*d %d", &status);
	return status;
}

int http_get(int port, const char *path, char *buf, size_t len)
{
	return http_get_from(NULL, port, path, buf, len);
}

double daemon_metric(int port, const char *name)
{
	static char body[1 << 20];
	char needle[256];
	const char *at;

	snprintf(needle, sizeof(needle), "\n%s ", name);
	if (http_get(port, "/metrics", body, sizeof(body)) != 200 || !(at = strstr(body, needle)))
		return -1;
	return atof(at + strlen(needle));
}

int file_count(const char *path, const char *needle)
{
	char line[1024];
	FILE *f = fopen(path, "re");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return n;
}

static bool has_now(const char *path, const char *needle)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	bool found = false;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	while (fd >= 0 && buf && (n = read(fd, buf + len, cap - 1 - len)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *b = realloc(buf, cap * 2);

			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
	}
	if (buf) {
		buf[len] = '\0';
		found = strstr(buf, needle);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return found;
}

bool file_has(const char *path, const char *needle, unsigned int ms)
{
	for (;;) {
		if (has_now(path, needle))
			return true;
		if (!ms)
			return false;
		sleep_ms(ms < 100 ? ms : 100);
		ms -= ms < 100 ? ms : 100;
	}
}

void show_file(const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f) {
		printf("# (no %s)\n", path);
		return;
	}
	while (fgets(line, sizeof(line), f))
		printf("#   %s%s", line, strchr(line, '\n') ? "" : "\n");
	fclose(f);
}

bool daemon_test_init(char *base, char *cfg, size_t cfglen, char *log, size_t loglen)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(1, &one);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		sched_setaffinity(0, sizeof(one), &one);
	if (access(daemon_bin(), X_OK)) {
		printf("%s missing: run from the project root after make\n", daemon_bin());
		return false;
	}
	if (!mkdtemp(base))
		return false;
	snprintf(cfg, cfglen, "%s.json", base);
	snprintf(log, loglen, "%s.log", base);
	return true;
}

int daemon_test_end(const char *name, const char *base)
{
	int failed = test_summary(name);
	char pattern[PATH_MAX];
	glob_t left;
	size_t i;

	snprintf(pattern, sizeof(pattern), "%s*", base);
	if (failed || getenv("KOORD_TEST_KEEP")) {
		printf("# daemon logs: %s\n", pattern);
		return failed;
	}
	if (glob(pattern, 0, NULL, &left))
		return failed;
	for (i = 0; i < left.gl_pathc; i++)
		remove_tree(left.gl_pathv[i]);
	globfree(&left);
	return failed;
}

bool tree_make(const struct cpu_hierarchy *h, const char *r)
{
	char *p = test_cgroup_make(h, r);
	bool ok = p;

	free(p);
	return ok;
}

const char *tree_path(const struct cpu_hierarchy *h, const char *r)
{
	static char buf[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", test_cgroup_base(h), r);
	return buf[i];
}

static bool value_is(const struct cpu_hierarchy *h, const char *r, const char *file,
		     const char *want)
{
	char buf[256];

	if (cgroup_read(h, tree_path(h, r), file, buf, sizeof(buf)))
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	return !strcmp(buf, want);
}

bool tree_value_is(const struct cpu_hierarchy *h, const char *r, const char *file, const char *want,
		   unsigned int ms)
{
	for (; ms; ms -= ms < 100 ? ms : 100) {
		if (value_is(h, r, file, want))
			return true;
		sleep_ms(100);
	}
	return value_is(h, r, file, want);
}

static const char *const cpu_settings[] = {
	"cpu.idle", "cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.weight", "cpu.max",
	NULL
};
static const char *const cpuset_settings[] = { "cpuset.cpus", "cpuset.mems", NULL };

static void snapshot_dir(const char *abs, const char *const *settings, FILE *out)
{
	char path[PATH_MAX + 300], buf[256];
	struct dirent *de;
	ssize_t n;
	size_t i;
	DIR *d;
	int fd;

	for (i = 0; settings[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", abs, settings[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		fprintf(out, "%s=%s", path, buf);
	}
	d = opendir(abs);
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", abs, de->d_name);
		snapshot_dir(path, settings, out);
	}
	if (d)
		closedir(d);
}

char *cgroup_snapshot(const struct cpu_hierarchy *h)
{
	char abs[PATH_MAX + 64], *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return NULL;
	snprintf(abs, sizeof(abs), "%s%s", h->root, test_cgroup_base(h));
	snapshot_dir(abs, cpu_settings, f);
	fclose(f);
	return s;
}

#define CPUSET_V1	"/sys/fs/cgroup/cpuset"

const char *cpuset_tree(const struct cpu_hierarchy *h)
{
	static char base[PATH_MAX];

	if (access(CPUSET_V1 "/cpuset.cpus", F_OK) || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return "";
	snprintf(base, sizeof(base), CPUSET_V1 "%s", test_cgroup_base(h));
	return base;
}

static bool put(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX + 300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	return f && fputs(val, f) >= 0 && !fclose(f);
}

/* The v1 hierarchies a pod is made in besides cpu (where those are mounted on their own). */
static const char *const mirrored[] = { "cpuset", "cpuacct", "memory", NULL };

/* A level of the mirror in @ctl; v1 makes a cpuset empty: it gets CPUs and a node first. */
static bool mirror_level(const char *ctl, const char *dir)
{
	char cpus[32];

	if (mkdir(dir, 0755) && errno != EEXIST)
		return false;
	if (strcmp(ctl, "cpuset"))
		return true;
	snprintf(cpus, sizeof(cpus), "0-%ld", sysconf(_SC_NPROCESSORS_ONLN) - 1);
	return put(dir, "cpuset.cpus", cpus) && put(dir, "cpuset.mems", "0");
}

/* @ctl's v1 hierarchy, when mounted on its own (not joined with cpu, as cpu,cpuacct is). */
static bool mirror_mount(const char *ctl, char *mount, size_t len)
{
	char probe[PATH_MAX];
	struct stat st;

	snprintf(mount, len, "/sys/fs/cgroup/%s", ctl);
	snprintf(probe, sizeof(probe), "%s/cgroup.procs", mount);
	return !lstat(mount, &st) && S_ISDIR(st.st_mode) && !access(probe, F_OK) &&
	       (strcmp(ctl, "cpuset") || sysconf(_SC_NPROCESSORS_ONLN) > 1);
}

/* A test that stops early (a signal, a fatal check) removes its mirrors too. */
static const struct cpu_hierarchy *mirrored_by;

static void unmirror_at_exit(void)
{
	pod_unmirror(mirrored_by);
}

bool pod_mirror(const struct cpu_hierarchy *h, const char *r, pid_t pid)
{
	char mount[PATH_MAX], path[PATH_MAX + 300], val[16];
	const char *p;
	cpu_set_t pinned;
	bool ok = true, any = false;
	int i, len;

	if (!*cpuset_tree(h))
		return false;
	if (sched_getaffinity(pid, sizeof(pinned), &pinned))
		return false;
	if (!mirrored_by && !atexit(unmirror_at_exit))	/* runs before testlib's cleanup */
		mirrored_by = h;
	for (i = 0; mirrored[i]; i++) {
		if (!mirror_mount(mirrored[i], mount, sizeof(mount)))
			continue;
		snprintf(path, sizeof(path), "%s%s", mount, test_cgroup_base(h));
		ok &= mirror_level(mirrored[i], path);
		p = r;
		do {
			p = strchr(p + 1, '/');
			len = p ? (int)(p - r) : (int)strlen(r);
			snprintf(path, sizeof(path), "%s%s/%.*s", mount, test_cgroup_base(h), len, r);
			ok &= mirror_level(mirrored[i], path);
		} while (p);
		snprintf(val, sizeof(val), "%d", pid);
		ok &= put(path, "cgroup.procs", val);
		any = true;
	}
	/* joining a v1 cpuset resets the task's affinity to the cpuset's CPUs: pin it again */
	return ok && any && !sched_setaffinity(pid, sizeof(pinned), &pinned);
}

void pod_unmirror(const struct cpu_hierarchy *h)
{
	char mount[PATH_MAX], cmd[4 * PATH_MAX];
	int i;

	for (i = 0; mirrored[i]; i++) {
		if (!mirror_mount(mirrored[i], mount, sizeof(mount)))
			continue;
		/* tasks back to the hierarchy's root, then the tree, deepest first */
		snprintf(cmd, sizeof(cmd),
			 "b=%s%s; [ -d $b ] || exit 0; for f in $(find $b -name cgroup.procs); do "
			 "for p in $(cat $f); do echo $p > %s/cgroup.procs; done; done; "
			 "find $b -depth -type d -exec rmdir {} + 2>/dev/null", mount,
			 test_cgroup_base(h), mount);
		if (system(cmd))
			printf("# could not remove all of %s%s\n", mount, test_cgroup_base(h));
	}
}

char *cpuset_snapshot(const struct cpu_hierarchy *h)
{
	const char *base = cpuset_tree(h);
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return NULL;
	if (*base)
		snapshot_dir(base, cpuset_settings, f);
	fclose(f);
	return s;
}

void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f && fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

void pin_cpu(pid_t pid, int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(pid, sizeof(s), &s);
}

void probe_tail_behind(pid_t probe, pid_t other, unsigned int ms, struct tail *t)
{
	struct ftrace_waits fw = {};
	size_t i;

	memset(t, 0, sizeof(*t));
	if (ftrace_start_pair(probe, other))
		return;
	sleep_ms(ms);
	if (ftrace_stop(probe, &fw) || !fw.n)
		return;
	t->n = fw.n;
	for (i = 0; i < fw.n; i++)
		t->other_sum += fw.other_ns[i];
	/* quantile() sorts: the ends are not needed after this */
	t->p999 = quantile(fw.len_ns, fw.n, 0.999);
	t->max = quantile(fw.len_ns, fw.n, 1.0);
	t->other_p999 = quantile(fw.other_ns, fw.n, 0.999);
	t->other_max = quantile(fw.other_ns, fw.n, 1.0);
	ftrace_waits_free(&fw);
}

void probe_tail(pid_t probe, unsigned int ms, __u64 *p999, __u64 *max, size_t *n)
{
	struct tail t;

	probe_tail_behind(probe, 0, ms, &t);
	*p999 = t.p999;
	*max = t.max;
	*n = t.n;
}
