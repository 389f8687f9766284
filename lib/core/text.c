/* core/text.c - binary detection, UTF-8 validation, line index, MIME guess. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdio.h>

#include "text.h"

bool wap_text_is_binary(const char *buf, size_t len)
{
	return memchr(buf, 0, len < 8192 ? len : 8192) != NULL;
}

static size_t seq_len(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	size_t n, i;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (len < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

bool wap_text_utf8_valid(const char *buf, size_t len, size_t *bad)
{
	const unsigned char *s = (const unsigned char *)buf;
	size_t i = 0;

	while (i < len) {
		size_t n;
		/* fast path over ASCII, 8 bytes at a time */
		while (i + 8 <= len) {
			unsigned long long w;
			memcpy(&w, s + i, 8);
			if (w & 0x8080808080808080ULL)
				break;
			i += 8;
		}
		if (i >= len)
			break;
		n = seq_len(s + i, len - i);
		if (!n) {
			if (bad)
				*bad = i;
			return false;
		}
		i += n;
	}
	return true;
}

size_t wap_text_utf8_cut(const char *buf, size_t len, size_t max)
{
	const unsigned char *s = (const unsigned char *)buf;
	size_t n;

	if (len <= max)
		return len;
	n = max;
	/* step back over continuation bytes to a sequence start */
	while (n > 0 && (s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

size_t wap_text_count_lines(const char *buf, size_t len)
{
	size_t n = 0;
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		n++;
		if (!nl)
			break;
		p = nl + 1;
	}
	return n;
}

int wap_lines_index(struct wap_lines *li, const char *buf, size_t len)
{
	size_t n = wap_text_count_lines(buf, len), i = 0;
	const char *p = buf, *end = buf + len;

	li->n = n;
	li->off = malloc((n + 1) * sizeof(size_t));
	if (!li->off)
		return -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		li->off[i++] = p - buf;
		if (!nl)
			break;
		p = nl + 1;
	}
	li->off[n] = len;
	return 0;
}

void wap_lines_release(struct wap_lines *li)
{
	free(li->off);
	li->off = NULL;
	li->n = 0;
}

bool wap_text_is_crlf(const char *buf, size_t len)
{
	const char *nl = memchr(buf, '\n', len);

	return nl && nl > buf && nl[-1] == '\r';
}

const char *wap_text_mime(const char *name, const char *buf, size_t len)
{
	static const struct { const char *ext, *mime; } ext[] = {
		{ "c", "text/x-c" }, { "h", "text/x-c" }, { "cc", "text/x-c++" },
		{ "cpp", "text/x-c++" }, { "hpp", "text/x-c++" }, { "py", "text/x-python" },
		{ "js", "text/javascript" }, { "mjs", "text/javascript" },
		{ "ts", "text/x-typescript" }, { "tsx", "text/x-typescript" },
		{ "json", "application/json" }, { "md", "text/markdown" },
		{ "html", "text/html" }, { "htm", "text/html" }, { "css", "text/css" },
		{ "xml", "application/xml" }, { "yml", "application/yaml" },
		{ "yaml", "application/yaml" }, { "toml", "application/toml" },
		{ "sh", "text/x-shellscript" }, { "go", "text/x-go" }, { "rs", "text/x-rust" },
		{ "java", "text/x-java" }, { "rb", "text/x-ruby" }, { "txt", "text/plain" },
		{ "csv", "text/csv" }, { "svg", "image/svg+xml" }, { "png", "image/png" },
		{ "jpg", "image/jpeg" }, { "jpeg", "image/jpeg" }, { "gif", "image/gif" },
		{ "webp", "image/webp" }, { "ico", "image/x-icon" }, { "pdf", "application/pdf" },
		{ "zip", "application/zip" }, { "gz", "application/gzip" },
		{ "tgz", "application/gzip" }, { "xz", "application/x-xz" },
		{ "zst", "application/zstd" }, { "bz2", "application/x-bzip2" },
		{ "tar", "application/x-tar" }, { "7z", "application/x-7z-compressed" },
		{ "wasm", "application/wasm" }, { "so", "application/x-sharedlib" },
		{ "o", "application/x-object" }, { "a", "application/x-archive" },
	};
	static const struct { const char *magic; size_t n; const char *mime; } magic[] = {
		{ "\x89PNG\r\n\x1a\n", 8, "image/png" }, { "\xff\xd8\xff", 3, "image/jpeg" },
		{ "GIF8", 4, "image/gif" }, { "%PDF-", 5, "application/pdf" },
		{ "PK\x03\x04", 4, "application/zip" }, { "\x1f\x8b", 2, "application/gzip" },
		{ "\xfd" "7zXZ", 5, "application/x-xz" }, { "\x28\xb5\x2f\xfd", 4, "application/zstd" },
		{ "BZh", 3, "application/x-bzip2" }, { "7z\xbc\xaf\x27\x1c", 6, "application/x-7z-compressed" },
		{ "\x7f" "ELF", 4, "application/x-executable" }, { "\0asm", 4, "application/wasm" },
	};
	const char *dot = name ? strrchr(name, '.') : NULL;

	if (buf)
		for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
			if (len >= magic[i].n && !memcmp(buf, magic[i].magic, magic[i].n))
				return magic[i].mime;
	if (len >= 262 && buf && !memcmp(buf + 257, "ustar", 5))
		return "application/x-tar";
	if (dot && !strchr(dot, '/'))
		for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
			if (!strcasecmp(dot + 1, ext[i].ext))
				return ext[i].mime;
	if (buf && !wap_text_is_binary(buf, len))
		return "text/plain";
	return "application/octet-stream";
}

size_t wap_text_utf16_bom(const char *buf, size_t len, bool *be)
{
	const unsigned char *b = (const unsigned char *)buf;

	if (len < 2 || !((b[0] == 0xff && b[1] == 0xfe) || (b[0] == 0xfe && b[1] == 0xff)))
		return 0;
	/* FF FE 00 00 is UTF-32LE's mark: not UTF-16 */
	if (b[0] == 0xff && len >= 4 && !b[2] && !b[3])
		return 0;
	*be = b[0] == 0xfe;
	return 2;
}

static unsigned u16(const unsigned char *p, bool be)
{
	return be ? (unsigned)p[0] << 8 | p[1] : (unsigned)p[1] << 8 | p[0];
}

static size_t put_utf8(unsigned char *o, unsigned c)
{
	if (c < 0x80) {
		o[0] = c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = 0xc0 | c >> 6;
		o[1] = 0x80 | (c & 0x3f);
		return 2;
	}
	if (c < 0x10000) {
		o[0] = 0xe0 | c >> 12;
		o[1] = 0x80 | (c >> 6 & 0x3f);
		o[2] = 0x80 | (c & 0x3f);
		return 3;
	}
	o[0] = 0xf0 | c >> 18;
	o[1] = 0x80 | (c >> 12 & 0x3f);
	o[2] = 0x80 | (c >> 6 & 0x3f);
	o[3] = 0x80 | (c & 0x3f);
	return 4;
}

char *wap_text_utf16_to_utf8(const char *buf, size_t len, bool be, size_t *outlen, bool *lossy)
{
	const unsigned char *b = (const unsigned char *)buf;
	/* a unit gives at most 3 bytes; a pair (4 bytes in) gives 4 */
	unsigned char *out = malloc(len / 2 * 3 + 4), *o = out;
	size_t i = 0;

	if (!out)
		return NULL;
	while (i + 1 < len) {
		unsigned c = u16(b + i, be);
		i += 2;
		if (c >= 0xd800 && c < 0xdc00 && i + 1 < len) {
			unsigned d = u16(b + i, be);
			if (d >= 0xdc00 && d < 0xe000) {
				i += 2;
				o += put_utf8(o, 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00));
				continue;
			}
		}
		if (c >= 0xd800 && c < 0xe000) {
			c = 0xfffd;
			*lossy = true;
		}
		o += put_utf8(o, c);
	}
	if (i < len) {
		o += put_utf8(o, 0xfffd);
		*lossy = true;
	}
	*outlen = o - out;
	return (char *)out;
}

