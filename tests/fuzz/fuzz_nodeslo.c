// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The API server's NodeSLO (--nodeslo): the object, then its spec over the defaults. */
#include "config.h"
#include "fuzz.h"
#include "nodeslo.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nodeslo_doc d;
	struct koord_config c;
	char err[512];

	if (nodeslo_parse((const char *)data, size, &d, err, sizeof(err)))
		return 0;
	if (d.len != size || !d.name[0] || memcmp(d.text, data, size))
		abort();
	if (!config_parse_nodeslo(d.name, d.text, d.len, NULL, &c, err, sizeof(err)) &&
	    c.period_s != 1)	/* koordBPF is never the NodeSLO's */
		abort();
	config_free(&c);
	nodeslo_doc_free(&d);
	return 0;
}
