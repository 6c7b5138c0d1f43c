// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Polling a node agent: one thread, the last good answer under a mutex. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>
#include "fnv.h"
#include "log.h"
#include "poller.h"

struct poller {
	const struct poll_kind *kind;
	struct http_opts o;	/* its strings are the poller's own: a reload frees the config's */
	char url[1024];
	char *token_file, *ca_file;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_cond_t polled;	/* a poll ended: for poller_wait_first() */
	bool stop, started;
	/* under lock */
	void *v;		/* the last good answer, parsed */
	unsigned long gen;
	bool up;
	char why[1600];
	unsigned long long ok_total, err_total;
	double last_ok;		/* CLOCK_MONOTONIC seconds, 0: never */
	double last_ok_unix;	/* the same, CLOCK_REALTIME: for /metrics */
	/* the last good answer's text, hashed: the same answer again is not parsed again */
	unsigned long long hash;
	size_t hash_len;
};

static double clock_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double mono_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static size_t count(const struct poll_kind *k, const void *v)
{
	return v ? *(const size_t *)((const char *)v + k->count_off) : 0;
}

/* The last good answer, freed. */
static void drop(struct poller *p)
{
	if (p->v)
		p->kind->free(p->v);
	free(p->v);
	p->v = NULL;
}

static void poll_once(struct poller *p)
{
	char err[512] = "", why[sizeof(p->why)];
	unsigned long long hash = 0;
	bool was_up, same = false;
	void *v = NULL;
	size_t len = 0;
	char *body = NULL;
	int r;

	r = http_get(&p->o, p->url, &body, &len, err, sizeof(err));
	if (r && __atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
		free(body);	/* ended by poller_stop(): no failure of the agent's */
		return;
	}
	snprintf(why, sizeof(why), "%s", err);
	if (!r) {
		hash = fnv1a(body, len);
		pthread_mutex_lock(&p->lock);
		same = p->v && p->hash == hash && p->hash_len == len;
		pthread_mutex_unlock(&p->lock);
	}
	/*
	 * The same answer as the last: nothing to parse, and the generation
	 * stays, so the daemon does not walk and classify again for nothing.
	 */
	if (!r && !same) {
		v = calloc(1, p->kind->size);
		r = v ? p->kind->parse(body, len, v, err, sizeof(err)) : -ENOMEM;
		snprintf(why, sizeof(why), "%s: %s", p->url, r == -EINVAL ? err : strerror(-r));
		if (r) {
			free(v);
			v = NULL;
		}
	}
	free(body);
	pthread_mutex_lock(&p->lock);
	was_up = p->up;
	p->up = !r;
	if (!r && !same) {
		drop(p);
		p->v = v;
		p->gen++;
		p->hash = hash;
		p->hash_len = len;
	}
	if (!r) {
		p->ok_total++;
		p->last_ok = mono_s();
		p->last_ok_unix = clock_s(CLOCK_REALTIME);
		p->why[0] = '\0';
	} else {
		p->err_total++;
		snprintf(p->why, sizeof(p->why), "%s", why);
	}
	pthread_cond_broadcast(&p->polled);
	pthread_mutex_unlock(&p->lock);
	if (r && (was_up || p->err_total == 1))
		log_warn("%s: %s; going on with the last good answer, if any", p->kind->name, why);
	else if (!r && !was_up && p->kind->items)
		log_info("%s: %zu %s from %s", p->kind->name, count(p->kind, same ? p->v : v),
			 p->kind->items, p->url);
	else if (!r && !was_up)
		log_info("%s: read from %s", p->kind->name, p->url);
}

