/* search/search.c - the search engine behind `wap grep` (and every door's
 * grep/searchFiles): drives the parallel walk, matches each file's bytes
 * (UTF-16 and archive members included), keeps what a result can show,
 * context, counting, --replace and --replace --write.  What a match looks
 * like in the output is searchprint.c's.  See search.h. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lazy.h"
#include "archives.h"
#include "exclude.h"
#include "file.h"
#include "match.h"
#include "path.h"
#include "search_impl.h"
#include "strbuf.h"
#include "text.h"
#include "walk.h"

/* --type: a small table of common languages */
static const struct {
	const char *name, *alias, *globs;
} types[] = {
	{ "c", NULL, "*.c *.h" },
	{ "cpp", "c++", "*.cpp *.cc *.cxx *.c++ *.hpp *.hh *.hxx *.h *.inl" },
	{ "cs", "csharp", "*.cs" },
	{ "css", NULL, "*.css *.scss *.sass *.less" },
	{ "go", NULL, "*.go" },
	{ "html", NULL, "*.html *.htm" },
	{ "java", NULL, "*.java" },
	{ "js", "javascript", "*.js *.jsx *.mjs *.cjs" },
	{ "json", NULL, "*.json *.jsonl" },
	{ "kotlin", "kt", "*.kt *.kts" },
	{ "lua", NULL, "*.lua" },
	{ "make", NULL, "Makefile makefile GNUmakefile *.mk *.mak" },
	{ "md", "markdown", "*.md *.markdown" },
	{ "php", NULL, "*.php" },
	{ "py", "python", "*.py *.pyi" },
	{ "rb", "ruby", "*.rb Gemfile Rakefile *.gemspec" },
	{ "rust", "rs", "*.rs" },
	{ "sh", "shell", "*.sh *.bash *.zsh" },
	{ "sql", NULL, "*.sql" },
	{ "swift", NULL, "*.swift" },
	{ "toml", NULL, "*.toml" },
	{ "ts", "typescript", "*.ts *.tsx *.mts *.cts" },
	{ "txt", NULL, "*.txt" },
	{ "xml", NULL, "*.xml" },
	{ "yaml", "yml", "*.yaml *.yml" },
	{ NULL, NULL, NULL }
};

/* ---- ordering ---- */

static int frcmp(const struct frec *a, const struct frec *b, int sort)
{
	if (sort == SORT_MTIME) {
		if (a->mtime.tv_sec != b->mtime.tv_sec)
			return a->mtime.tv_sec > b->mtime.tv_sec ? -1 : 1;
		if (a->mtime.tv_nsec != b->mtime.tv_nsec)
			return a->mtime.tv_nsec > b->mtime.tv_nsec ? -1 : 1;
	} else if (sort == SORT_NONE) {
		return a->seq < b->seq ? -1 : a->seq > b->seq;
	}
	return wap_path_cmp(a->path, b->path);
}

int srch_frcmp_q(const void *a, const void *b, void *sort)
{
	return frcmp(a, b, *(const int *)sort);
}

static size_t weight(const struct gctx *g, const struct frec *f)
{
	if (g->files || g->count)
		return 1;
	if (g->mode != WAP_SEARCH_JSON)
		return f->neoff;
	return f->recs ? json_array_size(f->recs) : 0;
}

static void drop_entries(struct frec *f)
{
	json_decref(f->recs);
	f->recs = NULL;
	wap_sb_release(&f->out);
	free(f->eoff);
	f->eoff = NULL;
	f->neoff = 0;
}

/* Drop the entries no result can show: sort, keep the first MAX. */
static void prune(struct gctx *g)
{
	size_t acc = 0;

	if (g->nfr)
		qsort_r(g->fr, g->nfr, sizeof(*g->fr), srch_frcmp_q, &g->sort);
	for (size_t i = 0; i < g->nfr; i++) {
		if (acc >= g->max) {
			drop_entries(&g->fr[i]);
			continue;
		}
		acc += weight(g, &g->fr[i]);
		if (acc >= g->max) {
			free(g->cutkey.path);
			g->cutkey = g->fr[i];
			g->cutkey.path = strdup(g->fr[i].path);
			g->cutkey.recs = NULL;
			g->cut = g->cutkey.path != NULL;
		}
	}
	g->kept = acc;
}

static void add_file(struct gctx *g, struct frec *f)
{
	bool gone = false;	/* past the cut: it weighs nothing */

	pthread_mutex_lock(&g->mu);
	f->seq = g->seq++;
	if (g->max && !g->write && !g->jsonl) {
		if ((g->sort == SORT_NONE && g->kept >= g->max) ||
		    (g->cut && frcmp(f, &g->cutkey, g->sort) > 0)) {
			drop_entries(f);
			gone = true;
		}
	}
	if (g->nfr == g->cfr) {
		size_t nc = g->cfr ? g->cfr * 2 : 256;
		struct frec *n = realloc(g->fr, nc * sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&g->mu);
			free(f->path);
			drop_entries(f);
			return;
		}
		g->fr = n;
		g->cfr = nc;
	}
	g->fr[g->nfr++] = *f;
	/* (a file dropped counted 1 with -l and -c, so every few hundred
	 * files all were sorted again: 200,000 files took 17 s; fifth review) */
	if (!gone)
		g->kept += weight(g, f);
	if (g->max && !g->write && !g->jsonl && g->sort != SORT_NONE && g->kept > 2 * g->max + 256)
		prune(g);
	pthread_mutex_unlock(&g->mu);
}

/* Can a file at PATH still have entries in the result?  (Before building
 * them: most files of a big search fall after the cut.) */
static bool want_entries(struct gctx *g, const char *path)
{
	bool want = true;

	if (!g->max || g->jsonl || g->sort == SORT_MTIME)
		return true;
	pthread_mutex_lock(&g->mu);
	if (g->sort == SORT_NONE)
		want = g->kept < g->max;
	else if (g->cut)
		want = wap_path_cmp(path, g->cutkey.path) <= 0;
	pthread_mutex_unlock(&g->mu);
	return want;
}

