/* serve/acp.c - the Agent Control Protocol: sessions, authentication,
 * the method table and dispatch.  See acp.h.
 *
 * The methods are name and shape mappings onto the applets' ops (their
 * request keys as the option tables name them), each run on the one road
 * of lib/serve/run.h (argument check, policy, approval, the op, its audit line),
 * as every other door runs them.  Terminals and watchers are sessions, not ops: they keep their
 * code (term.h, watch.h) behind the same gate (wap_run_begin/done).
 * Methods that only make sense inside a real editor or debugger answer
 * FeatureDisabled (-32009) with the reason.  The methods live one file per
 * family (acp_fs.c, acp_search.c, acp_git.c, acp_state.c, acp_editor.c,
 * acp_terminal.c), the WebSocket server in acp_ws.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acp_impl.h"
#include "acp_lsp.h"
#include "config.h"
#include "file.h"
#include "policy.h"
#include "strbuf.h"
#include "text.h"
#include "token.h"
#include "term.h"
#include "watch.h"

/* ---------- JSON-RPC messages ---------- */

static const char *error_type(int code)
{
	switch (code) {
	case RPC_PARSE: case RPC_INVALID_REQ: case RPC_NO_METHOD: case RPC_UNAUTH:
	case RPC_RATE: case RPC_EXPIRED:
		return "protocol";
	case RPC_PARAMS: return "InvalidParams";
	case RPC_INTERNAL: return "InternalError";
	case RPC_NOT_FOUND: return "FileNotFound";
	case -32003: return "FileAccessDenied";
	case RPC_TERM_NF: return "TerminalNotFound";
	case RPC_NO_EDITOR: return "EditorNotActive";
	case RPC_CANCELLED: return "OperationCancelled";
	case RPC_DISABLED: return "FeatureDisabled";
	case -32010: return "PathRestricted";
	case -32011: return "CommandRestricted";
	}
	return "unknown";
}

/* ---------- the log (logging.level, logging.logToFile) ---------- */

static const char *const level_names[] = { "DEBUG", "INFO", "WARN", "ERROR", "INFO" };

/* A line at LEVEL: to the server's log (stderr) unless quiet, and with a
 * time and the level to the log file when there is one.  The listening
 * line is LOG_ALWAYS: scripts read the port from it. */
void acp_log(struct wap_acp *a, int level, const char *fmt, ...)
{
	char line[512], rec[600], when[32];
	struct timespec ts;
	va_list ap;
	int n;

	if (level < a->loglevel)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!a->o.quiet && a->o.log)
		a->o.log(line);
	if (a->logfd < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	wap_iso_time(&ts, when);
	n = snprintf(rec, sizeof(rec), "%s %s %s\n", when, level_names[level], line);
	if (n > (int)sizeof(rec) - 1) {
		n = sizeof(rec) - 1;
		rec[n - 1] = '\n';
	}
	/* one write() on an O_APPEND file: lines from threads never mix */
	if (write(a->logfd, rec, (size_t)n) < 0)
		return;
}

/* Messages are built by the one JSON-RPC layer (lib/serve/jsonrpc.c); the
 * protocol only adds its error data. */

/* {"jsonrpc","id","error":{code,message,data:{timestamp,errorType,...}}};
 * DATA (stolen, may be NULL) is merged into data. */
json_t *acp_rpc_error(const json_t *id, int code, const char *msg, json_t *data)
{
	struct timespec ts;
	char when[32];
	json_t *d = json_object();

	clock_gettime(CLOCK_REALTIME, &ts);
	wap_iso_time(&ts, when);
	json_object_set_new(d, "timestamp", json_string(when));
	json_object_set_new(d, "errorType", json_string(error_type(code)));
	if (data) {
		json_object_update_missing(d, data);
		json_decref(data);
	}
	return wap_rpc_error(id, code, msg, d);
}

/* a method without a result (a notification's) answers null */
json_t *acp_rpc_result(const json_t *id, json_t *res)
{
	return wap_rpc_result(id, res ? res : json_null());
}

