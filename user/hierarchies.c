/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where each controller the daemon writes is mounted. Lines are split by the
 * mountinfo parser cgroup.c uses for the cpu hierarchy, so both read the
 * same fields the same way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cgroup.h"
#include "hierarchies.h"

/* The usual cgroup2 mounts: pure v2, and systemd's hybrid layout. */
static bool standard_unified(const char *point)
{
	return !strcmp(point, "/sys/fs/cgroup") || !strcmp(point, "/sys/fs/cgroup/unified");
}

/* First v1 mount naming @ctl in its super options wins (later ones are binds). */
static void take_v1(char *dst, int *version, const struct mount_entry *m, const char *ctl)
{
	if (dst[0] || !list_has_word(m->super_opts, ctl, ","))
		return;
	strcpy(dst, m->point);
	if (version)
		*version = 1;
}

/* A controller no v1 mount has goes to the unified mount when its root lists it. */
static void take_v2(char *dst, int *version, const char *unified, const char *ctl,
		    const char *controllers)
{
	if (dst[0] || !list_has_word(controllers, ctl, " \t\n"))
		return;
	strcpy(dst, unified);
	*version = 2;
}

int hierarchies_from_mountinfo(FILE *mountinfo, struct hierarchies *h,
			       int (*controllers_of)(const char *mnt, char *buf, size_t len))
{
	struct mount_entry m;
	char ctl[512];
	char *line = NULL;
	size_t cap = 0;

	memset(h, 0, sizeof(*h));
	while (getline(&line, &cap, mountinfo) >= 0) {
		/* A mount point that does not fit is skipped, never cut. */
		if (!mountinfo_parse_line(line, &m) || strlen(m.point) >= sizeof(h->cpu))
			continue;
		if (!strcmp(m.fstype, "cgroup2")) {
			/* Another cgroup2 mount (a container's, a bind) loses to the usual ones. */
			if (!h->unified[0] || (standard_unified(m.point) && !standard_unified(h->unified)))
				strcpy(h->unified, m.point);
		} else if (!strcmp(m.fstype, "cgroup")) {
			take_v1(h->cpu, &h->cpu_version, &m, "cpu");
			take_v1(h->cpuset, &h->cpuset_version, &m, "cpuset");
			take_v1(h->freezer, NULL, &m, "freezer");
			take_v1(h->memory, &h->memory_version, &m, "memory");
		}
	}
	free(line);
	/* A cut-short read could miss mounts: report it rather than half an answer. */
	if (ferror(mountinfo)) {
		memset(h, 0, sizeof(*h));
		return -EIO;
	}
	if (!h->unified[0])
		return 0;
	if (controllers_of && !controllers_of(h->unified, ctl, sizeof(ctl))) {
		take_v2(h->cpu, &h->cpu_version, h->unified, "cpu", ctl);
		take_v2(h->cpuset, &h->cpuset_version, h->unified, "cpuset", ctl);
		take_v2(h->memory, &h->memory_version, h->unified, "memory", ctl);
	}
	/* v2 freezes without a controller (cgroup.freeze in every non-root cgroup). */
	if (!h->freezer[0])
		strcpy(h->freezer, h->unified);
	return 0;
}

int hierarchies_find(struct hierarchies *h)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int r;

	if (!f)
		return -errno;
	r = hierarchies_from_mountinfo(f, h, cgroup_read_controllers);
	fclose(f);
	return r;
}

size_t hierarchies_mounts(const struct hierarchies *h, const char *out[HIERARCHY_MOUNTS])
{
	const char *all[HIERARCHY_MOUNTS] = { h->cpu, h->cpuset, h->freezer, h->memory, h->unified };
	size_t n = 0;

	for (size_t i = 0; i < HIERARCHY_MOUNTS; i++)
		if (*all[i])
			out[n++] = all[i];
	return n;
}
