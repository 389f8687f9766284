/* fs/find.c - finding files by glob, the engine behind `wap glob` (and
 * every door's glob/exploreFiles): the parallel walk, matching, and the
 * order.  See find.h.
 *
 * The path order comes from the shape of the walk rather than from
 * comparing whole paths (which share long prefixes): the walker hands each
 * directory's entries over sorted by name (wap_walk_opts.sorted), they are
 * kept as a run tied to the directory's own entry, and a depth-first pass
 * over that tree lists the paths in wap_path_cmp's order ('/' below every
 * other byte, so "a", "a/b", "a-b").  Newest first is then a stable radix
 * sort of that list by mtime, so ties stay in path order.  The tree's
 * order differs from wap_path_cmp's in one case only, a name that is a
 * sibling's name followed by byte 0x01 ("a" and "a\1b": "a\1b" sorts before
 * "a/c"); a name holding 0x01 sends the hits through a comparison sort of
 * whole paths instead. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
	size_t map;		/* mapped bytes (big_alloc), 0: malloc'd */
	char data[];
};

struct dnode;

/* an entry of the walk: a hit, a directory the walk entered, or both;
 * 40 bytes, the directories that are no hits with no name kept (the tree
 * needs their place, not their names) */
struct went {
	struct wap_hit h;	/* h.path: a hit's path, NULL for no hit */
	struct dnode *sub;	/* a directory entered: its entries */
};

/* a directory's entries: a run of one worker's array */
struct dnode {
	int worker;
	size_t start, n;
};

struct wap_hits {
	struct went *e;		/* malloc'd, or mapped (ecap bytes) */
	size_t n, cap, ecap;
	size_t hits;		/* the entries that are hits */
	time_t lo, hi;		/* their oldest and newest mtime (s) */
	struct chunk *arena;	/* paths and names, and dnodes */
};

struct gl {
	const struct wap_ws *ws;
	struct wap_glob *g;
	struct wap_glob *last;	/* the pattern's last component, or NULL */
	size_t baselen;		/* strip "PATH/" from root-relative paths */
	int type;		/* 0 all, 1 files, 2 dirs */
	int sortby;
	bool mtime;		/* stat what matches (JSON, or sorting by mtime) */
	bool tree;		/* keep the walk's tree for the path order */
	bool odd;		/* a name the tree's order gets wrong (0x01) */
	bool undecided;		/* a name hit the match limit on LAST (atomic) */
	struct dnode root;	/* the start directory's entries */
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
			p = p == '/' ? 1 : p;
			q = q == '/' ? 1 : q;
			if (p == q)	/* '/' and 0x01 weigh the same: go on */
				return wap_path_cmp(a + i + k + 1, b + i + k + 1);
			return (int)p - (int)q;
		}
	}
#else
	return wap_path_cmp(a, b);
#endif
}

