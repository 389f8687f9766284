/* proc/proc.c - run a command in its own session under a per-call reaper, with
 * timeouts, cancellation, bounded output capture and no orphans (proc.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "landlock.h"
#include "proc.h"
#include "rsys.h"
#include "text.h"

extern char **environ;

#define CHUNK 65536
/* how long past a command's deadline and grace wap waits for its
 * supervisor before it kills the supervisor itself */
#define WATCHDOG_MS 2000

/* Records on the status pipe (each write is atomic: < PIPE_BUF). */
enum { REC_SPAWN_FAILED = 1, REC_DONE = 2, REC_STARTED = 3 };
struct rec {
	int type;
	int kind;	/* SPAWN_FAILED: wap_errkind */
	int status;	/* DONE: wait status of the command; STARTED: its pid */
	int timed_out, cancelled;
	int eno;	/* SPAWN_FAILED from the shared init: strerror(eno) follows */
	char msg[200];
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

const char *wap_signal_name(int sig)
{
	static const char *const names[] = {
		[SIGHUP] = "SIGHUP", [SIGINT] = "SIGINT", [SIGQUIT] = "SIGQUIT",
		[SIGILL] = "SIGILL", [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",
		[SIGBUS] = "SIGBUS", [SIGFPE] = "SIGFPE", [SIGKILL] = "SIGKILL",
		[SIGUSR1] = "SIGUSR1", [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
		[SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM",
		[SIGCHLD] = "SIGCHLD", [SIGCONT] = "SIGCONT", [SIGSTOP] = "SIGSTOP",
		[SIGTSTP] = "SIGTSTP", [SIGTTIN] = "SIGTTIN", [SIGTTOU] = "SIGTTOU",
		[SIGURG] = "SIGURG", [SIGXCPU] = "SIGXCPU", [SIGXFSZ] = "SIGXFSZ",
		[SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF", [SIGWINCH] = "SIGWINCH",
		[SIGIO] = "SIGIO", [SIGPWR] = "SIGPWR", [SIGSYS] = "SIGSYS",
	};
	if (sig > 0 && sig < (int)(sizeof(names) / sizeof(names[0])))
		return names[sig];
	return NULL;
}

/* ---- the reaper (runs in the forked child: system calls only) ---- */

static void put_rec(int fd, const struct rec *r)
{
	ssize_t n;

	do
		n = write(fd, r, sizeof(*r));
	while (n < 0 && errno == EINTR);
}

static void fail_rec(int fd, int kind, const char *fmt, const char *a, const char *b)
{
	struct rec r = { .type = REC_SPAWN_FAILED, .kind = kind };

	snprintf(r.msg, sizeof(r.msg), fmt, a, b);
	put_rec(fd, &r);
}

/* Send SIG to the child PID unless it is in group SKIP (signalled as a
 * group already: a second SIGINT would run a trap twice). */
static void signal_child(pid_t pid, int sig, pid_t skip)
{
	if (pid > 0 && getpgid(pid) != skip)
		kill(pid, sig);
}

/* Send SIG to every child of this process outside group SKIP; returns how
 * many children were found. */
static int signal_children(int sig, pid_t skip)
{
	char path[64], buf[4096];
	int fd, found = 0;
	ssize_t n;
	pid_t me = getpid();

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)me, (int)me);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		/* the list may be longer than one buffer: read it in pieces */
		char num[16];
		size_t nl = 0;
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			for (ssize_t i = 0; i < n; i++) {
				if (buf[i] >= '0' && buf[i] <= '9') {
					if (nl + 1 < sizeof(num))
						num[nl++] = buf[i];
				} else if (nl) {
					num[nl] = 0;
					signal_child((pid_t)atoi(num), sig, skip);
					found++;
					nl = 0;
				}
			}
		}
		if (nl) {
			num[nl] = 0;
			signal_child((pid_t)atoi(num), sig, skip);
			found++;
		}
		close(fd);
		return found;
	}
	/* no children file: scan /proc for our children */
	DIR *d = opendir("/proc");
	struct dirent *e;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char *p;
		int sfd;
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		sfd = open(path, O_RDONLY | O_CLOEXEC);
		if (sfd < 0)
			continue;
		n = read(sfd, buf, sizeof(buf) - 1);
		close(sfd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		p = strrchr(buf, ')');	/* comm may hold spaces and parens */
		if (p && p[1] == ' ' && p[2] && p[3] == ' ' && atoi(p + 4) == me) {
			signal_child((pid_t)atoi(e->d_name), sig, skip);
			found++;
		}
	}
	closedir(d);
	return found;
}

/* Send SIG (0: none) to every live process of session SID, found in
 * /proc; returns how many there were, or -1 without a /proc.  The session
 * id is the command's pid, which the kernel does not hand out again while
 * any process of that session is alive. */
static int sweep_session(pid_t sid, int sig)
{
	char path[64], buf[512];
	DIR *d = opendir("/proc");
	struct dirent *e;
	int found = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char *p, state;
		int fd, session;
		ssize_t n;
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		p = strrchr(buf, ')');	/* comm may hold spaces and parens */
		/* ") STATE PPID PGRP SESSION" */
		if (!p || sscanf(p + 1, " %c %*d %*d %d", &state, &session) != 2 ||
		    session != sid || state == 'Z' || state == 'X')
			continue;
		if (sig)
			kill((pid_t)atoi(e->d_name), sig);
		found++;
	}
	closedir(d);
	return found;
}

/* How the command's tree is held, strongest first (wap_proc_supervisor).
 * In a PID namespace of its own the supervisor is its init: kill(-1)
 * reaches every process of the namespace once, whatever session or group
 * it moved to, and nothing outside it.  A subreaper gets the orphans as
 * its children.  Without either, the orphans go to the machine's init:
 * the supervisor finds them by the command's session in /proc (a process
 * that calls setsid() itself is out of reach then). */
enum { SUP_NONE, SUP_SWEEP, SUP_SUBREAPER, SUP_PIDNS };
/* not probed yet: the reaper tries a PID namespace first and probes only
 * if it cannot have one (a command run by root saves the probe's fork) */
#define SUP_TRY (SUP_PIDNS + 1)
/* the calling thread made the namespace: the child it forks is the init */
#define SUP_DIRECT (SUP_PIDNS + 2)
static const char *const sup_names[] = {
	[SUP_NONE] = "none", [SUP_SWEEP] = "session-sweep",
	[SUP_SUBREAPER] = "subreaper", [SUP_PIDNS] = "pid-namespace",
};
static bool in_pidns;
static int sup_mode;	/* the supervisor's: SUP_SUBREAPER or SUP_SWEEP outside a namespace */

static void terminate_all(pid_t pgid, int sig)
{
	if (in_pidns) {
		kill(-1, sig);
		if (sig != SIGKILL)
			kill(-1, SIGCONT);
		return;
	}
	kill(-pgid, sig);
	signal_children(sig, pgid);
	if (sup_mode == SUP_SWEEP)
		sweep_session(pgid, sig);
	if (sig != SIGKILL) {
		kill(-pgid, SIGCONT);	/* a stopped process must run to die */
		signal_children(SIGCONT, pgid);
		if (sup_mode == SUP_SWEEP)
			sweep_session(pgid, SIGCONT);
	}
}

struct child_io {
	int in, out, err, status;
};

/* In the forked child, between fork and exec: the sandbox (Landlock,
 * seccomp, rlimits), the working directory and the signals must be set
 * here, which posix_spawn cannot do.  The child cannot return (the
 * caller's code would run twice): a failure is written to io->status,
 * which the parent turns into the caller's wap_err, and _exit ends it. */
