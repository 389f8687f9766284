/* wap grep: search file contents for a regular expression
 *
 * usage: wap grep [OPTIONS] PATTERN [PATH...]
 *        wap grep [OPTIONS] -e PATTERN [-e PATTERN...] [PATH...]
 *
 * Search the files under PATH (default: the workspace root) for PATTERN, a
 * PCRE2 regular expression, as ripgrep does: in parallel, skipping binary
 * files, the default exclusions (node_modules, .git, dist, build, .venv,
 * target, __pycache__, vendor), what .ignore files exclude and, inside a
 * git work tree, what .gitignore and .git/info/exclude exclude (as git
 * decides).  Hidden files are searched; symbolic links are not followed.
 * UTF-16 files with a byte order mark are searched as text.  Output is
 * sorted by path: `path:line:text`, lines cut at 2000 characters.  At most 100 matches are returned (--max-results); the
 * result says when it was truncated and the true total.  Exit status: 0
 * found, 1 nothing found, 2 error.
 *
 *   PATTERN                   a PCRE2 regular expression (a literal string with -F)
 *   PATHS                     files and directories to search (default: the root)
 *   -F, --fixed-strings       PATTERN is a literal string, not a regex
 *   -i, --ignore-case         match case-insensitively (Unicode)
 *   -w, --word-regexp         match whole words only
 *   -x, --line-regexp         match whole lines only
 *   -v, --invert-match        select the lines that do not match
 *   -U, --multiline           let a match span lines
 *   -e, --regexp PATTERN      a pattern (repeatable; any PATTERN argument is then a PATH)
 *   --include GLOB            search only files matching GLOB (repeatable)
 *   --exclude GLOB            skip files and directories matching GLOB (repeatable)
 *   -t, --type TYPE           search only files of TYPE: c, cpp, cs, css, go, html, java, js, json, kotlin, lua, make, md, php, py, rb, rust, sh, sql, swift, toml, ts, txt, xml, yaml (repeatable)
 *   --max-depth N             descend at most N directories below PATH
 *   -l, --files-with-matches  list only the files that have a match
 *   -c, --count               count the matching lines of each file
 *   -o, --only-matching       show only the matched parts, one per entry
 *   -A, --after-context N     show N lines after each match
 *   -B, --before-context N    show N lines before each match
 *   -C, --context N           show N lines before and after each match
 *   -m, --max-results N       return at most N matches (default 100; 0: all)
 *   --no-ignore               do not apply .gitignore, .git/info/exclude and .ignore
 *   --no-default-excludes     search the default exclusions too (never .git)
 *   -L, --follow              follow symbolic links (loop-safe, within the root)
 *   --sort ORDER              path (default), mtime (newest file first) or none
 *   -z, --search-archives     search inside gz/xz/zst/bz2 files and tar/zip/7z members (archive//member)
 *   -a, --text                search binary files as text
 *   -r, --replace TEXT        show matching lines with each match replaced by TEXT ($1, ${name}: groups)
 *   --write                   with --replace: rewrite every matching file atomically; result {count, files}
 *   --jsonl                   print ripgrep's --json message stream (begin, match, context, end, summary), every match
 *   -j, --threads N           search with N threads (default: one per CPU)
 *   -n, --line-number         accepted as grep takes it: line numbers are always shown
 *
 * --json prints the WAP searchFiles result: {matches: [{path, line,
 * matchText, contextBefore, contextAfter}], isTruncated, totalMatches}
 * (with -l: files, with -c: counts).  An invalid regex is an
 * INVALID_ARGUMENT error carrying PCRE2's message and offset.
 *
 * examples:
 *   wap grep TODO src
 *   wap grep -i 'fn +main' --type rust
 *   wap grep -l PM_RESUME --json
 *   wap grep -w old_name -r new_name --write
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lazy.h"
#include "applet.h"
#include "applets.h"
#include "archives.h"
#include "file.h"
#include "match.h"
#include "strbuf.h"
#include "text.h"
#include "walk.h"

static const struct wap_opt grep_opts[] = {
	{ "fixed-strings", 'F', WAP_OPT_BOOL, 0, NULL },
	{ "ignore-case", 'i', WAP_OPT_BOOL, 0, NULL },
	{ "word-regexp", 'w', WAP_OPT_BOOL, 0, NULL },
	{ "line-regexp", 'x', WAP_OPT_BOOL, 0, NULL },
	{ "invert-match", 'v', WAP_OPT_BOOL, 0, NULL },
	{ "multiline", 'U', WAP_OPT_BOOL, 0, NULL },
	{ "regexp", 'e', WAP_OPT_STRS, 0, NULL },
	{ "include", 0, WAP_OPT_STRS, 0, NULL },
	{ "exclude", 0, WAP_OPT_STRS, 0, NULL },
	{ "type", 't', WAP_OPT_STRS, 0, NULL },
	{ "max-depth", 0, WAP_OPT_INT, 0, NULL },
	{ "files-with-matches", 'l', WAP_OPT_BOOL, 0, NULL },
	{ "count", 'c', WAP_OPT_BOOL, 0, NULL },
	{ "only-matching", 'o', WAP_OPT_BOOL, 0, NULL },
	{ "after-context", 'A', WAP_OPT_INT, 0, NULL },
	{ "before-context", 'B', WAP_OPT_INT, 0, NULL },
	{ "context", 'C', WAP_OPT_INT, 0, NULL },
	{ "max-results", 'm', WAP_OPT_INT, 0, NULL },
	{ "no-ignore", 0, WAP_OPT_BOOL, 0, NULL },
	{ "no-default-excludes", 0, WAP_OPT_BOOL, 0, NULL },
	{ "follow", 'L', WAP_OPT_BOOL, 0, NULL },
	{ "sort", 0, WAP_OPT_STR, 0, NULL },
	{ "search-archives", 'z', WAP_OPT_BOOL, 0, NULL },
	{ "text", 'a', WAP_OPT_BOOL, 0, NULL },
	{ "replace", 'r', WAP_OPT_STR, 0, NULL },
	{ "write", 0, WAP_OPT_BOOL, 0, NULL },
	{ "jsonl", 0, WAP_OPT_BOOL, 0, NULL },
	{ "threads", 'j', WAP_OPT_INT, 0, NULL },
	{ "line-number", 'n', WAP_OPT_BOOL, WAP_OPT_CLI, NULL },
	{ "pattern", 0, WAP_OPT_STR, WAP_OPT_POS, NULL },
	{ "paths", 0, WAP_OPT_STRS, WAP_OPT_POS, NULL },
	{ NULL }
};

/* --type: a small table of common languages */
static const struct {
	const char *name, *alias, *globs;
} types[] = {
	{ "c", NULL, "*.c *.h" },
	{ "cpp", "c++", "*.cpp *.cc *.cxx *.c++ *.hpp *.hh *.hxx *.h *.inl" },
	{ "cs", "csharp", "*.cs" },
	{ "css", NULL, "*.css *.scss *.sass *.less" },
	{ "go", NULL, "*.go" },
	{ "html", NULL, "*.html *.htm" },
	{ "java", NULL, "*.java" },
	{ "js", "javascript", "*.js *.jsx *.mjs *.cjs" },
	{ "json", NULL, "*.json *.jsonl" },
	{ "kotlin", "kt", "*.kt *.kts" },
	{ "lua", NULL, "*.lua" },
	{ "make", NULL, "Makefile makefile GNUmakefile *.mk *.mak" },
	{ "md", "markdown", "*.md *.markdown" },
	{ "php", NULL, "*.php" },
	{ "py", "python", "*.py *.pyi" },
	{ "rb", "ruby", "*.rb Gemfile Rakefile *.gemspec" },
	{ "rust", "rs", "*.rs" },
	{ "sh", "shell", "*.sh *.bash *.zsh" },
	{ "sql", NULL, "*.sql" },
	{ "swift", NULL, "*.swift" },
	{ "toml", NULL, "*.toml" },
	{ "ts", "typescript", "*.ts *.tsx *.mts *.cts" },
	{ "txt", NULL, "*.txt" },
	{ "xml", NULL, "*.xml" },
	{ "yaml", "yml", "*.yaml *.yml" },
	{ NULL, NULL, NULL }
};

enum { SORT_PATH, SORT_MTIME, SORT_NONE };
enum { OUT_JSON, OUT_TEXT, OUT_JSONL };	/* what search_buf produces */

/* one searched file with a match */
struct frec {
	char *path;
	struct timespec mtime;
	size_t count;		/* matching lines (occurrences with -o) */
	size_t bytes;
	size_t seq;
	json_t *recs;		/* OUT_JSON: match objects, NULL when not kept */
	struct wap_sb out;	/* OUT_TEXT, OUT_JSONL: the file's output */
	size_t *eoff;		/* where each entry starts in OUT */
	size_t neoff;
	size_t jl_lines, jl_subs;	/* OUT_JSONL: matched lines, submatches */
};

struct wk {
	char *buf;
	size_t cap;
	char *abuf;		/* archive members */
	size_t acap;
	struct wap_mstate *st;
	size_t searched, binary, bytes;
	struct wap_err merr;	/* a regex limit or a cancel stopped this worker */
	bool has_merr;
};

struct gctx {
	const struct wap_ws *ws;
	struct wap_matcher *m;
	bool invert, only, files, count, text, jsonl, archives, write;
	int mode;		/* OUT_* */
	const char *replace;
	long before, after;
	size_t max;		/* 0: all */
	size_t maxline;
	int sort;
	struct wap_globset include, types;
	volatile sig_atomic_t *cancelled;
	const struct wap_call *call;	/* progress reports */
	struct timespec last_progress;
	struct wk *wks;
	int nw;

