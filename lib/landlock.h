/* landlock.h - the sandbox a command runs in (wap exec --sandbox).
 *
 * Landlock confines the command: it may write only inside the workspace
 * root and the temp dir, and read (and execute) only the root, the temp
 * dir and the system directories (/usr, /etc, /bin, /lib, /opt, /proc, /sys,
 * /dev, /run, /var), plus the user's git configuration (~/.gitconfig,
 * ~/.config/git: git refuses to run when it cannot read them).  --no-network denies TCP bind and connect through
 * Landlock's network rules (ABI >= 4), or, on older kernels, runs the
 * command in a fresh network namespace where that is permitted.  The
 * sandbox always sets no_new_privs, and applies the rlimits it is given.
 *
 * Where the kernel lacks what was asked for, wap_sandbox_prepare() fails
 * with FEATURE_DISABLED ("Sandbox unavailable: ..."): a command is never
 * run less confined than requested.
 *
 * The ruleset is built in the caller (so errors are reported properly) and
 * entered in the forked command just before exec, with system calls only.
 */
#ifndef WAP_LANDLOCK_H
#define WAP_LANDLOCK_H

#include <stdbool.h>

#include "err.h"
#include "ws.h"

struct wap_sandbox_opts {
	bool fs;			/* confine the file system */
	bool read_only_root;		/* the root readable only (security.readOnly) */
	bool no_network;
	const char *tmpdir;		/* writable temp dir; NULL: $TMPDIR, else /tmp */
	long long max_memory;		/* RLIMIT_AS bytes; 0: unset */
	long long max_procs;		/* RLIMIT_NPROC; 0: unset */
	long long max_file_size;	/* RLIMIT_FSIZE bytes; 0: unset */
};

struct wap_sandbox {
	int ruleset_fd;			/* -1: no Landlock domain to enter */
	bool netns;			/* unshare a network namespace */
	bool userns;			/* ... inside a user namespace (unprivileged) */
	bool no_udp;			/* seccomp: no non-TCP inet sockets (see landlock.c) */
	unsigned uid, gid;		/* for the user namespace's maps */
	long long max_memory, max_procs, max_file_size;
	int abi;			/* the Landlock ABI in use (0: none) */
};

/* The kernel's Landlock ABI version, 0 if it has none.  $WAP_LANDLOCK_ABI
 * (a number) caps it, to test the fallbacks of older kernels. */
int wap_landlock_abi(void);

/* Build the sandbox for a command (the caller releases it). */
int wap_sandbox_prepare(struct wap_sandbox *sb, const struct wap_ws *ws,
			const struct wap_sandbox_opts *o, struct wap_err *err);
void wap_sandbox_release(struct wap_sandbox *sb);

/* Enter the sandbox: called in the forked command right before exec.
 * Returns 0, or an errno with *WHAT naming the step that failed. */
int wap_sandbox_enter(const struct wap_sandbox *sb, const char **what);

#endif
