/* core/cancel.c - the one cancellation token.  See cancel.h. */
#include <time.h>

#include "cancel.h"

void wap_cancel_set(struct wap_cancel *c, int why)
{
	if (c)
		c->why = why ? why : 1;
}

int wap_cancel_why(const struct wap_cancel *c)
{
	return wap_cancel_is_set(c) ? c->why : 0;
}

long wap_cancel_ms(void)
{
	struct timespec ts;

	/* the coarse clock: a vDSO read of a few nanoseconds, polled for
	 * every entry of a walk */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

bool wap_cancel_late(const struct wap_cancel *c)
{
	if (!c->deadline || wap_cancel_ms() < c->deadline)
		return false;
	/* a flag store, as a signal's; the token is the call's, never a
	 * const object */
	if (!c->why)
		((struct wap_cancel *)c)->why = WAP_CANCEL_LATE;
	return true;
}

int wap_cancel_err(struct wap_err *e)
{
	return wap_err_set(e, WAP_E_FAILED, "Operation cancelled");
}

static __thread const struct wap_cancel *current;

const struct wap_cancel *wap_cancel_enter(const struct wap_cancel *c)
{
	const struct wap_cancel *prev = current;

	current = c;
	return prev;
}

void wap_cancel_leave(const struct wap_cancel *prev)
{
	current = prev;
}

const struct wap_cancel *wap_cancel_current(void)
{
	return current;
}
