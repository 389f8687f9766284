/* test_ws.c - the workspace sandbox: path normalisation, confinement
 * by openat2 and by the fallback walk, parents, policy, NUL bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "applet.h"
#include "exclude.h"
#include "ws.h"

static char base[PATH_MAX], root[PATH_MAX + 16];

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
	char tmpl[] = "/tmp/wap-unit-ws.XXXXXX";
	char *real;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	real = realpath(tmpl, NULL);
	snprintf(base, sizeof(base), "%s", real);
	free(real);
	snprintf(root, sizeof(root), "%s/root", base);
	sh("mkdir -p %s/sub/inner %s/outside %s/root-evil && echo secret > %s/outside/s "
	   "&& echo in > %s/sub/inner/f && echo env > %s/.env", root, base, base, base, root, root);
	sh("cd %s && ln -s ../outside out && ln -s %s/outside/s abs && ln -s sub/inner/f in "
	   "&& ln -s ../../sub sub/inner/up && ln -s .env envlink && ln -s loop loop", root, base);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", base);
	return 0;
}

static struct wap_ws ws;

static void open_ws(void)
{
	struct wap_err err = { 0 };

	assert_int_equal(wap_ws_init(&ws, root, NULL, &err), 0);
}

static void rel_is(const char *in, const char *want)
{
	struct wap_err err = { 0 };
	char *rel;

	if (wap_ws_rel(&ws, in, strlen(in), &rel, &err))
		fail_msg("wap_ws_rel(%s): %s", in, err.msg);
	assert_string_equal(rel, want);
	free(rel);
}

static void rel_fails(const char *in, size_t len, enum wap_errkind kind)
{
	struct wap_err err = { 0 };
	char *rel = (char *)1;

	assert_int_equal(wap_ws_rel(&ws, in, len, &rel, &err), -1);
	assert_null(rel);
	assert_int_equal(err.kind, kind);
}

static void test_rel(void **state)
{
	char abs[PATH_MAX + 64], evil[PATH_MAX + 64], *big;

	(void)state;
	open_ws();
	rel_is("a/b", "a/b");
	rel_is("./a//b/", "a/b");
	rel_is("a/./b/../c", "a/c");
	rel_is("a/..", ".");
	rel_is(".", ".");
	rel_is("./", ".");
	snprintf(abs, sizeof(abs), "%s/x/y", root);
	rel_is(abs, "x/y");
	rel_is(root, ".");
	snprintf(abs, sizeof(abs), "%s/", root);
	rel_is(abs, ".");
	rel_fails("..", 2, WAP_E_ACCESS);
	rel_fails("../root/x", 9, WAP_E_ACCESS);
	rel_fails("a/../../x", 9, WAP_E_ACCESS);
	rel_fails("/etc/passwd", 11, WAP_E_ACCESS);
	snprintf(evil, sizeof(evil), "%s-evil/x", root);	/* CVE-2025-53110 */
	rel_fails(evil, strlen(evil), WAP_E_ACCESS);
	snprintf(evil, sizeof(evil), "%s/../root-evil", root);
	rel_fails(evil, strlen(evil), WAP_E_ACCESS);
	rel_fails("", 0, WAP_E_INVALID);
	rel_fails("a\0b", 3, WAP_E_INVALID);
	rel_fails("\0", 1, WAP_E_INVALID);
	big = malloc(PATH_MAX + 10);
	memset(big, 'a', PATH_MAX + 9);
	for (int i = 1; i < PATH_MAX + 9; i += 2)
		big[i] = '/';
	big[PATH_MAX + 9] = 0;
	rel_fails(big, strlen(big), WAP_E_INVALID);
	memset(big, 'c', 300);
	big[300] = 0;
	rel_fails(big, 300, WAP_E_INVALID);
	free(big);
	wap_ws_release(&ws);
}

/* a root given through a symlink: absolute paths in either spelling */
static void test_root_alias(void **state)
{
	struct wap_err err = { 0 };
	char link[PATH_MAX + 32], p[PATH_MAX + 64];

	(void)state;
	snprintf(link, sizeof(link), "%s/rootlink", base);
	sh("ln -sfn root %s", link);
	assert_int_equal(wap_ws_init(&ws, link, NULL, &err), 0);
	assert_string_equal(ws.root, root);
	snprintf(p, sizeof(p), "%s/sub/inner/f", link);
	rel_is(p, "sub/inner/f");
	snprintf(p, sizeof(p), "%s/sub", root);
	rel_is(p, "sub");
	rel_is(link, ".");
	snprintf(p, sizeof(p), "%s-evil/x", link);
	rel_fails(p, strlen(p), WAP_E_ACCESS);
	snprintf(p, sizeof(p), "%s/../outside/s", link);
	rel_fails(p, strlen(p), WAP_E_ACCESS);
	wap_ws_release(&ws);
}

