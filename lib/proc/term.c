/* proc/term.c - terminals: processes on a PTY or pipes, a reader thread each,
 * bounded output buffers.  See term.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <utmp.h>

#include "applet.h"
#include "cmdpolicy.h"
#include "config.h"
#include "landlock.h"
#include "proc.h"
#include "strbuf.h"
#include "term.h"

extern char **environ;

/* what a terminal's output is read for after its program ended: more than
 * a pipe (1 MiB at most, unless root made it bigger) or a PTY holds */
#define DRAIN_MAX (4u << 20)

/* The terminals of every set in the process: each is a process tree, a
 * thread and a descriptor, and a client makes sessions (sets) at will
 * (1000 HTTP sessions of 64 were 64,000 process trees).
 * WAP_TERMS_MAX lowers it (tests). */
static int terms_live;

static bool terms_reserve(int *max)
{
	const char *env = getenv("WAP_TERMS_MAX");

	*max = env && atoi(env) > 0 && atoi(env) < WAP_TERM_MAX_ALL ? atoi(env) : WAP_TERM_MAX_ALL;
	if (__atomic_add_fetch(&terms_live, 1, __ATOMIC_SEQ_CST) <= *max)
		return true;
	__atomic_sub_fetch(&terms_live, 1, __ATOMIC_SEQ_CST);
	return false;
}

struct term {
	struct term *next;
	struct wap_terms *set;
	char id[WAP_TERM_ID_LEN];
	char *name;
	pid_t pid;
	int fd;			/* PTY master, or the read end of the output pipe */
	bool pty;
	pthread_t thr;
	/* output buffer: bytes buf[start, start+len) */
	char *buf;
	size_t start, len, cap, nlines;
	size_t byte_limit, max_lines;
	bool truncated;
	char pend[4];		/* incomplete UTF-8 tail not yet given to the callback */
	size_t npend;
	/* state, under set->mu */
	bool reaped;		/* waitpid done */
	bool done;		/* reaped and output drained: the thread ends */
	bool stop;		/* kill requested */
	struct timespec stop_at;
	struct wap_term_status st;
	struct wap_sandbox sb;	/* its temp dir lives as long as the terminal */
	bool have_sb;
};

struct wap_terms {
	const struct wap_ws *ws;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct term *list;
	unsigned long counter;
	char active[WAP_TERM_ID_LEN];
	wap_term_output_fn out;
	wap_term_exit_fn onexit;
	void *arg;
};

static long ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

/* --- the output buffer (callers hold set->mu) --- */

static void buf_drop(struct term *t, size_t n)
{
	const char *p = t->buf + t->start, *end = p + n;

	while ((p = memchr(p, '\n', end - p))) {
		t->nlines--;
		p++;
	}
	t->start += n;
	t->len -= n;
	t->truncated = true;
}

/* Drop at least N bytes from the beginning, moving on to a character
 * boundary (never into the middle of a UTF-8 sequence). */
static void buf_drop_chars(struct term *t, size_t n)
{
	while (n < t->len && ((unsigned char)t->buf[t->start + n] & 0xC0) == 0x80)
		n++;
	buf_drop(t, n);
}

static void buf_append(struct term *t, const char *data, size_t n)
{
	if (t->start + t->len + n > t->cap) {
		if (t->start) {
			memmove(t->buf, t->buf + t->start, t->len);
			t->start = 0;
		}
		if (t->len + n > t->cap) {
			size_t cap = t->cap ? t->cap : 4096;
			char *nb;

			while (cap < t->len + n)
				cap *= 2;
			nb = realloc(t->buf, cap);
			if (!nb) {	/* keep what we have; lose this chunk */
				t->truncated = true;
				return;
			}
			t->buf = nb;
			t->cap = cap;
		}
	}
	memcpy(t->buf + t->start + t->len, data, n);
	for (const char *p = data, *end = data + n; (p = memchr(p, '\n', end - p)); p++)
		t->nlines++;
	t->len += n;
	if (t->byte_limit) {
		if (t->len > t->byte_limit)
			buf_drop_chars(t, t->len - t->byte_limit);
		return;
	}
	while (t->nlines > t->max_lines) {
		const char *nl = memchr(t->buf + t->start, '\n', t->len);
		buf_drop(t, (size_t)(nl - (t->buf + t->start)) + 1);
	}
	if (t->len > WAP_TERM_MAX_BYTES)
		buf_drop_chars(t, t->len - WAP_TERM_MAX_BYTES);
	/* Shrink a buffer that grew for a burst. */
	if (t->cap > 65536 && t->len < t->cap / 4) {
		char *nb;

		memmove(t->buf, t->buf + t->start, t->len);
		t->start = 0;
		nb = realloc(t->buf, t->cap / 2);
		if (nb) {
			t->buf = nb;
			t->cap /= 2;
		}
	}
}

/* --- UTF-8 for JSON --- */

static size_t utf8_seq(const unsigned char *p, size_t n)
{
	size_t need;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF)
		need = 2;
	else if (p[0] >= 0xE0 && p[0] <= 0xEF)
		need = 3;
	else if (p[0] >= 0xF0 && p[0] <= 0xF4)
		need = 4;
	else
		return 0;
	if (n < need)
		return (size_t)-1;	/* incomplete */
	for (size_t i = 1; i < need; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	if (need == 3 && ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0)))
		return 0;
	if (need == 4 && ((p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] >= 0x90)))
		return 0;
	return need;
}

