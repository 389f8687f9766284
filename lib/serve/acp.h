/* serve/acp.h - the Agent Control Protocol: JSON-RPC 2.0 over WebSocket
 * (libwebsockets), `category.method` names, challenge/token auth,
 * batches, rate limits, terminals, file watching.
 *
 * Two layers:
 *  - the protocol core (struct wap_acp_session): one client's state and
 *    wap_acp_handle(), a message in, a reply out; transport-free, so tests
 *    and other transports can drive it;
 *  - the WebSocket server (wap_acp_run / wap_acp_start): a libwebsockets
 *    context of its own, in the calling thread or in a thread beside the
 *    MCP HTTP server.
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
	char **allowed_origins;		/* beside the config's allowedOrigins and
					 * loopback ones (NULL-terminated; may be NULL) */
};

struct wap_acp;
struct wap_acp_session;

/* Read the ACP settings from WS's config (token, allowedOrigins,
 * rateLimit.*, security.*), make or take the token and write the token
 * file (never inside the root).  No socket yet.  WS is borrowed and must outlive the server. */
struct wap_acp *wap_acp_new(const struct wap_ws *ws, const struct wap_acp_opts *o,
			    struct wap_err *err);
void wap_acp_free(struct wap_acp *a);

/* Listen and serve until *STOP becomes non-zero (a signal handler may set
 * it); then send server.shutdown {reason: "..."} to every client, close
 * them and return.  Returns 0, or -1 with err when it cannot listen. */
int wap_acp_run(struct wap_acp *a, volatile sig_atomic_t *stop, struct wap_err *err);

/* The same in a new thread: returns once listening (or failed). */
int wap_acp_start(struct wap_acp *a, struct wap_err *err);
/* Stop the thread started by wap_acp_start (server.shutdown first). */
void wap_acp_stop(struct wap_acp *a);

/* The port listened on (after run/start). */
int wap_acp_port(const struct wap_acp *a);
/* The token (owned by A; for tests and the token file only, never log it). */
const char *wap_acp_token(const struct wap_acp *a);
/* Where the token was written. */
const char *wap_acp_token_file(const struct wap_acp *a);

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
