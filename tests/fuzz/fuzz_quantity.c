// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A Kubernetes quantity from a pod's requests. */
#include <math.h>
#include "fuzz.h"
#include "quantity.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	double v;

	if (!quantity_parse(s, &v) && !(isfinite(v) && v >= 0))
		abort();	/* what is accepted is a finite amount, never negative */
	free(s);
	return 0;
}
