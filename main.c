/* main.c - the multicall dispatcher.
 *
 * `wap APPLET ARGS`, or `wap-APPLET ARGS` through a link.  The dispatcher
 * owns what every applet shares: the global flags (--root, --config,
 * --json, --read-only, --restrict, --help), opening the workspace, running
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
#include "policy.h"
#include "run.h"
#include "version.h"

static const char main_usage[] =
"usage: wap APPLET [OPTIONS] [ARGS]   or   wap-APPLET [OPTIONS] [ARGS]\n"
"       wap --list | --help | --version | --install [-s] DIR\n"
"\n"
"wap is a toolkit for agents, scripts and CI to work on a code workspace:\n"
"explore, read, write, edit, search, run commands and use git, confined to\n"
"one root directory.\n"
"\n"
"Global options (every applet):\n"
"  --root DIR       workspace root (default: $WAP_ROOT, else the current directory)\n"
"  --config FILE    JSON config (default: $WAP_CONFIG, else\n"
"                   $XDG_CONFIG_HOME/wap/config.json, else ~/.config/wap/config.json)\n"
"  --json           print the result (or the error) as one JSON object\n"
"  --read-only      refuse every write (security.readOnly)\n"
"  --restrict GLOB  deny paths matching GLOB (security.restrictedPaths; repeatable)\n"
"  -h, --help       show the applet's help\n"
"\n"
"Applets:\n";

static void list_applets(FILE *out, bool verbose)
{
	for (int i = 0; wap_applets[i]; i++) {
		if (verbose)
			fprintf(out, "  %-8s %s\n", wap_applets[i]->name, wap_applets[i]->summary);
		else
			fprintf(out, "%s\n", wap_applets[i]->name);
	}
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
	const char *name, *root = NULL, *config = NULL;
	char who[64];
	bool json = false, help = false, read_only = false;
	char **restrict_globs = NULL;
	struct wap_err err = { 0 };
	struct wap_ws ws;
	struct wap_call call = { 0 };
	struct wap_run run = { 0 };
	json_t *req, *res = NULL;
	int nargs = 0, status;
	char **args;

	signal(SIGPIPE, SIG_IGN);
	name = basename(argv[0]);
	if (!strncmp(name, "wap-", 4) && name[4]) {
		name += 4;
	} else {
		if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
			fputs(main_usage, argc < 2 ? stderr : stdout);
			list_applets(argc < 2 ? stderr : stdout, true);
			return argc < 2 ? 2 : 0;
		}
		if (!strcmp(argv[1], "--version")) {
			printf("wap %s\n", WAP_VERSION);
			return 0;
		}
		if (!strcmp(argv[1], "--list")) {
			list_applets(stdout, false);
			status = finish("wap");
			return status < 0 ? 0 : status;
		}
		if (!strcmp(argv[1], "--install"))
			return install(argc - 2, argv + 2);
		name = argv[1];
		argv += 2, argc -= 2;
		goto find;
	}
	argv++, argc--;
find:
	a = wap_applet_find(name);
	if (!a) {
		fprintf(stderr, "wap: unknown applet '%s' (see 'wap --list')\n", name);
		return 127;
	}
	snprintf(who, sizeof(who), "wap %s", a->name);
	exit2 = a->flags & WAP_APPLET_EXIT2;

	/* take the global flags out, up to a "--" */
	args = calloc(argc + 1, sizeof(*args));
	if (!args)
		return 125;
	for (int i = 0; i < argc; i++) {
		char *s = argv[i];
		const char **slot = NULL;

		if (!strcmp(s, "--")) {
			while (i < argc)
				args[nargs++] = argv[i++];
			break;
		}
		if (!strcmp(s, "--json"))
			json = true;
		else if (!strcmp(s, "--help") || !strcmp(s, "-h"))
			help = true;
		else if (!strcmp(s, "--read-only"))
			read_only = true;
		else if (!strcmp(s, "--root"))
			slot = &root;
		else if (!strncmp(s, "--root=", 7))
			root = s + 7;
		else if (!strcmp(s, "--config"))
			slot = &config;
		else if (!strncmp(s, "--config=", 9))
			config = s + 9;
		else if (!strcmp(s, "--restrict") || !strncmp(s, "--restrict=", 11)) {
			const char *g = s[10] == '=' ? s + 11 : (i + 1 < argc ? argv[++i] : NULL);
			if (!g) {
				fprintf(stderr, "%s: option '--restrict' needs a value\n", who);
				return 2;
			}
			wap_strv_push(&restrict_globs, g);
		} else
			args[nargs++] = s;
		if (slot) {
			if (i + 1 >= argc) {
				fprintf(stderr, "%s: option '%s' needs a value\n", who, s);
				return 2;
			}
			*slot = argv[++i];
		}
	}
	if (help) {
		free(args);
		wap_strv_free(restrict_globs);
		fputs(a->usage, stdout);
		status = finish(who);
		return status < 0 ? 0 : status;
	}
	if (!(a->flags & WAP_APPLET_NOWS)) {
		if (wap_ws_init(&ws, root, config, &err))
			die_err(who, &err, json);
		if (read_only)
			ws.pol.read_only = true;
		for (int i = 0; restrict_globs && restrict_globs[i]; i++)
			if (wap_globset_add(&ws.pol.restricted, restrict_globs[i], WAP_GLOB_BASENAME, &err) ||
			    wap_strv_push(&ws.pol.restricted_paths, restrict_globs[i]))
				die_err(who, &err, json);
	} else {
		memset(&ws, 0, sizeof(ws));
		ws.rootfd = -1;
	}
	wap_strv_free(restrict_globs);
	call.ws = &ws;
	/* after the workspace: an option naming a data file is read beneath
	 * its root, under its policy */
	req = wap_args_parse(a, &ws, nargs, args, &err);
	free(args);
	if (!req)
		die_err(who, &err, json);

	/* the one road of every door (lib/run.h): the CLI has no audit log
	 * and no approver, so requireApproval refuses what mutates */
	run.call = &call;
	if (a->cli_main) {
		/* an applet printing as it goes (grep, glob, exec, serve):
		 * the road's gate, then its own main */
		double t0;
		if (!(a->flags & WAP_APPLET_NOTOOL) && wap_run_begin(&run, a->name, req, &t0, &err))
			die_err(who, &err, json);
		status = a->cli_main(&ws, req, json);
		json_decref(req);
		wap_ws_release(&ws);
		return status;
	}
	if (a->cli_prep && a->cli_prep(&call, req, &err))
		die_err(who, &err, json);
	if ((a->flags & WAP_APPLET_NOTOOL) ? a->op(&call, req, &res, &err) : wap_run_op(&run, a->name, req, &res, &err))
		die_err(who, &err, json);
	if (json) {
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
