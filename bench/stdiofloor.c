/* stdiofloor.c - a do-nothing MCP server over stdio for bench/serve.sh: it
 * answers every request line with a recorded reply (wap's, from
 * REPLY_FILE: its first line answers initialize, its second every other
 * request, the request's JSON-RPC id put in), reads as much as the pipe
 * holds and writes the replies of what it read in one write, as wap does;
 * a notification (no id) gets nothing.  What the client reaches against it
 * is what the client can drive through real pipes (the replay ceiling has
 * none: its writes go nowhere).
 *   stdiofloor REPLY_FILE < requests > replies */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char init[1 << 16], rep[1 << 16], in[1 << 16], out[1 << 22];

int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
	const char *idp, *post;
	size_t pre, len = 0, ilen;
	ssize_t n;

	if (!f || !fgets(init, sizeof(init), f) || !fgets(rep, sizeof(rep), f) ||
	    !(idp = strstr(rep, "\"id\":")) || !(post = strpbrk(idp + 5, ",}"))) {
		fprintf(stderr, "usage: stdiofloor REPLY_FILE (an initialize reply, then a call's)\n");
		return 2;
	}
	fclose(f);
	pre = (size_t)(idp + 5 - rep);
	ilen = strlen(init);
	while ((n = read(0, in + len, sizeof(in) - len)) > 0) {
		size_t o = 0, start = 0;
		char *nl;

		len += (size_t)n;
		while ((nl = memchr(in + start, '\n', len - start))) {
			const char *id = memmem(in + start, (size_t)(nl - in) - start, "\"id\":", 5);
			*nl = 0;
			if (id && o + sizeof(rep) + 32 < sizeof(out)) {
				long v = strtol(id + 5, NULL, 10);
				if (!v) {
					memcpy(out + o, init, ilen);
					o += ilen;
				} else {
					memcpy(out + o, rep, pre);
					o += pre;
					o += (size_t)sprintf(out + o, "%ld", v);
					memcpy(out + o, post, strlen(post));
					o += strlen(post);
				}
			}
			start = (size_t)(nl - in) + 1;
		}
		memmove(in, in + start, len - start);
		len -= start;
		for (size_t off = 0; off < o;) {
			n = write(1, out + off, o - off);
			if (n <= 0)
				return 1;
			off += (size_t)n;
		}
	}
	return 0;
}
