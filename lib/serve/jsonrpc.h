/* serve/jsonrpc.h - the JSON-RPC 2.0 core shared by every server front (MCP over
 * stdio and HTTP, the Agent Control Protocol over WebSocket).
 *
 * It turns message text into checked messages and builds replies; it knows
 * nothing of methods.  A transport either drives the whole exchange with
 * wap_rpc_process() (parse, validate, call a handler per message, collect
 * the replies of a batch), or uses the pieces (wap_rpc_parse,
 * wap_rpc_check) when it must dispatch asynchronously.
 *
 * Ownership: functions returning json_t * return a new reference the
 * caller owns; arguments documented as "stolen" are consumed.  Nothing
 * here prints, exits or keeps global state, so it is thread-safe.
 */
#ifndef WAP_JSONRPC_H
#define WAP_JSONRPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "strbuf.h"

#define WAP_RPC_PARSE_ERROR	(-32700)
#define WAP_RPC_INVALID_REQUEST	(-32600)
#define WAP_RPC_METHOD_NOT_FOUND (-32601)
#define WAP_RPC_INVALID_PARAMS	(-32602)
#define WAP_RPC_INTERNAL	(-32603)

/* Default largest message accepted (bytes of JSON text). */
#define WAP_RPC_MAX_MESSAGE	(16u << 20)
/* Default largest batch. */
#define WAP_RPC_MAX_BATCH	100u
/* The most a batch's replies take (bytes of JSON text): past it the
 * batch's requests left are answered SIZE_LIMIT_EXCEEDED, not run (100
 * reads of 1 MiB in base64 made 280 MB a batch; fifth hostile review): 64
 * connections at once hold 512 MiB of batches at most.
 * The first reply is never refused: it is as big as it would be alone. */
#define WAP_RPC_MAX_BATCH_REPLY	(8u << 20)

struct wap_rpc_limits {
	size_t max_message;	/* 0: WAP_RPC_MAX_MESSAGE */
	size_t max_batch;	/* 0: WAP_RPC_MAX_BATCH */
	bool no_batches;	/* a batch is -32600 */
};

enum wap_rpc_kind {
	WAP_RPC_REQUEST,	/* method + id: must be answered */
	WAP_RPC_NOTIFICATION,	/* method, no id: never answered */
	WAP_RPC_RESPONSE,	/* result or error + id: a reply to us */
	WAP_RPC_INVALID,	/* not a JSON-RPC 2.0 message */
};

/* A checked message: borrowed pointers into the message object. */
struct wap_rpc_msg {
	enum wap_rpc_kind kind;
	const json_t *msg;	/* the whole object */
	const char *method;	/* requests and notifications */
	json_t *params;		/* object or array; NULL when absent */
	const json_t *id;	/* string or number; NULL for notifications */
	const json_t *result;	/* responses */
	const json_t *error;	/* responses */
	/* set by a door that runs a request where it read it (a quick call):
	 * the call sets *REQUEUE, sends nothing and ends when it will not run
	 * there (struct wap_call's not_quick); the door then queues it */
	bool *requeue;
};

/* Parse one message text (a single message or a batch).  Returns the value,
 * or NULL with *REPLY set to the error response to send: -32700 for text
 * that is not JSON (the message says where), -32600 for text over the size
 * limit.  Embedded NULs are refused. */
json_t *wap_rpc_parse(const char *buf, size_t len, const struct wap_rpc_limits *lim,
		      json_t **reply);

/* Classify one message (an element of a batch, or the whole).  On
 * WAP_RPC_INVALID *REPLY (if REPLY is non-NULL) is the -32600 error
 * response, with the message's id when one could be read. */
enum wap_rpc_kind wap_rpc_check(const json_t *msg, struct wap_rpc_msg *m, json_t **reply);

/* Replies.  ID is copied (NULL or absent gives "id": null). */
json_t *wap_rpc_result(const json_t *id, json_t *result /* stolen; NULL: {} */);
json_t *wap_rpc_error(const json_t *id, int code, const char *message,
		      json_t *data /* stolen; may be NULL */);
/* The error response for a WAP error: code from the error table
 * (wap_err_rpc), message the error's text, data the WAP error object. */
json_t *wap_rpc_error_wap(const json_t *id, const struct wap_err *e);
/* The door's own allocation failed before an op could say so: -32603
 * with the one out-of-memory message (wap_err_oom is the op's). */
#define WAP_RPC_OOM_MSG "Internal error: out of memory"
json_t *wap_rpc_oom(const json_t *id);
/* Outgoing messages. */
json_t *wap_rpc_notification(const char *method, json_t *params /* stolen; may be NULL */);
json_t *wap_rpc_request(const json_t *id, const char *method, json_t *params /* stolen */);

/* The reply to ID of an MCP tools/call that ran: {"content": [{"type":
 * "text", "text": TEXT}], "isError": IS_ERROR, "structuredContent": RES}
 * (no structuredContent if RES is NULL; a TEXT that is not valid UTF-8
 * is replaced by a sentence saying so).  wap_rpc_tool_result builds it as
 * a value (RES not stolen); wap_rpc_tool_reply appends to SB the bytes
 * wap_json_dump writes for that value, without building it: 0, or -1 and
 * SB as it was when it cannot be written (what wap_json_dump refuses). */
json_t *wap_rpc_tool_result(const json_t *id, const char *text, bool is_error, json_t *res);
int wap_rpc_tool_reply(struct wap_sb *sb, const json_t *id, const char *text, bool is_error,
		       const json_t *res);

/* One line of compact JSON without a trailing newline (jansson escapes
 * control characters, so the text never holds a raw newline).  Malloc'd;
 * NULL on allocation failure. */
char *wap_rpc_dump(const json_t *msg, size_t *len);

/* A method handler for wap_rpc_process: M is a request or a notification.
 * Return the response for a request (wap_rpc_result / wap_rpc_error...);
 * for a notification return NULL (anything returned is dropped).  A
 * handler that returns NULL for a request makes an internal error reply.
 * Responses (M->kind == WAP_RPC_RESPONSE) are handed to the handler too,
 * which returns NULL. */
typedef json_t *(*wap_rpc_handler)(void *arg, const struct wap_rpc_msg *m);

/* Parse TEXT, check it, call HANDLER for each message (batches in order)
 * and return what to send back: a response, an array of responses for a
 * batch, or NULL when nothing is to be sent (notifications only). */
json_t *wap_rpc_process(const char *buf, size_t len, const struct wap_rpc_limits *lim,
			wap_rpc_handler handler, void *arg);

/* Process one already parsed value (object or batch array) likewise. */
json_t *wap_rpc_process_value(const json_t *v, const struct wap_rpc_limits *lim,
			      wap_rpc_handler handler, void *arg);

#endif
