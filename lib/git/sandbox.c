/* git/sandbox.c - the Landlock-confined thread an action runs in: its
 * reads and writes cannot leave the workspace root (and the user's git
 * set-up) whatever links libgit2 follows; without Landlock, actions that
 * write are refused (fail closed). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "landlock.h"

/* ---- the sandbox ----
 *
 * libgit2 reads and writes the work tree and .git by path, following
 * symbolic links (a tracked directory replaced by a link out of the root,
 * .git/logs/HEAD, .git/index or .git/config made links, a config or index
 * filebuf that resolves links on purpose, a .gitignore or .gitmodules
 * linked to a file outside...).  Rather than chase each of those, an
 * action runs in a thread of its own that first enters a Landlock domain:
 * it may write (create, remove, rename, truncate) only beneath the root,
 * and read only beneath the root and what the user's own git set-up names
 * (user_git_files, confine.c: the system, XDG and global configs, what
 * they include and name, the template dir), with, for the actions that
 * may reach a remote, what a connection reads (net_reads below).  The
 * kernel then refuses any open that resolves elsewhere, whatever reader
 * libgit2 opened it with: wap's own checks of the config (confine.c) need
 * not agree with libgit2's byte for byte to keep a file outside unread.
 * Landlock domains belong to a thread (and pass to the threads it starts),
 * so the rest of `wap serve` is not confined; the one-shot CLI enters the
 * domain on its only thread (run_confined).  Without Landlock (ABI 2, for
 * REFER: libgit2 renames objects across directories), actions that write
 * are refused (wap fails closed), and the others run with wap's own
 * checks only. */
#define GL_READ_FILE	(1ULL << 2)
#define GL_READ_DIR	(1ULL << 3)
#define GL_WRITE_ALL	(((1ULL << 13) - 1) & ~((1ULL << 0) | GL_READ_FILE | GL_READ_DIR))
#define GL_REFER	(1ULL << 13)	/* ABI 2 */
#define GL_TRUNCATE	(1ULL << 14)	/* ABI 3 */
#define GL_RULE_PATH_BENEATH 1

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct gl_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* What a fetch, push, pull or clone may read besides: the CA
 * certificates (libgit2 reads them at the first TLS connection), the
 * resolver's files, the shared libraries loaded then (libssh2, GSS-API,
 * NSS), the hosts SSH knows; the bundle and dir libgit2 was told of are
 * added by net_rules.  Nothing here is a secret of the user's. */
static const char *const net_reads[] = {
	"/etc/ssl", "/etc/pki", "/etc/ca-certificates", "/usr/share/ca-certificates",
	"/usr/local/share/ca-certificates", "/usr/lib/ssl",
	"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf",
	"/etc/services", "/etc/protocols", "/etc/krb5.conf", "/etc/ld.so.cache",
	"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib",
	NULL
};

/* Is the absolute path P, or any link on the way to what it names, at or
 * beneath the root?  Resolved a component at a time, as the kernel does;
 * true too when it cannot be told.  A grant must not be steered by what
 * the workspace holds: $HOME the workspace, ~/.config/git/attributes made
 * a link to / would open every file to libgit2. */
static bool through_root(const struct wap_ws *ws, const char *p)
{
	char cur[PATH_MAX], rest[PATH_MAX], link[PATH_MAX], *r = rest;
	size_t clen = 0;
	int hops = 0;

	if (p[0] != '/' || strlen(p) >= sizeof(rest))
		return true;
	memcpy(rest, p, strlen(p) + 1);
	cur[0] = 0;
	while (*r) {
		size_t n;
		struct stat st;
		ssize_t l;

		r += strspn(r, "/");
		n = strcspn(r, "/");
		if (!n)
			break;
		if (n == 1 && r[0] == '.') {
			r += n;
			continue;
		}
		if (n == 2 && r[0] == '.' && r[1] == '.') {
			while (clen && cur[--clen] != '/')
				;
			cur[clen] = 0;
			r += n;
			continue;
		}
		if (clen + 1 + n >= sizeof(cur))
			return true;
		cur[clen] = '/';
		memcpy(cur + clen + 1, r, n);
		cur[clen + 1 + n] = 0;
		r += n;
		if (!strncmp(cur, ws->root, ws->rootlen) &&
		    (cur[ws->rootlen] == '/' || !cur[ws->rootlen] || ws->rootlen == 1))
			return true;
		if (lstat(cur, &st))
			return true;	/* not there: nothing to grant */
		if (!S_ISLNK(st.st_mode)) {
			clen += 1 + n;
			continue;
		}
		if (++hops > 40 || (l = readlink(cur, link, sizeof(link) - 1)) <= 0)
			return true;
		link[l] = 0;
		if (strlen(link) + 1 + strlen(r) >= sizeof(rest))
			return true;
		memmove(rest + strlen(link) + 1, r, strlen(r) + 1);
		memcpy(rest, link, (size_t)l);
		rest[l] = '/';
		r = rest;
		if (link[0] == '/')
			clen = 0;
		cur[clen] = 0;
	}
	return false;
}

