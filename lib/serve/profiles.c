/* serve/profiles.c - the profile tables (wap, wap-1.0, langop, opencode, acp) and
 * running a profile tool: map its arguments, run the applet's op, reshape
 * the result.  The tables are data; the few functions here are the
 * conversions the tables name. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "profiles.h"
#include "strbuf.h"
#include "text.h"

/* ---- argument conversions named by the tables ---- */

/* a string becomes a one-element array (opencode grep path -> paths[]) */
static int conv_array(const struct wap_argmap *m, const json_t *v, const json_t *args,
		      json_t *req, struct wap_err *err)
{
	(void)args; (void)err;
	if (json_is_array(v))
		return json_object_set(req, m->to, (json_t *)v);
	return json_object_set_new(req, m->to, json_pack("[O]", v));
}

/* endLine (with startLine, default 1) becomes a line count */
static int conv_endline(const struct wap_argmap *m, const json_t *v, const json_t *args,
			json_t *req, struct wap_err *err)
{
	json_t *s = json_object_get(args, "startLine");
	long long start = json_is_integer(s) ? json_integer_value(s) : 1;
	long long end = json_integer_value(v);

	if (!json_is_integer(v))
		return wap_err_set(err, WAP_E_INVALID, "argument 'endLine' must be an integer");
	if (end < start)
		return wap_err_set(err, WAP_E_INVALID, "endLine %lld is before startLine %lld", end, start);
	return json_object_set_new(req, m->to, json_integer(end - start + 1));
}

/* searchFiles type: "literal" -> fixed_strings */
static int conv_literal(const struct wap_argmap *m, const json_t *v, const json_t *args,
			json_t *req, struct wap_err *err)
{
	const char *t = json_string_value(v);

	(void)args;
	if (!t || (strcmp(t, "literal") && strcmp(t, "regex")))
		return wap_err_set(err, WAP_E_INVALID, "argument 'type' must be \"regex\" or \"literal\"");
	if (!strcmp(t, "literal"))
		return json_object_set_new(req, m->to, json_true());
	return 0;
}

/* searchFiles recursive:false searches only the files directly named */
static int conv_recursive(const struct wap_argmap *m, const json_t *v, const json_t *args,
			  json_t *req, struct wap_err *err)
{
	(void)args; (void)err;
	if (json_is_false(v))
		return json_object_set_new(req, m->to, json_integer(1));
	return 0;
}

/* writeFile createDirectories:false: a missing parent is an error */
static int conv_noparents(const struct wap_argmap *m, const json_t *v, const json_t *args,
			  json_t *req, struct wap_err *err)
{
	(void)args; (void)err;
	if (json_is_false(v))
		return json_object_set_new(req, m->to, json_true());
	return 0;
}

/* workspace-tool-interface git: checkout "creates and checks out the new
 * branch" (and switches to it when it exists) */
static int conv_git_action(const struct wap_argmap *m, const json_t *v, const json_t *args,
			   json_t *req, struct wap_err *err)
{
	(void)args; (void)err;
	if (json_is_string(v) && !strcmp(json_string_value(v), "checkout"))
		json_object_set_new(req, "create", json_true());
	return json_object_set(req, m->to, (json_t *)v);
}

/* ---- result reshaping ---- */

static json_t *res_success(json_t *res, const json_t *req, struct wap_err *err)
{
	(void)err;
	(void)req;
	json_object_set_new(res, "success", json_true());
	return res;
}

static json_t *res_wap_exec(json_t *res, const json_t *req, struct wap_err *err)
{
	json_t *o;

	(void)req;
	/* WAP 1.0 has the TIMEOUT error for an operation that timed out */
	if (json_is_true(json_object_get(res, "timed_out"))) {
		wap_err_set(err, WAP_E_TIMEOUT, "Command timed out after %lld ms",
			    (long long)json_integer_value(json_object_get(res, "timeout_ms")));
		wap_err_details(err, json_pack("{s:O?, s:O?, s:O?}",
			"stdout", json_object_get(res, "stdout"), "stderr", json_object_get(res, "stderr"),
			"timeout", json_object_get(res, "timeout_ms")));
		json_decref(res);
		return NULL;
	}
	o = json_object();
	json_object_set_new(o, "stdout", json_string(json_string_value(json_object_get(res, "stdout")) ?
			    json_string_value(json_object_get(res, "stdout")) : ""));
	json_object_set_new(o, "stderr", json_string(json_string_value(json_object_get(res, "stderr")) ?
			    json_string_value(json_object_get(res, "stderr")) : ""));
	json_object_set_new(o, "exitCode", json_integer(json_integer_value(json_object_get(res, "exit_code"))));
	json_object_set_new(o, "isOutputTruncated",
			    json_boolean(json_is_true(json_object_get(res, "stdout_truncated")) ||
					 json_is_true(json_object_get(res, "stderr_truncated"))));
	json_object_set_new(o, "durationMs", json_integer(json_number_value(json_object_get(res, "duration_ms"))));
	if (json_is_string(json_object_get(res, "signal")))
		json_object_set(o, "signal", json_object_get(res, "signal"));
	json_decref(res);
	return o;
}

static json_t *res_acp_read(json_t *res, const json_t *req, struct wap_err *err)
{
	json_t *o;

	(void)req;
	if (json_object_get(res, "entries") || json_is_true(json_object_get(res, "binary"))) {
		wap_err_set(err, json_object_get(res, "entries") ? WAP_E_NOT_FILE : WAP_E_INVALID,
			    json_object_get(res, "entries") ? "Is a directory, not a text file: %s"
							    : "Binary file, not text: %s",
			    json_string_value(json_object_get(req, "path")));
		json_decref(res);
		return NULL;
	}
	o = json_pack("{s:s}", "content", json_string_value(json_object_get(res, "content")) ?
		      json_string_value(json_object_get(res, "content")) : "");
	json_decref(res);
	return o;
}

/* workspace-tool-interface bash: "returns an error response indicating
 * timeout with any partial stdout/stderr captured" */
static json_t *res_wti_bash(json_t *res, const json_t *req, struct wap_err *err)
{
	(void)req;
	if (json_is_true(json_object_get(res, "timed_out"))) {
		wap_err_set(err, WAP_E_TIMEOUT, "Command timed out after %lld ms",
			    (long long)json_integer_value(json_object_get(res, "timeout_ms")));
		wap_err_details(err, json_pack("{s:O?, s:O?, s:O?, s:O?}",
			"stdout", json_object_get(res, "stdout"), "stderr", json_object_get(res, "stderr"),
			"timeout_ms", json_object_get(res, "timeout_ms"),
			"duration_ms", json_object_get(res, "duration_ms")));
		json_decref(res);
		return NULL;
	}
	return res;
}

/* workspace-tool-interface read: "the file content with line numbers
 * prefixed (1: # README)": the content is the numbered text */
static json_t *res_wti_read(json_t *res, const json_t *req, struct wap_err *err)
{
	const char *p = json_string_value(json_object_get(res, "content"));
	size_t len = json_string_length(json_object_get(res, "content"));
	long long line = json_integer_value(json_object_get(res, "startLine"));
	struct wap_sb sb = WAP_SB_INIT;
	const char *end = p ? p + len : NULL;

	(void)req;
	if (!p || json_object_get(res, "entries") || json_is_true(json_object_get(res, "binary")))
		return res;	/* a listing, or a binary file's metadata */
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *e = nl ? nl + 1 : end;
		wap_sb_addf(&sb, "%lld: ", line++);
		wap_sb_add(&sb, p, e - p);
		p = e;
	}
	if (sb.oom) {
		wap_sb_release(&sb);
		json_decref(res);
		wap_err_oom(err);
		return NULL;
	}
	json_object_set_new(res, "content", json_stringn(sb.buf ? sb.buf : "", sb.len));
	wap_sb_release(&sb);
	return res;
}

/* ACP's replies are objects: an empty one where there is nothing to say */
static json_t *res_empty(json_t *res, const json_t *req, struct wap_err *err)
{
	(void)err;
	(void)req;
	json_decref(res);
	return json_object();
}

/* ACP: "All file paths in the protocol MUST be absolute"; a relative one is
 * refused rather than guessed at (an absolute one is still confined to the
 * root by the op). */