static __attribute__((noreturn)) void run_command(const struct wap_proc_opts *o,
						  const struct child_io *io)
{
	const char *what = NULL;
	int e;

	if (setsid() < 0)
		goto fail;
	if (!in_pidns) {
		/* should the command kill its supervisor, wap kills its group:
		 * said from here, before the command can run at all */
		struct rec r = { .type = REC_STARTED, .status = getpid() };
		put_rec(io->status, &r);
	}
	if (dup2(io->in, 0) < 0 || dup2(io->out, 1) < 0 || dup2(io->err, 2) < 0)
		goto fail;
	/* nothing of wap's but 0-2 (and the status pipe, until exec) survives
	 * (INT_MAX, the last fd there can be, not ~0U: gVisor refuses that) */
	syscall(SYS_close_range, 3U, (unsigned)INT_MAX, 4U /* CLOSE_RANGE_CLOEXEC */);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	{
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	if (o->cwdfd >= 0 && fchdir(o->cwdfd) < 0) {
		e = errno;
		fail_rec(io->status, WAP_E_FAILED, "Cannot enter the working directory: %s%s",
			 strerror(e), "");
		_exit(126);
	}
	if (o->sandbox && (e = wap_sandbox_enter(o->sandbox, &what))) {
		fail_rec(io->status, WAP_E_DISABLED, "Sandbox unavailable: %s: %s", what,
			 strerror(e));
		_exit(126);
	}
	if (o->envp)
		environ = (char **)o->envp;	/* so PATH is looked up in the new environment */
	execvp(o->argv[0], o->argv);
	e = errno;
	if (e == ENOENT)
		fail_rec(io->status, WAP_E_FAILED, "Command not found: %s%s", o->argv[0], "");
	else
		fail_rec(io->status, WAP_E_FAILED, "Cannot run %s: %s", o->argv[0], strerror(e));
	_exit(e == ENOENT ? 127 : 126);
fail:
	fail_rec(io->status, WAP_E_FAILED, "Cannot start the command: %s%s", strerror(errno), "");
	_exit(126);
}

/* vfork: the reaper only waits anyway, and it saves copying the page
 * tables of a big process (run_command makes system calls only and writes
 * nothing the reaper reads).  The child never returns from here.  ASan
 * wants a real fork. */
static __attribute__((noinline)) pid_t start_command(const struct wap_proc_opts *o,
						     const struct child_io *io)
{
#if defined(__SANITIZE_ADDRESS__)
	pid_t p = fork();
#else
	pid_t p = vfork();
#endif
	if (p == 0)
		run_command(o, io);
	return p;
}

/* The init cloned into the caller's memory (CLONE_VM, below) calls no libc:
 * it makes its system calls itself (rsys.h). */
#if !defined(__SANITIZE_ADDRESS__) && defined(WAP_RSYS_RAW)
#define SHARED_INIT 1
#endif

/* Close every fd from 3 up but those in KEEP.  In a threaded server another
 * call's pipes may have been open at our fork: holding their write ends
 * would keep that call waiting for EOF until this one ends. */
static void close_others(int *keep, int n)
{
	unsigned lo = 3;

	for (int i = 1; i < n; i++)	/* insertion sort: n is tiny */
		for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (int i = 0; i <= n; i++) {
		/* up to INT_MAX, the last fd there can be (gVisor refuses a
		 * range past it, and a loop to 65536 costs it seconds) */
		unsigned hi = i < n ? (unsigned)keep[i] : (unsigned)INT_MAX + 1;
		if (i < n && (keep[i] < 0 || (unsigned)keep[i] < lo))
			continue;
		if (hi > lo && R3(close_range, lo, hi - 1, 0) < 0) {
			unsigned end = i == n ? 65536 : hi;
			for (unsigned fd = lo; fd < end; fd++)
				R1(close, fd);
		}
		if (i < n)
			lo = hi + 1;
	}
}

static int put_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), e = 0;

	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		e = errno ? errno : EIO;
	close(fd);
	return e;
}

/* A PID namespace for the command: its supervisor becomes the namespace's
 * init, which no process inside can kill (the kernel drops SIGKILL and
 * SIGSTOP sent to it from within) and whose death makes the kernel kill
 * every process of the namespace.  Nothing outside it - the outer reaper,
 * wap - can be named by a pid from inside.  Root gets one directly; anyone
 * else inside a user namespace mapping only their own uid and gid.  0, an
 * errno (nothing changed: the caller falls back to the subreaper), or -1
 * (half made: the call fails). */
static int enter_pidns(void)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int e;

	if (!unshare(CLONE_NEWPID))
		return 0;
	if (errno != EPERM || unshare(CLONE_NEWUSER | CLONE_NEWPID))
		return errno;
	/* in the user namespace now: no way back, so a failure here is the
	 * call's (-1), not a reason to fall back (wap_proc_supervisor has
	 * tried it in a throwaway child first).  No setgroups file (gVisor,
	 * Linux before 3.19): the gid_map write alone decides. */
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (put_file("/proc/self/uid_map", map))
		return -1;
	e = put_file("/proc/self/setgroups", "deny");
	if (e && e != ENOENT)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (put_file("/proc/self/gid_map", map))
		return -1;
	return 0;
}

/* The strongest supervisor this process can have, tried once (and again
 * only if the try itself could not be made) in a throwaway child, so that
 * a user namespace that cannot be mapped (gVisor in a container) is known
 * before the reaper enters it for good.  WAP_EXEC_SUPERVISOR (tests) names
 * a weaker one to use: it can only lower the level, never raise it. */
static int sup_level = -1;
static pthread_mutex_t sup_lock = PTHREAD_MUTEX_INITIALIZER;

#ifdef SHARED_INIT
static int probe_userns(void);
#endif

/* The level a throwaway child reaches; -1 if it could not be made. */
static int probe_child(void)
{
	int st;
	pid_t p;

#ifdef SHARED_INIT
	if (geteuid() != 0 && !probe_userns())
		return SUP_PIDNS;
#endif
	p = fork();

	if (p == 0) {
		if (!enter_pidns())
			_exit(SUP_PIDNS);
		if (!prctl(PR_SET_CHILD_SUBREAPER, 1))
			_exit(SUP_SUBREAPER);
		_exit(sweep_session(getsid(0), 0) > 0 ? SUP_SWEEP : SUP_NONE);
	}
	if (p < 0)
		return -1;
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) > SUP_PIDNS)
		return -1;
	return WEXITSTATUS(st);
}

static int sup_probe(void)
{
	int level = -1;
	const char *force = getenv("WAP_EXEC_SUPERVISOR");

	pthread_mutex_lock(&sup_lock);
	if (sup_level >= 0) {
		level = sup_level;
		goto out;
	}
	level = probe_child();
	if (level < 0)
		goto out;
	for (int i = 0; force && i <= SUP_PIDNS; i++)
		if (!strcmp(force, sup_names[i]) && i < level)
			level = i;
	sup_level = level;
out:
	pthread_mutex_unlock(&sup_lock);
	return level;
}

int wap_proc_enter_pidns(void)
{
	int e = enter_pidns();

	return e < 0 ? EPERM : e;
}

void wap_proc_close_others(int *keep, int n)
{
	close_others(keep, n);
}

const char *wap_proc_supervisor(void)
{
	int level = sup_probe();

	return level < 0 ? "unknown" : sup_names[level];
}

/* The supervisor: starts the command and enforces the deadline, the
 * cancel and the cleanup.  Either init of the command's PID namespace
 * (in_pidns) or, where there is none, a child subreaper or a session
 * sweeper (sup_mode). */
static __attribute__((noreturn)) void supervise(const struct wap_proc_opts *o,
						const struct child_io *io,
						const sigset_t *set)
{
	struct rec done = { .type = REC_DONE };
	pid_t cmd;
	long deadline = 0, kill_at = 0;
	enum { RUN, TERM, KILL } phase = RUN;
	bool cmd_done = false;

	cmd = start_command(o, io);
	if (cmd < 0) {
		fail_rec(io->status, WAP_E_FAILED, "Cannot start the command: %s%s",
			 strerror(errno), "");
		_exit(125);
	}
	if (o->timeout_ms > 0)
		deadline = now_ms() + o->timeout_ms;
	for (;;) {
		long now = now_ms(), wait = -1;
		siginfo_t si;
		int sig, st;
		pid_t p;
		bool any = false, left = false;

		/* reap */
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			if (p == cmd) {
				done.status = st;
				cmd_done = true;
			}
		/* without a subreaper the orphans are not ours to wait for:
		 * they are sought in the command's session */
		if (cmd_done && sup_mode == SUP_SWEEP && !in_pidns)
			left = sweep_session(cmd, 0) > 0;
		if (p < 0 && errno == ECHILD && !left) {
			if (cmd_done)
				break;
		} else {
			any = true;
		}
		if (cmd_done && phase == RUN && any) {
			/* the command is over: what it left behind goes too */
			phase = TERM;
			kill_at = now + o->kill_after_ms;
			terminate_all(cmd, SIGTERM);
		}
		if (phase == RUN && deadline && now >= deadline) {
			done.timed_out = 1;
			phase = TERM;
			kill_at = now + o->kill_after_ms;
			terminate_all(cmd, SIGTERM);
		}
		if (phase == TERM && now >= kill_at)
			phase = KILL;
		if (phase == KILL) {
			terminate_all(cmd, SIGKILL);
			wait = 20;	/* orphans of the killed reparent to us */
		} else if (phase == TERM) {
			wait = kill_at - now;
			if (left && wait > 20)
				wait = 20;	/* their end sends us no SIGCHLD */
		} else if (deadline) {
			wait = deadline - now;
		}
		if (wait >= 0) {
			struct timespec ts = { wait / 1000, (wait % 1000) * 1000000L };
			sig = sigtimedwait(set, &si, &ts);
		} else {
			sig = sigwaitinfo(set, &si);
		}
		/* as init, a cancel comes only from outside the namespace (the
		 * outer reaper: si_pid 0 here); the command signalling pid 1
		 * cancels nothing */
		if (in_pidns && sig > 0 && sig != SIGCHLD && (si.si_code != SI_USER || si.si_pid))
			continue;
		if ((sig == SIGTERM || sig == SIGINT || sig == SIGHUP) && phase == RUN) {
			done.cancelled = 1;
			phase = TERM;
			kill_at = now_ms() + o->kill_after_ms;
			/* SIGINT is passed on as it is (an interactive program
			 * may clean up on it); anything else becomes SIGTERM */
			terminate_all(cmd, sig == SIGINT ? SIGINT : SIGTERM);
		}
	}
	put_rec(io->status, &done);
	_exit(0);
}

