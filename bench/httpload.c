/* httpload.c - the HTTP load client of bench/serve.sh: CLIENTS keep-alive
 * HTTP/1.1 connections to an MCP Streamable HTTP server, a session each
 * (initialize, then notifications/initialized, as the spec asks), then N
 * tools/call of one tool spread over them, one request in flight on a
 * connection, one thread, epoll.  Every reply must be a 200 carrying the
 * JSON-RPC id of its request and no "isError":true, and, with -c, contain
 * TEXT; anything else counts as an error (and the exit status is 1).
 *   closed loop (default): a connection sends its next call as soon as the
 *     reply to the last one is in: the most the server and client can do;
 *     latency from sending a request to its whole reply read;
 *   open loop (-r RATE): call i is due at start + i / RATE, sent on an idle
 *     connection (the next one round the ring) when it is due, or as soon
 *     as one is idle; latency from the time it was due, not sent, so a
 *     server that falls behind shows it (no coordinated omission).  So
 *     that the client's own lateness is not put on the server, it sleeps
 *     with a timer slack of 1 ns (the default 50 us made every call late
 *     by 50-70 us), wakes ahead of the due time by what its wake-ups have
 *     overshot lately, and spins the rest, reading replies as it spins;
 *     it reports how late it sent (lag) and the time from sending to the
 *     reply (service) beside the latency, which is still counted from the
 *     due time.  -R runs the client SCHED_FIFO (when allowed), so that it
 *     wakes on time on a loaded machine; the servers keep their priority.
 * Prints one JSON line: calls, errors, seconds, calls_per_s, p50_ms,
 * p99_ms, p999_ms, max_ms, client_cpu_us_per_call (this process's user +
 * system time), in open loop lag_p50_ms, lag_p99_ms, svc_p50_ms and
 * svc_p99_ms, and with -p PID the server's rss_kb (VmHWM) and
 * server_cpu_us_per_call (all its threads, /proc, clock ticks).
 *   httpload [-R] [-r RATE] [-p PID] [-c TEXT] URL N CLIENTS TOOL ARGS_JSON */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RBUF 262144

struct conn {
	int fd;
	int busy;		/* a request in flight */
	uint64_t id;		/* its JSON-RPC id */
	uint64_t t0;		/* when it was sent (closed) or due (open loop) */
	uint64_t ts;		/* when it was sent */
	size_t len;
	char sid[256];
	char buf[RBUF + 1];
};

static const char *host, *path, *tool, *args, *want;
static int port;
static uint64_t errors;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + t.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

