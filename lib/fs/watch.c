/* fs/watch.c - recursive inotify watching with coalesced notifications.
 * See watch.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "exclude.h"
#include "glob.h"
#include "path.h"
#include "strbuf.h"
#include "watch.h"

#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | \
		    IN_MOVED_TO | IN_ONLYDIR | IN_EXCL_UNLINK)

enum ch { CH_NONE, CH_CREATED, CH_CHANGED, CH_DELETED };

struct dirent_w {
	int wd;
	char *rel;
};

struct pattern {
	struct pattern *next;
	char id[WAP_WATCH_ID_LEN];
	struct wap_glob *g;
};

struct pend {
	char *path;
	enum ch ch;
	long t0;	/* ms of the first event */
};

struct wap_watch {
	const struct wap_ws *ws;
	wap_watch_fn cb;
	void *arg;
	pthread_mutex_t mu;
	pthread_t thr;
	int ifd, wake;
	bool started;		/* the tree has been walked */
	struct dirent_w *dirs;
	size_t ndirs, capdirs;
	struct pattern *pats;
	unsigned long counter;
	struct pend *pend;
	size_t npend, cappend;
	volatile bool stop;
	/* Files known to exist, so that a rename over one (an atomic write)
	 * is "changed", not "created".  A jansson object is the hash set. */
	json_t *known;
};

#define WATCH_MAX_KNOWN 200000

static void known_add(struct wap_watch *w, const char *rel)
{
	if (json_object_size(w->known) < WATCH_MAX_KNOWN)
		json_object_set_new(w->known, rel, json_true());
}

/* wap's own atomic writes name their temp file ".wap-XXXXXXXX.tmp" (just
 * before the rename, or all along without O_TMPFILE): not a change to report. */
static bool wap_temp(const char *rel)
{
	const char *b = strrchr(rel, '/');
	size_t n;

	b = b ? b + 1 : rel;
	n = strlen(b);
	return n == 17 && !strncmp(b, ".wap-", 5) && !strcmp(b + 13, ".tmp");
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool matches(struct wap_watch *w, const char *rel)
{
	for (struct pattern *p = w->pats; p; p = p->next)
		if (wap_glob_match(p->g, rel, strlen(rel)))
			return true;
	return false;
}

/* Record a change (under mu). */
static void note(struct wap_watch *w, const char *rel, enum ch ch)
{
	struct pend *p = NULL;

	if (!matches(w, rel))
		return;
	for (size_t i = 0; i < w->npend; i++)
		if (!strcmp(w->pend[i].path, rel))
			p = &w->pend[i];
	if (!p) {
		if (w->npend == w->cappend) {
			size_t cap = w->cappend ? w->cappend * 2 : 16;
			struct pend *np = realloc(w->pend, cap * sizeof(*np));
			if (!np)
				return;
			w->pend = np;
			w->cappend = cap;
		}
		p = &w->pend[w->npend];
		p->path = strdup(rel);
		if (!p->path)
			return;
		p->ch = ch;
		p->t0 = now_ms();
		w->npend++;
		return;
	}
	switch (p->ch) {
	case CH_NONE:
		p->ch = ch;
		break;
	case CH_CREATED:
		if (ch == CH_DELETED)
			p->ch = CH_NONE;
		break;
	case CH_CHANGED:
		if (ch == CH_DELETED)
			p->ch = CH_DELETED;
		break;
	case CH_DELETED:
		if (ch != CH_DELETED)
			p->ch = CH_CHANGED;
		break;
	}
}

static int add_dir_watch(struct wap_watch *w, int dirfd, const char *rel)
{
	char proc[64];
	int wd;

	if (w->ndirs >= WAP_WATCH_MAX_DIRS)
		return -1;
	/* The directory was opened beneath the root; watch it through its
	 * fd, never by a path string. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
	wd = inotify_add_watch(w->ifd, proc, WATCH_MASK);
	if (wd < 0)
		return -1;
	for (size_t i = 0; i < w->ndirs; i++)
		if (w->dirs[i].wd == wd) {	/* the same directory again */
			char *r = strdup(rel);
			if (r) {
				free(w->dirs[i].rel);
				w->dirs[i].rel = r;
			}
			return 0;
		}
	if (w->ndirs == w->capdirs) {
		size_t cap = w->capdirs ? w->capdirs * 2 : 64;
		struct dirent_w *nd = realloc(w->dirs, cap * sizeof(*nd));
		if (!nd)
			return -1;
		w->dirs = nd;
		w->capdirs = cap;
	}
	w->dirs[w->ndirs].wd = wd;
	w->dirs[w->ndirs].rel = strdup(rel);
	if (!w->dirs[w->ndirs].rel) {
		inotify_rm_watch(w->ifd, wd);
		return -1;
	}
	w->ndirs++;
	return 0;
}

