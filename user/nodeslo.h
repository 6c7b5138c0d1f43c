/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The node's own NodeSLO from the API server
 * (GET /apis/slo.koordinator.sh/v1alpha1/nodeslos/NODE), polled in a thread
 * of its own (poller.c): Koordinator's sections of the daemon's
 * configuration (config_parse_nodeslo()), applied again whenever a poll
 * brings another text. koordBPF stays the --config file's, which also holds
 * for clusters without NodeSLOs. Only the daemon links it (-lcurl).
 */
#ifndef KOORD_NODESLO_H
#define KOORD_NODESLO_H

#include <stddef.h>
#include "poller.h"

#define NODESLO_INTERVAL_S	10	/* between polls, by default */
#define NODESLO_TIMEOUT_S	5	/* per request */

/* An answer: the object's text as it came, its name and resourceVersion. */
struct nodeslo_doc {
	char *text;
	size_t len;
	char name[254];
	char resource_version[64];
};

/*
 * Is @text one NodeSLO object (kind "NodeSLO", a metadata.name)? Its
 * spec is the config parser's to judge. 0, -EINVAL (the reason in @err), -ENOMEM.
 */
int nodeslo_parse(const char *text, size_t len, struct nodeslo_doc *out, char *err, size_t errlen);
void nodeslo_doc_free(struct nodeslo_doc *d);
/* @from into @to, whose text before is freed; 0 or -ENOMEM (@to unchanged). */
int nodeslo_doc_copy(const struct nodeslo_doc *from, struct nodeslo_doc *to);

/* The API server's request options: a bearer token only where TLS protects it. */
struct http_opts nodeslo_http_opts(const char *url, const char *token_file, const char *ca_file,
				   double interval_s);

/*
 * One GET of @url, at start (before anything is written: enforcement is
 * the NodeSLO's from the first period). 0, or -errno with the reason in @err.
 */
int nodeslo_get(const char *url, const char *token_file, const char *ca_file,
		struct nodeslo_doc *out, char *err, size_t errlen);

/*
 * Polls @url (${VAR} from the environment) every @interval_s. Over
 * https the bearer token of @token_file and the CA of @ca_file are used;
 * over plain http no token is sent.
 */
int nodeslo_start(const char *url, const char *token_file, const char *ca_file,
		  double interval_s, struct poller **out);

/*
 * A copy of the last good answer into @out (free with nodeslo_doc_free()),
 * and the poller's generation it belongs to in @gen. -ENOENT when none came
 * yet, -ENOMEM.
 */
int nodeslo_take(struct poller *p, struct nodeslo_doc *out, unsigned long *gen);

#endif
