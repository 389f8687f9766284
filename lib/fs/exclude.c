/* fs/exclude.c - the default exclusions and --exclude globs. See exclude.h. */
#include <string.h>

#include "exclude.h"

const char *const wap_default_excludes[] = {
	"**/node_modules/**", "**/.git/**", "**/dist/**", "**/build/**",
	"**/.venv/**", "**/target/**", "**/__pycache__/**", "**/vendor/**", NULL
};

/* the directory name inside "**" "/NAME/" "**" */
bool wap_exclude_default_dir(const char *name, size_t n)
{
	for (int i = 0; wap_default_excludes[i]; i++) {
		const char *g = wap_default_excludes[i];
		if (strlen(g) == n + 6 && !memcmp(g + 3, name, n))
			return true;
	}
	return false;
}

bool wap_exclude_default_path(const char *rel)
{
	const char *p = rel;

	/* any component equal to one of the names: the same as the globs */
	while (*p) {
		const char *e = strchrnul(p, '/');
		if (wap_exclude_default_dir(p, e - p))
			return true;
		p = *e ? e + 1 : e;
	}
	return false;
}

int wap_exclude_globs(struct wap_globset *gs, const json_t *req, const char *key,
		      struct wap_err *err)
{
	json_t *v = json_object_get(req, key), *s;
	size_t i;

	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v))
		return wap_globset_add(gs, json_string_value(v), WAP_GLOB_BASENAME, err);
	if (!json_is_array(v))
		return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be an array of strings", key);
	json_array_foreach(v, i, s)
		if (!json_is_string(s))
			return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be an array of strings", key);
	json_array_foreach(v, i, s)
		if (wap_globset_add(gs, json_string_value(s), WAP_GLOB_BASENAME, err))
			return -1;
	return 0;
}

bool wap_exclude_match(const struct wap_globset *gs, const char *path, size_t n, bool dir)
{
	if (!gs || !gs->n)
		return false;
	return dir ? wap_globset_match_dir(gs, path, n) : wap_globset_match(gs, path, n);
}
