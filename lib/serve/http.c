/* serve/http.c - MCP Streamable HTTP and /health on libwebsockets.
 *
 * One event loop (the calling thread) owns every connection; tool calls
 * run on a worker pool.  A worker never touches a connection: it fills the
 * transaction's output under the server lock and wakes the loop with
 * lws_cancel_service(), which then asks for a writeable callback.  A
 * transaction (struct txn) outlives its connection when a worker still
 * holds it; whoever lets go last frees it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "lazy.h"
#include "acp.h"
#include "held.h"
#include "http.h"
#include "strbuf.h"
#include "token.h"
#include "version.h"
#include "workers.h"

#define CHUNK 65536

struct sess {
	char id[33];
	struct wap_mcp_session *s;
	time_t used;
	struct sess *next;
};

struct httpd;

struct txn {
	struct httpd *h;
	struct lws *wsi;		/* NULL once the connection is gone */
	/* the request */
	enum { M_OTHER, M_GET, M_POST, M_DELETE } method;
	char path[64];
	struct wap_sb body;
	bool too_big;
	bool close;			/* refused from its headers: close after the reply */
	time_t t0;			/* when the headers were in (monotonic) */
	/* the reply: guarded by h->mu while busy */
	int status;			/* 0: not ready yet */
	const char *ctype;
	char sid[33];			/* Mcp-Session-Id to send */
	const char *allow;		/* Allow: header (405) */
	bool www_auth;			/* WWW-Authenticate: Bearer (401) */
	bool retry_after;		/* Retry-After (503: the server holds too much) */
	bool sse;			/* an event stream */
	bool done;			/* no more output will come */
	bool busy;			/* a worker holds it */
	bool queued;			/* on the ready list */
	bool body_seen;			/* a byte of its body seen */
	bool body_done;			/* its body's completion seen */
	bool headers_sent;
	struct wap_sb out;
	size_t sent;
	/* what it has the server hold (held.h): its body (or the message
	 * parsed from it, until its call ends) and its reply not yet sent */
	size_t held, held_body;
	/* the job */
	json_t *msg;
	struct sess *sess;		/* a reference on sess->s is held */
	struct wap_mcp_session *ms;
	struct txn *next_ready;
};

struct pss {
	struct txn *t;			/* an HTTP request */
	void *acp;			/* an upgraded connection: the protocol's */
};

struct httpd {
	struct wap_mcp_server *srv;
	const struct wap_http_opts *o;
	struct lws_context *ctx;
	struct wap_workers *workers;
	pthread_mutex_t mu;
	struct txn *ready;
	struct sess *sessions;
	int nsessions;
	time_t swept;		/* the second of the last sweep */
	unsigned char *wbuf;		/* LWS_PRE + CHUNK, for the loop thread */
	struct slot *slots;		/* connections open (loop thread) */
	int nslots, slotcap;
	int live;			/* transactions not yet freed (atomic) */
	struct wap_held held;		/* what all clients have us hold, both doors */
	bool draining;			/* stopping: calls under way finish, no new ones */
	lws_sorted_usec_list_t sul;	/* wakes the loop while draining */
	struct wap_acp *acp;		/* the Agent Control Protocol, or NULL */
	struct lws_vhost *http_vh;	/* the --http port (NULL: none) */
	struct lws_vhost *ws_vh;	/* the --ws port when it is another one */
};

/* A connection, as the limit on them sees it: one that is not carrying
 * a request (never sent one, or kept alive between two) is idle, and
 * the one idle the longest makes room for a new connection when every
 * slot is taken.  So connections that never finish their headers,
 * however fast they are made again, cannot keep the clients with the
 * token out; a request under way and a WebSocket are never pushed out. */
