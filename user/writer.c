// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The one cgroup writer. Paths are checked as text first (below a root, no
 * "." or ".." component) and then opened relative to the root's fd without
 * following any symlink, so neither a hostile cgroup name nor a link planted
 * in a container's cgroup dir can make it write elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "log.h"
#include "writer.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static bool force_walk;

void writer_force_walk(bool on)
{
	force_walk = on;
}

void writer_init(struct writer *w, struct journal *journal, bool dry_run)
{
	memset(w, 0, sizeof(*w));
	for (size_t i = 0; i < WRITER_ROOTS_MAX; i++)
		w->rootfds[i] = -1;
	w->journal = journal;
	w->dry_run = dry_run;
}

/* Whether @path is absolute with no empty, "." or ".." component. */
static bool clean_path(const char *path)
{
	const char *p = path;

	if (p[0] != '/' || strlen(p) >= PATH_MAX)
		return false;
	while (*p) {
		size_t len;

		p++;	/* the '/' */
		len = strcspn(p, "/");
		if (!len || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += len;
	}
	return true;
}

/* Is @name in @parent a symlink? */
static bool is_link_at(int parent, const char *name)
{
	struct stat st;

	return !fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode);
}

/*
 * Open the directory @rel (relative, components separated by single '/')
 * below @fd as O_PATH, one component at a time and never through a symlink.
 */
static int walk_dirs(int fd, const char *rel, size_t rellen)
{
	char name[NAME_MAX + 1];
	const char *p = rel, *end = rel + rellen;
	int cur = dup(fd);

	if (cur < 0)
		return -errno;
	while (p < end) {
		size_t len = strcspn(p, "/");
		int next;

		if (len > NAME_MAX || p + len > end) {
			close(cur);
			return -ENAMETOOLONG;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		next = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			int err = -errno;

			if ((err == -ENOTDIR || err == -ELOOP) && is_link_at(cur, name))
				err = -ELOOP;
			close(cur);
			return err;
		}
		close(cur);
		cur = next;
		p += len;
		if (*p == '/')
			p++;
	}
	return cur;
}

