// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collector.h"
#include "koord.skel.h"
#include "log.h"
#include "running.h"

#define DEFAULT_MAX_CONTAINERS	4096
#define DEFAULT_LONG_WAIT_NS	5000000ull
#define DEFAULT_EVENTS_PER_SEC	100
#define MAX_CG_CPU_ENTRIES	(1u << 20)
/* A running stretch longer than this is checked against what runs (one IPI). */
#define OBSERVE_MIN_NS		1000000ull
/*
 * Every this many samples all containers are read, touched or not: a BPF
 * program that read the epoch before a sample and wrote its counters after
 * the next one (two whole periods later) would otherwise be missed.
 */
#define READ_ALL_EVERY		64

struct collector {
	struct koord *skel;
	enum pmu_source pmu_source;	/* what the counters read, PMU_SOURCE_OFF if none */
	int *pmu_fds;			/* PMU_NR * nr_cpus perf events, -1 where none */
	struct ring_buffer *rb;
	long_wait_fn on_event;
	void *event_ctx;
	enum attach_mode attach;
	enum store_mode store;
	int observe_fd;			/* the observe program, run on a CPU before its stretch is read */
	unsigned int nr_cpus;
	unsigned int nr_slots;		/* container slots, 0 meaning none */
	char mode[40];
	/* The BPF arrays, read in place: no copy of idle containers' counters. */
	const struct cg_cpu_stats *stats;	/* [cpu * nr_slots + slot] */
	const struct cg_hist *hists;		/* [slot] */
	const struct cpu_state *cpus;		/* [cpu] */
	size_t stats_len, hists_len, cpus_len;
	/* cg_slot is dumped here, kept from sample to sample (sized once). */
	struct slot_ref {
		__u64 cgid;
		__u32 slot;
	} *refs;
	size_t nrefs;
	__u64 refs_gen;			/* BPF's slot_gen when refs was dumped, + 1 */
	/* The last sample listed refs of this refs_gen, every one when whole. */
	__u64 listed_refs_gen;
	bool listed_whole;
	struct slot_dump {
		__u64 *keys;
		__u32 *vals;
		size_t n;
	} dump;
	/*
	 * Per slot, the histogram read at the last sample (gen - 1), in the
	 * other pool: a container with no wait since has the same histogram,
	 * copied instead of scanning its mapped buckets.
	 */
	struct slot_hist {
		__u64 cgid;
		__u64 wait_count;	/* 0: not all its waits were in it, not reusable */
		__u64 gen;
		__u32 off, n;
	} *shist;
	struct hist_pool {
		struct hist_cell *v;
		size_t n, cap;
	} pool[2];
	unsigned int cur;	/* pool[cur]: this sample's, pool[!cur]: the last one's */
	__u64 gen;
	/*
	 * Per slot, the container's sums at the last sample (gen), its parts
	 * in the other parts pool: a container BPF did not touch since, and
	 * not running, is taken from here instead of read from every CPU.
	 */
	struct slot_last {
		__u64 cgid;
		__u64 gen;
		struct cg_cpu_stats s;
		__u32 pc_off, npc;
	} *last;
	struct part_pool {
		struct cg_cpu_part *v;
		size_t n, cap;
	} parts[2];
	__u64 *running_gen;	/* [slot]: gen when it was seen running on a CPU */
};

/* The verifier's reason for refusing the last program, from libbpf's load log. */
static char load_refusal[256];

/* The log's last line that says something: the ones after it count instructions. */
static void note_refusal(const char *msg)
{
	const char *end = strstr(msg, "-- END PROG LOAD LOG --"), *b, *e;

	if (!end)
		return;
	for (e = end; e > msg; e = b) {
		for (b = e - 1; b > msg && b[-1] != '\n'; b--)
			;
		if (e - b > 1 && strncmp(b, "processed ", 10) && strncmp(b, "verification time", 17)) {
			snprintf(load_refusal, sizeof(load_refusal), "%.*s", (int)(e - b - 1), b);
			return;
		}
	}
}

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	char *msg;
	int n;

	/* Failed attempts while probing modes are expected: their logs only with -v. */
	if (log_level >= LOG_LVL_DEBUG)
		return vfprintf(stderr, fmt, ap);
	if (lvl == LIBBPF_WARN && vasprintf(&msg, fmt, ap) >= 0) {
		note_refusal(msg);
		n = (int)strlen(msg);
		free(msg);
		return n;
	}
	return 0;
}

