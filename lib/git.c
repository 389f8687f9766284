/* git.c - git operations through libgit2, confined to the workspace.
 *
 * Layout: the per-call context and its helpers (errors, repository
 * discovery beneath the root, path mapping, credentials), then one
 * function per action, then wap_git() which dispatches.  Every libgit2
 * object is freed before return: `wap serve` is long-lived.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lazy.h"
#include "file.h"
#include "git.h"
#include "landlock.h"
#include "strbuf.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void do_init(void)
{
	git_libgit2_init();
}

int wap_git_init(struct wap_err *err)
{
	if (wap_lazy_load(WAP_LIB_GIT2, err))
		return -1;
	pthread_once(&init_once, do_init);
	return 0;
}

/* ---- the call context ---- */

struct g {
	struct wap_call *call;
	const struct wap_ws *ws;
	const json_t *req;
	struct wap_err *err;
	git_repository *repo;
	char *wd_rel;		/* work tree, relative to the root; NULL if bare */
	const char **args;	/* the "args" strings (borrowed from req) */
	size_t nargs;
	char *token;		/* wiped and freed at the end */
	int cred_tries;
	bool auth_failed, cancelled;
	json_t *updates;	/* ref updates of fetch/push */
	char *rejected;		/* a push rejection: "ref: status" */
	int last_pct;
};

static const char *str_key(const struct g *g, const char *key)
{
	json_t *v = json_object_get(g->req, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool bool_key(const struct g *g, const char *key)
{
	return json_is_true(json_object_get(g->req, key));
}

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* A libgit2 failure as a wap error: "WHAT: libgit2's message". */
static int lg(struct g *g, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int lg(struct g *g, int code, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	enum wap_errkind kind = WAP_E_FAILED;
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	switch (code) {
	case GIT_ENOTFOUND: kind = WAP_E_NOT_FOUND; break;
	case GIT_EEXISTS: kind = WAP_E_EXISTS; break;
	case GIT_EINVALIDSPEC: case GIT_EAMBIGUOUS: case GIT_EBAREREPO:
	case GIT_EUNBORNBRANCH: case GIT_EINVALID: kind = WAP_E_INVALID; break;
	case GIT_ECONFLICT: case GIT_ENONFASTFORWARD: case GIT_EUNMERGED:
	case GIT_EMODIFIED: case GIT_ELOCKED: case GIT_EMERGECONFLICT:
	case GIT_EINDEXDIRTY: kind = WAP_E_CONFLICT; break;
	case GIT_EOWNER: kind = WAP_E_PERMISSION; break;
	}
	if (g->cancelled)
		return wap_err_set(g->err, WAP_E_FAILED, "%s: cancelled", what);
	return wap_err_set(g->err, kind, "%s: %s", what,
			   e && e->message ? e->message : "unknown error");
}

static int oom(struct g *g)
{
	return wap_err_set(g->err, WAP_E_FAILED, "out of memory");
}

/* Forget an error that was expected (a missing optional file). */
static void clear_err(struct g *g)
{
	wap_err_release(g->err);
	g->err->kind = WAP_OK;
	g->err->msg[0] = 0;
}

/* Remove user:password@ from URLs in S (in place). */
static void redact_urls(char *s)
{
	char *p = s;

	while ((p = strstr(p, "://"))) {
		char *h = p + 3, *end = h + strcspn(h, "/ \t\n'\""), *at;

		at = memchr(h, '@', end - h);
		if (at) {
			memmove(h + 3, at, strlen(at) + 1);
			memcpy(h, "***", 3);
		}
		p = h;
	}
}

/* Replace every occurrence of the token in S (in place, shrinking). */
static void scrub(char *s, const char *tok)
{
	size_t tl = tok ? strlen(tok) : 0;
	char *p;

	if (tl < 1)
		return;
	while ((p = strstr(s, tok))) {
		memmove(p + 3, p + tl, strlen(p + tl) + 1);
		memcpy(p, "***", 3);
	}
}

static char *url_display(const char *url)
{
	char *s = xstrdup(url ? url : "");

	if (s)
		redact_urls(s);
	return s;
}

/* ---- confinement ---- */

/* ABS (a path libgit2 reported, or that we will hand it) names a directory
 * beneath the root: *REL gets where it really is, relative to the root,
 * found by opening it beneath the root fd and asking the kernel.  The
 * restrictedPaths policy is not applied here: this is how the git applet
 * itself reaches .git, which policies usually deny to the file tools. */
static int confirm_dir(struct g *g, const char *abs, char **rel)
{
	struct wap_ws nopol = *g->ws;
	size_t n = strlen(abs);
	char *lex;
	int fd;

	*rel = NULL;
	while (n > 1 && abs[n - 1] == '/')
		n--;
	if (wap_ws_rel(g->ws, abs, n, &lex, g->err))
		return -1;
	memset(&nopol.pol.restricted, 0, sizeof(nopol.pol.restricted));
	fd = wap_ws_open(&nopol, lex, O_PATH | O_DIRECTORY, 0, WAP_ACC_READ, g->err);
	free(lex);
	if (fd < 0)
		return -1;
	*rel = wap_ws_fd_rel(g->ws, fd);
	close(fd);
	if (!*rel)
		return wap_err_set(g->err, WAP_E_ACCESS,
				   "Access denied: %.*s is outside the workspace root", (int)n, abs);
	return 0;
}

/* Read the small file REL (root-relative; beneath the root, policy not
 * applied: this is .git's own plumbing) into BUF, NUL-terminated, without
 * the trailing white space: 1 when read, 0 when there is no such file,
 * 2 when it is a directory, -1 with the error (a FIFO or a device is
 * refused, never waited on). */
static int read_small(struct g *g, const char *rel, char *buf, size_t size)
{
	struct wap_ws nopol = *g->ws;
	struct wap_err e2 = { 0 };
	struct stat st;
	ssize_t n;
	int fd;

	memset(&nopol.pol.restricted, 0, sizeof(nopol.pol.restricted));
	fd = wap_ws_open(&nopol, rel, O_RDONLY | O_NONBLOCK, 0, WAP_ACC_READ, &e2);
	if (fd < 0) {
		if (e2.kind == WAP_E_NOT_FOUND || e2.kind == WAP_E_NOT_DIR) {
			wap_err_release(&e2);
			return 0;
		}
		*g->err = e2;
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		if (S_ISDIR(st.st_mode))
			return 2;
		return wap_err_set(g->err, WAP_E_NOT_FILE, "Not a regular file: %s", rel);
	}
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return wap_err_errno(g->err, errno, rel);
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = 0;
	return 1;
}

/* TARGET, read from the file WHAT in directory BASE (root-relative, a real
 * path), names a directory: absolute, or relative to BASE.  *OUT gets where
 * it really is, root-relative; one outside the root is refused. */
static int link_dir(struct g *g, const char *base, const char *what, const char *target,
		    char **out)
{
	struct wap_sb sb = WAP_SB_INIT;
	int rc;

	if (target[0] == '/' || !strcmp(base, "."))
		wap_sb_adds(&sb, target);
	else
		wap_sb_addf(&sb, "%s/%s", base, target);
	if (sb.oom)
		return oom(g);
	rc = confirm_dir(g, sb.buf, out);
	if (rc && g->err->kind == WAP_E_ACCESS)
		wap_err_set(g->err, WAP_E_ACCESS,
			    "Access denied: %s%s%s names %s, which is outside the workspace root; "
			    "wap git does not follow it", strcmp(base, ".") ? base : "",
			    strcmp(base, ".") ? "/" : "", what, target);
	wap_sb_release(&sb);
	return rc;
}

/* Every symbolic link directly in directory DIR (root-relative, a real
 * path) must lead to something beneath the root: objects/ab or
 * objects/pack/pack-X.pack linked to another repository's would have log
 * and show read it. */
static int links_stay_inside(struct g *g, const char *dir)
{
	struct wap_ws nopol = *g->ws;
	struct dirent *de;
	int fd, rc = 0;
	DIR *d;

	memset(&nopol.pol.restricted, 0, sizeof(nopol.pol.restricted));
	fd = wap_ws_open(&nopol, dir, O_RDONLY | O_DIRECTORY, 0, WAP_ACC_READ, g->err);
	if (fd < 0)
		return -1;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return wap_err_errno(g->err, errno, dir);
	}
	while (!rc && (de = readdir(d))) {
		struct stat st;
		struct wap_sb sb = WAP_SB_INIT;
		int t;

		if (de->d_type != DT_LNK && (de->d_type != DT_UNKNOWN ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISLNK(st.st_mode)))
			continue;
		wap_sb_addf(&sb, "%s/%s", dir, de->d_name);
		if (sb.oom) {
			rc = oom(g);
			break;
		}
		t = wap_ws_open(&nopol, sb.buf, O_PATH, 0, WAP_ACC_READ, g->err);
		if (t >= 0) {
			close(t);
		} else if (g->err->kind == WAP_E_ACCESS) {
			wap_err_set(g->err, WAP_E_ACCESS, "Access denied: %s is a symbolic link out of the "
				    "workspace root; wap git does not follow it", sb.buf);
			rc = -1;
		} else {
			clear_err(g);	/* a dangling link: libgit2 finds nothing there */
		}
		wap_sb_release(&sb);
	}
	closedir(d);
	return rc;
}

/* The object store OBJ (root-relative) and every alternate it names, to
 * the depth libgit2 follows, must be beneath the root: otherwise log and
 * show would read another repository's objects. */
static int check_objects(struct g *g, const char *obj, int depth)
{
	char *real = NULL, *buf = NULL, tiny[2];
	struct wap_sb sb = WAP_SB_INIT;
	int rc = -1, r;

	if (depth > 5)
		return 0;
	/* a missing store is libgit2's to report (or not a repository) */
	if (confirm_dir(g, obj, &real)) {
		if (g->err->kind != WAP_E_NOT_FOUND && g->err->kind != WAP_E_NOT_DIR)
			return -1;
		clear_err(g);
		return 0;
	}
	if (links_stay_inside(g, real))
		goto out;
	wap_sb_addf(&sb, "%s/pack", real);
	if (sb.oom) {
		oom(g);
		goto out;
	}
	r = read_small(g, sb.buf, tiny, sizeof(tiny));
	if (r < 0 || (r == 2 && links_stay_inside(g, sb.buf)))
		goto out;
	sb.len = 0;
	wap_sb_addf(&sb, "%s/info/alternates", real);
	buf = malloc(65536);
	if (sb.oom || !buf) {
		oom(g);
		goto out;
	}
	r = read_small(g, sb.buf, buf, 65536);
	if (r < 0)
		goto out;
	if (r == 1) {
		char *line = buf, *next;
		for (; line; line = next) {
			char *alt = NULL;
			size_t n;
			next = strchr(line, '\n');
			if (next)
				*next++ = 0;
			n = strlen(line);
			while (n && isspace((unsigned char)line[n - 1]))
				line[--n] = 0;
			if (!n || line[0] == '#')
				continue;
			if (link_dir(g, real, "info/alternates", line, &alt)) {
				if (g->err->kind != WAP_E_NOT_FOUND && g->err->kind != WAP_E_NOT_DIR)
					goto out;
				/* a missing alternate is skipped, as libgit2 does */
				clear_err(g);
				continue;
			}
			r = check_objects(g, alt, depth + 1);
			free(alt);
			if (r)
				goto out;
		}
	}
	rc = 0;
out:
	wap_sb_release(&sb);
	free(buf);
	free(real);
	return rc;
}

/* Before libgit2 opens a repository at REAL (root-relative): the git dir a
 * .git file names, the common dir a git dir's commondir file names, the
 * object store and its alternates must all be beneath the root.  libgit2
 * would otherwise read them (their config first) before open_repo could
 * look at where they are.  With GDOUT, *GDOUT and *CDOUT get the git dir
 * and the common dir (NULL: the git dir), root-relative. */
static int check_links_at(struct g *g, const char *real, char **gdout, char **cdout)
{
	struct wap_sb sb = WAP_SB_INIT;
	char buf[4096], *gd = NULL, *cd = NULL;
	int rc = -1, r;

	if (gdout)
		*gdout = *cdout = NULL;

	if (strcmp(real, "."))
		wap_sb_addf(&sb, "%s/.git", real);
	else
		wap_sb_adds(&sb, ".git");
	if (sb.oom)
		return oom(g);
	r = read_small(g, sb.buf, buf, sizeof(buf));
	if (r < 0)
		goto out;
	if (r == 1) {
		if (strncmp(buf, "gitdir:", 7)) {
			rc = 0;		/* libgit2 will say it is not a repository */
			goto out;
		}
		if (link_dir(g, real, ".git", buf + 7 + strspn(buf + 7, " \t"), &gd))
			goto out;
	} else {
		gd = strdup(r == 2 ? sb.buf : real);
	}
	if (!gd) {
		oom(g);
		goto out;
	}
	sb.len = 0;
	wap_sb_addf(&sb, "%s/commondir", gd);
	if (sb.oom) {
		oom(g);
		goto out;
	}
	r = read_small(g, sb.buf, buf, sizeof(buf));
	if (r < 0 || (r == 1 && link_dir(g, gd, "commondir", buf, &cd)))
		goto out;
	sb.len = 0;
	wap_sb_addf(&sb, "%s/objects", cd ? cd : gd);
	if (sb.oom) {
		oom(g);
		goto out;
	}
	rc = check_objects(g, sb.buf, 0);
	if (!rc && gdout) {
		*gdout = gd;
		*cdout = cd;
		gd = cd = NULL;
	}
out:
	wap_sb_release(&sb);
	free(gd);
	free(cd);
	return rc;
}

static int check_links(struct g *g, const char *real)
{
	return check_links_at(g, real, NULL, NULL);
}

/* wap's own checks for links (below, and checkout_preflight) can be
 * turned off to test that the kernel's layer holds alone (tests only:
 * Landlock still keeps every write beneath the root). */
static bool link_checks(void)
{
	const char *v = getenv("WAP_GIT_NO_LINK_CHECKS");
	return !(v && !strcmp(v, "1"));
}

/* Is there a symbolic link at NAME in directory FD, or beneath it down to
 * DEPTH levels?  *BAD gets its path (SHOWN/...); *BUDGET bounds the walk. */
static int find_link(int fd, const char *name, const char *shown, int depth, size_t *budget,
		     char **bad)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	int sub, rc = 0;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	if (S_ISLNK(st.st_mode)) {
		struct wap_sb sb = WAP_SB_INIT;
		wap_sb_addf(&sb, "%s/%s", shown, name);
		*bad = wap_sb_detach(&sb);
		return 1;
	}
	if (!S_ISDIR(st.st_mode) || depth <= 0)
		return 0;
	if (!*budget)
		return -1;
	sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0 || !(d = fdopendir(sub))) {
		if (sub >= 0)
			close(sub);
		return -1;
	}
	{
		struct wap_sb sb = WAP_SB_INIT;
		wap_sb_addf(&sb, "%s/%s", shown, name);
		while (!rc && sb.buf && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (!(*budget)--) {
				rc = -1;
				break;
			}
			rc = find_link(dirfd(d), de->d_name, sb.buf, depth - 1, budget, bad);
		}
		if (!sb.buf)
			rc = -1;
		wap_sb_release(&sb);
	}
	closedir(d);
	return rc;
}

/* Before an action writes: nothing libgit2 writes in the git dir GD (an
 * absolute path it reported) may be a symbolic link.  Landlock keeps the
 * writes beneath the root; this keeps them in the git dir, out of the work
 * tree and out of restricted or policy files (.git/logs/HEAD ->
 * ../../.env would have the reflog appended to .env, .git/index -> X would
 * overwrite X). */
static int check_gitdir_writes(struct g *g, const char *gd)
{
	static const struct { const char *name; int depth; } w[] = {
		{ "HEAD", 0 }, { "ORIG_HEAD", 0 }, { "FETCH_HEAD", 0 }, { "MERGE_HEAD", 0 },
		{ "MERGE_MSG", 0 }, { "MERGE_MODE", 0 }, { "CHERRY_PICK_HEAD", 0 },
		{ "REVERT_HEAD", 0 }, { "COMMIT_EDITMSG", 0 }, { "index", 0 }, { "config", 0 },
		{ "packed-refs", 0 }, { "shallow", 0 }, { "description", 0 }, { "info", 1 },
		{ "refs", 64 }, { "logs", 64 }, { "objects", 1 }, { "objects/pack", 1 },
		{ "objects/info", 1 },
	};
	struct wap_ws nopol = *g->ws;
	char *rel = NULL, *bad = NULL;
	size_t budget = 1000000;
	int fd, r = 0;

	if (!link_checks())
		return 0;
	if (confirm_dir(g, gd, &rel))
		return -1;
	memset(&nopol.pol.restricted, 0, sizeof(nopol.pol.restricted));
	fd = wap_ws_open(&nopol, rel, O_RDONLY | O_DIRECTORY, 0, WAP_ACC_READ, g->err);
	if (fd < 0) {
		free(rel);
		return -1;
	}
	for (size_t i = 0; !r && i < sizeof(w) / sizeof(w[0]); i++)
		r = find_link(fd, w[i].name, strcmp(rel, ".") ? rel : ".", w[i].depth, &budget, &bad);
	close(fd);
	if (r > 0)
		wap_err_set(g->err, WAP_E_ACCESS,
			    "Access denied: %s is a symbolic link; wap git does not write through links in "
			    "the git directory (remove it, or use git itself)", bad ? bad : rel);
	else if (r < 0)
		wap_err_set(g->err, WAP_E_FAILED, "cannot check the git directory %s for links", rel);
	free(bad);
	free(rel);
	return r ? -1 : 0;
}

/* Open the repository at DIR (root-relative) or the nearest directory above
 * it that holds one, stopping at the root. */
