/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Batch capacity: Koordinator's usage formula, the averages, memory.stat, the node's measure. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "batch.h"
#include "batch_node.h"
#include "pods.h"

static void test_usage(void **state)
{
	/* 10 cores at 60%: a 4-core margin; system 1 > reserved 0.5; HP 3 */
	struct batch_resource r = {
		.capacity = 10, .reclaim_percent = 60, .node_used = 6, .pods_used = 5,
		.hp_used = 3, .reserved = 0.5,
	};

	batch_usage(&r);
	assert_float_equal(r.safety_margin, 4, 1e-12);
	assert_float_equal(r.system_used, 1, 1e-12);
	assert_float_equal(r.allocatable, 2, 1e-12);
	/* the reservation counts when the system uses less */
	r.reserved = 2;
	batch_usage(&r);
	assert_float_equal(r.system_used, 2, 1e-12);
	assert_float_equal(r.allocatable, 1, 1e-12);
	/* pods read after the node (more than it): system used is 0, not negative */
	r.reserved = 0;
	r.pods_used = 7;
	batch_usage(&r);
	assert_float_equal(r.system_used, 0, 0);
	assert_float_equal(r.allocatable, 3, 1e-12);
	/* high priority over the budget: nothing, never negative */
	r.hp_used = 9;
	batch_usage(&r);
	assert_float_equal(r.allocatable, 0, 0);
	/* BE use is not subtracted: it is what batch may take */
	r = (struct batch_resource){ .capacity = 8, .reclaim_percent = 100, .node_used = 8,
				     .pods_used = 8, .hp_used = 0 };
	batch_usage(&r);
	assert_float_equal(r.allocatable, 8, 0);
	/* memory: 64 GiB at 65%, 4 GiB system, 20 GiB HP */
	r = (struct batch_resource){ .capacity = 64.0 * (1 << 30), .reclaim_percent = 65,
				     .node_used = 40.0 * (1 << 30), .pods_used = 36.0 * (1 << 30),
				     .hp_used = 20.0 * (1 << 30) };
	batch_usage(&r);
	assert_float_equal(r.allocatable, (64 - 22.4 - 4 - 20) * (double)(1 << 30), 1);
}

static void push(struct batch_avg *a, double t, double x)
{
	double v[BV_NR];
	int k;

	for (k = 0; k < BV_NR; k++)
		v[k] = x + k;
	assert_int_equal(batch_avg_push(a, t, v), 0);
}

static void test_avg(void **state)
{
	struct batch_avg a = { .window_s = 10 };
	double m[BV_NR];
	int i;

	assert_int_equal(batch_avg_mean(&a, m), 0);
	assert_float_equal(m[BV_MEM_HP], 0, 0);
	push(&a, 100, 1);
	assert_int_equal(batch_avg_mean(&a, m), 1);
	assert_float_equal(m[BV_CPU_NODE], 1, 0);
	assert_float_equal(m[BV_MEM_HP], 1 + BV_MEM_HP, 0);
	assert_float_equal(batch_avg_span(&a), 0, 0);
	push(&a, 101, 3);
	assert_int_equal(batch_avg_mean(&a, m), 2);
	assert_float_equal(m[BV_CPU_NODE], 2, 0);
	/* at t=110 the sample of t=100 is out: the window is (100, 110] */
	push(&a, 110, 5);
	assert_int_equal(batch_avg_mean(&a, m), 2);
	assert_float_equal(m[BV_CPU_NODE], 4, 0);
	assert_float_equal(batch_avg_span(&a), 9, 0);
	/* the ring grows past its first size and keeps the order */
	a.window_s = 1000;
	for (i = 0; i < 300; i++)
		push(&a, 200 + i, i);
	assert_int_equal(batch_avg_mean(&a, m), 302);
	assert_float_equal(m[BV_CPU_NODE], (3 + 5 + 299 * 300 / 2.0) / 302, 1e-9);
	assert_float_equal(batch_avg_span(&a), 499 - 101, 0);
	/* a shorter window drops the old ones at the next push */
	a.window_s = 5;
	push(&a, 500, 0);
	assert_int_equal(batch_avg_mean(&a, m), 5);
	batch_avg_free(&a);
	batch_avg_free(&a);
}

