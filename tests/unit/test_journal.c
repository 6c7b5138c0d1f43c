/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The journal of original values: durable records, strict parsing, restore
 * with retries. The state dir is a temporary dir; failures are forced in ways
 * that stop root too (a dir or a symlink where the journal writes).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "journal.h"
#include "log.h"
#include "../lib/procio.h"

struct fixture {
	char base[256];
	char state[PATH_MAX];
	struct journal j;
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) && errno != ENOENT ? -1 : 0;
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->base, sizeof(fx->base), "%s/koord-journal-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(fx->base)) {
		free(fx);
		return -1;
	}
	snprintf(fx->state, sizeof(fx->state), "%s/state", fx->base);
	journal_init(&fx->j);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	journal_close(&fx->j);
	nftw(fx->base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* Whether @name exists in the state dir (a symlink counts, not followed). */
static bool state_has(struct fixture *fx, const char *name)
{
	char path[PATH_MAX + 32];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", fx->state, name);
	return !lstat(path, &st);
}

static void state_path(struct fixture *fx, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", fx->state, name);
}

static void write_journal_text(struct fixture *fx, const char *text)
{
	char path[PATH_MAX + 32];
	FILE *f;

	state_path(fx, "journal", path, sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The entries of the journal on disk, loaded into @out (closed by the caller). */
static void load_disk(struct fixture *fx, struct journal *out)
{
	char err[128];

	assert_int_equal(journal_load(out, fx->state, err, sizeof(err)), 0);
}

static void test_record_round_trip(void **state)
{
	struct fixture *fx = *state;
	struct journal back;
	struct stat st;
	char err[128];

	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	assert_int_equal(stat(fx->state, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_false(state_has(fx, "journal"));

	assert_int_equal(journal_record(&fx->j, "/cg/a/cpu.weight", "100", "w"), 0);
	/* durable before returning: the file is there, the tmp is gone */
	assert_true(state_has(fx, "journal"));
	assert_false(state_has(fx, "journal.tmp"));
	assert_int_equal(stat(fx->state, &st), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/b/cpuset.cpus", "0-3,\"8\"\n\\x\t\xc3\xa9", "w"), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/c/cpuset.cpus", "", "w"), 0);
	/* the first value is the original: a second record keeps it */
	assert_int_equal(journal_record(&fx->j, "/cg/a/cpu.weight", "200", "w"), 0);
	assert_int_equal(fx->j.n, 3);
	assert_true(journal_has(&fx->j, "/cg/b/cpuset.cpus"));
	assert_false(journal_has(&fx->j, "/cg/b"));

	/* what the journal refuses it could not load back */
	assert_int_equal(journal_record(&fx->j, "cg/rel", "1", "w"), -EINVAL);
	assert_int_equal(journal_record(&fx->j, "/cg/../etc/x", "1", "w"), -EINVAL);
	assert_int_equal(fx->j.n, 3);

	journal_init(&back);
	assert_int_equal(journal_load(&back, fx->state, err, sizeof(err)), 0);
	assert_int_equal(back.n, 3);
	assert_string_equal(back.v[0].path, "/cg/a/cpu.weight");
	assert_string_equal(back.v[0].value, "100");
	assert_string_equal(back.v[1].path, "/cg/b/cpuset.cpus");
	assert_string_equal(back.v[1].value, "0-3,\"8\"\n\\x\t\xc3\xa9");
	assert_string_equal(back.v[2].value, "");
	assert_string_equal(back.v[0].written, "w");
	assert_null(back.v[0].previous);
	journal_close(&back);

	/* a stop without restore leaves the journal for the next start */
	journal_close(&fx->j);
	assert_true(state_has(fx, "journal"));
	assert_int_equal(journal_open(&fx->j, fx->state), -EEXIST);
	assert_int_equal(fx->j.dirfd, -1);
	assert_int_equal(fx->j.n, 0);
}

static void test_open_errors(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX + 32];

	/* only the last component is created */
	snprintf(path, sizeof(path), "%s/no/state", fx->base);
	assert_int_equal(journal_open(&fx->j, path), -ENOENT);
	/* a symlink as the state dir is not followed */
	snprintf(path, sizeof(path), "%s/link", fx->base);
	assert_int_equal(mkdir(fx->state, 0700), 0);
	assert_int_equal(symlink(fx->state, path), 0);
	assert_int_equal(journal_open(&fx->j, path), -ELOOP);
	/* an existing dir is fine */
	assert_int_equal(journal_open(&fx->j, fx->state), 0);
}

/*
 * Whoever can write the state dir, or a directory above it, chooses what
 * the next start writes back: such a dir is refused, and one readable by
 * others (a hostPath makes it 0755) is made 0700.
 */
static void test_open_untrusted(void **state)
{
	struct fixture *fx = *state;
	struct stat st;

	assert_int_equal(mkdir(fx->state, 0700), 0);
	assert_int_equal(chmod(fx->state, 0777), 0);
	assert_int_equal(journal_open(&fx->j, fx->state), -EPERM);
	assert_int_equal(chmod(fx->state, 0755), 0);
	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	journal_close(&fx->j);
	assert_int_equal(stat(fx->state, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* a parent anyone can write: they could swap the state dir for their own */
	assert_int_equal(chmod(fx->base, 0777), 0);
	assert_int_equal(journal_open(&fx->j, fx->state), -EPERM);
	/* unless sticky, as /tmp: then only its owner may rename or remove it */
	assert_int_equal(chmod(fx->base, 01777), 0);
	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	journal_close(&fx->j);
	assert_int_equal(chmod(fx->base, 0700), 0);
	/* owned by someone else (needs root to arrange) */
	if (geteuid() == 0) {
		assert_int_equal(chown(fx->state, 65534, 65534), 0);
		assert_int_equal(journal_open(&fx->j, fx->state), -EPERM);
		assert_int_equal(chown(fx->state, 0, 0), 0);
	} else {
		print_message("not root: a state dir owned by another user is not tried\n");
	}
}

/*
 * The journal holds what is still to restore: a value put back (a rollback)
 * leaves it, and so do files gone with their cgroups. It once only grew.
 */
static void test_forget_and_prune(void **state)
{
	struct fixture *fx = *state;
	char here[PATH_MAX + 32], gone[PATH_MAX + 32];
	struct journal back;
	int fd;

	snprintf(here, sizeof(here), "%s/cpu.idle", fx->base);
	fd = open(here, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(gone, sizeof(gone), "%s/removed-pod/cpu.idle", fx->base);
	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	assert_int_equal(journal_record(&fx->j, here, "0", "w"), 0);
	assert_int_equal(journal_record(&fx->j, gone, "0", "w"), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/rolled-back/cpu.max", "max 100000", "w"), 0);
	assert_int_equal(journal_forget(&fx->j, "/cg/rolled-back/cpu.max"), 0);
	assert_int_equal(journal_forget(&fx->j, "/cg/never-written"), 0);
	assert_int_equal(fx->j.n, 2);
	assert_int_equal(journal_prune(&fx->j), 1);
	assert_int_equal(journal_prune(&fx->j), 0);
	assert_int_equal(fx->j.n, 1);
	assert_string_equal(fx->j.v[0].path, here);
	/* on disk too */
	journal_init(&back);
	load_disk(fx, &back);
	assert_int_equal(back.n, 1);
	assert_string_equal(back.v[0].path, here);
	journal_close(&back);
	/* forgotten, a path is journaled afresh at its next write */
	assert_int_equal(journal_record(&fx->j, "/cg/rolled-back/cpu.max", "50000 100000", "w"), 0);
	assert_string_equal(journal_original(&fx->j, "/cg/rolled-back/cpu.max"), "50000 100000");
}

/*
 * journal.tmp is a symlink: O_NOFOLLOW refuses it when the journal is next
 * written whole, and the old journal stays. Appends before that do not touch
 * journal.tmp: the file is written whole only once the appends outnumber
 * the entries.
 */
static void test_record_fails_tmp_symlink(void **state)
{
	struct fixture *fx = *state;
	char tmp[PATH_MAX + 32], target[PATH_MAX + 32], value[16], last[16];
	struct journal back;
	int i, err = 0;

	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/a", "1", "w"), 0);
	state_path(fx, "journal.tmp", tmp, sizeof(tmp));
	snprintf(target, sizeof(target), "%s/target", fx->base);
	assert_int_equal(symlink(target, tmp), 0);

	strcpy(last, "w");
	for (i = 0; i < 1000 && !err; i++) {
		snprintf(value, sizeof(value), "%d", i);
		err = journal_record(&fx->j, "/cg/a", last, value);
		if (!err)
			strcpy(last, value);
	}
	assert_int_equal(err, -ELOOP);
	assert_in_range(i, 20, 100);	/* appended until the whole write was due */
	assert_string_equal(journal_find(&fx->j, "/cg/a")->written, last);
	assert_false(state_has(fx, "journal.tmp"));	/* removed */
	assert_int_equal(access(target, F_OK), -1);	/* never created */
	journal_init(&back);
	load_disk(fx, &back);
	assert_int_equal(back.n, 1);
	assert_string_equal(back.v[0].path, "/cg/a");
	assert_string_equal(back.v[0].written, last);
	journal_close(&back);

	/* the tmp is gone, so the next record works */
	assert_int_equal(journal_record(&fx->j, "/cg/b", "2", "w"), 0);
	assert_int_equal(fx->j.n, 2);
}

/* journal.tmp is a dir: the first record, which writes the file whole, fails with EISDIR. */
static void test_record_fails_tmp_dir(void **state)
{
	struct fixture *fx = *state;
	char tmp[PATH_MAX + 32];

	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	state_path(fx, "journal.tmp", tmp, sizeof(tmp));
	assert_int_equal(mkdir(tmp, 0700), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/b", "2", "w"), -EISDIR);
	assert_int_equal(fx->j.n, 0);
	assert_false(journal_has(&fx->j, "/cg/b"));
	assert_false(state_has(fx, "journal"));
	assert_int_equal(rmdir(tmp), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/b", "2", "w"), 0);
	assert_true(state_has(fx, "journal"));
}

/*
 * The journal removed or replaced under the daemon: appends to the file it
 * has open would go nowhere, so it writes the journal whole instead (here
 * over a dir: refused, the entry dropped).
 */
static void test_record_journal_replaced(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX + 32];
	struct journal back;

	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/a", "1", "w"), 0);
	state_path(fx, "journal", path, sizeof(path));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/b", "2", "w"), 0);
	journal_init(&back);
	load_disk(fx, &back);
	assert_int_equal(back.n, 2);
	journal_close(&back);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/journal/x", fx->state);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/c", "3", "w"), -EISDIR);
	assert_false(journal_has(&fx->j, "/cg/c"));
	assert_int_equal(fx->j.n, 2);
}

/* The rename fails ("journal" is a dir): the tmp is removed. */
static void test_record_fails_rename(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX + 32];

	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	state_path(fx, "journal", path, sizeof(path));
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/journal/x", fx->state);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/a", "1", "w"), -EISDIR);
	assert_int_equal(fx->j.n, 0);
	assert_false(state_has(fx, "journal.tmp"));
}

/* The state dir removed under the journal's feet. */
static void test_record_fails_dir_gone(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	assert_int_equal(rmdir(fx->state), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/a", "1", "w"), -ENOENT);
	assert_int_equal(fx->j.n, 0);
	assert_false(journal_has(&fx->j, "/cg/a"));
}

/* @a and @b hold the same entries in the same order. */
static void assert_same_entries(const struct journal *a, const struct journal *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_string_equal(a->v[i].path, b->v[i].path);
		assert_string_equal(a->v[i].value, b->v[i].value);
		assert_string_equal(a->v[i].written, b->v[i].written);
		if (a->v[i].previous || b->v[i].previous)
			assert_string_equal(a->v[i].previous, b->v[i].previous);
	}
}

/*
 * A record costs its own line, not the journal: 2,000 pods journaled one by
 * one (each new BE pod adopting BE's narrowed cpuset), a tenth of them
 * rolled back, write a few times the final file; a journal rewritten whole
 * at each record wrote about a thousand times it. What is on disk loads
 * back as what is in memory.
 */
static void test_record_cost(void **state)
{
	struct fixture *fx = *state;
	char path[128], file[PATH_MAX + 32];
	unsigned long long w0, w1;
	struct journal back;
	struct stat st;
	int i;

	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	w0 = proc_self_wchar();
	for (i = 0; i < 2000; i++) {
		snprintf(path, sizeof(path),
			 "/sys/fs/cgroup/cpuset/kubepods/besteffort/pod%04d/cpuset.cpus", i);
		assert_int_equal(journal_record(&fx->j, path, "0-1", "1"), 0);
		if (i % 10 == 9)
			assert_int_equal(journal_forget(&fx->j, path), 0);
	}
	w1 = proc_self_wchar();
	state_path(fx, "journal", file, sizeof(file));
	assert_int_equal(stat(file, &st), 0);
	if (w1 - w0 >= 4 * (unsigned long long)st.st_size)
		fail_msg("2000 records wrote %llu bytes for a journal of %lld", w1 - w0,
			 (long long)st.st_size);
	assert_int_equal(fx->j.n, 1800);
	journal_init(&back);
	load_disk(fx, &back);
	assert_same_entries(&fx->j, &back);
	journal_close(&back);
}

/*
 * The path index finds every entry while entries come and go (a forget in
 * the middle moves the later ones down), on disk as in memory.
 */
static void test_index(void **state)
{
	struct fixture *fx = *state;
	char path[64], value[16];
	const char *orig;
	struct journal back;
	int i;

	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	for (i = 0; i < 500; i++) {
		snprintf(path, sizeof(path), "/cg/p%d/cpu.shares", i);
		snprintf(value, sizeof(value), "%d", i);
		assert_int_equal(journal_record(&fx->j, path, value, "2"), 0);
	}
	for (i = 0; i < 500; i += 3) {	/* every third, the last ones first */
		snprintf(path, sizeof(path), "/cg/p%d/cpu.shares", i % 2 ? 499 - i : i);
		assert_int_equal(journal_forget(&fx->j, path), 0);
	}
	for (i = 0; i < 500; i++) {
		bool gone = (i % 2 == 0 && i % 3 == 0) || ((499 - i) % 2 && (499 - i) % 3 == 0);

		snprintf(path, sizeof(path), "/cg/p%d/cpu.shares", i);
		snprintf(value, sizeof(value), "%d", i);
		orig = journal_original(&fx->j, path);
		if (gone) {
			assert_null(orig);
			assert_int_equal(journal_record(&fx->j, path, "again", "2"), 0);
		} else {
			assert_non_null(orig);
			assert_string_equal(orig, value);
		}
	}
	assert_int_equal(fx->j.n, 500);
	for (i = 0; i < 500; i++) {
		snprintf(path, sizeof(path), "/cg/p%d/cpu.shares", i);
		assert_non_null(journal_find(&fx->j, path));
	}
	assert_null(journal_find(&fx->j, "/cg/p500/cpu.shares"));
	journal_init(&back);
	load_disk(fx, &back);
	assert_same_entries(&fx->j, &back);
	journal_close(&back);
}

static const struct {
	const char *text;
	const char *reason;	/* a part of the message */
} bad_docs[] = {
	{ "", "truncated" },
	{ "{\"version\":1,\"entries\":[{\"path\":\"/a\",\"value\":\"1\"}", "truncated" },
	{ "{\"version\":1,\"entr", "truncated" },
	{ "hello", "offset 0" },
	{ "{\"version\":1,\"entries\":[],}", "offset" },
	{ "{\"version\":1,\"entries\":[]} x", "offset 27" },
	{ "[]", "not a JSON object" },
	{ "{\"entries\":[]}", "version" },
	{ "{\"version\":3,\"entries\":[]}", "version" },
	/* version 1 did not say what was written; version 2 must */
	{ "{\"version\":1,\"entries\":[{\"path\":\"/a\",\"value\":\"1\",\"written\":\"2\"}]}",
	  "entry 0: unknown key \"written\"" },
	{ "{\"version\":2,\"entries\":[{\"path\":\"/a\",\"value\":\"1\"}]}",
	  "entry 0: written: missing" },
	{ "{\"version\":2,\"entries\":[{\"path\":\"/a\",\"value\":\"1\",\"written\":2}]}",
	  "entry 0: written: not a string" },
	{ "{\"version\":2,\"entries\":[{\"path\":\"/a\",\"value\":\"1\",\"written\":\"2\","
	  "\"previous\":null}]}", "entry 0: previous: not a string" },
	{ "{\"version\":\"1\",\"entries\":[]}", "version" },
	{ "{\"version\":1.0,\"entries\":[]}", "version" },
	{ "{\"version\":1}", "entries: not an array" },
	{ "{\"version\":1,\"entries\":{}}", "entries: not an array" },
	{ "{\"version\":1,\"entries\":[1]}", "entry 0: not an object" },
	{ "{\"version\":1,\"entries\":[{\"value\":\"1\"}]}", "entry 0: path: missing" },
	{ "{\"version\":1,\"entries\":[{\"path\":7,\"value\":\"1\"}]}", "entry 0: path: not a string" },
	{ "{\"version\":1,\"entries\":[{\"path\":\"/a\",\"value\":\"1\"},"
	  "{\"path\":\"a/b\",\"value\":\"1\"}]}", "entry 1: path: not absolute" },
	{ "{\"version\":1,\"entries\":[{\"path\":\"/a/../b\",\"value\":\"1\"}]}",
	  "entry 0: path: has a" },
	{ "{\"version\":1,\"entries\":[{\"path\":\"/a/.\",\"value\":\"1\"}]}",
	  "entry 0: path: has a" },
	{ "{\"version\":1,\"entries\":[{\"path\":\"/a\\u0000b\",\"value\":\"1\"}]}",
	  "entry 0: path: contains NUL" },
	{ "{\"version\":1,\"entries\":[{\"path\":\"/a\"}]}", "entry 0: value: missing" },
	{ "{\"version\":1,\"entries\":[{\"path\":\"/a\",\"value\":null}]}",
	  "entry 0: value: not a string" },
	{ "{\"version\":1,\"entries\":[{\"path\":\"/a\",\"value\":\"1\\u0000\"}]}",
	  "entry 0: value: contains NUL" },
	{ "{\"version\":1,\"entries\":[{\"path\":\"/a\",\"value\":\"1\",\"x\":1}]}",
	  "entry 0: unknown key \"x\"" },
};

static void check_bad(struct journal *j, const char *text, size_t len, const char *reason)
{
	char err[128];

	assert_int_equal(journal_parse(j, text, len, err, sizeof(err)), -EBADMSG);
	if (!strstr(err, reason))
		fail_msg("%s: reason \"%s\", want \"%s\"", text, err, reason);
	assert_int_equal(j->n, 0);
}

static void test_parse_bad(void **state)
{
	static const char one[] = "{\"version\":1,\"entries\":[{\"path\":\"/x\",\"value\":\"1\"}]}";
	struct journal j;
	size_t i, n;
	char *big;

	journal_init(&j);
	for (i = 0; i < sizeof(bad_docs) / sizeof(bad_docs[0]); i++) {
		/* entries loaded before are dropped too: all or nothing */
		assert_int_equal(journal_parse(&j, one, strlen(one), NULL, 0), 0);
		assert_int_equal(j.n, 1);
		check_bad(&j, bad_docs[i].text, strlen(bad_docs[i].text), bad_docs[i].reason);
	}
	/* a NUL byte in the file itself */
	check_bad(&j, "{\"version\":1,\0\"entries\":[]}", 27, "NUL byte");

	/* a value of JOURNAL_VALUE_MAX bytes and a path of PATH_MAX bytes are too long */
	big = malloc(JOURNAL_VALUE_MAX + 128);
	assert_non_null(big);
	n = (size_t)sprintf(big, "{\"version\":1,\"entries\":[{\"path\":\"/a\",\"value\":\"");
	memset(big + n, 'x', JOURNAL_VALUE_MAX);
	strcpy(big + n + JOURNAL_VALUE_MAX, "\"}]}");
	check_bad(&j, big, strlen(big), "entry 0: value: too long");
	n = (size_t)sprintf(big, "{\"version\":1,\"entries\":[{\"path\":\"/");
	memset(big + n, 'p', PATH_MAX - 1);
	strcpy(big + n + PATH_MAX - 1, "\",\"value\":\"1\"}]}");
	check_bad(&j, big, strlen(big), "entry 0: path: too long");
	free(big);
	journal_close(&j);
}

static void test_parse_good(void **state)
{
	static const char doc[] =
		" \n{ \"entries\" : [ {\"value\":\"first\",\"path\":\"/cg/a\"},\n"
		"{\"path\":\"/cg/b\",\"value\":\"\"},\n"
		"{\"path\":\"/cg/a\",\"value\":\"second\"} ], \"version\" : 1 }\n\n";
	static const char empty[] = "{\"version\":1,\"entries\":[]}";
	static const char v2[] = "{\"version\":2,\"entries\":[{\"path\":\"/cg/a\",\"value\":\"1\","
				 "\"written\":\"3\",\"previous\":\"2\"},{\"path\":\"/cg/b\","
				 "\"value\":\"\",\"written\":\"0-1\"}]}";
	struct journal j;
	char err[128];

	journal_init(&j);
	assert_int_equal(journal_parse(&j, doc, strlen(doc), err, sizeof(err)), 0);
	assert_string_equal(err, "");
	/* a duplicate keeps the first value: the original */
	assert_int_equal(j.n, 2);
	assert_string_equal(j.v[0].path, "/cg/a");
	assert_string_equal(j.v[0].value, "first");
	assert_string_equal(j.v[1].path, "/cg/b");
	assert_string_equal(j.v[1].value, "");
	assert_null(j.v[0].written);
	assert_int_equal(journal_parse(&j, empty, strlen(empty), err, sizeof(err)), 0);
	assert_int_equal(j.n, 0);
	assert_int_equal(journal_parse(&j, v2, strlen(v2), err, sizeof(err)), 0);
	assert_int_equal(j.n, 2);
	assert_string_equal(j.v[0].written, "3");
	assert_string_equal(j.v[0].previous, "2");
	assert_string_equal(j.v[1].written, "0-1");
	assert_null(j.v[1].previous);
	journal_close(&j);
}

#define HEADER "{\"version\":3}\n"
#define LINE_A "{\"path\":\"/a\",\"value\":\"1\",\"written\":\"2\"}\n"

static const struct {
	const char *text;
	const char *reason;
} bad_lines[] = {
	{ HEADER "\n", "line 2: empty" },
	{ HEADER LINE_A "\n" LINE_A, "line 3: empty" },
	{ HEADER "{\"path\":\"/a\",\"value\":\"1\",\"written\":\"2\"} x\n", "line 2: offset" },
	{ HEADER "{\"path\":\"/a\",\"value\":\"1\",\"written\":\"2\"\n", "line 2: truncated" },
	{ HEADER "[1]\n", "line 2: not an object" },
	{ HEADER "{\"path\":\"/a\",\"value\":\"1\"}\n", "line 2: written: missing" },
	{ HEADER "{\"path\":\"a\",\"value\":\"1\",\"written\":\"2\"}\n", "line 2: path: not absolute" },
	{ HEADER "{\"path\":\"/a\",\"value\":\"1\",\"written\":\"2\",\"x\":1}\n",
	  "line 2: unknown key \"x\"" },
	{ HEADER "{\"forget\":\"/a\"}\n", "line 2: forget: not journaled" },
	{ HEADER "{\"forget\":\"a/../b\"}\n", "line 2: forget: not absolute" },
	{ HEADER "{\"forget\":7}\n", "line 2: forget: not a string" },
	{ HEADER LINE_A "{\"forget\":\"/a\",\"path\":\"/a\"}\n", "line 3: a forget has no other key" },
	/* the original never changes */
	{ HEADER LINE_A "{\"path\":\"/a\",\"value\":\"9\",\"written\":\"3\"}\n",
	  "line 3: value: not the original" },
	/* only the last line may be cut */
	{ HEADER "{\"path\":\"/a\",\"va\n" LINE_A, "line 2: truncated" },
	{ "{\"version\":3}\r\n" LINE_A, "offset 15" },
};

/*
 * Version 3 lines: a later line of a path is its next state, a forget drops
 * it, and a last line without its newline (an append a crash cut) is
 * ignored. Anything else wrong is refused whole, with the line it is on.
 */
static void test_parse_lines(void **state)
{
	static const char good[] = HEADER LINE_A
		"{\"path\":\"/b\",\"value\":\"\",\"written\":\"0-1\"}\n"
		"{\"path\":\"/a\",\"value\":\"1\",\"written\":\"3\",\"previous\":\"2\"}\n"
		"{\"path\":\"/c\",\"value\":\"5\",\"written\":\"6\"}\n"
		"{\"forget\":\"/b\"}\n"
		"{\"path\":\"/c\",\"value\":\"5\",\"wri";
	struct journal j;
	char err[128];
	size_t i;

	journal_init(&j);
	assert_int_equal(journal_parse(&j, good, strlen(good), err, sizeof(err)), 0);
	assert_int_equal(j.n, 2);
	assert_string_equal(j.v[0].path, "/a");
	assert_string_equal(j.v[0].value, "1");
	assert_string_equal(j.v[0].written, "3");
	assert_string_equal(j.v[0].previous, "2");
	assert_string_equal(j.v[1].path, "/c");
	assert_string_equal(j.v[1].written, "6");
	assert_null(journal_find(&j, "/b"));
	assert_int_equal(journal_parse(&j, HEADER, strlen(HEADER), err, sizeof(err)), 0);
	assert_int_equal(j.n, 0);
	for (i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
		assert_int_equal(journal_parse(&j, good, strlen(good), NULL, 0), 0);
		check_bad(&j, bad_lines[i].text, strlen(bad_lines[i].text), bad_lines[i].reason);
	}
	journal_close(&j);
}

/*
 * Each write is journaled before it happens: the last value written and the
 * one before it (a crash between the journal's update and the write leaves
 * the file holding that one), on disk as in memory; the original stays.
 */
static void test_record_written(void **state)
{
	struct fixture *fx = *state;
	const struct journal_entry *e;
	struct journal back;
	char path[PATH_MAX + 32];
	struct stat before, after;
	struct rlimit lim, small;
	int err;

	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/a/cpu.cfs_quota_us", "-1", "50000"), 0);
	e = journal_find(&fx->j, "/cg/a/cpu.cfs_quota_us");
	assert_non_null(e);
	assert_string_equal(e->value, "-1");
	assert_string_equal(e->written, "50000");
	assert_null(e->previous);
	/* the same value again changes nothing */
	assert_int_equal(journal_record(&fx->j, "/cg/a/cpu.cfs_quota_us", "50000", "50000\n"), 0);
	assert_null(e->previous);
	assert_int_equal(journal_record(&fx->j, "/cg/a/cpu.cfs_quota_us", "50000", "25000"), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/a/cpu.cfs_quota_us", "25000", "12500"), 0);
	assert_string_equal(e->value, "-1");
	assert_string_equal(e->written, "12500");
	assert_string_equal(e->previous, "25000");
	journal_init(&back);
	load_disk(fx, &back);
	assert_int_equal(back.n, 1);
	assert_string_equal(back.v[0].value, "-1");
	assert_string_equal(back.v[0].written, "12500");
	assert_string_equal(back.v[0].previous, "25000");
	journal_close(&back);

	/*
	 * An append that fails (the file size limit lets 3 bytes of it through,
	 * as a full disk would) leaves the entry as it was, and the file cut
	 * back: the caller does not write. The next change writes it whole.
	 */
	state_path(fx, "journal", path, sizeof(path));
	assert_int_equal(stat(path, &before), 0);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &lim), 0);
	small = lim;
	small.rlim_cur = (rlim_t)before.st_size + 3;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	err = journal_record(&fx->j, "/cg/a/cpu.cfs_quota_us", "12500", "6250");
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	assert_int_equal(err, -EFBIG);
	assert_string_equal(e->written, "12500");
	assert_string_equal(e->previous, "25000");
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(after.st_size, before.st_size);
	assert_int_equal(after.st_ino, before.st_ino);
	assert_int_equal(journal_record(&fx->j, "/cg/a/cpu.cfs_quota_us", "12500", "6250"), 0);
	assert_string_equal(e->previous, "12500");
	assert_int_equal(stat(path, &after), 0);
	assert_int_not_equal(after.st_ino, before.st_ino);	/* written whole */

	/*
	 * Two writes the kernel refused in a row (a v1 parent's quota below a
	 * child's): the file still holds 12500, which must stay ours.
	 */
	assert_int_equal(journal_record(&fx->j, "/cg/a/cpu.cfs_quota_us", "12500", "3000"), 0);
	assert_string_equal(e->written, "3000");
	assert_string_equal(e->previous, "12500");
	assert_int_equal(journal_judge(e, "12500"), JOURNAL_RESTORE);
	journal_init(&back);
	load_disk(fx, &back);
	assert_string_equal(back.v[0].previous, "12500");
	journal_close(&back);
	/* ... and once that write went through, the next one is on top of it */
	assert_int_equal(journal_record(&fx->j, "/cg/a/cpu.cfs_quota_us", "3000", "1000"), 0);
	assert_string_equal(e->previous, "3000");
}

/* A restore puts back only what the file holds from us. */
static void test_judge(void **state)
{
	struct journal_entry e = { .path = "/cg/a/cpu.cfs_quota_us", .value = "-1",
				   .written = "12500", .previous = "25000" };

	(void)state;
	assert_int_equal(journal_judge(&e, "12500"), JOURNAL_RESTORE);
	assert_int_equal(journal_judge(&e, "25000"), JOURNAL_RESTORE);	/* crashed before the write */
	assert_int_equal(journal_judge(&e, "-1"), JOURNAL_IN_PLACE);
	assert_int_equal(journal_judge(&e, "-1\n"), JOURNAL_IN_PLACE);
	assert_int_equal(journal_judge(&e, "40000"), JOURNAL_CHANGED);	/* another writer's */
	assert_int_equal(journal_judge(&e, "125000"), JOURNAL_CHANGED);
	e.previous = NULL;
	assert_int_equal(journal_judge(&e, "25000"), JOURNAL_CHANGED);
	/* a version 1 entry does not know: restored whatever the file holds */
	e.written = NULL;
	assert_int_equal(journal_judge(&e, "40000"), JOURNAL_RESTORE);
	assert_int_equal(journal_judge(&e, "-1"), JOURNAL_IN_PLACE);
}

static void test_load(void **state)
{
	struct fixture *fx = *state;
	char err[128];

	/* no state dir, or no journal in it: a clean start */
	assert_int_equal(journal_load(&fx->j, fx->state, err, sizeof(err)), 0);
	assert_int_equal(fx->j.n, 0);
	journal_close(&fx->j);
	assert_int_equal(mkdir(fx->state, 0700), 0);
	assert_int_equal(journal_load(&fx->j, fx->state, err, sizeof(err)), 0);
	assert_int_equal(fx->j.n, 0);
	journal_close(&fx->j);

	/* a crash can leave a tmp half written, never a torn journal; still, refuse one */
	write_journal_text(fx, "{\"version\":1,\"entries\":[{\"path\":\"/cg/a\",\"val");
	assert_int_equal(journal_load(&fx->j, fx->state, err, sizeof(err)), -EBADMSG);
	assert_string_equal(err, "truncated");
	assert_int_equal(fx->j.n, 0);
	journal_close(&fx->j);

	write_journal_text(fx, "{\"version\":1,\"entries\":[{\"path\":\"/cg/a\",\"value\":\"5\"}]}");
	assert_int_equal(journal_load(&fx->j, fx->state, err, sizeof(err)), 0);
	assert_int_equal(fx->j.n, 1);
	assert_string_equal(fx->j.v[0].value, "5");
}

/* A scripted restore: per path, the result of its first call and of later ones. */
struct script {
	const char *path;
	int first, then;
	int calls;
};

#define S(p, f, t) { .path = (p), .first = (f), .then = (t) }

struct restore_ctx {
	struct script *s;
	size_t n;
	char order[256];
	/* a chain: "/k" restores once "/k-1" did */
	bool chain;
	int done_upto;
};

static int scripted(void *arg, const struct journal_entry *e)
{
	struct restore_ctx *c = arg;
	const char *path = e->path;

	for (size_t i = 0; i < c->n; i++) {
		struct script *s = &c->s[i];

		if (strcmp(s->path, path))
			continue;
		strncat(c->order, path + 1, sizeof(c->order) - strlen(c->order) - 1);
		if (c->chain) {
			s->calls++;
			if (path[1] - '0' != c->done_upto)
				return -EINVAL;
			c->done_upto++;
			return 0;
		}
		return s->calls++ ? s->then : s->first;
	}
	fail_msg("restore of an unknown path %s", path);
	return -EIO;
}

static void record_all(struct fixture *fx, const struct script *s, size_t n)
{
	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(journal_record(&fx->j, s[i].path, "v", "w"), 0);
}

static void test_restore_retries(void **state)
{
	struct fixture *fx = *state;
	struct script s[] = {
		S("/a", 0, 0),
		S("/b", -EACCES, 0),		/* a v1 cpuset child before its parent */
		S("/c", -ENOENT, 0),		/* vanished: as good as restored */
		S("/d", -ENODEV, 0),
		S("/e", JOURNAL_LEFT, 0),	/* another writer's value now: not ours to keep */
	};
	struct restore_ctx c = { .s = s, .n = 5 };

	record_all(fx, s, 5);
	assert_int_equal(journal_restore(&fx->j, scripted, &c), 0);
	assert_string_equal(c.order, "abcdeb");
	assert_int_equal(fx->j.n, 0);
	/* nothing left: the journal is removed, its dir stays */
	assert_false(state_has(fx, "journal"));
	assert_int_equal(access(fx->state, F_OK), 0);
}

/* BE's wake-up priority goes back last: one transition for online tasks, not one per file. */
static void test_restore_priority_last(void **state)
{
	struct fixture *fx = *state;
	struct script s[] = {
		S("/i/cpu.idle", 0, 0),
		S("/q/cpu.cfs_quota_us", 0, 0),
		S("/w/cpu.shares", 0, 0),
		S("/c/cpuset.cpus", -EBUSY, 0),	/* a parent narrower than its child: next pass */
	};
	struct restore_ctx c = { .s = s, .n = 4 };

	record_all(fx, s, 4);
	assert_int_equal(journal_restore(&fx->j, scripted, &c), 0);
	assert_string_equal(c.order, "q/cpu.cfs_quota_usc/cpuset.cpusi/cpu.idlew/cpu.shares"
				     "c/cpuset.cpus");
	assert_int_equal(fx->j.n, 0);
}

/* Restores relax: parents first (a v1 cpuset child cannot be wider than its parent). */
static void test_restore_parents_first(void **state)
{
	struct fixture *fx = *state;
	struct script s[] = {	/* as narrowed: children first */
		S("/be/pod/ctr/cpuset.cpus", 0, 0),
		S("/be/pod/cpuset.cpus", 0, 0),
		S("/be/cpu.shares", 0, 0),	/* journaled before cpu.idle, which resets it */
		S("/be/cpu.idle", 0, 0),
		S("/be/cpuset.cpus", 0, 0),
		S("/be/pod/ctr/cpu.cfs_quota_us", 0, 0),
	};
	struct restore_ctx c = { .s = s, .n = 6 };

	record_all(fx, s, 6);
	assert_int_equal(journal_restore(&fx->j, scripted, &c), 0);
	assert_string_equal(c.order, "be/cpuset.cpus" "be/pod/cpuset.cpus" "be/pod/ctr/cpuset.cpus"
				     "be/pod/ctr/cpu.cfs_quota_us" "be/cpu.idle" "be/cpu.shares");
}

static void test_restore_leaves(void **state)
{
	struct fixture *fx = *state;
	struct script s[] = {
		S("/a", -EPERM, 0),		/* kept at once */
		S("/b", 0, 0),
		S("/c", -EBUSY, -EBUSY),	/* retried while passes make progress */
		S("/d", -EROFS, 0),
	};
	struct restore_ctx c = { .s = s, .n = 4 };
	struct journal back;

	record_all(fx, s, 4);
	assert_int_equal(journal_restore(&fx->j, scripted, &c), 3);
	/* the second pass restored nothing: no third */
	assert_string_equal(c.order, "abcdc");
	assert_int_equal(fx->j.n, 3);
	assert_string_equal(fx->j.v[0].path, "/a");
	assert_string_equal(fx->j.v[1].path, "/c");
	assert_string_equal(fx->j.v[2].path, "/d");

	/* the journal on disk holds just those, in order */
	journal_init(&back);
	load_disk(fx, &back);
	assert_int_equal(back.n, 3);
	assert_string_equal(back.v[0].path, "/a");
	assert_string_equal(back.v[1].path, "/c");
	assert_string_equal(back.v[2].path, "/d");
	journal_close(&back);
	assert_false(state_has(fx, "journal.tmp"));
}

static void test_restore_four_passes(void **state)
{
	struct fixture *fx = *state;
	/* recorded child first: each pass restores one more level */
	struct script s[] = { S("/4", 0, 0), S("/3", 0, 0), S("/2", 0, 0), S("/1", 0, 0), S("/0", 0, 0) };
	struct restore_ctx c = { .s = s, .n = 5, .chain = true };

	record_all(fx, s, 5);
	assert_int_equal(journal_restore(&fx->j, scripted, &c), 1);
	assert_int_equal(c.done_upto, 4);
	assert_int_equal(s[0].calls, 4);
	assert_string_equal(fx->j.v[0].path, "/4");
	assert_true(state_has(fx, "journal"));
}

static void test_restore_parsed(void **state)
{
	struct script s[] = { S("/a", 0, 0), S("/b", -EIO, -EIO) };
	struct restore_ctx c = { .s = s, .n = 2 };
	static const char doc[] = "{\"version\":1,\"entries\":[{\"path\":\"/a\",\"value\":\"1\"},"
				  "{\"path\":\"/b\",\"value\":\"2\"}]}";
	struct journal j;

	/* no state dir: the entries are restored, nothing on disk is touched */
	journal_init(&j);
	assert_int_equal(journal_parse(&j, doc, strlen(doc), NULL, 0), 0);
	assert_int_equal(journal_restore(&j, scripted, &c), 1);
	assert_string_equal(j.v[0].path, "/b");
	journal_close(&j);

	/* an empty journal restores nothing */
	journal_init(&j);
	assert_int_equal(journal_restore(&j, scripted, &c), 0);
	journal_close(&j);
}

/*
 * An empty journal is no file: a rollback that forgot the last entry, then
 * a crash, left an empty file, and every later start failed (the journal
 * "exists"). One such file from before is removed by the replay.
 */
static void test_empty_is_no_file(void **state)
{
	struct fixture *fx = *state;
	struct script s[] = { S("/x", 0, 0) };
	struct restore_ctx c = { .s = s, .n = 1 };
	char err[128];

	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	assert_int_equal(journal_record(&fx->j, "/cg/a/cpuset.cpus", "0-1", "1"), 0);
	assert_true(state_has(fx, "journal"));
	assert_int_equal(journal_forget(&fx->j, "/cg/a/cpuset.cpus"), 0);
	assert_false(state_has(fx, "journal"));
	journal_close(&fx->j);	/* a crash now */
	assert_int_equal(journal_open(&fx->j, fx->state), 0);
	journal_close(&fx->j);

	write_journal_text(fx, "{\"version\":2,\"entries\":[]}");
	assert_int_equal(journal_load(&fx->j, fx->state, err, sizeof(err)), 0);
	assert_int_equal(fx->j.n, 0);
	assert_int_equal(journal_restore(&fx->j, scripted, &c), 0);
	assert_false(state_has(fx, "journal"));
	journal_close(&fx->j);
	assert_int_equal(journal_open(&fx->j, fx->state), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_record_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_untrusted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forget_and_prune, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_is_no_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_fails_tmp_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_fails_tmp_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_journal_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_cost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_index, setup, teardown),
		cmocka_unit_test(test_parse_lines),
		cmocka_unit_test_setup_teardown(test_record_fails_rename, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_fails_dir_gone, setup, teardown),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test_setup_teardown(test_record_written, setup, teardown),
		cmocka_unit_test(test_judge),
		cmocka_unit_test_setup_teardown(test_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_priority_last, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_parents_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_leaves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_four_passes, setup, teardown),
		cmocka_unit_test(test_restore_parsed),
	};

	log_level = LOG_LVL_ERR;	/* the failures below are expected */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
