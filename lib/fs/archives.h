/* fs/archives.h - the one archive reader (libarchive, loaded lazily): which
 * bytes are an archive, how one is opened, what its members are called.
 * `wap read` (listing, --member, ARCHIVE//MEMBER paths) and `wap grep -z`
 * both go through it, so they name and read the same members.
 * (Not "archive.h": that is libarchive's header.) */
#ifndef WAP_ARCHIVES_H
#define WAP_ARCHIVES_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct archive;
struct archive_entry;

/* Do the first bytes of a file (8 KiB are plenty) say archive or
 * compressed file (gzip, bzip2, xz, zstd, lz4, lzma, zip, 7z, tar)? */
bool wap_archive_sniff(const void *buf, size_t n);

/* Open the archive in FD (read from its start) or in BUF (which must
 * outlive it).  REL names it in errors.  NULL with ERR on failure (the
 * library missing, not an archive).  The caller frees the result with
 * wap_archive_free. */
struct archive *wap_archive_open_fd(int fd, const char *rel, struct wap_err *err);
struct archive *wap_archive_open_mem(const void *buf, size_t n, const char *rel,
				     struct wap_err *err);
void wap_archive_free(struct archive *a);

/* The next member: 1 with *E and its name (see wap_archive_name) in *NAME,
 * *NLEN (pointing into *E, valid until the next call); 0 at the end; -1
 * with ERR when the archive is damaged.  Members without a name are
 * skipped.  A compressed plain file (no archive inside) has one member,
 * and wap_archive_raw says so. */
int wap_archive_next(struct archive *a, const char *rel, struct archive_entry **e,
		     const char **name, size_t *nlen, struct wap_err *err);
bool wap_archive_raw(struct archive *a);

/* A member name as shown and compared: without leading "./" and "/" and
 * a trailing "/".  Returns its length; *OUT points into S. */
size_t wap_archive_name(const char *s, const char **out);

/* Split "ARCHIVE//MEMBER", the path grep -z gives a member: *ALEN is the
 * length of ARCHIVE, *MEMBER what follows the "//".  False when PATH has
 * no "//" after a first character or nothing after it. */
bool wap_archive_split(const char *path, size_t *alen, const char **member);

/* "Cannot read archive REL: WHY" */
int wap_archive_err(struct archive *a, const char *rel, struct wap_err *err);

#endif