/* The replacement of the match ST holds in SUBJ, into *R (of *CAP
 * bytes, grown as needed): its length, or -1. */
static long long replacement(const struct gctx *g, struct wap_mstate *st, const char *subj, size_t n,
			     char **r, size_t *cap)
{
	uint32_t opts = PCRE2_SUBSTITUTE_MATCHED | PCRE2_SUBSTITUTE_REPLACEMENT_ONLY |
			PCRE2_SUBSTITUTE_OVERFLOW_LENGTH | PCRE2_SUBSTITUTE_UNKNOWN_UNSET |
			PCRE2_SUBSTITUTE_UNSET_EMPTY;

	for (;;) {
		PCRE2_SIZE len = *cap;
		char *t;
		int rc = pcre2_substitute(wap_matcher_code(g->m), (PCRE2_SPTR)subj, n, 0, opts,
					  wap_mstate_data(st), NULL, (PCRE2_SPTR)g->replace,
					  PCRE2_ZERO_TERMINATED, (PCRE2_UCHAR *)*r, &len);
		if (rc >= 0)
			return (long long)len;
		if (rc != PCRE2_ERROR_NOMEMORY || !(t = realloc(*r, len + 1)))
			return -1;
		*r = t;
		*cap = len;
	}
}

/* Each match replaced in turn, found by the matcher's own bounded run as
 * wap_match_next finds them (as ripgrep: one character on after an empty
 * match, no empty match where the one before ended), its replacement
 * made by PCRE2 from the match. */
char *srch_substitute(const struct gctx *g, struct wap_mstate *st, const char *subj, size_t n,
		      size_t max, size_t *outlen, size_t *total, size_t *count)
{
	struct wap_match_iter it = { 0 };
	struct wap_sb out = WAP_SB_INIT;
	size_t ms, me, prev = 0, made = 0, cap = 256;
	bool stopped = false, bad = false;
	char *r = malloc(cap + 1);

	while (r && wap_match_next(g->m, st, subj, n, &it, &ms, &me)) {
		long long rl;
		/* bounded: past MAX no more replacing */
		if (max && out.len >= max) {
			stopped = true;
			break;
		}
		rl = replacement(g, st, subj, n, &r, &cap);
		if (rl < 0) {
			bad = true;
			break;
		}
		wap_sb_add(&out, subj + prev, ms - prev);
		wap_sb_add(&out, r, (size_t)rl);
		prev = me;
		made++;
	}
	free(r);
	if (!r || bad || wap_match_error(st, NULL)) {
		wap_sb_release(&out);
		return NULL;
	}
	if (!stopped)	/* (else only the start is made) */
		wap_sb_add(&out, subj + prev, n - prev);
	wap_sb_addc(&out, 0);	/* (an empty result is "", not NULL) */
	if (out.oom) {
		wap_sb_release(&out);
		return NULL;
	}
	*outlen = out.len - 1;
	if (total)
		*total = stopped ? 0 : out.len - 1;
	if (count)
		*count = made;
	return wap_sb_detach(&out);
}

char *srch_replace_match(const struct gctx *g, struct wap_mstate *st, const char *subj, size_t n,
			 size_t ms, size_t me, size_t *outlen)
{
	size_t cap = 256, s, e;
	char *r = malloc(cap + 1);
	long long rl = -1;

	/* found again where it was, in its line: its groups, and what
	 * lookarounds and \b see beside it */
	if (r && wap_match_sub(g->m, st, subj, n, ms, &s, &e) && s == ms && e == me)
		rl = replacement(g, st, subj, n, &r, &cap);
	if (rl < 0) {
		free(r);
		return NULL;
	}
	r[rl] = 0;
	*outlen = (size_t)rl;
	return r;
}

/* A file bigger than the worker's buffer read in pieces of whole lines
 * through it: memory stays bounded whatever the file's size, and the
 * bytes stay in the core's cache from the read to the search. */
struct feed {
	int fd;
	size_t have;		/* bytes in the buffer (the piece and a partial line) */
	size_t skip;		/* bytes of the file before the first piece (a BOM) */
	bool eof;
};

/* The newlines of FD's first END bytes, read again: only an error message
 * needs them when line numbers were not counted. */
static size_t lines_before(int fd, size_t end)
{
	char b[16384];
	size_t n = 0, at = 0;

	while (at < end) {
		ssize_t r = pread(fd, b, end - at < sizeof(b) ? end - at : sizeof(b), at);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += wap_count_nl(b, r);
		at += r;
	}
	return n;
}

/* Read in pieces of PIECE bytes: one read, the search and the line count
 * of a piece stay in the core's cache (16 MiB pieces ran at half speed).
 * The worker's buffer starts at that size. */
#define PIECE (256u << 10)

/* Fill W's buffer from F's file up to LIMIT bytes; false on a read error. */
static bool feed_fill(struct wk *w, struct feed *f, size_t limit)
{
	if (limit > w->cap)
		limit = w->cap;
	while (!f->eof && f->have < limit) {
		ssize_t r = read(f->fd, w->buf + f->have, limit - f->have);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		if (r == 0)
			f->eof = true;
		f->have += r;
	}
	return true;
}

/* the longest line held whole to search it */
#define LONG_LINE_MB 256
#define LONG_LINE ((size_t)LONG_LINE_MB << 20)

/* The searchable part of the buffer: up to its last newline (the rest is a
 * line that goes on in the next piece), all of it at the end of the file.
 * A line longer than the buffer grows it, up to LONG_LINE. */
