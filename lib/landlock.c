/* landlock.c - Landlock rulesets, network isolation and rlimits for the
 * commands wap runs (landlock.h).  The kernel headers of the build machine
 * may predate the ABI the kernel offers, so the few constants needed are
 * spelled out here; each right is used only when the ABI has it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <unistd.h>

#include "landlock.h"

#define LL_FS_EXECUTE		(1ULL << 0)
#define LL_FS_WRITE_FILE	(1ULL << 1)
#define LL_FS_READ_FILE		(1ULL << 2)
#define LL_FS_READ_DIR		(1ULL << 3)
#define LL_FS_REFER		(1ULL << 13)	/* ABI 2 */
#define LL_FS_TRUNCATE		(1ULL << 14)	/* ABI 3 */
#define LL_FS_IOCTL_DEV		(1ULL << 15)	/* ABI 5 */
#define LL_NET_BIND_TCP		(1ULL << 0)	/* ABI 4 */
#define LL_NET_CONNECT_TCP	(1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX	(1ULL << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL		(1ULL << 1)
#define LL_RULE_PATH_BENEATH	1
#define LL_CREATE_VERSION	(1U << 0)

/* rights that make sense on a file (not a directory) */
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | \
			LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

int wap_landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_VERSION);
	const char *cap = getenv("WAP_LANDLOCK_ABI");

	if (v < 0)
		v = 0;
	if (cap && *cap && atol(cap) < v)
		v = atol(cap);
	return (int)v;
}

static uint64_t fs_rights(int abi)
{
	uint64_t r = (1ULL << 13) - 1;	/* ABI 1: EXECUTE .. MAKE_SYM */

	if (abi >= 2)
		r |= LL_FS_REFER;
	if (abi >= 3)
		r |= LL_FS_TRUNCATE;
	if (abi >= 5)
		r |= LL_FS_IOCTL_DEV;
	return r;
}

/* Allow RIGHTS beneath PATH (or FD when >= 0).  A path that does not exist
 * is skipped: not every system has /lib32. */
static int add_rule(int rs, const char *path, int fd, uint64_t rights, uint64_t handled,
		    struct wap_err *err)
{
	struct ll_path_beneath_attr pb;
	struct stat st;
	int own = -1, rc = 0;

	if (fd < 0) {
		own = fd = open(path, O_PATH | O_CLOEXEC);
		if (fd < 0)
			return errno == ENOENT || errno == EACCES ? 0 :
				wap_err_set(err, WAP_E_FAILED, "Sandbox: %s: %s", path, strerror(errno));
	}
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		rights &= LL_FILE_RIGHTS;
	pb.allowed_access = rights & handled;
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
		rc = wap_err_set(err, WAP_E_FAILED, "Sandbox: cannot add a rule for %s: %s",
				 path, strerror(errno));
	if (own >= 0)
		close(own);
	return rc;
}

int wap_sandbox_prepare(struct wap_sandbox *sb, const struct wap_ws *ws,
			const struct wap_sandbox_opts *o, struct wap_err *err)
{
	static const char *const sysdirs[] = {
		"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
		"/opt", "/proc", "/sys", "/run", "/var", "/nix", "/snap", "/dev", NULL
	};
	static const char *const devfiles[] = {
		"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random",
		"/dev/urandom", "/dev/ptmx", "/dev/pts", NULL
	};
	struct ll_ruleset_attr attr = { 0 };
	uint64_t all, rd;
	size_t attrsize;
	const char *tmp;
	int abi, rs;

	memset(sb, 0, sizeof(*sb));
	sb->ruleset_fd = -1;
	sb->max_memory = o->max_memory;
	sb->max_procs = o->max_procs;
	sb->max_file_size = o->max_file_size;
	if (!o->fs && !o->no_network)
		return 0;
	abi = wap_landlock_abi();
	sb->abi = abi;
	if (o->fs && abi < 1)
		return wap_err_set(err, WAP_E_DISABLED,
			"Sandbox unavailable: this kernel has no Landlock (needed by --sandbox); "
			"refusing to run the command unconfined");
	if (o->no_network && abi < 4) {
		/* no Landlock network rules: a network namespace instead */
		sb->netns = true;
		sb->userns = geteuid() != 0;
		sb->uid = geteuid();
		sb->gid = getegid();
	}
	if (!o->fs && sb->netns)
		return 0;

	all = fs_rights(abi);
	rd = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR;
	attrsize = abi >= 6 ? sizeof(attr) : abi >= 4 ? 16 : 8;
	if (o->fs)
		attr.handled_access_fs = all;
	if (o->no_network && !sb->netns) {
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		sb->no_udp = true;
	}
	if (abi >= 6 && o->fs)
		attr.scoped = LL_SCOPE_SIGNAL;
	if (abi >= 6 && o->no_network)
		attr.scoped |= LL_SCOPE_ABSTRACT_UNIX;
	if (!attr.handled_access_fs && !attr.handled_access_net && !attr.scoped)
		return 0;
	if (!attr.handled_access_fs) {
		/* a network-only ruleset still needs the fs field zero: fine */
	}
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, attrsize, 0);
	if (rs < 0)
		return wap_err_set(err, WAP_E_DISABLED, "Sandbox unavailable: landlock_create_ruleset: %s",
				   strerror(errno));
	sb->ruleset_fd = rs;
	if (!o->fs)
		return 0;

	if (add_rule(rs, ws->root, ws->rootfd, o->read_only_root ? rd : all, all, err))
		goto fail;
	tmp = o->tmpdir;
	if (!tmp || !*tmp)
		tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (add_rule(rs, tmp, -1, all, all, err))
		goto fail;
	for (int i = 0; sysdirs[i]; i++)
		if (add_rule(rs, sysdirs[i], -1, rd | (!strcmp(sysdirs[i], "/dev") ? LL_FS_IOCTL_DEV : 0),
			     all, err))
			goto fail;
	for (int i = 0; devfiles[i]; i++)
		if (add_rule(rs, devfiles[i], -1,
			     LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV | rd,
			     all, err))
			goto fail;
	if (add_rule(rs, "/dev/shm", -1, all, all, err))
		goto fail;
	/* git treats an unreadable ~/.gitconfig as fatal: let the user's git
	 * configuration (and nothing else of $HOME) be read */
	{
		const char *home = getenv("HOME");
		static const char *const gitcfg[] = { ".gitconfig", ".config/git", NULL };
		for (int i = 0; home && *home == '/' && gitcfg[i]; i++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", home, gitcfg[i]);
			if (add_rule(rs, path, -1, rd, all, err))
				goto fail;
		}
	}
	return 0;
