/* git/diff.c - the diff action, and the diff machinery log and show use:
 * git's patch text (quoted names, rename lines, similarity), --stat and
 * --name-only, revisions and paths told apart as git does. */
#include <ctype.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* git's quote_c_style with core.quotePath on: quote a name holding control
 * characters, '"', '\\' or bytes >= 0x7f. */
static void quote_c(struct wap_sb *sb, const char *s)
{
	const unsigned char *p;
	bool need = false;

	for (p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == '"' || *p == '\\' || *p >= 0x7f)
			need = true;
	if (!need) {
		wap_sb_adds(sb, s);
		return;
	}
	wap_sb_addc(sb, '"');
	for (p = (const unsigned char *)s; *p; p++) {
		static const char esc[] = "\a\b\t\n\v\f\r";
		static const char let[] = "abtnvfr";
		const char *e = *p ? strchr(esc, *p) : NULL;
		if (e) {
			wap_sb_addc(sb, '\\');
			wap_sb_addc(sb, let[e - esc]);
		} else if (*p == '"' || *p == '\\') {
			wap_sb_addc(sb, '\\');
			wap_sb_addc(sb, *p);
		} else if (*p < 0x20 || *p >= 0x7f) {
			wap_sb_addf(sb, "\\%03o", *p);
		} else {
			wap_sb_addc(sb, *p);
		}
	}
	wap_sb_addc(sb, '"');
}

void wap_git_quote_path(struct wap_sb *sb, const char *path)
{
	quote_c(sb, path);
}

static bool needs_quote(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == '"' || *p == '\\' || *p >= 0x7f)
			return true;
	return false;
}

/* git's pprint_rename: "dir/{old => new}/tail". */
static void pprint_rename(struct wap_sb *sb, const char *a, const char *b)
{
	const char *o = a, *n = b;
	long la = strlen(a), lb = strlen(b), pfx = 0, sfx = 0, adj, am, bm;

	if (needs_quote(a) || needs_quote(b)) {
		quote_c(sb, a);
		wap_sb_adds(sb, " => ");
		quote_c(sb, b);
		return;
	}
	while (*o && *n && *o == *n) {
		if (*o == '/')
			pfx = o - a + 1;
		o++, n++;
	}
	o = a + la;
	n = b + lb;
	adj = pfx ? 1 : 0;
	while (a + pfx - adj <= o && b + pfx - adj <= n && *o == *n) {
		if (*o == '/')
			sfx = la - (o - a);
		o--, n--;
	}
	am = la - pfx - sfx;
	bm = lb - pfx - sfx;
	if (am < 0)
		am = 0;
	if (bm < 0)
		bm = 0;
	if (pfx + sfx) {
		wap_sb_add(sb, a, pfx);
		wap_sb_addc(sb, '{');
	}
	wap_sb_add(sb, a + pfx, am);
	wap_sb_adds(sb, " => ");
	wap_sb_add(sb, b + pfx, bm);
	if (pfx + sfx) {
		wap_sb_addc(sb, '}');
		wap_sb_add(sb, a + la - sfx, sfx);
	}
}

/* git's rename score (diffcore-rename.c estimate_similarity over the span
 * hashes of diffcore-delta.c), so that "similarity index N%" is git's
 * number rather than libgit2's own estimate. */
struct span {
	unsigned h, cnt;
};

#define SPAN_MOD 107927	/* diffcore-delta.c's HASHBASE */

