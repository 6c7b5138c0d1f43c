// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kubelet client. libcurl does HTTP and TLS; this file only reads the
 * token, bounds the body, and keeps the last good PodList. A failed poll
 * keeps the previous list (pods rarely change classes) and says so.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>
#include "evict_policy.h"
#include "kubelet.h"
#include "log.h"

#define TOKEN_MAX	16384

int kubelet_expand_url(const char *url, char *out, size_t len, char *err, size_t errlen)
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

	if (b->len + n > KUBELET_BODY_MAX) {
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

int kubelet_fetch(const struct kubelet_opts *o, const char *url, char **body, size_t *len,
		  char *err, size_t errlen)
{
	struct curl_slist *hdrs = NULL;
	struct buf b = {};
	char cerr[CURL_ERROR_SIZE] = "", *auth;
	long status = 0;
	CURLcode rc;
	CURL *c;
	int ret;

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
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(o->timeout_s * 1000));
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");	/* gzip when the kubelet offers it */
	/* refused at once when Content-Length says so; on_data bounds the rest */
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)KUBELET_BODY_MAX);
	if (o->ca_file && *o->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	if (o->insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	if (auth) {
		memset(auth, 0, strlen(auth));	/* the token does not linger in freed memory */
		free(auth);
	}
	if (b.too_big || rc == CURLE_FILESIZE_EXCEEDED) {
		snprintf(err, errlen, "%s: the response is larger than %u MiB", url,
			 KUBELET_BODY_MAX >> 20);
		ret = -EFBIG;
	} else if (rc != CURLE_OK) {
		snprintf(err, errlen, "%s: %s", url, *cerr ? cerr : curl_easy_strerror(rc));
		ret = rc == CURLE_WRITE_ERROR ? -ENOMEM : -EIO;
	} else if (status != 200) {
		snprintf(err, errlen, "%s: HTTP status %ld", url, status);
		ret = -EIO;
	} else if (!b.p) {
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

/* ---- the poller ---- */

struct kubelet {
	struct kubelet_opts o;
	char url[1024];
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop, started;
	/* under lock */
	struct pod_list pods;
	unsigned long gen;
	bool up;
	char why[1600];
	unsigned long long ok_total, err_total;
	double last_ok;		/* CLOCK_MONOTONIC seconds, 0: never */
	/* uids whose unknown qosClass was logged (only the daemon's thread touches it) */
	char (*warned)[64];
	size_t nwarned;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void poll_once(struct kubelet *k)
{
	struct pod_list pods = {};
	char err[512] = "", why[sizeof(k->why)];
	size_t len = 0;
	char *body = NULL;
	bool was_up;
	int r;

	r = kubelet_fetch(&k->o, k->url, &body, &len, err, sizeof(err));
	snprintf(why, sizeof(why), "%s", err);
	if (!r) {
		r = pods_parse(body, len, &pods, err, sizeof(err));
		snprintf(why, sizeof(why), "%s: %s", k->url, r == -EINVAL ? err : strerror(-r));
	}
	free(body);
	pthread_mutex_lock(&k->lock);
	was_up = k->up;
	k->up = !r;
	if (!r) {
		pods_free(&k->pods);
		k->pods = pods;
		k->gen++;
		k->ok_total++;
		k->last_ok = mono_s();
		k->why[0] = '\0';
	} else {
		k->err_total++;
		snprintf(k->why, sizeof(k->why), "%s", why);
	}
	pthread_mutex_unlock(&k->lock);
	if (r && (was_up || k->err_total == 1))
		log_warn("kubelet: %s; classes stay as the cgroups (and the last good pod list) say", why);
	else if (!r && !was_up)
		log_info("kubelet: %zu pods from %s", pods.n, k->url);
}

static void *poller(void *arg)
{
	struct kubelet *k = arg;
	struct timespec until;
	double next;

	pthread_mutex_lock(&k->lock);
	while (!k->stop) {
		pthread_mutex_unlock(&k->lock);
		poll_once(k);
		clock_gettime(CLOCK_MONOTONIC, &until);
		next = until.tv_sec + until.tv_nsec / 1e9 + k->o.interval_s;
		until.tv_sec = (time_t)next;
		until.tv_nsec = (long)((next - until.tv_sec) * 1e9);
		pthread_mutex_lock(&k->lock);
		while (!k->stop && pthread_cond_timedwait(&k->wake, &k->lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

int kubelet_start(const struct kubelet_opts *o, struct kubelet **out)
{
	struct kubelet *k = calloc(1, sizeof(*k));
	pthread_condattr_t ca;
	sigset_t all, old;
	char err[512];
	int r;

	if (!k)
		return -ENOMEM;
	k->o = *o;
	r = kubelet_expand_url(o->url, k->url, sizeof(k->url), err, sizeof(err));
	if (r) {
		log_err("kubelet: %s", err);
		free(k);
		return r;
	}
	snprintf(k->why, sizeof(k->why), "no answer yet");
	curl_global_init(CURL_GLOBAL_DEFAULT);	/* before any thread: it is not thread-safe */
	pthread_mutex_init(&k->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* the poller takes no signals: they are the daemon's period loop's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&k->th, NULL, poller, k);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		kubelet_stop(k);
		return r;
	}
	k->started = true;
	*out = k;
	return 0;
}

void kubelet_stop(struct kubelet *k)
{
	if (!k)
		return;
	if (k->started) {
		pthread_mutex_lock(&k->lock);
		k->stop = true;
		pthread_cond_signal(&k->wake);
		pthread_mutex_unlock(&k->lock);
		pthread_join(k->th, NULL);
	}
	pods_free(&k->pods);
	free(k->warned);
	pthread_cond_destroy(&k->wake);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

unsigned long kubelet_generation(struct kubelet *k)
{
	unsigned long g;

	pthread_mutex_lock(&k->lock);
	g = k->gen;
	pthread_mutex_unlock(&k->lock);
	return g;
}

/* Koordinator refuses an unknown qosClass; say so once per pod. */
static void warn_unknown(struct kubelet *k, const struct pod_meta *p)
{
	size_t i;
	void *v;

	for (i = 0; i < k->nwarned; i++)
		if (!strcmp(k->warned[i], p->uid))
			return;
	log_err("pod %s/%s (%s): unknown koordinator.sh/qosClass \"%s\"; its containers count as "
		"unclassified", p->namespace, p->name, p->uid, p->qos_label_raw);
	v = realloc(k->warned, (k->nwarned + 1) * sizeof(*k->warned));
	if (!v)
		return;
	k->warned = v;
	snprintf(k->warned[k->nwarned++], sizeof(*k->warned), "%s", p->uid);
}

/* Koordinator's features behind koord-bpf's eviction reasons. */
static unsigned int evict_denied(const struct pod_meta *p)
{
	static const char *const feature[EVICT_REASON_NR] = {
		[EVICT_BE_CPU] = "BECPUEvict",
		[EVICT_MEMORY] = "BEMemoryEvict",
		[EVICT_CULPRIT] = "BECPUEvict",	/* a BE CPU eviction, by interference */
	};
	unsigned int r, denied = 0;

	for (r = 0; r < EVICT_REASON_NR; r++)
		if (!pod_evict_allowed(p, feature[r]))
			denied |= 1u << r;
	return denied;
}

size_t kubelet_apply(struct kubelet *k, struct container_table *t)
{
	const struct pod_meta *p;
	struct cg_identity *id;
	size_t i, changed = 0;

	pthread_mutex_lock(&k->lock);
	for (i = 0; i < t->n; i++) {
		id = &t->v[i].ident;
		if (!id->pod_uid[0] || !(p = pods_find(&k->pods, id->pod_uid)))
			continue;
		snprintf(id->namespace, sizeof(id->namespace), "%s", p->namespace);
		snprintf(id->pod_name, sizeof(id->pod_name), "%s", p->name);
		if (p->qos_label == KC_UNCLASSIFIED)
			warn_unknown(k, p);
		if (p->qos_label >= 0 && id->qos != (enum koord_class)p->qos_label) {
			id->qos = p->qos_label;
			changed++;
		}
		id->prio = pod_prio(p, id->qos);
		id->priority = p->has_priority ? p->priority : 0;
		id->evict_denied = evict_denied(p);
	}
	pthread_mutex_unlock(&k->lock);
	return changed;
}

bool kubelet_status(struct kubelet *k, char *why, size_t len)
{
	bool up;

	pthread_mutex_lock(&k->lock);
	up = k->up;
	snprintf(why, len, "%s", k->why);
	pthread_mutex_unlock(&k->lock);
	return up;
}

void kubelet_metrics(struct kubelet *k, FILE *f)
{
	pthread_mutex_lock(&k->lock);
	fprintf(f, "# HELP koord_bpf_kubelet_up 1 when the last poll of the kubelet's /pods succeeded; "
		   "0: classes come from the cgroups (and the last good list).\n"
		   "# TYPE koord_bpf_kubelet_up gauge\nkoord_bpf_kubelet_up %d\n"
		   "# HELP koord_bpf_kubelet_pods Pods in the last good list.\n"
		   "# TYPE koord_bpf_kubelet_pods gauge\nkoord_bpf_kubelet_pods %zu\n"
		   "# HELP koord_bpf_kubelet_polls_total Polls of the kubelet's /pods.\n"
		   "# TYPE koord_bpf_kubelet_polls_total counter\n"
		   "koord_bpf_kubelet_polls_total{result=\"ok\"} %llu\n"
		   "koord_bpf_kubelet_polls_total{result=\"error\"} %llu\n",
		k->up, k->pods.n, k->ok_total, k->err_total);
	if (k->last_ok)
		fprintf(f, "# HELP koord_bpf_kubelet_last_success_age_seconds Since the last good list.\n"
			   "# TYPE koord_bpf_kubelet_last_success_age_seconds gauge\n"
			   "koord_bpf_kubelet_last_success_age_seconds %.3f\n", mono_s() - k->last_ok);
	pthread_mutex_unlock(&k->lock);
}
