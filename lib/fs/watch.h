/* fs/watch.h - file watching with inotify, for fs.watchFiles.
 *
 * A struct wap_watch watches the whole workspace recursively (one inotify
 * watch per directory, skipping the default exclusions and restricted
 * paths; directories created later are added as they appear) once at least
 * one pattern is registered.  Each pattern (a glob, as for `wap glob`: one
 * without '/' matches at any depth) has an id; a change to a file matching
 * any pattern is reported once through the callback, coalesced over
 * WAP_WATCH_COALESCE_MS: created then changed is "created", changed then
 * deleted is "deleted", created then deleted is nothing, deleted then
 * created is "changed".
 *
 * The callback runs on the watcher's own thread with a root-relative path
 * and a type "created" | "changed" | "deleted"; it must not call back into
 * the watcher.  All functions are thread-safe; wap_watch_free() joins the
 * thread.
 */
#ifndef WAP_WATCH_H
#define WAP_WATCH_H

#include "err.h"
#include "ws.h"

#define WAP_WATCH_COALESCE_MS	100
#define WAP_WATCH_ID_LEN	32
#define WAP_WATCH_MAX_DIRS	8192	/* inotify watches per watcher */
#define WAP_WATCH_MAX_PATTERNS	64
#define WAP_WATCH_MAX_ALL	32	/* watchers in a process (inotify instances) */

struct wap_watch;

typedef void (*wap_watch_fn)(void *arg, const char *path, const char *type);

/* WS is borrowed and must outlive the watcher.  SIZE_LIMIT_EXCEEDED past
 * WAP_WATCH_MAX_ALL watchers alive in the process. */
struct wap_watch *wap_watch_new(const struct wap_ws *ws, wap_watch_fn cb, void *arg,
				struct wap_err *err);
void wap_watch_free(struct wap_watch *w);

/* Register PATTERN; its id ("watch-N") goes to ID.  INVALID_ARGUMENT for a
 * bad glob; SIZE_LIMIT_EXCEEDED past WAP_WATCH_MAX_PATTERNS. */
int wap_watch_add(struct wap_watch *w, const char *pattern, char id[WAP_WATCH_ID_LEN],
		  struct wap_err *err);

/* Unregister; NOT_FOUND for an unknown id. */
int wap_watch_remove(struct wap_watch *w, const char *id, struct wap_err *err);

/* Number of directories watched (tests). */
size_t wap_watch_dirs(struct wap_watch *w);

#endif