static int uint_cmp(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* The span hashes of BUF with their byte counts, sorted by hash: at most
 * SPAN_MOD of them, counted in a table (a span a line: 50 MB of newlines
 * were 50 million spans to sort, 400 MB and minutes a file). */
static struct span *spans(const unsigned char *buf, size_t sz, size_t *nout)
{
	unsigned *cnt = calloc(SPAN_MOD, sizeof(*cnt));
	unsigned *seen = malloc((sz < SPAN_MOD ? sz + 1 : SPAN_MOD) * sizeof(*seen));
	struct span *v = NULL;
	bool text = !memchr(buf, 0, sz < 8000 ? sz : 8000);
	unsigned a1 = 0, a2 = 0, n = 0, h;
	size_t k = 0;

	if (!cnt || !seen)
		goto out;
	while (sz) {
		unsigned c = *buf++, old1 = a1;
		sz--;
		if (text && c == '\r' && sz && *buf == '\n')
			continue;
		a1 = (a1 << 7) ^ (a2 >> 25);
		a2 = (a2 << 7) ^ (old1 >> 25);
		a1 += c;
		if (++n < 64 && c != '\n')
			continue;
		h = (a1 + a2 * 0x61) % SPAN_MOD;
		if (!cnt[h])
			seen[k++] = h;
		cnt[h] += n;
		n = a1 = a2 = 0;
	}
	if (n > 0) {
		h = (a1 + a2 * 0x61) % SPAN_MOD;
		if (!cnt[h])
			seen[k++] = h;
		cnt[h] += n;
	}
	qsort(seen, k, sizeof(*seen), uint_cmp);
	if (!(v = malloc((k + 1) * sizeof(*v))))
		goto out;
	for (size_t i = 0; i < k; i++) {
		v[i].h = seen[i];
		v[i].cnt = cnt[seen[i]];
	}
	*nout = k;
out:
	free(cnt);
	free(seen);
	return v;
}

/* git's score of two sides of SA/SB bytes with their span hashes (NULL
 * when one is too different in size to be a rename: estimate_similarity's
 * early exit). */
static bool too_different(size_t la, size_t lb)
{
	size_t max = la > lb ? la : lb, base = la < lb ? la : lb;

	return !lb || max * (60000 - 30000) < (max - base) * 60000;
}

static int span_score(const struct span *sa, size_t na, size_t la, const struct span *sb, size_t nb,
		      size_t lb)
{
	size_t max = la > lb ? la : lb, copied = 0, i = 0, j = 0;

	for (; i < na; i++) {
		while (j < nb && sb[j].h < sa[i].h)
			j++;
		if (j < nb && sb[j].h == sa[i].h) {
			copied += sa[i].cnt < sb[j].cnt ? sa[i].cnt : sb[j].cnt;
			j++;
		}
	}
	return (int)(copied * 60000 / max) * 100 / 60000;
}

/* -1 when a side is not in the object database (a work tree file). */
static int git_similarity(struct g *g, const git_oid *a, const git_oid *b)
{
	git_blob *ba = NULL, *bb = NULL;
	struct span *sa = NULL, *sb = NULL;
	size_t na = 0, nb = 0, la, lb;
	int score = -1;

	if (git_oid_equal(a, b))
		return 100;
	if (git_blob_lookup(&ba, g->repo, a) || git_blob_lookup(&bb, g->repo, b))
		goto out;
	la = git_blob_rawsize(ba);
	lb = git_blob_rawsize(bb);
	score = 0;
	if (too_different(la, lb))
		goto out;
	sa = spans(git_blob_rawcontent(ba), la, &na);
	sb = spans(git_blob_rawcontent(bb), lb, &nb);
	score = sa && sb ? span_score(sa, na, la, sb, nb, lb) : -1;
out:
	git_error_clear();
	free(sa);
	free(sb);
	git_blob_free(ba);
	git_blob_free(bb);
	return score;
}

/* ---- git's similarity as libgit2's rename metric ----
 * libgit2's own estimate pairs files git leaves apart (and the reverse);
 * with git's score (diffcore-delta's span hashes) the pairs are git's. */
struct sig {
	struct span *v;
	size_t n, size;
	char *path;
};

/* git pairs a deleted and an added file with the same base name, unique
 * among the deleted and among the added ones, when they are 75% alike
 * (diffcore-rename.c find_basename_matches), before any other pairing:
 * such a pair is matched alone, its files with nothing else. */
struct bpair {
	const char *src, *dst;
};

struct rctx {
	struct g *g;
	struct bpair *v;
	size_t n;
};

static int sig_buffer(void **out, const git_diff_file *f, const char *buf, size_t len, void *p)
{
	struct sig *s = calloc(1, sizeof(*s));

	(void)p;
	if (!s)
		return -1;
	s->size = len;
	s->path = strdup(f->path ? f->path : "");
	if (!s->path || !(s->v = spans((const unsigned char *)buf, len, &s->n))) {
		free(s->path);
		free(s);
		return -1;
	}
	*out = s;
	return 0;
}

/* A work tree file, read beneath the root (a file the policy denies, or
 * that cannot be read, is like an empty one: no rename). */
static int sig_file(void **out, const git_diff_file *f, const char *full, void *p)
{
	struct g *g = ((struct rctx *)p)->g;
	struct wap_err e2 = { 0 };
	struct wap_sb sb = WAP_SB_INIT;
	char *rel = NULL, buf[65536];
	ssize_t r;
	int fd = -1, rc;

	if (!wap_ws_rel(g->ws, full, strlen(full), &rel, &e2))
		fd = wap_ws_open(g->ws, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0, WAP_ACC_READ, &e2);
	while (fd >= 0 && (r = read(fd, buf, sizeof(buf))) > 0)
		wap_sb_add(&sb, buf, r);
	if (fd >= 0)
		close(fd);
	free(rel);
	wap_err_release(&e2);
	if (sb.oom) {
		wap_sb_release(&sb);
		return -1;
	}
	rc = sig_buffer(out, f, sb.buf ? sb.buf : "", sb.len, p);
	wap_sb_release(&sb);
	return rc;
}

static void sig_free(void *sig, void *p)
{
	struct sig *s = sig;

	(void)p;
	if (s) {
		free(s->v);
		free(s->path);
	}
	free(s);
}

static int sig_similarity(int *score, void *a, void *b, void *p)
{
	struct sig *x = a, *y = b;
	struct rctx *rc = p;

	for (size_t i = 0; i < rc->n; i++) {
		const struct bpair *bp = &rc->v[i];
		bool xin = !strcmp(x->path, bp->src) || !strcmp(x->path, bp->dst);
		bool yin = !strcmp(y->path, bp->src) || !strcmp(y->path, bp->dst);
		if ((xin || yin) && !(xin && yin)) {
			*score = 0;
			return 0;
		}
	}
	*score = too_different(x->size, y->size) ? 0 : span_score(x->v, x->n, x->size, y->v, y->n, y->size);
	return 0;
}

struct pctx {
	struct wap_sb *sb;
	struct g *g;
	bool no_hunks;	/* git prints no ---/+++ lines then (empty files) */
	size_t cap;	/* the text stops before the line that would pass it */
	bool *cut;	/* ... and this says it did */
};

static int print_line(const git_diff_delta *d, const git_diff_line *l, struct pctx *pc);

static int print_cb(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l, void *p)
{
	struct pctx *pc = p;
	size_t was = pc->sb->len;

	(void)h;
	if (*pc->cut)
		return GIT_EUSER;	/* the rest of this patch is not wanted */
	print_line(d, l, pc);
	if (pc->sb->len > pc->cap) {
		pc->sb->len = was;
		*pc->cut = true;
		return GIT_EUSER;
	}
	return 0;
}

static int print_line(const git_diff_delta *d, const git_diff_line *l, struct pctx *pc)
{
	struct wap_sb *sb = pc->sb;
	int sim = -1;

	/* a binary file renamed or copied unchanged: git says nothing of
	 * its content (libgit2 says it differs) */
	if (l->origin == GIT_DIFF_LINE_BINARY && git_oid_equal(&d->old_file.id, &d->new_file.id) &&
	    !git_oid_is_zero(&d->old_file.id))
		return 0;
	if (l->origin == GIT_DIFF_LINE_FILE_HDR &&
	    (d->status == GIT_DELTA_RENAMED || d->status == GIT_DELTA_COPIED))
		sim = git_similarity(pc->g, &d->old_file.id, &d->new_file.id);
	if (l->origin == GIT_DIFF_LINE_FILE_HDR) {
		/* git ends "--- a/x y" with a tab when the name holds a space */
		const char *q = l->content, *end = l->content + l->content_len;
		while (q < end) {
			const char *nl = memchr(q, '\n', end - q);
			size_t n = nl ? (size_t)(nl - q) : (size_t)(end - q);
			if (pc->no_hunks && n >= 4 && (!strncmp(q, "--- ", 4) || !strncmp(q, "+++ ", 4))) {
				q += n + (nl != NULL);
				continue;
			}
			const char *dots = n > 6 && !strncmp(q, "index ", 6) ? memmem(q, n, "..", 2) : NULL;
			if (sim >= 0 && !strncmp(q, "similarity index ", 17)) {
				wap_sb_addf(sb, "similarity index %d%%", sim);
			} else if (dots) {
				/* libgit2 abbreviates to 7 always; git as its
				 * repository's size asks (oid_abbrev) */
				char a[GIT_OID_HEXSZ + 1], b[GIT_OID_HEXSZ + 1];
				const char *mode = memchr(dots, ' ', n - (dots - q));
				oid_abbrev(pc->g, &d->old_file.id, a);
				oid_abbrev(pc->g, &d->new_file.id, b);
				wap_sb_addf(sb, "index %s..%s", a, b);
				if (mode)
					wap_sb_add(sb, mode, n - (mode - q));
			} else
				wap_sb_add(sb, q, n);
			if (n > 4 && (!strncmp(q, "--- ", 4) || !strncmp(q, "+++ ", 4)) &&
			    memchr(q + 4, ' ', n - 4))
				wap_sb_addc(sb, '\t');
			if (nl)
				wap_sb_addc(sb, '\n');
			q += n + (nl != NULL);
		}
		return 0;
	}
	if (l->origin == GIT_DIFF_LINE_HUNK_HDR) {
		/* git cuts the function line at 80 bytes, then drops trailing
		 * white space (xdiff's def_ff); libgit2 cuts but keeps it */
		size_t n = l->content_len;
		if (n && l->content[n - 1] == '\n')
			n--;
		while (n && isspace((unsigned char)l->content[n - 1]))
			n--;
		wap_sb_add(sb, l->content, n);
		wap_sb_addc(sb, '\n');
		return 0;
	}
	if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION)
		wap_sb_addc(sb, l->origin);
	wap_sb_add(sb, l->content, l->content_len);
	return 0;
}

