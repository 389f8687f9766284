/* wap serve: offer the applets as MCP tools over stdio or Streamable HTTP
 *
 * usage: wap serve [--http HOST:PORT] [--profile NAME] [--audit FILE]
 *                  [--token TOKEN] [--roots-from-client] [--root DIR]
 *                  [--ws HOST:PORT] [--token-file FILE] [--session-ttl SECONDS]
 *                  [--approver COMMAND] [--no-auth] [--no-sandbox]
 *
 * Without --http, speaks MCP on stdin/stdout: one JSON-RPC message a line,
 * nothing else on stdout, logs on stderr.  With --http, serves MCP
 * Streamable HTTP at /mcp (POST; JSON or SSE replies; Mcp-Session-Id;
 * DELETE ends a session) and GET /health, on 127.0.0.1 unless told.
 * Every tool is the applet of the same name, its arguments the applet's
 * long options in snake_case; results carry structuredContent (what
 * `wap APPLET --json` prints) and the text rendering; a failed call is a
 * result with isError and the WAP error object as its text.  Calls run on
 * --workers threads, so over stdio replies may come in another order than
 * the requests (their ids match them); read and stat run where the request
 * was read when no other call is under way (no hand-off: they are quicker
 * than one), unless it finds it is not quick: a read that must unpack an
 * archive, or count lines through a file past maxFileSize, is handed to
 * a worker.  notifications/cancelled stops a call, and a call that sends
 * a progressToken gets notifications/progress.
 *
 * options:
 *   --http HOST:PORT        serve Streamable HTTP at /mcp (e.g. 127.0.0.1:8765)
 *   --profile NAME          tool set: wap (default), wap-1.0, langop, opencode, wti
 *                           (workspace-tool-interface), acp
 *   --audit FILE            append one JSON line per operation to FILE (- for stderr)
 *   --token TOKEN           the bearer token of --http and --ws (default: the
 *                           config's "token", else $WAP_TOKEN, else a random one
 *                           written to the token file); wiped from the command
 *                           line once read
 *   --token-file FILE       write the token there, mode 0600, never inside the root
 *                           (default $XDG_RUNTIME_DIR, else ~/.cache:
 *                           wap-http-PORT.token, wap-acp.token for --ws)
 *   --no-auth               HTTP: serve without a token; only on a loopback address
 *   --no-sandbox            run exec and terminals without the sandbox (default:
 *                           every command a client runs is sandboxed, as with
 *                           security.sandbox; for a container that is the sandbox)
 *   --roots-from-client     narrow the root to the client's first root inside it
 *                           (stdio, and HTTP: asked on the SSE reply to a request)
 *   --allowed-hosts HOST    HTTP and ws: also accept this Host (repeatable, or
 *                           comma-separated)
 *   --allowed-origins ORIGIN  HTTP and ws: also accept this Origin (repeatable, or
 *                           comma-separated; * accepts any), as the config's
 *                           allowedOrigins do
 *   --workers N             threads running tool calls (default 4)
 *   --drain                 stdio: at end of input finish the calls under way
 *                           and answer them (for printf ... | wap serve); else
 *                           end of input cancels them, as a client's shutdown
 *   --max-message BYTES     largest JSON-RPC message accepted (default 16 MiB); over
 *                           HTTP a larger Content-Length is refused (413) unread,
 *                           a larger WebSocket message closes the connection (1009)
 *   --max-connections N     HTTP: connections at once (default 64); past them a
 *                           new one pushes out the one idle the longest, or is
 *                           dropped when none is
 *   --ws HOST:PORT          serve the Agent Control Protocol over WebSocket
 *                           (default port 19876); with --http, one server: the
 *                           protocol is on the --http port too
 *   --session-ttl SECONDS   ws: sessions expire after SECONDS (-32008; default never)
 *   --approver COMMAND      with security.requireApproval, run COMMAND (sh -c) for
 *                           each call that writes or runs commands (every
 *                           protocol); exit 0 approves, else it is refused (-32006)
 *
 * Profiles: wap (tool names = applet names), wap-1.0 (exploreFiles,
 * readFile, writeFile, modifyFile, searchFiles, executeCommand,
 * getWorkspaceInfo), langop (read_file, write_file, list_directory,
 * create_directory, get_file_info, search_files, with the Language
 * Operator workspace tool's texts), opencode (bash, read, write, edit,
 * glob, grep, git), acp (fs/read_text_file and fs/write_text_file of the
 * Agent Client Protocol, as JSON-RPC methods, and its terminal/create,
 * terminal/output, terminal/wait_for_exit, terminal/kill and
 * terminal/release: commands on pipes, output kept to outputByteLimit).
 *
 * With --ws, the Agent Control Protocol (JSON-RPC 2.0 over WebSocket,
 * `category.method` names): the server sends auth.challenge {nonce}, the
 * client answers auth.authenticate {token, nonce}; then fs.*, search.*,
 * git.*, state.*, editor.* (a headless editor per connection: open
 * documents, selections, unsaved buffers until editor.save), command.*
 * (wap's applets as wap.NAME) and terminal.* (shells on PTYs), with
 * file.changed and terminal.output notifications.  A client must
 * authenticate within 30 s (messages before that are at most 64 KiB).
 * Methods that need a language server or a debugger it does not have
 * answer -32009 FeatureDisabled.  The approver gets the method
 * as $1, the path (or name) as $2 and every other target of the call
 * (a destination, paths, a command's words, what is typed) as $3...,
 * control characters shown as ^X; the whole {"method","params"} on
 * stdin.  It runs in a process group of its own, killed once it answers
 * or the wait ends.
 * The config's agentControl.logging.level (debug, info, warn, error) picks
 * the log lines; logging.logToFile appends them to logging.file, else to
 * wap-acp.log beside the default token file.
 *
 * HTTP security: Host and Origin (when sent) must be localhost, 127.0.0.1
 * or [::1] (any port) or named by --allowed-hosts / --allowed-origins,
 * else 403 (a WebSocket upgrade is checked the same way, on either port); a request
 * to /mcp without the Bearer token gets 401 (/health stays open).  There
 * is always a token unless --no-auth on loopback: without one configured,
 * a random one is made and only the file holding it is named on stderr.
 * Refusals (403, 401, 413, 411 for chunked bodies) come from the headers,
 * before the body is read.  SIGTERM drains both doors at once: calls under
 * way finish (10 s at most), new requests, upgrades and /health get 503 (new
 * WebSocket requests -32603), then exit 0.
 *
 * environment (for containers; an option wins, lists add to it):
 *   WAP_HTTP=HOST:PORT      as --http
 *   PORT                    the port for an --http address given without one
 *                           (0.0.0.0, [::]; default 8080)
 *   WAP_PROFILE, WAP_TOKEN  as --profile, --token
 *   WAP_ALLOWED_HOSTS, WAP_ALLOWED_ORIGINS  comma-separated, added to the options'
 *   LOG_LEVEL               debug (the audit lines on stderr unless --audit),
 *                           info (default), warn or error (no start-up line)
 * A port that cannot be bound is an error (exit 125), never a silent start.
 *
 * examples:
 *   wap serve --root ~/src/project
 *   wap serve --http 127.0.0.1:8765 --audit audit.jsonl
 *   wap serve --http 127.0.0.1:8765 --no-auth
 *   WAP_TOKEN=s3cret wap serve --http 0.0.0.0:8765 --allowed-hosts myhost.lan
 *   wap serve --profile langop --root /workspace
 *   wap serve --ws 127.0.0.1:19876 --token-file ~/.wap-token --root ~/src/project
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lazy.h"
#include "applet.h"
#include "lsp.h"
#include "applets.h"
#include "audit.h"
#include "config.h"
#include "http.h"
#include "acp.h"
#include "mcp.h"
#include "stdio_rpc.h"
#include "token.h"

static const struct wap_opt serve_opts[] = {
	{ "http", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ "profile", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ "audit", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ "token", 0, WAP_OPT_STR, WAP_OPT_CLI | WAP_OPT_SECRET, NULL },
	{ "roots-from-client", 0, WAP_OPT_BOOL, WAP_OPT_CLI, NULL },
	{ "allowed-hosts", 0, WAP_OPT_STRS, WAP_OPT_CLI, NULL },
	{ "allowed-origins", 0, WAP_OPT_STRS, WAP_OPT_CLI, NULL },
	{ "workers", 0, WAP_OPT_INT, WAP_OPT_CLI, NULL },
	{ "drain", 0, WAP_OPT_BOOL, WAP_OPT_CLI, NULL },
	{ "max-message", 0, WAP_OPT_INT, WAP_OPT_CLI, NULL },
	{ "ws", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ "token-file", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ "session-ttl", 0, WAP_OPT_INT, WAP_OPT_CLI, NULL },
	{ "approver", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ "no-auth", 0, WAP_OPT_BOOL, WAP_OPT_CLI, NULL },
	{ "no-sandbox", 0, WAP_OPT_BOOL, WAP_OPT_CLI, NULL },
	{ "max-connections", 0, WAP_OPT_INT, WAP_OPT_CLI, NULL },
	{ NULL }
};

/* What the command line asked for.  A new transport adds its field here,
 * reads it in serve_cfg_read() and starts in serve_main(). */
