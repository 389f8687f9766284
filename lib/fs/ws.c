/* fs/ws.c - the workspace root, the sandbox, policy and limits. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "path.h"
#include "strbuf.h"
#include "ws.h"


bool wap_ws_no_openat2;

static const struct wap_limits default_limits = {
	.max_file_size = 1 << 20,
	.max_dir_entries = 500,
	.max_search_results = 100,
	.max_output_size = 50 << 10,
	.max_output_cap = 64 << 20,
	.max_exec_ms = 30000,
	.max_exec_ms_cap = 600000,
	.max_line_len = 2000,
};

/* The config's switches and numbers, each of one kind and range: a value
 * of another is refused when the config is loaded, never read as the
 * default ("readOnly": "true" left the workspace writable) nor wrapped
 * round into a size_t (a maxFileSize of -1 lifted the limit); times stay
 * where adding them to a clock cannot overflow. */
#define YEAR_MS 31536000000ll
static const char *const bool_keys[] = {
	"security.readOnly", "security.allowFileSystemAccess", "security.allowTerminalAccess",
	"security.allowCommandExecution", "security.requireApproval", "security.sandbox",
	"rateLimit.enabled", "logging.logToFile", NULL
};
static const struct { const char *key; long long min, max; } int_keys[] = {
	{ "limits.maxFileSize", 0, LLONG_MAX },
	{ "limits.maxDirectoryEntries", 0, LLONG_MAX },
	{ "limits.maxSearchResults", 0, LLONG_MAX },
	{ "limits.maxOutputSize", 0, LLONG_MAX },
	{ "limits.maxOutputSizeCap", 0, LLONG_MAX },
	{ "limits.maxExecutionTime", 1, YEAR_MS },
	{ "limits.maxExecutionTimeCap", 1, YEAR_MS },
	{ "lsp.idleTimeout", 0, YEAR_MS / 1000 },		/* seconds */
	{ "rateLimit.requestsPerSecond", 0, 1000000000 },
	{ NULL, 0, 0 }
};

int wap_ws_apply_config(struct wap_ws *ws, const json_t *cfg, struct wap_err *err)
{
	struct wap_policy *p = &ws->pol;
	struct wap_limits *l = &ws->lim;
	char **v;

	for (int i = 0; bool_keys[i]; i++)
		if (wap_config_check_bool(cfg, bool_keys[i], err))
			return -1;
	for (int i = 0; int_keys[i].key; i++)
		if (wap_config_check_int(cfg, int_keys[i].key, int_keys[i].min, int_keys[i].max, err))
			return -1;
	p->read_only = wap_config_bool(cfg, "security.readOnly", p->read_only);
	p->allow_fs = wap_config_bool(cfg, "security.allowFileSystemAccess", p->allow_fs);
	p->allow_terminal = wap_config_bool(cfg, "security.allowTerminalAccess", p->allow_terminal);
	p->allow_exec = wap_config_bool(cfg, "security.allowCommandExecution", p->allow_exec);
	p->require_approval = wap_config_bool(cfg, "security.requireApproval", p->require_approval);
	p->sandbox = wap_config_bool(cfg, "security.sandbox", p->sandbox);

	if (wap_config_strv(cfg, "security.restrictedPaths", &v, err))
		return -1;
	for (size_t i = 0; v && v[i]; i++) {
		if (wap_globset_add(&p->restricted, v[i], WAP_GLOB_BASENAME, err) ||
		    wap_strv_push(&p->restricted_paths, v[i])) {
			wap_strv_free(v);
			return -1;
		}
	}
	wap_strv_free(v);

#define STRV(field, key) do { \
	if (wap_config_strv(cfg, key, &v, err)) \
		return -1; \
	if (v) { \
		wap_strv_free(p->field); \
		p->field = v; \
	} } while (0)
	STRV(restricted_cmds, "security.restrictedCommands");
	STRV(allowed_cmds, "security.allowedCommands");
	STRV(allowed_categories, "security.allowedMethodCategories");