static void send_challenge(struct wap_acp_session *s)
{
	struct wap_err err = { 0 };

	/* no randomness, no nonce: nobody can authenticate (fail closed) */
	if (wap_random_hex(s->nonce, 16, &err) < 0) {
		s->nonce[0] = 0;
		acp_log(s->a, LOG_ERROR, "ws: client %lu: no nonce: %s", s->num, err.msg);
		wap_err_release(&err);
	}
	s->notify(s->arg, notification("auth.challenge", json_pack("{s:s}", "nonce", s->nonce)));
}

struct wap_acp_session *wap_acp_session_new(struct wap_acp *a, wap_acp_notify_fn notify, void *arg)
{
	struct wap_acp_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->a = a;
	s->num = __atomic_add_fetch(&a->nclients, 1, __ATOMIC_RELAXED);
	s->notify = notify;
	s->arg = arg;
	send_challenge(s);
	return s;
}

void wap_acp_session_free(struct wap_acp_session *s)
{
	if (!s)
		return;
	wap_watch_free(s->watch);
	wap_terms_free(s->terms);
	acp_editor_free(s->editor);
	free(s);
}

/* ---------- method helpers ---------- */

int acp_need_str(struct acp_ctx *c, const char *key, const char **out, struct wap_err *err)
{
	int r = wap_req_str(c->params, key, out, err);

	if (r == 0)
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: %s", key);
	return r < 0 ? -1 : 0;
}

/* A required path parameter, root-relative (malloc'd). */
int acp_rel_path(struct acp_ctx *c, const char *key, char **rel, struct wap_err *err)
{
	*rel = NULL;
	if (wap_req_path(&c->call, c->params, key, NULL, rel, err) < 0)
		return -1;
	if (!*rel)
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: %s", key);
	return 0;
}

/* Run op NAME with REQ (stolen) on the one road (lib/serve/run.h): argument
 * check, policy and approval, the op, its audit line. */
int acp_run_op(struct acp_ctx *c, const char *name, json_t *req, json_t **res, struct wap_err *err)
{
	int r = wap_run_op(&c->run, name, req, res, err);

	json_decref(req);
	if (r == WAP_POLICY_UNAPPROVED)
		c->code = RPC_CANCELLED;
	return r ? -1 : 0;
}

json_t *acp_success(void)
{
	return json_pack("{s:b}", "success", 1);
}

/* The stat op on REL (a symbolic link is described, not followed). */
int acp_stat_op(struct acp_ctx *c, const char *rel, json_t **st, struct wap_err *err)
{
	return acp_run_op(c, "stat", json_pack("{s:s}", "path", rel), st, err);
}

/* state.* and editor.formatDocument/getCompletions: language servers
 * (lib/serve/acp_lsp.c) */
static int m_lsp(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	int r = wap_acp_lsp(&c->run, c->method, c->params, res, err);

	if (r == WAP_POLICY_UNAPPROVED)
		c->code = RPC_CANCELLED;
	return r ? -1 : 0;
}

/* ---------- the method table ---------- */

typedef int (*method_fn)(struct acp_ctx *c, json_t **res, struct wap_err *err);

struct method {
	const char *name;
	method_fn fn;
	const char *disabled;	/* why, for methods needing a real editor */
};

#define NO_DBG "needs a debugger (Debug Adapter Protocol), which wap does not provide"