static size_t feed_piece(struct wk *w, struct feed *f)
{
	size_t limit = f->have + PIECE, seen = 0;	/* SEEN: bytes with no newline */

	for (;;) {
		const char *nl;
		char *nb;
		if (!feed_fill(w, f, limit))
			f->eof = true;	/* search what was read */
		if (f->eof)
			return f->have;
		/* only what was read since: a line of 300 MB was looked
		 * through again at each piece (minutes) */
		nl = memrchr(w->buf + seen, '\n', f->have - seen);
		if (nl)
			return nl - w->buf + 1;
		seen = f->have;
		limit = f->have + PIECE;
		if (limit <= w->cap)
			continue;
		/* a line past LONG_LINE is searched as lines of that size (a
		 * sparse file of 20 GB with no newline grew the buffer until
		 * the kernel killed the process) */
		if (w->cap >= LONG_LINE)
			return f->have;
		nb = realloc(w->buf, w->cap * 2);
		if (!nb) {
			f->eof = true;
			return f->have;
		}
		w->buf = nb;
		w->cap *= 2;
	}
}

/* Search BUF[0..LEN), or with FEED (BUF, LEN ignored) the file behind it
 * piece by piece; keep the file's result. */
static void search_buf(struct gctx *g, struct wk *w, const char *path, const char *buf,
		       size_t len, int fd, struct feed *feed)
{
	size_t pos = 0, ls, le, count = 0, lpos = 0, lno = 1, nrec = 0;
	bool need = !g->files && !g->count && !g->write, asked = false;
	/* line numbers are shown: counted as the pieces go (LNO is the line
	 * at LPOS); else an error's line is counted when there is one */
	const bool lines = need;
	size_t cap = (g->max && !g->jsonl) ? g->max : (size_t)-1;
	json_t *recs = NULL;
	struct frec f = { 0 };
	struct emit em = { .g = g, .w = w, .path = path, .buf = buf, .len = len, .f = &f,
			   .pathlen = strlen(path), .binoff = w->binoff };

	em.quote = g->mode == WAP_SEARCH_TEXT && wap_name_quoted(path, em.pathlen);

/* the first entry asks whether the file can still be shown */
#define WANT() (need && nrec < cap && (asked || (asked = true, need = want_entries(g, path))))
piece:
	if (feed) {
		len = em.len = feed_piece(w, feed);	/* may move the buffer */
		buf = em.buf = w->buf;
		pos = 0;
	}
	wap_match_begin(w->st);
	if (!g->invert) {
		while (pos < len && wap_match_line(g->m, w->st, buf, len, pos, &ls, &le)) {
			if (g->files || g->write) {
				count = 1;
				break;
			}
			if (g->only) {
				struct wap_match_iter it = { 0 };
				size_t s, e;
				/* every match, an empty one too, as rg -o */
				while (wap_match_next(g->m, w->st, buf + ls, le - ls, &it, &s, &e)) {
					count++;
					if (WANT()) {
						lno += wap_count_nl(buf + lpos, ls - lpos);
						lpos = ls;
						srch_add_entry(&em, &recs, lno, ls, le, ls + s, ls + e);
						nrec++;
					}
				}
			} else {
				count++;
				if (WANT()) {
					lno += wap_count_nl(buf + lpos, ls - lpos);
					lpos = ls;
					srch_add_entry(&em, &recs, lno, ls, le, 0, 0);
					nrec++;
				}
			}
			pos = le + 1;
		}
	} else {
		size_t cur = 0;
		for (;;) {
			bool found = cur < len && wap_match_line(g->m, w->st, buf, len, cur, &ls, &le);
			size_t gap = found ? ls : len;
			while (cur < gap) {
				size_t e = srch_line_end(buf, len, cur);
				count++;
				if (g->files || g->write)
					break;
				if (WANT()) {
					lno += wap_count_nl(buf + lpos, cur - lpos);
					lpos = cur;
					srch_add_entry(&em, &recs, lno, cur, e, 0, 0);
					nrec++;
				}
				cur = e + 1;
			}
			if (!found || ((g->files || g->write) && count))
				break;
			cur = le + 1;
		}
	}
#undef WANT
	{
		/* a limit or a cancel is an error naming the line, never a
		 * silent "no match" */
		const char *at;
		int merr = wap_match_error(w->st, &at);
		if (merr) {
			size_t off = at && at >= buf && at <= buf + len ? (size_t)(at - buf) : 0;
			size_t line = off >= lpos ? lno + wap_count_nl(buf + lpos, off - lpos) :
				      1 + wap_count_nl(buf, off);
			if (feed && !lines)
				line = 1 + lines_before(feed->fd, feed->skip + em.base) +
				       wap_count_nl(buf, off);
			if (!w->has_merr)
				wap_match_err(merr, path, line, &w->merr);
			w->has_merr = true;
			json_decref(recs);
			drop_entries(&f);
			return;
		}
	}
	if (feed && !feed->eof && !((g->files || g->write) && count)) {
		/* the next piece: the lines counted so far, the partial line
		 * moved to the front */
		if (lines)
			lno += wap_count_nl(buf + lpos, len - lpos);
		lpos = 0;
		em.base += len;
		memmove(w->buf, w->buf + len, feed->have - len);
		feed->have -= len;
		goto piece;
	}
	if (!count) {
		json_decref(recs);
		drop_entries(&f);
		return;
	}
	if (g->mode != WAP_SEARCH_JSON && f.out.len)
		srch_file_end(&em);
	f.path = strdup(path);
	if (!f.path || f.out.oom) {
		free(f.path);
		json_decref(recs);
		drop_entries(&f);
		return;
	}
	f.count = count;
	f.bytes = em.base + len;
	f.recs = recs;
	f.jl_lines = em.nlines;
	f.jl_subs = em.nsub;
	f.jl_printed = em.printed;
	/* ripgrep counts a named binary file searched up to its first NUL */
	f.jl_searched = em.binoff >= 0 ? (size_t)em.binoff : em.base + len;
	if (g->sort == SORT_MTIME && fd >= 0) {
		struct stat st;
		if (!fstat(fd, &st))
			f.mtime = st.st_mtim;
	}
	add_file(g, &f);
}

/* ---- one file: UTF-16, byte order marks, archives ---- */

static size_t bom_len(const char *buf, size_t len)
{
	return len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3) ? 3 : 0;
}

