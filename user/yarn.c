// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Hadoop's ContainerId, ApplicationId and ApplicationAttemptId formats (hadoop-yarn-api). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "yarn.h"

/* Digits at *@p up to @end_ch (or the end when '\0'), into @v; advances past @end_ch. */
static int field(const char **p, char end_ch, unsigned long long *v)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*v = strtoull(*p, &end, 10);
	if (errno || *end != end_ch)
		return -EINVAL;
	*p = end_ch ? end + 1 : end;
	return 0;
}

int yarn_parse(const char *name, struct yarn_id *id)
{
	const char *p = name;

	memset(id, 0, sizeof(*id));
	if (strncmp(p, "container_", 10))
		return -EINVAL;
	p += 10;
	if (*p == 'e') {
		p++;
		if (field(&p, '_', &id->epoch))
			return -EINVAL;
	}
	if (field(&p, '_', &id->cluster_ts) || field(&p, '_', &id->app) ||
	    field(&p, '_', &id->attempt) || field(&p, '\0', &id->container)) {
		memset(id, 0, sizeof(*id));
		return -EINVAL;
	}
	return 0;
}

void yarn_application_id(const struct yarn_id *id, char *buf, size_t len)
{
	snprintf(buf, len, "application_%llu_%04llu", id->cluster_ts, id->app);
}

void yarn_attempt_id(const struct yarn_id *id, char *buf, size_t len)
{
	snprintf(buf, len, "appattempt_%llu_%04llu_%06llu", id->cluster_ts, id->app, id->attempt);
}