static int conv_abs(const struct wap_argmap *m, const json_t *v, const json_t *args,
		    json_t *req, struct wap_err *err)
{
	const char *p = json_string_value(v);

	(void)args;
	if (!p || p[0] != '/')
		return wap_err_set(err, WAP_E_INVALID, "path must be absolute (ACP): %s", p ? p : "");
	return json_object_set(req, m->to, (json_t *)v);
}

/* ---- langop: the Language Operator workspace tool's texts ---- */

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static const char *arg_str(const json_t *args, const char *k)
{
	return json_string_value(json_object_get(args, k));
}

/* the errors every langop tool shares */
static char *langop_common_err(struct wap_run *run, const struct wap_err *e)
{
	if (e->kind == WAP_E_ACCESS || e->kind == WAP_E_RESTRICTED)
		return fmt("Error: Access denied. Path must be within %s", run->call->ws->root);
	return NULL;
}

static int langop_read_file(struct wap_run *run, const json_t *args, char **text)
{
	const char *path = arg_str(args, "path");
	/* "read complete file contents": no line window, no line cut */
	json_t *req = json_pack("{s:s, s:b}", "path", path, "whole", 1), *res = NULL;
	struct wap_err e = { 0 };
	int rc = 1;

	if (json_object_get(args, "head"))
		json_object_set(req, "head", json_object_get(args, "head"));
	if (json_object_get(args, "tail"))
		json_object_set(req, "tail", json_object_get(args, "tail"));
	if (wap_run_op(run, "read", req, &res, &e)) {
		if ((*text = langop_common_err(run, &e)))
			;
		else if (e.kind == WAP_E_NOT_FOUND)
			*text = fmt("Error: File not found: %s", path);
		else if (e.kind == WAP_E_NOT_FILE || e.kind == WAP_E_NOT_DIR)
			*text = fmt("Error: Not a file: %s", path);
		else if (e.kind == WAP_E_PERMISSION)
			*text = fmt("Error: File not readable: %s", path);
		else if (strstr(e.msg, "UTF-8"))
			*text = fmt("Error: File contains invalid UTF-8 encoding");
		else
			*text = fmt("Error: %s", e.msg);
	} else if (json_is_true(json_object_get(res, "binary")) ||
		   json_is_true(json_object_get(res, "invalidUtf8"))) {
		*text = fmt("Error: File contains invalid UTF-8 encoding");
	} else if (json_object_get(res, "entries") || !json_is_string(json_object_get(res, "content"))) {
		*text = fmt("Error: Not a file: %s", path);
	} else {
		*text = strdup(json_string_value(json_object_get(res, "content")));
		rc = 0;
	}
	wap_err_release(&e);
	json_decref(req);
	json_decref(res);
	return rc;
}

static int langop_write_file(struct wap_run *run, const json_t *args, char **text)
{
	const char *path = arg_str(args, "path");
	json_t *req = json_pack("{s:s, s:O, s:s}", "path", path, "content",
				json_object_get(args, "content"), "mode", "overwrite");
	json_t *res = NULL;
	struct wap_err e = { 0 };
	int rc = 1;

	if (wap_run_op(run, "write", req, &res, &e) && e.kind == WAP_E_NOT_FOUND) {
		/* create the parent directories, then write again */
		const char *slash = strrchr(path, '/');
		char *parent = slash && slash != path ? strndup(path, slash - path) : NULL;
		json_t *mreq = json_pack("{s:s}", "path", parent ? parent : "."), *mres = NULL;

		wap_err_release(&e);
		if (parent && wap_run_op(run, "mkdir", mreq, &mres, &e)) {
			if (!(*text = langop_common_err(run, &e)))
				*text = fmt("Error: Failed to create parent directory - %s", e.msg);
			free(parent);
			json_decref(mreq);
			goto out;
		}
		free(parent);
		json_decref(mreq);
		json_decref(mres);
		wap_run_op(run, "write", req, &res, &e);
	}
	if (e.kind != WAP_OK) {
		if (!(*text = langop_common_err(run, &e)))
			*text = fmt("Error: Failed to write file - %s", e.msg);
		goto out;
	}
	*text = fmt("Successfully wrote %lld bytes to %s",
		    (long long)json_integer_value(json_object_get(res, "bytesWritten")), path);
	rc = 0;
out:
	wap_err_release(&e);
	json_decref(req);
	json_decref(res);
	return rc;
}

static int cmp_entries(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	int dx = json_is_true(json_object_get(x, "isDirectory"));
	int dy = json_is_true(json_object_get(y, "isDirectory"));

	if (dx != dy)
		return dy - dx;
	return strcmp(json_string_value(json_object_get(x, "path")),
		      json_string_value(json_object_get(y, "path")));
}

static json_t **sorted_files(const json_t *files, size_t *n)
{
	json_t **v, *f;
	size_t i, k = 0;

	*n = json_array_size(files);
	v = calloc(*n + 1, sizeof(*v));
	json_array_foreach(files, i, f)
		if (json_is_string(json_object_get(f, "path")))
			v[k++] = f;
	*n = k;
	qsort(v, k, sizeof(*v), cmp_entries);
	return v;
}

static int langop_list_directory(struct wap_run *run, const json_t *args, char **text)
{
	const char *path = arg_str(args, "path");
	json_t *req = json_pack("{s:s}", "path", path), *res = NULL, **files;
	struct wap_err e = { 0 };
	struct wap_sb sb = WAP_SB_INIT, q = WAP_SB_INIT;
	size_t n;
	int rc = 1;

	if (wap_run_op(run, "ls", req, &res, &e)) {
		if ((*text = langop_common_err(run, &e)))
			;
		else if (e.kind == WAP_E_NOT_FOUND)
			*text = fmt("Error: Directory not found: %s", path);
		else if (e.kind == WAP_E_NOT_DIR || e.kind == WAP_E_NOT_FILE)
			*text = fmt("Error: Not a directory: %s", path);
		else
			*text = fmt("Error: %s", e.msg);
		goto out;
	}
	files = sorted_files(json_object_get(res, "files"), &n);
	rc = 0;
	if (!n) {
		*text = fmt("Directory is empty: %s", path);
		free(files);
		goto out;
	}
	wap_sb_addf(&sb, "Contents of %s:\n", path);
	for (size_t i = 0; i < n; i++) {
		const char *p = json_string_value(json_object_get(files[i], "path"));
		const char *base = strrchr(p, '/');
		wap_sb_addf(&sb, "%s%s %s", i ? "\n" : "",
			    json_is_true(json_object_get(files[i], "isDirectory")) ? "[DIR]" : "[FILE]",
			    wap_name_show(&q, base ? base + 1 : p));
	}
	wap_sb_release(&q);
	/* never a silent cut: the entries past limits.maxDirectoryEntries */
	if (json_is_true(json_object_get(res, "isTruncated")))
		wap_sb_addf(&sb, "\n\n(%zu of %lld entries shown: limits.maxDirectoryEntries)", n,
			    (long long)json_integer_value(json_object_get(res, "totalFound")));
	free(files);
	*text = wap_sb_detach(&sb);
out:
	wap_err_release(&e);
	json_decref(req);
	json_decref(res);
	return rc;
}

/* stat REL beneath the root without following a last symlink out */
/* PATH through the stat op (links followed, inside the root, as the
 * document's File.stat does): the same road, gate and audit as any call */
static int stat_path(struct wap_run *run, const char *path, json_t **res, struct wap_err *e)
{
	json_t *req = json_pack("{s:s, s:b}", "path", path, "follow", 1);
	int rc;

	*res = NULL;
	if (!req)
		return wap_err_oom(e);
	rc = wap_run_op(run, "stat", req, res, e);
	json_decref(req);
	return rc;
}

static bool is_dir(const json_t *st)
{
	return json_is_true(json_object_get(st, "isDirectory"));
}

