/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The node's own Node object from the API server (GET /api/v1/nodes/NODE),
 * polled in a thread of its own (poller.c, with the NodeSLO's token and CA):
 * what it reserves for the system, as Koordinator reads it. Only the daemon
 * links it (-lcurl).
 */
#ifndef KOORD_NODE_OBJECT_H
#define KOORD_NODE_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include "config.h"
#include "poller.h"

#define NODE_RESERVATION_ANNOTATION "node.koordinator.sh/reservation"

/* An answer, read. */
struct node_object {
	char name[254];
	double kubelet_cpu, kubelet_memory;	/* capacity - allocatable; 0 where either is missing */
	bool annotated;				/* NODE_RESERVATION_ANNOTATION is set */
	struct node_reservation annotation;	/* its value, read as koordBPF.reservation */
};

/*
 * Is @text one Node (kind "Node", a metadata.name)? Its status' capacity and
 * allocatable (cpu, memory: quantities) and the annotation into @out. 0, or
 * -EINVAL (the reason in @err: a bad quantity or annotation, too), -ENOMEM.
 */
int node_object_parse(const char *text, size_t len, struct node_object *out, char *err,
		      size_t errlen);

/* Koordinator's node reservation: the larger of the kubelet's and the annotation's, and its CPUs. */
void node_object_reservation(const struct node_object *n, struct node_reservation *out);

/* Polls @url (${VAR} from the environment) as nodeslo_start() does. */
int node_object_start(const char *url, const char *token_file, const char *ca_file,
		      double interval_s, struct poller **out);
/* A copy of the last good answer and its poller generation; -ENOENT when none came yet. */
int node_object_take(struct poller *p, struct node_object *out, unsigned long *gen);

#endif