struct serve_cfg {
	const char *http;		/* HOST:PORT */
	const char *profile;
	const char *audit;
	const char *token;
	bool roots_from_client;
	char **allowed_hosts;		/* NULL-terminated, owned */
	char **allowed_origins;
	int workers;
	long long max_message;
	const char *ws;			/* --ws HOST:PORT */
	const char *token_file;
	long long session_ttl;
	const char *approver;
	bool no_auth;
	int max_conns;
	bool quiet;			/* LOG_LEVEL warn or error */
	char http_buf[300];		/* --http HOST with $PORT appended */
};

static char **split_list(const json_t *arr)
{
	char **v = NULL;
	json_t *s;
	size_t i;

	json_array_foreach(arr, i, s) {
		char *copy = strdup(json_string_value(s)), *save = NULL, *tok;
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (*tok)
				wap_strv_push(&v, tok);
		free(copy);
	}
	return v;
}

static void strv_add_list(char ***v, const char *list)
{
	char *copy = strdup(list), *save = NULL, *tok;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (*tok)
			wap_strv_push(v, tok);
	free(copy);
}

/* Defaults from the environment, for containers: what a Language Operator
 * LanguageTool (or a Deployment) sets.  An option on the command line wins;
 * lists add to the options'.  --http ADDRESS without a port (an IPv4
 * address, or [IPv6]) takes $PORT (8080 when unset), so the image's
 * `serve --http 0.0.0.0` follows PORT. */
