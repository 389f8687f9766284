/* core/cancel.c - the one cancellation token.  See cancel.h. */
#include "cancel.h"

void wap_cancel_set(struct wap_cancel *c, int why)
{
	if (c)
		c->why = why ? why : 1;
}

int wap_cancel_why(const struct wap_cancel *c)
{
	if (!c)
		return 0;
	if (c->why)
		return c->why;
	return c->also && *c->also ? *c->also : 0;
}

int wap_cancel_err(struct wap_err *e)
{
	return wap_err_set(e, WAP_E_FAILED, "Operation cancelled");
}
