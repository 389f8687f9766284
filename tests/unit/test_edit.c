/* test_edit.c - the editing engine (lib/edit/edit.c), patches (lib/edit/patch.c) and
 * diffs (lib/edit/diff.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diff.h"
#include "edit.h"
#include "patch.h"
#include "ws.h"
#include "applet.h"

/* replace OLD by NEW in TEXT; returns the result (static) or NULL */
static char res_buf[4096];
static struct wap_err last_err;
static enum wap_strategy last_st;
static size_t last_count;

static const char *rep(const char *text, const char *old, const char *new, bool all)
{
	char *out = NULL;
	size_t outlen;

	wap_err_release(&last_err);
	memset(&last_err, 0, sizeof(last_err));
	if (wap_edit_replace(text, strlen(text), old, strlen(old), new, strlen(new), all, false, 0,
			     &out, &outlen, &last_count, &last_st, &last_err))
		return NULL;
	snprintf(res_buf, sizeof(res_buf), "%s", out);
	free(out);
	return res_buf;
}

static void test_exact(void **state)
{
	(void)state;
	assert_string_equal(rep("a b c", "b", "B", false), "a B c");
	assert_int_equal(last_st, WAP_S_EXACT);
	assert_null(rep("x\ny\nx\n", "x", "z", false));
	assert_int_equal(last_err.kind, WAP_E_MULTIPLE);
	assert_non_null(strstr(last_err.msg, "Found multiple matches for oldString"));
	assert_non_null(strstr(last_err.msg, "at lines 1, 3."));
	assert_string_equal(rep("x\ny\nx\n", "x", "z", true), "z\ny\nz\n");
	assert_int_equal(last_count, 2);
	assert_null(rep("abc", "zz", "y", false));
	assert_int_equal(last_err.kind, WAP_E_NO_MATCH);
	assert_string_equal(last_err.msg, "oldString not found in content");
	/* overlapping occurrences are ambiguous too */
	assert_null(rep("aaa", "aa", "b", false));
	assert_int_equal(last_err.kind, WAP_E_MULTIPLE);
	assert_string_equal(rep("aaa", "aa", "b", true), "ba");
	wap_err_release(&last_err);
}

static void test_strategies(void **state)
{
	(void)state;
	assert_string_equal(rep("f();  \ng();\n", "f();\ng();\n", "h();\n", false), "h();\n");
	assert_int_equal(last_st, WAP_S_TRAILING);
	assert_string_equal(rep("  if (a) {\n    b();\n  }\n", "if (a) {\nb();\n}", "if (a) {\nc();\n}", false),
			    "  if (a) {\n    c();\n  }\n");
	assert_int_equal(last_st, WAP_S_WHITESPACE);
	assert_string_equal(rep("\t\tx = 1\n\t\ty = 2\n", "  x = 1\n  y = 2", "  x = 3\n  y = 4\n  z = 5", false),
			    "\t\tx = 3\n\t\ty = 4\n\t\tz = 5\n");
	assert_int_equal(last_st, WAP_S_INDENT);
	assert_string_equal(rep("s = \xe2\x80\x98" "a\xe2\x80\x99\n", "s = 'a'", "s = 'b'", false), "s = 'b'\n");
	assert_int_equal(last_st, WAP_S_UNICODE);
	assert_string_equal(rep("a\n\tb\n", "a\\n\\tb", "c\\nd", false), "c\nd\n");
	assert_int_equal(last_st, WAP_S_ESCAPES);
	/* a fallback finding two places is an error, never a guess */
	assert_null(rep("f();  \nf();\t\n", "f();\n", "g();\n", false));
	assert_int_equal(last_err.kind, WAP_E_MULTIPLE);
	assert_non_null(strstr(last_err.msg, "trailing_whitespace"));
	wap_err_release(&last_err);
}

