/* serve/acp_ws.c - the Agent Control Protocol's WebSocket connections on
 * the one server (lib/serve/http.c): a worker thread each, queues, the
 * auth timeout, the drain.  The server owns the context, the listening
 * ports, the Host/Origin check, the message limit and the signal; this
 * file only handles the WebSocket events it is handed. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acp_impl.h"
#include "strbuf.h"

struct qmsg {
	struct qmsg *next;
	size_t len;
	bool droppable;
	unsigned char buf[];	/* LWS_PRE + len */
};

struct conn {
	struct conn *next;
	struct wap_acp *a;
	struct lws *wsi;
	struct wap_acp_session *s;
	pthread_mutex_t mu;
	struct qmsg *head, *tail;
	size_t qbytes;
	unsigned long dropped;
	bool overfull;			/* replies over ACP_MAX_UNREAD: closed at once */
	bool overall;			/* ... or over its share of the server's (held.h) */
	bool doomed;			/* its closing is under way (service thread) */
	bool close_after;
	enum lws_close_status close_status;
	struct wap_sb rx;
	/* requests are handled in order on the connection's own thread, so
	 * a slow call (a big search, an approval) holds up no other client */
	pthread_t worker;
	bool worker_on;
	pthread_cond_t cv;
	struct inmsg *in_head, *in_tail;
	size_t in_count, in_bytes;
	bool stopping;
	bool busy;			/* the worker is handling a message */
	time_t t0;			/* connected at (monotonic) */
};

#define ACP_CLOSE_TRY_LATER ((enum lws_close_status)1013)	/* "Try Again Later" */

struct inmsg {
	struct inmsg *next;
	size_t len;
	char text[];
};

#define ACP_MAX_PENDING 256	/* messages waiting per client */

/* What a client may have us hold, either way: its replies it has not read,
 * or its messages waiting for its thread (one message, however big,
 * always fits an empty queue) */
static size_t unread_cap(const struct conn *c)
{
	bool authed = c->s && __atomic_load_n(&c->s->authed, __ATOMIC_SEQ_CST);

	return ACP_MAX_UNREAD + (authed ? ACP_MAX_QUEUE + c->a->max_message : 0);
}

/* The bytes C holds (C->mu held, or its worker stopped), and whether N
 * more would put it over its share of what all clients may hold. */
static size_t held(const struct conn *c)
{
	return c->rx.len + c->in_bytes + c->qbytes;
}

static bool over_share(const struct conn *c, size_t n)
{
	return wap_held_over(c->a->held, held(c), n);
}

static void held_add(struct wap_acp *a, size_t n)
{
	wap_held_add(a->held, n);
}

static void held_sub(struct wap_acp *a, size_t n)
{
	wap_held_sub(a->held, n);
}

static void enqueue(struct conn *c, json_t *msg, bool droppable)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	size_t n;
	struct qmsg *q;

	json_decref(msg);
	if (!text)
		return;
	n = strlen(text);
	pthread_mutex_lock(&c->mu);
	if (droppable && (c->qbytes + n > ACP_MAX_QUEUE || over_share(c, n))) {
		c->dropped++;
		pthread_mutex_unlock(&c->mu);
		free(text);
		return;
	}
	/* a client that sends and does not read would make us hold its
	 * replies without end: past the cap it is closed (one reply, however
	 * big, always fits an empty queue) */
	if (c->overfull || c->overall || (c->head && c->qbytes + n > unread_cap(c))) {
		c->overfull = true;
		pthread_mutex_unlock(&c->mu);
		free(text);
		return;
	}
	if (c->head && over_share(c, n)) {
		c->overall = true;
		pthread_mutex_unlock(&c->mu);
		free(text);
		return;
	}
	q = malloc(sizeof(*q) + LWS_PRE + n);
	if (q) {
		q->next = NULL;
		q->len = n;
		q->droppable = droppable;
		memcpy(q->buf + LWS_PRE, text, n);
		if (c->tail)
			c->tail->next = q;
		else
			c->head = q;
		c->tail = q;
		c->qbytes += n;
		held_add(c->a, n);
	}
	pthread_mutex_unlock(&c->mu);
	free(text);
}