#undef STRV

	l->max_file_size = wap_config_int(cfg, "limits.maxFileSize", l->max_file_size);
	l->max_dir_entries = wap_config_int(cfg, "limits.maxDirectoryEntries", l->max_dir_entries);
	l->max_search_results = wap_config_int(cfg, "limits.maxSearchResults", l->max_search_results);
	l->max_output_size = wap_config_int(cfg, "limits.maxOutputSize", l->max_output_size);
	/* as for the time below: maxOutputSize is the most a caller gets
	 * unless maxOutputSizeCap says how much more one may ask for */
	if (wap_config_get(cfg, "limits.maxOutputSize") && !wap_config_get(cfg, "limits.maxOutputSizeCap"))
		l->max_output_cap = l->max_output_size;
	l->max_output_cap = wap_config_int(cfg, "limits.maxOutputSizeCap", l->max_output_cap);
	if (l->max_output_cap > 64u << 20)
		l->max_output_cap = 64u << 20;
	if (l->max_output_size > l->max_output_cap)
		l->max_output_size = l->max_output_cap;
	l->max_exec_ms = wap_config_int(cfg, "limits.maxExecutionTime", l->max_exec_ms);
	/* maxExecutionTime is the most a caller gets unless the config says
	 * how much more one may ask for (maxExecutionTimeCap) */
	if (wap_config_get(cfg, "limits.maxExecutionTime") &&
	    !wap_config_get(cfg, "limits.maxExecutionTimeCap"))
		l->max_exec_ms_cap = l->max_exec_ms;
	l->max_exec_ms_cap = wap_config_int(cfg, "limits.maxExecutionTimeCap", l->max_exec_ms_cap);
	if (l->max_exec_ms > l->max_exec_ms_cap)
		l->max_exec_ms = l->max_exec_ms_cap;
	return 0;
}

/* Callers may name files through the root's spelling (/work/link/x when
 * the root was given as /work/link, a symlink): keep that spelling,
 * cleaned, for wap_ws_rel.  Mapping only; confinement never uses it. */
static void set_alias(struct wap_ws *ws, const char *root)
{
	struct wap_sb sb = WAP_SB_INIT;
	char cwd[PATH_MAX];
	const char *p;

	if (root[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd)))
			return;
		wap_sb_adds(&sb, strcmp(cwd, "/") ? cwd : "");
	}
	for (p = root; *p;) {
		const char *e = strchrnul(p, '/');
		size_t n = e - p;
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			wap_sb_release(&sb);	/* ".." through a symlink: not lexical */
			return;
		}
		if (n && !(n == 1 && *p == '.')) {
			wap_sb_addc(&sb, '/');
			wap_sb_add(&sb, p, n);
		}
		p = *e ? e + 1 : e;
	}
	if (sb.oom || !sb.len || !strcmp(sb.buf, ws->root)) {
		wap_sb_release(&sb);
		return;
	}
	ws->root_aliaslen = sb.len;
	ws->root_alias = wap_sb_detach(&sb);
}

/* Remember FILE (the config, an audit log, a transcript) when it lies
 * beneath the root, as it is named and as it resolves, so no door writes,
 * moves or removes it, and a sandboxed command sees it read-only.  -1 on
 * ENOMEM only. */
int wap_ws_protect(struct wap_ws *ws, const char *file)
{
	struct wap_sb abs = WAP_SB_INIT;
	char cwd[PATH_MAX], *real = realpath(file, NULL);
	const char *names[2];
	int rc = 0;

	if (file[0] != '/' && getcwd(cwd, sizeof(cwd)))
		wap_sb_addf(&abs, "%s/%s", cwd, file);
	else
		wap_sb_adds(&abs, file);
	names[0] = abs.buf;
	names[1] = real;
	for (int i = 0; i < 2; i++) {
		struct wap_err e = { 0 };
		char *rel;

		if (!names[i] || names[i][0] != '/')
			continue;
		if (wap_ws_rel(ws, names[i], strlen(names[i]), &rel, &e) == 0) {
			if (strcmp(rel, ".") && wap_strv_push(&ws->policy_rels, rel))
				rc = -1;
			free(rel);
		}
		wap_err_release(&e);
	}
	if (abs.oom)
		rc = -1;
	wap_sb_release(&abs);
	free(real);
	return rc;
}

