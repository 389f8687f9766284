/* serve/acp_impl.h - what the pieces of the Agent Control Protocol share
 * (acp.h is the door's API): the server and session structs, the error
 * codes, the log, the per-call context and its helpers onto the one road,
 * and the methods, one file per family, that acp.c's table dispatches to.
 * Not for other files. */
#ifndef WAP_ACP_IMPL_H
#define WAP_ACP_IMPL_H

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>

#include "lazy.h"
#include "acp.h"
#include "held.h"
#include "applet.h"
#include "jsonrpc.h"
#include "run.h"

#define ACP_MAX_MESSAGE		WAP_RPC_MAX_MESSAGE	/* unless the server says */
#define ACP_MAX_QUEUE		(8u << 20)	/* bytes of notifications queued per client */
#define ACP_MAX_PREAUTH		(64u << 10)	/* a message before auth.authenticate */
/* replies a client has not taken: past this (the server's message limit
 * more after auth.authenticate) the client is closed */
#define ACP_MAX_UNREAD		(256u << 10)
#define ACP_CLOSE_GRACE_S	2	/* a client being closed has this to read the rest */
#define ACP_AUTH_TIMEOUT_S	30	/* a client must authenticate within */
#define ACP_MAX_AUTH_FAILURES	5
#define ACP_MAX_CLIENTS		WAP_ACP_MAX_CLIENTS

/* the JSON-RPC layer's codes (lib/serve/jsonrpc.h), then the protocol's own */
#define RPC_PARSE	WAP_RPC_PARSE_ERROR
#define RPC_INVALID_REQ	WAP_RPC_INVALID_REQUEST
#define RPC_NO_METHOD	WAP_RPC_METHOD_NOT_FOUND
#define RPC_PARAMS	WAP_RPC_INVALID_PARAMS
#define RPC_INTERNAL	WAP_RPC_INTERNAL
#define RPC_UNAUTH	-32001
#define RPC_NOT_FOUND	-32002
#define RPC_TERM_NF	-32004
#define RPC_NO_EDITOR	-32005
#define RPC_CANCELLED	-32006
#define RPC_RATE	-32007
#define RPC_EXPIRED	-32008
#define RPC_DISABLED	-32009

struct wap_acp {
	const struct wap_ws *ws;
	struct wap_acp_opts o;
	char *token;
	char *token_file;
	bool rate_on;
	long rate;			/* requests per second */
	int loglevel;			/* logging.level: LOG_DEBUG .. LOG_ERROR */
	int logfd;			/* logging.logToFile: the file, else -1 */
	char *log_file;
	unsigned long nclients;		/* clients so far, to name them in the log */
	size_t max_message;		/* the server's message limit (--max-message) */
	/* on the one server (lib/serve/http.c), its loop thread */
	struct lws_context *ctx;
	int port;
	struct conn *conns;
	size_t nconns;
	/* what the server holds for all clients, both doors (held.h): the
	 * server's, given at wap_acp_attach */
	struct wap_held *held;
	lws_sorted_usec_list_t sul;
	volatile bool closing;		/* the context is being destroyed */
	bool draining;			/* stopping: calls under way finish, no new ones */
};

struct wap_acp_session {
	struct wap_acp *a;
	unsigned long num;		/* "client N" in the log */
	wap_acp_notify_fn notify;
	void *arg;
	char nonce[33];
	char session_id[37];
	bool authed;
	time_t auth_at;
	int failures;
	long rate_sec;
	long rate_count;
	struct wap_terms *terms;
	struct wap_watch *watch;
	struct acp_editor *editor;	/* the headless editor (acp_editor.c) */
	struct wap_cancel cancel;	/* the client went away: its calls' token */
};

/* ---------- the log and messages (acp.c) ---------- */

enum { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR, LOG_ALWAYS };

/* A line at LEVEL to the server's log and the log file (logging.*). */
void acp_log(struct wap_acp *a, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An error reply with the protocol's data (timestamp, errorType, DATA's
 * keys: DATA is stolen, may be NULL). */