static void search_one(struct gctx *g, struct wk *w, const char *path, const char *buf,
		       size_t len, int fd)
{
	/* a UTF-8 byte order mark is not text (ripgrep drops it too) */
	size_t bom = bom_len(buf, len);
	bool be;

	/* UTF-16 with a byte order mark is searched as UTF-8, as ripgrep does */
	if (wap_text_utf16_bom(buf, len, &be)) {
		bool lossy = false;
		size_t n;
		char *u = wap_text_utf16_to_utf8(buf + 2, len - 2, be, &n, &lossy);
		if (!u)
			return;
		if (!g->text && wap_text_is_binary(u, n))
			w->binary++;
		else
			search_buf(g, w, path, u, n, fd, NULL);
		free(u);
		return;
	}

	buf += bom;
	len -= bom;
	/* ripgrep's --json searches a binary file named on the command line
	 * whole and says where its first NUL is */
	if (w->named && !g->text) {
		const char *nul = memchr(buf, 0, len);
		if (nul) {
			w->binoff = nul - buf;
			search_buf(g, w, path, buf, len, fd, NULL);
			w->binoff = -1;
			return;
		}
	}
	if (!g->text && wap_text_is_binary(buf, len)) {
		w->binary++;
		return;
	}
	search_buf(g, w, path, buf, len, fd, NULL);
}

/* the most of one archive member held to search: past it, the member is
 * searched to there and the archive left (said in the result) */
#define MEMBER_MAX (256u << 20)

/* the members of an archive (lib/fs/archives.c, as `wap read` sees them),
 * each as ARCHIVE//MEMBER; a compressed plain file as itself */
static void search_archive(struct gctx *g, struct wk *w, const char *path, const char *buf,
			   size_t len, int fd)
{
	struct wap_err err = { 0 };
	unsigned long long used = __atomic_load_n(&g->unpacked, __ATOMIC_RELAXED);
	struct wap_ar *a = used >= WAP_ARCHIVE_MAX ? NULL :
			   wap_archive_open_mem(buf, len, path, g->cancel, &err);
	struct archive_entry *ae;
	struct wap_sb name = WAP_SB_INIT;
	const char *mp;
	size_t mn;
	long r = 0;
	int rc;

	if (used >= WAP_ARCHIVE_MAX) {
		/* the call's budget is spent on the archives before */
		wap_sb_addf(&w->acut, "%s\tnot unpacked: the archives before it unpacked to %llu MiB, "
			    "the most in one call\n", path, WAP_ARCHIVE_MAX >> 20);
		return;
	}
	if (!a && err.kind == WAP_E_TOO_LARGE) {	/* a 7z's list of members */
		wap_sb_addf(&w->acut, "%s\t%s\n", path, err.msg);
		wap_err_release(&err);
		return;
	}
	if (!a) {
		wap_err_release(&err);
		search_one(g, w, path, buf, len, fd);
		return;
	}
	/* the call's budget, shared by its archives as they unpack, in every
	 * worker (taken as each ended, 16 workers each unpacked a member of
	 * 250 MiB: found by a fifth hostile review) */
	wap_archive_share(a, &g->unpacked);
	while ((rc = wap_archive_next(a, &ae, &mp, &mn, &err)) == 1) {
		bool raw = wap_archive_raw(a);
		size_t n = 0;

		if (!raw && archive_entry_filetype(ae) != AE_IFREG)
			continue;
		for (;;) {
			if (w->acap - n < 65536) {
				size_t nc = w->acap ? w->acap * 2 : 1 << 20;
				char *nb = nc > MEMBER_MAX ? NULL : realloc(w->abuf, nc);
				if (!nb) {
					r = -1;
					wap_err_set(&err, WAP_E_TOO_LARGE,
						    "a member larger than %u MiB, searched to there", MEMBER_MAX >> 20);
					break;
				}
				w->abuf = nb;
				w->acap = nc;
			}
			r = wap_archive_read(a, w->abuf + n, w->acap - n, &err);
			if (r <= 0)
				break;
			n += r;
		}
		name.len = 0;
		wap_sb_adds(&name, path);
		if (!raw) {
			wap_sb_adds(&name, "//");
			wap_sb_add(&name, mp, mn);
		}
		if (name.oom)
			break;
		w->bytes += n;
		search_one(g, w, name.buf, w->abuf ? w->abuf : "", n, fd);
		if (r < 0)
			break;
	}
	/* what stopped it short (damage, the unpacking budget, a member too
	 * big to hold) is said, as ripgrep names a file it could not read;
	 * a cancelled search stops anyway */
	if ((rc < 0 || r < 0) && !wap_cancel_is_set(g->cancel))
		wap_sb_addf(&w->acut, "%s\t%s\n", path, err.msg);
	wap_err_release(&err);
	wap_archive_free(a);
	wap_sb_release(&name);
}

/* ---- the walk ---- */

/* Read FD whole into the worker's buffer; -2 when it is larger than
 * LIMIT (or the buffer, when that has grown beyond it), with the buffer
 * full (W->have bytes): then it is searched in pieces through that buffer
 * (search_big), or mapped whole.  LIMIT is PIECE when a search in pieces
 * can show everything (whole_needed), else BIGFILE: a file read whole into
 * a buffer bigger than the core's cache is read twice from memory. */
#define BIGFILE (16u << 20)

static ssize_t read_all(int fd, struct wk *w, size_t limit)
{
	size_t n = 0;

	for (;;) {
		size_t want;
		ssize_t r;
		if (w->cap - n < 16384) {
			if (w->cap >= limit) {
				w->have = n;
				return -2;
			}
			size_t nc = w->cap ? w->cap * 2 : PIECE;
			char *nb = realloc(w->buf, nc);
			if (!nb)
				return -1;
			w->buf = nb;
			w->cap = nc;
		}
		want = w->cap - n;
		r = read(fd, w->buf + n, want);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		n += r;
		/* a short read of a regular file is its end */
		if (r == 0 || (size_t)r < want)
			break;
	}
	return n;
}

