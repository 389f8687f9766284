/* search/searchprint.c - the printers of the search: a file's entries as text
 * lines or ripgrep's --json messages (made as the search finds them, so
 * the CLI never holds a JSON document of every match), match records and
 * the result object for --json and every other door, and the CLI's final
 * output (lines, -l, -c, --jsonl's summary). */
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
#include "archives.h"
#include "file.h"
#include "match.h"
#include "search_impl.h"
#include "strbuf.h"
#include "text.h"
#include "walk.h"

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

/* the line's text for the result: no line end, cut at maxline
 * characters; ALL is its length: N when all of it is at hand, more for
 * the start of a replaced line, SIZE_MAX when not known (srch_substitute
 * stopped: "more than N") */
static json_t *cut_text(const struct gctx *g, const char *s, size_t n, size_t all)
{
	if (n && s[n - 1] == '\r' && n == all)
		n--, all--;
	if (all == SIZE_MAX || (g->maxline && n > g->maxline && char_cut(s, n, g->maxline) < n)) {
		size_t k = g->maxline ? char_cut(s, n, g->maxline) : n;
		struct wap_sb sb = WAP_SB_INIT;
		json_t *j;
		wap_sb_add(&sb, s, k);
		if (all != SIZE_MAX)
			wap_sb_addf(&sb, " [... line cut at %zu characters; %zu bytes in all]", g->maxline, all);
		else	/* (a replaced line made as far as it is shown) */
			wap_sb_addf(&sb, " [... line cut at %zu characters; more than %zu bytes in all]",
				    g->maxline, n);
		j = jtext(sb.buf, sb.len);
		wap_sb_release(&sb);
		return j;
	}
	return jtext(s, n);
}

static json_t *line_text(const struct gctx *g, const char *s, size_t n)
{
	return cut_text(g, s, n, n);
}

/* what of a replaced line is made to be shown: enough for maxline
 * characters (0: all) */
static size_t shown_max(const struct gctx *g)
{
	return g->maxline ? g->maxline * 4 + 8 : 0;
}

/* [S, S+N) replaced, as a result's text (as it is if the replacement
 * fails) */
static json_t *replaced_text(const struct gctx *g, struct wap_mstate *st, const char *s, size_t n)
{
	size_t rn, all;
	char *r = srch_substitute(g, st, s, n, shown_max(g), &rn, &all, NULL);
	json_t *j = r ? cut_text(g, r, rn, all ? all : SIZE_MAX) : line_text(g, s, n);

	free(r);
	return j;
}