char *wap_term_utf8(const char *buf, size_t len, size_t *outlen)
{
	struct wap_sb sb = WAP_SB_INIT;
	const unsigned char *p = (const unsigned char *)buf;
	size_t i = 0;

	wap_sb_grow(&sb, len + 1);
	while (i < len) {
		size_t k = utf8_seq(p + i, len - i);

		if (k == 0 || k == (size_t)-1) {
			wap_sb_add(&sb, "\xEF\xBF\xBD", 3);
			i++;
			continue;
		}
		wap_sb_add(&sb, p + i, k);
		i += k;
	}
	if (outlen)
		*outlen = sb.len;
	return wap_sb_detach(&sb);
}

/* Length of the prefix of BUF not ending in an incomplete sequence. */
static size_t utf8_complete(const char *buf, size_t len)
{
	size_t back = 0;

	while (back < 3 && back < len && ((unsigned char)buf[len - 1 - back] & 0xC0) == 0x80)
		back++;
	if (back < len) {
		const unsigned char *p = (const unsigned char *)buf + len - 1 - back;
		if (*p >= 0xC0 && utf8_seq(p, back + 1) == (size_t)-1)
			return len - 1 - back;
	}
	return len;
}

/* --- the reader thread --- */

static void set_status(struct term *t, int wst)
{
	t->reaped = true;
	t->st.exited = true;
	if (WIFSIGNALED(wst)) {
		t->st.exit_code = -1;
		t->st.signal = WTERMSIG(wst);
	} else {
		t->st.exit_code = WEXITSTATUS(wst);
		t->st.signal = 0;
	}
}

static void deliver(struct term *t, const char *data, size_t n)
{
	struct wap_terms *ts = t->set;
	char tmp[65536 + 4];
	size_t m, keep;

	pthread_mutex_lock(&ts->mu);
	buf_append(t, data, n);
	pthread_mutex_unlock(&ts->mu);
	if (!ts->out)
		return;
	memcpy(tmp, t->pend, t->npend);
	memcpy(tmp + t->npend, data, n);
	m = t->npend + n;
	keep = utf8_complete(tmp, m);
	t->npend = m - keep;
	memcpy(t->pend, tmp + keep, t->npend);
	if (keep)
		ts->out(ts->arg, t->id, tmp, keep);
}

static void *reader(void *arg)
{
	struct term *t = arg;
	struct wap_terms *ts = t->set;
	char buf[65536];
	bool eof = false, killed = false;

	for (;;) {
		struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
		bool reaped, stop;
		int wst;

		/* the child is looked for after every read, not only when
		 * the output pauses: a process out of the terminal's reach
		 * may write on after the program ended */
		if (!eof && poll(&pfd, 1, 50) > 0) {
			ssize_t n = read(t->fd, buf, sizeof(buf));
			if (n > 0)
				deliver(t, buf, (size_t)n);
			else if (n == 0 || (errno != EAGAIN && errno != EINTR))
				eof = true;
		} else if (eof) {
			poll(NULL, 0, 50);
		}
		pthread_mutex_lock(&ts->mu);
		reaped = t->reaped;
		stop = t->stop;
		if (!reaped && waitpid(t->pid, &wst, WNOHANG) == t->pid) {
			set_status(t, wst);
			reaped = true;
		}
		if (stop && !reaped && !killed && ms_since(&t->stop_at) > 200) {
			kill(-t->pid, SIGKILL);
			kill(t->pid, SIGKILL);
			killed = true;
		}
		pthread_mutex_unlock(&ts->mu);
		if (reaped) {
			/* Drain what is left, bounded: a process out of the
			 * terminal's reach that the program handed its output
			 * to (over a unix socket) may hold it open and write
			 * on, and keeps the terminal alive no more than a
			 * grandchild holding it does. */
			for (size_t got = 0; !eof && got < DRAIN_MAX;) {
				ssize_t n = read(t->fd, buf, sizeof(buf));
				if (n <= 0)
					break;
				deliver(t, buf, (size_t)n);
				got += (size_t)n;
			}
			break;
		}
	}
	/* Tell before waking waiters: whoever waited sees the callback done. */
	if (ts->onexit)
		ts->onexit(ts->arg, t->id, t->st.exit_code, t->st.signal);
	pthread_mutex_lock(&ts->mu);
	t->done = true;
	pthread_cond_broadcast(&ts->cv);
	pthread_mutex_unlock(&ts->mu);
	return NULL;
}

/* --- the set --- */

struct wap_terms *wap_terms_new(const struct wap_ws *ws, wap_term_output_fn out,
				wap_term_exit_fn onexit, void *arg)
{
	struct wap_terms *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return NULL;
	ts->ws = ws;
	ts->out = out;
	ts->onexit = onexit;
	ts->arg = arg;
	pthread_mutex_init(&ts->mu, NULL);
	pthread_cond_init(&ts->cv, NULL);
	return ts;
}

static void term_stop(struct term *t)
{
	/* under ts->mu */
	if (!t->reaped && !t->stop) {
		t->stop = true;
		clock_gettime(CLOCK_MONOTONIC, &t->stop_at);
		kill(-t->pid, SIGHUP);
		kill(-t->pid, SIGCONT);
		kill(t->pid, SIGHUP);
	}
}

