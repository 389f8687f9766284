/* wap acp: run an Agent Client Protocol agent headless, confined to the root
 *
 * usage: wap acp run [OPTIONS] --prompt TEXT|--prompt-file FILE -- AGENT [ARG...]
 *        wap acp replay [OPTIONS] FILE
 *
 * run: the editor's side of the Agent Client Protocol, for scripts and CI.
 * Starts AGENT (found on PATH) as a child speaking JSON-RPC on its stdin
 * and stdout (its stderr is passed through), sends initialize (advertising
 * only what the policy allows: fs.readTextFile unless file access is off,
 * fs.writeTextFile unless --read-only, terminal unless terminals or
 * command execution are off), session/new (cwd: the root) and one
 * session/prompt, and prints what the agent streams: message chunks,
 * thoughts, tool calls with their status, plans, diffs.  The agent's
 * fs/read_text_file, fs/write_text_file and terminal/... requests are
 * answered exactly as the acp profile of wap serve answers them: beneath the
 * root, under the policy (--read-only, --restrict, the config), terminals
 * in the sandbox, each one audited.  Its session/request_permission
 * requests are answered by --approve, and every decision is audited.
 * The agent process itself runs as you, as an editor would run it: what
 * wap confines is what it asks the client to do.
 *
 * SIGINT or SIGTERM sends session/cancel; a turn not over --grace seconds
 * later has the agent's whole process tree killed (SIGTERM, then SIGKILL
 * after another grace period); nothing it started is left running.
 * --timeout does the same at a wall-clock limit.  After the turn the
 * agent's stdin is closed; an agent still running after the grace period
 * is killed the same way.
 *
 * Exit status: the turn's stop reason
 *   0    end_turn
 *   20   max_tokens
 *   21   max_turn_requests
 *   22   refusal
 *   23   cancelled (the agent ended the turn after session/cancel)
 *   24   a stop reason wap does not know
 *   124  --timeout passed
 *   128+N  signal N, and the agent had to be killed before ending the turn
 *   125  the agent could not start, broke the protocol, answered an error
 *        or exited before the turn ended
 *   2    usage
 *
 * --json prints JSON Lines: {"event":"update","sessionId","update"} for
 * each session/update, {"event":"permission","toolCall","outcome",
 * "optionId"} for each decision, and last {"event":"stop","stopReason",
 * "exitCode","timedOut","signal"}.
 *
 * replay: read a --transcript of `wap acp run` and answer the agent's
 * requests in it again, in order, against the root (paths under the
 * recorded root are moved to it): each answer must be the one recorded,
 * and the capabilities advertised those the policy allows now.  Replay
 * against the workspace in the state the run started from (a fresh
 * checkout in CI).  Prints one line per request (same/DIFFERS); exits 0
 * when all are the same, 1 when one differs; --json prints {same, differ,
 * checks}.  Give --json before FILE.
 *
 * options:
 *   ACTION                 run or replay
 *   ARGS                   run: the agent and its arguments (after --);
 *                          replay: the transcript FILE
 *   --prompt TEXT          run: the prompt
 *   --prompt-file FILE     run: the prompt from FILE (inside the root; - for stdin)
 *   --approve POLICY       answer permission requests: never, reads (tool
 *                          calls of kind read, search or think), all, or
 *                          ask (on a TTY: you are asked on /dev/tty);
 *                          default ask on a TTY, else never.  replay: the
 *                          transcript's unless given
 *   --transcript FILE      run: write every message both ways to FILE as
 *                          JSON Lines (for wap acp replay)
 *   --timeout SECONDS      run: the wall-clock limit of the turn (default none)
 *   --grace SECONDS        run: how long the agent has after session/cancel,
 *                          and after SIGTERM (default 5)
 *   --mcp-server SERVER    run: an MCP server for the agent (session/new
 *                          mcpServers; repeatable): "wap" for wap's own MCP
 *                          server on this root and policy (the config in
 *                          force, the flags, --audit and --approver; with
 *                          --no-terminal its exec is refused too), or the
 *                          JSON object ({"name","command","args","env"})
 *   --audit FILE           append one JSON line per operation and per
 *                          permission decision to FILE (- for stderr)
 *   --no-terminal          do not offer terminals (security.allowTerminalAccess false)
 *   --no-sandbox           run the agent's terminals without the sandbox
 *                          (default: sandboxed, as for wap serve's clients)
 *   --approver COMMAND     with security.requireApproval, run COMMAND for
 *                          each request that writes or runs commands
 *
 * examples:
 *   wap acp run --approve reads --prompt "fix the failing test" -- my-agent acp
 *   wap acp run --json --transcript t.jsonl --timeout 600 --prompt-file task.md -- node agent.js
 *   wap acp replay t.jsonl
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acpclient.h"
#include "applet.h"
#include "applets.h"
#include "strbuf.h"
#include "audit.h"
#include "config.h"
#include "diff.h"
#include "file.h"

static const struct wap_opt acp_opts[] = {
	{ "action", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ "args", 0, WAP_OPT_STRS, WAP_OPT_POS | WAP_OPT_REST, NULL },
	{ "prompt", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ "prompt-file", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ "approve", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ "transcript", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ "timeout", 0, WAP_OPT_INT, WAP_OPT_CLI, NULL },
	{ "grace", 0, WAP_OPT_INT, WAP_OPT_CLI, NULL },
	{ "mcp-server", 0, WAP_OPT_STRS, WAP_OPT_CLI, NULL },
	{ "audit", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ "no-terminal", 0, WAP_OPT_BOOL, WAP_OPT_CLI, NULL },
	{ "no-sandbox", 0, WAP_OPT_BOOL, WAP_OPT_CLI, NULL },
	{ "approver", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ NULL }
};

/* ---- the text for people ---- */

