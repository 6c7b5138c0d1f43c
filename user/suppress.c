// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suppress.h"

#define QUOTA_BYPASS_RATIO	0.01	/* Koordinator's suppressBypassQuotaDeltaRatio */
#define MAX_INCREASE_RATIO	0.1	/* Koordinator's beMaxIncreaseCPUPercent */
#define CEIL_SLACK		1e-9	/* 3.0000000001 cores is 3 CPUs, not 4 */

double suppress_be_allowed(const struct be_thresholds *t, const struct suppress_input *in)
{
	double sys = fmax(in->node_used - in->pods_used, 0);
	double allowed;

	/* The system gets at least its reservation, used or not. */
	sys = fmax(sys, in->reserved_cores);
	allowed = in->capacity_cores * t->cpu_suppress_threshold_percent / 100.0 -
		  in->non_be_used - sys;
	if (t->cpu_suppress_min_percent >= 0)
		allowed = fmax(allowed, in->capacity_cores * t->cpu_suppress_min_percent / 100.0);
	return allowed > 0 ? allowed : 0;	/* also turns NaN into 0 */
}

/* @x clamped to [0, @hi]; NaN becomes 0. */
static double clamp_cores(double x, double hi)
{
	if (!(x > 0))
		return 0;
	return x < hi ? x : hi;
}

long suppress_next_quota(long cur_quota_us, double allowed_cores, double capacity_cores)
{
	double cap = clamp_cores(capacity_cores, (double)LONG_MAX / CFS_PERIOD_US / 2);
	long want = lround(clamp_cores(allowed_cores, cap) * CFS_PERIOD_US);
	long step = lround(cap * CFS_PERIOD_US * MAX_INCREASE_RATIO);

	if (want < BE_MIN_QUOTA_US)
		want = BE_MIN_QUOTA_US;
	/*
	 * Unlimited (or unreadable) to any value is a decrease: write it now.
	 * Koordinator's dead-band compares with -1 here and can leave BE
	 * unlimited on a large node; we do not.
	 */
	if (cur_quota_us < 0)
		return want;
	if (want - cur_quota_us > step)
		want = cur_quota_us + step;
	/* Small changes are noise, but the floor is always reached. */
	if (labs(want - cur_quota_us) < cap * CFS_PERIOD_US * QUOTA_BYPASS_RATIO &&
	    want != BE_MIN_QUOTA_US)
		return cur_quota_us;
	return want;
}

int suppress_next_cpuset_size(int cur, double allowed_cores, int ncpus)
{
	int min = ncpus < BE_MIN_CPUSET_CPUS ? ncpus : BE_MIN_CPUSET_CPUS;
	int step = (int)ceil(ncpus * MAX_INCREASE_RATIO);
	int n;

	if (ncpus <= 0)
		return 0;
	n = (int)ceil(clamp_cores(allowed_cores, ncpus) - CEIL_SLACK);
	if (cur < 0)
		cur = 0;
	/* Growing lets BE take CPUs from LS: one step at a time. Shrinking protects LS: at once. */
	if (n > cur + step)
		n = cur + step;
	if (n < min)
		n = min;
	return n > ncpus ? ncpus : n;
}

void smoother_init(struct smoother *s, int window)
{
	memset(s, 0, sizeof(*s));
	s->window = window < 1 ? 1 : window > SMOOTHER_MAX ? SMOOTHER_MAX : window;
}

void smoother_reset(struct smoother *s)
{
	s->n = 0;
	s->next = 0;
}

double smoother_push(struct smoother *s, double x)
{
	double sum = 0;
	int i;

	s->v[s->next] = x;
	s->next = (s->next + 1) % s->window;
	if (s->n < s->window)
		s->n++;
	/* The ring holds exactly the last n values, whatever their order. */
	for (i = 0; i < s->n; i++)
		sum += s->v[i];
	return sum / s->n;
}

/* ---- CPU lists ---- */

/* A decimal CPU number at *@p, below CPU_SETSIZE; advances *@p. */
static int parse_cpu(const char **p, int *cpu)
{
	int v = 0;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	for (; isdigit((unsigned char)**p); (*p)++) {
		v = v * 10 + (**p - '0');
		if (v >= CPU_SETSIZE)
			return -EINVAL;
	}
	*cpu = v;
	return 0;
}

/* One "N" or "N-M" at *@p into @out; advances *@p. */
static int parse_range(const char **p, cpu_set_t *out)
{
	int lo, hi, cpu;

	if (parse_cpu(p, &lo))
		return -EINVAL;
	hi = lo;
	if (**p == '-') {
		(*p)++;
		if (parse_cpu(p, &hi) || hi < lo)
			return -EINVAL;
	}
	for (cpu = lo; cpu <= hi; cpu++)
		CPU_SET(cpu, out);
	return 0;
}

