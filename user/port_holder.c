// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "port_holder.h"

#define TCP_LISTEN 0x0A		/* the st column of a listening socket */
#define INODES_MAX 16

size_t port_listen_inodes(const char *text, unsigned int port, unsigned long *inodes, size_t max)
{
	const char *line = text;
	size_t n = 0;

	/* "  0: 0100007F:24A4 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12345 ..." */
	for (; line && *line && n < max; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		unsigned int lport, st;
		unsigned long inode;

		if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x %*s %*s %*s %*s %*s %lu",
			   &lport, &st, &inode) == 3 && lport == port && st == TCP_LISTEN && inode)
			inodes[n++] = inode;
	}
	return n;
}

/* Read a small /proc file whole into @buf. */
static int slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t r;

	if (fd < 0)
		return -errno;
	while (got + 1 < len && (r = read(fd, buf + got, len - 1 - got)) > 0)
		got += r;
	close(fd);
	buf[got] = '\0';
	return 0;
}

/* Does process @pid hold one of @inodes among its fds? */
static int holds(const char *pid, const unsigned long *inodes, size_t n)
{
	char path[300], link[64];
	struct dirent *de;
	int found = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	d = opendir(path);
	while (d && !found && (de = readdir(d))) {
		unsigned long ino;
		ssize_t k = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);

		if (k <= 0)
			continue;
		link[k] = '\0';
		if (sscanf(link, "socket:[%lu]", &ino) != 1)
			continue;
		for (size_t i = 0; i < n && !found; i++)
			found = ino == inodes[i];
	}
	if (d)
		closedir(d);
	return found;
}

int port_holder(unsigned int port, char *comm, size_t len, pid_t *pid)
{
	static const char *const tables[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	unsigned long inodes[INODES_MAX];
	size_t n = 0, i, cap = 0;
	char *line = NULL, path[300];
	struct dirent *de;
	int err = -ENOENT;
	DIR *d;

	/* line by line: a busy node's tables run to megabytes */
	for (i = 0; i < 2; i++) {
		FILE *f = fopen(tables[i], "re");

		while (f && n < INODES_MAX && getline(&line, &cap, f) > 0)
			n += port_listen_inodes(line, port, inodes + n, INODES_MAX - n);
		if (f)
			fclose(f);
	}
	free(line);
	d = n ? opendir("/proc") : NULL;
	while (d && err && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]) || !holds(de->d_name, inodes, n))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (slurp(path, comm, len))
			continue;
		comm[strcspn(comm, "\n")] = '\0';
		*pid = (pid_t)atoi(de->d_name);
		err = 0;
	}
	if (d)
		closedir(d);
	return err;
}
