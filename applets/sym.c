/* wap sym: symbols, references, definitions, diagnostics and rename through language servers
 *
 * usage: wap sym ACTION [OPTIONS] [FILE] [NAMEPATH]
 *
 * Code intelligence from the language server of FILE's language (clangd,
 * typescript-language-server, pyright, gopls, rust-analyzer: see
 * `wap sym servers` and the config's lsp.servers), run in the exec
 * sandbox: it reads the workspace, never writes it, has no network.  Where
 * no server is found, universal-ctags answers overview and find.  Every
 * result says which answered ("source": "clangd" or "ctags").
 *
 * A symbol is named by its name path: its name, after the names of the
 * symbols holding it, joined by '/' ("Greeter/greet", "point/x"); a
 * leading '/' anchors it at the top of the file.  Or by a position:
 * --line N (from 1) and --column N (characters, from 1), or --character N
 * (UTF-16 code units from 0, as LSP counts).  Results give lines from 1,
 * columns in characters from 1, and the LSP range (lines from 0, UTF-16
 * units) beside them.
 *
 * Writing actions (rename, replace-body, insert-before, insert-after,
 * format) apply every change to every file or none: each file is read and
 * checked (restrictedPaths, read-only, .git) first, each written
 * atomically with the version it was read at, and should a write fail the
 * files already written are put back.  They return the unified diff;
 * --dry-run writes nothing.  --expected-version guards FILE.
 *
 * JSON result: source, path; overview gives symbols (name, name_path,
 * kind, line, end_line, column, detail, range, children); find gives
 * symbols (with path); refs and def give locations (path, line, column,
 * end_line, end_column, text, range); hover gives content; diag gives
 * diagnostics (line, column, severity, message, code, range) and complete;
 * complete gives items, isIncomplete; actions gives actions; the writing
 * actions give files, diff, changed, applied; servers gives servers.
 *
 * actions:
 *   overview FILE              the symbols of FILE (a tree; --depth to cut it)
 *   find NAMEPATH [FILE]       symbols by name path, in FILE or the workspace
 *   refs FILE NAMEPATH         references to a symbol (declaration included)
 *   def FILE NAMEPATH          where a symbol is defined (a position: --line)
 *   hover FILE                 what the server says at --line/--column
 *   diag FILE                  the server's diagnostics of FILE
 *   rename FILE NAMEPATH       rename a symbol everywhere (--new-name)
 *   replace-body FILE NAMEPATH replace a symbol's whole text with --text
 *   insert-before FILE NAMEPATH  insert --text before a symbol
 *   insert-after FILE NAMEPATH   insert --text after a symbol
 *   format FILE                format FILE as the server would
 *   complete FILE              completions at --line/--column
 *   actions FILE               code actions for --line..--end-line
 *   servers                    the table of language servers and which are found
 *
 * options:
 *   ACTION                  overview|find|refs|def|hover|diag|rename|replace-body|insert-before|insert-after|format|complete|actions|servers
 *   ARGS                    FILE and NAMEPATH, as the action takes them
 *   --path FILE             the file (instead of an argument)
 *   --name-path NAMEPATH    the symbol (instead of an argument)
 *   --line N                a position: line, from 1
 *   --column N              a position: column in characters, from 1 (default 1)
 *   --character N           a position: UTF-16 code units from 0 (LSP's count)
 *   --end-line N            actions: the range's last line (default --line)
 *   --end-column N          actions: the range's end column (default: end of line)
 *   --end-character N       actions: the range's end in UTF-16 code units from 0
 *   --new-name NAME         rename: the new name
 *   --text TEXT             replace-body, insert-before, insert-after: the text
 *   -d, --depth N           overview: levels of children to keep (default all)
 *   --include-body          overview, find: each symbol's text too
 *   --dry-run               writing actions: show the diff, write nothing
 *   --expected-version V    writing actions: FILE must still be at version V
 *   --ctags                 overview, find: ask universal-ctags, not a server
 *   --timeout-ms N          how long to wait for the server (default 30000; at
 *                           most limits.maxExecutionTimeCap)
 *
 * examples:
 *   wap sym overview src/parse.c
 *   wap sym find Parser/next --include-body
 *   wap sym refs src/parse.c parse_expr
 *   wap sym rename src/parse.c parse_expr --new-name parse_expression
 *   wap sym diag src/main.ts --json
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "applet.h"
#include "applets.h"
#include "config.h"
#include "diff.h"
#include "edit.h"
#include "file.h"
#include "landlock.h"
#include "lsp.h"
#include "proc.h"
#include "strbuf.h"
#include "text.h"
#include "tree.h"

#define DEFAULT_TIMEOUT_MS	30000
#define DIAG_WAIT_MS		10000	/* a parse of a big file */
#define MAX_CANDIDATES		500	/* files opened to find references */

static const struct wap_opt sym_opts[] = {
	{ "action", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ "args", 0, WAP_OPT_STRS, WAP_OPT_POS, NULL },
	{ "path", 0, WAP_OPT_STR, 0, NULL },
	{ "name-path", 0, WAP_OPT_STR, 0, NULL },
	{ "line", 0, WAP_OPT_INT, 0, NULL },
	{ "column", 0, WAP_OPT_INT, 0, NULL },
	{ "character", 0, WAP_OPT_INT, 0, NULL },
	{ "end-line", 0, WAP_OPT_INT, 0, NULL },
	{ "end-column", 0, WAP_OPT_INT, 0, NULL },
	{ "end-character", 0, WAP_OPT_INT, 0, NULL },
	{ "new-name", 0, WAP_OPT_STR, 0, NULL },
	{ "text", 0, WAP_OPT_STR, 0, NULL },
	{ "depth", 'd', WAP_OPT_INT, 0, NULL },
	{ "include-body", 0, WAP_OPT_BOOL, 0, NULL },
	{ "dry-run", 0, WAP_OPT_BOOL, 0, NULL },
	{ "expected-version", 0, WAP_OPT_STR, 0, NULL },
	{ "ctags", 0, WAP_OPT_BOOL, 0, NULL },
	{ "timeout-ms", 0, WAP_OPT_INT, 0, NULL },
	{ NULL }
};

static const char *const kinds[] = {
	"", "file", "module", "namespace", "package", "class", "method", "property", "field",
	"constructor", "enum", "interface", "function", "variable", "constant", "string",
	"number", "boolean", "array", "object", "key", "null", "enum member", "struct",
	"event", "operator", "type parameter"
};

static const char *kind_name(json_int_t k)
{
	return k > 0 && k < (json_int_t)(sizeof(kinds) / sizeof(kinds[0])) ? kinds[k] : "symbol";
}

/* One request's state. */
struct sym {
	struct wap_call *call;
	const struct wap_ws *ws;
	const json_t *req;
	const char *action, *path_arg, *name_path;
	char *rel;			/* FILE, root-relative */
	long timeout;
	struct wap_lsp *srv;
	char *text, *uri;		/* FILE's bytes and URI once synced */
	size_t len;
	struct wap_lsp_lines li;	/* ... and its lines */
	bool let_go;			/* the tree lock let go while the server
					 * works: taken again to write */
};

/* ---------- positions ---------- */

/* edit.h's offset of an LSP position, clamped to the line's start where
 * it falls inside a character */
static size_t lsp_off(const char *text, size_t len, long line, long u16)
{
	long o = wap_lsp_offset(text, len, line < 0 ? 0 : line, u16 < 0 ? 0 : u16, NULL);

	if (o < 0)
		o = wap_lsp_offset(text, len, line < 0 ? 0 : line, 0, NULL);
	return o < 0 ? 0 : (size_t)o;
}

static json_t *lsp_pos(long line, long ch)
{
	return json_pack("{s:I, s:I}", "line", (json_int_t)line, "character", (json_int_t)ch);
}

static long jint(const json_t *o, const char *k)
{
	return (long)json_integer_value(json_object_get(o, k));
}

/* Fill OBJ with line, column, end_line, end_column of the LSP RANGE in
 * TEXT, and the range itself. */
static void put_range_li(json_t *obj, const struct wap_lsp_lines *li, const char *text, size_t len,
			 const json_t *range, const char *pre);

static void put_range(json_t *obj, const char *text, size_t len, const json_t *range, const char *pre)
{
	put_range_li(obj, NULL, text, len, range, pre);
}