struct view {
	bool json;
	bool bol;		/* at the beginning of a line */
	const char *stream;	/* "message", "thought", "user", or NULL */
	json_t *titles;		/* toolCallId -> title */
	FILE *tty;		/* --approve ask */
	bool clean;		/* stdout is a terminal: see cl() */
	struct wap_sb ring[4];	/* cl()'s copies, one printf's worth */
	int ri;
};

/* S as a terminal may show it: the agent's control characters, which
 * could move the cursor, recolour, or rewrite what wap printed (its
 * permission question among them), in caret notation as cat -v shows them
 * (ESC as ^[, DEL as ^?, C1 controls as M-^[), newlines too unless LINES
 * (a tab stays).  S itself when it needs nothing, or when CLEAN is false
 * (a pipe or a file gets the agent's bytes as they came). */
static const char *cl(struct view *v, const char *s, bool clean, bool lines)
{
	struct wap_sb *sb;
	const unsigned char *p;

	if (!s || !clean)
		return s;
	for (p = (const unsigned char *)s; *p; p++)
		if ((*p < 0x20 && *p != '\t' && (*p != '\n' || !lines)) || *p == 0x7f ||
		    (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0))
			break;
	if (!*p)
		return s;
	sb = &v->ring[v->ri++ % 4];
	sb->len = 0;
	wap_sb_add(sb, s, (const char *)p - s);
	for (; *p; p++) {
		if (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)
			wap_sb_addf(sb, "M-^%c", *++p - 0x80 + '@');
		else if ((*p < 0x20 && *p != '\t' && (*p != '\n' || !lines)) || *p == 0x7f)
			wap_sb_addf(sb, "^%c", *p == 0x7f ? '?' : *p + '@');
		else
			wap_sb_addc(sb, (char)*p);
	}
	return sb->oom ? "?" : sb->buf;
}

/* an agent's text for stdout, and a one-line field of its (a title, a
 * kind, a path) */
#define OUT(v, s) cl(v, s, (v)->clean, true)
#define OUT1(v, s) cl(v, s, (v)->clean, false)