	pthread_mutex_t mu;
	struct frec *fr;
	size_t nfr, cfr;
	size_t kept;		/* entries held in recs */
	size_t seq;
	bool cut;		/* files after CUTPATH keep no entries */
	struct frec cutkey;
};

/* ---- ordering ---- */

static int pathcmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned x = *a == '/' ? 1 : (unsigned char)*a;
		unsigned y = *b == '/' ? 1 : (unsigned char)*b;
		if (x != y || !x)
			return (int)x - (int)y;
	}
}

static int frcmp(const struct frec *a, const struct frec *b, int sort)
{
	if (sort == SORT_MTIME) {
		if (a->mtime.tv_sec != b->mtime.tv_sec)
			return a->mtime.tv_sec > b->mtime.tv_sec ? -1 : 1;
		if (a->mtime.tv_nsec != b->mtime.tv_nsec)
			return a->mtime.tv_nsec > b->mtime.tv_nsec ? -1 : 1;
	} else if (sort == SORT_NONE) {
		return a->seq < b->seq ? -1 : a->seq > b->seq;
	}
	return pathcmp(a->path, b->path);
}

static int frcmp_q(const void *a, const void *b, void *sort)
{
	return frcmp(a, b, *(const int *)sort);
}

static size_t weight(const struct gctx *g, const struct frec *f)
{
	if (g->files || g->count)
		return 1;
	if (g->mode != OUT_JSON)
		return f->neoff;
	return f->recs ? json_array_size(f->recs) : 0;
}

static void drop_entries(struct frec *f)
{
	json_decref(f->recs);
	f->recs = NULL;
	wap_sb_release(&f->out);
	free(f->eoff);
	f->eoff = NULL;
	f->neoff = 0;
}

/* Drop the entries no result can show: sort, keep the first MAX. */
static void prune(struct gctx *g)
{
	size_t acc = 0;

	if (g->nfr)
		qsort_r(g->fr, g->nfr, sizeof(*g->fr), frcmp_q, &g->sort);
	for (size_t i = 0; i < g->nfr; i++) {
		if (acc >= g->max) {
			drop_entries(&g->fr[i]);
			continue;
		}
		acc += weight(g, &g->fr[i]);
		if (acc >= g->max) {
			free(g->cutkey.path);
			g->cutkey = g->fr[i];
			g->cutkey.path = strdup(g->fr[i].path);
			g->cutkey.recs = NULL;
			g->cut = g->cutkey.path != NULL;
		}
	}
	g->kept = acc;
}

static void add_file(struct gctx *g, struct frec *f)
{
	pthread_mutex_lock(&g->mu);
	f->seq = g->seq++;
	if (g->max && !g->write && !g->jsonl) {
		if ((g->sort == SORT_NONE && g->kept >= g->max) ||
		    (g->cut && frcmp(f, &g->cutkey, g->sort) > 0))
			drop_entries(f);
	}
	if (g->nfr == g->cfr) {
		size_t nc = g->cfr ? g->cfr * 2 : 256;
		struct frec *n = realloc(g->fr, nc * sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&g->mu);
			free(f->path);
			drop_entries(f);
			return;
		}
		g->fr = n;
		g->cfr = nc;
	}
	g->fr[g->nfr++] = *f;
	g->kept += weight(g, f);
	if (g->max && !g->write && !g->jsonl && g->sort != SORT_NONE && g->kept > 2 * g->max + 256)
		prune(g);
	pthread_mutex_unlock(&g->mu);
}

/* Can a file at PATH still have entries in the result?  (Before building
 * them: most files of a big search fall after the cut.) */
static bool want_entries(struct gctx *g, const char *path)
{
	bool want = true;

	if (!g->max || g->jsonl || g->sort == SORT_MTIME)
		return true;
	pthread_mutex_lock(&g->mu);
	if (g->sort == SORT_NONE)
		want = g->kept < g->max;
	else if (g->cut)
		want = pathcmp(path, g->cutkey.path) <= 0;
	pthread_mutex_unlock(&g->mu);
	return want;
}

/* ---- text of lines ---- */

/* A JSON string of BUF: valid UTF-8 as is, invalid bytes as U+FFFD. */
static json_t *jtext(const char *buf, size_t n)
{
	struct wap_sb sb = WAP_SB_INIT;
	json_t *j;

	if (wap_text_utf8_valid(buf, n, NULL))
		return json_stringn(buf, n);
	wap_text_utf8_fix(&sb, buf, n, "\xef\xbf\xbd");
	j = json_stringn(sb.buf ? sb.buf : "", sb.len);
	wap_sb_release(&sb);
	return j;
}

/* ripgrep's data object: {"text": ...} or {"bytes": base64} */
static json_t *rgdata(const char *buf, size_t n)
{
	struct wap_sb sb = WAP_SB_INIT;
	json_t *j;

	if (wap_text_utf8_valid(buf, n, NULL))
		return json_pack("{s:s%}", "text", buf, n);
	wap_text_base64(&sb, buf, n);
	j = json_pack("{s:s%}", "bytes", sb.buf ? sb.buf : "", sb.len);
	wap_sb_release(&sb);
	return j;
}

/* Where MAX characters (UTF-8 sequences; other bytes count one each) of
 * S end; N when it has no more. */
static size_t char_cut(const char *s, size_t n, size_t max)
{
	size_t chars = 0;

	if (n <= max)
		return n;
	for (size_t i = 0; i < n; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && chars++ == max)
			return i;
	}
	return n;
}

/* the line's text for the result: no line end, cut at maxline characters */
static json_t *line_text(const struct gctx *g, const char *s, size_t n)
{
	if (n && s[n - 1] == '\r')
		n--;
	if (g->maxline && n > g->maxline && char_cut(s, n, g->maxline) < n) {
		size_t k = char_cut(s, n, g->maxline);
		struct wap_sb sb = WAP_SB_INIT;
		json_t *j;
		wap_sb_add(&sb, s, k);
		wap_sb_addf(&sb, " [... line cut at %zu characters; %zu bytes in all]", g->maxline, n);
		j = jtext(sb.buf, sb.len);
		wap_sb_release(&sb);
		return j;
	}
	return jtext(s, n);
}

static size_t line_end(const char *buf, size_t len, size_t at)
{
	const char *nl = at < len ? memchr(buf + at, '\n', len - at) : NULL;
	return nl ? (size_t)(nl - buf) : len;
}

/* with --replace: SUBJ with every match replaced (malloc'd) */
static char *substitute(const struct gctx *g, const char *subj, size_t n, size_t *outlen,
			size_t *count)
{
	const pcre2_code *re = wap_matcher_code(g->m);
	PCRE2_SIZE cap = n * 2 + strlen(g->replace) * 4 + 64;
	uint32_t opts = PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH |
			PCRE2_SUBSTITUTE_UNKNOWN_UNSET | PCRE2_SUBSTITUTE_UNSET_EMPTY;

	for (int tries = 0; tries < 3; tries++) {
		char *out = malloc(cap + 1);
		PCRE2_SIZE olen = cap;
		int rc;
		if (!out)
			return NULL;
		rc = pcre2_substitute(re, (PCRE2_SPTR)subj, n, 0, opts, NULL, wap_match_context(),
				      (PCRE2_SPTR)g->replace, PCRE2_ZERO_TERMINATED,
				      (PCRE2_UCHAR *)out, &olen);
		if (rc >= 0) {
			out[olen] = 0;
			*outlen = olen;
			if (count)
				*count = rc;
			return out;
		}
		free(out);
		if (rc != PCRE2_ERROR_NOMEMORY)
			return NULL;
		cap = olen;
	}
	return NULL;
}

/* ---- searching a buffer ---- */

static json_t *context_lines(const struct gctx *g, const char *buf, size_t len, size_t ls,
			     size_t le, bool before, long n)
{
	json_t *a = json_array();
	size_t starts[64], ends[64];
	long k = 0;

	if (n <= 0)
		return a;
	if (before) {
		size_t e = ls;
		/* walk back N lines */
		while (k < n && e > 0) {
			size_t s = e - 1;	/* the '\n' ending the previous line */
			const char *nl = s > 0 ? memrchr(buf, '\n', s) : NULL;
			size_t st = nl ? (size_t)(nl - buf) + 1 : 0;
			if (k < 64) {
				starts[k] = st;
				ends[k] = s;
			}
			k++;
			e = st;
		}
		for (long i = (k < 64 ? k : 64) - 1; i >= 0; i--) {
			if (g->jsonl)
				json_array_append_new(a, rgdata(buf + starts[i], ends[i] - starts[i] + 1));
			else
				json_array_append_new(a, line_text(g, buf + starts[i], ends[i] - starts[i]));
		}
	} else {
		size_t s = le + 1;
		while (k < n && s < len) {
			size_t e = line_end(buf, len, s);
			if (g->jsonl)
				json_array_append_new(a, rgdata(buf + s, e - s + (e < len)));
			else
				json_array_append_new(a, line_text(g, buf + s, e - s));
			k++;
			s = e + 1;
		}
	}
	return a;
}

