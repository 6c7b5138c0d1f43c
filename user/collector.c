// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collector.h"
#include "koord.skel.h"
#include "log.h"

#define DEFAULT_MAX_CONTAINERS	4096
#define DEFAULT_LONG_WAIT_NS	5000000ull
#define DEFAULT_EVENTS_PER_SEC	100
#define MAX_CG_CPU_ENTRIES	(1u << 20)

struct collector {
	struct koord *skel;
	enum pmu_source pmu_source;	/* what the counters read, PMU_SOURCE_OFF if none */
	int *pmu_fds;			/* PMU_NR * nr_cpus perf events, -1 where none */
	struct ring_buffer *rb;
	long_wait_fn on_event;
	void *event_ctx;
	enum attach_mode attach;
	enum store_mode store;
	unsigned int nr_cpus;
	char mode[40];
	/*
	 * Where the maps are dumped, kept from sample to sample: sized for the
	 * maps' max entries, they would otherwise be allocated and zeroed
	 * (tens of MiB at 10,000 containers) every period.
	 */
	struct dump_buf {
		void *keys, *vals;
		size_t max;
	} stats_buf, hist_buf;
};

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	/* Failed attempts while probing modes are expected: their logs only with -v. */
	if (log_level < LOG_LVL_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
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
	bpf_program__set_autoload(s->progs.tp_free, tp_btf && hash);
	bpf_program__set_autoload(s->progs.raw_free, !tp_btf && hash);
}

/* Open, size and load the object for one mode; NULL with errno on failure. */
static struct koord *load(const struct collector_opts *o, unsigned int nr_cpus,
			  enum attach_mode attach, enum store_mode store, bool pmu_on)
{
	unsigned int maxc = o->max_containers ? o->max_containers : DEFAULT_MAX_CONTAINERS;
	unsigned long long cg_cpu = (unsigned long long)maxc * nr_cpus;
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
	s->rodata->long_wait_ns = o->long_wait_ns ? o->long_wait_ns : DEFAULT_LONG_WAIT_NS;
	s->rodata->events_per_sec = o->events_per_sec ? o->events_per_sec : DEFAULT_EVENTS_PER_SEC;
	s->rodata->pmu_on = pmu_on;
	bpf_map__set_max_entries(s->maps.pmu, PMU_NR * nr_cpus);
	if (hash) {
		bpf_map__set_type(s->maps.tasks, BPF_MAP_TYPE_HASH);
		bpf_map__set_map_flags(s->maps.tasks, 0);
		bpf_map__set_max_entries(s->maps.tasks, pid_cap());
	}
	bpf_map__set_max_entries(s->maps.cpus, nr_cpus);
	bpf_map__set_max_entries(s->maps.cg_cpu,
				 cg_cpu > MAX_CG_CPU_ENTRIES ? MAX_CG_CPU_ENTRIES : cg_cpu);
	bpf_map__set_max_entries(s->maps.cg_hist, maxc);
	bpf_map__set_max_entries(s->maps.cg_class, maxc);
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

int collector_open(const struct collector_opts *o, struct collector **out)
{
	static const struct { enum attach_mode a; enum store_mode s; } modes[] = {
		{ ATTACH_TP_BTF, STORE_TASK },
		{ ATTACH_TP_BTF, STORE_HASH },
		{ ATTACH_RAW_TP, STORE_HASH },
	};
	struct collector *c;
	int err = -ENOTSUP;
	size_t i;

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
	err = pmu_open(c, o->pmu_source);
	if (err) {
		free(c);
		return err;
	}
	/* Raw tracepoints give no BTF task pointer, so no task storage there. */
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if ((o->attach != ATTACH_AUTO && o->attach != modes[i].a) ||
		    (o->store != STORE_AUTO && o->store != modes[i].s))
			continue;
		if (modes[i].s == STORE_TASK &&
		    libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) != 1) {
			log_debug("no task storage in this kernel");
			continue;
		}
		c->skel = load(o, c->nr_cpus, modes[i].a, modes[i].s,
			       c->pmu_source != PMU_SOURCE_OFF);
		if (!c->skel) {
			err = -errno;
			log_debug("load as %s with task %s failed: %s",
				  modes[i].a == ATTACH_TP_BTF ? "tp_btf" : "raw_tp",
				  modes[i].s == STORE_TASK ? "storage" : "hash", strerror(errno));
			if (err == -EPERM)
				break;
			continue;
		}
		c->attach = modes[i].a;
		c->store = modes[i].s;
		break;
	}
	if (!c->skel) {
		if (err == -EPERM)
			log_err("loading BPF was refused (EPERM): BPF is not permitted here "
				"(lockdown, kernel.unprivileged_bpf_disabled or a seccomp filter)");
		else
			log_err("cannot load the BPF collector: %s (rerun with -v for the verifier log)",
				strerror(-err));
		pmu_close(c);
		free(c);
		return err;
	}
	err = pmu_publish(c);
	if (!err)
		err = koord__attach(c->skel);
	if (err) {
		log_err("cannot attach the BPF collector: %s", strerror(-err));
		collector_close(c);
		return err;
	}
	snprintf(c->mode, sizeof(c->mode), "%s+task_%s",
		 c->attach == ATTACH_TP_BTF ? "tp_btf" : "raw_tp",
		 c->store == STORE_TASK ? "storage" : "hash");
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
	free(c->stats_buf.keys);
	free(c->stats_buf.vals);
	free(c->hist_buf.keys);
	free(c->hist_buf.vals);
	free(c);
}

