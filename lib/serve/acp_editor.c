/* serve/acp_editor.c - the Agent Control editor.* methods and the headless
 * editor behind them: each connection has its own list of open documents,
 * an active one, a selection and view column per document, and an unsaved
 * buffer per open document that was changed and not saved.
 *
 * Text operations on a document that is not open work on the file, onto the
 * read, write, edit and stat ops, as before.  On an open document they
 * change its buffer only (gated as the edit op: read-only refuses them,
 * requireApproval asks); editor.save writes the buffer through the write
 * op with the version the buffer was made from, so a file changed on disk
 * meanwhile is a CONFLICT and the buffer is kept.  editor.closeFile drops
 * an unsaved buffer, as a headless editor has no one to ask.  command.list
 * and command.execute are wap's applets as commands (wap.NAME). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "acp_impl.h"
#include "edit.h"
#include "policy.h"
#include "file.h"
#include "strbuf.h"
#include "text.h"

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

/* ---------- the headless editor's state ---------- */

struct acp_doc {
	char *rel;		/* root-relative path */
	char *buf;		/* the unsaved buffer; NULL: the file is the text */
	size_t held;		/* of all_unsaved: buf's len, 0 without one */
	size_t len;
	char *base;		/* the file's version the buffer was made from */
	long long version;	/* ms of the file's mtime, +1 a change */
	long column;		/* view column, 1.. */
	json_t *sel;		/* the selection (a Range); NULL: the start */
};

struct acp_editor {
	struct acp_doc *docs;
	size_t n;
	long active;		/* index into docs, -1: none */
};

/* What a session's unsaved buffers may hold in all: each is within
 * limits.maxFileSize, and their number is the client's to choose. */
#define ACP_MAX_UNSAVED	(64u << 20)

/* ... and what those of every session of the server may hold: sessions
 * are made at will (256 clients of 64 MiB were 16 GiB).
 * WAP_ACP_UNSAVED_MAX lowers it (tests). */
#define ACP_MAX_UNSAVED_ALL	(256u << 20)

static pthread_mutex_t all_mu = PTHREAD_MUTEX_INITIALIZER;
static size_t all_unsaved;

static size_t unsaved_all_max(void)
{
	const char *env = getenv("WAP_ACP_UNSAVED_MAX");

	return env && atol(env) > 0 && (size_t)atol(env) < ACP_MAX_UNSAVED_ALL ? (size_t)atol(env) :
	       ACP_MAX_UNSAVED_ALL;
}

/* D's buffer counted as it now is (d->buf, d->len) among all_unsaved */
static void held_now(struct acp_doc *d)
{
	size_t n = d->buf ? d->len : 0;

	pthread_mutex_lock(&all_mu);
	all_unsaved = all_unsaved - d->held + n;
	pthread_mutex_unlock(&all_mu);
	d->held = n;
}

/* May D's buffer become LEN bytes within every session's? (the room is
 * taken at once: D is counted at LEN until held_now) */
static bool held_room(struct acp_doc *d, size_t len, size_t *all)
{
	bool room;

	pthread_mutex_lock(&all_mu);
	*all = all_unsaved - d->held + len;
	room = *all <= unsaved_all_max();
	if (room) {
		all_unsaved = *all;
		d->held = len;
	}
	pthread_mutex_unlock(&all_mu);
	return room;
}

static size_t unsaved(const struct acp_editor *e, const struct acp_doc *but)
{
	size_t n = 0;

	for (size_t i = 0; i < e->n; i++)
		if (&e->docs[i] != but && e->docs[i].buf)
			n += e->docs[i].len;
	return n;
}

static void doc_release(struct acp_doc *d)
{
	free(d->rel);
	free(d->buf);
	d->buf = NULL;
	held_now(d);
	free(d->base);
	json_decref(d->sel);
}

void acp_editor_free(struct acp_editor *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n; i++)
		doc_release(&e->docs[i]);
	free(e->docs);
	free(e);
}

static struct acp_editor *editor_of(struct acp_ctx *c, struct wap_err *err)
{
	if (!c->s->editor) {
		c->s->editor = calloc(1, sizeof(*c->s->editor));
		if (!c->s->editor) {
			wap_err_oom(err);
			return NULL;
		}
		c->s->editor->active = -1;
	}
	return c->s->editor;
}