struct fst {
	char *name;		/* display name for --stat */
	size_t add, del;
	bool binary;
};

static const char *status_word(git_delta_t s)
{
	switch (s) {
	case GIT_DELTA_ADDED: return "added";
	case GIT_DELTA_DELETED: return "deleted";
	case GIT_DELTA_MODIFIED: return "modified";
	case GIT_DELTA_RENAMED: return "renamed";
	case GIT_DELTA_COPIED: return "copied";
	case GIT_DELTA_TYPECHANGE: return "typechange";
	case GIT_DELTA_UNTRACKED: return "untracked";
	case GIT_DELTA_CONFLICTED: return "conflicted";
	default: return "modified";
	}
}

static int decimal_width(size_t n)
{
	int w = 1;

	while (n >= 10)
		n /= 10, w++;
	return w;
}

static int scale_linear(long it, long width, long max_change)
{
	if (!it)
		return 0;
	return 1 + (it * (width - 1) / max_change);
}

/* git diff --stat (diff.c show_stats) for an 80-column output. */
static void stat_text(struct wap_sb *sb, struct fst *fs, size_t n)
{
	long max_change = 0, max_len = 0, width = 80, name_width, graph_width;
	long number_width = 0, bin_width = 0, adds = 0, dels = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++) {
		long len = strlen(fs[i].name), change = fs[i].add + fs[i].del;
		if (max_len < len)
			max_len = len;
		if (fs[i].binary) {
			long w = 14 + decimal_width(fs[i].add) + decimal_width(fs[i].del);
			if (bin_width < w)
				bin_width = w;
			number_width = 3;
			continue;
		}
		if (max_change < change)
			max_change = change;
	}
	if (decimal_width(max_change) > number_width)
		number_width = decimal_width(max_change);
	if (width < 16 + 6 + number_width)
		width = 16 + 6 + number_width;
	graph_width = max_change + 4 > bin_width ? max_change : bin_width - 4;
	name_width = max_len;
	if (name_width + number_width + 6 + graph_width > width) {
		if (graph_width > width * 3 / 8 - number_width - 6) {
			graph_width = width * 3 / 8 - number_width - 6;
			if (graph_width < 6)
				graph_width = 6;
		}
		if (name_width > width - number_width - 6 - graph_width)
			name_width = width - number_width - 6 - graph_width;
		else
			graph_width = width - number_width - 6 - name_width;
	}
	for (size_t i = 0; i < n; i++) {
		const char *prefix = "", *name = fs[i].name;
		long len = name_width, name_len = strlen(name), padding, add, del;

		if (name_width < name_len) {
			const char *slash;
			prefix = "...";
			len -= 3;
			if (len < 0)
				len = 0;
			while (name_len > len)
				name++, name_len--;
			slash = strchr(name, '/');
			if (slash)
				name = slash;
		}
		padding = len - (long)strlen(name);
		if (padding < 0)
			padding = 0;
		if (fs[i].binary) {
			wap_sb_addf(sb, " %s%s%*s | %*s", prefix, name, (int)padding, "",
				    (int)number_width, "Bin");
			if (!fs[i].add && !fs[i].del) {
				wap_sb_addc(sb, '\n');
				continue;
			}
			wap_sb_addf(sb, " %zu -> %zu bytes\n", fs[i].del, fs[i].add);
			continue;
		}
		add = fs[i].add;
		del = fs[i].del;
		adds += add;
		dels += del;
		if (graph_width <= max_change) {
			int total = scale_linear(add + del, graph_width, max_change);
			if (total < 2 && add && del)
				total = 2;
			if (add < del) {
				add = scale_linear(add, graph_width, max_change);
				del = total - add;
			} else {
				del = scale_linear(del, graph_width, max_change);
				add = total - del;
			}
		}
		wap_sb_addf(sb, " %s%s%*s | %*zu%s", prefix, name, (int)padding, "",
			    (int)number_width, fs[i].add + fs[i].del, fs[i].add + fs[i].del ? " " : "");
		for (long k = 0; k < add; k++)
			wap_sb_addc(sb, '+');
		for (long k = 0; k < del; k++)
			wap_sb_addc(sb, '-');
		wap_sb_addc(sb, '\n');
	}
	wap_sb_addf(sb, n == 1 ? " %zu file changed" : " %zu files changed", n);
	if (adds || !dels)
		wap_sb_addf(sb, adds == 1 ? ", %ld insertion(+)" : ", %ld insertions(+)", adds);
	if (dels || !adds)
		wap_sb_addf(sb, dels == 1 ? ", %ld deletion(-)" : ", %ld deletions(-)", dels);
	wap_sb_addc(sb, '\n');
}

