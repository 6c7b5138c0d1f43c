/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one module that writes cgroup files. It refuses paths outside the
 * allowed roots, never follows a symlink (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS, or a component walk with O_NOFOLLOW where openat2 is
 * missing), journals a file's original value before its first change, skips
 * writes that change nothing, and treats a vanished cgroup as a normal event.
 */
#ifndef KOORD_WRITER_H
#define KOORD_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include "journal.h"

#define WRITER_ROOTS_MAX 64

struct writer {
	char *roots[WRITER_ROOTS_MAX];	/* absolute, no trailing '/' */
	int rootfds[WRITER_ROOTS_MAX];	/* O_PATH, opened without following symlinks */
	size_t nroots;
	struct journal *journal;	/* NULL: nothing journaled (dry run, or tests) */
	bool dry_run;			/* decide and log, write nothing */
	/*
	 * writes: done (not counting dry-run ones); skipped: value already
	 * there; refused: outside the roots or through a symlink; vanished:
	 * the cgroup went away; failed: any other error, journal included;
	 * left: values not restored, another writer having set them since;
	 * foreign: writes not done, another writer having set the file since
	 * this one's last write (the daemon stops acting on that file).
	 */
	unsigned long long writes, skipped, refused, vanished, failed, left, foreign;
	char **foreign_paths;		/* each logged once */
	size_t nforeign;
	/* the inode each file written had then: a cgroup made again is no other writer */
	struct writer_inode {
		char *path;
		unsigned long long ino;
	} *inodes;
	size_t ninodes;
};

/* Empty writer; @journal may be NULL only with @dry_run. */
void writer_init(struct writer *w, struct journal *journal, bool dry_run);
/*
 * Allow writes below @abs_dir. A root that does not exist is skipped
 * (returns -ENOENT, nothing added); one reached through a symlink is
 * refused (-ELOOP). Again for a known root: where its directory was removed
 * and made again, the new one is written below.
 */
int writer_add_root(struct writer *w, const char *abs_dir);
/*
 * Is @path below an allowed root (textually: absolute, no "//", no "." or
 * ".." component, not the root itself; files right in a root dir are)?
 */
bool writer_allowed(const struct writer *w, const char *path);

/*
 * Read @path (absolute, under a root) into @buf, trailing whitespace removed;
 * -EFBIG when it does not fit in @len.
 * Returns 0, -EPERM outside the roots, -ELOOP through a symlink, -ENOENT
 * when it vanished, or another negative errno.
 */
int writer_read(struct writer *w, const char *path, char *buf, size_t len);
/*
 * Set @path to @value: 0 when written (or, dry run, would be), 1 when it
 * already held @value (trailing whitespace ignored; nothing written),
 * -EPERM outside the roots, -ELOOP through a symlink, -ENOENT when the
 * cgroup vanished, -EBUSY when another writer set the file since this
 * one's last write to it (koordlet, the kubelet, a person: it is theirs
 * now, left as they set it, logged once and counted in @foreign), the
 * journal's error when the original and @value could not be journaled
 * (then the file is left unchanged), -EIO for a short write, or the
 * write's errno. @value goes in one write(); "" is written as
 * "\n". The journal records @value before the write, and what the file
 * reads back after it when that differs.
 */
int writer_set(struct writer *w, const char *path, const char *value);
/*
 * writer_set() of @path where the kernel changes @coupled as well: cpu.idle
 * sets the group's cpu.shares (cpu.weight), and setting it back resets that
 * to the default, @reset, not to what it was (kubelet's BE groups hold 2).
 * @coupled's value is journaled before the write, with @reset and what it
 * reads after the write both known as ours, so a restore puts it back
 * (journal_restore restores it after cpu.idle). Same returns as writer_set().
 */
int writer_set_coupled(struct writer *w, const char *path, const char *value, const char *coupled,
		       const char *reset);
/*
 * Write without journaling or comparing (cgroup.kill, restoring); same
 * checks and errors. A dry run only logs.
 */
int writer_raw(struct writer *w, const char *path, const char *value);
/*
 * @path holds what its parent's @parent_path holds, copied when the cgroup
 * was made (a v1 cpuset: the runtime copies the parent's CPUs into a new
 * cgroup): where that is a value this writer set and @path is not journaled
 * yet, it is this writer's too. Journaled with the parent's original, which
 * the cgroup would have copied without the write, so a restore widens it as
 * well. 1 when journaled, 0 when there is nothing of ours to take, -EAGAIN
 * while the copy is not made yet (empty), or the read's or journal's error.
 */
int writer_adopt(struct writer *w, const char *path, const char *parent_path);
/*
 * Put @e's original back where its file still holds what was written
 * (journal_judge): 0 when restored, or when the original is in place;
 * JOURNAL_LEFT, logged and counted in @left, when another writer set it
 * since; the read's or the write's error otherwise (-ENOENT: vanished).
 */
int writer_restore(struct writer *w, const struct journal_entry *e);
/*
 * Put every file of @j back (journal_restore through writer_restore): the
 * roots must be added first, a path outside them stays journaled. Returns
 * the number not restored, as journal_restore; a dry run restores nothing.
 */
int writer_restore_journal(struct writer *w, struct journal *j);
/* writer_restore_journal() of the writer's own journal. */
int writer_restore_all(struct writer *w);
/* Close the roots and forget the foreign files; the journal is the caller's. */
void writer_free(struct writer *w);
/* For tests: resolve paths by the component walk even where openat2 exists. */
void writer_force_walk(bool on);

#endif
