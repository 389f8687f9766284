/* fuzz_archive.c - libFuzzer target for the archive reader (lib/fs/
 * archives.c): the input is a file, opened as `wap read` opens one (from
 * an fd: its members listed, then one found again by name and read, as
 * `wap read ARCHIVE//MEMBER` does) and as `wap grep -z` does (from memory,
 * with a budget shared through a pool: every member read to its end).
 * The budget is small (2 MiB), so a bomb stops soon.  Nothing may crash,
 * hang or leak, and nothing unpacks much past the budget.
 *
 *   scripts/fuzz archive 60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <archive_entry.h>

#include "archives.h"

#define BUDGET (2ull << 20)
/* what libarchive may unpack past the budget before the reader is asked
 * again: a piece of input (next_block) becomes about 4 MiB, a read 64 KiB */
#define SLACK (8ull << 20)

static char scratch[65536];

static void over(const struct wap_ar *a)
{
	if (wap_archive_unpacked(a) > BUDGET + SLACK)
		abort();
}

/* `wap read ARCHIVE`: the list; the first regular member's name in WANT */
static void list(int fd, char *want, size_t cap)
{
	struct wap_err err = { 0 };
	struct wap_ar *a = wap_archive_open_fd(fd, "x", NULL, &err);
	struct archive_entry *e;
	const char *name;
	size_t n;
	int rc;

	if (!a) {
		if (!err.msg[0])
			abort();
		wap_err_release(&err);
		return;
	}
	wap_archive_limit(a, BUDGET);
	while ((rc = wap_archive_next(a, &e, &name, &n, &err)) == 1) {
		if (!*want && n && n < cap && archive_entry_filetype(e) == AE_IFREG) {
			memcpy(want, name, n);
			want[n] = 0;
		}
		archive_entry_size_is_set(e);
		archive_entry_size(e);
		over(a);
	}
	if (rc < 0 && !err.msg[0])
		abort();
	wap_archive_format(a);
	wap_err_release(&err);
	wap_archive_free(a);
}

/* `wap read ARCHIVE//MEMBER`: find it by name, read it */
static void member(int fd, const char *want)
{
	struct wap_err err = { 0 };
	struct wap_ar *a = wap_archive_open_fd(fd, "x", NULL, &err);
	struct archive_entry *e;
	const char *name, *w;
	size_t n, wn = wap_archive_name(want, &w);
	long r;

	if (!a) {
		wap_err_release(&err);
		return;
	}
	wap_archive_limit(a, BUDGET);
	while (wap_archive_next(a, &e, &name, &n, &err) == 1) {
		if (n != wn || memcmp(name, w, n))
			continue;
		while ((r = wap_archive_read(a, scratch, sizeof(scratch), &err)) > 0)
			over(a);
		break;
	}
	wap_err_release(&err);
	wap_archive_free(a);
}

/* `wap grep -z`: from memory, every member to its end, the budget pooled */
static void search(const uint8_t *data, size_t size)
{
	struct wap_err err = { 0 };
	unsigned long long pool = 0;
	struct wap_ar *a = wap_archive_open_mem(data, size, "x", NULL, &err);
	struct archive_entry *e;
	const char *name;
	size_t n;
	long r = 0;
	int rc;

	if (!a) {
		wap_err_release(&err);
		return;
	}
	wap_archive_limit(a, BUDGET);
	wap_archive_share(a, &pool);
	while ((rc = wap_archive_next(a, &e, &name, &n, &err)) == 1) {
		if (!wap_archive_raw(a) && archive_entry_filetype(e) != AE_IFREG)
			continue;
		while ((r = wap_archive_read(a, scratch, sizeof(scratch), &err)) > 0)
			over(a);
		if (r < 0)
			break;
	}
	if ((rc < 0 || r < 0) && !err.msg[0])
		abort();
	wap_err_release(&err);
	wap_archive_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char want[256] = "";
	size_t alen;
	const char *m;
	int fd;

	wap_archive_sniff(data, size);
	fd = memfd_create("fuzz_archive", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	list(fd, want, sizeof(want));
	if (*want) {
		member(fd, want);
		wap_archive_split(want, &alen, &m);
	}
	close(fd);
	search(data, size);
	return 0;
}
