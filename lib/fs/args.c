/* fs/args.c - argv and JSON requests, both checked against an applet's
 * declarative option table; option help taken from the usage text. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "applet.h"
#include "config.h"
#include "file.h"
#include "strbuf.h"

const struct wap_applet *wap_applet_find(const char *name)
{
	/* the first byte first: a call looks its applet up several times */
	for (int i = 0; wap_applets[i]; i++)
		if (wap_applets[i]->name[0] == name[0] && !strcmp(wap_applets[i]->name, name))
			return wap_applets[i];
	return NULL;
}

const char *wap_opt_key(const struct wap_opt *o, char *keybuf, size_t n)
{
	size_t i;

	if (o->key)
		return o->key;
	for (i = 0; o->name[i] && i + 1 < n; i++)
		keybuf[i] = o->name[i] == '-' ? '_' : o->name[i];
	keybuf[i] = 0;
	return keybuf;
}

/* A JSON real that is a whole number a long long can hold (casting any
 * other double to long long is undefined behaviour). */
static bool real_is_int(const json_t *v)
{
	double d = json_real_value(v);

	return json_is_real(v) && d >= -9.2e18 && d <= 9.2e18 && d == (double)(long long)d;
}

static int parse_int(const char *s, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return (errno || end == s || *end) ? -1 : 0;
}

/* JSON text, or else the name of a data file holding it: a workspace
 * path under the root's policy like any other ("-" is stdin), never a
 * file of the invoker's choosing outside the root. */
static json_t *parse_json_arg(const struct wap_ws *ws, const char *s, struct wap_err *err)
{
	json_error_t je;
	json_t *v = json_loads(s, JSON_DECODE_ANY, &je);
	char *buf;
	size_t len;

	if (v)
		return v;
	if (wap_read_data(ws, s, &buf, &len, err))
		return NULL;
	v = json_loadb(buf, len, JSON_DECODE_ANY, &je);
	free(buf);
	if (!v)
		wap_err_set(err, WAP_E_INVALID, "%s: not JSON, nor a file of JSON: %s (line %d)",
			    s, je.text, je.line);
	return v;
}

/* O given on the command line: the others of A marked WAP_OPT_ONEOF
 * given before it are undone when it is so marked */
static void one_of(const struct wap_applet *a, json_t *req, const struct wap_opt *o)
{
	char kb[64];

	if (o->flags & WAP_OPT_ONEOF)
		for (const struct wap_opt *x = a->opts; x->name; x++)
			if (x != o && (x->flags & WAP_OPT_ONEOF))
				json_object_del(req, wap_opt_key(x, kb, sizeof(kb)));
}

static int set_value(const struct wap_ws *ws, json_t *req, const struct wap_opt *o,
		     const char *val, const char *spelled, struct wap_err *err)
{
	char kb[64];
	const char *key = wap_opt_key(o, kb, sizeof(kb));
	long long n;
	json_t *v, *arr;

	switch (o->type) {
	case WAP_OPT_BOOL:
		return json_object_set_new(req, key, json_true());
	case WAP_OPT_COUNT:
		return json_object_set_new(req, key,
			json_integer(json_integer_value(json_object_get(req, key)) + 1));
	case WAP_OPT_INT:
		if (parse_int(val, &n))
			return wap_err_set(err, WAP_E_INVALID, "%s: not an integer: '%s'", spelled, val);
		return json_object_set_new(req, key, json_integer(n));
	case WAP_OPT_STR:
		if (json_object_set_new(req, key, json_string_nocheck(val)))
			return -1;
		/* a secret (a token) on the command line is kept, then wiped
		 * from argv: /proc/PID/cmdline, which any process of the
		 * user (a command wap runs too) reads, shows the x's */
		if (o->flags & WAP_OPT_SECRET)
			memset((char *)val, 'x', strlen(val));
		return 0;
	case WAP_OPT_STRS:
		arr = json_object_get(req, key);
		if (!arr) {
			arr = json_array();
			json_object_set_new(req, key, arr);
		}
		return json_array_append_new(arr, json_string_nocheck(val));
	case WAP_OPT_JSON:
		v = parse_json_arg(ws, val, err);
		if (!v)
			return -1;
		return json_object_set_new(req, key, v);
	}
	return -1;
}

