/* core/strbuf.h - a growable byte buffer.
 *
 * Allocation failure sets .oom and later appends do nothing, so a caller
 * checks once at the end.  The buffer is always NUL-terminated when
 * non-empty.  wap_sb_detach() hands the bytes to the caller (free()).
 */
#ifndef WAP_STRBUF_H
#define WAP_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct wap_sb {
	char *buf;
	size_t len, cap;
	bool oom;
};
#define WAP_SB_INIT { NULL, 0, 0, false }

bool wap_sb_grow(struct wap_sb *sb, size_t more);
void wap_sb_add(struct wap_sb *sb, const void *data, size_t len);
void wap_sb_adds(struct wap_sb *sb, const char *s);
void wap_sb_addc(struct wap_sb *sb, char c);
void wap_sb_addf(struct wap_sb *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
char *wap_sb_detach(struct wap_sb *sb);	/* never NULL unless oom */
void wap_sb_release(struct wap_sb *sb);

#endif