/* Hierarchy id of the v1 cpu controller, from /proc/self/cgroup ("ID:ctrls:path"). */
static int cpu_hierarchy_id(int version)
{
	char line[512], *ctrls, *end, *tok, *save;
	int id = -ENOENT;
	FILE *f;

	if (version == 2)
		return 0;
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -errno;
	while (id < 0 && fgets(line, sizeof(line), f)) {
		ctrls = strchr(line, ':');
		if (!ctrls || !(end = strchr(ctrls + 1, ':')))
			continue;
		*end = '\0';
		for (tok = strtok_r(ctrls + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (!strcmp(tok, "cpu"))
				id = atoi(line);
	}
	fclose(f);
	return id;
}

static unsigned int pid_cap(void)
{
	unsigned long v = 32768;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 32768;
		fclose(f);
	}
	return v < 4096 ? 4096 : v > 131072 ? 131072 : v;
}

static void select_programs(struct koord *s, bool tp_btf, bool hash)
{
	struct bpf_program *tp[] = { s->progs.tp_wakeup, s->progs.tp_wakeup_new,
		s->progs.tp_switch, s->progs.tp_migrate, s->progs.tp_rmdir };
	struct bpf_program *raw[] = { s->progs.raw_wakeup, s->progs.raw_wakeup_new,
		s->progs.raw_switch, s->progs.raw_migrate, s->progs.raw_rmdir };
	size_t i;

	for (i = 0; i < sizeof(tp) / sizeof(tp[0]); i++) {
		bpf_program__set_autoload(tp[i], tp_btf);
		bpf_program__set_autoload(raw[i], !tp_btf);
	}
	bpf_program__set_autoload(s->progs.tp_stale_wait, tp_btf);
	bpf_program__set_autoload(s->progs.raw_stale_wait, !tp_btf);
	bpf_program__set_autoload(s->progs.tp_free, tp_btf && hash);
	bpf_program__set_autoload(s->progs.raw_free, !tp_btf && hash);
	/* Run by read_running(), never attached; a BTF task pointer only with task storage. */
	bpf_program__set_autoload(s->progs.observe_btf, !hash);
	bpf_program__set_autoload(s->progs.observe_raw, hash);
	bpf_program__set_autoattach(s->progs.observe_btf, false);
	bpf_program__set_autoattach(s->progs.observe_raw, false);
}

/*
 * The stale-wait program must see a switch before the switch program does:
 * tracepoint probes of one priority run in the order they were attached.
 */
static int attach_in_order(struct koord *s, bool tp_btf)
{
	struct bpf_program *first = tp_btf ? s->progs.tp_stale_wait : s->progs.raw_stale_wait;
	struct bpf_link **link = tp_btf ? &s->links.tp_stale_wait : &s->links.raw_stale_wait;

	bpf_program__set_autoattach(first, false);
	*link = bpf_program__attach(first);
	if (!*link)
		return -errno;
	return koord__attach(s);
}

/*
 * Container slots: one per container up to --max-containers, plus slot 0
 * (none), as far as the per-CPU array stays within MAX_CG_CPU_ENTRIES.
 */
static unsigned int slots_for(const struct collector_opts *o, unsigned int nr_cpus)
{
	unsigned int maxc = o->max_containers ? o->max_containers : DEFAULT_MAX_CONTAINERS;
	unsigned int cap = MAX_CG_CPU_ENTRIES / nr_cpus;

	if (maxc + 1 <= cap)
		return maxc + 1;
	log_warn("%u containers at most on %u CPUs (the per-CPU counters are capped at %u entries),"
		 " not the %u asked", cap - 1, nr_cpus, MAX_CG_CPU_ENTRIES, maxc);
	return cap;
}

/* Open, size and load the object for one mode; NULL with errno on failure. */
static struct koord *load(const struct collector_opts *o, unsigned int nr_cpus,
			  unsigned int nr_slots, enum attach_mode attach,
			  enum store_mode store, bool pmu_on)
{
	unsigned int maxc = o->max_containers ? o->max_containers : DEFAULT_MAX_CONTAINERS;
	bool hash = store == STORE_HASH;
	struct koord *s;
	int hid, err;

	hid = cpu_hierarchy_id(o->hier->version);
	if (hid < 0) {
		log_err("cannot find the cpu controller's hierarchy id in /proc/self/cgroup");
		errno = -hid;
		return NULL;
	}
	s = koord__open();
	if (!s)
		return NULL;
	s->rodata->cgroup_v2 = o->hier->version == 2;
	s->rodata->use_task_storage = !hash;
	s->rodata->cpu_hierarchy_id = hid;
	s->rodata->nr_cpus = nr_cpus;
	s->rodata->nr_slots = nr_slots;
	s->rodata->long_wait_ns = o->long_wait_ns ? o->long_wait_ns : DEFAULT_LONG_WAIT_NS;
	s->rodata->react_wait_ns = o->react_wait_ns;
	s->rodata->events_per_sec = o->events_per_sec ? o->events_per_sec : DEFAULT_EVENTS_PER_SEC;
	s->rodata->pmu_on = pmu_on;
	s->rodata->hide_cgid = o->hide_cgid;
	s->rodata->hide_side = o->hide_side;
	bpf_map__set_max_entries(s->maps.pmu, PMU_NR * nr_cpus);
	if (hash) {
		bpf_map__set_type(s->maps.tasks, BPF_MAP_TYPE_HASH);
		bpf_map__set_map_flags(s->maps.tasks, 0);
		bpf_map__set_max_entries(s->maps.tasks, pid_cap());
	}
	bpf_map__set_max_entries(s->maps.cpus, nr_cpus);
	bpf_map__set_max_entries(s->maps.cg_cpu, nr_cpus * nr_slots);
	bpf_map__set_max_entries(s->maps.cg_hist, nr_slots);
	bpf_map__set_max_entries(s->maps.cg_slot, nr_slots);
	bpf_map__set_max_entries(s->maps.free_slots, nr_slots);
	/* Classes are published per cgroup, and pods and QoS levels are cgroups too. */
	bpf_map__set_max_entries(s->maps.cg_class, 2 * maxc + 64);
	select_programs(s, attach == ATTACH_TP_BTF, hash);
	err = koord__load(s);
	if (err) {
		koord__destroy(s);
		errno = -err;
		return NULL;
	}
	return s;
}

/* Counters by source: hardware, or software events standing in where there is no PMU. */
static const struct perf_event_attr *pmu_attrs(enum pmu_source src)
{
	static const struct perf_event_attr hw[PMU_NR] = {
		[PMU_CYCLES] = { .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CPU_CYCLES },
		[PMU_INSTRUCTIONS] = { .type = PERF_TYPE_HARDWARE,
				       .config = PERF_COUNT_HW_INSTRUCTIONS },
		[PMU_LLC_MISSES] = { .type = PERF_TYPE_HW_CACHE,
				     .config = PERF_COUNT_HW_CACHE_LL |
					       PERF_COUNT_HW_CACHE_OP_READ << 8 |
					       PERF_COUNT_HW_CACHE_RESULT_MISS << 16 },
	};
	/* cpu-clock twice (so CPI is exactly 1) and page faults: all checkable from /proc. */
	static const struct perf_event_attr sw[PMU_NR] = {
		[PMU_CYCLES] = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK },
		[PMU_INSTRUCTIONS] = { .type = PERF_TYPE_SOFTWARE,
				       .config = PERF_COUNT_SW_CPU_CLOCK },
		[PMU_LLC_MISSES] = { .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS },
	};

	return src == PMU_SOURCE_SOFTWARE ? sw : hw;
}

