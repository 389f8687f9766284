#!/usr/bin/env python3
"""The call's time limit over stdio: a grep over many bait files (each
under grep's own bound of 20 s, a file's) ends at WAP_CALL_TIME_MAX with
SIZE_LIMIT_EXCEEDED naming it, and the server answers the next call of the
same worker.  usage: calltime.py WAP ROOT (ROOT holds bait/)"""
import json, os, select, subprocess, sys, time

wap, root = sys.argv[1], sys.argv[2]


def ok(cond, desc):
    print(("ok - " if cond else "not ok - ") + desc, flush=True)


def send(p, msg):
    p.stdin.write((json.dumps(msg) + "\n").encode())
    p.stdin.flush()


def call(i, name, args):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}}


def reply(p, want, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([p.stdout], [], [], max(0, end - time.monotonic()))
        if not r:
            break
        line = p.stdout.readline()
        if not line:
            break
        m = json.loads(line)
        if m.get("id") == want:
            return m
    return None


env = dict(os.environ, WAP_CALL_TIME_MAX="2")
p = subprocess.Popen([wap, "serve", "--root", root, "--workers", "1"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
t0 = time.monotonic()
send(p, call(1, "grep", {"pattern": "(x+x+)+y", "paths": ["bait"], "threads": 1}))
r = reply(p, 1, 60)
dt = time.monotonic() - t0
text = json.dumps(r)
ok(r is not None and "SIZE_LIMIT_EXCEEDED" in text and "WAP_CALL_TIME_MAX" in text,
   "grep over bait files: SIZE_LIMIT_EXCEEDED naming the call's limit: " + text[:300])
ok(dt < 12, f"grep over bait files: answered in {dt * 1000:.0f} ms (limit 2 s)")
# the same worker, the next call: the deadline was that call's alone
send(p, call(2, "grep", {"pattern": "y", "paths": ["bait/b0.txt"]}))
r = reply(p, 2, 30)
ok(r is not None and "result" in r and not r["result"].get("isError") and "SIZE_LIMIT" not in json.dumps(r),
   "the next call of the same worker is answered: " + json.dumps(r)[:200])
p.stdin.close()
try:
    p.wait(10)
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
ok(p.returncode == 0, f"the server exits 0 on stdin EOF ({p.returncode})")
