/* httpfloor.c - the HTTP client's ceiling for bench/serve.sh: a server that
 * does nothing but answer every POST with one recorded reply (wap's, a
 * line of REPLY_FILE, its JSON-RPC id replaced by the request's) and an
 * Mcp-Session-Id, a notification (no id) with a bare 202, on keep-alive
 * connections, one thread, poll(2).  What a client reaches against it is
 * what the client (and the machine) can drive at all.
 *   httpfloor REPLY_FILE    prints http://127.0.0.1:PORT, serves until killed */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXC 256

/* the recorded reply with the request's id, or a 202 to a notification */
static int reply(int fd, const char *req, size_t rlen, char *resp, const char *body, size_t pre,
		 const char *post, const char *accepted)
{
	const char *id = memmem(req, rlen, "\"id\":", 5);
	size_t ilen, n, blen;

	if (!id)
		return write(fd, accepted, strlen(accepted)) < 0 ? -1 : 0;
	id += 5;
	ilen = strspn(id, "0123456789");
	blen = pre + ilen + strlen(post);
	n = sprintf(resp, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: floor\r\n"
		    "content-length: %zu\r\n\r\n%.*s%.*s%s", blen, (int)pre, body, (int)ilen, id, post);
	return write(fd, resp, n) < 0 ? -1 : 0;
}

struct conn {
	int fd;
	size_t len;
	char buf[16384];
};

int main(int argc, char **argv)
{
	static struct conn c[MAXC];
	struct pollfd p[MAXC + 1];
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	char body[65536], *resp, *idp;
	size_t blen, pre;
	static const char accepted[] = "HTTP/1.1 202 Accepted\r\nmcp-session-id: floor\r\ncontent-length: 0\r\n\r\n";
	int one = 1, ls, n = 0;
	FILE *f;

	if (argc != 2 || !(f = fopen(argv[1], "r")) || !fgets(body, sizeof(body), f))
		return 2;
	fclose(f);
	blen = strcspn(body, "\n");
	body[blen] = 0;
	/* the reply cut around its id's digits: body[0, pre) ID idp */
	if (!(idp = strstr(body, "\"id\":")))
		return 2;
	idp += 5;
	pre = idp - body;
	idp += strspn(idp, "0123456789");
	resp = malloc(blen + 256);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 128) ||
	    getsockname(ls, (struct sockaddr *)&a, &al))
		return 1;
	printf("http://127.0.0.1:%d\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		p[0] = (struct pollfd){ .fd = ls, .events = POLLIN };
		for (int i = 0; i < n; i++)
			p[i + 1] = (struct pollfd){ .fd = c[i].fd, .events = POLLIN };
		if (poll(p, n + 1, -1) < 0)
			continue;
		for (int i = n - 1; i >= 0; i--) {
			struct conn *k = &c[i];
			ssize_t r;
			char *end, *cl;
			size_t need;

			if (!(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(k->fd, k->buf + k->len, sizeof(k->buf) - 1 - k->len);
			if (r <= 0) {
				close(k->fd);
				c[i] = c[--n];
				continue;
			}
			k->len += r;
			k->buf[k->len] = 0;
			/* every complete request in the buffer gets the reply */
			while ((end = strstr(k->buf, "\r\n\r\n"))) {
				cl = strcasestr(k->buf, "content-length:");
				need = end + 4 - k->buf + (cl && cl < end ? strtoul(cl + 15, NULL, 10) : 0);
				if (k->len < need)
					break;
				if (reply(k->fd, k->buf + (end + 4 - k->buf), need - (end + 4 - k->buf),
					  resp, body, pre, idp, accepted) < 0)
					break;
				memmove(k->buf, k->buf + need, k->len - need + 1);
				k->len -= need;
			}
		}
		if ((p[0].revents & POLLIN) && n < MAXC) {
			int fd = accept(ls, NULL, NULL);
			if (fd >= 0) {
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				c[n].fd = fd;
				c[n++].len = 0;
			}
		}
	}
}