json_t *acp_rpc_error(const json_t *id, int code, const char *msg, json_t *data);
/* A result reply; a NULL RES answers null. */
json_t *acp_rpc_result(const json_t *id, json_t *res);
#define notification wap_rpc_notification

/* ---------- one method call (acp.c) ---------- */

struct acp_ctx {
	struct wap_acp_session *s;
	struct wap_call call;
	struct wap_run run;	/* the one road: policy, approval, audit */
	const char *method;
	const json_t *params;
	int code;		/* set to override the JSON-RPC code of err */
};

static inline const struct wap_ws *ACP_WS(struct acp_ctx *c) { return c->s->a->ws; }

/* A required string parameter. */
int acp_need_str(struct acp_ctx *c, const char *key, const char **out, struct wap_err *err);
/* A required path parameter, root-relative (malloc'd). */
int acp_rel_path(struct acp_ctx *c, const char *key, char **rel, struct wap_err *err);
/* Run op NAME with REQ (stolen) on the one road. */
int acp_run_op(struct acp_ctx *c, const char *name, json_t *req, json_t **res, struct wap_err *err);
/* {"success": true} */
json_t *acp_success(void);
/* The stat op on REL (a symbolic link is described, not followed). */
int acp_stat_op(struct acp_ctx *c, const char *rel, json_t **st, struct wap_err *err);
/* The read op on REL, whole: its exact bytes as UTF-8 text (ENC
 * "utf-8"), or in base64; *RES is the op's result (acp_fs.c). */
int acp_read_whole(struct acp_ctx *c, const char *rel, const char *enc, json_t **res, struct wap_err *err);
/* An ISO 8601 time (the ops' lastModified) in ms since the epoch. */
long long acp_iso_to_ms(const char *s);
/* fs.writeFile / appendFile's body: {"success", "version"} (acp_fs.c). */
int acp_write_common(struct acp_ctx *c, bool append, json_t **res, struct wap_err *err);

/* ---------- the methods, by family ---------- */

/* fs.* (acp_fs.c) */
int acp_fs_readFile(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_fs_writeFile(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_fs_appendFile(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_fs_deleteFile(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_fs_deleteDirectory(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_fs_rename(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_fs_copy(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_fs_createDirectory(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_fs_listDirectory(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_fs_exists(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_fs_stat(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_fs_watchFiles(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_fs_unwatchFiles(struct acp_ctx *c, json_t **res, struct wap_err *err);

/* search.* (acp_search.c) */
int acp_search_findInFiles(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_search_findAndReplace(struct acp_ctx *c, json_t **res, struct wap_err *err);

/* git.* (acp_git.c) */
int acp_git_status(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_git_diff(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_git_log(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_git_stage(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_git_unstage(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_git_commit(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_git_checkout(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_git_branches(struct acp_ctx *c, json_t **res, struct wap_err *err);

/* state.* (acp_state.c) */
int acp_state_getWorkspace(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_state_getOpenDocuments(struct acp_ctx *c, json_t **res, struct wap_err *err);	/* acp_editor.c */
int acp_state_getVisibleEditors(struct acp_ctx *c, json_t **res, struct wap_err *err);	/* acp_editor.c */

/* editor.* (acp_editor.c) */
int acp_editor_getContent(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_setContent(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_insertText(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_replaceRange(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_deleteRange(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_applyEdits(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_getDocumentInfo(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_save(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_saveAll(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_openFile(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_closeFile(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_setSelection(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_revealLine(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_getSelection(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_getActiveFile(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_editor_getOpenFiles(struct acp_ctx *c, json_t **res, struct wap_err *err);
/* the per-connection editor state, freed with the session */
struct acp_editor;
void acp_editor_free(struct acp_editor *e);

/* command.* (acp_editor.c): wap's applets as commands */
int acp_command_list(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_command_execute(struct acp_ctx *c, json_t **res, struct wap_err *err);

/* terminal.* (acp_terminal.c) */
int acp_terminal_create(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_terminal_dispose(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_terminal_sendText(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_terminal_show(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_terminal_list(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_terminal_getActive(struct acp_ctx *c, json_t **res, struct wap_err *err);
int acp_terminal_getOutput(struct acp_ctx *c, json_t **res, struct wap_err *err);
#endif
