/* fs/applet.h - what an applet is: an option table, one operation, one text
 * renderer.  The CLI (main.c) and `wap serve` both drive applets through
 * this table, so `wap read f --json` and an MCP tools/call of "read" give
 * the same result object.
 *
 * The table of applets is generated from the header comments of
 * the files in applets/ (scripts/mkapplets); each applet file defines
 * `const struct wap_applet wap_applet_NAME`.
 */
#ifndef WAP_APPLET_H
#define WAP_APPLET_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "cancel.h"
#include "err.h"
#include "ws.h"

/* One call of an operation.  Progress and streamed output are optional
 * callbacks (NULL when nobody listens); CANCEL is the call's token
 * (lib/core/cancel.h): the door sets it when the caller gives up and ops
 * that run long poll it. */
struct wap_call {
	const struct wap_ws *ws;
	struct wap_cancel *cancel;		/* may be NULL */
	void (*progress)(void *arg, double done, double total, const char *msg);
	void (*output)(void *arg, const char *stream, const char *data, size_t len);
	void *arg;
	const char *session;			/* for the audit log; may be NULL */
	/* the category security.allowedMethodCategories judges the call by:
	 * the Agent Control method's it came as (editor.getContent reads with
	 * the read op, as "editor"); NULL: the op's own (lib/serve/policy.c) */
	const char *category;
	/* the one-shot CLI: the calling thread does nothing after the op but
	 * write to fds it holds open and exit, so an op may confine it for
	 * good (git's Landlock domain) rather than run in a thread of its
	 * own; a server's threads serve other calls and never set this */
	bool oneshot;
	/* the CLI's text output (stdout), set only when it prints text: an op
	 * whose text is long (git log) may write it here as it goes, in the
	 * same bytes its render would print, rather than keep it all in the
	 * result; NULL in a server and for JSON output */
	void (*text)(void *arg, const char *data, size_t len);
	void *text_arg;
	/* run where a server read the request (a quick applet's call): an op
	 * that finds it has more to do than one file within the limits (an
	 * archive to unpack) sets NOT_QUICK and fails before it starts
	 * (wap_call_not_quick), and the door runs it again on a worker */
	bool quick, not_quick;
};

static inline int wap_call_not_quick(struct wap_call *c, struct wap_err *err)
{
	c->not_quick = true;
	return wap_err_set(err, WAP_E_FAILED, "Not a quick call: run on a worker");
}

static inline bool wap_call_cancelled(const struct wap_call *c)
{
	return c && wap_cancel_is_set(c->cancel);
}

/* An operation: REQ is borrowed; on success *RES is a new object the caller
 * owns and 0 is returned; on failure -1, *RES NULL and ERR filled. */
typedef int (*wap_op_fn)(struct wap_call *call, const json_t *req, json_t **res,
			 struct wap_err *err);

/* Render a result as text on OUT; returns the CLI exit status (0, or 1 for
 * "nothing found"). */
typedef int (*wap_render_fn)(const json_t *res, const json_t *req, FILE *out);

enum wap_opttype {
	WAP_OPT_BOOL,	/* --flag: true */
	WAP_OPT_INT,	/* --n 5: integer */
	WAP_OPT_STR,	/* --s X: string */
	WAP_OPT_STRS,	/* --s X --s Y: array of strings */
	WAP_OPT_JSON,	/* any JSON value; on the CLI JSON text, or a data
			 * file holding it (a workspace path; "-" for stdin) */
	WAP_OPT_COUNT,	/* -u -u (-uu): how often given, an integer; CLI only */
};

#define WAP_OPT_POS	1u	/* positional (name is the JSON key, NAME the metavar) */
#define WAP_OPT_REQ	2u	/* required */
#define WAP_OPT_REST	4u	/* positional STRS taking the rest, "--" included */
#define WAP_OPT_CLI	8u	/* CLI only: not in the tool schema */
#define WAP_OPT_DASHDASH 16u	/* positional STRS: a "--" on the command line is kept
				 * in it (options after it still parse before it) */
#define WAP_OPT_KV	32u	/* STRS of "K=V" that a JSON request may also give as
				 * an object of strings ({"K": "V"}) */
#define WAP_OPT_SECRET	64u	/* STR: wiped from argv once read (a token) */
#define WAP_OPT_ONEOF	128u	/* BOOL: on the command line it undoes the others of
				 * its applet so marked (rg's -w and -x: the last
				 * given wins) */

struct wap_opt {
	const char *name;	/* long option ("max-results") or positional name ("path") */
	char shrt;		/* short option letter or 0 */
	enum wap_opttype type;
	unsigned flags;
	const char *key;	/* JSON key; NULL: name with '-' turned into '_' */
};