static void newline(struct view *v)
{
	if (!v->bol)
		fputc('\n', stdout);
	v->bol = true;
	v->stream = NULL;
}

static void put(struct view *v, const char *s)
{
	size_t n = strlen(s);

	fputs(OUT(v, s), stdout);
	if (n)
		v->bol = s[n - 1] == '\n';
}

/* A content block: text as it is, others by their kind. */
static void block(struct view *v, const json_t *b)
{
	const char *type = json_string_value(json_object_get(b, "type"));
	const char *text = json_string_value(json_object_get(b, "text"));

	if (type && !strcmp(type, "text") && text) {
		put(v, text);
	} else if (type && !strcmp(type, "resource_link")) {
		printf("[link %s]", json_string_value(json_object_get(b, "uri")) ?
		       OUT1(v, json_string_value(json_object_get(b, "uri"))) : "?");
		v->bol = false;
	} else if (type && !strcmp(type, "resource")) {
		const json_t *r = json_object_get(b, "resource");
		printf("[resource %s]", json_string_value(json_object_get(r, "uri")) ?
		       OUT1(v, json_string_value(json_object_get(r, "uri"))) : "?");
		v->bol = false;
	} else {
		printf("[%s]", type ? OUT1(v, type) : "content");
		v->bol = false;
	}
}

static void stream_to(struct view *v, const char *kind, const char *label)
{
	if (v->stream && !strcmp(v->stream, kind))
		return;
	newline(v);
	v->stream = kind;
	if (label)
		fputs(label, stdout);
}

static void diff_of(struct view *v, const json_t *c)
{
	const char *path = json_string_value(json_object_get(c, "path"));
	const json_t *o = json_object_get(c, "oldText"), *n = json_object_get(c, "newText");
	struct wap_diff d = { 0 };
	struct wap_err err = { 0 };

	newline(v);
	if (!wap_diff_make(json_string_value(o), json_string_length(o), json_string_value(n),
			   json_string_length(n), path ? path : "file", NULL, &d, &err)) {
		put(v, d.text);
		wap_diff_release(&d);
	} else {
		printf("  (diff of %s: %s)\n", path ? path : "?", err.msg);
		wap_err_release(&err);
	}
	newline(v);
}

static void tool_content(struct view *v, const json_t *content)
{
	const json_t *c;
	size_t i;

	json_array_foreach(content, i, c) {
		const char *type = json_string_value(json_object_get(c, "type"));
		if (type && !strcmp(type, "diff")) {
			diff_of(v, c);
		} else if (type && !strcmp(type, "terminal")) {
			printf("  terminal %s\n", json_string_value(json_object_get(c, "terminalId")) ?
			       json_string_value(json_object_get(c, "terminalId")) : "?");
		} else if (type && !strcmp(type, "content")) {
			fputs("  ", stdout);
			v->bol = false;
			block(v, json_object_get(c, "content"));
			newline(v);
		}
	}
}

static void tool(struct view *v, const json_t *u, bool first)
{
	const char *id = json_string_value(json_object_get(u, "toolCallId"));
	const char *title = json_string_value(json_object_get(u, "title"));
	const char *kind = json_string_value(json_object_get(u, "kind"));
	const char *status = json_string_value(json_object_get(u, "status"));
	const json_t *loc;
	size_t i;

	if (id && title)
		json_object_set_new(v->titles, id, json_string(title));
	if (!title && id)
		title = json_string_value(json_object_get(v->titles, id));
	newline(v);
	printf("[tool] %s", title ? OUT1(v, title) : id ? OUT1(v, id) : "?");
	if (kind)
		printf(" (%s)", OUT1(v, kind));
	if (status)
		printf(": %s", OUT1(v, status));
	else if (first)
		printf(": pending");
	json_array_foreach(json_object_get(u, "locations"), i, loc)
		if (json_is_string(json_object_get(loc, "path")))
			printf(" %s", OUT1(v, json_string_value(json_object_get(loc, "path"))));
	fputc('\n', stdout);
	tool_content(v, json_object_get(u, "content"));
}