int wap_ws_init(struct wap_ws *ws, const char *root, const char *config_path,
		struct wap_err *err)
{
	char *real = NULL;
	json_t *cfg = NULL;

	memset(ws, 0, sizeof(*ws));
	ws->rootfd = -1;
	ws->lim = default_limits;
	ws->pol.allow_fs = ws->pol.allow_terminal = ws->pol.allow_exec = true;
	if (getenv("WAP_NO_OPENAT2") && *getenv("WAP_NO_OPENAT2") == '1')
		wap_ws_no_openat2 = true;

	if (!root || !*root)
		root = getenv("WAP_ROOT");
	if (!root || !*root)
		root = ".";
	ws->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ws->rootfd < 0) {
		int e = errno;
		if (e == ENOTDIR)
			return wap_err_set(err, WAP_E_NOT_DIR, "Workspace root is not a directory: %s", root);
		return wap_err_errno(err, e, root);
	}
	/* The root's own name, for display and for mapping absolute paths
	 * given by callers; confinement never depends on it. */
	real = realpath(root, NULL);
	if (!real) {
		wap_err_errno(err, errno, root);
		goto fail;
	}
	ws->root = real;
	ws->rootlen = strlen(real);
	set_alias(ws, root);
	ws->confined = strcmp(real, "/") != 0;

	if (!config_path || !*config_path)
		config_path = getenv("WAP_CONFIG");
	if (config_path && *config_path) {
		cfg = wap_config_load(config_path, true, err);
		if (cfg && wap_ws_protect(ws, config_path) < 0) {
			json_decref(cfg);
			cfg = NULL;
			wap_err_oom(err);
		}
	} else {
		/* the invoker's, never the workspace's: ROOT/.wap/config.json
		 * would be the agent's to rewrite */
		struct wap_sb sb = WAP_SB_INIT;
		const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

		if (xdg && xdg[0] == '/')
			wap_sb_addf(&sb, "%s/wap/config.json", xdg);
		else if (home && home[0] == '/')
			wap_sb_addf(&sb, "%s/.config/wap/config.json", home);
		cfg = sb.buf ? wap_config_load(sb.buf, false, err) : sb.oom ? NULL : json_object();
		if (cfg && sb.buf && wap_ws_protect(ws, sb.buf) < 0) {
			json_decref(cfg);
			cfg = NULL;
			wap_err_oom(err);
		}
		if (!cfg && sb.oom)
			wap_err_oom(err);
		wap_sb_release(&sb);
	}
	if (!cfg)
		goto fail;
	ws->config = cfg;
	if (wap_ws_apply_config(ws, cfg, err))
		goto fail;
	return 0;
fail:
	wap_ws_release(ws);
	return -1;
}

void wap_ws_release(struct wap_ws *ws)
{
	if (ws->rootfd >= 0)
		close(ws->rootfd);
	ws->rootfd = -1;
	free(ws->root);
	ws->root = NULL;
	free(ws->root_alias);
	ws->root_alias = NULL;
	json_decref(ws->config);
	ws->config = NULL;
	free(ws->anchor);
	ws->anchor = NULL;
	wap_strv_free(ws->policy_rels);
	ws->policy_rels = NULL;
	wap_globset_release(&ws->pol.restricted);
	wap_strv_free(ws->pol.restricted_paths);
	wap_strv_free(ws->pol.restricted_cmds);
	wap_strv_free(ws->pol.allowed_cmds);
	wap_strv_free(ws->pol.allowed_categories);
	memset(&ws->pol, 0, sizeof(ws->pol));
}

/* The length of ROOT if PATH is ROOT or below it (whole components), else 0. */
static size_t under(const char *path, size_t len, const char *root, size_t rootlen)
{
	if (len < rootlen || memcmp(path, root, rootlen) ||
	    (len > rootlen && path[rootlen] != '/'))
		return 0;
	return rootlen;
}

