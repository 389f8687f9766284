/* serve/acpclient.c - the Agent Client Protocol's client: run an agent headless.
 * See acpclient.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acpclient.h"
#include "jsonrpc.h"
#include "mcp.h"
#include "proc.h"
#include "run.h"
#include "strbuf.h"
#include "version.h"
#include "workers.h"

#define MAX_LINE (16u << 20)	/* as wap serve's --max-message default */
/* The agent's requests queued or running at most, and the bytes of their
 * messages: past either its output is not read, so an agent that floods
 * cannot grow the queue (as stdio_rpc.c holds MCP's; by count alone, 256
 * requests of 16 MiB each were 4 GiB) */
#define MAX_PENDING 256
#define MAX_PENDING_BYTES (MAX_LINE + (8u << 20))

struct client {
	const struct wap_acpc_opts *o;
	struct wap_mcp_server srv;	/* the acp profile answers fs/ and terminal/ */
	struct wap_mcp_session *sess;
	struct wap_workers *workers;
	pthread_mutex_t wmu;		/* writing to the agent: one message at a time */
	pthread_mutex_t mu;		/* everything below, the transcript */
	pthread_cond_t cv;
	int in_fd;			/* the agent's stdin (our end); -1 closed */
	bool agent_done;		/* wap_proc_run returned */
	bool proc_failed;		/* ... without running it */
	struct wap_err proc_err;
	int agent_status;
	char *fail;			/* a protocol error, malloc'd */
	long long want_id;		/* the request we wait for */
	json_t *resp;			/* its response */
	bool cancel_sent;		/* session/cancel sent: permissions are cancelled */
	bool closing;			/* the agent is gone: queued requests are dropped */
	bool eof;			/* its input is being closed */
	int pending;			/* requests queued or running */
	size_t pending_bytes;		/* ... the bytes of their messages */
	double give_up_at;		/* stopping: writes to an agent that does
					 * not read give up then (0: never) */
	struct wap_cancel kill;		/* to wap_proc_run: kill the tree */
	struct wap_sb line;		/* what the agent wrote that is not yet a whole line */
	double t0;
};

