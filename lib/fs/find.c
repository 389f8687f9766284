/* fs/find.c - finding files by glob, the engine behind `wap glob` (and
 * every door's glob/exploreFiles): the parallel walk, matching, per-worker
 * hits in arenas, sorted by each worker and merged.  See find.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file.h"
#include "find.h"
#include "path.h"
#include "strbuf.h"
#include "text.h"
#include "walk.h"

enum { SORT_MTIME, SORT_PATH, SORT_NONE };

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct wap_hits {
	struct wap_hit *h;
	size_t n, cap;
	struct chunk *arena;	/* the paths */
};

struct gl {
	const struct wap_ws *ws;
	struct wap_glob *g;
	size_t baselen;		/* strip "PATH/" from root-relative paths */
	int type;		/* 0 all, 1 files, 2 dirs */
	int sortby;
	bool mtime;		/* stat what matches (JSON, or sorting by mtime) */
	struct wap_hits *per;	/* one per worker */
};

/* wap_path_cmp (lib/core/path.c), a word at a time: the arena keeps 8
 * readable bytes past every string. */
static int pathcmp(const char *a, const char *b)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (size_t i = 0;; i += 8) {
		uint64_t x, y, nul;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		/* the lowest flagged byte is x's first NUL, if it has one */
		nul = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
		if (x != y || nul) {
			int k = __builtin_ctzll((x ^ y) | nul) / 8;
			unsigned p = (unsigned char)a[i + k], q = (unsigned char)b[i + k];
			if (p == q)
				return 0;
			return (int)(p == '/' ? 1 : p) - (int)(q == '/' ? 1 : q);
		}
	}
#else
	return wap_path_cmp(a, b);
#endif
}

/* newest first, then by path */
static inline int hitcmp(const struct wap_hit *x, const struct wap_hit *y, int sortby)
{
	if (sortby == SORT_MTIME) {
		if (x->mtime.tv_sec != y->mtime.tv_sec)
			return x->mtime.tv_sec > y->mtime.tv_sec ? -1 : 1;
		if (x->mtime.tv_nsec != y->mtime.tv_nsec)
			return x->mtime.tv_nsec > y->mtime.tv_nsec ? -1 : 1;
	}
	return pathcmp(x->path, y->path);
}

/* Merge the sorted A and B into OUT, at most MAX (0: all); the count. */
static size_t merge(const struct wap_hit *a, size_t na, const struct wap_hit *b, size_t nb,
		    struct wap_hit *out, size_t max, int sortby)
{
	size_t n = 0, lim = na + nb;

	if (max && max < lim)
		lim = max;
	while (n < lim && na && nb) {
		if (hitcmp(b, a, sortby) < 0)
			out[n++] = *b++, nb--;
		else
			out[n++] = *a++, na--;
	}
	for (; n < lim && na; na--)
		out[n++] = *a++;
	for (; n < lim && nb; nb--)
		out[n++] = *b++;
	return n;
}

/* Merge sort of H[0..N) with TMP as scratch: qsort's indirect calls cost
 * a third of a glob of a big tree. */
static void sort_hits(struct wap_hit *h, struct wap_hit *tmp, size_t n, int sortby)
{
	size_t m = n / 2;

	if (n <= 12) {
		for (size_t i = 1; i < n; i++) {
			struct wap_hit t = h[i];
			size_t j = i;
			for (; j && hitcmp(&t, &h[j - 1], sortby) < 0; j--)
				h[j] = h[j - 1];
			h[j] = t;
		}
		return;
	}
	sort_hits(h, tmp, m, sortby);
	sort_hits(h + m, tmp, n - m, sortby);
	if (hitcmp(&h[m], &h[m - 1], sortby) >= 0)
		return;
	memcpy(tmp, h, m * sizeof(*h));
	merge(tmp, m, h + m, n - m, h, 0, sortby);
}

