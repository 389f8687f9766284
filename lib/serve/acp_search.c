/* serve/acp_search.c - the Agent Control search.* methods onto the grep op
 * (and the matcher, for the columns of a match). */
#include <stdlib.h>
#include <string.h>

#include "acp_impl.h"
#include "match.h"

static int search_req(struct acp_ctx *c, json_t **req, struct wap_err *err)
{
	const char *query;
	json_t *o = json_object_get(c->params, "options"), *v;
	bool regex = false, cs = false, ww = false;

	if (acp_need_str(c, "query", &query, err) < 0)
		return -1;
	if (o && !json_is_object(o))
		return wap_err_set(err, WAP_E_INVALID, "options must be an object");
	if (wap_req_bool(o, "useRegex", &regex, err) < 0 || wap_req_bool(o, "caseSensitive", &cs, err) < 0 ||
	    wap_req_bool(o, "wholeWord", &ww, err) < 0)
		return -1;
	*req = json_pack("{s:s, s:b, s:b, s:b}", "pattern", query, "fixed_strings", !regex,
			 "ignore_case", !cs, "word_regexp", ww);
	if ((v = json_object_get(o, "include")) && json_is_string(v) && *json_string_value(v))
		json_object_set_new(*req, "include", json_pack("[O]", v));
	if ((v = json_object_get(o, "exclude")) && json_is_string(v) && *json_string_value(v))
		json_object_set_new(*req, "exclude", json_pack("[O]", v));
	if ((v = json_object_get(o, "maxResults")) && json_is_integer(v))
		json_object_set(*req, "max_results", v);
	return 0;
}

/* UTF-16 length of the first N bytes of S (LSP characters). */
static long utf16_len(const char *s, size_t n)
{
	long u = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if ((ch & 0xC0) != 0x80)
			u += ch >= 0xF0 ? 2 : 1;
	}
	return u;
}

static json_t *match_entry(long ln, const char *line, size_t b0, size_t b1)
{
	long sc = utf16_len(line, b0), ec = sc + utf16_len(line + b0, b1 - b0);

	return json_pack("{s:{s:{s:i, s:i}, s:{s:i, s:i}}, s:s}", "range",
			 "start", "line", (int)(ln - 1), "character", (int)sc,
			 "end", "line", (int)(ln - 1), "character", (int)ec, "preview", line);
}

int acp_search_findInFiles(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	json_t *req, *r2, *m, *results, *byfile;
	struct wap_match_opts mo = { 0 };
	struct wap_matcher *mt;
	struct wap_mstate *ms;
	const char *pat;
	size_t i;

	if (search_req(c, &req, err) < 0)
		return -1;
	/* grep gives matching lines; the same matcher finds the columns. */
	pat = json_string_value(json_object_get(req, "pattern"));
	mo.patterns = &pat;
	mo.n = 1;
	mo.fixed = json_is_true(json_object_get(req, "fixed_strings"));
	mo.icase = json_is_true(json_object_get(req, "ignore_case"));
	mo.word = json_is_true(json_object_get(req, "word_regexp"));
	if (!(mt = wap_matcher_new(&mo, err))) {
		json_decref(req);
		return -1;
	}
	if (acp_run_op(c, "grep", req, &r2, err) < 0) {
		wap_matcher_free(mt);
		return -1;
	}
	ms = wap_mstate_new(mt);
	byfile = json_object();
	results = json_array();
	json_array_foreach(json_object_get(r2, "matches"), i, m) {
		const char *path = json_string_value(json_object_get(m, "path"));
		const char *line = json_string_value(json_object_get(m, "matchText"));
		long ln = (long)json_integer_value(json_object_get(m, "line"));
		struct wap_match_iter it = { 0 };
		size_t n, s0, s1;
		bool any = false;
		json_t *f;

		if (!path || !line)
			continue;
		f = json_object_get(byfile, path);
		if (!f) {
			f = json_pack("{s:s, s:[]}", "path", path, "matches");
			json_object_set_new(byfile, path, f);
			json_array_append(results, f);
		}
		n = strlen(line);
		if (ms)
			wap_match_begin(ms);
		while (ms && wap_match_next(mt, ms, line, n, &it, &s0, &s1)) {
			json_array_append_new(json_object_get(f, "matches"), match_entry(ln, line, s0, s1));
			any = true;
		}
		if (ms && wap_match_error(ms, NULL)) {
			/* a regex limit: an error, as grep's own */
			wap_match_err(wap_match_error(ms, NULL), path, (size_t)ln, err);
			wap_mstate_free(ms);
			wap_matcher_free(mt);
			json_decref(results);
			json_decref(byfile);
			json_decref(r2);
			return -1;
		}
		if (!any)	/* a line cut short: the whole line */
			json_array_append_new(json_object_get(f, "matches"), match_entry(ln, line, 0, n));
	}
	*res = json_pack("{s:o}", "results", results);
	if (json_is_true(json_object_get(r2, "isTruncated")))
		json_object_set_new(*res, "isTruncated", json_true());
	wap_mstate_free(ms);
	wap_matcher_free(mt);
	json_decref(byfile);
	json_decref(r2);
	return 0;
}

int acp_search_findAndReplace(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *rep;
	json_t *req, *r2, *n;

	if (acp_need_str(c, "replacement", &rep, err) < 0 || search_req(c, &req, err) < 0)
		return -1;
	json_object_set_new(req, "replace", json_string(rep));
	json_object_set_new(req, "write", json_true());
	if (acp_run_op(c, "grep", req, &r2, err) < 0)
		return -1;
	n = json_object_get(r2, "count");
	if (!json_is_integer(n))
		n = json_object_get(r2, "totalMatches");
	*res = json_pack("{s:I}", "count", (json_int_t)json_integer_value(n));
	if (json_object_get(r2, "files"))
		json_object_set(*res, "files", json_object_get(r2, "files"));
	json_decref(r2);
	return 0;
}