const struct wap_global wap_globals[] = {
	{ WAP_G_ROOT, "root", 0, "DIR",
	  "workspace root (default: $WAP_ROOT, else the current directory)" },
	{ WAP_G_CONFIG, "config", 0, "FILE",
	  "JSON config (default: $WAP_CONFIG, else\n"
	  "                   $XDG_CONFIG_HOME/wap/config.json, else ~/.config/wap/config.json)" },
	{ WAP_G_JSON, "json", 0, NULL, "print the result (or the error) as one JSON object" },
	{ WAP_G_READ_ONLY, "read-only", 0, NULL, "refuse every write (security.readOnly)" },
	{ WAP_G_RESTRICT, "restrict", 0, "GLOB",
	  "deny paths matching GLOB (security.restrictedPaths; repeatable)" },
	{ WAP_G_HELP, "help", 'h', NULL, "show the applet's help (wap's, before an applet's name)" },
	{ WAP_G_VERSION, "version", 0, NULL, "print the version" },
	{ .name = NULL }
};

/* The global ARG spells ("--name", "--name=VAL", "-x"), or NULL; *VAL is
 * what follows an '='. */
static const struct wap_global *global_find(const char *arg, const char **val)
{
	const char *eq;
	size_t n;

	*val = NULL;
	if (arg[0] != '-')
		return NULL;
	if (arg[1] != '-') {
		for (const struct wap_global *g = wap_globals; g->name && arg[1] && !arg[2]; g++)
			if (g->shrt == arg[1])
				return g;
		return NULL;
	}
	eq = strchr(arg + 2, '=');
	n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
	for (const struct wap_global *g = wap_globals; g->name; g++)
		if (strlen(g->name) == n && !memcmp(g->name, arg + 2, n)) {
			*val = eq ? eq + 1 : NULL;
			return g;
		}
	return NULL;
}

/* Is O given a value (--max-results 5), or only named (--count, -uu)? */
static bool has_value(const struct wap_opt *o)
{
	return o->type != WAP_OPT_BOOL && o->type != WAP_OPT_COUNT;
}

/* Does ARG, an option of A, take the next argument as its value? */
static bool takes_next(const struct wap_applet *a, const char *arg)
{
	const struct wap_opt *o;

	if (arg[1] == '-') {
		if (strchr(arg, '='))
			return false;
		for (o = a->opts; o->name; o++)
			if (!(o->flags & WAP_OPT_POS) && !strcmp(o->name, arg + 2))
				return has_value(o);
		return false;
	}
	for (const char *p = arg + 1; *p; p++) {
		for (o = a->opts; o->name; o++)
			if (o->shrt == *p && !(o->flags & WAP_OPT_POS))
				break;
		if (!o->name)
			return false;
		if (has_value(o))
			return !p[1];	/* -A3 holds its value, -A takes the next */
	}
	return false;
}

int wap_args_globals(const struct wap_applet *a, int argc, char **argv, struct wap_gopts *g,
		     struct wap_err *err)
{
	const struct wap_opt *pos = a ? a->opts : NULL;
	int n = 0, i;

	while (pos && pos->name && !(pos->flags & WAP_OPT_POS))
		pos++;
	for (i = 0; i < argc; i++) {
		char *s = argv[i];
		const struct wap_global *gl;
		const char *val;

		if (!strcmp(s, "--") || (!a && s[0] != '-'))
			break;
		gl = global_find(s, &val);
		if (!gl && !a)
			break;
		if (!gl && s[0] == '-' && s[1]) {
			argv[n++] = s;
			if (takes_next(a, s) && i + 1 < argc)
				argv[n++] = argv[++i];
			continue;
		}
		if (!gl) {
			/* a positional: one that takes the rest takes
			 * everything after it, as wap_args_parse does */
			if (pos && pos->name && (pos->flags & WAP_OPT_REST))
				break;
			argv[n++] = s;
			if (pos && pos->name && pos->type != WAP_OPT_STRS)
				do
					pos++;
				while (pos->name && !(pos->flags & WAP_OPT_POS));
			continue;
		}
		if (!gl->metavar && val)
			return wap_err_set(err, WAP_E_INVALID, "option '--%s' takes no value", gl->name);
		if (gl->metavar && !val) {
			if (i + 1 >= argc)
				return wap_err_set(err, WAP_E_INVALID, "option '--%s' needs a value",
						   gl->name);
			val = argv[++i];
		}
		switch (gl->id) {
		case WAP_G_ROOT: g->root = val; break;
		case WAP_G_CONFIG: g->config = val; break;
		case WAP_G_JSON: g->json = true; break;
		case WAP_G_READ_ONLY: g->read_only = true; break;
		case WAP_G_HELP: g->help = true; break;
		case WAP_G_VERSION: g->version = true; break;
		case WAP_G_RESTRICT:
			if (wap_strv_push(&g->restrict_globs, val))
				return wap_err_oom(err);
			break;
		}
	}
	while (i < argc)
		argv[n++] = argv[i++];
	if (n < argc)
		argv[n] = NULL;
	return n;
}

