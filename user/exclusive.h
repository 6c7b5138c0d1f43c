/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CPUs BE must not be given: those the kubelet's static CPU manager
 * gave containers of their own, and those LSE containers are bound to
 * (Koordinator's cpusuppress keeps both out of the BE cpuset).
 */
#ifndef KOORD_EXCLUSIVE_H
#define KOORD_EXCLUSIVE_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

/* The kubelet's CPU manager checkpoint, /var/lib/kubelet/cpu_manager_state. */
struct cpu_manager_state {
	bool is_static;		/* policyName "static": containers may hold CPUs of their own */
	cpu_set_t shared;	/* defaultCpuSet: where every other container runs */
	cpu_set_t exclusive;	/* the CPUs of its entries, the containers' own */
};

/*
 * Parse the checkpoint's JSON (entries by pod UID and container name, or by
 * container id as kubelets before 1.18 wrote them). 0, or -EINVAL with the
 * reason in @err; the "none" policy parses as not static.
 */
int cpu_manager_state_parse(const char *text, size_t len, struct cpu_manager_state *s, char *err,
			    size_t errlen);

/* The checkpoint is a few hundred bytes per container with CPUs of its own. */
#define CPU_MANAGER_STATE_MAX (1 << 20)

/*
 * Read and parse the checkpoint at @path: -ENOENT when there is none (no
 * CPU manager state: nothing is exclusive), other negative errnos with the
 * reason in @err.
 */
int cpu_manager_state_read(const char *path, struct cpu_manager_state *s, char *err, size_t errlen);

/*
 * The CPUs out of BE's reach under @s, among @online: its entries' and
 * those outside its shared pool (empty unless static).
 */
void cpu_manager_exclusive(const struct cpu_manager_state *s, const cpu_set_t *online,
			   cpu_set_t *out);

/*
 * Is a container's cpuset @cpus a binding (some but not all of @online)? An
 * LSE container not yet bound runs on every CPU and holds none of its own.
 */
bool cpuset_is_binding(const cpu_set_t *cpus, const cpu_set_t *online);

#endif
