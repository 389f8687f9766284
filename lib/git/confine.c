/* git/confine.c - keeping a repository beneath the workspace root.
 *
 * Before libgit2 opens a repository: the .git file, commondir, object
 * store and alternates must lead nowhere outside the root (check_links).
 * Before an action writes: nothing it writes in the git dir may be a
 * symbolic link (check_gitdir_writes).  After opening: the git dir, common
 * dir and work tree are where the root fd says (open_repo).  Every
 * caller's path is mapped into the repository through the root
 * (repo_path), and a local remote must be a directory beneath the root
 * (confine_local); other URL kinds are sorted by url_kind.  The kernel's
 * layer under these checks is sandbox.c. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "internal.h"

/* ---- confinement ---- */

/* Open REL (root-relative) beneath the root, for reading, as the git
 * applet reaches .git's own plumbing: the restrictedPaths policy is not
 * applied (policies usually deny .git to the file tools). */
int open_plumbing(struct g *g, const char *rel, int flags, struct wap_err *err)
{
	struct wap_ws nopol = *g->ws;

	memset(&nopol.pol.restricted, 0, sizeof(nopol.pol.restricted));
	return wap_ws_open(&nopol, rel, flags, 0, WAP_ACC_READ, err);
}

/* The directory REL (root-relative, as spelled) opened beneath the root fd
 * (as plumbing, or under the policy): *REAL gets where it really is,
 * root-relative, by asking the kernel.  SHOWN (LEN bytes) names it in the
 * error when it is not beneath the root. */
static int real_dir(struct g *g, const char *rel, bool plumbing, const char *shown, int len,
		    char **real)
{
	int fd = plumbing ? open_plumbing(g, rel, O_PATH | O_DIRECTORY, g->err)
			  : wap_ws_open(g->ws, rel, O_PATH | O_DIRECTORY, 0, WAP_ACC_READ, g->err);

	*real = NULL;
	if (fd < 0)
		return -1;
	*real = wap_ws_fd_rel(g->ws, fd);
	close(fd);
	if (!*real)
		return wap_err_set(g->err, WAP_E_ACCESS,
				   "Access denied: %.*s is outside the workspace root", len, shown);
	return 0;
}

/* ABS (a path libgit2 reported, or that we will hand it) names a directory
 * beneath the root: *REL gets where it really is, relative to the root.
 * The restrictedPaths policy is not applied here: this is how the git
 * applet itself reaches .git. */
int confirm_dir(struct g *g, const char *abs, char **rel)
{
	size_t n = strlen(abs);
	char *lex;
	int rc;

	*rel = NULL;
	while (n > 1 && abs[n - 1] == '/')
		n--;
	if (wap_ws_rel(g->ws, abs, n, &lex, g->err))
		return -1;
	rc = real_dir(g, lex, true, abs, (int)n, rel);
	free(lex);
	return rc;
}

/* Read the small file REL (root-relative; beneath the root, policy not
 * applied: this is .git's own plumbing) into BUF, NUL-terminated, without
 * the trailing white space: 1 when read, 0 when there is no such file,
 * 2 when it is a directory, -1 with the error (a FIFO or a device is
 * refused, never waited on).  WHOLE: a file longer than BUF holds is
 * refused (libgit2 reads it all: what this would not see, it would
 * follow); else only its start is wanted. */
static int read_small(struct g *g, const char *rel, char *buf, size_t size, bool whole)
{
	struct wap_err e2 = { 0 };
	struct stat st;
	ssize_t n;
	int fd;

	fd = open_plumbing(g, rel, O_RDONLY | O_NONBLOCK, &e2);
	if (fd < 0) {
		if (e2.kind == WAP_E_NOT_FOUND || e2.kind == WAP_E_NOT_DIR) {
			wap_err_release(&e2);
			return 0;
		}
		*g->err = e2;
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		if (S_ISDIR(st.st_mode))
			return 2;
		return wap_err_set(g->err, WAP_E_NOT_FILE, "Not a regular file: %s", rel);
	}
	n = read(fd, buf, size - 1);
	if (whole && n == (ssize_t)size - 1 && read(fd, &(char){ 0 }, 1) != 0) {
		close(fd);
		return wap_err_set(g->err, WAP_E_ACCESS, "Access denied: %s is longer than the %zu "
				   "bytes wap git reads to check where it leads; wap git does not follow it",
				   rel, size - 1);
	}
	close(fd);
	if (n < 0)
		return wap_err_errno(g->err, errno, rel);
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = 0;
	return 1;
}

/* TARGET, read from the file WHAT in directory BASE (root-relative, a real
 * path), names a directory: absolute, or relative to BASE.  *OUT gets where
 * it really is, root-relative; one outside the root is refused. */
static int link_dir(struct g *g, const char *base, const char *what, const char *target,
		    char **out)
{
	struct wap_sb sb = WAP_SB_INIT;
	int rc;

	if (target[0] == '/' || !strcmp(base, "."))
		wap_sb_adds(&sb, target);
	else
		wap_sb_addf(&sb, "%s/%s", base, target);
	if (sb.oom)
		return wap_err_oom(g->err);
	rc = confirm_dir(g, sb.buf, out);
	if (rc && g->err->kind == WAP_E_ACCESS)
		wap_err_set(g->err, WAP_E_ACCESS,
			    "Access denied: %s%s%s names %s, which is outside the workspace root; "
			    "wap git does not follow it", strcmp(base, ".") ? base : "",
			    strcmp(base, ".") ? "/" : "", what, target);
	wap_sb_release(&sb);
	return rc;
}

/* The directory DIR (root-relative) opened as plumbing, to read; NULL
 * with the error. */
static DIR *open_dir(struct g *g, const char *dir)
{
	int fd = open_plumbing(g, dir, O_RDONLY | O_DIRECTORY, g->err);
	DIR *d;

	if (fd < 0)
		return NULL;
	if (!(d = fdopendir(fd))) {
		wap_err_errno(g->err, errno, dir);
		close(fd);
	}
	return d;
}

