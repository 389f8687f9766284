/* wap rm: remove a file, or a directory tree with --recursive
 *
 * usage: wap rm [OPTIONS] PATH
 *
 * Remove the file PATH.  A directory is removed only with --recursive,
 * with everything in it; the workspace root itself never.  A symbolic
 * link is removed as a link: its target is not touched.  The walk goes by
 * directory fds and never follows links.  With restrictedPaths in force
 * the whole tree is checked first, and nothing is removed if any path in
 * it is restricted.
 *
 *   PATH             the file or directory to remove
 *   -r, --recursive  remove a directory and everything under it
 *   -f, --force      a missing PATH is not an error
 *
 * JSON result: success, path, removed (entries removed), isDirectory.
 *
 * examples:
 *   wap rm build/old.o
 *   wap rm -r build
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "applet.h"
#include "applets.h"
#include "strbuf.h"
#include "text.h"
#include "tree.h"

static const struct wap_opt rm_opts[] = {
	{ "path", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ "recursive", 'r', WAP_OPT_BOOL, 0, NULL },
	{ "force", 'f', WAP_OPT_BOOL, 0, NULL },
	{ NULL }
};

static int rm_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	const struct wap_ws *ws = call->ws;
	bool recursive = false, force = false, isdir;
	const char *name;
	char *rel = NULL;
	size_t removed = 0;
	struct stat st;
	int pfd = -1, rc = -1;

	*res = NULL;
	if (wap_req_bool(req, "recursive", &recursive, err) < 0 ||
	    wap_req_bool(req, "force", &force, err) < 0 ||
	    wap_req_path(call, req, "path", NULL, &rel, err))
		goto out;
	if (!rel) {
		wap_err_set(err, WAP_E_INVALID, "missing required argument 'path'");
		goto out;
	}
	if (!strcmp(rel, ".")) {
		wap_err_set(err, WAP_E_ACCESS, "Access denied: refusing to remove the workspace root");
		goto out;
	}
	pfd = wap_ws_open_parent(ws, rel, false, &name, err);
	if (pfd < 0) {
		if (force && err && (err->kind == WAP_E_NOT_FOUND || err->kind == WAP_E_NOT_DIR)) {
			wap_err_release(err);
			goto gone;
		}
		goto out;
	}
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT && force)
			goto gone;
		wap_err_errno(err, errno, rel);
		goto out;
	}
	isdir = S_ISDIR(st.st_mode);
	if (isdir && !recursive) {
		wap_err_set(err, WAP_E_NOT_FILE, "Is a directory: %s (use --recursive to remove it)", rel);
		goto out;
	}
	if (isdir) {
		/* everything under it, nested .git directories too */
		if (wap_tree_check(ws, pfd, name, rel, WAP_ACC_WRITE, err))
			goto out;
		if (wap_tree_remove(pfd, name, rel, &removed, err))
			goto out;
	} else {
		if (unlinkat(pfd, name, 0)) {
			wap_err_errno(err, errno, rel);
			goto out;
		}
		removed = 1;
	}
	fsync(pfd);
	*res = json_pack("{s:b, s:s, s:I, s:b}", "success", 1, "path", rel,
			 "removed", (json_int_t)removed, "isDirectory", isdir);
	rc = *res ? 0 : wap_err_oom(err);
	goto out;
gone:
	*res = json_pack("{s:b, s:s, s:I, s:b}", "success", 1, "path", rel, "removed", (json_int_t)0,
			 "isDirectory", 0);
	rc = 0;
out:
	if (pfd >= 0)
		close(pfd);
	free(rel);
	return rc;
}

static int rm_render(const json_t *res, const json_t *req, FILE *out)
{
	long long n = json_integer_value(json_object_get(res, "removed"));
	struct wap_sb q = WAP_SB_INIT;
	const char *path;

	(void)req;
	if (!out)
		return 0;
	path = wap_name_show(&q, json_string_value(json_object_get(res, "path")));
	if (!n)
		fprintf(out, "Nothing to remove: %s does not exist\n", path);
	else if (json_is_true(json_object_get(res, "isDirectory")))
		fprintf(out, "Removed %s (%lld entr%s)\n", path, n, n == 1 ? "y" : "ies");
	else
		fprintf(out, "Removed %s\n", path);
	wap_sb_release(&q);
	return 0;
}

const struct wap_applet wap_applet_rm = {
	.name = "rm",
	.summary = wap_summary_rm,
	.usage = wap_usage_rm,
	.title = "Remove a file or directory",
	.opts = rm_opts,
	.op = rm_op,
	.render = rm_render,
	.flags = WAP_APPLET_DESTRUCTIVE | WAP_APPLET_TREE,
};