static void test_lsp_offset(void **state)
{
	const char *t = "h\xf0\x9f\x98\x80i\r\nab\rc\n";
	struct wap_err err = { 0 };

	(void)state;
	assert_int_equal(wap_lsp_offset(t, strlen(t), 0, 0, &err), 0);
	assert_int_equal(wap_lsp_offset(t, strlen(t), 0, 3, &err), 5);
	assert_int_equal(wap_lsp_offset(t, strlen(t), 0, 4, &err), 6);
	assert_int_equal(wap_lsp_offset(t, strlen(t), 0, 99, &err), 6);	/* clamped */
	assert_int_equal(wap_lsp_offset(t, strlen(t), 1, 1, &err), 9);
	assert_int_equal(wap_lsp_offset(t, strlen(t), 2, 1, &err), 12);	/* lone CR ends a line */
	assert_int_equal(wap_lsp_offset(t, strlen(t), 3, 0, &err), 13);
	assert_int_equal(wap_lsp_offset(t, strlen(t), 9, 0, &err), (long)strlen(t));
	assert_int_equal(wap_lsp_offset(t, strlen(t), 0, 2, &err), -1);
	assert_int_equal(err.kind, WAP_E_INVALID);
	wap_err_release(&err);
	assert_int_equal(wap_lsp_offset("\xff", 1, 0, 1, &err), -1);
	wap_err_release(&err);
}

static void test_seek(void **state)
{
	struct wap_span L[] = { { "a", 1 }, { "b  ", 3 }, { "a", 1 }, { " b", 2 } };
	struct wap_span P[] = { { "a", 1 }, { "b", 1 } };
	int lv;

	(void)state;
	assert_int_equal(wap_seek_lines(L, 4, P, 2, 0, false, -1, &lv), 0);
	assert_int_equal(lv, 1);
	assert_int_equal(wap_seek_lines(L, 4, P, 2, 1, false, -1, &lv), 2);
	assert_int_equal(lv, 2);
	assert_int_equal(wap_seek_lines(L, 4, P, 2, 0, true, -1, &lv), 2);	/* at the end */
	assert_int_equal(wap_seek_lines(L, 4, P, 2, 0, false, 3, &lv), 0);	/* level 1 wins */
	assert_int_equal(wap_seek_lines(L, 4, P, 2, 3, false, -1, &lv), -1);
}

static int apply(const struct wap_edit_spec *s, const char *in, char **out, struct wap_err *err)
{
	size_t ol;
	struct wap_edit_info info;
	int rc = wap_edit_apply(s, in, in ? strlen(in) : 0, out, &ol, &info, err);
	wap_edit_info_release(&info);
	return rc;
}

static void test_apply_modes(void **state)
{
	struct wap_edit_spec s = { 0 };
	struct wap_err err = { 0 };
	char *out = NULL;
	json_t *l;

	(void)state;
	/* CRLF kept, LF caller text */
	s.mode = WAP_EDIT_REPLACE;
	s.old = "a\nb", s.oldlen = 3, s.new = "x\ny\nz", s.newlen = 5;
	assert_int_equal(apply(&s, "a\r\nb\r\nc\r\n", &out, &err), 0);
	assert_string_equal(out, "x\r\ny\r\nz\r\nc\r\n");
	free(out);
	/* trailing-newline state kept both ways */
	s.old = "c", s.oldlen = 1, s.new = "d\n", s.newlen = 2;
	assert_int_equal(apply(&s, "b\nc", &out, &err), 0);
	assert_string_equal(out, "b\nd");
	free(out);
	s.old = "c\n", s.oldlen = 2, s.new = "d", s.newlen = 1;
	assert_int_equal(apply(&s, "b\nc\n", &out, &err), 0);
	assert_string_equal(out, "b\nd\n");
	free(out);
	/* old == new */
	s.new = "c\n", s.newlen = 2;
	assert_int_equal(apply(&s, "c\n", &out, &err), -1);
	assert_int_equal(err.kind, WAP_E_INVALID);
	wap_err_release(&err);
	/* empty old creates */
	s.old = "", s.oldlen = 0, s.new = "hi\n", s.newlen = 3;
	assert_true(wap_edit_may_create(&s));
	assert_int_equal(apply(&s, NULL, &out, &err), 0);
	assert_string_equal(out, "hi\n");
	free(out);
	assert_int_equal(apply(&s, "full\n", &out, &err), -1);
	wap_err_release(&err);

	/* line ops: numbers refer to the original file */
	s.mode = WAP_EDIT_OPS;
	l = json_loads("[{\"type\":\"delete\",\"startLine\":1,\"endLine\":1},"
		       "{\"type\":\"insert\",\"afterLine\":3,\"newContent\":\"4\"},"
		       "{\"type\":\"replace\",\"startLine\":2,\"endLine\":2,\"newContent\":\"two\\nTWO\\n\"}]", 0, NULL);
	s.list = l;
	assert_int_equal(apply(&s, "1\n2\n3\n", &out, &err), 0);
	assert_string_equal(out, "two\nTWO\n3\n4\n");
	free(out);
	json_decref(l);
	l = json_loads("[{\"type\":\"delete\",\"startLine\":1,\"endLine\":2},"
		       "{\"type\":\"delete\",\"startLine\":2,\"endLine\":3}]", 0, NULL);
	s.list = l;
	assert_int_equal(apply(&s, "1\n2\n3\n", &out, &err), -1);
	assert_non_null(strstr(err.msg, "overlap"));
	wap_err_release(&err);
	json_decref(l);

	/* positions: all or nothing, UTF-16 */
	s.mode = WAP_EDIT_POSITIONS;
	l = json_loads("[{\"range\":{\"start\":{\"line\":0,\"character\":2},\"end\":{\"line\":0,\"character\":3}},\"newText\":\"\\u00e9\"},"
		       "{\"range\":{\"start\":{\"line\":0,\"character\":0},\"end\":{\"line\":0,\"character\":0}},\"newText\":\">\"}]", 0, NULL);
	s.list = l;
	assert_int_equal(apply(&s, "\xf0\x9f\x98\x80x\n", &out, &err), 0);
	assert_string_equal(out, ">\xf0\x9f\x98\x80\xc3\xa9\n");
	free(out);
	assert_int_equal(apply(&s, NULL, &out, &err), -1);
	assert_int_equal(err.kind, WAP_E_NOT_FOUND);
	wap_err_release(&err);
	json_decref(l);

	/* binary refused */
	s.mode = WAP_EDIT_REPLACE;
	s.old = "a", s.oldlen = 1, s.new = "b", s.newlen = 1;
	{
		size_t ol;
		struct wap_edit_info info;
		assert_int_equal(wap_edit_apply(&s, "a\0b", 3, &out, &ol, &info, &err), -1);
		wap_edit_info_release(&info);
	}
	wap_err_release(&err);
}