static void term_free(struct term *t)
{
	pthread_join(t->thr, NULL);
	__atomic_sub_fetch(&terms_live, 1, __ATOMIC_SEQ_CST);
	if (t->have_sb)
		wap_sandbox_release(&t->sb);
	close(t->fd);
	free(t->name);
	free(t->buf);
	free(t);
}

void wap_terms_free(struct wap_terms *ts)
{
	if (!ts)
		return;
	wap_terms_release_all(ts);
	pthread_mutex_destroy(&ts->mu);
	pthread_cond_destroy(&ts->cv);
	free(ts);
}

static struct term *find(struct wap_terms *ts, const char *id, struct wap_err *err)
{
	for (struct term *t = ts->list; t; t = t->next)
		if (id && !strcmp(t->id, id))
			return t;
	wap_err_set(err, WAP_E_TERM_NOT_FOUND, "Terminal not found: %s", id ? id : "(none)");
	if (err && id)
		wap_err_details(err, json_pack("{s:s}", "terminalId", id));
	return NULL;
}

static char **build_env(char *const *extra, bool pty)
{
	size_t n = 0, m = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	while (extra && extra[m])
		m++;
	env = calloc(n + m + 2, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t kl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
		bool over = pty && kl == 4 && !strncmp(environ[i], "TERM", 4);

		for (size_t j = 0; j < m && !over; j++)
			over = !strncmp(extra[j], environ[i], kl) && extra[j][kl] == '=';
		if (!over && !wap_env_secret(environ[i]))	/* the program is the agent's */
			env[k++] = environ[i];
	}
	if (pty) {
		bool given = false;
		for (size_t j = 0; j < m; j++)
			given |= !strncmp(extra[j], "TERM=", 5);
		if (!given)
			env[k++] = "TERM=dumb";
	}
	for (size_t j = 0; j < m; j++)
		env[k++] = extra[j];
	env[k] = NULL;
	return env;
}

static const char *default_shell(void)
{
	const char *sh = getenv("SHELL");

	if (sh && *sh == '/' && access(sh, X_OK) == 0)
		return sh;
	return "/bin/sh";
}

/* A shell terminal: the shell by name only (what it is given to run is
 * checked line by line, wap_term_check_line). */
static int check_shell(const struct wap_ws *ws, const char *shell, struct wap_err *err)
{
	const char *base = strrchr(shell, '/');
	char *const *allow = ws->pol.allowed_cmds, *const *deny = ws->pol.restricted_cmds;
	bool allowed = false;

	base = base ? base + 1 : shell;
	if (!ws->pol.allow_exec)
		return wap_err_set(err, WAP_E_DISABLED,
			"Command execution is disabled (security.allowCommandExecution)");
	for (size_t i = 0; allow && allow[i]; i++)
		allowed |= !strcmp(allow[i], base);
	if (allow && allow[0] && !allowed)
		return wap_err_set(err, WAP_E_CMD_RESTRICTED,
			"Command not allowed: %s (a terminal's shell must be in security.allowedCommands)", base);
	for (size_t i = 0; !allowed && deny && deny[i]; i++)
		if (!strcmp(deny[i], base))
			return wap_err_set(err, WAP_E_CMD_RESTRICTED,
				"Command restricted: %s (in security.restrictedCommands)", base);
	return 0;
}

/* In the forked child of a PTY (setsid, controlling terminal, sandbox:
 * not possible with posix_spawn): everything async-signal-safe; a failure
 * goes to the parent through ERRFD and _exit ends the child. */
/* In the terminal's child C: hold everything the program starts in a PID
 * namespace of its own, as exec does, so that nothing it starts - a
 * daemon that left its session included - outlives the terminal.  C (a
 * session and group of its own) makes the namespace and forks its init I
 * (pid 1: nothing inside can kill it, and its death ends the namespace),
 * which forks the program's process P and returns there: P makes its
 * session on the PTY inside the namespace (child_exec), where a shell's
 * job control can name its groups.  A hangup or SIGTERM/SIGINT sent to
 * C's group (the terminal's stop) is passed on by I to P; when P ends, I
 * sends what is left SIGTERM, then SIGKILL, and ends; C ends as P did
 * (its status is the terminal's).  Killing C (the terminal's kill) kills
 * I (its parent-death signal) and so the namespace.  C and I never exec,
 * so they close every fd of the server's but those they pass on (KEEP:
 * ERRFD, whose EOF tells wap the exec was made, and the PTY or pipe).
 * Where no namespace can be made it returns at once, in C. */
