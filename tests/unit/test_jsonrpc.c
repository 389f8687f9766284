/* test_jsonrpc.c - the JSON-RPC core, the HTTP allow-lists and the audit
 * summary: what the servers rely on to survive any input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "http.h"
#include "json.h"
#include "jsonrpc.h"

static int code_of(const json_t *r)
{
	return (int)json_integer_value(json_object_get(json_object_get(r, "error"), "code"));
}

static json_t *echo(void *arg, const struct wap_rpc_msg *m)
{
	int *calls = arg;

	(*calls)++;
	if (m->kind != WAP_RPC_REQUEST)
		return NULL;
	if (!strcmp(m->method, "fail"))
		return wap_rpc_error(m->id, WAP_RPC_METHOD_NOT_FOUND, "nope", NULL);
	if (!strcmp(m->method, "null"))
		return NULL;
	return wap_rpc_result(m->id, json_string(m->method));
}

static json_t *run(const char *text, int *calls)
{
	return wap_rpc_process(text, strlen(text), NULL, echo, calls);
}

static void test_errors(void **state)
{
	int calls = 0;
	json_t *r;

	(void)state;
	r = run("{\"jsonrpc\":\"2.0\",\"id\":1,", &calls);
	assert_int_equal(code_of(r), WAP_RPC_PARSE_ERROR);
	assert_true(json_is_null(json_object_get(r, "id")));
	json_decref(r);
	r = run("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":3}", &calls);
	assert_int_equal(code_of(r), WAP_RPC_INVALID_REQUEST);
	assert_int_equal(json_integer_value(json_object_get(r, "id")), 7);
	json_decref(r);
	r = run("{\"jsonrpc\":\"1.0\",\"id\":\"a\",\"method\":\"m\"}", &calls);
	assert_int_equal(code_of(r), WAP_RPC_INVALID_REQUEST);
	json_decref(r);
	r = run("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"m\"}", &calls);
	assert_int_equal(code_of(r), WAP_RPC_INVALID_REQUEST);
	json_decref(r);
	r = run("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":5}", &calls);
	assert_int_equal(code_of(r), WAP_RPC_INVALID_REQUEST);
	json_decref(r);
	r = run("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"null\"}", &calls);
	assert_int_equal(code_of(r), WAP_RPC_INTERNAL);
	json_decref(r);
	r = run("{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234567890,\"method\":\"m\"}", &calls);
	assert_int_equal(code_of(r), WAP_RPC_INVALID_REQUEST);
	json_decref(r);
	r = run("\"just a string\"", &calls);
	assert_int_equal(code_of(r), WAP_RPC_INVALID_REQUEST);
	json_decref(r);
	assert_int_equal(calls, 1);	/* only the "null" method reached the handler */
}

static void test_ids_and_notifications(void **state)
{
	int calls = 0;
	json_t *r;

	(void)state;
	r = run("{\"jsonrpc\":\"2.0\",\"id\":\"x-1\",\"method\":\"hello\"}", &calls);
	assert_string_equal(json_string_value(json_object_get(r, "id")), "x-1");
	assert_string_equal(json_string_value(json_object_get(r, "result")), "hello");
	json_decref(r);
	r = run("{\"jsonrpc\":\"2.0\",\"id\":-2.5,\"method\":\"hello\"}", &calls);
	assert_true(json_real_value(json_object_get(r, "id")) == -2.5);
	json_decref(r);
	r = run("{\"jsonrpc\":\"2.0\",\"method\":\"note\"}", &calls);
	assert_null(r);
	r = run("{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}", &calls);
	assert_null(r);
	assert_int_equal(calls, 4);
}

