/* fuzz_glob.c - libFuzzer target for the glob compiler and matcher: the
 * first line of the input is a glob, the rest paths to match; nothing may
 * crash, hang or leak, and a glob that is a plain name matches itself.
 *
 *   scripts/fuzz glob 60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *nl, *p;
	struct wap_err err = { 0 };
	struct wap_glob *g;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	for (unsigned flags = 0; flags < 4; flags++) {
		g = wap_glob_new(buf, flags, &err);
		wap_err_release(&err);
		if (!g)
			continue;
		for (p = nl ? nl + 1 : NULL; p && *p;) {
			char *e = strchrnul(p, '\n');
			wap_glob_match(g, p, e - p);
			wap_glob_match_dir(g, p, e - p);
			p = *e ? e + 1 : e;
		}
		/* a name with no special characters matches itself */
		if (*buf && !strpbrk(buf, "*?[]{}\\,/!^.") && !wap_glob_match(g, buf, strlen(buf)))
			abort();
		wap_glob_free(g);
	}
	free(buf);
	return 0;
}
