/* proc/landlock.c - Landlock rulesets, network isolation and rlimits for the
 * commands wap runs (landlock.h).  The kernel headers of the build machine
 * may predate the ABI the kernel offers, so the few constants needed are
 * spelled out here; each right is used only when the ABI has it. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include "cmdpolicy.h"
#include "config.h"
#include "landlock.h"
#include "path.h"
#include "rsys.h"

#define LL_FS_EXECUTE		(1ULL << 0)
#define LL_FS_WRITE_FILE	(1ULL << 1)
#define LL_FS_READ_FILE		(1ULL << 2)
#define LL_FS_READ_DIR		(1ULL << 3)
#define LL_FS_MAKE_CHAR		(1ULL << 6)
#define LL_FS_MAKE_BLOCK	(1ULL << 11)
#define LL_FS_REFER		(1ULL << 13)	/* ABI 2 */
#define LL_FS_TRUNCATE		(1ULL << 14)	/* ABI 3 */
#define LL_FS_IOCTL_DEV		(1ULL << 15)	/* ABI 5 */
#define LL_NET_BIND_TCP		(1ULL << 0)	/* ABI 4 */
#define LL_NET_CONNECT_TCP	(1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX	(1ULL << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL		(1ULL << 1)
#define LL_RULE_PATH_BENEATH	1
#define LL_CREATE_VERSION	(1U << 0)

/* rights that make sense on a file (not a directory) */
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | \
			LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

int wap_landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_VERSION);
	const char *cap = getenv("WAP_LANDLOCK_ABI");

	if (v < 0)
		v = 0;
	if (cap && *cap && atol(cap) < v)
		v = atol(cap);
	return (int)v;
}

static uint64_t fs_rights(int abi)
{
	uint64_t r = (1ULL << 13) - 1;	/* ABI 1: EXECUTE .. MAKE_SYM */

	if (abi >= 2)
		r |= LL_FS_REFER;
	if (abi >= 3)
		r |= LL_FS_TRUNCATE;
	if (abi >= 5)
		r |= LL_FS_IOCTL_DEV;
	return r;
}

/* Allow RIGHTS (those of them HANDLED) beneath the file FD, PATH in
 * messages; a file gets only the rights that make sense on one. */
static int put_rule(int rs, int fd, const char *path, uint64_t rights, uint64_t handled,
		    struct wap_err *err)
{
	struct ll_path_beneath_attr pb;
	struct stat st;

	if ((rights & handled & ~LL_FILE_RIGHTS) && fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		rights &= LL_FILE_RIGHTS;
	pb.allowed_access = rights & handled;
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
		return wap_err_set(err, WAP_E_FAILED, "Sandbox: cannot add a rule for %s: %s",
				   path, strerror(errno));
	return 0;
}

/* put_rule() for NAME in the dir DFD (PATH names it in messages): in a
 * listed dir, the lookup of one name rather than of a whole path.  A name
 * that is not there is skipped: not every system has /lib32. */
static int add_rule_at(int rs, int dfd, const char *name, const char *path, uint64_t rights,
		       uint64_t handled, struct wap_err *err)
{
	int fd, rc;

	if (!(rights & handled))
		return 0;	/* nothing this ruleset handles (READ_DIR in the list layer) */
	if ((fd = openat(dfd, name, O_PATH | O_CLOEXEC)) < 0)
		return errno == ENOENT || errno == EACCES ? 0 :
			wap_err_set(err, WAP_E_FAILED, "Sandbox: %s: %s", path, strerror(errno));
	rc = put_rule(rs, fd, path, rights, handled, err);
	close(fd);
	return rc;
}

/* Allow RIGHTS beneath PATH, or beneath FD when >= 0. */
static int add_rule(int rs, const char *path, int fd, uint64_t rights, uint64_t handled,
		    struct wap_err *err)
{
	if (fd < 0)
		return add_rule_at(rs, AT_FDCWD, path, path, rights, handled, err);
	return rights & handled ? put_rule(rs, fd, path, rights, handled, err) : 0;
}

/* ---- command lists in the kernel ---- */

static bool in_set(char *const *v, const char *p)
{
	for (size_t i = 0; v && v[i]; i++)
		if (!strcmp(v[i], p))
			return true;
	return false;
}

/* A directory the list layer's rules were decided by (a name looked up in
 * it, or its listing read), as it was then: the layer is kept from one
 * command to the next while every one of them is as it was. */
struct seen {
	char *path;
	dev_t dev;
	ino_t ino;		/* 0: it did not exist */
	struct timespec mtime, ctime;
	bool dir;		/* a directory, no link */
};

/* What a command may read beyond the root, its temp dir and the system
 * dirs: git's user config, a language server's install dir, the shell.
 * Not one whose way there passes through the root or the temp dirs, which
 * the agent writes: with $HOME the root, a .gitconfig planted as a link to
 * a secret, or .config/git to /, would grant it (what of it lies in the
 * root is readable as the root is). */
struct extras {
	char **dirs;		/* read and run (o->read_dirs) */
	char **cfg;		/* read (git's) */
	const char *shell;	/* run (o->shell), or NULL */
};

struct xrules {
	const struct wap_sandbox_opts *o;
	const struct extras *ex;
	struct seen *seen;
	size_t nseen, capseen;
	struct timespec t0;	/* the coarse clock before the first look */
	bool racy;		/* a dir changed at t0's tick or later */
	bool oom;		/* note_dir could not keep one */
	bool allow_list;	/* an allow-list is active */
	char **sys;		/* the system dirs, real paths, none inside another */
	char **holes;		/* dirs whose files get a rule each (PATH dirs...) */
	char **keep_out;	/* never executable: the root, the temp dir */
	size_t npath;		/* holes[0..npath): PATH dirs, their files are commands */
	struct inoset {
		struct { dev_t dev; ino_t ino; } *v;
		size_t n, cap;
	} bad, unlisted, ok;	/* files named by a deny entry, by no allow entry, by one */
	uint64_t all, rd;
};

static int ino_add(struct inoset *s, const struct stat *st)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		void *nv = realloc(s->v, cap * sizeof(*s->v));
		if (!nv)
			return -1;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n].dev = st->st_dev;
	s->v[s->n++].ino = st->st_ino;
	return 0;
}

static bool ino_has(const struct inoset *s, const struct stat *st)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].dev == st->st_dev && s->v[i].ino == st->st_ino)
			return true;
	return false;
}

static void seen_stat(struct seen *d)
{
	struct stat st;

	if (lstat(d->path, &st)) {
		memset(&d->dev, 0, sizeof(*d) - offsetof(struct seen, dev));
		return;
	}
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->mtime = st.st_mtim;
	d->ctime = st.st_ctim;
	d->dir = S_ISDIR(st.st_mode);
}