const char *collector_mode(const struct collector *c)
{
	return c->mode;
}

unsigned int collector_nr_cpus(const struct collector *c)
{
	return c->nr_cpus;
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
	for (i = 0; i < t->n; i++) {
		cls = t->v[i].ident.qos;
		if (bpf_map_update_elem(fd, &t->v[i].id, &cls, BPF_ANY)) {
			err = -errno;
			log_warn("cannot publish the class of %s: %s (more than --max-containers?)",
				 t->v[i].path, strerror(errno));
			break;
		}
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

/* Add one CPU's entry of a container into its sample. */
static void fold(struct cg_sample *cs, const struct cg_cpu_stats *v, __u64 epoch)
{
	unsigned int i;

	cs->s.cpu_ns += v->cpu_ns;
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
	/* The epoch just closed, if this CPU saw a wait in it (or after). */
	if ((v->epoch == epoch || v->epoch == epoch + 1) &&
	    v->epoch_max[epoch & 1] > cs->epoch_max)
		cs->epoch_max = v->epoch_max[epoch & 1];
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

/* Batch-read a whole hash map; *keys and *vals are allocated. Returns the count or -errno. */
/* Dump a hash map into @b (grown to the map's max entries once); returns the entries read. */
static long dump_map(int fd, size_t ksz, size_t vsz, size_t max, struct dump_buf *b)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u64 in = 0, out = 0;
	size_t n = 0;
	__u32 cnt;
	int err;

	if (!max)
		return 0;
	if (b->max < max) {
		/* zeroed once: valgrind cannot see the kernel fill them through bpf() */
		free(b->keys);
		free(b->vals);
		b->keys = calloc(max, ksz);
		b->vals = calloc(max, vsz);
		b->max = b->keys && b->vals ? max : 0;
		if (!b->max)
			return -ENOMEM;
	}
	for (;;) {
		cnt = max - n;
		if (!cnt)
			break;
		err = bpf_map_lookup_batch(fd, n ? &in : NULL, &out, (char *)b->keys + n * ksz,
					   (char *)b->vals + n * vsz, &cnt, &opts);
		n += cnt;
		if (err) {
			if (errno == ENOENT)
				break;
			return -errno;
		}
		in = out;
	}
	return n;
}

struct entry_ref {
	__u64 cgid;
	long idx;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct entry_ref *x = a, *y = b;

	return x->cgid < y->cgid ? -1 : x->cgid > y->cgid;
}

/*
 * BPF charges a run when it ends; a task that keeps its CPU (a hog alone on
 * it) would show no CPU time until it is switched out. So a sample also
 * counts each CPU's running stretch up to the sample's time, read just
 * before the maps: monotonic still, as the charge at switch-out covers the
 * same stretch.
 */
struct running {
	__u64 cgid;
	__u64 ns;
};

static void read_running(struct collector *c, __u64 now, struct running *r)
{
	struct cpu_state st;
	unsigned int cpu;

	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		r[cpu].cgid = 0;
		if (collector_cpu_state(c, cpu, &st) || !st.cur_cgid || !st.last_switch ||
		    now < st.last_switch)
			continue;
		r[cpu] = (struct running){ st.cur_cgid, now - st.last_switch };
	}
}

static int add_running(struct collector *c, struct sample *s, const struct running *r)
{
	struct cg_sample *cs;
	unsigned int cpu;

	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		if (!r[cpu].cgid)
			continue;
		cs = (struct cg_sample *)sample_find(s, r[cpu].cgid);
		if (!cs) {
			/* Running since before its first charge: a new entry. */
			cs = sample_add(s, r[cpu].cgid);
			if (!cs)
				return -ENOMEM;
			sample_sort(s);
			cs = (struct cg_sample *)sample_find(s, r[cpu].cgid);
		}
		cs->s.cpu_ns += r[cpu].ns;
	}
	return 0;
}

