/* serve/profiles.h - protocol profiles: tables mapping one public tool set's
 * names and argument spellings onto the applets' operations, so a client
 * written for another tool set drives the same ops under the same policy.
 *
 * A profile is data: a list of tools, each naming the applet whose op it
 * runs, its schemas, and how its arguments become the applet's request
 * keys (those of its option table, wap_opt_key()).  Applets are looked up
 * by name when a call comes, so a tool whose applet is not built in is
 * simply not offered.  The
 * `wap` profile is generated from the applet table itself.
 */
#ifndef WAP_PROFILES_H
#define WAP_PROFILES_H

#include <jansson.h>
#include <stdbool.h>

#include "applet.h"
#include "audit.h"
#include "err.h"
#include "policy.h"
#include "run.h"	/* struct wap_run, wap_run_op: the one road */

struct wap_argmap;

/* Put the caller's value V of argument M->from into REQ (the applet's
 * request); ARGS is all the caller's arguments.  0, or -1 with err. */
typedef int (*wap_argconv_fn)(const struct wap_argmap *m, const json_t *v,
			      const json_t *args, json_t *req, struct wap_err *err);

struct wap_argmap {
	const char *from;	/* the profile's argument name */
	const char *to;		/* the applet's key; NULL: accepted and ignored */
	wap_argconv_fn conv;	/* NULL: copied as it is */
};


struct wap_ptool {
	const char *name;		/* tool (or method) name */
	const char *applet;		/* the applet whose op runs */
	const char *title;		/* NULL: the applet's */
	const char *description;	/* NULL: from the applet's usage text */
	const char *input_schema;	/* JSON text; NULL: the applet's options */
	const char *output_schema;	/* JSON text; NULL: the applet's, else a
					 * permissive object; "" : none */
	const struct wap_argmap *args;	/* NULL: arguments are applet keys */
	const char *fixed;		/* JSON object text merged into every request */
	/* Reshape the op's result (stolen) into the profile's; may be NULL.
	 * Returns NULL with err when the result is not one the profile can
	 * give (acp: a directory read as a text file). */
	json_t *(*result)(json_t *res, const json_t *req, struct wap_err *err);
	/* A text-only tool (langop): runs the whole call and gives the text;
	 * returns 0, or 1 when the text reports an error (isError). */
	int (*text_call)(struct wap_run *run, const json_t *args, char **text);
	unsigned flags;			/* 0: the applet's WAP_APPLET_* flags */
};

struct wap_profile {
	const char *name;
	const char *summary;
	bool all_applets;		/* tools are the applets themselves */
	bool methods;			/* entries are JSON-RPC methods (acp) */
	const struct wap_ptool *tools;	/* terminated by { NULL } */
	/* The document's own limits, as a config "limits" object in JSON
	 * ({"maxOutputSize":1048576}); they replace wap's defaults, and a
	 * limit the config sets replaces them.  NULL: wap's defaults. */
	const char *limits;
	/* serverInfo name and version (and /health's service, version);
	 * NULL: wap's */
	const char *server_name, *server_version;
	/* initialize's instructions; NULL: made from the tool list ("" none) */
	const char *instructions;
	/* HTTP: a request without Mcp-Session-Id (and no initialize before it)
	 * is served in a session of its own, as the document's examples do */
	bool stateless;
};

extern const struct wap_profile *const wap_profiles[];	/* NULL-terminated */
const struct wap_profile *wap_profile_find(const char *name);

/* Put P's limits into WS where its config does not set them (wap serve,
 * once, before any call); getWorkspaceInfo and `info` report the result. */
void wap_profile_limits(const struct wap_profile *p, struct wap_ws *ws);

/* The tools a profile offers now, in order: every entry whose applet is
 * built in (for `wap`: every applet without WAP_APPLET_NOTOOL).  *N gets
 * the count; the array is malloc'd, its pointers are static or point into
 * a per-profile cache that lives as long as the process. */
const struct wap_ptool **wap_profile_tools(const struct wap_profile *p, size_t *n);

/* One tool by name, NULL if the profile has none (or its applet is missing). */
const struct wap_ptool *wap_profile_tool(const struct wap_profile *p, const char *name);

/* The MCP tool definition (name, title, description, inputSchema,
 * outputSchema, annotations): a new reference. */
json_t *wap_ptool_json(const struct wap_ptool *t);

/* Run tool T with the caller's ARGS.
 * Structured tools: 0 with *RES (the result, profile shape) and *TEXT (its
 * text rendering, malloc'd), or -1 with ERR (a tool failure).
 * Text-only tools: *RES is NULL, *TEXT is set, and 0 or 1 (failure).
 * Every op run is written to RUN->audit. */
int wap_ptool_run(struct wap_run *run, const struct wap_ptool *t, const json_t *args,
		  json_t **res, char **text, struct wap_err *err);

/* Check ARGS against a flat JSON Schema object (types, required, unknown
 * keys when additionalProperties is false).  TOOL names the tool in messages. */
int wap_schema_check(const json_t *schema, const json_t *args, const char *tool,
		     struct wap_err *err);

#endif
