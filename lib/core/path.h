/* core/path.h - spelling root-relative paths, once: DIR/NAME where the top of
 * the workspace is "." (or "" or NULL) and is not written. */
#ifndef WAP_PATH_H
#define WAP_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

/* Append DIR/NAME (N bytes of NAME) to SB: NAME alone when DIR is the
 * top, DIR alone when N is 0, "." when both are empty. */
void wap_path_addn(struct wap_sb *sb, const char *dir, const char *name, size_t n);
void wap_path_add(struct wap_sb *sb, const char *dir, const char *name);

/* Paths in the order of their components: '/' sorts before every other
 * byte, so "a/b" < "a-b" and a directory's entries follow it.  <0, 0, >0. */
int wap_path_cmp(const char *a, const char *b);

/* DIR/NAME as above, malloc'd (the caller frees it); NULL when out of
 * memory. */
char *wap_path_join(const char *dir, const char *name);

/* Is P strictly beneath DIR (both absolute and clean, "/" the top)?
 * wap_path_within: or P is DIR. */
bool wap_path_beneath(const char *p, const char *dir);
bool wap_path_within(const char *p, const char *dir);

#endif
