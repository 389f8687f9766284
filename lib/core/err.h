/* core/err.h - the one table of error kinds.  Every door reports a failure
 * through it (the CLI's exit status, the JSON-RPC code, the error object's
 * "code"), so no two doors can disagree on what went wrong; README.md,
 * "Exit codes and error kinds", is the table for users.
 *
 * lib/ never prints or exits: a function that fails fills a struct wap_err
 * and returns -1 (or NULL).  The caller owns the struct; wap_err_release()
 * frees the optional details object it may hold.
 */
#ifndef WAP_ERR_H
#define WAP_ERR_H

#include <jansson.h>

enum wap_errkind {
	WAP_OK = 0,
	WAP_E_NOT_FOUND,	/* FILE_NOT_FOUND */
	WAP_E_ACCESS,		/* ACCESS_DENIED: escapes the root */
	WAP_E_RESTRICTED,	/* PATH_RESTRICTED: restrictedPaths, read-only */
	WAP_E_PERMISSION,	/* PERMISSION_DENIED: EACCES/EPERM */
	WAP_E_TOO_LARGE,	/* SIZE_LIMIT_EXCEEDED */
	WAP_E_INVALID,		/* INVALID_ARGUMENT */
	WAP_E_NOT_FILE,		/* NOT_A_FILE */
	WAP_E_NOT_DIR,		/* NOT_A_DIRECTORY */
	WAP_E_EXISTS,		/* ALREADY_EXISTS */
	WAP_E_NO_MATCH,		/* NO_MATCH */
	WAP_E_MULTIPLE,		/* MULTIPLE_MATCHES */
	WAP_E_CONFLICT,		/* CONFLICT */
	WAP_E_CMD_RESTRICTED,	/* COMMAND_RESTRICTED */
	WAP_E_DISABLED,		/* FEATURE_DISABLED */
	WAP_E_TIMEOUT,		/* TIMEOUT */
	WAP_E_FAILED,		/* EXECUTION_FAILED */
	WAP_E_TERM_NOT_FOUND,	/* TERMINAL_NOT_FOUND: no terminal by that id */
	WAP_E_COUNT
};

struct wap_err {
	enum wap_errkind kind;
	char msg[1024];
	json_t *details;	/* owned; may be NULL */
};

/* Fill *e (printf-style message) and return -1, so callers can
 * `return wap_err_set(err, WAP_E_INVALID, "...")`.  A NULL e is allowed. */
int wap_err_set(struct wap_err *e, enum wap_errkind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Out of memory: EXECUTION_FAILED; returns -1.  The one policy: lib/ and
 * every op return this (a server outlives one failed call); only main.c's
 * one-shot CLI paths die instead (xmalloc() there). */
int wap_err_oom(struct wap_err *e);

/* Map an errno about PATH to the right kind and message; returns -1. */
int wap_err_errno(struct wap_err *e, int errnum, const char *path);

/* Attach a details object (stolen reference). */
void wap_err_details(struct wap_err *e, json_t *details);

void wap_err_release(struct wap_err *e);

const char *wap_err_code(enum wap_errkind kind);	/* "FILE_NOT_FOUND" */
int wap_err_rpc(enum wap_errkind kind);			/* -32002 */
int wap_err_exit(enum wap_errkind kind);		/* CLI exit status */
enum wap_errkind wap_err_from_code(const char *code);	/* WAP_OK if unknown */

/* {"error": msg, "code": CODE, "details"?: {...}}: a new reference. */
json_t *wap_err_json(const struct wap_err *e);

#endif
