// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Strict parsing of an agent's answer: a cut or padded document is an error, not a prefix. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "jsondoc.h"

#define JSON_DEPTH	64

json_object *json_doc_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	json_object *root;
	size_t i;

	if (len > INT32_MAX) {
		snprintf(err, errlen, "not JSON: too large");
		return NULL;
	}
	tok = json_tokener_new_ex(JSON_DEPTH);
	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	root = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	for (i = json_tokener_get_parse_end(tok);
	     i < len && text[i] && strchr(" \t\r\n", text[i]); i++)
		;
	json_tokener_free(tok);
	if (jerr != json_tokener_success)
		snprintf(err, errlen, "not JSON: %s", jerr == json_tokener_continue ? "cut short" :
			 json_tokener_error_desc(jerr));
	else if (i < len)
		snprintf(err, errlen, "not JSON: text after the document at byte %zu", i);
	else if (!json_object_is_type(root, json_type_object))
		snprintf(err, errlen, "not a JSON object");
	else
		return root;
	json_object_put(root);
	return NULL;
}
