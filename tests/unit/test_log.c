/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The log: outside text escaped (no escape sequence, CR or newline of a
 * cgroup name reaches the reader), one whole line per call even from many
 * threads at once, long lines cut and saying so.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "log.h"

/* stderr into a fresh file; returns it for reading back. */
static FILE *capture(int *saved)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	fflush(stderr);
	*saved = dup(STDERR_FILENO);
	assert_true(*saved >= 0);
	assert_true(dup2(fileno(f), STDERR_FILENO) >= 0);
	return f;
}

static char *release(FILE *f, int saved)
{
	static char buf[1 << 22];
	size_t n;

	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void names_are_escaped(void **state)
{
	int saved;
	FILE *f = capture(&saved);
	char *out;

	log_prog = "koord";
	log_warn("cannot read %s: %s", "/kubepods/pod\x1b[31mx\r\nkoord: error: forged\xff",
		 "No such file");
	out = release(f, saved);
	assert_string_equal(out, "koord: warning: cannot read /kubepods/pod\\x1b[31mx\\x0d\\n"
				 "koord: error: forged\\xff: No such file\n");
}

static void long_lines_are_cut(void **state)
{
	static char big[6000];
	int saved;
	FILE *f = capture(&saved);
	char *out, *nl;

	memset(big, 'a', sizeof(big) - 1);
	log_info("%s", big);
	out = release(f, saved);
	nl = strchr(out, '\n');
	assert_non_null(nl);
	assert_null(strchr(nl + 1, '\n'));
	assert_true(nl - out > 4000);
	assert_memory_equal(nl - 6, " [cut]", 6);
}

#define THREADS	4
#define LINES	3000

static void *logger(void *arg)
{
	long t = (long)arg;

	for (int i = 0; i < LINES; i++)
		log_info("thread %ld line %d %s", t, i,
			 "................................................................"
			 "................................................................");
	return NULL;
}

/* Many threads at once: every line whole, none lost. */
static void threads_do_not_interleave(void **state)
{
	pthread_t th[THREADS];
	int saved, seen[THREADS] = { 0 };
	FILE *f = capture(&saved);
	char *out, *line, *save;
	long t;

	for (t = 0; t < THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, logger, (void *)t), 0);
	for (t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	out = release(f, saved);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int n = -1, i;

		assert_int_equal(sscanf(line, "koord: thread %ld line %d %n", &t, &i, &n), 2);
		assert_true(n > 0 && t >= 0 && t < THREADS);
		assert_int_equal(strlen(line + n), 128);
		assert_int_equal(strspn(line + n, "."), 128);
		seen[t]++;
	}
	for (t = 0; t < THREADS; t++)
		assert_int_equal(seen[t], LINES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_are_escaped),
		cmocka_unit_test(long_lines_are_cut),
		cmocka_unit_test(threads_do_not_interleave),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