int wap_ws_rel(const struct wap_ws *ws, const char *path, size_t len, char **rel,
	       struct wap_err *err)
{
	struct wap_sb sb = WAP_SB_INIT;
	const char *p = path, *end = path + len;
	size_t depth = 0;

	*rel = NULL;
	if (!path || memchr(path, 0, len))
		return wap_err_set(err, WAP_E_INVALID, "Invalid path: contains a NUL byte");
	if (len == 0)
		return wap_err_set(err, WAP_E_INVALID, "Invalid path: empty");
	if (len >= PATH_MAX)
		return wap_err_set(err, WAP_E_INVALID, "Invalid path: longer than %d bytes", PATH_MAX - 1);
	if (*p == '/' && ws->confined) {
		size_t n = under(path, len, ws->root, ws->rootlen);
		if (!n && ws->root_alias)
			n = under(path, len, ws->root_alias, ws->root_aliaslen);
		if (!n)
			return wap_err_set(err, WAP_E_ACCESS,
				"Access denied: %.*s is outside the workspace root %s",
				(int)len, path, ws->root);
		p += n;
	}
	/* lexical clean-up: drop "" and ".", resolve ".." against what came
	 * before; the kernel still resolves symlinks beneath the root */
	while (p < end) {
		const char *e = memchr(p, '/', end - p);
		size_t n;

		if (!e)
			e = end;
		n = e - p;
		if (n == 0 || (n == 1 && *p == '.')) {
			/* skip */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *slash;
			if (depth == 0) {
				wap_sb_release(&sb);
				return wap_err_set(err, WAP_E_ACCESS,
					"Access denied: %.*s is outside the workspace root %s",
					(int)len, path, ws->root);
			}
			depth--;
			slash = sb.buf ? strrchr(sb.buf, '/') : NULL;
			sb.len = slash ? (size_t)(slash - sb.buf) : 0;
			sb.buf[sb.len] = 0;
		} else {
			if (n > NAME_MAX) {
				wap_sb_release(&sb);
				return wap_err_set(err, WAP_E_INVALID,
					"Invalid path: a component is longer than %d bytes", NAME_MAX);
			}
			if (sb.len)
				wap_sb_addc(&sb, '/');
			wap_sb_add(&sb, p, n);
			depth++;
		}
		p = e + (e < end);
	}
	if (!sb.len)
		wap_sb_adds(&sb, ".");
	*rel = wap_sb_detach(&sb);
	if (!*rel)
		return wap_err_oom(err);
	return 0;
}

/* REL as the configured root sees it: ws->anchor + "/" + REL, built in
 * SB, or REL itself.  NULL on ENOMEM. */
static const char *anchored(const struct wap_ws *ws, const char *rel, size_t len,
			    struct wap_sb *sb, size_t *outlen)
{
	*outlen = len;
	if (!ws->anchor)
		return rel;
	if (len == 1 && rel[0] == '.')
		wap_sb_adds(sb, ws->anchor);
	else {
		wap_sb_adds(sb, ws->anchor);
		wap_sb_addc(sb, '/');
		wap_sb_add(sb, rel, len);
	}
	*outlen = sb->len;
	return sb->oom ? NULL : sb->buf;
}

static bool restricted(const struct wap_ws *ws, const char *rel, size_t n)
{
	if (!ws->pol.restricted.n || (n == 1 && rel[0] == '.'))
		return false;
	/* the path itself and each of its parents */
	for (size_t i = 1; i <= n; i++)
		if (i == n || rel[i] == '/')
			if (wap_globset_deny(&ws->pol.restricted, rel, i))
				return true;
	return false;
}

bool wap_ws_restricted(const struct wap_ws *ws, const char *rel, size_t len)
{
	struct wap_sb sb = WAP_SB_INIT;
	const char *full;
	size_t n;
	bool bad;

	if (!ws->pol.restricted.n)
		return false;
	full = anchored(ws, rel, len, &sb, &n);
	bad = !full || wap_globset_deny(&ws->pol.restricted, full, n);
	wap_sb_release(&sb);
	return bad;
}

