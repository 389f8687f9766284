/* fs/file.h - whole-file reads, content versions and atomic writes.
 *
 * A file's version is the git blob id of its bytes (what `git hash-object`
 * prints), computed with libgit2's git_odb_hash.  A write given an
 * expected version refuses with CONFLICT when the file's current bytes have
 * another version; the check and the rename happen under an exclusive
 * flock() on the file, so of two writers holding the same version exactly
 * one wins.
 *
 * Writes go to a temp file in the same directory, are fsync'd, renamed over
 * the target and the directory is fsync'd: a crash leaves the old file or
 * the new one.  Mode bits (and the owner, when root) are kept.  Writing
 * through a symlink writes its target (which must be beneath the root).
 * A read-only file (no write bit) is replaced only when forced; neither
 * the old bytes nor the new ones may pass limits.maxFileSize.
 */
#ifndef WAP_FILE_H
#define WAP_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "err.h"
#include "ws.h"

#define WAP_VERSION_LEN 40

/* Hex blob id of BUF into OUT (41 bytes).  Returns 0, or -1 with err. */
int wap_blob_id(const void *buf, size_t len, char out[WAP_VERSION_LEN + 1], struct wap_err *err);

/* Hex blob id of the bytes of an open regular file, read in chunks (the
 * file is never loaded whole).  Returns 0, or -1 with err. */
int wap_blob_id_fd(int fd, char out[WAP_VERSION_LEN + 1], struct wap_err *err);

/* Read all of an open fd (at most MAX bytes, 0 = no limit) into a new
 * NUL-terminated buffer (caller frees).  More than MAX is TOO_LARGE. */
int wap_read_fd(int fd, size_t max, char **buf, size_t *len, struct wap_err *err);

/* Open REL beneath the root and read it whole (a regular file only).
 * ST (optional) receives its stat. */
int wap_read_file(const struct wap_ws *ws, const char *rel, size_t max, char **buf,
		  size_t *len, struct stat *st, struct wap_err *err);

/* Data files named by options (--patch FILE, --edits FILE, exec --stdin
 * FILE...) come from the workspace: NAME is a path like any other, turned
 * root-relative and opened beneath the root with the read policy, so a
 * name outside is ACCESS_DENIED and a restricted one PATH_RESTRICTED.
 * Only a regular file: a FIFO, device or socket is NOT_A_FILE at once (it
 * is opened O_NONBLOCK, never waited on).
 *
 * wap_open_data returns a blocking fd (caller closes) or -1 with err; ST
 * (optional) receives its stat.  wap_read_data reads the file whole into a
 * NUL-terminated buffer (caller frees), at most the workspace's
 * maxFileSize (SIZE_LIMIT_EXCEEDED beyond); "-" reads stdin, with the same
 * bound. */
int wap_open_data(const struct wap_ws *ws, const char *name, struct stat *st,
		  struct wap_err *err);
int wap_read_data(const struct wap_ws *ws, const char *name, char **buf, size_t *len,
		  struct wap_err *err);

/* "File too large" for REL (SIZE bytes, -1 when unknown) against LIMIT:
 * SIZE_LIMIT_EXCEEDED with how to narrow or raise it.  Returns -1. */
int wap_err_too_large(struct wap_err *err, const char *rel, long long size, size_t limit);

enum wap_wmode { WAP_W_OVERWRITE, WAP_W_CREATE, WAP_W_APPEND };

struct wap_wopts {
	enum wap_wmode mode;
	bool mkparents;			/* create missing parent directories */
	const char *expected_version;	/* NULL: no check; "" : must not exist */
	mode_t newmode;			/* for new files; 0 means 0666 & ~umask */
	bool force;			/* replace a read-only file too */
};

struct wap_wres {
	char version[WAP_VERSION_LEN + 1];	/* of the bytes now in the file */
	bool created;				/* the file did not exist */
	size_t size;				/* its size now */
};

/* Write BUF to REL atomically (append: old bytes + BUF). */
int wap_write_file(const struct wap_ws *ws, const char *rel, const void *buf, size_t len,
		   const struct wap_wopts *o, struct wap_wres *res, struct wap_err *err);

/* Write through a callback: TRANSFORM gets the current bytes (NULL, 0 for a
 * missing file when MAY_CREATE) and returns the new bytes (malloc'd) or -1
 * with err.  Read, version check, transform and rename happen under one
 * lock.  This is how edit, find-and-replace and patches stay atomic. */
typedef int (*wap_transform_fn)(void *arg, const char *old, size_t oldlen,
				char **out, size_t *outlen, struct wap_err *err);
#define WAP_UPD_CREATE	1u	/* a missing file may be created */
#define WAP_UPD_FORCE	2u	/* a read-only file may be replaced */
int wap_update_file(const struct wap_ws *ws, const char *rel, unsigned flags,
		    const char *expected_version, wap_transform_fn fn, void *arg,
		    struct wap_wres *res, struct wap_err *err);

/* A file with no write bit for anyone is read-only to wap, whoever runs
 * it (root passes EACCES checks, so wap looks at the mode itself):
 * replacing it takes force (write/edit --force).  wap_check_writable
 * returns 0, or -1 with PERMISSION_DENIED naming REL and how to go on
 * (HOW, e.g. "use --force"). */
int wap_check_writable(const struct stat *st, const char *rel, const char *how,
		       struct wap_err *err);

/* Take the exclusive flock of the directory open as DFD (at REL), the lock
 * two writers of a file in it share.  Any process may hold it (a command
 * run with `flock DIR sleep 600`), so the wait polls the cancel of the
 * call this thread runs (wap_cancel_current): 0, or -1 with err
 * ("Operation cancelled", or the OS's error). */
int wap_dir_lock(int dfd, const char *rel, struct wap_err *err);

/* ISO-8601 UTC time ("2026-11-21T23:54:18.123Z") into OUT (32 bytes). */
void wap_iso_time(const struct timespec *ts, char out[32]);

/* Open FILE, one of wap's own records (an audit log, a transcript, a log),
 * to write: created 0600, appended to with APPEND, else emptied.  It may
 * lie beneath the root, where the agent could have planted a link or a
 * FIFO at its name before wap started: a symbolic link as its last
 * component is refused (ELOOP), and anything but a regular file (ENXIO
 * for a FIFO or device, never waited on).  A stream (malloc'd), or NULL
 * with errno set. */
FILE *wap_open_record(const char *file, bool append);

#endif
