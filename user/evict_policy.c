// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "evict_policy.h"

#define BE_CPU_USAGE_THRESHOLD	90	/* Koordinator's beCPUUsageThreshold */
#define MEMORY_RELEASE_BUFFER	2	/* Koordinator's memoryReleaseBufferPercent */
#define RATE_WINDOW_S		60.0

const char *evict_reason_name(enum evict_reason r)
{
	static const char *const names[EVICT_REASON_NR] = {
		[EVICT_BE_CPU] = "be_cpu_satisfaction",
		[EVICT_MEMORY] = "memory",
		[EVICT_CULPRIT] = "culprit",
	};

	return (unsigned int)r < EVICT_REASON_NR ? names[r] : "unknown";
}

/* Kubernetes' SystemCriticalPriority: system-cluster-critical; system-node-critical is above. */
#define SYSTEM_CRITICAL_PRIORITY 2000000000

const char *evict_refusal_name(enum evict_refusal r)
{
	static const char *const names[EVICT_REFUSAL_NR] = {
		[EVICT_ALLOWED] = "allowed",
		[EVICT_NO_METADATA] = "no_metadata",
		[EVICT_CRITICAL] = "critical_priority",
		[EVICT_STATIC] = "static_pod",
		[EVICT_KUBE_SYSTEM] = "kube_system",
	};

	return (unsigned int)r < EVICT_REFUSAL_NR ? names[r] : "unknown";
}

enum evict_refusal evict_pod_refusal(const struct cg_identity *id, bool fresh, bool system_pods)
{
	if (!fresh || !id->listed)
		return EVICT_NO_METADATA;
	if (system_pods)
		return EVICT_ALLOWED;
	if (id->priority >= SYSTEM_CRITICAL_PRIORITY)
		return EVICT_CRITICAL;
	if (id->static_pod)
		return EVICT_STATIC;
	if (!strcmp(id->namespace, "kube-system"))
		return EVICT_KUBE_SYSTEM;
	return EVICT_ALLOWED;
}

/* ---- orderings ---- */

typedef int (*cand_cmp)(const struct evict_candidate *, const struct evict_candidate *);

static int cmp_double_desc(double x, double y)
{
	return x > y ? -1 : x < y;
}

/* Lower priority goes first; the last resort is the path, so the order is total. */
static int cmp_priority_then(int key, const struct evict_candidate *a,
			     const struct evict_candidate *b)
{
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	return key ? key : strcmp(a->path, b->path);
}

static int cmp_memory(const struct evict_candidate *a, const struct evict_candidate *b)
{
	int key = a->mem_used > b->mem_used ? -1 : a->mem_used < b->mem_used;

	return cmp_priority_then(key, a, b);
}

/* Used over requested; no request means no share to stay within: first. */
static double cpu_ratio(const struct evict_candidate *c)
{
	return c->cpu_request > 0 ? c->cpu_used / c->cpu_request : INFINITY;
}

static int cmp_cpu(const struct evict_candidate *a, const struct evict_candidate *b)
{
	return cmp_priority_then(cmp_double_desc(cpu_ratio(a), cpu_ratio(b)), a, b);
}