bool wap_ws_restricted_in(const struct wap_ws *ws, const char *dir, const char *name)
{
	struct wap_sb sb = WAP_SB_INIT;
	bool r;

	if (!ws->pol.restricted.n)
		return false;
	wap_path_add(&sb, dir, name);
	r = sb.oom || wap_ws_restricted(ws, sb.buf, sb.len);
	wap_sb_release(&sb);
	return r;
}

/* The component of REL that no door but `wap git` writes under: ".git"
 * (a repository: hooks, config, alternates; also a ".git" file naming a
 * gitdir) or ".wap".  Case does not matter: on a case-insensitive file
 * system ".GIT" is the repository too. */
static const char *protected_component(const char *rel, size_t len)
{
	const char *p = rel, *end = rel + len;

	while (p < end) {
		const char *e = memchr(p, '/', (size_t)(end - p));
		if (!e)
			e = end;
		if (e - p == 4 && !strncasecmp(p, ".git", 4))
			return ".git";
		if (e - p == 4 && !strncasecmp(p, ".wap", 4))
			return ".wap";
		p = e + 1;
	}
	return NULL;
}

const char *wap_ws_protected(const struct wap_ws *ws, const char *rel)
{
	struct wap_sb sb = WAP_SB_INIT;
	const char *full, *what;
	size_t n;

	full = anchored(ws, rel, strlen(rel), &sb, &n);
	what = full ? protected_component(full, n) : ".git";	/* no memory: say no */
	wap_sb_release(&sb);
	return what;
}

/* Is REL the config file (or a log wap_ws_protect was given), or a
 * directory holding it (whose rename or removal would let another file
 * take its place)? */
static bool holds_config(const struct wap_ws *ws, const char *rel, size_t n)
{
	if (n == 1 && rel[0] == '.')
		return false;
	for (size_t i = 0; ws->policy_rels && ws->policy_rels[i]; i++) {
		const char *c = ws->policy_rels[i];
		size_t cl = strlen(c);
		if (n <= cl && !memcmp(c, rel, n) && (n == cl || c[n] == '/'))
			return true;
	}
	return false;
}

int wap_ws_check(const struct wap_ws *ws, const char *rel, int access,
		 struct wap_err *err)
{
	struct wap_sb sb = WAP_SB_INIT;
	const char *full, *what;
	size_t n;
	int rc = 0;

	if (!ws->pol.allow_fs)
		return wap_err_set(err, WAP_E_DISABLED,
				   "File system access is disabled by policy (security.allowFileSystemAccess)");
	if (access == WAP_ACC_WRITE && ws->pol.read_only)
		return wap_err_set(err, WAP_E_RESTRICTED,
				   "Path restricted: %s (the workspace is read-only)", rel);
	full = anchored(ws, rel, strlen(rel), &sb, &n);
	if (!full)
		return wap_err_oom(err);
	if (access == WAP_ACC_WRITE && (what = protected_component(full, n)))
		rc = wap_err_set(err, WAP_E_RESTRICTED, !strcmp(what, ".git") ?
			"Path restricted: %s is in a .git repository, which only `wap git` writes" :
			"Path restricted: %s is in .wap, which no door writes", rel);
	else if (access == WAP_ACC_WRITE && holds_config(ws, full, n))
		rc = wap_err_set(err, WAP_E_RESTRICTED,
			"Path restricted: %s holds wap's config or its audit log or "
			"transcript, which no door writes", rel);
	else if (restricted(ws, full, n))
		rc = wap_err_set(err, WAP_E_RESTRICTED,
			"Path restricted: %s is denied by restrictedPaths", rel);
	wap_sb_release(&sb);
	return rc;
}

/* Must the path actually opened be judged again?  Reads only when globs
 * may deny; writes always (.git, .wap, the config). */
static bool recheck(const struct wap_ws *ws, int access)
{
	return ws->pol.restricted.n || access == WAP_ACC_WRITE;
}

static int unknown_real(const char *rel, struct wap_err *err)
{
	/* fail closed: a path the policy cannot name is not let through */
	return wap_err_set(err, WAP_E_ACCESS,
		"Access denied: cannot tell where %s really is (not beneath the root, or its path is too long) to check the policy",
		rel);
}