static void child_hold(int errfd, bool pidns, int *keep, int nkeep)
{
	int sp[2], st = 0, e, mine[8];
	pid_t i, p;
	sigset_t set;
	siginfo_t si;
	bool ended = false, swept = false;
	struct timespec t0 = { 0, 0 }, now;

	if (!pidns)
		return;
	setsid();
	if ((e = wap_proc_enter_pidns()) || pipe2(sp, O_CLOEXEC) < 0) {
		e = e ? e : errno;
		if (write(errfd, &e, sizeof(e)) < 0)
			_exit(126);
		_exit(126);
	}
	for (int k = 0; k < nkeep; k++)
		mine[k] = keep[k];
	mine[nkeep] = sp[0];
	mine[nkeep + 1] = sp[1];
	wap_proc_close_others(mine, nkeep + 2);
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((i = fork()) < 0) {
		e = errno;
		if (write(errfd, &e, sizeof(e)) < 0)
			_exit(126);
		_exit(126);
	}
	if (i > 0) {
		/* C: waits for I; the terminal's signals are I's to pass on */
		close(errfd);
		close(sp[1]);
		for (int k = 0; k < nkeep; k++)
			if (keep[k] > 2)
				close(keep[k]);
		while (waitpid(i, NULL, 0) < 0 && errno == EINTR)
			;
		if (read(sp[0], &st, sizeof(st)) != sizeof(st))
			st = SIGKILL;	/* I was killed: so was the program */
		if (WIFSIGNALED(st)) {
			/* ended by the same signal (no core of wap's memory) */
			struct rlimit none = { 0, 0 };
			setrlimit(RLIMIT_CORE, &none);
			signal(WTERMSIG(st), SIG_DFL);
			sigprocmask(SIG_UNBLOCK, &set, NULL);
			kill(getpid(), WTERMSIG(st));
			_exit(128 + WTERMSIG(st));
		}
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 137);
	}
	/* I: dies with C.  The signals it passes on are blocked: they reach
	 * a namespace's init with no handler, and are taken with
	 * sigtimedwait (SIGCHLD too). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close(sp[0]);
	p = fork();
	if (p == 0) {
		close(sp[1]);
		return;	/* P: the program (child_exec unblocks its signals) */
	}
	close(errfd);
	if (p < 0) {
		st = 126 << 8;
	} else {
		/* nor the terminal itself: its end is the program's */
		int nul = open("/dev/null", O_RDWR);
		for (int fd = 0; fd < 3 && nul >= 0; fd++)
			dup2(nul, fd);
		for (int k = 0; k < nkeep; k++)
			if (keep[k] > 2)
				close(keep[k]);
	}
	for (;;) {
		pid_t w;
		int sig;
		long left = -1;

		while ((w = waitpid(-1, &e, WNOHANG)) > 0)
			if (w == p)
				st = e, ended = true;
		if (w < 0 && errno == ECHILD)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (ended && !swept) {
			/* what the program left: a grace, then SIGKILL */
			kill(-1, SIGTERM);
			kill(-1, SIGCONT);
			t0 = now;
			swept = true;
		}
		if (swept) {
			left = 300 - ((now.tv_sec - t0.tv_sec) * 1000 +
				      (now.tv_nsec - t0.tv_nsec) / 1000000);
			if (left <= 0) {
				kill(-1, SIGKILL);
				left = 20;
			}
		}
		if (left >= 0) {
			struct timespec ts = { left / 1000, (left % 1000) * 1000000L };
			sig = sigtimedwait(&set, &si, &ts);
		} else {
			sig = sigwaitinfo(&set, &si);
		}
		/* from outside the namespace (si_pid 0): the terminal's */
		if ((sig == SIGHUP || sig == SIGINT || sig == SIGTERM) && !si.si_pid && !ended) {
			kill(p, sig);
			kill(p, SIGCONT);
		}
	}
	if (write(sp[1], &st, sizeof(st)) < 0)
		_exit(125);
	_exit(0);
}