static long doc_index(const struct acp_editor *e, const char *rel)
{
	for (size_t i = 0; e && i < e->n; i++)
		if (!strcmp(e->docs[i].rel, rel))
			return (long)i;
	return -1;
}

/* The open document REL, or NULL. */
static struct acp_doc *doc_find(struct acp_ctx *c, const char *rel)
{
	long i = doc_index(c->s->editor, rel);

	return i < 0 ? NULL : &c->s->editor->docs[i];
}

static void add_uri(struct wap_sb *uri, const char *abs)
{
	wap_sb_adds(uri, "file://");
	for (const char *p = abs; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    strchr("/-._~", ch))
			wap_sb_addc(uri, (char)ch);
		else
			wap_sb_addf(uri, "%%%02X", ch);
	}
}

/* REL's absolute path (as the protocol names files) or its file:// URI. */
static json_t *abs_json(struct acp_ctx *c, const char *rel, bool uri)
{
	char *abs = wap_ws_abs(ACP_WS(c), rel);
	struct wap_sb sb = WAP_SB_INIT;
	json_t *j;

	if (uri)
		add_uri(&sb, abs ? abs : rel);
	else
		wap_sb_adds(&sb, abs ? abs : rel);
	j = json_string(sb.buf ? sb.buf : "");
	wap_sb_release(&sb);
	free(abs);
	return j;
}

/* REL's mtime in ms, through the stat op (-1 with ERR). */
static long long mtime_ms(struct acp_ctx *c, const char *rel, bool need_file, struct wap_err *err)
{
	json_t *st;
	long long ms;

	if (acp_stat_op(c, rel, &st, err) < 0)
		return -1;
	if (need_file && !json_is_true(json_object_get(st, "isFile"))) {
		json_decref(st);
		return wap_err_set(err, WAP_E_NOT_FILE, "Not a file: %s", rel);
	}
	ms = acp_iso_to_ms(json_string_value(json_object_get(st, "modified")));
	json_decref(st);
	return ms;
}

/* Open REL (it must be a file the stat op sees) in COLUMN, or find it
 * open; it becomes the active document. */
static struct acp_doc *doc_open(struct acp_ctx *c, const char *rel, long column, struct wap_err *err)
{
	struct acp_editor *e = editor_of(c, err);
	struct acp_doc *d, *nd;
	long long ms;
	long i;

	if (!e)
		return NULL;
	if ((i = doc_index(e, rel)) >= 0) {
		e->active = i;
		return &e->docs[i];
	}
	if ((ms = mtime_ms(c, rel, true, err)) < 0)
		return NULL;
	nd = realloc(e->docs, (e->n + 1) * sizeof(*nd));
	if (!nd) {
		wap_err_oom(err);
		return NULL;
	}
	e->docs = nd;
	d = &e->docs[e->n];
	memset(d, 0, sizeof(*d));
	if (!(d->rel = strdup(rel))) {
		wap_err_oom(err);
		return NULL;
	}
	d->version = ms;
	d->column = column > 0 ? column : 1;
	e->active = (long)e->n++;
	return d;
}

/* The text of D: its buffer, or the file through the read op.  *OWNED
 * (to free) is set when the text was read. */
static int doc_text(struct acp_ctx *c, struct acp_doc *d, const char **text, size_t *len,
		    json_t **owned, struct wap_err *err)
{
	json_t *content;

	*owned = NULL;
	if (d->buf) {
		*text = d->buf;
		*len = d->len;
		return 0;
	}
	if (acp_read_whole(c, d->rel, "utf-8", owned, err) < 0)
		return -1;
	content = json_object_get(*owned, "content");
	*text = json_string_value(content);
	*len = json_string_length(content);
	return *text ? 0 : wap_err_set(err, WAP_E_FAILED, "read gave no content for %s", d->rel);
}

static json_int_t line_count(const char *t, size_t len)
{
	json_int_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += t[i] == '\n';
	return len && t[len - 1] != '\n' ? n + 1 : n ? n : 1;
}

/* Change the buffer of open document D: CONTENT replaces it, else EDITS
 * (LSP TextEdits) are applied.  Gated and audited as the edit op. */
static int buffer_change(struct acp_ctx *c, struct acp_doc *d, const json_t *content, const json_t *edits,
			 struct wap_err *err)
{
	json_t *req = json_pack("{s:s, s:b}", "path", d->rel, "buffer", 1), *disk = NULL;
	struct wap_edit_spec spec = { .mode = WAP_EDIT_POSITIONS, .list = edits, .path = d->rel };
	struct wap_edit_info info = { 0 };
	struct acp_editor *e = editor_of(c, err);
	char *out = NULL;
	size_t outlen = 0, o;
	double t0;
	int rc;