static bool ts_before(struct timespec a, struct timespec b)
{
	return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

static struct seen *find_seen(const struct xrules *x, const char *dir)
{
	for (size_t i = 0; i < x->nseen; i++)
		if (!strcmp(x->seen[i].path, dir))
			return &x->seen[i];
	return NULL;
}

/* Note DIR (a real path) as one the rules depend on, before it is looked
 * in.  A change within the clock tick it was last changed in leaves its
 * times as they were (git's "racy" files), so a dir changed at or after
 * the tick the layer was begun in makes the layer one not to keep. */
static int note_dir(struct xrules *x, const char *dir)
{
	struct seen *d;

	if (find_seen(x, dir))
		return 0;
	if (x->nseen == x->capseen) {
		size_t cap = x->capseen ? 2 * x->capseen : 32;
		void *nv = realloc(x->seen, cap * sizeof(*x->seen));
		if (!nv) {
			x->oom = true;
			return -1;
		}
		x->seen = nv;
		x->capseen = cap;
	}
	d = &x->seen[x->nseen];
	if (!(d->path = strdup(dir))) {
		x->oom = true;
		return -1;
	}
	x->nseen++;
	seen_stat(d);
	if (d->ino && (!ts_before(d->mtime, x->t0) || !ts_before(d->ctime, x->t0)))
		x->racy = true;
	return 0;
}

static void seen_free(struct seen *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

/* realpath(), noting each dir a name is looked up in (note_dir): where a
 * link leads (update-alternatives changes /etc/alternatives) decides
 * which file a refused name is.  NULL (errno set) if PATH is not there. */
static char *resolve(struct xrules *x, const char *path)
{
	char out[PATH_MAX], rest[PATH_MAX], t[PATH_MAX];
	size_t o = 0, n;
	int links = 0;
	const char *p = rest, *e;
	const struct seen *d;

	if (*path != '/' || (n = strlen(path)) >= sizeof(rest)) {
		errno = *path != '/' ? EINVAL : ENAMETOOLONG;
		return NULL;
	}
	memcpy(rest, path, n + 1);
	for (;;) {
		struct stat st;
		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		n = (size_t)(e - p);
		if (n == 1 && *p == '.') {
			p = e;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (o && out[--o] != '/')
				;
			p = e;
			continue;
		}
		out[o] = 0;
		if (note_dir(x, o ? out : "/"))
			return NULL;
		if (o + 1 + n >= sizeof(out)) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		out[o] = '/';
		memcpy(out + o + 1, p, n);
		out[o + 1 + n] = 0;
		p = e;
		/* a dir looked in already is a real one, no link */
		if ((d = find_seen(x, out)) && d->dir) {
			o += 1 + n;
			continue;
		}
		if (lstat(out, &st))
			return NULL;
		if (S_ISLNK(st.st_mode)) {
			ssize_t l;
			if (++links > 40) {
				errno = ELOOP;
				return NULL;
			}
			if ((l = readlink(out, t, sizeof(t) - 1)) <= 0)
				return NULL;
			/* the link's target, then what was left of the path */
			if ((size_t)l + strlen(p) >= sizeof(t)) {
				errno = ENAMETOOLONG;
				return NULL;
			}
			memcpy(t + l, p, strlen(p) + 1);
			memcpy(rest, t, strlen(t) + 1);
			p = rest;
			if (*p == '/')
				o = 0;	/* from the top */
			continue;	/* out still ends at the link's dir */
		}
		o += 1 + n;
		if (*p && !S_ISDIR(st.st_mode)) {
			errno = ENOTDIR;
			return NULL;
		}
	}
	return strdup(o ? out : "/");
}

static enum wap_cmd_verdict verdict(const struct xrules *x, const char *name)
{
	enum wap_cmd_verdict v = WAP_CMD_ALLOWED, w;

	for (int i = 0; i < 2; i++)
		if (x->o->rules[i] && (w = wap_cmd_prog(x->o->rules[i], name)) > v)
			v = w;
	return v;
}

/* Add DIR (its real path) to the holes when it is a directory. */
#define MAX_HOLES 1024	/* a $PATH of a million entries must not stall us */

static int add_hole(struct xrules *x, const char *dir)
{
	char *rp;
	struct stat st;
	int rc = 0;

	if (in_set(x->holes, dir))
		return 0;	/* a real path, and one of them already */
	if (wap_strv_len(x->holes) >= MAX_HOLES) {
		errno = E2BIG;
		return -1;
	}
	rp = resolve(x, dir);

	if (rp && !stat(rp, &st) && S_ISDIR(st.st_mode) && !in_set(x->holes, rp))
		rc = wap_strv_push(&x->holes, rp);
	free(rp);
	return rc;
}

static bool is_dot(const char *n)
{
	return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

/* Is the link NAME in DFD one to a file beside it that is no link (gcc ->
 * gcc-12, libz.so.1 -> libz.so.1.2.13)?  Then its real path is in DFD's
 * real dir, and no realpath() (a readlink a component) is needed. */
static bool same_dir_file(int dfd, const char *name)
{
	char t[NAME_MAX + 1];
	struct stat st;
	ssize_t n = readlinkat(dfd, name, t, sizeof(t) - 1);

	if (n <= 0)
		return false;
	t[n] = 0;
	return !strchr(t, '/') && !is_dot(t) && !fstatat(dfd, t, &st, AT_SYMLINK_NOFOLLOW) &&
	       !S_ISLNK(st.st_mode);
}

/* The PATH dirs, then (until nothing changes) the dirs of the real files
 * that names the lists refuse point to: /usr/bin/java -> /usr/lib/jvm/.../java
 * makes that bin dir a hole too, so the tree grant of /usr/lib cannot
 * cover it. */
static int find_holes(struct xrules *x)
{
	static const char *const std[] = {
		"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", NULL
	};
	char path[4096];

	for (int i = 0; std[i]; i++)
		if (add_hole(x, std[i]))
			return -1;
	for (const char *p = x->o->path; p && *p; ) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (*p == '/' && n < sizeof(path)) {
			memcpy(path, p, n);
			path[n] = 0;
			if (add_hole(x, path))
				return -1;
		}
		p += n + (c != NULL);
	}
	x->npath = wap_strv_len(x->holes);
	for (size_t h = 0; h < x->npath; h++) {
		DIR *d;
		struct dirent *e;

		if (note_dir(x, x->holes[h]))
			return -1;
		if (!(d = opendir(x->holes[h])))
			continue;
		while ((e = readdir(d))) {
			enum wap_cmd_verdict v;
			struct stat st;
			char *rp = NULL, *slash;

			if (is_dot(e->d_name))
				continue;
			/* where a link leads, noted before it is followed: only
			 * a link leads out of this dir (a real path already),
			 * and one to a file beside it (gcc -> gcc-12) does not;
			 * that of an allowed name matters only to an allow-list
			 * (its target's inode is then one not to fence in) */
			v = verdict(x, e->d_name);
			if ((e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) &&
			    (v != WAP_CMD_ALLOWED || x->allow_list) &&
			    !same_dir_file(dirfd(d), e->d_name)) {
				snprintf(path, sizeof(path), "%s/%s", x->holes[h], e->d_name);
				rp = resolve(x, path);
			}
			if (fstatat(dirfd(d), e->d_name, &st, 0) || S_ISDIR(st.st_mode)) {
				free(rp);
				continue;
			}
			if (ino_add(v == WAP_CMD_DENIED ? &x->bad : v ? &x->unlisted : &x->ok, &st)) {
				free(rp);
				goto oom;
			}
			/* a refused name's target's dir: a hole too */
			if (v != WAP_CMD_ALLOWED && rp && (slash = strrchr(rp, '/'))) {
				*slash = 0;
				if (add_hole(x, *rp ? rp : "/")) {
					free(rp);
					goto oom;
				}
			}
			free(rp);
		}
		closedir(d);
		continue;
oom:
		closedir(d);
		return -1;
	}
	return 0;
}

static bool skipped(const struct xrules *x, const char *dir)
{
	return in_set(x->holes, dir) || in_set(x->keep_out, dir);
}

static bool something_beneath(const struct xrules *x, const char *dir)
{
	for (size_t i = 0; x->holes && x->holes[i]; i++)
		if (wap_path_beneath(x->holes[i], dir))
			return true;
	for (size_t i = 0; x->keep_out && x->keep_out[i]; i++)
		if (wap_path_beneath(x->keep_out[i], dir))
			return true;
	return false;
}

/* RIGHTS on the tree DIR, but for the holes and the kept-out dirs in it:
 * the dirs on the way to them get READ_DIR and a rule per other entry. */
static int grant_tree(int rs, struct xrules *x, const char *dir, uint64_t rights, int depth,
		      struct wap_err *err)
{
	char path[4096];
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (skipped(x, dir))
		return 0;
	if (!something_beneath(x, dir) || depth > 32)
		return add_rule(rs, dir, -1, rights, x->all, err);
	if (add_rule(rs, dir, -1, LL_FS_READ_DIR, x->all, err))
		return -1;
	if (note_dir(x, dir))
		return wap_err_oom(err);
	if (!(d = opendir(dir)))
		return 0;
	while (!rc && (e = readdir(d))) {
		struct stat st;
		if (is_dot(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name);
		if (e->d_type != DT_UNKNOWN)
			st.st_mode = DTTOIF(e->d_type);
		else if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISLNK(st.st_mode))
			continue;	/* a link gets what its target has */
		if (S_ISDIR(st.st_mode))
			rc = grant_tree(rs, x, path, rights, depth + 1, err);
		else
			rc = add_rule_at(rs, dirfd(d), e->d_name, path, rights, x->all, err);
	}
	closedir(d);
	return rc;
}

/* May programs live at P (a real path)?  In the system dirs, but not in
 * /proc, /sys or /dev (PATH=/proc/self/fd would name wap's open files),
 * nor in the root or the temp dir. */
static bool program_area(const struct xrules *x, const char *p)
{
	bool sys = false;

	if (wap_path_within(p, "/proc") || wap_path_within(p, "/sys") || wap_path_within(p, "/dev"))
		return false;
	for (size_t j = 0; x->sys && x->sys[j]; j++)
		sys |= wap_path_within(p, x->sys[j]);
	for (size_t j = 0; x->keep_out && x->keep_out[j]; j++)
		if (wap_path_within(p, x->keep_out[j]))
			return false;
	return sys;
}

/* A hole: its sub-directories as trees, its files each: in a PATH dir by
 * their names, elsewhere (where a refused name's link led) all but the
 * refused programs. */
static int grant_hole(int rs, struct xrules *x, const char *dir, bool by_name,
		      struct wap_err *err)
{
	char path[4096];
	struct dirent *e;
	DIR *d;
	int rc = 0;
	bool here;

	if (add_rule(rs, dir, -1, LL_FS_READ_DIR, x->all, err))
		return -1;
	if (note_dir(x, dir))
		return wap_err_oom(err);
	if (!(d = opendir(dir)))
		return 0;
	here = program_area(x, dir);
	while (!rc && (e = readdir(d))) {
		struct stat st;
		bool away = false;
		if (is_dot(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name);
		if (e->d_type != DT_UNKNOWN)
			st.st_mode = DTTOIF(e->d_type);
		else if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISDIR(st.st_mode)) {
			rc = grant_tree(rs, x, path, x->rd, 1, err);
			continue;
		}
		if (S_ISLNK(st.st_mode) && !(here && same_dir_file(dirfd(d), e->d_name))) {
			/* the rule goes on the link's target: none outside
			 * the program areas */
			char *rp = resolve(x, path);
			away = !rp || !program_area(x, rp);
			free(rp);
		}
		if (away || fstatat(dirfd(d), e->d_name, &st, 0) || !S_ISREG(st.st_mode) ||
		    ino_has(&x->bad, &st))
			continue;
		if (by_name ? verdict(x, e->d_name) != WAP_CMD_ALLOWED :
			      ino_has(&x->unlisted, &st) && !ino_has(&x->ok, &st))
			continue;
		rc = add_rule_at(rs, dirfd(d), e->d_name, path, x->rd, x->all, err);
	}
	closedir(d);
	return rc;
}

/* The ELF interpreter of PROG (the dynamic loader), in BUF; false if none. */
static bool elf_interp(const char *prog, char *buf, size_t size)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	bool found = false;
	int fd = open(prog, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(ph))
		for (int i = 0; i < eh.e_phnum && !found; i++) {
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (size_t)i * sizeof(ph))) != sizeof(ph))
				break;
			if (ph.p_type == PT_INTERP && ph.p_filesz > 1 && ph.p_filesz < size &&
			    pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz) {
				buf[ph.p_filesz - 1] = 0;
				found = buf[0] == '/';
			}
		}
	close(fd);
	return found;
}

static int exec_rules(int rs, struct xrules *x, const char *const *sysdirs, struct wap_err *err)
{
	char interp[256];

	char *rp;
	int rc = 0;

	if (find_holes(x))
		return errno == E2BIG ?
			wap_err_set(err, WAP_E_INVALID, "Sandbox: too many PATH directories (over %d)",
				    MAX_HOLES) :
			wap_err_oom(err);
	for (int i = 0; sysdirs[i]; i++) {
		bool inside = false;
		if (!(rp = resolve(x, sysdirs[i])))
			continue;
		for (int j = 0; x->sys && x->sys[j]; j++)
			inside |= wap_path_within(rp, x->sys[j]);
		if (!inside && wap_strv_push(&x->sys, rp))
			rc = wap_err_oom(err);
		free(rp);
		if (rc)
			return -1;
	}
	/* a system dir inside another (listed first) was dropped; one that
	 * holds an earlier one replaces it */
	for (size_t i = 0; x->sys && x->sys[i]; i++) {
		uint64_t r = !strcmp(x->sys[i], "/dev") ? LL_FS_READ_DIR : x->rd;
		bool dup = false;
		for (size_t j = 0; x->sys[j]; j++)
			dup |= j != i && wap_path_beneath(x->sys[i], x->sys[j]);
		if (!dup && grant_tree(rs, x, x->sys[i], r, 0, err))
			return -1;
	}
	for (size_t h = 0; x->holes && x->holes[h]; h++) {
		/* a PATH dir outside the system dirs (~/bin) stays closed, and
		 * nothing in the workspace or the temp dir is executable */
		if (program_area(x, x->holes[h]) &&
		    grant_hole(rs, x, x->holes[h], h < x->npath, err))
			return -1;
	}
	/* the dynamic loader runs every program: it may map only what the
	 * command can read, and denied programs are not readable */
	free(resolve(x, "/bin/sh"));
	if (elf_interp("/bin/sh", interp, sizeof(interp))) {
		free(resolve(x, interp));
		if (add_rule(rs, interp, -1, x->rd, x->all, err))
			return -1;
	}
	if (x->ex->shell) {
		if (*x->ex->shell == '/')
			free(resolve(x, x->ex->shell));
		if (add_rule(rs, x->ex->shell, -1, x->rd, x->all, err))
			return -1;
	}
	return x->oom ? wap_err_oom(err) : 0;
}

