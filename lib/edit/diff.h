/* edit/diff.h - unified diffs of two buffers, made by libgit2
 * (git_patch_from_buffers), never by hand.
 *
 * The text is what `git diff` prints: a "diff --git" header, "new file" /
 * "deleted file" lines, ---/+++ and hunks with "\ No newline at end of
 * file" markers, so it can be fed back to `git apply` or `wap edit --patch`.
 */
#ifndef WAP_DIFF_H
#define WAP_DIFF_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

struct wap_diff {
	char *text;		/* malloc'd, NUL-terminated; "" when equal */
	size_t len;
	size_t additions;	/* '+' lines */
	size_t deletions;	/* '-' lines */
};

/* Diff OLD (NULL: the file is new) against NEW (NULL: the file is deleted).
 * OLDPATH/NEWPATH name the sides in the headers (NEWPATH NULL: same as
 * OLDPATH).  Fills *D (release with wap_diff_release); 0 or -1 with err. */
int wap_diff_make(const char *old, size_t oldlen, const char *new, size_t newlen,
		  const char *oldpath, const char *newpath, struct wap_diff *d,
		  struct wap_err *err);
void wap_diff_release(struct wap_diff *d);

/* The diff text as a JSON string (a new reference): bytes that are not
 * UTF-8 (a Latin-1 file) are shown as U+FFFD, since JSON cannot carry
 * them; the file itself is never touched by this. */
json_t *wap_diff_json(const struct wap_diff *d);

#endif
