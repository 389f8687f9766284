#!/usr/bin/env python3
"""rootsfd.py PORT PID TOKEN ROOT N - against `wap serve --http
--roots-from-client` started with a low descriptor limit: N sessions each
narrowed to ROOT/sub (roots/list answered on the SSE reply of a call) keep
the descriptors within the limit: sessions past what it allows are let go,
the least recently used first, and every client's grep still runs (each
narrowed root holds a descriptor: past the limit every grep, glob and exec
failed "Too many open files").  ok/not ok lines (tap_in)."""
import json, os, socket, sys
import waphttp

port, pid, token, root, n = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])


def post(body, sid=None, sse=False):
    return waphttp.post(port, token, body, sid, sse, timeout=30)


def tap(good, desc):
    print(("ok" if good else "not ok") + " - " + desc, flush=True)


def session():
    st, sid, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}},
                                  "clientInfo": {"name": "t", "version": "1"}}})
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    # the call's reply is an event stream whose first event asks roots/list;
    # the call waits for the answer, then runs in the narrowed root
    body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "read", "arguments": {"path": "f"}}}).encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Accept: application/json, text/event-stream\r\nAuthorization: Bearer " + token.encode() +
              b"\r\nMcp-Session-Id: " + sid.encode() + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    got = b""
    while b"roots/list" not in got:
        d = s.recv(65536)
        if not d:
            break
        got += d
    post({"jsonrpc": "2.0", "id": "wap-roots-1", "result": {"roots": [{"uri": "file://" + root + "/sub"}]}}, sid)
    while b'"id":2' not in got:
        d = s.recv(65536)
        if not d:
            break
        got += d
    s.close()
    return sid, got


def nfd():
    return len(os.listdir("/proc/%d/fd" % pid))


last = None
for i in range(n):
    sid, body = session()
    if i == 0:
        tap(b'"isError":false' in body, "a session's call runs in its narrowed root (%s)" % body[-120:])
    last = sid
tap(nfd() < 100, "%d sessions narrowed: the server's descriptors stay within the limit (%d)" % (n, nfd()))
for name, args in [("grep", {"pattern": "x"}), ("glob", {"pattern": "**"})]:
    st, _, body = post({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": name, "arguments": args}}, last)
    tap(st == 200 and b'"isError":false' in body, "and %s still runs (%s)" % (name, body[-120:]))
st, _, body = post({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "read", "arguments": {"path": "f"}}}, last)
tap(b'"isError":false' in body, "the last session keeps its narrowed root")
