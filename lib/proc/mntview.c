/* proc/mntview.c - a sandboxed command sees only what its rules name
 * (mntview.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "mntview.h"
#include "path.h"
#include "rsys.h"

#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif

enum {
	V_CLONE,	/* slot = a recursive copy of path (taken before any cover) */
	V_COVER,	/* a tmpfs on path, to rebuild in */
	V_HIDE,		/* an empty read-only tmpfs on the dir path */
	V_HIDE_FILE,	/* /dev/null on the socket path */
	V_MKDIR,
	V_MKFILE,	/* an empty file to mount a kept file on */
	V_LINK,		/* path -> arg */
	V_ATTACH,	/* the copy in slot, on path */
	V_SEAL,		/* the cover read-only */
	V_UMOUNT,	/* a mount the view hides, gone from its table */
	V_IDMAP,	/* path again, through the idmapping of everyone */
};

#define MAX_SLOTS	64
#define MAX_LINKS	40	/* as the kernel follows */

struct plan {
	char **keep;		/* real paths to keep */
	char **dirs;		/* ... of them, those that are dirs ("1") or not ("0") */
	char **links;		/* links met on the way, and */
	char **targets;		/* ... what they say */
	char **made;		/* dirs the plan made */
	struct wap_view *v;
	char *const *avoid;	/* wap_path_through: dirs to tell passing through */
	bool through;
	bool oom;
};

static void push(struct plan *pl, char ***v, const char *s)
{
	if (wap_strv_push(v, s))
		pl->oom = true;
}

/* Follow PATH component by component from /, noting each link met and
 * keeping the real path it ends at (if it exists). */
static void note_path(struct plan *pl, const char *path, int depth)
{
	char cur[PATH_MAX] = "", rest[PATH_MAX];
	const char *p = path;
	struct stat st;
	bool known = false;	/* st is cur's */

	if (*path != '/' || depth > MAX_LINKS) {
		pl->through = true;	/* cannot be told: as if it did */
		return;
	}
	while (*p) {
		const char *e;
		size_t len, n = strlen(cur);

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		len = (size_t)(e - p);
		if (len == 1 && *p == '.') {
			p = e;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			char *s = strrchr(cur, '/');
			if (s)
				*s = 0;
			p = e;
			known = false;
			continue;
		}
		if (n + 1 + len >= sizeof(cur))
			return;
		cur[n] = '/';
		memcpy(cur + n + 1, p, len);
		cur[n + 1 + len] = 0;
		p = e;
		for (size_t i = 0; pl->avoid && pl->avoid[i]; i++)
			pl->through |= wap_path_within(cur, pl->avoid[i]);
		if (lstat(cur, &st))
			return;
		known = true;
		if (S_ISLNK(st.st_mode)) {
			char t[PATH_MAX];
			ssize_t k = readlink(cur, t, sizeof(t) - 1);
			int w;
			if (k <= 0)
				return;
			t[k] = 0;
			push(pl, &pl->links, cur);
			push(pl, &pl->targets, t);
			cur[n] = 0;	/* the link's dir */
			w = *t == '/' ? snprintf(rest, sizeof(rest), "%s%s", t, p) :
					snprintf(rest, sizeof(rest), "%s/%s%s", cur, t, p);
			if (w > 0 && (size_t)w < sizeof(rest))
				note_path(pl, rest, depth + 1);
			return;
		}
	}
	if (!*cur) {
		cur[0] = '/';
		cur[1] = 0;
	}
	if (!known && stat(cur, &st))
		return;
	for (size_t i = 0; pl->keep && pl->keep[i]; i++)
		if (!strcmp(pl->keep[i], cur))
			return;
	push(pl, &pl->keep, cur);
	push(pl, &pl->dirs, S_ISDIR(st.st_mode) ? "1" : "0");
}

static const char *const verbs[] = {
	[V_CLONE] = "copying", [V_COVER] = "covering", [V_HIDE] = "hiding",
	[V_HIDE_FILE] = "hiding", [V_MKDIR] = "making", [V_MKFILE] = "making",
	[V_LINK] = "linking", [V_ATTACH] = "mounting", [V_SEAL] = "sealing",
	[V_UMOUNT] = "unmounting", [V_IDMAP] = "idmapping",
};

