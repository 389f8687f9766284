/* git/remote.c - fetch, push and pull: remotes looked up with their
 * local URLs confined (confine.c) and credentials offered by creds.c,
 * transfer progress and cancellation, the ref updates as the result. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int xfer_cb(const git_indexer_progress *s, void *p)
{
	struct g *g = p;

	if (call_stopped(g))
		return -1;
	if (s->received_objects < s->total_objects)
		report_progress(g, s->received_objects, s->total_objects, "receiving objects");
	else
		report_progress(g, s->indexed_deltas, s->total_deltas, "resolving deltas");
	return 0;
}

static int push_xfer_cb(unsigned int current, unsigned int total, size_t bytes, void *p)
{
	struct g *g = p;

	(void)bytes;
	if (call_stopped(g))
		return -1;
	report_progress(g, current, total, "writing objects");
	return 0;
}

static int pack_cb(int stage, uint32_t current, uint32_t total, void *p)
{
	struct g *g = p;

	(void)stage, (void)current, (void)total;
	return call_stopped(g) ? -1 : 0;
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
void remote_callbacks(struct g *g, git_remote_callbacks *cb)
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

int remote_fail(struct g *g, int e, const char *what, const char *remote)
{
	if (g->auth_failed) {
		const git_error *ge = git_error_last();
		return wap_err_set(g->err, WAP_E_FAILED, "Authentication failed for remote '%s': %s",
				   remote, ge && ge->message ? ge->message : "refused");
	}
	if (wap_git_dep_error())
		return lg(g, e, "%s '%s' failed (%s)", what, remote, wap_git_dep_error());
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

	if (check_cancelled(g) || open_remote(g, name, false, &r) || load_token(g) || wap_git_certs(g))
		goto out;
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	remote_callbacks(g, &fo.callbacks);
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

int op_fetch(struct g *g, json_t **res)
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
		return name ? -1 : wap_err_oom(g->err);
	}
	wap_sb_addf(&sum, "Fetched from %s: %zu refs updated", name, json_array_size(g->updates));
	*res = json_pack("{s:b, s:s, s:o, s:s}", "success", 1, "remote", name, "updated", updates(g),
			 "summary", sum.buf ? sum.buf : "");
	wap_sb_release(&sum);
	free(dflt);
	return 0;
}

int op_push(struct g *g, json_t **res)
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
		wap_err_oom(g->err);
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
		wap_err_oom(g->err);
		goto out;
	}
	if (check_cancelled(g) || open_remote(g, rname, true, &r) || load_token(g) || wap_git_certs(g))
		goto out;
	git_push_options_init(&po, GIT_PUSH_OPTIONS_VERSION);
	remote_callbacks(g, &po.callbacks);
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

/* A pull is two actions (git.c): its fetch, with the tree lock held
 * shared (a slow remote holds up no write), then the rest, alone (its
 * check for local changes and its checkout one step against an edit). */
int op_pull_fetch(struct g *g, json_t **res)
{
	const char *rname = str_key(g, "remote");
	bool detached;

	(void)res;
	if (need_workdir(g))
		return -1;
	if (!rname && g->nargs)
		rname = g->args[0];
	if (g->nargs > (str_key(g, "remote") ? 0 : 1))
		return wap_err_set(g->err, WAP_E_INVALID, "pull takes one remote");
	g->pull_branch = head_branch(g->repo, &detached);
	if (!g->pull_branch || detached)
		return wap_err_set(g->err, WAP_E_INVALID, "HEAD is detached: check out a branch to pull into");
	g->pull_remote = rname ? strdup(rname) : default_remote(g);
	if (!g->pull_remote)
		return wap_err_oom(g->err);
	return do_fetch(g, g->pull_remote);
}

int op_pull(struct g *g, json_t **res)
{
	const char *rname = g->pull_remote;
	char *branch = NULL, *upname = NULL;
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
	/* (another call may have checked out another branch meanwhile) */
	branch = head_branch(g->repo, &detached);
	if (!branch || detached || !rname || !g->pull_branch || strcmp(branch, g->pull_branch)) {
		wap_err_set(g->err, WAP_E_CONFLICT, "HEAD moved from '%s' while the pull fetched: pull again",
			    g->pull_branch ? g->pull_branch : "?");
		goto out;
	}
	wap_sb_addf(&bref, "refs/heads/%s", branch);
	if (!bref.buf) {
		wap_err_oom(g->err);
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
	return rc;
}