static void pmu_close(struct collector *c)
{
	unsigned int i;

	for (i = 0; c->pmu_fds && i < PMU_NR * c->nr_cpus; i++)
		if (c->pmu_fds[i] >= 0)
			close(c->pmu_fds[i]);
	free(c->pmu_fds);
	c->pmu_fds = NULL;
}

/*
 * One event per counter and CPU (pid -1), read by BPF at each switch. With
 * AUTO, no PMU means no counters, said once; asked for explicitly, it is an
 * error. CPUs that are offline are left without events.
 */
static int pmu_open(struct collector *c, enum pmu_source want)
{
	enum pmu_source src = want == PMU_SOURCE_AUTO ? PMU_SOURCE_HARDWARE : want;
	const struct perf_event_attr *attrs = pmu_attrs(src);
	unsigned int k, cpu, opened = 0;
	const char *why;
	int fd, err = 0;

	c->pmu_source = PMU_SOURCE_OFF;
	if (want == PMU_SOURCE_OFF)
		return 0;
	c->pmu_fds = malloc(PMU_NR * c->nr_cpus * sizeof(*c->pmu_fds));
	if (!c->pmu_fds)
		return -ENOMEM;
	for (k = 0; k < PMU_NR * c->nr_cpus; k++)
		c->pmu_fds[k] = -1;
	for (k = 0; k < PMU_NR && !err; k++) {
		for (cpu = 0; cpu < c->nr_cpus; cpu++) {
			struct perf_event_attr a = attrs[k];

			a.size = sizeof(a);
			fd = syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
			if (fd >= 0) {
				c->pmu_fds[k * c->nr_cpus + cpu] = fd;
				opened++;
			} else if (errno != ENODEV) {	/* ENODEV: CPU offline */
				err = -errno;
				break;
			}
		}
	}
	if (!err && opened) {
		c->pmu_source = src;
		return 0;
	}
	pmu_close(c);
	why = err == -ENOENT || err == -EOPNOTSUPP ? "the machine has no hardware PMU" :
	      strerror(err ? -err : ENODEV);
	if (want == PMU_SOURCE_AUTO) {
		log_info("hardware counters unavailable (%s): LLC misses and CPI are not reported",
			 why);
		return 0;
	}
	log_err("cannot open %s counters: %s", src == PMU_SOURCE_SOFTWARE ? "software" : "hardware",
		why);
	return err ? err : -ENODEV;
}

