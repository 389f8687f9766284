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
 *   -S, --smart-case          as rg -S: -i when no pattern has an upper-case letter
 *   -w, --word-regexp         match whole words only (on the command line, after -x: instead of it, as rg)
 *   -x, --line-regexp         match whole lines only (on the command line, after -w: instead of it, as rg)
 *   -v, --invert-match        select the lines that do not match
 *   -U, --multiline           let a match span lines
 *   -e, --regexp PATTERN      a pattern (repeatable; any PATTERN argument is then a PATH)
 *   --include GLOB            search only files matching GLOB (repeatable)
 *   --exclude GLOB            skip files and directories matching GLOB (repeatable)
 *   -g, --glob GLOB           as rg -g: --include GLOB, or --exclude X for !X (repeatable)
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
 *   -z, --search-archives     search inside gz/xz/zst/bz2 files and tar/zip/7z members (archive//member); the archives of a call are unpacked to 256 MiB in all: what stops one short is said (archivesCut, stderr)
 *   -a, --text                search binary files as text
 *   -r, --replace TEXT        show matching lines with each match replaced by TEXT ($1, ${name}: groups)
 *   --write                   with --replace: rewrite every matching file atomically, none past maxFileSize; result {count, files}
 *   --jsonl                   print ripgrep's --json message stream (begin, match, context, end, summary), every match
 *   -j, --threads N           search with N threads (default: one per CPU)
 *   -n, --line-number         accepted as grep takes it: line numbers are always shown
 *   --hidden                  accepted as rg takes it: hidden files are always searched
 *   -u, --unrestricted        as rg -u: --no-ignore; -uu too (hidden files are always searched); rg's -uuu is refused: -a searches binary files as text
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
#include <errno.h>
#include <string.h>

#include "applet.h"
#include "applets.h"
#include "match.h"
#include "run.h"
#include "search.h"
#include "strbuf.h"
#include "text.h"

static const struct wap_opt grep_opts[] = {
	{ "fixed-strings", 'F', WAP_OPT_BOOL, 0, NULL },
	{ "ignore-case", 'i', WAP_OPT_BOOL, 0, NULL },
	{ "word-regexp", 'w', WAP_OPT_BOOL, WAP_OPT_ONEOF, NULL },	/* as rg: the last */
	{ "line-regexp", 'x', WAP_OPT_BOOL, WAP_OPT_ONEOF, NULL },	/* of -w, -x wins */
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
	{ "glob", 'g', WAP_OPT_STRS, WAP_OPT_CLI, NULL },
	{ "smart-case", 'S', WAP_OPT_BOOL, WAP_OPT_CLI, NULL },
	{ "hidden", 0, WAP_OPT_BOOL, WAP_OPT_CLI, NULL },
	{ "unrestricted", 'u', WAP_OPT_COUNT, WAP_OPT_CLI, NULL },
	{ "pattern", 0, WAP_OPT_STR, WAP_OPT_POS, NULL },
	{ "paths", 0, WAP_OPT_STRS, WAP_OPT_POS, NULL },
	{ NULL }
};

static int grep_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	return wap_search(call, req, res, err, WAP_SEARCH_JSON, NULL, NULL);
}

/* Does PATTERN hold an upper-case letter of its own, as rg's -S asks:
 * one written in it, not an escape's (\S, \W, \p{Lu}, \x{41})? */
static bool has_upper(const char *p)
{
	static const char *const up[] = { "\\p{Lu}|\\p{Lt}" };
	struct wap_match_opts o = { .patterns = up, .n = 1 };
	struct wap_sb lits = WAP_SB_INIT;
	struct wap_matcher *m;
	struct wap_mstate *st = NULL;
	size_t ls, le;
	bool r = false;

	for (; p && *p; p++) {
		if (*p != '\\') {
			wap_sb_addc(&lits, *p);
		} else if (p[1] && strchr("pPxNgko", p[1]) && p[2] == '{' && strchr(p, '}')) {
			p = strchr(p, '}');
		} else if (p[1]) {
			p++;
		}
	}
	m = lits.len ? wap_matcher_new(&o, NULL) : NULL;
	if (m && (st = wap_mstate_new(m))) {
		wap_match_begin(st);
		r = wap_match_line(m, st, lits.buf, lits.len, 0, &ls, &le);
	}
	wap_mstate_free(st);
	wap_matcher_free(m);
	wap_sb_release(&lits);
	return r;
}

/* The command line's own spellings, into the request every door takes:
 * -e given: a PATTERN argument is a path; rg's -u into no_ignore, -g
 * GLOB and !GLOB into include and exclude; -S into -i when no pattern
 * has an upper-case letter. */
