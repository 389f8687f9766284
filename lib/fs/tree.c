/* fs/tree.c - directory trees walked by fd: policy scan, remove, copy. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cancel.h"
#include "file.h"
#include "path.h"
#include "strbuf.h"
#include "tree.h"

static pthread_rwlock_t tree_lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static __thread int held, held_alone;	/* this thread's count, and how */

int wap_tree_lock(bool alone, const struct wap_cancel *cancel, struct wap_err *err)
{
	struct timespec ts;
	int r;

	if (held) {
		if (alone && !held_alone)
			return wap_err_set(err, WAP_E_INVALID,
					   "the tree lock is held shared by this call");
		held++;
		return 0;
	}
	/* (writers first: a tree's move waits for the writes under way,
	 * and the writes after it wait for the move) */
	do {
		if (wap_cancel_is_set(cancel))
			return wap_cancel_err(err);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		r = alone ? pthread_rwlock_timedwrlock(&tree_lock, &ts)
			  : pthread_rwlock_timedrdlock(&tree_lock, &ts);
	} while (r == ETIMEDOUT);
	if (r)
		return wap_err_errno(err, r, "the tree lock");
	held = 1;
	held_alone = alone;
	return 0;
}

bool wap_tree_let_go(void)
{
	if (held != 1 || held_alone)
		return false;
	wap_tree_unlock();
	return true;
}

void wap_tree_unlock(void)
{
	if (held && !--held)
		pthread_rwlock_unlock(&tree_lock);
}

static int too_deep(struct wap_err *err, const char *rel)
{
	return wap_err_set(err, WAP_E_INVALID, "Too deeply nested (over %d levels): %s",
			   WAP_TREE_MAX_DEPTH, rel);
}

/* Call FN for each entry of the directory open as FD (consumed) at REL,
 * with the entry's name and its path REL/NAME, until one fails or the
 * call is cancelled: the walk that checking, removing and copying a tree
 * share (a million files take a minute; the caller may have gone). */
typedef int (*child_fn)(int dfd, const char *name, const char *sub, void *arg,
			struct wap_err *err);

static int each_child(int fd, const char *rel, child_fn fn, void *arg, struct wap_err *err)
{
	struct dirent *de;
	DIR *d = fdopendir(fd);
	int rc = 0;

	if (!d) {
		int e = errno;
		close(fd);
		return wap_err_errno(err, e, rel);
	}
	while (!rc && (de = readdir(d))) {
		char *sub;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (wap_cancel_is_set(wap_cancel_current())) {
			rc = wap_cancel_err(err);
			break;
		}
		sub = wap_path_join(rel, de->d_name);
		rc = sub ? fn(dirfd(d), de->d_name, sub, arg, err) : wap_err_oom(err);
		free(sub);
	}
	closedir(d);
	return rc;
}

struct check_ctx {
	const struct wap_ws *ws;
	int access, depth;
};

static int check_rec(const struct wap_ws *ws, int parent, const char *name, const char *rel,
		     int access, int depth, struct wap_err *err);

static int check_child(int dfd, const char *name, const char *sub, void *arg,
		       struct wap_err *err)
{
	const struct check_ctx *x = arg;

	return check_rec(x->ws, dfd, name, sub, x->access, x->depth + 1, err);
}

static int check_rec(const struct wap_ws *ws, int parent, const char *name, const char *rel,
		     int access, int depth, struct wap_err *err)
{
	struct check_ctx x = { ws, access, depth };
	struct stat st;
	int fd;

	if (wap_ws_check(ws, rel, access, err))
		return -1;
	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
		return 0;
	if (depth >= WAP_TREE_MAX_DEPTH)
		return too_deep(err, rel);
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return wap_err_errno(err, errno, rel);
	return each_child(fd, rel, check_child, &x, err);
}

/* The tree at NAME in PARENT judged again under where WNAME in WHEREFD
 * really is, when a symlink on the way makes that other than REL: with
 * a glob denying the .key files anywhere under conf and lnk -> conf, lnk/sub/a.key is
 * conf/sub/a.key, which no glob sees in the name asked. */
static int check_real(const struct wap_ws *ws, int parent, const char *name, const char *rel,
		      int wherefd, const char *wname, int access, struct wap_err *err)
{
	char *real = wap_ws_real_at(ws, wherefd, wname);
	int rc = 0;

	if (!real)
		return wap_err_set(err, WAP_E_ACCESS,
			"Access denied: cannot tell where %s really is (not beneath the root, or its path is too long) to check the policy",
			rel);
	if (strcmp(real, rel))
		rc = check_rec(ws, parent, name, real, access, 0, err);
	free(real);
	return rc;
}