	if (!e) {
		json_decref(req);
		return -1;
	}
	rc = wap_run_begin(&c->run, "edit", req, &t0, err);
	if (rc) {
		if (rc == WAP_POLICY_UNAPPROVED)
			c->code = RPC_CANCELLED;
		json_decref(req);
		return -1;
	}
	if (!d->buf && !content) {	/* the first change: the buffer is the file */
		rc = acp_read_whole(c, d->rel, "utf-8", &disk, err);
		if (!rc) {
			json_t *t = json_object_get(disk, "content");
			d->len = json_string_length(t);
			d->buf = malloc(d->len + 1);
			d->base = strdup(json_string_value(json_object_get(disk, "version")) ?: "");
			if (d->buf)
				memcpy(d->buf, json_string_value(t), d->len + 1);
			if (!d->buf || !d->base)
				rc = wap_err_oom(err);
		}
		json_decref(disk);
	} else if (!d->buf) {		/* replaced whole: the version it replaces */
		rc = acp_read_whole(c, d->rel, "base64", &disk, err);
		if (!rc && !(d->base = strdup(json_string_value(json_object_get(disk, "version")) ?: "")))
			rc = wap_err_oom(err);
		json_decref(disk);
	}
	if (!rc && content) {
		outlen = json_string_length(content);
		if ((out = malloc(outlen + 1)))
			memcpy(out, json_string_value(content), outlen + 1);
		else
			rc = wap_err_oom(err);
	} else if (!rc) {
		rc = wap_edit_apply(&spec, d->buf, d->len, &out, &outlen, &info, err) ? -1 : 0;
		wap_edit_info_release(&info);
	}
	if (!rc && outlen > ACP_WS(c)->lim.max_file_size)
		rc = wap_err_set(err, WAP_E_TOO_LARGE, "File too large: %s would be %zu bytes (limits.maxFileSize %zu)",
				 d->rel, outlen, ACP_WS(c)->lim.max_file_size);
	if (!rc && (o = unsaved(e, d)) + outlen > ACP_MAX_UNSAVED)
		rc = wap_err_set(err, WAP_E_TOO_LARGE, "Unsaved buffers would hold %zu bytes (%u MiB at most in a "
				 "session): save or close some first", o + outlen, ACP_MAX_UNSAVED >> 20);
	if (!rc && !held_room(d, outlen, &o))
		rc = wap_err_set(err, WAP_E_TOO_LARGE, "Unsaved buffers would hold %zu bytes (%zu MiB at most in "
				 "all sessions): save or close some first", o, unsaved_all_max() >> 20);
	if (!rc) {
		free(d->buf);
		d->buf = out;
		d->len = outlen;
		out = NULL;
		d->version++;
	} else if (!d->buf) {
		free(d->base);
		d->base = NULL;
	}
	held_now(d);	/* a first change that failed keeps the file's text */
	free(out);
	wap_run_done(&c->run, "edit", req, t0, rc, err);
	json_decref(req);
	return rc;
}

/* Write D's buffer through the write op, if the file is still at the
 * version the buffer was made from. */
static int doc_save(struct acp_ctx *c, struct acp_doc *d, struct wap_err *err)
{
	json_t *r2;
	long long ms;

	if (!d->buf)
		return 0;
	if (acp_run_op(c, "write", json_pack("{s:s, s:s%, s:s}", "path", d->rel, "content", d->buf, d->len,
					     "expected_version", d->base ? d->base : ""), &r2, err) < 0)
		return -1;
	json_decref(r2);
	free(d->buf);
	free(d->base);
	d->buf = d->base = NULL;
	held_now(d);
	if ((ms = mtime_ms(c, d->rel, false, err)) < 0)
		return -1;
	d->version = ms > d->version ? ms : d->version + 1;
	return 0;
}

/* The open document named by "path", or NULL (and no error) if it is not
 * open; -1 on a bad path. */
static int open_doc_of(struct acp_ctx *c, struct acp_doc **d, char **rel, struct wap_err *err)
{
	if (acp_rel_path(c, "path", rel, err) < 0)
		return -1;
	*d = doc_find(c, *rel);
	return 0;
}

