/* core/json.h - JSON text to and from jansson values, on the paths every
 * request takes (a server's message in, its reply out).
 *
 * Byte for byte what jansson gives, at a fraction of its cost: jansson's
 * encoder tracks each container in a hash table of "%p" keys to catch
 * cycles and its decoder reads a byte at a time through a callback.
 *
 * wap_json_dump appends to SB what json_dumps(V, JSON_COMPACT |
 * JSON_ENCODE_ANY) returns: keys in insertion order, no spaces, strings
 * escaped as jansson does (\" \\ \b \f \n \r \t, other control characters
 * \u00XX, nothing else).  It fails (-1, SB as it was) where json_dumps does:
 * a string that is not valid UTF-8 (made with a _nocheck constructor), a
 * container inside itself; and when out of memory (SB->oom set).  A key
 * that is not UTF-8 (json_object_setn_nocheck) fails too, where jansson
 * writes a broken string.
 * wap_json_dump_str appends the N bytes at S as a JSON string, exactly as
 * wap_json_dump writes a string value holding them; -1 (SB as it was) if
 * they are not valid UTF-8, as json_stringn refuses them.
 * wap_json_dumps returns the text as a malloc'd string (its length in *LEN
 * if LEN), or NULL.
 *
 * wap_json_loadb is json_loadb: the same value (a new reference), or NULL
 * with the same json_error_t.  Plain messages are decoded here; anything
 * unusual (reals, deep nesting, any error) is left to jansson itself, so
 * the two cannot differ in what they accept or how they say why not.
 *
 * wap_json_cache_init: once, before any thread starts; jansson's small
 * blocks are then kept per thread for reuse (json.c); anything jansson
 * returns may still be given to free().
 */
#ifndef WAP_JSON_H
#define WAP_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "strbuf.h"

void wap_json_cache_init(void);
int wap_json_dump(const json_t *v, struct wap_sb *sb);
int wap_json_dump_str(struct wap_sb *sb, const char *s, size_t n);
char *wap_json_dumps(const json_t *v, size_t *len);
json_t *wap_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *err);

/* How many values the JSON text BUF holds, near enough to bound what
 * parsing it costs (each '[', '{' and ',' outside strings, and one): a
 * parsed value takes jansson some 20 to 80 bytes however few its text has,
 * so a peer's big message of small values ([0,0,...]) is refused by count
 * before it is parsed. */
size_t wap_json_values(const char *buf, size_t len);

#endif
