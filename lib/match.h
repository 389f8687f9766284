/* match.h - the line matcher of grep: PCRE2 (JIT) behind a literal prefilter.
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
 */
#ifndef WAP_MATCH_H
#define WAP_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct wap_match_opts {
	const char *const *patterns;	/* at least one */
	size_t n;
	bool fixed;		/* -F: literal strings */
	bool icase;		/* -i */
	bool word;		/* -w: not preceded or followed by a word character */
	bool line;		/* -x: the whole line */
	bool multiline;		/* -U: a match may span lines */
};

struct wap_matcher;
struct wap_mstate;

/* NULL with INVALID_ARGUMENT ("Invalid regex 'P': MESSAGE at offset N",
 * details {offset, pattern}) for a bad pattern. */
struct wap_matcher *wap_matcher_new(const struct wap_match_opts *o, struct wap_err *err);
void wap_matcher_free(struct wap_matcher *m);

struct wap_mstate *wap_mstate_new(const struct wap_matcher *m);
void wap_mstate_free(struct wap_mstate *s);

/* Start on a new buffer (resets cached literal positions). */
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

/* The compiled PCRE2 code (pcre2_code_8 *), for substitution. */
const void *wap_matcher_code(const struct wap_matcher *m);

/* Does the prefilter alone decide (no regex per line)?  How many literals?
 * For tests and benchmarks. */
bool wap_matcher_exact(const struct wap_matcher *m);
size_t wap_matcher_literals(const struct wap_matcher *m, const char **first);

/* Number of '\n' in P[0..N). */
size_t wap_count_nl(const char *p, size_t n);

#endif