/* Does the search of a file need all of it at once?  Context lines,
 * multiline matches and archives reach beyond the line at hand; a file
 * named to --jsonl is searched whole (as ripgrep reports a named binary
 * file). */
static bool whole_needed(const struct gctx *g, const struct wk *w)
{
	return g->multiline || g->before || g->after || g->archives || w->named;
}

/* A file bigger than the buffer, its first W->have bytes in W's buffer:
 * search it a piece at a time when nothing needs more than the line at
 * hand; false when it must be mapped whole instead. */
static bool search_big(struct gctx *g, struct wk *w, const char *path, int fd)
{
	size_t bom = bom_len(w->buf, w->have);
	struct feed feed = { .fd = fd, .have = w->have, .skip = bom };
	bool be;

	if (whole_needed(g, w) || wap_text_utf16_bom(w->buf, w->have, &be))
		return false;
	__atomic_add_fetch(&w->searched, 1, __ATOMIC_RELAXED);
	/* as search_one: a UTF-8 byte order mark is dropped, a NUL early
	 * on makes the file binary */
	if (!g->text && wap_text_is_binary(w->buf + bom, w->have - bom)) {
		w->binary++;
		return true;
	}
	memmove(w->buf, w->buf + bom, w->have - bom);
	feed.have -= bom;
	search_buf(g, w, path, NULL, 0, fd, &feed);
	{
		off_t end = lseek(fd, 0, SEEK_CUR);
		if (end > 0)
			w->bytes += end;
	}
	return true;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* MCP notifications/progress for a long search: from the calling thread
 * (worker 0) only, at most four a second */
static void progress(struct gctx *g, struct wk *w)
{
	struct timespec now;
	size_t done = 0;
	char msg[64];

	if (!g->call->progress || w->searched % 256)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - g->last_progress.tv_sec) * 1000 +
	    (now.tv_nsec - g->last_progress.tv_nsec) / 1000000 < 250)
		return;
	g->last_progress = now;
	for (int i = 0; i < g->nw; i++)
		done += __atomic_load_n(&g->wks[i].searched, __ATOMIC_RELAXED);
	snprintf(msg, sizeof(msg), "%zu files searched", done);
	g->call->progress(g->call->arg, (double)done, 0, msg);
}

/* the worker's match error, if any, stops the walk */
static int worker_error(struct wk *w, struct wap_err *err)
{
	if (!w->has_merr)
		return 0;
	*err = w->merr;
	memset(&w->merr, 0, sizeof(w->merr));
	w->has_merr = false;
	return -1;
}

/* E's path as the output shows it: beneath the path argument as given */
static const char *shown_path(const struct gctx *g, struct wk *w, const struct wap_walk_ent *e)
{
	const char *rest = e->path + (e->pathlen >= g->shown_rel ? g->shown_rel : e->pathlen);
	size_t al;

	if (!g->shown_arg)
		return e->path;
	al = strlen(g->shown_arg);
	w->shown.len = 0;
	wap_sb_add(&w->shown, g->shown_arg, al);
	if (*rest == '/' && al && g->shown_arg[al - 1] == '/')
		rest++;
	else if (*rest && *rest != '/' && (!al || g->shown_arg[al - 1] != '/'))
		wap_sb_addc(&w->shown, '/');
	wap_sb_adds(&w->shown, rest);
	return w->shown.oom || !w->shown.buf ? e->path : w->shown.buf;
}

static int on_file(void *arg, const struct wap_walk_ent *e, struct wap_err *err)
{
	struct gctx *g = arg;
	struct wk *w = &g->wks[e->worker];
	ssize_t n;
	int fd;

	if (wap_cancel_is_set(g->cancel))
		return wap_cancel_err(err);
	if (e->depth > 0) {
		if (g->include.n && !wap_globset_match(&g->include, e->path, e->pathlen))
			return 0;
		if (g->types.n) {
			const char *b = base_name(e->path);
			if (!wap_globset_match(&g->types, b, strlen(b)))
				return 0;
		}
	}
	if (e->link) {
		struct wap_err er = { 0 };
		fd = wap_ws_open(g->ws, e->path, O_RDONLY | O_NONBLOCK, 0, WAP_ACC_READ, &er);
		wap_err_release(&er);
	} else {
		fd = openat(e->dirfd, e->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	}
	if (fd < 0)
		return 0;
	w->named = g->mode == WAP_SEARCH_JSONL && e->depth == 0;
	n = read_all(fd, w, whole_needed(g, w) ? BIGFILE : PIECE);
	if (n == -2 && search_big(g, w, e->path, fd)) {
		close(fd);
		return worker_error(w, err);
	}
	if (n == -2) {
		/* what a piece cannot show (context, multiline matches,
		 * archives, UTF-16): the file mapped whole */
		struct stat st;
		void *map;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
			close(fd);
			return 0;
		}
		map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			close(fd);
			return 0;
		}
		madvise(map, st.st_size, MADV_SEQUENTIAL);
		__atomic_add_fetch(&w->searched, 1, __ATOMIC_RELAXED);
		w->bytes += st.st_size;
		if (g->archives && wap_archive_sniff(map, st.st_size))
			search_archive(g, w, shown_path(g, w, e), map, st.st_size, fd);
		else
			search_one(g, w, shown_path(g, w, e), map, st.st_size, fd);
		munmap(map, st.st_size);
		close(fd);
		return worker_error(w, err);
	}
	if (n < 0) {
		close(fd);
		return 0;
	}
	__atomic_add_fetch(&w->searched, 1, __ATOMIC_RELAXED);
	w->bytes += n;
	if (e->worker == 0)
		progress(g, w);
	if (g->archives && wap_archive_sniff(w->buf, n))
		search_archive(g, w, shown_path(g, w, e), w->buf, n, fd);
	else
		search_one(g, w, shown_path(g, w, e), w->buf, n, fd);
	close(fd);
	return worker_error(w, err);
}

/* --replace --write: the transform of one file */
struct rewrite {
	struct gctx *g;
	struct wap_mstate *st;
	size_t count;
	const char *path;
};