int wap_tree_check(const struct wap_ws *ws, int parent, const char *name, const char *rel,
		   int access, struct wap_err *err)
{
	if (check_rec(ws, parent, name, rel, access, 0, err))
		return -1;
	return check_real(ws, parent, name, rel, parent, name, access, err);
}

int wap_tree_check_fd(const struct wap_ws *ws, int dirfd, const char *rel, int access,
		      struct wap_err *err)
{
	/* "." in DIRFD is the directory itself, at REL */
	if (check_rec(ws, dirfd, ".", rel, access, 0, err))
		return -1;
	return check_real(ws, dirfd, ".", rel, dirfd, NULL, access, err);
}

int wap_tree_check_dest(const struct wap_ws *ws, int parent, const char *name, const char *drel,
			int dparent, const char *dname, int access, struct wap_err *err)
{
	if (dparent < 0)
		return check_rec(ws, parent, name, drel, access, 0, err);
	return check_real(ws, parent, name, drel, dparent, dname, access, err);
}

struct remove_ctx {
	size_t *count;
	int depth;
};

static int remove_rec(int parent, const char *name, const char *rel, size_t *count, int depth,
		      struct wap_err *err);

static int remove_child(int dfd, const char *name, const char *sub, void *arg,
			struct wap_err *err)
{
	const struct remove_ctx *x = arg;

	return remove_rec(dfd, name, sub, x->count, x->depth + 1, err);
}

static int remove_rec(int parent, const char *name, const char *rel, size_t *count, int depth,
		      struct wap_err *err)
{
	struct remove_ctx x = { count, depth };
	int fd, rc;

	if (unlinkat(parent, name, 0) == 0) {
		(*count)++;
		return 0;
	}
	if (errno != EISDIR && errno != EPERM)
		return wap_err_errno(err, errno, rel);
	/* a directory (unlink says EISDIR, or EPERM on some systems) */
	if (depth >= WAP_TREE_MAX_DEPTH)
		return too_deep(err, rel);
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return wap_err_errno(err, errno == ENOTDIR ? EPERM : errno, rel);
	rc = each_child(fd, rel, remove_child, &x, err);
	if (rc)
		return rc;
	if (unlinkat(parent, name, AT_REMOVEDIR))
		return wap_err_errno(err, errno, rel);
	(*count)++;
	return 0;
}

int wap_tree_remove(int parent, const char *name, const char *rel, size_t *count,
		    struct wap_err *err)
{
	size_t n = 0;
	int rc = remove_rec(parent, name, rel, &n, 0, err);

	if (count)
		*count = n;
	return rc;
}

static int tmp_name(char *buf, size_t n, int tries)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return snprintf(buf, n, ".wap-%08x.tmp",
			(unsigned)(ts.tv_nsec ^ (getpid() << 8) ^ (tries * 7919)));
}

/* Rename the temp TMP to NAME in DIR, replacing only when FORCE. */
static int put_in_place(int dir, const char *tmp, const char *name, bool force, const char *drel,
			struct wap_err *err)
{
	struct stat st;
	int r, e;

	/* --force replaces a file, never a read-only one (no write bit):
	 * root would pass any EACCES check, so the mode is looked at here */
	if (force && fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    wap_check_writable(&st, drel, "remove it first (wap rm) to replace it", err)) {
		unlinkat(dir, tmp, 0);
		return -1;
	}
	r = force ? renameat(dir, tmp, dir, name)
		  : renameat2(dir, tmp, dir, name, RENAME_NOREPLACE);
	e = errno;
	if (!r)
		return 0;
	unlinkat(dir, tmp, 0);
	if (e == EEXIST)
		return wap_err_set(err, WAP_E_EXISTS, "Already exists: %s (use --force to replace it)", drel);
	return wap_err_errno(err, e, drel);
}

/* Copy LEN bytes at offset FROM of SFD to offset TO of FD: in the kernel
 * where it can, else through a 64 KiB buffer.  Memory stays bounded
 * whatever the size. */