int acp_editor_getContent(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	char *rel;
	json_t *r2;
	int r;

	struct acp_doc *d;

	if (open_doc_of(c, &d, &rel, err) < 0)
		return -1;
	if (d && d->buf) {	/* the unsaved buffer, past the read gate */
		json_t *req = json_pack("{s:s}", "path", rel);
		double t0;
		r = wap_run_begin(&c->run, "read", req, &t0, err);
		if (!r) {
			*res = json_pack("{s:s%, s:s}", "content", d->buf, d->len, "languageId", language_id(rel));
			wap_run_done(&c->run, "read", req, t0, 0, err);
		}
		json_decref(req);
		free(rel);
		return r ? -1 : 0;
	}
	r = acp_read_whole(c, rel, "utf-8", &r2, err);
	if (r == 0) {
		*res = json_pack("{s:O, s:s}", "content", json_object_get(r2, "content"),
				 "languageId", language_id(rel));
		json_decref(r2);
	}
	free(rel);
	return r;
}

int acp_editor_setContent(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	struct acp_doc *d;
	char *rel;
	json_t *content = json_object_get(c->params, "content");

	if (!json_is_string(content))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: content");
	if (open_doc_of(c, &d, &rel, err) < 0)
		return -1;
	free(rel);
	if (d) {
		if (buffer_change(c, d, content, NULL, err) < 0)
			return -1;
		*res = acp_success();
		return 0;
	}
	if (acp_write_common(c, false, res, err) < 0)
		return -1;
	json_object_del(*res, "version");
	return 0;
}

static json_t *lsp_edit(const json_t *range, const json_t *text)
{
	return json_pack("{s:O, s:O}", "range", range, "newText", text);
}

static int run_edits(struct acp_ctx *c, json_t *edits, json_t **res, struct wap_err *err)
{
	char *rel;
	json_t *r2;
	int r;

	struct acp_doc *d;

	if (open_doc_of(c, &d, &rel, err) < 0) {
		json_decref(edits);
		return -1;
	}
	if (d) {		/* an open document: its buffer */
		r = buffer_change(c, d, NULL, edits, err);
		json_decref(edits);
		free(rel);
		*res = NULL;
		return r;
	}
	r = acp_run_op(c, "edit", json_pack("{s:s, s:o}", "path", rel, "text_edits", edits), &r2, err);
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

int acp_editor_insertText(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	json_t *pos = json_object_get(c->params, "position"), *text = json_object_get(c->params, "text");

	if (!is_pos(pos))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: position ({line, character})");
	if (!json_is_string(text))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: text");
	if (run_edits(c, json_pack("[{s:{s:O, s:O}, s:O}]", "range", "start", pos, "end", pos, "newText", text),
		      res, err) < 0)
		return -1;
	*res = acp_success();
	return 0;
}

int acp_editor_replaceRange(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	json_t *range = json_object_get(c->params, "range"), *text = json_object_get(c->params, "text");

	if (!is_range(range))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: range ({start, end})");
	if (!json_is_string(text))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: text");
	if (run_edits(c, json_pack("[o]", lsp_edit(range, text)), res, err) < 0)
		return -1;
	*res = acp_success();
	return 0;
}

int acp_editor_deleteRange(struct acp_ctx *c, json_t **res, struct wap_err *err)
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
	*res = acp_success();
	return 0;
}

int acp_editor_applyEdits(struct acp_ctx *c, json_t **res, struct wap_err *err)
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