struct slot {
	struct lws *wsi;
	int64_t idle_since;		/* µs, monotonic; 0: busy */
	bool going;			/* pushed out: closing */
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static struct slot *slot_of(struct httpd *h, struct lws *wsi)
{
	for (int i = 0; i < h->nslots; i++)
		if (h->slots[i].wsi == wsi)
			return &h->slots[i];
	return NULL;
}

/* bytes have come on the connection that the server has not read yet:
 * a request on its way, not a connection held open in silence */
static bool has_input(struct lws *wsi)
{
	int fd = lws_get_socket_fd(wsi), n = 0;

	return fd >= 0 && !ioctl(fd, FIONREAD, &n) && n > 0;
}

/* a new connection: room for it, pushing out the connection idle the
 * longest when every slot is taken (a silent one before one whose request
 * is waiting to be read: on a busy machine a client's request can wait
 * there while newer connections come); false to refuse it */
static bool slot_room(struct httpd *h)
{
	int max = (h->o->max_conns > 0 ? h->o->max_conns : 64) + (h->acp ? WAP_ACP_MAX_CLIENTS : 0);
	struct slot *old = NULL, *quiet = NULL;
	int live = 0;

	for (int i = 0; i < h->nslots; i++) {
		struct slot *s = &h->slots[i];
		if (s->going)
			continue;
		live++;
		if (s->idle_since && (!old || s->idle_since < old->idle_since))
			old = s;
	}
	if (live < max)
		return true;
	if (!old)
		return false;
	if (has_input(old->wsi)) {
		for (int i = 0; i < h->nslots; i++) {
			struct slot *s = &h->slots[i];
			if (!s->going && s->idle_since && (!quiet || s->idle_since < quiet->idle_since) &&
			    !has_input(s->wsi))
				quiet = s;
		}
		if (quiet)
			old = quiet;
	}
	old->going = true;
	lws_set_timeout(old->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	return true;
}

static int slot_add(struct httpd *h, struct lws *wsi)
{
	if (h->nslots == h->slotcap) {
		int cap = h->slotcap ? 2 * h->slotcap : 64;
		struct slot *n = realloc(h->slots, cap * sizeof(*n));
		if (!n)
			return -1;
		h->slots = n;
		h->slotcap = cap;
	}
	h->slots[h->nslots++] = (struct slot){ wsi, now_us(), false };
	return 0;
}

static void slot_del(struct httpd *h, struct lws *wsi)
{
	struct slot *s = slot_of(h, wsi);

	if (s)
		*s = h->slots[--h->nslots];
}

/* busy (a request under way, a WebSocket) or idle again; -1 when the
 * connection was pushed out */
static int slot_busy(struct httpd *h, struct lws *wsi, bool busy)
{
	struct slot *s = slot_of(h, wsi);

	if (!s)
		return 0;
	if (s->going)
		return -1;
	s->idle_since = busy ? 0 : now_us();
	return 0;
}

static volatile sig_atomic_t stop_flag;
static struct lws_context *stop_ctx;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag++;	/* a second signal ends the drain at once */
	if (stop_ctx)
		lws_cancel_service(stop_ctx);
}

/* ---- allow-lists ---- */

/* "host:port", "[v6]:port", "host" -> the host part, lower-case */
static void host_part(const char *in, char *out, size_t n)
{
	size_t i = 0;
	const char *p = in;

	if (*p == '[') {
		const char *e = strchr(p, ']');
		size_t l = e ? (size_t)(e - p + 1) : strlen(p);
		if (l >= n)
			l = n - 1;
		memcpy(out, p, l);
		out[l] = 0;
		return;
	}
	while (p[i] && p[i] != ':' && i + 1 < n) {
		out[i] = (char)((p[i] >= 'A' && p[i] <= 'Z') ? p[i] + 32 : p[i]);
		i++;
	}
	out[i] = 0;
}

static bool port_ok(const char *in)
{
	const char *p = in;

	if (*p == '[') {
		p = strchr(p, ']');
		if (!p)
			return false;
		p++;
	} else {
		p = strchr(p, ':');
		if (!p)
			return true;
	}
	if (!*p)
		return true;
	if (*p++ != ':' || !*p)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

static bool loopback_name(const char *h)
{
	return !strcmp(h, "localhost") || !strcmp(h, "127.0.0.1") || !strcmp(h, "[::1]");
}

static bool in_list(const char *h, char **extra)
{
	for (size_t i = 0; extra && extra[i]; i++) {
		char e[256];
		host_part(extra[i], e, sizeof(e));
		if (!strcasecmp(e, h) || !strcmp(extra[i], "*"))
			return true;
	}
	return false;
}

bool wap_http_host_ok(const char *host, char **extra)
{
	char h[256];

	if (!host || !*host || strlen(host) >= sizeof(h) || !port_ok(host))
		return false;
	host_part(host, h, sizeof(h));
	return loopback_name(h) || in_list(h, extra);
}

bool wap_http_origin_ok(const char *origin, char **extra)
{
	const char *p = strstr(origin, "://");
	char h[256];

	for (size_t i = 0; extra && extra[i]; i++)
		if (!strcasecmp(extra[i], origin) || !strcmp(extra[i], "*"))
			return true;
	if (!p || strncasecmp(origin, "http", 4))
		return false;	/* "null", file:, extensions */
	p += 3;
	if (strchr(p, '/') || strlen(p) >= sizeof(h) || !port_ok(p))
		return false;
	host_part(p, h, sizeof(h));
	if (loopback_name(h))
		return true;
	/* a bare host name in the list allows it on any scheme and port */
	for (size_t i = 0; extra && extra[i]; i++)
		if (!strstr(extra[i], "://")) {
			char e[256];
			host_part(extra[i], e, sizeof(e));
			if (!strcasecmp(e, h))
				return true;
		}
	return false;
}

bool wap_http_loopback(const char *host)
{
	unsigned char a[16];

	if (!strcmp(host, "localhost"))
		return true;
	if (inet_pton(AF_INET, host, a) == 1)
		return a[0] == 127;
	if (inet_pton(AF_INET6, host, a) == 1) {
		static const unsigned char one[16] = { [15] = 1 };
		static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };
		return !memcmp(a, one, 16) || (!memcmp(a, mapped, 12) && a[12] == 127);
	}
	return false;
}

static bool token_ok(const char *hdr, const char *token)
{
	size_t m;

	if (!hdr || strncasecmp(hdr, "Bearer ", 7))
		return false;
	hdr += 7;
	while (*hdr == ' ')
		hdr++;
	m = strlen(hdr);
	while (m && hdr[m - 1] == ' ')
		m--;
	return wap_token_equal(token, hdr, m);
}

/* ---- sessions (under h->mu) ---- */

static void sess_free(struct sess *x)
{
	wap_mcp_session_cancel_all(x->s);
	wap_mcp_session_unref(x->s);
	free(x);
}

/* at most once a second (what `used` counts in): not a walk of every
 * session on every request */
static void sess_sweep(struct httpd *h, time_t now)
{
	int idle = h->o->session_idle_s > 0 ? h->o->session_idle_s : 3600;

	if (now == h->swept)
		return;
	h->swept = now;
	for (struct sess **p = &h->sessions; *p;) {
		if (now - (*p)->used > idle) {
			struct sess *x = *p;
			*p = x->next;
			h->nsessions--;
			sess_free(x);
		} else {
			p = &(*p)->next;
		}
	}
}

/* The sessions kept at once.  With --roots-from-client each keeps up to
 * WAP_MCP_MAX_ROOTS descriptors, so no more than half the descriptors the
 * process may open go to them (1000 sessions of a root each passed a soft
 * limit of 1024: every grep, glob and exec of every client then failed,
 * "Too many open files"); the least recently used makes room, as past
 * the session limit. */
static int max_sessions(const struct httpd *h)
{
	int max = h->o->max_sessions > 0 ? h->o->max_sessions : 1000;
	struct rlimit rl;

	if (h->srv->roots_from_client && !getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY) {
		rlim_t by_fds = rl.rlim_cur / 2 / WAP_MCP_MAX_ROOTS;
		if (by_fds < (rlim_t)max)
			max = by_fds > 0 ? (int)by_fds : 1;
	}
	return max;
}

static struct sess *sess_new(struct httpd *h)
{
	struct sess *x = calloc(1, sizeof(*x));
	int max = max_sessions(h);
	time_t now = time(NULL);

	if (!x || wap_random_hex(x->id, 16, NULL)) {
		free(x);
		return NULL;
	}
	x->s = wap_mcp_session_new(h->srv, x->id);
	if (!x->s) {
		free(x);
		return NULL;
	}
	x->used = now;
	sess_sweep(h, now);
	while (h->nsessions >= max) {	/* drop the least recently used */
		struct sess **old = &h->sessions;
		for (struct sess **p = &h->sessions; *p; p = &(*p)->next)
			if ((*p)->used < (*old)->used)
				old = p;
		struct sess *gone = *old;
		*old = gone->next;
		h->nsessions--;
		sess_free(gone);
	}
	x->next = h->sessions;
	h->sessions = x;
	h->nsessions++;
	return x;
}

/* a session is found by its id in constant time, as the token is
 * (wap_token_equal): no early exit that times how much of an id matched */
static struct sess *sess_find(struct httpd *h, const char *id)
{
	time_t now = time(NULL);