static void put_u16(unsigned char *o, unsigned c, bool be)
{
	o[be ? 0 : 1] = c >> 8;
	o[be ? 1 : 0] = c & 0xff;
}

char *wap_text_utf8_to_utf16(const char *buf, size_t len, bool be, size_t *outlen, bool *lossy)
{
	const unsigned char *b = (const unsigned char *)buf;
	unsigned char *out = malloc(len * 2 + 2), *o = out;
	size_t i = 0;

	if (!out)
		return NULL;
	while (i < len) {
		unsigned c = b[i];
		size_t n = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 :
			   c >= 0xf0 && c < 0xf5 ? 4 : 0;
		size_t bad;
		if (!n || i + n > len || !wap_text_utf8_valid(buf + i, n, &bad)) {
			put_u16(o, 0xfffd, be);
			o += 2;
			i++;
			*lossy = true;
			continue;
		}
		c = n == 1 ? c : n == 2 ? (c & 0x1f) << 6 | (b[i + 1] & 0x3f) :
		    n == 3 ? (c & 0x0f) << 12 | (b[i + 1] & 0x3f) << 6 | (b[i + 2] & 0x3f) :
		    (c & 0x07) << 18 | (b[i + 1] & 0x3f) << 12 | (b[i + 2] & 0x3f) << 6 | (b[i + 3] & 0x3f);
		i += n;
		if (c >= 0x10000) {
			c -= 0x10000;
			put_u16(o, 0xd800 + (c >> 10), be);
			put_u16(o + 2, 0xdc00 + (c & 0x3ff), be);
			o += 4;
		} else {
			put_u16(o, c, be);
			o += 2;
		}
	}
	*outlen = o - out;
	return (char *)out;
}

