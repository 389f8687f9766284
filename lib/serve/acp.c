/* serve/acp.c - the Agent Control Protocol over WebSocket.  See acp.h.
 *
 * The methods are name and shape mappings onto the applets' ops (their
 * request keys as the option tables name them), each run on the one road
 * of lib/serve/run.h (argument check, policy, approval, the op, its audit line),
 * as every other door runs them.  Terminals and watchers are sessions, not ops: they keep their
 * code (term.h, watch.h) behind the same gate (wap_run_begin/done).
 * Methods that only make sense inside a real editor or debugger answer
 * FeatureDisabled (-32009) with the reason. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lazy.h"
#include "acp.h"
#include "acp_lsp.h"
#include "applet.h"
#include "audit.h"
#include "config.h"
#include "file.h"
#include "http.h"
#include "jsonrpc.h"
#include "match.h"
#include "policy.h"
#include "run.h"
#include "strbuf.h"
#include "term.h"
#include "text.h"
#include "token.h"
#include "watch.h"

#define ACP_MAX_MESSAGE		(16u << 20)
#define ACP_MAX_QUEUE		(8u << 20)	/* bytes of notifications queued per client */
#define ACP_MAX_PREAUTH		(64u << 10)	/* a message before auth.authenticate */
#define ACP_DRAIN_MS		10000	/* calls under way at a stop get this long */
#define ACP_AUTH_TIMEOUT_S	30	/* a client must authenticate within */
#define ACP_MAX_AUTH_FAILURES	5
#define ACP_MAX_CLIENTS		256	/* connections at once (a thread each) */

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
	char **origins;			/* allowedOrigins and --allowed-origins, beside
					 * loopback ones; ["*"]: any */
	bool rate_on;
	long rate;			/* requests per second */
	int loglevel;			/* logging.level: LOG_DEBUG .. LOG_ERROR */
	int logfd;			/* logging.logToFile: the file, else -1 */
	char *log_file;
	unsigned long nclients;		/* clients so far, to name them in the log */
	/* the server */
	struct lws_context *ctx;
	struct lws_vhost *vh;
	int port;
	struct conn *conns;
	size_t nconns;
	volatile sig_atomic_t *stop;
	volatile sig_atomic_t own_stop;
	pthread_t thr;
	bool thread_started;
	pthread_mutex_t startmu;
	pthread_cond_t startcv;
	int start_state;		/* 0 starting, 1 listening, -1 failed */
	struct wap_err start_err;
	lws_sorted_usec_list_t sul;
	volatile bool closing;		/* the context is being destroyed */
	bool draining;			/* stopping: calls under way finish, no new ones */
	char addr[64];			/* the host, resolved */
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
	volatile sig_atomic_t cancelled;	/* the client went away */
};

/* ---------- small helpers ---------- */

static void random_hex(char *out, size_t nbytes)
{
	unsigned char b[64];
	size_t got = 0;

	if (nbytes > sizeof(b))
		nbytes = sizeof(b);
	while (got < nbytes) {
		ssize_t n = getrandom(b + got, nbytes - got, 0);
		if (n > 0)
			got += (size_t)n;
		else if (errno != EINTR)
			break;
	}
	for (size_t i = 0; i < nbytes; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static void make_uuid(char out[37])
{
	unsigned char b[16];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
		if (n > 0)
			got += (size_t)n;
		else if (errno != EINTR)
			break;
	}
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
		 b[12], b[13], b[14], b[15]);
}

/* Constant time in the length of the given string: no early exit. */
static bool token_equal(const char *want, const char *got)
{
	size_t lw = strlen(want), lg = strlen(got);
	unsigned char d = (unsigned char)(lw != lg);

	for (size_t i = 0; i < lg; i++)
		d |= (unsigned char)(got[i] ^ want[lw ? i % lw : 0]);
	return lw && !d;
}

static char *base64(const unsigned char *p, size_t n)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *o = malloc((n + 2) / 3 * 4 + 1), *q = o;

	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = p[i] << 16 | (i + 1 < n ? p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		*q++ = t[v >> 18 & 63];
		*q++ = t[v >> 12 & 63];
		*q++ = i + 1 < n ? t[v >> 6 & 63] : '=';
		*q++ = i + 2 < n ? t[v & 63] : '=';
	}
	*q = 0;
	return o;
}

static const char *language_id(const char *path)
{
	static const char *const map[][2] = {
		{ ".c", "c" }, { ".h", "c" }, { ".cc", "cpp" }, { ".cpp", "cpp" }, { ".cxx", "cpp" },
		{ ".hpp", "cpp" }, { ".py", "python" }, { ".js", "javascript" }, { ".mjs", "javascript" },
		{ ".cjs", "javascript" }, { ".jsx", "javascriptreact" }, { ".ts", "typescript" },
		{ ".tsx", "typescriptreact" }, { ".json", "json" }, { ".md", "markdown" },
		{ ".sh", "shellscript" }, { ".bash", "shellscript" }, { ".go", "go" }, { ".rs", "rust" },
		{ ".java", "java" }, { ".rb", "ruby" }, { ".php", "php" }, { ".html", "html" },
		{ ".htm", "html" }, { ".css", "css" }, { ".scss", "scss" }, { ".yaml", "yaml" },
		{ ".yml", "yaml" }, { ".toml", "toml" }, { ".xml", "xml" }, { ".sql", "sql" },
		{ ".lua", "lua" }, { ".swift", "swift" }, { ".kt", "kotlin" }, { ".cs", "csharp" },
		{ ".txt", "plaintext" },
	};
	const char *base = strrchr(path, '/'), *dot;

	base = base ? base + 1 : path;
	if (!strcmp(base, "Makefile") || !strcmp(base, "makefile") || !strcmp(base, "GNUmakefile"))
		return "makefile";
	if (!strcmp(base, "Dockerfile"))
		return "dockerfile";
	dot = strrchr(base, '.');
	for (size_t i = 0; dot && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcasecmp(dot, map[i][0]))
			return map[i][1];
	return "plaintext";
}

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

enum { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR, LOG_ALWAYS };
static const char *const level_names[] = { "DEBUG", "INFO", "WARN", "ERROR", "INFO" };

/* A line at LEVEL: to the server's log (stderr) unless quiet, and with a
 * time and the level to the log file when there is one.  The listening
 * line is LOG_ALWAYS: scripts read the port from it. */
