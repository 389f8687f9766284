/* test_text.c - binary detection, UTF-8, line index, CRLF, MIME. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdbool.h>
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

static void test_utf16(void **state)
{
	/* "a\u00e9\u4e2d" and U+1F600 (a surrogate pair), little-endian */
	static const char le[] = "a\0\xe9\0\x2d\x4e\x3d\xd8\x00\xde";
	static const char want[] = "a\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80";
	char be[sizeof(le) - 1], *u, *back;
	size_t n, m;
	bool lossy = false, big;

	(void)state;
	assert_int_equal(wap_text_utf16_bom("\xff\xfe" "a", 3, &big), 2);
	assert_false(big);
	assert_int_equal(wap_text_utf16_bom("\xfe\xff" "a", 3, &big), 2);
	assert_true(big);
	assert_int_equal(wap_text_utf16_bom("\xff\xfe\0\0", 4, &big), 0);	/* UTF-32LE */
	assert_int_equal(wap_text_utf16_bom("\xef\xbb\xbf", 3, &big), 0);

	u = wap_text_utf16_to_utf8(le, sizeof(le) - 1, false, &n, &lossy);
	assert_false(lossy);
	assert_int_equal(n, sizeof(want) - 1);
	assert_memory_equal(u, want, n);
	back = wap_text_utf8_to_utf16(u, n, false, &m, &lossy);
	assert_false(lossy);
	assert_int_equal(m, sizeof(le) - 1);
	assert_memory_equal(back, le, m);
	free(back);
	for (size_t i = 0; i + 1 < sizeof(be); i += 2) {
		be[i] = le[i + 1];
		be[i + 1] = le[i];
	}
	back = wap_text_utf8_to_utf16(u, n, true, &m, &lossy);
	assert_memory_equal(back, be, m);
	free(back);
	free(u);

	/* a lone high surrogate, a lone low one, an odd last byte: U+FFFD */
	u = wap_text_utf16_to_utf8("\x3d\xd8" "a\0" "\x00\xdc" "b", 7, false, &n, &lossy);
	assert_true(lossy);
	assert_int_equal(n, 3 + 1 + 3 + 3);
	assert_memory_equal(u, "\xef\xbf\xbd" "a" "\xef\xbf\xbd" "\xef\xbf\xbd", n);
	free(u);
	/* invalid UTF-8 (a stray continuation, an overlong) becomes U+FFFD */
	lossy = false;
	back = wap_text_utf8_to_utf16("\x80" "\xc0\xaf", 3, false, &m, &lossy);
	assert_true(lossy);
	assert_int_equal(m, 6);
	assert_memory_equal(back, "\xfd\xff\xfd\xff\xfd\xff", 6);
	free(back);
}

/* non-UTF-8 names: escaped in the string, exact in base64 beside it */
static void test_names(void **state)
{
	struct wap_sb sb = WAP_SB_INIT;
	json_t *o = json_object(), *j;

	(void)state;
	wap_text_base64(&sb, "any carnal pleas", 16);
	assert_int_equal(sb.len, 24);
	assert_memory_equal(sb.buf, "YW55IGNhcm5hbCBwbGVhcw==", 24);
	wap_sb_release(&sb);
	j = wap_json_name("caf\xc3\xa9");
	assert_string_equal(json_string_value(j), "caf\xc3\xa9");
	json_decref(j);
	j = wap_json_name("bad\xffname");
	assert_string_equal(json_string_value(j), "bad\\xffname");
	json_decref(j);
	assert_int_equal(wap_json_set_name(o, "path", "ok.txt"), 0);
	assert_null(json_object_get(o, "pathBytes"));
	assert_int_equal(wap_json_set_name(o, "name", "a\xe9"), 0);
	assert_string_equal(json_string_value(json_object_get(o, "name")), "a\\xe9");
	assert_string_equal(json_string_value(json_object_get(o, "nameBytes")), "Yek=");
	json_decref(o);
}

/* a name is quoted when any byte of it, at any place, is a control
 * character (the eight-at-a-time scan against the plain rule), or it
 * begins with '"'; the quoted form is git's C escapes */
static void test_name_quote(void **state)
{
	char name[40];
	struct wap_sb sb = WAP_SB_INIT;

	(void)state;
	for (int c = 1; c < 256; c++)
		for (size_t len = 1; len < sizeof(name); len++)
			for (size_t at = 0; at < len; at++) {
				memset(name, 'a', len);
				name[at] = (char)c;
				bool want = c < 0x20 || c == 0x7f || (c == '"' && at == 0);
				assert_int_equal(wap_name_quoted(name, len), want);
			}
	assert_false(wap_name_quoted("", 0));
	assert_false(wap_name_quoted("plain \"x\".txt", 13));
	assert_string_equal(wap_name_show(&sb, "a\nb\t\033[1m\\\"\x7f\xc3\xa9"),
			    "\"a\\nb\\t\\033[1m\\\\\\\"\\177\xc3\xa9\"");
	assert_string_equal(wap_name_show(&sb, "\"q"), "\"\\\"q\"");
	assert_string_equal(wap_name_show(&sb, "src/a.c"), "src/a.c");
	wap_sb_release(&sb);
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
		cmocka_unit_test(test_utf16),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_name_quote),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
