// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "log.h"

void cli_version(const char *prog)
{
	printf("%s %s (libbpf %s)\n", prog, KOORD_BPF_VERSION, libbpf_version_string());
}

int cli_counter_source(const char *arg, enum pmu_source *out)
{
	static const struct { const char *name; enum pmu_source v; } names[] = {
		{ "auto", PMU_SOURCE_AUTO }, { "hardware", PMU_SOURCE_HARDWARE },
		{ "software", PMU_SOURCE_SOFTWARE }, { "off", PMU_SOURCE_OFF },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(arg, names[i].name)) {
			*out = names[i].v;
			return 0;
		}
	}
	log_err("bad --counter-source \"%s\": want auto, hardware, software or off", arg);
	return -EINVAL;
}

int cli_number(const char *what, const char *unit, const char *arg, double min, double max,
	       bool open_min, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v < min || (open_min && v == min) ||
	    v > max) {
		log_err("bad %s \"%s\": want %s, %g %s %s <= %g", what, arg, unit, min,
			open_min ? "<" : "<=", unit, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int cli_max_containers(const char *arg, unsigned int *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-' || v < 16 || v > (1u << 20)) {
		log_err("bad --max-containers \"%s\": want 16 to 1048576", arg);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int cli_url(const char *what, const char *arg, const char *example)
{
	if (!strncmp(arg, "http://", 7) || !strncmp(arg, "https://", 8))
		return 0;
	log_err("bad %s \"%s\": want an http:// or https:// URL, e.g. %s", what, arg, example);
	return -EINVAL;
}

int cli_kubelet_option(int opt, const char *arg, struct http_opts *o)
{
	switch (opt) {
	case CLI_OPT_KUBELET:
		if (cli_url("--kubelet", arg, "https://127.0.0.1:10250/pods"))
			return -EINVAL;
		o->url = arg;
		break;
	case CLI_OPT_KUBELET_TOKEN:
		o->token_file = arg;
		break;
	case CLI_OPT_KUBELET_CA:
		o->ca_file = arg;
		break;
	case CLI_OPT_KUBELET_INSECURE:
		o->insecure = true;
		break;
	default:
		return 0;
	}
	o->timeout_s = 5;
	o->interval_s = 10;
	return 1;
}