/* A session past its TTL (--session-ttl) is shown nothing more of its
 * terminals and watchers: they end at its next call (acp.c), and a client
 * that makes none would see them stream for ever. */
static bool expired(const struct conn *c)
{
	long ttl = c->a->o.session_ttl;

	return ttl > 0 && c->s && __atomic_load_n(&c->s->authed, __ATOMIC_SEQ_CST) &&
	       time(NULL) - __atomic_load_n(&c->s->auth_at, __ATOMIC_SEQ_CST) >= ttl;
}

/* From any thread: queue a notification and wake the service loop. */
static void conn_notify(void *arg, json_t *msg)
{
	struct conn *c = arg;
	const char *m = json_string_value(json_object_get(msg, "method"));
	bool droppable = m && (!strcmp(m, "terminal.output") || !strcmp(m, "file.changed"));

	if (droppable && expired(c)) {
		json_decref(msg);
		return;
	}
	enqueue(c, msg, droppable);
	if (c->a->ctx && !c->a->closing)
		lws_cancel_service(c->a->ctx);
}

static void enqueue(struct conn *c, json_t *msg, bool droppable);

static void *conn_worker(void *arg)
{
	struct conn *c = arg;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		struct inmsg *m;
		json_t *reply;
		bool close = false;

		while (!c->in_head && !c->stopping)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->stopping)
			break;
		m = c->in_head;
		c->in_head = m->next;
		if (!c->in_head)
			c->in_tail = NULL;
		c->in_count--;
		c->in_bytes -= m->len;
		held_sub(c->a, m->len);
		c->busy = true;
		pthread_mutex_unlock(&c->mu);
		reply = wap_acp_handle(c->s, m->text, m->len, &close);
		free(m);
		if (close) {
			pthread_mutex_lock(&c->mu);
			c->close_after = true;
			c->close_status = LWS_CLOSE_STATUS_POLICY_VIOLATION;
			pthread_mutex_unlock(&c->mu);
		}
		if (reply)
			enqueue(c, reply, false);
		pthread_mutex_lock(&c->mu);
		c->busy = false;
		pthread_mutex_unlock(&c->mu);
		if (!c->a->closing)
			lws_cancel_service(c->a->ctx);
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* Stop the worker and end the session (terminals killed, watchers
 * stopped): after this no other thread touches C. */
static void conn_stop(struct conn *c)
{
	if (c->worker_on) {
		pthread_mutex_lock(&c->mu);
		c->stopping = true;
		pthread_cond_signal(&c->cv);
		pthread_mutex_unlock(&c->mu);
		if (c->s)
			wap_cancel_set(&c->s->cancel, 1);	/* an approval or a long op gives up */
		pthread_join(c->worker, NULL);
		c->worker_on = false;
	}
	wap_acp_session_free(c->s);
	c->s = NULL;
}

static void conn_free(struct conn *c)
{
	struct wap_acp *a = c->a;

	for (struct conn **pp = &a->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			a->nconns--;
			wap_held_user(a->held, -1);
			break;
		}
	conn_stop(c);
	held_sub(a, held(c));
	while (c->in_head) {
		struct inmsg *m = c->in_head;
		c->in_head = m->next;
		free(m);
	}
	while (c->head) {
		struct qmsg *q = c->head;
		c->head = q->next;
		free(q);
	}
	wap_sb_release(&c->rx);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* While stopping, every request (of a batch too) gets this answer. */
static json_t *refuse_stopping(void *arg, const struct wap_rpc_msg *m)
{
	(void)arg;
	if (m->kind != WAP_RPC_REQUEST)
		return NULL;
	return acp_rpc_error(m->id, RPC_INTERNAL, "Server stopping: no new requests", NULL);
}

/* Close C for good (service thread): at once (LWS_TO_KILL_ASYNC), or
 * after SECS should its close not get out (a client that does not read
 * would hold it, its thread and its queue, for ever). */
static void doom(struct conn *c, int secs)
{
	c->doomed = true;
	lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, secs);
}

