#!/usr/bin/env python3
"""httpfuzz.py HOST PORT [TOKEN] - throw 300 malformed HTTP requests (garbage bytes,
bad request lines, huge headers, lying Content-Length, bad JSON bodies,
slow half-requests; half of them with the bearer token TOKEN, so that
they get past authentication) at `wap serve --http`, then check it still
answers /health and an initialize.  TAP lines."""
import json, random, socket, sys, urllib.request

host, port = sys.argv[1], int(sys.argv[2])
token = sys.argv[3] if len(sys.argv) > 3 else None
rng = random.Random(11)
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {}}}).encode()


def raw(data, read=True):
    try:
        s = socket.create_connection((host, port), timeout=1)
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        if read:
            try:
                s.recv(65536)
            except socket.timeout:
                pass
        s.close()
    except OSError:
        pass


cases = []
for i in range(300):
    k = i % 10
    if k == 0:
        cases.append(bytes(rng.randrange(256) for _ in range(rng.randint(1, 2000))))
    elif k == 1:
        cases.append(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{")
    elif k == 2:
        cases.append(b"GET /" + b"a" * rng.randint(1000, 20000) + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
    elif k == 3:
        cases.append(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n")
    elif k == 4:
        body = bytes(rng.randrange(256) for _ in range(200))
        cases.append(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    elif k == 5:
        cases.append(b"BREW /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n")
    elif k == 6:
        cases.append(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: -5\r\n\r\n")
    elif k == 7:
        cases.append(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
    elif k == 8:
        cases.append(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                     b"Mcp-Session-Id: %s\r\n\r\n" % (len(INIT), b"\xff" * 40) + INIT)
    else:
        cases.append(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n[[[[[")
if token:  # the odd ones authenticated: the parser behind the token is fuzzed too
    auth = b"Authorization: Bearer " + token.encode() + b"\r\n"
    cases = [c.replace(b"Host: localhost\r\n", b"Host: localhost\r\n" + auth, 1) if i % 2 else c
             for i, c in enumerate(cases)]
from concurrent.futures import ThreadPoolExecutor
with ThreadPoolExecutor(16) as ex:
    list(ex.map(raw, cases))


def get(path):
    with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=5) as r:
        return r.status, r.read()


st, body = get("/health")
print(("ok" if st == 200 else "not ok") + " 1 - /health after 300 malformed requests")
hdrs = {"content-type": "application/json"}
if token:
    hdrs["authorization"] = "Bearer " + token
req = urllib.request.Request(f"http://{host}:{port}/mcp", data=INIT, method="POST", headers=hdrs)
with urllib.request.urlopen(req, timeout=5) as r:
    ok = r.status == 200 and json.loads(r.read())["result"]["protocolVersion"] == "2025-06-18"
print(("ok" if ok else "not ok") + " 2 - initialize after 300 malformed requests")