static const struct method methods[] = {
	{ "editor.openFile", acp_editor_openFile, NULL },
	{ "editor.closeFile", acp_editor_closeFile, NULL },
	{ "editor.getContent", acp_editor_getContent, NULL },
	{ "editor.setContent", acp_editor_setContent, NULL },
	{ "editor.insertText", acp_editor_insertText, NULL },
	{ "editor.replaceRange", acp_editor_replaceRange, NULL },
	{ "editor.deleteRange", acp_editor_deleteRange, NULL },
	{ "editor.setSelection", acp_editor_setSelection, NULL },
	{ "editor.revealLine", acp_editor_revealLine, NULL },
	{ "editor.getSelection", acp_editor_getSelection, NULL },
	{ "editor.getActiveFile", acp_editor_getActiveFile, NULL },
	{ "editor.getOpenFiles", acp_editor_getOpenFiles, NULL },
	{ "editor.getDocumentInfo", acp_editor_getDocumentInfo, NULL },
	{ "editor.applyEdits", acp_editor_applyEdits, NULL },
	{ "editor.save", acp_editor_save, NULL },
	{ "editor.saveAll", acp_editor_saveAll, NULL },
	{ "editor.formatDocument", m_lsp, NULL },
	{ "editor.getCompletions", m_lsp, NULL },
	{ "fs.readFile", acp_fs_readFile, NULL },
	{ "fs.writeFile", acp_fs_writeFile, NULL },
	{ "fs.appendFile", acp_fs_appendFile, NULL },
	{ "fs.deleteFile", acp_fs_deleteFile, NULL },
	{ "fs.rename", acp_fs_rename, NULL },
	{ "fs.copy", acp_fs_copy, NULL },
	{ "fs.createDirectory", acp_fs_createDirectory, NULL },
	{ "fs.deleteDirectory", acp_fs_deleteDirectory, NULL },
	{ "fs.listDirectory", acp_fs_listDirectory, NULL },
	{ "fs.exists", acp_fs_exists, NULL },
	{ "fs.stat", acp_fs_stat, NULL },
	{ "fs.watchFiles", acp_fs_watchFiles, NULL },
	{ "fs.unwatchFiles", acp_fs_unwatchFiles, NULL },
	{ "terminal.create", acp_terminal_create, NULL },
	{ "terminal.dispose", acp_terminal_dispose, NULL },
	{ "terminal.sendText", acp_terminal_sendText, NULL },
	{ "terminal.show", acp_terminal_show, NULL },
	{ "terminal.list", acp_terminal_list, NULL },
	{ "terminal.getActive", acp_terminal_getActive, NULL },
	{ "terminal.getOutput", acp_terminal_getOutput, NULL },
	{ "command.execute", acp_command_execute, NULL },
	{ "command.list", acp_command_list, NULL },
	{ "state.getWorkspace", acp_state_getWorkspace, NULL },
	{ "state.getDiagnostics", m_lsp, NULL },
	{ "state.getSymbols", m_lsp, NULL },
	{ "state.findReferences", m_lsp, NULL },
	{ "state.goToDefinition", m_lsp, NULL },
	{ "state.getHover", m_lsp, NULL },
	{ "state.getCodeActions", m_lsp, NULL },
	{ "state.getOpenDocuments", acp_state_getOpenDocuments, NULL },
	{ "state.getVisibleEditors", acp_state_getVisibleEditors, NULL },
	{ "search.findInFiles", acp_search_findInFiles, NULL },
	{ "search.findAndReplace", acp_search_findAndReplace, NULL },
	{ "debug.startSession", NULL, NO_DBG },
	{ "debug.stopSession", NULL, NO_DBG },
	{ "debug.setBreakpoints", NULL, NO_DBG },
	{ "debug.removeBreakpoints", NULL, NO_DBG },
	{ "debug.getBreakpoints", NULL, NO_DBG },
	{ "debug.listSessions", NULL, NO_DBG },
	{ "git.status", acp_git_status, NULL },
	{ "git.diff", acp_git_diff, NULL },
	{ "git.log", acp_git_log, NULL },
	{ "git.stage", acp_git_stage, NULL },
	{ "git.unstage", acp_git_unstage, NULL },
	{ "git.commit", acp_git_commit, NULL },
	{ "git.checkout", acp_git_checkout, NULL },
	{ "git.branches", acp_git_branches, NULL },
	{ NULL, NULL, NULL }
};

/* ---------- dispatch ---------- */

/* Methods that run no applet op: sessions (terminals, watchers) and the
 * server's own state.  They pass the one road's gate under their own
 * name (policy by the table of lib/serve/policy.c, an audit line); every other
 * method runs its ops on the road, each audited there. */
