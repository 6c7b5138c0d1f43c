// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CFS quota files (cpu.max, cpu.cfs_quota_us, cpu.cfs_period_us): the first
 * byte picks v1 or v2. What parses must scale as act_quota_read does
 * without overflow (UBSan aborts on it).
 */
#include <errno.h>
#include <stdbool.h>
#include "cgfile.h"
#include "suppress.h"
#include "fuzz.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	long q, p;
	char *s;

	if (!size)
		return 0;
	s = fuzz_str(data + 1, size - 1);
	if (!quota_parse(s, data[0] & 1, &q, &p)) {
		if (!p)
			p = CFS_PERIOD_US;
		if (q < -1 || p < QUOTA_PERIOD_MIN_US || p > QUOTA_PERIOD_MAX_US)
			abort();
		if (q >= 0 && q * CFS_PERIOD_US / p < 0)
			abort();
	}
	p = quota_period_parse(s);
	if (p != -EINVAL && (p < QUOTA_PERIOD_MIN_US || p > QUOTA_PERIOD_MAX_US))
		abort();
	free(s);
	return 0;
}