static void log_line(struct wap_acp *a, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void log_line(struct wap_acp *a, int level, const char *fmt, ...)
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
static json_t *rpc_error(const json_t *id, int code, const char *msg, json_t *data)
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
static json_t *rpc_result(const json_t *id, json_t *res)
{
	return wap_rpc_result(id, res ? res : json_null());
}

#define notification wap_rpc_notification

/* ---------- sessions: notifications from other threads ---------- */

static void on_term_output(void *arg, const char *id, const char *data, size_t len)
{
	struct wap_acp_session *s = arg;
	size_t n;
	char *clean = wap_term_utf8(data, len, &n);

	if (!clean)
		return;
	s->notify(s->arg, notification("terminal.output",
		json_pack("{s:s, s:s%}", "terminalId", id, "data", clean, n)));
	free(clean);
}

static void on_term_exit(void *arg, const char *id, int code, int sig)
{
	struct wap_acp_session *s = arg;
	json_t *p = json_pack("{s:s}", "terminalId", id);

	if (sig)
		json_object_set_new(p, "signal", json_integer(sig));
	else
		json_object_set_new(p, "exitCode", json_integer(code));
	s->notify(s->arg, notification("terminal.closed", p));
}

static void on_file_change(void *arg, const char *path, const char *type)
{
	struct wap_acp_session *s = arg;

	s->notify(s->arg, notification("file.changed", json_pack("{s:s, s:s}", "path", path, "type", type)));
}

static void send_challenge(struct wap_acp_session *s)
{
	random_hex(s->nonce, 16);
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
	free(s);
}

/* ---------- method helpers ---------- */

struct ctx {
	struct wap_acp_session *s;
	struct wap_call call;
	struct wap_run run;	/* the one road: policy, approval, audit */
	const char *method;
	const json_t *params;
	int code;		/* set to override the JSON-RPC code of err */
};

static const struct wap_ws *WS(struct ctx *c) { return c->s->a->ws; }

static int need_str(struct ctx *c, const char *key, const char **out, struct wap_err *err)
{
	int r = wap_req_str(c->params, key, out, err);

	if (r == 0)
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: %s", key);
	return r < 0 ? -1 : 0;
}

/* A required path parameter, root-relative (malloc'd). */
static int rel_path(struct ctx *c, const char *key, char **rel, struct wap_err *err)
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
static int run_op(struct ctx *c, const char *name, json_t *req, json_t **res, struct wap_err *err)
{
	int r = wap_run_op(&c->run, name, req, res, err);

	json_decref(req);
	if (r == WAP_POLICY_UNAPPROVED)
		c->code = RPC_CANCELLED;
	return r ? -1 : 0;
}

static json_t *success(void)
{
	return json_pack("{s:b}", "success", 1);
}

/* The stat op on REL (a symbolic link is described, not followed). */
static int stat_op(struct ctx *c, const char *rel, json_t **st, struct wap_err *err)
{
	return run_op(c, "stat", json_pack("{s:s}", "path", rel), st, err);
}

/* A whole file's bytes, as fs.readFile and the editor.* reads give them
 * (no line window, no cut lines, base64 possible): the read op has no such
 * mode, so this is the read op's gate (policy, its audit line as "read")
 * around the beneath-root reader. */
static int read_raw(struct ctx *c, const char *rel, char **buf, size_t *len, struct stat *st,
		    struct wap_err *err)
{
	json_t *req = json_pack("{s:s}", "path", rel);
	double t0;
	int r = wap_run_begin(&c->run, "read", req, &t0, err);

	if (r == 0) {
		r = wap_read_file(WS(c), rel, WS(c)->lim.max_file_size, buf, len, st, err);
		wap_run_done(&c->run, "read", req, t0, r, err);
	}
	json_decref(req);
	return r ? -1 : 0;
}

/* ---------- fs.* ---------- */

static int read_text(struct ctx *c, const char *rel, bool b64, json_t **res, struct wap_err *err)
{
	char *buf;
	size_t len, bad;
	struct stat st;

	if (read_raw(c, rel, &buf, &len, &st, err) < 0)
		return -1;
	if (b64) {
		char *e = base64((unsigned char *)buf, len);
		free(buf);
		if (!e)
			return wap_err_set(err, WAP_E_FAILED, "out of memory");
		*res = json_pack("{s:s}", "content", e);
		free(e);
		return 0;
	}
	if (!wap_text_utf8_valid(buf, len, &bad)) {
		free(buf);
		return wap_err_set(err, WAP_E_INVALID, "Not UTF-8 text: %s (invalid byte at offset %zu; use encoding \"base64\")",
				   rel, bad);
	}
	*res = json_pack("{s:s%}", "content", buf, len);
	free(buf);
	return *res ? 0 : wap_err_set(err, WAP_E_FAILED, "out of memory");
}

static int m_fs_readFile(struct ctx *c, json_t **res, struct wap_err *err)
{
	const char *enc = "utf-8";
	char *rel;
	int r;

	if (wap_req_str(c->params, "encoding", &enc, err) < 0 || rel_path(c, "path", &rel, err) < 0)
		return -1;
	if (strcasecmp(enc, "utf-8") && strcasecmp(enc, "utf8") && strcasecmp(enc, "base64")) {
		free(rel);
		return wap_err_set(err, WAP_E_INVALID, "Unsupported encoding: %s (utf-8 or base64)", enc);
	}
	r = read_text(c, rel, !strcasecmp(enc, "base64"), res, err);
	free(rel);
	return r;
}

static int write_common(struct ctx *c, bool append, json_t **res, struct wap_err *err)
{
	const char *content;
	char *rel;
	json_t *req, *r2;

	if (need_str(c, "content", &content, err) < 0 || rel_path(c, "path", &rel, err) < 0)
		return -1;
	req = json_pack("{s:s, s:O, s:s}", "path", rel, "content", json_object_get(c->params, "content"),
			"mode", append ? "append" : "overwrite");
	free(rel);
	if (run_op(c, "write", req, &r2, err) < 0)
		return -1;
	*res = success();
	json_object_set(*res, "version", json_object_get(r2, "version"));
	json_decref(r2);
	return 0;
}

static int m_fs_writeFile(struct ctx *c, json_t **res, struct wap_err *err)
{
	return write_common(c, false, res, err);
}

static int m_fs_appendFile(struct ctx *c, json_t **res, struct wap_err *err)
{
	return write_common(c, true, res, err);
}

static int delete_common(struct ctx *c, bool dir, json_t **res, struct wap_err *err)
{
	bool recursive = false, isdir;
	char *rel;
	json_t *r2, *st = NULL;
	int r = -1;

	if (wap_req_bool(c->params, "recursive", &recursive, err) < 0 || rel_path(c, "path", &rel, err) < 0)
		return -1;
	if (stat_op(c, rel, &st, err) < 0)
		goto out;
	isdir = json_is_true(json_object_get(st, "isDirectory"));
	if (dir && !isdir) {
		wap_err_set(err, WAP_E_NOT_DIR, "Not a directory: %s (use fs.deleteFile)", rel);
		goto out;
	}
	if (!dir && isdir) {
		wap_err_set(err, WAP_E_NOT_FILE, "Not a file: %s (use fs.deleteDirectory)", rel);
		goto out;
	}
	if (run_op(c, "rm", json_pack("{s:s, s:b}", "path", rel, "recursive", dir && recursive), &r2, err) < 0)
		goto out;
	json_decref(r2);
	*res = success();
	r = 0;
out:
	json_decref(st);
	free(rel);
	return r;
}

static int m_fs_deleteFile(struct ctx *c, json_t **res, struct wap_err *err)
{
	return delete_common(c, false, res, err);
}

static int m_fs_deleteDirectory(struct ctx *c, json_t **res, struct wap_err *err)
{
	return delete_common(c, true, res, err);
}

static int two_paths(struct ctx *c, const char *k1, const char *k2, const char *applet, bool recursive,
		     json_t **res, struct wap_err *err)
{
	char *a = NULL, *b = NULL;
	json_t *req, *r2;
	int r = -1;

	if (rel_path(c, k1, &a, err) < 0 || rel_path(c, k2, &b, err) < 0)
		goto out;
	req = json_pack("{s:s, s:s}", "source", a, "destination", b);
	if (recursive)
		json_object_set_new(req, "recursive", json_true());
	if (run_op(c, applet, req, &r2, err) < 0)
		goto out;
	json_decref(r2);
	*res = success();
	r = 0;
out:
	free(a);
	free(b);
	return r;
}

static int m_fs_rename(struct ctx *c, json_t **res, struct wap_err *err)
{
	return two_paths(c, "oldPath", "newPath", "mv", false, res, err);
}

static int m_fs_copy(struct ctx *c, json_t **res, struct wap_err *err)
{
	return two_paths(c, "source", "destination", "cp", true, res, err);
}

static int m_fs_createDirectory(struct ctx *c, json_t **res, struct wap_err *err)
{
	char *rel;
	json_t *r2;
	int r;

	if (rel_path(c, "path", &rel, err) < 0)
		return -1;
	r = run_op(c, "mkdir", json_pack("{s:s}", "path", rel), &r2, err);
	free(rel);
	if (r < 0)
		return -1;
	json_decref(r2);
	*res = success();
	return 0;
}

static long long iso_to_ms(const char *s)
{
	struct tm tm = { 0 };
	const char *p;
	long long ms = 0;

	if (!s || !(p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
		return 0;
	if (*p == '.')
		ms = strtol(p + 1, NULL, 10);
	return (long long)timegm(&tm) * 1000 + ms;
}

static int m_fs_listDirectory(struct ctx *c, json_t **res, struct wap_err *err)
{
	bool recursive = false;
	char *rel;
	json_t *r2, *entries, *f, *req;
	size_t i;
	int r;

	if (wap_req_bool(c->params, "recursive", &recursive, err) < 0 || rel_path(c, "path", &rel, err) < 0)
		return -1;
	req = json_pack("{s:s, s:b, s:b}", "path", rel, "recursive", recursive, "metadata", 1);
	free(rel);
	r = run_op(c, "ls", req, &r2, err);
	if (r < 0)
		return -1;
	entries = json_array();
	json_array_foreach(json_object_get(r2, "files"), i, f) {
		const char *path = json_string_value(json_object_get(f, "path"));
		const char *name = path ? strrchr(path, '/') : NULL;
		json_t *md = json_object_get(f, "metadata"), *e;
		const char *type = json_is_true(json_object_get(f, "isDirectory")) ? "directory" : "file";

		if (!path)
			continue;
		if (json_is_true(json_object_get(f, "isSymlink")) || json_is_true(json_object_get(md, "isSymlink")) ||
		    json_is_true(json_object_get(md, "isSymbolicLink")))
			type = "symlink";
		e = json_pack("{s:s, s:s, s:s}", "name", name ? name + 1 : path, "path", path, "type", type);
		if (json_is_integer(json_object_get(md, "size")))
			json_object_set(e, "size", json_object_get(md, "size"));
		if (json_is_string(json_object_get(md, "lastModified")))
			json_object_set_new(e, "mtime", json_integer(iso_to_ms(json_string_value(json_object_get(md, "lastModified")))));
		json_array_append_new(entries, e);
	}
	*res = json_pack("{s:o}", "entries", entries);
	if (json_is_true(json_object_get(r2, "isTruncated")))
		json_object_set_new(*res, "isTruncated", json_true());
	json_decref(r2);
	return 0;
}

/* The stat op's --exists: a symbolic link is followed inside the root; a
 * link out of the root is ACCESS_DENIED, as through every door. */
static int m_fs_exists(struct ctx *c, json_t **res, struct wap_err *err)
{
	char *rel;
	json_t *r2;
	int r;

	if (rel_path(c, "path", &rel, err) < 0)
		return -1;
	r = run_op(c, "stat", json_pack("{s:s, s:b}", "path", rel, "exists", 1), &r2, err);
	free(rel);
	if (r < 0)
		return -1;
	*res = json_pack("{s:b, s:b, s:b}", "exists", json_is_true(json_object_get(r2, "exists")),
			 "isFile", json_is_true(json_object_get(r2, "isFile")),
			 "isDirectory", json_is_true(json_object_get(r2, "isDirectory")));
	json_decref(r2);
	return 0;
}

static int m_fs_stat(struct ctx *c, json_t **res, struct wap_err *err)
{
	char *rel;
	json_t *r2;
	int r;

	if (rel_path(c, "path", &rel, err) < 0)
		return -1;
	r = stat_op(c, rel, &r2, err);
	free(rel);
	if (r < 0)
		return -1;
	*res = json_pack("{s:I, s:I, s:I, s:b, s:b, s:b}",
		"size", json_integer_value(json_object_get(r2, "size")),
		"ctime", json_integer_value(json_object_get(r2, "ctime")),
		"mtime", json_integer_value(json_object_get(r2, "mtime")),
		"isFile", json_is_true(json_object_get(r2, "isFile")),
		"isDirectory", json_is_true(json_object_get(r2, "isDirectory")),
		"isSymbolicLink", json_is_true(json_object_get(r2, "isSymbolicLink")));
	json_decref(r2);
	return 0;
}

static int m_fs_watchFiles(struct ctx *c, json_t **res, struct wap_err *err)
{
	const char *pattern;
	char id[WAP_WATCH_ID_LEN];

	if (need_str(c, "pattern", &pattern, err) < 0)
		return -1;
	if (!WS(c)->pol.allow_fs)
		return wap_err_set(err, WAP_E_DISABLED,
			"File system access is disabled by policy (security.allowFileSystemAccess)");
	if (!c->s->watch && !(c->s->watch = wap_watch_new(WS(c), on_file_change, c->s, err)))
		return -1;
	if (wap_watch_add(c->s->watch, pattern, id, err) < 0)
		return -1;
	*res = json_pack("{s:s}", "watcherId", id);
	return 0;
}

static int m_fs_unwatchFiles(struct ctx *c, json_t **res, struct wap_err *err)
{
	const char *id;

	if (need_str(c, "watcherId", &id, err) < 0)
		return -1;
	if (!c->s->watch)
		return wap_err_set(err, WAP_E_NOT_FOUND, "Watcher not found: %s", id);
	if (wap_watch_remove(c->s->watch, id, err) < 0)
		return -1;
	*res = success();
	return 0;
}

/* ---------- search.* ---------- */

static int search_req(struct ctx *c, json_t **req, struct wap_err *err)
{
	const char *query;
	json_t *o = json_object_get(c->params, "options"), *v;
	bool regex = false, cs = false, ww = false;

	if (need_str(c, "query", &query, err) < 0)
		return -1;
	if (o && !json_is_object(o))
		return wap_err_set(err, WAP_E_INVALID, "options must be an object");
	if (wap_req_bool(o, "useRegex", &regex, err) < 0 || wap_req_bool(o, "caseSensitive", &cs, err) < 0 ||
	    wap_req_bool(o, "wholeWord", &ww, err) < 0)
		return -1;
	*req = json_pack("{s:s, s:b, s:b, s:b}", "pattern", query, "fixed_strings", !regex,
			 "ignore_case", !cs, "word_regexp", ww);
	if ((v = json_object_get(o, "include")) && json_is_string(v) && *json_string_value(v))
		json_object_set_new(*req, "include", json_pack("[O]", v));
	if ((v = json_object_get(o, "exclude")) && json_is_string(v) && *json_string_value(v))
		json_object_set_new(*req, "exclude", json_pack("[O]", v));
	if ((v = json_object_get(o, "maxResults")) && json_is_integer(v))
		json_object_set(*req, "max_results", v);
	return 0;
}

/* UTF-16 length of the first N bytes of S (LSP characters). */
static long utf16_len(const char *s, size_t n)
{
	long u = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if ((ch & 0xC0) != 0x80)
			u += ch >= 0xF0 ? 2 : 1;
	}
	return u;
}

static json_t *match_entry(long ln, const char *line, size_t b0, size_t b1)
{
	long sc = utf16_len(line, b0), ec = sc + utf16_len(line + b0, b1 - b0);

	return json_pack("{s:{s:{s:i, s:i}, s:{s:i, s:i}}, s:s}", "range",
			 "start", "line", (int)(ln - 1), "character", (int)sc,
			 "end", "line", (int)(ln - 1), "character", (int)ec, "preview", line);
}

static int m_search_findInFiles(struct ctx *c, json_t **res, struct wap_err *err)
{
	json_t *req, *r2, *m, *results, *byfile;
	struct wap_match_opts mo = { 0 };
	struct wap_matcher *mt;
	struct wap_mstate *ms;
	const char *pat;
	size_t i;

	if (search_req(c, &req, err) < 0)
		return -1;
	/* grep gives matching lines; the same matcher finds the columns. */
	pat = json_string_value(json_object_get(req, "pattern"));
	mo.patterns = &pat;
	mo.n = 1;
	mo.fixed = json_is_true(json_object_get(req, "fixed_strings"));
	mo.icase = json_is_true(json_object_get(req, "ignore_case"));
	mo.word = json_is_true(json_object_get(req, "word_regexp"));
	if (!(mt = wap_matcher_new(&mo, err))) {
		json_decref(req);
		return -1;
	}
	if (run_op(c, "grep", req, &r2, err) < 0) {
		wap_matcher_free(mt);
		return -1;
	}
	ms = wap_mstate_new(mt);
	byfile = json_object();
	results = json_array();
	json_array_foreach(json_object_get(r2, "matches"), i, m) {
		const char *path = json_string_value(json_object_get(m, "path"));
		const char *line = json_string_value(json_object_get(m, "matchText"));
		long ln = (long)json_integer_value(json_object_get(m, "line"));
		size_t n, off = 0, s0, s1;
		bool any = false;
		json_t *f;

		if (!path || !line)
			continue;
		f = json_object_get(byfile, path);
		if (!f) {
			f = json_pack("{s:s, s:[]}", "path", path, "matches");
			json_object_set_new(byfile, path, f);
			json_array_append(results, f);
		}
		n = strlen(line);
		if (ms)
			wap_match_begin(ms);
		while (ms && off <= n && wap_match_sub(mt, ms, line, n, off, &s0, &s1)) {
			json_array_append_new(json_object_get(f, "matches"), match_entry(ln, line, s0, s1));
			any = true;
			off = s1 > s0 ? s1 : s1 + 1;
		}
		if (ms && wap_match_error(ms, NULL)) {
			/* a regex limit: an error, as grep's own */
			wap_match_err(wap_match_error(ms, NULL), path, (size_t)ln, err);
			wap_mstate_free(ms);
			wap_matcher_free(mt);
			json_decref(results);
			json_decref(byfile);
			json_decref(r2);
			return -1;
		}
		if (!any)	/* a line cut short: the whole line */
			json_array_append_new(json_object_get(f, "matches"), match_entry(ln, line, 0, n));
	}
	*res = json_pack("{s:o}", "results", results);
	if (json_is_true(json_object_get(r2, "isTruncated")))
		json_object_set_new(*res, "isTruncated", json_true());
	wap_mstate_free(ms);
	wap_matcher_free(mt);
	json_decref(byfile);
	json_decref(r2);
	return 0;
}

static int m_search_findAndReplace(struct ctx *c, json_t **res, struct wap_err *err)
{
	const char *rep;
	json_t *req, *r2, *n;

	if (need_str(c, "replacement", &rep, err) < 0 || search_req(c, &req, err) < 0)
		return -1;
	json_object_set_new(req, "replace", json_string(rep));
	json_object_set_new(req, "write", json_true());
	if (run_op(c, "grep", req, &r2, err) < 0)
		return -1;
	n = json_object_get(r2, "count");
	if (!json_is_integer(n))
		n = json_object_get(r2, "totalMatches");
	*res = json_pack("{s:I}", "count", (json_int_t)json_integer_value(n));
	if (json_object_get(r2, "files"))
		json_object_set(*res, "files", json_object_get(r2, "files"));
	json_decref(r2);
	return 0;
}

/* ---------- git.* ---------- */

static int git(struct ctx *c, json_t *req, json_t **r2, struct wap_err *err)
{
	return run_op(c, "git", req, r2, err);
}

static int m_git_status(struct ctx *c, json_t **res, struct wap_err *err)
{
	json_t *r2, *changes, *f, *src;
	size_t i;

	if (git(c, json_pack("{s:s}", "action", "status"), &r2, err) < 0)
		return -1;
	changes = json_array();
	src = json_object_get(r2, "changes");
	if (!src)
		src = json_object_get(r2, "files");
	json_array_foreach(src, i, f) {
		json_t *path = json_object_get(f, "path"), *st = json_object_get(f, "status");
		if (json_is_string(path))
			json_array_append_new(changes, json_pack("{s:O, s:O}", "path", path,
					      "status", st ? st : json_string("modified")));
	}
	*res = json_pack("{s:O, s:o}", "branch", json_object_get(r2, "branch") ? json_object_get(r2, "branch") : json_null(),
			 "changes", changes);
	json_decref(r2);
	return 0;
}

static int m_git_diff(struct ctx *c, json_t **res, struct wap_err *err)
{
	bool staged = false;
	char *rel = NULL;
	json_t *req, *r2, *d;

	if (wap_req_bool(c->params, "staged", &staged, err) < 0 ||
	    wap_req_path(&c->call, c->params, "path", NULL, &rel, err) < 0)
		return -1;
	req = json_pack("{s:s, s:b}", "action", "diff", "staged", staged);
	if (rel)
		json_object_set_new(req, "paths", json_pack("[s]", rel));
	free(rel);
	if (git(c, req, &r2, err) < 0)
		return -1;
	d = json_object_get(r2, "diff");
	*res = json_pack("{s:O}", "diff", json_is_string(d) ? d : json_string(""));
	if (!json_is_string(d))
		json_object_set_new(*res, "diff", json_string(""));
	json_decref(r2);
	return 0;
}

static int m_git_log(struct ctx *c, json_t **res, struct wap_err *err)
{
	long long max = 50;
	char *rel = NULL;
	json_t *req, *r2, *entries, *e, *src;
	size_t i;

	if (wap_req_int(c->params, "maxEntries", &max, err) < 0 ||
	    wap_req_path(&c->call, c->params, "path", NULL, &rel, err) < 0)
		return -1;
	req = json_pack("{s:s, s:I}", "action", "log", "max_count", (json_int_t)max);
	if (rel)
		json_object_set_new(req, "paths", json_pack("[s]", rel));
	free(rel);
	if (git(c, req, &r2, err) < 0)
		return -1;
	entries = json_array();
	src = json_object_get(r2, "commits");
	if (!src)
		src = json_object_get(r2, "entries");
	json_array_foreach(src, i, e) {
		json_t *hash = json_object_get(e, "hash"), *msg = json_object_get(e, "message");
		json_t *author = json_object_get(e, "author"), *date = json_object_get(e, "date");

		if (!hash)
			hash = json_object_get(e, "id");
		if (!msg)
			msg = json_object_get(e, "summary");
		if (json_is_object(author))
			author = json_object_get(author, "name");
		json_array_append_new(entries, json_pack("{s:O, s:O, s:O, s:O}",
			"hash", hash ? hash : json_null(), "message", msg ? msg : json_null(),
			"author", author ? author : json_null(), "date", date ? date : json_null()));
	}
	*res = json_pack("{s:o}", "entries", entries);
	json_decref(r2);
	return 0;
}

static int git_paths(struct ctx *c, const char *action, json_t **res, struct wap_err *err)
{
	json_t *paths = json_object_get(c->params, "paths"), *v, *req, *r2, *files;
	size_t i;

	if (!json_is_array(paths) || !json_array_size(paths))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: paths (an array of paths)");
	files = json_array();
	json_array_foreach(paths, i, v) {
		char *rel;
		struct wap_err e2 = { 0 };
		if (!json_is_string(v) ||
		    wap_ws_rel(WS(c), json_string_value(v), json_string_length(v), &rel, &e2) < 0) {
			json_decref(files);
			if (!json_is_string(v))
				return wap_err_set(err, WAP_E_INVALID, "paths must be strings");
			*err = e2;
			return -1;
		}
		json_array_append_new(files, json_string(rel));
		free(rel);
	}
	req = json_pack("{s:s, s:o}", "action", action, "files", files);
	if (git(c, req, &r2, err) < 0)
		return -1;
	json_decref(r2);
	*res = success();
	return 0;
}

static int m_git_stage(struct ctx *c, json_t **res, struct wap_err *err)
{
	return git_paths(c, "add", res, err);
}

static int m_git_unstage(struct ctx *c, json_t **res, struct wap_err *err)
{
	return git_paths(c, "unstage", res, err);
}

static int m_git_commit(struct ctx *c, json_t **res, struct wap_err *err)
{
	const char *msg;
	json_t *r2, *h;

	if (need_str(c, "message", &msg, err) < 0)
		return -1;
	if (git(c, json_pack("{s:s, s:s}", "action", "commit", "message", msg), &r2, err) < 0)
		return -1;
	*res = success();
	if ((h = json_object_get(r2, "hash")) || (h = json_object_get(r2, "commit")))
		json_object_set(*res, "hash", h);
	json_decref(r2);
	return 0;
}

static int m_git_checkout(struct ctx *c, json_t **res, struct wap_err *err)
{
	const char *branch;
	bool create = false;
	json_t *r2;

	if (need_str(c, "branch", &branch, err) < 0 || wap_req_bool(c->params, "create", &create, err) < 0)
		return -1;
	if (git(c, json_pack("{s:s, s:s, s:b}", "action", "checkout", "branch", branch, "create", create), &r2, err) < 0)
		return -1;
	json_decref(r2);
	*res = success();
	return 0;
}

static int m_git_branches(struct ctx *c, json_t **res, struct wap_err *err)
{
	json_t *r2, *out, *b;
	size_t i;

	if (git(c, json_pack("{s:s}", "action", "branch"), &r2, err) < 0)
		return -1;
	out = json_array();
	json_array_foreach(json_object_get(r2, "branches"), i, b) {
		if (json_is_string(b))
			json_array_append_new(out, json_pack("{s:O, s:b}", "name", b, "current",
				json_is_string(json_object_get(r2, "current")) &&
				json_equal(b, json_object_get(r2, "current"))));
		else if (json_is_object(b))
			json_array_append_new(out, json_pack("{s:O, s:b}", "name", json_object_get(b, "name"),
				"current", json_is_true(json_object_get(b, "current"))));
	}
	*res = json_pack("{s:o}", "branches", out);
	json_decref(r2);
	return 0;
}

/* ---------- state.* ---------- */

static int m_state_getWorkspace(struct ctx *c, json_t **res, struct wap_err *err)
{
	const char *root = WS(c)->root, *base = strrchr(root, '/');

	(void)err;
	base = base && base[1] ? base + 1 : root;
	*res = json_pack("{s:[s], s:s}", "folders", root, "name", base);	/* the document's two fields */
	return 0;
}

/* ---------- editor.* (text operations on files) ---------- */

static int m_editor_getContent(struct ctx *c, json_t **res, struct wap_err *err)
{
	char *rel;
	int r;

	if (rel_path(c, "path", &rel, err) < 0)
		return -1;
	r = read_text(c, rel, false, res, err);
	if (r == 0)
		json_object_set_new(*res, "languageId", json_string(language_id(rel)));
	free(rel);
	return r;
}

static int m_editor_setContent(struct ctx *c, json_t **res, struct wap_err *err)
{
	if (write_common(c, false, res, err) < 0)
		return -1;
	json_object_del(*res, "version");
	return 0;
}

static json_t *lsp_edit(const json_t *range, const json_t *text)
{
	return json_pack("{s:O, s:O}", "range", range, "newText", text);
}

static int run_edits(struct ctx *c, json_t *edits, json_t **res, struct wap_err *err)
{
	char *rel;
	json_t *r2;
	int r;

	if (rel_path(c, "path", &rel, err) < 0) {
		json_decref(edits);
		return -1;
	}
	r = run_op(c, "edit", json_pack("{s:s, s:o}", "path", rel, "text_edits", edits), &r2, err);
	free(rel);
	if (r < 0)
		return -1;
	json_decref(r2);
	*res = NULL;
	return 0;
}

static bool is_pos(const json_t *p)
{
	return json_is_integer(json_object_get(p, "line")) && json_is_integer(json_object_get(p, "character"));
}

static bool is_range(const json_t *r)
{
	return is_pos(json_object_get(r, "start")) && is_pos(json_object_get(r, "end"));
}

static int m_editor_insertText(struct ctx *c, json_t **res, struct wap_err *err)
{
	json_t *pos = json_object_get(c->params, "position"), *text = json_object_get(c->params, "text");

	if (!is_pos(pos))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: position ({line, character})");
	if (!json_is_string(text))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: text");
	if (run_edits(c, json_pack("[{s:{s:O, s:O}, s:O}]", "range", "start", pos, "end", pos, "newText", text),
		      res, err) < 0)
		return -1;
	*res = success();
	return 0;
}

static int m_editor_replaceRange(struct ctx *c, json_t **res, struct wap_err *err)
{
	json_t *range = json_object_get(c->params, "range"), *text = json_object_get(c->params, "text");

	if (!is_range(range))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: range ({start, end})");
	if (!json_is_string(text))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: text");
	if (run_edits(c, json_pack("[o]", lsp_edit(range, text)), res, err) < 0)
		return -1;
	*res = success();
	return 0;
}

static int m_editor_deleteRange(struct ctx *c, json_t **res, struct wap_err *err)
{
	json_t *range = json_object_get(c->params, "range"), *empty = json_string("");
	int r;

	if (!is_range(range)) {
		json_decref(empty);
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: range ({start, end})");
	}
	r = run_edits(c, json_pack("[o]", lsp_edit(range, empty)), res, err);
	json_decref(empty);
	if (r < 0)
		return -1;
	*res = success();
	return 0;
}

static int m_editor_applyEdits(struct ctx *c, json_t **res, struct wap_err *err)
{
	json_t *edits = json_object_get(c->params, "edits"), *e, *out;
	size_t i, n;

	if (!json_is_array(edits))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: edits ([{range, text}])");
	out = json_array();
	json_array_foreach(edits, i, e) {
		json_t *text = json_object_get(e, "text");
		if (!text)
			text = json_object_get(e, "newText");
		if (!is_range(json_object_get(e, "range")) || !json_is_string(text)) {
			json_decref(out);
			return wap_err_set(err, WAP_E_INVALID, "edits[%zu] must be {range, text}", i);
		}
		json_array_append_new(out, lsp_edit(json_object_get(e, "range"), text));
	}
	n = json_array_size(out);
	if (n && run_edits(c, out, res, err) < 0)
		return -1;
	if (!n)
		json_decref(out);
	*res = json_pack("{s:I}", "applied", (json_int_t)n);
	return 0;
}

static int m_editor_getDocumentInfo(struct ctx *c, json_t **res, struct wap_err *err)
{
	char *rel, *buf, *abs, ver[WAP_VERSION_LEN + 1];
	size_t len;
	struct stat st;
	struct wap_sb uri = WAP_SB_INIT;

	if (rel_path(c, "path", &rel, err) < 0)
		return -1;
	if (read_raw(c, rel, &buf, &len, &st, err) < 0) {
		free(rel);
		return -1;
	}
	abs = wap_ws_abs(WS(c), rel);
	wap_sb_adds(&uri, "file://");
	for (const char *p = abs ? abs : rel; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    strchr("/-._~", ch))
			wap_sb_addc(&uri, (char)ch);
		else
			wap_sb_addf(&uri, "%%%02X", ch);
	}
	if (wap_blob_id(buf, len, ver, err) < 0)
		ver[0] = 0;
	/* No editor buffers: version is the file's mtime in ms (it grows
	 * with every write), contentVersion its git blob id. */
	*res = json_pack("{s:s, s:s, s:I, s:I, s:b, s:s, s:I}", "uri", uri.buf ? uri.buf : "",
		"languageId", language_id(rel),
		"version", (json_int_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000,
		"lineCount", (json_int_t)(len ? wap_text_count_lines(buf, len) : 1), "isDirty", 0,
		"contentVersion", ver, "size", (json_int_t)len);
	wap_sb_release(&uri);
	free(abs);
	free(buf);
	free(rel);
	return 0;
}

static int m_editor_save(struct ctx *c, json_t **res, struct wap_err *err)
{
	char *rel = NULL;
	json_t *st;

	if (wap_req_path(&c->call, c->params, "path", NULL, &rel, err) < 0)
		return -1;
	if (!rel) {
		c->code = RPC_NO_EDITOR;
		return wap_err_set(err, WAP_E_INVALID,
			"No active text editor: wap has no editor; pass path (files are saved as they are written)");
	}
	if (stat_op(c, rel, &st, err) < 0) {
		free(rel);
		return -1;
	}
	json_decref(st);
	free(rel);
	*res = success();	/* every write is already on disk */
	return 0;
}

static int m_editor_saveAll(struct ctx *c, json_t **res, struct wap_err *err)
{
	(void)c; (void)err;
	*res = success();
	return 0;
}

/* ---------- terminal.* ---------- */

static struct wap_terms *terms(struct ctx *c)
{
	if (!c->s->terms)
		c->s->terms = wap_terms_new(WS(c), on_term_output, on_term_exit, c->s);
	return c->s->terms;
}

static int term_id(struct ctx *c, const char **id, struct wap_err *err)
{
	return need_str(c, "terminalId", id, err);
}

static int m_terminal_create(struct ctx *c, json_t **res, struct wap_err *err)
{
	struct wap_term_opts o = { 0 };
	json_t *env = json_object_get(c->params, "env"), *v;
	const char *k, *name = NULL, *cwd = NULL;
	char **envv = NULL, id[WAP_TERM_ID_LEN];
	int r;

	if (wap_req_str(c->params, "name", &name, err) < 0 || wap_req_str(c->params, "cwd", &cwd, err) < 0)
		return -1;
	if (env && !json_is_object(env) && !json_is_null(env))
		return wap_err_set(err, WAP_E_INVALID, "env must be an object of strings");
	json_object_foreach(env, k, v) {
		struct wap_sb sb = WAP_SB_INIT;
		if (!json_is_string(v) || !*k || strchr(k, '=')) {
			wap_strv_free(envv);
			return wap_err_set(err, WAP_E_INVALID, "env must be an object of strings");
		}
		wap_sb_addf(&sb, "%s=%s", k, json_string_value(v));
		wap_strv_push(&envv, sb.buf ? sb.buf : "");
		wap_sb_release(&sb);
	}
	if (!WS(c)->pol.allow_terminal) {
		wap_strv_free(envv);
		return wap_err_set(err, WAP_E_DISABLED, "Terminal access is disabled (security.allowTerminalAccess)");
	}
	o.name = name;
	o.cwd = cwd;
	o.env = envv;
	r = wap_term_create(terms(c), &o, id, err);
	wap_strv_free(envv);
	if (r < 0)
		return -1;
	*res = json_pack("{s:s}", "terminalId", id);
	return 0;
}

static int m_terminal_dispose(struct ctx *c, json_t **res, struct wap_err *err)
{
	const char *id;

	if (term_id(c, &id, err) < 0 || wap_term_release(terms(c), id, err) < 0)
		return -1;
	*res = success();
	return 0;
}

static int m_terminal_sendText(struct ctx *c, json_t **res, struct wap_err *err)
{
	const char *id, *text;
	bool nl = true;
	json_t *jt;
	struct wap_sb sb = WAP_SB_INIT;
	int r;

	if (term_id(c, &id, err) < 0 || need_str(c, "text", &text, err) < 0 ||
	    wap_req_bool(c->params, "addNewLine", &nl, err) < 0)
		return -1;
	jt = json_object_get(c->params, "text");
	/* With a command list in force, what is typed is checked as a
	 * command line, as `wap exec` checks its commands. */
	if (wap_term_check_line(WS(c), text, err) < 0)
		return -1;
	wap_sb_add(&sb, text, json_string_length(jt));
	if (nl)
		wap_sb_addc(&sb, '\n');
	r = wap_term_send(terms(c), id, sb.buf ? sb.buf : "", sb.len, err);
	wap_sb_release(&sb);
	if (r < 0)
		return -1;
	*res = success();
	return 0;
}

static int m_terminal_show(struct ctx *c, json_t **res, struct wap_err *err)
{
	const char *id;

	if (term_id(c, &id, err) < 0 || wap_term_show(terms(c), id, err) < 0)
		return -1;
	*res = success();
	return 0;
}

static int m_terminal_list(struct ctx *c, json_t **res, struct wap_err *err)
{
	(void)err;
	*res = json_pack("{s:o}", "terminals", wap_term_list(terms(c)));
	return 0;
}

static int m_terminal_getActive(struct ctx *c, json_t **res, struct wap_err *err)
{
	*res = wap_term_active(terms(c));
	if (!*res)
		return wap_err_set(err, WAP_E_TERM_NOT_FOUND, "No active terminal");
	return 0;
}

static int m_terminal_getOutput(struct ctx *c, json_t **res, struct wap_err *err)
{
	const char *id;
	long long max = WAP_TERM_DEFAULT_LINES;
	char *out, *clean;
	size_t len, cl;
	bool trunc;
	struct wap_term_status st;

	if (term_id(c, &id, err) < 0 || wap_req_int(c->params, "maxLines", &max, err) < 0)
		return -1;
	if (max <= 0)
		return wap_err_set(err, WAP_E_INVALID, "maxLines must be positive");
	if (wap_term_output(terms(c), id, (size_t)max, &out, &len, &trunc, &st, err) < 0)
		return -1;
	clean = wap_term_utf8(out, len, &cl);
	free(out);
	if (!clean)
		return wap_err_set(err, WAP_E_FAILED, "out of memory");
	*res = json_pack("{s:s%, s:b, s:b}", "output", clean, cl, "truncated", trunc, "exited", st.exited);
	if (st.exited)
		json_object_set_new(*res, "exitCode", json_integer(st.exit_code));
	free(clean);
	return 0;
}

/* state.* and editor.formatDocument/getCompletions: language servers
 * (lib/serve/acp_lsp.c) */
static int m_lsp(struct ctx *c, json_t **res, struct wap_err *err)
{
	int r = wap_acp_lsp(&c->run, c->method, c->params, res, err);

	if (r == WAP_POLICY_UNAPPROVED)
		c->code = RPC_CANCELLED;
	return r ? -1 : 0;
}

/* ---------- the method table ---------- */

typedef int (*method_fn)(struct ctx *c, json_t **res, struct wap_err *err);

struct method {
	const char *name;
	method_fn fn;
	const char *disabled;	/* why, for methods needing a real editor */
};

#define NO_UI "needs an editor user interface (tabs, views, selections); wap serves files, not an editor"
#define NO_CMD "runs VS Code commands, which exist only inside VS Code, not in wap; use terminal.* to run programs"
#define NO_DBG "needs a debugger (Debug Adapter Protocol), which wap does not provide"

static const struct method methods[] = {
	{ "editor.openFile", NULL, NO_UI },
	{ "editor.closeFile", NULL, NO_UI },
	{ "editor.getContent", m_editor_getContent, NULL },
	{ "editor.setContent", m_editor_setContent, NULL },
	{ "editor.insertText", m_editor_insertText, NULL },
	{ "editor.replaceRange", m_editor_replaceRange, NULL },
	{ "editor.deleteRange", m_editor_deleteRange, NULL },
	{ "editor.setSelection", NULL, NO_UI },
	{ "editor.revealLine", NULL, NO_UI },
	{ "editor.getSelection", NULL, NO_UI },
	{ "editor.getActiveFile", NULL, NO_UI },
	{ "editor.getOpenFiles", NULL, NO_UI },
	{ "editor.getDocumentInfo", m_editor_getDocumentInfo, NULL },
	{ "editor.applyEdits", m_editor_applyEdits, NULL },
	{ "editor.save", m_editor_save, NULL },
	{ "editor.saveAll", m_editor_saveAll, NULL },
	{ "editor.formatDocument", m_lsp, NULL },
	{ "editor.getCompletions", m_lsp, NULL },
	{ "fs.readFile", m_fs_readFile, NULL },
	{ "fs.writeFile", m_fs_writeFile, NULL },
	{ "fs.appendFile", m_fs_appendFile, NULL },
	{ "fs.deleteFile", m_fs_deleteFile, NULL },
	{ "fs.rename", m_fs_rename, NULL },
	{ "fs.copy", m_fs_copy, NULL },
	{ "fs.createDirectory", m_fs_createDirectory, NULL },
	{ "fs.deleteDirectory", m_fs_deleteDirectory, NULL },
	{ "fs.listDirectory", m_fs_listDirectory, NULL },
	{ "fs.exists", m_fs_exists, NULL },
	{ "fs.stat", m_fs_stat, NULL },
	{ "fs.watchFiles", m_fs_watchFiles, NULL },
	{ "fs.unwatchFiles", m_fs_unwatchFiles, NULL },
	{ "terminal.create", m_terminal_create, NULL },
	{ "terminal.dispose", m_terminal_dispose, NULL },
	{ "terminal.sendText", m_terminal_sendText, NULL },
	{ "terminal.show", m_terminal_show, NULL },
	{ "terminal.list", m_terminal_list, NULL },
	{ "terminal.getActive", m_terminal_getActive, NULL },
	{ "terminal.getOutput", m_terminal_getOutput, NULL },
	{ "command.execute", NULL, NO_CMD },
	{ "command.list", NULL, NO_CMD },
	{ "state.getWorkspace", m_state_getWorkspace, NULL },
	{ "state.getDiagnostics", m_lsp, NULL },
	{ "state.getSymbols", m_lsp, NULL },
	{ "state.findReferences", m_lsp, NULL },
	{ "state.goToDefinition", m_lsp, NULL },
	{ "state.getHover", m_lsp, NULL },
	{ "state.getCodeActions", m_lsp, NULL },
	{ "state.getOpenDocuments", NULL, "needs an editor: wap keeps no open documents (every file is on disk)" },
	{ "state.getVisibleEditors", NULL, "needs an editor: wap has no visible editors" },
	{ "search.findInFiles", m_search_findInFiles, NULL },
	{ "search.findAndReplace", m_search_findAndReplace, NULL },
	{ "debug.startSession", NULL, NO_DBG },
	{ "debug.stopSession", NULL, NO_DBG },
	{ "debug.setBreakpoints", NULL, NO_DBG },
	{ "debug.removeBreakpoints", NULL, NO_DBG },
	{ "debug.getBreakpoints", NULL, NO_DBG },
	{ "debug.listSessions", NULL, NO_DBG },
	{ "git.status", m_git_status, NULL },
	{ "git.diff", m_git_diff, NULL },
	{ "git.log", m_git_log, NULL },
	{ "git.stage", m_git_stage, NULL },
	{ "git.unstage", m_git_unstage, NULL },
	{ "git.commit", m_git_commit, NULL },
	{ "git.checkout", m_git_checkout, NULL },
	{ "git.branches", m_git_branches, NULL },
	{ NULL, NULL, NULL }
};

/* Is the method's category turned off by policy?  Returns the reason. */
static const char *category_off(const struct wap_ws *ws, const char *method, char *buf, size_t n)
{
	const char *dot = strchr(method, '.');
	size_t cl = dot ? (size_t)(dot - method) : strlen(method);
	char *const *allowed = ws->pol.allowed_categories;

	if (allowed && allowed[0]) {
		bool ok = false;
		for (size_t i = 0; allowed[i]; i++)
			ok |= strlen(allowed[i]) == cl && !strncmp(allowed[i], method, cl);
		if (!ok) {
			snprintf(buf, n, "Method category '%.*s' is disabled (not in security.allowedMethodCategories)",
				 (int)cl, method);
			return buf;
		}
	}
	if (!ws->pol.allow_fs && (!strncmp(method, "fs.", 3) || !strncmp(method, "editor.", 7) ||
				  !strncmp(method, "search.", 7))) {
		snprintf(buf, n, "File system access is disabled by policy (security.allowFileSystemAccess)");
		return buf;
	}
	if (!ws->pol.allow_terminal && !strncmp(method, "terminal.", 9)) {
		snprintf(buf, n, "Terminal access is disabled (security.allowTerminalAccess)");
		return buf;
	}
	return NULL;
}

/* ---------- dispatch ---------- */

/* Methods that run no applet op: sessions (terminals, watchers) and the
 * server's own state.  They pass the one road's gate under their own
 * name (policy by the table of lib/serve/policy.c, an audit line); every other
 * method runs its ops on the road, each audited there. */
static bool session_method(const char *method)
{
	static const char *const names[] = {
		"fs.watchFiles", "fs.unwatchFiles", "state.getWorkspace", "editor.saveAll", NULL
	};

	if (!strncmp(method, "terminal.", 9))
		return true;
	for (int i = 0; names[i]; i++)
		if (!strcmp(method, names[i]))
			return true;
	return false;
}

static json_t *err_reply(const json_t *id, struct ctx *c, struct wap_err *err)
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
	return rpc_error(id, code, err->msg, data);
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
		log_line(s->a, LOG_WARN, "ws: client %lu: rate limited (over %ld requests a second)",
			 s->num, s->a->rate);
	return s->rate_count <= s->a->rate;
}

static json_t *authenticate(struct wap_acp_session *s, const json_t *id, const json_t *params, bool *close)
{
	const char *token = json_string_value(json_object_get(params, "token"));
	const char *nonce = json_string_value(json_object_get(params, "nonce"));
	json_t *res;

	if (!token || !nonce)
		return rpc_error(id, RPC_PARAMS, "Missing parameter: token and nonce (strings)", NULL);
	/* Compare both, always, so timing says nothing about which failed. */
	bool nonce_ok = s->nonce[0] && token_equal(s->nonce, nonce);
	bool token_ok = token_equal(s->a->token, token);
	if (!nonce_ok || !token_ok) {
		res = json_pack("{s:b, s:s}", "authenticated", 0, "error", !nonce_ok ? "Invalid nonce" : "Invalid token");
		log_line(s->a, LOG_WARN, "ws: client %lu: authentication failed (%s)", s->num,
			 !nonce_ok ? "invalid nonce" : "invalid token");
		if (++s->failures >= ACP_MAX_AUTH_FAILURES) {
			*close = true;
			log_line(s->a, LOG_WARN, "ws: client %lu closed: %d failed authentications", s->num,
				 ACP_MAX_AUTH_FAILURES);
		}
		return rpc_result(id, res);
	}
	__atomic_store_n(&s->authed, true, __ATOMIC_SEQ_CST);
	s->failures = 0;
	s->nonce[0] = 0;	/* a nonce is good for one authentication */
	s->auth_at = time(NULL);
	make_uuid(s->session_id);
	log_line(s->a, LOG_INFO, "ws: client %lu authenticated, session %s", s->num, s->session_id);
	return rpc_result(id, json_pack("{s:b, s:s}", "authenticated", 1, "sessionId", s->session_id));
}

/* One request (ID non-NULL) or notification (ID NULL), already checked
 * by the JSON-RPC core. */
static json_t *handle_call(struct wap_acp_session *s, const char *method, const json_t *params,
			   const json_t *id, bool *close)
{
	struct wap_acp *a = s->a;
	const struct method *m;
	struct ctx c = { 0 };
	struct wap_err err = { 0 };
	json_t *res = NULL, *reply, *empty = NULL;
	char why[160];
	struct timespec t0;
	struct wap_approver ap = { a->o.approver, a->o.approver_timeout_ms };
	double start;
	int rc;

	if (!rate_ok(s))
		return id ? rpc_error(id, RPC_RATE, "Rate limited: too many requests (rateLimit.requestsPerSecond)",
				      json_pack("{s:I}", "limit", (json_int_t)a->rate)) : NULL;
	if (params && !json_is_object(params))
		return id ? rpc_error(id, RPC_PARAMS, "Invalid params: params must be an object", NULL) : NULL;
	if (!strcmp(method, "auth.authenticate"))
		return id ? authenticate(s, id, params, close) : NULL;
	if (!s->authed)
		return id ? rpc_error(id, RPC_UNAUTH,
			"Unauthorized: authenticate first (auth.authenticate with the token and the nonce of auth.challenge)",
			NULL) : NULL;
	if (a->o.session_ttl > 0 && time(NULL) - s->auth_at >= a->o.session_ttl) {
		log_line(a, LOG_INFO, "ws: client %lu: session %s expired", s->num, s->session_id);
		__atomic_store_n(&s->authed, false, __ATOMIC_SEQ_CST);
		send_challenge(s);
		return id ? rpc_error(id, RPC_EXPIRED, "Session expired: authenticate again (a new auth.challenge was sent)",
				      json_pack("{s:I}", "sessionTtl", (json_int_t)a->o.session_ttl)) : NULL;
	}
	for (m = methods; m->name && strcmp(m->name, method); m++)
		;
	if (!m->name)
		return id ? rpc_error(id, RPC_NO_METHOD, "Method not found", json_pack("{s:s}", "method", method)) : NULL;
	if (category_off(a->ws, method, why, sizeof(why)))
		return id ? rpc_error(id, RPC_DISABLED, why, json_pack("{s:s}", "method", method)) : NULL;
	if (m->disabled) {
		char msg[300];
		snprintf(msg, sizeof(msg), "Feature disabled: %s %s", method, m->disabled);
		return id ? rpc_error(id, RPC_DISABLED, msg, json_pack("{s:s}", "method", method)) : NULL;
	}
	c.s = s;
	c.method = method;
	c.params = params ? params : (empty = json_object());
	c.call.ws = a->ws;
	c.call.session = s->session_id;
	c.call.cancelled = &s->cancelled;
	c.run.call = &c.call;
	c.run.audit = a->o.audit;
	c.run.approver = &ap;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!session_method(method)) {
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
			log_line(a, err.kind == WAP_E_FAILED ? LOG_ERROR : LOG_DEBUG,
				 "ws: client %lu: %s failed in %.1f ms: %s: %s", s->num, method, ms,
				 wap_err_code(err.kind), err.msg);
		else
			log_line(a, LOG_DEBUG, "ws: client %lu: %s in %.1f ms", s->num, method, ms);
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
	return rpc_result(id, res);
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
	struct wap_rpc_limits lim = { .max_message = ACP_MAX_MESSAGE, .max_batch = 1000 };
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
		return wap_err_set(err, WAP_E_FAILED, "out of memory");
	a->logfd = open(a->log_file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
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
		wap_err_set(err, WAP_E_FAILED, "out of memory");
		return NULL;
	}
	a->ws = ws;
	a->o = *o;
	a->logfd = -1;
	if (!a->o.host || !*a->o.host)
		a->o.host = "127.0.0.1";
	pthread_mutex_init(&a->startmu, NULL);
	pthread_cond_init(&a->startcv, NULL);
	a->rate_on = wap_config_bool(ws->config, "rateLimit.enabled", true);
	a->rate = (long)wap_config_int(ws->config, "rateLimit.requestsPerSecond", 100);
	if (wap_config_strv(ws->config, "allowedOrigins", &a->origins, err) < 0)
		goto fail;
	for (size_t i = 0; o->allowed_origins && o->allowed_origins[i]; i++)
		if (wap_strv_push(&a->origins, o->allowed_origins[i]) < 0) {
			wap_err_set(err, WAP_E_FAILED, "out of memory");
			goto fail;
		}
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
		wap_err_set(err, WAP_E_FAILED, "out of memory");
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
	wap_strv_free(a->origins);
	wap_err_release(&a->start_err);
	pthread_mutex_destroy(&a->startmu);
	pthread_cond_destroy(&a->startcv);
	free(a);
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

/* ---------- the WebSocket server ---------- */

struct qmsg {
	struct qmsg *next;
	size_t len;
	bool droppable;
	unsigned char buf[];	/* LWS_PRE + len */
};

struct conn {
	struct conn *next;
	struct wap_acp *a;
	struct lws *wsi;
	struct wap_acp_session *s;
	pthread_mutex_t mu;
	struct qmsg *head, *tail;
	size_t qbytes;
	unsigned long dropped;
	bool close_after;
	enum lws_close_status close_status;
	struct wap_sb rx;
	/* requests are handled in order on the connection's own thread, so
	 * a slow call (a big search, an approval) holds up no other client */
	pthread_t worker;
	bool worker_on;
	pthread_cond_t cv;
	struct inmsg *in_head, *in_tail;
	size_t in_count;
	bool stopping;
	bool busy;			/* the worker is handling a message */
	time_t t0;			/* connected at (monotonic) */
};

struct inmsg {
	struct inmsg *next;
	size_t len;
	char text[];
};

#define ACP_MAX_PENDING 256	/* messages waiting per client */

static void enqueue(struct conn *c, json_t *msg, bool droppable)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	size_t n;
	struct qmsg *q;

	json_decref(msg);
	if (!text)
		return;
	n = strlen(text);
	pthread_mutex_lock(&c->mu);
	if (droppable && c->qbytes + n > ACP_MAX_QUEUE) {
		c->dropped++;
		pthread_mutex_unlock(&c->mu);
		free(text);
		return;
	}
	q = malloc(sizeof(*q) + LWS_PRE + n);
	if (q) {
		q->next = NULL;
		q->len = n;
		q->droppable = droppable;
		memcpy(q->buf + LWS_PRE, text, n);
		if (c->tail)
			c->tail->next = q;
		else
			c->head = q;
		c->tail = q;
		c->qbytes += n;
	}
	pthread_mutex_unlock(&c->mu);
	free(text);
}

/* From any thread: queue a notification and wake the service loop. */
static void conn_notify(void *arg, json_t *msg)
{
	struct conn *c = arg;
	const char *m = json_string_value(json_object_get(msg, "method"));
	bool droppable = m && (!strcmp(m, "terminal.output") || !strcmp(m, "file.changed"));

	enqueue(c, msg, droppable);
	if (c->a->ctx && !c->a->closing)
		lws_cancel_service(c->a->ctx);
}

static void enqueue(struct conn *c, json_t *msg, bool droppable);

static void *conn_worker(void *arg)
{
	struct conn *c = arg;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		struct inmsg *m;
		json_t *reply;
		bool close = false;

		while (!c->in_head && !c->stopping)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->stopping)
			break;
		m = c->in_head;
		c->in_head = m->next;
		if (!c->in_head)
			c->in_tail = NULL;
		c->in_count--;
		c->busy = true;
		pthread_mutex_unlock(&c->mu);
		reply = wap_acp_handle(c->s, m->text, m->len, &close);
		free(m);
		if (close) {
			pthread_mutex_lock(&c->mu);
			c->close_after = true;
			c->close_status = LWS_CLOSE_STATUS_POLICY_VIOLATION;
			pthread_mutex_unlock(&c->mu);
		}
		if (reply)
			enqueue(c, reply, false);
		pthread_mutex_lock(&c->mu);
		c->busy = false;
		pthread_mutex_unlock(&c->mu);
		if (!c->a->closing)
			lws_cancel_service(c->a->ctx);
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* A browser always sends Origin on a WebSocket upgrade: a page from
 * elsewhere (DNS rebinding, a cross-site page) is refused unless its
 * origin is loopback or listed (the same allow-list as MCP over HTTP);
 * a client that is no browser sends none. */
static bool origin_ok(struct wap_acp *a, struct lws *wsi)
{
	char origin[512];
	int l = lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN);

	if (l <= 0)
		return true;
	if (l >= (int)sizeof(origin) || lws_hdr_copy(wsi, origin, sizeof(origin), WSI_TOKEN_ORIGIN) <= 0)
		return false;
	return wap_http_origin_ok(origin, a->origins);
}


