/* wap stat: show a path's type, size, permissions, owner and times
 *
 * usage: wap stat [OPTIONS] PATH
 *
 * Show what PATH is (file, directory, symlink, ...), its size, its
 * permissions in octal, owner uid and gid, and its times: created (the
 * birth time, where the file system records it), modified, accessed.  A
 * directory shows how many entries it has, a symbolic link its target
 * (the link itself is described, not followed, unless -L), a file its
 * MIME type.
 *
 * With --exists, only answer whether PATH exists and what it is: a
 * missing path is an answer (exists: false, exit status 1, like test -e),
 * never an error.  Symbolic links are followed there, inside the root.
 *
 *   PATH          the path to describe
 *   -L, --follow  describe what a symbolic link leads to (inside the root),
 *                 as stat -L
 *   --exists      only {exists, isFile, isDirectory}
 *
 * JSON result: path, absolutePath, type, size, permissions, uid, gid,
 * created, modified, accessed, changed (ISO 8601), ctime and mtime (ms since
 * the epoch), isFile, isDirectory, isSymbolicLink, entries (directories),
 * target (symlinks), mimeType (files).
 *
 * examples:
 *   wap stat src/main.c
 *   wap stat build --exists && echo built
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "applet.h"
#include "applets.h"
#include "file.h"
#include "text.h"

static const struct wap_opt stat_opts[] = {
	{ "path", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ "follow", 'L', WAP_OPT_BOOL, 0, NULL },
	{ "exists", 0, WAP_OPT_BOOL, 0, NULL },
	{ NULL }
};

static const char *type_of(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return "file";
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symlink";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	case S_IFCHR: return "character-device";
	case S_IFBLK: return "block-device";
	}
	return "unknown";
}

static json_t *iso(const struct statx_timestamp *t)
{
	struct timespec ts = { .tv_sec = t->tv_sec, .tv_nsec = t->tv_nsec };
	char buf[32];

	wap_iso_time(&ts, buf);
	return json_string(buf);
}

static json_int_t ms(const struct statx_timestamp *t)
{
	return (json_int_t)t->tv_sec * 1000 + t->tv_nsec / 1000000;
}

static int exists_op(const struct wap_call *call, const char *rel, json_t **res,
		     struct wap_err *err)
{
	struct wap_err tmp = { 0 };
	struct stat st;
	int fd = wap_ws_open(call->ws, rel, O_PATH, 0, WAP_ACC_READ, &tmp);
	bool ok = false;

	if (fd < 0) {
		if (tmp.kind != WAP_E_NOT_FOUND && tmp.kind != WAP_E_NOT_DIR) {
			if (err) {
				*err = tmp;
				return -1;
			}
			wap_err_release(&tmp);
			return -1;
		}
		wap_err_release(&tmp);
	} else {
		ok = fstat(fd, &st) == 0;
		close(fd);
	}
	*res = json_object();
	if (!*res || wap_json_set_name(*res, "path", rel) ||
	    json_object_set_new(*res, "exists", json_boolean(ok)) ||
	    json_object_set_new(*res, "isFile", json_boolean(ok && S_ISREG(st.st_mode))) ||
	    json_object_set_new(*res, "isDirectory", json_boolean(ok && S_ISDIR(st.st_mode)))) {
		json_decref(*res);
		*res = NULL;
		return wap_err_oom(err);
	}
	return 0;
}

static int stat_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	const struct wap_ws *ws = call->ws;
	bool exists = false, follow = false;
	struct statx sx;
	char *rel = NULL, *abs;
	char perm[8];
	int fd = -1, rc = -1;
	mode_t m;
	json_t *o, *rest;

	*res = NULL;
	if (wap_req_bool(req, "exists", &exists, err) < 0 ||
	    wap_req_bool(req, "follow", &follow, err) < 0 ||
	    wap_req_path(call, req, "path", NULL, &rel, err))
		goto out;
	if (!rel) {
		wap_err_set(err, WAP_E_INVALID, "missing required argument 'path'");
		goto out;
	}
	if (exists) {
		rc = exists_op(call, rel, res, err);
		goto out;
	}
	/* O_PATH|O_NOFOLLOW: a symlink is described, not followed (-L:
	 * followed, inside the root as every open) */
	fd = wap_ws_open(ws, rel, O_PATH | (follow ? 0 : O_NOFOLLOW), 0, WAP_ACC_READ, err);
	if (fd < 0) {
		if (err && err->kind == WAP_E_NOT_FOUND)
			wap_err_set(err, WAP_E_NOT_FOUND, "Path not found: %s", rel);
		goto out;
	}
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
		  STATX_BASIC_STATS | STATX_BTIME, &sx)) {
		wap_err_set(err, WAP_E_FAILED, "Failed to get file info - %s", strerror(errno));
		goto out;
	}
	m = sx.stx_mode;
	snprintf(perm, sizeof(perm), "%03o", m & 07777);
	abs = wap_ws_abs(ws, rel);
	/* names need not be UTF-8: path and absolutePath first, each lossless */
	o = json_object();
	rest = json_pack("{s:s, s:I, s:s, s:I, s:I, s:o, s:o, s:o, s:I, s:I, s:b, s:b, s:b}",
		"type", type_of(m),
		"size", (json_int_t)sx.stx_size, "permissions", perm,
		"uid", (json_int_t)sx.stx_uid, "gid", (json_int_t)sx.stx_gid,
		"modified", iso(&sx.stx_mtime), "accessed", iso(&sx.stx_atime),
		"changed", iso(&sx.stx_ctime),
		"mtime", ms(&sx.stx_mtime), "ctime", ms(&sx.stx_ctime),
		"isFile", S_ISREG(m), "isDirectory", S_ISDIR(m), "isSymbolicLink", S_ISLNK(m));
	if (!o || !rest || wap_json_set_name(o, "path", rel) ||
	    (abs && wap_json_set_name(o, "absolutePath", abs)) || json_object_update(o, rest)) {
		free(abs);
		json_decref(rest);
		json_decref(o);
		o = NULL;
		wap_err_oom(err);
		goto out;
	}
	free(abs);
	json_decref(rest);
	json_object_set_new(o, "created", (sx.stx_mask & STATX_BTIME) ? iso(&sx.stx_btime) : json_null());
	if (S_ISDIR(m)) {
		int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		struct dirent *de;
		struct wap_err tmp = { 0 };
		char *real = NULL;
		long long n = 0;
		if (d && !wap_ws_listing_real(ws, dirfd(d), rel, &real, &tmp)) {
			/* what ls would list: restricted names are not counted,
			 * judged also where a linked directory really is */
			while ((de = readdir(d)))
				n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
				     !wap_ws_restricted_in(ws, rel, de->d_name) &&
				     !(real && wap_ws_restricted_in(ws, real, de->d_name));
			json_object_set_new(o, "entries", json_integer(n));
		}
		wap_err_release(&tmp);
		free(real);
		if (d)
			closedir(d);
		else if (dfd >= 0)
			close(dfd);
	} else if (S_ISLNK(m)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(fd, "", target, sizeof(target) - 1);
		if (n >= 0) {
			target[n] = 0;
			wap_json_set_name(o, "target", target);
		}
	} else if (S_ISREG(m)) {
		char head[512];
		ssize_t n = -1;
		struct wap_err tmp = { 0 };
		int rfd = wap_ws_open(ws, rel, O_RDONLY | (follow ? 0 : O_NOFOLLOW) | O_NONBLOCK |
				      O_NOCTTY, 0, WAP_ACC_READ, &tmp);
		if (rfd >= 0) {
			n = pread(rfd, head, sizeof(head), 0);
			close(rfd);
		}
		wap_err_release(&tmp);
		json_object_set_new(o, "mimeType", json_string(wap_text_mime(rel, n > 0 ? head : NULL,
									    n > 0 ? (size_t)n : 0)));
	}
	*res = o;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(rel);
	return rc;
}

