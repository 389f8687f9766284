/* edit/edit.h - the editing engine: string replacement with fuzzy fallbacks,
 * several edits at once, line operations (WAP modifyFile) and position
 * edits (LSP TextEdits, UTF-16 characters).  Pure functions of bytes: no
 * files are touched here (applets/edit.c writes through wap_update_file,
 * lib/edit/patch.c through wap_write_file).
 *
 * Line endings: a file whose every line ends in CRLF is edited as LF text
 * and turned back to CRLF; a file's trailing-newline state is kept (except
 * by position edits, which are exact).  All edits of one call are applied
 * to the in-memory text; any failure leaves nothing half-done.
 *
 * Ownership: *out buffers are malloc'd for the caller; info->strategies is
 * owned by info (wap_edit_info_release).
 */
#ifndef WAP_EDIT_H
#define WAP_EDIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cancel.h"
#include "err.h"

/* Fuzzy strategies, tried in this order; the first that finds any place
 * decides (one place: accepted; several: MULTIPLE_MATCHES). */
enum wap_strategy {
	WAP_S_EXACT,
	WAP_S_TRAILING,		/* trailing whitespace ignored per line */
	WAP_S_WHITESPACE,	/* leading and trailing whitespace ignored per line */
	WAP_S_INDENT,		/* common indentation removed on both sides */
	WAP_S_UNICODE,		/* typographic quotes, dashes, odd spaces normalised */
	WAP_S_ESCAPES,		/* \n \t \" written literally by a model */
	WAP_S_TRIMMED,		/* old with whitespace and blank lines around it */
	/* OpenCode's replacers (match opencode), in OpenCode's order */
	WAP_S_OC_LINE_TRIMMED,		/* each line trimmed */
	WAP_S_OC_BLOCK_ANCHOR,		/* first and last line anchor, middle alike */
	WAP_S_OC_WS_NORMALIZED,		/* whitespace runs as one space */
	WAP_S_OC_INDENT_FLEXIBLE,	/* common indentation removed */
	WAP_S_OC_ESCAPE_NORMALIZED,	/* \n \t \" ... unescaped */
	WAP_S_OC_TRIMMED_BOUNDARY,	/* old trimmed */
	WAP_S_OC_CONTEXT_AWARE,		/* anchors, half the middle lines the same */
	WAP_S_COUNT
};
const char *wap_strategy_name(enum wap_strategy s);	/* "exact", "trailing_whitespace"... */

enum wap_edit_mode {
	WAP_EDIT_REPLACE,	/* old -> new */
	WAP_EDIT_MULTI,		/* edits: [{old,new,replace_all}] */
	WAP_EDIT_OPS,		/* ops: [{type:replace|insert|delete|regexReplace,...}] */
	WAP_EDIT_POSITIONS,	/* text_edits: [{range:{start,end},newText}] */
};

struct wap_edit_spec {
	enum wap_edit_mode mode;
	const char *old, *new;		/* REPLACE */
	size_t oldlen, newlen;
	bool replace_all;
	bool exact;			/* no fuzzy fallback */
	bool opencode;			/* OpenCode's replacer chain instead of wap's */
	const json_t *list;		/* MULTI, OPS, POSITIONS (borrowed) */
	const char *path;		/* for messages (may be NULL) */
	const struct wap_cancel *cancel;	/* the call's (may be NULL): polled by a
					 * regexReplace while it matches */
	size_t max;			/* the largest result, in bytes (limits.maxFileSize;
					 * 0: none): an edit that would grow past it is
					 * SIZE_LIMIT_EXCEEDED before its result is built */
};

struct wap_edit_info {
	size_t replacements;		/* places changed (edits, ops applied) */
	enum wap_strategy strategy;	/* the loosest strategy used */
	json_t *strategies;		/* MULTI: one name per edit (owned) */
};

/* Check a spec before touching any file (types, shapes, old == new...). */
int wap_edit_validate(const struct wap_edit_spec *s, struct wap_err *err);

/* May the edit create a missing file?  (empty old string) */
bool wap_edit_may_create(const struct wap_edit_spec *s);

/* Apply S to BUF (NULL: the file does not exist).  On success *OUT (malloc'd,
 * NUL-terminated) and *OUTLEN hold the new bytes and INFO is filled. */
int wap_edit_apply(const struct wap_edit_spec *s, const char *buf, size_t len,
		   char **out, size_t *outlen, struct wap_edit_info *info,
		   struct wap_err *err);
void wap_edit_info_release(struct wap_edit_info *info);

/* The core of string replacement on LF text (exposed for tests): replace
 * OLD by NEW in TEXT; EDITNO > 0 names the edit in messages. */
int wap_edit_replace(const char *text, size_t len, const char *old, size_t oldlen,
		     const char *new, size_t newlen, bool all, bool exact, int editno,
		     char **out, size_t *outlen, size_t *count, enum wap_strategy *used,
		     struct wap_err *err);

/* The same with OpenCode's replacer chain (its edit tool's rules): the
 * first candidate occurring once (ALL: at all) is replaced by NEW as given;
 * *USED gets exact or one of the WAP_S_OC_* strategies. */
int wap_edit_replace_opencode(const char *text, size_t len, const char *old, size_t oldlen,
			      const char *new, size_t newlen, bool all, int editno,
			      char **out, size_t *outlen, size_t *count, enum wap_strategy *used,
			      struct wap_err *err);

/* A line of text without its terminator. */
struct wap_span {
	const char *p;
	size_t len;
};

/* Split TEXT into lines, the one splitter of edit and patch: the '\n' is
 * not part of a line, a final line without one counts, "" has no lines.
 * FLAGS: WAP_LINES_CR, nor is a '\r' before a '\n'; WAP_LINES_CR_END, nor
 * one ending the text; WAP_LINES_JS, JavaScript's split("\n") (N
 * newlines give N + 1 lines, the last maybe empty).  *OUT is malloc'd;
 * returns the count, or -1 when out of memory. */
#define WAP_LINES_CR		1u
#define WAP_LINES_CR_END	2u
#define WAP_LINES_JS		4u
long wap_lines(const char *t, size_t len, unsigned flags, struct wap_span **out);

/* Find the K lines PAT in the N lines LINES, comparing exactly, then
 * ignoring trailing whitespace, then all surrounding whitespace, then with
 * Unicode punctuation normalised.  HINT < 0: the first place at or after
 * START (EOF: only at the very end).  HINT >= 0: the place nearest to HINT
 * not before START.  Returns the index or -1; *LEVEL gets the level used
 * (0..3). */
long wap_seek_lines(const struct wap_span *lines, size_t n, const struct wap_span *pat,
		    size_t k, size_t start, bool eof, long hint, int *level);

/* Byte offset of an LSP position in BUF: 0-based LINE, CHARACTER in UTF-16
 * code units (clamped to the line's length as LSP says; a line past the
 * end is the end of the text).  -1 with err on a position inside a UTF-16
 * surrogate pair or invalid UTF-8. */
long wap_lsp_offset(const char *buf, size_t len, long line, long character,
		    struct wap_err *err);

/* Unicode punctuation normalisation of S into a new buffer (malloc'd). */
char *wap_unicode_fold(const char *s, size_t len, size_t *outlen);

#endif
