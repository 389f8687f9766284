/* serve/acp_lsp.c - Agent Control Protocol methods on language servers.
 * See acp_lsp.h. */
#include <stdlib.h>
#include <string.h>

#include "acp_lsp.h"
#include "lsp.h"

static const struct {
	const char *method, *action;
} map[] = {
	{ "state.getDiagnostics", "diag" },
	{ "state.getSymbols", "overview" },
	{ "state.findReferences", "refs" },
	{ "state.goToDefinition", "def" },
	{ "state.getHover", "hover" },
	{ "state.getCodeActions", "actions" },
	{ "editor.formatDocument", "format" },
	{ "editor.getCompletions", "complete" },
	{ NULL, NULL }
};

bool wap_acp_lsp_method(const char *method)
{
	for (int i = 0; map[i].method; i++)
		if (!strcmp(map[i].method, method))
			return true;
	return false;
}

/* {line, character} from 0 -> the op's line (from 1) and character */
static int put_pos(json_t *req, const json_t *pos, const char *line, const char *ch,
		   struct wap_err *err)
{
	const json_t *l = json_object_get(pos, "line"), *c = json_object_get(pos, "character");

	if (!json_is_integer(l) || !json_is_integer(c) || json_integer_value(l) < 0 ||
	    json_integer_value(c) < 0)
		return wap_err_set(err, WAP_E_INVALID,
				   "Invalid position: want {line, character}, both integers from 0");
	json_object_set_new(req, line, json_integer(json_integer_value(l) + 1));
	json_object_set_new(req, ch, json_integer(json_integer_value(c)));
	return 0;
}

/* The op's location (path, range) as the protocol's {uri, range}. */
static json_t *acp_locations(const struct wap_ws *ws, const json_t *in)
{
	json_t *out = json_array(), *v;
	size_t i;

	json_array_foreach(in, i, v) {
		char *uri = wap_lsp_uri(ws, json_string_value(json_object_get(v, "path")));
		json_array_append_new(out, json_pack("{s:s, s:O}", "uri", uri ? uri : "", "range",
						     json_object_get(v, "range")));
		free(uri);
	}
	return out;
}

static json_t *acp_symbols(const json_t *in)
{
	json_t *out = json_array(), *v;
	size_t i;

	json_array_foreach(in, i, v) {
		json_t *o = json_pack("{s:O, s:O, s:O, s:O}", "name", json_object_get(v, "name"),
				      "kind", json_object_get(v, "kind"), "range", json_object_get(v, "range"),
				      "selectionRange", json_object_get(v, "selection_range"));
		if (json_object_get(v, "detail"))
			json_object_set(o, "detail", json_object_get(v, "detail"));
		if (json_object_get(v, "children"))
			json_object_set_new(o, "children", acp_symbols(json_object_get(v, "children")));
		json_array_append_new(out, o);
	}
	return out;
}

static const char *severity(const json_t *d)
{
	static const char *const sev[] = { "error", "error", "warning", "info", "hint" };
	json_int_t s = json_integer_value(json_object_get(d, "severity"));

	return sev[s >= 1 && s <= 4 ? s : 1];
}

/* state.getDiagnostics without a path: what the running language servers
 * of this workspace have published (files the policy hides left out). */
static int all_diagnostics(struct wap_run *run, const json_t *params, json_t **res,
			   struct wap_err *err)
{
	const struct wap_ws *ws = run->call->ws;
	json_t *all, *out, *arr, *d;
	const char *uri;
	double t0;
	size_t i;
	int rc = wap_run_begin(run, "state.getDiagnostics", params, &t0, err);

