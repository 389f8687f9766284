/* fs/find.h - find files and directories by glob (the glob request object:
 * pattern, path, max_results, sort, type, no_ignore, no_default_excludes,
 * follow, threads), walked in parallel as grep walks. */
#ifndef WAP_FIND_H
#define WAP_FIND_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "applet.h"

struct wap_hit {
	char *path;		/* root-relative */
	struct timespec mtime;	/* zero unless stat'ed */
	uint32_t len;		/* strlen(path) */
	bool dir;
};

struct wap_hits;

/* what a glob found, sorted; ALL[0 .. min(TOTAL, MAX)) are shown */
struct wap_found {
	struct wap_hit **all;
	size_t allsz;		/* ALL's mapped size, 0: malloc'd */
	size_t total;
	size_t max;		/* 0: all */
	struct wap_hits *per;	/* own the paths */
	int nw;
};

/* Walk and match REQ into *FO (release it with wap_found_release);
 * MTIME: stat the hits even when not sorting by time.  -1 with ERR. */
int wap_find(const struct wap_call *call, const json_t *req, bool mtime,
	     struct wap_found *fo, struct wap_err *err);
void wap_found_release(struct wap_found *fo);

/* the result object {files: [{path, isDirectory, mtime}], isTruncated,
 * totalFound} (the caller owns it; NULL when out of memory) */
json_t *wap_found_json(const struct wap_found *fo);

#endif