/* one POST: headers and body in one write */
static void post(struct conn *c, const char *body, size_t blen)
{
	char req[8192];
	int n;
	size_t off = 0;

	n = snprintf(req, sizeof(req),
		     "POST %s HTTP/1.1\r\nhost: %s:%d\r\ncontent-type: application/json\r\n"
		     "accept: application/json, text/event-stream\r\n%s%s%s"
		     "content-length: %zu\r\n\r\n%.*s",
		     path, host, port, *c->sid ? "mcp-protocol-version: 2025-06-18\r\nmcp-session-id: " : "",
		     c->sid, *c->sid ? "\r\n" : "", blen, (int)blen, body);
	if (n < 0 || (size_t)n >= sizeof(req)) {
		fprintf(stderr, "httpload: request too long\n");
		exit(2);
	}
	while (off < (size_t)n) {
		ssize_t w = write(c->fd, req + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("write");
		off += w;
	}
}

static void call(struct conn *c, uint64_t id)
{
	char body[4096];
	int n = snprintf(body, sizeof(body),
			 "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
			 (unsigned long long)id, tool, args);

	if (n < 0 || (size_t)n >= sizeof(body)) {
		fprintf(stderr, "httpload: arguments too long\n");
		exit(2);
	}
	c->id = id;
	c->busy = 1;
	post(c, body, n);
}

/* A whole response in c->buf?  Returns its length (header and body), 0 if
 * more is to come; sets *status, *body and *blen. */
static size_t response(struct conn *c, int *status, char **body, size_t *blen)
{
	char *end, *p, *eol;
	size_t hl, cl = (size_t)-1;
	int chunked = 0;

	c->buf[c->len] = 0;
	if (!(end = strstr(c->buf, "\r\n\r\n")))
		return 0;
	hl = end + 4 - c->buf;
	if (strncmp(c->buf, "HTTP/1.1 ", 9))
		goto bad;
	*status = atoi(c->buf + 9);
	for (p = strstr(c->buf, "\r\n") + 2; p < end; p = eol + 2) {
		eol = strstr(p, "\r\n");
		if (!strncasecmp(p, "content-length:", 15))
			cl = strtoul(p + 15, NULL, 10);
		else if (!strncasecmp(p, "transfer-encoding:", 18) && strstr(p, "chunked") && strstr(p, "chunked") < eol)
			chunked = 1;
		else if (!strncasecmp(p, "mcp-session-id:", 15)) {
			char *v = p + 15;

			while (*v == ' ')
				v++;
			if (eol - v > 0 && (size_t)(eol - v) < sizeof(c->sid))
				memcpy(c->sid, v, eol - v), c->sid[eol - v] = 0;
		}
	}
	if (chunked) {	/* whole? then the chunks joined in place */
		size_t in = hl, out = hl, sz;

		for (int pass = 0; pass < 2; pass++) {
			for (in = hl, out = hl;;) {
				char *x = memchr(c->buf + in, '\n', c->len - in);

				if (!x)
					return 0;
				sz = strtoul(c->buf + in, NULL, 16);
				in = x + 1 - c->buf;
				if (c->len < in + sz + 2)
					return 0;
				if (!sz)
					break;
				if (pass)
					memmove(c->buf + out, c->buf + in, sz);
				in += sz + 2;
				out += sz;
			}
		}
		/* (no trailers: the 0 chunk's CRLF ends it) */
		*body = c->buf + hl;
		*blen = out - hl;
		return in + 2;
	}
	if (cl == (size_t)-1)
		goto bad;
	if (hl + cl > RBUF)
		goto bad;
	if (c->len < hl + cl)
		return 0;
	*body = c->buf + hl;
	*blen = cl;
	return hl + cl;
bad:
	fprintf(stderr, "httpload: unreadable response: %.200s\n", c->buf);
	exit(2);
}

/* read until a whole response is in (blocking: the set-up) */
static int roundtrip(struct conn *c, const char *body)
{
	int status;
	char *b;
	size_t bl, n;

	post(c, body, strlen(body));
	while (!(n = response(c, &status, &b, &bl))) {
		ssize_t r = read(c->fd, c->buf + c->len, RBUF - c->len);

		if (r <= 0)
			die("read");
		c->len += r;
	}
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
	return status;
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static long proc_field(int pid, const char *file, const char *key)
{
	char p[64], line[512];
	long v = -1;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/%s", pid, file);
	if (!(f = fopen(p, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = atol(line + strlen(key));
	fclose(f);
	return v;
}

/* the server's user + system time, microseconds, all threads */
static double proc_cpu_us(int pid)
{
	char p[64], s[2048], *q;
	unsigned long ut, st;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	if (!(f = fopen(p, "r")))
		return -1;
	if (!fgets(s, sizeof(s), f) || !(q = strrchr(s, ')')) ||
	    sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return (double)(ut + st) * 1e6 / sysconf(_SC_CLK_TCK);
}

static double self_cpu_us(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + r.ru_utime.tv_usec + r.ru_stime.tv_usec;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	static const char init[] =
		"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
		"\"capabilities\":{},\"clientInfo\":{\"name\":\"httpload\",\"version\":\"1\"}}}";
	static const char inited[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
	struct epoll_event ev[256];
	struct conn *c;
	uint64_t n, sent = 0, done = 0, *lat, *lag, *svc, ahead = 20000, t0, t1, due = 0, period = 0, rate = 0;
	double c0, s0 = -1, c1, s1 = -1;
	int k, ep, opt, pid = 0, ring = 0, one = 1, rt = 0;
	char hostbuf[256], *u;

	while ((opt = getopt(argc, argv, "Rr:p:c:")) != -1) {
		if (opt == 'R')
			rt = 1;
		else if (opt == 'r')
			rate = strtoull(optarg, NULL, 10);
		else if (opt == 'p')
			pid = atoi(optarg);
		else if (opt == 'c')
			want = optarg;
		else
			return 2;
	}
	if (argc - optind != 5 || strncmp(argv[optind], "http://", 7)) {
		fprintf(stderr, "usage: httpload [-R] [-r RATE] [-p PID] [-c TEXT] URL N CLIENTS TOOL ARGS_JSON\n");
		return 2;
	}
	/* http://HOST:PORT[/PATH], the path /mcp if none */
	snprintf(hostbuf, sizeof(hostbuf), "%s", argv[optind] + 7);
	path = "/mcp";
	if ((u = strchr(hostbuf, '/'))) {
		path = argv[optind] + 7 + (u - hostbuf);
		*u = 0;
		if (!u[1])
			path = "/mcp";
	}
	if (!(u = strchr(hostbuf, ':')))
		return 2;
	*u = 0;
	host = hostbuf;
	port = atoi(u + 1);
	n = strtoull(argv[optind + 1], NULL, 10);
	k = atoi(argv[optind + 2]);
	tool = argv[optind + 3];
	args = argv[optind + 4];
	if (!n || k < 1 || inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return 2;
	a.sin_port = htons(port);
	signal(SIGPIPE, SIG_IGN);
	/* timers to the nanosecond, not 50 us late (the default slack) */
	prctl(PR_SET_TIMERSLACK, 1UL);
	if (rt) {
		struct sched_param sp = { .sched_priority = 1 };

		if (sched_setscheduler(0, SCHED_FIFO, &sp))
			perror("httpload: SCHED_FIFO (going on without)");
	}
	if (!(c = calloc(k, sizeof(*c))) || !(lat = malloc(n * sizeof(*lat))) ||
	    !(lag = calloc(n, sizeof(*lag))) || !(svc = malloc(n * sizeof(*svc))))
		die("malloc");
	if ((ep = epoll_create1(0)) < 0)
		die("epoll_create1");
	/* the sessions, one connection each, in turn */
	for (int i = 0; i < k; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };
		int st;

		if ((c[i].fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
		    connect(c[i].fd, (struct sockaddr *)&a, sizeof(a)))
			die("connect");
		setsockopt(c[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if ((st = roundtrip(&c[i], init)) != 200 || !*c[i].sid) {
			fprintf(stderr, "httpload: initialize: status %d, session id '%s'\n", st, c[i].sid);
			return 2;
		}
		if ((st = roundtrip(&c[i], inited)) / 100 != 2) {
			fprintf(stderr, "httpload: notifications/initialized: status %d\n", st);
			return 2;
		}
		if (epoll_ctl(ep, EPOLL_CTL_ADD, c[i].fd, &e))
			die("epoll_ctl");
	}
	if (pid)
		s0 = proc_cpu_us(pid);
	c0 = self_cpu_us();
	t0 = now_ns();
	if (rate)
		period = 1000000000u / rate, due = t0;
	else
		for (int i = 0; i < k && sent < n; i++)
			c[i].ts = c[i].t0 = now_ns(), call(&c[i], ++sent);
	while (done < n) {
		struct timespec to, *top = NULL;
		uint64_t wake = 0;
		int m;

		if (rate) {
			uint64_t t = now_ns();

			/* every call due goes out on an idle connection */
			while (sent < n && due <= t) {
				int i, j;

				for (j = 0; j < k && c[i = (ring + j) % k].busy; j++)
					;
				if (j == k)
					break;	/* all busy: sent late, its latency from when due */
				ring = (i + 1) % k;
				c[i].t0 = due;
				c[i].ts = now_ns();
				lag[sent] = c[i].ts - due;
				call(&c[i], ++sent);
				due += period;
			}
			/* asleep until a wake-up's overshoot before the due
			 * time, then spinning (replies read meanwhile) */
			if (sent < n && due > t) {
				uint64_t w = due - t > ahead ? due - t - ahead : 0;

				to.tv_sec = w / 1000000000u;
				to.tv_nsec = w % 1000000000u;
				top = &to;
				if (w)
					wake = t + w;
			}
		}
		m = epoll_pwait2(ep, ev, 256, top, NULL);
		if (m == 0 && wake) {	/* woken by the timer: how late? */
			/* the median overshoot, tracked a step at a time:
			 * half the wake-ups spin a little, half are late by
			 * a little; a stray long one moves it by a step */
			if (now_ns() - wake > ahead)
				ahead += ahead < 200000 ? 500 : 0;
			else if (ahead > 500)
				ahead -= 500;
		}
		if (m < 0 && errno != EINTR)
			die("epoll_pwait2");
		for (int e = 0; e < m; e++) {
			struct conn *x = &c[ev[e].data.u32];
			ssize_t r = read(x->fd, x->buf + x->len, RBUF - x->len);
			int status;
			char *b, idk[64];
			size_t bl, used;

			if (r <= 0) {
				fprintf(stderr, "httpload: connection closed by the server (%s)\n",
					r ? strerror(errno) : "EOF");
				return 2;
			}
			x->len += r;
			if (!(used = response(x, &status, &b, &bl)))
				continue;
			if (!x->busy) {
				fprintf(stderr, "httpload: a response nobody asked for\n");
				return 2;
			}
			t1 = now_ns();
			svc[done] = t1 - x->ts;
			lat[done++] = t1 - x->t0;
			x->busy = 0;
			snprintf(idk, sizeof(idk), "\"id\":%llu", (unsigned long long)x->id);
			{
				char keep = b[bl], *h, after;	/* (the buffer has room: RBUF + 1) */

				b[bl] = 0;
				h = strstr(b, idk);
				after = h ? h[strlen(idk)] : 0;

				if (status != 200 || !h || (after != ',' && after != '}') ||
				    strstr(b, "\"isError\":true") || (want && !strstr(b, want))) {
					if (!errors++)
						fprintf(stderr, "httpload: bad reply to id %llu: status %d: %.300s\n",
							(unsigned long long)x->id, status, b);
				}
				b[bl] = keep;
			}
			memmove(x->buf, x->buf + used, x->len - used);
			x->len -= used;
			if (!rate && sent < n)
				x->ts = x->t0 = now_ns(), call(x, ++sent);
		}
	}
	t1 = now_ns();
	c1 = self_cpu_us();
	if (pid)
		s1 = proc_cpu_us(pid);
	qsort(lat, n, sizeof(*lat), cmp64);
	qsort(lag, n, sizeof(*lag), cmp64);
	qsort(svc, n, sizeof(*svc), cmp64);
	{
		double secs = (t1 - t0) / 1e9;

		printf("{\"calls\":%llu,\"errors\":%llu,\"seconds\":%.3f,\"calls_per_s\":%.0f,\"p50_ms\":%.3f,"
		       "\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"max_ms\":%.3f,\"client_cpu_us_per_call\":%.2f",
		       (unsigned long long)n, (unsigned long long)errors, secs, n / secs,
		       lat[n / 2] / 1e6, lat[(uint64_t)(n * 0.99)] / 1e6, lat[(uint64_t)(n * 0.999)] / 1e6,
		       lat[n - 1] / 1e6, (c1 - c0) / n);
		if (rate)
			printf(",\"lag_p50_ms\":%.3f,\"lag_p99_ms\":%.3f,\"svc_p50_ms\":%.3f,\"svc_p99_ms\":%.3f",
			       lag[n / 2] / 1e6, lag[(uint64_t)(n * 0.99)] / 1e6, svc[n / 2] / 1e6,
			       svc[(uint64_t)(n * 0.99)] / 1e6);
		if (pid)
			printf(",\"rss_kb\":%ld,\"server_cpu_us_per_call\":%.1f",
			       proc_field(pid, "status", "VmHWM:"), (s1 - s0) / n);
		printf("}\n");
	}
	for (int i = 0; i < k; i++)
		close(c[i].fd);
	return errors ? 1 : 0;
}