/* Size of one side of a delta: the blob's, else what the diff saw. */
static size_t side_size(struct g *g, const git_diff_file *f)
{
	git_blob *b = NULL;
	size_t n = f->size;

	if (!(f->flags & GIT_DIFF_FLAG_EXISTS))
		return 0;
	if (!git_oid_is_zero(&f->id) && !git_blob_lookup(&b, g->repo, &f->id)) {
		n = git_blob_rawsize(b);
		git_blob_free(b);
	}
	git_error_clear();
	return n;
}

/* Is repository path RP denied by restrictedPaths?  Diffs leave such files
 * out (they would print their contents), and say so. */
bool restricted_rp(struct g *g, const char *rp)
{
	struct wap_err e2 = { 0 };
	char *rel;
	bool bad;

	if (!g->ws->pol.restricted.n || !rp)
		return false;
	/* a repository without a work tree (bare) places its files nowhere:
	 * they are judged as if it were the root's, so a copy of the root's
	 * shows none of the root's restricted files */
	rel = g->wd_rel ? ws_path(g, rp) : strdup(rp);
	bad = !rel || wap_ws_check(g->ws, rel, WAP_ACC_READ, &e2) < 0;
	wap_err_release(&e2);
	free(rel);
	return bad;
}

/* A type change (file <-> symlink) comes from libgit2 as an added and a
 * deleted delta for one path, the added one first in some diffs; git
 * prints the deletion first and counts the pair as one file. */
static bool same_path_pair(git_diff *d, size_t i, size_t j, git_delta_t first, git_delta_t second)
{
	const git_diff_delta *a = git_diff_get_delta(d, i), *b = git_diff_get_delta(d, j);

	return a && b && a->status == first && b->status == second &&
	       !strcmp(a->new_file.path, b->old_file.path);
}

/* A work-tree file libgit2 took for binary from its attributes alone
 * (-diff, binary) has no id: it read none of it, and its printer writes
 * "index X..0000000" and "/dev/null" for the new side.  git hashes it (its
 * clean filters applied); so does this, as libgit2 itself sets the id of
 * a side it loads: a regular file, opened through the workspace (no link
 * followed, nothing restricted) and hashed through that descriptor.  Left
 * zero when it cannot be read. */
static void work_id(struct g *g, git_diff_delta *dd)
{
	struct wap_err e2 = { 0 };
	char *rel, fdpath[32];
	git_oid id;
	int fd, e;

	if (dd->new_file.mode != GIT_FILEMODE_BLOB && dd->new_file.mode != GIT_FILEMODE_BLOB_EXECUTABLE)
		return;
	if (!(rel = ws_path(g, dd->new_file.path)))
		return;
	fd = wap_ws_open(g->ws, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0, WAP_ACC_READ, &e2);
	wap_err_release(&e2);
	free(rel);
	if (fd < 0)
		return;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	e = git_repository_hashfile(&id, g->repo, fdpath, GIT_OBJECT_BLOB, dd->new_file.path);
	close(fd);
	if (e) {
		git_error_clear();
		return;
	}
	dd->new_file.id = id;
	dd->new_file.flags |= GIT_DIFF_FLAG_VALID_ID;
}

/* Does side F of a delta hold more than MAX lines?  libgit2's patch costs
 * some 190 bytes a line of both sides (xdiff's records, the patch's
 * lines), whatever the line's length: 8 MB of newlines, under the 8 x
 * maxFileSize a blob is diffed to, took 1.5 GB.  Only a side of more
 * bytes than MAX can have more lines: the blob is read from the store
 * (its size from the header first), a file of the work tree counted as
 * it streams by. */
static bool too_many_lines(struct g *g, const git_diff_file *f, size_t max)
{
	git_odb *odb = NULL;
	git_blob *b = NULL;
	git_object_t t;
	size_t sz = 0, lines = 0;
	bool stored = false, over = false;

	if (!(f->flags & GIT_DIFF_FLAG_EXISTS) ||
	    (f->mode != GIT_FILEMODE_BLOB && f->mode != GIT_FILEMODE_BLOB_EXECUTABLE))
		return false;
	if (!git_oid_is_zero(&f->id) && !git_repository_odb(&odb, g->repo)) {
		stored = !git_odb_read_header(&sz, &t, odb, &f->id);
		git_odb_free(odb);
	}
	git_error_clear();
	if (stored) {
		const char *p, *e;

		if (sz <= max || git_blob_lookup(&b, g->repo, &f->id)) {
			git_error_clear();
			return false;
		}
		p = git_blob_rawcontent(b);
		e = p + git_blob_rawsize(b);
		for (; p < e && lines <= max && (p = memchr(p, '\n', e - p)); p++)
			lines++;
		over = lines > max;
		git_blob_free(b);
		return over;
	}
	if ((size_t)f->size <= max)
		return false;
	{
		struct wap_err e2 = { 0 };
		char *rel = ws_path(g, f->path), buf[65536];
		ssize_t k;
		int fd;

		fd = rel ? wap_ws_open(g->ws, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0,
				       WAP_ACC_READ, &e2) : -1;
		wap_err_release(&e2);
		free(rel);
		if (fd < 0)
			return false;
		while (lines <= max && (k = read(fd, buf, sizeof(buf))) > 0)
			for (char *p = buf; (p = memchr(p, '\n', buf + k - p)); p++)
				lines++;
		close(fd);
	}
	return lines > max;
}

/* Fill R with "files" and "diff" (the text git would print: the patch,
 * or --stat, or --name-only). */
