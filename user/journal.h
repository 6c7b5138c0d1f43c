/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The journal of original cgroup values: recorded durably before the first
 * change of each file, so that a stop, or the next start after a crash,
 * puts every value back.
 *
 * On disk: STATE_DIR/journal, a JSON document
 *   {"version": 1, "entries": [{"path": ABS_PATH, "value": ORIGINAL}, ...]}
 * rewritten whole through a temporary file, fsync'ed, renamed over the old
 * one, and the directory fsync'ed.
 */
#ifndef KOORD_JOURNAL_H
#define KOORD_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>

/* Longest value journaled (cgroup files hold far less). */
#define JOURNAL_VALUE_MAX 65536

struct journal_entry {
	char *path;	/* absolute path of the cgroup file */
	char *value;	/* its value before the first change, without trailing newline */
};

struct journal {
	char *dir;		/* state dir */
	int dirfd;		/* -1: none (parsed text only) */
	struct journal_entry *v;
	size_t n, cap;
};

/* An empty journal with no state dir (for journal_parse; open and load do it). */
void journal_init(struct journal *j);

/*
 * Open (creating @dir 0700 when missing; its parent must exist) a journal.
 * Fails with -EEXIST when a journal file is already there: journal_load() and
 * journal_restore() it first. A symlink as @dir is refused (-ELOOP).
 */
int journal_open(struct journal *j, const char *dir);
/* Is @path journaled already? */
bool journal_has(const struct journal *j, const char *path);
/* @path's original value (what a rollback puts back), NULL when not journaled. */
const char *journal_original(const struct journal *j, const char *path);
/*
 * Add @path's original @value and make it durable before returning (0 at
 * once when @path is journaled already: the first value is the original).
 * On any failure (disk full, read-only dir) the entry is not added, the file
 * on disk is the previous one, the negative errno is returned, and the
 * caller must not change the file. -EINVAL for a path or value the journal
 * could not load back (relative, "..", a value of JOURNAL_VALUE_MAX or more).
 */
int journal_record(struct journal *j, const char *path, const char *value);
/*
 * Drop @path's entry: its original is back in place (a rollback), and a
 * later write journals the value then found. 0, or the save's error (the
 * entry then stays).
 */
int journal_forget(struct journal *j, const char *path);
/*
 * Drop the entries whose file is gone with its cgroup, so that the journal
 * holds what still exists, not every cgroup ever written. Returns how many
 * went, or the save's error (then none went).
 */
int journal_prune(struct journal *j);
/*
 * Put back every original value through @restore (the writer's raw write),
 * retrying in further passes those refused with EACCES, EBUSY or EINVAL (a
 * cpuset parent must widen before its child), then remove the journal file. Files that
 * vanished (ENOENT, ENODEV) count as restored. Returns the number of values
 * that could not be restored (they stay in the file for the next start, in
 * their order), or -ENOMEM. Up to 4 passes, stopping at one that restores
 * nothing; other errors are kept at once.
 */
int journal_restore(struct journal *j, int (*restore)(void *ctx, const char *path, const char *value),
		    void *ctx);
/* Free the entries and close the dir; the file stays for the next start. */
void journal_close(struct journal *j);

/*
 * Load the journal a crashed run left in @dir into @j (j->n == 0 when there
 * is none, or no @dir). A file that cannot be parsed is an error (-EBADMSG)
 * with the reason in @err (e.g. "entry 3: path: not absolute", entries
 * counted from 0), and nothing is loaded from it. Call journal_close() after
 * it, whatever it returned.
 */
int journal_load(struct journal *j, const char *dir, char *err, size_t errlen);
/*
 * Parse journal text into @j (journal_init'ed or loaded), replacing its
 * entries; same errors as journal_load. A later duplicate path is dropped.
 */
int journal_parse(struct journal *j, const char *text, size_t len, char *err, size_t errlen);

#endif
