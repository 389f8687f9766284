/* test_archive.c - read lists and reads 7z and zip members, and grep -z
 * searches them (archives written here with libarchive, as no 7z tool may
 * be installed). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <archive.h>
#include <archive_entry.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "applet.h"
#include "archives.h"

static char dir[PATH_MAX];

static void make(const char *name, int (*format)(struct archive *))
{
	static const struct { const char *path, *data; } files[] = {
		{ "src/a.c", "int a;\nint b;\nint c;\n" }, { "README", "read me\n" },
	};
	char path[PATH_MAX + 32];
	struct archive *a = archive_write_new();

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(format(a), ARCHIVE_OK);
	assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
	for (size_t i = 0; i < 2; i++) {
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, files[i].path);
		archive_entry_set_size(e, strlen(files[i].data));
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
		assert_int_equal(archive_write_data(a, files[i].data, strlen(files[i].data)),
				 (la_ssize_t)strlen(files[i].data));
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
}

static json_t *run(struct wap_ws *ws, const char *json)
{
	struct wap_call call = { .ws = ws };
	struct wap_err err = { 0 };
	json_t *req = json_loads(json, 0, NULL), *res = NULL;

	assert_non_null(req);
	if (wap_applet_find("read")->op(&call, req, &res, &err))
		fail_msg("read %s: %s", json, err.msg);
	json_decref(req);
	return res;
}

/* grep -z finds "int b" as line 2 of NAME//src/a.c, and nothing without -z */
static void grep_member(struct wap_ws *ws, const char *name)
{
	struct wap_call call = { .ws = ws };
	struct wap_err err = { 0 };
	char req[256], want[64];
	json_t *r, *res = NULL, *m;

	snprintf(req, sizeof(req), "{\"pattern\": \"int b\", \"paths\": [\"%s\"], "
		 "\"search_archives\": true}", name);
	r = json_loads(req, 0, NULL);
	assert_non_null(r);
	if (wap_applet_find("grep")->op(&call, r, &res, &err))
		fail_msg("grep %s: %s", req, err.msg);
	json_decref(r);
	assert_int_equal(json_integer_value(json_object_get(res, "totalMatches")), 1);
	m = json_array_get(json_object_get(res, "matches"), 0);
	snprintf(want, sizeof(want), "%s//src/a.c", name);
	assert_string_equal(json_string_value(json_object_get(m, "path")), want);
	assert_int_equal(json_integer_value(json_object_get(m, "line")), 2);
	json_decref(res);

	/* without -z the archive is a binary file, skipped */
	snprintf(req, sizeof(req), "{\"pattern\": \"int b\", \"paths\": [\"%s\"]}", name);
	r = json_loads(req, 0, NULL);
	res = NULL;
	if (wap_applet_find("grep")->op(&call, r, &res, &err))
		fail_msg("grep %s: %s", req, err.msg);
	json_decref(r);
	assert_int_equal(json_integer_value(json_object_get(res, "totalMatches")), 0);
	json_decref(res);
}

static void check(const char *name, int (*format)(struct archive *))
{
	struct wap_ws ws;
	struct wap_err err = { 0 };
	char req[256];
	json_t *res;

	make(name, format);
	assert_int_equal(wap_ws_init(&ws, dir, NULL, &err), 0);
	snprintf(req, sizeof(req), "{\"path\": \"%s\"}", name);
	res = run(&ws, req);
	assert_true(json_is_true(json_object_get(res, "archive")));
	assert_int_equal(json_array_size(json_object_get(res, "entries")), 2);
	assert_non_null(strstr(json_string_value(json_object_get(res, "content")), "src/a.c  (21 bytes)"));
	json_decref(res);
	snprintf(req, sizeof(req), "{\"path\": \"%s\", \"member\": \"src/a.c\", \"offset\": 2, \"limit\": 1}", name);
	res = run(&ws, req);
	assert_string_equal(json_string_value(json_object_get(res, "content")), "int b;\n");
	assert_int_equal(json_integer_value(json_object_get(res, "totalLines")), 3);
	json_decref(res);
	snprintf(req, sizeof(req), "{\"path\": \"%s\", \"member\": \"src/a.c\", \"tail\": 1}", name);
	res = run(&ws, req);
	assert_string_equal(json_string_value(json_object_get(res, "content")), "int c;\n");
	assert_int_equal(json_integer_value(json_object_get(res, "startLine")), 3);
	json_decref(res);
	grep_member(&ws, name);
	wap_ws_release(&ws);
}

static void test_7z(void **state)
{
	(void)state;
	check("x.7z", archive_write_set_format_7zip);
}

static void test_zip(void **state)
{
	(void)state;
	check("x.zip", archive_write_set_format_zip);
}

static int setup(void **state)
{
	char tmpl[] = "/tmp/wap-unit-ar.XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(dir, sizeof(dir), "%s", tmpl);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* the names read and grep -z share (lib/fs/archives.c) */
static void test_names(void **state)
{
	const char *m, *k;
	size_t n;

	(void)state;
	n = wap_archive_name("./src/a.c", &k);
	assert_int_equal(n, 7);
	assert_memory_equal(k, "src/a.c", 7);
	n = wap_archive_name("/abs/dir/", &k);
	assert_int_equal(n, 7);
	assert_memory_equal(k, "abs/dir", 7);
	assert_true(wap_archive_split("d/x.tar.gz//src/a.c", &n, &m));
	assert_int_equal(n, 10);
	assert_string_equal(m, "src/a.c");
	assert_true(wap_archive_split("x.zip//a//b", &n, &m));	/* the first // */
	assert_int_equal(n, 5);
	assert_string_equal(m, "a//b");
	assert_false(wap_archive_split("//x", &n, &m));		/* no archive before it */
	assert_false(wap_archive_split("x.zip//", &n, &m));	/* no member after it */
	assert_false(wap_archive_split("a/b", &n, &m));
	assert_true(wap_archive_sniff("\x1f\x8b\x08", 3));
	assert_false(wap_archive_sniff("int a;\n", 7));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_7z),
		cmocka_unit_test(test_zip),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
