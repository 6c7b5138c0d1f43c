// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Action 3, eviction, the last resort, at most one per period and within the
 * rate limit: a culprit still hurting victims at its throttle floor for long
 * enough, node memory above memoryEvictThresholdPercent (BE by priority then
 * memory used), BE CPU satisfaction too low (Koordinator's BECPUEvict: BE by
 * priority then used/request). Candidates are BE pods the kubelet's fresh
 * list names (never one the cluster needs, unless configured) and YARN
 * containers (one task at a time).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "act.h"
#include "evict.h"
#include "evict_api.h"
#include "log.h"

#define HOOK_TIMEOUT_S	30

static bool candidate(const struct container *ct)
{
	return (ct->ident.kind == CG_POD && ct->ident.qos == KC_BE) || ct->ident.kind == CG_YARN;
}

/* May @ct be evicted? A YARN container by its cgroup; a pod only by what the kubelet says of it. */
static enum evict_refusal refusal(const struct enforcer *e, const struct container *ct)
{
	if (ct->ident.kind == CG_YARN)
		return EVICT_ALLOWED;
	return evict_pod_refusal(&ct->ident, e->pods_fresh, e->c->eviction.system_pods);
}

/*
 * An eviction for @r is called for and no pod may be evicted: say why, once
 * until the reasons change (the check repeats every period).
 */
static void say_refused(struct enforcer *e, enum evict_reason r)
{
	const unsigned int *n = e->st.evict_refused;
	unsigned int said = 0, i;

	for (i = EVICT_ALLOWED + 1; i < EVICT_REFUSAL_NR; i++)
		if (n[i])
			said |= 1u << i;
	if (!said || said == e->refusals_said)
		return;
	e->refusals_said = said;
	log_warn("eviction (%s) called for, but no pod may be evicted: %u without fresh kubelet "
		 "metadata%s, %u of critical priority, %u static, %u in kube-system", evict_reason_name(r),
		 n[EVICT_NO_METADATA], *e->c->kubelet.url ? "" : " (no kubelet.url)",
		 n[EVICT_CRITICAL], n[EVICT_STATIC], n[EVICT_KUBE_SYSTEM]);
}

static unsigned long long read_ull(struct enforcer *e, const char *mount, const char *rel,
				   const char *file)
{
	char path[PATH_MAX], buf[64];

	if (act_path(path, sizeof(path), mount, rel, file) || writer_read(e->w, path, buf, sizeof(buf)))
		return 0;
	return strtoull(buf, NULL, 10);
}

/* A pod's BE request in cores, from the cpu.shares Koordinator sets from batch-cpu. */
static double request_cores(struct enforcer *e, const char *rel)
{
	unsigned long long s;

	if (e->h->cpu_version == 2) {
		s = read_ull(e, e->h->cpu, rel, "cpu.weight");
		s = s ? (s - 1) * 262142 / 9999 + 2 : 0;
	} else {
		s = read_ull(e, e->h->cpu, rel, "cpu.shares");
	}
	return s > 2 ? s / 1024.0 : 0;
}

static const struct container *by_path(const struct container_table *t, const char *path)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].path, path))
			return &t->v[i];
	return NULL;
}

/* What ties a cgroup to its candidate: the YARN container's name, or the pod's UID. */
static const char *key_of(const struct container *ct)
{
	return ct->ident.kind == CG_YARN ? ct->ident.container_id : ct->ident.pod_uid;
}

struct keyed {
	const char *key;
	size_t i;
};

