/* serve/mcp.h - the Model Context Protocol server core, independent of the
 * transport: lifecycle (initialize, version negotiation, ping), tools/list
 * (paginated) and tools/call over a profile (profiles.h), progress and
 * cancellation, client roots.  The acp profile's methods are served here
 * too (JSON-RPC methods instead of tools).
 *
 * A transport (stdio_rpc.c, http.c) reads messages, checks them with the
 * JSON-RPC core (jsonrpc.h) and hands each to wap_mcp_handle() on a
 * session; what that returns is the response to send.  Messages the server
 * sends on its own (notifications/progress, roots/list requests) go through
 * the SEND callback the transport gives.
 *
 * Thread-safety: a server is read-only once set up; a session may be used
 * by several threads at once (calls run on workers while the transport
 * handles notifications/cancelled).
 */
#ifndef WAP_MCP_H
#define WAP_MCP_H

#include <jansson.h>
#include <stdbool.h>

#include "audit.h"
#include "jsonrpc.h"
#include "profiles.h"
#include "ws.h"

#define WAP_MCP_LATEST "2025-11-25"
extern const char *const wap_mcp_versions[];	/* supported, oldest first, NULL-terminated */
bool wap_mcp_version_ok(const char *v);

struct wap_mcp_server {
	struct wap_ws *ws;			/* the workspace (borrowed) */
	const struct wap_profile *profile;
	struct wap_audit *audit;		/* may be NULL */
	struct wap_approver approver;		/* security.requireApproval */
	bool roots_from_client;			/* narrow the root to the client's roots */
	size_t page_size;			/* tools/list page; 0: 100 */
	const char *transport;			/* "stdio", "http": for the instructions */
};

struct wap_mcp_session;

/* the narrowed roots a session keeps with roots_from_client (each holds a
 * descriptor until the session ends: calls and terminals may still run
 * in one) */
#define WAP_MCP_MAX_ROOTS 16

/* Deliver MSG (a notification or a request to the client) to the peer. */
typedef void (*wap_mcp_send_fn)(void *arg, const json_t *msg);

/* A new session (refcount 1).  ID (may be NULL) is copied. */
struct wap_mcp_session *wap_mcp_session_new(struct wap_mcp_server *srv, const char *id);
void wap_mcp_session_ref(struct wap_mcp_session *s);
void wap_mcp_session_unref(struct wap_mcp_session *s);
const char *wap_mcp_session_id(const struct wap_mcp_session *s);
/* The negotiated protocol version, NULL before initialize. */
const char *wap_mcp_session_version(struct wap_mcp_session *s);
/* Mark every running call of the session cancelled (session ends). */
void wap_mcp_session_cancel_all(struct wap_mcp_session *s);

/* Handle one checked message M.  For a request, returns the response (a
 * new reference), or NULL when the request was cancelled (MCP: no reply).
 * Notifications and responses return NULL.  SEND/ARG carry what the server
 * sends while handling (progress); may be NULL. */
json_t *wap_mcp_handle(struct wap_mcp_session *s, const struct wap_rpc_msg *m,
		       wap_mcp_send_fn send, void *arg);
/* wap_mcp_handle with the reply appended to SB (one line of JSON, without
 * its newline) rather than returned: 1 if a reply was written, 0 if there
 * is none, or it cannot be written (not valid UTF-8, no memory: a door
 * drops such a reply).  A tools/call's reply is written without being
 * built as a value (wap_rpc_tool_reply): the stdio door's path. */
int wap_mcp_reply(struct wap_mcp_session *s, const struct wap_rpc_msg *m, wap_mcp_send_fn send,
		  void *arg, struct wap_sb *sb);

/* Does M take long enough to belong on a worker thread (tools/call and
 * the acp methods, but for the quick tools: read, stat)?  A transport that queues it calls wap_mcp_expect()
 * first, so a notifications/cancelled arriving before the call starts is
 * not lost. */
bool wap_mcp_slow(struct wap_mcp_session *s, const struct wap_rpc_msg *m);
void wap_mcp_expect(struct wap_mcp_session *s, const json_t *id);
/* Is M a tool call (tools/call, or a method of a profile's tool)?  A
 * transport runs a quick one where it was read only when no call of the
 * session is queued or running, so calls start in the order they came. */
bool wap_mcp_tool_call(const struct wap_mcp_session *s, const struct wap_rpc_msg *m);

/* Does M (a tools/call) ask for progress (params._meta.progressToken)? */
bool wap_mcp_wants_progress(const struct wap_rpc_msg *m);

/* Roots: a transport that can send requests to the client calls this once
 * the client said notifications/initialized (and on roots/list_changed);
 * it sends roots/list through SEND when the server was asked to follow the
 * client's roots and the client has the capability. */
void wap_mcp_request_roots(struct wap_mcp_session *s, wap_mcp_send_fn send, void *arg);
/* Should a transport without a standing channel to the client (HTTP) ask
 * for the roots now: the server follows the client's roots, the client has
 * the capability, and its roots are not known yet or changed since? */
bool wap_mcp_roots_due(struct wap_mcp_session *s);

#endif
