/* serve/lsp.c - the Language Server Protocol client and its pool of warm
 * servers.  See lsp.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "edit.h"
#include "file.h"
#include "json.h"
#include "cmdpolicy.h"
#include "landlock.h"
#include "lsp.h"
#include "path.h"
#include "proc.h"
#include "strbuf.h"
#include "text.h"

#define INIT_TIMEOUT_MS		60000	/* initialize: a big project may index first */
#define STOP_GRACE_MS		2000	/* shutdown + exit, then the tree is killed */
#define WRITE_TIMEOUT_MS	10000
#define DIAG_SETTLE_MS		600	/* diagnostics: quiet this long after the last */
#define MAX_FRAME		(256u << 20)
/* values in one message: jansson takes 20 to 80 bytes a value, so a frame
 * of small ones ([0,0,...]) would cost 20 times its size; 2 Mi values is
 * some 100 MB at worst and ten times the references of 100,000 places */
#define MAX_VALUES		(2u << 20)

/* The built-in table (README "Code intelligence"): language, extensions
 * with their LSP languageId, the command found on PATH. */
struct row {
	const char *lang;
	const char *exts;	/* "ext=languageId ..." */
	const char *argv[6];
};

static const struct row builtin[] = {
	{ "c", "c=c h=c cc=cpp cpp=cpp cxx=cpp c++=cpp hh=cpp hpp=cpp hxx=cpp",
	  { "clangd", "--background-index", "--log=error", NULL } },
	{ "typescript", "ts=typescript tsx=typescriptreact mts=typescript cts=typescript "
	  "js=javascript jsx=javascriptreact mjs=javascript cjs=javascript",
	  { "typescript-language-server", "--stdio", NULL } },
	{ "python", "py=python pyi=python", { "pyright-langserver", "--stdio", NULL } },
	{ "go", "go=go", { "gopls", NULL } },
	{ "rust", "rs=rust", { "rust-analyzer", NULL } },
	{ NULL, NULL, { NULL } }
};

struct pending {
	long id;
	json_t *resp;
	struct pending *next;
};

struct wap_lsp {
	char *lang, *root, *name;
	pthread_mutex_t mu;		/* everything below but the writer's */
	pthread_cond_t cv;
	pthread_mutex_t wmu;		/* the server's stdin, and document versions */
	pthread_mutex_t start_mu;	/* one start at a time */
	int in_w, in_r;
	pthread_t thr;
	bool thr_started, inited, dead;
	struct wap_err start_err;	/* why it could not start (kind set) */
	char deadmsg[256];
	char errtail[512];		/* the end of what it printed on fd 2 */
	struct wap_cancel stop;
	long next_id;
	struct pending *pend;
	json_t *docs;			/* uri -> {version, hash} */
	json_t *diags;			/* uri -> [Diagnostic] */
	json_t *diag_t;			/* uri -> when they came (ms) */
	json_t *caps;
	struct wap_sb in;		/* bytes of frames not yet whole */
	int users;
	double last;
	struct wap_sandbox sb;
	bool have_sb;
	char **argv, **env, **rdirs;
	struct wap_lsp *next;
};

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cv = PTHREAD_COND_INITIALIZER;
static struct wap_lsp *pool;
static long warm_ms;
static bool janitor_on;
static pthread_t janitor;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void deadline(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* ---------- the table of servers ---------- */

static const char *ext_of(const char *rel)
{
	const char *slash = strrchr(rel, '/'), *dot = strrchr(rel, '.');

	if (!dot || (slash && dot < slash) || dot == rel || dot[-1] == '/')
		return NULL;
	return dot + 1;
}

/* Is EXT in the "ext=id ..." list L?  *ID (a static buffer's copy) gets
 * the languageId. */
static bool ext_in(const char *l, const char *ext, char *id, size_t n)
{
	size_t el = strlen(ext);

	while (l && *l) {
		const char *sp = strchr(l, ' '), *end = sp ? sp : l + strlen(l);
		const char *eq = memchr(l, '=', (size_t)(end - l));
		const char *ke = eq ? eq : end;
		if ((size_t)(ke - l) == el && !strncmp(l, ext, el)) {
			const char *v = eq ? eq + 1 : l;
			size_t vl = (size_t)(end - v);
			snprintf(id, n, "%.*s", (int)vl, v);
			return true;
		}
		l = sp ? sp + 1 : NULL;
	}
	return false;
}

/* The config's row for LANG (lsp.servers.LANG): an object, false (off),
 * or NULL. */
static const json_t *cfg_row(const struct wap_ws *ws, const char *lang)
{
	const json_t *servers = wap_config_get(ws->config, "lsp.servers");

	return json_is_object(servers) ? json_object_get(servers, lang) : NULL;
}

/* Extensions of a config row as "ext=id ..." into SB. */
static bool cfg_exts(const json_t *row, struct wap_sb *sb)
{
	const json_t *exts = json_object_get(row, "extensions"), *v;
	size_t i;

	if (!json_is_array(exts))
		return false;
	json_array_foreach(exts, i, v)
		if (json_is_string(v)) {
			const char *e = json_string_value(v);
			wap_sb_adds(sb, *e == '.' ? e + 1 : e);
			wap_sb_addc(sb, ' ');
		}
	return true;
}

static __thread char lang_id_buf[64];

const char *wap_lsp_language(const struct wap_ws *ws, const char *rel, const char **lang_id)
{
	const char *ext = ext_of(rel), *key;
	const json_t *servers = wap_config_get(ws->config, "lsp.servers"), *row;

	if (!ext)
		return NULL;
	if (json_is_object(servers))
		json_object_foreach((json_t *)servers, key, row) {
			struct wap_sb sb = WAP_SB_INIT;
			bool hit = json_is_object(row) && cfg_exts(row, &sb) &&
				   ext_in(sb.buf, ext, lang_id_buf, sizeof(lang_id_buf));
			wap_sb_release(&sb);
			if (hit) {
				if (lang_id)
					*lang_id = lang_id_buf;
				return key;
			}
		}
	for (const struct row *r = builtin; r->lang; r++) {
		row = cfg_row(ws, r->lang);
		if (json_is_false(row) || json_object_get(row, "extensions"))
			continue;	/* turned off, or its extensions given above */
		if (ext_in(r->exts, ext, lang_id_buf, sizeof(lang_id_buf))) {
			if (lang_id)
				*lang_id = lang_id_buf;
			return r->lang;
		}
	}
	return NULL;
}

/* The command of LANG: the config's, else the built-in one (a new
 * NULL-terminated vector), NULL when there is none or it is off. */
static char **command_of(const struct wap_ws *ws, const char *lang)
{
	const json_t *row = cfg_row(ws, lang), *cmd = json_object_get(row, "command"), *v;
	char **argv = NULL;
	size_t i;

	if (json_is_false(row))
		return NULL;
	if (json_is_array(cmd) && json_array_size(cmd)) {
		json_array_foreach(cmd, i, v)
			if (!json_is_string(v) || wap_strv_push(&argv, json_string_value(v))) {
				wap_strv_free(argv);
				return NULL;
			}
		return argv;
	}
	if (json_is_string(cmd))
		return wap_strv_push(&argv, json_string_value(cmd)) ? NULL : argv;
	for (const struct row *r = builtin; r->lang; r++)
		if (!strcmp(r->lang, lang)) {
			for (int k = 0; r->argv[k]; k++)
				if (wap_strv_push(&argv, r->argv[k])) {
					wap_strv_free(argv);
					return NULL;
				}
			return argv;
		}
	return NULL;
}

/* PROG found on $PATH (or PROG itself when it holds a '/'): malloc'd, or
 * NULL. */
static char *on_path(const char *prog)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/'))
		return access(prog, X_OK) ? NULL : strdup(prog);
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *c = strchr(path, ':');
		size_t n = c ? (size_t)(c - path) : strlen(path);
		char *p;
		if (n && asprintf(&p, "%.*s/%s", (int)n, path, prog) >= 0) {
			if (!access(p, X_OK))
				return p;
			free(p);
		}
		path += n + (c ? 1 : 0);
	}
	return NULL;
}

