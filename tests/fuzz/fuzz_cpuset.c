// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cpuset.cpus text: whatever parses must format and parse back to the same set. */
#include <sched.h>
#include "suppress.h"
#include "fuzz.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size), buf[8192];
	cpu_set_t a, b;

	if (!cpuset_parse(s, &a)) {
		if (cpuset_format(&a, buf, sizeof(buf)) < 0 || cpuset_parse(buf, &b) ||
		    !CPU_EQUAL(&a, &b))
			abort();
	}
	free(s);
	return 0;
}