static long column_of(const struct wap_lsp_lines *li, const char *text, size_t len, long line, long ch)
{
	return li ? wap_lsp_lines_column(li, line, ch) : text ? wap_lsp_column(text, len, line, ch) : ch + 1;
}

static void put_range_li(json_t *obj, const struct wap_lsp_lines *li, const char *text, size_t len,
			 const json_t *range, const char *pre)
{
	const json_t *s = json_object_get(range, "start"), *e = json_object_get(range, "end");
	char k[32];

	snprintf(k, sizeof(k), "%sline", pre);
	json_object_set_new(obj, k, json_integer(jint(s, "line") + 1));
	snprintf(k, sizeof(k), "%scolumn", pre);
	json_object_set_new(obj, k, json_integer(column_of(li, text, len, jint(s, "line"), jint(s, "character"))));
	snprintf(k, sizeof(k), "%send_line", pre);
	json_object_set_new(obj, k, json_integer(jint(e, "line") + 1));
	snprintf(k, sizeof(k), "%send_column", pre);
	json_object_set_new(obj, k, json_integer(column_of(li, text, len, jint(e, "line"), jint(e, "character"))));
	snprintf(k, sizeof(k), "%srange", pre);
	json_object_set(obj, k, (json_t *)range);
}

/* The text of RANGE in LI's text (a new string). */
static json_t *range_text(const struct wap_lsp_lines *li, const json_t *range)
{
	const json_t *s = json_object_get(range, "start"), *e = json_object_get(range, "end");
	size_t a = wap_lsp_lines_offset(li, jint(s, "line"), jint(s, "character"));
	size_t b = wap_lsp_lines_offset(li, jint(e, "line"), jint(e, "character"));

	return json_stringn(li->text + a, b > a ? b - a : 0);
}

/* ---------- the server ---------- */

static int need_server(struct sym *y, struct wap_err *err)
{
	if (!y->srv && wap_lsp_acquire(y->ws, y->rel, y->call->cancel, &y->srv, err))
		return -1;
	if (!y->text && wap_lsp_sync(y->srv, y->ws, y->rel, &y->text, &y->len, &y->uri, err))
		return -1;
	if (!y->li.start && wap_lsp_lines_init(&y->li, y->text, y->len))
		return wap_err_oom(err);
	return 0;
}

static int request(struct sym *y, const char *method, json_t *params, json_t **res, struct wap_err *err)
{
	return wap_lsp_request(y->srv, method, params, y->timeout, y->call->cancel, res, err);
}

static json_t *doc_params(struct sym *y)
{
	return json_pack("{s:{s:s}}", "textDocument", "uri", y->uri);
}

/* The symbols of the synced file as a normalised tree: DocumentSymbol[]
 * as it is, SymbolInformation[] turned into one. */
static json_t *norm_symbols(struct sym *y, const json_t *in, const char *parent, int depth,
			    int maxdepth, bool body)
{
	json_t *out = json_array(), *v;
	size_t i;

	json_array_foreach(in, i, v) {
		const char *name = json_string_value(json_object_get(v, "name"));
		const json_t *range = json_object_get(v, "range"), *sel = json_object_get(v, "selectionRange");
		const json_t *loc = json_object_get(v, "location");
		const char *cont = json_string_value(json_object_get(v, "containerName"));
		struct wap_sb np = WAP_SB_INIT;
		json_t *o;

		if (!name)
			continue;
		if (!range && loc)
			range = json_object_get(loc, "range");
		if (!sel)
			sel = range;
		if (!range)
			continue;
		if (parent && *parent) {
			wap_sb_adds(&np, parent);
			wap_sb_addc(&np, '/');
		} else if (cont && *cont) {
			wap_sb_adds(&np, cont);
			wap_sb_addc(&np, '/');
		}
		wap_sb_adds(&np, name);
		o = json_pack("{s:s, s:s, s:s}", "name", name, "name_path", np.buf ? np.buf : name,
			      "kind", kind_name(json_integer_value(json_object_get(v, "kind"))));
		put_range_li(o, &y->li, y->text, y->len, range, "");
		json_object_set(o, "selection_range", (json_t *)sel);
		if (json_is_string(json_object_get(v, "detail")) && *json_string_value(json_object_get(v, "detail")))
			json_object_set(o, "detail", json_object_get(v, "detail"));
		if (body)
			json_object_set_new(o, "body", range_text(&y->li, range));
		if (json_array_size(json_object_get(v, "children")) && (maxdepth < 0 || depth < maxdepth))
			json_object_set_new(o, "children", norm_symbols(y, json_object_get(v, "children"),
									np.buf, depth + 1, maxdepth, body));
		wap_sb_release(&np);
		json_array_append_new(out, o);
	}
	return out;
}

static int doc_symbols(struct sym *y, int maxdepth, bool body, json_t **out, struct wap_err *err)
{
	json_t *r;

	if (request(y, "textDocument/documentSymbol", doc_params(y), &r, err))
		return -1;
	*out = norm_symbols(y, json_is_array(r) ? r : NULL, NULL, 0, maxdepth, body);
	json_decref(r);
	return 0;
}

/* Does name path NP ("a/b") name the symbol whose full path is FULL? */
static bool np_match(const char *np, const char *full)
{
	size_t n, f;

	if (*np == '/')
		return !strcmp(np + 1, full);
	n = strlen(np);
	f = strlen(full);
	return f >= n && !strcmp(full + f - n, np) && (f == n || full[f - n - 1] == '/');
}

static void collect(const json_t *syms, const char *np, json_t *hits)
{
	const json_t *v;
	size_t i;

	json_array_foreach(syms, i, v) {
		if (np_match(np, json_string_value(json_object_get(v, "name_path"))))
			json_array_append(hits, (json_t *)v);
		collect(json_object_get(v, "children"), np, hits);
	}
}

/* The symbol NAMEPATH names in the synced file: exactly one (several
 * overloads: the first, the others named in the error only when ambiguous
 * by kind too). */
static int find_symbol(struct sym *y, json_t **sym, struct wap_err *err)
{
	json_t *syms, *hits;
	int rc = 0;

	*sym = NULL;
	if (doc_symbols(y, -1, false, &syms, err))
		return -1;
	hits = json_array();
	collect(syms, y->name_path, hits);
	if (!json_array_size(hits))
		rc = wap_err_set(err, WAP_E_NO_MATCH, "No symbol %s in %s", y->name_path, y->rel);
	else
		*sym = json_incref(json_array_get(hits, 0));
	json_decref(hits);
	json_decref(syms);
	return rc;
}

/* The LSP position the request names: NAMEPATH's name, or --line with
 * --column / --character. */
static int position(struct sym *y, json_t **pos, struct wap_err *err)
{
	long long line = 0, col = 0, ch = -1;

	*pos = NULL;
	if (y->name_path) {
		json_t *s;
		const json_t *st;
		if (find_symbol(y, &s, err))
			return -1;
		st = json_object_get(json_object_get(s, "selection_range"), "start");
		*pos = lsp_pos(jint(st, "line"), jint(st, "character"));
		json_decref(s);
		return 0;
	}
	if (wap_req_int(y->req, "line", &line, err) < 0 || wap_req_int(y->req, "column", &col, err) < 0 ||
	    wap_req_int(y->req, "character", &ch, err) < 0)
		return -1;
	if (line < 1)
		return wap_err_set(err, WAP_E_INVALID, "%s needs a symbol: NAMEPATH, or --line N (from 1) with --column or --character",
				   y->action);
	if (ch < 0) {
		/* characters from 1 -> UTF-16 units from 0 */
		size_t s = lsp_off(y->text, y->len, line - 1, 0), off = s;
		long c = col > 1 ? col - 1 : 0;
		while (c > 0 && off < y->len && y->text[off] != '\n') {
			off++;
			while (off < y->len && ((unsigned char)y->text[off] & 0xC0) == 0x80)
				off++;
			c--;
		}
		ch = wap_lsp_u16(y->text, s, off);
	}
	*pos = lsp_pos(line - 1, ch);
	return 0;
}

/* ---------- locations in other files ---------- */

/* The files a server's locations name, each read once with its line
 * index: every location is then placed without a scan from the file's
 * start (a server answers with as many as it likes). */
