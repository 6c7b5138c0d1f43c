/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The JSON configuration (docs/config.md).
 *
 * Every field is described once in a table: its key, where it lands in
 * struct koord_config, its type and its range. One walker reads a section
 * against its table, so each field is type- and range-checked the same way
 * and every message names the file, the field's full path and the reason.
 * Rules that tie fields together run after their section is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <json-c/json.h>
#include "config.h"
#include "log.h"
#include "quantity.h"
#include "suppress.h"

#define CONFIG_FILE_MAX	(4 << 20)
#define PATH_LEN	256

/* Enum fields are stored through an int pointer. */
_Static_assert(sizeof(enum suppress_policy) == sizeof(int), "enum size");
_Static_assert(sizeof(enum evict_backend) == sizeof(int), "enum size");
_Static_assert(sizeof(enum koord_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum wakeup_by) == sizeof(int), "enum size");

struct ctx {
	const char *name;		/* the file, for messages */
	char *err;
	size_t errlen;
	struct koord_config *c;
	char koordbpf_at[PATH_LEN];	/* where koordBPF was read, "" until then */
	bool lenient;			/* reading a section Koordinator validates */
};

struct field;
typedef int (*read_fn)(struct ctx *x, const struct field *f, const char *path,
		       struct json_object *v);

/* Bounds of a number field that exclude the bound itself. */
#define OPEN_MIN	1u
#define OPEN_MAX	2u
#define NO_MAX		HUGE_VAL

struct field {
	const char *key;
	read_fn read;
	size_t off;			/* into struct koord_config */
	double min, max;		/* numbers */
	unsigned int open;		/* OPEN_MIN | OPEN_MAX */
	const void *arg;		/* enum names, a section, a note */
	const char *(*check)(const char *s);	/* strings: NULL or why @s is bad */
};

struct section {
	const struct field *fields;	/* ends with a NULL key */
	const char *unknown_note;	/* unknown keys: noted with this, or refused if NULL */
	int (*check)(struct ctx *x, const char *path);	/* rules across fields */
	/*
	 * Koordinator's: a value its validator lets through that koord-bpf
	 * does not support is ignored and enforcement goes off (the daemon
	 * measures only), not the file refused: a NodeSLO the cluster accepted
	 * must not crash-loop the daemon. Types are still checked (the CRD's
	 * schema checks them too).
	 */
	bool lenient;
};

static int fail(struct ctx *x, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct ctx *x, const char *path, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (x->err && x->errlen)
		snprintf(x->err, x->errlen, "%s: %s%s%s", x->name, path, *path ? ": " : "", why);
	return -EINVAL;
}

/*
 * A value out of what koord-bpf supports: refused, or, in a lenient
 * section, noted and ignored (returns 1: leave the field as it was).
 */
