/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the libFuzzer harnesses share (tests/fuzz/run.sh runs them). */
#ifndef KOORD_FUZZ_H
#define KOORD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The parsers log their refusals; a fuzzer would drown in them. */
#define FUZZ_QUIET							\
int LLVMFuzzerInitialize(int *argc, char ***argv)			\
{									\
	log_level = LOG_LVL_ERR;					\
	return 0;							\
}

/* @data as a NUL-terminated string (free it): most parsers take C strings. */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