static bool session_method(const char *method)
{
	static const char *const names[] = {
		"fs.watchFiles", "fs.unwatchFiles", "state.getWorkspace", "editor.saveAll",
		"editor.closeFile", "editor.getOpenFiles", "editor.getActiveFile", "editor.getSelection",
		"editor.setSelection", "editor.revealLine", "state.getOpenDocuments",
		"state.getVisibleEditors", "command.list", NULL
	};

	if (!strncmp(method, "terminal.", 9))
		return true;
	for (int i = 0; names[i]; i++)
		if (!strcmp(method, names[i]))
			return true;
	return false;
}

static json_t *err_reply(const json_t *id, struct acp_ctx *c, struct wap_err *err)
{
	int code = c->code ? c->code : wap_err_rpc(err->kind);
	json_t *data = json_object();

	if (code == RPC_NOT_FOUND && !strncmp(c->method, "fs.unwatchFiles", 15))
		code = RPC_PARAMS;
	json_object_set_new(data, "code", json_string(wap_err_code(err->kind)));
	json_object_set_new(data, "method", json_string(c->method));
	if (err->details)
		json_object_update_missing(data, err->details);
	if (c->params) {
		json_t *p = json_object_get(c->params, "path");
		if (json_is_string(p))
			json_object_set(data, "path", p);
	}
	return acp_rpc_error(id, code, err->msg, data);
}

static bool rate_ok(struct wap_acp_session *s)
{
	struct timespec ts;

	if (!s->a->rate_on || s->a->rate <= 0)
		return true;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (ts.tv_sec != s->rate_sec) {
		s->rate_sec = ts.tv_sec;
		s->rate_count = 0;
	}
	if (++s->rate_count == s->a->rate + 1)
		acp_log(s->a, LOG_WARN, "ws: client %lu: rate limited (over %ld requests a second)",
			 s->num, s->a->rate);
	return s->rate_count <= s->a->rate;
}

static json_t *authenticate(struct wap_acp_session *s, const json_t *id, const json_t *params, bool *close)
{
	const char *token = json_string_value(json_object_get(params, "token"));
	const char *nonce = json_string_value(json_object_get(params, "nonce"));
	json_t *res;

	if (!token || !nonce)
		return acp_rpc_error(id, RPC_PARAMS, "Missing parameter: token and nonce (strings)", NULL);
	/* Compare both, always, so timing says nothing about which failed. */
	bool nonce_ok = s->nonce[0] && wap_token_equal(s->nonce, nonce, strlen(nonce));
	bool token_ok = wap_token_equal(s->a->token, token, strlen(token));
	if (!nonce_ok || !token_ok) {
		res = json_pack("{s:b, s:s}", "authenticated", 0, "error", !nonce_ok ? "Invalid nonce" : "Invalid token");
		acp_log(s->a, LOG_WARN, "ws: client %lu: authentication failed (%s)", s->num,
			 !nonce_ok ? "invalid nonce" : "invalid token");
		if (++s->failures >= ACP_MAX_AUTH_FAILURES) {
			*close = true;
			acp_log(s->a, LOG_WARN, "ws: client %lu closed: %d failed authentications", s->num,
				 ACP_MAX_AUTH_FAILURES);
		}
		return acp_rpc_result(id, res);
	}
	s->nonce[0] = 0;	/* a nonce is good for one authentication */
	{
		struct wap_err err = { 0 };
		if (wap_random_uuid(s->session_id, &err) < 0) {
			json_t *r = acp_rpc_error(id, RPC_INTERNAL, err.msg, NULL);
			wap_err_release(&err);
			return r;
		}
	}
	__atomic_store_n(&s->auth_at, time(NULL), __ATOMIC_SEQ_CST);	/* before authed: expired() */
	__atomic_store_n(&s->authed, true, __ATOMIC_SEQ_CST);
	s->failures = 0;
	acp_log(s->a, LOG_INFO, "ws: client %lu authenticated, session %s", s->num, s->session_id);
	return acp_rpc_result(id, json_pack("{s:b, s:s}", "authenticated", 1, "sessionId", s->session_id));
}

