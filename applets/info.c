/* wap info: show the workspace root, default exclusions, limits and policy
 *
 * usage: wap info [--root DIR] [--json]
 *
 * WAP getWorkspaceInfo: the workspace root, the default exclusion globs of
 * recursive operations, the limits every applet honours, and the policy in
 * force (read-only, restricted paths, command lists).
 *
 * JSON result: root, version (of wap), defaultExclusions, limits
 * {maxFileSize, maxDirectoryEntries, maxSearchResults, maxOutputSize,
 * maxExecutionTime, maxLineLength: the ones in force}, policy {readOnly,
 * allowFileSystemAccess, allowTerminalAccess, allowCommandExecution,
 * sandbox, restrictedPaths, restrictedCommands, allowedCommands},
 * execSupervisor (what keeps exec's process tree: pid-namespace,
 * subreaper, session-sweep or none).
 *
 * examples:
 *   wap info
 *   wap info --json --root ~/src/project
 */
#include <string.h>

#include "applet.h"
#include "applets.h"
#include "exclude.h"
#include "proc.h"
#include "version.h"

static const struct wap_opt info_opts[] = {
	{ NULL }
};

static json_t *strv_json(char **v)
{
	json_t *a = json_array();

	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static int info_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	const struct wap_ws *ws = call->ws;
	const struct wap_limits *l = &ws->lim;
	const struct wap_policy *p = &ws->pol;

	(void)req;
	*res = json_pack("{s:s, s:s, s:o, s:s, s:{s:I, s:I, s:I, s:I, s:I, s:I}, s:{s:b, s:b, s:b, s:b, s:b, s:o, s:o, s:o}}",
		"root", ws->root,
		"version", WAP_VERSION,
		"defaultExclusions", strv_json((char **)wap_default_excludes),
		"execSupervisor", wap_proc_supervisor(),
		"limits",
		"maxFileSize", (json_int_t)l->max_file_size,
		"maxDirectoryEntries", (json_int_t)l->max_dir_entries,
		"maxSearchResults", (json_int_t)l->max_search_results,
		"maxOutputSize", (json_int_t)l->max_output_size,
		"maxExecutionTime", (json_int_t)l->max_exec_ms,
		"maxLineLength", (json_int_t)l->max_line_len,
		"policy",
		"readOnly", p->read_only,
		"allowFileSystemAccess", p->allow_fs,
		"allowTerminalAccess", p->allow_terminal,
		"allowCommandExecution", p->allow_exec,
		"sandbox", p->sandbox,
		"restrictedPaths", strv_json(p->restricted_paths),
		"restrictedCommands", strv_json(p->restricted_cmds),
		"allowedCommands", strv_json(p->allowed_cmds));
	if (!*res)
		return wap_err_oom(err);
	return 0;
}

static int info_render(const json_t *res, const json_t *req, FILE *out)
{
	json_t *l = json_object_get(res, "limits"), *p = json_object_get(res, "policy"), *v;
	const char *k;
	size_t i;

	(void)req;
	if (!out)
		return 0;
	fprintf(out, "root: %s\n", json_string_value(json_object_get(res, "root")));
	fprintf(out, "default exclusions:\n");
	json_array_foreach(json_object_get(res, "defaultExclusions"), i, v)
		fprintf(out, "  %s\n", json_string_value(v));
	fprintf(out, "limits:\n");
	json_object_foreach(l, k, v)
		fprintf(out, "  %s: %lld\n", k, (long long)json_integer_value(v));
	fprintf(out, "policy:\n");
	json_object_foreach(p, k, v) {
		if (json_is_boolean(v)) {
			fprintf(out, "  %s: %s\n", k, json_is_true(v) ? "true" : "false");
		} else {
			json_t *s;
			fprintf(out, "  %s:", k);
			json_array_foreach(v, i, s)
				fprintf(out, " %s", json_string_value(s));
			fputc('\n', out);
		}
	}
	return 0;
}

const struct wap_applet wap_applet_info = {
	.name = "info",
	.summary = wap_summary_info,
	.usage = wap_usage_info,
	.title = "Workspace info",
	.opts = info_opts,
	.op = info_op,
	.render = info_render,
	.flags = WAP_APPLET_READONLY | WAP_APPLET_IDEMPOTENT,
};