/* Watch DIRFD (REL) and every directory below it; REPORT: note what is
 * found as created (a directory that appeared after the watch began). */
static void add_tree(struct wap_watch *w, int dirfd, const char *rel, bool report, int depth)
{
	DIR *d;
	struct dirent *de;
	int fd2;

	if (add_dir_watch(w, dirfd, rel) < 0 || depth > 64)
		return;
	fd2 = dup(dirfd);
	if (fd2 < 0 || !(d = fdopendir(fd2))) {
		if (fd2 >= 0)
			close(fd2);
		return;
	}
	while ((de = readdir(d))) {
		char *child;
		bool isdir = de->d_type == DT_DIR;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_UNKNOWN && !fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			isdir = S_ISDIR(st.st_mode);
		child = wap_path_join(rel, de->d_name);
		if (!child)
			continue;
		if (wap_exclude_default_path(child) || wap_ws_check(w->ws, child, WAP_ACC_READ, NULL) < 0) {
			free(child);
			continue;
		}
		if (report)
			note(w, child, CH_CREATED);
		if (!isdir)
			known_add(w, child);
		if (isdir) {
			int cfd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0) {
				add_tree(w, cfd, child, report, depth + 1);
				close(cfd);
			}
		}
		free(child);
	}
	closedir(d);
}

static struct dirent_w *dir_by_wd(struct wap_watch *w, int wd)
{
	for (size_t i = 0; i < w->ndirs; i++)
		if (w->dirs[i].wd == wd)
			return &w->dirs[i];
	return NULL;
}

static void drop_dir(struct wap_watch *w, size_t i)
{
	free(w->dirs[i].rel);
	w->dirs[i] = w->dirs[--w->ndirs];
}

/* A directory moved away: forget its watches and those below it. */
static void drop_tree(struct wap_watch *w, const char *rel)
{
	size_t n = strlen(rel);
	const char *k;
	json_t *v, *tmp;

	json_object_foreach_safe(w->known, tmp, k, v)
		if (!strncmp(k, rel, n) && k[n] == '/')
			json_object_del(w->known, k);

	for (size_t i = 0; i < w->ndirs;) {
		const char *r = w->dirs[i].rel;
		if (!strncmp(r, rel, n) && (r[n] == 0 || r[n] == '/')) {
			inotify_rm_watch(w->ifd, w->dirs[i].wd);
			drop_dir(w, i);
		} else {
			i++;
		}
	}
}

static void handle(struct wap_watch *w, const struct inotify_event *ev)
{
	struct dirent_w *dw;
	char *rel;

	if (ev->mask & IN_IGNORED) {
		for (size_t i = 0; i < w->ndirs; i++)
			if (w->dirs[i].wd == ev->wd) {
				drop_dir(w, i);
				break;
			}
		return;
	}
	if (!ev->len || !(dw = dir_by_wd(w, ev->wd)))
		return;
	rel = wap_path_join(dw->rel, ev->name);
	if (!rel)
		return;
	if (wap_exclude_default_path(rel) || wap_ws_check(w->ws, rel, WAP_ACC_READ, NULL) < 0) {
		free(rel);
		return;
	}
	if (wap_temp(rel)) {
		free(rel);
		return;
	}
	if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
		bool existed = !(ev->mask & IN_ISDIR) && json_object_get(w->known, rel);
		note(w, rel, existed ? CH_CHANGED : CH_CREATED);
		if (!(ev->mask & IN_ISDIR))
			known_add(w, rel);
		if (ev->mask & IN_ISDIR) {
			struct wap_err err = { 0 };
			int fd = wap_ws_open(w->ws, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0,
					     WAP_ACC_READ, &err);
			wap_err_release(&err);
			if (fd >= 0) {
				add_tree(w, fd, rel, true, 0);
				close(fd);
			}
		}
	} else if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
		note(w, rel, CH_DELETED);
		json_object_del(w->known, rel);
		if ((ev->mask & IN_ISDIR) && (ev->mask & IN_MOVED_FROM))
			drop_tree(w, rel);
	} else if (ev->mask & (IN_MODIFY | IN_CLOSE_WRITE)) {
		if (!(ev->mask & IN_ISDIR))
			note(w, rel, CH_CHANGED);
	}
	free(rel);
}