char *wap_ws_fd_rel(const struct wap_ws *ws, int fd)
{
	char proc[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, sizeof(buf) - 1);
	if (n <= 0 || (size_t)n >= sizeof(buf) - 1)
		return NULL;	/* none, or perhaps cut short */
	buf[n] = 0;
	if (!ws->confined)
		return strdup(buf[1] ? buf + 1 : ".");
	if ((size_t)n == ws->rootlen && !memcmp(buf, ws->root, n))
		return strdup(".");
	if ((size_t)n > ws->rootlen && !memcmp(buf, ws->root, ws->rootlen) &&
	    buf[ws->rootlen] == '/')
		return strdup(buf + ws->rootlen + 1);
	return NULL;
}

char *wap_ws_real_at(const struct wap_ws *ws, int dirfd, const char *name)
{
	char *real = wap_ws_fd_rel(ws, dirfd), *r;

	if (!real || !name || !strcmp(name, "."))
		return real;
	r = wap_path_join(real, name);
	free(real);
	return r;
}

int wap_ws_listing_real(const struct wap_ws *ws, int fd, const char *rel, char **real,
			struct wap_err *err)
{
	*real = NULL;
	if (!ws->pol.restricted.n)
		return 0;
	*real = wap_ws_real_at(ws, fd, NULL);
	if (!*real)
		return unknown_real(rel, err);
	if (!strcmp(*real, rel)) {
		free(*real);
		*real = NULL;
	}
	return 0;
}

char *wap_ws_abs(const struct wap_ws *ws, const char *rel)
{
	struct wap_sb sb = WAP_SB_INIT;

	if (!strcmp(rel, ".")) {
		wap_sb_adds(&sb, ws->root);
	} else {
		if (ws->confined)
			wap_sb_adds(&sb, ws->root);
		wap_sb_addc(&sb, '/');
		wap_sb_adds(&sb, rel);
	}
	return wap_sb_detach(&sb);
}

/* The fallback for kernels without openat2: walk REL a component at a time
 * with O_NOFOLLOW, expanding relative symlinks by hand, never above the
 * root, refusing absolute ones (as RESOLVE_BENEATH does). */
static int walk_open(const struct wap_ws *ws, const char *rel, int flags, mode_t mode)
{
	int stack[PATH_MAX / 2];
	int depth = 0, links = 0, fd = -1, cur, saved;
	char *todo = strdup(rel), *p;
	size_t todolen;

	if (!todo) {
		errno = ENOMEM;
		return -1;
	}
	cur = openat(ws->rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		goto out;
	p = todo;
	for (;;) {
		char *e, comp[NAME_MAX + 1];
		bool last;
		struct stat st;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p) {
			/* REL was "." or ended in "/": reopen the current directory */
			fd = openat(cur, ".", flags | O_CLOEXEC, mode);
			break;
		}
		e = strchrnul(p, '/');
		n = e - p;
		if (n > NAME_MAX) {
			errno = ENAMETOOLONG;
			break;
		}
		memcpy(comp, p, n);
		comp[n] = 0;
		p = e;
		while (*p == '/')
			p++;
		last = !*p;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			if (depth == 0 && ws->confined) {
				errno = EXDEV;
				break;
			}
			if (depth == 0) {
				int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (up < 0)
					break;
				close(cur);
				cur = up;
			} else {
				close(cur);
				cur = stack[--depth];
			}
			if (last) {
				fd = openat(cur, ".", flags | O_CLOEXEC, mode);
				break;
			}
			continue;
		}
		if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) &&
		    !(last && (flags & O_NOFOLLOW))) {
			char target[PATH_MAX], *nt;
			ssize_t tl = readlinkat(cur, comp, target, sizeof(target) - 1);

			if (tl < 0)
				break;
			target[tl] = 0;
			if (++links > 40) {
				errno = ELOOP;
				break;
			}
			if (target[0] == '/' && ws->confined) {
				errno = EXDEV;
				break;
			}
			if (target[0] == '/') {
				close(cur);
				cur = openat(AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
				while (depth)
					close(stack[--depth]);
				if (cur < 0)
					break;
			}
			todolen = strlen(p);
			nt = malloc(tl + todolen + 2);
			if (!nt) {
				errno = ENOMEM;
				break;
			}
			snprintf(nt, tl + todolen + 2, "%s/%s", target, p);
			free(todo);
			todo = p = nt;
			continue;
		}
		if (last) {
			fd = openat(cur, comp, flags | O_NOFOLLOW | O_CLOEXEC, mode);
			break;
		}
		if ((size_t)depth >= sizeof(stack) / sizeof(stack[0])) {
			errno = ENAMETOOLONG;
			break;
		}
		fd = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			break;
		stack[depth++] = cur;
		cur = fd;
		fd = -1;
	}
