/* proc/rsys.h - system calls made without libc, for code that runs in a
 * child sharing the caller's memory (clone with CLONE_VM, see proc.c): it
 * has the caller's thread pointer, so libc's errno there is the caller's
 * thread's.  rsys() returns the kernel's answer as it is: a result, or
 * -errno.  On x86-64 and arm64 it is the instruction itself; elsewhere
 * (where no child shares the caller's memory) it is libc's syscall(),
 * with its errno turned back into the kernel's answer. */
#ifndef WAP_RSYS_H
#define WAP_RSYS_H

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__aarch64__)
#define WAP_RSYS_RAW 1
#endif

static inline long rsys(long n, long a, long b, long c, long d, long e)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d, r8 __asm__("r8") = e;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b,
		 x2 __asm__("x2") = c, x3 __asm__("x3") = d, x4 __asm__("x4") = e;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
			 : "memory");
	return x0;
#else
	long r = syscall(n, a, b, c, d, e);

	return r == -1 ? -errno : r;
#endif
}

#define R0(n) rsys(SYS_##n, 0, 0, 0, 0, 0)
#define R1(n, a) rsys(SYS_##n, (long)(a), 0, 0, 0, 0)
#define R2(n, a, b) rsys(SYS_##n, (long)(a), (long)(b), 0, 0, 0)
#define R3(n, a, b, c) rsys(SYS_##n, (long)(a), (long)(b), (long)(c), 0, 0)
#define R4(n, a, b, c, d) rsys(SYS_##n, (long)(a), (long)(b), (long)(c), (long)(d), 0)
#define R5(n, a, b, c, d, e) \
	rsys(SYS_##n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e))

/* Write S to the file PATH (a /proc/self file: a user namespace's maps);
 * 0 or -errno. */
static inline long r_put_file(const char *path, const char *s)
{
	long fd = R3(openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC), e;
	size_t n = 0;

	if (fd < 0)
		return fd;
	while (s[n])
		n++;
	e = R3(write, fd, s, n);
	R1(close, fd);
	return e < 0 ? e : 0;
}

/* "ID ID 1\n", the map of one id onto itself, into BUF (32 bytes). */
static inline const char *r_id_map(char *buf, unsigned id)
{
	char d[12];
	int n = 0, k = 0;

	do
		d[n++] = (char)('0' + id % 10);
	while ((id /= 10));
	for (int twice = 0; twice < 2; twice++) {
		for (int i = n - 1; i >= 0; i--)
			buf[k++] = d[i];
		buf[k++] = ' ';
	}
	buf[k++] = '1';
	buf[k++] = '\n';
	buf[k] = 0;
	return buf;
}

#endif