int diff_result(struct g *g, git_diff *d, json_t *r, bool stat, bool names)
{
	size_t n = git_diff_num_deltas(d), nf = 0;
	size_t *ord = malloc((n + 1) * sizeof(*ord));
	struct fst *fs = calloc(n + 1, sizeof(*fs));
	struct wap_sb sb = WAP_SB_INIT;
	json_t *files = json_array(), *hidden = json_array();
	size_t adds = 0, dels = 0, uncounted = 0;
	/* the text is held to maxFileSize, as a read is: past it, the
	 * files left are named without their patches (nor counts), so
	 * nothing more is made of them (a blob of 400 MB named by 25
	 * paths made 10 GB of text) */
	size_t cap = g->diff_cap ? g->diff_cap : g->ws->lim.max_file_size;
	bool cut = false;
	int rc = -1, e;

	if (!fs || !files || !hidden || !ord)
		goto out;
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	for (size_t i = 0; i + 1 < n; i++)
		if (same_path_pair(d, ord[i], ord[i + 1], GIT_DELTA_ADDED, GIT_DELTA_DELETED)) {
			size_t t = ord[i];
			ord[i] = ord[i + 1];
			ord[i + 1] = t;
			i++;
		}
	for (size_t k = 0; k < n; k++) {
		const git_diff_delta *dd = git_diff_get_delta(d, ord[k]);
		bool pair = k + 1 < n && same_path_pair(d, ord[k], ord[k + 1], GIT_DELTA_DELETED, GIT_DELTA_ADDED);
		size_t a = 0, dl = 0;
		bool binary = false;
		struct wap_sb nm = WAP_SB_INIT;
		json_t *f;

		if (restricted_rp(g, dd->old_file.path) || restricted_rp(g, dd->new_file.path)) {
			json_array_append_new(hidden, json_string(dd->new_file.path));
			k += pair;
			continue;
		}
		if (check_cancelled(g))
			goto out;
		if ((cut && !stat) || names) {
			/* --name-only makes no patch (git's neither): no counts */
			f = json_pack("{s:s, s:s, s:b}", "path", dd->new_file.path,
				      "status", pair ? "typechange" : status_word(dd->status), "counted", 0);
			if (names) {
				quote_c(&sb, dd->new_file.path);
				wap_sb_addc(&sb, '\n');
			}
			json_array_append_new(files, f);
			uncounted++;
			k += pair;
			continue;
		}
		for (size_t part = 0; part <= (size_t)pair; part++) {
			git_patch *p = NULL;
			const git_diff_delta *pd;
			size_t pa = 0, pdl = 0;

			/* past maxFileSize / 2 lines a side, binary as past its bytes */
			pd = git_diff_get_delta(d, ord[k + part]);
			if (!(pd->flags & GIT_DIFF_FLAG_BINARY) &&
			    (too_many_lines(g, &pd->old_file, cap / 2) ||
			     too_many_lines(g, &pd->new_file, cap / 2))) {
				git_diff_delta *w = (git_diff_delta *)pd;
				w->old_file.flags |= GIT_DIFF_FLAG_BINARY;
				w->new_file.flags |= GIT_DIFF_FLAG_BINARY;
				w->flags |= GIT_DIFF_FLAG_BINARY;
			}
			if ((e = git_patch_from_diff(&p, d, ord[k + part]))) {
				lg(g, e, "cannot compute the diff");
				goto out;
			}
			pd = p ? git_patch_get_delta(p) : git_diff_get_delta(d, ord[k + part]);
			if ((pd->flags & GIT_DIFF_FLAG_BINARY) && pd->status != GIT_DELTA_DELETED &&
			    !(pd->new_file.flags & GIT_DIFF_FLAG_VALID_ID) && git_oid_is_zero(&pd->new_file.id))
				work_id(g, (git_diff_delta *)pd);
			if (p)
				git_patch_line_stats(NULL, &pa, &pdl, p);
			if (pd->flags & GIT_DIFF_FLAG_BINARY) {
				binary = true;
				pa = pdl = 0;
				if (!git_oid_equal(&pd->old_file.id, &pd->new_file.id) ||
				    git_oid_is_zero(&pd->new_file.id)) {
					pa = side_size(g, &pd->new_file);
					pdl = side_size(g, &pd->old_file);
				}
			}
			a += pa;
			dl += pdl;
			if (!stat && !names && p &&
			    (e = git_patch_print(p, print_cb, &(struct pctx){ &sb, g,
					!git_patch_num_hunks(p) && !(pd->flags & GIT_DIFF_FLAG_BINARY),
					cap, &cut })) && !(e == GIT_EUSER && cut)) {
				git_patch_free(p);
				lg(g, e, "cannot print the diff");
				goto out;
			}
			git_patch_free(p);
		}
		if (!binary) {
			adds += a;
			dels += dl;
		}
		fs[nf].binary = binary;
		fs[nf].add = a;
		fs[nf].del = dl;
		if (dd->status == GIT_DELTA_RENAMED || dd->status == GIT_DELTA_COPIED)
			pprint_rename(&nm, dd->old_file.path, dd->new_file.path);
		else
			quote_c(&nm, dd->new_file.path);
		fs[nf].name = wap_sb_detach(&nm);
		if (!fs[nf].name)
			goto out;
		if (names) {
			quote_c(&sb, dd->new_file.path);
			wap_sb_addc(&sb, '\n');
		}
		f = json_pack("{s:s, s:s, s:i, s:i, s:b}", "path", dd->new_file.path,
			      "status", pair ? "typechange" : status_word(dd->status), "additions", (int)a,
			      "deletions", (int)dl, "binary", binary);
		if (dd->status == GIT_DELTA_RENAMED || dd->status == GIT_DELTA_COPIED) {
			int sim = git_similarity(g, &dd->old_file.id, &dd->new_file.id);
			json_object_set_new(f, "oldPath", json_string(dd->old_file.path));
			json_object_set_new(f, "similarity", json_integer(sim >= 0 ? sim : (int)dd->similarity));
		}
		json_array_append_new(files, f);
		nf++;
		k += pair;
	}
	if (stat)
		stat_text(&sb, fs, nf);
	if (sb.oom)
		goto out;
	json_object_set_new(r, "diff", json_stringn(sb.buf ? sb.buf : "", sb.len));
	json_object_set_new(r, "files", files);
	json_object_set_new(r, "additions", json_integer(adds));
	json_object_set_new(r, "deletions", json_integer(dels));
	if (json_array_size(hidden))
		json_object_set_new(r, "restricted", json_incref(hidden));
	if (cut) {
		json_object_set_new(r, "isTruncated", json_true());
		json_object_set_new(r, "maxBytes", json_integer(cap));
		json_object_set_new(r, "uncountedFiles", json_integer(uncounted));
	}
	files = NULL;
	rc = 0;
out:
	if (rc && !g->err->kind)
		wap_err_oom(g->err);
	for (size_t i = 0; fs && i < n; i++)
		free(fs[i].name);
	free(fs);
	free(ord);
	json_decref(files);
	json_decref(hidden);
	wap_sb_release(&sb);
	return rc;
}

