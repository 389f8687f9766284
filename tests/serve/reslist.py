#!/usr/bin/env python3
"""reslist.py PORT TOKEN ROOT - resources/list walks the whole tree (a
cursor asks for 10 million entries) and resources/read reads a whole file:
they run on a worker, never on the HTTP server's thread, so /health and
other clients are answered while they run (before, 5 s of /usr held every
request).  ROOT gets 40,000 files.  ok/not ok lines (tap_in)."""
import http.client, json, os, sys, threading, time
import waphttp

port, token, root = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def post(body, sid=None):
    return waphttp.post(port, token, body, sid)[1:]


def tap(good, desc):
    print(("ok" if good else "not ok") + " - " + desc, flush=True)


def health():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    t = time.monotonic()
    c.request("GET", "/health")
    c.getresponse().read()
    c.close()
    return time.monotonic() - t


for d in range(8):
    os.mkdir(os.path.join(root, "d%d" % d))
    for i in range(5000):
        open(os.path.join(root, "d%d" % d, "f%d" % i), "w").close()
sid, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
took, out = [], []


def walk(i):
    t = time.monotonic()
    out.append(post({"jsonrpc": "2.0", "id": 10 + i, "method": "resources/list", "params": {"cursor": "9999999"}}, sid)[1])
    took.append(time.monotonic() - t)


ths = [threading.Thread(target=walk, args=(i,)) for i in range(6)]
for t in ths:
    t.start()
time.sleep(0.05)
h = health()
for t in ths:
    t.join()
tap(all(b'"resources":[]' in o for o in out), "six resources/list past the end: an empty page each")
# (the walks together take seconds here; on the service thread /health waited for them all)
tap(h < max(took) / 2, "/health is answered while they run (%.2f s; the walks %.2f s)" % (h, max(took)))
_, r = post({"jsonrpc": "2.0", "id": 20, "method": "resources/read", "params": {"uri": "file://" + os.path.realpath(root) + "/d0/f1"}}, sid)
tap(b'"contents"' in r, "resources/read still answers (%s)" % r[-100:])