static const char v2_stat[] =
	"anon 1000\nfile 5000\nkernel 12\nshmem 0\nactive_anon 300\ninactive_anon 200\n"
	"active_file 4000\ninactive_file 1000\nunevictable 7\n";
static const char v1_stat[] =
	"cache 4096\nrss 8192\ninactive_anon 1\nactive_anon 2\nunevictable 3\n"
	"hierarchical_memory_limit 9223372036854771712\ntotal_cache 40960\n"
	"total_inactive_anon 100\ntotal_active_anon 200\ntotal_unevictable 300\n";

static void test_memory_stat(void **state)
{
	unsigned long long b = 0;

	assert_int_equal(memory_stat_usage(v2_stat, false, &b), 0);
	assert_int_equal(b, 507);
	/* v1: the hierarchical total_ keys, not the cgroup's own */
	assert_int_equal(memory_stat_usage(v1_stat, true, &b), 0);
	assert_int_equal(b, 600);
	assert_int_equal(memory_stat_usage(v1_stat, false, &b), 0);
	assert_int_equal(b, 6);
	/* a key only as a prefix of another, a missing key, junk, overflow */
	assert_int_equal(memory_stat_usage("active_anon_x 1\ninactive_anon 1\nunevictable 1\n",
					   false, &b), -EINVAL);
	assert_int_equal(memory_stat_usage("active_anon 1\nunevictable 1\n", false, &b), -EINVAL);
	assert_int_equal(memory_stat_usage("active_anon 1x\ninactive_anon 1\nunevictable 1\n",
					   false, &b), -EINVAL);
	assert_int_equal(memory_stat_usage("active_anon 18446744073709551615\ninactive_anon 1\n"
					   "unevictable 0\n", false, &b), -EINVAL);
	assert_int_equal(memory_stat_usage("active_anon 99999999999999999999\ninactive_anon 1\n"
					   "unevictable 0\n", false, &b), -EINVAL);
	assert_int_equal(memory_stat_usage("", false, &b), -EINVAL);
}

/* ---- the node: a fake memory hierarchy and meminfo ---- */

static char root[256];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void write_file(const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = dir + strlen(root) + 1; (slash = strchr(slash, '/')); slash++) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void stat_file(const char *cg, unsigned long long anon)
{
	char rel[256], text[256];

	snprintf(rel, sizeof(rel), "/mem%s/memory.stat", cg);
	snprintf(text, sizeof(text), "active_anon %llu\ninactive_anon 0\nunevictable 0\nfile 999999\n",
		 anon);
	write_file(rel, text);
}


/* container_table_get() needs the index: build the table by scanning a real tree instead. */
static void table_of(struct container_table *t, const char *const *paths, size_t n)
{
	char dir[512];
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(dir, sizeof(dir), "%s/cpu%s/x", root, paths[i]);
		write_file(dir + strlen(root), "");
	}
	snprintf(dir, sizeof(dir), "%s/cpu", root);
	assert_int_equal(container_table_scan(t, dir, &(struct class_rules){}, NULL), 0);
}

static unsigned long long id_of(const struct container_table *t, const char *path)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].path, path))
			return t->v[i].id;
	fail_msg("no %s", path);
	return 0;
}

static void set_prio(struct container_table *t, const char *path, enum prio_class p)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].path, path))
			t->v[i].ident.prio = p;
	container_table_changed(t);	/* as the agents do */
}

static void set_lse(struct container_table *t, const char *path, double request)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (strcmp(t->v[i].path, path))
			continue;
		t->v[i].ident.qos = KC_LSE;
		t->v[i].ident.prio = PRIO_PROD;
		t->v[i].ident.cpu_request = request;
	}
	container_table_changed(t);
}

#define GUAR	"/kubepods/pod11111111-2222-3333-4444-555555555555"
#define BURST	"/kubepods/burstable/pod22222222-2222-3333-4444-555555555555"
#define BESTEF	"/kubepods/besteffort/pod33333333-2222-3333-4444-555555555555"
#define YARN	"/hadoop-yarn/container_e01_1700000000000_0001_01_000002"