/* Every client slot taken: the client connected the longest ago that has
 * not authenticated is closed to make room (it had longer than any other
 * to do so), so clients that never authenticate, made again as they are
 * closed, cannot keep the ones with the token out.  False when every
 * client has authenticated. */
static bool make_room(struct wap_acp *a)
{
	struct conn *old = NULL;
	size_t live = 0;

	for (struct conn *c = a->conns; c; c = c->next) {	/* newest first */
		bool going;
		pthread_mutex_lock(&c->mu);
		going = c->close_after;
		pthread_mutex_unlock(&c->mu);
		if (going)
			continue;
		live++;
		if (c->s && !__atomic_load_n(&c->s->authed, __ATOMIC_SEQ_CST) && (!old || c->t0 <= old->t0))
			old = c;
	}
	if (live < ACP_MAX_CLIENTS)
		return true;
	if (!old)
		return false;
	pthread_mutex_lock(&old->mu);
	old->close_after = true;
	old->close_status = LWS_CLOSE_STATUS_POLICY_VIOLATION;
	pthread_mutex_unlock(&old->mu);
	acp_log(a, LOG_WARN, "ws: client %lu closed to make room: %d clients, not authenticated", old->s->num,
		ACP_MAX_CLIENTS);
	doom(old, LWS_TO_KILL_ASYNC);
	return true;
}