static int open_repo(struct g *g, bool write)
{
	const char *dir = str_key(g, "dir");
	char *cand = NULL, *real = NULL, *abs = NULL, *chk = NULL;
	const char *p;
	int rc = -1, fd;

	if (wap_ws_rel(g->ws, dir ? dir : ".", strlen(dir ? dir : "."), &cand, g->err))
		return -1;
	if (wap_ws_check(g->ws, cand, write ? WAP_ACC_WRITE : WAP_ACC_READ, g->err))
		goto out;
	fd = wap_ws_open(g->ws, cand, O_PATH | O_DIRECTORY, 0, WAP_ACC_READ, g->err);
	if (fd < 0)
		goto out;
	real = wap_ws_fd_rel(g->ws, fd);
	close(fd);
	if (!real) {
		wap_err_set(g->err, WAP_E_ACCESS, "Access denied: %s is outside the workspace root", cand);
		goto out;
	}
	for (;;) {
		int e;
		char *slash;

		free(abs);
		abs = wap_ws_abs(g->ws, real);
		if (!abs) {
			oom(g);
			goto out;
		}
		if (check_links(g, real))
			goto out;
		e = git_repository_open_ext(&g->repo, abs, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
		if (!e)
			break;
		if (e == GIT_EOWNER || (git_error_last() && git_error_last()->message &&
					strstr(git_error_last()->message, "safe.directory"))) {
			/* libgit2 1.5 reports a failed ownership check as a
			 * missing safe.directory setting */
			wap_err_set(g->err, WAP_E_PERMISSION,
				    "Permission denied: the repository at %s is not owned by the current user "
				    "(git's safe.directory)", real);
			goto out;
		}
		if (e != GIT_ENOTFOUND) {
			lg(g, e, "cannot open the repository at %s", real);
			goto out;
		}
		if (!strcmp(real, ".")) {
			wap_err_set(g->err, WAP_E_NOT_FOUND,
				    "Not a git repository: %s (nor any parent up to the workspace root)",
				    cand);
			goto out;
		}
		slash = strrchr(real, '/');
		if (slash)
			*slash = 0;
		else
			memcpy(real, ".", 2);	/* fits: real held at least one byte */
	}
	/* the git dir, the common dir and the work tree must all be beneath
	 * the root (a .git file or core.worktree may point anywhere) */
	p = git_repository_path(g->repo);
	if (confirm_dir(g, p, &chk))
		goto out;
	free(chk);
	chk = NULL;
	p = git_repository_commondir(g->repo);
	if (p && confirm_dir(g, p, &chk))
		goto out;
	free(chk);
	chk = NULL;
	p = git_repository_workdir(g->repo);
	if (p && confirm_dir(g, p, &g->wd_rel))
		goto out;
	rc = 0;
out:
	if (rc && g->repo) {
		git_repository_free(g->repo);
		g->repo = NULL;
	}
	free(cand);
	free(real);
	free(abs);
	return rc;
}

static int need_workdir(struct g *g)
{
	if (!g->wd_rel)
		return wap_err_set(g->err, WAP_E_INVALID, "This operation needs a work tree; the repository is bare");
	return 0;
}

/* A caller's path (root-relative or absolute) as a path in the repository
 * ("" for the whole work tree), in a new string. */
static int repo_path(struct g *g, const char *p, int access, char **out)
{
	char *rel;
	size_t wl;

	*out = NULL;
	if (need_workdir(g))
		return -1;
	if (wap_ws_rel(g->ws, p, strlen(p), &rel, g->err))
		return -1;
	if (wap_ws_check(g->ws, rel, access, g->err)) {
		free(rel);
		return -1;
	}
	wl = strlen(g->wd_rel);
	if (!strcmp(g->wd_rel, ".")) {
		*out = strdup(strcmp(rel, ".") ? rel : "");
	} else if (!strcmp(rel, g->wd_rel)) {
		*out = strdup("");
	} else if (!strncmp(rel, g->wd_rel, wl) && rel[wl] == '/') {
		*out = strdup(rel + wl + 1);
	} else {
		wap_err_set(g->err, WAP_E_INVALID, "Path %s is outside the repository at %s", p, g->wd_rel);
		free(rel);
		return -1;
	}
	free(rel);
	return *out ? 0 : oom(g);
}

/* The root-relative form of a repository path. */
static char *ws_path(struct g *g, const char *rp)
{
	struct wap_sb sb = WAP_SB_INIT;

	if (!strcmp(g->wd_rel, "."))
		wap_sb_adds(&sb, *rp ? rp : ".");
	else if (*rp)
		wap_sb_addf(&sb, "%s/%s", g->wd_rel, rp);
	else
		wap_sb_adds(&sb, g->wd_rel);
	return wap_sb_detach(&sb);
}

/* ---- small helpers ---- */

struct strv {
	char **v;
	size_t n;
};

static int strv_add(struct strv *s, char *owned)
{
	char **nv;

	if (!owned)
		return -1;
	nv = realloc(s->v, (s->n + 2) * sizeof(*nv));
	if (!nv) {
		free(owned);
		return -1;
	}
	s->v = nv;
	s->v[s->n++] = owned;
	s->v[s->n] = NULL;
	return 0;
}

static void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static git_strarray strv_arr(struct strv *s)
{
	git_strarray a = { s->v, s->n };
	return a;
}

static void oid_hex(const git_oid *id, char out[GIT_OID_HEXSZ + 1])
{
	git_oid_tostr(out, GIT_OID_HEXSZ + 1, id);
}

static json_t *oid_json(const git_oid *id)
{
	char h[GIT_OID_HEXSZ + 1];

	oid_hex(id, h);
	return json_string(h);
}

/* The paths of the request: "paths", then "files", then ARGS. */
static int collect_paths(struct g *g, const char **args, size_t nargs, int access,
			 struct strv *out)
{
	const char *keys[] = { "paths", "files" };

	for (size_t k = 0; k < 2; k++) {
		json_t *a = json_object_get(g->req, keys[k]), *v;
		size_t i;

		json_array_foreach(a, i, v) {
			char *rp;
			if (!json_is_string(v))
				return wap_err_set(g->err, WAP_E_INVALID, "argument '%s' must be an array of strings", keys[k]);
			if (repo_path(g, json_string_value(v), access, &rp) || strv_add(out, rp))
				return g->err->kind ? -1 : oom(g);
		}
	}
	bool sep = args == g->args;	/* the whole list: "--" is a separator */

	for (size_t i = 0; i < nargs; i++) {
		char *rp;
		if (sep && !strcmp(args[i], "--")) {
			sep = false;	/* "add -- -file" */
			continue;
		}
		if (repo_path(g, args[i], access, &rp) || strv_add(out, rp))
			return g->err->kind ? -1 : oom(g);
	}
	return 0;
}

static bool strv_has_root(const struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (!*s->v[i])
			return true;
	return false;
}

/* The name of the checked-out branch (malloc'd), NULL if detached.  Works on
 * an unborn branch too. */
static char *head_branch(git_repository *repo, bool *detached)
{
	git_reference *h = NULL;
	char *name = NULL;

	*detached = false;
	if (git_reference_lookup(&h, repo, "HEAD"))
		return NULL;
	if (git_reference_type(h) == GIT_REFERENCE_SYMBOLIC) {
		const char *t = git_reference_symbolic_target(h);
		name = strdup(!strncmp(t, "refs/heads/", 11) ? t + 11 : t);
	} else {
		*detached = true;
	}
	git_reference_free(h);
	return name;
}

/* HEAD's commit, or NULL (unborn); -1 on other errors. */
static int head_commit(struct g *g, git_commit **out)
{
	git_object *o = NULL;
	int e;

	*out = NULL;
	e = git_revparse_single(&o, g->repo, "HEAD^{commit}");
	if (e == GIT_ENOTFOUND || e == GIT_EUNBORNBRANCH) {
		git_error_clear();
		return 0;
	}
	if (e)
		return lg(g, e, "cannot read HEAD");
	*out = (git_commit *)o;
	return 0;
}

static int resolve_commit(struct g *g, const char *rev, git_commit **out)
{
	git_object *o = NULL;
	int e;

	*out = NULL;
	if (!*rev || rev[0] == '-')
		return wap_err_set(g->err, WAP_E_INVALID, "Unknown revision: '%s'", rev);
	e = git_revparse_single(&o, g->repo, rev);
	if (!e) {
		git_object *c = NULL;
		e = git_object_peel(&c, o, GIT_OBJECT_COMMIT);
		git_object_free(o);
		if (!e) {
			*out = (git_commit *)c;
			return 0;
		}
	}
	git_error_clear();
	return wap_err_set(g->err, WAP_E_INVALID, "Unknown revision: '%s'", rev);
}

/* ---- upstreams, read from the config ----
 * libgit2 1.5 leaks PCRE2 match data whenever it runs a config regex that
 * does not match (fixed upstream in libgit2 PR #6382, in 1.6); its remote
 * lookup and branch-upstream functions do, once per config entry.  So the
 * upstream of a branch is read here with plain config lookups, which do not
 * (git_remote_lookup still runs, unavoidably, for fetch and push). */
struct upstream {
	char *remote, *merge, *tracking;
};

static void upstream_release(struct upstream *u)
{
	free(u->remote);
	free(u->merge);
	free(u->tracking);
	memset(u, 0, sizeof(*u));
}

static char *cfg_str(git_config *cfg, const char *fmt, const char *arg)
{
	struct wap_sb key = WAP_SB_INIT;
	const char *v = NULL;
	char *r = NULL;

	wap_sb_addf(&key, fmt, arg);
	if (key.buf && !git_config_get_string(&v, cfg, key.buf) && v)
		r = strdup(v);
	git_error_clear();
	wap_sb_release(&key);
	return r;
}

static int fetchspec_cb(const git_config_entry *e, void *p)
{
	return strv_add(p, strdup(e->value)) ? -1 : 0;
}

/* 1 if local branch BRANCH has an upstream configured. */
static int upstream_of(struct g *g, const char *branch, struct upstream *u)
{
	git_config *cfg = NULL;
	struct strv specs = { 0 };
	struct wap_sb key = WAP_SB_INIT;

	memset(u, 0, sizeof(*u));
	if (!branch || git_repository_config_snapshot(&cfg, g->repo)) {
		git_error_clear();
		return 0;
	}
	u->remote = cfg_str(cfg, "branch.%s.remote", branch);
	u->merge = cfg_str(cfg, "branch.%s.merge", branch);
	if (u->remote && u->merge) {
		if (!strcmp(u->remote, ".")) {
			u->tracking = strdup(u->merge);
		} else {
			wap_sb_addf(&key, "remote.%s.fetch", u->remote);
			if (key.buf)
				git_config_get_multivar_foreach(cfg, key.buf, NULL, fetchspec_cb, &specs);
			for (size_t i = 0; i < specs.n && !u->tracking; i++) {
				git_refspec *rs = NULL;
				git_buf b = { 0 };
				if (!git_refspec_parse(&rs, specs.v[i], 1) && git_refspec_src_matches(rs, u->merge) &&
				    !git_refspec_transform(&b, rs, u->merge))
					u->tracking = strndup(b.ptr, b.size);
				git_buf_dispose(&b);
				git_refspec_free(rs);
			}
		}
	}
	git_error_clear();
	strv_free(&specs);
	wap_sb_release(&key);
	git_config_free(cfg);
	return u->remote && u->merge;
}

static const char *ref_short(const char *ref)
{
	if (!strncmp(ref, "refs/remotes/", 13))
		return ref + 13;
	if (!strncmp(ref, "refs/heads/", 11))
		return ref + 11;
	return ref;
}

/* Delete local branch REF (NAME) and its config section, without
 * git_branch_delete (see above). */
static int delete_branch(struct g *g, git_reference *ref, const char *name)
{
	git_config *cfg = NULL, *snap = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *ce;
	struct strv keys = { 0 };
	struct wap_sb pfx = WAP_SB_INIT;
	char *refname = strdup(git_reference_name(ref));
	int e;

	if (!refname)
		return oom(g);
	if ((e = git_reference_delete(ref))) {
		free(refname);
		return lg(g, e, "cannot delete branch '%s'", name);
	}
	git_reflog_delete(g->repo, refname);
	free(refname);
	wap_sb_addf(&pfx, "branch.%s.", name);
	if (pfx.buf && !git_repository_config(&cfg, g->repo) && !git_config_snapshot(&snap, cfg) &&
	    !git_config_iterator_new(&it, snap)) {
		while (!git_config_next(&ce, it))
			if (!strncmp(ce->name, pfx.buf, pfx.len) && ce->level == GIT_CONFIG_LEVEL_LOCAL)
				strv_add(&keys, strdup(ce->name));
		for (size_t i = 0; i < keys.n; i++)
			git_config_delete_multivar(cfg, keys.v[i], ".*");
	}
	git_error_clear();
	git_config_iterator_free(it);
	git_config_free(snap);
	git_config_free(cfg);
	strv_free(&keys);
	wap_sb_release(&pfx);
	return 0;
}

/* ---- status ---- */

static char xy_index(unsigned s)
{
	if (s & GIT_STATUS_INDEX_NEW) return 'A';
	if (s & GIT_STATUS_INDEX_DELETED) return 'D';
	if (s & GIT_STATUS_INDEX_RENAMED) return 'R';
	if (s & GIT_STATUS_INDEX_TYPECHANGE) return 'T';
	if (s & GIT_STATUS_INDEX_MODIFIED) return 'M';
	return '.';
}

static char xy_wt(unsigned s)
{
	if (s & GIT_STATUS_WT_DELETED) return 'D';
	if (s & GIT_STATUS_WT_RENAMED) return 'R';
	if (s & GIT_STATUS_WT_TYPECHANGE) return 'T';
	if (s & GIT_STATUS_WT_MODIFIED) return 'M';
	return '.';
}

static const char *xy_word(char c)
{
	switch (c) {
	case 'A': return "added";
	case 'D': return "deleted";
	case 'R': return "renamed";
	case 'T': return "typechange";
	case 'M': return "modified";
	case 'C': return "copied";
	}
	return "unmodified";
}

/* The porcelain-v2 XY of a conflicted path, from its index stages. */
static void conflict_xy(git_index *idx, const char *path, char xy[3])
{
	const git_index_entry *anc = NULL, *ours = NULL, *theirs = NULL;

	memcpy(xy, "UU", 3);
	if (git_index_conflict_get(&anc, &ours, &theirs, idx, path)) {
		git_error_clear();
		return;
	}
	if (anc && !ours && !theirs) memcpy(xy, "DD", 3);
	else if (!anc && ours && !theirs) memcpy(xy, "AU", 3);
	else if (anc && ours && !theirs) memcpy(xy, "UD", 3);
	else if (!anc && !ours && theirs) memcpy(xy, "UA", 3);
	else if (anc && !ours && theirs) memcpy(xy, "DU", 3);
	else if (!anc && ours && theirs) memcpy(xy, "AA", 3);
}

static json_t *change(const char *path, const char *orig, const char *status, bool staged)
{
	json_t *o = json_pack("{s:s, s:s, s:b}", "path", path, "status", status, "staged", staged);
	if (orig)
		json_object_set_new(o, "origPath", json_string(orig));
	return o;
}

static int op_status(struct g *g, json_t **res)
{
	git_status_options so;
	git_status_list *sl = NULL;
	git_index *idx = NULL;
	git_reference *head = NULL, *up = NULL;
	json_t *r, *changes, *staged, *unstaged, *untracked, *conflicted, *files;
	char *branch;
	bool detached;
	int e;

	if (need_workdir(g))
		return -1;
	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RENAMES_HEAD_TO_INDEX |
		   GIT_STATUS_OPT_SORT_CASE_SENSITIVELY;
	e = git_status_list_new(&sl, g->repo, &so);
	if (e)
		return lg(g, e, "cannot read the status");
	if ((e = git_repository_index(&idx, g->repo))) {
		git_status_list_free(sl);
		return lg(g, e, "cannot read the index");
	}
	r = json_object();
	branch = head_branch(g->repo, &detached);
	json_object_set_new(r, "repository", json_string(g->wd_rel));
	json_object_set_new(r, "branch", branch ? json_string(branch) : json_null());
	json_object_set_new(r, "detached", json_boolean(detached));
	free(branch);
	if (!git_repository_head(&head, g->repo)) {
		struct upstream u = { 0 };
		json_object_set_new(r, "head", oid_json(git_reference_target(head)));
		if (git_reference_is_branch(head) && upstream_of(g, git_reference_shorthand(head), &u) &&
		    u.tracking) {
			size_t ahead = 0, behind = 0;
			json_object_set_new(r, "upstream", json_string(ref_short(u.tracking)));
			if (!git_reference_lookup(&up, g->repo, u.tracking) && git_reference_target(up) &&
			    !git_graph_ahead_behind(&ahead, &behind, g->repo, git_reference_target(head),
						    git_reference_target(up))) {
				json_object_set_new(r, "ahead", json_integer(ahead));
				json_object_set_new(r, "behind", json_integer(behind));
			}
		}
		upstream_release(&u);
	} else {
		json_object_set_new(r, "head", json_null());
		json_object_set_new(r, "unborn", json_true());
	}
	git_error_clear();
	if (!json_object_get(r, "upstream"))
		json_object_set_new(r, "upstream", json_null());
	changes = json_array();
	staged = json_array();
	unstaged = json_array();
	untracked = json_array();
	conflicted = json_array();
	files = json_array();
	for (size_t i = 0, n = git_status_list_entrycount(sl); i < n; i++) {
		const git_status_entry *se = git_status_byindex(sl, i);
		const git_diff_delta *hi = se->head_to_index, *iw = se->index_to_workdir;
		unsigned s = se->status;
		const char *path = iw ? iw->new_file.path : hi ? hi->new_file.path : NULL;
		const char *orig = NULL;
		char xy[3];
		json_t *f;

		if (!path)
			continue;
		if (s & GIT_STATUS_IGNORED)
			continue;
		if (s & GIT_STATUS_CONFLICTED) {
			conflict_xy(idx, path, xy);
			json_array_append_new(conflicted, json_string(path));
			json_array_append_new(changes, change(path, NULL, "conflicted", false));
			json_array_append_new(files, json_pack("{s:s, s:s}", "path", path, "xy", xy));
			continue;
		}
		if (s & GIT_STATUS_WT_NEW && !(s & (GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED |
						    GIT_STATUS_INDEX_DELETED | GIT_STATUS_INDEX_RENAMED |
						    GIT_STATUS_INDEX_TYPECHANGE))) {
			json_array_append_new(untracked, json_string(path));
			json_array_append_new(changes, change(path, NULL, "untracked", false));
			json_array_append_new(files, json_pack("{s:s, s:s}", "path", path, "xy", "??"));
			continue;
		}
		xy[0] = xy_index(s);
		xy[1] = xy_wt(s);
		xy[2] = 0;
		if (hi && (s & GIT_STATUS_INDEX_RENAMED)) {
			orig = hi->old_file.path;
			path = iw ? iw->new_file.path : hi->new_file.path;
		}
		if (xy[0] != '.') {
			json_array_append_new(staged, change(path, xy[0] == 'R' ? orig : NULL, xy_word(xy[0]), true));
			json_array_append_new(changes, change(path, xy[0] == 'R' ? orig : NULL, xy_word(xy[0]), true));
		}
		if (xy[1] != '.') {
			json_array_append_new(unstaged, change(path, NULL, xy_word(xy[1]), false));
			json_array_append_new(changes, change(path, NULL, xy_word(xy[1]), false));
		}
		f = json_pack("{s:s, s:s}", "path", path, "xy", xy);
		if (orig && xy[0] == 'R')
			json_object_set_new(f, "origPath", json_string(orig));
		json_array_append_new(files, f);
	}
	json_object_set_new(r, "clean", json_boolean(json_array_size(files) == 0));
	json_object_set_new(r, "changes", changes);
	json_object_set_new(r, "staged", staged);
	json_object_set_new(r, "unstaged", unstaged);
	json_object_set_new(r, "untracked", untracked);
	json_object_set_new(r, "conflicted", conflicted);
	json_object_set_new(r, "files", files);
	git_reference_free(up);
	git_reference_free(head);
	git_index_free(idx);
	git_status_list_free(sl);
	*res = r;
	return 0;
}

/* ---- diffs ---- */

/* git's quote_c_style with core.quotePath on: quote a name holding control
 * characters, '"', '\\' or bytes >= 0x7f. */
static void quote_c(struct wap_sb *sb, const char *s)
{
	const unsigned char *p;
	bool need = false;

	for (p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == '"' || *p == '\\' || *p >= 0x7f)
			need = true;
	if (!need) {
		wap_sb_adds(sb, s);
		return;
	}
	wap_sb_addc(sb, '"');
	for (p = (const unsigned char *)s; *p; p++) {
		static const char esc[] = "\a\b\t\n\v\f\r";
		static const char let[] = "abtnvfr";
		const char *e = *p ? strchr(esc, *p) : NULL;
		if (e) {
			wap_sb_addc(sb, '\\');
			wap_sb_addc(sb, let[e - esc]);
		} else if (*p == '"' || *p == '\\') {
			wap_sb_addc(sb, '\\');
			wap_sb_addc(sb, *p);
		} else if (*p < 0x20 || *p >= 0x7f) {
			wap_sb_addf(sb, "\\%03o", *p);
		} else {
			wap_sb_addc(sb, *p);
		}
	}
	wap_sb_addc(sb, '"');
}

static bool needs_quote(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == '"' || *p == '\\' || *p >= 0x7f)
			return true;
	return false;
}

