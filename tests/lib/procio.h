/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What this process has written, for the journal's test and bench (no library needed). */
#ifndef KOORD_PROCIO_H
#define KOORD_PROCIO_H

#include <stdio.h>

/* Bytes written through write(2) and its kin so far ("wchar" of /proc/self/io); 0 unknown. */
static inline unsigned long long proc_self_wchar(void)
{
	unsigned long long v = 0;
	char line[128];
	FILE *f = fopen("/proc/self/io", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "wchar: %llu", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

#endif
