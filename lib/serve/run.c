/* serve/run.c - the one road from every door to the ops.  See run.h. */
#include <stdlib.h>
#include <time.h>

#include "run.h"
#include "tree.h"

double wap_run_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void audit(struct wap_run *run, const char *name, const json_t *req, double t0, int rc,
		  const struct wap_err *err)
{
	if (!run->audit)
		return;
	wap_audit_log(run->audit, name, run->call->ws ? run->call->ws->root : NULL,
		      run->call->session, wap_run_now_ms() - t0, req, rc ? err : NULL);
}

static int allow(struct wap_run *run, const char *name, const json_t *req, struct wap_err *err)
{
	if (!run->call->ws)
		return 0;
	return wap_policy_allow(run->call->ws, name, req, run->call->category, run->approver,
				run->call->cancel, err);
}

/* A's op, under the tree lock (lib/fs/tree.h) when it writes, as the
 * one table of ops says of this request (grep with write, git by its
 * action): alone when it moves, copies or removes trees or rewrites
 * files across the tree (WAP_OP_TREEWIDE: a git checkout); not at all
 * while it waits on the network first, then alone (WAP_OP_NETFIRST: a
 * git pull's fetch, then its fast-forward); not at all when it writes
 * inside the git dir alone (WAP_OP_GITDIR: a fetch, a push). */
static int op(const struct wap_applet *a, struct wap_call *call, const json_t *req, json_t **res,
	      struct wap_err *err)
{
	/* (a read-only applet, read and the like, is not looked up) */
	unsigned f = (a->flags & WAP_APPLET_READONLY) ? 0 : wap_op_flags(a->name, req);
	/* alone: a tree op, or a git checkout (its check for local changes
	 * and its writes against an edit's read and rename: both said they
	 * succeeded, and one's change was lost) */
	bool alone = (a->flags & WAP_APPLET_TREE) || ((f & WAP_OP_TREEWIDE) && !(f & WAP_OP_NETFIRST));
	bool lock = call->ws && (alone || ((f & WAP_OP_WRITES) && !(f & WAP_OP_GITDIR)));
	const struct wap_cancel *prev;
	int rc;

	if (lock && wap_tree_lock(alone, call->cancel, err))
		return -1;
	/* the waits that are handed no token poll the call's (lib/core/cancel.h) */
	prev = wap_cancel_enter(call->cancel);
	rc = a->op(call, req, res, err) ? -1 : 0;
	wap_cancel_leave(prev);
	if (lock)
		wap_tree_unlock();
	return rc;
}

/* The time limit of a call of an op that works on files alone
 * (WAP_OP_TIMED), in seconds: the environment's WAP_CALL_TIME_MAX (the
 * invoker's; 0: none), else CALL_TIME_S.  grep's bound of 20 s is a
 * file's, a glob's match limit a path's: many bait files added up (files
 * x 20 s), so the call has one of its own too. */
#define CALL_TIME_S 60

static long call_time_ms(void)
{
	static long ms = -1;
	long v = __atomic_load_n(&ms, __ATOMIC_RELAXED);

	if (v < 0) {
		const char *e = getenv("WAP_CALL_TIME_MAX");
		char *end;
		double s = e && *e ? strtod(e, &end) : CALL_TIME_S;

		if (e && *e && (*end || s < 0 || s > 1e7))
			s = CALL_TIME_S;
		v = (long)(s * 1000);
		__atomic_store_n(&ms, v, __ATOMIC_RELAXED);
	}
	return v;
}

/* The answer to a call stopped by its deadline: the code of grep's own
 * time bound, naming the call's. */
static int late_err(const char *applet, struct wap_err *err)
{
	long ms = call_time_ms();

	return wap_err_set(err, WAP_E_TOO_LARGE,
			   "%s stopped: the call's time limit hit (%g s, WAP_CALL_TIME_MAX); "
			   "narrow the call", applet, ms / 1000.0);
}

long wap_run_arm(struct wap_call *call, const char *name)
{
	const struct wap_opdesc *d = wap_op_find(name);
	long prev = call->cancel ? call->cancel->deadline : 0;

	/* a call inside a call keeps the outer one's */
	if (call->cancel && !prev && d && (d->flags & WAP_OP_TIMED) && call_time_ms() > 0)
		call->cancel->deadline = wap_cancel_ms() + call_time_ms();
	return prev;
}

int wap_run_disarm(struct wap_call *call, const char *name, long prev, int rc,
		   struct wap_err *err)
{
	if (!call->cancel)
		return rc;
	if (rc && call->cancel->why == WAP_CANCEL_LATE) {
		wap_err_release(err);
		rc = late_err(name, err);
	}
	/* the door's token outlives the call: the deadline was this call's */
	if (!prev && call->cancel->why == WAP_CANCEL_LATE)
		call->cancel->why = 0;
	call->cancel->deadline = prev;
	return rc;
}

int wap_run_op(struct wap_run *run, const char *applet, const json_t *req, json_t **res,
	       struct wap_err *err)
{
	const struct wap_applet *a = wap_applet_find(applet);
	struct wap_call *call = run->call;
	struct wap_cancel own = WAP_CANCEL_INIT;
	double t0 = run->audit ? wap_run_now_ms() : 0;	/* (only the log times calls) */
	long deadline;
	int rc;

	*res = NULL;
	if (!a || (a->flags & WAP_APPLET_NOTOOL) || !a->op)
		return wap_err_set(err, WAP_E_DISABLED, "%s is not available in this build", applet);
	/* the call's token: the door's, or one made here */
	if (!call->cancel)
		call->cancel = &own;
	deadline = wap_run_arm(call, a->name);
	rc = wap_args_check(a, req, err);
	if (!rc)
		rc = allow(run, applet, req, err);
	if (!rc)
		rc = op(a, call, req, res, err);
	/* a cancelled call fails the one way, whatever the op made of it (a
	 * search's stop, exec's "cancelled" result, a killed git); an op
	 * that finished first keeps its result */
	if (wap_cancel_is_set(call->cancel) &&
	    (rc || json_is_true(json_object_get(*res, "cancelled"))))
		rc = wap_cancel_err(err);
	rc = wap_run_disarm(call, applet, deadline, rc, err);
	if (call->cancel == &own)
		call->cancel = NULL;
	if (rc && *res) {
		json_decref(*res);
		*res = NULL;
	}
	if (!rc && !*res)
		rc = wap_err_set(err, WAP_E_FAILED, "%s returned no result", applet);
	if (!call->not_quick)	/* (it runs again, and is logged then) */
		audit(run, applet, req, t0, rc, err);
	return rc == WAP_POLICY_UNAPPROVED ? rc : rc ? -1 : 0;
}

int wap_run_begin(struct wap_run *run, const char *name, const json_t *req, double *t0,
		  struct wap_err *err)
{
	int rc;

	*t0 = wap_run_now_ms();
	rc = allow(run, name, req, err);
	if (rc)
		audit(run, name, req, *t0, rc, err);
	return rc == WAP_POLICY_UNAPPROVED ? rc : rc ? -1 : 0;
}

int wap_run_feature(struct wap_run *run, const char *name, const json_t *req, struct wap_err *err)
{
	const char *cat = run->call->category ? run->call->category : wap_op_category(name, req);
	double t0 = wap_run_now_ms();

	if (!run->call->ws || !wap_policy_feature(run->call->ws, cat, name, err))
		return 0;
	audit(run, name, req, t0, -1, err);
	return -1;
}

void wap_run_done(struct wap_run *run, const char *name, const json_t *req, double t0, int rc,
		  const struct wap_err *err)
{
	audit(run, name, req, t0, rc, err);
}