static json_t *make_rec(const struct gctx *g, struct wk *w, const char *path, const char *buf,
			size_t len, size_t ls, size_t le, size_t lno, size_t ms, size_t me)
{
	json_t *o, *text;

	if (g->only) {
		if (g->replace) {
			size_t n;
			char *r = substitute(g, buf + ms, me - ms, &n, NULL);
			text = r ? jtext(r, n) : jtext(buf + ms, me - ms);
			free(r);
		} else {
			text = line_text(g, buf + ms, me - ms);
		}
	} else if (g->replace && !g->invert) {
		size_t n;
		char *r = substitute(g, buf + ls, le - ls, &n, NULL);
		text = r ? line_text(g, r, n) : line_text(g, buf + ls, le - ls);
		free(r);
	} else {
		text = line_text(g, buf + ls, le - ls);
	}
	o = json_pack("{s:o, s:I, s:o, s:o, s:o}", "path", wap_json_name(path), "line", (json_int_t)lno,
		      "matchText", text,
		      "contextBefore", context_lines(g, buf, len, ls, le, true, g->before),
		      "contextAfter", context_lines(g, buf, len, ls, le, false, g->after));
	if (o)
		wap_json_set_name(o, "path", path);	/* + pathBytes when not UTF-8 */
	if (o && g->jsonl) {
		json_t *subs = json_array();
		size_t off = 0, s, e;
		while (!g->invert && wap_match_sub(g->m, w->st, buf + ls, le - ls, off, &s, &e)) {
			if (e > s)
				json_array_append_new(subs, json_pack("{s:o, s:I, s:I}",
					"match", rgdata(buf + ls + s, e - s),
					"start", (json_int_t)s, "end", (json_int_t)e));
			off = e > s ? e : s + 1;
			if (off > le - ls)
				break;
		}
		json_object_set_new(o, "offset", json_integer((json_int_t)ls));
		json_object_set_new(o, "lines", rgdata(buf + ls, le - ls + (le < len)));
		json_object_set_new(o, "submatches", subs);
	}
	return o;
}

/* ---- direct output (the CLI): text lines or ripgrep's JSON messages ---- */

/* a JSON string (escaped, quoted) of valid UTF-8 */
static void jesc(struct wap_sb *sb, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s, *e = s + n;

	wap_sb_addc(sb, '"');
	for (; s < e; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		wap_sb_add(sb, run, s - run);
		run = s + 1;
		switch (c) {
		case '"': wap_sb_adds(sb, "\\\""); break;
		case '\\': wap_sb_adds(sb, "\\\\"); break;
		case '\n': wap_sb_adds(sb, "\\n"); break;
		case '\t': wap_sb_adds(sb, "\\t"); break;
		case '\r': wap_sb_adds(sb, "\\r"); break;
		default:
			wap_sb_adds(sb, "\\u00");
			wap_sb_addc(sb, hex[c >> 4]);
			wap_sb_addc(sb, hex[c & 15]);
		}
	}
	wap_sb_add(sb, run, e - run);
	wap_sb_addc(sb, '"');
}

/* ripgrep's data object: {"text":...} or {"bytes":base64} */
static void jdata(struct wap_sb *sb, const char *s, size_t n)
{
	if (wap_text_utf8_valid(s, n, NULL)) {
		wap_sb_adds(sb, "{\"text\":");
		jesc(sb, s, n);
		wap_sb_addc(sb, '}');
		return;
	}
	wap_sb_adds(sb, "{\"bytes\":\"");
	wap_text_base64(sb, s, n);
	wap_sb_adds(sb, "\"}");
}

struct emit {
	struct gctx *g;
	struct wk *w;
	const char *path, *buf;
	size_t len, pathlen;
	struct frec *f;
	size_t ecap;
	long long lastp;	/* the last line written (0: none) */
	size_t lastp_end;	/* where it ends (its '\n', or len) */
	long long after_until;
	size_t nsub;		/* JSONL: submatches written */
	size_t nlines;		/* JSONL: matched lines written */
};

/* "PATH" SEP LNO SEP, without printf */
static void put_prefix(struct emit *em, struct wap_sb *sb, char sep, long long lno)
{
	char d[24];
	int k = sizeof(d);

	if (!wap_sb_grow(sb, em->pathlen + 26))
		return;
	memcpy(sb->buf + sb->len, em->path, em->pathlen);
	sb->len += em->pathlen;
	d[--k] = sep;
	do {
		d[--k] = '0' + lno % 10;
		lno /= 10;
	} while (lno && k > 1);
	d[--k] = sep;
	memcpy(sb->buf + sb->len, d + k, sizeof(d) - k);
	sb->len += sizeof(d) - k;
	sb->buf[sb->len] = 0;
}

/* text of [S, E) as the output shows it: raw bytes, a CR kept (as grep
 * and rg print lines), cut at maxline characters */
static void add_text(struct emit *em, struct wap_sb *sb, const char *s, size_t n)
{
	if (em->g->maxline && n > em->g->maxline && char_cut(s, n, em->g->maxline) < n) {
		size_t k = char_cut(s, n, em->g->maxline);
		wap_sb_add(sb, s, k);
		wap_sb_addf(sb, " [... line cut at %zu characters; %zu bytes in all]", em->g->maxline, n);
	} else {
		wap_sb_add(sb, s, n);
	}
}

static void rg_head(struct emit *em, const char *type)
{
	struct wap_sb *sb = &em->f->out;

	wap_sb_adds(sb, "{\"type\":\"");
	wap_sb_adds(sb, type);
	wap_sb_adds(sb, "\",\"data\":{\"path\":");
	jdata(sb, em->path, strlen(em->path));
	wap_sb_adds(sb, ",\"lines\":");
}

/* one context line */
static void put_context(struct emit *em, long long lno, size_t s, size_t e)
{
	struct wap_sb *sb = &em->f->out;

	if (em->g->mode == OUT_JSONL) {
		rg_head(em, "context");
		jdata(sb, em->buf + s, e - s + (e < em->len));
		wap_sb_addf(sb, ",\"line_number\":%lld,\"absolute_offset\":%zu,\"submatches\":[]}}\n",
			    lno, s);
	} else {
		put_prefix(em, sb, '-', lno);
		add_text(em, sb, em->buf + s, e - s);
		wap_sb_addc(sb, '\n');
	}
	em->lastp = lno;
	em->lastp_end = e;
}

/* after-context lines owed, up to (not including) line UPTO */
static void flush_after(struct emit *em, long long upto)
{
	while (em->lastp && em->lastp < em->after_until && em->lastp + 1 < upto &&
	       em->lastp_end < em->len) {
		size_t s = em->lastp_end + 1;
		if (s >= em->len)
			break;
		put_context(em, em->lastp + 1, s, line_end(em->buf, em->len, s));
	}
}

static void entry_start(struct emit *em)
{
	struct frec *f = em->f;

	if (f->neoff == em->ecap) {
		size_t nc = em->ecap ? em->ecap * 2 : 16;
		size_t *n = realloc(f->eoff, nc * sizeof(*n));
		if (!n)
			return;
		f->eoff = n;
		em->ecap = nc;
	}
	f->eoff[f->neoff++] = f->out.len;
}

/* one result entry: line LNO at [LS, LE) (a match, an inverted line or,
 * with -o, the part [MS, ME)) with its context */
static void emit_entry(struct emit *em, long long lno, size_t ls, size_t le, size_t ms, size_t me)
{
	struct gctx *g = em->g;
	struct wap_sb *sb = &em->f->out;
	long long first = lno - g->before;
	size_t starts[1001];
	long k = 0;

	if (first < 1)
		first = 1;
	flush_after(em, first);
	if (first <= em->lastp)
		first = em->lastp + 1;
	entry_start(em);
	if (g->mode == OUT_TEXT && (g->before || g->after) && em->lastp && first > em->lastp + 1)
		wap_sb_adds(sb, "--\n");
	/* before-context: walk back to FIRST */
	if (first < lno) {
		size_t st = ls;
		for (long long ln = lno; ln > first && st > 0 && k < 1000; ln--) {
			const char *nl = st > 1 ? memrchr(em->buf, '\n', st - 1) : NULL;
			st = nl ? (size_t)(nl - em->buf) + 1 : 0;
			starts[k++] = st;
		}
		for (long i = k - 1; i >= 0; i--)
			put_context(em, lno - 1 - i, starts[i], line_end(em->buf, em->len, starts[i]));
	}
	if (g->mode == OUT_JSONL) {
		size_t off = 0, s, e, n = 0;
		rg_head(em, "match");
		jdata(sb, em->buf + ls, le - ls + (le < em->len));
		wap_sb_addf(sb, ",\"line_number\":%lld,\"absolute_offset\":%zu,\"submatches\":[", lno, ls);
		while (!g->invert && wap_match_sub(g->m, em->w->st, em->buf + ls, le - ls, off, &s, &e)) {
			if (e > s) {
				if (n++)
					wap_sb_addc(sb, ',');
				wap_sb_adds(sb, "{\"match\":");
				jdata(sb, em->buf + ls + s, e - s);
				wap_sb_addf(sb, ",\"start\":%zu,\"end\":%zu}", s, e);
			}
			off = e > s ? e : s + 1;
			if (off > le - ls)
				break;
		}
		wap_sb_adds(sb, "]}}\n");
		em->nsub += n;
		em->nlines++;
		em->lastp = lno;
	} else if (g->only) {
		put_prefix(em, sb, ':', lno);
		if (g->replace) {
			size_t n;
			char *r = substitute(g, em->buf + ms, me - ms, &n, NULL);
			add_text(em, sb, r ? r : em->buf + ms, r ? n : me - ms);
			free(r);
		} else {
			add_text(em, sb, em->buf + ms, me - ms);
		}
		wap_sb_addc(sb, '\n');
		em->lastp = lno;
	} else {
		/* a multiline match: one output line per line */
		char *r = NULL;
		const char *t = em->buf + ls;
		size_t tn = le - ls;
		long long ln = lno;
		if (g->replace && !g->invert) {
			r = substitute(g, t, tn, &tn, NULL);
			if (r)
				t = r;
			else
				tn = le - ls;
		}
		for (;;) {
			const char *nl = memchr(t, '\n', tn);
			size_t n = nl ? (size_t)(nl - t) : tn;
			put_prefix(em, sb, ':', ln);
			add_text(em, sb, t, n);
			wap_sb_addc(sb, '\n');
			if (!nl)
				break;
			tn -= n + 1;
			t = nl + 1;
			ln++;
		}
		free(r);
		em->lastp = lno + (long long)wap_count_nl(em->buf + ls, le - ls);
	}
	em->lastp_end = le;
	em->after_until = em->lastp + g->after;
}

