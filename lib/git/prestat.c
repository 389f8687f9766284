/* git/prestat.c - what git does so that status and diff need not look at
 * every file: the stat data the index keeps (a file whose lstat matches
 * its entry is unchanged, without reading it), a walk of the work tree by
 * directory fd on two threads (getdents and fstatat, no path lookups),
 * and the index's cache tree (index == HEAD's tree: nothing staged).
 *
 * The walk only narrows: it names every path that may differ (stat data
 * not the entry's, racily clean, missing, of another type, unmerged, a
 * gitlink, untracked) and libgit2 then judges those paths alone, with all
 * its rules (filters, ignore files, submodules, untracked directories).
 * Naming too many paths costs time, never correctness; naming too few
 * would hide a change, so anything unsure is named. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "walk.h"
#include "workers.h"

#define GITLINK_MODE 0160000

struct walk {
	struct wap_workers *pool;
	const git_index_entry **e;	/* the index, sorted by path */
	size_t n;
	struct timespec stamp;		/* the index file's mtime */
	bool untracked;
	pthread_mutex_t mu;
	struct strv cand;		/* the paths to look at */
	struct strv keep;		/* a clean entry of each directory holding an untracked path */
	struct strv newdirs;		/* dirs on disk with nothing of the index beneath */
	bool failed;			/* out of memory: look at everything */
};

struct dirjob {
	struct walk *w;
	int fd;				/* the directory, opened by its parent's job */
	char *prefix;			/* repository path, with a trailing '/' ("" at the top) */
	size_t lo, hi;			/* its entries in the index */
};

struct child {
	const char *name;
	size_t len;
	unsigned char type;		/* DT_* of a dirent; 0 for an index child */
	bool dir;			/* index child: a directory of entries */
	size_t lo, hi;
};

static int child_cmp(const void *a, const void *b)
{
	const struct child *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static void walk_failed(struct walk *w)
{
	pthread_mutex_lock(&w->mu);
	w->failed = true;
	pthread_mutex_unlock(&w->mu);
}

static void add_path(struct walk *w, struct strv *to, const char *prefix, const char *name, size_t len)
{
	struct wap_sb sb = WAP_SB_INIT;

	wap_sb_adds(&sb, prefix);
	wap_sb_add(&sb, name, len);
	pthread_mutex_lock(&w->mu);
	if (sb.oom || strv_add(to, wap_sb_detach(&sb)))
		w->failed = true;
	pthread_mutex_unlock(&w->mu);
	wap_sb_release(&sb);
}

static void add_cand(struct walk *w, const char *prefix, const char *name, size_t len)
{
	add_path(w, &w->cand, prefix, name, len);
}

/* Directory J holds an untracked path.  libgit2, given an index of the
 * candidates alone, would take a directory none of whose entries is one
 * for an untracked directory: it would name it ("d/", as git names a new
 * directory) and, that matching no pathspec, drop it with the new file in
 * it.  So one entry of J (a file of its own if it has one), beneath no
 * candidate and so clean, goes to libgit2 too: J and its parents are then
 * tracked, as they are.  IC: J's index children, sorted. */
static void keep_tracked(struct walk *w, const struct dirjob *j, const struct child *ic, size_t ni)
{
	const char *path = w->e[j->lo]->path;

	for (size_t a = 0; a < ni; a++)
		if (!ic[a].dir) {
			path = w->e[ic[a].lo]->path;
			break;
		}
	add_path(w, &w->keep, "", path, strlen(path));
}

/* Does the file at NAME in FD still have the stat data of index entry E?
 * (libgit2's and git's test: mode, size, times, inode, owner; a file
 * changed in the second the index was written, or later, is racily clean
 * and so not known to be unchanged.) */
static bool stat_clean(const struct walk *w, int fd, const char *name, const git_index_entry *e)
{
	struct stat st;
	unsigned mode;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return false;
	if (S_ISREG(st.st_mode))
		mode = st.st_mode & 0100 ? 0100755 : 0100644;
	else if (S_ISLNK(st.st_mode))
		mode = 0120000;
	else
		return false;
	if (e->mode != mode || e->file_size != (uint32_t)st.st_size ||
	    e->mtime.seconds != (int32_t)st.st_mtim.tv_sec || e->ctime.seconds != (int32_t)st.st_ctim.tv_sec ||
	    (e->mtime.nanoseconds && e->mtime.nanoseconds != (uint32_t)st.st_mtim.tv_nsec) ||
	    (e->ctime.nanoseconds && e->ctime.nanoseconds != (uint32_t)st.st_ctim.tv_nsec) ||
	    e->ino != (uint32_t)st.st_ino || e->dev != (uint32_t)st.st_dev ||
	    e->uid != (uint32_t)st.st_uid || e->gid != (uint32_t)st.st_gid)
		return false;
	return st.st_mtim.tv_sec < w->stamp.tv_sec;
}

static void run_dir(void *p);

/* Is dirent C of directory FD a directory? */
static bool is_dir(int fd, const struct child *c)
{
	struct stat st;
	char *n;
	bool r;

	if (c->type != DT_UNKNOWN)
		return c->type == DT_DIR;
	n = strndup(c->name, c->len);
	r = !n || (!fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode));
	free(n);
	return r;
}