/* Every symbolic link in directory DIR (root-relative, a real path), and
 * in its sub-directories down to DEPTH levels, must lead to something
 * beneath the root: objects/ab or objects/pack/pack-X.pack linked to
 * another repository's would have log and show read it.  *BUDGET (with
 * DEPTH) bounds the directories looked into. */
static int links_stay_inside(struct g *g, const char *dir, const char *skip, int depth,
			     size_t *budget)
{
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if (!(d = open_dir(g, dir)))
		return -1;
	while (!rc && (de = readdir(d))) {
		struct stat st;
		struct wap_sb sb = WAP_SB_INIT;
		unsigned char t = de->d_type;
		int fd;

		if (t == DT_UNKNOWN) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
				continue;
			t = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		}
		if ((t != DT_LNK && (t != DT_DIR || depth <= 0)) || (skip && !strcmp(de->d_name, skip)) ||
		    !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		wap_sb_addf(&sb, "%s/%s", dir, de->d_name);
		if (sb.oom) {
			rc = wap_err_oom(g->err);
			break;
		}
		if (t == DT_DIR) {
			if (!(*budget)--)
				rc = wap_err_set(g->err, WAP_E_TOO_LARGE, "cannot check %s for links: more than "
						 "100,000 directories", dir);
			else
				rc = links_stay_inside(g, sb.buf, NULL, depth - 1, budget);
		} else if ((fd = open_plumbing(g, sb.buf, O_PATH, g->err)) >= 0) {
			close(fd);
		} else if (g->err->kind == WAP_E_ACCESS) {
			wap_err_set(g->err, WAP_E_ACCESS, "Access denied: %s is a symbolic link out of the "
				    "workspace root; wap git does not follow it", sb.buf);
			rc = -1;
		} else {
			clear_err(g);	/* a dangling link: libgit2 finds nothing there */
		}
		wap_sb_release(&sb);
	}
	closedir(d);
	return rc;
}

/* Without Landlock: refs/ and logs/ of the git dir GD, all the way down
 * (a ref or a reflog linked to another repository's would be read by
 * log, branch and show; the kernel refuses those reads where it holds
 * them, and writes look for every link there: check_gitdir_writes). */
static int links_in_refs(struct g *g, const char *gd)
{
	static const char *const sub[] = { "refs", "logs" };
	struct wap_sb sb = WAP_SB_INIT;
	size_t budget = 100000;
	int rc = 0;

	if (g->kernel_reads || !gd || !link_checks())
		return 0;
	for (size_t i = 0; !rc && i < sizeof(sub) / sizeof(sub[0]); i++) {
		sb.len = 0;
		wap_sb_addf(&sb, "%s/%s", gd, sub[i]);
		if (sb.oom) {
			rc = wap_err_oom(g->err);
		} else if (links_stay_inside(g, sb.buf, NULL, 64, &budget)) {
			if (g->err->kind != WAP_E_NOT_FOUND && g->err->kind != WAP_E_NOT_DIR)
				rc = -1;
			else
				clear_err(g);	/* none: nothing to read */
		}
	}
	wap_sb_release(&sb);
	return rc;
}

/* links_stay_inside for DIR (but SKIP) and its sub-directory SUB, if any. */
static int links_in(struct g *g, const char *dir, const char *skip, const char *sub)
{
	struct wap_sb sb = WAP_SB_INIT;
	char tiny[2];
	int rc = -1, r;

	if (links_stay_inside(g, dir, skip, 0, NULL))
		return -1;
	wap_sb_addf(&sb, "%s/%s", dir, sub);
	if (sb.oom) {
		wap_err_oom(g->err);
		goto out;
	}
	r = read_small(g, sb.buf, tiny, sizeof(tiny), false);
	if (r < 0 || (r == 2 && links_stay_inside(g, sb.buf, NULL, 0, NULL)))
		goto out;
	rc = 0;
out:
	wap_sb_release(&sb);
	return rc;
}

/* The loose-object dirs of the object store OBJ (root-relative, real):
 * no file there linked out of the root (libgit2 would read another
 * repository's objects by id). */
static int loose_links(struct g *g, const char *obj)
{
	struct wap_sb sb = WAP_SB_INIT;
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if (!(d = open_dir(g, obj)))
		return -1;
	while (!rc && (de = readdir(d))) {
		struct stat st;
		if (strlen(de->d_name) != 2 || !isxdigit((unsigned char)de->d_name[0]) ||
		    !isxdigit((unsigned char)de->d_name[1]))
			continue;
		/* a dir (a link in its place is links_stay_inside's) */
		if (de->d_type == DT_UNKNOWN ? fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
					       !S_ISDIR(st.st_mode) : de->d_type != DT_DIR)
			continue;
		sb.len = 0;
		wap_sb_addf(&sb, "%s/%s", obj, de->d_name);
		rc = sb.oom ? wap_err_oom(g->err) : links_stay_inside(g, sb.buf, NULL, 0, NULL);
	}
	closedir(d);
	wap_sb_release(&sb);
	return rc;
}

/* The object store OBJ (root-relative) and every alternate it names, to
 * the depth libgit2 follows, must be beneath the root: otherwise log and
 * show would read another repository's objects. */
static int check_objects(struct g *g, const char *obj, int depth)
{
	char *real = NULL, *buf = NULL;
	struct wap_sb sb = WAP_SB_INIT;
	int rc = -1, r;

	if (depth > 5 || !link_checks())
		return 0;
	/* a missing store is libgit2's to report (or not a repository) */
	if (confirm_dir(g, obj, &real)) {
		if (g->err->kind != WAP_E_NOT_FOUND && g->err->kind != WAP_E_NOT_DIR)
			return -1;
		clear_err(g);
		return 0;
	}
	/* the files in objects/XX/ are looked at only where the kernel does
	 * not hold reads to the root: a scan of up to 256 dirs an action */
	if (links_in(g, real, NULL, "pack") || (!g->kernel_reads && loose_links(g, real)))
		goto out;
	wap_sb_addf(&sb, "%s/info/alternates", real);
	buf = malloc(65536);
	if (sb.oom || !buf) {
		wap_err_oom(g->err);
		goto out;
	}
	r = read_small(g, sb.buf, buf, 65536, true);
	if (r < 0)
		goto out;
	if (r == 1) {
		char *line = buf, *next;
		for (; line; line = next) {
			char *alt = NULL;
			size_t n;
			next = strchr(line, '\n');
			if (next)
				*next++ = 0;
			n = strlen(line);
			while (n && isspace((unsigned char)line[n - 1]))
				line[--n] = 0;
			if (!n || line[0] == '#')
				continue;
			if (link_dir(g, real, "info/alternates", line, &alt)) {
				if (g->err->kind != WAP_E_NOT_FOUND && g->err->kind != WAP_E_NOT_DIR)
					goto out;
				/* a missing alternate is skipped, as libgit2 does */
				clear_err(g);
				continue;
			}
			r = check_objects(g, alt, depth + 1);
			free(alt);
			if (r)
				goto out;
		}
	}
	rc = 0;
out:
	wap_sb_release(&sb);
	free(buf);
	free(real);
	return rc;
}

