/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A JSON document from a node agent, parsed strictly enough to trust its shape. */
#ifndef KOORD_JSONDOC_H
#define KOORD_JSONDOC_H

#include <stddef.h>
#include <json-c/json.h>

/*
 * One JSON object of @len bytes: nothing after it but blanks, nested at most
 * 64 deep (json-c's default of 32 is near a real pod spec's). NULL with the
 * reason in @err ("not JSON: ...") otherwise.
 */
json_object *json_doc_parse(const char *text, size_t len, char *err, size_t errlen);

#endif
