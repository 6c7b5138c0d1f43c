// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The collector's map memory against its model (docs/performance.md, "The
 * memory model"): the kernel's count of each map, read at two sizes of
 * --max-containers, splits into a part per CPU and slot (cg_cpu), parts per
 * slot (the histograms, the slot and class hashes, the free-slot queue) and
 * a part that grows with neither. Printed map by map for the model's table;
 * run with VM_SMP=16 or 64 in the VM self-test for other CPU counts.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "collector.h"
#include "testlib.h"

#define SIZES	2
#define MAPS	16

static const unsigned int containers[SIZES] = { 1000, 4000 };

/* Maps sized by the container slots; every other map has a size of its own. */
static const char *const per_slot[] = { "cg_hist", "cg_slot", "free_slots", "cg_class" };

struct usage {
	unsigned int n;
	char name[MAPS][32];
	unsigned long long bytes[MAPS];
};

static void note(void *ctx, const char *name, unsigned long long bytes)
{
	struct usage *u = ctx;

	if (u->n == MAPS)
		return;
	snprintf(u->name[u->n], sizeof(u->name[0]), "%s", name);
	u->bytes[u->n++] = bytes;
}

static unsigned long long bytes_of(const struct usage *u, const char *name)
{
	unsigned int i;

	for (i = 0; i < u->n; i++)
		if (!strcmp(u->name[i], name))
			return u->bytes[i];
	return 0;
}

static bool is_per_slot(const char *name)
{
	unsigned int i;

	for (i = 0; i < sizeof(per_slot) / sizeof(per_slot[0]); i++)
		if (!strcmp(name, per_slot[i]))
			return true;
	return false;
}

/*
 * An array of @n entries of @size as the kernel counts it: since 6.6 what
 * it allocates (page-aligned for a mmapable array, with the array's header
 * on a page of its own), before that key and value rounded to 8 per entry.
 */
static bool array_counted(unsigned long long got, unsigned long long n, unsigned long long size)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long long low = n * size, high = n * ((size + 4 + 7) / 8 * 8) + 2 * page;

	return got >= low && got <= high;
}

int main(void)
{
	struct collector_opts o = {};
	static struct usage u[SIZES];
	unsigned long long fixed[SIZES] = {}, slotted[SIZES] = {}, cpus = 0, cg_cpu;
	unsigned int slots[SIZES], i, k;
	struct cpu_hierarchy hier;
	struct collector *col;
	double per_slot_b;

	require_bpf_env(&hier);
	o.hier = &hier;
	for (k = 0; k < SIZES; k++) {
		o.max_containers = containers[k];
		if (!check(!collector_open(&o, &col), "collector with %u containers", containers[k]))
			return test_summary("test_memory");
		collector_map_bytes(col, &slots[k]);
		cpus = collector_nr_cpus(col);
		collector_map_usage(col, note, &u[k]);
		collector_close(col);
	}
	printf("# %u CPUs; map: bytes at %u and %u slots\n", (unsigned int)cpus, slots[0], slots[1]);
	for (i = 0; i < u[0].n; i++)
		printf("#   %-12s %12llu %12llu\n", u[0].name[i], u[0].bytes[i],
		       bytes_of(&u[1], u[0].name[i]));

	for (k = 0; k < SIZES; k++) {
		cg_cpu = bytes_of(&u[k], "cg_cpu");
		check(array_counted(cg_cpu, cpus * slots[k], sizeof(struct cg_cpu_stats)),
		      "cg_cpu at %u slots: %llu bytes, %zu per CPU and slot (%.1f counted)", slots[k],
		      cg_cpu, sizeof(struct cg_cpu_stats), (double)cg_cpu / (cpus * slots[k]));
		check(array_counted(bytes_of(&u[k], "cg_hist"), slots[k], sizeof(struct cg_hist)),
		      "cg_hist at %u slots: %llu bytes, %zu per slot", slots[k],
		      bytes_of(&u[k], "cg_hist"), sizeof(struct cg_hist));
		for (i = 0; i < u[k].n; i++) {
			if (!strcmp(u[k].name[i], "cg_cpu"))
				continue;
			if (is_per_slot(u[k].name[i]))
				slotted[k] += u[k].bytes[i];
			else
				fixed[k] += u[k].bytes[i];
		}
	}
	check(fixed[0] == fixed[1] && fixed[0] > 0,
	      "maps not sized by slots hold the same at both sizes (%llu, %llu bytes)", fixed[0],
	      fixed[1]);
	/* Histogram, a slot hash entry, a queue entry, two class hash entries (pod and container). */
	per_slot_b = (double)(slotted[1] - slotted[0]) / (slots[1] - slots[0]);
	check(per_slot_b >= sizeof(struct cg_hist) && per_slot_b <= sizeof(struct cg_hist) + 512,
	      "the per-slot maps grow by %.0f bytes per slot (cg_hist's %zu and at most 512 more)",
	      per_slot_b, sizeof(struct cg_hist));
	printf("# model: %zu x CPUs x slots + %.0f x slots + %llu bytes (%u CPUs, fixed part "
	       "with the per-CPU maps)\n", sizeof(struct cg_cpu_stats), per_slot_b,
	       fixed[0], (unsigned int)cpus);
	return test_summary("test_memory");
}
