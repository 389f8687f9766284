/* test_policy.c - the one table of ops (lib/serve/policy.c) and the write
 * protection of wap_ws_check: .git, .wap, the config, anchored roots. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "applet.h"
#include "config.h"
#include "policy.h"
#include "ws.h"

static unsigned flags(const char *op, const char *req)
{
	json_t *j = req ? json_loads(req, 0, NULL) : NULL;
	unsigned f = wap_op_flags(op, j);

	json_decref(j);
	return f;
}

static void test_table(void **state)
{
	(void)state;
	assert_true(flags("write", NULL) & WAP_OP_WRITES);
	assert_int_equal(flags("read", NULL), WAP_OP_TIMED);	/* the call's time limit */
	assert_int_equal(flags("grep", "{}"), WAP_OP_TIMED);
	assert_true(flags("grep", "{\"write\": true}") & WAP_OP_WRITES);
	assert_true(flags("edit", "{}") & WAP_OP_WRITES);
	assert_int_equal(flags("edit", "{\"dry_run\": true}"), WAP_OP_TIMED);
	assert_true(flags("edit", "{}") & WAP_OP_TIMED);
	/* ops with clocks of their own run without the call's */
	assert_false(flags("exec", NULL) & WAP_OP_TIMED);
	assert_false(flags("git", "{\"action\": \"status\"}") & WAP_OP_TIMED);
	assert_false(flags("sym", "{\"action\": \"find\"}") & WAP_OP_TIMED);
	assert_int_equal(flags("git", "{\"action\": \"status\"}"), 0);
	assert_true(flags("git", "{\"action\": \"commit\"}") & WAP_OP_WRITES);
	assert_int_equal(flags("git", "{\"action\": \"branch\"}"), 0);
	assert_true(flags("git", "{\"action\": \"branch\", \"delete\": true}") & WAP_OP_WRITES);
	assert_true(flags("exec", NULL) & WAP_OP_RUNS);
	assert_true(flags("git", "{\"action\": \"unstage\"}") & WAP_OP_WRITES);
	assert_true(flags("terminal.sendText", NULL) & WAP_OP_RUNS);
	assert_true(flags("terminal/create", NULL) & WAP_OP_RUNS);
	assert_int_equal(flags("terminal.getOutput", NULL), 0);
	/* a door's method that maps onto an op is judged as the op, never
	 * by a name of its own: the table has none (lib/serve/run.h) */
	assert_null(wap_op_find("fs.writeFile"));
	assert_null(wap_op_find("editor.replaceRange"));
	assert_null(wap_op_find("fs/write_text_file"));
	/* fail closed: what the table does not know mutates */
	assert_int_equal(flags("no.such.op", NULL), WAP_OP_MUTATING);
	assert_int_equal(flags("git", "{}"), WAP_OP_MUTATING);
	assert_int_equal(flags("git", "{\"action\": \"frobnicate\"}"), WAP_OP_MUTATING);
	/* every applet offered as a tool is in the table */
	for (int i = 0; wap_applets[i]; i++)
		if (!(wap_applets[i]->flags & WAP_APPLET_NOTOOL))
			assert_non_null(wap_op_find(wap_applets[i]->name));
}

