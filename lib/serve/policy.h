/* serve/policy.h - the one table of operations, and the one check every door
 * makes before running one.
 *
 * Every operation any door offers is listed once in lib/serve/policy.c: the
 * applets (CLI, MCP tools of every profile), the actions of `git`, the
 * Agent Control Protocol's methods (WebSocket) and the Agent Client
 * Protocol's (acp profile).  Its flags say what it does to the workspace;
 * from them, and nothing else, come read-only mode, requireApproval and
 * the audit log's "mutating" mark.  A door never keeps its own list: it
 * calls wap_policy_allow() with the op's name and its request.
 *
 * Paths are judged separately, by wap_ws_check() (restrictedPaths, .git,
 * .wap, the config), where every byte is opened.
 */
#ifndef WAP_POLICY_H
#define WAP_POLICY_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>

#include "cancel.h"
#include "err.h"
#include "ws.h"

#define WAP_OP_WRITES		1u	/* changes files or the repository:
					 * refused in read-only mode */
#define WAP_OP_RUNS		2u	/* runs commands (in read-only mode they
					 * run in a read-only sandbox) */
#define WAP_OP_DESTRUCTIVE	4u	/* removes or replaces what was there */
#define WAP_OP_TREEWIDE		8u	/* rewrites files across the tree (a git
					 * checkout): holds the tree lock alone,
					 * as mv does (lib/fs/tree.h) */
#define WAP_OP_NETFIRST		16u	/* ... after it waits on the network
					 * (a git pull's fetch): not held until
					 * then, alone from then on (the op
					 * asks: wap_tree_let_go) */
#define WAP_OP_TIMED		32u	/* works on files alone: runs under the
					 * call's time limit (wap_run_op; the ops
					 * that run commands, git and language
					 * servers have clocks of their own) */
#define WAP_OP_GITDIR		64u	/* writes inside the git dir alone (a
					 * fetch's objects and refs): holds no
					 * tree lock, so a move and the writes
					 * behind it do not wait on its remote */
#define WAP_OP_MUTATING		(WAP_OP_WRITES | WAP_OP_RUNS)

struct wap_opdesc {
	const char *name;	/* "write", "git.commit", "fs.writeFile",
				 * "fs/write_text_file" */
	const char *category;	/* fs, editor, search, git, terminal, exec, state */
	unsigned flags;		/* WAP_OP_* */
};

/* The entry for NAME, or NULL when there is none. */
const struct wap_opdesc *wap_op_find(const char *name);

/* What op NAME does with request REQ (may be NULL): its entry's flags,
 * refined by the request where the request decides (grep with write,
 * edit with dry_run, git by action, git branch with create/delete).  An
 * op missing from the table counts as WRITES|RUNS: fail closed. */
unsigned wap_op_flags(const char *name, const json_t *req);

/* The category op NAME falls in with request REQ, refined as its flags
 * are: git and sym by action (sym rename writes files: fs), grep with
 * write: fs.  NULL for an op missing from the table. */
const char *wap_op_category(const char *name, const json_t *req);

/* How a door asks for approval (security.requireApproval). */
struct wap_approver {
	const char *command;	/* run with sh -c; NULL: there is none */
	long timeout_ms;	/* <= 0: 60 s */
};

#define WAP_POLICY_UNAPPROVED	-2	/* wap_policy_allow: no approval */

/* Is category CAT (of op or method NAME) turned on for WS?  0 yes; -1
 * FEATURE_DISABLED: not in security.allowedMethodCategories ("session",
 * the ACP client's permission records, is never judged), or fs, editor
 * or search with security.allowFileSystemAccess off, or terminal with
 * security.allowTerminalAccess off. */
int wap_policy_feature(const struct wap_ws *ws, const char *cat, const char *name, struct wap_err *err);

/* May op NAME run with REQ on WS?  0 yes.  -1: refused by
 * wap_policy_feature (the op's category, or CATEGORY when not NULL) or by read-only mode
 * (PATH_RESTRICTED).  WAP_POLICY_UNAPPROVED: requireApproval is on, the op
 * mutates, and the approver refused, timed out, could not run, or there
 * is none (AP NULL or without a command); err says which (kind
 * EXECUTION_FAILED, message "Operation cancelled: ..."; the Agent Control
 * Protocol answers -32006).  The approver gets NAME as $1, the op's
 * subject (path, query, name...) as $2, every other target REQ names
 * (destination, paths, argv, text...) as $3..., each with its control
 * characters in caret notation, and {"method","params": REQ} whole on
 * stdin; it runs in a process group of its own, killed when it has
 * answered or the wait ends; the token CANCEL (may be NULL) stops the
 * wait. */
int wap_policy_allow(const struct wap_ws *ws, const char *name, const json_t *req,
		     const char *category, const struct wap_approver *ap, const struct wap_cancel *cancel,
		     struct wap_err *err);

#endif
