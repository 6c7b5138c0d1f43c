/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * YARN NodeManager's containers (GET /ws/v1/node/containers): each task's
 * vcores and memory, polled (poller.c) and given to the YARN containers the
 * walk found. Only the daemon links it (-lcurl).
 */
#ifndef KOORD_YARN_NM_H
#define KOORD_YARN_NM_H

#include <stddef.h>
#include "cgroup.h"
#include "poller.h"

struct nm_container {
	char id[128];			/* container_...; first: the list is sorted by it (byname.h) */
	char state[32];			/* RUNNING, ... */
	unsigned int vcores;		/* totalVCoresNeeded */
	unsigned long long memory_mb;	/* totalMemoryNeededMB */
};

/* Sorted by id. */
struct nm_list {
	struct nm_container *v;
	size_t n;
};

/*
 * Parse NodeManager's {"containers": {"container": [...]}} ("containers"
 * null or {} when it runs none). Entries without an id are skipped.
 * Returns 0, -EINVAL (the reason in @err) or -ENOMEM.
 */
int nm_parse(const char *text, size_t len, struct nm_list *out, char *err, size_t errlen);
const struct nm_container *nm_find(const struct nm_list *l, const char *id);
void nm_free(struct nm_list *l);

/*
 * Polls @o->url (poller.c: stop, generation, status and the
 * koord_bpf_nodemanager_* metrics are the poller's).
 */
int nodemanager_start(const struct http_opts *o, struct poller **out);
/* Gives the YARN containers of @t their vcores and memory; returns how many it found. */
size_t nodemanager_apply(struct poller *p, struct container_table *t);

#endif
