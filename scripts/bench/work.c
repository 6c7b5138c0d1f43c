// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Workloads for the bench's scale and reaction runs (scale.py, reaction.py):
 *
 *   koord-bench-work hog [CGROUP]
 *	spin forever (a BE CPU hog); with CGROUP, first join it (write 0 to its
 *	cgroup.procs), print "start T_NS" (CLOCK_MONOTONIC) and sleep 1 ms, as
 *	a runtime's process joins its pod, waits to be started, then execs;
 *   koord-bench-work server SLEEP_US WORK_US [LATE_US]
 *	sleep SLEEP_US, then work WORK_US of wall time, in a loop (an online
 *	server: it queues behind a hog on its CPU); with LATE_US, print
 *	"late T_NS US" (CLOCK_MONOTONIC) each time it woke LATE_US or more
 *	after its sleep ended: a run-queue wait that long, seen by the task;
 *   koord-bench-work hop SPIN_US SLEEP_US PASSES < DIRS
 *	move itself through every cgroup directory read from stdin (one per
 *	line): write 0 to its cgroup.procs, spin SPIN_US, sleep SLEEP_US so
 *	that it is switched out and woken there (the collector then holds an
 *	entry for the cgroup), next; PASSES times, 0 for ever. Prints the time
 *	of each pass on stdout. A sleep shorter than about 10 us often ends
 *	before the task is switched out, and the cgroup is then not seen.
 *
 * Python could do the hopping, but at 10,000 cgroups per second its own
 * overhead would be most of the cycle.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void spin_us(unsigned long us)
{
	unsigned long long until = now_ns() + us * 1000ULL;

	while (now_ns() < until)
		;
}

static void sleep_us(unsigned long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* Open DIR/cgroup.procs of every directory on stdin: how many, the fds in *fds. */
static size_t open_procs(int **fds)
{
	char line[4096], path[4096 + 16];
	size_t n = 0, cap = 0;
	struct rlimit rl;

	/* one fd per cgroup: the soft limit (often 1024) up to the hard one */
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			*fds = realloc(*fds, cap * sizeof(**fds));
			if (!*fds) {
				perror("hop: realloc");
				exit(1);
			}
		}
		snprintf(path, sizeof(path), "%s/cgroup.procs", line);
		(*fds)[n] = open(path, O_WRONLY | O_CLOEXEC);
		if ((*fds)[n] < 0) {
			fprintf(stderr, "hop: %s: %s\n", path, strerror(errno));
			exit(1);
		}
		n++;
	}
	return n;
}

static void __attribute__((noreturn)) server(unsigned long sleep, unsigned long work,
					     unsigned long late)
{
	unsigned long long t, woke;

	for (;;) {
		t = now_ns();
		sleep_us(sleep);
		woke = now_ns();
		if (late && woke - t >= (sleep + late) * 1000ULL) {
			printf("late %llu %llu\n", woke, (woke - t) / 1000 - sleep);
			fflush(stdout);
		}
		spin_us(work);
	}
}

static int hop(unsigned long spin, unsigned long sleep, unsigned long passes)
{
	unsigned long long t0;
	unsigned long pass;
	int *fds = NULL;
	size_t n, i;

	/* the default 50 us timer slack would make each short sleep cost 50 */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	n = open_procs(&fds);
	if (!n) {
		fprintf(stderr, "hop: no cgroups on stdin\n");
		return 1;
	}
	for (pass = 1; !passes || pass <= passes; pass++) {
		t0 = now_ns();
		for (i = 0; i < n; i++) {
			if (write(fds[i], "0", 1) != 1) {
				fprintf(stderr, "hop: moving into cgroup %zu: %s\n", i, strerror(errno));
				return 1;
			}
			spin_us(spin);
			sleep_us(sleep);
		}
		printf("pass %lu: %zu cgroups in %.1f ms\n", pass, n, (now_ns() - t0) / 1e6);
		fflush(stdout);
	}
	return 0;
}

/* Move the calling process into the cgroup directory @dir. */
static int join(const char *dir)
{
	char path[4096 + 16];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ok = fd >= 0 && write(fd, "0", 1) == 1;
	if (!ok)
		fprintf(stderr, "hog: joining %s: %s\n", dir, strerror(errno));
	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "hog")) {
		if (argc == 3 && join(argv[2]))
			return 1;
		if (argc == 3) {
			printf("start %llu\n", now_ns());
			fflush(stdout);
			sleep_us(1000);
		}
		for (;;)
			;
	}
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "server"))
		server(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0),
		       argc == 5 ? strtoul(argv[4], NULL, 0) : 0);
	if (argc == 5 && !strcmp(argv[1], "hop"))
		return hop(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0),
			   strtoul(argv[4], NULL, 0));
	fprintf(stderr, "usage: %s hog [CGROUP] | server SLEEP_US WORK_US [LATE_US] |\n"
		"       hop SPIN_US SLEEP_US PASSES < DIRS\n", argv[0]);
	return 2;
}
