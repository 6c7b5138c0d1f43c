// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "daemonlib.h"
#include "testlib.h"

pid_t daemon_start(const char *cfg, const char *log, int port, const char *extra)
{
	char listen[64];
	pid_t pid;

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	fflush(NULL);
	pid = fork();
	if (!pid) {
		int fd = log ? open(log, O_WRONLY | O_CREAT | O_APPEND, 0600) : -1;

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execl("build/koord-bpf", "koord-bpf", "--config", cfg, "--listen", listen,
		      extra, (char *)NULL);
		_exit(127);
	}
	return pid;
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

int http_get(int port, const char *path, char *buf, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	size_t got = 0;
	int fd, status = -1;
	ssize_t n;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	dprintf(fd, "GET %s HTTP/1.0\r\n\r\n", path);
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fd);
	sscanf(buf, "HTTP/1.%*d %d", &status);
	return status;
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

static const char *const settings[] = {
	"cpu.idle", "cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.weight", "cpu.max",
};

static void snapshot_dir(const char *abs, FILE *out)
{
	char path[PATH_MAX + 300], buf[256];
	struct dirent *de;
	ssize_t n;
	size_t i;
	DIR *d;
	int fd;

	for (i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
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
		snapshot_dir(path, out);
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
	snapshot_dir(abs, f);
	fclose(f);
	return s;
}

void probe_tail(pid_t probe, unsigned int ms, __u64 *p999, __u64 *max, size_t *n)
{
	struct ftrace_waits fw = {};
	__u64 *v;

	*p999 = *max = *n = 0;
	if (ftrace_start(probe))
		return;
	sleep_ms(ms);
	if (ftrace_stop(probe, &fw) || !fw.n)
		return;
	v = malloc(fw.n * sizeof(*v));
	if (v) {
		memcpy(v, fw.len_ns, fw.n * sizeof(*v));
		*n = fw.n;
		*p999 = quantile(v, fw.n, 0.999);
		*max = quantile(v, fw.n, 1.0);
		free(v);
	}
	ftrace_waits_free(&fw);
}
