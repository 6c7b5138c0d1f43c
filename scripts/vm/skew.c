// SPDX-License-Identifier: GPL-2.0
/*
 * VM clock-skew probe: how far apart are a BPF program's bpf_ktime_get_ns()
 * and ftrace's timestamp (trace_clock mono, the same clock) for the *same*
 * tracepoint hit, and so how far can a run-queue wait measured in BPF differ
 * from the same wait read with ftrace? On bare metal the answer is ~1 us
 * (ftrace prints microseconds); under qemu TCG the emulated CPU can stall
 * between the two clock reads (code translation, the host descheduling the
 * vCPU thread), and that is what this measures.
 *
 * Workload as in tests/bpf/test_runq.c: a CPU hog and a 1 ms sleep/wake
 * probe pinned to CPU 0, this program on CPU 1. A BPF program (attached
 * first, like the collector) and a tracefs instance (attached second) record
 * the probe's sched_wakeup(_new) and sched_switch events; they are paired one
 * to one. Waits are formed from both by the collector's definition (wakeup
 * of a task not running, or switch-out runnable, until switch-in).
 *
 * The project's collector (libkoord) is attached between the two, with the
 * probe in a cgroup of its own, so the three readings of the probe's waits
 * can be compared over the collector's window: the recorder reads the clock
 * before the collector at every hit, ftrace after it.
 *
 * Checks: the programs load and attach; ftrace and BPF see the same events
 * in the same order. The skew figures are measurements, printed as `#` lines.
 * Usage: skew [MS]   (default 3000; environment SKEW_MS)
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "skew.skel.h"
#include "collector.h"
#include "window.h"

enum { EV_WAKE = 1, EV_OUT_R, EV_OUT_S, EV_IN, EV_KINDS };
static const char *const kind_name[EV_KINDS] = { "?", "wakeup", "switch-out R", "switch-out S",
						 "switch-in" };

struct ev {
	__u64 ts;
	__u32 kind;
	__u32 pad;
};

static int passed, failed;
static char ft_dir[256], cg_dir[PATH_MAX + 64];
static pid_t kids[2];

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", passed + failed + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	ok ? passed++ : failed++;
}

static int quiet_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	return lvl == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, ap);
}

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static pid_t spawn(bool hog)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	pin(0);
	if (hog) {
		volatile unsigned long spin = 0;

		for (;;)
			spin++;
	}
	for (;;) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
}

static void cleanup(void)
{
	int i;

	for (i = 0; i < 2; i++)
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
			kids[i] = 0;
		}
	if (ft_dir[0]) {
		rmdir(ft_dir);
		ft_dir[0] = 0;
	}
	if (cg_dir[0]) {
		rmdir(cg_dir);
		cg_dir[0] = 0;
	}
}

/* The probe in a cgroup of its own under the cpu hierarchy; returns its id or 0. */
static __u64 probe_cgroup(const struct cpu_hierarchy *h, pid_t pid)
{
	char path[PATH_MAX + 128], buf[32];
	struct stat st;
	int fd, n;

	snprintf(cg_dir, sizeof(cg_dir), "%s/koord-skew-%d", h->root, getpid());
	if (mkdir(cg_dir, 0755) && errno != EEXIST)
		return 0;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg_dir);
	n = snprintf(buf, sizeof(buf), "%d", pid);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, buf, n) != n) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	close(fd);
	return stat(cg_dir, &st) ? 0 : st.st_ino;
}

/*
 * Sample with the probe stopped, so that none of its waits ends while the
 * maps are read: the three readings then cover exactly the same waits.
 */
static void paused_sample(struct collector *col, pid_t probe, struct sample *s)
{
	kill(probe, SIGSTOP);
	waitpid(probe, NULL, WUNTRACED);
	usleep(20000);		/* its last switch-out follows the stop notice */
	collector_sample(col, s);
	kill(probe, SIGCONT);
}

