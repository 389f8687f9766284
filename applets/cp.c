/* wap cp: copy a file, or a directory tree with --recursive
 *
 * usage: wap cp [OPTIONS] SOURCE DESTINATION
 *
 * Copy SOURCE to DESTINATION, both inside the root.  When DESTINATION is
 * an existing directory, the copy goes into it.  An existing destination
 * is never replaced without --force, nor a read-only file (no write bit:
 * PERMISSION_DENIED) even with it.  A file is copied to a temp file and
 * renamed into place, keeping its mode; only the data of a sparse file is
 * copied, its holes stay holes.  A directory needs --recursive; its
 * tree is walked by directory fds, symbolic links in it are copied as
 * links (never followed), fifos and devices are skipped.  Missing parent
 * directories of DESTINATION are created.
 *
 *   SOURCE           the file or directory to copy
 *   DESTINATION      the new path, or an existing directory to copy into
 *   -r, --recursive  copy a directory and everything under it
 *   -f, --force      replace existing files, merge into existing directories
 *
 * JSON result: success, source, destination, isDirectory, files,
 * directories, links, bytes.
 *
 * examples:
 *   wap cp config.json config.json.bak
 *   wap cp -r templates/basic projects/new
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "applet.h"
#include "applets.h"
#include "strbuf.h"
#include "text.h"
#include "tree.h"

static const struct wap_opt cp_opts[] = {
	{ "source", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ "destination", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ "recursive", 'r', WAP_OPT_BOOL, 0, NULL },
	{ "force", 'f', WAP_OPT_BOOL, 0, NULL },
	{ NULL }
};

/* Under restrictedPaths nothing is copied out of a .git: a copy of its
 * object store is a repository of its own, whose commits `wap git` would
 * show or check out where no glob sees the restricted files in them (a
 * copy made bare showed them; ninth hostile review). */
static int from_git(const struct wap_ws *ws, int sfd, const char *src, struct wap_err *err)
{
	char *real = wap_ws_fd_rel(ws, sfd);
	const char *what = real ? wap_ws_protected(ws, real) : ".git";
	int rc = 0;

	if (what && !strcmp(what, ".git"))
		rc = wap_err_set(err, WAP_E_RESTRICTED,
			"Path restricted: %s is in a .git repository, which is not copied while "
			"restrictedPaths are set (its commits hold the restricted files)", src);
	free(real);
	return rc;
}

static int cp_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	const struct wap_ws *ws = call->ws;
	char *src = NULL, *dst0 = NULL, *dst = NULL;
	const char *dname;
	bool force = false, recursive = false;
	struct wap_copy_stats cs = { 0 };
	struct stat st;
	int sfd = -1, dpfd = -1, rc = -1;

	*res = NULL;
	if (wap_req_bool(req, "force", &force, err) < 0 ||
	    wap_req_bool(req, "recursive", &recursive, err) < 0 ||
	    wap_req_path(call, req, "source", NULL, &src, err) ||
	    wap_req_path(call, req, "destination", NULL, &dst0, err))
		goto out;
	if (!src || !dst0) {
		wap_err_set(err, WAP_E_INVALID, "missing required argument '%s'",
			    src ? "destination" : "source");
		goto out;
	}
	/* the source as cp(1) takes it: a symlink given by name is followed,
	 * beneath the root */
	sfd = wap_ws_open(ws, src, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0, WAP_ACC_READ, err);
	if (sfd < 0)
		goto out;
	if (fstat(sfd, &st)) {
		wap_err_errno(err, errno, src);
		goto out;
	}
	if (S_ISDIR(st.st_mode) && !recursive) {
		wap_err_set(err, WAP_E_NOT_FILE, "Is a directory: %s (use --recursive to copy it)", src);
		goto out;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		wap_err_set(err, WAP_E_NOT_FILE, "Not a regular file: %s", src);
		goto out;
	}
	if (ws->pol.restricted.n && from_git(ws, sfd, src, err))
		goto out;
	if (S_ISDIR(st.st_mode) && ws->pol.restricted.n &&
	    wap_tree_check_fd(ws, sfd, src, WAP_ACC_READ, err))
		goto out;
	if (wap_tree_dest(ws, src, dst0, &dst, err))
		goto out;
	if (!strcmp(dst, ".")) {
		wap_err_set(err, WAP_E_EXISTS, "Already exists: the workspace root");
		goto out;
	}
	/* every path the copy will create, judged where it lands: no .git
	 * is made, no restricted file written */
	if (S_ISDIR(st.st_mode) &&
	    wap_tree_check_dest(ws, sfd, ".", dst, -1, NULL, WAP_ACC_WRITE, err))
		goto out;
	dpfd = wap_ws_open_parent(ws, dst, true, &dname, err);
	if (dpfd < 0)
		goto out;
	/* and where it really lands: a symlink on the way to DST */
	if (S_ISDIR(st.st_mode) &&
	    wap_tree_check_dest(ws, sfd, ".", dst, dpfd, dname, WAP_ACC_WRITE, err))
		goto out;
	if (S_ISDIR(st.st_mode) && wap_tree_within(dpfd, st.st_dev, st.st_ino, ws->rootfd)) {
		wap_err_set(err, WAP_E_INVALID, "Cannot copy a directory into itself: %s -> %s", src, dst);
		goto out;
	}
	if (wap_tree_copy_fd(sfd, dpfd, dname, force, src, dst, &cs, err))
		goto out;
	*res = json_pack("{s:b, s:s, s:s, s:b, s:I, s:I, s:I, s:I}", "success", 1, "source", src,
			 "destination", dst, "isDirectory", S_ISDIR(st.st_mode),
			 "files", (json_int_t)cs.files, "directories", (json_int_t)cs.dirs,
			 "links", (json_int_t)cs.links, "bytes", (json_int_t)cs.bytes);
	rc = *res ? 0 : wap_err_oom(err);
out:
	if (sfd >= 0)
		close(sfd);
	if (dpfd >= 0)
		close(dpfd);
	free(src);
	free(dst0);
	free(dst);
	return rc;
}

static int cp_render(const json_t *res, const json_t *req, FILE *out)
{
	struct wap_sb a = WAP_SB_INIT, b = WAP_SB_INIT;

	(void)req;
	if (!out)
		return 0;
	fprintf(out, "Copied %s -> %s", wap_name_show(&a, json_string_value(json_object_get(res, "source"))),
		wap_name_show(&b, json_string_value(json_object_get(res, "destination"))));
	wap_sb_release(&a);
	wap_sb_release(&b);
	if (json_is_true(json_object_get(res, "isDirectory")))
		fprintf(out, " (%lld files, %lld directories, %lld links, %lld bytes)",
			(long long)json_integer_value(json_object_get(res, "files")),
			(long long)json_integer_value(json_object_get(res, "directories")),
			(long long)json_integer_value(json_object_get(res, "links")),
			(long long)json_integer_value(json_object_get(res, "bytes")));
	else
		fprintf(out, " (%lld bytes)", (long long)json_integer_value(json_object_get(res, "bytes")));
	fputc('\n', out);
	return 0;
}

const struct wap_applet wap_applet_cp = {
	.name = "cp",
	.summary = wap_summary_cp,
	.usage = wap_usage_cp,
	.title = "Copy",
	.opts = cp_opts,
	.op = cp_op,
	.render = cp_render,
	.flags = WAP_APPLET_DESTRUCTIVE | WAP_APPLET_TREE,
};