static int langop_create_directory(struct wap_run *run, const json_t *args, char **text)
{
	const char *path = arg_str(args, "path");
	json_t *req = json_pack("{s:s}", "path", path), *res = NULL, *st = NULL;
	struct wap_err e = { 0 };
	int rc = 1;

	if (!stat_path(run, path, &st, &e)) {
		if (!is_dir(st)) {
			*text = fmt("Error: Path exists but is not a directory: %s", path);
			goto out;
		}
		*text = fmt("Successfully created directory: %s", path);
		rc = 0;
		goto out;
	}
	if ((*text = langop_common_err(run, &e)))
		goto out;
	wap_err_release(&e);
	if (wap_run_op(run, "mkdir", req, &res, &e)) {
		if (!(*text = langop_common_err(run, &e)))
			*text = fmt("Error: Failed to create directory - %s", e.msg);
		goto out;
	}
	*text = fmt("Successfully created directory: %s", path);
	rc = 0;
out:
	wap_err_release(&e);
	json_decref(req);
	json_decref(res);
	json_decref(st);
	return rc;
}

/* Ruby's Float#round(2).to_s: "1.23", "1.5", "2.0" */
static void ruby_round2(double x, char *out, size_t n)
{
	size_t l;

	snprintf(out, n, "%.2f", (double)(long long)(x * 100 + 0.5) / 100);
	l = strlen(out);
	while (l > 0 && out[l - 1] == '0' && out[l - 2] != '.')
		out[--l] = 0;
}

static void human_size(long long b, char *out, size_t n)
{
	char num[48];

	if (b < 1024) {
		snprintf(out, n, "%lld B", b);
		return;
	}
	if (b < 1024LL * 1024) {
		ruby_round2(b / 1024.0, num, sizeof(num));
		snprintf(out, n, "%s KB", num);
	} else if (b < 1024LL * 1024 * 1024) {
		ruby_round2(b / (1024.0 * 1024), num, sizeof(num));
		snprintf(out, n, "%s MB", num);
	} else {
		ruby_round2(b / (1024.0 * 1024 * 1024), num, sizeof(num));
		snprintf(out, n, "%s GB", num);
	}
}

static void utc_time(time_t t, char *out, size_t n)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, n, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* seconds from a stat result's ms field KEY, or its ISO 8601 field */
static time_t stat_time(const json_t *st, const char *key)
{
	const json_t *v = json_object_get(st, key);
	const char *iso = json_string_value(v);
	struct tm tm = { 0 };

	if (json_is_integer(v))
		return (time_t)(json_integer_value(v) / 1000);
	if (iso && strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm))
		return timegm(&tm);
	return 0;
}

static int langop_get_file_info(struct wap_run *run, const json_t *args, char **text)
{
	const char *path = arg_str(args, "path"), *perm;
	struct wap_err e = { 0 };
	struct wap_sb sb = WAP_SB_INIT;
	json_t *st = NULL;
	char c[40], m[40], a[40], size[64];
	int rc = 1;

	if (stat_path(run, path, &st, &e)) {
		if ((*text = langop_common_err(run, &e)))
			;
		else if (e.kind == WAP_E_NOT_FOUND)
			*text = fmt("Error: Path not found: %s", path);
		else
			*text = fmt("Error: Failed to get file info - %s", e.msg);
		goto out;
	}
	utc_time(stat_time(st, "ctime"), c, sizeof(c));
	utc_time(stat_time(st, "mtime"), m, sizeof(m));
	utc_time(stat_time(st, "accessed"), a, sizeof(a));
	perm = json_string_value(json_object_get(st, "permissions"));
	wap_sb_addf(&sb, "Path: %s\nType: %s\n", path, is_dir(st) ? "directory" : "file");
	if (!is_dir(st)) {
		human_size((long long)json_integer_value(json_object_get(st, "size")), size, sizeof(size));
		wap_sb_addf(&sb, "Size: %s\n", size);
	}
	wap_sb_addf(&sb, "Permissions: %lo\nOwner UID: %lld\nOwner GID: %lld\n"
		    "Created: %s\nModified: %s\nAccessed: %s",
		    perm ? strtoul(perm, NULL, 8) & 0777 : 0ul,
		    (long long)json_integer_value(json_object_get(st, "uid")),
		    (long long)json_integer_value(json_object_get(st, "gid")), c, m, a);
	if (is_dir(st))
		wap_sb_addf(&sb, "\nEntries: %lld", (long long)json_integer_value(json_object_get(st, "entries")));
	if (sb.oom) {
		wap_sb_release(&sb);
		goto out;
	}
	*text = wap_sb_detach(&sb);
	rc = 0;
out:
	json_decref(st);
	wap_err_release(&e);
	return rc;
}

static int langop_search_files(struct wap_run *run, const json_t *args, char **text)
{
	const char *path = arg_str(args, "path"), *pattern = arg_str(args, "pattern");
	json_t *req = json_pack("{s:s, s:s}", "pattern", pattern, "path", path), *res = NULL, *f;
	json_t *files;
	struct wap_err e = { 0 };
	struct wap_sb sb = WAP_SB_INIT, q = WAP_SB_INIT;
	json_t *st = NULL;
	size_t i, n;
	int rc = 1;

	/* the document excludes nothing and lists in path order */
	json_object_set_new(req, "max_results", json_integer(100));
	json_object_set_new(req, "no_default_excludes", json_true());
	json_object_set_new(req, "no_ignore", json_true());
	json_object_set_new(req, "sort", json_string("path"));
	if (json_object_get(args, "max_results"))
		json_object_set(req, "max_results", json_object_get(args, "max_results"));
	/* the directory must exist and be one: the tool's own messages */
	if (stat_path(run, path, &st, &e) || !is_dir(st)) {
		if (e.kind == WAP_OK)
			*text = fmt("Error: Not a directory: %s", path);
		else if ((*text = langop_common_err(run, &e)))
			;
		else if (e.kind == WAP_E_NOT_FOUND)
			*text = fmt("Error: Directory not found: %s", path);
		else if (e.kind == WAP_E_NOT_DIR)
			*text = fmt("Error: Not a directory: %s", path);
		else
			*text = fmt("Error: Search failed - %s", e.msg);
		goto out;
	}
	if (wap_run_op(run, "glob", req, &res, &e)) {
		if (!(*text = langop_common_err(run, &e)))
			*text = fmt("Error: Search failed - %s", e.msg);
		goto out;
	}
	rc = 0;
	files = json_object_get(res, "files");
	n = json_array_size(files);
	if (!n) {
		*text = fmt("No matches found for pattern '%s' in %s", pattern, path);
		goto out;
	}
	wap_sb_addf(&sb, "Found %zu match(es) for '%s':\n", n, pattern);
	json_array_foreach(files, i, f)
		wap_sb_addf(&sb, "%s%s %s", i ? "\n" : "",
			    json_is_true(json_object_get(f, "isDirectory")) ? "[DIR]" : "[FILE]",
			    wap_name_show(&q, json_string_value(json_object_get(f, "path"))));
	wap_sb_release(&q);
	if (json_is_true(json_object_get(res, "isTruncated")))
		wap_sb_addf(&sb, "\n\n(the first %zu shown: raise max_results for more)", n);
	*text = wap_sb_detach(&sb);
out:
	json_decref(st);
	wap_err_release(&e);
	json_decref(req);
	json_decref(res);
	return rc;
}

/* ---- the tables ---- */

#define S_PATHD(what) "\"path\":{\"type\":\"string\",\"description\":\"" what " path relative to the workspace root (or an absolute path within it)\"}"
#define S_PATH S_PATHD("File")

