/* wap read: print a file with line numbers, a directory, or an archive's members
 *
 * usage: wap read [OPTIONS] PATH
 *
 * Print the lines of a text file, each prefixed with its number ("12: ").
 * Without a range the first 2000 lines are shown (and at most maxFileSize
 * bytes); when there is more, a last line says how to read on.  Lines
 * longer than 2000 characters are cut and marked as cut.  A huge file is
 * never loaded whole: lines are read up to the range, and --tail reads
 * from the end.  The result carries the file's version (its git blob
 * id), which `wap write` and `wap edit` take as the expected version;
 * files over 64 MiB get no version and their lines are not counted to
 * the end.
 *
 * A directory gives its entries, one a line, with "/" after
 * subdirectories.  A binary file (a NUL byte in its first 8 KiB) gives its
 * size and MIME type, never its bytes.  An archive (tar, tar.gz/bz2/xz/zst,
 * zip, 7z, ...) gives its members with their sizes; --member reads one of
 * them with the same line options; PATH ARCHIVE//MEMBER (as grep -z names
 * a member) is the same as --member MEMBER.  An archive is unpacked to
 * 256 MiB in one call at most, members read and skipped alike: past it the
 * read fails (SIZE_LIMIT_EXCEEDED).  Invalid UTF-8 is shown as
 * U+FFFD and reported (invalidUtf8 in the result).
 *
 *   PATH           the file, directory or archive to read
 *   --offset N     first line to show (1-based; default 1)
 *   -n, --limit N  show at most N lines (default 2000)
 *   --head N       the first N lines
 *   --tail N       the last N lines; a file over maxFileSize is read from
 *                  its end and its lines are numbered from the end (-1 is
 *                  the last)
 *   --member NAME  read the member NAME of an archive
 *   --whole        no 2000-line window and no line cut: the whole file (or
 *                  the whole range asked for); more than maxFileSize bytes
 *                  is refused (SIZE_LIMIT_EXCEEDED), never cut
 *   --encoding ENC  utf-8 or base64: the file's exact bytes, whole and
 *                   unnumbered, as content (base64-encoded with base64; with
 *                   utf-8 a file that is not valid UTF-8 is an error, never
 *                   U+FFFD); a regular file only (an archive's own bytes, no
 *                   listing); no line options; over maxFileSize is refused
 *
 * JSON result: content, metadata {path,size,isDirectory,lastModified},
 * isTruncated, totalLines, returnedLines, startLine, nextOffset, version;
 * binary files: binary, mimeType; directories and archives: entries;
 * with --encoding: encoding, and totalLines of the whole file.
 *
 * examples:
 *   wap read src/main.c
 *   wap read src/main.c --offset 100 --limit 50
 *   wap read logs/app.log --tail 20
 *   wap read dist.tar.gz --member pkg/README.md --head 40
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lazy.h"
#include "applet.h"
#include "applets.h"
#include "archives.h"
#include "file.h"
#include "path.h"
#include "strbuf.h"
#include "text.h"

/* Lines are counted, and versions hashed, for files up to this size. */
#define COUNT_CAP ((size_t)64 << 20)
#define CHUNK 65536
#define SNIFF 8192
/* Files up to this size are read in one system call (read_path). */
#define SMALL ((size_t)65536)

static const struct wap_opt read_opts[] = {
	{ "path", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ "offset", 0, WAP_OPT_INT, 0, NULL },
	{ "limit", 'n', WAP_OPT_INT, 0, NULL },
	{ "head", 0, WAP_OPT_INT, 0, NULL },
	{ "tail", 0, WAP_OPT_INT, 0, NULL },
	{ "member", 0, WAP_OPT_STR, 0, NULL },
	{ "whole", 0, WAP_OPT_BOOL, 0, NULL },
	{ "encoding", 0, WAP_OPT_STR, 0, NULL },
	{ NULL }
};

/* A line window fed with chunks of a stream: keeps lines START ..
 * START+LIMIT-1 (cut at MAXLINE characters), at most about MAXBYTES of
 * them, and counts the lines of the rest up to COUNTCAP bytes. */
struct lw {
	size_t start, limit, maxbytes, maxline, countcap;
	size_t line;		/* number of the line being scanned */
	bool started;		/* it has begun (a byte or its newline seen) */
	size_t chars;		/* its characters so far */
	bool cut, lastcr;
	bool strict;		/* --whole: a line passing MAXBYTES stops it (capped) */
	size_t bytes;		/* scanned */
	bool full;		/* the window is closed, more lines follow */
	bool capped;		/* ... closed by MAXBYTES */
	bool unknown;		/* stopped counting: total unknown */
	bool longer;		/* ... within a cut line: its length too */
	size_t total, returned, ncut;
	struct wap_sb out;
};

static void lw_init(struct lw *w, size_t start, size_t limit, size_t maxbytes, size_t maxline)
{
	memset(w, 0, sizeof(*w));
	w->start = start;
	w->limit = limit;
	w->maxbytes = maxbytes;
	w->maxline = maxline;
	w->countcap = COUNT_CAP;
	w->line = 1;
}

