/* git/repo.c - what every git action shares: the call context's
 * helpers (request keys, libgit2 errors as wap errors, redacting URLs and
 * the token from messages), string lists, object ids, HEAD and revisions,
 * the upstream of a branch read from the config, and progress and
 * cancellation. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2/sys/odb_backend.h>	/* a backend's free and exists_prefix */

#include "internal.h"

const char *str_key(const struct g *g, const char *key)
{
	json_t *v = json_object_get(g->req, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

bool bool_key(const struct g *g, const char *key)
{
	return json_is_true(json_object_get(g->req, key));
}

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* A libgit2 failure as a wap error: "WHAT: libgit2's message". */
int lg(struct g *g, int code, const char *fmt, ...)
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
		return wap_cancel_err(g->err);
	return wap_err_set(g->err, kind, "%s: %s", what,
			   e && e->message ? e->message : "unknown error");
}

/* Forget an error that was expected (a missing optional file). */
void clear_err(struct g *g)
{
	wap_err_release(g->err);
	g->err->kind = WAP_OK;
	g->err->msg[0] = 0;
}

/* Remove user:password@ from URLs in S (in place). */
void redact_urls(char *s)
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
void scrub_token(char *s, const char *tok)
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

char *url_display(const char *url)
{
	char *s = xstrdup(url ? url : "");

	if (s)
		redact_urls(s);
	return s;
}

/* ---- small helpers ---- */

/* qsort/bsearch order of a strv's strings */
int strv_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int strv_add(struct strv *s, char *owned)
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

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

git_strarray strv_arr(struct strv *s)
{
	git_strarray a = { s->v, s->n };
	return a;
}

void oid_hex(const git_oid *id, char out[GIT_OID_HEXSZ + 1])
{
	git_oid_tostr(out, GIT_OID_HEXSZ + 1, id);
}

/* The repository's packs alone, for abbreviations: libgit2's own store
 * also asks the loose objects, a stat of objects/XX/ for every id (git
 * keeps a cache of those directories).  *G->loose gets which objects/XX/
 * directories there are (an id starting XX is looked up in the whole
 * store).  NULL when the store has alternates, or when it cannot be made. */
static git_odb *abbrev_odb(struct g *g)
{
	struct wap_sb sb = WAP_SB_INIT;
	struct wap_err e2 = { 0 };
	git_odb_backend *be = NULL;
	git_odb *odb = NULL;
	struct dirent *de;
	char *rel = NULL;
	DIR *d = NULL;
	int fd;

	if (g->packs_tried)
		return g->packs;
	g->packs_tried = true;
	wap_sb_addf(&sb, "%sobjects", git_repository_commondir(g->repo));
	if (sb.oom || wap_ws_rel(g->ws, sb.buf, sb.len, &rel, &e2))
		goto out;
	fd = open_plumbing(g, rel, O_RDONLY | O_DIRECTORY, &e2);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	if (!faccessat(dirfd(d), "info/alternates", F_OK, AT_SYMLINK_NOFOLLOW) || errno != ENOENT ||
	    getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES"))
		goto out;
	while ((de = readdir(d))) {
		unsigned x;
		if (strlen(de->d_name) == 2 && isxdigit((unsigned char)de->d_name[0]) &&
		    isxdigit((unsigned char)de->d_name[1]) && sscanf(de->d_name, "%2x", &x) == 1)
			g->loose[x / 8] |= (unsigned char)(1u << (x % 8));
	}
	if (git_odb_new(&odb) || git_odb_backend_pack(&be, sb.buf)) {
		git_odb_free(odb);
		goto out;
	}
	if (git_odb_add_backend(odb, be, 1)) {
		be->free(be);
		git_odb_free(odb);
		goto out;
	}
	g->packs = odb;
out:
	if (d)
		closedir(d);
	git_error_clear();
	wap_err_release(&e2);
	wap_sb_release(&sb);
	free(rel);
	return g->packs;
}

/* The one object of ODB whose id starts with the LEN hex digits of PFX,
 * as git_odb_exists_prefix, without its rescan of the pack directory when
 * none has them: the id of a changed work-tree file is in no store, and
 * each such id of a diff rescanned the packs (34 times for a diff HEAD~50
 * on jq).  git's abbreviation does not rescan either. */
static int exists_prefix(git_oid *out, git_odb *odb, const git_oid *pfx, size_t len)
{
	size_t n = git_odb_num_backends(odb);
	bool found = false;

	for (size_t i = 0; i < n; i++) {
		git_odb_backend *b;
		git_oid id;
		int e;
		if (git_odb_get_backend(&b, odb, i) || !b->exists_prefix)
			continue;
		e = b->exists_prefix(&id, b, pfx, len);
		if (e == GIT_ENOTFOUND || e == GIT_PASSTHROUGH)
			continue;
		if (e)
			return e;
		if (found && !git_oid_equal(&id, out))
			return GIT_EAMBIGUOUS;
		*out = id;
		found = true;
	}
	return found ? 0 : GIT_ENOTFOUND;
}

/* ID abbreviated as git does with core.abbrev "auto" (object-name.c,
 * repo_find_unique_abbrev_r): at least ceil((msb(N) + 1) / 2) digits for
 * N packed objects, never fewer than 7, and longer while another object
 * in the store starts with the same digits. */
void oid_abbrev(struct g *g, const git_oid *id, char out[GIT_OID_HEXSZ + 1])
{
	git_odb *odb = NULL;
	bool own = false;
	int len;

	if (!g->abbrev) {
		unsigned long n = packed_object_count(g);
		int msb = 0;
		while (n >>= 1)
			msb++;
		g->abbrev = (msb + 1 + 1) / 2;
		if (g->abbrev < 7)
			g->abbrev = 7;
	}
	oid_hex(id, out);
	len = g->abbrev;
	/* no loose directory for its first byte: its packs alone say */
	if (abbrev_odb(g) && !(g->loose[id->id[0] / 8] & (1u << (id->id[0] % 8))))
		odb = g->packs;
	else if (git_repository_odb(&odb, g->repo))
		odb = NULL;
	else
		own = true;
	if (odb) {
		for (; len < GIT_OID_HEXSZ; len++) {
			git_oid pfx, found;
			int e;
			if (git_oid_fromstrn(&pfx, out, len))
				break;
			e = exists_prefix(&found, odb, &pfx, len);
			/* unique: no object has it, or ID alone has it */
			if (e == GIT_ENOTFOUND || (!e && git_oid_equal(&found, id)))
				break;
			if (e && e != GIT_EAMBIGUOUS)
				break;
		}
		if (own)
			git_odb_free(odb);
	}
	git_error_clear();
	out[len] = 0;
}

json_t *oid_abbrev_json(struct g *g, const git_oid *id)
{
	char h[GIT_OID_HEXSZ + 1];

	oid_abbrev(g, id, h);
	return json_string(h);
}

json_t *oid_json(const git_oid *id)
{
	char h[GIT_OID_HEXSZ + 1];

	oid_hex(id, h);
	return json_string(h);
}

/* The paths of the request: "paths", then "files", then ARGS. */
int collect_paths(struct g *g, const char **args, size_t nargs, int access,
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
				return g->err->kind ? -1 : wap_err_oom(g->err);
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
			return g->err->kind ? -1 : wap_err_oom(g->err);
	}
	return 0;
}

bool strv_has_root(const struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (!*s->v[i])
			return true;
	return false;
}

/* The name of the checked-out branch (malloc'd), NULL if detached.  Works on
 * an unborn branch too. */
char *head_branch(git_repository *repo, bool *detached)
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
int head_commit(struct g *g, git_commit **out)
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

/* REV peeled to an object of TYPE (a commit, a tree) in *OUT; a revision
 * that does not parse or peel (or looks like an option) is invalid. */
int resolve_rev(struct g *g, const char *rev, git_object_t type, git_object **out)
{
	git_object *o = NULL;
	int e;

	*out = NULL;
	if (!*rev || rev[0] == '-')
		return wap_err_set(g->err, WAP_E_INVALID, "Unknown revision: '%s'", rev);
	/* HEAD~50 walks 50 commits, which libgit2 does not cache (git.c) */
	if (g->memo_rev && !strcmp(g->memo_rev, rev))
		e = git_object_dup(&o, g->memo_obj);
	else
		e = git_revparse_single(&o, g->repo, rev);
	if (!e) {
		e = git_object_peel(out, o, type);
		git_object_free(o);
	}
	if (e) {
		*out = NULL;
		git_error_clear();
		return wap_err_set(g->err, WAP_E_INVALID, "Unknown revision: '%s'", rev);
	}
	return 0;
}

int resolve_commit(struct g *g, const char *rev, git_commit **out)
{
	return resolve_rev(g, rev, GIT_OBJECT_COMMIT, (git_object **)out);
}

/* ---- upstreams, read from the config ----
 * libgit2 1.5 leaks PCRE2 match data whenever it runs a config regex that
 * does not match (fixed upstream in libgit2 PR #6382, in 1.6); its remote
 * lookup and branch-upstream functions do, once per config entry.  So the
 * upstream of a branch is read here with plain config lookups, which do not
 * (git_remote_lookup still runs, unavoidably, for fetch and push). */
void upstream_release(struct upstream *u)
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
int upstream_of(struct g *g, const char *branch, struct upstream *u)
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

const char *ref_short(const char *ref)
{
	if (!strncmp(ref, "refs/remotes/", 13))
		return ref + 13;
	if (!strncmp(ref, "refs/heads/", 11))
		return ref + 11;
	return ref;
}

/* ---- progress and cancellation ---- */

bool call_stopped(struct g *g)
{
	if (wap_call_cancelled(g->call))
		g->cancelled = true;
	return g->cancelled;
}

int check_cancelled(struct g *g)
{
	if (call_stopped(g))
		return wap_cancel_err(g->err);
	return 0;
}

void report_progress(struct g *g, double done, double total, const char *what)
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