/* Stop the worker and end the session (terminals killed, watchers
 * stopped): after this no other thread touches C. */
static void conn_stop(struct conn *c)
{
	if (c->worker_on) {
		pthread_mutex_lock(&c->mu);
		c->stopping = true;
		pthread_cond_signal(&c->cv);
		pthread_mutex_unlock(&c->mu);
		if (c->s)
			c->s->cancelled = 1;	/* an approval or a long op gives up */
		pthread_join(c->worker, NULL);
		c->worker_on = false;
	}
	wap_acp_session_free(c->s);
	c->s = NULL;
}

static void conn_free(struct conn *c)
{
	struct wap_acp *a = c->a;

	for (struct conn **pp = &a->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			a->nconns--;
			break;
		}
	conn_stop(c);
	while (c->in_head) {
		struct inmsg *m = c->in_head;
		c->in_head = m->next;
		free(m);
	}
	while (c->head) {
		struct qmsg *q = c->head;
		c->head = q->next;
		free(q);
	}
	wap_sb_release(&c->rx);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* While stopping, every request (of a batch too) gets this answer. */
static json_t *refuse_stopping(void *arg, const struct wap_rpc_msg *m)
{
	(void)arg;
	if (m->kind != WAP_RPC_REQUEST)
		return NULL;
	return rpc_error(m->id, RPC_INTERNAL, "Server stopping: no new requests", NULL);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct wap_acp *a = lws_context_user(lws_get_context(wsi));
	struct conn **pc = user, *c = pc ? *pc : NULL;

	switch (reason) {
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		if (a->draining) {
			lws_return_http_status(wsi, HTTP_STATUS_SERVICE_UNAVAILABLE, "The server is stopping");
			return 1;
		}
		if (!origin_ok(a, wsi)) {	/* 403, said before the upgrade */
			log_line(a, LOG_WARN, "ws: connection refused: Origin not in allowedOrigins");
			lws_return_http_status(wsi, HTTP_STATUS_FORBIDDEN,
					       "Origin not allowed (see allowedOrigins / --allowed-origins)");
			return 1;
		}
		break;
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		if (!origin_ok(a, wsi)) {
			log_line(a, LOG_WARN, "ws: connection refused: Origin not in allowedOrigins");
			return 1;
		}
		if (a->nconns >= ACP_MAX_CLIENTS) {
			log_line(a, LOG_WARN, "ws: connection refused: %d clients already", ACP_MAX_CLIENTS);
			return 1;
		}
		break;
	case LWS_CALLBACK_ESTABLISHED:
		c = calloc(1, sizeof(*c));
		if (!c)
			return -1;
		c->a = a;
		c->wsi = wsi;
		{
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			c->t0 = ts.tv_sec;
		}
		pthread_mutex_init(&c->mu, NULL);
		*pc = c;
		c->next = a->conns;
		a->conns = c;
		a->nconns++;
		pthread_cond_init(&c->cv, NULL);
		c->s = wap_acp_session_new(a, conn_notify, c);
		if (!c->s)
			return -1;
		c->worker_on = !pthread_create(&c->worker, NULL, conn_worker, c);
		if (!c->worker_on)
			return -1;
		log_line(a, LOG_INFO, "ws: client %lu connected", c->s->num);
		lws_callback_on_writable(wsi);
		break;
	case LWS_CALLBACK_RECEIVE: {
		struct inmsg *m;
		bool full;

		if (!c)
			return -1;
		/* before authentication only small messages: a client that has
		 * not shown the token cannot make us hold megabytes */
		if (c->rx.len + len > (c->s && __atomic_load_n(&c->s->authed, __ATOMIC_SEQ_CST) ?
				       ACP_MAX_MESSAGE : ACP_MAX_PREAUTH)) {
			lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, (unsigned char *)"too large", 9);
			return -1;
		}
		wap_sb_add(&c->rx, in, len);
		if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi))
			break;
		if (a->draining) {	/* stopping: a new request is refused */
			struct wap_rpc_limits lim = { .max_message = ACP_MAX_MESSAGE, .max_batch = 1000 };
			json_t *v = wap_rpc_process(c->rx.buf ? c->rx.buf : "", c->rx.len, &lim, refuse_stopping, NULL);
			c->rx.len = 0;
			if (v)
				enqueue(c, v, false);
			lws_callback_on_writable(wsi);
			break;
		}
		m = malloc(sizeof(*m) + c->rx.len + 1);
		if (!m)
			return -1;
		m->next = NULL;
		m->len = c->rx.len;
		memcpy(m->text, c->rx.buf ? c->rx.buf : "", c->rx.len);
		m->text[m->len] = 0;
		c->rx.len = 0;
		pthread_mutex_lock(&c->mu);
		full = c->in_count >= ACP_MAX_PENDING;
		if (!full) {
			if (c->in_tail)
				c->in_tail->next = m;
			else
				c->in_head = m;
			c->in_tail = m;
			c->in_count++;
			pthread_cond_signal(&c->cv);
		}
		pthread_mutex_unlock(&c->mu);
		if (full) {
			free(m);
			log_line(a, LOG_WARN, "ws: client %lu closed: more than %d requests waiting",
				 c->s->num, ACP_MAX_PENDING);
			lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, (unsigned char *)"flood", 5);
			return -1;
		}
		break;
	}
	case LWS_CALLBACK_SERVER_WRITEABLE: {
		struct qmsg *q;
		bool more, close;

		if (!c)
			break;
		pthread_mutex_lock(&c->mu);
		q = c->head;
		if (q) {
			c->head = q->next;
			if (!c->head)
				c->tail = NULL;
			c->qbytes -= q->len;
		}
		more = c->head != NULL;
		close = c->close_after;
		pthread_mutex_unlock(&c->mu);
		if (q) {
			int w = lws_write(wsi, q->buf + LWS_PRE, q->len, LWS_WRITE_TEXT);
			free(q);
			if (w < 0)
				return -1;
		}
		if (more)
			lws_callback_on_writable(wsi);
		else if (close) {
			lws_close_reason(wsi, c->close_status, NULL, 0);
			return -1;
		}
		break;
	}
	case LWS_CALLBACK_CLOSED:
		if (c) {
			if (c->s)
				log_line(a, LOG_INFO, "ws: client %lu disconnected", c->s->num);
			conn_free(c);
			*pc = NULL;
		}
		break;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		for (struct conn *k = a ? a->conns : NULL; k; k = k->next) {
			bool any;
			pthread_mutex_lock(&k->mu);
			any = k->head != NULL || k->close_after;
			pthread_mutex_unlock(&k->mu);
			if (any)
				lws_callback_on_writable(k->wsi);
		}
		break;
	default:
		break;
	}
	return 0;
}

