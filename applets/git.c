/* wap git: status, diff, log, commit, branches and remotes through libgit2
 *
 * usage: wap git ACTION [OPTIONS] [ARGS]
 *
 * Git without a git binary or a shell (libgit2), confined to the workspace:
 * the repository is the one at --dir (default: the root) or the nearest one
 * above it, never above the root; its .git and work tree, every path and
 * every local remote must be beneath the root.  Paths are relative to the
 * root.  Files denied by restrictedPaths are left out of diffs (and named).
 * Text output by default; --json gives the structured result.
 *
 * JSON result: status gives repository, branch, detached, head, unborn,
 * upstream, clean, changes, staged, unstaged, untracked, conflicted, files;
 * diff gives diff, files, additions, deletions (a diff longer than
 * maxFileSize stops at a line before it: isTruncated, maxBytes, and the
 * files after it, uncountedFiles, are named without counts, "counted":
 * false, as every file of --name-only is; the CLI says so on stderr; a
 * blob past 8 times maxFileSize, or of more than maxFileSize / 2 lines,
 * is diffed as binary); log gives entries, isTruncated (with -p, --stat
 * or --name-only each entry has the keys of diff too, and maxBytes says
 * the patches stopped the log at maxFileSize); show gives hash, shortHash, subject, message, author,
 * authorEmail, date, committer, committerEmail, commitDate, parents (with
 * the keys of diff); a commit whose raw message is not message and one
 * newline also gives rawMessage; commit gives success, hash, shortHash, rootCommit;
 * branch gives branches, current; checkout gives created, detached; the
 * other actions give success, paths, path, reinitialized, summary.
 *
 * actions:
 *   status                     branch, upstream, ahead/behind, staged,
 *                              unstaged, untracked and conflicted paths
 *   diff [REV[..REV]] [-- PATH...]
 *                              the patch `git diff` prints, byte for byte
 *   log [REV] [-- PATH...]     commits, newest first (50 unless -n)
 *   show [REV]                 a commit's metadata and patch (default HEAD)
 *   add PATH... (or stage)     stage paths (new, changed and deleted files)
 *   unstage PATH... (or reset) take paths out of the index (back to HEAD)
 *   commit -m MSG [PATH...]    stage PATHs, then commit; an empty commit is
 *                              refused; author from $GIT_AUTHOR_NAME and
 *                              $GIT_AUTHOR_EMAIL, else the git config, else
 *                              $WAP_GIT_AUTHOR_NAME and $WAP_GIT_AUTHOR_EMAIL
 *   branch [NAME]              list branches; with --create or --delete NAME
 *   checkout BRANCH            switch branches (or a REV, detached); refuses
 *                              to overwrite local changes unless --force,
 *                              and to change a restricted file at all
 *   push [REMOTE] [BRANCH]     push a branch (default: the current one)
 *   fetch [REMOTE]             fetch (default: the upstream's remote, origin)
 *   pull [REMOTE]              fetch, then fast-forward only
 *   init [DIR]                 create a repository (default: the root)
 *   clone URL [DIR]            clone into DIR beneath the root
 *
 * options:
 *   ACTION              status|diff|log|show|add|stage|unstage|reset|commit|branch|checkout|push|fetch|pull|init|clone
 *   ARGS                the action's arguments: revisions, paths, names
 *   --staged            diff: the index against HEAD (or against REV)
 *   -U, --context N     diff, show, log -p: lines of context (default 3)
 *   --stat              diff, show, log: a diffstat, as `git diff --stat` prints it
 *   --name-only         diff, log: only the names of changed files
 *   -p, --patch         log: each commit's patch, as `git log -p` (none for a merge)
 *   -n, --max-count N   log: at most N commits (default 50)
 *   --pretty FMT        log, show: the same as --format (below)
 *   --format FMT        log, show: the commits as git prints them in FMT: oneline, short, medium (default), full, fuller, or format:/tformat: with %H %h %P %p %an %ae %ad %at %ai %aI %as (and %c…) %s %b %B %n %% %xNN
 *   --oneline           log, show: one line per commit, as git log --oneline
 *   --date FORMAT       log, show: dates as git's --date: default, short, iso, iso-strict, unix, raw
 *   --since DATE        log: commits after DATE (YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM], @EPOCH, "N days ago")
 *   --until DATE        log: commits before DATE (same forms as --since)
 *   --author REGEX      log: commits whose author ("Name <email>") matches REGEX (POSIX basic, as git)
 *   --grep REGEX        log: commits whose message matches REGEX (POSIX basic, as git)
 *   -m, --message MSG   commit: the commit message
 *   --path PATH         a path to act on or limit to (repeatable; like PATH arguments)
 *   --file PATH         a path to act on or limit to (repeatable; like PATH arguments)
 *   --create            branch: create NAME; checkout: create BRANCH if it is missing
 *   --from REV          branch --create, checkout --create: start the new branch at REV
 *   --delete            branch: delete NAME (a branch not merged into HEAD needs --force)
 *   -a, --all           branch: list remote-tracking branches too
 *   -f, --force         discard local changes (checkout), non-fast-forward (push), unmerged (branch --delete), ignored files (add)
 *   --remote NAME       push, fetch, pull: the remote (default: the upstream's, else origin)
 *   --branch NAME       branch, checkout, push: the branch (instead of an argument)
 *   --rev REV           show, log, diff: the revision (REV..REV for a range)
 *   --url URL           clone: the URL to clone
 *   --dir DIR           the repository's directory (default: found from the root); init, clone: where to create it
 *   --token-file FILE   push, fetch, pull, clone: read the HTTPS token from FILE beneath the root (else $WAP_GIT_TOKEN)
 *
 * Credentials: a token ($WAP_GIT_TOKEN or --token-file) is sent over HTTPS
 * as user x-access-token (plain HTTP only to localhost), and only to the
 * hosts named in $WAP_GIT_TOKEN_HOST ("host" or "host:port", comma-separated;
 * unset: to none), never to whatever host the repository's config names;
 * ssh remotes use the SSH agent.  The token never appears in output, errors
 * or the repository.  Progress of push, fetch and clone is reported to
 * `wap serve` callers.
 *
 * Nothing is written through a symbolic link: a checkout refuses a path
 * beneath one, and actions that write refuse a link among the files they
 * write in .git.  Each action runs confined by Landlock to writing beneath
 * the root and reading beneath it and the user's own git set-up (configs,
 * what they include and name); without Landlock, actions that write are
 * refused.  A .git file, commondir, alternates or a config include leading
 * out of the root are refused.  A checkout
 * that would change a file denied by restrictedPaths is refused, with
 * --force too.
 *
 * exit status: 0 ok, 2 bad argument, unknown revision, nothing to commit
 * or a path beyond a symbolic link, 3 not found (no repository, path,
 * branch or remote), 4 outside the root (or a link in .git that a write
 * would follow), 5 restricted path or read-only workspace, 6 repository
 * owned by another user, 8 a .git file, commondir or alternates that is
 * not a regular file, 9 --dir is not a directory, 10 branch or
 * destination exists,
 * 13 conflict (local changes, non-fast-forward, unmerged branch or paths),
 * 15 file access disabled by policy, or no Landlock to confine a write,
 * 125 failed (network, authentication).
 *
 * examples:
 *   wap git status
 *   wap git diff --staged -- src/main.c
 *   wap git diff HEAD~2..HEAD --stat
 *   wap git log -n 5 --since "2 weeks ago" -- lib/
 *   wap git log --author alice --grep '^fix'
 *   wap git commit -m "fix: port" src/server.c
 *   wap git checkout feature/x --create
 *   WAP_GIT_TOKEN=... WAP_GIT_TOKEN_HOST=github.com wap git push origin main
 */