int acp_editor_getDocumentInfo(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	char *rel, *abs;
	json_t *r2, *md, *ver;
	json_int_t size, lines;
	struct wap_sb uri = WAP_SB_INIT;

	struct acp_doc *d;

	if (open_doc_of(c, &d, &rel, err) < 0)
		return -1;
	if (d && d->buf) {	/* an unsaved buffer */
		json_t *req = json_pack("{s:s}", "path", rel);
		double t0;
		int r = wap_run_begin(&c->run, "read", req, &t0, err);
		if (!r) {
			*res = json_pack("{s:o, s:s, s:I, s:I, s:b, s:s, s:I}", "uri", abs_json(c, rel, true),
				"languageId", language_id(rel), "version", (json_int_t)d->version,
				"lineCount", line_count(d->buf, d->len), "isDirty", 1,
				"contentVersion", "", "size", (json_int_t)d->len);
			wap_run_done(&c->run, "read", req, t0, 0, err);
		}
		json_decref(req);
		free(rel);
		return r ? -1 : 0;
	}
	/* base64: a document need not be UTF-8 to be described */
	if (acp_read_whole(c, rel, "base64", &r2, err) < 0) {
		free(rel);
		return -1;
	}
	md = json_object_get(r2, "metadata");
	size = json_integer_value(json_object_get(md, "size"));
	lines = json_integer_value(json_object_get(r2, "totalLines"));
	ver = json_object_get(r2, "version");
	abs = wap_ws_abs(ACP_WS(c), rel);
	add_uri(&uri, abs ? abs : rel);
	/* A clean document: version is the file's mtime in ms (it grows
	 * with every write), contentVersion its git blob id. */
	*res = json_pack("{s:s, s:s, s:I, s:I, s:b, s:s, s:I}", "uri", uri.buf ? uri.buf : "",
		"languageId", language_id(rel),
		"version", (json_int_t)acp_iso_to_ms(json_string_value(json_object_get(md, "lastModified"))),
		"lineCount", size ? lines : (json_int_t)1, "isDirty", 0,
		"contentVersion", json_is_string(ver) ? json_string_value(ver) : "", "size", size);
	wap_sb_release(&uri);
	free(abs);
	json_decref(r2);
	free(rel);
	return 0;
}

int acp_editor_save(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	struct acp_editor *e = c->s->editor;
	struct acp_doc *d;
	char *rel = NULL;
	json_t *st;

	if (wap_req_path(&c->call, c->params, "path", NULL, &rel, err) < 0)
		return -1;
	if (!rel && (!e || e->active < 0)) {
		c->code = RPC_NO_EDITOR;
		return wap_err_set(err, WAP_E_INVALID,
			"No active text editor: pass path, or open a file first (editor.openFile)");
	}
	d = rel ? doc_find(c, rel) : &e->docs[e->active];
	if (d) {
		free(rel);
		if (doc_save(c, d, err) < 0)
			return -1;
		*res = acp_success();
		return 0;
	}
	if (acp_stat_op(c, rel, &st, err) < 0) {
		free(rel);
		return -1;
	}
	json_decref(st);
	free(rel);
	*res = acp_success();	/* not open: every write is already on disk */
	return 0;
}

/* Every unsaved buffer; one that cannot be saved is kept, the rest are
 * saved, and the first failure is the answer. */
int acp_editor_saveAll(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	struct acp_editor *e = c->s->editor;
	struct wap_err e2 = { 0 };
	int rc = 0;

	for (size_t i = 0; e && i < e->n; i++) {
		if (doc_save(c, &e->docs[i], rc ? &e2 : err) < 0)
			rc = -1;
		wap_err_release(&e2);
	}
	if (rc)
		return -1;
	*res = acp_success();
	return 0;
}

/* ---------- the editor's views: open, close, active, selections ---------- */

static int opt_column(struct acp_ctx *c, long *col, struct wap_err *err)
{
	long long v = 1;

	if (wap_req_int(c->params, "viewColumn", &v, err) < 0)
		return -1;
	if (v < 1 || v > 9)
		return wap_err_set(err, WAP_E_INVALID, "viewColumn must be 1 to 9");
	*col = (long)v;
	return 0;
}

int acp_editor_openFile(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	bool preview = true;
	long col = 1;
	char *rel;
	struct acp_doc *d;

	if (wap_req_bool(c->params, "preview", &preview, err) < 0 || opt_column(c, &col, err) < 0 ||
	    acp_rel_path(c, "path", &rel, err) < 0)
		return -1;
	d = doc_open(c, rel, col, err);
	if (d && json_object_get(c->params, "viewColumn"))
		d->column = col;
	if (d)
		*res = json_pack("{s:o}", "documentUri", abs_json(c, rel, true));
	free(rel);
	return d ? 0 : -1;
}

int acp_editor_closeFile(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	struct acp_editor *e = c->s->editor;
	char *rel;
	long i;

	if (acp_rel_path(c, "path", &rel, err) < 0)
		return -1;
	i = doc_index(e, rel);
	free(rel);
	if (i >= 0) {
		doc_release(&e->docs[i]);
		memmove(&e->docs[i], &e->docs[i + 1], (e->n - (size_t)i - 1) * sizeof(e->docs[0]));
		e->n--;
		if (e->active == i)
			e->active = (long)e->n - 1;	/* the last opened one left */
		else if (e->active > i)
			e->active--;
	}
	*res = json_pack("{s:b}", "success", i >= 0);
	return 0;
}

