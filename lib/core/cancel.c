/* core/cancel.c - the one cancellation token.  See cancel.h. */
#include "cancel.h"

void wap_cancel_set(struct wap_cancel *c, int why)
{
	if (c)
		c->why = why ? why : 1;
}

int wap_cancel_why(const struct wap_cancel *c)
{
	return c ? c->why : 0;
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
