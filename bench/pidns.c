/* pidns.c - what a PID namespace costs a command, apart from wap: N runs
 * of /bin/true, median wall time in microseconds, three ways:
 *   0  vfork, exec, wait (what timeout(1) does, no namespace)
 *   1  a new PID namespace whose init (cloned in our memory) vforks the
 *      command, waits, kills what is left of the namespace and exits (wap)
 *   2  the same namespace and init, but the command our own child and the
 *      init, idle, killed after it (one hand-off less)
 *   3  one namespace and init kept for every command: the init vforks each
 *      on a request (a futex), waits, kills what is left and says so
 *      (a wap serve thread's init, lib/proc/proc.c)
 * Root only (the namespace).  bench/exec.sh builds and runs it.
 *
 *   pidns MODE [N]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STACK (1 << 20)

static char *targv[] = { "/bin/true", NULL };
static char *stk_init, *stk_cmd;

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int run_cmd(void *arg)
{
	(void)arg;
	execv(targv[0], targv);
	_exit(127);
}

static int supervise(void *arg)
{
	int st;
	pid_t p;

	(void)arg;
	if (getpid() != 1)	/* never kill(-1) outside a namespace of our own */
		_exit(99);
	p = clone(run_cmd, stk_cmd + STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	waitpid(p, &st, 0);
	kill(-1, SIGKILL);
	_exit(0);
}

/* mode 3: the request and its answer, each a count */
static int req, done;

static void fwait(int *w, int v)
{
	syscall(SYS_futex, w, FUTEX_WAIT, v, NULL, NULL, 0);
}

static void fwake(int *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static int kept(void *arg)
{
	int seen = 0, st;
	pid_t p;

	(void)arg;
	if (getpid() != 1)
		_exit(99);
	for (;;) {
		while (__atomic_load_n(&req, __ATOMIC_ACQUIRE) == seen)
			fwait(&req, seen);
		seen = req;
		p = clone(run_cmd, stk_cmd + STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
		waitpid(p, &st, 0);
		kill(-1, SIGKILL);
		while (waitpid(-1, &st, WNOHANG) > 0)
			;
		__atomic_store_n(&done, seen, __ATOMIC_RELEASE);
		fwake(&done);
	}
	return 0;
}

static int idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

int main(int argc, char **argv)
{
	int mode = argc > 1 ? atoi(argv[1]) : 0, n = argc > 2 ? atoi(argv[2]) : 2000, st;
	int back = open("/proc/self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
	double *t = calloc(n, sizeof(*t));

	stk_init = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stk_cmd = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!t || back < 0 || stk_init == MAP_FAILED || stk_cmd == MAP_FAILED) {
		perror("pidns");
		return 1;
	}
	if (mode == 3) {
		pid_t in;
		if (unshare(CLONE_NEWPID)) {
			perror("pidns: unshare");
			return 1;
		}
		in = clone(kept, stk_init + STACK, CLONE_VM | SIGCHLD, NULL);
		setns(back, CLONE_NEWPID);
		for (int i = 0; i < n; i++) {
			double t0 = now_us();
			__atomic_store_n(&req, i + 1, __ATOMIC_RELEASE);
			fwake(&req);
			while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) != i + 1)
				fwait(&done, done);
			t[i] = now_us() - t0;
		}
		kill(in, SIGKILL);
		waitpid(in, &st, 0);
		n = -n;	/* measured */
	}
	for (int i = 0; i < n; i++) {
		double t0 = now_us();
		pid_t p, in;

		if (mode && unshare(CLONE_NEWPID)) {
			perror("pidns: unshare");
			return 1;
		}
		if (mode == 0) {
			p = clone(run_cmd, stk_cmd + STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
			waitpid(p, &st, 0);
		} else if (mode == 1) {
			p = clone(supervise, stk_init + STACK, CLONE_VM | SIGCHLD, NULL);
			setns(back, CLONE_NEWPID);
			waitpid(p, &st, 0);
		} else {
			in = clone(idle, stk_init + STACK, CLONE_VM | SIGCHLD, NULL);
			p = clone(run_cmd, stk_cmd + STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
			setns(back, CLONE_NEWPID);
			waitpid(p, &st, 0);
			kill(in, SIGKILL);
			waitpid(in, &st, 0);
		}
		t[i] = now_us() - t0;
	}
	n = n < 0 ? -n : n;
	qsort(t, n, sizeof(*t), cmp);
	printf("%.1f\n", t[n / 2]);
	free(t);
	return 0;
}
