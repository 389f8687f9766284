/* wap edit: change files in place: exact or fuzzy replace, line ops, positions, patches
 *
 * usage: wap edit PATH --old TEXT --new TEXT [--replace-all] [--exact] [--match MODE]
 *        wap edit PATH (--edits | --ops | --text-edits) FILE.json
 *        wap edit [PATH] --patch FILE|-
 *
 * Edit a file without rewriting it: every mode computes the whole new
 * content in memory and writes it once, atomically (or writes nothing).
 * CRLF files stay CRLF, the trailing-newline state and the mode bits are
 * kept, and --expected-version refuses the edit if the file changed since
 * it was read.  The result carries the unified diff (cut at maxFileSize,
 * with diffTruncated) and the new version.
 *
 * When the exact old text is not found, fallbacks are tried in order, each
 * accepted only if it finds exactly one place (several: an error listing
 * their lines, never a guess): trailing_whitespace (ignored per line),
 * whitespace (leading and trailing, per line; new text re-indented),
 * indentation (common indent removed on both sides), unicode (typographic
 * quotes, dashes, non-breaking spaces), escapes (a model's literal
 * backslash-n, backslash-t and backslash-quote), trimmed (old and new
 * taken without the blank lines and spaces around them).  The result
 * names the strategy that matched.
 *
 *   PATH                     the file to edit (with --patch: the file a
 *                            patch without file headers applies to)
 *   --old TEXT               text to replace; empty creates a missing file
 *   --new TEXT               replacement text
 *   --old-file FILE          read the old text from FILE
 *   --new-file FILE          read the new text from FILE
 *   --replace-all            replace every occurrence (else exactly one)
 *   --exact                  no fuzzy fallback: the old text must match exactly
 *   --match MODE             how old is found: wap (the fallbacks above, the
 *                            default), exact (as --exact) or opencode
 *                            (OpenCode's edit tool: its replacers in its order,
 *                            exact, line_trimmed, block_anchor (first and last
 *                            line anchor a block), whitespace_normalized,
 *                            indentation_flexible, escape_normalized,
 *                            trimmed_boundary, context_aware; the new text
 *                            inserted as given)
 *   --edits FILE.json        several replacements [{old,new,replace_all}],
 *                            applied in order; any failure writes nothing
 *   --ops FILE.json          line operations (WAP modifyFile): {type:"replace",
 *                            startLine,endLine,newContent}, {type:"insert",
 *                            afterLine,newContent} (0 = top), {type:"delete",
 *                            startLine,endLine}, {type:"regexReplace",pattern,
 *                            replacement,flags} (PCRE2, g = global, $1 groups);
 *                            1-based lines of the file before the call,
 *                            overlaps refused; regexReplace runs after the
 *                            line operations
 *   --text-edits FILE.json   LSP TextEdits [{range:{start:{line,character},
 *                            end:{...}},newText}] (or {position,text}; no
 *                            text deletes the range): 0-based, characters in
 *                            UTF-16 code units, no overlaps, all or nothing
 *   --patch FILE|-           apply a patch: '*** Begin Patch' (Add File, Delete
 *                            File, Update File, Move to, @@ context, End of
 *                            File) or a unified diff (git diff, diff -u); a
 *                            patch failing on any file changes nothing
 *   --dry-run                show the diff, write nothing
 *   --expected-version V     refuse (CONFLICT) unless the file's version is V
 *   --force                  change a read-only file (no write bit) too; without
 *                            it that is PERMISSION_DENIED
 *
 * Every FILE above is a path in the workspace like PATH (relative to the
 * root, under restrictedPaths; a regular file, never a FIFO or device),
 * or "-" for stdin; the JSON options also take the JSON text itself.
 *
 * Errors: NO_MATCH "oldString not found in content"; MULTIPLE_MATCHES
 * "Found multiple matches for oldString ..." with the matching lines;
 * INVALID_ARGUMENT when old equals new; CONFLICT on a stale version.
 * Patch output: one "A path", "M path", "D path" or "R old -> new" line per
 * file (--json: the diffs too).
 *
 * examples:
 *   wap edit src/app.js --old 'const port = 3000' --new 'const port = 8080'
 *   wap edit src/app.js --old 'var ' --new 'let ' --replace-all --dry-run
 *   wap edit notes.md --ops '[{"type":"insert","afterLine":0,"newContent":"# Notes"}]'
 *   git diff > fix.patch; wap edit --patch fix.patch
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "applet.h"
#include "applets.h"
#include "diff.h"
#include "edit.h"
#include "file.h"
#include "patch.h"
#include "strbuf.h"
#include "text.h"

static const struct wap_opt edit_opts[] = {
	{ "path", 0, WAP_OPT_STR, WAP_OPT_POS, NULL },
	{ "old", 0, WAP_OPT_STR, 0, NULL },
	{ "new", 0, WAP_OPT_STR, 0, NULL },
	{ "old-file", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ "new-file", 0, WAP_OPT_STR, WAP_OPT_CLI, NULL },
	{ "replace-all", 0, WAP_OPT_BOOL, 0, NULL },
	{ "exact", 0, WAP_OPT_BOOL, 0, NULL },
	{ "match", 0, WAP_OPT_STR, 0, NULL },
	{ "edits", 0, WAP_OPT_JSON, 0, NULL },
	{ "ops", 0, WAP_OPT_JSON, 0, NULL },
	{ "text-edits", 0, WAP_OPT_JSON, 0, NULL },
	{ "patch", 0, WAP_OPT_STR, 0, NULL },
	{ "dry-run", 0, WAP_OPT_BOOL, 0, NULL },
	{ "expected-version", 0, WAP_OPT_STR, 0, NULL },
	{ "force", 0, WAP_OPT_BOOL, 0, NULL },
	{ NULL }
};

/* ---- CLI: --old-file, --new-file, --patch FILE|- ---- */