static void op(struct plan *pl, int o, int slot, const char *path, const char *arg)
{
	struct wap_view *v = pl->v;
	struct wap_view_op *n;

	if (pl->oom)
		return;
	if (!(n = realloc(v->ops, (v->n + 1) * sizeof(*n)))) {
		pl->oom = true;
		return;
	}
	v->ops = n;
	n += v->n;
	n->op = o;
	n->slot = slot;
	n->path = strdup(path);
	n->arg = arg ? strdup(arg) : NULL;
	if (asprintf(&n->what, "mount namespace (the view: %s %s)", verbs[o], path) < 0)
		n->what = NULL;
	if (!n->path || (arg && !n->arg) || !n->what) {
		free(n->path);
		free(n->arg);
		free(n->what);
		pl->oom = true;
		return;
	}
	v->n++;
}

/* Is P kept, or beneath a kept path? */
static bool kept(const struct plan *pl, const char *p)
{
	for (size_t i = 0; pl->keep && pl->keep[i]; i++)
		if (wap_path_within(p, pl->keep[i]))
			return true;
	return false;
}

/* The dirs on the way from the cover TOP to P (not P), made once. */
static void make_way(struct plan *pl, const char *top, const char *p)
{
	char q[PATH_MAX];
	size_t n = strlen(top);

	if (snprintf(q, sizeof(q), "%s", p) >= (int)sizeof(q))
		return;
	for (char *s = q + n + 1; (s = strchr(s, '/')); *s++ = '/') {
		bool done = false;
		*s = 0;
		for (size_t i = 0; pl->made && pl->made[i]; i++)
			done |= !strcmp(pl->made[i], q);
		if (!done) {
			push(pl, &pl->made, q);
			op(pl, V_MKDIR, 0, q, NULL);
		}
	}
}

/* Is kept path I beneath the cover TOP, and inside no other kept path? */
static bool outermost(const struct plan *pl, size_t i, const char *top)
{
	if (!wap_path_beneath(pl->keep[i], top))
		return false;
	for (size_t j = 0; pl->keep[j]; j++)
		if (j != i && wap_path_beneath(pl->keep[i], pl->keep[j]))
			return false;
	return true;
}

/* Is P within one of V (or, STRICT, beneath it)? */
static bool within_any(char *const *v, const char *p, bool strict)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strict ? wap_path_beneath(p, v[i]) : wap_path_within(p, v[i]))
			return true;
	return false;
}

/* The real paths PATHS lead to, "1"/"0" for dirs in *DIRS. */
static char **real_paths(struct plan *pl, char *const *paths, char ***dirs)
{
	struct plan q = { .avoid = NULL };
	char **v;

	for (size_t i = 0; paths && paths[i]; i++)
		note_path(&q, paths[i], 0);
	pl->oom |= q.oom;
	v = q.keep;
	*dirs = q.dirs;
	wap_strv_free(q.links);
	wap_strv_free(q.targets);
	return v;
}

/* The mount points of this process's namespace (unescaped), NULL if
 * none can be read: a mount the view hides is still listed in the
 * command's table (and so told) unless it is unmounted there. */
static char **mount_points(struct plan *pl)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, **v = NULL;
	size_t cap = 0;

	while (f && getline(&line, &cap, f) > 0) {
		char mp[PATH_MAX], *o = mp;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1)
			continue;
		for (const char *c = mp; *c; c++) {	/* \040 and the like */
			if (c[0] == '\\' && c[1] >= '0' && c[1] <= '3' && c[2] >= '0' && c[2] <= '7' &&
			    c[3] >= '0' && c[3] <= '7') {
				*o++ = (char)((c[1] - '0') << 6 | (c[2] - '0') << 3 | (c[3] - '0'));
				c += 3;
			} else {
				*o++ = *c;
			}
		}
		*o = 0;
		push(pl, &v, mp);
	}
	free(line);
	if (f)
		fclose(f);
	return v;
}

static bool hidden(const char *p, char *const *top, char *const *hid, char *const *shut)
{
	return within_any(top, p, false) || within_any(hid, p, false) || within_any(shut, p, false);
}

