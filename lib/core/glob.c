/* core/glob.c - glob to regex translation and matching through PCRE2.
 *
 * pcre2_pattern_convert() has no braces and treats "**" differently from
 * .gitignore, so globs are translated here; PCRE2 (with JIT) does the
 * matching, and where its backtracking runs long (many stars over a long
 * path), PCRE2's DFA matcher decides: it keeps every way through the
 * pattern at once and reads the path once, so its work is the path's
 * length times the pattern's, never exponential.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "glob.h"
#include "match.h"
#include "strbuf.h"

struct wap_glob {
	pcre2_code *re;
	size_t wsn;		/* the DFA matcher's workspace (ints) */
	/* the common shapes answered without PCRE2 (a glob of a big tree
	 * tests every path): "**" matches everything, "**" "/" "*SUFFIX" (or,
	 * matched on base names, "*SUFFIX") every path ending in SUFFIX */
	bool all;
	size_t slen;
	char suffix[16];
};

static void add_class(struct wap_sb *sb, const char **pp)
{
	const char *p = *pp + 1;

	/* a class never matches the separator */
	wap_sb_adds(sb, "(?!/)[");
	if (*p == '!' || *p == '^') {
		wap_sb_addc(sb, '^');
		p++;
	}
	if (*p == ']') {
		wap_sb_adds(sb, "\\]");
		p++;
	}
	for (; *p && *p != ']'; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			wap_sb_addc(sb, '\\');
			wap_sb_addc(sb, *p);
		} else if (*p == '[' || *p == '\\') {
			wap_sb_addc(sb, '\\');
			wap_sb_addc(sb, *p);
		} else {
			wap_sb_addc(sb, *p);
		}
	}
	wap_sb_addc(sb, ']');
	/* leave P on the closing ']', or on the last byte when the class ran
	 * to the end (as in "[]"), so the caller's p++ stops at the NUL */
	*pp = *p ? p : p - 1;
}

char *wap_glob_to_regex(const char *glob, unsigned flags, struct wap_err *err)
{
	struct wap_sb sb = WAP_SB_INIT;
	int depth = 0;
	const char *p, *start;
	size_t len = strlen(glob);

	/* a trailing '/' names a directory, as in .gitignore ("secrets/"):
	 * matched as the name without it.  Paths never end in '/', so kept
	 * it matched nothing, and a restrictedPaths entry so spelt denied
	 * nothing; what is beneath is the caller's (a deny list judges each
	 * parent, "secrets/" + "**" says it outright). */
	if (len > 1 && glob[len - 1] == '/' && glob[len - 2] != '\\') {
		char *trim, *rx;
		while (len > 1 && glob[len - 1] == '/' && glob[len - 2] != '\\')
			len--;
		trim = strndup(glob, len);
		if (!trim) {
			wap_err_oom(err);
			return NULL;
		}
		rx = wap_glob_to_regex(trim, flags, err);
		free(trim);
		return rx;
	}
	wap_sb_adds(&sb, "^");
	if (flags & WAP_GLOB_BASENAME) {
		const char *s = glob;
		if (!strncmp(s, "./", 2))
			s += 2;
		if (!strchr(s, '/'))
			wap_sb_adds(&sb, "(?:.*/)?");
	}
	p = glob;
	if (!strncmp(p, "./", 2))
		p += 2;
	else if (*p == '/')
		p++;	/* anchored to the base, as in .gitignore */
	start = p;
	for (; *p; p++) {
		switch (*p) {
		case '*':
			if (p[1] == '*') {
				int at_start = p == start || p[-1] == '/';
				p++;
				while (p[1] == '*')
					p++;
				if (at_start && p[1] == '/') {
					wap_sb_adds(&sb, "(?:.*/)?");
					p++;
				} else if (at_start && !p[1]) {
					wap_sb_adds(&sb, ".*");
				} else {
					wap_sb_adds(&sb, "[^/]*");
				}
			} else {
				wap_sb_adds(&sb, "[^/]*");
			}
			break;
		case '?':
			wap_sb_adds(&sb, "[^/]");
			break;
		case '[':
			if (!strchr(p + 1, ']')) {
				wap_sb_adds(&sb, "\\[");
				break;
			}
			add_class(&sb, &p);
			break;
		case '{':
			depth++;
			wap_sb_adds(&sb, "(?:");
			break;
		case '}':
			if (depth > 0) {
				depth--;
				wap_sb_addc(&sb, ')');
			} else {
				wap_sb_adds(&sb, "\\}");
			}
			break;
		case ',':
			wap_sb_adds(&sb, depth > 0 ? "|" : ",");
			break;
		case '\\':
			if (p[1]) {
				p++;
				if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				    (*p >= '0' && *p <= '9'))
					wap_sb_addc(&sb, *p);
				else {
					wap_sb_addc(&sb, '\\');
					wap_sb_addc(&sb, *p);
				}
			} else {
				wap_sb_adds(&sb, "\\\\");
			}
			break;
		case '/':
			/* a trailing slash-star-star also matches the directory */
			if (!strcmp(p, "/**")) {
				wap_sb_adds(&sb, "(?:/.*)?");
				p += 2;
			} else {
				wap_sb_addc(&sb, '/');
			}
			break;
		default:
			if (strchr(".^$|()+{}[]", *p))
				wap_sb_addc(&sb, '\\');
			wap_sb_addc(&sb, *p);
		}
	}
	if (depth) {
		wap_sb_release(&sb);
		wap_err_set(err, WAP_E_INVALID, "Invalid glob '%s': unbalanced '{'", glob);
		return NULL;
	}
	wap_sb_adds(&sb, "$");
	if (sb.oom) {
		wap_sb_release(&sb);
		wap_err_oom(err);
		return NULL;
	}
	return wap_sb_detach(&sb);
}