/* --old-file, --new-file and --patch name data files: workspace paths read
 * beneath the root under its policy ("-" is stdin), see wap_read_data. */
static int load_into(const struct wap_ws *ws, json_t *req, const char *from, const char *to,
		     struct wap_err *err)
{
	const char *name = json_string_value(json_object_get(req, from));
	char *buf;
	size_t len;

	if (!name)
		return 0;
	if (json_object_get(req, to) && strcmp(from, to))
		return wap_err_set(err, WAP_E_INVALID, "give --%s or --%.*s, not both", to,
				   (int)(strchr(from, '_') - from), from);
	if (wap_read_data(ws, name, &buf, &len, err))
		return -1;
	json_object_set_new(req, to, json_stringn_nocheck(buf, len));
	free(buf);
	if (strcmp(from, to))
		json_object_del(req, from);
	return 0;
}

static int edit_prep(struct wap_call *call, json_t *req, struct wap_err *err)
{
	const struct wap_ws *ws = call->ws;

	return load_into(ws, req, "old_file", "old", err) || load_into(ws, req, "new_file", "new", err) ||
	       load_into(ws, req, "patch", "patch", err) ? -1 : 0;
}

/* ---- the op ---- */

struct xform {
	const struct wap_edit_spec *spec;
	const char *rel;
	struct wap_edit_info info;
	struct wap_diff diff;
	bool have_diff;
};

static int xform_fn(void *arg, const char *old, size_t oldlen, char **out, size_t *outlen,
		    struct wap_err *err)
{
	struct xform *x = arg;

	if (wap_edit_apply(x->spec, old, oldlen, out, outlen, &x->info, err))
		return -1;
	if (wap_diff_make(old, oldlen, *out, *outlen, x->rel, x->rel, &x->diff, err)) {
		free(*out);
		*out = NULL;
		return -1;
	}
	x->have_diff = true;
	return 0;
}

/* Cut OBJ's "diff" at a line boundary when it is over CAP bytes, and say
 * so: a huge replace-all must not flood a client. */
static void cap_diff(json_t *obj, size_t cap)
{
	json_t *d = json_object_get(obj, "diff");
	const char *t = json_string_value(d);
	size_t len = json_string_length(d), cut;

	if (!t || len <= cap)
		return;
	cut = cap;
	while (cut && t[cut - 1] != '\n')
		cut--;
	if (!cut)
		cut = wap_text_utf8_cut(t, len, cap);
	json_object_set_new(obj, "diffBytes", json_integer((json_int_t)len));
	json_object_set_new(obj, "diffTruncated", json_true());
	json_object_set_new(obj, "diff", json_stringn(t, cut));
}

