/* test_git.c - lib/git/ called in-process, as `wap serve` calls it:
 * progress reports, cancellation, and many calls without leaks (run under
 * ASan/LSan by `make check ASAN=1`). */
#include <errno.h>
#include <limits.h>
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
#include "git.h"
#include "internal.h"

/* libgit2 1.5 leaks PCRE2 match data on remote lookups: see
 * tests/lsan-libgit2.supp.  This binary tests only lib/git/. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpcre2-8.so\n";
}

static char root[64];

struct prog {
	int calls;
	double total;
};

static void on_progress(void *arg, double done, double total, const char *msg)
{
	struct prog *p = arg;

	(void)done;
	assert_non_null(msg);
	p->calls++;
	if (total > p->total)
		p->total = total;
}

static int setup(void **state)
{
	char cmd[512];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/wap-unit-git.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "cd %s && git init -q src && cd src && for i in $(seq 1 40); do seq 1 $i > f$i.txt; done && "
		 "git add . && git -c user.name=U -c user.email=u@x commit -qm one && "
		 "echo x >> f1.txt && git -c user.name=U -c user.email=u@x commit -qam two", root);
	return system(cmd) ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) ? -1 : 0;
}

static int run(struct wap_call *call, json_t *req, json_t **res, struct wap_err *err)
{
	int rc = wap_git(call, req, res, err);
	json_decref(req);
	return rc;
}

static void test_clone_progress(void **state)
{
	struct wap_ws ws;
	struct wap_err err = { 0 };
	struct prog p = { 0 };
	struct wap_call call = { 0 };
	json_t *res = NULL;

	(void)state;
	assert_int_equal(wap_ws_init(&ws, root, NULL, &err), 0);
	call.ws = &ws;
	call.progress = on_progress;
	call.arg = &p;
	assert_int_equal(run(&call, json_pack("{s:s, s:s, s:s}", "action", "clone", "url", "src",
					      "dir", "dst"), &res, &err), 0);
	assert_true(json_is_true(json_object_get(res, "success")));
	assert_true(p.calls > 0);
	assert_true(p.total > 0);
	json_decref(res);
	wap_ws_release(&ws);
}

static void test_cancelled(void **state)
{
	struct wap_ws ws;
	struct wap_err err = { 0 };
	struct wap_cancel stop = { .why = 1 };
	struct wap_call call = { 0 };
	json_t *res = NULL;
	struct stat st;
	char path[128];

	(void)state;
	assert_int_equal(wap_ws_init(&ws, root, NULL, &err), 0);
	call.ws = &ws;
	call.cancel = &stop;
	assert_int_equal(run(&call, json_pack("{s:s, s:s, s:s}", "action", "clone", "url", "src",
					      "dir", "dst2"), &res, &err), -1);
	assert_null(res);
	assert_int_equal(err.kind, WAP_E_FAILED);
	assert_non_null(strstr(err.msg, "cancelled"));
	snprintf(path, sizeof(path), "%s/dst2", root);
	assert_int_not_equal(stat(path, &st), 0);
	wap_err_release(&err);
	wap_ws_release(&ws);
}

/* the read operations, many times over, as a long-lived server would */
static void test_many_calls(void **state)
{
	static const char *const reqs[] = {
		"{\"action\":\"status\",\"dir\":\"src\"}",
		"{\"action\":\"diff\",\"dir\":\"src\",\"args\":[\"HEAD~1\",\"HEAD\"],\"stat\":true}",
		"{\"action\":\"diff\",\"dir\":\"src\",\"args\":[\"HEAD~1..HEAD\",\"--\",\"src/f1.txt\"]}",
		"{\"action\":\"log\",\"dir\":\"src\",\"paths\":[\"src/f1.txt\"]}",
		"{\"action\":\"show\",\"dir\":\"src\",\"rev\":\"HEAD\"}",
		"{\"action\":\"branch\",\"dir\":\"src\",\"all\":true}",
		"{\"action\":\"show\",\"dir\":\"src\",\"rev\":\"no-such-rev\"}",
		"{\"action\":\"status\",\"dir\":\"nowhere\"}",
		"{\"action\":\"diff\",\"dir\":\"src\",\"args\":[\"../../etc/passwd\"]}",
	};
	struct wap_ws ws;
	struct wap_err err = { 0 };
	struct wap_call call = { 0 };

	(void)state;
	assert_int_equal(wap_ws_init(&ws, root, NULL, &err), 0);
	call.ws = &ws;
	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < sizeof(reqs) / sizeof(*reqs); i++) {
			json_t *res = NULL;
			int rc = run(&call, json_loads(reqs[i], 0, NULL), &res, &err);
			if (i < 6) {
				assert_int_equal(rc, 0);
				assert_non_null(res);
			} else {
				assert_int_equal(rc, -1);
				assert_null(res);
				assert_int_not_equal(err.kind, WAP_OK);
			}
			json_decref(res);
			wap_err_release(&err);
			memset(&err, 0, sizeof(err));
		}
	}
	wap_ws_release(&ws);
}

