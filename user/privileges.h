/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Least privilege: once its BPF programs are loaded and attached, its perf
 * events open and its socket bound, the daemon keeps only the capabilities
 * it still uses (docs/security.md):
 *   CAP_DAC_OVERRIDE  cgroup files and the state dir not writable by root
 *                     as their owner (a delegated subtree, a stricter mode);
 *   CAP_KILL          eviction signals the tasks of a cgroup, whoever runs them;
 *   CAP_BPF           only where the kernel checks it for every bpf(2)
 *                     command (kernel.unprivileged_bpf_disabled on kernels
 *                     before 6.5), probed; CAP_SYS_ADMIN instead before 5.8.
 * Every other capability leaves the effective, permitted, inheritable,
 * ambient and bounding sets, and no_new_privs is set, so that the eviction
 * hook (execve'd as root) cannot gain any back.
 */
#ifndef KOORD_PRIVILEGES_H
#define KOORD_PRIVILEGES_H

#include <linux/types.h>

/*
 * Drop them (logging what is kept): 0, or a negative errno when the kernel
 * refused. Capabilities are per thread: call it before starting any.
 */
int privileges_drop(void);
/* The capabilities kept, as a mask of 1 << CAP_*; all ones before privileges_drop(). */
__u64 privileges_kept(void);

#endif
