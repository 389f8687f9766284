/* git/pretty.c - commits in git's own words: the text of `git log` and
 * `git show` (--pretty= oneline, short, medium, full, fuller; --format=
 * with git's common placeholders), byte for byte, made from the JSON the
 * log and show actions return.  Pure: no repository is read here.
 *
 * What git does, and so this file (git's pretty.c and log-tree.c): a
 * named format prints "commit ID" (oneline: "ID "), then a message buffer
 * of the Merge: line, the Author/Date lines of the format, a blank line
 * and the message indented by 4 with each line's trailing blanks cut
 * (short: its first paragraph); that buffer loses its trailing blanks
 * and gains one newline.  Entries are separated by a newline, except
 * oneline and tformat:, which end each entry with one.  A diff that
 * follows a commit (show) is preceded by a blank line unless the format
 * is oneline (a merge's is, in every format) or empty.
 *
 * The JSON message is the commit's with its trailing blanks cut; git's
 * raw message (%B, %b) is that and one newline, or rawMessage where the
 * commit's is not (made without git's clean-up, as GitHub's merges). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "git.h"

enum { P_ONELINE, P_SHORT, P_MEDIUM, P_FULL, P_FULLER, P_USER };

struct pretty {
	int kind;
	const char *user;	/* P_USER: the placeholders' string */
	bool abbrev;		/* the commit line's id abbreviated (--oneline) */
	bool term;		/* each entry ends in a newline (else: between) */
	char date;		/* --date: a kind of date_add() */
};

static const char *sget(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* --format/--pretty and --oneline of REQ as git reads them */
static int pretty_parse(const json_t *req, struct pretty *p, struct wap_err *err)
{
	static const char *const names[] = { "oneline", "short", "medium", "full", "fuller" };
	const char *f = json_string_value(json_object_get(req, "format"));

	static const struct { const char *name; char kind; } dates[] = {
		{ "default", 'd' }, { "normal", 'd' }, { "short", 's' }, { "iso", 'i' },
		{ "iso8601", 'i' }, { "iso-strict", 'I' }, { "iso8601-strict", 'I' },
		{ "unix", 't' }, { "raw", 'r' } };
	const char *d = json_string_value(json_object_get(req, "date"));

	memset(p, 0, sizeof(*p));
	p->kind = P_MEDIUM;
	p->date = 'd';
	if (d) {
		size_t i;
		for (i = 0; i < sizeof(dates) / sizeof(*dates) && strcmp(d, dates[i].name); i++)
			;
		if (i == sizeof(dates) / sizeof(*dates))
			return wap_err_set(err, WAP_E_INVALID,
					   "Unsupported --date: '%s' (default, short, iso, iso-strict, unix, raw)", d);
		p->date = dates[i].kind;
	}
	if (json_is_true(json_object_get(req, "oneline"))) {
		p->kind = P_ONELINE;
		p->abbrev = p->term = true;
	}
	if (!f)
		return 0;
	p->abbrev = false;
	for (int i = 0; i < 5; i++)
		if (!strcmp(f, names[i])) {
			p->kind = i;
			p->term = i == P_ONELINE;
			return 0;
		}
	p->kind = P_USER;
	p->term = true;
	if (!strncmp(f, "format:", 7)) {
		p->user = f + 7;
		p->term = false;
	} else if (!strncmp(f, "tformat:", 8)) {
		p->user = f + 8;
	} else if (strchr(f, '%') || !*f) {
		p->user = f;
	} else {
		return wap_err_set(err, WAP_E_INVALID,
				   "Invalid --format: '%s' (oneline, short, medium, full, fuller, or format:/tformat: with placeholders)",
				   f);
	}
	return 0;
}

/* ---- messages, as git's pretty.c splits them ---- */

/* the length of the line at S with its newline */
static size_t line_len(const char *s)
{
	const char *nl = strchr(s, '\n');
	return nl ? (size_t)(nl - s) + 1 : strlen(s);
}

/* the length of LINE (LEN bytes) without its trailing blanks and newline */
static size_t trimmed(const char *line, size_t len)
{
	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\n' ||
		       line[len - 1] == '\r' || line[len - 1] == '\v' || line[len - 1] == '\f'))
		len--;
	return len;
}

