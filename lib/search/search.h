/* search/search.h - the search engine of `wap grep` as a library: one request
 * (grep's JSON request object: pattern, regexp, paths, include, exclude,
 * type, the flags, max_results, context, replace, write, jsonl, ...)
 * searched the ripgrep way, in parallel under the workspace root. */
#ifndef WAP_SEARCH_H
#define WAP_SEARCH_H

#include <stdio.h>
#include <jansson.h>

#include "applet.h"

/* what the search makes: the result object (every door, --json, --write)
 * or the CLI's output written as it is made (text lines, --jsonl) */
enum { WAP_SEARCH_JSON, WAP_SEARCH_TEXT, WAP_SEARCH_JSONL };

/* Run REQ.  WAP_SEARCH_JSON: *RES is the result (the caller owns it).
 * Otherwise the output goes to OUT and *STATUS is grep's exit status (0
 * found, 1 nothing); *RES is an object holding only archivesCut, what the
 * output could not say (the archives not searched to their end: the
 * caller says it aside).  -1 with ERR on a bad request, a regex limit
 * hit, a cancel. */
int wap_search(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err,
	       int mode, FILE *out, int *status);

#endif