int wap_acp_callback(struct wap_acp *a, struct lws *wsi, int reason, void **user, void *in, size_t len)
{
	struct conn **pc = (struct conn **)user, *c = pc ? *pc : NULL;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		if (!make_room(a)) {
			acp_log(a, LOG_WARN, "ws: connection refused: %d clients already, all authenticated",
				ACP_MAX_CLIENTS);
			return 1;
		}
		break;
	case LWS_CALLBACK_ESTABLISHED:
		if (!pc)
			return -1;
		c = calloc(1, sizeof(*c));
		if (!c)
			return -1;
		c->a = a;
		c->wsi = wsi;
		{
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			c->t0 = ts.tv_sec;
		}
		pthread_mutex_init(&c->mu, NULL);
		*pc = c;
		c->next = a->conns;
		a->conns = c;
		a->nconns++;
		wap_held_user(a->held, 1);
		pthread_cond_init(&c->cv, NULL);
		c->s = wap_acp_session_new(a, conn_notify, c);
		if (!c->s)
			return -1;
		c->worker_on = !pthread_create(&c->worker, NULL, conn_worker, c);
		if (!c->worker_on)
			return -1;
		acp_log(a, LOG_INFO, "ws: client %lu connected", c->s->num);
		lws_callback_on_writable(wsi);
		break;
	case LWS_CALLBACK_RECEIVE: {
		struct inmsg *m;
		bool full;

		if (!c)
			return -1;
		/* before authentication only small messages: a client that has
		 * not shown the token cannot make us hold megabytes */
		if (c->rx.len + len > (c->s && __atomic_load_n(&c->s->authed, __ATOMIC_SEQ_CST) ? a->max_message :
				       a->max_message < ACP_MAX_PREAUTH ? a->max_message : ACP_MAX_PREAUTH)) {
			lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, (unsigned char *)"too large", 9);
			return -1;
		}
		pthread_mutex_lock(&c->mu);
		full = over_share(c, len);
		pthread_mutex_unlock(&c->mu);
		if (full) {
			acp_log(a, LOG_WARN, "ws: client %lu closed: all clients hold over %zu KiB, it %zu of them",
				c->s->num, a->held->max >> 10, held(c) >> 10);
			lws_close_reason(wsi, ACP_CLOSE_TRY_LATER, (unsigned char *)"server busy", 11);
			return -1;
		}
		wap_sb_add(&c->rx, in, len);
		held_add(a, len);
		if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi))
			break;
		if (a->draining) {	/* stopping: a new request is refused */
			struct wap_rpc_limits lim = { .max_message = a->max_message, .max_batch = 1000 };
			json_t *v = wap_rpc_process(c->rx.buf ? c->rx.buf : "", c->rx.len, &lim, refuse_stopping, NULL);
			held_sub(a, c->rx.len);
			c->rx.len = 0;
			if (v)
				enqueue(c, v, false);
			lws_callback_on_writable(wsi);
			break;
		}
		m = malloc(sizeof(*m) + c->rx.len + 1);
		if (!m)
			return -1;
		m->next = NULL;
		m->len = c->rx.len;
		memcpy(m->text, c->rx.buf ? c->rx.buf : "", c->rx.len);
		m->text[m->len] = 0;
		pthread_mutex_lock(&c->mu);
		c->rx.len = 0;	/* (its bytes are the message's now) */
		pthread_mutex_unlock(&c->mu);
		/* messages sent while a slow call runs wait for it: 256 of
		 * them, and as many bytes as replies not read may hold (256
		 * messages of the limit were 4 GB a client) */
		pthread_mutex_lock(&c->mu);
		full = c->in_count >= ACP_MAX_PENDING || (c->in_head && c->in_bytes + m->len > unread_cap(c));
		if (!full) {
			if (c->in_tail)
				c->in_tail->next = m;
			else
				c->in_head = m;
			c->in_tail = m;
			c->in_count++;
			c->in_bytes += m->len;
			pthread_cond_signal(&c->cv);
		}
		pthread_mutex_unlock(&c->mu);
		if (full) {
			held_sub(a, m->len);
			free(m);
			acp_log(a, LOG_WARN, "ws: client %lu closed: more than %d requests or %zu KiB waiting",
				 c->s->num, ACP_MAX_PENDING, unread_cap(c) >> 10);
			lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, (unsigned char *)"flood", 5);
			return -1;
		}
		break;
	}
	case LWS_CALLBACK_SERVER_WRITEABLE: {
		struct qmsg *q;
		bool more, close;

		if (!c)
			break;
		pthread_mutex_lock(&c->mu);
		q = c->head;
		if (q) {
			c->head = q->next;
			if (!c->head)
				c->tail = NULL;
			c->qbytes -= q->len;
			held_sub(a, q->len);
		}
		more = c->head != NULL;
		close = c->close_after;
		pthread_mutex_unlock(&c->mu);
		if (q) {
			int w = lws_write(wsi, q->buf + LWS_PRE, q->len, LWS_WRITE_TEXT);
			free(q);
			if (w < 0)
				return -1;
		}
		if (more)
			lws_callback_on_writable(wsi);
		else if (close) {
			lws_close_reason(wsi, c->close_status, NULL, 0);
			return -1;
		}
		break;
	}
	case LWS_CALLBACK_CLOSED:
		if (c) {
			if (c->s)
				acp_log(a, LOG_INFO, "ws: client %lu disconnected", c->s->num);
			conn_free(c);
			*pc = NULL;
		}
		break;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		for (struct conn *k = a ? a->conns : NULL; k; k = k->next) {
			bool any, over, closing;
			pthread_mutex_lock(&k->mu);
			any = k->head != NULL || k->close_after;
			over = k->overfull || k->overall;
			closing = k->close_after;
			pthread_mutex_unlock(&k->mu);
			if (over && !k->doomed) {
				if (k->overall)
					acp_log(a, LOG_WARN, "ws: client %lu closed: all clients hold over %zu KiB, "
						"it the most of them", k->s ? k->s->num : 0, a->held->max >> 10);
				else
					acp_log(a, LOG_WARN, "ws: client %lu closed: it does not read its replies "
						"(over %zu KiB waiting)", k->s ? k->s->num : 0, unread_cap(k) >> 10);
				doom(k, LWS_TO_KILL_ASYNC);
			} else if (closing && !k->doomed) {
				doom(k, ACP_CLOSE_GRACE_S);
			}
			if (any)
				lws_callback_on_writable(k->wsi);
		}
		break;
	default:
		break;
	}
	return 0;
}

