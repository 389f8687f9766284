/* fs/ignore.c - gitignore rules: parsing, git's wildmatch, precedence.
 *
 * The matching mirrors git's dir.c (match_basename / match_pathname) and
 * wildmatch.c so that decisions agree with `git check-ignore`.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ignore.h"

#define PAT_NEG		1u
#define PAT_DIRONLY	2u
#define PAT_NODIR	4u	/* no slash: match the base name */
#define PAT_LITERAL	8u	/* no wildcard at all */
#define PAT_ENDSWITH	16u	/* "*" + literal */

struct pat {
	char *s;		/* pattern (leading '/' and trailing '/' removed) */
	size_t len;
	size_t prefix;		/* literal bytes before the first wildcard */
	unsigned flags;
};

struct wap_ign_list {
	struct pat *p;
	size_t n;
};

/* ---- git's wildmatch ---- */

#define WM_MATCH		0
#define WM_NOMATCH		1
#define WM_ABORT_ALL		-1
#define WM_ABORT_TO_STARSTAR	-2
#define WM_PATHNAME		1u

static bool is_special(unsigned char c)
{
	return c == '*' || c == '?' || c == '[' || c == '\\';
}

static bool cc_is(const unsigned char *s, int n, const char *name)
{
	return (int)strlen(name) == n && !memcmp(s, name, n);
}

/* git's wildmatch backtracks: a star tries every place in the text, and
 * each of those the stars after it, so "**" "/" "*x*x*x*x*x*x*x*x*" "/" "**"
 * on a path of 31 levels of x's ran for minutes (a .gitignore in the
 * workspace is the agent's to write, and every grep and glob reads it).
 * Its answer at a place of the pattern and of the text is always the
 * same, so after WM_STEPS tries the match is done again with each such
 * answer kept (a byte for each place of the one times the other): each
 * is worked out once, the pattern's length times the text's at most. */
#define WM_RESTART		-3	/* the steps are spent: start again, with the memo */
#define WM_STEPS		4096
#define WM_MEMO_MAX		((size_t)64 << 20)

struct wm {
	const unsigned char *p0, *t0;	/* where the pattern and the text begin */
	size_t tn;			/* the text's length + 1 */
	unsigned steps;			/* tries left before the memo */
	signed char *memo;		/* [(p - p0) * tn + (text - t0)]: answer + 4, 0 none yet */
};

static int dowild(const unsigned char *p, const unsigned char *text, unsigned flags,
		  const unsigned char *pstart, struct wm *wm);

/* dowild() at P and TEXT, once each with the memo */
static int rec(const unsigned char *p, const unsigned char *text, unsigned flags,
	       const unsigned char *pstart, struct wm *wm)
{
	signed char *m;
	int r;

	if (!wm->memo) {
		if (!wm->steps)
			return WM_RESTART;
		wm->steps--;
		return dowild(p, text, flags, pstart, wm);
	}
	m = &wm->memo[(size_t)(p - wm->p0) * wm->tn + (size_t)(text - wm->t0)];
	if (*m)
		return *m - 4;
	r = dowild(p, text, flags, pstart, wm);
	*m = (signed char)(r + 4);
	return r;
}

