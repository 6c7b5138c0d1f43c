// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Action 1, BE CPU suppression (Koordinator's cpusuppress): every period BE
 * may use capacity x threshold - non-BE used - max(system used, reserved),
 * from usage smoothed over a few windows, written as a CFS quota on the BE
 * roots (cfsQuota) or as a smaller BE cpuset (cpuset). Going from no limit to
 * a limit is an action measured for its effect; later adjustments are not.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "act.h"
#include "exclusive.h"
#include "journal.h"
#include "log.h"

static void measure(struct enforcer *e, const struct window *w, const struct container_table *t,
		    struct suppress_input *in)
{
	double node = 0, pods = 0, non_be = 0, be = 0, cores;
	const struct container *ct;
	size_t i;

	for (i = 0; i < w->n; i++) {
		cores = (double)w->v[i].cpu_ns / w->dur_ns;
		node += cores;
		ct = container_table_get(t, w->v[i].cgid);
		if (!ct)
			continue;
		if (KC_IS_ONLINE(ct->ident.qos)) {
			pods += cores;
			non_be += cores;
		} else if (ct->ident.qos == KC_BE) {
			pods += cores;
			be += cores;
		}
	}
	e->be_used = be;
	*in = (struct suppress_input){
		.capacity_cores = e->capacity,
		.node_used = smoother_push(&e->sm_node, node),
		.pods_used = smoother_push(&e->sm_pods, pods),
		.non_be_used = smoother_push(&e->sm_non_be, non_be),
		.reserved_cores = config_reserved_cores(e->c),
	};
}

/* Does a container of the table live below @root? */
static bool holds_work(const struct container_table *t, const char *root)
{
	size_t i, len = strlen(root);

	for (i = 0; i < t->n; i++)
		if (!strncmp(t->v[i].path, root, len) && t->v[i].path[len] == '/')
			return true;
	return false;
}

int act_cpuset_file(const struct enforcer *e, const char *rel, char *path, size_t len)
{
	const char *mount = e->h->cpuset_version == 2 ? e->h->unified : e->h->cpuset;

	return act_path(path, len, mount, rel, "cpuset.cpus");
}

static int cmp_depth(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	int dx = 0, dy = 0;

	for (; *x; x++)
		dx += *x == '/';
	for (; *y; y++)
		dy += *y == '/';
	return dx - dy;
}

/* Is @rel a culprit whose own cpuset (@quota: quota) the targeted action keeps? */
static bool targeted(const struct enforcer *e, const char *rel, bool quota)
{
	size_t i;

	for (i = 0; i < e->ntg; i++)
		if ((quota ? e->tg[i].quota_on : e->tg[i].cpuset_on) && !strcmp(e->tg[i].path, rel))
			return true;
	return false;
}

