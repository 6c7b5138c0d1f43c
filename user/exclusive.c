// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exclusive.h"
#include "jsondoc.h"
#include "suppress.h"

static int fail(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "cpu_manager_state: %s", what);
	return -EINVAL;
}

/* One entry's CPU list, added to @s->exclusive. */
static int add_entry(struct cpu_manager_state *s, json_object *v, char *err, size_t errlen)
{
	cpu_set_t cpus;

	if (!json_object_is_type(v, json_type_string) ||
	    cpuset_parse(json_object_get_string(v), &cpus))
		return fail(err, errlen, "an entry is not a CPU list");
	CPU_OR(&s->exclusive, &s->exclusive, &cpus);
	return 0;
}

static int parse_doc(json_object *root, struct cpu_manager_state *s, char *err, size_t errlen)
{
	json_object *policy, *shared, *entries = NULL;

	if (!json_object_object_get_ex(root, "policyName", &policy) ||
	    !json_object_is_type(policy, json_type_string))
		return fail(err, errlen, "no policyName");
	s->is_static = !strcmp(json_object_get_string(policy), "static");
	if (!s->is_static)
		return 0;
	if (!json_object_object_get_ex(root, "defaultCpuSet", &shared) ||
	    !json_object_is_type(shared, json_type_string) ||
	    cpuset_parse(json_object_get_string(shared), &s->shared))
		return fail(err, errlen, "the static policy without a defaultCpuSet CPU list");
	if (json_object_object_get_ex(root, "entries", &entries) &&
	    !json_object_is_type(entries, json_type_object) && !json_object_is_type(entries, json_type_null))
		return fail(err, errlen, "entries is not an object");
	if (!json_object_is_type(entries, json_type_object))
		return 0;
	json_object_object_foreach(entries, key, v) {
		(void)key;
		if (!json_object_is_type(v, json_type_object)) {	/* by container id */
			if (add_entry(s, v, err, errlen))
				return -EINVAL;
			continue;
		}
		json_object_object_foreach(v, name, cpus) {	/* by pod UID, then name */
			(void)name;
			if (add_entry(s, cpus, err, errlen))
				return -EINVAL;
		}
	}
	return 0;
}

int cpu_manager_state_parse(const char *text, size_t len, struct cpu_manager_state *s, char *err,
			    size_t errlen)
{
	json_object *root = json_doc_parse(text, len, err, errlen);
	int r;

	memset(s, 0, sizeof(*s));
	if (!root)
		return -EINVAL;
	r = parse_doc(root, s, err, errlen);
	json_object_put(root);
	if (r)
		memset(s, 0, sizeof(*s));
	return r;
}

int cpu_manager_state_read(const char *path, struct cpu_manager_state *s, char *err, size_t errlen)
{
	char *buf;
	size_t n;
	FILE *f;
	int r;

	memset(s, 0, sizeof(*s));
	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	buf = malloc(CPU_MANAGER_STATE_MAX + 1);
	n = buf ? fread(buf, 1, CPU_MANAGER_STATE_MAX + 1, f) : 0;
	r = !buf ? -ENOMEM : ferror(f) ? -EIO : n > CPU_MANAGER_STATE_MAX ? -EFBIG : 0;
	fclose(f);
	if (r)
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
	else
		r = cpu_manager_state_parse(buf, n, s, err, errlen);
	free(buf);
	return r;
}

void cpu_manager_exclusive(const struct cpu_manager_state *s, const cpu_set_t *online,
			   cpu_set_t *out)
{
	cpu_set_t outside;

	CPU_ZERO(out);
	if (!s->is_static)
		return;
	CPU_XOR(&outside, online, &s->shared);
	CPU_AND(&outside, &outside, online);
	CPU_OR(out, &s->exclusive, &outside);
	CPU_AND(out, out, online);
}

bool cpuset_is_binding(const cpu_set_t *cpus, const cpu_set_t *online)
{
	cpu_set_t in;

	CPU_AND(&in, cpus, online);
	return CPU_COUNT(&in) > 0 && CPU_COUNT(&in) < CPU_COUNT(online);
}