/* git's pprint_rename: "dir/{old => new}/tail". */
static void pprint_rename(struct wap_sb *sb, const char *a, const char *b)
{
	const char *o = a, *n = b;
	long la = strlen(a), lb = strlen(b), pfx = 0, sfx = 0, adj, am, bm;

	if (needs_quote(a) || needs_quote(b)) {
		quote_c(sb, a);
		wap_sb_adds(sb, " => ");
		quote_c(sb, b);
		return;
	}
	while (*o && *n && *o == *n) {
		if (*o == '/')
			pfx = o - a + 1;
		o++, n++;
	}
	o = a + la;
	n = b + lb;
	adj = pfx ? 1 : 0;
	while (a + pfx - adj <= o && b + pfx - adj <= n && *o == *n) {
		if (*o == '/')
			sfx = la - (o - a);
		o--, n--;
	}
	am = la - pfx - sfx;
	bm = lb - pfx - sfx;
	if (am < 0)
		am = 0;
	if (bm < 0)
		bm = 0;
	if (pfx + sfx) {
		wap_sb_add(sb, a, pfx);
		wap_sb_addc(sb, '{');
	}
	wap_sb_add(sb, a + pfx, am);
	wap_sb_adds(sb, " => ");
	wap_sb_add(sb, b + pfx, bm);
	if (pfx + sfx) {
		wap_sb_addc(sb, '}');
		wap_sb_add(sb, a + la - sfx, sfx);
	}
}

/* git's rename score (diffcore-rename.c estimate_similarity over the span
 * hashes of diffcore-delta.c), so that "similarity index N%" is git's
 * number rather than libgit2's own estimate. */
struct span {
	unsigned h, cnt;
};

static int span_cmp(const void *a, const void *b)
{
	unsigned x = ((const struct span *)a)->h, y = ((const struct span *)b)->h;
	return x < y ? -1 : x > y;
}

static struct span *spans(const unsigned char *buf, size_t sz, size_t *nout)
{
	struct span *v = malloc((sz + 1) * sizeof(*v));
	bool text = !memchr(buf, 0, sz < 8000 ? sz : 8000);
	unsigned a1 = 0, a2 = 0, n = 0;
	size_t k = 0, m = 0;

	if (!v)
		return NULL;
	while (sz) {
		unsigned c = *buf++, old1 = a1;
		sz--;
		if (text && c == '\r' && sz && *buf == '\n')
			continue;
		a1 = (a1 << 7) ^ (a2 >> 25);
		a2 = (a2 << 7) ^ (old1 >> 25);
		a1 += c;
		if (++n < 64 && c != '\n')
			continue;
		v[k].h = (a1 + a2 * 0x61) % 107927;
		v[k++].cnt = n;
		n = a1 = a2 = 0;
	}
	if (n > 0) {
		v[k].h = (a1 + a2 * 0x61) % 107927;
		v[k++].cnt = n;
	}
	qsort(v, k, sizeof(*v), span_cmp);
	for (size_t i = 0; i < k; i++) {
		if (m && v[m - 1].h == v[i].h)
			v[m - 1].cnt += v[i].cnt;
		else
			v[m++] = v[i];
	}
	*nout = m;
	return v;
}

/* -1 when a side is not in the object database (a work tree file). */
static int git_similarity(struct g *g, const git_oid *a, const git_oid *b)
{
	git_blob *ba = NULL, *bb = NULL;
	struct span *sa = NULL, *sb = NULL;
	size_t na = 0, nb = 0, la, lb, max, base, copied = 0, i = 0, j = 0;
	int score = -1;

	if (git_oid_equal(a, b))
		return 100;
	if (git_blob_lookup(&ba, g->repo, a) || git_blob_lookup(&bb, g->repo, b))
		goto out;
	la = git_blob_rawsize(ba);
	lb = git_blob_rawsize(bb);
	max = la > lb ? la : lb;
	base = la < lb ? la : lb;
	score = 0;
	if (!lb || max * (60000 - 30000) < (max - base) * 60000)
		goto out;
	sa = spans(git_blob_rawcontent(ba), la, &na);
	sb = spans(git_blob_rawcontent(bb), lb, &nb);
	if (!sa || !sb) {
		score = -1;
		goto out;
	}
	for (; i < na; i++) {
		while (j < nb && sb[j].h < sa[i].h)
			j++;
		if (j < nb && sb[j].h == sa[i].h) {
			copied += sa[i].cnt < sb[j].cnt ? sa[i].cnt : sb[j].cnt;
			j++;
		}
	}
	score = (int)(copied * 60000 / max) * 100 / 60000;
out:
	git_error_clear();
	free(sa);
	free(sb);
	git_blob_free(ba);
	git_blob_free(bb);
	return score;
}

struct pctx {
	struct wap_sb *sb;
	struct g *g;
	bool no_hunks;	/* git prints no ---/+++ lines then (empty files) */
};

static int print_cb(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l, void *p)
{
	struct pctx *pc = p;
	struct wap_sb *sb = pc->sb;
	int sim = -1;

	(void)h;
	if (l->origin == GIT_DIFF_LINE_FILE_HDR &&
	    (d->status == GIT_DELTA_RENAMED || d->status == GIT_DELTA_COPIED))
		sim = git_similarity(pc->g, &d->old_file.id, &d->new_file.id);
	if (l->origin == GIT_DIFF_LINE_FILE_HDR) {
		/* git ends "--- a/x y" with a tab when the name holds a space */
		const char *q = l->content, *end = l->content + l->content_len;
		while (q < end) {
			const char *nl = memchr(q, '\n', end - q);
			size_t n = nl ? (size_t)(nl - q) : (size_t)(end - q);
			if (pc->no_hunks && n >= 4 && (!strncmp(q, "--- ", 4) || !strncmp(q, "+++ ", 4))) {
				q += n + (nl != NULL);
				continue;
			}
			if (sim >= 0 && !strncmp(q, "similarity index ", 17))
				wap_sb_addf(sb, "similarity index %d%%", sim);
			else
				wap_sb_add(sb, q, n);
			if (n > 4 && (!strncmp(q, "--- ", 4) || !strncmp(q, "+++ ", 4)) &&
			    memchr(q + 4, ' ', n - 4))
				wap_sb_addc(sb, '\t');
			if (nl)
				wap_sb_addc(sb, '\n');
			q += n + (nl != NULL);
		}
		return 0;
	}
	if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION)
		wap_sb_addc(sb, l->origin);
	wap_sb_add(sb, l->content, l->content_len);
	return 0;
}

struct fst {
	char *name;		/* display name for --stat */
	size_t add, del;
	bool binary;
};

static const char *status_word(git_delta_t s)
{
	switch (s) {
	case GIT_DELTA_ADDED: return "added";
	case GIT_DELTA_DELETED: return "deleted";
	case GIT_DELTA_MODIFIED: return "modified";
	case GIT_DELTA_RENAMED: return "renamed";
	case GIT_DELTA_COPIED: return "copied";
	case GIT_DELTA_TYPECHANGE: return "typechange";
	case GIT_DELTA_UNTRACKED: return "untracked";
	case GIT_DELTA_CONFLICTED: return "conflicted";
	default: return "modified";
	}
}

static int decimal_width(size_t n)
{
	int w = 1;

	while (n >= 10)
		n /= 10, w++;
	return w;
}

static int scale_linear(long it, long width, long max_change)
{
	if (!it)
		return 0;
	return 1 + (it * (width - 1) / max_change);
}

/* git diff --stat (diff.c show_stats) for an 80-column output. */
static void stat_text(struct wap_sb *sb, struct fst *fs, size_t n)
{
	long max_change = 0, max_len = 0, width = 80, name_width, graph_width;
	long number_width = 0, bin_width = 0, adds = 0, dels = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++) {
		long len = strlen(fs[i].name), change = fs[i].add + fs[i].del;
		if (max_len < len)
			max_len = len;
		if (fs[i].binary) {
			long w = 14 + decimal_width(fs[i].add) + decimal_width(fs[i].del);
			if (bin_width < w)
				bin_width = w;
			number_width = 3;
			continue;
		}
		if (max_change < change)
			max_change = change;
	}
	if (decimal_width(max_change) > number_width)
		number_width = decimal_width(max_change);
	if (width < 16 + 6 + number_width)
		width = 16 + 6 + number_width;
	graph_width = max_change + 4 > bin_width ? max_change : bin_width - 4;
	name_width = max_len;
	if (name_width + number_width + 6 + graph_width > width) {
		if (graph_width > width * 3 / 8 - number_width - 6) {
			graph_width = width * 3 / 8 - number_width - 6;
			if (graph_width < 6)
				graph_width = 6;
		}
		if (name_width > width - number_width - 6 - graph_width)
			name_width = width - number_width - 6 - graph_width;
		else
			graph_width = width - number_width - 6 - name_width;
	}
	for (size_t i = 0; i < n; i++) {
		const char *prefix = "", *name = fs[i].name;
		long len = name_width, name_len = strlen(name), padding, add, del;

		if (name_width < name_len) {
			const char *slash;
			prefix = "...";
			len -= 3;
			if (len < 0)
				len = 0;
			while (name_len > len)
				name++, name_len--;
			slash = strchr(name, '/');
			if (slash)
				name = slash;
		}
		padding = len - (long)strlen(name);
		if (padding < 0)
			padding = 0;
		if (fs[i].binary) {
			wap_sb_addf(sb, " %s%s%*s | %*s", prefix, name, (int)padding, "",
				    (int)number_width, "Bin");
			if (!fs[i].add && !fs[i].del) {
				wap_sb_addc(sb, '\n');
				continue;
			}
			wap_sb_addf(sb, " %zu -> %zu bytes\n", fs[i].del, fs[i].add);
			continue;
		}
		add = fs[i].add;
		del = fs[i].del;
		adds += add;
		dels += del;
		if (graph_width <= max_change) {
			int total = scale_linear(add + del, graph_width, max_change);
			if (total < 2 && add && del)
				total = 2;
			if (add < del) {
				add = scale_linear(add, graph_width, max_change);
				del = total - add;
			} else {
				del = scale_linear(del, graph_width, max_change);
				add = total - del;
			}
		}
		wap_sb_addf(sb, " %s%s%*s | %*zu%s", prefix, name, (int)padding, "",
			    (int)number_width, fs[i].add + fs[i].del, fs[i].add + fs[i].del ? " " : "");
		for (long k = 0; k < add; k++)
			wap_sb_addc(sb, '+');
		for (long k = 0; k < del; k++)
			wap_sb_addc(sb, '-');
		wap_sb_addc(sb, '\n');
	}
	wap_sb_addf(sb, n == 1 ? " %zu file changed" : " %zu files changed", n);
	if (adds || !dels)
		wap_sb_addf(sb, adds == 1 ? ", %ld insertion(+)" : ", %ld insertions(+)", adds);
	if (dels || !adds)
		wap_sb_addf(sb, dels == 1 ? ", %ld deletion(-)" : ", %ld deletions(-)", dels);
	wap_sb_addc(sb, '\n');
}

/* Size of one side of a delta: the blob's, else what the diff saw. */
static size_t side_size(struct g *g, const git_diff_file *f)
{
	git_blob *b = NULL;
	size_t n = f->size;

	if (!(f->flags & GIT_DIFF_FLAG_EXISTS))
		return 0;
	if (!git_oid_is_zero(&f->id) && !git_blob_lookup(&b, g->repo, &f->id)) {
		n = git_blob_rawsize(b);
		git_blob_free(b);
	}
	git_error_clear();
	return n;
}

/* Is repository path RP denied by restrictedPaths?  Diffs leave such files
 * out (they would print their contents), and say so. */
static bool restricted_rp(struct g *g, const char *rp)
{
	struct wap_err e2 = { 0 };
	char *rel;
	bool bad;

	if (!g->ws->pol.restricted.n || !rp || !g->wd_rel)
		return false;
	rel = ws_path(g, rp);
	bad = !rel || wap_ws_check(g->ws, rel, WAP_ACC_READ, &e2) < 0;
	wap_err_release(&e2);
	free(rel);
	return bad;
}

/* A type change (file <-> symlink) comes from libgit2 as an added and a
 * deleted delta for one path, the added one first in some diffs; git
 * prints the deletion first and counts the pair as one file. */
static bool same_path_pair(git_diff *d, size_t i, size_t j, git_delta_t first, git_delta_t second)
{
	const git_diff_delta *a = git_diff_get_delta(d, i), *b = git_diff_get_delta(d, j);

	return a && b && a->status == first && b->status == second &&
	       !strcmp(a->new_file.path, b->old_file.path);
}

/* Fill R with "files" and "diff" (the text git would print: the patch,
 * or --stat, or --name-only). */
static int diff_result(struct g *g, git_diff *d, json_t *r, bool stat, bool names)
{
	size_t n = git_diff_num_deltas(d), nf = 0;
	size_t *ord = malloc((n + 1) * sizeof(*ord));
	struct fst *fs = calloc(n + 1, sizeof(*fs));
	struct wap_sb sb = WAP_SB_INIT;
	json_t *files = json_array(), *hidden = json_array();
	size_t adds = 0, dels = 0;
	int rc = -1, e;

	if (!fs || !files || !hidden || !ord)
		goto out;
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	for (size_t i = 0; i + 1 < n; i++)
		if (same_path_pair(d, ord[i], ord[i + 1], GIT_DELTA_ADDED, GIT_DELTA_DELETED)) {
			size_t t = ord[i];
			ord[i] = ord[i + 1];
			ord[i + 1] = t;
			i++;
		}
	for (size_t k = 0; k < n; k++) {
		const git_diff_delta *dd = git_diff_get_delta(d, ord[k]);
		bool pair = k + 1 < n && same_path_pair(d, ord[k], ord[k + 1], GIT_DELTA_DELETED, GIT_DELTA_ADDED);
		size_t a = 0, dl = 0;
		bool binary = false;
		struct wap_sb nm = WAP_SB_INIT;
		json_t *f;

		if (restricted_rp(g, dd->old_file.path) || restricted_rp(g, dd->new_file.path)) {
			json_array_append_new(hidden, json_string(dd->new_file.path));
			k += pair;
			continue;
		}
		for (size_t part = 0; part <= (size_t)pair; part++) {
			git_patch *p = NULL;
			const git_diff_delta *pd;
			size_t pa = 0, pdl = 0;

			if ((e = git_patch_from_diff(&p, d, ord[k + part]))) {
				lg(g, e, "cannot compute the diff");
				goto out;
			}
			pd = p ? git_patch_get_delta(p) : git_diff_get_delta(d, ord[k + part]);
			if (p)
				git_patch_line_stats(NULL, &pa, &pdl, p);
			if (pd->flags & GIT_DIFF_FLAG_BINARY) {
				binary = true;
				pa = pdl = 0;
				if (!git_oid_equal(&pd->old_file.id, &pd->new_file.id) ||
				    git_oid_is_zero(&pd->new_file.id)) {
					pa = side_size(g, &pd->new_file);
					pdl = side_size(g, &pd->old_file);
				}
			}
			a += pa;
			dl += pdl;
			if (!stat && !names && p &&
			    (e = git_patch_print(p, print_cb, &(struct pctx){ &sb, g,
					!git_patch_num_hunks(p) && !(pd->flags & GIT_DIFF_FLAG_BINARY) }))) {
				git_patch_free(p);
				lg(g, e, "cannot print the diff");
				goto out;
			}
			git_patch_free(p);
		}
		if (!binary) {
			adds += a;
			dels += dl;
		}
		fs[nf].binary = binary;
		fs[nf].add = a;
		fs[nf].del = dl;
		if (dd->status == GIT_DELTA_RENAMED || dd->status == GIT_DELTA_COPIED)
			pprint_rename(&nm, dd->old_file.path, dd->new_file.path);
		else
			quote_c(&nm, dd->new_file.path);
		fs[nf].name = wap_sb_detach(&nm);
		if (!fs[nf].name)
			goto out;
		if (names) {
			quote_c(&sb, dd->new_file.path);
			wap_sb_addc(&sb, '\n');
		}
		f = json_pack("{s:s, s:s, s:i, s:i, s:b}", "path", dd->new_file.path,
			      "status", pair ? "typechange" : status_word(dd->status), "additions", (int)a,
			      "deletions", (int)dl, "binary", binary);
		if (dd->status == GIT_DELTA_RENAMED || dd->status == GIT_DELTA_COPIED) {
			int sim = git_similarity(g, &dd->old_file.id, &dd->new_file.id);
			json_object_set_new(f, "oldPath", json_string(dd->old_file.path));
			json_object_set_new(f, "similarity", json_integer(sim >= 0 ? sim : (int)dd->similarity));
		}
		json_array_append_new(files, f);
		nf++;
		k += pair;
	}
	if (stat)
		stat_text(&sb, fs, nf);
	if (sb.oom)
		goto out;
	json_object_set_new(r, "diff", json_stringn(sb.buf ? sb.buf : "", sb.len));
	json_object_set_new(r, "files", files);
	json_object_set_new(r, "additions", json_integer(adds));
	json_object_set_new(r, "deletions", json_integer(dels));
	if (json_array_size(hidden))
		json_object_set_new(r, "restricted", json_incref(hidden));
	files = NULL;
	rc = 0;
out:
	if (rc && !g->err->kind)
		oom(g);
	for (size_t i = 0; fs && i < n; i++)
		free(fs[i].name);
	free(fs);
	free(ord);
	json_decref(files);
	json_decref(hidden);
	wap_sb_release(&sb);
	return rc;
}

