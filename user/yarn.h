/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A YARN task's identity from its container name (Hadoop's ContainerId:
 * container_[e<epoch>_]<clusterTimestamp>_<appId>_<attempt>_<containerId>).
 * Pure, unit-tested.
 */
#ifndef KOORD_YARN_H
#define KOORD_YARN_H

#include <stdbool.h>
#include <stddef.h>

struct yarn_id {
	unsigned long long epoch;	/* the ResourceManager's restart epoch, 0 without "e<N>_" */
	unsigned long long cluster_ts;	/* the ResourceManager's start time (ms) */
	unsigned long long app;		/* application number */
	unsigned long long attempt;	/* application attempt */
	unsigned long long container;	/* container number within the attempt */
};

/* Returns 0, or -EINVAL when @name is not a ContainerId. */
int yarn_parse(const char *name, struct yarn_id *id);
/* "application_<clusterTs>_<app, 4 digits at least>" */
void yarn_application_id(const struct yarn_id *id, char *buf, size_t len);
/* "appattempt_<clusterTs>_<app, 4 digits>_<attempt, 6 digits>" */
void yarn_attempt_id(const struct yarn_id *id, char *buf, size_t len);

#endif
