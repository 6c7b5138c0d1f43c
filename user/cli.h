/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Command-line values the three programs share; each logs the reason on error. */
#ifndef KOORD_CLI_H
#define KOORD_CLI_H

#include <stdbool.h>
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

#endif
