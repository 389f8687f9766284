/* fs/archives.c - the one archive reader: sniffing, opening, member names.
 * See archives.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cancel.h"
#include "lazy.h"
#include "archives.h"

#define CHUNK 65536

bool wap_archive_sniff(const void *buf, size_t n)
{
	static const struct { const char *m; size_t n; } magic[] = {
		{ "\x1f\x8b", 2 }, { "BZh", 3 }, { "\xfd" "7zXZ\0", 6 }, { "\x28\xb5\x2f\xfd", 4 },
		{ "PK\x03\x04", 4 }, { "PK\x05\x06", 4 }, { "7z\xbc\xaf\x27\x1c", 6 },
		{ "\x04\x22\x4d\x18", 4 }, { "\x5d\x00\x00", 3 },
	};
	const char *b = buf;

	for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if (n >= magic[i].n && !memcmp(b, magic[i].m, magic[i].n))
			return true;
	return n >= 262 && !memcmp(b + 257, "ustar", 5);
}

/* An archive and the reader libarchive pulls its input through.  The
 * reader is where wap gets control while libarchive unpacks (skipping a
 * member is unpacking it to nowhere): it stops a cancelled call and one
 * that has unpacked WAP_ARCHIVE_MAX bytes, and hands the input over in
 * pieces small enough that it is asked again soon (see next_block). */
struct wap_ar {
	struct archive *a;
	char *rel;
	const struct wap_cancel *cancel;
	int fd;				/* or -1: the input is MEM */
	const char *mem;
	size_t memlen, memoff;
	char *buf;			/* FD's pieces */
	size_t block;			/* the next piece's size */
	unsigned long long in;		/* input handed over */
	unsigned long long out;		/* members' bytes read (wap_archive_read) */
	unsigned long long max;		/* the budget (wap_archive_limit) */
	bool over, stopped;		/* past the budget; cancelled */
	bool unread;			/* the current member's data not read to its end */
};

#define FIRST_BLOCK 64
/* the unpacked bytes one piece of input may become, about */
#define PIECE_OUT (4u << 20)

/* What libarchive has unpacked: the bytes the format reader took from the
 * decompressing filters, or the members' bytes read when the format
 * unpacks them itself (zip, 7z), whichever is more. */
static unsigned long long unpacked(const struct wap_ar *ar)
{
	long long f = archive_filter_bytes(ar->a, 0);
	return f > 0 && (unsigned long long)f > ar->out ? (unsigned long long)f : ar->out;
}

/* The next piece's size: from FIRST_BLOCK up, doubling while the input
 * unpacks to little, and small enough that the bytes it becomes at the
 * ratio seen so far stay about PIECE_OUT.  A stream of repeated tiny
 * bzip2 blocks (45 MB from 40 bytes) is then read a few bytes at a time,
 * and the budget is looked at every few MB. */
static size_t next_block(struct wap_ar *ar)
{
	unsigned long long u = unpacked(ar);
	size_t b = ar->block * 2 > CHUNK ? CHUNK : ar->block * 2;

	if (u > ar->in && ar->in && (u / ar->in) > PIECE_OUT / b)
		b = PIECE_OUT / (u / ar->in);
	return b < 16 ? 16 : b;
}

static bool stop(struct wap_ar *ar)
{
	if (wap_cancel_is_set(ar->cancel)) {
		ar->stopped = true;
		archive_set_error(ar->a, ECANCELED, "cancelled");
		return true;
	}
	if (unpacked(ar) > ar->max) {
		ar->over = true;
		archive_set_error(ar->a, EFBIG, "unpacks past the limit");
		return true;
	}
	return false;
}

static la_ssize_t in_read(struct archive *a, void *arg, const void **out)
{
	struct wap_ar *ar = arg;
	size_t n;
	ssize_t r;

	(void)a;
	if (stop(ar))
		return -1;
	ar->block = n = next_block(ar);
	if (ar->fd < 0) {
		n = n < ar->memlen - ar->memoff ? n : ar->memlen - ar->memoff;
		*out = ar->mem + ar->memoff;
		ar->memoff += n;
		ar->in += n;
		return n;
	}
	do
		r = read(ar->fd, ar->buf, n);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		archive_set_error(ar->a, errno, "%s", strerror(errno));
		return -1;
	}
	*out = ar->buf;
	ar->in += r;
	return r;
}