/* ---- the repository's config: includes ----
 *
 * git's include.path and includeIf.*.path read another config file,
 * relative to the including one or absolute, and libgit2 follows them as
 * git does: the repository's own config could name a file outside the
 * root (another repository's config, its remote URL and credentials in
 * it), whose values then show in what wap prints (an author, a remote).
 * So each include of the repository's config, and of the files it
 * includes, must be beneath the root, and so must the ignore and attribute
 * files it names (core.excludesFile, core.attributesFile: which names an
 * outside file hides would tell its lines).  The user's global config is
 * the user's own, as git reads it, unless it lies beneath the root ($HOME
 * the workspace): then it is the workspace's, and checked the same way. */

#define CONFIG_MAX	(16 << 20)
#define INCLUDE_DEPTH	10	/* as git's */

static int check_config(struct g *g, const char *rel, int depth);

/* The value of a config line's VAL (after '='), unquoted and unescaped as
 * git reads it, into SB; comments (# ;) outside quotes end it. */
static void config_value(const char *v, struct wap_sb *sb)
{
	bool quoted = false;
	size_t keep = 0;	/* sb->len up to the last char not a trailing space */

	while (*v == ' ' || *v == '\t')
		v++;
	for (; *v && *v != '\n'; v++) {
		if (*v == '"') {
			quoted = !quoted;
			keep = sb->len;
			continue;
		}
		if (!quoted && (*v == '#' || *v == ';'))
			break;
		if (*v == '\\' && v[1]) {
			char c = *++v;
			wap_sb_addc(sb, c == 'n' ? '\n' : c == 't' ? '\t' : c == 'b' ? '\b' : c);
			keep = sb->len;
			continue;
		}
		wap_sb_addc(sb, *v);
		if (quoted || (*v != ' ' && *v != '\t'))
			keep = sb->len;
	}
	sb->len = keep;
	if (sb->buf)
		sb->buf[keep] = 0;
}

/* The file PATH named in the config file REL by KEY: beneath the root.
 * An include's (INCLUDE) is relative to REL's dir and its own includes
 * are checked in turn; core.excludesFile and core.attributesFile, which
 * libgit2 reads as the repository's ignore and attribute rules, are taken
 * as from the work tree above REL's dir too (a missing file is none). */
static int check_named(struct g *g, const char *rel, const char *key, const char *path,
		       bool include, int depth)
{
	struct wap_sb sb = WAP_SB_INIT;
	const char *slash = strrchr(rel, '/');
	char *lex = NULL;
	int rc;

	if (path[0] == '~' && (path[1] != '/' || !getenv("HOME")))
		return wap_err_set(g->err, WAP_E_ACCESS, "Access denied: %s names %s in %s, outside "
				   "the workspace root; wap git does not follow it", rel, path, key);
	if (path[0] == '~')
		wap_sb_addf(&sb, "%s%s", getenv("HOME"), path + 1);
	else if (path[0] == '/')
		wap_sb_adds(&sb, path);
	else
		wap_sb_addf(&sb, "%.*s%s%s%s", slash ? (int)(slash - rel) : 0, rel, slash ? "/" : "",
			    include ? "" : "../", path);
	if (sb.oom)
		return wap_err_oom(g->err);
	rc = wap_ws_rel(g->ws, sb.buf, sb.len, &lex, g->err);
	if (!rc) {
		int fd = open_plumbing(g, lex, O_PATH, g->err);
		if (fd >= 0)
			close(fd);
		else if (g->err->kind == WAP_E_NOT_FOUND || g->err->kind == WAP_E_NOT_DIR)
			clear_err(g);
		else
			rc = -1;
	}
	if (rc && g->err->kind == WAP_E_ACCESS)
		wap_err_set(g->err, WAP_E_ACCESS, "Access denied: %s names %s in %s, outside the "
			    "workspace root; wap git does not follow it", rel, path, key);
	else if (!rc && include)
		rc = check_config(g, lex, depth + 1);
	free(lex);
	wap_sb_release(&sb);
	return rc;
}

/* The keys of a config file that name other files. */
enum cfkey { CF_INCLUDE, CF_EXCLUDES, CF_ATTRIBUTES, CF_TEMPLATES, CF_CAINFO, CF_CAPATH };

/* Each key of the config text TEXT (changed in place) that names a file,
 * read as git reads the text (a leading byte-order mark skipped, a
 * backslash at a line's end joining the next line): FN(CTX, KEY, VALUE)
 * for each with a value, until FN returns non-zero, which is returned;
 * -ENOMEM when out of memory. */