int diff_opts(struct g *g, git_diff_options *o, struct strv *paths)
{
	long long ctx;
	int k;

	git_diff_options_init(o, GIT_DIFF_OPTIONS_VERSION);
	o->flags |= GIT_DIFF_INDENT_HEURISTIC;
	/* a blob past 8 times maxFileSize is diffed as binary (git's
	 * core.bigFileThreshold, 512 MiB there): a patch costs libgit2 some
	 * 190 bytes a line, 3 GB for 16 MB of newlines, and the text shown
	 * stops at maxFileSize anyway */
	o->max_size = (git_off_t)g->ws->lim.max_file_size * 8;
	if ((k = wap_req_int(g->req, "context", &ctx, g->err)) < 0)
		return -1;
	if (k) {
		if (ctx < 0 || ctx > 1000000)
			return wap_err_set(g->err, WAP_E_INVALID, "--context must be between 0 and 1000000");
		o->context_lines = ctx;
	}
	if (paths->n && !strv_has_root(paths))
		o->pathspec = strv_arr(paths);
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Is delta I (of status ST, its side F) one of a kind: no other such delta
 * has the same base name, and none on the other side (status OTHER) has
 * the same content (an exact rename, paired first)? */
static bool lone(git_diff *d, size_t n, size_t i, git_delta_t st, git_delta_t other)
{
	const git_diff_delta *di = git_diff_get_delta(d, i);
	const git_diff_file *f = st == GIT_DELTA_DELETED ? &di->old_file : &di->new_file;

	for (size_t j = 0; j < n; j++) {
		const git_diff_delta *dj = git_diff_get_delta(d, j);
		if (j != i && dj->status == st &&
		    !strcmp(base_name(f->path), base_name(st == GIT_DELTA_DELETED ? dj->old_file.path
										 : dj->new_file.path)))
			return false;
		if (dj->status == other && !git_oid_is_zero(&f->id) &&
		    git_oid_equal(&f->id, other == GIT_DELTA_DELETED ? &dj->old_file.id : &dj->new_file.id))
			return false;
	}
	return true;
}

int find_renames(struct g *g, git_diff *d)
{
	git_diff_find_options fo;
	size_t n = git_diff_num_deltas(d);
	struct rctx rc = { g, NULL, 0 };
	int e;

	git_diff_similarity_metric m = { sig_file, sig_buffer, sig_free, sig_similarity, &rc };

	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *src = git_diff_get_delta(d, i);
		if (src->status != GIT_DELTA_DELETED || !lone(d, n, i, GIT_DELTA_DELETED, GIT_DELTA_ADDED))
			continue;
		for (size_t j = 0; j < n; j++) {
			const git_diff_delta *dst = git_diff_get_delta(d, j);
			struct bpair *nv;
			if (dst->status != GIT_DELTA_ADDED ||
			    strcmp(base_name(src->old_file.path), base_name(dst->new_file.path)) ||
			    !lone(d, n, j, GIT_DELTA_ADDED, GIT_DELTA_DELETED) ||
			    git_similarity(g, &src->old_file.id, &dst->new_file.id) < 75)
				continue;
			if (!(nv = reallocarray(rc.v, rc.n + 1, sizeof(*nv)))) {
				free(rc.v);
				return wap_err_oom(g->err);
			}
			rc.v = nv;
			rc.v[rc.n++] = (struct bpair){ src->old_file.path, dst->new_file.path };
			break;
		}
	}

	git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION);

	fo.flags = GIT_DIFF_FIND_RENAMES;
	fo.metric = &m;
	fo.rename_limit = 1000;		/* git's diff.renameLimit */
	e = git_diff_find_similar(d, &fo);
	free(rc.v);
	if (e)
		return lg(g, e, "cannot detect renames");
	return 0;
}

static int rev_tree(struct g *g, const char *rev, git_tree **out)
{
	return resolve_rev(g, rev, GIT_OBJECT_TREE, (git_object **)out);
}

/* Does ARG name a revision (or a range of them)? */
static bool is_rev(struct g *g, const char *arg)
{
	git_revspec spec = { 0 };
	bool ok;

	if (arg[0] == '-' || !*arg)
		return false;
	/* a failed range leaves its left side set: free both always */
	ok = !git_revparse(&spec, g->repo, arg);
	if (ok && (spec.flags & GIT_REVSPEC_SINGLE) && spec.from) {
		/* kept for resolve_rev, which would parse it again */
		char *s = strdup(arg);
		if (s) {
			git_object_free(g->memo_obj);
			free(g->memo_rev);
			g->memo_rev = s;
			g->memo_obj = spec.from;
			spec.from = NULL;
		}
	}
	git_object_free(spec.from);
	git_object_free(spec.to);
	git_error_clear();
	return ok;
}

/* Split the positional arguments of diff/log into revisions and paths, as
 * git does: paths after "--"; before it, a revision if it parses as one,
 * else a path if it exists in the work tree. */