/* ---- the list layer, kept from one command to the next ---- */

static const char *const sysdirs[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
	"/opt", "/proc", "/sys", "/run", "/var", "/nix", "/snap", "/dev", NULL
};
/* of /dev only these: a disk's device file must not be read (root can),
 * past every rule on files */
static const char *const devfiles[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random",
	"/dev/urandom", "/dev/ptmx", "/dev/pts", NULL
};
/* git treats an unreadable ~/.gitconfig as fatal: the user's git
 * configuration (and nothing else of $HOME) is readable */
static const char *const gitcfg[] = { ".gitconfig", ".config/git", NULL };

/* Under a command list a command runs in two Landlock layers: its own
 * (wap_sandbox_prepare: what it may write, read and run, as without a
 * list) and the list's, which handles only EXECUTE and READ_FILE and
 * grants them everywhere the command's own may but on the programs the
 * lists refuse (Landlock only grants: a rule for each file beside a
 * refused program, some 1,600 on a Debian machine).  A file is run or read
 * only where both layers allow it.  The list's layer holds nothing of one
 * command (/tmp is readable in it: the command's own layer narrows that to
 * its temp dir), so a server makes it once and keeps it while its inputs
 * are the same (the key: lists, $PATH, shell, root, $HOME, extra dirs) and
 * every directory it was decided by is as it was (note_dir): a program
 * installed, a link turned (update-alternatives) or a PATH dir made makes
 * the next command's layer anew.  A rule holds an inode: a file replaced
 * by another is a changed dir, so neither a new name nor a new file slips
 * through a kept layer. */
static struct {
	pthread_mutex_t lock;
	char *key;
	size_t keylen;
	int fd;
	struct seen *seen;
	size_t nseen;
} kept = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, -1, NULL, 0 };

static void key_str(FILE *f, const char *s)
{
	if (s)
		fprintf(f, "%zu:%s", strlen(s), s);
	else
		fputc('-', f);
}

static void key_strv(FILE *f, char *const *v)
{
	size_t n = wap_strv_len((char **)v);

	fprintf(f, "%zu[", n);
	for (size_t i = 0; i < n; i++)
		key_str(f, v[i]);
}

/* What the list layer is made from, as one string (NULL: no memory). */
static char *layer_key(const struct wap_ws *ws, const struct wap_sandbox_opts *o,
		       const struct extras *ex, int abi, const char *home_tmp,
		       const struct stat *tst, size_t *len)
{
	char *k = NULL;
	FILE *f = open_memstream(&k, len);

	if (!f)
		return NULL;
	fprintf(f, "%d", abi);
	key_str(f, home_tmp);	/* a rule holds its inode: made anew, a new layer */
	fprintf(f, "%ju:%ju", (uintmax_t)tst->st_dev, (uintmax_t)tst->st_ino);
	key_str(f, ws->root);
	key_str(f, o->path);
	key_str(f, ex->shell);
	key_strv(f, ex->cfg);
	key_strv(f, ex->dirs);
	for (int i = 0; i < 2; i++) {
		const struct wap_cmdrules *r = o->rules[i];
		if (!r) {
			fputc('-', f);
			continue;
		}
		fputc(r->allow_overrides ? 'o' : 'n', f);
		key_strv(f, r->allow);
		key_strv(f, r->deny);
	}
	if (fclose(f)) {
		free(k);
		return NULL;
	}
	return k;
}

/* Is every dir the kept layer was decided by as it was? */
static bool kept_fresh(void)
{
	for (size_t i = 0; i < kept.nseen; i++) {
		struct seen now = { .path = kept.seen[i].path }, *was = &kept.seen[i];
		seen_stat(&now);
		if (now.dev != was->dev || now.ino != was->ino ||
		    now.mtime.tv_sec != was->mtime.tv_sec || now.mtime.tv_nsec != was->mtime.tv_nsec ||
		    now.ctime.tv_sec != was->ctime.tv_sec || now.ctime.tv_nsec != was->ctime.tv_nsec)
			return false;
	}
	return true;
}

/* RIGHTS on PATH in the list layer, its way there noted; not in the root
 * or /tmp (the kept-out dirs), whose every change would be one (a command
 * writes there; the root, held open, is not looked up again). */
static int read_rule(int rs, struct xrules *x, const char *path, uint64_t rights,
		     struct wap_err *err)
{
	bool mine = false;

	for (size_t i = 0; x->keep_out && x->keep_out[i]; i++)
		mine |= wap_path_within(path, x->keep_out[i]);
	if (!mine)
		free(resolve(x, path));
	return add_rule(rs, path, -1, rights, x->all, err);
}

/* Make the list layer (see above): its ruleset's fd, or -1. */
static int make_layer(const struct wap_ws *ws, struct xrules *x,
		      const char *home_tmp, struct wap_err *err)
{
	struct ll_ruleset_attr attr = { .handled_access_fs = LL_FS_EXECUTE | LL_FS_READ_FILE };
	char *tmp = NULL;
	int rs;

	x->all = x->rd = attr.handled_access_fs;
	clock_gettime(CLOCK_REALTIME_COARSE, &x->t0);
	x->t0.tv_sec--;	/* a file system's clock may be coarser still */
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, 8, 0);
	if (rs < 0)
		return wap_err_set(err, WAP_E_DISABLED, "Sandbox unavailable: landlock_create_ruleset: %s",
				   strerror(errno));
	/* nothing in the root or under /tmp is a program (the command's own
	 * layer and noexec mounts say so too) */
	if (!(tmp = resolve(x, "/tmp")) && !x->oom)
		tmp = strdup("/tmp");
	if (!tmp || wap_strv_push(&x->keep_out, ws->root) || wap_strv_push(&x->keep_out, tmp)) {
		wap_err_oom(err);
		goto fail;
	}
	if (exec_rules(rs, x, sysdirs, err) ||
	    add_rule(rs, ws->root, ws->rootfd, LL_FS_READ_FILE, x->all, err) ||
	    read_rule(rs, x, home_tmp, LL_FS_READ_FILE, err) ||
	    read_rule(rs, x, "/etc/resolv.conf", LL_FS_READ_FILE, err))
		goto fail;
	/* /dev whole: no program there, and the command's own layer (always
	 * with this one) narrows it to devfiles.  A rule on /dev/pts would
	 * not reach the devpts of the command's own mounted over it (the
	 * covered inode's rules no longer hold), one on /dev does */
	if (read_rule(rs, x, "/dev", LL_FS_READ_FILE, err))
		goto fail;
	for (size_t i = 0; x->ex->dirs && x->ex->dirs[i]; i++)
		if (read_rule(rs, x, x->ex->dirs[i], x->rd, err))
			goto fail;
	for (size_t i = 0; x->ex->cfg && x->ex->cfg[i]; i++)
		if (read_rule(rs, x, x->ex->cfg[i], LL_FS_READ_FILE, err))
			goto fail;
	if (x->oom) {
		wap_err_oom(err);
		goto fail;
	}
	free(tmp);
	return rs;
fail:
	free(tmp);
	close(rs);
	return -1;
}

/* The list layer for this command: the kept one when it still holds, else
 * a new one (kept unless a dir it depends on changed while it was made). */
static int list_layer(const struct wap_ws *ws, const struct wap_sandbox_opts *o,
		      const struct extras *ex, int abi, const char *home_tmp,
		      const struct stat *tst, struct wap_err *err)
{
	struct xrules x = { .o = o, .ex = ex };
	size_t len = 0;
	char *key = layer_key(ws, o, ex, abi, home_tmp, tst, &len);
	int fd = -1;

	if (!key)
		return wap_err_oom(err);
	for (int i = 0; i < 2; i++)
		x.allow_list |= o->rules[i] && o->rules[i]->allow && o->rules[i]->allow[0];
	pthread_mutex_lock(&kept.lock);
	if (kept.fd >= 0 && kept.keylen == len && !memcmp(kept.key, key, len) && kept_fresh()) {
		if ((fd = fcntl(kept.fd, F_DUPFD_CLOEXEC, 3)) < 0)
			wap_err_set(err, WAP_E_FAILED, "Sandbox: dup: %s", strerror(errno));
		goto out;
	}
	if ((fd = make_layer(ws, &x, home_tmp, err)) < 0 || x.racy)
		goto out;
	{
		int mine = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (mine < 0)
			goto out;	/* used, not kept */
		if (kept.fd >= 0)
			close(kept.fd);
		seen_free(kept.seen, kept.nseen);
		free(kept.key);
		kept.fd = mine;
		kept.key = key;
		kept.keylen = len;
		kept.seen = x.seen;
		kept.nseen = x.nseen;
		key = NULL;
		x.seen = NULL;
		x.nseen = 0;
	}
out:
	pthread_mutex_unlock(&kept.lock);
	free(key);
	seen_free(x.seen, x.nseen);
	wap_strv_free(x.sys);
	wap_strv_free(x.holes);
	wap_strv_free(x.keep_out);
	free(x.bad.v);
	free(x.unlisted.v);
	free(x.ok.v);
	return fd;
}

/* ---- the private temp dir ---- */

/* Remove the temp dir at PATH and what the command left in it, however
 * deep (past PATH_MAX too), with one directory open at a time: down into
 * the first subdir that is not empty, back up by ".." once it is, the
 * parent read again.  A dir the command closed to its owner is opened
 * again (it is the user's); one that still cannot be emptied is noted by
 * inode and passed over, so the walk always ends.  The command is gone:
 * nothing moves the tree meanwhile. */
static bool noted(const ino_t *v, size_t n, ino_t ino)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == ino)
			return true;
	return false;
}

static int note(ino_t **v, size_t *n, ino_t ino)
{
	ino_t *x = reallocarray(*v, *n + 1, sizeof(**v));

	if (!x)
		return -1;
	x[(*n)++] = ino;
	*v = x;
	return 0;
}

