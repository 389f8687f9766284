/* serve/acp_git.c - the Agent Control git.* methods onto the git op. */
#include <stdlib.h>
#include <string.h>

#include "acp_impl.h"
#include "ws.h"

static int git(struct acp_ctx *c, json_t *req, json_t **r2, struct wap_err *err)
{
	return acp_run_op(c, "git", req, r2, err);
}

int acp_git_status(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	json_t *r2, *changes, *f, *src;
	size_t i;

	if (git(c, json_pack("{s:s}", "action", "status"), &r2, err) < 0)
		return -1;
	changes = json_array();
	src = json_object_get(r2, "changes");
	if (!src)
		src = json_object_get(r2, "files");
	json_array_foreach(src, i, f) {
		json_t *path = json_object_get(f, "path"), *st = json_object_get(f, "status");
		if (json_is_string(path))
			json_array_append_new(changes, json_pack("{s:O, s:O}", "path", path,
					      "status", st ? st : json_string("modified")));
	}
	*res = json_pack("{s:O, s:o}", "branch", json_object_get(r2, "branch") ? json_object_get(r2, "branch") : json_null(),
			 "changes", changes);
	json_decref(r2);
	return 0;
}

int acp_git_diff(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	bool staged = false;
	char *rel = NULL;
	json_t *req, *r2, *d;

	if (wap_req_bool(c->params, "staged", &staged, err) < 0 ||
	    wap_req_path(&c->call, c->params, "path", NULL, &rel, err) < 0)
		return -1;
	req = json_pack("{s:s, s:b}", "action", "diff", "staged", staged);
	if (rel)
		json_object_set_new(req, "paths", json_pack("[s]", rel));
	free(rel);
	if (git(c, req, &r2, err) < 0)
		return -1;
	d = json_object_get(r2, "diff");
	*res = json_pack("{s:O}", "diff", json_is_string(d) ? d : json_string(""));
	if (!json_is_string(d))
		json_object_set_new(*res, "diff", json_string(""));
	json_decref(r2);
	return 0;
}

int acp_git_log(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	long long max = 50;
	char *rel = NULL;
	json_t *req, *r2, *entries, *e, *src;
	size_t i;

	if (wap_req_int(c->params, "maxEntries", &max, err) < 0 ||
	    wap_req_path(&c->call, c->params, "path", NULL, &rel, err) < 0)
		return -1;
	req = json_pack("{s:s, s:I}", "action", "log", "max_count", (json_int_t)max);
	if (rel)
		json_object_set_new(req, "paths", json_pack("[s]", rel));
	free(rel);
	if (git(c, req, &r2, err) < 0)
		return -1;
	entries = json_array();
	src = json_object_get(r2, "commits");
	if (!src)
		src = json_object_get(r2, "entries");
	json_array_foreach(src, i, e) {
		json_t *hash = json_object_get(e, "hash"), *msg = json_object_get(e, "message");
		json_t *author = json_object_get(e, "author"), *date = json_object_get(e, "date");

		if (!hash)
			hash = json_object_get(e, "id");
		if (!msg)
			msg = json_object_get(e, "summary");
		if (json_is_object(author))
			author = json_object_get(author, "name");
		json_array_append_new(entries, json_pack("{s:O, s:O, s:O, s:O}",
			"hash", hash ? hash : json_null(), "message", msg ? msg : json_null(),
			"author", author ? author : json_null(), "date", date ? date : json_null()));
	}
	*res = json_pack("{s:o}", "entries", entries);
	json_decref(r2);
	return 0;
}

static int git_paths(struct acp_ctx *c, const char *action, json_t **res, struct wap_err *err)
{
	json_t *paths = json_object_get(c->params, "paths"), *v, *req, *r2, *files;
	size_t i;

	if (!json_is_array(paths) || !json_array_size(paths))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: paths (an array of paths)");
	files = json_array();
	json_array_foreach(paths, i, v) {
		char *rel;
		struct wap_err e2 = { 0 };
		if (!json_is_string(v) ||
		    wap_ws_rel(ACP_WS(c), json_string_value(v), json_string_length(v), &rel, &e2) < 0) {
			json_decref(files);
			if (!json_is_string(v))
				return wap_err_set(err, WAP_E_INVALID, "paths must be strings");
			*err = e2;
			return -1;
		}
		json_array_append_new(files, json_string(rel));
		free(rel);
	}
	req = json_pack("{s:s, s:o}", "action", action, "files", files);
	if (git(c, req, &r2, err) < 0)
		return -1;
	json_decref(r2);
	*res = acp_success();
	return 0;
}

int acp_git_stage(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	return git_paths(c, "add", res, err);
}

int acp_git_unstage(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	return git_paths(c, "unstage", res, err);
}

int acp_git_commit(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *msg;
	json_t *r2, *h;

	if (acp_need_str(c, "message", &msg, err) < 0)
		return -1;
	if (git(c, json_pack("{s:s, s:s}", "action", "commit", "message", msg), &r2, err) < 0)
		return -1;
	*res = acp_success();
	if ((h = json_object_get(r2, "hash")) || (h = json_object_get(r2, "commit")))
		json_object_set(*res, "hash", h);
	json_decref(r2);
	return 0;
}

int acp_git_checkout(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *branch;
	bool create = false;
	json_t *r2;

	if (acp_need_str(c, "branch", &branch, err) < 0 || wap_req_bool(c->params, "create", &create, err) < 0)
		return -1;
	if (git(c, json_pack("{s:s, s:s, s:b}", "action", "checkout", "branch", branch, "create", create), &r2, err) < 0)
		return -1;
	json_decref(r2);
	*res = acp_success();
	return 0;
}

int acp_git_branches(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	json_t *r2, *out, *b;
	size_t i;

	if (git(c, json_pack("{s:s}", "action", "branch"), &r2, err) < 0)
		return -1;
	out = json_array();
	json_array_foreach(json_object_get(r2, "branches"), i, b) {
		if (json_is_string(b))
			json_array_append_new(out, json_pack("{s:O, s:b}", "name", b, "current",
				json_is_string(json_object_get(r2, "current")) &&
				json_equal(b, json_object_get(r2, "current"))));
		else if (json_is_object(b))
			json_array_append_new(out, json_pack("{s:O, s:b}", "name", json_object_get(b, "name"),
				"current", json_is_true(json_object_get(b, "current"))));
	}
	*res = json_pack("{s:o}", "branches", out);
	json_decref(r2);
	return 0;
}
