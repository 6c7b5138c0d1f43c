// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The config file (--config, SIGHUP): config_parse on any bytes. */
#include "config.h"
#include "fuzz.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct koord_config c = {};
	char err[512];

	config_parse("fuzz.json", (const char *)data, size, &c, err, sizeof(err));
	if (!memchr(err, '\0', sizeof(err)))
		abort();
	config_free(&c);
	return 0;
}
