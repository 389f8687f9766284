/* fs/file.c - whole-file reads, blob-id versions, atomic locked writes. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/sha1.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cancel.h"
#include "file.h"
#include "strbuf.h"

/* A git blob id: SHA-1 of "blob SIZE\0" and the bytes.  Nettle's SHA-1,
 * not libgit2's: every read and write makes one, and libgit2 costs a
 * millisecond and a half of start-up that read and write need not pay. */
static void blob_begin(struct sha1_ctx *c, size_t len)
{
	char hdr[32], *p = hdr + sizeof(hdr);

	*--p = 0;
	do
		*--p = (char)('0' + len % 10);
	while (len /= 10);
	p -= 5;
	memcpy(p, "blob ", 5);
	sha1_init(c);
	sha1_update(c, (size_t)(hdr + sizeof(hdr) - p), (const uint8_t *)p);
}

static void blob_end(struct sha1_ctx *c, char out[WAP_VERSION_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t d[SHA1_DIGEST_SIZE];

	sha1_digest(c, sizeof(d), d);
	for (int i = 0; i < SHA1_DIGEST_SIZE; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[WAP_VERSION_LEN] = 0;
}

int wap_blob_id(const void *buf, size_t len, char out[WAP_VERSION_LEN + 1], struct wap_err *err)
{
	struct sha1_ctx c;

	(void)err;
	blob_begin(&c, len);
	sha1_update(&c, len, buf);
	blob_end(&c, out);
	return 0;
}

int wap_blob_id_fd(int fd, char out[WAP_VERSION_LEN + 1], struct wap_err *err)
{
	uint8_t buf[1 << 16];

	/* the size goes first into the hash: a file that changes size while
	 * being read is read again */
	for (int tries = 0; tries < 3; tries++) {
		struct sha1_ctx c;
		struct stat st;
		off_t at = 0;
		ssize_t r;

		if (fstat(fd, &st))
			return wap_err_set(err, WAP_E_FAILED, "stat: %s", strerror(errno));
		blob_begin(&c, (size_t)st.st_size);
		while ((r = pread(fd, buf, sizeof(buf), at)) != 0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return wap_err_set(err, WAP_E_FAILED, "read: %s", strerror(errno));
			sha1_update(&c, (size_t)r, buf);
			at += r;
			if (at > st.st_size)
				break;
		}
		if (at == st.st_size) {
			blob_end(&c, out);
			return 0;
		}
	}
	return wap_err_set(err, WAP_E_CONFLICT, "the file kept changing while it was read");
}

FILE *wap_open_record(const char *file, bool append)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
		      (append ? O_APPEND : 0), 0600);
	struct stat st;
	FILE *f;
	int e;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = ENXIO;
		return NULL;
	}
	/* emptied only once known to be a file */
	if ((!append && ftruncate(fd, 0)) || fcntl(fd, F_SETFL, append ? O_APPEND : 0) ||
	    !(f = fdopen(fd, append ? "a" : "w"))) {
		e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	return f;
}