/* Append the bytes of a window line, cutting it at MAXLINE characters
 * (a character is counted at its first byte, so none is split). */
static void lw_add(struct lw *w, const char *s, size_t n)
{
	size_t i, keep = 0;

	if (!w->cut && w->chars + n <= w->maxline) {
		for (i = 0; i < n; i++)
			w->chars += ((unsigned char)s[i] & 0xc0) != 0x80;
		wap_sb_add(&w->out, s, n);
		return;
	}
	for (i = 0; i < n; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && ++w->chars > w->maxline)
			w->cut = true;
		if (!w->cut)
			keep = i + 1;
	}
	if (keep)
		wap_sb_add(&w->out, s, keep);
}

static void lw_end_line(struct lw *w, bool newline)
{
	if (w->cut) {
		wap_sb_addf(&w->out, " ... [line cut: %zu of %s%zu characters shown]",
			    w->maxline, w->longer ? "more than " : "", w->chars - (w->lastcr && newline));
		if (newline && w->lastcr)
			wap_sb_addc(&w->out, '\r');
		w->ncut++;
	}
	if (newline)
		wap_sb_addc(&w->out, '\n');
	w->returned++;
}

/* Feed a chunk; false when nothing more is wanted. */
static bool lw_feed(struct lw *w, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl, *seg;
		bool inwin;

		if (w->full) {
			if (w->countcap && w->bytes >= w->countcap) {
				w->unknown = true;
				return false;
			}
			w->bytes += end - p;
			while ((nl = memchr(p, '\n', end - p))) {
				w->line++;
				w->started = false;
				p = nl + 1;
			}
			if (p < end)
				w->started = true;
			return true;
		}
		inwin = w->line >= w->start;
		if (inwin && !w->started) {
			if (w->returned >= w->limit || w->out.len >= w->maxbytes) {
				w->full = true;
				w->capped = w->returned < w->limit;
				continue;
			}
			w->chars = 0;
			w->cut = w->lastcr = false;
		}
		w->started = true;
		if (inwin && w->cut && w->countcap && w->bytes >= w->countcap) {
			/* a cut line counted past COUNT_CAP: no further (a
			 * sparse file of 20 GB was one line counted for 56 s) */
			w->longer = true;
			lw_end_line(w, false);
			w->full = w->unknown = true;
			return false;
		}
		nl = memchr(p, '\n', end - p);
		seg = nl ? nl : end;
		if (inwin && w->strict && w->out.len + (seg - p) > w->maxbytes) {
			w->full = w->capped = true;
			return false;
		}
		if (inwin && seg > p) {
			lw_add(w, p, seg - p);
			w->lastcr = seg[-1] == '\r';
		}
		w->bytes += seg - p;
		p = seg;
		if (nl) {
			if (inwin)
				lw_end_line(w, true);
			w->line++;
			w->started = false;
			w->bytes++;
			p++;
		}
	}
	return true;
}

static void lw_finish(struct lw *w)
{
	if (w->started && !w->full && w->line >= w->start)
		lw_end_line(w, false);
	if (!w->unknown)
		w->total = w->line - 1 + w->started;
}

/* Feed the rest of FD; -1 with err on a read error. */
static int lw_feed_fd(struct lw *w, int fd, const struct wap_call *call, const char *rel,
		      struct wap_err *err)
{
	char *buf = malloc(CHUNK);

	if (!buf)
		return wap_err_oom(err);
	for (;;) {
		ssize_t r = read(fd, buf, CHUNK);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			return wap_err_errno(err, e, rel);
		}
		if (r == 0 || !lw_feed(w, buf, r))
			break;
		if (wap_call_cancelled(call)) {
			free(buf);
			return wap_cancel_err(err);
		}
	}
	free(buf);
	lw_finish(w);
	return 0;
}

static ssize_t pread_full(int fd, char *buf, size_t n, off_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, buf + got, n - got, off + got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += r;
	}
	return got;
}

/* The offset of the first of the last N lines, reading backwards. */
static off_t tail_start(int fd, off_t size, size_t n)
{
	char *buf = malloc(CHUNK);
	off_t pos = size, ret = 0;
	size_t seen = 0;

	if (!buf)
		return -1;
	while (pos > 0) {
		size_t k = pos > CHUNK ? CHUNK : (size_t)pos;
		pos -= k;
		if (pread_full(fd, buf, k, pos) != (ssize_t)k) {
			ret = -1;
			break;
		}
		for (size_t i = k; i-- > 0;) {
			if (buf[i] != '\n' || pos + (off_t)i == size - 1)
				continue;	/* the final newline ends the last line */
			if (++seen == n) {
				ret = pos + i + 1;
				goto out;
			}
		}
	}
out:
	free(buf);
	return ret;
}

/* Replace invalid UTF-8 by U+FFFD; true if anything was replaced. */
static bool fix_utf8(struct wap_sb *sb)
{
	struct wap_sb o = WAP_SB_INIT;
	size_t bad, i = 0;

	if (!sb->len || wap_text_utf8_valid(sb->buf, sb->len, &bad))
		return false;
	while (i < sb->len) {
		if (!wap_text_utf8_valid(sb->buf + i, sb->len - i, &bad)) {
			wap_sb_add(&o, sb->buf + i, bad);
			wap_sb_adds(&o, "\xef\xbf\xbd");
			i += bad + 1;
		} else {
			wap_sb_add(&o, sb->buf + i, sb->len - i);
			break;
		}
	}
	wap_sb_release(sb);
	*sb = o;
	return true;
}