json_t *wap_lsp_servers(const struct wap_ws *ws)
{
	json_t *out = json_array(), *seen = json_object();
	const json_t *servers = wap_config_get(ws->config, "lsp.servers"), *row;
	const char *key;

	for (const struct row *r = builtin; r->lang; r++)
		json_object_set_new(seen, r->lang, json_string(r->exts));
	if (json_is_object(servers))
		json_object_foreach((json_t *)servers, key, row)
			if (!json_object_get(seen, key))
				json_object_set_new(seen, key, json_string(""));
	json_object_foreach(seen, key, row) {
		char **argv = command_of(ws, key), *found = argv ? on_path(argv[0]) : NULL;
		const json_t *cr = cfg_row(ws, key);
		struct wap_sb sb = WAP_SB_INIT;
		json_t *exts = json_array(), *cmd = json_array();
		const char *l;

		if (!(json_is_object(cr) && cfg_exts(cr, &sb)))
			wap_sb_adds(&sb, json_string_value(row));
		for (l = sb.buf; l && *l;) {
			const char *sp = strchr(l, ' '), *eq = strchr(l, '=');
			size_t n = sp ? (size_t)(sp - l) : strlen(l);
			if (eq && eq < l + n)
				n = (size_t)(eq - l);
			if (n)
				json_array_append_new(exts, json_stringn(l, n));
			l = sp ? sp + 1 : NULL;
		}
		for (size_t i = 0; argv && argv[i]; i++)
			json_array_append_new(cmd, json_string(argv[i]));
		json_array_append_new(out, json_pack("{s:s, s:o, s:o, s:b, s:o}", "language", key,
			"extensions", exts, "command", cmd, "enabled", argv != NULL,
			"found", found ? json_string(found) : json_null()));
		wap_sb_release(&sb);
		wap_strv_free(argv);
		free(found);
	}
	json_decref(seen);
	return out;
}

/* ---------- URIs and positions ---------- */

char *wap_lsp_uri(const struct wap_ws *ws, const char *rel)
{
	struct wap_sb sb = WAP_SB_INIT;
	char *abs = wap_ws_abs(ws, rel);

	if (!abs)
		return NULL;
	wap_sb_adds(&sb, "file://");
	for (const char *p = abs; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    strchr("/-._~+", ch))
			wap_sb_addc(&sb, (char)ch);
		else
			wap_sb_addf(&sb, "%%%02X", ch);
	}
	free(abs);
	return wap_sb_detach(&sb);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

char *wap_lsp_rel(const struct wap_ws *ws, const char *uri)
{
	struct wap_sb sb = WAP_SB_INIT;
	char *rel = NULL;

	if (!uri || strncmp(uri, "file://", 7))
		return NULL;
	for (const char *p = uri + 7; *p; p++) {
		if (*p == '%' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
			char c = (char)(hexval(p[1]) * 16 + hexval(p[2]));
			if (!c)
				break;
			wap_sb_addc(&sb, c);
			p += 2;
		} else {
			wap_sb_addc(&sb, *p);
		}
	}
	/* the server's spelling of a path beneath the root (the root as
	 * opened, or as the caller named it) turned root-relative; every
	 * later use opens it beneath the root again */
	if (sb.buf && !sb.oom && wap_ws_rel(ws, sb.buf, sb.len, &rel, NULL))
		rel = NULL;
	wap_sb_release(&sb);
	return rel;
}

/* Bytes of the UTF-8 sequence at P (1 for a stray byte) and its UTF-16
 * units. */
static size_t cp_len(const unsigned char *p, const unsigned char *end, int *units)
{
	size_t n = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 1;

	if (p + n > end)
		n = 1;
	*units = n == 4 ? 2 : 1;
	return n;
}