/* The outer reaper, forked by wap_proc_run.  With a PID namespace it only
 * forks the namespace's init and passes cancels on to it; when it dies
 * (killed from outside: nothing inside can name it), the init gets
 * SIGKILL and the kernel kills the namespace. */
static __attribute__((noreturn)) void reaper(const struct wap_proc_opts *o,
					     const struct child_io *io, pid_t parent, int level)
{
	sigset_t set;
	pid_t init;
	int e;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	{
		int keep[] = { io->in, io->out, io->err, io->status, o->cwdfd,
			       o->sandbox ? o->sandbox->ruleset_fd : -1,
			       o->sandbox ? o->sandbox->list_fd : -1,
			       o->sandbox ? o->sandbox->view.userns : -1 };
		close_others(keep, (int)(sizeof(keep) / sizeof(keep[0])));
		/* nor wap's stdin/stdout (in `wap serve` they are the protocol's):
		 * a client waiting for EOF must not wait for us */
		if (io->in > 1 && io->out > 1 && io->err > 1 && io->status > 1) {
			dup2(io->in, 0);
			dup2(io->err, 1);
		}
	}
	signal(SIGCHLD, SIG_DFL);	/* SIG_IGN would reap behind our back */
	/* wap going away counts as a cancel (SIGTERM: the command's tree
	 * gets its grace, as for any cancel); when wap made the namespace
	 * (DIRECT) this is its init.  A CLI (o->last) that is killed takes
	 * the namespace down at once: the init's death ends it.  (The signal
	 * comes when the thread that forked us ends: wap_proc_run's, which
	 * waits for us.) */
	prctl(PR_SET_PDEATHSIG, level == SUP_DIRECT && o->last ? SIGKILL : SIGTERM);
	if (level == SUP_DIRECT) {
		/* (getppid() is 0 here: wap is outside.  Should wap die
		 * before the prctl, this init still keeps the deadline.)  No
		 * setsid here: as the namespace's init it takes no signal from
		 * a terminal or from inside (supervise), and a session of its
		 * own is a scheduler group of its own (autogroup), which a busy
		 * machine runs late at each of its wake-ups: 2-5 ms a command
		 * at load 5 on 2 cores.  The command still gets its session. */
		in_pidns = true;
		supervise(o, io, &set);
	}
	if (getppid() != parent)
		_exit(125);
	setsid();
	if (level == SUP_TRY) {
		/* unshare(CLONE_NEWPID) alone changes nothing when it fails; a
		 * user namespace might, so only a throwaway child tries that */
		if (!unshare(CLONE_NEWPID)) {
			level = SUP_PIDNS;
			e = 0;
			goto entered;
		}
		level = probe_child();
		if (level <= SUP_NONE) {
			fail_rec(io->status, WAP_E_DISABLED, "Command execution unavailable: no PID "
				 "namespace, subreaper or /proc to hold the command's processes%s%s", "", "");
			_exit(125);
		}
	}
	e = level == SUP_PIDNS ? enter_pidns() : EPERM;
entered:
	if (e < 0) {
		fail_rec(io->status, WAP_E_FAILED, "Cannot map the user namespace of the command%s%s",
			 "", "");
		_exit(125);
	}
	if (e) {
		/* no namespace: a subreaper gets the orphans, or else the
		 * command's session is swept; either way a command may kill
		 * its supervisor (wap_proc_run then kills its group and
		 * session) */
		sup_mode = SUP_SWEEP;
		if (level >= SUP_SUBREAPER && !prctl(PR_SET_CHILD_SUBREAPER, 1))
			sup_mode = SUP_SUBREAPER;
		supervise(o, io, &set);
	}
	init = fork();
	if (init < 0) {
		fail_rec(io->status, WAP_E_FAILED, "Cannot start the command: %s%s",
			 strerror(errno), "");
		_exit(125);
	}
	if (init == 0) {
		/* (getppid() is 0 here: the parent is outside.  Should the
		 * reaper die before this, the init still keeps the deadline.) */
		in_pidns = true;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		supervise(o, io, &set);
	}
	/* hold nothing of the command's: EOF on them is the init's and its
	 * namespace's end */
	close(io->status);
	close(io->out);
	close(io->err);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si), st;
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
			kill(init, sig);
		if (waitpid(init, &st, WNOHANG) == init)
			_exit(0);
	}
}

/* ---- the init without a copy of the caller (CLONE_VM) ----
 *
 * Where the caller makes the namespace itself (SUP_DIRECT), or clone makes
 * it with a user namespace (not root), the init is cloned with CLONE_VM,
 * sandboxed command or not: it runs on a stack of
 * its own in the caller's memory, which saves copying the caller's page
 * tables and tearing them down again (a fork and exit of even a small
 * process costs 300-450 µs of CPU on a 2-core VM, clone(CLONE_VM) 25-65 µs;
 * a server's is bigger).  The init and the command it starts (clone with
 * CLONE_VM | CLONE_VFORK, until its exec) then run beside the calling
 * thread in the same memory and with the same thread pointer: they must
 * not call into libc at all (errno is the calling thread's, malloc's cache
 * too), so they make their system calls themselves, write only to their
 * own stacks and the status pipe, and leave the messages to the caller
 * (the sandbox too is entered with system calls only: landlock.c).
 * The guarantees are the namespace's, as with a forked init: the same
 * supervision (shared_init is supervise's in_pidns branch). */
#ifdef SHARED_INIT

struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

/* A call's request, sent on the init's socket with the call's fds */
enum { RQ_IN, RQ_OUT, RQ_ERR, RQ_STATUS, RQ_CWD, RQ_RULES, RQ_LIST, RQ_USERNS, RQ_FDS };
struct preq {
	const struct wap_proc_opts *o;
	char **envp;
	unsigned have;		/* bit i: fd i (RQ_*) was sent */
	bool last;		/* the init ends after this command */
};

struct shared {
	/* what a thread's init is started with, for its life */
	unsigned long block;	/* kernel sigset: CHLD TERM INT HUP */
	char *cmd_top;		/* the command's stack until its exec */
	int sock;		/* the init's end of its socket */
	int pdeath;		/* its parent-death signal */
	bool userns;		/* the init is in a user namespace of its own: */
	char uid_map[32], gid_map[32];	/* it maps wap's ids onto themselves */
	struct preq first;	/* the call that started it, whose fds it has */
	int first_fds[RQ_FDS];	/* from its copy of wap's table (RQ_*) */
};

/* One command as the init starts it: the call's options, read in wap's
 * memory, and the call's file descriptors as the init received them. */
struct shcmd {
	const struct wap_proc_opts *o;
	struct child_io io;
	int cwdfd;
	const struct wap_sandbox *sb;
	char **envp;
};

static size_t r_strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

static void r_dup2(int from, int to)
{
	if (from != to)
		R3(dup3, from, to, 0);
}

/* A failure record of KIND; the caller appends strerror(ENO) when ENO is
 * set. */
static void r_fail(int fd, enum wap_errkind kind, const char *a, const char *b, int eno)
{
	struct rec r = { .type = REC_SPAWN_FAILED, .kind = kind, .eno = eno };
	size_t n = 0;

	for (const char *s = a; s && *s && n < sizeof(r.msg) - 1; s++)
		r.msg[n++] = *s;
	for (const char *s = b; s && *s && n < sizeof(r.msg) - 1; s++)
		r.msg[n++] = *s;
	while (R3(write, fd, &r, sizeof(r)) == -EINTR)
		;
}

/* execve FILE, and if the kernel does not know its format, as a shell
 * script (what execvp does); returns the error. */
static long r_execve(const char *file, char *const *argv, char **envp)
{
	long e = R3(execve, file, argv, envp);

	if (e == -ENOEXEC) {
		int n = 0;
		while (argv[n])
			n++;
		const char *sh[n + 2];
		sh[0] = "/bin/sh";
		sh[1] = file;
		for (int i = 1; i <= n; i++)
			sh[i + 1] = argv[i];
		R3(execve, sh[0], sh, envp);
	}
	return e;
}

/* The command, in the caller's memory until its exec: run_command, with
 * execvp's PATH search made here. */
