// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A memory cgroup's memory.stat (the batch capacity's input), v1 and v2 keys. */
#include "batch.h"
#include "fuzz.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long long b;
	char *s = fuzz_str(data, size);

	memory_stat_usage(s, false, &b);
	memory_stat_usage(s, true, &b);
	free(s);
	return 0;
}
