// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The journal at 10,000 containers (item 7): each new BE pod under a
 * narrowed cpuset is journaled before its write, and the period asks the
 * journal about every BE pod. Records ENTRIES paths one by one in a state
 * dir on the disk (/var/tmp, as /var/lib would be), then looks each up,
 * and reports per record the time and the bytes written (/proc/self/io)
 * next to the journal's size per entry, and per lookup the time, as JSON on
 * stdout.
 *
 *   koord-bench-journal [ENTRIES]     default 10000
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "journal.h"
#include "procio.h"
#include "testlib.h"

static void pod_path(char *buf, size_t len, int i)
{
	snprintf(buf, len, "/sys/fs/cgroup/cpuset/kubepods/besteffort/pod%08x-%04x-4%03x-"
		 "a%03x-%012x/cpuset.cpus", (unsigned int)i * 2654435761u, i & 0xffff, i & 0xfff,
		 (i >> 4) & 0xfff, (unsigned int)i);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10000, i, found = 0, err;
	char base[] = "/var/tmp/koord-bench-journal-XXXXXX", state[64], file[80], path[160];
	unsigned long long w0, w1;
	__u64 t0, t1, t2;
	struct stat st = { 0 };
	struct journal j;

	if (n <= 0 || !mkdtemp(base)) {
		fprintf(stderr, "koord-bench-journal: ENTRIES > 0, and /var/tmp writable\n");
		return 2;
	}
	snprintf(state, sizeof(state), "%s/state", base);
	err = journal_open(&j, state);
	w0 = proc_self_wchar();
	t0 = now_mono_ns();
	for (i = 0; !err && i < n; i++) {
		pod_path(path, sizeof(path), i);
		err = journal_record(&j, path, "0-127", "2-127");
	}
	t1 = now_mono_ns();
	w1 = proc_self_wchar();
	snprintf(file, sizeof(file), "%s/journal", state);
	if (!err && stat(file, &st))
		err = -errno;
	for (i = 0; !err && i < n; i++) {
		pod_path(path, sizeof(path), i);
		found += journal_has(&j, path);
	}
	t2 = now_mono_ns();
	journal_close(&j);
	remove_tree(base);
	if (err || found != n) {
		fprintf(stderr, "koord-bench-journal: %s (%d of %d found)\n", strerror(-err), found, n);
		return 1;
	}
	printf("{\"entries\": %d, \"record_us\": %.1f, \"record_bytes\": %.0f, "
	       "\"entry_bytes\": %.0f, \"lookup_ns\": %.0f}\n", n, (t1 - t0) / 1e3 / n,
	       (double)(w1 - w0) / n, (double)st.st_size / n, (double)(t2 - t1) / n);
	return 0;
}