static char *patch_one(const char *patch, const char *in, const char *dflt, struct wap_err *err)
{
	struct wap_patch p;
	char *out = NULL;
	size_t ol;

	if (wap_patch_parse(patch, strlen(patch), dflt, &p, err))
		return NULL;
	if (wap_patch_apply_file(&p.f[0], in, strlen(in), &out, &ol, err))
		out = NULL;
	wap_patch_release(&p);
	return out;
}

static void test_patch_parse_apply(void **state)
{
	struct wap_err err = { 0 };
	struct wap_patch p;
	char *out;
	const char *cx = "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@ def f():\n-    return 1\n+    return 2\n*** End of File\n*** Add File: n.txt\n+x\n+y\n*** Delete File: d.txt\n*** End Patch\n";

	(void)state;
	assert_int_equal(wap_patch_parse(cx, strlen(cx), NULL, &p, &err), 0);
	assert_int_equal(p.n, 3);
	assert_int_equal(p.f[0].kind, WAP_P_UPDATE);
	assert_string_equal(p.f[0].move_to, "b.py");
	assert_true(p.f[0].h[0].eof);
	assert_true(p.f[0].h[0].has_ctx);
	assert_int_equal(p.f[1].kind, WAP_P_ADD);
	assert_string_equal(p.f[1].content, "x\ny\n");
	assert_int_equal(p.f[2].kind, WAP_P_DELETE);
	assert_int_equal(wap_patch_apply_file(&p.f[0], "def f():\n    return 1\n", 22, &out, &(size_t){ 0 }, &err), 0);
	assert_string_equal(out, "def f():\n    return 2\n");
	free(out);
	wap_patch_release(&p);

	/* unified: markers decide the final newline */
	out = patch_one("--- a/n\n+++ b/n\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n", "a\nb", NULL, &err);
	assert_non_null(out);
	assert_string_equal(out, "a\nb\n");
	free(out);
	/* CRLF target, LF patch */
	out = patch_one("@@ -1,2 +1,2 @@\n a\n-b\n+c\n", "a\r\nb\r\n", "x", &err);
	assert_non_null(out);
	assert_string_equal(out, "a\r\nc\r\n");
	free(out);
	/* a hunk that does not apply */
	assert_null(patch_one("@@ -1 +1 @@\n-zz\n+c\n", "a\n", "x", &err));
	assert_int_equal(err.kind, WAP_E_NO_MATCH);
	wap_err_release(&err);
	/* repeated header lines (found by fuzzing: leaked) */
	{
		const char *rr = "diff --git a/x b/y\nrename from x\nrename from x\nrename to y\nrename to y\n";
		assert_int_equal(wap_patch_parse(rr, strlen(rr), NULL, &p, &err), 0);
		assert_string_equal(p.f[0].move_to, "y");
		wap_patch_release(&p);
	}
	/* bad input */
	assert_int_equal(wap_patch_parse("hello\n", 6, NULL, &p, &err), -1);
	assert_int_equal(err.kind, WAP_E_INVALID);
	wap_err_release(&err);
	assert_int_equal(wap_patch_parse("*** Begin Patch\n*** Frobnicate: x\n", 34, NULL, &p, &err), -1);
	wap_err_release(&err);
	assert_int_equal(wap_patch_parse("*** Begin Patch\n*** Add File: x\nnot plus\n*** End Patch\n", 55, NULL, &p, &err), -1);
	wap_err_release(&err);
}

