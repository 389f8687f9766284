"""waphttp - the tests' MCP client of `wap serve --http`, one POST a
connection (tests/lib.sh puts this dir on PYTHONPATH).

    status, sid, data = post(port, token, {"jsonrpc": "2.0", ...}, sid)
"""
import http.client
import json


def post(port, token, body, sid=None, sse=False, timeout=60):
    """POST BODY to /mcp: (status, the Mcp-Session-Id replied, the body's bytes).
    SSE: the client accepts an event stream as well as JSON."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    h = {"Content-Type": "application/json", "Authorization": "Bearer " + token,
         "Accept": "application/json, text/event-stream" if sse else "application/json"}
    if sid:
        h["Mcp-Session-Id"] = sid
    c.request("POST", "/mcp", json.dumps(body), h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, r.getheader("mcp-session-id"), data
