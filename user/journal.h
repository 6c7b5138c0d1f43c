/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The journal of original cgroup values: recorded durably before the first
 * change of each file, with the value about to be written, so that a stop,
 * or the next start after a crash, puts every value back where the file
 * still holds what was written, and leaves a value someone else set since.
 *
 * On disk: STATE_DIR/journal, JSON lines (version 3):
 *   {"version":3}
 *   {"path":ABS_PATH,"value":ORIGINAL,"written":LAST_WRITTEN,"previous":WRITTEN_BEFORE_IT}
 *   {"forget":ABS_PATH}
 * ("previous" only after a second value). A record appends one line, the
 * entry's whole new state (a later line of a path replaces the earlier), and
 * fdatasyncs it; a rollback appends a "forget". So a record costs its own
 * line, not the journal's size (10,000 pods adopted one by one once cost
 * 10,000 rewrites of a growing file). Once as many lines were appended as
 * there are entries, and whenever an append fails, the file is written whole
 * through a temporary file, fsync'ed, renamed over the old one, and the
 * directory fsync'ed. A last line without its newline is an append cut by a
 * crash: its caller had not written the cgroup file yet, so it is ignored.
 * Versions 1 and 2 (one JSON document {"version": 2, "entries": [...]})
 * still load; version 1 (no "written") is restored whatever the files hold.
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
	char *written;	/* the last value written; NULL: unknown (a version 1 journal) */
	/*
	 * The value written before it, NULL when none: what the file holds
	 * after a crash between the journal's update and the write.
	 */
	char *previous;
};

/* What a restore does with an entry whose file now holds some value. */
enum journal_verdict {
	JOURNAL_RESTORE,	/* it holds what was written: put the original back */
	JOURNAL_IN_PLACE,	/* it holds the original already */
	JOURNAL_CHANGED,	/* someone else set it since: leave it */
};

/* A restore callback's result for a value left as another writer set it. */
#define JOURNAL_LEFT 1

struct journal {
	char *dir;		/* state dir */
	int dirfd;		/* -1: none (parsed text only) */
	int fd;			/* the file, open to append; -1: the next change writes it whole */
	size_t appended;	/* lines appended since it was written whole */
	struct journal_entry *v;	/* in the order first recorded */
	size_t n, cap;
	size_t *index;		/* open addressing by path: v's index + 1, 0 for a free slot */
	size_t index_cap;	/* a power of two, at least twice n; 0 before the first entry */
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
/* @path's entry (its original is what a rollback puts back), NULL when not journaled. */
const struct journal_entry *journal_find(const struct journal *j, const char *path);
/* @path's original value, NULL when not journaled. */
const char *journal_original(const struct journal *j, const char *path);
/*
 * Record that @next is about to be written to @path, which holds @cur, and
 * make it durable before returning: the first record of @path journals @cur
 * as its original; a later one moves the last written value to "previous"
 * (0 at once, nothing saved, when @next is the last written already).
 * On any failure (disk full, read-only dir) the journal is as before, the
 * file on disk is the previous one, the negative errno is returned, and the
 * caller must not change the file. -EINVAL for a path or value the journal
 * could not load back (relative, "..", a value of JOURNAL_VALUE_MAX or more).
 */
int journal_record(struct journal *j, const char *path, const char *cur, const char *next);
/*
 * What to do with @e's file holding @cur (trailing whitespace aside): nothing
 * when it holds the original; restore it when it holds the last value
 * written or the one before it (or when the journal does not know what was
 * written); leave it otherwise.
 */
enum journal_verdict journal_judge(const struct journal_entry *e, const char *cur);
/* @a and @b equal but for trailing whitespace (a cgroup file ends in a newline). */
bool journal_same(const char *a, const char *b);
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
 * Put back every original value through @restore (the writer's restore:
 * 0 when done, JOURNAL_LEFT for a value another writer set since, or a
 * negative errno), retrying in further passes those refused with EACCES,
 * EBUSY or EINVAL (a cpuset parent must widen before its child), then remove
 * the journal file. Files that vanished (ENOENT, ENODEV) count as restored,
 * values left as done. Returns the number of values that could not be
 * restored (they stay in the file for the next start, in their order), or
 * -ENOMEM. Up to 4 passes, stopping at one that restores nothing; other
 * errors are kept at once.
 */
typedef int (*journal_restore_fn)(void *ctx, const struct journal_entry *e);
int journal_restore(struct journal *j, journal_restore_fn restore, void *ctx);
/* Free the entries and close the dir; the file stays for the next start. */
void journal_close(struct journal *j);

/*
 * Load the journal a crashed run left in @dir into @j (j->n == 0 when there
 * is none, or no @dir). A file that cannot be parsed is an error (-EBADMSG)
 * with the reason in @err ("line 3: path: not absolute", lines counted from 1;
 * "entry 3: ...", counted from 0, in a version 1 or 2 document), and nothing
 * is loaded from it. Call journal_close() after
 * it, whatever it returned.
 */
int journal_load(struct journal *j, const char *dir, char *err, size_t errlen);
/*
 * Parse journal text into @j (journal_init'ed or loaded), replacing its
 * entries; same errors as journal_load. In a version 1 or 2 document a
 * later duplicate path is dropped; in version 3 lines it replaces the
 * entry's state (the original must stay), and a "forget" of a path not
 * journaled is an error.
 */
int journal_parse(struct journal *j, const char *text, size_t len, char *err, size_t errlen);

#endif