static int diff_opts(struct g *g, git_diff_options *o, struct strv *paths)
{
	long long ctx;
	int k;

	git_diff_options_init(o, GIT_DIFF_OPTIONS_VERSION);
	o->flags |= GIT_DIFF_INDENT_HEURISTIC;
	if ((k = wap_req_int(g->req, "context", &ctx, g->err)) < 0)
		return -1;
	if (k) {
		if (ctx < 0 || ctx > 1000000)
			return wap_err_set(g->err, WAP_E_INVALID, "--context must be between 0 and 1000000");
		o->context_lines = ctx;
	}
	if (paths->n && !strv_has_root(paths))
		o->pathspec = strv_arr(paths);
	return 0;
}

static int find_renames(struct g *g, git_diff *d)
{
	git_diff_find_options fo;
	int e;

	git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION);

	fo.flags = GIT_DIFF_FIND_RENAMES;
	if ((e = git_diff_find_similar(d, &fo)))
		return lg(g, e, "cannot detect renames");
	return 0;
}

static int rev_tree(struct g *g, const char *rev, git_tree **out)
{
	git_object *o = NULL;
	int e;

	*out = NULL;
	if (!*rev || rev[0] == '-')
		return wap_err_set(g->err, WAP_E_INVALID, "Unknown revision: '%s'", rev);
	e = git_revparse_single(&o, g->repo, rev);
	if (!e) {
		e = git_object_peel((git_object **)out, o, GIT_OBJECT_TREE);
		git_object_free(o);
	}
	if (e) {
		git_error_clear();
		return wap_err_set(g->err, WAP_E_INVALID, "Unknown revision: '%s'", rev);
	}
	return 0;
}

/* Does ARG name a revision (or a range of them)? */
static bool is_rev(struct g *g, const char *arg)
{
	git_revspec spec = { 0 };
	bool ok;

	if (arg[0] == '-' || !*arg)
		return false;
	/* a failed range leaves its left side set: free both always */
	ok = !git_revparse(&spec, g->repo, arg);
	git_object_free(spec.from);
	git_object_free(spec.to);
	git_error_clear();
	return ok;
}

/* Split the positional arguments of diff/log into revisions and paths, as
 * git does: paths after "--"; before it, a revision if it parses as one,
 * else a path if it exists in the work tree. */
static int split_revs_paths(struct g *g, struct strv *revs, struct strv *paths, int access)
{
	size_t i, dd = g->nargs;
	const char **after;

	for (i = 0; i < g->nargs; i++)
		if (!strcmp(g->args[i], "--")) {
			dd = i;
			break;
		}
	for (i = 0; i < dd; i++) {
		const char *a = g->args[i];
		char *rp = NULL;
		if (is_rev(g, a) || (strstr(a, "..") && a[0] != '.' && a[0] != '/' && !strstr(a, "/.."))) {
			if (strv_add(revs, strdup(a)))
				return oom(g);
			continue;
		}
		if (g->wd_rel && a[0] != '-') {
			struct wap_err e2 = { 0 };
			char *rel = NULL;
			int fd = -1;
			if (wap_ws_rel(g->ws, a, strlen(a), &rel, &e2)) {
				/* not a revision, and a path outside the root */
				*g->err = e2;
				return -1;
			}
			fd = wap_ws_open(g->ws, rel, O_PATH | O_NOFOLLOW, 0, WAP_ACC_READ, &e2);
			free(rel);
			wap_err_release(&e2);
			if (fd >= 0) {
				close(fd);
				if (repo_path(g, a, access, &rp) || strv_add(paths, rp))
					return g->err->kind ? -1 : oom(g);
				continue;
			}
		}
		return wap_err_set(g->err, WAP_E_INVALID,
				   "Unknown revision or path not in the working tree: '%s' (put paths after '--')", a);
	}
	after = dd < g->nargs ? g->args + dd + 1 : NULL;
	return collect_paths(g, after, after ? g->nargs - dd - 1 : 0, access, paths);
}

static int build_diff(struct g *g, struct strv *revs, struct strv *paths, bool staged, git_diff **out)
{
	git_diff_options o;
	git_tree *ta = NULL, *tb = NULL;
	git_commit *head = NULL;
	int e = 0, rc = -1;

	*out = NULL;
	if (diff_opts(g, &o, paths))
		return -1;
	if (revs->n > 2)
		return wap_err_set(g->err, WAP_E_INVALID, "Too many revisions: give at most two");
	if (revs->n == 0) {
		if (!staged && need_workdir(g))
			return -1;
		if (staged) {
			if (head_commit(g, &head))
				return -1;
			if (head && (e = git_commit_tree(&ta, head)))
				goto lgfail;
			e = git_diff_tree_to_index(out, g->repo, ta, NULL, &o);
		} else {
			e = git_diff_index_to_workdir(out, g->repo, NULL, &o);
		}
	} else if (revs->n == 1 && strstr(revs->v[0], "..")) {
		char *r = revs->v[0], *dots = strstr(r, ".."), *a, *b;
		bool three = dots[2] == '.';
		a = strndup(r, dots - r);
		b = strdup(dots + (three ? 3 : 2));
		if (!a || !b) {
			free(a), free(b);
			return oom(g);
		}
		if (three) {
			git_commit *ca = NULL, *cb = NULL;
			git_oid base;
			if (!resolve_commit(g, *a ? a : "HEAD", &ca) && !resolve_commit(g, *b ? b : "HEAD", &cb)) {
				e = git_merge_base(&base, g->repo, git_commit_id(ca), git_commit_id(cb));
				if (e)
					lg(g, e, "no merge base of '%s' and '%s'", *a ? a : "HEAD", *b ? b : "HEAD");
				else {
					char h[GIT_OID_HEXSZ + 1];
					oid_hex(&base, h);
					if (!rev_tree(g, h, &ta))
						rev_tree(g, *b ? b : "HEAD", &tb);
				}
			}
			git_commit_free(ca);
			git_commit_free(cb);
		} else if (!rev_tree(g, *a ? a : "HEAD", &ta)) {
			rev_tree(g, *b ? b : "HEAD", &tb);
		}
		free(a);
		free(b);
		if (g->err->kind)
			goto out;
		e = git_diff_tree_to_tree(out, g->repo, ta, tb, &o);
	} else if (revs->n == 1) {
		if (rev_tree(g, revs->v[0], &ta))
			goto out;
		if (staged)
			e = git_diff_tree_to_index(out, g->repo, ta, NULL, &o);
		else if (!need_workdir(g))
			e = git_diff_tree_to_workdir_with_index(out, g->repo, ta, &o);
		else
			goto out;
	} else {
		if (rev_tree(g, revs->v[0], &ta) || rev_tree(g, revs->v[1], &tb))
			goto out;
		e = git_diff_tree_to_tree(out, g->repo, ta, tb, &o);
	}
lgfail:
	if (e) {
		lg(g, e, "cannot compute the diff");
		goto out;
	}
	if (find_renames(g, *out))
		goto out;
	rc = 0;
out:
	if (rc) {
		git_diff_free(*out);
		*out = NULL;
	}
	git_commit_free(head);
	git_tree_free(ta);
	git_tree_free(tb);
	return rc;
}

static int op_diff(struct g *g, json_t **res)
{
	struct strv revs = { 0 }, paths = { 0 };
	git_diff *d = NULL;
	json_t *r = NULL;
	int rc = -1;

	if (split_revs_paths(g, &revs, &paths, WAP_ACC_READ))
		goto out;
	if (str_key(g, "rev") && strv_add(&revs, strdup(str_key(g, "rev")))) {
		oom(g);
		goto out;
	}
	if (build_diff(g, &revs, &paths, bool_key(g, "staged"), &d))
		goto out;
	r = json_object();
	if (diff_result(g, d, r, bool_key(g, "stat"), bool_key(g, "name_only")))
		goto out;
	*res = r;
	r = NULL;
	rc = 0;
out:
	json_decref(r);
	git_diff_free(d);
	strv_free(&revs);
	strv_free(&paths);
	return rc;
}

/* ---- log and show ---- */

static void iso_date(git_time_t t, int offset_min, char out[40])
{
	time_t lt = (time_t)t + offset_min * 60;
	struct tm tm;
	int off = offset_min < 0 ? -offset_min : offset_min;

	gmtime_r(&lt, &tm);
	snprintf(out, 40, "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 offset_min < 0 ? '-' : '+', off / 60, off % 60);
}

static json_t *commit_json(git_commit *c)
{
	const git_signature *a = git_commit_author(c), *cm = git_commit_committer(c);
	const char *msg = git_commit_message(c), *sum = git_commit_summary(c);
	char h[GIT_OID_HEXSZ + 1], ad[40], cd[40];
	size_t ml = msg ? strlen(msg) : 0;
	json_t *parents = json_array(), *o;

	oid_hex(git_commit_id(c), h);
	iso_date(a->when.time, a->when.offset, ad);
	iso_date(cm->when.time, cm->when.offset, cd);
	while (ml && (msg[ml - 1] == '\n' || msg[ml - 1] == ' ' || msg[ml - 1] == '\t'))
		ml--;
	for (unsigned i = 0; i < git_commit_parentcount(c); i++)
		json_array_append_new(parents, oid_json(git_commit_parent_id(c, i)));
	o = json_pack("{s:s, s:s#, s:s, s:s#, s:s, s:s, s:s, s:s, s:s, s:s, s:o}",
		      "hash", h, "shortHash", h, (int)7, "subject", sum ? sum : "",
		      "message", msg ? msg : "", (int)ml, "author", a->name, "authorEmail", a->email,
		      "date", ad, "committer", cm->name, "committerEmail", cm->email,
		      "commitDate", cd, "parents", parents);
	return o;
}

/* Dates for --since/--until: @EPOCH, "N units ago", now, yesterday, or
 * YYYY-MM-DD[( |T)HH:MM[:SS]][Z|(+|-)HH[:]MM] (local time without a zone). */
static int parse_when(struct g *g, const char *s, const char *opt, git_time_t *out)
{
	static const struct { const char *u; long secs; } units[] = {
		{ "second", 1 }, { "minute", 60 }, { "hour", 3600 }, { "day", 86400 },
		{ "week", 604800 }, { "month", 2592000 }, { "year", 31536000 }, { NULL, 0 } };
	time_t now = time(NULL);
	long long n;
	char unit[32], rest[8], rel[128];
	int y, mo, d, H = 0, M = 0, S = 0, used = 0, k;
	struct tm tm = { 0 };
	const char *p;

	if (s[0] == '@' && sscanf(s + 1, "%lld%n", &n, &used) == 1 && !s[1 + used]) {
		*out = n;
		return 0;
	}
	if (!strcmp(s, "now")) {
		*out = now;
		return 0;
	}
	if (!strcmp(s, "yesterday")) {
		*out = now - 86400;
		return 0;
	}
	snprintf(rel, sizeof(rel), "%s", s);
	for (char *q = rel; *q; q++)
		if (*q == '.' || *q == '_')
			*q = ' ';
	if (sscanf(rel, "%lld %31[a-z] %7s", &n, unit, rest) == 3 && !strcmp(rest, "ago") && n >= 0) {
		size_t ul = strlen(unit);
		if (ul > 1 && unit[ul - 1] == 's')
			unit[ul - 1] = 0;
		for (k = 0; units[k].u; k++)
			if (!strcmp(unit, units[k].u)) {
				*out = now - n * units[k].secs;
				return 0;
			}
	}
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31) {
		p = s + used;
		if ((*p == 'T' || *p == ' ') && sscanf(p + 1, "%2d:%2d%n", &H, &M, &used) == 2) {
			p += 1 + used;
			if (*p == ':' && sscanf(p + 1, "%2d%n", &S, &used) == 1)
				p += 1 + used;
		}
		tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d;
		tm.tm_hour = H, tm.tm_min = M, tm.tm_sec = S;
		if (!*p) {
			tm.tm_isdst = -1;
			*out = mktime(&tm);
			return 0;
		}
		if (!strcmp(p, "Z")) {
			*out = timegm(&tm);
			return 0;
		}
		if (*p == '+' || *p == '-') {
			int oh, om = 0;
			if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &used) == 2 ||
			    sscanf(p + 1, "%2d%2d%n", &oh, &om, &used) == 2) {
				if (!p[1 + used]) {
					long off = (oh * 60 + om) * 60;
					*out = timegm(&tm) - (*p == '+' ? off : -off);
					return 0;
				}
			}
		}
	}
	return wap_err_set(g->err, WAP_E_INVALID,
			   "Invalid date for --%s: '%s' (use YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM], @EPOCH or 'N days ago')",
			   opt, s);
}

/* ---- the history walk, as git log does it ----
 * Commits come out of a queue ordered by committer date, newest first
 * (equal dates in the order they were queued: git's
 * commit_list_insert_by_date); a commit older than --since ends its line
 * of history; with paths, a commit that changes none of them is not shown,
 * and a merge that is TREESAME to a parent follows that parent only (git's
 * default history simplification). */
struct oidset {
	git_oid *v;
	size_t cap, n;
};

static size_t oid_hash(const git_oid *id)
{
	size_t h;

	memcpy(&h, id->id, sizeof(h));
	return h;
}

static bool oidset_has(const struct oidset *s, const git_oid *id)
{
	if (!s->cap)
		return false;
	for (size_t i = oid_hash(id) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (git_oid_is_zero(&s->v[i]))
			return false;
		if (git_oid_equal(&s->v[i], id))
			return true;
	}
}

/* 1 if added, 0 if present, -1 out of memory */
static int oidset_add(struct oidset *s, const git_oid *id)
{
	size_t i;

	if (oidset_has(s, id))
		return 0;
	if ((s->n + 1) * 2 > s->cap) {
		struct oidset b = { calloc(s->cap ? s->cap * 2 : 64, sizeof(git_oid)), s->cap ? s->cap * 2 : 64, 0 };
		if (!b.v)
			return -1;
		for (size_t k = 0; k < s->cap; k++)
			if (!git_oid_is_zero(&s->v[k]))
				oidset_add(&b, &s->v[k]);
		free(s->v);
		*s = b;
	}
	for (i = oid_hash(id) & (s->cap - 1); !git_oid_is_zero(&s->v[i]); i = (i + 1) & (s->cap - 1))
		;
	git_oid_cpy(&s->v[i], id);
	s->n++;
	return 1;
}

struct cqueue {
	git_commit **v;
	size_t n, cap;
};

