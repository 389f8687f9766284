/* test_grep.c - grep's op and its text renderer (what `wap serve` shows)
 * give the text the CLI prints (tests/grep.sh checks the CLI). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "applet.h"

static char root[] = "/tmp/wap-grep-unit.XXXXXX";
static struct wap_ws ws;

static void put(const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *run(const char *applet, const char *reqtext, int *status)
{
	const struct wap_applet *a = wap_applet_find(applet);
	struct wap_call call = { .ws = &ws };
	struct wap_err err = { 0 };
	json_error_t je;
	json_t *req = json_loads(reqtext, 0, &je), *res = NULL;
	char *text;

	assert_non_null(a);
	assert_non_null(req);
	assert_int_equal(wap_args_check(a, req, &err), 0);
	if (a->op(&call, req, &res, &err)) {
		json_decref(req);
		text = strdup(err.msg);
		wap_err_release(&err);
		*status = -1;
		return text;
	}
	text = wap_render_text(a, res, req);
	*status = a->render(res, req, NULL);
	json_decref(res);
	json_decref(req);
	return text;
}

static void expect_text(const char *applet, const char *req, const char *want, int want_status)
{
	int st;
	char *got = run(applet, req, &st);

	if (strcmp(got, want) || st != want_status)
		fail_msg("%s %s:\ngot (%d)\n[%s]\nwanted (%d)\n[%s]", applet, req, st, got,
			 want_status, want);
	free(got);
}

static int setup(void **state)
{
	struct wap_err err = { 0 };
	char sub[600];

	(void)state;
	if (!mkdtemp(root))
		return -1;
	snprintf(sub, sizeof(sub), "%s/src", root);
	if (mkdir(sub, 0755))
		return -1;
	put("src/a.c", "alpha\nbeta PM_RESUME one\ngamma\ndelta\nPM_RESUME two\nzeta\n");
	put("src/c.py", "x = PM_SUSPEND\n");
	unsetenv("WAP_CONFIG");
	return wap_ws_init(&ws, root, NULL, &err);
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	wap_ws_release(&ws);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) ? -1 : 0;
}

static void test_lines(void **state)
{
	(void)state;
	expect_text("grep", "{\"pattern\":\"PM_RESUME\"}",
		    "src/a.c:2:beta PM_RESUME one\nsrc/a.c:5:PM_RESUME two\n", 0);
	expect_text("grep", "{\"pattern\":\"NOPE\"}", "", 1);
	expect_text("grep", "{\"pattern\":\"PM_RESUME\",\"context\":1}",
		    "src/a.c-1-alpha\nsrc/a.c:2:beta PM_RESUME one\nsrc/a.c-3-gamma\n"
		    "src/a.c-4-delta\nsrc/a.c:5:PM_RESUME two\nsrc/a.c-6-zeta\n", 0);
	expect_text("grep", "{\"regexp\":[\"alpha\",\"zeta\"],\"after_context\":1}",
		    "src/a.c:1:alpha\nsrc/a.c-2-beta PM_RESUME one\n--\nsrc/a.c:6:zeta\n", 0);
	expect_text("grep", "{\"pattern\":\"PM_\\\\w+\",\"only_matching\":true}",
		    "src/a.c:2:PM_RESUME\nsrc/a.c:5:PM_RESUME\nsrc/c.py:1:PM_SUSPEND\n", 0);
	expect_text("grep", "{\"pattern\":\"gamma\\\\ndelta\",\"multiline\":true}",
		    "src/a.c:3:gamma\nsrc/a.c:4:delta\n", 0);
	expect_text("grep", "{\"pattern\":\"PM_(\\\\w+)\",\"replace\":\"pm_$1\",\"paths\":[\"src/a.c\"]}",
		    "src/a.c:2:beta pm_RESUME one\nsrc/a.c:5:pm_RESUME two\n", 0);
}

static void test_modes(void **state)
{
	(void)state;
	expect_text("grep", "{\"pattern\":\"PM_\",\"files_with_matches\":true}",
		    "src/a.c\nsrc/c.py\n", 0);
	expect_text("grep", "{\"pattern\":\"PM_\",\"count\":true}", "src/a.c:2\nsrc/c.py:1\n", 0);
	expect_text("grep", "{\"pattern\":\"a\",\"max_results\":2,\"paths\":[\"src/a.c\"]}",
		    "src/a.c:1:alpha\nsrc/a.c:2:beta PM_RESUME one\n"
		    "[... 2 of 5 matches shown; use --max-results 0 for all]\n", 0);
	expect_text("grep", "{\"pattern\":\"(\"}",
		    "Invalid regex '(': missing closing parenthesis at offset 1", -1);
	expect_text("glob", "{\"pattern\":\"**/*.c\"}", "src/a.c\n", 0);
	expect_text("glob", "{\"pattern\":\"**/*.c\",\"tagged\":true}",
		    "Found 1 match(es) for '**/*.c':\n\n[FILE] src/a.c\n", 0);
}