/* ---- searching a buffer ---- */

/* one entry, as a JSON record or as output */
static void add_entry(struct emit *em, json_t **recs, size_t lno, size_t ls, size_t le,
		      size_t ms, size_t me)
{
	struct gctx *g = em->g;

	if (g->mode == OUT_JSON) {
		if (!*recs)
			*recs = json_array();
		json_array_append_new(*recs, make_rec(g, em->w, em->path, em->buf, em->len, ls, le,
						      lno, ms, me));
		return;
	}
	if (g->mode == OUT_JSONL && !em->f->out.len) {
		wap_sb_adds(&em->f->out, "{\"type\":\"begin\",\"data\":{\"path\":");
		jdata(&em->f->out, em->path, strlen(em->path));
		wap_sb_adds(&em->f->out, "}}\n");
	}
	emit_entry(em, lno, ls, le, ms, me);
}

static void search_buf(struct gctx *g, struct wk *w, const char *path, const char *buf,
		       size_t len, int fd)
{
	size_t pos = 0, ls, le, count = 0, lpos = 0, lno = 1, nrec = 0;
	bool need = !g->files && !g->count && !g->write, asked = false;
	size_t cap = (g->max && !g->jsonl) ? g->max : (size_t)-1;
	json_t *recs = NULL;
	struct frec f = { 0 };
	struct emit em = { .g = g, .w = w, .path = path, .buf = buf, .len = len, .f = &f,
			   .pathlen = strlen(path) };

/* the first entry asks whether the file can still be shown */
#define WANT() (need && nrec < cap && (asked || (asked = true, need = want_entries(g, path))))
	wap_match_begin(w->st);
	if (!g->invert) {
		while (pos < len && wap_match_line(g->m, w->st, buf, len, pos, &ls, &le)) {
			if (g->files || g->write) {
				count = 1;
				break;
			}
			if (g->only) {
				size_t off = 0, s, e;
				while (wap_match_sub(g->m, w->st, buf + ls, le - ls, off, &s, &e)) {
					if (e > s) {
						count++;
						if (WANT()) {
							lno += wap_count_nl(buf + lpos, ls - lpos);
							lpos = ls;
							add_entry(&em, &recs, lno, ls, le, ls + s, ls + e);
							nrec++;
						}
					}
					off = e > s ? e : s + 1;
					if (off > le - ls)
						break;
				}
			} else {
				count++;
				if (WANT()) {
					lno += wap_count_nl(buf + lpos, ls - lpos);
					lpos = ls;
					add_entry(&em, &recs, lno, ls, le, 0, 0);
					nrec++;
				}
			}
			pos = le + 1;
		}
	} else {
		size_t cur = 0;
		for (;;) {
			bool found = cur < len && wap_match_line(g->m, w->st, buf, len, cur, &ls, &le);
			size_t gap = found ? ls : len;
			while (cur < gap) {
				size_t e = line_end(buf, len, cur);
				count++;
				if (g->files || g->write)
					break;
				if (WANT()) {
					lno += wap_count_nl(buf + lpos, cur - lpos);
					lpos = cur;
					add_entry(&em, &recs, lno, cur, e, 0, 0);
					nrec++;
				}
				cur = e + 1;
			}
			if (!found || ((g->files || g->write) && count))
				break;
			cur = le + 1;
		}
	}
#undef WANT
	{
		/* a limit or a cancel is an error naming the line, never a
		 * silent "no match" */
		const char *at;
		int merr = wap_match_error(w->st, &at);
		if (merr) {
			size_t off = at && at >= buf && at <= buf + len ? (size_t)(at - buf) : 0;
			if (!w->has_merr)
				wap_match_err(merr, path, 1 + wap_count_nl(buf, off), &w->merr);
			w->has_merr = true;
			json_decref(recs);
			drop_entries(&f);
			return;
		}
	}
	if (!count) {
		json_decref(recs);
		drop_entries(&f);
		return;
	}
	if (g->mode != OUT_JSON && f.out.len) {
		flush_after(&em, LLONG_MAX);
		if (g->mode == OUT_JSONL) {
			wap_sb_adds(&f.out, "{\"type\":\"end\",\"data\":{\"path\":");
			jdata(&f.out, path, strlen(path));
			wap_sb_addf(&f.out, ",\"binary_offset\":null,\"stats\":{\"elapsed\":{\"secs\":0,"
				    "\"nanos\":0,\"human\":\"0.000000s\"},\"searches\":1,"
				    "\"searches_with_match\":1,\"bytes_searched\":%zu,\"bytes_printed\":0,"
				    "\"matched_lines\":%zu,\"matches\":%zu}}}\n", len, em.nlines, em.nsub);
		}
	}
	f.path = strdup(path);
	if (!f.path || f.out.oom) {
		free(f.path);
		json_decref(recs);
		drop_entries(&f);
		return;
	}
	f.count = count;
	f.bytes = len;
	f.recs = recs;
	f.jl_lines = em.nlines;
	f.jl_subs = em.nsub;
	if (g->sort == SORT_MTIME && fd >= 0) {
		struct stat st;
		if (!fstat(fd, &st))
			f.mtime = st.st_mtim;
	}
	add_file(g, &f);
}

/* ---- archives ---- */

static size_t bom_len(const char *buf, size_t len)
{
	return len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3) ? 3 : 0;
}

static void search_one(struct gctx *g, struct wk *w, const char *path, const char *buf,
		       size_t len, int fd)
{
	/* a UTF-8 byte order mark is not text (ripgrep drops it too) */
	size_t bom = bom_len(buf, len);
	bool be;

	/* UTF-16 with a byte order mark is searched as UTF-8, as ripgrep does */
	if (wap_text_utf16_bom(buf, len, &be)) {
		bool lossy = false;
		size_t n;
		char *u = wap_text_utf16_to_utf8(buf + 2, len - 2, be, &n, &lossy);
		if (!u)
			return;
		if (!g->text && wap_text_is_binary(u, n))
			w->binary++;
		else
			search_buf(g, w, path, u, n, fd);
		free(u);
		return;
	}

	buf += bom;
	len -= bom;
	if (!g->text && wap_text_is_binary(buf, len)) {
		w->binary++;
		return;
	}
	search_buf(g, w, path, buf, len, fd);
}

/* the members of an archive (lib/archives.c, as `wap read` sees them),
 * each as ARCHIVE//MEMBER; a compressed plain file as itself */
static void search_archive(struct gctx *g, struct wk *w, const char *path, const char *buf,
			   size_t len, int fd)
{
	struct wap_err err = { 0 };
	struct archive *a = wap_archive_open_mem(buf, len, path, &err);
	struct archive_entry *ae;
	struct wap_sb name = WAP_SB_INIT;
	const char *mp;
	size_t mn;

	if (!a) {
		wap_err_release(&err);
		search_one(g, w, path, buf, len, fd);
		return;
	}
	while (wap_archive_next(a, path, &ae, &mp, &mn, &err) == 1) {
		bool raw = wap_archive_raw(a);
		size_t n = 0;
		la_ssize_t r;

		if (!raw && archive_entry_filetype(ae) != AE_IFREG)
			continue;
		for (;;) {
			if (w->acap - n < 65536) {
				size_t nc = w->acap ? w->acap * 2 : 1 << 20;
				char *nb;
				if (nc > (256u << 20))
					break;
				nb = realloc(w->abuf, nc);
				if (!nb)
					break;
				w->abuf = nb;
				w->acap = nc;
			}
			r = archive_read_data(a, w->abuf + n, w->acap - n);
			if (r <= 0)
				break;
			n += r;
		}
		name.len = 0;
		wap_sb_adds(&name, path);
		if (!raw) {
			wap_sb_adds(&name, "//");
			wap_sb_add(&name, mp, mn);
		}
		if (name.oom)
			break;
		w->bytes += n;
		search_one(g, w, name.buf, w->abuf ? w->abuf : "", n, fd);
	}
	wap_err_release(&err);
	wap_archive_free(a);
	wap_sb_release(&name);
}

/* ---- the walk ---- */

/* Read FD whole into the worker's buffer; -2 when it is larger than
 * BIGFILE (then it is mapped instead: mmap is slower than read for many
 * small files, not for a few big ones). */
#define BIGFILE (16u << 20)

static ssize_t read_all(int fd, struct wk *w)
{
	size_t n = 0;

	for (;;) {
		size_t want;
		ssize_t r;
		if (w->cap - n < 16384) {
			if (w->cap >= BIGFILE)
				return -2;
			size_t nc = w->cap ? w->cap * 2 : 256 << 10;
			char *nb = realloc(w->buf, nc);
			if (!nb)
				return -1;
			w->buf = nb;
			w->cap = nc;
		}
		want = w->cap - n;
		r = read(fd, w->buf + n, want);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		n += r;
		/* a short read of a regular file is its end */
		if (r == 0 || (size_t)r < want)
			break;
	}
	return n;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* MCP notifications/progress for a long search: from the calling thread
 * (worker 0) only, at most four a second */
static void progress(struct gctx *g, struct wk *w)
{
	struct timespec now;
	size_t done = 0;
	char msg[64];

	if (!g->call->progress || w->searched % 256)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - g->last_progress.tv_sec) * 1000 +
	    (now.tv_nsec - g->last_progress.tv_nsec) / 1000000 < 250)
		return;
	g->last_progress = now;
	for (int i = 0; i < g->nw; i++)
		done += __atomic_load_n(&g->wks[i].searched, __ATOMIC_RELAXED);
	snprintf(msg, sizeof(msg), "%zu files searched", done);
	g->call->progress(g->call->arg, (double)done, 0, msg);
}

