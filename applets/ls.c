/* wap ls: list a directory, optionally recursively
 *
 * usage: wap ls [OPTIONS] [PATH]
 *
 * List the entries of PATH (default: the workspace root), sorted, as
 * "[DIR] name" and "[FILE] name" lines.  With --recursive, subdirectories
 * are listed too, down to --max-depth levels, by the parallel walker grep
 * and glob use, skipping the default exclusions (node_modules, .git, dist,
 * build, .venv, target, __pycache__, vendor), what .gitignore/.ignore files
 * exclude inside a git work tree, and every --exclude glob.  Symbolic links are
 * listed, never followed.  At most maxDirectoryEntries (500) entries are
 * returned; the result says when there were more (isTruncated, totalFound).
 *
 *   PATH                   the directory to list (default: .)
 *   -r, --recursive        list subdirectories too
 *   --max-depth N          levels to descend with --recursive (default 3)
 *   --exclude GLOB         leave out paths matching GLOB (repeatable; a glob
 *                          without "/" matches a name at any depth)
 *   --no-default-excludes  do not skip the default exclusions
 *   --no-ignore            with --recursive, do not apply .gitignore/.ignore files
 *   -l, --metadata         add size and modification time of each entry
 *
 * JSON result: files [{path (from the root), name (from PATH), isDirectory,
 * type, metadata? {path,size,isDirectory,lastModified}}], isTruncated,
 * totalFound.
 *
 * examples:
 *   wap ls
 *   wap ls src --recursive --exclude '*.o'
 *   wap ls . -r --max-depth 1 --metadata --json
 */
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "applet.h"
#include "text.h"
#include "applets.h"
#include "exclude.h"
#include "file.h"
#include "path.h"
#include "strbuf.h"
#include "walk.h"

static const struct wap_opt ls_opts[] = {
	{ "path", 0, WAP_OPT_STR, WAP_OPT_POS, NULL },
	{ "recursive", 'r', WAP_OPT_BOOL, 0, NULL },
	{ "max-depth", 0, WAP_OPT_INT, 0, NULL },
	{ "exclude", 0, WAP_OPT_STRS, 0, NULL },
	{ "no-default-excludes", 0, WAP_OPT_BOOL, 0, NULL },
	{ "no-ignore", 0, WAP_OPT_BOOL, 0, NULL },
	{ "metadata", 'l', WAP_OPT_BOOL, 0, NULL },
	{ NULL }
};

struct walk {
	const struct wap_call *call;
	pthread_mutex_t lock;		/* the walker calls back from its workers */
	size_t rellen;			/* strlen of the listed directory's path */
	bool top;			/* the listed directory is the root */
	bool recursive, defaults, meta;
	long long max_depth;
	struct wap_globset excl;
	struct kept *kept;		/* the first MAX in path order so far: */
	size_t n, cap, max, found;	/* a heap, its last at the top */
	bool oom;			/* an entry could not be kept: the op fails */
};

/* an entry kept: what its object is made of when the walk is done */
struct kept {
	char *rel, *shown;		/* one allocation: shown follows rel */
	mode_t mode;
	off_t size;
	struct timespec mtime;
};

static const char *type_of(mode_t m)
{
	return S_ISDIR(m) ? "directory" : S_ISREG(m) ? "file" : S_ISLNK(m) ? "symlink" : "other";
}

/* path order, component by component ("a/b" right after "a") */
static int kept_cmp(const struct kept *a, const struct kept *b)
{
	return wap_path_cmp(a->shown, b->shown);
}

static int kept_qcmp(const void *a, const void *b)
{
	return kept_cmp(a, b);
}

/* the heap's entry at I moved down to where it belongs */
static void sift_down(struct kept *h, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1, big = i;
		struct kept t;
		if (c < n && kept_cmp(&h[c], &h[big]) > 0)
			big = c;
		if (c + 1 < n && kept_cmp(&h[c + 1], &h[big]) > 0)
			big = c + 1;
		if (big == i)
			return;
		t = h[i], h[i] = h[big], h[big] = t;
		i = big;
	}
}

/* Count an entry and keep it while it is among the first MAX in path
 * order: a heap of MAX whose top is the last kept (a directory of a
 * million entries holds MAX of them, never the million). */
static void add_entry(struct walk *w, const char *rel, const char *shown, const struct stat *st)
{
	size_t rl = strlen(rel), sl = strlen(shown), i;
	struct kept k = { NULL, (char *)shown, st->st_mode, st->st_size, st->st_mtim };

	w->found++;
	if (!w->max || (w->n == w->max && kept_cmp(&k, &w->kept[0]) >= 0))
		return;
	if (!(k.rel = malloc(rl + sl + 2))) {
		w->oom = true;
		return;
	}
	memcpy(k.rel, rel, rl + 1);
	k.shown = memcpy(k.rel + rl + 1, shown, sl + 1);
	if (w->n == w->cap && w->n < w->max) {
		size_t nc = w->cap ? 2 * w->cap : 64;
		struct kept *nk = realloc(w->kept, (nc < w->max ? nc : w->max) * sizeof(*nk));
		if (!nk) {
			free(k.rel);
			w->oom = true;
			return;
		}
		w->kept = nk;
		w->cap = nc < w->max ? nc : w->max;
	}
	if (w->n == w->max) {
		free(w->kept[0].rel);
		w->kept[0] = k;
		sift_down(w->kept, w->n, 0);
		return;
	}
	/* up from the bottom while above its parent */
	for (i = w->n++; i && kept_cmp(&k, &w->kept[(i - 1) / 2]) > 0; i = (i - 1) / 2)
		w->kept[i] = w->kept[(i - 1) / 2];
	w->kept[i] = k;
}

