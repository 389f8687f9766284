#!/usr/bin/env python3
"""termsall.py PORT TOKEN - against `wap serve --http --profile acp` started
with WAP_TERMS_MAX=4: the terminals of all the sessions together are held to
the process's limit (a client makes sessions at will: 64 terminals a
session were 64,000 process trees in 1,000 sessions); one released makes
room for another session's.  ok/not ok lines (tap_in)."""
import json, sys
import waphttp

port, token = int(sys.argv[1]), sys.argv[2]


def post(body, sid=None):
    _, sid, data = waphttp.post(port, token, body, sid, sse=True, timeout=30)
    return sid, json.loads(data) if data else None


def tap(good, desc):
    print(("ok" if good else "not ok") + " - " + desc, flush=True)


def session():
    sid, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": 1, "clientCapabilities": {}}})
    return sid


def create(sid, i):
    _, r = post({"jsonrpc": "2.0", "id": i, "method": "terminal/create",
                 "params": {"sessionId": "s", "command": "sleep", "args": ["60"]}}, sid)
    return r


a, b = session(), session()
ids = [create(a, 10 + i).get("result", {}).get("terminalId") for i in range(3)]
tap(all(ids), "three terminals in one session (%s)" % ids)
r = create(b, 20)
tap("result" in r, "a fourth in another session (%s)" % json.dumps(r)[:200])
r = create(b, 21)
tap("error" in r and "Too many terminals" in r["error"].get("message", ""),
    "a fifth is refused, in whichever session (%s)" % json.dumps(r)[:200])
post({"jsonrpc": "2.0", "id": 30, "method": "terminal/release", "params": {"sessionId": "s", "terminalId": ids[0]}}, a)
r = create(b, 22)
tap("result" in r, "one released makes room (%s)" % json.dumps(r)[:200])
