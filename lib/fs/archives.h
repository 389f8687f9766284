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
struct wap_cancel;

/* An open archive (libarchive's, behind its reader; wap_archive_lib). */
struct wap_ar;

/* The most archives are unpacked to in one call, members read and
 * members skipped (what a decompressor made to reach them) alike: 256 MiB.
 * A compressed stream of 548 KB can unpack to 512 GB; past this, a read
 * fails with SIZE_LIMIT_EXCEEDED and grep -z stops that archive and
 * unpacks no more.  It bounds memory too: an xz or zstd decoder's window
 * fills with what it unpacked (a dictionary of 1000 MiB: 1 GB). */
#define WAP_ARCHIVE_MAX (256ull << 20)

/* Do the first bytes of a file (8 KiB are plenty) say archive or
 * compressed file (gzip, bzip2, xz, zstd, lz4, lzma, zip, 7z, tar)? */
bool wap_archive_sniff(const void *buf, size_t n);

/* Open the archive in FD (read from its start) or in BUF (which must
 * outlive it).  REL names it in errors; CANCEL (may be NULL) stops it
 * between any two pieces of input.  NULL with ERR on failure (the library
 * missing, not an archive).  The caller frees the result with
 * wap_archive_free. */
struct wap_ar *wap_archive_open_fd(int fd, const char *rel, const struct wap_cancel *cancel,
				   struct wap_err *err);
struct wap_ar *wap_archive_open_mem(const void *buf, size_t n, const char *rel,
				    const struct wap_cancel *cancel, struct wap_err *err);
void wap_archive_free(struct wap_ar *ar);

/* A budget of MAX bytes for AR (WAP_ARCHIVE_MAX unless set): what a call
 * that unpacks several archives has left.  How much AR has unpacked. */
void wap_archive_limit(struct wap_ar *ar, unsigned long long max);
/* The budget shared with the other archives of the call, however many
 * threads read them: *POOL (atomic) counts what they all unpacked, each
 * archive's part added as it grows, and the budget is that sum's. */
void wap_archive_share(struct wap_ar *ar, unsigned long long *pool);
unsigned long long wap_archive_unpacked(const struct wap_ar *ar);

/* The next member: 1 with *E and its name (see wap_archive_name) in *NAME,
 * *NLEN (pointing into *E, valid until the next call); 0 at the end; -1
 * with ERR when the archive is damaged, the call cancelled or the archive
 * unpacked past WAP_ARCHIVE_MAX.  Members without a name are skipped.  A
 * compressed plain file (no archive inside) has one member, and
 * wap_archive_raw says so. */
int wap_archive_next(struct wap_ar *ar, struct archive_entry **e, const char **name,
		     size_t *nlen, struct wap_err *err);
bool wap_archive_raw(const struct wap_ar *ar);
const char *wap_archive_format(const struct wap_ar *ar);

/* Up to N bytes of the current member into BUF: how many, 0 at its end,
 * -1 with ERR as wap_archive_next. */
long wap_archive_read(struct wap_ar *ar, void *buf, size_t n, struct wap_err *err);

/* A member name as shown and compared: without leading "./" and "/" and
 * a trailing "/".  Returns its length; *OUT points into S. */
size_t wap_archive_name(const char *s, const char **out);

/* Split "ARCHIVE//MEMBER", the path grep -z gives a member: *ALEN is the
 * length of ARCHIVE, *MEMBER what follows the "//".  False when PATH has
 * no "//" after a first character or nothing after it. */
bool wap_archive_split(const char *path, size_t *alen, const char **member);


#endif
