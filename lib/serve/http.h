/* serve/http.h - MCP Streamable HTTP (and /health) on libwebsockets.
 *
 * POST /mcp carries one JSON-RPC message (or a batch): requests are
 * answered with application/json, or with a text/event-stream when the
 * call asked for progress or the server asks the client for its roots
 * (--roots-from-client: roots/list is the stream's first event, the client
 * POSTs the answer, the call's response follows); notifications and
 * responses get 202.  The
 * session id is issued at initialize (Mcp-Session-Id) and required after
 * (400 without, 404 unknown); DELETE /mcp ends it; GET /mcp is 405.
 * Host and Origin are checked against an allow-list (403), the Bearer
 * token (401), MCP-Protocol-Version (400).  Every refusal is decided from
 * the headers, before a byte of the body is read: Host, Origin, token, a
 * Content-Length over the message limit (413), a chunked body (411); the
 * connection is then closed.  Connections are bounded (new ones are
 * dropped at accept past the limit), and so is the time a body may take
 * to arrive.  Tool calls run on a worker pool; the event loop never
 * blocks on them, so /health and other calls are answered meanwhile.
 * On SIGTERM/SIGINT the server drains: calls under way finish (for
 * drain_s at most), new requests and /health get 503, then it returns.
 */
#ifndef WAP_HTTP_H
#define WAP_HTTP_H

#include "err.h"
#include "jsonrpc.h"
#include "mcp.h"

struct wap_acp;

struct wap_http_opts {
	const char *listen;		/* "HOST:PORT", "[::1]:PORT", ":PORT"; NULL:
					 * no MCP, only the WebSocket (acp) */
	struct wap_acp *acp;		/* the Agent Control Protocol (--ws), or
					 * NULL: on its own port (its opts' host
					 * and port), or on LISTEN's when they are
					 * the same, and on LISTEN's port too */
	const char *token;		/* Bearer token; NULL only with no_auth */
	bool no_auth;			/* serve without a token: refused unless
					 * listening on a loopback address */
	char **allowed_hosts;		/* extra Host names (NULL-terminated; may be NULL) */
	char **allowed_origins;		/* extra origins or host names */
	int workers;			/* 0: 4 */
	struct wap_rpc_limits lim;
	int max_sessions;		/* 0: 1000 */
	int session_idle_s;		/* 0: 3600 */
	int max_conns;			/* connections at once; 0: 64 */
	int body_timeout_s;		/* a request body must be in within; 0: 30 */
	int drain_s;			/* calls under way get this long at a stop; 0: 10 */
	/* Told where the server listens once it does (PORT is the real one
	 * for port 0), before any request; may be NULL.  lib/ prints nothing
	 * itself.  Returning -1 (with err set) stops the server. */
	int (*on_listen)(void *arg, const char *host, int port, const char *profile,
			 struct wap_err *err);
	void *arg;
	/* Warnings and errors of libwebsockets, one line each; may be NULL. */
	void (*log)(const char *line);
};

/* The one HTTP/WebSocket server: one libwebsockets context, a vhost per
 * port, one Host/Origin check and one message limit (lim.max_message) for
 * MCP requests and WebSocket upgrades and messages alike, the same token
 * (Bearer for HTTP, auth.authenticate for the WebSocket), and one drain.
 * Serve until SIGINT/SIGTERM, then drain both doors at once.  Returns 0,
 * or -1 with err (cannot listen; no token and no no_auth, or no_auth off
 * loopback). */
int wap_http_serve(struct wap_mcp_server *srv, const struct wap_http_opts *o, struct wap_err *err);

/* Exposed for tests: is HOST (a Host header value, port included) allowed? */
bool wap_http_host_ok(const char *host, char **extra);
/* Is ORIGIN (scheme://host[:port]) allowed?  Loopback origins always;
 * EXTRA names more (an origin, a bare host name on any scheme and port,
 * or "*" for any).  The WebSocket server uses it too. */
bool wap_http_origin_ok(const char *origin, char **extra);
/* Is HOST (an address to listen on) a loopback one? */
bool wap_http_loopback(const char *host);

#endif