static void plan(struct view *v, const json_t *u)
{
	const json_t *e;
	size_t i;

	newline(v);
	puts("[plan]");
	json_array_foreach(json_object_get(u, "entries"), i, e) {
		const char *st = json_string_value(json_object_get(e, "status"));
		printf("  [%s] %s\n", st && !strcmp(st, "completed") ? "x" : st && !strcmp(st, "in_progress") ? "~" : " ",
		       json_string_value(json_object_get(e, "content")) ? OUT1(v, json_string_value(json_object_get(e, "content"))) : "");
	}
}

static void on_event(void *arg, const json_t *ev)
{
	struct view *v = arg;
	const char *what = json_string_value(json_object_get(ev, "event"));
	const json_t *u = json_object_get(ev, "update");
	const char *su = json_string_value(json_object_get(u, "sessionUpdate"));

	if (v->json) {
		json_dumpf(ev, stdout, JSON_COMPACT);
		fputc('\n', stdout);
		fflush(stdout);
		return;
	}
	if (what && !strcmp(what, "permission")) {
		const json_t *tc = json_object_get(ev, "toolCall");
		newline(v);
		printf("[permission] %s", json_string_value(json_object_get(tc, "title")) ?
		       OUT1(v, json_string_value(json_object_get(tc, "title"))) : "?");
		if (json_is_string(json_object_get(tc, "kind")))
			printf(" (%s)", OUT1(v, json_string_value(json_object_get(tc, "kind"))));
		printf(": %s\n", json_string_value(json_object_get(ev, "outcome")));
	} else if (!su) {
		return;
	} else if (!strcmp(su, "agent_message_chunk")) {
		stream_to(v, "message", NULL);
		block(v, json_object_get(u, "content"));
	} else if (!strcmp(su, "agent_thought_chunk")) {
		stream_to(v, "thought", "[thought] ");
		block(v, json_object_get(u, "content"));
	} else if (!strcmp(su, "user_message_chunk")) {
		stream_to(v, "user", "[user] ");
		block(v, json_object_get(u, "content"));
	} else if (!strcmp(su, "tool_call") || !strcmp(su, "tool_call_update")) {
		tool(v, u, !strcmp(su, "tool_call"));
	} else if (!strcmp(su, "plan")) {
		plan(v, u);
	} else if (!strcmp(su, "current_mode_update")) {
		newline(v);
		printf("[mode] %s\n", json_string_value(json_object_get(u, "currentModeId")) ?
		       OUT1(v, json_string_value(json_object_get(u, "currentModeId"))) : "?");
	}
	/* available_commands_update and others say nothing to a reader */
	fflush(stdout);
}

static void on_log(void *arg, const char *data, size_t len)
{
	(void)arg;
	fwrite(data, 1, len, stderr);
	fflush(stderr);
}

/* --approve ask: the tool call and its options on /dev/tty, a number back */
static int ask(void *arg, const json_t *params)
{
	struct view *v = arg;
	const json_t *tc = json_object_get(params, "toolCall"), *o;
	char line[64];
	size_t i;

	if (!v->tty)
		return -1;
	/* the agent's words on one line each, shown as they are */
	fprintf(v->tty, "\nwap acp: the agent asks permission: %s (%s)\n",
		json_string_value(json_object_get(tc, "title")) ?
		cl(v, json_string_value(json_object_get(tc, "title")), true, false) : "?",
		json_string_value(json_object_get(tc, "kind")) ?
		cl(v, json_string_value(json_object_get(tc, "kind")), true, false) : "other");
	json_array_foreach(json_object_get(params, "options"), i, o)
		fprintf(v->tty, "  %zu) %s [%s]\n", i + 1,
			json_string_value(json_object_get(o, "name")) ?
			cl(v, json_string_value(json_object_get(o, "name")), true, false) : "?",
			json_string_value(json_object_get(o, "kind")) ?
			cl(v, json_string_value(json_object_get(o, "kind")), true, false) : "?");
	fprintf(v->tty, "choice (number; anything else rejects): ");
	fflush(v->tty);
	if (!fgets(line, sizeof(line), v->tty))
		return -1;
	return atoi(line) - 1;
}

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

