/* fuzz_json.c - libFuzzer target: lib/core/json.c against jansson itself.
 * For any bytes, wap_json_loadb and json_loadb agree (both refuse with
 * the same message, or both give equal values with keys in the same
 * order), and wap_json_dump writes what json_dumps writes, for what was
 * parsed and for the bytes as a string and as a key made without checks
 * (both refuse a string that is not UTF-8; such a key jansson writes as
 * broken JSON, wap refuses it).  Build and run (after `make`):
 *
 *   scripts/fuzz json 60
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static void same_text(const char *a, const char *b)
{
	if (!a != !b || (a && strcmp(a, b))) {
		fprintf(stderr, "jansson: %s\nwap:     %s\n", a ? a : "(fails)", b ? b : "(fails)");
		abort();
	}
}

/* wap_json_dump of V writes what json_dumps writes */
static void same_dump(const json_t *v)
{
	char *a = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	struct wap_sb sb = WAP_SB_INIT;
	char *b;

	wap_sb_adds(&sb, "x");	/* appends after what is there */
	if (wap_json_dump(v, &sb)) {
		if (sb.len != 1)
			abort();	/* a failure leaves SB as it was */
		b = NULL;
	} else {
		b = sb.buf + 1;
	}
	same_text(a, b);
	free(a);
	wap_sb_release(&sb);
}

static void same_load(const char *data, size_t size, size_t flags)
{
	json_error_t ea, eb;
	json_t *a = json_loadb(data, size, flags, &ea);
	json_t *b = wap_json_loadb(data, size, flags, &eb);

	if (!a != !b)
		abort();
	if (!a) {
		same_text(ea.text, eb.text);
		if (ea.line != eb.line || ea.column != eb.column || ea.position != eb.position)
			abort();
	} else {
		char *sa = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY);
		char *sb = json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY);
		if (!json_equal(a, b))
			abort();
		same_text(sa, sb);	/* the same keys in the same order */
		free(sa);
		free(sb);
		same_dump(a);
	}
	json_decref(a);
	json_decref(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	json_t *v, *o;

	same_load(s, size, JSON_DECODE_ANY);
	same_load(s, size, 0);
	v = json_stringn_nocheck(s, size);
	same_dump(v);
	o = json_object();
	if (size && !memchr(s, 0, size) && !json_object_setn_new_nocheck(o, s, size, json_true())) {
		json_t *checked = json_stringn(s, size);
		struct wap_sb sb = WAP_SB_INIT;
		if (checked)
			same_dump(o);
		else if (!wap_json_dump(o, &sb))
			abort();	/* a key that is not UTF-8: jansson writes it
					 * broken ({":true}), wap not at all */
		json_decref(checked);
		wap_sb_release(&sb);
	}
	json_array_append(v = json_pack("[o, s, i]", v, "\x7f", -42), o);
	same_dump(v);
	json_decref(o);
	json_decref(v);
	return 0;
}
