/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Who holds a TCP port, asked when a bind fails with EADDRINUSE, so that
 * the error names the process (koordlet holds 9316 and 9317 on every
 * Koordinator node) instead of guessing.
 */
#ifndef KOORD_PORT_HOLDER_H
#define KOORD_PORT_HOLDER_H

#include <stddef.h>
#include <sys/types.h>

/*
 * The inodes of the sockets listening on TCP @port (any address) in @text,
 * a /proc/net/tcp or /proc/net/tcp6 table; at most @max. Returns how many.
 */
size_t port_listen_inodes(const char *text, unsigned int port, unsigned long *inodes, size_t max);
/*
 * The process holding a socket that listens on TCP @port: its name in
 * @comm and its pid. 0, or -ENOENT when none is seen (another network
 * namespace, or a process this one may not look into).
 */
int port_holder(unsigned int port, char *comm, size_t len, pid_t *pid);

#endif