int collector_sample(struct collector *c, struct sample *s)
{
	struct running running[KOORD_MAX_CPUS];
	struct bpf_map *m = c->skel->maps.cg_cpu, *h = c->skel->maps.cg_hist;
	struct cg_cpu_key *keys;
	struct cg_cpu_stats *vals;
	struct cg_sample *cs;
	__u64 epoch, *hkeys;
	struct cg_hist *hvals;
	long n, i;
	struct entry_ref *order;
	int err;

	s->n = 0;
	memset(s->counters, 0, sizeof(s->counters));
	/* Close the epoch first: its maxima are then final. */
	epoch = __atomic_fetch_add(&c->skel->bss->epoch, 1, __ATOMIC_SEQ_CST);
	err = read_counters(c, s);
	s->mono_ns = mono_ns();
	read_running(c, s->mono_ns, running);
	if (err)
		return err;
	n = dump_map(bpf_map__fd(m), sizeof(*keys), sizeof(*vals), bpf_map__max_entries(m),
		     &c->stats_buf);
	if (n < 0)
		return n;
	keys = c->stats_buf.keys;
	vals = c->stats_buf.vals;
	/* Entries sorted by container make the sample sorted as it is built. */
	order = malloc((n ? n : 1) * sizeof(*order));
	if (!order) {
		err = -ENOMEM;
		n = 0;
	}
	for (i = 0; i < n; i++)
		order[i] = (struct entry_ref){ keys[i].cgid, i };
	qsort(order, n, sizeof(*order), cmp_ref);
	free(s->pc);
	s->npc = 0;
	s->pc = calloc(n ? n : 1, sizeof(*s->pc));
	if (!s->pc)
		err = -ENOMEM;
	for (cs = NULL, i = 0; !err && i < n; i++) {
		const struct cg_cpu_stats *v = &vals[order[i].idx];

		if (!cs || cs->cgid != order[i].cgid)
			cs = sample_add(s, order[i].cgid);
		if (!cs) {
			err = -ENOMEM;
			break;
		}
		fold(cs, v, epoch);
		s->pc[s->npc++] = (struct cg_cpu_part){
			.cgid = order[i].cgid, .cpu = keys[order[i].idx].cpu,
			.steal_be_ns = v->steal_ns[KC_BE],
			.inflicted_online_ns = v->inflicted_online_ns,
		};
	}
	/* Within a container, by CPU. */
	if (s->npc)
		qsort(s->pc, s->npc, sizeof(*s->pc), cg_cpu_part_cmp);
	free(order);
	if (err)
		return err;
	n = dump_map(bpf_map__fd(h), sizeof(*hkeys), sizeof(*hvals), bpf_map__max_entries(h),
		     &c->hist_buf);
	if (n < 0)
		return n;
	hkeys = c->hist_buf.keys;
	hvals = c->hist_buf.vals;
	for (i = 0; i < n; i++) {
		cs = (struct cg_sample *)sample_find(s, hkeys[i]);
		if (cs)
			memcpy(cs->hist, hvals[i].buckets, sizeof(cs->hist));
	}
	err = add_running(c, s, running);
	s->mono_end_ns = mono_ns();
	s->pmu_source = c->pmu_source;
	return err;
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
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.cpus), &cpu, out))
		return -errno;
	return 0;
}

static size_t count_keys(int fd, size_t ksz)
{
	char key[32], next[32];
	size_t n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, ksz);
		prev = key;
		n++;
	}
	return n;
}

int collector_map_entries(struct collector *c, size_t *cg_cpu, size_t *cg_hist)
{
	*cg_cpu = count_keys(bpf_map__fd(c->skel->maps.cg_cpu), sizeof(struct cg_cpu_key));
	*cg_hist = count_keys(bpf_map__fd(c->skel->maps.cg_hist), sizeof(__u64));
	return 0;
}