out:
	saved = errno;
	if (cur >= 0)
		close(cur);
	while (depth)
		close(stack[--depth]);
	free(todo);
	errno = saved;
	return fd;
}

static int kernel_open(const struct wap_ws *ws, const char *rel, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (unsigned)(flags | O_CLOEXEC),
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
		.resolve = RESOLVE_NO_MAGICLINKS | (ws->confined ? RESOLVE_BENEATH : 0),
	};
	int fd;

	if (!wap_ws_no_openat2) {
		/* EAGAIN: a rename raced with a ".." lookup; the kernel asks for
		 * a retry rather than risk resolving outside the root */
		int tries = 0;
		do
			fd = syscall(SYS_openat2, ws->rootfd, rel, &how, sizeof(how));
		while (fd < 0 && errno == EAGAIN && ++tries < 64);
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
			return fd;
		/* EPERM: a seccomp filter that refuses openat2; ENOSYS: old kernel */
		if (errno == EPERM) {
			int e = errno;
			fd = walk_open(ws, rel, flags, mode);
			if (fd < 0 && errno == ENOSYS)
				errno = e;
			return fd;
		}
	}
	return walk_open(ws, rel, flags, mode);
}

/* REL is not there: judge where it would be, from the longest prefix of
 * it that is (a symlinked directory on the way leads elsewhere), so that
 * a missing name answers as an existing one does and a restricted name's
 * existence is not told (lnk -> conf: lnk/nope.key answered "not found"
 * where lnk/a.key answered "restricted").  -1 with err when refused. */
static int judge_missing(const struct wap_ws *ws, const char *rel, int access,
			 struct wap_err *err)
{
	size_t n = strlen(rel);
	int rc = 0;

	for (;;) {
		char *pre, *real;
		int fd;

		while (n > 0 && rel[n - 1] != '/')
			n--;
		if (!n)
			break;		/* up to the root: judged as asked already */
		pre = strndup(rel, n - 1);
		fd = pre ? kernel_open(ws, pre, O_PATH | O_DIRECTORY, 0) : -1;
		free(pre);
		if (fd < 0) {
			n--;		/* not there either: a shorter prefix */
			continue;
		}
		real = wap_ws_fd_rel(ws, fd);
		close(fd);
		if (real) {
			struct wap_sb sb = WAP_SB_INIT;
			wap_path_add(&sb, real, rel + n);
			if (sb.buf && strcmp(sb.buf, rel))
				rc = wap_ws_check(ws, sb.buf, access, err);
			wap_sb_release(&sb);
			free(real);
		}
		break;
	}
	return rc;
}

int wap_ws_open(const struct wap_ws *ws, const char *rel, int flags, mode_t mode,
		int access, struct wap_err *err)
{
	int fd;

	if (wap_ws_check(ws, rel, access, err))
		return -1;
	fd = kernel_open(ws, rel, flags, mode);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP && (flags & O_NOFOLLOW))
			return wap_err_set(err, WAP_E_ACCESS,
					   "Access denied: %s is a symbolic link", rel);
		if ((e == ENOENT || e == ENOTDIR) && ws->pol.restricted.n &&
		    judge_missing(ws, rel, access, err))
			return -1;
		return wap_err_errno(err, e, rel);
	}
	if (recheck(ws, access)) {
		char *real = wap_ws_fd_rel(ws, fd);
		if (!real || (strcmp(real, rel) && wap_ws_check(ws, real, access, err))) {
			if (!real)
				unknown_real(rel, err);
			free(real);
			close(fd);
			return -1;
		}
		free(real);
	}
	return fd;
}