/* Do @a and @b name the same directory (device and inode)? */
static bool same_dir(int a, int b)
{
	struct stat x, y;

	return !fstat(a, &x) && !fstat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int writer_add_root(struct writer *w, const char *abs_dir)
{
	size_t len = strlen(abs_dir);
	char dir[PATH_MAX];
	int fd, rootfd;

	while (len > 1 && abs_dir[len - 1] == '/')
		len--;
	if (len >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, abs_dir, len);
	dir[len] = '\0';
	/* "/" would allow every file on the host */
	if (len <= 1 || !clean_path(dir))
		return -EINVAL;
	rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	fd = walk_dirs(rootfd, dir + 1, len - 1);
	close(rootfd);
	for (size_t i = 0; i < w->nroots; i++) {
		if (strcmp(w->roots[i], dir))
			continue;
		/* known: keep its fd unless the directory was removed and made again */
		if (fd >= 0 && !same_dir(fd, w->rootfds[i])) {
			close(w->rootfds[i]);
			w->rootfds[i] = fd;
			log_info("%s was made again: writing below the new one", dir);
			return 0;
		}
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (fd < 0)
		return fd;
	if (w->nroots == WRITER_ROOTS_MAX) {
		close(fd);
		return -ENOSPC;
	}
	w->roots[w->nroots] = strdup(dir);
	if (!w->roots[w->nroots]) {
		close(fd);
		return -ENOMEM;
	}
	w->rootfds[w->nroots++] = fd;
	return 0;
}

/* The longest root @path lies below, or -1; *@rel gets the rest of @path. */
static int find_root(const struct writer *w, const char *path, const char **rel)
{
	size_t best_len = 0;
	int best = -1;

	if (!clean_path(path))
		return -1;
	for (size_t i = 0; i < w->nroots; i++) {
		size_t len = strlen(w->roots[i]);

		if (len > best_len && !strncmp(path, w->roots[i], len) && path[len] == '/') {
			best = (int)i;
			best_len = len;
		}
	}
	if (best >= 0)
		*rel = path + best_len + 1;
	return best;
}

bool writer_allowed(const struct writer *w, const char *path)
{
	const char *rel;

	return find_root(w, path, &rel) >= 0;
}

/* The openat2-less way: walk the dirs, then open the file with O_NOFOLLOW. */
static int open_walk(int rootfd, const char *rel, int flags)
{
	const char *slash = strrchr(rel, '/');
	const char *name = slash ? slash + 1 : rel;
	int dirfd, fd, err;

	dirfd = walk_dirs(rootfd, rel, slash ? (size_t)(slash - rel) : 0);
	if (dirfd < 0)
		return dirfd;
	fd = openat(dirfd, name, flags | O_NOFOLLOW);
	err = fd < 0 ? -errno : 0;
	if (err == -ENOTDIR && is_link_at(dirfd, name))
		err = -ELOOP;
	close(dirfd);
	return err ? err : fd;
}

static int open_beneath(int rootfd, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (unsigned int)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (!force_walk) {
		fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno != ENOSYS)
			return -errno;
	}
	return open_walk(rootfd, rel, flags | O_CLOEXEC);
}

/* Count and log a failed open or I/O as refused, vanished or failed. */
static int account(struct writer *w, const char *path, int err)
{
	switch (err) {
	case -ELOOP:
	case -EXDEV:
		w->refused++;
		log_warn("%s: refused: a symlink on the way", path);
		return -ELOOP;
	case -ENOENT:
	case -ENODEV:
	case -ESRCH:
		/* the cgroup went away with its pod: normal */
		w->vanished++;
		log_debug("%s: vanished", path);
		return -ENOENT;
	default:
		w->failed++;
		log_warn("%s: %s", path, strerror(-err));
		return err;
	}
}

static int refuse_outside(struct writer *w, const char *path)
{
	w->refused++;
	log_warn("%s: refused: not below an allowed root", path);
	return -EPERM;
}

/* Open @path under its root; errors are counted and logged. */
static int open_checked(struct writer *w, const char *path, int flags)
{
	const char *rel;
	int root = find_root(w, path, &rel);
	int fd;

	if (root < 0)
		return refuse_outside(w, path);
	fd = open_beneath(w->rootfds[root], rel, flags);
	return fd < 0 ? account(w, path, fd) : fd;
}

static void trim_end(char *s)
{
	size_t len = strlen(s);

	while (len && strchr(" \t\r\n", s[len - 1]))
		s[--len] = '\0';
}

int writer_read(struct writer *w, const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd;

	const char *rel;

	if (!len)
		return -EINVAL;
	/* a read outside the roots harms nothing: refused quietly, not counted */
	if (find_root(w, path, &rel) < 0)
		return -EPERM;
	fd = open_checked(w, path, O_RDONLY);
	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			close(fd);
			return account(w, path, err);
		}
		if (!n)
			break;
		got += (size_t)n;
		if (got == len) {
			close(fd);
			return account(w, path, -EFBIG);
		}
	}
	close(fd);
	buf[got] = '\0';
	trim_end(buf);
	return 0;
}

/*
 * One write() of @value: cgroup files parse each write on its own. An empty
 * value is written as "\n" so that the kernel does see a write.
 */
