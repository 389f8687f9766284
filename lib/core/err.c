/* core/err.c - the error table: code string, JSON-RPC code, exit status. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

static const struct {
	const char *code;
	int rpc;
	int exit;
} table[WAP_E_COUNT] = {
	[WAP_OK]		= { "OK", 0, 0 },
	[WAP_E_NOT_FOUND]	= { "FILE_NOT_FOUND", -32002, 3 },
	[WAP_E_ACCESS]		= { "ACCESS_DENIED", -32010, 4 },
	[WAP_E_RESTRICTED]	= { "PATH_RESTRICTED", -32003, 5 },
	[WAP_E_PERMISSION]	= { "PERMISSION_DENIED", -32003, 6 },
	[WAP_E_TOO_LARGE]	= { "SIZE_LIMIT_EXCEEDED", -32602, 7 },
	[WAP_E_INVALID]		= { "INVALID_ARGUMENT", -32602, 2 },
	[WAP_E_NOT_FILE]	= { "NOT_A_FILE", -32602, 8 },
	[WAP_E_NOT_DIR]		= { "NOT_A_DIRECTORY", -32602, 9 },
	[WAP_E_EXISTS]		= { "ALREADY_EXISTS", -32602, 10 },
	[WAP_E_NO_MATCH]	= { "NO_MATCH", -32602, 11 },
	[WAP_E_MULTIPLE]	= { "MULTIPLE_MATCHES", -32602, 12 },
	[WAP_E_CONFLICT]	= { "CONFLICT", -32602, 13 },
	[WAP_E_CMD_RESTRICTED]	= { "COMMAND_RESTRICTED", -32011, 14 },
	[WAP_E_DISABLED]	= { "FEATURE_DISABLED", -32009, 15 },
	[WAP_E_TIMEOUT]		= { "TIMEOUT", -32603, 124 },
	[WAP_E_FAILED]		= { "EXECUTION_FAILED", -32603, 125 },
	/* a terminal is not a file: the Agent Control Protocol's TerminalNotFound */
	[WAP_E_TERM_NOT_FOUND]	= { "TERMINAL_NOT_FOUND", -32004, 16 },
};

int wap_err_set(struct wap_err *e, enum wap_errkind kind, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	e->kind = kind;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int wap_err_oom(struct wap_err *e)
{
	return wap_err_set(e, WAP_E_FAILED, "out of memory");
}

int wap_err_errno(struct wap_err *e, int errnum, const char *path)
{
	switch (errnum) {
	case ENOENT:
		return wap_err_set(e, WAP_E_NOT_FOUND, "File not found: %s", path);
	case EXDEV:
		return wap_err_set(e, WAP_E_ACCESS,
			"Access denied: %s is outside the workspace root", path);
	case EACCES:
	case EPERM:
	case EROFS:
		return wap_err_set(e, WAP_E_PERMISSION, "Permission denied: %s", path);
	case ENOTDIR:
		return wap_err_set(e, WAP_E_NOT_DIR, "Not a directory: %s", path);
	case ENXIO:	/* open(2) of a socket, or of a device with nothing behind it */
		return wap_err_set(e, WAP_E_NOT_FILE, "Not a file: %s is a socket or an absent device", path);
	case EISDIR:
		return wap_err_set(e, WAP_E_NOT_FILE, "Is a directory, not a file: %s", path);
	case EEXIST:
	case ENOTEMPTY:
		return wap_err_set(e, WAP_E_EXISTS, "Already exists: %s", path);
	case ENAMETOOLONG:
		return wap_err_set(e, WAP_E_INVALID, "Path too long: %.200s...", path);
	case ELOOP:
		return wap_err_set(e, WAP_E_ACCESS,
			"Access denied: %s: too many levels of symbolic links", path);
	case EFBIG:	/* RLIMIT_FSIZE, or past what the file system allows a file */
		return wap_err_set(e, WAP_E_TOO_LARGE, "%s: %s", path, strerror(errnum));
	case ENOSPC:	/* the disk is full: an I/O failure, not a limit the caller can narrow */
	case EDQUOT:
		return wap_err_set(e, WAP_E_FAILED, "I/O error writing %s: %s", path, strerror(errnum));
	default:
		return wap_err_set(e, WAP_E_FAILED, "%s: %s", path, strerror(errnum));
	}
}

void wap_err_details(struct wap_err *e, json_t *details)
{
	if (!e) {
		json_decref(details);
		return;
	}
	json_decref(e->details);
	e->details = details;
}

void wap_err_release(struct wap_err *e)
{
	if (!e)
		return;
	json_decref(e->details);
	e->details = NULL;
	e->kind = WAP_OK;
	e->msg[0] = 0;
}

const char *wap_err_code(enum wap_errkind kind)
{
	return kind < WAP_E_COUNT ? table[kind].code : "EXECUTION_FAILED";
}

int wap_err_rpc(enum wap_errkind kind)
{
	return kind < WAP_E_COUNT ? table[kind].rpc : -32603;
}

int wap_err_exit(enum wap_errkind kind)
{
	return kind < WAP_E_COUNT ? table[kind].exit : 125;
}

enum wap_errkind wap_err_from_code(const char *code)
{
	for (int k = 1; k < WAP_E_COUNT; k++)
		if (!strcmp(table[k].code, code))
			return k;
	return WAP_OK;
}

json_t *wap_err_json(const struct wap_err *e)
{
	json_t *o = json_pack("{s:s, s:s}", "error", e->msg,
			      "code", wap_err_code(e->kind));

	if (o && e->details)
		json_object_set(o, "details", e->details);
	return o;
}