/* Replace every match in OLD into SB; -1 with ERR on a bad replacement */
static int replace_into(struct rewrite *rw, const char *old, size_t oldlen, struct wap_sb *sb,
			struct wap_err *err)
{
	struct gctx *g = rw->g;
	size_t pos = 0, prev = 0, ls, le;

	wap_match_begin(rw->st);
	while (pos < oldlen && wap_match_line(g->m, rw->st, old, oldlen, pos, &ls, &le)) {
		/* the file as rewritten is held to maxFileSize, as a write is */
		size_t lim = g->call->ws->lim.max_file_size, n, all, c = 0;
		size_t room = lim > sb->len + (ls - prev) ? lim - sb->len - (ls - prev) : 0;
		char *r = srch_substitute(g, rw->st, old + ls, le - ls, room + 1, &n, &all, &c);
		if (!r)
			return wap_err_set(err, WAP_E_INVALID, "Invalid replacement '%s' (or a regex limit hit in %s:%zu)",
					   g->replace, rw->path, 1 + wap_count_nl(old, ls));
		if (!all || n > room) {
			free(r);
			return wap_err_set(err, WAP_E_TOO_LARGE,
					   "File too large: %s would grow past %zu bytes replaced (limits.maxFileSize); "
					   "nothing was written", rw->path, lim);
		}
		wap_sb_add(sb, old + prev, ls - prev);
		wap_sb_add(sb, r, n);
		free(r);
		rw->count += c;
		prev = le;
		pos = le + 1;
	}
	{
		const char *at;
		int merr = wap_match_error(rw->st, &at);
		if (merr)
			return wap_match_err(merr, rw->path,
					     1 + wap_count_nl(old, at && at >= old && at <= old + oldlen ?
								(size_t)(at - old) : 0), err);
	}
	if (sb->len + (oldlen - prev) > rw->g->call->ws->lim.max_file_size)
		return wap_err_set(err, WAP_E_TOO_LARGE,
				   "File too large: %s would grow past %zu bytes replaced (limits.maxFileSize); "
				   "nothing was written", rw->path, rw->g->call->ws->lim.max_file_size);
	wap_sb_add(sb, old + prev, oldlen - prev);
	return 0;
}

/* A UTF-16 file is rewritten in UTF-16, its byte order and mark kept; one
 * that does not decode cleanly is left alone. */
static int rewrite_utf16(struct rewrite *rw, const char *old, size_t oldlen, bool be,
			 char **out, size_t *outlen, struct wap_err *err)
{
	struct wap_sb sb = WAP_SB_INIT;
	bool lossy = false;
	size_t n;
	char *u = wap_text_utf16_to_utf8(old + 2, oldlen - 2, be, &n, &lossy), *e;

	if (!u)
		return wap_err_oom(err);
	if (lossy) {
		free(u);
		return wap_err_set(err, WAP_E_INVALID, "not valid UTF-16: not rewritten");
	}
	if (replace_into(rw, u, n, &sb, err)) {
		free(u);
		wap_sb_release(&sb);
		return -1;
	}
	free(u);
	if (sb.oom) {
		wap_sb_release(&sb);
		return wap_err_oom(err);
	}
	e = wap_text_utf8_to_utf16(sb.buf ? sb.buf : "", sb.len, be, &n, &lossy);
	wap_sb_release(&sb);
	if (!e)
		return wap_err_oom(err);
	if (lossy) {
		free(e);
		return wap_err_set(err, WAP_E_INVALID, "the replacement is not valid UTF-8: not rewritten");
	}
	*out = malloc(n + 2);
	if (!*out) {
		free(e);
		return wap_err_oom(err);
	}
	memcpy(*out, old, 2);
	memcpy(*out + 2, e, n);
	free(e);
	*outlen = n + 2;
	return 0;
}

static int rewrite_fn(void *arg, const char *old, size_t oldlen, char **out, size_t *outlen,
		      struct wap_err *err)
{
	struct rewrite *rw = arg;
	struct wap_sb sb = WAP_SB_INIT;
	size_t bom = bom_len(old, oldlen);
	bool be;

	if (wap_text_utf16_bom(old, oldlen, &be))
		return rewrite_utf16(rw, old, oldlen, be, out, outlen, err);
	/* the byte order mark stays, and is not searched */
	wap_sb_add(&sb, old, bom);
	if (replace_into(rw, old + bom, oldlen - bom, &sb, err)) {
		wap_sb_release(&sb);
		return -1;
	}
	if (sb.oom) {
		wap_sb_release(&sb);
		return wap_err_oom(err);
	}
	*outlen = sb.len;
	*out = sb.len ? wap_sb_detach(&sb) : strdup("");
	return *out ? 0 : wap_err_oom(err);
}

/* ---- the operation ---- */

static int strs(const json_t *req, const char *key, json_t **out, struct wap_err *err)
{
	json_t *v = json_object_get(req, key);
	size_t i;
	json_t *s;

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		*out = v;
		return 0;
	}
	if (!json_is_array(v))
		return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be an array of strings", key);
	json_array_foreach(v, i, s)
		if (!json_is_string(s))
			return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be an array of strings", key);
	*out = v;
	return 0;
}

static size_t strs_len(json_t *v)
{
	return !v ? 0 : json_is_string(v) ? 1 : json_array_size(v);
}

static const char *strs_at(json_t *v, size_t i)
{
	return json_is_string(v) ? json_string_value(v) : json_string_value(json_array_get(v, i));
}

