/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A window's per-container numbers as a text table or as JSON (docs/metrics.md). */
#ifndef KOORD_REPORT_H
#define KOORD_REPORT_H

#include <stdio.h>
#include <json-c/json.h>
#include "cgroup.h"
#include "window.h"

/* The steal slot's JSON/text name: "LSE" .. "idle", "self", "throttled". */
const char *steal_slot_name(unsigned int slot);

/* Containers that ran or waited in @w, sorted by p99 wait (longest first). */
size_t report_rows(const struct window *w, const struct cg_window ***rows);

/* One container as the JSON object of the documented schema. */
json_object *report_container_json(const struct cg_window *cw, const struct container *c);

/* The table: one line per container, at most @top lines (0: all). */
void report_table(FILE *f, const struct window *w, const struct container_table *t, size_t top);

#endif
