/* main.c - the multicall dispatcher.
 *
 * `wap APPLET ARGS`, or `wap-APPLET ARGS` through a link.  The dispatcher
 * owns what every applet shares: the global options (the table
 * wap_globals, before the applet's name or after it), opening the workspace, running
 * the op, printing the result or the error, checking that stdout was
 * written, and the exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "applet.h"
#include "config.h"
#include "json.h"
#include "policy.h"
#include "run.h"
#include "version.h"

static const char main_usage[] =
"usage: wap [GLOBAL OPTIONS] APPLET [OPTIONS] [ARGS]   or   wap-APPLET [OPTIONS] [ARGS]\n"
"       wap --list | --help | --version | --install [-s] DIR\n"
"\n"
"wap is a toolkit for agents, scripts and CI to work on a code workspace:\n"
"explore, read, write, edit, search, run commands and use git, confined to\n"
"one root directory.\n"
"\n"
"Global options (every applet; before its name or after it, not after \"--\"):\n";

/* The usage, its global options printed from the one table (lib/fs/args.c). */
static void usage(FILE *out)
{
	fputs(main_usage, out);
	for (const struct wap_global *g = wap_globals; g->name; g++) {
		char spelled[64];

		if (g->shrt)
			snprintf(spelled, sizeof(spelled), "-%c, --%s%s%s", g->shrt, g->name,
				 g->metavar ? " " : "", g->metavar ? g->metavar : "");
		else
			snprintf(spelled, sizeof(spelled), "--%s%s%s", g->name,
				 g->metavar ? " " : "", g->metavar ? g->metavar : "");
		fprintf(out, "  %-16s %s\n", spelled, g->help);
	}
	fputs("\nApplets:\n", out);
	for (int i = 0; wap_applets[i]; i++)
		fprintf(out, "  %-8s %s\n", wap_applets[i]->name, wap_applets[i]->summary);
}

static void list_applets(FILE *out)
{
	for (int i = 0; wap_applets[i]; i++)
		fprintf(out, "%s\n", wap_applets[i]->name);
}

static int finish(const char *who)
{
	if (fflush(stdout) || ferror(stdout)) {
		if (errno == EPIPE)
			return 0;
		fprintf(stderr, "%s: write error: %s\n", who, strerror(errno));
		return 125;
	}
	return -1;
}

static int install(int argc, char **argv)
{
	bool sym = false;
	const char *dir = NULL;
	char self[PATH_MAX];
	ssize_t n;
	int rc = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-s"))
			sym = true;
		else if (!dir)
			dir = argv[i];
		else
			dir = NULL, i = argc;
	}
	if (!dir) {
		fprintf(stderr, "usage: wap --install [-s] DIR\n");
		return 2;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "wap --install: cannot find my own path: %s\n", strerror(errno));
		return 125;
	}
	self[n] = 0;
	for (int i = 0; wap_applets[i]; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/wap-%s", dir, wap_applets[i]->name);
		unlink(path);
		if (sym ? symlink(self, path) : link(self, path)) {
			fprintf(stderr, "wap --install: %s: %s\n", path, strerror(errno));
			rc = 125;
		}
	}
	return rc;
}

/* wap_call.text: the op's text straight to stdout */
static void text_out(void *arg, const char *data, size_t len)
{
	(void)arg;
	if (len)	/* an empty format's entry: DATA may be NULL */
		fwrite(data, 1, len, stdout);
}

static bool exit2;	/* the applet wants 2 for every error (WAP_APPLET_EXIT2) */

static void die_err(const char *who, struct wap_err *err, bool json)
{
	int status = exit2 ? 2 : wap_err_exit(err->kind);

	if (json) {
		json_t *o = wap_err_json(err);
		json_dumpf(o, stdout, JSON_COMPACT);
		fputc('\n', stdout);
		json_decref(o);
		fflush(stdout);
	} else {
		fprintf(stderr, "%s: %s\n", who, err->msg);
	}
	wap_err_release(err);
	exit(status);
}