static int grep_prep(struct wap_call *call, json_t *req, struct wap_err *err)
{
	json_t *rx = json_object_get(req, "regexp"), *pat = json_object_get(req, "pattern");
	json_t *globs = json_object_get(req, "glob"), *g;
	size_t i;

	(void)call;
	/* rg's -u: no ignore files; -uu: and hidden files (wap's way
	 * always); -uuu adds rg's --binary, whose "binary file matches"
	 * wap has no form of */
	switch (json_integer_value(json_object_get(req, "unrestricted"))) {
	case 0:
		break;
	case 1: case 2:
		json_object_set_new(req, "no_ignore", json_true());
		break;
	default:
		return wap_err_set(err, WAP_E_INVALID,
			"-uuu (rg's --binary) is not supported: -a (--text) searches binary files as text");
	}
	json_object_del(req, "unrestricted");
	json_array_foreach(globs, i, g) {
		const char *s = json_string_value(g);
		const char *key = s[0] == '!' ? "exclude" : "include";
		json_t *to = json_object_get(req, key);
		if (!to) {
			to = json_array();
			json_object_set_new(req, key, to);
		}
		json_array_append_new(to, json_string(s + (s[0] == '!')));
	}
	json_object_del(req, "glob");
	if (json_is_true(json_object_get(req, "smart_case")) &&
	    !json_is_true(json_object_get(req, "ignore_case"))) {
		bool upper = pat && has_upper(json_string_value(pat));
		json_array_foreach(rx, i, g)
			upper = upper || has_upper(json_string_value(g));
		if (!upper)
			json_object_set_new(req, "ignore_case", json_true());
	}
	json_object_del(req, "smart_case");
	json_object_del(req, "hidden");
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
	struct wap_sb q = WAP_SB_INIT;
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
				fprintf(out, "%s\n", wap_name_show(&q, json_string_value(list)));
			wap_sb_release(&q);
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
			fprintf(out, "%s\n", wap_name_show(&q, json_string_value(v)));
	} else if ((list = json_object_get(res, "counts"))) {
		json_array_foreach(list, i, v)
			fprintf(out, "%s:%lld\n", wap_name_show(&q, json_string_value(json_object_get(v, "path"))),
				(long long)json_integer_value(json_object_get(v, "count")));
	} else {
		const char *lastpath = NULL;
		long long last = 0;
		list = json_object_get(res, "matches");
		json_array_foreach(list, i, v) {
			const char *name = json_string_value(json_object_get(v, "path"));
			const char *path = wap_name_show(&q, name);
			long long line = json_integer_value(json_object_get(v, "line"));
			json_t *cb = json_object_get(v, "contextBefore"), *ca = json_object_get(v, "contextAfter");
			json_t *nx = json_array_get(list, i + 1), *c;
			size_t nb = json_array_size(cb), k;
			long long first = line - (long long)nb;
			bool same = lastpath && !strcmp(lastpath, name);

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
				if (nx && !strcmp(json_string_value(json_object_get(nx, "path")), name) &&
				    ln >= json_integer_value(json_object_get(nx, "line")) -
					  (long long)json_array_size(json_object_get(nx, "contextBefore")))
					break;
				if (ln <= last)
					continue;
				fprintf(out, "%s-%lld-%s\n", path, ln, json_string_value(c));
				last = ln;
			}
			lastpath = name;
		}
	}
	wap_sb_release(&q);
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
static int grep_cli(struct wap_ws *ws, json_t *req, bool json, struct wap_cancel *cancel)
{
	struct wap_call call = { .ws = ws, .cancel = cancel };
	struct wap_err err = { 0 };
	json_t *res = NULL;
	int status = 0, rc;
	static char obuf[1 << 16];

	long prev = wap_run_arm(&call, "grep");	/* the call's limit, as every door's */

	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	if (json || jbool(req, "write"))
		rc = wap_search(&call, req, &res, &err, WAP_SEARCH_JSON, NULL, NULL);
	else
		rc = wap_search(&call, req, &res, &err, jbool(req, "jsonl") ? WAP_SEARCH_JSONL : WAP_SEARCH_TEXT,
			       stdout, &status);
	rc = wap_run_disarm(&call, "grep", prev, rc, &err);
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
	if (res && !json && !jbool(req, "write")) {
		/* the text's: what was not searched, said aside as ripgrep
		 * says what it could not read */
		json_t *v;
		size_t i;
		fflush(stdout);
		json_array_foreach(json_object_get(res, "archivesCut"), i, v)
			fprintf(stderr, "wap grep: %s: not searched to its end: %s\n",
				json_string_value(json_object_get(v, "path")),
				json_string_value(json_object_get(v, "reason")));
		json_decref(res);
		res = NULL;
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

