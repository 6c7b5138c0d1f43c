/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Who holds a TCP port: the /proc/net/tcp tables, and a real listener. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include "port_holder.h"

static const char tcp[] =
"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
"   0: 00000000:2464 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0 100 0 0 10 0\n"
"   1: 0100007F:2464 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0 20 4 30 10 -1\n"
"   2: 0100007F:2465 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1 0 100 0 0 10 0\n"
"   3: 0100007F:2464 0100007F:D432 06 00000000:00000000 03:00000E2A 00000000     0        0 0 3 0\n";
static const char tcp6[] =
"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
"   0: 00000000000000000000000000000000:2464 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 444 1 0 100 0 0 10 0\n";

static void test_tables(void **state)
{
	unsigned long ino[4];

	(void)state;
	/* listeners only: not a connection to the port, nor a socket in TIME_WAIT (no inode) */
	assert_int_equal(port_listen_inodes(tcp, 9316, ino, 4), 1);
	assert_int_equal(ino[0], 111);
	assert_int_equal(port_listen_inodes(tcp, 9317, ino, 4), 1);
	assert_int_equal(ino[0], 333);
	assert_int_equal(port_listen_inodes(tcp6, 9316, ino, 4), 1);
	assert_int_equal(ino[0], 444);
	assert_int_equal(port_listen_inodes(tcp, 9318, ino, 4), 0);
	assert_int_equal(port_listen_inodes(tcp, 9316, ino, 0), 0);
	assert_int_equal(port_listen_inodes("", 9316, ino, 4), 0);
	assert_int_equal(port_listen_inodes("garbage\n\n  7: zz", 9316, ino, 4), 0);
}

/* A socket this test listens on is found, and named after this process. */
static void test_own_listener(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	char comm[32], want[32];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	FILE *f = fopen("/proc/self/comm", "re");
	pid_t pid = 0;

	(void)state;
	assert_non_null(f);
	assert_non_null(fgets(want, sizeof(want), f));
	fclose(f);
	want[strcspn(want, "\n")] = '\0';
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	/* not yet listening: nobody holds the port as a listener */
	assert_int_equal(port_holder(ntohs(a.sin_port), comm, sizeof(comm), &pid), -ENOENT);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(port_holder(ntohs(a.sin_port), comm, sizeof(comm), &pid), 0);
	assert_string_equal(comm, want);
	assert_int_equal(pid, getpid());
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_own_listener),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