static int write_value(struct writer *w, const char *path, const char *value)
{
	const char *buf = *value ? value : "\n";
	size_t len = strlen(buf);
	ssize_t n;
	int fd, err = 0;

	/* O_TRUNC as a shell's ">": no-op on cgroupfs, exact content elsewhere */
	fd = open_checked(w, path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return fd;
	n = write(fd, buf, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	if (err)
		return account(w, path, err);
	w->writes++;
	return 0;
}

int writer_raw(struct writer *w, const char *path, const char *value)
{
	int err;

	if (w->dry_run) {
		if (!writer_allowed(w, path))
			return refuse_outside(w, path);
		log_info("would write %s to %s", value, path);
		return 0;
	}
	err = write_value(w, path, value);
	if (!err)
		log_info("%s: wrote %s", path, value);
	return err;
}

/* Journal that @next goes to @path, holding @cur (its original at the first write); 0 or the error. */
static int journal_next(struct writer *w, const char *path, const char *cur, const char *next)
{
	int err;

	if (!w->journal)
		return 0;
	err = journal_record(w->journal, path, cur, next);
	if (err) {
		w->failed++;
		log_warn("%s: left unchanged: cannot journal its value: %s", path, strerror(-err));
	}
	return err;
}

/*
 * The file may read back otherwise than @value was written (a kernel's own
 * form): journal what it holds as written, so that a restore knows it as
 * ours. @buf is scratch of JOURNAL_VALUE_MAX bytes.
 */
static void journal_read_back(struct writer *w, const char *path, const char *value, char *buf)
{
	int err;

	if (!w->journal || writer_read(w, path, buf, JOURNAL_VALUE_MAX) ||
	    journal_same(buf, value))
		return;
	err = journal_record(w->journal, path, value, buf);
	if (err)
		log_warn("%s: reads back %s after %s was written, and the journal cannot say so (%s): "
			 "a restore will take it for another writer's value", path, buf, value,
			 strerror(-err));
}

/* @path's inode now (0 when it cannot be opened). */
static unsigned long long inode_of(struct writer *w, const char *path)
{
	const char *rel;
	int root = find_root(w, path, &rel), fd;
	struct stat st;
	unsigned long long ino = 0;

	fd = root < 0 ? -1 : open_beneath(w->rootfds[root], rel, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &st))
		ino = st.st_ino;
	if (fd >= 0)
		close(fd);
	return ino;
}

/* The slot of @path in the inodes written, w->ninodes when none. */
static size_t inode_slot(const struct writer *w, const char *path)
{
	size_t i;

	for (i = 0; i < w->ninodes && strcmp(w->inodes[i].path, path); i++)
		;
	return i;
}

/* Remember the inode @path has as it is written. */
static void inode_note(struct writer *w, const char *path)
{
	size_t i = inode_slot(w, path);
	struct writer_inode *grown;

	if (i == w->ninodes) {
		grown = realloc(w->inodes, (w->ninodes + 1) * sizeof(*grown));
		if (!grown)
			return;
		w->inodes = grown;
		if (!(grown[i].path = strdup(path)))
			return;
		w->ninodes++;
	}
	w->inodes[i].ino = inode_of(w, path);
}

/*
 * Has another writer set @path, holding @cur, since this one's last write?
 * A journaled file holds what was last written, or the value before it
 * (that write failed); anything else, the original included, is someone
 * else's. The first time, it is logged.
 */
static bool foreign(struct writer *w, const char *path, const char *cur)
{
	const struct journal_entry *e = w->journal ? journal_find(w->journal, path) : NULL;
	size_t i, slot = inode_slot(w, path);
	unsigned long long ino;
	char **grown;

	if (!e || !e->written || journal_same(cur, e->written) ||
	    (e->previous && journal_same(cur, e->previous)) || slot == w->ninodes)
		return false;
	ino = inode_of(w, path);
	if (ino && ino != w->inodes[slot].ino) {
		/* the cgroup was removed and made again: a new file, whose value is its original */
		journal_forget(w->journal, path);
		return false;
	}
	w->foreign++;
	for (i = 0; i < w->nforeign; i++)
		if (!strcmp(w->foreign_paths[i], path))
			return true;
	log_warn("%s: another writer set it to %s after this one wrote %s: left to it, not written "
		 "again (restored at the stop only where it holds this one's value)", path, cur,
		 e->written);
	grown = realloc(w->foreign_paths, (w->nforeign + 1) * sizeof(*grown));
	if (grown && (grown[w->nforeign] = strdup(path))) {
		w->foreign_paths = grown;
		w->nforeign++;
	} else if (grown) {
		w->foreign_paths = grown;
	}
	return true;
}

int writer_set(struct writer *w, const char *path, const char *value)
{
	char *cur = malloc(JOURNAL_VALUE_MAX);
	bool had;
	int err;

	if (!cur)
		return -ENOMEM;
	if (!writer_allowed(w, path)) {
		err = refuse_outside(w, path);
		goto out;
	}
	err = writer_read(w, path, cur, JOURNAL_VALUE_MAX);
	if (err)
		goto out;
	if (journal_same(cur, value)) {
		w->skipped++;
		err = 1;
		goto out;
	}
	if (w->dry_run) {
		log_info("would write %s to %s (now %s)", value, path, cur);
		goto out;
	}
	if (foreign(w, path, cur)) {
		err = -EBUSY;
		goto out;
	}
	had = w->journal && journal_has(w->journal, path);
	err = journal_next(w, path, cur, value);
	if (err)
		goto out;
	err = write_value(w, path, value);
	if (!err) {
		log_info("%s: %s -> %s", path, cur, value);
		journal_read_back(w, path, value, cur);
		inode_note(w, path);
	} else if (!had && w->journal) {
		/* nothing changed: the file holds its original, which is not another writer's */
		journal_forget(w->journal, path);
	}
out:
	free(cur);
	return err;
}

int writer_set_coupled(struct writer *w, const char *path, const char *value, const char *coupled,
		       const char *reset)
{
	char *cur;
	int err;

	if (!w->journal || w->dry_run || !writer_allowed(w, coupled))
		return writer_set(w, path, value);
	cur = malloc(JOURNAL_VALUE_MAX);
	if (!cur)
		return -ENOMEM;
	/* nothing to journal when @path is not about to change, or @coupled is not there */
	if (writer_read(w, path, cur, JOURNAL_VALUE_MAX) || journal_same(cur, value) ||
	    writer_read(w, coupled, cur, JOURNAL_VALUE_MAX)) {
		free(cur);
		return writer_set(w, path, value);
	}
	err = journal_next(w, coupled, cur, reset);
	if (!err)
		err = writer_set(w, path, value);
	if (!err) {
		journal_read_back(w, coupled, reset, cur);
		inode_note(w, coupled);
	}
	free(cur);
	return err;
}

int writer_adopt(struct writer *w, const char *path, const char *parent_path)
{
	const struct journal_entry *pe;
	char *cur, *parent;
	int err;

	if (!w->journal || w->dry_run || journal_has(w->journal, path))
		return 0;
	pe = journal_find(w->journal, parent_path);
	if (!pe || !pe->written || !writer_allowed(w, path))
		return 0;
	cur = malloc(2 * JOURNAL_VALUE_MAX);
	if (!cur)
		return -ENOMEM;
	parent = cur + JOURNAL_VALUE_MAX;
	err = writer_read(w, path, cur, JOURNAL_VALUE_MAX);
	if (!err)
		err = writer_read(w, parent_path, parent, JOURNAL_VALUE_MAX);
	if (err)
		goto out;
	if (journal_same(cur, "")) {
		err = -EAGAIN;
		goto out;
	}
	/* the parent's value must be ours, and the child's a copy of it, not its original */
	if (!journal_same(parent, pe->written) || !journal_same(cur, parent) ||
	    journal_same(cur, pe->value))
		goto out;
	err = journal_record(w->journal, path, pe->value, cur);
	if (err) {
		w->failed++;
		log_warn("%s: holds %s, copied from %s, and the journal cannot say so (%s): a "
			 "restore will not widen it", path, cur, parent_path, strerror(-err));
		goto out;
	}
	inode_note(w, path);
	log_info("%s: made holding %s, this writer's value of %s: journaled with its original %s",
		 path, cur, parent_path, pe->value);
	err = 1;
out:
	free(cur);
	return err;
}

int writer_restore(struct writer *w, const struct journal_entry *e)
{
	char *cur;
	int err;

	if (w->dry_run) {
		log_info("would restore %s to %s", e->value, e->path);
		return 0;
	}
	cur = malloc(JOURNAL_VALUE_MAX);
	if (!cur)
		return -ENOMEM;
	err = writer_read(w, e->path, cur, JOURNAL_VALUE_MAX);
	if (err)
		goto out;
	switch (journal_judge(e, cur)) {
	case JOURNAL_IN_PLACE:
		w->skipped++;
		break;
	case JOURNAL_RESTORE:
		err = write_value(w, e->path, e->value);
		if (!err)
			log_info("%s: %s -> %s (restored)", e->path, cur, e->value);
		break;
	case JOURNAL_CHANGED:
		w->left++;
		log_warn("%s: left as it is: it holds %s, not what was written (%s); another writer "
			 "set it since", e->path, cur, e->written);
		err = JOURNAL_LEFT;
		break;
	}
out:
	free(cur);
	return err;
}

static int restore_one(void *ctx, const struct journal_entry *e)
{
	return writer_restore(ctx, e);
}

int writer_restore_journal(struct writer *w, struct journal *j)
{
	if (w->dry_run) {
		log_info("would restore %zu values", j->n);
		return (int)j->n;
	}
	return journal_restore(j, restore_one, w);
}

int writer_restore_all(struct writer *w)
{
	return w->journal ? writer_restore_journal(w, w->journal) : 0;
}

void writer_free(struct writer *w)
{
	for (size_t i = 0; i < w->nroots; i++) {
		free(w->roots[i]);
		w->roots[i] = NULL;
		if (w->rootfds[i] >= 0)
			close(w->rootfds[i]);
		w->rootfds[i] = -1;
	}
	w->nroots = 0;
	for (size_t i = 0; i < w->nforeign; i++)
		free(w->foreign_paths[i]);
	free(w->foreign_paths);
	w->foreign_paths = NULL;
	w->nforeign = 0;
	for (size_t i = 0; i < w->ninodes; i++)
		free(w->inodes[i].path);
	free(w->inodes);
	w->inodes = NULL;
	w->ninodes = 0;
}
