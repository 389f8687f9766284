/* edit/edit.c - the editing engine (see edit.h): string replacement with fuzzy
 * fallbacks, several edits, line operations, LSP position edits. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "edit.h"
#include "match.h"
#include "strbuf.h"
#include "text.h"

static const char *const strategy_names[WAP_S_COUNT] = {
	"exact", "trailing_whitespace", "whitespace", "indentation", "unicode", "escapes",
	"trimmed", "line_trimmed", "block_anchor", "whitespace_normalized",
	"indentation_flexible", "escape_normalized", "trimmed_boundary", "context_aware",
};

static bool ws_nl(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* S without the whitespace and newlines around it */
static struct wap_span trim_all(const char *s, size_t len)
{
	struct wap_span t = { s, len };
	while (t.len && ws_nl(*t.p))
		t.p++, t.len--;
	while (t.len && ws_nl(t.p[t.len - 1]))
		t.len--;
	return t;
}

const char *wap_strategy_name(enum wap_strategy s)
{
	return s < WAP_S_COUNT ? strategy_names[s] : "exact";
}

/* ---- lines ---- */

long wap_lines(const char *t, size_t len, unsigned flags, struct wap_span **out)
{
	const char *p = t, *end = t + len;
	size_t n = 1, i = 0;
	struct wap_span *v;

	/* counted first: one allocation */
	for (const char *q = t; (q = memchr(q, '\n', end - q)); q++)
		n++;
	if (!(v = malloc(n * sizeof(*v))))
		return -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *e = nl ? nl : end;
		if (e > p && e[-1] == '\r' && (nl ? flags & WAP_LINES_CR : flags & WAP_LINES_CR_END))
			e--;
		v[i].p = p;
		v[i++].len = e - p;
		p = nl ? nl + 1 : end;
	}
	if ((flags & WAP_LINES_JS) && (!len || end[-1] == '\n'))
		v[i++] = (struct wap_span){ end, 0 };
	*out = v;
	return (long)i;
}

static long split_lines(const char *t, size_t len, struct wap_span **out)
{
	return wap_lines(t, len, 0, out);
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static struct wap_span rstrip(struct wap_span s)
{
	while (s.len && is_ws(s.p[s.len - 1]))
		s.len--;
	return s;
}

static struct wap_span trim(struct wap_span s)
{
	s = rstrip(s);
	while (s.len && is_ws(*s.p))
		s.p++, s.len--;
	return s;
}

static bool span_eq(struct wap_span a, struct wap_span b)
{
	return a.len == b.len && !memcmp(a.p, b.p, a.len);
}

static size_t lead_len(struct wap_span s)
{
	size_t i = 0;
	while (i < s.len && (s.p[i] == ' ' || s.p[i] == '\t'))
		i++;
	return i;
}

static bool blank(struct wap_span s)
{
	return trim(s).len == 0;
}

/* ---- Unicode punctuation ---- */

struct fold_ent {
	const char *from;
	const char *to;
};
static const struct fold_ent fold_tab[] = {
	{ "\xe2\x80\x98", "'" }, { "\xe2\x80\x99", "'" }, { "\xe2\x80\x9a", "'" },
	{ "\xe2\x80\x9b", "'" }, { "\xe2\x80\xb2", "'" },
	{ "\xe2\x80\x9c", "\"" }, { "\xe2\x80\x9d", "\"" }, { "\xe2\x80\x9e", "\"" },
	{ "\xe2\x80\x9f", "\"" }, { "\xe2\x80\xb3", "\"" },
	{ "\xe2\x80\x90", "-" }, { "\xe2\x80\x91", "-" }, { "\xe2\x80\x92", "-" },
	{ "\xe2\x80\x93", "-" }, { "\xe2\x80\x94", "-" }, { "\xe2\x80\x95", "-" },
	{ "\xe2\x88\x92", "-" },
	{ "\xc2\xa0", " " }, { "\xe2\x80\xaf", " " }, { "\xe2\x81\x9f", " " },
	{ "\xe3\x80\x80", " " },
	{ "\xe2\x80\xa6", "..." },
	{ NULL, NULL }
};

/* Fold S; MAP (optional, malloc'd, outlen + 1 entries) gives for each
 * output byte the offset of the input character it came from. */
static char *fold_map(const char *s, size_t len, size_t *outlen, size_t **map)
{
	struct wap_sb sb = WAP_SB_INIT;
	size_t *m = NULL, mcap = 0, i = 0;

	if (map) {
		mcap = len * 3 + 1;
		m = malloc(mcap * sizeof(*m));
		if (!m)
			return NULL;
	}
	while (i < len) {
		const struct fold_ent *f = NULL;
		unsigned char c = s[i];
		size_t fl = 1;
		if (c >= 0xc2) {
			for (const struct fold_ent *e = fold_tab; e->from; e++) {
				size_t n = strlen(e->from);
				if (n <= len - i && !memcmp(s + i, e->from, n)) {
					f = e;
					fl = n;
					break;
				}
			}
		}
		if (f) {
			for (const char *t = f->to; *t; t++) {
				if (m)
					m[sb.len] = i;
				wap_sb_addc(&sb, *t);
			}
		} else {
			if (m)
				m[sb.len] = i;
			wap_sb_addc(&sb, (char)c);
		}
		i += fl;
	}
	if (m)
		m[sb.len] = len;
	if (sb.oom || !wap_sb_grow(&sb, 1)) {
		wap_sb_release(&sb);
		free(m);
		return NULL;
	}
	sb.buf[sb.len] = 0;
	*outlen = sb.len;
	if (map)
		*map = m;
	return wap_sb_detach(&sb);
}

char *wap_unicode_fold(const char *s, size_t len, size_t *outlen)
{
	return fold_map(s, len, outlen, NULL);
}

static bool has_high(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] >= 0x80)
			return true;
	return false;
}

/* ---- escapes ---- */

/* Undo literal escapes (\n \t \r \" \' \\ \` \$).  Returns a malloc'd copy;
 * *changed says whether anything was undone. */
static char *unescape(const char *s, size_t len, size_t *outlen, bool *changed)
{
	char *o = malloc(len + 1);
	size_t n = 0;

	if (!o)
		return NULL;
	*changed = false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (c == '\\' && i + 1 < len) {
			char d = s[i + 1], r = 0;
			switch (d) {
			case 'n': r = '\n'; break;
			case 't': r = '\t'; break;
			case 'r': r = '\r'; break;
			case '"': case '\'': case '\\': case '`': case '$': r = d; break;
			}
			if (r) {
				o[n++] = r;
				i++;
				*changed = true;
				continue;
			}
		}
		o[n++] = c;
	}
	o[n] = 0;
	*outlen = n;
	return o;
}

/* ---- matches ---- */

struct match {
	size_t s, e;		/* bytes of the text replaced */
	char *repl;		/* replacement (malloc'd) or NULL: the new text */
	size_t rlen;
	bool consistent;	/* WHITESPACE: relative indentation kept */
};

struct mvec {
	struct match *v;
	size_t n, cap;
	size_t max, held;	/* replacements kept (bytes), and their cap (0: none) */
	bool over;		/* held would pass max: the edit is too large */
};

/* A replacement of RLEN bytes kept for a match: false (and mv->over) when
 * the replacements kept would pass what the result may hold */
static bool mkeep(struct mvec *mv, size_t rlen)
{
	mv->held += rlen;
	if (mv->max && mv->held > mv->max) {
		mv->over = true;
		return false;
	}
	return true;
}

/* "Content too large" for an edit whose result would pass MAX bytes */
static int too_large(struct wap_err *err, const char *path, size_t max)
{
	return wap_err_set(err, WAP_E_TOO_LARGE,
			   "Content too large: the edit would make %s more than %zu bytes "
			   "(limits.maxFileSize): replace fewer places or less text, or raise "
			   "limits.maxFileSize in the config", path ? path : "the file", max);
}