	sess_sweep(h, now);
	for (struct sess *x = h->sessions; x; x = x->next)
		if (wap_token_equal(x->id, id, strlen(id))) {
			x->used = now;
			return x;
		}
	return NULL;
}

static bool sess_delete(struct httpd *h, const char *id)
{
	for (struct sess **p = &h->sessions; *p; p = &(*p)->next)
		if (wap_token_equal((*p)->id, id, strlen(id))) {
			struct sess *x = *p;
			*p = x->next;
			h->nsessions--;
			sess_free(x);
			return true;
		}
	return false;
}

/* ---- transactions ---- */

static void txn_free(struct txn *t)
{
	__atomic_fetch_sub(&t->h->live, 1, __ATOMIC_SEQ_CST);
	wap_held_sub(&t->h->held, t->held);
	wap_held_user(&t->h->held, -1);
	wap_sb_release(&t->body);
	wap_sb_release(&t->out);
	json_decref(t->msg);
	if (t->ms)
		wap_mcp_session_unref(t->ms);
	free(t);
}

static void unqueue(struct httpd *h, struct txn *t)
{
	for (struct txn **p = &h->ready; *p; p = &(*p)->next_ready)
		if (*p == t) {
			*p = t->next_ready;
			break;
		}
	t->queued = false;
}

/* the connection goes away (loop thread) */
static void txn_detach(struct httpd *h, struct txn *t)
{
	bool busy;

	pthread_mutex_lock(&h->mu);
	t->wsi = NULL;
	if (t->queued)
		unqueue(h, t);
	busy = t->busy;
	pthread_mutex_unlock(&h->mu);
	if (!busy)
		txn_free(t);
}

/* a worker has output for T: have the loop write it (h->mu held) */
static void wake(struct httpd *h, struct txn *t)
{
	if (t->wsi && !t->queued) {
		t->queued = true;
		t->next_ready = h->ready;
		h->ready = t;
	}
	lws_cancel_service(h->ctx);
}

/* What T has the server hold grows or shrinks by N (h->mu held, or T on
 * no worker).  Every byte of its body and its reply is counted. */
static void hold(struct txn *t, size_t n)
{
	wap_held_add(&t->h->held, n);
	t->held += n;
}

static void unhold(struct txn *t, size_t n)
{
	wap_held_sub(&t->h->held, n);
	t->held -= n;
}

/* its body, or the message parsed from it, is let go */
static void unhold_body(struct txn *t)
{
	unhold(t, t->held_body);
	t->held_body = 0;
}

static void out_add(struct txn *t, const char *s, size_t len)
{
	size_t was = t->out.len;

	wap_sb_add(&t->out, s, len);
	hold(t, t->out.len - was);
}

/* May T have the server hold LEN bytes more?  Not when that would put
 * all the clients of both doors over the cap and T over its share. */
static bool room(const struct txn *t, size_t len)
{
	return !wap_held_over(&t->h->held, t->held, len);
}

static void reply(struct txn *t, int status, const char *ctype, const char *body)
{
	t->status = status;
	t->ctype = ctype;
	if (body)
		out_add(t, body, strlen(body));
	t->done = true;
}

static void reply_json(struct txn *t, int status, const json_t *v)
{
	size_t len;
	char *s = wap_rpc_dump(v, &len);

	t->status = status;
	t->ctype = "application/json";
	if (s)
		out_add(t, s, len);
	free(s);
	t->done = true;
}

/* The server holds too much for its clients and T more than its share:
 * 503, the error of the request ID (NULL: none, a body cut short, a
 * batch) for the client to send again a little later. */
static json_t *busy_error(const struct txn *t, const json_t *id)
{
	struct wap_err e = { 0 };
	json_t *v;

	wap_err_set(&e, WAP_E_FAILED,
		    "Service Unavailable: the server holds over %zu MiB for its clients (requests, replies "
		    "not yet read) and this one would take more than its share; try again later",
		    t->h->held.max >> 20);
	v = wap_rpc_error_wap(id, &e);
	json_decref(e.details);
	return v;
}

static void reply_busy(struct txn *t, const json_t *id)
{
	json_t *v = busy_error(t, id);

	t->retry_after = true;
	reply_json(t, 503, v);
	json_decref(v);
}

/* R (a response, a batch's responses) as T's reply, or the 503 when
 * the server may not hold it (h->mu held, or T on no worker) */
static void reply_msg(struct txn *t, const json_t *r)
{
	size_t len;
	char *s = wap_rpc_dump(r, &len);

	if (s && !room(t, len)) {
		reply_busy(t, json_object_get(r, "id"));
	} else {
		t->status = 200;
		t->ctype = "application/json";
		if (s)
			out_add(t, s, len);
		t->done = true;
	}
	free(s);
}

static void reply_rpc_error(struct txn *t, int status, int code, const char *msg)
{
	json_t *e = wap_rpc_error(NULL, code, msg, NULL);

	reply_json(t, status, e);
	json_decref(e);
}

/* MSG as an event of T's stream (h->mu held).  Past what the server may
 * hold a notification or request is dropped, a response is the 503's
 * error. */
static void sse_event(struct txn *t, const json_t *msg)
{
	static const char pre[] = "event: message\ndata: ";
	size_t len;
	char *s = wap_rpc_dump(msg, &len);

	if (!s)
		return;
	if (!room(t, sizeof(pre) + 1 + len)) {
		json_t *e = json_object_get(msg, "method") ? NULL : busy_error(t, json_object_get(msg, "id"));
		free(s);
		s = e ? wap_rpc_dump(e, &len) : NULL;
		json_decref(e);
		if (!s)
			return;
	}
	out_add(t, pre, sizeof(pre) - 1);
	out_add(t, s, len);
	out_add(t, "\n\n", 2);
	free(s);
}

/* progress from a worker, into the event stream */
static void txn_send(void *arg, const json_t *msg)
{
	struct txn *t = arg;
	struct httpd *h = t->h;

	pthread_mutex_lock(&h->mu);
	if (t->sse) {
		sse_event(t, msg);
		wake(h, t);
	}
	pthread_mutex_unlock(&h->mu);
}

static json_t *batch_handler(void *arg, const struct wap_rpc_msg *m)
{
	struct txn *t = arg;

	return wap_mcp_handle(t->ms, m, NULL, NULL);
}

static void run_job(void *arg)
{
	struct txn *t = arg;
	struct httpd *h = t->h;
	json_t *r;
	bool gone;

	if (json_is_array(t->msg)) {
		r = wap_rpc_process_value(t->msg, &h->o->lim, batch_handler, t);
	} else {
		struct wap_rpc_msg m;
		wap_rpc_check(t->msg, &m, NULL);
		r = wap_mcp_handle(t->ms, &m, t->sse ? txn_send : NULL, t);
	}
	json_decref(t->msg);	/* its reply may wait long to be read */
	t->msg = NULL;
	pthread_mutex_lock(&h->mu);
	unhold_body(t);
	if (t->sse) {
		if (r)
			sse_event(t, r);
		t->done = true;
	} else if (r) {
		reply_msg(t, r);
	} else {
		t->status = 202;	/* cancelled: nothing to say */
		t->done = true;
	}
	t->busy = false;
	gone = !t->wsi;
	if (!gone)
		wake(h, t);
	pthread_mutex_unlock(&h->mu);
	json_decref(r);
	if (gone)
		txn_free(t);
}

static bool hdr(struct lws *wsi, enum lws_token_indexes tok, char *buf, int n)
{
	int l = lws_hdr_total_length(wsi, tok);

	buf[0] = 0;
	if (l <= 0)
		return false;
	if (l >= n || lws_hdr_copy(wsi, buf, n, tok) < 0) {
		buf[0] = 0;
		return true;	/* present but too long: callers see "" */
	}
	return true;
}

static bool custom_hdr(struct lws *wsi, const char *name, char *buf, int n)
{
	int nl = (int)strlen(name), l = lws_hdr_custom_length(wsi, name, nl);

	buf[0] = 0;
	if (l < 0)
		return false;
	if (l >= n || lws_hdr_custom_copy(wsi, buf, n, name, nl) < 0)
		buf[0] = 0;
	return true;
}

/* The one Host and Origin check of every request and every WebSocket
 * upgrade, on every port: NULL when WSI may talk to us, else why not
 * (*JSON: the body of the 403).  A browser always sends Origin: a page
 * from elsewhere (DNS rebinding, a cross-site page) is refused unless its
 * origin is loopback or listed; a client that is no browser sends none. */
static const char *foreign(struct httpd *h, struct lws *wsi, const char **json)
{
	char v[512];

	hdr(wsi, WSI_TOKEN_HOST, v, sizeof(v));
	if (!wap_http_host_ok(v, h->o->allowed_hosts)) {
		*json = "{\"error\":\"Forbidden: Host not allowed (see --allowed-hosts)\",\"code\":\"ACCESS_DENIED\"}";
		return "Host not allowed (see --allowed-hosts)";
	}
	if (hdr(wsi, WSI_TOKEN_ORIGIN, v, sizeof(v)) && !wap_http_origin_ok(v, h->o->allowed_origins)) {
		*json = "{\"error\":\"Forbidden: Origin not allowed (see --allowed-origins)\",\"code\":\"ACCESS_DENIED\"}";
		return "Origin not allowed (see allowedOrigins / --allowed-origins)";
	}
	return NULL;
}

/* Host, Origin and token; fills the reply and returns false when refused */
static bool admitted(struct httpd *h, struct txn *t)
{
	char v[512];
	const char *json;

	if (foreign(h, t->wsi, &json)) {
		reply(t, 403, "application/json", json);
		return false;
	}
	if (!h->o->no_auth) {
		bool ok = h->o->token && hdr(t->wsi, WSI_TOKEN_HTTP_AUTHORIZATION, v, sizeof(v)) && token_ok(v, h->o->token);
		if (!ok) {
			t->www_auth = true;
			reply(t, 401, "application/json",
			      "{\"error\":\"Unauthorized: send Authorization: Bearer TOKEN\",\"code\":\"ACCESS_DENIED\"}");
			return false;
		}
	}
	return true;
}

/* Is the Content-Type V application/json (parameters aside)?  It must be
 * there: a POST with none, text/plain or a form is what a browser sends
 * from any page without a preflight, so only the Origin check would stand
 * between such a page and the tools, and that check lets loopback pages of
 * any port through (with --no-auth nothing else is asked). */
static bool json_media_type(const char *v)
{
	while (*v == ' ' || *v == '\t')
		v++;
	if (strncasecmp(v, "application/json", 16))
		return false;
	v += 16;
	while (*v == ' ' || *v == '\t')
		v++;
	return !*v || *v == ';';
}

/* write the headers, then the body a chunk at a time: 0 more to come,
 * 1 the transaction is complete, -1 close the connection */
/* Everything about a POST /mcp once its body is in (loop thread). */
static void post_mcp(struct httpd *h, struct txn *t)
{
	char v[256], sid[80] = "";
	json_t *msg, *err = NULL;
	struct wap_rpc_msg m;
	bool has_request = false, is_init = false, ask_roots;
	struct sess *x;

	if (!admitted(h, t))
		return;
	if (custom_hdr(t->wsi, "mcp-protocol-version:", v, sizeof(v)) && !wap_mcp_version_ok(v)) {
		char msg2[200];
		snprintf(msg2, sizeof(msg2), "Bad Request: unsupported MCP-Protocol-Version '%.64s' (%s, %s, %s, %s)",
			 v, wap_mcp_versions[0], wap_mcp_versions[1], wap_mcp_versions[2], wap_mcp_versions[3]);
		reply_rpc_error(t, 400, WAP_RPC_INVALID_REQUEST, msg2);
		return;
	}
	msg = wap_rpc_parse(t->body.buf ? t->body.buf : "", t->body.len, &h->o->lim, &err);
	wap_sb_release(&t->body);	/* (still held, as the message, until its call ends) */
	if (!msg) {
		reply_json(t, 400, err);
		json_decref(err);
		return;
	}
	if (json_is_array(msg)) {
		size_t i;
		json_t *el;
		json_array_foreach(msg, i, el) {
			if (wap_rpc_check(el, &m, NULL) == WAP_RPC_REQUEST) {
				has_request = true;
				is_init = is_init || !strcmp(m.method, "initialize");
			}
		}
		if (is_init) {
			reply_rpc_error(t, 400, WAP_RPC_INVALID_REQUEST,
					"Invalid Request: initialize cannot be part of a batch");
			json_decref(msg);
			return;
		}
	} else {
		if (wap_rpc_check(msg, &m, &err) == WAP_RPC_INVALID) {
			reply_json(t, 400, err);
			json_decref(err);
			json_decref(msg);
			return;
		}
		has_request = m.kind == WAP_RPC_REQUEST;
		is_init = has_request && !strcmp(m.method, "initialize");
	}

	pthread_mutex_lock(&h->mu);
	if (is_init) {
		x = sess_new(h);
		if (!x) {
			pthread_mutex_unlock(&h->mu);
			reply_rpc_error(t, 500, WAP_RPC_INTERNAL, "Internal error: cannot create a session");
			json_decref(msg);
			return;
		}
	} else if ((!custom_hdr(t->wsi, "mcp-session-id:", sid, sizeof(sid)) || !*sid) &&
		   h->srv->profile->stateless) {
		/* the profile's document POSTs calls with no session: this
		 * request gets one of its own, gone with its reply */
		pthread_mutex_unlock(&h->mu);
		if (!(t->ms = wap_mcp_session_new(h->srv, "stateless"))) {
			reply_rpc_error(t, 500, WAP_RPC_INTERNAL, "Internal error: cannot create a session");
			json_decref(msg);
			return;
		}
		t->sid[0] = 0;
		x = NULL;
	} else if (!*sid) {
		pthread_mutex_unlock(&h->mu);
		reply_rpc_error(t, 400, WAP_RPC_INVALID_REQUEST,
				"Bad Request: Mcp-Session-Id header is required (send initialize first)");
		json_decref(msg);
		return;
	} else if (!(x = sess_find(h, sid))) {
		pthread_mutex_unlock(&h->mu);
		reply_rpc_error(t, 404, -32001, "Session not found (expired or deleted): initialize again");
		json_decref(msg);
		return;
	}
	if (x) {
		t->ms = x->s;
		wap_mcp_session_ref(t->ms);
		snprintf(t->sid, sizeof(t->sid), "%s", x->id);
		pthread_mutex_unlock(&h->mu);
	}

	if (!has_request) {
		/* notifications and responses: handled now (a cancel must not wait) */
		json_t *r = json_is_array(msg) ? wap_rpc_process_value(msg, &h->o->lim, batch_handler, t)
					       : wap_mcp_handle(t->ms, &m, NULL, NULL);
		json_decref(r);
		json_decref(msg);
		reply(t, 202, NULL, NULL);
		if (is_init)
			t->sid[0] = 0;
		return;
	}
	/* the session wants the client's roots: this request's reply becomes
	 * an event stream that asks roots/list first (the client POSTs the
	 * answer); the call then runs in the narrowed root */
	ask_roots = !json_is_array(msg) && !is_init && wap_mcp_roots_due(t->ms) &&
		    hdr(t->wsi, WSI_TOKEN_HTTP_ACCEPT, v, sizeof(v)) && strstr(v, "text/event-stream");
	if (!json_is_array(msg) && !ask_roots && !wap_mcp_slow(t->ms, &m)) {
		/* run here; a quick call that finds it is not (an archive to
		 * unpack) goes to a worker below: the service thread goes on */
		bool again = false;
		json_t *r;
		m.requeue = wap_mcp_tool_call(t->ms, &m) ? &again : NULL;
		r = wap_mcp_handle(t->ms, &m, NULL, NULL);
		m.requeue = NULL;
		if (!again) {
			if (r)
				reply_msg(t, r);
			else
				reply(t, 202, NULL, NULL);
			json_decref(r);
			json_decref(msg);
			if (!is_init)
				t->sid[0] = 0;	/* the header is sent with initialize's reply only */
			return;
		}
		json_decref(r);
		wap_mcp_expect(t->ms, m.id);
	} else if (!json_is_array(msg) && wap_mcp_slow(t->ms, &m)) {
		wap_mcp_expect(t->ms, m.id);
	}
	t->sid[0] = 0;
	if (!json_is_array(msg)) {
		if (ask_roots || (wap_mcp_wants_progress(&m) &&
		    hdr(t->wsi, WSI_TOKEN_HTTP_ACCEPT, v, sizeof(v)) && strstr(v, "text/event-stream"))) {
			t->sse = true;
			t->status = 200;
			t->ctype = "text/event-stream";
		}
	}
	if (ask_roots)	/* before the job: the call waits for the answer */
		wap_mcp_request_roots(t->ms, txn_send, t);
	t->msg = msg;
	t->busy = true;
	if (wap_workers_submit(h->workers, run_job, t)) {
		t->busy = false;
		t->msg = NULL;
		json_decref(msg);
		t->sse = false;
		wap_sb_release(&t->out);	/* a roots/list event already in */
		reply_rpc_error(t, 500, WAP_RPC_INTERNAL, WAP_RPC_OOM_MSG);
	}
}

static void request(struct httpd *h, struct txn *t)
{
	char sid[80];

	if (!strcmp(t->path, "/health")) {
		char body[160];
		if (t->method != M_GET) {
			t->allow = "GET";
			reply(t, 405, "application/json", "{\"error\":\"Method Not Allowed\"}");
			return;
		}
		if (h->draining) {	/* not ready: a balancer sends no more */
			reply(t, 503, "application/json", "{\"status\":\"draining\",\"service\":\"wap\"}");
			return;
		}
		/* a profile answers as its document's service does */
		snprintf(body, sizeof(body), "{\"status\":\"ok\",\"service\":\"%s\",\"version\":\"%s\"}",
			 h->srv->profile->server_name ? h->srv->profile->server_name : "wap",
			 h->srv->profile->server_version ? h->srv->profile->server_version : WAP_VERSION);
		reply(t, 200, "application/json", body);
		return;
	}
	if (strcmp(t->path, "/mcp") && strcmp(t->path, "/mcp/")) {
		reply(t, 404, "application/json", "{\"error\":\"Not Found: MCP is served at /mcp\"}");
		return;
	}
	if (!admitted(h, t))
		return;
	if (t->method == M_DELETE) {
		bool found;
		if (!custom_hdr(t->wsi, "mcp-session-id:", sid, sizeof(sid)) || !*sid) {
			reply_rpc_error(t, 400, WAP_RPC_INVALID_REQUEST, "Bad Request: Mcp-Session-Id header is required");
			return;
		}
		pthread_mutex_lock(&h->mu);
		found = sess_delete(h, sid);
		pthread_mutex_unlock(&h->mu);
		if (found)
			reply(t, 200, "application/json", "{}");
		else
			reply_rpc_error(t, 404, -32001, "Session not found");
		return;
	}
	if (t->method == M_GET && custom_hdr(t->wsi, "mcp-session-id:", sid, sizeof(sid)) && *sid) {
		/* a session that is gone is 404 (the client initializes again)
		 * whatever the method; a live one has no GET stream */
		bool found;
		pthread_mutex_lock(&h->mu);
		found = sess_find(h, sid) != NULL;
		pthread_mutex_unlock(&h->mu);
		if (!found) {
			reply_rpc_error(t, 404, -32001, "Session not found");
			return;
		}
	}
	t->allow = "POST, DELETE";
	reply(t, 405, "application/json",
	      "{\"error\":\"Method Not Allowed: POST JSON-RPC messages to /mcp (no server-initiated stream)\"}");
}

static size_t max_message(const struct httpd *h)
{
	return h->o->lim.max_message ? h->o->lim.max_message : WAP_RPC_MAX_MESSAGE;
}

static void reply_too_big(struct httpd *h, struct txn *t)
{
	char msg[120];

	snprintf(msg, sizeof(msg), "Invalid Request: message over the limit of %zu bytes (--max-message)",
		 max_message(h));
	reply_rpc_error(t, 413, WAP_RPC_INVALID_REQUEST, msg);
}

/* A POST's headers are in, its body not yet: everything that can refuse
 * it is decided now, so a client that may not talk to us cannot make us
 * read (let alone keep) a byte of its body.  Fills the reply and marks
 * the connection to be closed when refused. */
static bool post_headers_ok(struct httpd *h, struct txn *t)
{
	char v[256];

	if (h->draining) {
		reply(t, 503, "application/json",
		      "{\"error\":\"Service Unavailable: the server is stopping\",\"code\":\"EXECUTION_FAILED\"}");
	} else if (strcmp(t->path, "/mcp") && strcmp(t->path, "/mcp/")) {
		request(h, t);	/* 404, or 405 on /health */
	} else if (!admitted(h, t)) {
		;
	} else if (!hdr(t->wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, v, sizeof(v)) || !json_media_type(v)) {
		reply_rpc_error(t, 415, WAP_RPC_INVALID_REQUEST,
				"Unsupported Media Type: Content-Type must be application/json");
	} else if (lws_hdr_total_length(t->wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0) {
		/* libwebsockets does not decode chunked request bodies */
		reply_rpc_error(t, 411, WAP_RPC_INVALID_REQUEST,
				"Length Required: send the message with a Content-Length (no chunked bodies)");
	} else if (!hdr(t->wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, v, sizeof(v))) {
		/* no length: libwebsockets reads no body and never says the
		 * body is complete, so the request would wait for the body
		 * timeout and be dropped unanswered */
		reply_rpc_error(t, 411, WAP_RPC_INVALID_REQUEST,
				"Length Required: send the message with a Content-Length");
	} else {
		char *end;
		unsigned long long n;
		errno = 0;
		n = strtoull(v, &end, 10);
		if (!*v || *v == '-' || *end || errno == ERANGE || n > max_message(h))
			reply_too_big(h, t);
	}
	if (!t->status)
		return true;
	t->close = true;
	return false;
}

static int write_some(struct httpd *h, struct txn *t)
{
	unsigned char *start = h->wbuf + LWS_PRE, *p = start, *end = h->wbuf + LWS_PRE + CHUNK;
	size_t n = 0;
	bool final, sse;
	int status;

	pthread_mutex_lock(&h->mu);
	status = t->status;
	sse = t->sse;
	if (!status) {
		pthread_mutex_unlock(&h->mu);
		return 0;
	}
	if (!t->headers_sent) {
		lws_filepos_t len = sse || !t->done ? LWS_ILLEGAL_HTTP_CONTENT_LEN : t->out.len;
		if (lws_add_http_common_headers(t->wsi, (unsigned)status, t->ctype, len, &p, end) ||
		    (t->sid[0] && lws_add_http_header_by_name(t->wsi, (const unsigned char *)"mcp-session-id:",
				(const unsigned char *)t->sid, (int)strlen(t->sid), &p, end)) ||
		    (t->allow && lws_add_http_header_by_name(t->wsi, (const unsigned char *)"allow:",
				(const unsigned char *)t->allow, (int)strlen(t->allow), &p, end)) ||
		    (t->www_auth && lws_add_http_header_by_name(t->wsi, (const unsigned char *)"www-authenticate:",
				(const unsigned char *)"Bearer", 6, &p, end)) ||
		    (t->retry_after && lws_add_http_header_by_name(t->wsi, (const unsigned char *)"retry-after:",
				(const unsigned char *)"2", 1, &p, end)) ||
		    (t->close && lws_add_http_header_by_name(t->wsi, (const unsigned char *)"connection:",
				(const unsigned char *)"close", 5, &p, end)) ||
		    (sse && lws_add_http_header_by_name(t->wsi, (const unsigned char *)"cache-control:",
				(const unsigned char *)"no-cache", 8, &p, end))) {
			pthread_mutex_unlock(&h->mu);
			return -1;
		}
		t->headers_sent = true;
		final = t->done && !t->out.len;
		if (t->done && !sse && t->out.len <= (size_t)(end - p) - 16) {
			/* small and complete: headers and body in one write, one packet */
			if (lws_finalize_http_header(t->wsi, &p, end)) {
				pthread_mutex_unlock(&h->mu);
				return -1;
			}
			if ((size_t)(end - p) < t->out.len) {
				pthread_mutex_unlock(&h->mu);
				return -1;
			}
			if (t->out.len)
				memcpy(p, t->out.buf, t->out.len);
			p += t->out.len;
			t->sent = t->out.len;
			pthread_mutex_unlock(&h->mu);
			if (lws_write(t->wsi, start, lws_ptr_diff(p, start), LWS_WRITE_HTTP_HEADERS) !=
			    lws_ptr_diff(p, start))
				return -1;
			return t->close ? -1 : 1;
		}
		pthread_mutex_unlock(&h->mu);
		if (lws_finalize_write_http_header(t->wsi, start, &p, end))
			return -1;
		if (!final) {
			lws_callback_on_writable(t->wsi);
			return 0;
		}
		return sse || t->close ? -1 : 1;
	}
	n = t->out.len - t->sent;
	if (n > CHUNK)
		n = CHUNK;
	if (n)
		memcpy(start, t->out.buf + t->sent, n);
	t->sent += n;
	final = t->done && t->sent == t->out.len;
	pthread_mutex_unlock(&h->mu);
	if ((n || final) && lws_write(t->wsi, start, n, final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)n)
		return -1;
	if (final) {
		if (sse || t->close)
			return -1;	/* the stream ends with the connection */
		return 1;
	}
	pthread_mutex_lock(&h->mu);
	if (t->sent < t->out.len) {
		lws_callback_on_writable(t->wsi);
	} else {	/* a stream's events sent are let go */
		unhold(t, t->out.len);
		wap_sb_release(&t->out);
		t->sent = 0;
	}
	pthread_mutex_unlock(&h->mu);
	return 0;
}

static int body_timeout(const struct httpd *h)
{
	return h->o->body_timeout_s > 0 ? h->o->body_timeout_s : 30;
}

/* A WebSocket upgrade passes the one gate (Host, Origin, the drain)
 * before the protocol gets it; refused with its status, said before the
 * upgrade. */
static bool upgrade_ok(struct httpd *h, struct lws *wsi, const char *what)
{
	const char *why, *json;

	if (!h->acp || !what || strcmp(what, "websocket")) {
		lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND,
				       "No WebSocket here (serve --ws for the Agent Control Protocol)");
		return false;
	}
	if (h->draining) {
		lws_return_http_status(wsi, HTTP_STATUS_SERVICE_UNAVAILABLE, "The server is stopping");
		return false;
	}
	if ((why = foreign(h, wsi, &json))) {
		wap_acp_refused(h->acp, why);
		lws_return_http_status(wsi, HTTP_STATUS_FORBIDDEN, why);
		return false;
	}
	return true;
}

/* A request pipelined behind another on the connection is parsed out of
 * libwebsockets' buffer list, and lws_http_action (4.1, and its main
 * branch) reads that list again for the body while its caller is still
 * parsing the headers out of it: the body handed to us starts with the
 * request's own first bytes ("POST /mcp HTTP/1.1", the method in any case
 * lws takes), and when the body said to come is as long as what is left
 * of that buffer, lws frees the buffer and its caller goes on handing us
 * the rest from freed memory (ASan saw the copy: a heap-use-after-free).
 * So a body's first bytes are looked at before any is kept, whatever the
 * request: a method and a space, which no JSON text starts with, is that
 * misreading, refused there, saying why, and the connection is closed at
 * once, before lws frees anything (it stops when the body callback
 * fails).  (Answering it would need an HTTP/1.1 parser of our own in
 * front of libwebsockets.) */
static bool misread(const char *in, size_t len)
{
	static const char *const methods[] = {
		"get ", "post ", "put ", "patch ", "delete ", "options ", "head ", "connect ", NULL
	};

	for (const char *const *m = methods; *m; m++) {
		size_t n = strlen(*m);
		if (len >= n && !strncasecmp(in, *m, n))
			return true;
	}
	return false;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct pss *ps = user;
	struct httpd *h = lws_context_user(lws_get_context(wsi));
	struct txn *t;
	struct timespec now;
	int r;

	/* connections: in a slot from creation to destruction; past the
	 * limit (HTTP's and, beside them, the WebSocket clients') the one
	 * idle the longest makes room, or the new one is closed at accept */
	switch (reason) {
	case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
		return h && !slot_room(h);
	case LWS_CALLBACK_WSI_CREATE:
		return h ? slot_add(h, wsi) : 0;
	case LWS_CALLBACK_WSI_DESTROY:
		if (h)
			slot_del(h, wsi);
		return 0;
	/* a WebSocket: the upgrade passes the one gate, then the connection
	 * is the protocol's */
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		return h && upgrade_ok(h, wsi, in) && !slot_busy(h, wsi, true) ? 0 : 1;
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
	case LWS_CALLBACK_ESTABLISHED:
	case LWS_CALLBACK_RECEIVE:
	case LWS_CALLBACK_SERVER_WRITEABLE:
	case LWS_CALLBACK_CLOSED:
		if (!h || !h->acp)
			return -1;
		return wap_acp_callback(h->acp, wsi, reason, ps ? &ps->acp : NULL, in, len);
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		if (h && h->acp)
			wap_acp_callback(h->acp, wsi, reason, NULL, in, len);
		break;
	default:
		break;
	}
	t = ps ? ps->t : NULL;
	clock_gettime(CLOCK_MONOTONIC, &now);
	switch (reason) {
	case LWS_CALLBACK_HTTP:
		if (slot_busy(h, wsi, true))
			return -1;	/* pushed out before its request came */
		if (t)
			txn_detach(h, t);
		t = ps->t = calloc(1, sizeof(*t));
		if (!t)
			return -1;
		__atomic_fetch_add(&h->live, 1, __ATOMIC_SEQ_CST);
		wap_held_user(&h->held, 1);
		t->h = h;
		t->wsi = wsi;
		t->t0 = now.tv_sec;
		snprintf(t->path, sizeof(t->path), "%s", (const char *)in);
		if (h->ws_vh && lws_get_vhost(wsi) == h->ws_vh) {
			/* the --ws port: the protocol, no MCP */
			t->close = true;
			reply(t, 404, "application/json",
			      "{\"error\":\"Not Found: this port serves the Agent Control Protocol (WebSocket)\"}");
			lws_callback_on_writable(wsi);
			return 0;
		}
		if (lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0)
			t->method = M_POST;
		else if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0)
			t->method = M_GET;
		else if (lws_hdr_total_length(wsi, WSI_TOKEN_DELETE_URI) > 0)
			t->method = M_DELETE;
		if (t->method == M_POST) {
			if (post_headers_ok(h, t)) {
				/* the whole body within body_timeout_s, however
				 * it trickles (checked as it comes, and lws
				 * drops a connection that goes quiet) */
				lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, body_timeout(h));
				return 0;	/* answer once the body is in */
			}
		} else if (h->draining) {
			t->close = true;
			if (!strcmp(t->path, "/health"))
				request(h, t);
			else
				post_headers_ok(h, t);
		} else {
			request(h, t);
			/* a body we will not read: the connection ends with the reply */
			if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0 ||
			    lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0)
				t->close = true;
		}
		lws_callback_on_writable(wsi);
		return 0;
	case LWS_CALLBACK_HTTP_BODY:
		if (!t)
			return -1;
		if (!t->body_seen) {
			t->body_seen = true;
			if (misread(in, len)) {
				if (!t->status)
					reply_rpc_error(t, 400, WAP_RPC_INVALID_REQUEST,
							"Bad Request: a request pipelined behind another on the connection "
							"cannot be read here (libwebsockets 4.1): send it again once the last "
							"reply is in");
				t->close = true;
				write_some(h, t);
				return -1;
			}
		}
		if (t->status)
			return 0;	/* refused from its headers: not kept */
		if (now.tv_sec - t->t0 > body_timeout(h))
			return -1;	/* a body trickled to hold the connection */
		if (t->body.len + len > max_message(h) || !room(t, len)) {
			/* a body longer than it said, or more than the server
			 * may hold for this client now: refused at once */
			bool big = t->body.len + len > max_message(h);
			wap_sb_release(&t->body);
			unhold_body(t);
			t->too_big = big;
			if (big)
				reply_too_big(h, t);
			else
				reply_busy(t, NULL);
			t->close = true;
			lws_callback_on_writable(wsi);
			return 0;
		}
		wap_sb_add(&t->body, in, len);
		hold(t, len);
		t->held_body += len;
		return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		if (!t)
			return -1;
		if (t->body_done) {
			/* a request pipelined behind this one: libwebsockets'
			 * h1 parser hands it back as this body's completion,
			 * again and again, a loop that never sleeps.  This
			 * reply goes out if it is ready, then the connection
			 * closes (the client sends the rest again) */
			pthread_mutex_lock(&h->mu);
			r = t->done && !t->busy;
			pthread_mutex_unlock(&h->mu);
			t->close = true;
			if (r)
				write_some(h, t);
			return -1;
		}
		t->body_done = true;
		if (t->status)
			return 0;	/* already answered */
		if (!strcmp(t->path, "/mcp") || !strcmp(t->path, "/mcp/"))
			post_mcp(h, t);
		else
			request(h, t);
		pthread_mutex_lock(&h->mu);
		if (!t->busy)	/* no call runs it: its message is let go */
			unhold_body(t);
		pthread_mutex_unlock(&h->mu);
		lws_callback_on_writable(wsi);
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		if (!t)
			return 0;
		r = write_some(h, t);
		if (r < 0)
			return -1;
		if (r > 0) {	/* transaction over; the connection may carry another */
			ps->t = NULL;
			txn_detach(h, t);
			if (lws_http_transaction_completed(wsi))
				return -1;
			return slot_busy(h, wsi, false);
		}
		return 0;
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		if (t) {
			ps->t = NULL;
			txn_detach(h, t);
		}
		break;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		if (!h)
			break;
		pthread_mutex_lock(&h->mu);
		while (h->ready) {
			struct txn *x = h->ready;
			h->ready = x->next_ready;
			x->queued = false;
			if (x->wsi)
				lws_callback_on_writable(x->wsi);
		}
		pthread_mutex_unlock(&h->mu);
		return 0;
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* One callback for both: HTTP requests and, after an upgrade, the
 * WebSocket's events (a client asking for the "acp" subprotocol by name
 * gets the same). */