/* The object of entry K: {path, name, isDirectory, type[, metadata]} */
static json_t *entry_json(const struct walk *w, const struct kept *k)
{
	bool isdir = S_ISDIR(k->mode);
	/* names need not be UTF-8: never dropped (see wap_json_name) */
	json_t *o = json_object();

	if (!o || wap_json_set_name(o, "path", k->rel) || wap_json_set_name(o, "name", k->shown) ||
	    json_object_set_new(o, "isDirectory", json_boolean(isdir)) ||
	    json_object_set_new(o, "type", json_string(type_of(k->mode))))
		goto oom;
	if (w->meta) {
		char *abs = wap_ws_abs(w->call->ws, k->rel), when[32];
		json_t *m = json_object();
		wap_iso_time(&k->mtime, when);
		if (abs)
			wap_json_set_name(m, "path", abs);
		json_object_set_new(m, "size", json_integer(k->size));
		json_object_set_new(m, "isDirectory", json_boolean(isdir));
		json_object_set_new(m, "lastModified", json_string(when));
		free(abs);
		if (!abs || !m || json_object_set_new(o, "metadata", m))
			goto oom;
	}
	return o;
oom:
	json_decref(o);
	return NULL;
}

/* an --exclude glob matches the path as shown or from the root */
static bool excluded(const struct walk *w, const char *rel, size_t rlen, const char *shown, size_t slen)
{
	return wap_exclude_match(&w->excl, shown, slen, false) ||
	       (strcmp(rel, shown) && wap_exclude_match(&w->excl, rel, rlen, false));
}

/* The recursive listing: a callback of the shared walker (lib/fs/walk.c),
 * which skips default exclusions, ignored and restricted paths. */
