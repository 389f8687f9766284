/* fs/ignore.h - .gitignore / .git/info/exclude / .ignore rules, as git decides.
 *
 * A struct wap_ign is one directory's rules (its .ignore and .gitignore,
 * or the repository's info/exclude) chained to its parent directory's, so
 * a walker hands each subdirectory a frame that shares its ancestors'.
 * Frames are reference counted (atomically: threads share them).
 *
 * Matching follows gitignore(5) and git's wildmatch: patterns without a
 * slash match the name at any depth, a slash elsewhere anchors the pattern
 * to its file's directory, a trailing slash matches directories only, "!"
 * re-includes, "**" spans directories; the last matching line of a file
 * wins and files deeper in the tree win over shallower ones; .ignore (as
 * ripgrep) wins over .gitignore, which wins over info/exclude, which wins
 * over the user's global file ($XDG_CONFIG_HOME/git/ignore, else
 * ~/.config/git/ignore: git's default core.excludesFile).  Braces are
 * literal, as in git.  A path inside an ignored directory is ignored by the
 * walker never descending into it.
 */
#ifndef WAP_IGNORE_H
#define WAP_IGNORE_H

#include <stdbool.h>
#include <stddef.h>

struct wap_ign_list;	/* the patterns of one file */

struct wap_ign {
	int refs;			/* atomic */
	struct wap_ign *parent;		/* owned reference, may be NULL */
	char *base;			/* directory of the files, relative to the
					 * matching root, "" at the top; owned */
	size_t baselen;
	struct wap_ign_list *lists[3];	/* in precedence order; NULL when absent */
	int nlists;
	char *above;			/* a directory above the matching root (the
					 * root is inside its repository): the root's
					 * path from it ("pkg/app"), prefixed to the
					 * paths matched; owned, NULL otherwise */
	size_t abovelen;
};

/* Parse ignore-file TEXT into a list (NULL when it has no pattern). */
struct wap_ign_list *wap_ign_parse(const char *text, size_t len);
void wap_ign_list_free(struct wap_ign_list *l);

/* A new frame for directory BASE (copied) on top of PARENT (a reference is
 * taken), holding LISTS (ownership passes to the frame; NULLs skipped). */
struct wap_ign *wap_ign_push(struct wap_ign *parent, const char *base,
			     struct wap_ign_list **lists, int n);
struct wap_ign *wap_ign_ref(struct wap_ign *ig);
void wap_ign_unref(struct wap_ign *ig);

/* Is PATH (relative to the matching root, '/'-separated, no leading "./", no NUL)
 * ignored?  Only the rules of the frames are consulted, not its parents'
 * directories (the walker prunes those).  NULL IG: never. */
bool wap_ign_ignored(const struct wap_ign *ig, const char *path, size_t len, bool isdir);

/* git's wildmatch (WM_PATHNAME): 0 on a match. Exposed for tests. */
int wap_wildmatch(const char *pattern, const char *text);

#endif