static void rm_tree(const char *path)
{
	ino_t *stuck = NULL;
	size_t nstuck = 0, depth = 0;
	int fd;

	chmod(path, 0700);	/* the command's own to close */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	while (fd >= 0) {
		int down = -1, dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		struct dirent *e;
		struct stat st;
		bool oom = false;

		if (!d) {
			if (dfd >= 0)
				close(dfd);
			break;
		}
		while (down < 0 && !oom && (e = readdir(d))) {
			if (is_dot(e->d_name) || !unlinkat(fd, e->d_name, 0) || errno == ENOENT ||
			    !unlinkat(fd, e->d_name, AT_REMOVEDIR) || errno == ENOENT ||
			    noted(stuck, nstuck, e->d_ino))
				continue;
			fchmodat(fd, e->d_name, 0700, 0);
			down = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (down < 0)	/* cannot go in: passed over */
				oom = note(&stuck, &nstuck, e->d_ino) < 0;
		}
		closedir(d);
		if (oom)
			break;
		if (down >= 0) {
			close(fd);
			fd = down;
			depth++;
			continue;
		}
		if (!depth)
			break;
		/* done here, or what is left cannot be removed: up, and this
		 * dir passed over if it is still there */
		if (fstat(fd, &st) || note(&stuck, &nstuck, st.st_ino))
			break;
		down = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = down;
		depth--;
	}
	if (fd >= 0)
		close(fd);
	free(stuck);
	rmdir(path);
}

/* Is the entry E of the directory DFD a directory (not a link to one)?
 * Its d_type says, where the file system fills it in. */
static bool is_dir_at(int dfd, const struct dirent *e)
{
	struct stat st;

	if (e->d_type != DT_UNKNOWN)
		return e->d_type == DT_DIR;
	return !fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);
}

/* The directory NAME in DFD, opened for reading its entries; NULL if it is
 * none (or a link). */
static DIR *open_dir_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;

	if (fd < 0)
		return NULL;
	if (!(d = fdopendir(fd)))
		close(fd);
	return d;
}

/* P (absolute, beneath ROOT) read-only in the command's mount namespace,
 * and each directory between the root and it a mount point of its own: a
 * mount point cannot be renamed nor removed, so no command can carry P
 * (with the directory holding it) out of the places the next command
 * looks in and write it there.  -1: no memory. */
static int protect(struct wap_sandbox *sb, const char *root, const char *p)
{
	size_t rl = strlen(root);

	if (wap_strv_push(&sb->ro, p))
		return -1;
	for (const char *s = p + rl + 1; (s = strchr(s, '/')); s++) {
		size_t n = (size_t)(s - p);
		bool have = false;
		for (size_t i = 0; sb->pin && sb->pin[i] && !have; i++)
			have = strlen(sb->pin[i]) == n && !memcmp(sb->pin[i], p, n);
		if (!have) {
			char *a = strndup(p, n);
			int e = !a || wap_strv_push(&sb->pin, a);
			free(a);
			if (e)
				return -1;
		}
	}
	return 0;
}

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The config named beneath the root is not there yet ($HOME or
 * $XDG_CONFIG_HOME the root, no wap/config.json in it): a command could
 * write one that the next wap takes for the invoker's policy.  The dir
 * that would hold it is made, empty, as .wap is, and its name (absolute)
 * put in OUT to be kept read-only.  A link or a file on the way, or the
 * root itself as that dir: refused. */
static int hold_missing(const struct wap_ws *ws, const char *rel, char *out, size_t size,
			struct wap_err *err)
{
	const char *slash = strrchr(rel, '/');
	char dir[PATH_MAX];
	int fd = -1, e = 0;

	if (slash && (size_t)(slash - rel) < sizeof(dir)) {
		memcpy(dir, rel, (size_t)(slash - rel));
		dir[slash - rel] = 0;
		fd = openat(ws->rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	for (char *p = dir, *end; fd >= 0 && *p; p = *end ? end + 1 : end) {
		char save;
		int nfd;
		end = strchrnul(p, '/');
		save = *end;
		*end = 0;
		if (mkdirat(fd, p, 0755) && errno != EEXIST)
			e = errno;
		nfd = e ? -1 : openat(fd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && !e)
			e = errno;
		*end = save;
		close(fd);
		fd = nfd;
	}
	if (fd < 0)
		return wap_err_set(err, WAP_E_FAILED,
				   "Sandbox: cannot keep %s/%s (wap's config, not there) from being "
				   "written: %s; the command was not run", ws->root, rel,
				   e == ELOOP || e == ENOTDIR ? "a link or a file is on the way to it" :
				   e ? strerror(e) : "its dir is the root");
	close(fd);
	snprintf(out, size, "%s/%s", ws->root, dir);
	return 0;
}

/* More .git than this within two levels: the command is refused rather
 * than run with some of them writable. */
#define MAX_PROTECTED 512

/* ROOT/.git, ROOT/.wap, the .git of repositories up to two levels down
 * and the config file when it lies beneath the root: read-only in the
 * command's mount namespace, the dirs on the way to them pinned
 * (protect).  Looked for at every sandboxed command (the one before may
 * have made a repository): the listing of a directory of the first level
 * says whether it holds a .git, d_type which of its entries are
 * directories, so each directory of the second level costs one fstatat of
 * its .git, and nothing else does. */
static int find_protected(struct wap_sandbox *sb, const struct wap_ws *ws, struct wap_err *err)
{
	char path[4096], rel[NAME_MAX + 6];
	struct stat st;
	DIR *d1 = NULL, *d2 = NULL;
	struct dirent *e1, *e2;
	size_t n = 0;

#define PROTECT(...) do { \
		snprintf(path, sizeof(path), __VA_ARGS__); \
		if (++n > MAX_PROTECTED) \
			goto many; \
		if (protect(sb, ws->root, path)) \
			goto oom; \
	} while (0)
	if (!fstatat(ws->rootfd, ".git", &st, 0))
		PROTECT("%s/.git", ws->root);
	if (!fstatat(ws->rootfd, ".wap", &st, 0))
		PROTECT("%s/.wap", ws->root);
	for (size_t i = 0; ws->policy_rels && ws->policy_rels[i]; i++) {
		const char *r = ws->policy_rels[i];
		size_t al = ws->anchor ? strlen(ws->anchor) : 0;
		/* relative to the configured root: beneath this one? */
		if (al && (strncmp(r, ws->anchor, al) || r[al] != '/'))
			continue;
		if (!fstatat(ws->rootfd, r + (al ? al + 1 : 0), &st, AT_SYMLINK_NOFOLLOW)) {
			if (S_ISREG(st.st_mode))
				PROTECT("%s/%s", ws->root, r + (al ? al + 1 : 0));
		} else if (errno == ENOENT) {
			char dir[sizeof(path)];
			if (hold_missing(ws, r + (al ? al + 1 : 0), dir, sizeof(dir), err))
				return -1;
			PROTECT("%s", dir);
		}
	}
	if (!(d1 = open_dir_at(ws->rootfd, ".")))
		goto done;
	while ((e1 = readdir(d1))) {
		if (is_dot(e1->d_name) || !strcmp(e1->d_name, ".git") ||
		    !strcmp(e1->d_name, ".wap") || !is_dir_at(dirfd(d1), e1) ||
		    !(d2 = open_dir_at(dirfd(d1), e1->d_name)))
			continue;
		while ((e2 = readdir(d2))) {
			if (!strcmp(e2->d_name, ".git")) {
				if (!fstatat(dirfd(d2), ".git", &st, 0))
					PROTECT("%s/%s/.git", ws->root, e1->d_name);
				continue;
			}
			if (is_dot(e2->d_name) || !is_dir_at(dirfd(d2), e2))
				continue;
			snprintf(rel, sizeof(rel), "%s/.git", e2->d_name);
			if (!fstatat(dirfd(d2), rel, &st, 0))
				PROTECT("%s/%s/%s/.git", ws->root, e1->d_name, e2->d_name);
		}
		closedir(d2);
		d2 = NULL;
	}
	closedir(d1);
done:
	/* a dir before the dirs beneath it */
	for (n = 0; sb->pin && sb->pin[n]; n++)
		;
	if (n > 1)
		qsort(sb->pin, n, sizeof(*sb->pin), strp_cmp);
	return 0;
many:
	if (d2)
		closedir(d2);
	if (d1)
		closedir(d1);
	return wap_err_set(err, WAP_E_TOO_LARGE,
			   "Sandbox: too many repositories to keep read-only (more than %d .git within "
			   "two levels of %s); the command was not run", MAX_PROTECTED, ws->root);
oom:
	if (d2)
		closedir(d2);
	if (d1)
		closedir(d1);
	return wap_err_oom(err);
#undef PROTECT
}

/* The dir the commands' temp dirs are made in: /tmp/wap-sandbox-UID, the
 * user's own (0700), made once and left, like tmux's.  The view keeps it
 * whole (Landlock's rule on a dir the view covers no longer holds: the
 * list layer, kept from one command to the next, grants reading here),
 * and a command's own rules reach only its own dir in it.  When another
 * user made that name first (or it is not private), it is not used: the
 * process makes a home of its own, /tmp/wap-sandbox-UID.XXXXXX, used
 * for its life and removed when it ends. */
static pthread_mutex_t home_mu = PTHREAD_MUTEX_INITIALIZER;
static char own_home[64];

static void own_home_rm(void)
{
	rmdir(own_home);
}

static bool private_dir(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	bool ok = fd >= 0 && !fstat(fd, st) && st->st_uid == geteuid() && !(st->st_mode & 077);

	if (fd >= 0)
		close(fd);
	return ok;
}

static int temp_home(char *buf, size_t size, struct stat *st, struct wap_err *err)
{
	snprintf(buf, size, "/tmp/wap-sandbox-%u", (unsigned)geteuid());
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return wap_err_set(err, WAP_E_FAILED, "Sandbox: cannot make %s: %s", buf,
				   strerror(errno));
	if (private_dir(buf, st))
		return 0;
	pthread_mutex_lock(&home_mu);
	if (!own_home[0]) {
		snprintf(own_home, sizeof(own_home), "%s.XXXXXX", buf);
		if (mkdtemp(own_home))
			atexit(own_home_rm);
		else
			own_home[0] = 0;
	}
	snprintf(buf, size, "%s", own_home);
	pthread_mutex_unlock(&home_mu);
	if (!*buf || !private_dir(buf, st))
		return wap_err_set(err, WAP_E_FAILED, "Sandbox: /tmp/wap-sandbox-%u is not this user's own "
				   "private dir, and no private dir of its own could be made beside it",
				   (unsigned)geteuid());
	return 0;
}

/* A user namespace that maps one id no file has (the fd's, for the
 * process's life), by which the system dirs are shown to a command run
 * as root: no file there has an owner root's DAC override knows, and
 * root is neither owner nor in the group, so it reads only what the
 * system lets everyone read (/etc/shadow, host keys, a 0700 dir of
 * /var/lib are not).  -1 with errno where none can be made. */
#define NO_ONES_ID "4000000000 4000000000 1"
static int everyone_fd = -1, everyone_errno;
static pthread_once_t everyone_once = PTHREAD_ONCE_INIT;

/* The child whose user namespace it is: it says which pid /proc knows it
 * by (wap may be in a PID namespace of its own under the host's /proc, as
 * `wap acp run`'s agent and the servers it starts are: clone's pid names
 * another process there), then waits for the pipe's end (in wap's
 * memory: system calls only). */
static int everyone_child(void *arg)
{
	const int *p = arg;	/* down[2], up[2] */
	char c, self[24];
	long n;

	R1(close, p[1]);	/* its copy: ours alone ends the pipe */
	R1(close, p[2]);
	n = R4(readlinkat, AT_FDCWD, "/proc/self", self, sizeof(self));
	R3(write, p[3], self, n > 0 ? n : 0);
	R1(close, p[3]);
	while (R3(read, p[0], &c, 1) == -EINTR)
		;
	R1(exit, 0);
	return 0;
}

static void make_everyone(void)
{
	static char stack[16384] __attribute__((aligned(16)));
	/* us to the child (its end, its exit), the child to us (its pid) */
	static int p[4];
	int *down = p, *up = p + 2;
	char path[64], self[24] = "";
	int fd = -1, e = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(down, O_CLOEXEC)) {
		everyone_errno = errno;
		return;
	}
	if (pipe2(up, O_CLOEXEC)) {
		everyone_errno = errno;
		close(down[0]);
		close(down[1]);
		return;
	}
	/* in our memory, as the init is (a fork of a big server costs);
	 * ASan wants a copy */
#if defined(__SANITIZE_ADDRESS__)
	pid = clone(everyone_child, stack + sizeof(stack), CLONE_NEWUSER | SIGCHLD, p);
#else
	pid = clone(everyone_child, stack + sizeof(stack), CLONE_VM | CLONE_NEWUSER | SIGCHLD, p);
#endif
	close(up[1]);
	if (pid < 0) {
		e = errno;
	} else {
		static const char *const maps[] = { "uid_map", "gid_map" };
		while ((n = read(up[0], self, sizeof(self) - 1)) < 0 && errno == EINTR)
			;
		self[n > 0 ? n : 0] = 0;
		if (!*self)
			snprintf(self, sizeof(self), "%d", (int)pid);
		for (int i = 0; i < 2 && !e; i++) {
			int m;
			snprintf(path, sizeof(path), "/proc/%s/%s", self, maps[i]);
			if ((m = open(path, O_WRONLY | O_CLOEXEC)) < 0 ||
			    write(m, NO_ONES_ID, strlen(NO_ONES_ID)) < 0)
				e = errno;
			if (m >= 0)
				close(m);
		}
		snprintf(path, sizeof(path), "/proc/%s/ns/user", self);
		if (!e && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			e = errno;
	}
	close(down[1]);	/* the child's read ends: it exits */
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	close(down[0]);
	close(up[0]);
	everyone_fd = fd;
	everyone_errno = e;
}

/* Is this process in the initial user namespace (its uid_map the
 * whole range)?  Root in another (a rootless container's) can idmap no
 * mount of the host's file systems (their superblocks are the initial
 * namespace's): its command reads the system dirs as before. */
static bool init_userns(void)
{
	FILE *f = fopen("/proc/self/uid_map", "re");
	unsigned long a = 1, b = 1, n = 0;
	int k = f ? fscanf(f, "%lu %lu %lu", &a, &b, &n) : 0;

	if (f)
		fclose(f);
	return k == 3 && a == 0 && b == 0 && n == 4294967295UL;
}

/* /run's old name: a dir of its own in some images (not a link to /run),
 * where a pod's service-account token is mounted
 * (/var/run/secrets/kubernetes.io/serviceaccount, 0644) and sockets lie */
static char *const shut[] = { "/var/run", NULL };

/* What the command's mount namespace shows (mntview.h): what its rules
 * below name, but /run, whose sockets are a container engine's, the
 * session's agents...; only what /etc/resolv.conf may point to there.
 * Run as root (of the initial user namespace), the system dirs as
 * everyone sees them (make_everyone);
 * not root, a command reads there what its user may (no DAC override),
 * and no idmapped mount could be made. */
static int plan_view(struct wap_sandbox *sb, const struct wap_ws *ws,
		     const struct extras *ex, const char *home_tmp, struct wap_err *err)
{
	char **keep = NULL, **sys = NULL, **own = NULL;
	bool oom = false;
	int rc, userns = -1;

	if (geteuid() == 0 && init_userns()) {
		pthread_once(&everyone_once, make_everyone);
		if ((userns = everyone_fd) < 0)
			return wap_err_set(err, WAP_E_DISABLED,
					   "Sandbox unavailable: no user namespace to show the system "
					   "dirs as everyone sees them: %s", strerror(everyone_errno));
	}
	for (int i = 0; sysdirs[i]; i++)
		if (strcmp(sysdirs[i], "/run") && strcmp(sysdirs[i], "/proc") &&
		    strcmp(sysdirs[i], "/sys") && strcmp(sysdirs[i], "/dev"))
			oom |= wap_strv_push(&sys, sysdirs[i]) != 0;
	oom |= wap_strv_push(&own, ws->root) || wap_strv_push(&own, home_tmp);
	for (size_t i = 0; ex->dirs && ex->dirs[i]; i++)
		oom |= wap_strv_push(&own, ex->dirs[i]) != 0;
	for (size_t i = 0; ex->cfg && ex->cfg[i]; i++)
		oom |= wap_strv_push(&own, ex->cfg[i]) != 0;

	oom |= wap_strv_push(&keep, ws->root) || wap_strv_push(&keep, home_tmp) ||
	       wap_strv_push(&keep, "/etc/resolv.conf");
	for (int i = 0; sysdirs[i]; i++)
		if (strcmp(sysdirs[i], "/run"))
			oom |= wap_strv_push(&keep, sysdirs[i]) != 0;
	for (size_t i = 0; ex->dirs && ex->dirs[i]; i++)
		oom |= wap_strv_push(&keep, ex->dirs[i]) != 0;
	for (size_t i = 0; ex->cfg && ex->cfg[i]; i++)
		oom |= wap_strv_push(&keep, ex->cfg[i]) != 0;
	if (ex->shell && *ex->shell == '/')
		oom |= wap_strv_push(&keep, ex->shell) != 0;
	rc = oom ? wap_err_oom(err) : wap_view_plan(&sb->view, keep, sys, own, shut, userns, err);
	wap_strv_free(keep);
	wap_strv_free(sys);
	wap_strv_free(own);
	return rc;
}

/* The extras (see struct extras) of this command, none steered by the
 * agent through the root or HOME_TMP. */
static int extras_make(struct extras *ex, const struct wap_ws *ws,
		       const struct wap_sandbox_opts *o, const char *home_tmp,
		       struct wap_err *err)
{
	const char *home = getenv("HOME");
	char *avoid[3] = { realpath(ws->root, NULL), realpath(home_tmp, NULL), NULL };
	bool oom = !avoid[0] || !avoid[1];

