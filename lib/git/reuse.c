/* git/reuse.c - the new side of a diff against the work tree read from the
 * work tree file, not inflated from the packs, where the index says that
 * file is the blob (git's reuse_worktree_file in diff.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "ws.h"

/* One blob the work tree holds: its id, its work-tree path (root-relative),
 * and the stat data the index has for it. */
struct rblob {
	git_oid id;
	char *rel;
	git_index_entry e;
};

struct rbackend {
	git_odb_backend parent;
	const struct wap_ws *ws;
	struct rblob *v;
	size_t n;
};

static int rblob_cmp(const void *a, const void *b)
{
	return git_oid_cmp(&((const struct rblob *)a)->id, &((const struct rblob *)b)->id);
}

/* FD's file is still the one index entry E describes (the test git and
 * libgit2 make of the stat data). */
static bool same_stat(int fd, const git_index_entry *e)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISREG(st.st_mode) && e->file_size == (uint32_t)st.st_size &&
	       (uint64_t)st.st_size == (uint32_t)st.st_size &&
	       e->mtime.seconds == (int32_t)st.st_mtim.tv_sec && e->ctime.seconds == (int32_t)st.st_ctim.tv_sec &&
	       (!e->mtime.nanoseconds || e->mtime.nanoseconds == (uint32_t)st.st_mtim.tv_nsec) &&
	       (!e->ctime.nanoseconds || e->ctime.nanoseconds == (uint32_t)st.st_ctim.tv_nsec) &&
	       e->ino == (uint32_t)st.st_ino && e->dev == (uint32_t)st.st_dev;
}

/* A file that cannot be read as the blob it should be (changed since,
 * denied by the policy) is left to the packs: GIT_PASSTHROUGH. */
static int rb_read(void **out, size_t *len, git_object_t *type, git_odb_backend *be, const git_oid *id)
{
	struct rbackend *rb = (struct rbackend *)be;
	struct rblob key = { .id = *id }, *b = bsearch(&key, rb->v, rb->n, sizeof(*rb->v), rblob_cmp);
	struct wap_err e2 = { 0 };
	size_t got = 0, sz;
	char *buf = NULL;
	int fd;

	if (!b)
		return GIT_PASSTHROUGH;
	fd = wap_ws_open(rb->ws, b->rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0, WAP_ACC_READ, &e2);
	wap_err_release(&e2);
	if (fd < 0)
		return GIT_PASSTHROUGH;
	sz = b->e.file_size;
	if (!same_stat(fd, &b->e) || !(buf = git_odb_backend_data_alloc(be, sz + 1)))
		goto pass;
	while (got < sz) {
		ssize_t r = read(fd, buf + got, sz - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			goto pass;
		got += r;
	}
	/* still the same file: its size, times and inode those the index
	 * says, after the read as before it (a write in between changes the
	 * times; a longer file, its size) */
	if (!same_stat(fd, &b->e) || memchr(buf, '\r', sz))
		goto pass;
	close(fd);
	*out = buf;
	*len = sz;
	*type = GIT_OBJECT_BLOB;
	return 0;
pass:
	git_odb_backend_data_free(be, buf);
	close(fd);
	return GIT_PASSTHROUGH;
}

static void rb_free(git_odb_backend *be)
{
	struct rbackend *rb = (struct rbackend *)be;

	for (size_t i = 0; i < rb->n; i++)
		free(rb->v[i].rel);
	free(rb->v);
	free(rb);
}

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is the work tree's file at P its blob, byte for byte, when the index
 * says it is unchanged?  Not when a filter stands between the two (git's
 * would_convert_to_git): a filter driver, a working-tree-encoding (git
 * runs them, libgit2 does not: its diff shows the blob), ident.  CRLF
 * conversion (text, eol, core.autocrlf) only takes CRs out: the file read
 * must hold none (rb_read). */
static bool plain_file(struct g *g, const char *p)
{
	static const char *names[] = { "filter", "working-tree-encoding", "ident" };
	const char *v[3] = { NULL, NULL, NULL };

	if (git_attr_get_many(v, g->repo, 0, p, 3, names)) {
		git_error_clear();
		return false;
	}
	for (int i = 0; i < 3; i++)
		if (GIT_ATTR_IS_TRUE(v[i]) || GIT_ATTR_HAS_VALUE(v[i]))
			return false;
	return true;
}

/* Diff D's new sides (a diff against the work tree through index IDX)
 * whose work-tree file the index says is their blob: not among CAND (the
 * sorted paths prestat.c found changed or racily clean), the index's blob,
 * a regular file, with no filter between the work tree and the object
 * store that could change it (plain_file): libgit2 reads them from the work tree, through a store of its own put
 * before the packs.  Nothing is made when no side qualifies; errors leave
 * the packs to serve them all. */
void wt_reuse(struct g *g, git_diff *d, git_index *idx, const struct strv *cand)
{
	size_t n = git_diff_num_deltas(d);
	struct rbackend *rb = NULL;
	git_odb *odb = NULL;

	if (!g->wd_rel || !n || !(rb = calloc(1, sizeof(*rb))) || !(rb->v = calloc(n, sizeof(*rb->v))))
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *dd = git_diff_get_delta(d, i);
		const git_diff_file *f = &dd->new_file;
		const git_index_entry *e;
		const char *p = f->path;

		if ((f->mode != GIT_FILEMODE_BLOB && f->mode != GIT_FILEMODE_BLOB_EXECUTABLE) ||
		    !(f->flags & GIT_DIFF_FLAG_VALID_ID) || git_oid_is_zero(&f->id) ||
		    (cand->n && bsearch(&p, cand->v, cand->n, sizeof(*cand->v), path_cmp)) ||
		    !(e = git_index_get_bypath(idx, p, 0)) || !git_oid_equal(&e->id, &f->id) ||
		    (e->flags_extended & (GIT_INDEX_ENTRY_SKIP_WORKTREE | GIT_INDEX_ENTRY_INTENT_TO_ADD)) ||
		    (e->flags & GIT_INDEX_ENTRY_VALID))
			continue;
		if (!plain_file(g, p))
			continue;
		if (!(rb->v[rb->n].rel = ws_path(g, p)))
			goto fail;
		rb->v[rb->n].id = f->id;
		rb->v[rb->n].e = *e;
		rb->v[rb->n].e.path = NULL;
		rb->n++;
	}
	if (!rb->n)
		goto fail;
	qsort(rb->v, rb->n, sizeof(*rb->v), rblob_cmp);
	if (git_odb_init_backend(&rb->parent, GIT_ODB_BACKEND_VERSION))
		goto fail;
	rb->ws = g->ws;
	rb->parent.read = rb_read;
	rb->parent.free = rb_free;
	if (git_repository_odb(&odb, g->repo) || git_odb_add_backend(odb, &rb->parent, 1000))
		goto fail;
	git_odb_free(odb);	/* the store owns RB now */
	return;
fail:
	git_odb_free(odb);
	git_error_clear();
	if (rb) {
		for (size_t i = 0; rb->v && i < rb->n; i++)
			free(rb->v[i].rel);
		free(rb->v);
	}
	free(rb);
}