/* One request (ID non-NULL) or notification (ID NULL), already checked
 * by the JSON-RPC core. */
static json_t *handle_call(struct wap_acp_session *s, const char *method, const json_t *params,
			   const json_t *id, bool *close)
{
	struct wap_acp *a = s->a;
	const struct method *m;
	struct acp_ctx c = { 0 };
	struct wap_err err = { 0 };
	json_t *res = NULL, *reply, *empty = NULL;
	char cat[32];
	struct timespec t0;
	struct wap_approver ap = { a->o.approver, a->o.approver_timeout_ms };
	double start;
	int rc;

	if (!rate_ok(s))
		return id ? acp_rpc_error(id, RPC_RATE, "Rate limited: too many requests (rateLimit.requestsPerSecond)",
				      json_pack("{s:I}", "limit", (json_int_t)a->rate)) : NULL;
	if (params && !json_is_object(params))
		return id ? acp_rpc_error(id, RPC_PARAMS, "Invalid params: params must be an object", NULL) : NULL;
	if (!strcmp(method, "auth.authenticate"))
		return id ? authenticate(s, id, params, close) : NULL;
	if (!s->authed)
		return id ? acp_rpc_error(id, RPC_UNAUTH,
			"Unauthorized: authenticate first (auth.authenticate with the token and the nonce of auth.challenge)",
			NULL) : NULL;
	if (a->o.session_ttl > 0 && time(NULL) - s->auth_at >= a->o.session_ttl) {
		acp_log(a, LOG_INFO, "ws: client %lu: session %s expired", s->num, s->session_id);
		__atomic_store_n(&s->authed, false, __ATOMIC_SEQ_CST);
		/* its terminals end with it: none streams to a connection that
		 * is no longer authenticated, none is there for the next
		 * session to drive */
		wap_terms_release_all(s->terms);
		send_challenge(s);
		return id ? acp_rpc_error(id, RPC_EXPIRED, "Session expired: authenticate again (a new auth.challenge was sent)",
				      json_pack("{s:I}", "sessionTtl", (json_int_t)a->o.session_ttl)) : NULL;
	}
	for (m = methods; m->name && strcmp(m->name, method); m++)
		;
	if (!m->name)
		return id ? acp_rpc_error(id, RPC_NO_METHOD, "Method not found", json_pack("{s:s}", "method", method)) : NULL;
	if (m->disabled) {
		char msg[300];
		snprintf(msg, sizeof(msg), "Feature disabled: %s %s", method, m->disabled);
		return id ? acp_rpc_error(id, RPC_DISABLED, msg, json_pack("{s:s}", "method", method)) : NULL;
	}
	c.s = s;
	c.method = method;
	c.params = params ? params : (empty = json_object());
	c.call.ws = a->ws;
	c.call.session = s->session_id;
	/* judged on the road by the method's category (editor.getContent is
	 * "editor", though it reads with the read op), as above */
	snprintf(cat, sizeof(cat), "%.*s", (int)strcspn(method, "."), method);
	c.call.category = cat;
	c.call.cancel = &s->cancel;
	c.run.call = &c.call;
	c.run.audit = a->o.audit;
	c.run.approver = &ap;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* its category on the road's terms, a refusal audited there */
	if (wap_run_feature(&c.run, method, c.params, &err)) {
		rc = -1;
	} else if (!session_method(method)) {
		rc = m->fn(&c, &res, &err);	/* its ops go the one road */
	} else {
		rc = wap_run_begin(&c.run, method, c.params, &start, &err);
		if (rc == WAP_POLICY_UNAPPROVED)
			c.code = RPC_CANCELLED;
		if (rc == 0) {
			rc = m->fn(&c, &res, &err);
			wap_run_done(&c.run, method, c.params, start, rc, &err);
		}
	}
	{
		struct timespec t1;
		double ms;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
		if (rc < 0)
			acp_log(a, err.kind == WAP_E_FAILED ? LOG_ERROR : LOG_DEBUG,
				 "ws: client %lu: %s failed in %.1f ms: %s: %s", s->num, method, ms,
				 wap_err_code(err.kind), err.msg);
		else
			acp_log(a, LOG_DEBUG, "ws: client %lu: %s in %.1f ms", s->num, method, ms);
	}
	if (rc < 0) {
		reply = id ? err_reply(id, &c, &err) : NULL;
		wap_err_release(&err);
		json_decref(empty);
		return reply;
	}
	json_decref(empty);
	if (!id) {
		json_decref(res);
		return NULL;
	}
	return acp_rpc_result(id, res);
}