static int config_names(struct wap_sb *text, int (*fn)(void *ctx, enum cfkey key, const char *val),
			void *ctx)
{
	static const struct { const char *sect, *key; enum cfkey k; } names[] = {
		{ "include", "path", CF_INCLUDE }, { "includeif", "path", CF_INCLUDE },
		{ "core", "excludesfile", CF_EXCLUDES }, { "core", "attributesfile", CF_ATTRIBUTES },
		{ "init", "templatedir", CF_TEMPLATES }, { "http", "sslcainfo", CF_CAINFO },
		{ "http", "sslcapath", CF_CAPATH },
	};
	struct wap_sb val = WAP_SB_INIT;
	char sect[16] = "";
	int rc = 0;

	if (!text->buf)
		return 0;
	if (text->len >= 3 && !memcmp(text->buf, "\xef\xbb\xbf", 3)) {
		memmove(text->buf, text->buf + 3, text->len - 3 + 1);
		text->len -= 3;
	}
	/* a backslash at a line's end (not itself escaped) joins the next
	 * line to it, as git reads it */
	{
		size_t o = 0, bs = 0;
		for (size_t i = 0; i < text->len; i++) {
			if (text->buf[i] == '\n' && bs % 2) {
				o--;	/* drop the backslash and the newline */
				bs = 0;
				continue;
			}
			bs = text->buf[i] == '\\' ? bs + 1 : 0;
			text->buf[o++] = text->buf[i];
		}
		text->len = o;
		text->buf[o] = 0;
	}
	for (char *line = text->buf; !rc && line && *line;) {
		char *next = strchr(line, '\n'), *p = line, *eq;
		size_t k;

		if (next)
			*next++ = 0;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '[') {
			/* [include], [includeIf "cond"], [include.sub]: the
			 * section's name, then maybe a key on the same line */
			k = strcspn(++p, " \t\".]");
			snprintf(sect, sizeof(sect), "%.*s", k < sizeof(sect) ? (int)k : 0, p);
			p += strcspn(p, "]");
			if (*p)
				p++;
			while (isspace((unsigned char)*p))
				p++;
		}
		k = strcspn(p, " \t=");
		eq = p + k + strspn(p + k, " \t");
		for (size_t i = 0; *eq == '=' && i < sizeof(names) / sizeof(names[0]); i++) {
			if (strcasecmp(sect, names[i].sect) || strlen(names[i].key) != k ||
			    strncasecmp(p, names[i].key, k))
				continue;
			val.len = 0;
			config_value(eq + 1, &val);
			if (val.oom)
				rc = -ENOMEM;
			else if (val.len)
				rc = fn(ctx, names[i].k, val.buf);
			break;
		}
		line = next;
	}
	wap_sb_release(&val);
	return rc;
}

struct checking {
	struct g *g;
	const char *rel;
	int depth;
};

/* check_config's look at one key naming a file (config_names) */
static int check_name(void *ctx, enum cfkey key, const char *val)
{
	struct checking *c = ctx;
	static const char *const shown[] = { "include.path", "core.excludesFile", "core.attributesFile" };

	if (key > CF_ATTRIBUTES)
		return 0;
	return check_named(c->g, c->rel, shown[key], val, key == CF_INCLUDE, c->depth);
}

/* The config file REL (root-relative) and what it includes: no include
 * leads outside the root.  A missing file is no config (as libgit2). */
static int check_config(struct g *g, const char *rel, int depth)
{
	struct wap_sb text = WAP_SB_INIT;
	struct wap_err e2 = { 0 };
	char buf[65536];
	int fd, rc = 0;
	ssize_t n;

	if (depth > INCLUDE_DEPTH || !link_checks())
		return 0;	/* libgit2 stops there too, with its own error */
	fd = open_plumbing(g, rel, O_RDONLY | O_NONBLOCK, &e2);
	if (fd < 0) {
		if (e2.kind == WAP_E_NOT_FOUND || e2.kind == WAP_E_NOT_DIR || e2.kind == WAP_E_NOT_FILE) {
			wap_err_release(&e2);
			return 0;
		}
		*g->err = e2;
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0 && text.len <= CONFIG_MAX)
		wap_sb_add(&text, buf, (size_t)n);
	close(fd);
	if (n < 0 || text.oom || text.len > CONFIG_MAX) {
		rc = n < 0 ? wap_err_errno(g->err, errno, rel) : text.oom ? wap_err_oom(g->err) :
			wap_err_set(g->err, WAP_E_TOO_LARGE, "Config file too large: %s", rel);
		goto out;
	}
	/* libgit2 reads the text by its length: a NUL would end this reader's
	 * line where libgit2's goes on (a NUL in a comment hid the include
	 * after it), so a config holding one is not read */
	if (text.len && memchr(text.buf, 0, text.len)) {
		rc = wap_err_set(g->err, WAP_E_ACCESS, "Access denied: %s holds a NUL byte, "
				 "which git's readers do not read alike; wap git does not read it", rel);
		goto out;
	}
	rc = config_names(&text, check_name, &(struct checking){ g, rel, depth });
	if (rc == -ENOMEM)
		rc = wap_err_oom(g->err);
out:
	wap_sb_release(&text);
	return rc;
}

/* The config file NAME in the dir DIR (root-relative), as check_config. */
static int check_config_in(struct g *g, const char *dir, const char *name)
{
	struct wap_sb sb = WAP_SB_INIT;
	int rc;

	wap_sb_addf(&sb, "%s/%s", dir, name);
	rc = sb.oom ? wap_err_oom(g->err) : check_config(g, sb.buf, 0);
	wap_sb_release(&sb);
	return rc;
}

/* The user's global configs (~/.gitconfig, the XDG one) where they lie
 * beneath the root, as the repository's own. */
int check_user_config(struct g *g)
{
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
	struct wap_sb sb = WAP_SB_INIT;
	int rc = 0;

	for (int i = 0; i < 2 && !rc; i++) {
		char *lex = NULL;
		sb.len = 0;
		if (i == 0 && home && *home == '/')
			wap_sb_addf(&sb, "%s/.gitconfig", home);
		else if (i == 1 && xdg && *xdg == '/')
			wap_sb_addf(&sb, "%s/git/config", xdg);
		else if (i == 1 && home && *home == '/')
			wap_sb_addf(&sb, "%s/.config/git/config", home);
		else
			continue;
		if (sb.oom) {
			rc = wap_err_oom(g->err);
			break;
		}
		if (wap_ws_rel(g->ws, sb.buf, sb.len, &lex, g->err)) {
			clear_err(g);	/* outside the root: the user's */
			continue;
		}
		rc = check_config(g, lex, 0);
		free(lex);
	}
	wap_sb_release(&sb);
	return rc;
}