static int shared_cmd(void *arg)
{
	const struct shcmd *c = arg;
	const struct wap_proc_opts *o = c->o;
	const struct child_io *io = &c->io;
	const char *file = o->argv[0], *path = NULL, *what = NULL;
	unsigned long none = 0;
	long e;
	bool eacces = false;

	if ((e = R0(setsid)) < 0)
		goto fail;
	r_dup2(io->in, 0);
	r_dup2(io->out, 1);
	r_dup2(io->err, 2);
	R3(close_range, 3U, (unsigned)INT_MAX, 4U /* CLOSE_RANGE_CLOEXEC */);
	/* every signal's action is the default already (the init's, set
	 * when it began): unblocked, none runs a handler in wap's memory */
	R4(rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(none));
	if (c->cwdfd >= 0 && (e = R1(fchdir, c->cwdfd)) < 0) {
		r_fail(io->status, WAP_E_FAILED, "Cannot enter the working directory", NULL, (int)-e);
		R1(exit_group, 126);
	}
	if (c->sb && (e = wap_sandbox_enter(c->sb, &what))) {
		r_fail(io->status, WAP_E_DISABLED, "Sandbox unavailable: ", what, (int)e);
		R1(exit_group, 126);
	}
	for (char **v = c->envp; v && *v && !path; v++)
		if (v[0][0] == 'P' && v[0][1] == 'A' && v[0][2] == 'T' && v[0][3] == 'H' &&
		    v[0][4] == '=')
			path = *v + 5;
	for (const char *s = file; *s; s++)
		if (*s == '/')
			path = "";
	if (path && !*path) {
		/* a path, or PATH empty (the working directory alone) */
		e = r_execve(file, o->argv, c->envp);
	} else {
		size_t fl = r_strlen(file);
		char buf[PATH_MAX];
		if (!path)
			path = "/bin:/usr/bin";	/* execvp's default */
		e = -ENOENT;
		if (fl > NAME_MAX)
			e = -ENAMETOOLONG;
		for (const char *p = path; fl <= NAME_MAX; ) {
			const char *end = p;
			size_t dl;
			while (*end && *end != ':')
				end++;
			dl = (size_t)(end - p);
			if (dl + 1 + fl < sizeof(buf)) {
				size_t k = 0;
				for (size_t i = 0; i < dl; i++)
					buf[k++] = p[i];
				if (dl)
					buf[k++] = '/';
				for (size_t i = 0; i <= fl; i++)
					buf[k++] = file[i];
				e = r_execve(buf, o->argv, c->envp);
				if (e == -EACCES)
					eacces = true;
				else if (e != -ENOENT && e != -ENOTDIR && e != -ESTALE &&
					 e != -ENODEV && e != -ETIMEDOUT)
					break;
			}
			if (!*end)
				break;
			p = end + 1;
		}
		if (eacces && (e == -ENOENT || e == -ENOTDIR || e == -ESTALE || e == -ENODEV ||
			       e == -ETIMEDOUT))
			e = -EACCES;
	}
	if (e == -ENOENT)
		r_fail(io->status, WAP_E_FAILED, "Command not found: ", file, 0);
	else
		r_fail(io->status, WAP_E_FAILED, "Cannot run ", file, (int)-e);
	R1(exit_group, e == -ENOENT ? 127 : 126);
fail:
	r_fail(io->status, WAP_E_FAILED, "Cannot start the command", NULL, (int)-e);
	R1(exit_group, 126);
	return 0;
}

static long r_now_ms(void)
{
	struct timespec ts;

	R2(clock_gettime, CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static void r_terminate_all(int sig)
{
	R2(kill, -1, sig);
	if (sig != SIGKILL)
		R2(kill, -1, SIGCONT);
}

/* In a user namespace just made: map wap's uid and gid onto themselves
 * (enter_pidns's maps); 0 or -errno. */
static long r_map_ids(const struct shared *sh)
{
	long e = r_put_file("/proc/self/uid_map", sh->uid_map);

	if (!e && (e = r_put_file("/proc/self/setgroups", "deny")) == -ENOENT)
		e = 0;	/* no setgroups file: the gid_map write alone decides */
	if (!e)
		e = r_put_file("/proc/self/gid_map", sh->gid_map);
	return e;
}

/* Take the next request from the socket: its options into RQ, its fds
 * (or -1) into FDS by RQ_*.  0, or -1 at the socket's end (wap's end
 * closed: the thread or the process is gone) or on a request that is not
 * whole. */
static int r_recv_req(int sock, struct preq *rq, int fds[RQ_FDS])
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(RQ_FDS * sizeof(int))];
	} u;
	struct iovec iov = { rq, sizeof(*rq) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	const int *in = NULL;
	int got = 0, k = 0;
	long n;

	do
		n = R3(recvmsg, sock, &m, MSG_CMSG_CLOEXEC);
	while (n == -EINTR);
	if (n <= 0)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
		got = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		in = (const int *)CMSG_DATA(c);
	}
	for (int i = 0; i < RQ_FDS; i++)
		fds[i] = rq->have >> i & 1 && k < got ? in[k++] : -1;
	if (n != sizeof(*rq) || k != got || (m.msg_flags & MSG_CTRUNC) || fds[RQ_STATUS] < 0) {
		for (int i = 0; i < got; i++)
			R1(close, in[i]);
		return -1;
	}
	return 0;
}

/* Run one command to its end and what it left behind with it (the
 * reaper's SUP_DIRECT start and supervise's in_pidns loop, in system
 * calls only), report it on the status pipe and close the call's fds. */
static void shared_run(const struct shared *sh, struct shcmd *c, int fds[RQ_FDS])
{
	const struct wap_proc_opts *o = c->o;
	struct rec done = { .type = REC_DONE };
	struct timespec zero = { 0, 0 };
	long deadline = 0, kill_at = 0, cmd;
	enum { RUN, TERM, KILL } phase = RUN;
	bool cmd_done = false;
	siginfo_t si;
	int status = fds[RQ_STATUS];

	/* what the last command left pending is not this one's: its
	 * SIGCHLD, a cancel sent as it ended */
	while (R4(rt_sigtimedwait, &sh->block, &si, &zero, sizeof(sh->block)) > 0)
		;
	cmd = clone(shared_cmd, sh->cmd_top, CLONE_VM | CLONE_VFORK | SIGCHLD, c);
	/* the command has its copies now (it has run its exec, or failed).
	 * The init keeps the status pipe and the output's write ends until
	 * its record is written: wap is woken by that write, not by the
	 * output's EOF at the command's exit (a pipe's last close wakes its
	 * reader where it slept, an idle CPU to be woken; a write wakes it
	 * beside the writer), and once the record is there nothing in the
	 * namespace is left to write, so wap takes what is buffered and
	 * stops. */
	for (int i = 0; i < RQ_FDS; i++)
		if (i != RQ_STATUS && i != RQ_OUT && i != RQ_ERR && fds[i] >= 0)
			R1(close, fds[i]);
	if (cmd < 0) {
		r_fail(status, WAP_E_FAILED, "Cannot start the command", NULL, EAGAIN);
		R1(close, fds[RQ_OUT]);
		R1(close, fds[RQ_ERR]);
		R1(close, status);
		return;
	}
	if (o->timeout_ms > 0)
		deadline = r_now_ms() + o->timeout_ms;
	for (;;) {
		long now = r_now_ms(), wait = -1, p, sig;
		int st;
		bool any = false;

		while ((p = R4(wait4, -1, &st, WNOHANG, NULL)) > 0)
			if (p == cmd) {
				done.status = st;
				cmd_done = true;
			}
		if (p == -ECHILD) {
			if (cmd_done)
				break;
		} else {
			any = true;
		}
		if (cmd_done && phase == RUN && any) {
			phase = TERM;
			kill_at = now + o->kill_after_ms;
			r_terminate_all(SIGTERM);
		}
		if (phase == RUN && deadline && now >= deadline) {
			done.timed_out = 1;
			phase = TERM;
			kill_at = now + o->kill_after_ms;
			r_terminate_all(SIGTERM);
		}
		if (phase == TERM && now >= kill_at)
			phase = KILL;
		if (phase == KILL) {
			r_terminate_all(SIGKILL);
			wait = 20;
		} else if (phase == TERM) {
			wait = kill_at - now;
		} else if (deadline) {
			wait = deadline - now;
		}
		if (wait >= 0) {
			struct timespec ts = { wait / 1000, (wait % 1000) * 1000000L };
			sig = R4(rt_sigtimedwait, &sh->block, &si, &ts, sizeof(sh->block));
		} else {
			sig = R4(rt_sigtimedwait, &sh->block, &si, NULL, sizeof(sh->block));
		}
		/* a cancel comes only from outside the namespace (si_pid 0) */
		if (sig > 0 && sig != SIGCHLD && (si.si_code != SI_USER || si.si_pid))
			continue;
		if ((sig == SIGTERM || sig == SIGINT || sig == SIGHUP) && phase == RUN) {
			done.cancelled = 1;
			phase = TERM;
			kill_at = r_now_ms() + o->kill_after_ms;
			r_terminate_all(sig == SIGINT ? SIGINT : SIGTERM);
		}
	}
	while (R3(write, status, &done, sizeof(done)) == -EINTR)
		;
	R1(close, fds[RQ_OUT]);
	R1(close, fds[RQ_ERR]);
	R1(close, status);
}