	if (rc)
		return rc;
	all = wap_lsp_pool_diagnostics(ws->root);
	out = json_array();
	json_object_foreach(all, uri, arr) {
		char *rel = wap_lsp_rel(ws, uri);
		if (!rel || wap_ws_check(ws, rel, WAP_ACC_READ, NULL)) {
			free(rel);
			continue;
		}
		free(rel);
		json_array_foreach(arr, i, d) {
			json_t *o = json_pack("{s:s, s:O, s:O, s:s}", "uri", uri, "range", json_object_get(d, "range"),
					      "message", json_object_get(d, "message"), "severity", severity(d));
			if (!o)
				continue;
			if (json_object_get(d, "source"))
				json_object_set(o, "source", json_object_get(d, "source"));
			if (json_object_get(d, "code"))
				json_object_set(o, "code", json_object_get(d, "code"));
			json_array_append_new(out, o);
		}
	}
	json_decref(all);
	*res = json_pack("{s:o}", "diagnostics", out);
	wap_run_done(run, "state.getDiagnostics", params, t0, 0, err);
	return 0;
}

int wap_acp_lsp(struct wap_run *run, const char *method, const json_t *params, json_t **res,
		struct wap_err *err)
{
	const struct wap_ws *ws = run->call->ws;
	const char *action = NULL, *path;
	json_t *req, *r = NULL;
	int rc;

	*res = NULL;
	for (int i = 0; map[i].method; i++)
		if (!strcmp(map[i].method, method))
			action = map[i].action;
	if (!action)
		return wap_err_set(err, WAP_E_INVALID, "Method not found: %s", method);
	path = json_string_value(json_object_get(params, "path"));
	if (!path && strcmp(method, "state.getDiagnostics"))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: path");
	if (!path)
		return all_diagnostics(run, params, res, err);
	req = json_pack("{s:s, s:s}", "action", action, "path", path);
	if (!strcmp(action, "refs") || !strcmp(action, "def") || !strcmp(action, "hover") ||
	    !strcmp(action, "complete")) {
		if (put_pos(req, json_object_get(params, "position"), "line", "character", err)) {
			json_decref(req);
			return -1;
		}
	} else if (!strcmp(action, "actions")) {
		const json_t *range = json_object_get(params, "range");
		if (put_pos(req, json_object_get(range, "start"), "line", "character", err) ||
		    put_pos(req, json_object_get(range, "end"), "end_line", "end_character", err)) {
			json_decref(req);
			return -1;
		}
	}
	rc = wap_run_op(run, "sym", req, &r, err);
	json_decref(req);
	if (rc)
		return rc;
	if (!strcmp(action, "diag")) {
		char *uri = wap_lsp_uri(ws, json_string_value(json_object_get(r, "path")));
		json_t *out = json_array(), *v;
		size_t i;
		json_array_foreach(json_object_get(r, "diagnostics"), i, v) {
			json_t *o = json_pack("{s:s, s:O, s:O, s:O}", "uri", uri ? uri : "", "range",
					      json_object_get(v, "range"), "message", json_object_get(v, "message"),
					      "severity", json_object_get(v, "severity"));
			if (json_object_get(v, "origin"))
				json_object_set(o, "source", json_object_get(v, "origin"));
			if (json_object_get(v, "code"))
				json_object_set(o, "code", json_object_get(v, "code"));
			json_array_append_new(out, o);
		}
		free(uri);
		*res = json_pack("{s:o}", "diagnostics", out);
	} else if (!strcmp(action, "overview")) {
		*res = json_pack("{s:o}", "symbols", acp_symbols(json_object_get(r, "symbols")));
	} else if (!strcmp(action, "refs") || !strcmp(action, "def")) {
		*res = json_pack("{s:o}", "locations", acp_locations(ws, json_object_get(r, "locations")));
	} else if (!strcmp(action, "hover")) {
		*res = json_pack("{s:O}", "content", json_object_get(r, "content"));
	} else if (!strcmp(action, "actions")) {
		*res = json_pack("{s:O}", "actions", json_object_get(r, "actions"));
	} else if (!strcmp(action, "format")) {
		*res = json_pack("{s:b}", "success", 1);
	} else {
		*res = json_pack("{s:O, s:O}", "items", json_object_get(r, "items"), "isIncomplete",
				 json_object_get(r, "isIncomplete"));
	}
	json_decref(r);
	return *res ? 0 : wap_err_oom(err);
}