/* ---- what libgit2 reads outside the root ----
 *
 * The thread an action runs in may read only beneath the root and what
 * the user's own git set-up names (sandbox.c): the system, XDG and global
 * config files where libgit2 looks for them (its search paths), the XDG
 * ignore and attributes files, the template dir, and every file these
 * configs name, includes followed (any condition: a superset of what
 * libgit2 reads), core.excludesFile, core.attributesFile,
 * init.templateDir, http.sslCAInfo and http.sslCAPath.  A file this reader
 * cannot read adds nothing: libgit2 is then refused it too. */

struct collecting {
	const struct wap_ws *ws;
	struct strv *out, *dirs;
	const char *home;	/* for ~/ */
	const char *file;	/* the config naming it */
	int depth;
};

static int collect_config(const struct wap_ws *ws, struct strv *out, struct strv *dirs,
			  const char *home, const char *path, int depth);

/* asprintf's string, or NULL */
static char *path_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *path_fmt(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

static int collect_name(void *ctx, enum cfkey key, const char *val)
{
	struct collecting *c = ctx;
	const char *slash = strrchr(c->file, '/');
	char *path = NULL;

	if (val[0] == '~' && val[1] == '/' && c->home)
		path = path_fmt("%s%s", c->home, val + 1);
	else if (val[0] == '/')
		path = strdup(val);
	else if (key == CF_INCLUDE && val[0] != '~' && slash)
		path = path_fmt("%.*s/%s", (int)(slash - c->file), c->file, val);
	else
		return 0;	/* relative to a dir libgit2 alone knows: not read */
	if (!path || strv_add(key == CF_TEMPLATES || key == CF_CAPATH ? c->dirs : c->out, path))
		return -ENOMEM;
	return key == CF_INCLUDE ? collect_config(c->ws, c->out, c->dirs, c->home, path, c->depth + 1) : 0;
}

/* The config file PATH (absolute) and what it names: the user's own.  One
 * beneath the root ($HOME the workspace) is the workspace's: what it names
 * is not added (check_config holds it to the root, and libgit2 is refused
 * anything else). */
static int collect_config(const struct wap_ws *ws, struct strv *out, struct strv *dirs,
			  const char *home, const char *path, int depth)
{
	struct wap_sb text = WAP_SB_INIT;
	struct stat st;
	char buf[65536], *rel = NULL;
	ssize_t n;
	int fd, rc;

	if (depth > INCLUDE_DEPTH)
		return 0;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (rel = wap_ws_fd_rel(ws, fd))) {
		free(rel);
		close(fd);
		return 0;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0 && text.len <= CONFIG_MAX)
		wap_sb_add(&text, buf, (size_t)n);
	close(fd);
	if (text.oom)
		return -ENOMEM;
	rc = config_names(&text, collect_name, &(struct collecting){ ws, out, dirs, home, path, depth });
	wap_sb_release(&text);
	return rc;
}

int user_git_files(const struct wap_ws *ws, struct strv *out, struct strv *dirs)
{
	static const struct { int level; const char *const files[4]; } where[] = {
		{ GIT_CONFIG_LEVEL_SYSTEM, { "gitconfig" } },
		{ GIT_CONFIG_LEVEL_XDG, { "config", "ignore", "attributes" } },
		{ GIT_CONFIG_LEVEL_GLOBAL, { ".gitconfig" } },
		{ GIT_CONFIG_LEVEL_PROGRAMDATA, { "config" } },
	};
	git_buf sp[4] = { GIT_BUF_INIT, GIT_BUF_INIT, GIT_BUF_INIT, GIT_BUF_INIT };
	git_buf tpl = GIT_BUF_INIT;
	char *home = NULL;
	int rc = 0;

	for (int i = 0; i < 4; i++)
		if (git_libgit2_opts(GIT_OPT_GET_SEARCH_PATH, where[i].level, &sp[i]) < 0)
			git_error_clear();
	/* ~/ in a value is the global search path's first dir, as libgit2 */
	if (sp[2].ptr && sp[2].ptr[0] == '/')
		home = strndup(sp[2].ptr, strcspn(sp[2].ptr, ":"));
	for (int i = 0; i < 4 && !rc; i++) {
		for (const char *d = sp[i].ptr; d && *d && !rc; d += strspn(d, ":")) {
			size_t dl = strcspn(d, ":");
			for (int f = 0; f < 4 && where[i].files[f] && !rc; f++) {
				char *path = path_fmt("%.*s/%s", (int)dl, d, where[i].files[f]);
				if (!path || strv_add(out, path))
					rc = -ENOMEM;
				else if (f == 0)
					rc = collect_config(ws, out, dirs, home, path, 0);
			}
			d += dl;
		}
	}
	if (!rc && git_libgit2_opts(GIT_OPT_GET_TEMPLATE_PATH, &tpl) == 0 && tpl.ptr && *tpl.ptr) {
		char *t = strdup(tpl.ptr);
		if (!t || strv_add(dirs, t))
			rc = -ENOMEM;
	}
	git_error_clear();
	git_buf_dispose(&tpl);
	for (int i = 0; i < 4; i++)
		git_buf_dispose(&sp[i]);
	free(home);
	return rc;
}

/* Is REAL (root-relative, with no .git) a bare repository, as libgit2
 * tells one: a HEAD file and an objects dir?  Else it is a work tree
 * (to init, or not a repository): its files are not a git dir's. */
static bool looks_bare(struct g *g, const char *real)
{
	struct wap_sb sb = WAP_SB_INIT;
	char tiny[2];
	bool bare;

	wap_sb_addf(&sb, "%s/HEAD", real);
	bare = !sb.oom && read_small(g, sb.buf, tiny, sizeof(tiny), false) == 1;
	sb.len = 0;
	wap_sb_addf(&sb, "%s/objects", real);
	bare = bare && !sb.oom && read_small(g, sb.buf, tiny, sizeof(tiny), false) == 2;
	clear_err(g);
	wap_sb_release(&sb);
	return bare;
}

/* Before libgit2 opens a repository at REAL (root-relative): the git dir a
 * .git file names, the common dir a git dir's commondir file names, the
 * object store and its alternates must all be beneath the root.  libgit2
 * would otherwise read them (their config first) before open_repo could
 * look at where they are.  With GDOUT, *GDOUT and *CDOUT get the git dir
 * and the common dir (NULL: the git dir), root-relative. */