static int walk_ent(void *arg, const struct wap_walk_ent *e, struct wap_err *err)
{
	struct walk *w = arg;
	const char *shown = w->top ? e->path : e->path + w->rellen + 1;
	struct stat st;

	(void)err;
	if (e->depth == 0)
		return 0;
	if (excluded(w, e->path, e->pathlen, shown, strlen(shown)))
		return 1;
	if (fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;
	pthread_mutex_lock(&w->lock);
	add_entry(w, e->path, shown, &st);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

/* List the directory open as DFD, at REL (from the root) and SHOWN (from
 * the listed directory, "" at the top); DFD is consumed. */
static int walk_dir(struct walk *w, int dfd, const char *rel, const char *shown, long long depth,
		    struct wap_err *err)
{
	const struct wap_ws *ws = w->call->ws;
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	char *real = NULL;

	if (!d) {
		close(dfd);
		return wap_err_errno(err, errno, rel);
	}
	/* restricted names are judged where a linked directory really is too */
	if (wap_ws_listing_real(ws, dirfd(d), rel, &real, err)) {
		closedir(d);
		return -1;
	}
	while ((de = readdir(d))) {
		struct wap_sb r = WAP_SB_INIT, s = WAP_SB_INIT;
		struct wap_err tmp = { 0 };
		struct stat st;
		bool isdir;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (wap_call_cancelled(w->call))
			break;
		wap_path_add(&r, rel, de->d_name);
		wap_path_add(&s, shown, de->d_name);
		if (r.oom || s.oom || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			goto next;
		isdir = S_ISDIR(st.st_mode);
		/* restricted paths are not shown at all */
		if (wap_ws_check(ws, r.buf, WAP_ACC_READ, &tmp) ||
		    (real && wap_ws_restricted_in(ws, real, de->d_name)))
			goto next;
		/* the default globs exclude directories named build and
		 * what is under them, not a script named build */
		if (w->recursive && w->defaults && isdir && wap_exclude_default_path(s.buf))
			goto next;
		if (excluded(w, r.buf, r.len, s.buf, s.len))
			goto next;
		add_entry(w, r.buf, s.buf, &st);
		if (isdir && w->recursive && depth < w->max_depth) {
			/* by fd, never by name from the root again; O_NOFOLLOW: a
			 * directory swapped for a link is not entered */
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				walk_dir(w, sub, r.buf, s.buf, depth + 1, &tmp);
		}
next:
		wap_err_release(&tmp);
		wap_sb_release(&r);
		wap_sb_release(&s);
	}
	closedir(d);
	free(real);
	return 0;
}

static int ls_op(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	const struct wap_ws *ws = call->ws;
	struct walk w = { .call = call, .defaults = true, .max_depth = 3,
			  .lock = PTHREAD_MUTEX_INITIALIZER };
	bool nodef = false, noign = false;
	char *rel = NULL;
	json_t *files;
	size_t i;
	int fd, rc = -1;

	*res = NULL;
	if (wap_req_bool(req, "recursive", &w.recursive, err) < 0 ||
	    wap_req_bool(req, "metadata", &w.meta, err) < 0 ||
	    wap_req_bool(req, "no_default_excludes", &nodef, err) < 0 ||
	    wap_req_bool(req, "no_ignore", &noign, err) < 0 ||
	    wap_req_int(req, "max_depth", &w.max_depth, err) < 0)
		return -1;
	w.defaults = !nodef;
	if (w.max_depth < 1)
		return wap_err_set(err, WAP_E_INVALID, "max_depth must be at least 1 (got %lld)", w.max_depth);
	if (!w.recursive)
		w.max_depth = 1;
	if (wap_exclude_globs(&w.excl, req, "exclude", err))
		goto out;
	if (wap_req_path(call, req, "path", ".", &rel, err))
		goto out;
	fd = wap_ws_open(ws, rel, O_RDONLY | O_DIRECTORY, 0, WAP_ACC_READ, err);
	if (fd < 0) {
		if (err && err->kind == WAP_E_NOT_FOUND)
			wap_err_set(err, WAP_E_NOT_FOUND, "Directory not found: %s", rel);
		goto out;
	}
	w.max = ws->lim.max_dir_entries;
	if (w.recursive) {
		struct wap_walk_opts o = {
			.max_depth = (int)(w.max_depth > 1000000 ? 1000000 : w.max_depth),
			.no_ignore = noign, .no_default_excludes = nodef,
			.dirs = true, .links = true, .cancel = call->cancel,
		};
		close(fd);
		w.top = !strcmp(rel, ".");
		w.rellen = strlen(rel);
		if (wap_walk(ws, rel, &o, walk_ent, &w, err))
			goto out;
	} else if (walk_dir(&w, fd, rel, "", 1, err)) {
		goto out;
	}
	/* what is kept, in order */
	if (w.n)
		qsort(w.kept, w.n, sizeof(*w.kept), kept_qcmp);
	files = w.oom ? NULL : json_array();
	for (i = 0; files && i < w.n; i++)
		if (json_array_append_new(files, entry_json(&w, &w.kept[i]))) {
			json_decref(files);
			files = NULL;
		}
	if (!files) {
		wap_err_oom(err);
		goto out;
	}
	*res = json_pack("{s:o, s:b, s:I}", "files", files, "isTruncated", w.found > w.n,
			 "totalFound", (json_int_t)w.found);
	rc = *res && !wap_json_set_name(*res, "path", rel) ? 0 :
	     wap_err_oom(err);
	if (rc) {
		json_decref(*res);
		*res = NULL;
	}
out:
	for (i = 0; i < w.n; i++)
		free(w.kept[i].rel);
	free(w.kept);
	wap_globset_release(&w.excl);
	free(rel);
	return rc;
}

static int ls_render(const json_t *res, const json_t *req, FILE *out)
{
	struct wap_sb q = WAP_SB_INIT, qn = WAP_SB_INIT;
	const char *path;
	json_t *files = json_object_get(res, "files"), *f;
	size_t i;

	(void)req;
	if (!out)
		return 0;
	path = wap_name_show(&q, json_string_value(json_object_get(res, "path")));
	if (!json_array_size(files))
		fprintf(out, "Directory is empty: %s\n", path);
	else
		fprintf(out, "Contents of %s:\n\n", path);
	json_array_foreach(files, i, f) {
		json_t *m = json_object_get(f, "metadata");
		bool dir = json_is_true(json_object_get(f, "isDirectory"));
		fprintf(out, "[%s] %s", dir ? "DIR" : "FILE",
			wap_name_show(&qn, json_string_value(json_object_get(f, "name"))));
		if (m && !dir)
			fprintf(out, "  (%lld bytes, modified %s)",
				(long long)json_integer_value(json_object_get(m, "size")),
				json_string_value(json_object_get(m, "lastModified")));
		else if (m)
			fprintf(out, "  (modified %s)", json_string_value(json_object_get(m, "lastModified")));
		fputc('\n', out);
	}
	if (json_is_true(json_object_get(res, "isTruncated")))
		fprintf(out, "\n[truncated: showing %zu of %lld entries; list a subdirectory, lower --max-depth or add --exclude]\n",
			json_array_size(files), (long long)json_integer_value(json_object_get(res, "totalFound")));
	wap_sb_release(&q);
	wap_sb_release(&qn);
	return 0;
}

const struct wap_applet wap_applet_ls = {
	.name = "ls",
	.summary = wap_summary_ls,
	.usage = wap_usage_ls,
	.title = "List a directory",
	.opts = ls_opts,
	.op = ls_op,
	.render = ls_render,
	.flags = WAP_APPLET_READONLY | WAP_APPLET_IDEMPOTENT,
};