static void test_batches_and_limits(void **state)
{
	int calls = 0;
	struct wap_rpc_limits lim = { .max_message = 64, .max_batch = 2 };
	const char *b = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},{\"jsonrpc\":\"2.0\",\"method\":\"n\"},5]";
	json_t *r;
	char big[200];

	(void)state;
	r = run(b, &calls);
	assert_true(json_is_array(r));
	assert_int_equal(json_array_size(r), 2);	/* the notification has no reply */
	assert_int_equal(code_of(json_array_get(r, 1)), WAP_RPC_INVALID_REQUEST);
	json_decref(r);
	r = run("[]", &calls);
	assert_int_equal(code_of(r), WAP_RPC_INVALID_REQUEST);
	json_decref(r);
	r = run("[{\"jsonrpc\":\"2.0\",\"method\":\"n\"}]", &calls);
	assert_null(r);
	r = wap_rpc_process(b, strlen(b), &lim, echo, &calls);
	assert_int_equal(code_of(r), WAP_RPC_INVALID_REQUEST);	/* over 64 bytes */
	json_decref(r);
	lim.max_message = 0;
	r = wap_rpc_process(b, strlen(b), &lim, echo, &calls);
	assert_int_equal(code_of(r), WAP_RPC_INVALID_REQUEST);	/* 3 > 2 messages */
	json_decref(r);
	lim.no_batches = true;
	r = wap_rpc_process("[1]", 3, &lim, echo, &calls);
	assert_int_equal(code_of(r), WAP_RPC_INVALID_REQUEST);
	json_decref(r);
	memset(big, '[', sizeof(big));
	r = wap_rpc_process(big, sizeof(big), NULL, echo, &calls);
	assert_int_equal(code_of(r), WAP_RPC_PARSE_ERROR);	/* unterminated */
	json_decref(r);
	r = wap_rpc_process("{\"a\":\"x\0y\"}", 11, NULL, echo, &calls);
	assert_int_equal(code_of(r), WAP_RPC_PARSE_ERROR);	/* raw NUL */
	json_decref(r);
}

static void test_dump_one_line(void **state)
{
	json_t *m = wap_rpc_result(NULL, json_string("a\nb\r\n"));
	char *s = wap_rpc_dump(m, NULL);

	(void)state;
	assert_null(strchr(s, '\n'));
	free(s);
	json_decref(m);
}

static void test_allow_lists(void **state)
{
	char *extra[] = { "myhost.lan", "https://app.example", NULL };

	(void)state;
	assert_true(wap_http_host_ok("localhost", NULL));
	assert_true(wap_http_host_ok("127.0.0.1:8765", NULL));
	assert_true(wap_http_host_ok("[::1]:1", NULL));
	assert_true(wap_http_host_ok("LOCALHOST:80", NULL));
	assert_false(wap_http_host_ok("evil.com", NULL));
	assert_false(wap_http_host_ok("localhost.evil.com", NULL));
	assert_false(wap_http_host_ok("127.0.0.1.nip.io:80", NULL));
	assert_false(wap_http_host_ok("localhost:80x", NULL));
	assert_false(wap_http_host_ok("", NULL));
	assert_true(wap_http_host_ok("myhost.lan:9", extra));
	assert_true(wap_http_origin_ok("http://localhost:3000", NULL));
	assert_true(wap_http_origin_ok("https://127.0.0.1", NULL));
	assert_false(wap_http_origin_ok("null", NULL));
	assert_false(wap_http_origin_ok("http://evil.com", NULL));
	assert_false(wap_http_origin_ok("http://localhost.evil.com", NULL));
	assert_false(wap_http_origin_ok("http://localhost/x", NULL));
	assert_true(wap_http_origin_ok("https://app.example", extra));
	assert_false(wap_http_origin_ok("http://app.example", extra));
	assert_true(wap_http_origin_ok("http://myhost.lan:8080", extra));
	/* where --no-auth may listen */
	assert_true(wap_http_loopback("127.0.0.1"));
	assert_true(wap_http_loopback("127.1.2.3"));
	assert_true(wap_http_loopback("::1"));
	assert_true(wap_http_loopback("::ffff:127.0.0.1"));
	assert_true(wap_http_loopback("localhost"));
	assert_false(wap_http_loopback("0.0.0.0"));
	assert_false(wap_http_loopback("::"));
	assert_false(wap_http_loopback("192.168.1.2"));
	assert_false(wap_http_loopback("128.0.0.1"));
	assert_false(wap_http_loopback("localhost.evil.com"));
	assert_false(wap_http_loopback(""));
}

