/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where each cgroup controller the daemon writes is mounted: v1 hierarchies
 * (cpu, cpuset, freezer, memory, each possibly co-mounted) and the unified
 * (v2) one. A container at relative path P lives at MOUNT/P in each.
 */
#ifndef KOORD_HIERARCHIES_H
#define KOORD_HIERARCHIES_H

#include <limits.h>
#include <stdio.h>

struct hierarchies {
	/* mount point of the hierarchy carrying each controller; "" when none */
	char cpu[PATH_MAX];
	char cpuset[PATH_MAX];
	char freezer[PATH_MAX];	/* the v1 freezer's, else the unified mount (cgroup.freeze) */
	char memory[PATH_MAX];
	/* the cgroup2 mount, "" when none: /sys/fs/cgroup(/unified), else the first */
	char unified[PATH_MAX];
	int cpu_version;	/* 1 or 2; 0 when none */
	int cpuset_version, memory_version;
};

/*
 * From a mountinfo stream: a v1 controller is where a cgroup mount's super
 * options name it; a controller listed in the cgroup2 root's
 * cgroup.controllers (read through @controllers_of, which tests replace) is
 * on the unified mount unless a v1 mount has it. A machine without cgroups
 * gives all "" and 0. Returns 0, or -EIO on a read error (@h then zeroed).
 */
int hierarchies_from_mountinfo(FILE *mountinfo, struct hierarchies *h,
			       int (*controllers_of)(const char *mnt, char *buf, size_t len));
/* The live machine's (/proc/self/mountinfo). */
int hierarchies_find(struct hierarchies *h);

/* Mount points a cgroup write may be below: one per controller the daemon writes. */
#define HIERARCHY_MOUNTS 5
/* @h's mount points that exist, into @out; returns how many. */
size_t hierarchies_mounts(const struct hierarchies *h, const char *out[HIERARCHY_MOUNTS]);

#endif
