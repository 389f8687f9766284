/* test_oom.c - the allocation-failure policy: lib/ returns an error when
 * memory runs out, it never crashes (a server outlives one failed call).
 * Every allocation of lib/ (malloc and friends, wrapped at link time: see
 * the Makefile) and of jansson (json_set_alloc_funcs) is counted; each op
 * below is run again and again with the Nth allocation failing, N = 1, 2,
 * ... until the op no longer reaches N.  Each run must give a result or
 * an error with a message; under ASan/LSan it must not leak either. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "applet.h"
#include "err.h"

static char dir[PATH_MAX];
static long fail_at = -1;	/* the allocation that fails; -1 none */
static long count;		/* allocations so far */
static long failed;		/* failures injected */

static int should_fail(void)
{
	long n = __atomic_add_fetch(&count, 1, __ATOMIC_SEQ_CST);

	if (n != __atomic_load_n(&fail_at, __ATOMIC_SEQ_CST))
		return 0;
	__atomic_add_fetch(&failed, 1, __ATOMIC_SEQ_CST);
	return 1;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);

void *__wrap_malloc(size_t n)
{
	return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	return should_fail() ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	return should_fail() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return should_fail() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return should_fail() ? NULL : __real_strndup(s, n);
}

static void *json_malloc(size_t n)
{
	return should_fail() ? NULL : __real_malloc(n);
}

static void json_free(void *p)
{
	free(p);
}

static void sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	char tmpl[] = "/tmp/wap-unit-oom.XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(dir, sizeof(dir), "%s", tmpl);
	sh("mkdir -p %s/ws/d/e && cd %s/ws && seq 1 300 > n.txt && echo 'hello world' > d/e/f "
	   "&& printf 'a\\nb\\nc\\n' > d/g.txt", dir, dir);
	json_set_alloc_funcs(json_malloc, json_free);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", dir);
	return 0;
}

/* PREP: d/g.txt holds this before each run (an edit is then the same
 * edit every time) */
static const struct { const char *applet, *req, *prep; } cases[] = {
	{ "read", "{\"path\": \"n.txt\", \"offset\": 10, \"limit\": 5}", NULL },
	{ "stat", "{\"path\": \"d/e/f\"}", NULL },
	{ "ls", "{\"path\": \"d\", \"recursive\": true}", NULL },
	{ "glob", "{\"pattern\": \"**/*\"}", NULL },
	{ "grep", "{\"pattern\": \"hel+o\", \"path\": \".\"}", NULL },
	{ "edit", "{\"path\": \"d/g.txt\", \"old\": \"b\", \"new\": \"B\"}", "a\nb\nc\n" },
	{ "write", "{\"path\": \"d/w.txt\", \"content\": \"new\\n\"}", NULL },
};

/* Run op I once with allocation N failing: 1 when it got that far. */
static int run_once(struct wap_call *call, size_t i, long n)
{
	const struct wap_applet *a = wap_applet_find(cases[i].applet);
	json_t *req, *res = NULL;
	struct wap_err err = { 0 };
	int rc, reached;

	assert_non_null(a);
	if (cases[i].prep) {
		char path[PATH_MAX + 16];
		FILE *f;

		snprintf(path, sizeof(path), "%s/ws/d/g.txt", dir);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(cases[i].prep, f);
		assert_int_equal(fclose(f), 0);
	}
	req = json_loads(cases[i].req, 0, NULL);
	assert_non_null(req);
	__atomic_store_n(&failed, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&count, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&fail_at, n, __ATOMIC_SEQ_CST);
	rc = a->op(call, req, &res, &err);
	__atomic_store_n(&fail_at, -1, __ATOMIC_SEQ_CST);
	reached = __atomic_load_n(&failed, __ATOMIC_SEQ_CST) > 0;
	if (rc && n < 0)
		fail_msg("%s %s: %s", cases[i].applet, cases[i].req, err.msg);
	if (rc) {
		assert_null(res);
		if (!err.msg[0])
			fail_msg("%s %s: allocation %ld failed: -1 without a message",
				 cases[i].applet, cases[i].req, n);
	} else if (!res) {
		fail_msg("%s %s: allocation %ld failed: 0 without a result", cases[i].applet,
			 cases[i].req, n);
	}
	json_decref(res);
	json_decref(req);
	wap_err_release(&err);
	return reached;
}

static void test_oom(void **state)
{
	struct wap_ws ws;
	struct wap_err err = { 0 };
	struct wap_call call = { 0 };
	char root[PATH_MAX + 8];
	long oom_seen = 0;

	(void)state;
	snprintf(root, sizeof(root), "%s/ws", dir);
	assert_int_equal(wap_ws_init(&ws, root, NULL, &err), 0);
	call.ws = &ws;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long n;

		/* a clean run first: the op works at all */
		assert_int_equal(run_once(&call, i, -1), 0);
		for (n = 1; n < 100000 && run_once(&call, i, n); n++)
			;
		if (n == 1)	/* it allocates: the sweep tested something */
			fail_msg("%s %s: no allocation failed", cases[i].applet, cases[i].req);
		oom_seen += n - 1;
	}
	/* and the one message of the policy */
	assert_int_equal(wap_err_oom(&err), -1);
	assert_int_equal(err.kind, WAP_E_FAILED);
	assert_string_equal(err.msg, "out of memory");
	assert_true(oom_seen > 0);
	wap_ws_release(&ws);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