/* ---- match records (the result object) ---- */

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
			size_t e = srch_line_end(buf, len, s);
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

	if (g->only && g->replace) {
		size_t n;
		char *r = srch_replace_match(g, w->st, buf + ls, le - ls, ms - ls, me - ls, &n);
		text = r ? cut_text(g, r, n, n) : line_text(g, buf + ms, me - ms);
		free(r);
	} else if (g->only) {
		text = line_text(g, buf + ms, me - ms);
	} else if (g->replace && !g->invert) {
		text = replaced_text(g, w->st, buf + ls, le - ls);
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
		struct wap_match_iter it = { 0 };
		size_t s, e;
		while (!g->invert && wap_match_next(g->m, w->st, buf + ls, le - ls, &it, &s, &e))
			json_array_append_new(subs, json_pack("{s:o, s:I, s:I}",
				"match", rgdata(buf + ls + s, e - s),
				"start", (json_int_t)s, "end", (json_int_t)e));
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

/* "PATH" SEP LNO SEP, without printf */
static void put_prefix(struct emit *em, struct wap_sb *sb, char sep, long long lno)
{
	char d[24];
	int k = sizeof(d);

	if (em->quote)
		wap_name_quote(sb, em->path, em->pathlen);
	if (!wap_sb_grow(sb, em->pathlen + 26))
		return;
	if (!em->quote) {
		memcpy(sb->buf + sb->len, em->path, em->pathlen);
		sb->len += em->pathlen;
	}
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
static void add_cut(struct emit *em, struct wap_sb *sb, const char *s, size_t n, size_t all)
{
	if (all == SIZE_MAX || (em->g->maxline && n > em->g->maxline && char_cut(s, n, em->g->maxline) < n)) {
		size_t k = em->g->maxline ? char_cut(s, n, em->g->maxline) : n;
		wap_sb_add(sb, s, k);
		if (all != SIZE_MAX)
			wap_sb_addf(sb, " [... line cut at %zu characters; %zu bytes in all]", em->g->maxline, all);
		else
			wap_sb_addf(sb, " [... line cut at %zu characters; more than %zu bytes in all]",
				    em->g->maxline, n);
	} else {
		wap_sb_add(sb, s, n);
	}
}

static void add_text(struct emit *em, struct wap_sb *sb, const char *s, size_t n)
{
	add_cut(em, sb, s, n, n);
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

/* ripgrep's submatches of the line(s) at [LS, LE): every match, an empty
 * one too (wap_match_next); how many */
static size_t put_subs(struct emit *em, size_t ls, size_t le)
{
	struct wap_sb *sb = &em->f->out;
	struct wap_match_iter it = { 0 };
	size_t s, e, n = 0;

	wap_sb_adds(sb, ",\"submatches\":[");
	while (wap_match_next(em->g->m, em->w->st, em->buf + ls, le - ls, &it, &s, &e)) {
		if (n++)
			wap_sb_addc(sb, ',');
		wap_sb_adds(sb, "{\"match\":");
		jdata(sb, em->buf + ls + s, e - s);
		wap_sb_addf(sb, ",\"start\":%zu,\"end\":%zu}", s, e);
	}
	wap_sb_adds(sb, "]}}\n");
	return n;
}

/* one context line */
static void put_context(struct emit *em, long long lno, size_t s, size_t e)
{
	struct wap_sb *sb = &em->f->out;

	if (em->g->mode == WAP_SEARCH_JSONL) {
		rg_head(em, "context");
		jdata(sb, em->buf + s, e - s + (e < em->len));
		wap_sb_addf(sb, ",\"line_number\":%lld,\"absolute_offset\":%zu", lno, em->base + s);
		/* with -v a context line is a matching one: ripgrep shows
		 * its matches */
		if (em->g->invert)
			put_subs(em, s, e);
		else
			wap_sb_adds(sb, ",\"submatches\":[]}}\n");
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
		put_context(em, em->lastp + 1, s, srch_line_end(em->buf, em->len, s));
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
	if (g->mode == WAP_SEARCH_TEXT && (g->before || g->after) && em->lastp && first > em->lastp + 1)
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
			put_context(em, lno - 1 - i, starts[i], srch_line_end(em->buf, em->len, starts[i]));
	}
	if (g->mode == WAP_SEARCH_JSONL) {
		rg_head(em, "match");
		jdata(sb, em->buf + ls, le - ls + (le < em->len));
		wap_sb_addf(sb, ",\"line_number\":%lld,\"absolute_offset\":%zu", lno, em->base + ls);
		/* an inverted line has no match (ripgrep looks, finds none) */
		if (g->invert)
			wap_sb_adds(sb, ",\"submatches\":[]}}\n");
		else
			em->nsub += put_subs(em, ls, le);
		/* a multiline match is as many matched lines as it spans */
		em->nlines += 1 + wap_count_nl(em->buf + ls, le - ls);
		em->lastp = lno + (long long)wap_count_nl(em->buf + ls, le - ls);
	} else if (g->only) {
		put_prefix(em, sb, ':', lno);
		if (g->replace) {
			size_t n;
			char *r = srch_replace_match(g, em->w->st, em->buf + ls, le - ls, ms - ls, me - ls, &n);
			if (r)
				add_cut(em, sb, r, n, n);
			else
				add_text(em, sb, em->buf + ms, me - ms);
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
		size_t tn = le - ls, all = 0, made = 0;
		long long ln = lno;
		bool lines = false;
		if (g->replace && !g->invert) {
			/* one line's replacement made as far as it is shown; a
			 * match over lines (or a replacement that makes some)
			 * to maxFileSize: each of its lines is shown */
			lines = g->multiline || strchr(g->replace, '\n') || strstr(g->replace, "\\n");
			r = srch_substitute(g, em->w->st, t, tn, lines ? g->call->ws->lim.max_file_size : shown_max(g),
					    &tn, &all, NULL);
			made = tn;
			if (r)
				t = r;
			else
				tn = le - ls;
		}
		for (;;) {
			const char *nl = memchr(t, '\n', tn);
			size_t n = nl ? (size_t)(nl - t) : tn;
			put_prefix(em, sb, ':', ln);
			if (!nl && r && !all && lines && n <= g->maxline) {
				/* the replaced lines stop here */
				add_text(em, sb, t, n);
				wap_sb_addf(sb, " [... replaced text cut at %zu bytes; more in all]", made);
			} else {
				add_cut(em, sb, t, n, !nl && r && all != tn ? (all ? n + all - tn : SIZE_MAX) : n);
			}
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

/* ---- one entry, either way ---- */

/* one entry, as a JSON record or as output */
void srch_add_entry(struct emit *em, json_t **recs, size_t lno, size_t ls, size_t le,
		      size_t ms, size_t me)
{
	struct gctx *g = em->g;

	if (g->mode == WAP_SEARCH_JSON) {
		if (!*recs)
			*recs = json_array();
		json_array_append_new(*recs, make_rec(g, em->w, em->path, em->buf, em->len, ls, le,
						      lno, ms, me));
		return;
	}
	if (g->mode == WAP_SEARCH_JSONL && !em->f->out.len) {
		wap_sb_adds(&em->f->out, "{\"type\":\"begin\",\"data\":{\"path\":");
		jdata(&em->f->out, em->path, strlen(em->path));
		wap_sb_adds(&em->f->out, "}}\n");
	}
	emit_entry(em, lno, ls, le, ms, me);
}

/* the file's output is complete: after-context owed, JSONL's end message */
void srch_file_end(struct emit *em)
{
	struct wap_sb *sb = &em->f->out;

	flush_after(em, LLONG_MAX);
	if (em->g->mode == WAP_SEARCH_JSONL) {
		/* ripgrep's per-file stats: bytes_printed counts the file's
		 * messages before this one; a named binary file is searched up
		 * to its first NUL */
		em->printed = sb->len;
		wap_sb_adds(sb, "{\"type\":\"end\",\"data\":{\"path\":");
		jdata(sb, em->path, strlen(em->path));
		if (em->binoff >= 0)
			wap_sb_addf(sb, ",\"binary_offset\":%lld", em->binoff);
		else
			wap_sb_adds(sb, ",\"binary_offset\":null");
		wap_sb_addf(sb, ",\"stats\":{\"elapsed\":{\"secs\":0,"
			    "\"nanos\":0,\"human\":\"0.000000s\"},\"searches\":1,"
			    "\"searches_with_match\":1,\"bytes_searched\":%zu,\"bytes_printed\":%zu,"
			    "\"matched_lines\":%zu,\"matches\":%zu}}}\n",
			    em->binoff >= 0 ? (size_t)em->binoff : em->base + em->len, em->printed,
			    em->nlines, em->nsub);
	}
}

json_t *srch_build_result(struct gctx *g, size_t total_files, size_t total_matches)
{
	json_t *res = json_object(), *list = json_array();
	size_t shown = 0;
	bool trunc = false;

	if (g->nfr)
		qsort_r(g->fr, g->nfr, sizeof(*g->fr), srch_frcmp_q, &g->sort);
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

static void put_elapsed(FILE *out, long long ns)
{
	/* the summary's keys in ripgrep's order */
	fprintf(out, "{\"human\":\"%.6fs\",\"nanos\":%lld,\"secs\":%lld}",
		ns / 1e9, ns % 1000000000, ns / 1000000000);
}

/* The CLI output from the per-file outputs, in order, cut at MAX. */
int srch_print_direct(struct gctx *g, FILE *out, long long ns)
{
	size_t total = 0, shown = 0, lines = 0, subs = 0, withm = 0, printed = 0, sbytes = 0;
	bool trunc = false, any = false;

	for (size_t i = 0; i < g->nfr; i++)
		total += g->fr[i].count;
	if (g->nfr)
		qsort_r(g->fr, g->nfr, sizeof(*g->fr), srch_frcmp_q, &g->sort);
	for (size_t i = 0; i < g->nfr && !trunc; i++) {
		struct frec *f = &g->fr[i];
		size_t n = f->neoff, end = f->out.len;
		if (g->files || g->count) {
			if (g->max && shown >= g->max) {
				trunc = true;
				break;
			}
			struct wap_sb q = WAP_SB_INIT;
			if (g->files)
				fprintf(out, "%s\n", wap_name_show(&q, f->path));
			else
				fprintf(out, "%s:%zu\n", wap_name_show(&q, f->path), f->count);
			wap_sb_release(&q);
			shown++;
			continue;
		}
		if (!f->out.len) {
			trunc = g->mode == WAP_SEARCH_TEXT && g->max;	/* dropped after the cut */
			continue;
		}
		if (g->mode == WAP_SEARCH_TEXT && g->max && shown + n > g->max) {
			n = g->max - shown;
			end = n < f->neoff ? f->eoff[n] : f->out.len;
			trunc = true;
		}
		if (g->mode == WAP_SEARCH_TEXT && (g->before || g->after) && any && n)
			fputs("--\n", out);
		fwrite(f->out.buf, 1, end, out);
		shown += n;
		any = any || n;
		lines += f->jl_lines;
		subs += f->jl_subs;
		printed += f->jl_printed;
		sbytes += f->jl_searched;
		withm++;
	}
	if (g->mode == WAP_SEARCH_TEXT && !g->files && !g->count && g->max && shown < total)
		trunc = true;
	if (g->mode == WAP_SEARCH_JSONL) {
		/* ripgrep's summary adds up the stats of the end messages:
		 * a file without one (no match, binary, empty) is no search */
		fprintf(out, "{\"data\":{\"elapsed_total\":");
		put_elapsed(out, ns);
		fprintf(out, ",\"stats\":{\"bytes_printed\":%zu,\"bytes_searched\":%zu,\"elapsed\":",
			printed, sbytes);
		put_elapsed(out, 0);
		fprintf(out, ",\"matched_lines\":%zu,\"matches\":%zu,\"searches\":%zu,"
			"\"searches_with_match\":%zu}},\"type\":\"summary\"}\n", lines, subs, withm, withm);
	} else if (trunc) {
		fprintf(out, "[... %zu of %zu %s shown; use --max-results 0 for all]\n", shown,
			(g->files || g->count) ? g->nfr : total,
			(g->files || g->count) ? "files" : "matches");
	}
	return total ? 0 : 1;
}