static void child_exec(int dirfd, int errfd, char *const *argv, char **envp,
		       const struct wap_sandbox *sb, bool pidns, int slave, int outfd)
{
	sigset_t all;
	const char *what;
	int e;
	int keep[6] = { errfd, slave >= 0 ? slave : outfd, dirfd,
			sb ? sb->ruleset_fd : -1, sb ? sb->list_fd : -1, sb ? sb->view.userns : -1 };

	child_hold(errfd, pidns, keep, 6);
	/* the program's session: on the PTY as its controlling terminal,
	 * or with its output on the pipe and no terminal */
	if (slave >= 0) {
		if (login_tty(slave) < 0)
			_exit(126);
	} else {
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		setsid();
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(outfd, 1) < 0 || dup2(outfd, 2) < 0)
			_exit(126);
	}

	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	for (int s = 1; s < 32; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	if (dirfd >= 0 && fchdir(dirfd) < 0) {
		e = errno;
		if (write(errfd, &e, sizeof(e)) < 0)
			_exit(126);
		_exit(126);
	}
	if (sb && (e = wap_sandbox_enter(sb, &what)) != 0) {
		if (write(errfd, &e, sizeof(e)) < 0)
			_exit(126);
		_exit(126);
	}
	execvpe(argv[0], argv, envp);
	e = errno;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

static void cmd_rules(const struct wap_ws *ws, struct wap_cmdrules *r);

int wap_term_create(struct wap_terms *ts, const struct wap_term_opts *o,
		    char id[WAP_TERM_ID_LEN], struct wap_err *err)
{
	struct term *t = NULL;
	char *rel = NULL, **envp = NULL, **extra = NULL;
	char *shargv[3] = { NULL, NULL, NULL };
	struct wap_cmdrules rules;
	bool lists;
	char *const *argv = o->argv;
	bool pty = o->pty || !o->argv, have_sb = false;
	/* held in a PID namespace as exec's commands are, where wap can make
	 * one (wap_proc_supervisor: probed once) */
	bool pidns = !strcmp(wap_proc_supervisor(), "pid-namespace");
	struct wap_sandbox sb;
	int dirfd = -1, errp[2] = { -1, -1 }, outp[2] = { -1, -1 }, rc = -1, e = 0;
	bool counted = false;	/* a place among terms_live */
	int max;
	pid_t pid;
	ssize_t n;

	if (!ts->ws->pol.allow_terminal)
		return wap_err_set(err, WAP_E_DISABLED,
			"Terminal access is disabled (security.allowTerminalAccess)");
	if (argv && (!argv[0] || !*argv[0]))
		return wap_err_set(err, WAP_E_INVALID, "Missing command");
	if (wap_term_count(ts) >= WAP_TERM_MAX)
		return wap_err_set(err, WAP_E_TOO_LARGE,
			"Too many terminals (%d): dispose or release some first", WAP_TERM_MAX);
	/* the whole command line: a deny entry with arguments ("git init")
	 * holds here as for exec */
	if (argv ? wap_term_check_command(ts->ws, argv, err) < 0 : check_shell(ts->ws, default_shell(), err) < 0)
		return -1;
	if (o->cwd && *o->cwd) {
		if (wap_ws_rel(ts->ws, o->cwd, strlen(o->cwd), &rel, err) < 0)
			return -1;
		dirfd = wap_ws_open(ts->ws, rel, O_RDONLY | O_DIRECTORY, 0, WAP_ACC_READ, err);
		if (dirfd < 0) {
			free(rel);
			return -1;
		}
	} else {
		dirfd = wap_ws_open(ts->ws, ".", O_RDONLY | O_DIRECTORY, 0, WAP_ACC_READ, err);
		if (dirfd < 0)
			return -1;
	}
	if (!terms_reserve(&max)) {
		close(dirfd);
		free(rel);
		return wap_err_set(err, WAP_E_TOO_LARGE,
			"Too many terminals (%d in all sessions): dispose or release some first", max);
	}
	counted = true;
	if (!argv) {
		shargv[0] = (char *)default_shell();
		argv = shargv;
	}
	/* security.sandbox / readOnly / a command list: the same sandbox as
	 * `wap exec` (never less confined than asked: no Landlock, no
	 * terminal).  With a list, the kernel refuses the programs it denies,
	 * however the text typed into the shell spells them. */
	cmd_rules(ts->ws, &rules);
	lists = (rules.allow && rules.allow[0]) || (rules.deny && rules.deny[0]);
	if (ts->ws->pol.sandbox || ts->ws->pol.read_only || lists) {
		struct wap_sandbox_opts so = { .fs = true, .read_only_root = ts->ws->pol.read_only,
					       .cwd = rel, .rules = { &rules, NULL } };
		so.path = getenv("PATH");
		for (size_t i = 0; o->env && o->env[i]; i++)
			if (!strncmp(o->env[i], "PATH=", 5))
				so.path = o->env[i] + 5;
		if (!o->argv)
			so.shell = argv[0];
		have_sb = true;
		if (wap_sandbox_prepare(&sb, ts->ws, &so, err) < 0)
			goto out;
	}
	/* the command's TMPDIR is the sandbox's private dir */
	for (size_t i = 0; o->env && o->env[i]; i++)
		if ((!have_sb || !sb.tmpenv || strncmp(o->env[i], "TMPDIR=", 7)) &&
		    wap_strv_push(&extra, o->env[i]) < 0)
			goto oom;
	if (have_sb && sb.tmpenv && wap_strv_push(&extra, sb.tmpenv) < 0)
		goto oom;
	t = calloc(1, sizeof(*t));
	envp = build_env(extra, pty);
	if (!t || !envp) {
oom:
		wap_err_oom(err);
		goto out;
	}
	t->set = ts;
	t->pty = pty;
	t->fd = -1;
	/* a client's outputByteLimit, within the server's own (a client
	 * asking for 1e15 must not make us keep all of it) */
	t->byte_limit = o->byte_limit < WAP_TERM_MAX_BYTES ? o->byte_limit : WAP_TERM_MAX_BYTES;
	t->max_lines = o->max_lines ? o->max_lines : WAP_TERM_DEFAULT_LINES;
	if (pipe2(errp, O_CLOEXEC) < 0 || (!pty && pipe2(outp, O_CLOEXEC) < 0)) {
		wap_err_set(err, WAP_E_FAILED, "Cannot start terminal: %s", strerror(errno));
		goto out;
	}
	if (pty) {
		struct winsize wsz = { .ws_row = 40, .ws_col = 160 };
		int master = -1, slave = -1;

		/* the session on the PTY is the program's, made in its
		 * namespace (child_exec) */
		pid = openpty(&master, &slave, NULL, NULL, &wsz) ? -1 : fork();
		if (pid == 0) {
			close(master);
			child_exec(dirfd, errp[1], argv, envp, have_sb ? &sb : NULL, pidns, slave, -1);
		}
		if (slave >= 0)
			close(slave);
		if (pid > 0) {
			t->fd = master;
			fcntl(master, F_SETFD, FD_CLOEXEC);
		} else if (master >= 0) {
			close(master);
		}
	} else {
		pid = fork();
		if (pid == 0)
			child_exec(dirfd, errp[1], argv, envp, have_sb ? &sb : NULL, pidns, -1, outp[1]);
		if (pid > 0) {
			t->fd = outp[0];
			outp[0] = -1;
		}
	}
	if (pid < 0) {
		wap_err_set(err, WAP_E_FAILED, "Cannot start terminal: %s", strerror(errno));
		goto out;
	}
	t->pid = pid;
	close(errp[1]);
	errp[1] = -1;
	if (outp[1] >= 0) {
		close(outp[1]);
		outp[1] = -1;
	}
	do
		n = read(errp[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n == sizeof(e)) {
		waitpid(pid, NULL, 0);
		if (e == ENOENT)
			wap_err_set(err, WAP_E_NOT_FOUND, "Command not found: %s", argv[0]);
		else
			wap_err_set(err, WAP_E_FAILED, "Cannot run %s: %s", argv[0], strerror(e));
		goto out;
	}
	fcntl(t->fd, F_SETFL, fcntl(t->fd, F_GETFL) | O_NONBLOCK);
	pthread_mutex_lock(&ts->mu);
	ts->counter++;
	snprintf(t->id, sizeof(t->id), "term-%lu", ts->counter);
	if (o->name && *o->name)
		t->name = strdup(o->name);
	else if (o->argv)
		t->name = strdup(o->argv[0]);
	else {
		char nm[48];
		snprintf(nm, sizeof(nm), "Terminal %lu", ts->counter);
		t->name = strdup(nm);
	}
	if (pthread_create(&t->thr, NULL, reader, t)) {
		pthread_mutex_unlock(&ts->mu);
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
		wap_err_set(err, WAP_E_FAILED, "Cannot start terminal: no thread");
		goto out;
	}
	t->next = ts->list;
	ts->list = t;
	snprintf(ts->active, sizeof(ts->active), "%s", t->id);
	snprintf(id, WAP_TERM_ID_LEN, "%s", t->id);
	if (have_sb) {
		t->sb = sb;	/* released with the terminal (term_free) */
		t->have_sb = true;
		have_sb = false;
	}
	pthread_mutex_unlock(&ts->mu);
	t = NULL;
	rc = 0;
out:
	if (t) {
		if (t->fd >= 0)
			close(t->fd);
		free(t->name);
		free(t);
	}
	if (rc && counted)
		__atomic_sub_fetch(&terms_live, 1, __ATOMIC_SEQ_CST);
	free(envp);
	wap_strv_free(extra);
	free(rel);
	if (have_sb)
		wap_sandbox_release(&sb);
	if (dirfd >= 0)
		close(dirfd);
	for (int i = 0; i < 2; i++) {
		if (errp[i] >= 0)
			close(errp[i]);
		if (outp[i] >= 0)
			close(outp[i]);
	}
	return rc;
}

int wap_term_send(struct wap_terms *ts, const char *id, const char *data, size_t len,
		  const struct wap_cancel *cancel, struct wap_err *err)
{
	struct term *t;
	struct timespec t0;
	size_t sent = 0;
	int fd = -1, rc = 0;

	pthread_mutex_lock(&ts->mu);
	t = find(ts, id, err);
	if (t && t->reaped)
		rc = wap_err_set(err, WAP_E_FAILED, "Terminal has exited: %s", id);
	else if (t && !t->pty)
		rc = wap_err_set(err, WAP_E_INVALID, "Terminal %s takes no input (a command terminal)", id);
	else if (t)
		fd = dup(t->fd);
	else
		rc = -1;
	pthread_mutex_unlock(&ts->mu);
	if (rc < 0)
		return rc;
	if (fd < 0)
		return wap_err_set(err, WAP_E_FAILED, "Cannot write to terminal %s: %s", id, strerror(errno));
	/* The master is non-blocking: wait when the PTY is full, for
	 * WAP_TERM_SEND_S in all (a shell that reads a byte now and then
	 * would hold the caller for hours) and while the call stands */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n > 0) {
			data += n;
			len -= (size_t)n;
			sent += (size_t)n;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			struct timespec now;
			if (wap_cancel_is_set(cancel)) {
				rc = wap_cancel_err(err);
				break;
			}
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - t0.tv_sec >= WAP_TERM_SEND_S) {
				rc = wap_err_set(err, WAP_E_TIMEOUT, "Terminal %s does not read its input: %zu of "
						 "%zu bytes taken in %d s", id, sent, sent + len, WAP_TERM_SEND_S);
				break;
			}
			poll(&p, 1, 100);
		} else {
			rc = wap_err_set(err, WAP_E_FAILED, "Cannot write to terminal %s: %s", id, strerror(errno));
			break;
		}
	}
	close(fd);
	return rc;
}

