/* git/deps.c - libgit2's SSH and GSS-API libraries, loaded when a remote
 * first calls them.
 *
 * Where libgit2 is linked in (WAP_LINK_GIT2, see the Makefile), its calls
 * to libssh2 (SSH remotes; it brings OpenSSL) and to GSS-API (HTTP
 * "Negotiate"; it brings Kerberos, five more shared objects) land here:
 * each function is a trampoline that jumps through a pointer, and the
 * pointer first leads to a resolver that dlopens the library (by the
 * soname libgit2 was built against), sets every pointer of that library
 * and goes on to the real function with the caller's registers as they
 * were.  A status, log, show or diff never loads them; a push over SSH
 * loads libssh2 on its first call.  A library that cannot be loaded gets
 * functions that fail (the first call of each path, libssh2_session_init_ex
 * and gss_indicate_mechs, then reports it), and wap_git_dep_error() says
 * why.  libssh2_init (libgit2 calls it at start) only notes its flags:
 * libssh2 initialises itself on its first session.  x86-64 only (the
 * trampolines are assembly); elsewhere libgit2 stays a shared object. */
#include <stdbool.h>
#include <stddef.h>

#include "internal.h"

#ifdef WAP_LINK_GIT2
#ifndef __x86_64__
#error "lib/git/deps.c: the trampolines are x86-64 only (build without WAP_LINK_GIT2)"
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { SSH2, GSS, NLIBS };

static const char *const sonames[NLIBS] = { "libssh2.so.1", "libgssapi_krb5.so.2" };

/* what a function of a library that could not be loaded returns: NULL
 * (pointers) or 0, a libssh2 error, GSS_S_UNAVAILABLE */
enum { F_ZERO, F_SSH, F_GSS };

/* name, library, failure */
#define DEP_FNS(X) \
	X(libssh2_agent_connect, SSH2, F_SSH) \
	X(libssh2_agent_disconnect, SSH2, F_SSH) \
	X(libssh2_agent_free, SSH2, F_ZERO) \
	X(libssh2_agent_get_identity, SSH2, F_SSH) \
	X(libssh2_agent_init, SSH2, F_ZERO) \
	X(libssh2_agent_list_identities, SSH2, F_SSH) \
	X(libssh2_agent_userauth, SSH2, F_SSH) \
	X(libssh2_channel_close, SSH2, F_SSH) \
	X(libssh2_channel_free, SSH2, F_SSH) \
	X(libssh2_channel_open_ex, SSH2, F_ZERO) \
	X(libssh2_channel_process_startup, SSH2, F_SSH) \
	X(libssh2_channel_read_ex, SSH2, F_SSH) \
	X(libssh2_channel_set_blocking, SSH2, F_ZERO) \
	X(libssh2_channel_write_ex, SSH2, F_SSH) \
	X(libssh2_hostkey_hash, SSH2, F_ZERO) \
	X(libssh2_knownhost_checkp, SSH2, F_SSH) \
	X(libssh2_knownhost_free, SSH2, F_ZERO) \
	X(libssh2_knownhost_init, SSH2, F_ZERO) \
	X(libssh2_knownhost_readfile, SSH2, F_SSH) \
	X(libssh2_session_abstract, SSH2, F_ZERO) \
	X(libssh2_session_disconnect_ex, SSH2, F_SSH) \
	X(libssh2_session_free, SSH2, F_SSH) \
	X(libssh2_session_handshake, SSH2, F_SSH) \
	X(libssh2_session_hostkey, SSH2, F_ZERO) \
	X(libssh2_session_init_ex, SSH2, F_ZERO) \
	X(libssh2_session_last_error, SSH2, F_SSH) \
	X(libssh2_session_method_pref, SSH2, F_SSH) \
	X(libssh2_session_set_blocking, SSH2, F_ZERO) \
	X(libssh2_userauth_authenticated, SSH2, F_ZERO) \
	X(libssh2_userauth_keyboard_interactive_ex, SSH2, F_SSH) \
	X(libssh2_userauth_list, SSH2, F_ZERO) \
	X(libssh2_userauth_password_ex, SSH2, F_SSH) \
	X(libssh2_userauth_publickey, SSH2, F_SSH) \
	X(libssh2_userauth_publickey_fromfile_ex, SSH2, F_SSH) \
	X(libssh2_userauth_publickey_frommemory, SSH2, F_SSH) \
	X(gss_delete_sec_context, GSS, F_GSS) \
	X(gss_display_status, GSS, F_GSS) \
	X(gss_import_name, GSS, F_GSS) \
	X(gss_indicate_mechs, GSS, F_GSS) \
	X(gss_init_sec_context, GSS, F_GSS) \
	X(gss_release_buffer, GSS, F_GSS) \
	X(gss_release_name, GSS, F_GSS) \
	X(gss_release_oid_set, GSS, F_GSS)

