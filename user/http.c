// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * HTTP(S) with libcurl: GETs of the node agents koord-bpf reads (the
 * kubelet, YARN's NodeManager, the NodeSLO) and POSTs to the Eviction API: a
 * bearer token read from a file at every request, a CA file, a timeout and a
 * bound on the body. Only the daemon links it (-lcurl).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include "http.h"

#define TOKEN_MAX	16384

int http_expand_url(const char *url, char *out, size_t len, char *err, size_t errlen)
{
	const char *p = url, *end, *val;
	char name[128];
	size_t n = 0, k;

	while (*p) {
		if (p[0] == '$' && p[1] == '{' && (end = strchr(p, '}'))) {
			k = end - p - 2;
			if (k >= sizeof(name))
				k = sizeof(name) - 1;
			memcpy(name, p + 2, k);
			name[k] = '\0';
			val = getenv(name);
			if (!val || !*val) {
				snprintf(err, errlen, "%s: ${%s} is not set in the environment", url, name);
				return -EINVAL;
			}
			p = end + 1;
		} else {
			val = NULL;
		}
		for (; val && *val && n < len; val++)
			out[n++] = *val;
		if (!val && n < len)
			out[n++] = *p++;
		if (n >= len) {
			snprintf(err, errlen, "%s: too long", url);
			return -EINVAL;
		}
	}
	out[n] = '\0';
	return 0;
}

struct buf {
	char *p;
	size_t len, cap;
	bool too_big;
};

static size_t on_data(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct buf *b = ctx;
	size_t n = size * nmemb, cap;
	char *p;

	if (b->len + n > HTTP_BODY_MAX) {
		b->too_big = true;
		return 0;	/* aborts the transfer */
	}
	if (b->len + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 65536;
		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

/* "Authorization: Bearer <token>" from the token file; NULL when there is none. */
static char *auth_header(const char *file, char *err, size_t errlen, int *ret)
{
	char *h, tok[TOKEN_MAX];
	size_t n;
	FILE *f;

	*ret = 0;
	if (!file || !*file)
		return NULL;
	f = fopen(file, "re");
	if (!f) {
		*ret = -errno;
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		return NULL;
	}
	n = fread(tok, 1, sizeof(tok) - 1, f);
	fclose(f);
	while (n && (tok[n - 1] == '\n' || tok[n - 1] == '\r' || tok[n - 1] == ' '))
		n--;
	tok[n] = '\0';
	if (!n || strpbrk(tok, "\r\n")) {
		*ret = -EINVAL;
		snprintf(err, errlen, "%s: not a bearer token", file);
		return NULL;
	}
	if (asprintf(&h, "Authorization: Bearer %s", tok) < 0) {
		*ret = -ENOMEM;
		return NULL;
	}
	return h;
}

/* libcurl asks this at least once a second, also while nothing arrives: nonzero aborts. */
static int on_progress(void *abort, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	return __atomic_load_n((const bool *)abort, __ATOMIC_RELAXED);
}

/*
 * One request: a GET, or a POST of the JSON @post. The status in *@status,
 * the body in @b; 0, or -EFBIG, -ENOMEM, -EIO (transport, TLS, aborted) or
 * the token file's error, with the reason in @err.
 */
static int perform(const struct http_opts *o, const char *url, const char *post, long *status,
		   struct buf *b, char *err, size_t errlen)
{
	struct curl_slist *hdrs = NULL;
	char cerr[CURL_ERROR_SIZE] = "", *auth;
	CURLcode rc;
	CURL *c;
	int ret;

	*status = 0;
	auth = auth_header(o->token_file, err, errlen, &ret);
	if (ret)
		return ret;
	c = curl_easy_init();
	if (!c) {
		free(auth);
		return -ENOMEM;
	}
	if (auth)
		hdrs = curl_slist_append(hdrs, auth);
	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	if (post) {
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, post);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(o->timeout_s * 1000));
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");	/* gzip when the server offers it */
	/* refused at once when Content-Length says so; on_data bounds the rest */
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)HTTP_BODY_MAX);
	if (o->ca_file && *o->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	if (o->insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (o->abort) {
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)o->abort);
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	}
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	if (auth) {
		memset(auth, 0, strlen(auth));	/* the token does not linger in freed memory */
		free(auth);
	}
	if (b->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
		snprintf(err, errlen, "%s: the response is larger than %u MiB", url,
			 HTTP_BODY_MAX >> 20);
		return -EFBIG;
	}
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "%s: %s", url, *cerr ? cerr : curl_easy_strerror(rc));
		return rc == CURLE_WRITE_ERROR ? -ENOMEM : -EIO;
	}
	return 0;
}

int http_get(const struct http_opts *o, const char *url, char **body, size_t *len,
	     char *err, size_t errlen)
{
	struct buf b = {};
	long status;
	int ret = perform(o, url, NULL, &status, &b, err, errlen);

	if (!ret && status != 200) {
		snprintf(err, errlen, "%s: HTTP status %ld", url, status);
		ret = -EIO;
	} else if (!ret && !b.p) {
		snprintf(err, errlen, "%s: empty response", url);
		ret = -EIO;
	}
	if (ret) {
		free(b.p);
		return ret;
	}
	*body = b.p;
	*len = b.len;
	return 0;
}

int http_post(const struct http_opts *o, const char *url, const char *json, long *status,
	      char **body, char *err, size_t errlen)
{
	struct buf b = {};
	int ret = perform(o, url, json, status, &b, err, errlen);

	if (ret) {
		free(b.p);
		return ret;
	}
	*body = b.p;	/* NULL when empty */
	return 0;
}
