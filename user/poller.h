/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A node agent's JSON polled in a thread of its own, so a slow agent never
 * delays a period: the last good parsed answer is kept (a failed poll keeps
 * it and says why), with a generation that changes with every good answer.
 */
#ifndef KOORD_POLLER_H
#define KOORD_POLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "http.h"

/* What is polled: how an answer is parsed, freed and counted. */
struct poll_kind {
	const char *name;	/* in messages and metric names: koord_bpf_<name>_up, ... */
	const char *items;	/* the unit counted: koord_bpf_<name>_<items>; NULL: none */
	size_t size;		/* of a parsed answer; the poller allocates it */
	size_t count_off;	/* where in it the number of items is (a size_t), with items */
	/* the answer into @out; 0, -EINVAL with the reason in @err, -ENOMEM */
	int (*parse)(const char *text, size_t len, void *out, char *err, size_t errlen);
	void (*free)(void *v);	/* what a parsed answer holds (not itself) */
};

struct poller;

/* Starts polling @o->url (the first poll at once). 0, -EINVAL (bad URL), -ENOMEM, -errno. */
int poller_start(const struct poll_kind *kind, const struct http_opts *o, struct poller **out);
void poller_stop(struct poller *p);	/* NULL is fine */

/* Waits up to @timeout_s for the first poll to end; whether it brought an answer. */
bool poller_wait_first(struct poller *p, double timeout_s);
unsigned long poller_generation(struct poller *p);
/* Runs @fn on the last good answer (NULL: none yet) under the poller's lock. */
void poller_with(struct poller *p, void (*fn)(const void *v, void *ctx), void *ctx);
/*
 * For answers that hold no pointers: a copy of the last good one into @out
 * (the kind's size) and the generation it belongs to in @gen; -ENOENT when
 * none came yet (@out zeroed).
 */
int poller_copy(struct poller *p, void *out, unsigned long *gen);
/* Up (the last poll succeeded) or not, with the reason; thread-safe. */
bool poller_status(struct poller *p, char *why, size_t len);
/* Seconds since the last good answer, < 0 when none came yet; thread-safe. */
double poller_age(struct poller *p);
/* koord_bpf_<name>_up, _<items> (if counted), _polls_total{result}, _last_success_timestamp_seconds. */
void poller_metrics(struct poller *p, FILE *f);

#endif
