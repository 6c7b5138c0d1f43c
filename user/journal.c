// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The journal of original cgroup values. Every change rewrites the whole file
 * through journal.tmp, so a crash at any point leaves either the old or the
 * new journal, never a torn one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "journal.h"
#include "log.h"

#define JOURNAL_FILE	"journal"
#define JOURNAL_TMP	"journal.tmp"
#define JOURNAL_VERSION	2
/* Still loaded: it did not say what was written. */
#define JOURNAL_VERSION_NO_WRITTEN 1
/* Far above any real journal (a few thousand cgroup files): refuse a runaway file. */
#define JOURNAL_SIZE_MAX (64u << 20)
#define RESTORE_PASSES	4

void journal_init(struct journal *j)
{
	memset(j, 0, sizeof(*j));
	j->dirfd = -1;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Whether @path has a "." or ".." component. */
static bool has_dot_component(const char *path)
{
	const char *p = path;

	while (*p) {
		size_t len;

		p += strspn(p, "/");
		len = strcspn(p, "/");
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return true;
		p += len;
	}
	return false;
}

/* Why @path (of @len bytes) cannot be journaled, or NULL when it can. */
static const char *bad_path(const char *path, size_t len)
{
	if (len >= PATH_MAX)
		return "too long";
	if (strlen(path) != len)
		return "contains NUL";
	if (path[0] != '/')
		return "not absolute";
	if (has_dot_component(path))
		return "has a \".\" or \"..\" component";
	return NULL;
}

static const char *bad_value(const char *value, size_t len)
{
	if (len >= JOURNAL_VALUE_MAX)
		return "too long";
	if (strlen(value) != len)
		return "contains NUL";
	return NULL;
}

/* Index of @path's entry, or j->n. */
static size_t find(const struct journal *j, const char *path)
{
	size_t i;

	for (i = 0; i < j->n; i++)
		if (!strcmp(j->v[i].path, path))
			break;
	return i;
}

const struct journal_entry *journal_find(const struct journal *j, const char *path)
{
	size_t i = find(j, path);

	return i < j->n ? &j->v[i] : NULL;
}

const char *journal_original(const struct journal *j, const char *path)
{
	const struct journal_entry *e = journal_find(j, path);

	return e ? e->value : NULL;
}

bool journal_has(const struct journal *j, const char *path)
{
	return journal_find(j, path);
}

bool journal_same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	while (la && strchr(" \t\r\n", a[la - 1]))
		la--;
	while (lb && strchr(" \t\r\n", b[lb - 1]))
		lb--;
	return la == lb && !memcmp(a, b, la);
}

enum journal_verdict journal_judge(const struct journal_entry *e, const char *cur)
{
	if (journal_same(cur, e->value))
		return JOURNAL_IN_PLACE;
	if (!e->written || journal_same(cur, e->written) ||
	    (e->previous && journal_same(cur, e->previous)))
		return JOURNAL_RESTORE;
	return JOURNAL_CHANGED;
}

static void entry_free(struct journal_entry *e)
{
	free(e->path);
	free(e->value);
	free(e->written);
	free(e->previous);
	e->path = e->value = e->written = e->previous = NULL;
}

/* strdup() of @s, or NULL for a NULL @s; sets *@fail when the copy fails. */
static char *dup_or_null(const char *s, bool *fail)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*fail = true;
	return d;
}

static void entries_free(struct journal *j)
{
	for (size_t i = 0; i < j->n; i++)
		entry_free(&j->v[i]);
	free(j->v);
	j->v = NULL;
	j->n = j->cap = 0;
}

