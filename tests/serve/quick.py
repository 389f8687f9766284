#!/usr/bin/env python3
"""quick.py WAP ROOT - a quick call (read, stat) runs where the request
was read, unless it finds it is not quick: a read that must unpack an
archive (or count lines through a file past the limit) is handed to a
worker, so the door goes on reading, answering and cancelling meanwhile.
Over stdio and over HTTP.  ROOT gets bomb.bz2 (1.1 GiB of "A" in 16 KB).
Prints "ok"/"not ok" lines."""
import bz2, json, os, select, socket, subprocess, sys, threading, time, urllib.request

wap, root = sys.argv[1], sys.argv[2]
BOUND = 1.0		# the archive's read takes 3-4 s; a ping must not wait for it
with open(os.path.join(root, "bomb.bz2"), "wb") as f:
    f.write(bz2.compress(b"A" * (45 << 20)) * 25)
with open(os.path.join(root, "small.txt"), "w") as f:
    f.write("small\n")
BOMB = {"path": "bomb.bz2", "member": "data", "tail": 2}	# its lines counted to the end


def ok(cond, desc):
    print(("ok - " if cond else "not ok - ") + desc, flush=True)


def call(i, name, args):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}}


# ---- stdio ----
def start(*extra):
    return subprocess.Popen([wap, "serve", "--root", root, "--workers", "2", *extra], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def send(p, msg):
    p.stdin.write((json.dumps(msg) + "\n").encode())
    p.stdin.flush()


PENDING = {}


def replies(p, want, timeout):
    """{id: (reply, seconds)} for the ids in WANT, as they come (read from
    the pipe itself: a buffered reader's lines would wait for select)"""
    t0, got = time.monotonic(), {}
    buf = PENDING.setdefault(p.pid, bytearray())
    while len(got) < len(want) and time.monotonic() - t0 < timeout:
        while b"\n" in buf and len(got) < len(want):
            line, _, rest = bytes(buf).partition(b"\n")
            buf[:] = rest
            m = json.loads(line)
            if m.get("id") in want:
                got[m["id"]] = (m, time.monotonic() - t0)
        if len(got) == len(want):
            break
        r, _, _ = select.select([p.stdout], [], [], max(0, timeout - (time.monotonic() - t0)))
        if not r:
            break
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            break
        buf += chunk
    return got


def stop(p):
    p.stdin.close()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


p = start()
send(p, call(1, "read", BOMB))
send(p, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
send(p, call(3, "read", {"path": "small.txt"}))
got = replies(p, {1, 2, 3}, 60)
ok(2 in got and got[2][1] < BOUND, "stdio: a ping after an archive's read is answered at once (%.0f ms)"
   % (got[2][1] * 1000 if 2 in got else -1))
ok(3 in got and got[3][1] < BOUND and "small" in json.dumps(got[3][0]),
   "stdio: and a small read (%.0f ms)" % (got[3][1] * 1000 if 3 in got else -1))
r1 = got.get(1, (None, 0))[0]
ok(r1 is not None and r1["result"].get("isError") and "SIZE_LIMIT_EXCEEDED" in r1["result"]["content"][0]["text"],
   "stdio: the archive's read ends with its own answer, SIZE_LIMIT_EXCEEDED")
stop(p)
# one worker: the calls after the cancel wait for it unless it stopped
p = subprocess.Popen([wap, "serve", "--root", root, "--workers", "1"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
send(p, call(4, "read", BOMB))
time.sleep(0.3)
send(p, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}})
send(p, call(5, "read", {"path": "small.txt"}))
send(p, call(6, "read", {"path": "small.txt"}))
got = replies(p, {4, 5, 6}, 6)
ok(4 not in got, "stdio: a cancelled archive read sends no reply")
ok(5 in got and 6 in got and max(got[5][1], got[6][1]) < BOUND,
   "stdio: the cancel was read while it ran, and the workers are free again (%.0f ms)"
   % (max(got[5][1], got[6][1]) * 1000 if 5 in got and 6 in got else -1))
stop(p)

# the audit log has the read once (the attempt where it was read is not a call)
import tempfile
fd, audit = tempfile.mkstemp(suffix=".jsonl")
os.close(fd)
p = start("--audit", audit)
send(p, call(1, "read", {"path": "bomb.bz2"}))
got = replies(p, {1}, 30)
stop(p)
reads = [json.loads(l) for l in open(audit) if l.strip() and json.loads(l).get("op") == "read"]
os.unlink(audit)
ok(len(reads) == 1, f"stdio: a read handed on is logged once ({len(reads)})")

# ---- HTTP ----
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
h = subprocess.Popen([wap, "serve", "--http", f"127.0.0.1:{port}", "--no-auth", "--root", root, "--workers", "2"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
url = f"http://127.0.0.1:{port}/mcp"


def post(body, sid=None):
    hd = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if sid:
        hd["mcp-session-id"] = sid
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=hd, method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.headers.get("mcp-session-id"), r.read()


sid = None
for _ in range(100):
    try:
        sid, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {}}})
        break
    except OSError:
        time.sleep(0.05)
done = {}


def slow():
    t0 = time.monotonic()
    _, body = post(call(1, "read", BOMB), sid)
    done["bomb"] = (json.loads(body), time.monotonic() - t0)


th = threading.Thread(target=slow)
th.start()
time.sleep(0.3)
t0 = time.monotonic()
_, body = post(call(2, "read", {"path": "small.txt"}), sid)
dt = time.monotonic() - t0
ok(dt < BOUND and "small" in body.decode(), "HTTP: a small read beside an archive's read is answered at once (%.0f ms)" % (dt * 1000))
th.join(60)
b = done.get("bomb", (None, 0))[0]
ok(b is not None and "SIZE_LIMIT_EXCEEDED" in json.dumps(b), "HTTP: the archive's read gets its own answer")
h.terminate()
h.wait(10)
os.unlink(os.path.join(root, "bomb.bz2"))