static const struct wap_ptool langop_tools[] = {
	{ "read_file", "read", "Read file", "Read complete file contents from workspace.",
	  "{\"type\":\"object\",\"properties\":{" S_PATH ","
	  "\"head\":{\"type\":\"integer\",\"description\":\"Read only first N lines\"},"
	  "\"tail\":{\"type\":\"integer\",\"description\":\"Read only last N lines\"}},"
	  "\"required\":[\"path\"],\"additionalProperties\":false}",
	  "", NULL, NULL, NULL, langop_read_file, 0 },
	{ "write_file", "write", "Write file",
	  "Create new file or completely overwrite existing file in workspace. This tool replaces the "
	  "entire file contents. To append to an existing file, you must first read the file, combine "
	  "the contents, then write back the combined content. Creates parent directories automatically.",
	  "{\"type\":\"object\",\"properties\":{" S_PATH ","
	  "\"content\":{\"type\":\"string\",\"description\":\"Complete file contents to write (replaces any existing content)\"}},"
	  "\"required\":[\"path\",\"content\"],\"additionalProperties\":false}",
	  "", NULL, NULL, NULL, langop_write_file, WAP_APPLET_DESTRUCTIVE },
	{ "list_directory", "ls", "List directory",
	  "List directory contents with file/directory indicators.",
	  "{\"type\":\"object\",\"properties\":{" S_PATHD("Directory") "},"
	  "\"required\":[\"path\"],\"additionalProperties\":false}",
	  "", NULL, NULL, NULL, langop_list_directory, WAP_APPLET_READONLY | WAP_APPLET_IDEMPOTENT },
	{ "create_directory", "mkdir", "Create directory",
	  "Create new directory in workspace (creates parent directories as needed).",
	  "{\"type\":\"object\",\"properties\":{" S_PATHD("Directory") "},"
	  "\"required\":[\"path\"],\"additionalProperties\":false}",
	  "", NULL, NULL, NULL, langop_create_directory, WAP_APPLET_IDEMPOTENT },
	{ "get_file_info", "info", "Get file info",
	  "Get detailed file or directory metadata.",
	  "{\"type\":\"object\",\"properties\":{" S_PATHD("File or directory") "},"
	  "\"required\":[\"path\"],\"additionalProperties\":false}",
	  "", NULL, NULL, NULL, langop_get_file_info, WAP_APPLET_READONLY | WAP_APPLET_IDEMPOTENT },
	{ "search_files", "glob", "Search files",
	  "Recursively search for files and directories matching a glob pattern.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"path\":{\"type\":\"string\",\"description\":\"Starting directory path relative to the workspace root\"},"
	  "\"pattern\":{\"type\":\"string\",\"description\":\"Glob pattern to match (e.g., '*.rb', '**/*.txt')\"},"
	  "\"max_results\":{\"type\":\"integer\",\"description\":\"Maximum number of results to return (default: 100)\"}},"
	  "\"required\":[\"path\",\"pattern\"],\"additionalProperties\":false}",
	  "", NULL, NULL, NULL, langop_search_files, WAP_APPLET_READONLY | WAP_APPLET_IDEMPOTENT },
	{ NULL }
};

/* WAP 1.0 (`serve --profile wap-1.0`): the tool names and argument
 * spellings of that version of the WAP tool set, for clients written to it */
static const struct wap_argmap w10_explore[] = {
	{ "path", "path", NULL }, { "recursive", "recursive", NULL },
	{ "excludePatterns", "exclude", NULL }, { "maxDepth", "max_depth", NULL },
	{ "returnMetadata", "metadata", NULL }, { NULL }
};
static const struct wap_argmap w10_read[] = {
	{ "path", "path", NULL }, { "startLine", "offset", NULL },
	{ "endLine", "limit", conv_endline }, { NULL }
};
static const struct wap_argmap w10_write[] = {
	{ "path", "path", NULL }, { "content", "content", NULL }, { "mode", "mode", NULL },
	{ "createDirectories", "no_parents", conv_noparents }, { NULL }
};
static const struct wap_argmap w10_modify[] = {
	{ "path", "path", NULL }, { "operations", "ops", NULL }, { NULL }
};
static const struct wap_argmap w10_search[] = {
	{ "paths", "paths", NULL }, { "query", "pattern", NULL },
	{ "type", "fixed_strings", conv_literal }, { "recursive", "max_depth", conv_recursive },
	{ "excludePatterns", "exclude", NULL }, { "contextLines", "context", NULL }, { NULL }
};
static const struct wap_argmap w10_exec[] = {
	{ "command", "command", NULL }, { "workingDirectory", "cwd", NULL },
	{ "timeout", "timeout_ms", NULL }, { "environment", "env", NULL }, { NULL }
};
static const struct wap_argmap w10_info[] = { { NULL } };

#define META_SCHEMA "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"number\"}," \
	"\"isDirectory\":{\"type\":\"boolean\"},\"lastModified\":{\"type\":\"string\"}}}"
/* a double quote, so that key names stand out in the JSON texts below */
#define Q "\""
#define STRS "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}"

static const struct wap_ptool w10_tools[] = {
	{ "exploreFiles", "ls", "Explore files",
	  "Lists files and directories in a specified path, optionally recursively. Default exclusions "
	  "(node_modules, .git, dist, build, ...) apply to recursive listings; results are capped and "
	  "isTruncated says so.",
	  "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\",\"description\":\"Starting directory path\"},"
	  "\"recursive\":{\"type\":\"boolean\",\"description\":\"Whether to explore recursively\"},"
	  "\"excludePatterns\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"Glob patterns to exclude\"},\"maxDepth\":{\"type\":\"integer\",\"description\":\"Maximum recursion depth (default: 3)\"},"
	  "\"returnMetadata\":{\"type\":\"boolean\",\"description\":\"Whether to include file metadata\"}},"
	  "\"required\":[\"path\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"files\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	  "\"properties\":{\"path\":{\"type\":\"string\"},\"isDirectory\":{\"type\":\"boolean\"},\"metadata\":" META_SCHEMA "},"
	  "\"required\":[\"path\",\"isDirectory\"]}},\"isTruncated\":{\"type\":\"boolean\"},\"totalFound\":{\"type\":\"number\"}},"
	  "\"required\":[\"files\",\"isTruncated\",\"totalFound\"]}",
	  w10_explore, NULL, NULL, NULL, 0 },
	{ "readFile", "read", "Read file",
	  "Reads the content of a file, with options to read specific line ranges (1-indexed, inclusive). "
	  "Files over the size limit must be read in ranges.",
	  "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\",\"description\":\"Path to file\"},"
	  "\"startLine\":{\"type\":\"integer\",\"description\":\"Optional start line (1-indexed)\"},"
	  "\"endLine\":{\"type\":\"integer\",\"description\":\"Optional end line (1-indexed)\"}},"
	  "\"required\":[\"path\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"content\":{\"type\":\"string\"},\"metadata\":" META_SCHEMA ","
	  "\"isTruncated\":{\"type\":\"boolean\"},\"totalLines\":{\"type\":\"number\"},\"returnedLines\":{\"type\":\"number\"}}}",
	  w10_read, "{\"whole\":true}", NULL, NULL, 0 },
	{ "writeFile", "write", "Write file",
	  "Writes content to a file, creating the file if it doesn't exist. mode: create (fail if it "
	  "exists), overwrite (default) or append.",
	  "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\",\"description\":\"Path to file\"},"
	  "\"content\":{\"type\":\"string\",\"description\":\"Content to write\"},"
	  "\"mode\":{\"type\":\"string\",\"enum\":[\"create\",\"overwrite\",\"append\"],\"description\":\"Write mode (default: overwrite)\"},"
	  "\"createDirectories\":{\"type\":\"boolean\",\"description\":\"Create parent directories if they don't exist\"}},"
	  "\"required\":[\"path\",\"content\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"success\":{\"type\":\"boolean\"},\"path\":{\"type\":\"string\"},"
	  "\"bytesWritten\":{\"type\":\"number\"}},\"required\":[\"success\",\"path\",\"bytesWritten\"]}",
	  w10_write, NULL, NULL, NULL, 0 },
	{ "modifyFile", "edit", "Modify file",
	  "Performs targeted modifications to a file without rewriting the entire content: operations "
	  "replace (startLine, endLine, newContent), insert (afterLine, newContent), delete (startLine, "
	  "endLine) and regexReplace (pattern, replacement, flags), applied in order, atomically.",
	  "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\",\"description\":\"Path to file\"},"
	  "\"operations\":{\"type\":\"array\",\"items\":{\"type\":\"object\"},\"description\":\"List of operations to perform\"}},"
	  "\"required\":[\"path\",\"operations\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"success\":{\"type\":\"boolean\"},\"path\":{\"type\":\"string\"}},"
	  "\"required\":[\"success\",\"path\"]}",
	  w10_modify, NULL, res_success, NULL, 0 },
	{ "searchFiles", "grep", "Search files",
	  "Searches for content in files across the workspace (regex or literal), with context lines. "
	  "Results are capped; isTruncated and totalMatches say how many there were.",
	  "{\"type\":\"object\",\"properties\":{\"paths\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"Paths to search in\"},\"query\":{\"type\":\"string\",\"description\":\"Search query\"},"
	  "\"type\":{\"type\":\"string\",\"enum\":[\"regex\",\"literal\"],\"description\":\"Search type\"},"
	  "\"recursive\":{\"type\":\"boolean\",\"description\":\"Whether to search recursively\"},"
	  "\"excludePatterns\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"Glob patterns to exclude\"},\"contextLines\":{\"type\":\"integer\",\"description\":\"Number of context lines to include\"}},"
	  "\"required\":[\"paths\",\"query\",\"type\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"matches\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
	  "\"path\":{\"type\":\"string\"},\"line\":{\"type\":\"number\"},\"matchText\":{\"type\":\"string\"},"
	  "\"contextBefore\":" STRS ",\"contextAfter\":" STRS "}}},\"isTruncated\":{\"type\":\"boolean\"},"
	  "\"totalMatches\":{\"type\":\"number\"}}}",
	  w10_search, NULL, NULL, NULL, 0 },
	{ "executeCommand", "exec", "Execute command",
	  "Executes a shell command in the workspace and returns its standard output, standard error and exit code (a "
	  "non-zero exit code is a result, not an error). Output is capped per stream.",
	  "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\",\"description\":\"Command to execute\"},"
	  "\"workingDirectory\":{\"type\":\"string\",\"description\":\"Working directory (default: workspace root)\"},"
	  "\"timeout\":{\"type\":\"integer\",\"description\":\"Timeout in milliseconds\"},"
	  "\"environment\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},\"description\":\"Environment variables\"}},"
	  "\"required\":[\"command\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{" Q "stdout" Q ":{\"type\":\"string\"}," Q "stderr" Q ":{\"type\":\"string\"},"
	  "\"exitCode\":{\"type\":\"number\"},\"isOutputTruncated\":{\"type\":\"boolean\"},\"durationMs\":{\"type\":\"number\"}},"
	  "\"required\":[" Q "stdout" Q "," Q "stderr" Q ",\"exitCode\",\"isOutputTruncated\",\"durationMs\"]}",
	  w10_exec, NULL, res_wap_exec, NULL, 0 },
	{ "getWorkspaceInfo", "info", "Workspace info",
	  "Retrieves information about the workspace, including the root, default exclusions and limits.",
	  "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"root\":{\"type\":\"string\"},\"defaultExclusions\":" STRS ","
	  "\"limits\":{\"type\":\"object\",\"properties\":{\"maxFileSize\":{\"type\":\"number\"},"
	  "\"maxDirectoryEntries\":{\"type\":\"number\"},\"maxSearchResults\":{\"type\":\"number\"},"
	  "\"maxOutputSize\":{\"type\":\"number\"}}}},\"required\":[\"root\",\"defaultExclusions\",\"limits\"]}",
	  w10_info, NULL, NULL, NULL, 0 },
	{ NULL }
};

