/* git/internal.h - what the pieces of lib/git/ share (lib/git/git.h is the
 * public API): the per-call context struct g, string lists, upstreams, URL
 * kinds, the table of actions, and the functions one piece offers the
 * others, grouped by the file that defines them.  Not for use outside
 * lib/git/. */
#ifndef WAP_GIT_INTERNAL_H
#define WAP_GIT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "lazy.h"
#include "git.h"
#include "strbuf.h"

/* The context of one call of wap_git(): what every action is handed. */
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
	char *pull_branch, *pull_remote;	/* what a pull's fetch was for */
	char *rejected;		/* a push rejection: "ref: status" */
	int last_pct;
	int abbrev;		/* git's shortest abbreviation here; 0: not known yet */
	git_odb *packs;		/* the packs alone, for abbreviations (repo.c) */
	bool packs_tried;
	unsigned char loose[32];	/* which objects/XX/ directories exist */
	char *memo_rev;		/* the last revision parsed (is_rev), and */
	git_object *memo_obj;	/* its object: resolve_rev does not parse it again */
	bool kernel_reads;	/* the action's thread reads only beneath the root
				 * and the user's set-up (sandbox.c) */
	size_t diff_cap;	/* a diff's text stops here (log -p: what is left
				 * of maxFileSize); 0: at maxFileSize */
};

/* A NULL-terminated list of strings it owns (strv_add, strv_free). */
struct strv {
	char **v;
	size_t n;
};

/* A branch's upstream, from its config (the upstreams note in repo.c says
 * why not libgit2's own lookup). */
struct upstream {
	char *remote, *merge, *tracking;
};

/* What url_kind (confine.c) makes of a remote's URL. */
enum { URL_LOCAL, URL_NET, URL_BAD };

/* One row of the table of actions (git.c), run by run_confined. */
struct action {
	const char *name;
	int (*fn)(struct g *g, json_t **res);
	unsigned flags;
};
#define A_WRITE	1u	/* changes the repository or the work tree */
#define A_NOREPO 2u	/* opens no repository first (init, clone) */
#define A_WORKTREE 4u	/* looks at the work tree: check_submodules first */
#define A_NET	8u	/* may reach a remote over the network */