static json_t *zero_range(void)
{
	return json_pack("{s:{s:i, s:i}, s:{s:i, s:i}}", "start", "line", 0, "character", 0,
			 "end", "line", 0, "character", 0);
}

static bool nonneg_pos(const json_t *p)
{
	return json_integer_value(json_object_get(p, "line")) >= 0 &&
	       json_integer_value(json_object_get(p, "character")) >= 0;
}

int acp_editor_setSelection(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	json_t *range = json_object_get(c->params, "range");
	struct acp_doc *d;
	char *rel;

	if (!is_range(range) || !nonneg_pos(json_object_get(range, "start")) ||
	    !nonneg_pos(json_object_get(range, "end")))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: range ({start, end}, 0-based)");
	if (acp_rel_path(c, "path", &rel, err) < 0)
		return -1;
	d = doc_open(c, rel, 1, err);
	free(rel);
	if (!d)
		return -1;
	json_decref(d->sel);
	d->sel = json_deep_copy(range);
	*res = acp_success();
	return 0;
}

int acp_editor_revealLine(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *at = "center", *text;
	long long line;
	size_t len;
	json_t *owned;
	struct acp_doc *d;
	char *rel;
	int r;

	if (wap_req_str(c->params, "at", &at, err) < 0)
		return -1;
	if (strcmp(at, "top") && strcmp(at, "center") && strcmp(at, "bottom"))
		return wap_err_set(err, WAP_E_INVALID, "at must be \"top\", \"center\" or \"bottom\"");
	if (!json_is_integer(json_object_get(c->params, "line")))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: line (0-based)");
	line = json_integer_value(json_object_get(c->params, "line"));
	if (acp_rel_path(c, "path", &rel, err) < 0)
		return -1;
	d = doc_open(c, rel, 1, err);
	free(rel);
	if (!d || doc_text(c, d, &text, &len, &owned, err) < 0)
		return -1;
	r = line < 0 || line >= line_count(text, len) ?
		wap_err_set(err, WAP_E_INVALID, "Line %lld is past the end of %s (%lld lines)", line, d->rel,
			    (long long)line_count(text, len)) : 0;
	json_decref(owned);
	if (!r)
		*res = acp_success();
	return r;
}

static struct acp_doc *active_doc(struct acp_ctx *c, struct wap_err *err)
{
	struct acp_editor *e = c->s->editor;

	if (e && e->active >= 0)
		return &e->docs[e->active];
	c->code = RPC_NO_EDITOR;
	wap_err_set(err, WAP_E_INVALID, "No active text editor: open a file first (editor.openFile)");
	return NULL;
}

int acp_editor_getSelection(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	struct acp_doc *d = active_doc(c, err);
	json_t *range, *owned, *s, *e;
	const char *text;
	size_t len;
	long a, b;

	if (!d || doc_text(c, d, &text, &len, &owned, err) < 0)
		return -1;
	range = d->sel ? json_incref(d->sel) : zero_range();
	s = json_object_get(range, "start");
	e = json_object_get(range, "end");
	a = wap_lsp_offset(text, len, json_integer_value(json_object_get(s, "line")),
			   json_integer_value(json_object_get(s, "character")), err);
	b = a < 0 ? -1 : wap_lsp_offset(text, len, json_integer_value(json_object_get(e, "line")),
					json_integer_value(json_object_get(e, "character")), err);
	if (b >= 0) {
		if (b < a) {
			long t = a;
			a = b;
			b = t;
		}
		*res = json_pack("{s:o, s:s%}", "range", range, "text", text + a, (size_t)(b - a));
	} else {
		json_decref(range);
	}
	json_decref(owned);
	return b >= 0 ? 0 : -1;
}

int acp_editor_getActiveFile(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	struct acp_doc *d = active_doc(c, err);

	if (!d)
		return -1;
	*res = json_pack("{s:o, s:s}", "path", abs_json(c, d->rel, false), "languageId", language_id(d->rel));
	return 0;
}

int acp_editor_getOpenFiles(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	struct acp_editor *e = c->s->editor;
	json_t *files = json_array();

	(void)err;
	for (size_t i = 0; e && i < e->n; i++)
		json_array_append_new(files, abs_json(c, e->docs[i].rel, false));
	*res = json_pack("{s:o}", "files", files);
	return 0;
}

