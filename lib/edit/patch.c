/* edit/patch.c - parse and apply Codex-style and unified patches, all or
 * nothing (see patch.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diff.h"
#include "file.h"
#include "git.h"
#include "patch.h"
#include "strbuf.h"
#include "text.h"

int wap_patch_fail_at = -1;

static bool starts(struct wap_span l, const char *pfx)
{
	size_t n = strlen(pfx);
	return l.len >= n && !memcmp(l.p, pfx, n);
}

/* A file mode a patch names, as git apply takes it: git knows two modes
 * of a file, 100755 and 100644, told apart by the owner's execute bit.
 * What else a patch may write there (set-user-ID, set-group-ID, sticky,
 * group or world write: "new mode 106777") is no mode git makes, and a
 * patch the agent wrote must not make a set-ID or world-writable file.
 * 0 (no mode) for a line that names none. */
static mode_t git_mode(long m)
{
	if (m <= 0)
		return 0;
	return (m & 0100) ? 0755 : 0644;
}

static struct wap_span sp_trim(struct wap_span s)
{
	while (s.len && (s.p[s.len - 1] == ' ' || s.p[s.len - 1] == '\t' || s.p[s.len - 1] == '\r'))
		s.len--;
	while (s.len && (*s.p == ' ' || *s.p == '\t'))
		s.p++, s.len--;
	return s;
}

static bool is_dir(struct wap_span l, const char *d)
{
	struct wap_span t = sp_trim(l);
	return t.len == strlen(d) && !memcmp(t.p, d, t.len);
}

static char *span_dup(struct wap_span s)
{
	return strndup(s.p, s.len);
}

/* A path of a patch's header line I (0-based): a NUL in it would cut it
 * short, and the patch would change a file it does not name. */
static int path_dup(char **out, struct wap_span s, long i, struct wap_err *err)
{
	if (memchr(s.p, 0, s.len))
		return wap_err_set(err, WAP_E_INVALID, "patch line %ld: the path holds a NUL byte", i + 1);
	if (!(*out = span_dup(s)))
		return wap_err_oom(err);
	return 0;
}

/* ---- building ---- */

static struct wap_pfile *add_file(struct wap_patch *p, enum wap_pkind kind)
{
	struct wap_pfile *nf = realloc(p->f, (p->n + 1) * sizeof(*nf));

	if (!nf)
		return NULL;
	p->f = nf;
	memset(&nf[p->n], 0, sizeof(*nf));
	nf[p->n].kind = kind;
	return &nf[p->n++];
}

static struct wap_phunk *add_hunk(struct wap_pfile *f)
{
	struct wap_phunk *nh = realloc(f->h, (f->nh + 1) * sizeof(*nh));

	if (!nh)
		return NULL;
	f->h = nh;
	memset(&nh[f->nh], 0, sizeof(*nh));
	nh[f->nh].old_start = nh[f->nh].old_count = -1;
	return &nh[f->nh++];
}