static int cmp_keyed(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

/* Each candidate's CPU use: its own cgroups' in @w, found by key (O(n log n)). */
static void add_cpu_used(const struct window *w, const struct container_table *t,
			 struct evict_candidate *v, const struct keyed *keys, size_t n)
{
	const struct container *x;
	struct keyed k, *hit;
	size_t i;

	for (i = 0; i < w->n; i++) {
		x = container_table_get(t, w->v[i].cgid);
		if (!x || !*(k.key = key_of(x)))
			continue;
		hit = bsearch(&k, keys, n, sizeof(k), cmp_keyed);
		if (hit)
			v[hit->i].cpu_used += (double)w->v[i].cpu_ns / w->dur_ns;
	}
}

/*
 * BE pods and YARN containers below the roots, with what the reasons in
 * play need: memory used (@mem), requests and CPU used (@cpu). Each is a
 * file read per candidate, so only when asked.
 */
static struct evict_candidate *candidates(struct enforcer *e, const struct window *w,
					  const struct container_table *t, bool mem, bool cpu,
					  size_t *n)
{
	const char *mnt = e->h->memory_version == 2 ? e->h->unified : e->h->memory;
	const char *file = e->h->memory_version == 2 ? "memory.current" : "memory.usage_in_bytes";
	struct evict_candidate *v = calloc(t->n ? t->n : 1, sizeof(*v));
	struct keyed *keys = calloc(t->n ? t->n : 1, sizeof(*keys));
	size_t i;

	*n = 0;
	if (!v || !keys) {
		free(v);
		free(keys);
		return NULL;
	}
	memset(e->st.evict_refused, 0, sizeof(e->st.evict_refused));
	for (i = 0; i < t->n; i++) {
		const struct container *ct = &t->v[i];
		enum evict_refusal r;

		if (!candidate(ct) || !*key_of(ct) || !act_allowed(e, ct->path))
			continue;
		/* a refused pod still counts in BE's requests and use */
		r = refusal(e, ct);
		e->st.evict_refused[r]++;
		keys[*n] = (struct keyed){ key_of(ct), *n };
		v[(*n)++] = (struct evict_candidate){
			.path = ct->path,
			.refused = r,
			.priority = ct->ident.priority,	/* from the kubelet, 0 without */
			/* a YARN task's vcores when NodeManager said, else its cpu.shares */
			.cpu_request = !cpu ? 0 : ct->ident.yarn_vcores ? ct->ident.yarn_vcores :
				       request_cores(e, ct->path),
			.mem_used = mem ? read_ull(e, mnt, ct->path, file) : 0,
		};
	}
	qsort(keys, *n, sizeof(*keys), cmp_keyed);
	if (cpu)
		add_cpu_used(w, t, v, keys, *n);
	free(keys);
	return v;
}

/* The limiter's file in the state dir (beside the journal, through its trusted fd). */
#define RATE_FILE	"evictions"

/* The state dir's fd, -1 without an open journal (enforcement off, a dry run). */
static int state_dirfd(const struct enforcer *e)
{
	const struct journal *j = e->w->journal;

	return j && j->dir && j->dirfd >= 0 && !e->w->dry_run ? j->dirfd : -1;
}

void act_rate_load(struct enforcer *e)
{
	struct timespec ts;
	int dfd = state_dirfd(e), r;

	if (dfd < 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r = evict_rate_load(&e->rate, ts.tv_sec + ts.tv_nsec / 1e9, dfd, RATE_FILE);
	if (r)
		log_warn("%s/%s: %s; the eviction limit starts afresh", e->c->state_dir, RATE_FILE,
			 strerror(-r));
	else if (e->rate.n)
		log_info("%zu evictions of earlier runs count in the eviction limit", e->rate.n);
}

/* Count an eviction in the limiter, on disk too: a restart does not reset it. */
static void rate_note(struct enforcer *e)
{
	int dfd = state_dirfd(e), r;

	evict_rate_note(&e->rate, e->now);
	if (dfd >= 0 && (r = evict_rate_save(&e->rate, e->now, dfd, RATE_FILE)))
		log_warn("%s/%s: cannot save the eviction limit: %s", e->c->state_dir, RATE_FILE,
			 strerror(-r));
}

/*
 * The hook runs while the periods go on: a hook that takes its 30 s must
 * not stall the measurements, the other actions, /metrics or /healthz.
 */
static int hook_start(struct enforcer *e, const struct evict_target *t, const char *why)
{
	char *path = strdup(t->path);
	pid_t pid;
	int r;

	if (!path)
		return -ENOMEM;
	r = evict_hook_start(e->c->eviction.hook, t, &pid);
	if (r) {
		free(path);
		return r;
	}
	e->hook.pid = pid;
	e->hook.deadline = e->now + HOOK_TIMEOUT_S;
	e->hook.reason = t->reason;
	e->hook.path = path;
	log_warn("evicting %s (%s) through the hook, pid %d: %s", path, evict_reason_name(t->reason),
		 (int)pid, why);
	return 0;
}

/*
 * Through the Eviction API: the API server checks the pod's
 * PodDisruptionBudgets; the call runs in a thread.
 * A call that cannot start is said and counted here, with its reason.
 */
static int api_start(struct enforcer *e, const struct container *ct, const char *label,
		     enum evict_reason reason, const char *why)
{
	const struct evict_api_opts o = { .server = e->c->eviction.api.url,
					  .token_file = e->c->eviction.api.token_file,
					  .ca_file = e->c->eviction.api.ca_file };
	char err[512];
	int r;

	if (!(e->hook.path = strdup(label)))
		return -ENOMEM;
	r = evict_api_start(&o, ct->ident.namespace, ct->ident.pod_name, ct->ident.pod_uid,
			    &e->hook.api, err, sizeof(err));
	if (r) {
		e->st.eviction_failures_total++;
		log_warn("evicting %s (%s) through the Eviction API failed: %s", label,
			 evict_reason_name(reason), err);
		free(e->hook.path);
		e->hook.path = NULL;
		return 0;
	}
	e->hook.reason = reason;
	log_warn("evicting %s (%s) through the Eviction API: %s", label, evict_reason_name(reason),
		 why);
	return 0;
}

/* An Eviction API call still running holds off every other eviction; one that ended is counted. */
static bool api_running(struct enforcer *e)
{
	char why[512];
	int r;

	if (!e->hook.api)
		return false;
	r = evict_api_poll(&e->hook.api, why, sizeof(why));
	if (r == -EINPROGRESS)
		return true;
	if (!r) {
		e->st.evictions_total[e->hook.reason]++;
		log_warn("evicted %s (%s): the API server accepted the eviction (%s)", e->hook.path,
			 evict_reason_name(e->hook.reason), why);
	} else if (r == -ENOENT) {
		log_info("evict %s: already gone (%s)", e->hook.path, why);
	} else {
		e->st.eviction_failures_total++;
		log_warn("evicting %s (%s) failed: %s (%s)", e->hook.path,
			 evict_reason_name(e->hook.reason),
			 r == -EBUSY ? "a PodDisruptionBudget does not allow it now" :
			 r == -ESTALE ? "another pod holds its name now" :
			 r == -EACCES ? "the API server refused the service account (it needs create "
					"on pods/eviction)" : "the Eviction API", why);
	}
	free(e->hook.path);
	e->hook.path = NULL;
	return false;
}

/* A hook still running holds off every other eviction; one that ended is counted. */
static bool hook_running(struct enforcer *e)
{
	const char *why = NULL;
	int r;

	if (api_running(e))
		return true;
	if (!e->hook.pid)
		return false;
	r = evict_hook_poll(e->hook.pid, e->hook.deadline);
	if (r == -EINPROGRESS)
		return true;
	if (!r) {
		e->st.evictions_total[e->hook.reason]++;
		log_warn("evicted %s (%s): the hook exited 0", e->hook.path,
			 evict_reason_name(e->hook.reason));
	} else {
		e->st.eviction_failures_total++;
		why = r == -ETIMEDOUT ? "the hook was killed after its 30 s" :
		      r < 0 ? strerror(-r) : "the hook exited non-zero";
		log_warn("evicting %s (%s) failed: %s (%d)", e->hook.path,
			 evict_reason_name(e->hook.reason), why, r);
	}
	free(e->hook.path);
	e->hook.path = NULL;
	e->hook.pid = 0;
	return false;
}

void act_hook_stop(struct enforcer *e)
{
	if (e->hook.api) {
		evict_api_stop(&e->hook.api);
		log_warn("Eviction API call for %s ended: the enforcer stops", e->hook.path);
		free(e->hook.path);
		e->hook.path = NULL;
	}
	if (!e->hook.pid)
		return;
	evict_hook_kill(e->hook.pid);
	log_warn("eviction hook for %s killed: the enforcer stops", e->hook.path);
	free(e->hook.path);
	e->hook.path = NULL;
	e->hook.pid = 0;
}

static void evict_one(struct enforcer *e, const struct container *ct, enum evict_reason reason,
		      const char *why)
{
	char label[PATH_MAX + 400];
	struct evict_target t;
	int r;

	if (!ct)
		return;
	container_label(ct, label, sizeof(label));
	t = (struct evict_target){ .path = ct->path, .pod_uid = ct->ident.pod_uid,
				   .container_id = ct->ident.container_id, .qos = ct->ident.qos,
				   .reason = reason, .cgid = ct->id };
	rate_note(e);
	if (e->w->dry_run) {
		log_warn("would evict %s (%s): %s", label, evict_reason_name(reason), why);
		return;
	}
	if (e->c->eviction.backend == EVICT_HOOK) {
		r = hook_start(e, &t, why);
		if (!r)
			return;		/* counted when it ends */
	} else if (e->c->eviction.backend == EVICT_API && ct->ident.kind != CG_YARN) {
		api_start(e, ct, label, reason, why);
		return;			/* counted when it ends, or failed and counted */
	} else {	/* "kill"; under "api" too for a YARN task, which has no pod to ask for */
		r = evict_kill(e->w, e->h, &t);
	}
	if (r == -ENOENT) {
		log_debug("evict %s: already gone", ct->path);
		return;
	}
	if (r < 0) {
		e->st.eviction_failures_total++;
		log_warn("evicting %s (%s) failed: %s", label, evict_reason_name(reason),
			 strerror(-r));
		return;
	}
	e->st.evictions_total[reason]++;
	log_warn("evicted %s (%s): %s", label, evict_reason_name(reason), why);
}

/*
 * The first of @v (in order) that may be evicted and that its pod's labels
 * let koord-bpf evict for @r; @n: none (and why is said).
 */
static size_t first_allowed(struct enforcer *e, const struct container_table *t,
			    const struct evict_candidate *v, size_t n, enum evict_reason r)
{
	const struct container *c;
	size_t i;

	for (i = 0; i < n; i++) {
		c = by_path(t, v[i].path);
		if (c && v[i].refused == EVICT_ALLOWED && !(c->ident.evict_denied & (1u << r))) {
			e->refusals_said = 0;
			return i;
		}
	}
	say_refused(e, r);
	return n;
}

static bool evict_culprit(struct enforcer *e, const struct container_table *t)
{
	const struct container *ct;
	enum evict_refusal r;
	char why[160];
	size_t i;

	for (i = 0; i < e->ntg; i++) {
		struct target *tg = &e->tg[i];

		if (!tg->quota_on || tg->th.at_floor_s < e->c->eviction.culprit_at_floor_s)
			continue;
		ct = container_table_get(t, tg->cgid);
		if (ct && ct->ident.evict_denied & (1u << EVICT_CULPRIT))
			continue;	/* its pod opted out: it stays at its floor */
		r = ct ? refusal(e, ct) : EVICT_ALLOWED;
		if (r != EVICT_ALLOWED) {
			memset(e->st.evict_refused, 0, sizeof(e->st.evict_refused));
			e->st.evict_refused[r] = 1;
			say_refused(e, EVICT_CULPRIT);
			continue;	/* it stays at its floor */
		}
		snprintf(why, sizeof(why), "still hurting online work after %.0f s at its %.2f-core floor",
			 tg->th.at_floor_s, tg->th.limit_cores);
		evict_one(e, ct, EVICT_CULPRIT, why);
		tg->th.at_floor_s = 0;
		return true;
	}
	return false;
}

/* Node memory to release by memoryEvictThresholdPercent (bytes), 0 when below. */
static unsigned long long memory_over(struct enforcer *e, double *used_pct)
{
	unsigned long long total, avail, release;
	char buf[8192];
	ssize_t len;
	int fd;

	fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	if (meminfo_parse(buf, &total, &avail) || !total)
		return 0;
	release = memory_release(&e->c->be, total, avail);
	*used_pct = 100.0 * (total - avail) / total;
	return release;
}

static void evict_memory(struct enforcer *e, const struct container_table *t,
			 struct evict_candidate *v, size_t n, unsigned long long release,
			 double used_pct)
{
	char why[160];
	size_t k;

	evict_order_memory(v, n);
	k = first_allowed(e, t, v, n, EVICT_MEMORY);
	if (k == n)
		return;
	snprintf(why, sizeof(why), "node memory %.1f%% used >= %d%%; %.0f MiB to release, it uses %.0f MiB",
		 used_pct, e->c->be.memory_evict_threshold_percent, release / 1048576.0,
		 v[k].mem_used / 1048576.0);
	evict_one(e, by_path(t, v[k].path), EVICT_MEMORY, why);
}

/* Koordinator's BECPUEvict, over the samples of cpuEvictTimeWindowSeconds. */
static bool evict_be_cpu(struct enforcer *e, const struct container_table *t,
			 struct evict_candidate *v, size_t n)
{
	double window = e->c->be.cpu_evict_time_window_seconds > 0 ?
			e->c->be.cpu_evict_time_window_seconds : e->dt;
	const struct be_cpu_sample *s = &e->be[e->nbe - 1];
	double release;
	char why[200];
	size_t k;

	release = be_cpu_release(&e->c->be, e->be, e->nbe, e->dt, window);
	if (release <= 0)
		return false;
	evict_order_cpu(v, n);
	k = first_allowed(e, t, v, n, EVICT_BE_CPU);
	if (k == n)
		return false;
	snprintf(why, sizeof(why), "BE satisfaction %.0f%% (limit %.2f of %.2f requested cores, %.0f%% used); "
		 "%.2f cores to release", 100 * s->limit / s->request, s->limit, s->request,
		 100 * s->usage / s->limit, release);
	evict_one(e, by_path(t, v[k].path), EVICT_BE_CPU, why);
	return true;
}

/* This period's BE usage, real limit and requests, kept over the eviction window. */
static void be_sample(struct enforcer *e, const struct evict_candidate *v, size_t n)
{
	double window = e->c->be.cpu_evict_time_window_seconds > 0 ?
			e->c->be.cpu_evict_time_window_seconds : e->dt;
	struct be_cpu_sample s = { .usage = e->be_used, .limit = e->capacity };
	size_t i;

	if (e->st.be_quota_us >= 0 && e->st.be_quota_us / (double)CFS_PERIOD_US < s.limit)
		s.limit = e->st.be_quota_us / (double)CFS_PERIOD_US;
	if (e->st.be_cpuset_cpus > 0 && e->st.be_cpuset_cpus < s.limit)
		s.limit = e->st.be_cpuset_cpus;
	for (i = 0; i < n; i++)
		s.request += v[i].cpu_request;
	while (e->nbe && (e->nbe == BE_SAMPLES_MAX || (e->nbe + 1) * e->dt > window + 1e-6))
		memmove(e->be, e->be + 1, --e->nbe * sizeof(*e->be));
	e->be[e->nbe++] = s;
}

void act_evict(struct enforcer *e, const struct window *w, const struct container_table *t)
{
	bool band = e->c->be.cpu_evict_be_satisfaction_lower_percent > 0 &&
		    e->c->be.cpu_evict_be_satisfaction_upper_percent > 0;
	unsigned long long mem;
	struct evict_candidate *v;
	double used_pct = 0;
	bool allowed = evict_rate_allows(&e->rate, e->c, e->now);
	size_t n;

	/* polled every period, whatever the limit says: its end counts, and its timeout */
	if (hook_running(e))
		allowed = false;
	if (!e->c->eviction.enable)
		return;
	if (allowed && evict_culprit(e, t))
		return;
	mem = memory_over(e, &used_pct);
	if (!band && (!mem || !allowed))
		return;		/* the usual period: nothing to read per container */
	v = candidates(e, w, t, mem && allowed, band, &n);
	if (!v)
		return;
	if (band)
		be_sample(e, v, n);	/* every period: the window average needs them */
	if (allowed && mem)
		evict_memory(e, t, v, n, mem, used_pct);
	else if (allowed && band)
		evict_be_cpu(e, t, v, n);
	free(v);
}