/* A thread's init: the init of a PID namespace that holds the thread's
 * commands, one at a time, each run as the child of a fresh clone and
 * everything it left killed before the next.  It waits for requests on
 * its socket and ends at the socket's end (or with its parent, by
 * PR_SET_PDEATHSIG).  In a user namespace of its own (not root:
 * enter_pidns's maps, made by the init itself) it maps wap's uid and gid
 * first. */
static int shared_init(void *arg)
{
	const struct shared *sh = arg;
	struct ksigaction dfl = { 0 };
	unsigned long all = ~0UL;
	long map_err = 0;
	int keep[RQ_FDS + 1], n = 0, procfd = -2;
	bool first = true, nulled = false;

	/* every signal blocked, not only those it waits for: the handlers
	 * are still wap's, and one run here would run on wap's memory (the
	 * command, as init's child, could send it one: init takes signals
	 * from inside for which it has a handler).  The command is started
	 * with them blocked and resets them before it unblocks any. */
	R4(rt_sigprocmask, SIG_BLOCK, &all, NULL, sizeof(all));
	if (sh->userns)
		map_err = r_map_ids(sh);
	for (int i = 0; i < RQ_FDS; i++)
		keep[n++] = sh->first_fds[i];
	keep[n++] = sh->sock;
	close_others(keep, n);
	/* every signal's action the default, once for all its commands (a
	 * clone has its parent's): wap's handlers are not to run in a
	 * command before its exec, nor SIG_IGN to pass to it, and SIGCHLD's
	 * SIG_IGN would reap behind the init's back.  Blocked, none is
	 * acted on here: the init takes what it waits for with
	 * rt_sigtimedwait (a blocked signal reaches a namespace's init
	 * even with no handler). */
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			R4(rt_sigaction, s, &dfl, NULL, sizeof(sh->block));
	R2(prctl, PR_SET_PDEATHSIG, sh->pdeath);
	for (;;) {
		struct preq rq;
		struct shcmd c;
		struct wap_sandbox sb;
		int fds[RQ_FDS];

		/* nor wap's stdin, stdout and stderr (in `wap serve` the
		 * protocol's: a client waiting for EOF must not wait for us),
		 * as soon as the first call's fds are not there: /dev/null
		 * keeps 0-2 taken, so no fd of a later call lands where the
		 * command's dup3 onto 0-2 would overwrite it */
		if (!nulled && (!first || (sh->first_fds[RQ_IN] > 2 && sh->first_fds[RQ_OUT] > 2 &&
					   sh->first_fds[RQ_ERR] > 2 && sh->first_fds[RQ_STATUS] > 2 &&
					   sh->first_fds[RQ_CWD] != 0 && sh->first_fds[RQ_CWD] > 2))) {
			long null = R3(open, "/dev/null", O_RDWR | O_CLOEXEC, 0);
			for (int fd = 0; fd < 3 && null >= 0; fd++)
				r_dup2((int)null, fd);
			if (null > 2)
				R1(close, null);
			nulled = true;
		}
		if (first) {
			rq = sh->first;
			for (int i = 0; i < RQ_FDS; i++)
				fds[i] = sh->first_fds[i];
			first = false;
		} else if (sh->sock < 0 || r_recv_req(sh->sock, &rq, fds)) {
			R1(exit_group, 0);
		}
		if (map_err) {
			r_fail(fds[RQ_STATUS], WAP_E_FAILED,
			       "Cannot map the user namespace of the command", NULL, (int)-map_err);
			R1(exit_group, 125);
		}
		c.o = rq.o;
		c.io = (struct child_io){ fds[RQ_IN], fds[RQ_OUT], fds[RQ_ERR], fds[RQ_STATUS] };
		c.cwdfd = fds[RQ_CWD];
		c.envp = rq.envp;
		c.sb = NULL;
		if (rq.o->sandbox) {
			sb = *rq.o->sandbox;
			sb.ruleset_fd = fds[RQ_RULES];
			sb.list_fd = fds[RQ_LIST];
			sb.view.userns = fds[RQ_USERNS];
			/* a proc of this namespace for its sandboxed commands
			 * (landlock.c), made at the first; not root, in a
			 * mount namespace of the init's own, its mounts the
			 * host's as slaves (no command could mount on those) */
			if (procfd == -2 && sb.proc_access)
				procfd = wap_sandbox_proc(sh->userns);
			sb.proc_fd = procfd;
			c.sb = &sb;
		}
		shared_run(sh, &c, fds);
		if (rq.last)
			R1(exit_group, 0);
	}
	return 0;
}

/* The init's stack, and the command's until its exec: big enough for the
 * argv of a script run through /bin/sh (the kernel takes at most a quarter
 * of an 8 MiB stack of arguments) and only touched pages are backed. */
#define INIT_STACK (64 * 1024)
#define CMD_STACK (8 * 1024 * 1024)

static size_t shared_len(void)
{
	return INIT_STACK + CMD_STACK + 2 * (size_t)sysconf(_SC_PAGESIZE);
}

/* A thread's init and its stacks, a guard page under each: made by the
 * thread's first command and kept until the thread ends (a namespace and
 * an init made and ended for every command cost about 100 µs of it:
 * bench/pidns.c; mapping, touching and unmapping the stacks 25 µs). */
struct pinit {
	char *m;		/* the stacks, shared_len() bytes */
	pid_t pid;		/* the init; 0: none */
	int sock;		/* our end of its socket */
	struct shared sh;	/* what it was started with (it reads it) */
};

static pthread_key_t pi_key;
static pthread_once_t pi_once = PTHREAD_ONCE_INIT;

/* The init is done with: its socket's end makes it end (and SIGKILL
 * should a forked child of ours hold our end a moment; not when it ends
 * by itself: LAST), and it is reaped here.  Idle, it holds nothing: its
 * namespace is empty. */
