/* text.c - binary detection, UTF-8 validation, line index, MIME guess. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