static int patch_op(struct wap_call *call, const json_t *req, const char *text, size_t len,
		    bool dry, const char *ev, json_t **res, struct wap_err *err)
{
	struct wap_patch p;
	char *rel = NULL;
	json_t *files = NULL;
	struct wap_sb all = WAP_SB_INIT;
	size_t i;
	json_t *f;

	if (wap_req_path(call, req, "path", NULL, &rel, err))
		return -1;
	if (wap_patch_parse(text, len, rel, &p, err)) {
		free(rel);
		return -1;
	}
	if (rel) {
		/* PATH with a patch naming files: they must all be PATH */
		for (size_t k = 0; k < p.n; k++) {
			char *r = NULL;
			bool same = false;
			if (wap_ws_rel(call->ws, p.f[k].path, strlen(p.f[k].path), &r, NULL) == 0)
				same = !strcmp(r, rel);
			free(r);
			if (!same || p.f[k].move_to) {
				wap_err_set(err, WAP_E_INVALID, "the patch changes %s, not %s",
					    p.f[k].path, rel);
				wap_patch_release(&p);
				free(rel);
				return -1;
			}
		}
	}
	free(rel);
	if (wap_req_bool(req, "force", &p.force, err) < 0 ||
	    wap_patch_run(call->ws, &p, ev, dry, &files, err)) {
		wap_patch_release(&p);
		return -1;
	}
	wap_patch_release(&p);
	json_array_foreach(files, i, f)
		wap_sb_adds(&all, json_string_value(json_object_get(f, "diff")));
	*res = json_pack("{s:o, s:s, s:b}", "files", files, "diff", all.buf ? all.buf : "",
			 "dryRun", dry);
	wap_sb_release(&all);
	if (!*res)
		return wap_err_oom(err);
	json_array_foreach(files, i, f)
		cap_diff(f, call->ws->lim.max_file_size);
	cap_diff(*res, call->ws->lim.max_file_size);
	return 0;
}

/* A list argument (a new reference in *OUT, or NULL when absent): some
 * clients send nested JSON as a string, so a string is parsed. */
static int json_list(const json_t *req, const char *key, json_t **out, struct wap_err *err)
{
	json_t *v = json_object_get(req, key);
	json_error_t je;

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		*out = json_incref(v);
		return 0;
	}
	*out = json_loadb(json_string_value(v), json_string_length(v), JSON_DECODE_ANY, &je);
	if (!*out)
		return wap_err_set(err, WAP_E_INVALID, "argument '%s' is a string but not JSON: %s",
				   key, je.text);
	return 0;
}