/* Put the perf events into the BPF map. */
static int pmu_publish(struct collector *c)
{
	int mfd = bpf_map__fd(c->skel->maps.pmu);
	unsigned int i;

	for (i = 0; c->pmu_fds && i < PMU_NR * c->nr_cpus; i++) {
		if (c->pmu_fds[i] < 0)
			continue;
		if (bpf_map_update_elem(mfd, &i, &c->pmu_fds[i], BPF_ANY)) {
			log_err("cannot publish perf event %u to BPF: %s", i, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

enum pmu_source collector_pmu_source(const struct collector *c)
{
	return c->pmu_source;
}

static int check_prerequisites(void)
{
	if (geteuid() != 0) {
		log_err("must run as root: loading BPF needs CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		log_err("kernel has no BTF (/sys/kernel/btf/vmlinux): CO-RE needs CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	return 0;
}

/* Hand BPF the free slots and map the slot arrays; before attaching. */
static int slots_open(struct collector *c)
{
	int qfd = bpf_map__fd(c->skel->maps.free_slots);
	void *p;
	__u32 i;

	for (i = 1; i < c->nr_slots; i++) {
		if (bpf_map_update_elem(qfd, NULL, &i, 0)) {
			log_err("cannot fill the free container slots: %s", strerror(errno));
			return -errno;
		}
	}
	c->stats_len = (size_t)c->nr_cpus * c->nr_slots * sizeof(*c->stats);
	p = mmap(NULL, c->stats_len, PROT_READ, MAP_SHARED, bpf_map__fd(c->skel->maps.cg_cpu), 0);
	if (p == MAP_FAILED)
		goto fail;
	c->stats = p;
	c->hists_len = (size_t)c->nr_slots * sizeof(*c->hists);
	p = mmap(NULL, c->hists_len, PROT_READ, MAP_SHARED, bpf_map__fd(c->skel->maps.cg_hist), 0);
	if (p == MAP_FAILED)
		goto fail;
	c->hists = p;
	c->cpus_len = (size_t)c->nr_cpus * sizeof(*c->cpus);
	p = mmap(NULL, c->cpus_len, PROT_READ, MAP_SHARED, bpf_map__fd(c->skel->maps.cpus), 0);
	if (p == MAP_FAILED)
		goto fail;
	c->cpus = p;
	c->last = calloc(c->nr_slots, sizeof(*c->last));
	c->running_gen = calloc(c->nr_slots, sizeof(*c->running_gen));
	c->refs = calloc(c->nr_slots, sizeof(*c->refs));
	c->dump.keys = calloc(c->nr_slots, sizeof(*c->dump.keys));
	c->dump.vals = calloc(c->nr_slots, sizeof(*c->dump.vals));
	c->shist = calloc(c->nr_slots, sizeof(*c->shist));
	if (!c->refs || !c->dump.keys || !c->dump.vals || !c->shist || !c->last ||
	    !c->running_gen)
		return -ENOMEM;
	return 0;
fail:
	log_err("cannot map the collector's counters: %s", strerror(errno));
	return -errno;
}

/*
 * A CPU's clocks start at its first switch after attach; a task that keeps
 * its CPU (a hog alone on it) could leave it unseen for long. Visiting every
 * CPU makes each switch once, right away.
 */
static void prime_cpus(struct collector *c)
{
	cpu_set_t old, one;
	unsigned int cpu;

	if (sched_getaffinity(0, sizeof(old), &old))
		return;
	for (cpu = 0; cpu < c->nr_cpus && cpu < CPU_SETSIZE; cpu++) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		/* Offline or not allowed CPUs refuse: nothing to prime there. */
		if (!sched_setaffinity(0, sizeof(one), &one))
			sched_yield();
	}
	sched_setaffinity(0, sizeof(old), &old);
}

/*
 * The first read of fresh maps can stall for hundreds of ms (seen right after
 * another collector was torn down), which would skew the caller's first
 * window: read them once before handing the collector out.
 */
static void warm_up(struct collector *c)
{
	struct sample s = {};

	collector_sample(c, &s);
	sample_free(&s);
}

static const char *attach_name(enum attach_mode a)
{
	return a == ATTACH_TP_BTF ? "tp_btf" : a == ATTACH_RAW_TP ? "raw_tp" : "auto";
}

static const char *store_name(enum store_mode s)
{
	return s == STORE_TASK ? "storage" : s == STORE_HASH ? "hash" : "auto";
}

int collector_open(const struct collector_opts *o, struct collector **out)
{
	static const struct { enum attach_mode a; enum store_mode s; } modes[] = {
		{ ATTACH_TP_BTF, STORE_TASK },
		{ ATTACH_TP_BTF, STORE_HASH },
		{ ATTACH_RAW_TP, STORE_HASH },
	};
	struct collector *c;
	size_t i, tried = 0;
	int err;

	err = check_prerequisites();
	if (err)
		return err;
	libbpf_set_print(libbpf_print);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->nr_cpus = libbpf_num_possible_cpus();
	if ((int)c->nr_cpus <= 0 || c->nr_cpus > KOORD_MAX_CPUS) {
		log_err("unsupported number of possible CPUs: %d", (int)c->nr_cpus);
		free(c);
		return -ENOTSUP;
	}
	c->nr_slots = slots_for(o, c->nr_cpus);
	err = pmu_open(c, o->pmu_source);
	if (err) {
		free(c);
		return err;
	}
	/* Raw tracepoints give no BTF task pointer, so no task storage there. */
	err = -ENOTSUP;
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if ((o->attach != ATTACH_AUTO && o->attach != modes[i].a) ||
		    (o->store != STORE_AUTO && o->store != modes[i].s))
			continue;
		if (modes[i].s == STORE_TASK &&
		    libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) != 1) {
			log_info("no task storage in this kernel: tasks are kept in a hash map");
			continue;
		}
		load_refusal[0] = '\0';
		tried++;
		c->skel = load(o, c->nr_cpus, c->nr_slots, modes[i].a, modes[i].s,
			       c->pmu_source != PMU_SOURCE_OFF);
		if (!c->skel) {
			err = -errno;
			/* A fallback changes what runs on every switch: say so, and why. */
			log_info("loading as %s with task %s failed: %s%s%s%s",
				 attach_name(modes[i].a), store_name(modes[i].s), strerror(errno),
				 load_refusal[0] ? " (verifier: " : "", load_refusal,
				 load_refusal[0] ? ")" : "");
			if (err == -EPERM)
				break;
			continue;
		}
		c->attach = modes[i].a;
		c->store = modes[i].s;
		c->observe_fd = bpf_program__fd(modes[i].s == STORE_TASK ? c->skel->progs.observe_btf :
					      c->skel->progs.observe_raw);
		break;
	}
	if (!c->skel) {
		if (!tried)
			log_err("no way to load the BPF collector matches --attach %s --task-store %s "
				"on this kernel (raw_tp keeps tasks in a hash map; task storage needs "
				"a kernel that has it)", attach_name(o->attach), store_name(o->store));
		else if (err == -EPERM)
			log_err("loading BPF was refused (EPERM): BPF is not permitted here "
				"(lockdown, kernel.unprivileged_bpf_disabled or a seccomp filter)");
		else
			log_err("cannot load the BPF collector: %s (rerun with -v for the verifier log)",
				strerror(-err));
		pmu_close(c);
		free(c);
		return err;
	}
	err = slots_open(c);
	if (!err)
		err = pmu_publish(c);
	if (!err)
		err = attach_in_order(c->skel, c->attach == ATTACH_TP_BTF);
	if (err) {
		log_err("cannot attach the BPF collector: %s", strerror(-err));
		collector_close(c);
		return err;
	}
	snprintf(c->mode, sizeof(c->mode), "%s+task_%s",
		 attach_name(c->attach), store_name(c->store));
	prime_cpus(c);
	warm_up(c);
	*out = c;
	return 0;
}

void collector_close(struct collector *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	koord__destroy(c->skel);
	pmu_close(c);
	if (c->stats)
		munmap((void *)c->stats, c->stats_len);
	if (c->hists)
		munmap((void *)c->hists, c->hists_len);
	if (c->cpus)
		munmap((void *)c->cpus, c->cpus_len);
	free(c->refs);
	free(c->dump.keys);
	free(c->dump.vals);
	free(c->shist);
	free(c->pool[0].v);
	free(c->pool[1].v);
	free(c->last);
	free(c->running_gen);
	free(c->parts[0].v);
	free(c->parts[1].v);
	free(c);
}

const char *collector_mode(const struct collector *c)
{
	return c->mode;
}

void collector_map_usage(const struct collector *c, map_bytes_fn fn, void *ctx)
{
	unsigned long long v;
	char path[64], line[128];
	struct bpf_map *m;
	FILE *f;

	bpf_object__for_each_map(m, c->skel->obj) {
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", bpf_map__fd(m));
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "memlock: %llu", &v) == 1)
				fn(ctx, bpf_map__name(m), v);
		fclose(f);
	}
}

static void add_bytes(void *ctx, const char *name, unsigned long long bytes)
{
	*(unsigned long long *)ctx += bytes;
}

unsigned long long collector_map_bytes(const struct collector *c, unsigned int *slots)
{
	unsigned long long sum = 0;

	*slots = c->nr_slots;
	collector_map_usage(c, add_bytes, &sum);
	return sum;
}

unsigned int collector_nr_cpus(const struct collector *c)
{
	return c->nr_cpus;
}

void collector_forget_class(struct collector *c, __u64 cgid)
{
	bpf_map_delete_elem(bpf_map__fd(c->skel->maps.cg_class), &cgid);
}

int collector_set_classes(struct collector *c, const struct container_table *t)
{
	int fd = bpf_map__fd(c->skel->maps.cg_class);
	__u64 key, next, *stale = NULL;
	size_t i, nstale = 0, cap = 0;
	void *prev = NULL;
	__u32 cls;
	int err = 0;

	/* Forget ids that are no longer in the table. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (container_table_get(t, key))
			continue;
		if (nstale == cap) {
			__u64 *v = realloc(stale, (cap = cap ? cap * 2 : 64) * sizeof(*v));

			if (!v) {
				free(stale);
				return -ENOMEM;
			}
			stale = v;
		}
		stale[nstale++] = key;
	}
	for (i = 0; i < nstale; i++)
		bpf_map_delete_elem(fd, &stale[i]);
	free(stale);
	for (i = 0; i < t->n && !err; i++) {
		cls = t->v[i].ident.qos;
		if (!bpf_map_update_elem(fd, &t->v[i].id, &cls, BPF_ANY))
			continue;
		if (errno != E2BIG) {
			err = -errno;
			log_warn("cannot publish the class of %s: %s", t->v[i].path, strerror(errno));
			continue;
		}
		/* Over capacity is no reason to stop measuring: the rest count as unclassified. */
		log_warn("%zu of %zu cgroups do not fit the class map (2 x --max-containers + 64): "
			 "their tasks count as unclassified", t->n - i, t->n);
		break;
	}
	__atomic_add_fetch(&c->skel->bss->class_gen, 1, __ATOMIC_SEQ_CST);
	return err;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Add one CPU's entry of a container, with its on-CPU time there @cpu_ns, into its sample. */
static void fold(struct cg_sample *cs, const struct cg_cpu_stats *v, __u64 cpu_ns, __u64 epoch)
{
	unsigned int i;

	cs->s.cpu_ns += cpu_ns;
	cs->s.wait_count += v->wait_count;
	cs->s.wait_ns += v->wait_ns;
	if (v->wait_max > cs->s.wait_max)
		cs->s.wait_max = v->wait_max;
	for (i = 0; i < ST_NR; i++)
		cs->s.steal_ns[i] += v->steal_ns[i];
	cs->s.inflicted_online_ns += v->inflicted_online_ns;
	cs->s.inflicted_all_ns += v->inflicted_all_ns;
	for (i = 0; i < PMU_NR; i++)
		cs->s.pmu[i] += v->pmu[i];
	/* The epoch just closed, if this CPU saw a wait in it. */
	if (epoch_max_of(v, epoch) > cs->epoch_max)
		cs->epoch_max = epoch_max_of(v, epoch);
}

static int read_counters(struct collector *c, struct sample *s)
{
	int fd = bpf_map__fd(c->skel->maps.counters);
	__u64 *vals = calloc(c->nr_cpus, sizeof(*vals));
	__u32 k, cpu;

	if (!vals)
		return -ENOMEM;
	for (k = 0; k < CNT_NR; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (cpu = 0; cpu < c->nr_cpus; cpu++)
			s->counters[k] += vals[cpu];
	}
	free(vals);
	return 0;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct slot_ref *x = a, *y = b;

	return x->cgid < y->cgid ? -1 : x->cgid > y->cgid;
}

/* Dump cg_slot into c->dump; 0 or -errno. */
static int dump_slots(struct collector *c)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int fd = bpf_map__fd(c->skel->maps.cg_slot);
	struct slot_dump *d = &c->dump;
	size_t max = c->nr_slots;
	__u64 in_b = 0, out_b = 0;
	__u32 cnt;
	int err;

	d->n = 0;
	while (d->n < max) {
		cnt = max - d->n;
		err = bpf_map_lookup_batch(fd, d->n ? &in_b : NULL, &out_b, d->keys + d->n,
					   d->vals + d->n, &cnt, &opts);
		d->n += cnt;
		if (err) {
			if (errno == ENOENT)
				break;
			return -errno;
		}
		in_b = out_b;
	}
	return 0;
}

