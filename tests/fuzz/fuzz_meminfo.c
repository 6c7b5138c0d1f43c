// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/meminfo text (memory eviction's input). */
#include "evict_policy.h"
#include "fuzz.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long long total, avail;
	char *s = fuzz_str(data, size);

	meminfo_parse(s, &total, &avail);
	free(s);
	return 0;
}
