/* wap glob: find files and directories by glob pattern
 *
 * usage: wap glob [OPTIONS] PATTERN [PATH]
 *
 * Find the files and directories under PATH (default: the workspace root)
 * whose path relative to PATH matches PATTERN: `*` (within a name), `**`
 * (any number of directories), `?`, `[abc]`, `[!a]`, `{a,b}` (nested
 * braces too).  A pattern without a slash matches names at the top of PATH
 * only; '**'/config finds what is named config at any depth.  The
 * walk skips what grep skips (default exclusions, .ignore files, and
 * .gitignore in a git work tree; never .git); symbolic links are listed,
 * not followed.  Newest first by default; at most 100 results
 * (--max-results), the result says when it was truncated and how many
 * were found.  No match is an empty list (exit status 1).
 *
 *   PATTERN                   the glob, relative to PATH
 *   PATH                      the directory to search (default: the root)
 *   -m, --max-results N       return at most N paths (default 100; 0: all)
 *   --sort ORDER              mtime (default: newest first), path or none
 *   -t, --type KIND           f: regular files only, d: directories only (symlinks: neither)
 *   --no-ignore               do not apply .gitignore, .git/info/exclude and .ignore
 *   --no-default-excludes     walk the default exclusions too (never .git)
 *   -L, --follow              follow symbolic links (loop-safe, within the root)
 *   --tagged                  text as "[FILE] path" / "[DIR] path" lines under a count
 *   -j, --threads N           walk with N threads (default: one per CPU)
 *
 * --json prints {files: [{path, isDirectory, mtime}], isTruncated,
 * totalFound}; paths are relative to the workspace root.
 *
 * examples:
 *   wap glob '**'/'*.ts' src
 *   wap glob '*.{c,h}' lib --sort path
 *   wap glob '**' --type d --json
 */
#include <errno.h>
#include <string.h>

#include "applet.h"
#include "applets.h"
#include "find.h"
#include "run.h"
#include "strbuf.h"
#include "text.h"

static const struct wap_opt glob_opts[] = {
	{ "max-results", 'm', WAP_OPT_INT, 0, NULL },
	{ "sort", 0, WAP_OPT_STR, 0, NULL },
	{ "type", 't', WAP_OPT_STR, 0, NULL },
	{ "no-ignore", 0, WAP_OPT_BOOL, 0, NULL },
	{ "no-default-excludes", 0, WAP_OPT_BOOL, 0, NULL },
	{ "follow", 'L', WAP_OPT_BOOL, 0, NULL },
	{ "tagged", 0, WAP_OPT_BOOL, 0, NULL },
	{ "threads", 'j', WAP_OPT_INT, 0, NULL },
	{ "pattern", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ "path", 0, WAP_OPT_STR, WAP_OPT_POS, NULL },
	{ NULL }
};

static int glob_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	struct wap_found fo;

	*res = NULL;
	if (wap_find(call, req, true, &fo, err))
		return -1;
	*res = wap_found_json(&fo);
	wap_found_release(&fo);
	return *res ? 0 : wap_err_oom(err);
}

static int glob_render(const json_t *res, const json_t *req, FILE *out)
{
	json_t *files = json_object_get(res, "files"), *f;
	long long total = json_integer_value(json_object_get(res, "totalFound"));
	bool tagged = json_is_true(json_object_get(req, "tagged"));
	struct wap_sb q = WAP_SB_INIT;
	size_t i;

	if (!out)
		return total ? 0 : 1;
	if (tagged) {
		const char *pat = json_string_value(json_object_get(req, "pattern"));
		const char *path = json_string_value(json_object_get(req, "path"));
		if (!total) {
			fprintf(out, "No matches found for pattern '%s' in %s\n", pat, path ? path : ".");
			return 1;
		}
		fprintf(out, "Found %lld match(es) for '%s':\n\n", total, pat);
	}
	json_array_foreach(files, i, f) {
		const char *p = wap_name_show(&q, json_string_value(json_object_get(f, "path")));
		if (tagged)
			fprintf(out, "%s %s\n", json_is_true(json_object_get(f, "isDirectory")) ?
				"[DIR]" : "[FILE]", p);
		else
			fprintf(out, "%s\n", p);
	}
	wap_sb_release(&q);
	if (json_is_true(json_object_get(res, "isTruncated")))
		fprintf(out, "[... %zu of %lld shown; use --max-results 0 for all]\n",
			json_array_size(files), total);
	return total ? 0 : 1;
}