struct ftext {
	char *rel;
	char *buf;		/* NULL: not readable */
	struct wap_lsp_lines li;
};
struct files {
	json_t *index;		/* rel -> its entry in f */
	struct ftext *f;
	size_t n;
};

static const struct ftext *file_text(struct sym *y, struct files *fs, const char *rel)
{
	json_t *k = json_object_get(fs->index, rel);
	struct ftext *f, *nf;

	if (k)
		return &fs->f[json_integer_value(k)];
	if (!(nf = realloc(fs->f, (fs->n + 1) * sizeof(*fs->f))))
		return NULL;
	fs->f = nf;
	f = memset(&fs->f[fs->n], 0, sizeof(*f));
	if (!(f->rel = strdup(rel)))
		return NULL;
	if (!strcmp(rel, y->rel) && y->text) {
		if ((f->buf = malloc(y->len + 1)))
			memcpy(f->buf, y->text, y->len + 1);
		f->li.len = y->len;
	} else if (wap_read_file(y->ws, rel, y->ws->lim.max_file_size, &f->buf, &f->li.len, NULL, NULL)) {
		f->buf = NULL;
	}
	if (f->buf && wap_lsp_lines_init(&f->li, f->buf, f->li.len)) {
		free(f->buf);
		f->buf = NULL;
	}
	json_object_set_new(fs->index, rel, json_integer((json_int_t)fs->n));
	return &fs->f[fs->n++];
}

static void files_release(struct files *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		if (fs->f[i].buf)
			wap_lsp_lines_release(&fs->f[i].li);
		free(fs->f[i].buf);
		free(fs->f[i].rel);
	}
	free(fs->f);
	json_decref(fs->index);
}

/* Location[] or LocationLink[] (or one Location) into wap's locations;
 * those outside the root are counted in *OUTSIDE, those restrictedPaths
 * hide in *HIDDEN (the server reads the whole root: its answers are
 * judged as any path an op opens). */
static json_t *locations(struct sym *y, const json_t *in, int *outside, int *hidden)
{
	json_t *out = json_array(), *one = NULL;
	struct files fs = { .index = json_object() };
	const json_t *v;
	size_t i;

	*outside = *hidden = 0;
	if (json_is_object(in))
		in = one = json_pack("[O]", in);
	json_array_foreach(in, i, v) {
		const char *uri = json_string_value(json_object_get(v, "uri"));
		const json_t *range = json_object_get(v, "range");
		char *rel;
		const struct ftext *f;
		json_t *o;

		if (!uri) {
			uri = json_string_value(json_object_get(v, "targetUri"));
			range = json_object_get(v, "targetSelectionRange");
		}
		if (!(rel = wap_lsp_rel(y->ws, uri)) || !range) {
			(*outside)++;
			free(rel);
			continue;
		}
		if (wap_ws_restricted(y->ws, rel, strlen(rel))) {
			(*hidden)++;
			free(rel);
			continue;
		}
		f = file_text(y, &fs, rel);
		o = json_pack("{s:s}", "path", rel);
		if (f && f->buf) {
			long line = jint(json_object_get(range, "start"), "line");
			size_t a = wap_lsp_lines_offset(&f->li, line, 0), b = a;
			put_range_li(o, &f->li, f->buf, f->li.len, range, "");
			while (b < f->li.len && f->buf[b] != '\n' && f->buf[b] != '\r')
				b++;
			json_object_set_new(o, "text", json_stringn(f->buf + a, b - a));
		} else {
			put_range(o, NULL, 0, range, "");
		}
		json_array_append_new(out, o);
		free(rel);
	}
	files_release(&fs);
	json_decref(one);
	return out;
}

/* Open every file of FILE's language that holds WORD, so that servers
 * which answer from open files (clangd's dynamic index) see them all, and
 * wait until each has been parsed (its diagnostics came). */
static int open_candidates(struct sym *y, const char *word, struct wap_err *err)
{
	const struct wap_applet *grep = wap_applet_find("grep");
	const char *lang = wap_lsp_language(y->ws, y->rel, NULL);
	json_t *req, *res = NULL, *files, *v, *uris = json_array();
	size_t i;
	int rc = 0;

	if (!grep || !grep->op || !word || !*word)
		return 0;
	req = json_pack("{s:s, s:b, s:b, s:b, s:i}", "pattern", word, "fixed_strings", 1,
			"word_regexp", 1, "files_with_matches", 1, "max_results", MAX_CANDIDATES);
	if (grep->op(y->call, req, &res, err)) {
		/* nothing found is no error here */
		json_decref(req);
		json_decref(uris);
		return 0;
	}
	json_decref(req);
	files = json_object_get(res, "files");
	json_array_foreach(files, i, v) {
		const char *rel = json_string_value(v), *l = rel ? wap_lsp_language(y->ws, rel, NULL) : NULL;
		char *uri = NULL;
		if (!l || strcmp(l, lang) || !strcmp(rel, y->rel))
			continue;
		if (wap_lsp_sync(y->srv, y->ws, rel, NULL, NULL, &uri, NULL))
			continue;	/* unreadable (restricted): not the server's to see */
		json_array_append_new(uris, json_string(uri));
		free(uri);
	}
	json_array_append_new(uris, json_string(y->uri));
	json_array_foreach(uris, i, v) {
		json_t *d = wap_lsp_diagnostics(y->srv, json_string_value(v), DIAG_WAIT_MS, y->call->cancel, NULL);
		json_decref(d);
		if (wap_call_cancelled(y->call)) {
			rc = wap_cancel_err(err);
			break;
		}
	}
	json_decref(uris);
	json_decref(res);
	return rc;
}

/* ---------- applying edits ---------- */

struct change {
	char *rel;
	char *old, *new;
	size_t oldlen, newlen;
	char version[WAP_VERSION_LEN + 1], newver[WAP_VERSION_LEN + 1];
	json_t *edits;		/* TextEdit[] */
	bool written;
};

static int edit_cmp(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	const json_t *xs = json_object_get(json_object_get(x, "range"), "start");
	const json_t *ys = json_object_get(json_object_get(y, "range"), "start");
	long d = jint(ys, "line") - jint(xs, "line");

	if (!d)
		d = jint(ys, "character") - jint(xs, "character");
	return d < 0 ? -1 : d > 0;
}

/* OLD with EDITS applied (overlapping edits are refused), in one pass:
 * positions found through a line index, the text copied once (a server's
 * 100,000 edits, each applied to a copy of the whole file, cost 100 GB
 * of copying). */
static int apply_edits(struct change *c, struct wap_err *err)
{
	size_t n = json_array_size(c->edits), prev = (size_t)-1, at = 0;
	json_t **e = calloc(n ? n : 1, sizeof(*e));
	size_t (*ab)[2] = calloc(n ? n : 1, sizeof(*ab));
	struct wap_lsp_lines li = { 0 };
	struct wap_sb out = WAP_SB_INIT;
	int rc = -1;

	if (!e || !ab || wap_lsp_lines_init(&li, c->old, c->oldlen)) {
		wap_err_oom(err);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		e[i] = json_array_get(c->edits, i);
	qsort(e, n, sizeof(*e), edit_cmp);	/* last first */
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_object_get(e[i], "range");
		const json_t *s = json_object_get(r, "start"), *t = json_object_get(r, "end");
		size_t a = wap_lsp_lines_offset(&li, jint(s, "line"), jint(s, "character"));
		size_t b = wap_lsp_lines_offset(&li, jint(t, "line"), jint(t, "character"));
		if (b < a || b > prev || !json_is_string(json_object_get(e[i], "newText"))) {
			wap_err_set(err, WAP_E_INVALID, "the language server proposed overlapping edits in %s",
				    c->rel);
			goto out;
		}
		prev = a;
		ab[i][0] = a;
		ab[i][1] = b;
	}
	for (size_t i = n; i-- > 0;) {
		const json_t *nt = json_object_get(e[i], "newText");
		wap_sb_add(&out, c->old + at, ab[i][0] - at);
		wap_sb_adds(&out, json_string_value(nt));
		at = ab[i][1];
	}
	wap_sb_add(&out, c->old + at, c->oldlen - at);
	wap_sb_addc(&out, 0);
	if (out.oom) {
		wap_err_oom(err);
		goto out;
	}
	c->newlen = out.len - 1;
	c->new = wap_sb_detach(&out);
	rc = 0;
out:
	wap_sb_release(&out);
	wap_lsp_lines_release(&li);
	free(ab);
	free(e);
	return rc;
}

