/* git/branch.c - the branch and checkout actions: list, create and
 * delete branches; switch branches or check out paths, with the links and
 * restricted files a checkout would write through checked first. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* Delete local branch REF (NAME) and its config section, without
 * git_branch_delete (see the upstreams note in repo.c). */
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
		return wap_err_oom(g->err);
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

/* git branch's line for a detached HEAD (wt-status.c
 * wt_status_get_detached_from): the target of the newest "checkout:
 * moving from A to B" in HEAD's reflog, named as it was given when it
 * still names that commit (refs/tags/ and refs/remotes/ cut off), else
 * abbreviated; "at" when HEAD is still there, "from" when it moved on. */
static char *detached_line(struct g *g)
{
	git_reflog *log = NULL;
	git_oid head;
	char *line = NULL;

	if (git_reference_name_to_id(&head, g->repo, "HEAD"))
		goto out;
	if (!git_reflog_read(&log, g->repo, "HEAD")) {
		for (size_t i = 0, n = git_reflog_entrycount(log); i < n; i++) {
			const git_reflog_entry *en = git_reflog_entry_byindex(log, i);
			const char *m = git_reflog_entry_message(en), *to;
			const git_oid *nid = git_reflog_entry_id_new(en);
			struct wap_sb sb = WAP_SB_INIT;
			git_reference *ref = NULL;
			git_object *o = NULL;
			char h[GIT_OID_HEXSZ + 1], *name;

			if (!m || strncmp(m, "checkout: moving from ", 22) || !(to = strstr(m + 22, " to ")))
				continue;
			to += 4;
			name = strndup(to, strchrnul(to, '\n') - to);
			if (!name)
				break;
			if (!strcmp(name, "HEAD") || git_reference_dwim(&ref, g->repo, name) ||
			    git_reference_peel(&o, ref, GIT_OBJECT_COMMIT) || !git_oid_equal(git_object_id(o), nid)) {
				oid_abbrev(g, nid, h);
				wap_sb_adds(&sb, h);
			} else {
				const char *rn = git_reference_name(ref);
				if (!strncmp(rn, "refs/tags/", 10))
					rn += 10;
				else if (!strncmp(rn, "refs/remotes/", 13))
					rn += 13;
				wap_sb_adds(&sb, rn);
			}
			git_object_free(o);
			git_reference_free(ref);
			free(name);
			if (asprintf(&line, "(HEAD detached %s %s)", git_oid_equal(&head, nid) ? "at" : "from",
				     sb.buf ? sb.buf : "") < 0)
				line = NULL;
			wap_sb_release(&sb);
			break;
		}
	}
	if (!line)
		line = strdup("(no branch)");
out:
	git_reflog_free(log);
	git_error_clear();
	return line;
}

struct listed {
	char *refname;
	json_t *b;
};

static int listed_cmp(const void *a, const void *b)
{
	const char *x = ((const struct listed *)a)->refname, *y = ((const struct listed *)b)->refname;

	return strcmp(x ? x : "", y ? y : "");
}

int op_branch(struct g *g, json_t **res)
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
		struct listed *v = NULL;
		size_t nv = 0, cap = 0;
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
			const char *bn = NULL, *tn = git_reference_symbolic_target(ref);
			json_t *b;
			if (nv == cap) {
				struct listed *nl = reallocarray(v, cap ? cap * 2 : 16, sizeof(*v));
				if (!nl) {
					git_reference_free(ref);
					break;
				}
				v = nl;
				cap = cap ? cap * 2 : 16;
			}
			if (git_branch_name(&bn, ref) || (tn && type != GIT_BRANCH_REMOTE)) {
				git_reference_free(ref);
				continue;
			}
			b = json_pack("{s:s, s:b, s:b}", "name", bn,
				      "current", type == GIT_BRANCH_LOCAL && git_branch_is_head(ref) == 1,
				      "remote", type == GIT_BRANCH_REMOTE);
			if (tn)	/* origin/HEAD -> origin/main */
				json_object_set_new(b, "target", json_string(ref_short(tn)));
			if (git_reference_target(ref))
				json_object_set_new(b, "hash", oid_json(git_reference_target(ref)));
			if (type == GIT_BRANCH_LOCAL) {
				struct upstream u = { 0 };
				if (upstream_of(g, bn, &u) && u.tracking)
					json_object_set_new(b, "upstream", json_string(ref_short(u.tracking)));
				upstream_release(&u);
			}
			v[nv].refname = strdup(git_reference_name(ref));
			v[nv++].b = b;
			git_reference_free(ref);
		}
		ref = NULL;
		git_branch_iterator_free(it);
		git_error_clear();
		/* git lists them by ref name: refs/heads/ then refs/remotes/ */
		if (nv)	/* qsort wants a non-NULL base even for none */
			qsort(v, nv, sizeof(*v), listed_cmp);
		for (size_t i = 0; i < nv; i++) {
			json_array_append_new(list, v[i].b);
			free(v[i].refname);
		}
		free(v);
		*res = json_pack("{s:o, s:o}", "branches", list, "current",
				 cur && !detached ? json_string(cur) : json_null());
		if (detached) {
			char *dl = detached_line(g);
			json_object_set_new(*res, "detached", dl ? json_string(dl) : json_null());
			free(dl);
		}
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
			return wap_err_oom(g->err);
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
	if ((e = tree_to_tree(g, &d[0], ht, (git_tree *)tt, &o)) ||
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

void co_progress(const char *path, size_t done, size_t total, void *p)
{
	(void)path;
	report_progress(p, done, total, "checking out files");
}

/* Check out TARGET's tree: safe (refusing to overwrite local changes,
 * which are named in the error) unless FORCE. */
int checkout_to(struct g *g, git_object *target, bool force)
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
	/* the remotes: "remote.NAME.url" keys (not git_remote_list: see the
	 * upstreams note in repo.c) */
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

int op_checkout(struct g *g, json_t **res)
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
		/* from the revision as given, so that the reflog says
		 * "moving from main to v1" and git's "(HEAD detached at
		 * v1)" can read it, as after git checkout v1 */
		git_annotated_commit *ac = NULL;
		if (!git_annotated_commit_from_revspec(&ac, g->repo, name))
			e = git_repository_set_head_detached_from_annotated(g->repo, ac);
		else
			e = git_repository_set_head_detached(g->repo, git_commit_id(c));
		git_annotated_commit_free(ac);
		if (e) {
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
		wap_err_oom(g->err);
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