static int check_links_at(struct g *g, const char *real, char **gdout, char **cdout)
{
	struct wap_sb sb = WAP_SB_INIT;
	char buf[4096], *gd = NULL, *cd = NULL;
	bool gitdir;	/* gd is a git dir, not a work tree without one */
	int rc = -1, r;

	if (gdout)
		*gdout = *cdout = NULL;

	if (strcmp(real, "."))
		wap_sb_addf(&sb, "%s/.git", real);
	else
		wap_sb_adds(&sb, ".git");
	if (sb.oom)
		return wap_err_oom(g->err);
	r = read_small(g, sb.buf, buf, sizeof(buf), true);
	if (r < 0)
		goto out;
	if (r == 1) {
		if (strncmp(buf, "gitdir:", 7)) {
			rc = 0;		/* libgit2 will say it is not a repository */
			goto out;
		}
		if (link_dir(g, real, ".git", buf + 7 + strspn(buf + 7, " \t"), &gd))
			goto out;
	} else {
		gd = strdup(r == 2 ? sb.buf : real);
	}
	gitdir = r != 0 || looks_bare(g, real);
	if (!gd) {
		wap_err_oom(g->err);
		goto out;
	}
	sb.len = 0;
	wap_sb_addf(&sb, "%s/commondir", gd);
	if (sb.oom) {
		wap_err_oom(g->err);
		goto out;
	}
	r = read_small(g, sb.buf, buf, sizeof(buf), true);
	if (r < 0 || (r == 1 && link_dir(g, gd, "commondir", buf, &cd)))
		goto out;
	/* its config (the common dir's), a worktree's own, the user's.  No
	 * link in the git dirs or their info/ leads out of the root: libgit2
	 * reads through them (info/exclude and info/attributes linked to an
	 * outside file: which names it hides would tell its lines; HEAD,
	 * index, packed-refs...).  A hooks dir shared from elsewhere is let
	 * be: libgit2 runs no hook. */
	if (gitdir && (check_config_in(g, cd ? cd : gd, "config") ||
		       check_config_in(g, gd, "config.worktree") || check_user_config(g) ||
		       links_in(g, gd, "hooks", "info") || (cd && links_in(g, cd, "hooks", "info")) ||
		       links_in_refs(g, gd) || links_in_refs(g, cd)))
		goto out;
	sb.len = 0;
	wap_sb_addf(&sb, "%s/objects", cd ? cd : gd);
	if (sb.oom) {
		wap_err_oom(g->err);
		goto out;
	}
	rc = check_objects(g, sb.buf, 0);
	if (!rc && gdout) {
		*gdout = gd;
		*cdout = cd;
		gd = cd = NULL;
	}
out:
	wap_sb_release(&sb);
	free(gd);
	free(cd);
	return rc;
}

int check_links(struct g *g, const char *real)
{
	return check_links_at(g, real, NULL, NULL);
}

int check_nested(struct g *g, const char *path)
{
	struct wap_sb sb = WAP_SB_INIT;
	char *real = NULL;
	size_t n = strlen(path);
	int rc;

	while (n && path[n - 1] == '/')
		n--;
	if (strcmp(g->wd_rel, "."))
		wap_sb_addf(&sb, "%s/", g->wd_rel);
	wap_sb_add(&sb, path, n);
	if (sb.oom)
		return wap_err_oom(g->err);
	/* where it really is: a relative gitdir is taken from there */
	rc = real_dir(g, sb.buf, true, sb.buf, (int)sb.len, &real);
	if (rc && (g->err->kind == WAP_E_NOT_FOUND || g->err->kind == WAP_E_NOT_DIR)) {
		clear_err(g);	/* not checked out: nothing to open */
		rc = 0;
	} else if (!rc) {
		rc = check_links(g, real);
	}
	free(real);
	wap_sb_release(&sb);
	return rc;
}

int check_submodules(struct g *g)
{
	git_index *idx;
	int e;

	if (!g->wd_rel)
		return 0;
	if ((e = git_repository_index(&idx, g->repo)))
		return lg(g, e, "cannot read the index");
	for (size_t i = 0, n = git_index_entrycount(idx); i < n; i++) {
		const git_index_entry *ie = git_index_get_byindex(idx, i);
		if (ie && ie->mode == GIT_FILEMODE_COMMIT && check_nested(g, ie->path)) {
			git_index_free(idx);
			return -1;
		}
	}
	git_index_free(idx);
	return 0;
}

/* wap's own checks for links (below, and checkout_preflight in branch.c),
 * of the config's includes and of the alternates can be turned off to test
 * that the kernel's layer holds alone (tests only: Landlock still keeps
 * every read and write beneath the root and the user's git set-up). */
bool link_checks(void)
{
	const char *v = getenv("WAP_GIT_NO_LINK_CHECKS");
	return !(v && !strcmp(v, "1"));
}

/* Is there a symbolic link at NAME in directory FD, or beneath it down to
 * DEPTH levels?  *BAD gets its path (SHOWN/...); *BUDGET bounds the walk. */
static int find_link(int fd, const char *name, const char *shown, int depth, size_t *budget,
		     char **bad)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	int sub, rc = 0;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	if (S_ISLNK(st.st_mode)) {
		struct wap_sb sb = WAP_SB_INIT;
		wap_sb_addf(&sb, "%s/%s", shown, name);
		*bad = wap_sb_detach(&sb);
		return 1;
	}
	if (!S_ISDIR(st.st_mode) || depth <= 0)
		return 0;
	if (!*budget)
		return -1;
	sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0 || !(d = fdopendir(sub))) {
		if (sub >= 0)
			close(sub);
		return -1;
	}
	{
		struct wap_sb sb = WAP_SB_INIT;
		wap_sb_addf(&sb, "%s/%s", shown, name);
		while (!rc && sb.buf && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (!(*budget)--) {
				rc = -1;
				break;
			}
			rc = find_link(dirfd(d), de->d_name, sb.buf, depth - 1, budget, bad);
		}
		if (!sb.buf)
			rc = -1;
		wap_sb_release(&sb);
	}
	closedir(d);
	return rc;
}

