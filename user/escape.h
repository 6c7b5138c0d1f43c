/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Outside text (cgroup names above all) made safe for a terminal or a log. */
#ifndef KOORD_ESCAPE_H
#define KOORD_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * @in with backslash as "\\", control characters (C0, DEL and, in UTF-8,
 * C1) as "\n" or "\xNN", bytes that are not valid UTF-8 (every byte >= 0x80
 * when !@utf8) as "\xNN": no escape sequence, carriage return or line break
 * of its own reaches the reader. Cut at a whole character to fit @outlen;
 * always terminated; returns the length written.
 */
size_t escape_text(const char *in, char *out, size_t outlen, bool utf8);

/* Length of the valid UTF-8 sequence at @s (NUL-terminated), 0 when it is not one. */
size_t utf8_len(const unsigned char *s);

#endif
