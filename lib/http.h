/* http.h - MCP Streamable HTTP (and /health) on libwebsockets.
 *
 * POST /mcp carries one JSON-RPC message (or a batch): requests are
 * answered with application/json, or with a text/event-stream when the
 * call asked for progress or the server asks the client for its roots
 * (--roots-from-client: roots/list is the stream's first event, the client
 * POSTs the answer, the call's response follows); notifications and
 * responses get 202.  The
 * session id is issued at initialize (Mcp-Session-Id) and required after
 * (400 without, 404 unknown); DELETE /mcp ends it; GET /mcp is 405.
 * Host and Origin are checked against an allow-list (403), a Bearer token
 * when configured (401), MCP-Protocol-Version (400).  Tool calls run on a
 * worker pool; the event loop never blocks on them, so /health and other
 * calls are answered meanwhile.
 */
#ifndef WAP_HTTP_H
#define WAP_HTTP_H

#include "err.h"
#include "jsonrpc.h"
#include "mcp.h"

struct wap_http_opts {
	const char *listen;		/* "HOST:PORT", "[::1]:PORT", ":PORT" */
	const char *token;		/* NULL: no authentication */
	char **allowed_hosts;		/* extra Host names (NULL-terminated; may be NULL) */
	char **allowed_origins;		/* extra origins or host names */
	int workers;			/* 0: 4 */
	struct wap_rpc_limits lim;
	int max_sessions;		/* 0: 1000 */
	int session_idle_s;		/* 0: 3600 */
	/* Told where the server listens once it does (PORT is the real one
	 * for port 0); may be NULL.  lib/ prints nothing itself. */
	void (*on_listen)(const char *host, int port, const char *profile);
	/* Warnings and errors of libwebsockets, one line each; may be NULL. */
	void (*log)(const char *line);
};

/* Serve until SIGINT/SIGTERM.  Returns 0, or -1 with err (cannot listen). */
int wap_http_serve(struct wap_mcp_server *srv, const struct wap_http_opts *o, struct wap_err *err);

/* Exposed for tests: is HOST (a Host header value, port included) allowed? */
bool wap_http_host_ok(const char *host, char **extra);
/* Is ORIGIN (scheme://host[:port]) allowed? */
bool wap_http_origin_ok(const char *origin, char **extra);

#endif
