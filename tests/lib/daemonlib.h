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
#include <sys/types.h>
#include <linux/types.h>
#include "cgroup.h"

/* build/koord-bpf --config @cfg --listen 127.0.0.1:@port [@extra]; output appended to @log (NULL: inherited). */
pid_t daemon_start(const char *cfg, const char *log, int port, const char *extra);
/* Send @sig and reap: the exit status (128 + signal when killed), -1 when it did not exit in 10 s. */
int daemon_stop(pid_t pid, int sig);
bool daemon_alive(pid_t pid);
/* GET @path from 127.0.0.1:@port: the HTTP status (-1: no answer), the whole response in @buf. */
int http_get(int port, const char *path, char *buf, size_t len);
/* Does the file at @path contain @needle (waiting up to @ms for it)? */
bool file_has(const char *path, const char *needle, unsigned int ms);
/* Every writable cpu setting of every cgroup in the test tree, as one string (free it). */
char *cgroup_snapshot(const struct cpu_hierarchy *h);
/* @probe's run-queue waits over @ms, read with ftrace: p99.9, max, and how many. */
void probe_tail(pid_t probe, unsigned int ms, __u64 *p999, __u64 *max, size_t *n);

#endif
