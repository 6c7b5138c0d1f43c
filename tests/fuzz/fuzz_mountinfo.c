// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/self/mountinfo (mount points are chosen by whoever mounts): both readers. */
#include <stdio.h>
#include "cgroup.h"
#include "hierarchies.h"
#include "fuzz.h"

FUZZ_QUIET

static int controllers(const char *mnt, char *buf, size_t len)
{
	snprintf(buf, len, "cpuset cpu io memory pids");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cpu_hierarchy cpu;
	struct hierarchies h;
	FILE *f;

	if (!size)
		return 0;	/* fmemopen refuses an empty buffer */
	f = fmemopen((void *)data, size, "r");
	if (!f)
		abort();
	cpu_hierarchy_from_mountinfo(f, &cpu, controllers);
	rewind(f);
	hierarchies_from_mountinfo(f, &h, controllers);
	fclose(f);
	return 0;
}
