/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Driving the daemon from a test or the demo: start and stop it, ask its
 * HTTP endpoint, read its log, snapshot the test tree's cgroup settings, and
 * read a probe's run-queue wait tail with ftrace.
 */
#ifndef KOORD_DAEMONLIB_H
#define KOORD_DAEMONLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <sys/types.h>
#include <linux/types.h>
#include "cgroup.h"

/* The daemon binary: $KOORD_BPF_BIN (e.g. a sanitizer build's), else build/koord-bpf. */
const char *daemon_bin(void);
/* daemon_bin() --config @cfg --listen 127.0.0.1:@port [@extra]; output appended to @log (NULL: inherited). */
pid_t daemon_start(const char *cfg, const char *log, int port, const char *extra);
/*
 * Write a daemon config to @path: enforcement @enable with @be added to
 * resourceUsedThresholdWithBE, cgroupRoots [@root] (several: separated by
 * ':'), stateDir @state_dir and
 * @own added to koordBPF (@be, @own: JSON members or "").
 */
bool daemon_config(const char *path, bool enable, const char *be, const char *root,
		   const char *state_dir, const char *own);
/* Send @sig and reap: the exit status (128 + signal when killed), -1 when it did not exit in 10 s. */
int daemon_stop(pid_t pid, int sig);
bool daemon_alive(pid_t pid);
/* GET @path from 127.0.0.1:@port: the HTTP status (-1: no answer), the whole response in @buf. */
int http_get(int port, const char *path, char *buf, size_t len);
/* The same from the loopback address @from (127.0.0.2, ...; NULL: any). */
int http_get_from(const char *from, int port, const char *path, char *buf, size_t len);
/* The value of the series @name (with its labels) in the daemon's /metrics; -1 when absent. */
double daemon_metric(int port, const char *name);
/* A connection to 127.0.0.1:@port from the loopback address @from (NULL: any); -1 when refused. */
int loopback_connect(const char *from, int port);
/* How many lines of the file at @path hold @needle (0 when it cannot be read). */
int file_count(const char *path, const char *needle);
/* Does the file at @path contain @needle (waiting up to @ms for it)? */
bool file_has(const char *path, const char *needle, unsigned int ms);
/* Print the file at @path as TAP comments (a daemon's log after a failed check). */
void show_file(const char *path);
/*
 * Start of a daemon test: a temporary dir @base (a mkdtemp template) with
 * @base.json in @cfg and @base.log in @log, the test pinned off CPU 0 (where
 * the workloads run; a daemon started inherits it), and the daemon binary
 * there. False when the test cannot run.
 */
bool daemon_test_init(char *base, char *cfg, size_t cfglen, char *log, size_t loglen);
/*
 * End of a daemon test: test_summary(@name); when every check passed, what
 * the test left under @base (the dir, its config, its logs: "@base*") is
 * removed, else kept and named ("# daemon logs: @base*") for a look. Also
 * kept with $KOORD_TEST_KEEP set: the sanitizer stage reads the daemons'
 * logs for UBSan's reports, then removes them.
 */
int daemon_test_end(const char *name, const char *base);
/* mkdir -p of @r in the test tree. */
bool tree_make(const struct cpu_hierarchy *h, const char *r);
/* "/koord-test-PID/" + @r: a cgroup of the test tree, relative to @h's root (4 buffers in turn). */
const char *tree_path(const struct cpu_hierarchy *h, const char *r);
/* Does @file of the test tree's cgroup @r read @want (its first line), within @ms? */
bool tree_value_is(const struct cpu_hierarchy *h, const char *r, const char *file, const char *want,
		   unsigned int ms);
/* Every writable cpu setting of every cgroup in the test tree, as one string (free it). */
char *cgroup_snapshot(const struct cpu_hierarchy *h);
/*
 * The test tree's mirror in the v1 cpuset hierarchy: its base dir, "" when
 * there is no v1 cpuset hierarchy or one CPU only (nothing narrower to write).
 */
const char *cpuset_tree(const struct cpu_hierarchy *h);
/*
 * The test tree mirrored in the other v1 hierarchies (cpuset, cpuacct,
 * memory), as the kubelet makes every pod in every hierarchy: mkdir -p of @r
 * in each (a cpuset level with every CPU and node 0), then @pid into it,
 * keeping its CPU affinity. False without a cpuset mirror (cpuset_tree).
 */
bool pod_mirror(const struct cpu_hierarchy *h, const char *r, pid_t pid);
/* Tasks back to each hierarchy's root, the mirrors removed. */
void pod_unmirror(const struct cpu_hierarchy *h);
/* cpuset.cpus and cpuset.mems of every cgroup in the mirror, as one string (free it). */
char *cpuset_snapshot(const struct cpu_hierarchy *h);
/* The first line of @path, without its newline ("" when unreadable). */
void read_line(const char *path, char *buf, size_t len);
/* @pid on @cpu alone (again: a cpuset write gives a task every CPU of its cpuset). */
void pin_cpu(pid_t pid, int cpu);
/* @probe's run-queue waits over @ms, read with ftrace: p99.9, max, and how many. */
void probe_tail(pid_t probe, unsigned int ms, __u64 *p999, __u64 *max, size_t *n);
/* The same, and of each wait the part @other ran: p99.9, max and sum of those parts. */
struct tail {
	__u64 p999, max;
	size_t n;
	__u64 other_p999, other_max, other_sum;
};
void probe_tail_behind(pid_t probe, pid_t other, unsigned int ms, struct tail *t);

#endif
