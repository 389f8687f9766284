/* fuzz_ignore.c - libFuzzer target for the ignore-file parser and git's
 * wildmatch (lib/fs/ignore.c): the input is a .gitignore an agent wrote
 * (any bytes, NULs too), and each of its lines is also a path matched
 * against it, as a file and as a directory, at the top and under a
 * directory; each line is matched as a pattern against the next.  Nothing
 * may crash, read out of bounds, hang or leak.
 *
 *   scripts/fuzz ignore 60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ignore.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wap_ign_list *lists[2];
	struct wap_ign *top, *sub;
	char *buf = malloc(size + 1), *p, *prev = NULL;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	lists[0] = wap_ign_parse((const char *)data, size);
	top = wap_ign_push(NULL, "", lists, 1);
	lists[0] = wap_ign_parse((const char *)data, size / 2);
	lists[1] = wap_ign_parse((const char *)data + size / 2, size - size / 2);
	sub = wap_ign_push(top, "a/b", lists, 2);
	/* each line as a path; the byte after it is '\n' or the end's NUL */
	for (p = buf; p < buf + size;) {
		char *e = memchr(p, '\n', buf + size - p);
		size_t n = e ? (size_t)(e - p) : strlen(p);
		/* a path is a file's: a NUL ends it */
		wap_ign_ignored(top, p, strnlen(p, n), false);
		wap_ign_ignored(sub, p, strnlen(p, n), true);
		if (e) {
			*e = 0;
			if (prev)
				wap_wildmatch(prev, p);
			prev = p;
		}
		p += n + 1;
	}
	wap_ign_unref(sub);
	wap_ign_unref(top);
	free(buf);
	return 0;
}
