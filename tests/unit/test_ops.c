/* test_ops.c - the file applets' ops called in-process, as `wap serve`
 * calls them: a table of requests with the expected outcome, every result
 * rendered as text too.  Under ASan/LeakSanitizer this is the check that
 * no op leaks or misbehaves on a long-lived server, on success and on
 * every error path. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "applet.h"
#include "policy.h"
#include "tree.h"

static char dir[PATH_MAX];

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
	char tmpl[] = "/tmp/wap-unit-ops.XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(dir, sizeof(dir), "%s", tmpl);
	sh("mkdir -p %s/ws/d/e %s/out && cd %s/ws && seq 1 3000 > n.txt && printf 'a\\0b' > bin "
	   "&& echo x > d/e/f && ln -s ../out o && printf 'caf\\351\\n' > l1 && "
	   "tar czf t.tgz d && mkfifo fifo && echo K > .env", dir, dir, dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", dir);
	return 0;
}

static const struct { const char *applet, *req; enum wap_errkind want; } cases[] = {
	{ "read", "{\"path\": \"n.txt\"}", WAP_OK },
	{ "read", "{\"path\": \"n.txt\", \"offset\": 10, \"limit\": 5}", WAP_OK },
	{ "read", "{\"path\": \"n.txt\", \"tail\": 3}", WAP_OK },
	{ "read", "{\"path\": \"n.txt\", \"head\": 3}", WAP_OK },
	{ "read", "{\"path\": \"bin\"}", WAP_OK },
	{ "read", "{\"path\": \"l1\"}", WAP_OK },
	{ "read", "{\"path\": \"d\"}", WAP_OK },
	{ "read", "{\"path\": \"t.tgz\"}", WAP_OK },
	{ "read", "{\"path\": \"t.tgz\", \"member\": \"d/e/f\"}", WAP_OK },
	{ "read", "{\"path\": \"t.tgz\", \"member\": \"d/e/f\", \"tail\": 1}", WAP_OK },
	{ "read", "{\"path\": \"t.tgz\", \"member\": \"nope\"}", WAP_E_NOT_FOUND },
	{ "read", "{\"path\": \"t.tgz\", \"member\": \"d/e\"}", WAP_E_NOT_FILE },
	{ "read", "{\"path\": \"n.txt\", \"member\": \"x\"}", WAP_E_INVALID },
	{ "read", "{\"path\": \"d\", \"member\": \"x\"}", WAP_E_INVALID },
	{ "read", "{\"path\": \"nope\"}", WAP_E_NOT_FOUND },
	{ "read", "{\"path\": \"o/x\"}", WAP_E_ACCESS },
	{ "read", "{\"path\": \"fifo\"}", WAP_E_NOT_FILE },
	{ "read", "{\"path\": \"n.txt\", \"offset\": 0}", WAP_E_INVALID },
	{ "read", "{\"path\": \"n.txt\", \"offset\": \"1\"}", WAP_E_INVALID },
	{ "read", "{\"path\": \"n.txt\", \"offset\": 1e30}", WAP_E_INVALID },
	{ "read", "{\"path\": \"n.txt\", \"tail\": 2, \"head\": 1}", WAP_E_INVALID },
	{ "read", "{\"path\": 5}", WAP_E_INVALID },
	{ "read", "{}", WAP_E_INVALID },
	{ "read", "{\"path\": \".env\"}", WAP_E_RESTRICTED },
	{ "write", "{\"path\": \"w/new.txt\", \"content\": \"hi\"}", WAP_OK },
	{ "write", "{\"path\": \"w/new.txt\", \"content\": \"+\", \"mode\": \"append\"}", WAP_OK },
	{ "write", "{\"path\": \"w/new.txt\", \"content\": \"x\", \"mode\": \"create\"}", WAP_E_EXISTS },
	{ "write", "{\"path\": \"w/new.txt\", \"content\": \"x\", \"mode\": \"bad\"}", WAP_E_INVALID },
	{ "write", "{\"path\": \"w/new.txt\", \"content\": \"x\", \"expected_version\": \"0000000000000000000000000000000000000000\"}", WAP_E_CONFLICT },
	{ "write", "{\"path\": \"w/new.txt\", \"content\": \"x\", \"expected_version\": \"zz\"}", WAP_E_INVALID },
	{ "write", "{\"path\": \"w/new.txt\"}", WAP_E_INVALID },
	{ "write", "{\"path\": \"d\", \"content\": \"x\"}", WAP_E_NOT_FILE },
	{ "write", "{\"path\": \"o/x\", \"content\": \"x\"}", WAP_E_ACCESS },
	{ "write", "{\"path\": \"n.txt/x\", \"content\": \"x\"}", WAP_E_NOT_DIR },
	{ "ls", "{}", WAP_OK },
	{ "ls", "{\"path\": \"d\", \"recursive\": true, \"metadata\": true, \"exclude\": [\"*.o\"]}", WAP_OK },
	{ "ls", "{\"recursive\": true, \"max_depth\": 1, \"no_default_excludes\": true}", WAP_OK },
	{ "ls", "{\"path\": \"nope\"}", WAP_E_NOT_FOUND },
	{ "ls", "{\"path\": \"n.txt\"}", WAP_E_NOT_DIR },
	{ "ls", "{\"exclude\": [\"{\"]}", WAP_E_INVALID },
	{ "ls", "{\"exclude\": \"x\"}", WAP_OK },	/* one glob as a string, as grep takes it */
	{ "ls", "{\"exclude\": 5}", WAP_E_INVALID },
	{ "ls", "{\"exclude\": [\"*.c\", 3]}", WAP_E_INVALID },
	{ "ls", "{\"max_depth\": 0}", WAP_E_INVALID },
	{ "ls", "{\"path\": \"o\"}", WAP_E_ACCESS },
	{ "stat", "{\"path\": \"n.txt\"}", WAP_OK },
	{ "stat", "{\"path\": \"d\"}", WAP_OK },
	{ "stat", "{\"path\": \"o\"}", WAP_OK },
	{ "stat", "{\"path\": \"nope\", \"exists\": true}", WAP_OK },
	{ "stat", "{\"path\": \"d\", \"exists\": true}", WAP_OK },
	{ "stat", "{\"path\": \"o/x\", \"exists\": true}", WAP_E_ACCESS },
	{ "stat", "{\"path\": \"nope\"}", WAP_E_NOT_FOUND },
	{ "mkdir", "{\"path\": \"m/n\"}", WAP_OK },
	{ "mkdir", "{\"path\": \"m/n\"}", WAP_OK },
	{ "mkdir", "{\"path\": \"n.txt\"}", WAP_E_NOT_DIR },
	{ "mkdir", "{\"path\": \"o/q\"}", WAP_E_ACCESS },
	{ "cp", "{\"source\": \"d\", \"destination\": \"d2\", \"recursive\": true}", WAP_OK },
	{ "cp", "{\"source\": \"d\", \"destination\": \"d2\"}", WAP_E_NOT_FILE },
	{ "cp", "{\"source\": \"n.txt\", \"destination\": \"n2.txt\"}", WAP_OK },
	{ "cp", "{\"source\": \"n.txt\", \"destination\": \"n2.txt\"}", WAP_E_EXISTS },
	{ "cp", "{\"source\": \"n.txt\", \"destination\": \"n2.txt\", \"force\": true}", WAP_OK },
	{ "cp", "{\"source\": \"d\", \"destination\": \"d/e/x\", \"recursive\": true}", WAP_E_INVALID },
	{ "cp", "{\"source\": \"nope\", \"destination\": \"x\"}", WAP_E_NOT_FOUND },
	{ "cp", "{\"source\": \"n.txt\"}", WAP_E_INVALID },
	{ "mv", "{\"source\": \"n2.txt\", \"destination\": \"m\"}", WAP_OK },
	{ "mv", "{\"source\": \"n.txt\", \"destination\": \"m/n2.txt\"}", WAP_E_EXISTS },
	{ "mv", "{\"source\": \"d2\", \"destination\": \"d2/e/z\"}", WAP_E_INVALID },
	{ "mv", "{\"source\": \".\", \"destination\": \"x\"}", WAP_E_ACCESS },
	{ "mv", "{\"source\": \"nope\", \"destination\": \"x\"}", WAP_E_NOT_FOUND },
	{ "rm", "{\"path\": \"d2\"}", WAP_E_NOT_FILE },
	{ "rm", "{\"path\": \"d2\", \"recursive\": true}", WAP_OK },
	{ "rm", "{\"path\": \"m/n2.txt\"}", WAP_OK },
	{ "rm", "{\"path\": \"m/n2.txt\"}", WAP_E_NOT_FOUND },
	{ "rm", "{\"path\": \"m/n2.txt\", \"force\": true}", WAP_OK },
	{ "rm", "{\"path\": \".\", \"recursive\": true}", WAP_E_ACCESS },
	{ "rm", "{\"path\": \"o/x\"}", WAP_E_ACCESS },
};