static int unsupported(struct ctx *x, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int unsupported(struct ctx *x, const char *path, const char *fmt, ...)
{
	struct koord_config *c = x->c;
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (!x->lenient)
		return fail(x, path, "%s", why);
	log_warn("%s: %s: %s: not supported by koord-bpf, ignored (enforcement off)", x->name,
		 path, why);
	if (!c->ignored++)
		snprintf(c->ignored_first, sizeof(c->ignored_first), "%s: %s", path, why);
	return 1;
}

static int fail_nomem(struct ctx *x, const char *path)
{
	fail(x, path, "out of memory");
	return -ENOMEM;
}

/* A path cut short still names its start; mark where it was cut. */
static void mark_cut(char *out, int n)
{
	if (n >= PATH_LEN)
		strcpy(out + PATH_LEN - 4, "...");
}

static void join(char *out, const char *path, const char *key)
{
	mark_cut(out, snprintf(out, PATH_LEN, "%s%s%s", path, *path ? "." : "", key));
}

static void join_index(char *out, const char *path, size_t i)
{
	mark_cut(out, snprintf(out, PATH_LEN, "%s[%zu]", path, i));
}

/* A value as the message shows it: scalars as JSON, containers by kind. */
static const char *shown(struct json_object *v, char *buf, size_t len)
{
	switch (json_object_get_type(v)) {
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	default:
		snprintf(buf, len, "%s", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		return buf;
	}
}

static int type_error(struct ctx *x, const char *path, const char *want, struct json_object *v)
{
	char buf[64];

	return fail(x, path, "must be %s, got %s", want, shown(v, buf, sizeof(buf)));
}

static void *field_ptr(struct ctx *x, const struct field *f)
{
	return (char *)x->c + f->off;
}

static int get_string(struct ctx *x, const char *path, struct json_object *v, const char **out)
{
	if (!json_object_is_type(v, json_type_string))
		return type_error(x, path, "a string", v);
	*out = json_object_get_string(v);
	/* "\u0000" would silently cut the string short in C. */
	if (strlen(*out) != (size_t)json_object_get_string_len(v))
		return fail(x, path, "must not contain NUL characters");
	return 0;
}

/* Integers may be written 65.0 (some encoders do); 65.5 is not an integer. */
static int get_number(struct ctx *x, const char *path, struct json_object *v, bool integer,
		      double *out)
{
	enum json_type t = json_object_get_type(v);
	double d;

	if (t != json_type_int && t != json_type_double)
		return type_error(x, path, integer ? "an integer" : "a number", v);
	d = json_object_get_double(v);
	if (!isfinite(d))
		return type_error(x, path, "a finite number", v);
	if (integer && d != trunc(d))
		return type_error(x, path, "an integer", v);
	*out = d;
	return 0;
}

static int check_range(struct ctx *x, const struct field *f, const char *path,
		       struct json_object *v, double d)
{
	char buf[64];

	bool lo_ok = f->open & OPEN_MIN ? d > f->min : d >= f->min;
	bool hi_ok = f->open & OPEN_MAX ? d < f->max : d <= f->max;

	if (lo_ok && hi_ok)
		return 0;
	if (f->max == NO_MAX || (!lo_ok && f->max == INT_MAX))
		return unsupported(x, path, "must be %s %.15g, got %s",
				   f->open & OPEN_MIN ? ">" : ">=", f->min,
				   shown(v, buf, sizeof(buf)));
	return unsupported(x, path, "must be in %c%.15g, %.15g%c, got %s",
			   f->open & OPEN_MIN ? '(' : '[', f->min, f->max,
			   f->open & OPEN_MAX ? ')' : ']', shown(v, buf, sizeof(buf)));
}

static int read_number(struct ctx *x, const struct field *f, const char *path,
		       struct json_object *v, bool integer, double *d)
{
	int ret = get_number(x, path, v, integer, d);

	return ret ? ret : check_range(x, f, path, v, *d);
}

/* read_int, read_num: 0 also when the value was ignored (unsupported() gave 1) */
static int read_int(struct ctx *x, const struct field *f, const char *path, struct json_object *v)
{
	double d;
	int ret = read_number(x, f, path, v, true, &d);

	if (!ret)
		*(int *)field_ptr(x, f) = (int)d;
	return ret > 0 ? 0 : ret;
}

static int read_num(struct ctx *x, const struct field *f, const char *path, struct json_object *v)
{
	double d;
	int ret = read_number(x, f, path, v, false, &d);

	if (!ret)
		*(double *)field_ptr(x, f) = d;
	return ret > 0 ? 0 : ret;
}

/* A Kubernetes quantity ("2", "1500m", "4Gi") or a plain number, as a ResourceList holds it. */
static int read_quantity(struct ctx *x, const struct field *f, const char *path,
			 struct json_object *v)
{
	double d;

	if (json_object_is_type(v, json_type_string)) {
		if (quantity_parse(json_object_get_string(v), &d))
			return fail(x, path, "not a quantity (\"2\", \"500m\", \"4Gi\"): \"%s\"",
				    json_object_get_string(v));
	} else if (get_number(x, path, v, false, &d)) {
		return -EINVAL;
	} else if (d < 0) {
		return fail(x, path, "must be >= 0, got %g", d);
	}
	*(double *)field_ptr(x, f) = d;
	return 0;
}

/* A CPU list ("0-1,4"), as node.koordinator.sh/reservation's reservedCPUs. */
static int read_cpu_list(struct ctx *x, const struct field *f, const char *path,
			 struct json_object *v)
{
	if (!json_object_is_type(v, json_type_string))
		return type_error(x, path, "a CPU list string (\"0-1,4\")", v);
	if (cpuset_parse(json_object_get_string(v), field_ptr(x, f)))
		return fail(x, path, "not a CPU list (\"0-1,4\"): \"%s\"",
			    json_object_get_string(v));
	return 0;
}

/* A key of an earlier version, refused with where its value goes now. */
static int read_moved(struct ctx *x, const struct field *f, const char *path, struct json_object *v)
{
	return fail(x, path, "%s", (const char *)f->arg);
}

static int read_bool(struct ctx *x, const struct field *f, const char *path, struct json_object *v)
{
	if (!json_object_is_type(v, json_type_boolean))
		return type_error(x, path, "true or false", v);
	*(bool *)field_ptr(x, f) = json_object_get_boolean(v);
	return 0;
}

/* Frees what *@slot held: defaults are allocated like everything else. */
static int set_string(struct ctx *x, const char *path, char **slot, const char *s)
{
	char *dup = strdup(s);

	if (!dup)
		return fail_nomem(x, path);
	free(*slot);
	*slot = dup;
	return 0;
}

static int read_str(struct ctx *x, const struct field *f, const char *path, struct json_object *v)
{
	const char *s = NULL, *why;
	int ret = get_string(x, path, v, &s);

	if (ret)
		return ret;
	why = f->check ? f->check(s) : NULL;
	if (why)
		return fail(x, path, "%s, got \"%s\"", why, s);
	return set_string(x, path, field_ptr(x, f), s);
}

static int read_enum(struct ctx *x, const struct field *f, const char *path, struct json_object *v)
{
	const char *const *names = f->arg;
	char want[128] = "";
	const char *s = NULL;
	size_t len = 0;
	int i, ret = get_string(x, path, v, &s);

	if (ret)
		return ret;
	for (i = 0; names[i]; i++) {
		if (!strcmp(s, names[i])) {
			*(int *)field_ptr(x, f) = i;
			return 0;
		}
		len += snprintf(want + len, sizeof(want) - len, "%s\"%s\"",
				i ? (names[i + 1] ? ", " : " or ") : "", names[i]);
	}
	ret = unsupported(x, path, "must be %s, got \"%s\"", want, s);
	return ret > 0 ? 0 : ret;
}

static int read_note(struct ctx *x, const struct field *f, const char *path, struct json_object *v)
{
	log_info("%s: %s: %s", x->name, path, (const char *)f->arg);
	return 0;
}

static const struct field *find_field(const struct field *fields, const char *key, bool icase)
{
	const struct field *f;

	for (f = fields; f->key; f++)
		if (icase ? !strcasecmp(f->key, key) : !strcmp(f->key, key))
			return f;
	return NULL;
}

static int unknown_field(struct ctx *x, const struct section *s, const char *path,
			 const char *key)
{
	const struct field *near = find_field(s->fields, key, true);
	int ret;

	if (s->unknown_note) {
		log_info("%s: %s: %s", x->name, path, s->unknown_note);
		return 0;
	}
	if (near)
		ret = unsupported(x, path, "unknown field (did you mean \"%s\"?)", near->key);
	else
		ret = unsupported(x, path, "unknown field");
	return ret > 0 ? 0 : ret;
}

/* The walker: every key of @obj against the table of @s; null means the default. */
static int read_object(struct ctx *x, const struct section *s, const char *path,
		       struct json_object *obj)
{
	const struct field *f;
	char sub[PATH_LEN];
	bool was = x->lenient;
	int ret = 0;

	if (!json_object_is_type(obj, json_type_object))
		return type_error(x, path, "an object", obj);
	x->lenient = s->lenient;
	json_object_object_foreach(obj, key, v) {
		join(sub, path, key);
		f = find_field(s->fields, key, false);
		if (!f)
			ret = unknown_field(x, s, sub, key);
		else if (json_object_is_type(v, json_type_null))
			ret = 0;
		else
			ret = f->read(x, f, sub, v);
		if (ret)
			break;
	}
	if (!ret && s->check)
		ret = s->check(x, path);
	x->lenient = was;
	return ret;
}

static int read_section(struct ctx *x, const struct field *f, const char *path,
			struct json_object *v)
{
	return read_object(x, f->arg, path, v);
}

/* Items of an array field, with the count bounded; @min 0 allows []. */
static int get_array(struct ctx *x, const char *path, struct json_object *v, size_t min,
		     size_t max, size_t *n)
{
	if (!json_object_is_type(v, json_type_array))
		return type_error(x, path, "an array", v);
	*n = json_object_array_length(v);
	if (*n < min)
		return fail(x, path, "must not be empty");
	if (*n > max)
		return fail(x, path, "at most %zu entries, got %zu", max, *n);
	return 0;
}

static const char *check_listen(const char *s)
{
	return strchr(s, ':') ? NULL : "must be HOST:PORT";
}

static const char *check_health_listen(const char *s)
{
	return !*s || strchr(s, ':') ? NULL : "must be \"\" (off) or HOST:PORT";
}

static const char *check_abs_path(const char *s)
{
	return s[0] == '/' ? NULL : "must be an absolute path";
}

/* A cgroup path below a hierarchy's root: "/" or "/a/b", nothing that climbs out. */
static const char *check_cgroup_path(const char *s)
{
	const char *p, *end;
	size_t len;

	if (s[0] != '/')
		return "must start with '/'";
	if (strlen(s) >= PATH_MAX)
		return "is too long";
	if (!strcmp(s, "/"))
		return NULL;
	for (p = s + 1;; p = end + 1) {
		end = strchrnul(p, '/');
		len = end - p;
		if (!len)
			return "must not have empty components";
		if ((len == 1 && p[0] == '.') || (len == 2 && !strncmp(p, "..", 2)))
			return "must not have \".\" or \"..\" components";
		if (!*end)
			return NULL;
	}
}

static void free_roots(struct koord_config *c)
{
	size_t i;

	for (i = 0; i < c->ncgroup_roots; i++) {
		free(c->cgroup_roots[i]);
		c->cgroup_roots[i] = NULL;
	}
	c->ncgroup_roots = 0;
}

static void free_hook(struct koord_config *c)
{
	size_t i;

	for (i = 0; c->eviction.hook[i]; i++) {
		free(c->eviction.hook[i]);
		c->eviction.hook[i] = NULL;
	}
}

/* The given list replaces the default one. */
static int read_roots(struct ctx *x, const struct field *f, const char *path,
		      struct json_object *v)
{
	struct koord_config *c = x->c;
	const char *s = NULL, *why;
	char sub[PATH_LEN];
	size_t i, j, n;
	int ret = get_array(x, path, v, 1, CONFIG_ROOTS_MAX, &n);

	if (ret)
		return ret;
	free_roots(c);
	for (i = 0; i < n; i++) {
		join_index(sub, path, i);
		ret = get_string(x, sub, json_object_array_get_idx(v, i), &s);
		if (ret)
			return ret;
		why = check_cgroup_path(s);
		if (why)
			return fail(x, sub, "%s, got \"%s\"", why, s);
		for (j = 0; j < i; j++)
			if (!strcmp(c->cgroup_roots[j], s))
				return fail(x, sub, "\"%s\" is listed twice", s);
		c->cgroup_roots[i] = strdup(s);
		if (!c->cgroup_roots[i])
			return fail_nomem(x, sub);
		c->ncgroup_roots++;
	}
	return 0;
}

static int read_rule(struct ctx *x, const char *path, struct json_object *r)
{
	const char *glob = NULL, *qos = NULL;
	char sub[PATH_LEN], why[256], *spec;
	int ret = 0;

	if (!json_object_is_type(r, json_type_object))
		return type_error(x, path, "an object {\"glob\": ..., \"qos\": ...}", r);
	json_object_object_foreach(r, key, v) {
		join(sub, path, key);
		if (!strcmp(key, "glob"))
			ret = get_string(x, sub, v, &glob);
		else if (!strcmp(key, "qos"))
			ret = get_string(x, sub, v, &qos);
		else
			ret = fail(x, sub, "unknown field (want \"glob\" and \"qos\")");
		if (ret)
			return ret;
	}
	if (!glob || !*glob) {
		join(sub, path, "glob");
		return fail(x, sub, "a non-empty glob is required");
	}
	join(sub, path, "qos");
	if (!qos)
		return fail(x, sub, "required");
	/* Checked here so "GLOB=QOS" below can only split at the last '='. */
	if (qos_from_name(qos) < 0)
		return fail(x, sub, "must be LSE, LSR, LS, BE or SYSTEM, got \"%s\"", qos);
	if (asprintf(&spec, "%s=%s", glob, qos) < 0)
		return fail_nomem(x, path);
	ret = class_rules_add(&x->c->rules, spec, why, sizeof(why));
	free(spec);
	if (ret == -ENOMEM)
		return fail_nomem(x, path);
	return ret ? fail(x, path, "%s", why) : 0;
}

static int read_rules(struct ctx *x, const struct field *f, const char *path,
		      struct json_object *v)
{
	char sub[PATH_LEN];
	size_t i, n;
	int ret = get_array(x, path, v, 0, SIZE_MAX, &n);

	for (i = 0; !ret && i < n; i++) {
		join_index(sub, path, i);
		ret = read_rule(x, sub, json_object_array_get_idx(v, i));
	}
	return ret;
}

/* argv of the eviction hook; [] means none. */
static int read_hook(struct ctx *x, const struct field *f, const char *path,
		     struct json_object *v)
{
	char **hook = x->c->eviction.hook;
	char sub[PATH_LEN];
	const char *s = NULL;
	size_t i, n;
	int ret = get_array(x, path, v, 0, CONFIG_HOOK_ARGS_MAX, &n);

	if (ret)
		return ret;
	free_hook(x->c);
	for (i = 0; i < n; i++) {
		join_index(sub, path, i);
		ret = get_string(x, sub, json_object_array_get_idx(v, i), &s);
		if (ret)
			return ret;
		if (!i && s[0] != '/')
			return fail(x, sub, "the program must be an absolute path, got \"%s\"", s);
		hook[i] = strdup(s);
		if (!hook[i])
			return fail_nomem(x, sub);
	}
	return 0;
}

/*
 * Koordinator's validator lets such bands through and koordlet leaves BE CPU
 * eviction off; here they are unsupported (and the band unset).
 */
static int check_be(struct ctx *x, const char *path)
{
	static const char lower_key[] = "cpuEvictBESatisfactionLowerPercent";
	static const char upper_key[] = "cpuEvictBESatisfactionUpperPercent";
	struct be_thresholds *be = &x->c->be;
	int lower = be->cpu_evict_be_satisfaction_lower_percent;
	int upper = be->cpu_evict_be_satisfaction_upper_percent;
	char sub[PATH_LEN];
	int ret = 0;

	if ((lower < 0) != (upper < 0)) {
		join(sub, path, lower < 0 ? lower_key : upper_key);
		ret = unsupported(x, sub, "required with %s", lower < 0 ? upper_key : lower_key);
	} else if (upper < lower) {
		join(sub, path, upper_key);
		ret = unsupported(x, sub, "must be >= %s (%d), got %d", lower_key, lower, upper);
	}
	if (ret < 0)
		return ret;
	if (ret)
		be->cpu_evict_be_satisfaction_lower_percent =
			be->cpu_evict_be_satisfaction_upper_percent = -1;
	if (be->memory_evict_lower_percent >= be->memory_evict_threshold_percent) {
		join(sub, path, "memoryEvictLowerPercent");
		ret = unsupported(x, sub, "must be < memoryEvictThresholdPercent (%d), got %d",
				  be->memory_evict_threshold_percent,
				  be->memory_evict_lower_percent);
		if (ret < 0)
			return ret;
		be->memory_evict_lower_percent = -1;
	}
	return 0;
}

static int check_eviction(struct ctx *x, const char *path)
{
	char sub[PATH_LEN];

	if (x->c->eviction.backend == EVICT_API && !*x->c->eviction.api.url) {
		join(sub, path, "api.url");
		return fail(x, sub, "required when backend is \"api\"");
	}
	if (x->c->eviction.backend != EVICT_HOOK || x->c->eviction.hook[0])
		return 0;
	join(sub, path, "hook");
	return fail(x, sub, "required when backend is \"hook\"");
}

#define OFF(m)			offsetof(struct koord_config, m)
#define INT(k, m, lo, hi, o)	{ .key = k, .read = read_int, .off = OFF(m), .min = lo, .max = hi, .open = o }
#define NUM(k, m, lo, hi, o)	{ .key = k, .read = read_num, .off = OFF(m), .min = lo, .max = hi, .open = o }
#define BOOL(k, m)		{ .key = k, .read = read_bool, .off = OFF(m) }
#define STR(k, m, chk)		{ .key = k, .read = read_str, .off = OFF(m), .check = chk }
#define ENUM(k, m, names)	{ .key = k, .read = read_enum, .off = OFF(m), .arg = names }
#define CUSTOM(k, fn)		{ .key = k, .read = fn }
#define QUANTITY(k, m)		{ .key = k, .read = read_quantity, .off = OFF(m) }
#define MOVED(k, where)		{ .key = k, .read = read_moved, .arg = where }
#define NOTE(k, why)		{ .key = k, .read = read_note, .arg = why }
#define SECTION(k, table, chk)	{ .key = k, .read = read_section,			\
				  .arg = &(const struct section){ .fields = table, .check = chk } }

static const char *const suppress_policies[] = { "cpuset", "cfsQuota", NULL };
static const char *const evict_backends[] = { "kill", "hook", "api", NULL };
static const char *const modes[] = { "enforce", "advise", NULL };
static const char *const bucket_policies[] = { "online", "all", NULL };
static const char *const wakeup_bys[] = { "weight", "idle", NULL };

#define NOT_IMPLEMENTED	"not implemented by koord-bpf, ignored"
#define NOT_USED	"not used by koord-bpf, ignored"

static const struct field be_fields[] = {
	BOOL("enable", be.enable),
	INT("cpuSuppressThresholdPercent", be.cpu_suppress_threshold_percent, 0, 100, 0),
	INT("cpuSuppressMinPercent", be.cpu_suppress_min_percent, 0, 100, 0),
	ENUM("cpuSuppressPolicy", be.cpu_suppress_policy, suppress_policies),
	INT("cpuEvictBESatisfactionLowerPercent", be.cpu_evict_be_satisfaction_lower_percent,
	    0, 60, OPEN_MIN),
	INT("cpuEvictBESatisfactionUpperPercent", be.cpu_evict_be_satisfaction_upper_percent,
	    0, 100, OPEN_MIN | OPEN_MAX),
	INT("cpuEvictBEUsageThresholdPercent", be.cpu_evict_be_usage_threshold_percent,
	    0, 100, OPEN_MIN),
	INT("cpuEvictTimeWindowSeconds", be.cpu_evict_time_window_seconds, 0, INT_MAX, OPEN_MIN),
	INT("memoryEvictThresholdPercent", be.memory_evict_threshold_percent, 0, 100, OPEN_MIN),
	INT("memoryEvictLowerPercent", be.memory_evict_lower_percent, 0, 100, OPEN_MAX),
	/* Real NodeSLO fields for strategies koord-bpf does not run. */
	NOTE("cpuEvictThresholdPercent", NOT_IMPLEMENTED),
	NOTE("cpuEvictLowerPercent", NOT_IMPLEMENTED),
	NOTE("cpuAllocatableEvictThresholdPercent", NOT_IMPLEMENTED),
	NOTE("cpuAllocatableEvictLowerPercent", NOT_IMPLEMENTED),
	NOTE("memoryAllocatableEvictThresholdPercent", NOT_IMPLEMENTED),
	NOTE("memoryAllocatableEvictLowerPercent", NOT_IMPLEMENTED),
	NOTE("cpuEvictPolicy", NOT_IMPLEMENTED),
	NOTE("evictEnabledPriorityThreshold", NOT_IMPLEMENTED),
	NOTE("allocatableEvictPriorityThreshold", NOT_IMPLEMENTED),
	{ 0 }
};

static const struct field interference_fields[] = {
	NUM("victimP99WaitUs", interference.victim_p99_wait_us, 0, NO_MAX, OPEN_MIN),
	NUM("victimP999WaitUs", interference.victim_p999_wait_us, 0, NO_MAX, OPEN_MIN),
	NUM("beStealPercent", interference.be_steal_percent, 0, 100, OPEN_MIN),
	INT("sustainedWindows", interference.sustained_windows, 1, 600, 0),
	{ 0 }
};

static const struct field throttle_fields[] = {
	BOOL("enable", throttle.enable),
	NUM("cutFactor", throttle.cut_factor, 0, 1, OPEN_MIN | OPEN_MAX),
	NUM("floorCores", throttle.floor_cores, 0, NO_MAX, OPEN_MIN),
	NUM("recoveryStepCores", throttle.recovery_step_cores, 0, NO_MAX, OPEN_MIN),
	INT("quietWindows", throttle.quiet_windows, 1, 600, 0),
	INT("maxCulprits", throttle.max_culprits, 1, 64, 0),
	{ 0 }
};

static const struct field effect_fields[] = {
	INT("windows", effect.windows, 1, 60, 0),
	NUM("worsePercent", effect.worse_percent, 0, NO_MAX, 0),
	NUM("holdOffSeconds", effect.hold_off_s, 0, NO_MAX, 0),
	BOOL("keepOff", effect.keep_off),
	{ 0 }
};

static const char *check_url(const char *s)
{
	return !*s || !strncmp(s, "https://", 8) || !strncmp(s, "http://", 7) ? NULL :
	       "must be \"\" (off) or an http:// or https:// URL";
}

static const char *check_abs_or_empty(const char *s)
{
	return *s ? check_abs_path(s) : NULL;
}

/* The API server, for backend "api" (the service account's by default). */
static const struct field eviction_api_fields[] = {
	STR("url", eviction.api.url, check_url),
	STR("tokenFile", eviction.api.token_file, check_abs_or_empty),
	STR("caFile", eviction.api.ca_file, check_abs_or_empty),
	{ 0 }
};

static const struct field eviction_fields[] = {
	BOOL("enable", eviction.enable),
	ENUM("backend", eviction.backend, evict_backends),
	CUSTOM("hook", read_hook),
	SECTION("api", eviction_api_fields, NULL),
	INT("maxPerMinute", eviction.max_per_minute, 1, 600, 0),
	NUM("coolDownSeconds", eviction.cool_down_s, 0, NO_MAX, 0),
	NUM("culpritAtFloorSeconds", eviction.culprit_at_floor_s, 0, NO_MAX, OPEN_MIN),
	BOOL("systemPods", eviction.system_pods),
	{ 0 }
};

static const struct field batch_fields[] = {
	INT("cpuReclaimThresholdPercent", batch.cpu_reclaim_threshold_percent, 0, 100, 0),
	INT("memoryReclaimThresholdPercent", batch.memory_reclaim_threshold_percent, 0, 100, 0),
	INT("metricAggregateDurationSeconds", batch.aggregate_seconds, 1, 3600, 0),
	MOVED("reservedMemoryBytes", "moved: koordBPF.reservation.resources.memory"),
	{ 0 }
};

static const struct field reservation_resources_fields[] = {
	QUANTITY("cpu", reservation.cpu),
	QUANTITY("memory", reservation.memory),
	{ 0 }
};

/* node.koordinator.sh/reservation's shape, so the node's annotation can be pasted in. */
static const struct field reservation_fields[] = {
	{ .key = "resources", .read = read_section,
	  .arg = &(const struct section){ .fields = reservation_resources_fields,
					  .unknown_note = NOT_USED } },
	{ .key = "reservedCPUs", .read = read_cpu_list, .off = OFF(reservation.cpus) },
	NOTE("applyPolicy", NOT_USED),
	{ 0 }
};

static const struct field kubelet_fields[] = {
	STR("url", kubelet.url, check_url),
	STR("tokenFile", kubelet.token_file, check_abs_or_empty),
	STR("caFile", kubelet.ca_file, check_abs_or_empty),
	STR("cpuManagerStateFile", kubelet.cpu_manager_state, check_abs_or_empty),
	BOOL("insecureSkipVerify", kubelet.insecure),
	NUM("intervalSeconds", kubelet.interval_s, 1, 3600, 0),
	NUM("timeoutSeconds", kubelet.timeout_s, 0, 60, OPEN_MIN),
	{ 0 }
};

static const struct field metrics_fields[] = {
	ENUM("histogramBuckets", metrics.buckets, bucket_policies),
	{ 0 }
};

static const struct field yarn_fields[] = {
	STR("nodeManagerURL", yarn.nm_url, check_url),
	NUM("intervalSeconds", yarn.interval_s, 1, 3600, 0),
	NUM("timeoutSeconds", yarn.timeout_s, 0, 60, OPEN_MIN),
	{ 0 }
};

static const struct field koordbpf_fields[] = {
	ENUM("mode", mode, modes),
	NUM("period", period_s, 0.1, 3600, 0),
	STR("listen", listen, check_listen),
	STR("healthListen", health_listen, check_health_listen),
	STR("stateDir", state_dir, check_abs_path),
	CUSTOM("cgroupRoots", read_roots),
	CUSTOM("classRules", read_rules),
	BOOL("beWakeupPriority", be_wakeup_priority),
	ENUM("beWakeupPriorityBy", wakeup_by, wakeup_bys),
	BOOL("reactOnLongWaits", react_on_long_waits),
	NUM("reactWaitUs", react_wait_us, 0, 5000, 0),
	MOVED("reservedCPUs", "moved: a number of cores is koordBPF.reservation.resources.cpu; "
	      "reservation.reservedCPUs is a CPU list, as in node.koordinator.sh/reservation"),
	SECTION("reservation", reservation_fields, NULL),
	INT("suppressSmoothingWindows", suppress_smoothing_windows, 1, 60, 0),
	SECTION("interference", interference_fields, NULL),
	SECTION("throttle", throttle_fields, NULL),
	SECTION("effect", effect_fields, NULL),
	SECTION("eviction", eviction_fields, check_eviction),
	SECTION("batch", batch_fields, NULL),
	SECTION("kubelet", kubelet_fields, NULL),
	SECTION("yarn", yarn_fields, NULL),
	SECTION("metrics", metrics_fields, NULL),
	{ 0 }
};

static const struct section koordbpf_section = { .fields = koordbpf_fields };

/* Accepted beside the spec's other sections, and in spec.extensions as a cluster keeps it. */
static int read_koordbpf(struct ctx *x, const struct field *f, const char *path,
			 struct json_object *v)
{
	if (x->koordbpf_at[0])
		return fail(x, path, "given twice (also as %s)", x->koordbpf_at);
	snprintf(x->koordbpf_at, sizeof(x->koordbpf_at), "%s", path);
	return read_object(x, &koordbpf_section, path, v);
}

/* Only koordlet's "coreSched" sets cpu.idle; any other string is not it (as in koordlet). */
static int read_cpu_policy(struct ctx *x, const struct field *f, const char *path,
			   struct json_object *v)
{
	if (!json_object_is_type(v, json_type_string))
		return type_error(x, path, "a string", v);
	x->c->cpu_qos.core_sched = !strcmp(json_object_get_string(v), "coreSched");
	return 0;
}

static const struct field qos_policies_fields[] = {
	CUSTOM("cpuPolicy", read_cpu_policy),
	{ 0 }
};

/* koordlet reads schedIdle as "is it 1": any integer is taken, as there. */
static const struct field be_cpu_qos_fields[] = {
	BOOL("enable", cpu_qos.be_enable),
	INT("schedIdle", cpu_qos.be_sched_idle, INT_MIN, INT_MAX, 0),
	NOTE("groupIdentity", "cpu.bvt_warp_ns (Anolis kernels): koord-bpf writes none, ignored"),
	NOTE("coreExpeller", NOT_USED),
	{ 0 }
};

static const struct field be_class_fields[] = {
	{ .key = "cpuQOS", .read = read_section,
	  .arg = &(const struct section){ .fields = be_cpu_qos_fields, .unknown_note = NOT_USED,
					  .lenient = true } },
	{ 0 }
};

/* The BE class's CPU QoS decides who sets its cpu.idle; the rest is koordlet's alone. */
static const struct field qos_strategy_fields[] = {
	{ .key = "policies", .read = read_section,
	  .arg = &(const struct section){ .fields = qos_policies_fields, .unknown_note = NOT_USED } },
	{ .key = "beClass", .read = read_section,
	  .arg = &(const struct section){ .fields = be_class_fields, .unknown_note = NOT_USED } },
	{ 0 }
};

static const struct field extensions_fields[] = {
	CUSTOM("koordBPF", read_koordbpf),
	{ 0 }
};

static const struct field spec_fields[] = {
	{ .key = "resourceUsedThresholdWithBE", .read = read_section,
	  .arg = &(const struct section){ .fields = be_fields, .check = check_be, .lenient = true } },
	CUSTOM("koordBPF", read_koordbpf),
	{ .key = "extensions", .read = read_section,
	  .arg = &(const struct section){ .fields = extensions_fields, .unknown_note = NOT_USED } },
	{ .key = "resourceQOSStrategy", .read = read_section,
	  .arg = &(const struct section){ .fields = qos_strategy_fields, .unknown_note = NOT_USED } },
	NOTE("cpuBurstStrategy", NOT_USED),
	NOTE("systemStrategy", NOT_USED),
	NOTE("hostApplications", NOT_USED),
	{ 0 }
};

/* NodeSLO may grow sections: an unknown one is noted, not refused. */
static const struct section spec_section = {
	.fields = spec_fields, .unknown_note = "not a NodeSLO section koord-bpf knows, ignored"
};

/* The spec itself, or a whole NodeSLO object whose spec is read. */
static int read_top(struct ctx *x, struct json_object *root)
{
	struct json_object *kind = NULL, *spec = NULL;
	char buf[64];
	bool wrapped;

	if (!json_object_is_type(root, json_type_object))
		return fail(x, "", "the top level must be an object (a NodeSLO or its spec), got %s",
			    shown(root, buf, sizeof(buf)));
	/* '|', not '||': every lookup must fill its pointer. */
	wrapped = json_object_object_get_ex(root, "kind", &kind) |
		  json_object_object_get_ex(root, "spec", &spec) |
		  json_object_object_get_ex(root, "apiVersion", NULL);
	if (!wrapped)
		return read_object(x, &spec_section, "", root);
	if (kind && (!json_object_is_type(kind, json_type_string) ||
		     strcmp(json_object_get_string(kind), "NodeSLO")))
		return type_error(x, "kind", "\"NodeSLO\"", kind);
	if (!spec || json_object_is_type(spec, json_type_null)) {
		log_info("%s: spec: missing, all defaults", x->name);
		return 0;
	}
	return read_object(x, &spec_section, "spec", spec);
}

static bool blank(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!strchr(" \t\r\n", text[i]))
			return false;
	return true;
}