/* opencode: the tool names and argument spellings of OpenCode's built-ins */
static const struct wap_argmap oc_bash[] = {
	{ "command", "command", NULL }, { "timeout", "timeout_ms", NULL },
	{ "workdir", "cwd", NULL }, { "description", NULL, NULL }, { NULL }
};
static const struct wap_argmap oc_read[] = {
	{ "filePath", "path", NULL }, { "offset", "offset", NULL }, { "limit", "limit", NULL }, { NULL }
};
static const struct wap_argmap oc_write[] = {
	{ "filePath", "path", NULL }, { "content", "content", NULL }, { NULL }
};
static const struct wap_argmap oc_edit[] = {
	{ "filePath", "path", NULL }, { "oldString", "old", NULL }, { "newString", "new", NULL },
	{ "replaceAll", "replace_all", NULL }, { NULL }
};
static const struct wap_argmap oc_glob[] = {
	{ "pattern", "pattern", NULL }, { "path", "path", NULL }, { NULL }
};
static const struct wap_argmap oc_grep[] = {
	{ "pattern", "pattern", NULL }, { "path", "paths", conv_array },
	{ "include", "include", conv_array }, { NULL }
};

static const struct wap_ptool oc_tools[] = {
	{ "bash", "exec", "Run a shell command",
	  "Executes a bash command in the workspace with an optional timeout (milliseconds) and working "
	  "directory. Returns the standard output, standard error and exit code; output is capped per stream.",
	  "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\",\"description\":\"The command to execute\"},"
	  "\"timeout\":{\"type\":\"integer\",\"description\":\"Optional timeout in milliseconds\"},"
	  "\"workdir\":{\"type\":\"string\",\"description\":\"The working directory (default: the workspace root)\"},"
	  "\"description\":{\"type\":\"string\",\"description\":\"What the command does, in 5-10 words\"}},"
	  "\"required\":[\"command\"],\"additionalProperties\":false}",
	  NULL, oc_bash, NULL, NULL, NULL, 0 },
	{ "read", "read", "Read a file",
	  "Reads a file from the workspace. offset is the first line (1-based), limit the number of "
	  "lines (default 2000, as OpenCode); lines over 2000 characters are cut and marked so.",
	  "{\"type\":\"object\",\"properties\":{\"filePath\":{\"type\":\"string\",\"description\":\"The path of the file to read\"},"
	  "\"offset\":{\"type\":\"integer\",\"description\":\"The line number to start reading from (1-based)\"},"
	  "\"limit\":{\"type\":\"integer\",\"description\":\"The number of lines to read\"}},"
	  "\"required\":[\"filePath\"],\"additionalProperties\":false}",
	  NULL, oc_read, NULL, NULL, NULL, 0 },
	{ "write", "write", "Write a file",
	  "Writes a file in the workspace, replacing it if it exists.",
	  "{\"type\":\"object\",\"properties\":{\"filePath\":{\"type\":\"string\",\"description\":\"The path of the file to write\"},"
	  "\"content\":{\"type\":\"string\",\"description\":\"The content to write\"}},"
	  "\"required\":[\"filePath\",\"content\"],\"additionalProperties\":false}",
	  NULL, oc_write, "{\"mode\":\"overwrite\"}", NULL, NULL, 0 },
	{ "edit", "edit", "Edit a file",
	  "Performs exact string replacement in a file: oldString must occur exactly once unless "
	  "replaceAll is set.",
	  "{\"type\":\"object\",\"properties\":{\"filePath\":{\"type\":\"string\",\"description\":\"The path of the file to modify\"},"
	  "\"oldString\":{\"type\":\"string\",\"description\":\"The text to replace\"},"
	  "\"newString\":{\"type\":\"string\",\"description\":\"The text to replace it with\"},"
	  "\"replaceAll\":{\"type\":\"boolean\",\"description\":\"Replace all occurrences (default false)\"}},"
	  "\"required\":[\"filePath\",\"oldString\",\"newString\"],\"additionalProperties\":false}",
	  NULL, oc_edit, "{\"match\":\"opencode\"}", NULL, NULL, 0 },
	{ "glob", "glob", "Find files by name",
	  "Finds files by glob pattern (\"**/*.js\"), newest first.",
	  "{\"type\":\"object\",\"properties\":{\"pattern\":{\"type\":\"string\",\"description\":\"The glob pattern\"},"
	  "\"path\":{\"type\":\"string\",\"description\":\"The directory to search in (default: the workspace root)\"}},"
	  "\"required\":[\"pattern\"],\"additionalProperties\":false}",
	  NULL, oc_glob, NULL, NULL, NULL, 0 },
	{ "grep", "grep", "Search file contents",
	  "Searches file contents with a regular expression; include filters files by glob (\"*.c\").",
	  "{\"type\":\"object\",\"properties\":{\"pattern\":{\"type\":\"string\",\"description\":\"The regex pattern\"},"
	  "\"path\":{\"type\":\"string\",\"description\":\"The directory to search in\"},"
	  "\"include\":{\"type\":\"string\",\"description\":\"File pattern to include (e.g. \\\"*.js\\\")\"}},"
	  "\"required\":[\"pattern\"],\"additionalProperties\":false}",
	  NULL, oc_grep, NULL, NULL, NULL, 0 },
	{ "git", "git", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0 },
	{ NULL }
};