/* Does NAME (N bytes, 8 readable past them) hold a byte 0x01? */
static bool has_01(const char *name, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (size_t i = 0; i < n; i += 8) {
		uint64_t x, z;
		memcpy(&x, name + i, 8);
		x ^= 0x0101010101010101ull;
		z = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
		if (z)	/* the lowest flag is the first 0x01, maybe past the end */
			return i + __builtin_ctzll(z) / 8 < n;
	}
	return false;
#else
	return memchr(name, 1, n) != NULL;
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

/* Merge sort of H[0..N) with TMP (N/2 + 1) as scratch: when the tree's
 * order cannot be used. */
static void sort_hits(struct wap_hit **h, struct wap_hit **tmp, size_t n, int sortby)
{
	size_t m = n / 2, i, j, k;

	if (n <= 12) {
		for (i = 1; i < n; i++) {
			struct wap_hit *t = h[i];
			for (j = i; j && hitcmp(t, h[j - 1], sortby) < 0; j--)
				h[j] = h[j - 1];
			h[j] = t;
		}
		return;
	}
	sort_hits(h, tmp, m, sortby);
	sort_hits(h + m, tmp, n - m, sortby);
	if (hitcmp(h[m], h[m - 1], sortby) >= 0)
		return;
	memcpy(tmp, h, m * sizeof(*h));
	for (i = 0, j = m, k = 0; i < m && j < n;)
		h[k++] = hitcmp(h[j], tmp[i], sortby) < 0 ? h[j++] : tmp[i++];
	while (i < m)
		h[k++] = tmp[i++];
}

/* The radix key of newest first, the smaller the newer: the seconds since
 * LO, the oldest (34 bits: 544 years), and the nanoseconds. */
static inline uint64_t mtime_key(const struct wap_hit *h, time_t lo)
{
	uint64_t ns = (uint64_t)h->mtime.tv_nsec & ((1u << 30) - 1);

	return ~((((uint64_t)h->mtime.tv_sec - (uint64_t)lo) << 30) | ns);
}

/* Stable LSD radix sort of the indices 0..N) by KEY, 11 bits at a time and
 * only over the span of bits where the keys differ (DIFF: none in a tree
 * unpacked at one time; seconds alone when no file has nanoseconds), in P
 * and Q (N each): the indices in order in *ORDER, NULL when the order
 * stands as it is.  The indices move, 4 bytes each, the keys stay (8 bytes
 * a hit, read where they are: a cache's worth on a big tree).  One read
 * counts every pass's digits.  -1: no memory. */
#define RBITS 11
static int radix_mtime(const uint64_t *key, uint32_t *p, uint32_t *q, size_t n,
		       uint64_t diff, uint32_t **order)
{
	int lo = diff ? __builtin_ctzll(diff) : 0, hi = diff ? 64 - __builtin_clzll(diff) : 0;
	int passes = (hi - lo + RBITS - 1) / RBITS;
	size_t (*cnt)[1 << RBITS];

	*order = NULL;
	if (!passes)
		return 0;
	cnt = calloc(passes, sizeof(*cnt));
	if (!cnt)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t k = key[i] >> lo;
		for (int d = 0; d < passes; d++, k >>= RBITS)
			cnt[d][k & ((1 << RBITS) - 1)]++;
	}
	for (int d = 0; d < passes; d++) {
		int sh = lo + d * RBITS;
		size_t at = 0, *c = cnt[d];
		uint32_t *t;
		for (int v = 0; v < 1 << RBITS; v++) {
			size_t k = c[v];
			c[v] = at;
			at += k;
		}
		if (!d) {
			for (size_t i = 0; i < n; i++)
				q[c[(key[i] >> sh) & ((1 << RBITS) - 1)]++] = (uint32_t)i;
		} else {
			for (size_t i = 0; i < n; i++)
				p[c[(key[q[i]] >> sh) & ((1 << RBITS) - 1)]++] = q[i];
			t = p;
			p = q;
			q = t;
		}
	}
	free(cnt);
	*order = q;
	return 0;
}

/* Arrays of megabytes are mapped on 2 MB boundaries, where the kernel's
 * transparent huge pages (when not disabled) fill them in one fault per 2 MB
 * rather than one per 4 KB page (some 2,500 faults on the Linux tree).
 * N bytes, rounded up to 2 MB in *N; NULL when out of memory. */
