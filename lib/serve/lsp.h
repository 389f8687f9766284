/* serve/lsp.h - a Language Server Protocol client: the language servers
 * behind `wap sym` and the Agent Control Protocol's state.* methods.
 *
 * A server is a child run through lib/proc (wap_proc_run, on a thread of
 * its own for as long as the server lives) in the exec sandbox: Landlock
 * lets it read the workspace root (never write it: wap applies the edits
 * a server proposes itself), a private temp dir (also its $HOME) and the
 * system directories plus the install prefix it was found under; no
 * network (Landlock net + seccomp); its processes live in a PID namespace
 * that dies with the thread that started it, so no server outlives wap.
 * Messages are JSON-RPC with LSP's `Content-Length:` framing on the
 * server's stdin and stdout.
 *
 * The pool keeps one server per language per workspace root.  Outside
 * `wap serve` (the CLI) a server is stopped when its last user releases
 * it; after wap_lsp_pool_warm() (wap serve) it stays up until it has been
 * idle for the given time, and wap_lsp_pool_stop() stops them all.  A
 * server that died is started again by the next call that needs it.
 *
 * Documents are synced from disk: wap_lsp_sync() reads the file beneath
 * the root (read policy), sends didOpen the first time and didChange (the
 * whole text) when its bytes changed since, so what wap itself wrote is
 * what the server sees at the next call.
 *
 * Positions: LSP counts lines from 0 and characters in UTF-16 code units;
 * people (and wap's results) count lines from 1 and columns in characters
 * (code points) from 1.  wap_lsp_offset (edit.h), wap_lsp_u16 and
 * wap_lsp_column convert through the document's text.
 *
 * Everything here is thread-safe, never prints or exits, and returns -1
 * with a struct wap_err: FEATURE_DISABLED when no server is configured or
 * found for a language, TIMEOUT when a request outlives its limit (the
 * server is sent $/cancelRequest), EXECUTION_FAILED when the server fails
 * or dies.
 */
#ifndef WAP_LSP_H
#define WAP_LSP_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "cancel.h"
#include "err.h"
#include "ws.h"

struct wap_lsp;

/* The language of REL by its extension: the server key ("c",
 * "typescript", ...) and the LSP languageId ("c", "cpp", "typescript",
 * ...), from the config's lsp.servers then the built-in table.  NULL when
 * no server handles the extension. */
const char *wap_lsp_language(const struct wap_ws *ws, const char *rel, const char **lang_id);

/* The table of servers as JSON ([{language, extensions, command, found}]),
 * built-in rows overridden by the config's lsp.servers.  A new reference. */
json_t *wap_lsp_servers(const struct wap_ws *ws);

/* The server for REL's language on WS's root: a warm one, or one started
 * and initialized now (waiting at most the initialize timeout).  The
 * caller releases it with wap_lsp_release.  FEATURE_DISABLED (with the
 * reason) when there is none to run. */
int wap_lsp_acquire(const struct wap_ws *ws, const char *rel, const struct wap_cancel *cancelled,
		    struct wap_lsp **srv, struct wap_err *err);
void wap_lsp_release(struct wap_lsp *srv);

/* The server's name ("clangd") and the capabilities it announced
 * (borrowed). */
const char *wap_lsp_name(const struct wap_lsp *srv);
const json_t *wap_lsp_caps(const struct wap_lsp *srv);

/* Send request METHOD with PARAMS (stolen) and wait for its answer (a new
 * reference in *RESULT; json null is a result) at most TIMEOUT_MS;
 * CANCELLED is polled.  An error answer is INVALID_ARGUMENT for the
 * server's InvalidParams/RequestFailed, else EXECUTION_FAILED, with the
 * server's message. */
int wap_lsp_request(struct wap_lsp *srv, const char *method, json_t *params, long timeout_ms,
		    const struct wap_cancel *cancelled, json_t **result, struct wap_err *err);

/* Bring the server's copy of REL in step with the file on disk.  *TEXT
 * (may be NULL) receives the file's bytes (malloc'd, NUL-terminated) and
 * *LEN their length; *URI (may be NULL) its file:// URI (malloc'd). */
int wap_lsp_sync(struct wap_lsp *srv, const struct wap_ws *ws, const char *rel, char **text,
		 size_t *len, char **uri, struct wap_err *err);

/* Ask for REL's analysis afresh (closed and opened again, a new version),
 * as when a file it includes changed on disk: what diagnostics wait for.
 * REL must have been synced. */
int wap_lsp_recheck(struct wap_lsp *srv, const struct wap_ws *ws, const char *rel,
		    struct wap_err *err);

/* The diagnostics the server published for URI since its last sync (a
 * new reference, an array), waiting at most WAIT_MS for them; *FRESH says
 * whether they came after that sync (else the array is what was known). */
json_t *wap_lsp_diagnostics(struct wap_lsp *srv, const char *uri, long wait_ms,
			    const struct wap_cancel *cancelled, bool *fresh);

/* Every diagnostic the running servers of ROOT have published: an object
 * uri -> [Diagnostic] (a new reference). */
json_t *wap_lsp_pool_diagnostics(const char *root);

/* file:// URI of REL beneath WS's root (malloc'd), and back: the
 * root-relative path of URI (malloc'd), NULL when it is not beneath the
 * root. */
char *wap_lsp_uri(const struct wap_ws *ws, const char *rel);
char *wap_lsp_rel(const struct wap_ws *ws, const char *uri);

/* (The byte offset of an LSP position is edit.h's wap_lsp_offset.) */
/* The LSP character (UTF-16 units) of the byte OFF of its line, and the
 * column in code points from 1 of that position.  LINE_START is where
 * the line begins. */
long wap_lsp_u16(const char *text, size_t line_start, size_t off);
/* Column in code points (from 1) of LSP position (LINE, U16). */
long wap_lsp_column(const char *text, size_t len, long line, long u16);

/* A line index of TEXT (borrowed) for many conversions: lines end at
 * "\n", "\r\n" or a lone "\r", as LSP (and edit.h) count them. */
struct wap_lsp_lines {
	const char *text;
	size_t len, n;
	size_t *start;		/* n + 1 entries */
};
int wap_lsp_lines_init(struct wap_lsp_lines *li, const char *text, size_t len);
void wap_lsp_lines_release(struct wap_lsp_lines *li);
/* Byte offset of (LINE, U16), clamped to the line / the text. */
size_t wap_lsp_lines_offset(const struct wap_lsp_lines *li, long line, long u16);
/* Column in code points (from 1) of (LINE, U16). */
long wap_lsp_lines_column(const struct wap_lsp_lines *li, long line, long u16);

/* Keep servers warm (wap serve): one idle for IDLE_MS is stopped. */
void wap_lsp_pool_warm(long idle_ms);
/* Stop every server (shutdown, exit, then kill what is left).  Also
 * what wap serve does before it ends. */
void wap_lsp_pool_stop(void);
/* LSP's framing: is there a whole message at BUF (LEN bytes)?  1 with its
 * header's length (through the blank line) in *HL and its body's in *CLEN;
 * 0 when more bytes are needed; -1 when it is not LSP (no or a bad
 * Content-Length, a body over 256 MiB, a header over 8 KiB). */
int wap_lsp_frame(const char *buf, size_t len, size_t *hl, size_t *clen);

/* How many servers are running (tests, wap info). */
int wap_lsp_pool_count(void);

#endif
