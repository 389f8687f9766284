/* serve/token.h - the bearer token of the network doors (MCP over HTTP and the
 * Agent Control Protocol over WebSocket): one way to make it, one way to
 * hand it to the client (a file only its owner can read), for both. */
#ifndef WAP_TOKEN_H
#define WAP_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "ws.h"

/* A fresh token: 32 bytes from getrandom(2), as 64 hex digits, in OUT.
 * Returns 0, or -1 with err (no randomness: never a guessable token). */
int wap_token_random(char out[65], struct wap_err *err);

/* The randomness every door's ids come from (tokens, HTTP session ids,
 * nonces, Agent Control session ids): NBYTES from getrandom(2) as 2 *
 * NBYTES hex digits and a NUL in OUT; a version 4 UUID (36 characters
 * and a NUL).  0, or -1 with err: no id is ever made of what was in OUT. */
int wap_random_hex(char *out, size_t nbytes, struct wap_err *err);
int wap_random_uuid(char out[37], struct wap_err *err);

/* Write TOKEN and a newline to PATH, mode 0600, never through a symlink
 * planted at the name.  Refuses a PATH inside WS's root (the agent could
 * read it there) unless the root is / (then nothing is outside).
 * Returns 0 or -1 with err. */
int wap_token_write(const struct wap_ws *ws, const char *path, const char *token, struct wap_err *err);

/* Is GOT (LEN bytes) the token WANT?  Constant time in LEN, no early
 * exit; an empty WANT matches nothing.  The one comparison of both doors
 * (HTTP's Bearer header, the WebSocket's auth.authenticate). */
bool wap_token_equal(const char *want, const char *got, size_t len);

/* NAME in $XDG_RUNTIME_DIR, else in ~/.cache (made 0700); malloc'd, NULL
 * when out of memory. */
char *wap_token_state_file(const char *name);

#endif
