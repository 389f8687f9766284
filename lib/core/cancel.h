/* core/cancel.h - the one cancellation token.  A door makes one per call
 * (MCP notifications/cancelled, stdin EOF, an HTTP session's end, a
 * closed WebSocket, SIGINT to the CLI all set it); every op that runs
 * long polls it (the walk, the matcher, exec's wait, the approver's wait,
 * terminals, git, archive reads); a cancelled op fails with the one error
 * of wap_cancel_err(), so every kind of call stops the same way.
 *
 * Setting it is async-signal-safe (a flag store), so a signal handler may
 * cancel. */
#ifndef WAP_CANCEL_H
#define WAP_CANCEL_H

#include <signal.h>
#include <stdbool.h>

#include "err.h"

struct wap_cancel {
	volatile sig_atomic_t why;		/* 0; else why: 1, the signal, or
						 * WAP_CANCEL_LATE */
	long deadline;		/* when the call's time is up (wap_cancel_ms);
				 * 0: never.  Set by the one road (wap_run_op). */
};

#define WAP_CANCEL_INIT { 0, 0 }

/* why: the call's deadline passed (every poll of the token sees it as a
 * cancel; the one road answers it as the call's time limit) */
#define WAP_CANCEL_LATE (-2)

/* The coarse monotonic clock, in ms (a deadline's). */
long wap_cancel_ms(void);

/* Past C's deadline?  Then its why is WAP_CANCEL_LATE.  (The clock is
 * read only for a token that has a deadline.) */
bool wap_cancel_late(const struct wap_cancel *c);

/* Cancel C (NULL: nothing).  WHY is non-zero: 1 (the caller gave up) or
 * the signal that asked (exec passes SIGINT on as SIGINT). */
void wap_cancel_set(struct wap_cancel *c, int why);

/* 0 while the call may go on; else why it was cancelled (WAP_CANCEL_LATE:
 * its deadline passed).  C may be NULL. */
int wap_cancel_why(const struct wap_cancel *c);

static inline bool wap_cancel_is_set(const struct wap_cancel *c)
{
	/* inline: a walk polls it for every entry */
	return c && (c->why != 0 || (c->deadline && wap_cancel_late(c)));
}

/* The cancel of the call this thread runs, for the waits deep in lib/
 * that are handed no token (a directory's lock, which any process may
 * hold for ever).  wap_cancel_enter makes C this thread's (NULL: none)
 * and returns the one before, which wap_cancel_leave puts back; the one
 * road (wap_run_op) does it around every op. */
const struct wap_cancel *wap_cancel_enter(const struct wap_cancel *c);
void wap_cancel_leave(const struct wap_cancel *prev);
const struct wap_cancel *wap_cancel_current(void);

/* The one error of a cancelled call: EXECUTION_FAILED "Operation
 * cancelled"; returns -1. */
int wap_cancel_err(struct wap_err *e);

#endif