/*
 * cg_slot as refs sorted by container; returns the count or -errno. BPF
 * counts every change of the map: while it does not, the refs still hold
 * and the map is not read (at 10,000 containers the dump was a sixth of an
 * idle period).
 */
static long read_slots(struct collector *c)
{
	__u64 gen = __atomic_load_n(&c->skel->bss->slot_gen, __ATOMIC_ACQUIRE);
	size_t i;
	int err;

	if (gen + 1 == c->refs_gen)
		return c->nrefs;
	err = dump_slots(c);
	if (err)
		return err;
	c->nrefs = 0;
	for (i = 0; i < c->dump.n; i++)
		if (c->dump.vals[i] && c->dump.vals[i] < c->nr_slots)
			c->refs[c->nrefs++] = (struct slot_ref){ c->dump.keys[i], c->dump.vals[i] };
	qsort(c->refs, c->nrefs, sizeof(*c->refs), cmp_ref);
	c->refs_gen = gen + 1;	/* read before the dump: a change during it dumps again */
	return c->nrefs;
}

static __u64 clock_mono(void *ctx)
{
	return mono_ns();
}

/*
 * BPF charges a run when it ends; a task that keeps its CPU (a hog alone on
 * it) would show no CPU time until it is switched out. So a sample counts
 * each CPU's running stretch up to a moment read with the container's
 * on-CPU time there, under the CPU's switch count: a switch between this
 * and the reading of the counters cannot count the stretch twice.
 */