static const char *skip_space(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

bool cpuset_exclude(cpu_set_t *pool, const cpu_set_t *off)
{
	cpu_set_t rest;

	CPU_XOR(&rest, pool, off);
	CPU_AND(&rest, &rest, pool);
	if (!CPU_COUNT(&rest) || CPU_EQUAL(&rest, pool))
		return false;
	*pool = rest;
	return true;
}

int cpuset_parse(const char *s, cpu_set_t *out)
{
	const char *p = skip_space(s);

	CPU_ZERO(out);
	if (!*p)
		return 0;
	while (!parse_range(&p, out)) {
		if (*p == ',') {
			p++;
			continue;
		}
		if (!*skip_space(p))
			return 0;
		break;
	}
	CPU_ZERO(out);
	return -EINVAL;
}

int cpuset_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t off = 0;
	int lo, hi, w;

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	for (lo = 0; lo < CPU_SETSIZE; lo = hi + 1) {
		if (!CPU_ISSET(lo, set)) {
			hi = lo;
			continue;
		}
		for (hi = lo; hi + 1 < CPU_SETSIZE && CPU_ISSET(hi + 1, set); hi++)
			;
		w = lo == hi ? snprintf(buf + off, len - off, "%s%d", off ? "," : "", lo) :
			       snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", lo, hi);
		if (w < 0 || (size_t)w >= len - off) {
			buf[0] = '\0';
			return -ENOSPC;
		}
		off += w;
	}
	return off;
}

/* ---- topology ---- */

/* The first line of @dir/@name, without its newline. */
static int read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	int err = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		err = ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	if (!err)
		buf[strcspn(buf, "\n")] = '\0';
	return err;
}

static int read_int(const char *dir, const char *name, int *v)
{
	char buf[32], *end;
	long x;
	int err = read_line(dir, name, buf, sizeof(buf));

	if (err)
		return err;
	errno = 0;
	x = strtol(buf, &end, 10);
	if (end == buf || *end || errno || x < INT_MIN || x > INT_MAX)
		return -EINVAL;
	*v = x;
	return 0;
}

static int read_list(const char *dir, const char *name, cpu_set_t *set)
{
	/* Room for "0,2,4,...": the worst a CPU_SETSIZE list can be. */
	char buf[CPU_SETSIZE * 6];
	int err = read_line(dir, name, buf, sizeof(buf));

	return err ? err : cpuset_parse(buf, set);
}

/* The NUMA node of a CPU: its cpuN/nodeM entry, 0 without NUMA. */
static int cpu_node(const char *cpudir)
{
	struct dirent *de;
	DIR *d = opendir(cpudir);
	int node = 0;
	char *end;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		long v;

		if (strncmp(de->d_name, "node", 4) || !isdigit((unsigned char)de->d_name[4]))
			continue;
		v = strtol(de->d_name + 4, &end, 10);
		if (!*end && v <= INT_MAX) {
			node = v;
			break;
		}
	}
	closedir(d);
	return node;
}

