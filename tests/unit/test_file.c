/* test_file.c - blob ids, whole-file reads, atomic writes and versions. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"

static char dir[PATH_MAX];
static struct wap_ws ws;

static int setup(void **state)
{
	char tmpl[] = "/tmp/wap-unit-file.XXXXXX";
	struct wap_err err = { 0 };

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(dir, sizeof(dir), "%s", tmpl);
	assert_int_equal(wap_ws_init(&ws, dir, NULL, &err), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	wap_ws_release(&ws);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* what `git hash-object --stdin` says of BUF */
static void git_says(const char *buf, size_t len, char out[41])
{
	char path[PATH_MAX + 16], cmd[2 * PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/.hashme", dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "git hash-object --stdin < %s", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(out, 41, f));
	pclose(f);
	unlink(path);
}

static void test_blob_id(void **state)
{
	struct wap_err err = { 0 };
	char id[41], want[41], *big;
	size_t n = 300000;
	int fd;

	(void)state;
	assert_int_equal(wap_blob_id("", 0, id, &err), 0);
	assert_string_equal(id, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
	assert_int_equal(wap_blob_id("hello\n", 6, id, &err), 0);
	assert_string_equal(id, "ce013625030ba8dba906f756967f9e9ca394464a");
	big = malloc(n);
	for (size_t i = 0; i < n; i++)
		big[i] = (char)(i * 7919 % 251);	/* NULs and high bytes too */
	assert_int_equal(wap_blob_id(big, n, id, &err), 0);
	git_says(big, n, want);
	assert_string_equal(id, want);
	/* the streaming hash of an fd agrees */
	fd = openat(ws.rootfd, "blob", O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, big, n), (ssize_t)n);
	assert_int_equal(wap_blob_id_fd(fd, id, &err), 0);
	assert_string_equal(id, want);
	close(fd);
	free(big);
}

static mode_t mode_of(const char *name)
{
	struct stat st;

	assert_int_equal(fstatat(ws.rootfd, name, &st, 0), 0);
	return st.st_mode & 07777;
}

static void test_write_keeps_mode(void **state)
{
	struct wap_wopts o = { .mode = WAP_W_OVERWRITE };
	struct wap_wres r;
	struct wap_err err = { 0 };
	char *buf;
	size_t len;

	(void)state;
	assert_int_equal(wap_write_file(&ws, "m.sh", "one", 3, &o, &r, &err), 0);
	assert_true(r.created);
	assert_int_equal(fchmodat(ws.rootfd, "m.sh", 0751, 0), 0);
	assert_int_equal(wap_write_file(&ws, "m.sh", "two!", 4, &o, &r, &err), 0);
	assert_false(r.created);
	assert_int_equal(r.size, 4);
	assert_int_equal(mode_of("m.sh"), 0751);
	assert_int_equal(wap_read_file(&ws, "m.sh", 0, &buf, &len, NULL, &err), 0);
	assert_int_equal(len, 4);
	assert_memory_equal(buf, "two!", 4);
	free(buf);
	o.newmode = 0600;
	assert_int_equal(wap_write_file(&ws, "new600", "x", 1, &o, &r, &err), 0);
	assert_int_equal(mode_of("new600"), 0600);
	o.mode = WAP_W_APPEND;
	assert_int_equal(wap_write_file(&ws, "m.sh", "+3", 2, &o, &r, &err), 0);
	assert_int_equal(mode_of("m.sh"), 0751);
	assert_int_equal(r.size, 6);
}

static void test_modes_and_versions(void **state)
{
	struct wap_wopts o = { .mode = WAP_W_CREATE };
	struct wap_wres r;
	struct wap_err err = { 0 };
	char v1[41], *buf;
	size_t len;

	(void)state;
	assert_int_equal(wap_write_file(&ws, "v.txt", "v1", 2, &o, &r, &err), 0);
	memcpy(v1, r.version, 41);
	assert_int_equal(wap_write_file(&ws, "v.txt", "v2", 2, &o, &r, &err), -1);
	assert_int_equal(err.kind, WAP_E_EXISTS);
	o.mode = WAP_W_OVERWRITE;
	o.expected_version = v1;
	assert_int_equal(wap_write_file(&ws, "v.txt", "v2", 2, &o, &r, &err), 0);
	assert_int_equal(wap_write_file(&ws, "v.txt", "v3", 2, &o, &r, &err), -1);
	assert_int_equal(err.kind, WAP_E_CONFLICT);
	assert_non_null(err.details);
	wap_err_release(&err);
	assert_int_equal(wap_read_file(&ws, "v.txt", 0, &buf, &len, NULL, &err), 0);
	assert_memory_equal(buf, "v2", 2);	/* nothing written on conflict */
	free(buf);
	o.expected_version = "";
	assert_int_equal(wap_write_file(&ws, "v.txt", "x", 1, &o, &r, &err), -1);
	assert_int_equal(err.kind, WAP_E_CONFLICT);
	o.expected_version = NULL;
	o.mkparents = false;
	assert_int_equal(wap_write_file(&ws, "no/such/dir/f", "x", 1, &o, &r, &err), -1);
	assert_int_equal(err.kind, WAP_E_NOT_FOUND);
	o.mkparents = true;
	assert_int_equal(wap_write_file(&ws, "no/such/dir/f", "x", 1, &o, &r, &err), 0);
	assert_int_equal(wap_read_file(&ws, "v.txt", 1, &buf, &len, NULL, &err), -1);
	assert_int_equal(err.kind, WAP_E_TOO_LARGE);
	assert_int_equal(wap_read_file(&ws, "no", 0, &buf, &len, NULL, &err), -1);
	assert_int_equal(err.kind, WAP_E_NOT_FILE);
}

static int upper(void *arg, const char *old, size_t oldlen, char **out, size_t *outlen,
		 struct wap_err *err)
{
	(void)arg;
	(void)err;
	*out = malloc(oldlen + 1);
	for (size_t i = 0; i < oldlen; i++)
		(*out)[i] = old[i] >= 'a' && old[i] <= 'z' ? old[i] - 32 : old[i];
	*outlen = oldlen;
	return 0;
}

static void test_update(void **state)
{
	struct wap_wopts o = { .mode = WAP_W_OVERWRITE };
	struct wap_wres r;
	struct wap_err err = { 0 };
	char *buf;
	size_t len;

	(void)state;
	assert_int_equal(wap_write_file(&ws, "u.txt", "abc\r\n", 5, &o, &r, &err), 0);
	assert_int_equal(wap_update_file(&ws, "u.txt", false, r.version, upper, NULL, &r, &err), 0);
	assert_int_equal(wap_read_file(&ws, "u.txt", 0, &buf, &len, NULL, &err), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(buf, "ABC\r\n", 5);
	free(buf);
	assert_int_equal(wap_update_file(&ws, "missing", false, NULL, upper, NULL, &r, &err), -1);
	assert_int_equal(err.kind, WAP_E_NOT_FOUND);
}

static void test_no_temp_left(void **state)
{
	char cmd[PATH_MAX + 64];

	(void)state;
	snprintf(cmd, sizeof(cmd), "test -z \"$(find %s -name '.wap-*')\"", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_iso(void **state)
{
	struct timespec ts = { .tv_sec = 1795306239, .tv_nsec = 310123456 };
	char out[32];

	(void)state;
	wap_iso_time(&ts, out);
	assert_string_equal(out, "2026-11-22T00:10:39.310Z");
}

/* a full disk is an I/O failure the caller cannot narrow; a file too big
 * for its limit (RLIMIT_FSIZE) is a size limit */
static void test_errno_kinds(void **state)
{
	struct wap_err err = { 0 };

	(void)state;
	wap_err_errno(&err, ENOSPC, "f.txt");
	assert_int_equal(err.kind, WAP_E_FAILED);
	assert_non_null(strstr(err.msg, "No space left on device"));
	wap_err_errno(&err, EDQUOT, "f.txt");
	assert_int_equal(err.kind, WAP_E_FAILED);
	wap_err_errno(&err, EFBIG, "f.txt");
	assert_int_equal(err.kind, WAP_E_TOO_LARGE);
	wap_err_errno(&err, ENXIO, "sock");
	assert_int_equal(err.kind, WAP_E_NOT_FILE);
}

/* a file with no write bit is not replaced unless forced, even as root */
static void test_read_only(void **state)
{
	struct wap_wopts o = { .mode = WAP_W_OVERWRITE };
	struct wap_err err = { 0 };
	char path[PATH_MAX + 16];

	(void)state;
	assert_int_equal(wap_write_file(&ws, "ro.txt", "keep", 4, &o, NULL, &err), 0);
	snprintf(path, sizeof(path), "%s/ro.txt", dir);
	assert_int_equal(chmod(path, 0444), 0);
	assert_int_equal(wap_write_file(&ws, "ro.txt", "new", 3, &o, NULL, &err), -1);
	assert_int_equal(err.kind, WAP_E_PERMISSION);
	o.force = true;
	assert_int_equal(wap_write_file(&ws, "ro.txt", "new", 3, &o, NULL, &err), 0);
	wap_err_release(&err);
}

/* The process's umask, as /proc says it (a read that does not change it) */
static int umask_seen(void)
{
	char line[128];
	int um = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Umask:", 6))
			um = (int)strtol(line + 6, NULL, 8);
	fclose(f);
	return um;
}

static volatile int umask_stop, umask_zero, umask_looks;

static void *umask_watch(void *arg)
{
	int want = *(int *)arg;

	while (!umask_stop) {
		int um = umask_seen();
		umask_looks++;
		if (um >= 0 && um != want)
			umask_zero++;
	}
	return NULL;
}

/* Writing a new file never changes the process's umask, not for a moment:
 * a server's other threads create files and directories meanwhile (every
 * mkdir -p is 0777 & ~umask), and a umask(0) there made them 0777, writable
 * by every user (tenth hostile review) */
static void test_umask_untouched(void **state)
{
	struct wap_wopts o = { .mode = WAP_W_CREATE };
	struct wap_wres r;
	struct wap_err err = { 0 };
	pthread_t th;
	mode_t old = umask(022);
	int want = 022;
	char name[64];

	(void)state;
	if (umask_seen() < 0) {
		umask(old);
		skip();
	}
	umask_stop = umask_zero = umask_looks = 0;
	assert_int_equal(pthread_create(&th, NULL, umask_watch, &want), 0);
	for (int i = 0; i < 3000 && !umask_zero; i++) {
		snprintf(name, sizeof(name), "um/%d", i);
		o.mkparents = true;
		assert_int_equal(wap_write_file(&ws, name, "x", 1, &o, &r, &err), 0);
	}
	umask_stop = 1;
	pthread_join(th, NULL);
	umask(old);
	assert_true(umask_looks > 0);
	assert_int_equal(umask_zero, 0);
	assert_int_equal(mode_of("um/0"), 0644);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blob_id),
		cmocka_unit_test(test_write_keeps_mode),
		cmocka_unit_test(test_modes_and_versions),
		cmocka_unit_test(test_update),
		cmocka_unit_test(test_no_temp_left),
		cmocka_unit_test(test_iso),
		cmocka_unit_test(test_errno_kinds),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_umask_untouched),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
