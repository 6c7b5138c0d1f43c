// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The journal in stateDir (replayed at start: a corrupt one must be refused,
 * never half-loaded). Every entry loaded must be an absolute path, found by
 * its path (the index holds through the lines' forgets), and a restore must
 * judge it sanely: its original in place, what was written ours.
 */
#include "journal.h"
#include "fuzz.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct journal j;
	char err[256];
	int ret;

	journal_init(&j);
	ret = journal_parse(&j, (const char *)data, size, err, sizeof(err));
	if (ret && j.n)
		abort();	/* all or nothing */
	for (size_t i = 0; i < j.n; i++) {
		const char *p = j.v[i].path, *d = strstr(p, "/..");

		if (p[0] != '/' || (d && (d[3] == '/' || !d[3])))
			abort();
		if (journal_find(&j, p) != &j.v[i])
			abort();
		if (journal_judge(&j.v[i], j.v[i].value) != JOURNAL_IN_PLACE)
			abort();
		if (j.v[i].written && !journal_same(j.v[i].written, j.v[i].value) &&
		    journal_judge(&j.v[i], j.v[i].written) != JOURNAL_RESTORE)
			abort();
	}
	journal_close(&j);
	return 0;
}