#include <stdlib.h>
#include <string.h>

#include "applet.h"
#include "applets.h"
#include "git.h"

static const struct wap_opt git_opts[] = {
	{ "action", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ "args", 0, WAP_OPT_STRS, WAP_OPT_POS | WAP_OPT_DASHDASH, NULL },
	{ "staged", 0, WAP_OPT_BOOL, 0, NULL },
	{ "context", 'U', WAP_OPT_INT, 0, NULL },
	{ "stat", 0, WAP_OPT_BOOL, 0, NULL },
	{ "name-only", 0, WAP_OPT_BOOL, 0, NULL },
	{ "patch", 'p', WAP_OPT_BOOL, 0, NULL },
	{ "max-count", 'n', WAP_OPT_INT, 0, NULL },
	{ "pretty", 0, WAP_OPT_STR, 0, "format" },
	{ "format", 0, WAP_OPT_STR, 0, NULL },
	{ "oneline", 0, WAP_OPT_BOOL, 0, NULL },
	{ "date", 0, WAP_OPT_STR, 0, NULL },
	{ "since", 0, WAP_OPT_STR, 0, NULL },
	{ "until", 0, WAP_OPT_STR, 0, NULL },
	{ "author", 0, WAP_OPT_STR, 0, NULL },
	{ "grep", 0, WAP_OPT_STR, 0, NULL },
	{ "message", 'm', WAP_OPT_STR, 0, NULL },
	{ "path", 0, WAP_OPT_STRS, 0, "paths" },
	{ "file", 0, WAP_OPT_STRS, 0, "files" },
	{ "create", 0, WAP_OPT_BOOL, 0, NULL },
	{ "from", 0, WAP_OPT_STR, 0, NULL },
	{ "delete", 0, WAP_OPT_BOOL, 0, NULL },
	{ "all", 'a', WAP_OPT_BOOL, 0, NULL },
	{ "force", 'f', WAP_OPT_BOOL, 0, NULL },
	{ "remote", 0, WAP_OPT_STR, 0, NULL },
	{ "branch", 0, WAP_OPT_STR, 0, NULL },
	{ "rev", 0, WAP_OPT_STR, 0, NULL },
	{ "url", 0, WAP_OPT_STR, 0, NULL },
	{ "dir", 0, WAP_OPT_STR, 0, NULL },
	{ "token-file", 0, WAP_OPT_STR, 0, NULL },
	{ NULL }
};