/* Is NAME in the directory DIRFD restricted, judged by where DIRFD really is? */
static int in_restricted(const struct wap_ws *ws, int dirfd, const char *name,
			 struct wap_err *err)
{
	char *real = wap_ws_fd_rel(ws, dirfd);
	struct wap_sb sb = WAP_SB_INIT;
	int bad;

	if (!real)
		return unknown_real(name, err);
	if (strcmp(real, "."))
		wap_sb_addf(&sb, "%s/%s", real, name);
	else
		wap_sb_adds(&sb, name);
	bad = sb.buf && wap_ws_check(ws, sb.buf, WAP_ACC_WRITE, err);
	wap_sb_release(&sb);
	free(real);
	return bad;
}

int wap_ws_open_parent(const struct wap_ws *ws, const char *rel, bool mkparents,
		       const char **name, struct wap_err *err)
{
	const char *slash = strrchr(rel, '/');
	char *dir;
	int fd;

	*name = slash ? slash + 1 : rel;
	if (!strcmp(rel, ".") || !**name || !strcmp(*name, ".") || !strcmp(*name, ".."))
		return wap_err_set(err, WAP_E_INVALID, "Invalid path: %s names the workspace root", rel);
	/* policy first: nothing is created for a path that will be refused */
	if (wap_ws_check(ws, rel, WAP_ACC_WRITE, err))
		return -1;
	if (!slash)
		return wap_ws_open(ws, ".", O_RDONLY | O_DIRECTORY, 0, WAP_ACC_WRITE, err);
	dir = strndup(rel, slash - rel);
	if (!dir)
		return wap_err_oom(err);
	fd = kernel_open(ws, dir, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0 && errno == ENOENT && mkparents) {
		/* create each missing component relative to its parent's fd */
		char *p = dir;
		int pfd = kernel_open(ws, ".", O_RDONLY | O_DIRECTORY, 0);

		while (pfd >= 0) {
			char *e = strchrnul(p, '/'), save = *e;
			int nfd;

			*e = 0;
			if (in_restricted(ws, pfd, p, err)) {
				/* a symlinked parent leads into a restricted tree */
				close(pfd);
				free(dir);
				return -1;
			}
			if (mkdirat(pfd, p, 0777) && errno != EEXIST) {
				int er = errno;
				close(pfd);
				pfd = -1;
				errno = er;
				*e = save;
				break;
			}
			nfd = kernel_open(ws, dir, O_RDONLY | O_DIRECTORY, 0);
			*e = save;
			close(pfd);
			pfd = nfd;
			if (!save || nfd < 0)
				break;
			p = e + 1;
		}
		fd = pfd;
	}
	if (fd < 0) {
		int e = errno;
		if (e == ENOTDIR || e == EEXIST)
			wap_err_set(err, WAP_E_NOT_DIR, "Not a directory: a file is in the way of %s", dir);
		else
			wap_err_errno(err, e, dir);
		free(dir);
		return -1;
	}
	free(dir);
	{
		/* where the parent really is: a symlinked directory on the way
		 * may lead into .git or a restricted tree */
		char *real = wap_ws_fd_rel(ws, fd);
		int bad;
		if (real) {
			struct wap_sb sb = WAP_SB_INIT;
			wap_sb_addf(&sb, "%s/%s", real, *name);
			bad = !sb.buf ? wap_err_oom(err)
				      : wap_ws_check(ws, strcmp(real, ".") ? sb.buf : *name,
						     WAP_ACC_WRITE, err);
			wap_sb_release(&sb);
			free(real);
		} else {
			bad = unknown_real(rel, err);
		}
		if (bad) {
			close(fd);
			return -1;
		}
	}
	return fd;
}