/* A client that never authenticates would hold a connection (and its
 * thread) for ever: it is closed after ACP_AUTH_TIMEOUT_S. */
static void tick(lws_sorted_usec_list_t *sul)
{
	struct wap_acp *a = lws_container_of(sul, struct wap_acp, sul);
	const char *env = getenv("WAP_ACP_AUTH_TIMEOUT");	/* tests */
	long limit = env && atol(env) > 0 ? atol(env) : ACP_AUTH_TIMEOUT_S;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (struct conn *c = a->conns; c; c = c->next) {
		bool late;
		if (!c->s)
			continue;
		if (__atomic_load_n(&c->s->authed, __ATOMIC_SEQ_CST)) {
			c->t0 = now.tv_sec;	/* an expired session gets as long again */
			continue;
		}
		pthread_mutex_lock(&c->mu);
		late = !c->close_after && now.tv_sec - c->t0 > limit;
		if (late) {
			c->close_after = true;
			c->close_status = LWS_CLOSE_STATUS_POLICY_VIOLATION;
		}
		pthread_mutex_unlock(&c->mu);
		if (late) {
			acp_log(a, LOG_WARN, "ws: client %lu closed: no authentication within %ld s", c->s->num, limit);
			doom(c, ACP_CLOSE_GRACE_S);
			lws_callback_on_writable(c->wsi);
		}
	}

	lws_sul_schedule(a->ctx, 0, &a->sul, tick, 100 * LWS_US_PER_MS);
}

/* ---------- what the one server asks of the protocol ---------- */

void wap_acp_attach(struct wap_acp *a, struct lws_context *ctx, size_t max_message, struct wap_held *held)
{
	a->ctx = ctx;
	a->max_message = max_message ? max_message : ACP_MAX_MESSAGE;
	a->held = held;
	lws_sul_schedule(a->ctx, 0, &a->sul, tick, 100 * LWS_US_PER_MS);
}

void wap_acp_listening(struct wap_acp *a, const char *host, int port)
{
	bool v6 = strchr(host, ':') != NULL;

	a->port = port;
	acp_log(a, LOG_ALWAYS, "Agent Control Protocol on ws://%s%s%s:%d (token in %s)", v6 ? "[" : "", host,
		v6 ? "]" : "", port, a->token_file);
}

void wap_acp_refused(struct wap_acp *a, const char *why)
{
	acp_log(a, LOG_WARN, "ws: connection refused: %s", why);
}

void wap_acp_drain(struct wap_acp *a)
{
	a->draining = true;
}

bool wap_acp_idle(struct wap_acp *a)
{
	bool idle = true;

	for (struct conn *c = a->conns; c && idle; c = c->next) {
		pthread_mutex_lock(&c->mu);
		idle = !c->busy && !c->in_head;
		pthread_mutex_unlock(&c->mu);
	}
	return idle;
}

/* server.shutdown to everyone, then each connection is closed once that
 * is written. */
void wap_acp_shutdown(struct wap_acp *a)
{
	for (struct conn *c = a->conns; c; c = c->next) {
		enqueue(c, notification("server.shutdown", json_pack("{s:s}", "reason", "server stopping")), false);
		pthread_mutex_lock(&c->mu);
		c->close_after = true;
		c->close_status = LWS_CLOSE_STATUS_GOINGAWAY;
		pthread_mutex_unlock(&c->mu);
		lws_callback_on_writable(c->wsi);
	}
}

size_t wap_acp_clients(const struct wap_acp *a)
{
	return a->nconns;
}

/* No thread may wake the context while it is destroyed: every worker
 * is stopped first (their sessions end: terminals killed, watchers
 * stopped). */
void wap_acp_detach(struct wap_acp *a)
{
	for (struct conn *c = a->conns; c; c = c->next)
		conn_stop(c);
	if (a->ctx)
		lws_sul_cancel(&a->sul);
	a->closing = true;
}
