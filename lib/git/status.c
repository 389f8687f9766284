/* git/status.c - the status action: the branch, its upstream and how far
 * ahead and behind it is, then each changed path, staged and unstaged,
 * with the XY letters of git status --porcelain=v2. */
#include <stdlib.h>
#include <string.h>

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

int op_status(struct g *g, json_t **res)
{
	git_status_options so;
	git_status_list *sl = NULL;
	git_index *idx = NULL;
	git_reference *head = NULL, *up = NULL;
	struct strv rfrom = { 0 }, rto = { 0 }, cand = { 0 };
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
	if (wt_prestat(g, NULL, true, &cand, &nothing_staged, &idx) && nothing_staged && idx) {
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
	}
	if ((!nothing_staged || cand.n) && (e = git_status_list_new(&sl, g->repo, &so))) {
		lg(g, e, "cannot read the status");
		goto fail;
	}
	strv_free(&cand);
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
			json_array_append_new(files_u, json_pack("{s:s, s:s}", "path", path, "xy", "??"));
			continue;
		}
		if ((s & GIT_STATUS_INDEX_DELETED) && renamed_away(&rfrom, path)) {
			/* the source of a staged rename: shown with its
			 * destination (or as untracked, if still there) */
			s &= ~GIT_STATUS_INDEX_DELETED;
			if (s & GIT_STATUS_WT_NEW) {
				json_array_append_new(untracked, json_string(path));
				json_array_append_new(changes, change(path, NULL, "untracked", false));
				json_array_append_new(files_u, json_pack("{s:s, s:s}", "path", path, "xy", "??"));
			}
			continue;
		}
		if ((s & GIT_STATUS_WT_NEW) && (s & GIT_STATUS_INDEX_DELETED)) {
			/* deleted from the index, still in the work tree (rm
			 * --cached): git shows both a staged deletion and an
			 * untracked path */
			json_array_append_new(untracked, json_string(path));
			json_array_append_new(changes, change(path, NULL, "untracked", false));
			json_array_append_new(files_u, json_pack("{s:s, s:s}", "path", path, "xy", "??"));
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
	strv_free(&rfrom);
	strv_free(&rto);
	return -1;
}