struct range {
	long long offset, limit, head, tail;
	bool has_offset, has_limit, has_head, has_tail;
	bool whole;		/* no default window, no line cut, never capped */
};

static int get_range(const json_t *req, struct range *r, struct wap_err *err)
{
	int k;

	memset(r, 0, sizeof(*r));
	r->offset = 1;
	r->limit = 2000;
#define GET(name) \
	if ((k = wap_req_int(req, #name, &r->name, err)) < 0) \
		return -1; \
	if ((r->has_##name = k) && r->name < 1) \
		return wap_err_set(err, WAP_E_INVALID, #name " must be at least 1 (got %lld)", r->name);
	GET(offset) GET(limit) GET(head) GET(tail)
#undef GET
	if (wap_req_bool(req, "whole", &r->whole, err) < 0)
		return -1;
	if (r->whole && !r->has_limit)
		r->limit = LLONG_MAX;
	if (r->has_tail && (r->has_offset || r->has_limit || r->has_head))
		return wap_err_set(err, WAP_E_INVALID, "tail cannot be combined with offset, limit or head");
	if (r->has_head && r->has_limit)
		return wap_err_set(err, WAP_E_INVALID, "head cannot be combined with limit");
	if (r->has_head)
		r->limit = r->head;
	return 0;
}

static json_t *metadata(const struct wap_ws *ws, const char *rel, const struct stat *st)
{
	char *abs = wap_ws_abs(ws, rel), when[32];
	json_t *m;

	wap_iso_time(&st->st_mtim, when);
	m = json_object();
	if (abs)
		wap_json_set_name(m, "path", abs);	/* never dropped if not UTF-8 */
	json_object_set_new_nocheck(m, "size", json_integer(st->st_size));
	json_object_set_new_nocheck(m, "isDirectory", json_boolean(S_ISDIR(st->st_mode)));
	json_object_set_new_nocheck(m, "lastModified", json_string_nocheck(when));
	free(abs);
	return m;
}

/* Put a finished window into the result. */
static void set_window(json_t *res, struct lw *w, long long first)
{
	bool bad = fix_utf8(&w->out);

	/* valid UTF-8 now (fix_utf8 checked it, as jansson would): not again */
	json_object_set_new_nocheck(res, "content", json_stringn_nocheck(w->out.buf ? w->out.buf : "", w->out.len));
	json_object_set_new_nocheck(res, "isTruncated", json_boolean(w->full));
	json_object_set_new_nocheck(res, "totalLines", w->unknown ? json_null() : json_integer(w->total));
	json_object_set_new_nocheck(res, "returnedLines", json_integer(w->returned));
	json_object_set_new_nocheck(res, "startLine", json_integer(first));
	if (w->full)
		json_object_set_new_nocheck(res, "nextOffset", json_integer(first + w->returned));
	if (w->capped)
		json_object_set_new_nocheck(res, "outputLimit", json_integer(w->maxbytes));
	if (w->ncut)
		json_object_set_new_nocheck(res, "linesCut", json_integer(w->ncut));
	if (bad)
		json_object_set_new_nocheck(res, "invalidUtf8", json_true());
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_dir(const struct wap_call *call, int fd, const char *rel, const struct stat *st,
		    const struct range *r, json_t *res, struct wap_err *err)
{
	const struct wap_ws *ws = call->ws;
	int dfd = dup(fd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	char **names = NULL, *real = NULL;
	size_t n = 0, cap = 0;
	json_t *entries;
	struct lw w;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return wap_err_errno(err, errno, rel);
	}
	/* restricted names are judged where a linked directory really is too */
	if (wap_ws_listing_real(ws, dirfd(d), rel, &real, err)) {
		closedir(d);
		return -1;
	}
	while ((de = readdir(d))) {
		bool isdir = de->d_type == DT_DIR;
		struct wap_sb sb = WAP_SB_INIT;
		struct stat est;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (ws->pol.restricted.n) {
			struct wap_err tmp = { 0 };
			wap_path_add(&sb, rel, de->d_name);
			if (wap_ws_check(ws, sb.buf, WAP_ACC_READ, &tmp)) {
				wap_sb_release(&sb);
				wap_err_release(&tmp);
				continue;
			}
			wap_sb_release(&sb);
			if (real && wap_ws_restricted_in(ws, real, de->d_name))
				continue;
		}
		if (de->d_type == DT_UNKNOWN &&
		    fstatat(dirfd(d), de->d_name, &est, AT_SYMLINK_NOFOLLOW) == 0)
			isdir = S_ISDIR(est.st_mode);
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*nn));
			if (!nn)
				break;
			names = nn;
		}
		wap_sb_adds(&sb, de->d_name);
		if (isdir)
			wap_sb_addc(&sb, '/');
		names[n++] = wap_sb_detach(&sb);
	}
	closedir(d);
	free(real);
	qsort(names, n, sizeof(*names), cmp_str);
	lw_init(&w, r->offset, r->limit < (long long)ws->lim.max_dir_entries ? (size_t)r->limit
		: ws->lim.max_dir_entries, SIZE_MAX, SIZE_MAX);
	entries = json_array();
	for (size_t i = 0; i < n; i++) {
		size_t before = w.returned;
		if (names[i]) {
			lw_feed(&w, names[i], strlen(names[i]));
			lw_feed(&w, "\n", 1);
			if (w.returned > before)
				json_array_append_new(entries, wap_json_name(names[i]));
		}
		free(names[i]);
	}
	free(names);
	lw_finish(&w);
	json_object_set_new_nocheck(res, "metadata", metadata(ws, rel, st));
	json_object_set_new_nocheck(res, "entries", entries);
	set_window(res, &w, r->offset);
	wap_sb_release(&w.out);
	return 0;
}

/* --- archives (lib/fs/archives.c) --- */

static int ar_list(const struct wap_call *call, int fd, const char *rel, const struct range *r,
		   json_t *res, struct wap_err *err)
{
	struct wap_ar *a = wap_archive_open_fd(fd, rel, call->cancel, err);
	struct archive_entry *e;
	const char *key;
	size_t kn;
	json_t *entries;
	struct lw w;
	int rc;

	if (!a)
		return -1;
	lw_init(&w, r->offset, r->limit, call->ws->lim.max_file_size, SIZE_MAX);
	entries = json_array();
	while ((rc = wap_archive_next(a, &e, &key, &kn, err)) == 1) {
		bool dir = archive_entry_filetype(e) == AE_IFDIR;
		struct wap_sb line = WAP_SB_INIT;
		size_t before = w.returned;

		wap_sb_add(&line, key, kn);
		if (dir)
			wap_sb_adds(&line, "/");
		else if (archive_entry_size_is_set(e))
			wap_sb_addf(&line, "  (%lld bytes)", (long long)archive_entry_size(e));
		else
			wap_sb_adds(&line, "  (size unknown)");
		wap_sb_addc(&line, '\n');
		if (line.buf)
			lw_feed(&w, line.buf, line.len);
		wap_sb_release(&line);
		if (w.returned > before) {
			json_t *o = json_pack("{s:s%, s:b}", "path", key, kn, "isDirectory", dir);
			if (!dir && archive_entry_size_is_set(e))
				json_object_set_new_nocheck(o, "size", json_integer(archive_entry_size(e)));
			json_array_append_new(entries, o);
		}
		if (wap_call_cancelled(call))
			break;
	}
	if (rc < 0) {
		wap_archive_free(a);
		json_decref(entries);
		wap_sb_release(&w.out);
		return -1;
	}
	lw_finish(&w);
	json_object_set_new_nocheck(res, "archive", json_true());
	json_object_set_new_nocheck(res, "format", json_string(wap_archive_format(a)));
	json_object_set_new_nocheck(res, "entries", entries);
	set_window(res, &w, r->offset);
	wap_sb_release(&w.out);
	wap_archive_free(a);
	return 0;
}

/* Find MEMBER and leave the archive positioned at its data. */
static struct wap_ar *ar_find(const struct wap_call *call, int fd, const char *rel,
			      const char *member, unsigned long long budget,
			      struct archive_entry **ep, struct wap_err *err)
{
	struct wap_ar *a = wap_archive_open_fd(fd, rel, call->cancel, err);
	const char *want, *key;
	size_t wn = wap_archive_name(member, &want), kn;
	int rc;

	if (!a)
		return NULL;
	wap_archive_limit(a, budget);
	while ((rc = wap_archive_next(a, ep, &key, &kn, err)) == 1)
		if (kn == wn && !memcmp(key, want, kn))
			return a;
	if (!rc)
		wap_err_set(err, WAP_E_NOT_FOUND, "File not found: %s in %s", member, rel);
	wap_archive_free(a);
	return NULL;
}

/* Read a member's data through a window; SNIFF bytes first to tell a
 * binary member.  Returns 1 if binary (nothing fed). */
static int ar_feed(struct wap_ar *a, struct lw *w, char *sniff, size_t *sniffn,
		   struct wap_err *err)
{
	char *buf = malloc(CHUNK);
	size_t have = 0;
	long r = 0;

	if (!buf)
		return wap_err_oom(err);
	while (have < SNIFF && (r = wap_archive_read(a, buf + have, SNIFF - have, err)) > 0)
		have += r;
	if (r < 0) {
		free(buf);
		return -1;
	}
	if (sniff) {
		memcpy(sniff, buf, have);
		*sniffn = have;
		if (wap_text_is_binary(buf, have)) {
			free(buf);
			return 1;
		}
	}
	lw_feed(w, buf, have);
	while ((r = wap_archive_read(a, buf, CHUNK, err)) > 0)
		if (!lw_feed(w, buf, r))
			break;
	free(buf);
	if (r < 0)
		return -1;
	lw_finish(w);
	return 0;
}

static int ar_member(const struct wap_call *call, int fd, const char *rel, const char *member,
		     const struct range *r, json_t *res, struct wap_err *err)
{
	struct archive_entry *e;
	struct wap_ar *a = ar_find(call, fd, rel, member, WAP_ARCHIVE_MAX, &e, err);
	unsigned long long used;
	char sniff[SNIFF];
	size_t sniffn = 0;
	long long first = r->offset;
	struct lw w;
	int rc;

	if (!a)
		return -1;
	if (archive_entry_filetype(e) == AE_IFDIR) {
		wap_archive_free(a);
		return wap_err_set(err, WAP_E_NOT_FILE, "Not a file: %s in %s is a directory", member, rel);
	}
	json_object_set_new_nocheck(res, "member", json_string(member));
	if (archive_entry_size_is_set(e))
		json_object_set_new_nocheck(res, "memberSize", json_integer(archive_entry_size(e)));
	if (r->has_tail) {
		/* count first, then read the window: a second pass */
		lw_init(&w, SIZE_MAX, 0, 0, 1);
		w.countcap = 0;
		rc = ar_feed(a, &w, sniff, &sniffn, err);
		used = wap_archive_unpacked(a);	/* the second pass has the rest */
		wap_archive_free(a);
		wap_sb_release(&w.out);
		if (rc)
			goto binary_or_err;
		first = w.total > (size_t)r->tail ? (long long)(w.total - r->tail + 1) : 1;
		if (!(a = ar_find(call, fd, rel, member, used < WAP_ARCHIVE_MAX ? WAP_ARCHIVE_MAX - used : 0,
				  &e, err)))
			return -1;
		lw_init(&w, first, r->tail, SIZE_MAX, call->ws->lim.max_line_len);
		rc = ar_feed(a, &w, NULL, NULL, err);
	} else {
		lw_init(&w, r->offset, r->limit, call->ws->lim.max_file_size,
			call->ws->lim.max_line_len);
		rc = ar_feed(a, &w, sniff, &sniffn, err);
	}
	wap_archive_free(a);
	if (rc) {
		wap_sb_release(&w.out);
		goto binary_or_err;
	}
	set_window(res, &w, first);
	wap_sb_release(&w.out);
	return 0;
binary_or_err:
	if (rc < 0)
		return -1;
	json_object_set_new_nocheck(res, "content", json_string(""));
	json_object_set_new_nocheck(res, "binary", json_true());
	json_object_set_new_nocheck(res, "mimeType", json_string(wap_text_mime(member, sniff, sniffn)));
	json_object_set_new_nocheck(res, "isTruncated", json_false());
	json_object_set_new_nocheck(res, "totalLines", json_integer(0));
	json_object_set_new_nocheck(res, "returnedLines", json_integer(0));
	return 0;
}

/* --- regular files --- */

/* Feed the window W from MEM (MEMLEN bytes: the whole file, read in one
 * go) or, MEM NULL, from FD; WHOLE: the file must fit (MAX bytes).  On
 * failure W's text is released. */
static int feed_window(struct lw *w, const char *mem, size_t memlen, int fd, const struct wap_call *call,
		       const char *rel, bool whole, size_t max, struct wap_err *err)
{
	w->strict = whole;
	if (mem) {
		lw_feed(w, mem, memlen);
		lw_finish(w);
	} else if (lw_feed_fd(w, fd, call, rel, err)) {
		wap_sb_release(&w->out);
		return -1;
	}
	if (whole && w->capped) {
		wap_sb_release(&w->out);
		return wap_err_too_large(err, rel, -1, max);
	}
	return 0;
}

static int read_file(const struct wap_call *call, int fd, const char *rel, const struct stat *st,
		     const struct range *r, const char *mem, size_t memlen, json_t *res,
		     struct wap_err *err)
{
	const struct wap_limits *lim = &call->ws->lim;
	char version[WAP_VERSION_LEN + 1];
	bool big = (size_t)st->st_size > lim->max_file_size;
	size_t maxline = r->whole ? SIZE_MAX : lim->max_line_len;
	size_t tailbytes = r->whole ? lim->max_file_size : SIZE_MAX;
	long long first = r->offset;
	struct lw w;

	/* whole: all of it or an error, never a silent part */
	if (r->whole && big && !r->has_offset && !r->has_limit && !r->has_head && !r->has_tail)
		return wap_err_too_large(err, rel, (long long)st->st_size, lim->max_file_size);

	/* hash before reading: if the file changes in between, the version
	 * is the older one and a write based on it is refused, never lost */
	if ((size_t)st->st_size <= COUNT_CAP && !(big && r->has_tail)) {
		if (mem ? wap_blob_id(mem, memlen, version, err) : wap_blob_id_fd(fd, version, err))
			return -1;
		json_object_set_new_nocheck(res, "version", json_string_nocheck(version));
	} else {
		json_object_set_new_nocheck(res, "version", json_null());
	}
	if (r->has_tail && big) {
		off_t from = tail_start(fd, st->st_size, r->tail);
		if (from < 0 || lseek(fd, from, SEEK_SET) < 0)
			return wap_err_errno(err, errno, rel);
		lw_init(&w, 1, r->tail, tailbytes, maxline);
		w.countcap = 0;
		if (feed_window(&w, NULL, 0, fd, call, rel, r->whole, lim->max_file_size, err))
			return -1;
		set_window(res, &w, -(long long)w.returned);
		/* numbered from the end; what comes before is not counted */
		json_object_set_new_nocheck(res, "fromEnd", json_true());
		json_object_set_new_nocheck(res, "totalLines", json_null());
		json_object_set_new_nocheck(res, "isTruncated", json_boolean(from > 0));
		json_object_del(res, "nextOffset");
		wap_sb_release(&w.out);
		return 0;
	}
	if (r->has_tail) {
		/* small: count, then read the window */
		lw_init(&w, SIZE_MAX, 0, 0, 1);
		w.countcap = 0;
		if (lw_feed_fd(&w, fd, call, rel, err))
			return -1;
		first = w.total > (size_t)r->tail ? (long long)(w.total - r->tail + 1) : 1;
		if (lseek(fd, 0, SEEK_SET) < 0)
			return wap_err_errno(err, errno, rel);
		lw_init(&w, first, r->tail, tailbytes, maxline);
	} else {
		lw_init(&w, r->offset, r->limit, lim->max_file_size, maxline);
	}
	if (feed_window(&w, r->has_tail ? NULL : mem, memlen, fd, call, rel, r->whole, lim->max_file_size, err))
		return -1;
	set_window(res, &w, first);
	wap_sb_release(&w.out);
	return 0;
}

/* --encoding: the file's exact bytes, whole (no window, no cut, no
 * U+FFFD): as UTF-8 text, which they must be, or in base64.  The version
 * is the blob id of the very bytes given. */
static int read_bytes(const struct wap_call *call, int fd, const char *rel, bool b64, json_t *res,
		      struct wap_err *err)
{
	size_t max = call->ws->lim.max_file_size, len, bad;
	char *buf, version[WAP_VERSION_LEN + 1];
	struct wap_sb sb = WAP_SB_INIT;

	if (wap_read_fd(fd, max, &buf, &len, err)) {
		if (err && err->kind == WAP_E_TOO_LARGE)
			wap_err_too_large(err, rel, -1, max);
		return -1;
	}
	if (!b64 && !wap_text_utf8_valid(buf, len, &bad)) {
		free(buf);
		return wap_err_set(err, WAP_E_INVALID,
				   "Not UTF-8 text: %s (invalid byte at offset %zu; use encoding \"base64\")", rel, bad);
	}
	if (wap_blob_id(buf, len, version, err)) {
		free(buf);
		return -1;
	}
	if (b64) {
		wap_text_base64(&sb, buf, len);
		json_object_set_new_nocheck(res, "content", json_stringn(sb.buf ? sb.buf : "", sb.len));
		wap_sb_release(&sb);
	} else {
		json_object_set_new_nocheck(res, "content", json_stringn(buf, len));
	}
	json_object_set_new_nocheck(res, "encoding", json_string(b64 ? "base64" : "utf-8"));
	json_object_set_new_nocheck(res, "version", json_string_nocheck(version));
	json_object_set_new_nocheck(res, "totalLines", json_integer((json_int_t)wap_text_count_lines(buf, len)));
	json_object_set_new_nocheck(res, "isTruncated", json_false());
	free(buf);
	return json_is_string(json_object_get(res, "content")) ? 0 : wap_err_oom(err);
}

/* ENC of --encoding: 0 none, 1 utf-8, 2 base64; -1 with err when it is
 * unknown or comes with what it excludes. */
static int get_encoding(const json_t *req, const struct range *r, const char *member, struct wap_err *err)
{
	const char *enc = NULL;
	int e;

	if (wap_req_str(req, "encoding", &enc, err) < 0)
		return -1;
	if (!enc)
		return 0;
	if (!strcasecmp(enc, "utf-8") || !strcasecmp(enc, "utf8"))
		e = 1;
	else if (!strcasecmp(enc, "base64"))
		e = 2;
	else
		return wap_err_set(err, WAP_E_INVALID, "Unsupported encoding: %s (utf-8 or base64)", enc);
	if (r->has_offset || r->has_limit || r->has_head || r->has_tail || member)
		return wap_err_set(err, WAP_E_INVALID,
				   "encoding reads a whole file: no offset, limit, head, tail or member");
	return e;
}

/* NESTED: REQ's path and member were split from an ARCHIVE//MEMBER path;
 * 1 (nothing set) when the path before "//" is no archive file. */
static int read_path(struct wap_call *call, const json_t *req, json_t **res, bool nested,
		     struct wap_err *err)
{
	const struct wap_ws *ws = call->ws;
	const char *member = NULL;
	char *rel = NULL;
	char sniff[SNIFF], *mem = NULL;
	ssize_t sniffn, memlen = 0;
	struct range r;
	struct stat st;
	int fd = -1, rc = -1, enc;

	*res = NULL;
	if (get_range(req, &r, err) || wap_req_str(req, "member", &member, err) < 0 ||
	    (enc = get_encoding(req, &r, member, err)) < 0 ||
	    wap_req_path(call, req, "path", NULL, &rel, err))
		goto out;
	if (!rel) {
		wap_err_set(err, WAP_E_INVALID, "missing required argument 'path'");
		goto out;
	}
	fd = wap_ws_open(ws, rel, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0, WAP_ACC_READ, err);
	if (fd < 0) {
		rc = nested ? 1 : -1;	/* then the whole path says why */
		goto out;
	}
	if (fstat(fd, &st)) {
		wap_err_errno(err, errno, rel);
		goto out;
	}
	if (nested && (!S_ISREG(st.st_mode) || (sniffn = pread_full(fd, sniff, sizeof(sniff), 0)) < 0 ||
		       !wap_archive_sniff(sniff, sniffn))) {
		rc = 1;
		goto out;
	}
	if (enc && !S_ISREG(st.st_mode)) {
		wap_err_set(err, WAP_E_NOT_FILE, "Not a file: %s is %s", rel,
			    S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		goto out;
	}
	*res = json_object();
	if (!*res) {
		wap_err_oom(err);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		if (member) {
			wap_err_set(err, WAP_E_INVALID, "Not an archive: %s is a directory", rel);
			goto out;
		}
		rc = read_dir(call, fd, rel, &st, &r, *res, err);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		wap_err_set(err, WAP_E_NOT_FILE, "Not a regular file: %s", rel);
		goto out;
	}
	/* nor is a file past the limit: its lines are counted (a tail, a
	 * far offset, one long line) */
	if (call->quick && (size_t)st.st_size > ws->lim.max_file_size) {
		wap_call_not_quick(call, err);
		goto out;
	}
	json_object_set_new_nocheck(*res, "metadata", metadata(ws, rel, &st));
	if (enc) {
		rc = read_bytes(call, fd, rel, enc == 2, *res, err);
		goto out;
	}
	/* a small file is read once, in one system call: sniffed, hashed
	 * and cut into lines from memory (the version is then exactly of
	 * the bytes shown) */
	if ((size_t)st.st_size <= SMALL && !member) {
		mem = malloc((size_t)st.st_size + 1);
		if (!mem) {
			wap_err_oom(err);
			goto out;
		}
		/* one pread: a short read of a regular file is its end (and
		 * any other short one only sends us the long way below) */
		do
			memlen = pread(fd, mem, (size_t)st.st_size + 1, 0);
		while (memlen < 0 && errno == EINTR);
		if (memlen < 0) {
			wap_err_errno(err, errno, rel);
			goto out;
		}
		if (memlen != st.st_size) {	/* it changed meanwhile: as for a big one */
			free(mem);
			mem = NULL;
		}
	}
	if (mem) {
		sniffn = memlen < SNIFF ? memlen : SNIFF;
		memcpy(sniff, mem, sniffn);
	} else {
		sniffn = pread_full(fd, sniff, sizeof(sniff), 0);
	}
	if (sniffn < 0) {
		wap_err_errno(err, errno, rel);
		goto out;
	}
	if (wap_archive_sniff(sniff, sniffn)) {
		/* unpacking is no quick call: a server's reader hands it on */
		if (call->quick) {
			wap_call_not_quick(call, err);
			goto out;
		}
		rc = member ? ar_member(call, fd, rel, member, &r, *res, err)
			    : ar_list(call, fd, rel, &r, *res, err);
		goto out;
	}
	if (member) {
		wap_err_set(err, WAP_E_INVALID, "Not an archive: %s", rel);
		goto out;
	}
	if (wap_text_is_binary(sniff, sniffn)) {
		char version[WAP_VERSION_LEN + 1];
		json_object_set_new_nocheck(*res, "content", json_string(""));
		json_object_set_new_nocheck(*res, "binary", json_true());
		json_object_set_new_nocheck(*res, "mimeType", json_string(wap_text_mime(rel, sniff, sniffn)));
		json_object_set_new_nocheck(*res, "isTruncated", json_false());
		json_object_set_new_nocheck(*res, "totalLines", json_integer(0));
		json_object_set_new_nocheck(*res, "returnedLines", json_integer(0));
		if ((size_t)st.st_size <= COUNT_CAP) {
			if (mem ? wap_blob_id(mem, memlen, version, err) : wap_blob_id_fd(fd, version, err))
				goto out;
			json_object_set_new_nocheck(*res, "version", json_string_nocheck(version));
		} else {
			json_object_set_new_nocheck(*res, "version", json_null());
		}
		rc = 0;
		goto out;
	}
	rc = read_file(call, fd, rel, &st, &r, mem, mem ? (size_t)memlen : 0, *res, err);
out:
	free(mem);
	if (rc) {
		json_decref(*res);
		*res = NULL;
	} else {
		wap_json_set_name(*res, "path", rel);
	}
	if (fd >= 0)
		close(fd);
	free(rel);
	return rc;
}

static int read_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	const char *path = NULL, *member;
	size_t alen;

	/* ARCHIVE//MEMBER, as grep -z names a member: read it as --member,
	 * when the part before "//" is an archive file */
	if (wap_req_str(req, "path", &path, err) > 0 && !json_object_get(req, "member") &&
	    !json_object_get(req, "encoding") && wap_archive_split(path, &alen, &member)) {
		json_t *nreq = json_copy((json_t *)req);
		struct wap_err nerr = { 0 };
		int rc = -1;
		if (nreq && !json_object_set_new_nocheck(nreq, "path", json_stringn(path, alen)) &&
		    !json_object_set_new_nocheck(nreq, "member", json_string(member)))
			rc = read_path(call, nreq, res, true, &nerr);
		json_decref(nreq);
		if (!rc)
			return 0;
		if (rc < 0) {
			*err = nerr;
			return -1;
		}
		wap_err_release(&nerr);
	}
	return read_path(call, req, res, false, err);
}

/* The fields of a read's result the text shows, taken in one pass over
 * it: a lookup each (most of them absent) hashed its key every time, and
 * the text of every call over a server is rendered. */
struct rfields {
	const json_t *content, *path, *meta, *total, *start, *returned, *entries, *binary;
	const json_t *msize, *member, *mime, *encoding, *from_end, *truncated, *next, *limit;
	const json_t *invalid;
};

static void rfields(const json_t *res, struct rfields *f)
{
	static const struct { const char *key; size_t off; } keys[] = {
#define K(k, m) { k, offsetof(struct rfields, m) }
		K("content", content), K("path", path), K("metadata", meta),
		K("totalLines", total), K("startLine", start), K("returnedLines", returned),
		K("entries", entries), K("binary", binary), K("memberSize", msize),
		K("member", member), K("mimeType", mime), K("encoding", encoding),
		K("fromEnd", from_end), K("isTruncated", truncated), K("nextOffset", next),
		K("outputLimit", limit), K("invalidUtf8", invalid),
#undef K
	};
	const char *k;
	json_t *v;

	memset(f, 0, sizeof(*f));
	json_object_foreach((json_t *)res, k, v)
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (k[0] == keys[i].key[0] && !strcmp(k, keys[i].key)) {
				*(const json_t **)((char *)f + keys[i].off) = v;
				break;
			}
}

static int read_render(const json_t *res, const json_t *req, FILE *out)
{
	struct rfields f;
	const char *content, *path;
	size_t len;
	json_t *meta, *total;
	long long line, returned;
	bool numbered;
	const char *p, *end;

	rfields(res, &f);
	content = json_string_value(f.content);
	path = json_string_value(f.path);
	len = json_string_length(f.content);
	meta = (json_t *)f.meta;
	total = (json_t *)f.total;
	line = json_integer_value(f.start);
	returned = json_integer_value(f.returned);
	numbered = !f.entries;
	(void)req;
	if (!out)
		return 0;
	if (json_is_true(f.binary)) {
		const json_t *msize = f.msize;
		fprintf(out, "Binary file: %s%s%s (%lld bytes, %s); its bytes are not shown\n",
			path, f.member ? " member " : "",
			f.member ? json_string_value(f.member) : "",
			(long long)json_integer_value(msize ? msize : json_object_get(meta, "size")),
			json_string_value(f.mime));
		return 0;
	}
	if (f.encoding) {	/* the bytes as they are */
		fwrite(content ? content : "", 1, len, out);
		if (json_is_string(f.encoding) && !strcmp(json_string_value(f.encoding), "base64"))
			fputc('\n', out);
		return 0;
	}
	p = content ? content : "";
	end = p + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *e = nl ? nl + 1 : end;
		if (numbered)
			fprintf(out, "%lld: ", line++);
		fwrite(p, 1, e - p, out);
		if (!nl)
			fputc('\n', out);
		p = e;
	}
	if (!returned && json_is_integer(total) && json_integer_value(total) > 0)
		fprintf(out, "[no lines from line %lld: %s has %lld]\n", line, path,
			(long long)json_integer_value(total));
	if (json_is_true(f.from_end)) {
		if (json_is_true(f.truncated))
			fprintf(out, "[the last %lld lines of %s, numbered from the end; use --offset N or --head N for lines from the start]\n",
				returned, path);
	} else if (json_is_true(f.truncated)) {
		long long next = json_integer_value(f.next);
		const json_t *lim = f.limit;
		fprintf(out, "[truncated: showing %s %lld-%lld", numbered ? "lines" : "entries",
			next - returned, next - 1);
		if (json_is_integer(total))
			fprintf(out, " of %lld", (long long)json_integer_value(total));
		if (lim)
			fprintf(out, " (output limit of %lld bytes reached)", (long long)json_integer_value(lim));
		fprintf(out, "; read on with --offset %lld]\n", next);
	}
	if (json_is_true(f.invalid))
		fprintf(out, "[%s is not valid UTF-8: invalid bytes are shown as U+FFFD]\n", path);
	return 0;
}

const struct wap_applet wap_applet_read = {
	.name = "read",
	.summary = wap_summary_read,
	.usage = wap_usage_read,
	.title = "Read a file",
	.opts = read_opts,
	.op = read_op,
	.render = read_render,
	.flags = WAP_APPLET_READONLY | WAP_APPLET_IDEMPOTENT | WAP_APPLET_QUICK,
};
