// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The name is the element's first bytes, so a bare string is a key as good as an element. */
#include <stdlib.h>
#include <string.h>
#include "byname.h"

static int cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

void byname_sort(void *v, size_t n, size_t size)
{
	if (n)
		qsort(v, n, size, cmp);
}

const void *byname_find(const void *v, size_t n, size_t size, const char *name)
{
	return n ? bsearch(name, v, n, size, cmp) : NULL;
}
