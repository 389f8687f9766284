/* git/clone.c - the actions that make a repository: init and clone, in
 * a directory beneath the root (created there, and removed again when a
 * clone fails). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "internal.h"

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

int op_init(struct g *g, json_t **res)
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

int op_clone(struct g *g, json_t **res)
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
	if (check_cancelled(g) || load_token(g) || wap_git_certs(g))
		goto fail;
	git_clone_options_init(&co, GIT_CLONE_OPTIONS_VERSION);
	remote_callbacks(g, &co.fetch_opts.callbacks);
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
