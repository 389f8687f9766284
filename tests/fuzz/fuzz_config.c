/* fuzz_config.c - libFuzzer target for the workspace config: the input is
 * written as the config file and loaded as `--config FILE` loads it
 * (wap_ws_init: the JSON, restrictedPaths' globs, restrictedCommands and
 * the other lists, limits, security.*), then what reads the document after
 * it: each profile's limits, the policy checks on a few paths and command
 * lines, the method categories, the language servers' rows, the served
 * origins and the Agent Control keys.  Nothing may crash, hang or leak; a
 * config that loads gives limits that hold together.
 *
 *   scripts/fuzz config 60
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdpolicy.h"
#include "config.h"
#include "lsp.h"
#include "policy.h"
#include "profiles.h"
#include "ws.h"

static char root[64], file[96];
static const char *const switches[] = { "security.readOnly", "security.sandbox",
					"security.allowFileSystemAccess", "security.requireApproval",
					"rateLimit.enabled", NULL };

static void setup(void)
{
	if (root[0])
		return;
	snprintf(root, sizeof(root), "/tmp/fuzz_config.XXXXXX");
	if (!mkdtemp(root))
		abort();
	snprintf(file, sizeof(file), "%s/config.json", root);
}

static void clean(void)
{
	unlink(file);
	rmdir(root);
}

static void policy(const struct wap_ws *ws)
{
	static const char *const paths[] = { "a", "src/x.c", ".env", "dir/sub/.git/config",
					     "config.json", "node_modules/p/index.js", NULL };
	static const char *const lines[] = { "ls -l", "git push origin main", "rm -rf / ; echo",
					     "bash -c 'curl x | sh'", "env FOO=1 python3 -c 1", NULL };
	static const char *const cats[] = { "fs", "terminal", "search", "git", "session", NULL };
	struct wap_cmdrules r = { ws->pol.allowed_cmds, ws->pol.restricted_cmds, true,
				  "allowedCommands", "restrictedCommands" };
	struct wap_err err = { 0 };

	for (int i = 0; paths[i]; i++) {
		wap_ws_check(ws, paths[i], WAP_ACC_READ, &err);
		wap_err_release(&err);
		wap_ws_check(ws, paths[i], WAP_ACC_WRITE, &err);
		wap_err_release(&err);
		wap_ws_restricted(ws, paths[i], strlen(paths[i]));
	}
	for (int i = 0; lines[i]; i++) {
		wap_cmd_check(&r, lines[i], NULL, &err);
		wap_err_release(&err);
	}
	wap_cmd_prog(&r, "rm");
	wap_cmd_prog(&r, "git");
	for (int i = 0; cats[i]; i++) {
		wap_policy_feature(ws, cats[i], "op", &err);
		wap_err_release(&err);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wap_err err = { 0 };
	struct wap_ws ws;
	const char *id;
	char **origins;
	FILE *f;

	setup();
	/* a new file each time: rewriting one in place has ext4 flush it at
	 * each close (auto_da_alloc), 1 ms an input */
	unlink(file);
	f = fopen(file, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	if (wap_ws_init(&ws, root, file, &err)) {
		/* refused with a reason, and nothing held */
		if (!err.msg[0])
			abort();
		wap_err_release(&err);
		return 0;
	}
	for (int i = 0; wap_profiles[i]; i++) {
		struct wap_limits saved = ws.lim;
		wap_profile_limits(wap_profiles[i], &ws);
		policy(&ws);
		ws.lim = saved;
	}
	/* what loads holds together: no size wrapped round from a negative
	 * number, times a clock can take, switches that are switches */
	if (ws.lim.max_output_size > ws.lim.max_output_cap || ws.lim.max_exec_ms > ws.lim.max_exec_ms_cap ||
	    ws.lim.max_file_size > LLONG_MAX || ws.lim.max_dir_entries > LLONG_MAX ||
	    ws.lim.max_search_results > LLONG_MAX || ws.lim.max_exec_ms < 1 ||
	    ws.lim.max_exec_ms_cap > 31536000000ll)
		abort();
	for (int i = 0; switches[i]; i++) {
		json_t *v = wap_config_get(ws.config, switches[i]);
		if (v && !json_is_boolean(v))
			abort();
	}
	wap_lsp_language(&ws, "a.c", &id);
	wap_lsp_language(&ws, "x.weird", &id);
	json_decref(wap_lsp_servers(&ws));
	if (wap_config_strv(ws.config, "allowedOrigins", &origins, &err) == 0)
		wap_strv_free(origins);
	wap_err_release(&err);
	wap_config_int(ws.config, "lsp.idleTimeout", 600);
	wap_config_int(ws.config, "rateLimit.requestsPerSecond", 100);
	wap_config_bool(ws.config, "rateLimit.enabled", true);
	wap_config_str(ws.config, "logging.level", "info");
	wap_config_str(ws.config, "token", "");
	wap_ws_release(&ws);
	return 0;
}

__attribute__((destructor)) static void done(void)
{
	if (root[0])
		clean();
}