/* The CLI: text straight from the sorted hits (no JSON document, and no
 * stat unless sorting by time); --json prints the op's result. */
static int glob_cli(struct wap_ws *ws, json_t *req, bool json, struct wap_cancel *cancel)
{
	struct wap_call call = { .ws = ws, .cancel = cancel };
	struct wap_err err = { 0 };
	struct wap_found fo;
	int status;
	long prev = wap_run_arm(&call, "glob");	/* the call's limit, as every door's */

	if (wap_run_disarm(&call, "glob", prev, wap_find(&call, req, json, &fo, &err), &err)) {
		if (json) {
			json_t *o = wap_err_json(&err);
			json_dumpf(o, stdout, JSON_COMPACT);
			fputc('\n', stdout);
			json_decref(o);
		} else {
			fprintf(stderr, "wap glob: %s\n", err.msg);
		}
		wap_err_release(&err);
		fflush(stdout);
		return 2;
	}
	if (json) {
		json_t *res = wap_found_json(&fo);
		json_dumpf(res, stdout, JSON_COMPACT);
		fputc('\n', stdout);
		json_decref(res);
	} else {
		static char obuf[1 << 16];
		bool tagged = json_is_true(json_object_get(req, "tagged"));
		const char *pat = json_string_value(json_object_get(req, "pattern"));
		const char *path = json_string_value(json_object_get(req, "path"));
		size_t shown = 0, used = 0;

		setvbuf(stdout, NULL, _IONBF, 0);
		if (tagged && !fo.total)
			printf("No matches found for pattern '%s' in %s\n", pat, path ? path : ".");
		else if (tagged)
			printf("Found %zu match(es) for '%s':\n\n", fo.total, pat);
		/* the lines straight into a buffer of our own: stdio's locking
		 * and length scans per line cost more than the copying */
		for (size_t i = 0; i < fo.total && (!fo.max || i < fo.max); i++, shown++) {
			const struct wap_hit *h = fo.all[i];
			const char *tag = !tagged ? "" : h->dir ? "[DIR] " : "[FILE] ";
			size_t tl = strlen(tag), n = tl + h->len + 1;
			if (sizeof(obuf) - used < n) {
				fwrite(obuf, 1, used, stdout);
				used = 0;
			}
			if (n > sizeof(obuf) || wap_name_quoted(h->path, h->len)) {
				struct wap_sb q = WAP_SB_INIT;
				fwrite(obuf, 1, used, stdout);
				used = 0;
				fputs(tag, stdout);
				fputs(wap_name_show(&q, h->path), stdout);
				fputc('\n', stdout);
				wap_sb_release(&q);
				continue;
			}
			memcpy(obuf + used, tag, tl);
			memcpy(obuf + used + tl, h->path, h->len);
			obuf[used + n - 1] = '\n';
			used += n;
		}
		fwrite(obuf, 1, used, stdout);
		if (fo.max && fo.total > fo.max)
			printf("[... %zu of %zu shown; use --max-results 0 for all]\n", shown, fo.total);
	}
	status = fo.total ? 0 : 1;
	wap_found_release(&fo);
	if (fflush(stdout) || ferror(stdout)) {
		if (errno == EPIPE)
			return status;
		fprintf(stderr, "wap glob: write error: %s\n", strerror(errno));
		return 2;
	}
	return status;
}

static const char glob_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"files\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
	"\"path\":{\"type\":\"string\"},\"isDirectory\":{\"type\":\"boolean\"},"
	"\"mtime\":{\"type\":\"string\"}},\"required\":[\"path\",\"isDirectory\",\"mtime\"]}},"
	"\"isTruncated\":{\"type\":\"boolean\"},\"totalFound\":{\"type\":\"integer\"}},"
	"\"required\":[\"files\",\"isTruncated\",\"totalFound\"]}";

const struct wap_applet wap_applet_glob = {
	.name = "glob",
	.summary = wap_summary_glob,
	.usage = wap_usage_glob,
	.title = "Find files by glob",
	.opts = glob_opts,
	.op = glob_op,
	.render = glob_render,
	.cli_main = glob_cli,
	.output_schema = glob_schema,
	.flags = WAP_APPLET_READONLY | WAP_APPLET_IDEMPOTENT | WAP_APPLET_EXIT2,
};

