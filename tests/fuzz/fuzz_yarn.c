// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A YARN container's name (a cgroup directory's, so anything but '/' and NUL). */
#include <stdio.h>
#include "fuzz.h"
#include "yarn.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct yarn_id id;
	char buf[96], *s = fuzz_str(data, size);

	if (!yarn_parse(s, &id)) {
		yarn_application_id(&id, buf, sizeof(buf));
		yarn_attempt_id(&id, buf, sizeof(buf));
	}
	free(s);
	return 0;
}