static void test_allow(void **state)
{
	struct wap_ws ws;
	struct wap_err err = { 0 };
	struct wap_approver no = { "exit 1", 0 }, yes = { "exit 0", 0 };
	json_t *req = json_pack("{s:s}", "path", "a.txt");

	(void)state;
	assert_int_equal(wap_ws_init(&ws, "/tmp", NULL, &err), 0);
	ws.pol.read_only = true;
	assert_int_equal(wap_policy_allow(&ws, "write", req, NULL, NULL, NULL, &err), -1);
	assert_int_equal(err.kind, WAP_E_RESTRICTED);
	assert_non_null(strstr(err.msg, "a.txt"));
	wap_err_release(&err);
	assert_int_equal(wap_policy_allow(&ws, "read", req, NULL, NULL, NULL, &err), 0);
	/* commands run, sandboxed read-only, not refused */
	assert_int_equal(wap_policy_allow(&ws, "exec", req, NULL, NULL, NULL, &err), 0);
	ws.pol.read_only = false;
	ws.pol.require_approval = true;
	assert_int_equal(wap_policy_allow(&ws, "edit", req, NULL, NULL, NULL, &err),
			 WAP_POLICY_UNAPPROVED);
	wap_err_release(&err);
	assert_int_equal(wap_policy_allow(&ws, "edit", req, NULL, &no, NULL, &err),
			 WAP_POLICY_UNAPPROVED);
	assert_non_null(strstr(err.msg, "refused"));
	wap_err_release(&err);
	assert_int_equal(wap_policy_allow(&ws, "edit", req, NULL, &yes, NULL, &err), 0);
	assert_int_equal(wap_policy_allow(&ws, "read", req, NULL, &no, NULL, &err), 0);
	json_decref(req);
	wap_ws_release(&ws);
}

/* one check of a category for every door: the list, file system access
 * (fs, editor, search) and terminal access */
static void test_feature(void **state)
{
	struct wap_ws ws;
	struct wap_err err = { 0 };
	char *only_fs[] = { "fs", NULL };
	json_t *req = json_pack("{s:s}", "path", "a.txt");

	(void)state;
	assert_int_equal(wap_ws_init(&ws, "/tmp", NULL, &err), 0);
	assert_int_equal(wap_policy_feature(&ws, "terminal", "terminal.create", &err), 0);
	ws.pol.allow_terminal = false;
	assert_int_equal(wap_policy_feature(&ws, "terminal", "terminal.create", &err), -1);
	assert_int_equal(err.kind, WAP_E_DISABLED);
	assert_non_null(strstr(err.msg, "allowTerminalAccess"));
	wap_err_release(&err);
	assert_int_equal(wap_policy_feature(&ws, "fs", "read", &err), 0);
	ws.pol.allow_fs = false;
	for (const char *const *c = (const char *const[]){ "fs", "editor", "search", NULL }; *c; c++) {
		assert_int_equal(wap_policy_feature(&ws, *c, "x", &err), -1);
		assert_non_null(strstr(err.msg, "allowFileSystemAccess"));
		wap_err_release(&err);
	}
	assert_int_equal(wap_policy_feature(&ws, "git", "git.status", &err), 0);
	/* the op's road: read is fs */
	assert_int_equal(wap_policy_allow(&ws, "read", req, NULL, NULL, NULL, &err), -1);
	assert_int_equal(err.kind, WAP_E_DISABLED);
	wap_err_release(&err);
	ws.pol.allow_fs = true;
	ws.pol.allowed_categories = only_fs;
	assert_int_equal(wap_policy_feature(&ws, "git", "git.status", &err), -1);
	assert_non_null(strstr(err.msg, "allowedMethodCategories"));
	wap_err_release(&err);
	assert_int_equal(wap_policy_feature(&ws, "session", "session/x", &err), 0);
	assert_int_equal(wap_policy_allow(&ws, "exec", req, NULL, NULL, NULL, &err), -1);
	wap_err_release(&err);
	ws.pol.allowed_categories = NULL;
	json_decref(req);
	wap_ws_release(&ws);
}

static void want_check(struct wap_ws *ws, const char *rel, int acc, int want)
{
	struct wap_err err = { 0 };
	int r = wap_ws_check(ws, rel, acc, &err);

	if ((r == 0) != (want == 0))
		fail_msg("%s: got %d (%s), wanted %d", rel, r, err.msg, want);
	if (r)
		assert_int_equal(err.kind, WAP_E_RESTRICTED);
	wap_err_release(&err);
}

