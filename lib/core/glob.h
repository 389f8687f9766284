/* core/glob.h - shell-style globs compiled to PCRE2 (JIT) regexes.
 *
 * Syntax: `*` (not across /), `**` (across /), `?`, `[abc]`, `[!a]`, `[^a]`,
 * `{a,b}` (nested), `\x` literal.  A leading `**` + `/` also matches zero
 * directories and a trailing `/` + `**` also matches the directory itself
 * (so "a/" + "**" excludes "a").
 * With WAP_GLOB_BASENAME a glob without `/` matches at any depth, as in
 * .gitignore and ripgrep's --glob.  Matching is against '/'-separated
 * relative paths without a leading "./".
 */
#ifndef WAP_GLOB_H
#define WAP_GLOB_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define WAP_GLOB_BASENAME	1u	/* no '/' in glob: match any depth */
#define WAP_GLOB_ICASE		2u

struct wap_glob;

/* Returns a new glob (free with wap_glob_free) or NULL with err set
 * (INVALID_ARGUMENT for a malformed glob). */
struct wap_glob *wap_glob_new(const char *glob, unsigned flags, struct wap_err *err);
void wap_glob_free(struct wap_glob *g);

/* Does the relative path match?  Thread-safe. */
bool wap_glob_match(const struct wap_glob *g, const char *path, size_t len);
/* 1 match, 0 none, -1 undecided: a regex limit was hit (or no memory);
 * wap_glob_match counts that as a match, failing closed. */
int wap_glob_test(const struct wap_glob *g, const char *path, size_t len);

/* The same, telling an error apart: 1 match, 0 no match, -1 the match
 * could not be decided (out of memory, or a DFA workspace past 16 MiB:
 * what the backtracking matcher cannot decide quickly, PCRE2's DFA matcher
 * does, in the path's length times the pattern's).  Deny lists must treat
 * -1 as a match. */
int wap_glob_test(const struct wap_glob *g, const char *path, size_t len);

/* Does the directory PATH, or everything under it, match?  (For pruning:
 * globs ending in "/" + "**" match the directory itself.) */
bool wap_glob_match_dir(const struct wap_glob *g, const char *path, size_t len);

/* Translate to a PCRE2 pattern string (malloc'd); for tests and reuse. */
char *wap_glob_to_regex(const char *glob, unsigned flags, struct wap_err *err);

/* A set of globs: matches if any matches. */
struct wap_globset {
	struct wap_glob **g;
	size_t n;
};
int wap_globset_add(struct wap_globset *s, const char *glob, unsigned flags, struct wap_err *err);
bool wap_globset_match(const struct wap_globset *s, const char *path, size_t len);
/* For deny lists (restrictedPaths): true on a match, and also when a glob
 * could not decide, so no path is let through by a matcher limit. */
bool wap_globset_deny(const struct wap_globset *s, const char *path, size_t len);
bool wap_globset_match_dir(const struct wap_globset *s, const char *path, size_t len);
void wap_globset_release(struct wap_globset *s);

#endif
