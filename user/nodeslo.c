// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The NodeSLO object as the API server serves it (slo.koordinator.sh/v1alpha1). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "jsondoc.h"
#include "nodeslo.h"

/* @o's string member @key into @out; false when absent, not a string or too long. */
static bool string_at(json_object *o, const char *key, char *out, size_t len)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    (size_t)json_object_get_string_len(v) >= len)
		return false;
	snprintf(out, len, "%s", json_object_get_string(v));
	return true;
}

int nodeslo_parse(const char *text, size_t len, struct nodeslo_doc *out, char *err, size_t errlen)
{
	json_object *root = json_doc_parse(text, len, err, errlen), *meta = NULL;
	char kind[32] = "";
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!root)
		return -EINVAL;
	json_object_object_get_ex(root, "metadata", &meta);
	if (!string_at(root, "kind", kind, sizeof(kind)) || strcmp(kind, "NodeSLO")) {
		snprintf(err, errlen, "not a NodeSLO (kind \"%s\")", kind);
		ret = -EINVAL;
	} else if (!string_at(meta, "name", out->name, sizeof(out->name)) || !*out->name) {
		snprintf(err, errlen, "a NodeSLO without metadata.name");
		ret = -EINVAL;
	} else {
		/* the API server always sets one; a recorded object may lack it */
		string_at(meta, "resourceVersion", out->resource_version,
			  sizeof(out->resource_version));
		out->text = malloc(len + 1);
		if (!out->text) {
			ret = -ENOMEM;
		} else {
			memcpy(out->text, text, len);
			out->text[len] = '\0';
			out->len = len;
		}
	}
	json_object_put(root);
	return ret;
}

void nodeslo_doc_free(struct nodeslo_doc *d)
{
	free(d->text);
	d->text = NULL;
	d->len = 0;
}

int nodeslo_doc_copy(const struct nodeslo_doc *from, struct nodeslo_doc *to)
{
	char *text = malloc(from->len + 1);

	if (!text)
		return -ENOMEM;
	memcpy(text, from->text, from->len + 1);
	nodeslo_doc_free(to);
	*to = *from;
	to->text = text;
	return 0;
}

/* ---- polled ---- */

static int parse(const char *text, size_t len, void *out, char *err, size_t errlen)
{
	return nodeslo_parse(text, len, out, err, errlen);
}

static void free_doc(void *v)
{
	nodeslo_doc_free(v);
}

static const struct poll_kind nodeslo_kind = {
	.name = "nodeslo", .size = sizeof(struct nodeslo_doc), .parse = parse, .free = free_doc,
};

struct http_opts nodeslo_http_opts(const char *url, const char *token_file, const char *ca_file,
				   double interval_s)
{
	bool tls = !strncmp(url, "https://", 8);

	return (struct http_opts){
		.url = url, .token_file = tls ? token_file : NULL, .ca_file = tls ? ca_file : NULL,
		.interval_s = interval_s, .timeout_s = NODESLO_TIMEOUT_S,
	};
}

int nodeslo_get(const char *url, const char *token_file, const char *ca_file,
		struct nodeslo_doc *out, char *err, size_t errlen)
{
	struct http_opts o = nodeslo_http_opts(url, token_file, ca_file, 0);
	char full[1024], why[512] = "";
	char *body = NULL;
	size_t len = 0;
	int r;

	memset(out, 0, sizeof(*out));
	r = http_expand_url(url, full, sizeof(full), err, errlen);
	if (r)
		return r;
	r = http_get(&o, full, &body, &len, err, errlen);	/* its reason names the URL */
	if (!r) {
		r = nodeslo_parse(body, len, out, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "%s: %s", full, r == -EINVAL ? why : strerror(-r));
	}
	free(body);
	return r;
}

int nodeslo_start(const char *url, const char *token_file, const char *ca_file,
		  double interval_s, struct poller **out)
{
	struct http_opts o = nodeslo_http_opts(url, token_file, ca_file, interval_s);

	return poller_start(&nodeslo_kind, &o, out);
}

struct take {
	struct nodeslo_doc *out;
	int ret;
};

static void copy(const void *v, void *ctx)
{
	struct take *t = ctx;

	t->ret = v ? nodeslo_doc_copy(v, t->out) : -ENOENT;
}

int nodeslo_take(struct poller *p, struct nodeslo_doc *out, unsigned long *gen)
{
	struct take t = { .out = out };

	memset(out, 0, sizeof(*out));
	/* the generation first: an answer newer than the copy is taken next time */
	*gen = poller_generation(p);
	poller_with(p, copy, &t);
	return t.ret;
}