void wap_text_utf8_fix(struct wap_sb *sb, const char *buf, size_t len, const char *repl)
{
	size_t bad;

	while (len && !wap_text_utf8_valid(buf, len, &bad)) {
		wap_sb_add(sb, buf, bad);
		if (repl)
			wap_sb_adds(sb, repl);
		else
			wap_sb_addf(sb, "\\x%02x", (unsigned char)buf[bad]);
		buf += bad + 1;
		len -= bad + 1;
	}
	wap_sb_add(sb, buf, len);
}

void wap_text_base64(struct wap_sb *sb, const void *buf, size_t len)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i += 3) {
		unsigned v = p[i] << 16;
		if (i + 1 < len)
			v |= p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		wap_sb_addc(sb, b64[(v >> 18) & 63]);
		wap_sb_addc(sb, b64[(v >> 12) & 63]);
		wap_sb_addc(sb, i + 1 < len ? b64[(v >> 6) & 63] : '=');
		wap_sb_addc(sb, i + 2 < len ? b64[v & 63] : '=');
	}
}

json_t *wap_json_name(const char *s)
{
	struct wap_sb sb = WAP_SB_INIT;
	size_t n = strlen(s);
	json_t *j;

	if (wap_text_utf8_valid(s, n, NULL))
		return json_stringn(s, n);
	wap_text_utf8_fix(&sb, s, n, NULL);
	j = sb.oom ? NULL : json_stringn(sb.buf ? sb.buf : "", sb.len);
	wap_sb_release(&sb);
	return j;
}

int wap_json_set_name(json_t *obj, const char *key, const char *s)
{
	struct wap_sb sb = WAP_SB_INIT;
	size_t n = strlen(s);
	char bkey[64];
	int rc;

	if (wap_text_utf8_valid(s, n, NULL))
		return json_object_set_new(obj, key, json_stringn_nocheck(s, n));
	if (json_object_set_new(obj, key, wap_json_name(s)))
		return -1;
	snprintf(bkey, sizeof(bkey), "%sBytes", key);
	wap_text_base64(&sb, s, n);
	rc = sb.oom ? -1 : json_object_set_new(obj, bkey, json_stringn(sb.buf ? sb.buf : "", sb.len));
	wap_sb_release(&sb);
	return rc;
}

bool wap_text_pure_crlf(const char *buf, size_t len)
{
	size_t n = 0;

	for (const char *p = buf; (p = memchr(p, '\n', buf + len - p)); p++, n++)
		if (p == buf || p[-1] != '\r')
			return false;
	return n > 0;
}

bool wap_name_quoted(const char *s, size_t n)
{
	const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
	size_t i = 0;

	if (n && s[0] == '"')
		return true;
	/* eight bytes a step (glob prints every path through here): a byte
	 * below 0x20 or equal to 0x7f sets its high bit; bytes from 0x80 on
	 * are left out by ~x */
	for (; i + 8 <= n; i += 8) {
		uint64_t x, d;
		memcpy(&x, s + i, 8);
		d = x ^ (0x7f * ones);
		if ((((x - 0x20 * ones) & ~x) | ((d - ones) & ~d)) & highs)
			return true;
	}
	for (; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return true;
	return false;
}

void wap_name_quote(struct wap_sb *sb, const char *s, size_t n)
{
	static const char named[] = "abtnvfr";	/* \a to \r: bytes 7 to 13 */

	wap_sb_addc(sb, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			wap_sb_addc(sb, '\\');
			wap_sb_addc(sb, c);
		} else if (c >= 7 && c <= 13) {
			wap_sb_addc(sb, '\\');
			wap_sb_addc(sb, named[c - 7]);
		} else if (c < 0x20 || c == 0x7f) {
			wap_sb_addf(sb, "\\%03o", c);
		} else {
			wap_sb_addc(sb, c);
		}
	}
	wap_sb_addc(sb, '"');
}

const char *wap_name_show(struct wap_sb *sb, const char *s)
{
	size_t n;

	if (!s || !wap_name_quoted(s, n = strlen(s)))
		return s;
	sb->len = 0;
	wap_name_quote(sb, s, n);
	return sb->oom || !sb->buf ? s : sb->buf;
}