static int serve_cfg_env(struct serve_cfg *c)
{
	const char *e, *p;
	struct in_addr a4;
	size_t n;

	if (!c->http && (e = getenv("WAP_HTTP")) && *e)
		c->http = e;
	if (c->http && (n = strlen(c->http)) && (c->http[n - 1] == ']' || inet_pton(AF_INET, c->http, &a4) == 1)) {
		p = getenv("PORT");
		if (!p || !*p)
			p = "8080";
		if (strspn(p, "0123456789") != strlen(p) || strlen(p) > 5 || atoi(p) > 65535) {
			fprintf(stderr, "wap serve: PORT must be a port number, not '%s'\n", p);
			return -1;
		}
		snprintf(c->http_buf, sizeof(c->http_buf), "%s:%s", c->http, p);
		c->http = c->http_buf;
	}
	if ((e = getenv("WAP_ALLOWED_HOSTS")))
		strv_add_list(&c->allowed_hosts, e);
	if ((e = getenv("WAP_ALLOWED_ORIGINS")))
		strv_add_list(&c->allowed_origins, e);
	if ((e = getenv("LOG_LEVEL")) && *e) {
		if (!strcasecmp(e, "debug")) {
			if (!c->audit)
				c->audit = "-";	/* one JSON line per call, on stderr */
		} else if (!strcasecmp(e, "warn") || !strcasecmp(e, "warning") || !strcasecmp(e, "error")) {
			c->quiet = true;
		} else if (strcasecmp(e, "info")) {
			fprintf(stderr, "wap serve: LOG_LEVEL must be debug, info, warn or error, not '%s'\n", e);
			return -1;
		}
	}
	return 0;
}