static void read_running(struct collector *c, struct sample *s, struct cpu_running *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU);
	unsigned int cpu;
	__u64 now = mono_ns(), last;

	s->running_unread = 0;
	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		/*
		 * Where the stretch is long, see what runs: a switch-in without
		 * sched_switch would give it to a task that left (a pinned hog,
		 * 0.45 s of a 0.5 s frame). Shorter ones cost no IPI; an offline
		 * CPU refuses it and has nothing running.
		 */
		last = __atomic_load_n(&c->cpus[cpu].last_switch, __ATOMIC_RELAXED);
		if (c->observe_fd >= 0 && last && now - last > OBSERVE_MIN_NS) {
			opts.cpu = cpu;
			if (bpf_prog_test_run_opts(c->observe_fd, &opts) && errno != ENXIO) {
				log_info("cannot run the observe program on CPU %u (%s): after a "
					 "switch the kernel did not report, a running stretch goes "
					 "to the task that left until the next switch", cpu,
					 strerror(errno));
				c->observe_fd = -1;
			}
		}
		if (cpu_running_read(&c->cpus[cpu], c->stats, cpu, c->nr_slots, clock_mono, NULL,
				     &r[cpu])) {
			s->running_unread++;
			log_debug("CPU %u kept switching while read: its running stretch is left "
				  "to the next sample", cpu);
		}
	}
}

/* Keep @n cells in this sample's pool; their offset there in @off. */
static int pool_keep(struct hist_pool *p, const struct hist_cell *cells, __u32 n, __u32 *off)
{
	if (hist_cells_reserve(&p->v, &p->cap, p->n + n))
		return -ENOMEM;
	if (n)
		memcpy(p->v + p->n, cells, n * sizeof(*cells));
	*off = p->n;
	p->n += n;
	return 0;
}

/*
 * @cs's histogram: the last sample's when the container has not waited
 * since (the same count, and all of it was in the histogram then), else
 * read from the mapped array. Either way kept for the next sample.
 */
static int read_hist(struct collector *c, const struct slot_ref *r, struct sample *s,
		     struct cg_sample *cs)
{
	struct slot_hist *h = &c->shist[r->slot];
	const struct hist_cell *cells;
	__u64 total = 0;
	__u32 i;
	int err;

