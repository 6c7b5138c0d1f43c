/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The cgroup hierarchy that carries the cpu controller, and a walk of it that
 * maps kernfs ids (a cgroup directory's inode number, the id BPF reads) to
 * paths and identities.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "cgroup.h"

bool list_has_word(const char *list, const char *word, const char *seps)
{
	size_t n = strlen(word);

	list += strspn(list, seps);
	while (*list) {
		size_t len = strcspn(list, seps);

		if (len == n && !strncmp(list, word, n))
			return true;
		list += len;
		list += strspn(list, seps);
	}
	return false;
}

static bool is_odigit(char c)
{
	return c >= '0' && c <= '7';
}

/* mountinfo writes ' ', '\t', '\n' and '\\' in paths as \ooo (octal). */
static void unescape_octal(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    is_odigit(s[2]) && is_odigit(s[3])) {
			*w++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

bool mountinfo_parse_line(char *line, struct mount_entry *m)
{
	char *tok = NULL;
	int i;

	line[strcspn(line, "\n")] = '\0';
	for (i = 0; i < 5; i++)
		if (!(tok = strsep(&line, " ")))
			return false;
	m->point = tok;
	do
		tok = strsep(&line, " ");
	while (tok && strcmp(tok, "-"));
	if (!tok)
		return false;
	m->fstype = strsep(&line, " ");
	if (!strsep(&line, " "))	/* source */
		return false;
	m->super_opts = strsep(&line, " ");
	if (!m->super_opts)
		return false;
	unescape_octal(m->point);
	return true;
}

static void set_hierarchy(struct cpu_hierarchy *out, const char *root, int version)
{
	snprintf(out->root, sizeof(out->root), "%s", root);
	out->version = version;
}

int cpu_hierarchy_from_mountinfo(FILE *mountinfo, struct cpu_hierarchy *out,
				 int (*controllers_of)(const char *mnt, char *buf, size_t len))
{
	char v1[sizeof(out->root)] = "";
	char ctl[512];
	struct mount_entry m;
	char *line = NULL;
	size_t cap = 0;
	int r = -ENOENT;

	while (getline(&line, &cap, mountinfo) >= 0) {
		if (!mountinfo_parse_line(line, &m) || strlen(m.point) >= sizeof(v1))
			continue;
		if (!strcmp(m.fstype, "cgroup2")) {
			/* cgroup.controllers lists what the root can hand down. */
			if (controllers_of && !controllers_of(m.point, ctl, sizeof(ctl)) &&
			    list_has_word(ctl, "cpu", " \t\n")) {
				set_hierarchy(out, m.point, 2);
				r = 0;
				break;
			}
		} else if (!strcmp(m.fstype, "cgroup") && !v1[0] &&
			   list_has_word(m.super_opts, "cpu", ",")) {
			strcpy(v1, m.point);
		}
	}
	free(line);
	if (!r)
		return 0;
	/* A cut-short read must not pick v1 over a v2 mount further down. */
	if (ferror(mountinfo))
		return -EIO;
	/* v2 wins wherever it appears; fall back on the first v1 cpu mount. */
	if (!v1[0])
		return -ENOENT;
	set_hierarchy(out, v1, 1);
	return 0;
}

int cgroup_read_controllers(const char *mnt, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, r = 0;

	if (len < 2)
		return -EINVAL;
	if (snprintf(path, sizeof(path), "%s/cgroup.controllers", mnt) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* One read: it is a single short line. A full buffer may be cut mid-word. */
	n = read(fd, buf, len - 1);
	if (n < 0)
		r = -errno;
	else if ((size_t)n == len - 1)
		r = -EFBIG;
	else
		buf[n] = '\0';
	close(fd);
	return r;
}

/* @dir must be a cgroup (v1 or v2) directory; the magic tells the version. */
static int hierarchy_at(const char *dir, struct cpu_hierarchy *out)
{
	struct statfs sfs;
	int fd, r, version;

	if (strlen(dir) >= sizeof(out->root))
		return -ENAMETOOLONG;
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = fstatfs(fd, &sfs) ? -errno : 0;
	close(fd);
	if (r)
		return r;
	if (sfs.f_type == CGROUP2_SUPER_MAGIC)
		version = 2;
	else if (sfs.f_type == CGROUP_SUPER_MAGIC)
		version = 1;
	else
		return -EINVAL;
	set_hierarchy(out, dir, version);
	return 0;
}

int cpu_hierarchy_find(const char *override, struct cpu_hierarchy *out)
{
	FILE *f;
	int r;

	if (override)
		return hierarchy_at(override, out);
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	r = cpu_hierarchy_from_mountinfo(f, out, cgroup_read_controllers);
	fclose(f);
	return r;
}

/* Walk state: one path buffer, extended and cut back as we descend. */
struct scan {
	struct container_table *t;
	const struct class_rules *rules;
	dev_t dev;		/* the hierarchy's; other filesystems are not cgroups */
	unsigned int depth;	/* of the directory being listed; the root is 0 */
	size_t skipped;
	char path[PATH_MAX];	/* relative to the root, "" at the root */
};

static int table_push(struct scan *s, const struct stat *st)
{
	struct container_table *t = s->t;
	struct container *c;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;

		if (cap > SIZE_MAX / sizeof(*c))
			return -ENOMEM;
		c = realloc(t->v, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		t->v = c;
		t->cap = cap;
	}
	c = &t->v[t->n];
	c->path = strdup(s->path[0] ? s->path : "/");
	if (!c->path)
		return -ENOMEM;
	c->id = st->st_ino;
	classify(s->rules, c->path, &c->ident);
	t->n++;
	return 0;
}

static int scan_dir(struct scan *s, int fd, size_t len);

/*
 * An entry that could not be opened as a directory. Races with cgroup
 * removal and permission walls are normal: count them, go on.
 */
static int scan_unopened(struct scan *s, int dfd, const char *name, int err)
{
	struct stat st;

	switch (err) {
	case -ENOTDIR:
	case -ELOOP:		/* a file or a symlink: not a cgroup */
		return 0;
	case -ENOENT:		/* removed since it was listed */
		s->skipped++;
		return 0;
	case -EACCES:
	case -EPERM:
		/* Still a cgroup with an id; only what is below it stays unseen. */
		s->skipped++;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(st.st_mode) || st.st_dev != s->dev)
			return 0;
		return table_push(s, &st);
	default:
		return err;
	}
}

static int scan_entry(struct scan *s, int dfd, const struct dirent *de, size_t len)
{
	size_t nlen = strlen(de->d_name);
	struct stat st;
	int fd, r;

	if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
		return 0;
	if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
		return 0;
	if (len + 1 + nlen >= sizeof(s->path) || s->depth >= CGROUP_SCAN_MAX_DEPTH) {
		s->skipped++;	/* too deep to name, or to hold open */
		return 0;
	}
	s->path[len] = '/';
	memcpy(s->path + len + 1, de->d_name, nlen + 1);

	/* O_NOFOLLOW: a symlink fails with ELOOP instead of being walked. */
	fd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return scan_unopened(s, dfd, de->d_name, -errno);
	r = 0;
	if (fstat(fd, &st)) {
		r = -errno;
		goto out_close;
	}
	if (st.st_dev != s->dev)	/* another filesystem mounted here */
		goto out_close;
	r = table_push(s, &st);
	if (r)
		goto out_close;
	s->depth++;
	r = scan_dir(s, fd, len + 1 + nlen);	/* takes fd */
	s->depth--;
	return r;

out_close:
	close(fd);
	return r;
}

/* List the directory open at @fd (consumed), whose path is s->path[0..len). */
static int scan_dir(struct scan *s, int fd, size_t len)
{
	struct dirent *de;
	DIR *d;
	int r = 0;

	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno == ENOENT)
				s->skipped++;	/* removed while we read it */
			else if (errno)
				r = -errno;
			break;
		}
		r = scan_entry(s, dirfd(d), de, len);
		if (r < 0)
			break;
	}
	closedir(d);
	s->path[len] = '\0';
	return r;
}

