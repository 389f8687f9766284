/* serve/run.h - the one road: every door (the CLI, MCP over stdio and HTTP, the
 * Agent Client Protocol, the Agent Control Protocol over WebSocket) parses
 * its frame, maps its names and argument spellings onto an applet's op,
 * and runs it here.  Nothing else runs an op.
 *
 * wap_run_op() makes, in this order and for every door alike: the
 * applet's argument check (its option table), the policy of the one table
 * of ops (wap_policy_allow: read-only mode, requireApproval with the
 * door's approver), the op itself with the call's cancellation token
 * (lib/core/cancel.h; a cancelled call fails with wap_cancel_err() for
 * every op alike) and the workspace's limits, and one audit line.  What the door then does
 * with the result object is only its shape.
 *
 * A call that is no one-shot op (a terminal session, a file watcher, a
 * door's own state) keeps its code but goes through the same gate:
 * wap_run_begin() (the policy of its name in the table) and
 * wap_run_done() (its audit line).
 */
#ifndef WAP_RUN_H
#define WAP_RUN_H

#include <jansson.h>

#include "applet.h"
#include "audit.h"
#include "err.h"
#include "policy.h"

/* The context of a run: the call (workspace, session, cancellation), the
 * door's audit log and its approver. */
struct wap_run {
	struct wap_call *call;
	struct wap_audit *audit;		/* may be NULL: no audit */
	const struct wap_approver *approver;	/* requireApproval; may be NULL */
};

/* Run one applet op by name with REQ: the applet must exist, REQ is
 * checked against its option table and the policy, the run is audited.
 * Returns 0 with *RES (a new reference), or with ERR -1, or
 * WAP_POLICY_UNAPPROVED when requireApproval refused it (the Agent
 * Control Protocol answers that with its own code). */
int wap_run_op(struct wap_run *run, const char *applet, const json_t *req, json_t **res,
	       struct wap_err *err);

/* The call's time limit, as wap_run_op gives it, for a door that runs
 * an op its own way (the CLI's grep and glob, printing as they go): give
 * CALL's token (if any) the deadline of op NAME (WAP_OP_TIMED:
 * WAP_CALL_TIME_MAX from now) unless it has one; returns the one it had,
 * for wap_run_disarm, which after the op puts it back and, when the
 * deadline stopped the op (RC non-zero), makes ERR the limit's answer
 * (SIZE_LIMIT_EXCEEDED naming it).  Returns RC or that. */
long wap_run_arm(struct wap_call *call, const char *name);
int wap_run_disarm(struct wap_call *call, const char *name, long prev, int rc,
		   struct wap_err *err);

/* The gate of a call that is no applet op, named NAME in the table of
 * lib/serve/policy.c: 0 (and *T0 set) when it may run, else as wap_run_op;
 * a refusal is audited here.  After the call, wap_run_done() writes its
 * audit line (RC < 0: ERR says why). */
int wap_run_begin(struct wap_run *run, const char *name, const json_t *req, double *t0,
		  struct wap_err *err);
void wap_run_done(struct wap_run *run, const char *name, const json_t *req, double t0, int rc,
		  const struct wap_err *err);

/* The first gate of a door's method NAME that may run ops of its own
 * (they pass the road's gate each): is its category turned on
 * (wap_policy_feature)?  0 yes; -1 no, audited here, ERR says why. */
int wap_run_feature(struct wap_run *run, const char *name, const json_t *req, struct wap_err *err);

/* A monotonic clock in milliseconds, for durations. */
double wap_run_now_ms(void);

#endif