	if (h->gen + 1 == c->gen && h->cgid == r->cgid && h->wait_count == cs->s.wait_count)
		err = sample_set_cells(s, cs, c->pool[!c->cur].v + h->off, h->n);
	else
		err = sample_set_hist(s, cs, c->hists[r->slot].buckets);
	if (err)
		return err;
	cells = sample_hist(s, cs);
	err = pool_keep(&c->pool[c->cur], cells, cs->nhist, &h->off);
	if (err)
		return err;
	for (i = 0; i < cs->nhist; i++)
		total += cells[i].count;
	/* BPF counts a wait before its bucket: one in flight is read next time */
	*h = (struct slot_hist){ r->cgid, total == cs->s.wait_count ? total : 0, c->gen,
				 h->off, cs->nhist };
	return 0;
}

/*
 * One container's counters, summed over CPUs into @cs, and its parts in
 * s->pc. 1, or 0 when the slot changed owner after @listed (the container
 * was removed meanwhile): its counters are not this container's.
 */
static int read_container(struct collector *c, const struct slot_ref *r,
			  const struct cpu_running *running, __u64 listed, __u64 epoch,
			  struct sample *s, struct cg_sample *cs)
{
	const struct cg_cpu_stats *v;
	size_t npc = s->npc;
	unsigned int cpu;
	__u64 cpu_ns;

	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		v = &c->stats[(size_t)cpu * c->nr_slots + r->slot];
		if (__atomic_load_n(&v->born_ns, __ATOMIC_ACQUIRE) > listed) {
			s->npc = npc;
			return 0;
		}
		/* Where it was running, its time up to the moment read with the stretch. */
		if (running[cpu].slot == r->slot && running[cpu].cgid == r->cgid)
			cpu_ns = running[cpu].cpu_ns;
		else if (running[cpu].rec_slot == r->slot && running[cpu].rec_cgid == r->cgid)
			cpu_ns = running[cpu].rec_cpu_ns;
		else
			cpu_ns = __atomic_load_n(&v->cpu_ns, __ATOMIC_RELAXED);
		fold(cs, v, cpu_ns, epoch);
		/* Parts are for pairing culprits with victims: none where both are 0. */
		if (!v->steal_ns[KC_BE] && !v->inflicted_online_ns)
			continue;
		s->pc[s->npc++] = (struct cg_cpu_part){
			.cgid = r->cgid, .cpu = cpu,
			.steal_be_ns = v->steal_ns[KC_BE],
			.inflicted_online_ns = v->inflicted_online_ns,
		};
	}
	/* A histogram with waits only: containers that never waited stay untouched. */
	if (cs->s.wait_count && read_hist(c, r, s, cs))
		return -ENOMEM;
	return 1;
}