static void test_audit_summary(void **state)
{
	json_t *req = json_pack("{s:s, s:s, s:s, s:[s], s:s, s:s}", "path", "a.txt",
		"content", "SECRET", "command", "ls", "paths", "x", "url",
		"https://user:tok@host/repo.git", "stdin", "SECRET2");
	json_t *s = wap_audit_summary("write", req);
	char *text = json_dumps(s, 0);

	(void)state;
	assert_null(strstr(text, "SECRET"));
	assert_null(strstr(text, "tok@"));
	assert_non_null(strstr(text, "\"content_bytes\": 6"));
	assert_non_null(strstr(text, "\"command\": \"ls\""));
	free(text);
	json_decref(s);
	/* what is typed into a terminal is kept (its command), a file's text is not */
	json_decref(req);
	req = json_pack("{s:s, s:s}", "terminalId", "term-1", "text", "make test");
	s = wap_audit_summary("terminal.sendText", req);
	assert_string_equal(json_string_value(json_object_get(s, "text")), "make test");
	assert_string_equal(json_string_value(json_object_get(s, "terminalId")), "term-1");
	json_decref(s);
	json_decref(req);
	req = json_pack("{s:s, s:s}", "action", "insert-after", "text", "SECRET3");
	s = wap_audit_summary("sym", req);
	text = json_dumps(s, 0);
	assert_null(strstr(text, "SECRET3"));
	free(text);
	json_decref(s);
	json_decref(req);
}

/* A tool's reply written straight as bytes (the stdio door) against the
 * same reply built as a value and dumped (every other door): the same
 * bytes, or both refused, whatever the text, the id and the result hold. */
static void one_tool_reply(const json_t *id, const char *text, bool is_error, json_t *res)
{
	json_t *v = wap_rpc_tool_result(id, text, is_error, res);
	struct wap_sb tree = WAP_SB_INIT, raw = WAP_SB_INIT;
	int rt = wap_json_dump(v, &tree);
	int rr;

	/* in the middle of a buffer, as in the door's: what was there stays */
	wap_sb_adds(&raw, "before\n");
	rr = wap_rpc_tool_reply(&raw, id, text, is_error, res);
	assert_int_equal(rr, rt);
	if (!rt) {
		assert_int_equal(raw.len, tree.len + 7);
		assert_memory_equal(raw.buf + 7, tree.buf, tree.len);
	} else {
		assert_int_equal(raw.len, 7);
	}
	assert_string_equal(raw.buf, rt ? "before\n" : raw.buf);
	json_decref(v);
	wap_sb_release(&tree);
	wap_sb_release(&raw);
}

/* the members are found by their whole key: a NUL inside a key, a key
 * that only starts like one, or a duplicate (the last one wins) */
static void test_member_keys(void **state)
{
	int calls = 0;
	json_t *r;
	struct wap_rpc_msg m;
	json_t *msg = json_object();

	(void)state;
	/* the parser refuses a NUL in a key; a message made by hand may hold one */
	r = run("{\"jsonrpc\":\"2.0\",\"id\\u0000x\":5,\"method\":\"m\"}", &calls);
	assert_int_equal(code_of(r), WAP_RPC_PARSE_ERROR);
	json_decref(r);
	json_object_set_new(msg, "jsonrpc", json_string("2.0"));
	json_object_set_new(msg, "method", json_string("m"));
	json_object_setn_new(msg, "id\0x", 4, json_integer(5));
	assert_int_equal(wap_rpc_check(msg, &m, &r), WAP_RPC_NOTIFICATION);	/* no "id" */
	assert_null(m.id);
	json_object_setn_new(msg, "jsonrpc\0", 8, json_string("1.0"));
	json_object_setn_new(msg, "id", 2, json_integer(6));
	assert_int_equal(wap_rpc_check(msg, &m, &r), WAP_RPC_REQUEST);
	assert_int_equal(json_integer_value(m.id), 6);
	json_object_del(msg, "jsonrpc");
	assert_int_equal(wap_rpc_check(msg, &m, &r), WAP_RPC_INVALID);
	assert_int_equal(code_of(r), WAP_RPC_INVALID_REQUEST);
	json_decref(r);
	json_decref(msg);
	r = run("{\"jsonrpc\":\"2.0\",\"id\":1,\"methods\":\"m\",\"metho\":\"m\"}", &calls);
	assert_int_equal(code_of(r), WAP_RPC_INVALID_REQUEST);
	json_decref(r);
	r = run("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"first\",\"method\":\"last\"}", &calls);
	assert_int_equal(json_integer_value(json_object_get(r, "id")), 2);
	assert_string_equal(json_string_value(json_object_get(r, "result")), "last");
	json_decref(r);
	r = run("{\"method\":\"m\",\"params\":[],\"i\":1,\"jsonrpc\":\"2.0\",\"resul\":1,\"errors\":1}", &calls);
	assert_null(r);
	assert_int_equal(calls, 2);
	r = run("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\",\"error\":{\"code\":1}}", &calls);
	assert_int_equal(code_of(r), WAP_RPC_INVALID_REQUEST);
	json_decref(r);
}