/* the worker's match error, if any, stops the walk */
static int worker_error(struct wk *w, struct wap_err *err)
{
	if (!w->has_merr)
		return 0;
	*err = w->merr;
	memset(&w->merr, 0, sizeof(w->merr));
	w->has_merr = false;
	return -1;
}

static int on_file(void *arg, const struct wap_walk_ent *e, struct wap_err *err)
{
	struct gctx *g = arg;
	struct wk *w = &g->wks[e->worker];
	ssize_t n;
	int fd;

	if (g->cancelled && *g->cancelled)
		return wap_err_set(err, WAP_E_TIMEOUT, "Search cancelled");
	if (e->depth > 0) {
		if (g->include.n && !wap_globset_match(&g->include, e->path, e->pathlen))
			return 0;
		if (g->types.n) {
			const char *b = base_name(e->path);
			if (!wap_globset_match(&g->types, b, strlen(b)))
				return 0;
		}
	}
	if (e->link) {
		struct wap_err er = { 0 };
		fd = wap_ws_open(g->ws, e->path, O_RDONLY | O_NONBLOCK, 0, WAP_ACC_READ, &er);
		wap_err_release(&er);
	} else {
		fd = openat(e->dirfd, e->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	}
	if (fd < 0)
		return 0;
	n = read_all(fd, w);
	if (n == -2) {
		struct stat st;
		void *map;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
			close(fd);
			return 0;
		}
		map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			close(fd);
			return 0;
		}
		madvise(map, st.st_size, MADV_SEQUENTIAL);
		__atomic_add_fetch(&w->searched, 1, __ATOMIC_RELAXED);
		w->bytes += st.st_size;
		if (g->archives && wap_archive_sniff(map, st.st_size))
			search_archive(g, w, e->path, map, st.st_size, fd);
		else
			search_one(g, w, e->path, map, st.st_size, fd);
		munmap(map, st.st_size);
		close(fd);
		return worker_error(w, err);
	}
	if (n < 0) {
		close(fd);
		return 0;
	}
	__atomic_add_fetch(&w->searched, 1, __ATOMIC_RELAXED);
	w->bytes += n;
	if (e->worker == 0)
		progress(g, w);
	if (g->archives && wap_archive_sniff(w->buf, n))
		search_archive(g, w, e->path, w->buf, n, fd);
	else
		search_one(g, w, e->path, w->buf, n, fd);
	close(fd);
	return worker_error(w, err);
}

/* --replace --write: the transform of one file */
struct rewrite {
	struct gctx *g;
	struct wap_mstate *st;
	size_t count;
	const char *path;
};

/* Replace every match in OLD into SB; -1 with ERR on a bad replacement */
static int replace_into(struct rewrite *rw, const char *old, size_t oldlen, struct wap_sb *sb,
			struct wap_err *err)
{
	struct gctx *g = rw->g;
	size_t pos = 0, prev = 0, ls, le;

	wap_match_begin(rw->st);
	while (pos < oldlen && wap_match_line(g->m, rw->st, old, oldlen, pos, &ls, &le)) {
		size_t n, c = 0;
		char *r = substitute(g, old + ls, le - ls, &n, &c);
		if (!r)
			return wap_err_set(err, WAP_E_INVALID, "Invalid replacement '%s' (or a regex limit hit in %s:%zu)",
					   g->replace, rw->path, 1 + wap_count_nl(old, ls));
		wap_sb_add(sb, old + prev, ls - prev);
		wap_sb_add(sb, r, n);
		free(r);
		rw->count += c;
		prev = le;
		pos = le + 1;
	}
	{
		const char *at;
		int merr = wap_match_error(rw->st, &at);
		if (merr)
			return wap_match_err(merr, rw->path,
					     1 + wap_count_nl(old, at && at >= old && at <= old + oldlen ?
								(size_t)(at - old) : 0), err);
	}
	wap_sb_add(sb, old + prev, oldlen - prev);
	return 0;
}

/* A UTF-16 file is rewritten in UTF-16, its byte order and mark kept; one
 * that does not decode cleanly is left alone. */
static int rewrite_utf16(struct rewrite *rw, const char *old, size_t oldlen, bool be,
			 char **out, size_t *outlen, struct wap_err *err)
{
	struct wap_sb sb = WAP_SB_INIT;
	bool lossy = false;
	size_t n;
	char *u = wap_text_utf16_to_utf8(old + 2, oldlen - 2, be, &n, &lossy), *e;

	if (!u)
		return wap_err_set(err, WAP_E_FAILED, "out of memory");
	if (lossy) {
		free(u);
		return wap_err_set(err, WAP_E_INVALID, "not valid UTF-16: not rewritten");
	}
	if (replace_into(rw, u, n, &sb, err)) {
		free(u);
		wap_sb_release(&sb);
		return -1;
	}
	free(u);
	if (sb.oom) {
		wap_sb_release(&sb);
		return wap_err_set(err, WAP_E_FAILED, "out of memory");
	}
	e = wap_text_utf8_to_utf16(sb.buf ? sb.buf : "", sb.len, be, &n, &lossy);
	wap_sb_release(&sb);
	if (!e)
		return wap_err_set(err, WAP_E_FAILED, "out of memory");
	if (lossy) {
		free(e);
		return wap_err_set(err, WAP_E_INVALID, "the replacement is not valid UTF-8: not rewritten");
	}
	*out = malloc(n + 2);
	if (!*out) {
		free(e);
		return wap_err_set(err, WAP_E_FAILED, "out of memory");
	}
	memcpy(*out, old, 2);
	memcpy(*out + 2, e, n);
	free(e);
	*outlen = n + 2;
	return 0;
}

static int rewrite_fn(void *arg, const char *old, size_t oldlen, char **out, size_t *outlen,
		      struct wap_err *err)
{
	struct rewrite *rw = arg;
	struct wap_sb sb = WAP_SB_INIT;
	size_t bom = bom_len(old, oldlen);
	bool be;

	if (wap_text_utf16_bom(old, oldlen, &be))
		return rewrite_utf16(rw, old, oldlen, be, out, outlen, err);
	/* the byte order mark stays, and is not searched */
	wap_sb_add(&sb, old, bom);
	if (replace_into(rw, old + bom, oldlen - bom, &sb, err)) {
		wap_sb_release(&sb);
		return -1;
	}
	if (sb.oom) {
		wap_sb_release(&sb);
		return wap_err_set(err, WAP_E_FAILED, "out of memory");
	}
	*outlen = sb.len;
	*out = sb.len ? wap_sb_detach(&sb) : strdup("");
	return *out ? 0 : wap_err_set(err, WAP_E_FAILED, "out of memory");
}

/* ---- the operation ---- */

static int strs(const json_t *req, const char *key, json_t **out, struct wap_err *err)
{
	json_t *v = json_object_get(req, key);
	size_t i;
	json_t *s;

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		*out = v;
		return 0;
	}
	if (!json_is_array(v))
		return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be an array of strings", key);
	json_array_foreach(v, i, s)
		if (!json_is_string(s))
			return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be an array of strings", key);
	*out = v;
	return 0;
}

static size_t strs_len(json_t *v)
{
	return !v ? 0 : json_is_string(v) ? 1 : json_array_size(v);
}

static const char *strs_at(json_t *v, size_t i)
{
	return json_is_string(v) ? json_string_value(v) : json_string_value(json_array_get(v, i));
}

static int add_types(struct gctx *g, json_t *tv, struct wap_err *err)
{
	for (size_t i = 0; i < strs_len(tv); i++) {
		const char *t = strs_at(tv, i);
		int k;
		for (k = 0; types[k].name; k++)
			if (!strcmp(t, types[k].name) || (types[k].alias && !strcmp(t, types[k].alias)))
				break;
		if (!types[k].name) {
			struct wap_sb sb = WAP_SB_INIT;
			for (int j = 0; types[j].name; j++)
				wap_sb_addf(&sb, "%s%s", j ? ", " : "", types[j].name);
			wap_err_set(err, WAP_E_INVALID, "Unknown file type '%s' (known: %s)", t,
				    sb.buf ? sb.buf : "");
			wap_sb_release(&sb);
			return -1;
		}
		{
			char *gl = strdup(types[k].globs), *save = NULL;
			for (char *p = strtok_r(gl, " ", &save); p; p = strtok_r(NULL, " ", &save))
				if (wap_globset_add(&g->types, p, 0, err)) {
					free(gl);
					return -1;
				}
			free(gl);
		}
	}
	return 0;
}

static int getint(const json_t *req, const char *key, long long dflt, long long min,
		  long long *out, struct wap_err *err)
{
	long long v = dflt;
	if (wap_req_int(req, key, &v, err) < 0)
		return -1;
	if (v < min)
		return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be at least %lld", key, min);
	*out = v;
	return 0;
}

