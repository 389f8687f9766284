/* fuzz_patch.c - libFuzzer target for the patch parser, hunk application,
 * the string-replace engine, and (input starting with '[') edits, line
 * operations and LSP text edits.  Build and run, seeded with the corpus
 * (after `make`, which generates build/norm/applets.c):
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -std=gnu11 \
 *     -Ilib -Ibuild/norm tests/fuzz/fuzz_patch.c lib/[a-z]?*.c applets/[a-z]?*.c \
 *     build/norm/applets.c $(pkg-config --cflags --libs libgit2 libpcre2-8 \
 *     libarchive jansson libwebsockets) -lutil -o fuzz_patch
 *   mkdir -p seeds; for d in tests/patches/[0-9]?*; do cp $d/patch seeds/${d##?*-}; done
 *   ./fuzz_patch -max_total_time=60 seeds
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "edit.h"
#include "patch.h"

static const char text[] =
	"def f():\n    return 1\n\nctx\na\nb\r\nx \xe2\x80\x9cq\xe2\x80\x9d\n\tlast";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wap_patch p;
	struct wap_err err = { 0 };
	char *out = NULL;
	size_t ol, cnt, half = size / 2;
	enum wap_strategy st;

	if (wap_patch_parse((const char *)data, size, "x", &p, &err) == 0) {
		for (size_t i = 0; i < p.n; i++) {
			struct wap_err e2 = { 0 };
			if (p.f[i].kind != WAP_P_ADD &&
			    wap_patch_apply_file(&p.f[i], text, sizeof(text) - 1, &out, &ol, &e2) == 0)
				free(out);
			wap_err_release(&e2);
		}
		wap_patch_release(&p);
	}
	wap_err_release(&err);
	if (half && wap_edit_replace(text, sizeof(text) - 1, (const char *)data, half,
				     (const char *)data + half, size - half, size & 1, false, 0,
				     &out, &ol, &cnt, &st, &err) == 0)
		free(out);
	wap_err_release(&err);
	/* JSON input: as edits, line operations and LSP text edits */
	if (size && data[0] == '[') {
		json_t *list = json_loadb((const char *)data, size, 0, NULL);
		if (list) {
			for (int m = WAP_EDIT_MULTI; m <= WAP_EDIT_POSITIONS; m++) {
				struct wap_edit_spec sp = { 0 };
				struct wap_edit_info info;
				sp.mode = m;
				sp.list = list;
				if (wap_edit_apply(&sp, text, sizeof(text) - 1, &out, &ol, &info, &err) == 0)
					free(out);
				wap_edit_info_release(&info);
				wap_err_release(&err);
			}
			json_decref(list);
		}
	}
	return 0;
}
