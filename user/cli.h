/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Command-line values the three programs share; each logs the reason on error. */
#ifndef KOORD_CLI_H
#define KOORD_CLI_H

#include "window.h"

#ifndef KOORD_BPF_VERSION
#define KOORD_BPF_VERSION "0.1.0"
#endif

/* --version: "PROG VERSION (libbpf X.Y)" on stdout, the same for the three programs. */
void cli_version(const char *prog);

/* --counter-source auto|hardware|software|off; 0 or -EINVAL. */
int cli_counter_source(const char *arg, enum pmu_source *out);
/* --max-containers 16..1048576; 0 or -EINVAL. */
int cli_max_containers(const char *arg, unsigned int *out);

#endif