/* Keep @cs's sums and its parts (the last @npc of s->pc) for the next sample. */
static int keep_last(struct collector *c, const struct slot_ref *r, const struct sample *s,
		     const struct cg_sample *cs, size_t npc)
{
	struct part_pool *p = &c->parts[c->cur];
	size_t cap = p->cap ? p->cap : 1024;
	void *v;

	if (p->n + npc > p->cap) {
		while (cap < p->n + npc)
			cap *= 2;
		v = realloc(p->v, cap * sizeof(*p->v));
		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	if (npc)	/* the pool may be unallocated yet: memcpy of NULL is undefined even for 0 */
		memcpy(p->v + p->n, s->pc + s->npc - npc, npc * sizeof(*p->v));
	c->last[r->slot] = (struct slot_last){ r->cgid, c->gen, cs->s, p->n, npc };
	p->n += npc;
	return 0;
}

/*
 * Is @r's container as at the last sample? Not when BPF touched it in the
 * epoch closed now (@e), the one before (a program that read the epoch
 * before the last sample and wrote after it) or the new one; not when it
 * runs on a CPU (its stretch grows untouched); not every READ_ALL_EVERY.
 */
static bool unchanged(const struct collector *c, const struct slot_ref *r, __u64 e)
{
	const struct slot_last *l = &c->last[r->slot];
	__u8 t = __atomic_load_n(&c->skel->bss->touched[r->slot & (TOUCH_SLOTS - 1)],
				 __ATOMIC_RELAXED);

	return c->gen % READ_ALL_EVERY && l->gen + 1 == c->gen && l->cgid == r->cgid &&
	       c->running_gen[r->slot] != c->gen && (__u8)(t - (__u8)(e - 1)) > 2;
}

/* @cs and its parts as at the last sample, kept again for the next one. */
static int from_last(struct collector *c, const struct slot_ref *r, struct sample *s,
		     struct cg_sample *cs)
{
	const struct slot_last *l = &c->last[r->slot];

	cs->s = l->s;
	cs->epoch_max = 0;	/* no wait ended since */
	cs->same = true;
	if (l->npc)
		memcpy(s->pc + s->npc, c->parts[!c->cur].v + l->pc_off, l->npc * sizeof(*s->pc));
	s->npc += l->npc;
	if (keep_last(c, r, s, cs, l->npc))
		return -ENOMEM;
	/* A histogram with waits only: containers that never waited stay untouched. */
	if (cs->s.wait_count && read_hist(c, r, s, cs))
		return -ENOMEM;
	return 0;
}

/* The last entry of @s is one read, not copied: listed in s->changed. 0 or -ENOMEM. */
static int note_changed(struct sample *s)
{
	size_t cap = s->changed_cap ? s->changed_cap * 2 : 256;
	void *v;

	if (s->nchanged == s->changed_cap) {
		v = realloc(s->changed, cap * sizeof(*s->changed));
		if (!v)
			return -ENOMEM;
		s->changed = v;
		s->changed_cap = cap;
	}
	s->changed[s->nchanged++] = s->n - 1;
	return 0;
}

/* One reading of everything into @s, closing @epoch's maxima; 0 or -errno. */
static int sample_once(struct collector *c, struct sample *s, __u64 epoch)
{
	struct cpu_running running[KOORD_MAX_CPUS];
	bool was_whole = c->listed_whole;
	struct cg_sample *cs;
	__u64 listed;
	long n, i;
	int err;

	s->n = 0;
	s->ncells = 0;
	s->read = 0;
	s->nchanged = 0;
	s->gen = c->gen;
	s->prev_gen = c->gen - 1;
	s->same_set = false;
	c->listed_whole = false;	/* until this one is done */
	c->pool[c->cur].n = 0;
	c->parts[c->cur].n = 0;
	memset(s->counters, 0, sizeof(s->counters));
	err = read_counters(c, s);
	if (err)
		return err;
	/* Before any entry is read: a slot cleared for reuse after it is stamped later. */
	listed = mono_ns();
	s->mono_ns = listed;
	read_running(c, s, running);
	for (i = 0; i < c->nr_cpus; i++) {
		if (running[i].slot < c->nr_slots)
			c->running_gen[running[i].slot] = c->gen;
		if (running[i].rec_slot < c->nr_slots)
			c->running_gen[running[i].rec_slot] = c->gen;
	}
	n = read_slots(c);
	if (n < 0)
		return n;
	free(s->pc);
	s->npc = 0;
	s->pc = calloc(n ? n * c->nr_cpus : 1, sizeof(*s->pc));
	if (!s->pc)
		return -ENOMEM;
	/* In cgid order, so the sample and its parts are sorted as they are built. */
	for (i = 0; i < n; i++) {
		const struct slot_ref *r = &c->refs[i];
		size_t npc = s->npc;

		cs = sample_add(s, r->cgid);
		if (!cs)
			return -ENOMEM;
		if (unchanged(c, r, epoch)) {
			err = from_last(c, r, s, cs);
			if (err)
				return err;
			continue;
		}
		s->read++;
		err = read_container(c, r, running, listed, epoch, s, cs);
		if (err < 0)
			return err;
		if (!err)
			s->n--;
		else if (keep_last(c, r, s, cs, s->npc - npc) || note_changed(s))
			return -ENOMEM;
	}
	s->mono_end_ns = mono_ns();
	s->pmu_source = c->pmu_source;
	/* every ref listed, as the last time from the same refs: the same containers */
	s->same_set = was_whole && c->listed_refs_gen == c->refs_gen && (size_t)n == s->n;
	c->listed_whole = (size_t)n == s->n;
	c->listed_refs_gen = c->refs_gen;
	return 0;
}

int collector_sample(struct collector *c, struct sample *s)
{
	__u64 epoch;

	/* This sample's histograms go to the other pool; the last one's are read from. */
	c->cur = !c->cur;
	c->gen++;
	/* Close the epoch first: its maxima are then final. */
	epoch = __atomic_fetch_add(&c->skel->bss->epoch, 1, __ATOMIC_SEQ_CST);
	return sample_once(c, s, epoch);
}

static int ringbuf_cb(void *ctx, void *data, size_t len)
{
	struct collector *c = ctx;

	if (len < sizeof(struct long_wait_event))
		return 0;
	return c->on_event(c->event_ctx, data);
}

int collector_watch_events(struct collector *c, long_wait_fn fn, void *ctx)
{
	c->on_event = fn;
	c->event_ctx = ctx;
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), ringbuf_cb, c, NULL);
	return c->rb ? 0 : -errno;
}

int collector_poll(struct collector *c, int timeout_ms)
{
	if (!c->rb)
		return -EINVAL;
	return ring_buffer__poll(c->rb, timeout_ms);
}

int collector_cpu_state(struct collector *c, unsigned int cpu, struct cpu_state *out)
{
	if (cpu >= c->nr_cpus)
		return -ENOENT;
	memcpy(out, &c->cpus[cpu], sizeof(*out));
	return 0;
}

const char *collector_event_name(unsigned int cnt)
{
	static const char *const kinds[CNT_NR] = {
		[CNT_SLOTS_FULL] = "container_slots_full",
		[CNT_TASK_FULL] = "task_map_full",
		[CNT_WAIT_UNSEEN_CPU] = "wait_unseen_cpu",
		[CNT_WAIT_STALE] = "wait_stale",
		[CNT_WAIT_STALE_DROPPED] = "wait_stale_dropped",
		[CNT_SWITCH_MISSED] = "switch_missed",
		[CNT_LONG_WAITS] = "long_wait",
		[CNT_EVENTS_DROPPED] = "long_wait_record_rate_limited",
		[CNT_EVENTS_RB_FULL] = "long_wait_record_ringbuf_full",
		[CNT_REACT_WAITS] = "react_wait",
	};

	return cnt < CNT_NR && kinds[cnt] ? kinds[cnt] : "unknown";
}
