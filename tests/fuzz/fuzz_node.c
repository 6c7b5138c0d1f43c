// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The API server's Node object (--node): what it reserves for the system. */
#include <math.h>
#include "fuzz.h"
#include "node_object.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct node_reservation r;
	struct node_object n;
	char err[512];

	if (node_object_parse((const char *)data, size, &n, err, sizeof(err)))
		return 0;
	node_object_reservation(&n, &r);
	/* a reservation is never negative nor NaN, and never below either source */
	if (!n.name[0] || !(n.kubelet_cpu >= 0) || !(n.kubelet_memory >= 0) || !(r.cpu >= 0) ||
	    !(r.memory >= 0) || r.cpu < n.kubelet_cpu || r.cpu < n.annotation.cpu ||
	    r.memory < n.kubelet_memory || r.memory < n.annotation.memory)
		abort();
	return 0;
}
