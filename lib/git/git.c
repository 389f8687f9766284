/* git/git.c - the door of lib/git/git.h: wap_git_init() loads libgit2 once
 * per process, and wap_git() checks the request and the policy, then runs
 * the action (in the write sandbox, sandbox.c) from the table of actions,
 * and frees everything the call made: `wap serve` is long-lived.
 *
 * The pieces, one a verb family: status.c, diff.c, log.c (log and show),
 * commit.c (add, unstage, commit), branch.c (branch, checkout), remote.c
 * (fetch, push, pull), clone.c (init, clone); what they share: repo.c (the
 * call context, errors, small helpers, upstreams), confine.c (the
 * repository and every path and local remote beneath the root), creds.c
 * (the token and to whom it goes), sandbox.c (the Landlock-confined
 * thread an action runs in), prestat.c (what status and diff need not
 * look at: the index's stat data and cache tree, as git uses them), deps.c
 * (libgit2's SSH and GSS-API libraries, loaded on their first call where
 * libgit2 is linked in).
 * internal.h declares what they share.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "tree.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* ---- CA certificates, read when a remote is first reached ----
 * git_libgit2_init() of Debian's libgit2 (built with mbedTLS) parses every
 * certificate of the system bundle, about 4 ms of every run, though only a
 * fetch, push, pull or clone over HTTPS uses them (git reads them when its
 * https helper connects).  While do_init runs git_libgit2_init, the
 * definitions below (the executable's symbols come first in the lookup
 * scope of the libraries it loads; exported with --export-dynamic-symbol,
 * see the Makefile; where libgit2 is linked in, the linker's --wrap sends
 * its calls to them) note the bundle's path instead of parsing it;
 * wap_git_certs() hands it back to libgit2 (GIT_OPT_SET_SSL_CERT_LOCATIONS),
 * which parses it then through mbedTLS's own functions.  Until that call
 * libgit2's chain of trusted certificates is empty: a TLS connection made
 * without it fails verification (closed, never open).  Not in the static
 * build, where mbedTLS is linked in (its certificates are read at start). */
#ifndef WAP_LAZY_STATIC
static bool deferring;			/* only while do_init runs */
static char *cert_file, *cert_dir;
static pthread_once_t certs_once = PTHREAD_ONCE_INIT;
static int certs_rc;

#ifdef WAP_LINK_GIT2
/* libgit2 and mbedTLS linked in: their calls reach these through the
 * linker's --wrap (see the Makefile) */
#define CRT_PARSE_FILE __wrap_mbedtls_x509_crt_parse_file
#define CRT_PARSE_PATH __wrap_mbedtls_x509_crt_parse_path
int __real_mbedtls_x509_crt_parse_file(void *chain, const char *path);
int __real_mbedtls_x509_crt_parse_path(void *chain, const char *path);
#define real_fn(name) (__real_##name)
#else
#include <dlfcn.h>
#include <link.h>

#define CRT_PARSE_FILE mbedtls_x509_crt_parse_file
#define CRT_PARSE_PATH mbedtls_x509_crt_parse_path
#define real_fn(name) ((int (*)(void *, const char *))x509_fn(#name))

static int find_x509(struct dl_phdr_info *info, size_t size, void *p)
{
	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, "libmbedx509")) {
		*(void **)p = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
		return 1;
	}
	return 0;
}

/* mbedTLS's own function NAME (libmbedx509, loaded with libgit2). */
static void *x509_fn(const char *name)
{
	void *h = NULL, *f;

	dl_iterate_phdr(find_x509, &h);
	if (!h)
		return NULL;
	f = dlsym(h, name);
	dlclose(h);	/* libgit2 keeps it loaded */
	return f;
}
#endif

int CRT_PARSE_FILE(void *chain, const char *path);
int CRT_PARSE_PATH(void *chain, const char *path);

int CRT_PARSE_FILE(void *chain, const char *path)
{
	int (*real)(void *, const char *);

	if (deferring) {
		free(cert_file);
		cert_file = path ? strdup(path) : NULL;
		return 0;
	}
	real = real_fn(mbedtls_x509_crt_parse_file);
	return real ? real(chain, path) : -1;
}