/* "2026-11-21T23:54:18.123Z" -> "2026-11-21 23:54:18 UTC" */
static void when(FILE *out, const char *label, json_t *v)
{
	const char *s = json_string_value(v);

	if (!s)
		fprintf(out, "%s: unknown\n", label);
	else
		fprintf(out, "%s: %.10s %.8s UTC\n", label, s, s + 11);
}

static void human(FILE *out, long long n)
{
	static const char *const unit[] = { "KB", "MB", "GB", "TB" };
	double v = n;
	int u = -1;

	if (n < 1024) {
		fprintf(out, "Size: %lld bytes\n", n);
		return;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	fprintf(out, "Size: %.2f %s\n", v, unit[u]);
}

static int stat_render(const json_t *res, const json_t *req, FILE *out)
{
	struct wap_sb q = WAP_SB_INIT;
	const char *path;
	json_t *v;
	int rc = 0;

	(void)req;
	if (!out)
		return json_object_get(res, "type") || json_is_true(json_object_get(res, "exists")) ? 0 : 1;
	path = wap_name_show(&q, json_string_value(json_object_get(res, "path")));
	if (!json_object_get(res, "type")) {
		if (json_is_true(json_object_get(res, "exists")))
			fprintf(out, "%s exists (%s)\n", path,
				json_is_true(json_object_get(res, "isDirectory")) ? "directory" :
				json_is_true(json_object_get(res, "isFile")) ? "file" : "other");
		else {
			fprintf(out, "%s does not exist\n", path);
			rc = 1;
		}
		wap_sb_release(&q);
		return rc;
	}
	fprintf(out, "Path: %s\n", path);
	fprintf(out, "Type: %s\n", json_string_value(json_object_get(res, "type")));
	if (!json_is_true(json_object_get(res, "isDirectory")))
		human(out, json_integer_value(json_object_get(res, "size")));
	fprintf(out, "Permissions: %s\n", json_string_value(json_object_get(res, "permissions")));
	fprintf(out, "Owner UID: %lld\n", (long long)json_integer_value(json_object_get(res, "uid")));
	fprintf(out, "Owner GID: %lld\n", (long long)json_integer_value(json_object_get(res, "gid")));
	when(out, "Created", json_object_get(res, "created"));
	when(out, "Modified", json_object_get(res, "modified"));
	when(out, "Accessed", json_object_get(res, "accessed"));
	if ((v = json_object_get(res, "entries")))
		fprintf(out, "Entries: %lld\n", (long long)json_integer_value(v));
	if ((v = json_object_get(res, "target")))
		fprintf(out, "Target: %s\n", wap_name_show(&q, json_string_value(v)));
	if ((v = json_object_get(res, "mimeType")))
		fprintf(out, "MIME type: %s\n", json_string_value(v));
	wap_sb_release(&q);
	return 0;
}

const struct wap_applet wap_applet_stat = {
	.name = "stat",
	.summary = wap_summary_stat,
	.usage = wap_usage_stat,
	.title = "File info",
	.opts = stat_opts,
	.op = stat_op,
	.render = stat_render,
	.flags = WAP_APPLET_READONLY | WAP_APPLET_IDEMPOTENT | WAP_APPLET_QUICK,
};