/* workspace-tool-interface (specs/workspace-tool-interface.md): its own
 * snake_case names, OpenCode's tools otherwise */
static const struct wap_argmap wti_bash[] = {
	{ "command", "command", NULL }, { "workdir", "cwd", NULL },
	{ "timeout_ms", "timeout_ms", NULL }, { NULL }
};
static const struct wap_argmap wti_read[] = {
	{ "file_path", "path", NULL }, { "offset", "offset", NULL }, { "limit", "limit", NULL }, { NULL }
};
static const struct wap_argmap wti_write[] = {
	{ "file_path", "path", NULL }, { "content", "content", NULL }, { NULL }
};
static const struct wap_argmap wti_edit[] = {
	{ "file_path", "path", NULL }, { "old_string", "old", NULL }, { "new_string", "new", NULL },
	{ "replace_all", "replace_all", NULL }, { NULL }
};
/* glob and grep: spelled as OpenCode's (oc_glob, oc_grep) */
static const struct wap_argmap wti_git[] = {
	{ "action", "action", conv_git_action }, { "message", "message", NULL },
	{ "files", "files", NULL }, { "branch", "branch", NULL }, { NULL }
};

static const struct wap_ptool wti_tools[] = {
	{ "bash", "exec", "Run a bash command",
	  "Executes a bash command in the workspace and returns " Q "stdout" Q ", " Q "stderr" Q ", exit_code and "
	  "duration_ms; a non-zero exit code is a result, not an error.  A command past timeout_ms "
	  "gets SIGTERM, then SIGKILL 5 seconds later, and the reply is a TIMEOUT error carrying the "
	  "partial output.  Each stream is kept to 50 KB (stdout_truncated, stdout_bytes say so).",
	  "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\",\"description\":\"The command, run by bash\"},"
	  "\"workdir\":{\"type\":\"string\",\"description\":\"The working directory (default: the workspace root)\"},"
	  "\"timeout_ms\":{\"type\":\"integer\",\"description\":\"Timeout in milliseconds (default 30000)\"}},"
	  "\"required\":[\"command\"],\"additionalProperties\":false}",
	  NULL, wti_bash, "{\"kill_after\":5000}", res_wti_bash, NULL, 0 },
	{ "read", "read", "Read a file",
	  "Reads a file; content has each line prefixed with its number (\"1: # README\").  offset is "
	  "the first line (1-based), limit the number of lines (default 2000).  A directory gives its "
	  "entries, subdirectories with a trailing /; a binary file its size and type, never its bytes.",
	  "{\"type\":\"object\",\"properties\":{\"file_path\":{\"type\":\"string\",\"description\":\"The file to read\"},"
	  "\"offset\":{\"type\":\"integer\",\"description\":\"The first line to read (1-based)\"},"
	  "\"limit\":{\"type\":\"integer\",\"description\":\"The number of lines to read (default 2000)\"}},"
	  "\"required\":[\"file_path\"],\"additionalProperties\":false}",
	  NULL, wti_read, NULL, res_wti_read, NULL, 0 },
	{ "write", "write", "Write a file",
	  "Writes a file, replacing it if it exists and creating missing parent directories.",
	  "{\"type\":\"object\",\"properties\":{\"file_path\":{\"type\":\"string\",\"description\":\"The file to write\"},"
	  "\"content\":{\"type\":\"string\",\"description\":\"The whole new content\"}},"
	  "\"required\":[\"file_path\",\"content\"],\"additionalProperties\":false}",
	  NULL, wti_write, "{\"mode\":\"overwrite\"}", NULL, NULL, 0 },
	{ "edit", "edit", "Edit a file",
	  "Replaces old_string with new_string in a file: old_string must occur exactly once unless "
	  "replace_all is set.  Returns replacements and linesChanged.",
	  "{\"type\":\"object\",\"properties\":{\"file_path\":{\"type\":\"string\",\"description\":\"The file to edit\"},"
	  "\"old_string\":{\"type\":\"string\",\"description\":\"The exact text to replace\"},"
	  "\"new_string\":{\"type\":\"string\",\"description\":\"The text to put in its place\"},"
	  "\"replace_all\":{\"type\":\"boolean\",\"description\":\"Replace every occurrence (default false)\"}},"
	  "\"required\":[\"file_path\",\"old_string\",\"new_string\"],\"additionalProperties\":false}",
	  NULL, wti_edit, "{\"match\":\"opencode\"}", NULL, NULL, 0 },
	{ "glob", "glob", "Find files by name",
	  "Finds files matching a glob pattern (\"**/*.ts\") under path, newest first; no match is an "
	  "empty list.",
	  "{\"type\":\"object\",\"properties\":{\"pattern\":{\"type\":\"string\",\"description\":\"The glob pattern\"},"
	  "\"path\":{\"type\":\"string\",\"description\":\"The directory to search (default: the workspace root)\"}},"
	  "\"required\":[\"pattern\"],\"additionalProperties\":false}",
	  NULL, oc_glob, NULL, NULL, NULL, 0 },
	{ "grep", "grep", "Search file contents",
	  "Searches file contents for a regular expression; each match has its path and line number.  "
	  "include keeps only files matching a glob (\"*.ts\").",
	  "{\"type\":\"object\",\"properties\":{\"pattern\":{\"type\":\"string\",\"description\":\"The regular expression\"},"
	  "\"path\":{\"type\":\"string\",\"description\":\"The directory to search (default: the workspace root)\"},"
	  "\"include\":{\"type\":\"string\",\"description\":\"Only files matching this glob\"}},"
	  "\"required\":[\"pattern\"],\"additionalProperties\":false}",
	  NULL, oc_grep, NULL, NULL, NULL, 0 },
	{ "git", "git", "Git",
	  "Git without credentials in the agent's hands: action status, diff, commit (message, files: "
	  "stage them, then commit), push, checkout (branch: created if missing), and the other "
	  "actions of wap git.",
	  "{\"type\":\"object\",\"properties\":{\"action\":{\"type\":\"string\",\"description\":\"status, diff, commit, push, checkout, log, ...\"},"
	  "\"message\":{\"type\":\"string\",\"description\":\"commit: the commit message\"},"
	  "\"files\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"commit: the files to stage and commit\"},"
	  "\"branch\":{\"type\":\"string\",\"description\":\"checkout, push: the branch\"}},"
	  "\"required\":[\"action\"],\"additionalProperties\":false}",
	  NULL, wti_git, NULL, NULL, NULL, 0 },
	{ NULL }
};

/* acp: the Agent Client Protocol's client-side file methods */
static const struct wap_argmap acp_read[] = {
	{ "sessionId", NULL, NULL }, { "path", "path", conv_abs }, { "line", "offset", NULL },
	{ "limit", "limit", NULL }, { NULL }
};
static const struct wap_argmap acp_write[] = {
	{ "sessionId", NULL, NULL }, { "path", "path", conv_abs }, { "content", "content", NULL }, { NULL }
};

static const struct wap_ptool acp_tools[] = {
	{ "fs/read_text_file", "read", NULL, NULL,
	  "{\"type\":\"object\",\"properties\":{\"sessionId\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"},"
	  "\"line\":{\"type\":\"integer\"},\"limit\":{\"type\":\"integer\"},\"_meta\":{\"type\":\"object\"}},"
	  "\"required\":[\"path\"],\"additionalProperties\":false}",
	  "", acp_read, "{\"whole\":true}", res_acp_read, NULL, 0 },
	{ "fs/write_text_file", "write", NULL, NULL,
	  "{\"type\":\"object\",\"properties\":{\"sessionId\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"},"
	  "\"content\":{\"type\":\"string\"},\"_meta\":{\"type\":\"object\"}},"
	  "\"required\":[\"path\",\"content\"],\"additionalProperties\":false}",
	  "", acp_write, "{\"mode\":\"overwrite\"}", res_empty, NULL, 0 },
	{ NULL }
};

static const struct wap_ptool no_tools[] = { { NULL } };