/* @root and the cgroups below it (but targeted culprits when @keep_targets), shallowest first. */
static const char **subtree(const struct enforcer *e, const struct container_table *t,
			    const char *root, bool keep_targets, size_t *n)
{
	size_t i, len = strlen(root);
	const char **v = malloc((t->n + 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	v[(*n)++] = root;
	for (i = 0; i < t->n; i++)
		if (!strncmp(t->v[i].path, root, len) && t->v[i].path[len] == '/' &&
		    !(keep_targets && targeted(e, t->v[i].path, false)))
			v[(*n)++] = t->v[i].path;
	qsort(v, *n, sizeof(*v), cmp_depth);
	return v;
}

/* A child must stay within its parent: the order of the writes follows. */
int act_be_cpuset_write(struct enforcer *e, const struct container_table *t, const char *root,
			const char *set, bool grow)
{
	char path[PATH_MAX];
	size_t i, n;
	const char **v = subtree(e, t, root, true, &n);
	int r, root_r = -ENOMEM;

	for (i = 0; v && i < n; i++) {
		const char *rel = v[grow ? i : n - 1 - i];

		r = act_cpuset_file(e, rel, path, sizeof(path));
		if (!r)
			r = writer_set(e->w, path, set);
		if (rel == root)
			root_r = r;
	}
	free(v);
	return root_r;
}

size_t act_be_cpuset_adopt(struct enforcer *e, const struct container_table *t)
{
	char path[PATH_MAX], parent_path[PATH_MAX], parent[PATH_MAX];
	const char **v, *slash;
	size_t i, j, n, pending = 0;

	if (e->h->cpuset_version != 1 || !e->w->journal)
		return 0;	/* v2: a new cgroup's CPUs are its parent's, not a copy */
	for (i = 0; i < e->nroots; i++) {
		if (act_cpuset_file(e, e->roots[i], path, sizeof(path)) ||
		    !journal_has(e->w->journal, path))
			continue;	/* nothing of ours to copy from below this root */
		v = subtree(e, t, e->roots[i], false, &n);	/* parents first */
		for (j = 1; v && j < n; j++) {
			slash = strrchr(v[j], '/');
			if (!slash || (size_t)(slash - v[j]) >= sizeof(parent))
				continue;
			memcpy(parent, v[j], slash - v[j]);
			parent[slash - v[j]] = '\0';
			if (!act_cpuset_file(e, v[j], path, sizeof(path)) &&
			    !act_cpuset_file(e, parent, parent_path, sizeof(parent_path)) &&
			    writer_adopt(e->w, path, parent_path) == -EAGAIN)
				pending++;
		}
		free(v);
	}
	return pending;
}

/*
 * v1 refuses a parent's quota below a child's (EINVAL): a batch pod's limit
 * under BE's root held suppression off. Those below @root holding more than
 * @quota are cut to it, deepest first. Returns how many.
 */
static size_t cut_below(struct enforcer *e, const struct container_table *t, const char *root,
			long quota)
{
	size_t j, n, cut = 0;
	const char **v;
	long q;

	if (e->h->cpu_version != 1)
		return 0;
	v = subtree(e, t, root, false, &n);
	for (j = n; v && j-- > 1;)
		if (!act_quota_read(e, v[j], &q) && q > quota && act_quota_write(e, v[j], quota) >= 0)
			cut++;
	free(v);
	if (cut)
		log_info("BE quota %.2f cores on %s: %zu cgroup(s) below it held more, cut to it "
			 "first (v1 refuses a parent's quota below a child's)",
			 quota / (double)CFS_PERIOD_US, root, cut);
	return cut;
}

/*
 * BE's quota on @root is now @quota (-1: none): what was cut below it gets
 * its own back where that fits, else as much as fits; parents first. Not a
 * culprit's quota, which the targeted action keeps.
 */
static void uncut_below(struct enforcer *e, const struct container_table *t, const char *root,
			long quota)
{
	char path[PATH_MAX];
	const char **v;
	size_t j, n;
	long orig;

	v = subtree(e, t, root, false, &n);
	for (j = 1; v && j < n; j++) {
		if (targeted(e, v[j], true) || act_quota_original(e, v[j], &orig))
			continue;
		if (quota < 0 || orig < 0 || orig <= quota) {	/* none fits any parent */
			if (!act_quota_path(e, v[j], path, sizeof(path)))
				act_restore(e, path);
		} else {
			act_quota_write(e, v[j], quota);
		}
	}
	free(v);
}

/*
 * One allowance for all BE: split evenly between the roots that hold work
 * (besteffort and a YARN tree each got the whole of it, twice the budget).
 */
static void by_quota(struct enforcer *e, const struct container_table *t, double allowed)
{
	long cur, next, sum = 0;
	size_t i, busy = 0;
	int r;

	for (i = 0; i < e->nroots; i++)
		busy += holds_work(t, e->roots[i]);
	allowed /= busy > 1 ? busy : 1;
	for (i = 0; i < e->nroots; i++) {
		if (act_quota_read(e, e->roots[i], &cur))
			continue;
		next = suppress_next_quota(cur, allowed, e->capacity);
		if (next != cur && !e->suppressing && !act_can_start(e, ACT_SUPPRESS))
			return;		/* another action is being measured: next period */
		r = next == cur ? 0 : act_quota_write(e, e->roots[i], next);
		if (r == -EINVAL && next >= 0 && cut_below(e, t, e->roots[i], next))
			r = act_quota_write(e, e->roots[i], next);
		if (r < 0)
			next = cur;
		else if (cur >= 0 && (next < 0 || next > cur))
			uncut_below(e, t, e->roots[i], next);
		if (next >= 0)
			sum += next;
		if (r < 0 || next == cur || e->suppressing)
			continue;
		e->suppressing = true;
		act_begin(e, ACT_SUPPRESS, 0, "BE quota %.2f cores on %s%s",
			  next / (double)CFS_PERIOD_US, e->roots[i],
			  busy > 1 ? " (the allowance split between the BE roots)" : "");
	}
	e->st.be_quota_us = e->suppressing ? sum : -1;
}

/*
 * The CPUs no BE cpuset may hold, as Koordinator's cpusuppress keeps them:
 * those the kubelet's static CPU manager gave containers of their own, and
 * those LSE containers are bound to. Logged when they change.
 */
static void refresh_exclusive(struct enforcer *e, const struct container_table *t)
{
	char path[PATH_MAX], buf[CPUSET_TEXT_MAX], a[CPUSET_TEXT_MAX], b[CPUSET_TEXT_MAX];
	const char *state = e->c->kubelet.cpu_manager_state;
	struct cpu_manager_state s;
	cpu_set_t kubelet, lse, cpus, all;
	char err[256];
	size_t i;
	int r;

	CPU_ZERO(&kubelet);
	CPU_ZERO(&lse);
	r = *state ? cpu_manager_state_read(state, &s, err, sizeof(err)) : -ENOENT;
	if (!r)
		cpu_manager_exclusive(&s, &e->topo.online, &kubelet);
	else if (r != -ENOENT && !e->excl.said_bad)
		log_warn("the kubelet's CPU manager state is not read (%s): BE cpusets may hold its "
			 "containers' CPUs", err);
	e->excl.said_bad = r && r != -ENOENT;
	for (i = 0; i < t->n; i++)
		if (t->v[i].ident.qos == KC_LSE &&
		    !act_cpuset_file(e, t->v[i].path, path, sizeof(path)) &&
		    !writer_read(e->w, path, buf, sizeof(buf)) && !cpuset_parse(buf, &cpus) &&
		    cpuset_is_binding(&cpus, &e->topo.online))
			CPU_OR(&lse, &lse, &cpus);
	if (!CPU_EQUAL(&kubelet, &e->excl.kubelet) || !CPU_EQUAL(&lse, &e->excl.lse)) {
		cpuset_format(&kubelet, a, sizeof(a));
		cpuset_format(&lse, b, sizeof(b));
		log_info("CPUs kept from BE cpusets: the static CPU manager's containers' %s, bound "
			 "LSE containers' %s", *a ? a : "none", *b ? b : "none");
	}
	e->excl.kubelet = kubelet;
	e->excl.lse = lse;
	CPU_OR(&all, &kubelet, &lse);
	e->st.exclusive_cpus = CPU_COUNT(&all);
}

/*
 * The CPUs BE may be given: its root's parent's cpuset (all online CPUs when
 * unknown), but the node's reserved CPUs, the CPUs of containers that hold
 * their own, and those it is kept off (each while any is left).
 */
static void be_pool(const struct enforcer *e, const char *root, cpu_set_t *pool)
{
	char parent[PATH_MAX], path[PATH_MAX], buf[CPUSET_TEXT_MAX];
	const char *slash = strrchr(root, '/');
	cpu_set_t reserved;

	*pool = e->topo.online;
	if (!slash || slash == root || (size_t)(slash - root) >= sizeof(parent))
		return;
	memcpy(parent, root, slash - root);
	parent[slash - root] = '\0';
	if (!act_cpuset_file(e, parent, path, sizeof(path)) &&
	    !writer_read(e->w, path, buf, sizeof(buf)) && !cpuset_parse(buf, pool) &&
	    CPU_COUNT(pool))
		CPU_AND(pool, pool, &e->topo.online);
	else
		*pool = e->topo.online;
	config_reserved_cpus(e->c, &reserved);
	cpuset_exclude(pool, &reserved);
	cpuset_exclude(pool, &e->excl.kubelet);
	cpuset_exclude(pool, &e->excl.lse);
	if (e->keepoff.on)
		cpuset_exclude(pool, &e->keepoff.cpus);
}

static void by_cpuset(struct enforcer *e, const struct container_table *t, double allowed)
{
	char path[PATH_MAX], buf[CPUSET_TEXT_MAX];
	cpu_set_t cur, next, pool;
	int ncur, n;
	size_t i;

	for (i = 0; i < e->nroots; i++) {
		if (act_cpuset_file(e, e->roots[i], path, sizeof(path)) ||
		    writer_read(e->w, path, buf, sizeof(buf)) || cpuset_parse(buf, &cur))
			continue;
		ncur = CPU_COUNT(&cur);
		n = suppress_next_cpuset_size(ncur, allowed, e->capacity);
		be_pool(e, e->roots[i], &pool);
		/* the same size, but on a CPU another container now holds: chosen again */
		CPU_AND(&next, &cur, &pool);
		if (n == ncur && CPU_EQUAL(&next, &cur))
			continue;
		if (!e->suppressing && !act_can_start(e, ACT_SUPPRESS))
			return;
		cpuset_choose(&e->topo, &pool, n, &next);
		/* kept off CPUs it would grow to: nothing to write, and no action to measure */
		if (CPU_EQUAL(&next, &cur) || cpuset_format(&next, buf, sizeof(buf)) < 0)
			continue;
		/* a limit not in force is not recorded: eviction judges BE against it */
		if (act_be_cpuset_write(e, t, e->roots[i], buf, n > ncur) < 0)
			continue;
		e->st.be_cpuset_cpus = CPU_COUNT(&next);
		if (!e->suppressing) {
			e->suppressing = true;
			act_begin(e, ACT_SUPPRESS, 0, "BE cpuset %s (%d CPUs) on %s", buf,
				  CPU_COUNT(&next), e->roots[i]);
		}
	}
}

void act_suppress(struct enforcer *e, const struct window *w, const struct container_table *t)
{
	struct suppress_input in;

	measure(e, w, t, &in);
	if (e->now < e->hold_until[ACT_SUPPRESS] || !e->nroots)
		return;
	if (e->c->be.cpu_suppress_policy == SUPPRESS_CPUSET)
		refresh_exclusive(e, t);
	e->st.be_allowed_cores = suppress_be_allowed(&e->c->be, &in);
	if (e->c->be.cpu_suppress_policy == SUPPRESS_CFS_QUOTA)
		by_quota(e, t, e->st.be_allowed_cores);
	else
		by_cpuset(e, t, e->st.be_allowed_cores);
}

void act_be_cpuset_restore(struct enforcer *e, const struct container_table *t, const char *root,
			   bool keep_targets)
{
	char path[PATH_MAX];
	const char **v;
	size_t j, n;

	v = subtree(e, t, root, keep_targets, &n);	/* widen parents first */
	for (j = 0; v && j < n; j++)
		if (!act_cpuset_file(e, v[j], path, sizeof(path)))
			act_restore(e, path);
	free(v);
}

void act_suppress_rollback(struct enforcer *e, const struct container_table *t)
{
	char path[PATH_MAX];
	size_t i;
	long q;

	for (i = 0; i < e->nroots; i++) {
		if (!act_quota_path(e, e->roots[i], path, sizeof(path)))
			act_restore(e, path);
		if (!act_quota_read(e, e->roots[i], &q))
			uncut_below(e, t, e->roots[i], q);
		act_be_cpuset_restore(e, t, e->roots[i], false);
	}
	e->keepoff.on = false;	/* the cpusets are the originals again */
	e->suppressing = false;
	e->st.be_quota_us = -1;
	e->st.be_cpuset_cpus = 0;
}
