/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Eviction backends: killing a container's processes through its cgroups,
 * or handing the decision to an external hook.
 *
 * Directories are opened with O_NOFOLLOW and walked relative to their fds;
 * cgroup files that change state (cgroup.kill, freezer.state) go through the
 * writer, so the allowed roots, the symlink checks and the journal apply.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cgroup.h"
#include "classify.h"
#include "evict.h"
#include "log.h"

#define KILL_WAIT_MS	2000	/* cgroup.kill: until cgroup.procs is empty */
#define FREEZE_WAIT_MS	1000	/* freezer.state: FREEZING -> FROZEN */
#define THAW_WAIT_MS	1000	/* after the thaw, the killed processes exit */
#define KILL_ROUNDS	10	/* plain SIGKILL passes; a forking process escapes one */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The pids signalled (or seen), sorted: one listed in two passes counts once. */
struct pidset {
	pid_t *v;
	size_t n, cap;
};

static int pidset_add(struct pidset *s, pid_t pid)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid] == pid)
			return 0;
		if (s->v[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		pid_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	memmove(s->v + lo + 1, s->v + lo, (s->n - lo) * sizeof(*s->v));
	s->v[lo] = pid;
	s->n++;
	return 1;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

enum walk_mode {
	WALK_LIST,	/* count what is listed */
	WALK_SEE,	/* ... and remember it */
	WALK_KILL,	/* ... SIGKILL it, remember what was signalled */
};

/* One walk of a cgroup and its children. */
struct walk {
	enum walk_mode mode;
	size_t listed;		/* pids listed by this walk */
	struct pidset pids;	/* over all walks of one eviction */
	char *buf;		/* cgroup.procs text */
	size_t cap;
};

/* The whole of @dfd's cgroup.procs into wk->buf (it can list thousands). */
static int read_procs(struct walk *wk, int dfd)
{
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = openat(dfd, "cgroup.procs", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (wk->cap - len < 4096) {
			size_t cap = wk->cap ? 2 * wk->cap : 16384;
			char *b = realloc(wk->buf, cap);

			if (!b) {
				close(fd);
				return -ENOMEM;
			}
			wk->buf = b;
			wk->cap = cap;
		}
		n = read(fd, wk->buf + len, wk->cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (n < 0)
		return -errno;
	wk->buf[len] = '\0';
	return 0;
}

/* @dfd's cgroup.procs as pids, sorted, into *@out (caller frees); 0 or -errno. */
static int list_procs(struct walk *wk, int dfd, pid_t **out, size_t *n)
{
	pid_t self = getpid(), *v;
	size_t cap = 64;
	char *p, *end;
	int r;

	*out = NULL;
	*n = 0;
	r = read_procs(wk, dfd);
	/* A removed cgroup's cgroup.procs reads ENODEV while its directory lingers. */
	if (r == -ENODEV)
		r = -ENOENT;
	if (r)
		return r;
	if (!(v = malloc(cap * sizeof(*v))))
		return -ENOMEM;
	for (p = wk->buf; *p; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p) {
			end = p + 1;
			continue;
		}
		/* Never pid 1 nor ourselves, whatever a cgroup claims. */
		if (pid <= 1 || pid == self || pid != (pid_t)pid)
			continue;
		if (*n == cap) {
			pid_t *w = realloc(v, 2 * cap * sizeof(*v));

			if (!w) {
				free(v);
				return -ENOMEM;
			}
			v = w;
			cap *= 2;
		}
		v[(*n)++] = (pid_t)pid;
	}
	qsort(v, *n, sizeof(*v), cmp_pid);
	*out = v;
	return 0;
}

static bool has_pid(const pid_t *v, size_t n, pid_t pid)
{
	return bsearch(&pid, v, n, sizeof(*v), cmp_pid);
}

/*
 * SIGKILL the @n pids @v listed in @dfd: each through a pidfd opened first,
 * signalled only if the cgroup still lists it after. A pidfd names one
 * process, so a pid that exited and was reused by a process elsewhere
 * between the listing and the signal is not killed. A kernel without
 * pidfds (before 5.3) gets kill(2), with that window.
 */
static int kill_listed(struct walk *wk, int dfd, const pid_t *v, size_t n)
{
	int *fds = malloc((n ? n : 1) * sizeof(*fds)), r = 0;
	pid_t *again = NULL;
	size_t i, m = 0;

	if (!fds)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		fds[i] = (int)syscall(SYS_pidfd_open, v[i], 0);
		if (fds[i] < 0 && errno == ENOSYS && !kill(v[i], SIGKILL) &&
		    pidset_add(&wk->pids, v[i]) < 0)
			r = -ENOMEM;
	}
	if (!r)
		r = list_procs(wk, dfd, &again, &m);
	for (i = 0; i < n; i++) {
		if (fds[i] < 0)
			continue;
		if (!r && has_pid(again, m, v[i]) &&
		    !syscall(SYS_pidfd_send_signal, fds[i], SIGKILL, NULL, 0) &&
		    pidset_add(&wk->pids, v[i]) < 0)
			r = -ENOMEM;
		close(fds[i]);
	}
	free(again);
	free(fds);
	return r;
}

static int walk_procs(struct walk *wk, int dfd)
{
	size_t n, i;
	pid_t *v;
	int r;

	r = list_procs(wk, dfd, &v, &n);
	if (r)
		return r;
	wk->listed += n;
	if (wk->mode == WALK_KILL)
		r = kill_listed(wk, dfd, v, n);
	for (i = 0; !r && wk->mode == WALK_SEE && i < n; i++)
		if (pidset_add(&wk->pids, v[i]) < 0)
			r = -ENOMEM;
	free(v);
	/* it may be gone by the second listing: what was signalled stands */
	return r == -ENOENT ? 0 : r;
}

/*
 * @dfd's processes, then its children's. -ENOENT only when @dfd's own
 * cgroup is gone; a child removed meanwhile is skipped.
 */
static int walk(struct walk *wk, int dfd, unsigned int depth)
{
	struct dirent *de;
	DIR *d;
	int fd, r, err = 0;

	r = walk_procs(wk, dfd);
	if (r || depth >= CGROUP_SCAN_MAX_DEPTH)
		return r;
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if ((de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
		    !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP && !err)
				err = -errno;
			continue;
		}
		r = walk(wk, fd, depth + 1);
		close(fd);
		if (r == -ENOMEM)
			err = r;
		if (err == -ENOMEM)
			break;
		if (r && r != -ENOENT && r != -ENODEV && !err)
			err = r;
	}
	closedir(d);
	return err;
}

static int walk_from(struct walk *wk, int dfd, enum walk_mode mode)
{
	wk->mode = mode;
	wk->listed = 0;
	return walk(wk, dfd, 0);
}

/* Poll until no process is left below @dfd; false when some remain after @ms. */
static bool wait_empty(struct walk *wk, int dfd, unsigned int ms)
{
	double end = now_s() + ms / 1e3;
	int r;

	for (;;) {
		r = walk_from(wk, dfd, WALK_LIST);
		if (r == -ENOENT || (!r && !wk->listed))
			return true;
		if (now_s() >= end)
			return false;
		nap_ms(10);
	}
}

/* MNT/REL into @buf (REL's trailing '/' dropped); -ENAMETOOLONG rather than a cut path. */
static int cg_dir(char *buf, size_t len, const char *mnt, const char *rel)
{
	size_t rl = strlen(rel);
	int n;

	while (rl && rel[rl - 1] == '/')
		rl--;
	n = snprintf(buf, len, "%s%s%.*s", mnt, rel[0] == '/' ? "" : "/", (int)rl, rel);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* DIR/NAME into @buf. */
static int dir_file(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int open_cgroup(const char *mnt, const char *rel, char *dir, size_t len)
{
	int r = cg_dir(dir, len, mnt, rel);

	if (r)
		return r;
	r = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return r < 0 ? -errno : r;
}

/* v2: one write kills the whole subtree, forks in flight included. */
static int kill_v2(struct writer *w, struct walk *wk, int dfd, const char *dir)
{
	char file[PATH_MAX];
	int r;

	r = walk_from(wk, dfd, WALK_SEE);
	if (!r)
		r = dir_file(file, sizeof(file), dir, "cgroup.kill");
	if (!r)
		r = writer_raw(w, file, "1");	/* a dry run only logs it */
	if (r == -ENODEV)
		r = -ENOENT;
	if (r < 0)
		return r;
	if (!w->dry_run && !wait_empty(wk, dfd, KILL_WAIT_MS))
		log_warn("%s: %zu processes still there %d ms after cgroup.kill", dir, wk->listed,
			 KILL_WAIT_MS);
	return (int)wk->pids.n;
}

/*
 * v1 freezer: frozen processes can neither fork nor exit, so one pass
 * signals them all and no pid is reused under us; they die on the thaw.
 */
static int kill_frozen(struct writer *w, struct walk *wk, int dfd, const char *dir)
{
	char file[PATH_MAX], state[32] = "";
	double end;
	int r, t;

	r = dir_file(file, sizeof(file), dir, "freezer.state");
	if (r)
		return r;
	if (w->dry_run) {
		if (!writer_allowed(w, file))
			return -EPERM;
		r = walk_from(wk, dfd, WALK_SEE);
		return r ? r : (int)wk->pids.n;
	}
	/* Journaled: after a crash here the next start finds THAWED to restore. */
	r = writer_set(w, file, "FROZEN");
	if (r == -ENODEV)
		r = -ENOENT;
	/* Refused or failed: the writer left the file as it was, nothing to thaw. */
	if (r < 0)
		return r;
	end = now_s() + FREEZE_WAIT_MS / 1e3;
	while (!writer_read(w, file, state, sizeof(state)) && strcmp(state, "FROZEN") &&
	       now_s() < end)
		nap_ms(5);
	/* A task stuck in the kernel delays the freeze: signal anyway. */
	if (strcmp(state, "FROZEN"))
		log_warn("%s: freezer.state %s after %d ms, killing anyway", dir, state,
			 FREEZE_WAIT_MS);
	r = walk_from(wk, dfd, WALK_KILL);
	/* Whatever the walk did: a cgroup left frozen keeps its processes forever. */
	t = writer_set(w, file, "THAWED");
	if (t < 0 && t != -ENOENT && t != -ENODEV) {
		log_err("%s: cannot thaw: %s", dir, strerror(-t));
		return t;
	}
	if (r < 0)
		return r;
	if (!wait_empty(wk, dfd, THAW_WAIT_MS))
		log_warn("%s: %zu processes still there after the thaw", dir, wk->listed);
	return (int)wk->pids.n;
}

/* No cgroup.kill, no freezer: signal until nothing is left (or give up). */
static int kill_loop(struct writer *w, struct walk *wk, int dfd, const char *dir)
{
	unsigned int round;
	int r;

	/* No cgroup file is written, but the roots still bound what we act on. */
	if (!writer_allowed(w, dir))
		return -EPERM;
	if (w->dry_run) {
		r = walk_from(wk, dfd, WALK_SEE);
		return r ? r : (int)wk->pids.n;
	}
	for (round = 0; round < KILL_ROUNDS; round++) {
		r = walk_from(wk, dfd, WALK_KILL);
		/* Gone after a pass: everything in it died. */
		if (r == -ENOENT && round)
			break;
		if (r)
			return r;
		if (!wk->listed)
			break;
		/* Give the killed time to exit before listing again: 10 ms, doubling. */
		nap_ms(10u << (round < 4 ? round : 4));
	}
	if (round == KILL_ROUNDS)
		log_warn("%s: %zu processes still there after %d kill passes", dir, wk->listed,
			 KILL_ROUNDS);
	return (int)wk->pids.n;
}

/* The root cgroup holds the whole machine: never a target. */
static bool is_root_path(const char *rel)
{
	return !rel[strspn(rel, "/")];
}

/* Is the cgroup at @rel still the one of id @cgid (0: not known)? 0, -ESTALE, or the open's error. */
static int same_cgroup(const struct hierarchies *h, const char *rel, __u64 cgid)
{
	const char *mnt = h->cpu[0] ? h->cpu : h->unified;
	char dir[PATH_MAX];
	struct stat st;
	int fd, r = 0;

	if (!cgid || !*mnt)
		return 0;
	fd = open_cgroup(mnt, rel, dir, sizeof(dir));
	if (fd < 0)
		return fd;
	if (fstat(fd, &st))
		r = -errno;
	else if ((__u64)st.st_ino != cgid)
		r = -ESTALE;
	close(fd);
	return r;
}

int evict_kill(struct writer *w, const struct hierarchies *h, const struct evict_target *t)
{
	const char *rel = t->path, *how;
	char dir[PATH_MAX];
	struct walk wk = { 0 };
	struct stat st;
	int dfd = -ENOENT, r;

	if (!rel || is_root_path(rel) || list_has_word(rel, "..", "/"))
		return -EINVAL;
	r = same_cgroup(h, rel, t->cgid);
	if (r == -ESTALE)
		log_warn("evict %s: not the cgroup measured (id %llu): it was made again since; "
			 "nothing killed", rel, (unsigned long long)t->cgid);
	if (r)
		return r == -ENODEV ? -ENOENT : r;
	if (h->unified[0]) {
		dfd = open_cgroup(h->unified, rel, dir, sizeof(dir));
		if (dfd >= 0 && !fstatat(dfd, "cgroup.kill", &st, AT_SYMLINK_NOFOLLOW)) {
			how = "cgroup.kill";
			r = kill_v2(w, &wk, dfd, dir);
			goto out;
		}
		if (dfd >= 0)
			close(dfd);
	}
	if (h->freezer[0] && strcmp(h->freezer, h->unified)) {
		dfd = open_cgroup(h->freezer, rel, dir, sizeof(dir));
		if (dfd >= 0) {
			how = "freezer";
			r = kill_frozen(w, &wk, dfd, dir);
			goto out;
		}
	}
	how = "signals";
	if (h->cpu[0] || h->unified[0])
		dfd = open_cgroup(h->cpu[0] ? h->cpu : h->unified, rel, dir, sizeof(dir));
	else
		dfd = -EINVAL;	/* no hierarchy at all */
	r = dfd < 0 ? dfd : kill_loop(w, &wk, dfd, dir);
out:
	if (dfd >= 0)
		close(dfd);
	free(wk.pids.v);
	free(wk.buf);
	/* A container exiting as we evict it is a normal event. */
	if (r == -ENOENT)
		log_debug("evict %s: the cgroup is gone", rel);
	else if (r < 0)
		log_warn("evict %s (%s): %s", rel, how, strerror(-r));
	else
		log_debug("evict %s (%s): %d processes%s", rel, how, r, w->dry_run ? " (dry run)" : "");
	return r;
}

static int exit_status(int st);

/* Reap @pid within @timeout_s, or kill its process group and say so. */
static int wait_hook(pid_t pid, double timeout_s)
{
	double end = now_s() + timeout_s, left;
	int pfd = -1, st, r;
	pid_t got;

#ifdef SYS_pidfd_open
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	for (;;) {
		got = waitpid(pid, &st, WNOHANG);
		if (got == pid)
			break;
		if (got < 0 && errno != EINTR) {
			r = -errno;
			goto out;
		}
		left = end - now_s();
		if (left <= 0) {
			evict_hook_kill(pid);
			r = -ETIMEDOUT;
			goto out;
		}
		if (pfd >= 0)
			poll(&(struct pollfd){ .fd = pfd, .events = POLLIN }, 1, (int)(left * 1e3) + 1);
		else
			nap_ms(left < 0.01 ? 1 : 10);
	}
	r = exit_status(st);
out:
	if (pfd >= 0)
		close(pfd);
	return r;
}

int evict_hook_start(char *const argv[], const struct evict_target *t, pid_t *out)
{
	/* Nothing of the daemon's environment leaks to the hook. */
	static char *envp[] = { (char *)"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	char **args;
	size_t n = 0, i;
	pid_t pid;
	int r;

	while (argv && argv[n])
		n++;
	/* An absolute path: no PATH search, no shell. */
	if (!n || argv[0][0] != '/' || !t->path)
		return -EINVAL;
	args = calloc(n + 11, sizeof(*args));
	if (!args)
		return -ENOMEM;
	memcpy(args, argv, n * sizeof(*args));
	i = n;
	args[i++] = (char *)"--cgroup";
	args[i++] = (char *)t->path;
	args[i++] = (char *)"--pod-uid";
	args[i++] = (char *)(t->pod_uid ? t->pod_uid : "");
	args[i++] = (char *)"--container-id";
	args[i++] = (char *)(t->container_id ? t->container_id : "");
	args[i++] = (char *)"--qos";
	args[i++] = (char *)qos_name(t->qos);
	args[i++] = (char *)"--reason";
	args[i++] = (char *)evict_reason_name(t->reason);
	args[i] = NULL;

	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigfillset(&all);
	r = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
	/* Descriptors someone opened without O_CLOEXEC stay with us. */
	if (!r)
		r = posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
#endif
	/* Our blocked and handled signals are not the hook's. */
	if (!r)
		r = posix_spawnattr_setsigmask(&at, &none);
	if (!r)
		r = posix_spawnattr_setsigdefault(&at, &all);
	if (!r)
		r = posix_spawnattr_setpgroup(&at, 0);
	if (!r)
		r = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
					     POSIX_SPAWN_SETPGROUP);
	if (!r)
		r = posix_spawn(&pid, args[0], &fa, &at, args, envp);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	free(args);
	if (r) {
		log_warn("eviction hook %s: %s", argv[0], strerror(r));
		return -r;
	}
	*out = pid;
	return 0;
}

/* @st as a shell reports it: the exit status, or 128 + the signal. */
static int exit_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -ECHILD;
}

int evict_hook_poll(pid_t pid, double deadline_s)
{
	pid_t got;
	int st;

	do
		got = waitpid(pid, &st, WNOHANG);
	while (got < 0 && errno == EINTR);
	if (got == pid)
		return exit_status(st);
	if (got < 0)
		return -errno;
	if (now_s() < deadline_s)
		return -EINPROGRESS;
	evict_hook_kill(pid);
	return -ETIMEDOUT;
}

void evict_hook_kill(pid_t pid)
{
	/* Its own group (setpgid at spawn): children it left go too. */
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int evict_hook(char *const argv[], const struct evict_target *t, double timeout_s)
{
	pid_t pid;
	int r;

	if (!(timeout_s > 0))
		return -EINVAL;
	r = evict_hook_start(argv, t, &pid);
	if (r)
		return r;
	r = wait_hook(pid, timeout_s);
	if (r == -ETIMEDOUT)
		log_warn("eviction hook %s: killed after %.1f s", argv[0], timeout_s);
	else if (r)
		log_info("eviction hook %s for %s: exit status %d", argv[0], t->path, r);
	return r;
}
