/* proc/mntview.h - what a sandboxed command's mount namespace shows of the
 * file system: only the paths its Landlock rules name (landlock.c).
 *
 * Landlock decides what a command may open, not what it may look up, and
 * connect() on a pathname unix socket is no open: a sandboxed command could
 * reach an ssh agent's socket in /tmp, a container engine's in /run, any
 * service's, by its name.  So in its private mount namespace every top
 * directory of / that holds nothing the rules name is covered by an empty
 * read-only tmpfs (a socket there by /dev/null), and one that holds some
 * (/tmp holding the root and the temp dir, $HOME holding .gitconfig) by a
 * tmpfs holding only those, bind-mounted back as they were, with the
 * symbolic links on the way to them (~/.gitconfig -> dotfiles/gitconfig).
 * Below a path that is kept (the root, /usr, /etc...) nothing changes.
 *
 * The plan is made in the caller (libc, errors reported properly) and
 * carried out in the command's child with system calls only (rsys.h),
 * after it entered its mount namespace and made / private. */
#ifndef WAP_MNTVIEW_H
#define WAP_MNTVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct wap_view_op {
	int op;			/* mntview.c's V_* */
	int slot;		/* a cloned tree, for V_CLONE and V_ATTACH */
	char *path;
	char *arg;		/* a link's target */
	char *what;		/* the step, for an error */
};

struct wap_view {
	struct wap_view_op *ops;
	size_t n;
	int nslots;
	int userns;		/* for V_IDMAP: not the view's (never closed) */
};

/* Plan the view that shows only KEEP (paths as given: links are followed,
 * and kept where the view rebuilds their dir); NULL-terminated.  A path
 * that does not exist is skipped.  Those of SYS (the system dirs, among
 * KEEP) are shown through an idmapped mount by USERNS (>= 0; -1: as they
 * are) that maps no file's owner: only what the system lets everyone
 * read can be read there, whoever the command is (root's DAC override
 * needs an owner it knows), but where they hold a path of OWN (the root,
 * the temp dir...), shown as it is.  Each dir of SHUT (real paths) that
 * is a dir beneath a kept one, holding nothing kept, is shown empty.
 * Every mount beneath a covered, hidden or shut dir is unmounted, so that
 * the command's mount table is its view's.  0, or -1 with ERR set. */
int wap_view_plan(struct wap_view *v, char *const *keep, char *const *sys, char *const *own,
		  char *const *shut, int userns, struct wap_err *err);
void wap_view_free(struct wap_view *v);

/* Does the way to PATH (its links followed) pass through, or end in, one
 * of DIRS (real paths)?  true too where it cannot be told. */
bool wap_path_through(const char *path, char *const *dirs);

/* Carry the plan out (in the command's child): 0 or an errno, *WHAT the
 * step it failed at. */
int wap_view_enter(const struct wap_view *v, const char **what);

#endif