int split_revs_paths(struct g *g, struct strv *revs, struct strv *paths, int access)
{
	size_t i, dd = g->nargs;
	const char **after;

	for (i = 0; i < g->nargs; i++)
		if (!strcmp(g->args[i], "--")) {
			dd = i;
			break;
		}
	for (i = 0; i < dd; i++) {
		const char *a = g->args[i];
		char *rp = NULL;
		if (is_rev(g, a) || (strstr(a, "..") && a[0] != '.' && a[0] != '/' && !strstr(a, "/.."))) {
			if (strv_add(revs, strdup(a)))
				return wap_err_oom(g->err);
			continue;
		}
		if (g->wd_rel && a[0] != '-') {
			struct wap_err e2 = { 0 };
			char *rel = NULL;
			int fd = -1;
			if (wap_ws_rel(g->ws, a, strlen(a), &rel, &e2)) {
				/* not a revision, and a path outside the root */
				*g->err = e2;
				return -1;
			}
			fd = wap_ws_open(g->ws, rel, O_PATH | O_NOFOLLOW, 0, WAP_ACC_READ, &e2);
			free(rel);
			wap_err_release(&e2);
			if (fd >= 0) {
				close(fd);
				if (repo_path(g, a, access, &rp) || strv_add(paths, rp))
					return g->err->kind ? -1 : wap_err_oom(g->err);
				continue;
			}
		}
		return wap_err_set(g->err, WAP_E_INVALID,
				   "Unknown revision or path not in the working tree: '%s' (put paths after '--')", a);
	}
	after = dd < g->nargs ? g->args + dd + 1 : NULL;
	return collect_paths(g, after, after ? g->nargs - dd - 1 : 0, access, paths);
}

/* The paths (files, links, submodules) that differ between trees A and B
 * (either may be NULL), below PREFIX, into OUT: git's diff_tree, which
 * does not read a subtree whose id is the same on both sides. */
static int changed_paths(struct g *g, git_tree *a, git_tree *b, const char *prefix,
			 struct strv *out)
{
	git_tree *side[2] = { a, b };
	int e = 0;

	for (int s = 0; s < 2 && !e; s++) {
		git_tree *t = side[s], *other = side[!s];
		size_t n = t ? git_tree_entrycount(t) : 0;

		for (size_t i = 0; i < n && !e; i++) {
			const git_tree_entry *te = git_tree_entry_byindex(t, i), *oe;
			const char *name = git_tree_entry_name(te);
			git_tree *sub[2] = { NULL, NULL };
			bool tt, ot;
			char *path;

			oe = other ? git_tree_entry_byname(other, name) : NULL;
			if (oe && (s == 1 || (git_oid_equal(git_tree_entry_id(te), git_tree_entry_id(oe)) &&
					      git_tree_entry_filemode(te) == git_tree_entry_filemode(oe))))
				continue;	/* the same, or seen from A's side */
			if (asprintf(&path, "%s%s", prefix, name) < 0)
				return git_error_set_oom(), GIT_ERROR;
			tt = git_tree_entry_type(te) == GIT_OBJECT_TREE;
			ot = oe && git_tree_entry_type(oe) == GIT_OBJECT_TREE;
			if (tt || ot) {
				char *dir = NULL;
				if (tt)
					e = git_tree_lookup(&sub[s], g->repo, git_tree_entry_id(te));
				if (!e && ot)
					e = git_tree_lookup(&sub[!s], g->repo, git_tree_entry_id(oe));
				if (!e && asprintf(&dir, "%s/", path) < 0)
					e = GIT_ERROR, git_error_set_oom();
				if (!e)
					e = changed_paths(g, sub[0], sub[1], dir, out);
				free(dir);
				git_tree_free(sub[0]);
				git_tree_free(sub[1]);
			}
			if (!e && (!tt || (oe && !ot))) {
				if (strv_add(out, path))
					return git_error_set_oom(), GIT_ERROR;
			} else {
				free(path);
			}
		}
	}
	return e;
}

/* git_diff_tree_to_tree, looking only at the paths that changed (given
 * to libgit2's iterators as their list of paths): libgit2 reads every
 * tree of both sides, git only those that differ (a one-file show on jq:
 * 110 trees read, and 61 objects inflated, against git's 15). */
int tree_to_tree(struct g *g, git_diff **out, git_tree *a, git_tree *b, const git_diff_options *o)
{
	git_diff_options o2 = *o;
	struct strv ch = { 0 };
	int e;

	if (o->pathspec.count || (o->flags & (GIT_DIFF_INCLUDE_UNMODIFIED |
					      GIT_DIFF_DISABLE_PATHSPEC_MATCH)))
		return git_diff_tree_to_tree(out, g->repo, a, b, o);
	if ((e = changed_paths(g, a, b, "", &ch))) {
		strv_free(&ch);
		return e;
	}
	o2.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	o2.pathspec = strv_arr(&ch);
	/* nothing changed: no path at all, which an empty list is not */
	e = ch.n ? git_diff_tree_to_tree(out, g->repo, a, b, &o2)
		 : git_diff_tree_to_tree(out, g->repo, NULL, NULL, o);
	strv_free(&ch);
	return e;
}

/* Before a diff of two trees (diff A B, show): the repository gets an
 * empty index of its own.  git reads no index for these, so attributes
 * (a file's diff driver, -diff) come from the work tree's .gitattributes
 * alone; libgit2 would read the whole index (all of it hashed and mapped:
 * a tenth of a show on jq, 8 MB on Linux) and also take the attributes
 * staged there. */
int tree_diff_index(struct g *g)
{
	git_index *idx = NULL;
	int e;

	if ((e = git_index_new(&idx)) || (e = git_repository_set_index(g->repo, idx))) {
		git_index_free(idx);
		return lg(g, e, "cannot set up the diff");
	}
	git_index_free(idx);	/* the repository holds it */
	return 0;
}

/* git diff REV: libgit2's git_diff_tree_to_workdir_with_index (the tree
 * against the index, merged with the index against the work tree), but
 * the work tree is looked at only where the index's stat data says a file
 * may have changed (prestat.c), as git does, not walked whole; and the
 * files the index says are unchanged are read from the work tree, not
 * inflated (reuse.c). */
