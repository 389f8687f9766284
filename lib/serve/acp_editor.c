/* serve/acp_editor.c - the Agent Control editor.* methods: text operations on
 * files (no editor buffers), onto the read, write, edit and stat ops. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "acp_impl.h"
#include "file.h"
#include "strbuf.h"
#include "text.h"

static const char *language_id(const char *path)
{
	static const char *const map[][2] = {
		{ ".c", "c" }, { ".h", "c" }, { ".cc", "cpp" }, { ".cpp", "cpp" }, { ".cxx", "cpp" },
		{ ".hpp", "cpp" }, { ".py", "python" }, { ".js", "javascript" }, { ".mjs", "javascript" },
		{ ".cjs", "javascript" }, { ".jsx", "javascriptreact" }, { ".ts", "typescript" },
		{ ".tsx", "typescriptreact" }, { ".json", "json" }, { ".md", "markdown" },
		{ ".sh", "shellscript" }, { ".bash", "shellscript" }, { ".go", "go" }, { ".rs", "rust" },
		{ ".java", "java" }, { ".rb", "ruby" }, { ".php", "php" }, { ".html", "html" },
		{ ".htm", "html" }, { ".css", "css" }, { ".scss", "scss" }, { ".yaml", "yaml" },
		{ ".yml", "yaml" }, { ".toml", "toml" }, { ".xml", "xml" }, { ".sql", "sql" },
		{ ".lua", "lua" }, { ".swift", "swift" }, { ".kt", "kotlin" }, { ".cs", "csharp" },
		{ ".txt", "plaintext" },
	};
	const char *base = strrchr(path, '/'), *dot;

	base = base ? base + 1 : path;
	if (!strcmp(base, "Makefile") || !strcmp(base, "makefile") || !strcmp(base, "GNUmakefile"))
		return "makefile";
	if (!strcmp(base, "Dockerfile"))
		return "dockerfile";
	dot = strrchr(base, '.');
	for (size_t i = 0; dot && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcasecmp(dot, map[i][0]))
			return map[i][1];
	return "plaintext";
}

int acp_editor_getContent(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	char *rel;
	json_t *r2;
	int r;

	if (acp_rel_path(c, "path", &rel, err) < 0)
		return -1;
	r = acp_read_whole(c, rel, "utf-8", &r2, err);
	if (r == 0) {
		*res = json_pack("{s:O, s:s}", "content", json_object_get(r2, "content"),
				 "languageId", language_id(rel));
		json_decref(r2);
	}
	free(rel);
	return r;
}

int acp_editor_setContent(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	if (acp_write_common(c, false, res, err) < 0)
		return -1;
	json_object_del(*res, "version");
	return 0;
}

static json_t *lsp_edit(const json_t *range, const json_t *text)
{
	return json_pack("{s:O, s:O}", "range", range, "newText", text);
}

static int run_edits(struct acp_ctx *c, json_t *edits, json_t **res, struct wap_err *err)
{
	char *rel;
	json_t *r2;
	int r;

	if (acp_rel_path(c, "path", &rel, err) < 0) {
		json_decref(edits);
		return -1;
	}
	r = acp_run_op(c, "edit", json_pack("{s:s, s:o}", "path", rel, "text_edits", edits), &r2, err);
	free(rel);
	if (r < 0)
		return -1;
	json_decref(r2);
	*res = NULL;
	return 0;
}

static bool is_pos(const json_t *p)
{
	return json_is_integer(json_object_get(p, "line")) && json_is_integer(json_object_get(p, "character"));
}

static bool is_range(const json_t *r)
{
	return is_pos(json_object_get(r, "start")) && is_pos(json_object_get(r, "end"));
}

int acp_editor_insertText(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	json_t *pos = json_object_get(c->params, "position"), *text = json_object_get(c->params, "text");

	if (!is_pos(pos))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: position ({line, character})");
	if (!json_is_string(text))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: text");
	if (run_edits(c, json_pack("[{s:{s:O, s:O}, s:O}]", "range", "start", pos, "end", pos, "newText", text),
		      res, err) < 0)
		return -1;
	*res = acp_success();
	return 0;
}

int acp_editor_replaceRange(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	json_t *range = json_object_get(c->params, "range"), *text = json_object_get(c->params, "text");

	if (!is_range(range))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: range ({start, end})");
	if (!json_is_string(text))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: text");
	if (run_edits(c, json_pack("[o]", lsp_edit(range, text)), res, err) < 0)
		return -1;
	*res = acp_success();
	return 0;
}

int acp_editor_deleteRange(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	json_t *range = json_object_get(c->params, "range"), *empty = json_string("");
	int r;

	if (!is_range(range)) {
		json_decref(empty);
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: range ({start, end})");
	}
	r = run_edits(c, json_pack("[o]", lsp_edit(range, empty)), res, err);
	json_decref(empty);
	if (r < 0)
		return -1;
	*res = acp_success();
	return 0;
}

int acp_editor_applyEdits(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	json_t *edits = json_object_get(c->params, "edits"), *e, *out;
	size_t i, n;

	if (!json_is_array(edits))
		return wap_err_set(err, WAP_E_INVALID, "Missing parameter: edits ([{range, text}])");
	out = json_array();
	json_array_foreach(edits, i, e) {
		json_t *text = json_object_get(e, "text");
		if (!text)
			text = json_object_get(e, "newText");
		if (!is_range(json_object_get(e, "range")) || !json_is_string(text)) {
			json_decref(out);
			return wap_err_set(err, WAP_E_INVALID, "edits[%zu] must be {range, text}", i);
		}
		json_array_append_new(out, lsp_edit(json_object_get(e, "range"), text));
	}
	n = json_array_size(out);
	if (n && run_edits(c, out, res, err) < 0)
		return -1;
	if (!n)
		json_decref(out);
	*res = json_pack("{s:I}", "applied", (json_int_t)n);
	return 0;
}

int acp_editor_getDocumentInfo(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	char *rel, *abs;
	json_t *r2, *md, *ver;
	json_int_t size, lines;
	struct wap_sb uri = WAP_SB_INIT;

	if (acp_rel_path(c, "path", &rel, err) < 0)
		return -1;
	/* base64: a document need not be UTF-8 to be described */
	if (acp_read_whole(c, rel, "base64", &r2, err) < 0) {
		free(rel);
		return -1;
	}
	md = json_object_get(r2, "metadata");
	size = json_integer_value(json_object_get(md, "size"));
	lines = json_integer_value(json_object_get(r2, "totalLines"));
	ver = json_object_get(r2, "version");
	abs = wap_ws_abs(ACP_WS(c), rel);
	wap_sb_adds(&uri, "file://");
	for (const char *p = abs ? abs : rel; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    strchr("/-._~", ch))
			wap_sb_addc(&uri, (char)ch);
		else
			wap_sb_addf(&uri, "%%%02X", ch);
	}
	/* No editor buffers: version is the file's mtime in ms (it grows
	 * with every write), contentVersion its git blob id. */
	*res = json_pack("{s:s, s:s, s:I, s:I, s:b, s:s, s:I}", "uri", uri.buf ? uri.buf : "",
		"languageId", language_id(rel),
		"version", (json_int_t)acp_iso_to_ms(json_string_value(json_object_get(md, "lastModified"))),
		"lineCount", size ? lines : (json_int_t)1, "isDirty", 0,
		"contentVersion", json_is_string(ver) ? json_string_value(ver) : "", "size", size);
	wap_sb_release(&uri);
	free(abs);
	json_decref(r2);
	free(rel);
	return 0;
}

int acp_editor_save(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	char *rel = NULL;
	json_t *st;

	if (wap_req_path(&c->call, c->params, "path", NULL, &rel, err) < 0)
		return -1;
	if (!rel) {
		c->code = RPC_NO_EDITOR;
		return wap_err_set(err, WAP_E_INVALID,
			"No active text editor: wap has no editor; pass path (files are saved as they are written)");
	}
	if (acp_stat_op(c, rel, &st, err) < 0) {
		free(rel);
		return -1;
	}
	json_decref(st);
	free(rel);
	*res = acp_success();	/* every write is already on disk */
	return 0;
}

int acp_editor_saveAll(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	(void)c; (void)err;
	*res = acp_success();
	return 0;
}
