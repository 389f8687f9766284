/* serve/policy.c - the table of operations and the check every door makes.
 * See policy.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "policy.h"
#include "strbuf.h"

#define W	WAP_OP_WRITES
#define R	WAP_OP_RUNS
#define D	WAP_OP_DESTRUCTIVE
#define T	WAP_OP_TIMED

/* Every operation of every door, once: the applets' ops (every door's
 * calls map onto them, lib/serve/run.h) and the calls that are no op
 * (terminals, watchers).  Reads have no flags. */
static const struct wap_opdesc ops[] = {
	/* the applets: CLI, and MCP tools of every profile */
	{ "cp", "fs", W },
	{ "edit", "fs", W | D | T },
	{ "exec", "exec", R },
	{ "git", "git", 0 },		/* by action: git.ACTION below */
	{ "glob", "fs", T },
	{ "grep", "search", T },	/* with write: W */
	{ "info", "state", 0 },
	{ "ls", "fs", T },
	{ "mkdir", "fs", W },
	{ "mv", "fs", W | D },
	{ "read", "fs", T },
	{ "rm", "fs", W | D },
	{ "stat", "fs", T },
	{ "sym", "state", 0 },		/* by action: sym.ACTION below */
	{ "write", "fs", W | D | T },
	/* git actions (the applet's) */
	{ "git.status", "git", 0 },
	{ "git.diff", "git", 0 },
	{ "git.log", "git", 0 },
	{ "git.show", "git", 0 },
	{ "git.branch", "git", 0 },	/* with create or delete: W */
	{ "git.add", "git", W },
	{ "git.stage", "git", W },
	{ "git.unstage", "git", W },
	{ "git.reset", "git", W },
	{ "git.commit", "git", W },
	{ "git.checkout", "git", W | D | WAP_OP_TREEWIDE },
	{ "git.push", "git", W | WAP_OP_GITDIR },
	{ "git.fetch", "git", W | WAP_OP_GITDIR },
	{ "git.pull", "git", W | D | WAP_OP_TREEWIDE | WAP_OP_NETFIRST },
	{ "git.init", "git", W },
	{ "git.clone", "git", W },
	/* sym actions (the applet's; language servers) */
	{ "sym.overview", "state", 0 },
	{ "sym.find", "state", 0 },
	{ "sym.refs", "state", 0 },
	{ "sym.def", "state", 0 },
	{ "sym.hover", "state", 0 },
	{ "sym.diag", "state", 0 },
	{ "sym.complete", "state", 0 },
	{ "sym.actions", "state", 0 },
	{ "sym.servers", "state", 0 },
	{ "sym.rename", "fs", W | D },
	{ "sym.replace-body", "fs", W | D },
	{ "sym.insert-before", "fs", W },
	{ "sym.insert-after", "fs", W },
	{ "sym.format", "fs", W | D },
	/* the Agent Control Protocol's (WebSocket) calls that are no op:
	 * sessions and the server's state.  Its other methods (fs.*,
	 * editor.*, search.*, git.*) are mappings onto the ops above and are
	 * judged as those ops (lib/serve/run.h). */
	{ "editor.saveAll", "editor", 0 },
	{ "editor.closeFile", "editor", 0 },	/* the headless editor's state */
	{ "editor.getOpenFiles", "editor", 0 },
	{ "editor.getActiveFile", "editor", 0 },
	{ "editor.getSelection", "editor", 0 },
	{ "editor.setSelection", "editor", 0 },
	{ "editor.revealLine", "editor", 0 },
	{ "state.getOpenDocuments", "state", 0 },
	{ "state.getVisibleEditors", "state", 0 },
	{ "command.list", "command", 0 },
	{ "fs.watchFiles", "fs", 0 },
	{ "fs.unwatchFiles", "fs", 0 },
	{ "state.getWorkspace", "state", 0 },
	{ "state.getDiagnostics", "state", 0 },	/* without a path (else sym.diag) */
	{ "terminal.create", "terminal", R },
	{ "terminal.sendText", "terminal", R },
	{ "terminal.dispose", "terminal", 0 },
	{ "terminal.show", "terminal", 0 },
	{ "terminal.list", "terminal", 0 },
	{ "terminal.getActive", "terminal", 0 },
	{ "terminal.getOutput", "terminal", 0 },
	/* the Agent Client Protocol's terminals (acp profile; its fs/
	 * methods are the read and write ops) */
	{ "terminal/create", "terminal", R },
	{ "terminal/output", "terminal", 0 },
	{ "terminal/wait_for_exit", "terminal", 0 },
	{ "terminal/kill", "terminal", 0 },
	{ "terminal/release", "terminal", 0 },
	/* the Agent Client Protocol's client (wap acp run): a permission
	 * request of the agent, answered by --approve; it changes nothing
	 * itself, it is here to be audited */
	{ "session/request_permission", "session", 0 },
	{ NULL, NULL, 0 }
};

