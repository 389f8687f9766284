#!/usr/bin/env python3
"""heldhttp.py WAP ROOT - what MCP over HTTP holds for all its connections
at once is bounded, server-wide (the one budget the Agent Control
Protocol's clients share too).  A reply was held whole until its client
read it, a request body whole as it came: 40 clients asking for a 1 MiB
read and reading nothing made the server hold some 110 MiB, 40 bodies
sent half-way as much again (64 connections of a 16 MiB body or an
8 MiB batch reply were a gigabyte).  The server is started with
WAP_SERVE_HELD_MAX=8 MiB: past it a client over its share gets 503 with
Retry-After and a JSON-RPC error, the others and /health are served, and
the server's memory grows by no more than the cap and its workers' own.
TAP lines."""
import json, os, socket, subprocess, sys, threading, time, urllib.request

wap, root = sys.argv[1], sys.argv[2]
N = 40
CAP = 8 << 20
n = 0


def tap(good, desc):
    global n
    n += 1
    print(("ok" if good else "not ok") + " %d - %s" % (n, desc), flush=True)


os.makedirs(root, exist_ok=True)
with open(os.path.join(root, "big.txt"), "w") as f:
    line = "0123456789abcdef\"\\<>&" * 60 + "\n"	# (read shows 2000 lines)
    while f.tell() < (1 << 20) - len(line):
        f.write(line)
env = dict(os.environ, WAP_SERVE_HELD_MAX=str(CAP))
srv = subprocess.Popen([wap, "serve", "--http", "127.0.0.1:0", "--root", root, "--token", "heldtok"],
                       env=env, stderr=subprocess.PIPE, text=True)
port = None
for line in srv.stderr:
    if "/mcp" in line and "http://127.0.0.1:" in line:
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        break
log = []
reader = threading.Thread(target=lambda: log.extend(srv.stderr), daemon=True)
reader.start()
asan = os.environ.get("ASAN")	# (its allocator keeps what is freed: no RSS measured)


def mem(field):
    with open("/proc/%d/status" % srv.pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])  # kB
    return 0


def head(cl, sid=None):
    h = (b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
         b"Authorization: Bearer heldtok\r\nContent-Length: %d\r\n" % cl)
    if sid:
        h += b"Mcp-Session-Id: " + sid.encode() + b"\r\n"
    return h + b"\r\n"


def conn():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)	# reads nothing: the server keeps it
    s.settimeout(30)
    s.connect(("127.0.0.1", port))
    return s


def response(s):
    """(status, headers, body) of the reply on S, read whole"""
    data = b""
    while b"\r\n\r\n" not in data:
        d = s.recv(65536)
        if not d:
            return None, {}, b""
        data += d
    top, body = data.split(b"\r\n\r\n", 1)
    lines = top.decode("latin-1").split("\r\n")
    hdrs = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
    want = int(hdrs.get("content-length", "-1"))
    while want < 0 or len(body) < want:
        d = s.recv(1 << 20)
        if not d:
            break
        body += d
    return int(lines[0].split()[1]), hdrs, body


INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}}}).encode()
s = conn()
s.sendall(head(len(INIT)) + INIT)
st, h, _ = response(s)
s.close()
sid = h.get("mcp-session-id")
tap(st == 200 and sid, "a session (%s)" % st)
READ = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "read", "arguments": {"path": "big.txt"}}}).encode()


def health():
    t0 = time.time()
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/health" % port, timeout=30) as r:
            return r.status == 200 and time.time() - t0 < (20 if asan else 5)
    except Exception:
        return False


# ---- replies not read ----
time.sleep(0.5)
base = mem("VmRSS")
socks = []
for i in range(N):
    s = conn()
    s.sendall(head(len(READ), sid) + READ)
    socks.append(s)
time.sleep(6)	# every read done (4 workers, 40 reads of 1 MiB)
grew = mem("VmRSS") - base
tap(health(), "/health answered while %d replies wait to be read" % N)
tap(asan or grew < (CAP >> 10) + 40 * 1024,
    "%d clients not reading their 1 MiB reads: the server grew %d kB (cap %d kB)" % (N, grew, CAP >> 10))
got = [response(s) for s in socks]
for s in socks:
    s.close()
ok = [g for g in got if g[0] == 200 and b'"result"' in g[2]]
busy = [g for g in got if g[0] == 503]
tap(ok and busy and len(ok) + len(busy) == N,
    "some answered (%d), the others over their share refused with 503 (%d; %s)"
    % (len(ok), len(busy), sorted(set(g[0] for g in got))))
if busy:
    st, h, body = busy[0]
    try:
        e = json.loads(body)
    except ValueError:
        e = {}
    tap(h.get("retry-after", "").isdigit() and e.get("id") == 2 and e.get("error", {}).get("code") == -32603
        and "EXECUTION_FAILED" in json.dumps(e),
        "a 503 says Retry-After and is the request's JSON-RPC error (%s %s)" % (h.get("retry-after"), body[:300]))
s = conn()
s.sendall(head(len(READ), sid) + READ)
st, _, body = response(s)
s.close()
tap(st == 200 and b'"result"' in body and len(body) > 1 << 20, "once they are gone, the read is answered (%s)" % st)

# ---- bodies sent half-way ----
time.sleep(0.5)
base = mem("VmRSS")
socks, refused = [], [0]
half = b" " * (3 << 19)	# 1.5 MiB of a 2 MiB body


def push(s):
    try:
        s.sendall(head(2 << 20, sid) + half)
    except OSError:
        pass


for i in range(N):
    s = conn()
    socks.append(s)
ts = [threading.Thread(target=push, args=(s,), daemon=True) for s in socks]
for t in ts:
    t.start()
for t in ts:
    t.join(20)
time.sleep(2)
grew = mem("VmRSS") - base
tap(health(), "/health answered while %d bodies are half in" % N)
tap(asan or grew < (CAP >> 10) + 24 * 1024,
    "%d clients sending 1.5 MiB of a 2 MiB body: the server grew %d kB (cap %d kB)" % (N, grew, CAP >> 10))
codes = []
for s in socks:
    s.settimeout(0.3)
    try:
        codes.append(response(s)[0])
    except OSError:
        codes.append(None)
    s.close()
tap(503 in codes, "bodies over their share refused with 503 (%s)" % sorted(set(map(str, codes))))
s = conn()
s.sendall(head(len(READ), sid) + READ)
st, _, body = response(s)
s.close()
tap(st == 200 and b'"result"' in body, "once they are gone, the read is answered (%s)" % st)
srv.terminate()
tap(srv.wait(60) == 0, "the server stops cleanly")
reader.join(10)
tap(not any("Sanitizer" in l for l in log), "no sanitizer report")