static json_t *build_result(struct gctx *g, size_t total_files, size_t total_matches)
{
	json_t *res = json_object(), *list = json_array();
	size_t shown = 0;
	bool trunc = false;

	if (g->nfr)
		qsort_r(g->fr, g->nfr, sizeof(*g->fr), frcmp_q, &g->sort);
	for (size_t i = 0; i < g->nfr; i++) {
		struct frec *f = &g->fr[i];
		if (g->files || g->count) {
			if (g->max && shown >= g->max) {
				trunc = true;
				break;
			}
			if (g->files)
				json_array_append_new(list, wap_json_name(f->path));
			else {
				json_t *c = json_pack("{s:o, s:I}", "path", wap_json_name(f->path),
						      "count", (json_int_t)f->count);
				if (c)
					wap_json_set_name(c, "path", f->path);
				json_array_append_new(list, c);
			}
			shown++;
			continue;
		}
		for (size_t k = 0; f->recs && k < json_array_size(f->recs); k++) {
			if (g->max && !g->jsonl && shown >= g->max) {
				trunc = true;
				break;
			}
			json_array_append(list, json_array_get(f->recs, k));
			shown++;
		}
		if (!trunc && (!f->recs || json_array_size(f->recs) < f->count) && !g->jsonl)
			trunc = g->max && shown >= g->max;
		if (trunc)
			break;
	}
	if (!trunc && !g->files && !g->count && shown < total_matches && g->max && !g->jsonl)
		trunc = true;
	if (g->files) {
		json_object_set_new(res, "files", list);
		json_object_set_new(res, "totalFiles", json_integer((json_int_t)total_files));
		json_object_set_new(res, "totalMatches", json_integer((json_int_t)total_files));
	} else if (g->count) {
		json_object_set_new(res, "counts", list);
		json_object_set_new(res, "totalFiles", json_integer((json_int_t)total_files));
		json_object_set_new(res, "totalMatches", json_integer((json_int_t)total_matches));
	} else {
		json_object_set_new(res, "matches", list);
		json_object_set_new(res, "totalMatches", json_integer((json_int_t)total_matches));
	}
	json_object_set_new(res, "isTruncated", json_boolean(trunc));
	if (g->jsonl) {
		json_t *fl = json_array();
		for (size_t i = 0; i < g->nfr; i++)
			json_array_append_new(fl, json_pack("{s:o, s:I, s:I}", "path", wap_json_name(g->fr[i].path),
							    "bytes", (json_int_t)g->fr[i].bytes,
							    "matchedLines", (json_int_t)g->fr[i].count));
		json_object_set_new(res, "fileStats", fl);
	}
	return res;
}

static int print_direct(struct gctx *g, FILE *out, size_t searched, size_t bytes, long long ns);

/* The search.  MODE OUT_JSON: *RES is the result; otherwise the output is
 * written to OUT as it is made (the CLI) and *STATUS is the exit status. */
static int grep_exec(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err,
		     int mode, FILE *out, int *status)
{
	struct gctx g = { 0 };
	struct wap_match_opts mo = { 0 };
	struct wap_walk_opts wo = { .max_depth = -1 };
	const char *pattern = NULL, *sort = NULL, **pats = NULL;
	json_t *rx, *paths, *inc, *exc, *tv;
	struct wap_globset excl = { 0 };
	long long v = 0;
	size_t npat = 0, total = 0;
	struct timespec t0, t1;
	int rc = -1;

	*res = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	g.mode = mode;
	g.ws = call->ws;
	g.cancelled = call->cancelled;
	g.call = call;	/* last_progress 0: the first report comes at once */
	g.maxline = call->ws->lim.max_line_len;
	pthread_mutex_init(&g.mu, NULL);
	if (wap_req_str(req, "pattern", &pattern, err) < 0 ||
	    strs(req, "regexp", &rx, err) || strs(req, "paths", &paths, err) ||
	    strs(req, "include", &inc, err) || strs(req, "exclude", &exc, err) ||
	    strs(req, "type", &tv, err))
		goto out;
	if (wap_req_bool(req, "fixed_strings", &mo.fixed, err) < 0 ||
	    wap_req_bool(req, "ignore_case", &mo.icase, err) < 0 ||
	    wap_req_bool(req, "word_regexp", &mo.word, err) < 0 ||
	    wap_req_bool(req, "line_regexp", &mo.line, err) < 0 ||
	    wap_req_bool(req, "multiline", &mo.multiline, err) < 0 ||
	    wap_req_bool(req, "invert_match", &g.invert, err) < 0 ||
	    wap_req_bool(req, "files_with_matches", &g.files, err) < 0 ||
	    wap_req_bool(req, "count", &g.count, err) < 0 ||
	    wap_req_bool(req, "only_matching", &g.only, err) < 0 ||
	    wap_req_bool(req, "no_ignore", &wo.no_ignore, err) < 0 ||
	    wap_req_bool(req, "no_default_excludes", &wo.no_default_excludes, err) < 0 ||
	    wap_req_bool(req, "follow", &wo.follow, err) < 0 ||
	    wap_req_bool(req, "search_archives", &g.archives, err) < 0 ||
	    wap_req_bool(req, "text", &g.text, err) < 0 ||
	    wap_req_bool(req, "write", &g.write, err) < 0 ||
	    wap_req_bool(req, "jsonl", &g.jsonl, err) < 0 ||
	    wap_req_str(req, "replace", &g.replace, err) < 0 ||
	    wap_req_str(req, "sort", &sort, err) < 0)
		goto out;
	if (g.archives && wap_lazy_load(WAP_LIB_ARCHIVE, err))
		goto out;
	if (getint(req, "context", 0, 0, &v, err))
		goto out;
	g.before = g.after = v;
	if (getint(req, "before_context", g.before, 0, &v, err))
		goto out;
	g.before = v;
	if (getint(req, "after_context", g.after, 0, &v, err))
		goto out;
	g.after = v;
	if (getint(req, "max_results", (long long)call->ws->lim.max_search_results, 0, &v, err))
		goto out;
	g.max = v;
	if (getint(req, "max_depth", -1, -1, &v, err))
		goto out;
	wo.max_depth = v;
	if (getint(req, "threads", 0, 0, &v, err))
		goto out;
	wo.threads = v > 256 ? 256 : v;
	if (!sort || !strcmp(sort, "path"))
		g.sort = SORT_PATH;
	else if (!strcmp(sort, "mtime") || !strcmp(sort, "modified"))
		g.sort = SORT_MTIME;
	else if (!strcmp(sort, "none"))
		g.sort = SORT_NONE;
	else {
		wap_err_set(err, WAP_E_INVALID, "Invalid sort '%s' (path, mtime or none)", sort);
		goto out;
	}
	if (g.write && !g.replace) {
		wap_err_set(err, WAP_E_INVALID, "--write needs --replace TEXT");
		goto out;
	}
	if (g.write && wap_ws_check(call->ws, ".", WAP_ACC_WRITE, err))
		goto out;
	if (g.write && (g.invert || g.only)) {
		wap_err_set(err, WAP_E_INVALID, "--write cannot be combined with --invert-match or --only-matching");
		goto out;
	}
	if (g.before > 1000 || g.after > 1000) {
		wap_err_set(err, WAP_E_INVALID, "context is limited to 1000 lines");
		goto out;
	}

	/* the patterns */
	npat = strs_len(rx) + (pattern ? 1 : 0);
	if (!npat) {
		wap_err_set(err, WAP_E_INVALID, "missing PATTERN (see 'wap grep --help')");
		goto out;
	}
	pats = calloc(npat, sizeof(*pats));
	if (!pats) {
		wap_err_set(err, WAP_E_FAILED, "out of memory");
		goto out;
	}
	npat = 0;
	if (pattern)
		pats[npat++] = pattern;
	for (size_t i = 0; i < strs_len(rx); i++)
		pats[npat++] = strs_at(rx, i);
	mo.patterns = pats;
	mo.n = npat;
	g.m = wap_matcher_new(&mo, err);
	if (!g.m)
		goto out;
	for (size_t i = 0; i < strs_len(inc); i++)
		if (wap_globset_add(&g.include, strs_at(inc, i), WAP_GLOB_BASENAME, err))
			goto out;
	for (size_t i = 0; i < strs_len(exc); i++)
		if (wap_globset_add(&excl, strs_at(exc, i), WAP_GLOB_BASENAME, err))
			goto out;
	if (add_types(&g, tv, err))
		goto out;
	wo.exclude = &excl;
	wo.cancelled = call->cancelled;

	g.nw = wap_walk_threads(&wo);
	g.wks = calloc(g.nw, sizeof(*g.wks));
	if (!g.wks) {
		wap_err_set(err, WAP_E_FAILED, "out of memory");
		goto out;
	}
	for (int i = 0; i < g.nw; i++) {
		g.wks[i].st = wap_mstate_new(g.m);
		if (!g.wks[i].st) {
			wap_err_set(err, WAP_E_FAILED, "out of memory");
			goto out;
		}
		wap_mstate_set_cancel(g.wks[i].st, call->cancelled);
	}
	/* every PATH, or the root */
	for (size_t i = 0; i < (strs_len(paths) ? strs_len(paths) : 1); i++) {
		char *rel = NULL;
		const char *p = strs_len(paths) ? strs_at(paths, i) : ".";
		int r;
		if (wap_ws_rel(call->ws, p, strlen(p), &rel, err))
			goto out;
		r = wap_walk(call->ws, rel, &wo, on_file, &g, err);
		free(rel);
		if (r)
			goto out;
	}

	if (g.write) {
		struct rewrite rw = { &g, wap_mstate_new(g.m), 0, NULL };
		json_t *files = json_array();
		if (g.nfr)
			qsort_r(g.fr, g.nfr, sizeof(*g.fr), frcmp_q, &(int){ SORT_PATH });
		if (!rw.st) {
			json_decref(files);
			wap_err_set(err, WAP_E_FAILED, "out of memory");
			goto out;
		}
		wap_mstate_set_cancel(rw.st, call->cancelled);
		for (size_t i = 0; i < g.nfr; i++) {
			struct wap_wres wr;
			size_t before = rw.count;
			if (strstr(g.fr[i].path, "//"))
				continue;	/* archive members stay as they are */
			rw.path = g.fr[i].path;
			if (wap_update_file(call->ws, g.fr[i].path, false, NULL, rewrite_fn, &rw, &wr, err)) {
				wap_mstate_free(rw.st);
				json_decref(files);
				goto out;
			}
			if (rw.count > before)
				json_array_append_new(files, wap_json_name(g.fr[i].path));
		}
		wap_mstate_free(rw.st);
		*res = json_pack("{s:I, s:o}", "count", (json_int_t)rw.count, "files", files);
		rc = *res ? 0 : wap_err_set(err, WAP_E_FAILED, "out of memory");
		goto out;
	}

	if (mode != OUT_JSON) {
		size_t searched = 0, bytes = 0;
		for (int i = 0; i < g.nw; i++) {
			searched += g.wks[i].searched;
			bytes += g.wks[i].bytes;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		*status = print_direct(&g, out, searched, bytes,
			(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
		rc = 0;
		goto out;
	}
	for (size_t i = 0; i < g.nfr; i++)
		total += g.fr[i].count;
	*res = build_result(&g, g.nfr, total);
	{
		size_t searched = 0, binary = 0, bytes = 0;
		for (int i = 0; i < g.nw; i++) {
			searched += g.wks[i].searched;
			binary += g.wks[i].binary;
			bytes += g.wks[i].bytes;
		}
		json_object_set_new(*res, "filesSearched", json_integer((json_int_t)searched));
		json_object_set_new(*res, "filesWithMatches", json_integer((json_int_t)g.nfr));
		json_object_set_new(*res, "binaryFilesSkipped", json_integer((json_int_t)binary));
		if (g.jsonl) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			json_object_set_new(*res, "bytesSearched", json_integer((json_int_t)bytes));
			json_object_set_new(*res, "elapsedNanos", json_integer(
				(json_int_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec))));
		}
	}
	rc = 0;
out:
	if (g.wks)
		for (int i = 0; i < g.nw; i++) {
			free(g.wks[i].buf);
			free(g.wks[i].abuf);
			wap_mstate_free(g.wks[i].st);
		}
	free(g.wks);
	for (size_t i = 0; i < g.nfr; i++) {
		free(g.fr[i].path);
		drop_entries(&g.fr[i]);
	}
	free(g.fr);
	free(g.cutkey.path);
	free(pats);
	wap_matcher_free(g.m);
	wap_globset_release(&g.include);
	wap_globset_release(&g.types);
	wap_globset_release(&excl);
	pthread_mutex_destroy(&g.mu);
	return rc;
}

static int grep_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	return grep_exec(call, req, res, err, OUT_JSON, NULL, NULL);
}

