/* test_term.c - lib/proc/term.c: PTY shells, command terminals, bounded output,
 * the ACP terminal methods, kill/release and cleanup. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "term.h"

static struct wap_ws ws;
static char dir[] = "/tmp/wap-term-XXXXXX";
static int noutput, nexit;
static pthread_mutex_t cbmu = PTHREAD_MUTEX_INITIALIZER;

static void on_out(void *arg, const char *id, const char *data, size_t len)
{
	(void)arg; (void)id; (void)data; (void)len;
	pthread_mutex_lock(&cbmu);
	noutput++;
	pthread_mutex_unlock(&cbmu);
}

static void on_exit_cb(void *arg, const char *id, int code, int sig)
{
	(void)arg; (void)id; (void)code; (void)sig;
	pthread_mutex_lock(&cbmu);
	nexit++;
	pthread_mutex_unlock(&cbmu);
}

static int setup(void **state)
{
	struct wap_err err = { 0 };
	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(wap_ws_init(&ws, dir, NULL, &err), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;
	wap_ws_release(&ws);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* poll the output until it contains NEEDLE (5 s at most) */
static char *wait_output(struct wap_terms *ts, const char *id, const char *needle)
{
	for (int i = 0; i < 500; i++) {
		struct wap_err err = { 0 };
		char *out;
		size_t len;
		bool tr;
		assert_int_equal(wap_term_output(ts, id, 0, &out, &len, &tr, NULL, &err), 0);
		if (strstr(out, needle))
			return out;
		free(out);
		usleep(10000);
	}
	{ char *o; size_t l; bool t; struct wap_err e = { 0 }; wap_term_output(ts, id, 0, &o, &l, &t, NULL, &e); fprintf(stderr, "OUT[%s]\n", o); free(o); }
	fail_msg("output of %s never contained [%s]", id, needle);
	return NULL;
}

static void test_shell_pty(void **state)
{
	struct wap_err err = { 0 };
	struct wap_term_opts o = { .name = "t1" };
	struct wap_term_status st;
	struct wap_terms *ts = wap_terms_new(&ws, on_out, on_exit_cb, NULL);
	char id[WAP_TERM_ID_LEN], *out;
	json_t *l, *a;
	(void)state;

	setenv("SHELL", "/bin/sh", 1);
	assert_int_equal(wap_term_create(ts, &o, id, &err), 0);
	assert_string_equal(id, "term-1");
	assert_int_equal(wap_term_send(ts, id, "echo hel''lo-$((6*7))\n", 22, NULL, &err), 0);
	out = wait_output(ts, id, "hello-42");
	free(out);
	/* an interactive program: cat echoes what it reads */
	assert_int_equal(wap_term_send(ts, id, "cat\n", 4, NULL, &err), 0);
	usleep(100000);
	assert_int_equal(wap_term_send(ts, id, "ping-pong\n", 10, NULL, &err), 0);
	out = wait_output(ts, id, "ping-pong\r\nping-pong");
	free(out);
	assert_int_equal(wap_term_send(ts, id, "\x04", 1, NULL, &err), 0);	/* ^D ends cat */
	assert_int_equal(wap_term_send(ts, id, "pwd\n", 4, NULL, &err), 0);
	out = wait_output(ts, id, dir + 4);
	free(out);
	l = wap_term_list(ts);
	assert_int_equal(json_array_size(l), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(l, 0), "name")), "t1");
	json_decref(l);
	a = wap_term_active(ts);
	assert_string_equal(json_string_value(json_object_get(a, "terminalId")), "term-1");
	json_decref(a);
	assert_int_equal(wap_term_send(ts, id, "exit 3\n", 7, NULL, &err), 0);
	assert_int_equal(wap_term_wait(ts, id, 5000, NULL, &st, &err), 0);
	assert_true(st.exited);
	assert_int_equal(st.exit_code, 3);
	assert_int_equal(wap_term_send(ts, id, "x", 1, NULL, &err), -1);
	assert_int_equal(err.kind, WAP_E_FAILED);
	wap_err_release(&err);
	assert_true(noutput > 0);
	assert_int_equal(nexit, 1);
	wap_terms_free(ts);
}