int CRT_PARSE_PATH(void *chain, const char *path)
{
	int (*real)(void *, const char *);

	if (deferring) {
		free(cert_dir);
		cert_dir = path ? strdup(path) : NULL;
		return 0;
	}
	real = real_fn(mbedtls_x509_crt_parse_path);
	return real ? real(chain, path) : -1;
}

#ifdef WAP_LINK_GIT2
/* The same for mbedTLS's random generator: git_libgit2_init sets up its
 * entropy (HAVEGE: timing loops, 0.2 ms) and seeds it, for TLS only;
 * that is done before the certificates are read.  Until then a TLS
 * handshake fails (no seed, no randomness), never goes on unseeded. */
static void *entropy_ctx, *drbg_ctx, *drbg_entropy;
static int (*drbg_f)(void *, unsigned char *, size_t);
static const unsigned char *drbg_custom;
static size_t drbg_len;

void __real_mbedtls_entropy_init(void *ctx);
void __wrap_mbedtls_entropy_init(void *ctx);
int __real_mbedtls_ctr_drbg_seed(void *ctx, int (*f)(void *, unsigned char *, size_t), void *p,
				 const unsigned char *custom, size_t len);
int __wrap_mbedtls_ctr_drbg_seed(void *ctx, int (*f)(void *, unsigned char *, size_t), void *p,
				 const unsigned char *custom, size_t len);

void __wrap_mbedtls_entropy_init(void *ctx)
{
	if (deferring)
		entropy_ctx = ctx;
	else
		__real_mbedtls_entropy_init(ctx);
}

int __wrap_mbedtls_ctr_drbg_seed(void *ctx, int (*f)(void *, unsigned char *, size_t), void *p,
				 const unsigned char *custom, size_t len)
{
	if (!deferring)
		return __real_mbedtls_ctr_drbg_seed(ctx, f, p, custom, len);
	drbg_ctx = ctx, drbg_f = f, drbg_entropy = p, drbg_custom = custom, drbg_len = len;
	return 0;
}
#endif

#ifdef WAP_LINK_GIT2
/* And the whole of libgit2's TLS set-up (an SSL config, its ciphersuites
 * looked up by name: 1-2 % of a `git show`), done by the first TLS stream
 * or wap_git_certs, whichever comes first. */
static bool tls_deferred;
int __real_git_mbedtls_stream_global_init(void);
int __wrap_git_mbedtls_stream_global_init(void);
int __real_git_mbedtls_stream_new(void **out, const char *host, const char *port);
int __wrap_git_mbedtls_stream_new(void **out, const char *host, const char *port);
int __real_git_mbedtls_stream_wrap(void **out, void *in, const char *host);
int __wrap_git_mbedtls_stream_wrap(void **out, void *in, const char *host);

int __wrap_git_mbedtls_stream_global_init(void)
{
	if (!deferring)
		return __real_git_mbedtls_stream_global_init();
	tls_deferred = true;
	return 0;
}

static void load_certs(void);

int __wrap_git_mbedtls_stream_new(void **out, const char *host, const char *port)
{
	pthread_once(&certs_once, load_certs);
	if (certs_rc)
		return -1;
	return __real_git_mbedtls_stream_new(out, host, port);
}

int __wrap_git_mbedtls_stream_wrap(void **out, void *in, const char *host)
{
	pthread_once(&certs_once, load_certs);
	if (certs_rc)
		return -1;
	return __real_git_mbedtls_stream_wrap(out, in, host);
}
#endif
#endif	/* WAP_LAZY_STATIC */

/* ---- libgit2's path resolutions remembered through one action ----
 * libgit2 resolves the whole path of a file at each attribute look-up
 * (git_fs_path_find_dir: glibc's realpath makes a readlink a component),
 * three times for each file a diff shows (its diff driver on both sides,
 * reuse.c's filters): a third of the system calls of a `diff HEAD~50` on
 * jq.  While an action runs (run_action), the thread that runs it keeps
 * what realpath answered, as git keeps its attribute stack by directory,
 * and makes a new answer from its directory's (rp_resolve): 1259
 * readlinks of that diff before, 108 now;
 * wap's own callers (the workspace's root, Landlock's rules) run outside
 * that window.  Where libgit2 is not linked in, nothing is wrapped. */