static int serve_cfg_read(const json_t *req, struct serve_cfg *c)
{
	long long n;
	bool b = false;

	memset(c, 0, sizeof(*c));
	wap_req_str(req, "http", &c->http, NULL);
	c->profile = getenv("WAP_PROFILE") && *getenv("WAP_PROFILE") ? getenv("WAP_PROFILE") : "wap";
	wap_req_str(req, "profile", &c->profile, NULL);
	wap_req_str(req, "audit", &c->audit, NULL);
	c->token = getenv("WAP_TOKEN");
	wap_req_str(req, "token", &c->token, NULL);
	if (c->token && !*c->token)
		c->token = NULL;
	wap_req_bool(req, "roots_from_client", &b, NULL);
	c->roots_from_client = b;
	c->allowed_hosts = split_list(json_object_get(req, "allowed_hosts"));
	c->allowed_origins = split_list(json_object_get(req, "allowed_origins"));
	c->workers = 4;
	if (wap_req_int(req, "workers", &n, NULL) == 1) {
		if (n < 1 || n > 256) {
			fprintf(stderr, "wap serve: --workers must be 1 to 256\n");
			return -1;
		}
		c->workers = (int)n;
	}
	if (wap_req_int(req, "max_message", &n, NULL) == 1) {
		if (n < 1024) {
			fprintf(stderr, "wap serve: --max-message must be at least 1024\n");
			return -1;
		}
		c->max_message = n;
	}
	wap_req_str(req, "ws", &c->ws, NULL);
	wap_req_str(req, "token_file", &c->token_file, NULL);
	wap_req_str(req, "approver", &c->approver, NULL);
	b = false;
	wap_req_bool(req, "no_auth", &b, NULL);
	c->no_auth = b;
	if (wap_req_int(req, "max_connections", &n, NULL) == 1) {
		if (n < 1 || n > 10000) {
			fprintf(stderr, "wap serve: --max-connections must be 1 to 10000\n");
			return -1;
		}
		c->max_conns = (int)n;
	}
	if (wap_req_int(req, "session_ttl", &c->session_ttl, NULL) == 1 && c->session_ttl < 1) {
		fprintf(stderr, "wap serve: --session-ttl must be at least 1 second\n");
		return -1;
	}
	return serve_cfg_env(c);
}

/* --ws HOST:PORT, [::1]:PORT, :PORT, HOST or PORT; defaults 127.0.0.1:19876. */
static int ws_addr(const char *spec, char *host, size_t hn, int *port)
{
	const char *colon = strrchr(spec, ':'), *hs = spec;
	size_t hl;
	char *end;
	long p = WAP_ACP_PORT;

	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');
		if (!rb)
			return -1;
		hs = spec + 1;
		hl = (size_t)(rb - hs);
		colon = rb[1] == ':' ? rb + 1 : NULL;
	} else if (colon) {
		hl = (size_t)(colon - spec);
	} else if (*spec && strspn(spec, "0123456789") == strlen(spec)) {
		hl = 0;
		colon = spec - 1;
	} else {
		hl = strlen(spec);
	}
	if (colon && colon[1]) {
		p = strtol(colon + 1, &end, 10);
		if (*end || p < 0 || p > 65535)
			return -1;
	}
	if (hl >= hn)
		return -1;
	if (hl)
		memcpy(host, hs, hl);
	else
		snprintf(host, hn, "127.0.0.1"), hl = strlen(host);
	host[hl] = 0;
	*port = (int)p;
	return 0;
}

static bool log_quiet;

/* The HTTP door's token and where it goes (the file is named once the
 * port is known: the default name carries it). */
struct http_token {
	struct wap_ws *ws;
	const char *token;		/* NULL: --no-auth */
	const char *file;		/* --token-file, or NULL */
	bool write;			/* generated, or a --token-file asked for */
	const char *written;		/* already written there (by --ws), or NULL */
};

static int http_listening(void *arg, const char *host, int port, const char *profile, struct wap_err *err)
{
	struct http_token *ht = arg;
	bool v6 = strchr(host, ':') != NULL;
	char *path = NULL, name[64];

	if (ht->token && ht->write) {
		snprintf(name, sizeof(name), "wap-http-%d.token", port);
		path = ht->file ? strdup(ht->file) : wap_token_state_file(name);
		if (!path)
			return wap_err_oom(err);
		if (wap_token_write(ht->ws, path, ht->token, err) < 0) {
			free(path);
			return -1;
		}
	}
	if (!log_quiet)
		fprintf(stderr, "wap serve: MCP at http://%s%s%s:%d/mcp (profile %s)\n",
			v6 ? "[" : "", host, v6 ? "]" : "", port, profile);
	if (!ht->token)
		fprintf(stderr, "wap serve: no authentication (--no-auth): any local process may call it\n");
	else if (path || ht->written)	/* the file, never the token */
		fprintf(stderr, "wap serve: bearer token in %s (send Authorization: Bearer $(cat %s))\n",
			path ? path : ht->written, path ? path : ht->written);
	fflush(stderr);
	free(path);
	return 0;
}