	for (size_t i = 0; !oom && o->read_dirs && o->read_dirs[i]; i++)
		if (!wap_path_through(o->read_dirs[i], avoid))
			oom |= wap_strv_push(&ex->dirs, o->read_dirs[i]) != 0;
	for (int i = 0; !oom && home && *home == '/' && gitcfg[i]; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", home, gitcfg[i]);
		if (!wap_path_through(path, avoid))
			oom |= wap_strv_push(&ex->cfg, path) != 0;
	}
	if (o->shell && *o->shell && (*o->shell != '/' || !wap_path_through(o->shell, avoid)))
		ex->shell = o->shell;
	free(avoid[0]);
	free(avoid[1]);
	return oom ? wap_err_set(err, WAP_E_FAILED, "Sandbox: cannot resolve the root or %s: %s",
				 home_tmp, strerror(errno ? errno : ENOMEM)) : 0;
}

static void extras_free(struct extras *ex)
{
	wap_strv_free(ex->dirs);
	wap_strv_free(ex->cfg);
}

static bool lists_active(const struct wap_sandbox_opts *o)
{
	for (int i = 0; i < 2; i++)
		if (o->rules[i] && ((o->rules[i]->allow && o->rules[i]->allow[0]) ||
				    (o->rules[i]->deny && o->rules[i]->deny[0])))
			return true;
	return false;
}

static bool covered;
static pthread_once_t covered_once = PTHREAD_ONCE_INIT;

static void find_covered(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, mp[PATH_MAX];
	size_t cap = 0;

	while (f && getline(&line, &cap, f) > 0)
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 &&
		    !strncmp(mp, "/proc/", 6) && strcmp(mp, "/proc/sys/fs/binfmt_misc"))
			covered = true;
	free(line);
	if (f)
		fclose(f);
}

/* Is part of the host's /proc covered by a mount (a container engine's
 * masks: /proc/kcore on /dev/null, /proc/sys read-only, /proc/acpi
 * empty)?  A proc of the command's own would uncover it (the kernel
 * refuses one in a user namespace there; root it lets): the host's stays.
 * Looked at once: such masks are made when the container starts. */
static bool proc_covered(void)
{
	pthread_once(&covered_once, find_covered);
	return covered;
}

