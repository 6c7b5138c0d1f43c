// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include "log.h"

enum log_level log_level = LOG_LVL_INFO;
const char *log_prog = "koord";

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const char *const tag[] = { "error: ", "warning: ", "", "debug: " };
	va_list ap;

	if (lvl > log_level)
		return;
	fprintf(stderr, "%s: %s", log_prog, tag[lvl]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
