/* git/status.c - the status action: the branch, its upstream and how far
 * ahead and behind it is, then each changed path, staged and unstaged,
 * with the XY letters of git status --porcelain=v2. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

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

/* The staged renames, paired as git pairs them (find_renames: git's
 * score and base-name rule; libgit2's status would use its own estimate):
 * FROM[i] was renamed to TO[i]. */
static int staged_renames(struct g *g, struct strv *from, struct strv *to)
{
	git_commit *head = NULL;
	git_tree *t = NULL;
	git_diff *d = NULL;
	git_diff_options o;
	int e = 0, rc = -1;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	if (head_commit(g, &head))
		return -1;
	if (head && ((e = git_commit_tree(&t, head)) || (e = git_diff_tree_to_index(&d, g->repo, t, NULL, &o)))) {
		lg(g, e, "cannot read the staged changes");
		goto out;
	}
	if (d && find_renames(g, d))
		goto out;
	for (size_t i = 0, n = d ? git_diff_num_deltas(d) : 0; i < n; i++) {
		const git_diff_delta *dd = git_diff_get_delta(d, i);
		if (dd->status == GIT_DELTA_RENAMED &&
		    (strv_add(from, strdup(dd->old_file.path)) || strv_add(to, strdup(dd->new_file.path)))) {
			wap_err_oom(g->err);
			goto out;
		}
	}
	rc = 0;
out:
	git_diff_free(d);
	git_tree_free(t);
	git_commit_free(head);
	return rc;
}

static const char *renamed_from(const struct strv *from, const struct strv *to, const char *path)
{
	for (size_t i = 0; i < to->n; i++)
		if (!strcmp(to->v[i], path))
			return from->v[i];
	return NULL;
}

static bool renamed_away(const struct strv *from, const char *path)
{
	for (size_t i = 0; i < from->n; i++)
		if (!strcmp(from->v[i], path))
			return true;
	return false;
}

static json_t *change(const char *path, const char *orig, const char *status, bool staged)
{
	json_t *o = json_pack("{s:s, s:s, s:b}", "path", path, "status", status, "staged", staged);
	if (orig)
		json_object_set_new(o, "origPath", json_string(orig));
	return o;
}

/* ---- repositories of their own in the work tree ----
 * git lists an untracked directory that holds a repository ("?? sub/", its
 * is_nonbare_repository_dir) whatever else it holds, and one that holds
 * such a directory further down; libgit2 stops at the .git and, finding
 * nothing else, takes the directory for empty.  Here git's test, on the
 * directories the index has nothing beneath that libgit2 did not list. */

/* Regular file NAME in directory FD (no link followed), up to N - 1 bytes,
 * into BUF: its length; -1 when it cannot be opened or read, -2 when it is
 * no regular file or bigger. */