static void put_elapsed(FILE *out, long long ns)
{
	fprintf(out, "{\"secs\":%lld,\"nanos\":%lld,\"human\":\"%.6fs\"}",
		ns / 1000000000, ns % 1000000000, ns / 1e9);
}

/* The CLI output from the per-file outputs, in order, cut at MAX. */
static int print_direct(struct gctx *g, FILE *out, size_t searched, size_t bytes, long long ns)
{
	size_t total = 0, shown = 0, lines = 0, subs = 0, withm = 0;
	bool trunc = false, any = false;

	for (size_t i = 0; i < g->nfr; i++)
		total += g->fr[i].count;
	if (g->nfr)
		qsort_r(g->fr, g->nfr, sizeof(*g->fr), frcmp_q, &g->sort);
	for (size_t i = 0; i < g->nfr && !trunc; i++) {
		struct frec *f = &g->fr[i];
		size_t n = f->neoff, end = f->out.len;
		if (g->files || g->count) {
			if (g->max && shown >= g->max) {
				trunc = true;
				break;
			}
			if (g->files)
				fprintf(out, "%s\n", f->path);
			else
				fprintf(out, "%s:%zu\n", f->path, f->count);
			shown++;
			continue;
		}
		if (!f->out.len) {
			trunc = g->mode == OUT_TEXT && g->max;	/* dropped after the cut */
			continue;
		}
		if (g->mode == OUT_TEXT && g->max && shown + n > g->max) {
			n = g->max - shown;
			end = n < f->neoff ? f->eoff[n] : f->out.len;
			trunc = true;
		}
		if (g->mode == OUT_TEXT && (g->before || g->after) && any && n)
			fputs("--\n", out);
		fwrite(f->out.buf, 1, end, out);
		shown += n;
		any = any || n;
		lines += f->jl_lines;
		subs += f->jl_subs;
		withm++;
	}
	if (g->mode == OUT_TEXT && !g->files && !g->count && g->max && shown < total)
		trunc = true;
	if (g->mode == OUT_JSONL) {
		fprintf(out, "{\"data\":{\"elapsed_total\":");
		put_elapsed(out, ns);
		fprintf(out, ",\"stats\":{\"bytes_printed\":0,\"bytes_searched\":%zu,\"elapsed\":", bytes);
		put_elapsed(out, ns);
		fprintf(out, ",\"matched_lines\":%zu,\"matches\":%zu,\"searches\":%zu,"
			"\"searches_with_match\":%zu}},\"type\":\"summary\"}\n", lines, subs, searched, withm);
	} else if (trunc) {
		fprintf(out, "[... %zu of %zu %s shown; use --max-results 0 for all]\n", shown,
			(g->files || g->count) ? g->nfr : total,
			(g->files || g->count) ? "files" : "matches");
	}
	return total ? 0 : 1;
}

/* -e given: a PATTERN argument is a path */
static int grep_prep(struct wap_call *call, json_t *req, struct wap_err *err)
{
	json_t *rx = json_object_get(req, "regexp"), *pat = json_object_get(req, "pattern");

	(void)call;
	(void)err;
	if (rx && json_array_size(rx) && pat) {
		json_t *paths = json_object_get(req, "paths");
		if (!paths) {
			paths = json_array();
			json_object_set_new(req, "paths", paths);
		}
		json_array_insert(paths, 0, pat);
		json_object_del(req, "pattern");
	}
	return 0;
}

/* ---- rendering ---- */

static bool jbool(const json_t *o, const char *k)
{
	return json_is_true(json_object_get(o, k));
}