void wap_iso_time(const struct timespec *ts, char out[32])
{
	struct tm tm;
	time_t t = ts->tv_sec;

	int year, ms = (int)(ts->tv_nsec / 1000000);

	gmtime_r(&t, &tm);
	year = tm.tm_year + 1900;
	if (year < 0 || year > 9999) {
		snprintf(out, 32, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, tm.tm_mon + 1,
			 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
		return;
	}
	/* by hand: every read and stat result carries one */
	{
		int v[] = { year / 100, year % 100, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			    tm.tm_min, tm.tm_sec };
		static const char sep[7] = { 0, 0, '-', '-', 'T', ':', ':' };
		char *o = out;
		for (int i = 0; i < 7; i++) {
			if (sep[i])
				*o++ = sep[i];
			*o++ = (char)('0' + v[i] / 10);
			*o++ = (char)('0' + v[i] % 10);
		}
		*o++ = '.';
		*o++ = (char)('0' + ms / 100);
		*o++ = (char)('0' + ms / 10 % 10);
		*o++ = (char)('0' + ms % 10);
		*o++ = 'Z';
		*o = 0;
	}
}

int wap_err_too_large(struct wap_err *err, const char *rel, long long size, size_t limit)
{
	if (size >= 0)
		return wap_err_set(err, WAP_E_TOO_LARGE,
				   "File too large: %s is %lld bytes, over the limit of %zu "
				   "(limits.maxFileSize): work on a part of it (read --offset/--limit, "
				   "--head, --tail) or raise limits.maxFileSize in the config",
				   rel, size, limit);
	return wap_err_set(err, WAP_E_TOO_LARGE,
			   "File too large: %s is over the limit of %zu bytes (limits.maxFileSize): "
			   "work on a part of it or raise limits.maxFileSize in the config",
			   rel, limit);
}

int wap_read_fd(int fd, size_t max, char **buf, size_t *len, struct wap_err *err)
{
	struct stat st;
	size_t cap, n = 0;
	char *b;

	*buf = NULL;
	*len = 0;
	if (fstat(fd, &st))
		return wap_err_set(err, WAP_E_FAILED, "stat: %s", strerror(errno));
	/* the size is checked before a byte is read: a file over the limit
	 * never costs its size in memory */
	if (max && S_ISREG(st.st_mode) && (size_t)st.st_size > max)
		return wap_err_too_large(err, "the file", (long long)st.st_size, max);
	cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536;
	if (max && cap > max + 1)
		cap = max + 1;
	b = malloc(cap + 1);
	if (!b)
		return wap_err_oom(err);
	for (;;) {
		ssize_t r;
		if (n == cap) {
			char *nb;
			if (max && n > max)
				break;
			cap *= 2;
			if (max && cap > max + 1)
				cap = max + 1;
			nb = realloc(b, cap + 1);
			if (!nb) {
				free(b);
				return wap_err_oom(err);
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(b);
			if (e == EISDIR)
				return wap_err_set(err, WAP_E_NOT_FILE, "Is a directory, not a file");
			return wap_err_set(err, WAP_E_FAILED, "read: %s", strerror(e));
		}
		if (r == 0)
			break;
		n += r;
	}
	if (max && n > max) {
		free(b);
		return wap_err_too_large(err, "the file", -1, max);
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

/* NOT_A_FILE for anything but a regular file, naming what it is. */
static int not_regular(struct wap_err *err, const char *rel, mode_t m)
{
	const char *what = S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO (named pipe)" :
			   S_ISSOCK(m) ? "a socket" : S_ISCHR(m) ? "a character device" :
			   S_ISBLK(m) ? "a block device" : "not a regular file";

	return wap_err_set(err, WAP_E_NOT_FILE, "Not a file: %s is %s", rel, what);
}

/* Open REL for reading a regular file: O_NONBLOCK so that a FIFO is
 * never waited on (nor a device's open), O_NOCTTY so that a terminal is
 * never made ours; then back to blocking reads. */
static int open_regular(const struct wap_ws *ws, const char *rel, struct stat *st,
			struct wap_err *err)
{
	int fd = wap_ws_open(ws, rel, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0, WAP_ACC_READ, err);
	int fl;

	if (fd < 0)
		return -1;
	if (fstat(fd, st)) {
		wap_err_errno(err, errno, rel);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		not_regular(err, rel, st->st_mode);
		close(fd);
		return -1;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int wap_read_file(const struct wap_ws *ws, const char *rel, size_t max, char **buf,
		  size_t *len, struct stat *st, struct wap_err *err)
{
	struct stat sb;
	int fd = open_regular(ws, rel, &sb, err);
	int rc;

	if (fd < 0)
		return -1;
	if (st)
		*st = sb;
	if (max && (size_t)sb.st_size > max) {
		close(fd);
		return wap_err_too_large(err, rel, (long long)sb.st_size, max);
	}
	rc = wap_read_fd(fd, max, buf, len, err);
	close(fd);
	if (rc && err && err->kind == WAP_E_TOO_LARGE)
		wap_err_too_large(err, rel, -1, max);
	return rc;
}

int wap_open_data(const struct wap_ws *ws, const char *name, struct stat *st,
		  struct wap_err *err)
{
	struct stat sb;
	char *rel = NULL;
	int fd;

	if (!ws || ws->rootfd < 0)
		return wap_err_set(err, WAP_E_INVALID, "%s: no workspace to read it from", name);
	if (wap_ws_rel(ws, name, strlen(name), &rel, err))
		return -1;
	fd = open_regular(ws, rel, &sb, err);
	free(rel);
	if (fd >= 0 && st)
		*st = sb;
	return fd;
}

int wap_read_data(const struct wap_ws *ws, const char *name, char **buf, size_t *len,
		  struct wap_err *err)
{
	size_t max = ws ? ws->lim.max_file_size : 0;
	int fd, rc;

	*buf = NULL;
	*len = 0;
	if (!strcmp(name, "-")) {
		rc = wap_read_fd(0, max, buf, len, err);
		if (rc && err && err->kind == WAP_E_TOO_LARGE)
			wap_err_too_large(err, "stdin", -1, max);
		return rc;
	}
	fd = wap_open_data(ws, name, NULL, err);
	if (fd < 0)
		return -1;
	rc = wap_read_fd(fd, max, buf, len, err);
	close(fd);
	if (rc && err && err->kind == WAP_E_TOO_LARGE)
		wap_err_too_large(err, name, -1, max);
	return rc;
}

/* The target of a write: the directory that holds it (locked), its name,
 * and its current bytes when asked for. */
struct target {
	const struct wap_ws *ws;
	int dirfd;
	char *rel;		/* the real path written (a symlink resolved) */
	const char *name;	/* into rel */
	bool exists;
	struct stat st;
};

static void target_release(struct target *t)
{
	if (t->dirfd >= 0) {
		flock(t->dirfd, LOCK_UN);
		close(t->dirfd);
	}
	t->dirfd = -1;
	free(t->rel);
	t->rel = NULL;
}

int wap_dir_lock(int dfd, const char *rel, struct wap_err *err)
{
	const struct wap_cancel *cancel = wap_cancel_current();
	long wait_us = 100;

	/* (no blocking flock: a signal is the only way out of one, and the
	 * holder's lock lives as long as it likes) */
	while (flock(dfd, LOCK_EX | LOCK_NB)) {
		struct timespec ts;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return wap_err_errno(err, errno, rel);
		if (wap_cancel_is_set(cancel))
			return wap_cancel_err(err);
		ts.tv_sec = 0;
		ts.tv_nsec = wait_us * 1000;
		nanosleep(&ts, NULL);
		if (wait_us < 20000)
			wait_us *= 2;
	}
	return 0;
}

static int target_open(const struct wap_ws *ws, const char *rel, bool mkparents,
		       struct target *t, struct wap_err *err)
{
	struct wap_err tmp = { 0 };
	int fd;

	memset(t, 0, sizeof(*t));
	t->ws = ws;
	t->dirfd = -1;
	if (wap_ws_check(ws, rel, WAP_ACC_WRITE, err))
		return -1;
	/* follow a symlink at REL to its target, if that is beneath the root.
	 * A file replaced (renamed over) by another writer between the open
	 * and the naming has no name left ("r.txt (deleted)"): open again. */
	for (int tries = 0;; tries++) {
		struct stat st;
		fd = wap_ws_open(ws, rel, O_PATH, 0, WAP_ACC_WRITE, &tmp);
		if (fd < 0)
			break;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			close(fd);
			return wap_err_set(err, WAP_E_NOT_FILE, "Not a file: %s is a directory", rel);
		}
		free(t->rel);
		t->rel = wap_ws_fd_rel(ws, fd);
		if (fstat(fd, &st) == 0 && st.st_nlink == 0) {
			free(t->rel);
			t->rel = NULL;	/* after 100 tries: REL as it is */
			if (tries < 100) {
				close(fd);
				continue;
			}
		}
		close(fd);
		break;
	}
	if (fd >= 0) {
		/* found (and named, unless it kept being replaced) */
	} else if (tmp.kind != WAP_E_NOT_FOUND) {
		/* a link that leaves the root, a restricted target, ... */
		if (err) {
			*err = tmp;
			tmp.details = NULL;
		}
		wap_err_release(&tmp);
		return -1;
	}
	wap_err_release(&tmp);
	if (!t->rel)
		t->rel = strdup(rel);
	if (!t->rel)
		return wap_err_oom(err);
	t->dirfd = wap_ws_open_parent(ws, t->rel, mkparents, &t->name, err);
	if (t->dirfd < 0) {
		target_release(t);
		return -1;
	}
	if (wap_dir_lock(t->dirfd, t->rel, err)) {
		target_release(t);
		return -1;
	}
	if (fstatat(t->dirfd, t->name, &t->st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(t->st.st_mode)) {
			wap_err_set(err, WAP_E_NOT_FILE, "Not a file: %s is a directory", rel);
			target_release(t);
			return -1;
		}
		t->exists = !S_ISLNK(t->st.st_mode);
		if (!S_ISREG(t->st.st_mode) && !S_ISLNK(t->st.st_mode)) {
			wap_err_set(err, WAP_E_NOT_FILE, "Not a regular file: %s", rel);
			target_release(t);
			return -1;
		}
	} else if (errno != ENOENT) {
		wap_err_errno(err, errno, rel);
		target_release(t);
		return -1;
	}
	return 0;
}

/* The current bytes, at most maxFileSize of them: the size is checked
 * before reading, so a huge file costs nothing. */
static int target_read(struct target *t, char **buf, size_t *len, struct wap_err *err)
{
	size_t max = t->ws->lim.max_file_size;
	int fd, rc;

	if (max && (size_t)t->st.st_size > max)
		return wap_err_too_large(err, t->rel, (long long)t->st.st_size, max);
	fd = openat(t->dirfd, t->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return wap_err_errno(err, errno, t->rel);
	rc = wap_read_fd(fd, max, buf, len, err);
	close(fd);
	if (rc && err && err->kind == WAP_E_TOO_LARGE)
		wap_err_too_large(err, t->rel, -1, max);
	return rc;
}

int wap_check_writable(const struct stat *st, const char *rel, const char *how,
		       struct wap_err *err)
{
	if (!S_ISREG(st->st_mode) || (st->st_mode & 0222))
		return 0;
	return wap_err_set(err, WAP_E_PERMISSION,
			   "Permission denied: %s is read-only (mode %04o); %s",
			   rel, (unsigned)(st->st_mode & 07777), how);
}

/* New content over maxFileSize is refused: what wap writes it must be able
 * to read back whole. */
static int check_new_size(const struct target *t, size_t len, struct wap_err *err)
{
	size_t max = t->ws->lim.max_file_size;

	if (max && len > max)
		return wap_err_set(err, WAP_E_TOO_LARGE,
				   "Content too large: %zu bytes for %s, over the limit of %zu "
				   "(limits.maxFileSize): write less, or raise limits.maxFileSize in the config",
				   len, t->rel, max);
	return 0;
}

static int write_all(int fd, const char *p, size_t left)
{
	while (left) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		left -= w;
	}
	return 0;
}

/* A fresh temp name in the target's directory, created (O_EXCL, MODE)
 * when FD is -1, else made a link to the unnamed file FD. */
static int temp_name(struct target *t, char tmp[NAME_MAX + 1], int fd, mode_t mode)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (int tries = 0; tries <= 100; tries++) {
		struct timespec ts;
		int r;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		snprintf(tmp, NAME_MAX + 1, ".wap-%08x.tmp",
			 (unsigned)(ts.tv_nsec ^ (getpid() << 8) ^ (tries * 7919)));
		if (fd < 0)
			r = openat(t->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		else
			r = linkat(AT_FDCWD, proc, t->dirfd, tmp, AT_SYMLINK_FOLLOW);
		if (r >= 0 || errno != EEXIST)
			return r;
	}
	return -1;
}

/* The old file's access ACL (a malloc'd copy, its length in *LEN), or
 * NULL: none, or none to be had (no ACLs on this file system).  Read
 * through an O_PATH descriptor, so a file wap may not read gives its ACL
 * too.  -1 in *LEN when it has one that cannot be read. */
static void *old_acl(const struct target *t, ssize_t *len)
{
	char proc[64];
	void *acl = NULL;
	int fd = openat(t->dirfd, t->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	*len = 0;
	if (fd < 0)
		return NULL;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (int tries = 0; tries < 4; tries++) {
		ssize_t n = getxattr(proc, "system.posix_acl_access", NULL, 0);
		if (n <= 0) {
			*len = n < 0 && errno != ENODATA && errno != ENOTSUP && errno != ENOENT ? -1 : 0;
			break;
		}
		free(acl);
		if (!(acl = malloc(n))) {
			*len = -1;
			break;
		}
		*len = getxattr(proc, "system.posix_acl_access", acl, n);
		if (*len >= 0 || errno != ERANGE)
			break;
	}
	close(fd);
	if (*len <= 0) {
		free(acl);
		acl = NULL;
	}
	return acl;
}

/* Who may reach the old file may reach the new one, and no one else: its
 * owner (wap as root), its group and its access ACL are put on FD.  The
 * group cannot always be kept (wap not root, the file of a group it is no
 * member of): the group then gets no more than others have, as vim does,
 * so that wap's own group is not let in.  -1 with errno when the ACL
 * cannot be kept. */
static int keep_access(const struct target *t, int fd, mode_t *mode)
{
	struct stat now;
	ssize_t n;
	void *acl;
	int rc = 0;

	(void)!fchown(fd, geteuid() == 0 ? t->st.st_uid : (uid_t)-1, t->st.st_gid);
	if (fstat(fd, &now) == 0 && now.st_gid != t->st.st_gid)
		*mode = (*mode & ~(mode_t)(S_ISGID | 070)) | ((*mode & 07) << 3);
	if (fchmod(fd, *mode))
		return -1;
	acl = old_acl(t, &n);
	if (n < 0 || (acl && fsetxattr(fd, "system.posix_acl_access", acl, (size_t)n, 0))) {
		if (n < 0 && !errno)
			errno = EIO;
		rc = -1;
	}
	free(acl);
	return rc;
}

/* Write the temp file and rename it over t->name.  The temp file is
 * unnamed (O_TMPFILE) while it is written, so a writer killed midway
 * leaves nothing behind; it gets a name only to be renamed. */
static int target_commit(struct target *t, const void *buf, size_t len, bool noreplace,
			 mode_t newmode, struct wap_wres *res, struct wap_err *err)
{
	char tmp[NAME_MAX + 1], proc[64];
	bool anon = true, named = false, exact = true;
	int fd = -1, e;
	mode_t mode = 0600;

	if (t->exists) {
		mode = t->st.st_mode & 07777;
	} else if (newmode) {
		mode = newmode;
	} else {
		/* a new file: 0666 less the umask (or as a default ACL says),
		 * applied by the kernel as it creates it.  Never umask(0) to
		 * read it: the umask is the process's, and a server's other
		 * threads creating files meanwhile would make them 0777 */
		mode = 0666;
		exact = false;
	}
again:
	fd = anon ? openat(t->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, exact ? 0600 : mode) : -1;
	if (fd < 0) {
		anon = false;
		fd = temp_name(t, tmp, -1, exact ? 0600 : mode);
		if (fd < 0)
			return wap_err_errno(err, errno, t->rel);
		named = true;
	}
	if (write_all(fd, buf, len))
		goto fail;
	if (t->exists ? keep_access(t, fd, &mode) : exact && fchmod(fd, mode))
		goto fail;
	if (fsync(fd))
		goto fail;
	if (anon) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (noreplace) {
			/* link(2) never replaces: create-only in one step */
			if (linkat(AT_FDCWD, proc, t->dirfd, t->name, AT_SYMLINK_FOLLOW) == 0)
				goto placed;
		} else if (temp_name(t, tmp, fd, 0) == 0) {
			named = true;
		}
		if (!named && errno != EEXIST) {
			/* no /proc to name it by: the named way */
			close(fd);
			anon = false;
			goto again;
		}
		if (!named)
			goto fail;
	}
	if (close(fd)) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (noreplace) {
		if (renameat2(t->dirfd, tmp, t->dirfd, t->name, RENAME_NOREPLACE))
			goto fail;
	} else if (renameat(t->dirfd, tmp, t->dirfd, t->name)) {
		goto fail;
	}
placed:
	if (fd >= 0)
		close(fd);
	fsync(t->dirfd);
	if (res) {
		res->created = !t->exists;
		res->size = len;
		if (wap_blob_id(buf, len, res->version, err))
			return -1;
	}
	return 0;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	if (named)
		unlinkat(t->dirfd, tmp, 0);
	if (e == EEXIST)
		return wap_err_set(err, WAP_E_EXISTS, "File already exists: %s", t->rel);
	return wap_err_errno(err, e, t->rel);
}

static int check_version(struct target *t, const char *expected, const char *buf,
			 size_t len, struct wap_err *err)
{
	char cur[WAP_VERSION_LEN + 1];

	if (!expected)
		return 0;
	if (!*expected) {
		if (t->exists)
			return wap_err_set(err, WAP_E_CONFLICT,
					   "Conflict: %s exists but was expected not to", t->rel);
		return 0;
	}
	if (!t->exists)
		return wap_err_set(err, WAP_E_CONFLICT,
				   "Conflict: %s no longer exists (expected version %s)", t->rel, expected);
	if (wap_blob_id(buf, len, cur, err))
		return -1;
	if (strcmp(cur, expected)) {
		wap_err_set(err, WAP_E_CONFLICT,
			    "Conflict: %s changed since version %s (now %s); read it again",
			    t->rel, expected, cur);
		wap_err_details(err, json_pack("{s:s, s:s}", "expected_version", expected,
					       "current_version", cur));
		return -1;
	}
	return 0;
}

int wap_write_file(const struct wap_ws *ws, const char *rel, const void *buf, size_t len,
		   const struct wap_wopts *o, struct wap_wres *res, struct wap_err *err)
{
	struct target t;
	char *old = NULL;
	size_t oldlen = 0;
	int rc = -1;

	if (target_open(ws, rel, o->mkparents, &t, err))
		return -1;
	if (o->mode == WAP_W_CREATE && t.exists) {
		wap_err_set(err, WAP_E_EXISTS, "File already exists: %s", rel);
		goto out;
	}
	if ((t.exists && !o->force &&
	     wap_check_writable(&t.st, t.rel, "use --force to replace it", err)) ||
	    check_new_size(&t, len, err) ||
	    (o->mode == WAP_W_APPEND && t.exists &&
	     check_new_size(&t, (size_t)t.st.st_size + len, err)))
		goto out;
	if (t.exists && (o->expected_version || o->mode == WAP_W_APPEND) &&
	    target_read(&t, &old, &oldlen, err))
		goto out;
	if (check_version(&t, o->expected_version, old, oldlen, err))
		goto out;
	if (o->mode == WAP_W_APPEND && oldlen) {
		char *nb;
		if (check_new_size(&t, oldlen + len, err))
			goto out;
		nb = realloc(old, oldlen + len + 1);
		if (!nb) {
			wap_err_oom(err);
			goto out;
		}
		old = nb;
		memcpy(old + oldlen, buf, len);
		rc = target_commit(&t, old, oldlen + len, false, o->newmode, res, err);
	} else {
		rc = target_commit(&t, buf, len, o->mode == WAP_W_CREATE, o->newmode, res, err);
	}
out:
	free(old);
	target_release(&t);
	return rc;
}

int wap_update_file(const struct wap_ws *ws, const char *rel, unsigned flags,
		    const char *expected_version, wap_transform_fn fn, void *arg,
		    struct wap_wres *res, struct wap_err *err)
{
	bool may_create = flags & WAP_UPD_CREATE;
	struct target t;
	char *old = NULL, *nw = NULL;
	size_t oldlen = 0, nwlen = 0;
	int rc = -1;

	if (target_open(ws, rel, may_create, &t, err))
		return -1;
	if (!t.exists && !may_create) {
		wap_err_set(err, WAP_E_NOT_FOUND, "File not found: %s", rel);
		goto out;
	}
	if (t.exists && !(flags & WAP_UPD_FORCE) &&
	    wap_check_writable(&t.st, t.rel, "use --force to change it", err))
		goto out;
	if (t.exists && target_read(&t, &old, &oldlen, err))
		goto out;
	if (check_version(&t, expected_version, old, oldlen, err))
		goto out;
	if (fn(arg, t.exists ? old : NULL, oldlen, &nw, &nwlen, err) ||
	    check_new_size(&t, nwlen, err))
		goto out;
	rc = target_commit(&t, nw, nwlen, !t.exists, 0, res, err);
out:
	free(old);
	free(nw);
	target_release(&t);
	return rc;
}
