/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Container identity and QoS class from a cgroup path.
 *
 * The path is read one component at a time down the levels kubelet creates
 * (kubepods root, QoS dir, pod, container), for both cgroup drivers; YARN
 * containers are recognised at any depth. Components are compared in place
 * and only validated names are copied, so any input is safe.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "classify.h"

static const char *const class_names[KC_NR] = {
	[KC_UNCLASSIFIED] = "UNCLASSIFIED",
	[KC_LSE] = "LSE",
	[KC_LSR] = "LSR",
	[KC_LS] = "LS",
	[KC_BE] = "BE",
	[KC_SYSTEM] = "SYSTEM",
	[KC_IDLE] = "IDLE",
};

int qos_from_name(const char *name)
{
	int c;

	if (!name)
		return -1;
	/* Only the classes a user may assign; UNCLASSIFIED and IDLE are internal. */
	for (c = KC_LSE; c <= KC_SYSTEM; c++)
		if (!strcasecmp(name, class_names[c]))
			return c;
	return -1;
}

const char *qos_name(enum koord_class c)
{
	if ((unsigned int)c >= KC_NR)
		return "?";
	return class_names[c];
}

/* A piece of the path, not NUL-terminated. */
struct span {
	const char *p;
	size_t len;
};

static bool next_component(const char **cur, struct span *s)
{
	const char *p = *cur;

	while (*p == '/')
		p++;
	if (!*p)
		return false;
	s->p = p;
	s->len = strcspn(p, "/");
	*cur = p + s->len;
	return true;
}

static bool span_is(struct span s, const char *lit)
{
	return s.len == strlen(lit) && !memcmp(s.p, lit, s.len);
}

static bool span_eat_n(struct span *s, const char *lit, size_t n)
{
	if (s->len < n || memcmp(s->p, lit, n))
		return false;
	s->p += n;
	s->len -= n;
	return true;
}

static bool span_eat(struct span *s, const char *lit)
{
	return span_eat_n(s, lit, strlen(lit));
}

static bool span_eat_tail(struct span *s, const char *lit)
{
	size_t n = strlen(lit);

	if (s->len < n || memcmp(s->p + s->len - n, lit, n))
		return false;
	s->len -= n;
	return true;
}

/* Consume one or more decimal digits. */
static bool span_eat_digits(struct span *s)
{
	size_t i = 0;

	while (i < s->len && s->p[i] >= '0' && s->p[i] <= '9')
		i++;
	s->p += i;
	s->len -= i;
	return i > 0;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool span_is_hex(struct span s)
{
	size_t i;

	for (i = 0; i < s.len; i++)
		if (!is_hex(s.p[i]))
			return false;
	return s.len > 0;
}

/* Caller has checked that @s fits. */
static void span_copy(char *dst, struct span s)
{
	memcpy(dst, s.p, s.len);
	dst[s.len] = '\0';
}

/*
 * A pod UID as kubelet writes it into a cgroup name: a UUID (8-4-4-4-12 hex
 * digits) with @sep between the groups ('-' for cgroupfs, '_' for systemd,
 * which reserves '-'), or 32 bare hex digits (static pods: an md5 sum).
 * Written to @out with '-' separators.
 */
static bool parse_pod_uid(struct span s, char sep, char out[64])
{
	size_t i;

	if (s.len == 32 && span_is_hex(s)) {
		span_copy(out, s);
		return true;
	}
	if (s.len != 36)
		return false;
	for (i = 0; i < s.len; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s.p[i] != sep : !is_hex(s.p[i]))
			return false;
	}
	for (i = 0; i < s.len; i++)
		out[i] = s.p[i] == sep ? '-' : s.p[i];
	out[s.len] = '\0';
	return true;
}

/* Hadoop's ContainerId: container_[e<epoch>_]<clusterTs>_<app>_<attempt>_<id>. */
static bool is_yarn_container(struct span s)
{
	int i;

	if (!span_eat(&s, "container_"))
		return false;
	if (span_eat(&s, "e") && !(span_eat_digits(&s) && span_eat(&s, "_")))
		return false;
	for (i = 0; i < 4; i++) {
		if (i && !span_eat(&s, "_"))
			return false;
		if (!span_eat_digits(&s))
			return false;
	}
	return s.len == 0;
}