static int dowild(const unsigned char *p, const unsigned char *text, unsigned flags,
		  const unsigned char *pstart, struct wm *wm)
{
	unsigned char p_ch;

	for (; (p_ch = *p) != 0; text++, p++) {
		int matched, match_slash, negated;
		unsigned char t_ch, prev_ch;

		if ((t_ch = *text) == 0 && p_ch != '*')
			return WM_ABORT_ALL;
		switch (p_ch) {
		case '\\':
			p_ch = *++p;
			if (!p_ch)
				return WM_NOMATCH;
			/* fall through */
		default:
			if (t_ch != p_ch)
				return WM_NOMATCH;
			continue;
		case '?':
			if ((flags & WM_PATHNAME) && t_ch == '/')
				return WM_NOMATCH;
			continue;
		case '*':
			if (*++p == '*') {
				const unsigned char *prev_p = p - 2;
				while (*++p == '*')
					;
				if ((prev_p < pstart || *prev_p == '/') &&
				    (*p == 0 || *p == '/' || (p[0] == '\\' && p[1] == '/'))) {
					/* no directory: an abort is the loop's
					 * too (it tries the rest on what is
					 * left of this text), or each "**\/"
					 * doubles the work */
					if (p[0] == '/' &&
					    (matched = rec(p + 1, text, flags, pstart, wm)) != WM_NOMATCH &&
					    matched != WM_ABORT_TO_STARSTAR)
						return matched;
					match_slash = 1;
				} else {
					match_slash = (flags & WM_PATHNAME) ? 0 : 1;
				}
			} else {
				match_slash = (flags & WM_PATHNAME) ? 0 : 1;
			}
			if (*p == 0) {
				if (!match_slash && strchr((const char *)text, '/'))
					return WM_NOMATCH;
				return WM_MATCH;
			} else if (!match_slash && *p == '/') {
				const char *slash = strchr((const char *)text, '/');
				if (!slash)
					return WM_NOMATCH;
				text = (const unsigned char *)slash;
				break;
			}
			for (;;) {
				if (t_ch == 0)
					break;
				if (!is_special(*p)) {
					unsigned char c = *p;
					while ((t_ch = *text) != 0 && (match_slash || t_ch != '/')) {
						if (t_ch == c)
							break;
						text++;
					}
					/* what the loop below would come to
					 * (a NOMATCH at every place): not
					 * NOMATCH, which lets each star before
					 * this one try every place again
					 * ("*a*a*a*a*a*a*a*b" against 200 a's:
					 * for ever) */
					if (t_ch != c)
						return t_ch ? WM_ABORT_TO_STARSTAR : WM_ABORT_ALL;
				}
				if ((matched = rec(p, text, flags, pstart, wm)) != WM_NOMATCH) {
					if (!match_slash || matched != WM_ABORT_TO_STARSTAR)
						return matched;
				} else if (!match_slash && t_ch == '/') {
					return WM_ABORT_TO_STARSTAR;
				}
				t_ch = *++text;
			}
			return WM_ABORT_ALL;
		case '[':
			p_ch = *++p;
			if (p_ch == '^')
				p_ch = '!';
			negated = p_ch == '!';
			if (negated)
				p_ch = *++p;
			prev_ch = 0;
			matched = 0;
			do {
				if (!p_ch)
					return WM_ABORT_ALL;
				if (p_ch == '\\') {
					p_ch = *++p;
					if (!p_ch)
						return WM_ABORT_ALL;
					if (t_ch == p_ch)
						matched = 1;
				} else if (p_ch == '-' && prev_ch && p[1] && p[1] != ']') {
					p_ch = *++p;
					if (p_ch == '\\') {
						p_ch = *++p;
						if (!p_ch)
							return WM_ABORT_ALL;
					}
					if (t_ch <= p_ch && t_ch >= prev_ch)
						matched = 1;
					p_ch = 0;
				} else if (p_ch == '[' && p[1] == ':') {
					const unsigned char *s;
					int i;
					for (s = p += 2; (p_ch = *p) && p_ch != ']'; p++)
						;
					if (!p_ch)
						return WM_ABORT_ALL;
					i = p - s - 1;
					if (i < 0 || p[-1] != ':') {
						p = s - 2;
						p_ch = '[';
						if (t_ch == p_ch)
							matched = 1;
						continue;
					}
					if (cc_is(s, i, "alnum")) { if (isalnum(t_ch)) matched = 1; }
					else if (cc_is(s, i, "alpha")) { if (isalpha(t_ch)) matched = 1; }
					else if (cc_is(s, i, "blank")) { if (t_ch == ' ' || t_ch == '\t') matched = 1; }
					else if (cc_is(s, i, "cntrl")) { if (iscntrl(t_ch)) matched = 1; }
					else if (cc_is(s, i, "digit")) { if (isdigit(t_ch)) matched = 1; }
					else if (cc_is(s, i, "graph")) { if (isgraph(t_ch)) matched = 1; }
					else if (cc_is(s, i, "lower")) { if (islower(t_ch)) matched = 1; }
					else if (cc_is(s, i, "print")) { if (isprint(t_ch)) matched = 1; }
					else if (cc_is(s, i, "punct")) { if (ispunct(t_ch)) matched = 1; }
					else if (cc_is(s, i, "space")) { if (isspace(t_ch)) matched = 1; }
					else if (cc_is(s, i, "upper")) { if (isupper(t_ch)) matched = 1; }
					else if (cc_is(s, i, "xdigit")) { if (isxdigit(t_ch)) matched = 1; }
					else
						return WM_ABORT_ALL;
					p_ch = 0;
				} else if (t_ch == p_ch) {
					matched = 1;
				}
			} while (prev_ch = p_ch, (p_ch = *++p) != ']');
			if (matched == negated || ((flags & WM_PATHNAME) && t_ch == '/'))
				return WM_NOMATCH;
			continue;
		}
	}
	return *text ? WM_NOMATCH : WM_MATCH;
}

