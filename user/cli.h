/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Command-line values the three programs share; each logs the reason on error. */
#ifndef KOORD_CLI_H
#define KOORD_CLI_H

#include "window.h"

/* --counter-source auto|hardware|software|off; 0 or -EINVAL. */
int cli_counter_source(const char *arg, enum pmu_source *out);
/* --max-containers 16..1048576; 0 or -EINVAL. */
int cli_max_containers(const char *arg, unsigned int *out);

#endif