/* edit.h's offset, clamped (a position inside a surrogate pair or on
 * invalid UTF-8 counts as the start of its line) */
static size_t offset_of(const char *text, size_t len, long line, long u16)
{
	long o = wap_lsp_offset(text, len, line < 0 ? 0 : line, u16 < 0 ? 0 : u16, NULL);

	if (o < 0)
		o = wap_lsp_offset(text, len, line < 0 ? 0 : line, 0, NULL);
	return o < 0 ? 0 : (size_t)o;
}

long wap_lsp_u16(const char *text, size_t line_start, size_t off)
{
	const unsigned char *p = (const unsigned char *)text + line_start;
	const unsigned char *end = (const unsigned char *)text + off;
	long n = 0;

	while (p < end) {
		int u;
		p += cp_len(p, end, &u);
		n += u;
	}
	return n;
}

long wap_lsp_column(const char *text, size_t len, long line, long u16)
{
	const unsigned char *p = (const unsigned char *)text + offset_of(text, len, line, 0);
	const unsigned char *end = (const unsigned char *)text + offset_of(text, len, line, u16);
	long col = 1;

	while (p < end) {
		int u;
		p += cp_len(p, end, &u);
		col++;
	}
	return col;
}

int wap_lsp_lines_init(struct wap_lsp_lines *li, const char *text, size_t len)
{
	size_t cap = 64;

	li->text = text;
	li->len = len;
	li->n = 0;
	li->start = malloc(cap * sizeof(*li->start));
	if (!li->start)
		return -1;
	li->start[li->n++] = 0;
	for (size_t i = 0; i < len; i++) {
		if (text[i] != '\n' && text[i] != '\r')
			continue;
		if (text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')
			i++;
		if (li->n + 1 >= cap) {
			size_t *n = realloc(li->start, (cap *= 2) * sizeof(*n));
			if (!n) {
				free(li->start);
				li->start = NULL;
				return -1;
			}
			li->start = n;
		}
		li->start[li->n++] = i + 1;
	}
	li->start[li->n] = len;
	return 0;
}

void wap_lsp_lines_release(struct wap_lsp_lines *li)
{
	free(li->start);
	li->start = NULL;
}

size_t wap_lsp_lines_offset(const struct wap_lsp_lines *li, long line, long u16)
{
	const unsigned char *p, *end;
	long at = 0;
	size_t e;

	if (line < 0)
		line = 0;
	if ((size_t)line >= li->n)
		return li->len;
	p = (const unsigned char *)li->text + li->start[line];
	e = li->start[line + 1];
	while (e > li->start[line] && (li->text[e - 1] == '\n' || li->text[e - 1] == '\r'))
		e--;
	end = (const unsigned char *)li->text + e;
	while (p < end && at < u16) {
		int u;
		size_t n = cp_len(p, end, &u);
		if (at + u > u16)
			break;	/* inside a surrogate pair: before it */
		p += n;
		at += u;
	}
	return (size_t)((const char *)p - li->text);
}

long wap_lsp_lines_column(const struct wap_lsp_lines *li, long line, long u16)
{
	size_t off = wap_lsp_lines_offset(li, line, u16);
	const unsigned char *p, *end = (const unsigned char *)li->text + off;
	long col = 1;

	if (line < 0)
		line = 0;
	if ((size_t)line >= li->n)
		return 1;
	p = (const unsigned char *)li->text + li->start[line];
	while (p < end) {
		int u;
		p += cp_len(p, end, &u);
		col++;
	}
	return col;
}

/* ---------- messages ---------- */

/* Write all of BUF to the server's stdin, waiting at most WRITE_TIMEOUT_MS
 * for room (a server that stopped reading is a failed call, not a hung
 * one).  With wmu held. */
static int write_all(struct wap_lsp *s, const char *buf, size_t n, struct wap_err *err)
{
	double t0 = now_ms();

	while (n) {
		ssize_t w = write(s->in_w, buf, n);
		if (w > 0) {
			buf += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return wap_err_set(err, WAP_E_FAILED, "language server %s: cannot write to it: %s",
					   s->name, strerror(errno));
		if (s->dead || now_ms() - t0 > WRITE_TIMEOUT_MS)
			return wap_err_set(err, s->dead ? WAP_E_FAILED : WAP_E_TIMEOUT,
					   "language server %s %s", s->name,
					   s->dead ? "has exited" : "does not read its input");
		struct pollfd pf = { s->in_w, POLLOUT, 0 };
		poll(&pf, 1, 50);
	}
	return 0;
}

/* Send MSG (stolen), with wmu held. */
static int send_locked(struct wap_lsp *s, json_t *msg, struct wap_err *err)
{
	char *body, hdr[64];
	int rc, hl;

	json_object_set_new(msg, "jsonrpc", json_string("2.0"));
	body = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (!body)
		return wap_err_oom(err);
	hl = snprintf(hdr, sizeof(hdr), "Content-Length: %zu\r\n\r\n", strlen(body));
	rc = write_all(s, hdr, (size_t)hl, err);
	if (!rc)
		rc = write_all(s, body, strlen(body), err);
	free(body);
	return rc;
}

static int send_msg(struct wap_lsp *s, json_t *msg, struct wap_err *err)
{
	int rc;

	pthread_mutex_lock(&s->wmu);
	rc = send_locked(s, msg, err);
	pthread_mutex_unlock(&s->wmu);
	return rc;
}

static int notify(struct wap_lsp *s, const char *method, json_t *params, struct wap_err *err)
{
	return send_msg(s, json_pack("{s:s, s:o}", "method", method, "params",
					   params ? params : json_object()), err);
}

/* A request from the server: answered at once, as a client without those
 * features (configuration: nothing set; the rest: null). */
static void answer_server(struct wap_lsp *s, const json_t *m)
{
	const char *method = json_string_value(json_object_get(m, "method"));
	json_t *result = json_null();

	if (method && !strcmp(method, "workspace/configuration")) {
		const json_t *items = json_object_get(json_object_get(m, "params"), "items");
		result = json_array();
		for (size_t i = 0; i < json_array_size(items); i++)
			json_array_append_new(result, json_null());
	}
	send_msg(s, json_pack("{s:O, s:o}", "id", json_object_get(m, "id"), "result", result), NULL);
}

static void dispatch(struct wap_lsp *s, json_t *m)
{
	const json_t *id = json_object_get(m, "id");
	const char *method = json_string_value(json_object_get(m, "method"));

	if (method && id) {
		answer_server(s, m);
	} else if (method) {
		if (!strcmp(method, "textDocument/publishDiagnostics")) {
			const json_t *p = json_object_get(m, "params");
			const char *uri = json_string_value(json_object_get(p, "uri"));
			const json_t *d = json_object_get(p, "diagnostics");
			pthread_mutex_lock(&s->mu);
			/* of the documents wap opened only: others' are no
			 * one's to ask for, and a server publishing for ever
			 * new names would grow wap for good */
			if (uri && json_is_array(d) && json_object_get(s->docs, uri)) {
				json_object_set(s->diags, uri, (json_t *)d);
				json_object_set_new(s->diag_t, uri, json_real(now_ms()));
			}
			pthread_cond_broadcast(&s->cv);
			pthread_mutex_unlock(&s->mu);
		}
	} else if (json_is_integer(id)) {
		pthread_mutex_lock(&s->mu);
		for (struct pending *p = s->pend; p; p = p->next)
			if (p->id == json_integer_value(id) && !p->resp) {
				p->resp = json_incref(m);
				break;
			}
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
}

int wap_lsp_frame(const char *buf, size_t len, size_t *hl, size_t *clen)
{
	const char *hend = memmem(buf, len, "\r\n\r\n", 4);
	bool have = false;

	*hl = *clen = 0;
	if (!hend)
		return len > 8192 ? -1 : 0;
	for (const char *l = buf; l < hend;) {
		const char *e = memmem(l, (size_t)(hend - l) + 2, "\r\n", 2), *d;
		if (!e)
			break;
		if ((size_t)(e - l) > 15 && !strncasecmp(l, "Content-Length:", 15)) {
			/* digits after blanks, to the line's end: never
			 * what follows it (strtoul skips "\r\n" and reads
			 * on), never a sign */
			*clen = 0;
			for (d = l + 15; d < e && (*d == ' ' || *d == '\t'); d++)
				;
			if (d == e)
				return -1;
			for (; d < e && *d >= '0' && *d <= '9'; d++) {
				*clen = *clen * 10 + (size_t)(*d - '0');
				if (*clen > MAX_FRAME)
					return -1;
			}
			for (; d < e && (*d == ' ' || *d == '\t'); d++)
				;
			if (d != e)
				return -1;
			have = true;
		}
		l = e + 2;
	}
	if (!have)
		return -1;
	*hl = (size_t)(hend - buf) + 4;
	return len - *hl >= *clen;
}

/* The output callback of wap_proc_run: frames out of the server's stdout,
 * the end of its stderr kept for messages. */
static void on_output(void *arg, const char *stream, const char *data, size_t len)
{
	struct wap_lsp *s = arg;

	if (!strcmp(stream, "stderr")) {
		size_t keep = sizeof(s->errtail) - 1, have = strlen(s->errtail);
		if (len >= keep) {
			memcpy(s->errtail, data + len - keep, keep);
			s->errtail[keep] = 0;
		} else {
			if (have + len > keep) {
				memmove(s->errtail, s->errtail + (have + len - keep), keep - len);
				have = keep - len;
			}
			memcpy(s->errtail + have, data, len);
			s->errtail[have + len] = 0;
		}
		return;
	}
	const char *why = "sent something that is not an LSP message";

	wap_sb_add(&s->in, data, len);
	while (s->in.len && !s->in.oom) {
		size_t clen, hl;
		json_t *m;
		int r = wap_lsp_frame(s->in.buf, s->in.len, &hl, &clen);

		if (r < 0)
			goto bad;
		if (!r)
			return;
		if (wap_json_values(s->in.buf + hl, clen) > MAX_VALUES) {
			why = "sent a message of more than 2 Mi JSON values";
			goto bad;
		}
		m = json_loadb(s->in.buf + hl, clen, 0, NULL);
		memmove(s->in.buf, s->in.buf + hl + clen, s->in.len - hl - clen);
		s->in.len -= hl + clen;
		if (m) {
			dispatch(s, m);
			json_decref(m);
		}
	}
	if (!s->in.oom)
		return;
bad:
	/* not LSP: stop it, the calls waiting fail with the reason */
	pthread_mutex_lock(&s->mu);
	snprintf(s->deadmsg, sizeof(s->deadmsg), "%s", why);
	pthread_mutex_unlock(&s->mu);
	s->in.len = 0;
	wap_cancel_set(&s->stop, 1);
}

static void *runner(void *arg)
{
	struct wap_lsp *s = arg;
	struct wap_proc_opts po = {
		.argv = s->argv, .envp = s->env, .cwdfd = -1, .stdin_fd = s->in_r,
		.kill_after_ms = 1000, .max_output = 4096, .save_fd = { -1, -1 },
		.cancel = &s->stop, .output = on_output, .output_arg = s,
		.sandbox = &s->sb,
	};
	struct wap_proc_result pr;
	struct wap_err e = { 0 };
	int rc, fd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	po.cwdfd = fd;
	rc = wap_proc_run(&po, &pr, &e);
	if (fd >= 0)
		close(fd);
	pthread_mutex_lock(&s->mu);
	s->dead = true;
	if (!s->deadmsg[0]) {
		if (rc)
			snprintf(s->deadmsg, sizeof(s->deadmsg), "%s", e.msg);
		else if (pr.signal)
			snprintf(s->deadmsg, sizeof(s->deadmsg), "was killed by %s",
				 wap_signal_name(pr.signal) ? wap_signal_name(pr.signal) : "a signal");
		else
			snprintf(s->deadmsg, sizeof(s->deadmsg), "exited with status %d", pr.exit_code);
	}
	if (rc && !s->start_err.kind)
		s->start_err.kind = e.kind;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (!rc)
		wap_proc_result_release(&pr);
	wap_err_release(&e);
	return NULL;
}

static int dead_err(struct wap_lsp *s, struct wap_err *err)
{
	const char *tail = s->errtail;
	size_t n = strlen(tail);

	while (n && (tail[n - 1] == '\n' || tail[n - 1] == '\r'))
		n--;
	if (n > 300) {
		tail += n - 300;
		n = 300;
	}
	return wap_err_set(err, s->start_err.kind == WAP_E_DISABLED ? WAP_E_DISABLED : WAP_E_FAILED,
			   "language server %s %s%s%.*s", s->name, s->deadmsg, n ? ": " : "",
			   (int)n, tail);
}

int wap_lsp_request(struct wap_lsp *s, const char *method, json_t *params, long timeout_ms,
		    const struct wap_cancel *cancelled, json_t **result, struct wap_err *err)
{
	struct pending p = { 0 }, **pp;
	double t0 = now_ms();
	json_t *resp, *e;
	int rc = 0;

	*result = NULL;
	pthread_mutex_lock(&s->mu);
	if (s->dead) {
		pthread_mutex_unlock(&s->mu);
		json_decref(params);
		return dead_err(s, err);
	}
	p.id = ++s->next_id;
	p.next = s->pend;
	s->pend = &p;
	pthread_mutex_unlock(&s->mu);
	if (send_msg(s, json_pack("{s:I, s:s, s:o}", "id", (json_int_t)p.id, "method", method,
				  "params", params ? params : json_object()), err))
		rc = -1;
	pthread_mutex_lock(&s->mu);
	while (!rc && !p.resp && !s->dead) {
		struct timespec ts;
		if (wap_cancel_is_set(cancelled)) {
			rc = wap_cancel_err(err);
			break;
		}
		if (timeout_ms > 0 && now_ms() - t0 > timeout_ms) {
			rc = wap_err_set(err, WAP_E_TIMEOUT, "language server %s: %s took more than %ld ms",
					 s->name, method, timeout_ms);
			break;
		}
		deadline(&ts, 50);
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	for (pp = &s->pend; *pp; pp = &(*pp)->next)
		if (*pp == &p) {
			*pp = p.next;
			break;
		}
	resp = p.resp;
	if (!rc && !resp) {
		pthread_mutex_unlock(&s->mu);
		return dead_err(s, err);
	}
	pthread_mutex_unlock(&s->mu);
	if (rc) {
		/* the server may stop working on it */
		if (!s->dead)
			notify(s, "$/cancelRequest", json_pack("{s:I}", "id", (json_int_t)p.id), NULL);
		json_decref(resp);
		return -1;
	}
	e = json_object_get(resp, "error");
	if (e) {
		long code = (long)json_integer_value(json_object_get(e, "code"));
		const char *msg = json_string_value(json_object_get(e, "message"));
		rc = wap_err_set(err, code == -32602 || code == -32803 ? WAP_E_INVALID : WAP_E_FAILED,
				 "language server %s: %s: %s", s->name, method, msg ? msg : "failed");
	} else {
		json_t *r = json_object_get(resp, "result");
		*result = r ? json_incref(r) : json_null();
	}
	json_decref(resp);
	return rc;
}

/* ---------- starting and stopping ---------- */

static void server_free(struct wap_lsp *s)
{
	if (!s)
		return;
	if (s->in_w >= 0)
		close(s->in_w);
	if (s->in_r >= 0)
		close(s->in_r);
	if (s->have_sb)
		wap_sandbox_release(&s->sb);
	wap_strv_free(s->argv);
	wap_strv_free(s->env);
	wap_strv_free(s->rdirs);
	json_decref(s->docs);
	json_decref(s->diags);
	json_decref(s->diag_t);
	json_decref(s->caps);
	wap_sb_release(&s->in);
	free(s->lang);
	free(s->root);
	free(s->name);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->wmu);
	pthread_mutex_destroy(&s->start_mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

/* Ask it to go (shutdown, exit), then take its tree down, and free it. */
static void server_stop(struct wap_lsp *s)
{
	if (s->thr_started) {
		if (!s->dead && s->inited) {
			json_t *r = NULL;
			if (!wap_lsp_request(s, "shutdown", NULL, STOP_GRACE_MS, NULL, &r, NULL))
				notify(s, "exit", NULL, NULL);
			json_decref(r);
		}
		pthread_mutex_lock(&s->wmu);
		close(s->in_w);
		s->in_w = -1;
		pthread_mutex_unlock(&s->wmu);
		pthread_mutex_lock(&s->mu);
		{
			double t0 = now_ms();
			while (!s->dead && now_ms() - t0 < STOP_GRACE_MS) {
				struct timespec ts;
				deadline(&ts, 50);
				pthread_cond_timedwait(&s->cv, &s->mu, &ts);
			}
		}
		pthread_mutex_unlock(&s->mu);
		wap_cancel_set(&s->stop, 1);	/* wap_proc_run kills whatever is left */
		pthread_join(s->thr, NULL);
	}
	server_free(s);
}

static int server_start(struct wap_lsp *s, const struct wap_ws *ws, const struct wap_cancel *cancelled,
			struct wap_err *err)
{
	struct wap_sandbox_opts so = { 0 };
	struct wap_cmdrules rules = { ws->pol.allowed_cmds, ws->pol.restricted_cmds, true,
				      "allowedCommands", "restrictedCommands" };
	char *found = on_path(s->argv[0]), *uri = NULL;
	extern char **environ;
	int p[2];
	json_t *params, *res = NULL;

	/* a language server is a program, and some run the workspace's code
	 * (build scripts, a toolchain file naming its own binaries): the
	 * policy of commands is its policy, the lists included, and they
	 * hold in its sandbox as in a command's */
	if (!ws->pol.allow_exec) {
		free(found);
		return wap_err_set(err, WAP_E_DISABLED, "Language servers are disabled by policy: "
				   "starting one runs a program (security.allowCommandExecution)");
	}
	if (wap_cmd_check(&rules, NULL, s->argv, err)) {
		free(found);
		return -1;
	}
	if (!found)
		return wap_err_set(err, WAP_E_DISABLED,
				   "No language server for %s: wap found no %s on PATH (install it, or set lsp.servers.%s.command in the config)",
				   s->lang, s->argv[0], s->lang);
	if (wap_sandbox_prefix(found, &s->rdirs)) {
		free(found);
		return wap_err_oom(err);
	}
	free(s->argv[0]);
	s->argv[0] = found;
	so.fs = true;
	so.read_only_root = true;
	so.no_network = true;
	so.read_dirs = s->rdirs;
	so.rules[0] = &rules;
	so.path = getenv("PATH");
	if (wap_sandbox_prepare(&s->sb, ws, &so, err))
		return -1;
	s->have_sb = true;
	for (size_t i = 0; environ[i]; i++)
		if (strncmp(environ[i], "HOME=", 5) && strncmp(environ[i], "TMPDIR=", 7) &&
		    wap_strv_push(&s->env, environ[i]))
			return wap_err_oom(err);
	if (s->sb.tmpenv) {
		char *home;
		if (asprintf(&home, "HOME=%s", s->sb.tmpdir) < 0)
			return wap_err_oom(err);
		if (wap_strv_push(&s->env, home) || wap_strv_push(&s->env, s->sb.tmpenv)) {
			free(home);
			return wap_err_oom(err);
		}
		free(home);
	}
	if (pipe2(p, O_CLOEXEC))
		return wap_err_set(err, WAP_E_FAILED, "Cannot create a pipe: %s", strerror(errno));
	s->in_r = p[0];
	s->in_w = p[1];
	fcntl(s->in_w, F_SETFL, O_NONBLOCK);
	fcntl(s->in_w, F_SETPIPE_SZ, 1 << 20);
	if (pthread_create(&s->thr, NULL, runner, s))
		return wap_err_set(err, WAP_E_FAILED, "Cannot start a thread for the language server");
	s->thr_started = true;

	uri = wap_lsp_uri(ws, ".");
	/* what wap takes: hierarchical symbols, versioned diagnostics, text
	 * edits in documentChanges, UTF-16 positions (LSP's default) */
	params = json_loads("{\"capabilities\": {"
		"\"textDocument\": {"
		"\"synchronization\": {\"didSave\": false},"
		"\"documentSymbol\": {\"hierarchicalDocumentSymbolSupport\": true},"
		"\"publishDiagnostics\": {\"relatedInformation\": false, \"versionSupport\": true},"
		"\"hover\": {\"contentFormat\": [\"plaintext\", \"markdown\"]},"
		"\"rename\": {\"prepareSupport\": false},"
		"\"definition\": {\"linkSupport\": true},"
		"\"references\": {}, \"formatting\": {},"
		"\"completion\": {\"completionItem\": {\"snippetSupport\": false}},"
		"\"codeAction\": {\"codeActionLiteralSupport\": {\"codeActionKind\": {\"valueSet\":"
		" [\"\", \"quickfix\", \"refactor\", \"refactor.extract\", \"refactor.inline\","
		" \"refactor.rewrite\", \"source\", \"source.organizeImports\", \"source.fixAll\"]}}}},"
		"\"workspace\": {\"workspaceFolders\": true, \"configuration\": true,"
		" \"symbol\": {}, \"workspaceEdit\": {\"documentChanges\": true}},"
		"\"general\": {\"positionEncodings\": [\"utf-16\"]}}}", 0, NULL);
	if (params) {
		/* null: the server lives in a PID namespace of its own, where
		 * wap's pid names nothing (typescript-language-server would
		 * take its parent for dead and exit); its life is held by
		 * lib/proc instead */
		json_object_set_new(params, "processId", json_null());
		json_object_set_new(params, "clientInfo", json_pack("{s:s}", "name", "wap"));
		json_object_set_new(params, "rootPath", json_string(s->root));
		json_object_set_new(params, "rootUri", uri ? json_string(uri) : json_null());
		json_object_set_new(params, "workspaceFolders",
				    json_pack("[{s:s, s:s}]", "uri", uri ? uri : "", "name", "workspace"));
	}
	free(uri);
	if (!params)
		return wap_err_oom(err);
	if (wap_lsp_request(s, "initialize", params, INIT_TIMEOUT_MS, cancelled, &res, err))
		return -1;
	s->caps = json_incref(json_object_get(res, "capabilities"));
	if (!s->caps)
		s->caps = json_object();
	json_decref(res);
	if (notify(s, "initialized", NULL, err))
		return -1;
	s->inited = true;
	return 0;
}

/* The janitor of a warm pool: stops servers idle too long, and dead
 * ones no call holds. */
static void *janitor_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pool_mu);
	while (warm_ms > 0) {
		struct wap_lsp *idle = NULL, **pp = &pool;
		struct timespec ts;
		double t = now_ms();

		while (*pp) {
			struct wap_lsp *s = *pp;
			if (!s->users && (s->dead || t - s->last > warm_ms)) {
				*pp = s->next;
				s->next = idle;
				idle = s;
			} else {
				pp = &s->next;
			}
		}
		pthread_mutex_unlock(&pool_mu);
		while (idle) {
			struct wap_lsp *n = idle->next;
			server_stop(idle);
			idle = n;
		}
		pthread_mutex_lock(&pool_mu);
		deadline(&ts, 500);
		if (warm_ms > 0)
			pthread_cond_timedwait(&pool_cv, &pool_mu, &ts);
	}
	pthread_mutex_unlock(&pool_mu);
	return NULL;
}

void wap_lsp_pool_warm(long idle_ms)
{
	pthread_mutex_lock(&pool_mu);
	warm_ms = idle_ms > 0 ? idle_ms : 1;
	pthread_mutex_unlock(&pool_mu);
}

void wap_lsp_pool_stop(void)
{
	struct wap_lsp *all;
	bool join;

	pthread_mutex_lock(&pool_mu);
	warm_ms = 0;
	join = janitor_on;
	janitor_on = false;
	pthread_cond_broadcast(&pool_cv);
	pthread_mutex_unlock(&pool_mu);
	if (join)
		pthread_join(janitor, NULL);
	pthread_mutex_lock(&pool_mu);
	all = pool;
	pool = NULL;
	pthread_mutex_unlock(&pool_mu);
	while (all) {
		struct wap_lsp *n = all->next;
		server_stop(all);
		all = n;
	}
}

json_t *wap_lsp_pool_diagnostics(const char *root)
{
	json_t *all = json_object();

	pthread_mutex_lock(&pool_mu);
	for (struct wap_lsp *s = pool; s; s = s->next) {
		if (strcmp(s->root, root) || !s->thr_started)
			continue;
		pthread_mutex_lock(&s->mu);
		json_object_update(all, s->diags);
		pthread_mutex_unlock(&s->mu);
	}
	pthread_mutex_unlock(&pool_mu);
	return all;
}

int wap_lsp_pool_count(void)
{
	int n = 0;

	pthread_mutex_lock(&pool_mu);
	for (struct wap_lsp *s = pool; s; s = s->next)
		n += !s->dead && s->thr_started;
	pthread_mutex_unlock(&pool_mu);
	return n;
}

int wap_lsp_acquire(const struct wap_ws *ws, const char *rel, const struct wap_cancel *cancelled,
		    struct wap_lsp **srv, struct wap_err *err)
{
	const char *lang = wap_lsp_language(ws, rel, NULL);
	struct wap_lsp *s, *gone = NULL, **pp;
	char **argv;
	int rc = 0;

	*srv = NULL;
	if (!lang)
		return wap_err_set(err, WAP_E_DISABLED, "No language server handles %s (see lsp.servers)", rel);
	pthread_mutex_lock(&pool_mu);
	for (pp = &pool; (s = *pp);) {
		if (!strcmp(s->lang, lang) && !strcmp(s->root, ws->root)) {
			if (!s->dead && !s->start_err.kind)
				break;
			if (!s->users) {
				/* crashed (or never started): start afresh */
				*pp = s->next;
				s->next = gone;
				gone = s;
				continue;
			}
		}
		pp = &s->next;
	}
	if (!s) {
		argv = command_of(ws, lang);
		if (!argv) {
			pthread_mutex_unlock(&pool_mu);
			rc = wap_err_set(err, WAP_E_DISABLED, "No language server for %s (lsp.servers.%s is off)",
					 lang, lang);
			goto out;
		}
		s = calloc(1, sizeof(*s));
		if (!s || !(s->lang = strdup(lang)) || !(s->root = strdup(ws->root))) {
			if (s) {
				free(s->lang);
				free(s);
			}
			wap_strv_free(argv);
			pthread_mutex_unlock(&pool_mu);
			rc = wap_err_oom(err);
			goto out;
		}
		s->argv = argv;
		s->name = strdup(strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0]);
		s->in_w = s->in_r = -1;
		s->docs = json_object();
		s->diags = json_object();
		s->diag_t = json_object();
		pthread_mutex_init(&s->mu, NULL);
		pthread_mutex_init(&s->wmu, NULL);
		pthread_mutex_init(&s->start_mu, NULL);
		pthread_cond_init(&s->cv, NULL);
		s->next = pool;
		pool = s;
		/* the janitor of a warm pool: from its first server on */
		if (warm_ms > 0 && !janitor_on && !pthread_create(&janitor, NULL, janitor_main, NULL))
			janitor_on = true;
	}
	s->users++;
	s->last = now_ms();
	pthread_mutex_unlock(&pool_mu);

	pthread_mutex_lock(&s->start_mu);
	if (!s->inited && !s->start_err.kind) {
		struct wap_err e = { 0 };
		if (server_start(s, ws, cancelled, &e)) {
			s->start_err.kind = e.kind ? e.kind : WAP_E_FAILED;
			snprintf(s->start_err.msg, sizeof(s->start_err.msg), "%s", e.msg);
			wap_err_release(&e);
		}
	}
	if (s->start_err.kind) {
		rc = wap_err_set(err, s->start_err.kind, "%s", s->start_err.msg);
	} else if (s->dead) {
		rc = dead_err(s, err);
	}
	pthread_mutex_unlock(&s->start_mu);
	if (rc)
		wap_lsp_release(s);
	else
		*srv = s;
out:
	while (gone) {
		struct wap_lsp *n = gone->next;
		server_stop(gone);
		gone = n;
	}
	return rc;
}

void wap_lsp_release(struct wap_lsp *s)
{
	bool stop = false;

	if (!s)
		return;
	pthread_mutex_lock(&pool_mu);
	s->users--;
	s->last = now_ms();
	if (!s->users && (!warm_ms || s->start_err.kind)) {
		for (struct wap_lsp **pp = &pool; *pp; pp = &(*pp)->next)
			if (*pp == s) {
				*pp = s->next;
				break;
			}
		stop = true;
	}
	pthread_mutex_unlock(&pool_mu);
	if (stop)
		server_stop(s);
}

const char *wap_lsp_name(const struct wap_lsp *s)
{
	return s->name;
}

const json_t *wap_lsp_caps(const struct wap_lsp *s)
{
	return s->caps;
}

/* ---------- documents ---------- */

int wap_lsp_sync(struct wap_lsp *s, const struct wap_ws *ws, const char *rel, char **text,
		 size_t *len, char **urip, struct wap_err *err)
{
	char *buf = NULL, *uri = NULL, ver[WAP_VERSION_LEN + 1];
	const char *lang_id = NULL;
	size_t n = 0;
	json_t *doc;
	int rc = -1;

	if (wap_read_file(ws, rel, ws->lim.max_file_size, &buf, &n, NULL, err))
		return -1;
	if (wap_blob_id(buf, n, ver, err))
		goto out;
	if (!wap_text_utf8_valid(buf, n, NULL)) {
		wap_err_set(err, WAP_E_INVALID, "%s is not UTF-8 text (language servers take UTF-8)", rel);
		goto out;
	}
	uri = wap_lsp_uri(ws, rel);
	if (!uri) {
		wap_err_oom(err);
		goto out;
	}
	wap_lsp_language(ws, rel, &lang_id);
	pthread_mutex_lock(&s->wmu);
	pthread_mutex_lock(&s->mu);
	doc = json_object_get(s->docs, uri);
	if (!doc) {
		json_object_set_new(s->docs, uri, json_pack("{s:i, s:s}", "version", 1, "hash", ver));
		json_object_del(s->diags, uri);
		pthread_mutex_unlock(&s->mu);
		rc = send_locked(s, json_pack("{s:s, s:{s:{s:s, s:s, s:i, s:s%}}}", "method",
			"textDocument/didOpen", "params", "textDocument", "uri", uri,
			"languageId", lang_id ? lang_id : "plaintext", "version", 1, "text", buf, n), err);
	} else if (strcmp(json_string_value(json_object_get(doc, "hash")), ver)) {
		json_int_t v = json_integer_value(json_object_get(doc, "version")) + 1;
		json_object_set_new(doc, "version", json_integer(v));
		json_object_set_new(doc, "hash", json_string(ver));
		json_object_del(s->diags, uri);
		pthread_mutex_unlock(&s->mu);
		rc = send_locked(s, json_pack("{s:s, s:{s:{s:s, s:I}, s:[{s:s%}]}}", "method",
			"textDocument/didChange", "params", "textDocument", "uri", uri, "version", v,
			"contentChanges", "text", buf, n), err);
	} else {
		pthread_mutex_unlock(&s->mu);
		rc = 0;
	}
	pthread_mutex_unlock(&s->wmu);
out:
	if (!rc && text) {
		*text = buf;
		buf = NULL;
	}
	if (!rc && len)
		*len = n;
	if (!rc && urip) {
		*urip = uri;
		uri = NULL;
	}
	free(buf);
	free(uri);
	return rc;
}

int wap_lsp_recheck(struct wap_lsp *s, const struct wap_ws *ws, const char *rel,
		    struct wap_err *err)
{
	char *buf = NULL, *uri = wap_lsp_uri(ws, rel);
	size_t n = 0;
	json_t *doc;
	json_int_t v;
	int rc;

	if (!uri)
		return wap_err_oom(err);
	if (wap_read_file(ws, rel, ws->lim.max_file_size, &buf, &n, NULL, err)) {
		free(uri);
		return -1;
	}
	pthread_mutex_lock(&s->wmu);
	pthread_mutex_lock(&s->mu);
	doc = json_object_get(s->docs, uri);
	if (!doc) {
		pthread_mutex_unlock(&s->mu);
		pthread_mutex_unlock(&s->wmu);
		free(buf);
		free(uri);
		return wap_err_set(err, WAP_E_INVALID, "%s is not open in the language server", rel);
	}
	v = json_integer_value(json_object_get(doc, "version")) + 1;
	json_object_set_new(doc, "version", json_integer(v));
	json_object_del(s->diags, uri);
	pthread_mutex_unlock(&s->mu);
	/* closed and opened again: a didChange of the same text is no change
	 * to clangd, which then publishes nothing new */
	{
		const char *lang_id = NULL;
		wap_lsp_language(ws, rel, &lang_id);
		rc = send_locked(s, json_pack("{s:s, s:{s:{s:s}}}", "method", "textDocument/didClose",
					      "params", "textDocument", "uri", uri), err);
		if (!rc)
			rc = send_locked(s, json_pack("{s:s, s:{s:{s:s, s:s, s:I, s:s%}}}", "method",
				"textDocument/didOpen", "params", "textDocument", "uri", uri,
				"languageId", lang_id ? lang_id : "plaintext", "version", v, "text", buf, n), err);
	}
	pthread_mutex_unlock(&s->wmu);
	free(buf);
	free(uri);
	return rc;
}

json_t *wap_lsp_diagnostics(struct wap_lsp *s, const char *uri, long wait_ms,
			    const struct wap_cancel *cancelled, bool *fresh)
{
	double t0 = now_ms();
	json_t *d;

	pthread_mutex_lock(&s->mu);
	while (!json_object_get(s->diags, uri) && !s->dead && now_ms() - t0 < wait_ms &&
	       !(wap_cancel_is_set(cancelled))) {
		struct timespec ts;
		deadline(&ts, 50);
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	/* servers publish in steps (typescript-language-server: syntax,
	 * then types): the last of a burst is the answer */
	while (json_object_get(s->diags, uri) && !s->dead && now_ms() - t0 < wait_ms &&
	       now_ms() - json_real_value(json_object_get(s->diag_t, uri)) < DIAG_SETTLE_MS &&
	       !(wap_cancel_is_set(cancelled))) {
		struct timespec ts;
		deadline(&ts, 50);
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	d = json_object_get(s->diags, uri);
	if (fresh)
		*fresh = d != NULL;
	d = d ? json_deep_copy(d) : json_array();
	pthread_mutex_unlock(&s->mu);
	return d;
}