static int cq_insert(struct cqueue *q, git_commit *c)
{
	git_time_t t = git_commit_time(c);
	size_t i = 0;

	if (q->n == q->cap) {
		size_t nc = q->cap ? q->cap * 2 : 16;
		git_commit **nv = realloc(q->v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		q->v = nv;
		q->cap = nc;
	}
	while (i < q->n && git_commit_time(q->v[i]) >= t)
		i++;
	memmove(q->v + i + 1, q->v + i, (q->n - i) * sizeof(*q->v));
	q->v[i] = c;
	q->n++;
	return 0;
}

static git_commit *cq_pop(struct cqueue *q)
{
	git_commit *c;

	if (!q->n)
		return NULL;
	c = q->v[0];
	memmove(q->v, q->v + 1, --q->n * sizeof(*q->v));
	return c;
}

/* Is C's tree the same as its parent I's (or, for I < 0, the empty tree's)
 * at PATHS? */
static int treesame(struct g *g, git_commit *c, int i, struct strv *paths, bool *same)
{
	git_diff_options o;
	git_commit *p = NULL;
	git_tree *t = NULL, *pt = NULL;
	git_diff *d = NULL;
	int e;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.pathspec = strv_arr(paths);
	if (!(e = git_commit_tree(&t, c)) &&
	    (i < 0 || (!(e = git_commit_parent(&p, c, i)) && !(e = git_commit_tree(&pt, p)))))
		e = git_diff_tree_to_tree(&d, g->repo, pt, t, &o);
	if (!e)
		*same = git_diff_num_deltas(d) == 0;
	git_diff_free(d);
	git_tree_free(pt);
	git_tree_free(t);
	git_commit_free(p);
	return e ? lg(g, e, "cannot compare commits") : 0;
}

/* Mark every commit reachable from REV as hidden (the A of A..B). */
static int hide_from(struct g *g, const char *rev, struct oidset *hidden)
{
	git_revwalk *w = NULL;
	git_commit *c = NULL;
	git_oid id;
	int e;

	if (resolve_commit(g, rev, &c))
		return -1;
	if (!(e = git_revwalk_new(&w, g->repo)) && !(e = git_revwalk_push(w, git_commit_id(c)))) {
		while (!(e = git_revwalk_next(&id, w)))
			if (oidset_add(hidden, &id) < 0) {
				e = -1;
				break;
			}
	}
	git_revwalk_free(w);
	git_commit_free(c);
	if (e && e != GIT_ITEROVER)
		return lg(g, e, "cannot walk the history");
	git_error_clear();
	return 0;
}

static int op_log(struct g *g, json_t **res)
{
	struct strv revs = { 0 }, paths = { 0 }, starts = { 0 };
	struct oidset seen = { 0 }, hidden = { 0 };
	struct cqueue q = { 0 };
	long long max = 50;
	git_time_t since = 0, until = 0;
	bool has_since = false, has_until = false, truncated = false, filter;
	const char *s;
	json_t *entries = NULL;
	git_commit *c = NULL;
	int rc = -1, k;

	if ((k = wap_req_int(g->req, "max_count", &max, g->err)) < 0)
		return -1;
	if (max < 0)
		return wap_err_set(g->err, WAP_E_INVALID, "--max-count must not be negative");
	if ((s = str_key(g, "since"))) {
		if (parse_when(g, s, "since", &since))
			return -1;
		has_since = true;
	}
	if ((s = str_key(g, "until"))) {
		if (parse_when(g, s, "until", &until))
			return -1;
		has_until = true;
	}
	if (split_revs_paths(g, &revs, &paths, WAP_ACC_READ))
		goto out;
	if ((s = str_key(g, "rev")) && strv_add(&revs, strdup(s))) {
		oom(g);
		goto out;
	}
	filter = paths.n && !strv_has_root(&paths);
	entries = json_array();
	/* the starting points; A..B hides what A reaches */
	for (size_t i = 0; i < revs.n; i++) {
		char *dots = strstr(revs.v[i], "..");
		if (!dots) {
			if (strv_add(&starts, strdup(revs.v[i])))
				goto nomem;
			continue;
		}
		if (dots[2] == '.') {
			wap_err_set(g->err, WAP_E_INVALID, "Unsupported revision range for log: '%s' (use A..B)",
				    revs.v[i]);
			goto out;
		}
		*dots = 0;
		if (hide_from(g, *revs.v[i] ? revs.v[i] : "HEAD", &hidden))
			goto out;
		if (strv_add(&starts, strdup(dots[2] ? dots + 2 : "HEAD")))
			goto nomem;
	}
	if (!revs.n) {
		if (head_commit(g, &c))
			goto out;
		if (!c)
			goto done;	/* no commits yet */
	}
	for (size_t i = 0; i <= starts.n; i++) {
		if (i < starts.n && resolve_commit(g, starts.v[i], &c))
			goto out;
		if (!c)
			continue;
		if (oidset_add(&seen, git_commit_id(c)) != 1 || cq_insert(&q, c)) {
			git_commit_free(c);
			c = NULL;
			if (g->err->kind)
				goto out;
			continue;
		}
		c = NULL;
	}
	while ((c = cq_pop(&q))) {
		git_time_t t = git_commit_time(c);
		unsigned np = git_commit_parentcount(c);
		int follow = -1;	/* -1: every parent */
		bool show = true, same;

		if (oidset_has(&hidden, git_commit_id(c)) || (has_since && t < since)) {
			git_commit_free(c);
			continue;
		}
		if (filter) {
			if (np <= 1) {
				if (treesame(g, c, np ? 0 : -1, &paths, &same))
					goto out;
				show = !same;
			} else {
				for (unsigned i = 0; i < np && follow < 0; i++) {
					if (treesame(g, c, i, &paths, &same))
						goto out;
					if (same)
						follow = i;
				}
				show = follow < 0;
			}
		}
		for (unsigned i = 0; i < np; i++) {
			git_commit *p = NULL;
			int added;
			if (follow >= 0 && (int)i != follow)
				continue;
			added = oidset_add(&seen, git_commit_parent_id(c, i));
			if (added < 0)
				goto nomem;
			if (!added)
				continue;
			if (git_commit_parent(&p, c, i)) {
				lg(g, -1, "cannot read a parent commit");
				goto out;
			}
			if (cq_insert(&q, p)) {
				git_commit_free(p);
				goto nomem;
			}
		}
		if (show && !(has_until && t > until)) {
			if ((long long)json_array_size(entries) >= max) {
				truncated = true;
				break;
			}
			json_array_append_new(entries, commit_json(c));
		}
		git_commit_free(c);
	}
done:
	git_error_clear();
	*res = json_pack("{s:o, s:b}", "entries", entries, "isTruncated", truncated);
	entries = NULL;
	rc = 0;
	goto out;
nomem:
	oom(g);
out:
	git_commit_free(c);
	while ((c = cq_pop(&q)))
		git_commit_free(c);
	free(q.v);
	free(seen.v);
	free(hidden.v);
	json_decref(entries);
	strv_free(&revs);
	strv_free(&paths);
	strv_free(&starts);
	return rc;
}

static int op_show(struct g *g, json_t **res)
{
	const char *rev = str_key(g, "rev");
	git_commit *c = NULL, *p = NULL;
	git_tree *t = NULL, *pt = NULL;
	git_diff *d = NULL;
	git_diff_options o;
	struct strv none = { 0 };
	json_t *r = NULL;
	int rc = -1, e;

	if (!rev)
		rev = g->nargs ? g->args[0] : "HEAD";
	if (g->nargs > (str_key(g, "rev") ? 0 : 1))
		return wap_err_set(g->err, WAP_E_INVALID, "show takes one revision");
	if (resolve_commit(g, rev, &c))
		return -1;
	r = commit_json(c);
	if (git_commit_parentcount(c) > 1) {
		json_object_set_new(r, "diff", json_string(""));
		json_object_set_new(r, "files", json_array());
		goto done;
	}
	if (diff_opts(g, &o, &none))
		goto out;
	if ((e = git_commit_tree(&t, c)) ||
	    (git_commit_parentcount(c) && ((e = git_commit_parent(&p, c, 0)) || (e = git_commit_tree(&pt, p)))) ||
	    (e = git_diff_tree_to_tree(&d, g->repo, pt, t, &o))) {
		lg(g, e, "cannot compute the diff of %s", rev);
		goto out;
	}
	if (find_renames(g, d) || diff_result(g, d, r, bool_key(g, "stat"), false))
		goto out;
done:
	*res = r;
	r = NULL;
	rc = 0;
out:
	json_decref(r);
	git_diff_free(d);
	git_tree_free(t);
	git_tree_free(pt);
	git_commit_free(p);
	git_commit_free(c);
	return rc;
}

/* ---- the index: add, unstage, commit ---- */

/* Is repository path RP (not "") in the index, itself or as a directory? */
static bool in_index(git_index *idx, const char *rp)
{
	size_t n = strlen(rp), pos;

	if (git_index_get_bypath(idx, rp, 0))
		return true;
	if (!git_index_find_prefix(&pos, idx, rp)) {
		const git_index_entry *e = git_index_get_byindex(idx, pos);
		if (e && !strncmp(e->path, rp, n) && e->path[n] == '/')
			return true;
	}
	git_error_clear();
	return false;
}

/* Stage repository paths PATHS as `git add` does: new and changed files,
 * deletions, directories recursively.  Each path is checked through the
 * sandbox, and one reached through a symlinked directory is refused. */
static int stage_paths(struct g *g, git_index *idx, struct strv *paths, bool force)
{
	git_strarray arr = strv_arr(paths);
	unsigned flags = GIT_INDEX_ADD_DISABLE_PATHSPEC_MATCH | (force ? GIT_INDEX_ADD_FORCE : 0);
	int e;

	for (size_t i = 0; i < paths->n; i++) {
		const char *rp = paths->v[i];
		char *rel, *parent, *real = NULL, *slash;
		struct wap_err e2 = { 0 };
		struct stat st;
		int fd;

		if (!*rp)
			continue;
		rel = ws_path(g, rp);
		if (!rel)
			return oom(g);
		fd = wap_ws_open(g->ws, rel, O_PATH | O_NOFOLLOW, 0, WAP_ACC_WRITE, &e2);
		if (fd < 0 && e2.kind != WAP_E_NOT_FOUND) {
			*g->err = e2;
			free(rel);
			return -1;
		}
		wap_err_release(&e2);
		if (fd < 0) {
			free(rel);
			if (!in_index(idx, rp))
				return wap_err_set(g->err, WAP_E_NOT_FOUND,
						   "pathspec '%s' did not match any files", rp);
			continue;
		}
		if (fstat(fd, &st)) {
			st.st_mode = 0;
		}
		/* the directory holding it must be where its name says */
		slash = strrchr(rel, '/');
		parent = slash ? strndup(rel, slash - rel) : strdup(".");
		if (parent) {
			int pfd = wap_ws_open(g->ws, parent, O_PATH | O_DIRECTORY, 0, WAP_ACC_READ, &e2);
			wap_err_release(&e2);
			if (pfd >= 0) {
				real = wap_ws_fd_rel(g->ws, pfd);
				close(pfd);
			}
		}
		close(fd);
		if (!parent || !real || strcmp(real, parent)) {
			wap_err_set(g->err, WAP_E_INVALID, "'%s' is beyond a symbolic link", rp);
			free(parent), free(real), free(rel);
			return -1;
		}
		free(parent), free(real), free(rel);
		if (!force && !S_ISDIR(st.st_mode) && !in_index(idx, rp)) {
			int ign = 0;
			if (!git_ignore_path_is_ignored(&ign, g->repo, rp) && ign)
				return wap_err_set(g->err, WAP_E_INVALID,
						   "The path '%s' is ignored by a .gitignore file (use --force to add it)", rp);
			git_error_clear();
		}
	}
	if (strv_has_root(paths))
		arr.count = 0;
	if ((e = git_index_add_all(idx, &arr, flags, NULL, NULL)) ||
	    (e = git_index_update_all(idx, &arr, NULL, NULL)) || (e = git_index_write(idx)))
		return lg(g, e, "cannot stage");
	return 0;
}

static json_t *strv_json(struct strv *s)
{
	json_t *a = json_array();

	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(a, json_string(*s->v[i] ? s->v[i] : "."));
	return a;
}

static int op_add(struct g *g, json_t **res)
{
	struct strv paths = { 0 };
	git_index *idx = NULL;
	int rc = -1, e;

	if (need_workdir(g) || collect_paths(g, g->args, g->nargs, WAP_ACC_WRITE, &paths))
		goto out;
	if (!paths.n) {
		wap_err_set(g->err, WAP_E_INVALID, "Nothing specified, nothing added: name the paths to stage");
		goto out;
	}
	if ((e = git_repository_index(&idx, g->repo))) {
		lg(g, e, "cannot read the index");
		goto out;
	}
	if (stage_paths(g, idx, &paths, bool_key(g, "force")))
		goto out;
	*res = json_pack("{s:b, s:o, s:s+}", "success", 1, "paths", strv_json(&paths),
			 "summary", "Staged ", paths.n == 1 ? (*paths.v[0] ? paths.v[0] : ".") : "the paths");
	rc = 0;
out:
	git_index_free(idx);
	strv_free(&paths);
	return rc;
}

static int op_unstage(struct g *g, json_t **res)
{
	struct strv paths = { 0 };
	git_commit *h = NULL;
	git_strarray arr;
	int rc = -1, e;

	if (need_workdir(g) || collect_paths(g, g->args, g->nargs, WAP_ACC_WRITE, &paths))
		goto out;
	if (!paths.n) {
		wap_err_set(g->err, WAP_E_INVALID, "Nothing specified: name the paths to unstage");
		goto out;
	}
	if (head_commit(g, &h))
		goto out;
	arr = strv_arr(&paths);
	if (strv_has_root(&paths))
		arr.count = 0;
	if (h) {
		e = git_reset_default(g->repo, (git_object *)h, &arr);
	} else {
		/* no commits yet: unstaging is removing from the index */
		git_index *idx = NULL;
		e = git_repository_index(&idx, g->repo);
		if (!e)
			e = git_index_remove_all(idx, &arr, NULL, NULL);
		if (!e)
			e = git_index_write(idx);
		git_index_free(idx);
	}
	if (e) {
		lg(g, e, "cannot unstage");
		goto out;
	}
	*res = json_pack("{s:b, s:o, s:s+}", "success", 1, "paths", strv_json(&paths),
			 "summary", "Unstaged ", paths.n == 1 ? (*paths.v[0] ? paths.v[0] : ".") : "the paths");
	rc = 0;
out:
	git_commit_free(h);
	strv_free(&paths);
	return rc;
}

static int signature(struct g *g, git_signature **sig)
{
	const char *n = getenv("WAP_GIT_AUTHOR_NAME"), *m = getenv("WAP_GIT_AUTHOR_EMAIL");
	const char *gn = getenv("GIT_AUTHOR_NAME"), *gm = getenv("GIT_AUTHOR_EMAIL");
	int e;

	/* git's own variables win over the config, as in git */
	if (gn && *gn && gm && *gm) {
		if ((e = git_signature_now(sig, gn, gm)))
			return lg(g, e, "invalid GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL");
		return 0;
	}
	if (!git_signature_default(sig, g->repo))
		return 0;
	git_error_clear();
	if (n && *n && m && *m) {
		if ((e = git_signature_now(sig, n, m)))
			return lg(g, e, "invalid WAP_GIT_AUTHOR_NAME/WAP_GIT_AUTHOR_EMAIL");
		return 0;
	}
	return wap_err_set(g->err, WAP_E_INVALID,
			   "No author identity: set user.name and user.email in the git config, "
			   "or GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL (or WAP_GIT_AUTHOR_NAME and "
			   "WAP_GIT_AUTHOR_EMAIL, used when the config has none)");
}

struct mergeheads {
	git_oid ids[15];
	size_t n;
};

static int mergehead_cb(const git_oid *id, void *p)
{
	struct mergeheads *m = p;

	if (m->n < 15)
		git_oid_cpy(&m->ids[m->n++], id);
	return 0;
}

static int op_commit(struct g *g, json_t **res)
{
	const char *msg = str_key(g, "message");
	struct strv paths = { 0 };
	git_buf buf = { 0 };
	git_index *idx = NULL;
	git_commit *h = NULL;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	git_oid tid, cid;
	char hex[GIT_OID_HEXSZ + 1], *branch = NULL;
	git_commit *parents[16];
	size_t np = 0;
	struct mergeheads mh = { { { { 0 } } }, 0 };
	bool detached;
	int rc = -1, e;

	if (need_workdir(g))
		return -1;
	if (!msg)
		return wap_err_set(g->err, WAP_E_INVALID, "missing --message (see 'wap git --help')");
	if ((e = git_message_prettify(&buf, msg, 0, '#'))) {
		lg(g, e, "invalid message");
		goto out;
	}
	if (!buf.size) {
		wap_err_set(g->err, WAP_E_INVALID, "Aborting commit due to empty commit message");
		goto out;
	}
	if (collect_paths(g, g->args, g->nargs, WAP_ACC_WRITE, &paths))
		goto out;
	if ((e = git_repository_index(&idx, g->repo))) {
		lg(g, e, "cannot read the index");
		goto out;
	}
	if (paths.n && stage_paths(g, idx, &paths, false))
		goto out;
	if (git_index_has_conflicts(idx)) {
		wap_err_set(g->err, WAP_E_CONFLICT,
			    "Cannot commit: there are unmerged paths (resolve the conflicts and add them)");
		goto out;
	}
	if ((e = git_index_write_tree(&tid, idx))) {
		lg(g, e, "cannot write the tree");
		goto out;
	}
	if (head_commit(g, &h))
		goto out;
	if ((h && git_oid_equal(&tid, git_commit_tree_id(h))) || (!h && !git_index_entrycount(idx))) {
		wap_err_set(g->err, WAP_E_INVALID,
			    "Nothing to commit: no staged changes (add them first, or name the paths)");
		goto out;
	}
	if (signature(g, &sig))
		goto out;
	/* a merge in progress (MERGE_HEAD) gives the commit its other parents */
	if (h) {
		parents[np++] = h;
		if (git_repository_state(g->repo) == GIT_REPOSITORY_STATE_MERGE)
			git_repository_mergehead_foreach(g->repo, mergehead_cb, &mh);
		git_error_clear();
		for (size_t i = 0; i < mh.n && np < 16; i++)
			if (!git_commit_lookup(&parents[np], g->repo, &mh.ids[i]))
				np++;
		git_error_clear();
	}
	if ((e = git_tree_lookup(&tree, g->repo, &tid)) ||
	    (e = git_commit_create(&cid, g->repo, "HEAD", sig, sig, NULL, buf.ptr, tree, np,
				   (const git_commit **)parents))) {
		lg(g, e, "cannot commit");
		goto out;
	}
	if (np > 1)
		git_repository_state_cleanup(g->repo);
	oid_hex(&cid, hex);
	branch = head_branch(g->repo, &detached);
	{
		const char *nl = strchr(buf.ptr, '\n');
		*res = json_pack("{s:b, s:s, s:s#, s:o, s:b, s:s#}", "success", 1, "hash", hex,
				 "shortHash", hex, (int)7,
				 "branch", branch ? json_string(branch) : json_null(), "rootCommit", !h,
				 "subject", buf.ptr, nl ? (int)(nl - buf.ptr) : (int)buf.size);
	}
	rc = 0;
out:
	free(branch);
	git_signature_free(sig);
	git_tree_free(tree);
	for (size_t i = 1; i < np; i++)
		git_commit_free(parents[i]);
	git_commit_free(h);
	git_index_free(idx);
	git_buf_dispose(&buf);
	strv_free(&paths);
	return rc;
}

/* ---- branches and checkout ---- */

static const char *name_arg(struct g *g, size_t i)
{
	const char *b = str_key(g, "branch");

	if (b)
		return b;
	return i < g->nargs ? g->args[i] : NULL;
}

static int start_point(struct g *g, git_commit **out)
{
	const char *from = str_key(g, "from");

	if (from)
		return resolve_commit(g, from, out);
	if (head_commit(g, out))
		return -1;
	if (!*out)
		return wap_err_set(g->err, WAP_E_INVALID, "No commits yet: nothing to start a branch from");
	return 0;
}

static int valid_branch_name(struct g *g, const char *name)
{
	int ok = 0;

	if (name[0] == '-' || git_branch_name_is_valid(&ok, name) || !ok) {
		git_error_clear();
		return wap_err_set(g->err, WAP_E_INVALID, "Invalid branch name: '%s'", name);
	}
	return 0;
}

static int op_branch(struct g *g, json_t **res)
{
	const char *name = name_arg(g, 0);
	bool force = bool_key(g, "force");
	git_reference *ref = NULL;
	git_commit *c = NULL;
	char hex[GIT_OID_HEXSZ + 1];
	int rc = -1, e;

	if (bool_key(g, "create") && bool_key(g, "delete"))
		return wap_err_set(g->err, WAP_E_INVALID, "--create and --delete exclude each other");
	if (bool_key(g, "create") || bool_key(g, "delete")) {
		if (g->ws->pol.read_only)
			return wap_err_set(g->err, WAP_E_RESTRICTED,
					   "Path restricted: git branch writes, and the workspace is read-only");
		if (!name)
			return wap_err_set(g->err, WAP_E_INVALID, "missing the branch NAME");
		if (g->nargs > (str_key(g, "branch") ? 0 : 1))
			return wap_err_set(g->err, WAP_E_INVALID, "unexpected argument '%s'", g->args[g->nargs - 1]);
	}
	if (bool_key(g, "create")) {
		if (valid_branch_name(g, name) || start_point(g, &c))
			goto out;
		if (!force && !git_branch_lookup(&ref, g->repo, name, GIT_BRANCH_LOCAL)) {
			wap_err_set(g->err, WAP_E_EXISTS, "A branch named '%s' already exists", name);
			goto out;
		}
		git_reference_free(ref);
		ref = NULL;
		if ((e = git_branch_create(&ref, g->repo, name, c, force))) {
			lg(g, e, "cannot create branch '%s'", name);
			goto out;
		}
		oid_hex(git_commit_id(c), hex);
		*res = json_pack("{s:b, s:s, s:s, s:s+++}", "success", 1, "branch", name, "hash", hex,
				 "summary", "Created branch ", name, " at ", hex);
		rc = 0;
	} else if (bool_key(g, "delete")) {
		git_commit *h = NULL;
		const git_oid *tip;
		if ((e = git_branch_lookup(&ref, g->repo, name, GIT_BRANCH_LOCAL))) {
			git_error_clear();
			wap_err_set(g->err, WAP_E_NOT_FOUND, "Branch not found: '%s'", name);
			goto out;
		}
		if (git_branch_is_head(ref)) {
			wap_err_set(g->err, WAP_E_CONFLICT, "Cannot delete the branch '%s' which is checked out", name);
			goto out;
		}
		tip = git_reference_target(ref);
		if (!force && tip) {
			if (head_commit(g, &h))
				goto out;
			if (!h || (!git_oid_equal(git_commit_id(h), tip) &&
				   git_graph_descendant_of(g->repo, git_commit_id(h), tip) != 1)) {
				git_commit_free(h);
				wap_err_set(g->err, WAP_E_CONFLICT,
					    "The branch '%s' is not fully merged into HEAD (use --force to delete it)", name);
				goto out;
			}
			git_commit_free(h);
		}
		oid_hex(tip, hex);
		if (delete_branch(g, ref, name))
			goto out;
		*res = json_pack("{s:b, s:s, s:s, s:s++++}", "success", 1, "branch", name, "hash", hex,
				 "summary", "Deleted branch ", name, " (was ", hex, ")");
		rc = 0;
	} else {
		git_branch_iterator *it = NULL;
		git_branch_t type;
		json_t *list = json_array();
		char *cur;
		bool detached;

		if (g->nargs)
			return wap_err_set(g->err, WAP_E_INVALID,
					   "branch NAME needs --create or --delete (to switch, use checkout)");
		cur = head_branch(g->repo, &detached);
		if ((e = git_branch_iterator_new(&it, g->repo,
						 bool_key(g, "all") ? GIT_BRANCH_ALL : GIT_BRANCH_LOCAL))) {
			free(cur);
			json_decref(list);
			lg(g, e, "cannot list branches");
			goto out;
		}
		while (!git_branch_next(&ref, &type, it)) {
			const char *bn = NULL;
			json_t *b;
			if (git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC || git_branch_name(&bn, ref)) {
				git_reference_free(ref);
				continue;
			}
			b = json_pack("{s:s, s:b, s:b}", "name", bn,
				      "current", type == GIT_BRANCH_LOCAL && git_branch_is_head(ref) == 1,
				      "remote", type == GIT_BRANCH_REMOTE);
			if (git_reference_target(ref))
				json_object_set_new(b, "hash", oid_json(git_reference_target(ref)));
			if (type == GIT_BRANCH_LOCAL) {
				struct upstream u = { 0 };
				if (upstream_of(g, bn, &u) && u.tracking)
					json_object_set_new(b, "upstream", json_string(ref_short(u.tracking)));
				upstream_release(&u);
			}
			json_array_append_new(list, b);
			git_reference_free(ref);
		}
		ref = NULL;
		git_branch_iterator_free(it);
		git_error_clear();
		*res = json_pack("{s:o, s:o}", "branches", list, "current",
				 cur && !detached ? json_string(cur) : json_null());
		free(cur);
		rc = 0;
	}
out:
	git_reference_free(ref);
	git_commit_free(c);
	return rc;
}

struct conflicts {
	struct wap_sb sb;
	size_t n;
};

static int notify_cb(git_checkout_notify_t why, const char *path, const git_diff_file *b,
		     const git_diff_file *t, const git_diff_file *w, void *p)
{
	struct conflicts *c = p;

	(void)why, (void)b, (void)t, (void)w;
	if (c->n < 20)
		wap_sb_addf(&c->sb, "%s%s", c->n ? ", " : "", path);
	else if (c->n == 20)
		wap_sb_adds(&c->sb, ", ...");
	c->n++;
	return 0;
}

/* May a checkout write (or remove) repository path RP?  Not if
 * restrictedPaths denies it, and not through a symbolic link: libgit2
 * creates and removes files by path, so a tracked directory that the work
 * tree has as a link (d -> .git/hooks, d -> elsewhere/) would be written
 * through.  A leading link that is itself in the index is fine: libgit2
 * removes a tracked link before it writes beneath its name.  *OKDIR
 * caches the last directory found sound (the deltas come sorted). */
static int checkout_path_ok(struct g *g, git_index *idx, const char *rp, char **okdir)
{
	const char *slash = strrchr(rp, '/');
	size_t dl = slash ? (size_t)(slash - rp) : 0;

	if (restricted_rp(g, rp)) {
		char *rel = ws_path(g, rp);
		wap_err_set(g->err, WAP_E_RESTRICTED,
			    "Path restricted: the checkout would change %s, which restrictedPaths denies; "
			    "nothing was changed", rel ? rel : rp);
		free(rel);
		return -1;
	}
	if (!dl || !link_checks() || (*okdir && strlen(*okdir) == dl && !strncmp(*okdir, rp, dl)))
		return 0;
	for (const char *p = strchr(rp, '/'); p; p = strchr(p + 1, '/')) {
		char *pre = strndup(rp, p - rp), *rel = pre ? ws_path(g, pre) : NULL;
		struct wap_err e2 = { 0 };
		struct stat st;
		bool link = false, stop = true;
		int fd;

		if (!rel) {
			free(pre);
			return oom(g);
		}
		fd = wap_ws_open(g->ws, rel, O_PATH | O_NOFOLLOW, 0, WAP_ACC_READ, &e2);
		if (fd >= 0) {
			if (!fstat(fd, &st)) {
				link = S_ISLNK(st.st_mode);
				stop = !S_ISDIR(st.st_mode);
			}
			close(fd);
		}
		wap_err_release(&e2);
		if (link && !git_index_get_bypath(idx, pre, 0)) {
			wap_err_set(g->err, WAP_E_INVALID,
				    "'%s' is beyond a symbolic link: %s is a link where the checkout expects a "
				    "directory, and would be written through; remove the link first", rp, rel);
			free(pre), free(rel);
			return -1;
		}
		free(pre), free(rel);
		if (stop)
			break;
	}
	free(*okdir);
	*okdir = strndup(rp, dl);
	return 0;
}

/* Before a checkout of TARGET writes anything: every path it may change
 * (those where TARGET differs from HEAD, or from the index and work tree)
 * must pass checkout_path_ok(). */
static int checkout_preflight(struct g *g, git_object *target)
{
	git_diff_options o;
	git_object *tt = NULL;
	git_commit *h = NULL;
	git_tree *ht = NULL;
	git_index *idx = NULL;
	git_diff *d[2] = { NULL, NULL };
	char *okdir = NULL;
	int rc = -1, e;

	if (!link_checks() && !g->ws->pol.restricted.n)
		return 0;
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
	if ((e = git_object_peel(&tt, target, GIT_OBJECT_TREE)) ||
	    (e = git_repository_index(&idx, g->repo))) {
		lg(g, e, "cannot check out");
		goto out;
	}
	if (head_commit(g, &h))
		goto out;
	if (h && (e = git_commit_tree(&ht, h))) {
		lg(g, e, "cannot read HEAD");
		goto out;
	}
	if ((e = git_diff_tree_to_tree(&d[0], g->repo, ht, (git_tree *)tt, &o)) ||
	    (e = git_diff_tree_to_workdir_with_index(&d[1], g->repo, (git_tree *)tt, &o))) {
		lg(g, e, "cannot check out");
		goto out;
	}
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < git_diff_num_deltas(d[k]); i++) {
			const git_diff_delta *dd = git_diff_get_delta(d[k], i);
			if (checkout_path_ok(g, idx, dd->old_file.path, &okdir) ||
			    (strcmp(dd->new_file.path, dd->old_file.path) &&
			     checkout_path_ok(g, idx, dd->new_file.path, &okdir)))
				goto out;
		}
	rc = 0;
out:
	free(okdir);
	git_diff_free(d[0]);
	git_diff_free(d[1]);
	git_index_free(idx);
	git_tree_free(ht);
	git_commit_free(h);
	git_object_free(tt);
	return rc;
}

