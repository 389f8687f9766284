/* fs/archives.c - the one archive reader: sniffing, opening, member names.
 * See archives.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	unsigned long long *pool;	/* what the archives sharing it unpacked */
	unsigned long long charged;	/* this one's part of it */
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

/* What counts against the budget: what AR unpacked, or with a pool (see
 * wap_archive_share) what all its archives did, AR's part brought up to
 * date first */
static unsigned long long spent(struct wap_ar *ar)
{
	unsigned long long u = unpacked(ar);

	if (!ar->pool)
		return u;
	if (u > ar->charged) {
		unsigned long long d = u - ar->charged;
		ar->charged = u;
		return __atomic_add_fetch(ar->pool, d, __ATOMIC_RELAXED);
	}
	return __atomic_load_n(ar->pool, __ATOMIC_RELAXED);
}

static bool stop(struct wap_ar *ar)
{
	if (wap_cancel_is_set(ar->cancel)) {
		ar->stopped = true;
		archive_set_error(ar->a, ECANCELED, "cancelled");
		return true;
	}
	if (spent(ar) > ar->max) {
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

/* N bytes at OFF of AR's input, whichever it is: how many there were */
static size_t ar_pread(struct wap_ar *ar, void *buf, size_t n, unsigned long long off)
{
	ssize_t r;

	if (ar->fd < 0) {
		if (off >= ar->memlen)
			return 0;
		n = n < ar->memlen - off ? n : ar->memlen - off;
		memcpy(buf, ar->mem + off, n);
		return n;
	}
	do
		r = pread(ar->fd, buf, n, (off_t)off);
	while (r < 0 && errno == EINTR);
	return r < 0 ? 0 : (size_t)r;
}

/* The length of AR's input when it is known (memory, a regular file) */
static bool file_size(const struct wap_ar *ar, unsigned long long *len)
{
	struct stat st;

	if (ar->fd < 0) {
		*len = ar->memlen;
		return true;
	}
	if (fstat(ar->fd, &st) || !S_ISREG(st.st_mode))
		return false;
	*len = (unsigned long long)st.st_size;
	return true;
}

/* 7z's numbers: the first byte's high bits say how many bytes follow */
static bool num7z(const unsigned char **p, const unsigned char *end, unsigned long long *v)
{
	unsigned char first;
	int extra = 0;

	if (*p >= end)
		return false;
	first = *(*p)++;
	while (extra < 8 && (first & (0x80 >> extra)))
		extra++;
	if (end - *p < extra)
		return false;
	*v = extra < 8 ? (unsigned long long)(first & ((0x80 >> extra) - 1)) << (8 * extra) : 0;
	for (int i = 0; i < extra; i++)
		*v |= (unsigned long long)*(*p)++ << (8 * i);
	return true;
}

#define HEADER_7Z_MAX (64ull << 20)

/* 7z keeps its list of members at the archive's end, most often packed,
 * and libarchive unpacks it whole in its first look for a member, where
 * the reader counts nothing: a packed list of 227 KB made 1.5 GB (found
 * by a fifth hostile review).  What that list unpacks to is read here
 * first, from the start header and the streams info it points at, and
 * refused past HEADER_7Z_MAX or the budget; what it takes is counted.
 * A list that is not packed is no bigger than the file. */
static int check_7z(struct wap_ar *ar, struct wap_err *err)
{
	unsigned char sh[32], info[4096];
	const unsigned char *p = info, *end;
	unsigned long long off, size, v, folders, outs = 0, total = 0, len;
	size_t n;

	if (ar_pread(ar, sh, sizeof(sh), 0) < sizeof(sh))
		return 0;	/* libarchive says what is wrong */
	off = 0, size = 0;
	for (int i = 7; i >= 0; i--) {
		off = off << 8 | sh[12 + i];
		size = size << 8 | sh[20 + i];
	}
	/* The list lies within the file (one volume is all wap reads).
	 * libarchive bounds what it reads of the list by the size given here
	 * only, and asks its reader for as much at once as a field of the
	 * list says: a list said to be 2^63 bytes, in a file of 118, let a
	 * field of 1 GB have it allocate 1 GB (found by tests/fuzz/
	 * fuzz_archive; past 1 TB ASan aborted). */
	if (file_size(ar, &len) && (off > len || size > len - off || 32 > len - off - size))
		return wap_err_set(err, WAP_E_FAILED, "Cannot read archive %s: damaged 7-Zip header "
				   "(its list of members, %llu bytes from %llu bytes after the start "
				   "header, lies past the end of the file, %llu bytes)", ar->rel, size, off, len);
	if (!size || off > (1ull << 62) || !(n = ar_pread(ar, info, sizeof(info), 32 + off)) ||
	    info[0] != 0x17)	/* kEncodedHeader */
		return 0;
	end = info + (n < size ? n : size);
	p = info + 1;
	/* kPackInfo: where the packed list is, its size (and digests) */
	if (*p == 0x06) {
		unsigned long long packs;
		p++;
		if (!num7z(&p, end, &v) || !num7z(&p, end, &packs) || packs > sizeof(info))
			goto bad;
		while (p < end && *p != 0x00) {
			if (*p == 0x09) {	/* kSize */
				p++;
				for (unsigned long long i = 0; i < packs; i++)
					if (!num7z(&p, end, &v))
						goto bad;
			} else if (*p == 0x0a) {	/* kCRC */
				unsigned long long k = packs;
				p++;
				if (p >= end)
					goto bad;
				if (!*p++) {	/* not all defined: a bit each */
					k = 0;
					for (unsigned long long i = 0; i < packs; i++)
						k += p + i / 8 < end && (p[i / 8] & (0x80 >> i % 8));
					if ((size_t)(end - p) < (packs + 7) / 8)
						goto bad;
					p += (packs + 7) / 8;
				}
				if ((size_t)(end - p) < 4 * k)
					goto bad;
				p += 4 * k;
			} else {
				goto bad;
			}
		}
		p++;
	}
	/* kUnpackInfo, kFolder: the coders, then kCodersUnpackSize: what
	 * each coder's every output stream unpacks to */
	if (p + 2 > end || p[0] != 0x07 || p[1] != 0x0b)
		goto bad;
	p += 2;
	if (!num7z(&p, end, &folders) || p >= end || *p++ != 0 || folders > sizeof(info))
		goto bad;
	for (unsigned long long f = 0; f < folders; f++) {
		unsigned long long coders, in = 0, out = 0;
		if (!num7z(&p, end, &coders) || coders > 64)
			goto bad;
		for (unsigned long long c = 0; c < coders; c++) {
			unsigned char flags;
			if (p >= end)
				goto bad;
			flags = *p++;
			if (end - p < (flags & 0x0f))
				goto bad;
			p += flags & 0x0f;	/* the codec's id */
			if (flags & 0x10) {	/* streams in and out */
				unsigned long long i, o;
				if (!num7z(&p, end, &i) || !num7z(&p, end, &o) || i > 64 || o > 64)
					goto bad;
				in += i, out += o;
			} else {
				in++, out++;
			}
			if (flags & 0x20) {	/* properties */
				if (!num7z(&p, end, &v) || v > (unsigned long long)(end - p))
					goto bad;
				p += v;
			}
		}
		if (!out)
			goto bad;
		for (unsigned long long b = 0; b < out - 1; b++)	/* bind pairs */
			if (!num7z(&p, end, &v) || !num7z(&p, end, &v))
				goto bad;
		if (in > out)	/* more than one packed stream: their numbers */
			for (unsigned long long k = 0; k < in - (out - 1); k++)
				if (!num7z(&p, end, &v))
					goto bad;
		outs += out;
	}
	if (p >= end || *p++ != 0x0c)
		goto bad;
	for (unsigned long long k = 0; k < outs; k++) {
		if (!num7z(&p, end, &v))
			goto bad;
		total = total + v < total ? ~0ull : total + v;
	}
	if (total > HEADER_7Z_MAX || total > ar->max - (ar->out < ar->max ? ar->out : ar->max)) {
		return wap_err_set(err, WAP_E_TOO_LARGE, "Archive too large: the list of members of "
				   "%s unpacks to %llu bytes, past the %llu MiB wap unpacks of it",
				   ar->rel, total, (total > HEADER_7Z_MAX ? HEADER_7Z_MAX : ar->max) >> 20);
	}
	ar->out += total;
	return 0;
bad:
	return wap_err_set(err, WAP_E_FAILED, "Cannot read archive %s: damaged 7-Zip header", ar->rel);
}

static struct wap_ar *ar_open(int fd, const void *mem, size_t len, const char *rel,
			      const struct wap_cancel *cancel, struct wap_err *err)
{
	struct wap_ar *ar;
	struct archive *a;
	unsigned char magic[6];

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
	/* the decompressors built into libarchive, one by one: filter_all
	 * has it run an outside program (lrzip, lzop, grzip) for a stream
	 * whose start is theirs, found on PATH, unconfined (fifth review);
	 * one that would (ARCHIVE_WARN) is not taken */
	if (archive_read_support_filter_gzip(a) || archive_read_support_filter_bzip2(a) ||
	    archive_read_support_filter_xz(a) || archive_read_support_filter_lzma(a) ||
	    archive_read_support_filter_lzip(a) || archive_read_support_filter_zstd(a) ||
	    archive_read_support_filter_lz4(a) || archive_read_support_filter_compress(a)) {
		wap_err_set(err, WAP_E_FAILED, "Cannot read archive %s: this libarchive has no "
			    "decompressor of its own for one of gzip, bzip2, xz, lzma, zstd, lz4", rel);
		wap_archive_free(ar);
		return NULL;
	}
	/* the formats of DESIGN §7: tar, zip and 7z, raw the fallback for a
	 * compressed plain file (not format_all: mtree would take a text's
	 * lines for member names; xar unpacks its list of members whole,
	 * 1.5 KB to 1.7 GB, and cpio pairs hard links in quadratic time).
	 * 7z is known by its start alone, and then its list is checked. */
	if (ar_pread(ar, magic, sizeof(magic), 0) == sizeof(magic) &&
	    !memcmp(magic, "7z\xbc\xaf\x27\x1c", 6)) {
		if (check_7z(ar, err)) {
			wap_archive_free(ar);
			return NULL;
		}
		archive_read_support_format_7zip(a);
	} else {
		archive_read_support_format_tar(a);
		archive_read_support_format_zip(a);
		archive_read_support_format_raw(a);
	}
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

void wap_archive_share(struct wap_ar *ar, unsigned long long *pool)
{
	ar->pool = pool;
	ar->charged = 0;
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
 * themselves and solid ones (7z), a member of unknown
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
	     f != ARCHIVE_FORMAT_7ZIP))
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