static void test_node(void **state)
{
	static const char *const paths[] = {
		GUAR, GUAR "/c1", BURST, BURST "/c2", BESTEF, BESTEF "/c3", YARN, YARN "/sub",
		"/system.slice",
	};
	struct container_table t = {};
	struct koord_config c;
	struct batch_node b = {}, b2 = {}, b3 = {};
	struct cg_window cw[6] = {};
	struct window w = { .dur_ns = 1000000000, .v = cw, .n = 6 };
	struct batch_host host = { .memory_version = 2, .cpus = 10 };
	char meminfo[512], memroot[512];
	json_object *doc, *o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	const char *tmp = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%s/koord-batch-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(root));
	table_of(&t, paths, sizeof(paths) / sizeof(paths[0]));
	/* 1 GiB total, 600 MiB used */
	write_file("/meminfo", "MemTotal: 1048576 kB\nMemFree: 1000 kB\nMemAvailable: 434176 kB\n");
	stat_file(GUAR, 100 << 20);
	stat_file(BURST, 50 << 20);
	stat_file(BESTEF, 200 << 20);
	stat_file(YARN, 30 << 20);
	stat_file(YARN "/sub", 1000 << 20);	/* inside the YARN container: not again */
	stat_file(GUAR "/c1", 1000 << 20);	/* inside the pod: not again */
	snprintf(meminfo, sizeof(meminfo), "%s/meminfo", root);
	snprintf(memroot, sizeof(memroot), "%s/mem", root);
	host.meminfo = meminfo;
	host.memory_root = memroot;

	/* CPU: LSR 2, LS 1, BE 3, YARN (BE) 0.5, system 1.5 cores */
	cw[0] = (struct cg_window){ .cgid = id_of(&t, GUAR "/c1"), .cpu_ns = 2000000000 };
	cw[1] = (struct cg_window){ .cgid = id_of(&t, BURST "/c2"), .cpu_ns = 1000000000 };
	cw[2] = (struct cg_window){ .cgid = id_of(&t, BESTEF "/c3"), .cpu_ns = 3000000000 };
	cw[3] = (struct cg_window){ .cgid = id_of(&t, YARN "/sub"), .cpu_ns = 500000000 };
	cw[4] = (struct cg_window){ .cgid = id_of(&t, "/system.slice"), .cpu_ns = 1000000000 };
	cw[5] = (struct cg_window){ .cgid = 999999999, .cpu_ns = 500000000 };	/* unknown: system */
	config_defaults(&c);
	c.reservation.cpu = 1;
	c.reservation.memory = 300 << 20;

	f = open_memstream(&buf, &len);
	batch_node_metrics(&b, f);	/* nothing before the first period */
	fclose(f);
	assert_int_equal(len, 0);
	free(buf);

	assert_int_equal(batch_node_period(&b, &c, &w, &t, &host, 50), 0);
	assert_int_equal(b.samples, 1);
	assert_true(b.mem_ok);
	assert_float_equal(b.cpu.node_used, 8, 1e-9);
	assert_float_equal(b.cpu.pods_used, 6.5, 1e-9);
	assert_float_equal(b.cpu.hp_used, 3, 1e-9);
	/* 10 - 4 - max(1.5, 1) - 3 */
	assert_float_equal(b.cpu.allocatable, 1.5, 1e-9);
	assert_float_equal(b.mem.capacity, (double)(1ull * 1 << 30), 0);
	assert_float_equal(b.mem.node_used, (double)(1ull * 600 << 20), 0);
	assert_float_equal(b.mem.pods_used, (double)(1ull * 380 << 20), 0);
	assert_float_equal(b.mem.hp_used, (double)(1ull * 150 << 20), 0);
	/* system 220 MiB < reserved 300 MiB: 1024 - 358.4 - 300 - 150 MiB */
	assert_float_equal(b.mem.allocatable, (1024 - 358.4 - 300 - 150) * (1 << 20), 1);
	assert_int_equal(b.mem_cgroups, 4);
	assert_int_equal(b.mem_cgroups_failed, 0);

	f = open_memstream(&buf, &len);
	batch_node_metrics(&b, f);
	fclose(f);
	assert_non_null(strstr(buf, "\nkoord_bpf_batch_allocatable_cores 1.5\n"));
	assert_non_null(strstr(buf, "\nkoord_bpf_batch_cpu_cores{part=\"hp_used\"} 3\n"));
	assert_non_null(strstr(buf, "\nkoord_bpf_batch_memory_bytes{part=\"capacity\"} 1073741824\n"));
	assert_non_null(strstr(buf, "\nkoord_bpf_batch_samples 1\n"));
	free(buf);

	doc = batch_node_json(&b, &c);
	assert_true(json_object_object_get_ex(doc, "allocatable", &o));
	assert_int_equal(json_object_get_int64(json_object_object_get(o, "kubernetes.io/batch-cpu")),
			 1500);
	json_object_put(doc);

	/* a second period: the mean of both; a pod gone from memory counts as failed ... */
	cw[2].cpu_ns = 0;
	snprintf(memroot, sizeof(memroot), "%s/mem" BESTEF "/memory.stat", root);
	remove(memroot);
	snprintf(memroot, sizeof(memroot), "%s/mem", root);
	/* ... but the pods' memory is read again only BATCH_MEM_REFRESH_S later */
	assert_int_equal(batch_node_period(&b, &c, &w, &t, &host, 51), 0);
	assert_int_equal(b.samples, 2);
	assert_float_equal(b.cpu.node_used, 6.5, 1e-9);
	assert_float_equal(b.mem.pods_used, (double)(1ull * 380 << 20), 0);
	assert_int_equal(b.mem_cgroups_failed, 0);
	assert_int_equal(batch_node_period(&b, &c, &w, &t, &host, 50 + BATCH_MEM_REFRESH_S), 0);
	assert_int_equal(b.samples, 3);
	assert_float_equal(b.cpu.node_used, 6, 1e-9);
	assert_float_equal(b.mem.pods_used, (double)((2ull * 380 + 180) << 20) / 3, 1);
	assert_int_equal(b.mem_cgroups_failed, 1);

	/* meminfo unreadable: no memory figures, CPU still */
	snprintf(meminfo, sizeof(meminfo), "%s/nonexistent", root);
	assert_int_equal(batch_node_period(&b, &c, &w, &t, &host, 61), 0);
	assert_false(b.mem_ok);
	f = open_memstream(&buf, &len);
	batch_node_metrics(&b, f);
	fclose(f);
	assert_null(strstr(buf, "batch_allocatable_bytes"));
	assert_non_null(strstr(buf, "batch_allocatable_cores"));
	free(buf);
	doc = batch_node_json(&b, &c);
	assert_true(json_object_object_get_ex(doc, "memory", &o));
	assert_null(o);
	json_object_put(doc);

	/* the kubelet's priority classes decide: burstable koord-batch is not HP, BE koord-prod is */
	set_prio(&t, BURST, PRIO_BATCH);
	set_prio(&t, BURST "/c2", PRIO_BATCH);
	set_prio(&t, BESTEF, PRIO_PROD);
	set_prio(&t, BESTEF "/c3", PRIO_PROD);
	stat_file(BESTEF, 200 << 20);
	snprintf(meminfo, sizeof(meminfo), "%s/meminfo", root);
	cw[2].cpu_ns = 3000000000;
	assert_int_equal(batch_node_period(&b2, &c, &w, &t, &host, 60), 0);
	assert_float_equal(b2.cpu.hp_used, 5, 1e-9);
	assert_float_equal(b2.mem.hp_used, (double)(300ull << 20), 0);
	batch_node_free(&b2);

	/* an LSE pod the kubelet listed counts CPU at request (4), not at use (2); pods without cgroups too */
	set_lse(&t, GUAR, 4);
	set_lse(&t, GUAR "/c1", 4);
	host.unseen_cpu = 0.5;
	host.unseen_mem = 10 << 20;
	assert_int_equal(batch_node_period(&b3, &c, &w, &t, &host, 70), 0);
	assert_float_equal(b3.cpu.hp_used, 4 + 3 + 0.5, 1e-9);
	assert_float_equal(b3.cpu.pods_used, 6.5, 1e-9);	/* use: what the system is not */
	assert_float_equal(b3.mem.hp_used, (double)(310ull << 20), 0);	/* LSE memory at use */
	/* the kubelet gives another request: the next period counts it (the mean of both) */
	set_lse(&t, GUAR, 6);
	assert_int_equal(batch_node_period(&b3, &c, &w, &t, &host, 71), 0);
	assert_float_equal(b3.cpu.hp_used, (4 + 3 + 0.5 + 6 + 3 + 0.5) / 2.0, 1e-9);
	batch_node_free(&b3);

	batch_node_free(&b);
	config_free(&c);
	container_table_free(&t);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#define BURST2	"/kubepods/burstable/pod44444444-2222-3333-4444-555555555555"

