/* serve/held.h - what the one server (lib/serve/http.c) may hold for all
 * its clients at once, both doors together: MCP over HTTP's request bodies
 * and replies not yet read, the Agent Control Protocol's messages being
 * read or waiting and its replies not taken.  Past the cap a client
 * holding more than its share (the cap over the clients there are) is
 * refused: 503 with Retry-After, a WebSocket closed 1013 "try again
 * later".  64 HTTP connections of a 16 MiB body or an 8 MiB batch reply
 * were a gigabyte; 256 WebSocket clients of some 80 MiB each 20 GiB.
 * The counters are atomic: any thread may add and take away. */
#ifndef WAP_HELD_H
#define WAP_HELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

/* WAP_SERVE_HELD_MAX lowers it (tests). */
#define WAP_HELD_MAX (256u << 20)

struct wap_held {
	size_t bytes;		/* held now */
	size_t users;		/* clients there are (HTTP requests, WebSockets) */
	size_t max;
};

static inline void wap_held_init(struct wap_held *b)
{
	const char *env = getenv("WAP_SERVE_HELD_MAX");
	long v = env ? atol(env) : 0;

	b->bytes = b->users = 0;
	b->max = v > 0 && (size_t)v < WAP_HELD_MAX ? (size_t)v : WAP_HELD_MAX;
}

static inline void wap_held_add(struct wap_held *b, size_t n)
{
	__atomic_add_fetch(&b->bytes, n, __ATOMIC_RELAXED);
}

static inline void wap_held_sub(struct wap_held *b, size_t n)
{
	__atomic_sub_fetch(&b->bytes, n, __ATOMIC_RELAXED);
}

/* a client comes (+1) or goes (-1) */
static inline void wap_held_user(struct wap_held *b, int d)
{
	if (d > 0)
		__atomic_add_fetch(&b->users, 1, __ATOMIC_RELAXED);
	else
		__atomic_sub_fetch(&b->users, 1, __ATOMIC_RELAXED);
}

/* Would N more bytes of a client holding MINE put all over the cap, and
 * it over its share? */
static inline bool wap_held_over(const struct wap_held *b, size_t mine, size_t n)
{
	size_t all = __atomic_load_n(&b->bytes, __ATOMIC_RELAXED);
	size_t users = __atomic_load_n(&b->users, __ATOMIC_RELAXED);

	return all + n > b->max && mine + n > b->max / (users ? users : 1);
}

#endif
