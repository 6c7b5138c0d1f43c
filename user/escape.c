// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>
#include "escape.h"

size_t utf8_len(const unsigned char *s)
{
	unsigned int c = s[0], n, i, cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong, surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A printable sequence's length: C1 controls (U+0080..U+009F, 0xc2 0x80..0x9f) are not. */
static size_t utf8_seq(const unsigned char *s)
{
	size_t n = utf8_len(s);

	return n == 2 && s[0] == 0xc2 && s[1] <= 0x9f ? 0 : n;
}

size_t escape_text(const char *in, char *out, size_t outlen, bool utf8)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t n = 0, k;

	if (!outlen)
		return 0;
	while (*s) {
		char tmp[8];
		const char *p = tmp;

		k = 1;
		if (*s == '\\')
			p = "\\\\";
		else if (*s == '\n')
			p = "\\n";
		else if (*s < 0x20 || *s == 0x7f)
			snprintf(tmp, sizeof(tmp), "\\x%02x", *s);
		else if (*s < 0x80) {
			tmp[0] = *s;
			tmp[1] = '\0';
		} else if (utf8 && (k = utf8_seq(s))) {
			memcpy(tmp, s, k);
			tmp[k] = '\0';
		} else {
			k = 1;
			snprintf(tmp, sizeof(tmp), "\\x%02x", *s);
		}
		if (n + strlen(p) >= outlen)
			break;
		memcpy(out + n, p, strlen(p));
		n += strlen(p);
		s += k;
	}
	out[n] = '\0';
	return n;
}
