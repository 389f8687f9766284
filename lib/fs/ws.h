/* fs/ws.h - the workspace: its root, its sandbox, its policy and limits.
 *
 * The root is opened once (O_PATH|O_DIRECTORY).  Every path a caller gives
 * is turned into a path relative to the root (wap_ws_rel) and opened with
 * openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS) against the root fd, so the
 * kernel refuses anything that leaves it: "..", absolute symlinks, symlinks
 * pointing out.  Where openat2 is missing, a component-wise O_NOFOLLOW walk
 * resolves symlinks by hand with the same rules.  There is no realpath() and
 * string-prefix confinement anywhere.
 *
 * A struct wap_ws is read-only after wap_ws_init() and may be shared by
 * threads.  Strings it holds belong to it.
 */
#ifndef WAP_WS_H
#define WAP_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "err.h"
#include "glob.h"

struct wap_limits {
	size_t max_file_size;		/* read without a range: 1 MiB */
	size_t max_dir_entries;		/* 500 */
	size_t max_search_results;	/* 100 */
	size_t max_output_size;		/* exec, per stream: 50 KiB */
	size_t max_output_cap;		/* the most a caller may ask: 64 MiB */
	long max_exec_ms;		/* default timeout: 30000 */
	long max_exec_ms_cap;		/* the most a caller may ask: 600000 */
	size_t max_line_len;		/* 2000 */
};

struct wap_policy {
	struct wap_globset restricted;	/* security.restrictedPaths */
	char **restricted_paths;	/* the globs as given (NULL-terminated) */
	bool read_only;			/* security.readOnly */
	bool allow_fs;			/* security.allowFileSystemAccess */
	bool allow_terminal;		/* security.allowTerminalAccess */
	bool allow_exec;		/* security.allowCommandExecution */
	bool require_approval;		/* security.requireApproval */
	bool sandbox;			/* security.sandbox: Landlock for exec */
	char **restricted_cmds;		/* security.restrictedCommands */
	char **allowed_cmds;		/* security.allowedCommands */
	char **allowed_categories;	/* security.allowedMethodCategories */
};

struct wap_ws {
	int rootfd;		/* O_PATH|O_DIRECTORY */
	char *root;		/* absolute path of the root, as opened */
	size_t rootlen;
	char *root_alias;	/* the root as the caller spelled it (absolute,
				 * through symlinks) when that differs; or NULL */
	size_t root_aliaslen;
	bool confined;		/* false for --root / */
	struct wap_limits lim;
	struct wap_policy pol;
	json_t *config;		/* the config document ({} if none); owned */
	char *anchor;		/* a root narrowed beneath the configured one
				 * (MCP client roots): its path from the
				 * configured root, to which every policy path
				 * stays anchored; NULL for the configured root */
	char **policy_rels;	/* the config file's paths (as named and as
				 * resolved) from the configured root when it
				 * lies beneath it, and those of wap's own logs
				 * (wap_ws_protect): never written; or NULL */
};

/* Open ROOT (NULL: $WAP_ROOT, else ".") and load the config: CONFIG_PATH,
 * else $WAP_CONFIG, else $XDG_CONFIG_HOME/wap/config.json (default
 * ~/.config/wap/config.json) when present: outside the workspace, so the
 * agent cannot rewrite its own policy.  A config file that does lie
 * beneath the root is write-protected (wap_ws_check). */
int wap_ws_init(struct wap_ws *ws, const char *root, const char *config_path,
		struct wap_err *err);
void wap_ws_release(struct wap_ws *ws);

/* ".git" or ".wap" when REL (from WS's root, judged from the configured
 * root) lies in one of them, which only `wap git` (.git) or nothing
 * (.wap) writes; else NULL. */
const char *wap_ws_protected(const struct wap_ws *ws, const char *rel);

/* FILE (an audit log, a transcript) written by wap itself: no door
 * writes, moves or removes it when it lies beneath the root. */
int wap_ws_protect(struct wap_ws *ws, const char *file);

/* Apply a config document ({"security": {...}} or dotted keys) on top of
 * the current policy and limits.  Used for the config file and by tests. */
