/* core/config.c - the JSON config document and its dotted keys. */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

json_t *wap_config_load(const char *file, bool required, struct wap_err *err)
{
	json_error_t je;
	json_t *cfg;

	cfg = json_load_file(file, JSON_REJECT_DUPLICATES, &je);
	if (!cfg) {
		if (!required && access(file, F_OK) != 0 && errno == ENOENT)
			return json_object();
		wap_err_set(err, WAP_E_INVALID, "config %s: %s (line %d, column %d)",
			    file, je.text, je.line, je.column);
		return NULL;
	}
	if (!json_is_object(cfg)) {
		json_decref(cfg);
		wap_err_set(err, WAP_E_INVALID, "config %s: not a JSON object", file);
		return NULL;
	}
	return cfg;
}

static json_t *get_in(const json_t *obj, const char *dotted)
{
	const char *dot;
	json_t *v;

	if (!json_is_object(obj))
		return NULL;
	v = json_object_get(obj, dotted);
	if (v)
		return v;
	/* try each split point: "a.b.c" as a{"b.c"} and a{b{c}} */
	for (dot = strchr(dotted, '.'); dot; dot = strchr(dot + 1, '.')) {
		v = json_object_getn(obj, dotted, (size_t)(dot - dotted));
		if (v && (v = get_in(v, dot + 1)))
			return v;
	}
	return NULL;
}

json_t *wap_config_get(const json_t *cfg, const char *dotted)
{
	json_t *v = get_in(cfg, dotted);

	if (!v && json_is_object(cfg))
		v = get_in(json_object_get(cfg, "agentControl"), dotted);
	return v;
}

bool wap_config_bool(const json_t *cfg, const char *dotted, bool dflt)
{
	json_t *v = wap_config_get(cfg, dotted);

	return json_is_boolean(v) ? json_is_true(v) : dflt;
}

long long wap_config_int(const json_t *cfg, const char *dotted, long long dflt)
{
	json_t *v = wap_config_get(cfg, dotted);

	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v) && json_real_value(v) >= -9.2e18 && json_real_value(v) <= 9.2e18)
		return (long long)json_real_value(v);
	return dflt;
}

const char *wap_config_str(const json_t *cfg, const char *dotted, const char *dflt)
{
	json_t *v = wap_config_get(cfg, dotted);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

int wap_config_check_bool(const json_t *cfg, const char *dotted, struct wap_err *err)
{
	json_t *v = wap_config_get(cfg, dotted);

	if (!v || json_is_boolean(v))
		return 0;
	return wap_err_set(err, WAP_E_INVALID, "config: %s must be true or false", dotted);
}

int wap_config_check_int(const json_t *cfg, const char *dotted, long long min, long long max,
			 struct wap_err *err)
{
	json_t *v = wap_config_get(cfg, dotted);
	char *shown;
	double d;

	if (!v)
		return 0;
	if (json_is_integer(v) && json_integer_value(v) >= min && json_integer_value(v) <= max)
		return 0;
	/* a real: in range before the cast (past 2^63 it is undefined) */
	d = json_is_real(v) ? json_real_value(v) : 0;
	if (json_is_real(v) && d >= (double)min && d <= (double)max && d > -9.2e18 && d < 9.2e18 &&
	    (double)(long long)d == d)
		return 0;
	shown = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
	wap_err_set(err, WAP_E_INVALID, "config: %s must be a whole number from %lld to %lld (it is %.64s%s)",
		    dotted, min, max, shown ? shown : "?", shown && strlen(shown) > 64 ? "..." : "");
	free(shown);
	return -1;
}

bool wap_env_secret(const char *kv)
{
	return !strncmp(kv, "WAP_TOKEN=", 10) || !strncmp(kv, "WAP_GIT_TOKEN=", 14);
}

size_t wap_strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

int wap_strv_push(char ***v, const char *s)
{
	size_t n = wap_strv_len(*v);
	char **nv = *v;

	/* room for twice as many when full: a list pushed one by one is not
	 * copied at each push (under ASan realloc always copies) */
	if (!nv || malloc_usable_size(nv) < (n + 2) * sizeof(*nv)) {
		nv = realloc(nv, (2 * n + 2) * sizeof(*nv));
		if (!nv)
			return -1;
	}
	*v = nv;
	nv[n] = strdup(s);
	nv[n + 1] = NULL;
	return nv[n] ? 0 : -1;
}

void wap_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

int wap_config_strv(const json_t *cfg, const char *dotted, char ***out, struct wap_err *err)
{
	json_t *v = wap_config_get(cfg, dotted), *s;
	size_t i;

	*out = NULL;
	if (!v)
		return 0;
	if (!json_is_array(v))
		return wap_err_set(err, WAP_E_INVALID, "config: %s must be an array of strings", dotted);
	json_array_foreach(v, i, s) {
		if (!json_is_string(s) || wap_strv_push(out, json_string_value(s))) {
			wap_strv_free(*out);
			*out = NULL;
			return wap_err_set(err, WAP_E_INVALID,
					   "config: %s must be an array of strings", dotted);
		}
	}
	return 0;
}