int wap_term_output(struct wap_terms *ts, const char *id, size_t max_lines, char **out,
		    size_t *len, bool *truncated, struct wap_term_status *st,
		    struct wap_err *err)
{
	struct term *t;
	const char *b;
	size_t n, from = 0;

	pthread_mutex_lock(&ts->mu);
	t = find(ts, id, err);
	if (!t) {
		pthread_mutex_unlock(&ts->mu);
		return -1;
	}
	b = t->buf ? t->buf + t->start : "";
	n = t->len;
	if (truncated)
		*truncated = t->truncated;
	if (max_lines) {
		/* Count back MAX_LINES lines; a final line without '\n' counts. */
		size_t i = n, lines = 0;
		if (i && b[i - 1] == '\n')
			i--;
		while (i > 0) {
			if (b[i - 1] == '\n' && ++lines == max_lines)
				break;
			i--;
		}
		from = i;
		if (from && truncated)
			*truncated = true;
	}
	*out = malloc(n - from + 1);
	if (*out) {
		memcpy(*out, b + from, n - from);
		(*out)[n - from] = 0;
		*len = n - from;
	}
	if (st)
		*st = t->st;
	pthread_mutex_unlock(&ts->mu);
	if (!*out)
		return wap_err_oom(err);
	return 0;
}

