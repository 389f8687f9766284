/* serve/stdio_rpc.c - newline-delimited JSON-RPC on a pair of fds. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "stdio_rpc.h"
#include "workers.h"

/* The replies go out through one buffer: whoever adds to it while no one
 * writes becomes the writer and writes all there is, in one write(2), until
 * the buffer is empty (what others add meanwhile goes in the same loop).
 * The reader holds back the replies of the calls it ran itself until it
 * has handled every line it read, so a pipelining client gets many replies
 * in a write, not one each. */
#define OUT_HELD 65536		/* the reader writes past this much held back */
#define OUT_MAX (1 << 20)	/* past this a sender waits for the writer */

struct out {
	int fd;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct wap_sb buf, spare;
	bool writing;
	bool dead;
};

/* Write what is buffered until nothing is; called and returns with o->mu
 * held, which it lets go while writing. */
static void out_drain(struct out *o)
{
	o->writing = true;
	while (o->buf.len && !o->dead) {
		struct wap_sb w = o->buf;
		size_t off = 0;

		o->buf = o->spare;
		o->buf.len = 0;
		pthread_cond_broadcast(&o->cv);	/* room again */
		pthread_mutex_unlock(&o->mu);
		while (off < w.len) {
			ssize_t n = write(o->fd, w.buf + off, w.len - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += n;
		}
		pthread_mutex_lock(&o->mu);
		if (off < w.len)
			o->dead = true;	/* the reader went away: drop what follows */
		o->spare = w;
	}
	if (o->dead)
		o->buf.len = 0;
	o->writing = false;
	pthread_cond_broadcast(&o->cv);
}

/* MSG as a line in the buffer; written now unless HOLD (the reader's). */
static void out_put(struct out *o, const json_t *msg, bool hold)
{
	pthread_mutex_lock(&o->mu);
	/* a client that reads no replies: senders wait, calls stop */
	while (o->buf.len > OUT_MAX && o->writing && !o->dead)
		pthread_cond_wait(&o->cv, &o->mu);
	if (!o->dead) {
		size_t was = o->buf.len;
		if (wap_json_dump(msg, &o->buf) || !wap_sb_grow(&o->buf, 1)) {
			o->buf.len = was;	/* not sendable (or no memory): dropped */
			o->buf.oom = false;
		} else {
			o->buf.buf[o->buf.len++] = '\n';
		}
	}
	if (!o->writing && (!hold || o->buf.len > OUT_HELD))
		out_drain(o);
	pthread_mutex_unlock(&o->mu);
}

static void out_send(void *arg, const json_t *msg);
static void out_send_held(void *arg, const json_t *msg);

/* LEN bytes of a reply line (without its newline), as out_put */
static void out_put_bytes(struct out *o, const char *line, size_t len, bool hold)
{
	pthread_mutex_lock(&o->mu);
	while (o->buf.len > OUT_MAX && o->writing && !o->dead)
		pthread_cond_wait(&o->cv, &o->mu);
	if (!o->dead && wap_sb_grow(&o->buf, len + 1)) {
		memcpy(o->buf.buf + o->buf.len, line, len);
		o->buf.len += len;
		o->buf.buf[o->buf.len++] = '\n';
	}
	o->buf.oom = false;
	if (!o->writing && (!hold || o->buf.len > OUT_HELD))
		out_drain(o);
	pthread_mutex_unlock(&o->mu);
}

/* M's reply, if any, made into SCRATCH (reused, emptied) and put out */
static void reply_to(struct wap_mcp_session *s, struct out *o, const struct wap_rpc_msg *m,
		     struct wap_sb *scratch, bool hold)
{
	scratch->len = 0;
	scratch->oom = false;
	if (wap_mcp_reply(s, m, hold ? out_send_held : out_send, o, scratch) > 0)
		out_put_bytes(o, scratch->buf, scratch->len, hold);
}

static void out_flush(struct out *o)
{
	pthread_mutex_lock(&o->mu);
	if (!o->writing)
		out_drain(o);
	pthread_mutex_unlock(&o->mu);
}

static void out_send(void *arg, const json_t *msg)
{
	out_put(arg, msg, false);
}

/* what the reader sends while handling a line: written with the rest */
static void out_send_held(void *arg, const json_t *msg)
{
	out_put(arg, msg, true);
}

/* Calls queued or running at most, and the bytes of their messages: past
 * either the reader stops reading, so a client that floods without
 * reading its replies cannot grow the queue, nor one that sends big
 * messages behind slow calls (256 of the limit were 4 GB) */
#define MAX_PENDING 256
#define MAX_PENDING_BYTES(max_message) ((max_message) + (8u << 20))

struct ctx {
	struct wap_mcp_session *s;
	struct out *out;
	struct wap_sb scratch;	/* the reader's replies are made here */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int pending;
	size_t pending_bytes;	/* of the messages queued or running */
	size_t max_bytes;	/* MAX_PENDING_BYTES */
	const struct wap_rpc_limits *lim;
};

struct job {
	struct ctx *ctx;
	json_t *msg;
	size_t len;		/* its message's */
};

static json_t *batch_handler(void *arg, const struct wap_rpc_msg *m);

static void run_job(void *arg)
{
	struct job *j = arg;
	struct wap_rpc_msg m;
	struct wap_sb sb = WAP_SB_INIT;

	if (json_is_array(j->msg)) {
		json_t *reply = wap_rpc_process_value(j->msg, j->ctx->lim, batch_handler, j->ctx);
		if (reply)
			out_send_held(j->ctx->out, reply);
		json_decref(reply);
	} else if (wap_rpc_check(j->msg, &m, NULL) != WAP_RPC_INVALID) {	/* (checked before queueing) */
		reply_to(j->ctx->s, j->ctx->out, &m, &sb, false);
	}
	wap_sb_release(&sb);
	json_decref(j->msg);
	pthread_mutex_lock(&j->ctx->mu);
	j->ctx->pending--;
	j->ctx->pending_bytes -= j->len;
	pthread_cond_signal(&j->ctx->cv);
	pthread_mutex_unlock(&j->ctx->mu);
	free(j);
}

static json_t *batch_handler(void *arg, const struct wap_rpc_msg *m)
{
	struct ctx *c = arg;

	return wap_mcp_handle(c->s, m, out_send_held, c->out);
}

static bool busy(struct ctx *c)
{
	int n;

	pthread_mutex_lock(&c->mu);
	n = c->pending;
	pthread_mutex_unlock(&c->mu);
	return n > 0;
}

/* Run the request V (its message M, LEN bytes; M NULL: V is a batch) on a
 * worker, V handed over; false when it could not be queued (no memory).
 * One message, however big, is queued when nothing else is. */
static bool queue(struct ctx *c, struct wap_workers *w, json_t *v, const struct wap_rpc_msg *m,
		  size_t len)
{
	struct job *j = malloc(sizeof(*j));

	if (!j)
		return false;
	j->ctx = c;
	j->msg = v;
	j->len = len;
	pthread_mutex_lock(&c->mu);
	while (c->pending >= MAX_PENDING || (c->pending && c->pending_bytes + len > c->max_bytes))
		pthread_cond_wait(&c->cv, &c->mu);
	c->pending++;
	c->pending_bytes += len;
	pthread_mutex_unlock(&c->mu);
	if (m)
		wap_mcp_expect(c->s, m->id);
	if (!wap_workers_submit(w, run_job, j))
		return true;
	pthread_mutex_lock(&c->mu);
	c->pending--;
	c->pending_bytes -= len;
	pthread_mutex_unlock(&c->mu);
	free(j);
	return false;
}

/* Would batch V run a call that is not quick (or a tool call past calls
 * still queued or running), as one message would be queued for? */
static bool batch_slow(struct ctx *c, const json_t *v)
{
	struct wap_rpc_msg m;
	const json_t *el;
	size_t i;

	json_array_foreach(v, i, el)
		if (wap_rpc_check(el, &m, NULL) == WAP_RPC_REQUEST &&
		    (wap_mcp_slow(c->s, &m) || (wap_mcp_tool_call(c->s, &m) && busy(c))))
			return true;
	return false;
}

static void handle_line(struct ctx *c, struct wap_workers *w, const struct wap_rpc_limits *lim,
			const char *line, size_t len)
{
	json_t *reply = NULL, *v;
	struct wap_rpc_msg m;
	bool again = false;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	while (len && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	if (!len)
		return;
	v = wap_rpc_parse(line, len, lim, &reply);
	if (!v)
		goto send;
	if (json_is_array(v)) {
		/* one with a slow call runs on a worker, as that call alone
		 * would: the reader goes on reading (a cancel, a ping) */
		if (w && batch_slow(c, v) && queue(c, w, v, NULL, len))
			return;
		reply = wap_rpc_process_value(v, lim, batch_handler, c);
		json_decref(v);
		goto send;
	}
	if (wap_rpc_check(v, &m, &reply) == WAP_RPC_INVALID) {
		json_decref(v);
		goto send;
	}
	/* a quick call runs here, but not past calls still queued or running:
	 * a read sent after a write reads what the write wrote */
	if (w && (wap_mcp_slow(c->s, &m) || (wap_mcp_tool_call(c->s, &m) && busy(c))) &&
	    queue(c, w, v, &m, len))
		return;
	/* a quick call that finds it is not (an archive to unpack) is run
	 * again on a worker: the reader goes on reading (a cancel, say) */
	m.requeue = w ? &again : NULL;
	reply_to(c->s, c->out, &m, &c->scratch, true);
	m.requeue = NULL;
	if (again && queue(c, w, v, &m, len))
		return;
	if (again) {
		json_t *e = wap_rpc_oom(m.id);
		out_send_held(c->out, e);
		json_decref(e);
	}
	json_decref(v);
	return;
send:
	if (reply)
		out_send_held(c->out, reply);
	json_decref(reply);
}

int wap_stdio_serve(struct wap_mcp_server *srv, const struct wap_stdio_opts *o)
{
	struct out out = { .fd = o->out_fd };
	struct ctx c;
	struct wap_workers *w;
	size_t max = o->lim.max_message ? o->lim.max_message : WAP_RPC_MAX_MESSAGE;
	size_t cap = 65536, len = 0, skipped = 0;
	char *buf = malloc(cap), sid[48];
	bool skipping = false;
	int rc = 0;

	if (!buf)
		return -1;
	pthread_mutex_init(&out.mu, NULL);
	pthread_cond_init(&out.cv, NULL);
	snprintf(sid, sizeof(sid), "stdio-%ld", (long)getpid());
	c.s = wap_mcp_session_new(srv, sid);
	c.out = &out;
	c.scratch = (struct wap_sb)WAP_SB_INIT;
	c.pending = 0;
	c.pending_bytes = 0;
	c.max_bytes = MAX_PENDING_BYTES(max);
	c.lim = &o->lim;
	pthread_mutex_init(&c.mu, NULL);
	pthread_cond_init(&c.cv, NULL);
	w = wap_workers_new(o->workers > 0 ? o->workers : 4);
	for (;;) {
		ssize_t n;
		char *nl;
		size_t start = 0;

		if (len == cap) {
			/* a line longer than the buffer: grow up to the limit */
			if (cap > max) {
				skipping = true;
				skipped += len;
				len = 0;
			} else {
				char *nb = realloc(buf, cap * 2);
				if (!nb) {
					rc = -1;
					break;
				}
				buf = nb;
				cap *= 2;
			}
		}
		/* what the lines read so far answered goes out before we wait */
		out_flush(&out);
		n = read(o->in_fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				rc = -1;
			if (len && !skipping)
				handle_line(&c, w, &o->lim, buf, len);
			break;
		}
		len += n;
		while ((nl = memchr(buf + start, '\n', len - start))) {
			size_t l = nl - (buf + start);
			if (skipping) {
				char msg[160];
				json_t *e;
				snprintf(msg, sizeof(msg), "Invalid Request: message of %zu bytes is over the limit of %zu",
					 skipped + l, max);
				e = wap_rpc_error(NULL, WAP_RPC_INVALID_REQUEST, msg, NULL);
				out_send_held(&out, e);
				json_decref(e);
				skipping = false;
				skipped = 0;
			} else {
				handle_line(&c, w, &o->lim, buf + start, l);
			}
			start += l + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
	}
	/* EOF on stdin is the client's shutdown (MCP stdio transport): what
	 * still runs is cancelled first, then the workers are joined, so a
	 * long exec or grep stops now, not at its timeout.  --drain (scripts
	 * piping requests in) lets the calls finish and answer first. */
	out_flush(&out);
	if (!o->drain)
		wap_mcp_session_cancel_all(c.s);
	wap_workers_free(w);
	out_flush(&out);	/* (the workers wrote theirs; nothing is left) */
	wap_mcp_session_cancel_all(c.s);
	wap_mcp_session_unref(c.s);
	pthread_mutex_destroy(&c.mu);
	pthread_cond_destroy(&c.cv);
	pthread_mutex_destroy(&out.mu);
	pthread_cond_destroy(&out.cv);
	wap_sb_release(&out.buf);
	wap_sb_release(&out.spare);
	wap_sb_release(&c.scratch);
	free(buf);
	return rc;
}
