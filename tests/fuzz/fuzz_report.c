// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A daemon's /api/containers as koord-top --from reads it; what parses renders again. */
#include "fuzz.h"
#include "report.h"
#include "report_parse.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_doc d = {};
	char err[256];
	size_t i;

	if (report_parse((const char *)data, size, &d, err, sizeof(err))) {
		if (d.w.n || d.t.n || !err[0])	/* refused: nothing kept, and why */
			abort();
		return 0;
	}
	for (i = 0; i < d.w.n; i++) {
		const struct container *c = container_table_get(&d.t, d.w.v[i].cgid);

		if (!c)		/* every container read is in the table */
			abort();
		json_object_put(report_container_json(&d.w.v[i], c));
	}
	report_doc_free(&d);
	return 0;
}