/* With logging.level "debug" an error's data carries a "stack" (the spec:
 * "only when logLevel is debug"): C has no exception stack, so it is the
 * path the error took, from the method down to the error kind. */
static void add_stack(const struct wap_acp_session *s, json_t *reply, const char *method)
{
	json_t *e = json_object_get(reply, "error"), *d;
	char stack[700];

	if (s->a->loglevel != LOG_DEBUG || !json_is_object(e))
		return;
	d = json_object_get(e, "data");
	if (!json_is_object(d) || json_object_get(d, "stack"))
		return;
	snprintf(stack, sizeof(stack), "%s: %s\n    at %s (wap acp, client %lu%s%s)",
		 json_string_value(json_object_get(d, "errorType")),
		 json_string_value(json_object_get(e, "message")), method, s->num,
		 s->session_id[0] ? ", session " : "", s->session_id);
	json_object_set_new(d, "stack", json_string(stack));
}

static json_t *handle_one(struct wap_acp_session *s, const char *method, const json_t *params,
			  const json_t *id, bool *close)
{
	json_t *reply = handle_call(s, method, params, id, close);

	if (reply)
		add_stack(s, reply, method);
	return reply;
}

struct hargs {
	struct wap_acp_session *s;
	bool *close;
};

static json_t *rpc_handler(void *arg, const struct wap_rpc_msg *m)
{
	struct hargs *h = arg;

	if (m->kind != WAP_RPC_REQUEST && m->kind != WAP_RPC_NOTIFICATION)
		return NULL;
	return handle_one(h->s, m->method, m->params, m->kind == WAP_RPC_REQUEST ? m->id : NULL, h->close);
}

/* The core's own errors (parse, invalid request) get the ACP data too. */
static void decorate(json_t *reply)
{
	json_t *e = json_object_get(reply, "error"), *d, *v;
	size_t i;

	if (json_is_array(reply)) {
		json_array_foreach(reply, i, v)
			decorate(v);
		return;
	}
	if (!json_is_object(e))
		return;
	d = json_object_get(e, "data");
	if (!json_is_object(d)) {
		json_t *nd = json_object();
		if (d)
			json_object_set(nd, "detail", d);
		json_object_set_new(e, "data", nd);
		d = nd;
	}
	if (!json_object_get(d, "timestamp")) {
		struct timespec ts;
		char when[32];
		clock_gettime(CLOCK_REALTIME, &ts);
		wap_iso_time(&ts, when);
		json_object_set_new(d, "timestamp", json_string(when));
	}
	if (!json_object_get(d, "errorType"))
		json_object_set_new(d, "errorType",
			json_string(error_type((int)json_integer_value(json_object_get(e, "code")))));
}

json_t *wap_acp_handle(struct wap_acp_session *s, const char *text, size_t len, bool *close)
{
	struct wap_rpc_limits lim = { .max_message = s->a->max_message, .max_batch = 1000 };
	struct hargs h = { s, close };
	json_t *reply;

	*close = false;
	reply = wap_rpc_process(text, len, &lim, rpc_handler, &h);
	decorate(reply);
	/* the JSON-RPC core's own errors (parse, invalid request) */
	if (json_is_array(reply)) {
		size_t i;
		json_t *v;
		json_array_foreach(reply, i, v)
			add_stack(s, v, "(the message)");
	} else if (reply) {
		add_stack(s, reply, "(the message)");
	}
	return reply;
}

