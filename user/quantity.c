// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * <quantity> ::= <signedNumber><suffix>, <suffix> ::= <binarySI> |
 * <decimalExponent> | <decimalSI> (resource.Quantity). "1E" is an exa, "1E3"
 * an exponent: the exponent form needs digits after the letter.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "quantity.h"

static const struct {
	const char *suffix;
	double mult;
} suffixes[] = {
	{ "Ki", 0x1p10 }, { "Mi", 0x1p20 }, { "Gi", 0x1p30 }, { "Ti", 0x1p40 },
	{ "Pi", 0x1p50 }, { "Ei", 0x1p60 },
	{ "n", 1e-9 }, { "u", 1e-6 }, { "m", 1e-3 }, { "", 1 }, { "k", 1e3 }, { "M", 1e6 },
	{ "G", 1e9 }, { "T", 1e12 }, { "P", 1e15 }, { "E", 1e18 },
};

/* Digits with at most one '.', and at least one digit; the length, 0 when not a number. */
static size_t number_len(const char *s)
{
	size_t i = 0, digits = 0;
	bool dot = false;

	for (;; i++) {
		if (isdigit((unsigned char)s[i]))
			digits++;
		else if (s[i] == '.' && !dot)
			dot = true;
		else
			break;
	}
	return digits ? i : 0;
}

int quantity_parse(const char *s, double *out)
{
	const char *p = s + (*s == '+' || *s == '-');
	size_t n = number_len(p), i;
	double v;
	char *end;

	if (!n || *s == '-')
		return -EINVAL;
	v = strtod(s, &end);	/* reads the number and, with digits after it, e/E<exp> */
	if (end < p + n)
		return -EINVAL;
	if (end > p + n) {	/* an exponent (strtod also reads hex: not here); nothing after it */
		if ((p[n] != 'e' && p[n] != 'E') || *end || !isfinite(v))
			return -EINVAL;
		*out = v;
		return 0;
	}
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (!strcmp(end, suffixes[i].suffix)) {
			v *= suffixes[i].mult;
			if (!isfinite(v))
				return -EINVAL;
			*out = v;
			return 0;
		}
	}
	return -EINVAL;
}