static void put_rg(FILE *out, const char *type, json_t *data)
{
	json_t *o = json_pack("{s:s, s:o}", "type", type, "data", data);
	json_dumpf(o, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(o);
}

static json_t *elapsed(long long ns)
{
	char human[64];
	snprintf(human, sizeof(human), "%.6fs", ns / 1e9);
	return json_pack("{s:I, s:I, s:s}", "secs", (json_int_t)(ns / 1000000000),
			 "nanos", (json_int_t)(ns % 1000000000), "human", human);
}

static void render_jsonl(const json_t *res, FILE *out)
{
	json_t *matches = json_object_get(res, "matches"), *fstats = json_object_get(res, "fileStats");
	size_t i = 0, nm = json_array_size(matches), nlines = 0, nmatch = 0;
	size_t searched = json_integer_value(json_object_get(res, "filesSearched"));

	for (size_t fi = 0; fi < json_array_size(fstats); fi++) {
		json_t *fs = json_array_get(fstats, fi);
		const char *path = json_string_value(json_object_get(fs, "path"));
		size_t fl = 0, fm = 0;
		long long last = 0;	/* last line printed */
		put_rg(out, "begin", json_pack("{s:{s:s}}", "path", "text", path));
		for (; i < nm; i++) {
			json_t *m = json_array_get(matches, i), *cb, *ca, *v;
			long long line = json_integer_value(json_object_get(m, "line"));
			long long off = json_integer_value(json_object_get(m, "offset"));
			size_t k, nb;
			if (strcmp(json_string_value(json_object_get(m, "path")), path))
				break;
			cb = json_object_get(m, "contextBefore");
			ca = json_object_get(m, "contextAfter");
			nb = json_array_size(cb);
			/* before-context lines, those not printed yet */
			{
				long long o2 = off;
				long long offs[1024];
				for (k = nb; k-- > 0;) {
					json_t *d = json_array_get(cb, k);
					json_t *t = json_object_get(d, "text");
					size_t l = t ? json_string_length(t) : 0;
					if (!t) {
						const char *b = json_string_value(json_object_get(d, "bytes"));
						l = b ? strlen(b) / 4 * 3 : 0;
					}
					o2 -= l;
					if (k < 1024)
						offs[k] = o2;
				}
				json_array_foreach(cb, k, v) {
					long long ln = line - (long long)nb + (long long)k;
					if (ln <= last)
						continue;
					put_rg(out, "context", json_pack("{s:{s:s}, s:O, s:I, s:I, s:[]}",
						"path", "text", path, "lines", v, "line_number", (json_int_t)ln,
						"absolute_offset", (json_int_t)(k < 1024 ? offs[k] : 0),
						"submatches"));
					last = ln;
				}
			}
			if (line > last) {
				put_rg(out, "match", json_pack("{s:{s:s}, s:O, s:I, s:I, s:O}",
					"path", "text", path, "lines", json_object_get(m, "lines"),
					"line_number", (json_int_t)line, "absolute_offset", (json_int_t)off,
					"submatches", json_object_get(m, "submatches")));
				fl++;
				fm += json_array_size(json_object_get(m, "submatches"));
				last = line;
			}
			{
				json_t *nx = i + 1 < nm ? json_array_get(matches, i + 1) : NULL;
				long long nextline = nx && !strcmp(json_string_value(json_object_get(nx, "path")), path)
					? json_integer_value(json_object_get(nx, "line")) : -1;
				long long o2 = off + (long long)(json_string_length(json_object_get(json_object_get(m, "lines"), "text")));
				json_array_foreach(ca, k, v) {
					long long ln = line + 1 + (long long)k;
					json_t *t = json_object_get(v, "text");
					if (nextline >= 0 && ln >= nextline)
						break;
					if (ln > last) {
						put_rg(out, "context", json_pack("{s:{s:s}, s:O, s:I, s:I, s:[]}",
							"path", "text", path, "lines", v, "line_number", (json_int_t)ln,
							"absolute_offset", (json_int_t)o2, "submatches"));
						last = ln;
					}
					o2 += t ? (long long)json_string_length(t) : 0;
				}
			}
		}
		nlines += fl;
		nmatch += fm;
		put_rg(out, "end", json_pack("{s:{s:s}, s:n, s:{s:o, s:i, s:i, s:I, s:i, s:I, s:I}}",
			"path", "text", path, "binary_offset", "stats",
			"elapsed", elapsed(0), "searches", 1, "searches_with_match", 1,
			"bytes_searched", (json_int_t)json_integer_value(json_object_get(fs, "bytes")),
			"bytes_printed", 0, "matched_lines", (json_int_t)fl, "matches", (json_int_t)fm));
	}
	{
		long long ns = json_integer_value(json_object_get(res, "elapsedNanos"));
		json_t *o = json_pack("{s:{s:o, s:{s:I, s:I, s:o, s:I, s:I, s:I, s:I}}, s:s}",
			"data", "elapsed_total", elapsed(ns), "stats",
			"bytes_printed", (json_int_t)0,
			"bytes_searched", (json_int_t)json_integer_value(json_object_get(res, "bytesSearched")),
			"elapsed", elapsed(ns),
			"matched_lines", (json_int_t)nlines, "matches", (json_int_t)nmatch,
			"searches", (json_int_t)searched,
			"searches_with_match", (json_int_t)json_array_size(fstats),
			"type", "summary");
		json_dumpf(o, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', out);
		json_decref(o);
	}
}

static int grep_render(const json_t *res, const json_t *req, FILE *out)
{
	json_t *v, *list;
	size_t i;
	long long total = json_integer_value(json_object_get(res, "totalMatches"));
	bool ctx = json_integer_value(json_object_get(req, "context")) > 0 ||
		   json_integer_value(json_object_get(req, "before_context")) > 0 ||
		   json_integer_value(json_object_get(req, "after_context")) > 0;

	if ((v = json_object_get(res, "files")) && json_object_get(res, "count")) {
		/* --replace --write */
		if (out) {
			size_t n = json_array_size(v);
			fprintf(out, "%lld replacement%s in %zu file%s\n",
				(long long)json_integer_value(json_object_get(res, "count")),
				json_integer_value(json_object_get(res, "count")) == 1 ? "" : "s",
				n, n == 1 ? "" : "s");
			json_array_foreach(v, i, list)
				fprintf(out, "%s\n", json_string_value(list));
		}
		return json_integer_value(json_object_get(res, "count")) > 0 ? 0 : 1;
	}
	if (!out)
		return total > 0 ? 0 : 1;
	if (jbool(req, "jsonl")) {
		render_jsonl(res, out);
		return total > 0 ? 0 : 1;
	}
	if ((list = json_object_get(res, "files"))) {
		json_array_foreach(list, i, v)
			fprintf(out, "%s\n", json_string_value(v));
	} else if ((list = json_object_get(res, "counts"))) {
		json_array_foreach(list, i, v)
			fprintf(out, "%s:%lld\n", json_string_value(json_object_get(v, "path")),
				(long long)json_integer_value(json_object_get(v, "count")));
	} else {
		const char *lastpath = NULL;
		long long last = 0;
		list = json_object_get(res, "matches");
		json_array_foreach(list, i, v) {
			const char *path = json_string_value(json_object_get(v, "path"));
			long long line = json_integer_value(json_object_get(v, "line"));
			json_t *cb = json_object_get(v, "contextBefore"), *ca = json_object_get(v, "contextAfter");
			json_t *nx = json_array_get(list, i + 1), *c;
			size_t nb = json_array_size(cb), k;
			long long first = line - (long long)nb;
			bool same = lastpath && !strcmp(lastpath, path);

			if (ctx && lastpath && (!same || first > last + 1))
				fputs("--\n", out);
			if (!same)
				last = 0;
			json_array_foreach(cb, k, c) {
				long long ln = first + (long long)k;
				if (ln <= last)
					continue;
				fprintf(out, "%s-%lld-%s\n", path, ln, json_string_value(c));
				last = ln;
			}
			if (line > last || jbool(req, "only_matching")) {
				/* a multiline match: one output line per line */
				const char *t = json_string_value(json_object_get(v, "matchText"));
				long long ln = line;
				for (;;) {
					const char *nl = strchr(t, '\n');
					int n = nl ? (int)(nl - t) : (int)strlen(t);
					if (n && t[n - 1] == '\r')
						n--;
					fprintf(out, "%s:%lld:%.*s\n", path, ln, n, t);
					if (!nl)
						break;
					t = nl + 1;
					ln++;
				}
				if (ln > line && ln > last)
					last = ln;
			}
			last = line > last ? line : last;
			json_array_foreach(ca, k, c) {
				long long ln = line + 1 + (long long)k;
				if (nx && !strcmp(json_string_value(json_object_get(nx, "path")), path) &&
				    ln >= json_integer_value(json_object_get(nx, "line")) -
					  (long long)json_array_size(json_object_get(nx, "contextBefore")))
					break;
				if (ln <= last)
					continue;
				fprintf(out, "%s-%lld-%s\n", path, ln, json_string_value(c));
				last = ln;
			}
			lastpath = path;
		}
	}
	if (jbool(res, "isTruncated")) {
		size_t shown = json_array_size(list);
		fprintf(out, "[... %zu of %lld %s shown; use --max-results 0 for all]\n", shown, total,
			json_object_get(res, "files") ? "files" : json_object_get(res, "counts") ? "files" :
			"matches");
	}
	return total > 0 ? 0 : 1;
}

/* The CLI: lines and --jsonl are written from each file's output as the
 * search made it (no JSON document of every match); --json and --write go
 * through the op as every other door does. */
static int grep_cli(struct wap_ws *ws, json_t *req, bool json)
{
	struct wap_call call = { .ws = ws };
	struct wap_err err = { 0 };
	json_t *res = NULL;
	int status = 0, rc;
	static char obuf[1 << 16];

	grep_prep(&call, req, &err);
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	if (json || jbool(req, "write"))
		rc = grep_exec(&call, req, &res, &err, OUT_JSON, NULL, NULL);
	else
		rc = grep_exec(&call, req, &res, &err, jbool(req, "jsonl") ? OUT_JSONL : OUT_TEXT,
			       stdout, &status);
	if (rc) {
		if (json) {
			json_t *o = wap_err_json(&err);
			json_dumpf(o, stdout, JSON_COMPACT);
			fputc('\n', stdout);
			json_decref(o);
		} else {
			fflush(stdout);
			fprintf(stderr, "wap grep: %s\n", err.msg);
		}
		wap_err_release(&err);
		fflush(stdout);
		return 2;
	}
	if (res) {
		if (json) {
			json_dumpf(res, stdout, JSON_COMPACT);
			fputc('\n', stdout);
			status = grep_render(res, req, NULL);
		} else {
			status = grep_render(res, req, stdout);
		}
		json_decref(res);
	}
	if (fflush(stdout) || ferror(stdout)) {
		if (errno == EPIPE)
			return status;
		fprintf(stderr, "wap grep: write error: %s\n", strerror(errno));
		return 2;
	}
	return status;
}

/* MCP outputSchema: one shape per mode (lines, -l, -c, --write), so
 * nothing is required but the object itself */
static const char grep_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"matches\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
	"\"path\":{\"type\":\"string\"},\"line\":{\"type\":\"integer\"},"
	"\"matchText\":{\"type\":\"string\"},"
	"\"contextBefore\":{\"type\":\"array\"},\"contextAfter\":{\"type\":\"array\"}},"
	"\"required\":[\"path\",\"line\",\"matchText\",\"contextBefore\",\"contextAfter\"]}},"
	"\"files\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	"\"counts\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
	"\"path\":{\"type\":\"string\"},\"count\":{\"type\":\"integer\"}}}},"
	"\"count\":{\"type\":\"integer\"},"
	"\"isTruncated\":{\"type\":\"boolean\"},\"totalMatches\":{\"type\":\"integer\"},"
	"\"totalFiles\":{\"type\":\"integer\"},\"filesSearched\":{\"type\":\"integer\"},"
	"\"filesWithMatches\":{\"type\":\"integer\"},"
	"\"binaryFilesSkipped\":{\"type\":\"integer\"}}}";

const struct wap_applet wap_applet_grep = {
	.name = "grep",
	.summary = wap_summary_grep,
	.usage = wap_usage_grep,
	.title = "Search file contents",
	.opts = grep_opts,
	.op = grep_op,
	.render = grep_render,
	.cli_prep = grep_prep,
	.cli_main = grep_cli,
	.output_schema = grep_schema,
	.flags = WAP_APPLET_EXIT2,	/* not read-only: --write rewrites files */
};