int main(int argc, char **argv)
{
	const struct wap_applet *a;
	const char *name;
	char who[64] = "wap";
	struct wap_gopts g = { 0 };
	struct wap_err err = { 0 };
	struct wap_ws ws;
	struct wap_call call = { 0 };
	struct wap_run run = { 0 };
	json_t *req, *res = NULL;
	int status;

	signal(SIGPIPE, SIG_IGN);
	wap_json_cache_init();
	name = basename(argv[0]);
	argv++, argc--;
	if (!strncmp(name, "wap-", 4) && name[4]) {
		name += 4;
	} else {
		/* the global options may come before the applet's name */
		argc = wap_args_globals(NULL, argc, argv, &g, &err);
		if (argc < 0)
			die_err(who, &err, g.json);
		if (!argc && g.version) {
			printf("wap %s\n", WAP_VERSION);
			status = finish(who);
			return status < 0 ? 0 : status;
		}
		if (!argc) {
			usage(g.help ? stdout : stderr);
			if (!g.help)
				return 2;
			status = finish(who);
			return status < 0 ? 0 : status;
		}
		if (!strcmp(argv[0], "--list")) {
			list_applets(stdout);
			status = finish(who);
			return status < 0 ? 0 : status;
		}
		if (!strcmp(argv[0], "--install"))
			return install(argc - 1, argv + 1);
		if (argv[0][0] == '-') {
			fprintf(stderr, "wap: unknown option '%s' (see 'wap --help')\n", argv[0]);
			return 2;
		}
		name = argv[0];
		argv++, argc--;
	}
	a = wap_applet_find(name);
	if (!a) {
		fprintf(stderr, "wap: unknown applet '%s' (see 'wap --list')\n", name);
		return 127;
	}
	snprintf(who, sizeof(who), "wap %s", a->name);
	exit2 = a->flags & WAP_APPLET_EXIT2;

	/* ... or after it */
	argc = wap_args_globals(a, argc, argv, &g, &err);
	if (argc < 0)
		die_err(who, &err, g.json);
	if (g.version || g.help) {
		wap_strv_free(g.restrict_globs);
		if (g.version)
			printf("wap %s\n", WAP_VERSION);
		else
			fputs(a->usage, stdout);
		status = finish(who);
		return status < 0 ? 0 : status;
	}
	if (!(a->flags & WAP_APPLET_NOWS)) {
		if (wap_ws_init(&ws, g.root, g.config, &err))
			die_err(who, &err, g.json);
		if (g.read_only)
			ws.pol.read_only = true;
		for (int i = 0; g.restrict_globs && g.restrict_globs[i]; i++) {
			if (wap_globset_add(&ws.pol.restricted, g.restrict_globs[i], WAP_GLOB_BASENAME, &err) ||
			    (wap_strv_push(&ws.pol.restricted_paths, g.restrict_globs[i]) && wap_err_oom(&err)))
				die_err(who, &err, g.json);
		}
	} else {
		memset(&ws, 0, sizeof(ws));
		ws.rootfd = -1;
	}
	wap_strv_free(g.restrict_globs);
	call.ws = &ws;
	/* one op, then only output to open fds and exit (no audit log, no
	 * config or temp file written after it): see wap_call.oneshot */
	call.oneshot = true;
	if (!g.json)
		call.text = text_out;
	/* after the workspace: an option naming a data file is read beneath
	 * its root, under its policy */
	req = wap_args_parse(a, &ws, argc, argv, &err);
	if (!req)
		die_err(who, &err, g.json);

	/* the one road of every door (lib/serve/run.h): the CLI has no audit log
	 * and no approver, so requireApproval refuses what mutates */
	run.call = &call;
	/* the command line's own spellings into the request (rg's -g, a
	 * --content-file), before the gate judges it */
	if (a->cli_prep && a->cli_prep(&call, req, &err)) {
		json_decref(req);
		die_err(who, &err, g.json);
	}
	if (a->cli_main) {
		/* an applet printing as it goes (grep, glob, exec, serve):
		 * the road's gate, then its own main */
		double t0;
		if (!(a->flags & WAP_APPLET_NOTOOL) && wap_run_begin(&run, a->name, req, &t0, &err)) {
			json_decref(req);
			die_err(who, &err, g.json);
		}
		/* the call's token: its time limit (grep, glob: the road's
		 * wap_run_arm) and nothing else (the CLI stops on a signal) */
		static struct wap_cancel tok = WAP_CANCEL_INIT;
		status = a->cli_main(&ws, req, g.json, &tok);
		json_decref(req);
		wap_ws_release(&ws);
		return status;
	}
	if ((a->flags & WAP_APPLET_NOTOOL) ? a->op(&call, req, &res, &err)
					  : wap_run_op(&run, a->name, req, &res, &err)) {
		json_decref(req);
		die_err(who, &err, g.json);
	}
	if (g.json) {
		json_dumpf(res, stdout, JSON_COMPACT);
		fputc('\n', stdout);
		status = a->render ? a->render(res, req, NULL) : 0;
	} else {
		status = a->render ? a->render(res, req, stdout) : 0;
		if (!a->render) {
			json_dumpf(res, stdout, JSON_INDENT(2));
			fputc('\n', stdout);
		}
	}
	json_decref(res);
	json_decref(req);
	wap_ws_release(&ws);
	{
		int w = finish(who);
		if (w >= 0)
			return w;
	}
	return status;
}
