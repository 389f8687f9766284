/* icudata-stub.c - an empty ICU data library for the wap image.
 *
 * Debian's libarchive needs libxml2 (for xar archives), and libxml2 needs
 * ICU's libicuuc, which needs libicudata: 31 MB of converter, locale and
 * collation tables.  libxml2 turns to ICU only to convert a document in an
 * encoding that neither it nor iconv knows; libarchive hands it xar tables
 * of contents, which are UTF-8, and wap uses no other part of ICU.  So the
 * image carries this instead: the data entry point ICU looks up, with a
 * table of contents of no entries (ICU's own source/stubdata does the
 * same).  Should anything ever ask ICU for data, it gets
 * U_FILE_ACCESS_ERROR, an error, not a crash.  scripts/image builds it
 * with -DICU_ENTRY=icudtNN_dat and the soname of the library it replaces.
 */
#include <stdint.h>

#ifndef ICU_ENTRY
#error "build with -DICU_ENTRY=icudtNN_dat"
#endif

struct icu_data_header {
	uint16_t header_size;
	uint8_t magic1, magic2;
	struct {
		uint16_t size, reserved;
		uint8_t big_endian, charset_family, sizeof_uchar, reserved_byte;
		uint8_t format[4], format_version[4], data_version[4];
	} info;
	char padding[8];
	uint32_t count, reserved;
	uint32_t toc[4];
};

__attribute__((visibility("default")))
const struct icu_data_header ICU_ENTRY = {
	.header_size = 32,
	.magic1 = 0xda,
	.magic2 = 0x27,
	.info = {
		.size = 20,
		.big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
		.charset_family = 0,	/* ASCII */
		.sizeof_uchar = 2,
		.format = { 'T', 'o', 'C', 'P' },
		.format_version = { 1, 0, 0, 0 },
	},
	.count = 0,
};