/* A write through a link out of the root is refused (Landlock, in a thread
 * of its own), and only that thread is confined: the caller (a server)
 * can still write where it likes afterwards. */
static void test_confined_thread_only(void **state)
{
	char out[64], cmd[512], path[128], buf[16] = "";
	struct wap_ws ws;
	struct wap_err err = { 0 };
	struct wap_call call = { 0 };
	json_t *res = NULL;
	FILE *f;

	(void)state;
	snprintf(out, sizeof(out), "/tmp/wap-unit-out.XXXXXX");
	assert_non_null(mkdtemp(out));
	snprintf(cmd, sizeof(cmd), "echo orig > %s/file && cd %s/src && echo y >> f2.txt && "
		 "rm .git/logs/HEAD && ln -s %s/file .git/logs/HEAD", out, root, out);
	assert_int_equal(system(cmd), 0);
	setenv("WAP_GIT_AUTHOR_NAME", "U", 1);
	setenv("WAP_GIT_AUTHOR_EMAIL", "u@x", 1);
	assert_int_equal(wap_ws_init(&ws, root, NULL, &err), 0);
	call.ws = &ws;
	/* the kernel's layer alone (wap's own check would refuse the link first) */
	setenv("WAP_GIT_NO_LINK_CHECKS", "1", 1);
	assert_int_equal(run(&call, json_pack("{s:s, s:s, s:s, s:[s]}", "action", "commit", "dir", "src",
					      "message", "m", "args", "src/f2.txt"), &res, &err), -1);
	unsetenv("WAP_GIT_NO_LINK_CHECKS");
	assert_int_equal(err.kind, WAP_E_ACCESS);
	assert_non_null(strstr(err.msg, "may read and write only beneath the workspace root"));
	wap_err_release(&err);
	memset(&err, 0, sizeof(err));
	snprintf(path, sizeof(path), "%s/file", out);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "orig\n");
	/* this thread is not confined */
	snprintf(path, sizeof(path), "%s/new", out);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	/* and with the link gone, the commit goes through */
	snprintf(cmd, sizeof(cmd), "rm %s/src/.git/logs/HEAD", root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(run(&call, json_pack("{s:s, s:s, s:s, s:[s]}", "action", "commit", "dir", "src",
					      "message", "m", "args", "src/f2.txt"), &res, &err), 0);
	json_decref(res);
	wap_ws_release(&ws);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", out);
	assert_int_equal(system(cmd), 0);
}

/* A new directory from template D: real/sub/f, file, and links to them
 * (link, link2 to link, flink to the file), one dangling. */
