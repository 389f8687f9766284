#!/usr/bin/env python3
"""batchstdio.py WAP ROOT - over stdio a batch with a request runs on a
worker, as one call would: the reader goes on reading, so a ping is
answered and a cancel stops the batch's call while it runs (the batch ran
on the reader: both waited for the whole batch).  ok/not ok lines (tap_in)."""
import json, os, select, subprocess, sys, time

wap, root = sys.argv[1], sys.argv[2]


def tap(good, desc):
    print(("ok" if good else "not ok") + " - " + desc, flush=True)


p = subprocess.Popen([wap, "serve", "--root", root, "--workers", "1"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
buf = b""


def send(o):
    p.stdin.write((json.dumps(o) + "\n").encode())
    p.stdin.flush()


def reply(want, timeout):
    """the message with id WANT, or None after TIMEOUT seconds"""
    global buf
    end = time.monotonic() + timeout
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            m = json.loads(line)
            if isinstance(m, dict) and m.get("id") == want:
                return m
        left = end - time.monotonic()
        if left <= 0 or not select.select([p.stdout], [], [], left)[0]:
            return None
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            return None
        buf += chunk


send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
      "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
reply(0, 10)
t0 = time.monotonic()
send([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "exec", "arguments": {"command": "sleep 6"}}}])
time.sleep(0.3)
send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
r = reply(2, 10)
tap(r is not None and time.monotonic() - t0 < 3, "a ping is answered while the batch's call runs (%.1f s)" % (time.monotonic() - t0))
send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "exec", "arguments": {"command": "echo after"}}})
r = reply(3, 10)
# one worker (--workers 1), the batch's: the call after it runs once that is cancelled
tap(r is not None and time.monotonic() - t0 < 4, "a cancel stops the batch's call (%.1f s)" % (time.monotonic() - t0))
p.stdin.close()
p.wait(timeout=30)
tap(p.returncode == 0, "the server exits 0 (%s)" % p.returncode)