/* skipping input (never unpacked: a stored member, a seekable zip) */
static la_int64_t in_skip(struct archive *a, void *arg, la_int64_t n)
{
	struct wap_ar *ar = arg;

	(void)a;
	if (ar->fd < 0) {
		if ((size_t)n > ar->memlen - ar->memoff)
			n = ar->memlen - ar->memoff;
		ar->memoff += n;
		return n;
	}
	return lseek(ar->fd, n, SEEK_CUR) < 0 ? 0 : n;
}

static la_int64_t in_seek(struct archive *a, void *arg, la_int64_t off, int whence)
{
	struct wap_ar *ar = arg;
	la_int64_t base;

	(void)a;
	if (ar->fd >= 0)
		return lseek(ar->fd, off, whence);
	base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (la_int64_t)ar->memoff : (la_int64_t)ar->memlen;
	if (base + off < 0 || base + off > (la_int64_t)ar->memlen)
		return ARCHIVE_FATAL;
	ar->memoff = base + off;
	return ar->memoff;
}

static struct wap_ar *ar_open(int fd, const void *mem, size_t len, const char *rel,
			      const struct wap_cancel *cancel, struct wap_err *err)
{
	struct wap_ar *ar;
	struct archive *a;

	if (wap_lazy_load(WAP_LIB_ARCHIVE, err))
		return NULL;
	ar = calloc(1, sizeof(*ar));
	if (!ar || !(ar->rel = strdup(rel)) || (fd >= 0 && !(ar->buf = malloc(CHUNK))) ||
	    !(ar->a = a = archive_read_new())) {
		wap_archive_free(ar);
		wap_err_oom(err);
		return NULL;
	}
	ar->fd = fd;
	ar->mem = mem;
	ar->memlen = len;
	ar->cancel = cancel;
	ar->block = FIRST_BLOCK / 2;
	ar->max = WAP_ARCHIVE_MAX;
	archive_read_support_filter_all(a);
	/* not format_all: mtree would take a compressed text file's lines
	 * for member names; raw is the fallback for a compressed plain file */
	archive_read_support_format_7zip(a);
	archive_read_support_format_ar(a);
	archive_read_support_format_cab(a);
	archive_read_support_format_cpio(a);
	archive_read_support_format_iso9660(a);
	archive_read_support_format_lha(a);
	archive_read_support_format_rar(a);
	archive_read_support_format_rar5(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_xar(a);
	archive_read_support_format_zip(a);
	archive_read_support_format_raw(a);
	archive_read_set_seek_callback(a, in_seek);
	if ((fd >= 0 && lseek(fd, 0, SEEK_SET) < 0) ||
	    archive_read_open2(a, ar, NULL, in_read, in_skip, NULL) != ARCHIVE_OK) {
		wap_err_set(err, WAP_E_FAILED, "Cannot read archive %s: %s", rel,
			    archive_error_string(a) ? archive_error_string(a) : strerror(errno));
		wap_archive_free(ar);
		return NULL;
	}
	return ar;
}

struct wap_ar *wap_archive_open_fd(int fd, const char *rel, const struct wap_cancel *cancel,
				   struct wap_err *err)
{
	return ar_open(fd, NULL, 0, rel, cancel, err);
}

struct wap_ar *wap_archive_open_mem(const void *buf, size_t n, const char *rel,
				    const struct wap_cancel *cancel, struct wap_err *err)
{
	return ar_open(-1, buf, n, rel, cancel, err);
}

void wap_archive_limit(struct wap_ar *ar, unsigned long long max)
{
	ar->max = max;
}

unsigned long long wap_archive_unpacked(const struct wap_ar *ar)
{
	return unpacked(ar);
}

void wap_archive_free(struct wap_ar *ar)
{
	if (!ar)
		return;
	if (ar->a)
		archive_read_free(ar->a);
	free(ar->buf);
	free(ar->rel);
	free(ar);
}

/* "Cannot read archive REL: WHY", or why the reader stopped it */
static int ar_err(struct wap_ar *ar, struct wap_err *err)
{
	if (ar->stopped)
		return wap_cancel_err(err);
	if (ar->over)
		return wap_err_set(err, WAP_E_TOO_LARGE,
				   "Archive too large: unpacking %s took the call past %llu MiB, the "
				   "most wap unpacks of archives in one call", ar->rel, WAP_ARCHIVE_MAX >> 20);
	return wap_err_set(err, WAP_E_FAILED, "Cannot read archive %s: %s", ar->rel,
			   archive_error_string(ar->a) ? archive_error_string(ar->a) : "damaged");
}

long wap_archive_read(struct wap_ar *ar, void *buf, size_t n, struct wap_err *err)
{
	la_ssize_t r;

	if (stop(ar))
		return ar_err(ar, err);
	r = archive_read_data(ar->a, buf, n);
	if (r < 0)
		return ar_err(ar, err);
	ar->out += r;
	ar->unread = r > 0;
	return r;
}

/* A skipped member is unpacked where the reader does not see the bytes
 * made whenever a decompressor is in the way: a compressed tar's filter
 * (a first megabyte of noise kept the ratio the reader saw low, then one
 * piece of input made 72 GB), formats that unpack their members
 * themselves and solid ones (7z, rar, cab, lha, xar), a member of unknown
 * size (written as a stream).  Such a member is read to its end here
 * instead, counted, 64 KB at a time at most.  Only a stored member of an
 * uncompressed archive is left to libarchive, which seeks past it. */
static int drain(struct wap_ar *ar, struct archive_entry *e, struct wap_err *err)
{
	int f = archive_format(ar->a) & ARCHIVE_FORMAT_BASE_MASK;
	char scratch[CHUNK / 4];
	long r;

	if (!ar->unread || f == ARCHIVE_FORMAT_RAW ||
	    (archive_filter_count(ar->a) <= 1 && archive_entry_size_is_set(e) &&
	     f != ARCHIVE_FORMAT_7ZIP && f != ARCHIVE_FORMAT_RAR && f != ARCHIVE_FORMAT_RAR_V5 &&
	     f != ARCHIVE_FORMAT_CAB && f != ARCHIVE_FORMAT_LHA && f != ARCHIVE_FORMAT_XAR))
		return 0;
	while ((r = wap_archive_read(ar, scratch, sizeof(scratch), err)) > 0)
		;
	return r < 0 ? -1 : 0;
}

size_t wap_archive_name(const char *s, const char **out)
{
	size_t n;

	while (s[0] == '.' && s[1] == '/')
		s += 2;
	while (*s == '/')
		s++;
	n = strlen(s);
	while (n && s[n - 1] == '/')
		n--;
	*out = s;
	return n;
}

int wap_archive_next(struct wap_ar *ar, struct archive_entry **e, const char **name,
		     size_t *nlen, struct wap_err *err)
{
	int rc;

	if (ar->unread && drain(ar, *e, err))
		return -1;
	/* a warning (an unknown extended header, say) is not the end */
	while ((rc = archive_read_next_header(ar->a, e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
		const char *p = archive_entry_pathname(*e);
		ar->unread = true;
		if (!p)
			continue;
		*nlen = wap_archive_name(p, name);
		return 1;
	}
	ar->unread = false;
	if (rc == ARCHIVE_EOF)
		return 0;
	return ar_err(ar, err);
}

bool wap_archive_raw(const struct wap_ar *ar)
{
	return archive_format(ar->a) == ARCHIVE_FORMAT_RAW;
}

const char *wap_archive_format(const struct wap_ar *ar)
{
	const char *f = archive_format_name(ar->a);
	return f ? f : "unknown";
}

bool wap_archive_split(const char *path, size_t *alen, const char **member)
{
	const char *s = path[0] ? strstr(path + 1, "//") : NULL;

	if (!s || !s[2])
		return false;
	*alen = s - path;
	*member = s + 2;
	return true;
}
