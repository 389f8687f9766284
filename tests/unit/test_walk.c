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
		cmocka_unit_test(test_walk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
