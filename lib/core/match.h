/* core/match.h - the line matcher of grep: PCRE2 (JIT) behind a literal prefilter.
 *
 * The patterns are compiled once (UTF, invalid UTF-8 tolerated, Unicode
 * \w and case folding, ^/$ at line ends).  From them the matcher extracts
 * literals that every match must contain (a set of alternatives: one of
 * them must occur) and scans whole buffers for those with SIMD pair-of-
 * rare-bytes search; PCRE2 only runs on a line holding a candidate.  When
 * the pattern is nothing but those literals, no regex runs at all.  Without
 * a literal PCRE2 runs over the whole buffer and a match is confirmed on
 * its line alone, so a match never spans lines unless multiline.
 *
 * A matcher is read-only once built and shared by threads; each thread
 * has its own struct wap_mstate.
 *
 * Limits: every match runs under PCRE2 match, depth and heap limits, and
 * matching one buffer under a time bound; a cancel flag is polled inside a
 * buffer, not only between them.  When one of them stops the matcher,
 * wap_match_line/wap_match_sub return false and wap_match_error() says why
 * - never a silent "no match".
 */
#ifndef WAP_MATCH_H
#define WAP_MATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "cancel.h"
#include "err.h"

struct wap_match_opts {
	const char *const *patterns;	/* at least one */
	size_t n;
	bool fixed;		/* -F: literal strings */
	bool icase;		/* -i */
	bool word;		/* -w: not preceded or followed by a word character */
	bool line;		/* -x: the whole line */
	bool multiline;		/* -U: a match may span lines */
	long time_ms;		/* the time bound on one buffer; 0: 20 s */
};

struct wap_matcher;
struct wap_mstate;

/* NULL with INVALID_ARGUMENT ("Invalid regex 'P': MESSAGE at offset N",
 * details {offset, pattern}) for a bad pattern. */
struct wap_matcher *wap_matcher_new(const struct wap_match_opts *o, struct wap_err *err);
void wap_matcher_free(struct wap_matcher *m);

struct wap_mstate *wap_mstate_new(const struct wap_matcher *m);
void wap_mstate_free(struct wap_mstate *s);

/* Poll the token CANCEL (may be NULL) while matching. */
void wap_mstate_set_cancel(struct wap_mstate *s, const struct wap_cancel *cancel);

/* Apply the same match, depth and heap limits to a pcre2_match_context
 * (for pcre2_substitute and other direct users). */
void wap_match_limits(void *mctx);

/* A shared pcre2_match_context with those limits (thread-safe to use). */
void *wap_match_context(void);

/* After a false from wap_match_line/wap_match_sub: 0 for no match, else
 * why it stopped (a PCRE2 error code or WAP_MATCH_*), with *WHERE (may be
 * NULL) a pointer into that call's subject: for wap_match_line the start
 * of the line that hit the limit, for wap_match_sub the subject.  Sticky
 * until wap_match_begin: every later call returns false at once. */
#define WAP_MATCH_CANCELLED (-10001)
#define WAP_MATCH_TIMEOUT (-10002)
int wap_match_error(const struct wap_mstate *s, const char **where);

/* Set ERR for CODE at PATH:LINE: TOO_LARGE "regex match limit hit in
 * src/a.c:12; simplify the pattern", a cancel wap_cancel_err().  -1. */
int wap_match_err(int code, const char *path, size_t line, struct wap_err *err);

/* Start on a new buffer (resets cached literal positions, the error and
 * the time bound). */
void wap_match_begin(struct wap_mstate *s);

/* The next matching line at or after POS (a line start) in BUF[0..LEN):
 * true with [*ls, *le) its bounds, *le at the '\n' or LEN.  Multiline: the
 * lines the match covers. */
bool wap_match_line(const struct wap_matcher *m, struct wap_mstate *s, const char *buf,
		    size_t len, size_t pos, size_t *ls, size_t *le);

/* The next match inside SUBJ[0..N) at or after OFF: true with [*ms, *me).
 * For -o, highlighting and submatches; an empty match advances OFF by the
 * caller. */
bool wap_match_sub(const struct wap_matcher *m, struct wap_mstate *s, const char *subj,
		   size_t n, size_t off, size_t *ms, size_t *me);

/* Every match inside a line, one by one, as ripgrep finds them (Rust's
 * find_iter): after an empty match the search goes on one character
 * later, and an empty match where the one before it ended is none (x*
 * in "axxb" is [0,0) [1,3) [4,4)).  For -o, submatches and highlighting.
 * IT starts zeroed. */
struct wap_match_iter {
	size_t off;		/* where the next search starts */
	size_t last;		/* where the match before ended, if ANY */
	bool any;
};

bool wap_match_next(const struct wap_matcher *m, struct wap_mstate *s, const char *subj,
		    size_t n, struct wap_match_iter *it, size_t *ms, size_t *me);

/* Where the search goes on after an empty match at I of SUBJ[0..N): the
 * byte after its character (a byte on for one that is not UTF-8, as
 * Rust's next_utf8). */
size_t wap_match_step(const char *subj, size_t n, size_t i);

/* The compiled PCRE2 code (pcre2_code_8 *) and the match data of S's
 * last match (pcre2_match_data_8 *), for substitution. */
const void *wap_matcher_code(const struct wap_matcher *m);
void *wap_mstate_data(struct wap_mstate *s);

/* Does the prefilter alone decide (no regex per line)?  How many literals?
 * For tests and benchmarks. */
bool wap_matcher_exact(const struct wap_matcher *m);
size_t wap_matcher_literals(const struct wap_matcher *m, const char **first);

/* Number of '\n' in P[0..N). */
size_t wap_count_nl(const char *p, size_t n);

/* The literal scan's vector width: 2 AVX-512, 1 AVX2, 0 SSE2 (or none),
 * at most MAX (tests try each); the width now in use. */
int wap_match_simd(int max);

#endif
