// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Advise mode: koord-bpf writes nothing. Each period it reads the settings
 * of the BE cgroups (the roots and every BE container below them: wake-up
 * priority, weight, quota, cpuset) and, when another writer (koordlet's
 * reconcilers, an operator) changed one, judges the change as it judges
 * its own actions: the online waits of the windows before it against those
 * after. The verdict is logged and counted; nothing is rolled back.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "act.h"
#include "log.h"

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct observed *)a)->path, ((const struct observed *)b)->path);
}

/* One period's reading: the changes seen, and how many files were sorted before it. */
struct pass {
	char what[160];		/* the first change: "cpu.idle 0 -> 1 on /kubepods/besteffort" */
	int n;
	size_t sorted;		/* files added this period are appended, sorted at its end */
};

static struct observed *find(struct enforcer *e, const struct pass *p, const char *path)
{
	struct observed key = { .path = (char *)path };

	return p->sorted ? bsearch(&key, e->obs, p->sorted, sizeof(*e->obs), cmp_path) : NULL;
}

/* A file seen for the first time: its value is the baseline, no change. */
static void add(struct enforcer *e, const char *path, const char *value)
{
	struct observed *grown = realloc(e->obs, (e->nobs + 1) * sizeof(*e->obs));
	char *dup = strdup(path), *val = strdup(value);

	if (grown)
		e->obs = grown;
	if (!grown || !dup || !val) {
		free(dup);
		free(val);
		return;		/* not watched; a later period tries again */
	}
	e->obs[e->nobs++] = (struct observed){ .path = dup, .value = val, .seen = true };
}

static void read_one(struct enforcer *e, const char *path, struct pass *ch)
{
	const char *file = strrchr(path, '/');
	char buf[CPUSET_TEXT_MAX], *val;
	struct observed *o;

	if (writer_read(e->w, path, buf, sizeof(buf)))
		return;		/* gone or unreadable: no change to judge */
	o = find(e, ch, path);
	if (!o) {
		add(e, path, buf);
		return;
	}
	o->seen = true;
	if (!strcmp(o->value, buf))
		return;
	if (!ch->n++)
		snprintf(ch->what, sizeof(ch->what), "%s %.24s -> %.24s on %.*s", file + 1, o->value,
			 buf, (int)(file - path), path);
	val = strdup(buf);
	if (val) {		/* else compared with the old value again next period */
		free(o->value);
		o->value = val;
	}
}

static void read_cgroup(struct enforcer *e, const char *rel, struct pass *ch)
{
	static const char *const v1[] = { "cpu.idle", "cpu.shares", "cpu.cfs_quota_us" };
	static const char *const v2[] = { "cpu.idle", "cpu.weight", "cpu.max" };
	const char *const *files = e->h->cpu_version == 2 ? v2 : v1;
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < 3; i++)
		if (!act_path(path, sizeof(path), e->h->cpu, rel, files[i]))
			read_one(e, path, ch);
	if (!act_cpuset_file(e, rel, path, sizeof(path)))
		read_one(e, path, ch);
}

static bool under_a_root(const struct enforcer *e, const char *path)
{
	size_t i;

	for (i = 0; i < e->nroots; i++)
		if (act_under(path, e->roots[i]))
			return true;
	return false;
}

/*
 * Files of cgroups that are gone: forgotten (a new one at the path is a
 * baseline again); the new ones sorted in.
 */
static void sweep(struct enforcer *e)
{
	size_t i, j;

	for (i = j = 0; i < e->nobs; i++) {
		if (!e->obs[i].seen) {
			free(e->obs[i].path);
			free(e->obs[i].value);
			continue;
		}
		e->obs[i].seen = false;
		e->obs[j++] = e->obs[i];
	}
	e->nobs = j;
	qsort(e->obs, e->nobs, sizeof(*e->obs), cmp_path);
}

void act_observe(struct enforcer *e, const struct container_table *t)
{
	struct pass ch = { .sorted = e->nobs };
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i].ident.qos == KC_BE && under_a_root(e, t->v[i].path))
			read_cgroup(e, t->v[i].path, &ch);
	sweep(e);
	if (!ch.n)
		return;
	if (e->eff.pending) {
		log_info("observed: %s%s by another writer while the last change is measured: "
			 "judged with it", ch.what, ch.n > 1 ? " (and more)" : "");
		return;
	}
	if (ch.n > 1)
		snprintf(ch.what + strlen(ch.what), sizeof(ch.what) - strlen(ch.what),
			 " (and %d more)", ch.n - 1);
	act_begin(e, ACT_OBSERVED, 0, "%s by another writer", ch.what);
}

void act_observe_free(struct enforcer *e)
{
	size_t i;

	for (i = 0; i < e->nobs; i++) {
		free(e->obs[i].path);
		free(e->obs[i].value);
	}
	free(e->obs);
	e->obs = NULL;
	e->nobs = 0;
}