int wap_term_wait(struct wap_terms *ts, const char *id, long timeout_ms,
		  const struct wap_cancel *cancel, struct wap_term_status *st,
		  struct wap_err *err)
{
	struct term *t;
	struct timespec start;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	pthread_mutex_lock(&ts->mu);
	for (;;) {
		struct timespec dl;

		t = find(ts, id, err);
		if (!t) {
			rc = -1;
			break;
		}
		if (t->done) {
			if (st)
				*st = t->st;
			break;
		}
		if (wap_cancel_is_set(cancel)) {
			rc = wap_cancel_err(err);
			break;
		}
		if (timeout_ms >= 0 && ms_since(&start) >= timeout_ms) {
			rc = wap_err_set(err, WAP_E_TIMEOUT, "Terminal %s still running after %ld ms", id, timeout_ms);
			break;
		}
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += 100 * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&ts->cv, &ts->mu, &dl);
	}
	pthread_mutex_unlock(&ts->mu);
	return rc;
}

int wap_term_kill(struct wap_terms *ts, const char *id, struct wap_err *err)
{
	struct term *t;

	pthread_mutex_lock(&ts->mu);
	t = find(ts, id, err);
	if (t)
		term_stop(t);
	pthread_mutex_unlock(&ts->mu);
	return t ? 0 : -1;
}

int wap_term_release(struct wap_terms *ts, const char *id, struct wap_err *err)
{
	struct term *t, **pp;

	pthread_mutex_lock(&ts->mu);
	t = find(ts, id, err);
	if (!t) {
		pthread_mutex_unlock(&ts->mu);
		return -1;
	}
	term_stop(t);
	for (pp = &ts->list; *pp != t; pp = &(*pp)->next)
		;
	*pp = t->next;
	if (!strcmp(ts->active, t->id))
		ts->active[0] = 0;
	pthread_mutex_unlock(&ts->mu);
	term_free(t);
	return 0;
}

void wap_terms_release_all(struct wap_terms *ts)
{
	struct term *t, *next;

	if (!ts)
		return;
	pthread_mutex_lock(&ts->mu);
	for (t = ts->list; t; t = t->next)
		term_stop(t);
	t = ts->list;
	ts->list = NULL;
	ts->active[0] = 0;
	pthread_mutex_unlock(&ts->mu);
	for (; t; t = next) {
		next = t->next;
		term_free(t);
	}
}

int wap_term_show(struct wap_terms *ts, const char *id, struct wap_err *err)
{
	struct term *t;

	pthread_mutex_lock(&ts->mu);
	t = find(ts, id, err);
	if (t)
		snprintf(ts->active, sizeof(ts->active), "%s", t->id);
	pthread_mutex_unlock(&ts->mu);
	return t ? 0 : -1;
}

json_t *wap_term_list(struct wap_terms *ts)
{
	json_t *a = json_array();

	pthread_mutex_lock(&ts->mu);
	for (struct term *t = ts->list; t; t = t->next) {
		json_t *o = json_pack("{s:s, s:s, s:I, s:b}", "id", t->id, "name", t->name ? t->name : "",
				      "processId", (json_int_t)t->pid, "exited", t->st.exited);
		if (o && t->st.exited)
			json_object_set_new(o, "exitCode", json_integer(t->st.exit_code));
		json_array_insert_new(a, 0, o);	/* oldest first */
	}
	pthread_mutex_unlock(&ts->mu);
	return a;
}

json_t *wap_term_active(struct wap_terms *ts)
{
	json_t *o = NULL;

	pthread_mutex_lock(&ts->mu);
	for (struct term *t = ts->list; t; t = t->next)
		if (!strcmp(t->id, ts->active))
			o = json_pack("{s:s, s:s}", "terminalId", t->id, "name", t->name ? t->name : "");
	pthread_mutex_unlock(&ts->mu);
	return o;
}

size_t wap_term_count(struct wap_terms *ts)
{
	size_t n = 0;

	pthread_mutex_lock(&ts->mu);
	for (struct term *t = ts->list; t; t = t->next)
		n++;
	pthread_mutex_unlock(&ts->mu);
	return n;
}

static void cmd_rules(const struct wap_ws *ws, struct wap_cmdrules *r)
{
	memset(r, 0, sizeof(*r));
	r->allow = ws->pol.allowed_cmds;
	r->deny = ws->pol.restricted_cmds;
	r->allow_overrides = true;
	r->allow_name = "security.allowedCommands";
	r->deny_name = "security.restrictedCommands";
}

int wap_term_check_command(const struct wap_ws *ws, char *const *argv, struct wap_err *err)
{
	struct wap_cmdrules r;

	if (!ws->pol.allow_exec)
		return wap_err_set(err, WAP_E_DISABLED,
			"Command execution is disabled (security.allowCommandExecution)");
	cmd_rules(ws, &r);
	return wap_cmd_check(&r, NULL, argv, err);
}

