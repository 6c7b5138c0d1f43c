/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finding the cgroup hierarchy that carries the cpu controller, and walking it. */
#ifndef KOORD_CGROUP_H
#define KOORD_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "classify.h"

struct cpu_hierarchy {
	char root[PATH_MAX];	/* mount point, e.g. /sys/fs/cgroup/cpu */
	int version;		/* 1 (v1 cpu controller) or 2 (unified) */
};

/*
 * Read a mountinfo stream and pick the hierarchy that carries cpu: cgroup2
 * when "cpu" is listed in its root's cgroup.controllers (read through
 * @controllers_of, which tests replace), otherwise the v1 mount whose super
 * options name "cpu" (alone or co-mounted, e.g. "cpu,cpuacct").
 * Returns 0, -ENOENT when no hierarchy carries cpu, or -EIO on a read error.
 */
/* Whether @list, split at any of @seps, holds @word as a whole item. */
bool list_has_word(const char *list, const char *word, const char *seps);

struct mount_entry {
	char *point;		/* unescaped */
	char *fstype;
	char *super_opts;
};
/*
 * proc(5): "id parent maj:min root point opts [optional...] - fstype source
 * super_opts". Fields are split in place; false for a malformed line.
 */
bool mountinfo_parse_line(char *line, struct mount_entry *m);
/* A cgroup2 mount's root cgroup.controllers into @buf (one read, NUL-terminated). */
int cgroup_read_controllers(const char *mnt, char *buf, size_t len);

int cpu_hierarchy_from_mountinfo(FILE *mountinfo, struct cpu_hierarchy *out,
				 int (*controllers_of)(const char *mnt, char *buf, size_t len));

/* The live machine's: /proc/self/mountinfo, or @override when not NULL. */
int cpu_hierarchy_find(const char *override, struct cpu_hierarchy *out);

struct container {
	unsigned long long id;	/* kernfs id: the directory's inode number */
	char *path;		/* relative to the hierarchy root, "/" for the root */
	struct cg_identity ident;
};

/* All cgroups of a hierarchy, indexed by id (open addressing). */
struct container_table {
	struct container *v;
	size_t n, cap;
	size_t *index;		/* slots into v, SIZE_MAX = empty */
	size_t index_cap;
	/* new at every change (a walk, an agent's names): what is derived from it is kept by it */
	unsigned long long gen;
};

/*
 * The walk holds one open directory per level; deeper cgroups (real trees are
 * a dozen levels at most) are skipped, so a hostile tree cannot exhaust fds.
 */
#define CGROUP_SCAN_MAX_DEPTH 128

/*
 * Walk @root and fill @t (cleared first; zero-initialise it before the first
 * scan) with every cgroup, classified with @rules. Symlinks are never
 * followed below @root, nor other filesystems mounted inside it. Directories
 * that vanish or cannot be read during the walk, or lie deeper than
 * CGROUP_SCAN_MAX_DEPTH, are skipped (counted in *@skipped when not NULL);
 * one that cannot be read is still recorded, since its id is known, but
 * nothing below it is. Returns 0, or a negative errno when @root itself
 * cannot be read or on resource exhaustion (-ENOMEM, -EMFILE).
 */
int container_table_scan(struct container_table *t, const char *root,
			 const struct class_rules *rules, size_t *skipped);
const struct container *container_table_get(const struct container_table *t,
					    unsigned long long id);
void container_table_free(struct container_table *t);
/* @t's entries were changed in place: a new gen. */
void container_table_changed(struct container_table *t);
/*
 * @t (freed first) made of the @n containers of @v, a malloc'ed array whose
 * paths are malloc'ed: @t owns them from now on, also on failure. 0 or -ENOMEM.
 */
int container_table_adopt(struct container_table *t, struct container *v, size_t n);
/*
 * @c as logs name it: its path, then "(namespace/pod/container)" as far as
 * the kubelet named it. Returns @buf.
 */
const char *container_label(const struct container *c, char *buf, size_t len);

#endif