static ssize_t read_small(int fd, const char *name, char *buf, size_t n)
{
	struct stat st;
	ssize_t r;
	int f;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size >= n)
		return -2;
	if ((f = openat(fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return -1;
	r = read(f, buf, n - 1);
	close(f);
	if (r < 0)
		return -1;
	buf[r] = 0;
	return r;
}

/* The directory DATA names (absolute, or relative to where FD is) opened
 * beneath the root as FLAGS say; -1 elsewhere: a repository's links lead
 * no further. */
static int open_from(struct g *g, int fd, const char *data, int flags)
{
	struct wap_sb sb = WAP_SB_INIT;
	struct wap_err e = { 0 };
	char *rel = NULL, *at = *data == '/' ? NULL : wap_ws_fd_rel(g->ws, fd);
	int r = -1;

	if (*data == '/')
		wap_sb_adds(&sb, data);
	else if (at)
		wap_sb_addf(&sb, "%s/%s/%s", g->ws->root, at, data);
	if (sb.len && !sb.oom && !wap_ws_rel(g->ws, sb.buf, sb.len, &rel, &e))
		r = open_plumbing(g, rel, flags | O_DIRECTORY, &e);
	wap_err_release(&e);
	wap_sb_release(&sb);
	free(rel);
	free(at);
	return r;
}

/* Is GFD a git directory, as git's is_git_directory has it: a HEAD naming
 * a ref under refs/ or an object, then objects/ and refs/ in the common
 * directory (the one its commondir names, else itself)? */
static bool git_dir(struct g *g, int gfd)
{
	char buf[PATH_MAX + 16];
	struct stat st;
	const char *p;
	ssize_t n;
	int cfd = gfd;
	bool ok;

	if (fstatat(gfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW))
		return false;
	if (S_ISLNK(st.st_mode)) {
		if ((n = readlinkat(gfd, "HEAD", buf, sizeof(buf) - 1)) < 0)
			return false;
		buf[n] = 0;
		if (strncmp(buf, "refs/", 5))
			return false;
	} else if (read_small(gfd, "HEAD", buf, sizeof(buf)) >= 0) {
		if (!strncmp(buf, "ref:", 4)) {
			for (p = buf + 4; isspace((unsigned char)*p); p++)
				;
			if (strncmp(p, "refs/", 5))
				return false;
		} else {
			for (int i = 0; i < GIT_OID_HEXSZ; i++)
				if (!isxdigit((unsigned char)buf[i]))
					return false;
		}
	} else {
		return false;
	}
	if (!fstatat(gfd, "commondir", &st, AT_SYMLINK_NOFOLLOW)) {
		if ((n = read_small(gfd, "commondir", buf, sizeof(buf))) < 0)
			return false;
		while (n && isspace((unsigned char)buf[n - 1]))
			buf[--n] = 0;
		if (!n || (cfd = open_from(g, gfd, buf, O_PATH)) < 0)
			return false;
	}
	ok = !fstatat(cfd, "objects", &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode) &&
	     !fstatat(cfd, "refs", &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);
	if (cfd != gfd)
		close(cfd);
	return ok;
}

/* Does directory FD hold a repository, as git's is_nonbare_repository_dir
 * has it: a .git directory that is a git directory, or a .git file naming
 * one ("gitdir: PATH") or that cannot be read? */
static bool own_repo(struct g *g, int fd)
{
	char buf[PATH_MAX + 16];
	struct stat st;
	ssize_t n;
	bool r = false;
	int gfd;

	if (fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW))
		return false;
	if (S_ISDIR(st.st_mode)) {
		if ((gfd = openat(fd, ".git", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			return false;
		r = git_dir(g, gfd);
		close(gfd);
		return r;
	}
	if (!S_ISREG(st.st_mode))
		return false;
	if ((n = read_small(fd, ".git", buf, sizeof(buf))) == -1)
		return true;	/* git: a .git file it cannot open or read */
	if (n < 0 || strncmp(buf, "gitdir: ", 8))
		return false;
	while (n > 8 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = 0;
	if (n < 9 || (gfd = open_from(g, fd, buf + 8, O_PATH)) < 0)
		return false;
	r = git_dir(g, gfd);
	close(gfd);
	return r;
}

static bool ignored(struct g *g, const char *path)
{
	int ig = 0;

	if (git_ignore_path_is_ignored(&ig, g->repo, path))
		git_error_clear();
	return ig;
}

/* Does directory FD (REL in SB: its path in the work tree) hold what git
 * lists as untracked: a repository, or beneath it a file, a link or such
 * a directory, not ignored?  (git's treat_directory, empty directories
 * hidden) */
static bool untracked_in(struct g *g, int fd, struct wap_sb *rel, int depth)
{
	size_t len = rel->len;
	struct dirent *de;
	bool found = false;
	DIR *d;
	int dfd;

	if (own_repo(g, fd))
		return true;
	if (depth > 64 || (dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return false;
	if (!(d = fdopendir(dfd))) {
		close(dfd);
		return false;
	}
	while (!found && (de = readdir(d))) {
		const char *nm = de->d_name;
		unsigned char t = de->d_type;
		struct stat st;
		int cfd;
		if (!strcmp(nm, ".") || !strcmp(nm, "..") || !strcmp(nm, ".git"))
			continue;
		if (t == DT_UNKNOWN && !fstatat(dfd, nm, &st, AT_SYMLINK_NOFOLLOW))
			t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG :
			    S_ISLNK(st.st_mode) ? DT_LNK : DT_UNKNOWN;
		rel->len = len;
		wap_sb_addf(rel, "/%s", nm);
		if (rel->oom)
			break;
		if (t == DT_REG || t == DT_LNK) {
			found = !ignored(g, rel->buf);
			continue;
		}
		if (t != DT_DIR)
			continue;
		wap_sb_addc(rel, '/');
		if (rel->oom || ignored(g, rel->buf))
			continue;
		rel->buf[--rel->len] = 0;
		cfd = openat(dfd, nm, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd >= 0) {
			found = untracked_in(g, cfd, rel, depth + 1);
			close(cfd);
		}
	}
	closedir(d);
	if (!rel->oom) {
		rel->len = len;
		rel->buf[len] = 0;
	}
	return found;
}

/* Of NEWDIRS, those libgit2 did not list (in SL, nor anything beneath)
 * and git would, as "DIR/" into *OUT, sorted. */
static void own_repos(struct g *g, git_status_list *sl, const struct strv *newdirs, struct strv *out)
{
	size_t n = sl ? git_status_list_entrycount(sl) : 0, nl = 0;
	const char **listed = newdirs->n ? malloc((n + 1) * sizeof(*listed)) : NULL;

	memset(out, 0, sizeof(*out));
	if (!listed)
		return;
	for (size_t k = 0; k < n; k++) {
		const git_status_entry *se = git_status_byindex(sl, k);
		const git_diff_delta *dd = se->index_to_workdir ? se->index_to_workdir : se->head_to_index;
		if (dd && dd->new_file.path)
			listed[nl++] = dd->new_file.path;
	}
	qsort(listed, nl, sizeof(*listed), strv_cmp);
	for (size_t i = 0; i < newdirs->n; i++) {
		struct wap_sb rel = WAP_SB_INIT;
		size_t lo = 0, hi = nl;
		char *dir = NULL;
		int fd;
		wap_sb_addf(&rel, "%s/", newdirs->v[i]);
		/* the first listed path from "DIR/" on: DIR/ or beneath? */
		while (!rel.oom && lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(listed[mid], rel.buf) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (rel.oom || (lo < nl && !strncmp(listed[lo], rel.buf, rel.len)) ||
		    ignored(g, rel.buf)) {
			wap_sb_release(&rel);
			continue;
		}
		rel.buf[--rel.len] = 0;
		dir = ws_path(g, rel.buf);
		fd = dir ? open_plumbing(g, dir, O_PATH | O_DIRECTORY | O_NOFOLLOW, NULL) : -1;
		if (fd >= 0 && untracked_in(g, fd, &rel, 0)) {
			rel.len = 0;
			wap_sb_addf(&rel, "%s/", newdirs->v[i]);
			if (!rel.oom)
				strv_add(out, wap_sb_detach(&rel));
		}
		if (fd >= 0)
			close(fd);
		free(dir);
		wap_sb_release(&rel);
	}
	free(listed);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), strv_cmp);
}

/* Every directory at the top of the work tree, into *OUT, sorted: the
 * NEWDIRS of an index that holds nothing. */
static void top_dirs(struct g *g, struct strv *out)
{
	int fd = open_plumbing(g, g->wd_rel, O_RDONLY | O_DIRECTORY, NULL);
	struct dirent *de;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	memset(out, 0, sizeof(*out));
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || !strcmp(de->d_name, ".git"))
			continue;
		if (de->d_type == DT_DIR || (de->d_type == DT_UNKNOWN &&
		    !fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode)))
			strv_add(out, strdup(de->d_name));
	}
	closedir(d);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), strv_cmp);
}

/* an untracked path into the lists */
static void add_untracked(json_t *untracked, json_t *changes, json_t *files_u, const char *path)
{
	json_array_append_new(untracked, json_string(path));
	json_array_append_new(changes, change(path, NULL, "untracked", false));
	json_array_append_new(files_u, json_pack("{s:s, s:s}", "path", path, "xy", "??"));
}

int op_status(struct g *g, json_t **res)
{
	git_status_options so;
	git_status_list *sl = NULL;
	git_index *idx = NULL;
	git_reference *head = NULL, *up = NULL;
	struct strv rfrom = { 0 }, rto = { 0 }, cand = { 0 }, newdirs = { 0 }, extra = { 0 };
	size_t x = 0;
	bool nothing_staged = false;
	json_t *r, *changes, *staged, *unstaged, *untracked, *conflicted, *files, *files_u;
	char *branch;
	bool detached;
	int e;

	if (need_workdir(g))
		return -1;
	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_SORT_CASE_SENSITIVELY;
	/* git's way (prestat.c): nothing staged when the cache tree says so,
	 * and libgit2 looks only at the paths whose stat data changed, with
	 * an index of those alone (the index file is read once, not by
	 * libgit2, which spends tens of ms on a large one) */
	if (wt_prestat(g, NULL, true, &cand, &nothing_staged, &idx, &newdirs) && nothing_staged && idx) {
		so.show = GIT_STATUS_SHOW_WORKDIR_ONLY;
		so.flags |= GIT_STATUS_OPT_DISABLE_PATHSPEC_MATCH;
		so.pathspec = strv_arr(&cand);
		if ((e = git_repository_set_index(g->repo, idx))) {
			lg(g, e, "cannot read the index");
			goto fail;
		}
	} else {
		git_index_free(idx);
		idx = NULL;
		strv_free(&cand);
		nothing_staged = false;
		if ((e = git_repository_index(&idx, g->repo))) {
			lg(g, e, "cannot read the index");
			goto fail;
		}
		if (staged_renames(g, &rfrom, &rto))
			goto fail;
		if (!newdirs.v && !git_index_entrycount(idx))
			top_dirs(g, &newdirs);	/* all of it is untracked */
	}
	if ((!nothing_staged || cand.n) && (e = git_status_list_new(&sl, g->repo, &so))) {
		lg(g, e, "cannot read the status");
		goto fail;
	}
	strv_free(&cand);
	own_repos(g, sl, &newdirs, &extra);
	strv_free(&newdirs);
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
	files_u = json_array();	/* git lists untracked paths after the rest */
	for (size_t i = 0, n = sl ? git_status_list_entrycount(sl) : 0; i < n; i++) {
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
		for (; x < extra.n && strcmp(extra.v[x], path) < 0; x++)
			add_untracked(untracked, changes, files_u, extra.v[x]);
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
			add_untracked(untracked, changes, files_u, path);
			continue;
		}
		if ((s & GIT_STATUS_INDEX_DELETED) && renamed_away(&rfrom, path)) {
			/* the source of a staged rename: shown with its
			 * destination (or as untracked, if still there) */
			s &= ~GIT_STATUS_INDEX_DELETED;
			if (s & GIT_STATUS_WT_NEW) {
				add_untracked(untracked, changes, files_u, path);
			}
			continue;
		}
		if ((s & GIT_STATUS_WT_NEW) && (s & GIT_STATUS_INDEX_DELETED)) {
			/* deleted from the index, still in the work tree (rm
			 * --cached): git shows both a staged deletion and an
			 * untracked path */
			add_untracked(untracked, changes, files_u, path);
			s &= ~GIT_STATUS_WT_NEW;
		}
		xy[0] = xy_index(s);
		xy[1] = xy_wt(s);
		xy[2] = 0;
		if ((s & GIT_STATUS_INDEX_NEW) && (orig = renamed_from(&rfrom, &rto, path)))
			xy[0] = 'R';
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
	for (; x < extra.n; x++)
		add_untracked(untracked, changes, files_u, extra.v[x]);
	strv_free(&extra);
	json_array_extend(files, files_u);
	json_decref(files_u);
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
	strv_free(&rfrom);
	strv_free(&rto);
	*res = r;
	return 0;
fail:
	git_index_free(idx);
	strv_free(&cand);
	strv_free(&newdirs);
	strv_free(&rfrom);
	strv_free(&rto);
	return -1;
}