static void test_jsonl(void **state)
{
	int st;
	char *got;

	(void)state;
	got = run("grep", "{\"pattern\":\"gamma\",\"jsonl\":true,\"context\":1}", &st);
	assert_int_equal(st, 0);
	assert_non_null(strstr(got, "{\"type\":\"begin\",\"data\":{\"path\":{\"text\":\"src/a.c\"}}}\n"
				   "{\"type\":\"context\",\"data\":{\"path\":{\"text\":\"src/a.c\"},"
				   "\"lines\":{\"text\":\"beta PM_RESUME one\\n\"},\"line_number\":2,"
				   "\"absolute_offset\":6,\"submatches\":[]}}\n"
				   "{\"type\":\"match\",\"data\":{\"path\":{\"text\":\"src/a.c\"},"
				   "\"lines\":{\"text\":\"gamma\\n\"},\"line_number\":3,"
				   "\"absolute_offset\":25,\"submatches\":[{\"match\":{\"text\":\"gamma\"},"
				   "\"start\":0,\"end\":5}]}}\n"));
	assert_non_null(strstr(got, "\"type\":\"summary\"}"));
	free(got);
}

static int nprogress;
static double lastdone;

static void on_progress(void *arg, double done, double total, const char *msg)
{
	(void)arg;
	(void)total;
	assert_non_null(strstr(msg, "files searched"));
	assert_true(done >= lastdone);
	lastdone = done;
	nprogress++;
}

/* a long search reports progress (MCP notifications/progress) */
static void test_progress(void **state)
{
	const struct wap_applet *a = wap_applet_find("grep");
	struct wap_call call = { .ws = &ws, .progress = on_progress };
	struct wap_err err = { 0 };
	json_t *req = json_pack("{s:s, s:i}", "pattern", "nothing here", "threads", 1), *res = NULL;
	char dir[600];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/many", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	for (int i = 0; i < 600; i++) {
		char name[64];
		snprintf(name, sizeof(name), "many/f%d.txt", i);
		put(name, "text\n");
	}
	assert_int_equal(a->op(&call, req, &res, &err), 0);
	assert_true(nprogress >= 1);
	assert_true(lastdone >= 256);
	json_decref(res);

	/* MCP notifications/cancelled: the search stops with the one error */
	{
		struct wap_cancel cancel = WAP_CANCEL_INIT;
		wap_cancel_set(&cancel, 1);
		call.cancel = &cancel;
		res = NULL;
		assert_int_equal(a->op(&call, req, &res, &err), -1);
		assert_null(res);
		assert_int_equal(err.kind, WAP_E_FAILED);
		assert_string_equal(err.msg, "Operation cancelled");
		wap_err_release(&err);
	}
	json_decref(req);
}

/* the output schemas parse and describe what the ops return */
static void test_schemas(void **state)
{
	const char *const names[] = { "grep", "glob" };
	(void)state;
	for (int i = 0; i < 2; i++) {
		const struct wap_applet *a = wap_applet_find(names[i]);
		json_error_t je;
		json_t *s = json_loads(a->output_schema, 0, &je);
		if (!s)
			fail_msg("%s output schema: %s", names[i], je.text);
		assert_string_equal(json_string_value(json_object_get(s, "type")), "object");
		json_decref(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_jsonl),
		cmocka_unit_test(test_schemas),
		cmocka_unit_test(test_progress),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
