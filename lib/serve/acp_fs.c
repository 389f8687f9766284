/* serve/acp_fs.c - the Agent Control fs.* methods (files, directories,
 * watchers) onto the read, write, rm, mv, cp, mkdir, ls and stat ops. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "acp_impl.h"
#include "text.h"
#include "watch.h"

static void on_file_change(void *arg, const char *path, const char *type)
{
	struct wap_acp_session *s = arg;

	s->notify(s->arg, notification("file.changed", json_pack("{s:s, s:s}", "path", path, "type", type)));
}

int acp_read_whole(struct acp_ctx *c, const char *rel, const char *enc, json_t **res, struct wap_err *err)
{
	return acp_run_op(c, "read", json_pack("{s:s, s:s}", "path", rel, "encoding", enc), res, err);
}

int acp_fs_readFile(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *enc = "utf-8";
	char *rel;
	json_t *r2;
	int r;

	if (wap_req_str(c->params, "encoding", &enc, err) < 0 || acp_rel_path(c, "path", &rel, err) < 0)
		return -1;
	r = acp_read_whole(c, rel, enc, &r2, err);
	free(rel);
	if (r < 0)
		return -1;
	*res = json_pack("{s:O}", "content", json_object_get(r2, "content"));
	json_decref(r2);
	return 0;
}

int acp_write_common(struct acp_ctx *c, bool append, json_t **res, struct wap_err *err)
{
	const char *content;
	char *rel;
	json_t *req, *r2;

	if (acp_need_str(c, "content", &content, err) < 0 || acp_rel_path(c, "path", &rel, err) < 0)
		return -1;
	req = json_pack("{s:s, s:O, s:s}", "path", rel, "content", json_object_get(c->params, "content"),
			"mode", append ? "append" : "overwrite");
	free(rel);
	if (acp_run_op(c, "write", req, &r2, err) < 0)
		return -1;
	*res = acp_success();
	json_object_set(*res, "version", json_object_get(r2, "version"));
	json_decref(r2);
	return 0;
}

int acp_fs_writeFile(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	return acp_write_common(c, false, res, err);
}

int acp_fs_appendFile(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	return acp_write_common(c, true, res, err);
}

static int delete_common(struct acp_ctx *c, bool dir, json_t **res, struct wap_err *err)
{
	bool recursive = false, isdir;
	char *rel;
	json_t *r2, *st = NULL;
	int r = -1;

	if (wap_req_bool(c->params, "recursive", &recursive, err) < 0 || acp_rel_path(c, "path", &rel, err) < 0)
		return -1;
	if (acp_stat_op(c, rel, &st, err) < 0)
		goto out;
	isdir = json_is_true(json_object_get(st, "isDirectory"));
	if (dir && !isdir) {
		wap_err_set(err, WAP_E_NOT_DIR, "Not a directory: %s (use fs.deleteFile)", rel);
		goto out;
	}
	if (!dir && isdir) {
		wap_err_set(err, WAP_E_NOT_FILE, "Not a file: %s (use fs.deleteDirectory)", rel);
		goto out;
	}
	if (acp_run_op(c, "rm", json_pack("{s:s, s:b}", "path", rel, "recursive", dir && recursive), &r2, err) < 0)
		goto out;
	json_decref(r2);
	*res = acp_success();
	r = 0;
out:
	json_decref(st);
	free(rel);
	return r;
}

int acp_fs_deleteFile(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	return delete_common(c, false, res, err);
}

int acp_fs_deleteDirectory(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	return delete_common(c, true, res, err);
}

static int two_paths(struct acp_ctx *c, const char *k1, const char *k2, const char *applet, bool recursive,
		     json_t **res, struct wap_err *err)
{
	char *a = NULL, *b = NULL;
	json_t *req, *r2;
	int r = -1;

	if (acp_rel_path(c, k1, &a, err) < 0 || acp_rel_path(c, k2, &b, err) < 0)
		goto out;
	req = json_pack("{s:s, s:s}", "source", a, "destination", b);
	if (recursive)
		json_object_set_new(req, "recursive", json_true());
	if (acp_run_op(c, applet, req, &r2, err) < 0)
		goto out;
	json_decref(r2);
	*res = acp_success();
	r = 0;
out:
	free(a);
	free(b);
	return r;
}

int acp_fs_rename(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	return two_paths(c, "oldPath", "newPath", "mv", false, res, err);
}

int acp_fs_copy(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	return two_paths(c, "source", "destination", "cp", true, res, err);
}

int acp_fs_createDirectory(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	char *rel;
	json_t *r2;
	int r;

	if (acp_rel_path(c, "path", &rel, err) < 0)
		return -1;
	r = acp_run_op(c, "mkdir", json_pack("{s:s}", "path", rel), &r2, err);
	free(rel);
	if (r < 0)
		return -1;
	json_decref(r2);
	*res = acp_success();
	return 0;
}

long long acp_iso_to_ms(const char *s)
{
	struct tm tm = { 0 };
	const char *p;
	long long ms = 0;

	if (!s || !(p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
		return 0;
	if (*p == '.')
		ms = strtol(p + 1, NULL, 10);
	return (long long)timegm(&tm) * 1000 + ms;
}

int acp_fs_listDirectory(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	bool recursive = false;
	char *rel;
	json_t *r2, *entries, *f, *req;
	size_t i;
	int r;

	if (wap_req_bool(c->params, "recursive", &recursive, err) < 0 || acp_rel_path(c, "path", &rel, err) < 0)
		return -1;
	req = json_pack("{s:s, s:b, s:b}", "path", rel, "recursive", recursive, "metadata", 1);
	free(rel);
	r = acp_run_op(c, "ls", req, &r2, err);
	if (r < 0)
		return -1;
	entries = json_array();
	json_array_foreach(json_object_get(r2, "files"), i, f) {
		const char *path = json_string_value(json_object_get(f, "path"));
		const char *name = path ? strrchr(path, '/') : NULL;
		json_t *md = json_object_get(f, "metadata"), *e;
		const char *type = json_is_true(json_object_get(f, "isDirectory")) ? "directory" : "file";

		if (!path)
			continue;
		if (json_is_true(json_object_get(f, "isSymlink")) || json_is_true(json_object_get(md, "isSymlink")) ||
		    json_is_true(json_object_get(md, "isSymbolicLink")))
			type = "symlink";
		e = json_pack("{s:s, s:s, s:s}", "name", name ? name + 1 : path, "path", path, "type", type);
		if (json_is_integer(json_object_get(md, "size")))
			json_object_set(e, "size", json_object_get(md, "size"));
		if (json_is_string(json_object_get(md, "lastModified")))
			json_object_set_new(e, "mtime", json_integer(acp_iso_to_ms(json_string_value(json_object_get(md, "lastModified")))));
		json_array_append_new(entries, e);
	}
	*res = json_pack("{s:o}", "entries", entries);
	if (json_is_true(json_object_get(r2, "isTruncated")))
		json_object_set_new(*res, "isTruncated", json_true());
	json_decref(r2);
	return 0;
}

/* The stat op's --exists: a symbolic link is followed inside the root; a
 * link out of the root is ACCESS_DENIED, as through every door. */