static void opens(const char *rel, int flags)
{
	struct wap_err err = { 0 };
	int fd = wap_ws_open(&ws, rel, flags, 0, WAP_ACC_READ, &err);

	if (fd < 0)
		fail_msg("open %s (fallback %d): %s", rel, wap_ws_no_openat2, err.msg);
	close(fd);
}

static void refused(const char *rel, int flags, enum wap_errkind kind)
{
	struct wap_err err = { 0 };
	int fd = wap_ws_open(&ws, rel, flags, 0, WAP_ACC_READ, &err);

	if (fd >= 0)
		fail_msg("open %s (fallback %d) was allowed", rel, wap_ws_no_openat2);
	if (err.kind != kind)
		fail_msg("open %s (fallback %d): kind %d, wanted %d: %s", rel, wap_ws_no_openat2,
			 err.kind, kind, err.msg);
	wap_err_release(&err);
}

static void confinement(void)
{
	opens("in", O_RDONLY);
	opens("sub/inner/up/inner/f", O_RDONLY);
	opens(".", O_RDONLY | O_DIRECTORY);
	opens("abs", O_PATH | O_NOFOLLOW);	/* the link itself */
	refused("out/s", O_RDONLY, WAP_E_ACCESS);
	refused("out", O_RDONLY | O_DIRECTORY, WAP_E_ACCESS);
	refused("abs", O_RDONLY, WAP_E_ACCESS);
	refused("sub/inner/up/../../x", O_RDONLY, WAP_E_ACCESS);
	refused("loop", O_RDONLY, WAP_E_ACCESS);
	refused("in", O_RDONLY | O_NOFOLLOW, WAP_E_ACCESS);
	refused("nope", O_RDONLY, WAP_E_NOT_FOUND);
	refused("in/x", O_RDONLY, WAP_E_NOT_DIR);
}

static void test_open(void **state)
{
	(void)state;
	open_ws();
	wap_ws_no_openat2 = false;
	confinement();
	wap_ws_no_openat2 = true;
	confinement();
	wap_ws_no_openat2 = false;
	wap_ws_release(&ws);
}

static void test_open_parent(void **state)
{
	struct wap_err err = { 0 };
	const char *name;
	struct stat st;
	int fd;

	(void)state;
	open_ws();
	fd = wap_ws_open_parent(&ws, "new/deep/file", true, &name, &err);
	assert_true(fd >= 0);
	assert_string_equal(name, "file");
	close(fd);
	assert_int_equal(fstatat(ws.rootfd, "new/deep", &st, 0), 0);
	assert_int_equal(wap_ws_open_parent(&ws, "nope/x", false, &name, &err), -1);
	assert_int_equal(err.kind, WAP_E_NOT_FOUND);
	assert_int_equal(wap_ws_open_parent(&ws, ".", true, &name, &err), -1);
	assert_int_equal(err.kind, WAP_E_INVALID);
	assert_int_equal(wap_ws_open_parent(&ws, "out/x", true, &name, &err), -1);
	assert_int_equal(err.kind, WAP_E_ACCESS);
	assert_int_equal(wap_ws_open_parent(&ws, "in/x/y", true, &name, &err), -1);
	assert_int_equal(err.kind, WAP_E_NOT_DIR);
	/* nothing made outside by mkparents through a link */
	assert_int_equal(wap_ws_open_parent(&ws, "out/made/x", true, &name, &err), -1);
	{
		char p[PATH_MAX + 32];
		snprintf(p, sizeof(p), "%s/outside/made", base);
		assert_int_equal(access(p, F_OK), -1);
	}
	wap_ws_release(&ws);
}