static void test_line_bound(void **state)
{
	struct wap_err err = { 0 };
	char *argv[] = { "sh", "-c", "i=0; while [ $i -lt 50 ]; do echo line$i; i=$((i+1)); done", NULL };
	struct wap_term_opts o = { .argv = argv, .max_lines = 10 };
	struct wap_terms *ts = wap_terms_new(&ws, NULL, NULL, NULL);
	char id[WAP_TERM_ID_LEN], *out;
	size_t len;
	bool tr;
	(void)state;

	assert_int_equal(wap_term_create(ts, &o, id, &err), 0);
	assert_int_equal(wap_term_wait(ts, id, 5000, NULL, NULL, &err), 0);
	assert_int_equal(wap_term_output(ts, id, 0, &out, &len, &tr, NULL, &err), 0);
	assert_true(tr);
	assert_string_equal(out, "line40\nline41\nline42\nline43\nline44\nline45\nline46\nline47\nline48\nline49\n");
	free(out);
	assert_int_equal(wap_term_output(ts, id, 2, &out, &len, &tr, NULL, &err), 0);
	assert_string_equal(out, "line48\nline49\n");
	free(out);
	wap_terms_free(ts);
}

static void test_acp(void **state)
{
	struct wap_err err = { 0 };
	struct wap_terms *ts = wap_terms_new(&ws, NULL, NULL, NULL);
	json_t *res, *p;
	const char *id;
	char idbuf[WAP_TERM_ID_LEN];
	(void)state;

	/* output over the limit is dropped from the start, at a character
	 * boundary: "é" is two bytes, a limit of 5 keeps "é\n" + ... */
	p = json_pack("{s:s, s:s, s:[s, s], s:[{s:s, s:s}], s:i}", "sessionId", "s", "command", "sh",
		      "args", "-c", "printf 'aaaa\\303\\251bb'; echo \"$FOO\" >&2; exit 5",
		      "env", "name", "FOO", "value", "bar", "outputByteLimit", 7);
	assert_int_equal(wap_term_acp(ts, "terminal/create", p, NULL, &res, &err), 0);
	json_decref(p);
	snprintf(idbuf, sizeof(idbuf), "%s", json_string_value(json_object_get(res, "terminalId")));
	id = idbuf;
	json_decref(res);
	p = json_pack("{s:s, s:s}", "sessionId", "s", "terminalId", id);
	assert_int_equal(wap_term_acp(ts, "terminal/wait_for_exit", p, NULL, &res, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(res, "exitCode")), 5);
	assert_true(json_is_null(json_object_get(res, "signal")));
	json_decref(res);
	assert_int_equal(wap_term_acp(ts, "terminal/output", p, NULL, &res, &err), 0);
	/* "aaaaébbbar\n" is 12 bytes; the last 7 start inside "é": cut after it */
	assert_string_equal(json_string_value(json_object_get(res, "output")), "bbbar\n");
	assert_true(json_is_true(json_object_get(res, "truncated")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(res, "exitStatus"), "exitCode")), 5);
	json_decref(res);
	assert_int_equal(wap_term_acp(ts, "terminal/release", p, NULL, &res, &err), 0);
	json_decref(res);
	assert_int_equal(wap_term_acp(ts, "terminal/output", p, NULL, &res, &err), -1);
	assert_int_equal(err.kind, WAP_E_TERM_NOT_FOUND);
	assert_string_equal(err.msg, "Terminal not found: term-1");
	wap_err_release(&err);
	json_decref(p);

	/* kill: the id stays valid, the exit status says the signal */
	p = json_pack("{s:s, s:s, s:[s]}", "sessionId", "s", "command", "sleep", "args", "30");
	assert_int_equal(wap_term_acp(ts, "terminal/create", p, NULL, &res, &err), 0);
	json_decref(p);
	p = json_pack("{s:s, s:O}", "sessionId", "s", "terminalId", json_object_get(res, "terminalId"));
	json_decref(res);
	assert_int_equal(wap_term_acp(ts, "terminal/kill", p, NULL, &res, &err), 0);
	json_decref(res);
	assert_int_equal(wap_term_acp(ts, "terminal/wait_for_exit", p, NULL, &res, &err), 0);
	assert_string_equal(json_string_value(json_object_get(res, "signal")), "SIGHUP");
	json_decref(res);
	json_decref(p);

	/* a missing command */
	p = json_pack("{s:s, s:s}", "sessionId", "s", "command", "no-such-command-xyz");
	assert_int_equal(wap_term_acp(ts, "terminal/create", p, NULL, &res, &err), -1);
	assert_string_equal(err.msg, "Command not found: no-such-command-xyz");
	wap_err_release(&err);
	json_decref(p);
	/* cwd outside the root */
	p = json_pack("{s:s, s:s, s:s}", "sessionId", "s", "command", "true", "cwd", "/etc");
	assert_int_equal(wap_term_acp(ts, "terminal/create", p, NULL, &res, &err), -1);
	assert_int_equal(err.kind, WAP_E_ACCESS);
	wap_err_release(&err);
	json_decref(p);
	wap_terms_free(ts);
}