/* Before an action writes: nothing libgit2 writes in the git dir GD (an
 * absolute path it reported) may be a symbolic link.  Landlock keeps the
 * writes beneath the root; this keeps them in the git dir, out of the work
 * tree and out of restricted or policy files (.git/logs/HEAD ->
 * ../../.env would have the reflog appended to .env, .git/index -> X would
 * overwrite X). */
int check_gitdir_writes(struct g *g, const char *gd)
{
	static const struct { const char *name; int depth; } w[] = {
		{ "HEAD", 0 }, { "ORIG_HEAD", 0 }, { "FETCH_HEAD", 0 }, { "MERGE_HEAD", 0 },
		{ "MERGE_MSG", 0 }, { "MERGE_MODE", 0 }, { "CHERRY_PICK_HEAD", 0 },
		{ "REVERT_HEAD", 0 }, { "COMMIT_EDITMSG", 0 }, { "index", 0 }, { "config", 0 },
		{ "packed-refs", 0 }, { "shallow", 0 }, { "description", 0 }, { "info", 1 },
		{ "refs", 64 }, { "logs", 64 }, { "objects", 1 }, { "objects/pack", 1 },
		{ "objects/info", 1 },
	};
	char *rel = NULL, *bad = NULL;
	size_t budget = 1000000;
	int fd, r = 0;

	if (!link_checks())
		return 0;
	if (confirm_dir(g, gd, &rel))
		return -1;
	fd = open_plumbing(g, rel, O_RDONLY | O_DIRECTORY, g->err);
	if (fd < 0) {
		free(rel);
		return -1;
	}
	for (size_t i = 0; !r && i < sizeof(w) / sizeof(w[0]); i++)
		r = find_link(fd, w[i].name, strcmp(rel, ".") ? rel : ".", w[i].depth, &budget, &bad);
	close(fd);
	if (r > 0)
		wap_err_set(g->err, WAP_E_ACCESS,
			    "Access denied: %s is a symbolic link; wap git does not write through links in "
			    "the git directory (remove it, or use git itself)", bad ? bad : rel);
	else if (r < 0)
		wap_err_set(g->err, WAP_E_FAILED, "cannot check the git directory %s for links", rel);
	free(bad);
	free(rel);
	return r ? -1 : 0;
}

/* Open the repository at DIR (root-relative) or the nearest directory above
 * it that holds one, stopping at the root. */