fail:
	wap_sandbox_release(sb);
	return -1;
}

void wap_sandbox_release(struct wap_sandbox *sb)
{
	if (sb->ruleset_fd >= 0)
		close(sb->ruleset_fd);
	sb->ruleset_fd = -1;
}

/* Write S to the /proc/self file NAME (user namespace maps). */
static int put_proc(const char *name, const char *s)
{
	int fd = open(name, O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) < 0)
		rc = errno;
	close(fd);
	return rc;
}

/* Landlock's network rules cover TCP only.  With --no-network a seccomp
 * filter refuses (EACCES) the rest: an inet socket that is not TCP (UDP,
 * raw, SCTP...), packet sockets, and io_uring (which could make sockets
 * without the socket() call).  Unix sockets stay.  For 32-bit (and x32)
 * code, every socket() and socketcall() is refused.  Other architectures
 * than x86-64 and arm64: no filter (TCP is still denied). */
#if defined(__x86_64__)
#define NATIVE_ARCH	AUDIT_ARCH_X86_64
#define COMPAT_ARCH	AUDIT_ARCH_I386
#define COMPAT_SOCKET	359
#define COMPAT_SOCKETCALL 102
#define X32_BIT		0x40000000u
#elif defined(__aarch64__)
#define NATIVE_ARCH	AUDIT_ARCH_AARCH64
#define COMPAT_ARCH	AUDIT_ARCH_ARM
#define COMPAT_SOCKET	281
#define COMPAT_SOCKETCALL 0xffffffffu	/* none on arm */
#define X32_BIT		0x40000000u	/* no such numbers: never matches */
#endif
#define IO_URING_SETUP	425	/* the same number on every architecture */

static int no_udp_filter(void)
{
#ifdef NATIVE_ARCH
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))	/* little-endian */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_ARCH, 0, 20),
		/* 32-bit: no socket() at all */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_SOCKET, 17, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_SOCKETCALL, 16, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IO_URING_SETUP, 15, 16),
		/* native */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IO_URING_SETUP, 13, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, X32_BIT | IO_URING_SETUP, 12, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, X32_BIT | SYS_socket, 11, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 11),
		/* socket(domain, type, protocol) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_PACKET, 8, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 0, 7),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf),	/* SOCK_NONBLOCK, SOCK_CLOEXEC off */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),	/* 22 */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),		/* 23 */
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
#undef ARG_LO
#else
	return 0;
#endif
}

int wap_sandbox_enter(const struct wap_sandbox *sb, const char **what)
{
	struct rlimit rl;
	int e;

#define LIMIT(res, v, name) \
	if (v > 0) { \
		rl.rlim_cur = rl.rlim_max = (rlim_t)v; \
		if (setrlimit(res, &rl) < 0) { *what = name; return errno; } \
	}
	LIMIT(RLIMIT_AS, sb->max_memory, "--max-memory");
	LIMIT(RLIMIT_NPROC, sb->max_procs, "--max-procs");
	LIMIT(RLIMIT_FSIZE, sb->max_file_size, "--max-file-size");
#undef LIMIT
	if (sb->netns) {
		if (sb->userns) {
			char map[64];
			*what = "user namespace";
			if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
				return errno;
			snprintf(map, sizeof(map), "%u %u 1\n", sb->uid, sb->uid);
			if ((e = put_proc("/proc/self/uid_map", map)))
				return e;
			if ((e = put_proc("/proc/self/setgroups", "deny")))
				return e;
			snprintf(map, sizeof(map), "%u %u 1\n", sb->gid, sb->gid);
			if ((e = put_proc("/proc/self/gid_map", map)))
				return e;
		} else if (unshare(CLONE_NEWNET) < 0) {
			*what = "network namespace";
			return errno;
		}
	}
	if (sb->ruleset_fd < 0 && !sb->netns && !sb->max_memory && !sb->max_procs &&
	    !sb->max_file_size)
		return 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		*what = "no_new_privs";
		return errno;
	}
	if (sb->ruleset_fd >= 0 && syscall(SYS_landlock_restrict_self, sb->ruleset_fd, 0) < 0) {
		*what = "landlock_restrict_self";
		return errno;
	}
	if (sb->no_udp && no_udp_filter() < 0) {
		*what = "seccomp";
		return errno;
	}
	return 0;
}