static int mpush(struct mvec *mv, size_t s, size_t e)
{
	if (mv->n == mv->cap) {
		size_t nc = mv->cap ? mv->cap * 2 : 8;
		struct match *nv = realloc(mv->v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		mv->v = nv;
		mv->cap = nc;
	}
	memset(&mv->v[mv->n], 0, sizeof(struct match));
	mv->v[mv->n].s = s;
	mv->v[mv->n].e = e;
	mv->n++;
	return 0;
}

static void mclear(struct mvec *mv)
{
	for (size_t i = 0; i < mv->n; i++)
		free(mv->v[i].repl);
	free(mv->v);
	memset(mv, 0, sizeof(*mv));
}

/* every place of NEEDLE in HAY, overlapping ones too */
static int find_all(const char *hay, size_t hlen, const char *needle, size_t nlen,
		    struct mvec *mv)
{
	const char *p = hay, *end = hay + hlen, *q;

	if (!nlen)
		return 0;
	while (p < end && (q = memmem(p, end - p, needle, nlen))) {
		if (mpush(mv, q - hay, q - hay + nlen))
			return -1;
		p = q + 1;
	}
	return 0;
}

/* common leading whitespace of the non-blank lines */
static size_t common_indent(const struct wap_span *l, size_t k, const char **pfx)
{
	size_t n = 0;
	bool first = true;

	*pfx = "";
	for (size_t j = 0; j < k; j++) {
		size_t ll;
		if (blank(l[j]))
			continue;
		ll = lead_len(l[j]);
		if (first) {
			*pfx = l[j].p;
			n = ll;
			first = false;
		} else {
			size_t m = 0;
			while (m < n && m < ll && l[j].p[m] == (*pfx)[m])
				m++;
			n = m;
		}
	}
	return n;
}

static bool indent_consistent(const struct wap_span *ol, const struct wap_span *fl, size_t k)
{
	const char *op, *fp;
	size_t oi = common_indent(ol, k, &op), fi = common_indent(fl, k, &fp);

	for (size_t j = 0; j < k; j++) {
		struct wap_span a = ol[j], b = fl[j];
		if (blank(a) || blank(b)) {
			if (blank(a) != blank(b))
				return false;
			continue;
		}
		a.p += oi, a.len -= oi;
		b.p += fi, b.len -= fi;
		if (!span_eq(rstrip(a), rstrip(b)))
			return false;
	}
	return true;
}

/* NEW re-indented for the place FL the old lines OL matched. */
static char *reindent(const char *new, size_t newlen, const struct wap_span *ol,
		      const struct wap_span *fl, size_t k, bool consistent, size_t *outlen)
{
	struct wap_span *nl = NULL;
	long nn = split_lines(new, newlen, &nl);
	struct wap_sb sb = WAP_SB_INIT;
	const char *op, *fp;
	size_t oi, fi;

	if (nn < 0)
		return NULL;
	oi = common_indent(ol, k, &op);
	fi = common_indent(fl, k, &fp);
	for (long j = 0; j < nn; j++) {
		struct wap_span l = nl[j];
		if (j)
			wap_sb_addc(&sb, '\n');
		if (blank(l)) {
			wap_sb_add(&sb, l.p, l.len);
		} else if (!consistent && (size_t)nn == k) {
			/* line by line: swap this line's old indent for the file's */
			size_t a = lead_len(ol[j]), b = lead_len(fl[j]);
			size_t c = lead_len(l);
			wap_sb_add(&sb, fl[j].p, b);
			if (c >= a && !memcmp(l.p, ol[j].p, a))
				wap_sb_add(&sb, l.p + a, l.len - a);
			else
				wap_sb_add(&sb, l.p + c, l.len - c);
		} else if (l.len >= oi && !memcmp(l.p, op, oi)) {
			wap_sb_add(&sb, fp, fi);
			wap_sb_add(&sb, l.p + oi, l.len - oi);
		} else {
			wap_sb_add(&sb, l.p, l.len);
		}
	}
	if (newlen && new[newlen - 1] == '\n')
		wap_sb_addc(&sb, '\n');
	free(nl);
	if (sb.oom || !wap_sb_grow(&sb, 1)) {
		wap_sb_release(&sb);
		return NULL;
	}
	sb.buf[sb.len] = 0;
	*outlen = sb.len;
	return wap_sb_detach(&sb);
}

/* Line-window strategies: TRAILING (rstrip) or WHITESPACE (trim). */
static int find_lines(const char *text, size_t len, const char *old, size_t oldlen,
		      const char *new, size_t newlen, enum wap_strategy st, struct mvec *mv)
{
	struct wap_span *fl = NULL, *ol = NULL;
	long n = split_lines(text, len, &fl), k;
	bool old_nl = oldlen && old[oldlen - 1] == '\n';
	int rc = -1;

	if (n < 0)
		return -1;
	k = split_lines(old, oldlen, &ol);
	if (k < 0)
		goto out;
	rc = 0;
	if (k == 0 || k > n)
		goto out;
	{
		bool allblank = true;
		for (long j = 0; j < k; j++)
			allblank = allblank && blank(ol[j]);
		if (allblank)
			goto out;
	}
	for (long i = 0; i + k <= n; i++) {
		bool ok = true;
		size_t s, e;
		for (long j = 0; j < k && ok; j++) {
			if (st == WAP_S_TRAILING)
				ok = span_eq(rstrip(fl[i + j]), rstrip(ol[j]));
			else
				ok = span_eq(trim(fl[i + j]), trim(ol[j]));
		}
		if (!ok)
			continue;
		s = fl[i].p - text;
		e = fl[i + k - 1].p + fl[i + k - 1].len - text;
		if (old_nl && e < len && text[e] == '\n')
			e++;
		if (mpush(mv, s, e)) {
			rc = -1;
			goto out;
		}
		if (st == WAP_S_WHITESPACE) {
			struct match *m = &mv->v[mv->n - 1];
			m->consistent = indent_consistent(ol, fl + i, k);
			m->repl = reindent(new, newlen, ol, fl + i, k, m->consistent, &m->rlen);
			if (!m->repl || !mkeep(mv, m->rlen)) {
				rc = -1;
				goto out;
			}
		}
	}
out:
	free(fl);
	free(ol);
	return rc;
}

/* Does S hold any character the fold changes? */
static bool foldable(const char *s, size_t len)
{
	size_t fl;
	char *f;
	bool r;

	if (!has_high(s, len))
		return false;
	f = fold_map(s, len, &fl, NULL);
	r = !f || fl != len || memcmp(f, s, len);
	free(f);
	return r;
}

static int find_unicode(const char *text, size_t len, const char *old, size_t oldlen,
			const char *new, size_t newlen, struct mvec *mv)
{
	size_t ftl, fol, *map = NULL;
	char *ft = NULL, *fo = NULL;
	struct mvec tmp = { 0 };
	int rc = -1;

	if (!has_high(text, len) && !has_high(old, oldlen))
		return 0;
	ft = fold_map(text, len, &ftl, &map);
	fo = fold_map(old, oldlen, &fol, NULL);
	if (!ft || !fo || find_all(ft, ftl, fo, fol, &tmp))
		goto out;
	for (size_t i = 0; i < tmp.n; i++) {
		size_t ns = tmp.v[i].s, ne = tmp.v[i].e;
		/* a match must start and end on whole characters */
		if ((ns > 0 && map[ns] == map[ns - 1]) || (ne < ftl && map[ne] == map[ne - 1]))
			continue;
		if (mpush(mv, map[ns], map[ne]))
			goto out;
		/* the file has plain ASCII there and the model typed typographic
		 * punctuation: write the new text in the file's style too */
		if (!foldable(text + map[ns], map[ne] - map[ns]) && foldable(new, newlen)) {
			struct match *m = &mv->v[mv->n - 1];
			m->repl = fold_map(new, newlen, &m->rlen, NULL);
			if (!m->repl || !mkeep(mv, m->rlen))
				goto out;
		}
	}
	rc = 0;
out:
	mclear(&tmp);
	free(ft);
	free(fo);
	free(map);
	return rc;
}

/* Levenshtein distance of two short strings (each cut at 200 bytes). */
static size_t lev(struct wap_span a, struct wap_span b)
{
	size_t row[201], n = a.len > 200 ? 200 : a.len, m = b.len > 200 ? 200 : b.len;

	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	for (size_t i = 1; i <= n; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t up = row[j], best = diag + (a.p[i - 1] != b.p[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[m];
}

/* Where the old text was probably meant: the file line closest to old's
 * first non-blank line, for the NO_MATCH details (a hint, never applied). */
static json_t *closest_hint(const char *text, size_t len, const char *old, size_t oldlen)
{
	struct wap_span *fl = NULL, *ol = NULL, want = { NULL, 0 };
	long n = split_lines(text, len, &fl), k = split_lines(old, oldlen, &ol);
	size_t best = (size_t)-1, bestline = 0;
	json_t *j = NULL;

	for (long i = 0; i < k && !want.len; i++)
		want = trim(ol[i]);
	if (n > 0 && want.len) {
		for (long i = 0; i < n && i < 20000; i++) {
			struct wap_span t = trim(fl[i]);
			size_t d;
			size_t wl = want.len > 200 ? 200 : want.len, tl = t.len > 200 ? 200 : t.len;
			size_t diff = wl > tl ? wl - tl : tl - wl;
			/* the distance is at least the length difference */
			if (!t.len || diff * 10 > wl * 4 || diff >= best)
				continue;
			d = lev(want, t);
			if (d < best) {
				best = d;
				bestline = (size_t)i;
			}
		}
		if (best != (size_t)-1 && best * 10 <= (want.len > 200 ? 200 : want.len) * 4) {
			struct wap_span t = fl[bestline];
			size_t cut = t.len > 300 ? wap_text_utf8_cut(t.p, t.len, 300) : t.len;
			if (wap_text_utf8_valid(t.p, cut, NULL))
				j = json_pack("{s:I, s:s%}", "closestLine", (json_int_t)bestline + 1,
					      "closestText", t.p, cut);
		}
	}
	free(fl);
	free(ol);
	return j;
}

/* line number (1-based) of byte OFF */
static size_t line_of(const char *text, size_t off)
{
	size_t n = 1;
	for (const char *p = text; (p = memchr(p, '\n', text + off - p)); p++)
		n++;
	return n;
}

static void multiple_error(const char *text, const struct mvec *mv, enum wap_strategy st,
			   int editno, struct wap_err *err)
{
	struct wap_sb sb = WAP_SB_INIT;
	json_t *lines = json_array();
	size_t shown = mv->n < 20 ? mv->n : 20;

	for (size_t i = 0; i < shown; i++) {
		size_t l = line_of(text, mv->v[i].s);
		wap_sb_addf(&sb, "%s%zu", i ? ", " : "", l);
		json_array_append_new(lines, json_integer((json_int_t)l));
	}
	if (shown < mv->n)
		wap_sb_addf(&sb, " and %zu more", mv->n - shown);
	wap_err_set(err, WAP_E_MULTIPLE,
		    "Found multiple matches for oldString. Provide more surrounding lines in "
		    "oldString to identify the correct match, or set replace_all "
		    "(--replace-all) to change every occurrence. %zu matches%s%s%s at lines %s%s",
		    mv->n, st != WAP_S_EXACT ? " (" : "", st != WAP_S_EXACT ? wap_strategy_name(st) : "",
		    st != WAP_S_EXACT ? " fallback)" : "", sb.buf ? sb.buf : "",
		    editno > 0 ? "" : ".");
	if (editno > 0 && err) {
		size_t ml = strlen(err->msg);
		snprintf(err->msg + ml, sizeof(err->msg) - ml, " (edit %d).", editno);
	}
	wap_err_details(err, json_pack("{s:o, s:I, s:s}", "lines", lines, "count",
				       (json_int_t)mv->n, "strategy", wap_strategy_name(st)));
	if (editno > 0 && err && err->details)
		json_object_set_new(err->details, "edit", json_integer(editno));
	wap_sb_release(&sb);
}

/* wap_edit_replace with a cap: a result of more than MAX bytes (0: no
 * cap) is SIZE_LIMIT_EXCEEDED, found before it is built (PATH names the
 * file in the message) */
static int replace_max(const char *text, size_t len, const char *old, size_t oldlen,
		       const char *new, size_t newlen, bool all, bool exact, int editno,
		       size_t max, const char *path, char **out, size_t *outlen, size_t *count,
		       enum wap_strategy *used, struct wap_err *err)
{
	struct mvec mv = { .max = max };
	enum wap_strategy st = WAP_S_EXACT;
	char *unew = NULL;
	size_t unewlen = 0;
	struct wap_sb sb = WAP_SB_INIT;
	size_t last = 0, done = 0;
	int rc = -1;

	*out = NULL;
	if (!oldlen)
		return wap_err_set(err, WAP_E_INVALID, "oldString must not be empty");
	for (st = WAP_S_EXACT; st <= WAP_S_TRIMMED; st++) {
		int r = 0;
		if (st != WAP_S_EXACT && exact)
			break;
		switch (st) {
		case WAP_S_EXACT:
			r = find_all(text, len, old, oldlen, &mv);
			break;
		case WAP_S_TRAILING:
		case WAP_S_WHITESPACE:
			r = find_lines(text, len, old, oldlen, new, newlen, st, &mv);
			break;
		case WAP_S_INDENT:
			continue;	/* decided with WHITESPACE, see below */
		case WAP_S_UNICODE:
			r = find_unicode(text, len, old, oldlen, new, newlen, &mv);
			break;
		case WAP_S_ESCAPES: {
			size_t ul;
			bool ch;
			char *u = unescape(old, oldlen, &ul, &ch);
			if (!u) {
				r = -1;
				break;
			}
			if (ch && ul)
				r = find_all(text, len, u, ul, &mv);
			free(u);
			if (!r && mv.n) {
				unew = unescape(new, newlen, &unewlen, &ch);
				if (!unew)
					r = -1;
			}
			break;
		}
		case WAP_S_TRIMMED: {
			struct wap_span to = trim_all(old, oldlen), tn = trim_all(new, newlen);
			if (to.len && to.len != oldlen)
				r = find_all(text, len, to.p, to.len, &mv);
			if (!r && mv.n) {
				unew = malloc(tn.len + 1);
				if (!unew) {
					r = -1;
					break;
				}
				memcpy(unew, tn.p, tn.len);
				unew[tn.len] = 0;
				unewlen = tn.len;
			}
			break;
		}
		default:
			break;
		}
		if (r) {
			if (mv.over)
				too_large(err, path, max);
			else
				wap_err_oom(err);
			goto out;
		}
		if (mv.n)
			break;
	}
	if (!mv.n) {
		if (editno > 0)
			wap_err_set(err, WAP_E_NO_MATCH, "oldString not found in content (edit %d)", editno);
		else
			wap_err_set(err, WAP_E_NO_MATCH, "oldString not found in content");
		if (err) {
			json_t *d = closest_hint(text, len, old, oldlen);
			if (editno > 0) {
				if (!d)
					d = json_object();
				json_object_set_new(d, "edit", json_integer(editno));
			}
			if (d)
				wap_err_details(err, d);
		}
		goto out;
	}
	if (st == WAP_S_WHITESPACE) {
		bool cons = true;
		for (size_t i = 0; i < mv.n; i++)
			cons = cons && mv.v[i].consistent;
		if (cons)
			st = WAP_S_INDENT;
	}
	if (mv.n > 1 && !all) {
		multiple_error(text, &mv, st, editno, err);
		goto out;
	}
	for (size_t i = 0, grown = len; i < mv.n; i++) {
		struct match *m = &mv.v[i];
		if (m->s < last)
			continue;	/* overlaps the previous one */
		/* the result's size so far, before a byte of it is built */
		grown = grown - (m->e - m->s) + (m->repl ? m->rlen : unew ? unewlen : newlen);
		if (max && grown > max) {
			too_large(err, path, max);
			goto out;
		}
		last = m->e;
	}
	last = 0;
	for (size_t i = 0; i < mv.n; i++) {
		struct match *m = &mv.v[i];
		if (m->s < last)
			continue;	/* overlaps the previous one */
		wap_sb_add(&sb, text + last, m->s - last);
		if (m->repl)
			wap_sb_add(&sb, m->repl, m->rlen);
		else if (unew)
			wap_sb_add(&sb, unew, unewlen);
		else
			wap_sb_add(&sb, new, newlen);
		last = m->e;
		done++;
	}
	wap_sb_add(&sb, text + last, len - last);
	if (sb.oom || !wap_sb_grow(&sb, 1)) {
		wap_err_oom(err);
		goto out;
	}
	sb.buf[sb.len] = 0;
	*outlen = sb.len;
	*out = wap_sb_detach(&sb);
	if (count)
		*count = done;
	if (used)
		*used = st;
	rc = 0;
out:
	wap_sb_release(&sb);
	mclear(&mv);
	free(unew);
	return rc;
}

int wap_edit_replace(const char *text, size_t len, const char *old, size_t oldlen,
		     const char *new, size_t newlen, bool all, bool exact, int editno,
		     char **out, size_t *outlen, size_t *count, enum wap_strategy *used,
		     struct wap_err *err)
{
	return replace_max(text, len, old, oldlen, new, newlen, all, exact, editno, 0, NULL,
			   out, outlen, count, used, err);
}

/* ---- OpenCode's replacer chain (--match opencode) ----
 *
 * The rules of OpenCode's edit tool, so that an agent used to it gets the
 * same file: replacers tried in OpenCode's order (exact, line_trimmed,
 * block_anchor, whitespace_normalized, indentation_flexible,
 * escape_normalized, trimmed_boundary, context_aware) each propose
 * candidate texts; the first candidate that occurs in the text exactly once
 * (with replace_all: at all) is replaced by NEW as given, never re-indented.
 * A candidate that occurs several times is passed over for the next one.
 * Whitespace is JavaScript's (\s, String.trim: Unicode spaces too) and
 * lengths in the block-anchor similarity count UTF-16 units, as OpenCode
 * counts them.  Deliberate differences: an empty candidate never matches
 * (OpenCode would put NEW at the start of the text, or with replaceAll
 * between every two characters), and NEW is inserted literally where
 * OpenCode's replaceAll reads "$&", "$$", "$`" and "$'" in it. */

struct oc {
	const char *t, *new;
	size_t len, newlen;
	bool all, found;
	struct wap_span *L, *F;		/* lines of the text and of old, split("\n") */
	size_t nl, nf;
	const char *find;
	size_t findlen;
	char *out;
	size_t outlen, count;
	enum wap_strategy st;
	struct mvec mv;			/* the places of the first candidate found */
	enum wap_strategy mst;		/* several times, for the error */
	size_t max;			/* the largest result (0: no cap) */
	bool over;			/* the result would pass it */
	/* the call's token (its cancel, its time limit): the replacers are
	 * quadratic and worse over a big file and a long old text (3,000
	 * lines of old over 60,000: past 5 minutes), so each polls it a line */
	const struct wap_cancel *cancel;
	bool stopped;
};

/* Stop?  (the caller returns -1, and the call fails as cancelled) */
static bool oc_stop(struct oc *c)
{
	return (c->stopped = c->stopped || wap_cancel_is_set(c->cancel));
}

/* the byte length of a JavaScript whitespace character at P, or 0 */
static size_t oc_ws(const char *s, const char *e)
{
	const unsigned char *p = (const unsigned char *)s, *end = (const unsigned char *)e;
	uint32_t c;

	if (p >= end)
		return 0;
	if (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		return 1;
	if (end - p >= 2 && p[0] == 0xc2 && p[1] == 0xa0)
		return 2;
	if (end - p < 3 || (p[0] & 0xf0) != 0xe0 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
		return 0;
	c = (uint32_t)(p[0] & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
	return c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
	       c == 0x202f || c == 0x205f || c == 0x3000 || c == 0xfeff ? 3 : 0;
}

/* String.prototype.trim */
static struct wap_span oc_trim(struct wap_span s)
{
	const char *p = s.p, *end = s.p + s.len, *start, *last;
	size_t w;

	while ((w = oc_ws(p, end)))
		p += w;
	start = last = p;
	while (p < end) {
		if ((w = oc_ws(p, end))) {
			p += w;
		} else {
			p++;
			last = p;
		}
	}
	return (struct wap_span){ start, (size_t)(last - start) };
}

static bool oc_eq(struct wap_span a, struct wap_span b)
{
	return a.len == b.len && (!a.len || !memcmp(a.p, b.p, a.len));
}

static bool oc_teq(struct wap_span a, struct wap_span b)
{
	return oc_eq(oc_trim(a), oc_trim(b));
}

/* split("\n"): N newlines give N + 1 lines */
static long oc_lines(const char *t, size_t len, struct wap_span **out)
{
	return wap_lines(t, len, WAP_LINES_JS, out);
}

/* lines I..J (inclusive) of the text as one span */
static struct wap_span oc_block(const struct oc *c, size_t i, size_t j)
{
	return (struct wap_span){ c->L[i].p, (size_t)(c->L[j].p + c->L[j].len - c->L[i].p) };
}

/* Try candidate S: 1 done (c->out set), 0 go on, -1 out of memory. */
static int oc_try(struct oc *c, struct wap_span s, enum wap_strategy st)
{
	const char *end = c->t + c->len, *at, *q;
	struct wap_sb sb = WAP_SB_INIT;
	size_t n = 0;

	if (!s.len || !(at = memmem(c->t, c->len, s.p, s.len)))
		return 0;
	if (!c->all && memmem(at + 1, end - at - 1, s.p, s.len)) {
		/* several places: the next candidate */
		if (!c->found) {
			c->mst = st;
			if (find_all(c->t, c->len, s.p, s.len, &c->mv))
				return -1;
		}
		c->found = true;
		return 0;
	}
	c->found = true;
	if (c->max && c->newlen > s.len) {
		/* the result's size, before a byte of it is built */
		size_t grown = c->len;
		for (q = c->t; (at = memmem(q, end - q, s.p, s.len)); q = at + s.len) {
			grown += c->newlen - s.len;
			if (grown > c->max) {
				c->over = true;
				return -1;
			}
			if (!c->all)
				break;
		}
	}
	for (q = c->t; (at = memmem(q, end - q, s.p, s.len)); q = at + s.len) {
		wap_sb_add(&sb, q, at - q);
		wap_sb_add(&sb, c->new, c->newlen);
		n++;
		if (!c->all) {
			q = at + s.len;
			break;
		}
	}
	wap_sb_add(&sb, q, end - q);
	if (sb.oom || !wap_sb_grow(&sb, 1)) {
		wap_sb_release(&sb);
		return -1;
	}
	sb.buf[sb.len] = 0;
	c->outlen = sb.len;
	c->out = wap_sb_detach(&sb);
	c->count = n;
	c->st = st;
	return 1;
}

#define OC_TRY(c, s, st)                                 \
	do {                                             \
		int r_ = oc_try((c), (s), (st));         \
		if (r_)                                  \
			return r_;                       \
	} while (0)

/* old's lines without a last empty one (old ending in a newline) */
static size_t oc_nf(const struct oc *c)
{
	return c->nf && !c->F[c->nf - 1].len ? c->nf - 1 : c->nf;
}

static int oc_line_trimmed(struct oc *c)
{
	size_t k = oc_nf(c);

	for (size_t i = 0; k && i + k <= c->nl; i++) {
		size_t j = 0;
		if (oc_stop(c))
			return -1;
		while (j < k && oc_teq(c->L[i + j], c->F[j]))
			j++;
		if (j == k)
			OC_TRY(c, oc_block(c, i, i + k - 1), WAP_S_OC_LINE_TRIMMED);
	}
	return 0;
}

/* UTF-16 units of S (invalid bytes count one each) */
static size_t oc_u16(struct wap_span s, uint16_t *v)
{
	const unsigned char *p = (const unsigned char *)s.p, *end = p + s.len;
	size_t n = 0;

	while (p < end) {
		uint32_t ch = *p;
		int k = ch >= 0xf0 ? 3 : ch >= 0xe0 ? 2 : ch >= 0xc0 ? 1 : 0;
		if (ch >= 0x80 && (ch < 0xc0 || end - p <= k)) {
			k = 0;
			ch = 0xfffd;
		} else if (k) {
			ch &= 0x3f >> k;
			for (int i = 1; i <= k; i++)
				ch = ch << 6 | (p[i] & 0x3f);
		}
		p += k + 1;
		if (ch >= 0x10000) {
			if (v) {
				v[n] = (uint16_t)(0xd800 + ((ch - 0x10000) >> 10));
				v[n + 1] = (uint16_t)(0xdc00 + ((ch - 0x10000) & 0x3ff));
			}
			n += 2;
		} else {
			if (v)
				v[n] = (uint16_t)ch;
			n++;
		}
	}
	return n;
}

/* 1 - levenshtein(a, b) / max length, in UTF-16 units; -1: no lengths
 * (both empty: OpenCode skips the line); -2 out of memory */
static double oc_similar(struct wap_span a, struct wap_span b)
{
	size_t la = oc_u16(a, NULL), lb = oc_u16(b, NULL), mx = la > lb ? la : lb;
	uint16_t *x, *y;
	size_t *row;
	double r;

	if (!mx)
		return -1;
	if (!la || !lb)
		return 0;
	/* a bound on the work one call may ask for (OpenCode has none): two
	 * lines too long to compare count as unlike */
	if ((double)la * (double)lb > 16e6)
		return 0;
	x = malloc(la * sizeof(*x));
	y = malloc(lb * sizeof(*y));
	row = malloc((lb + 1) * sizeof(*row));
	if (!x || !y || !row) {
		free(x), free(y), free(row);
		return -2;
	}
	oc_u16(a, x);
	oc_u16(b, y);
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], v = diag + (x[i - 1] != y[j - 1]);
			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	r = 1.0 - (double)row[lb] / (double)mx;
	free(x), free(y), free(row);
	return r;
}

/* first and last lines of old anchor a block of at least three lines;
 * one such block is taken whatever its middle (OpenCode's threshold for a
 * single candidate is 0), of several the one whose middle lines are most
 * alike, if at least 0.3 */
static int oc_block_anchor(struct oc *c)
{
	size_t k = oc_nf(c), n = 0, bi = 0, bj = 0;
	double best = -1;
	struct wap_span first, last;

	if (c->nf < 3)
		return 0;
	first = oc_trim(c->F[0]);
	last = oc_trim(c->F[k - 1]);
	for (size_t i = 0; i < c->nl; i++) {
		size_t j;
		if (oc_stop(c))
			return -1;
		if (!oc_eq(oc_trim(c->L[i]), first))
			continue;
		for (j = i + 2; j < c->nl && !oc_eq(oc_trim(c->L[j]), last); j++)
			;
		if (j >= c->nl)
			continue;
		if (!n++)
			bi = i, bj = j;
	}
	if (!n)
		return 0;
	if (n == 1)
		return oc_try(c, oc_block(c, bi, bj), WAP_S_OC_BLOCK_ANCHOR);
	for (size_t i = 0; i < c->nl; i++) {
		size_t j, size, check;
		double sim = 0;
		if (oc_stop(c))
			return -1;
		if (!oc_eq(oc_trim(c->L[i]), first))
			continue;
		for (j = i + 2; j < c->nl && !oc_eq(oc_trim(c->L[j]), last); j++)
			;
		if (j >= c->nl)
			continue;
		size = j - i + 1;
		check = (k < size ? k : size) - 2;
		if (check > 0) {
			for (size_t m = 1; m < k - 1 && m < size - 1; m++) {
				double s = oc_similar(oc_trim(c->L[i + m]), oc_trim(c->F[m]));
				if (s == -2)
					return -1;
				if (s >= 0)
					sim += s;
			}
			sim /= (double)check;
		} else {
			sim = 1.0;
		}
		if (sim > best)
			best = sim, bi = i, bj = j;
	}
	if (best >= 0.3)
		return oc_try(c, oc_block(c, bi, bj), WAP_S_OC_BLOCK_ANCHOR);
	return 0;
}

/* text.replace(/\s+/g, " ").trim() into SB; -1 out of memory */
static int oc_collapse(struct wap_span s, struct wap_sb *sb)
{
	const char *p = s.p, *end = s.p + s.len;
	bool gap = false;

	sb->len = 0;
	while (p < end) {
		size_t w = oc_ws(p, end);
		if (w) {
			gap = true;
			p += w;
			continue;
		}
		if (gap && sb->len)
			wap_sb_addc(sb, ' ');
		gap = false;
		wap_sb_addc(sb, *p++);
	}
	return sb->oom ? -1 : 0;
}

static bool oc_sbeq(const struct wap_sb *a, const struct wap_sb *b)
{
	return a->len == b->len && (!a->len || !memcmp(a->buf, b->buf, a->len));
}

/* LINE.match(the words of old joined by \s+): the leftmost match */
static bool oc_words(struct wap_span line, struct wap_span words, struct wap_span *m)
{
	const char *end = line.p + line.len, *wend = words.p + words.len;

	for (const char *s = line.p; s <= end; s++) {
		const char *p = s, *w = words.p;
		bool okay = true;
		while (okay && w < wend) {
			size_t ws = 0, l;
			const char *we = w;
			while (we < wend && !oc_ws(we, wend))
				we++;
			l = we - w;
			if (w != words.p) {
				size_t k;
				while ((k = oc_ws(p, end)))
					p += k, ws++;
				okay = ws > 0;
			}
			if (okay && ((size_t)(end - p) < l || memcmp(p, w, l)))
				okay = false;
			p += l;
			w = we;
			while (w < wend && (l = oc_ws(w, wend)))
				w += l;
		}
		if (okay) {
			*m = (struct wap_span){ s, (size_t)(p - s) };
			return true;
		}
	}
	return false;
}

/* The scan the normalizing strategies share: each block of K lines
 * whose FORM (collapsed, dedented, unescaped) equals WANT is tried as
 * strategy ST.  1 done, 0 none, -1 out of memory. */
static int oc_scan_blocks(struct oc *c, size_t k, int (*form)(struct wap_span, struct wap_sb *),
			  const struct wap_sb *want, enum wap_strategy st)
{
	struct wap_sb sb = WAP_SB_INIT;
	int rc = 0;

	for (size_t i = 0; !rc && i + k <= c->nl; i++) {
		struct wap_span b = oc_block(c, i, i + k - 1);
		if (oc_stop(c) || form(b, &sb))
			rc = -1;
		else if (oc_sbeq(&sb, want))
			rc = oc_try(c, b, st);
	}
	wap_sb_release(&sb);
	return rc;
}

static int oc_ws_normalized(struct oc *c)
{
	struct wap_sb nf = WAP_SB_INIT, nl = WAP_SB_INIT;
	struct wap_span tf = oc_trim((struct wap_span){ c->find, c->findlen }), m;
	int rc = 0;

	oc_collapse((struct wap_span){ c->find, c->findlen }, &nf);
	for (size_t i = 0; !rc && i < c->nl; i++) {
		oc_collapse(c->L[i], &nl);
		if (nl.oom || nf.oom || oc_stop(c))
			rc = -1;
		else if (oc_sbeq(&nl, &nf))
			rc = oc_try(c, c->L[i], WAP_S_OC_WS_NORMALIZED);
		else if ((!nf.len || (nl.len && memmem(nl.buf, nl.len, nf.buf, nf.len))) &&
			 oc_words(c->L[i], tf, &m))
			rc = oc_try(c, m, WAP_S_OC_WS_NORMALIZED);
	}
	if (!rc && c->nf > 1)
		rc = oc_scan_blocks(c, c->nf, oc_collapse, &nf, WAP_S_OC_WS_NORMALIZED);
	wap_sb_release(&nf);
	wap_sb_release(&nl);
	return rc;
}

/* OpenCode's removeIndentation: the smallest indent of the non-blank
 * lines taken off each of them */
static int oc_dedent(struct wap_span s, struct wap_sb *sb)
{
	struct wap_span *v;
	long n = oc_lines(s.p, s.len, &v);
	size_t min = (size_t)-1;

	if (n < 0)
		return -1;
	sb->len = 0;
	for (long i = 0; i < n; i++) {
		const char *p = v[i].p, *end = p + v[i].len;
		size_t k = 0, w;
		if (!oc_trim(v[i]).len)
			continue;
		while ((w = oc_ws(p, end)))
			p += w, k++;
		if (k < min)
			min = k;
	}
	if (min == (size_t)-1) {
		wap_sb_add(sb, s.p, s.len);
	} else {
		for (long i = 0; i < n; i++) {
			const char *p = v[i].p, *end = p + v[i].len;
			if (i)
				wap_sb_addc(sb, '\n');
			if (oc_trim(v[i]).len)
				for (size_t k = 0; k < min; k++)
					p += oc_ws(p, end);
			wap_sb_add(sb, p, end - p);
		}
	}
	free(v);
	return sb->oom ? -1 : 0;
}

static int oc_indent_flexible(struct oc *c)
{
	struct wap_sb nf = WAP_SB_INIT;
	int rc = oc_dedent((struct wap_span){ c->find, c->findlen }, &nf);

	if (!rc)
		rc = oc_scan_blocks(c, c->nf, oc_dedent, &nf, WAP_S_OC_INDENT_FLEXIBLE);
	wap_sb_release(&nf);
	return rc;
}

/* OpenCode's unescapeString: \n \t \r \' \" \` \\ \$ and a backslash
 * before a newline; -1 out of memory */
static int oc_unescape(struct wap_span s, struct wap_sb *sb)
{
	static const char from[] = "ntr'\"`\\\n$", to[] = "\n\t\r'\"`\\\n$";

	sb->len = 0;
	for (size_t i = 0; i < s.len; i++) {
		const char *k;
		if (s.p[i] == '\\' && i + 1 < s.len && (k = memchr(from, s.p[i + 1], sizeof(from) - 1))) {
			wap_sb_addc(sb, to[k - from]);
			i++;
		} else {
			wap_sb_addc(sb, s.p[i]);
		}
	}
	return sb->oom ? -1 : 0;
}

static int oc_escape_normalized(struct oc *c)
{
	struct wap_sb uf = WAP_SB_INIT;
	size_t k = 1;
	int rc = 0;

	oc_unescape((struct wap_span){ c->find, c->findlen }, &uf);
	if (uf.oom || !wap_sb_grow(&uf, 1)) {
		wap_sb_release(&uf);
		return -1;
	}
	if (uf.len && memmem(c->t, c->len, uf.buf, uf.len))
		rc = oc_try(c, (struct wap_span){ uf.buf, uf.len }, WAP_S_OC_ESCAPE_NORMALIZED);
	for (size_t i = 0; i < uf.len; i++)
		k += uf.buf[i] == '\n';
	if (!rc)
		rc = oc_scan_blocks(c, k, oc_unescape, &uf, WAP_S_OC_ESCAPE_NORMALIZED);
	wap_sb_release(&uf);
	return rc;
}

static int oc_trimmed_boundary(struct oc *c)
{
	struct wap_span tf = oc_trim((struct wap_span){ c->find, c->findlen });

	if (tf.len == c->findlen)
		return 0;
	if (tf.len && memmem(c->t, c->len, tf.p, tf.len))
		OC_TRY(c, tf, WAP_S_OC_TRIMMED_BOUNDARY);
	for (size_t i = 0; i + c->nf <= c->nl; i++) {
		struct wap_span b = oc_block(c, i, i + c->nf - 1);
		if (oc_eq(oc_trim(b), tf))
			OC_TRY(c, b, WAP_S_OC_TRIMMED_BOUNDARY);
	}
	return 0;
}

/* anchors as block_anchor, a block of old's length whose middle lines are
 * at least half the same (trimmed) */
static int oc_context_aware(struct oc *c)
{
	size_t k = oc_nf(c);
	struct wap_span first, last;

	if (c->nf < 3)
		return 0;
	first = oc_trim(c->F[0]);
	last = oc_trim(c->F[k - 1]);
	for (size_t i = 0; i < c->nl; i++) {
		size_t j, same = 0, total = 0;
		if (oc_stop(c))
			return -1;
		if (!oc_eq(oc_trim(c->L[i]), first))
			continue;
		for (j = i + 2; j < c->nl && !oc_eq(oc_trim(c->L[j]), last); j++)
			;
		if (j >= c->nl || j - i + 1 != k)
			continue;
		for (size_t m = 1; m + 1 < k; m++) {
			struct wap_span b = oc_trim(c->L[i + m]), f = oc_trim(c->F[m]);
			if (b.len || f.len) {
				total++;
				same += oc_eq(b, f);
			}
		}
		if (!total || (double)same / (double)total >= 0.5)
			OC_TRY(c, oc_block(c, i, j), WAP_S_OC_CONTEXT_AWARE);
	}
	return 0;
}

/* wap_edit_replace_opencode with a cap on the result, as replace_max */
static int replace_opencode_max(const char *text, size_t len, const char *old, size_t oldlen,
				const char *new, size_t newlen, bool all, int editno, size_t max,
				const char *path, char **out, size_t *outlen, size_t *count,
				enum wap_strategy *used, struct wap_err *err)
{
	struct oc c = { .t = text, .len = len, .new = new, .newlen = newlen, .all = all,
			.find = old, .findlen = oldlen, .max = max,
			.cancel = wap_cancel_current() };
	long nl, nf;
	int r = 0;

	*out = NULL;
	if (!oldlen)
		return wap_err_set(err, WAP_E_INVALID, "oldString must not be empty");
	if ((nl = oc_lines(text, len, &c.L)) < 0 || (nf = oc_lines(old, oldlen, &c.F)) < 0) {
		free(c.L);
		return wap_err_oom(err);
	}
	c.nl = (size_t)nl;
	c.nf = (size_t)nf;
	/* OpenCode's MultiOccurrenceReplacer, last, proposes old itself again:
	 * it can change nothing the exact try did not */
	r = oc_try(&c, (struct wap_span){ old, oldlen }, WAP_S_EXACT);
	if (!r)
		r = oc_line_trimmed(&c);
	if (!r)
		r = oc_block_anchor(&c);
	if (!r)
		r = oc_ws_normalized(&c);
	if (!r)
		r = oc_indent_flexible(&c);
	if (!r)
		r = oc_escape_normalized(&c);
	if (!r)
		r = oc_trimmed_boundary(&c);
	if (!r)
		r = oc_context_aware(&c);
	free(c.L);
	free(c.F);
	if (r < 0) {
		mclear(&c.mv);
		if (c.stopped)
			return wap_cancel_err(err);
		return c.over ? too_large(err, path, max) : wap_err_oom(err);
	}
	if (!r) {
		if (c.found)
			multiple_error(text, &c.mv, c.mst, editno, err);
		else if (editno > 0)
			wap_err_set(err, WAP_E_NO_MATCH, "oldString not found in content (edit %d)", editno);
		else
			wap_err_set(err, WAP_E_NO_MATCH, "oldString not found in content");
		mclear(&c.mv);
		return -1;
	}
	mclear(&c.mv);
	*out = c.out;
	*outlen = c.outlen;
	if (count)
		*count = c.count;
	if (used)
		*used = c.st;
	return 0;
}

int wap_edit_replace_opencode(const char *text, size_t len, const char *old, size_t oldlen,
			      const char *new, size_t newlen, bool all, int editno,
			      char **out, size_t *outlen, size_t *count, enum wap_strategy *used,
			      struct wap_err *err)
{
	return replace_opencode_max(text, len, old, oldlen, new, newlen, all, editno, 0, NULL,
				    out, outlen, count, used, err);
}

/* ---- seeking lines (patches) ---- */

static bool line_eq(struct wap_span a, struct wap_span b, int level)
{
	switch (level) {
	case 0: return span_eq(a, b);
	case 1: return span_eq(rstrip(a), rstrip(b));
	default: return span_eq(trim(a), trim(b));
	}
}

static struct wap_span *fold_lines(const struct wap_span *l, size_t n)
{
	struct wap_span *v = calloc(n ? n : 1, sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t fl;
		char *f = fold_map(l[i].p, l[i].len, &fl, NULL);
		if (!f) {
			for (size_t j = 0; j < i; j++)
				free((char *)v[j].p);
			free(v);
			return NULL;
		}
		v[i].p = f;
		v[i].len = fl;
	}
	return v;
}

static void free_lines(struct wap_span *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free((char *)v[i].p);
	free(v);
}

long wap_seek_lines(const struct wap_span *lines, size_t n, const struct wap_span *pat,
		    size_t k, size_t start, bool eof, long hint, int *level)
{
	long found = -1;

	if (level)
		*level = 0;
	if (k == 0 || k > n || start > n - k)
		return -1;
	for (int lv = 0; lv < 4 && found < 0; lv++) {
		const struct wap_span *L = lines, *P = pat;
		struct wap_span *fl = NULL, *fp = NULL;
		size_t from = start;
		long bestd = -1;

		if (lv == 3) {
			fl = fold_lines(lines, n);
			fp = fold_lines(pat, k);
			if (!fl || !fp) {
				free_lines(fl, n);
				free_lines(fp, k);
				return -1;
			}
			L = fl, P = fp;
		}
		if (hint < 0 && eof)
			from = n - k;
		for (size_t i = from; i + k <= n; i++) {
			bool ok = true;
			for (size_t j = 0; j < k && ok; j++)
				ok = line_eq(L[i + j], P[j], lv == 3 ? 2 : lv);
			if (!ok)
				continue;
			if (hint < 0) {
				found = (long)i;
				break;
			}
			long d = (long)i - hint;
			if (d < 0)
				d = -d;
			if (bestd < 0 || d < bestd) {
				bestd = d;
				found = (long)i;
			}
		}
		if (found >= 0 && level)
			*level = lv;
		free_lines(fl, n);
		free_lines(fp, k);
	}
	return found;
}

/* ---- LSP positions ---- */

long wap_lsp_offset(const char *buf, size_t len, long line, long character,
		    struct wap_err *err)
{
	size_t p = 0, end;
	long u = 0;

	if (line < 0 || character < 0)
		return wap_err_set(err, WAP_E_INVALID, "position line and character must be >= 0");
	for (long l = 0; l < line; l++) {
		while (p < len && buf[p] != '\n' && buf[p] != '\r')
			p++;
		if (p >= len)
			return (long)len;	/* past the last line: the end */
		if (buf[p] == '\r' && p + 1 < len && buf[p + 1] == '\n')
			p++;
		p++;
	}
	end = p;
	while (end < len && buf[end] != '\n' && buf[end] != '\r')
		end++;
	while (p < end && u < character) {
		unsigned char c = buf[p];
		size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		if (!n || p + n > end || !wap_text_utf8_valid(buf + p, n, NULL))
			return wap_err_set(err, WAP_E_INVALID,
					   "invalid UTF-8 at byte %zu: positions need UTF-8 text", p);
		if (n == 4 && u + 2 > character)
			return wap_err_set(err, WAP_E_INVALID,
					   "position %ld:%ld is inside a UTF-16 surrogate pair",
					   line, character);
		u += n == 4 ? 2 : 1;
		p += n;
	}
	return (long)p;
}

/* ---- the spec ---- */

static const char *jstr(const json_t *o, const char *const *keys, size_t *len)
{
	for (; *keys; keys++) {
		json_t *v = json_object_get(o, *keys);
		if (json_is_string(v)) {
			*len = json_string_length(v);
			return json_string_value(v);
		}
	}
	return NULL;
}

static const char *const k_old[] = { "old", "oldString", "old_string", NULL };
static const char *const k_new[] = { "new", "newString", "new_string", NULL };
static const char *const k_text[] = { "newText", "text", "new_text", NULL };

static int get_pos(const json_t *p, long *line, long *ch)
{
	json_t *l = json_object_get(p, "line"), *c = json_object_get(p, "character");

	if (!json_is_integer(l) || !json_is_integer(c) || json_integer_value(l) < 0 ||
	    json_integer_value(c) < 0)
		return -1;
	*line = (long)json_integer_value(l);
	*ch = (long)json_integer_value(c);
	return 0;
}

static int get_range(const json_t *te, long r[4])
{
	json_t *range = json_object_get(te, "range"), *pos = json_object_get(te, "position");

	if (range)
		return get_pos(json_object_get(range, "start"), &r[0], &r[1]) ||
		       get_pos(json_object_get(range, "end"), &r[2], &r[3]) ? -1 : 0;
	if (pos) {
		if (get_pos(pos, &r[0], &r[1]))
			return -1;
		r[2] = r[0], r[3] = r[1];
		return 0;
	}
	return -1;
}

int wap_edit_validate(const struct wap_edit_spec *s, struct wap_err *err)
{
	size_t i, n;
	json_t *e;

	switch (s->mode) {
	case WAP_EDIT_REPLACE:
		if (!s->old || !s->new)
			return wap_err_set(err, WAP_E_INVALID, "both old and new are required");
		if (s->oldlen == s->newlen && !memcmp(s->old, s->new, s->oldlen))
			return wap_err_set(err, WAP_E_INVALID, "oldString and newString must be different");
		return 0;
	case WAP_EDIT_MULTI:
		if (!json_is_array(s->list) || !json_array_size(s->list))
			return wap_err_set(err, WAP_E_INVALID,
					   "edits must be a non-empty array of {old, new, replace_all}");
		json_array_foreach(s->list, i, e) {
			size_t ol, nl;
			const char *o = jstr(e, k_old, &ol), *nw = jstr(e, k_new, &nl);
			json_t *ra = json_object_get(e, "replace_all");
			if (!ra)
				ra = json_object_get(e, "replaceAll");
			if (!json_is_object(e) || !o || !nw)
				return wap_err_set(err, WAP_E_INVALID,
						   "edit %zu: needs string fields old and new", i + 1);
			if (ra && !json_is_boolean(ra))
				return wap_err_set(err, WAP_E_INVALID,
						   "edit %zu: replace_all must be a boolean", i + 1);
			if (ol == nl && !memcmp(o, nw, ol))
				return wap_err_set(err, WAP_E_INVALID,
						   "edit %zu: oldString and newString must be different", i + 1);
		}
		return 0;
	case WAP_EDIT_OPS:
		if (!json_is_array(s->list) || !json_array_size(s->list))
			return wap_err_set(err, WAP_E_INVALID,
					   "ops must be a non-empty array of operations {type, ...}");
		json_array_foreach(s->list, i, e) {
			const char *t = json_string_value(json_object_get(e, "type"));
			const char *need[3] = { NULL, NULL, NULL };
			bool content = false;
			if (!t)
				return wap_err_set(err, WAP_E_INVALID,
						   "operation %zu: needs a type (replace, insert, delete, regexReplace)", i + 1);
			if (!strcmp(t, "replace"))
				need[0] = "startLine", need[1] = "endLine", content = true;
			else if (!strcmp(t, "insert"))
				need[0] = "afterLine", content = true;
			else if (!strcmp(t, "delete"))
				need[0] = "startLine", need[1] = "endLine";
			else if (!strcmp(t, "regexReplace")) {
				json_t *f = json_object_get(e, "flags");
				if (!json_is_string(json_object_get(e, "pattern")) ||
				    !json_is_string(json_object_get(e, "replacement")) ||
				    (f && !json_is_string(f)))
					return wap_err_set(err, WAP_E_INVALID,
							   "operation %zu (regexReplace): needs strings pattern and replacement (flags optional)", i + 1);
				continue;
			} else
				return wap_err_set(err, WAP_E_INVALID,
						   "operation %zu: unknown type '%s' (replace, insert, delete, regexReplace)", i + 1, t);
			for (int k = 0; need[k]; k++)
				if (!json_is_integer(json_object_get(e, need[k])))
					return wap_err_set(err, WAP_E_INVALID,
							   "operation %zu (%s): %s must be an integer", i + 1, t, need[k]);
			if (content && !json_is_string(json_object_get(e, "newContent")))
				return wap_err_set(err, WAP_E_INVALID,
						   "operation %zu (%s): newContent must be a string", i + 1, t);
		}
		return 0;
	case WAP_EDIT_POSITIONS:
		if (!json_is_array(s->list) || !json_array_size(s->list))
			return wap_err_set(err, WAP_E_INVALID,
					   "text_edits must be a non-empty array of {range, newText}");
		n = json_array_size(s->list);
		json_array_foreach(s->list, i, e) {
			long r[4];
			size_t tl;
			if (!json_is_object(e) || get_range(e, r))
				return wap_err_set(err, WAP_E_INVALID,
						   "text edit %zu: needs range {start:{line,character}, end:{line,character}} with integers >= 0", i + 1);
			for (const char *const *k = k_text; *k; k++) {
				json_t *t = json_object_get(e, *k);
				if (t && !json_is_string(t))
					return wap_err_set(err, WAP_E_INVALID,
							   "text edit %zu: %s must be a string", i + 1, *k);
			}
			/* a range without text deletes it; a position needs text */
			if (!jstr(e, k_text, &tl) && json_object_get(e, "position"))
				return wap_err_set(err, WAP_E_INVALID, "text edit %zu: needs text", i + 1);
		}
		(void)n;
		return 0;
	}
	return wap_err_set(err, WAP_E_INVALID, "unknown edit mode");
}

bool wap_edit_may_create(const struct wap_edit_spec *s)
{
	if (s->mode == WAP_EDIT_REPLACE)
		return s->old && s->oldlen == 0;
	if (s->mode == WAP_EDIT_MULTI) {
		size_t l = 1;
		json_t *e = json_array_get(s->list, 0);
		return e && jstr(e, k_old, &l) && l == 0;
	}
	return false;
}

/* ---- line endings ---- */

static bool has_crlf(const char *b, size_t len)
{
	return len > 1 && memmem(b, len, "\r\n", 2) != NULL;
}

/* CRLF -> LF (malloc'd copy) */
static char *to_lf(const char *b, size_t len, size_t *outlen)
{
	char *o = malloc(len + 1);
	size_t n = 0;

	if (!o)
		return NULL;
	for (size_t i = 0; i < len; i++)
		if (!(b[i] == '\r' && i + 1 < len && b[i + 1] == '\n'))
			o[n++] = b[i];
	o[n] = 0;
	*outlen = n;
	return o;
}

/* lone LF -> CRLF (malloc'd copy) */
static char *to_crlf(const char *b, size_t len, size_t *outlen)
{
	struct wap_sb sb = WAP_SB_INIT;

	for (size_t i = 0; i < len; i++) {
		if (b[i] == '\n' && (i == 0 || b[i - 1] != '\r'))
			wap_sb_addc(&sb, '\r');
		wap_sb_addc(&sb, b[i]);
	}
	if (sb.oom || !wap_sb_grow(&sb, 1)) {
		wap_sb_release(&sb);
		return NULL;
	}
	sb.buf[sb.len] = 0;
	*outlen = sb.len;
	return wap_sb_detach(&sb);
}

/* A caller's string in the text's line-ending form: LF unless MIXED. */
struct str {
	char *p;
	size_t len;
};

static int norm_str(const char *s, size_t len, bool mixed, struct str *o)
{
	if (mixed) {
		o->p = malloc(len + 1);
		if (!o->p)
			return -1;
		memcpy(o->p, s, len);
		o->p[len] = 0;
		o->len = len;
		return 0;
	}
	o->p = to_lf(s, len, &o->len);
	return o->p ? 0 : -1;
}

/* ---- modes ---- */

static int do_replace(const struct wap_edit_spec *s, bool exists, const char *text,
		      size_t len, bool mixed, char **out, size_t *outlen,
		      struct wap_edit_info *info, struct wap_err *err)
{
	struct str o = { 0 }, n = { 0 };
	int rc = -1;

	if (norm_str(s->old, s->oldlen, mixed, &o) || norm_str(s->new, s->newlen, mixed, &n)) {
		wap_err_oom(err);
		goto out;
	}
	if (!o.len) {
		if (exists && len) {
			wap_err_set(err, WAP_E_INVALID,
				    "old is empty but %s is not empty: give the text to replace "
				    "(an empty old only creates a file or fills an empty one)",
				    s->path ? s->path : "the file");
			goto out;
		}
		*out = n.p;
		*outlen = n.len;
		n.p = NULL;
		info->replacements = 1;
		rc = 0;
		goto out;
	}
	if (s->opencode)
		rc = replace_opencode_max(text, len, o.p, o.len, n.p, n.len, s->replace_all, 0,
					  s->max, s->path, out, outlen, &info->replacements,
					  &info->strategy, err);
	else
		rc = replace_max(text, len, o.p, o.len, n.p, n.len, s->replace_all, s->exact, 0,
				 s->max, s->path, out, outlen, &info->replacements, &info->strategy, err);
out:
	free(o.p);
	free(n.p);
	return rc;
}

static int do_multi(const struct wap_edit_spec *s, const char *text, size_t len, bool mixed,
		    char **out, size_t *outlen, struct wap_edit_info *info, struct wap_err *err)
{
	char *cur = malloc(len + 1);
	size_t curlen = len, i;
	json_t *e;

	if (!cur)
		return wap_err_oom(err);
	memcpy(cur, text, len);
	cur[len] = 0;
	info->strategies = json_array();
	json_array_foreach(s->list, i, e) {
		size_t ol = 0, nl = 0, cnt = 0, nxl;
		const char *o = jstr(e, k_old, &ol), *nw = jstr(e, k_new, &nl);
		struct str so = { 0 }, sn = { 0 };
		enum wap_strategy st = WAP_S_EXACT;
		char *nx = NULL;
		int r;

		if (norm_str(o, ol, mixed, &so) || norm_str(nw, nl, mixed, &sn)) {
			free(so.p);
			free(sn.p);
			free(cur);
			return wap_err_oom(err);
		}
		if (!so.len) {
			if (curlen) {
				free(so.p);
				free(sn.p);
				free(cur);
				return wap_err_set(err, WAP_E_INVALID,
						   "edit %zu: old is empty but the text is not empty", i + 1);
			}
			nx = sn.p, nxl = sn.len, sn.p = NULL, cnt = 1, r = 0;
		} else {
			bool all = json_is_true(json_object_get(e, "replace_all")) ||
				   json_is_true(json_object_get(e, "replaceAll"));
			if (s->opencode)
				r = replace_opencode_max(cur, curlen, so.p, so.len, sn.p, sn.len, all,
							 (int)i + 1, s->max, s->path, &nx, &nxl, &cnt,
							 &st, err);
			else
				r = replace_max(cur, curlen, so.p, so.len, sn.p, sn.len, all, s->exact,
						(int)i + 1, s->max, s->path, &nx, &nxl, &cnt, &st, err);
		}
		free(so.p);
		free(sn.p);
		if (r) {
			free(cur);
			return -1;
		}
		free(cur);
		cur = nx;
		curlen = nxl;
		info->replacements += cnt;
		if (st > info->strategy)
			info->strategy = st;
		json_array_append_new(info->strategies, json_string(wap_strategy_name(st)));
	}
	*out = cur;
	*outlen = curlen;
	return 0;
}

struct lop {
	int type;		/* 'r' replace, 'd' delete, 'i' insert */
	long s, e;		/* 1-based inclusive; insert: s = afterLine */
	struct str content;
	size_t idx;
};

static int lop_cmp(const void *a, const void *b)
{
	const struct lop *x = a, *y = b;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void emit_content(struct wap_sb *sb, const struct str *c, bool *first)
{
	size_t len = c->len;

	if (!len)
		return;
	if (c->p[len - 1] == '\n')
		len--;
	if (!*first)
		wap_sb_addc(sb, '\n');
	wap_sb_add(sb, c->p, len);
	*first = false;
}

/* One regexReplace operation (PCRE2, JavaScript-style flags and $&) on
 * *CUR, replaced by the result; *COUNT gets the number of substitutions. */
/* Which line of TEXT makes RE hit a limit alone?  0 when none does (the
 * limit came from matching across lines) or the search ran out of time. */
static size_t limit_line(const pcre2_code *re, pcre2_match_context *mctx, const char *text,
			 size_t len)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	struct timespec t0, t;
	size_t a = 0, line = 1, found = 0;

	if (!md)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (a <= len && !found) {
		const char *nl = memchr(text + a, '\n', len - a);
		size_t b = nl ? (size_t)(nl - text) : len;
		int rc = pcre2_match(re, (PCRE2_SPTR)text + a, b - a, 0, 0, md, mctx);
		if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)
			found = line;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (!nl || (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > 2000)
			break;
		a = b + 1;
		line++;
	}
	pcre2_match_data_free(md);
	return found;
}

/* PCRE2 counts its match limit afresh at each start position, so a
 * pattern backtracking just under it everywhere made one regexReplace over
 * 9 KB 90 s of work.  A callout before every item of the pattern counts
 * the work of the whole substitution (64 Mi steps, 1-2 s; a simple pattern
 * over a 1 MiB file takes a few per byte) and polls the call's cancel. */
#define RX_WORK (64u << 20)

struct rx_budget {
	const struct wap_cancel *cancel;
	unsigned long n;
	int why;		/* 1: the budget is spent, 2: cancelled */
};

static int rx_callout(pcre2_callout_block *cb, void *arg)
{
	struct rx_budget *b = arg;

	(void)cb;
	if (++b->n & 4095)
		return 0;
	if (wap_cancel_is_set(b->cancel))
		b->why = 2;
	else if (b->n > RX_WORK)
		b->why = 1;
	return b->why ? PCRE2_ERROR_CALLOUT : 0;
}

static int regex_op(const json_t *e, size_t i, const char *path, size_t max,
		    const struct wap_cancel *cancel, char **cur, size_t *curlen, size_t *count,
		    struct wap_err *err)
{
	struct rx_budget budget = { .cancel = cancel };
	json_t *pj = json_object_get(e, "pattern"), *rj = json_object_get(e, "replacement");
	const char *flags = json_string_value(json_object_get(e, "flags"));
	const char *r = json_string_value(rj);
	size_t rl = json_string_length(rj);
	uint32_t copt = 0, sopt = PCRE2_SUBSTITUTE_OVERFLOW_LENGTH;
	struct wap_sb rep = WAP_SB_INIT;
	pcre2_code *re;
	pcre2_match_context *mctx;
	int ecode, nsub;
	PCRE2_SIZE eoff, olen;
	char *obuf;

	for (const char *f = flags ? flags : ""; *f; f++) {
		switch (*f) {
		case 'g': sopt |= PCRE2_SUBSTITUTE_GLOBAL; break;
		case 'i': copt |= PCRE2_CASELESS; break;
		case 'm': copt |= PCRE2_MULTILINE; break;
		case 's': copt |= PCRE2_DOTALL; break;
		case 'x': copt |= PCRE2_EXTENDED; break;
		case 'u': case 'y': break;
		default:
			return wap_err_set(err, WAP_E_INVALID,
					   "operation %zu (regexReplace): unknown flag '%c' (g, i, m, s, x)",
					   i + 1, *f);
		}
	}
	if (wap_text_utf8_valid(*cur, *curlen, NULL) &&
	    wap_text_utf8_valid(json_string_value(pj), json_string_length(pj), NULL))
		copt |= PCRE2_UTF;
	re = pcre2_compile((PCRE2_SPTR)json_string_value(pj), json_string_length(pj),
			   copt | PCRE2_AUTO_CALLOUT,
			   &ecode, &eoff, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(ecode, msg, sizeof(msg));
		return wap_err_set(err, WAP_E_INVALID,
				   "operation %zu (regexReplace): bad pattern at offset %zu: %s",
				   i + 1, (size_t)eoff, (char *)msg);
	}
	/* JavaScript's $& is PCRE2's $0, $<name> is ${name} */
	for (size_t q = 0; q < rl; q++) {
		const char *gt;
		if (r[q] == '$' && q + 1 < rl && r[q + 1] == '&') {
			wap_sb_adds(&rep, "$0");
			q++;
		} else if (r[q] == '$' && q + 1 < rl && r[q + 1] == '<' &&
			   (gt = memchr(r + q, '>', rl - q))) {
			wap_sb_adds(&rep, "${");
			wap_sb_add(&rep, r + q + 2, gt - (r + q + 2));
			wap_sb_addc(&rep, '}');
			q = gt - r;
		} else {
			wap_sb_addc(&rep, r[q]);
		}
	}
	wap_sb_grow(&rep, 1);
	/* limits: a pathological pattern fails instead of hanging a server */
	mctx = pcre2_match_context_create(NULL);
	if (mctx) {
		wap_match_limits(mctx);
		pcre2_set_callout(mctx, rx_callout, &budget);
	}
	/* with a cap the buffer is the cap: a result that would pass it stops
	 * there (PCRE2_ERROR_NOMEMORY), never counted to its end nor held */
	if (max)
		sopt &= ~(uint32_t)PCRE2_SUBSTITUTE_OVERFLOW_LENGTH;
	olen = max ? max + 1 : *curlen * 2 + 256;
	obuf = rep.oom ? NULL : malloc(olen);
	nsub = obuf ? pcre2_substitute(re, (PCRE2_SPTR)*cur, *curlen, 0, sopt, NULL, mctx,
				       (PCRE2_SPTR)(rep.buf ? rep.buf : ""), rep.len,
				       (PCRE2_UCHAR *)obuf, &olen) : PCRE2_ERROR_NOMEMORY;
	if (nsub == PCRE2_ERROR_NOMEMORY && obuf && max) {
		free(obuf);
		pcre2_code_free(re);
		pcre2_match_context_free(mctx);
		wap_sb_release(&rep);
		return too_large(err, path, max);
	}
	if (nsub == PCRE2_ERROR_NOMEMORY && obuf) {
		/* olen is now the length needed */
		free(obuf);
		obuf = malloc(olen + 1);
		nsub = obuf ? pcre2_substitute(re, (PCRE2_SPTR)*cur, *curlen, 0, sopt, NULL, mctx,
					       (PCRE2_SPTR)(rep.buf ? rep.buf : ""), rep.len,
					       (PCRE2_UCHAR *)obuf, &olen) : PCRE2_ERROR_NOMEMORY;
	}
	if (nsub == PCRE2_ERROR_CALLOUT && budget.why) {
		free(obuf);
		pcre2_code_free(re);
		pcre2_match_context_free(mctx);
		wap_sb_release(&rep);
		if (budget.why == 2)
			return wap_cancel_err(err);
		return wap_err_set(err, WAP_E_TOO_LARGE, "operation %zu (regexReplace): "
				   "regex work limit hit in %s; simplify the pattern",
				   i + 1, path ? path : "the file");
	}
	if (nsub == PCRE2_ERROR_MATCHLIMIT || nsub == PCRE2_ERROR_DEPTHLIMIT ||
	    nsub == PCRE2_ERROR_HEAPLIMIT || nsub == PCRE2_ERROR_JIT_STACKLIMIT) {
		size_t line = limit_line(re, mctx, *cur, *curlen);
		const char *what = nsub == PCRE2_ERROR_MATCHLIMIT ? "match" :
				   nsub == PCRE2_ERROR_DEPTHLIMIT ? "depth" :
				   nsub == PCRE2_ERROR_HEAPLIMIT ? "heap" : "stack";
		free(obuf);
		pcre2_code_free(re);
		pcre2_match_context_free(mctx);
		wap_sb_release(&rep);
		if (line)
			return wap_err_set(err, WAP_E_TOO_LARGE, "operation %zu (regexReplace): "
					   "regex %s limit hit in %s:%zu; simplify the pattern",
					   i + 1, what, path ? path : "the file", line);
		return wap_err_set(err, WAP_E_TOO_LARGE, "operation %zu (regexReplace): "
				   "regex %s limit hit in %s; simplify the pattern",
				   i + 1, what, path ? path : "the file");
	}
	pcre2_code_free(re);
	pcre2_match_context_free(mctx);
	wap_sb_release(&rep);
	if (nsub < 0) {
		PCRE2_UCHAR msg[256];
		free(obuf);
		pcre2_get_error_message(nsub, msg, sizeof(msg));
		return wap_err_set(err, WAP_E_INVALID, "operation %zu (regexReplace): %s", i + 1,
				   (char *)msg);
	}
	if (nsub == 0) {
		free(obuf);
		return wap_err_set(err, WAP_E_NO_MATCH,
				   "operation %zu (regexReplace): pattern not found in content", i + 1);
	}
	free(*cur);
	*cur = obuf;
	*curlen = olen;
	obuf[olen] = 0;
	*count = (size_t)nsub;
	return 0;
}

static int do_ops(const struct wap_edit_spec *s, const char *text, size_t len, bool mixed,
		  char **out, size_t *outlen, struct wap_edit_info *info, struct wap_err *err)
{
	struct wap_span *fl = NULL;
	long n = split_lines(text, len, &fl);
	size_t nops = json_array_size(s->list), nl = 0, i;
	struct lop *lv = calloc(nops ? nops : 1, sizeof(*lv));
	struct wap_sb sb = WAP_SB_INIT;
	bool final_nl = !len || text[len - 1] == '\n', first = true;
	char *cur = NULL;
	size_t curlen = 0;
	json_t *e;
	int rc = -1;

	if (n < 0 || !lv) {
		wap_err_oom(err);
		goto out;
	}
	json_array_foreach(s->list, i, e) {
		const char *t = json_string_value(json_object_get(e, "type"));
		struct lop *l = &lv[nl];
		if (!strcmp(t, "regexReplace"))
			continue;
		l->idx = i;
		l->type = t[0] == 'r' ? 'r' : t[0] == 'd' ? 'd' : 'i';
		if (l->type == 'i') {
			l->s = (long)json_integer_value(json_object_get(e, "afterLine"));
			l->e = l->s;
			if (l->s < 0 || l->s > n) {
				wap_err_set(err, WAP_E_INVALID,
					    "operation %zu (insert): afterLine %ld is outside the file (0..%ld)",
					    i + 1, l->s, n);
				goto out;
			}
		} else {
			l->s = (long)json_integer_value(json_object_get(e, "startLine"));
			l->e = (long)json_integer_value(json_object_get(e, "endLine"));
			if (l->s < 1 || l->e < l->s || l->e > n) {
				wap_err_set(err, WAP_E_INVALID,
					    "operation %zu (%s): lines %ld-%ld are outside the file (it has %ld lines)",
					    i + 1, t, l->s, l->e, n);
				goto out;
			}
		}
		if (l->type != 'd') {
			json_t *c = json_object_get(e, "newContent");
			if (norm_str(json_string_value(c), json_string_length(c), mixed, &l->content)) {
				wap_err_oom(err);
				goto out;
			}
		}
		nl++;
	}
	/* overlaps: ranges with ranges, inserts strictly inside ranges */
	for (size_t a = 0; a < nl; a++)
		for (size_t b = a + 1; b < nl; b++) {
			struct lop *x = &lv[a], *y = &lv[b];
			bool bad;
			if (x->type == 'i' && y->type == 'i')
				continue;
			if (x->type == 'i' || y->type == 'i') {
				struct lop *ins = x->type == 'i' ? x : y, *r = x->type == 'i' ? y : x;
				bad = ins->s >= r->s && ins->s < r->e;
			} else {
				bad = x->s <= y->e && y->s <= x->e;
			}
			if (bad) {
				wap_err_set(err, WAP_E_INVALID,
					    "operations %zu and %zu overlap (lines %ld-%ld and %ld-%ld); "
					    "line numbers refer to the file before the call",
					    x->idx + 1, y->idx + 1, x->s, x->e, y->s, y->e);
				goto out;
			}
		}
	qsort(lv, nl, sizeof(*lv), lop_cmp);
	{
		size_t k = 0;	/* next op (sorted by start line) */
		long ln = 1;
		/* inserts at the top */
		while (k < nl && lv[k].type == 'i' && lv[k].s == 0)
			emit_content(&sb, &lv[k++].content, &first);
		while (ln <= n) {
			long lastl;
			if (k < nl && lv[k].type != 'i' && lv[k].s == ln) {
				if (lv[k].type == 'r')
					emit_content(&sb, &lv[k].content, &first);
				lastl = lv[k].e;
				k++;
			} else {
				if (!first)
					wap_sb_addc(&sb, '\n');
				wap_sb_add(&sb, fl[ln - 1].p, fl[ln - 1].len);
				first = false;
				lastl = ln;
			}
			ln = lastl + 1;
			while (k < nl && lv[k].type == 'i' && lv[k].s == lastl)
				emit_content(&sb, &lv[k++].content, &first);
		}
		if (!first && final_nl)
			wap_sb_addc(&sb, '\n');
		info->replacements = nl;
	}
	if (sb.oom || !wap_sb_grow(&sb, 1)) {
		wap_err_oom(err);
		goto out;
	}
	sb.buf[sb.len] = 0;
	curlen = sb.len;
	cur = wap_sb_detach(&sb);
	/* regexReplace operations, in order, on the result */
	json_array_foreach(s->list, i, e) {
		const char *t = json_string_value(json_object_get(e, "type"));
		size_t n = 0;
		if (strcmp(t, "regexReplace"))
			continue;
		if (regex_op(e, i, s->path, s->max, s->cancel, &cur, &curlen, &n, err))
			goto out;
		info->replacements += n;
	}
	*out = cur;
	*outlen = curlen;
	cur = NULL;
	rc = 0;
out:
	for (size_t k = 0; lv && k < nl; k++)
		free(lv[k].content.p);
	free(lv);
	free(fl);
	free(cur);
	wap_sb_release(&sb);
	return rc;
}

struct tedit {
	long s, e;
	const char *text;
	size_t tlen;
	size_t idx;
};

static int tedit_cmp(const void *a, const void *b)
{
	const struct tedit *x = a, *y = b;
	bool xi = x->s == x->e, yi = y->s == y->e;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (xi != yi)
		return xi ? -1 : 1;	/* an insert goes before a range at the same start */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int do_positions(const struct wap_edit_spec *s, const char *buf, size_t len,
			char **out, size_t *outlen, struct wap_edit_info *info,
			struct wap_err *err)
{
	size_t n = json_array_size(s->list), i, last = 0;
	struct tedit *tv = calloc(n ? n : 1, sizeof(*tv));
	bool crlf = wap_text_is_crlf(buf, len);
	struct wap_sb sb = WAP_SB_INIT;
	json_t *e;
	int rc = -1;

	if (!tv)
		return wap_err_oom(err);
	json_array_foreach(s->list, i, e) {
		long r[4];
		struct wap_err tmp = { 0 };
		get_range(e, r);
		tv[i].idx = i;
		tv[i].text = jstr(e, k_text, &tv[i].tlen);
		if (!tv[i].text)
			tv[i].text = "", tv[i].tlen = 0;
		tv[i].s = wap_lsp_offset(buf, len, r[0], r[1], &tmp);
		if (tv[i].s >= 0)
			tv[i].e = wap_lsp_offset(buf, len, r[2], r[3], &tmp);
		if (tv[i].s < 0 || tv[i].e < 0) {
			wap_err_set(err, tmp.kind, "text edit %zu: %s", i + 1, tmp.msg);
			wap_err_release(&tmp);
			goto out;
		}
		if (tv[i].e < tv[i].s) {
			wap_err_set(err, WAP_E_INVALID,
				    "text edit %zu: the range ends (%ld:%ld) before it starts (%ld:%ld)",
				    i + 1, r[2], r[3], r[0], r[1]);
			goto out;
		}
	}
	qsort(tv, n, sizeof(*tv), tedit_cmp);
	for (i = 1; i < n; i++)
		if (tv[i - 1].e > tv[i].s) {
			size_t a = tv[i - 1].idx, b = tv[i].idx;
			wap_err_set(err, WAP_E_INVALID, "text edits %zu and %zu overlap",
				    (a < b ? a : b) + 1, (a < b ? b : a) + 1);
			goto out;
		}
	for (i = 0; i < n; i++) {
		wap_sb_add(&sb, buf + last, tv[i].s - last);
		if (crlf) {
			size_t cl;
			char *c = to_crlf(tv[i].text, tv[i].tlen, &cl);
			if (!c) {
				wap_err_oom(err);
				goto out;
			}
			wap_sb_add(&sb, c, cl);
			free(c);
		} else {
			wap_sb_add(&sb, tv[i].text, tv[i].tlen);
		}
		last = tv[i].e;
	}
	wap_sb_add(&sb, buf + last, len - last);
	if (sb.oom || !wap_sb_grow(&sb, 1)) {
		wap_err_oom(err);
		goto out;
	}
	sb.buf[sb.len] = 0;
	*outlen = sb.len;
	*out = wap_sb_detach(&sb);
	info->replacements = n;
	rc = 0;
out:
	wap_sb_release(&sb);
	free(tv);
	return rc;
}

int wap_edit_apply(const struct wap_edit_spec *s, const char *buf, size_t len,
		   char **out, size_t *outlen, struct wap_edit_info *info,
		   struct wap_err *err)
{
	bool exists = buf != NULL, crlf, mixed;
	char *text = NULL, *res = NULL;
	size_t tlen = 0, rlen = 0;
	int rc = -1;

	memset(info, 0, sizeof(*info));
	*out = NULL;
	*outlen = 0;
	if (!buf)
		buf = "", len = 0;
	if (wap_edit_validate(s, err))
		return -1;
	if (wap_text_is_binary(buf, len))
		return wap_err_set(err, WAP_E_INVALID, "%s is a binary file: edit refused",
				   s->path ? s->path : "the file");
	if (s->mode == WAP_EDIT_POSITIONS) {
		if (!exists)
			return wap_err_set(err, WAP_E_NOT_FOUND, "File not found: %s",
					   s->path ? s->path : "");
		return do_positions(s, buf, len, out, outlen, info, err);
	}
	crlf = wap_text_pure_crlf(buf, len);
	mixed = !crlf && has_crlf(buf, len);
	if (crlf)
		text = to_lf(buf, len, &tlen);
	else if ((text = malloc(len + 1))) {
		memcpy(text, buf, len);
		text[len] = 0;
		tlen = len;
	}
	if (!text)
		return wap_err_oom(err);
	switch (s->mode) {
	case WAP_EDIT_REPLACE:
		rc = do_replace(s, exists, text, tlen, mixed, &res, &rlen, info, err);
		break;
	case WAP_EDIT_MULTI:
		rc = do_multi(s, text, tlen, mixed, &res, &rlen, info, err);
		break;
	case WAP_EDIT_OPS:
		rc = do_ops(s, text, tlen, mixed, &res, &rlen, info, err);
		break;
	default:
		rc = wap_err_set(err, WAP_E_INVALID, "unknown edit mode");
	}
	free(text);
	if (rc)
		return -1;
	/* keep the trailing-newline state of a non-empty file */
	if (exists && len && rlen) {
		bool had = buf[len - 1] == '\n', has = res[rlen - 1] == '\n';
		if (had && !has) {
			char *nr = realloc(res, rlen + 2);
			if (!nr) {
				free(res);
				return wap_err_oom(err);
			}
			res = nr;
			res[rlen++] = '\n';
			res[rlen] = 0;
		} else if (!had && has) {
			res[--rlen] = 0;
		}
	}
	if (crlf) {
		size_t cl;
		char *c = to_crlf(res, rlen, &cl);
		free(res);
		if (!c)
			return wap_err_oom(err);
		res = c;
		rlen = cl;
	}
	*out = res;
	*outlen = rlen;
	return 0;
}

void wap_edit_info_release(struct wap_edit_info *info)
{
	json_decref(info->strategies);
	info->strategies = NULL;
}
