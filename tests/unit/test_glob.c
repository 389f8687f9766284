/* test_glob.c - globs: *, **, ?, classes, braces, escapes, basename mode. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "glob.h"

static void m(const char *glob, unsigned flags, const char *path, bool want)
{
	struct wap_err err = { 0 };
	struct wap_glob *g = wap_glob_new(glob, flags, &err);

	if (!g)
		fail_msg("glob %s: %s", glob, err.msg);
	if (wap_glob_match(g, path, strlen(path)) != want)
		fail_msg("glob '%s' (flags %u) on '%s': wanted %s", glob, flags, path,
			 want ? "a match" : "no match");
	wap_glob_free(g);
}

static void test_star(void **state)
{
	(void)state;
	m("*.c", 0, "a.c", true);
	m("*.c", 0, "x/a.c", false);		/* * does not cross / */
	m("*.c", WAP_GLOB_BASENAME, "x/y/a.c", true);	/* no / in it: any depth */
	m("*.c", WAP_GLOB_BASENAME, "a.h", false);
	m("src/*.c", WAP_GLOB_BASENAME, "x/src/a.c", false);	/* has a /: anchored */
	m("src/*.c", 0, "src/a.c", true);
	m("src/*.c", 0, "src/x/a.c", false);
	m("*", 0, "", true);
	m("a*b", 0, "ab", true);
	m("a*b", 0, "a/b", false);
}

static void test_globstar(void **state)
{
	(void)state;
	m("**/*.c", 0, "a.c", true);		/* zero directories */
	m("**/*.c", 0, "x/a.c", true);
	m("**/*.c", 0, "x/y/z/a.c", true);
	m("**/*.c", 0, "a.h", false);
	m("src/**", 0, "src", true);		/* the directory itself */
	m("src/**", 0, "src/a", true);
	m("src/**", 0, "src/a/b/c", true);
	m("src/**", 0, "srcx", false);
	m("src/**", 0, "srcx/a", false);
	m("src/**/test.c", 0, "src/test.c", true);
	m("src/**/test.c", 0, "src/a/b/test.c", true);
	m("src/**/test.c", 0, "src/a/b/test.cc", false);
	m("**/node_modules/**", 0, "node_modules", true);
	m("**/node_modules/**", 0, "a/b/node_modules/x/y", true);
	m("**/node_modules/**", 0, "a/node_modules2/x", false);
	m("**", 0, "any/thing/at/all", true);
	m("/top.c", 0, "top.c", true);		/* leading / anchors, as in .gitignore */
	m("./a.c", 0, "a.c", true);
	/* a trailing / names the directory, as in .gitignore (kept, it
	 * matched nothing: a restrictedPaths "secrets/" denied nothing) */
	m("sec/", 0, "sec", true);
	m("sec//", 0, "sec", true);
	m("sec/", WAP_GLOB_BASENAME, "a/sec", true);
	m("a/sec/", WAP_GLOB_BASENAME, "b/a/sec", false);
	m("a/sec/", WAP_GLOB_BASENAME, "a/sec", true);
}

static void test_classes(void **state)
{
	(void)state;
	m("?.c", 0, "a.c", true);
	m("?.c", 0, "ab.c", false);
	m("?", 0, "/", false);
	m("[abc].c", 0, "b.c", true);
	m("[abc].c", 0, "d.c", false);
	m("[!abc].c", 0, "d.c", true);
	m("[!abc].c", 0, "a.c", false);
	m("[^a].c", 0, "b.c", true);
	m("[a-c]x", 0, "bx", true);
	m("[a-c]x", 0, "dx", false);
	m("x[!a]y", 0, "x/y", false);		/* a class never matches / */
	m("[]]", 0, "]", true);
	m("[", 0, "[", true);			/* unclosed: literal */
}

static void test_braces(void **state)
{
	struct wap_err err = { 0 };

	(void)state;
	m("*.{c,h}", 0, "a.c", true);
	m("*.{c,h}", 0, "a.h", true);
	m("*.{c,h}", 0, "a.o", false);
	m("{src,lib}/**/*.{c,h}", 0, "lib/x/y.h", true);
	m("{src,lib}/**/*.{c,h}", 0, "doc/x/y.h", false);
	m("{a,b{c,d}}", 0, "bd", true);		/* nested */
	m("{a,b{c,d}}", 0, "b", false);
	m("x{,y}", 0, "x", true);		/* empty alternative */
	m("a,b", 0, "a,b", true);		/* a comma outside braces is literal */
	m("a}", 0, "a}", true);
	assert_null(wap_glob_new("{a,b", 0, &err));
	assert_int_equal(err.kind, WAP_E_INVALID);
	assert_string_equal(err.msg, "Invalid glob '{a,b': unbalanced '{'");
}

static void test_literals(void **state)
{
	(void)state;
	m("a+b(c).txt", 0, "a+b(c).txt", true);
	m("a.c", 0, "abc", false);		/* . is literal */
	m("\\*.c", 0, "*.c", true);
	m("\\*.c", 0, "a.c", false);
	m("a$^|b", 0, "a$^|b", true);
	m("*.C", WAP_GLOB_ICASE, "x.c", true);
	m("*.C", 0, "x.c", false);
	m("é*", 0, "été", true);
}

/* found by tests/fuzz/fuzz_glob.c: a class running to the end of the glob
 * ("[]", "a[!]") read past the terminating NUL */
static void test_unterminated_class(void **state)
{
	static const char *const globs[] = { "[]", "a[!]", "*s~,l[]", "[^]", "x[]]" };
	struct wap_err err = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(globs) / sizeof(globs[0]); i++) {
		struct wap_glob *g = wap_glob_new(globs[i], 0, &err);
		if (g) {
			assert_false(wap_glob_match(g, "zzz", 3));
			wap_glob_free(g);
		}
		wap_err_release(&err);
	}
	m("x[]]", 0, "x]", true);
}

static void test_set(void **state)
{
	struct wap_globset s = { 0 };
	struct wap_err err = { 0 };
	char *rx;

	(void)state;
	assert_int_equal(wap_globset_add(&s, "*.o", WAP_GLOB_BASENAME, &err), 0);
	assert_int_equal(wap_globset_add(&s, "build/**", WAP_GLOB_BASENAME, &err), 0);
	assert_true(wap_globset_match(&s, "x/y.o", 5));
	assert_true(wap_globset_match_dir(&s, "build", 5));
	assert_false(wap_globset_match(&s, "x/y.c", 5));
	assert_int_equal(wap_globset_add(&s, "{", 0, &err), -1);
	assert_int_equal(s.n, 2);
	wap_globset_release(&s);
	rx = wap_glob_to_regex("**/*.{c,h}", 0, &err);
	assert_string_equal(rx, "^(?:.*/)?[^/]*\\.(?:c|h)$");
	free(rx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_star),
		cmocka_unit_test(test_unterminated_class),
		cmocka_unit_test(test_globstar),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_braces),
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_set),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