/* the entry every pointer holds until its library is loaded (below) */
void wap_dep_enter(void);

/* each function's pointer: wap_dep_p_NAME */
#define SLOT(f, lib, fail) __attribute__((visibility("hidden"))) void *wap_dep_p_##f = (void *)wap_dep_enter;
DEP_FNS(SLOT)
#undef SLOT

/* each function: load its pointer's address into r11 (not an argument
 * register), jump through it; endbr64 for kernels that enforce IBT */
#define TRAMP(f, lib, fail) \
	__asm__(".text\n\t.globl " #f "\n\t.type " #f ",@function\n" #f ":\n\t" \
		"endbr64\n\tleaq wap_dep_p_" #f "(%rip), %r11\n\tjmp *(%r11)\n\t.size " #f ",.-" #f "\n");
DEP_FNS(TRAMP)
#undef TRAMP

/* the resolver's entry: keep the argument registers (and %rax, the count
 * of vector registers of a variadic call), ask wap_dep_resolve for the
 * function behind the pointer at %r11, restore them and jump there */
__asm__(".text\n\t.globl wap_dep_enter\n\t.hidden wap_dep_enter\n\t.type wap_dep_enter,@function\n"
	"wap_dep_enter:\n\t"
	"endbr64\n\t"
	"pushq %rbp\n\tmovq %rsp, %rbp\n\tsubq $192, %rsp\n\t"
	"movq %rdi, 0(%rsp)\n\tmovq %rsi, 8(%rsp)\n\tmovq %rdx, 16(%rsp)\n\t"
	"movq %rcx, 24(%rsp)\n\tmovq %r8, 32(%rsp)\n\tmovq %r9, 40(%rsp)\n\tmovq %rax, 48(%rsp)\n\t"
	"movdqu %xmm0, 64(%rsp)\n\tmovdqu %xmm1, 80(%rsp)\n\tmovdqu %xmm2, 96(%rsp)\n\t"
	"movdqu %xmm3, 112(%rsp)\n\tmovdqu %xmm4, 128(%rsp)\n\tmovdqu %xmm5, 144(%rsp)\n\t"
	"movdqu %xmm6, 160(%rsp)\n\tmovdqu %xmm7, 176(%rsp)\n\t"
	"movq %r11, %rdi\n\tcall wap_dep_resolve\n\tmovq %rax, %r11\n\t"
	"movq 0(%rsp), %rdi\n\tmovq 8(%rsp), %rsi\n\tmovq 16(%rsp), %rdx\n\t"
	"movq 24(%rsp), %rcx\n\tmovq 32(%rsp), %r8\n\tmovq 40(%rsp), %r9\n\tmovq 48(%rsp), %rax\n\t"
	"movdqu 64(%rsp), %xmm0\n\tmovdqu 80(%rsp), %xmm1\n\tmovdqu 96(%rsp), %xmm2\n\t"
	"movdqu 112(%rsp), %xmm3\n\tmovdqu 128(%rsp), %xmm4\n\tmovdqu 144(%rsp), %xmm5\n\t"
	"movdqu 160(%rsp), %xmm6\n\tmovdqu 176(%rsp), %xmm7\n\t"
	"leave\n\tjmp *%r11\n\t.size wap_dep_enter,.-wap_dep_enter\n");

static const struct dep {
	const char *name;
	void **slot;
	int lib, fail;
} deps[] = {
#define ROW(f, lib, fail) { #f, &wap_dep_p_##f, lib, fail },
	DEP_FNS(ROW)
#undef ROW
};

static long fail_zero(void)
{
	return 0;
}

static long fail_ssh(void)
{
	return -7;	/* LIBSSH2_ERROR_SOCKET_SEND... any error: never 0 */
}

static long fail_gss(void)
{
	return 16L << 16;	/* GSS_S_UNAVAILABLE */
}

static pthread_once_t once[NLIBS] = { PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT };
static char why[NLIBS][256];
static int ssh2_flags;
static bool ssh2_wanted;
static void (*ssh2_exit)(void);

static void *failing(int fail)
{
	return fail == F_GSS ? (void *)fail_gss : fail == F_SSH ? (void *)fail_ssh : (void *)fail_zero;
}

static void load(int lib)
{
	void *h = dlopen(sonames[lib], RTLD_NOW | RTLD_LOCAL);
	const char *e = h ? NULL : dlerror();
	int (*init)(int) = NULL;

	for (size_t i = 0; h && !e && i < sizeof(deps) / sizeof(deps[0]); i++)
		if (deps[i].lib == lib && !dlsym(h, deps[i].name))
			e = "a function is missing";
	if (h && !e && lib == SSH2 &&
	    (!(init = (int (*)(int))dlsym(h, "libssh2_init")) ||
	     !(ssh2_exit = (void (*)(void))dlsym(h, "libssh2_exit"))))
		e = "a function is missing";
	if (e) {
		snprintf(why[lib], sizeof(why[lib]), "cannot load %s: %s", sonames[lib], e);
		ssh2_exit = NULL;
	} else if (init && ssh2_wanted) {
		init(ssh2_flags);	/* as libgit2 asked for it at start */
	}
	/* every pointer of the library: all real, or all failing */
	for (size_t i = 0; i < sizeof(deps) / sizeof(deps[0]); i++)
		if (deps[i].lib == lib)
			__atomic_store_n(deps[i].slot, e ? failing(deps[i].fail) : dlsym(h, deps[i].name),
					 __ATOMIC_RELEASE);
}

static void load_ssh2(void)
{
	load(SSH2);
}

static void load_gss(void)
{
	load(GSS);
}

void *wap_dep_resolve(void **slot);

/* the function behind SLOT, its library loaded first (once) */
__attribute__((visibility("hidden"))) void *wap_dep_resolve(void **slot)
{
	for (size_t i = 0; i < sizeof(deps) / sizeof(deps[0]); i++)
		if (deps[i].slot == slot) {
			pthread_once(&once[deps[i].lib], deps[i].lib == SSH2 ? load_ssh2 : load_gss);
			return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		}
	return (void *)fail_zero;	/* not reached: every slot is in deps */
}

/* git_libgit2_init calls it: noted, and run when libssh2 is loaded
 * (libssh2 also initialises itself on its first session) */
int libssh2_init(int flags);
void libssh2_exit(void);

int libssh2_init(int flags)
{
	ssh2_flags = flags;
	ssh2_wanted = true;
	return 0;
}

void libssh2_exit(void)
{
	/* only once loaded (through pthread_once: then set) */
	if (ssh2_exit)
		ssh2_exit();
}

/* GSS-API's OID for host-based service names (RFC 2744), which libgit2
 * takes the address of: a constant, as Kerberos compares OIDs by value */
typedef struct {
	uint32_t length;
	void *elements;
} wap_gss_oid;
static wap_gss_oid hostbased = { 10, (void *)"\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x04" };
wap_gss_oid *GSS_C_NT_HOSTBASED_SERVICE = &hostbased;

const char *wap_git_dep_error(void)
{
	return why[SSH2][0] ? why[SSH2] : why[GSS][0] ? why[GSS] : NULL;
}
#else
const char *wap_git_dep_error(void)
{
	return NULL;
}
#endif
