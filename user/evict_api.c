// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evict_api.h"
#include "http.h"
#include "jsondoc.h"

struct evict_api_call {
	pthread_t thread;
	char url[2048], body[1024];	/* server (< 768) + a namespace and a name (<= 253 each) */
	char *token_file, *ca_file;
	bool abort;			/* set by evict_api_stop */
	bool done;			/* set by the thread (atomic) */
	int result;
	char why[512];
};

/*
 * A DNS subdomain (pod names) or label (namespaces): lower-case letters,
 * digits, '-' and '.', a letter or digit at both ends. Nothing in it can
 * change the request's path ("..") or leave the JSON string.
 */
static bool k8s_name(const char *s)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	size_t n = strlen(s);

	return n && n <= 253 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-.") == n &&
	       strchr(alnum, s[0]) && strchr(alnum, s[n - 1]);
}

int evict_api_body(char *buf, size_t len, const char *ns, const char *name, const char *uid)
{
	int n;

	if (!k8s_name(ns) || !k8s_name(name) || !*uid ||
	    strspn(uid, "abcdefABCDEF0123456789-") != strlen(uid))
		return -EINVAL;
	n = snprintf(buf, len, "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":"
		     "{\"name\":\"%s\",\"namespace\":\"%s\"},\"deleteOptions\":{\"preconditions\":"
		     "{\"uid\":\"%s\"}}}", name, ns, uid);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

int evict_api_status(long status)
{
	switch (status) {
	case 200:
	case 201:
		return 0;
	case 429:
		return -EBUSY;
	case 404:
		return -ENOENT;
	case 409:
		return -ESTALE;
	case 401:
	case 403:
		return -EACCES;
	default:
		return -EIO;
	}
}

/* The Status object's message, else the status alone. */
static void reason(const char *body, long status, char *why, size_t len)
{
	json_object *doc = body ? json_doc_parse(body, strlen(body), NULL, 0) : NULL, *m;

	if (doc && json_object_object_get_ex(doc, "message", &m) &&
	    json_object_is_type(m, json_type_string))
		snprintf(why, len, "HTTP %ld: %s", status, json_object_get_string(m));
	else
		snprintf(why, len, "HTTP %ld", status);
	if (doc)
		json_object_put(doc);
}

static void *run(void *arg)
{
	struct evict_api_call *c = arg;
	struct http_opts o = {
		.url = c->url, .token_file = c->token_file, .ca_file = c->ca_file,
		.timeout_s = EVICT_API_TIMEOUT_S, .abort = &c->abort,
	};
	char *body = NULL;
	long status;
	int r;

	r = http_post(&o, c->url, c->body, &status, &body, c->why, sizeof(c->why));
	if (!r) {
		r = evict_api_status(status);
		reason(body, status, c->why, sizeof(c->why));
	}
	free(body);
	c->result = r;
	__atomic_store_n(&c->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void call_free(struct evict_api_call *c)
{
	free(c->token_file);
	free(c->ca_file);
	free(c);
}

int evict_api_start(const struct evict_api_opts *o, const char *ns, const char *name,
		    const char *uid, struct evict_api_call **out, char *err, size_t errlen)
{
	char server[768];
	struct evict_api_call *c;
	bool tls;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if ((r = http_expand_url(o->server, server, sizeof(server), err, errlen)))
		goto fail;
	if ((r = evict_api_body(c->body, sizeof(c->body), ns, name, uid))) {
		snprintf(err, errlen, "pod %s/%s (%s): not a Kubernetes name", ns, name, uid);
		r = -EINVAL;
		goto fail;
	}
	snprintf(c->url, sizeof(c->url), "%s/api/v1/namespaces/%s/pods/%s/eviction", server, ns,
		 name);
	tls = !strncmp(server, "https://", 8);	/* a bearer token only where TLS protects it */
	c->token_file = strdup(tls ? o->token_file : "");
	c->ca_file = strdup(tls ? o->ca_file : "");
	r = -ENOMEM;
	if (!c->token_file || !c->ca_file)
		goto fail;
	if ((r = -pthread_create(&c->thread, NULL, run, c))) {
		snprintf(err, errlen, "cannot start the call: %s", strerror(-r));
		goto fail;
	}
	*out = c;
	return 0;
fail:
	call_free(c);
	return r;
}

int evict_api_poll(struct evict_api_call **cp, char *why, size_t len)
{
	struct evict_api_call *c = *cp;
	int r;

	if (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
		return -EINPROGRESS;
	pthread_join(c->thread, NULL);
	r = c->result;
	snprintf(why, len, "%s", c->why);
	call_free(c);
	*cp = NULL;
	return r;
}

void evict_api_stop(struct evict_api_call **cp)
{
	struct evict_api_call *c = *cp;

	if (!c)
		return;
	__atomic_store_n(&c->abort, true, __ATOMIC_RELAXED);
	pthread_join(c->thread, NULL);
	call_free(c);
	*cp = NULL;
}