static void changes_free(struct change *cs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(cs[i].rel);
		free(cs[i].old);
		free(cs[i].new);
		json_decref(cs[i].edits);
	}
	free(cs);
}

/* Turn a WorkspaceEdit into changes, read and check every file. */
static int plan(struct sym *y, const json_t *wedit, struct change **out, size_t *nout, struct wap_err *err)
{
	json_t *byuri = json_object();
	const json_t *ch = json_object_get(wedit, "changes"), *dc = json_object_get(wedit, "documentChanges"), *v;
	const char *uri;
	struct change *cs = NULL;
	size_t n = 0, i;
	int rc = -1;

	if (json_is_object(ch))
		json_object_foreach((json_t *)ch, uri, v)
			json_object_set(byuri, uri, (json_t *)v);
	json_array_foreach(dc, i, v) {
		const char *u = json_string_value(json_object_get(json_object_get(v, "textDocument"), "uri"));
		json_t *have;
		if (!u) {
			wap_err_set(err, WAP_E_INVALID, "the language server proposes creating, renaming or deleting files (%s); wap applies text edits only",
				    json_string_value(json_object_get(v, "kind")) ? json_string_value(json_object_get(v, "kind")) : "?");
			goto out;
		}
		have = json_object_get(byuri, u);
		if (!have)
			json_object_set_new(byuri, u, have = json_array());
		json_array_extend(have, json_object_get(v, "edits"));
	}
	cs = calloc(json_object_size(byuri) + 1, sizeof(*cs));
	if (!cs) {
		wap_err_oom(err);
		goto out;
	}
	json_object_foreach(byuri, uri, v) {
		struct change *c = &cs[n];
		struct stat st;
		if (!(c->rel = wap_lsp_rel(y->ws, uri))) {
			wap_err_set(err, WAP_E_ACCESS, "the change touches %s, outside the workspace: nothing was changed", uri);
			goto out;
		}
		n++;
		c->edits = json_incref((json_t *)v);
		if (wap_ws_check(y->ws, c->rel, WAP_ACC_WRITE, err) ||
		    wap_read_file(y->ws, c->rel, y->ws->lim.max_file_size, &c->old, &c->oldlen, &st, err) ||
		    wap_check_writable(&st, c->rel, "make it writable first", err) ||
		    wap_blob_id(c->old, c->oldlen, c->version, err) || apply_edits(c, err)) {
			size_t l = strlen(err->msg);
			snprintf(err->msg + l, sizeof(err->msg) - l, " (nothing was changed)");
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(byuri);
	if (rc) {
		changes_free(cs, n);
		cs = NULL;
		n = 0;
	}
	*out = cs;
	*nout = n;
	return rc;
}

/* Write every change, or none: a failed write puts back those written. */
static int commit(struct sym *y, struct change *cs, size_t n, struct wap_err *err)
{
	const char *ev = NULL;

	if (wap_req_str(y->req, "expected_version", &ev, err) < 0)
		return -1;
	for (size_t i = 0; ev && i < n; i++)
		if (!strcmp(cs[i].rel, y->rel) && strcmp(cs[i].version, ev))
			return wap_err_set(err, WAP_E_CONFLICT,
					   "Conflict: %s changed since version %s (it is at %s); nothing was changed",
					   y->rel, ev, cs[i].version);
	for (size_t i = 0; i < n; i++) {
		struct wap_wopts wo = { .mode = WAP_W_OVERWRITE, .expected_version = cs[i].version };
		struct wap_wres wr;
		if (!strcmp(cs[i].old, cs[i].new) && cs[i].oldlen == cs[i].newlen)
			continue;
		if (wap_write_file(y->ws, cs[i].rel, cs[i].new, cs[i].newlen, &wo, &wr, err)) {
			size_t l = strlen(err->msg);
			for (size_t k = 0; k < i; k++) {
				struct wap_wopts bo = { .mode = WAP_W_OVERWRITE, .expected_version = cs[k].newver };
				if (cs[k].written)
					wap_write_file(y->ws, cs[k].rel, cs[k].old, cs[k].oldlen, &bo, &wr, NULL);
			}
			snprintf(err->msg + l, sizeof(err->msg) - l, " (the files written before it were put back)");
			return -1;
		}
		memcpy(cs[i].newver, wr.version, sizeof(wr.version));
		cs[i].written = true;
	}
	return 0;
}

/* Plan, diff and (unless --dry-run) write a WorkspaceEdit. */
static int apply_wedit(struct sym *y, const json_t *wedit, json_t **res, struct wap_err *err)
{
	struct change *cs = NULL;
	size_t n = 0;
	bool dry = false;
	json_t *files = json_array();
	struct wap_sb all = WAP_SB_INIT;
	int rc = -1, changed = 0;

	if (y->let_go) {
		if (wap_tree_lock(false, y->call->cancel, err))
			goto out;
		y->let_go = false;
	}
	if (wap_req_bool(y->req, "dry_run", &dry, err) < 0 || plan(y, wedit, &cs, &n, err))
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct wap_diff d;
		if (wap_diff_make(cs[i].old, cs[i].oldlen, cs[i].new, cs[i].newlen, cs[i].rel, cs[i].rel, &d, err))
			goto out;
		wap_sb_add(&all, d.text, d.len);
		changed += d.len > 0;
		json_array_append_new(files, json_pack("{s:s, s:I, s:s}", "path", cs[i].rel,
			"edits", (json_int_t)json_array_size(cs[i].edits), "version", cs[i].version));
		wap_diff_release(&d);
	}
	if (!dry && commit(y, cs, n, err))
		goto out;
	for (size_t i = 0; !dry && i < n; i++) {
		json_object_set_new(json_array_get(files, i), "version", json_string(cs[i].written ? cs[i].newver : cs[i].version));
		/* the server sees what wap wrote */
		wap_lsp_sync(y->srv, y->ws, cs[i].rel, NULL, NULL, NULL, NULL);
	}
	*res = json_pack("{s:s, s:s, s:O, s:s, s:i, s:b}", "source", wap_lsp_name(y->srv), "path", y->rel,
			 "files", files, "diff", all.buf ? all.buf : "", "changed", changed, "applied", !dry);
	rc = *res ? 0 : wap_err_oom(err);
out:
	json_decref(files);
	wap_sb_release(&all);
	changes_free(cs, n);
	return rc;
}

/* A WorkspaceEdit of one edit in the synced file. */
static json_t *one_edit(struct sym *y, const json_t *start, const json_t *end, const char *text)
{
	return json_pack("{s:{s:[{s:{s:O, s:O}, s:s}]}}", "changes", y->uri, "range", "start", start,
			 "end", end, "newText", text);
}

/* ---------- ctags ---------- */

/* Is the file ctags names at P readable under the policy where it really
 * is?  A file named by a link may be one restrictedPaths deny or one
 * outside the root: its symbols' names are what a read of it would show
 * (ninth and eleventh hostile reviews).  SEEN caches each path's answer. */
static bool tag_visible(struct sym *y, json_t *seen, const char *p)
{
	struct wap_err e = { 0 };
	json_t *v;
	int fd;

	if (p[0] == '.' && p[1] == '/')
		p += 2;
	if ((v = json_object_get(seen, p)))
		return json_is_true(v);
	fd = wap_ws_open(y->ws, p, O_PATH, 0, WAP_ACC_READ, &e);
	wap_err_release(&e);
	if (fd >= 0)
		close(fd);
	json_object_set_new(seen, p, json_boolean(fd >= 0));
	return fd >= 0;
}

/* FILE may be read, judged where it really is (wap_ws_open's check). */
static int readable(struct sym *y, const char *rel, struct wap_err *err)
{
	int fd = wap_ws_open(y->ws, rel, O_PATH, 0, WAP_ACC_READ, err);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* universal-ctags's tags for ARGS (run in the sandbox, no network) as
 * JSON objects; -1 with FEATURE_DISABLED when it is not installed. */
static int ctags(struct sym *y, const char *what, bool recurse, json_t **tags, struct wap_err *err)
{
	char *argv[20];
	int k = 0, rc = -1;
	struct wap_sandbox sb;
	struct wap_sandbox_opts so = { .fs = true, .read_only_root = true, .no_network = true };
	struct wap_proc_opts po = { .cwdfd = y->ws->rootfd, .stdin_fd = -1, .save_fd = { -1, -1 },
				    .timeout_ms = y->timeout, .kill_after_ms = 500,
				    .max_output = 64u << 20, .cancel = y->call->cancel };
	struct wap_proc_result pr;
	char *line, *save, **env = NULL, *dotpath = NULL;
	json_t *seen;

	*tags = NULL;
	if (access("/usr/bin/ctags", X_OK) && access("/usr/local/bin/ctags", X_OK))
		return wap_err_set(err, WAP_E_DISABLED,
				   "No language server for %s and no universal-ctags to fall back on (apt-get install universal-ctags)",
				   what);
	argv[k++] = "ctags";
	/* no option files: the workspace's .ctags.d is not wap's to obey */
	argv[k++] = "--quiet=yes";
	argv[k++] = "--options=NONE";
	argv[k++] = "--output-format=json";
	argv[k++] = "--fields=+nKzZSe";
	argv[k++] = "--extras=-F";
	argv[k++] = "-f";
	argv[k++] = "-";
	if (recurse) {
		/* links not followed, as grep walks: a link to /usr/include
		 * (or anywhere the sandbox reads) is no part of the workspace */
		argv[k++] = "-R";
		argv[k++] = "--links=no";
		argv[k++] = "--exclude=.git";
		argv[k++] = "--exclude=node_modules";
		argv[k++] = "--exclude=build";
		argv[k++] = "--exclude=dist";
		argv[k++] = ".";
	} else {
		/* "./" so that a name starting with '-' is no option */
		if (asprintf(&dotpath, "./%s", what) < 0)
			return wap_err_oom(err);
		argv[k++] = dotpath;
	}
	argv[k] = NULL;
	po.argv = argv;
	if (wap_sandbox_prepare(&sb, y->ws, &so, err)) {
		free(dotpath);
		return -1;
	}
	po.sandbox = &sb;
	{
		/* its temp files go to the sandbox's own dir */
		extern char **environ;
		for (size_t i = 0; environ[i]; i++)
			if (strncmp(environ[i], "TMPDIR=", 7) && wap_strv_push(&env, environ[i]))
				goto oom;
		if (sb.tmpenv && wap_strv_push(&env, sb.tmpenv))
			goto oom;
		po.envp = env;
	}
	if (wap_proc_run(&po, &pr, err))
		goto out;
	if (pr.exit_code) {
		wap_err_set(err, WAP_E_FAILED, "ctags failed (status %d): %.300s", pr.exit_code,
			    pr.out[1].data ? pr.out[1].data : "");
		wap_proc_result_release(&pr);
		goto out;
	}
	*tags = json_array();
	seen = json_object();
	for (line = strtok_r(pr.out[0].data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *t = json_loads(line, 0, NULL);
		const char *p = json_string_value(json_object_get(t, "path"));
		if (t && p && !wap_ws_restricted(y->ws, p[0] == '.' && p[1] == '/' ? p + 2 : p, strlen(p)) &&
		    tag_visible(y, seen, p))
			json_array_append(*tags, t);
		json_decref(t);
	}
	json_decref(seen);
	wap_proc_result_release(&pr);
	rc = 0;
	goto out;
oom:
	wap_err_oom(err);
out:
	wap_strv_free(env);
	free(dotpath);
	wap_sandbox_release(&sb);
	return rc;
}

/* A ctags tag as a wap symbol. */
static json_t *tag_symbol(const json_t *t, bool with_path)
{
	const char *name = json_string_value(json_object_get(t, "name"));
	const char *scope = json_string_value(json_object_get(t, "scope"));
	const char *path = json_string_value(json_object_get(t, "path"));
	struct wap_sb np = WAP_SB_INIT;
	json_t *o;

	if (scope && *scope) {
		for (const char *p = scope; *p; p++) {
			if (*p == ':' && p[1] == ':') {
				wap_sb_addc(&np, '/');
				p++;
			} else {
				wap_sb_addc(&np, *p == '.' ? '/' : *p);
			}
		}
		wap_sb_addc(&np, '/');
	}
	wap_sb_adds(&np, name);
	o = json_pack("{s:s, s:s, s:s, s:I, s:I}", "name", name, "name_path", np.buf,
		      "kind", json_string_value(json_object_get(t, "kind")) ? json_string_value(json_object_get(t, "kind")) : "symbol",
		      "line", json_integer_value(json_object_get(t, "line")),
		      "end_line", json_integer_value(json_object_get(t, "end")) ? json_integer_value(json_object_get(t, "end"))
									 : json_integer_value(json_object_get(t, "line")));
	if (with_path && path)
		json_object_set_new(o, "path", json_string(path[0] == '.' && path[1] == '/' ? path + 2 : path));
	wap_sb_release(&np);
	return o;
}

static int ctags_overview(struct sym *y, json_t **res, struct wap_err *err)
{
	json_t *tags, *syms = json_array(), *t;
	size_t i;

	if (!y->rel)
		return wap_err_set(err, WAP_E_INVALID, "overview needs a FILE");
	if (readable(y, y->rel, err) || ctags(y, y->rel, false, &tags, err)) {
		json_decref(syms);
		return -1;
	}
	json_array_foreach(tags, i, t)
		json_array_append_new(syms, tag_symbol(t, false));
	json_decref(tags);
	*res = json_pack("{s:s, s:s, s:o}", "source", "ctags", "path", y->rel, "symbols", syms);
	return 0;
}

static int ctags_find(struct sym *y, json_t **res, struct wap_err *err)
{
	json_t *tags, *syms = json_array(), *t;
	size_t i;

	if (y->rel ? readable(y, y->rel, err) || ctags(y, y->rel, false, &tags, err)
		   : ctags(y, "the workspace", true, &tags, err)) {
		json_decref(syms);
		return -1;
	}
	json_array_foreach(tags, i, t) {
		json_t *s = tag_symbol(t, true);
		if (!json_object_get(s, "path") && y->rel)
			json_object_set_new(s, "path", json_string(y->rel));
		if (np_match(y->name_path, json_string_value(json_object_get(s, "name_path"))))
			json_array_append(syms, s);
		json_decref(s);
	}
	json_decref(tags);
	*res = json_pack("{s:s, s:s, s:o}", "source", "ctags", "name_path", y->name_path, "symbols", syms);
	return 0;
}

/* ---------- the actions ---------- */

static int act_overview(struct sym *y, json_t **res, struct wap_err *err)
{
	long long depth = -1;
	bool body = false;
	json_t *syms;

	if (wap_req_int(y->req, "depth", &depth, err) < 0 || wap_req_bool(y->req, "include_body", &body, err) < 0)
		return -1;
	if (need_server(y, err) || doc_symbols(y, (int)depth, body, &syms, err))
		return -1;
	*res = json_pack("{s:s, s:s, s:o}", "source", wap_lsp_name(y->srv), "path", y->rel, "symbols", syms);
	return 0;
}

static int act_find(struct sym *y, json_t **res, struct wap_err *err)
{
	const char *last = strrchr(y->name_path, '/');
	json_t *tags = NULL, *files = json_object(), *out = json_array(), *t;
	const char *rel;
	bool body = false;
	size_t i;
	int rc = -1;

	last = last ? last + 1 : y->name_path;
	if (wap_req_bool(y->req, "include_body", &body, err) < 0)
		goto out;
	/* the files that define the name (universal-ctags knows them all
	 * fast), each then asked of its language server */
	if (y->rel) {
		json_object_set_new(files, y->rel, json_true());
	} else if (ctags(y, "the workspace", true, &tags, err)) {
		goto out;
	} else {
		json_array_foreach(tags, i, t) {
			const char *p = json_string_value(json_object_get(t, "path"));
			if (p && !strcmp(json_string_value(json_object_get(t, "name")), last))
				json_object_set_new(files, p[0] == '.' && p[1] == '/' ? p + 2 : p, json_true());
		}
	}
	json_object_foreach(files, rel, t) {
		struct sym one = *y;
		json_t *syms, *hits = json_array(), *h;
		size_t k;
		one.rel = (char *)rel;
		one.text = one.uri = NULL;
		one.li.start = NULL;
		one.srv = NULL;
		if (!wap_lsp_language(y->ws, rel, NULL) || need_server(&one, err)) {
			json_decref(hits);
			if (one.srv)
				wap_lsp_release(one.srv);
			wap_lsp_lines_release(&one.li);
			free(one.text);
			free(one.uri);
			if (y->rel)
				goto out;
			/* no server for it: the tag answers */
			json_array_foreach(tags, k, h) {
				const char *p = json_string_value(json_object_get(h, "path"));
				json_t *s;
				if (!p || strcmp(p[0] == '.' && p[1] == '/' ? p + 2 : p, rel))
					continue;
				s = tag_symbol(h, true);
				json_object_set_new(s, "source", json_string("ctags"));
				if (np_match(y->name_path, json_string_value(json_object_get(s, "name_path"))))
					json_array_append(out, s);
				json_decref(s);
			}
			continue;
		}
		if (!doc_symbols(&one, -1, body, &syms, err)) {
			collect(syms, y->name_path, hits);
			json_array_foreach(hits, k, h) {
				json_t *s = json_deep_copy(h);
				json_object_del(s, "children");
				json_object_set_new(s, "path", json_string(rel));
				json_object_set_new(s, "source", json_string(wap_lsp_name(one.srv)));
				json_array_append_new(out, s);
			}
			json_decref(syms);
		}
		json_decref(hits);
		wap_lsp_release(one.srv);
		wap_lsp_lines_release(&one.li);
		free(one.text);
		free(one.uri);
	}
	{
		/* the source: the server's name when one answered */
		const char *src = "ctags";
		json_array_foreach(out, i, t)
			if (strcmp(json_string_value(json_object_get(t, "source")), "ctags"))
				src = json_string_value(json_object_get(t, "source"));
		*res = json_pack("{s:s, s:s, s:O}", "source", src, "name_path", y->name_path, "symbols", out);
	}
	rc = 0;
out:
	json_decref(tags);
	json_decref(files);
	json_decref(out);
	return rc;
}

static int act_refs_def(struct sym *y, json_t **res, struct wap_err *err)
{
	bool refs = !strcmp(y->action, "refs");
	json_t *pos, *r, *locs;
	int outside, hidden;

	if (need_server(y, err) || position(y, &pos, err))
		return -1;
	if (refs) {
		/* the word at the position, for the files to open */
		size_t a = lsp_off(y->text, y->len, jint(pos, "line"), jint(pos, "character")), b = a;
		char *word;
		while (b < y->len && (y->text[b] == '_' || (y->text[b] >= '0' && y->text[b] <= '9') ||
				      ((y->text[b] | 32) >= 'a' && (y->text[b] | 32) <= 'z') || (unsigned char)y->text[b] >= 0x80))
			b++;
		word = strndup(y->text + a, b - a);
		if (open_candidates(y, word, err)) {
			free(word);
			json_decref(pos);
			return -1;
		}
		free(word);
	}
	if (request(y, refs ? "textDocument/references" : "textDocument/definition",
		    refs ? json_pack("{s:{s:s}, s:o, s:{s:b}}", "textDocument", "uri", y->uri, "position", pos,
				     "context", "includeDeclaration", 1)
			 : json_pack("{s:{s:s}, s:o}", "textDocument", "uri", y->uri, "position", pos),
		    &r, err))
		return -1;
	locs = locations(y, r, &outside, &hidden);
	json_decref(r);
	*res = json_pack("{s:s, s:s, s:o}", "source", wap_lsp_name(y->srv), "path", y->rel, "locations", locs);
	if (outside)
		json_object_set_new(*res, "outside_root", json_integer(outside));
	if (hidden)
		json_object_set_new(*res, "restricted", json_integer(hidden));
	return 0;
}

/* With restrictedPaths: is the symbol at POS defined in a file they hide
 * (its hover would show what a read of the file is refused)? */
static int defined_hidden(struct sym *y, const json_t *pos, struct wap_err *err)
{
	json_t *r, *locs;
	int outside, hidden;

	if (!y->ws->pol.restricted.n)
		return 0;
	if (request(y, "textDocument/definition", json_pack("{s:{s:s}, s:O}", "textDocument", "uri", y->uri,
							    "position", pos), &r, err))
		return -1;
	locs = locations(y, r, &outside, &hidden);
	json_decref(locs);
	json_decref(r);
	if (hidden)
		return wap_err_set(err, WAP_E_RESTRICTED, "Path restricted: %s's symbol at line %lld is "
				   "defined in a file denied by restrictedPaths", y->rel,
				   (long long)jint(pos, "line") + 1);
	return 0;
}

static json_t *hover_text(const json_t *c)
{
	struct wap_sb sb = WAP_SB_INIT;
	const json_t *v;
	size_t i;
	json_t *s;

	if (json_is_string(c))
		return json_incref((json_t *)c);
	if (json_is_object(c))
		return json_incref(json_object_get(c, "value") ? json_object_get(c, "value") : json_string(""));
	json_array_foreach(c, i, v) {
		json_t *t = hover_text(v);
		if (sb.len)
			wap_sb_adds(&sb, "\n\n");
		wap_sb_adds(&sb, json_string_value(t));
		json_decref(t);
	}
	s = json_string(sb.buf ? sb.buf : "");
	wap_sb_release(&sb);
	return s;
}

static int act_hover(struct sym *y, json_t **res, struct wap_err *err)
{
	json_t *pos, *r;

	if (need_server(y, err) || position(y, &pos, err))
		return -1;
	if (defined_hidden(y, pos, err)) {
		json_decref(pos);
		return -1;
	}
	if (request(y, "textDocument/hover", json_pack("{s:{s:s}, s:o}", "textDocument", "uri", y->uri,
						       "position", pos), &r, err))
		return -1;
	*res = json_pack("{s:s, s:s, s:o}", "source", wap_lsp_name(y->srv), "path", y->rel, "content",
			 json_is_object(r) ? hover_text(json_object_get(r, "contents")) : json_string(""));
	json_decref(r);
	return 0;
}

/* O's key TO: V's key FROM, when V has it */
static void copy_key(json_t *o, const char *to, const json_t *v, const char *from)
{
	json_t *x = json_object_get(v, from);

	if (x)
		json_object_set(o, to, x);
}

static int act_diag(struct sym *y, json_t **res, struct wap_err *err)
{
	static const char *const sev[] = { "error", "error", "warning", "info", "hint" };
	json_t *d, *out = json_array(), *v;
	bool fresh;
	size_t i;

	/* analysed afresh: a header it includes may have changed on disk
	 * since the server last looked (servers watch no files here) */
	if (need_server(y, err) || wap_lsp_recheck(y->srv, y->ws, y->rel, err)) {
		json_decref(out);
		return -1;
	}
	d = wap_lsp_diagnostics(y->srv, y->uri, y->timeout, y->call->cancel, &fresh);
	json_array_foreach(d, i, v) {
		json_int_t s = json_integer_value(json_object_get(v, "severity"));
		json_t *o = json_pack("{s:s, s:s}", "severity", sev[s >= 1 && s <= 4 ? s : 1],
				      "message", json_string_value(json_object_get(v, "message")) ?
						 json_string_value(json_object_get(v, "message")) : "");
		put_range_li(o, &y->li, y->text, y->len, json_object_get(v, "range"), "");
		copy_key(o, "code", v, "code");
		copy_key(o, "origin", v, "source");
		json_array_append_new(out, o);
	}
	json_decref(d);
	*res = json_pack("{s:s, s:s, s:o, s:b}", "source", wap_lsp_name(y->srv), "path", y->rel,
			 "diagnostics", out, "complete", fresh);
	return 0;
}

static int act_rename(struct sym *y, json_t **res, struct wap_err *err)
{
	const char *nn = NULL;
	json_t *pos, *r;
	int rc;

	if (wap_req_str(y->req, "new_name", &nn, err) < 0)
		return -1;
	if (!nn || !*nn)
		return wap_err_set(err, WAP_E_INVALID, "rename needs --new-name");
	if (need_server(y, err) || position(y, &pos, err))
		return -1;
	{
		size_t a = lsp_off(y->text, y->len, jint(pos, "line"), jint(pos, "character")), b = a;
		char *word;
		while (b < y->len && (y->text[b] == '_' || (y->text[b] >= '0' && y->text[b] <= '9') ||
				      ((y->text[b] | 32) >= 'a' && (y->text[b] | 32) <= 'z') || (unsigned char)y->text[b] >= 0x80))
			b++;
		word = strndup(y->text + a, b - a);
		rc = open_candidates(y, word, err);
		free(word);
		if (rc) {
			json_decref(pos);
			return -1;
		}
	}
	if (request(y, "textDocument/rename", json_pack("{s:{s:s}, s:o, s:s}", "textDocument", "uri", y->uri,
							"position", pos, "newName", nn), &r, err))
		return -1;
	if (!json_is_object(r)) {
		json_decref(r);
		return wap_err_set(err, WAP_E_NO_MATCH, "the language server has nothing to rename there");
	}
	rc = apply_wedit(y, r, res, err);
	json_decref(r);
	return rc;
}

static int act_body(struct sym *y, json_t **res, struct wap_err *err)
{
	const char *text = NULL;
	json_t *s, *we;
	const json_t *range, *at;
	int rc;

	if (wap_req_str(y->req, "text", &text, err) < 0)
		return -1;
	if (!text)
		return wap_err_set(err, WAP_E_INVALID, "%s needs --text", y->action);
	if (!y->name_path)
		return wap_err_set(err, WAP_E_INVALID, "%s needs a NAMEPATH", y->action);
	if (need_server(y, err) || find_symbol(y, &s, err))
		return -1;
	range = json_object_get(s, "range");
	if (!strcmp(y->action, "replace-body")) {
		we = one_edit(y, json_object_get(range, "start"), json_object_get(range, "end"), text);
	} else {
		/* whole lines: before the symbol's first, after its last */
		bool before = !strcmp(y->action, "insert-before");
		long line = jint(json_object_get(range, before ? "start" : "end"), "line") + !before;
		struct wap_sb t = WAP_SB_INIT;
		wap_sb_adds(&t, text);
		if (!t.len || t.buf[t.len - 1] != '\n')
			wap_sb_addc(&t, '\n');
		if (!before && lsp_off(y->text, y->len, line, 0) == y->len && y->len &&
		    y->text[y->len - 1] != '\n') {
			/* after the last line of a file with no final newline */
			struct wap_sb u = WAP_SB_INIT;
			wap_sb_addc(&u, '\n');
			wap_sb_add(&u, t.buf, t.len - 1);
			wap_sb_release(&t);
			t = u;
		}
		at = lsp_pos(line, 0);
		we = one_edit(y, at, at, t.buf ? t.buf : "");
		json_decref((json_t *)at);
		wap_sb_release(&t);
	}
	json_decref(s);
	rc = apply_wedit(y, we, res, err);
	json_decref(we);
	return rc;
}

static int act_format(struct sym *y, json_t **res, struct wap_err *err)
{
	json_t *r, *we;
	int rc;

	if (need_server(y, err))
		return -1;
	if (request(y, "textDocument/formatting", json_pack("{s:{s:s}, s:{s:i, s:b}}", "textDocument", "uri",
							    y->uri, "options", "tabSize", 8, "insertSpaces", 0), &r, err))
		return -1;
	we = json_pack("{s:{s:o}}", "changes", y->uri, json_is_array(r) ? json_incref(r) : json_array());
	json_decref(r);
	rc = apply_wedit(y, we, res, err);
	json_decref(we);
	return rc;
}

static int act_complete(struct sym *y, json_t **res, struct wap_err *err)
{
	static const char *const ck[] = { "", "text", "method", "function", "constructor", "field",
		"variable", "class", "interface", "module", "property", "unit", "value", "enum",
		"keyword", "snippet", "color", "file", "reference", "folder", "enumMember",
		"constant", "struct", "event", "operator", "typeParameter" };
	json_t *pos, *r, *items, *out = json_array(), *v;
	size_t i;

	if (need_server(y, err) || position(y, &pos, err)) {
		json_decref(out);
		return -1;
	}
	if (request(y, "textDocument/completion", json_pack("{s:{s:s}, s:o}", "textDocument", "uri", y->uri,
							    "position", pos), &r, err)) {
		json_decref(out);
		return -1;
	}
	items = json_is_array(r) ? r : json_object_get(r, "items");
	json_array_foreach(items, i, v) {
		json_int_t k = json_integer_value(json_object_get(v, "kind"));
		const json_t *te = json_object_get(v, "textEdit");
		json_t *o = json_pack("{s:O?, s:s}", "label", json_object_get(v, "label"),
				      "kind", k > 0 && k < 26 ? ck[k] : "text");
		if (!json_object_get(o, "label")) {
			json_decref(o);
			continue;
		}
		copy_key(o, "detail", v, "detail");
		if (json_object_get(v, "insertText"))
			json_object_set(o, "insertText", json_object_get(v, "insertText"));
		else if (json_object_get(te, "newText"))
			json_object_set(o, "insertText", json_object_get(te, "newText"));
		copy_key(o, "sortText", v, "sortText");
		json_array_append_new(out, o);
	}
	*res = json_pack("{s:s, s:s, s:o, s:b}", "source", wap_lsp_name(y->srv), "path", y->rel, "items", out,
			 "isIncomplete", json_is_true(json_object_get(r, "isIncomplete")));
	json_decref(r);
	return 0;
}

static int act_actions(struct sym *y, json_t **res, struct wap_err *err)
{
	long long el = 0, ec = 0, ech = -1;
	json_t *pos, *r, *out = json_array(), *v, *diags;
	size_t i;

	if (need_server(y, err) || position(y, &pos, err) || wap_req_int(y->req, "end_line", &el, err) < 0 ||
	    wap_req_int(y->req, "end_column", &ec, err) < 0 ||
	    wap_req_int(y->req, "end_character", &ech, err) < 0) {
		json_decref(out);
		return -1;
	}
	if (el < 1)
		el = jint(pos, "line") + 1;
	{
		size_t s = lsp_off(y->text, y->len, el - 1, 0), e = s, c = ec > 0 ? (size_t)ec - 1 : (size_t)-1;
		while (e < y->len && y->text[e] != '\n' && c) {
			e++;
			while (e < y->len && ((unsigned char)y->text[e] & 0xC0) == 0x80)
				e++;
			c--;
		}
		diags = wap_lsp_diagnostics(y->srv, y->uri, DIAG_WAIT_MS, y->call->cancel, NULL);
		if (request(y, "textDocument/codeAction",
			    json_pack("{s:{s:s}, s:{s:o, s:o}, s:{s:o}}", "textDocument", "uri", y->uri,
				      "range", "start", pos, "end",
				      lsp_pos(el - 1, ech >= 0 ? ech : wap_lsp_u16(y->text, s, e)),
				      "context", "diagnostics", diags), &r, err)) {
			json_decref(out);
			return -1;
		}
	}
	json_array_foreach(r, i, v) {
		json_t *o = json_pack("{s:O?}", "title", json_object_get(v, "title"));
		if (!json_object_get(o, "title")) {
			json_decref(o);
			continue;
		}
		copy_key(o, "kind", v, "kind");
		copy_key(o, "isPreferred", v, "isPreferred");
		json_array_append_new(out, o);
	}
	json_decref(r);
	*res = json_pack("{s:s, s:s, s:o}", "source", wap_lsp_name(y->srv), "path", y->rel, "actions", out);
	return 0;
}

static int sym_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	struct sym y = { .call = call, .ws = call->ws, .req = req, .timeout = DEFAULT_TIMEOUT_MS };
	const json_t *args = json_object_get(req, "args");
	const char *a0 = json_string_value(json_array_get(args, 0));
	const char *a1 = json_string_value(json_array_get(args, 1));
	long long t = 0;
	bool use_ctags = false;
	int rc = -1;

	*res = NULL;
	if (wap_req_str(req, "action", &y.action, err) < 0 || wap_req_str(req, "path", &y.path_arg, err) < 0 ||
	    wap_req_str(req, "name_path", &y.name_path, err) < 0 || wap_req_int(req, "timeout_ms", &t, err) < 0 ||
	    wap_req_bool(req, "ctags", &use_ctags, err) < 0)
		return -1;
	if (t > 0)
		y.timeout = t;
	if (y.timeout > call->ws->lim.max_exec_ms_cap)	/* as exec's timeout */
		y.timeout = call->ws->lim.max_exec_ms_cap;
	if (json_array_size(args) > 2)
		return wap_err_set(err, WAP_E_INVALID, "too many arguments: sym %s [FILE] [NAMEPATH]", y.action);
	if (!strcmp(y.action, "servers")) {
		*res = json_pack("{s:o}", "servers", wap_lsp_servers(y.ws));
		return *res ? 0 : wap_err_oom(err);
	}
	if (!strcmp(y.action, "find")) {
		/* find NAMEPATH [FILE] */
		if (a0 && !y.name_path)
			y.name_path = a0;
		if (a1 && !y.path_arg)
			y.path_arg = a1;
		if (!y.name_path || !*y.name_path)
			return wap_err_set(err, WAP_E_INVALID, "find needs a NAMEPATH");
	} else {
		if (a0 && !y.path_arg)
			y.path_arg = a0;
		if (a1 && !y.name_path)
			y.name_path = a1;
	}
	if (y.path_arg) {
		json_t *p = json_pack("{s:s}", "path", y.path_arg);
		rc = wap_req_path(call, p, "path", NULL, &y.rel, err);
		json_decref(p);
		if (rc)
			return -1;
		rc = -1;
	} else if (strcmp(y.action, "find")) {
		return wap_err_set(err, WAP_E_INVALID, "%s needs a FILE", y.action);
	}
	if (y.name_path && !*y.name_path)
		y.name_path = NULL;

	/* a writing action holds the tree lock (shared) only to write: a
	 * server starting or slow to answer held every move of the server,
	 * and the writes behind the move (apply_wedit takes it again) */
	y.let_go = wap_tree_let_go();
	if (!strcmp(y.action, "overview")) {
		if (use_ctags || !wap_lsp_language(y.ws, y.rel, NULL))
			rc = ctags_overview(&y, res, err);
		else if ((rc = act_overview(&y, res, err)) && err->kind == WAP_E_DISABLED &&
			 !strstr(err->msg, "Sandbox")) {
			/* no server found: universal-ctags answers */
			wap_err_release(err);
			rc = ctags_overview(&y, res, err);
		}
	} else if (!strcmp(y.action, "find")) {
		rc = use_ctags ? ctags_find(&y, res, err) : act_find(&y, res, err);
	} else if (!strcmp(y.action, "refs") || !strcmp(y.action, "def")) {
		rc = act_refs_def(&y, res, err);
	} else if (!strcmp(y.action, "hover")) {
		rc = act_hover(&y, res, err);
	} else if (!strcmp(y.action, "diag")) {
		rc = act_diag(&y, res, err);
	} else if (!strcmp(y.action, "rename")) {
		rc = act_rename(&y, res, err);
	} else if (!strcmp(y.action, "replace-body") || !strcmp(y.action, "insert-before") ||
		   !strcmp(y.action, "insert-after")) {
		rc = act_body(&y, res, err);
	} else if (!strcmp(y.action, "format")) {
		rc = act_format(&y, res, err);
	} else if (!strcmp(y.action, "complete")) {
		rc = act_complete(&y, res, err);
	} else if (!strcmp(y.action, "actions")) {
		rc = act_actions(&y, res, err);
	} else {
		wap_err_set(err, WAP_E_INVALID, "unknown action '%s' (see 'wap sym --help')", y.action);
	}
	if (rc && *res) {
		json_decref(*res);
		*res = NULL;
	}
	if (y.srv)
		wap_lsp_release(y.srv);
	wap_lsp_lines_release(&y.li);
	free(y.text);
	free(y.uri);
	free(y.rel);
	return rc ? -1 : 0;
}

/* ---------- text ---------- */

static void render_tree(FILE *out, const json_t *syms, int indent)
{
	const json_t *v;
	size_t i;

	json_array_foreach(syms, i, v) {
		long l = jint(v, "line"), e = jint(v, "end_line");
		fprintf(out, "%*s%s %s", indent, "", json_string_value(json_object_get(v, "kind")),
			json_string_value(json_object_get(v, "name")));
		if (e > l)
			fprintf(out, "  %ld-%ld\n", l, e);
		else
			fprintf(out, "  %ld\n", l);
		render_tree(out, json_object_get(v, "children"), indent + 2);
	}
}

static int sym_render(const json_t *res, const json_t *req, FILE *out)
{
	const char *action = json_string_value(json_object_get(req, "action"));
	const char *src = json_string_value(json_object_get(res, "source"));
	const json_t *v, *a;
	size_t i;

	if (!out) {
		/* the exit status alone: 1 when a search found nothing */
		a = json_object_get(res, "locations");
		if (!a && !strcmp(action, "find"))
			a = json_object_get(res, "symbols");
		return a && !json_array_size(a) ? 1 : 0;
	}
	if ((a = json_object_get(res, "servers"))) {
		json_array_foreach(a, i, v) {
			const char *f = json_string_value(json_object_get(v, "found"));
			fprintf(out, "%-11s %-36s %s\n", json_string_value(json_object_get(v, "language")),
				json_string_value(json_array_get(json_object_get(v, "command"), 0)) ?
				json_string_value(json_array_get(json_object_get(v, "command"), 0)) : "(off)",
				f ? f : "not found");
		}
		return 0;
	}
	if ((a = json_object_get(res, "diff"))) {
		fputs(json_string_value(a), out);
		fprintf(out, "%s %lld file(s) (%s)\n", json_is_true(json_object_get(res, "applied")) ? "changed" : "would change",
			(long long)json_integer_value(json_object_get(res, "changed")), src);
		return 0;
	}
	if (!strcmp(action, "overview")) {
		fprintf(out, "%s (%s)\n", json_string_value(json_object_get(res, "path")), src);
		render_tree(out, json_object_get(res, "symbols"), 2);
		return 0;
	}
	if ((a = json_object_get(res, "locations")) || !strcmp(action, "find")) {
		if (!a)
			a = json_object_get(res, "symbols");
		json_array_foreach(a, i, v) {
			fprintf(out, "%s:%lld:%lld: ", json_string_value(json_object_get(v, "path")),
				(long long)jint(v, "line"), (long long)(jint(v, "column") ? jint(v, "column") : 1));
			if (json_object_get(v, "text"))
				fprintf(out, "%s\n", json_string_value(json_object_get(v, "text")));
			else if (json_object_get(v, "kind"))
				fprintf(out, "%s %s\n", json_string_value(json_object_get(v, "kind")),
					json_string_value(json_object_get(v, "name_path")));
			else	/* a location whose line could not be read */
				fputc('\n', out);
		}
		return json_array_size(a) ? 0 : 1;
	}
	if ((a = json_object_get(res, "diagnostics"))) {
		const char *p = json_string_value(json_object_get(res, "path"));
		json_array_foreach(a, i, v)
			fprintf(out, "%s:%ld:%ld: %s: %s\n", p, jint(v, "line"), jint(v, "column"),
				json_string_value(json_object_get(v, "severity")),
				json_string_value(json_object_get(v, "message")));
		return 0;
	}
	if ((a = json_object_get(res, "content"))) {
		fprintf(out, "%s\n", json_string_value(a));
		return 0;
	}
	if ((a = json_object_get(res, "items"))) {
		json_array_foreach(a, i, v)
			fprintf(out, "%s\t%s\n", json_string_value(json_object_get(v, "label")),
				json_string_value(json_object_get(v, "kind")));
		return 0;
	}
	if ((a = json_object_get(res, "actions"))) {
		json_array_foreach(a, i, v)
			fprintf(out, "%s\n", json_string_value(json_object_get(v, "title")));
		return 0;
	}
	return 0;
}

const struct wap_applet wap_applet_sym = {
	.name = "sym",
	.summary = wap_summary_sym,
	.usage = wap_usage_sym,
	.title = "Code intelligence (language servers)",
	.opts = sym_opts,
	.op = sym_op,
	.render = sym_render,
};
