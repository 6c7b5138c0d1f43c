// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kubelet's PodList (GET /pods) and the label rules on what it holds. */
#include "fuzz.h"
#include "pods.h"

FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pod_list l;
	char err[256];
	size_t i;

	if (pods_parse((const char *)data, size, &l, err, sizeof(err)))
		return 0;
	for (i = 0; i < l.n; i++) {
		pod_prio(&l.v[i], pod_qos(&l.v[i], KC_LS));
		pod_evict_allowed(&l.v[i], "BECPUEvict");
		if (pods_find(&l, l.v[i].uid) == NULL)
			abort();	/* every pod is found by its uid */
	}
	pods_free(&l);
	return 0;
}