#ifdef WAP_LINK_GIT2
#define RP_BUCKETS 256
#define RP_MAX 4096		/* paths kept at most: then no more are added */

struct rp_ent {
	struct rp_ent *next;
	char *out;
	char in[];
};

static __thread struct rp_memo {
	bool on;
	unsigned n;
	struct rp_ent *b[RP_BUCKETS];
} rpm;

char *__real_realpath(const char *path, char *resolved);
char *__wrap_realpath(const char *path, char *resolved);

static unsigned rp_hash(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h % RP_BUCKETS;
}

/* the kept answer for PATH, if any */
static struct rp_ent *rp_find(const char *path)
{
	for (struct rp_ent *e = rpm.b[rp_hash(path)]; e; e = e->next)
		if (!strcmp(e->in, path))
			return e;
	return NULL;
}

/* keep OUT as PATH's answer (while there is room) */
static void rp_keep(const char *path, const char *out)
{
	size_t n = strlen(path) + 1;
	unsigned h = rp_hash(path);
	struct rp_ent *e;

	if (rpm.n >= RP_MAX || !(e = malloc(sizeof(*e) + n)))
		return;
	if (!(e->out = strdup(out))) {
		free(e);
		return;
	}
	memcpy(e->in, path, n);
	e->next = rpm.b[h];
	rpm.b[h] = e;
	rpm.n++;
}

/* Is PATH absolute with nothing to resolve but symbolic links: no "."
 * or ".." component, no "//", no '/' at its end? */
static bool rp_plain(const char *path)
{
	if (path[0] != '/' || !path[1])
		return false;
	for (const char *p = path; *p; p++)
		if (p[0] == '/' && (!p[1] || p[1] == '/' ||
				    (p[1] == '.' && (!p[2] || p[2] == '/' ||
						     (p[2] == '.' && (!p[3] || p[3] == '/'))))))
			return false;
	return true;
}

static bool st_nolink(const char *path);

/* PATH resolved (malloc'd; NULL and errno as realpath's), its directory
 * through what is kept: one readlink() for its last component where
 * glibc makes one a component, none when the stat() memo saw it is no
 * link (libgit2 stats a file before its attribute look-up realpaths it).
 * What is not plain, or is a link, or is not there, glibc's realpath
 * answers. */
static char *rp_resolve(const char *path, int depth)
{
	struct rp_ent *e = rp_find(path);
	const char *slash = strrchr(path, '/');
	char *r = NULL, *dir, *up;

	if (e)
		return strdup(e->out);
	if (depth < 64 && rp_plain(path) &&
	    (dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path)))) {
		size_t ul, sl = strlen(slash);
		up = !strcmp(dir, "/") ? dir : rp_resolve(dir, depth + 1);
		ul = up && strcmp(up, "/") ? strlen(up) : 0;	/* "/" + "/x": "/x" */
		if (up && ul + sl < PATH_MAX && (r = malloc(ul + sl + 1))) {
			char c;
			memcpy(r, up, ul);
			memcpy(r + ul, slash, sl + 1);
			if (!st_nolink(r) && (readlink(r, &c, 1) >= 0 || errno != EINVAL)) {
				free(r);	/* a link, or not there: glibc says */
				r = NULL;
			}
		}
		if (up != dir)
			free(up);
		free(dir);
	}
	if (!r)
		r = __real_realpath(path, NULL);
	if (r)
		rp_keep(path, r);
	return r;
}

char *__wrap_realpath(const char *path, char *resolved)
{
	char *r;

	if (!rpm.on || !path)
		return __real_realpath(path, resolved);
	if (!(r = rp_resolve(path, 0)) || !resolved)
		return r;
	memcpy(resolved, r, strlen(r) + 1);	/* under PATH_MAX, as realpath's */
	free(r);
	return resolved;
}

