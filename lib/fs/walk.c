/* fs/walk.c - parallel directory walk with ignore rules (see walk.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "file.h"
#include "ignore.h"
#include "strbuf.h"
#include "exclude.h"
#include "walk.h"

struct devino {
	dev_t dev;
	ino_t ino;
};

struct job {
	struct job *next;
	int fd;			/* O_RDONLY|O_DIRECTORY, or -1: open by path */
	int depth;
	struct wap_ign *ign;	/* owned reference */
	void *ctx;		/* the callback's dirctx for the entries */
	struct devino *anc;	/* follow: this directory and its ancestors */
	size_t nanc;
	char *real;		/* where it really is, when a symlink on the
				 * way (the start, --follow) makes that other
				 * than PATH and restrictedPaths are set; owned */
	size_t pathlen;
	char path[];		/* root-relative, "." for the root */
};

struct walker {
	const struct wap_ws *ws;
	const struct wap_walk_opts *o;
	wap_walk_fn fn;
	void *arg;
	bool in_repo;
	bool outer;		/* the repository's top is above the root */

	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *stack;
	int idle, nthreads;
	bool stop;
	struct wap_err err;
	bool errset;
};

/* 16 bytes: a directory's entries are sorted by moving these */
struct dent {
	uint64_t pre;		/* sorted: the name's first 8 bytes, in order */
	uint32_t off;		/* the name's offset in dbuf (which may move
				 * while the directory is read) */
	unsigned short len;
	unsigned char type;
};

/* what a worker reuses from one directory to the next; each on cache
 * lines of its own (it writes its path's length for every entry: a line
 * shared with the next worker would bounce between their cores) */
struct worker {
	struct walker *w;
	int id;
	char *dbuf;		/* getdents64 buffer: a whole directory */
	size_t dcap;
	struct dent *ents, *tmp;
	size_t cap;
	struct wap_sb path;
} __attribute__((aligned(64)));

#define DBUF (64 << 10)

