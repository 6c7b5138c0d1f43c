// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "escape.h"
#include "log.h"

enum log_level log_level = LOG_LVL_INFO;
const char *log_prog = "koord";

/* A line longer than this is cut (and says so). */
#define LOG_MSG_MAX	4096

/*
 * One line per call, escaped and written with one write(2): cgroup names
 * are outside text (a terminal escape, a CR or a newline in one must not
 * forge or hide lines), and the daemon's threads log at once (a line put
 * out in pieces interleaved with another's).
 */
void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const char *const tag[] = { "error: ", "warning: ", "", "debug: " };
	char msg[LOG_MSG_MAX], line[4 * LOG_MSG_MAX + 256];
	size_t n, off = 0;
	va_list ap;
	ssize_t w;
	int len;

	if (lvl > log_level)
		return;
	va_start(ap, fmt);
	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	n = (size_t)snprintf(line, sizeof(line), "%s: %s", log_prog, tag[lvl]);
	if (n >= sizeof(line))
		n = 0;
	n += escape_text(msg, line + n, sizeof(line) - n - 16, true);
	if ((size_t)len >= sizeof(msg))
		n += (size_t)snprintf(line + n, sizeof(line) - n, " [cut]");
	line[n++] = '\n';
	while (off < n) {
		w = write(STDERR_FILENO, line + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		off += (size_t)w;
	}
}