static void test_diff(void **state)
{
	struct wap_diff d;
	struct wap_err err = { 0 };

	(void)state;
	assert_int_equal(wap_diff_make(NULL, 0, "x\n", 2, "f", NULL, &d, &err), 0);
	assert_non_null(strstr(d.text, "new file mode"));
	assert_non_null(strstr(d.text, "+++ b/f\n@@ -0,0 +1 @@\n+x\n"));
	assert_int_equal(d.additions, 1);
	wap_diff_release(&d);
	assert_int_equal(wap_diff_make("a\nb\n", 4, "a\nc", 3, "f", NULL, &d, &err), 0);
	assert_non_null(strstr(d.text, "-b\n+c\n\\ No newline at end of file\n"));
	assert_int_equal(d.deletions, 1);
	wap_diff_release(&d);
	assert_int_equal(wap_diff_make("same", 4, "same", 4, "f", NULL, &d, &err), 0);
	assert_string_equal(d.text, "");
	wap_diff_release(&d);
}

static void test_fold(void **state)
{
	size_t n;
	char *f = wap_unicode_fold("\xe2\x80\x9c" "q\xe2\x80\x9d\xe2\x80\x93\xc2\xa0\xe2\x80\xa6", 15, &n);

	(void)state;
	assert_string_equal(f, "\"q\"- ...");
	free(f);
}

static void writef(const char *dir, const char *name, const char *s)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(s, f);
	fclose(f);
}

static char *readf(const char *dir, const char *name)
{
	static char buf[256];
	char p[512];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void test_patch_run_rollback(void **state)
{
	char dir[] = "/tmp/wap-unit-edit.XXXXXX";
	const char *px = "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Add File: b.txt\n+b\n"
			 "*** Delete File: c.txt\n*** End Patch\n";
	struct wap_ws ws;
	struct wap_err err = { 0 };
	struct wap_patch p;
	json_t *files = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	writef(dir, "a.txt", "a\n");
	writef(dir, "c.txt", "c\n");
	assert_int_equal(wap_ws_init(&ws, dir, NULL, &err), 0);
	assert_int_equal(wap_patch_parse(px, strlen(px), NULL, &p, &err), 0);
	/* the third step (the deletion) fails: the first two are undone */
	wap_patch_fail_at = 2;
	assert_int_equal(wap_patch_run(&ws, &p, NULL, false, &files, &err), -1);
	assert_non_null(strstr(err.msg, "files already written were restored"));
	wap_err_release(&err);
	assert_string_equal(readf(dir, "a.txt"), "a\n");
	assert_null(readf(dir, "b.txt"));
	assert_string_equal(readf(dir, "c.txt"), "c\n");
	/* a dry run computes without writing */
	wap_patch_fail_at = -1;
	assert_int_equal(wap_patch_run(&ws, &p, NULL, true, &files, &err), 0);
	assert_int_equal(json_array_size(files), 3);
	json_decref(files);
	assert_string_equal(readf(dir, "a.txt"), "a\n");
	/* then for real */
	assert_int_equal(wap_patch_run(&ws, &p, NULL, false, &files, &err), 0);
	json_decref(files);
	assert_string_equal(readf(dir, "a.txt"), "A\n");
	assert_string_equal(readf(dir, "b.txt"), "b\n");
	assert_null(readf(dir, "c.txt"));
	/* a second run fails on the first file and changes nothing */
	assert_int_equal(wap_patch_run(&ws, &p, NULL, false, &files, &err), -1);
	wap_err_release(&err);
	assert_string_equal(readf(dir, "a.txt"), "A\n");
	wap_patch_release(&p);
	wap_ws_release(&ws);
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
}

static void test_schema(void **state)
{
	const struct wap_applet *a = wap_applet_find("edit");
	json_t *j;

	(void)state;
	assert_non_null(a);
	j = json_loads(a->output_schema, 0, NULL);
	assert_non_null(j);
	assert_non_null(json_object_get(json_object_get(j, "properties"), "files"));
	json_decref(j);
}

/* a deterministic smoke fuzz of the parsers and the engine (run under
 * ASan by `make check ASAN=1`): mutated patches and random edits must
 * fail cleanly, never crash or leak */
static unsigned rnd_state = 12345;
static unsigned rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 16;
}