json_t *wap_args_parse(const struct wap_applet *a, const struct wap_ws *ws, int argc,
		       char **argv, struct wap_err *err)
{
	json_t *req = json_object();
	const struct wap_opt *pos = a->opts;
	bool dashdash = false;
	char kb[64];

	/* find the first positional */
	while (pos->name && !(pos->flags & WAP_OPT_POS))
		pos++;
	for (int i = 0; i < argc; i++) {
		char *arg = argv[i];

		if (!dashdash && !strcmp(arg, "--")) {
			dashdash = true;
			if (pos->name && (pos->flags & WAP_OPT_DASHDASH) &&
			    set_value(ws, req, pos, arg, pos->name, err))
				goto fail;
			continue;
		}
		if (!dashdash && arg[0] == '-' && arg[1] == '-') {
			const struct wap_opt *o;
			char *eq = strchr(arg + 2, '=');
			size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
			const char *val = NULL;

			for (o = a->opts; o->name; o++)
				if (!(o->flags & WAP_OPT_POS) && strlen(o->name) == n &&
				    !memcmp(o->name, arg + 2, n))
					break;
			if (!o->name) {
				wap_err_set(err, WAP_E_INVALID, "unknown option '%.*s' (see 'wap %s --help')",
					    (int)n + 2, arg, a->name);
				goto fail;
			}
			if (!has_value(o)) {
				if (eq) {
					wap_err_set(err, WAP_E_INVALID, "option '--%s' takes no value", o->name);
					goto fail;
				}
			} else if (eq) {
				val = eq + 1;
			} else if (i + 1 < argc) {
				val = argv[++i];
			} else {
				wap_err_set(err, WAP_E_INVALID, "option '--%s' needs a value", o->name);
				goto fail;
			}
			one_of(a, req, o);
			if (set_value(ws, req, o, val, arg, err))
				goto fail;
			continue;
		}
		if (!dashdash && arg[0] == '-' && arg[1]) {
			/* short options, bundled: -il, -A3, -A 3 */
			for (char *p = arg + 1; *p; p++) {
				const struct wap_opt *o;
				char spelled[3] = { '-', *p, 0 };
				const char *val = NULL;

				for (o = a->opts; o->name; o++)
					if (o->shrt == *p && !(o->flags & WAP_OPT_POS))
						break;
				if (!o->name) {
					/* a negative number is a positional value */
					if (isdigit((unsigned char)*p) && p == arg + 1)
						goto positional;
					wap_err_set(err, WAP_E_INVALID, "unknown option '-%c' (see 'wap %s --help')",
						    *p, a->name);
					goto fail;
				}
				if (has_value(o)) {
					if (p[1])
						val = p + 1;
					else if (i + 1 < argc)
						val = argv[++i];
					else {
						wap_err_set(err, WAP_E_INVALID, "option '-%c' needs a value", *p);
						goto fail;
					}
				}
				one_of(a, req, o);
				if (set_value(ws, req, o, val, spelled, err))
					goto fail;
				if (val)
					break;
			}
			continue;
		}
positional:
		if (!pos->name) {
			wap_err_set(err, WAP_E_INVALID, "unexpected argument '%s' (see 'wap %s --help')",
				    arg, a->name);
			goto fail;
		}
		if (pos->flags & WAP_OPT_REST) {
			json_t *arr = json_array();
			for (; i < argc; i++)
				json_array_append_new(arr, json_string_nocheck(argv[i]));
			json_object_set_new(req, wap_opt_key(pos, kb, sizeof(kb)), arr);
			break;
		}
		if (set_value(ws, req, pos, arg, pos->name, err))
			goto fail;
		if (pos->type != WAP_OPT_STRS)
			do
				pos++;
			while (pos->name && !(pos->flags & WAP_OPT_POS));
	}
	for (const struct wap_opt *o = a->opts; o->name; o++) {
		if ((o->flags & WAP_OPT_REQ) && !json_object_get(req, wap_opt_key(o, kb, sizeof(kb)))) {
			char up[64];
			size_t k;
			for (k = 0; o->name[k] && k + 1 < sizeof(up); k++)
				up[k] = toupper((unsigned char)o->name[k]);
			up[k] = 0;
			if (o->flags & WAP_OPT_POS)
				wap_err_set(err, WAP_E_INVALID, "missing %s (see 'wap %s --help')", up, a->name);
			else
				wap_err_set(err, WAP_E_INVALID, "missing --%s (see 'wap %s --help')", o->name, a->name);
			goto fail;
		}
	}
	return req;
fail:
	json_decref(req);
	return NULL;
}

