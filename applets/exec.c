/* wap exec: run a command with a timeout, bounded output and no orphans
 *
 * usage: wap exec [OPTIONS] -- PROG [ARG...]
 *        wap exec [OPTIONS] -c 'SHELL LINE'
 *
 * Runs PROG with its arguments (found on PATH), or a shell line with bash
 * (sh where bash is missing), in the workspace root.  The command runs in a
 * session and process group of its own under a reaper: at the timeout it
 * gets SIGTERM, then SIGKILL after a grace period, and whatever it left
 * behind (background jobs, double-forked daemons) is killed too, so when
 * wap exec returns nothing it started is alive.  SIGINT and SIGTERM to wap
 * are handled the same way.  The command runs in a PID namespace of its
 * own (in a user namespace when wap is not root) whose init is the reaper:
 * nothing inside can kill it or name a process outside.  Without one a
 * subreaper does the job, and a command that kills it has its group killed.
 * Stdin is /dev/null unless --stdin is given.
 *
 * Text mode prints the command's output and exits with its status (124 on
 * a timeout, like timeout(1)); --json prints {stdout, stderr, exit_code,
 * signal, duration_ms, timed_out, cancelled, stdout_truncated,
 * stderr_truncated, stdout_bytes, stderr_bytes} and exits 0 whenever the
 * command ran.  Output over --max-output keeps its head and its tail with a
 * line saying how many bytes were left out; the byte counts are the true
 * ones, and --save-output keeps the whole streams in files.
 *
 * The command lists of the config (security.allowedCommands,
 * security.restrictedCommands) and --allow/--deny check every command of a
 * shell line, inside $(...) and backticks, through env/sudo/xargs/bash -c;
 * a program name computed at run time ($X, globs) is refused while a list
 * is active.  That check is a first one only: what holds is the kernel.
 * While a list is active the command always runs in the sandbox, where only
 * the programs of the PATH directories the lists allow can be run or read
 * (however a line spells them: eval, aliases, scripts, copies, ld.so), and
 * nothing in the root or the temp dir can be executed.  An allowed
 * interpreter still runs what it is given.
 *
 * --sandbox uses Landlock: the command may write only inside the root and
 * a private temp dir made for the run ($TMPDIR; removed afterwards), and
 * read only those, the system directories and git's user config; .git
 * (nested ones two levels down too), .wap and a config file beneath the
 * root are mounted read-only in a private mount namespace, the directories
 * on the way to them pinned (they cannot be moved), /dev/pts is a devpts of
 * its own, and nothing else of the file system (a unix socket in /tmp, /run
 * or $HOME, another terminal) is there for it.  It refuses to run (FEATURE_DISABLED) where the kernel lacks
 * Landlock or the namespace.
 * security.readOnly runs every command sandboxed with a read-only root.
 *
 *   -c, --command LINE     run LINE with bash -c (sh -c without bash)
 *   ARGV                   the program and its arguments (after --)
 *   --cwd DIR              run in DIR, a directory inside the root
 *   --env K=V              set a variable (repeatable; in JSON also {"K": "V"})
 *   --clear-env            start from an empty environment (then --env)
 *   --stdin FILE           feed FILE (inside the root; - for wap's stdin); in
 *                          JSON the text itself
 *   --timeout MS           time limit (default and most limits.maxExecutionTime,
 *                          30000; up to limits.maxExecutionTimeCap if set)
 *   --kill-after MS        grace between SIGTERM and SIGKILL (default 5000)
 *   --max-output BYTES     bytes kept per stream, head and tail (default 51200;
 *                          up to limits.maxOutputSizeCap if set)
 *   --save-output DIR      also write the whole streams to files in DIR
 *   --stream               print output as it comes (--json: JSON lines
 *                          {stream, data}, then the result)
 *   --allow CMD            allow only these commands (repeatable)
 *   --deny CMD             refuse these commands (repeatable)
 *   --sandbox              confine the command (Landlock, read-only .git and .wap)
 *   --no-network           deny the network: TCP bind/connect (Landlock), every socket
 *                          but unix ones (seccomp); else a network namespace
 *   --max-memory BYTES     address-space limit (RLIMIT_AS)
 *   --max-procs N          process limit of the user (RLIMIT_NPROC; root is exempt)
 *   --max-file-size BYTES  largest file it may write (RLIMIT_FSIZE)
 *
 * examples:
 *   wap exec -- make -j2 test
 *   wap exec --timeout 5000 -c 'npm test 2>&1 | tail -20'
 *   wap exec --json --sandbox --no-network -- ./configure
 *   wap exec --stream --json -c 'for i in 1 2 3; do echo $i; sleep 1; done'
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "applet.h"
#include "file.h"
#include "applets.h"
#include "cmdpolicy.h"
#include "config.h"
#include "landlock.h"
#include "proc.h"
#include "strbuf.h"

extern char **environ;

#define KILL_AFTER_MS 5000
#define KILL_AFTER_CAP 60000
#define MAX_OUTPUT_CAP (64L << 20)

static const struct wap_opt exec_opts[] = {
	{ "command", 'c', WAP_OPT_STR, 0, NULL },
	{ "cwd", 0, WAP_OPT_STR, 0, NULL },
	{ "env", 0, WAP_OPT_STRS, WAP_OPT_KV, NULL },
	{ "clear-env", 0, WAP_OPT_BOOL, 0, NULL },
	{ "stdin", 0, WAP_OPT_STR, 0, NULL },
	{ "timeout", 0, WAP_OPT_INT, 0, "timeout_ms" },
	{ "kill-after", 0, WAP_OPT_INT, 0, NULL },
	{ "max-output", 0, WAP_OPT_INT, 0, NULL },
	{ "save-output", 0, WAP_OPT_STR, 0, NULL },
	{ "stream", 0, WAP_OPT_BOOL, 0, NULL },
	{ "allow", 0, WAP_OPT_STRS, 0, NULL },
	{ "deny", 0, WAP_OPT_STRS, 0, NULL },
	{ "sandbox", 0, WAP_OPT_BOOL, 0, NULL },
	{ "no-network", 0, WAP_OPT_BOOL, 0, NULL },
	{ "max-memory", 0, WAP_OPT_INT, 0, NULL },
	{ "max-procs", 0, WAP_OPT_INT, 0, NULL },
	{ "max-file-size", 0, WAP_OPT_INT, 0, NULL },
	{ "argv", 0, WAP_OPT_STRS, WAP_OPT_POS | WAP_OPT_REST, NULL },
	{ NULL }
};

/* A JSON string of BUF, invalid UTF-8 replaced by U+FFFD. */
static json_t *lossy_string(const char *buf, size_t len)
{
	struct wap_sb sb = WAP_SB_INIT;
	const unsigned char *s = (const unsigned char *)buf;
	json_t *j = json_stringn(buf, len);
	size_t i = 0;

	if (j)
		return j;
	while (i < len) {
		unsigned c = s[i];
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			   (c & 0xf8) == 0xf0 ? 4 : 0;
		bool ok = n && i + n <= len;
		for (size_t k = 1; ok && k < n; k++)
			ok = (s[i + k] & 0xc0) == 0x80;
		if (ok && n > 1) {
			/* overlongs, surrogates and beyond U+10FFFF are invalid too */
			unsigned cp = n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
			for (size_t k = 1; k < n; k++)
				cp = (cp << 6) | (s[i + k] & 0x3f);
			ok = !((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
			       (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff);
		}
		if (ok) {
			wap_sb_add(&sb, s + i, n);
			i += n;
		} else {
			wap_sb_adds(&sb, "\xef\xbf\xbd");
			i++;
		}
	}
	j = sb.oom ? NULL : json_stringn(sb.buf ? sb.buf : "", sb.len);
	wap_sb_release(&sb);
	return j;
}

/* One variable of build_env: S ("K=V", borrowed or OWNED), its key's
 * length, and its place among all given. */
struct envent {
	const char *s;
	size_t klen, pos;
	bool owned;
};

/* by key, then by place */
static int envent_cmp(const void *a, const void *b)
{
	const struct envent *x = a, *y = b;
	int c = memcmp(x->s, y->s, x->klen < y->klen ? x->klen : y->klen);

	if (c)
		return c;
	if (x->klen != y->klen)
		return x->klen < y->klen ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* env entries: "K=V" strings or {"K": "V"} on top of the base environment:
 * a variable set again keeps its first place and takes its last value.
 * Sorted once by key (not looked up among those before it: 100,000
 * entries would take minutes). */
static int build_env(const json_t *req, bool clear, const char *pwd, char ***out,
		     struct wap_err *err)
{
	json_t *env = json_object_get(req, "env"), *v;
	size_t i, n = 0, cap = (clear ? 0 : wap_strv_len(environ)) + 1 + json_array_size(env) +
			       json_object_size(env);
	struct envent *all = calloc(cap, sizeof(*all));
	const char **at = calloc(cap, sizeof(*at));
	char **e = NULL;
	const char *k;
	int rc = -1;

	if (!all || !at)
		goto oom;
	for (i = 0; !clear && environ[i]; i++, n++)
		all[n] = (struct envent){ environ[i], strcspn(environ[i], "="), n, false };
	if (pwd) {
		char *s = NULL;
		if (asprintf(&s, "PWD=%s", pwd) < 0)
			goto oom;
		all[n] = (struct envent){ s, 3, n, true };
		n++;
	}
	if (json_is_array(env)) {
		json_array_foreach(env, i, v) {
			const char *s = json_string_value(v), *eq = s ? strchr(s, '=') : NULL;
			if (!eq || eq == s) {
				wap_err_set(err, WAP_E_INVALID, "--env needs NAME=VALUE, not '%s'", s ? s : "");
				goto out;
			}
			all[n] = (struct envent){ s, (size_t)(eq - s), n, false };
			n++;
		}
	} else if (json_is_object(env)) {
		json_object_foreach(env, k, v) {
			char *s = NULL;
			if (!*k || strchr(k, '=') || !json_is_string(v)) {
				wap_err_set(err, WAP_E_INVALID, "env: bad variable '%s'", k);
				goto out;
			}
			if (asprintf(&s, "%s=%s", k, json_string_value(v)) < 0)
				goto oom;
			all[n] = (struct envent){ s, strlen(k), n, true };
			n++;
		}
	}
	qsort(all, n, sizeof(*all), envent_cmp);
	/* each key's last value, at its first place */
	for (size_t g = 0, h; g < n; g = h) {
		for (h = g + 1; h < n && all[h].klen == all[g].klen &&
				!memcmp(all[h].s, all[g].s, all[g].klen); h++)
			;
		at[all[g].pos] = all[h - 1].s;
	}
	if (!(e = calloc(n + 1, sizeof(*e))))
		goto oom;
	for (size_t m = i = 0; i < n; i++)
		if (at[i] && !(e[m++] = strdup(at[i])))
			goto oom;
	rc = 0;
	goto out;
oom:
	wap_err_oom(err);
out:
	for (i = 0; all && i < n; i++)
		if (all[i].owned)
			free((char *)all[i].s);
	free(all);
	free(at);
	if (rc)
		wap_strv_free(e);
	else
		*out = e;
	return rc;
}

static int req_strv(const json_t *req, const char *key, char ***out, struct wap_err *err)
{
	json_t *a = json_object_get(req, key), *v;
	size_t i;

	*out = NULL;
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be an array of strings", key);
	/* sized once: an argv may hold 100,000 words */
	if (!(*out = calloc(json_array_size(a) + 1, sizeof(**out))))
		return wap_err_oom(err);
	json_array_foreach(a, i, v) {
		if (!json_is_string(v)) {
			wap_strv_free(*out);
			*out = NULL;
			return wap_err_set(err, WAP_E_INVALID, "argument '%s' must be an array of strings", key);
		}
		if (!((*out)[i] = strdup(json_string_value(v)))) {
			wap_strv_free(*out);
			*out = NULL;
			return wap_err_oom(err);
		}
	}
	return 0;
}

/* Open a new file NAME.SUFFIX in the save directory; its rel path in *REL. */
static int open_save(const struct wap_ws *ws, const char *dir, const char *stem,
		     const char *suffix, char **rel, struct wap_err *err)
{
	char *path = NULL;
	const char *name;
	int dfd, fd;

	if (asprintf(&path, "%s/%s.%s", dir, stem, suffix) < 0)
		return wap_err_oom(err);
	if (wap_ws_check(ws, path, WAP_ACC_WRITE, err) ||
	    (dfd = wap_ws_open_parent(ws, path, true, &name, err)) < 0) {
		free(path);
		return -1;
	}
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		wap_err_errno(err, errno, path);
		free(path);
		close(dfd);
		return -1;
	}
	close(dfd);
	*rel = path;
	return fd;
}

struct run {
	int stdin_fd;			/* CLI: -1, or an fd for --stdin */
	struct wap_proc_result pr;	/* the raw result, for the CLI */
	bool last;			/* CLI: wap ends after the command */
};

static int exec_run(struct wap_call *call, const json_t *req, struct run *run, json_t **res,
		    struct wap_err *err)
{
	const struct wap_ws *ws = call->ws;
	const struct wap_policy *pol = &ws->pol;
	const char *line = NULL, *stdin_data = NULL, *save = NULL;
	char **argv = NULL, **env = NULL, **allow = NULL, **deny = NULL;
	char *cwdrel = NULL, *cwdabs = NULL, *saverel = NULL, *savef[2] = { NULL, NULL };
	long long timeout = ws->lim.max_exec_ms, kill_after = KILL_AFTER_MS;
	long long max_output = ws->lim.max_output_size, mem = 0, procs = 0, fsize = 0;
	bool clear = false, sandbox = false, nonet = false;
	struct wap_sandbox sb = { .ruleset_fd = -1, .list_fd = -1 };
	struct wap_sandbox_opts so = { 0 };
	struct wap_proc_opts po = { .cwdfd = -1, .stdin_fd = -1, .save_fd = { -1, -1 } };
	struct wap_proc_result *pr = &run->pr;
	struct wap_cmdrules cfg = { pol->allowed_cmds, pol->restricted_cmds, true,
				    "allowedCommands", "restrictedCommands" };
	struct wap_cmdrules mine = { NULL, NULL, false, "--allow", "--deny" };
	int cwdfd = -1, rc = -1;
	bool have_sb = false, lists;

	*res = NULL;
	memset(pr, 0, sizeof(*pr));
	if (!pol->allow_exec)
		return wap_err_set(err, WAP_E_DISABLED,
				   "Command execution is disabled by policy (security.allowCommandExecution)");
	if (wap_req_str(req, "command", &line, err) < 0 || req_strv(req, "argv", &argv, err) ||
	    wap_req_str(req, "stdin", &stdin_data, err) < 0 ||
	    wap_req_str(req, "save_output", &save, err) < 0 ||
	    wap_req_int(req, "timeout_ms", &timeout, err) < 0 ||
	    wap_req_int(req, "kill_after", &kill_after, err) < 0 ||
	    wap_req_int(req, "max_output", &max_output, err) < 0 ||
	    wap_req_int(req, "max_memory", &mem, err) < 0 ||
	    wap_req_int(req, "max_procs", &procs, err) < 0 ||
	    wap_req_int(req, "max_file_size", &fsize, err) < 0 ||
	    wap_req_bool(req, "clear_env", &clear, err) < 0 ||
	    wap_req_bool(req, "sandbox", &sandbox, err) < 0 ||
	    wap_req_bool(req, "no_network", &nonet, err) < 0 ||
	    req_strv(req, "allow", &allow, err) || req_strv(req, "deny", &deny, err))
		goto out;
	mine.allow = allow;
	mine.deny = deny;
	lists = (allow && allow[0]) || (deny && deny[0]) ||
		(pol->allowed_cmds && pol->allowed_cmds[0]) ||
		(pol->restricted_cmds && pol->restricted_cmds[0]);
	if (line && argv && argv[0]) {
		wap_err_set(err, WAP_E_INVALID, "give either -c LINE or PROG ARGS, not both");
		goto out;
	}
	if ((!line || !*line) && (!argv || !argv[0] || !argv[0][0])) {
		wap_err_set(err, WAP_E_INVALID,
			    "missing command: give -c 'LINE' or -- PROG ARGS (see 'wap exec --help')");
		goto out;
	}
	if (timeout <= 0 || kill_after < 0 || max_output < 0 || mem < 0 || procs < 0 || fsize < 0) {
		wap_err_set(err, WAP_E_INVALID, "timeout must be positive; limits must not be negative");
		goto out;
	}
	if (timeout > ws->lim.max_exec_ms_cap)
		timeout = ws->lim.max_exec_ms_cap;
	if (kill_after > KILL_AFTER_CAP)
		kill_after = KILL_AFTER_CAP;
	if (max_output > MAX_OUTPUT_CAP)
		max_output = MAX_OUTPUT_CAP;
	if ((unsigned long long)max_output > ws->lim.max_output_cap)
		max_output = (long long)ws->lim.max_output_cap;

	/* the command lists: the config's, then the request's (which can only
	 * narrow what the config allows) */
	if (wap_cmd_check(&cfg, line, argv, err) || wap_cmd_check(&mine, line, argv, err))
		goto out;
	if (line) {
		wap_strv_free(argv);
		argv = NULL;
		if (wap_strv_push(&argv, access("/bin/bash", X_OK) ? "/bin/sh" : "/bin/bash") ||
		    wap_strv_push(&argv, "-c") || wap_strv_push(&argv, line)) {
			wap_err_oom(err);
			goto out;
		}
	}

	if (wap_req_path(call, req, "cwd", NULL, &cwdrel, err))
		goto out;
	if (cwdrel) {
		cwdfd = wap_ws_open(ws, cwdrel, O_RDONLY | O_DIRECTORY, 0, WAP_ACC_READ, err);
		if (cwdfd < 0)
			goto out;
		cwdabs = wap_ws_abs(ws, cwdrel);
	}
	if (build_env(req, clear, cwdabs ? cwdabs : ws->root, &env, err))
		goto out;

	/* a command list holds in the kernel too: it turns the sandbox on */
	so.fs = sandbox || pol->sandbox || pol->read_only || lists;
	so.read_only_root = pol->read_only;
	so.no_network = nonet;
	so.max_memory = mem;
	so.max_procs = procs;
	so.max_file_size = fsize;
	so.cwd = cwdrel;
	so.shell = line ? argv[0] : NULL;
	so.rules[0] = &cfg;
	so.rules[1] = &mine;
	for (size_t i = 0; env[i]; i++)
		if (!strncmp(env[i], "PATH=", 5))
			so.path = env[i] + 5;
	have_sb = true;
	if (wap_sandbox_prepare(&sb, ws, &so, err))
		goto out;
	/* the command's TMPDIR: the sandbox's own dir, not the caller's */
	for (size_t i = 0; sb.tmpenv && env[i]; i++)
		if (!strncmp(env[i], "TMPDIR=", 7))
			env[i][0] = 0;	/* dropped below */
	if (sb.tmpenv) {
		size_t k = 0;
		for (size_t i = 0; env[i]; i++) {
			if (env[i][0])
				env[k++] = env[i];
			else
				free(env[i]);
		}
		env[k] = NULL;
		if (wap_strv_push(&env, sb.tmpenv)) {
			wap_err_oom(err);
			goto out;
		}
	}

	if (save) {
		char stem[96];
		static unsigned seq;
		struct timespec ts;
		struct tm tm;
		if (wap_req_path(call, req, "save_output", NULL, &saverel, err))
			goto out;
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		snprintf(stem, sizeof(stem), "exec-%04d%02d%02d-%02d%02d%02d-%d-%u",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, (int)getpid(), __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
		if ((po.save_fd[0] = open_save(ws, saverel, stem, "stdout", &savef[0], err)) < 0 ||
		    (po.save_fd[1] = open_save(ws, saverel, stem, "stderr", &savef[1], err)) < 0)
			goto out;
	}

	po.argv = argv;
	po.envp = env;
	po.cwdfd = cwdfd >= 0 ? cwdfd : ws->rootfd;
	po.stdin_fd = run->stdin_fd;
	po.stdin_data = stdin_data;
	po.stdin_len = stdin_data ? json_string_length(json_object_get(req, "stdin")) : 0;
	po.timeout_ms = timeout;
	po.kill_after_ms = kill_after;
	po.max_output = max_output;
	po.cancel = call->cancel;
	po.output = call->output;
	po.output_arg = call->arg;
	po.sandbox = sb.ruleset_fd >= 0 || sb.netns || mem || procs || fsize ? &sb : NULL;
	po.last = run->last;
	if (wap_proc_run(&po, pr, err))
		goto out;
	{
		const char *sig = pr->signal ? wap_signal_name(pr->signal) : NULL;
		*res = json_pack("{s:o, s:o, s:i, s:o, s:I, s:b, s:b, s:b, s:b, s:I, s:I}",
			"stdout", lossy_string(pr->out[0].data, pr->out[0].len),
			"stderr", lossy_string(pr->out[1].data, pr->out[1].len),
			"exit_code", pr->exit_code,
			"signal", sig ? json_string(sig) : pr->signal ? json_integer(pr->signal) : json_null(),
			"duration_ms", (json_int_t)pr->duration_ms,
			"timed_out", pr->timed_out,
			"cancelled", pr->cancelled,
			"stdout_truncated", pr->out[0].truncated,
			"stderr_truncated", pr->out[1].truncated,
			"stdout_bytes", (json_int_t)pr->out[0].bytes,
			"stderr_bytes", (json_int_t)pr->out[1].bytes);
		if (!*res) {
			wap_proc_result_release(pr);
			wap_err_oom(err);
			goto out;
		}
		if (pr->timed_out)
			json_object_set_new(*res, "timeout_ms", json_integer(timeout));
		if (savef[0]) {
			json_object_set_new(*res, "stdout_file", json_string(savef[0]));
			json_object_set_new(*res, "stderr_file", json_string(savef[1]));
		}
	}
	rc = 0;
out:
	if (have_sb)
		wap_sandbox_release(&sb);
	for (int i = 0; i < 2; i++) {
		if (po.save_fd[i] >= 0)
			close(po.save_fd[i]);
		free(savef[i]);
	}
	if (cwdfd >= 0)
		close(cwdfd);
	free(cwdrel);
	free(cwdabs);
	free(saverel);
	wap_strv_free(argv);
	wap_strv_free(env);
	wap_strv_free(allow);
	wap_strv_free(deny);
	return rc;
}

static int exec_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	struct run run = { .stdin_fd = -1 };
	int rc = exec_run(call, req, &run, res, err);

	wap_proc_result_release(&run.pr);
	return rc;
}

static int exit_status(const json_t *res)
{
	if (json_is_true(json_object_get(res, "timed_out")))
		return 124;
	return (int)json_integer_value(json_object_get(res, "exit_code"));
}

static int exec_render(const json_t *res, const json_t *req, FILE *out)
{
	const char *o = json_string_value(json_object_get(res, "stdout"));
	const char *e = json_string_value(json_object_get(res, "stderr"));
	size_t ol = json_string_length(json_object_get(res, "stdout"));
	size_t el = json_string_length(json_object_get(res, "stderr"));
	const char *sig = json_string_value(json_object_get(res, "signal"));
	int code = (int)json_integer_value(json_object_get(res, "exit_code"));

	(void)req;
	if (!out)
		return exit_status(res);
	if (ol) {
		fwrite(o, 1, ol, out);
		if (o[ol - 1] != '\n')
			fputc('\n', out);
	}
	if (el) {
		fputs("[stderr]\n", out);
		fwrite(e, 1, el, out);
		if (e[el - 1] != '\n')
			fputc('\n', out);
	}
	if (json_is_true(json_object_get(res, "timed_out")))
		fprintf(out, "[timed out after %lld ms]\n",
			(long long)json_integer_value(json_object_get(res, "timeout_ms")));
	else if (json_is_true(json_object_get(res, "cancelled")))
		fputs("[cancelled]\n", out);
	if (sig)
		fprintf(out, "[killed by %s]\n", sig);
	else if (code)
		fprintf(out, "[exit code %d]\n", code);
	return exit_status(res);
}

/* ---- the command line: signals passed on, --stdin FILE, --stream ---- */

static struct wap_cancel got_signal = WAP_CANCEL_INIT;

static void on_signal(int sig)
{
	wap_cancel_set(&got_signal, sig);
}

static void print_json_line(json_t *j)
{
	json_dumpf(j, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	fflush(stdout);
}

static void stream_text(void *arg, const char *stream, const char *data, size_t len)
{
	FILE *f = strcmp(stream, "stdout") ? stderr : stdout;

	(void)arg;
	fwrite(data, 1, len, f);
	fflush(f);
}

static void stream_json(void *arg, const char *stream, const char *data, size_t len)
{
	json_t *j = json_pack("{s:s, s:o}", "stream", stream, "data", lossy_string(data, len));

	(void)arg;
	if (j)
		print_json_line(j);
	json_decref(j);
}

static int fail(struct wap_err *err, bool json)
{
	int st = wap_err_exit(err->kind);

	if (json) {
		json_t *o = wap_err_json(err);
		print_json_line(o);
		json_decref(o);
	} else {
		fprintf(stderr, "wap exec: %s\n", err->msg);
	}
	wap_err_release(err);
	return st;
}

static int exec_cli(struct wap_ws *ws, json_t *req, bool json, struct wap_cancel *cancel)
{
	(void)cancel;	/* (its own: SIGINT, SIGTERM and SIGHUP passed on) */
	struct wap_call call = { .ws = ws, .cancel = &got_signal };
	struct wap_err err = { 0 };
	struct run run = { .stdin_fd = -1, .last = true };
	struct sigaction sa = { .sa_handler = on_signal };
	const char *in = NULL;
	json_t *res = NULL;
	bool stream = false;
	int status;

	if (wap_req_str(req, "stdin", &in, &err) < 0 || wap_req_bool(req, "stream", &stream, &err) < 0)
		return fail(&err, json);
	if (in) {
		if (!strcmp(in, "-")) {
			run.stdin_fd = 0;
		} else {
			/* a data file: beneath the root, a regular file (a
			 * FIFO would be waited on) */
			run.stdin_fd = wap_open_data(ws, in, NULL, &err);
			if (run.stdin_fd < 0)
				return fail(&err, json);
		}
		json_object_del(req, "stdin");
	}
	if (stream)
		call.output = json ? stream_json : stream_text;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (exec_run(&call, req, &run, &res, &err)) {
		if (run.stdin_fd > 0)
			close(run.stdin_fd);
		return fail(&err, json);
	}
	if (run.stdin_fd > 0)
		close(run.stdin_fd);
	status = exit_status(res);
	if (json) {
		print_json_line(res);
		status = 0;
	} else if (!stream) {
		fwrite(run.pr.out[0].data, 1, run.pr.out[0].len, stdout);
		fflush(stdout);
		fwrite(run.pr.out[1].data, 1, run.pr.out[1].len, stderr);
	}
	if (!json && json_is_true(json_object_get(res, "timed_out")))
		fprintf(stderr, "wap exec: timed out after %lld ms\n",
			(long long)json_integer_value(json_object_get(res, "timeout_ms")));
	if (wap_cancel_is_set(&got_signal) && !json)
		status = 128 + wap_cancel_why(&got_signal);
	wap_proc_result_release(&run.pr);
	json_decref(res);
	if (fflush(stdout) && errno != EPIPE)
		return 125;
	return status;
}

static const char exec_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
	"\"exit_code\":{\"type\":\"integer\"},\"signal\":{\"type\":[\"string\",\"integer\",\"null\"]},"
	"\"duration_ms\":{\"type\":\"integer\"},\"timed_out\":{\"type\":\"boolean\"},"
	"\"timeout_ms\":{\"type\":\"integer\"},\"cancelled\":{\"type\":\"boolean\"},"
	"\"stdout_truncated\":{\"type\":\"boolean\"},\"stderr_truncated\":{\"type\":\"boolean\"},"
	"\"stdout_bytes\":{\"type\":\"integer\"},\"stderr_bytes\":{\"type\":\"integer\"},"
	"\"stdout_file\":{\"type\":\"string\"},\"stderr_file\":{\"type\":\"string\"}},"
	"\"required\":[\"stdout\",\"stderr\",\"exit_code\",\"signal\",\"duration_ms\",\"timed_out\","
	"\"stdout_truncated\",\"stderr_truncated\",\"stdout_bytes\",\"stderr_bytes\"]}";

const struct wap_applet wap_applet_exec = {
	.name = "exec",
	.summary = wap_summary_exec,
	.usage = wap_usage_exec,
	.title = "Run a command",
	.opts = exec_opts,
	.op = exec_op,
	.render = exec_render,
	.flags = WAP_APPLET_DESTRUCTIVE,
	.cli_main = exec_cli,
	.output_schema = exec_schema,
};