static int depth_cmp(const void *a, const void *b)
{
	size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

int wap_view_plan(struct wap_view *v, char *const *keep, char *const *sys, char *const *own,
		  char *const *shut, int userns, struct wap_err *err)
{
	struct plan pl = { .v = v };
	char **top = NULL;	/* the covered dirs of / */
	char **hid = NULL;	/* the hidden ones */
	char **sysr = NULL, **sysd = NULL, **ownr = NULL, **ownd = NULL, **mnt = NULL;
	char **idm = NULL;	/* the dirs shown through the idmapping */
	char **inner = NULL;	/* own paths beneath them, shown as they are */
	char **shutv = NULL;	/* dirs of SHUT to show empty */
	DIR *d = NULL;
	struct dirent *e;
	int slot = 0, rc = -1;

	memset(v, 0, sizeof(*v));
	v->userns = userns;
	for (size_t i = 0; keep && keep[i]; i++)
		note_path(&pl, keep[i], 0);
	if (pl.oom)
		goto oom;
	for (size_t i = 0; pl.keep && pl.keep[i]; i++)
		if (!strcmp(pl.keep[i], "/"))
			goto done;	/* the whole tree is kept */
	if (!(d = opendir("/"))) {
		wap_err_set(err, WAP_E_FAILED, "Sandbox: cannot read /: %s", strerror(errno));
		goto out;
	}
	/* each dir of / is kept, covered and rebuilt, or hidden */
	while ((e = readdir(d))) {
		char p[NAME_MAX + 2];
		struct stat st;
		bool holds = false;
		unsigned char type;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "/%s", e->d_name);
		if (kept(&pl, p))
			continue;
		for (size_t i = 0; pl.keep && pl.keep[i]; i++)
			holds |= wap_path_beneath(pl.keep[i], p);
		for (size_t i = 0; pl.links && pl.links[i]; i++)
			holds |= wap_path_beneath(pl.links[i], p) && !kept(&pl, pl.links[i]);
		if (holds) {
			push(&pl, &top, p);
			continue;
		}
		type = e->d_type;
		if (type == DT_UNKNOWN && !lstat(p, &st))
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISSOCK(st.st_mode) ? DT_SOCK : DT_REG;
		if (type == DT_DIR)
			push(&pl, &hid, p);
		else if (type == DT_SOCK)
			op(&pl, V_HIDE_FILE, 0, p, NULL);
	}
	/* the system dirs as everyone sees them (an idmapped mount whose
	 * files' owners are no one's: neither the owner's bits nor root's
	 * DAC override hold, only the others'), the outermost of them that
	 * lie in no path of the command's own; those own paths beneath them
	 * shown as they are (a root under /opt) */
	if (userns >= 0) {
		sysr = real_paths(&pl, sys, &sysd);
		ownr = real_paths(&pl, own, &ownd);
		for (size_t i = 0; sysr && sysr[i]; i++)
			if (*sysd[i] == '1' && strcmp(sysr[i], "/") && !within_any(ownr, sysr[i], false) &&
			    !within_any(sysr, sysr[i], true))
				push(&pl, &idm, sysr[i]);
		for (size_t i = 0; ownr && ownr[i]; i++)
			if (within_any(idm, ownr[i], true) && !within_any(ownr, ownr[i], true))
				push(&pl, &inner, ownr[i]);
	}
	for (size_t i = 0; shut && shut[i]; i++) {
		struct stat st;
		bool holds = false;
		for (size_t j = 0; pl.keep && pl.keep[j]; j++)
			holds |= wap_path_within(pl.keep[j], shut[i]);
		if (!holds && !lstat(shut[i], &st) && S_ISDIR(st.st_mode) && kept(&pl, shut[i]))
			push(&pl, &shutv, shut[i]);
	}
	if (pl.oom)
		goto oom;
	/* the copies first: a cover or an idmapping hides what they are
	 * taken from */
	for (size_t t = 0; top && top[t]; t++)
		for (size_t i = 0; pl.keep && pl.keep[i]; i++) {
			if (!outermost(&pl, i, top[t]))
				continue;
			if (slot == MAX_SLOTS) {
				wap_err_set(err, WAP_E_FAILED, "Sandbox: over %d paths to keep",
					    MAX_SLOTS);
				goto out;
			}
			op(&pl, V_CLONE, slot++, pl.keep[i], NULL);
		}
	for (size_t i = 0; inner && inner[i]; i++) {
		if (slot == MAX_SLOTS) {
			wap_err_set(err, WAP_E_FAILED, "Sandbox: over %d paths to keep", MAX_SLOTS);
			goto out;
		}
		op(&pl, V_CLONE, slot++, inner[i], NULL);
	}
	v->nslots = slot;
	/* the mounts the covers hide out of the command's table (what is
	 * kept beneath a cover was copied above), the outermost alone: one
	 * unmount costs a wait for the kernel's RCU (milliseconds) */
	mnt = mount_points(&pl);
	if (mnt)
		qsort(mnt, wap_strv_len(mnt), sizeof(*mnt), depth_cmp);
	for (size_t i = 0; mnt && mnt[i]; i++) {
		bool inside = false;	/* goes with the one it lies in */
		if (!hidden(mnt[i], top, hid, shutv))
			continue;
		for (size_t j = i + 1; mnt[j]; j++)
			inside |= wap_path_beneath(mnt[i], mnt[j]) && hidden(mnt[j], top, hid, shutv);
		if (!inside)
			op(&pl, V_UMOUNT, 0, mnt[i], NULL);
	}
	for (size_t i = 0; hid && hid[i]; i++)
		op(&pl, V_HIDE, 0, hid[i], NULL);
	slot = 0;
	for (size_t t = 0; top && top[t]; t++) {
		op(&pl, V_COVER, 0, top[t], NULL);
		for (size_t i = 0; pl.keep && pl.keep[i]; i++) {
			if (!outermost(&pl, i, top[t]))
				continue;
			make_way(&pl, top[t], pl.keep[i]);
			op(&pl, *pl.dirs[i] == '1' ? V_MKDIR : V_MKFILE, 0, pl.keep[i], NULL);
			op(&pl, V_ATTACH, slot++, pl.keep[i], NULL);
		}
		for (size_t i = 0; pl.links && pl.links[i]; i++) {
			bool dup = false;
			if (!wap_path_beneath(pl.links[i], top[t]) || kept(&pl, pl.links[i]))
				continue;
			for (size_t j = 0; j < i; j++)
				dup |= !strcmp(pl.links[j], pl.links[i]);
			if (dup)
				continue;
			make_way(&pl, top[t], pl.links[i]);
			op(&pl, V_LINK, 0, pl.links[i], pl.targets[i]);
		}
		op(&pl, V_SEAL, 0, top[t], NULL);
	}
	for (size_t i = 0; idm && idm[i]; i++)
		op(&pl, V_IDMAP, 0, idm[i], NULL);
	for (size_t i = 0; inner && inner[i]; i++)
		op(&pl, V_ATTACH, slot++, inner[i], NULL);
	for (size_t i = 0; shutv && shutv[i]; i++)	/* on the idmapped ones */
		op(&pl, V_HIDE, 0, shutv[i], NULL);
done:
	if (pl.oom)
		goto oom;
	rc = 0;
	goto out;
oom:
	wap_err_oom(err);
out:
	if (d)
		closedir(d);
	if (rc)
		wap_view_free(v);
	wap_strv_free(pl.keep);
	wap_strv_free(pl.dirs);
	wap_strv_free(pl.links);
	wap_strv_free(pl.targets);
	wap_strv_free(pl.made);
	wap_strv_free(top);
	wap_strv_free(hid);
	wap_strv_free(sysr);
	wap_strv_free(sysd);
	wap_strv_free(ownr);
	wap_strv_free(ownd);
	wap_strv_free(mnt);
	wap_strv_free(idm);
	wap_strv_free(inner);
	wap_strv_free(shutv);
	return rc;
}