/* Find "--NAME" (or, for positionals, "NAME" in capitals) at the start of
 * an option line of the usage text, and return the text after it. */
/* The description starting at D, column COL of its line, and the lines
 * after it indented to at least COL (its continuation), joined by spaces. */
static char *help_lines(const char *d, size_t col)
{
	struct wap_sb sb = WAP_SB_INIT;
	const char *eol = strchrnul(d, '\n');

	wap_sb_add(&sb, d, eol - d);
	while (*eol == '\n') {
		const char *l = eol + 1, *q = l;

		while (*q == ' ' || *q == '\t')
			q++;
		if ((size_t)(q - l) < col || *q == '\n' || !*q)
			break;
		eol = strchrnul(q, '\n');
		wap_sb_addc(&sb, ' ');
		wap_sb_add(&sb, q, eol - q);
	}
	return wap_sb_detach(&sb);
}

char *wap_opt_help(const struct wap_applet *a, const struct wap_opt *o)
{
	char needle[80];
	const char *u = a->usage, *line;
	size_t nl;

	if (o->flags & WAP_OPT_POS) {
		size_t k;
		for (k = 0; o->name[k] && k + 1 < sizeof(needle); k++)
			needle[k] = toupper((unsigned char)o->name[k]);
		needle[k] = 0;
	} else {
		snprintf(needle, sizeof(needle), "--%s", o->name);
	}
	nl = strlen(needle);
	for (line = u; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *p = line, *eol = strchrnul(line, '\n'), *d;

		while (*p == ' ' || *p == '\t')
			p++;
		if (p == line)
			continue;	/* option lines are indented */
		/* the option may follow "-x, " */
		if (p[0] == '-' && p[1] && p[1] != '-' && p[2] == ',' && p[3] == ' ')
			p += 4;
		if (strncmp(p, needle, nl) || (p[nl] != ' ' && p[nl] != '=' && p[nl] != '\n' &&
					       p[nl] != ',' && p[nl] != 0 && p[nl] != '['))
			continue;
		/* the description starts after a run of two or more spaces */
		d = strstr(p, "  ");
		if (!d || d > eol)
			return strdup("");
		while (*d == ' ')
			d++;
		return help_lines(d, (size_t)(d - line));
	}
	return NULL;
}

/* TEXT with each --NAME of A's options spelled as the argument a JSON
 * caller passes (--max-results -> max_results, --timeout -> timeout_ms):
 * a model calling the tool never sees a command-line flag.  Malloc'd. */
char *wap_mcp_words(const struct wap_applet *a, const char *text)
{
	struct wap_sb sb = WAP_SB_INIT;
	const char *p = text;
	char kb[64];

	while (p && *p) {
		const struct wap_opt *o, *best = NULL;
		size_t n, bestn = 0;

		if (p[0] != '-' || p[1] != '-' || (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '-'))) {
			wap_sb_addc(&sb, *p++);
			continue;
		}
		for (n = 2; isalnum((unsigned char)p[n]) || p[n] == '-'; n++)
			;
		for (o = a->opts; o->name; o++)
			if (!(o->flags & (WAP_OPT_POS | WAP_OPT_CLI)) && strlen(o->name) == n - 2 &&
			    !strncmp(p + 2, o->name, n - 2) && n > bestn)
				best = o, bestn = n;
		if (best) {
			wap_sb_adds(&sb, wap_opt_key(best, kb, sizeof(kb)));
			p += bestn;
		} else {
			wap_sb_add(&sb, p, n);
			p += n;
		}
	}
	return wap_sb_detach(&sb);
}

/* The result's top-level keys, as the usage text's "JSON result:"
 * paragraph names them ("content, metadata {path,...}, isTruncated; binary
 * files: binary, mimeType"): the one description of a result, so the
 * schema cannot drift from it.  Each key's description is the words the
 * paragraph gives it in parentheses, if any. */
