/* test_walk.c - the ignore matcher, the line matcher and the walker. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ignore.h"
#include "match.h"
#include "walk.h"
#include "ws.h"

/* git's wildmatch, WM_PATHNAME */
static void test_wildmatch(void **state)
{
	static const struct { const char *p, *t; int m; } c[] = {
		{ "foo", "foo", 1 }, { "foo", "bar", 0 }, { "*", "foo", 1 }, { "*", "a/b", 0 },
		{ "f*", "foo", 1 }, { "*o", "foo", 1 }, { "?oo", "foo", 1 }, { "??", "foo", 0 },
		{ "**", "a/b/c", 1 }, { "**/c", "a/b/c", 1 }, { "**/c", "c", 1 },
		{ "a/**/c", "a/c", 1 }, { "a/**/c", "a/b/x/c", 1 }, { "a/**", "a/b/c", 1 },
		{ "a/*/c", "a/b/c", 1 }, { "a/*/c", "a/b/x/c", 0 }, { "a**c", "abc", 1 },
		{ "[abc]", "b", 1 }, { "[!abc]", "b", 0 }, { "[^abc]", "d", 1 }, { "[a-c]x", "bx", 1 },
		{ "[]]", "]", 1 }, { "[[:digit:]]", "5", 1 }, { "[[:alpha:]]", "5", 0 },
		{ "\\*", "*", 1 }, { "\\*", "x", 0 }, { "a?c", "a/c", 0 }, { "[/]", "/", 0 },
		{ "{a,b}", "a", 0 }, { "{a,b}", "{a,b}", 1 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if ((wap_wildmatch(c[i].p, c[i].t) == 0) != c[i].m)
			fail_msg("wildmatch(%s, %s) should be %d", c[i].p, c[i].t, c[i].m);
}

static bool ign(struct wap_ign *ig, const char *p, bool dir)
{
	return wap_ign_ignored(ig, p, strlen(p), dir);
}

static struct wap_ign *frame(struct wap_ign *parent, const char *base, const char *text)
{
	struct wap_ign_list *l = wap_ign_parse(text, strlen(text));
	return wap_ign_push(parent, base, &l, 1);
}

static void test_ignore_rules(void **state)
{
	struct wap_ign *top, *sub;

	(void)state;
	assert_null(wap_ign_parse("# only a comment\n\n   \n", 22));
	top = frame(NULL, "", "# c\n*.o\n!keep.o\n/anch\nbuild/\nsub/deep/x\ntrail  \n\\#h\n\\!b\n");
	assert_true(ign(top, "a.o", false));
	assert_true(ign(top, "d/e/a.o", false));
	assert_false(ign(top, "keep.o", false));
	assert_false(ign(top, "d/keep.o", false));
	assert_true(ign(top, "anch", false));
	assert_false(ign(top, "d/anch", false));
	assert_true(ign(top, "build", true));
	assert_false(ign(top, "build", false));	/* directory-only */
	assert_true(ign(top, "x/build", true));
	assert_true(ign(top, "sub/deep/x", false));
	assert_false(ign(top, "other/sub/deep/x", false));	/* a slash anchors */
	assert_true(ign(top, "trail", false));	/* trailing spaces dropped */
	assert_true(ign(top, "#h", false));
	assert_true(ign(top, "!b", false));
	assert_false(ign(top, "c.c", false));

	/* a deeper file wins; its patterns are relative to its directory */
	sub = frame(top, "sub", "!*.o\n/only\n");
	assert_false(ign(sub, "sub/a.o", false));
	assert_true(ign(sub, "sub/only", false));
	assert_false(ign(sub, "sub/x/only", false));
	assert_true(ign(sub, "sub/anch2.o", false) == false);
	wap_ign_unref(sub);
	wap_ign_unref(top);
	assert_false(wap_ign_ignored(NULL, "x", 1, false));
}

static void test_matcher(void **state)
{
	static const char buf[] = "alpha\nbeta PM_RESUME one\ngamma pm_resume\nfoo_resume(x)\n";
	struct wap_match_opts o = { 0 };
	const char *pats[2] = { "PM_RESUME", NULL };
	struct wap_err err = { 0 };
	struct wap_matcher *m;
	struct wap_mstate *s;
	size_t ls, le;
	const char *lit;

	(void)state;
	o.patterns = pats;
	o.n = 1;
	m = wap_matcher_new(&o, &err);
	assert_non_null(m);
	assert_true(wap_matcher_exact(m));
	assert_int_equal(wap_matcher_literals(m, &lit), 1);
	s = wap_mstate_new(m);
	wap_match_begin(s);
	assert_true(wap_match_line(m, s, buf, sizeof(buf) - 1, 0, &ls, &le));
	assert_int_equal(ls, 6);
	assert_int_equal(le, 24);
	assert_false(wap_match_line(m, s, buf, sizeof(buf) - 1, le + 1, &ls, &le));
	wap_mstate_free(s);
	wap_matcher_free(m);

	/* a regex: prefiltered by "_resume", confirmed by PCRE2 */
	pats[0] = "\\w+_resume\\(";
	m = wap_matcher_new(&o, &err);
	assert_non_null(m);
	assert_false(wap_matcher_exact(m));
	assert_int_equal(wap_matcher_literals(m, &lit), 1);
	assert_memory_equal(lit, "_resume(", 8);
	s = wap_mstate_new(m);
	wap_match_begin(s);
	assert_true(wap_match_line(m, s, buf, sizeof(buf) - 1, 0, &ls, &le));
	assert_int_equal(ls, 41);
	wap_mstate_free(s);
	wap_matcher_free(m);

	/* -i: Unicode folding keeps 's' and 'k' out of the prefilter */
	o.icase = true;
	pats[0] = "pm_resume";
	m = wap_matcher_new(&o, &err);
	assert_non_null(m);
	assert_false(wap_matcher_exact(m));
	s = wap_mstate_new(m);
	wap_match_begin(s);
	assert_true(wap_match_line(m, s, buf, sizeof(buf) - 1, 0, &ls, &le));
	assert_int_equal(ls, 6);
	assert_true(wap_match_line(m, s, buf, sizeof(buf) - 1, le + 1, &ls, &le));
	assert_int_equal(ls, 25);
	wap_mstate_free(s);
	wap_matcher_free(m);
	o.icase = false;

	/* alternation: two literals */
	pats[0] = "alpha|gamma";
	m = wap_matcher_new(&o, &err);
	assert_int_equal(wap_matcher_literals(m, NULL), 2);
	assert_true(wap_matcher_exact(m));
	wap_matcher_free(m);

	/* no literal: PCRE2 alone, never across lines */
	pats[0] = "\\d\\s+\\d";
	m = wap_matcher_new(&o, &err);
	assert_int_equal(wap_matcher_literals(m, NULL), 0);
	s = wap_mstate_new(m);
	wap_match_begin(s);
	assert_false(wap_match_line(m, s, "1\n2\n", 4, 0, &ls, &le));
	assert_true(wap_match_line(m, s, "1\n2 3  4\n", 9, 0, &ls, &le));
	assert_int_equal(ls, 2);
	wap_mstate_free(s);
	wap_matcher_free(m);

	/* backtracking that hits PCRE2's limit over the whole buffer: each
	 * line is still judged on its own */
	{
		static const char t[] = "PM_RESUME\nabRESUMExPm_ReSuMe \n__a.bresume\nRESUMEx\n";
		size_t n = 0, p = 0;
		pats[0] = "((.?[^x]|ab)*k[a-c]+|(?:ab|cd))+e+|RESUME";
		o.icase = true;
		m = wap_matcher_new(&o, &err);
		assert_non_null(m);
		s = wap_mstate_new(m);
		wap_match_begin(s);
		while (p < sizeof(t) - 1 && wap_match_line(m, s, t, sizeof(t) - 1, p, &ls, &le)) {
			n++;
			p = le + 1;
		}
		assert_int_equal(n, 4);
		wap_mstate_free(s);
		wap_matcher_free(m);
		o.icase = false;
	}

	/* a bad pattern */
	pats[0] = "(x";
	assert_null(wap_matcher_new(&o, &err));
	assert_int_equal(err.kind, WAP_E_INVALID);
	assert_non_null(strstr(err.msg, "at offset 2"));
	wap_err_release(&err);

	{
		static const char nl[] = "a\nb\n\ncccccccccccccccccccccccccccccccccccccccccccccc\nd\n";
		assert_int_equal(wap_count_nl(nl, strlen(nl)), 5);
		assert_int_equal(wap_count_nl(nl, 3), 1);
	}
}

/* the SIMD newline count: every length around its block sizes (32, 128
 * bytes, 255 rounds of 128), newlines sparse, dense and everywhere (a
 * counter byte that overflowed would lose 256), at every alignment */
static void test_count_nl(void **state)
{
	static const size_t lens[] = { 0, 1, 31, 32, 33, 127, 128, 129, 255, 256, 4095,
				       32639, 32640, 32641, 65279, 65280, 65281, 100000 };
	static const int every[] = { 1, 2, 7, 100, 0 };
	char *buf = malloc(100000 + 64);

	(void)state;
	assert_non_null(buf);
	for (size_t e = 0; e < sizeof(every) / sizeof(every[0]); e++) {
		for (size_t i = 0; i < 100000 + 64; i++)
			buf[i] = every[e] && !(i % every[e]) ? '\n' : (char)('a' + i % 26);
		for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			for (size_t al = 0; al < 3; al++) {
				size_t want = 0;
				for (size_t i = 0; i < lens[k]; i++)
					want += buf[al + i] == '\n';
				if (wap_count_nl(buf + al, lens[k]) != want)
					fail_msg("every %d len %zu at %zu: %zu newlines, counted %zu", every[e],
						 lens[k], al, want, wap_count_nl(buf + al, lens[k]));
			}
		}
	}
	free(buf);
}

/* the SIMD scan: a literal at every offset of buffers of every length up
 * to a few rounds of 128 bytes finds exactly that line, in both cases,
 * with a decoy (the literal's rare bytes, not the literal) 1 to 130 bytes
 * before it, in the same round or the one before; the buffer at SHIFT
 * bytes from an alignment */
static void scan_edges(int lv, bool icase, size_t shift)
{
	const char *pats[1] = { icase ? "pM_rEUME" : "PM_RESUME" };
	struct wap_match_opts o = { .patterns = pats, .n = 1, .icase = icase };
	struct wap_err err = { 0 };
	struct wap_matcher *m = wap_matcher_new(&o, &err);
	struct wap_mstate *s;
	char mem[600 + 64], *buf = mem + shift;

	assert_non_null(m);
	s = wap_mstate_new(m);
	for (size_t len = 0; len < 420; len += 7) {
		for (size_t at = 0; at + 9 <= len; at++) {
			size_t ls, le;
			memset(buf, 'P', len);	/* half-matches everywhere */
			if (at >= 9) {
				size_t d = at - 9 - (at * 7 % (at - 8 < 122 ? at - 8 : 122));
				memcpy(buf + d, icase ? "PmXReumE" : "PM_RXSUME", icase ? 8 : 9);
			}
			memcpy(buf + at, icase ? "Pm_ReumE" : "PM_RESUME", icase ? 8 : 9);
			wap_match_begin(s);
			if (!wap_match_line(m, s, buf, len, 0, &ls, &le) || ls != 0 || le != len)
				fail_msg("simd %d icase %d shift %zu len %zu at %zu: not found", lv, icase,
					 shift, len, at);
			memset(buf + at, 'M', 1);
			wap_match_begin(s);
			if (wap_match_line(m, s, buf, len, 0, &ls, &le))
				fail_msg("simd %d icase %d shift %zu len %zu at %zu: false match", lv,
					 icase, shift, len, at);
		}
	}
	wap_mstate_free(s);
	wap_matcher_free(m);
}

static void test_scan_edges(void **state)
{
	int top = wap_match_simd(99);

	(void)state;
	/* every vector width this CPU has, every alignment class */
	for (int lv = top; lv >= 0; lv--) {
		assert_int_equal(wap_match_simd(lv), lv);
		for (int icase = 0; icase < 2; icase++)
			for (size_t shift = 0; shift < 64; shift += 21)
				scan_edges(lv, icase, shift);
	}
	assert_int_equal(wap_match_simd(99), top);
}

/* Differential: random patterns over random text; the matcher's lines
 * (literal prefilter, exact literals, whole-buffer PCRE2) must be the lines
 * where PCRE2 alone, run on each line, finds a match. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

static unsigned rnd_state = 12345;
static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 8) % n;
}

static void rand_pattern(char *out, size_t cap, int depth)
{
	static const char *const atoms[] = {
		"PM_", "RESUME", "resume", "ab", "k", "s", "x", "_", "\\.", "\\w", "\\d",
		"[a-c]", "[^x]", ".", "\\b", "^", "$", "\\s", "(?:ab|cd)", "e", "K", "S", "{", "}",
	};
	size_t n = 0;
	int parts = 1 + rnd(4);

	out[0] = 0;
	for (int i = 0; i < parts && n + 40 < cap; i++) {
		int k = rnd(10);
		if (k == 0 && depth < 2) {
			char sub[128];
			rand_pattern(sub, sizeof(sub), depth + 1);
			n += snprintf(out + n, cap - n, "(%s|%s)", sub, atoms[rnd(sizeof(atoms) / sizeof(*atoms))]);
		} else if (k == 1 && depth < 2) {
			char sub[128];
			rand_pattern(sub, sizeof(sub), depth + 1);
			n += snprintf(out + n, cap - n, "(?:%s)", sub);
		} else {
			n += snprintf(out + n, cap - n, "%s", atoms[rnd(sizeof(atoms) / sizeof(*atoms))]);
		}
		if (rnd(4) == 0)
			n += snprintf(out + n, cap - n, "%s", (const char *[]){ "?", "*", "+", "{2}", "{0,1}" }[rnd(5)]);
	}
	if (rnd(6) == 0 && depth == 0)
		n += snprintf(out + n, cap - n, "|%s", "RESUME");
}

static void test_differential(void **state)
{
	static const char *const words[] = {
		"PM_RESUME", "pm_resume", "Pm_ReSuMe", "ab", "cd", "abab", "x", "k", "K", "\xe2\x84\xaa",
		"s", "S", "\xc5\xbf", "a.b", "_", "12", " ", "\t", "{", "}", "resume", "RESUMEx", "e",
	};
	char text[4096], pat[256];
	(void)state;
	for (int iter = 0; iter < 3000; iter++) {
		size_t tl = 0;
		int lines = 1 + rnd(12);
		for (int l = 0; l < lines; l++) {
			int nw = rnd(6);
			for (int w = 0; w < nw && tl + 40 < sizeof(text); w++)
				tl += snprintf(text + tl, sizeof(text) - tl, "%s", words[rnd(sizeof(words) / sizeof(*words))]);
			if (l + 1 < lines || rnd(2))
				text[tl++] = '\n';
		}
		text[tl] = 0;
		char pat2[256];
		rand_pattern(pat, sizeof(pat), 0);
		rand_pattern(pat2, sizeof(pat2), 0);
		for (int icase = 0; icase < 2; icase++) {
			const char *pats[2] = { pat, pat2 };
			struct wap_match_opts o = { .patterns = pats, .n = 1 + (rnd(4) == 0), .icase = icase,
						    .word = rnd(5) == 0, .line = rnd(6) == 0,
						    .fixed = rnd(5) == 0 };
			if (o.fixed)
				pats[0] = words[rnd(sizeof(words) / sizeof(*words))];
			struct wap_err err = { 0 };
			struct wap_matcher *m = wap_matcher_new(&o, &err);
			pcre2_code *re;
			pcre2_match_data *md;
			struct wap_mstate *st;
			size_t pos = 0, ls, le, want = 0, got;
			if (!m) {
				wap_err_release(&err);
				continue;
			}
			re = (pcre2_code *)wap_matcher_code(m);
			md = pcre2_match_data_create_from_pattern(re, NULL);
			st = wap_mstate_new(m);
			wap_match_begin(st);
			/* expected: each line alone */
			for (size_t a = 0; a < tl || (a == 0 && tl == 0);) {
				const char *nl = memchr(text + a, '\n', tl - a);
				size_t b = nl ? (size_t)(nl - text) : tl;
				if (a == tl)
					break;
				if (pcre2_match(re, (PCRE2_SPTR)text + a, b - a, 0, 0, md, NULL) >= 0)
					want = want * 31 + a + 1;
				a = b + 1;
			}
			got = 0;
			while (pos < tl && wap_match_line(m, st, text, tl, pos, &ls, &le)) {
				got = got * 31 + ls + 1;
				pos = le + 1;
			}
			if (got != want) {
				char esc[16384];
				size_t e = 0;
				for (size_t i = 0; i < tl && e + 8 < sizeof(esc); i++)
					e += snprintf(esc + e, sizeof(esc) - e,
						      (unsigned char)text[i] < 0x20 || (unsigned char)text[i] >= 0x7f ||
						      text[i] == '\\' || text[i] == '\'' ? "\\x%02x" : "%c",
						      (unsigned char)text[i]);
				fail_msg("patterns '%s' '%s' (n %zu icase %d word %d line %d fixed %d) on $'%s': "
					 "lines differ", pats[0], pats[1], o.n, icase, o.word, o.line, o.fixed, esc);
			}
			pcre2_match_data_free(md);
			wap_mstate_free(st);
			wap_matcher_free(m);
		}
	}
}