static void *run(void *arg)
{
	struct poller *p = arg;
	struct timespec until;
	double next;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		pthread_mutex_unlock(&p->lock);
		poll_once(p);
		clock_gettime(CLOCK_MONOTONIC, &until);
		next = until.tv_sec + until.tv_nsec / 1e9 + p->o.interval_s;
		until.tv_sec = (time_t)next;
		until.tv_nsec = (long)((next - until.tv_sec) * 1e9);
		pthread_mutex_lock(&p->lock);
		while (!p->stop && pthread_cond_timedwait(&p->wake, &p->lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int poller_start(const struct poll_kind *kind, const struct http_opts *o, struct poller **out)
{
	struct poller *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;
	sigset_t all, old;
	char err[512];
	int r;

	if (!p)
		return -ENOMEM;
	p->kind = kind;
	p->o = *o;
	p->o.url = NULL;	/* expanded into p->url */
	p->token_file = o->token_file ? strdup(o->token_file) : NULL;
	p->ca_file = o->ca_file ? strdup(o->ca_file) : NULL;
	p->o.token_file = p->token_file;
	p->o.ca_file = p->ca_file;
	p->o.abort = &p->stop;	/* a stop ends a request in flight (up to timeoutSeconds) */
	if ((o->token_file && !p->token_file) || (o->ca_file && !p->ca_file)) {
		free(p->token_file);
		free(p->ca_file);
		free(p);
		return -ENOMEM;
	}
	r = http_expand_url(o->url, p->url, sizeof(p->url), err, sizeof(err));
	if (r) {
		log_err("%s: %s", kind->name, err);
		free(p->token_file);
		free(p->ca_file);
		free(p);
		return r;
	}
	snprintf(p->why, sizeof(p->why), "no answer yet");
	curl_global_init(CURL_GLOBAL_DEFAULT);	/* before any thread: it is not thread-safe */
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->wake, &ca);
	pthread_cond_init(&p->polled, &ca);
	pthread_condattr_destroy(&ca);
	/* the poller takes no signals: they are the daemon's period loop's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&p->th, NULL, run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		poller_stop(p);
		return r;
	}
	p->started = true;
	*out = p;
	return 0;
}

void poller_stop(struct poller *p)
{
	if (!p)
		return;
	if (p->started) {
		pthread_mutex_lock(&p->lock);
		__atomic_store_n(&p->stop, true, __ATOMIC_RELAXED);
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->th, NULL);
	}
	drop(p);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->polled);
	pthread_mutex_destroy(&p->lock);
	free(p->token_file);
	free(p->ca_file);
	free(p);
}

bool poller_wait_first(struct poller *p, double timeout_s)
{
	double end = mono_s() + timeout_s;
	struct timespec until = { .tv_sec = (time_t)end,
				  .tv_nsec = (long)((end - (time_t)end) * 1e9) };
	bool up;

	pthread_mutex_lock(&p->lock);
	while (!p->ok_total && !p->err_total &&
	       pthread_cond_timedwait(&p->polled, &p->lock, &until) != ETIMEDOUT)
		;
	up = p->up;
	pthread_mutex_unlock(&p->lock);
	return up;
}

int poller_copy(struct poller *p, void *out, unsigned long *gen)
{
	int r = -ENOENT;

	memset(out, 0, p->kind->size);
	pthread_mutex_lock(&p->lock);
	*gen = p->gen;
	if (p->v) {
		memcpy(out, p->v, p->kind->size);
		r = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

unsigned long poller_generation(struct poller *p)
{
	unsigned long g;

	pthread_mutex_lock(&p->lock);
	g = p->gen;
	pthread_mutex_unlock(&p->lock);
	return g;
}

void poller_with(struct poller *p, void (*fn)(const void *v, void *ctx), void *ctx)
{
	pthread_mutex_lock(&p->lock);
	fn(p->v, ctx);
	pthread_mutex_unlock(&p->lock);
}

bool poller_status(struct poller *p, char *why, size_t len)
{
	bool up;

	pthread_mutex_lock(&p->lock);
	up = p->up;
	snprintf(why, len, "%s", p->why);
	pthread_mutex_unlock(&p->lock);
	return up;
}

double poller_age(struct poller *p)
{
	double age;

	pthread_mutex_lock(&p->lock);
	age = p->last_ok ? mono_s() - p->last_ok : -1;
	pthread_mutex_unlock(&p->lock);
	return age;
}

void poller_metrics(struct poller *p, FILE *f)
{
	const char *n = p->kind->name;

	pthread_mutex_lock(&p->lock);
	fprintf(f, "# HELP koord_bpf_%s_up 1 when the last poll of the %s succeeded.\n"
		   "# TYPE koord_bpf_%s_up gauge\nkoord_bpf_%s_up %d\n",
		n, n, n, n, p->up);
	if (p->kind->items)
		fprintf(f, "# HELP koord_bpf_%s_%s In the last good answer.\n"
			   "# TYPE koord_bpf_%s_%s gauge\nkoord_bpf_%s_%s %zu\n",
			n, p->kind->items, n, p->kind->items, n, p->kind->items,
			count(p->kind, p->v));
	fprintf(f, "# HELP koord_bpf_%s_polls_total Polls of the %s.\n"
		   "# TYPE koord_bpf_%s_polls_total counter\n"
		   "koord_bpf_%s_polls_total{result=\"ok\"} %llu\n"
		   "koord_bpf_%s_polls_total{result=\"error\"} %llu\n",
		n, n, n, n, p->ok_total, n, p->err_total);
	if (p->last_ok)
		fprintf(f, "# HELP koord_bpf_%s_last_success_timestamp_seconds Unix time of the last "
			   "good answer.\n"
			   "# TYPE koord_bpf_%s_last_success_timestamp_seconds gauge\n"
			   "koord_bpf_%s_last_success_timestamp_seconds %.3f\n", n, n, n,
			p->last_ok_unix);
	pthread_mutex_unlock(&p->lock);
}