static size_t hash_id(unsigned long long id, size_t mask)
{
	unsigned long long h = id * 0x9E3779B97F4A7C15ULL;

	return (size_t)(h ^ (h >> 32)) & mask;
}

void container_table_changed(struct container_table *t)
{
	static unsigned long long gens;	/* process-wide: a table never gets another's */

	t->gen = __atomic_add_fetch(&gens, 1, __ATOMIC_RELAXED);
}

/* Build the open-addressing index, at most half full so probes stay short. */
static int table_index(struct container_table *t)
{
	size_t cap = 16, i, slot;

	while (cap < t->n * 2) {
		if (cap > SIZE_MAX / 2 / sizeof(*t->index))
			return -ENOMEM;
		cap *= 2;
	}
	t->index = malloc(cap * sizeof(*t->index));
	if (!t->index)
		return -ENOMEM;
	memset(t->index, 0xff, cap * sizeof(*t->index));	/* all SIZE_MAX: empty */
	t->index_cap = cap;
	for (i = 0; i < t->n; i++) {
		for (slot = hash_id(t->v[i].id, cap - 1); t->index[slot] != SIZE_MAX;
		     slot = (slot + 1) & (cap - 1))
			if (t->v[t->index[slot]].id == t->v[i].id)
				break;	/* same id twice: keep the first */
		if (t->index[slot] == SIZE_MAX)
			t->index[slot] = i;
	}
	container_table_changed(t);
	return 0;
}

