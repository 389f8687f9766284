/* serve/stdio_rpc.c - newline-delimited JSON-RPC on a pair of fds. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stdio_rpc.h"
#include "workers.h"

struct out {
	int fd;
	pthread_mutex_t mu;
	bool dead;
};

static void out_send(void *arg, const json_t *msg)
{
	struct out *o = arg;
	size_t len, off = 0;
	char *s = wap_rpc_dump(msg, &len), *line;

	if (!s)
		return;
	line = realloc(s, len + 1);
	if (!line) {
		free(s);
		return;
	}
	line[len++] = '\n';
	pthread_mutex_lock(&o->mu);
	while (!o->dead && off < len) {
		ssize_t n = write(o->fd, line + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			o->dead = true;	/* the reader went away: drop what follows */
			break;
		}
		off += n;
	}
	pthread_mutex_unlock(&o->mu);
	free(line);
}

/* Calls queued or running at most: past it the reader stops reading, so a
 * client that floods without reading its replies cannot grow the queue. */
#define MAX_PENDING 256

struct ctx {
	struct wap_mcp_session *s;
	struct out *out;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int pending;
};

struct job {
	struct ctx *ctx;
	json_t *msg;
};

static void run_job(void *arg)
{
	struct job *j = arg;
	struct wap_rpc_msg m;
	json_t *reply = NULL;

	if (wap_rpc_check(j->msg, &m, &reply) == WAP_RPC_INVALID) {
		/* cannot happen: checked before queueing */
	} else {
		reply = wap_mcp_handle(j->ctx->s, &m, out_send, j->ctx->out);
	}
	if (reply)
		out_send(j->ctx->out, reply);
	json_decref(reply);
	json_decref(j->msg);
	pthread_mutex_lock(&j->ctx->mu);
	j->ctx->pending--;
	pthread_cond_signal(&j->ctx->cv);
	pthread_mutex_unlock(&j->ctx->mu);
	free(j);
}

static json_t *batch_handler(void *arg, const struct wap_rpc_msg *m)
{
	struct ctx *c = arg;

	return wap_mcp_handle(c->s, m, out_send, c->out);
}

static void handle_line(struct ctx *c, struct wap_workers *w, const struct wap_rpc_limits *lim,
			const char *line, size_t len)
{
	json_t *reply = NULL, *v;
	struct wap_rpc_msg m;

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
		reply = wap_rpc_process_value(v, lim, batch_handler, c);
		json_decref(v);
		goto send;
	}
	if (wap_rpc_check(v, &m, &reply) == WAP_RPC_INVALID) {
		json_decref(v);
		goto send;
	}
	if (w && wap_mcp_slow(c->s, &m)) {
		struct job *j = malloc(sizeof(*j));
		if (j) {
			j->ctx = c;
			j->msg = v;
			pthread_mutex_lock(&c->mu);
			while (c->pending >= MAX_PENDING)
				pthread_cond_wait(&c->cv, &c->mu);
			c->pending++;
			pthread_mutex_unlock(&c->mu);
			wap_mcp_expect(c->s, m.id);
			if (!wap_workers_submit(w, run_job, j))
				return;
			pthread_mutex_lock(&c->mu);
			c->pending--;
			pthread_mutex_unlock(&c->mu);
			free(j);
		}
	}
	reply = wap_mcp_handle(c->s, &m, out_send, c->out);
	json_decref(v);
send:
	if (reply)
		out_send(c->out, reply);
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
	snprintf(sid, sizeof(sid), "stdio-%ld", (long)getpid());
	c.s = wap_mcp_session_new(srv, sid);
	c.out = &out;
	c.pending = 0;
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
				out_send(&out, e);
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
	if (!o->drain)
		wap_mcp_session_cancel_all(c.s);
	wap_workers_free(w);
	wap_mcp_session_cancel_all(c.s);
	wap_mcp_session_unref(c.s);
	pthread_mutex_destroy(&c.mu);
	pthread_cond_destroy(&c.cv);
	pthread_mutex_destroy(&out.mu);
	free(buf);
	return rc;
}