static int add_types(struct gctx *g, json_t *tv, struct wap_err *err)
{
	for (size_t i = 0; i < strs_len(tv); i++) {
		const char *t = strs_at(tv, i);
		int k;
		for (k = 0; types[k].name; k++)
			if (!strcmp(t, types[k].name) || (types[k].alias && !strcmp(t, types[k].alias)))
				break;
		if (!types[k].name) {
			struct wap_sb sb = WAP_SB_INIT;
			for (int j = 0; types[j].name; j++)
				wap_sb_addf(&sb, "%s%s", j ? ", " : "", types[j].name);
			wap_err_set(err, WAP_E_INVALID, "Unknown file type '%s' (known: %s)", t,
				    sb.buf ? sb.buf : "");
			wap_sb_release(&sb);
			return -1;
		}
		{
			char *gl = strdup(types[k].globs), *save = NULL;
			for (char *p = strtok_r(gl, " ", &save); p; p = strtok_r(NULL, " ", &save))
				if (wap_globset_add(&g->types, p, 0, err)) {
					free(gl);
					return -1;
				}
			free(gl);
		}
	}
	return 0;
}

static int getint(const json_t *req, const char *key, long long dflt, long long min,
		  long long *out, struct wap_err *err)
{
	long long v = dflt;
	if (wap_req_int(req, key, &v, err) < 0)
		return -1;
	if (v < min)
		return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be at least %lld", key, min);
	*out = v;
	return 0;
}

/* The archives not searched to their end, with why, into RES as
 * archivesCut: [{path, reason}] (none: no key) */
static void archives_cut(struct gctx *g, json_t *res)
{
	json_t *a = NULL;

	for (int i = 0; i < g->nw; i++)
		for (const char *l = g->wks[i].acut.buf, *nl; l && (nl = strchr(l, '\n')); l = nl + 1) {
			const char *tab = memchr(l, '\t', nl - l);
			if (!a)
				a = json_array();
			json_array_append_new(a, json_pack("{s:s%, s:s%}", "path", l, (int)(tab - l),
							   "reason", tab + 1, (int)(nl - tab - 1)));
		}
	if (a)
		json_object_set_new(res, "archivesCut", a);
}

