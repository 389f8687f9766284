/* fs/archives.c - the one archive reader: sniffing, opening, member names.
 * See archives.h. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "lazy.h"
#include "archives.h"

#define CHUNK 65536

bool wap_archive_sniff(const void *buf, size_t n)
{
	static const struct { const char *m; size_t n; } magic[] = {
		{ "\x1f\x8b", 2 }, { "BZh", 3 }, { "\xfd" "7zXZ\0", 6 }, { "\x28\xb5\x2f\xfd", 4 },
		{ "PK\x03\x04", 4 }, { "PK\x05\x06", 4 }, { "7z\xbc\xaf\x27\x1c", 6 },
		{ "\x04\x22\x4d\x18", 4 }, { "\x5d\x00\x00", 3 },
	};
	const char *b = buf;

	for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if (n >= magic[i].n && !memcmp(b, magic[i].m, magic[i].n))
			return true;
	return n >= 262 && !memcmp(b + 257, "ustar", 5);
}

static struct archive *ar_new(struct wap_err *err)
{
	struct archive *a;

	if (wap_lazy_load(WAP_LIB_ARCHIVE, err))
		return NULL;
	a = archive_read_new();
	if (!a) {
		wap_err_oom(err);
		return NULL;
	}
	archive_read_support_filter_all(a);
	/* not format_all: mtree would take a compressed text file's lines
	 * for member names; raw is the fallback for a compressed plain file */
	archive_read_support_format_7zip(a);
	archive_read_support_format_ar(a);
	archive_read_support_format_cab(a);
	archive_read_support_format_cpio(a);
	archive_read_support_format_iso9660(a);
	archive_read_support_format_lha(a);
	archive_read_support_format_rar(a);
	archive_read_support_format_rar5(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_xar(a);
	archive_read_support_format_zip(a);
	archive_read_support_format_raw(a);
	return a;
}

int wap_archive_err(struct archive *a, const char *rel, struct wap_err *err)
{
	return wap_err_set(err, WAP_E_FAILED, "Cannot read archive %s: %s", rel,
			   a && archive_error_string(a) ? archive_error_string(a) : "damaged");
}

struct archive *wap_archive_open_fd(int fd, const char *rel, struct wap_err *err)
{
	struct archive *a = ar_new(err);

	if (!a)
		return NULL;
	if (lseek(fd, 0, SEEK_SET) < 0 || archive_read_open_fd(a, fd, CHUNK) != ARCHIVE_OK) {
		wap_err_set(err, WAP_E_FAILED, "Cannot read archive %s: %s", rel,
			    archive_error_string(a) ? archive_error_string(a) : strerror(errno));
		archive_read_free(a);
		return NULL;
	}
	return a;
}

struct archive *wap_archive_open_mem(const void *buf, size_t n, const char *rel,
				     struct wap_err *err)
{
	struct archive *a = ar_new(err);

	if (!a)
		return NULL;
	if (archive_read_open_memory(a, buf, n) != ARCHIVE_OK) {
		wap_archive_err(a, rel, err);
		archive_read_free(a);
		return NULL;
	}
	return a;
}

void wap_archive_free(struct archive *a)
{
	if (a)
		archive_read_free(a);
}

size_t wap_archive_name(const char *s, const char **out)
{
	size_t n;

	while (s[0] == '.' && s[1] == '/')
		s += 2;
	while (*s == '/')
		s++;
	n = strlen(s);
	while (n && s[n - 1] == '/')
		n--;
	*out = s;
	return n;
}

int wap_archive_next(struct archive *a, const char *rel, struct archive_entry **e,
		     const char **name, size_t *nlen, struct wap_err *err)
{
	int rc;

	/* a warning (an unknown extended header, say) is not the end */
	while ((rc = archive_read_next_header(a, e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
		const char *p = archive_entry_pathname(*e);
		if (!p)
			continue;
		*nlen = wap_archive_name(p, name);
		return 1;
	}
	if (rc == ARCHIVE_EOF)
		return 0;
	return wap_archive_err(a, rel, err);
}

bool wap_archive_raw(struct archive *a)
{
	return archive_format(a) == ARCHIVE_FORMAT_RAW;
}

bool wap_archive_split(const char *path, size_t *alen, const char **member)
{
	const char *s = path[0] ? strstr(path + 1, "//") : NULL;

	if (!s || !s[2])
		return false;
	*alen = s - path;
	*member = s + 2;
	return true;
}
