// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kubelet's CPU manager checkpoint (the CPUs BE cpusets must not hold). */
#include "exclusive.h"
#include "fuzz.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cpu_manager_state s;
	cpu_set_t online, out;
	char err[256];

	CPU_ZERO(&online);
	for (int i = 0; i < 64; i++)
		CPU_SET(i, &online);
	if (cpu_manager_state_parse((const char *)data, size, &s, err, sizeof(err))) {
		if (s.is_static || CPU_COUNT(&s.exclusive) || !err[0])	/* refused: nothing, and why */
			abort();
		return 0;
	}
	cpu_manager_exclusive(&s, &online, &out);
	if (!s.is_static && CPU_COUNT(&out))
		abort();
	return 0;
}