struct linux_dirent64 {
	ino_t d_ino;
	off_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* The default: one thread per CPU this process may run on (its affinity
 * mask, as taskset or a cpuset leaves it), not per CPU online: more
 * threads than CPUs only queue behind one another. */
int wap_walk_threads(const struct wap_walk_opts *o)
{
	long n = o && o->threads > 0 ? o->threads : 0;
	cpu_set_t cs;

	if (n <= 0 && !sched_getaffinity(0, sizeof(cs), &cs))
		n = CPU_COUNT(&cs);
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	if (n > 64)
		n = 64;
	return (int)n;
}

static void set_err(struct walker *w, const struct wap_err *e)
{
	pthread_mutex_lock(&w->mu);
	if (!w->errset) {
		w->err = *e;
		w->errset = true;
	} else {
		json_decref(e->details);
	}
	w->stop = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

static void fail_with(struct walker *w, struct wap_err *e)
{
	if (e->kind == WAP_OK)
		wap_err_set(e, WAP_E_FAILED, "walk stopped");
	set_err(w, e);
}

static void job_free(struct job *j)
{
	if (j->fd >= 0)
		close(j->fd);
	wap_ign_unref(j->ign);
	free(j->anc);
	free(j->real);
	free(j);
}

static struct job *job_new(const char *path, size_t len, int fd, int depth, struct wap_ign *ign)
{
	struct job *j = malloc(sizeof(*j) + len + 1);

	if (!j)
		return NULL;
	j->next = NULL;
	j->ctx = NULL;
	j->anc = NULL;
	j->nanc = 0;
	j->real = NULL;
	j->fd = fd;
	j->depth = depth;
	j->ign = wap_ign_ref(ign);
	j->pathlen = len;
	memcpy(j->path, path, len);
	j->path[len] = 0;
	return j;
}

static void push(struct walker *w, struct job *j)
{
	pthread_mutex_lock(&w->mu);
	j->next = w->stack;
	w->stack = j;
	if (w->idle)
		pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* Take a job; NULL when the walk is over. */
static struct job *pop(struct walker *w)
{
	struct job *j;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		if (w->stop)
			break;
		if (w->stack) {
			j = w->stack;
			w->stack = j->next;
			pthread_mutex_unlock(&w->mu);
			return j;
		}
		if (++w->idle == w->nthreads) {
			w->stop = true;
			pthread_cond_broadcast(&w->cv);
			break;
		}
		pthread_cond_wait(&w->cv, &w->mu);
		w->idle--;
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* follow: is directory FD one of J's ancestors (a loop)?  If not, its
 * identity is stored in *DI. */
static bool is_loop(const struct job *j, int fd, struct devino *di)
{
	struct stat st;

	if (fstat(fd, &st))
		return true;
	di->dev = st.st_dev;
	di->ino = st.st_ino;
	for (size_t i = 0; i < j->nanc; i++)
		if (j->anc[i].dev == st.st_dev && j->anc[i].ino == st.st_ino)
			return true;
	return false;
}

static struct wap_ign_list *load_list(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct wap_ign_list *l = NULL;
	char *buf;
	size_t len;

	if (fd < 0)
		return NULL;
	if (!wap_read_fd(fd, 1 << 20, &buf, &len, NULL)) {
		l = wap_ign_parse(buf, len);
		free(buf);
	}
	close(fd);
	return l;
}


/* The first 8 bytes of NAME (of LEN bytes, with 8 readable bytes from
 * its start) as a number in their byte order, zero past its end. */
static inline uint64_t name_prefix(const char *name, size_t len)
{
	uint64_t x = 0;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&x, name, 8);
	if (len < 8)
		x &= (1ull << (8 * len)) - 1;
	return __builtin_bswap64(x);
#else
	for (size_t i = 0; i < 8 && i < len; i++)
		x |= (uint64_t)(unsigned char)name[i] << (56 - 8 * i);
	return x;
#endif
}

/* names (in B) by their bytes, a shorter name before the longer it begins */
static inline int dentcmp(const char *b, const struct dent *x, const struct dent *y)
{
	size_t n = x->len < y->len ? x->len : y->len;
	int c;

	if (x->pre != y->pre)
		return x->pre < y->pre ? -1 : 1;
	c = n > 8 ? memcmp(b + x->off + 8, b + y->off + 8, n - 8) : 0;
	return c ? c : (int)x->len - (int)y->len;
}

/* Insertion sort for short runs, merge sort above; TMP holds N/2 + 1. */
static void sort_dents(const char *b, struct dent *v, struct dent *tmp, size_t n)
{
	size_t m = n / 2, i, j, k;

	if (n <= 12) {
		for (i = 1; i < n; i++) {
			struct dent t = v[i];
			for (j = i; j && dentcmp(b, &t, &v[j - 1]) < 0; j--)
				v[j] = v[j - 1];
			v[j] = t;
		}
		return;
	}
	sort_dents(b, v, tmp, m);
	sort_dents(b, v + m, tmp, n - m);
	if (dentcmp(b, &v[m], &v[m - 1]) >= 0)
		return;
	memcpy(tmp, v, m * sizeof(*v));
	for (i = 0, j = m, k = 0; i < m && j < n;)
		v[k++] = dentcmp(b, &v[j], &tmp[i]) < 0 ? v[j++] : tmp[i++];
	while (i < m)
		v[k++] = tmp[i++];
}

/* J->real: where the directory J really is, when that is not J->path:
 * from FD's own path (the start, a followed link), else REAL (its
 * parent's real path and its name), else none.  -1 when it cannot be
 * told (not beneath the root, too long, no memory). */
static int real_of(const struct wap_ws *ws, struct job *j, int fd, const char *real)
{
	char *r = fd >= 0 ? wap_ws_real_at(ws, fd, NULL) : real ? strdup(real) : NULL;

	if (fd < 0 && !real)
		return 0;
	if (!r)
		return -1;
	if (!strcmp(r, j->path))
		free(r);
	else
		j->real = r;
	return 0;
}

static void do_dir(struct worker *wk, struct job *j)
{
	struct walker *w = wk->w;
	const struct wap_walk_opts *o = w->o;
	const struct wap_ws *ws = w->ws;
	struct dent *ents;
	size_t n = 0, plen;
	struct wap_sb *pathp = &wk->path, realp = WAP_SB_INIT;
	struct wap_err cerr;
	bool has_gi = false, has_ig = false;
	struct wap_ign *ign = NULL;
	size_t rlen;
	int fd = j->fd;

	if (fd < 0) {
		/* out of descriptors when it was queued: open it now */
		struct wap_err e = { 0 };
		fd = wap_ws_open(ws, j->path, O_RDONLY | O_DIRECTORY, 0, WAP_ACC_READ, &e);
		wap_err_release(&e);
		if (fd < 0)
			return;
		/* found again by its path, which a symlink may now lead
		 * elsewhere: where it really is, from the fd */
		free(j->real);
		j->real = NULL;
		if (ws->pol.restricted.n && real_of(ws, j, fd, NULL)) {
			close(fd);
			return;
		}
	}
	j->fd = -1;
	if (!wk->dbuf) {
		wk->dbuf = malloc(DBUF);
		wk->dcap = DBUF;
		if (!wk->dbuf) {
			close(fd);
			return;
		}
	}
	/* read the whole directory first: its ignore files rule its entries.
	 * The buffer grows to hold all of it (the names stay where getdents
	 * put them), 8 bytes to spare at the end for word reads of a name. */
	for (size_t used = 0;;) {
		long nr;
		if (wk->dcap - used < DBUF / 2 + 8) {
			/* offsets of 32 bits (4 GB of names: never) */
			char *nb = wk->dcap < UINT32_MAX / 2 ? realloc(wk->dbuf, wk->dcap * 2) : NULL;
			if (!nb)
				break;
			wk->dbuf = nb;
			wk->dcap *= 2;
		}
		nr = syscall(SYS_getdents64, fd, wk->dbuf + used, wk->dcap - used - 8);
		if (nr <= 0)
			break;
		for (long off = 0; off < nr;) {
			struct linux_dirent64 *de = (struct linux_dirent64 *)(wk->dbuf + used + off);
			const char *nm = de->d_name;
			size_t nl;
			off += de->d_reclen;
			if (nm[0] == '.' && (!nm[1] || (nm[1] == '.' && !nm[2])))
				continue;
			if (nm[0] == '.' && !strcmp(nm, ".git"))
				continue;	/* never */
			nl = strlen(nm);
			if (nm[0] == '.' && !o->no_ignore) {
				if (!strcmp(nm, ".gitignore"))
					has_gi = true;
				else if (!strcmp(nm, ".ignore"))
					has_ig = true;
			}
			/* a file the caller can tell it will not want: never
			 * sorted nor called back */
			if (de->d_type == DT_REG && o->keep_file && !o->keep_file(w->arg, nm, nl))
				continue;
			if (n == wk->cap) {
				size_t nc = wk->cap ? wk->cap * 2 : 256;
				struct dent *ne = realloc(wk->ents, nc * sizeof(*ne));
				if (!ne)
					break;
				wk->ents = ne;
				wk->cap = nc;
			}
			wk->ents[n].type = de->d_type;
			wk->ents[n].len = nl;
			wk->ents[n].off = nm - wk->dbuf;
			/* while the name is in the cache */
			if (o->sorted)
				wk->ents[n].pre = name_prefix(nm, nl);
			n++;
		}
		used += nr;
	}
	ents = wk->ents;
	if (o->sorted && n > 1) {
		struct dent *t = realloc(wk->tmp, (n / 2 + 1) * sizeof(*t));
		if (!t)
			goto out;
		wk->tmp = t;
		sort_dents(wk->dbuf, ents, t, n);
	}

	if (has_gi || has_ig) {
		struct wap_ign_list *lists[2] = { NULL, NULL };
		if (has_ig)
			lists[0] = load_list(fd, ".ignore");
		if (has_gi && w->in_repo)
			lists[1] = load_list(fd, ".gitignore");
		if (lists[0] || lists[1])
			ign = wap_ign_push(j->ign, strcmp(j->path, ".") ? j->path : "", lists, 2);
	}
	if (!ign)
		ign = wap_ign_ref(j->ign);

	pathp->len = 0;
	if (strcmp(j->path, ".")) {
		wap_sb_add(pathp, j->path, j->pathlen);
		wap_sb_addc(pathp, '/');
	}
	plen = pathp->len;
	/* beneath a directory reached through a symlink, restrictedPaths judge
	 * each entry where it really is too (lnk -> conf: lnk/a.key is
	 * conf/a.key) */
	if (j->real && strcmp(j->real, ".")) {
		wap_sb_adds(&realp, j->real);
		wap_sb_addc(&realp, '/');
	}
	rlen = realp.len;
	/* the callbacks' error: set up once, not zeroed (1 KB) per entry; an
	 * error ends the loop */
	cerr.kind = WAP_OK;
	cerr.msg[0] = 0;
	cerr.details = NULL;
	for (size_t i = 0; i < n && !__atomic_load_n(&w->stop, __ATOMIC_RELAXED); i++) {
		struct dent *e = &ents[i];
		const char *name = wk->dbuf + e->off;
		unsigned char t = e->type;
		struct wap_walk_ent ent;
		bool link = false;

		/* a cancel is seen inside a big directory too, not only
		 * between directories */
		if (wap_cancel_is_set(o->cancel)) {
			wap_cancel_err(&cerr);
			fail_with(w, &cerr);
			break;
		}
		int depth = j->depth + 1, rc;

		pathp->len = plen;
		wap_sb_add(pathp, name, e->len);
		if (pathp->oom)
			break;
		if (j->real) {
			realp.len = rlen;
			wap_sb_add(&realp, name, e->len);
			if (realp.oom)
				break;
		}
		if (t == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW))
				continue;
			t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG :
			    S_ISLNK(st.st_mode) ? DT_LNK : DT_FIFO;
		}
		if (t == DT_LNK) {
			struct stat st;
			struct wap_err er = { 0 };
			int lfd;
			if (!o->follow) {
				if (!o->links)
					continue;
				goto report;
			}
			lfd = wap_ws_open(ws, pathp->buf, O_PATH, 0, WAP_ACC_READ, &er);
			wap_err_release(&er);
			if (lfd < 0) {
				/* dangling, or leaves the root: not followed */
				if (o->links)
					goto report;
				continue;
			}
			if (fstat(lfd, &st)) {
				close(lfd);
				continue;
			}
			close(lfd);
			t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_FIFO;
			link = true;
		}
report:
		if (t != DT_DIR && t != DT_REG && t != DT_LNK)
			continue;
		if (t == DT_DIR && !o->no_default_excludes &&
		    wap_exclude_default_dir(name, e->len))
			continue;
		if (ws->pol.restricted.n && (wap_ws_restricted(ws, pathp->buf, pathp->len) ||
		    (j->real && wap_ws_restricted(ws, realp.buf, realp.len))))
			continue;
		if (wap_exclude_match(o->exclude, pathp->buf, pathp->len, t == DT_DIR))
			continue;
		if (ign && !o->no_ignore && wap_ign_ignored(ign, pathp->buf, pathp->len, t == DT_DIR))
			continue;

		ent.dirfd = fd;
		ent.name = name;
		ent.namelen = e->len;
		ent.path = pathp->buf;
		ent.pathlen = pathp->len;
		ent.depth = depth;
		ent.worker = wk->id;
		ent.link = link;
		ent.dirctx = j->ctx;
		ent.subctx = NULL;
		ent.fd = -1;
		if (t == DT_REG || t == DT_LNK) {
			if (o->max_depth >= 0 && depth > o->max_depth)
				continue;
			ent.type = t == DT_LNK ? WAP_WALK_LINK : WAP_WALK_FILE;
			rc = w->fn(w->arg, &ent, &cerr);
		} else {
			int cfd = -1;
			struct job *nj;
			void *sub = NULL;
			bool descend = !(o->max_depth >= 0 && depth >= o->max_depth);
			if (o->max_depth >= 0 && depth > o->max_depth)
				continue;
			ent.type = WAP_WALK_DIR;
			/* opened before the callback, which may fstat it rather
			 * than look its name up again */
			if (!descend) {
			} else if (link) {
				struct wap_err er = { 0 };
				cfd = wap_ws_open(ws, pathp->buf, O_RDONLY | O_DIRECTORY, 0, WAP_ACC_READ, &er);
				wap_err_release(&er);
				descend = cfd >= 0;
			} else {
				cfd = openat(fd, name,
					     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				descend = cfd >= 0 || errno == EMFILE || errno == ENFILE;
			}
			if (descend)
				ent.subctx = &sub;
			ent.fd = cfd;
			rc = o->dirs ? w->fn(w->arg, &ent, &cerr) : 0;
			if (rc < 0 || rc == 1 || !descend) {
				if (cfd >= 0)
					close(cfd);
				if (rc < 0) {
					fail_with(w, &cerr);
					break;
				}
				continue;
			}
			{
				struct devino di;
				if (o->follow && cfd >= 0 && is_loop(j, cfd, &di)) {
					close(cfd);
					continue;
				}
				nj = job_new(pathp->buf, pathp->len, cfd, depth, ign);
				if (!nj) {
					if (cfd >= 0)
						close(cfd);
					continue;
				}
				if (ws->pol.restricted.n &&
				    real_of(ws, nj, link ? cfd : -1, j->real ? realp.buf : NULL)) {
					job_free(nj);	/* where it is cannot be told */
					continue;
				}
				nj->ctx = sub;
				if (o->follow && cfd >= 0) {
					nj->anc = malloc((j->nanc + 1) * sizeof(*nj->anc));
					if (nj->anc) {
						memcpy(nj->anc, j->anc, j->nanc * sizeof(*nj->anc));
						nj->anc[j->nanc] = di;
						nj->nanc = j->nanc + 1;
					}
				}
			}
			push(w, nj);
			continue;
		}
		if (rc < 0) {
			fail_with(w, &cerr);
			break;
		}
	}
out:
	wap_sb_release(&realp);
	wap_ign_unref(ign);
	close(fd);
}

static void *work(void *arg)
{
	struct worker *wk = arg;
	struct walker *w = wk->w;
	struct job *j;

	while ((j = pop(w))) {
		if (wap_cancel_is_set(w->o->cancel)) {
			struct wap_err e = { 0 };
			wap_cancel_err(&e);
			set_err(w, &e);
		} else {
			do_dir(wk, j);
		}
		job_free(j);
	}
	if (w->o->done)
		w->o->done(w->arg, wk->id);
	free(wk->dbuf);
	free(wk->ents);
	free(wk->tmp);
	wap_sb_release(&wk->path);
	wk->dbuf = NULL;
	wk->ents = NULL;
	wk->tmp = NULL;
	wk->cap = 0;
	return NULL;
}

static struct wap_ign *push_above(struct wap_ign *ign, const char *above,
				  struct wap_ign_list **l, int nl)
{
	struct wap_ign *n;

	if (!l[0] && (nl < 2 || !l[1]))
		return ign;
	n = wap_ign_push(ign, "", l, nl);
	wap_ign_unref(ign);
	if (n) {
		n->above = strdup(above);
		n->abovelen = n->above ? strlen(above) : 0;
	}
	return n;
}

/* The root inside a repository whose top is above it (a package of a
 * monorepo): that repository's rules apply, as git sees them, and its
 * .ignore files, as ripgrep sees them.  Only ignore files are read up there.  *TOP becomes "" (the whole root is in
 * the work tree); NULL when there is no such repository. */
static struct wap_ign *outer_frames(const struct wap_ws *ws, char **top)
{
	struct wap_ign *ign = NULL;
	char *up = strdup(ws->root), *topabs = NULL;
	size_t rl = strlen(ws->root);

	*top = NULL;
	if (!up)
		return NULL;
	for (;;) {
		char *slash = strrchr(up, '/');
		struct wap_sb g = WAP_SB_INIT;
		struct stat st;
		bool found;
		if (!slash || (slash == up && !up[1]))
			break;
		if (slash == up)
			up[1] = 0;	/* "/" */
		else
			*slash = 0;
		wap_sb_addf(&g, "%s/.git", strcmp(up, "/") ? up : "");
		found = g.buf && !stat(g.buf, &st);
		wap_sb_release(&g);
		if (found) {
			topabs = strdup(up);
			break;
		}
	}
	free(up);
	if (!topabs)
		return NULL;
	{
		size_t tl = strcmp(topabs, "/") ? strlen(topabs) : 0;
		const char *rel = ws->root + tl + 1;	/* the root from the top */
		const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
		struct wap_sb p = WAP_SB_INIT;

		if (xdg && *xdg)
			wap_sb_addf(&p, "%s/git/ignore", xdg);
		else if (home && *home)
			wap_sb_addf(&p, "%s/.config/git/ignore", home);
		if (p.buf) {
			struct wap_ign_list *l = load_list(AT_FDCWD, p.buf);
			ign = push_above(ign, rel, &l, 1);
		}
		p.len = 0;
		wap_sb_addf(&p, "%.*s/.git/info/exclude", (int)tl, topabs);
		if (p.buf) {
			struct wap_ign_list *l = load_list(AT_FDCWD, p.buf);
			ign = push_above(ign, rel, &l, 1);
		}
		/* each directory from the top down to the root's parent */
		for (size_t k = tl; k < rl; k++) {
			if (ws->root[k] != '/' && k != tl)
				continue;
			struct wap_ign_list *l[2];
			p.len = 0;
			wap_sb_addf(&p, "%.*s/.ignore", (int)k, ws->root);
			l[0] = p.buf ? load_list(AT_FDCWD, p.buf) : NULL;
			p.len = 0;
			wap_sb_addf(&p, "%.*s/.gitignore", (int)k, ws->root);
			l[1] = p.buf ? load_list(AT_FDCWD, p.buf) : NULL;
			ign = push_above(ign, ws->root + k + 1, l, 2);
		}
		wap_sb_release(&p);
	}
	free(topabs);
	*top = strdup("");
	return ign;
}

/* Frames for the directories from the top (the repository's, or the
 * root) down to START's parent chain, START included. */
static struct wap_ign *start_frames(struct walker *w, const char *start)
{
	const struct wap_ws *ws = w->ws;
	struct wap_ign *ign = NULL;
	char *top = NULL;
	size_t slen = strcmp(start, ".") ? strlen(start) : 0;

	/* the nearest enclosing work tree beneath the root */
	for (size_t l = slen;; ) {
		struct wap_sb p = WAP_SB_INIT;
		struct stat st;
		if (l)
			wap_sb_addf(&p, "%.*s/.git", (int)l, start);
		else
			wap_sb_adds(&p, ".git");
		if (p.buf && !fstatat(ws->rootfd, p.buf, &st, 0)) {
			top = strndup(start, l);
			wap_sb_release(&p);
			break;
		}
		wap_sb_release(&p);
		if (!l)
			break;
		while (l && start[l - 1] != '/')
			l--;
		if (l)
			l--;
	}
	if (!top && ws->confined) {
		ign = outer_frames(ws, &top);
		w->outer = top != NULL;
	}
	w->in_repo = top != NULL;
	if (top && !w->outer) {
		/* git's default core.excludesFile: lowest precedence */
		const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
		struct wap_sb gp = WAP_SB_INIT;
		if (xdg && *xdg)
			wap_sb_addf(&gp, "%s/git/ignore", xdg);
		else if (home && *home)
			wap_sb_addf(&gp, "%s/.config/git/ignore", home);
		if (gp.buf) {
			struct wap_ign_list *gl = load_list(AT_FDCWD, gp.buf);
			if (gl)
				ign = wap_ign_push(NULL, top, &gl, 1);
		}
		wap_sb_release(&gp);
	}
	if (top && !w->outer) {
		struct wap_sb p = WAP_SB_INIT;
		struct wap_ign_list *l;
		int fd;
		wap_sb_addf(&p, "%s%s.git/info", top, *top ? "/" : "");
		fd = p.buf ? openat(ws->rootfd, p.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		if (fd >= 0) {
			l = load_list(fd, "exclude");
			close(fd);
			if (l) {
				struct wap_ign *n = wap_ign_push(ign, top, &l, 1);
				wap_ign_unref(ign);
				ign = n;
			}
		}
		wap_sb_release(&p);
	}
	/* every ancestor of START (not START: the walk reads its own) */
	for (size_t l = 0; l < slen; ) {
		size_t e = l;
		struct wap_ign_list *lists[2] = { NULL, NULL };
		char *dir = strndup(start, l ? l - 1 : 0);
		struct wap_err er = { 0 };
		int fd;

		while (e < slen && start[e] != '/')
			e++;
		if (!dir)
			break;
		fd = wap_ws_open(ws, *dir ? dir : ".", O_RDONLY | O_DIRECTORY, 0, WAP_ACC_READ, &er);
		wap_err_release(&er);
		if (fd >= 0) {
			bool inrepo = top && (!*top || (!strncmp(dir, top, strlen(top)) &&
					      (dir[strlen(top)] == '/' || !dir[strlen(top)])));
			lists[0] = load_list(fd, ".ignore");
			if (inrepo)
				lists[1] = load_list(fd, ".gitignore");
			close(fd);
			if (lists[0] || lists[1]) {
				struct wap_ign *n = wap_ign_push(ign, dir, lists, 2);
				wap_ign_unref(ign);
				ign = n;
			}
		}
		free(dir);
		l = e + 1;
	}
	free(top);
	return ign;
}

/* The kernel grows a process's fd table by doubling it, and while other
 * threads share the table each growth waits for an RCU grace period
 * (milliseconds here: five doublings were 60 ms of a 150 ms `wap git diff`
 * on the Linux tree, with nothing on the CPU).  A walk holds a few hundred
 * directory fds at its peak (229 on the Linux tree), git's status walk 1,600:
 * raise the soft limit (many directories may wait in a queue with their fd
 * open) and grow the table to WANT once, before the workers start, rather
 * than 64 -> 128 -> 256 ... under them.  The table never shrinks, so this
 * costs once per process. */
void wap_fd_room(int fd, int want)
{
	static int grown;
	struct rlimit rl;
	int hi = want - 1;

	if (__atomic_load_n(&grown, __ATOMIC_RELAXED) >= want)
		return;
	__atomic_store_n(&grown, want, __ATOMIC_RELAXED);
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max && rl.rlim_cur < 65536) {
		rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur <= (rlim_t)hi)
		hi = (int)rl.rlim_cur - 1;
	if (hi > fd) {
		int d = fcntl(fd, F_DUPFD_CLOEXEC, hi);
		if (d >= 0)
			close(d);
	}
}

int wap_walk(const struct wap_ws *ws, const char *rel, const struct wap_walk_opts *o,
	     wap_walk_fn fn, void *arg, struct wap_err *err)
{
	struct walker w = { 0 };
	struct worker *wks = NULL;
	pthread_t *tids = NULL;
	struct stat st;
	struct wap_ign *ign = NULL;
	int fd, nt, started = 0, rc = 0;

	fd = wap_ws_open(ws, rel, O_PATH, 0, WAP_ACC_READ, err);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		int e = errno;
		close(fd);
		return wap_err_errno(err, e, rel);
	}
	if (!S_ISDIR(st.st_mode)) {
		struct wap_walk_ent ent = {
			.dirfd = -1, .name = rel, .namelen = strlen(rel), .path = rel, .pathlen = strlen(rel),
			.type = WAP_WALK_FILE, .depth = 0, .worker = 0, .link = true, .fd = -1,
		};
		close(fd);
		if (!S_ISREG(st.st_mode))
			return wap_err_set(err, WAP_E_NOT_FILE, "Not a regular file: %s", rel);
		return fn(arg, &ent, err) < 0 ? -1 : 0;
	}
	{
		int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		if (dfd < 0)
			return wap_err_errno(err, errno, rel);
		fd = dfd;
	}
	wap_fd_room(fd, 1024);

	w.ws = ws;
	w.o = o;
	w.fn = fn;
	w.arg = arg;
	pthread_mutex_init(&w.mu, NULL);
	pthread_cond_init(&w.cv, NULL);
	if (!o->no_ignore)
		ign = start_frames(&w, rel);
	{
		struct job *j = job_new(rel, strlen(rel), fd, 0, ign);
		struct devino di;
		wap_ign_unref(ign);
		if (!j) {
			close(fd);
			rc = wap_err_oom(err);
			goto out;
		}
		if (ws->pol.restricted.n && real_of(ws, j, fd, NULL)) {
			job_free(j);
			rc = wap_err_set(err, WAP_E_ACCESS,
				"Access denied: cannot tell where %s really is (not beneath the root, or its path is too long) to check the policy",
				rel);
			goto out;
		}
		if (o->follow && !is_loop(j, fd, &di) && (j->anc = malloc(sizeof(*j->anc)))) {
			j->anc[0] = di;
			j->nanc = 1;
		}
		w.stack = j;
	}
	nt = wap_walk_threads(o);
	w.nthreads = nt;
	wks = aligned_alloc(64, nt * sizeof(*wks));
	if (wks)
		memset(wks, 0, nt * sizeof(*wks));
	tids = calloc(nt, sizeof(*tids));
	if (!wks || !tids) {
		rc = wap_err_oom(err);
		goto out;
	}
	for (int i = 0; i < nt; i++) {
		wks[i].w = &w;
		wks[i].id = i;
	}
	for (int i = 1; i < nt; i++) {
		if (pthread_create(&tids[i], NULL, work, &wks[i]))
			break;
		started++;
	}
	if (started < nt - 1) {
		/* fewer threads than asked: the idle count must still add up */
		pthread_mutex_lock(&w.mu);
		w.nthreads = started + 1;
		pthread_mutex_unlock(&w.mu);
	}
	work(&wks[0]);
	for (int i = 1; i <= started; i++)
		pthread_join(tids[i], NULL);
	if (w.errset) {
		if (err)
			*err = w.err;
		else
			json_decref(w.err.details);
		rc = -1;
	}
out:
	while (w.stack) {
		struct job *j = w.stack;
		w.stack = j->next;
		job_free(j);
	}
	free(wks);
	free(tids);
	pthread_mutex_destroy(&w.mu);
	pthread_cond_destroy(&w.cv);
	return rc;
}