static const struct lws_protocols protocols[] = {
	{ "http", callback, sizeof(struct pss), 65536, 0, NULL, 0 },
	{ "acp", callback, sizeof(struct pss), 65536, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static int parse_listen(const char *s, char *host, size_t n, int *port)
{
	const char *colon;
	char *end;
	long p;

	if (s[0] == '[') {
		const char *e = strchr(s, ']');
		if (!e || e[1] != ':' || (size_t)(e - s - 1) >= n)
			return -1;
		memcpy(host, s + 1, e - s - 1);
		host[e - s - 1] = 0;
		colon = e + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon) {
			colon = s - 1;	/* just a port */
			snprintf(host, n, "127.0.0.1");
		} else if ((size_t)(colon - s) >= n) {
			return -1;
		} else {
			memcpy(host, s, colon - s);
			host[colon - s] = 0;
		}
	}
	if (!host[0] || !strcmp(host, "localhost"))
		snprintf(host, n, "127.0.0.1");
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p < 0 || p > 65535)
		return -1;
	*port = (int)p;
	return 0;
}

/* Why HOST:PORT cannot be bound, for the error: libwebsockets only logs
 * it.  Binds a socket of our own and says what bind() says. */
static const char *bind_error(const char *host, int port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(port) };
	bool v6 = strchr(host, ':') != NULL;
	int fd, one = 1, e = 0;

	if (v6 ? inet_pton(AF_INET6, host, &a6.sin6_addr) != 1 : inet_pton(AF_INET, host, &a4.sin_addr) != 1)
		return "see the libwebsockets lines above";
	fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return strerror(errno);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6 ? bind(fd, (struct sockaddr *)&a6, sizeof(a6)) : bind(fd, (struct sockaddr *)&a4, sizeof(a4)))
		e = errno;
	close(fd);
	if (e == EACCES && port < 1024)
		return "Permission denied (a port below 1024 needs root or CAP_NET_BIND_SERVICE; "
		       "use a higher one, e.g. PORT=8080)";
	return e ? strerror(e) : "libwebsockets could not set up the listener";
}

