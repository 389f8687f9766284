/* test_proc.c - lib/proc/proc.c and the exec op as `wap serve` drives them:
 * stdin from a string, streamed output, cancellation from another thread,
 * env given as an object. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "applet.h"
#include "proc.h"

static struct wap_proc_opts base(char **argv)
{
	struct wap_proc_opts o = { .argv = argv, .cwdfd = -1, .stdin_fd = -1,
				   .timeout_ms = 10000, .kill_after_ms = 500,
				   .max_output = 1000, .save_fd = { -1, -1 } };
	return o;
}

static void test_stdin_data(void **state)
{
	char *argv[] = { "/bin/sh", "-c", "wc -c; echo err >&2; exit 4", NULL };
	struct wap_proc_opts o = base(argv);
	struct wap_proc_result r;
	struct wap_err err = { 0 };
	size_t n = 3 << 20;	/* more than a pipe holds */
	char *data = malloc(n);

	(void)state;
	memset(data, 'a', n);
	o.stdin_data = data;
	o.stdin_len = n;
	assert_int_equal(wap_proc_run(&o, &r, &err), 0);
	assert_int_equal(r.exit_code, 4);
	assert_int_equal(atol(r.out[0].data), (long)n);
	assert_string_equal(r.out[1].data, "err\n");
	assert_false(r.timed_out);
	wap_proc_result_release(&r);
	free(data);
}

static void test_stdin_not_read(void **state)
{
	/* the command exits without reading: no SIGPIPE for us */
	char *argv[] = { "/bin/true", NULL };
	struct wap_proc_opts o = base(argv);
	struct wap_proc_result r;
	struct wap_err err = { 0 };
	size_t n = 1 << 20;
	char *data = calloc(1, n);

	(void)state;
	o.stdin_data = data;
	o.stdin_len = n;
	assert_int_equal(wap_proc_run(&o, &r, &err), 0);
	assert_int_equal(r.exit_code, 0);
	wap_proc_result_release(&r);
	free(data);
}

struct collected {
	char buf[4096];
	size_t len;
	int calls;
};

static void collect(void *arg, const char *stream, const char *data, size_t len)
{
	struct collected *c = arg;

	c->calls++;
	if (!strcmp(stream, "stdout") && c->len + len < sizeof(c->buf)) {
		memcpy(c->buf + c->len, data, len);
		c->len += len;
	}
}

static void test_output_callback(void **state)
{
	char *argv[] = { "/bin/sh", "-c", "echo one; sleep 0.05; echo two; seq 1 300", NULL };
	struct wap_proc_opts o = base(argv);
	struct wap_proc_result r;
	struct wap_err err = { 0 };
	struct collected c = { .len = 0 };

	(void)state;
	o.output = collect;
	o.output_arg = &c;
	o.max_output = 10;
	assert_int_equal(wap_proc_run(&o, &r, &err), 0);
	assert_true(c.calls >= 2);
	/* the callback sees everything; the result keeps head and tail */
	assert_int_equal(c.len, r.out[0].bytes);
	assert_memory_equal(c.buf, "one\ntwo\n1\n", 10);
	assert_true(r.out[0].truncated);
	assert_non_null(strstr(r.out[0].data, "bytes omitted]"));
	wap_proc_result_release(&r);
}

static struct wap_cancel cancel_flag;

static void *canceller(void *arg)
{
	(void)arg;
	usleep(200 * 1000);
	wap_cancel_set(&cancel_flag, 1);
	return NULL;
}

static void test_cancel(void **state)
{
	char *argv[] = { "/bin/sh", "-c", "trap '' TERM; echo started; sleep 30", NULL };
	struct wap_proc_opts o = base(argv);
	struct wap_proc_result r;
	struct wap_err err = { 0 };
	pthread_t t;

	(void)state;
	cancel_flag = (struct wap_cancel)WAP_CANCEL_INIT;
	o.cancel = &cancel_flag;
	o.kill_after_ms = 200;
	pthread_create(&t, NULL, canceller, NULL);
	assert_int_equal(wap_proc_run(&o, &r, &err), 0);
	pthread_join(t, NULL);
	assert_true(r.cancelled);
	assert_false(r.timed_out);
	assert_int_equal(r.signal, SIGKILL);
	assert_string_equal(r.out[0].data, "started\n");
	assert_true(r.duration_ms < 5000);
	wap_proc_result_release(&r);
}

