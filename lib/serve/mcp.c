/* serve/mcp.c - the MCP server core: lifecycle, tools over a profile, progress,
 * cancellation, client roots. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "json.h"
#include "mcp.h"
#include "strbuf.h"
#include "term.h"
#include "version.h"

const char *const wap_mcp_versions[] = {
	"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", NULL
};

bool wap_mcp_version_ok(const char *v)
{
	for (int i = 0; v && wap_mcp_versions[i]; i++)
		if (!strcmp(wap_mcp_versions[i], v))
			return true;
	return false;
}

struct inflight {
	json_t *id;
	struct wap_cancel cancel;	/* the call's token */
	bool running;
	struct inflight *next;
};

struct wsnode {
	struct wap_ws ws;
	struct wsnode *next;
};

#define MAX_ROOTS WAP_MCP_MAX_ROOTS

struct wap_mcp_session {
	struct wap_mcp_server *srv;
	char *id;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int refs;
	char version[16];
	bool client_roots;		/* the client has the roots capability */
	bool roots_pending;		/* a roots/list is on its way */
	bool roots_stale;		/* the client's roots are to be asked (again) */
	struct timespec roots_asked;
	int roots_seq;
	json_t *roots_id;		/* id of the roots/list we sent */
	const struct wap_ws *ws;	/* the workspace calls use now */
	struct wsnode *narrowed;	/* every narrowed workspace made (owned) */
	struct inflight *calls;		/* oldest first: queued calls start in order */
	struct inflight **calls_tail;
	struct wap_terms *terms;	/* acp profile: terminal/... (lib/proc/term.c) */
	int log_level;			/* logging/setLevel: index in log_levels;
					 * -1: not set, no notifications/message */
	bool ended;			/* wap_mcp_session_cancel_all: no call starts */
};

/* MCP logging levels, least severe first (RFC 5424's, as MCP names them) */
static const char *const log_levels[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", NULL
};
enum { LOG_DEBUG, LOG_INFO, LOG_NOTICE, LOG_WARNING, LOG_ERROR };

/* The server's own message to the client (notifications/message), if the
 * client asked for this LEVEL or a less severe one with logging/setLevel. */
static void mcp_log(struct wap_mcp_session *s, wap_mcp_send_fn send, void *arg, int level,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void mcp_log(struct wap_mcp_session *s, wap_mcp_send_fn send, void *arg, int level,
		    const char *fmt, ...)
{
	char msg[1024];
	json_t *note, *data;
	va_list ap;
	int want;

	pthread_mutex_lock(&s->mu);
	want = s->log_level;
	pthread_mutex_unlock(&s->mu);
	if (!send || want < 0 || level < want)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	data = json_string(msg);
	note = wap_rpc_notification("notifications/message", json_pack("{s:s, s:s, s:o}",
		"level", log_levels[level], "logger", "wap",
		"data", data ? data : json_string("(message not valid UTF-8)")));
	send(arg, note);
	json_decref(note);
}

struct wap_mcp_session *wap_mcp_session_new(struct wap_mcp_server *srv, const char *id)
{
	struct wap_mcp_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->srv = srv;
	s->id = id ? strdup(id) : NULL;
	s->refs = 1;
	s->ws = srv->ws;
	s->calls_tail = &s->calls;
	s->log_level = -1;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	return s;
}

void wap_mcp_session_ref(struct wap_mcp_session *s)
{
	pthread_mutex_lock(&s->mu);
	s->refs++;
	pthread_mutex_unlock(&s->mu);
}

void wap_mcp_session_unref(struct wap_mcp_session *s)
{
	int left;

	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	left = --s->refs;
	pthread_mutex_unlock(&s->mu);
	if (left)
		return;
	wap_terms_free(s->terms);	/* kills them; before the workspaces go */
	while (s->narrowed) {
		struct wsnode *n = s->narrowed;
		s->narrowed = n->next;
		wap_ws_release(&n->ws);
		free(n);
	}
	while (s->calls) {
		struct inflight *c = s->calls;
		s->calls = c->next;
		json_decref(c->id);
		free(c);
	}
	json_decref(s->roots_id);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s->id);
	free(s);
}

const char *wap_mcp_session_id(const struct wap_mcp_session *s)
{
	return s->id;
}

const char *wap_mcp_session_version(struct wap_mcp_session *s)
{
	const char *v;

	pthread_mutex_lock(&s->mu);
	v = s->version[0] ? s->version : NULL;
	pthread_mutex_unlock(&s->mu);
	return v;
}

void wap_mcp_session_cancel_all(struct wap_mcp_session *s)
{
	pthread_mutex_lock(&s->mu);
	s->ended = true;
	for (struct inflight *c = s->calls; c; c = c->next)
		wap_cancel_set(&c->cancel, 1);
	pthread_mutex_unlock(&s->mu);
}

/* ---- in-flight calls ---- */

static struct inflight *find_call(struct wap_mcp_session *s, const json_t *id, bool idle_only)
{
	for (struct inflight *c = s->calls; c; c = c->next)
		if (json_equal(c->id, (json_t *)id) && (!idle_only || !c->running))
			return c;
	return NULL;
}

void wap_mcp_expect(struct wap_mcp_session *s, const json_t *id)
{
	struct inflight *c = calloc(1, sizeof(*c));

	if (!c)
		return;
	c->id = json_incref((json_t *)id);	/* ids are never changed: shared */
	pthread_mutex_lock(&s->mu);
	*s->calls_tail = c;
	s->calls_tail = &c->next;
	pthread_mutex_unlock(&s->mu);
}

