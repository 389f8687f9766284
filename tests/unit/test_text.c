/* test_text.c - binary detection, UTF-8, line index, CRLF, MIME. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

static void test_binary(void **state)
{
	char *buf = calloc(1, 10000);

	(void)state;
	assert_false(wap_text_is_binary("hello\n", 6));
	assert_true(wap_text_is_binary("a\0b", 3));
	memset(buf, 'a', 10000);
	assert_false(wap_text_is_binary(buf, 10000));
	buf[8191] = 0;
	assert_true(wap_text_is_binary(buf, 10000));	/* last byte of the first 8 KiB */
	buf[8191] = 'a';
	buf[8192] = 0;
	assert_false(wap_text_is_binary(buf, 10000));	/* beyond: text, as git decides */
	assert_false(wap_text_is_binary("", 0));
	free(buf);
}

static void valid(const char *s, size_t n, bool want, size_t want_bad)
{
	size_t bad = 12345;

	assert_int_equal(wap_text_utf8_valid(s, n, &bad), want);
	if (!want)
		assert_int_equal(bad, want_bad);
}

static void test_utf8(void **state)
{
	(void)state;
	valid("plain ascii text that is longer than eight bytes", 48, true, 0);
	valid("caf\xc3\xa9", 5, true, 0);
	valid("\xe2\x82\xac euro", 8, true, 0);
	valid("\xf0\x9f\x98\x80", 4, true, 0);		/* U+1F600 */
	valid("\xf4\x8f\xbf\xbf", 4, true, 0);		/* U+10FFFF */
	valid("caf\xe9!", 5, false, 3);			/* Latin-1 */
	valid("ab\xc0\x80", 4, false, 2);		/* overlong NUL */
	valid("\xe0\x80\xaf", 3, false, 0);		/* overlong / */
	valid("x\xed\xa0\x80", 4, false, 1);		/* a surrogate */
	valid("\xf4\x90\x80\x80", 4, false, 0);		/* past U+10FFFF */
	valid("12345678\xe2\x82", 10, false, 8);	/* cut short after the fast path */
	valid("\x80", 1, false, 0);			/* a lone continuation byte */
	valid("", 0, true, 0);
}

static void test_cut(void **state)
{
	const char *s = "a\xc3\xa9z";	/* a é z */

	(void)state;
	assert_int_equal(wap_text_utf8_cut(s, 4, 10), 4);
	assert_int_equal(wap_text_utf8_cut(s, 4, 2), 1);	/* not inside é */
	assert_int_equal(wap_text_utf8_cut(s, 4, 3), 3);
	assert_int_equal(wap_text_utf8_cut(s, 4, 0), 0);
}

static void lines(const char *s, size_t n, size_t want, const size_t *offs)
{
	struct wap_lines li;

	assert_int_equal(wap_lines_index(&li, s, n), 0);
	assert_int_equal(li.n, want);
	assert_int_equal(wap_text_count_lines(s, n), want);
	for (size_t i = 0; i <= want; i++)
		assert_int_equal(li.off[i], offs[i]);
	wap_lines_release(&li);
}

static void test_lines(void **state)
{
	(void)state;
	lines("", 0, 0, (size_t[]){ 0 });
	lines("a", 1, 1, (size_t[]){ 0, 1 });
	lines("a\n", 2, 1, (size_t[]){ 0, 2 });
	lines("a\nb", 3, 2, (size_t[]){ 0, 2, 3 });
	lines("\n\n", 2, 2, (size_t[]){ 0, 1, 2 });
	lines("ab\r\ncd\r\n", 8, 2, (size_t[]){ 0, 4, 8 });
}

static void test_crlf(void **state)
{
	(void)state;
	assert_true(wap_text_is_crlf("a\r\nb\n", 5));
	assert_false(wap_text_is_crlf("a\nb\r\n", 5));	/* the first ending decides */
	assert_false(wap_text_is_crlf("no newline", 10));
	assert_false(wap_text_is_crlf("\n", 1));
}

static void test_mime(void **state)
{
	(void)state;
	assert_string_equal(wap_text_mime("x.png", "\x89PNG\r\n\x1a\n....", 12), "image/png");
	assert_string_equal(wap_text_mime("not-a-png.txt", "\x89PNG\r\n\x1a\n", 8), "image/png");
	assert_string_equal(wap_text_mime("main.c", "int x;", 6), "text/x-c");
	assert_string_equal(wap_text_mime("README", "hello", 5), "text/plain");
	assert_string_equal(wap_text_mime("blob", "a\0b", 3), "application/octet-stream");
	assert_string_equal(wap_text_mime("a.tar.gz", "\x1f\x8b\x08", 3), "application/gzip");
	assert_string_equal(wap_text_mime("x.JSON", NULL, 0), "application/json");
	assert_string_equal(wap_text_mime("dir.d/noext", NULL, 0), "application/octet-stream");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binary),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_mime),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