static int add_line(struct wap_phunk *h, char op, const char *p, size_t len)
{
	if (h->n == h->cap) {
		size_t nc = h->cap ? h->cap * 2 : 16;
		struct wap_pline *nv = realloc(h->v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		h->v = nv;
		h->cap = nc;
	}
	h->v[h->n].op = op;
	h->v[h->n].s.p = p;
	h->v[h->n].s.len = len;
	h->n++;
	return 0;
}

void wap_patch_release(struct wap_patch *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct wap_pfile *f = &p->f[i];
		for (size_t j = 0; j < f->nh; j++)
			free(f->h[j].v);
		free(f->h);
		free(f->path);
		free(f->move_to);
		free(f->content);
	}
	free(p->f);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

/* the patch text as lines; a patch saved with CRLF is read as LF */
static long patch_lines(char *buf, size_t len, struct wap_span **out)
{
	char *nl = memchr(buf, '\n', len);
	bool crlf = nl && nl > buf && nl[-1] == '\r';

	return wap_lines(buf, len, crlf ? WAP_LINES_CR | WAP_LINES_CR_END : 0, out);
}

/* ---- Codex format ---- */

/* Where the hunks of a Codex patch end.  Codex takes the patch's last line
 * (trimmed) as its "*** End Patch", before looking at the hunks, so a
 * padded end marker is never read as a context line; the same here for the
 * last non-blank line (or the one before a heredoc's closing EOF).  Without
 * such a line the hunks run to the first "*** End Patch" or the end. */
static long codex_end(const struct wap_span *L, long n, long begin)
{
	long j = n - 1;

	while (j > begin && !sp_trim(L[j]).len)
		j--;
	if (j > begin && is_dir(L[j], "EOF"))
		for (j--; j > begin && !sp_trim(L[j]).len; j--)
			;
	return j > begin && is_dir(L[j], "*** End Patch") ? j : n;
}

static int parse_codex(struct wap_patch *p, struct wap_span *L, long n, long begin,
		       struct wap_err *err)
{
	long i = begin + 1;
	bool ended = false;

	while (i < n) {
		struct wap_span l = L[i], t = sp_trim(l);
		struct wap_pfile *f;

		if (is_dir(l, "*** End Patch")) {
			ended = true;
			break;
		}
		if (!t.len) {
			i++;
			continue;
		}
		if (starts(t, "*** Add File:")) {
			struct wap_sb sb = WAP_SB_INIT;
			struct wap_span path = { t.p + 13, t.len - 13 };
			if (!(f = add_file(p, WAP_P_ADD)))
				return wap_err_oom(err);
			if (path_dup(&f->path, sp_trim(path), i, err))
				return -1;
			for (i++; i < n && !starts(L[i], "*** "); i++) {
				if (!L[i].len || L[i].p[0] != '+') {
					wap_sb_release(&sb);
					return wap_err_set(err, WAP_E_INVALID,
							   "patch line %ld: in *** Add File: %s every line must start with '+'",
							   i + 1, f->path);
				}
				wap_sb_add(&sb, L[i].p + 1, L[i].len - 1);
				wap_sb_addc(&sb, '\n');
			}
			if (sb.oom || !wap_sb_grow(&sb, 1)) {
				wap_sb_release(&sb);
				return wap_err_oom(err);
			}
			sb.buf[sb.len] = 0;
			f->clen = sb.len;
			f->content = wap_sb_detach(&sb);
			continue;
		}
		if (starts(t, "*** Delete File:")) {
			struct wap_span path = { t.p + 16, t.len - 16 };
			if (!(f = add_file(p, WAP_P_DELETE)))
				return wap_err_oom(err);
			if (path_dup(&f->path, sp_trim(path), i, err))
				return -1;
			i++;
			continue;
		}
		if (starts(t, "*** Update File:")) {
			struct wap_span path = { t.p + 16, t.len - 16 };
			struct wap_phunk *h = NULL;
			if (!(f = add_file(p, WAP_P_UPDATE)))
				return wap_err_oom(err);
			if (path_dup(&f->path, sp_trim(path), i, err))
				return -1;
			i++;
			if (i < n && starts(sp_trim(L[i]), "*** Move to:")) {
				struct wap_span m = sp_trim(L[i]);
				m.p += 12, m.len -= 12;
				if (path_dup(&f->move_to, sp_trim(m), i, err))
					return -1;
				i++;
			}
			for (; i < n; i++) {
				struct wap_span x = L[i];
				if (is_dir(x, "*** End of File")) {
					if (!h)
						return wap_err_set(err, WAP_E_INVALID,
								   "patch line %ld: *** End of File outside a hunk", i + 1);
					h->eof = true;
					continue;
				}
				if (starts(x, "*** "))
					break;
				if (starts(x, "@@")) {
					struct wap_span c = { x.p + 2, x.len - 2 };
					if (!(h = add_hunk(f)))
						return wap_err_oom(err);
					c = sp_trim(c);
					/* "@@ -1,2 +1,2 @@" in a Codex patch: not a context line */
					if (c.len >= 2 && c.p[0] == '-' && c.len >= 2 &&
					    memmem(c.p, c.len, "@@", 2))
						c.len = 0;
					if (c.len) {
						h->ctx = c;
						h->has_ctx = true;
					}
					continue;
				}
				if (!h && !(h = add_hunk(f)))
					return wap_err_oom(err);
				if (!x.len) {
					if (add_line(h, ' ', x.p, 0))
						return wap_err_oom(err);
				} else if (x.p[0] == ' ' || x.p[0] == '+' || x.p[0] == '-') {
					if (add_line(h, x.p[0], x.p + 1, x.len - 1))
						return wap_err_oom(err);
				} else {
					return wap_err_set(err, WAP_E_INVALID,
							   "patch line %ld: unexpected line in *** Update File: %s "
							   "(hunk lines start with ' ', '+' or '-'): %.*s",
							   i + 1, f->path, (int)(x.len > 80 ? 80 : x.len), x.p);
				}
			}
			for (size_t j = 0; j < f->nh; j++)
				if (!f->h[j].n)
					return wap_err_set(err, WAP_E_INVALID,
							   "*** Update File: %s: hunk %zu has no lines", f->path, j + 1);
			if (!f->nh && !f->move_to)
				return wap_err_set(err, WAP_E_INVALID,
						   "*** Update File: %s has no changes", f->path);
			continue;
		}
		return wap_err_set(err, WAP_E_INVALID,
				   "patch line %ld: expected *** Add File, *** Delete File, *** Update File "
				   "or *** End Patch, got: %.*s", i + 1, (int)(t.len > 80 ? 80 : t.len), t.p);
	}
	(void)ended;
	if (!p->n)
		return wap_err_set(err, WAP_E_INVALID, "the patch changes no file");
	return 0;
}

/* ---- unified diffs ---- */

/* A path from a ---/+++ line or git header: unquoted, timestamp cut.  A
 * NUL in it, raw or quoted ("\000"), sets *NUL (it would cut the path). */
static char *diff_path(struct wap_span s, bool *nul)
{
	struct wap_sb sb = WAP_SB_INIT;

	s = sp_trim(s);
	if (s.len && s.p[0] == '"') {
		for (size_t i = 1; i < s.len && s.p[i] != '"'; i++) {
			char c = s.p[i];
			if (c == '\\' && i + 1 < s.len) {
				char d = s.p[++i];
				if (d >= '0' && d <= '7') {
					int v = 0, k = 0;
					while (k < 3 && i < s.len && s.p[i] >= '0' && s.p[i] <= '7')
						v = v * 8 + (s.p[i++] - '0'), k++;
					i--;
					c = (char)v;
				} else {
					c = d == 'n' ? '\n' : d == 't' ? '\t' : d;
				}
			}
			*nul |= !c;
			wap_sb_addc(&sb, c);
		}
	} else {
		const char *tab = memchr(s.p, '\t', s.len);
		size_t n = tab ? (size_t)(tab - s.p) : s.len;
		*nul |= memchr(s.p, 0, n) != NULL;
		wap_sb_add(&sb, s.p, n);
	}
	if (sb.oom || !wap_sb_grow(&sb, 1)) {
		wap_sb_release(&sb);
		return NULL;
	}
	sb.buf[sb.len] = 0;
	return wap_sb_detach(&sb);
}

static long num(const char **p, const char *end)
{
	long v = 0;
	bool any = false;

	while (*p < end && **p >= '0' && **p <= '9') {
		v = v * 10 + (**p - '0');
		(*p)++;
		any = true;
	}
	return any ? v : -1;
}

/* " SIGNstart[,count]" at *P: 0, or -1 when it does not parse */
static int hunk_range(const char **p, const char *end, char sign, long *start, long *count)
{
	while (*p < end && **p == ' ')
		(*p)++;
	if (*p >= end || *(*p)++ != sign || (*start = num(p, end)) < 0)
		return -1;
	*count = 1;
	if (*p < end && **p == ',') {
		(*p)++;
		if ((*count = num(p, end)) < 0)
			return -1;
	}
	return 0;
}

/* "@@ -a[,b] +c[,d] @@": 0, or -1 when it does not parse */
static int hunk_header(struct wap_span l, long *a, long *b, long *c, long *d)
{
	const char *p = l.p + 2, *end = l.p + l.len;

	return hunk_range(&p, end, '-', a, b) || hunk_range(&p, end, '+', c, d) ? -1 : 0;
}

/* Is the timestamp after the tab of a ---/+++ line the Unix epoch?  `diff
 * -N` dates the absent side of an added or deleted file so (in local
 * time: "1970-01-01 00:00:00.000000000 +0000", "1969-12-31 19:00:00 -0500"),
 * and GNU patch takes such a side, when empty, for no file. */
static bool epoch_stamp(struct wap_span s)
{
	const char *tab = memchr(s.p, '\t', s.len), *p, *end = s.p + s.len;
	long f[6], off;
	int sign;
	long long days, secs;

	if (!tab)
		return false;
	p = tab + 1;
	for (int i = 0; i < 6; i++) {
		if (i && p < end && (*p == '-' || *p == ' ' || *p == ':'))
			p++;
		if ((f[i] = num(&p, end)) < 0)
			return false;
	}
	if (p < end && *p == '.') {
		p++;
		if (num(&p, end) < 0)
			return false;
	}
	while (p < end && *p == ' ')
		p++;
	if (p >= end || (*p != '+' && *p != '-'))
		return false;
	sign = *p++ == '-' ? -1 : 1;
	if ((off = num(&p, end)) < 0)
		return false;
	/* days from the civil date 1970-01-01 (Howard Hinnant's algorithm) */
	{
		long y = f[0] - (f[1] <= 2), era = (y >= 0 ? y : y - 399) / 400;
		long yoe = y - era * 400, mp = (f[1] + 9) % 12;
		long doy = (153 * mp + 2) / 5 + f[2] - 1, doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
		days = era * 146097LL + doe - 719468;
	}
	secs = days * 86400 + f[3] * 3600 + f[4] * 60 + f[5] - sign * ((off / 100) * 3600 + (off % 100) * 60);
	return secs == 0;
}

/* Has F no line on the old side (SIDE '-') or the new one ('+')? */
static bool side_empty(const struct wap_pfile *f, char side)
{
	for (size_t j = 0; j < f->nh; j++)
		for (size_t k = 0; k < f->h[j].n; k++)
			if (f->h[j].v[k].op != (side == '-' ? '+' : '-'))
				return false;
	return f->nh > 0;
}

struct ufile {
	struct wap_pfile *f;
	char *oldp, *newp;		/* from ---/+++ */
	char *gita, *gitb;		/* from diff --git */
	char *ren_from, *ren_to;
	bool git, added, deleted;
	bool old_epoch, new_epoch;	/* ---/+++ dated the Unix epoch */
	bool nul;			/* a header's path held a NUL */
};

static void ufile_release(struct ufile *u)
{
	free(u->oldp);
	free(u->newp);
	free(u->gita);
	free(u->gitb);
	free(u->ren_from);
	free(u->ren_to);
	memset(u, 0, sizeof(*u));
}

static char *strip_pfx(const char *s, const char *pfx)
{
	size_t n = strlen(pfx);
	return strdup(!strncmp(s, pfx, n) && s[n] ? s + n : s);
}

/* decide the kind and paths of a unified file section */
static int ufile_finish(struct ufile *u, struct wap_err *err)
{
	struct wap_pfile *f = u->f;
	char *o = NULL, *nw = NULL;
	bool strip;
	int rc = -1;

	if (!f)
		return 0;
	o = strdup(u->oldp ? u->oldp : u->gita ? u->gita : "");
	nw = strdup(u->newp ? u->newp : u->gitb ? u->gitb : "");
	if (!o || !nw) {
		wap_err_oom(err);
		goto out;
	}
	strip = u->git || ((!strncmp(o, "a/", 2) || !strcmp(o, "/dev/null")) &&
			   (!strncmp(nw, "b/", 2) || !strcmp(nw, "/dev/null")));
	if (!strip && strcmp(o, nw) && strchr(o, '/') && strchr(nw, '/') &&
	    !strcmp(strchr(o, '/'), strchr(nw, '/'))) {
		/* `diff -ur old new`: same path under two top directories */
		char *a = strdup(strchr(o, '/') + 1), *b = strdup(strchr(nw, '/') + 1);
		free(o);
		free(nw);
		o = a, nw = b;
		if (!o || !nw) {
			wap_err_oom(err);
			goto out;
		}
	}
	if (strip) {
		char *a = strip_pfx(o, "a/"), *b = strip_pfx(nw, "b/");
		free(o);
		free(nw);
		o = a, nw = b;
		if (!o || !nw) {
			wap_err_oom(err);
			goto out;
		}
	}
	if (!strcmp(o, "/dev/null") || u->added || (u->old_epoch && side_empty(f, '-'))) {
		f->kind = WAP_P_ADD;
		f->path = strdup(nw);
	} else if (!strcmp(nw, "/dev/null") || u->deleted || (u->new_epoch && side_empty(f, '+'))) {
		f->kind = WAP_P_DELETE;
		f->path = strdup(o);
	} else {
		f->kind = WAP_P_UPDATE;
		if (u->ren_from && u->ren_to) {
			f->path = strdup(u->ren_from);
			f->move_to = strdup(u->ren_to);
		} else if (u->git && strcmp(o, nw)) {
			f->path = strdup(o);
			f->move_to = strdup(nw);
		} else {
			f->path = strdup(*nw ? nw : o);
		}
	}
	if (!f->path || !*f->path) {
		wap_err_set(err, WAP_E_INVALID, "a file in the patch has no name");
		goto out;
	}
	if (f->kind == WAP_P_ADD) {
		struct wap_sb sb = WAP_SB_INIT;
		bool nonl = false, any = false;
		for (size_t j = 0; j < f->nh; j++) {
			for (size_t k = 0; k < f->h[j].n; k++) {
				if (f->h[j].v[k].op == '-') {
					wap_sb_release(&sb);
					wap_err_set(err, WAP_E_INVALID,
						    "new file %s: the patch removes lines from it", f->path);
					goto out;
				}
				wap_sb_add(&sb, f->h[j].v[k].s.p, f->h[j].v[k].s.len);
				wap_sb_addc(&sb, '\n');
				any = true;
			}
			nonl = f->h[j].new_nonl;
		}
		if (any && nonl)
			sb.len--;
		if (sb.oom || !wap_sb_grow(&sb, 1)) {
			wap_sb_release(&sb);
			wap_err_oom(err);
			goto out;
		}
		sb.buf[sb.len] = 0;
		f->clen = sb.len;
		f->content = wap_sb_detach(&sb);
	}
	if (f->kind == WAP_P_UPDATE && !f->nh && !f->move_to && !f->chmod) {
		wap_err_set(err, WAP_E_INVALID, "%s: the patch has no hunks for it", f->path);
		goto out;
	}
	rc = 0;
out:
	free(o);
	free(nw);
	ufile_release(u);
	return rc;
}

static int parse_unified(struct wap_patch *p, struct wap_span *L, long n,
			 const char *dflt, struct wap_err *err)
{
	struct ufile u = { 0 };
	int rc = -1;

	p->unified = true;
	for (long i = 0; i < n && !u.nul; i++) {
		struct wap_span l = L[i];

		if (starts(l, "diff --git ")) {
			const char *s = l.p + 11, *end = l.p + l.len, *b = NULL;
			if (ufile_finish(&u, err))
				goto out;
			if (!(u.f = add_file(p, WAP_P_UPDATE))) {
				wap_err_oom(err);
				goto out;
			}
			u.f->unified = true;
			u.git = true;
			/* "a/X b/Y": split at the last " b/" (or the quoted form) */
			for (const char *q = s; q + 3 <= end; q++)
				if (!memcmp(q, " b/", 3) || !memcmp(q, " \"b/", 4))
					b = q;
			if (b) {
				u.gita = diff_path((struct wap_span){ s, (size_t)(b - s) }, &u.nul);
				u.gitb = diff_path((struct wap_span){ b + 1, (size_t)(end - b - 1) }, &u.nul);
			}
			continue;
		}
		if (starts(l, "--- ") && i + 1 < n && starts(L[i + 1], "+++ ")) {
			if (!u.f || u.f->nh || u.oldp) {
				if (ufile_finish(&u, err))
					goto out;
				if (!(u.f = add_file(p, WAP_P_UPDATE))) {
					wap_err_oom(err);
					goto out;
				}
				u.f->unified = true;
			}
			u.oldp = diff_path((struct wap_span){ l.p + 4, l.len - 4 }, &u.nul);
			u.newp = diff_path((struct wap_span){ L[i + 1].p + 4, L[i + 1].len - 4 }, &u.nul);
			u.old_epoch = epoch_stamp((struct wap_span){ l.p + 4, l.len - 4 });
			u.new_epoch = epoch_stamp((struct wap_span){ L[i + 1].p + 4, L[i + 1].len - 4 });
			if (!u.oldp || !u.newp) {
				wap_err_oom(err);
				goto out;
			}
			i++;
			continue;
		}
		if (u.f && !u.f->nh) {
			if (starts(l, "new file mode ")) {
				long m = strtol(l.p + 14, NULL, 8);
				u.added = true;
				u.f->link = (m & 0170000) == 0120000;
				u.f->mode = u.f->link ? 0 : git_mode(m);
				continue;
			}
			if (starts(l, "new mode ")) {
				long m = strtol(l.p + 9, NULL, 8);
				u.f->link = (m & 0170000) == 0120000;
				u.f->chmod = u.f->link ? 0 : git_mode(m);
				continue;
			}
			/* "index A..B 120000": a symlink's target changes */
			if (starts(l, "index ") && l.len > 7 && !memcmp(l.p + l.len - 7, " 120000", 7)) {
				u.f->link = true;
				continue;
			}
			if (starts(l, "deleted file mode ")) {
				u.deleted = true;
				continue;
			}
			if (starts(l, "rename from ")) {
				free(u.ren_from);
				u.ren_from = diff_path((struct wap_span){ l.p + 12, l.len - 12 }, &u.nul);
				continue;
			}
			if (starts(l, "rename to ")) {
				free(u.ren_to);
				u.ren_to = diff_path((struct wap_span){ l.p + 10, l.len - 10 }, &u.nul);
				continue;
			}
			if (starts(l, "copy from ") || starts(l, "copy to ")) {
				wap_err_set(err, WAP_E_INVALID, "patch line %ld: copies are not supported", i + 1);
				goto out;
			}
		}
		if (starts(l, "Binary files ") || starts(l, "GIT binary patch")) {
			wap_err_set(err, WAP_E_INVALID, "patch line %ld: binary patches are not supported", i + 1);
			goto out;
		}
		if (starts(l, "@@")) {
			struct wap_phunk *h;
			long a, b, c, d, ob, nb;
			bool counted;
			char prev = 0;
			if (!u.f) {
				if (!dflt) {
					wap_err_set(err, WAP_E_INVALID,
						    "patch line %ld: a hunk without a file header (---/+++); "
						    "give the file as PATH", i + 1);
					goto out;
				}
				if (!(u.f = add_file(p, WAP_P_UPDATE)) || !(u.newp = strdup(dflt)) ||
				    !(u.oldp = strdup(dflt))) {
					wap_err_oom(err);
					goto out;
				}
				u.f->unified = true;
			}
			if (!(h = add_hunk(u.f))) {
				wap_err_oom(err);
				goto out;
			}
			counted = hunk_header(l, &a, &b, &c, &d) == 0;
			if (counted) {
				h->old_start = a;
				h->old_count = b;
			}
			ob = counted ? b : 0;
			nb = counted ? d : 0;
			for (i++; i < n; i++) {
				struct wap_span x = L[i];
				char op = x.len ? x.p[0] : ' ';
				if (op == '\\') {
					if (prev == ' ' || prev == '-')
						h->old_nonl = true;
					if (prev == ' ' || prev == '+')
						h->new_nonl = true;
					continue;
				}
				if (counted && ob <= 0 && nb <= 0)
					break;
				if (starts(x, "@@") || starts(x, "diff --git "))
					break;
				if (!counted && starts(x, "--- ") && i + 1 < n && starts(L[i + 1], "+++ "))
					break;
				if (op != ' ' && op != '+' && op != '-')
					break;
				if (add_line(h, op, x.len ? x.p + 1 : x.p, x.len ? x.len - 1 : 0)) {
					wap_err_oom(err);
					goto out;
				}
				prev = op;
				if (op != '+')
					ob--;
				if (op != '-')
					nb--;
			}
			i--;
			continue;
		}
	}
	if (u.nul) {
		wap_err_set(err, WAP_E_INVALID, "the patch names a path holding a NUL byte");
		goto out;
	}
	if (ufile_finish(&u, err))
		goto out;
	if (!p->n) {
		wap_err_set(err, WAP_E_INVALID,
			    "not a patch: expected '*** Begin Patch' or a unified diff (---/+++ and @@ hunks)");
		goto out;
	}
	rc = 0;
out:
	ufile_release(&u);
	return rc;
}

int wap_patch_parse(const char *text, size_t len, const char *dflt_path,
		    struct wap_patch *p, struct wap_err *err)
{
	struct wap_span *L = NULL;
	long n, begin = -1;
	int rc;

	memset(p, 0, sizeof(*p));
	if (!(p->buf = malloc(len + 1)))
		return wap_err_oom(err);
	memcpy(p->buf, text, len);
	p->buf[len] = 0;
	if ((n = patch_lines(p->buf, len, &L)) < 0) {
		wap_patch_release(p);
		return wap_err_oom(err);
	}
	/* a Codex patch begins before any unified file header: a diff whose
	 * context or added lines hold "*** Begin Patch" stays a diff */
	for (long i = 0; i < n && begin < 0; i++) {
		if (starts(L[i], "diff --git ") ||
		    (starts(L[i], "--- ") && i + 1 < n && starts(L[i + 1], "+++ ")))
			break;
		if (is_dir(L[i], "*** Begin Patch"))
			begin = i;
	}
	if (begin >= 0)
		n = codex_end(L, n, begin);
	rc = begin >= 0 ? parse_codex(p, L, n, begin, err) : parse_unified(p, L, n, dflt_path, err);
	free(L);
	if (rc)
		wap_patch_release(p);
	return rc;
}

/* ---- applying to one file ---- */

static long split(const char *t, size_t len, bool crlf, struct wap_span **out)
{
	return wap_lines(t, len, crlf ? WAP_LINES_CR : 0, out);
}

struct lvec {
	struct wap_span *v;
	size_t n, cap;
};

static int lpush(struct lvec *lv, struct wap_span s)
{
	if (lv->n == lv->cap) {
		size_t nc = lv->cap ? lv->cap * 2 : 64;
		struct wap_span *nv = realloc(lv->v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		lv->v = nv;
		lv->cap = nc;
	}
	lv->v[lv->n++] = s;
	return 0;
}

static struct wap_span pline(const struct wap_pline *l, bool crlf)
{
	struct wap_span s = l->s;
	if (crlf && s.len && s.p[s.len - 1] == '\r')
		s.len--;
	return s;
}

static void not_found(const struct wap_pfile *f, size_t hno, const struct wap_span *pat,
		      size_t k, struct wap_err *err)
{
	struct wap_sb sb = WAP_SB_INIT;

	for (size_t j = 0; j < k && j < 12; j++) {
		wap_sb_add(&sb, pat[j].p, pat[j].len);
		wap_sb_addc(&sb, '\n');
	}
	if (k > 12)
		wap_sb_adds(&sb, "...\n");
	wap_err_set(err, WAP_E_NO_MATCH, "Failed to find expected lines in %s (hunk %zu):\n%s",
		    f->path, hno, sb.buf ? sb.buf : "");
	wap_sb_release(&sb);
}

int wap_patch_apply_file(const struct wap_pfile *f, const char *old, size_t oldlen,
			 char **out, size_t *outlen, struct wap_err *err)
{
	bool crlf = wap_text_pure_crlf(old, oldlen);
	bool final_nl = !oldlen || old[oldlen - 1] == '\n';
	struct wap_span *L = NULL, *pat = NULL;
	struct lvec R = { 0 };
	/* OFFSET: how far the last hunk was found from where its header put
	 * it, in the original's lines (L): where the next is looked for
	 * first, as GNU patch carries it (the lines earlier hunks added are
	 * no part of it: L is the file before them) */
	long n = split(old, oldlen, crlf, &L), offset = 0;
	size_t pos = 0;
	struct wap_sb sb = WAP_SB_INIT;
	int rc = -1;

	*out = NULL;
	if (n < 0)
		return wap_err_oom(err);
	for (size_t hi = 0; hi < f->nh; hi++) {
		const struct wap_phunk *h = &f->h[hi];
		size_t k = 0, start = pos, take;
		long at;
		int level;

		free(pat);
		pat = malloc((h->n ? h->n : 1) * sizeof(*pat));
		if (!pat) {
			wap_err_oom(err);
			goto out;
		}
		for (size_t j = 0; j < h->n; j++)
			if (h->v[j].op != '+')
				pat[k++] = pline(&h->v[j], crlf);
		if (!f->unified && h->has_ctx) {
			long c = wap_seek_lines(L, n, &h->ctx, 1, pos, false, -1, &level);
			if (c < 0) {
				wap_err_set(err, WAP_E_NO_MATCH, "Failed to find context '%.*s' in %s",
					    (int)h->ctx.len, h->ctx.p, f->path);
				goto out;
			}
			start = (size_t)c + 1;
			/* a context line that is also the chunk's first line (a
			 * common slip): search from the context line itself */
			if (k && start + k - 1 <= (size_t)n &&
			    wap_seek_lines(L, n, pat, k, start, h->eof, -1, &level) < 0)
				start = (size_t)c;
		}
		take = k;
		if (k == 0) {
			if (f->unified && h->old_start >= 0)
				at = h->old_start + offset;
			else if (h->has_ctx)
				at = (long)start;
			else
				at = n;
			if (at < (long)pos)
				at = (long)pos;
			if (at > n)
				at = n;
		} else if (f->unified) {
			long hint = h->old_start > 0 ? h->old_start - 1 + offset : (long)pos;
			if (hint < (long)pos)
				hint = (long)pos;
			at = wap_seek_lines(L, n, pat, k, pos, false, hint, &level);
		} else {
			at = wap_seek_lines(L, n, pat, k, start, h->eof, -1, &level);
			if (at < 0 && k > 1 && pat[k - 1].len == 0) {
				take = k - 1;
				at = wap_seek_lines(L, n, pat, take, start, h->eof, -1, &level);
			}
		}
		if (at < 0) {
			not_found(f, hi + 1, pat, k, err);
			goto out;
		}
		if (f->unified && h->old_start >= 0 && (k == 0 || h->old_start > 0))
			offset = at - (k ? h->old_start - 1 : h->old_start);
		for (long j = (long)pos; j < at; j++)
			if (lpush(&R, L[j]))
				goto nomem;
		{
			size_t j = 0;
			for (size_t q = 0; q < h->n; q++) {
				char op = h->v[q].op;
				if (op == '+') {
					if (lpush(&R, pline(&h->v[q], crlf)))
						goto nomem;
					continue;
				}
				if (j >= take)
					continue;	/* a dropped trailing empty line */
				if (op == ' ') {
					/* keep the file's own spelling of context lines */
					if (lpush(&R, L[at + j]))
						goto nomem;
				}
				j++;
			}
		}
		pos = (size_t)at + take;
		if ((long)pos == n && f->unified && (h->old_nonl || h->new_nonl))
			final_nl = !h->new_nonl;
	}
	/* Codex's apply_patch ends every file it updates with a newline */
	if (!f->unified)
		final_nl = true;
	for (long j = (long)pos; j < n; j++)
		if (lpush(&R, L[j]))
			goto nomem;
	for (size_t j = 0; j < R.n; j++) {
		wap_sb_add(&sb, R.v[j].p, R.v[j].len);
		if (j + 1 < R.n || final_nl)
			wap_sb_adds(&sb, crlf ? "\r\n" : "\n");
	}
	if (sb.oom || !wap_sb_grow(&sb, 1))
		goto nomem;
	sb.buf[sb.len] = 0;
	*outlen = sb.len;
	*out = wap_sb_detach(&sb);
	rc = 0;
	goto out;
nomem:
	wap_err_oom(err);
out:
	wap_sb_release(&sb);
	free(R.v);
	free(L);
	free(pat);
	return rc;
}

/* ---- the workspace side ---- */

struct ent {
	char *rel;
	bool orig_exists, cur_exists;
	char *orig, *cur;
	size_t olen, clen;
	char ver[WAP_VERSION_LEN + 1];
	mode_t mode;		/* of the original, or for a new file (0: default) */
	mode_t want_mode;	/* a mode change asked for an existing file, or 0 */
	bool olink, clink;	/* the original, the current one is a symlink
				 * (orig, cur: its target) */
	size_t keep_dirs;	/* length of the longest existing parent of rel */
	char newver[WAP_VERSION_LEN + 1];
};

struct pop {
	char status;
	struct ent *e, *from;
	char *before, *after;	/* NULL: absent */
	size_t blen, alen;
};

struct plan {
	struct ent **e;
	size_t ne;
	struct pop *op;
	size_t nop;
	bool force;		/* read-only files may be replaced */
};

static void plan_release(struct plan *pl)
{
	for (size_t i = 0; i < pl->ne; i++) {
		free(pl->e[i]->rel);
		free(pl->e[i]->orig);
		free(pl->e[i]->cur);
		free(pl->e[i]);
	}
	free(pl->e);
	for (size_t i = 0; i < pl->nop; i++) {
		free(pl->op[i].before);
		free(pl->op[i].after);
	}
	free(pl->op);
}

static char *memdup0(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		if (n)
			memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

/* REL's target into *OUT (malloc'd) when REL is a symlink: 0; else -1 */
static int read_link(const struct wap_ws *ws, const char *rel, char **out, size_t *len)
{
	struct wap_err tmp = { 0 };
	const char *name;
	char target[PATH_MAX];
	int dfd = wap_ws_open_parent(ws, rel, false, &name, &tmp);
	ssize_t n = -1;
	struct stat st;

	wap_err_release(&tmp);
	if (dfd < 0)
		return -1;
	if (!fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
		n = readlinkat(dfd, name, target, sizeof(target));
	close(dfd);
	if (n < 0 || n >= (ssize_t)sizeof(target) || !(*out = memdup0(target, n)))
		return -1;
	*len = n;
	return 0;
}

static struct ent *get_ent(const struct wap_ws *ws, struct plan *pl, const char *path,
			   struct wap_err *err)
{
	char *rel = NULL;
	struct ent *e, **ne;
	struct wap_err tmp = { 0 };
	struct stat st;

	if (wap_ws_rel(ws, path, strlen(path), &rel, err))
		return NULL;
	for (size_t i = 0; i < pl->ne; i++)
		if (!strcmp(pl->e[i]->rel, rel)) {
			free(rel);
			return pl->e[i];
		}
	if (wap_ws_check(ws, rel, WAP_ACC_WRITE, err)) {
		free(rel);
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	ne = realloc(pl->e, (pl->ne + 1) * sizeof(*ne));
	if (!e || !ne) {
		free(e);
		free(rel);
		if (ne)
			pl->e = ne;
		wap_err_oom(err);
		return NULL;
	}
	pl->e = ne;
	e->rel = rel;
	if (read_link(ws, rel, &e->orig, &e->olen) == 0) {
		e->orig_exists = e->olink = true;
		if (wap_blob_id(e->orig, e->olen, e->ver, err)) {
			free(e->orig);
			free(rel);
			free(e);
			return NULL;
		}
	} else if (wap_read_file(ws, rel, ws->lim.max_file_size, &e->orig, &e->olen, &st, &tmp) == 0) {
		e->orig_exists = true;
		e->mode = st.st_mode & 07777;
		if (wap_blob_id(e->orig, e->olen, e->ver, err)) {
			free(e->orig);
			free(rel);
			free(e);
			return NULL;
		}
	} else if (tmp.kind == WAP_E_NOT_FOUND) {
		wap_err_release(&tmp);
	} else {
		if (err) {
			wap_err_release(err);
			*err = tmp;
		} else {
			wap_err_release(&tmp);
		}
		free(rel);
		free(e);
		return NULL;
	}
	e->cur_exists = e->orig_exists;
	e->clink = e->olink;
	if (e->orig_exists && !(e->cur = memdup0(e->orig, e->olen))) {
		free(e->orig);
		free(rel);
		free(e);
		wap_err_oom(err);
		return NULL;
	}
	e->clen = e->olen;
	if (!e->orig_exists) {
		/* how much of the path exists, so that undoing a creation
		 * removes only the directories it made */
		char *d = strdup(rel), *slash;
		while (d && (slash = strrchr(d, '/'))) {
			struct wap_err t2 = { 0 };
			int fd;
			*slash = 0;
			fd = wap_ws_open(ws, d, O_PATH | O_DIRECTORY, 0, WAP_ACC_READ, &t2);
			wap_err_release(&t2);
			if (fd >= 0) {
				close(fd);
				e->keep_dirs = strlen(d);
				break;
			}
		}
		free(d);
	}
	pl->e[pl->ne++] = e;
	return e;
}

static int add_op(struct plan *pl, char status, struct ent *e, struct ent *from,
		  const char *before, size_t blen, const char *after, size_t alen,
		  struct wap_err *err)
{
	struct pop *no = realloc(pl->op, (pl->nop + 1) * sizeof(*no)), *o;

	if (!no)
		return wap_err_oom(err);
	pl->op = no;
	o = &no[pl->nop];
	memset(o, 0, sizeof(*o));
	o->status = status;
	o->e = e;
	o->from = from;
	if (before && !(o->before = memdup0(before, blen)))
		return wap_err_oom(err);
	o->blen = blen;
	if (after && !(o->after = memdup0(after, alen))) {
		free(o->before);
		return wap_err_oom(err);
	}
	o->alen = alen;
	pl->nop++;
	return 0;
}

static void set_cur(struct ent *e, char *buf, size_t len)
{
	free(e->cur);
	e->cur = buf;
	e->clen = len;
	e->cur_exists = buf != NULL;
	if (!buf)
		e->clink = false;
}

/* a symlink target is a path: not empty, no NUL, shorter than PATH_MAX */
static bool link_target_bad(const char *t, size_t n)
{
	return !n || n >= PATH_MAX || memchr(t, 0, n);
}

static int plan_file(const struct wap_ws *ws, struct plan *pl, const struct wap_pfile *f,
		     struct wap_err *err)
{
	struct ent *e = get_ent(ws, pl, f->path, err), *d;
	bool link;
	char *nw = NULL;
	size_t nl = 0;

	if (!e)
		return -1;
	/* hunks are text: a binary file is only renamed, chmodded or deleted */
	if (e->cur_exists && f->kind != WAP_P_ADD && f->nh && wap_text_is_binary(e->cur, e->clen))
		return wap_err_set(err, WAP_E_INVALID, "%s is a binary file: patch refused", e->rel);
	switch (f->kind) {
	case WAP_P_ADD:
		/* Codex's apply_patch writes an added file over one that is
		 * there (the agent said what the file is to hold); a unified
		 * diff's "new file" over an existing one is refused as by git */
		if (e->cur_exists && f->unified)
			return wap_err_set(err, WAP_E_EXISTS, "File already exists: %s (the patch adds it)",
					   e->rel);
		if (f->link && link_target_bad(f->content, f->clen))
			return wap_err_set(err, WAP_E_INVALID, "%s: not a symlink target", e->rel);
		if (!(nw = memdup0(f->content, f->clen)))
			return wap_err_oom(err);
		if (e->cur_exists) {
			if (add_op(pl, 'M', e, NULL, e->cur, e->clen, nw, f->clen, err)) {
				free(nw);
				return -1;
			}
			set_cur(e, nw, f->clen);
			e->clink = f->link;
			return 0;
		}
		set_cur(e, nw, f->clen);
		e->clink = f->link;
		if (!e->orig_exists || e->olink)
			e->mode = f->mode;
		return add_op(pl, 'A', e, NULL, NULL, 0, e->cur, e->clen, err);
	case WAP_P_DELETE:
		if (!e->cur_exists)
			return wap_err_set(err, WAP_E_NOT_FOUND, "File not found: %s", e->rel);
		if (f->nh) {
			/* a unified diff shows what it deletes: it must be what is there */
			if (wap_patch_apply_file(f, e->cur, e->clen, &nw, &nl, err))
				return -1;
			free(nw);
			if (nl)
				return wap_err_set(err, WAP_E_NO_MATCH,
						   "%s does not match the content the patch deletes", e->rel);
		}
		if (add_op(pl, 'D', e, NULL, e->cur, e->clen, NULL, 0, err))
			return -1;
		set_cur(e, NULL, 0);
		return 0;
	case WAP_P_UPDATE:
		if (!e->cur_exists)
			return wap_err_set(err, WAP_E_NOT_FOUND, "File not found: %s", e->rel);
		/* a symlink's target changes only by a diff that says it is
		 * one (mode 120000); a file is no symlink's target */
		if (e->clink != f->link && (f->nh || f->link))
			return wap_err_set(err, WAP_E_INVALID, e->clink ? "%s is a symlink: the patch "
					   "changes it as a file" : "%s is not a symlink: the patch changes "
					   "it as one", e->rel);
		if (wap_patch_apply_file(f, e->cur, e->clen, &nw, &nl, err))
			return -1;
		if (f->link && link_target_bad(nw, nl)) {
			free(nw);
			return wap_err_set(err, WAP_E_INVALID, "%s: not a symlink target", e->rel);
		}
		if (!f->move_to) {
			if (f->chmod)
				e->want_mode = f->chmod;
			if (add_op(pl, 'M', e, NULL, e->cur, e->clen, nw, nl, err)) {
				free(nw);
				return -1;
			}
			set_cur(e, nw, nl);
			return 0;
		}
		if (!(d = get_ent(ws, pl, f->move_to, err))) {
			free(nw);
			return -1;
		}
		/* Codex moves onto an existing file, replacing it; a unified
		 * diff's rename onto one is refused as by git */
		if (d != e && d->cur_exists && f->unified) {
			free(nw);
			return wap_err_set(err, WAP_E_EXISTS, "File already exists: %s (the patch moves %s there)",
					   d->rel, e->rel);
		}
		if (add_op(pl, 'R', d, e, e->cur, e->clen, nw, nl, err)) {
			free(nw);
			return -1;
		}
		if (f->chmod)
			d->want_mode = f->chmod;
		link = e->clink;	/* before set_cur(e, NULL) forgets it */
		if (d != e) {
			if (!d->orig_exists)
				d->mode = f->chmod ? f->chmod : e->mode;
			set_cur(e, NULL, 0);
		}
		set_cur(d, nw, nl);
		d->clink = link;
		return 0;
	}
	return 0;
}

/* Is NAME in DFD (REL) still at version EXPECTED (NULL: whatever it has)?
 * A symlink's version is its target's, a file's its bytes'.  0, or -1 with
 * err (CONFLICT, or it is gone).  The caller holds the directory's lock. */
static int entry_is(int dfd, const char *name, const char *rel, const char *expected,
		    struct wap_err *err)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return wap_err_errno(err, errno, rel);
	if (expected && S_ISLNK(st.st_mode)) {
		char cur[WAP_VERSION_LEN + 1], target[PATH_MAX];
		ssize_t n = readlinkat(dfd, name, target, sizeof(target));
		if (n < 0)
			return wap_err_errno(err, errno, rel);
		if (wap_blob_id(target, n, cur, err))
			return -1;
		if (strcmp(cur, expected))
			return wap_err_set(err, WAP_E_CONFLICT,
					   "Conflict: %s changed since version %s (now %s); read it again",
					   rel, expected, cur);
	} else if (expected && S_ISREG(st.st_mode)) {
		char cur[WAP_VERSION_LEN + 1];
		int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			return wap_err_errno(err, errno, rel);
		/* hashed in chunks: the file is never held whole */
		if (wap_blob_id_fd(fd, cur, err)) {
			close(fd);
			return -1;
		}
		close(fd);
		if (strcmp(cur, expected))
			return wap_err_set(err, WAP_E_CONFLICT,
					   "Conflict: %s changed since version %s (now %s); read it again",
					   rel, expected, cur);
	}
	return 0;
}

/* Remove REL if it still has version EXPECTED (NULL: whatever it has). */
static int delete_file(const struct wap_ws *ws, const char *rel, const char *expected,
		       struct wap_err *err)
{
	const char *name;
	int dfd = wap_ws_open_parent(ws, rel, false, &name, err), rc = -1;

	if (dfd < 0)
		return -1;
	if (wap_dir_lock(dfd, rel, err)) {
		close(dfd);
		return -1;
	}
	if (entry_is(dfd, name, rel, expected, err))
		goto out;
	if (unlinkat(dfd, name, 0)) {
		wap_err_errno(err, errno, rel);
		goto out;
	}
	fsync(dfd);
	rc = 0;
out:
	flock(dfd, LOCK_UN);
	close(dfd);
	return rc;
}

/* After a deletion, remove the directories it left empty (as git does),
 * keeping the first KEEP bytes of the path. */
static void prune_dirs(const struct wap_ws *ws, const char *rel, size_t keep)
{
	char *d = strdup(rel), *slash;

	while (d && (slash = strrchr(d, '/'))) {
		const char *name;
		int dfd;
		struct wap_err tmp = { 0 };
		*slash = 0;
		if (!*d || !strcmp(d, ".") || strlen(d) <= keep)
			break;
		dfd = wap_ws_open_parent(ws, d, false, &name, &tmp);
		wap_err_release(&tmp);
		if (dfd < 0)
			break;
		if (unlinkat(dfd, name, AT_REMOVEDIR)) {
			close(dfd);
			break;
		}
		close(dfd);
	}
	free(d);
}

enum step_kind { ST_OVERWRITE, ST_CREATE, ST_DELETE, ST_CHMOD };

static bool content_changed(const struct ent *e)
{
	if (e->orig_exists != e->cur_exists || e->olink != e->clink)
		return true;
	return e->cur_exists && (e->olen != e->clen || memcmp(e->orig, e->cur, e->clen));
}

static bool mode_changed(const struct ent *e)
{
	return e->orig_exists && e->cur_exists && !e->clink && e->want_mode && e->want_mode != e->mode;
}

static int set_mode(const struct wap_ws *ws, const char *rel, mode_t mode, struct wap_err *err)
{
	/* O_NONBLOCK: a FIFO put at REL meanwhile is not waited on */
	int fd = wap_ws_open(ws, rel, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0, WAP_ACC_WRITE, err);
	int rc = 0;

	if (fd < 0)
		return -1;
	if (fchmod(fd, mode))
		rc = wap_err_errno(err, errno, rel);
	close(fd);
	return rc;
}

/* Write REL as a symlink to DATA (LINK) or as a file, where a symlink or a
 * file of version EXPECTED (NULL: none) is.  The new one is made whole
 * under a temporary name beside it, then renamed over the old one (checked
 * still at EXPECTED, under the directory's lock): a disk that is full, a
 * link that cannot be made, leave the old one as it was.  The link is
 * never followed, here or later (every open is confined beneath the root),
 * as `wap cp` copies one. */
static int put_entry(const struct wap_ws *ws, const char *rel, bool link, const char *data,
		     size_t len, mode_t mode, const char *expected, bool force, char *newver,
		     struct wap_err *err)
{
	struct wap_wopts o = { .mode = WAP_W_CREATE, .mkparents = true, .newmode = mode,
			       .force = force };
	struct wap_wres r;
	static unsigned seq;
	const char *name, *slash;
	char tmp[64], *target = NULL, *trel = NULL;
	bool made = false;
	int dfd, rc = -1;

	if (!link && !expected) {
		/* a new file where there is none: made in one step */
		if (wap_write_file(ws, rel, data, len, &o, &r, err))
			return -1;
		memcpy(newver, r.version, WAP_VERSION_LEN + 1);
		return 0;
	}
	dfd = wap_ws_open_parent(ws, rel, true, &name, err);
	if (dfd < 0)
		return -1;
	slash = strrchr(rel, '/');
	for (int tries = 0; !made && tries < 100; tries++) {
		snprintf(tmp, sizeof(tmp), ".wap-link.%d.%u", (int)getpid(),
			 __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
		if (link) {
			if (!target && !(target = memdup0(data, len))) {
				wap_err_oom(err);
				goto out;
			}
			if (!symlinkat(target, dfd, tmp))
				made = true;
			else if (errno != EEXIST) {
				wap_err_errno(err, errno, rel);
				goto out;
			}
			continue;
		}
		/* a file: written by the one writer, beside REL, as a new file */
		free(trel);
		if (asprintf(&trel, "%.*s%s%s", slash ? (int)(slash - rel) : 0, rel,
			     slash ? "/" : "", tmp) < 0) {
			trel = NULL;
			wap_err_oom(err);
			goto out;
		}
		if (!wap_write_file(ws, trel, data, len, &o, &r, err)) {
			made = true;
		} else if (err && err->kind == WAP_E_EXISTS) {
			wap_err_release(err);
		} else {
			goto out;
		}
	}
	if (!made) {
		wap_err_errno(err, EEXIST, rel);
		goto out;
	}
	if (wap_dir_lock(dfd, rel, err))
		goto out;
	if (expected && entry_is(dfd, name, rel, expected, err)) {
		flock(dfd, LOCK_UN);
		goto out;
	}
	if (renameat(dfd, tmp, dfd, name)) {
		wap_err_errno(err, errno, rel);
		flock(dfd, LOCK_UN);
		goto out;
	}
	made = false;	/* renamed: nothing to clean up */
	flock(dfd, LOCK_UN);
	fsync(dfd);
	if (link)
		rc = wap_blob_id(target, len, newver, err);
	else {
		memcpy(newver, r.version, WAP_VERSION_LEN + 1);
		rc = 0;
	}
out:
	if (made)
		unlinkat(dfd, tmp, 0);
	close(dfd);
	free(target);
	free(trel);
	return rc;
}

static int do_step(const struct wap_ws *ws, struct ent *e, enum step_kind k, int stepno,
		   int fail_at, bool force, struct wap_err *err)
{
	struct wap_wopts o = { 0 };
	struct wap_wres r;

	if (stepno == fail_at)
		return wap_err_set(err, WAP_E_FAILED, "cannot write %s: injected failure (test)", e->rel);
	if (k == ST_CHMOD)
		return set_mode(ws, e->rel, e->want_mode, err);
	if (k == ST_DELETE) {
		if (delete_file(ws, e->rel, e->ver, err))
			return -1;
		prune_dirs(ws, e->rel, 0);
		return 0;
	}
	/* a symlink made, changed or made a file: removed and made anew */
	if (e->clink || (k == ST_OVERWRITE && e->olink))
		return put_entry(ws, e->rel, e->clink, e->cur, e->clen, e->mode,
				 k == ST_OVERWRITE ? e->ver : NULL, force, e->newver, err);
	o.mode = k == ST_CREATE ? WAP_W_CREATE : WAP_W_OVERWRITE;
	o.mkparents = k == ST_CREATE;
	o.expected_version = k == ST_OVERWRITE ? e->ver : NULL;
	o.newmode = e->mode;
	o.force = force;
	if (wap_write_file(ws, e->rel, e->cur, e->clen, &o, &r, err))
		return -1;
	memcpy(e->newver, r.version, sizeof(e->newver));
	return 0;
}

/* put one committed step back; returns 0 or -1 with err */
static int undo_step(const struct wap_ws *ws, struct ent *e, enum step_kind k,
		     struct wap_err *err)
{
	struct wap_wopts o = { .force = true };	/* putting back is always allowed */
	char ver[WAP_VERSION_LEN + 1];

	if ((k == ST_OVERWRITE && (e->olink || e->clink)) || (k == ST_DELETE && e->olink))
		return put_entry(ws, e->rel, e->olink, e->orig, e->olen, e->mode,
				 k == ST_OVERWRITE ? e->newver : NULL, true, ver, err);
	switch (k) {
	case ST_CHMOD:
		return set_mode(ws, e->rel, e->mode, err);
	case ST_OVERWRITE:
		o.mode = WAP_W_OVERWRITE;
		o.expected_version = e->newver;
		return wap_write_file(ws, e->rel, e->orig, e->olen, &o, NULL, err);
	case ST_CREATE:
		if (delete_file(ws, e->rel, e->newver, err))
			return -1;
		prune_dirs(ws, e->rel, e->keep_dirs);
		return 0;
	case ST_DELETE:
		o.mode = WAP_W_CREATE;
		o.mkparents = true;
		o.newmode = e->mode;
		return wap_write_file(ws, e->rel, e->orig, e->olen, &o, NULL, err);
	}
	return 0;
}

struct done {
	struct ent *e;
	enum step_kind k;
};

/* Undo the ND steps done, newest first, and say so in ERR's message. */
static void rollback(const struct wap_ws *ws, struct done *done, size_t nd, struct wap_err *err)
{
	struct wap_sb bad = WAP_SB_INIT;

	while (nd--) {
		struct wap_err uerr = { 0 };
		if (undo_step(ws, done[nd].e, done[nd].k, &uerr))
			wap_sb_addf(&bad, "%s%s (%s)", bad.len ? ", " : "", done[nd].e->rel, uerr.msg);
		wap_err_release(&uerr);
	}
	if (err) {
		size_t ml = strlen(err->msg);
		if (bad.len)
			snprintf(err->msg + ml, sizeof(err->msg) - ml,
				 "; the patch was not applied, but restoring failed for: %s", bad.buf);
		else
			snprintf(err->msg + ml, sizeof(err->msg) - ml,
				 "; the patch was not applied (files already written were restored)");
	}
	wap_sb_release(&bad);
}

static int commit(const struct wap_ws *ws, struct plan *pl, struct wap_err *err)
{
	struct done *done = calloc(2 * pl->ne + 1, sizeof(*done));
	const char *env = getenv("WAP_TEST_PATCH_FAIL_AT");
	int fail_at = env && *env ? atoi(env) : wap_patch_fail_at, stepno = 0;
	size_t nd = 0;

	if (!done)
		return wap_err_oom(err);
	/* writes first, then mode changes, deletions last */
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < pl->ne; i++) {
			struct ent *e = pl->e[i];
			enum step_kind k;
			if (pass == 0 && e->cur_exists && content_changed(e))
				k = e->orig_exists ? ST_OVERWRITE : ST_CREATE;
			else if (pass == 1 && mode_changed(e))
				k = ST_CHMOD;
			else if (pass == 2 && !e->cur_exists && e->orig_exists)
				k = ST_DELETE;
			else
				continue;
			if (do_step(ws, e, k, stepno++, fail_at, pl->force, err)) {
				rollback(ws, done, nd, err);
				free(done);
				return -1;
			}
			done[nd].e = e;
			done[nd].k = k;
			nd++;
		}
	free(done);
	return 0;
}

int wap_patch_run(const struct wap_ws *ws, const struct wap_patch *p,
		  const char *expected_version, bool dry_run, json_t **files,
		  struct wap_err *err)
{
	struct plan pl = { 0 };
	json_t *arr = NULL;
	int rc = -1;

	*files = NULL;
	for (size_t i = 0; i < p->n; i++)
		if (plan_file(ws, &pl, &p->f[i], err))
			goto out;
	if (expected_version) {
		struct ent *only = NULL;
		size_t nexist = 0;
		for (size_t i = 0; i < pl.ne; i++)
			if (pl.e[i]->orig_exists)
				only = pl.e[i], nexist++;
		if (nexist != 1 || pl.ne != 1) {
			wap_err_set(err, WAP_E_INVALID,
				    "expected_version needs a patch that changes exactly one existing file");
			goto out;
		}
		if (strcmp(only->ver, expected_version)) {
			wap_err_set(err, WAP_E_CONFLICT,
				    "Conflict: %s changed since version %s (now %s); read it again",
				    only->rel, expected_version, only->ver);
			wap_err_details(err, json_pack("{s:s, s:s}", "expected_version", expected_version,
						       "current_version", only->ver));
			goto out;
		}
	}
	/* the diffs below need libgit2: load it before writing anything */
	if (wap_git_init(err))
		goto out;
	pl.force = p->force;
	if (!dry_run && commit(ws, &pl, err))
		goto out;
	arr = json_array();
	for (size_t i = 0; i < pl.nop; i++) {
		struct pop *o = &pl.op[i];
		struct wap_diff d;
		const char *from = o->from ? o->from->rel : o->e->rel;
		json_t *j;
		if (wap_diff_make(o->before, o->blen, o->after, o->alen, from, o->e->rel, &d, err))
			goto out;
		j = json_pack("{s:s#, s:s, s:o, s:I, s:I}", "status", &o->status, (int)1,
			      "path", o->e->rel, "diff", wap_diff_json(&d),
			      "additions", (json_int_t)d.additions, "deletions", (json_int_t)d.deletions);
		wap_diff_release(&d);
		if (!j) {
			wap_err_oom(err);
			goto out;
		}
		if (o->from)
			json_object_set_new(j, "from", json_string(o->from->rel));
		json_array_append_new(arr, j);
	}
	/* the version each path has now: after the patch, or in a dry run
	 * the current one (what to pass as expected_version next) */
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *j = json_array_get(arr, i);
		const char *path = json_string_value(json_object_get(j, "path"));
		for (size_t k = 0; k < pl.ne; k++) {
			struct ent *e = pl.e[k];
			char v[WAP_VERSION_LEN + 1];
			if (strcmp(e->rel, path))
				continue;
			if (dry_run) {
				if (e->orig_exists)
					json_object_set_new(j, "version", json_string(e->ver));
				continue;
			}
			if (!e->cur_exists)
				continue;
			if (wap_blob_id(e->cur, e->clen, v, err))
				goto out;
			json_object_set_new(j, "version", json_string(v));
		}
	}
	*files = arr;
	arr = NULL;
	rc = 0;
out:
	json_decref(arr);
	plan_release(&pl);
	return rc;
}