/* json-c stops at the offending character; users want a line and a column. */
static int syntax_error(struct ctx *x, const char *text, size_t len, size_t off,
			enum json_tokener_error jerr)
{
	const char *why = jerr == json_tokener_continue ? "unexpected end of input"
							: json_tokener_error_desc(jerr);
	size_t i, line = 1, col = 1;

	for (i = 0; i < off && i < len; i++, col++) {
		if (text[i] == '\n') {
			line++;
			col = 0;
		}
	}
	return fail(x, "", "line %zu, column %zu: %s", line, col, why);
}

static int parse_json(struct ctx *x, const char *text, size_t len, struct json_object **root)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	const char *nul;
	size_t end;

	if (len > CONFIG_FILE_MAX)
		return fail(x, "", "larger than %d MiB", CONFIG_FILE_MAX >> 20);
	if (blank(text, len))
		return fail(x, "", "empty (want a JSON object)");
	/* json-c stops at a NUL byte and would ignore what follows. */
	nul = memchr(text, '\0', len);
	if (nul)
		return syntax_error(x, text, len, nul - text, json_tokener_error_parse_unexpected);
	tok = json_tokener_new();
	if (!tok)
		return fail_nomem(x, "");
	/* Strict: no trailing characters, and the text must be UTF-8. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	*root = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue) {
		/* A NUL ends a number or literal the text ends with ("42"). */
		*root = json_tokener_parse_ex(tok, "", 1);
		if (json_tokener_get_error(tok) == json_tokener_success)
			jerr = json_tokener_success;
		end = len;
	}
	json_tokener_free(tok);
	if (jerr == json_tokener_success)
		return 0;
	json_object_put(*root);
	*root = NULL;
	return syntax_error(x, text, len, end, jerr);
}