int wap_sandbox_prepare(struct wap_sandbox *sb, const struct wap_ws *ws,
			const struct wap_sandbox_opts *o, struct wap_err *err)
{
	struct ll_ruleset_attr attr = { 0 };
	uint64_t all, rd, noexec;
	size_t attrsize;
	bool lists = lists_active(o);
	char home_tmp[64], tmpl[sizeof(home_tmp) + 8];
	struct extras ex = { 0 };
	struct stat tst;
	int abi, rs;

	memset(sb, 0, sizeof(*sb));
	sb->ruleset_fd = sb->list_fd = sb->proc_fd = sb->view.userns = -1;
	sb->max_memory = o->max_memory;
	sb->max_procs = o->max_procs;
	sb->max_file_size = o->max_file_size;
	if (!o->fs && !o->no_network)
		return 0;
	abi = wap_landlock_abi();
	sb->abi = abi;
	if (o->fs && abi < 1)
		return wap_err_set(err, WAP_E_DISABLED,
			"Sandbox unavailable: this kernel has no Landlock (needed by %s); "
			"refusing to run the command unconfined",
			lists ? "the command lists" : "--sandbox");
	if (o->no_network && abi < 4) {
		/* no Landlock network rules: a network namespace instead */
		sb->netns = true;
		sb->userns = geteuid() != 0;
		sb->uid = geteuid();
		sb->gid = getegid();
	}
	if (!o->fs && sb->netns)
		return 0;

	all = fs_rights(abi);
	rd = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR;
	/* no device nodes in the root or the temp dir (root could make one
	 * for the disk and write it), and with a list nothing executable */
	noexec = ~(LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK) & (lists ? ~LL_FS_EXECUTE : ~0ULL);
	attrsize = abi >= 6 ? sizeof(attr) : abi >= 4 ? 16 : 8;
	if (o->fs)
		attr.handled_access_fs = all;
	if (o->no_network && !sb->netns) {
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		sb->no_udp = true;
	}
	/* an abstract unix socket is a local service's as a pathname one is
	 * (a session bus, X11): sandboxed, only the sandbox's own are there */
	if (abi >= 6 && o->fs)
		attr.scoped = LL_SCOPE_SIGNAL | LL_SCOPE_ABSTRACT_UNIX;
	if (abi >= 6 && o->no_network)
		attr.scoped |= LL_SCOPE_ABSTRACT_UNIX;
	if (!attr.handled_access_fs && !attr.handled_access_net && !attr.scoped)
		return 0;
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, attrsize, 0);
	if (rs < 0)
		return wap_err_set(err, WAP_E_DISABLED, "Sandbox unavailable: landlock_create_ruleset: %s",
				   strerror(errno));
	sb->ruleset_fd = rs;
	if (!o->fs)
		return 0;

	/* the temp dir: made here, for this command alone (the caller's
	 * TMPDIR could name anything, /etc or the whole /tmp) */
	if (temp_home(home_tmp, sizeof(home_tmp), &tst, err))
		goto fail;
	snprintf(tmpl, sizeof(tmpl), "%s/XXXXXX", home_tmp);
	if (!mkdtemp(tmpl)) {
		wap_err_set(err, WAP_E_FAILED, "Sandbox: cannot make a temp dir in /tmp: %s",
			    strerror(errno));
		goto fail;
	}
	if (!(sb->tmpdir = strdup(tmpl)) || asprintf(&sb->tmpenv, "TMPDIR=%s", tmpl) < 0) {
		sb->tmpenv = NULL;
		if (!sb->tmpdir)
			rmdir(tmpl);
		wap_err_oom(err);
		goto fail;
	}
	/* an empty ROOT/.wap, so that the command cannot make one holding a
	 * config of its choosing */
	if (!o->read_only_root && ws->confined && mkdirat(ws->rootfd, ".wap", 0755) < 0 &&
	    errno != EEXIST) {
		wap_err_set(err, WAP_E_FAILED, "Sandbox: cannot make %s/.wap: %s", ws->root,
			    strerror(errno));
		goto fail;
	}
	if (!o->read_only_root && find_protected(sb, ws, err))
		goto fail;
	if (lists && (wap_strv_push(&sb->noexec, ws->root) || wap_strv_push(&sb->noexec, sb->tmpdir))) {
		wap_err_oom(err);
		goto fail;
	}
	/* the view read-only but these (seal); all of it where the root is / */
	if (strcmp(ws->root, "/") &&
	    ((!o->read_only_root && wap_strv_push(&sb->rw, ws->root)) ||
	     wap_strv_push(&sb->rw, sb->tmpdir))) {
		wap_err_oom(err);
		goto fail;
	}
	sb->no_memfd = lists;
	sb->fs = true;
	sb->mntns = true;
	sb->userns = geteuid() != 0;
	sb->uid = geteuid();
	sb->gid = getegid();
	if (asprintf(&sb->cwd, "%s/%s", ws->root, o->cwd && *o->cwd ? o->cwd : ".") < 0) {
		sb->cwd = NULL;
		wap_err_oom(err);
		goto fail;
	}
	if (extras_make(&ex, ws, o, home_tmp, err) || plan_view(sb, ws, &ex, home_tmp, err))
		goto fail;

	if (add_rule(rs, ws->root, ws->rootfd, (o->read_only_root ? rd : all) & noexec, all, err))
		goto fail;
	if (add_rule(rs, sb->tmpdir, -1, all & noexec, all, err))
		goto fail;
	if (lists && (sb->list_fd = list_layer(ws, o, &ex, abi, home_tmp, &tst, err)) < 0)
		goto fail;
	/* the resolver's config may be a link into /run, which the view
	 * hides but for it */
	if (add_rule(rs, "/etc/resolv.conf", -1, LL_FS_READ_FILE, all, err))
		goto fail;
	for (int i = 0; sysdirs[i]; i++)
		if (add_rule(rs, sysdirs[i], -1, !strcmp(sysdirs[i], "/dev") ? LL_FS_READ_DIR : rd,
			     all, err))
			goto fail;
	/* the command's own /dev/pts (wap_sandbox_enter) gets these too */
	sb->pts_access = (LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV | rd) &
			 noexec & all;
	for (int i = 0; devfiles[i]; i++)
		if (add_rule(rs, devfiles[i], -1, sb->pts_access, all, err))
			goto fail;
	/* and its own /proc what /proc has (the list layer's: grant_tree),
	 * unless a proc of its own would uncover what is hidden */
	sb->proc_access = proc_covered() ? 0 : rd & all;
	sb->proc_list = sb->list_fd >= 0 ? LL_FS_EXECUTE | LL_FS_READ_FILE : 0;
	for (size_t i = 0; ex.dirs && ex.dirs[i]; i++)
		if (add_rule(rs, ex.dirs[i], -1, rd, all, err))
			goto fail;
	for (size_t i = 0; ex.cfg && ex.cfg[i]; i++)
		if (add_rule(rs, ex.cfg[i], -1, LL_FS_READ_FILE | LL_FS_READ_DIR, all, err))
			goto fail;
	extras_free(&ex);
	return 0;
fail:
	extras_free(&ex);
	wap_sandbox_release(sb);
	return -1;
}

void wap_sandbox_release(struct wap_sandbox *sb)
{
	if (sb->ruleset_fd >= 0)
		close(sb->ruleset_fd);
	if (sb->list_fd >= 0)
		close(sb->list_fd);
	sb->ruleset_fd = sb->list_fd = -1;
	if (sb->tmpdir)
		rm_tree(sb->tmpdir);
	free(sb->tmpdir);
	free(sb->tmpenv);
	wap_view_free(&sb->view);
	free(sb->cwd);
	wap_strv_free(sb->ro);
	wap_strv_free(sb->pin);
	wap_strv_free(sb->noexec);
	wap_strv_free(sb->rw);
	sb->tmpdir = sb->tmpenv = sb->cwd = NULL;
	sb->ro = sb->noexec = sb->pin = sb->rw = NULL;
}

/* The rest of this file runs in the command's child, between its clone
 * and its exec, where that child may share the caller's memory: system
 * calls only (rsys.h), each returning -errno; no libc, no errno. */

/* Landlock's network rules cover TCP bind and connect only: not TCP fast
 * open (sendto with MSG_FASTOPEN, TCP_FASTOPEN_CONNECT), nor listen()
 * binding a port by itself, nor UDP, raw, netlink, vsock...  With
 * --no-network a seccomp filter refuses (EACCES) every socket() but
 * AF_UNIX, and io_uring (which could make sockets without the socket()
 * call).  For 32-bit (and x32) code, every socket() and socketcall() is
 * refused.  Other architectures than x86-64 and arm64: no filter, and
 * Landlock's rules hold alone, so only a kernel with ABI < 4 (a network
 * namespace) is really off the network there. */
#if defined(__x86_64__)
#define NATIVE_ARCH	AUDIT_ARCH_X86_64
#define COMPAT_ARCH	AUDIT_ARCH_I386
#define COMPAT_SOCKET	359
#define COMPAT_SOCKETCALL 102
#define COMPAT_MEMFD	356
#define X32_BIT		0x40000000u
#elif defined(__aarch64__)
#define NATIVE_ARCH	AUDIT_ARCH_AARCH64
#define COMPAT_ARCH	AUDIT_ARCH_ARM
#define COMPAT_SOCKET	281
#define COMPAT_SOCKETCALL 0xffffffffu	/* none on arm */
#define COMPAT_MEMFD	385
#define X32_BIT		0x40000000u	/* no such numbers: never matches */
#endif
#define IO_URING_SETUP	425	/* the same number on every architecture */
#define DENY		(SECCOMP_RET_ERRNO | EACCES)
#define ALLOW		SECCOMP_RET_ALLOW

static int no_net_filter(void)
{
#ifdef NATIVE_ARCH
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))	/* little-endian */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_ARCH, 0, 12),
		/* 32-bit: no socket() at all */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_SOCKET, 9, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_SOCKETCALL, 8, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IO_URING_SETUP, 7, 8),
		/* native */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IO_URING_SETUP, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, X32_BIT | IO_URING_SETUP, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, X32_BIT | SYS_socket, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 3),
		/* socket(domain, ...): unix sockets only */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, DENY),	/* 14 */
		BPF_STMT(BPF_RET | BPF_K, ALLOW),	/* 15 */
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	return (int)R5(prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
#undef ARG_LO
#else
	return 0;
#endif
}

/* System calls the file system sandbox refuses (EACCES), by a seccomp
 * filter: open_by_handle_at always (root opens a file by its handle
 * through any mount of the file system: a writable one, past the
 * read-only .git), the kernel keyrings always (add_key, request_key,
 * keyctl: no namespace of the sandbox's holds them, so the session
 * keyring wap was started in, and as root root's user keyring, were the
 * command's to read and to plant keys in that outlive it), and with a
 * command list memfd_create (Landlock does not see its files: an
 * executable copy of a denied program could run from one; last, so that
 * it is left out without a list).
 *
 * And a mode with the set-user-ID or set-group-ID bit, given to chmod,
 * fchmod, fchmodat(2), open, openat, creat, mknod(at): such a program left
 * in the root runs as its owner for whoever reaches it (wap's user; root
 * where wap is root), outside any sandbox.  openat2 (its mode is in a
 * struct seccomp cannot read) and io_uring can still make an empty one:
 * the command has no CAP_FSETID (drop_caps), so its first write clears
 * the bit. */
#ifdef NATIVE_ARCH
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#define SETID_BITS	06000
#define TO_ALLOW	0xff	/* jump targets, resolved when the filter is done */
#define TO_DENY		0xfe
#define TO_COMPAT	0xfd

struct setid_call {
	unsigned nr, arg;	/* the system call, and which argument is its mode */
};

