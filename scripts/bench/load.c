// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loader of the bench floor (floor.bpf.c): loads and attaches it, prints
 * "floor: attached" on stderr, and stays attached until SIGINT/SIGTERM or
 * the given number of seconds; then prints the switches it counted.
 *
 *   koord-bench-floor [SECONDS]
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int quiet_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	return lvl == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3600;
	struct timespec t0, t;
	struct floor *s;
	unsigned long long total = 0;
	int ncpu, err, i;
	__u32 zero = 0;

	libbpf_set_print(quiet_print);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	s = floor__open_and_load();
	if (!s) {
		fprintf(stderr, "floor: cannot load: %s\n", strerror(errno));
		return 1;
	}
	err = floor__attach(s);
	if (err) {
		fprintf(stderr, "floor: cannot attach: %s\n", strerror(-err));
		floor__destroy(s);
		return 1;
	}
	fprintf(stderr, "floor: attached\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop) {
		usleep(50000);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
			break;
	}
	ncpu = libbpf_num_possible_cpus();
	if (ncpu > 0) {
		unsigned long long v[ncpu];

		if (!bpf_map_lookup_elem(bpf_map__fd(s->maps.floor_cnt), &zero, v))
			for (i = 0; i < ncpu; i++)
				total += v[i];
	}
	printf("floor: %llu switches counted\n", total);
	floor__destroy(s);
	return 0;
}