/* Where we are in kubelet's layout while reading a path downwards. */
struct kube_walk {
	enum {
		LV_OUTSIDE,	/* above the kubepods root */
		LV_ROOT,	/* at the root: guaranteed pods and QoS dirs below */
		LV_QOS,		/* at burstable or besteffort: pods below */
		LV_POD,		/* at a pod: containers below */
		LV_INSIDE,	/* in a container or off the layout: inherit */
	} level;
	bool systemd;
	struct span stem;	/* systemd: the root slice's name without ".slice" */
	const char *qos_word;	/* "burstable" or "besteffort" once below one */
};

static const struct {
	const char *word;
	enum koord_class qos;
} qos_dirs[] = {
	{ "burstable", KC_LS },
	{ "besteffort", KC_BE },
};

/* Runtimes' container cgroup prefixes (systemd scopes; CRI-O also under cgroupfs). */
static const char *const runtime_prefixes[] = {
	"docker-", "cri-containerd-", "crio-", "pouch-",
};

/*
 * cgroupfs: "kubepods". systemd: "kubepods.slice", or "<parent>-kubepods.slice"
 * when kubelet runs with --cgroup-root below a slice (systemd names a slice
 * after all its ancestors).
 */
static bool kube_root(struct kube_walk *w, struct span c)
{
	struct span stem;

	if (span_is(c, "kubepods")) {
		w->systemd = false;
		return true;
	}
	if (!span_eat_tail(&c, ".slice"))
		return false;
	stem = c;
	if (!span_is(c, "kubepods") && !span_eat_tail(&c, "-kubepods"))
		return false;
	w->systemd = true;
	w->stem = stem;
	return true;
}

/*
 * systemd: strip "<stem>-[<qos>-]" and ".slice", leaving the name cgroupfs
 * would have used ("burstable", "pod<uid>").
 */
static bool slice_unwrap(const struct kube_walk *w, struct span *c)
{
	if (!w->systemd)
		return true;
	return span_eat_tail(c, ".slice") && span_eat_n(c, w->stem.p, w->stem.len) &&
	       span_eat(c, "-") &&
	       (!w->qos_word || (span_eat(c, w->qos_word) && span_eat(c, "-")));
}

static bool kube_qos_dir(struct kube_walk *w, struct span c, enum koord_class *qos)
{
	size_t i;

	if (!slice_unwrap(w, &c))
		return false;
	for (i = 0; i < sizeof(qos_dirs) / sizeof(qos_dirs[0]); i++) {
		if (span_is(c, qos_dirs[i].word)) {
			w->qos_word = qos_dirs[i].word;
			*qos = qos_dirs[i].qos;
			return true;
		}
	}
	return false;
}

static bool kube_pod_dir(const struct kube_walk *w, struct span c, char uid[64])
{
	return slice_unwrap(w, &c) && span_eat(&c, "pod") &&
	       parse_pod_uid(c, w->systemd ? '_' : '-', uid);
}

/* systemd: "<runtime>-<id>.scope"; cgroupfs: the bare id, or "crio-<id>". */
static bool kube_container_dir(const struct kube_walk *w, struct span c,
			       char *cid, size_t size)
{
	bool prefixed = false;
	size_t i;

	for (i = 0; i < sizeof(runtime_prefixes) / sizeof(runtime_prefixes[0]); i++) {
		if (span_eat(&c, runtime_prefixes[i])) {
			prefixed = true;
			break;
		}
	}
	if (w->systemd && !(prefixed && span_eat_tail(&c, ".scope")))
		return false;
	if (c.len >= size || !span_is_hex(c))
		return false;
	span_copy(cid, c);
	return true;
}

