/* test_path.c - DIR/NAME spelled once (lib/path.c) */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
