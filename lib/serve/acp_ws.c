/* serve/acp_ws.c - the Agent Control Protocol's WebSocket server
 * (libwebsockets): connections, a worker thread each, queues, the drain. */
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acp_impl.h"
#include "http.h"
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
	bool close_after;
	enum lws_close_status close_status;
	struct wap_sb rx;
	/* requests are handled in order on the connection's own thread, so
	 * a slow call (a big search, an approval) holds up no other client */
	pthread_t worker;
	bool worker_on;
	pthread_cond_t cv;
	struct inmsg *in_head, *in_tail;
	size_t in_count;
	bool stopping;
	bool busy;			/* the worker is handling a message */
	time_t t0;			/* connected at (monotonic) */
};

struct inmsg {
	struct inmsg *next;
	size_t len;
	char text[];
};

#define ACP_MAX_PENDING 256	/* messages waiting per client */

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
	if (droppable && c->qbytes + n > ACP_MAX_QUEUE) {
		c->dropped++;
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
	}
	pthread_mutex_unlock(&c->mu);
	free(text);
}

/* From any thread: queue a notification and wake the service loop. */
static void conn_notify(void *arg, json_t *msg)
{
	struct conn *c = arg;
	const char *m = json_string_value(json_object_get(msg, "method"));
	bool droppable = m && (!strcmp(m, "terminal.output") || !strcmp(m, "file.changed"));

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

/* A browser always sends Origin on a WebSocket upgrade: a page from
 * elsewhere (DNS rebinding, a cross-site page) is refused unless its
 * origin is loopback or listed (the same allow-list as MCP over HTTP);
 * a client that is no browser sends none. */
static bool origin_ok(struct wap_acp *a, struct lws *wsi)
{
	char origin[512];
	int l = lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN);

	if (l <= 0)
		return true;
	if (l >= (int)sizeof(origin) || lws_hdr_copy(wsi, origin, sizeof(origin), WSI_TOKEN_ORIGIN) <= 0)
		return false;
	return wap_http_origin_ok(origin, a->origins);
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
			break;
		}
	conn_stop(c);
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

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct wap_acp *a = lws_context_user(lws_get_context(wsi));
	struct conn **pc = user, *c = pc ? *pc : NULL;

	switch (reason) {
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		if (a->draining) {
			lws_return_http_status(wsi, HTTP_STATUS_SERVICE_UNAVAILABLE, "The server is stopping");
			return 1;
		}
		if (!origin_ok(a, wsi)) {	/* 403, said before the upgrade */
			acp_log(a, LOG_WARN, "ws: connection refused: Origin not in allowedOrigins");
			lws_return_http_status(wsi, HTTP_STATUS_FORBIDDEN,
					       "Origin not allowed (see allowedOrigins / --allowed-origins)");
			return 1;
		}
		break;
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		if (!origin_ok(a, wsi)) {
			acp_log(a, LOG_WARN, "ws: connection refused: Origin not in allowedOrigins");
			return 1;
		}
		if (a->nconns >= ACP_MAX_CLIENTS) {
			acp_log(a, LOG_WARN, "ws: connection refused: %d clients already", ACP_MAX_CLIENTS);
			return 1;
		}
		break;
	case LWS_CALLBACK_ESTABLISHED:
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
		if (c->rx.len + len > (c->s && __atomic_load_n(&c->s->authed, __ATOMIC_SEQ_CST) ?
				       ACP_MAX_MESSAGE : ACP_MAX_PREAUTH)) {
			lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, (unsigned char *)"too large", 9);
			return -1;
		}
		wap_sb_add(&c->rx, in, len);
		if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi))
			break;
		if (a->draining) {	/* stopping: a new request is refused */
			struct wap_rpc_limits lim = { .max_message = ACP_MAX_MESSAGE, .max_batch = 1000 };
			json_t *v = wap_rpc_process(c->rx.buf ? c->rx.buf : "", c->rx.len, &lim, refuse_stopping, NULL);
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
		c->rx.len = 0;
		pthread_mutex_lock(&c->mu);
		full = c->in_count >= ACP_MAX_PENDING;
		if (!full) {
			if (c->in_tail)
				c->in_tail->next = m;
			else
				c->in_head = m;
			c->in_tail = m;
			c->in_count++;
			pthread_cond_signal(&c->cv);
		}
		pthread_mutex_unlock(&c->mu);
		if (full) {
			free(m);
			acp_log(a, LOG_WARN, "ws: client %lu closed: more than %d requests waiting",
				 c->s->num, ACP_MAX_PENDING);
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
			bool any;
			pthread_mutex_lock(&k->mu);
			any = k->head != NULL || k->close_after;
			pthread_mutex_unlock(&k->mu);
			if (any)
				lws_callback_on_writable(k->wsi);
		}
		break;
	default:
		break;
	}
	return 0;
}

static const struct lws_protocols protocols[] = {
	{ "acp", callback, sizeof(struct conn *), 65536, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

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
			lws_callback_on_writable(c->wsi);
		}
	}

	lws_sul_schedule(a->ctx, 0, &a->sul, tick, 100 * LWS_US_PER_MS);
}