/* calls side by side (as in a threaded server) must not hold each other's
 * pipes: a quick command never waits for a slow one started beside it */
static long slowest_quick;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void *mixed(void *arg)
{
	char *slow[] = { "/bin/sleep", "0.4", NULL }, *quick[] = { "/bin/true", NULL };

	(void)arg;
	for (int i = 0; i < 6; i++) {
		struct wap_proc_opts o = base(i % 2 ? quick : slow);
		struct wap_proc_result r;
		struct wap_err err = { 0 };
		if (wap_proc_run(&o, &r, &err))
			continue;
		if (i % 2) {
			pthread_mutex_lock(&mu);
			if (r.duration_ms > slowest_quick)
				slowest_quick = r.duration_ms;
			pthread_mutex_unlock(&mu);
		}
		wap_proc_result_release(&r);
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	pthread_t t[6];

	(void)state;
	for (int i = 0; i < 6; i++)
		pthread_create(&t[i], NULL, mixed, NULL);
	for (int i = 0; i < 6; i++)
		pthread_join(t[i], NULL);
	assert_true(slowest_quick < 300);
}

static void test_not_found(void **state)
{
	char *argv[] = { "no-such-program-wap", NULL };
	struct wap_proc_opts o = base(argv);
	struct wap_proc_result r;
	struct wap_err err = { 0 };

	(void)state;
	assert_int_equal(wap_proc_run(&o, &r, &err), -1);
	assert_int_equal(err.kind, WAP_E_FAILED);
	assert_string_equal(err.msg, "Command not found: no-such-program-wap");
	wap_err_release(&err);
}

static void test_exec_op(void **state)
{
	const struct wap_applet *a = wap_applet_find("exec");
	char dir[] = "/tmp/wap-test-proc.XXXXXX";
	struct wap_ws ws;
	struct wap_err err = { 0 };
	struct wap_call call = { 0 };
	json_t *req, *res = NULL;

	(void)state;
	assert_non_null(a);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(wap_ws_init(&ws, dir, NULL, &err), 0);
	call.ws = &ws;
	req = json_pack("{s:s, s:{s:s}, s:s}", "command", "cat; echo \"$GREETING\"; pwd",
			"env", "GREETING", "hi there", "stdin", "from stdin\n");
	assert_int_equal(wap_args_check(a, req, &err), 0);
	assert_int_equal(a->op(&call, req, &res, &err), 0);
	{
		char want[256];
		snprintf(want, sizeof(want), "from stdin\nhi there\n%s\n", ws.root);
		assert_string_equal(json_string_value(json_object_get(res, "stdout")), want);
	}
	assert_int_equal(json_integer_value(json_object_get(res, "exit_code")), 0);
	/* the result matches the declared output schema's required keys */
	{
		json_t *sc = json_loads(a->output_schema, 0, NULL), *k;
		size_t i;
		assert_non_null(sc);
		json_array_foreach(json_object_get(sc, "required"), i, k)
			assert_non_null(json_object_get(res, json_string_value(k)));
		json_decref(sc);
	}
	json_decref(res);
	json_decref(req);
	/* a bad env object is refused by the schema check */
	req = json_pack("{s:s, s:{s:i}}", "command", "true", "env", "X", 1);
	assert_int_equal(wap_args_check(a, req, &err), -1);
	assert_int_equal(err.kind, WAP_E_INVALID);
	json_decref(req);
	wap_ws_release(&ws);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stdin_data),
		cmocka_unit_test(test_stdin_not_read),
		cmocka_unit_test(test_output_callback),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_exec_op),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
