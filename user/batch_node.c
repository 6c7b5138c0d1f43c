// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Measuring the node for the batch capacity. CPU: the window's containers
 * by class (a container counts toward itself only, so the sum over all is
 * the node; the pods are the online and BE ones, as for suppression). Memory:
 * MemTotal - MemAvailable for the node, and each pod's memory cgroup (and
 * each YARN container's not inside a pod) without page cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "batch_node.h"
#include "evict_policy.h"
#include "pods.h"

/* A small pseudo-file into @buf (NUL-terminated); -errno, or -EFBIG when it does not fit. */
static int read_small(const char *path, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (n < len - 1 && (r = read(fd, buf + n, len - 1 - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			r = -errno;
			close(fd);
			return r;
		}
		n += r;
	}
	close(fd);
	buf[n] = '\0';
	return n == len - 1 ? -EFBIG : 0;
}

/*
 * High priority: a priority class other than batch and free. Without the
 * kubelet's word, Koordinator's default from the QoS: online classes prod,
 * BE batch.
 */
static bool is_hp(const struct container *c)
{
	if (c->ident.prio != PRIO_NONE)
		return prio_is_hp(c->ident.prio);
	return KC_IS_ONLINE(c->ident.qos);
}

/* An LSE pod the kubelet listed: its CPU counts at request, not at use. */
static bool cpu_at_request(const struct container *c)
{
	return c->ident.qos == KC_LSE && c->ident.prio != PRIO_NONE && c->ident.cpu_request > 0;
}

static bool is_pod(const struct container *c)
{
	return KC_IS_ONLINE(c->ident.qos) || c->ident.qos == KC_BE;
}

static void cpu_used(struct batch_node *b, const struct window *w, const struct container_table *t,
		     double v[BV_NR])
{
	const struct container *c;
	double cores;
	size_t i;

	for (i = 0; w->dur_ns && i < w->n; i++) {
		if (!w->v[i].cpu_ns)
			continue;	/* most of a big node's containers, in a second */
		cores = (double)w->v[i].cpu_ns / w->dur_ns;
		v[BV_CPU_NODE] += cores;
		c = container_table_get(t, w->v[i].cgid);
		if (!c || !is_pod(c))
			continue;
		v[BV_CPU_PODS] += cores;
		if (is_hp(c) && !cpu_at_request(c))
			v[BV_CPU_HP] += cores;
	}
	if (b->hp_request_gen != t->gen) {	/* a walk's result: summed once per walk */
		b->hp_request = 0;
		for (i = 0; i < t->n; i++) {
			c = &t->v[i];
			if (c->ident.kind == CG_POD && cpu_at_request(c) && is_hp(c))
				b->hp_request += c->ident.cpu_request;
		}
		b->hp_request_gen = t->gen;
	}
	v[BV_CPU_HP] += b->hp_request;
}

/* A pod's cgroup, or a YARN container's own directory outside any pod: counted once. */
static bool memory_unit(const struct container *c)
{
	const char *last = strrchr(c->path, '/');

	if (c->ident.kind == CG_POD)
		return true;
	return c->ident.kind == CG_YARN && !c->ident.pod_uid[0] && last &&
	       !strcmp(last + 1, c->ident.container_id);
}

/* A memory cgroup's usage without page cache; 0 or -errno. */
static int mem_read(const struct batch_host *host, const char *path, unsigned long long *bytes)
{
	char file[PATH_MAX], buf[8192];
	int r;

	if (snprintf(file, sizeof(file), "%s%s/memory.stat", host->memory_root, path) >=
	    (int)sizeof(file))
		return -ENAMETOOLONG;
	r = read_small(file, buf, sizeof(buf));
	return r ? r : memory_stat_usage(buf, host->memory_version == 1, bytes);
}

/* A QoS level's memory, and what its pods (the cgroups directly in it) hold. */
struct mem_level {
	const struct container *c;
	size_t len;			/* of its path */
	bool hp;			/* its pods are high priority without the kubelet's word */
	unsigned long long total, own;	/* hierarchical; less its sublevels' */
	bool read, whole;		/* total read; own known (every sublevel read too) */
};

/* Is @child's path one component below @parent's? */
static bool directly_in(const char *child, size_t child_len, const struct mem_level *parent)
{
	return child_len > parent->len + 1 && !strncmp(child, parent->c->path, parent->len) &&
	       child[parent->len] == '/' && !strchr(child + parent->len + 1, '/');
}

/* @bytes (negative: taken out) as pods' memory, and high-priority pods' with @hp. */
static void count_mem(double v[BV_NR], bool hp, double bytes)
{
	v[BV_MEM_PODS] += bytes;
	if (hp)
		v[BV_MEM_HP] += bytes;
}

/*
 * The QoS levels of @t with their totals read, and what their own pods hold;
 * their count in *@n. NULL with *@n 0 when there are none, or no memory.
 */
static struct mem_level *mem_levels(struct batch_node *b, const struct container_table *t,
				    const struct batch_host *host, size_t *n)
{
	struct mem_level *lv = NULL, *l;
	size_t i, j, cnt = 0;

	*n = 0;
	for (i = 0; i < t->n; i++)
		cnt += t->v[i].ident.kind == CG_QOS_ROOT;
	if (!cnt || !(lv = calloc(cnt, sizeof(*lv))))
		return NULL;
	for (i = 0; i < t->n; i++) {
		const struct container *c = &t->v[i];

		if (c->ident.kind != CG_QOS_ROOT)
			continue;
		l = &lv[(*n)++];
		*l = (struct mem_level){ .c = c, .len = strlen(c->path) };
		/* burstable and besteffort pods take the level's class; the root's are guaranteed */
		l->hp = c->ident.qos != KC_BE;
		l->read = !mem_read(host, c->path, &l->total);
		b->mem_levels += l->read;
	}
	for (i = 0; i < *n; i++) {
		lv[i].own = lv[i].total;
		lv[i].whole = lv[i].read;
		for (j = 0; j < *n && lv[i].whole; j++) {
			if (j == i || !directly_in(lv[j].c->path, lv[j].len, &lv[i]))
				continue;
			lv[i].whole = lv[j].read;
			lv[i].own -= lv[i].own < lv[j].total ? lv[i].own : lv[j].total;
		}
	}
	return lv;
}

/*
 * The pods' memory without page cache. A level's memory.stat sums its whole
 * subtree (v2; v1's total_* keys), so the pods directly in a level hold its
 * total less its sublevels': one read per level, not per pod (5,000 pods'
 * memory.stat took 75-125 ms to read). A pod that counts otherwise than its
 * level's default (the kubelet's priority class or QoS label) is read and
 * put right; so is every unit in no level read (a YARN container, a level
 * without a memory cgroup). The levels' own pods include any cgroup directly
 * in them, and a removed pod's memory left to the level (v1 moves it up).
 */
static void mem_used(struct batch_node *b, const struct container_table *t,
		     const struct batch_host *host, double v[BV_NR])
{
	const struct mem_level *in;
	struct mem_level *lv;
	unsigned long long bytes;
	const struct container *c;
	size_t i, k, n, len;

	b->mem_cgroups = b->mem_cgroups_failed = b->mem_levels = 0;
	if (!host->memory_root || !*host->memory_root)
		return;
	lv = mem_levels(b, t, host, &n);
	for (k = 0; k < n; k++)
		if (lv[k].whole)
			count_mem(v, lv[k].hp, lv[k].own);
	for (i = 0; i < t->n; i++) {
		c = &t->v[i];
		if (!memory_unit(c))
			continue;
		len = strlen(c->path);
		for (k = 0, in = NULL; k < n && !in; k++)
			if (lv[k].whole && directly_in(c->path, len, &lv[k]))
				in = &lv[k];
		if (in && is_pod(c) && is_hp(c) == in->hp)
			continue;	/* counted with its level */
		b->mem_cgroups++;
		if (mem_read(host, c->path, &bytes)) {
			b->mem_cgroups_failed++;	/* gone since the walk, or not a memory cgroup */
			continue;
		}
		if (in)		/* counted with its level: as it counts instead */
			count_mem(v, in->hp, -(double)bytes);
		if (is_pod(c))
			count_mem(v, is_hp(c), bytes);
	}
	free(lv);
	v[BV_MEM_PODS] = v[BV_MEM_PODS] > 0 ? v[BV_MEM_PODS] : 0;
	v[BV_MEM_HP] = v[BV_MEM_HP] > 0 ? v[BV_MEM_HP] : 0;
}

int batch_node_period(struct batch_node *b, const struct koord_config *c, const struct window *w,
		      const struct container_table *t, const struct batch_host *host, double now_s)
{
	unsigned long long total = 0, avail = 0;
	double v[BV_NR] = {}, mean[BV_NR];
	char buf[8192];
	int r;

	cpu_used(b, w, t, v);
	v[BV_CPU_HP] += host->unseen_cpu;
	b->mem_ok = !read_small(host->meminfo, buf, sizeof(buf)) &&
		    !meminfo_parse(buf, &total, &avail) && total >= avail;
	if (b->mem_ok) {
		v[BV_MEM_NODE] = total - avail;
		if (!b->mem_read_at || now_s - b->mem_read_at >= BATCH_MEM_REFRESH_S ||
		    now_s < b->mem_read_at || t->gen != b->mem_read_gen) {
			double pods[BV_NR] = {};

			mem_used(b, t, host, pods);
			b->mem_pods = pods[BV_MEM_PODS];
			b->mem_hp = pods[BV_MEM_HP];
			b->mem_read_at = now_s;
			b->mem_read_gen = t->gen;
		}
		v[BV_MEM_PODS] = b->mem_pods;
		v[BV_MEM_HP] = b->mem_hp + host->unseen_mem;
	}
	b->avg.window_s = c->batch.aggregate_seconds;
	r = batch_avg_push(&b->avg, now_s, v);
	if (r)
		return r;
	b->samples = batch_avg_mean(&b->avg, mean);
	b->span_s = batch_avg_span(&b->avg);
	b->cpu = (struct batch_resource){
		.capacity = host->cpus, .reclaim_percent = c->batch.cpu_reclaim_threshold_percent,
		.node_used = mean[BV_CPU_NODE], .pods_used = mean[BV_CPU_PODS],
		.hp_used = mean[BV_CPU_HP], .reserved = config_reserved_cores(c),
	};
	b->mem = (struct batch_resource){
		.capacity = total, .reclaim_percent = c->batch.memory_reclaim_threshold_percent,
		.node_used = mean[BV_MEM_NODE], .pods_used = mean[BV_MEM_PODS],
		.hp_used = mean[BV_MEM_HP], .reserved = config_reserved_memory(c),
	};
	batch_usage(&b->cpu);
	batch_usage(&b->mem);
	return 0;
}

struct part {
	const char *name;
	size_t off;
};

#define PART(n, m) { n, offsetof(struct batch_resource, m) }
static const struct part parts[] = {
	PART("capacity", capacity), PART("safety_margin", safety_margin),
	PART("node_used", node_used), PART("pods_used", pods_used),
	PART("system_used", system_used), PART("reserved", reserved),
	PART("hp_used", hp_used), PART("allocatable", allocatable),
};
#define NPARTS (sizeof(parts) / sizeof(parts[0]))

static double part_of(const struct batch_resource *r, size_t k)
{
	return *(const double *)((const char *)r + parts[k].off);
}

static void family(FILE *f, const char *name, const char *help, const struct batch_resource *r)
{
	size_t k;

	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	for (k = 0; k < NPARTS; k++)
		fprintf(f, "%s{part=\"%s\"} %.17g\n", name, parts[k].name, part_of(r, k));
}

void batch_node_metrics(const struct batch_node *b, FILE *f)
{
	if (!b->samples)
		return;
	fprintf(f, "# HELP koord_bpf_batch_allocatable_cores Reclaimable CPU for batch work "
		   "(Koordinator's usage policy), cores.\n"
		   "# TYPE koord_bpf_batch_allocatable_cores gauge\n"
		   "koord_bpf_batch_allocatable_cores %.17g\n", b->cpu.allocatable);
	family(f, "koord_bpf_batch_cpu_cores",
	       "The batch CPU formula's terms, averaged over the aggregation window.", &b->cpu);
	if (b->mem_ok) {
		fprintf(f, "# HELP koord_bpf_batch_allocatable_bytes Reclaimable memory for batch "
			   "work (Koordinator's usage policy).\n"
			   "# TYPE koord_bpf_batch_allocatable_bytes gauge\n"
			   "koord_bpf_batch_allocatable_bytes %.17g\n", b->mem.allocatable);
		family(f, "koord_bpf_batch_memory_bytes",
		       "The batch memory formula's terms, averaged over the aggregation window.",
		       &b->mem);
	}
	fprintf(f, "# HELP koord_bpf_batch_samples Periods in the batch averages.\n"
		   "# TYPE koord_bpf_batch_samples gauge\n"
		   "koord_bpf_batch_samples %zu\n", b->samples);
}

static json_object *resource_json(const struct batch_resource *r, const char *unit)
{
	json_object *o = json_object_new_object();
	size_t k;

	json_object_object_add(o, "unit", json_object_new_string(unit));
	json_object_object_add(o, "reclaim_threshold_percent",
			       json_object_new_int(r->reclaim_percent));
	for (k = 0; k < NPARTS; k++)
		json_object_object_add(o, parts[k].name, json_object_new_double(part_of(r, k)));
	return o;
}

json_object *batch_node_json(const struct batch_node *b, const struct koord_config *c)
{
	json_object *doc = json_object_new_object(), *alloc = json_object_new_object();
	json_object *mc = json_object_new_object();

	json_object_object_add(doc, "policy", json_object_new_string("usage"));
	json_object_object_add(doc, "window_s", json_object_new_int(c->batch.aggregate_seconds));
	json_object_object_add(doc, "span_s", json_object_new_double(b->span_s));
	json_object_object_add(doc, "samples", json_object_new_uint64(b->samples));
	json_object_object_add(doc, "cpu", resource_json(&b->cpu, "cores"));
	json_object_object_add(doc, "memory", b->mem_ok ? resource_json(&b->mem, "bytes") : NULL);
	/* as koord-manager writes them on the Node: milli-cores and bytes */
	json_object_object_add(alloc, "kubernetes.io/batch-cpu",
			       json_object_new_int64((long long)(b->cpu.allocatable * 1000)));
	json_object_object_add(alloc, "kubernetes.io/batch-memory",
			       b->mem_ok ? json_object_new_int64((long long)b->mem.allocatable)
					 : NULL);
	json_object_object_add(doc, "allocatable", alloc);
	json_object_object_add(mc, "levels", json_object_new_uint64(b->mem_levels));
	json_object_object_add(mc, "read", json_object_new_uint64(b->mem_cgroups -
								  b->mem_cgroups_failed));
	json_object_object_add(mc, "failed", json_object_new_uint64(b->mem_cgroups_failed));
	json_object_object_add(doc, "memory_cgroups", mc);
	return doc;
}

void batch_node_free(struct batch_node *b)
{
	batch_avg_free(&b->avg);
}