static int listen_ctx(struct wap_acp *a, struct wap_err *err)
{
	struct lws_context_creation_info info;
	struct addrinfo hints = { .ai_flags = AI_NUMERICSERV, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	bool v6;

	/* libwebsockets wants an address (or an interface name): resolve
	 * a host name such as "localhost" first. */
	if (getaddrinfo(a->o.host, NULL, &hints, &ai) == 0 && ai) {
		if (getnameinfo(ai->ai_addr, ai->ai_addrlen, a->addr, sizeof(a->addr), NULL, 0, NI_NUMERICHOST) == 0)
			a->o.host = a->addr;
		freeaddrinfo(ai);
	}
	v6 = strchr(a->o.host, ':') != NULL;
	memset(&info, 0, sizeof(info));
	info.port = a->o.port;
	info.iface = a->o.host;
	info.protocols = protocols;
	info.user = a;
	info.gid = -1;
	info.uid = -1;
	/* FAIL_UPON_UNABLE_TO_BIND: else a port that cannot be bound is only
	 * logged, and the server would announce itself listening on nothing */
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6 * !v6 | LWS_SERVER_OPTION_VALIDATE_UTF8 |
		       LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
	info.timeout_secs = 30;
	info.ka_time = 0;
	if (wap_lazy_load(WAP_LIB_LWS, err))
		return -1;
	a->ctx = lws_create_context(&info);
	if (!a->ctx)
		return wap_err_set(err, WAP_E_FAILED, "Cannot listen on ws://%s:%d", a->o.host, a->o.port);
	a->vh = lws_get_vhost_by_name(a->ctx, "default");
	a->port = a->vh ? lws_get_vhost_listen_port(a->vh) : a->o.port;
	if (a->port <= 0) {
		lws_context_destroy(a->ctx);
		a->ctx = NULL;
		return wap_err_set(err, WAP_E_FAILED, "Cannot listen on ws://%s:%d", a->o.host, a->o.port);
	}
	lws_sul_schedule(a->ctx, 0, &a->sul, tick, 100 * LWS_US_PER_MS);
	acp_log(a, LOG_ALWAYS, "Agent Control Protocol on ws://%s%s%s:%d (token in %s)", v6 ? "[" : "", a->o.host,
		 v6 ? "]" : "", a->port, a->token_file);
	return 0;
}

static void serve_loop(struct wap_acp *a)
{
	struct timespec t0, now;

	while (!*a->stop)
		if (lws_service(a->ctx, 0) < 0)
			break;
	/* drain: the requests each client sent before the stop are handled
	 * and answered (ACP_DRAIN_MS at most); new ones are refused */
	a->draining = true;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		bool idle = true;
		for (struct conn *c = a->conns; c && idle; c = c->next) {
			pthread_mutex_lock(&c->mu);
			idle = !c->busy && !c->in_head;
			pthread_mutex_unlock(&c->mu);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (idle || (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 > ACP_DRAIN_MS)
			break;
		if (lws_service(a->ctx, 0) < 0)
			break;
	}
	/* server.shutdown to everyone, then close each connection once it
	 * is written (a second at most). */
	for (struct conn *c = a->conns; c; c = c->next) {
		enqueue(c, notification("server.shutdown", json_pack("{s:s}", "reason", "server stopping")), false);
		pthread_mutex_lock(&c->mu);
		c->close_after = true;
		c->close_status = LWS_CLOSE_STATUS_GOINGAWAY;
		pthread_mutex_unlock(&c->mu);
		lws_callback_on_writable(c->wsi);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (a->nconns) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 > 1000)
			break;
		lws_service(a->ctx, 0);
	}
	/* No thread may wake the context while it is destroyed. */
	for (struct conn *c = a->conns; c; c = c->next)
		conn_stop(c);
	lws_sul_cancel(&a->sul);
	a->closing = true;
	lws_context_destroy(a->ctx);	/* closes every client: their terminals die */
	a->ctx = NULL;
	a->closing = false;
}

int wap_acp_run(struct wap_acp *a, volatile sig_atomic_t *stop, struct wap_err *err)
{
	if (listen_ctx(a, err) < 0)
		return -1;
	a->stop = stop;
	serve_loop(a);
	return 0;
}

static void *thread_main(void *arg)
{
	struct wap_acp *a = arg;
	int r = listen_ctx(a, &a->start_err);

	pthread_mutex_lock(&a->startmu);
	a->start_state = r < 0 ? -1 : 1;
	pthread_cond_broadcast(&a->startcv);
	pthread_mutex_unlock(&a->startmu);
	if (r < 0)
		return NULL;
	serve_loop(a);
	return NULL;
}

int wap_acp_start(struct wap_acp *a, struct wap_err *err)
{
	a->own_stop = 0;
	a->stop = &a->own_stop;
	if (pthread_create(&a->thr, NULL, thread_main, a))
		return wap_err_set(err, WAP_E_FAILED, "Cannot start the WebSocket server thread");
	a->thread_started = true;
	pthread_mutex_lock(&a->startmu);
	while (!a->start_state)
		pthread_cond_wait(&a->startcv, &a->startmu);
	pthread_mutex_unlock(&a->startmu);
	if (a->start_state < 0) {
		pthread_join(a->thr, NULL);
		a->thread_started = false;
		if (err) {
			*err = a->start_err;
			a->start_err = (struct wap_err){ 0 };
		}
		return -1;
	}
	return 0;
}

void wap_acp_stop(struct wap_acp *a)
{
	if (!a || !a->thread_started)
		return;
	a->own_stop = 1;
	pthread_join(a->thr, NULL);
	a->thread_started = false;
}
