/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Eviction backends. "kill": v2 cgroup.kill where the container has a
 * unified cgroup with it; on v1 freeze it (freezer hierarchy), SIGKILL every
 * pid, thaw; without a freezer, SIGKILL the pids until none is left.
 * "hook": execve of the configured argv (no shell) with the container's
 * identity appended as arguments.
 */
#ifndef KOORD_EVICT_H
#define KOORD_EVICT_H

#include <sys/types.h>
#include "evict_policy.h"
#include "hierarchies.h"
#include "writer.h"
#include "../bpf/koord.h"

struct evict_target {
	const char *path;		/* cgroup path relative to the hierarchies, "/kubepods/..." */
	const char *pod_uid;		/* "" when unknown */
	const char *container_id;	/* "" when unknown */
	enum koord_class qos;
	enum evict_reason reason;
	/*
	 * The cgroup's id (its directory's inode in the cpu hierarchy, or the
	 * unified one without it) when it was measured; 0: not checked.
	 */
	__u64 cgid;
};

/*
 * Kill every process of @t->path. Writes go through @w (freezer.state is
 * journaled, so a crash mid-eviction never leaves it frozen). Returns the
 * number of processes signalled (>= 0), -ENOENT when the cgroup is gone,
 * -ESTALE when the directory at @t->path is another cgroup than @t->cgid
 * (removed and made again under the same name): nothing is killed.
 */
int evict_kill(struct writer *w, const struct hierarchies *h, const struct evict_target *t);
/*
 * Run @argv (argv[0] an absolute path) with "--cgroup PATH --pod-uid UID
 * --container-id ID --qos QOS --reason REASON" appended, stdin from
 * /dev/null; waits up to @timeout_s, killing it after. Returns its exit
 * status (0..255), or a negative errno when it could not run or timed out.
 */
int evict_hook(char *const argv[], const struct evict_target *t, double timeout_s);
/*
 * The same without waiting (the daemon goes on with its periods): start it
 * in its own process group, its pid in *@pid; 0 or -errno.
 */
int evict_hook_start(char *const argv[], const struct evict_target *t, pid_t *pid);
/*
 * Has it ended? Its exit status (0..255, 128 + a signal), -EINPROGRESS while
 * it runs before @deadline_s (CLOCK_MONOTONIC s), -ETIMEDOUT once it was
 * killed for running past it.
 */
int evict_hook_poll(pid_t pid, double deadline_s);
/* Kill its process group and reap it (a stop, a timeout). */
void evict_hook_kill(pid_t pid);

#endif