static int copy_range(int sfd, off_t from, int fd, off_t to, off_t len, char **buf)
{
	bool plain = false;

	while (len > 0) {
		ssize_t r, w;
		if (wap_cancel_is_set(wap_cancel_current())) {
			errno = ECANCELED;	/* (a 64 MiB piece at a time) */
			return -1;
		}
		if (!plain) {
			r = copy_file_range(sfd, &from, fd, &to, len > (64 << 20) ? (64 << 20) : (size_t)len, 0);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
				      errno == EOPNOTSUPP || errno == EBADF)) {
				plain = true;	/* not supported here: read/write */
				continue;
			}
			if (r < 0)
				return -1;
			if (r == 0)
				return 0;	/* the file shrank meanwhile */
			len -= r;
			continue;
		}
		if (!*buf && !(*buf = malloc(65536))) {
			errno = ENOMEM;
			return -1;
		}
		r = pread(sfd, *buf, len > 65536 ? 65536 : (size_t)len, from);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r;
		for (ssize_t done = 0; done < r; done += w) {
			w = pwrite(fd, *buf + done, r - done, to + done);
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w < 0)
				return -1;
		}
		from += r;
		to += r;
		len -= r;
	}
	return 0;
}

/* Copy SFD from its current offset to its end into FD.  Only the data
 * extents are copied (SEEK_DATA/SEEK_HOLE) and the size set with
 * ftruncate, so the holes of a sparse file stay holes: a 10 GB sparse
 * image copies in a moment and takes no more disk than the original. */