static const struct wap_profile p_wap = {
	.name = "wap", .summary = "every applet as a tool, arguments = its long options",
	.all_applets = true, .tools = no_tools,
};
static const struct wap_profile p_w10 = {
	.name = "wap-1.0", .summary = "the WAP 1.0 tools (exploreFiles, readFile, ...)",
	.tools = w10_tools,
	/* the document's "Recommended System Limits" */
	.limits = "{\"maxFileSize\":1048576,\"maxDirectoryEntries\":500,\"maxSearchResults\":100,"
		  "\"maxOutputSize\":1048576}",
};
static const struct wap_profile p_langop = {
	.name = "langop", .summary = "the Language Operator workspace tool (read_file, ...)",
	.tools = langop_tools,
	/* "No hard limit on file size; large files (>10MB) may cause memory
	 * pressure": reads are whole up to 10 MiB */
	.limits = "{\"maxFileSize\":10485760,\"maxDirectoryEntries\":100000}",
	/* as the document's initialize reply and /health show them */
	.server_name = "workspace-tool", .server_version = "1.0.0",
	.instructions = "",
	/* its curl examples POST tools/list and tools/call without initialize */
	.stateless = true,
};
static const struct wap_profile p_opencode = {
	.name = "opencode", .summary = "OpenCode's tools (bash, read, write, edit, glob, grep) and git",
	.tools = oc_tools,
};
static const struct wap_profile p_wti = {
	.name = "wti", .summary = "the workspace-tool-interface document (bash, read, write, edit, "
	"glob, grep, git; file_path, old_string, ...)",
	.tools = wti_tools,
	/* "truncates the output to 50KB" */
	.limits = "{\"maxOutputSize\":51200}",
};
static const struct wap_profile p_acp = {
	.name = "acp", .summary = "Agent Client Protocol fs/read_text_file, fs/write_text_file",
	.methods = true, .tools = acp_tools,
};

const struct wap_profile *const wap_profiles[] = {
	&p_wap, &p_w10, &p_langop, &p_opencode, &p_wti, &p_acp, NULL
};

void wap_profile_limits(const struct wap_profile *p, struct wap_ws *ws)
{
	static const struct { const char *key; size_t off; } keys[] = {
		{ "maxFileSize", offsetof(struct wap_limits, max_file_size) },
		{ "maxDirectoryEntries", offsetof(struct wap_limits, max_dir_entries) },
		{ "maxSearchResults", offsetof(struct wap_limits, max_search_results) },
		{ "maxOutputSize", offsetof(struct wap_limits, max_output_size) },
		{ "maxLineLength", offsetof(struct wap_limits, max_line_len) },
		{ NULL, 0 }
	};
	json_t *lim = p && p->limits ? json_loads(p->limits, 0, NULL) : NULL;
	char dotted[64];

	for (size_t i = 0; lim && keys[i].key; i++) {
		json_t *v = json_object_get(lim, keys[i].key);

		snprintf(dotted, sizeof(dotted), "limits.%s", keys[i].key);
		if (json_is_integer(v) && json_integer_value(v) > 0 && !wap_config_get(ws->config, dotted))
			*(size_t *)((char *)&ws->lim + keys[i].off) = (size_t)json_integer_value(v);
	}
	json_decref(lim);
}

const struct wap_profile *wap_profile_find(const char *name)
{
	for (int i = 0; wap_profiles[i]; i++)
		if (!strcmp(wap_profiles[i]->name, name))
			return wap_profiles[i];
	return NULL;
}

/* ---- the generated `wap` profile ---- */

static struct wap_ptool *applet_tools;
static size_t n_applet_tools;
static pthread_once_t applet_once = PTHREAD_ONCE_INIT;

static void build_applet_tools(void)
{
	size_t n = 0;

	while (wap_applets[n])
		n++;
	applet_tools = calloc(n + 1, sizeof(*applet_tools));
	if (!applet_tools)
		return;
	for (size_t i = 0; wap_applets[i]; i++) {
		if (wap_applets[i]->flags & WAP_APPLET_NOTOOL)
			continue;
		applet_tools[n_applet_tools].name = wap_applets[i]->name;
		applet_tools[n_applet_tools].applet = wap_applets[i]->name;
		n_applet_tools++;
	}
}

static const struct wap_ptool *profile_src(const struct wap_profile *p)
{
	if (p->all_applets) {
		pthread_once(&applet_once, build_applet_tools);
		return applet_tools ? applet_tools : no_tools;
	}
	return p->tools;
}

const struct wap_ptool **wap_profile_tools(const struct wap_profile *p, size_t *n)
{
	const struct wap_ptool *src = profile_src(p);
	const struct wap_ptool **out;
	size_t k = 0, cap = 0;

	while (src[cap].name)
		cap++;
	out = calloc(cap + 1, sizeof(*out));
	if (!out) {
		*n = 0;
		return NULL;
	}
	for (size_t i = 0; i < cap; i++)
		if (wap_applet_find(src[i].applet))
			out[k++] = &src[i];
	*n = k;
	return out;
}

/* (every call looks its tool up: no list is made for it) */
const struct wap_ptool *wap_profile_tool(const struct wap_profile *p, const char *name)
{
	const struct wap_ptool *src = profile_src(p), *t = NULL;

	for (size_t i = 0; src[i].name; i++)
		if (src[i].name[0] == name[0] && !strcmp(src[i].name, name) && wap_applet_find(src[i].applet))
			t = &src[i];
	return t;
}

/* the description paragraph of an applet's usage text, for a model */
static char *applet_description(const struct wap_applet *a)
{
	struct wap_sb sb = WAP_SB_INIT;
	const char *u = a->usage, *p;

	wap_sb_addc(&sb, toupper((unsigned char)a->summary[0]));
	wap_sb_adds(&sb, a->summary + 1);
	wap_sb_adds(&sb, ".");
	/* skip the usage paragraph, take the next one not a heading */
	p = strstr(u, "\n\n");
	while (p) {
		const char *start = p + 2, *end = strstr(start, "\n\n");
		size_t len = end ? (size_t)(end - start) : strlen(start);

		if (len && start[0] != ' ' && strncmp(start, "examples:", 9) && strncmp(start, "options:", 8)) {
			wap_sb_adds(&sb, "\n\n");
			for (size_t i = 0; i < len; i++)
				wap_sb_addc(&sb, start[i] == '\n' ? ' ' : start[i]);
			break;
		}
		p = end;
	}
	return wap_sb_detach(&sb);
}

json_t *wap_ptool_json(const struct wap_ptool *t)
{
	const struct wap_applet *a = wap_applet_find(t->applet);
	unsigned flags = t->flags ? t->flags : (a ? a->flags : 0);
	json_t *o = json_object(), *in = NULL, *out = NULL;
	char *desc;

	json_object_set_new(o, "name", json_string(t->name));
	json_object_set_new(o, "title", json_string(t->title ? t->title : a && a->title ? a->title : t->name));
	if (t->description) {
		json_object_set_new(o, "description", json_string(t->description));
	} else if (a) {
		char *w;
		desc = applet_description(a);
		w = desc ? wap_mcp_words(a, desc) : NULL;
		json_object_set_new(o, "description", json_string(w ? w : desc ? desc : a->summary));
		free(w);
		free(desc);
	}
	if (t->input_schema)
		in = json_loads(t->input_schema, 0, NULL);
	else if (a)
		in = wap_applet_input_schema(a);
	json_object_set_new(o, "inputSchema", in ? in : json_pack("{s:s}", "type", "object"));
	if (t->output_schema && *t->output_schema)
		out = json_loads(t->output_schema, 0, NULL);
	else if (!t->output_schema && a && (out = wap_applet_output_schema(a)))
		;
	else if (!t->output_schema)
		out = json_pack("{s:s, s:b}", "type", "object", "additionalProperties", 1);
	if (out)
		json_object_set_new(o, "outputSchema", out);
	json_object_set_new(o, "annotations", json_pack("{s:s, s:b, s:b, s:b, s:b}",
		"title", json_string_value(json_object_get(o, "title")),
		"readOnlyHint", !!(flags & WAP_APPLET_READONLY),
		"destructiveHint", !(flags & WAP_APPLET_READONLY) && !!(flags & WAP_APPLET_DESTRUCTIVE),
		"idempotentHint", !!(flags & WAP_APPLET_IDEMPOTENT),
		"openWorldHint", 0));
	return o;
}