static int highest_cpu(const cpu_set_t *set)
{
	int cpu;

	for (cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
		if (CPU_ISSET(cpu, set))
			return cpu;
	return -1;
}

/*
 * core_id repeats in every package: number each (package, core_id) pair
 * in order of first appearance instead.
 */
static int core_index(const struct cpu_topo *t, int upto, int pkg, int raw[])
{
	int cpu, next = 0;

	for (cpu = 0; cpu < upto; cpu++) {
		if (t->core[cpu] < 0)
			continue;
		if (t->pkg[cpu] == pkg && raw[cpu] == raw[upto])
			return t->core[cpu];
		if (t->core[cpu] >= next)
			next = t->core[cpu] + 1;
	}
	return next;
}

static void read_cpu(struct cpu_topo *t, const char *sysfs_cpu, int cpu, int raw[])
{
	char dir[PATH_MAX];

	t->core[cpu] = t->pkg[cpu] = t->node[cpu] = -1;
	if (!CPU_ISSET(cpu, &t->online))
		return;
	snprintf(dir, sizeof(dir), "%s/cpu%d", sysfs_cpu, cpu);
	t->node[cpu] = cpu_node(dir);
	strncat(dir, "/topology", sizeof(dir) - strlen(dir) - 1);
	/* Without topology (some VMs), every CPU is its own core in package 0. */
	if (read_int(dir, "physical_package_id", &t->pkg[cpu]) || t->pkg[cpu] < 0)
		t->pkg[cpu] = 0;
	if (read_int(dir, "core_id", &raw[cpu]))
		raw[cpu] = -1 - cpu;
	t->core[cpu] = core_index(t, cpu, t->pkg[cpu], raw);
}

int cpu_topo_read(struct cpu_topo *t, const char *sysfs_cpu)
{
	int raw[CPU_SETSIZE];
	cpu_set_t possible;
	int cpu, err;

	memset(t, 0, sizeof(*t));
	err = read_list(sysfs_cpu, "online", &t->online);
	if (err)
		return err;
	if (read_list(sysfs_cpu, "possible", &possible))
		possible = t->online;
	CPU_OR(&possible, &possible, &t->online);
	t->ncpus = highest_cpu(&possible) + 1;
	if (t->ncpus <= 0)
		return -ENODATA;
	for (cpu = 0; cpu < t->ncpus; cpu++)
		read_cpu(t, sysfs_cpu, cpu, raw);
	return 0;
}

/* ---- choosing CPUs ---- */

struct bucket {
	int node, pkg;
};

static bool usable(const struct cpu_topo *t, const cpu_set_t *cand, int cpu)
{
	return CPU_ISSET(cpu, cand) && CPU_ISSET(cpu, &t->online) && t->core[cpu] >= 0;
}

static bool in_bucket(const struct cpu_topo *t, int cpu, const struct bucket *b)
{
	return t->node[cpu] == b->node && t->pkg[cpu] == b->pkg;
}

/* The (node, package) pairs of the usable CPUs, sorted. */
static int make_buckets(const struct cpu_topo *t, const cpu_set_t *cand, struct bucket *b)
{
	int cpu, i, nb = 0;

	for (cpu = 0; cpu < t->ncpus; cpu++) {
		struct bucket x = { t->node[cpu], t->pkg[cpu] };

		if (!usable(t, cand, cpu))
			continue;
		for (i = nb; i > 0 && (b[i - 1].node > x.node ||
				       (b[i - 1].node == x.node && b[i - 1].pkg > x.pkg)); i--)
			;
		if (i > 0 && b[i - 1].node == x.node && b[i - 1].pkg == x.pkg)
			continue;
		memmove(&b[i + 1], &b[i], (nb - i) * sizeof(*b));
		b[i] = x;
		nb++;
	}
	return nb;
}

/* The online CPUs of @cpu's core into @sib; 0 when one of them is not usable. */
static int core_cpus(const struct cpu_topo *t, const cpu_set_t *cand, int cpu, cpu_set_t *sib)
{
	int c, n = 0;

	CPU_ZERO(sib);
	for (c = 0; c < t->ncpus; c++) {
		if (t->core[c] != t->core[cpu])
			continue;
		if (!usable(t, cand, c))
			return 0;
		CPU_SET(c, sib);
		n++;
	}
	return n;
}

/*
 * Take from @b the lowest free whole SMT core of at most @need CPUs
 * (@whole), or the lowest free CPU. Returns the number taken.
 */
static int take(const struct cpu_topo *t, const cpu_set_t *cand, const struct bucket *b,
		bool whole, int need, cpu_set_t *out)
{
	cpu_set_t sib;
	int cpu, k;

	for (cpu = 0; cpu < t->ncpus; cpu++) {
		if (!usable(t, cand, cpu) || CPU_ISSET(cpu, out) || !in_bucket(t, cpu, b))
			continue;
		if (!whole) {
			CPU_SET(cpu, out);
			return 1;
		}
		/* Whole cores are taken entirely, so a free CPU means a free core. */
		k = core_cpus(t, cand, cpu, &sib);
		if (k >= 2 && k <= need) {
			CPU_OR(out, out, &sib);
			return k;
		}
	}
	return 0;
}

int cpuset_choose(const struct cpu_topo *t, const cpu_set_t *cand, int n, cpu_set_t *out)
{
	static const bool phases[] = { true, false };
	struct bucket b[CPU_SETSIZE];
	int nb = make_buckets(t, cand, b);
	int got = 0, i = 0, p;

	CPU_ZERO(out);
	/*
	 * Round-robin over the buckets, whole cores first; the single CPUs
	 * continue after the bucket that gave last, to keep the spread.
	 */
	for (p = 0; p < 2; p++) {
		int idle = 0;

		while (got < n && idle < nb) {
			int k = take(t, cand, &b[i], phases[p], n - got, out);

			got += k;
			idle = k ? 0 : idle + 1;
			i = (i + 1) % nb;
		}
	}
	return got;
}