struct wap_glob *wap_glob_new(const char *glob, unsigned flags, struct wap_err *err)
{
	char *rx = wap_glob_to_regex(glob, flags, err);
	struct wap_glob *g;
	int ec;
	PCRE2_SIZE off;

	if (!rx)
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g) {
		free(rx);
		wap_err_oom(err);
		return NULL;
	}
	g->re = pcre2_compile((PCRE2_SPTR)rx, PCRE2_ZERO_TERMINATED,
			      PCRE2_DOTALL |
			      ((flags & WAP_GLOB_ICASE) ? PCRE2_CASELESS : 0),
			      &ec, &off, NULL);
	if (!g->re) {
		PCRE2_UCHAR buf[256];
		pcre2_get_error_message(ec, buf, sizeof(buf));
		wap_err_set(err, WAP_E_INVALID, "Invalid glob '%s': %s", glob, (char *)buf);
		free(rx);
		free(g);
		return NULL;
	}
	pcre2_jit_compile(g->re, PCRE2_JIT_COMPLETE);
	/* a state is 3 ints, two lists of them, one state an item at most */
	g->wsn = 64 + 6 * strlen(rx);
	free(rx);
	{
		const char *p = glob + (strncmp(glob, "./", 2) ? 0 : 2), *suf = NULL;
		if (!strcmp(p, "**") || ((flags & WAP_GLOB_BASENAME) && !strcmp(p, "*")))
			g->all = true;
		else if (!strncmp(p, "**/*", 4))
			suf = p + 4;
		else if ((flags & WAP_GLOB_BASENAME) && p[0] == '*')
			suf = p + 1;
		/* a literal tail: no wildcard, class, brace, escape or separator */
		if (suf && *suf && !(flags & WAP_GLOB_ICASE) && strlen(suf) < sizeof(g->suffix) &&
		    !suf[strcspn(suf, "*?[]{},\\/")]) {
			g->slen = strlen(suf);
			memcpy(g->suffix, suf, g->slen + 1);
		}
	}
	return g;
}

void wap_glob_free(struct wap_glob *g)
{
	if (!g)
		return;
	pcre2_code_free(g->re);
	free(g);
}

/* One match block per thread, freed when the thread ends. */
static pthread_key_t md_key;
static pthread_once_t md_once = PTHREAD_ONCE_INIT;

static void md_free(void *md)
{
	pcre2_match_data_free(md);
}

/* The backtracking matcher's bound before the DFA decides: a few
 * thousand steps take a glob over any ordinary path (a path is at most
 * PATH_MAX), a few microseconds. */
#define QUICK_LIMIT 20000

static pcre2_match_context *quick_mc;

