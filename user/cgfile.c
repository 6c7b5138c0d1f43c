// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cgfile.h"

/* A decimal in [min, max] at *@s, advancing past it; -EINVAL otherwise. */
static int number(const char **s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)**s) && **s != '-')
		return -EINVAL;
	errno = 0;
	v = strtol(*s, &end, 10);
	if (errno || end == *s || v < min || v > max)
		return -EINVAL;
	*s = end;
	*out = v;
	return 0;
}

static bool only_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return !*s;
}

long quota_period_parse(const char *text)
{
	long p;

	if (number(&text, QUOTA_PERIOD_MIN_US, QUOTA_PERIOD_MAX_US, &p) || !only_space(text))
		return -EINVAL;
	return p;
}

int quota_parse(const char *text, bool v2, long *quota, long *period)
{
	long q, p = 0;

	if (v2 && !strncmp(text, "max", 3)) {
		q = -1;
		text += 3;
	} else if (number(&text, v2 ? 0 : -1, QUOTA_MAX_US, &q)) {
		return -EINVAL;
	}
	if (v2) {
		if (*text++ != ' ' || number(&text, QUOTA_PERIOD_MIN_US, QUOTA_PERIOD_MAX_US, &p))
			return -EINVAL;
	}
	if (!only_space(text))
		return -EINVAL;
	*quota = q;
	*period = p;
	return 0;
}