int open_repo(struct g *g, bool write)
{
	const char *dir = str_key(g, "dir");
	char *cand = NULL, *real = NULL, *abs = NULL, *chk = NULL;
	const char *p;
	int rc = -1;

	if (wap_ws_rel(g->ws, dir ? dir : ".", strlen(dir ? dir : "."), &cand, g->err))
		return -1;
	if (wap_ws_check(g->ws, cand, write ? WAP_ACC_WRITE : WAP_ACC_READ, g->err) ||
	    real_dir(g, cand, false, cand, (int)strlen(cand), &real))
		goto out;
	for (;;) {
		int e;
		char *slash;

		free(abs);
		abs = wap_ws_abs(g->ws, real);
		if (!abs) {
			wap_err_oom(g->err);
			goto out;
		}
		if (check_links(g, real))
			goto out;
		e = git_repository_open_ext(&g->repo, abs, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
		if (!e)
			break;
		if (e == GIT_EOWNER || (git_error_last() && git_error_last()->message &&
					strstr(git_error_last()->message, "safe.directory"))) {
			/* libgit2 1.5 reports a failed ownership check as a
			 * missing safe.directory setting */
			wap_err_set(g->err, WAP_E_PERMISSION,
				    "Permission denied: the repository at %s is not owned by the current user "
				    "(git's safe.directory)", real);
			goto out;
		}
		if (e != GIT_ENOTFOUND) {
			lg(g, e, "cannot open the repository at %s", real);
			goto out;
		}
		if (!strcmp(real, ".")) {
			wap_err_set(g->err, WAP_E_NOT_FOUND,
				    "Not a git repository: %s (nor any parent up to the workspace root)",
				    cand);
			goto out;
		}
		slash = strrchr(real, '/');
		if (slash)
			*slash = 0;
		else
			memcpy(real, ".", 2);	/* fits: real held at least one byte */
	}
	/* the git dir, the common dir and the work tree must all be beneath
	 * the root (a .git file or core.worktree may point anywhere) */
	p = git_repository_path(g->repo);
	if (confirm_dir(g, p, &chk))
		goto out;
	free(chk);
	chk = NULL;
	p = git_repository_commondir(g->repo);
	if (p && confirm_dir(g, p, &chk))
		goto out;
	free(chk);
	chk = NULL;
	p = git_repository_workdir(g->repo);
	if (p && confirm_dir(g, p, &g->wd_rel))
		goto out;
	rc = 0;
out:
	if (rc && g->repo) {
		git_repository_free(g->repo);
		g->repo = NULL;
	}
	free(cand);
	free(real);
	free(abs);
	return rc;
}

int need_workdir(struct g *g)
{
	if (!g->wd_rel)
		return wap_err_set(g->err, WAP_E_INVALID, "This operation needs a work tree; the repository is bare");
	return 0;
}

/* A caller's path (root-relative or absolute) as a path in the repository
 * ("" for the whole work tree), in a new string. */
int repo_path(struct g *g, const char *p, int access, char **out)
{
	char *rel;
	size_t wl;

	*out = NULL;
	if (need_workdir(g))
		return -1;
	if (wap_ws_rel(g->ws, p, strlen(p), &rel, g->err))
		return -1;
	if (wap_ws_check(g->ws, rel, access, g->err)) {
		free(rel);
		return -1;
	}
	wl = strlen(g->wd_rel);
	if (!strcmp(g->wd_rel, ".")) {
		*out = strdup(strcmp(rel, ".") ? rel : "");
	} else if (!strcmp(rel, g->wd_rel)) {
		*out = strdup("");
	} else if (!strncmp(rel, g->wd_rel, wl) && rel[wl] == '/') {
		*out = strdup(rel + wl + 1);
	} else {
		wap_err_set(g->err, WAP_E_INVALID, "Path %s is outside the repository at %s", p, g->wd_rel);
		free(rel);
		return -1;
	}
	free(rel);
	return *out ? 0 : wap_err_oom(g->err);
}

/* The root-relative form of a repository path. */
char *ws_path(struct g *g, const char *rp)
{
	struct wap_sb sb = WAP_SB_INIT;

	if (!strcmp(g->wd_rel, "."))
		wap_sb_adds(&sb, *rp ? rp : ".");
	else if (*rp)
		wap_sb_addf(&sb, "%s/%s", g->wd_rel, rp);
	else
		wap_sb_adds(&sb, g->wd_rel);
	return wap_sb_detach(&sb);
}

/* ---- local remotes ---- */

int url_kind(const char *url)
{
	static const char *const ok[] = { "https", "http", "ssh", "git", "ssh+git", "git+ssh", NULL };
	const char *sep = strstr(url, "://"), *colon, *slash;

	if (!strncmp(url, "file://", 7))
		return URL_LOCAL;
	if (sep) {
		for (int i = 0; ok[i]; i++)
			if ((size_t)(sep - url) == strlen(ok[i]) && !strncmp(url, ok[i], sep - url))
				return URL_NET;
		return URL_BAD;
	}
	colon = strchr(url, ':');
	slash = strchr(url, '/');
	if (colon && (!slash || colon < slash)) {
		/* scp-like [user@]host:path; anything else with a colon
		 * (ext::cmd, transport::address) is refused */
		if (colon == url || colon[1] == ':')
			return URL_BAD;
		for (const char *p = url; p < colon; p++)
			if (!isalnum((unsigned char)*p) && !strchr("._-@[]", *p))
				return URL_BAD;
		return URL_NET;
	}
	return URL_LOCAL;
}

/* A local URL (file://PATH or a path; relative to BASE, root-relative)
 * must name a directory beneath the root: *ABS gets its real absolute
 * path, which is what libgit2 is then given. */
int confine_local(struct g *g, const char *url, const char *base, bool push, char **abs)
{
	const char *path = !strncmp(url, "file://", 7) ? url + 7 : url;
	struct wap_sb sb = WAP_SB_INIT;
	char *rel = NULL, *real = NULL, *gd = NULL, *cd = NULL;
	int rc = -1;

	*abs = NULL;
	if (!*path)
		return wap_err_set(g->err, WAP_E_INVALID, "Invalid URL: '%s'", url);
	/* restrictedPaths judge where a file is in the workspace; a commit
	 * carried to another repository beneath the root (clone . copy,
	 * push to a bare one) puts its restricted files where no glob sees
	 * them, to be checked out or shown (ninth hostile review) */
	if (g->ws->pol.restricted.n)
		return wap_err_set(g->err, WAP_E_RESTRICTED,
			"Path restricted: '%s' is a repository beneath the root, and restrictedPaths are set: "
			"its commits would carry restricted files where the globs do not reach", url);
	if (path[0] == '/' || !strcmp(base, "."))
		wap_sb_adds(&sb, path);
	else
		wap_sb_addf(&sb, "%s/%s", base, path);
	if (sb.oom) {
		wap_err_oom(g->err);
		goto out;
	}
	if (wap_ws_rel(g->ws, sb.buf, sb.len, &rel, g->err) ||
	    real_dir(g, rel, false, path, (int)strlen(path), &real))
		goto out;
	/* libgit2 reads a local remote's objects directly, alternates too,
	 * and a push writes its refs and objects: no links there either */
	if (!push ? check_links(g, real) : check_links_at(g, real, &gd, &cd) ||
	    check_gitdir_writes(g, gd ? gd : real) || (cd && check_gitdir_writes(g, cd)))
		goto out;
	*abs = wap_ws_abs(g->ws, real);
	rc = *abs ? 0 : wap_err_oom(g->err);
out:
	wap_sb_release(&sb);
	free(gd);
	free(cd);
	free(rel);
	free(real);
	return rc;
}

/* The number of objects in the repository's packs, as git's
 * repo_approximate_object_count counts them (loose objects are not
 * counted): the sum of the object counts in the headers of the pack
 * indexes that have their pack beside them.  0 when there is none or it
 * cannot be read: git's abbreviations are then 7 digits. */
unsigned long packed_object_count(struct g *g)
{
	struct wap_sb sb = WAP_SB_INIT;
	struct wap_err e2 = { 0 };
	struct dirent *de;
	unsigned long count = 0;
	char *rel = NULL;
	DIR *d = NULL;
	int fd;

	wap_sb_addf(&sb, "%s/objects", git_repository_commondir(g->repo));
	if (sb.oom || wap_ws_rel(g->ws, sb.buf, sb.len, &rel, &e2))
		goto out;
	sb.len = 0;
	wap_sb_addf(&sb, "%s/pack", rel);
	if (sb.oom)
		goto out;
	fd = open_plumbing(g, sb.buf, O_RDONLY | O_DIRECTORY, &e2);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		unsigned char h[8 + 256 * 4];
		char pack[NAME_MAX + 2];	/* "x.idx" -> "x.pack": one byte more */
		const unsigned char *last;
		struct stat st;
		int ifd;

		if (n < 5 || n > NAME_MAX || strcmp(de->d_name + n - 4, ".idx"))
			continue;
		memcpy(pack, de->d_name, n - 4);
		memcpy(pack + n - 4, ".pack", sizeof(".pack"));
		if (fstatat(dirfd(d), pack, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		ifd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (ifd < 0)
			continue;
		if (!fstat(ifd, &st) && S_ISREG(st.st_mode) &&
		    read(ifd, h, sizeof(h)) == (ssize_t)sizeof(h)) {
			/* version 2 starts "\377tOc" and a version; version 1
			 * with the fan-out table straight away */
			last = !memcmp(h, "\377tOc", 4) ? h + 8 + 255 * 4 : h + 255 * 4;
			count += (unsigned long)last[0] << 24 | last[1] << 16 | last[2] << 8 | last[3];
		}
		close(ifd);
	}
out:
	if (d)
		closedir(d);
	wap_err_release(&e2);
	free(rel);
	wap_sb_release(&sb);
	return count;
}