/* Applet flags (MCP annotations and serve behaviour). */
#define WAP_APPLET_READONLY	1u	/* readOnlyHint */
#define WAP_APPLET_DESTRUCTIVE	2u	/* destructiveHint */
#define WAP_APPLET_IDEMPOTENT	4u	/* idempotentHint */
#define WAP_APPLET_NOTOOL	8u	/* not offered as a tool (serve itself) */
#define WAP_APPLET_NOWS		16u	/* needs no workspace opened */
#define WAP_APPLET_EXIT2	32u	/* CLI: every error exits 2 (grep, glob: as grep and rg) */
#define WAP_APPLET_QUICK	64u	/* answers from one file or directory, within the
				 * limits: a server runs it where the request was
				 * read, as a hand-off to a worker costs more
				 * (struct wap_call's quick: unless it says no) */
#define WAP_APPLET_TREE		128u	/* moves, copies or removes trees: holds the
				 * tree lock (lib/fs/tree.h) alone for the call
				 * (one that writes holds it shared: run.c) */

struct wap_applet {
	const char *name;
	const char *summary;		/* one line, from the header (generated) */
	const char *usage;		/* the header's usage text (generated) */
	const char *title;		/* MCP tool title */
	const struct wap_opt *opts;	/* terminated by { NULL } */
	wap_op_fn op;
	wap_render_fn render;
	unsigned flags;
	/* Optional: prepare a CLI request (read stdin, load --edits FILE...). */
	int (*cli_prep)(struct wap_call *call, json_t *req, struct wap_err *err);
	/* Optional: run the whole CLI invocation (serve, exec --stream).
	 * Returns the exit status; may print and exit.  CANCEL is the call's
	 * token, with the call's time limit on it (lib/serve/run.h). */
	int (*cli_main)(struct wap_ws *ws, json_t *req, bool json, struct wap_cancel *cancel);
	/* Optional: JSON Schema of the result (MCP outputSchema). */
	const char *output_schema;
};

/* The generated table, NULL-terminated, sorted by name. */
extern const struct wap_applet *const wap_applets[];
const struct wap_applet *wap_applet_find(const char *name);

/* The JSON key of an option. KEYBUF receives it when generated. */
const char *wap_opt_key(const struct wap_opt *o, char *keybuf, size_t n);

/* The global options of the CLI: one table for main.c's parser, for the
 * "Global options" of `wap --help` and so, through that text, for the man
 * pages and completions (scripts/mkdocs).  No applet option may share a
 * spelling with one (tests/unit/test_args.c). */
enum wap_gid { WAP_G_ROOT, WAP_G_CONFIG, WAP_G_JSON, WAP_G_READ_ONLY, WAP_G_RESTRICT,
	       WAP_G_HELP, WAP_G_VERSION };

struct wap_global {
	enum wap_gid id;
	const char *name;	/* long name: "root" */
	char shrt;		/* short letter or 0 */
	const char *metavar;	/* "DIR" when it takes a value; NULL for a flag */
	const char *help;	/* lines after the first start with spaces */
};

extern const struct wap_global wap_globals[];	/* terminated by { .name = NULL } */

struct wap_gopts {
	const char *root, *config;	/* borrowed from argv; NULL when not given */
	bool json, read_only, help, version;
	char **restrict_globs;		/* wap_strv_free() */
};

/* Take the global options out of ARGV[0..ARGC) into G; the arguments left
 * are moved to the front of ARGV, in order, and their number returned.
 * With A NULL (before an applet's name) stop at the first argument that
 * is not a global option: the name, or an option the caller must judge.
 * With A, take them anywhere, except after "--", after the start of a
 * positional that takes the rest (exec's command), or as the value of one
 * of A's own options (`grep -e --json`).  -1 with err (INVALID_ARGUMENT:
 * a missing value, a value given to a flag). */
int wap_args_globals(const struct wap_applet *a, int argc, char **argv, struct wap_gopts *g,
		     struct wap_err *err);

/* Parse ARGV (after the applet name) into a request object by the table.
 * Global flags are not handled here (wap_args_globals took them out).  A JSON option given a value that is
 * not JSON text names a data file in WS (see wap_read_data: beneath the
 * root, policy-checked, regular files only; "-" is stdin); WS may be NULL,
 * then such names are refused.  Returns a new object or NULL with err
 * (INVALID_ARGUMENT, message names the option; or the file's error). */
json_t *wap_args_parse(const struct wap_applet *a, const struct wap_ws *ws, int argc,
		       char **argv, struct wap_err *err);

/* The description of an option, taken from the applet's usage text (the
 * text after the option on its line and its continuation lines).
 * Malloc'd; NULL if not found. */
char *wap_opt_help(const struct wap_applet *a, const struct wap_opt *o);

/* JSON Schema of an applet's result (a new reference, or NULL): its own,
 * else made from the "JSON result:" paragraph of its usage text. */
json_t *wap_applet_output_schema(const struct wap_applet *a);

/* TEXT with A's --flags spelled as JSON argument names (for MCP). */
char *wap_mcp_words(const struct wap_applet *a, const char *text);

/* JSON Schema for an applet's arguments (a new reference). */
json_t *wap_applet_input_schema(const struct wap_applet *a);

/* Validate REQ's keys and types against the option table: unknown keys and
 * wrong types are INVALID_ARGUMENT, a missing required one too. */
int wap_args_check(const struct wap_applet *a, const json_t *req, struct wap_err *err);

/* Request getters: 0 if absent (out untouched), 1 if present, -1 with err
 * on a wrong type. */
int wap_req_str(const json_t *req, const char *key, const char **out, struct wap_err *err);
int wap_req_int(const json_t *req, const char *key, long long *out, struct wap_err *err);
int wap_req_bool(const json_t *req, const char *key, bool *out, struct wap_err *err);
/* A path argument turned into a root-relative path (malloc'd). REQUIRED
 * missing is INVALID_ARGUMENT; absent and optional gives DFLT (may be NULL:
 * then *rel is NULL and 0 is returned). */
int wap_req_path(const struct wap_call *call, const json_t *req, const char *key,
		 const char *dflt, char **rel, struct wap_err *err);

/* Run an applet's op and render its text (for serve's text block).
 * Returns a malloc'd string. */
char *wap_render_text(const struct wap_applet *a, const json_t *res, const json_t *req);

#endif
