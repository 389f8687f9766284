/* statfloor.c - the floor under "every file, newest first": walk the
 * current directory with N threads (getdents64 on directory fds, d_type,
 * no ignore files, no matching, no sorting, no output) and, with -s, one
 * fstatat per regular file, which is what an mtime order costs at the
 * least; with -e SUFFIX only the files whose name ends so are counted and
 * stat'ed (the floor under a glob of every *SUFFIX file, which stats only what
 * matches).  Prints the number of files.  bench/search.sh runs it beside
 * `wap glob` and fd.
 *
 *   statfloor [-s] [-e SUFFIX] [THREADS]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct dir {
	struct dir *next;
	int fd;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct dir *stack;
static int idle, nthreads, dostat;
static const char *suffix;
static size_t suflen;
static long files;

static void push(int fd)
{
	struct dir *d = malloc(sizeof(*d));

	if (!d) {
		close(fd);
		return;
	}
	d->fd = fd;
	pthread_mutex_lock(&mu);
	d->next = stack;
	stack = d;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
}

static int pop(void)
{
	int fd = -1;

	pthread_mutex_lock(&mu);
	idle++;
	while (!stack && idle < nthreads)
		pthread_cond_wait(&cv, &mu);
	if (stack) {
		struct dir *d = stack;
		stack = d->next;
		fd = d->fd;
		free(d);
		idle--;
	} else {
		pthread_cond_broadcast(&cv);	/* all idle, nothing left: done */
	}
	pthread_mutex_unlock(&mu);
	return fd;
}

static void *work(void *arg)
{
	static __thread char buf[1 << 15];
	long n = 0;
	int dfd;

	(void)arg;
	while ((dfd = pop()) >= 0) {
		long got;
		while ((got = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
			for (long o = 0; o < got;) {
				struct dirent64 *e = (struct dirent64 *)(buf + o);
				const char *s = e->d_name;
				o += e->d_reclen;
				if (s[0] == '.' && (!s[1] || (s[1] == '.' && !s[2])))
					continue;
				if (e->d_type == DT_DIR) {
					int fd = openat(dfd, s, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
					if (fd >= 0)
						push(fd);
				} else if (e->d_type == DT_REG) {
					struct stat st;
					size_t l;
					if (suffix && ((l = strlen(s)) < suflen ||
						       memcmp(s + l - suflen, suffix, suflen)))
						continue;
					if (!dostat || !fstatat(dfd, s, &st, AT_SYMLINK_NOFOLLOW))
						n++;
				}
			}
		}
		close(dfd);
	}
	__atomic_fetch_add(&files, n, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	int i = 1;

	if (i < argc && !strcmp(argv[i], "-s"))
		dostat = 1, i++;
	if (i + 1 < argc && !strcmp(argv[i], "-e"))
		suffix = argv[i + 1], suflen = strlen(suffix), i += 2;
	nthreads = i < argc ? atoi(argv[i]) : 1;
	if (nthreads < 1 || nthreads > 64)
		nthreads = 1;
	/* grow the fd table while single-threaded, as wap's walker does:
	 * growing it under threads waits for an RCU grace period each time */
	if (fcntl(0, F_DUPFD_CLOEXEC, 1023) == 1023)
		close(1023);
	push(open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	for (int k = 1; k < nthreads; k++)
		pthread_create(&t[k], NULL, work, NULL);
	work(NULL);
	for (int k = 1; k < nthreads; k++)
		pthread_join(t[k], NULL);
	printf("%ld\n", files);
	return 0;
}
