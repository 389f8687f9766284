/* proc/landlock.h - the sandbox a command runs in (wap exec --sandbox, and
 * terminals under security.sandbox / readOnly / a command list).
 *
 * Landlock confines the command: it may write only inside the workspace
 * root (unless read-only) and a private temp dir made for the run (0700
 * under /tmp, whatever the caller's TMPDIR says; the command's TMPDIR
 * names it; wap_sandbox_release removes it), and read (and execute) only
 * the root, that dir and the system directories (/usr, /etc, /bin, /lib,
 * /opt, /proc, /sys, /dev, /run, /var), plus the user's git configuration
 * (~/.gitconfig, ~/.config/git: git refuses to run when it cannot read
 * them) but where the way to it passes through the root or the temp dirs
 * (the agent's to plant links in: $HOME may be the root).
 *
 * Abstract unix sockets outside the sandbox are out of its reach (ABI 6
 * scope), and Landlock does not see connect() on a pathname one: the command's
 * mount namespace shows only the paths its rules name (mntview.h), and of
 * the system dirs not /run (a container engine's socket, a session's
 * agents), but for what /etc/resolv.conf points to.  Its /proc is its PID
 * namespace's (no other process's command line), a copy of its init's
 * where there is one (wap_sandbox_proc), granted what the host's was.
 *
 * Landlock only grants, and a right on the root is inherited by ROOT/.git:
 * so the command runs in a private mount namespace where ROOT/.git, ROOT/.wap
 * and the .git of repositories two levels down are bind-mounted read-only
 * over themselves (a write there fails with EROFS).  No mount namespace,
 * no sandboxed command.  It has an IPC namespace of its own too (SysV IPC
 * and POSIX message queues: none of the host's, none left behind).
 *
 * With a command list (allowedCommands / restrictedCommands, --allow /
 * --deny) the kernel enforces it on files: EXECUTE (and READ, so that the
 * dynamic loader cannot map it either) is granted per file in the PATH
 * directories (the standard ones and the command's $PATH) to the programs
 * the lists allow by name, and never on the root or the temp dir, which are
 * also mounted noexec; memfd_create is refused.  Programs outside the PATH
 * directories (helpers under /usr/lib, /usr/libexec) stay runnable.  That
 * part is a second Landlock layer handling only EXECUTE and READ_FILE
 * (sb->list_fd): some 2,000 rules, made once and kept by the process for
 * the next commands while the directories it was decided by are unchanged
 * (a program installed, a link turned by update-alternatives: made anew).
 *
 * --no-network denies TCP bind and connect through Landlock's network
 * rules (ABI >= 4) and, with seccomp, every socket but AF_UNIX (UDP, raw,
 * netlink, vsock, TCP listen with autobind, TCP fast open) and io_uring;
 * ABI 6 scopes abstract unix sockets to the sandbox.  On older kernels the
 * command runs in a fresh network namespace where that is permitted.  The
 * sandbox always sets no_new_privs, and applies the rlimits it is given.
 * The file system sandbox also refuses open_by_handle_at and the kernel
 * keyrings (seccomp: no namespace of its holds them), device
 * nodes and every device but the usual character ones, and keeps only the
 * capabilities of file work (bounding set included) for a command run as
 * root.
 *
 * Where the kernel lacks what was asked for, wap_sandbox_prepare() fails
 * with FEATURE_DISABLED ("Sandbox unavailable: ..."): a command is never
 * run less confined than requested.
 *
 * The ruleset is built in the caller (so errors are reported properly) and
 * entered in the command's child just before exec, with system calls only
 * and no libc (rsys.h: that child may share the caller's memory, see
 * proc.c), so a sandboxed command costs no copy of the caller either.
 */
#ifndef WAP_LANDLOCK_H
#define WAP_LANDLOCK_H

#include <stdint.h>
#include <stdbool.h>

#include "err.h"
#include "mntview.h"
#include "ws.h"

struct wap_cmdrules;