static void test_protected(void **state)
{
	struct wap_ws ws;
	struct wap_err err = { 0 };

	(void)state;
	assert_int_equal(wap_ws_init(&ws, "/tmp", NULL, &err), 0);
	want_check(&ws, ".git/config", WAP_ACC_WRITE, -1);
	want_check(&ws, ".git", WAP_ACC_WRITE, -1);
	want_check(&ws, "a/b/.git/hooks/x", WAP_ACC_WRITE, -1);
	want_check(&ws, "a/.GIT/config", WAP_ACC_WRITE, -1);
	want_check(&ws, ".wap/config.json", WAP_ACC_WRITE, -1);
	want_check(&ws, ".git/config", WAP_ACC_READ, 0);
	want_check(&ws, ".gitignore", WAP_ACC_WRITE, 0);
	want_check(&ws, ".github/x", WAP_ACC_WRITE, 0);
	want_check(&ws, "x.git", WAP_ACC_WRITE, 0);
	want_check(&ws, ".wap-1234.tmp", WAP_ACC_WRITE, 0);
	/* the config beneath the root, and the directories holding it */
	wap_strv_push(&ws.policy_rels, "etc/wap/config.json");
	want_check(&ws, "etc/wap/config.json", WAP_ACC_WRITE, -1);
	want_check(&ws, "etc/wap", WAP_ACC_WRITE, -1);
	want_check(&ws, "etc", WAP_ACC_WRITE, -1);
	want_check(&ws, "etc/wap/other.json", WAP_ACC_WRITE, 0);
	want_check(&ws, "etc/wa", WAP_ACC_WRITE, 0);
	want_check(&ws, ".", WAP_ACC_WRITE, 0);
	/* a narrowed root: judged from the configured root */
	assert_int_equal(wap_globset_add(&ws.pol.restricted, "secret/**", WAP_GLOB_BASENAME, &err), 0);
	ws.anchor = strdup("secret");
	want_check(&ws, "x", WAP_ACC_READ, -1);
	want_check(&ws, ".", WAP_ACC_READ, -1);
	free(ws.anchor);
	ws.anchor = strdup("sub");
	want_check(&ws, "secret/x", WAP_ACC_READ, 0);
	free(ws.anchor);
	ws.anchor = strdup("r/.git");
	want_check(&ws, "hooks/pre-commit", WAP_ACC_WRITE, -1);
	want_check(&ws, "HEAD", WAP_ACC_READ, 0);
	wap_ws_release(&ws);
}

static void test_glob_deny(void **state)
{
	struct wap_globset gs = { 0 };
	struct wap_err err = { 0 };
	char *p = malloc(8 * 201 + 32);
	size_t n;

	(void)state;
	assert_int_equal(wap_globset_add(&gs, "**/a*a*a*a*a*a*b/**/*.key", WAP_GLOB_BASENAME, &err), 0);
	strcpy(p, "aaaaaab");
	for (int i = 0; i < 8; i++) {
		strcat(p, "/");
		memset(p + strlen(p) + 200, 0, 1);
		memset(p + strlen(p), 'a', 200);
	}
	strcat(p, "/f.key");
	n = strlen(p);
	/* PCRE2's backtracking gave up on this one (undecided, so denied):
	 * its DFA matcher decides it, and the near miss beside it */
	assert_int_equal(wap_glob_test(gs.g[0], p, n), 1);
	assert_true(wap_globset_deny(&gs, p, n));
	p[6] = 'c';
	assert_int_equal(wap_glob_test(gs.g[0], p, n), 0);
	assert_false(wap_globset_deny(&gs, p, n));
	assert_false(wap_globset_deny(&gs, "b/f.key", 7));
	free(p);
	wap_globset_release(&gs);
}

int main(void)
{
	setenv("XDG_CONFIG_HOME", "/nonexistent/wap-unit", 1);	/* no personal config */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_allow),
		cmocka_unit_test(test_feature),
		cmocka_unit_test(test_protected),
		cmocka_unit_test(test_glob_deny),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