static int stop_exit(const char *sr)
{
	static const struct { const char *reason; int code; } t[] = {
		{ "end_turn", 0 }, { "max_tokens", 20 }, { "max_turn_requests", 21 },
		{ "refusal", 22 }, { "cancelled", 23 }, { NULL, 24 }
	};
	int i;

	for (i = 0; t[i].reason; i++)
		if (!strcmp(t[i].reason, sr))
			break;
	return t[i].code;
}

/* The policy in force, as a config for wap's own MCP server: the
 * invoker's config with the flags' effect on top (top-level dotted keys
 * win over nested ones).  Terminals refused (--no-terminal) refuse
 * commands too: exec would be a terminal by another name.  Written 0600
 * to a file of its own outside the root; its path in *FILE. */
static int policy_file(struct wap_ws *ws, char **file, struct wap_err *err)
{
	const char *tmp = getenv("TMPDIR");
	json_t *c = json_deep_copy(ws->config), *rp = json_array();
	char *path = NULL;
	int fd = -1, rc = -1;

	for (size_t k = 0; rp && ws->pol.restricted_paths && ws->pol.restricted_paths[k]; k++)
		json_array_append_new(rp, json_string(ws->pol.restricted_paths[k]));
	if (!c || !rp ||
	    json_object_set_new(c, "security.readOnly", json_boolean(ws->pol.read_only)) ||
	    json_object_set_new(c, "security.restrictedPaths", json_incref(rp)) ||
	    json_object_set_new(c, "security.allowTerminalAccess", json_boolean(ws->pol.allow_terminal)) ||
	    json_object_set_new(c, "security.allowCommandExecution",
				json_boolean(ws->pol.allow_exec && ws->pol.allow_terminal)) ||
	    json_object_set_new(c, "security.sandbox", json_boolean(ws->pol.sandbox)) ||
	    asprintf(&path, "%s/wap-acp-policy.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp") < 0) {
		path = NULL;
		wap_err_oom(err);
		goto out;
	}
	fd = mkstemp(path);	/* 0600 */
	if (fd < 0 || json_dumpfd(c, fd, JSON_COMPACT) || close(fd)) {
		wap_err_set(err, WAP_E_FAILED, "cannot write the MCP server's policy to %s: %s", path,
			    strerror(errno));
		if (fd >= 0)
			unlink(path);
		goto out;
	}
	if (wap_ws_protect(ws, path)) {
		unlink(path);
		wap_err_oom(err);
		goto out;
	}
	*file = path;
	path = NULL;
	rc = 0;
out:
	free(path);
	json_decref(rp);
	json_decref(c);
	return rc;
}

/* P from the current directory, as the server started by the agent (in
 * the root) must name it; NULL without memory */
static char *abs_path(const char *p)
{
	char *cwd, *r = NULL;

	if (p[0] == '/')
		return strdup(p);
	cwd = getcwd(NULL, 0);
	if (cwd && asprintf(&r, "%s/%s", cwd, p) < 0)
		r = NULL;
	free(cwd);
	return r;
}

/* --mcp-server: "wap" (wap's own MCP server on this root and policy: the
 * policy in force as its config (policy_file, its path in *POLICY), the
 * same audit log and approver) or a JSON object as session/new wants it */