/* stat() and access() remembered through one action that writes nothing
 * (run_action): libgit2, at each attribute look-up without a session (the
 * public API has none, and a diff's driver look-up opens one a file),
 * stats every attribute file from the file's directory up and checks the
 * system's, and at each configuration read stats the three config files:
 * some 600 system calls of a diff HEAD~50 on jq.  git reads them once a
 * process.  An action that writes (the index, a config, a checkout's
 * .gitattributes) must see its own writes: it is not given the memo.
 * wap's own stat() and access() callers (lib/proc's sandbox, which
 * compares stat(".") across a mount, lib/serve's look-ups) never run on
 * a thread inside an action. */
struct st_ent {
	struct st_ent *next;
	int rc, err;
	bool nolink;		/* 's': lstat() found it, and no link */
	struct stat st;
	char in[];		/* 's' or 'a' and access's mode, then the path */
};

static __thread struct st_memo {
	bool on;
	unsigned n;
	struct st_ent *b[RP_BUCKETS];
} stm;

int __real_stat(const char *path, struct stat *st);
int __wrap_stat(const char *path, struct stat *st);
int __real_access(const char *path, int mode);
int __wrap_access(const char *path, int mode);

/* the kept entry of KIND (MODE) for PATH, if any */
static struct st_ent *st_find(char kind, int mode, const char *path)
{
	for (struct st_ent *o = stm.b[rp_hash(path)]; o; o = o->next)
		if (o->in[0] == kind && o->in[1] == (char)('0' + (mode & 7)) &&
		    !strcmp(o->in + 2, path))
			return o;
	return NULL;
}

/* Is PATH known (this action) to be there and no link? */
static bool st_nolink(const char *path)
{
	struct st_ent *e;

	return stm.on && (e = st_find('s', 0, path)) && e->nolink;
}

/* the entry of KIND (MODE) for PATH, made by calling the real function
 * when there is none; NULL when it cannot be kept.  A stat() is made an
 * lstat(), followed by a stat() only for a link: the same answer, and
 * whether it is a link, which saves realpath its readlink(). */
static struct st_ent *st_get(char kind, int mode, const char *path)
{
	struct st_ent *e = st_find(kind, mode, path);
	size_t n = strlen(path) + 3;

	if (e)
		return e;
	if (stm.n >= RP_MAX || !(e = malloc(sizeof(*e) + n)))
		return NULL;
	e->in[0] = kind;
	e->in[1] = (char)('0' + (mode & 7));
	memcpy(e->in + 2, path, n - 2);
	e->nolink = false;
	if (kind == 'a') {
		e->rc = __real_access(path, mode);
	} else if ((e->rc = lstat(path, &e->st)) || !S_ISLNK(e->st.st_mode)) {
		/* no link; or not there, which stat() says as lstat() does */
		e->nolink = !e->rc;
	} else {
		e->rc = __real_stat(path, &e->st);
	}
	e->err = errno;
	e->next = stm.b[rp_hash(path)];
	stm.b[rp_hash(path)] = e;
	stm.n++;
	return e;
}

int __wrap_stat(const char *path, struct stat *st)
{
	struct st_ent *e;

	if (!stm.on || !path || !(e = st_get('s', 0, path)))
		return __real_stat(path, st);
	if (!e->rc)
		*st = e->st;
	errno = e->err;
	return e->rc;
}

int __wrap_access(const char *path, int mode)
{
	struct st_ent *e;

	if (!stm.on || !path || !(e = st_get('a', mode, path)))
		return __real_access(path, mode);
	errno = e->err;
	return e->rc;
}

/* ---- libgit2's open() while an action runs ----
 * libgit2 opens what it reads with open() (p_open), and waits as git does
 * for a FIFO's writer: a FIFO planted as .gitignore, .gitattributes or
 * .git/HEAD would hold the call (and a server's worker) for good.  While
 * an action runs, a file opened to read is opened without waiting and
 * must be a regular file or a directory; anything else is refused
 * (EACCES: an ignore or attribute file so refused is none, as a link out
 * of the root is) and named by git_special() for the error. */
static __thread char special[PATH_MAX];

int __real_p_open(const char *path, int flags, ...);
int __wrap_p_open(const char *path, int flags, ...);