static void test_policy(void **state)
{
	struct wap_err err = { 0 };
	json_t *cfg = json_pack("{s:{s:[s,s]}}", "security", "restrictedPaths", ".env", "secret/**");
	const char *name;
	int fd;

	(void)state;
	open_ws();
	assert_int_equal(wap_ws_apply_config(&ws, cfg, &err), 0);
	json_decref(cfg);
	assert_int_equal(wap_ws_check(&ws, ".env", WAP_ACC_READ, &err), -1);
	assert_int_equal(err.kind, WAP_E_RESTRICTED);
	assert_int_equal(wap_ws_check(&ws, "a/b/.env", WAP_ACC_READ, &err), -1);
	assert_int_equal(wap_ws_check(&ws, "secret", WAP_ACC_READ, &err), -1);
	assert_int_equal(wap_ws_check(&ws, "secret/x/y", WAP_ACC_READ, &err), -1);
	assert_int_equal(wap_ws_check(&ws, "secretive", WAP_ACC_READ, &err), 0);
	/* a link to a restricted file is restricted too */
	refused("envlink", O_RDONLY, WAP_E_RESTRICTED);
	/* no parents made for a restricted path */
	assert_int_equal(wap_ws_open_parent(&ws, "secret/a/b", true, &name, &err), -1);
	assert_int_equal(err.kind, WAP_E_RESTRICTED);
	assert_int_equal(faccessat(ws.rootfd, "secret", F_OK, 0), -1);
	ws.pol.read_only = true;
	assert_int_equal(wap_ws_check(&ws, "x", WAP_ACC_WRITE, &err), -1);
	assert_int_equal(err.kind, WAP_E_RESTRICTED);
	assert_int_equal(wap_ws_check(&ws, "x", WAP_ACC_READ, &err), 0);
	fd = wap_ws_open_parent(&ws, "x", false, &name, &err);
	assert_int_equal(fd, -1);
	wap_ws_release(&ws);
}

/* NUL bytes cannot come through argv, but they can through JSON: every
 * path-taking applet refuses them. */
static void test_nul_through_ops(void **state)
{
	static const struct { const char *applet, *key, *other; } cases[] = {
		{ "read", "path", NULL }, { "write", "path", "content" }, { "ls", "path", NULL },
		{ "stat", "path", NULL }, { "mkdir", "path", NULL }, { "rm", "path", NULL },
		{ "mv", "source", "destination" }, { "mv", "destination", "source" },
		{ "cp", "source", "destination" }, { "cp", "destination", "source" },
	};
	struct wap_call call = { 0 };
	json_error_t je;

	(void)state;
	open_ws();
	call.ws = &ws;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct wap_applet *a = wap_applet_find(cases[i].applet);
		struct wap_err err = { 0 };
		json_t *req, *res = NULL;
		char text[256];

		assert_non_null(a);
		snprintf(text, sizeof(text), "{\"%s\": \"in\\u0000/../../outside/s\"%s%s%s}",
			 cases[i].key, cases[i].other ? ", \"" : "",
			 cases[i].other ? cases[i].other : "", cases[i].other ? "\": \"x\"" : "");
		req = json_loads(text, JSON_ALLOW_NUL, &je);
		assert_non_null(req);
		if (a->op(&call, req, &res, &err) != -1)
			fail_msg("%s accepted a NUL in %s", cases[i].applet, cases[i].key);
		assert_null(res);
		assert_int_equal(err.kind, WAP_E_INVALID);
		assert_string_equal(err.msg, "Invalid path: contains a NUL byte");
		wap_err_release(&err);
		json_decref(req);
	}
	wap_ws_release(&ws);
}

static void test_fd_rel_and_abs(void **state)
{
	struct wap_err err = { 0 };
	char *r, *a;
	int fd;

	(void)state;
	open_ws();
	fd = wap_ws_open(&ws, "in", O_RDONLY, 0, WAP_ACC_READ, &err);
	assert_true(fd >= 0);
	r = wap_ws_fd_rel(&ws, fd);
	assert_string_equal(r, "sub/inner/f");
	free(r);
	close(fd);
	a = wap_ws_abs(&ws, "x/y");
	assert_non_null(strstr(a, "/root/x/y"));
	free(a);
	assert_true(wap_exclude_default_path("a/node_modules/b"));
	assert_true(wap_exclude_default_path(".git"));
	assert_false(wap_exclude_default_path("a/node_modules2/b"));
	/* the walker's directory test and the globs are one list */
	for (int i = 0; wap_default_excludes[i]; i++) {
		const char *g = wap_default_excludes[i];
		assert_true(wap_exclude_default_dir(g + 3, strlen(g) - 6));
	}
	assert_true(wap_exclude_default_dir("build", 5));
	assert_false(wap_exclude_default_dir("buil", 4));
	assert_false(wap_exclude_default_dir("builds", 6));
	wap_ws_release(&ws);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rel),
		cmocka_unit_test(test_root_alias),
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_open_parent),
		cmocka_unit_test(test_policy),
		cmocka_unit_test(test_nul_through_ops),
		cmocka_unit_test(test_fd_rel_and_abs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
