/* core/lazy.c - load libgit2, libarchive and libwebsockets when first needed.
 *
 * Linked at start-up they cost wap 3.5 ms on every run (38 shared
 * objects to map and relocate, against 5 without them), which every
 * `wap read` and `wap glob` would pay without using them.  The functions
 * wap calls are listed in lazy.list; lazy.h routes each call through a
 * pointer, filled here by dlsym from the library's soname (the one wap
 * was built against).  The applets load a library before its first call:
 * git and the edit diffs libgit2, read and grep -z libarchive, serve
 * libwebsockets.  Built with -DWAP_LAZY_STATIC (make static) the
 * libraries are linked in and the pointers set to them directly; with
 * -DWAP_LINK_GIT2 (the Makefile, on x86-64) libgit2 alone is, and its own
 * remote-only libraries are loaded by lib/git/deps.c. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#define WAP_LAZY_IMPL
#include "lazy.h"

#ifdef WAP_LAZY_STATIC
/* `make static`: the libraries are linked in, and the pointers are simply
 * their functions, set at compile time; there is nothing to load. */
#define INIT(f) .f = f,
struct wap_lazy wap_lazy = {
	WAP_LAZY_GIT2(INIT) WAP_LAZY_ARCHIVE(INIT) WAP_LAZY_LWS(INIT)
};
#undef INIT

int wap_lazy_load(int lib, struct wap_err *err)
{
	if (lib < 0 || lib >= WAP_LIB_COUNT)
		return wap_err_set(err, WAP_E_FAILED, "no such library");
	return 0;
}
#else
#ifdef WAP_LINK_GIT2
/* libgit2 is linked in (see the Makefile: its shared object and the 20 it
 * pulls in cost 3 ms of every git run): its pointers are set here, and
 * loading it is a no-op. */
#define INIT(f) .f = f,
struct wap_lazy wap_lazy = { WAP_LAZY_GIT2(INIT) };
#undef INIT
#else
struct wap_lazy wap_lazy;
#endif

struct sym {
	const char *name;
	void **slot;
};

#define SYM(f) { #f, (void **)&wap_lazy.f },
static const struct sym git2_syms[] = { WAP_LAZY_GIT2(SYM) };
static const struct sym archive_syms[] = { WAP_LAZY_ARCHIVE(SYM) };
static const struct sym lws_syms[] = { WAP_LAZY_LWS(SYM) };
#undef SYM

static const struct {
	const struct sym *syms;
	size_t n;
} libs[WAP_LIB_COUNT] = {
	[WAP_LIB_GIT2] = { git2_syms, sizeof(git2_syms) / sizeof(git2_syms[0]) },
	[WAP_LIB_ARCHIVE] = { archive_syms, sizeof(archive_syms) / sizeof(archive_syms[0]) },
	[WAP_LIB_LWS] = { lws_syms, sizeof(lws_syms) / sizeof(lws_syms[0]) },
};

static const char *const sonames[] = WAP_LAZY_SONAMES;
static const char *const modules[] = WAP_LAZY_MODULES;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
#ifdef WAP_LINK_GIT2
static int state[WAP_LIB_COUNT] = { [WAP_LIB_GIT2] = 1 };
#else
static int state[WAP_LIB_COUNT];	/* 0 not tried, 1 loaded, -1 failed */
#endif
static char why[WAP_LIB_COUNT][256];

/* 1, or -1 with why[lib] */
static int load(int lib)
{
	void *h = dlopen(sonames[lib], RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		const char *e = dlerror();
		snprintf(why[lib], sizeof(why[lib]), "%s", e ? e : "not found");
		return -1;
	}
	for (size_t i = 0; i < libs[lib].n; i++) {
		void *p = dlsym(h, libs[lib].syms[i].name);
		if (!p) {
			snprintf(why[lib], sizeof(why[lib]), "it has no %s", libs[lib].syms[i].name);
			return -1;
		}
		*libs[lib].syms[i].slot = p;
	}
	return 1;
}

int wap_lazy_load(int lib, struct wap_err *err)
{
	int st;

	if (lib < 0 || lib >= WAP_LIB_COUNT)
		return wap_err_set(err, WAP_E_FAILED, "no such library");
	/* loaded once; the pointers are then read without the lock */
	if (__atomic_load_n(&state[lib], __ATOMIC_ACQUIRE) == 1)
		return 0;
	pthread_mutex_lock(&mu);
	st = __atomic_load_n(&state[lib], __ATOMIC_RELAXED);
	if (!st) {
		st = load(lib);
		__atomic_store_n(&state[lib], st, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&mu);
	if (st == 1)
		return 0;
	return wap_err_set(err, WAP_E_FAILED, "cannot load %s (%s): %s",
			   modules[lib], sonames[lib], why[lib]);
}
#endif