static int edit_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	struct wap_edit_spec spec = { 0 };
	struct xform x = { 0 };
	const char *old = NULL, *new = NULL, *patch = NULL, *ev = NULL, *match = NULL;
	bool dry = false, created = false, force = false;
	json_t *edits = NULL, *ops = NULL, *tedits = NULL;
	char *rel = NULL, version[WAP_VERSION_LEN + 1] = "";
	int modes = 0, rc = -1;

	*res = NULL;
	if (wap_req_str(req, "old", &old, err) < 0 || wap_req_str(req, "new", &new, err) < 0 ||
	    wap_req_str(req, "patch", &patch, err) < 0 ||
	    wap_req_str(req, "expected_version", &ev, err) < 0 ||
	    wap_req_bool(req, "dry_run", &dry, err) < 0 ||
	    wap_req_bool(req, "force", &force, err) < 0 ||
	    wap_req_bool(req, "replace_all", &spec.replace_all, err) < 0 ||
	    wap_req_bool(req, "exact", &spec.exact, err) < 0 ||
	    wap_req_str(req, "match", &match, err) < 0)
		return -1;
	if (match && !strcmp(match, "exact")) {
		spec.exact = true;
	} else if (match && !strcmp(match, "opencode")) {
		if (spec.exact)
			return wap_err_set(err, WAP_E_INVALID, "give --exact or --match opencode, not both");
		spec.opencode = true;
	} else if (match && strcmp(match, "wap")) {
		return wap_err_set(err, WAP_E_INVALID,
				   "--match must be wap, opencode or exact, not '%s'", match);
	}
	if (json_list(req, "edits", &edits, err) || json_list(req, "ops", &ops, err) ||
	    json_list(req, "text_edits", &tedits, err))
		goto out;
	modes = (old || new) + !!edits + !!ops + !!tedits + !!patch;
	if (modes != 1) {
		wap_err_set(err, WAP_E_INVALID,
			    modes ? "give only one of old/new, edits, ops, text_edits or patch"
				  : "nothing to do: give old and new, edits, ops, text_edits or patch "
				    "(see 'wap edit --help')");
		goto out;
	}
	if (patch) {
		json_t *pj = json_object_get(req, "patch");
		rc = patch_op(call, req, patch, json_string_length(pj), dry, ev, res, err);
		goto out;
	}
	if (wap_req_path(call, req, "path", NULL, &rel, err))
		goto out;
	if (!rel) {
		wap_err_set(err, WAP_E_INVALID, "missing PATH (see 'wap edit --help')");
		goto out;
	}
	spec.path = rel;
	spec.max = call->ws->lim.max_file_size;
	spec.cancel = call->cancel;
	if (old || new) {
		spec.mode = WAP_EDIT_REPLACE;
		if (!old || !new) {
			wap_err_set(err, WAP_E_INVALID, "give both old and new");
			goto out;
		}
		spec.old = old;
		spec.oldlen = json_string_length(json_object_get(req, "old"));
		spec.new = new;
		spec.newlen = json_string_length(json_object_get(req, "new"));
	} else if (edits) {
		spec.mode = WAP_EDIT_MULTI;
		spec.list = edits;
	} else if (ops) {
		spec.mode = WAP_EDIT_OPS;
		spec.list = ops;
	} else {
		spec.mode = WAP_EDIT_POSITIONS;
		spec.list = tedits;
	}
	if (wap_edit_validate(&spec, err))
		goto out;
	x.spec = &spec;
	x.rel = rel;
	if (dry) {
		char *buf = NULL, *nw = NULL;
		size_t len = 0, nl = 0;
		struct wap_err tmp = { 0 };
		bool exists = true;
		if (wap_read_file(call->ws, rel, call->ws->lim.max_file_size, &buf, &len, NULL, &tmp)) {
			if (tmp.kind != WAP_E_NOT_FOUND || !wap_edit_may_create(&spec)) {
				if (err)
					*err = tmp;
				else
					wap_err_release(&tmp);
				goto out;
			}
			wap_err_release(&tmp);
			exists = false;
		}
		if (exists && wap_blob_id(buf, len, version, err)) {
			free(buf);
			goto out;
		}
		if (ev && strcmp(ev, exists ? version : "")) {
			if (exists)
				wap_err_set(err, WAP_E_CONFLICT,
					    "Conflict: %s changed since version %s (now %s); read it again",
					    rel, ev, version);
			else
				wap_err_set(err, WAP_E_CONFLICT,
					    "Conflict: %s no longer exists (expected version %s)", rel, ev);
			free(buf);
			goto out;
		}
		rc = xform_fn(&x, exists ? buf : NULL, len, &nw, &nl, err);
		free(buf);
		free(nw);
		if (rc)
			goto out;
		created = !exists;
		rc = -1;
	} else {
		struct wap_wres wr;
		unsigned fl = (wap_edit_may_create(&spec) ? WAP_UPD_CREATE : 0) |
			      (force ? WAP_UPD_FORCE : 0);
		if (wap_update_file(call->ws, rel, fl, ev, xform_fn, &x, &wr, err))
			goto out;
		memcpy(version, wr.version, sizeof(version));
		created = wr.created;
	}
	*res = json_pack("{s:s, s:I, s:I, s:I, s:I, s:s, s:s, s:b, s:b}",
			 "path", rel,
			 "replacements", (json_int_t)x.info.replacements,
			 "linesChanged", (json_int_t)(x.diff.additions > x.diff.deletions ?
						      x.diff.additions : x.diff.deletions),
			 "additions", (json_int_t)x.diff.additions,
			 "deletions", (json_int_t)x.diff.deletions,
			 "diff", "",
			 "strategy", wap_strategy_name(x.info.strategy),
			 "created", created,
			 "dryRun", dry);
	if (!*res) {
		wap_err_oom(err);
		goto out;
	}
	json_object_set_new(*res, "diff", wap_diff_json(&x.diff));
	cap_diff(*res, call->ws->lim.max_file_size);
	json_object_set_new(*res, "version", *version ? json_string(version) : json_null());
	if (x.info.strategies)
		json_object_set(*res, "strategies", x.info.strategies);
	rc = 0;