int wap_ws_apply_config(struct wap_ws *ws, const json_t *config, struct wap_err *err);

/* Turn a caller's PATH into a normalised path relative to the root
 * ("." for the root itself), in a new malloc'd string.  Absolute paths must
 * name something under the root (compared component by component, with
 * the root's real path or its spelling as given, e.g. through a symlink).
 * Refuses embedded NULs (pass the JSON length), empty and overlong paths.
 * "." and ".." are resolved lexically ("a/../b" is "b"); a ".." that
 * climbs above the root is ACCESS_DENIED.  Symlinks are left to the
 * kernel at open time. */
int wap_ws_rel(const struct wap_ws *ws, const char *path, size_t len, char **rel,
	       struct wap_err *err);

/* Kinds of access, for policy checks. */
#define WAP_ACC_READ	0
#define WAP_ACC_WRITE	1

/* restrictedPaths, read-only mode and allowFileSystemAccess for REL.
 * Writes are refused, whatever the config says, to anything with a path
 * component ".git" (only `wap git` writes a repository: no hooks,
 * core.fsmonitor or alternates can be planted) or ".wap" (wap's own
 * place), and to the config file and the directories holding it.  REL is
 * taken from this root; the policy is judged from the configured root
 * (ws->anchor), so a narrowed root cannot move or lift it. */
int wap_ws_check(const struct wap_ws *ws, const char *rel, int access,
		 struct wap_err *err);

/* Open REL (from wap_ws_rel) beneath the root.  FLAGS as for open(2);
 * O_CLOEXEC is added.  O_NOFOLLOW applies to the last component only, as
 * in open(2).  Returns an fd or -1 with err set (messages name REL).
 * Policy is checked on the lexical path and on the path actually opened,
 * so a symlink to a restricted file is refused too. */
int wap_ws_open(const struct wap_ws *ws, const char *rel, int flags, mode_t mode,
		int access, struct wap_err *err);

/* Open the directory that will hold REL's last component (an O_RDONLY
 * directory fd), creating missing parents when MKPARENTS.  *NAME points into
 * REL at the last component, which is never "", "." or "..". */
int wap_ws_open_parent(const struct wap_ws *ws, const char *rel, bool mkparents,
		       const char **name, struct wap_err *err);

/* The path of an open fd relative to the root (malloc'd), from
 * /proc/self/fd.  NULL if it is not beneath the root. */
char *wap_ws_fd_rel(const struct wap_ws *ws, int fd);

/* Where NAME in the open directory DIRFD really is, relative to the root
 * (malloc'd; NAME NULL or "." is DIRFD itself): a symlink on the way to
 * DIRFD makes it other than the path asked.  NULL if it is not beneath
 * the root, or its path is too long to tell, or no memory. */
char *wap_ws_real_at(const struct wap_ws *ws, int dirfd, const char *name);

/* Absolute path for display: root + "/" + rel (malloc'd). */
char *wap_ws_abs(const struct wap_ws *ws, const char *rel);

/* Is REL denied by restrictedPaths (anchored as in wap_ws_check)?  For
 * walkers that filter entries; a glob that cannot decide denies. */
bool wap_ws_restricted(const struct wap_ws *ws, const char *rel, size_t len);

/* Is NAME in the directory DIR (root-relative) denied by restrictedPaths?
 * A listing asks it of the directory as named and, when a symlink on the
 * way makes them differ, of where it really is (wap_ws_listing_real). */
bool wap_ws_restricted_in(const struct wap_ws *ws, const char *dir, const char *name);

/* For a listing of the open directory FD named REL: *REAL (malloc'd) is
 * where it really is when restrictedPaths are set and that is not REL,
 * else NULL.  -1 with err (ACCESS_DENIED) when where cannot be told. */
int wap_ws_listing_real(const struct wap_ws *ws, int fd, const char *rel, char **real,
			struct wap_err *err);

/* Force the component-wise fallback (tests; also $WAP_NO_OPENAT2=1). */
extern bool wap_ws_no_openat2;

#endif