#undef W
#undef R
#undef D

const struct wap_opdesc *wap_op_find(const char *name)
{
	for (const struct wap_opdesc *o = ops; name && o->name; o++)
		if (o->name[0] == name[0] && !strcmp(o->name, name))
			return o;
	return NULL;
}

static bool req_true(const json_t *req, const char *key)
{
	return json_is_true(json_object_get(req, key));
}

unsigned wap_op_flags(const char *name, const json_t *req)
{
	const struct wap_opdesc *o = wap_op_find(name);

	if (!o)
		return WAP_OP_MUTATING;
	if (!strcmp(name, "grep"))
		return (req_true(req, "write") ? WAP_OP_WRITES | WAP_OP_DESTRUCTIVE : 0) | T;
	if (!strcmp(name, "edit") && req_true(req, "dry_run"))
		return T;
	if (!strcmp(name, "git") || !strcmp(name, "sym")) {
		const char *action = json_string_value(json_object_get(req, "action"));
		char buf[64];

		if (!action || strlen(action) > 40)
			return WAP_OP_MUTATING;
		snprintf(buf, sizeof(buf), "%s.%s", name, action);
		if (!strcmp(name, "sym"))
			return req_true(req, "dry_run") ? 0 : wap_op_flags(buf, req);
		if (!strcmp(action, "branch"))
			return req_true(req, "create") || req_true(req, "delete") ? WAP_OP_WRITES : 0;
		return wap_op_flags(buf, req);
	}
	return o->flags;
}

const char *wap_op_category(const char *name, const json_t *req)
{
	const struct wap_opdesc *o = wap_op_find(name);
	const char *action = json_string_value(json_object_get(req, "action"));

	if (!o)
		return NULL;
	if (!strcmp(name, "grep") && req_true(req, "write"))
		return "fs";
	if ((!strcmp(name, "git") || !strcmp(name, "sym")) && action && strlen(action) <= 40) {
		char buf[64];
		const struct wap_opdesc *a;
		snprintf(buf, sizeof(buf), "%s.%s", name, action);
		if ((a = wap_op_find(buf)))
			return a->category;
	}
	return o->category;
}

/* What the op is about, for the approver's $2: the first of the usual
 * keys that holds a string. */
static const char *subject(const char *name, const json_t *req)
{
	static const char *const keys[] = {
		"path", "oldPath", "source", "filePath", "query", "pattern", "name",
		"terminalId", "branch", "command", "action", NULL
	};

	for (int i = 0; keys[i]; i++) {
		const char *s = json_string_value(json_object_get(req, keys[i]));
		if (s)
			return s;
	}
	return name;
}

/* S as a terminal shows it harmlessly, a new string: control characters
 * in caret notation as cat -v shows them (a newline ^J, ESC ^[, DEL ^?,
 * C1 controls M-^X), the characters that reorder or break a line
 * (U+2028, U+2029, U+202A-U+202E, U+2066-U+2069) as <U+XXXX>; a tab
 * stays.  A path cannot so add a line to the approver's prompt, move its
 * cursor or turn its text round.  Cut after 4 KiB with "...": the whole
 * is on the approver's stdin. */
static char *printable(const char *s)
{
	struct wap_sb sb = WAP_SB_INIT;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (sb.len >= 4096) {	/* (an argument is at most 128 KiB) */
			wap_sb_adds(&sb, "...");
			break;
		}
		if (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)
			wap_sb_addf(&sb, "M-^%c", *++p - 0x80 + '@');
		else if (*p == 0xe2 && ((p[1] == 0x80 && p[2] >= 0xa8 && p[2] <= 0xae) ||
					(p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9))) {
			wap_sb_addf(&sb, "<U+%04X>", 0x2000 | ((p[1] & 0x0f) << 6) | (p[2] & 0x3f));
			p += 2;
		} else if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			wap_sb_addf(&sb, "^%c", *p == 0x7f ? '?' : *p + '@');
		else
			wap_sb_addc(&sb, (char)*p);
	}
	if (sb.oom) {
		wap_sb_release(&sb);
		return NULL;
	}
	return sb.buf ? wap_sb_detach(&sb) : strdup("");
}

/* The approver's arguments after its $1: the subject ($2, as before), then
 * every other target of the op the request names, so that an approver
 * judging by path sees each one: mv's and cp's destination, grep's paths
 * (with write and none, the whole root: "."), the command's words, what
 * is typed into a terminal.  Each printable(); -1 on ENOMEM. */