static void set_fail(struct client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_fail(struct client *c, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	pthread_mutex_lock(&c->mu);
	if (!c->fail)
		c->fail = s;
	else
		free(s);
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

const char *wap_acpc_approve_name(enum wap_acpc_approve a)
{
	static const char *const names[] = { "never", "reads", "all", "ask" };

	return a <= WAP_ACPC_ASK ? names[a] : "never";
}

int wap_acpc_approve_parse(const char *s)
{
	for (int a = WAP_ACPC_NEVER; s && a <= WAP_ACPC_ASK; a++)
		if (!strcmp(s, wap_acpc_approve_name(a)))
			return a;
	return -1;
}

json_t *wap_acpc_capabilities(const struct wap_ws *ws)
{
	return json_pack("{s:{s:b, s:b}, s:b}", "fs",
			 "readTextFile", ws->pol.allow_fs,
			 "writeTextFile", ws->pol.allow_fs && !ws->pol.read_only,
			 "terminal", ws->pol.allow_terminal && ws->pol.allow_exec);
}

/* ---- the transcript and events ---- */

static void record(struct client *c, const char *from, const json_t *msg)
{
	json_t *e;
	char *s;

	if (!c->o->transcript)
		return;
	e = json_pack("{s:i, s:s, s:O}", "ms", (json_int_t)(wap_run_now_ms() - c->t0), "from", from,
		      "msg", msg);
	s = e ? json_dumps(e, JSON_COMPACT) : NULL;
	if (s) {
		pthread_mutex_lock(&c->mu);
		fprintf(c->o->transcript, "%s\n", s);
		fflush(c->o->transcript);
		pthread_mutex_unlock(&c->mu);
	}
	free(s);
	json_decref(e);
}

static pthread_mutex_t event_mu = PTHREAD_MUTEX_INITIALIZER;

static void event(struct client *c, json_t *ev /* stolen */)
{
	if (ev && c->o->event) {
		pthread_mutex_lock(&event_mu);
		c->o->event(c->o->arg, ev);
		pthread_mutex_unlock(&event_mu);
	}
	json_decref(ev);
}

/* ---- to the agent ---- */

static void send_msg(struct client *c, const json_t *msg)
{
	size_t len, off = 0;
	char *s = wap_rpc_dump(msg, &len);

	if (!s)
		return;
	/* one message at a time, whole, in the order the transcript has */
	pthread_mutex_lock(&c->wmu);
	record(c, "client", msg);
	while (off <= len) {
		ssize_t n;
		bool give_up;
		int fd;

		pthread_mutex_lock(&c->mu);
		fd = c->in_fd;
		/* a write that would block waits, but never for an agent
		 * that is gone, being killed or done with */
		give_up = c->agent_done || wap_cancel_is_set(&c->kill) || c->closing || c->eof ||
			  (c->give_up_at && wap_run_now_ms() >= c->give_up_at);
		pthread_mutex_unlock(&c->mu);
		if (fd < 0)
			break;
		n = off < len ? write(fd, s + off, len - off) : write(fd, "\n", 1);
		if (n > 0) {
			off += n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && !give_up) {
			struct pollfd p = { fd, POLLOUT, 0 };
			poll(&p, 1, 100);
			continue;
		}
		break;	/* EPIPE: the agent went away */
	}
	pthread_mutex_unlock(&c->wmu);
	free(s);
}

/* End of the agent's input: writers give up, then the pipe is closed. */
static void close_input(struct client *c)
{
	pthread_mutex_lock(&c->mu);
	c->eof = true;
	pthread_mutex_unlock(&c->mu);
	pthread_mutex_lock(&c->wmu);
	pthread_mutex_lock(&c->mu);
	if (c->in_fd >= 0)
		close(c->in_fd);
	c->in_fd = -1;
	pthread_mutex_unlock(&c->mu);
	pthread_mutex_unlock(&c->wmu);
}

/* ---- the agent's requests ---- */

static bool kind_reads(const char *kind)
{
	return kind && (!strcmp(kind, "read") || !strcmp(kind, "search") || !strcmp(kind, "think"));
}

/* The option of kind K1, else of kind K2; -1 when there is none. */
static int pick(const json_t *options, const char *k1, const char *k2)
{
	const char *ks[2] = { k1, k2 };
	json_t *opt;
	size_t i;

	for (int k = 0; k < 2; k++)
		json_array_foreach(options, i, opt)
			if (json_is_string(json_object_get(opt, "optionId")) &&
			    !strcmp(json_string_value(json_object_get(opt, "kind")) ?
				    json_string_value(json_object_get(opt, "kind")) : "", ks[k]))
				return (int)i;
	return -1;
}

/* session/request_permission, by the --approve policy; audited as an op
 * of its own (lib/serve/policy.c), never with the tool call's contents */
static json_t *permission(struct client *c, const struct wap_rpc_msg *m)
{
	const json_t *tc = json_object_get(m->params, "toolCall");
	const json_t *options = json_object_get(m->params, "options");
	const char *kind = json_string_value(json_object_get(tc, "kind"));
	const char *title = json_string_value(json_object_get(tc, "title"));
	const char *path = json_string_value(json_object_get(json_array_get(json_object_get(tc, "locations"), 0), "path"));
	struct wap_call call = { .ws = c->o->ws, .session = c->sess ? wap_mcp_session_id(c->sess) : NULL };
	struct wap_run run = { &call, c->o->audit, &c->o->approver };
	struct wap_err err = { 0 };
	json_t *req, *outcome, *ev;
	const char *okind;
	bool cancelled;
	double t0;
	int ix = -1;

	if (!json_is_object(m->params) || !json_is_array(options))
		return wap_rpc_error(m->id, WAP_RPC_INVALID_PARAMS,
				     "Invalid params: session/request_permission needs \"toolCall\" and \"options\"", NULL);
	pthread_mutex_lock(&c->mu);
	cancelled = c->cancel_sent;
	pthread_mutex_unlock(&c->mu);
	if (!cancelled) {
		switch (c->o->approve) {
		case WAP_ACPC_ALL:
			ix = pick(options, "allow_once", "allow_always");
			break;
		case WAP_ACPC_READS:
			ix = kind_reads(kind) ? pick(options, "allow_once", "allow_always") : -1;
			break;
		case WAP_ACPC_ASK:
			pthread_mutex_lock(&event_mu);	/* one question at a time */
			ix = c->o->ask ? c->o->ask(c->o->arg, m->params) : -1;
			pthread_mutex_unlock(&event_mu);
			if (ix >= (int)json_array_size(options))
				ix = -1;
			break;
		case WAP_ACPC_NEVER:
			break;
		}
		if (ix < 0)
			ix = pick(options, "reject_once", "reject_always");
	}
	okind = ix >= 0 ? json_string_value(json_object_get(json_array_get(options, ix), "kind")) : "cancelled";
	if (!okind)
		okind = "cancelled";
	req = json_pack("{s:s?, s:s?, s:s?, s:s, s:s}", "name", title, "type", kind, "path", path,
			"action", okind, "mode", wap_acpc_approve_name(c->o->approve));
	if (!wap_run_begin(&run, "session/request_permission", req, &t0, &err))
		wap_run_done(&run, "session/request_permission", req, t0, 0, NULL);
	json_decref(req);
	wap_err_release(&err);
	if (ix >= 0)
		outcome = json_pack("{s:s, s:O}", "outcome", "selected", "optionId",
				    json_object_get(json_array_get(options, ix), "optionId"));
	else
		outcome = json_pack("{s:s}", "outcome", "cancelled");
	ev = json_pack("{s:s, s:O?, s:s, s:O?}", "event", "permission", "toolCall", tc, "outcome", okind,
		       "optionId", json_object_get(outcome, "optionId"));
	event(c, ev);
	return wap_rpc_result(m->id, json_pack("{s:o}", "outcome", outcome));
}

/* The answer to one request of the agent: the one function the run and
 * the replay share. */
static json_t *answer(struct client *c, const struct wap_rpc_msg *m)
{
	json_t *r;

	if (!strcmp(m->method, "session/request_permission"))
		return permission(c, m);
	/* fs/ and terminal/: the acp profile's own handlers (the one road) */
	r = wap_mcp_handle(c->sess, m, NULL, NULL);
	if (!r)	/* cancelled: the session is ending */
		r = wap_rpc_error(m->id, -32800, "Request cancelled: the client is stopping", NULL);
	return r;
}

struct job {
	struct client *c;
	json_t *msg;
	size_t len;			/* its message's bytes */
};

static void run_job(void *arg)
{
	struct job *j = arg;
	struct wap_rpc_msg m;
	json_t *reply;
	bool closing;

	pthread_mutex_lock(&j->c->mu);
	closing = j->c->closing;
	pthread_mutex_unlock(&j->c->mu);
	/* a request still queued when the agent is gone is not run: a
	 * terminal/wait_for_exit would wait for a command no one waits for */
	if (!closing && wap_rpc_check(j->msg, &m, NULL) == WAP_RPC_REQUEST) {
		reply = answer(j->c, &m);
		send_msg(j->c, reply);
		json_decref(reply);
	}
	pthread_mutex_lock(&j->c->mu);
	j->c->pending--;
	j->c->pending_bytes -= j->len;
	pthread_cond_broadcast(&j->c->cv);
	pthread_mutex_unlock(&j->c->mu);
	json_decref(j->msg);
	free(j);
}

/* ---- from the agent ---- */

static void handle_line(struct client *c, const char *line, size_t len)
{
	struct wap_rpc_limits lim = { .max_message = MAX_LINE, .no_batches = true };
	json_t *v, *reply = NULL;
	struct wap_rpc_msg m;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (!len)
		return;
	v = wap_rpc_parse(line, len, &lim, &reply);
	if (!v || !json_is_object(v) || wap_rpc_check(v, &m, NULL) == WAP_RPC_INVALID) {
		set_fail(c, "the agent wrote what is not a JSON-RPC message: %.80s%s", line,
			 len > 80 ? "..." : "");
		json_decref(v);
		json_decref(reply);
		return;
	}
	record(c, "agent", v);
	switch (m.kind) {
	case WAP_RPC_RESPONSE:
		pthread_mutex_lock(&c->mu);
		if (json_is_integer(m.id) && json_integer_value(m.id) == c->want_id && !c->resp)
			c->resp = json_incref(v);
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		break;
	case WAP_RPC_NOTIFICATION:
		if (!strcmp(m.method, "session/update") && json_is_object(m.params))
			event(c, json_pack("{s:s, s:O?, s:O?}", "event", "update",
					   "sessionId", json_object_get(m.params, "sessionId"),
					   "update", json_object_get(m.params, "update")));
		break;
	case WAP_RPC_REQUEST: {
		/* on a worker: terminal/wait_for_exit blocks, and the
		 * agent's stdout must keep being read */
		struct job *j = malloc(sizeof(*j));
		bool room;

		pthread_mutex_lock(&c->mu);
		while ((c->pending >= MAX_PENDING ||
			(c->pending && c->pending_bytes + len > MAX_PENDING_BYTES)) &&
		       !wap_cancel_is_set(&c->kill))
			pthread_cond_wait(&c->cv, &c->mu);
		room = !wap_cancel_is_set(&c->kill);	/* being killed: no more work for it */
		if (room) {
			c->pending++;
			c->pending_bytes += len;
		}
		pthread_mutex_unlock(&c->mu);
		if (!room) {
			free(j);
			break;
		}
		if (j) {
			j->c = c;
			j->len = len;
			j->msg = json_incref(v);
			if (!wap_workers_submit(c->workers, run_job, j))
				break;
			json_decref(j->msg);
			free(j);
		}
		pthread_mutex_lock(&c->mu);
		c->pending--;
		c->pending_bytes -= len;
		pthread_mutex_unlock(&c->mu);
		reply = wap_rpc_error(m.id, WAP_RPC_INTERNAL, "Internal error: out of memory", NULL);
		send_msg(c, reply);
		json_decref(reply);
		break;
	}
	default:
		break;
	}
	json_decref(v);
}

static void on_output(void *arg, const char *stream, const char *data, size_t len)
{
	struct client *c = arg;
	const char *nl;

	if (strcmp(stream, "stdout")) {
		if (c->o->log)
			c->o->log(c->o->arg, data, len);
		return;
	}
	while (len && (nl = memchr(data, '\n', len))) {
		size_t n = nl - data;
		if (c->line.len) {
			wap_sb_add(&c->line, data, n);
			if (c->line.buf)
				handle_line(c, c->line.buf, c->line.len);
			c->line.len = 0;
		} else {
			handle_line(c, data, n);
		}
		data += n + 1;
		len -= n + 1;
	}
	if (len) {
		if (c->line.len + len > MAX_LINE)
			set_fail(c, "the agent wrote a line over %u bytes", MAX_LINE);
		else
			wap_sb_add(&c->line, data, len);
	}
}

/* ---- the agent's process ---- */

struct agent {
	struct client *c;
	int stdin_fd;
	pthread_t th;
};

static void *agent_thread(void *arg)
{
	struct agent *a = arg;
	struct client *c = a->c;
	const struct wap_acpc_opts *o = c->o;
	long grace = o->grace_ms > 0 ? o->grace_ms : 5000;
	struct wap_proc_opts po = {
		/* in the invoker's directory, so AGENT ARGS mean what they
		 * say there; the session's cwd (session/new) is the root */
		.argv = o->argv, .cwdfd = -1, .stdin_fd = a->stdin_fd,
		.kill_after_ms = grace, .max_output = 65536, .save_fd = { -1, -1 },
		.cancel = &c->kill, .output = on_output, .output_arg = c,
		/* a backstop only: the wall clock is kept by the caller,
		 * which cancels the turn first */
		.timeout_ms = o->timeout_ms > 0 ? o->timeout_ms + 3 * grace + 5000 : 0,
	};
	struct wap_proc_result res;
	struct wap_err err = { 0 };
	int rc = wap_proc_run(&po, &res, &err);

	if (c->line.len)	/* a last line without its newline */
		handle_line(c, c->line.buf, c->line.len);
	pthread_mutex_lock(&c->mu);
	c->agent_done = true;
	if (rc) {
		c->proc_failed = true;
		c->proc_err = err;
	} else {
		c->agent_status = res.exit_code;
		wap_proc_result_release(&res);
	}
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* ---- the turn ---- */

enum wait_end { W_RESPONSE, W_GONE, W_FAILED, W_STOPPED };

/* Wait for the response to request ID.  A stop (signal, wall clock) sends
 * session/cancel once (when there is a session) and keeps waiting; GRACE
 * after it, or at once without a session, the agent's tree is killed. */
static enum wait_end wait_for(struct client *c, long long id, const json_t *sid, double deadline,
			      struct wap_acpc_result *r, double *stop_at)
{
	long grace = c->o->grace_ms > 0 ? c->o->grace_ms : 5000;
	enum wait_end end;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		struct timespec ts;
		double now;

		if (c->resp) {
			end = W_RESPONSE;
			break;
		}
		if (c->fail) {
			end = W_FAILED;
			break;
		}
		if (c->agent_done) {
			end = *stop_at ? W_STOPPED : W_GONE;
			break;
		}
		now = wap_run_now_ms();
		if (!*stop_at && ((c->o->stop && *c->o->stop) || (deadline && now >= deadline))) {
			*stop_at = now;
			c->give_up_at = now + grace;
			if (c->o->stop && *c->o->stop)
				r->signal = *c->o->stop;
			else
				r->timed_out = true;
			if (sid) {
				json_t *n = wap_rpc_notification("session/cancel", json_pack("{s:O}", "sessionId", sid));
				c->cancel_sent = true;
				pthread_mutex_unlock(&c->mu);
				send_msg(c, n);
				json_decref(n);
				pthread_mutex_lock(&c->mu);
				continue;
			}
		}
		if (*stop_at && !wap_cancel_is_set(&c->kill) && (!sid || now - *stop_at >= grace)) {
			wap_cancel_set(&c->kill, SIGTERM);	/* its whole tree: lib/proc */
			pthread_cond_broadcast(&c->cv);
			r->killed = true;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&c->cv, &c->mu, &ts);
	}
	pthread_mutex_unlock(&c->mu);
	(void)id;
	return end;
}

/* Send request METHOD and wait for its result: 0 with *RESULT (a new
 * reference); 1 when stopped; -1 with err. */
static int request(struct client *c, long long id, const char *method, json_t *params /* stolen */,
		   const json_t *sid, double deadline, struct wap_acpc_result *r, double *stop_at,
		   json_t **result, struct wap_err *err)
{
	json_t *jid = json_integer(id), *msg, *resp;
	enum wait_end end;
	int rc = -1;

	*result = NULL;
	pthread_mutex_lock(&c->mu);
	c->want_id = id;
	json_decref(c->resp);
	c->resp = NULL;
	pthread_mutex_unlock(&c->mu);
	msg = wap_rpc_request(jid, method, params);
	json_decref(jid);
	send_msg(c, msg);
	json_decref(msg);
	end = wait_for(c, id, sid, deadline, r, stop_at);
	pthread_mutex_lock(&c->mu);
	resp = c->resp;
	c->resp = NULL;
	switch (end) {
	case W_RESPONSE: {
		json_t *e = json_object_get(resp, "error");
		if (e) {
			const char *em = json_string_value(json_object_get(e, "message"));
			json_t *data = json_object_get(e, "data");
			char *ds = data ? json_dumps(data, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
			wap_err_set(err, WAP_E_FAILED, "the agent answered %s with error %lld: %s%s%.200s",
				    method, (long long)json_integer_value(json_object_get(e, "code")),
				    em ? em : "(no message)", ds ? " " : "", ds ? ds : "");
			free(ds);
		} else if (!json_is_object(json_object_get(resp, "result"))) {
			wap_err_set(err, WAP_E_FAILED, "the agent answered %s without a result object", method);
		} else {
			*result = json_incref(json_object_get(resp, "result"));
			rc = 0;
		}
		break;
	}
	case W_FAILED:
		wap_err_set(err, WAP_E_FAILED, "%s", c->fail);
		break;
	case W_STOPPED:
		rc = 1;
		break;
	case W_GONE:
		if (c->proc_failed)
			wap_err_set(err, c->proc_err.kind, "cannot start the agent: %s", c->proc_err.msg);
		else
			wap_err_set(err, WAP_E_FAILED, "the agent exited (status %d) before answering %s",
				    c->agent_status, method);
		break;
	}
	pthread_mutex_unlock(&c->mu);
	json_decref(resp);
	return rc;
}

static int client_init(struct client *c, const struct wap_acpc_opts *o, struct wap_err *err)
{
	memset(c, 0, sizeof(*c));
	c->o = o;
	c->in_fd = -1;
	c->t0 = wap_run_now_ms();
	c->srv.ws = o->ws;
	c->srv.profile = wap_profile_find("acp");
	c->srv.audit = o->audit;
	c->srv.approver = o->approver;
	c->srv.transport = "stdio";
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->wmu, NULL);
	pthread_cond_init(&c->cv, NULL);
	if (!c->srv.profile)
		return wap_err_set(err, WAP_E_FAILED, "the acp profile is missing from this build");
	c->sess = wap_mcp_session_new(&c->srv, "acp-client");
	if (!c->sess)
		return wap_err_oom(err);
	return 0;
}

static void client_release(struct client *c)
{
	if (c->sess) {
		wap_mcp_session_cancel_all(c->sess);
		wap_mcp_session_unref(c->sess);	/* kills its terminals */
	}
	json_decref(c->resp);
	free(c->fail);
	wap_err_release(&c->proc_err);
	wap_sb_release(&c->line);
	pthread_mutex_destroy(&c->mu);
	pthread_mutex_destroy(&c->wmu);
	pthread_cond_destroy(&c->cv);
}

static void header(struct client *c)
{
	json_t *h, *agent;
	char *s;

	if (!c->o->transcript)
		return;
	agent = json_array();
	for (size_t i = 0; c->o->argv && c->o->argv[i]; i++)
		json_array_append_new(agent, json_string(c->o->argv[i]));
	h = json_pack("{s:i, s:s, s:s, s:s, s:o}", "wapAcpTranscript", 1, "wap", WAP_VERSION,
		      "root", c->o->ws->root, "approve", wap_acpc_approve_name(c->o->approve),
		      "agent", agent);
	s = h ? json_dumps(h, JSON_COMPACT) : NULL;
	if (s)
		fprintf(c->o->transcript, "%s\n", s);
	free(s);
	json_decref(h);
}

int wap_acpc_run(const struct wap_acpc_opts *o, struct wap_acpc_result *r, struct wap_err *err)
{
	struct client c;
	struct agent a = { &c, -1, 0 };
	json_t *res = NULL, *sid = NULL;
	double deadline = 0, stop_at = 0;
	long grace = o->grace_ms > 0 ? o->grace_ms : 5000;
	int p[2] = { -1, -1 }, rc = -1;
	bool started = false;

	memset(r, 0, sizeof(*r));
	if (!o->argv || !o->argv[0])
		return wap_err_set(err, WAP_E_INVALID, "no agent given (wap acp run ... -- AGENT ARGS)");
	if (client_init(&c, o, err))
		goto out;
	if (!(c.workers = wap_workers_new(4))) {
		wap_err_oom(err);
		goto out;
	}
	if (pipe2(p, O_CLOEXEC)) {
		wap_err_set(err, WAP_E_FAILED, "cannot make a pipe: %s", strerror(errno));
		goto out;
	}
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	c.in_fd = p[1];
	a.stdin_fd = p[0];
	header(&c);
	if (pthread_create(&a.th, NULL, agent_thread, &a)) {
		wap_err_set(err, WAP_E_FAILED, "cannot start a thread");
		goto out;
	}
	started = true;
	if (o->timeout_ms > 0)
		deadline = wap_run_now_ms() + o->timeout_ms;

	rc = request(&c, 0, "initialize", json_pack("{s:i, s:o, s:{s:s, s:s, s:s}}",
		     "protocolVersion", WAP_ACP_PROTOCOL_VERSION,
		     "clientCapabilities", wap_acpc_capabilities(o->ws),
		     "clientInfo", "name", "wap", "title", "wap acp run", "version", WAP_VERSION),
		     NULL, deadline, r, &stop_at, &res, err);
	if (rc)
		goto turn_over;
	json_decref(res);
	rc = request(&c, 1, "session/new", json_pack("{s:s, s:o}", "cwd", o->ws->root, "mcpServers",
		     o->mcp_servers ? json_incref(o->mcp_servers) : json_array()),
		     NULL, deadline, r, &stop_at, &res, err);
	if (rc)
		goto turn_over;
	sid = json_incref(json_object_get(res, "sessionId"));
	json_decref(res);
	if (!json_is_string(sid)) {
		rc = wap_err_set(err, WAP_E_FAILED, "the agent answered session/new without a sessionId");
		goto turn_over;
	}
	rc = request(&c, 2, "session/prompt", json_pack("{s:O, s:[{s:s, s:s}]}", "sessionId", sid,
		     "prompt", "type", "text", "text", o->prompt ? o->prompt : ""),
		     sid, deadline, r, &stop_at, &res, err);
	if (!rc) {
		const char *sr = json_string_value(json_object_get(res, "stopReason"));
		if (!sr)
			rc = wap_err_set(err, WAP_E_FAILED, "the agent ended the turn without a stopReason");
		else if (!(r->stop_reason = strdup(sr)))
			rc = wap_err_oom(err);
		json_decref(res);
	}
turn_over:
	if (rc == 1)
		rc = 0;	/* stopped: R says how */
	/* the turn is over: end of input is the agent's cue to exit; one
	 * that does not within the grace period is killed with its tree */
	close_input(&c);
	pthread_mutex_lock(&c.mu);
	{
		double until = wap_run_now_ms() + grace;
		while (!c.agent_done) {
			struct timespec ts;
			if (!wap_cancel_is_set(&c.kill) && (wap_run_now_ms() >= until || (o->stop && *o->stop && !stop_at))) {
				wap_cancel_set(&c.kill, SIGTERM);
				pthread_cond_broadcast(&c.cv);
				r->killed = r->killed || !r->stop_reason;
			}
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 50 * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&c.cv, &c.mu, &ts);
		}
	}
	r->agent_status = c.agent_status;
	if (!rc && !r->stop_reason && !stop_at) {
		/* cannot happen: a turn that neither ended nor was stopped */
		rc = wap_err_set(err, WAP_E_FAILED, "the turn ended without a stop reason");
	}
	pthread_mutex_unlock(&c.mu);
out:
	if (started)
		pthread_join(a.th, NULL);
	if (c.workers) {
		pthread_mutex_lock(&c.mu);
		c.closing = true;
		pthread_mutex_unlock(&c.mu);
		if (c.sess)
			wap_mcp_session_cancel_all(c.sess);
		wap_workers_free(c.workers);
	}
	if (p[0] >= 0)
		close(p[0]);
	if (c.in_fd >= 0)
		close(c.in_fd);
	json_decref(sid);
	client_release(&c);
	return rc;
}

void wap_acpc_result_release(struct wap_acpc_result *r)
{
	free(r->stop_reason);
	r->stop_reason = NULL;
}

/* ---- replay ---- */

/* V with every string's OLD prefix (a path under the old root) moved to
 * NEW: a deep copy. */
static json_t *move_root(const json_t *v, const char *old, const char *new)
{
	size_t ol = strlen(old);

	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		struct wap_sb sb = WAP_SB_INIT;
		const char *p;
		json_t *out;

		if (!strstr(s, old))
			return json_deep_copy(v);
		while ((p = strstr(s, old))) {
			/* only whole paths: OLD followed by the end or a '/' */
			bool whole = p[ol] == 0 || p[ol] == '/' || p[ol] == ' ' || p[ol] == '"' ||
				     p[ol] == ':' || p[ol] == '\'' || p[ol] == '\n';
			wap_sb_add(&sb, s, p - s);
			wap_sb_adds(&sb, whole ? new : old);
			s = p + ol;
		}
		wap_sb_adds(&sb, s);
		out = sb.buf ? json_stringn(sb.buf, sb.len) : json_string("");
		wap_sb_release(&sb);
		return out;
	}
	if (json_is_object(v)) {
		json_t *o = json_object(), *x;
		const char *k;
		json_object_foreach((json_t *)v, k, x)
			json_object_set_new(o, k, move_root(x, old, new));
		return o;
	}
	if (json_is_array(v)) {
		json_t *a = json_array(), *x;
		size_t i;
		json_array_foreach(v, i, x)
			json_array_append_new(a, move_root(x, old, new));
		return a;
	}
	return json_deep_copy(v);
}

