// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* YARN NodeManager's containers (GET /ws/v1/node/containers). */
#include "fuzz.h"
#include "yarn_nm.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nm_list l;
	char err[256];
	size_t i;

	if (nm_parse((const char *)data, size, &l, err, sizeof(err)))
		return 0;
	for (i = 0; i < l.n; i++)
		if (nm_find(&l, l.v[i].id) == NULL)
			abort();
	nm_free(&l);
	return 0;
}