/* while draining: wake the loop now and then to look at the clock */
static void drain_tick(lws_sorted_usec_list_t *sul)
{
	struct httpd *h = lws_container_of(sul, struct httpd, sul);

	lws_sul_schedule(h->ctx, 0, &h->sul, drain_tick, 100 * LWS_US_PER_MS);
}

static void (*log_fn)(const char *line);

static void lws_log(int level, const char *line)
{
	if ((level & (LLL_ERR | LLL_WARN)) && log_fn)
		log_fn(line);
}

/* HOST (a name or an address) as an address: libwebsockets wants one
 * (or an interface name).  Into BUF, else HOST as it is. */
static const char *resolve(const char *host, char *buf, size_t n)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICSERV, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	const char *r = host;

	if (getaddrinfo(host, NULL, &hints, &ai) == 0 && ai) {
		if (getnameinfo(ai->ai_addr, ai->ai_addrlen, buf, n, NULL, 0, NI_NUMERICHOST) == 0)
			r = buf;
		freeaddrinfo(ai);
	}
	return r;
}

/* A listening port of the one context: its own vhost. */
static struct lws_vhost *listen_on(struct httpd *h, const struct lws_context_creation_info *base,
				   const char *name, const char *host, int port)
{
	struct lws_context_creation_info info = *base;

	info.vhost_name = name;
	info.port = port;
	info.iface = strcmp(host, "0.0.0.0") && strcmp(host, "::") ? host : NULL;
	if (!strchr(host, ':'))
		info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
	return lws_create_vhost(h->ctx, &info);
}

