/* core/config.h - reading the JSON config document.
 *
 * Keys are those of the Agent Control Protocol reference ("security.
 * restrictedPaths", "rateLimit.requestsPerSecond", ...), written either
 * dotted at the top level or nested, optionally under "agentControl".
 * wap adds "security.readOnly", "security.sandbox" and "limits.*".
 */
#ifndef WAP_CONFIG_H
#define WAP_CONFIG_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"

/* Load FILE into a new JSON object (caller owns).  A missing file with
 * !REQUIRED gives an empty object. */
json_t *wap_config_load(const char *file, bool required, struct wap_err *err);

/* Borrowed reference to the value at DOTTED ("security.sandbox"), or NULL. */
json_t *wap_config_get(const json_t *cfg, const char *dotted);

bool wap_config_bool(const json_t *cfg, const char *dotted, bool dflt);
long long wap_config_int(const json_t *cfg, const char *dotted, long long dflt);
const char *wap_config_str(const json_t *cfg, const char *dotted, const char *dflt);

/* Is the value at DOTTED, when there is one, true or false (check_bool),
 * or a whole number from MIN to MAX (check_int: an integer, or a real with
 * no fraction, 4e3)?  0, or -1 with ERR (INVALID) naming the key and the
 * value: a value of the wrong kind is refused, not read as the default. */
int wap_config_check_bool(const json_t *cfg, const char *dotted, struct wap_err *err);
int wap_config_check_int(const json_t *cfg, const char *dotted, long long min, long long max,
			 struct wap_err *err);

/* A NULL-terminated copy of a string array (caller frees with
 * wap_strv_free); NULL when absent.  Non-strings are an error. */
int wap_config_strv(const json_t *cfg, const char *dotted, char ***out, struct wap_err *err);
void wap_strv_free(char **v);
size_t wap_strv_len(char *const *v);
int wap_strv_push(char ***v, const char *s);	/* copies s; -1 on ENOMEM */

/* Is the "NAME=value" entry KV one of wap's own credentials (the serving
 * doors' bearer token, $WAP_TOKEN; the git token, $WAP_GIT_TOKEN)?  No
 * process wap starts is given them: a command is the agent's. */
bool wap_env_secret(const char *kv);

#endif