static void result_key(json_t *props, char *cur, size_t *cn, char *note, size_t *nn)
{
	const char *q = note;
	size_t n = *nn;
	json_t *d;

	cur[*cn] = 0;
	if (*cn && isalpha((unsigned char)cur[0]) && !json_object_get(props, cur)) {
		d = json_object();
		while (n && (*q == ' ' || *q == '\n'))
			q++, n--;
		if (n)
			json_object_set_new(d, "description", json_stringn(q, n));
		json_object_set_new(props, cur, d);
	}
	*cn = *nn = 0;
}

static json_t *result_schema_from_usage(const struct wap_applet *a)
{
	const char *p = strstr(a->usage, "JSON result:"), *end;
	char word[64], cur[64], note[256], held[64], heldnote[256];
	size_t wn = 0, cn = 0, nn = 0, hn = 0, hnn = 0;
	int depth = 0, paren = 0;
	json_t *props;

	if (!p)
		return NULL;
	p += strlen("JSON result:");
	end = strstr(p, "\n\n");
	if (!end)
		end = p + strlen(p);
	props = json_object();
	for (; p <= end; p++) {
		char c = p < end ? *p : '.';

		if (!depth && !paren && (isalnum((unsigned char)c) || c == '_')) {
			if (wn + 1 < sizeof(word))
				word[wn++] = c;
			continue;
		}
		if (wn) {	/* a word ends: "and"/"or" separate keys, else it is the key so far */
			word[wn] = 0;
			if (!strcmp(word, "and") || !strcmp(word, "or")) {
				/* "ctime and mtime": a key, unless a heading
				 * follows ("directories and archives:") */
				memcpy(held, cur, (hn = cn) + 1);
				memcpy(heldnote, note, (hnn = nn) + 1);
				cn = nn = 0;
			} else
				memcpy(cur, word, (cn = wn) + 1);
			wn = 0;
		}
		if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']')
			depth -= depth > 0;
		else if (depth)
			;
		else if (c == '(')
			paren++;
		else if (c == ')')
			paren -= paren > 0;
		else if (paren) {
			if (nn + 1 < sizeof(note))
				note[nn++] = c == '\n' ? ' ' : c;
		} else if (c == ':')	/* "binary files: binary": a heading */
			cn = nn = hn = hnn = 0;
		else if (c == ',' || c == ';' || c == '.') {
			result_key(props, held, &hn, heldnote, &hnn);
			result_key(props, cur, &cn, note, &nn);
		}
	}
	if (!json_object_size(props)) {
		json_decref(props);
		return NULL;
	}
	return json_pack("{s:s, s:o}", "type", "object", "properties", props);
}

json_t *wap_applet_output_schema(const struct wap_applet *a)
{
	if (a->output_schema)
		return json_loads(a->output_schema, 0, NULL);
	return result_schema_from_usage(a);
}

json_t *wap_applet_input_schema(const struct wap_applet *a)
{
	json_t *props = json_object(), *req = json_array();
	char kb[64];

	for (const struct wap_opt *o = a->opts; o->name; o++) {
		json_t *p;
		char *help;

		if (o->flags & WAP_OPT_CLI)
			continue;
		switch (o->type) {
		case WAP_OPT_BOOL:
			p = json_pack("{s:s}", "type", "boolean");
			break;
		case WAP_OPT_INT:
			p = json_pack("{s:s}", "type", "integer");
			break;
		case WAP_OPT_STR:
			p = json_pack("{s:s}", "type", "string");
			break;
		case WAP_OPT_STRS:
			if (o->flags & WAP_OPT_KV)
				p = json_pack("{s:[s,s], s:{s:s}, s:{s:s}}", "type", "array", "object",
					      "items", "type", "string",
					      "additionalProperties", "type", "string");
			else
				p = json_pack("{s:s, s:{s:s}}", "type", "array", "items", "type", "string");
			break;
		default:
			p = json_object();
		}
		help = wap_opt_help(a, o);
		if (help && *help) {
			char *w = wap_mcp_words(a, help);
			json_object_set_new(p, "description", json_string(w ? w : help));
			free(w);
		}
		free(help);
		json_object_set_new(props, wap_opt_key(o, kb, sizeof(kb)), p);
		if (o->flags & WAP_OPT_REQ)
			json_array_append_new(req, json_string(wap_opt_key(o, kb, sizeof(kb))));
	}
	return json_pack("{s:s, s:o, s:o, s:b}", "type", "object", "properties", props,
			 "required", req, "additionalProperties", 0);
}