int wap_search(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err,
		     int mode, FILE *out, int *status)
{
	struct gctx g = { 0 };
	struct wap_match_opts mo = { 0 };
	struct wap_walk_opts wo = { .max_depth = -1 };
	const char *pattern = NULL, *sort = NULL, **pats = NULL;
	json_t *rx, *paths, *inc, *tv;
	struct wap_globset excl = { 0 };
	long long v = 0;
	size_t npat = 0, total = 0;
	struct timespec t0, t1;
	int rc = -1;

	*res = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	g.mode = mode;
	g.ws = call->ws;
	g.cancel = call->cancel;
	g.call = call;	/* last_progress 0: the first report comes at once */
	g.maxline = call->ws->lim.max_line_len;
	pthread_mutex_init(&g.mu, NULL);
	if (wap_req_str(req, "pattern", &pattern, err) < 0 ||
	    strs(req, "regexp", &rx, err) || strs(req, "paths", &paths, err) ||
	    strs(req, "include", &inc, err) ||
	    strs(req, "type", &tv, err))
		goto out;
	if (wap_req_bool(req, "fixed_strings", &mo.fixed, err) < 0 ||
	    wap_req_bool(req, "ignore_case", &mo.icase, err) < 0 ||
	    wap_req_bool(req, "word_regexp", &mo.word, err) < 0 ||
	    wap_req_bool(req, "line_regexp", &mo.line, err) < 0 ||
	    wap_req_bool(req, "multiline", &mo.multiline, err) < 0 ||
	    wap_req_bool(req, "invert_match", &g.invert, err) < 0 ||
	    wap_req_bool(req, "files_with_matches", &g.files, err) < 0 ||
	    wap_req_bool(req, "count", &g.count, err) < 0 ||
	    wap_req_bool(req, "only_matching", &g.only, err) < 0 ||
	    wap_req_bool(req, "no_ignore", &wo.no_ignore, err) < 0 ||
	    wap_req_bool(req, "no_default_excludes", &wo.no_default_excludes, err) < 0 ||
	    wap_req_bool(req, "follow", &wo.follow, err) < 0 ||
	    wap_req_bool(req, "search_archives", &g.archives, err) < 0 ||
	    wap_req_bool(req, "text", &g.text, err) < 0 ||
	    wap_req_bool(req, "write", &g.write, err) < 0 ||
	    wap_req_bool(req, "jsonl", &g.jsonl, err) < 0 ||
	    wap_req_str(req, "replace", &g.replace, err) < 0 ||
	    wap_req_str(req, "sort", &sort, err) < 0)
		goto out;
	if (g.archives && wap_lazy_load(WAP_LIB_ARCHIVE, err))
		goto out;
	if (getint(req, "context", 0, 0, &v, err))
		goto out;
	g.before = g.after = v;
	if (getint(req, "before_context", g.before, 0, &v, err))
		goto out;
	g.before = v;
	if (getint(req, "after_context", g.after, 0, &v, err))
		goto out;
	g.after = v;
	if (getint(req, "max_results", (long long)call->ws->lim.max_search_results, 0, &v, err))
		goto out;
	g.max = v;
	if (getint(req, "max_depth", -1, -1, &v, err))
		goto out;
	wo.max_depth = v;
	if (getint(req, "threads", 0, 0, &v, err))
		goto out;
	wo.threads = v > 256 ? 256 : v;
	if (!sort || !strcmp(sort, "path"))
		g.sort = SORT_PATH;
	else if (!strcmp(sort, "mtime") || !strcmp(sort, "modified"))
		g.sort = SORT_MTIME;
	else if (!strcmp(sort, "none"))
		g.sort = SORT_NONE;
	else {
		wap_err_set(err, WAP_E_INVALID, "Invalid sort '%s' (path, mtime or none)", sort);
		goto out;
	}
	if (g.write && !g.replace) {
		wap_err_set(err, WAP_E_INVALID, "--write needs --replace TEXT");
		goto out;
	}
	if (g.write && wap_ws_check(call->ws, ".", WAP_ACC_WRITE, err))
		goto out;
	if (g.write && (g.invert || g.only)) {
		wap_err_set(err, WAP_E_INVALID, "--write cannot be combined with --invert-match or --only-matching");
		goto out;
	}
	if (g.before > 1000 || g.after > 1000) {
		wap_err_set(err, WAP_E_INVALID, "context is limited to 1000 lines");
		goto out;
	}

	/* the patterns */
	npat = strs_len(rx) + (pattern ? 1 : 0);
	if (!npat) {
		wap_err_set(err, WAP_E_INVALID, "missing PATTERN (see 'wap grep --help')");
		goto out;
	}
	pats = calloc(npat, sizeof(*pats));
	if (!pats) {
		wap_err_oom(err);
		goto out;
	}
	npat = 0;
	if (pattern)
		pats[npat++] = pattern;
	for (size_t i = 0; i < strs_len(rx); i++)
		pats[npat++] = strs_at(rx, i);
	g.multiline = mo.multiline;
	mo.patterns = pats;
	mo.n = npat;
	g.m = wap_matcher_new(&mo, err);
	if (!g.m)
		goto out;
	for (size_t i = 0; i < strs_len(inc); i++)
		if (wap_globset_add(&g.include, strs_at(inc, i), WAP_GLOB_BASENAME, err))
			goto out;
	if (wap_exclude_globs(&excl, req, "exclude", err))
		goto out;
	if (add_types(&g, tv, err))
		goto out;
	wo.exclude = &excl;
	wo.cancel = call->cancel;

	g.nw = wap_walk_threads(&wo);
	g.wks = calloc(g.nw, sizeof(*g.wks));
	if (!g.wks) {
		wap_err_oom(err);
		goto out;
	}
	for (int i = 0; i < g.nw; i++) {
		g.wks[i].binoff = -1;
		g.wks[i].st = wap_mstate_new(g.m);
		if (!g.wks[i].st) {
			wap_err_oom(err);
			goto out;
		}
		wap_mstate_set_cancel(g.wks[i].st, call->cancel);
	}
	/* every PATH, or the root */
	for (size_t i = 0; i < (strs_len(paths) ? strs_len(paths) : 1); i++) {
		char *rel = NULL;
		const char *p = strs_len(paths) ? strs_at(paths, i) : ".";
		int r;
		if (wap_ws_rel(call->ws, p, strlen(p), &rel, err))
			goto out;
		/* the result's paths are root-relative; what is printed
		 * names them as the argument did (--write edits by them) */
		g.shown_arg = NULL;
		if (strs_len(paths) && g.mode != WAP_SEARCH_JSON && !g.write &&
		    (!strcmp(rel, ".") || strcmp(p, rel))) {
			g.shown_arg = p;
			g.shown_rel = strcmp(rel, ".") ? strlen(rel) : 0;	/* the root's paths: no "./" */
		}
		r = wap_walk(call->ws, rel, &wo, on_file, &g, err);
		free(rel);
		if (r)
			goto out;
	}

	if (g.write) {
		struct rewrite rw = { &g, wap_mstate_new(g.m), 0, NULL };
		json_t *files = json_array();
		if (g.nfr)
			qsort_r(g.fr, g.nfr, sizeof(*g.fr), srch_frcmp_q, &(int){ SORT_PATH });
		if (!rw.st) {
			json_decref(files);
			wap_err_oom(err);
			goto out;
		}
		wap_mstate_set_cancel(rw.st, call->cancel);
		for (size_t i = 0; i < g.nfr; i++) {
			struct wap_wres wr;
			size_t before = rw.count;
			if (strstr(g.fr[i].path, "//"))
				continue;	/* archive members stay as they are */
			rw.path = g.fr[i].path;
			if (wap_update_file(call->ws, g.fr[i].path, false, NULL, rewrite_fn, &rw, &wr, err)) {
				wap_mstate_free(rw.st);
				json_decref(files);
				goto out;
			}
			if (rw.count > before)
				json_array_append_new(files, wap_json_name(g.fr[i].path));
		}
		wap_mstate_free(rw.st);
		*res = json_pack("{s:I, s:o}", "count", (json_int_t)rw.count, "files", files);
		rc = *res ? 0 : wap_err_oom(err);
		goto out;
	}

	if (mode != WAP_SEARCH_JSON) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		*status = srch_print_direct(&g, out,
			(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
		/* what was not searched: the caller says it aside */
		*res = json_object();
		if (*res)
			archives_cut(&g, *res);
		rc = 0;
		goto out;
	}
	for (size_t i = 0; i < g.nfr; i++)
		total += g.fr[i].count;
	*res = srch_build_result(&g, g.nfr, total);
	if (!*res) {
		rc = wap_err_oom(err);
		goto out;
	}
	{
		size_t searched = 0, binary = 0, bytes = 0;
		for (int i = 0; i < g.nw; i++) {
			searched += g.wks[i].searched;
			binary += g.wks[i].binary;
			bytes += g.wks[i].bytes;
		}
		json_object_set_new(*res, "filesSearched", json_integer((json_int_t)searched));
		json_object_set_new(*res, "filesWithMatches", json_integer((json_int_t)g.nfr));
		json_object_set_new(*res, "binaryFilesSkipped", json_integer((json_int_t)binary));
		archives_cut(&g, *res);
		if (g.jsonl) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			json_object_set_new(*res, "bytesSearched", json_integer((json_int_t)bytes));
			json_object_set_new(*res, "elapsedNanos", json_integer(
				(json_int_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec))));
		}
	}
	rc = 0;
out:
	if (g.wks)
		for (int i = 0; i < g.nw; i++) {
			free(g.wks[i].buf);
			free(g.wks[i].abuf);
			wap_sb_release(&g.wks[i].shown);
			wap_sb_release(&g.wks[i].acut);
			wap_mstate_free(g.wks[i].st);
		}
	free(g.wks);
	for (size_t i = 0; i < g.nfr; i++) {
		free(g.fr[i].path);
		drop_entries(&g.fr[i]);
	}
	free(g.fr);
	free(g.cutkey.path);
	free(pats);
	wap_matcher_free(g.m);
	wap_globset_release(&g.include);
	wap_globset_release(&g.types);
	wap_globset_release(&excl);
	pthread_mutex_destroy(&g.mu);
	return rc;
}