static int targets(const char *name, const json_t *req, char ***argv)
{
	static const char *const more[] = {
		"path", "oldPath", "source", "filePath", "destination", "newPath", "paths", "cwd",
		"dir", "url", "file", "argv", "args", "command", "text", NULL
	};
	const char *subj = subject(name, req);
	bool any_path = false;
	int rc = 0;

	for (int i = -1; !rc && (i < 0 || more[i]); i++) {
		json_t *v = i < 0 ? NULL : json_object_get(req, more[i]), *el;
		const char *one = i < 0 ? subj : json_string_value(v);
		size_t k;

		if (i >= 0 && !strcmp(more[i], "paths"))
			any_path = any_path || json_array_size(v);
		/* text is what is typed into a terminal; elsewhere (sym's
		 * replace-body) a file's, left to stdin as content is */
		if (i >= 0 && !strcmp(more[i], "text") && !(wap_op_flags(name, req) & WAP_OP_RUNS))
			continue;
		if (i >= 0 && json_is_array(v)) {
			json_array_foreach(v, k, el) {
				char *p = json_is_string(el) ? printable(json_string_value(el)) : NULL;
				if (json_is_string(el) && (!p || wap_strv_push(argv, p)))
					rc = -1;
				free(p);
			}
			continue;
		}
		/* the subject once: skip the key it came from */
		if (!one || (i >= 0 && one == subj))
			continue;
		char *p = printable(one);
		if (!p || wap_strv_push(argv, p))
			rc = -1;
		free(p);
	}
	if (!rc && !strcmp(name, "grep") && !any_path && wap_strv_push(argv, "."))
		rc = -1;
	return rc;
}

/* Write what of S the pipe FD takes now (*OFF advanced), without a
 * SIGPIPE for the process: lib/ does not touch signal dispositions, so
 * the signal is blocked in this thread and one the write raised is taken
 * back.  -1 when the reader is gone. */