/* ---------- setup: token, config ---------- */

/* logging.level (debug, info, warn or error; default info) and
 * logging.logToFile (default false): the file is logging.file (a wap
 * extension), else wap-acp.log beside the default token file; 0600,
 * appended to. */
static int log_setup(struct wap_acp *a, struct wap_err *err)
{
	static const char *const names[] = { "debug", "info", "warn", "error" };
	const char *lv = wap_config_str(a->ws->config, "logging.level", "info");
	const char *file;
	int i;

	if (!lv)
		lv = "info";
	for (i = 0; i < 4 && strcasecmp(lv, names[i]); i++)
		;
	if (i == 4 && !strcasecmp(lv, "warning"))
		i = LOG_WARN;
	if (i == 4)
		return wap_err_set(err, WAP_E_INVALID, "Invalid logging.level '%s' (debug, info, warn or error)", lv);
	a->loglevel = i;
	if (!wap_config_bool(a->ws->config, "logging.logToFile", false))
		return 0;
	file = wap_config_str(a->ws->config, "logging.file", NULL);
	a->log_file = file && *file ? strdup(file) : wap_token_state_file("wap-acp.log");
	if (!a->log_file)
		return wap_err_oom(err);
	{
		/* as wap_open_record: no link, no FIFO planted at its name */
		FILE *f = wap_open_record(a->log_file, true);
		a->logfd = f ? fcntl(fileno(f), F_DUPFD_CLOEXEC, 0) : -1;
		if (f)
			fclose(f);
	}
	if (a->logfd < 0)
		return wap_err_set(err, WAP_E_FAILED, "Cannot open the log file %s: %s", a->log_file,
				   strerror(errno));
	return 0;
}

struct wap_acp *wap_acp_new(const struct wap_ws *ws, const struct wap_acp_opts *o, struct wap_err *err)
{
	struct wap_acp *a = calloc(1, sizeof(*a));
	const char *tok;

	if (!a) {
		wap_err_oom(err);
		return NULL;
	}
	a->ws = ws;
	a->o = *o;
	a->logfd = -1;
	a->max_message = ACP_MAX_MESSAGE;
	if (!a->o.host || !*a->o.host)
		a->o.host = "127.0.0.1";
	a->rate_on = wap_config_bool(ws->config, "rateLimit.enabled", true);
	a->rate = (long)wap_config_int(ws->config, "rateLimit.requestsPerSecond", 100);
	tok = wap_config_str(ws->config, "token", "");
	if (!tok || !*tok)
		tok = o->token;
	if (tok && *tok) {
		a->token = strdup(tok);
	} else {
		a->token = malloc(65);
		if (a->token && wap_token_random(a->token, err) < 0)
			goto fail;
	}
	if (o->token_file && *o->token_file)
		a->token_file = strdup(o->token_file);
	else
		a->token_file = wap_token_state_file("wap-acp.token");
	if (!a->token || !a->token_file) {
		wap_err_oom(err);
		goto fail;
	}
	if (log_setup(a, err) < 0)
		goto fail;
	if (wap_token_write(ws, a->token_file, a->token, err) < 0)
		goto fail;
	return a;
fail:
	wap_acp_free(a);
	return NULL;
}

void wap_acp_free(struct wap_acp *a)
{
	if (!a)
		return;
	if (a->token) {
		explicit_bzero(a->token, strlen(a->token));
		free(a->token);
	}
	free(a->token_file);
	free(a->log_file);
	if (a->logfd >= 0)
		close(a->logfd);
	free(a);
}

const struct wap_acp_opts *wap_acp_opts(const struct wap_acp *a)
{
	return &a->o;
}

int wap_acp_port(const struct wap_acp *a)
{
	return a->port;
}

const char *wap_acp_token(const struct wap_acp *a)
{
	return a->token;
}

const char *wap_acp_token_file(const struct wap_acp *a)
{
	return a->token_file;
}