/* Insertion sort: stable, and the lists are a node's pods (tens to hundreds). */
static void sort_candidates(struct evict_candidate *v, size_t n, cand_cmp cmp)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct evict_candidate x = v[i];

		for (j = i; j > 0 && cmp(&v[j - 1], &x) > 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

void evict_order_memory(struct evict_candidate *v, size_t n)
{
	sort_candidates(v, n, cmp_memory);
}

void evict_order_cpu(struct evict_candidate *v, size_t n)
{
	sort_candidates(v, n, cmp_cpu);
}

/* ---- BE CPU satisfaction ---- */

/* Cores to release judged on one (possibly averaged) sample; 0 when not triggered. */
static double be_cpu_release_at(const struct be_thresholds *t, const struct be_cpu_sample *s)
{
	int busy = t->cpu_evict_be_usage_threshold_percent;
	double satisfaction, release;

	if (busy < 0)
		busy = BE_CPU_USAGE_THRESHOLD;
	if (!(s->limit > 0) || !(s->request > 0))
		return 0;
	/* BE does not even use what it has: more CPU would not help it. */
	if (s->usage / s->limit < busy / 100.0)
		return 0;
	satisfaction = s->limit / s->request;
	if (satisfaction > t->cpu_evict_be_satisfaction_lower_percent / 100.0)
		return 0;
	release = s->request * (t->cpu_evict_be_satisfaction_upper_percent / 100.0 - satisfaction);
	return fmax(release, 0);
}

double be_cpu_release(const struct be_thresholds *t, const struct be_cpu_sample *v, size_t n,
		      double sample_s, double window_s)
{
	struct be_cpu_sample avg = { 0 };
	size_t i;

	if (t->cpu_evict_be_satisfaction_lower_percent < 0 ||
	    t->cpu_evict_be_satisfaction_upper_percent < 0 || !n)
		return 0;
	/* Too few samples and the average says nothing about the window. */
	if (n * sample_s < window_s / 3)
		return 0;
	for (i = 0; i < n; i++) {
		avg.usage += v[i].usage / n;
		avg.limit += v[i].limit / n;
		avg.request += v[i].request / n;
	}
	/* The average keeps a spike from evicting; the last keeps a past one from it. */
	return fmin(be_cpu_release_at(t, &avg), be_cpu_release_at(t, &v[n - 1]));
}

/* ---- memory ---- */

unsigned long long memory_release(const struct be_thresholds *t, unsigned long long total,
				  unsigned long long available)
{
	unsigned long long used, target;
	int lower = t->memory_evict_lower_percent;

	if (!total || t->memory_evict_threshold_percent < 0)
		return 0;
	used = available < total ? total - available : 0;
	if ((double)used / total * 100 < t->memory_evict_threshold_percent)
		return 0;
	if (lower < 0)
		lower = t->memory_evict_threshold_percent - MEMORY_RELEASE_BUFFER;
	if (lower < 0)
		lower = 0;
	if (lower > 100)
		lower = 100;
	/* total x lower / 100 in two halves, so it cannot overflow. */
	target = total / 100 * lower + total % 100 * lower / 100;
	return used > target ? used - target : 0;
}

/* What follows "@key:" at the start of a line, or NULL. */
static const char *find_field(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (strncmp(p, key, klen) || p[klen] != ':') {
		p = strchr(p, '\n');
		if (!p)
			return NULL;
		p++;
	}
	return p + klen + 1;
}

/* The value of "@key:   N kB" lines in bytes; -EINVAL when absent or malformed. */
static int meminfo_field(const char *text, const char *key, unsigned long long *out)
{
	const char *p = find_field(text, key);
	unsigned long long v = 0;

	if (!p)
		return -EINVAL;
	for (; *p == ' ' || *p == '\t'; p++)
		;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (ULLONG_MAX - (*p - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (*p - '0');
	}
	for (; *p == ' ' || *p == '\t'; p++)
		;
	if (!strncmp(p, "kB", 2)) {
		if (v > ULLONG_MAX / 1024)
			return -EINVAL;
		v *= 1024;
		p += 2;
	}
	if (*p && *p != '\n' && !isspace((unsigned char)*p))
		return -EINVAL;
	*out = v;
	return 0;
}

int meminfo_parse(const char *text, unsigned long long *total, unsigned long long *available)
{
	unsigned long long t, a;

	if (meminfo_field(text, "MemTotal", &t) || meminfo_field(text, "MemAvailable", &a))
		return -EINVAL;
	*total = t;
	*available = a;
	return 0;
}

/* ---- rate ---- */

bool evict_rate_allows(const struct evict_rate *r, const struct koord_config *c, double now_s)
{
	size_t i, recent = 0;
	double last;

	if (!r->n)
		return true;
	last = r->at[(r->next + EVICT_RATE_MAX - 1) % EVICT_RATE_MAX];
	if (now_s - last < c->eviction.cool_down_s)
		return false;
	/* A time from the future (clock step) counts as recent: the safe side. */
	for (i = 0; i < r->n; i++)
		if (now_s - r->at[i] < RATE_WINDOW_S)
			recent++;
	return c->eviction.max_per_minute > 0 && recent < (size_t)c->eviction.max_per_minute;
}

void evict_rate_note(struct evict_rate *r, double now_s)
{
	r->at[r->next] = now_s;
	r->next = (r->next + 1) % EVICT_RATE_MAX;
	if (r->n < EVICT_RATE_MAX)
		r->n++;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int evict_rate_save(const struct evict_rate *r, double now_s, int dirfd, const char *name)
{
	double to_wall = wall_s() - now_s;
	char tmp[NAME_MAX + 1];
	FILE *f;
	int fd, err = 0;
	size_t k;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto out;
	}
	/* oldest first: loading notes them in order */
	for (k = 0; k < r->n; k++)
		fprintf(f, "%.3f\n", r->at[(r->next + EVICT_RATE_MAX - r->n + k) % EVICT_RATE_MAX] +
				     to_wall);
	if (fflush(f) || fsync(fileno(f)))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp, dirfd, name))
		err = -errno;
out:
	if (err)
		unlinkat(dirfd, tmp, 0);
	return err;
}

int evict_rate_load(struct evict_rate *r, double now_s, int dirfd, const char *name)
{
	double to_mono = now_s - wall_s(), t;
	char line[64], *end;
	FILE *f;
	int fd, err = 0;

	memset(r, 0, sizeof(*r));
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	f = fdopen(fd, "r");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		t = strtod(line, &end);
		if (end == line || (*end && *end != '\n') || !isfinite(t)) {
			err = -EINVAL;
			break;
		}
		evict_rate_note(r, t + to_mono);
	}
	if (!err && ferror(f))
		err = -EIO;
	fclose(f);
	if (err)
		memset(r, 0, sizeof(*r));
	return err;
}