static void http_log(const char *line)
{
	fprintf(stderr, "wap serve: libwebsockets: %s", line);
}

static void acp_log(const char *line)
{
	fprintf(stderr, "wap serve: %s\n", line);
	fflush(stderr);
}

static int serve_main(struct wap_ws *ws, json_t *req, bool json, struct wap_cancel *cancel)
{
	struct serve_cfg cfg;
	struct wap_mcp_server srv = { 0 };
	struct wap_err err = { 0 };
	struct wap_acp *acp = NULL;
	char gen[65];
	const char *token;
	bool generated = false;
	int rc = 0;
	bool drain = false, nosandbox = false;

	(void)cancel;	/* (a server: each call has its own token) */

	(void)json;
	signal(SIGPIPE, SIG_IGN);
	if (serve_cfg_read(req, &cfg)) {
		rc = 2;
		goto out;
	}
	log_quiet = cfg.quiet;
	wap_req_bool(req, "drain", &drain, NULL);
	/* A client is the agent wap confines: its commands run in the sandbox
	 * unless the invoker says otherwise (--no-sandbox, or
	 * "security.sandbox": false in the config). */
	wap_req_bool(req, "no_sandbox", &nosandbox, NULL);
	if (!nosandbox && !wap_config_get(ws->config, "security.sandbox"))
		ws->pol.sandbox = true;
	/* language servers stay up between calls (`wap sym`, state.*) until
	 * idle for lsp.idleTimeout seconds (default 600), and end with us */
	wap_lsp_pool_warm((long)wap_config_int(ws->config, "lsp.idleTimeout", 600) * 1000);
	srv.ws = ws;
	srv.profile = wap_profile_find(cfg.profile);
	srv.roots_from_client = cfg.roots_from_client;
	srv.approver.command = cfg.approver;
	if (getenv("WAP_MCP_PAGE_SIZE"))	/* tests of pagination */
		srv.page_size = (size_t)atoi(getenv("WAP_MCP_PAGE_SIZE"));
	if (!srv.profile) {
		fprintf(stderr, "wap serve: unknown profile '%s' (wap, wap-1.0, langop, opencode, wti, acp)\n",
			cfg.profile);
		rc = 2;
		goto out;
	}
	wap_profile_limits(srv.profile, ws);	/* the document's limits, unless configured */
	/* One token for both doors: the config's, else --token/$WAP_TOKEN,
	 * else a random one (handed over in a file, never printed). */
	token = wap_config_str(ws->config, "token", "");
	if (!token || !*token)
		token = cfg.token;
	if (cfg.no_auth && !cfg.http) {
		fprintf(stderr, "wap serve: --no-auth is for --http (the WebSocket protocol always authenticates)\n");
		rc = 2;
		goto out;
	}
	if ((!token || !*token) && (!cfg.no_auth || cfg.ws)) {
		if (wap_token_random(gen, &err) < 0) {
			fprintf(stderr, "wap serve: %s\n", err.msg);
			rc = wap_err_exit(err.kind);
			goto out;
		}
		token = gen;
		generated = true;
	}
	if (cfg.audit && !(srv.audit = wap_audit_open(cfg.audit, &err))) {
		fprintf(stderr, "wap serve: %s\n", err.msg);
		rc = wap_err_exit(err.kind);
		goto out;
	}
	/* wap's own logs, when they lie beneath the root, are no client's to
	 * rewrite (a write replacing the audit log's inode took every later
	 * line; a sandboxed "> audit.jsonl" emptied it) */
	{
		const char *lf = cfg.ws && wap_config_bool(ws->config, "logging.logToFile", false) ?
				 wap_config_str(ws->config, "logging.file", NULL) : NULL;
		if ((cfg.audit && strcmp(cfg.audit, "-") && wap_ws_protect(ws, cfg.audit)) ||
		    (lf && *lf && wap_ws_protect(ws, lf))) {
			fprintf(stderr, "wap serve: out of memory\n");
			rc = 1;
			goto out;
		}
	}
	char host[256];
	if (cfg.ws) {
		struct wap_acp_opts ao = {
			.token_file = cfg.token_file, .session_ttl = (long)cfg.session_ttl,
			.approver = cfg.approver, .token = token, .audit = srv.audit,
			.log = acp_log,
		};
		if (ws_addr(cfg.ws, host, sizeof(host), &ao.port) < 0) {
			fprintf(stderr, "wap serve: --ws wants HOST:PORT, not '%s'\n", cfg.ws);
			rc = 2;
			goto out;
		}
		ao.host = host;
		if (!(acp = wap_acp_new(ws, &ao, &err))) {
			fprintf(stderr, "wap serve: %s\n", err.msg);
			rc = wap_err_exit(err.kind);
			goto out;
		}
	}
	if (cfg.http || cfg.ws) {
		/* one Origin allow-list for both doors (one server checks
		 * them): the config's allowedOrigins widen HTTP too */
		char **cfg_origins = NULL;
		if (wap_config_strv(ws->config, "allowedOrigins", &cfg_origins, &err) < 0) {
			fprintf(stderr, "wap serve: %s\n", err.msg);
			rc = wap_err_exit(err.kind);
			goto out;
		}
		for (size_t i = 0; cfg_origins && cfg_origins[i]; i++)
			wap_strv_push(&cfg.allowed_origins, cfg_origins[i]);
		wap_strv_free(cfg_origins);
	}
	if (cfg.http || cfg.ws) {
		/* one server for both doors: MCP on --http, the Agent Control
		 * Protocol on --ws (and on --http's port too) */
		struct http_token ht = {
			.ws = ws, .token = cfg.no_auth ? NULL : token, .file = cfg.token_file,
			/* beside --ws the token file is already written */
			.write = (generated && !cfg.ws) || (cfg.token_file && !cfg.ws),
			.written = acp ? wap_acp_token_file(acp) : NULL,
		};
		struct wap_http_opts h = {
			.listen = cfg.http,
			.acp = acp,
			.token = ht.token,
			.no_auth = cfg.no_auth,
			.max_conns = cfg.max_conns,
			.arg = &ht,
			.allowed_hosts = cfg.allowed_hosts,
			.allowed_origins = cfg.allowed_origins,
			.workers = cfg.workers,
			.lim.max_message = (size_t)cfg.max_message,
			.on_listen = http_listening,
			.log = http_log,
		};
		if (getenv("WAP_MCP_SESSION_IDLE"))	/* tests of expiry */
			h.session_idle_s = atoi(getenv("WAP_MCP_SESSION_IDLE"));
		if (getenv("WAP_HTTP_BODY_TIMEOUT"))	/* tests of trickled bodies */
			h.body_timeout_s = atoi(getenv("WAP_HTTP_BODY_TIMEOUT"));
		srv.transport = "http";
		if (wap_http_serve(&srv, &h, &err)) {
			fprintf(stderr, "wap serve: %s\n", err.msg);
			rc = wap_err_exit(err.kind);
		}
	} else {
		struct wap_stdio_opts s = {
			.in_fd = 0, .out_fd = 1, .workers = cfg.workers,
			.lim.max_message = (size_t)cfg.max_message,
			.drain = drain,
		};
		srv.transport = "stdio";
		if (wap_stdio_serve(&srv, &s)) {
			fprintf(stderr, "wap serve: reading stdin failed\n");
			rc = 125;
		}
	}
out:
	wap_acp_free(acp);
	wap_lsp_pool_stop();
	wap_audit_close(srv.audit);
	wap_err_release(&err);
	wap_strv_free(cfg.allowed_hosts);
	wap_strv_free(cfg.allowed_origins);
	explicit_bzero(gen, sizeof(gen));
	return rc;
}

static int serve_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	(void)call; (void)req; (void)res;
	return wap_err_set(err, WAP_E_INVALID, "serve runs only from the command line");
}

const struct wap_applet wap_applet_serve = {
	.name = "serve",
	.summary = wap_summary_serve,
	.usage = wap_usage_serve,
	.title = "Serve MCP",
	.opts = serve_opts,
	.op = serve_op,
	.flags = WAP_APPLET_NOTOOL,
	.cli_main = serve_main,
};
