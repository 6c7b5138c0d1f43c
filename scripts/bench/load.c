// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The bench's loader: loads a BPF object (the floor, floor.bpf.c, or the
 * primitives, prims.bpf.c), attaches all its programs, prints
 * "bench-load: attached" on stderr, and stays attached until SIGINT/SIGTERM
 * or SECONDS have passed.
 *
 *   koord-bench-load OBJECT [SECONDS]
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

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
	double secs = argc > 2 ? atof(argv[2]) : 3600;
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct timespec t0, t;
	int err, n = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: koord-bench-load OBJECT [SECONDS]\n");
		return 2;
	}
	libbpf_set_print(quiet_print);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "bench-load: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "bench-load: cannot load %s: %s\n", argv[1], strerror(-err));
		bpf_object__close(obj);
		return 1;
	}
	/* The links stay open (and attached) until exit. */
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "bench-load: cannot attach %s: %s\n",
				bpf_program__name(prog), strerror(errno));
			bpf_object__close(obj);
			return 1;
		}
		n++;
	}
	fprintf(stderr, "bench-load: attached %d programs of %s\n", n, argv[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop) {
		usleep(50000);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
			break;
	}
	bpf_object__close(obj);
	return 0;
}