static void flush(struct wap_watch *w, bool all)
{
	static const char *const names[] = { NULL, "created", "changed", "deleted" };
	long now = now_ms();
	struct pend *out = NULL;
	size_t nout = 0;

	pthread_mutex_lock(&w->mu);
	for (size_t i = 0; i < w->npend;) {
		struct pend *p = &w->pend[i];
		if (!all && now - p->t0 < WAP_WATCH_COALESCE_MS) {
			i++;
			continue;
		}
		if (p->ch != CH_NONE) {
			struct pend *no = realloc(out, (nout + 1) * sizeof(*no));
			if (no) {
				out = no;
				out[nout++] = *p;
				p->path = NULL;
			}
		}
		free(p->path);
		w->pend[i] = w->pend[--w->npend];
	}
	pthread_mutex_unlock(&w->mu);
	for (size_t i = 0; i < nout; i++) {
		if (w->cb && !all)
			w->cb(w->arg, out[i].path, names[out[i].ch]);
		free(out[i].path);
	}
	free(out);
}

static void *watcher(void *arg)
{
	struct wap_watch *w = arg;
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (!w->stop) {
		struct pollfd p[2] = { { .fd = w->ifd, .events = POLLIN }, { .fd = w->wake, .events = POLLIN } };
		int n = poll(p, 2, WAP_WATCH_COALESCE_MS / 2);

		if (n > 0 && (p[0].revents & POLLIN)) {
			ssize_t len = read(w->ifd, buf, sizeof(buf));
			pthread_mutex_lock(&w->mu);
			for (char *q = buf; len > 0 && q < buf + len;) {
				const struct inotify_event *ev = (const struct inotify_event *)q;
				handle(w, ev);
				q += sizeof(*ev) + ev->len;
			}
			pthread_mutex_unlock(&w->mu);
		}
		flush(w, false);
	}
	return NULL;
}

/* The watchers alive in the process: each is an inotify instance (the
 * user's max_user_instances, 128 by default, is shared with every program
 * the user runs), a thread and up to WAP_WATCH_MAX_DIRS watches, and every
 * Agent Control client may make one (256 clients took them all).
 * WAP_WATCHERS_MAX lowers it (tests). */
static int watchers_live;

static void watchers_release(void)
{
	__atomic_sub_fetch(&watchers_live, 1, __ATOMIC_SEQ_CST);
}

struct wap_watch *wap_watch_new(const struct wap_ws *ws, wap_watch_fn cb, void *arg,
				struct wap_err *err)
{
	const char *env = getenv("WAP_WATCHERS_MAX");
	int max = env && atoi(env) > 0 && atoi(env) < WAP_WATCH_MAX_ALL ? atoi(env) : WAP_WATCH_MAX_ALL;
	struct wap_watch *w;

	if (__atomic_add_fetch(&watchers_live, 1, __ATOMIC_SEQ_CST) > max) {
		watchers_release();
		wap_err_set(err, WAP_E_TOO_LARGE, "Too many sessions watching files (%d at most): "
			    "one must end first", max);
		return NULL;
	}
	if (!(w = calloc(1, sizeof(*w)))) {
		watchers_release();
		wap_err_oom(err);
		return NULL;
	}
	w->ws = ws;
	w->cb = cb;
	w->arg = arg;
	w->known = json_object();
	w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	w->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&w->mu, NULL);
	if (w->ifd < 0 || w->wake < 0 || pthread_create(&w->thr, NULL, watcher, w)) {
		wap_err_set(err, WAP_E_FAILED, "Cannot watch files: %s", strerror(errno));
		if (w->ifd >= 0)
			close(w->ifd);
		if (w->wake >= 0)
			close(w->wake);
		pthread_mutex_destroy(&w->mu);
		json_decref(w->known);
		free(w);
		watchers_release();
		return NULL;
	}
	return w;
}

