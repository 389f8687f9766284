/* proc/cmdpolicy.h - allowedCommands / restrictedCommands for wap exec.
 *
 * A shell line is split into the simple commands it runs: on ;, &&, ||, |,
 * &, newlines and parentheses, and inside $(...), `...`, <(...), >(...),
 * ${...}, $((...)) and unquoted here-documents.  Quotes and backslashes are
 * removed, leading VAR=value assignments and shell keywords (if, then, do,
 * !, {, time ...) skipped, and the program is compared by basename.
 * Wrappers are looked through: `env rm`, `sudo rm`, `nohup`, `timeout 5
 * rm`, `xargs rm`, `find -exec rm`, `bash -c 'rm'`, `eval 'rm'`, `alias
 * x='rm'`, `trap 'rm' EXIT` check rm; a shell reading its commands from
 * stdin (`... | sh`, `bash <<EOF`) is refused while a list is active.
 *
 * A list entry is a program name ("rm", or a glob "python*") optionally
 * followed by leading arguments ("git push"); it matches a command whose
 * words begin that way.  While any list is active, a command whose
 * program name is computed at run time ($VAR, $(...), `...`, globs, brace
 * expansion, $'\x..') cannot be verified and is refused.
 *
 * The parser is a first check against mistakes, not a security boundary: a
 * script file, an interpreter (python -c), quoting or a program that runs
 * others can get past it.  What holds is the sandbox, which enforces the
 * lists on program files (wap_cmd_prog, landlock.h).
 */
#ifndef WAP_CMDPOLICY_H
#define WAP_CMDPOLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define WAP_CMDW_DYN	1u	/* computed at run time */
#define WAP_CMDW_QUOTED	2u	/* some of it was quoted or escaped */
#define WAP_CMDW_ASSIGN	4u	/* NAME=value */

struct wap_cmd {
	char **words;		/* unquoted words, program first; NULL-terminated */
	unsigned *flags;	/* WAP_CMDW_* per word */
	size_t n;
};

struct wap_cmdlist {
	struct wap_cmd *v;
	size_t n, cap;
};

/* Split LINE into its simple commands (the list owns everything; release
 * it with wap_cmdlist_release, also after an error). */
int wap_cmd_split(const char *line, struct wap_cmdlist *out, struct wap_err *err);
void wap_cmdlist_release(struct wap_cmdlist *l);

struct wap_cmdrules {
	char *const *allow;	/* NULL or empty: no allow-list */
	char *const *deny;	/* NULL or empty: no deny-list */
	bool allow_overrides;	/* an allow entry beats a deny entry (config) */
	const char *allow_name;	/* for messages: "allowedCommands", "--allow" */
	const char *deny_name;
};

/* Check a shell line (LINE) or a program with arguments (ARGV, when LINE is
 * NULL).  0 when allowed; else COMMAND_RESTRICTED naming the command. */
int wap_cmd_check(const struct wap_cmdrules *r, const char *line, char *const *argv,
		  struct wap_err *err);

/* The kernel's view of the lists (landlock.h): may the program file NAME
 * be run at all, whatever its arguments?  An allow entry "git status"
 * allows the file git; only a deny entry without arguments ("curl")
 * denies a file. */
enum wap_cmd_verdict {
	WAP_CMD_ALLOWED,
	WAP_CMD_NOT_LISTED,	/* an allow-list is active and does not name it */
	WAP_CMD_DENIED,		/* a deny entry names it */
};
enum wap_cmd_verdict wap_cmd_prog(const struct wap_cmdrules *r, const char *name);

#endif