int container_table_scan(struct container_table *t, const char *root,
			 const struct class_rules *rules, size_t *skipped)
{
	struct scan s = { .t = t, .rules = rules };
	struct stat st;
	int fd, r;

	container_table_free(t);
	if (skipped)
		*skipped = 0;
	/* The root itself may be a symlink (e.g. cpu -> cpu,cpuacct); nothing below. */
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		r = -errno;
		close(fd);
		return r;
	}
	s.dev = st.st_dev;
	r = table_push(&s, &st);
	if (r)
		close(fd);
	else
		r = scan_dir(&s, fd, 0);
	if (!r)
		r = table_index(t);
	if (r) {
		container_table_free(t);
		return r;
	}
	if (skipped)
		*skipped = s.skipped;
	return 0;
}

int container_table_adopt(struct container_table *t, struct container *v, size_t n)
{
	int r;

	container_table_free(t);
	t->v = v;
	t->n = t->cap = n;
	r = table_index(t);
	if (r)
		container_table_free(t);
	return r;
}

const char *container_label(const struct container *c, char *buf, size_t len)
{
	const struct cg_identity *id = &c->ident;

	if (!id->pod_name[0])
		snprintf(buf, len, "%s", c->path);
	else if (!id->container[0])
		snprintf(buf, len, "%s (%s/%s)", c->path, id->namespace, id->pod_name);
	else
		snprintf(buf, len, "%s (%s/%s/%s)", c->path, id->namespace, id->pod_name,
			 id->container);
	return buf;
}

const struct container *container_table_get(const struct container_table *t,
					    unsigned long long id)
{
	size_t mask, slot;

	if (!t->index_cap)
		return NULL;
	mask = t->index_cap - 1;
	for (slot = hash_id(id, mask); t->index[slot] != SIZE_MAX; slot = (slot + 1) & mask)
		if (t->v[t->index[slot]].id == id)
			return &t->v[t->index[slot]];
	return NULL;
}

void container_table_free(struct container_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].path);
	free(t->v);
	free(t->index);
	memset(t, 0, sizeof(*t));
}