static void co_progress(const char *path, size_t done, size_t total, void *p)
{
	struct g *g = p;

	(void)path;
	if (g->call->progress && total) {
		int pct = (int)(100.0 * done / total);
		if (pct != g->last_pct) {
			g->last_pct = pct;
			g->call->progress(g->call->arg, done, total, "checking out files");
		}
	}
}

/* Check out TARGET's tree: safe (refusing to overwrite local changes,
 * which are named in the error) unless FORCE. */
static int checkout_to(struct g *g, git_object *target, bool force)
{
	git_checkout_options co;
	struct conflicts c = { WAP_SB_INIT, 0 };
	int e;

	if (checkout_preflight(g, target))
		return -1;
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = force ? GIT_CHECKOUT_FORCE : GIT_CHECKOUT_SAFE;
	/* a file is never written through a link at its own name */
	co.file_open_flags = O_CREAT | O_TRUNC | O_WRONLY | (link_checks() ? O_NOFOLLOW : 0) | O_CLOEXEC;
	co.notify_flags = GIT_CHECKOUT_NOTIFY_CONFLICT;
	co.notify_cb = notify_cb;
	co.notify_payload = &c;
	co.progress_cb = co_progress;
	co.progress_payload = g;
	e = git_checkout_tree(g->repo, target, &co);
	if (e && c.n) {
		wap_err_set(g->err, WAP_E_CONFLICT,
			    "Your local changes would be overwritten: %s (commit them, or use --force to discard them)",
			    c.sb.buf ? c.sb.buf : "");
		wap_sb_release(&c.sb);
		return -1;
	}
	wap_sb_release(&c.sb);
	if (e)
		return lg(g, e, "cannot check out");
	return 0;
}

/* The one remote-tracking branch REMOTE/NAME over all remotes, if exactly
 * one exists (git checkout's DWIM). */
static int dwim_remote(struct g *g, const char *name, git_reference **out, char **remote)
{
	struct strv rs = { 0 };
	git_config *cfg = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *ce;
	int found = 0;

	*out = NULL;
	*remote = NULL;
	/* the remotes: "remote.NAME.url" keys (not git_remote_list, see above) */
	if (!git_repository_config_snapshot(&cfg, g->repo) && !git_config_iterator_new(&it, cfg)) {
		while (!git_config_next(&ce, it)) {
			size_t n = strlen(ce->name);
			if (!strncmp(ce->name, "remote.", 7) && n > 11 && !strcmp(ce->name + n - 4, ".url"))
				strv_add(&rs, strndup(ce->name + 7, n - 11));
		}
	}
	git_config_iterator_free(it);
	git_config_free(cfg);
	for (size_t i = 0; i < rs.n; i++) {
		struct wap_sb sb = WAP_SB_INIT;
		git_reference *r = NULL;
		bool dup = false;
		for (size_t k = 0; k < i; k++)
			dup = dup || !strcmp(rs.v[k], rs.v[i]);
		wap_sb_addf(&sb, "refs/remotes/%s/%s", rs.v[i], name);
		if (!dup && sb.buf && !git_reference_lookup(&r, g->repo, sb.buf)) {
			found++;
			git_reference_free(*out);
			free(*remote);
			*out = r;
			*remote = strdup(rs.v[i]);
		}
		wap_sb_release(&sb);
	}
	strv_free(&rs);
	git_error_clear();
	if (found != 1) {
		git_reference_free(*out);
		free(*remote);
		*out = NULL;
		*remote = NULL;
	}
	return found == 1;
}

static int op_checkout(struct g *g, json_t **res)
{
	const char *name = name_arg(g, 0);
	bool force = bool_key(g, "force"), created = false, detached = false, exists;
	git_reference *ref = NULL, *rref = NULL;
	git_commit *c = NULL;
	git_object *peeled = NULL;
	char *remote = NULL, hex[GIT_OID_HEXSZ + 1] = "";
	struct wap_sb sum = WAP_SB_INIT;
	int rc = -1, e;

	if (need_workdir(g))
		return -1;
	if (!name)
		return wap_err_set(g->err, WAP_E_INVALID, "missing the BRANCH to check out");
	if (g->nargs > (str_key(g, "branch") ? 0 : 1))
		return wap_err_set(g->err, WAP_E_INVALID, "unexpected argument '%s' (checkout takes one branch)",
				   g->args[g->nargs - 1]);
	/* --create makes the branch if it is missing (the Agent Control
	 * Protocol's "create branch if missing"); an existing one is switched
	 * to, unless --from asks for a new start */
	exists = !git_branch_lookup(&ref, g->repo, name, GIT_BRANCH_LOCAL);
	git_error_clear();
	git_reference_free(ref);
	ref = NULL;
	if (bool_key(g, "create") && exists && str_key(g, "from"))
		return wap_err_set(g->err, WAP_E_EXISTS, "A branch named '%s' already exists", name);
	if (bool_key(g, "create") && !exists) {
		if (valid_branch_name(g, name))
			return -1;
		if (!str_key(g, "from")) {
			if (head_commit(g, &c))
				goto out;
			if (!c) {
				/* no commits yet: only HEAD moves */
				wap_sb_addf(&sum, "refs/heads/%s", name);
				if (!sum.buf || (e = git_repository_set_head(g->repo, sum.buf))) {
					lg(g, -1, "cannot switch to '%s'", name);
					goto out;
				}
				sum.len = 0;
				wap_sb_addf(&sum, "Switched to a new branch '%s'", name);
				created = true;
				goto done;
			}
		} else if (start_point(g, &c)) {
			goto out;
		}
		if ((e = git_branch_create(&ref, g->repo, name, c, 0))) {
			lg(g, e, "cannot create branch '%s'", name);
			goto out;
		}
		created = true;
		if (checkout_to(g, (git_object *)c, force)) {
			delete_branch(g, ref, name);
			goto out;
		}
	} else if (!git_branch_lookup(&ref, g->repo, name, GIT_BRANCH_LOCAL)) {
		if ((e = git_reference_peel(&peeled, ref, GIT_OBJECT_COMMIT))) {
			lg(g, e, "cannot read branch '%s'", name);
			goto out;
		}
		if (checkout_to(g, peeled, force))
			goto out;
	} else if (git_error_clear(), dwim_remote(g, name, &rref, &remote)) {
		struct wap_sb up = WAP_SB_INIT;
		if ((e = git_reference_peel(&peeled, rref, GIT_OBJECT_COMMIT)) ||
		    (e = git_branch_create(&ref, g->repo, name, (git_commit *)peeled, 0))) {
			lg(g, e, "cannot create branch '%s'", name);
			goto out;
		}
		created = true;
		if (checkout_to(g, peeled, force)) {
			delete_branch(g, ref, name);
			goto out;
		}
		wap_sb_addf(&up, "%s/%s", remote, name);
		if (up.buf)
			git_branch_set_upstream(ref, up.buf);
		wap_sb_release(&up);
		git_error_clear();
	} else {
		if (resolve_commit(g, name, &c)) {
			wap_err_set(g->err, WAP_E_NOT_FOUND, "Branch or revision not found: '%s'", name);
			goto out;
		}
		if (checkout_to(g, (git_object *)c, force))
			goto out;
		if ((e = git_repository_set_head_detached(g->repo, git_commit_id(c)))) {
			lg(g, e, "cannot move HEAD");
			goto out;
		}
		detached = true;
		oid_hex(git_commit_id(c), hex);
		wap_sb_addf(&sum, "HEAD is now at %.7s (detached)", hex);
		goto done;
	}
	if ((e = git_repository_set_head(g->repo, git_reference_name(ref)))) {
		lg(g, e, "cannot switch to '%s'", name);
		goto out;
	}
	oid_hex(git_reference_target(ref), hex);
	wap_sb_addf(&sum, created ? "Switched to a new branch '%s'" : "Switched to branch '%s'", name);
	if (remote)
		wap_sb_addf(&sum, " (tracking %s/%s)", remote, name);
done:
	if (sum.oom) {
		oom(g);
		goto out;
	}
	*res = json_pack("{s:b, s:s, s:b, s:b, s:s, s:s}", "success", 1, "branch", name,
			 "created", created, "detached", detached, "hash", hex, "summary", sum.buf);
	rc = 0;
out:
	wap_sb_release(&sum);
	free(remote);
	git_object_free(peeled);
	git_reference_free(rref);
	git_reference_free(ref);
	git_commit_free(c);
	return rc;
}

/* ---- remotes ---- */

enum { URL_LOCAL, URL_NET, URL_BAD };

static int url_kind(const char *url)
{
	static const char *const ok[] = { "https", "http", "ssh", "git", "ssh+git", "git+ssh", NULL };
	const char *sep = strstr(url, "://"), *colon, *slash;

	if (!strncmp(url, "file://", 7))
		return URL_LOCAL;
	if (sep) {
		for (int i = 0; ok[i]; i++)
			if ((size_t)(sep - url) == strlen(ok[i]) && !strncmp(url, ok[i], sep - url))
				return URL_NET;
		return URL_BAD;
	}
	colon = strchr(url, ':');
	slash = strchr(url, '/');
	if (colon && (!slash || colon < slash)) {
		/* scp-like [user@]host:path; anything else with a colon
		 * (ext::cmd, transport::address) is refused */
		if (colon == url || colon[1] == ':')
			return URL_BAD;
		for (const char *p = url; p < colon; p++)
			if (!isalnum((unsigned char)*p) && !strchr("._-@[]", *p))
				return URL_BAD;
		return URL_NET;
	}
	return URL_LOCAL;
}

/* A local URL (file://PATH or a path; relative to BASE, root-relative)
 * must name a directory beneath the root: *ABS gets its real absolute
 * path, which is what libgit2 is then given. */
static int confine_local(struct g *g, const char *url, const char *base, bool push, char **abs)
{
	const char *path = !strncmp(url, "file://", 7) ? url + 7 : url;
	struct wap_sb sb = WAP_SB_INIT;
	char *rel = NULL, *real = NULL, *gd = NULL, *cd = NULL;
	int fd, rc = -1;

	*abs = NULL;
	if (!*path)
		return wap_err_set(g->err, WAP_E_INVALID, "Invalid URL: '%s'", url);
	if (path[0] == '/' || !strcmp(base, "."))
		wap_sb_adds(&sb, path);
	else
		wap_sb_addf(&sb, "%s/%s", base, path);
	if (sb.oom) {
		oom(g);
		goto out;
	}
	if (wap_ws_rel(g->ws, sb.buf, sb.len, &rel, g->err))
		goto out;
	fd = wap_ws_open(g->ws, rel, O_PATH | O_DIRECTORY, 0, WAP_ACC_READ, g->err);
	if (fd < 0)
		goto out;
	real = wap_ws_fd_rel(g->ws, fd);
	close(fd);
	if (!real) {
		wap_err_set(g->err, WAP_E_ACCESS, "Access denied: %s is outside the workspace root", path);
		goto out;
	}
	/* libgit2 reads a local remote's objects directly, alternates too,
	 * and a push writes its refs and objects: no links there either */
	if (!push ? check_links(g, real) : check_links_at(g, real, &gd, &cd) ||
	    check_gitdir_writes(g, gd ? gd : real) || (cd && check_gitdir_writes(g, cd)))
		goto out;
	*abs = wap_ws_abs(g->ws, real);
	rc = *abs ? 0 : oom(g);
out:
	wap_sb_release(&sb);
	free(gd);
	free(cd);
	free(rel);
	free(real);
	return rc;
}

