/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Command-line values the three programs share; each logs the reason on error. */
#ifndef KOORD_CLI_H
#define KOORD_CLI_H

#include <stdbool.h>
#include "http.h"
#include "window.h"

#ifndef KOORD_BPF_VERSION
#define KOORD_BPF_VERSION "0.1.0"
#endif

/* --version: "PROG VERSION (libbpf X.Y)" on stdout, the same for the three programs. */
void cli_version(const char *prog);

/* --counter-source auto|hardware|software|off; 0 or -EINVAL. */
int cli_counter_source(const char *arg, enum pmu_source *out);
/*
 * A number option @what of @unit ("seconds") in [@min, @max], or (@min, @max]
 * when @open_min: "bad WHAT \"ARG\": want UNIT, MIN <= UNIT <= MAX" logged
 * otherwise. 0 or -EINVAL.
 */
int cli_number(const char *what, const char *unit, const char *arg, double min, double max,
	       bool open_min, double *out);
/* --max-containers 16..1048576; 0 or -EINVAL. */
int cli_max_containers(const char *arg, unsigned int *out);
/* An http:// or https:// URL for option @what; 0 or -EINVAL (with @example in the message). */
int cli_url(const char *what, const char *arg, const char *example);

/*
 * --kubelet URL and its companions, for the tools that name containers by
 * their pods (koord-top, koord-interference); the daemon reads the same from
 * its config's "kubelet" section.
 */
enum { CLI_OPT_KUBELET = 0x100, CLI_OPT_KUBELET_TOKEN, CLI_OPT_KUBELET_CA, CLI_OPT_KUBELET_INSECURE };
#define CLI_KUBELET_LONGOPTS								\
	{ "kubelet", required_argument, NULL, CLI_OPT_KUBELET },			\
	{ "kubelet-token-file", required_argument, NULL, CLI_OPT_KUBELET_TOKEN },	\
	{ "kubelet-ca-file", required_argument, NULL, CLI_OPT_KUBELET_CA },		\
	{ "kubelet-insecure", no_argument, NULL, CLI_OPT_KUBELET_INSECURE }
#define CLI_KUBELET_HELP								\
"      --kubelet URL       name containers by their pods: the kubelet's pod list,\n"	\
"                          e.g. https://127.0.0.1:10250/pods (${VAR} from the\n"	\
"                          environment); without it, containers are cgroup paths\n"	\
"      --kubelet-token-file FILE  a bearer token for it\n"			\
"      --kubelet-ca-file FILE     its CA (default: the system's)\n"			\
"      --kubelet-insecure  do not verify its certificate\n"
/* Takes one of the options above into @o (5 s timeout): 1; 0 for any other @opt; -EINVAL. */
int cli_kubelet_option(int opt, const char *arg, struct http_opts *o);

#endif