bool wap_path_through(const char *path, char *const *dirs)
{
	struct plan pl = { .avoid = dirs };

	note_path(&pl, path, 0);
	wap_strv_free(pl.keep);
	wap_strv_free(pl.dirs);
	wap_strv_free(pl.links);
	wap_strv_free(pl.targets);
	return pl.through || pl.oom;
}

void wap_view_free(struct wap_view *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free(v->ops[i].path);
		free(v->ops[i].arg);
		free(v->ops[i].what);
	}
	free(v->ops);
	memset(v, 0, sizeof(*v));
	v->userns = -1;
}

/* From here on: the command's child, system calls only (rsys.h). */

#define OT_CLONE	1
#define MM_F_EMPTY_PATH	0x00000004
#define MA_IDMAP	0x00100000	/* MOUNT_ATTR_IDMAP */
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

struct idmap_attr {	/* struct mount_attr */
	uint64_t set, clr, propagation, userns_fd;
};

/* PATH again, through the idmapping of everyone (V_IDMAP): with its
 * mounts if each can be idmapped, else alone (a mount that cannot be
 * shown so is not shown).  0 or -errno. */
static long idmap(const char *path, int userns)
{
	struct idmap_attr ma = { .set = MA_IDMAP, .userns_fd = (uint64_t)userns };
	long t = -EINVAL, e = -EINVAL;

	for (int rec = 1; rec >= 0 && e == -EINVAL; rec--) {
		if (t >= 0)
			R1(close, t);
		t = R3(open_tree, AT_FDCWD, path, OT_CLONE | O_CLOEXEC | (rec ? AT_RECURSIVE : 0));
		if (t < 0)
			return t;
		e = R5(mount_setattr, t, "", AT_EMPTY_PATH | (rec ? AT_RECURSIVE : 0), &ma, sizeof(ma));
	}
	if (e >= 0)
		e = R5(move_mount, t, "", AT_FDCWD, path, MM_F_EMPTY_PATH);
	R1(close, t);
	return e;
}