static void links_tree(char *d)
{
	char cmd[512];

	assert_non_null(mkdtemp(d));
	snprintf(cmd, sizeof(cmd), "cd %s && mkdir -p real/sub && : > real/sub/f && : > file && "
		 "ln -s real link && ln -s link link2 && ln -s nowhere dangling && "
		 "ln -s real/sub/f flink", d);
	assert_int_equal(system(cmd), 0);
}

/* libgit2's realpath() while an action runs (git.c's memo, made a
 * component at a time from the kept directory): every answer glibc's,
 * through links, links to links, ".", "..", a trailing '/', a missing
 * file, a file used as a directory, asked twice (the second from the
 * memo) */
static void test_realpath_memo(void **state)
{
	static const char *rel[] = {
		"real", "real/sub", "real/sub/f", "link", "link/sub", "link/sub/f", "link2/sub/f",
		"link2/sub/", "real/./sub", "real/../link/sub", "missing", "missing/x", "file/x",
		"real//sub", "dangling", "dangling/x", "link/sub/../sub/f", "flink",
	};
	char d[] = "/tmp/wap-rp-XXXXXX", cmd[512], p[256], want[PATH_MAX], got[PATH_MAX];

	(void)state;
	links_tree(d);
	for (int round = 0; round < 2; round++) {
		git_memo(true, false);
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
				char *w, *g;
				int we, ge;
				snprintf(p, sizeof(p), "%s/%s", d, rel[i]);
				git_memo(false, false);
				errno = 0;
				w = realpath(p, want);
				we = errno;
				git_memo(true, false);
				errno = 0;
				g = realpath(p, got);
				ge = errno;
				if (!w) {
					assert_null(g);
					assert_int_equal(ge, we);
				} else {
					assert_non_null(g);
					assert_string_equal(got, want);
				}
				g = realpath(p, NULL);
				if (w) {
					assert_non_null(g);
					assert_string_equal(g, want);
				}
				free(g);
			}
		git_memo(false, false);
		/* a second action sees the links as they are now */
		snprintf(cmd, sizeof(cmd), "cd %s && rm link && mkdir -p other/sub && : > other/sub/f && "
			 "ln -s other link", d);
		assert_int_equal(system(cmd), 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
	assert_int_equal(system(cmd), 0);
}

/* The stat() memo made of lstat() (git.c): what stat() says, through
 * links, dangling links and missing paths; and realpath() after a stat()
 * (which then skips its readlink() for what lstat() saw is no link) still
 * glibc's answer, also for a link stat()ed first. */
static void test_stat_memo(void **state)
{
	static const char *rel[] = {
		"real", "real/sub/f", "link", "link/sub/f", "link2/sub", "dangling",
		"missing", "file/x", "real/sub/", "flink",
	};
	char d[] = "/tmp/wap-st-XXXXXX", cmd[512], p[256], want[PATH_MAX], got[PATH_MAX];

	(void)state;
	links_tree(d);
	for (size_t i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
		struct stat ws, gs;
		int wr, we, gr, ge;
		char *w, *g;
		snprintf(p, sizeof(p), "%s/%s", d, rel[i]);
		git_memo(false, false);
		errno = 0;
		wr = stat(p, &ws);
		we = errno;
		w = realpath(p, want);
		git_memo(true, true);
		for (int pass = 0; pass < 2; pass++) {
			errno = 0;
			gr = stat(p, &gs);
			ge = errno;
			assert_int_equal(gr, wr);
			if (wr)
				assert_int_equal(ge, we);
			else
				assert_true(gs.st_ino == ws.st_ino && gs.st_mode == ws.st_mode &&
					    gs.st_size == ws.st_size);
			g = realpath(p, got);
			if (w)
				assert_string_equal(g, want);
			else
				assert_null(g);
		}
	}
	git_memo(false, false);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clone_progress),
		cmocka_unit_test(test_cancelled),
		cmocka_unit_test(test_many_calls),
		cmocka_unit_test(test_confined_thread_only),
		cmocka_unit_test(test_realpath_memo),
		cmocka_unit_test(test_stat_memo),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
