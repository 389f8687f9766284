#!/usr/bin/env python3
"""batchend.py PORT TOKEN ROOT - a batch's calls stop with their session: a
DELETE while the batch runs cancels the call under way and the rest of the
batch does not run (its writes went on after the session was ended).
ok/not ok lines (tap_in)."""
import http.client, json, os, sys, threading, time

port, token, root = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def tap(good, desc):
    print(("ok" if good else "not ok") + " - " + desc, flush=True)


def request(method, body=None, sid=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    h = {"Content-Type": "application/json", "Authorization": "Bearer " + token, "Accept": "application/json"}
    if sid:
        h["Mcp-Session-Id"] = sid
    c.request(method, "/mcp", json.dumps(body) if body is not None else None, h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, r.getheader("mcp-session-id"), data


def call(i, name, args):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}}


_, sid, _ = request("POST", {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "t", "version": "1"}}})
batch = [call(2, "exec", {"command": "sleep 3"}), call(3, "write", {"path": "after1.txt", "content": "x"}),
         call(4, "exec", {"command": "sleep 1"}), call(5, "write", {"path": "after2.txt", "content": "y"})]
out = {}
t = threading.Thread(target=lambda: out.update(r=request("POST", batch, sid)))
t.start()
time.sleep(1)
st, _, _ = request("DELETE", None, sid)
tap(st == 200, "DELETE while the batch runs: 200")
t.join()
time.sleep(0.3)
tap(not os.path.exists(os.path.join(root, "after1.txt")) and not os.path.exists(os.path.join(root, "after2.txt")),
    "the rest of the batch did not run (%s)" % sorted(os.listdir(root)))
