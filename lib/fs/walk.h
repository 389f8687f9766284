/* fs/walk.h - the parallel directory walker shared by grep, glob and ls.
 *
 * One worker per online CPU (or opts.threads) takes directories from a
 * shared stack; each directory is opened with openat() relative to its
 * parent's fd (never a path string re-resolved) and read whole with
 * getdents64 into a per-worker buffer; the type comes from d_type, stat
 * only when the file system does not say.  Skipped: the default exclusions
 * (directories named node_modules, dist, build, .venv, target, __pycache__,
 * vendor, at any depth) unless no_default_excludes, `.git` always, paths
 * denied by restrictedPaths, and, unless no_ignore, what .ignore files and,
 * inside a git work tree, .gitignore, .git/info/exclude and the user's
 * global excludes file exclude (see ignore.h; a root inside a repository
 * gets the enclosing repository's files too).  Hidden files are walked.
 * Symlinks are skipped unless follow; then they are resolved beneath the
 * root (openat2 RESOLVE_BENEATH) and a directory already visited is not
 * visited again, so loops end.
 *
 * The callback runs in the worker threads, in no particular order:
 * callers that want a stable order sort what they collect.  The entries of
 * one directory are called back one after another by one worker, and
 * dirctx/subctx let a caller tie them to their directory's own entry (a
 * tree of the walk, in which each directory's entries can be sorted alone).
 */
#ifndef WAP_WALK_H
#define WAP_WALK_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "cancel.h"
#include "err.h"
#include "glob.h"
#include "ws.h"

#define WAP_WALK_FILE	1
#define WAP_WALK_DIR	2
#define WAP_WALK_LINK	3	/* a symlink not followed (opts.links) */

struct wap_walk_ent {
	int dirfd;		/* the directory holding it, open during the call */
	const char *name;	/* its name in dirfd ("." for a start directory);
				 * below the start, 8 bytes past its end are
				 * readable (word reads) */
	size_t namelen;		/* strlen(name) */
	const char *path;	/* root-relative path ("src/a.c"), NUL-terminated */
	size_t pathlen;
	int type;		/* WAP_WALK_FILE, _DIR or _LINK */
	int depth;		/* 0: the start path itself, 1: its entries ... */
	int worker;		/* 0 .. threads-1 */
	bool link;		/* reached through a symlink (follow) */
	void *dirctx;		/* what the callback left in *subctx for the
				 * directory holding it (NULL in the start) */
	void **subctx;		/* a directory the walk will enter: where the
				 * callback may leave the dirctx its entries get;
				 * NULL for the rest */
	int fd;			/* such a directory, open (O_RDONLY|O_DIRECTORY)
				 * during the call, or -1 (not open yet) */
};

/* Return 0 to go on, 1 to skip (a directory: do not descend), -1 to stop
 * the walk (fill ERR first; the first error is reported). */
typedef int (*wap_walk_fn)(void *arg, const struct wap_walk_ent *e, struct wap_err *err);

struct wap_walk_opts {
	int threads;		/* 0: one per online CPU */
	int max_depth;		/* <0: unlimited; 1: entries of the start only */
	bool no_ignore;
	bool no_default_excludes;
	bool follow;
	bool dirs;		/* call back for directories (not the start) too */
	bool links;		/* without follow: call back for symlinks too */
	bool sorted;		/* each directory's entries in the byte order of
				 * their names (a name before the longer names
				 * it begins) */
	/* may be NULL; false: a regular file (known so from its directory
	 * entry) the callback would not want, dropped as it is read, by NAME
	 * (LEN bytes) alone; called with the callback's ARG */
	bool (*keep_file)(void *arg, const char *name, size_t len);
	const struct wap_globset *exclude;	/* root-relative globs to prune */
	const struct wap_cancel *cancel;	/* may be NULL */
	/* called by each worker that ran, in its thread, once the whole walk
	 * is over: where per-worker results can be sorted in parallel */
	void (*done)(void *arg, int worker);
};

/* The number of workers wap_walk will use for O. */
int wap_walk_threads(const struct wap_walk_opts *o);

/* Walk REL (root-relative, from wap_ws_rel).  A file is one callback with
 * depth 0.  Returns 0, or -1 with ERR (FILE_NOT_FOUND for a missing REL,
 * the callback's error, TIMEOUT when cancelled).  Unreadable directories
 * below the start are skipped silently, as ripgrep does. */
/* Room for WANT fds: the soft RLIMIT_NOFILE raised (to 65536 at most) and
 * the process's fd table grown once, before threads open many fds (each
 * growth under threads waits for an RCU grace period).  FD: any open fd. */
void wap_fd_room(int fd, int want);

int wap_walk(const struct wap_ws *ws, const char *rel, const struct wap_walk_opts *o,
	     wap_walk_fn fn, void *arg, struct wap_err *err);

#endif