static const char *sget(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* A diff cut at maxFileSize: said aside, as the commit cap is */
static void diff_cut(const json_t *res, FILE *out)
{
	if (!json_is_true(json_object_get(res, "isTruncated")) || !json_object_get(res, "maxBytes"))
		return;
	fprintf(out == stdout ? stderr : out,
		"%swap git: the diff stops at %lld bytes (maxFileSize); %lld more files not shown: "
		"name paths, or use --stat\n", out == stdout ? "" : "\n",
		(long long)json_integer_value(json_object_get(res, "maxBytes")),
		(long long)json_integer_value(json_object_get(res, "uncountedFiles")));
}

static int git_render(const json_t *res, const json_t *req, FILE *out)
{
	const char *action = sget(req, "action");
	json_t *a, *v;
	size_t i;

	if (!out)
		return 0;
	if (!strcmp(action, "status")) {
		json_t *up = json_object_get(res, "upstream");
		if (json_is_true(json_object_get(res, "detached")))
			fprintf(out, "## HEAD (no branch)");
		else if (json_is_true(json_object_get(res, "unborn")))
			fprintf(out, "## No commits yet on %s", sget(res, "branch"));
		else
			fprintf(out, "## %s", sget(res, "branch"));
		if (json_is_string(up)) {
			long long ah = json_integer_value(json_object_get(res, "ahead"));
			long long bh = json_integer_value(json_object_get(res, "behind"));
			fprintf(out, "...%s", json_string_value(up));
			if (ah && bh)
				fprintf(out, " [ahead %lld, behind %lld]", ah, bh);
			else if (ah)
				fprintf(out, " [ahead %lld]", ah);
			else if (bh)
				fprintf(out, " [behind %lld]", bh);
		}
		fputc('\n', out);
		json_array_foreach(json_object_get(res, "files"), i, v) {
			const char *xy = sget(v, "xy");
			char c0 = xy[0] == '.' ? ' ' : xy[0], c1 = xy[1] == '.' ? ' ' : xy[1];
			struct wap_sb sb = WAP_SB_INIT;
			if (json_object_get(v, "origPath")) {
				wap_git_quote_path(&sb, sget(v, "origPath"));
				wap_sb_adds(&sb, " -> ");
			}
			wap_git_quote_path(&sb, sget(v, "path"));
			fprintf(out, "%c%c %s\n", c0, c1, sb.buf ? sb.buf : "");
			wap_sb_release(&sb);
		}
		return 0;
	}
	if (!strcmp(action, "diff")) {
		fputs(sget(res, "diff"), out);
		a = json_object_get(res, "restricted");
		if (json_array_size(a)) {
			fputs("(left out, denied by restrictedPaths:", out);
			json_array_foreach(a, i, v)
				fprintf(out, " %s", json_string_value(v));
			fputs(")\n", out);
		}
		diff_cut(res, out);
		return 0;
	}
	if (!strcmp(action, "log") || !strcmp(action, "show")) {
		/* git's own text (lib/git/pretty.c) */
		struct wap_sb sb = WAP_SB_INIT;
		struct wap_err err = { 0 };
		wap_git_pretty(res, req, &sb, &err);
		if (sb.len)
			fwrite(sb.buf, 1, sb.len, out);
		wap_sb_release(&sb);
		/* wap's cap of 50 is none of git's: said aside on the CLI, so
		 * stdout is git's (a server's text rendering keeps it) */
		if (!strcmp(action, "log") && json_object_get(res, "maxBytes"))
			fprintf(out == stdout ? stderr : out,
				"%swap git: the patches stop at %lld bytes (maxFileSize), and the log "
				"with them: narrow with -n, --since or paths\n", out == stdout ? "" : "\n",
				(long long)json_integer_value(json_object_get(res, "maxBytes")));
		else if (!strcmp(action, "log") && json_is_true(json_object_get(res, "isTruncated")) &&
			 !json_object_get(req, "max_count"))
			fprintf(out == stdout ? stderr : out,
				"%swap git: more commits: raise -n or narrow with --since/--until\n",
				out == stdout ? "" : "\n");
		else
			diff_cut(res, out);
		return 0;
	}
	if (!strcmp(action, "commit")) {
		fprintf(out, "[%s%s %s] %s\n", json_is_string(json_object_get(res, "branch")) ?
			sget(res, "branch") : "detached HEAD",
			json_is_true(json_object_get(res, "rootCommit")) ? " (root-commit)" : "",
			sget(res, "shortHash"), sget(res, "subject"));
		return 0;
	}
	if (!strcmp(action, "branch") && json_object_get(res, "branches")) {
		if (json_is_string(json_object_get(res, "detached")))
			fprintf(out, "* %s\n", sget(res, "detached"));
		json_array_foreach(json_object_get(res, "branches"), i, v) {
			fprintf(out, "%c %s%s", json_is_true(json_object_get(v, "current")) ? '*' : ' ',
				json_is_true(json_object_get(v, "remote")) ? "remotes/" : "", sget(v, "name"));
			if (json_is_string(json_object_get(v, "target")))
				fprintf(out, " -> %s", sget(v, "target"));
			fputc('\n', out);
		}
		return 0;
	}
	/* the rest say what they did in one line */
	fprintf(out, "%s\n", sget(res, "summary"));
	return 0;
}

const struct wap_applet wap_applet_git = {
	.name = "git",
	.summary = wap_summary_git,
	.usage = wap_usage_git,
	.title = "Git",
	.opts = git_opts,
	.op = wap_git,
	.render = git_render,
	.flags = WAP_APPLET_DESTRUCTIVE,
};