/* Descend one component; @id holds the parent's identity and becomes the child's. */
static void kube_step(struct kube_walk *w, struct span c, struct cg_identity *id)
{
	enum koord_class qos;

	switch (w->level) {
	case LV_OUTSIDE:
		if (kube_root(w, c)) {
			/* The root holds kubelet's own pieces; its pods are classed below. */
			id->kind = CG_QOS_ROOT;
			w->level = LV_ROOT;
		}
		return;
	case LV_ROOT:
	case LV_QOS:
		if (w->level == LV_ROOT && kube_qos_dir(w, c, &qos)) {
			id->kind = CG_QOS_ROOT;
			id->qos = qos;
			w->level = LV_QOS;
			return;
		}
		if (kube_pod_dir(w, c, id->pod_uid)) {
			id->kind = CG_POD;
			if (w->level == LV_ROOT)
				id->qos = KC_LSR;	/* guaranteed, as Koordinator maps it */
			w->level = LV_POD;
			return;
		}
		break;
	case LV_POD:
		if (kube_container_dir(w, c, id->container_id, sizeof(id->container_id))) {
			id->kind = CG_CONTAINER;
			w->level = LV_INSIDE;
			return;
		}
		break;
	case LV_INSIDE:
		return;
	}
	/* Off the layout: keep the class (and pod) of the level we left it at. */
	id->kind = CG_OTHER;
	w->level = LV_INSIDE;
}

void classify_path(const char *path, struct cg_identity *id)
{
	struct kube_walk w = { .level = LV_OUTSIDE };
	struct span c;

	memset(id, 0, sizeof(*id));
	id->qos = KC_SYSTEM;
	id->kind = CG_OTHER;
	if (!path)
		return;
	while (next_component(&path, &c)) {
		/*
		 * A YARN container is BE wherever NodeManager put it, even
		 * inside a pod's container; everything below it is its own.
		 */
		if (is_yarn_container(c) && c.len < sizeof(id->container_id)) {
			id->kind = CG_YARN;
			id->qos = KC_BE;
			span_copy(id->container_id, c);
			return;
		}
		kube_step(&w, c, id);
	}
}

__attribute__((format(printf, 4, 5)))
static int rule_error(char *err, size_t errlen, const char *spec, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
		snprintf(err, errlen, "bad --class rule \"%s\": %s", spec, why);
	}
	return -EINVAL;
}

int class_rules_add(struct class_rules *rules, const char *spec, char *err, size_t errlen)
{
	const char *eq, *bad_qos = NULL;
	struct class_rule *v;
	char *glob;
	int qos = -1;

	/* The glob may itself hold '=': split where a valid QoS name follows. */
	for (eq = strchr(spec, '='); eq; eq = strchr(eq + 1, '=')) {
		qos = qos_from_name(eq + 1);
		if (qos >= 0)
			break;
		bad_qos = eq + 1;
	}
	if (!eq && !bad_qos)
		return rule_error(err, errlen, spec, "missing '=' (want GLOB=QOS)");
	if (!eq)
		return rule_error(err, errlen, spec,
				  "unknown QoS \"%s\" (want LSE, LSR, LS, BE or SYSTEM)", bad_qos);
	if (eq == spec)
		return rule_error(err, errlen, spec, "empty glob");

	glob = strndup(spec, eq - spec);
	if (!glob)
		return -ENOMEM;
	v = realloc(rules->v, (rules->n + 1) * sizeof(*v));
	if (!v) {
		free(glob);
		return -ENOMEM;
	}
	v[rules->n].glob = glob;
	v[rules->n].qos = qos;
	rules->v = v;
	rules->n++;
	return 0;
}

void class_rules_free(struct class_rules *rules)
{
	size_t i;

	for (i = 0; i < rules->n; i++)
		free(rules->v[i].glob);
	free(rules->v);
	rules->v = NULL;
	rules->n = 0;
}

void classify(const struct class_rules *rules, const char *path, struct cg_identity *id)
{
	size_t i;

	classify_path(path, id);
	if (!rules || !path)
		return;
	for (i = 0; i < rules->n; i++) {
		if (!fnmatch(rules->v[i].glob, path, 0)) {
			id->qos = rules->v[i].qos;
			return;
		}
	}
}
