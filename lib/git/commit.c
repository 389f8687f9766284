/* git/commit.c - the index and commits: add (stage), unstage (reset)
 * and commit (merges too), never with a path outside the work tree. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

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
/* A file restrictedPaths deny is never staged by a directory named (add .,
 * commit -m MSG .): its contents would go into a commit, and out with the
 * next push or a clone beneath the root, where no glob sees them (ninth
 * hostile review); named alone it is refused before.  >0 skips it. */
static int not_restricted(const char *path, const char *matched, void *arg)
{
	(void)matched;
	return restricted_rp(arg, path) ? 1 : 0;
}

/* git_index_add_all's look at each path before it adds it: a directory
 * holding a repository of its own ("DIR/": not recursed into) is added as
 * its HEAD commit, which libgit2 reads by opening it (check_nested; the
 * index's submodules were checked before the action); <0 stops the add */
static int nested_ok(const char *path, const char *matched, void *arg)
{
	struct g *g = arg;
	size_t n = strlen(path);

	if (not_restricted(path, matched, g))
		return 1;
	return n && path[n - 1] == '/' && check_nested(g, path) ? GIT_EUSER : 0;
}

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
			return wap_err_oom(g->err);
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
	if ((e = git_index_add_all(idx, &arr, flags, nested_ok, g)) ||
	    (e = git_index_update_all(idx, &arr, not_restricted, g)) || (e = git_index_write(idx)))
		return e == GIT_EUSER ? -1 : lg(g, e, "cannot stage");
	return 0;
}

static json_t *strv_json(struct strv *s)
{
	json_t *a = json_array();

	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(a, json_string(*s->v[i] ? s->v[i] : "."));
	return a;
}

/* The answer of add and unstage: the paths and "DONE path". */
static json_t *paths_result(struct strv *paths, const char *done)
{
	return json_pack("{s:b, s:o, s:s+}", "success", 1, "paths", strv_json(paths), "summary", done,
			 paths->n == 1 ? (*paths->v[0] ? paths->v[0] : ".") : "the paths");
}

int op_add(struct g *g, json_t **res)
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
	*res = paths_result(&paths, "Staged ");
	rc = 0;
out:
	git_index_free(idx);
	strv_free(&paths);
	return rc;
}

int op_unstage(struct g *g, json_t **res)
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
	*res = paths_result(&paths, "Unstaged ");
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

int op_commit(struct g *g, json_t **res)
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
		*res = json_pack("{s:b, s:s, s:o, s:o, s:b, s:s#}", "success", 1, "hash", hex,
				 "shortHash", oid_abbrev_json(g, &cid),
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