int wap_term_check_line(const struct wap_ws *ws, const char *line, struct wap_err *err)
{
	struct wap_cmdrules r;

	cmd_rules(ws, &r);
	if ((!r.allow || !r.allow[0]) && (!r.deny || !r.deny[0]))
		return 0;
	return wap_cmd_check(&r, line, NULL, err);
}

/* --- the Agent Client Protocol terminal methods --- */

static int acp_id(const json_t *params, const char **id, struct wap_err *err)
{
	int r = wap_req_str(params, "terminalId", id, err);

	if (r == 0)
		return wap_err_set(err, WAP_E_INVALID, "Missing terminalId");
	return r < 0 ? -1 : 0;
}

static json_t *acp_status(const struct wap_term_status *st)
{
	char sig[32];

	snprintf(sig, sizeof(sig), "SIG%s", sigabbrev_np(st->signal) ? sigabbrev_np(st->signal) : "UNKNOWN");
	return json_pack("{s:o, s:o}",
		"exitCode", st->signal ? json_null() : json_integer(st->exit_code),
		"signal", st->signal ? json_string(sig) : json_null());
}

static int acp_create(struct wap_terms *ts, const json_t *params, json_t **res, struct wap_err *err)
{
	struct wap_term_opts o = { 0 };
	const char *cmd = NULL, *cwd = NULL;
	char **argv = NULL, **env = NULL, id[WAP_TERM_ID_LEN];
	json_t *args = json_object_get(params, "args"), *jenv = json_object_get(params, "env"), *v;
	long long limit = WAP_TERM_MAX_BYTES;
	size_t i;
	int rc = -1;

	if (wap_req_str(params, "command", &cmd, err) < 0)
		return -1;
	if (!cmd || !*cmd)
		return wap_err_set(err, WAP_E_INVALID, "Missing command");
	if (wap_req_str(params, "cwd", &cwd, err) < 0 ||
	    wap_req_int(params, "outputByteLimit", &limit, err) < 0)
		return -1;
	if (limit <= 0)
		return wap_err_set(err, WAP_E_INVALID, "outputByteLimit must be positive");
	if ((args && !json_is_array(args)) || (jenv && !json_is_array(jenv) && !json_is_null(jenv)))
		return wap_err_set(err, WAP_E_INVALID, "args and env must be arrays");
	if (wap_strv_push(&argv, cmd) < 0)
		goto oom;
	json_array_foreach(args, i, v) {
		if (!json_is_string(v)) {
			wap_err_set(err, WAP_E_INVALID, "args must be strings");
			goto out;
		}
		if (wap_strv_push(&argv, json_string_value(v)) < 0)
			goto oom;
	}
	json_array_foreach(jenv, i, v) {
		const char *name = json_string_value(json_object_get(v, "name"));
		const char *val = json_string_value(json_object_get(v, "value"));
		struct wap_sb sb = WAP_SB_INIT;

		if (!name || !val || !*name || strchr(name, '=')) {
			wap_err_set(err, WAP_E_INVALID, "env entries are {name, value} strings");
			goto out;
		}
		wap_sb_addf(&sb, "%s=%s", name, val);
		if (sb.oom || wap_strv_push(&env, sb.buf) < 0) {
			wap_sb_release(&sb);
			goto oom;
		}
		wap_sb_release(&sb);
	}
	o.argv = argv;
	o.env = env;
	o.cwd = cwd;
	o.byte_limit = (size_t)limit;
	if (wap_term_create(ts, &o, id, err) < 0)
		goto out;
	*res = json_pack("{s:s}", "terminalId", id);
	rc = 0;
	goto out;
oom:
	wap_err_oom(err);
out:
	wap_strv_free(argv);
	wap_strv_free(env);
	return rc;
}

int wap_term_acp(struct wap_terms *ts, const char *method, const json_t *params,
		 const struct wap_cancel *cancel, json_t **res, struct wap_err *err)
{
	const char *id = NULL;
	struct wap_term_status st;

	*res = NULL;
	if (!json_is_object(params))
		return wap_err_set(err, WAP_E_INVALID, "params must be an object");
	if (!strcmp(method, "terminal/create"))
		return acp_create(ts, params, res, err);
	if (acp_id(params, &id, err) < 0)
		return -1;
	if (!strcmp(method, "terminal/output")) {
		char *out, *clean;
		size_t len, cl;
		bool trunc;

		if (wap_term_output(ts, id, 0, &out, &len, &trunc, &st, err) < 0)
			return -1;
		clean = wap_term_utf8(out, len, &cl);
		free(out);
		*res = json_pack("{s:s%, s:b}", "output", clean ? clean : "", clean ? cl : 0, "truncated", trunc);
		free(clean);
		if (*res && st.exited)
			json_object_set_new(*res, "exitStatus", acp_status(&st));
		return 0;
	}
	if (!strcmp(method, "terminal/wait_for_exit")) {
		if (wap_term_wait(ts, id, -1, cancel, &st, err) < 0)
			return -1;
		*res = acp_status(&st);
		return 0;
	}
	if (!strcmp(method, "terminal/kill")) {
		if (wap_term_kill(ts, id, err) < 0)
			return -1;
		*res = json_null();
		return 0;
	}
	if (!strcmp(method, "terminal/release")) {
		if (wap_term_release(ts, id, err) < 0)
			return -1;
		*res = json_null();
		return 0;
	}
	return wap_err_set(err, WAP_E_INVALID, "Unknown terminal method: %s", method);
}