enum { R_FILE = 1, R_DIR = 2, R_ANY = 3 };

/* Allow reading PATH in the ruleset RS: a regular file (KIND R_FILE), a
 * directory and what is beneath it (R_DIR), or either (R_ANY); a path that
 * is not there, is not of that kind, or resolves through the root
 * (through_root) adds nothing.  0, or -1 (errno). */
static int allow_read(const struct wap_ws *ws, int rs, const char *path, int kind)
{
	struct gl_path_beneath pb;
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return 0;
	if (!fstat(fd, &st) && ((S_ISDIR(st.st_mode) && (kind & R_DIR)) ||
				(S_ISREG(st.st_mode) && (kind & R_FILE))) &&
	    !through_root(ws, path)) {
		pb.allowed_access = S_ISDIR(st.st_mode) ? GL_READ_FILE | GL_READ_DIR : GL_READ_FILE;
		pb.parent_fd = fd;
		rc = (int)syscall(SYS_landlock_add_rule, rs, GL_RULE_PATH_BENEATH, &pb, 0);
	}
	close(fd);
	return rc < 0 ? -1 : 0;
}

/* The reads of a connection (net_reads, $LD_LIBRARY_PATH's dirs, the CA
 * paths, ~/.ssh/known_hosts) */
static int net_rules(const struct wap_ws *ws, int rs)
{
	const char *file, *dir, *home = getenv("HOME"), *llp = getenv("LD_LIBRARY_PATH");
	int rc = 0;

	for (int i = 0; net_reads[i] && !rc; i++)
		rc = allow_read(ws, rs, net_reads[i], R_ANY);
	/* the dirs the invoker's loader searches first for libssh2 & co. */
	for (const char *d = llp; d && *d && !rc; d += strspn(d, ":")) {
		char lib[PATH_MAX];
		size_t n = strcspn(d, ":");
		if (d[0] == '/' && n < sizeof(lib)) {
			memcpy(lib, d, n);
			lib[n] = 0;
			rc = allow_read(ws, rs, lib, R_DIR);
		}
		d += n;
	}
	wap_git_cert_paths(&file, &dir);
	if (!rc && file)
		rc = allow_read(ws, rs, file, R_FILE);
	if (!rc && dir)
		rc = allow_read(ws, rs, dir, R_DIR);
	if (!rc && home && *home == '/') {
		char kh[PATH_MAX];
		if (snprintf(kh, sizeof(kh), "%s/.ssh/known_hosts", home) < (int)sizeof(kh))
			rc = allow_read(ws, rs, kh, R_FILE);
	}
	return rc;
}

/* A ruleset fd for action A: writes beneath the root only, reads beneath
 * it and what user_git_files names (and net_rules for A_NET); -1 with ERR. */
static int action_ruleset(const struct wap_ws *ws, const struct action *a, struct wap_err *err)
{
	uint64_t handled = GL_WRITE_ALL | GL_REFER | GL_READ_FILE | GL_READ_DIR;
	struct gl_path_beneath pb;
	struct strv user = { 0 }, udirs = { 0 };
	int abi = wap_landlock_abi(), rs, rc;
	const char *what = "landlock_add_rule";

	if (abi < 2)
		return wap_err_set(err, WAP_E_DISABLED,
			"Sandbox unavailable: this kernel has no Landlock (ABI 2 or later), which wap git "
			"needs to keep '%s' from writing through symbolic links out of the workspace root; "
			"refusing to write", a->name);
	if (abi >= 3)
		handled |= GL_TRUNCATE;
	rs = (int)syscall(SYS_landlock_create_ruleset, &handled, sizeof(handled), 0);
	if (rs < 0)
		return wap_err_set(err, WAP_E_DISABLED, "Sandbox unavailable: landlock_create_ruleset: %s",
				   strerror(errno));
	pb.allowed_access = handled;
	pb.parent_fd = ws->rootfd;
	rc = (int)syscall(SYS_landlock_add_rule, rs, GL_RULE_PATH_BENEATH, &pb, 0);
	if (!rc && (rc = user_git_files(ws, &user, &udirs)) == -ENOMEM) {
		strv_free(&user);
		strv_free(&udirs);
		close(rs);
		return wap_err_oom(err);
	}
	for (size_t i = 0; !rc && i < user.n; i++)
		rc = allow_read(ws, rs, user.v[i], R_FILE);
	for (size_t i = 0; !rc && i < udirs.n; i++)
		rc = allow_read(ws, rs, udirs.v[i], R_DIR);
	strv_free(&user);
	strv_free(&udirs);
	if (!rc && (a->flags & A_NET))
		rc = net_rules(ws, rs);
	if (rc < 0) {
		int e = errno;
		close(rs);
		return wap_err_set(err, WAP_E_DISABLED, "Sandbox unavailable: %s: %s", what, strerror(e));
	}
	return rs;
}