/* ---- running ---- */

/* wap_run_op, the one entry every door runs ops through, is in lib/serve/run.c. */

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE: case JSON_FALSE: return "boolean";
	default: return "null";
	}
}

static bool type_ok(const char *want, const json_t *v)
{
	const char *got = type_name(v);

	if (!strcmp(want, got))
		return true;
	if (!strcmp(want, "number") && !strcmp(got, "integer"))
		return true;
	if (!strcmp(want, "integer") && json_is_real(v) &&
	    json_real_value(v) == (double)(long long)json_real_value(v))
		return true;
	return false;
}

int wap_schema_check(const json_t *schema, const json_t *args, const char *tool,
		     struct wap_err *err)
{
	json_t *props = json_object_get(schema, "properties"), *v, *req;
	bool closed = json_is_false(json_object_get(schema, "additionalProperties"));
	const char *key;
	size_t i;

	if (!json_is_object(args))
		return wap_err_set(err, WAP_E_INVALID, "arguments must be an object");
	json_object_foreach((json_t *)args, key, v) {
		json_t *p = json_object_get(props, key);
		const char *t = json_string_value(json_object_get(p, "type"));

		if (!p) {
			if (closed)
				return wap_err_set(err, WAP_E_INVALID, "unknown argument '%s' for %s", key, tool);
			continue;
		}
		if (t && !type_ok(t, v))
			return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be %s %s", key,
					   !strcmp(t, "integer") || !strcmp(t, "object") || !strcmp(t, "array") ? "an" : "a", t);
		if (t && !strcmp(t, "array") && json_is_object(json_object_get(p, "items"))) {
			const char *it = json_string_value(json_object_get(json_object_get(p, "items"), "type"));
			json_t *el;
			json_array_foreach(v, i, el)
				if (it && !type_ok(it, el))
					return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be an array of %ss", key, it);
		}
		if (json_is_array(json_object_get(p, "enum"))) {
			json_t *e;
			bool found = false;
			json_array_foreach(json_object_get(p, "enum"), i, e)
				found = found || json_equal(e, v);
			if (!found)
				return wap_err_set(err, WAP_E_INVALID, "argument '%s' has a value not allowed", key);
		}
	}
	req = json_object_get(schema, "required");
	json_array_foreach(req, i, v)
		if (!json_object_get(args, json_string_value(v)))
			return wap_err_set(err, WAP_E_INVALID, "missing required argument '%s'",
					   json_string_value(v));
	return 0;
}

/* the caller's arguments as the applet's request, by the tool's table */
static json_t *map_args(const struct wap_ptool *t, const json_t *args, struct wap_err *err)
{
	json_t *req, *v;
	const char *key;

	if (!t->args) {
		/* the arguments as they are (the ops take them read-only);
		 * a copy only when fixed ones are added */
		req = t->fixed ? json_deep_copy(args) : json_incref((json_t *)args);
	} else {
		req = json_object();
		json_object_foreach((json_t *)args, key, v) {
			const struct wap_argmap *m;
			for (m = t->args; m->from; m++)
				if (!strcmp(m->from, key))
					break;
			if (!m->from || !m->to || json_is_null(v))
				continue;	/* the schema check refused unknown keys */
			if (m->conv ? m->conv(m, v, args, req, err) < 0
				    : json_object_set(req, m->to, v) < 0) {
				if (err->kind == WAP_OK)
					wap_err_oom(err);
				json_decref(req);
				return NULL;
			}
		}
	}
	if (t->fixed) {
		json_t *f = json_loads(t->fixed, 0, NULL);
		json_object_update_missing(req, f);
		json_decref(f);
	}
	return req;
}

/* S in the words of T's caller: wap's --flags become the applet's argument
 * names, and those the profile's own (offset -> startLine).  Malloc'd. */
static char *caller_words(const struct wap_ptool *t, const struct wap_applet *a, const char *s)
{
	struct wap_sb sb = WAP_SB_INIT;
	const char *p = s;
	char kb[64];

	while (*p) {
		const struct wap_opt *o, *hit = NULL;
		const struct wap_argmap *m;
		const char *name;
		size_t n;

		if (p[0] != '-' || p[1] != '-' || (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '-'))) {
			wap_sb_addc(&sb, *p++);
			continue;
		}
		for (n = 2; isalnum((unsigned char)p[n]) || p[n] == '-'; n++)
			;
		for (o = a->opts; o->name; o++)
			if (!(o->flags & (WAP_OPT_POS | WAP_OPT_CLI)) && strlen(o->name) == n - 2 &&
			    !strncmp(p + 2, o->name, n - 2))
				hit = o;
		if (!hit) {
			wap_sb_add(&sb, p, n);
			p += n;
			continue;
		}
		name = wap_opt_key(hit, kb, sizeof(kb));
		for (m = t->args; m && m->from; m++)
			if (m->to && !strcmp(m->to, name)) {
				name = m->from;
				break;
			}
		wap_sb_adds(&sb, name);
		p += n;
	}
	return wap_sb_detach(&sb);
}

/* The hint that ends a tool's text ("[... use --max-results 0 for all]",
 * "(more commits: ... --since/--until)") in the caller's words; every
 * other line is data and stays as it is. */
static void caller_hints(const struct wap_ptool *t, const struct wap_applet *a, char **text)
{
	size_t len = *text ? strlen(*text) : 0, start;
	char *w;

	if (!len || !strcmp(a->name, "exec"))
		return;
	start = len - ((*text)[len - 1] == '\n');
	while (start && (*text)[start - 1] != '\n')
		start--;
	if (((*text)[start] != '[' && (*text)[start] != '(') || !strstr(*text + start, "--"))
		return;
	if (!(w = caller_words(t, a, *text + start)))
		return;
	{
		struct wap_sb sb = WAP_SB_INIT;

		wap_sb_add(&sb, *text, start);
		wap_sb_adds(&sb, w);
		free(w);
		if (sb.oom) {
			wap_sb_release(&sb);
			return;
		}
		free(*text);
		*text = wap_sb_detach(&sb);
	}
}

/* An error message in the caller's words (wap's own text, never data). */
static void caller_error(const struct wap_ptool *t, const struct wap_applet *a, struct wap_err *err)
{
	char *w;

	if (!strstr(err->msg, "--") || !(w = caller_words(t, a, err->msg)))
		return;
	snprintf(err->msg, sizeof(err->msg), "%s", w);
	free(w);
}

int wap_ptool_run(struct wap_run *run, const struct wap_ptool *t, const json_t *args,
		  json_t **res, char **text, struct wap_err *err)
{
	const struct wap_applet *a = wap_applet_find(t->applet);
	json_t *req, *out = NULL;
	int rc;

	*res = NULL;
	*text = NULL;
	if (!a)
		return wap_err_set(err, WAP_E_DISABLED, "%s is not available in this build", t->applet);
	if (t->input_schema) {
		json_t *schema = json_loads(t->input_schema, 0, NULL);
		rc = wap_schema_check(schema, args, t->name, err);
		json_decref(schema);
		if (rc && t->text_call) {
			/* a text-only tool answers every failure in its own words */
			*text = fmt("Error: %s", err->msg);
			wap_err_release(err);
			memset(err, 0, sizeof(*err));
			return 1;
		}
		if (rc)
			return -1;
	}
	if (t->text_call) {
		rc = t->text_call(run, args, text);
		if (!*text)
			*text = strdup(rc ? "Error: out of memory" : "");
		return rc ? 1 : 0;
	}
	req = map_args(t, args, err);
	if (!req)
		return -1;
	if (wap_run_op(run, t->applet, req, &out, err)) {
		caller_error(t, a, err);
		json_decref(req);
		return -1;
	}
	*text = wap_render_text(a, out, req);
	caller_hints(t, a, text);
	if (t->result && !(out = t->result(out, req, err))) {
		free(*text);
		*text = NULL;
		json_decref(req);
		return -1;
	}
	json_decref(req);
	*res = out;
	return 0;
}
