/* fs/tree.h - whole directory trees by fd: policy scan, remove, copy.
 *
 * Every walk goes from directory fd to directory fd (openat with
 * O_NOFOLLOW, fdopendir): no path is resolved again from the root, so a
 * tree being changed underneath cannot redirect the walk, and symbolic
 * links are removed or copied as links, never followed.  REL arguments
 * are paths from the root used for policy checks and messages only.
 * The walks and a file's copy stop when the call this thread runs is
 * cancelled (wap_cancel_current): a copy or removal is then left part
 * done, as cp -r or rm -r stopped by a signal would leave it.
 * Nothing here prints; errors fill struct wap_err.
 */
#ifndef WAP_TREE_H
#define WAP_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "cancel.h"
#include "err.h"
#include "ws.h"

/* The tree lock, one for the process (every workspace, session and door
 * in it): an op that writes by path holds it shared for the call, one
 * that moves, copies or removes a tree holds it alone from its check to
 * its end (wap_run_op takes it, as the one table of ops says of the
 * request: lib/serve/policy.h).  A tree's check and what is done after
 * it are then one step against the other calls: a file written into a
 * tree between its check and its move landed under a glob that denies
 * it.  Commands are not held by it (exec,
 * terminals: restrictedPaths do not hold inside the sandbox).  Taken
 * again by a thread that holds it, it counts; alone while it is held
 * shared by the same thread, INVALID_ARGUMENT.  The wait polls CANCEL.
 * -1 with err. */
int wap_tree_lock(bool alone, const struct wap_cancel *cancel, struct wap_err *err);
void wap_tree_unlock(void);
/* An op that holds it shared and waits on the network before it rewrites
 * the tree (a git pull's fetch, which writes inside the git dir alone: a
 * slow remote held every move of the server, and the writes behind the
 * move) lets go of it while it waits: true when it was held shared once
 * by this thread and is let go, for the op to take it alone after with
 * wap_tree_lock (what it read before may have changed meanwhile). */
bool wap_tree_let_go(void);

/* Deeper trees are refused (and each level holds an fd). */
#define WAP_TREE_MAX_DEPTH 256

/* Check NAME in the directory PARENT (at REL) and, if it is a directory,
 * everything under it against the policy for ACCESS, by the path asked
 * and by where it really is (a symlink on the way makes them differ;
 * where cannot be told, ACCESS_DENIED).  -1 with err at the first
 * refused path. */
int wap_tree_check(const struct wap_ws *ws, int parent, const char *name, const char *rel,
		   int access, struct wap_err *err);

/* The same for everything under the open directory DIRFD (at REL). */
int wap_tree_check_fd(const struct wap_ws *ws, int dirfd, const char *rel, int access,
		      struct wap_err *err);

/* The tree at NAME in PARENT ("." in an open directory: itself) judged as
 * it will be once moved or copied: under DREL when DPARENT is -1 (before
 * the destination's parent is opened), else under where DNAME in DPARENT
 * really is, when that is not DREL. */
int wap_tree_check_dest(const struct wap_ws *ws, int parent, const char *name, const char *drel,
			int dparent, const char *dname, int access, struct wap_err *err);

/* Remove NAME in PARENT and everything under it.  *COUNT (optional) gets
 * the number of entries removed. */
int wap_tree_remove(int parent, const char *name, const char *rel, size_t *count,
		    struct wap_err *err);

struct wap_copy_stats {
	size_t files, dirs, links, skipped;
	unsigned long long bytes;
};

/* Copy the bytes of the open regular file SFD to DNAME in DPARENT: a temp
 * file renamed over (replacing only when FORCE), mode MODE, fsync'd when
 * SYNC.  DREL names the destination in messages. */
int wap_copy_file(int sfd, int dparent, const char *dname, mode_t mode, bool force, bool sync,
		  const char *drel, unsigned long long *bytes, struct wap_err *err);

/* Copy the open file or directory SFD to DNAME in DPARENT; under a
 * directory, symlinks are copied as links, fifos and devices skipped.
 * Without FORCE an existing destination is ALREADY_EXISTS; with it files
 * are replaced and directories merged. */
int wap_tree_copy_fd(int sfd, int dparent, const char *dname, bool force, const char *srel,
		     const char *drel, struct wap_copy_stats *st, struct wap_err *err);

/* The destination of mv/cp SREL DREL: DREL, or DREL/basename(SREL) when
 * DREL is an existing directory (a symlink to one beneath the root
 * counts).  *OUT is malloc'd. */
int wap_tree_dest(const struct wap_ws *ws, const char *srel, const char *drel, char **out,
		  struct wap_err *err);

/* Is the directory DIRFD the directory (DEV, INO) or beneath it?  Walks
 * ".." up to the workspace root ROOTFD. */
bool wap_tree_within(int dirfd, dev_t dev, ino_t ino, int rootfd);

#endif