int acp_fs_exists(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	char *rel;
	json_t *r2;
	int r;

	if (acp_rel_path(c, "path", &rel, err) < 0)
		return -1;
	r = acp_run_op(c, "stat", json_pack("{s:s, s:b}", "path", rel, "exists", 1), &r2, err);
	free(rel);
	if (r < 0)
		return -1;
	*res = json_pack("{s:b, s:b, s:b}", "exists", json_is_true(json_object_get(r2, "exists")),
			 "isFile", json_is_true(json_object_get(r2, "isFile")),
			 "isDirectory", json_is_true(json_object_get(r2, "isDirectory")));
	json_decref(r2);
	return 0;
}

int acp_fs_stat(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	char *rel;
	json_t *r2;
	int r;

	if (acp_rel_path(c, "path", &rel, err) < 0)
		return -1;
	r = acp_stat_op(c, rel, &r2, err);
	free(rel);
	if (r < 0)
		return -1;
	*res = json_pack("{s:I, s:I, s:I, s:b, s:b, s:b}",
		"size", json_integer_value(json_object_get(r2, "size")),
		"ctime", json_integer_value(json_object_get(r2, "ctime")),
		"mtime", json_integer_value(json_object_get(r2, "mtime")),
		"isFile", json_is_true(json_object_get(r2, "isFile")),
		"isDirectory", json_is_true(json_object_get(r2, "isDirectory")),
		"isSymbolicLink", json_is_true(json_object_get(r2, "isSymbolicLink")));
	json_decref(r2);
	return 0;
}

int acp_fs_watchFiles(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *pattern;
	char id[WAP_WATCH_ID_LEN];

	if (acp_need_str(c, "pattern", &pattern, err) < 0)
		return -1;
	if (!ACP_WS(c)->pol.allow_fs)
		return wap_err_set(err, WAP_E_DISABLED,
			"File system access is disabled by policy (security.allowFileSystemAccess)");
	if (!c->s->watch && !(c->s->watch = wap_watch_new(ACP_WS(c), on_file_change, c->s, err)))
		return -1;
	if (wap_watch_add(c->s->watch, pattern, id, err) < 0)
		return -1;
	*res = json_pack("{s:s}", "watcherId", id);
	return 0;
}

int acp_fs_unwatchFiles(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *id;

	if (acp_need_str(c, "watcherId", &id, err) < 0)
		return -1;
	if (!c->s->watch)
		return wap_err_set(err, WAP_E_NOT_FOUND, "Watcher not found: %s", id);
	if (wap_watch_remove(c->s->watch, id, err) < 0)
		return -1;
	*res = acp_success();
	return 0;
}
