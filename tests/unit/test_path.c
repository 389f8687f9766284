/* test_path.c - DIR/NAME and path order, each said once (lib/core/path.c) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"

static void joined(const char *dir, const char *name, size_t n, const char *want)
{
	struct wap_sb sb = WAP_SB_INIT;
	char *s;

	wap_path_addn(&sb, dir, name, n);
	s = wap_sb_detach(&sb);
	assert_string_equal(s, want);
	free(s);
}

static void test_join(void **state)
{
	char *s;

	(void)state;
	joined(".", "a.c", 3, "a.c");
	joined("", "a.c", 3, "a.c");
	joined(NULL, "a.c", 3, "a.c");
	joined("src", "a.c", 3, "src/a.c");
	joined("src/x", "a.c/rest", 3, "src/x/a.c");
	joined("src", "", 0, "src");
	joined(".", "", 0, ".");
	s = wap_path_join("a/b", "c");
	assert_string_equal(s, "a/b/c");
	free(s);
	s = wap_path_join(".", "c");
	assert_string_equal(s, "c");
	free(s);
}

static void test_cmp(void **state)
{
	(void)state;
	assert_true(wap_path_cmp("a/b", "a-b") < 0);	/* '/' before every byte */
	assert_true(wap_path_cmp("a", "a/b") < 0);	/* a directory, then its entries */
	assert_true(wap_path_cmp("a/z", "aa") < 0);
	assert_true(wap_path_cmp("b", "a/z") > 0);
	assert_int_equal(wap_path_cmp("x/y", "x/y"), 0);
	assert_true(wap_path_cmp("\xff", "a") > 0);	/* bytes unsigned */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_cmp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