int wap_view_enter(const struct wap_view *v, const char **what)
{
	long slot[MAX_SLOTS], e = 0;
	const char *hid = NULL;
	int nslot = 0;

	for (size_t i = 0; i < v->n && e >= 0; i++) {
		const struct wap_view_op *o = &v->ops[i];

		*what = o->what;
		switch (o->op) {
		case V_CLONE:
			e = R3(open_tree, AT_FDCWD, o->path, OT_CLONE | O_CLOEXEC | AT_RECURSIVE);
			if (e >= 0)
				slot[nslot++] = e;
			break;
		case V_COVER:
			e = R5(mount, "tmpfs", o->path, "tmpfs", MS_NOSUID | MS_NODEV,
			       "mode=0755,size=64k");
			break;
		case V_HIDE:	/* one empty file system, bound on the others */
			e = hid ? R5(mount, hid, o->path, NULL, MS_BIND, NULL) :
				  R5(mount, "tmpfs", o->path, "tmpfs",
				     MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=4k");
			hid = hid ? hid : o->path;
			break;
		case V_HIDE_FILE:
			e = R5(mount, "/dev/null", o->path, NULL, MS_BIND, NULL);
			break;
		case V_MKDIR:
			e = R3(mkdirat, AT_FDCWD, o->path, 0755);
			break;
		case V_MKFILE:
			e = R4(openat, AT_FDCWD, o->path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (e >= 0)
				e = R1(close, e);
			break;
		case V_LINK:
			e = R3(symlinkat, o->arg, AT_FDCWD, o->path);
			break;
		case V_ATTACH:
			e = R5(move_mount, slot[o->slot], "", AT_FDCWD, o->path, MM_F_EMPTY_PATH);
			break;
		case V_SEAL:
			e = R5(mount, NULL, o->path, NULL,
			       MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
			break;
		case V_UMOUNT:	/* one the kernel keeps (locked in a user
				 * namespace) stays, under its cover */
			R2(umount2, o->path, MNT_DETACH);
			break;
		case V_IDMAP:
			e = idmap(o->path, v->userns);
			break;
		}
		if (e == -EEXIST && o->op == V_MKDIR)
			e = 0;
	}
	for (int i = 0; i < nslot; i++)
		R1(close, slot[i]);
	return e < 0 ? (int)-e : 0;
}