static void test_tool_reply_bytes(void **state)
{
	static const char *const texts[] = {
		"", "plain", "1: small file, read in every call\n",
		"quote \" backslash \\ slash / tab \t cr \r nl \n bs \b ff \f",
		"\x01\x02\x1f\x7f controls", "\xe2\x80\xa8 U+2028 \xe2\x80\xa9 U+2029",
		"\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80 \xef\xbf\xbd \xf4\x8f\xbf\xbf",
		"\xff invalid lead", "cut \xe2\x82", "overlong \xc0\xaf", "surrogate \xed\xa0\x80",
		"past U+10FFFF \xf4\x90\x80\x80", "\x80 lone continuation", "\"\\\"\\\\",
		"eight by eight: abcdefgh\"ijklmnop\\qrstuvwx\x19yz",
		NULL,
	};
	json_t *ids[] = {
		json_integer(0), json_integer(-9007199254740993LL), json_string("id \"\\\n\xe2\x80\xa8"),
		json_real(1.5), json_null(), NULL,
	};
	json_t *bad = json_object();
	json_t *res[4];
	char *big = malloc(300001);

	(void)state;
	res[0] = NULL;
	res[1] = json_pack("{s:s, s:i, s:b, s:n, s:f, s:[s, {s:s}]}", "content", "a\"b\\c\n\x01",
			   "n", 42, "t", 1, "z", "r", 0.1, "list", "\xe2\x80\xa8", "k\x1f", "v");
	res[2] = json_object();
	/* not UTF-8 (a _nocheck string): both refuse the reply */
	json_object_set_new_nocheck(bad, "s", json_string_nocheck("\xff"));
	res[3] = bad;
	for (size_t i = 0; i < 300000; i++)
		big[i] = "ab\"\\\n\x01\xc3\xa9x"[i % 9];
	big[300000] = 0;
	for (size_t t = 0; texts[t]; t++)
		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
			for (size_t r = 0; r < 4; r++) {
				one_tool_reply(ids[i], texts[t], r & 1, res[r]);
				one_tool_reply(ids[i], texts[t], !(r & 1), res[r]);
			}
	one_tool_reply(ids[0], big, false, res[1]);
	big[9 * 33332 + 7] = 0;	/* ends inside an é: not UTF-8, the sentence instead */
	one_tool_reply(ids[0], big, false, res[1]);
	one_tool_reply(ids[0], NULL, false, NULL);
	free(big);
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		json_decref(ids[i]);
	for (size_t r = 0; r < 4; r++)
		json_decref(res[r]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_ids_and_notifications),
		cmocka_unit_test(test_batches_and_limits),
		cmocka_unit_test(test_dump_one_line),
		cmocka_unit_test(test_allow_lists),
		cmocka_unit_test(test_audit_summary),
		cmocka_unit_test(test_tool_reply_bytes),
		cmocka_unit_test(test_member_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