void config_defaults(struct koord_config *c)
{
	static const char *const roots[] = { "/kubepods", "/kubepods.slice", "/hadoop-yarn" };
	size_t i;

	memset(c, 0, sizeof(*c));
	c->be = (struct be_thresholds){
		.enable = false,
		.cpu_suppress_threshold_percent = 65,
		.cpu_suppress_min_percent = -1,
		.cpu_suppress_policy = SUPPRESS_CPUSET,
		.cpu_evict_be_satisfaction_lower_percent = -1,
		.cpu_evict_be_satisfaction_upper_percent = -1,
		.cpu_evict_be_usage_threshold_percent = 90,
		.cpu_evict_time_window_seconds = -1,
		.memory_evict_threshold_percent = 70,
		.memory_evict_lower_percent = -1,
	};
	c->period_s = 1;
	c->listen = strdup("127.0.0.1:9326");
	c->health_listen = strdup("");
	c->state_dir = strdup("/var/lib/koord-bpf");
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		c->cgroup_roots[i] = strdup(roots[i]);
	c->ncgroup_roots = i;
	c->be_wakeup_priority = true;
	c->wakeup_by = WAKEUP_BY_WEIGHT;
	c->react_on_long_waits = true;
	c->react_wait_us = 1000;
	memset(&c->reservation, 0, sizeof(c->reservation));
	c->suppress_smoothing_windows = 3;
	c->interference.victim_p99_wait_us = 1000;
	c->interference.victim_p999_wait_us = 4000;
	c->interference.be_steal_percent = 5;
	c->interference.sustained_windows = 3;
	c->throttle.enable = true;
	c->throttle.cut_factor = 0.5;
	c->throttle.floor_cores = 0.05;
	c->throttle.recovery_step_cores = 0.1;
	c->throttle.quiet_windows = 5;
	c->throttle.max_culprits = 2;
	c->effect.windows = 3;
	c->effect.worse_percent = 10;
	c->effect.hold_off_s = 300;
	c->effect.keep_off = true;
	c->eviction.enable = true;
	c->eviction.backend = EVICT_KILL;
	c->eviction.max_per_minute = 2;
	c->eviction.cool_down_s = 20;
	c->eviction.culprit_at_floor_s = 120;
	c->batch.cpu_reclaim_threshold_percent = 60;
	c->batch.memory_reclaim_threshold_percent = 65;
	c->batch.aggregate_seconds = 300;
	c->eviction.api.url = strdup("https://${KUBERNETES_SERVICE_HOST}:${KUBERNETES_SERVICE_PORT}");
	c->eviction.api.token_file = strdup(SA_TOKEN);
	c->eviction.api.ca_file = strdup(SA_CA);
	c->kubelet.url = strdup("");
	c->kubelet.token_file = strdup(SA_TOKEN);
	c->kubelet.ca_file = strdup(SA_CA);
	c->kubelet.insecure = false;
	c->kubelet.interval_s = 10;
	c->kubelet.timeout_s = 5;
	c->kubelet.cpu_manager_state = strdup("/var/lib/kubelet/cpu_manager_state");
	c->yarn.nm_url = strdup("");
	c->yarn.interval_s = 10;
	c->yarn.timeout_s = 5;
}

