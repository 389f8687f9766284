/* git/git.h - git operations through libgit2, confined to the workspace.
 *
 * No git binary and no shell: every action is a libgit2 call, so no
 * argument can be taken for an option (the argument-injection class of
 * the reference MCP git server's CVEs).  The repository is found at the
 * given directory or above it, never above the workspace root; its git
 * directory and work tree must be beneath the root (checked through the
 * root fd), and so must every path and local remote.
 *
 * Nothing is written through a symbolic link in the work tree or in the
 * git directory (checked before libgit2 writes), and, under that, each
 * action runs in a thread that Landlock confines to writing beneath the
 * root: a thread of its own, or the caller's for good when call->oneshot
 * (without Landlock, actions that write are refused).  A .git file,
 * commondir, object store or alternates leading out of the root are
 * refused before libgit2 opens the repository.
 *
 * Credentials for push/fetch/pull/clone: a token from $WAP_GIT_TOKEN or a
 * token file (read through the sandbox), offered as the x-access-token
 * user over HTTPS only (and plain HTTP to localhost), to the hosts named in
 * $WAP_GIT_TOKEN_HOST only, and the SSH agent for ssh remotes.  The token is never put in a result, an error message,
 * a URL or the repository config, and is wiped from memory after use.
 */
#ifndef WAP_GIT_H
#define WAP_GIT_H

#include <jansson.h>

#include "applet.h"
#include "err.h"
#include "strbuf.h"

/* Load libgit2 (see lazy.c) and run git_libgit2_init(), once per process:
 * 0, or -1 with ERR when libgit2 cannot be loaded. */
int wap_git_init(struct wap_err *err);

/* The git op: REQ has "action" (status, diff, log, show, add/stage,
 * unstage/reset, commit, branch, checkout, push, fetch, pull, init, clone)
 * and the keys of the git applet's options (applets/git.c: a long option
 * with '-' turned into '_').  REQ is borrowed; *RES is a new object the
 * caller owns.  Progress of transfers goes to call->progress when set;
 * the call's cancellation token stops them. */
int wap_git(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err);

/* PATH as git prints it with core.quotePath on (the default): in double
 * quotes, C-escaped and octal for bytes >= 0x7f, when it holds any such
 * byte, a control character, '"' or '\\'; else as it is. */
void wap_git_quote_path(struct wap_sb *sb, const char *path);

/* The text `git log` or `git show` (REQ's action) prints for RES, the
 * result of that action, in REQ's "format" (--pretty/--format: a name or
 * format:/tformat: placeholders) or "oneline", onto OUT.  With OUT NULL
 * only checks the format (RES may be NULL).  -1 and ERR on a format wap
 * cannot print as git does. */
int wap_git_pretty(const json_t *res, const json_t *req, struct wap_sb *out, struct wap_err *err);

/* The text `git log` prints for COMMIT, an entry of log's result, the
 * (N+1)th shown, in REQ's format (checked with wap_git_pretty first):
 * what wap_git_pretty prints for it among the others, onto OUT. */
void wap_git_pretty_entry(const json_t *commit, size_t n, const json_t *req, struct wap_sb *out);

#endif