static void test_fuzz_smoke(void **state)
{
	static const char *const seeds[] = {
		"*** Begin Patch\n*** Update File: f\n*** Move to: g\n@@ ctx\n a\n-b\n+c\n*** End of File\n"
		"*** Add File: n\n+x\n*** Delete File: d\n*** End Patch\n",
		"diff --git a/f b/f\nold mode 100644\nnew mode 100755\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n"
		"\\ No newline at end of file\n d\n@@ @@\n-x\n+y\n",
		"--- \"a/q\\tx\"\n+++ \"b/q\\303\\251\"\n@@ -0,0 +1 @@\n+z\n",
	};
	const char *text = "a\nb\nd\nctx\na\nb\nx\n\xf0\x9f\x98\x80\r\n";
	char buf[512];

	(void)state;
	for (int it = 0; it < 3000; it++) {
		const char *sd = seeds[it % 3];
		size_t n = strlen(sd);
		struct wap_patch p;
		struct wap_err err = { 0 };

		memcpy(buf, sd, n);
		for (int m = rnd() % 6; m >= 0 && n; m--) {
			size_t at = rnd() % n;
			switch (rnd() % 3) {
			case 0: buf[at] = (char)(rnd() & 0xff); break;
			case 1: buf[at] = "\n+- @*\\\r"[rnd() % 9]; break;
			default: n = at; break;
			}
		}
		if (wap_patch_parse(buf, n, "x", &p, &err) == 0) {
			for (size_t i = 0; i < p.n; i++) {
				char *out = NULL;
				size_t ol;
				struct wap_err e2 = { 0 };
				if (p.f[i].kind != WAP_P_ADD &&
				    wap_patch_apply_file(&p.f[i], text, strlen(text), &out, &ol, &e2) == 0)
					free(out);
				wap_err_release(&e2);
			}
			wap_patch_release(&p);
		}
		wap_err_release(&err);
	}
	for (int it = 0; it < 2000; it++) {
		char old[8], nw[8];
		size_t ol = 1 + rnd() % 6, nl = rnd() % 6, tl = strlen(text), outl, cnt;
		char *out = NULL;
		enum wap_strategy st;
		struct wap_err err = { 0 };
		long off;
		for (size_t i = 0; i < ol; i++)
			old[i] = "ab\n \t\\n\xe2"[rnd() % 8];
		for (size_t i = 0; i < nl; i++)
			nw[i] = "xy\n "[rnd() % 4];
		if (wap_edit_replace(text, tl, old, ol, nw, nl, rnd() & 1, false, 0, &out, &outl,
				     &cnt, &st, &err) == 0)
			free(out);
		wap_err_release(&err);
		off = wap_lsp_offset(text, tl, rnd() % 12, rnd() % 6, &err);
		assert_true(off <= (long)tl);
		wap_err_release(&err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_strategies),
		cmocka_unit_test(test_lsp_offset),
		cmocka_unit_test(test_seek),
		cmocka_unit_test(test_apply_modes),
		cmocka_unit_test(test_patch_parse_apply),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_patch_run_rollback),
		cmocka_unit_test(test_schema),
		cmocka_unit_test(test_fuzz_smoke),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
