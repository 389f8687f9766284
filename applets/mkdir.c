/* wap mkdir: create a directory and its parents (like mkdir -p)
 *
 * usage: wap mkdir [OPTIONS] PATH
 *
 * Create the directory PATH and any missing parents.  An existing
 * directory is fine (created: false); a file in the way is
 * NOT_A_DIRECTORY.  Each directory is created relative to its parent's
 * fd, beneath the root.
 *
 *   PATH  the directory to create
 *
 * JSON result: success, path, created.
 *
 * examples:
 *   wap mkdir src/lib/util
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

static const struct wap_opt mkdir_opts[] = {
	{ "path", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ NULL }
};

static int mkdir_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	const struct wap_ws *ws = call->ws;
	const char *name;
	char *rel = NULL;
	bool created = false;
	struct stat st;
	int pfd = -1, rc = -1;

	*res = NULL;
	if (wap_req_path(call, req, "path", NULL, &rel, err))
		goto out;
	if (!rel) {
		wap_err_set(err, WAP_E_INVALID, "missing required argument 'path'");
		goto out;
	}
	if (strcmp(rel, ".")) {
		pfd = wap_ws_open_parent(ws, rel, true, &name, err);
		if (pfd < 0)
			goto out;
		if (mkdirat(pfd, name, 0777) == 0) {
			created = true;
		} else if (errno != EEXIST) {
			wap_err_errno(err, errno, rel);
			goto out;
		} else if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode)) {
			/* a symlink counts only if it leads to a directory
			 * beneath the root */
			int fd = -1;
			if (!fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode)) {
				fd = wap_ws_open(ws, rel, O_PATH | O_DIRECTORY, 0, WAP_ACC_WRITE, err);
				if (fd < 0 && err && err->kind != WAP_E_NOT_DIR && err->kind != WAP_E_NOT_FOUND)
					goto out;
			}
			if (fd < 0) {
				wap_err_set(err, WAP_E_NOT_DIR, "Path exists but is not a directory: %s", rel);
				goto out;
			}
			close(fd);
		}
	}
	*res = json_pack("{s:b, s:s, s:b}", "success", 1, "path", rel, "created", created);
	rc = *res ? 0 : wap_err_oom(err);
out:
	if (pfd >= 0)
		close(pfd);
	free(rel);
	return rc;
}

static int mkdir_render(const json_t *res, const json_t *req, FILE *out)
{
	struct wap_sb q = WAP_SB_INIT;

	(void)req;
	if (out)
		fprintf(out, "%s %s\n", json_is_true(json_object_get(res, "created")) ?
			"Created directory" : "Directory already exists:",
			wap_name_show(&q, json_string_value(json_object_get(res, "path"))));
	wap_sb_release(&q);
	return 0;
}

const struct wap_applet wap_applet_mkdir = {
	.name = "mkdir",
	.summary = wap_summary_mkdir,
	.usage = wap_usage_mkdir,
	.title = "Create a directory",
	.opts = mkdir_opts,
	.op = mkdir_op,
	.render = mkdir_render,
	.flags = WAP_APPLET_IDEMPOTENT,
};