/* The token: --token-file (beneath the root, first line) or $WAP_GIT_TOKEN. */
static int load_token(struct g *g)
{
	const char *tf = str_key(g, "token_file"), *env = getenv("WAP_GIT_TOKEN");
	char *rel = NULL, *buf = NULL;
	size_t len = 0, n;

	if (tf) {
		if (wap_req_path(g->call, g->req, "token_file", NULL, &rel, g->err))
			return -1;
		if (wap_read_file(g->ws, rel, 65536, &buf, &len, NULL, g->err)) {
			free(rel);
			return -1;
		}
		free(rel);
		n = strcspn(buf, "\r\n");
		while (n && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
			n--;
		g->token = n ? strndup(buf, n) : NULL;
		explicit_bzero(buf, len);
		free(buf);
		if (!n)
			return wap_err_set(g->err, WAP_E_INVALID, "The token file %s is empty", tf);
		return g->token ? 0 : oom(g);
	}
	if (env && *env && !(g->token = strdup(env)))
		return oom(g);
	return 0;
}

/* The token goes over HTTPS, and over plain HTTP to this machine only. */
static bool token_ok_for(const char *url)
{
	static const char *const local[] = { "http://localhost", "http://127.0.0.1", "http://[::1]", NULL };

	if (!strncmp(url, "https://", 8))
		return true;
	for (int i = 0; local[i]; i++) {
		size_t n = strlen(local[i]);
		if (!strncmp(url, local[i], n) && (url[n] == ':' || url[n] == '/' || !url[n]))
			return true;
	}
	return false;
}

/* The host[:port] of URL (scheme://[userinfo@]host[:port]/...): *HOST,
 * *HLEN (brackets kept for IPv6) and *PORT (NULL, or the digits after the
 * colon, *PLEN long).  False if URL has no such authority. */
static bool url_host(const char *url, const char **host, size_t *hlen, const char **port,
		     size_t *plen)
{
	const char *a = strstr(url, "://"), *end, *at, *h;

	if (!a)
		return false;
	a += 3;
	end = a + strcspn(a, "/?#");
	for (at = a, h = a; at < end; at++)
		if (*at == '@')
			h = at + 1;
	*port = NULL;
	*plen = 0;
	if (*h == '[') {
		const char *rb = memchr(h, ']', end - h);
		if (!rb)
			return false;
		*hlen = rb + 1 - h;
	} else {
		const char *c = memchr(h, ':', end - h);
		*hlen = (c ? c : end) - h;
	}
	*host = h;
	if (h + *hlen < end && h[*hlen] == ':') {
		*port = h + *hlen + 1;
		*plen = end - *port;
	}
	return *hlen > 0;
}

/* Is URL's host one the invoker named in $WAP_GIT_TOKEN_HOST ("host" or
 * "host:port", separated by commas or spaces)?  The list comes from the
 * environment of whoever started wap, never from the repository: the
 * agent can rewrite .git/config (url, pushurl, insteadOf) at will. */
static bool token_host_ok(const char *url)
{
	const char *list = getenv("WAP_GIT_TOKEN_HOST"), *h, *p, *e;
	size_t hl, pl;

	if (!list || !url_host(url, &h, &hl, &p, &pl))
		return false;
	for (e = list; *e;) {
		size_t n, eh;
		const char *colon;

		e += strspn(e, ", \t");
		n = strcspn(e, ", \t");
		if (!n)
			break;
		/* the entry's own host and port */
		if (*e == '[') {
			const char *rb = memchr(e, ']', n);
			eh = rb ? (size_t)(rb + 1 - e) : n;
		} else {
			colon = memchr(e, ':', n);
			eh = colon ? (size_t)(colon - e) : n;
		}
		if (eh == hl && !strncasecmp(e, h, hl) &&
		    (eh == n || (e[eh] == ':' && p && n - eh - 1 == pl && !strncmp(e + eh + 1, p, pl))))
			return true;
		e += n;
	}
	return false;
}

static int cred_cb(git_credential **out, const char *url, const char *user, unsigned int allowed,
		   void *payload)
{
	struct g *g = payload;

	if (++g->cred_tries > 1) {
		g->auth_failed = true;
		git_error_set_str(GIT_ERROR_NET, "the remote refused the credentials");
		return GIT_EAUTH;
	}
	if (allowed & GIT_CREDENTIAL_SSH_KEY)
		return git_credential_ssh_key_from_agent(out, user && *user ? user : "git");
	if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && g->token && token_ok_for(url) &&
	    token_host_ok(url))
		return git_credential_userpass_plaintext_new(out, "x-access-token", g->token);
	g->auth_failed = true;
	if (!g->token)
		git_error_set_str(GIT_ERROR_NET, "the remote asks for credentials: set WAP_GIT_TOKEN or "
				  "--token-file (HTTPS), or run an SSH agent (ssh)");
	else if (!token_ok_for(url))
		git_error_set_str(GIT_ERROR_NET,
				  "the remote asks for credentials, and wap sends the token over HTTPS only");
	else if (!getenv("WAP_GIT_TOKEN_HOST"))
		git_error_set_str(GIT_ERROR_NET, "the remote asks for credentials, and wap sends the token "
				  "only to the hosts named in $WAP_GIT_TOKEN_HOST, which is not set");
	else
		git_error_set_str(GIT_ERROR_NET, "the remote asks for credentials, and its host is not one "
				  "of those named in $WAP_GIT_TOKEN_HOST (the token is not sent)");
	return GIT_EAUTH;
}

static bool stop(struct g *g)
{
	if (wap_call_cancelled(g->call))
		g->cancelled = true;
	return g->cancelled;
}

static int cancelled(struct g *g)
{
	if (stop(g))
		return wap_err_set(g->err, WAP_E_FAILED, "cancelled");
	return 0;
}

static void report(struct g *g, double done, double total, const char *what)
{
	int pct;

	if (!g->call->progress || total <= 0)
		return;
	pct = (int)(100.0 * done / total);
	if (pct == g->last_pct)
		return;
	g->last_pct = pct;
	g->call->progress(g->call->arg, done, total, what);
}

static int xfer_cb(const git_indexer_progress *s, void *p)
{
	struct g *g = p;

	if (stop(g))
		return -1;
	if (s->received_objects < s->total_objects)
		report(g, s->received_objects, s->total_objects, "receiving objects");
	else
		report(g, s->indexed_deltas, s->total_deltas, "resolving deltas");
	return 0;
}

static int push_xfer_cb(unsigned int current, unsigned int total, size_t bytes, void *p)
{
	struct g *g = p;

	(void)bytes;
	if (stop(g))
		return -1;
	report(g, current, total, "writing objects");
	return 0;
}

static int pack_cb(int stage, uint32_t current, uint32_t total, void *p)
{
	struct g *g = p;

	(void)stage, (void)current, (void)total;
	return stop(g) ? -1 : 0;
}

static int tips_cb(const char *ref, const git_oid *a, const git_oid *b, void *p)
{
	struct g *g = p;
	json_t *u;

	if (!g->updates)
		g->updates = json_array();
	u = json_pack("{s:s, s:o, s:o}", "ref", ref,
		      "old", git_oid_is_zero(a) ? json_null() : oid_json(a),
		      "new", git_oid_is_zero(b) ? json_null() : oid_json(b));
	json_array_append_new(g->updates, u);
	return 0;
}

static int push_ref_cb(const char *ref, const char *status, void *p)
{
	struct g *g = p;

	if (status && !g->rejected) {
		struct wap_sb sb = WAP_SB_INIT;
		wap_sb_addf(&sb, "%s: %s", ref, status);
		g->rejected = wap_sb_detach(&sb);
	}
	return 0;
}

/* The callbacks of fetch, push and clone.  Each of them also sets
 * follow_redirects to NONE: off-site redirects are not followed, whatever
 * http.followRedirects in the (agent-writable) repository config says, so
 * the token is not carried to a host it was not named for. */
static void callbacks(struct g *g, git_remote_callbacks *cb)
{
	git_remote_init_callbacks(cb, GIT_REMOTE_CALLBACKS_VERSION);
	cb->payload = g;
	cb->credentials = cred_cb;
	cb->transfer_progress = xfer_cb;
	cb->push_transfer_progress = push_xfer_cb;
	cb->pack_progress = pack_cb;
	cb->update_tips = tips_cb;
	cb->push_update_reference = push_ref_cb;
}

static int remote_fail(struct g *g, int e, const char *what, const char *remote)
{
	if (g->auth_failed) {
		const git_error *ge = git_error_last();
		return wap_err_set(g->err, WAP_E_FAILED, "Authentication failed for remote '%s': %s",
				   remote, ge && ge->message ? ge->message : "refused");
	}
	return lg(g, e, "%s '%s' failed", what, remote);
}

/* The remote the current branch tracks, else "origin" (malloc'd). */
static char *default_remote(struct g *g)
{
	bool detached;
	char *b = head_branch(g->repo, &detached), *r = NULL;
	struct upstream u = { 0 };

	if (b && !detached && upstream_of(g, b, &u)) {
		r = u.remote;
		u.remote = NULL;
	}
	upstream_release(&u);
	free(b);
	return r ? r : strdup("origin");
}

/* Look up remote NAME; a local URL is confined and replaced (for this
 * call only) by its real absolute path. */
static int open_remote(struct g *g, const char *name, bool push, git_remote **out)
{
	const char *url;
	char *abs = NULL;
	int e;

	if ((e = git_remote_lookup(out, g->repo, name))) {
		git_error_clear();
		return wap_err_set(g->err, e == GIT_ENOTFOUND ? WAP_E_NOT_FOUND : WAP_E_INVALID,
				   "No such remote: '%s'", name);
	}
	url = push && git_remote_pushurl(*out) ? git_remote_pushurl(*out) : git_remote_url(*out);
	if (!url || !*url)
		return wap_err_set(g->err, WAP_E_INVALID, "Remote '%s' has no URL", name);
	switch (url_kind(url)) {
	case URL_BAD: {
		char *d = url_display(url);
		wap_err_set(g->err, WAP_E_INVALID, "Unsupported URL for remote '%s': %s", name, d ? d : "");
		free(d);
		return -1;
	}
	case URL_LOCAL:
		if (confine_local(g, url, g->wd_rel ? g->wd_rel : ".", push, &abs))
			return -1;
		e = push ? git_remote_set_instance_pushurl(*out, abs) : git_remote_set_instance_url(*out, abs);
		free(abs);
		if (e)
			return lg(g, e, "cannot use remote '%s'", name);
	}
	return 0;
}

static int do_fetch(struct g *g, const char *name)
{
	git_remote *r = NULL;
	git_fetch_options fo;
	int e, rc = -1;

	if (cancelled(g) || open_remote(g, name, false, &r) || load_token(g))
		goto out;
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	callbacks(g, &fo.callbacks);
	fo.follow_redirects = GIT_REMOTE_REDIRECT_NONE;
	if ((e = git_remote_fetch(r, NULL, &fo, NULL))) {
		remote_fail(g, e, "fetch from", name);
		goto out;
	}
	rc = 0;
out:
	git_remote_free(r);
	return rc;
}

static json_t *updates(struct g *g)
{
	json_t *u = g->updates ? json_incref(g->updates) : json_array();
	return u;
}

static int op_fetch(struct g *g, json_t **res)
{
	const char *name = str_key(g, "remote");
	char *dflt = NULL;
	struct wap_sb sum = WAP_SB_INIT;

	if (!name)
		name = g->nargs ? g->args[0] : (dflt = default_remote(g));
	if (g->nargs > (str_key(g, "remote") ? 0 : 1))
		return wap_err_set(g->err, WAP_E_INVALID, "fetch takes one remote");
	if (!name || do_fetch(g, name)) {
		free(dflt);
		return name ? -1 : oom(g);
	}
	wap_sb_addf(&sum, "Fetched from %s: %zu refs updated", name, json_array_size(g->updates));
	*res = json_pack("{s:b, s:s, s:o, s:s}", "success", 1, "remote", name, "updated", updates(g),
			 "summary", sum.buf ? sum.buf : "");
	wap_sb_release(&sum);
	free(dflt);
	return 0;
}

static int op_push(struct g *g, json_t **res)
{
	const char *rname = str_key(g, "remote"), *bname = str_key(g, "branch");
	bool force = bool_key(g, "force"), detached;
	char *dflt_r = NULL, *cur = NULL, *dst = NULL;
	git_remote *r = NULL;
	git_reference *ref = NULL;
	git_push_options po;
	struct wap_sb spec = WAP_SB_INIT, sum = WAP_SB_INIT;
	size_t ai = 0;
	int rc = -1, e;

	if (!rname && ai < g->nargs)
		rname = g->args[ai++];
	if (!bname && ai < g->nargs)
		bname = g->args[ai++];
	if (ai < g->nargs)
		return wap_err_set(g->err, WAP_E_INVALID, "unexpected argument '%s' (push [REMOTE] [BRANCH])",
				   g->args[ai]);
	if (!bname) {
		cur = head_branch(g->repo, &detached);
		if (!cur || detached) {
			free(cur);
			return wap_err_set(g->err, WAP_E_INVALID, "HEAD is detached: name the BRANCH to push");
		}
		bname = cur;
	}
	if (!rname)
		rname = dflt_r = default_remote(g);
	if (!rname) {
		oom(g);
		goto out;
	}
	if (git_branch_lookup(&ref, g->repo, bname, GIT_BRANCH_LOCAL)) {
		git_error_clear();
		wap_err_set(g->err, WAP_E_NOT_FOUND, "Branch not found: '%s'", bname);
		goto out;
	}
	/* to the branch it tracks on that remote, else the same name */
	{
		struct upstream u = { 0 };
		if (upstream_of(g, bname, &u) && !strcmp(u.remote, rname)) {
			dst = u.merge;
			u.merge = NULL;
		}
		upstream_release(&u);
	}
	if (!dst) {
		struct wap_sb d = WAP_SB_INIT;
		wap_sb_addf(&d, "refs/heads/%s", bname);
		dst = wap_sb_detach(&d);
	}
	wap_sb_addf(&spec, "%s%s:%s", force ? "+" : "", git_reference_name(ref), dst ? dst : "");
	if (!dst || spec.oom) {
		oom(g);
		goto out;
	}
	if (cancelled(g) || open_remote(g, rname, true, &r) || load_token(g))
		goto out;
	git_push_options_init(&po, GIT_PUSH_OPTIONS_VERSION);
	callbacks(g, &po.callbacks);
	po.follow_redirects = GIT_REMOTE_REDIRECT_NONE;
	{
		char *specs[] = { spec.buf };
		git_strarray arr = { specs, 1 };
		e = git_remote_push(r, &arr, &po);
	}
	if (e == GIT_ENONFASTFORWARD || (e && git_error_last() && git_error_last()->message &&
					 strstr(git_error_last()->message, "fast"))) {
		wap_err_set(g->err, WAP_E_CONFLICT,
			    "Push rejected: %s on '%s' has commits that %s does not have (non-fast-forward: "
			    "fetch and pull first, or use --force)", dst, rname, bname);
		goto out;
	}
	if (e) {
		remote_fail(g, e, "push to", rname);
		goto out;
	}
	if (g->rejected) {
		wap_err_set(g->err, WAP_E_CONFLICT, "Push rejected by '%s': %s", rname, g->rejected);
		goto out;
	}
	wap_sb_addf(&sum, "Pushed %s to %s (%s)", bname, rname, dst);
	*res = json_pack("{s:b, s:s, s:s, s:s, s:o, s:s}", "success", 1, "remote", rname, "branch", bname,
			 "ref", dst, "updated", updates(g), "summary", sum.buf ? sum.buf : "");
	rc = 0;
out:
	wap_sb_release(&spec);
	wap_sb_release(&sum);
	git_reference_free(ref);
	git_remote_free(r);
	free(dst);
	free(cur);
	free(dflt_r);
	return rc;
}

static int op_pull(struct g *g, json_t **res)
{
	const char *rname = str_key(g, "remote");
	char *branch = NULL, *dflt = NULL, *upname = NULL;
	bool detached;
	struct wap_sb bref = WAP_SB_INIT, sum = WAP_SB_INIT;
	struct upstream u = { 0 };
	git_reference *up = NULL, *br = NULL;
	git_commit *head = NULL, *target = NULL;
	const char *result;
	char oldh[GIT_OID_HEXSZ + 1] = "", newh[GIT_OID_HEXSZ + 1];
	int rc = -1, e;

	if (need_workdir(g))
		return -1;
	if (!rname && g->nargs)
		rname = g->args[0];
	if (g->nargs > (str_key(g, "remote") ? 0 : 1))
		return wap_err_set(g->err, WAP_E_INVALID, "pull takes one remote");
	branch = head_branch(g->repo, &detached);
	if (!branch || detached) {
		wap_err_set(g->err, WAP_E_INVALID, "HEAD is detached: check out a branch to pull into");
		goto out;
	}
	if (!rname)
		rname = dflt = default_remote(g);
	if (!rname || do_fetch(g, rname))
		goto out;
	wap_sb_addf(&bref, "refs/heads/%s", branch);
	if (!bref.buf) {
		oom(g);
		goto out;
	}
	if (upstream_of(g, branch, &u) && u.tracking) {
		upname = u.tracking;
		u.tracking = NULL;
	} else {
		struct wap_sb d = WAP_SB_INIT;
		wap_sb_addf(&d, "refs/remotes/%s/%s", rname, branch);
		upname = wap_sb_detach(&d);
	}
	git_error_clear();
	if (!upname || git_reference_lookup(&up, g->repo, upname)) {
		git_error_clear();
		wap_err_set(g->err, WAP_E_NOT_FOUND, "No upstream for branch '%s' on '%s' (nothing to pull)",
			    branch, rname);
		goto out;
	}
	if ((e = git_reference_peel((git_object **)&target, up, GIT_OBJECT_COMMIT))) {
		lg(g, e, "cannot read %s", upname);
		goto out;
	}
	oid_hex(git_commit_id(target), newh);
	if (head_commit(g, &head))
		goto out;
	if (head)
		oid_hex(git_commit_id(head), oldh);
	if (head && (git_oid_equal(git_commit_id(head), git_commit_id(target)) ||
		     git_graph_descendant_of(g->repo, git_commit_id(head), git_commit_id(target)) == 1)) {
		result = "up-to-date";
		wap_sb_adds(&sum, "Already up to date.");
	} else if (!head || git_graph_descendant_of(g->repo, git_commit_id(target), git_commit_id(head)) == 1) {
		if (checkout_to(g, (git_object *)target, false))
			goto out;
		if (head) {
			e = git_reference_lookup(&br, g->repo, bref.buf);
			if (!e) {
				git_reference *moved = NULL;
				e = git_reference_set_target(&moved, br, git_commit_id(target), "pull: Fast-forward");
				git_reference_free(moved);
			}
		} else {
			e = git_reference_create(&br, g->repo, bref.buf, git_commit_id(target), 0, "pull: initial");
		}
		if (e) {
			lg(g, e, "cannot update branch '%s'", branch);
			goto out;
		}
		result = "fast-forward";
		wap_sb_addf(&sum, "Fast-forward %.7s..%.7s", oldh, newh);
	} else {
		wap_err_set(g->err, WAP_E_CONFLICT,
			    "Not possible to fast-forward: '%s' and '%s' have diverged (pull only fast-forwards; "
			    "merge or rebase first)", branch, git_reference_shorthand(up));
		goto out;
	}
	*res = json_pack("{s:b, s:s, s:s, s:s, s:o, s:s, s:o, s:s}", "success", 1, "remote", rname,
			 "branch", branch, "result", result, "old", *oldh ? json_string(oldh) : json_null(),
			 "new", newh, "updated", updates(g), "summary", sum.buf ? sum.buf : "");
	rc = 0;
out:
	git_commit_free(head);
	git_commit_free(target);
	git_reference_free(up);
	git_reference_free(br);
	upstream_release(&u);
	wap_sb_release(&bref);
	wap_sb_release(&sum);
	free(upname);
	free(branch);
	free(dflt);
	return rc;
}