/* Count, mean and max (us) of the waits ending in [from, to]. */
static void wait_stats(const __u64 *end, const double *len, size_t n, __u64 from, __u64 to,
		       size_t *cnt, double *mean, double *max)
{
	double sum = 0;
	size_t i;

	*cnt = 0;
	*max = 0;
	for (i = 0; i < n; i++) {
		if (end[i] < from || end[i] > to)
			continue;
		++*cnt;
		sum += len[i];
		if (len[i] > *max)
			*max = len[i];
	}
	*mean = *cnt ? sum / *cnt : 0;
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

static int ft_start(pid_t pid)
{
	static const char *const events[] = { "sched_wakeup", "sched_wakeup_new", "sched_switch" };
	char buf[128], file[128];
	int err = 0, i;

	if (access("/sys/kernel/tracing/instances", F_OK) &&
	    mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return -errno;
	snprintf(ft_dir, sizeof(ft_dir), "/sys/kernel/tracing/instances/koord-skew-%d", getpid());
	if (mkdir(ft_dir, 0755) && errno != EEXIST)
		return -errno;
	err = ft_write("trace_clock", "mono") ?: ft_write("buffer_size_kb", "8192");
	for (i = 0; !err && i < 3; i++) {
		if (i < 2)
			snprintf(buf, sizeof(buf), "pid == %d", pid);
		else
			snprintf(buf, sizeof(buf), "prev_pid == %d || next_pid == %d", pid, pid);
		snprintf(file, sizeof(file), "events/sched/%s/filter", events[i]);
		err = ft_write(file, buf);
		snprintf(file, sizeof(file), "events/sched/%s/enable", events[i]);
		err = err ?: ft_write(file, "1");
	}
	return err ?: ft_write("tracing_on", "1");
}

/* "... [000] d..2.  1234.567890: sched_switch: ..." -> ns (ftrace prints us). */
static __u64 parse_ts(const char *line, const char *ev)
{
	const char *p = strstr(line, ev), *q;
	unsigned long sec, usec;

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

static size_t ft_read(pid_t pid, struct ev *out, size_t max)
{
	char path[512], *line = NULL;
	size_t n = 0, len = 0;
	__u64 ts;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", ft_dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (n + 2 <= max && getline(&line, &len, f) > 0) {
		if (line[0] == '#')
			continue;
		if ((ts = parse_ts(line, " sched_switch: "))) {
			char *arrow = strstr(line, "==>"), *st = strstr(line, " prev_state=");

			if (!arrow)
				continue;
			if (field(line, " prev_pid=") == pid)
				out[n++] = (struct ev){ .ts = ts, .kind = st && st[12] == 'R' ? EV_OUT_R : EV_OUT_S };
			if (field(arrow, " next_pid=") == pid)
				out[n++] = (struct ev){ .ts = ts, .kind = EV_IN };
		} else if ((ts = parse_ts(line, " sched_wakeup")) && field(line, " pid=") == pid) {
			out[n++] = (struct ev){ .ts = ts, .kind = EV_WAKE };
		}
	}
	free(line);
	fclose(f);
	return n;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank quantile of @n sorted values. */
static double q(const double *v, size_t n, double p)
{
	size_t r = (size_t)ceil(p * n);

	return n ? v[(r ? r : 1) - 1] : NAN;
}

static void print_dist(const char *what, double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	printf("# %-14s n=%-5zu min %7.1f  p50 %7.1f  p99 %7.1f  p99.9 %7.1f  max %7.1f us\n",
	       what, n, q(v, n, 0), q(v, n, 0.5), q(v, n, 0.99), q(v, n, 0.999), q(v, n, 1));
}

static const char *clocksource(void)
{
	static char buf[64];
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");

	strcpy(buf, "?");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
	return buf;
}

/* Nested hits a tracing program did not run for (5.12+; 0 before). */
static unsigned long long recursion_misses(struct skew_bpf *skel)
{
	struct bpf_program *prog;
	unsigned long long n = 0;

	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *env = getenv("SKEW_MS");
	unsigned int ms = argc > 1 ? atoi(argv[1]) : env ? atoi(env) : 3000;
	struct ev *bev = NULL, *fev = NULL;
	size_t nb = 0, nf = 0, i, j, matched = 0, ft_only = 0, bpf_only = 0, k;
	unsigned long long misses;
	double *d[EV_KINDS] = {}, *wd = NULL, *wad = NULL;
	size_t nd[EV_KINDS] = {}, nw = 0;
	struct skew_bpf *skel = NULL;
	struct cpu_hierarchy hier = {};
	struct collector *col = NULL;
	struct sample sa = {}, sb_ = {};
	struct window w = {};
	__u64 cgid = 0, *wb_end = NULL, *wf_end = NULL;
	double *wb_len = NULL, *wf_len = NULL;
	struct utsname u;
	pid_t probe;
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(quiet_print);
	atexit(cleanup);
	uname(&u);
	printf("# skew: kernel %s, clocksource %s, %ld CPUs, %u ms\n", u.release, clocksource(),
	       sysconf(_SC_NPROCESSORS_ONLN), ms);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		pin(1);
	kids[0] = spawn(true);
	kids[1] = probe = spawn(false);

	skel = skew_bpf__open();
	if (!skel) {
		check(false, "open skeleton: %s", strerror(errno));
		goto out;
	}
	skel->rodata->target_pid = probe;
	err = skew_bpf__load(skel) ?: skew_bpf__attach(skel);
	check(!err, "tp_btf sched_wakeup/sched_switch recorder loads and attaches%s%s",
	      err ? ": " : "", err ? strerror(-err) : "");
	if (err)
		goto out;
	/* The collector after the recorder: it runs second at every hit. */
	if (!cpu_hierarchy_find(NULL, &hier) && (cgid = probe_cgroup(&hier, probe))) {
		struct collector_opts o = { .hier = &hier };

		err = collector_open(&o, &col);
		check(!err, "the collector loads and attaches (%s)", err ? strerror(-err) :
		      collector_mode(col));
	} else {
		printf("# no cgroup for the probe: the collector is not compared\n");
	}
	usleep(200000);
	err = ft_start(probe);
	check(!err, "ftrace instance (trace_clock mono) records the probe%s%s", err ? ": " : "",
	      err ? strerror(-err) : "");
	if (err)
		goto out;
	if (col) {
		collector_sample(col, &sa);	/* warm-up */
		usleep(100000);
		paused_sample(col, probe, &sa);
	}
	usleep(ms * 1000);
	if (col)
		paused_sample(col, probe, &sb_);
	ft_write("tracing_on", "0");
	skew_bpf__detach(skel);

	nb = skel->bss->nev;
	if (nb > 65536)
		nb = 65536;
	bev = calloc(nb + 1, sizeof(*bev));
	fev = calloc(65536, sizeof(*fev));
	wd = calloc(65536, sizeof(*wd));
	wad = calloc(65536, sizeof(*wad));
	wb_end = calloc(65536, sizeof(*wb_end));
	wf_end = calloc(65536, sizeof(*wf_end));
	wb_len = calloc(65536, sizeof(*wb_len));
	wf_len = calloc(65536, sizeof(*wf_len));
	for (k = 0; k < EV_KINDS; k++)
		d[k] = calloc(65536, sizeof(double));
	for (i = 0; bev && i < nb; i++) {
		__u32 key = i;

		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.evs), &key, &bev[i]))
			bev[i].kind = 0;
	}
	nf = ft_read(probe, fev, 65536);
	check(nf >= 100, "ftrace read back (%zu events; BPF %zu)", nf, nb);

	/*
	 * BPF was attached before ftrace and detached after it: its events are a
	 * superset, unless BPF missed one (a tracing program is not re-entered on
	 * a CPU: a nested hit is dropped and counted as a recursion miss). Start
	 * at the BPF event of the first ftrace event's kind closest in time, walk
	 * both in step, and where the kinds differ resynchronise on the shortest
	 * skip (either side) after which the next four kinds agree, the closest
	 * in time. A wait open across a skip is dropped.
	 */
	for (j = 0, i = 0; nf && i < nb; i++)
		if (bev[i].kind == fev[0].kind &&
		    fabs((double)bev[i].ts - fev[0].ts) < fabs((double)bev[j].ts - fev[0].ts))
			j = i;
	{
		bool open_b = false, running = false;
		__u64 sb = 0, sf = 0;
		double maxb = 0, maxf = 0, maxb_f = 0, maxf_b = 0, sumb = 0, sumf = 0;

		for (i = 0; i < nf && j < nb; i++, j++) {
			struct ev *f, *b;

			if (bev[j].kind != fev[i].kind) {
				size_t best_f = 0, best_b = 0, s, side, m;
				double best = INFINITY;

				for (s = 1; s <= 6; s++)
					for (side = 0; side < 2; side++) {
						size_t fi = i + (side ? 0 : s), bj = j + (side ? s : 0);

						for (m = 0; m < 4 && fi + m < nf && bj + m < nb &&
							    fev[fi + m].kind == bev[bj + m].kind; m++)
							;
						if (m == 4 && fabs((double)fev[fi].ts - bev[bj].ts) < best) {
							best = fabs((double)fev[fi].ts - bev[bj].ts);
							best_f = fi - i;
							best_b = bj - j;
						}
					}
				if (best == INFINITY) {
					printf("# lost the pairing at ftrace event %zu (%.6f s)\n", i,
					       fev[i].ts / 1e9);
					break;
				}
				if (best_f)
					printf("# %zu ftrace event(s) without a BPF twin at %.6f s (%s)\n",
					       best_f, fev[i].ts / 1e9, kind_name[fev[i].kind]);
				ft_only += best_f;
				bpf_only += best_b;
				i += best_f;
				j += best_b;
				open_b = false;
			}
			f = &fev[i];
			b = &bev[j];
			matched++;
			d[f->kind][nd[f->kind]++] = ((double)f->ts - b->ts) / 1e3;
			/* The collector's wait definition, on both timelines at once. */
			switch (f->kind) {
			case EV_WAKE:
				if (!running && !open_b) {
					open_b = true;
					sb = b->ts;
					sf = f->ts;
				}
				break;
			case EV_OUT_R:
			case EV_OUT_S:
				running = false;
				open_b = f->kind == EV_OUT_R;
				sb = b->ts;
				sf = f->ts;
				break;
			case EV_IN:
				if (open_b) {
					double lb = (b->ts - sb) / 1e3, lf = (f->ts - sf) / 1e3;

					sumb += lb;
					sumf += lf;
					wb_end[nw] = b->ts;
					wf_end[nw] = f->ts;
					wb_len[nw] = lb;
					wf_len[nw] = lf;
					wd[nw] = lb - lf;
					wad[nw++] = fabs(lb - lf);
					if (lb > maxb) {
						maxb = lb;
						maxb_f = lf;
					}
					if (lf > maxf) {
						maxf = lf;
						maxf_b = lb;
					}
				}
				open_b = false;
				running = true;
				break;
			}
		}
		misses = recursion_misses(skel);
		printf("# BPF recursion misses (all tasks): %llu\n", misses);
		/*
		 * Under heavy host load the skew reaches milliseconds and the pairing
		 * of this periodic pattern can slip by an event or two: 99% will do.
		 */
		check(nf && matched >= nf * 0.99,
		      "ftrace's %zu events paired with BPF's in order (%zu paired, %zu BPF-only, "
		      "%zu ftrace-only, %llu BPF recursion misses)", nf, matched, bpf_only, ft_only,
		      misses);
		printf("# ftrace minus BPF timestamp of the same event:\n");
		for (k = 1; k < EV_KINDS; k++)
			if (nd[k])
				print_dist(kind_name[k], d[k], nd[k]);
		printf("# waits (BPF minus ftrace length):\n");
		printf("# %zu waits: mean BPF %.1f us, ftrace %.1f us\n", nw,
		       nw ? sumb / nw : 0, nw ? sumf / nw : 0);
		print_dist("difference", wd, nw);
		print_dist("|difference|", wad, nw);
		printf("# longest wait: BPF %.1f us (ftrace %.1f us); ftrace %.1f us (BPF %.1f us); "
		       "max difference %.1f us\n", maxb, maxb_f, maxf, maxf_b, maxb - maxf);
	}
	if (col && !window_compute(&sa, &sb_, &w)) {
		const struct cg_window *pw = window_find(&w, cgid);
		size_t n[4];
		double mean[4], max[4];

		/* The maps are read between mono_ns and mono_end_ns: inner and outer windows. */
		wait_stats(wb_end, wb_len, nw, sa.mono_end_ns, sb_.mono_ns, &n[0], &mean[0], &max[0]);
		wait_stats(wb_end, wb_len, nw, sa.mono_ns, sb_.mono_end_ns, &n[1], &mean[1], &max[1]);
		wait_stats(wf_end, wf_len, nw, sa.mono_end_ns, sb_.mono_ns, &n[2], &mean[2], &max[2]);
		wait_stats(wf_end, wf_len, nw, sa.mono_ns, sb_.mono_end_ns, &n[3], &mean[3], &max[3]);
		printf("# over the collector's window (inner..outer; clock read before, during, "
		       "after the collector):\n");
		printf("#   recorder  %zu..%zu waits, mean %.1f..%.1f us, max %.1f..%.1f us\n",
		       n[0], n[1], mean[0], mean[1], max[0], max[1]);
		if (pw)
			printf("#   collector %llu waits, mean %.1f us, max %.1f us\n",
			       (unsigned long long)pw->wait_count,
			       pw->wait_count ? pw->wait_ns / 1e3 / pw->wait_count : 0,
			       pw->wait_max / 1e3);
		else
			printf("#   collector: the probe's cgroup is not in the window\n");
		printf("#   ftrace    %zu..%zu waits, mean %.1f..%.1f us, max %.1f..%.1f us\n",
		       n[2], n[3], mean[2], mean[3], max[2], max[3]);
	}
out:
	skew_bpf__destroy(skel);
	window_free(&w);
	sample_free(&sa);
	sample_free(&sb_);
	collector_close(col);
	cleanup();
	free(wb_end);
	free(wf_end);
	free(wb_len);
	free(wf_len);
	free(bev);
	free(fev);
	free(wd);
	free(wad);
	for (k = 0; k < EV_KINDS; k++)
		free(d[k]);
	printf("skew: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