out:
	wap_edit_info_release(&x.info);
	if (x.have_diff)
		wap_diff_release(&x.diff);
	free(rel);
	json_decref(edits);
	json_decref(ops);
	json_decref(tedits);
	return rc;
}

/* ---- text ---- */

static int edit_render(const json_t *res, const json_t *req, FILE *out)
{
	json_t *files = json_object_get(res, "files"), *f;
	bool dry = json_is_true(json_object_get(res, "dryRun"));
	struct wap_sb a = WAP_SB_INIT, b = WAP_SB_INIT;
	size_t i;

	(void)req;
	if (!out)
		return 0;
	if (files) {
		json_array_foreach(files, i, f) {
			const char *from = json_string_value(json_object_get(f, "from"));
			const char *st = json_string_value(json_object_get(f, "status"));
			const char *path = wap_name_show(&b, json_string_value(json_object_get(f, "path")));
			if (from)
				fprintf(out, "%s %s -> %s\n", st, wap_name_show(&a, from), path);
			else
				fprintf(out, "%s %s\n", st, path);
		}
	} else {
		long long n = json_integer_value(json_object_get(res, "replacements"));
		const char *strat = json_string_value(json_object_get(res, "strategy"));
		fprintf(out, "%s %s: %lld %s, +%lld -%lld",
			json_is_true(json_object_get(res, "created")) ? "A" : "M",
			wap_name_show(&a, json_string_value(json_object_get(res, "path"))), n,
			n == 1 ? "change" : "changes",
			(long long)json_integer_value(json_object_get(res, "additions")),
			(long long)json_integer_value(json_object_get(res, "deletions")));
		if (strat && strcmp(strat, "exact"))
			fprintf(out, " (matched by the %s fallback)", strat);
		fputc('\n', out);
	}
	if (dry) {
		fputs(json_string_value(json_object_get(res, "diff")), out);
		if (json_is_true(json_object_get(res, "diffTruncated")))
			fprintf(out, "(diff cut at %zu of %lld bytes)\n",
				json_string_length(json_object_get(res, "diff")),
				(long long)json_integer_value(json_object_get(res, "diffBytes")));
		fputs("(dry run: nothing written)\n", out);
	}
	wap_sb_release(&a);
	wap_sb_release(&b);
	return 0;
}

static const char edit_schema[] =
"{\"type\":\"object\",\"properties\":{"
"\"path\":{\"type\":\"string\"},\"replacements\":{\"type\":\"integer\"},"
"\"linesChanged\":{\"type\":\"integer\"},\"additions\":{\"type\":\"integer\"},"
"\"deletions\":{\"type\":\"integer\"},\"diff\":{\"type\":\"string\"},"
"\"version\":{\"type\":[\"string\",\"null\"]},\"strategy\":{\"type\":\"string\"},"
"\"strategies\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
"\"created\":{\"type\":\"boolean\"},\"dryRun\":{\"type\":\"boolean\"},"
"\"diffTruncated\":{\"type\":\"boolean\"},\"diffBytes\":{\"type\":\"integer\"},"
"\"files\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
"\"status\":{\"type\":\"string\",\"enum\":[\"A\",\"M\",\"D\",\"R\"]},"
"\"path\":{\"type\":\"string\"},\"from\":{\"type\":\"string\"},"
"\"diff\":{\"type\":\"string\"},\"additions\":{\"type\":\"integer\"},"
"\"deletions\":{\"type\":\"integer\"},\"version\":{\"type\":\"string\"}},"
"\"required\":[\"status\",\"path\",\"diff\"]}}},"
"\"required\":[\"diff\",\"dryRun\"]}";

const struct wap_applet wap_applet_edit = {
	.name = "edit",
	.summary = wap_summary_edit,
	.usage = wap_usage_edit,
	.title = "Edit files",
	.opts = edit_opts,
	.op = edit_op,
	.render = edit_render,
	.flags = WAP_APPLET_DESTRUCTIVE,
	.cli_prep = edit_prep,
	.output_schema = edit_schema,
};