#if defined(__x86_64__)
#define COMPAT_OPEN_BY_HANDLE 342
#define COMPAT_ADD_KEY	286	/* request_key and keyctl follow it */
static const struct setid_call native_setid[] = {
	{ SYS_chmod, 1 }, { SYS_fchmod, 1 }, { SYS_fchmodat, 2 }, { SYS_fchmodat2, 2 },
	{ SYS_open, 2 }, { SYS_openat, 3 }, { SYS_creat, 1 }, { SYS_mknod, 1 }, { SYS_mknodat, 2 },
};
static const struct setid_call compat_setid[] = {	/* i386 */
	{ 15, 1 }, { 94, 1 }, { 306, 2 }, { 452, 2 }, { 5, 2 }, { 295, 3 }, { 8, 1 }, { 14, 1 },
	{ 297, 2 },
};
#else
#define COMPAT_OPEN_BY_HANDLE 371
#define COMPAT_ADD_KEY	309
static const struct setid_call native_setid[] = {
	{ SYS_fchmod, 1 }, { SYS_fchmodat, 2 }, { SYS_fchmodat2, 2 }, { SYS_openat, 3 },
	{ SYS_mknodat, 2 },
};
static const struct setid_call compat_setid[] = {	/* arm */
	{ 15, 1 }, { 94, 1 }, { 333, 2 }, { 452, 2 }, { 5, 2 }, { 322, 3 }, { 8, 1 }, { 14, 1 },
	{ 324, 2 },
};
#endif

#define NSETID(v) (sizeof(v) / sizeof((v)[0]))

static void put_insn(struct sock_filter *f, int *k, struct sock_filter i)
{
	f[(*k)++] = i;
}

/* The checks of one architecture: NR (loaded) one of DENY (and its x32
 * twin, with X32), or one of SETID with a set-ID mode. */
static void arch_checks(struct sock_filter *f, int *k, const unsigned *deny, int n,
			const struct setid_call *setid, size_t ns, bool x32)
{
	for (int twin = 0; twin <= (int)x32; twin++) {
		unsigned bit = twin ? X32_BIT : 0;
		for (int i = 0; i < n; i++)
			put_insn(f, k, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								    bit | deny[i], TO_DENY, 0));
		for (size_t i = 0; i < ns; i++) {
			/* the mode loaded over the number: this call decides */
			put_insn(f, k, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								    bit | setid[i].nr, 0, 2));
			put_insn(f, k, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
				offsetof(struct seccomp_data, args) + 8 * setid[i].arg));
			put_insn(f, k, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
								    SETID_BITS, TO_DENY, TO_ALLOW));
		}
	}
}

static int deny_filter(bool memfd)
{
	const unsigned native[] = { SYS_open_by_handle_at, SYS_add_key, SYS_request_key, SYS_keyctl,
				    SYS_memfd_create };
	const unsigned compat[] = { COMPAT_OPEN_BY_HANDLE, COMPAT_ADD_KEY, COMPAT_ADD_KEY + 1,
				    COMPAT_ADD_KEY + 2, COMPAT_MEMFD };
	int n = (int)(sizeof(native) / sizeof(native[0])) - !memfd, k = 0, compat_at, allow, deny;
	struct sock_filter f[2 * 5 + 3 * 5 + 6 * NSETID(native_setid) + 3 * NSETID(compat_setid) + 8];
	struct sock_fprog prog = { .filter = f };
	const unsigned ld_nr = offsetof(struct seccomp_data, nr);

	put_insn(f, &k, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						     offsetof(struct seccomp_data, arch)));
	put_insn(f, &k, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0,
						     TO_COMPAT));
	put_insn(f, &k, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ld_nr));
	arch_checks(f, &k, native, n, native_setid, NSETID(native_setid), true);
	put_insn(f, &k, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ALLOW));
	compat_at = k;
	put_insn(f, &k, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_ARCH, 0,
						     TO_ALLOW));
	put_insn(f, &k, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ld_nr));
	arch_checks(f, &k, compat, n, compat_setid, NSETID(compat_setid), false);
	allow = k;
	put_insn(f, &k, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ALLOW));
	deny = k;
	put_insn(f, &k, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, DENY));
	/* the jumps: relative, forward, each within 255 (the filter is short) */
	for (int i = 0; i < k; i++) {
		unsigned char *j[2] = { &f[i].jt, &f[i].jf };
		if (BPF_CLASS(f[i].code) != BPF_JMP)
			continue;
		for (int w = 0; w < 2; w++)
			if (*j[w] == TO_ALLOW || *j[w] == TO_DENY || *j[w] == TO_COMPAT)
				*j[w] = (unsigned char)((*j[w] == TO_ALLOW ? allow :
							 *j[w] == TO_DENY ? deny : compat_at) - i - 1);
	}
	prog.len = (unsigned short)k;
	return (int)R5(prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}
#else
static int deny_filter(bool memfd)
{
	(void)memfd;
	return 0;
}
#endif

#ifndef SYS_open_tree
#define SYS_open_tree 428
#define SYS_move_mount 429
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#define OT_CLONE		1
#define OT_CLOEXEC		O_CLOEXEC
#define MM_F_EMPTY_PATH		0x00000004
#define MA_RDONLY		0x00000001
#define MA_NOEXEC		0x00000008

struct ll_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

/* Mount a copy of PATH over itself with ATTR (MOUNT_ATTR_*; 0: none, a
 * bind of PATH on itself). */
static int remount(const char *path, uint64_t attr)
{
	struct ll_mount_attr ma = { .attr_set = attr };
	long t = R3(open_tree, AT_FDCWD, path, OT_CLONE | OT_CLOEXEC | AT_RECURSIVE), e = 0;

	if (t < 0)
		return (int)-t;
	if (attr)
		e = R5(mount_setattr, t, "", AT_EMPTY_PATH | AT_RECURSIVE, &ma, sizeof(ma));
	if (e >= 0)
		e = R5(move_mount, t, "", AT_FDCWD, path, MM_F_EMPTY_PATH);
	R1(close, t);
	return e < 0 ? (int)-e : 0;
}

/* Landlock does not see a change of a file's metadata: chmod, chown,
 * utimes, extended attributes, file flags (FS_IOC_SETFLAGS, file_setattr).
 * Root (CAP_CHOWN, CAP_FOWNER) made a node of the host's /dev 0666 (the
 * disk, for every user) or a sysfs file readable by all; any user changed
 * and tagged its own files outside the root (a user.* xattr needs only
 * write permission), and under --read-only those of the root.  So every
 * mount of the view is made read-only (EROFS) but RW (the root, the temp
 * dir), copies of which are taken first, as they are, and put back on
 * top (none where the root is /: nothing there to keep).  0, or an
 * errno. */
static int seal(char *const *rw)
{
	struct ll_mount_attr ma = { .attr_set = MA_RDONLY };
	long t[2], e = 0;
	size_t n = 0;

	if (!rw)
		return 0;
	for (; rw[n] && n < 2; n++)
		if ((e = t[n] = R3(open_tree, AT_FDCWD, rw[n], OT_CLONE | OT_CLOEXEC | AT_RECURSIVE)) < 0)
			break;
	if (e >= 0)
		e = R5(mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ma, sizeof(ma));
	for (size_t i = 0; i < n && e >= 0; i++)
		e = R5(move_mount, t[i], "", AT_FDCWD, rw[i], MM_F_EMPTY_PATH);
	for (size_t i = 0; i < n; i++)
		R1(close, t[i]);
	return e < 0 ? (int)-e : 0;
}

/* Landlock holds for root too, but not against what capabilities reach
 * beyond files: loading a kernel module (init_module from a file in the
 * root), raw I/O, reboot, the host's name and clock, bpf...  A sandboxed
 * command keeps only what file work as root needs (Docker's default set,
 * less mknod, raw sockets, file capabilities and CAP_FSETID, with which a
 * write keeps a set-user-ID bit: see deny_filter), in its bounding set
 * too, so that no program it runs gets more back. */
#define KEEP_CAPS ((1u << CAP_CHOWN) | (1u << CAP_DAC_OVERRIDE) | (1u << CAP_FOWNER) | \
		   (1u << CAP_KILL) | (1u << CAP_SETGID) | \
		   (1u << CAP_SETUID) | (1u << CAP_NET_BIND_SERVICE) | (1u << CAP_SYS_CHROOT) | \
		   (1u << CAP_AUDIT_WRITE))

static int drop_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	long e;

	if ((e = R2(capget, &h, d)) < 0)
		return (int)-e;
	if (d[0].permitted & (1u << CAP_SETPCAP))
		for (int c = 0; c < 64; c++)
			if (c >= 32 || !(KEEP_CAPS & (1u << c)))
				if ((e = R5(prctl, PR_CAPBSET_DROP, c, 0, 0, 0)) < 0 && e != -EINVAL)
					return (int)-e;
	R5(prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	for (int i = 0; i < 2; i++) {
		uint32_t keep = i ? 0 : KEEP_CAPS;
		d[i].effective &= keep;
		d[i].permitted &= keep;
		d[i].inheritable &= keep;
	}
	if ((e = R2(capset, &h, d)) < 0)
		return (int)-e;
	return 0;
}

/* Does this process hold CAP_SYS_ADMIN in its user namespace?  A command
 * whose init made one for its PID namespace does (wap not root): its mount
 * namespace is made there, not in one more, so that it may mount a proc of
 * that PID namespace (owned by the init's user namespace). */
static bool admin_here(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	return R2(capget, &h, d) >= 0 && (d[0].effective & (1u << CAP_SYS_ADMIN));
}

/* A proc of this process's PID namespace on /proc, granted what the
 * host's has: the command sees the processes of its namespace alone, and
 * no other's command line; of those, only what it may ptrace
 * (hidepid=ptraceable; not =invisible, which shows all to the group of
 * proc's gid=, root's, and root may take any group): not its init, the
 * supervisor, which lives in wap's mount namespace (its mountinfo was
 * the server's mount table).  A copy of its init's (SB->proc_fd) where there
 * is one: the same inode for every command of the namespace, so that the
 * kept list layer names it once (a rule for it again is the same rule).
 * Else one made here, but not under a list: each a new inode, a new rule
 * that the kept layer would keep.  Where none can be had (no PID namespace
 * of its own, no right to, or a kernel before 6.15 for the copy) the
 * host's stays, as before.  0, or an errno. */