static char *arena_dup(struct wap_hits *hs, const char *s, size_t n)
{
	struct chunk *c = hs->arena;
	char *p;

	/* 8 spare bytes at the end for pathcmp's word reads */
	if (!c || c->cap - c->used < n + 1 + 8) {
		size_t cap = n + 1 + 8 > 60000 ? n + 1 + 8 : 60000;
		c = calloc(1, sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = hs->arena;
		c->cap = cap;
		hs->arena = c;
	}
	p = c->data + c->used;
	memcpy(p, s, n);
	p[n] = 0;
	c->used += n + 1;
	return p;
}

static int qcmp(const void *a, const void *b, void *sortby)
{
	return hitcmp(a, b, *(int *)sortby);
}

/* walk's done hook: each worker sorts what it found, in parallel */
static void on_done(void *arg, int worker)
{
	struct gl *g = arg;
	struct wap_hits *hs = &g->per[worker];
	struct wap_hit *tmp;

	if (g->sortby == SORT_NONE || hs->n < 2)
		return;
	tmp = malloc((hs->n / 2 + 1) * sizeof(*tmp));
	if (tmp)
		sort_hits(hs->h, tmp, hs->n, g->sortby);
	else
		qsort_r(hs->h, hs->n, sizeof(*hs->h), qcmp, &g->sortby);
	free(tmp);
}

static int on_ent(void *arg, const struct wap_walk_ent *e, struct wap_err *err)
{
	struct gl *g = arg;
	struct wap_hits *hs = &g->per[e->worker];
	const char *rel = e->path + g->baselen;
	size_t rlen = e->pathlen - g->baselen;
	bool dir = e->type == WAP_WALK_DIR;
	struct stat st;
	struct wap_hit *h;

	if (e->depth == 0 || e->pathlen < g->baselen)
		return 0;
	if ((g->type == 1 && e->type != WAP_WALK_FILE) || (g->type == 2 && !dir))
		return 0;
	switch (wap_glob_test(g->g, rel, rlen)) {
	case 0:
		return 0;
	case -1:
		return wap_err_set(err, WAP_E_TOO_LARGE,
				   "glob match limit hit on %s; simplify the pattern", e->path);
	}
	memset(&st, 0, sizeof(st));
	if (!g->mtime) {
		/* no stat: the text output of a walk not sorted by time */
	} else if (e->link) {
		int fd = wap_ws_open(g->ws, e->path, O_PATH, 0, WAP_ACC_READ, NULL);
		if (fd < 0 || fstat(fd, &st)) {
			if (fd >= 0)
				close(fd);
			return 0;
		}
		close(fd);
	} else if (fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW)) {
		return 0;
	}
	if (hs->n == hs->cap) {
		size_t nc = hs->cap ? hs->cap * 2 : 256;
		struct wap_hit *n = realloc(hs->h, nc * sizeof(*n));
		if (!n)
			return wap_err_oom(err);
		hs->h = n;
		hs->cap = nc;
	}
	h = &hs->h[hs->n];
	h->path = arena_dup(hs, e->path, e->pathlen);
	if (!h->path)
		return wap_err_oom(err);
	h->dir = dir;
	h->mtime = st.st_mtim;
	hs->n++;
	return 0;
}

/* The literal leading directories of PATTERN ("src/lib" of "src/lib/x*"),
 * where the walk can start; their length, 0 if none. */
static size_t literal_prefix(const char *pat)
{
	size_t last = 0;

	for (size_t i = 0; pat[i]; i++) {
		if (strchr("*?[{\\", pat[i]))
			break;
		if (pat[i] == '/')
			last = i;
	}
	return last;
}

/* Components of PATTERN when it has no "**": the depth it can reach. */
static int pattern_depth(const char *pat)
{
	int d = 1;

	if (strstr(pat, "**"))
		return -1;
	for (const char *p = pat; *p; p++)
		if (*p == '/' && p[1])
			d++;
	return d;
}

void wap_found_release(struct wap_found *f)
{
	free(f->all);
	for (int i = 0; f->per && i < f->nw; i++) {
		while (f->per[i].arena) {
			struct chunk *c = f->per[i].arena;
			f->per[i].arena = c->next;
			free(c);
		}
		free(f->per[i].h);
	}
	free(f->per);
	memset(f, 0, sizeof(*f));
}

/* The workers' sorted hits merged into one array, cut at MAX (0: all):
 * pairwise rounds, so log2(workers) passes.  Empties PER's arrays. */
static struct wap_hit *gather(struct wap_hits *per, int nw, size_t total, size_t max, int sortby)
{
	struct wap_hit *buf[2], *src;
	size_t *len = calloc(nw, sizeof(*len)), *off = calloc(nw, sizeof(*off));
	int runs = nw, cur = 0;

