/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Loading, attaching and reading the scheduler collector (bpf/sched.bpf.c). */
#ifndef KOORD_COLLECTOR_H
#define KOORD_COLLECTOR_H

#include <stdbool.h>
#include "cgroup.h"
#include "window.h"

enum attach_mode { ATTACH_AUTO, ATTACH_TP_BTF, ATTACH_RAW_TP };
enum store_mode { STORE_AUTO, STORE_TASK, STORE_HASH };

struct collector_opts {
	const struct cpu_hierarchy *hier;
	enum attach_mode attach;
	enum store_mode store;
	unsigned int max_containers;	/* 0: default */
	__u64 long_wait_ns;		/* long-wait event threshold; 0: default 5 ms */
	__u64 react_wait_ns;		/* records of shorter waits behind unclassified containers; 0: none */
	unsigned int events_per_sec;	/* per container and CPU; 0: default 100 */
	enum pmu_source pmu_source;	/* OFF (0), AUTO: hardware where there is a PMU */
	/* Tests only: the switches of this container the kernel "did not report" (koord.h). */
	__u64 hide_cgid;
	enum koord_hide_side hide_side;
};

/* Called for each long-wait record; a negative return stops the poll. */
typedef int (*long_wait_fn)(void *ctx, const struct long_wait_event *ev);

struct collector;

/*
 * Check prerequisites (root, BTF), load and attach. With AUTO modes the best
 * the kernel takes is used: tp_btf with task storage, then tp_btf with a
 * task hash, then raw_tp. Returns 0 or a negative errno, the reason logged.
 */
int collector_open(const struct collector_opts *o, struct collector **out);
void collector_close(struct collector *c);

/* "tp_btf+task_storage", "raw_tp+task_hash", ... */
const char *collector_mode(const struct collector *c);
/*
 * The bytes the maps hold, as the kernel counts them (each map's fdinfo
 * "memlock"; charged to the loader's memory cgroup since 5.11), and the
 * container slots they were sized for.
 */
unsigned long long collector_map_bytes(const struct collector *c, unsigned int *slots);
/* The same map by map: @fn gets each map's name and bytes. */
typedef void (*map_bytes_fn)(void *ctx, const char *name, unsigned long long bytes);
void collector_map_usage(const struct collector *c, map_bytes_fn fn, void *ctx);

/* Publish the classes of @t to BPF (ids not in @t become unclassified). */
int collector_set_classes(struct collector *c, const struct container_table *t);
/* Drop the class of @cgid (a cgroup found gone after its class was published). */
void collector_forget_class(struct collector *c, __u64 cgid);

/* Read every counter into @s (cleared first) and start a new max epoch. */
int collector_sample(struct collector *c, struct sample *s);

/* Deliver long-wait records to @fn from now on (collector_poll drives it). */
int collector_watch_events(struct collector *c, long_wait_fn fn, void *ctx);
/* Wait up to @timeout_ms for records; returns how many were handled or -errno (-EINTR on a signal). */
int collector_poll(struct collector *c, int timeout_ms);

/* What the counters read: PMU_SOURCE_OFF when there are none. */
enum pmu_source collector_pmu_source(const struct collector *c);

/* The name of BPF counter @cnt (enum koord_counter), e.g. "container_slots_full". */
const char *collector_event_name(unsigned int cnt);

/* The per-CPU state (waiting-task counts), for invariant checks. */
int collector_cpu_state(struct collector *c, unsigned int cpu, struct cpu_state *out);
unsigned int collector_nr_cpus(const struct collector *c);

#endif
