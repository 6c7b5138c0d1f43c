/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* FNV-1a, 64 bits: a cheap hash of a byte string, spread over every byte. */
#ifndef KOORD_FNV_H
#define KOORD_FNV_H

#include <stddef.h>

static inline unsigned long long fnv1a(const void *s, size_t len)
{
	const unsigned char *c = s;
	unsigned long long h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= c[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

#endif