/* the walker on a scratch tree */
struct seen {
	pthread_mutex_t mu;
	char list[4096];
};

static int collect(void *arg, const struct wap_walk_ent *e, struct wap_err *err)
{
	struct seen *s = arg;

	(void)err;
	pthread_mutex_lock(&s->mu);
	{
		size_t n = strlen(s->list);
		snprintf(s->list + n, sizeof(s->list) - n, "%s%s", e->path,
			 e->type == WAP_WALK_DIR ? "/;" : ";");
	}
	pthread_mutex_unlock(&s->mu);
	return 0;
}

static void mk(const char *root, const char *rel)
{
	char p[4096];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (rel[strlen(rel) - 1] == '/') {
		mkdir(p, 0755);
		return;
	}
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	if (strlen(rel) >= 10 && !strcmp(rel + strlen(rel) - 10, ".gitignore"))
		assert_int_equal(write(fd, "*.o\n", 4), 4);
	close(fd);
}

static bool has(const char *list, const char *item)
{
	char needle[256], hay[4200];

	snprintf(needle, sizeof(needle), ";%s;", item);
	snprintf(hay, sizeof(hay), ";%s", list);
	return strstr(hay, needle) != NULL;
}

static void test_walk(void **state)
{
	char root[] = "/tmp/wap-walk.XXXXXX";
	static const char *const tree[] = {
		"a/", "a/x.c", "a/x.o", "node_modules/", "node_modules/m.js", ".git/", ".git/HEAD",
		".hidden/", ".hidden/h", "b/", "b/c/", "b/c/deep.c", "top.c", ".gitignore", NULL
	};
	struct wap_ws ws;
	struct wap_err err = { 0 };
	struct wap_walk_opts o = { .max_depth = -1 };
	struct seen s;

	(void)state;
	assert_non_null(mkdtemp(root));
	for (int i = 0; tree[i]; i++)
		mk(root, tree[i]);
	assert_int_equal(wap_ws_init(&ws, root, "/nonexistent-config-ok", &err), -1);
	wap_err_release(&err);
	setenv("WAP_CONFIG", "", 1);
	assert_int_equal(wap_ws_init(&ws, root, NULL, &err), 0);

	for (int threads = 1; threads <= 3; threads++) {
		memset(&s, 0, sizeof(s));
		pthread_mutex_init(&s.mu, NULL);
		o.threads = threads;
		o.dirs = true;
		assert_int_equal(wap_walk(&ws, ".", &o, collect, &s, &err), 0);
		assert_true(has(s.list, "a/x.c"));
		assert_true(has(s.list, "a/"));
		assert_true(has(s.list, ".hidden/h"));
		assert_true(has(s.list, "b/c/deep.c"));
		assert_true(has(s.list, "top.c"));
		assert_true(has(s.list, ".gitignore"));
		assert_false(has(s.list, "a/x.o"));		/* .gitignore in a work tree */
		assert_false(has(s.list, "node_modules/m.js"));	/* default exclusion */
		assert_false(has(s.list, ".git/HEAD"));		/* never */
		pthread_mutex_destroy(&s.mu);
	}
	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.mu, NULL);
	o.no_ignore = o.no_default_excludes = true;
	o.max_depth = 1;
	o.dirs = false;
	assert_int_equal(wap_walk(&ws, ".", &o, collect, &s, &err), 0);
	assert_true(has(s.list, "top.c"));
	assert_false(has(s.list, "a/x.o"));	/* too deep */
	pthread_mutex_destroy(&s.mu);

	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.mu, NULL);
	o.max_depth = -1;
	assert_int_equal(wap_walk(&ws, ".", &o, collect, &s, &err), 0);
	assert_true(has(s.list, "a/x.o"));
	assert_true(has(s.list, "node_modules/m.js"));
	assert_false(has(s.list, ".git/HEAD"));
	pthread_mutex_destroy(&s.mu);

	assert_int_equal(wap_walk(&ws, "no/such", &o, collect, &s, &err), -1);
	assert_int_equal(err.kind, WAP_E_NOT_FOUND);
	wap_err_release(&err);
	wap_ws_release(&ws);
	{
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		assert_int_equal(system(cmd), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wildmatch),
		cmocka_unit_test(test_ignore_rules),
		cmocka_unit_test(test_matcher),
		cmocka_unit_test(test_scan_edges),
		cmocka_unit_test(test_count_nl),
		cmocka_unit_test(test_differential),
		cmocka_unit_test(test_walk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
