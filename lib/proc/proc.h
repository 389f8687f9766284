/* proc/proc.h - running a command so that nothing runs away.
 *
 * Where wap may make a PID namespace without a user namespace (root, with
 * setns back to its own: not gVisor), the calling thread makes it
 * (unshare(CLONE_NEWPID) changes only that thread's next child, and setns
 * takes it back right after the fork) and the child it forks is the
 * namespace's init, the supervisor, which vforks the command in a session
 * and process group of its own.  Not root, where user namespaces may be
 * made, clone makes the user namespace (mapping only wap's uid and gid),
 * the PID namespace and the init in one step.  In both the init is cloned
 * into wap's memory (CLONE_VM: no copy of a big server), sandboxed command
 * or not.  Elsewhere wap_proc_run() forks a small reaper process (a forked
 * wap) in a session of its own, which makes the PID namespace and forks
 * the init.  Nothing inside the namespace
 * can kill its init (the kernel drops SIGKILL and SIGSTOP from within;
 * other signals from inside are ignored) or name a process outside it, and
 * when the init dies the kernel kills every process in it; the init itself
 * dies with its parent (PR_SET_PDEATHSIG: SIGTERM, a cancel, in a server;
 * SIGKILL in a CLI).  So whatever the command does - background jobs,
 * double-forked daemons that called setsid(), killing its parent - the
 * deadline holds and the caller gets its result.  Where no PID namespace
 * can be made the reaper is the supervisor, as a child subreaper
 * (PR_SET_CHILD_SUBREAPER) that gets the orphans, or where that is missing
 * too (gVisor) a sweeper of the command's session in /proc; a command may
 * kill it then, and wap_proc_run kills the command's process group and
 * session and fails.  With none of the three it refuses to run anything.
 * When wap_proc_run() returns, no process of its command is alive.  Each
 * thread has its own init (or each call its own reaper), so calls running
 * side by side in one server never touch each other's processes.  A
 * thread's init (the CLONE_VM one) is kept for the thread's next command:
 * it runs them one at a time, kills what each left before it reports the
 * call done, and takes the next call's fds over a socket (SCM_RIGHTS); it
 * ends when the thread does (or with the process: its socket's end), and
 * after a CLI's only call (OPTS.last), which waits for it.
 *
 * Timeout and cancellation: SIGTERM to the command's group and to every
 * other descendant, KILL_AFTER_MS of grace, then SIGKILL.  The same happens
 * when the token CANCEL is set (checked at least every 50 ms; a signal
 * that interrupts the poll is noticed at once; set by SIGINT it sends
 * SIGINT instead of SIGTERM, so a CLI passes Ctrl-C on as it is), and to
 * leftovers after the command itself has exited.
 *
 * Output: both streams are read through pipes with bounded memory.  At most
 * MAX_OUTPUT bytes a stream are kept: the first half and the last half,
 * with the true byte count, so a command printing gigabytes costs a few
 * hundred KiB.  SAVE_FD[i] (when >= 0) receives the whole stream; OUTPUT
 * (when set) receives every chunk as it comes, cut on UTF-8 boundaries.
 *
 * All of this is lib/: it never prints or exits, and is leak-free.
 */
#ifndef WAP_PROC_H
#define WAP_PROC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cancel.h"
#include "err.h"

struct wap_sandbox;

struct wap_proc_opts {
	char *const *argv;		/* program and arguments; argv[0] found on PATH */
	char *const *envp;		/* the whole environment; NULL: inherit */
	int cwdfd;			/* directory to run in (fchdir); -1: inherit */
	int stdin_fd;			/* given to the command as is; -1: see below */
	const char *stdin_data;		/* written through a pipe when stdin_fd < 0; */
	size_t stdin_len;		/*   NULL: /dev/null */
	long timeout_ms;		/* <= 0: none */
	long kill_after_ms;		/* grace between SIGTERM and SIGKILL */
	size_t max_output;		/* bytes kept per stream (head + tail) */
	int save_fd[2];			/* -1 or an fd receiving all of stdout/stderr */
	const struct wap_cancel *cancel;	/* may be NULL */
	void (*output)(void *arg, const char *stream, const char *data, size_t len);
	void *output_arg;
	const struct wap_sandbox *sandbox;	/* applied in the command; may be NULL */
	bool last;			/* the caller has one thread and ends after this
					 * call: it may make the command's PID namespace
					 * itself (its later children are born in it) */
};

struct wap_proc_stream {
	char *data;		/* what was kept (head, marker, tail); malloc'd, NUL-terminated */
	size_t len;
	uint64_t bytes;		/* all the bytes the command wrote */
	bool truncated;
};

struct wap_proc_result {
	struct wap_proc_stream out[2];	/* stdout, stderr */
	int exit_code;			/* the status, or 128 + signal */
	int signal;			/* the signal that ended it, or 0 */
	bool timed_out;
	bool cancelled;
	long duration_ms;
};

/* Run the command to its end.  A non-zero exit is a result (0 returned),
 * not an error; -1 with err (EXECUTION_FAILED, or the sandbox's kind) when
 * it could not be started at all: "Command not found: foo".  On success
 * the caller releases RES with wap_proc_result_release(). */
int wap_proc_run(const struct wap_proc_opts *o, struct wap_proc_result *res,
		 struct wap_err *err);
void wap_proc_result_release(struct wap_proc_result *res);

/* How wap_proc_run holds a command's processes here: "pid-namespace",
 * "subreaper", "session-sweep", "none" (it refuses), or "unknown" (the
 * probe could not run).  Probed once, in a throwaway child. */
const char *wap_proc_supervisor(void);

/* In a forked, single-threaded child of wap that holds processes of its
 * own (a terminal, term.c): make its later children be born in a PID
 * namespace of its own, in a user namespace mapping only wap's ids when
 * not root, as exec's supervisor does.  Only where wap_proc_supervisor()
 * says "pid-namespace"; 0 or an errno. */
int wap_proc_enter_pidns(void);

/* Close every fd from 3 up but the N in KEEP (sorted in place): what a
 * forked child that does not exec must do, since close-on-exec does not
 * close anything for it. */
void wap_proc_close_others(int *keep, int n);

/* "SIGTERM" for 15; NULL if unknown. */
const char *wap_signal_name(int sig);

/* The marker put between head and tail of a cut stream. */
#define WAP_PROC_MARKER "\n\n... [%llu bytes omitted] ...\n\n"

#endif
