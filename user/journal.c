// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The journal of original cgroup values. A change appends a line and
 * fdatasyncs it; the whole file is rewritten through journal.tmp (a crash
 * leaves the old or the new one, never a torn one) once the lines appended
 * outnumber the entries, or an append failed. A hash index on the path keeps a lookup O(1)
 * at 10,000 entries (the period asks for every BE pod).
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
#include "fnv.h"
#include "journal.h"
#include "log.h"

#define JOURNAL_FILE	"journal"
#define JOURNAL_TMP	"journal.tmp"
#define JOURNAL_VERSION	3
#define JOURNAL_HEADER	"{\"version\":3}\n"
/* Still loaded: one JSON document, rewritten whole at each change. */
#define JOURNAL_VERSION_DOC 2
/* Still loaded: a document that did not say what was written. */
#define JOURNAL_VERSION_NO_WRITTEN 1
/* Lines appended beyond the entries' count before the file is written whole. */
#define APPEND_SLACK	32
#define NO_SKIP		SIZE_MAX
/* Far above any real journal (a few thousand cgroup files): refuse a runaway file. */
#define JOURNAL_SIZE_MAX (64u << 20)
#define RESTORE_PASSES	4

void journal_init(struct journal *j)
{
	memset(j, 0, sizeof(*j));
	j->dirfd = -1;
	j->fd = -1;
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

/* FNV-1a: paths differ in their pod and container ids, anywhere in the string. */
static size_t path_hash(const char *path)
{
	return (size_t)fnv1a(path, strlen(path));
}

/* The index slot that holds entry @i, or the free slot where @path's chain ends. */
static size_t index_slot(const struct journal *j, const char *path, size_t *i)
{
	size_t mask = j->index_cap - 1, s = path_hash(path) & mask;

	for (; j->index[s]; s = (s + 1) & mask) {
		*i = j->index[s] - 1;
		if (!strcmp(j->v[*i].path, path))
			return s;
	}
	*i = j->n;
	return s;
}

/* Index of @path's entry, or j->n. */
static size_t find(const struct journal *j, const char *path)
{
	size_t i = j->n;

	if (j->index_cap)
		index_slot(j, path, &i);
	return i;
}

/* Index every entry again (after entries moved); the table is large enough. */
static void index_refill(struct journal *j)
{
	size_t i, s;

	if (!j->index_cap)
		return;
	memset(j->index, 0, j->index_cap * sizeof(*j->index));
	for (i = 0; i < j->n; i++) {
		s = index_slot(j, j->v[i].path, &(size_t){ 0 });
		j->index[s] = i + 1;
	}
}

/* Room in the index for one entry more: at most half full. */
static int index_reserve(struct journal *j)
{
	size_t cap = j->index_cap ? j->index_cap : 64;
	size_t *t;

	while (cap < 2 * (j->n + 1))
		cap *= 2;
	if (cap == j->index_cap)
		return 0;
	t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	free(j->index);
	j->index = t;
	j->index_cap = cap;
	index_refill(j);
	return 0;
}

/*
 * Take entry @i out of the index (linear probing: the entries after it in
 * its run move back where their probe finds them) and renumber those after
 * it, which move down one in v.
 */
static void index_drop(struct journal *j, size_t i)
{
	size_t mask = j->index_cap - 1, hole, s, home, k;

	hole = index_slot(j, j->v[i].path, &k);
	j->index[hole] = 0;
	for (s = (hole + 1) & mask; j->index[s]; s = (s + 1) & mask) {
		home = path_hash(j->v[j->index[s] - 1].path) & mask;
		/* it may fill the hole unless its home lies cyclically in (hole, s] */
		if (((s - home) & mask) >= ((s - hole) & mask)) {
			j->index[hole] = j->index[s];
			j->index[s] = 0;
			hole = s;
		}
	}
	for (s = 0; s < j->index_cap; s++)
		if (j->index[s] > i + 1)
			j->index[s]--;
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
	free(j->index);
	j->v = NULL;
	j->index = NULL;
	j->n = j->cap = j->index_cap = 0;
}

/* Append copies of the fields given (no durability: the caller saves). */
static int entry_push(struct journal *j, const char *path, const char *value, const char *written,
		      const char *previous)
{
	struct journal_entry *e;
	bool fail = false;

	if (index_reserve(j))
		return -ENOMEM;
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
	j->index[index_slot(j, path, &(size_t){ 0 })] = j->n + 1;
	j->n++;
	return 0;
}

/* Remove entry @i, keeping the order of the others. */
static void entry_remove(struct journal *j, size_t i)
{
	index_drop(j, i);
	entry_free(&j->v[i]);
	memmove(&j->v[i], &j->v[i + 1], (j->n - i - 1) * sizeof(*j->v));
	j->n--;
}

/* A line (without its newline) of @obj, which it takes; NULL when out of memory. */
static char *line_of(json_object *obj)
{
	char *line = NULL;

	if (obj)
		line = strdup(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
	return line;
}

/* @e's whole state as a line; caller frees. */
static char *entry_line(const struct journal_entry *e)
{
	json_object *o = json_object_new_object();

	if (o) {
		json_object_object_add(o, "path", json_object_new_string(e->path));
		json_object_object_add(o, "value", json_object_new_string(e->value));
		if (e->written)
			json_object_object_add(o, "written", json_object_new_string(e->written));
		if (e->previous)
			json_object_object_add(o, "previous", json_object_new_string(e->previous));
	}
	return line_of(o);
}

static char *forget_line(const char *path)
{
	json_object *o = json_object_new_object();

	if (o)
		json_object_object_add(o, "forget", json_object_new_string(path));
	return line_of(o);
}

/* The journal written whole: the header and a line per entry but @skip; caller frees. */
static char *journal_text(const struct journal *j, size_t skip)
{
	char *text = NULL, *line;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	bool ok;

	if (!f)
		return NULL;
	ok = fputs(JOURNAL_HEADER, f) >= 0;
	for (size_t i = 0; ok && i < j->n; i++) {
		if (i == skip)
			continue;
		line = entry_line(&j->v[i]);
		ok = line && fputs(line, f) >= 0 && fputc('\n', f) != EOF;
		free(line);
	}
	if (fclose(f) || !ok) {
		free(text);
		return NULL;
	}
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

/* The entries a write of the journal without entry @skip holds. */
static size_t entries_but(const struct journal *j, size_t skip)
{
	return j->n - (skip < j->n);
}

static void close_append(struct journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
}

/*
 * Make the in-memory entries but @skip the journal on disk, written whole:
 * tmp file, fsync, rename, fsync of the dir (the rename is durable only
 * then); then open it for the next appends. No entries: no file, as after
 * a clean stop (an empty file left by a crash once made every later start
 * fail: the journal "exists").
 */
static int save_whole(struct journal *j, size_t skip)
{
	char *text;
	int err;

	if (j->dirfd < 0)
		return -EBADF;
	close_append(j);	/* from here on, what fails leaves the next change to write whole */
	if (!entries_but(j, skip)) {
		if (unlinkat(j->dirfd, JOURNAL_FILE, 0) && errno != ENOENT)
			return -errno;
		return fsync(j->dirfd) ? -errno : 0;
	}
	text = journal_text(j, skip);
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
	j->fd = openat(j->dirfd, JOURNAL_FILE, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	j->appended = 0;
	return 0;
}

/*
 * Append @line and make it durable. -ESTALE, nothing written, when the file
 * open is no longer the journal (removed or replaced under us: appends would
 * go nowhere). On a failure the part written is cut off, and the file closed:
 * after a failed fdatasync the page cache cannot be trusted to hold it.
 */
static int append_line(struct journal *j, const char *line)
{
	size_t len = strlen(line);
	struct stat st, named;
	char *buf;
	int err;

	if (fstat(j->fd, &st) || fstatat(j->dirfd, JOURNAL_FILE, &named, AT_SYMLINK_NOFOLLOW) ||
	    st.st_ino != named.st_ino || st.st_dev != named.st_dev)
		return -ESTALE;
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, line, len);
	buf[len] = '\n';
	err = write_all(j->fd, buf, len + 1);
	free(buf);
	if (!err && fdatasync(j->fd))
		err = -errno;
	if (err) {
		if (ftruncate(j->fd, st.st_size))
			log_warn("journal: %s: cannot cut a failed append: %s", j->dir, strerror(errno));
		close_append(j);
		return err;
	}
	j->appended++;
	return 0;
}

/*
 * Make durable the change just made in memory: @line appended, or, when the
 * file is not open, the appends outnumber the entries (the file is about
 * half history) or no entry would be left, the journal written whole
 * without entry @skip (a forgotten one). Amortized, a change writes O(1)
 * lines.
 */
static int commit(struct journal *j, const char *line, size_t skip)
{
	if (j->fd >= 0 && j->appended < j->n + APPEND_SLACK && entries_but(j, skip)) {
		int err = append_line(j, line);

		if (err != -ESTALE)
			return err;
	}
	return save_whole(j, skip);
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
	char *line;
	int err;

	if (!written)
		return -ENOMEM;
	if (!last_failed)
		e->previous = e->written;
	e->written = written;
	line = entry_line(e);
	err = line ? commit(j, line, NO_SKIP) : -ENOMEM;
	free(line);
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
	char *line;
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
	line = entry_line(&j->v[j->n - 1]);
	err = line ? commit(j, line, NO_SKIP) : -ENOMEM;
	free(line);
	/*
	 * A failed dir fsync leaves the new journal in place: drop the entry
	 * in memory anyway, the caller will not change the file.
	 */
	if (err)
		entry_remove(j, j->n - 1);
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
		err = save_whole(j, NO_SKIP);
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
	index_refill(j);
	return (int)(n - k);
}

int journal_forget(struct journal *j, const char *path)
{
	size_t i = find(j, path);
	char *line;
	int err;

	if (i == j->n)
		return 0;
	line = forget_line(path);
	err = line ? commit(j, line, i) : -ENOMEM;
	free(line);
	if (!err)
		entry_remove(j, i);
	return err;
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
	close_append(j);
	if (j->dirfd >= 0)
		close(j->dirfd);
	journal_init(j);
}

/* An entry's fields as parsed (pointing into the JSON objects). */
struct entry_fields {
	const char *path, *value, *written, *previous;
};

/*
 * The value string @key of the entry at @where ("entry 3", "line 4") into
 * *@out (NULL when absent and not @required); -EBADMSG with the reason
 * otherwise.
 */
static int entry_value(json_object *e, const char *key, bool required, const char *where,
		       const char **out, char *err, size_t errlen)
{
	json_object *v = NULL;
	bool has = json_object_object_get_ex(e, key, &v);
	const char *why;

	*out = NULL;
	if (!has && !required)
		return 0;
	if (!json_object_is_type(v, json_type_string)) {
		seterr(err, errlen, "%s: %s: %s", where, key, has ? "not a string" : "missing");
		return -EBADMSG;
	}
	*out = json_object_get_string(v);
	why = !strcmp(key, "path") || !strcmp(key, "forget") ?
		      bad_path(*out, (size_t)json_object_get_string_len(v)) :
		      bad_value(*out, (size_t)json_object_get_string_len(v));
	if (why) {
		seterr(err, errlen, "%s: %s: %s", where, key, why);
		return -EBADMSG;
	}
	return 0;
}

/*
 * Check the entry object at @where: its keys, "written" there when
 * @written (absent in version 1, where "previous" is unknown too).
 */
static int check_entry(json_object *e, const char *where, bool written, struct entry_fields *f,
		       char *err, size_t errlen)
{
	int ret;

	if (!json_object_is_type(e, json_type_object)) {
		seterr(err, errlen, "%s: not an object", where);
		return -EBADMSG;
	}
	json_object_object_foreach(e, key, val) {
		(void)val;
		if (strcmp(key, "path") && strcmp(key, "value") &&
		    (!written || (strcmp(key, "written") && strcmp(key, "previous")))) {
			seterr(err, errlen, "%s: unknown key \"%.32s\"", where, key);
			return -EBADMSG;
		}
	}
	ret = entry_value(e, "path", true, where, &f->path, err, errlen);
	if (!ret)
		ret = entry_value(e, "value", true, where, &f->value, err, errlen);
	if (!ret)
		ret = entry_value(e, "written", written, where, &f->written, err, errlen);
	if (!ret)
		ret = entry_value(e, "previous", false, where, &f->previous, err, errlen);
	return ret;
}

/* Check entry @i of a version 1 or 2 document and add it (unless its path came earlier). */
static int parse_doc_entry(struct journal *j, json_object *e, size_t i, int64_t version,
			   char *err, size_t errlen)
{
	struct entry_fields f;
	char where[32];
	int ret;

	snprintf(where, sizeof(where), "entry %zu", i);
	ret = check_entry(e, where, version != JOURNAL_VERSION_NO_WRITTEN, &f, err, errlen);
	if (ret)
		return ret;
	if (journal_has(j, f.path))
		return 0;	/* keep the first: it is the original */
	return entry_push(j, f.path, f.value, f.written, f.previous);
}

/* Check a version 1 or 2 document's shape and add its entries to @j. */
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
	    ((v = json_object_get_int64(version)) != JOURNAL_VERSION_DOC &&
	     v != JOURNAL_VERSION_NO_WRITTEN)) {
		seterr(err, errlen, "version: want %d or %d (or %d lines)", JOURNAL_VERSION_DOC,
		       JOURNAL_VERSION_NO_WRITTEN, JOURNAL_VERSION);
		return -EBADMSG;
	}
	if (!json_object_object_get_ex(doc, "entries", &entries) ||
	    !json_object_is_type(entries, json_type_array)) {
		seterr(err, errlen, "entries: not an array");
		return -EBADMSG;
	}
	n = json_object_array_length(entries);
	for (size_t i = 0; i < n; i++) {
		ret = parse_doc_entry(j, json_object_array_get_idx(entries, i), i, v, err, errlen);
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

/*
 * Parse @text[0..len), which must be one JSON value and nothing else, into
 * *@out; the reason of a failure (after @where, when not empty) in @err.
 */
static int parse_json(const char *text, size_t len, const char *where, json_object **out,
		      char *err, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	enum json_tokener_error jerr;
	const char *sep = *where ? ": " : "";
	size_t end;
	int ret = -EBADMSG;

	*out = NULL;
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	*out = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue)
		seterr(err, errlen, "%s%struncated", where, sep);
	else if (jerr != json_tokener_success)
		seterr(err, errlen, "%s%soffset %zu: %s", where, sep, end,
		       json_tokener_error_desc(jerr));
	else if (!all_space(text + end, len - end))	/* strict mode does it since 0.16 */
		seterr(err, errlen, "%s%soffset %zu: text after the document", where, sep, end);
	else
		ret = 0;
	json_tokener_free(tok);
	if (ret) {
		json_object_put(*out);
		*out = NULL;
	}
	return ret;
}

/* Apply the "forget" line @o at @where: the path must be journaled. */
static int parse_forget(struct journal *j, json_object *o, const char *where, char *err,
			size_t errlen)
{
	const char *path;
	size_t i;
	int ret;

	if (json_object_object_length(o) != 1) {
		seterr(err, errlen, "%s: a forget has no other key", where);
		return -EBADMSG;
	}
	ret = entry_value(o, "forget", true, where, &path, err, errlen);
	if (ret)
		return ret;
	i = find(j, path);
	if (i == j->n) {
		seterr(err, errlen, "%s: forget: not journaled", where);
		return -EBADMSG;
	}
	entry_remove(j, i);
	return 0;
}

/* Apply the entry line @o at @where: a new entry, or an entry's next state. */
static int parse_state(struct journal *j, json_object *o, const char *where, char *err,
		       size_t errlen)
{
	struct journal_entry *e;
	struct entry_fields f;
	char *written, *previous = NULL;
	size_t i;
	int ret;

	ret = check_entry(o, where, true, &f, err, errlen);
	if (ret)
		return ret;
	i = find(j, f.path);
	if (i == j->n)
		return entry_push(j, f.path, f.value, f.written, f.previous);
	e = &j->v[i];
	if (strcmp(e->value, f.value)) {
		seterr(err, errlen, "%s: value: not the original journaled before", where);
		return -EBADMSG;
	}
	written = strdup(f.written);
	if (f.previous)
		previous = strdup(f.previous);
	if (!written || (f.previous && !previous)) {
		free(written);
		free(previous);
		return -ENOMEM;
	}
	free(e->written);
	free(e->previous);
	e->written = written;
	e->previous = previous;
	return 0;
}

/*
 * Version 3: the header, then a line per change. A last line without its
 * newline is an append a crash cut: ignored (its caller wrote nothing).
 */
static int parse_lines(struct journal *j, const char *text, size_t len, char *err, size_t errlen)
{
	const char *p = text + strlen(JOURNAL_HEADER), *end = text + len, *nl;
	char where[32];
	json_object *o;
	size_t line;
	int ret;

	for (line = 2; p < end && (nl = memchr(p, '\n', (size_t)(end - p))); line++, p = nl + 1) {
		snprintf(where, sizeof(where), "line %zu", line);
		if (nl == p) {
			seterr(err, errlen, "%s: empty", where);
			return -EBADMSG;
		}
		ret = parse_json(p, (size_t)(nl - p), where, &o, err, errlen);
		if (ret)
			return ret;
		if (!json_object_is_type(o, json_type_object)) {
			seterr(err, errlen, "%s: not an object", where);
			ret = -EBADMSG;
		} else if (json_object_object_get_ex(o, "forget", NULL)) {
			ret = parse_forget(j, o, where, err, errlen);
		} else {
			ret = parse_state(j, o, where, err, errlen);
		}
		json_object_put(o);
		if (ret)
			return ret;
	}
	return 0;
}

int journal_parse(struct journal *j, const char *text, size_t len, char *err, size_t errlen)
{
	json_object *doc;
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
	if (len >= strlen(JOURNAL_HEADER) && !memcmp(text, JOURNAL_HEADER, strlen(JOURNAL_HEADER))) {
		ret = parse_lines(j, text, len, err, errlen);
	} else {
		ret = parse_json(text, len, "", &doc, err, errlen);
		if (!ret)
			ret = parse_doc(j, doc, err, errlen);
		json_object_put(doc);
	}
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
	index_refill(j);
	return k;
}

/* Make the disk match the entries left: rewrite, or remove when none is. */
static void restore_sync(struct journal *j)
{
	int err = j->dirfd < 0 ? 0 : save_whole(j, NO_SKIP);

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