/* Append copies of the fields given (no durability: the caller saves). */
static int entry_push(struct journal *j, const char *path, const char *value, const char *written,
		      const char *previous)
{
	struct journal_entry *e;
	bool fail = false;

	if (j->n == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 16;
		struct journal_entry *v = realloc(j->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		j->v = v;
		j->cap = cap;
	}
	e = &j->v[j->n];
	e->path = dup_or_null(path, &fail);
	e->value = dup_or_null(value, &fail);
	e->written = dup_or_null(written, &fail);
	e->previous = dup_or_null(previous, &fail);
	if (fail) {
		entry_free(e);
		return -ENOMEM;
	}
	j->n++;
	return 0;
}

/* The JSON text of the entries; caller frees. */
static char *journal_text(const struct journal *j)
{
	json_object *root = json_object_new_object();
	json_object *arr = json_object_new_array();
	char *text = NULL;

	if (!root || !arr ||
	    json_object_object_add(root, "version", json_object_new_int(JOURNAL_VERSION)) ||
	    json_object_object_add(root, "entries", arr)) {
		json_object_put(arr);
		goto out;
	}
	/* @arr belongs to @root now */
	for (size_t i = 0; i < j->n; i++) {
		json_object *e = json_object_new_object();

		if (!e || json_object_array_add(arr, e)) {
			json_object_put(e);
			goto out;
		}
		json_object_object_add(e, "path", json_object_new_string(j->v[i].path));
		json_object_object_add(e, "value", json_object_new_string(j->v[i].value));
		if (j->v[i].written)
			json_object_object_add(e, "written", json_object_new_string(j->v[i].written));
		if (j->v[i].previous)
			json_object_object_add(e, "previous",
					       json_object_new_string(j->v[i].previous));
	}
	text = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
out:
	json_object_put(root);
	return text;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Write @text to journal.tmp and fsync it. */
static int write_tmp(int dirfd, const char *text)
{
	int fd, err;

	fd = openat(dirfd, JOURNAL_TMP, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, text, strlen(text));
	if (!err && fsync(fd))
		err = -errno;
	/* close can report a delayed write error (NFS): it counts too */
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/*
 * Make the in-memory entries the journal on disk: tmp file, fsync, rename,
 * fsync of the dir (the rename is durable only then). No entries: no file,
 * as after a clean stop (an empty file left by a crash once made every
 * later start fail: the journal "exists").
 */
static int journal_save(struct journal *j)
{
	char *text;
	int err;

	if (j->dirfd < 0)
		return -EBADF;
	if (!j->n) {
		if (unlinkat(j->dirfd, JOURNAL_FILE, 0) && errno != ENOENT)
			return -errno;
		return fsync(j->dirfd) ? -errno : 0;
	}
	text = journal_text(j);
	if (!text)
		return -ENOMEM;
	err = write_tmp(j->dirfd, text);
	free(text);
	if (!err && renameat(j->dirfd, JOURNAL_TMP, j->dirfd, JOURNAL_FILE))
		err = -errno;
	if (err) {
		unlinkat(j->dirfd, JOURNAL_TMP, 0);
		return err;
	}
	/* the new journal is in place: a failed dir fsync still is a failure to report */
	if (fsync(j->dirfd))
		return -errno;
	return 0;
}

/*
 * @path's next written value @next on top of its entry @e, the file holding
 * @cur; saved, or @e as it was. The value before the write is the one the
 * file holds: the last one written, or, when that write failed, the one
 * before it, which stays (else two failed writes in a row would leave the
 * file holding a value the entry no longer knows as ours).
 */
static int record_next(struct journal *j, struct journal_entry *e, const char *cur,
		       const char *next)
{
	char *written = strdup(next), *old_written = e->written, *old_previous = e->previous;
	bool last_failed = e->previous && e->written && !journal_same(cur, e->written) &&
			   journal_same(cur, e->previous);
	int err;

	if (!written)
		return -ENOMEM;
	if (!last_failed)
		e->previous = e->written;
	e->written = written;
	err = journal_save(j);
	if (err) {
		/* as for a new entry: the caller will not write */
		e->written = old_written;
		e->previous = old_previous;
		free(written);
		return err;
	}
	free(last_failed ? old_written : old_previous);
	return 0;
}

int journal_record(struct journal *j, const char *path, const char *cur, const char *next)
{
	size_t i = find(j, path);
	const char *why;
	int err;

	why = bad_path(path, strlen(path));
	if (!why)
		why = bad_value(cur, strlen(cur));
	if (!why)
		why = bad_value(next, strlen(next));
	if (why) {
		log_warn("journal: %s: %s", path, why);
		return -EINVAL;
	}
	if (i < j->n) {
		/* the first value recorded stays the original */
		if (j->v[i].written && journal_same(j->v[i].written, next))
			return 0;
		return record_next(j, &j->v[i], cur, next);
	}
	err = entry_push(j, path, cur, next, NULL);
	if (err)
		return err;
	err = journal_save(j);
	if (err) {
		j->n--;
		entry_free(&j->v[j->n]);
		/*
		 * A failed dir fsync leaves the new journal in place: drop it
		 * in memory anyway, the caller will not change the file.
		 */
	}
	return err;
}

/*
 * Keep only the entries @keep says yes to, in order, and save once when
 * any went. On a failed save nothing is dropped. Returns how many went, or
 * the save's error.
 */
static int keep_only(struct journal *j, bool (*keep)(const struct journal_entry *e, void *ctx),
		     void *ctx)
{
	struct journal_entry *old = j->v, *v;
	size_t n = j->n, k = 0, i;
	bool *kept;
	int err;

	v = malloc((n ? n : 1) * sizeof(*v));
	kept = malloc(n ? n : 1);
	if (!v || !kept) {
		free(v);
		free(kept);
		return -ENOMEM;
	}
	/* asked once each: a cgroup may go between two asks */
	for (i = 0; i < n; i++)
		if ((kept[i] = keep(&old[i], ctx)))
			v[k++] = old[i];
	err = 0;
	if (k < n) {
		j->v = v;
		j->n = k;
		err = journal_save(j);
	}
	if (k == n || err) {
		j->v = old;
		j->n = n;
		free(v);
		free(kept);
		return err;
	}
	for (i = 0; i < n; i++)
		if (!kept[i])
			entry_free(&old[i]);
	free(old);
	free(kept);
	j->cap = n;
	return (int)(n - k);
}

static bool not_path(const struct journal_entry *e, void *path)
{
	return strcmp(e->path, path);
}

int journal_forget(struct journal *j, const char *path)
{
	int r = keep_only(j, not_path, (void *)path);

	return r < 0 ? r : 0;
}

/* A file in a removed cgroup reads ENOENT; ENODEV on a v1 cgroup being removed. */
static bool still_there(const struct journal_entry *e, void *ctx)
{
	struct stat st;

	return !stat(e->path, &st) || (errno != ENOENT && errno != ENODEV);
}

int journal_prune(struct journal *j)
{
	return keep_only(j, still_there, NULL);
}

/*
 * Whoever can write the state dir, or replace a directory on the way to it,
 * chooses the values written back at the next start. Each directory from /
 * down must be a real one (no symlink), owned by root or by us, and writable
 * by no one else unless sticky (/tmp); the state dir itself must be
 * writable by no one else, and is made ours alone (a hostPath makes it
 * 0755). Returns an fd of @dir, or -ELOOP, -EPERM (logged with the reason),
 * or another -errno.
 */
static int open_trusted(const char *dir)
{
	char part[PATH_MAX];
	const char *p = dir, *next;
	struct stat st;
	int fd, sub;
	size_t n;

	if (dir[0] != '/' || strlen(dir) >= sizeof(part))
		return -EINVAL;
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (fstat(fd, &st)) {
			sub = -errno;
			close(fd);
			return sub;
		}
		while (*p == '/')
			p++;
		if (!*p)
			break;
		if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
		    ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))) {
			log_err("state dir %s: %.*s is writable by others (owner %u, mode %04o): they "
				"could replace what lies below it", dir, (int)(p - dir), dir,
				(unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777));
			close(fd);
			return -EPERM;
		}
		next = strchr(p, '/');
		n = next ? (size_t)(next - p) : strlen(p);
		memcpy(part, p, n);
		part[n] = '\0';
		sub = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			sub = errno == ENOTDIR && !fstatat(fd, part, &st, AT_SYMLINK_NOFOLLOW) &&
			      S_ISLNK(st.st_mode) ? -ELOOP : -errno;
			if (sub == -ELOOP)
				log_err("state dir %s: %.*s%s is a symlink: give the real path", dir,
					(int)(p - dir), dir, part);
			close(fd);
			return sub;
		}
		close(fd);
		fd = sub;
		p += n;
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		log_err("state dir %s is not ours alone (owner %u, mode %04o)", dir,
			(unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	if ((st.st_mode & 077) && fchmod(fd, 0700))
		log_warn("state dir %s: cannot make it 0700: %s", dir, strerror(errno));
	return fd;
}

/* Open @dir as the state dir (open_trusted) into @j. */
static int open_dir(struct journal *j, const char *dir)
{
	j->dirfd = open_trusted(dir);
	if (j->dirfd < 0) {
		int err = j->dirfd;

		j->dirfd = -1;
		return err;
	}
	j->dir = strdup(dir);
	if (!j->dir) {
		close(j->dirfd);
		j->dirfd = -1;
		return -ENOMEM;
	}
	return 0;
}

int journal_open(struct journal *j, const char *dir)
{
	struct stat st;
	int err;

	journal_init(j);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	err = open_dir(j, dir);
	if (err)
		return err;
	if (!fstatat(j->dirfd, JOURNAL_FILE, &st, AT_SYMLINK_NOFOLLOW))
		err = -EEXIST;
	else if (errno != ENOENT)
		err = -errno;
	if (err)
		journal_close(j);
	return err;
}

void journal_close(struct journal *j)
{
	entries_free(j);
	free(j->dir);
	if (j->dirfd >= 0)
		close(j->dirfd);
	journal_init(j);
}

/*
 * Entry @i's value string @key into *@out (NULL when absent and not
 * @required); -EBADMSG with the reason otherwise.
 */
static int entry_value(json_object *e, const char *key, bool required, size_t i,
		       const char **out, char *err, size_t errlen)
{
	json_object *v = NULL;
	bool has = json_object_object_get_ex(e, key, &v);
	const char *why;

	*out = NULL;
	if (!has && !required)
		return 0;
	if (!json_object_is_type(v, json_type_string)) {
		seterr(err, errlen, "entry %zu: %s: %s", i, key, has ? "not a string" : "missing");
		return -EBADMSG;
	}
	*out = json_object_get_string(v);
	why = !strcmp(key, "path") ? bad_path(*out, (size_t)json_object_get_string_len(v)) :
				     bad_value(*out, (size_t)json_object_get_string_len(v));
	if (why) {
		seterr(err, errlen, "entry %zu: %s: %s", i, key, why);
		return -EBADMSG;
	}
	return 0;
}

/* Check one entry object of a journal of @version and add it (unless its path came earlier). */
static int parse_entry(struct journal *j, json_object *e, size_t i, int64_t version, char *err,
		       size_t errlen)
{
	bool written = version != JOURNAL_VERSION_NO_WRITTEN;
	const char *path, *value, *last, *previous;
	int ret;

	if (!json_object_is_type(e, json_type_object)) {
		seterr(err, errlen, "entry %zu: not an object", i);
		return -EBADMSG;
	}
	json_object_object_foreach(e, key, val) {
		(void)val;
		if (strcmp(key, "path") && strcmp(key, "value") &&
		    (!written || (strcmp(key, "written") && strcmp(key, "previous")))) {
			seterr(err, errlen, "entry %zu: unknown key \"%.32s\"", i, key);
			return -EBADMSG;
		}
	}
	ret = entry_value(e, "path", true, i, &path, err, errlen);
	if (!ret)
		ret = entry_value(e, "value", true, i, &value, err, errlen);
	if (!ret)
		ret = entry_value(e, "written", written, i, &last, err, errlen);
	if (!ret)
		ret = entry_value(e, "previous", false, i, &previous, err, errlen);
	if (ret)
		return ret;
	if (journal_has(j, path))
		return 0;	/* keep the first: it is the original */
	return entry_push(j, path, value, last, previous);
}

/* Check the document's shape and add its entries to @j. */
static int parse_doc(struct journal *j, json_object *doc, char *err, size_t errlen)
{
	json_object *version, *entries;
	int64_t v;
	size_t n;
	int ret;

	if (!json_object_is_type(doc, json_type_object)) {
		seterr(err, errlen, "not a JSON object");
		return -EBADMSG;
	}
	if (!json_object_object_get_ex(doc, "version", &version) ||
	    !json_object_is_type(version, json_type_int) ||
	    ((v = json_object_get_int64(version)) != JOURNAL_VERSION &&
	     v != JOURNAL_VERSION_NO_WRITTEN)) {
		seterr(err, errlen, "version: want %d or %d", JOURNAL_VERSION,
		       JOURNAL_VERSION_NO_WRITTEN);
		return -EBADMSG;
	}
	if (!json_object_object_get_ex(doc, "entries", &entries) ||
	    !json_object_is_type(entries, json_type_array)) {
		seterr(err, errlen, "entries: not an array");
		return -EBADMSG;
	}
	n = json_object_array_length(entries);
	for (size_t i = 0; i < n; i++) {
		ret = parse_entry(j, json_object_array_get_idx(entries, i), i, v, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

/* Whether @s[0..len) is all JSON whitespace. */
static bool all_space(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\r\n", s[i]) || !s[i])
			return false;
	return true;
}

int journal_parse(struct journal *j, const char *text, size_t len, char *err, size_t errlen)
{
	struct json_tokener *tok;
	json_object *doc;
	enum json_tokener_error jerr;
	int ret;

	entries_free(j);
	seterr(err, errlen, "%s", "");
	if (len > INT_MAX) {
		seterr(err, errlen, "too long");
		return -EBADMSG;
	}
	if (memchr(text, '\0', len)) {
		seterr(err, errlen, "NUL byte in the text");
		return -EBADMSG;
	}
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	doc = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	if (jerr == json_tokener_continue) {
		seterr(err, errlen, "truncated");
		ret = -EBADMSG;
	} else if (jerr != json_tokener_success) {
		seterr(err, errlen, "offset %zu: %s", json_tokener_get_parse_end(tok),
		       json_tokener_error_desc(jerr));
		ret = -EBADMSG;
	} else if (!all_space(text + json_tokener_get_parse_end(tok),	/* strict mode does it since 0.16 */
			      len - json_tokener_get_parse_end(tok))) {
		seterr(err, errlen, "offset %zu: text after the document",
		       json_tokener_get_parse_end(tok));
		ret = -EBADMSG;
	} else {
		ret = parse_doc(j, doc, err, errlen);
	}
	json_object_put(doc);
	json_tokener_free(tok);
	if (ret)
		entries_free(j);	/* all or nothing */
	return ret;
}

/* Read the whole of @fd into a NUL-terminated buffer. */
static int read_file(int fd, char **out, size_t *outlen)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len + 1 == cap) {
			char *b;

			if (cap >= JOURNAL_SIZE_MAX) {
				free(buf);
				return -EFBIG;
			}
			b = realloc(buf, cap * 2);
			if (!b) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = -errno;

			free(buf);
			return e;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}

int journal_load(struct journal *j, const char *dir, char *err, size_t errlen)
{
	size_t len = 0;
	char *text = NULL;
	int fd, ret;

	journal_init(j);
	seterr(err, errlen, "%s", "");
	ret = open_dir(j, dir);
	if (ret == -ENOENT)
		return 0;	/* no state dir: no crashed run */
	if (ret) {
		seterr(err, errlen, "%s: %s", dir, strerror(-ret));
		return ret;
	}
	fd = openat(j->dirfd, JOURNAL_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0) {
		ret = -errno;
		seterr(err, errlen, "%s/%s: %s", dir, JOURNAL_FILE, strerror(-ret));
		return ret;
	}
	ret = read_file(fd, &text, &len);
	close(fd);
	if (ret) {
		seterr(err, errlen, "%s/%s: %s", dir, JOURNAL_FILE, strerror(-ret));
		return ret;
	}
	ret = journal_parse(j, text, len, err, errlen);
	free(text);
	return ret;
}

enum restore_state { RS_PENDING, RS_DONE, RS_KEPT };

static bool restore_done(int ret)
{
	return !ret || ret == JOURNAL_LEFT || ret == -ENOENT || ret == -ENODEV;
}

/*
 * Refusals that a later pass may not meet: a v1 cpuset child wider than its
 * parent is EACCES (measured on 6.18), a parent narrower than a child
 * EBUSY, and EINVAL where a kernel says neither.
 */
static bool restore_retry(int ret)
{
	return ret == -EINVAL || ret == -EBUSY || ret == -EACCES;
}

/*
 * Where BE's wake-up priority puts @path in the restore order: 0 for any
 * other file, 1 for cpu.idle, 2 for the weight (cpu.shares, cpu.weight):
 * putting cpu.idle back resets the weight, so the weight goes after it.
 */
static int wakeup_priority_rank(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!strcmp(base, "cpu.idle"))
		return 1;
	return !strcmp(base, "cpu.shares") || !strcmp(base, "cpu.weight") ? 2 : 0;
}

/* An entry's place in the restore order. */
struct restore_slot {
	size_t i;		/* in the journal */
	int last;		/* wakeup_priority_rank() */
	int depth;		/* slashes in the path */
};

/*
 * Restores relax what the writes restricted, so parents go first: a v1
 * cpuset child cannot be wider than its parent, nor a quota higher. BE's
 * wake-up priority goes last: while BE still has it (the lowest weight or
 * cpu.idle), widening its cpusets and lifting its quotas does not reach
 * online tasks, so they feel one transition (a flip of cpu.idle was seen
 * followed by 23-45 ms waits) rather than one per file. Ties keep the
 * journal's order.
 */
static int cmp_restore(const void *a, const void *b)
{
	const struct restore_slot *x = a, *y = b;

	if (x->last != y->last)
		return x->last - y->last;
	if (x->depth != y->depth)
		return x->depth - y->depth;
	return (x->i > y->i) - (x->i < y->i);
}

/* One pass over the pending entries in @ord; returns how many were done in it. */
static size_t restore_pass(struct journal *j, const struct restore_slot *ord,
			   enum restore_state *st, int *errs, journal_restore_fn restore, void *ctx)
{
	size_t done = 0;

	for (size_t k = 0; k < j->n; k++) {
		size_t i = ord[k].i;
		int ret;

		if (st[i] != RS_PENDING)
			continue;
		ret = restore(ctx, &j->v[i]);
		if (ret > 0 && ret != JOURNAL_LEFT)
			ret = -ret;
		errs[i] = ret;
		if (restore_done(ret)) {
			st[i] = RS_DONE;
			done++;
		} else if (!restore_retry(ret)) {
			st[i] = RS_KEPT;
		}
	}
	return done;
}

/* Drop the restored entries, keeping the order of the others. */
static size_t compact(struct journal *j, const enum restore_state *st, const int *errs)
{
	size_t k = 0;

	for (size_t i = 0; i < j->n; i++) {
		if (st[i] == RS_DONE) {
			entry_free(&j->v[i]);
			continue;
		}
		log_warn("journal: %s: cannot restore \"%s\": %s", j->v[i].path, j->v[i].value,
			 strerror(-errs[i]));
		j->v[k++] = j->v[i];
	}
	j->n = k;
	return k;
}

/* Make the disk match the entries left: rewrite, or remove when none is. */
static void restore_sync(struct journal *j)
{
	int err = j->dirfd < 0 ? 0 : journal_save(j);

	/* the old journal stays: restoring its values again next start is harmless */
	if (err)
		log_warn("journal: %s: cannot update after restore: %s", j->dir, strerror(-err));
}

int journal_restore(struct journal *j, journal_restore_fn restore, void *ctx)
{
	struct restore_slot *ord = NULL;
	enum restore_state *st = NULL;
	int *errs = NULL, left = -ENOMEM;

	if (j->n) {
		ord = calloc(j->n, sizeof(*ord));
		st = calloc(j->n, sizeof(*st));
		errs = calloc(j->n, sizeof(*errs));
		if (!ord || !st || !errs)
			goto out;
	}
	for (size_t i = 0; i < j->n; i++) {
		ord[i].i = i;
		ord[i].last = wakeup_priority_rank(j->v[i].path);
		for (const char *c = j->v[i].path; *c; c++)
			ord[i].depth += *c == '/';
	}
	if (j->n)
		qsort(ord, j->n, sizeof(*ord), cmp_restore);
	/* a refusal the order did not foresee (a parent changed since): later passes retry */
	for (int pass = 0; pass < RESTORE_PASSES; pass++)
		if (!restore_pass(j, ord, st, errs, restore, ctx))
			break;
	left = (int)compact(j, st, errs);
	restore_sync(j);
out:
	free(ord);
	free(st);
	free(errs);
	return left;
}