double config_reserved_cores(const struct koord_config *c)
{
	int n = CPU_COUNT(&c->reservation.cpus);
	double file = n ? n : c->reservation.cpu;

	return file > c->reservation.node.cpu ? file : c->reservation.node.cpu;
}

double config_reserved_memory(const struct koord_config *c)
{
	double file = c->reservation.memory;

	return file > c->reservation.node.memory ? file : c->reservation.node.memory;
}

void config_reserved_cpus(const struct koord_config *c, cpu_set_t *out)
{
	cpu_set_t file = c->reservation.cpus, node = c->reservation.node.cpus;

	CPU_OR(out, &file, &node);
}

int config_parse_reservation(const char *text, size_t len, struct node_reservation *out,
			     char *err, size_t errlen)
{
	static const char head[] = "{\"koordBPF\": {\"reservation\": ", tail[] = "}}";
	struct koord_config c;
	char *doc = malloc(sizeof(head) + len + sizeof(tail));
	int n, r;

	if (!doc)
		return -ENOMEM;
	memcpy(doc, head, sizeof(head) - 1);
	memcpy(doc + sizeof(head) - 1, text, len);
	memcpy(doc + sizeof(head) - 1 + len, tail, sizeof(tail));
	r = config_parse("node.koordinator.sh/reservation", doc,
			 sizeof(head) - 1 + len + sizeof(tail) - 1, &c, err, errlen);
	free(doc);
	if (!r) {
		n = CPU_COUNT(&c.reservation.cpus);
		out->cpu = n ? n : c.reservation.cpu;
		out->memory = c.reservation.memory;
		out->cpus = c.reservation.cpus;
	}
	config_free(&c);	/* at defaults after an error: allocated too */
	return r;
}

