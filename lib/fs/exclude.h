/* fs/exclude.h - what recursive work leaves out, said once: the default
 * exclusions and a request's --exclude globs.  The walker
 * (walk.c), grep, ls and the file watcher all ask here. */
#ifndef WAP_EXCLUDE_H
#define WAP_EXCLUDE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "glob.h"

/* The default exclusions as globs ("**" "/node_modules/" "**", ...), NULL-terminated:
 * each names a directory that is skipped with what is under it. */
extern const char *const wap_default_excludes[];

/* Is a directory named NAME (N bytes) a default exclusion? */
bool wap_exclude_default_dir(const char *name, size_t n);

/* Does REL (root-relative) lie in a default exclusion (any component)? */
bool wap_exclude_default_path(const char *rel);

/* Add the request's KEY (a glob or an array of globs; absent or null is
 * none) to GS, each matching a whole path or, without a '/', a name at
 * any depth.  -1 with ERR on a wrong type or a bad glob. */
int wap_exclude_globs(struct wap_globset *gs, const json_t *req, const char *key,
		      struct wap_err *err);

/* Does PATH (N bytes) match one of GS's globs?  DIR: PATH is a directory,
 * so a glob for what is under it (a, slash, two stars) prunes it too. */
bool wap_exclude_match(const struct wap_globset *gs, const char *path, size_t n, bool dir);

#endif
