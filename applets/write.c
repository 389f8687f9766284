/* wap write: write a file atomically, creating its parent directories
 *
 * usage: wap write [OPTIONS] PATH [--content TEXT]
 *
 * Write TEXT (or, without --content, everything on stdin) to PATH.  The
 * write is atomic: the bytes go to a temp file in the same directory
 * (unnamed until it is complete), which is fsync'd and renamed over PATH,
 * so a crash leaves the old file or the new one, never part of one.  An existing file keeps its mode.
 * Missing parent directories are created.  Append is atomic too (old
 * bytes + new bytes, renamed over).
 *
 * With --expected-version V (the version `wap read` printed) the write
 * happens only if the file still has that version; otherwise nothing is
 * written and the exit status is 13 (CONFLICT).  Of two writers holding
 * the same version exactly one wins.  "" means "must not exist yet".
 *
 *   PATH                  the file to write
 *   --content TEXT        the new content (default: read stdin)
 *   --mode MODE           overwrite (default), create (fail with
 *                         ALREADY_EXISTS if PATH exists) or append
 *   --expected-version V  refuse with CONFLICT unless PATH is at version V
 *   --force               replace a read-only file (no write bit) too; without
 *                         it that is PERMISSION_DENIED (exit 6)
 *   --no-parents          a missing parent directory is FILE_NOT_FOUND
 *                         instead of being created
 *
 * JSON result: success, path, bytesWritten, version (of the bytes now in
 * the file), created, size, mode.
 *
 * examples:
 *   wap write src/new.c --content 'int x;'
 *   some-generator | wap write out/gen.txt
 *   wap write notes.md --mode append --content 'one more line'
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "applet.h"
#include "applets.h"
#include "strbuf.h"
#include "text.h"
#include "file.h"

static const struct wap_opt write_opts[] = {
	{ "path", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ "content", 0, WAP_OPT_STR, 0, NULL },
	{ "mode", 0, WAP_OPT_STR, 0, NULL },
	{ "expected-version", 0, WAP_OPT_STR, 0, NULL },
	{ "force", 0, WAP_OPT_BOOL, 0, NULL },
	{ "no-parents", 0, WAP_OPT_BOOL, 0, NULL },
	{ NULL }
};

/* CLI: no --content means the content is stdin. */
static int write_prep(struct wap_call *call, json_t *req, struct wap_err *err)
{
	char *buf;
	size_t len;
	int rc;

	if (json_object_get(req, "content"))
		return 0;
	if (isatty(0))
		return wap_err_set(err, WAP_E_INVALID,
				   "missing --content (or pipe the content on stdin)");
	/* bounded: more than maxFileSize would be refused anyway */
	rc = wap_read_data(call->ws, "-", &buf, &len, err);
	if (rc)
		return rc;
	/* bytes as they are: the op writes them, never prints them */
	json_object_set_new(req, "content", json_stringn_nocheck(buf, len));
	free(buf);
	return 0;
}

static bool is_version(const char *v)
{
	size_t n = strlen(v);

	if (n == 0)
		return true;
	if (n != WAP_VERSION_LEN)
		return false;
	return strspn(v, "0123456789abcdef") == n;
}

static int write_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	const char *content = NULL, *mode = "overwrite", *expected = NULL;
	struct wap_wopts o = { .mkparents = true };
	struct wap_wres wr;
	char *rel = NULL;
	size_t len;
	bool noparents = false;
	int rc = -1;

	*res = NULL;
	if (wap_req_str(req, "content", &content, err) < 0 ||
	    wap_req_str(req, "mode", &mode, err) < 0 ||
	    wap_req_str(req, "expected_version", &expected, err) < 0 ||
	    wap_req_bool(req, "force", &o.force, err) < 0 ||
	    wap_req_bool(req, "no_parents", &noparents, err) < 0 ||
	    wap_req_path(call, req, "path", NULL, &rel, err))
		goto out;
	if (!rel) {
		wap_err_set(err, WAP_E_INVALID, "missing required argument 'path'");
		goto out;
	}
	if (!content) {
		wap_err_set(err, WAP_E_INVALID, "missing required argument 'content'");
		goto out;
	}
	o.mkparents = !noparents;
	if (!strcmp(mode, "overwrite"))
		o.mode = WAP_W_OVERWRITE;
	else if (!strcmp(mode, "create"))
		o.mode = WAP_W_CREATE;
	else if (!strcmp(mode, "append"))
		o.mode = WAP_W_APPEND;
	else {
		wap_err_set(err, WAP_E_INVALID,
			    "Invalid mode '%s': use create, overwrite or append", mode);
		goto out;
	}
	if (expected && !is_version(expected)) {
		wap_err_set(err, WAP_E_INVALID,
			    "Invalid expected_version '%.64s': a version is 40 hex digits, as read prints it",
			    expected);
		goto out;
	}
	o.expected_version = expected;
	len = json_string_length(json_object_get(req, "content"));
	if (wap_write_file(call->ws, rel, content, len, &o, &wr, err))
		goto out;
	*res = json_pack("{s:b, s:s, s:I, s:s, s:b, s:I, s:s}", "success", 1, "path", rel,
			 "bytesWritten", (json_int_t)len, "version", wr.version,
			 "created", wr.created, "size", (json_int_t)wr.size, "mode", mode);
	rc = *res ? 0 : wap_err_oom(err);
out:
	free(rel);
	return rc;
}

static int write_render(const json_t *res, const json_t *req, FILE *out)
{
	const char *mode = json_string_value(json_object_get(res, "mode"));
	struct wap_sb q = WAP_SB_INIT;

	(void)req;
	if (!out)
		return 0;
	fprintf(out, "%s %s: %lld bytes%s, version %s\n",
		json_is_true(json_object_get(res, "created")) ? "Created" :
		!strcmp(mode, "append") ? "Appended to" : "Overwrote",
		wap_name_show(&q, json_string_value(json_object_get(res, "path"))),
		(long long)json_integer_value(json_object_get(res, "bytesWritten")),
		!strcmp(mode, "append") ? " appended" : " written",
		json_string_value(json_object_get(res, "version")));
	wap_sb_release(&q);
	return 0;
}

const struct wap_applet wap_applet_write = {
	.name = "write",
	.summary = wap_summary_write,
	.usage = wap_usage_write,
	.title = "Write a file",
	.opts = write_opts,
	.op = write_op,
	.render = write_render,
	.flags = WAP_APPLET_DESTRUCTIVE,
	.cli_prep = write_prep,
};