struct wap_sandbox_opts {
	bool fs;			/* confine the file system */
	bool read_only_root;		/* the root readable only (security.readOnly) */
	bool no_network;
	const char *cwd;		/* where the command starts, relative to the root */
	const char *path;		/* the command's $PATH (for the lists); NULL: none */
	const char *shell;		/* a shell that stays runnable (exec -c); or NULL */
	const struct wap_cmdrules *rules[2];	/* command lists to enforce; or NULL */
	char *const *read_dirs;		/* more dirs to read and run from (a language
					 * server's install prefix); NULL-terminated, or NULL */
	long long max_memory;		/* RLIMIT_AS bytes; 0: unset */
	long long max_procs;		/* RLIMIT_NPROC; 0: unset */
	long long max_file_size;	/* RLIMIT_FSIZE bytes; 0: unset */
};

struct wap_sandbox {
	int ruleset_fd;			/* -1: no Landlock domain to enter */
	int list_fd;			/* -1, or the command lists' layer (landlock.c) */
	bool netns;			/* unshare a network namespace */
	bool userns;			/* ... inside a user namespace (unprivileged) */
	bool no_udp;			/* seccomp: no non-TCP inet sockets (see landlock.c) */
	unsigned uid, gid;		/* for the user namespace's maps */
	long long max_memory, max_procs, max_file_size;
	int abi;			/* the Landlock ABI in use (0: none) */
	char *tmpdir;			/* the private temp dir (removed on release) */
	char *tmpenv;			/* "TMPDIR=..." for the command's environment */
	bool mntns;			/* a private mount namespace with: */
	uint64_t pts_access;		/* ... a devpts of its own, granted this */
	uint64_t proc_access;		/* ... a proc of its PID namespace's, granted
					 * this (0: the host's /proc stays), and */
	uint64_t proc_list;		/* ... this in the list layer */
	int proc_fd;			/* ... a copy of this one (its init's:
					 * wap_sandbox_proc), or -1 */
	char **pin;			/* ... these dirs bound on themselves (so
					 * that none can be renamed), and */
	char **ro;			/* ... these paths bind-mounted read-only */
	char **noexec;			/* ... these noexec (while a list holds) */
	char **rw;			/* ... these alone mounted writable */
	char *cwd;			/* ... and the start dir entered again after */
	struct wap_view view;		/* ... showing only what the rules name */
	bool fs;			/* seccomp: no open_by_handle_at, no keyrings */
	bool no_memfd;			/* ... nor memfd_create (lists) */
};

/* The kernel's Landlock ABI version, 0 if it has none.  $WAP_LANDLOCK_ABI
 * (a number) caps it, to test the fallbacks of older kernels. */
int wap_landlock_abi(void);

/* Build the sandbox for a command (the caller releases it, also after an
 * error).  Set the command's TMPDIR to sb->tmpenv when that is not NULL. */
int wap_sandbox_prepare(struct wap_sandbox *sb, const struct wap_ws *ws,
			const struct wap_sandbox_opts *o, struct wap_err *err);
void wap_sandbox_release(struct wap_sandbox *sb);

/* Enter the sandbox: called in the forked command right before exec.
 * Returns 0, or an errno with *WHAT naming the step that failed. */
int wap_sandbox_enter(const struct wap_sandbox *sb, const char **what);

/* A proc of the caller's PID namespace, not mounted anywhere, for the
 * sandboxed commands it starts to mount a copy of (sb->proc_fd): a
 * namespace's init makes it once, in a mount namespace of its own first
 * (OWN_NS: where it has no right to mount in its parent's).  Its fd, or -1
 * where none can be made.  System calls only (rsys.h). */
int wap_sandbox_proc(bool own_ns);

/* What a program found at FOUND (a language server) reads of its own
 * install, pushed onto *DIRS as real paths: its install prefix, or, where
 * that is in $HOME, its bin dir and the prefix's lib dirs; never / nor
 * $HOME nor a directory holding it.  0, or -1 when out of memory.  Here, as
 * every realpath() of a sandbox's grant is (tests/lint.sh). */
int wap_sandbox_prefix(const char *found, char ***dirs);

#endif