static struct inflight *start_call(struct wap_mcp_session *s, const json_t *id)
{
	struct inflight *c;

	pthread_mutex_lock(&s->mu);
	c = find_call(s, id, true);
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (c) {
			c->id = json_incref((json_t *)id);
			*s->calls_tail = c;
			s->calls_tail = &c->next;
		}
	}
	if (c)
		c->running = true;
	/* the session is over (DELETE, end of input, the server stopping): a
	 * call not yet started, the rest of a batch, does not run */
	if (c && s->ended)
		wap_cancel_set(&c->cancel, 1);
	pthread_mutex_unlock(&s->mu);
	return c;
}

static void end_call(struct wap_mcp_session *s, struct inflight *c)
{
	pthread_mutex_lock(&s->mu);
	for (struct inflight **p = &s->calls; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			if (s->calls_tail == &c->next)
				s->calls_tail = p;
			break;
		}
	}
	pthread_mutex_unlock(&s->mu);
	json_decref(c->id);
	free(c);
}

static void cancel_call(struct wap_mcp_session *s, const json_t *id)
{
	pthread_mutex_lock(&s->mu);
	for (struct inflight *c = s->calls; c; c = c->next)
		if (json_equal(c->id, (json_t *)id))
			wap_cancel_set(&c->cancel, 1);
	pthread_mutex_unlock(&s->mu);
}

/* ---- progress ---- */