void config_free(struct koord_config *c)
{
	free(c->listen);
	c->listen = NULL;
	free(c->health_listen);
	c->health_listen = NULL;
	free(c->state_dir);
	c->state_dir = NULL;
	free(c->kubelet.url);
	free(c->kubelet.token_file);
	free(c->kubelet.ca_file);
	free(c->kubelet.cpu_manager_state);
	c->kubelet.url = c->kubelet.token_file = c->kubelet.ca_file = c->kubelet.cpu_manager_state = NULL;
	free(c->yarn.nm_url);
	c->yarn.nm_url = NULL;
	free(c->eviction.api.url);
	free(c->eviction.api.token_file);
	free(c->eviction.api.ca_file);
	c->eviction.api.url = c->eviction.api.token_file = c->eviction.api.ca_file = NULL;
	free_roots(c);
	class_rules_free(&c->rules);
	free_hook(c);
}

static bool defaults_allocated(const struct koord_config *c)
{
	size_t i;

	for (i = 0; i < c->ncgroup_roots; i++)
		if (!c->cgroup_roots[i])
			return false;
	return c->listen && c->health_listen && c->state_dir && c->kubelet.url && c->kubelet.token_file &&
	       c->kubelet.ca_file && c->kubelet.cpu_manager_state && c->yarn.nm_url &&
	       c->eviction.api.url && c->eviction.api.token_file && c->eviction.api.ca_file;
}