static const struct lws_protocols protocols[] = {
	{ "acp", callback, sizeof(struct conn *), 65536, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

/* A client that never authenticates would hold a connection (and its
 * thread) for ever: it is closed after ACP_AUTH_TIMEOUT_S. */
static void tick(lws_sorted_usec_list_t *sul)
{
	struct wap_acp *a = lws_container_of(sul, struct wap_acp, sul);
	const char *env = getenv("WAP_ACP_AUTH_TIMEOUT");	/* tests */
	long limit = env && atol(env) > 0 ? atol(env) : ACP_AUTH_TIMEOUT_S;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (struct conn *c = a->conns; c; c = c->next) {
		bool late;
		if (!c->s)
			continue;
		if (__atomic_load_n(&c->s->authed, __ATOMIC_SEQ_CST)) {
			c->t0 = now.tv_sec;	/* an expired session gets as long again */
			continue;
		}
		pthread_mutex_lock(&c->mu);
		late = !c->close_after && now.tv_sec - c->t0 > limit;
		if (late) {
			c->close_after = true;
			c->close_status = LWS_CLOSE_STATUS_POLICY_VIOLATION;
		}
		pthread_mutex_unlock(&c->mu);
		if (late) {
			log_line(a, LOG_WARN, "ws: client %lu closed: no authentication within %ld s", c->s->num, limit);
			lws_callback_on_writable(c->wsi);
		}
	}

	lws_sul_schedule(a->ctx, 0, &a->sul, tick, 100 * LWS_US_PER_MS);
}

static int listen_ctx(struct wap_acp *a, struct wap_err *err)
{
	struct lws_context_creation_info info;
	struct addrinfo hints = { .ai_flags = AI_NUMERICSERV, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	bool v6;

	/* libwebsockets wants an address (or an interface name): resolve
	 * a host name such as "localhost" first. */
	if (getaddrinfo(a->o.host, NULL, &hints, &ai) == 0 && ai) {
		if (getnameinfo(ai->ai_addr, ai->ai_addrlen, a->addr, sizeof(a->addr), NULL, 0, NI_NUMERICHOST) == 0)
			a->o.host = a->addr;
		freeaddrinfo(ai);
	}
	v6 = strchr(a->o.host, ':') != NULL;
	memset(&info, 0, sizeof(info));
	info.port = a->o.port;
	info.iface = a->o.host;
	info.protocols = protocols;
	info.user = a;
	info.gid = -1;
	info.uid = -1;
	/* FAIL_UPON_UNABLE_TO_BIND: else a port that cannot be bound is only
	 * logged, and the server would announce itself listening on nothing */
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6 * !v6 | LWS_SERVER_OPTION_VALIDATE_UTF8 |
		       LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
	info.timeout_secs = 30;
	info.ka_time = 0;
	if (wap_lazy_load(WAP_LIB_LWS, err))
		return -1;
	a->ctx = lws_create_context(&info);
	if (!a->ctx)
		return wap_err_set(err, WAP_E_FAILED, "Cannot listen on ws://%s:%d", a->o.host, a->o.port);
	a->vh = lws_get_vhost_by_name(a->ctx, "default");
	a->port = a->vh ? lws_get_vhost_listen_port(a->vh) : a->o.port;
	if (a->port <= 0) {
		lws_context_destroy(a->ctx);
		a->ctx = NULL;
		return wap_err_set(err, WAP_E_FAILED, "Cannot listen on ws://%s:%d", a->o.host, a->o.port);
	}
	lws_sul_schedule(a->ctx, 0, &a->sul, tick, 100 * LWS_US_PER_MS);
	log_line(a, LOG_ALWAYS, "Agent Control Protocol on ws://%s%s%s:%d (token in %s)", v6 ? "[" : "", a->o.host,
		 v6 ? "]" : "", a->port, a->token_file);
	return 0;
}

static void serve_loop(struct wap_acp *a)
{
	struct timespec t0, now;

	while (!*a->stop)
		if (lws_service(a->ctx, 0) < 0)
			break;
	/* drain: the requests each client sent before the stop are handled
	 * and answered (ACP_DRAIN_MS at most); new ones are refused */
	a->draining = true;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		bool idle = true;
		for (struct conn *c = a->conns; c && idle; c = c->next) {
			pthread_mutex_lock(&c->mu);
			idle = !c->busy && !c->in_head;
			pthread_mutex_unlock(&c->mu);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (idle || (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 > ACP_DRAIN_MS)
			break;
		if (lws_service(a->ctx, 0) < 0)
			break;
	}
	/* server.shutdown to everyone, then close each connection once it
	 * is written (a second at most). */
	for (struct conn *c = a->conns; c; c = c->next) {
		enqueue(c, notification("server.shutdown", json_pack("{s:s}", "reason", "server stopping")), false);
		pthread_mutex_lock(&c->mu);
		c->close_after = true;
		c->close_status = LWS_CLOSE_STATUS_GOINGAWAY;
		pthread_mutex_unlock(&c->mu);
		lws_callback_on_writable(c->wsi);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (a->nconns) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 > 1000)
			break;
		lws_service(a->ctx, 0);
	}
	/* No thread may wake the context while it is destroyed. */
	for (struct conn *c = a->conns; c; c = c->next)
		conn_stop(c);
	lws_sul_cancel(&a->sul);
	a->closing = true;
	lws_context_destroy(a->ctx);	/* closes every client: their terminals die */
	a->ctx = NULL;
	a->closing = false;
}

int wap_acp_run(struct wap_acp *a, volatile sig_atomic_t *stop, struct wap_err *err)
{
	if (listen_ctx(a, err) < 0)
		return -1;
	a->stop = stop;
	serve_loop(a);
	return 0;
}

static void *thread_main(void *arg)
{
	struct wap_acp *a = arg;
	int r = listen_ctx(a, &a->start_err);

	pthread_mutex_lock(&a->startmu);
	a->start_state = r < 0 ? -1 : 1;
	pthread_cond_broadcast(&a->startcv);
	pthread_mutex_unlock(&a->startmu);
	if (r < 0)
		return NULL;
	serve_loop(a);
	return NULL;
}

int wap_acp_start(struct wap_acp *a, struct wap_err *err)
{
	a->own_stop = 0;
	a->stop = &a->own_stop;
	if (pthread_create(&a->thr, NULL, thread_main, a))
		return wap_err_set(err, WAP_E_FAILED, "Cannot start the WebSocket server thread");
	a->thread_started = true;
	pthread_mutex_lock(&a->startmu);
	while (!a->start_state)
		pthread_cond_wait(&a->startcv, &a->startmu);
	pthread_mutex_unlock(&a->startmu);
	if (a->start_state < 0) {
		pthread_join(a->thr, NULL);
		a->thread_started = false;
		if (err) {
			*err = a->start_err;
			a->start_err = (struct wap_err){ 0 };
		}
		return -1;
	}
	return 0;
}

void wap_acp_stop(struct wap_acp *a)
{
	if (!a || !a->thread_started)
		return;
	a->own_stop = 1;
	pthread_join(a->thr, NULL);
	a->thread_started = false;
}