static void test_ops(void **state)
{
	struct wap_ws ws;
	struct wap_err err = { 0 };
	struct wap_call call = { 0 };
	char root[PATH_MAX + 8];

	(void)state;
	snprintf(root, sizeof(root), "%s/ws", dir);
	assert_int_equal(wap_ws_init(&ws, root, NULL, &err), 0);
	assert_int_equal(wap_globset_add(&ws.pol.restricted, ".env", WAP_GLOB_BASENAME, &err), 0);
	call.ws = &ws;
	for (int pass = 0; pass < 2; pass++) {
		wap_ws_no_openat2 = pass;
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			const struct wap_applet *a = wap_applet_find(cases[i].applet);
			json_t *req = json_loads(cases[i].req, 0, NULL), *res = NULL;
			int rc;

			assert_non_null(a);
			assert_non_null(req);
			wap_err_release(&err);
			rc = a->op(&call, req, &res, &err);
			/* the second pass repeats: creating ops then meet what
			 * the first made, so only the first pass is judged */
			if (pass == 0 && (rc ? err.kind : WAP_OK) != cases[i].want)
				fail_msg("%s %s: got %s (%s), wanted %s", cases[i].applet, cases[i].req,
					 rc ? wap_err_code(err.kind) : "OK", rc ? err.msg : "",
					 wap_err_code(cases[i].want));
			if (rc) {
				assert_null(res);
				assert_true(err.msg[0] != 0);
			} else {
				char *text = wap_render_text(a, res, req);
				char *dump = json_dumps(res, 0);
				assert_non_null(text);
				assert_non_null(dump);	/* valid UTF-8 throughout */
				free(text);
				free(dump);
				json_decref(res);
			}
			json_decref(req);
		}
	}
	wap_ws_no_openat2 = false;
	wap_err_release(&err);
	wap_ws_release(&ws);
}