static int write_nosig(int fd, const char *s, size_t n, size_t *off)
{
	sigset_t pipeset, old, pend;
	struct timespec zero = { 0, 0 };
	bool was_pending;
	int rc = 0;

	sigemptyset(&pipeset);
	sigaddset(&pipeset, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipeset, &old);
	sigpending(&pend);
	was_pending = sigismember(&pend, SIGPIPE);
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = w < 0 && errno == EAGAIN ? 0 : -1;
			break;
		}
		s += w;
		n -= (size_t)w;
		*off += (size_t)w;
	}
	if (!was_pending)
		sigtimedwait(&pipeset, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Run the approver: sh -c COMMAND wap-approve METHOD TARGETS... with
 * {"method","params"} on its stdin, in a process group of its own, so
 * that what it starts ends with it: once it has answered, and when the
 * wait gives up (its time, the call's cancel), the whole group is killed
 * (a subshell or a dialog it started outlived it, and could answer a call
 * long gone).  Its stdin is written while it runs, whole: an approver
 * reading a request cut at the pipe's size judged one without its end. */
static int approve(const struct wap_approver *ap, const char *method, const char *what,
		   const json_t *params, const struct wap_cancel *cancel, struct wap_err *err)
{
	char *js = json_dumps(params ? params : json_null(), JSON_COMPACT | JSON_ENCODE_ANY);
	struct wap_sb in_msg = WAP_SB_INIT;
	char envm[256], **envp = NULL, **argv = NULL, *shown = printable(what);
	long limit = ap->timeout_ms > 0 ? ap->timeout_ms : 60000;
	double until = now_ms() + limit;
	size_t off = 0;
	int in[2] = { -1, -1 }, st = 0, r = ENOMEM;
	bool done = false, have_js = js != NULL;
	pid_t pid = -1;
	extern char **environ;

	snprintf(envm, sizeof(envm), "WAP_APPROVAL_METHOD=%s", method);
	for (size_t i = 0; environ[i]; i++)
		if (strncmp(environ[i], "WAP_APPROVAL_", 13) && !wap_env_secret(environ[i]))
			wap_strv_push(&envp, environ[i]);
	wap_strv_push(&envp, envm);
	/* the approver reads {"method","params"} on stdin, or not at all */
	wap_sb_addf(&in_msg, "{\"method\":\"%s\",\"params\":%s}\n", method, js ? js : "null");
	free(js);
	if (!wap_strv_push(&argv, "sh") && !wap_strv_push(&argv, "-c") &&
	    !wap_strv_push(&argv, ap->command) && !wap_strv_push(&argv, "wap-approve") &&
	    !wap_strv_push(&argv, method) && !targets(method, params, &argv) && !in_msg.oom && have_js &&
	    !(r = pipe2(in, O_CLOEXEC) ? errno : 0)) {
		/* stdin the pipe, stdout /dev/null, SIGPIPE back to its default,
		 * a process group of its own */
		posix_spawn_file_actions_t fa;
		posix_spawnattr_t at;
		sigset_t def;

		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, in[0], 0);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawnattr_init(&at);
		sigemptyset(&def);
		sigaddset(&def, SIGPIPE);
		posix_spawnattr_setsigdefault(&at, &def);
		posix_spawnattr_setpgroup(&at, 0);
		posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
		r = posix_spawn(&pid, "/bin/sh", &fa, &at, argv, envp);
		posix_spawn_file_actions_destroy(&fa);
		posix_spawnattr_destroy(&at);
		if (r)
			pid = -1;
		close(in[0]);
		fcntl(in[1], F_SETFL, O_NONBLOCK);
	}
	wap_strv_free(envp);
	wap_strv_free(argv);
	if (pid < 0) {
		if (in[1] >= 0)
			close(in[1]);
		wap_sb_release(&in_msg);
		free(shown);
		return wap_err_set(err, WAP_E_FAILED, "Operation cancelled: cannot run the approver: %s", strerror(r));
	}
	/* it is waited for without being reaped (WNOWAIT), so that its pid,
	 * its group's id, is not another's when the group is killed */
	for (;;) {
		siginfo_t si = { 0 };
		struct pollfd p = { in[1], POLLOUT, 0 };

		done = !waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid == pid;
		if (done || now_ms() >= until || wap_cancel_is_set(cancel))
			break;
		if (in[1] < 0 || poll(&p, 1, 20) <= 0) {
			if (in[1] < 0)
				poll(NULL, 0, 20);
			continue;
		}
		if (write_nosig(in[1], in_msg.buf + off, in_msg.len - off, &off) || off == in_msg.len) {
			close(in[1]);	/* all of it, or it reads no more */
			in[1] = -1;
		}
	}
	if (in[1] >= 0)
		close(in[1]);
	wap_sb_release(&in_msg);
	kill(-pid, SIGKILL);	/* its group: what it left, or all of it */
	waitpid(pid, &st, 0);
	if (!done) {
		free(shown);
		if (wap_cancel_is_set(cancel))
			return wap_cancel_err(err);
		return wap_err_set(err, WAP_E_FAILED, "Operation cancelled: no approval for %s within %ld ms",
				   method, limit);
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		free(shown);
		return 0;
	}
	r = wap_err_set(err, WAP_E_FAILED, "Operation cancelled: the approver refused %s %s", method,
			shown ? shown : what);
	free(shown);
	return r;
}

/* Is CAT in security.allowedMethodCategories (or is there no list)? */
static bool category_allowed(const struct wap_ws *ws, const char *cat)
{
	char *const *allowed = ws->pol.allowed_categories;

	if (!allowed || !allowed[0])
		return true;
	for (size_t i = 0; cat && allowed[i]; i++)
		if (!strcmp(allowed[i], cat))
			return true;
	return false;
}

int wap_policy_feature(const struct wap_ws *ws, const char *cat, const char *name, struct wap_err *err)
{
	/* the config's list holds on every door, not on the Agent Control
	 * Protocol's alone (with ["fs"] MCP ran commands and git); an op
	 * with no category (none in the table) is refused */
	if ((!cat || strcmp(cat, "session")) && !category_allowed(ws, cat))
		return wap_err_set(err, WAP_E_DISABLED,
				   "Method category '%s' is disabled (not in security.allowedMethodCategories)",
				   cat ? cat : name);
	if (cat && !ws->pol.allow_fs && (!strcmp(cat, "fs") || !strcmp(cat, "editor") || !strcmp(cat, "search")))
		return wap_err_set(err, WAP_E_DISABLED,
				   "File system access is disabled by policy (security.allowFileSystemAccess)");
	if (cat && !ws->pol.allow_terminal && !strcmp(cat, "terminal"))
		return wap_err_set(err, WAP_E_DISABLED, "Terminal access is disabled (security.allowTerminalAccess)");
	return 0;
}

int wap_policy_allow(const struct wap_ws *ws, const char *name, const json_t *req,
		     const char *category, const struct wap_approver *ap,
		     const struct wap_cancel *cancel, struct wap_err *err)
{
	unsigned f = wap_op_flags(name, req);
	const char *cat = category ? category : wap_op_category(name, req);

	if (wap_policy_feature(ws, cat, name, err))
		return -1;

	if ((f & WAP_OP_WRITES) && ws->pol.read_only)
		return wap_err_set(err, WAP_E_RESTRICTED,
				   "Path restricted: %s (the workspace is read-only)", subject(name, req));
	if (!(f & WAP_OP_MUTATING) || !ws->pol.require_approval)
		return 0;
	if (!ap || !ap->command) {
		wap_err_set(err, WAP_E_FAILED,
			    "Operation cancelled: %s needs approval (security.requireApproval) and no approver is set (wap serve --approver)",
			    name);
		return WAP_POLICY_UNAPPROVED;
	}
	if (approve(ap, name, subject(name, req), req, cancel, err) < 0)
		return WAP_POLICY_UNAPPROVED;
	return 0;
}