static json_t *mcp_servers(const json_t *specs, struct wap_ws *ws, const char *audit,
			   const char *approver, char **policy, struct wap_err *err)
{
	json_t *out = json_array(), *s;
	size_t i;

	json_array_foreach(specs, i, s) {
		const char *spec = json_string_value(s);
		json_t *v;

		if (!strcmp(spec, "wap")) {
			char self[4096], *a = NULL;
			ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
			json_t *args;

			if (n <= 0) {
				json_decref(out);
				wap_err_set(err, WAP_E_FAILED, "cannot find wap's own path");
				return NULL;
			}
			self[n] = 0;
			if (!*policy && policy_file(ws, policy, err)) {
				json_decref(out);
				return NULL;
			}
			args = json_pack("[s, s, s, s, s]", "serve", "--root", ws->root, "--config", *policy);
			/* its own lines in the same log (O_APPEND: one write a line) */
			if (args && audit && strcmp(audit, "-") && (a = abs_path(audit))) {
				json_array_append_new(args, json_string("--audit"));
				json_array_append_new(args, json_string(a));
			}
			free(a);
			if (args && approver) {
				json_array_append_new(args, json_string("--approver"));
				json_array_append_new(args, json_string(approver));
			}
			if (args && ws->pol.read_only)
				json_array_append_new(args, json_string("--read-only"));
			v = json_pack("{s:s, s:s, s:o, s:[]}", "name", "wap", "command", self, "args", args, "env");
		} else {
			json_error_t je;
			v = json_loads(spec, 0, &je);
			if (!json_is_object(v) || !json_is_string(json_object_get(v, "name"))) {
				json_decref(v);
				json_decref(out);
				wap_err_set(err, WAP_E_INVALID, "--mcp-server wants \"wap\" or a JSON object with \"name\" (and \"command\" or \"url\"): %s", spec);
				return NULL;
			}
			/* stdio servers: args and env are required lists */
			if (json_object_get(v, "command") && !json_object_get(v, "args"))
				json_object_set_new(v, "args", json_array());
			if (json_object_get(v, "command") && !json_object_get(v, "env"))
				json_object_set_new(v, "env", json_array());
		}
		json_array_append_new(out, v);
	}
	return out;
}

static void replay_check(void *arg, const json_t *c)
{
	struct view *v = arg;

	if (v->json) {
		json_array_append(v->titles, (json_t *)c);
		return;
	}
	if (json_is_true(json_object_get(c, "same"))) {
		printf("same %lld %s\n", (long long)json_integer_value(json_object_get(c, "n")),
		       json_string_value(json_object_get(c, "method")));
	} else {
		char *w = json_dumps(json_object_get(c, "want"), JSON_COMPACT | JSON_ENCODE_ANY);
		char *g = json_dumps(json_object_get(c, "got"), JSON_COMPACT | JSON_ENCODE_ANY);
		printf("DIFFERS %lld %s\n  recorded: %.400s\n  now:      %.400s\n",
		       (long long)json_integer_value(json_object_get(c, "n")),
		       json_string_value(json_object_get(c, "method")), w ? w : "?", g ? g : "?");
		free(w);
		free(g);
	}
}

static int usage_err(const char *msg)
{
	fprintf(stderr, "wap acp: %s\n", msg);
	return 2;
}

