/* proc/term.h - terminals: a shell on a PTY, or a command on pipes, with a
 * bounded output buffer.
 *
 * A struct wap_terms is a set of terminals belonging to one session (an
 * Agent Control Protocol connection, an ACP stdio session).  Each terminal
 * has a reader thread that drains its output into the buffer, calls the
 * set's output callback (for `terminal.output` notifications) and, when the
 * process has exited and its output is drained, the exit callback
 * (`terminal.closed`).  Callbacks run on the reader thread: they must not
 * call back into the set.
 *
 * Memory is bounded per terminal: the last MAX_LINES lines (default 1000,
 * and never more than 1 MiB) for shells, or the last OUTPUT_BYTE_LIMIT bytes
 * for commands (the ACP semantics: output dropped from the beginning, at a
 * UTF-8 character boundary).
 *
 * wap_terms_free() kills every process (SIGHUP, then SIGKILL to its process
 * group), joins the threads and frees everything.  All functions are
 * thread-safe.  Strings returned are malloc'd and owned by the caller.
 */
#ifndef WAP_TERM_H
#define WAP_TERM_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "cancel.h"
#include "err.h"
#include "ws.h"

#define WAP_TERM_DEFAULT_LINES	1000
#define WAP_TERM_MAX_BYTES	(1u << 20)	/* shell terminals: 1 MiB at most */
#define WAP_TERM_ID_LEN		32
#define WAP_TERM_MAX		64		/* terminals per set */
#define WAP_TERM_MAX_ALL	256		/* in all the sets of a process */

struct wap_terms;

typedef void (*wap_term_output_fn)(void *arg, const char *id, const char *data, size_t len);
typedef void (*wap_term_exit_fn)(void *arg, const char *id, int exit_code, int signal);

struct wap_term_opts {
	const char *name;		/* display name; NULL: "Terminal N" */
	const char *cwd;		/* path (workspace-relative or absolute
					 * inside the root); NULL: the root */
	char *const *argv;		/* command + args; NULL: a shell on a PTY */
	char *const *env;		/* extra "K=V" entries; may be NULL */
	bool pty;			/* run on a PTY (always for shells) */
	size_t byte_limit;		/* 0: line mode (shells); else keep the
					 * last BYTE_LIMIT bytes (WAP_TERM_MAX_BYTES
					 * at most) */
	size_t max_lines;		/* line mode: 0 means 1000 */
};

struct wap_term_status {
	bool exited;
	int exit_code;			/* -1 when killed by a signal */
	int signal;			/* 0 unless killed by a signal */
};

/* A new, empty set.  WS (borrowed, must outlive the set) confines cwd.
 * Callbacks may be NULL. */
struct wap_terms *wap_terms_new(const struct wap_ws *ws, wap_term_output_fn out,
				wap_term_exit_fn onexit, void *arg);
/* Kill every terminal, join the threads, free the set.  NULL is a no-op. */
void wap_terms_free(struct wap_terms *ts);

/* Kill and forget every terminal of TS (a session that ended). */
void wap_terms_release_all(struct wap_terms *ts);

/* Start a terminal; its id ("term-N") is written to ID.  It becomes the
 * active terminal.  At most WAP_TERM_MAX per set (SIZE_LIMIT_EXCEEDED).
 * Under security.sandbox, security.readOnly or a command list it runs in
 * the sandbox of `wap exec` (landlock.h: private TMPDIR kept until the
 * terminal is released, read-only .git and .wap, the lists enforced on
 * program files whatever is typed); FEATURE_DISABLED where that cannot
 * be set up. */
int wap_term_create(struct wap_terms *ts, const struct wap_term_opts *o,
		    char id[WAP_TERM_ID_LEN], struct wap_err *err);

/* Write DATA to the terminal's input.  TERM_NOT_FOUND for an unknown id (the
 * protocols map it to TerminalNotFound); FAILED when it has exited;
 * TIMEOUT when the terminal does not take it all within
 * WAP_TERM_SEND_S (however slowly it reads); cancelled with CANCEL. */
#define WAP_TERM_SEND_S 10
int wap_term_send(struct wap_terms *ts, const char *id, const char *data, size_t len,
		  const struct wap_cancel *cancel,
		  struct wap_err *err);

/* The buffered output (its last MAX_LINES lines when MAX_LINES > 0).
 * TRUNCATED: output has been dropped from the beginning.  ST may be NULL. */
int wap_term_output(struct wap_terms *ts, const char *id, size_t max_lines, char **out,
		    size_t *len, bool *truncated, struct wap_term_status *st,
		    struct wap_err *err);

/* Wait for the process to exit and its output to be drained.  TIMEOUT_MS
 * < 0 waits for ever; on timeout TIMEOUT.  The token CANCEL (may be NULL)
 * is polled: then wap_cancel_err(). */
int wap_term_wait(struct wap_terms *ts, const char *id, long timeout_ms,
		  const struct wap_cancel *cancel, struct wap_term_status *st,
		  struct wap_err *err);

/* Kill the process (its process group); the id stays valid. */
int wap_term_kill(struct wap_terms *ts, const char *id, struct wap_err *err);

/* Kill if running and forget the id. */
int wap_term_release(struct wap_terms *ts, const char *id, struct wap_err *err);

/* Make ID the active terminal. */
int wap_term_show(struct wap_terms *ts, const char *id, struct wap_err *err);

/* [{id, name, processId, exited, exitCode?}]: a new reference. */
json_t *wap_term_list(struct wap_terms *ts);

/* The active terminal as {terminalId, name}, or NULL when there is none. */
json_t *wap_term_active(struct wap_terms *ts);

size_t wap_term_count(struct wap_terms *ts);

/* The Agent Client Protocol terminal methods ("terminal/create",
 * "terminal/output", "terminal/wait_for_exit", "terminal/kill",
 * "terminal/release") with ACP params and results, for the stdio `acp`
 * profile.  terminal/create runs COMMAND with ARGS on pipes (stdout and
 * stderr together), env [{name,value}], cwd absolute inside the root,
 * outputByteLimit (default 1 MiB).  Policy: allowTerminalAccess and the
 *  command allow/deny lists.  Unknown terminal ids are TERM_NOT_FOUND with
 * details {"terminalId"}.  wait_for_exit blocks (CANCEL is polled). */
int wap_term_acp(struct wap_terms *ts, const char *method, const json_t *params,
		 const struct wap_cancel *cancel, json_t **res, struct wap_err *err);

/* BUF with every invalid UTF-8 byte replaced by U+FFFD (a malloc'd,
 * NUL-terminated string fit for JSON; NULL when out of memory). */
char *wap_term_utf8(const char *buf, size_t len, size_t *outlen);

/* Is ARGV (a program name or path and its arguments) allowed by the policy:
 * allowCommandExecution (FEATURE_DISABLED), allowedCommands /
 * restrictedCommands (COMMAND_RESTRICTED)?  wap_term_create checks the
 * command, or the shell, with it. */
int wap_term_check_command(const struct wap_ws *ws, char *const *argv, struct wap_err *err);

/* LINE sent to a shell terminal, checked as a shell command line against
 * the command lists (lib/proc/cmdpolicy.h; a first check: text sent in pieces
 * gets past it, the terminal's sandbox holds).  0 when no list is active. */
int wap_term_check_line(const struct wap_ws *ws, const char *line, struct wap_err *err);

#endif