void wap_watch_free(struct wap_watch *w)
{
	uint64_t one = 1;

	if (!w)
		return;
	w->stop = true;
	if (write(w->wake, &one, sizeof(one)) < 0)
		one = 0;	/* the thread also wakes on its poll timeout */
	pthread_join(w->thr, NULL);
	flush(w, true);
	free(w->pend);
	for (size_t i = 0; i < w->ndirs; i++)
		free(w->dirs[i].rel);
	free(w->dirs);
	while (w->pats) {
		struct pattern *p = w->pats;
		w->pats = p->next;
		wap_glob_free(p->g);
		free(p);
	}
	close(w->ifd);
	close(w->wake);
	json_decref(w->known);
	pthread_mutex_destroy(&w->mu);
	free(w);
	watchers_release();
}

int wap_watch_add(struct wap_watch *w, const char *pattern, char id[WAP_WATCH_ID_LEN],
		  struct wap_err *err)
{
	struct pattern *p;
	const char *pat = pattern;

	if (!pattern || !*pattern)
		return wap_err_set(err, WAP_E_INVALID, "Missing pattern");
	if (!strncmp(pat, "./", 2))
		pat += 2;
	p = calloc(1, sizeof(*p));
	if (!p)
		return wap_err_oom(err);
	p->g = wap_glob_new(pat, strchr(pat, '/') ? 0 : WAP_GLOB_BASENAME, err);
	if (!p->g) {
		free(p);
		return -1;
	}
	pthread_mutex_lock(&w->mu);
	{
		size_t n = 0;
		for (struct pattern *q = w->pats; q; q = q->next)
			n++;
		if (n >= WAP_WATCH_MAX_PATTERNS) {
			pthread_mutex_unlock(&w->mu);
			wap_glob_free(p->g);
			free(p);
			return wap_err_set(err, WAP_E_TOO_LARGE,
				"Too many watchers (%d): unwatch some first", WAP_WATCH_MAX_PATTERNS);
		}
	}
	if (!w->started) {
		struct wap_err e2 = { 0 };
		int fd = wap_ws_open(w->ws, ".", O_RDONLY | O_DIRECTORY, 0, WAP_ACC_READ, &e2);
		if (fd < 0) {
			pthread_mutex_unlock(&w->mu);
			wap_glob_free(p->g);
			free(p);
			if (err) {
				wap_err_release(err);
				*err = e2;
			} else {
				wap_err_release(&e2);
			}
			return -1;
		}
		add_tree(w, fd, ".", false, 0);
		close(fd);
		w->started = true;
	}
	w->counter++;
	snprintf(p->id, sizeof(p->id), "watch-%lu", w->counter);
	snprintf(id, WAP_WATCH_ID_LEN, "%s", p->id);
	p->next = w->pats;
	w->pats = p;
	pthread_mutex_unlock(&w->mu);
	return 0;
}

int wap_watch_remove(struct wap_watch *w, const char *id, struct wap_err *err)
{
	struct pattern **pp, *p = NULL;

	pthread_mutex_lock(&w->mu);
	for (pp = &w->pats; *pp; pp = &(*pp)->next)
		if (id && !strcmp((*pp)->id, id)) {
			p = *pp;
			*pp = p->next;
			break;
		}
	pthread_mutex_unlock(&w->mu);
	if (!p)
		return wap_err_set(err, WAP_E_NOT_FOUND, "Watcher not found: %s", id ? id : "(none)");
	wap_glob_free(p->g);
	free(p);
	return 0;
}

size_t wap_watch_dirs(struct wap_watch *w)
{
	size_t n;

	pthread_mutex_lock(&w->mu);
	n = w->ndirs;
	pthread_mutex_unlock(&w->mu);
	return n;
}
