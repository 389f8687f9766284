/* core/path.c - DIR/NAME for root-relative paths. See path.h. */
#include <string.h>

#include "path.h"

void wap_path_addn(struct wap_sb *sb, const char *dir, const char *name, size_t n)
{
	bool top = !dir || !*dir || !strcmp(dir, ".");

	if (top && !n) {
		wap_sb_addc(sb, '.');
		return;
	}
	if (!top) {
		wap_sb_adds(sb, dir);
		if (n)
			wap_sb_addc(sb, '/');
	}
	wap_sb_add(sb, name, n);
}

void wap_path_add(struct wap_sb *sb, const char *dir, const char *name)
{
	wap_path_addn(sb, dir, name, strlen(name));
}

int wap_path_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned x = *a == '/' ? 1 : (unsigned char)*a;
		unsigned y = *b == '/' ? 1 : (unsigned char)*b;
		if (x != y || !x)
			return (int)x - (int)y;
	}
}

char *wap_path_join(const char *dir, const char *name)
{
	struct wap_sb sb = WAP_SB_INIT;

	wap_path_add(&sb, dir, name);
	return wap_sb_detach(&sb);	/* NULL when out of memory */
}

bool wap_path_beneath(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1)
		return p[0] == '/' && p[1];
	return !strncmp(p, dir, n) && p[n] == '/';
}

bool wap_path_within(const char *p, const char *dir)
{
	return !strcmp(p, dir) || wap_path_beneath(p, dir);
}