static int copy_bytes(int sfd, int fd, unsigned long long *total)
{
	off_t start = lseek(sfd, 0, SEEK_CUR), data, hole, end;
	struct stat st;
	char *buf = NULL;
	int rc = -1, e;

	if (start < 0 || fstat(sfd, &st))
		return -1;
	end = st.st_size;
	for (data = start; data < end; data = hole) {
		data = lseek(sfd, data, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;		/* only a hole is left */
		if (data < 0 && (errno == EINVAL || errno == EOPNOTSUPP))
			data = start;	/* no SEEK_DATA here: all of it */
		else if (data < 0)
			goto out;
		hole = lseek(sfd, data, SEEK_HOLE);
		if (hole < 0 || hole > end)
			hole = end;
		if (copy_range(sfd, data, fd, data - start, hole - data, &buf))
			goto out;
	}
	if (ftruncate(fd, end > start ? end - start : 0))
		goto out;
	*total += end > start ? end - start : 0;
	rc = 0;
out:
	e = errno;
	free(buf);
	errno = e;
	return rc;
}

/* The copy's mode: the source's, but a set-user-ID (set-group-ID) bit only
 * where the copy has the source's owner (group), as cp(1) keeps them: wap
 * as root would otherwise make another user's set-ID program one of root. */
static mode_t copy_mode(int sfd, int fd, mode_t mode)
{
	struct stat s, d;

	mode &= 07777;
	if (fstat(sfd, &s) || fstat(fd, &d))
		return mode & ~(mode_t)(S_ISUID | S_ISGID);
	if (s.st_uid != d.st_uid)
		mode &= ~(mode_t)S_ISUID;
	if (s.st_gid != d.st_gid)
		mode &= ~(mode_t)S_ISGID;
	return mode;
}

/* The copy is written unnamed (O_TMPFILE) where the file system allows, so
 * a copy killed midway leaves nothing; then it is named and renamed into
 * place. */
int wap_copy_file(int sfd, int dparent, const char *dname, mode_t mode, bool force, bool sync,
		  const char *drel, unsigned long long *bytes, struct wap_err *err)
{
	char tmp[NAME_MAX + 1], proc[64];
	unsigned long long total = 0;
	off_t start = lseek(sfd, 0, SEEK_CUR);
	bool named = false;
	int fd, e, tries;

	fd = openat(dparent, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0) {
		for (tries = 0; fd < 0; tries++) {
			tmp_name(tmp, sizeof(tmp), tries);
			fd = openat(dparent, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0 && (errno != EEXIST || tries > 100))
				return wap_err_errno(err, errno, drel);
		}
		named = true;
	}
	if (copy_bytes(sfd, fd, &total) || fchmod(fd, copy_mode(sfd, fd, mode)) || (sync && fsync(fd)))
		goto fail;
	if (!named) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		for (tries = 0; !named && tries <= 100; tries++) {
			tmp_name(tmp, sizeof(tmp), tries);
			if (linkat(AT_FDCWD, proc, dparent, tmp, AT_SYMLINK_FOLLOW) == 0)
				named = true;
			else if (errno != EEXIST)
				break;
		}
		if (!named) {
			/* no /proc to name it by: again, the named way */
			close(fd);
			fd = -1;
			for (tries = 0; fd < 0; tries++) {
				tmp_name(tmp, sizeof(tmp), tries);
				fd = openat(dparent, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
				if (fd < 0 && (errno != EEXIST || tries > 100))
					return wap_err_errno(err, errno, drel);
			}
			named = true;
			total = 0;
			if (start < 0 || lseek(sfd, start, SEEK_SET) < 0 || copy_bytes(sfd, fd, &total) ||
			    fchmod(fd, copy_mode(sfd, fd, mode)) || (sync && fsync(fd)))
				goto fail;
		}
	}
	if (close(fd)) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (put_in_place(dparent, tmp, dname, force, drel, err))
		return -1;
	if (sync)
		fsync(dparent);
	if (bytes)
		*bytes += total;
	return 0;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	if (named)
		unlinkat(dparent, tmp, 0);
	return wap_err_errno(err, e, drel);
}

static int copy_link(int sparent, const char *sname, int dparent, const char *dname, bool force,
		     const char *srel, const char *drel, struct wap_err *err)
{
	char target[PATH_MAX], tmp[NAME_MAX + 1];
	ssize_t n = readlinkat(sparent, sname, target, sizeof(target) - 1);
	int tries = 0;

	if (n < 0)
		return wap_err_errno(err, errno, srel);
	target[n] = 0;
	/* the link itself is copied; it is never followed, here or later
	 * (every open is confined beneath the root) */
	if (!force) {
		if (symlinkat(target, dparent, dname) == 0)
			return 0;
		if (errno == EEXIST)
			return wap_err_set(err, WAP_E_EXISTS, "Already exists: %s (use --force to replace it)", drel);
		return wap_err_errno(err, errno, drel);
	}
	do
		tmp_name(tmp, sizeof(tmp), tries);
	while (symlinkat(target, dparent, tmp) && errno == EEXIST && ++tries < 100);
	if (tries >= 100)
		return wap_err_errno(err, EEXIST, drel);
	return put_in_place(dparent, tmp, dname, true, drel, err);
}

static int copy_rec(int sparent, const char *sname, int dparent, const char *dname, bool force,
		    const char *srel, const char *drel, struct wap_copy_stats *cs, int depth,
		    struct wap_err *err);

struct copy_ctx {
	int dfd;
	bool force;
	const char *drel;
	struct wap_copy_stats *cs;
	int depth;
};

static int copy_child(int sdfd, const char *name, const char *sub, void *arg,
		      struct wap_err *err)
{
	const struct copy_ctx *x = arg;
	char *t = wap_path_join(x->drel, name);
	int rc = t ? copy_rec(sdfd, name, x->dfd, name, x->force, sub, t, x->cs, x->depth + 1, err)
		   : wap_err_oom(err);

	free(t);
	return rc;
}

/* Copy the directory open as SFD (consumed) to DNAME in DPARENT. */
static int copy_dir(int sfd, const struct stat *st, int dparent, const char *dname, bool force,
		    const char *srel, const char *drel, struct wap_copy_stats *cs, int depth,
		    struct wap_err *err)
{
	struct copy_ctx x = { -1, force, drel, cs, depth };
	struct stat dst;
	int dfd, rc = 0;

	if (depth >= WAP_TREE_MAX_DEPTH) {
		close(sfd);
		return too_deep(err, srel);
	}
	if (mkdirat(dparent, dname, 0700)) {
		int e = errno;
		if (e != EEXIST)
			rc = wap_err_errno(err, e, drel);
		else if (!force)
			rc = wap_err_set(err, WAP_E_EXISTS, "Already exists: %s (use --force to merge into it)", drel);
		else if (fstatat(dparent, dname, &dst, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(dst.st_mode))
			rc = wap_err_set(err, WAP_E_NOT_DIR, "Not a directory: %s", drel);
		if (rc) {
			close(sfd);
			return rc;
		}
	}
	dfd = openat(dparent, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		close(sfd);
		return wap_err_errno(err, errno, drel);
	}
	cs->dirs++;
	x.dfd = dfd;
	rc = each_child(sfd, srel, copy_child, &x, err);
	/* the mode last, so a read-only directory could be filled */
	if (!rc && fchmod(dfd, st->st_mode & 07777))
		rc = wap_err_errno(err, errno, drel);
	close(dfd);
	return rc;
}

static int copy_rec(int sparent, const char *sname, int dparent, const char *dname, bool force,
		    const char *srel, const char *drel, struct wap_copy_stats *cs, int depth,
		    struct wap_err *err)
{
	struct stat st;
	int sfd, rc;

	if (fstatat(sparent, sname, &st, AT_SYMLINK_NOFOLLOW))
		return wap_err_errno(err, errno, srel);
	if (S_ISLNK(st.st_mode)) {
		if (copy_link(sparent, sname, dparent, dname, force, srel, drel, err))
			return -1;
		cs->links++;
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		/* O_NONBLOCK, and what was opened looked at again: a FIFO
		 * renamed over the file since the fstatat would hold a plain
		 * open, and the call, for good */
		sfd = openat(sparent, sname, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (sfd < 0)
			return wap_err_errno(err, errno, srel);
		if (fstat(sfd, &st) || !S_ISREG(st.st_mode)) {
			close(sfd);
			cs->skipped++;	/* no longer a file: as a FIFO is */
			return 0;
		}
		rc = wap_copy_file(sfd, dparent, dname, st.st_mode, force, false, drel, &cs->bytes, err);
		close(sfd);
		if (!rc)
			cs->files++;
		return rc;
	}
	if (!S_ISDIR(st.st_mode)) {
		cs->skipped++;	/* fifos, sockets, devices are not copied */
		return 0;
	}
	sfd = openat(sparent, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return wap_err_errno(err, errno, srel);
	return copy_dir(sfd, &st, dparent, dname, force, srel, drel, cs, depth, err);
}

int wap_tree_copy_fd(int sfd, int dparent, const char *dname, bool force, const char *srel,
		     const char *drel, struct wap_copy_stats *cs, struct wap_err *err)
{
	struct wap_copy_stats tmp;
	struct stat st;
	int fd, rc;

	memset(&tmp, 0, sizeof(tmp));
	if (!cs)
		cs = &tmp;
	if (fstat(sfd, &st))
		return wap_err_errno(err, errno, srel);
	if (S_ISREG(st.st_mode)) {
		if (lseek(sfd, 0, SEEK_SET) < 0)
			return wap_err_errno(err, errno, srel);
		rc = wap_copy_file(sfd, dparent, dname, st.st_mode, force, true, drel, &cs->bytes, err);
		cs->files += !rc;
		return rc;
	}
	if (!S_ISDIR(st.st_mode))
		return wap_err_set(err, WAP_E_NOT_FILE, "Not a regular file: %s", srel);
	fd = openat(sfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return wap_err_errno(err, errno, srel);
	rc = copy_dir(fd, &st, dparent, dname, force, srel, drel, cs, 0, err);
	if (!rc)
		fsync(dparent);
	return rc;
}

int wap_tree_dest(const struct wap_ws *ws, const char *srel, const char *drel, char **out,
		  struct wap_err *err)
{
	struct wap_err tmp = { 0 };
	const char *base = strrchr(srel, '/');
	struct wap_sb sb = WAP_SB_INIT;
	int fd, rc;

	*out = NULL;
	fd = wap_ws_open(ws, drel, O_PATH | O_DIRECTORY, 0, WAP_ACC_WRITE, &tmp);
	if (fd < 0) {
		if (tmp.kind == WAP_E_NOT_FOUND || tmp.kind == WAP_E_NOT_DIR) {
			wap_err_release(&tmp);
			*out = strdup(drel);
			return *out ? 0 : wap_err_oom(err);
		}
		if (err)
			*err = tmp;
		else
			wap_err_release(&tmp);
		return -1;
	}
	close(fd);
	/* an existing directory: the source goes into it */
	base = base ? base + 1 : srel;
	wap_path_add(&sb, drel, base);
	if (sb.oom || !sb.buf) {
		wap_sb_release(&sb);
		return wap_err_oom(err);
	}
	rc = wap_ws_rel(ws, sb.buf, sb.len, out, err);
	wap_sb_release(&sb);
	return rc;
}

bool wap_tree_within(int dirfd, dev_t dev, ino_t ino, int rootfd)
{
	struct stat st, root;
	int fd, steps = 0;
	bool inside = false;

	if (fstat(rootfd, &root))
		return false;
	fd = dup(dirfd);
	while (fd >= 0 && steps++ < 4096) {
		int up;
		if (fstat(fd, &st))
			break;
		if (st.st_dev == dev && st.st_ino == ino) {
			inside = true;
			break;
		}
		if (st.st_dev == root.st_dev && st.st_ino == root.st_ino)
			break;
		up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = up;
	}
	if (fd >= 0)
		close(fd);
	return inside;
}