static const char *skip_blank_lines(const char *s)
{
	for (size_t n; (n = line_len(s)) && !trimmed(s, n); s += n)
		;
	return s;
}

/* the subject: the first paragraph's lines, trimmed, joined by SEP; the
 * return is where the paragraph ends */
static const char *subject(const char *msg, struct wap_sb *out)
{
	bool first = true;

	for (size_t n; (n = line_len(msg)); msg += n) {
		size_t t = trimmed(msg, n);
		if (!t)
			break;
		if (out) {
			if (!first)
				wap_sb_addc(out, ' ');
			wap_sb_add(out, msg, t);
		}
		first = false;
	}
	return msg;
}

/* ---- dates ---- */

struct when {
	long long epoch;
	int y, mo, d, H, M, S, wday;
	char sign;
	int oh, om;
};

/* days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil): what timegm does, without its locking and tables */
static long long days_from_civil(long long y, int m, int d)
{
	long long era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (unsigned)((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1);
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (long long)doe - 719468;
}

/* N digits of S as a number, or -1 */
static int digits(const char *s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* "2026-11-22T00:05:14+01:00" (local time and its offset), as log.c
 * writes it; other spellings through sscanf */
static bool when_parse(const char *iso, struct when *w)
{
	long long days;

	memset(w, 0, sizeof(*w));
	w->sign = '+';
	if (strlen(iso) == 25 && iso[4] == '-' && iso[7] == '-' && iso[10] == 'T' && iso[13] == ':' &&
	    iso[16] == ':' && (iso[19] == '+' || iso[19] == '-') && iso[22] == ':' &&
	    (w->y = digits(iso, 4)) >= 0 && (w->mo = digits(iso + 5, 2)) >= 0 &&
	    (w->d = digits(iso + 8, 2)) >= 0 && (w->H = digits(iso + 11, 2)) >= 0 &&
	    (w->M = digits(iso + 14, 2)) >= 0 && (w->S = digits(iso + 17, 2)) >= 0 &&
	    (w->oh = digits(iso + 20, 2)) >= 0 && (w->om = digits(iso + 23, 2)) >= 0) {
		w->sign = iso[19];
	} else if (sscanf(iso, "%d-%d-%dT%d:%d:%d%c%d:%d", &w->y, &w->mo, &w->d, &w->H, &w->M, &w->S,
			  &w->sign, &w->oh, &w->om) < 6) {
		return false;
	}
	if (w->mo < 1 || w->mo > 12)
		return false;
	if (w->sign == 'Z')
		w->sign = '+', w->oh = w->om = 0;
	days = days_from_civil(w->y, w->mo, w->d);
	w->epoch = days * 86400 + w->H * 3600LL + w->M * 60LL + w->S -
		   (w->sign == '-' ? -1 : 1) * (w->oh * 3600LL + w->om * 60);
	w->wday = (int)(((days % 7) + 11) % 7);	/* 1970-01-01 was a Thursday */
	return true;
}

/* N digits of V, zero-padded, at P; the end */
static char *put_num(char *p, long long v, int n)
{
	char tmp[24];
	int k = 0;

	if (v < 0)
		return p + snprintf(p, 24, "%0*lld", n, v);	/* not a date git writes */
	do
		tmp[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < 23);
	while (k < n)
		tmp[k++] = '0';
	while (k)
		*p++ = tmp[--k];
	return p;
}

/* KIND: 'd' git's default, 'i' iso, 'I' strict iso, 't' epoch, 's' short,
 * 'r' raw (epoch and zone) */
static void date_add(struct wap_sb *out, const char *iso, char kind)
{
	static const char *const wd[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char *const mo[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul",
					  "Aug", "Sep", "Oct", "Nov", "Dec" };
	struct when w;

	if (!when_parse(iso, &w)) {
		wap_sb_adds(out, iso);
		return;
	}
	switch (kind) {
	case 'i':
		wap_sb_addf(out, "%04d-%02d-%02d %02d:%02d:%02d %c%02d%02d", w.y, w.mo, w.d, w.H, w.M,
			    w.S, w.sign, w.oh, w.om);
		break;
	case 'I':
		wap_sb_addf(out, "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", w.y, w.mo, w.d, w.H, w.M,
			    w.S, w.sign, w.oh, w.om);
		break;
	case 't':
		wap_sb_addf(out, "%lld", w.epoch);
		break;
	case 's':
		wap_sb_addf(out, "%04d-%02d-%02d", w.y, w.mo, w.d);
		break;
	case 'r':
		wap_sb_addf(out, "%lld %c%02d%02d", w.epoch, w.sign, w.oh, w.om);
		break;
	default: {
		/* "%s %s %d %02d:%02d:%02d %d %c%02d%02d", without printf:
		 * git log's every entry has one */
		char b[256], *q = b;
		memcpy(q, wd[w.wday % 7], 3), q += 3, *q++ = ' ';
		memcpy(q, mo[w.mo - 1], 3), q += 3, *q++ = ' ';
		q = put_num(q, w.d, 1), *q++ = ' ';
		q = put_num(q, w.H, 2), *q++ = ':';
		q = put_num(q, w.M, 2), *q++ = ':';
		q = put_num(q, w.S, 2), *q++ = ' ';
		q = put_num(q, w.y, 1), *q++ = ' ';
		*q++ = w.sign;
		q = put_num(q, w.oh, 2);
		q = put_num(q, w.om, 2);
		wap_sb_add(out, b, (size_t)(q - b));
	}
	}
}

/* ---- one commit ---- */

/* the abbreviated ids of C's parents, space-separated: shortParents when
 * the result has them (show of a merge), else each id cut to the length
 * of C's own abbreviation (git's, unless a parent needs more to be unique) */
static void short_parents(struct wap_sb *out, const json_t *c)
{
	const json_t *sp = json_object_get(c, "shortParents"), *v;
	size_t n = strlen(sget(c, "shortHash")), i;

	json_array_foreach(json_object_get(c, "parents"), i, v) {
		const char *s = json_string_value(json_array_get(sp, i));
		if (i)
			wap_sb_addc(out, ' ');
		if (s)
			wap_sb_adds(out, s);
		else
			wap_sb_add(out, json_string_value(v), strnlen(json_string_value(v), n));
	}
}

/* %-placeholders of FMT for C; with OUT NULL only checks them */
static int user_format(struct wap_sb *out, const char *fmt, char dk, const json_t *c,
		       struct wap_err *err)
{
	const char *msg = c ? sget(c, "message") : "";
	struct wap_sb raw = WAP_SB_INIT;
	const char *body;
	size_t i;
	const json_t *v;
	int rc = 0;

	if (json_is_string(json_object_get(c, "rawMessage"))) {
		wap_sb_adds(&raw, sget(c, "rawMessage"));
	} else {
		wap_sb_adds(&raw, msg);
		if (*msg)
			wap_sb_addc(&raw, '\n');
	}
	body = skip_blank_lines(subject(skip_blank_lines(raw.buf ? raw.buf : ""), NULL));
	for (const char *p = fmt; *p; p++) {
		const char *who = NULL, *date = NULL;
		if (*p != '%') {
			if (out)
				wap_sb_addc(out, *p);
			continue;
		}
		p++;
		if ((*p == 'a' || *p == 'c') && p[1] && strchr("neditIs", p[1])) {
			who = *p == 'a' ? "author" : "committer";
			date = *p == 'a' ? "date" : "commitDate";
			p++;
			if (!out)
				continue;
			if (*p == 'n')
				wap_sb_adds(out, sget(c, who));
			else if (*p == 'e')
				wap_sb_adds(out, sget(c, *who == 'a' ? "authorEmail" : "committerEmail"));
			else
				date_add(out, sget(c, date), *p == 'd' ? dk : *p);
			continue;
		}
		if (*p == 'x' && p[1] && p[2] && strchr("0123456789abcdefABCDEF", p[1]) &&
		    strchr("0123456789abcdefABCDEF", p[2])) {
			char hex[3] = { p[1], p[2], 0 };
			if (out)
				wap_sb_addc(out, (char)strtol(hex, NULL, 16));
			p += 2;
			continue;
		}
		if (!*p || !strchr("HhPpsbBn%", *p)) {
			/* git knows more (%d, %T, %ar, %aN...): refused here
			 * rather than printed other than git prints them */
			rc = wap_err_set(err, WAP_E_INVALID,
					 "Unsupported placeholder in --format: '%%%.2s' (wap knows %%H %%h %%P %%p %%an %%ae %%ad %%at %%ai %%aI %%as, the same with c, %%s %%b %%B %%n %%%% %%xNN)",
					 *p ? p : "");
			break;
		}
		if (!out)
			continue;
		switch (*p) {
		case 'H':
			wap_sb_adds(out, sget(c, "hash"));
			break;
		case 'h':
			wap_sb_adds(out, sget(c, "shortHash"));
			break;
		case 'P':
			json_array_foreach(json_object_get(c, "parents"), i, v) {
				if (i)
					wap_sb_addc(out, ' ');
				wap_sb_adds(out, json_string_value(v));
			}
			break;
		case 'p':
			short_parents(out, c);
			break;
		case 's':
			subject(skip_blank_lines(raw.buf ? raw.buf : ""), out);
			break;
		case 'b':
			wap_sb_adds(out, body);
			break;
		case 'B':
			wap_sb_adds(out, raw.buf ? raw.buf : "");
			break;
		case 'n':
			wap_sb_addc(out, '\n');
			break;
		default:
			wap_sb_addc(out, '%');
		}
	}
	wap_sb_release(&raw);
	return rc;
}

/* the message buffer of a named format (not oneline) */
/* A message line with its tabs expanded to 8 columns, as git's
 * --expand-tabs (the default of medium, full and fuller): columns count
 * from after the indent; a character is a column (git counts East Asian
 * wide characters as two). */
static void add_tabexpand(struct wap_sb *out, const char *s, size_t n)
{
	const char *tab = memchr(s, '\t', n);
	size_t col = 0;

	if (!tab) {		/* most lines: as they are */
		wap_sb_add(out, s, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\t') {
			do
				wap_sb_addc(out, ' ');
			while (++col % 8);
			continue;
		}
		wap_sb_addc(out, s[i]);
		col += ((unsigned char)s[i] & 0xc0) != 0x80;
	}
}

static void named_format(struct wap_sb *out, const struct pretty *p, const json_t *c)
{
	const char *msg = sget(c, "message");
	size_t start = out->len;
	bool first = true;

	if (json_array_size(json_object_get(c, "parents")) > 1) {
		wap_sb_adds(out, "Merge: ");
		short_parents(out, c);
		wap_sb_addc(out, '\n');
	}
	if (p->kind == P_FULLER) {
		wap_sb_addf(out, "Author:     %s <%s>\nAuthorDate: ", sget(c, "author"), sget(c, "authorEmail"));
		date_add(out, sget(c, "date"), p->date);
		wap_sb_addf(out, "\nCommit:     %s <%s>\nCommitDate: ", sget(c, "committer"),
			    sget(c, "committerEmail"));
		date_add(out, sget(c, "commitDate"), p->date);
		wap_sb_addc(out, '\n');
	} else {
		wap_sb_addf(out, "Author: %s <%s>\n", sget(c, "author"), sget(c, "authorEmail"));
		if (p->kind == P_MEDIUM) {
			wap_sb_adds(out, "Date:   ");
			date_add(out, sget(c, "date"), p->date);
			wap_sb_addc(out, '\n');
		} else if (p->kind == P_FULL) {
			wap_sb_addf(out, "Commit: %s <%s>\n", sget(c, "committer"), sget(c, "committerEmail"));
		}
	}
	wap_sb_addc(out, '\n');
	for (size_t n; (n = line_len(msg)); msg += n) {
		size_t t = trimmed(msg, n);
		if (!t) {
			if (first)
				continue;
			if (p->kind == P_SHORT)
				break;
		}
		first = false;
		wap_sb_adds(out, "    ");
		if (p->kind == P_MEDIUM || p->kind == P_FULL || p->kind == P_FULLER)
			add_tabexpand(out, msg, t);
		else
			wap_sb_add(out, msg, t);
		wap_sb_addc(out, '\n');
	}
	/* git's strbuf_rtrim of the buffer, then one newline */
	while (out->len > start && out->buf && strchr(" \t\n", out->buf[out->len - 1]))
		out->len--;
	if (out->buf)
		out->buf[out->len] = 0;
	wap_sb_addc(out, '\n');
}

/* commit C as git log prints it (SEPARATE: not the first shown) */
static void one_commit(struct wap_sb *out, const struct pretty *p, const json_t *c, bool separate)
{
	/* format:'s separator even between empty entries, as git; an
	 * empty tformat: (--format=) prints nothing at all */
	if (separate && !p->term)
		wap_sb_addc(out, '\n');
	if (p->kind == P_USER && !*p->user)
		return;
	if (p->kind == P_USER) {
		user_format(out, p->user, p->date, c, NULL);
	} else if (p->kind == P_ONELINE) {
		size_t start;
		wap_sb_adds(out, sget(c, p->abbrev ? "shortHash" : "hash"));
		wap_sb_addc(out, ' ');
		start = out->len;
		subject(skip_blank_lines(sget(c, "message")), out);
		while (out->len > start && strchr(" \t\n", out->buf[out->len - 1]))
			out->buf[--out->len] = 0;
	} else {
		wap_sb_addf(out, "commit %s\n", sget(c, p->abbrev ? "shortHash" : "hash"));
		named_format(out, p, c);
	}
	if (p->term)
		wap_sb_addc(out, '\n');
}

/* A commit and its diff, when it has one (show; log -p, --stat,
 * --name-only): git's blank line before the diff, not after oneline's
 * line, but after a merge's in every format that prints something when
 * MERGE (show's; log prints no diff of a merge, nor the line). */
static void commit_diff(struct wap_sb *out, const struct pretty *p, const json_t *c, bool separate,
			bool merge)
{
	const char *diff = sget(c, "diff");

	one_commit(out, p, c, separate);
	merge = merge && json_array_size(json_object_get(c, "parents")) > 1;
	if (*diff || merge) {
		if ((merge || p->kind != P_ONELINE) && !(p->kind == P_USER && !*p->user))
			wap_sb_addc(out, '\n');
		wap_sb_adds(out, diff);
	}
}

void wap_git_pretty_entry(const json_t *commit, size_t n, const json_t *req, struct wap_sb *out)
{
	struct pretty p;

	if (!pretty_parse(req, &p, NULL))
		commit_diff(out, &p, commit, n > 0, false);
}

int wap_git_pretty(const json_t *res, const json_t *req, struct wap_sb *out, struct wap_err *err)
{
	const char *action = json_string_value(json_object_get(req, "action"));
	struct pretty p;
	const json_t *v;
	size_t i;

	if (pretty_parse(req, &p, err))
		return -1;
	if (!out)
		return p.kind == P_USER ? user_format(NULL, p.user, p.date, NULL, err) : 0;
	if (action && !strcmp(action, "show")) {
		commit_diff(out, &p, res, false, true);
		return 0;
	}
	json_array_foreach(json_object_get(res, "entries"), i, v)
		commit_diff(out, &p, v, i > 0, false);
	return 0;
}