int acp_state_getOpenDocuments(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	struct acp_editor *e = c->s->editor;
	json_t *docs = json_array();

	for (size_t i = 0; e && i < e->n; i++) {
		struct acp_doc *d = &e->docs[i];
		long long v = d->version;
		if (!d->buf) {		/* clean: the file's own version now */
			struct wap_err e2 = { 0 };
			long long ms = mtime_ms(c, d->rel, false, &e2);
			wap_err_release(&e2);
			if (ms > v)
				v = d->version = ms;
		}
		json_array_append_new(docs, json_pack("{s:o, s:s, s:I, s:b}", "uri", abs_json(c, d->rel, true),
			"languageId", language_id(d->rel), "version", (json_int_t)v, "isDirty", d->buf != NULL));
	}
	(void)err;
	*res = json_pack("{s:o}", "documents", docs);
	return 0;
}

int acp_state_getVisibleEditors(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	struct acp_editor *e = c->s->editor;
	json_t *eds = json_array();

	(void)err;
	for (size_t i = 0; e && i < e->n; i++) {
		struct acp_doc *d = &e->docs[i];
		json_array_append_new(eds, json_pack("{s:o, s:I, s:[o]}", "documentUri", abs_json(c, d->rel, true),
			"viewColumn", (json_int_t)d->column, "selections", d->sel ? json_incref(d->sel) : zero_range()));
	}
	*res = json_pack("{s:o}", "editors", eds);
	return 0;
}

/* ---------- command.*: wap's applets as commands ---------- */

static bool is_command(const struct wap_applet *a)
{
	return a->op && !(a->flags & WAP_APPLET_NOTOOL);
}

int acp_command_list(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *filter = "";
	json_t *cmds;
	char name[80];

	if (wap_req_str(c->params, "filter", &filter, err) < 0)
		return -1;
	cmds = json_array();
	for (size_t i = 0; wap_applets[i]; i++) {
		if (!is_command(wap_applets[i]))
			continue;
		snprintf(name, sizeof(name), "wap.%s", wap_applets[i]->name);
		if (!strncmp(name, filter, strlen(filter)))
			json_array_append_new(cmds, json_string(name));
	}
	*res = json_pack("{s:o}", "commands", cmds);
	return 0;
}

/* The command wap.NAME runs op NAME with args[0] as its request, on the
 * one road; the op's own category must be allowed too, so command.*
 * opens no category that policy closed. */
int acp_command_execute(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *cmd;
	const struct wap_applet *a = NULL;
	const char *opcat;
	json_t *args = json_object_get(c->params, "args"), *req, *r2;

	if (acp_need_str(c, "command", &cmd, err) < 0)
		return -1;
	if (!strncmp(cmd, "wap.", 4))
		a = wap_applet_find(cmd + 4);
	if (!a || !is_command(a))
		return wap_err_set(err, WAP_E_INVALID,
				   "Unknown command: %s (wap's commands are its applets, wap.NAME: see command.list)", cmd);
	if (args && !(json_is_array(args) && json_array_size(args) <= 1 &&
		      (!json_array_size(args) || json_is_object(json_array_get(args, 0)))))
		return wap_err_set(err, WAP_E_INVALID, "args must be [] or [{the %s op's arguments}]", a->name);
	req = json_array_size(args) ? json_deep_copy(json_array_get(args, 0)) : json_object();
	if (!req)
		return wap_err_oom(err);
	/* the category of what it does: sym's rename writes files (fs),
	 * though sym's lookups are state; an unknown action falls closed
	 * to the applet's and then to the op's own checks */
	opcat = wap_op_category(a->name, req);
	if (wap_policy_feature(ACP_WS(c), opcat ? opcat : a->name, a->name, err) ||
	    (!strcmp(a->name, "grep") && opcat && strcmp(opcat, "search") &&
	     wap_policy_feature(ACP_WS(c), "search", a->name, err))) {
		json_decref(req);
		c->code = RPC_DISABLED;
		return -1;
	}
	c->call.category = NULL;	/* on the road too: the op's own */
	if (acp_run_op(c, a->name, req, &r2, err) < 0)
		return -1;
	*res = json_pack("{s:o}", "result", r2);
	return 0;
}