/* Does P match TEXT (both NUL-terminated)?  PSTART: where the whole
 * pattern begins (P may be past a literal prefix). */
static bool wildmatch(const char *p, const char *text, unsigned flags, const char *pstart)
{
	struct wm wm = { (const unsigned char *)p, (const unsigned char *)text, strlen(text) + 1,
			 WM_STEPS, NULL };
	size_t size = (strlen(p) + 1) * wm.tn;
	int r = dowild(wm.p0, wm.t0, flags, (const unsigned char *)pstart, &wm);

	if (r != WM_RESTART)
		return r == WM_MATCH;
	/* (a pattern longer than a path is dropped when read: the memo is
	 * some 16 MiB at most) */
	if (size > WM_MEMO_MAX || !(wm.memo = calloc(size, 1)))
		return false;
	r = dowild(wm.p0, wm.t0, flags, (const unsigned char *)pstart, &wm);
	free(wm.memo);
	return r == WM_MATCH;
}

int wap_wildmatch(const char *pattern, const char *text)
{
	return wildmatch(pattern, text, WM_PATHNAME, pattern) ? 0 : 1;
}

/* ---- parsing ---- */

static void list_release(struct wap_ign_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->p[i].s);
	free(l->p);
}

void wap_ign_list_free(struct wap_ign_list *l)
{
	if (!l)
		return;
	list_release(l);
	free(l);
}

static size_t simple_length(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && !is_special((unsigned char)s[i]))
		i++;
	return i;
}

struct wap_ign_list *wap_ign_parse(const char *text, size_t len)
{
	struct wap_ign_list *l = calloc(1, sizeof(*l));
	const char *p = text, *end = text + len;
	size_t cap = 0;

	if (!l)
		return NULL;
	while (p < end) {
		const char *e = memchr(p, '\n', end - p);
		const char *ls = p, *le;
		struct pat pt = { 0 };

		if (!e)
			e = end;
		p = e + (e < end);
		le = e;
		if (le > ls && le[-1] == '\r')
			le--;
		/* a NUL ends the line's pattern, as for git (C strings):
		 * the pattern is kept as one, its length that string's */
		if (memchr(ls, 0, le - ls))
			le = ls + strlen(ls);
		if (ls == le || *ls == '#')
			continue;
		/* trailing spaces, unless escaped */
		while (le > ls && le[-1] == ' ') {
			size_t bs = 0;
			for (const char *q = le - 2; q >= ls && *q == '\\'; q--)
				bs++;
			if (bs % 2)
				break;
			le--;
		}
		if (ls == le)
			continue;
		if (*ls == '!') {
			pt.flags |= PAT_NEG;
			ls++;
		}
		if (le > ls && le[-1] == '/') {
			pt.flags |= PAT_DIRONLY;
			le--;
		}
		/* longer than any path (PATH_MAX): dropped, which bounds the
		 * matcher's memo and its depth of stars */
		if (ls == le || le - ls > 4096)
			continue;
		if (!memchr(ls, '/', le - ls))
			pt.flags |= PAT_NODIR;
		else if (*ls == '/')
			ls++;
		pt.len = le - ls;
		pt.s = strndup(ls, pt.len);
		if (!pt.s)
			break;
		pt.prefix = simple_length(pt.s, pt.len);
		if (pt.prefix == pt.len)
			pt.flags |= PAT_LITERAL;
		else if (pt.s[0] == '*' && pt.len > 1 && simple_length(pt.s + 1, pt.len - 1) == pt.len - 1)
			pt.flags |= PAT_ENDSWITH;
		if (l->n == cap) {
			struct pat *np;
			cap = cap ? cap * 2 : 16;
			np = realloc(l->p, cap * sizeof(*np));
			if (!np) {
				free(pt.s);
				break;
			}
			l->p = np;
		}
		l->p[l->n++] = pt;
	}
	if (!l->n) {
		wap_ign_list_free(l);
		return NULL;
	}
	return l;
}

