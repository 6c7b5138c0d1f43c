/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Arrays of structs whose first member is a NUL-terminated name (char[]): sorted and searched by it. */
#ifndef KOORD_BYNAME_H
#define KOORD_BYNAME_H

#include <stddef.h>

void byname_sort(void *v, size_t n, size_t size);
/* The element named @name in sorted @v, or NULL. */
const void *byname_find(const void *v, size_t n, size_t size, const char *name);

#endif