/* Does this request write?  (branch writes only with --create/--delete.) */
static bool action_writes(struct g *g, const struct action *a)
{
	return (a->flags & A_WRITE) ||
	       (!strcmp(a->name, "branch") && (bool_key(g, "create") || bool_key(g, "delete")));
}

static int run_action(struct g *g, const struct action *a, json_t **res)
{
	bool ro = !action_writes(g, a);
	int rc = -1;

	/* libgit2's path look-ups answered once an action (git.c), the
	 * opening of the repository included; its stat() and access() too
	 * when the action writes nothing */
	git_memo(true, ro);
	if ((a->flags & A_NOREPO) && check_user_config(g))
		goto out;
	if (!(a->flags & A_NOREPO)) {
		const char *cd;
		if (open_repo(g, a->flags & A_WRITE))
			goto out;
		cd = git_repository_commondir(g->repo);
		if (!ro &&
		    (check_gitdir_writes(g, git_repository_path(g->repo)) ||
		     (cd && strcmp(cd, git_repository_path(g->repo)) && check_gitdir_writes(g, cd))))
			goto out;
		if ((a->flags & A_WORKTREE) && check_submodules(g))
			goto out;
	}
	rc = a->fn(g, res);
out:
	git_memo(false, false);
	return rc;
}

struct confined {
	struct g *g;
	const struct action *a;
	json_t **res;
	int ruleset, rc;
};

/* Enter the domain (this thread and the threads it starts, for good) and
 * run the action. */
static void confine_and_run(struct confined *c)
{
	const char *what = "no_new_privs";

	/* the local time zone read now (glibc keeps it): its file is outside
	 * the root, and log --since takes a date as local time, as git */
	tzset();
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    (what = "landlock_restrict_self", syscall(SYS_landlock_restrict_self, c->ruleset, 0) < 0)) {
		c->rc = wap_err_set(c->g->err, WAP_E_DISABLED, "Sandbox unavailable: %s: %s", what,
				    strerror(errno));
		return;
	}
	c->g->kernel_reads = true;
	c->rc = run_action(c->g, c->a, c->res);
	if (c->rc && git_special() && strstr(c->g->err->msg, strerror(EACCES))) {
		wap_err_set(c->g->err, WAP_E_ACCESS, "Access denied: %s is not a regular file (a FIFO, "
			    "a socket or a device); wap git does not read it", git_special());
		git_error_clear();
		return;
	}
	/* libgit2 failing on EACCES: most likely a read or write that
	 * resolved out of the root (as root nothing else says EACCES) */
	if (c->rc && (c->g->err->kind == WAP_E_FAILED || c->g->err->kind == WAP_E_CONFLICT) &&
	    strstr(c->g->err->msg, strerror(EACCES))) {
		char msg[sizeof(c->g->err->msg)];
		snprintf(msg, sizeof(msg), "%s", c->g->err->msg);
		wap_err_set(c->g->err, WAP_E_ACCESS,
			    "Access denied: git %s may read and write only beneath the workspace root, "
			    "and read the user's git configuration (does a symbolic link in the work "
			    "tree or in .git, or a file .git names, lead out of it?): %s",
			    c->a->name, msg);
	}
	git_error_clear();
}

static void *confined_run(void *p)
{
	confine_and_run(p);
	return NULL;
}

/* LeakSanitizer reads /proc/PID/task when the process exits: a sanitized
 * build confines a thread, never its main one. */
#ifdef __SANITIZE_ADDRESS__
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

/* Run action A: confined to the root (and the user's git set-up) when
 * Landlock is there; without it, only actions that do not write run.  The one-shot
 * CLI (call->oneshot) confines its own thread: it has no other thread
 * then, and after the action only writes to its open stdout/stderr and
 * exits, so the domain costs it nothing, and the hand-off to a thread and
 * back (a millisecond of wall time on a loaded machine) is saved.  A
 * server keeps its threads unconfined: each action gets a thread. */
int run_confined(struct g *g, const struct action *a, json_t **res)
{
	struct confined c = { g, a, res, -1, -1 };
	struct wap_err e2 = { 0 };
	pthread_t t;
	int e;

	if (!g->ws->confined)
		return run_action(g, a, res);
	c.ruleset = action_ruleset(g->ws, a, &e2);
	if (c.ruleset < 0) {
		if (action_writes(g, a)) {
			*g->err = e2;
			return -1;
		}
		wap_err_release(&e2);
		return run_action(g, a, res);
	}
	if (g->call->oneshot && !SANITIZED) {
		confine_and_run(&c);
		close(c.ruleset);
		return c.rc;
	}
	e = pthread_create(&t, NULL, confined_run, &c);
	if (e) {
		close(c.ruleset);
		return wap_err_set(g->err, WAP_E_FAILED, "cannot start a thread: %s", strerror(e));
	}
	pthread_join(t, NULL);
	close(c.ruleset);
	return c.rc;
}
