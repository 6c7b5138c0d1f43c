// SPDX-License-Identifier: GPL-2.0
/*
 * VM smoke test: proves that a statically linked libbpf program loads a CO-RE
 * tp_btf program on the running kernel. It attaches to sched_switch, moves
 * itself into a fresh cgroup v2 child, sleeps, and checks that switches were
 * counted and that task->cgroups->dfl_cgrp->kn->id (read with CO-RE) is that
 * cgroup's id (= its inode number). Prints `probe: N passed, M failed`.
 */
#include <errno.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "probe.skel.h"

static int passed, failed;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("probe: %s: ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	ok ? passed++ : failed++;
}

static int quiet_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	return lvl == LIBBPF_DEBUG && !getenv("PROBE_DEBUG") ? 0 : vfprintf(stderr, fmt, ap);
}

static int write_pid(const char *dir)
{
	char path[4200];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (!(f = fopen(path, "w")))
		return -1;
	ok = fprintf(f, "%d\n", getpid()) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Our cgroup v2 directory: the cgroup2 mount + the "0::" line of /proc/self/cgroup. */
static int own_cgroup(char *mnt, size_t mlen, char *dir, size_t dlen)
{
	char line[4096];
	struct mntent *me;
	FILE *f;

	*mnt = *dir = 0;
	if ((f = setmntent("/proc/self/mounts", "r"))) {
		while ((me = getmntent(f)))
			if (!strcmp(me->mnt_type, "cgroup2")) {
				snprintf(mnt, mlen, "%s", me->mnt_dir);
				break;
			}
		endmntent(f);
	}
	if (!*mnt || !(f = fopen("/proc/self/cgroup", "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(dir, dlen, "%s%s", mnt, line + 3);
		}
	fclose(f);
	return *dir ? 0 : -1;
}

int main(void)
{
	char mnt[4096], orig[4096], child[4200], *cg = NULL;
	struct probe_bpf *skel;
	struct utsname u;
	struct stat st;
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(quiet_print);
	uname(&u);
	printf("probe: kernel %s, libbpf %s (static), BTF %s\n", u.release,
	       libbpf_version_string(),
	       access("/sys/kernel/btf/vmlinux", R_OK) ? "absent" : "present");

	skel = probe_bpf__open();
	if (!skel) {
		check(0, "open skeleton: %s", strerror(errno));
		goto out;
	}
	skel->rodata->target_tgid = getpid();
	err = probe_bpf__load(skel);
	check(!err, "load tp_btf/sched_switch with CO-RE relocations%s%s",
	      err ? ": " : "", err ? strerror(-err) : "");
	if (err)
		goto out;
	err = probe_bpf__attach(skel);
	check(!err, "tp_btf/sched_switch %s%s", err ? "NOT attached: " : "attached",
	      err ? strerror(-err) : "");
	if (err)
		goto out;

	/* A fresh child cgroup makes the id check meaningful (not just the root's id 1). */
	if (own_cgroup(mnt, sizeof(mnt), orig, sizeof(orig)) == 0) {
		snprintf(child, sizeof(child), "%s/koord-probe-%d", mnt, getpid());
		cg = orig;
		if (mkdir(child, 0755) == 0 && write_pid(child) == 0)
			cg = child;
		else
			rmdir(child);
	}
	sleep(1);

	check(skel->bss->switches > 0, "sched_switch events counted: %llu",
	      (unsigned long long)skel->bss->switches);
	if (!cg || stat(cg, &st)) {
		check(0, "no cgroup v2 directory found for this process");
	} else {
		check(skel->bss->target_switches > 0 && skel->bss->target_cgid == st.st_ino,
		      "CO-RE task->cgroups->dfl_cgrp->kn->id = %llu, %s inode %llu (%llu own switches)",
		      (unsigned long long)skel->bss->target_cgid, cg,
		      (unsigned long long)st.st_ino,
		      (unsigned long long)skel->bss->target_switches);
	}
	if (cg == child) {
		write_pid(orig);
		rmdir(child);
	}
out:
	probe_bpf__destroy(skel);
	printf("probe: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