/* Every op that writes by path holds the tree lock (lib/serve/run.c):
 * shared where the one table of ops says the request writes, alone for
 * mv, cp and rm; not exec (restrictedPaths do not hold inside a
 * command), nor a read. */
static void test_lock_flags(void **state)
{
	static const struct { const char *op, *req; bool writes; } w[] = {
		{ "write", "{}", true }, { "edit", "{}", true }, { "mkdir", "{}", true },
		{ "grep", "{\"write\": true}", true }, { "grep", "{}", false },
		{ "git", "{\"action\": \"commit\"}", true }, { "git", "{\"action\": \"checkout\"}", true },
		{ "git", "{\"action\": \"status\"}", false }, { "sym", "{\"action\": \"rename\"}", true },
		{ "sym", "{\"action\": \"hover\"}", false }, { "exec", "{}", false },
		{ "read", "{}", false }, { "glob", "{}", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		json_t *req = json_loads(w[i].req, 0, NULL);
		if (!(wap_op_flags(w[i].op, req) & WAP_OP_WRITES) != !w[i].writes)
			fail_msg("%s %s: writes %d", w[i].op, w[i].req, !w[i].writes);
		json_decref(req);
	}
	for (const struct wap_applet *const *a = wap_applets; *a; a++)
		if ((*a)->flags & WAP_APPLET_TREE)
			assert_true(!strcmp((*a)->name, "mv") || !strcmp((*a)->name, "cp") ||
				    !strcmp((*a)->name, "rm"));
	assert_true(wap_applet_find("mv")->flags & WAP_APPLET_TREE);
	assert_true(wap_applet_find("cp")->flags & WAP_APPLET_TREE);
	assert_true(wap_applet_find("rm")->flags & WAP_APPLET_TREE);
}

static struct wap_cancel other_cancel;
static int other_rc;

static void *other(void *arg)
{
	struct wap_err err = { 0 };

	other_rc = wap_tree_lock(arg != NULL, &other_cancel, &err);
	if (!other_rc)
		wap_tree_unlock();
	else
		assert_int_equal(err.kind, WAP_E_FAILED);	/* "Operation cancelled" */
	wap_err_release(&err);
	return NULL;
}

/* Shared with shared, never with alone; taken again by its holder it
 * counts; a wait ends with a cancel. */
static void test_tree_lock(void **state)
{
	struct wap_err err = { 0 };
	pthread_t t;

	(void)state;
	assert_int_equal(wap_tree_lock(false, NULL, &err), 0);
	assert_int_equal(wap_tree_lock(false, NULL, &err), 0);
	assert_int_equal(wap_tree_lock(true, NULL, &err), -1);	/* alone while shared */
	assert_int_equal(err.kind, WAP_E_INVALID);
	wap_err_release(&err);
	/* another shared holder comes in */
	assert_int_equal(pthread_create(&t, NULL, other, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(other_rc, 0);
	/* one alone waits until cancelled */
	other_cancel.why = 0;
	assert_int_equal(pthread_create(&t, NULL, other, (void *)1), 0);
	usleep(100000);
	wap_cancel_set(&other_cancel, 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(other_rc, -1);
	wap_tree_unlock();
	wap_tree_unlock();
	/* free again: alone now comes in, and counts when taken again */
	other_cancel.why = 0;
	assert_int_equal(pthread_create(&t, NULL, other, (void *)1), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(other_rc, 0);
	assert_int_equal(wap_tree_lock(true, NULL, &err), 0);
	assert_int_equal(wap_tree_lock(false, NULL, &err), 0);
	wap_tree_unlock();
	wap_tree_unlock();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops),
		cmocka_unit_test(test_lock_flags),
		cmocka_unit_test(test_tree_lock),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