/*
 * koordlet's CoreSched sets cpu.idle of the besteffort dir from the NodeSLO:
 * where the NodeSLO decides it (cpuPolicy coreSched, BE cpuQOS enabled),
 * koord-bpf does not write it. Elsewhere koordlet, with that gate on, writes 0
 * over koord-bpf's 1 (a foreign writer): the gate should be off.
 */
static void honour_cpu_qos(const char *name, struct koord_config *c)
{
	if (!c->be_wakeup_priority || !c->cpu_qos.core_sched)
		return;
	if (c->cpu_qos.be_enable) {
		c->be_wakeup_priority = false;
		log_info("%s: resourceQOSStrategy: cpuPolicy coreSched with beClass.cpuQOS enabled: "
			 "the BE cpu.idle is the NodeSLO's (schedIdle %d, koordlet sets %d), "
			 "koord-bpf's wake-up priority is off", name, c->cpu_qos.be_sched_idle,
			 c->cpu_qos.be_sched_idle == 1);
	} else if (c->be.enable && c->wakeup_by == WAKEUP_BY_IDLE) {
		log_warn("%s: resourceQOSStrategy: cpuPolicy coreSched with beClass.cpuQOS off: "
			 "koordlet's CoreSched gate, if on, sets the BE cpu.idle to 0 over koord-bpf's "
			 "wake-up priority; turn the gate off (docs/deploy.md)", name);
	}
}

