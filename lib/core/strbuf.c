/* core/strbuf.c - growable byte buffer. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

bool wap_sb_grow(struct wap_sb *sb, size_t more)
{
	size_t need, cap;
	char *n;

	if (sb->oom)
		return false;
	need = sb->len + more + 1;
	if (need <= sb->cap)
		return true;
	cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap *= 2;
	n = realloc(sb->buf, cap);
	if (!n) {
		sb->oom = true;
		return false;
	}
	sb->buf = n;
	sb->cap = cap;
	return true;
}

void wap_sb_add(struct wap_sb *sb, const void *data, size_t len)
{
	if (!wap_sb_grow(sb, len))
		return;
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = 0;
}

void wap_sb_adds(struct wap_sb *sb, const char *s)
{
	wap_sb_add(sb, s, strlen(s));
}

void wap_sb_addc(struct wap_sb *sb, char c)
{
	wap_sb_add(sb, &c, 1);
}

void wap_sb_addf(struct wap_sb *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !wap_sb_grow(sb, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

char *wap_sb_detach(struct wap_sb *sb)
{
	char *b;

	if (sb->oom) {
		wap_sb_release(sb);
		return NULL;
	}
	if (!sb->buf && !wap_sb_grow(sb, 0))
		return NULL;
	if (sb->len == 0)
		sb->buf[0] = 0;
	b = sb->buf;
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return b;
}

void wap_sb_release(struct wap_sb *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = false;
}