/* The part of a response that is the answer: {"result"} or {"error"}. */
static json_t *answer_part(const json_t *resp)
{
	json_t *e = json_object_get(resp, "error");

	return e ? json_pack("{s:O}", "error", e)
		 : json_pack("{s:O?}", "result", json_object_get(resp, "result"));
}

int wap_acpc_replay(const struct wap_acpc_opts *o, bool approve_set, FILE *in,
		    void (*check)(void *arg, const json_t *c), size_t *same, size_t *differ,
		    struct wap_err *err)
{
	struct wap_acpc_opts ro = *o;
	struct client c;
	json_t *entries = json_array(), *replies = json_object(), *e;
	const char *oldroot = NULL;
	char *line = NULL;
	size_t cap = 0, i, n = 0;
	ssize_t len;
	int rc = -1;

	*same = *differ = 0;
	ro.transcript = NULL;
	while ((len = getline(&line, &cap, in)) > 0) {
		json_error_t je;
		json_t *v = json_loadb(line, len, 0, &je);
		if (!v) {
			wap_err_set(err, WAP_E_INVALID, "not a transcript: line %zu is not JSON: %s",
				    json_array_size(entries) + 1, je.text);
			goto done;
		}
		json_array_append_new(entries, v);
	}
	e = json_array_get(entries, 0);
	if (!json_is_object(e) || !json_integer_value(json_object_get(e, "wapAcpTranscript"))) {
		wap_err_set(err, WAP_E_INVALID, "not a transcript of wap acp run (no header line)");
		goto done;
	}
	oldroot = json_string_value(json_object_get(e, "root"));
	if (!approve_set) {
		int a = wap_acpc_approve_parse(json_string_value(json_object_get(e, "approve")));
		ro.approve = a < 0 ? WAP_ACPC_NEVER : a;
	}
	/* the client's recorded answers, by the agent's request id */
	json_array_foreach(entries, i, e) {
		json_t *m = json_object_get(e, "msg");
		const char *from = json_string_value(json_object_get(e, "from"));
		char *key;
		if (!from || strcmp(from, "client") || json_object_get(m, "method") || !json_object_get(m, "id"))
			continue;
		key = json_dumps(json_object_get(m, "id"), JSON_COMPACT | JSON_ENCODE_ANY);
		if (key)
			json_object_set(replies, key, m);
		free(key);
	}
	if (client_init(&c, &ro, err)) {
		client_release(&c);
		goto done;
	}
	json_array_foreach(entries, i, e) {
		json_t *m = json_object_get(e, "msg"), *want = NULL, *got = NULL, *moved, *ck;
		const char *from = json_string_value(json_object_get(e, "from"));
		const char *method = json_string_value(json_object_get(m, "method"));
		struct wap_rpc_msg rm;
		char *key;

		if (!from || !method)
			continue;
		if (!strcmp(from, "client")) {
			if (!strcmp(method, "session/cancel"))
				c.cancel_sent = true;
			if (strcmp(method, "initialize"))
				continue;
			/* what the client advertised: what today's policy allows? */
			want = json_incref(json_object_get(json_object_get(m, "params"), "clientCapabilities"));
			got = wap_acpc_capabilities(o->ws);
		} else {
			if (!json_object_get(m, "id"))
				continue;
			key = json_dumps(json_object_get(m, "id"), JSON_COMPACT | JSON_ENCODE_ANY);
			want = key && json_object_get(replies, key) ? answer_part(json_object_get(replies, key)) : NULL;
			free(key);
			moved = oldroot ? move_root(m, oldroot, o->ws->root) : json_deep_copy(m);
			if (wap_rpc_check(moved, &rm, NULL) == WAP_RPC_REQUEST) {
				json_t *reply = answer(&c, &rm);
				json_t *back = oldroot ? move_root(reply, o->ws->root, oldroot) : json_incref(reply);
				got = answer_part(back);
				json_decref(back);
				json_decref(reply);
			}
			json_decref(moved);
			if (!want)
				want = json_null();
		}
		n++;
		ck = json_pack("{s:i, s:s, s:b, s:o, s:o}", "n", (json_int_t)n, "method", method,
			       "same", json_equal(want, got), "want", want ? want : json_null(),
			       "got", got ? got : json_null());
		if (json_equal(want, got))
			(*same)++;
		else
			(*differ)++;
		if (check && ck)
			check(o->arg, ck);
		json_decref(ck);
	}
	client_release(&c);
	rc = 0;
done:
	free(line);
	json_decref(entries);
	json_decref(replies);
	return rc;
}
