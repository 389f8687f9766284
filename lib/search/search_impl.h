/* search/search_impl.h - what search.c (the engine) and searchprint.c (its
 * printers) share; not for applets, which use search.h. */
#ifndef WAP_SEARCH_IMPL_H
#define WAP_SEARCH_IMPL_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "applet.h"
#include "glob.h"
#include "search.h"
#include "strbuf.h"

enum { SORT_PATH, SORT_MTIME, SORT_NONE };

/* one searched file with a match */
struct frec {
	char *path;
	struct timespec mtime;
	size_t count;		/* matching lines (occurrences with -o) */
	size_t bytes;
	size_t seq;
	json_t *recs;		/* WAP_SEARCH_JSON: match objects, NULL when not kept */
	struct wap_sb out;	/* WAP_SEARCH_TEXT, WAP_SEARCH_JSONL: the file's output */
	size_t *eoff;		/* where each entry starts in OUT */
	size_t neoff;
	/* WAP_SEARCH_JSONL: matched lines, submatches, bytes of the file's
	 * messages before its end message, bytes searched (as ripgrep's
	 * stats count them) */
	size_t jl_lines, jl_subs, jl_printed, jl_searched;
};

struct wk {
	char *buf;
	size_t cap;
	char *abuf;		/* archive members */
	size_t acap;
	struct wap_mstate *st;
	size_t searched, binary, bytes;
	struct wap_err merr;	/* a regex limit or a cancel stopped this worker */
	bool has_merr;
	size_t have;		/* read_all of a big file: the bytes it holds */
	bool named;		/* JSONL: the file was named, not found by walking */
	long long binoff;	/* JSONL: where a named binary file's first NUL is; -1 */
	struct wap_sb shown;	/* a path as shown (see struct gctx's shown_arg) */
	struct wap_sb acut;	/* archives not searched to their end, each
				 * "PATH\tWHY\n" (search_archive) */
};

struct gctx {
	const struct wap_ws *ws;
	struct wap_matcher *m;
	bool invert, only, files, count, text, jsonl, archives, write, multiline;
	int mode;		/* WAP_SEARCH_* */
	const char *replace;
	/* text and JSONL: the path argument of the walk under way as it was
	 * given ("./sub"), when that is not its root-relative form ("sub"):
	 * paths are then shown beneath it as rg and grep -r show them
	 * ("./sub/a.c"); shown_rel is the length of that root-relative form */
	const char *shown_arg;
	size_t shown_rel;
	long before, after;
	size_t max;		/* 0: all */
	size_t maxline;
	int sort;
	struct wap_globset include, types;
	const struct wap_cancel *cancel;
	unsigned long long unpacked;	/* -z: what the call's archives unpacked */
	const struct wap_call *call;	/* progress reports */
	struct timespec last_progress;
	struct wk *wks;
	int nw;

	pthread_mutex_t mu;
	struct frec *fr;
	size_t nfr, cfr;
	size_t kept;		/* entries held in recs */
	size_t seq;
	bool cut;		/* files after CUTPATH keep no entries */
	struct frec cutkey;
};

struct emit {
	struct gctx *g;
	struct wk *w;
	const char *path, *buf;
	size_t len, pathlen;
	bool quote;		/* the path is shown quoted (wap_name_quoted) */
	size_t base;		/* a big file read in pieces: where BUF starts in it */
	struct frec *f;
	size_t ecap;
	long long lastp;	/* the last line written (0: none) */
	size_t lastp_end;	/* where it ends (its '\n', or len) */
	long long after_until;
	size_t nsub;		/* JSONL: submatches written */
	size_t nlines;		/* JSONL: matched lines written */
	size_t printed;		/* JSONL: bytes of messages before the end message */
	long long binoff;	/* JSONL: the binary_offset of the end message; -1 */
};

static inline size_t srch_line_end(const char *buf, size_t len, size_t at)
{
	const char *nl = at < len ? memchr(buf + at, '\n', len - at) : NULL;
	return nl ? (size_t)(nl - buf) : len;
}


/* search.c */
int srch_frcmp_q(const void *a, const void *b, void *sort);
/* With --replace: SUBJ (N bytes) with every match replaced (matched with
 * ST), malloc'd, in
 * *OUTLEN bytes; NULL on a bad replacement or a regex limit.  MAX 0: the
 * whole of it.  Else when the whole is longer than MAX only its first
 * MAX bytes or more are made (a 1 MB line with a 1,000-byte replacement of
 * each byte would be 1 GB); *TOTAL (may be NULL) gets the whole's length,
 * or 0 when only the start was made.  *COUNT (may be NULL): the
 * replacements made. */
char *srch_substitute(const struct gctx *g, struct wap_mstate *st, const char *subj, size_t n,
		      size_t max, size_t *outlen, size_t *total, size_t *count);

/* With --replace -o: the replacement of the match at [MS, ME) of SUBJ (N
 * bytes, the line it was found in), malloc'd, in *OUTLEN bytes; NULL on
 * a bad replacement or a regex limit. */
char *srch_replace_match(const struct gctx *g, struct wap_mstate *st, const char *subj, size_t n,
			 size_t ms, size_t me, size_t *outlen);

/* searchprint.c */
void srch_add_entry(struct emit *em, json_t **recs, size_t lno, size_t ls, size_t le,
		    size_t ms, size_t me);
void srch_file_end(struct emit *em);
json_t *srch_build_result(struct gctx *g, size_t total_files, size_t total_matches);
int srch_print_direct(struct gctx *g, FILE *out, long long ns);

#endif
