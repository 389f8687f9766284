/* test_json.c - lib/core/json.c writes and reads JSON as jansson does, in
 * the corners the fuzzer (tests/fuzz/fuzz_json.c) rarely reaches: cycles,
 * nesting past its own stacks, reals, invalid UTF-8, a failure mid-way. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* wap_json_dumps(V) is json_dumps(V, JSON_COMPACT | JSON_ENCODE_ANY) */
static void same_dump(const json_t *v)
{
	char *a = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	size_t n = 0;
	char *b = wap_json_dumps(v, &n);

	if (!a) {
		assert_null(b);
	} else {
		assert_non_null(b);
		assert_string_equal(a, b);
		assert_int_equal(n, strlen(a));
	}
	free(a);
	free(b);
}

static void test_dump_like_jansson(void **state)
{
	json_t *v;

	(void)state;
	v = json_pack("{s:s, s:i, s:I, s:b, s:n, s:[], s:{}, s:f, s:f, s:f}", "text",
		      "a\"b\\c/d\b\f\n\r\t\x01\x1f\x7f \xc3\xa9 \xf0\x9f\x98\x80", "int", -42,
		      "min", (json_int_t)INT64_MIN, "yes", 1, "nil", "arr", "obj", "r1", 0.1,
		      "r2", 1e300, "r3", -3.0);
	same_dump(v);
	json_decref(v);
	/* a key set again keeps its place */
	v = json_pack("{s:i, s:i}", "a", 1, "b", 2);
	json_object_set_new(v, "a", json_integer(3));
	same_dump(v);
	json_decref(v);
	v = json_string("top-level scalar");
	same_dump(v);
	json_decref(v);
}

/* strings are scanned 8 bytes at a time: every byte that must be escaped or
 * checked (and the edges of the plain ones), at every offset of strings of
 * lengths 1 to 40, written as jansson writes them; invalid UTF-8 at every
 * offset refused */
static void test_dump_string_every_offset(void **state)
{
	static const char *const odd[] = { "\"", "\\", "\n", "\x01", "\x1f", "\x7f", " ", "!", "#",
		"[", "]", "~", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\x21\x22" };
	char buf[64];

	(void)state;
	for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
		size_t ol = strlen(odd[k]);
		for (size_t len = 1; len <= 40; len++) {
			for (size_t at = 0; at + ol <= len; at++) {
				json_t *v;
				memset(buf, 'a' + (int)(len % 26), len);
				memcpy(buf + at, odd[k], ol);
				v = json_stringn(buf, len);
				assert_non_null(v);
				same_dump(v);
				json_decref(v);
				/* invalid UTF-8 there: refused, as by jansson */
				buf[at] = (char)0xff;
				v = json_stringn_nocheck(buf, len);
				same_dump(v);
				json_decref(v);
			}
		}
	}
}

static void test_dump_refuses_what_jansson_refuses(void **state)
{
	json_t *a = json_array(), *b = json_array(), *v;
	struct wap_sb sb = WAP_SB_INIT;

	(void)state;
	/* a cycle through two arrays */
	json_array_append(a, b);
	json_array_append(b, a);
	same_dump(a);
	wap_sb_adds(&sb, "kept");
	assert_int_equal(wap_json_dump(a, &sb), -1);
	assert_string_equal(sb.buf, "kept");	/* as it was */
	json_array_clear(b);
	/* the same value twice is no cycle */
	json_array_append_new(b, json_integer(1));
	v = json_pack("[O, O, {s:O}]", b, b, "k", b);
	same_dump(v);
	json_decref(v);
	/* strings made without a check: invalid UTF-8, overlong, surrogate */
	static const char *const bad[] = { "\xff", "a\xc3", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = json_pack("[s, o]", "ok", json_stringn_nocheck(bad[i], strlen(bad[i])));
		same_dump(v);
		assert_int_equal(wap_json_dump(v, &sb), -1);
		assert_string_equal(sb.buf, "kept");
		json_decref(v);
		/* such a key jansson writes as a broken string ({":true});
		 * wap writes nothing */
		v = json_object();
		json_object_setn_new_nocheck(v, bad[i], strlen(bad[i]), json_true());
		assert_int_equal(wap_json_dump(v, &sb), -1);
		assert_string_equal(sb.buf, "kept");
		json_decref(v);
	}
	json_decref(a);
	json_decref(b);
	wap_sb_release(&sb);
}

/* deeper than either of json.c's own stacks: jansson takes over */
static void test_deep(void **state)
{
	char *text = malloc(2 * 3000 + 1);
	json_t *v, *w;
	json_error_t e;

	(void)state;
	for (int depth = 100; depth <= 3000; depth += 700) {
		memset(text, '[', depth);
		memset(text + depth, ']', depth);
		text[2 * depth] = 0;
		v = wap_json_loadb(text, 2 * depth, 0, &e);
		w = json_loadb(text, 2 * depth, 0, &e);
		assert_true(!v == !w);	/* jansson refuses past 2048 */
		if (v) {
			assert_true(json_equal(v, w));
			same_dump(v);
		}
		json_decref(v);
		json_decref(w);
	}
	free(text);
}

/* every refusal is jansson's own, with its message and position */
static void test_load_errors(void **state)
{
	static const char *const in[] = {
		"", " ", "{", "{\"a\":1,}", "[1,]", "01", "-", "1.", "\"\\u0000\"",
		"\"\\ud800\"", "\"\\udc00x\"", "\"a\nb\"", "\"\xff\"", "truex", "nul",
		"[9223372036854775808]", "{\"a\" 1}", "[1] x", "\"\\x\"", "{1:2}",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		json_error_t ea, eb;
		json_t *a = json_loadb(in[i], strlen(in[i]), JSON_DECODE_ANY, &ea);
		json_t *b = wap_json_loadb(in[i], strlen(in[i]), JSON_DECODE_ANY, &eb);
		assert_null(a);
		assert_null(b);
		assert_string_equal(ea.text, eb.text);
		assert_int_equal(ea.position, eb.position);
	}
}

static void test_load_values(void **state)
{
	static const char *const in[] = {
		"1.5", "-0", "-9223372036854775808", "[1e2, 0.5, -0.0]", "\"\\ud83d\\ude00\\u00e9\\/\"",
		" {\"a\":{\"b\":[true,false,null]},\"a\":2} ", "{\"\\u00e9t\\u00e9\":\"x\",\"k\":\"\\n\"}",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		json_t *a = json_loadb(in[i], strlen(in[i]), JSON_DECODE_ANY, NULL);
		json_t *b = wap_json_loadb(in[i], strlen(in[i]), JSON_DECODE_ANY, NULL);
		char *sa = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY);
		char *sb = json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY);
		assert_non_null(sa);
		assert_non_null(sb);
		assert_string_equal(sa, sb);
		free(sa);
		free(sb);
		json_decref(a);
		json_decref(b);
	}
	/* without JSON_DECODE_ANY only an object or an array */
	assert_null(wap_json_loadb("1", 1, 0, NULL));
	/* other flags are jansson's to honour */
	{
		json_t *v = wap_json_loadb("[1] x", 5, JSON_DISABLE_EOF_CHECK, NULL);
		assert_non_null(v);
		assert_int_equal(json_array_size(v), 1);
		json_decref(v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_like_jansson),
		cmocka_unit_test(test_dump_string_every_offset),
		cmocka_unit_test(test_dump_refuses_what_jansson_refuses),
		cmocka_unit_test(test_deep),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_load_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