#define HUGE (2u << 20)
#define ESMALL (64u << 10)	/* bigger than this: mapped */
static void *huge_alloc(size_t *n)
{
	size_t len = (*n + HUGE - 1) & ~(size_t)(HUGE - 1);
	char *p = mmap(NULL, len + HUGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t q;

	if (p == MAP_FAILED)
		return NULL;
	q = ((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
	if (q > (uintptr_t)p)
		munmap(p, q - (uintptr_t)p);
	if ((uintptr_t)p + HUGE > q)
		munmap((char *)q + len, (uintptr_t)p + HUGE - q);
	madvise((void *)q, len, MADV_HUGEPAGE);
	*n = len;
	return (void *)q;
}

/* N bytes from the heap (*SZ 0) or, from 2 MB on, mapped (*SZ bytes) */
static void *big_alloc(size_t n, size_t *sz)
{
	*sz = 0;
	if (n < HUGE)
		return malloc(n ? n : 1);
	*sz = n;
	return huge_alloc(sz);
}

/* P from big_alloc (*SZ as it set it), or NULL: nothing (a size is left
 * set when the array was handed on or its mapping failed, and munmap(NULL,
 * SZ) would unmap whatever lies at the bottom of the address space) */
static void big_free(void *p, size_t sz)
{
	if (!p)
		return;
	if (sz)
		munmap(p, sz);
	else
		free(p);
}

/* N bytes aligned to 8 from HS's arena, which keeps 8 readable bytes past
 * every string for pathcmp's word reads. */
static void *arena_alloc(struct wap_hits *hs, size_t n)
{
	struct chunk *c = hs->arena;
	char *p;

	n = (n + 7) & ~(size_t)7;
	if (!c || c->cap - c->used < n + 8) {
		/* a first chunk of 64 KB, then 2 MB, twice the last, up to
		 * 8 MB, mapped (huge pages) */
		size_t cap = !c ? ESMALL : c->cap + sizeof(*c) < HUGE ? HUGE :
			     2 * (c->cap + sizeof(*c)), map;
		struct chunk *nc;
		if (cap > (8u << 20))
			cap = 8u << 20;
		if (cap < sizeof(*c) + n + 8)
			cap = sizeof(*c) + n + 8;
		nc = big_alloc(cap, &map);
		if (!nc)
			return NULL;
		nc->next = c;
		nc->used = 0;
		nc->cap = (map ? map : cap) - sizeof(*c);
		nc->map = map;
		hs->arena = c = nc;
	}
	p = c->data + c->used;
	c->used += n;
	return p;
}

static char *arena_dup(struct wap_hits *hs, const char *s, size_t n)
{
	char *p = arena_alloc(hs, n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

/* A regular file can match only if its name matches the pattern's last
 * component: most of a tree's files are dropped before the walk sorts a
 * directory's names (wap_walk_opts.keep_file). */
static bool keep_file(void *arg, const char *name, size_t len)
{
	struct gl *g = arg;

	if (g->type == 2)
		return false;
	if (!g->last || __atomic_load_n(&g->undecided, __ATOMIC_RELAXED))
		return true;
	switch (wap_glob_test(g->last, name, len)) {
	case 0:
		return false;
	case -1:
		/* the walk tests a directory's every name here before any
		 * reaches on_ent: a pattern at the match limit on each (42 ms
		 * a name) would be tried on all of them before the call
		 * fails; the whole pattern decides the rest, on_ent fails on
		 * the first it cannot */
		__atomic_store_n(&g->undecided, true, __ATOMIC_RELAXED);
		return true;
	}
	return true;
}

/* The pattern's last component, when a name alone can be tested against
 * it: no "**", and nothing that could match or hide a '/' (a class, an
 * escape, a '?', braces before the last '/'). */
static const char *last_component(const char *pat)
{
	const char *slash = strrchr(pat, '/'), *last = slash ? slash + 1 : pat, *brace = strchr(pat, '{');

	if (!*last || strstr(last, "**") || strpbrk(last, "[\\?") || (brace && brace < last))
		return NULL;
	return last;
}

static int on_ent(void *arg, const struct wap_walk_ent *e, struct wap_err *err)
{
	struct gl *g = arg;
	struct wap_hits *hs = &g->per[e->worker];
	const char *rel = e->path + g->baselen;
	size_t rlen = e->pathlen - g->baselen;
	bool dir = e->type == WAP_WALK_DIR, hit = true;
	struct dnode *sub = NULL, *dn;
	struct timespec mt = { 0 };
	struct stat st;
	struct went *w;

	if (e->depth == 0 || e->pathlen < g->baselen)
		return 0;
	if ((g->type == 1 && e->type != WAP_WALK_FILE) || (g->type == 2 && !dir)) {
		hit = false;
	} else {
		switch (wap_glob_test(g->g, rel, rlen)) {
		case 0:
			hit = false;
			break;
		case -1:
			return wap_err_set(err, WAP_E_TOO_LARGE,
					   "glob match limit hit on %s; simplify the pattern", e->path);
		}
	}
	if (g->tree && e->subctx) {
		/* its entries will be tied to this entry */
		sub = arena_alloc(hs, sizeof(*sub));
		if (!sub)
			return wap_err_oom(err);
		sub->n = 0;
		*e->subctx = sub;
	}
	if (!hit || !g->mtime) {
		/* no stat: the text output of a walk not sorted by time */
	} else if (e->link) {
		int fd = wap_ws_open(g->ws, e->path, O_PATH, 0, WAP_ACC_READ, NULL);
		if (fd < 0 || fstat(fd, &st))
			hit = false;
		else
			mt = st.st_mtim;
		if (fd >= 0)
			close(fd);
	} else if (e->fd >= 0 ? fstat(e->fd, &st) :
		   fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW)) {
		hit = false;
	} else {
		mt = st.st_mtim;
	}
	if (!hit && !sub)
		return 0;
	if (hs->n == hs->cap) {
		/* from 64 KB on straight to mappings of 2 MB and up (huge
		 * pages: a fault per 2 MB, not per 4 KB page) */
		size_t nc = hs->cap ? hs->cap * 2 : 256, sz = nc * sizeof(struct went);
		struct went *n;
		if (sz <= ESMALL) {
			n = realloc(hs->e, sz);
		} else if ((n = huge_alloc(&sz))) {
			/* from the heap to a mapping, or a bigger mapping */
			memcpy(n, hs->e, hs->n * sizeof(*n));
			big_free(hs->e, hs->ecap);
			hs->ecap = sz;
			nc = sz / sizeof(*n);
		}
		if (!n)
			return wap_err_oom(err);
		hs->e = n;
		hs->cap = nc;
	}
	if (g->tree) {
		/* one worker calls back a directory's entries one after
		 * another: they make a run of its array */
		dn = e->dirctx ? e->dirctx : &g->root;
		if (!dn->n) {
			dn->worker = e->worker;
			dn->start = hs->n;
		}
		dn->n++;
	}
	w = &hs->e[hs->n++];
	w->h.path = NULL;
	w->h.len = 0;
	if (hit) {
		w->h.path = arena_dup(hs, e->path, e->pathlen);
		if (!w->h.path)
			return wap_err_oom(err);
		w->h.len = e->pathlen;
		if (!hs->hits++ || mt.tv_sec < hs->lo)
			hs->lo = mt.tv_sec;
		if (hs->hits == 1 || mt.tv_sec > hs->hi)
			hs->hi = mt.tv_sec;
	}
	/* the name where the walk read it (the copy just written would be
	 * read back through the store buffer, a stall per word) */
	if (g->tree && has_01(e->name, e->namelen))
		__atomic_store_n(&g->odd, true, __ATOMIC_RELAXED);
	w->h.dir = dir;
	w->h.mtime = mt;
	w->sub = sub;
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

static void per_release(struct wap_hits *per, int nw)
{
	for (int i = 0; per && i < nw; i++) {
		while (per[i].arena) {
			struct chunk *c = per[i].arena;
			per[i].arena = c->next;
			big_free(c, c->map);
		}
		big_free(per[i].e, per[i].ecap);
	}
	free(per);
}

void wap_found_release(struct wap_found *f)
{
	big_free(f->all, f->allsz);
	per_release(f->per, f->nw);
	memset(f, 0, sizeof(*f));
}

/* The hits in the tree's order, depth first, into ALL and, with KEY, their
 * keys from LO into KEY and in *DIFF the key bits that differ; how many
 * ((size_t)-1: no memory). */
static size_t tree_order(const struct gl *g, struct wap_hit **all, uint64_t *key,
			 time_t lo, uint64_t *diff)
{
	struct frame {
		const struct dnode *d;
		size_t i;
	} *st = NULL;
	size_t sn = 0, cap = 0, k = 0;

	if (!g->root.n)
		return 0;
	cap = 64;
	st = malloc(cap * sizeof(*st));
	if (!st)
		return (size_t)-1;
	st[sn++] = (struct frame){ &g->root, 0 };
	while (sn) {
		struct frame *f = &st[sn - 1];
		struct went *w;
		if (f->i == f->d->n) {
			sn--;
			continue;
		}
		w = &g->per[f->d->worker].e[f->d->start + f->i++];
		if (w->h.path) {
			if (key) {
				key[k] = mtime_key(&w->h, lo);
				*diff |= key[k] ^ key[0];
			}
			all[k++] = &w->h;
		}
		if (w->sub && w->sub->n) {
			if (sn == cap) {
				struct frame *n = realloc(st, 2 * cap * sizeof(*st));
				if (!n) {
					free(st);
					return (size_t)-1;
				}
				st = n;
				cap *= 2;
			}
			st[sn++] = (struct frame){ w->sub, 0 };
		}
	}
	free(st);
	return k;
}

/* Every worker's hits, TOTAL of them, in one array in the order asked
 * (big_alloc'ed, its size in *ALLSZ); NULL when out of memory.  Newest
 * first from the tree takes one mapping: the hits in the tree's order, their
 * keys, and the radix sort's two arrays of indices (24 bytes a hit, where a
 * sort of (key, hit) pairs took 40). */
static struct wap_hit **gather(const struct gl *g, int nw, size_t total, size_t *allsz)
{
	bool tree = g->tree && !g->odd;
	bool radix = tree && g->sortby == SORT_MTIME && total > 1 && total < UINT32_MAX;
	size_t n = total ? total : 1, k = 0;
	struct wap_hit **all, **tmp;
	time_t lo = 0, hi = 0;

	for (int i = 0, any = 0; i < nw; i++) {
		if (!g->per[i].hits)
			continue;
		if (!any++ || g->per[i].lo < lo)
			lo = g->per[i].lo;
		if (any == 1 || g->per[i].hi > hi)
			hi = g->per[i].hi;
	}
	/* by radix when the key holds the span of mtimes */
	radix = radix && (uint64_t)hi - (uint64_t)lo < 1ull << 34;
	*allsz = n * (radix ? 3 * sizeof(*all) : sizeof(*all));
	/* mapped from 64 KB on, as the walk's arrays are: 32k hits took
	 * 235 faults (18 us each on a virtual machine), one huge page now */
	all = *allsz >= ESMALL ? huge_alloc(allsz) : big_alloc(*allsz, allsz);
	if (!all)
		return NULL;
	if (radix) {
		uint64_t *key = (uint64_t *)(all + n), diff = 0;
		uint32_t *p = (uint32_t *)(key + n), *order;
		if (tree_order(g, all, key, lo, &diff) == total &&
		    !radix_mtime(key, p, p + n, n, diff, &order)) {
			/* the keys are spent: the tree's order goes there */
			if (order) {
				struct wap_hit **t = (struct wap_hit **)key;
				memcpy(t, all, n * sizeof(*all));
				for (size_t i = 0; i < n; i++)
					all[i] = t[order[i]];
			}
			return all;
		}
		tree = false;
	} else if (tree && tree_order(g, all, NULL, 0, NULL) != total) {
		tree = false;
	}
	if (!tree) {
		for (int i = 0; i < nw; i++)
			for (size_t j = 0; j < g->per[i].n; j++)
				if (g->per[i].e[j].h.path)
					all[k++] = &g->per[i].e[j].h;
	}
	if (g->sortby == SORT_NONE || total < 2 || (tree && g->sortby == SORT_PATH))
		return all;
	/* a comparison sort: no tree, or mtimes centuries apart */
	tmp = malloc((total / 2 + 1) * sizeof(*tmp));
	if (!tmp) {
		big_free(all, *allsz);
		return NULL;
	}
	sort_hits(all, tmp, total, g->sortby);
	free(tmp);
	return all;
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
	struct wap_hit **all = NULL;
	size_t total = 0, pre, allsz = 0;

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
	g.tree = sortby != SORT_NONE;
	wo.sorted = g.tree;
	wo.dirs = true;
	wo.links = true;
	wo.cancel = call->cancel;

	if (!strncmp(pattern, "./", 2))
		pattern += 2;
	g.ws = ws;
	g.g = wap_glob_new(pattern, 0, err);
	if (!g.g)
		return -1;
	if (last_component(pattern)) {
		/* "**" + "/" + LAST: the same test of a name, and glob's
		 * fast suffix test where LAST is "*" and a literal tail.
		 * NULL (no memory): merely no early drop. */
		struct wap_sb lg = WAP_SB_INIT;
		wap_sb_addf(&lg, "**/%s", last_component(pattern));
		if (!lg.oom)
			g.last = wap_glob_new(lg.buf, 0, NULL);
		wap_sb_release(&lg);
	}
	wo.keep_file = keep_file;
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
		total += g.per[i].hits;
	all = gather(&g, nw, total, &allsz);
	if (!all) {
		wap_err_oom(err);
		goto out;
	}
	fo->all = all;
	fo->allsz = allsz;
	fo->total = total;
	fo->max = max;
	fo->per = g.per;
	fo->nw = nw;
	all = NULL;
	g.per = NULL;
	rc = 0;
out:
	big_free(all, allsz);
	per_release(g.per, nw);
	wap_glob_free(g.g);
	wap_glob_free(g.last);
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
		wap_json_set_name(o, "path", fo->all[i]->path);	/* never dropped if not UTF-8 */
		json_object_set_new_nocheck(o, "isDirectory", json_boolean(fo->all[i]->dir));
		json_object_set_new_nocheck(o, "mtime", json_string(iso(&ic, &fo->all[i]->mtime)));
		json_array_append_new(files, o);
	}
	return json_pack("{s:o, s:b, s:I}", "files", files, "isTruncated",
			 fo->max && fo->total > fo->max, "totalFound", (json_int_t)fo->total);
}