static int acp_main(struct wap_ws *ws, json_t *req, bool json, struct wap_cancel *cancel)
{
	const char *action = NULL, *prompt = NULL, *pfile = NULL, *approve = NULL, *tfile = NULL,
		   *afile = NULL;
	json_t *args = json_object_get(req, "args");
	struct wap_acpc_opts o = { .ws = ws, .stop = &stop_sig };
	struct view v = { .json = json, .bol = true, .clean = isatty(1) };
	struct wap_err err = { 0 };
	char **argv = NULL, *pbuf = NULL, *policy = NULL;
	long long n;
	bool b = false;
	int rc = 0, a;

	(void)cancel;	/* (a server: each call has its own token) */

	wap_req_str(req, "action", &action, NULL);
	wap_req_str(req, "prompt", &prompt, NULL);
	wap_req_str(req, "prompt_file", &pfile, NULL);
	wap_req_str(req, "approve", &approve, NULL);
	wap_req_str(req, "transcript", &tfile, NULL);
	wap_req_str(req, "audit", &afile, NULL);
	wap_req_str(req, "approver", &o.approver.command, NULL);
	if (!action || (strcmp(action, "run") && strcmp(action, "replay")))
		return usage_err("the action is run or replay (see wap acp --help)");
	if (approve) {
		if ((a = wap_acpc_approve_parse(approve)) < 0)
			return usage_err("--approve is never, reads, all or ask");
		o.approve = a;
	} else {
		o.approve = isatty(0) && isatty(2) ? WAP_ACPC_ASK : WAP_ACPC_NEVER;
	}
	if (wap_req_bool(req, "no_terminal", &b, NULL) == 1 && b)
		ws->pol.allow_terminal = false;
	b = false;
	/* the agent is the client wap confines: its terminals run in the
	 * sandbox unless the invoker says otherwise, as for wap serve */
	if (!(wap_req_bool(req, "no_sandbox", &b, NULL) == 1 && b) && !wap_config_get(ws->config, "security.sandbox"))
		ws->pol.sandbox = true;
	o.grace_ms = 5000;
	if (wap_req_int(req, "grace", &n, NULL) == 1) {
		if (n < 0 || n > 3600)
			return usage_err("--grace must be 0 to 3600 seconds");
		o.grace_ms = n ? n * 1000 : 1;
	}
	if (wap_req_int(req, "timeout", &n, NULL) == 1) {
		if (n < 1)
			return usage_err("--timeout must be at least 1 second");
		o.timeout_ms = n * 1000;
	}
	signal(SIGPIPE, SIG_IGN);
	if (afile && !(o.audit = wap_audit_open(afile, &err))) {
		fprintf(stderr, "wap acp: %s\n", err.msg);
		rc = wap_err_exit(err.kind);
		goto out;
	}
	/* the audit log and the transcript, when beneath the root, are not
	 * the agent's to rewrite (fs/write_text_file, a terminal) */
	if ((afile && strcmp(afile, "-") && wap_ws_protect(ws, afile)) ||
	    (tfile && wap_ws_protect(ws, tfile))) {
		fprintf(stderr, "wap acp: out of memory\n");
		rc = 1;
		goto out;
	}
	o.arg = &v;
	o.event = on_event;
	o.log = on_log;
	o.ask = ask;

	if (!strcmp(action, "replay")) {
		FILE *in;
		size_t same, differ;

		if (json_array_size(args) != 1) {
			rc = usage_err("replay takes one transcript FILE");
			goto out;
		}
		if (!(in = fopen(json_string_value(json_array_get(args, 0)), "r"))) {
			fprintf(stderr, "wap acp: %s: %s\n", json_string_value(json_array_get(args, 0)), strerror(errno));
			rc = 3;
			goto out;
		}
		v.titles = json_array();
		o.event = NULL;	/* the checks are the output */
		if (o.approve == WAP_ACPC_ASK && !approve)
			o.approve = WAP_ACPC_NEVER;
		if (wap_acpc_replay(&o, approve != NULL, in, replay_check, &same, &differ, &err)) {
			fprintf(stderr, "wap acp: %s\n", err.msg);
			rc = wap_err_exit(err.kind);
		} else {
			if (json) {
				json_t *r = json_pack("{s:i, s:i, s:O}", "same", (json_int_t)same, "differ",
						      (json_int_t)differ, "checks", v.titles);
				json_dumpf(r, stdout, JSON_COMPACT);
				fputc('\n', stdout);
				json_decref(r);
			} else {
				printf("%zu same, %zu differ\n", same, differ);
			}
			rc = differ ? 1 : 0;
		}
		fclose(in);
		goto out;
	}

	/* run */
	if (!json_array_size(args)) {
		rc = usage_err("no agent: wap acp run [OPTIONS] --prompt TEXT -- AGENT [ARG...]");
		goto out;
	}
	if (!prompt == !pfile) {
		rc = usage_err("give the prompt: --prompt TEXT or --prompt-file FILE");
		goto out;
	}
	if (pfile) {
		size_t len;
		/* a data file: beneath the root, under its policy (as --patch) */
		if (wap_read_data(ws, pfile, &pbuf, &len, &err)) {
			fprintf(stderr, "wap acp: %s\n", err.msg);
			rc = wap_err_exit(err.kind);
			goto out;
		}
		{
			json_t *t = json_stringn(pbuf, len);	/* NULL: not UTF-8 */
			json_decref(t);
			if (strlen(pbuf) != len || !t) {
				rc = usage_err("--prompt-file: the prompt must be UTF-8 text");
				goto out;
			}
		}
		prompt = pbuf;
	}
	o.prompt = prompt;
	if (json_array_size(json_object_get(req, "mcp_server")) &&
	    !(o.mcp_servers = mcp_servers(json_object_get(req, "mcp_server"), ws, afile,
					  o.approver.command, &policy, &err))) {
		fprintf(stderr, "wap acp: %s\n", err.msg);
		rc = wap_err_exit(err.kind);
		goto out;
	}
	{
		json_t *s;
		size_t i;
		json_array_foreach(args, i, s)
			wap_strv_push(&argv, json_string_value(s));
	}
	o.argv = argv;
	if (tfile && !(o.transcript = wap_open_record(tfile, false))) {
		fprintf(stderr, "wap acp: %s: %s\n", tfile, strerror(errno));
		rc = 125;
		goto out;
	}
	if (o.approve == WAP_ACPC_ASK && !(v.tty = fopen("/dev/tty", "r+")))
		o.approve = WAP_ACPC_NEVER;
	v.titles = json_object();
	{
		struct sigaction sa = { .sa_handler = on_signal };
		struct wap_acpc_result r;

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		if (wap_acpc_run(&o, &r, &err)) {
			newline(&v);
			fflush(stdout);
			fprintf(stderr, "wap acp: %s\n", err.msg);
			rc = wap_err_exit(err.kind);
			if (json) {
				json_t *e = wap_err_json(&err);
				json_object_set_new(e, "event", json_string("error"));
				json_dumpf(e, stdout, JSON_COMPACT);
				fputc('\n', stdout);
				json_decref(e);
			}
		} else {
			rc = r.timed_out ? 124 : r.stop_reason ? stop_exit(r.stop_reason) : 128 + r.signal;
			if (json) {
				json_t *e = json_pack("{s:s, s:s?, s:i, s:b, s:i}", "event", "stop", "stopReason",
						      r.stop_reason, "exitCode", rc, "timedOut", r.timed_out,
						      "signal", r.signal);
				json_dumpf(e, stdout, JSON_COMPACT);
				fputc('\n', stdout);
				json_decref(e);
			} else {
				newline(&v);
				printf("[stop] %s\n", r.stop_reason ? r.stop_reason :
				       r.timed_out ? "timeout (the agent was stopped)" : "signal (the agent was killed)");
			}
			wap_acpc_result_release(&r);
		}
	}
out:
	if (fflush(stdout) && errno != EPIPE && !rc)	/* a closed pipe is silent */
		rc = 125;
	if (o.transcript)
		fclose(o.transcript);
	if (v.tty)
		fclose(v.tty);
	for (int i = 0; i < 4; i++)
		wap_sb_release(&v.ring[i]);
	wap_audit_close(o.audit);
	json_decref(o.mcp_servers);
	if (policy)
		unlink(policy);
	free(policy);
	json_decref(v.titles);
	wap_strv_free(argv);
	free(pbuf);
	wap_err_release(&err);
	return rc;
}

static int acp_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	(void)call; (void)req; (void)res;
	return wap_err_set(err, WAP_E_INVALID, "acp runs only from the command line");
}

const struct wap_applet wap_applet_acp = {
	.name = "acp",
	.summary = wap_summary_acp,
	.usage = wap_usage_acp,
	.title = "Run an ACP agent",
	.opts = acp_opts,
	.op = acp_op,
	.flags = WAP_APPLET_NOTOOL,
	.cli_main = acp_main,
};