struct progress {
	wap_mcp_send_fn send;
	void *arg;
	const json_t *token;
	double last;
	bool any;		/* something was sent */
	bool from_op;		/* the op reports its own progress */
	bool done;		/* the call is over: the heartbeat stops */
	const char *op;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void emit_progress(struct progress *p, double done, double total, const char *msg)
{
	json_t *params;

	if (p->any && done <= p->last)	/* progress must increase */
		return;
	p->any = true;
	p->last = done;
	params = json_pack("{s:O, s:f}", "progressToken", p->token, "progress", done);
	if (total > 0)
		json_object_set_new(params, "total", json_real(total));
	if (msg)
		json_object_set_new(params, "message", json_string(msg));
	{
		json_t *n = wap_rpc_notification("notifications/progress", params);
		p->send(p->arg, n);
		json_decref(n);
	}
}

/* the op's own progress (grep's files searched, exec's output...) */
static void progress_cb(void *arg, double done, double total, const char *msg)
{
	struct progress *p = arg;

	pthread_mutex_lock(&p->mu);
	if (!p->from_op) {	/* from now on the op's numbers, not seconds */
		p->from_op = true;
		p->any = false;
	}
	emit_progress(p, done, total, msg);
	pthread_mutex_unlock(&p->mu);
}

/* Ops that do not report progress still show they are alive: one
 * notification a second, the seconds elapsed, while the call runs. */
static void *heartbeat(void *arg)
{
	struct progress *p = arg;
	struct timespec until;
	int secs = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	pthread_mutex_lock(&p->mu);
	while (!p->done) {
		until.tv_sec += 1;
		if (pthread_cond_timedwait(&p->cv, &p->mu, &until) == ETIMEDOUT && !p->done && !p->from_op) {
			char msg[96];
			secs++;
			snprintf(msg, sizeof(msg), "%s running for %d s", p->op, secs);
			emit_progress(p, secs, 0, msg);
		}
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static const json_t *progress_token(const struct wap_rpc_msg *m)
{
	json_t *t = json_object_get(json_object_get(m->params, "_meta"), "progressToken");

	return json_is_string(t) || json_is_integer(t) ? t : NULL;
}

bool wap_mcp_wants_progress(const struct wap_rpc_msg *m)
{
	return m->method && !strcmp(m->method, "tools/call") && progress_token(m);
}

/* ---- roots ---- */

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* file:///a%20b -> /a b (malloc'd), NULL if not a local file URI */
static char *file_uri_path(const char *uri)
{
	const char *p;
	char *out, *o;

	if (strncmp(uri, "file://", 7))
		return NULL;
	p = uri + 7;
	if (!strncmp(p, "localhost/", 10))
		p += 9;
	if (*p != '/')
		return NULL;
	out = o = malloc(strlen(p) + 1);
	if (!out)
		return NULL;
	for (; *p; p++) {
		if (*p == '%' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
			*o++ = (char)(hexval(p[1]) * 16 + hexval(p[2]));
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	*o = 0;
	if (strlen(out) != (size_t)(o - out)) {	/* %00 */
		free(out);
		return NULL;
	}
	return out;
}

static char **strv_dup(char **v)
{
	char **out = NULL;

	for (size_t i = 0; v && v[i]; i++)
		wap_strv_push(&out, v[i]);
	return out;
}

/* A workspace for directory PATH beneath the server's root, with the
 * server's policy and limits.  The new root is opened beneath the old one
 * by the kernel, so a root the client names can only narrow. */
static int narrow_ws(const struct wap_ws *base, const char *path, struct wap_ws *ws,
		     struct wap_err *err)
{
	char *rel = NULL, *real = NULL;
	int fd;

	memset(ws, 0, sizeof(*ws));
	ws->rootfd = -1;
	if (wap_ws_rel(base, path, strlen(path), &rel, err))
		return -1;
	fd = wap_ws_open(base, rel, O_PATH | O_DIRECTORY, 0, WAP_ACC_READ, err);
	free(rel);
	if (fd < 0)
		return -1;
	real = wap_ws_fd_rel(base, fd);
	if (!real) {
		close(fd);
		return wap_err_set(err, WAP_E_ACCESS, "Access denied: %s is outside the workspace root", path);
	}
	/* never a root in .git or .wap: the sandbox keeps ROOT/.git and
	 * ROOT/.wap read-only, and a command rooted inside them would write
	 * hooks and config there */
	if (wap_ws_protected(base, real)) {
		wap_err_set(err, WAP_E_RESTRICTED, "Path restricted: %s is in %s, which cannot be a root",
			    path, wap_ws_protected(base, real));
		free(real);
		close(fd);
		return -1;
	}
	ws->rootfd = fd;
	ws->root = wap_ws_abs(base, real);
	/* the policy stays the configured root's: restrictedPaths, .git and
	 * the config are judged on the path from there, never from the
	 * narrowed root */
	if (strcmp(real, ".") || base->anchor) {
		struct wap_sb sb = WAP_SB_INIT;
		if (base->anchor)
			wap_sb_adds(&sb, base->anchor);
		if (base->anchor && strcmp(real, "."))
			wap_sb_addc(&sb, '/');
		if (strcmp(real, "."))
			wap_sb_adds(&sb, real);
		ws->anchor = wap_sb_detach(&sb);
		if (!ws->anchor) {
			free(real);
			wap_ws_release(ws);
			return wap_err_oom(err);
		}
	}
	free(real);
	ws->policy_rels = strv_dup(base->policy_rels);
	ws->rootlen = ws->root ? strlen(ws->root) : 0;
	ws->confined = true;
	ws->lim = base->lim;
	ws->pol.read_only = base->pol.read_only;
	ws->pol.allow_fs = base->pol.allow_fs;
	ws->pol.allow_terminal = base->pol.allow_terminal;
	ws->pol.allow_exec = base->pol.allow_exec;
	ws->pol.require_approval = base->pol.require_approval;
	ws->pol.sandbox = base->pol.sandbox;
	ws->pol.restricted_paths = strv_dup(base->pol.restricted_paths);
	for (size_t i = 0; ws->pol.restricted_paths && ws->pol.restricted_paths[i]; i++)
		if (wap_globset_add(&ws->pol.restricted, ws->pol.restricted_paths[i], WAP_GLOB_BASENAME, err)) {
			wap_ws_release(ws);
			return -1;
		}
	ws->pol.restricted_cmds = strv_dup(base->pol.restricted_cmds);
	ws->pol.allowed_cmds = strv_dup(base->pol.allowed_cmds);
	ws->pol.allowed_categories = strv_dup(base->pol.allowed_categories);
	ws->config = base->config ? json_incref(base->config) : json_object();
	if (!ws->root) {
		wap_ws_release(ws);
		return wap_err_oom(err);
	}
	return 0;
}

static void apply_roots(struct wap_mcp_session *s, const json_t *result, wap_mcp_send_fn send,
			void *arg)
{
	json_t *roots = json_object_get(result, "roots"), *r;
	size_t i;

	json_array_foreach(roots, i, r) {
		char *path = file_uri_path(json_string_value(json_object_get(r, "uri")) ?
					   json_string_value(json_object_get(r, "uri")) : "");
		struct wsnode *n;
		struct wap_err err = { 0 };

		if (!path)
			continue;
		n = calloc(1, sizeof(*n));
		if (n && !narrow_ws(s->srv->ws, path, &n->ws, &err)) {
			struct wsnode *o;
			int kept = 0;
			pthread_mutex_lock(&s->mu);
			/* a root made before is used again (a client that
			 * answers every roots/list alike held a new
			 * descriptor each time); past MAX_ROOTS kept, a new
			 * one is not used: a call may still run in any */
			for (o = s->narrowed; o && strcmp(o->ws.root, n->ws.root); o = o->next)
				kept++;
			if (o || kept < MAX_ROOTS) {
				if (!o) {
					n->next = s->narrowed;
					s->narrowed = o = n;
					n = NULL;
				}
				s->ws = &o->ws;
			}
			pthread_mutex_unlock(&s->mu);
			if (n) {
				if (!o)
					mcp_log(s, send, arg, LOG_WARNING, "roots: %s is not used as the root: "
						"this session has had %d roots already", n->ws.root, MAX_ROOTS);
				wap_ws_release(&n->ws);
				free(n);
			}
			free(path);
			return;	/* the first root inside the workspace wins */
		}
		mcp_log(s, send, arg, LOG_WARNING, "roots: %s is not used as the root: %s",
			json_string_value(json_object_get(r, "uri")), err.msg);
		free(n);
		free(path);
		wap_err_release(&err);
	}
	if (json_array_size(roots))
		mcp_log(s, send, arg, LOG_WARNING, "roots: no root of the client is inside the "
			"workspace; calls stay at %s", s->srv->ws->root);
}

void wap_mcp_request_roots(struct wap_mcp_session *s, wap_mcp_send_fn send, void *arg)
{
	char id[48];
	json_t *jid, *req;

	if (!s->srv->roots_from_client || !send)
		return;
	pthread_mutex_lock(&s->mu);
	if (!s->client_roots) {
		pthread_mutex_unlock(&s->mu);
		return;
	}
	snprintf(id, sizeof(id), "wap-roots-%d", ++s->roots_seq);
	jid = json_string(id);
	json_decref(s->roots_id);
	s->roots_id = json_incref(jid);
	s->roots_pending = true;
	s->roots_stale = false;
	clock_gettime(CLOCK_MONOTONIC, &s->roots_asked);
	pthread_mutex_unlock(&s->mu);
	req = wap_rpc_request(jid, "roots/list", NULL);
	send(arg, req);
	json_decref(req);
	json_decref(jid);
}

bool wap_mcp_roots_due(struct wap_mcp_session *s)
{
	bool due;

	pthread_mutex_lock(&s->mu);
	due = s->srv->roots_from_client && s->client_roots && s->roots_stale;
	pthread_mutex_unlock(&s->mu);
	return due;
}

/* a call made while the client is answering roots/list waits (a little)
 * for the answer, so it runs in the narrowed root.  A client that lets
 * the 2 s pass is not waited for again (a late answer still applies). */
static const struct wap_ws *current_ws(struct wap_mcp_session *s)
{
	const struct wap_ws *ws;
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	pthread_mutex_lock(&s->mu);
	while (s->roots_pending)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &until) == ETIMEDOUT) {
			s->roots_pending = false;
			break;
		}
	ws = s->ws;
	pthread_mutex_unlock(&s->mu);
	return ws;
}

static void handle_response(struct wap_mcp_session *s, const struct wap_rpc_msg *m,
			    wap_mcp_send_fn send, void *arg)
{
	bool ours;

	pthread_mutex_lock(&s->mu);
	ours = s->roots_id && json_equal(s->roots_id, (json_t *)m->id);
	pthread_mutex_unlock(&s->mu);
	if (!ours)
		return;
	if (m->result)
		apply_roots(s, m->result, send, arg);
	else
		mcp_log(s, send, arg, LOG_WARNING, "roots/list failed: %s",
			json_string_value(json_object_get(m->error, "message")) ?
			json_string_value(json_object_get(m->error, "message")) : "no result");
	pthread_mutex_lock(&s->mu);
	s->roots_pending = false;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* ---- methods ---- */

static json_t *invalid_params(const struct wap_rpc_msg *m, const char *fmt, const char *arg)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, arg ? arg : "");
	return wap_rpc_error(m->id, WAP_RPC_INVALID_PARAMS, msg, NULL);
}

static const char instructions[] =
	"wap: tools to explore, read, write, edit and search the files of one workspace, run "
	"commands in it and use git. Paths are relative to the workspace root. Results are "
	"structured; limits are reported (isTruncated, totals) with how to narrow a request. "
	"Reads return a version; pass it as expected_version to a write or edit so a file "
	"changed meanwhile is not overwritten.";

static json_t *initialize(struct wap_mcp_session *s, const struct wap_rpc_msg *m)
{
	json_t *pv = json_object_get(m->params, "protocolVersion");
	json_t *caps = json_object_get(m->params, "capabilities"), *res;
	const struct wap_profile *p = s->srv->profile;
	const char *v;

	if (!json_is_object(m->params) || !json_is_string(pv))
		return invalid_params(m, "Invalid params: initialize needs \"protocolVersion\" (a string)%s", NULL);
	v = wap_mcp_version_ok(json_string_value(pv)) ? json_string_value(pv) : WAP_MCP_LATEST;
	pthread_mutex_lock(&s->mu);
	snprintf(s->version, sizeof(s->version), "%s", v);
	s->client_roots = json_is_object(json_object_get(caps, "roots"));
	s->roots_stale = s->client_roots;
	pthread_mutex_unlock(&s->mu);
	res = json_pack("{s:s, s:{s:{s:b}, s:{}, s:{}, s:{}}, s:{s:s, s:s, s:s}}",
		"protocolVersion", v,
		"capabilities", "tools", "listChanged", 0, "logging", "resources", "completions",
		"serverInfo", "name", p->server_name ? p->server_name : "wap",
		"title", "wap workspace tools",
		"version", p->server_version ? p->server_version : WAP_VERSION);
	if (p->server_name)	/* exactly the document's serverInfo */
		json_object_del(json_object_get(res, "serverInfo"), "title");
	if (p->all_applets) {
		json_object_set_new(res, "instructions", json_string(instructions));
	} else if (p->instructions) {
		if (*p->instructions)
			json_object_set_new(res, "instructions", json_string(p->instructions));
	} else {
		/* the profile's own tools, never wap's */
		size_t n;
		const struct wap_ptool **tools = wap_profile_tools(p, &n);
		struct wap_sb sb = WAP_SB_INIT;

		wap_sb_addf(&sb, "wap serving %s. Tools:", p->summary);
		for (size_t i = 0; i < n; i++)
			wap_sb_addf(&sb, "%s %s", i ? "," : "", tools[i]->name);
		wap_sb_adds(&sb, ". Paths are relative to the workspace root (absolute paths inside it "
			    "work too); nothing outside the root can be reached.");
		free(tools);
		if (sb.buf)
			json_object_set_new(res, "instructions", json_string(sb.buf));
		wap_sb_release(&sb);
	}
	return wap_rpc_result(m->id, res);
}

static json_t *set_level(struct wap_mcp_session *s, const struct wap_rpc_msg *m)
{
	const char *want = json_string_value(json_object_get(m->params, "level"));
	int i;

	for (i = 0; want && log_levels[i]; i++)
		if (!strcmp(log_levels[i], want))
			break;
	if (!want || !log_levels[i])
		return invalid_params(m, "Invalid params: level must be one of debug, info, notice, "
				      "warning, error, critical, alert, emergency%s", NULL);
	pthread_mutex_lock(&s->mu);
	s->log_level = i;
	pthread_mutex_unlock(&s->mu);
	return wap_rpc_result(m->id, json_object());
}

/* ---- resources: the workspace's files as file:// resources ---- */

static void uri_add(struct wap_sb *sb, const char *p)
{
	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (isalnum(c) || strchr("/-._~", c))
			wap_sb_addc(sb, (char)c);
		else
			wap_sb_addf(sb, "%%%02X", c);
	}
}

static void run_ctx(struct wap_mcp_session *s, struct wap_call *call, struct wap_run *run)
{
	memset(call, 0, sizeof(*call));
	call->ws = current_ws(s);
	call->session = s->id;
	run->call = call;
	run->audit = s->srv->audit;
	run->approver = &s->srv->approver;
}

/* resources/list: the files under the root in path order (default
 * exclusions and ignore files honoured), a page at a time */
/* The cursor of a paged list: the decimal index the previous page ended
 * at (absent or null: 0).  -1 when it is no index up to MAX. */
static int list_cursor(const struct wap_rpc_msg *m, unsigned long long max, size_t *start)
{
	json_t *cursor = json_object_get(m->params, "cursor");
	const char *c = json_string_value(cursor);
	unsigned long long v;
	char *end;

	*start = 0;
	if (!cursor || json_is_null(cursor))
		return 0;
	errno = 0;
	v = c ? strtoull(c, &end, 10) : 0;
	if (!c || !*c || *end || errno || c[0] == '-' || v > max)
		return -1;
	*start = v;
	return 0;
}

static json_t *resources_list(struct wap_mcp_session *s, const struct wap_rpc_msg *m)
{
	size_t start = 0, page = s->srv->page_size ? s->srv->page_size : 100, i;
	json_t *req, *res = NULL, *list, *f, *out;
	struct inflight *c;
	struct wap_call call;
	struct wap_run run;
	struct wap_err err = { 0 };

	if (list_cursor(m, 10000000, &start))
		return invalid_params(m, "Invalid params: unknown cursor%s", NULL);
	if (!(c = start_call(s, m->id)))	/* cancellable, on a worker (wap_mcp_slow) */
		return wap_rpc_oom(m->id);
	if (wap_cancel_is_set(&c->cancel)) {
		end_call(s, c);
		return NULL;
	}
	run_ctx(s, &call, &run);
	call.cancel = &c->cancel;
	req = json_pack("{s:s, s:s, s:s, s:I}", "pattern", "**/*", "type", "f", "sort", "path",
			"max_results", (json_int_t)(start + page + 1));
	if (wap_run_op(&run, "glob", req, &res, &err)) {
		out = wap_cancel_is_set(&c->cancel) ? NULL : wap_rpc_error_wap(m->id, &err);
		goto done;
	}
	list = json_array();
	json_array_foreach(json_object_get(res, "files"), i, f) {
		const char *rel = json_string_value(json_object_get(f, "path"));
		struct wap_sb uri = WAP_SB_INIT;

		if (i < start || !rel)
			continue;
		if (i >= start + page)
			break;
		wap_sb_adds(&uri, "file://");
		uri_add(&uri, call.ws->root);
		wap_sb_addc(&uri, '/');
		uri_add(&uri, rel);
		if (uri.buf)
			json_array_append_new(list, json_pack("{s:s, s:s?}", "uri", uri.buf, "name", rel));
		wap_sb_release(&uri);
	}
	out = json_pack("{s:o}", "resources", list);
	if (json_array_size(json_object_get(res, "files")) > start + page) {
		char next[32];
		snprintf(next, sizeof(next), "%zu", start + page);
		json_object_set_new(out, "nextCursor", json_string(next));
	}
	out = wap_rpc_result(m->id, out);
done:
	end_call(s, c);
	json_decref(req);
	json_decref(res);
	wap_err_release(&err);
	return out;
}

/* resources/read of a file:// URI beneath the root: the whole text, or
 * an error (never a part: over limits.maxFileSize is SIZE_LIMIT_EXCEEDED) */
static json_t *resources_read(struct wap_mcp_session *s, const struct wap_rpc_msg *m)
{
	const char *uri = json_string_value(json_object_get(m->params, "uri"));
	char *path = uri ? file_uri_path(uri) : NULL;
	json_t *req, *res = NULL, *out;
	struct inflight *c;
	struct wap_call call;
	struct wap_run run;
	struct wap_err err = { 0 };

	if (!uri)
		return invalid_params(m, "Invalid params: resources/read needs \"uri\" (a string)%s", NULL);
	if (!path)
		return wap_rpc_error(m->id, -32002, "Resource not found: only file:// URIs of the workspace are served",
				     json_pack("{s:s}", "uri", uri));
	if (!(c = start_call(s, m->id)) || wap_cancel_is_set(&c->cancel)) {
		free(path);
		if (c)
			end_call(s, c);
		return c ? NULL : wap_rpc_oom(m->id);
	}
	run_ctx(s, &call, &run);
	call.cancel = &c->cancel;
	req = json_pack("{s:s, s:b}", "path", path, "whole", 1);
	free(path);
	if (wap_run_op(&run, "read", req, &res, &err)) {
		out = wap_cancel_is_set(&c->cancel) ? NULL : wap_rpc_error_wap(m->id, &err);
	} else if (json_object_get(res, "entries") || json_is_true(json_object_get(res, "binary"))) {
		out = wap_rpc_error(m->id, WAP_RPC_INVALID_PARAMS,
				    json_object_get(res, "entries") ? "Not a file: the resource is a directory"
								     : "Binary file: only text resources are served",
				    json_pack("{s:s}", "uri", uri));
	} else {
		out = wap_rpc_result(m->id, json_pack("{s:[{s:s, s:s, s:O}]}", "contents", "uri", uri,
			"mimeType", "text/plain", "text", json_object_get(res, "content")));
	}
	end_call(s, c);
	json_decref(req);
	json_decref(res);
	wap_err_release(&err);
	return out;
}

/* completion/complete: wap has no prompts, and its one resource form
 * (file:// URIs) needs no template argument: nothing to complete */
static json_t *complete(struct wap_mcp_session *s, const struct wap_rpc_msg *m)
{
	json_t *ref = json_object_get(m->params, "ref");

	(void)s;
	if (!json_is_object(ref) || !json_is_object(json_object_get(m->params, "argument")))
		return invalid_params(m, "Invalid params: completion/complete needs \"ref\" and \"argument\"%s", NULL);
	return wap_rpc_result(m->id, json_pack("{s:{s:[], s:i, s:b}}", "completion", "values", "total", 0,
					       "hasMore", 0));
}

static json_t *tools_list(struct wap_mcp_session *s, const struct wap_rpc_msg *m)
{
	size_t n, start = 0, page = s->srv->page_size ? s->srv->page_size : 100;
	const struct wap_ptool **tools = wap_profile_tools(s->srv->profile, &n);
	json_t *list, *res;

	if (list_cursor(m, n, &start)) {
		free(tools);
		return invalid_params(m, "Invalid params: unknown cursor%s", NULL);
	}
	list = json_array();
	for (size_t i = start; i < n && i < start + page; i++)
		json_array_append_new(list, wap_ptool_json(tools[i]));
	res = json_pack("{s:o}", "tools", list);
	if (start + page < n) {
		char next[32];
		snprintf(next, sizeof(next), "%zu", start + page);
		json_object_set_new(res, "nextCursor", json_string(next));
	}
	free(tools);
	return wap_rpc_result(m->id, res);
}

/* Run a profile tool for a request; returns the response, or NULL when
 * the request was cancelled.  AS_TOOL: MCP tools/call result shape;
 * otherwise (acp) the result itself or a JSON-RPC error. */
static json_t *run_tool(struct wap_mcp_session *s, const struct wap_rpc_msg *m,
			struct inflight *c, const struct wap_ptool *t, const json_t *args,
			bool as_tool, wap_mcp_send_fn send, void *arg, struct wap_sb *raw,
			bool *wrote)
{
	struct progress prog = { 0 };
	struct wap_call call = { 0 };
	struct wap_run run = { &call, s->srv->audit, &s->srv->approver };
	struct wap_err err = { 0 };
	json_t *res = NULL, *out;
	char *text = NULL;
	pthread_t hb;
	bool hb_on = false;
	int rc;

	if (wap_cancel_is_set(&c->cancel)) {
		end_call(s, c);
		return NULL;
	}
	call.ws = current_ws(s);
	call.cancel = &c->cancel;
	call.session = s->id;
	call.quick = m->requeue != NULL;
	if (send && as_tool && progress_token(m)) {
		prog.send = send;
		prog.arg = arg;
		prog.token = progress_token(m);
		prog.op = t->name;
		pthread_mutex_init(&prog.mu, NULL);
		pthread_cond_init(&prog.cv, NULL);
		call.progress = progress_cb;
		call.arg = &prog;
		hb_on = !pthread_create(&hb, NULL, heartbeat, &prog);
	}
	rc = wap_ptool_run(&run, t, args, &res, &text, &err);
	if (hb_on) {
		pthread_mutex_lock(&prog.mu);
		prog.done = true;
		pthread_cond_signal(&prog.cv);
		pthread_mutex_unlock(&prog.mu);
		pthread_join(hb, NULL);
	}
	if (call.not_quick && m->requeue) {
		*m->requeue = true;	/* the door runs it again, on a worker */
		out = NULL;
	} else if (wap_cancel_is_set(&c->cancel)) {
		out = NULL;
	} else if (!as_tool) {
		out = rc ? wap_rpc_error_wap(m->id, &err) : wap_rpc_result(m->id, json_incref(res));
	} else if (rc < 0) {
		json_t *e = wap_err_json(&err);
		char *etext = json_dumps(e, JSON_COMPACT);
		out = wap_rpc_result(m->id, json_pack("{s:[{s:s, s:s}], s:b}",
			"content", "type", "text", "text", etext ? etext : err.msg, "isError", 1));
		free(etext);
		json_decref(e);
	} else if (raw) {
		/* the door takes the reply as bytes: written once, no tree */
		out = NULL;
		*wrote = !wap_rpc_tool_reply(raw, m->id, text, rc == 1, res);
	} else {
		out = wap_rpc_tool_result(m->id, text, rc == 1, res);
	}
	if (call.progress) {
		pthread_mutex_destroy(&prog.mu);
		pthread_cond_destroy(&prog.cv);
	}
	end_call(s, c);
	json_decref(res);
	free(text);
	wap_err_release(&err);
	return out;
}

static json_t *tools_call(struct wap_mcp_session *s, const struct wap_rpc_msg *m,
			  wap_mcp_send_fn send, void *arg, struct wap_sb *raw, bool *wrote)
{
	json_t *name = json_object_get(m->params, "name");
	json_t *args = json_object_get(m->params, "arguments"), *empty = NULL, *out;
	const struct wap_ptool *t;
	struct inflight *c = start_call(s, m->id);	/* takes over an expected entry */

	if (!c)
		return wap_rpc_oom(m->id);
	if (!json_is_object(m->params) || !json_is_string(name))
		out = invalid_params(m, "Invalid params: tools/call needs \"name\" (a string)%s", NULL);
	else if (!(t = wap_profile_tool(s->srv->profile, json_string_value(name))) || s->srv->profile->methods)
		out = invalid_params(m, "Unknown tool: %s", json_string_value(name));
	else if (args && !json_is_null(args) && !json_is_object(args))
		out = invalid_params(m, "Invalid params: \"arguments\" must be an object%s", NULL);
	else {
		if (!args || json_is_null(args))
			args = empty = json_object();
		out = run_tool(s, m, c, t, args, true, send, arg, raw, wrote);	/* ends the call */
		json_decref(empty);
		return out;
	}
	end_call(s, c);
	return out;
}

/* The Agent Client Protocol terminal/... methods (acp profile), served by
 * lib/proc/term.c; the session owns its terminals and kills them when it ends. */
static bool acp_terminal_method(const struct wap_profile *p, const char *method)
{
	return p->methods && !strcmp(p->name, "acp") && !strncmp(method, "terminal/", 9);
}

static json_t *acp_terminal(struct wap_mcp_session *s, const struct wap_rpc_msg *m)
{
	struct inflight *c = start_call(s, m->id);
	struct wap_err err = { 0 };
	struct wap_terms *ts;
	json_t *res = NULL, *out, *empty = NULL;
	const json_t *params;
	struct wap_call call = { 0 };
	struct wap_run run = { &call, s->srv->audit, &s->srv->approver };
	double start;
	int rc;

	if (!c)
		return wap_rpc_oom(m->id);
	if (wap_cancel_is_set(&c->cancel)) {
		end_call(s, c);
		return NULL;
	}
	const struct wap_ws *ws = current_ws(s);	/* takes s->mu itself */
	params = m->params ? m->params : (empty = json_object());
	call.ws = ws;
	call.session = s->id;
	call.cancel = &c->cancel;

	pthread_mutex_lock(&s->mu);
	if (!s->terms)
		s->terms = wap_terms_new(ws, NULL, NULL, NULL);
	ts = s->terms;
	pthread_mutex_unlock(&s->mu);
	/* ACP: "cwd (absolute)"; a relative one is refused, as fs/ paths are */
	if (json_is_string(json_object_get(params, "cwd")) &&
	    json_string_value(json_object_get(params, "cwd"))[0] != '/')
		rc = wap_err_set(&err, WAP_E_INVALID, "cwd must be absolute (ACP): %s",
				 json_string_value(json_object_get(params, "cwd")));
	else	/* a terminal is a session, not an op: it passes the one
		 * road's gate (policy, approval, audit) under its method's name */
		rc = wap_run_begin(&run, m->method, params, &start, &err);
	if (!rc && !ts)
		rc = wap_err_oom(&err);
	if (!rc) {
		rc = wap_term_acp(ts, m->method, params, &c->cancel, &res, &err);
		wap_run_done(&run, m->method, params, start, rc, &err);
	}
	if (rc < 0 && wap_cancel_is_set(&c->cancel))
		out = NULL;
	else if (rc < 0 && err.kind == WAP_E_TERM_NOT_FOUND)
		/* ACP's "resource not found" (-32002), without wap's code:
		 * the Agent Client Protocol has no terminal-not-found code */
		out = wap_rpc_error(m->id, -32002, err.msg,
				    err.details ? json_incref(err.details) : NULL);
	else if (rc < 0)
		out = wap_rpc_error_wap(m->id, &err);
	else	/* ACP's replies are objects: {} where there is nothing to say */
		out = wap_rpc_result(m->id, res && !json_is_null(res) ? res : (json_decref(res), json_object()));
	end_call(s, c);
	json_decref(empty);
	wap_err_release(&err);
	return out;
}

/* A call of a quick tool (read, stat: WAP_APPLET_QUICK) that asks for no
 * progress runs where it was read: the hand-off to a worker and back cost
 * more than the call.  Not while the client's roots are awaited: the call
 * would wait for an answer only the thread it holds can read. */
static bool quick(struct wap_mcp_session *s, const struct wap_rpc_msg *m, const struct wap_ptool *t)
{
	const struct wap_applet *a = t ? wap_applet_find(t->applet) : NULL;
	bool pending;

	if (!a || !(a->flags & WAP_APPLET_QUICK) || progress_token(m))
		return false;
	pthread_mutex_lock(&s->mu);
	pending = s->roots_pending;
	pthread_mutex_unlock(&s->mu);
	return !pending;
}

bool wap_mcp_tool_call(const struct wap_mcp_session *s, const struct wap_rpc_msg *m)
{
	if (m->kind != WAP_RPC_REQUEST)
		return false;
	if (s->srv->profile->methods)
		return wap_profile_tool(s->srv->profile, m->method) != NULL;
	return !strcmp(m->method, "tools/call");
}

bool wap_mcp_slow(struct wap_mcp_session *s, const struct wap_rpc_msg *m)
{
	const struct wap_ptool *t;
	const char *name;

	if (m->kind != WAP_RPC_REQUEST)
		return false;
	if (acp_terminal_method(s->srv->profile, m->method))
		return !strcmp(m->method, "terminal/wait_for_exit");
	if (s->srv->profile->methods) {
		t = wap_profile_tool(s->srv->profile, m->method);
		return t && !quick(s, m, t);
	}
	/* a walk of the whole tree (a cursor asks for 10 million entries), a
	 * whole file: never on the door's thread, which then answered no one
	 * else (5 s of /usr: /health waited) */
	if (!strcmp(m->method, "resources/list") || !strcmp(m->method, "resources/read"))
		return true;
	if (strcmp(m->method, "tools/call"))
		return false;
	name = json_string_value(json_object_get(m->params, "name"));
	t = name ? wap_profile_tool(s->srv->profile, name) : NULL;
	return !quick(s, m, t);
}

json_t *wap_mcp_handle(struct wap_mcp_session *s, const struct wap_rpc_msg *m,
		       wap_mcp_send_fn send, void *arg)
{
	const struct wap_profile *p = s->srv->profile;

	if (m->kind == WAP_RPC_RESPONSE) {
		handle_response(s, m, send, arg);
		return NULL;
	}
	if (m->kind == WAP_RPC_NOTIFICATION) {
		if (!strcmp(m->method, "notifications/cancelled") || !strcmp(m->method, "$/cancelRequest")) {
			json_t *id = json_object_get(m->params, "requestId");
			if (!id)
				id = json_object_get(m->params, "id");
			if (id)
				cancel_call(s, id);
		} else if (!strcmp(m->method, "notifications/initialized") ||
			   !strcmp(m->method, "notifications/roots/list_changed")) {
			if (!strcmp(m->method, "notifications/roots/list_changed")) {
				pthread_mutex_lock(&s->mu);
				s->roots_stale = true;
				pthread_mutex_unlock(&s->mu);
			}
			wap_mcp_request_roots(s, send, arg);
		}
		return NULL;	/* others are ignored, as JSON-RPC wants */
	}
	if (m->kind != WAP_RPC_REQUEST)
		return NULL;
	if (!strcmp(m->method, "ping"))
		return wap_rpc_result(m->id, json_object());
	if (acp_terminal_method(p, m->method))
		return acp_terminal(s, m);
	if (p->methods) {
		const struct wap_ptool *t = wap_profile_tool(p, m->method);
		json_t *empty = NULL, *out;

		struct inflight *c;

		if (!t)
			return wap_rpc_error(m->id, WAP_RPC_METHOD_NOT_FOUND, "Method not found", NULL);
		if (!(c = start_call(s, m->id)))
			return wap_rpc_oom(m->id);
		if (m->params && !json_is_object(m->params)) {
			end_call(s, c);
			return invalid_params(m, "Invalid params: params must be an object%s", NULL);
		}
		out = run_tool(s, m, c, t, m->params ? m->params : (empty = json_object()), false, send,
			       arg, NULL, NULL);
		json_decref(empty);
		return out;
	}
	if (!strcmp(m->method, "initialize"))
		return initialize(s, m);
	if (!strcmp(m->method, "logging/setLevel"))
		return set_level(s, m);
	if (!strcmp(m->method, "resources/list"))
		return resources_list(s, m);
	if (!strcmp(m->method, "resources/templates/list"))
		return wap_rpc_result(m->id, json_pack("{s:[]}", "resourceTemplates"));
	if (!strcmp(m->method, "resources/read"))
		return resources_read(s, m);
	if (!strcmp(m->method, "completion/complete"))
		return complete(s, m);
	if (!strcmp(m->method, "tools/list"))
		return tools_list(s, m);
	if (!strcmp(m->method, "tools/call"))
		return tools_call(s, m, send, arg, NULL, NULL);
	{
		char msg[300];
		snprintf(msg, sizeof(msg), "Method not found: %.200s", m->method);
		return wap_rpc_error(m->id, WAP_RPC_METHOD_NOT_FOUND, msg, NULL);
	}
}

int wap_mcp_reply(struct wap_mcp_session *s, const struct wap_rpc_msg *m, wap_mcp_send_fn send,
		  void *arg, struct wap_sb *sb)
{
	json_t *r;
	bool wrote = false;
	int rc;

	/* a tool's result straight into SB; any other reply as a value
	 * (the same dispatch as wap_mcp_handle: no profile with methods has
	 * tools/call) */
	if (m->kind == WAP_RPC_REQUEST && !s->srv->profile->methods && !strcmp(m->method, "tools/call")) {
		r = tools_call(s, m, send, arg, sb, &wrote);
		if (wrote)
			return 1;
	} else {
		r = wap_mcp_handle(s, m, send, arg);
	}
	if (!r)
		return 0;
	rc = wap_json_dump(r, sb);
	json_decref(r);
	return rc ? 0 : 1;
}