/* repo.c */
const char *str_key(const struct g *g, const char *key);
bool bool_key(const struct g *g, const char *key);
int lg(struct g *g, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void clear_err(struct g *g);
void redact_urls(char *s);
void scrub_token(char *s, const char *tok);
char *url_display(const char *url);
int strv_add(struct strv *s, char *owned);
int strv_cmp(const void *a, const void *b);
void strv_free(struct strv *s);
git_strarray strv_arr(struct strv *s);
void oid_hex(const git_oid *id, char out[GIT_OID_HEXSZ + 1]);
void oid_abbrev(struct g *g, const git_oid *id, char out[GIT_OID_HEXSZ + 1]);
json_t *oid_abbrev_json(struct g *g, const git_oid *id);
json_t *oid_json(const git_oid *id);
int collect_paths(struct g *g, const char **args, size_t nargs, int access,
	struct strv *out);
bool strv_has_root(const struct strv *s);
char *head_branch(git_repository *repo, bool *detached);
int head_commit(struct g *g, git_commit **out);
int resolve_rev(struct g *g, const char *rev, git_object_t type, git_object **out);
int resolve_commit(struct g *g, const char *rev, git_commit **out);
void upstream_release(struct upstream *u);
int upstream_of(struct g *g, const char *branch, struct upstream *u);
const char *ref_short(const char *ref);
bool call_stopped(struct g *g);
int check_cancelled(struct g *g);
void report_progress(struct g *g, double done, double total, const char *what);

/* confine.c */
int open_plumbing(struct g *g, const char *rel, int flags, struct wap_err *err);
int confirm_dir(struct g *g, const char *abs, char **rel);
int check_links(struct g *g, const char *real);
/* The user's global configs where they lie beneath the root ($HOME the
 * workspace) are the workspace's: their includes and the files they name
 * must be beneath it (as the repository's config; init and clone, which
 * open no repository first, check them so) */
int check_user_config(struct g *g);
/* The nested repository at PATH (work-tree relative) passes check_links
 * as the top one does; nothing there (not checked out) passes too.  A
 * submodule's .git file may name any git dir, and libgit2 opens it to
 * read its HEAD (status, diff, add). */
int check_nested(struct g *g, const char *path);
/* check_nested for every submodule (gitlink) in the index: what status,
 * diff, add and checkout open (A_WORKTREE actions, before they run) */
int check_submodules(struct g *g);
bool link_checks(void);
int check_gitdir_writes(struct g *g, const char *gd);
int open_repo(struct g *g, bool write);
int need_workdir(struct g *g);
int repo_path(struct g *g, const char *p, int access, char **out);
char *ws_path(struct g *g, const char *rp);
int url_kind(const char *url);
unsigned long packed_object_count(struct g *g);
int confine_local(struct g *g, const char *url, const char *base, bool push, char **abs);
/* The files (OUT) and dirs (DIRS) outside the root that libgit2 reads
 * for the user's git set-up (configs, what they name; the template dir,
 * http.sslCAPath): 0, or -ENOMEM.  What a config beneath the root names is
 * not added. */
int user_git_files(const struct wap_ws *ws, struct strv *out, struct strv *dirs);

/* creds.c */
int load_token(struct g *g);
int cred_cb(git_credential **out, const char *url, const char *user, unsigned int allowed,
	void *payload);

/* prestat.c */
int wt_prestat(struct g *g, git_index *idx, bool untracked, struct strv *out, bool *nothing_staged,
	       git_index **small, struct strv *newdirs);

/* reuse.c */
void wt_reuse(struct g *g, git_diff *d, git_index *idx, const struct strv *cand);

/* status.c */
int op_status(struct g *g, json_t **res);

/* diff.c */
bool restricted_rp(struct g *g, const char *rp);
int diff_result(struct g *g, git_diff *d, json_t *r, bool stat, bool names);
int diff_opts(struct g *g, git_diff_options *o, struct strv *paths);
void git_memo(bool paths, bool stats);
/* The first file libgit2 was refused this action for not being a regular
 * file or a directory (a FIFO, socket or device), or NULL (git.c) */
const char *git_special(void);
int tree_to_tree(struct g *g, git_diff **out, git_tree *a, git_tree *b, const git_diff_options *o);
int find_renames(struct g *g, git_diff *d);
int tree_diff_index(struct g *g);
int split_revs_paths(struct g *g, struct strv *revs, struct strv *paths, int access);
int op_diff(struct g *g, json_t **res);

/* log.c */
int op_log(struct g *g, json_t **res);
int op_show(struct g *g, json_t **res);

/* commit.c */
int op_add(struct g *g, json_t **res);
int op_unstage(struct g *g, json_t **res);
int op_commit(struct g *g, json_t **res);

/* branch.c */
int op_branch(struct g *g, json_t **res);
void co_progress(const char *path, size_t done, size_t total, void *p);
int checkout_to(struct g *g, git_object *target, bool force);
int op_checkout(struct g *g, json_t **res);

/* remote.c */
void remote_callbacks(struct g *g, git_remote_callbacks *cb);
int remote_fail(struct g *g, int e, const char *what, const char *remote);
int op_fetch(struct g *g, json_t **res);
int op_push(struct g *g, json_t **res);
int op_pull_fetch(struct g *g, json_t **res);
int op_pull(struct g *g, json_t **res);

/* clone.c */
int op_init(struct g *g, json_t **res);
int op_clone(struct g *g, json_t **res);

/* git.c */
int wap_git_certs(struct g *g);
/* The CA bundle and dir the first remote will read (NULL: none, or read
 * already) */
void wap_git_cert_paths(const char **file, const char **dir);

/* deps.c: why libssh2 or GSS-API could not be loaded, or NULL */
const char *wap_git_dep_error(void);

/* sandbox.c */
int run_confined(struct g *g, const struct action *a, json_t **res);

#endif
