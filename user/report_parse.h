/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The other way round from report.c: a window and its containers read back
 * from the JSON of koord-interference's schema, as a daemon serves it at
 * /api/containers (koord-top --from).
 */
#ifndef KOORD_REPORT_PARSE_H
#define KOORD_REPORT_PARSE_H

#include <stddef.h>
#include "cgroup.h"
#include "window.h"

struct report_doc {
	struct window w;		/* dur_ns, the containers' numbers (no histograms) */
	struct container_table t;	/* their paths and identities */
	char root[256];			/* the daemon's hierarchy */
	int version;			/* its cgroup version */
	char mode[64];			/* its collector's mode */
};

/*
 * Parse @text: 0, or -EINVAL (not JSON, or not the schema: the first field
 * at fault in @err), -ENOMEM. @d (zeroed before its first use) is freed
 * first and valid either way.
 */
int report_parse(const char *text, size_t len, struct report_doc *d, char *err, size_t errlen);
void report_doc_free(struct report_doc *d);

#endif
