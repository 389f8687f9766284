/* core/text.h - text files: binary detection, UTF-8, line index, MIME guess. */
#ifndef WAP_TEXT_H
#define WAP_TEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

/* A NUL in the first 8 KiB means binary, as git and ripgrep decide. */
bool wap_text_is_binary(const char *buf, size_t len);

/* Is BUF valid UTF-8?  On false, *bad (if non-NULL) is the offset of the
 * first invalid byte. */
bool wap_text_utf8_valid(const char *buf, size_t len, size_t *bad);

/* Length of the longest prefix of BUF (at most MAX bytes) that does not
 * split a UTF-8 sequence. */
size_t wap_text_utf8_cut(const char *buf, size_t len, size_t max);

/* Line starts: off[i] is where line i (0-based) begins; off[n] == len.
 * A final line without '\n' counts; an empty buffer has 0 lines. */
struct wap_lines {
	size_t n;
	size_t *off;	/* n + 1 entries, owned */
};
int wap_lines_index(struct wap_lines *li, const char *buf, size_t len);
void wap_lines_release(struct wap_lines *li);

/* Count lines as wap_lines_index would, without an index. */
size_t wap_text_count_lines(const char *buf, size_t len);

/* Does BUF use CRLF line endings (first line ending is "\r\n")? */
bool wap_text_is_crlf(const char *buf, size_t len);

/* Does every line of BUF end in "\r\n" (and is there at least one)?  What
 * edit and patch keep: a file of CRLF lines only stays CRLF. */
bool wap_text_pure_crlf(const char *buf, size_t len);

/* UTF-16 text, as ripgrep finds it: a byte order mark.  0: none, else the
 * BOM's length (2), with *be true for big-endian. */
size_t wap_text_utf16_bom(const char *buf, size_t len, bool *be);

/* UTF-16 (no BOM) to UTF-8, a lone surrogate or odd last byte becoming
 * U+FFFD (*lossy set).  NULL when out of memory; *outlen the length. */
char *wap_text_utf16_to_utf8(const char *buf, size_t len, bool be, size_t *outlen, bool *lossy);

/* UTF-8 to UTF-16 (no BOM); an invalid byte becomes U+FFFD (*lossy set). */
char *wap_text_utf8_to_utf16(const char *buf, size_t len, bool be, size_t *outlen, bool *lossy);

/* Append BUF to SB, each byte that is not part of valid UTF-8 written as
 * REPL, or as "\xNN" (its value in hex) when REPL is NULL. */
void wap_text_utf8_fix(struct wap_sb *sb, const char *buf, size_t len, const char *repl);

/* Append the base64 (RFC 4648, padded) of BUF to SB. */
void wap_text_base64(struct wap_sb *sb, const void *buf, size_t len);

/* File names need not be UTF-8, JSON strings must be.  One lossless form
 * everywhere (ls, glob, grep, stat): a UTF-8 name is itself; any other has
 * each invalid byte written "\xNN" in the string (readable, never
 * dropped) and its exact bytes in base64 beside it under KEY + "Bytes"
 * (pathBytes, nameBytes, targetBytes), as ripgrep gives {"bytes": ...}.
 * wap_json_name returns the string alone (a new reference; NULL only when
 * out of memory); wap_json_set_name sets KEY (and KEYBytes when needed)
 * on OBJ, returning 0 or -1 when out of memory. */
json_t *wap_json_name(const char *s);
int wap_json_set_name(json_t *obj, const char *key, const char *s);

/* A name as text output shows it (grep's and glob's lines, ls's entries,
 * the tree ops' messages): as it is, unless it holds a control character
 * (a newline, a carriage return, an escape) or begins with '"'; then in
 * double quotes with C escapes (\n, \t, \", \\, \033), as git shows such
 * a name (core.quotePath), so no file name can pass for a line of wap's own
 * or drive the terminal.  --json and --jsonl escape names as JSON instead.
 * wap_name_quoted tells whether N bytes at S need it; wap_name_quote
 * appends the quoted form to SB; wap_name_show returns S itself or its
 * quoted form built in SB (release SB after use; S when out of memory). */
bool wap_name_quoted(const char *s, size_t n);
void wap_name_quote(struct wap_sb *sb, const char *s, size_t n);
const char *wap_name_show(struct wap_sb *sb, const char *s);

/* A MIME type from the name, then the first bytes; never NULL. */
const char *wap_text_mime(const char *name, const char *buf, size_t len);

#endif