int __wrap_p_open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	struct stat st;
	int fd;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (!rpm.on || (flags & O_ACCMODE) != O_RDONLY)
		return __real_p_open(path, flags, mode);
	fd = __real_p_open(path, flags | O_NONBLOCK, mode);
	if (fd < 0 || (!fstat(fd, &st) && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))))
		return fd;	/* O_NONBLOCK changes nothing for these */
	close(fd);
	if (!special[0])
		snprintf(special, sizeof(special), "%s", path);
	errno = EACCES;
	return -1;
}

const char *git_special(void)
{
	return special[0] ? special : NULL;
}
#else
const char *git_special(void)
{
	return NULL;
}
#endif

/* Both memos emptied, then on or off: PATHS the realpath memo, STATS the
 * stat() and access() one. */
void git_memo(bool paths, bool stats)
{
#ifdef WAP_LINK_GIT2
	if (paths)
		special[0] = 0;	/* kept after the action, for its error */
	for (int i = 0; i < RP_BUCKETS; i++) {
		while (rpm.b[i]) {
			struct rp_ent *e = rpm.b[i];
			rpm.b[i] = e->next;
			free(e->out);
			free(e);
		}
		while (stm.b[i]) {
			struct st_ent *e = stm.b[i];
			stm.b[i] = e->next;
			free(e);
		}
	}
	rpm.n = stm.n = 0;
	rpm.on = paths;
	stm.on = stats;
#else
	(void)paths;
	(void)stats;
#endif
}

#ifndef WAP_LAZY_STATIC
static void load_certs(void)
{
#ifdef WAP_LINK_GIT2
	if (tls_deferred && (certs_rc = __real_git_mbedtls_stream_global_init())) {
		git_error_set_str(GIT_ERROR_SSL, "cannot set up TLS");
		return;
	}
	if (entropy_ctx)
		__real_mbedtls_entropy_init(entropy_ctx);
	if (drbg_ctx && (certs_rc = __real_mbedtls_ctr_drbg_seed(drbg_ctx, drbg_f, drbg_entropy,
								  drbg_custom, drbg_len))) {
		git_error_set_str(GIT_ERROR_SSL, "cannot seed the random generator");
		return;
	}
#endif
	if (cert_file || cert_dir)
		certs_rc = git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, cert_file, cert_dir);
}

/* Before a remote is reached: the certificates git_libgit2_init did not
 * read.  0, or -1 with the error. */
int wap_git_certs(struct g *g)
{
	pthread_once(&certs_once, load_certs);
	if (certs_rc)
		return lg(g, certs_rc, "cannot read the CA certificates");
	return 0;
}

void wap_git_cert_paths(const char **file, const char **dir)
{
	*file = cert_file;
	*dir = cert_dir;
}
#else
int wap_git_certs(struct g *g)
{
	(void)g;
	return 0;
}

void wap_git_cert_paths(const char **file, const char **dir)
{
	*file = *dir = NULL;	/* read at start */
}
#endif

static void do_init(void)
{
#ifndef WAP_LAZY_STATIC
	deferring = true;
	git_libgit2_init();
	deferring = false;
#else
	git_libgit2_init();
#endif
	/* objects are not hashed again when read (libgit2's default, not
	 * git's: git log, show and diff read them as they are); a third of
	 * the CPU of a show */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	/* nor are commits kept in libgit2's object cache: log reads each
	 * once (log.c keeps the parents it needs), and a log of thousands
	 * held them all until the end, 6 MB of fresh pages (git frees each
	 * commit's text once printed) */
	git_libgit2_opts(GIT_OPT_SET_CACHE_OBJECT_LIMIT, GIT_OBJECT_COMMIT, (size_t)0);
}

int wap_git_init(struct wap_err *err)
{
	if (wap_lazy_load(WAP_LIB_GIT2, err))
		return -1;
	pthread_once(&init_once, do_init);
	return 0;
}