/*
 * @text into @c, defaults first; *@koordbpf tells whether it had a koordBPF
 * section. On error @c is left at defaults.
 */
static int parse_raw(const char *name, const char *text, size_t len, struct koord_config *c,
		     bool *koordbpf, char *err, size_t errlen)
{
	struct ctx x = { .name = name, .err = err, .errlen = errlen, .c = c };
	struct json_object *root = NULL;
	int ret;

	config_defaults(c);
	if (!defaults_allocated(c))
		ret = fail_nomem(&x, "");
	else
		ret = parse_json(&x, text, len, &root);
	if (!ret)
		ret = read_top(&x, root);
	json_object_put(root);
	if (ret) {
		config_free(c);
		config_defaults(c);
	}
	*koordbpf = x.koordbpf_at[0];
	return ret;
}

/* What the sections decide together: who writes, once all are read. */
static void finish(const char *name, struct koord_config *c)
{
	if (c->mode == MODE_ADVISE && c->be.enable) {
		c->be.enable = false;
		log_info("%s: koordBPF.mode advise: koord-bpf writes nothing, it judges the changes "
			 "other writers make to BE cgroups", name);
	}
	honour_cpu_qos(name, c);
	if (c->ignored && c->be.enable) {
		c->be.enable = false;
		log_warn("%s: enforcement off, measuring only: %d value(s) of "
			 "the NodeSLO not supported (the first: %s)", name,
			 c->ignored, c->ignored_first);
	}
}

int config_parse(const char *name, const char *text, size_t len, struct koord_config *c,
		 char *err, size_t errlen)
{
	bool koordbpf;
	int ret = parse_raw(name, text, len, c, &koordbpf, err, errlen);

	if (!ret)
		finish(name, c);
	return ret;
}

/* Reads at most CONFIG_FILE_MAX + 1 bytes: one more than allowed is enough to refuse. */
static int read_file(const char *path, char **text, size_t *len)
{
	char *buf;
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(CONFIG_FILE_MAX + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	*len = 0;
	while (*len <= CONFIG_FILE_MAX) {
		n = read(fd, buf + *len, CONFIG_FILE_MAX + 1 - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (!n)
			break;
		*len += n;
	}
	close(fd);
	if (ret)
		free(buf);
	else
		*text = buf;
	return ret;
}

int config_parse_nodeslo(const char *name, const char *text, size_t len, const char *path,
			 struct koord_config *c, char *err, size_t errlen)
{
	struct koord_config slo;
	char *own = NULL;
	size_t own_len = 0;
	bool koordbpf;
	int ret = 0;

	if (path && (ret = read_file(path, &own, &own_len))) {
		config_defaults(c);
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (path)
		ret = parse_raw(path, own, own_len, c, &koordbpf, err, errlen);
	else
		config_defaults(c);
	free(own);
	if (ret)
		return ret;
	ret = parse_raw(name, text, len, &slo, &koordbpf, err, errlen);
	if (ret) {
		config_free(&slo);	/* at its defaults, allocated */
		config_free(c);
		config_defaults(c);
		return ret;
	}
	if (koordbpf)
		log_info("%s: koordBPF: ignored, koord-bpf's own settings come from %s", name,
			 path ? path : "its defaults");
	/* Koordinator's sections: the NodeSLO's, all of them, as koordlet takes them */
	c->be = slo.be;
	c->ignored = slo.ignored;
	memcpy(c->ignored_first, slo.ignored_first, sizeof(c->ignored_first));
	c->cpu_qos = slo.cpu_qos;
	config_free(&slo);
	finish(name, c);
	return 0;
}

int config_load(const char *path, struct koord_config *c, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	int ret = read_file(path, &text, &len);

	if (ret) {
		config_defaults(c);
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = config_parse(path, text, len, c, err, errlen);
	free(text);
	return ret;
}