/* ---- init and clone ---- */

/* Make sure directory REL (root-relative) exists, creating it (and its
 * parents) beneath the root; *CREATED says whether it did.  *REAL gets
 * where it really is. */
static int make_dir(struct g *g, const char *rel, bool *created, char **real)
{
	struct wap_err e2 = { 0 };
	const char *name;
	int fd, pfd;

	*created = false;
	*real = NULL;
	fd = wap_ws_open(g->ws, rel, O_PATH | O_DIRECTORY, 0, WAP_ACC_WRITE, &e2);
	if (fd < 0 && e2.kind != WAP_E_NOT_FOUND) {
		*g->err = e2;
		return -1;
	}
	wap_err_release(&e2);
	if (fd < 0) {
		pfd = wap_ws_open_parent(g->ws, rel, true, &name, g->err);
		if (pfd < 0)
			return -1;
		if (mkdirat(pfd, name, 0777)) {
			int er = errno;
			close(pfd);
			return wap_err_errno(g->err, er, rel);
		}
		close(pfd);
		*created = true;
		fd = wap_ws_open(g->ws, rel, O_PATH | O_DIRECTORY | O_NOFOLLOW, 0, WAP_ACC_WRITE, g->err);
		if (fd < 0)
			return -1;
	}
	*real = wap_ws_fd_rel(g->ws, fd);
	close(fd);
	if (!*real)
		return wap_err_set(g->err, WAP_E_ACCESS, "Access denied: %s is outside the workspace root", rel);
	return 0;
}

static void unmake_dir(struct g *g, const char *rel)
{
	struct wap_err e2 = { 0 };
	const char *name;
	int pfd = wap_ws_open_parent(g->ws, rel, false, &name, &e2);

	if (pfd >= 0) {
		unlinkat(pfd, name, AT_REMOVEDIR);
		close(pfd);
	}
	wap_err_release(&e2);
}

static int op_init(struct g *g, json_t **res)
{
	const char *dir = str_key(g, "dir");
	char *rel = NULL, *real = NULL, *abs = NULL, *chk = NULL;
	git_repository *old = NULL, *repo = NULL;
	bool created, reinit = false;
	struct wap_sb sum = WAP_SB_INIT;
	int rc = -1, e;

	if (!dir)
		dir = g->nargs ? g->args[0] : ".";
	if (g->nargs > (str_key(g, "dir") ? 0 : 1))
		return wap_err_set(g->err, WAP_E_INVALID, "init takes one directory");
	if (wap_ws_rel(g->ws, dir, strlen(dir), &rel, g->err) || wap_ws_check(g->ws, rel, WAP_ACC_WRITE, g->err))
		goto out;
	if (make_dir(g, rel, &created, &real) || !(abs = wap_ws_abs(g->ws, real)))
		goto fail;
	/* an existing repository (or a .git file) must stay beneath the root */
	if (check_links(g, real))
		goto fail;
	e = git_repository_open_ext(&old, abs, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (!e) {
		reinit = true;
		if (confirm_dir(g, git_repository_path(old), &chk) ||
		    check_gitdir_writes(g, git_repository_path(old)))
			goto fail;
	} else {
		struct stat st;
		struct wap_sb gp = WAP_SB_INIT;
		git_error_clear();
		wap_sb_addf(&gp, "%s/.git", abs);
		if (gp.buf && !lstat(gp.buf, &st)) {
			wap_sb_release(&gp);
			wap_err_set(g->err, WAP_E_EXISTS, "%s/.git exists and is not a usable repository", real);
			goto fail;
		}
		wap_sb_release(&gp);
	}
	if ((e = git_repository_init(&repo, abs, 0))) {
		lg(g, e, "cannot create a repository in %s", real);
		goto fail;
	}
	wap_sb_addf(&sum, "%s Git repository in %s%s.git/", reinit ? "Reinitialized existing" : "Initialized empty",
		    strcmp(real, ".") ? real : "", strcmp(real, ".") ? "/" : "");
	*res = json_pack("{s:b, s:s, s:b, s:s}", "success", 1, "path", real, "reinitialized", reinit,
			 "summary", sum.buf ? sum.buf : "");
	rc = 0;
	goto out;
fail:
	if (created)
		unmake_dir(g, rel);
out:
	wap_sb_release(&sum);
	git_repository_free(old);
	git_repository_free(repo);
	free(chk);
	free(abs);
	free(real);
	free(rel);
	return rc;
}

static int op_clone(struct g *g, json_t **res)
{
	const char *url = str_key(g, "url"), *dir = str_key(g, "dir");
	size_t ai = 0;
	char *guess = NULL, *rel = NULL, *real = NULL, *abs = NULL, *src = NULL, *shown = NULL, *branch = NULL;
	git_repository *repo = NULL;
	git_clone_options co;
	bool created = false, detached;
	struct wap_sb sum = WAP_SB_INIT;
	int rc = -1, e, kind;

	if (!url && ai < g->nargs)
		url = g->args[ai++];
	if (!dir && ai < g->nargs)
		dir = g->args[ai++];
	if (ai < g->nargs)
		return wap_err_set(g->err, WAP_E_INVALID, "unexpected argument '%s' (clone URL [DIR])", g->args[ai]);
	if (!url)
		return wap_err_set(g->err, WAP_E_INVALID, "missing the URL to clone");
	shown = url_display(url);
	kind = url_kind(url);
	if (kind == URL_BAD) {
		wap_err_set(g->err, WAP_E_INVALID, "Unsupported URL: %s", shown ? shown : "");
		goto out;
	}
	if (!dir) {
		/* the last component of the URL, less ".git" */
		const char *u = url;
		size_t n = strlen(u);
		while (n && u[n - 1] == '/')
			n--;
		if (n >= 4 && !strncmp(u + n - 4, ".git", 4))
			n -= 4;
		while (n && u[n - 1] == '/')
			n--;
		{
			size_t s = n;
			while (s && u[s - 1] != '/' && u[s - 1] != ':')
				s--;
			guess = strndup(u + s, n - s);
		}
		if (!guess || !*guess || !strcmp(guess, "..") || !strcmp(guess, ".")) {
			wap_err_set(g->err, WAP_E_INVALID, "Cannot guess a directory name from the URL: give DIR");
			goto out;
		}
		dir = guess;
	}
	if (kind == URL_LOCAL && confine_local(g, url, ".", false, &src))
		goto out;
	if (wap_ws_rel(g->ws, dir, strlen(dir), &rel, g->err) || wap_ws_check(g->ws, rel, WAP_ACC_WRITE, g->err))
		goto out;
	if (!strcmp(rel, ".")) {
		wap_err_set(g->err, WAP_E_INVALID, "Clone into a directory beneath the root, not the root itself");
		goto out;
	}
	if (make_dir(g, rel, &created, &real) || !(abs = wap_ws_abs(g->ws, real)))
		goto fail;
	if (!created) {
		int fd = wap_ws_open(g->ws, real, O_RDONLY | O_DIRECTORY, 0, WAP_ACC_READ, g->err);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *de;
		bool empty = true;
		if (!d) {
			if (fd >= 0)
				close(fd);
			goto out;
		}
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				empty = false;
		closedir(d);
		if (!empty) {
			wap_err_set(g->err, WAP_E_EXISTS,
				    "Destination path '%s' already exists and is not an empty directory", rel);
			goto out;
		}
	}
	if (cancelled(g) || load_token(g))
		goto fail;
	git_clone_options_init(&co, GIT_CLONE_OPTIONS_VERSION);
	callbacks(g, &co.fetch_opts.callbacks);
	co.fetch_opts.follow_redirects = GIT_REMOTE_REDIRECT_NONE;
	co.checkout_opts.checkout_strategy = GIT_CHECKOUT_SAFE;
	co.checkout_opts.file_open_flags = O_CREAT | O_TRUNC | O_WRONLY | O_NOFOLLOW | O_CLOEXEC;
	co.checkout_opts.progress_cb = co_progress;
	co.checkout_opts.progress_payload = g;
	if ((e = git_clone(&repo, src ? src : url, abs, &co))) {
		remote_fail(g, e, "clone of", shown ? shown : "");
		goto fail;
	}
	branch = head_branch(repo, &detached);
	wap_sb_addf(&sum, "Cloned %s into %s", shown ? shown : "", real);
	*res = json_pack("{s:b, s:s, s:s, s:o, s:s}", "success", 1, "url", shown ? shown : "", "path", real,
			 "branch", branch && !detached ? json_string(branch) : json_null(),
			 "summary", sum.buf ? sum.buf : "");
	rc = 0;
	goto out;
fail:
	if (created && rel)
		unmake_dir(g, rel);
out:
	wap_sb_release(&sum);
	git_repository_free(repo);
	free(branch);
	free(guess);
	free(rel);
	free(real);
	free(abs);
	free(src);
	free(shown);
	return rc;
}

/* ---- dispatch ---- */

struct action {
	const char *name;
	int (*fn)(struct g *g, json_t **res);
	unsigned flags;
};
#define A_WRITE	1u	/* changes the repository or the work tree */
#define A_NOREPO 2u	/* opens no repository first (init, clone) */

/* ---- the write sandbox ----
 *
 * libgit2 writes the work tree and .git by path, following symbolic links
 * (a tracked directory replaced by a link out of the root, .git/logs/HEAD,
 * .git/index or .git/config made links, a config or index filebuf that
 * resolves links on purpose...).  Rather than chase each of those, an
 * action runs in a thread of its own that first enters a Landlock domain
 * allowing writes (create, remove, rename, truncate) only beneath the root:
 * the kernel then refuses any write that resolves outside it.  Landlock
 * domains belong to a thread, so the rest of wap (and `wap serve`) is not
 * confined.  Reading is not restricted here (alternates, the common dir
 * and the git dir are checked in open_repo).  Without Landlock (ABI 2, for
 * REFER: libgit2 renames objects across directories), actions that write
 * are refused: wap fails closed. */
#define GL_WRITE_FILE	(1ULL << 1)
#define GL_WRITE_ALL	(((1ULL << 13) - 1) & ~((1ULL << 0) | (1ULL << 2) | (1ULL << 3)))
#define GL_REFER	(1ULL << 13)	/* ABI 2 */
#define GL_TRUNCATE	(1ULL << 14)	/* ABI 3 */
#define GL_RULE_PATH_BENEATH 1

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct gl_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* A ruleset fd allowing writes beneath the root only; -1 with ERR. */
static int write_ruleset(const struct wap_ws *ws, const char *action, struct wap_err *err)
{
	uint64_t handled = GL_WRITE_ALL | GL_REFER;
	struct gl_path_beneath pb;
	int abi = wap_landlock_abi(), rs;

	if (abi < 2)
		return wap_err_set(err, WAP_E_DISABLED,
			"Sandbox unavailable: this kernel has no Landlock (ABI 2 or later), which wap git "
			"needs to keep '%s' from writing through symbolic links out of the workspace root; "
			"refusing to write", action);
	if (abi >= 3)
		handled |= GL_TRUNCATE;
	rs = (int)syscall(SYS_landlock_create_ruleset, &handled, sizeof(handled), 0);
	if (rs < 0)
		return wap_err_set(err, WAP_E_DISABLED, "Sandbox unavailable: landlock_create_ruleset: %s",
				   strerror(errno));
	pb.allowed_access = handled;
	pb.parent_fd = ws->rootfd;
	if (syscall(SYS_landlock_add_rule, rs, GL_RULE_PATH_BENEATH, &pb, 0) < 0) {
		int e = errno;
		close(rs);
		return wap_err_set(err, WAP_E_DISABLED, "Sandbox unavailable: landlock_add_rule: %s",
				   strerror(e));
	}
	return rs;
}

/* Does this request write?  (branch writes only with --create/--delete.) */
static bool action_writes(struct g *g, const struct action *a)
{
	return (a->flags & A_WRITE) ||
	       (!strcmp(a->name, "branch") && (bool_key(g, "create") || bool_key(g, "delete")));
}

static int run_action(struct g *g, const struct action *a, json_t **res)
{
	if (!(a->flags & A_NOREPO)) {
		const char *cd;
		if (open_repo(g, a->flags & A_WRITE))
			return -1;
		cd = git_repository_commondir(g->repo);
		if (action_writes(g, a) &&
		    (check_gitdir_writes(g, git_repository_path(g->repo)) ||
		     (cd && strcmp(cd, git_repository_path(g->repo)) && check_gitdir_writes(g, cd))))
			return -1;
	}
	return a->fn(g, res);
}

struct confined {
	struct g *g;
	const struct action *a;
	json_t **res;
	int ruleset, rc;
};

static void *confined_run(void *p)
{
	struct confined *c = p;
	const char *what = "no_new_privs";

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    (what = "landlock_restrict_self", syscall(SYS_landlock_restrict_self, c->ruleset, 0) < 0)) {
		c->rc = wap_err_set(c->g->err, WAP_E_DISABLED, "Sandbox unavailable: %s: %s", what,
				    strerror(errno));
		return NULL;
	}
	c->rc = run_action(c->g, c->a, c->res);
	/* libgit2 failing on EACCES: most likely a write that resolved out of
	 * the root (reads are not confined; as root nothing else says EACCES) */
	if (c->rc && (c->g->err->kind == WAP_E_FAILED || c->g->err->kind == WAP_E_CONFLICT) &&
	    strstr(c->g->err->msg, strerror(EACCES))) {
		char msg[sizeof(c->g->err->msg)];
		snprintf(msg, sizeof(msg), "%s", c->g->err->msg);
		wap_err_set(c->g->err, WAP_E_ACCESS,
			    "Access denied: git %s may write only beneath the workspace root "
			    "(a symbolic link in the work tree or in .git leads out of it?): %s",
			    c->a->name, msg);
	}
	git_error_clear();
	return NULL;
}

/* Run action A: confined to writing beneath the root when Landlock is
 * there; without it, only actions that do not write run. */
static int run_confined(struct g *g, const struct action *a, json_t **res)
{
	struct confined c = { g, a, res, -1, -1 };
	struct wap_err e2 = { 0 };
	pthread_t t;
	int e;

	if (!g->ws->confined)
		return run_action(g, a, res);
	c.ruleset = write_ruleset(g->ws, a->name, &e2);
	if (c.ruleset < 0) {
		if (action_writes(g, a)) {
			*g->err = e2;
			return -1;
		}
		wap_err_release(&e2);
		return run_action(g, a, res);
	}
	e = pthread_create(&t, NULL, confined_run, &c);
	if (e) {
		close(c.ruleset);
		return wap_err_set(g->err, WAP_E_FAILED, "cannot start a thread: %s", strerror(e));
	}
	pthread_join(t, NULL);
	close(c.ruleset);
	return c.rc;
}

static const struct action actions[] = {
	{ "status", op_status, 0 },
	{ "diff", op_diff, 0 },
	{ "log", op_log, 0 },
	{ "show", op_show, 0 },
	{ "add", op_add, A_WRITE },
	{ "stage", op_add, A_WRITE },
	{ "unstage", op_unstage, A_WRITE },
	{ "reset", op_unstage, A_WRITE },
	{ "commit", op_commit, A_WRITE },
	{ "branch", op_branch, 0 },
	{ "checkout", op_checkout, A_WRITE },
	{ "push", op_push, A_WRITE },
	{ "fetch", op_fetch, A_WRITE },
	{ "pull", op_pull, A_WRITE },
	{ "init", op_init, A_WRITE | A_NOREPO },
	{ "clone", op_clone, A_WRITE | A_NOREPO },
	{ NULL, NULL, 0 }
};

int wap_git(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	struct g g = { .call = call, .ws = call->ws, .req = req, .err = err, .last_pct = -1 };
	const struct action *a;
	const char *name = NULL;
	json_t *args = json_object_get(req, "args"), *v;
	size_t i;
	int rc = -1;

	*res = NULL;
	if (wap_git_init(err))
		return -1;
	if (wap_req_str(req, "action", &name, err) < 0)
		return -1;
	if (!name)
		return wap_err_set(err, WAP_E_INVALID, "missing ACTION (see 'wap git --help')");
	for (a = actions; a->name; a++)
		if (!strcmp(a->name, name))
			break;
	if (!a->name)
		return wap_err_set(err, WAP_E_INVALID,
			"Unknown action '%s': use status, diff, log, show, add, unstage, commit, branch, checkout, push, fetch, pull, init or clone",
			name);
	if (args && !json_is_array(args))
		return wap_err_set(err, WAP_E_INVALID, "argument 'args' must be an array of strings");
	g.args = calloc(json_array_size(args) + 1, sizeof(*g.args));
	if (!g.args)
		return oom(&g);
	json_array_foreach(args, i, v) {
		if (!json_is_string(v)) {
			wap_err_set(err, WAP_E_INVALID, "argument 'args' must be an array of strings");
			goto out;
		}
		g.args[g.nargs++] = json_string_value(v);
	}
	if (!call->ws->pol.allow_fs) {
		wap_err_set(err, WAP_E_DISABLED,
			    "File system access is disabled by policy (security.allowFileSystemAccess)");
		goto out;
	}
	if ((a->flags & A_WRITE) && call->ws->pol.read_only) {
		wap_err_set(err, WAP_E_RESTRICTED, "Path restricted: git %s writes, and the workspace is read-only", a->name);
		goto out;
	}
	rc = run_confined(&g, a, res);
out:
	if (rc) {
		json_decref(*res);
		*res = NULL;
		scrub(err->msg, g.token);
		scrub(err->msg, getenv("WAP_GIT_TOKEN"));
		redact_urls(err->msg);
	}
	if (g.token) {
		explicit_bzero(g.token, strlen(g.token));
		free(g.token);
	}
	free(g.rejected);
	json_decref(g.updates);
	free(g.wd_rel);
	git_repository_free(g.repo);
	free(g.args);
	git_error_clear();
	return rc;
}