static void pinit_end(struct pinit *pi, bool last)
{
	if (pi->pid > 0) {
		close(pi->sock);
		if (!last)
			kill(pi->pid, SIGKILL);
		while (waitpid(pi->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	pi->pid = 0;
	pi->sock = -1;
}

static void pinit_free(void *arg)
{
	struct pinit *pi = arg;

	pinit_end(pi, false);
	munmap(pi->m, shared_len());
	free(pi);
}

static void pi_key_new(void)
{
	pthread_key_create(&pi_key, pinit_free);
}

/* The calling thread's: its stacks mapped, its init alive or none
 * (one found dead is reaped); NULL when out of memory. */
static struct pinit *pinit_get(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = shared_len();
	struct pinit *pi;
	char *m;

	pthread_once(&pi_once, pi_key_new);
	if ((pi = pthread_getspecific(pi_key))) {
		if (pi->pid > 0 && waitpid(pi->pid, NULL, WNOHANG) == pi->pid)
			pi->pid = 0, close(pi->sock), pi->sock = -1;	/* killed from outside */
		return pi;
	}
	m = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE,
		 -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (mprotect(m + pg, CMD_STACK, PROT_READ | PROT_WRITE) ||
	    mprotect(m + 2 * pg + CMD_STACK, INIT_STACK, PROT_READ | PROT_WRITE) ||
	    !(pi = calloc(1, sizeof(*pi)))) {
		munmap(m, len);
		return NULL;
	}
	pi->m = m;
	pi->sock = -1;
	if (pthread_setspecific(pi_key, pi)) {
		munmap(m, len);
		free(pi);
		return NULL;
	}
	return pi;
}

/* The maps of a user namespace made by clone: wap's ids onto themselves. */
static void shared_ids(struct shared *sh)
{
	r_id_map(sh->uid_map, (unsigned)geteuid());
	r_id_map(sh->gid_map, (unsigned)getegid());
}

/* The request for a call: O, and the fds of IO, O and its sandbox (-1
 * where there is none) into FDS by RQ_*. */
static struct preq pinit_req(const struct wap_proc_opts *o, const struct child_io *io,
			     int fds[RQ_FDS])
{
	const struct wap_sandbox *sb = o->sandbox;
	struct preq rq = { o, o->envp ? (char **)o->envp : environ, 0, o->last };

	fds[RQ_IN] = io->in;
	fds[RQ_OUT] = io->out;
	fds[RQ_ERR] = io->err;
	fds[RQ_STATUS] = io->status;
	fds[RQ_CWD] = o->cwdfd;
	fds[RQ_RULES] = sb ? sb->ruleset_fd : -1;
	fds[RQ_LIST] = sb ? sb->list_fd : -1;
	fds[RQ_USERNS] = sb ? sb->view.userns : -1;
	for (int i = 0; i < RQ_FDS; i++)
		if (fds[i] >= 0)
			rq.have |= 1u << i;
	return rq;
}

/* Clone the thread's init on its stacks to run the call of O and IO (its
 * fds are in the init's copy of our table), with a socket to it for the
 * thread's later calls unless this is the caller's last; its pid or -1. */
static pid_t pinit_start(struct pinit *pi, const struct wap_proc_opts *o,
			 const struct child_io *io, bool userns)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int sv[2] = { -1, -1 };
	pid_t pid;

	if (!o->last && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -1;
	pi->sh.block = 1UL << (SIGCHLD - 1) | 1UL << (SIGTERM - 1) | 1UL << (SIGINT - 1) |
		       1UL << (SIGHUP - 1);
	pi->sh.cmd_top = pi->m + pg + CMD_STACK;
	pi->sh.sock = sv[1];
	/* wap going away counts as a cancel (SIGTERM: the command's tree
	 * gets its grace); a CLI (o->last) that is killed takes the
	 * namespace down at once.  (The signal comes when the thread that
	 * cloned it ends: the thread's own end is pinit_free.) */
	pi->sh.pdeath = o->last ? SIGKILL : SIGTERM;
	pi->sh.userns = userns;
	pi->sh.first = pinit_req(o, io, pi->sh.first_fds);
	shared_ids(&pi->sh);
	pid = clone(shared_init, pi->m + shared_len(),
		    CLONE_VM | SIGCHLD | (userns ? CLONE_NEWUSER | CLONE_NEWPID : 0), &pi->sh);
	if (sv[1] >= 0)
		close(sv[1]);
	if (pid < 0) {
		if (sv[0] >= 0)
			close(sv[0]);
		return -1;
	}
	pi->pid = pid;
	pi->sock = sv[0];
	return pid;
}

/* Hand a call to the thread's init on its socket, its fds with it (the
 * init's copies: ours are closed by the caller); 0 or -1. */
static int pinit_send(struct pinit *pi, const struct wap_proc_opts *o, const struct child_io *io)
{
	int all[RQ_FDS], fds[RQ_FDS], n = 0;
	struct preq rq = pinit_req(o, io, all);
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(RQ_FDS * sizeof(int))];
	} u;
	struct iovec iov = { &rq, sizeof(rq) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf };
	struct cmsghdr *c;
	ssize_t w;

	for (int i = 0; i < RQ_FDS; i++)
		if (all[i] >= 0)
			fds[n++] = all[i];
	memset(&u, 0, sizeof(u));
	m.msg_controllen = CMSG_SPACE(n * sizeof(int));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	do
		w = sendmsg(pi->sock, &m, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	return w == (ssize_t)sizeof(rq) ? 0 : -1;
}

/* probe_child's answer where wap is not root: can clone make a user and a
 * PID namespace and map wap's ids in them?  Asked of a clone into our
 * memory that maps them and ends (a forked probe costs a copy of the
 * caller: 200-400 µs of each `wap exec` run by a user); 0 if it can. */
static int probe_userns_child(void *arg)
{
	unsigned long all = ~0UL;

	R4(rt_sigprocmask, SIG_BLOCK, &all, NULL, sizeof(all));
	R1(exit_group, r_map_ids(arg) ? 1 : 0);
	return 0;
}

static int probe_userns(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct pinit *pi = pinit_get();
	struct shared sh = { 0 };
	int st = 0;
	pid_t p;

	if (!pi)
		return -1;
	shared_ids(&sh);
	/* on the command's stack: the thread's init, if it has one, is on
	 * the other, and no command of this thread is being started now */
	p = clone(probe_userns_child, pi->m + pg + CMD_STACK,
		  CLONE_VM | CLONE_NEWUSER | CLONE_NEWPID | SIGCHLD, &sh);
	while (p > 0 && waitpid(p, &st, 0) < 0 && errno == EINTR)
		;
	return p > 0 && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}
#endif

/* ---- the caller's side ---- */

struct cap {
	char *head;
	size_t hlen, hmax;
	char *ring;
	size_t rpos, rlen, rmax;
	uint64_t total;
	/* a chunk being assembled for the OUTPUT callback */
	char *stage;	/* CHUNK + 4 bytes, only with an OUTPUT callback (a
			 * read without one goes to the stack: a calloc'd
			 * stage cost 32 page faults a call) */
	size_t carry;
};

static int cap_add(struct cap *c, const char *p, size_t n)
{
	c->total += n;
	if (c->hlen < c->hmax) {
		size_t k = c->hmax - c->hlen < n ? c->hmax - c->hlen : n;
		if (!c->head && !(c->head = malloc(c->hmax)))
			return -1;
		memcpy(c->head + c->hlen, p, k);
		c->hlen += k;
		p += k;
		n -= k;
	}
	if (!n || !c->rmax)
		return 0;
	if (!c->ring && !(c->ring = malloc(c->rmax)))
		return -1;
	if (n >= c->rmax) {
		memcpy(c->ring, p + n - c->rmax, c->rmax);
		c->rpos = 0;
		c->rlen = c->rmax;
		return 0;
	}
	while (n) {
		size_t k = c->rmax - c->rpos < n ? c->rmax - c->rpos : n;
		memcpy(c->ring + c->rpos, p, k);
		c->rpos = (c->rpos + k) % c->rmax;
		c->rlen = c->rlen + k > c->rmax ? c->rmax : c->rlen + k;
		p += k;
		n -= k;
	}
	return 0;
}

/* Length of the prefix of BUF that ends on a UTF-8 sequence boundary. */
static size_t utf8_whole(const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;

	for (size_t back = 1; back <= 3 && back <= len; back++) {
		unsigned char c = s[len - back];
		size_t need;
		if ((c & 0xc0) == 0x80)
			continue;	/* continuation: look further back */
		need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
		return need > back ? len - back : len;
	}
	return len;
}

/* head + (marker) + tail into S */
static int cap_finish(struct cap *c, struct wap_proc_stream *s)
{
	size_t start = c->rlen < c->rmax ? 0 : c->rpos, hl = c->hlen, skip = 0;
	char marker[96];
	int ml = 0;
	char *d;

	s->bytes = c->total;
	s->truncated = c->total > c->hlen + c->rlen;
	if (s->truncated) {
		/* cut on UTF-8 boundaries on both sides of the marker */
		hl = utf8_whole(c->head, c->hlen);
		while (skip < 3 && skip < c->rlen &&
		       (c->ring[(start + skip) % c->rmax] & 0xc0) == 0x80)
			skip++;
		ml = snprintf(marker, sizeof(marker), WAP_PROC_MARKER,
			      (unsigned long long)(c->total - hl - (c->rlen - skip)));
	}
	d = malloc(hl + ml + c->rlen + 1);
	if (!d)
		return -1;
	if (hl)
		memcpy(d, c->head, hl);
	memcpy(d + hl, marker, ml);
	s->len = hl + ml;
	for (size_t i = skip; i < c->rlen; i++)
		d[s->len++] = c->ring[(start + i) % c->rmax];
	d[s->len] = 0;
	s->data = d;
	return 0;
}

static void emit(const struct wap_proc_opts *o, struct cap *c, int i, size_t n, bool eof)
{
	static const char *const names[] = { "stdout", "stderr" };
	size_t all = c->carry + n, whole = eof ? all : utf8_whole(c->stage, all);

	if (whole)
		o->output(o->output_arg, names[i], c->stage, whole);
	c->carry = all - whole;
	memmove(c->stage, c->stage + whole, c->carry);
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= w;
	}
}

/* Read what is there on stream I, 16 chunks at most (a pipe's most, 1 MiB,
 * unless root made it bigger); returns 1 at EOF, -1 when it is empty for
 * now, 0 when more may be there. */
static int drain(const struct wap_proc_opts *o, struct cap *c, int i, int fd, bool *oom)
{
	char local[CHUNK];

	for (int rounds = 0; rounds < 16; rounds++) {
		char *buf = o->output ? c->stage + c->carry : local;
		ssize_t n = read(fd, buf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -1 : 1;
		if (n == 0) {
			if (o->output && c->carry)
				emit(o, c, i, 0, true);
			return 1;
		}
		if (cap_add(c, buf, n))
			*oom = true;
		if (o->save_fd[i] >= 0)
			write_all(o->save_fd[i], buf, n);
		if (o->output)
			emit(o, c, i, n, false);
	}
	return 0;
}

/* Stream I's writers are gone (the supervisor's record is there, or its
 * end): what its pipe holds, and its end for a caller taking the output
 * as it comes.  Bounded: a process outside the namespace that was handed
 * the pipe could go on writing. */
static void drain_end(const struct wap_proc_opts *o, struct cap *c, int i, int fd, bool *oom)
{
	int r = 0;

	for (int k = 0; k < 4 && !r; k++)
		r = drain(o, c, i, fd, oom);
	if (r != 1 && o->output && c->carry)
		emit(o, c, i, 0, true);
}

static void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Our own PID namespace, to come back to after unshare(CLONE_NEWPID) made
 * the calling thread's next child the init of a new one; -1 where there is
 * no way back (setns to it refused: gVisor) or no new namespace for us
 * without a user namespace (not root): the reaper then makes it.  Opened
 * and tried once, and kept (O_CLOEXEC; the init closes it). */
static int self_ns = -1;
static bool self_ns_known, self_ns_off;

static int own_pidns(void)
{
	int fd;

	pthread_mutex_lock(&sup_lock);
	if (!self_ns_known) {
		self_ns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
		if (self_ns >= 0 && setns(self_ns, CLONE_NEWPID))
			closep(&self_ns);
		self_ns_known = true;
	}
	fd = self_ns_off ? -1 : self_ns;
	pthread_mutex_unlock(&sup_lock);
	return fd;
}

/* unshare refused for good (not root): the reaper's way from now on (the
 * fd stays open: another thread may be on its way back through it) */
static void no_own_pidns(void)
{
	pthread_mutex_lock(&sup_lock);
	self_ns_off = true;
	pthread_mutex_unlock(&sup_lock);
}

/* The supervisor's records, as they come. */
struct stat_recs {
	struct rec r, done, failed;
	size_t len;
	pid_t cmd_pgid;
};

/* Read from the status pipe FD; 1 at its end (or on an error), else 0. */
static int stat_read(int fd, struct stat_recs *st)
{
	ssize_t m = read(fd, (char *)&st->r + st->len, sizeof(st->r) - st->len);

	if (m < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (m <= 0)
		return 1;
	st->len += m;
	if (st->len == sizeof(st->r)) {
		st->len = 0;
		if (st->r.type == REC_SPAWN_FAILED)
			st->failed = st->r;
		else if (st->r.type == REC_DONE)
			st->done = st->r;
		else if (st->r.type == REC_STARTED)
			st->cmd_pgid = st->r.status;
	}
	return 0;
}

/* ENVP (NULL: ours) without wap's own credentials (wap_env_secret), or
 * NULL when it has none of them; *OOM on no memory.  The array is the
 * caller's to free, its strings ENVP's. */
static char **env_clean(char *const *envp, bool *oom)
{
	size_t n = 0, k = 0;
	bool any = false;
	char **e;

	if (!envp)
		envp = environ;
	for (; envp[n]; n++)
		any |= wap_env_secret(envp[n]);
	if (!any)
		return NULL;
	e = malloc((n + 1) * sizeof(*e));
	if (!e) {
		*oom = true;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (!wap_env_secret(envp[i]))
			e[k++] = envp[i];
	e[k] = NULL;
	return e;
}

/* Would a sandboxed command get more through this stdin than its sandbox
 * grants?  A file's descriptor can be opened again by its path through
 * /proc/self/fd/0, with other rights: the path on the mounts outside the
 * command's view, where the .git, .wap and config made read-only in it
 * (and a read-only root) are writable.  A pipe, socket or device gives
 * what the descriptor gives. */
static bool reopenable(int fd)
{
	struct stat st;

	return fstat(fd, &st) || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode));
}

#define IN_CHUNK 65536

int wap_proc_run(const struct wap_proc_opts *o, struct wap_proc_result *res,
		 struct wap_err *err)
{
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, inp[2] = { -1, -1 };
	int statp[2] = { -1, -1 }, nullfd = -1, rc = -1, ourns = -1;
	struct cap *cap = NULL;
	struct child_io io;
	struct stat_recs st = { 0 };
	size_t stdin_off = 0, stdin_len = o->stdin_len;
	int in_src = -1;	/* a file copied into the command's stdin pipe */
	char *inbuf = NULL;	/* ... through this */
	bool eof[2] = { false, false }, stat_eof = false, oom = false, sent_term = false;
	struct wap_proc_opts oc;
	char **envc = NULL;
	bool killed = false;
	long hard;
	sigset_t pipeset, oldmask;
	pid_t pid, self = getpid();
	long start = now_ms();
	int level;
#ifdef SHARED_INIT
	struct pinit *pi = NULL;
#endif

	memset(res, 0, sizeof(*res));
	if (!o->argv || !o->argv[0] || !o->argv[0][0])
		return wap_err_set(err, WAP_E_INVALID, "no command given");
	/* never a command nothing can take down with its tree: as root the
	 * reaper tries a PID namespace itself (the probe is a fork), else
	 * the probe says what there is, once */
	pthread_mutex_lock(&sup_lock);
	level = sup_level;
	pthread_mutex_unlock(&sup_lock);
	if (level < 0 && geteuid() == 0 && !getenv("WAP_EXEC_SUPERVISOR"))
		level = SUP_TRY;
	else if (level < 0)
		level = sup_probe();
	if (level < 0)
		return wap_err_set(err, WAP_E_FAILED, "Cannot start the command: %s",
				   strerror(errno ? errno : EAGAIN));
	if (level == SUP_NONE)
		return wap_err_set(err, WAP_E_DISABLED, "Command execution unavailable: no PID "
				   "namespace, subreaper or /proc to hold the command's processes");
	cap = calloc(2, sizeof(*cap));
	if (!cap)
		return wap_err_oom(err);
	/* the command is the agent's: wap's own credentials stay with wap,
	 * whoever made the environment (every caller comes this road) */
	envc = env_clean(o->envp, &oom);
	if (oom) {
		wap_err_oom(err);
		goto out;
	}
	if (envc) {
		oc = *o;
		oc.envp = envc;
		o = &oc;
	}
	for (int i = 0; i < 2; i++) {
		size_t m = o->max_output;
		cap[i].hmax = m / 2;
		cap[i].rmax = m - m / 2;
		if (o->output && !(cap[i].stage = malloc(CHUNK + 4))) {
			wap_err_oom(err);
			goto out;
		}
	}
	if (pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC) || pipe2(statp, O_CLOEXEC)) {
		wap_err_set(err, WAP_E_FAILED, "Cannot create a pipe: %s", strerror(errno));
		goto out;
	}
	io.out = outp[1];
	io.err = errp[1];
	io.status = statp[1];
	if (o->stdin_fd >= 0 && !(o->sandbox && o->sandbox->fs && reopenable(o->stdin_fd))) {
		io.in = o->stdin_fd;
	} else if (o->stdin_fd >= 0 || o->stdin_data) {
		/* a file is read and written through a pipe, as data is */
		if (o->stdin_fd >= 0 && !(inbuf = malloc(IN_CHUNK))) {
			wap_err_oom(err);
			goto out;
		}
		in_src = o->stdin_fd;
		if (pipe2(inp, O_CLOEXEC)) {
			wap_err_set(err, WAP_E_FAILED, "Cannot create a pipe: %s", strerror(errno));
			goto out;
		}
		io.in = inp[0];
	} else {
		nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (nullfd < 0) {
			wap_err_set(err, WAP_E_FAILED, "/dev/null: %s", strerror(errno));
			goto out;
		}
		io.in = nullfd;
	}
	/* a command that stops reading its stdin must not kill us */
	sigemptyset(&pipeset);
	sigaddset(&pipeset, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipeset, &oldmask);

	/* a caller that may have a PID namespace without a user namespace
	 * holds it itself: the child it forks is the namespace's init, one
	 * process (and one hand-off) fewer than a reaper forking one.  Only
	 * the calling thread's children are born in it (unshare(CLONE_NEWPID)
	 * changes the thread, not the process: a server's other threads go
	 * on as they were), and only with a way back for this thread's later
	 * children: setns to our own namespace, which gVisor does not offer */
#ifdef SHARED_INIT
	/* the thread's init from an earlier call holds this one too */
	if ((level == SUP_TRY || level == SUP_PIDNS) && (pi = pinit_get()) && pi->pid > 0)
		level = SUP_DIRECT;
#endif
	if ((level == SUP_TRY || level == SUP_PIDNS) && (ourns = own_pidns()) >= 0) {
		if (!unshare(CLONE_NEWPID))
			level = SUP_DIRECT;
		else if (errno == EPERM || errno == EINVAL || errno == ENOSYS)
			no_own_pidns(), ourns = -1;	/* not ours to make: never again */
		else
			ourns = -1;
	}
	pid = -1;
#ifdef SHARED_INIT
	if (pi && pi->pid > 0) {
		pid = pi->pid;
		if (pinit_send(pi, o, &io)) {
			/* it ended before taking the call (killed from outside) */
			pinit_end(pi, false);
			errno = EPIPE;
			pid = -2;	/* the call fails */
		}
	} else if (pi && level == SUP_DIRECT) {
		pid = pinit_start(pi, o, &io, false);
	} else if (pi && level == SUP_PIDNS && geteuid() != 0) {
		/* not root: clone makes the user and PID namespaces that the
		 * reaper would make, and the init in them, without a copy of
		 * the caller (unshare(CLONE_NEWUSER) is not for a threaded
		 * process; clone's is) */
		pid = pinit_start(pi, o, &io, true);
		if (pid > 0)
			level = SUP_DIRECT;	/* as if wap had made them itself */
	}
	if (pid == -1)
#endif
		pid = fork();
	/* this thread's next children are born in wap's namespace again:
	 * once the init is gone nothing more could be (a server's next call,
	 * LeakSanitizer's fork at exit) */
	if (pid && ourns >= 0) {
		setns(ourns, CLONE_NEWPID);
		ourns = -1;
	}
	if (pid < 0) {
		pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
		wap_err_set(err, WAP_E_FAILED, "Cannot start the command: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		closep(&outp[0]);
		closep(&errp[0]);
		closep(&statp[0]);
		closep(&inp[1]);
		reaper(o, &io, self, level);
	}
	closep(&outp[1]);
	closep(&errp[1]);
	closep(&statp[1]);
	closep(&inp[0]);
	closep(&nullfd);
	fcntl(outp[0], F_SETFL, O_NONBLOCK);
	fcntl(errp[0], F_SETFL, O_NONBLOCK);
	if (inp[1] >= 0) {
		fcntl(inp[1], F_SETFL, O_NONBLOCK);
		if (!stdin_len && in_src < 0)
			closep(&inp[1]);
	}

	/* The supervisor's last record is the end: it writes it when it has
	 * nothing left to wait for (in a PID namespace, nothing is left in
	 * it; a thread's init holds the output's write ends until then,
	 * shared_run), so what the pipes hold then is all the command's tree
	 * wrote, and it is read and the wait ends.  Not EOF: a process the
	 * supervisor cannot reach (one outside the namespace that the
	 * command handed its stdout to, over a unix socket) may hold the
	 * pipes open for ever.  And one wake-up a call, by a write beside
	 * the writer, where a pipe's last close wakes its reader on the CPU
	 * it slept on (an idle one, late, on a VM).  Without a record the
	 * status pipe's EOF (the supervisor's end) ends the wait. */
	/* The supervisor's own deadline: a command that stops its init
	 * (ptrace, where no sandbox forbids it) or a supervisor stuck for
	 * whatever reason must not hold the call past its time.  Past the
	 * timeout (or a cancel), the grace and WATCHDOG_MS more, wap kills
	 * the supervisor itself: SIGKILL from outside reaches an init even
	 * stopped or traced, and its death ends its namespace. */
	hard = o->timeout_ms > 0 ? start + o->timeout_ms + o->kill_after_ms + WATCHDOG_MS : 0;
	while (!eof[0] || !eof[1] || !stat_eof) {
		struct pollfd pf[4];
		int n = 0, ix[4], wait = o->cancel ? 50 : -1;
		long now;

		if (!eof[0])
			pf[n] = (struct pollfd){ outp[0], POLLIN, 0 }, ix[n++] = 0;
		if (!eof[1])
			pf[n] = (struct pollfd){ errp[0], POLLIN, 0 }, ix[n++] = 1;
		if (!stat_eof)
			pf[n] = (struct pollfd){ statp[0], POLLIN, 0 }, ix[n++] = 2;
		if (inp[1] >= 0)
			pf[n] = (struct pollfd){ inp[1], POLLOUT, 0 }, ix[n++] = 3;
		if (stat_eof) {
			/* the reaper is gone and so is every process it knew of:
			 * take what is buffered and stop */
			for (int i = 0; i < 2; i++)
				if (!eof[i])
					drain_end(o, &cap[i], i, i ? errp[0] : outp[0], &oom);
			break;
		}
		if (!sent_term && wap_cancel_is_set(o->cancel)) {
			kill(pid, wap_cancel_why(o->cancel) == SIGINT ? SIGINT : SIGTERM);
			sent_term = true;
			res->cancelled = true;
			if (!hard || now_ms() + o->kill_after_ms + WATCHDOG_MS < hard)
				hard = now_ms() + o->kill_after_ms + WATCHDOG_MS;
		}
		if (hard && (now = now_ms()) >= hard) {
			if (killed)	/* killed, and still something holds the
					 * pipes (stuck in the kernel): stop */
				break;
			kill(pid, SIGKILL);
			killed = true;
			hard = now + WATCHDOG_MS;
			continue;
		}
		if (hard && (wait < 0 || hard - now_ms() < wait))
			wait = (int)(hard - now_ms()) + 1;
		if (poll(pf, n, wait) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int k = 0; k < n; k++) {
			if (!pf[k].revents)
				continue;
			switch (ix[k]) {
			case 0:
			case 1:
				if (drain(o, &cap[ix[k]], ix[k], ix[k] ? errp[0] : outp[0], &oom) == 1)
					eof[ix[k]] = true;
				break;
			case 2:
				if (stat_read(statp[0], &st) || st.done.type)
					stat_eof = true;
				break;
			case 3: {
				ssize_t w;
				if (in_src >= 0 && stdin_off == stdin_len) {
					ssize_t r = read(in_src, inbuf, IN_CHUNK);
					if (r <= 0) {
						closep(&inp[1]);
						break;
					}
					stdin_len = (size_t)r;
					stdin_off = 0;
				}
				w = write(inp[1], (in_src >= 0 ? inbuf : o->stdin_data) + stdin_off,
					  stdin_len - stdin_off);
				if (w > 0)
					stdin_off += w;
				if ((w < 0 && errno != EAGAIN && errno != EINTR) ||
				    (in_src < 0 && stdin_off == stdin_len))
					closep(&inp[1]);
				break;
			}
			}
		}
	}
	closep(&inp[1]);
#ifdef SHARED_INIT
	if (pi && pid == pi->pid) {
		/* the thread's init lives on for its next command, unless it
		 * ended with this one (no record: killed from outside; or a
		 * failure it could not go on from) or this is the caller's
		 * last */
		if ((!st.done.type && !st.failed.type) || o->last)
			pinit_end(pi, st.done.type && o->last);	/* a CLI's ends by itself after
					 * its command, and is waited for:
					 * the command's rusage is ours, as
					 * time(1) and a CI expect */
		else if (st.failed.type && waitpid(pid, NULL, WNOHANG) == pid)
			pi->pid = 0, closep(&pi->sock);
	} else
#endif
	{
		int ws;
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
			;
	}
	{
		/* a SIGPIPE from writing stdin is ours to swallow */
		sigset_t pend;
		struct timespec zero = { 0, 0 };
		sigpending(&pend);
		if (sigismember(&pend, SIGPIPE))
			sigtimedwait(&pipeset, NULL, &zero);
		pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	}
	res->duration_ms = now_ms() - start;
	if (st.failed.type) {
		st.failed.msg[sizeof(st.failed.msg) - 1] = 0;
		if (st.failed.eno)
			wap_err_set(err, st.failed.kind, "%s: %s", st.failed.msg,
				    strerror(st.failed.eno));
		else
			wap_err_set(err, st.failed.kind, "%s", st.failed.msg);
		goto out;
	}
	if (st.done.type != REC_DONE && killed && !st.failed.type) {
		/* the supervisor did not end the command in time, and wap
		 * killed it: a command killed at its deadline (or cancel) */
		st.done = (struct rec){ .type = REC_DONE, .status = SIGKILL,
					.timed_out = !res->cancelled, .cancelled = res->cancelled };
		if (st.cmd_pgid > 0)
			kill(-st.cmd_pgid, SIGKILL);
	}
	if (st.done.type != REC_DONE) {
		/* only without a PID namespace can the command reach its
		 * supervisor: its group goes with it (a process that left
		 * the group is out of reach then) */
		if (st.cmd_pgid > 0) {
			/* its group, and what is left of its session (a few
			 * seconds at most: a process stuck in the kernel) */
			kill(-st.cmd_pgid, SIGKILL);
			for (int i = 0; i < 200 && sweep_session(st.cmd_pgid, SIGKILL) > 0; i++)
				usleep(10000);
		}
		wap_err_set(err, WAP_E_FAILED, "The command's supervisor ended unexpectedly%s",
			    st.cmd_pgid > 0 ? "; the command was killed" : "");
		goto out;
	}
	if (oom || cap_finish(&cap[0], &res->out[0]) || cap_finish(&cap[1], &res->out[1])) {
		wap_proc_result_release(res);
		wap_err_oom(err);
		goto out;
	}
	res->timed_out = st.done.timed_out;
	res->cancelled = res->cancelled || st.done.cancelled;
	if (WIFEXITED(st.done.status)) {
		res->exit_code = WEXITSTATUS(st.done.status);
	} else if (WIFSIGNALED(st.done.status)) {
		res->signal = WTERMSIG(st.done.status);
		res->exit_code = 128 + res->signal;
	}
	rc = 0;
out:
	if (ourns >= 0)
		setns(ourns, CLONE_NEWPID);
	free(inbuf);
	closep(&outp[0]);
	closep(&outp[1]);
	closep(&errp[0]);
	closep(&errp[1]);
	closep(&statp[0]);
	closep(&statp[1]);
	closep(&inp[0]);
	closep(&inp[1]);
	closep(&nullfd);
	if (cap) {
		for (int i = 0; i < 2; i++) {
			free(cap[i].head);
			free(cap[i].ring);
			free(cap[i].stage);
		}
		free(cap);
	}
	free(envc);
	return rc;
}

void wap_proc_result_release(struct wap_proc_result *res)
{
	for (int i = 0; i < 2; i++) {
		free(res->out[i].data);
		res->out[i].data = NULL;
	}
}
