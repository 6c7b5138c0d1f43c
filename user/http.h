/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* HTTP(S) for the node agents' JSON and the Eviction API (libcurl); only the daemon links it. */
#ifndef KOORD_HTTP_H
#define KOORD_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#define HTTP_BODY_MAX	(64u << 20)	/* a larger answer is refused */

struct http_opts {
	const char *url;	/* ${VAR} from the environment (http_expand_url) */
	const char *token_file;	/* bearer token, read at every request (tokens rotate); NULL or "": none */
	const char *ca_file;	/* NULL or "": the system's */
	bool insecure;		/* skip certificate verification */
	double interval_s;	/* between polls (poller.c) */
	double timeout_s;	/* per request */
	const bool *abort;	/* NULL, or set (by another thread) to end a request at once */
};

/* @url with ${VAR} replaced from the environment; -EINVAL names an unset one in @err. */
int http_expand_url(const char *url, char *out, size_t len, char *err, size_t errlen);

/*
 * One GET of @url; the body (NUL-terminated) in *@body. Returns 0, -EIO
 * (transport, TLS, HTTP status other than 200, aborted: the reason in @err), -EFBIG
 * (over HTTP_BODY_MAX), -ENOMEM, or the -errno of reading the token file.
 */
int http_get(const struct http_opts *o, const char *url, char **body, size_t *len,
	     char *err, size_t errlen);
/*
 * One POST of the JSON @json to @url: 0 with the HTTP status in *@status and
 * the body (NUL-terminated, NULL when empty; free it) in *@body, whatever
 * the status; or the errors of http_get but for the status.
 */
int http_post(const struct http_opts *o, const char *url, const char *json, long *status,
	      char **body, char *err, size_t errlen);

#endif