/* Wait (serving) until the calls under way of both doors are answered,
 * for MS at most or until a second signal. */
static void drain(struct httpd *h, long ms)
{
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	lws_sul_schedule(h->ctx, 0, &h->sul, drain_tick, 100 * LWS_US_PER_MS);
	while ((__atomic_load_n(&h->live, __ATOMIC_SEQ_CST) > 0 || (h->acp && !wap_acp_idle(h->acp))) &&
	       stop_flag < 2) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			break;
		if (lws_service(h->ctx, 0) < 0)
			break;
	}
	if (h->acp) {	/* server.shutdown, then each client closed (a second at most) */
		wap_acp_shutdown(h->acp);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (wap_acp_clients(h->acp)) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 > 1000)
				break;
			lws_service(h->ctx, 0);
		}
	}
	lws_sul_cancel(&h->sul);
}

int wap_http_serve(struct wap_mcp_server *srv, const struct wap_http_opts *o, struct wap_err *err)
{
	struct lws_context_creation_info info;
	struct httpd h = { 0 };
	struct sigaction sa = { 0 }, old_int, old_term;
	char host[128], wsbuf[128];
	const char *wshost = NULL;
	int port = 0, rc = 0;

	if (o->listen && parse_listen(o->listen, host, sizeof(host), &port))
		return wap_err_set(err, WAP_E_INVALID, "--http wants HOST:PORT (e.g. 127.0.0.1:8765), not '%s'",
				   o->listen);
	if (!o->listen && !o->acp)
		return wap_err_set(err, WAP_E_INVALID, "nothing to serve: no --http and no --ws");
	/* never an open door: no token only when asked, and only on loopback */
	if (o->listen && !o->no_auth && (!o->token || !*o->token))
		return wap_err_set(err, WAP_E_INVALID, "refusing to serve HTTP without a token");
	if (o->listen && o->no_auth && !wap_http_loopback(host))
		return wap_err_set(err, WAP_E_INVALID,
				   "--no-auth is allowed only on a loopback address (127.0.0.1, ::1), not %s", host);
	h.srv = srv;
	h.o = o;
	h.acp = o->acp;
	h.wbuf = malloc(LWS_PRE + CHUNK);
	pthread_mutex_init(&h.mu, NULL);
	wap_held_init(&h.held);
	/* MCP calls run on workers; WebSocket clients have a thread each */
	h.workers = o->listen ? wap_workers_new(o->workers > 0 ? o->workers : 4) : NULL;
	if (!h.wbuf || (o->listen && !h.workers)) {
		rc = wap_err_oom(err);
		goto out;
	}
	log_fn = o->log;
	if (wap_lazy_load(WAP_LIB_LWS, err)) {
		rc = -1;
		goto out;
	}
	lws_set_log_level(LLL_ERR, lws_log);
	/* one context; a vhost for each port (--http's, --ws's when it is
	 * another one); the same protocols on both */
	memset(&info, 0, sizeof(info));
	info.protocols = protocols;
	info.user = &h;
	info.gid = -1;
	info.uid = -1;
	/* without FAIL_UPON_UNABLE_TO_BIND a port that cannot be bound is
	 * only logged, and wap would go on "serving" nothing */
	info.options = LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS | LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND |
		       LWS_SERVER_OPTION_VALIDATE_UTF8 | LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	info.timeout_secs = 60;
	info.keepalive_timeout = 30;
	info.timeout_secs_ah_idle = 10;	/* headers that never finish */
	h.ctx = lws_create_context(&info);
	if (!h.ctx) {
		rc = wap_err_set(err, WAP_E_FAILED, "cannot start the HTTP/WebSocket server");
		goto out;
	}
	if (o->listen && !(h.http_vh = listen_on(&h, &info, "http", host, port))) {
		rc = wap_err_set(err, WAP_E_FAILED, "cannot listen on %s: %s", o->listen, bind_error(host, port));
		goto destroy;
	}
	if (h.acp) {
		const struct wap_acp_opts *ao = wap_acp_opts(h.acp);
		int wport = ao->port;
		wshost = resolve(ao->host, wsbuf, sizeof(wsbuf));
		wap_acp_attach(h.acp, h.ctx, o->lim.max_message, &h.held);
		if (h.http_vh && wport && wport == port && !strcmp(wshost, host)) {
			h.ws_vh = NULL;	/* the same port: one vhost serves both */
		} else if (!(h.ws_vh = listen_on(&h, &info, "ws", wshost, wport))) {
			rc = wap_err_set(err, WAP_E_FAILED, "Cannot listen on ws://%s:%d: %s", wshost, wport,
					 bind_error(wshost, wport));
			goto destroy;
		}
		wap_acp_listening(h.acp, wshost, lws_get_vhost_listen_port(h.ws_vh ? h.ws_vh : h.http_vh));
	}
	if (h.http_vh && o->on_listen &&
	    o->on_listen(o->arg, host, lws_get_vhost_listen_port(h.http_vh), srv->profile->name, err)) {
		rc = -1;
		goto destroy;
	}
	stop_flag = 0;
	stop_ctx = h.ctx;
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	while (!stop_flag)
		if (lws_service(h.ctx, 0) < 0)
			break;
	/* one drain for both doors: the calls under way finish and are
	 * answered (drain_s at most, or until a second signal); new requests,
	 * upgrades and /health get 503, new WebSocket requests an error */
	h.draining = true;
	if (h.acp)
		wap_acp_drain(h.acp);
	drain(&h, (o->drain_s > 0 ? o->drain_s : 10) * 1000L);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	/* cancel what is left, then close every connection */
	pthread_mutex_lock(&h.mu);
	for (struct sess *x = h.sessions; x; x = x->next)
		wap_mcp_session_cancel_all(x->s);
	pthread_mutex_unlock(&h.mu);
	wap_workers_free(h.workers);
	h.workers = NULL;
	stop_ctx = NULL;
destroy:
	if (h.acp)
		wap_acp_detach(h.acp);
	lws_context_destroy(h.ctx);	/* closes every client: their terminals die */
out:
	wap_workers_free(h.workers);
	while (h.sessions) {
		struct sess *x = h.sessions;
		h.sessions = x->next;
		sess_free(x);
	}
	pthread_mutex_destroy(&h.mu);
	free(h.wbuf);
	free(h.slots);
	return rc;
}
