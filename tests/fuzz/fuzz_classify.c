// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cgroup path classification (container names come from whoever creates
 * cgroups): the first line is a --class rule, the rest a cgroup path.
 */
#include "classify.h"
#include "fuzz.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct class_rules rules = {};
	struct cg_identity id;
	char *s = fuzz_str(data, size), *path = strchr(s, '\n'), err[256];

	if (path) {
		*path++ = '\0';
		class_rules_add(&rules, s, err, sizeof(err));
	} else {
		path = s;
	}
	classify_path(path, &id);
	classify(&rules, path, &id);
	class_rules_free(&rules);
	free(s);
	return 0;
}