int wap_args_check(const struct wap_applet *a, const json_t *req, struct wap_err *err)
{
	const char *key;
	json_t *v;
	char kb[64];

	if (!json_is_object(req))
		return wap_err_set(err, WAP_E_INVALID, "arguments must be an object");
	json_object_foreach((json_t *)req, key, v) {
		const struct wap_opt *o;
		bool ok = true;

		for (o = a->opts; o->name; o++)
			if (!(o->flags & WAP_OPT_CLI) && !strcmp(wap_opt_key(o, kb, sizeof(kb)), key))
				break;
		if (!o->name)
			return wap_err_set(err, WAP_E_INVALID, "unknown argument '%s' for %s", key, a->name);
		switch (o->type) {
		case WAP_OPT_BOOL: ok = json_is_boolean(v); break;
		case WAP_OPT_INT: ok = json_is_integer(v) ||
			real_is_int(v);
			break;
		case WAP_OPT_STR: ok = json_is_string(v); break;
		case WAP_OPT_STRS: {
			size_t i;
			json_t *s;
			ok = json_is_array(v);
			json_array_foreach(v, i, s)
				ok = ok && json_is_string(s);
			if (json_is_object(v) && (o->flags & WAP_OPT_KV)) {
				const char *k;
				ok = true;
				json_object_foreach((json_t *)v, k, s)
					ok = ok && json_is_string(s);
			}
			break;
		}
		case WAP_OPT_JSON: break;
		case WAP_OPT_COUNT: ok = json_is_integer(v); break;
		}
		if (!ok) {
			static const char *const tn[] = { "a boolean", "an integer", "a string",
							  "an array of strings", "JSON", "an integer" };
			return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be %s", key, tn[o->type]);
		}
	}
	for (const struct wap_opt *o = a->opts; o->name; o++)
		if ((o->flags & WAP_OPT_REQ) && !(o->flags & WAP_OPT_CLI) &&
		    !json_object_get(req, wap_opt_key(o, kb, sizeof(kb))))
			return wap_err_set(err, WAP_E_INVALID, "missing required argument '%s'",
					   wap_opt_key(o, kb, sizeof(kb)));
	return 0;
}

int wap_req_str(const json_t *req, const char *key, const char **out, struct wap_err *err)
{
	json_t *v = json_object_get(req, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be a string", key);
	*out = json_string_value(v);
	return 1;
}

int wap_req_int(const json_t *req, const char *key, long long *out, struct wap_err *err)
{
	json_t *v = json_object_get(req, key);

	if (!v || json_is_null(v))
		return 0;
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 1;
	}
	if (real_is_int(v)) {
		*out = (long long)json_real_value(v);
		return 1;
	}
	return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be an integer", key);
}

int wap_req_bool(const json_t *req, const char *key, bool *out, struct wap_err *err)
{
	json_t *v = json_object_get(req, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be a boolean", key);
	*out = json_is_true(v);
	return 1;
}

int wap_req_path(const struct wap_call *call, const json_t *req, const char *key,
		 const char *dflt, char **rel, struct wap_err *err)
{
	json_t *v = json_object_get(req, key);

	*rel = NULL;
	if (!v || json_is_null(v)) {
		if (!dflt)
			return 0;
		return wap_ws_rel(call->ws, dflt, strlen(dflt), rel, err);
	}
	if (!json_is_string(v))
		return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be a string", key);
	return wap_ws_rel(call->ws, json_string_value(v), json_string_length(v), rel, err);
}

static ssize_t sb_write(void *arg, const char *buf, size_t n)
{
	struct wap_sb *sb = arg;

	wap_sb_add(sb, buf, n);
	return sb->oom ? -1 : (ssize_t)n;
}

/* A stream into a wap_sb, not open_memstream: that one zeroes a buffer of
 * its own first, which cost more than most renderings (every tool call
 * makes one). */
char *wap_render_text(const struct wap_applet *a, const json_t *res, const json_t *req)
{
	struct wap_sb sb = WAP_SB_INIT;
	cookie_io_functions_t io = { .write = sb_write };
	FILE *f = fopencookie(&sb, "w", io);
	char buf[4096];

	if (!f)
		return NULL;
	setvbuf(f, buf, _IOFBF, sizeof(buf));	/* not a malloc'd one each call */
	if (a->render)
		a->render(res, req, f);
	else
		json_dumpf(res, f, JSON_INDENT(2));
	if (fclose(f) || sb.oom) {
		wap_sb_release(&sb);
		return NULL;
	}
	return sb.buf ? wap_sb_detach(&sb) : strdup("");
}
