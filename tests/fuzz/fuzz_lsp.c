/* fuzz_lsp.c - libFuzzer target for the framing of what a language server
 * writes (wap_lsp_frame, lib/serve/lsp.c): the input is its stdout, cut
 * into frames as on_output cuts it, each body parsed as JSON.  Nothing may
 * crash, read out of bounds or leak; a frame lies inside the input, and
 * its length is the one its Content-Length line writes in digits.
 *
 *   scripts/fuzz lsp 60
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "lsp.h"

/* does the header (HL bytes) say Content-Length: CLEN, in its last
 * Content-Length line, between blanks (leading zeros aside)? */
static int says(const char *h, size_t hl, size_t clen)
{
	const char *v = NULL, *ve = NULL;
	char want[32];

	for (const char *l = h; l < h + hl;) {
		const char *e = memmem(l, h + hl - l, "\r\n", 2);
		if (!e)
			break;
		if (e - l > 15 && !strncasecmp(l, "Content-Length:", 15))
			v = l + 15, ve = e;
		l = e + 2;
	}
	if (!v)
		return 0;
	while (v < ve && (*v == ' ' || *v == '\t'))
		v++;
	while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
		ve--;
	while (ve - v > 1 && *v == '0')
		v++;
	snprintf(want, sizeof(want), "%zu", clen);
	return (size_t)(ve - v) == strlen(want) && !memcmp(v, want, ve - v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	size_t at = 0, hl, clen;

	/* in one piece, and (the same bytes) as far as each prefix goes */
	while (at < size) {
		int r = wap_lsp_frame(buf + at, size - at, &hl, &clen);
		json_t *m;
		if (r <= 0)
			break;
		if (hl > size - at || clen > size - at - hl || !says(buf + at, hl, clen))
			abort();
		if (wap_json_values(buf + at + hl, clen) < 1000) {
			m = json_loadb(buf + at + hl, clen, 0, NULL);
			json_decref(m);
		}
		at += hl + clen;
	}
	for (size_t n = 0; n < size && n < 64; n++)
		if (wap_lsp_frame(buf, n, &hl, &clen) > 0 && hl + clen > n)
			abort();
	return 0;
}