static int tree_to_workdir(struct g *g, git_tree *ta, git_diff_options *o, git_diff **out)
{
	git_diff_options o2 = *o;
	git_index *idx = NULL;
	git_diff *d2 = NULL;
	struct strv cand = { 0 };
	int e;

	if (o->pathspec.count)
		return git_diff_tree_to_workdir_with_index(out, g->repo, ta, o);
	if ((e = git_repository_index(&idx, g->repo)))
		return e;
	if (!wt_prestat(g, idx, false, &cand, NULL, NULL, NULL)) {
		git_index_free(idx);
		return git_diff_tree_to_workdir_with_index(out, g->repo, ta, o);
	}
	o2.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	o2.pathspec = strv_arr(&cand);
	e = git_diff_tree_to_index(out, g->repo, ta, idx, o);
	if (!e && cand.n && !(e = git_diff_index_to_workdir(&d2, g->repo, idx, &o2)))
		e = git_diff_merge(*out, d2);
	if (!e)
		wt_reuse(g, *out, idx, &cand);
	git_diff_free(d2);
	git_index_free(idx);
	strv_free(&cand);
	return e;
}

static int build_diff(struct g *g, struct strv *revs, struct strv *paths, bool staged, git_diff **out,
		      bool *empty)
{
	git_diff_options o;
	git_tree *ta = NULL, *tb = NULL;
	git_commit *head = NULL;
	int e = 0, rc = -1;

	*out = NULL;
	*empty = false;
	if (diff_opts(g, &o, paths))
		return -1;
	if (revs->n > 2)
		return wap_err_set(g->err, WAP_E_INVALID, "Too many revisions: give at most two");
	if (revs->n == 0) {
		if (!staged && need_workdir(g))
			return -1;
		if (staged) {
			if (head_commit(g, &head))
				return -1;
			if (head && (e = git_commit_tree(&ta, head)))
				goto lgfail;
			e = git_diff_tree_to_index(out, g->repo, ta, NULL, &o);
		} else {
			/* git's way (prestat.c): only the paths whose stat
			 * data changed are diffed; none: an empty diff */
			git_index *idx = NULL;
			struct strv cand = { 0 };
			if (!o.pathspec.count && wt_prestat(g, NULL, false, &cand, NULL, &idx, NULL)) {
				o.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
				o.pathspec = strv_arr(&cand);
				if (!cand.n)
					*empty = true;
			}
			/* the repository's index too: the attributes of
			 * the files diffed are read through it */
			if (idx && !*empty)
				e = git_repository_set_index(g->repo, idx);
			if (!e && !*empty)
				e = git_diff_index_to_workdir(out, g->repo, idx, &o);
			git_index_free(idx);
			strv_free(&cand);
			if (*empty)
				return 0;
		}
	} else if (revs->n == 1 && strstr(revs->v[0], "..")) {
		char *r = revs->v[0], *dots = strstr(r, ".."), *a, *b;
		bool three = dots[2] == '.';
		a = strndup(r, dots - r);
		b = strdup(dots + (three ? 3 : 2));
		if (!a || !b) {
			free(a), free(b);
			return wap_err_oom(g->err);
		}
		if (three) {
			git_commit *ca = NULL, *cb = NULL;
			git_oid base;
			if (!resolve_commit(g, *a ? a : "HEAD", &ca) && !resolve_commit(g, *b ? b : "HEAD", &cb)) {
				e = git_merge_base(&base, g->repo, git_commit_id(ca), git_commit_id(cb));
				if (e)
					lg(g, e, "no merge base of '%s' and '%s'", *a ? a : "HEAD", *b ? b : "HEAD");
				else {
					char h[GIT_OID_HEXSZ + 1];
					oid_hex(&base, h);
					if (!rev_tree(g, h, &ta))
						rev_tree(g, *b ? b : "HEAD", &tb);
				}
			}
			git_commit_free(ca);
			git_commit_free(cb);
		} else if (!rev_tree(g, *a ? a : "HEAD", &ta)) {
			rev_tree(g, *b ? b : "HEAD", &tb);
		}
		free(a);
		free(b);
		if (g->err->kind || tree_diff_index(g))
			goto out;
		e = tree_to_tree(g, out, ta, tb, &o);
	} else if (revs->n == 1) {
		if (rev_tree(g, revs->v[0], &ta))
			goto out;
		if (staged)
			e = git_diff_tree_to_index(out, g->repo, ta, NULL, &o);
		else if (!need_workdir(g))
			e = tree_to_workdir(g, ta, &o, out);
		else
			goto out;
	} else {
		if (rev_tree(g, revs->v[0], &ta) || rev_tree(g, revs->v[1], &tb) || tree_diff_index(g))
			goto out;
		e = tree_to_tree(g, out, ta, tb, &o);
	}
lgfail:
	if (e) {
		lg(g, e, "cannot compute the diff");
		goto out;
	}
	if (find_renames(g, *out))
		goto out;
	rc = 0;
out:
	if (rc) {
		git_diff_free(*out);
		*out = NULL;
	}
	git_commit_free(head);
	git_tree_free(ta);
	git_tree_free(tb);
	return rc;
}

int op_diff(struct g *g, json_t **res)
{
	struct strv revs = { 0 }, paths = { 0 };
	git_diff *d = NULL;
	json_t *r = NULL;
	bool empty;
	int rc = -1;

	if (split_revs_paths(g, &revs, &paths, WAP_ACC_READ))
		goto out;
	if (str_key(g, "rev") && strv_add(&revs, strdup(str_key(g, "rev")))) {
		wap_err_oom(g->err);
		goto out;
	}
	if (build_diff(g, &revs, &paths, bool_key(g, "staged"), &d, &empty))
		goto out;
	r = json_object();
	if (empty) {
		json_object_set_new(r, "diff", json_string(""));
		json_object_set_new(r, "files", json_array());
		json_object_set_new(r, "additions", json_integer(0));
		json_object_set_new(r, "deletions", json_integer(0));
	} else if (diff_result(g, d, r, bool_key(g, "stat"), bool_key(g, "name_only"))) {
		goto out;
	}
	*res = r;
	r = NULL;
	rc = 0;
out:
	json_decref(r);
	git_diff_free(d);
	strv_free(&revs);
	strv_free(&paths);
	return rc;
}