static const struct action actions[] = {
	{ "status", op_status, A_WORKTREE },
	{ "diff", op_diff, A_WORKTREE },
	{ "log", op_log, 0 },
	{ "show", op_show, 0 },
	{ "add", op_add, A_WRITE | A_WORKTREE },
	{ "stage", op_add, A_WRITE | A_WORKTREE },
	{ "unstage", op_unstage, A_WRITE | A_WORKTREE },
	{ "reset", op_unstage, A_WRITE | A_WORKTREE },
	{ "commit", op_commit, A_WRITE | A_WORKTREE },
	{ "branch", op_branch, 0 },
	{ "checkout", op_checkout, A_WRITE | A_WORKTREE },
	{ "push", op_push, A_WRITE | A_NET },
	{ "fetch", op_fetch, A_WRITE | A_NET },
	{ "pull", op_pull, A_WRITE | A_WORKTREE | A_NET },
	{ "init", op_init, A_WRITE | A_NOREPO },
	{ "clone", op_clone, A_WRITE | A_NOREPO | A_NET },
	{ NULL, NULL, 0 }
};

/* What open_repo and the look-ups after it keep, let go. */
static void repo_close(struct g *g)
{
	free(g->wd_rel);
	g->wd_rel = NULL;
	git_odb_free(g->packs);
	g->packs = NULL;
	g->packs_tried = false;
	g->abbrev = 0;
	memset(g->loose, 0, sizeof(g->loose));
	git_object_free(g->memo_obj);
	g->memo_obj = NULL;
	free(g->memo_rev);
	g->memo_rev = NULL;
	git_repository_free(g->repo);
	g->repo = NULL;
}

int wap_git(struct wap_call *call, const json_t *req, json_t **res, struct wap_err *err)
{
	struct g g = { .call = call, .ws = call->ws, .req = req, .err = err, .last_pct = -1 };
	const struct action *a;
	const char *name = NULL;
	json_t *args = json_object_get(req, "args"), *v;
	size_t i;
	int rc = -1;

	*res = NULL;
	if (wap_git_init(err))
		return -1;
	if (wap_req_str(req, "action", &name, err) < 0)
		return -1;
	if (!name)
		return wap_err_set(err, WAP_E_INVALID, "missing ACTION (see 'wap git --help')");
	for (a = actions; a->name; a++)
		if (!strcmp(a->name, name))
			break;
	if (!a->name)
		return wap_err_set(err, WAP_E_INVALID,
			"Unknown action '%s': use status, diff, log, show, add, unstage, commit, branch, checkout, push, fetch, pull, init or clone",
			name);
	if (args && !json_is_array(args))
		return wap_err_set(err, WAP_E_INVALID, "argument 'args' must be an array of strings");
	g.args = calloc(json_array_size(args) + 1, sizeof(*g.args));
	if (!g.args)
		return wap_err_oom(g.err);
	json_array_foreach(args, i, v) {
		if (!json_is_string(v)) {
			wap_err_set(err, WAP_E_INVALID, "argument 'args' must be an array of strings");
			goto out;
		}
		g.args[g.nargs++] = json_string_value(v);
	}
	if (!call->ws->pol.allow_fs) {
		wap_err_set(err, WAP_E_DISABLED,
			    "File system access is disabled by policy (security.allowFileSystemAccess)");
		goto out;
	}
	if ((a->flags & A_WRITE) && call->ws->pol.read_only) {
		wap_err_set(err, WAP_E_RESTRICTED, "Path restricted: git %s writes, and the workspace is read-only", a->name);
		goto out;
	}
	if (a->fn == op_pull) {
		/* its fetch without the tree lock (it writes inside the git
		 * dir alone), the rest with it alone (lib/serve/policy.c:
		 * WAP_OP_NETFIRST); the repository opened and checked again
		 * then */
		static const struct action fetch = { "pull", op_pull_fetch, A_WRITE | A_NET };
		bool went = wap_tree_let_go();

		if ((rc = run_confined(&g, &fetch, res)))
			goto out;
		repo_close(&g);
		if (went && (rc = wap_tree_lock(true, call->cancel, err)))
			goto out;
	}
	rc = run_confined(&g, a, res);
out:
	if (rc) {
		json_decref(*res);
		*res = NULL;
		scrub_token(err->msg, g.token);
		scrub_token(err->msg, getenv("WAP_GIT_TOKEN"));
		redact_urls(err->msg);
	}
	if (g.token) {
		explicit_bzero(g.token, strlen(g.token));
		free(g.token);
	}
	free(g.rejected);
	json_decref(g.updates);
	free(g.pull_branch);
	free(g.pull_remote);
	repo_close(&g);
	free(g.args);
	git_error_clear();
	return rc;
}