static void md_init(void)
{
	pthread_key_create(&md_key, md_free);
	quick_mc = pcre2_match_context_create(NULL);
	if (quick_mc) {
		wap_match_limits(quick_mc);
		pcre2_set_match_limit(quick_mc, QUICK_LIMIT);
	}
}

static pcre2_match_data *thread_md(void)
{
	pcre2_match_data *md;

	pthread_once(&md_once, md_init);
	md = pthread_getspecific(md_key);
	if (!md) {
		md = pcre2_match_data_create(1, NULL);
		if (md && pthread_setspecific(md_key, md)) {
			pcre2_match_data_free(md);
			md = NULL;
		}
	}
	return md;
}

/* PCRE2's DFA matcher: every state of the pattern at once, the path read
 * once (no backtracking: a glob of many stars and double stars on a deep
 * path took the backtracking matcher past its match limit, 42 ms a name,
 * and was undecided).  Its workspace grows while it says it is short. */
static int dfa(const struct wap_glob *g, const char *path, size_t len, pcre2_match_data *md)
{
	int rc = PCRE2_ERROR_NOMEMORY;

	for (size_t n = g->wsn; n <= ((size_t)1 << 22); n *= 4) {
		int *ws = malloc(n * sizeof(*ws));
		if (!ws)
			return PCRE2_ERROR_NOMEMORY;
		rc = pcre2_dfa_match(g->re, (PCRE2_SPTR)path, len, 0, 0, md, wap_match_context(),
				     ws, n);
		free(ws);
		if (rc != PCRE2_ERROR_DFA_WSSIZE)
			break;
	}
	/* 0: a match that the one-pair match block could not hold */
	return rc;
}

int wap_glob_test(const struct wap_glob *g, const char *path, size_t len)
{
	pcre2_match_data *md;
	int rc;

	if (g->all)
		return 1;
	if (g->slen)
		return len >= g->slen && !memcmp(path + len - g->slen, g->suffix, g->slen);
	md = thread_md();
	if (!md)
		return -1;
	/* the JIT first, as long as it is quick; what it cannot decide in
	 * QUICK_LIMIT steps, the DFA matcher does */
	rc = pcre2_match(g->re, (PCRE2_SPTR)path, len, 0, 0, md, quick_mc);
	if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
	    rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT)
		rc = dfa(g, path, len, md);
	return rc >= 0 ? 1 : rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

bool wap_glob_match(const struct wap_glob *g, const char *path, size_t len)
{
	/* undecided is a match: a restricted or excluded path stays so */
	return wap_glob_test(g, path, len) != 0;
}

bool wap_glob_match_dir(const struct wap_glob *g, const char *path, size_t len)
{
	/* a trailing slash-star-star compiles to "(?:/.*)?", so the directory
	 * itself matches */
	return wap_glob_match(g, path, len);
}

int wap_globset_add(struct wap_globset *s, const char *glob, unsigned flags, struct wap_err *err)
{
	struct wap_glob *g = wap_glob_new(glob, flags, err);
	struct wap_glob **n;

	if (!g)
		return -1;
	n = realloc(s->g, (s->n + 1) * sizeof(*n));
	if (!n) {
		wap_glob_free(g);
		return wap_err_oom(err);
	}
	s->g = n;
	s->g[s->n++] = g;
	return 0;
}

bool wap_globset_match(const struct wap_globset *s, const char *path, size_t len)
{
	for (size_t i = 0; i < s->n; i++)
		if (wap_glob_match(s->g[i], path, len))
			return true;
	return false;
}

bool wap_globset_deny(const struct wap_globset *s, const char *path, size_t len)
{
	for (size_t i = 0; i < s->n; i++)
		if (wap_glob_test(s->g[i], path, len))
			return true;
	return false;
}

bool wap_globset_match_dir(const struct wap_globset *s, const char *path, size_t len)
{
	for (size_t i = 0; i < s->n; i++)
		if (wap_glob_match_dir(s->g[i], path, len))
			return true;
	return false;
}

void wap_globset_release(struct wap_globset *s)
{
	for (size_t i = 0; i < s->n; i++)
		wap_glob_free(s->g[i]);
	free(s->g);
	s->g = NULL;
	s->n = 0;
}
