/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A window's per-container numbers as a text table or as JSON (docs/metrics.md). */
#ifndef KOORD_REPORT_H
#define KOORD_REPORT_H

#include <stdio.h>
#include <json-c/json.h>
#include "cgroup.h"
#include "suspects.h"
#include "window.h"

/* The steal slot's JSON/text name: "LSE" .. "idle", "self", "throttled". */
const char *steal_slot_name(unsigned int slot);

/* Containers that ran or waited in @w, sorted by p99 wait (longest first). */
size_t report_rows(const struct window *w, const struct cg_window ***rows);

/* One container as the JSON object of the documented schema. */
json_object *report_container_json(const struct cg_window *cw, const struct container *c);

/* The table: one line per container, at most @top lines (0: all). */
void report_table(FILE *f, const struct window *w, const struct container_table *t, size_t top);

/* Suspects with their victims, and the one-line verdict. */
void report_suspects(FILE *f, const struct suspects *s, const struct container_table *t,
		     __u64 dur_ns);
/* "BE container X caused 83% of the online waiting; victims: ..." or "no interference found". */
void report_verdict(char *buf, size_t len, const struct suspects *s,
		    const struct container_table *t, __u64 dur_ns);
json_object *report_suspects_json(const struct suspects *s, const struct container_table *t);

/* One long-wait record: a line like runqslower's, or a JSON object. */
void report_event_header(FILE *f);
void report_event(FILE *f, const struct long_wait_event *ev, const struct container_table *t);
json_object *report_event_json(const struct long_wait_event *ev, const struct container_table *t);

#endif
