/* serve/audit.h - the audit log: one JSON line per operation.
 *
 * Each line: {"time", "op", "mutating" (the op writes or runs commands, by
 * the table of lib/serve/policy.h), "workspace", "session", "duration_ms",
 * "outcome": "ok"|"error", "error"?: CODE, "request": {...summary}}.
 * The summary keeps only what says *where* and *what* (paths, command,
 * pattern, action, numbers and flags), never file contents, edit texts,
 * patches, stdin, environment values, messages or tokens; long strings are
 * cut.  Lines are written whole under a lock (thread-safe).
 */
#ifndef WAP_AUDIT_H
#define WAP_AUDIT_H

#include <jansson.h>

#include "err.h"

struct wap_audit;

/* FILE ("-": stderr) opened for appending.  NULL with err. */
struct wap_audit *wap_audit_open(const char *file, struct wap_err *err);
void wap_audit_close(struct wap_audit *a);

/* Log one operation.  A NULL A does nothing.  ERR NULL (or kind WAP_OK)
 * means success.  REQ is the request as the op received it. */
void wap_audit_log(struct wap_audit *a, const char *op, const char *workspace,
		   const char *session, double duration_ms, const json_t *req,
		   const struct wap_err *err);

/* The summary object of OP's request (a new reference); for tests. */
json_t *wap_audit_summary(const char *op, const json_t *req);

#endif