/* One period of a new batch_node: its pods' memory and HP memory in MiB, and its reads. */
static void mem_period(const struct container_table *t, const struct batch_host *host,
		       double pods_mib, double hp_mib, unsigned long long levels,
		       unsigned long long read, unsigned long long failed)
{
	struct cg_window cw = {};
	struct window w = { .dur_ns = 1000000000, .v = &cw, .n = 0 };
	struct batch_node b = {};
	struct koord_config c;

	config_defaults(&c);
	assert_int_equal(batch_node_period(&b, &c, &w, t, host, 100), 0);
	assert_true(b.mem_ok);
	assert_float_equal(b.mem.pods_used, pods_mib * (1 << 20), 0);
	assert_float_equal(b.mem.hp_used, hp_mib * (1 << 20), 0);
	assert_int_equal(b.mem_levels, levels);
	assert_int_equal(b.mem_cgroups, read);
	assert_int_equal(b.mem_cgroups_failed, failed);
	batch_node_free(&b);
	config_free(&c);
}

/*
 * The pods' memory from their QoS levels: one read per level; a pod is read
 * only where it counts otherwise than its level says, or its level (or a
 * sublevel) cannot be read. A pod file that is read when it should not be
 * is unparseable: it would count as failed.
 */
static void test_node_levels(void **state)
{
	static const char *const paths[] = {
		GUAR, GUAR "/c1", BURST, BURST "/c2", BURST2, BESTEF, BESTEF "/c3", YARN,
	};
	struct container_table t = {};
	struct batch_host host = { .memory_version = 2, .cpus = 10 };
	char meminfo[512], memroot[512], path[600];
	const char *tmp = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%s/koord-batch-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(root));
	table_of(&t, paths, sizeof(paths) / sizeof(paths[0]));
	write_file("/meminfo", "MemTotal: 1048576 kB\nMemFree: 1000 kB\nMemAvailable: 434176 kB\n");
	/* pods G 100, B 50, B2 70, BE 200 MiB; 5 MiB left in besteffort by a removed pod */
	stat_file("/kubepods", 425 << 20);
	stat_file("/kubepods/burstable", 120 << 20);
	stat_file("/kubepods/besteffort", 205 << 20);
	write_file("/mem" GUAR "/memory.stat", "not read\n");
	stat_file(BURST, 50 << 20);
	write_file("/mem" BURST2 "/memory.stat", "not read\n");
	write_file("/mem" BESTEF "/memory.stat", "not read\n");
	stat_file(YARN, 30 << 20);
	snprintf(meminfo, sizeof(meminfo), "%s/meminfo", root);
	snprintf(memroot, sizeof(memroot), "%s/mem", root);
	host.meminfo = meminfo;
	host.memory_root = memroot;

	/* the levels alone (and the YARN container, in none): HP is guaranteed + burstable */
	mem_period(&t, &host, 425 + 30, 100 + 120, 3, 1, 0);
	/* a burstable koord-batch pod is read and taken out of HP */
	set_prio(&t, BURST, PRIO_BATCH);
	mem_period(&t, &host, 425 + 30, 100 + 70, 3, 2, 0);
	/* besteffort unreadable: its pods and the root's (whose own part is unknown) one by one */
	stat_file(GUAR, 100 << 20);
	stat_file(BESTEF, 200 << 20);
	snprintf(path, sizeof(path), "%s/mem/kubepods/besteffort/memory.stat", root);
	assert_int_equal(remove(path), 0);
	mem_period(&t, &host, 120 + 100 + 200 + 30, 70 + 100, 2, 4, 0);

	container_table_free(&t);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_avg),
		cmocka_unit_test(test_memory_stat),
		cmocka_unit_test(test_node_levels),
		cmocka_unit_test(test_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
