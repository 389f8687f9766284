/* wap mv: move or rename a file or directory inside the workspace
 *
 * usage: wap mv [OPTIONS] SOURCE DESTINATION
 *
 * Move SOURCE to DESTINATION with one rename(2), both inside the root.
 * When DESTINATION is an existing directory, SOURCE goes into it.  An
 * existing destination is never replaced without --force (the check and
 * the rename are one atomic step: RENAME_NOREPLACE), nor a read-only file
 * (no write bit: PERMISSION_DENIED) even with it.  Missing parent
 * directories of DESTINATION are created.  A symbolic link is moved as a
 * link.
 *
 *   SOURCE       the file or directory to move
 *   DESTINATION  the new path, or an existing directory to move it into
 *   -f, --force  replace an existing file (or empty directory)
 *
 * JSON result: success, source, destination, isDirectory.
 *
 * examples:
 *   wap mv src/old.c src/new.c
 *   wap mv notes.md docs/
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "applet.h"
#include "file.h"
#include "applets.h"
#include "strbuf.h"
#include "text.h"
#include "tree.h"

static const struct wap_opt mv_opts[] = {
	{ "source", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ "destination", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ "force", 'f', WAP_OPT_BOOL, 0, NULL },
	{ NULL }
};

static int mv_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	const struct wap_ws *ws = call->ws;
	char *src = NULL, *dst0 = NULL, *dst = NULL;
	const char *sname, *dname;
	bool force = false;
	struct stat st;
	int spfd = -1, dpfd = -1, rc = -1, r;

	*res = NULL;
	if (wap_req_bool(req, "force", &force, err) < 0 ||
	    wap_req_path(call, req, "source", NULL, &src, err) ||
	    wap_req_path(call, req, "destination", NULL, &dst0, err))
		goto out;
	if (!src || !dst0) {
		wap_err_set(err, WAP_E_INVALID, "missing required argument '%s'",
			    src ? "destination" : "source");
		goto out;
	}
	if (!strcmp(src, ".")) {
		wap_err_set(err, WAP_E_ACCESS, "Access denied: refusing to move the workspace root");
		goto out;
	}
	spfd = wap_ws_open_parent(ws, src, false, &sname, err);
	if (spfd < 0)
		goto out;
	if (fstatat(spfd, sname, &st, AT_SYMLINK_NOFOLLOW)) {
		wap_err_errno(err, errno, src);
		goto out;
	}
	if (wap_tree_dest(ws, src, dst0, &dst, err))
		goto out;
	/* what leaves the source and what arrives at the destination, every
	 * path in the tree: a nested .git, a restricted file */
	if (S_ISDIR(st.st_mode) &&
	    (wap_tree_check(ws, spfd, sname, src, WAP_ACC_WRITE, err) ||
	     wap_tree_check_dest(ws, spfd, sname, dst, -1, NULL, WAP_ACC_WRITE, err)))
		goto out;
	dpfd = wap_ws_open_parent(ws, dst, true, &dname, err);
	if (dpfd < 0)
		goto out;
	/* and where it really lands: a symlink on the way to DST */
	if (S_ISDIR(st.st_mode) &&
	    wap_tree_check_dest(ws, spfd, sname, dst, dpfd, dname, WAP_ACC_WRITE, err))
		goto out;
	if (S_ISDIR(st.st_mode) && wap_tree_within(dpfd, st.st_dev, st.st_ino, ws->rootfd)) {
		wap_err_set(err, WAP_E_INVALID, "Cannot move a directory into itself: %s -> %s", src, dst);
		goto out;
	}
	if (force) {
		/* a read-only file (no write bit) is never replaced: root
		 * passes EACCES checks, so wap looks at the mode itself */
		struct stat dst_st;
		if (fstatat(dpfd, dname, &dst_st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    wap_check_writable(&dst_st, dst, "remove it first (wap rm) to replace it", err))
			goto out;
	}
	r = force ? renameat(spfd, sname, dpfd, dname)
		  : renameat2(spfd, sname, dpfd, dname, RENAME_NOREPLACE);
	if (r) {
		int e = errno;
		if (e == EEXIST && !force)
			wap_err_set(err, WAP_E_EXISTS, "Already exists: %s (use --force to replace it)", dst);
		else if (e == EEXIST || e == ENOTEMPTY)
			wap_err_set(err, WAP_E_EXISTS, "Already exists: %s is a directory that is not empty", dst);
		else if (e == EISDIR)
			wap_err_set(err, WAP_E_NOT_FILE, "Cannot replace the directory %s with a file", dst);
		else if (e == ENOTDIR)
			wap_err_set(err, WAP_E_NOT_DIR, "Cannot replace the file %s with a directory", dst);
		else if (e == EXDEV)
			wap_err_set(err, WAP_E_FAILED, "Cannot move %s to %s: they are on different file systems", src, dst);
		else if (e == EINVAL)
			wap_err_set(err, WAP_E_INVALID, "Cannot move a directory into itself: %s -> %s", src, dst);
		else
			wap_err_errno(err, e, dst);
		goto out;
	}
	fsync(dpfd);
	fsync(spfd);
	*res = json_pack("{s:b, s:s, s:s, s:b}", "success", 1, "source", src, "destination", dst,
			 "isDirectory", S_ISDIR(st.st_mode));
	rc = *res ? 0 : wap_err_oom(err);
out:
	if (spfd >= 0)
		close(spfd);
	if (dpfd >= 0)
		close(dpfd);
	free(src);
	free(dst0);
	free(dst);
	return rc;
}

static int mv_render(const json_t *res, const json_t *req, FILE *out)
{
	struct wap_sb a = WAP_SB_INIT, b = WAP_SB_INIT;

	(void)req;
	if (out)
		fprintf(out, "Moved %s -> %s\n", wap_name_show(&a, json_string_value(json_object_get(res, "source"))),
			wap_name_show(&b, json_string_value(json_object_get(res, "destination"))));
	wap_sb_release(&a);
	wap_sb_release(&b);
	return 0;
}

const struct wap_applet wap_applet_mv = {
	.name = "mv",
	.summary = wap_summary_mv,
	.usage = wap_usage_mv,
	.title = "Move or rename",
	.opts = mv_opts,
	.op = mv_op,
	.render = mv_render,
	.flags = WAP_APPLET_DESTRUCTIVE | WAP_APPLET_TREE,
};