/* Is dirent C of directory FD a directory holding a .git? */
static bool nested_repo(int fd, const struct child *c)
{
	struct wap_sb sb = WAP_SB_INIT;
	struct stat st;
	bool r;

	if (!is_dir(fd, c))
		return false;
	wap_sb_add(&sb, c->name, c->len);
	wap_sb_adds(&sb, "/.git");
	r = sb.oom || !fstatat(fd, sb.buf, &st, AT_SYMLINK_NOFOLLOW);
	wap_sb_release(&sb);
	return r;
}

/* Queue the walk of directory NAME (LEN bytes) of directory PARENT: it is
 * opened here (not following a link: a link is no directory of the work
 * tree, and is looked at the slow way), so that the job holds its fd. */
static void submit_dir(struct walk *w, int parent, const char *prefix, const char *name, size_t len,
		       size_t lo, size_t hi)
{
	struct dirjob *j = calloc(1, sizeof(*j));
	struct wap_sb sb = WAP_SB_INIT;
	char nm[NAME_MAX + 1];

	if (len > NAME_MAX) {
		free(j);
		add_cand(w, prefix, name, len);
		return;
	}
	memcpy(nm, name, len);
	nm[len] = 0;
	if (j) {
		wap_sb_adds(&sb, prefix);
		wap_sb_add(&sb, name, len);
		wap_sb_addc(&sb, '/');
		j->prefix = wap_sb_detach(&sb);
	}
	if (!j || !j->prefix || (j->fd = openat(parent, nm, (w->untracked ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW |
				 O_CLOEXEC)) < 0) {
		if (j)
			free(j->prefix);
		free(j);
		wap_sb_release(&sb);
		/* no longer a directory (or a link to one), or out of
		 * memory: look at it the slow way */
		add_cand(w, prefix, name, len);
		return;
	}
	j->w = w;
	j->lo = lo;
	j->hi = hi;
	if (wap_workers_submit(w->pool, run_dir, j)) {
		close(j->fd);
		free(j->prefix);
		free(j);
		add_cand(w, prefix, name, len);
	}
}

/* The index children of a directory: its files (one entry, or the stages
 * of an unmerged path) and its subdirectories (a run of entries); or
 * -1 when an entry's path has an empty, "." or ".." component (the index
 * file is the agent's to write: the walk must not leave the work tree
 * through it; such an index is left to libgit2). */
static ssize_t index_children(const struct walk *w, const char *prefix, size_t lo, size_t hi,
			      struct child *out)
{
	size_t pl = strlen(prefix), k = 0;

	for (size_t i = lo; i < hi;) {
		const char *rest = w->e[i]->path + pl, *slash = strchr(rest, '/');
		size_t len = slash ? (size_t)(slash - rest) : strlen(rest), j = i + 1;

		if (!len || (rest[0] == '.' && (len == 1 || (len == 2 && rest[1] == '.'))))
			return -1;

		if (slash) {
			while (j < hi && !strncmp(w->e[j]->path + pl, rest, len + 1))
				j++;
		} else {
			while (j < hi && !strcmp(w->e[j]->path + pl, rest))
				j++;
		}
		out[k++] = (struct child){ rest, len, 0, slash != NULL, i, j };
		i = j;
	}
	return k;
}

static void run_dir(void *p)
{
	struct dirjob *j = p;
	struct walk *w = j->w;
	struct child *ic = NULL, *dc = NULL;
	size_t ni = 0, nd = 0, cap = 64, a, b;
	bool kept = false;
	ssize_t n;
	struct dirent *de;
	DIR *d = NULL;
	int fd;

	fd = j->fd;
	ic = malloc((j->hi - j->lo + 1) * sizeof(*ic));
	dc = malloc(cap * sizeof(*dc));
	if (!ic || !dc)
		goto oom;
	if ((n = index_children(w, j->prefix, j->lo, j->hi, ic)) < 0) {
		walk_failed(w);
		goto out;
	}
	ni = (size_t)n;
	if (!w->untracked) {
		/* no untracked paths wanted: as git, one fstatat an entry
		 * and no listing (but a repository in a tracked directory
		 * is libgit2's to judge) */
		struct stat st;
		if (*j->prefix && !fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW)) {
			add_cand(w, "", j->prefix, strlen(j->prefix) - 1);
			goto out;
		}
		for (a = 0; a < ni; a++) {
			const struct child *x = &ic[a];
			char name[NAME_MAX + 1];
			const git_index_entry *e = w->e[x->lo];
			if (x->len > NAME_MAX) {
				add_cand(w, j->prefix, x->name, x->len);
				continue;
			}
			memcpy(name, x->name, x->len);
			name[x->len] = 0;
			if (x->dir) {
				/* a directory (its open says so) or looked at */
				submit_dir(w, fd, j->prefix, x->name, x->len, x->lo, x->hi);
			} else if (x->hi - x->lo != 1 || git_index_entry_stage(e) ||
				   (e->flags & (GIT_INDEX_ENTRY_VALID | GIT_INDEX_ENTRY_EXTENDED)) ||
				   e->flags_extended || e->mode == GITLINK_MODE ||
				   !stat_clean(w, fd, name, e)) {
				add_cand(w, j->prefix, x->name, x->len);
			}
		}
		goto out;
	}
	/* untracked paths wanted: the listing too */
	if (!(d = fdopendir(fd))) {
		if (*j->prefix)
			add_cand(w, "", j->prefix, strlen(j->prefix) - 1);
		else
			walk_failed(w);
		goto out;
	}
	fd = -1;	/* D owns it */
	while ((errno = 0, de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (nd == cap) {
			struct child *nv = realloc(dc, (cap *= 2) * sizeof(*dc));
			if (!nv)
				goto oom;
			dc = nv;
		}
		dc[nd].name = de->d_name;	/* stays valid: copied below */
		dc[nd].len = strlen(de->d_name);
		dc[nd].type = de->d_type;
		nd++;
		if (!(dc[nd - 1].name = strndup(de->d_name, dc[nd - 1].len))) {
			nd--;
			goto oom;
		}
	}
	if (errno) {
		if (*j->prefix)
			add_cand(w, "", j->prefix, strlen(j->prefix) - 1);
		else
			walk_failed(w);
		goto out;
	}
	qsort(ic, ni, sizeof(*ic), child_cmp);
	qsort(dc, nd, sizeof(*dc), child_cmp);
	for (a = b = 0; a < ni || b < nd;) {
		int c = a == ni ? 1 : b == nd ? -1 : child_cmp(&ic[a], &dc[b]);
		const struct child *x = a < ni ? &ic[a] : NULL, *y = b < nd ? &dc[b] : NULL;

		if (c < 0) {		/* in the index only: deleted */
			add_cand(w, j->prefix, x->name, x->len);
			a++;
			continue;
		}
		if (c > 0) {		/* on disk only */
			if (y->len == 4 && !memcmp(y->name, ".git", 4)) {
				/* a repository's own; one within a tracked
				 * directory makes it another repository */
				if (*j->prefix)
					add_cand(w, "", j->prefix, strlen(j->prefix) - 1);
			} else if (w->untracked && nested_repo(dirfd(d), y)) {
				/* git lists it whatever it holds, libgit2 not
				 * when it holds nothing else: the status
				 * decides (own_repos) */
				add_path(w, &w->newdirs, j->prefix, y->name, y->len);
			} else if (w->untracked) {
				if (*j->prefix && !kept && ni) {
					keep_tracked(w, j, ic, ni);
					kept = true;
				}
				add_cand(w, j->prefix, y->name, y->len);
				if (is_dir(dirfd(d), y))
					add_path(w, &w->newdirs, j->prefix, y->name, y->len);
			}
			b++;
			continue;
		}
		if (a + 1 < ni && !child_cmp(&ic[a], &ic[a + 1])) {
			/* a file and a directory of one name: let libgit2 say */
			add_cand(w, j->prefix, x->name, x->len);
			while (a + 1 < ni && !child_cmp(&ic[a], &ic[a + 1]))
				a++;
		} else if (x->dir) {
			unsigned char t = y->type;
			struct stat st;
			if (t == DT_UNKNOWN)
				t = !fstatat(dirfd(d), y->name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
			if (t == DT_DIR)
				submit_dir(w, dirfd(d), j->prefix, y->name, y->len, x->lo, x->hi);
			else
				add_cand(w, j->prefix, x->name, x->len);
		} else {
			const git_index_entry *e = w->e[x->lo];
			if (x->hi - x->lo != 1 || git_index_entry_stage(e) ||
			    (e->flags & (GIT_INDEX_ENTRY_VALID | GIT_INDEX_ENTRY_EXTENDED)) ||
			    e->flags_extended || e->mode == GITLINK_MODE ||
			    !stat_clean(w, dirfd(d), y->name, e))
				add_cand(w, j->prefix, x->name, x->len);
		}
		a++;
		b++;
	}
	goto out;
oom:
	walk_failed(w);
out:
	if (d)
		closedir(d);
	if (fd >= 0)
		close(fd);
	for (size_t i = 0; dc && i < nd; i++)
		free((char *)dc[i].name);
	free(dc);
	free(ic);
	free(j->prefix);
	free(j);
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* The entries of an index file, as libgit2 would read them.  Their paths
 * point into BUF, the file as read (a version 2 or 3 index ends each path
 * in NULs: 78,000 strings not copied on Linux), or are their own (version
 * 4 writes each path as its predecessor's prefix and a suffix). */
struct ientries {
	git_index_entry *v;
	size_t n;
	unsigned char *buf;
	bool own_paths;
};

static void ientries_free(struct ientries *ie)
{
	for (size_t i = 0; ie->own_paths && ie->v && i < ie->n; i++)
		free((char *)ie->v[i].path);
	free(ie->v);
	free(ie->buf);
	ie->v = NULL;
	ie->buf = NULL;
	ie->n = 0;
}

/* Entry I of the index file BUF (at P, its path SUFFIX): in IE. */
static int ientry_add(struct ientries *ie, const unsigned char *p, char *path)
{
	git_index_entry *e = &ie->v[ie->n];

	if (!path)
		return -1;
	memset(e, 0, sizeof(*e));
	e->ctime.seconds = (int32_t)be32(p);
	e->ctime.nanoseconds = be32(p + 4);
	e->mtime.seconds = (int32_t)be32(p + 8);
	e->mtime.nanoseconds = be32(p + 12);
	e->dev = be32(p + 16);
	e->ino = be32(p + 20);
	e->mode = be32(p + 24);
	e->uid = be32(p + 28);
	e->gid = be32(p + 32);
	e->file_size = be32(p + 36);
	git_oid_fromraw(&e->id, p + 40);
	e->flags = (uint16_t)(p[60] << 8 | p[61]);
	if (e->flags & GIT_INDEX_ENTRY_EXTENDED)
		e->flags_extended = (uint16_t)(p[62] << 8 | p[63]);
	e->path = path;
	ie->n++;
	return 0;
}

/* The index file's mtime, and the root tree its cache tree records (the
 * TREE extension's first entry; zero when it is not valid); with IE, its
 * entries.  0, or -1 when the file cannot be read or parsed (then nothing
 * is assumed). */
static int read_index_file(struct g *g, const char *path, struct timespec *mtime, git_oid *root,
			   struct ientries *ie)
{
	struct wap_err e2 = { 0 };
	struct stat st;
	unsigned char *buf = NULL;
	char *rel = NULL;
	size_t off, got = 0;
	uint32_t ver, count;
	int fd = -1, rc = -1;

	memset(root, 0, sizeof(*root));
	if (wap_ws_rel(g->ws, path, strlen(path), &rel, &e2) ||
	    (fd = open_plumbing(g, rel, O_RDONLY | O_NONBLOCK, &e2)) < 0 || fstat(fd, &st) ||
	    !S_ISREG(st.st_mode) || st.st_size < 12 + 20 || !(buf = malloc(st.st_size + 1)))
		goto out;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, st.st_size - got);
		if (r <= 0)
			goto out;
		got += r;
	}
	buf[got] = 0;	/* strtol below stops there at the latest */
	*mtime = st.st_mtim;
	if (memcmp(buf, "DIRC", 4))
		goto out;
	ver = be32(buf + 4);
	count = be32(buf + 8);
	if (ver < 2 || ver > 4 || (ie && !(ie->v = calloc((size_t)count + 1, sizeof(*ie->v)))))
		goto out;
	if (ie)
		ie->own_paths = ver == 4;
	rc = ie ? -1 : 0;	/* the entries, if asked for, must all be read */
	off = 12;
	for (uint32_t i = 0; i < count; i++) {
		size_t fixed = 62, nl;
		const unsigned char *nul, *e = buf + off;
		if (off + fixed > got - 20)
			goto out;
		if (ver >= 3 && (buf[off + 60] & 0x40))
			fixed += 2;
		if (ver == 4) {
			/* the path: the previous one less N bytes, then this */
			size_t k = off + fixed, strip;
			strip = buf[k] & 127;
			while (k < got - 20 && (buf[k] & 0x80)) {
				k++;
				strip = ((strip + 1) << 7) + (buf[k] & 127);
			}
			k++;
			nul = k < got - 20 ? memchr(buf + k, 0, got - 20 - k) : NULL;
			if (!nul)
				goto out;
			if (ie) {
				const char *prev = ie->n ? ie->v[ie->n - 1].path : "";
				size_t pl = strlen(prev);
				struct wap_sb sb = WAP_SB_INIT;
				if (strip > pl)
					goto out;
				wap_sb_add(&sb, prev, pl - strip);
				wap_sb_add(&sb, (const char *)buf + k, (size_t)(nul - (buf + k)));
				if (sb.oom || ientry_add(ie, e, wap_sb_detach(&sb))) {
					wap_sb_release(&sb);
					goto out;
				}
			}
			off = (size_t)(nul - buf) + 1;
		} else {
			nul = off + fixed < got - 20 ? memchr(buf + off + fixed, 0, got - 20 - off - fixed) : NULL;
			if (!nul)
				goto out;
			nl = (size_t)(nul - (buf + off + fixed));
			if (ie && ientry_add(ie, e, (char *)buf + off + fixed))
				goto out;
			off += (fixed + nl + 8) & ~(size_t)7;
		}
	}
	rc = 0;
	while (off + 8 <= got - 20) {
		uint32_t sz = (uint32_t)buf[off + 4] << 24 | buf[off + 5] << 16 | buf[off + 6] << 8 | buf[off + 7];
		const unsigned char *p = buf + off + 8, *end = p + sz;
		if (sz > got - 20 - off - 8)
			goto out;
		if (!memcmp(buf + off, "TREE", 4)) {
			/* "" NUL entry_count SP subtrees LF [oid]: the root */
			long entries;
			char *q;
			if (p >= end || *p)
				goto out;
			p++;
			entries = strtol((const char *)p, &q, 10);
			if ((const unsigned char *)q >= end || *q != ' ' || !(q = memchr(q, '\n', end - (unsigned char *)q)))
				goto out;
			if (entries >= 0 && (unsigned char *)q + 1 + GIT_OID_RAWSZ <= end)
				git_oid_fromraw(root, (unsigned char *)q + 1);
		}
		if (!memcmp(buf + off, "link", 4) || !memcmp(buf + off, "sdir", 4)) {
			/* a split or sparse index: its entries are not all
			 * here; libgit2 says what it makes of it */
			rc = -1;
			goto out;
		}
		off += 8 + sz;
	}
out:
	if (fd >= 0)
		close(fd);
	wap_err_release(&e2);
	free(rel);
	if (ie && ie->v && !ie->own_paths)
		ie->buf = buf;	/* the paths are in it */
	else
		free(buf);
	return rc;
}


/* Does the repository's config keep git's defaults that an index made in
 * memory assumes (core.filemode and core.symlinks on, core.ignorecase off)? */
static bool default_caps(struct g *g)
{
	git_config *cfg = NULL;
	int fm = 1, sl = 1, ic = 0;

	if (git_repository_config_snapshot(&cfg, g->repo)) {
		git_error_clear();
		return false;
	}
	git_config_get_bool(&fm, cfg, "core.filemode");
	git_config_get_bool(&sl, cfg, "core.symlinks");
	git_config_get_bool(&ic, cfg, "core.ignorecase");
	git_error_clear();
	git_config_free(cfg);
	return fm && sl && !ic;
}

/* Is PATH, or a directory above it, one of the sorted paths of V? */
static bool covered(const struct strv *v, const char *path)
{
	char *p = strdup(path), *slash;
	bool r = false;

	if (!p)
		return true;	/* then it is not added: a pathspec less */
	for (;;) {
		if (v->n && bsearch(&p, v->v, v->n, sizeof(*v->v), strv_cmp)) {
			r = true;
			break;
		}
		if (!(slash = strrchr(p, '/')))
			break;
		*slash = 0;
	}
	free(p);
	return r;
}

/* An index in memory holding the entries of IE at the paths of CAND (and
 * beneath them), their times cleared so that libgit2 compares their
 * contents (never trusts their stat data), and those at the paths of KEEP
 * (clean: the walk named none of them) as they are: 0, or -1. */
static int small_index(const struct ientries *ie, const struct strv *cand, const struct strv *keep,
		       git_index **out)
{
	git_index *idx = NULL;

	if (git_index_new(&idx))
		return -1;
	for (size_t c = 0; c < cand->n + keep->n; c++) {
		bool clean = c >= cand->n;
		const char *p = clean ? keep->v[c - cand->n] : cand->v[c];
		size_t pl = strlen(p), lo = 0, hi = ie->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(ie->v[mid].path, p) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < ie->n && !strncmp(ie->v[lo].path, p, pl) &&
		       (!ie->v[lo].path[pl] || (!clean && ie->v[lo].path[pl] == '/')); lo++) {
			git_index_entry e = ie->v[lo];
			if (git_index_get_bypath(idx, e.path, git_index_entry_stage(&e)))
				continue;	/* a path under two candidates */
			if (!clean) {
				e.mtime.seconds = 0;
				e.mtime.nanoseconds = 0;
			}
			if (git_index_add(idx, &e)) {
				git_index_free(idx);
				return -1;
			}
		}
	}
	*out = idx;
	return 0;
}

/* The paths of the work tree that may differ from index IDX (UNTRACKED:
 * untracked ones too, and in *NEWDIRS, if not NULL and the walk was made,
 * the directories with nothing of the index beneath: NULL-terminated,
 * an empty list when none, left NULL when not known), in *OUT, sorted: 1
 * when they are known, 0 when not
 * (an index that ignores case, no index file, out of memory): then every
 * path must be looked at.  With NOTHING_STAGED, whether the index's cache
 * tree says the index is HEAD's tree (as git's diff-index uses it, without
 * reading a tree): then nothing is staged.  With IDX NULL, the index file
 * is read here rather than by libgit2 (which spends tens of ms on a large
 * one), and *SMALL gets an index of the paths of *OUT only: what a diff of
 * them needs. */
int wt_prestat(struct g *g, git_index *idx, bool untracked, struct strv *out, bool *nothing_staged,
	       git_index **small, struct strv *newdirs)
{
	struct walk w = { .untracked = untracked };
	struct ientries ie = { 0 };
	struct dirjob *top;
	struct wap_err e2 = { 0 };
	char *ipath = NULL;
	git_oid root;
	size_t k;
	int fd, known = 0;

	memset(out, 0, sizeof(*out));
	if (newdirs)
		memset(newdirs, 0, sizeof(*newdirs));
	if (nothing_staged)
		*nothing_staged = false;
	if (small)
		*small = NULL;
	if (!g->wd_rel)
		return 0;
	if (idx) {
		if ((git_index_caps(idx) & GIT_INDEX_CAPABILITY_IGNORE_CASE) || !git_index_path(idx) ||
		    read_index_file(g, git_index_path(idx), &w.stamp, &root, NULL))
			return 0;
	} else {
		struct wap_sb sb = WAP_SB_INIT;
		wap_sb_addf(&sb, "%sindex", git_repository_path(g->repo));
		ipath = wap_sb_detach(&sb);
		if (!ipath || !default_caps(g) || read_index_file(g, ipath, &w.stamp, &root, &ie)) {
			free(ipath);
			ientries_free(&ie);
			return 0;
		}
		free(ipath);
	}
	if (nothing_staged && !git_oid_is_zero(&root)) {
		git_commit *head = NULL;
		if (!head_commit(g, &head) && head)
			*nothing_staged = git_oid_equal(git_commit_tree_id(head), &root);
		git_commit_free(head);
		clear_err(g);
	}
	w.n = idx ? git_index_entrycount(idx) : ie.n;
	if (!(w.e = malloc((w.n + 1) * sizeof(*w.e))))
		goto done;
	for (size_t i = 0; i < w.n; i++) {
		w.e[i] = idx ? git_index_get_byindex(idx, i) : &ie.v[i];
		/* sorted (libgit2 keeps them so, git writes them so): the
		 * walk relies on it */
		if (i && strcmp(w.e[i - 1]->path, w.e[i]->path) > 0)
			goto done;
	}
	fd = open_plumbing(g, g->wd_rel, O_RDONLY | O_DIRECTORY, &e2);
	wap_err_release(&e2);
	if (fd < 0)
		goto done;
	pthread_mutex_init(&w.mu, NULL);
	top = calloc(1, sizeof(*top));
	wap_fd_room(fd, 4096);	/* the walk holds 1,600 fds on the Linux tree */
	w.pool = wap_workers_new(2);
	if (top && w.pool && (top->prefix = strdup(""))) {
		top->w = &w;
		top->fd = fd;
		top->hi = w.n;
		if (wap_workers_submit(w.pool, run_dir, top)) {
			w.failed = true;
		} else {
			top = NULL;	/* run_dir owns it, and FD */
			fd = -1;
		}
		wap_workers_wait(w.pool);
	} else {
		w.failed = true;
	}
	wap_workers_free(w.pool);
	if (top)
		free(top->prefix);
	free(top);
	if (fd >= 0)
		close(fd);
	pthread_mutex_destroy(&w.mu);
	if (newdirs && !w.failed && (w.newdirs.v || (w.newdirs.v = calloc(1, sizeof(char *))))) {
		if (w.newdirs.n)
			qsort(w.newdirs.v, w.newdirs.n, sizeof(*w.newdirs.v), strv_cmp);
		*newdirs = w.newdirs;
		w.newdirs.v = NULL;
		w.newdirs.n = 0;
	}
	/* most of the tree changed (a checkout, ctimes touched by hard
	 * links): a list that long costs libgit2 more than its own walk */
	if (w.failed || (w.cand.n > 4096 && w.cand.n > w.n / 8))
		goto done;
	if (w.cand.n)
		qsort(w.cand.v, w.cand.n, sizeof(*w.cand.v), strv_cmp);
	/* the clean entries that keep directories tracked, unless a
	 * candidate brings them already; named to libgit2 with the rest */
	if (w.keep.n)
		qsort(w.keep.v, w.keep.n, sizeof(*w.keep.v), strv_cmp);
	k = 0;
	for (size_t i = 0; i < w.keep.n; i++) {
		if ((k && !strcmp(w.keep.v[k - 1], w.keep.v[i])) || covered(&w.cand, w.keep.v[i]))
			free(w.keep.v[i]);
		else
			w.keep.v[k++] = w.keep.v[i];
	}
	w.keep.n = k;
	if (!idx && small && small_index(&ie, &w.cand, &w.keep, small)) {
		git_error_clear();
		goto done;
	}
	for (size_t i = 0; i < w.keep.n; i++) {
		char *p = w.keep.v[i];
		w.keep.v[i] = NULL;
		if (strv_add(&w.cand, p))
			goto done;
	}
	if (w.keep.n)
		qsort(w.cand.v, w.cand.n, sizeof(*w.cand.v), strv_cmp);
	*out = w.cand;
	w.cand.v = NULL;
	w.cand.n = 0;
	known = 1;
done:
	strv_free(&w.cand);
	strv_free(&w.keep);
	strv_free(&w.newdirs);
	free(w.e);
	ientries_free(&ie);
	return known;
}
