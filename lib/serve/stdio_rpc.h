/* serve/stdio_rpc.h - MCP (or the acp profile) over a pair of file descriptors:
 * newline-delimited JSON-RPC, one message a line, nothing else on the
 * output.  Requests that take long (tools/call) run on a worker pool so the
 * reader keeps going (cancellation, ping, concurrent calls); their replies
 * may come in another order than the requests, as JSON-RPC allows.  The
 * rest, quick calls (read, stat) included, run on the reader, and what
 * they answer goes out together once the lines read so far are handled. */
#ifndef WAP_STDIO_RPC_H
#define WAP_STDIO_RPC_H

#include "mcp.h"

struct wap_stdio_opts {
	int in_fd, out_fd;
	int workers;			/* 0: 4 */
	bool drain;			/* at EOF finish the calls under way */
	struct wap_rpc_limits lim;
};

/* Serve until end of input; returns 0, or -1 on a read error.  End of
 * input is the client's shutdown: the calls under way are cancelled (a
 * running exec killed, a grep stopped inside its file) unless DRAIN. */
int wap_stdio_serve(struct wap_mcp_server *srv, const struct wap_stdio_opts *o);

#endif
