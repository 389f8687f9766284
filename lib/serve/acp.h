/* serve/acp.h - the Agent Control Protocol: JSON-RPC 2.0 over WebSocket
 * (libwebsockets), `category.method` names, challenge/token auth,
 * batches, rate limits, terminals, file watching.
 *
 * Two layers:
 *  - the protocol core (struct wap_acp_session): one client's state and
 *    wap_acp_handle(), a message in, a reply out; transport-free, so tests
 *    and other transports can drive it;
 *  - its WebSocket connections (acp_ws.c): the one server of
 *    lib/serve/http.c (one libwebsockets context, one Host/Origin check,
 *    one message limit, one drain on SIGTERM, the same token) hands it
 *    every WebSocket event, on the --ws port and on the --http port.
 *
 * Each client's requests are handled in order on a thread of its own (a
 * slow call holds up no other client); terminals and watchers have
 * threads of their own and push notifications (terminal.output,
 * terminal.closed, file.changed) into the client's queue.  When the client
 * goes away, its terminals are killed and its watchers stopped; when the
 * server stops, every client gets server.shutdown first.
 */
#ifndef WAP_ACP_H
#define WAP_ACP_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>

#include "err.h"
#include "ws.h"

struct wap_audit;

#define WAP_ACP_PORT 19876
#define WAP_ACP_MAX_CLIENTS 256	/* connections at once (a thread each) */

struct wap_acp_opts {
	const char *host;		/* NULL: 127.0.0.1 */
	int port;			/* 0: pick a free port (see wap_acp_port) */
	const char *token_file;		/* where the token is written (0600);
					 * NULL: $XDG_RUNTIME_DIR/wap-acp.token,
					 * else ~/.cache/wap-acp.token */
	long session_ttl;		/* seconds; 0: sessions never expire */
	const char *approver;		/* shell command; exit 0 approves */
	long approver_timeout_ms;	/* 0: 60000 */
	bool quiet;			/* no log lines */
	void (*log)(const char *line);	/* a log line (no newline); NULL: none */
	const char *token;		/* used when the config has no "token";
					 * NULL: a random one */
	struct wap_audit *audit;	/* one line per method call; may be NULL */
};

struct wap_acp;
struct wap_acp_session;

/* Read the ACP settings from WS's config (token, allowedOrigins,
 * rateLimit.*, security.*), make or take the token and write the token
 * file (never inside the root).  No socket yet.  WS is borrowed and must outlive the server. */
struct wap_acp *wap_acp_new(const struct wap_ws *ws, const struct wap_acp_opts *o,
			    struct wap_err *err);
void wap_acp_free(struct wap_acp *a);

/* Its options (host and port to listen on). */
const struct wap_acp_opts *wap_acp_opts(const struct wap_acp *a);
/* The port it is served on (once listening). */
int wap_acp_port(const struct wap_acp *a);
/* The token (owned by A; for tests and the token file only, never log it). */
const char *wap_acp_token(const struct wap_acp *a);
/* Where the token was written. */
const char *wap_acp_token_file(const struct wap_acp *a);

/* --- on the one server (lib/serve/http.c, its loop thread) --- */

struct lws;
struct lws_context;
struct wap_held;

/* The server listens on CTX; MAX_MESSAGE is its message limit (0: 16 MiB);
 * HELD what it holds for all its clients (held.h), HTTP's too. */
void wap_acp_attach(struct wap_acp *a, struct lws_context *ctx, size_t max_message, struct wap_held *held);
/* Say where (the log line scripts read the port from). */
void wap_acp_listening(struct wap_acp *a, const char *host, int port);
/* A WebSocket event of an upgraded connection (USER: a pointer's worth of
 * per-connection storage, NULL at first).  As a libwebsockets callback. */
int wap_acp_callback(struct wap_acp *a, struct lws *wsi, int reason, void **user, void *in, size_t len);
/* Log an upgrade the server refused (WHY). */
void wap_acp_refused(struct wap_acp *a, const char *why);
/* SIGTERM: every new request is refused from now on. */
void wap_acp_drain(struct wap_acp *a);
/* No call under way or waiting? */
bool wap_acp_idle(struct wap_acp *a);
/* server.shutdown to every client, each closed once it is written. */
void wap_acp_shutdown(struct wap_acp *a);
/* Clients connected. */
size_t wap_acp_clients(const struct wap_acp *a);
/* Before the context is destroyed: stop every client's worker. */
void wap_acp_detach(struct wap_acp *a);

/* --- the protocol core --- */

/* NOTIFY is called with each server-initiated message (a new reference it
 * takes), from any thread. */
typedef void (*wap_acp_notify_fn)(void *arg, json_t *msg);

/* A new client session; sends auth.challenge through NOTIFY. */
struct wap_acp_session *wap_acp_session_new(struct wap_acp *a, wap_acp_notify_fn notify,
					    void *arg);
/* Kills its terminals, stops its watchers. */
void wap_acp_session_free(struct wap_acp_session *s);

/* Handle one WebSocket text message (a request, notification or batch).
 * Returns the reply (a new reference) or NULL when there is none.
 * *CLOSE is set when the client should be disconnected after the reply
 * (too many failed authentications). */
json_t *wap_acp_handle(struct wap_acp_session *s, const char *text, size_t len, bool *close);

#endif