static int own_proc(const struct wap_sandbox *sb)
{
	struct ll_path_beneath_attr pb = { .allowed_access = sb->proc_access };
	bool kept = false;
	long e, t;

	if (!sb->proc_access || sb->ruleset_fd < 0)
		return 0;
	if (sb->proc_fd >= 0 &&
	    (t = R3(open_tree, sb->proc_fd, "", OT_CLONE | OT_CLOEXEC | AT_EMPTY_PATH)) >= 0) {
		e = R5(move_mount, t, "", AT_FDCWD, "/proc", MM_F_EMPTY_PATH);
		R1(close, t);
		if (e < 0)
			return 0;
		kept = true;
	} else if (sb->list_fd >= 0 ||
		   R5(mount, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		      "hidepid=ptraceable") < 0) {
		return 0;
	}
	if ((e = R3(openat, AT_FDCWD, "/proc", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return (int)-e;
	pb.parent_fd = (int)e;
	e = R4(landlock_add_rule, sb->ruleset_fd, LL_RULE_PATH_BENEATH, &pb, 0);
	if (e >= 0 && kept && sb->list_fd >= 0) {
		pb.allowed_access = sb->proc_list;
		e = R4(landlock_add_rule, sb->list_fd, LL_RULE_PATH_BENEATH, &pb, 0);
	}
	R1(close, pb.parent_fd);
	return e < 0 ? (int)-e : 0;
}

#ifndef SYS_fsopen
#define SYS_fsopen 430
#define SYS_fsconfig 431
#define SYS_fsmount 432
#endif

int wap_sandbox_proc(bool own_ns)
{
	long fs, m;

	/* a mount namespace of its own, its mounts the host's as slaves
	 * (one made in a user namespace cannot send any back) */
	if (own_ns && R1(unshare, CLONE_NEWNS) < 0)
		return -1;
	if ((fs = R2(fsopen, "proc", 1 /* FSOPEN_CLOEXEC */)) < 0)
		return -1;
	m = R5(fsconfig, fs, 1 /* FSCONFIG_SET_STRING */, "source", "proc", 0);
	if (m >= 0)	/* own_proc: a kernel before 5.8 has it not */
		R5(fsconfig, fs, 1, "hidepid", "ptraceable", 0);
	if (m >= 0)
		m = R5(fsconfig, fs, 6 /* FSCONFIG_CMD_CREATE */, NULL, NULL, 0);
	if (m >= 0)
		m = R3(fsmount, fs, 1 /* FSMOUNT_CLOEXEC */, 0x2 | 0x4 | 0x8 /* NOSUID NODEV NOEXEC */);
	R1(close, fs);
	return m < 0 ? -1 : (int)m;
}

/* The device and inode of the working directory, to *DEV and *INO. */
static long cwd_id(uint64_t *dev, uint64_t *ino)
{
	struct statx st = { 0 };
	long e = R5(statx, AT_FDCWD, ".", 0, STATX_INO, &st);

	*dev = (uint64_t)st.stx_dev_major << 32 | st.stx_dev_minor;
	*ino = st.stx_ino;
	return e;
}

int wap_sandbox_enter(const struct wap_sandbox *sb, const char **what)
{
	struct rlimit rl;
	long e;

#define LIMIT(res, v, name) \
	if (v > 0) { \
		rl.rlim_cur = rl.rlim_max = (rlim_t)v; \
		if ((e = R4(prlimit64, 0, res, &rl, NULL)) < 0) { *what = name; return (int)-e; } \
	}
	LIMIT(RLIMIT_AS, sb->max_memory, "--max-memory");
	LIMIT(RLIMIT_NPROC, sb->max_procs, "--max-procs");
	LIMIT(RLIMIT_FSIZE, sb->max_file_size, "--max-file-size");
#undef LIMIT
	if (sb->netns || sb->mntns) {
		/* and an IPC namespace of its own: SysV IPC and POSIX
		 * message queues are the host's otherwise (a root
		 * process's segments root's to read and write), and what
		 * the command made there outlived it (memory held without
		 * end); its own goes with its last process */
		int flags = (sb->netns ? CLONE_NEWNET : 0) | (sb->mntns ? CLONE_NEWNS | CLONE_NEWIPC : 0);
		uint64_t dev = 0, ino = 0, dev2, ino2;

		*what = "working directory";
		if (sb->mntns && (e = cwd_id(&dev, &ino)) < 0)
			return (int)-e;
		*what = sb->mntns ? "mount namespace" : "network namespace";
		if (sb->userns && !admin_here()) {
			char map[32];
			*what = "user namespace";
			if ((e = R1(unshare, CLONE_NEWUSER | flags)) < 0)
				return (int)-e;
			if ((e = r_put_file("/proc/self/uid_map", r_id_map(map, sb->uid))) ||
			    (e = r_put_file("/proc/self/setgroups", "deny")) ||
			    (e = r_put_file("/proc/self/gid_map", r_id_map(map, sb->gid))))
				return (int)-e;
		} else if ((e = R1(unshare, flags)) < 0) {
			return (int)-e;
		}
		if (sb->mntns) {
			/* nothing done here may reach the parent's namespace */
			*what = "mount namespace (private /)";
			if ((e = R5(mount, NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) < 0)
				return (int)-e;
			if ((e = wap_view_enter(&sb->view, what)))
				return (int)e;
			*what = "mount namespace (read-only but the root and the temp dir)";
			if ((e = seal(sb->rw)))
				return (int)e;
			/* the user's other terminals are not the command's:
			 * a devpts of its own (/dev/ptmx opens the one at pts
			 * beside it), granted what /dev/pts was (a rule on
			 * the covered one no longer holds).  Where none can
			 * be mounted the host's stays, as before.  At most
			 * 64 ptys: every devpts but the host's first shares
			 * kernel.pty.max less its reserve (3,072), and one
			 * command took them all from every other sandboxed
			 * command (and, in a container, from the terminals). */
			if (sb->pts_access && sb->ruleset_fd >= 0 &&
			    R5(mount, "devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
			       "newinstance,ptmxmode=0666,mode=0620,max=64") == 0) {
				struct ll_path_beneath_attr pb = { .allowed_access = sb->pts_access };
				*what = "mount namespace (a devpts of its own)";
				if ((e = R3(openat, AT_FDCWD, "/dev/pts", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
					return (int)-e;
				pb.parent_fd = (int)e;
				e = R4(landlock_add_rule, sb->ruleset_fd, LL_RULE_PATH_BENEATH, &pb, 0);
				R1(close, pb.parent_fd);
				if (e < 0)
					return (int)-e;
			}
			*what = "mount namespace (a proc of its own)";
			if ((e = own_proc(sb)))
				return (int)e;
			*what = "mount namespace (noexec root and temp dir)";
			for (size_t i = 0; sb->noexec && sb->noexec[i]; i++)
				if ((e = remount(sb->noexec[i], MA_NOEXEC)))
					return (int)e;
			*what = "mount namespace (the dirs on the way to .git, .wap and the config)";
			for (size_t i = 0; sb->pin && sb->pin[i]; i++)
				if ((e = remount(sb->pin[i], 0)))
					return (int)e;
			*what = "mount namespace (read-only .git, .wap and the config)";
			for (size_t i = 0; sb->ro && sb->ro[i]; i++)
				if ((e = remount(sb->ro[i], MA_RDONLY)))
					return (int)e;
			/* the old working directory lies under the old mounts:
			 * enter it again through the new ones */
			*what = "working directory";
			if ((e = R1(chdir, sb->cwd)) < 0 || (e = cwd_id(&dev2, &ino2)) < 0)
				return (int)-e;
			if (dev2 != dev || ino2 != ino)
				return ESTALE;
		}
	}
	if (sb->ruleset_fd < 0 && !sb->netns && !sb->max_memory && !sb->max_procs &&
	    !sb->max_file_size)
		return 0;
	if (sb->fs && (e = drop_caps())) {
		*what = "capabilities";
		return (int)e;
	}
	if ((e = R5(prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) < 0) {
		*what = "no_new_privs";
		return (int)-e;
	}
	/* the small layer first: a domain copies its parent's rules */
	if (sb->ruleset_fd >= 0 && (e = R2(landlock_restrict_self, sb->ruleset_fd, 0)) < 0) {
		*what = "landlock_restrict_self";
		return (int)-e;
	}
	if (sb->list_fd >= 0 && (e = R2(landlock_restrict_self, sb->list_fd, 0)) < 0) {
		*what = "landlock_restrict_self";
		return (int)-e;
	}
	if (sb->no_udp && (e = no_net_filter()) < 0) {
		*what = "seccomp";
		return (int)-e;
	}
	if (sb->fs && (e = deny_filter(sb->no_memfd)) < 0) {
		*what = "seccomp";
		return (int)-e;
	}
	return 0;
}

/* Push onto *DIRS (real paths) what a program found at FOUND reads of its
 * install, outside the system dirs: its install prefix, the parent of the
 * dir it was found in (/x/node_modules/.bin/p -> /x/node_modules).  Never
 * / nor $HOME nor a directory holding it (a server in ~/bin, npm's prefix
 * ~, would read ~/.ssh: its bin dir is granted then).  A prefix inside
 * $HOME is a user's dir of config, data and credentials as much as the
 * program's (~/.cargo/credentials.toml, ~/.local/share): there its bin dir
 * and the prefix's lib, lib64 and libexec (its code: pip --user's
 * site-packages), or a node_modules whole (packages only).  0, or -1 when
 * out of memory. */
int wap_sandbox_prefix(const char *found, char ***dirs)
{
	static const char *const code[] = { "lib", "lib64", "libexec" };
	const char *home = getenv("HOME"), *base;
	char *h = home && *home == '/' ? realpath(home, NULL) : NULL;
	char *d = strdup(found), *bin = NULL, *pre = NULL, *sl, *r;
	int rc = -1;

	if (!d)
		goto out;
	for (int i = 0; i < 2 && (sl = strrchr(d, '/')) && sl != d; i++) {
		*sl = 0;
		r = realpath(d, NULL);
		if (!r || !strcmp(r, "/") || (h && wap_path_within(h, r))) {
			free(r);
			break;
		}
		if (i)
			pre = r;
		else
			bin = r;
	}
	base = pre ? strrchr(pre, '/') + 1 : NULL;
	if (pre && (!h || !wap_path_within(pre, h) || !strcmp(base, "node_modules"))) {
		rc = wap_strv_push(dirs, pre);
		goto out;
	}
	if (bin && wap_strv_push(dirs, bin))
		goto out;
	for (size_t i = 0; pre && i < sizeof(code) / sizeof(*code); i++) {
		char *c;
		if (asprintf(&c, "%s/%s", pre, code[i]) < 0)
			goto out;
		r = realpath(c, NULL);
		free(c);
		/* not where a link of it leads out of the prefix */
		if (r && wap_path_within(r, pre) && strcmp(r, pre) && wap_strv_push(dirs, r)) {
			free(r);
			goto out;
		}
		free(r);
	}
	rc = 0;
out:
	free(d);
	free(h);
	free(bin);
	free(pre);
	return rc;
}