static void test_free_kills(void **state)
{
	struct wap_err err = { 0 };
	char *argv[] = { "sh", "-c", "sleep 60 & sleep 60", NULL };
	struct wap_term_opts o = { .argv = argv };
	struct wap_terms *ts = wap_terms_new(&ws, NULL, NULL, NULL);
	char id[WAP_TERM_ID_LEN];
	json_t *l;
	pid_t pid;
	(void)state;

	assert_int_equal(wap_term_create(ts, &o, id, &err), 0);
	l = wap_term_list(ts);
	pid = (pid_t)json_integer_value(json_object_get(json_array_get(l, 0), "processId"));
	json_decref(l);
	usleep(100000);
	wap_terms_free(ts);
	/* the whole process group is gone (its orphans reaped by init) */
	for (int i = 0; i < 100 && kill(-pid, 0) == 0; i++)
		usleep(20000);
	assert_int_equal(kill(-pid, 0), -1);
}

/* read-only workspace: terminals run under the Landlock sandbox (or not
 * at all where the kernel has none) */
static void test_read_only(void **state)
{
	struct wap_err err = { 0 };
	char *argv[] = { "sh", "-c", "echo x > ro.txt", NULL };
	struct wap_term_opts o = { .argv = argv };
	struct wap_terms *ts = wap_terms_new(&ws, NULL, NULL, NULL);
	struct wap_term_status st;
	char id[WAP_TERM_ID_LEN], path[256];
	int r;
	(void)state;

	ws.pol.read_only = true;
	setenv("TMPDIR", "/proc/self/fdinfo", 1);	/* so that /tmp, holding DIR, is not writable */
	r = wap_term_create(ts, &o, id, &err);
	unsetenv("TMPDIR");
	ws.pol.read_only = false;
	if (r < 0) {
		assert_int_equal(err.kind, WAP_E_DISABLED);
		wap_err_release(&err);
	} else {
		assert_int_equal(wap_term_wait(ts, id, 5000, NULL, &st, &err), 0);
		assert_int_not_equal(st.exit_code, 0);
	}
	snprintf(path, sizeof(path), "%s/ro.txt", dir);
	assert_int_equal(access(path, F_OK), -1);
	wap_terms_free(ts);
}

static void test_utf8(void **state)
{
	size_t n;
	char *s = wap_term_utf8("a\xff\xc3\xa9\xe2\x82", 6, &n);
	(void)state;
	assert_string_equal(s, "a\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shell_pty),
		cmocka_unit_test(test_line_bound),
		cmocka_unit_test(test_acp),
		cmocka_unit_test(test_free_kills),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_utf8),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
