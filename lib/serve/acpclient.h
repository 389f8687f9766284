/* serve/acpclient.h - the Agent Client Protocol's client side: run an ACP
 * agent headless (the editor's part, without an editor).
 *
 * wap_acpc_run() starts the agent (argv, in the caller's directory) as a
 * child through lib/proc (its own session and PID namespace: its whole tree
 * goes when it is killed, nothing is orphaned), speaks JSON-RPC to it over
 * its stdin and stdout (one
 * message a line; its stderr is handed to LOG), and makes one prompt turn:
 * initialize (advertising exactly the fs/terminal capabilities the
 * workspace's policy allows), session/new (cwd the root, the MCP servers
 * given), session/prompt.  The agent's own requests are answered by the
 * `acp` profile of wap serve (wap_mcp_handle: fs/read_text_file,
 * fs/write_text_file, terminal/...), so they take the one road (policy,
 * sandbox, audit) like every other door; session/request_permission is
 * answered by the APPROVE policy and audited.  Every session/update is
 * handed to EVENT as {"event":"update","sessionId","update"}, every
 * permission decision as {"event":"permission","toolCall","outcome",
 * "optionId"?}.
 *
 * Stopping: when *STOP becomes a signal number (the caller's SIGINT or
 * SIGTERM handler), or the wall-clock TIMEOUT_MS passes, session/cancel is
 * sent; if the turn has not ended GRACE_MS later, the agent's tree gets
 * SIGTERM, and SIGKILL after another GRACE_MS.  After the turn the agent's
 * stdin is closed; an agent still running GRACE_MS later is killed the
 * same way.
 *
 * The transcript (TRANSCRIPT, may be NULL) gets a header line
 * {"wapAcpTranscript":1,"root","approve","agent"} and then every message
 * both ways as {"ms","from":"client"|"agent","msg"}.  wap_acpc_replay()
 * reads one and answers the agent's requests again in order, comparing
 * each answer with the one recorded.
 *
 * At most 256 of the agent's requests are queued or running; past that its
 * output is not read until one is answered.  Messages to it are written
 * whole, one at a time; a write waits for room, except once a stop began
 * (an agent that never reads cannot hold wap past the grace period).
 *
 * lib/: nothing here prints or exits.  The caller ignores SIGPIPE (main.c
 * does), so a write to an agent that died is an error, not a death.
 */
#ifndef WAP_ACPCLIENT_H
#define WAP_ACPCLIENT_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "audit.h"
#include "err.h"
#include "policy.h"
#include "ws.h"

#define WAP_ACP_PROTOCOL_VERSION 1

enum wap_acpc_approve {
	WAP_ACPC_NEVER,		/* reject every permission request */
	WAP_ACPC_READS,		/* allow tool calls of kind read, search, think */
	WAP_ACPC_ALL,		/* allow every one */
	WAP_ACPC_ASK,		/* ask the ASK callback (a person at a TTY) */
};

struct wap_acpc_opts {
	char *const *argv;		/* the agent and its arguments */
	struct wap_ws *ws;		/* the workspace (borrowed) */
	struct wap_audit *audit;	/* may be NULL */
	struct wap_approver approver;	/* security.requireApproval */
	enum wap_acpc_approve approve;
	/* ASK: PARAMS is the request_permission params; return the index of
	 * the option chosen in params.options, or -1 to reject. */
	int (*ask)(void *arg, const json_t *params);
	const char *prompt;		/* the prompt's text */
	json_t *mcp_servers;		/* session/new mcpServers (borrowed); NULL: [] */
	FILE *transcript;		/* may be NULL */
	long timeout_ms;		/* wall clock; <= 0: none */
	long grace_ms;			/* <= 0: 5000 */
	volatile sig_atomic_t *stop;	/* set to a signal number to cancel; may be NULL */
	void (*event)(void *arg, const json_t *ev);	/* may be NULL; calls are serialised */
	void (*log)(void *arg, const char *data, size_t len);	/* the agent's stderr; may be NULL */
	void *arg;
};

struct wap_acpc_result {
	char *stop_reason;	/* the turn's stopReason (malloc'd), NULL when it did not end */
	bool timed_out;		/* TIMEOUT_MS passed */
	int signal;		/* *STOP's signal, when it was set */
	bool killed;		/* the agent had to be killed */
	int agent_status;	/* the agent's exit status (128 + N: signal N) */
};

/* Run one prompt turn.  0 with R filled when the turn ended or was stopped
 * (timeout, signal: R says which); -1 with err (EXECUTION_FAILED) when the
 * agent could not start, broke the protocol, answered an error, or exited
 * before the turn ended.  R->stop_reason is freed with wap_acpc_result_release. */
int wap_acpc_run(const struct wap_acpc_opts *o, struct wap_acpc_result *r, struct wap_err *err);
void wap_acpc_result_release(struct wap_acpc_result *r);

/* The clientCapabilities the policy of WS allows (a new reference):
 * fs.readTextFile (allowFileSystemAccess), fs.writeTextFile (and not
 * read-only), terminal (allowTerminalAccess and allowCommandExecution). */
json_t *wap_acpc_capabilities(const struct wap_ws *ws);

/* "never", "reads", "all", "ask"; -1 for anything else. */
int wap_acpc_approve_parse(const char *s);
const char *wap_acpc_approve_name(enum wap_acpc_approve a);

/* Replay transcript IN against O->ws (O->argv, prompt, timeouts unused;
 * O->approve is the transcript's unless APPROVE_SET).  Each check is handed
 * to CHECK as {"n","method","same":bool,"want","got"}: the recorded
 * clientCapabilities against today's, then every request of the agent in
 * order.  Paths under the transcript's root are moved to O->ws's.
 * *SAME and *DIFFER count them.  -1 with err when IN is no transcript. */
int wap_acpc_replay(const struct wap_acpc_opts *o, bool approve_set, FILE *in,
		    void (*check)(void *arg, const json_t *c), size_t *same, size_t *differ,
		    struct wap_err *err);

#endif