/* ---- frames ---- */

struct wap_ign *wap_ign_push(struct wap_ign *parent, const char *base,
			     struct wap_ign_list **lists, int n)
{
	struct wap_ign *ig = calloc(1, sizeof(*ig));

	if (!ig) {
		for (int i = 0; i < n; i++)
			wap_ign_list_free(lists[i]);
		return NULL;
	}
	ig->refs = 1;
	ig->parent = parent ? wap_ign_ref(parent) : NULL;
	ig->base = strdup(base);
	ig->baselen = strlen(base);
	for (int i = 0; i < n && ig->nlists < 3; i++)
		if (lists[i])
			ig->lists[ig->nlists++] = lists[i];
	return ig;
}

struct wap_ign *wap_ign_ref(struct wap_ign *ig)
{
	if (ig)
		__atomic_add_fetch(&ig->refs, 1, __ATOMIC_RELAXED);
	return ig;
}

void wap_ign_unref(struct wap_ign *ig)
{
	while (ig && __atomic_sub_fetch(&ig->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		struct wap_ign *parent = ig->parent;
		for (int i = 0; i < ig->nlists; i++)
			wap_ign_list_free(ig->lists[i]);
		free(ig->base);
		free(ig->above);
		free(ig);
		ig = parent;
	}
}

/* ---- matching ---- */

static bool match_one(const struct pat *pt, const char *path, size_t len,
		      const char *base, size_t baselen)
{
	const char *name;
	size_t namelen;

	if (pt->flags & PAT_NODIR) {
		const char *slash = memrchr(path, '/', len);
		name = slash ? slash + 1 : path;
		namelen = len - (name - path);
		if (pt->flags & PAT_LITERAL)
			return namelen == pt->len && !memcmp(name, pt->s, namelen);
		if (pt->flags & PAT_ENDSWITH)
			return namelen >= pt->len - 1 &&
			       !memcmp(name + namelen - (pt->len - 1), pt->s + 1, pt->len - 1);
		return wildmatch(pt->s, name, 0, pt->s);
	}
	/* anchored to BASE */
	if (baselen) {
		if (len <= baselen || path[baselen] != '/' || memcmp(path, base, baselen))
			return false;
		name = path + baselen + 1;
	} else {
		name = path;
	}
	namelen = len - (name - path);
	if (pt->prefix) {
		if (pt->prefix > namelen || memcmp(pt->s, name, pt->prefix))
			return false;
		if (pt->prefix == pt->len)
			return namelen == pt->len;
		return wildmatch(pt->s + pt->prefix, name + pt->prefix, WM_PATHNAME,
				 pt->s + pt->prefix);
	}
	return wildmatch(pt->s, name, WM_PATHNAME, pt->s);
}

bool wap_ign_ignored(const struct wap_ign *ig, const char *path, size_t len, bool isdir)
{
	char stack[1024], *tmp = NULL;
	const char *z = path;

	/* wildmatch wants a NUL-terminated string */
	if (path[len] != 0) {
		if (len < sizeof(stack)) {
			memcpy(stack, path, len);
			stack[len] = 0;
			z = stack;
		} else {
			tmp = strndup(path, len);
			if (!tmp)
				return false;
			z = tmp;
		}
	}
	for (; ig; ig = ig->parent) {
		const char *pz = z;
		size_t plen = len;
		char *full = NULL;

		if (ig->above) {
			/* a directory above the root: the path as seen from it */
			plen = ig->abovelen + 1 + len;
			full = malloc(plen + 1);
			if (!full)
				continue;
			memcpy(full, ig->above, ig->abovelen);
			full[ig->abovelen] = '/';
			memcpy(full + ig->abovelen + 1, z, len + 1);
			pz = full;
		}
		for (int li = 0; li < ig->nlists; li++) {
			const struct wap_ign_list *l = ig->lists[li];
			for (size_t i = l->n; i-- > 0;) {
				const struct pat *pt = &l->p[i];
				if ((pt->flags & PAT_DIRONLY) && !isdir)
					continue;
				if (match_one(pt, pz, plen, ig->base, ig->baselen)) {
					free(full);
					free(tmp);
					return !(pt->flags & PAT_NEG);
				}
			}
		}
		free(full);
	}
	free(tmp);
	return false;
}
