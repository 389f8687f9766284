/* test_cancel.c - the one cancellation token (lib/core/cancel.h): its own
 * rules, and through the one road (wap_run_op) a long grep, a long exec
 * (one that ignores SIGTERM too) and a long read stopped by it from
 * another thread: each stops promptly and all fail the same way, with
 * wap_cancel_err()'s error. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "applet.h"
#include "cancel.h"
#include "run.h"

static char dir[PATH_MAX];

static int setup(void **state)
{
	char tmpl[] = "/tmp/wap-unit-cancel.XXXXXX", cmd[PATH_MAX + 256];

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(dir, sizeof(dir), "%s", tmpl);
	/* enough to search for many seconds with a backtracking pattern */
	snprintf(cmd, sizeof(cmd), "cd %s && yes 'the quick brown fox jumps over the lazy dog 0123' "
		 "| head -c 64M > big.txt", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void test_token(void **state)
{
	struct wap_cancel c = WAP_CANCEL_INIT;
	struct wap_err err = { 0 };

	(void)state;
	assert_false(wap_cancel_is_set(NULL));
	assert_false(wap_cancel_is_set(&c));
	wap_cancel_set(&c, 1);
	assert_true(wap_cancel_is_set(&c));
	assert_int_equal(wap_cancel_why(&c), 1);
	wap_cancel_set(&c, SIGINT);	/* the signal that asked is kept */
	assert_int_equal(wap_cancel_why(&c), SIGINT);
	wap_cancel_set(&c, 0);		/* never back to "not cancelled" */
	assert_true(wap_cancel_is_set(&c));
	/* the one error */
	assert_int_equal(wap_cancel_err(&err), -1);
	assert_int_equal(err.kind, WAP_E_FAILED);
	assert_string_equal(err.msg, "Operation cancelled");
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct later {
	struct wap_cancel *c;
	double at;
};

static void *cancel_later(void *arg)
{
	struct later *l = arg;

	usleep(300 * 1000);
	l->at = now_ms();
	wap_cancel_set(l->c, 1);
	return NULL;
}

static void test_ops_stop_alike(void **state)
{
	static const struct { const char *applet, *req; } cases[] = {
		{ "grep", "{\"pattern\": \"(\\\\w+\\\\s)+\\\\d+x\", \"paths\": [\"big.txt\"]}" },
		{ "exec", "{\"command\": \"sleep 60\"}" },
		{ "exec", "{\"command\": \"trap '' TERM; sleep 60 & wait; sleep 60\", \"kill_after\": 200}" },
		{ "read", "{\"path\": \"big.txt\", \"limit\": 100000000}" },
	};
	int judged = 0;
	struct wap_ws ws;
	struct wap_err err = { 0 };
	char first[sizeof(err.msg)] = "";
	enum wap_errkind kind = WAP_OK;

	(void)state;
	assert_int_equal(wap_ws_init(&ws, dir, NULL, &err), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wap_cancel c = WAP_CANCEL_INIT;
		struct wap_call call = { .ws = &ws, .cancel = &c };
		struct wap_run run = { .call = &call };
		struct later l = { .c = &c };
		json_t *req = json_loads(cases[i].req, 0, NULL), *res = NULL;
		pthread_t t;
		double done;
		int rc;

		assert_non_null(req);
		assert_int_equal(pthread_create(&t, NULL, cancel_later, &l), 0);
		rc = wap_run_op(&run, cases[i].applet, req, &res, &err);
		done = now_ms();
		pthread_join(t, NULL);
		json_decref(req);
		if (!rc && done < l.at) {
			/* it finished before the cancel: nothing to judge */
			json_decref(res);
			continue;
		}
		if (rc != -1)
			fail_msg("%s %s: a cancelled call must fail (got %d)", cases[i].applet,
				 cases[i].req, rc);
		assert_null(res);
		/* generous: ASan on a loaded two-core machine, at the start of a
		 * run when every suite starts at once (a bound of 3 s failed
		 * there once); a call that did not stop would take its 60 s */
		if (done - l.at > 10000)
			fail_msg("%s: stopped %.0f ms after the cancel", cases[i].applet, done - l.at);
		judged++;
		if (!first[0]) {
			snprintf(first, sizeof(first), "%s", err.msg);
			kind = err.kind;
		} else if (strcmp(first, err.msg) || kind != err.kind) {
			fail_msg("%s stops unlike the first: %s (%s) vs %s (%s)", cases[i].applet,
				 err.msg, wap_err_code(err.kind), first, wap_err_code(kind));
		}
		wap_err_release(&err);
	}
	assert_string_equal(first, "Operation cancelled");
	assert_true(judged >= 3);	/* grep and both execs cannot finish first */
	wap_ws_release(&ws);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_ops_stop_alike),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