	buf[0] = malloc((total ? total : 1) * sizeof(struct wap_hit));
	buf[1] = nw > 1 ? malloc((total ? total : 1) * sizeof(struct wap_hit)) : NULL;
	if (!len || !off || !buf[0] || (nw > 1 && !buf[1])) {
		free(len);
		free(off);
		free(buf[0]);
		free(buf[1]);
		return NULL;
	}
	/* run i at buf[0] + off[i] */
	for (size_t i = 0, at = 0; i < (size_t)nw; i++) {
		if (per[i].n)
			memcpy(buf[0] + at, per[i].h, per[i].n * sizeof(struct wap_hit));
		off[i] = at;
		len[i] = per[i].n;
		at += per[i].n;
		per[i].n = 0;
	}
	while (runs > 1) {
		struct wap_hit *dst = buf[!cur];
		size_t at = 0;
		int k = 0;
		src = buf[cur];
		for (int i = 0; i < runs; i += 2, k++) {
			size_t n = len[i];
			if (i + 1 < runs)
				n = merge(src + off[i], len[i], src + off[i + 1], len[i + 1],
					  dst + at, max, sortby);
			else if (n)
				memcpy(dst + at, src + off[i], n * sizeof(struct wap_hit));
			off[k] = at;
			len[k] = n;
			at += n;
		}
		runs = k;
		cur = !cur;
	}
	src = buf[cur];
	if (off[0])
		memmove(src, src + off[0], len[0] * sizeof(struct wap_hit));
	free(buf[!cur]);
	free(len);
	free(off);
	return src;
}

int wap_find(const struct wap_call *call, const json_t *req, bool mtime,
			struct wap_found *fo, struct wap_err *err)
{
	const struct wap_ws *ws = call->ws;
	struct wap_walk_opts wo = { .max_depth = -1 };
	struct gl g = { 0 };
	const char *pattern = NULL, *sort = NULL, *type = NULL;
	char *base = NULL, *start = NULL;
	long long max = (long long)ws->lim.max_search_results, threads = 0;
	int sortby = SORT_MTIME, nw = 0, rc = -1;
	struct wap_hit *all = NULL;
	size_t total = 0, pre;

	memset(fo, 0, sizeof(*fo));
	if (wap_req_str(req, "pattern", &pattern, err) < 0 ||
	    wap_req_str(req, "sort", &sort, err) < 0 ||
	    wap_req_str(req, "type", &type, err) < 0 ||
	    wap_req_int(req, "max_results", &max, err) < 0 ||
	    wap_req_int(req, "threads", &threads, err) < 0 ||
	    wap_req_bool(req, "no_ignore", &wo.no_ignore, err) < 0 ||
	    wap_req_bool(req, "no_default_excludes", &wo.no_default_excludes, err) < 0 ||
	    wap_req_bool(req, "follow", &wo.follow, err) < 0)
		return -1;
	if (!pattern || !*pattern)
		return wap_err_set(err, WAP_E_INVALID, "missing PATTERN (see 'wap glob --help')");
	if (max < 0)
		return wap_err_set(err, WAP_E_INVALID, "argument 'max_results' must be at least 0");
	if (threads < 0)
		return wap_err_set(err, WAP_E_INVALID, "argument 'threads' must be at least 0");
	if (sort && !strcmp(sort, "path"))
		sortby = SORT_PATH;
	else if (sort && !strcmp(sort, "none"))
		sortby = SORT_NONE;
	else if (sort && strcmp(sort, "mtime") && strcmp(sort, "modified"))
		return wap_err_set(err, WAP_E_INVALID, "Invalid sort '%s' (mtime, path or none)", sort);
	if (type && (!strcmp(type, "f") || !strcmp(type, "file")))
		g.type = 1;
	else if (type && (!strcmp(type, "d") || !strcmp(type, "dir") || !strcmp(type, "directory")))
		g.type = 2;
	else if (type)
		return wap_err_set(err, WAP_E_INVALID, "Invalid type '%s' (f or d)", type);
	wo.threads = threads > 256 ? 256 : (int)threads;
	g.mtime = mtime || sortby == SORT_MTIME;
	g.sortby = sortby;
	wo.dirs = true;
	wo.links = true;
	wo.cancel = call->cancel;
	wo.done = on_done;

	if (!strncmp(pattern, "./", 2))
		pattern += 2;
	g.ws = ws;
	g.g = wap_glob_new(pattern, 0, err);
	if (!g.g)
		return -1;
	if (wap_req_path(call, req, "path", ".", &base, err))
		goto out;
	g.baselen = strcmp(base, ".") ? strlen(base) + 1 : 0;
	/* start below the pattern's literal directories */
	pre = literal_prefix(pattern);
	{
		struct wap_sb sb = WAP_SB_INIT;
		int fd;
		wap_path_addn(&sb, base, pattern, pre);
		start = wap_sb_detach(&sb);
		if (!start) {
			wap_err_oom(err);
			goto out;
		}
		/* PATH must exist and be a directory; a missing prefix is no match */
		fd = wap_ws_open(ws, base, O_PATH | O_DIRECTORY, 0, WAP_ACC_READ, err);
		if (fd < 0) {
			if (err && err->kind == WAP_E_NOT_FOUND)
				wap_err_set(err, WAP_E_NOT_FOUND, "Directory not found: %s", base);
			else if (err && err->kind == WAP_E_NOT_DIR)
				wap_err_set(err, WAP_E_NOT_DIR, "Not a directory: %s", base);
			goto out;
		}
		close(fd);
		if (pre) {
			/* beneath the root and a directory, else nothing matches */
			fd = wap_ws_open(ws, start, O_PATH | O_DIRECTORY, 0, WAP_ACC_READ, NULL);
			if (fd < 0) {
				free(start);
				start = NULL;
			} else {
				close(fd);
			}
		}
	}
	{
		int d = pattern_depth(pattern);
		if (d > 0) {
			int skip = 0;
			for (size_t i = 0; i < pre; i++)
				skip += pattern[i] == '/';
			wo.max_depth = d - (pre ? skip + 1 : 0);
		}
	}
	nw = wap_walk_threads(&wo);
	g.per = calloc(nw, sizeof(*g.per));
	if (!g.per) {
		wap_err_oom(err);
		goto out;
	}
	if (start && wap_walk(ws, start, &wo, on_ent, &g, err))
		goto out;
	for (int i = 0; i < nw; i++)
		total += g.per[i].n;
	all = gather(g.per, nw, total, sortby == SORT_NONE ? 0 : max, sortby);
	if (!all) {
		wap_err_oom(err);
		goto out;
	}
	fo->all = all;
	fo->total = total;
	fo->max = max;
	fo->per = g.per;
	fo->nw = nw;
	all = NULL;
	g.per = NULL;
	rc = 0;
out:
	free(all);
	for (int i = 0; g.per && i < nw; i++) {
		while (g.per[i].arena) {
			struct chunk *c = g.per[i].arena;
			g.per[i].arena = c->next;
			free(c);
		}
		free(g.per[i].h);
	}
	free(g.per);
	wap_glob_free(g.g);
	free(base);
	free(start);
	return rc;
}

/* ISO time, the date part cached: a tree's files often share a second */
struct isocache {
	time_t sec;
	char buf[32];
};

static const char *iso(struct isocache *c, const struct timespec *ts)
{
	if (c->sec != ts->tv_sec || !c->buf[0]) {
		wap_iso_time(ts, c->buf);
		c->sec = ts->tv_sec;
	} else {
		long ms = ts->tv_nsec / 1000000;
		/* "YYYY-MM-DDTHH:MM:SS.mmmZ": the milliseconds at 20..22 */
		c->buf[20] = '0' + ms / 100;
		c->buf[21] = '0' + ms / 10 % 10;
		c->buf[22] = '0' + ms % 10;
	}
	return c->buf;
}

json_t *wap_found_json(const struct wap_found *fo)
{
	json_t *files = json_array();
	struct isocache ic = { 0 };

	for (size_t i = 0; i < fo->total && (!fo->max || i < fo->max); i++) {
		json_t *o = json_object();
		wap_json_set_name(o, "path", fo->all[i].path);	/* never dropped if not UTF-8 */
		json_object_set_new_nocheck(o, "isDirectory", json_boolean(fo->all[i].dir));
		json_object_set_new_nocheck(o, "mtime", json_string(iso(&ic, &fo->all[i].mtime)));
		json_array_append_new(files, o);
	}
	return json_pack("{s:o, s:b, s:I}", "files", files, "isTruncated",
			 fo->max && fo->total > fo->max, "totalFound", (json_int_t)fo->total);
}

